"""The kernel pool's hand-out guard (``dpexplore.voila.pool``, issue 22), on a stand-in of Voilà's
``VoilaKernelManager``: a pooled kernel whose notebook lost its output is never handed out."""

from __future__ import annotations

import asyncio
import types
from unittest.mock import patch

from aio import run_coroutine
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from dpexplore.voila.pool import HANDOUT_ATTEMPTS, guard_pool, lost_output


def _nb(*outputs, executed=True):
    return new_notebook(
        cells=[
            new_markdown_cell("# app"),
            new_code_cell("build_demo()", execution_count=1 if executed else None, outputs=list(outputs)),
        ]
    )


SHOWN = new_output("display_data", {"text/plain": "app"})
TIMED_OUT = new_output("error", ename="TimeoutError", evalue="Timeout error", traceback=["x"])


def test_lost_output_judges_executed_cells_only():
    assert lost_output(_nb(SHOWN)) == ""
    assert lost_output(_nb()) == "no code cell has an output"
    assert lost_output(_nb(executed=False)) == ""  # not run yet: not judged
    assert lost_output(_nb(SHOWN, TIMED_OUT)) == "a cell's output did not arrive in time"
    only_import = new_notebook(cells=[new_code_cell("import x", execution_count=1)])
    assert lost_output(only_import) == "no code cell has an output"
    assert lost_output(new_notebook(cells=[new_code_cell("", execution_count=None)])) == ""
    # Voila runs cells without store_history: no count, only nbclient's timing record
    voila_ran = new_code_cell("build_demo()", metadata={"execution": {"shell.execute_reply": "t"}})
    assert lost_output(new_notebook(cells=[voila_ran])) == "no code cell has an output"


class FakePool:
    """Voilà's pool protocol: ``_pools[name]`` holds finished tasks of ``{"renderer", "kernel_id"}``;
    ``get_rendered_notebook`` pops the first and refills with the next notebook of ``supply``."""

    def __init__(self, supply):
        self.supply = list(supply)  # notebooks the next kernels will render, in order
        self.shut = []
        self._pools = {"a.ipynb": []}
        self.count = 0

    def _entry(self):
        nb = self.supply.pop(0)
        self.count += 1
        renderer = types.SimpleNamespace(
            executor=types.SimpleNamespace(nb=nb, kc=types.SimpleNamespace(stop_channels=lambda: None))
        )

        async def render():
            async def rest():
                yield "<end>"

            return ["<html>"], rest()

        fut = asyncio.get_running_loop().create_future()
        fut.set_result({"renderer": renderer, "kernel_id": f"k{self.count}", "task": asyncio.ensure_future(render())})
        return fut

    async def get_rendered_notebook(self, notebook_name, **kwargs):
        content = await self._pools[notebook_name].pop(0)
        self._pools[notebook_name].append(self._entry())  # Voilà refills at once
        return content["task"], [], content["kernel_id"]

    async def shutdown_kernel(self, kernel_id):
        self.shut.append(kernel_id)


def _hand_out(supply):
    async def run():
        km = FakePool(supply)
        km._pools["a.ipynb"].append(km._entry())
        guard_pool(km)
        task, _, kernel_id = await km.get_rendered_notebook("a.ipynb")
        return km, kernel_id, lost_output(supply_copy[int(kernel_id[1:]) - 1])

    supply_copy = list(supply)
    return run_coroutine(run())


def test_a_kernel_with_its_output_is_handed_out_at_once():
    km, kernel_id, lost = _hand_out([_nb(SHOWN), _nb(SHOWN)])
    assert (kernel_id, km.shut, lost) == ("k1", [], "")


def test_kernels_that_lost_their_output_are_shut_down_and_the_next_is_handed_out():
    km, kernel_id, lost = _hand_out([_nb(), _nb(SHOWN, TIMED_OUT), _nb(SHOWN), _nb(SHOWN)])
    assert (kernel_id, km.shut, lost) == ("k3", ["k1", "k2"], "")
    assert len(km._pools["a.ipynb"]) == 1  # the pool stays filled


def test_after_the_last_attempt_the_kernel_is_handed_out_as_it_is():
    km, kernel_id, lost = _hand_out([_nb()] * (HANDOUT_ATTEMPTS + 1))
    assert kernel_id == f"k{HANDOUT_ATTEMPTS}"
    assert km.shut == [f"k{i}" for i in range(1, HANDOUT_ATTEMPTS)]
    assert lost == "no code cell has an output"  # the page says so and retries


def test_fill_gate_bounds_fills_while_pages_are_busy_and_lets_a_waiting_page_through():
    from dpexplore.voila.pool import FillGate

    now = [0.0]
    gate = FillGate(slots=1, max_wait=30.0, clock=lambda: now[0])
    gate.pages_busy = lambda: True

    async def run():
        async def fill(name, order):
            await gate.acquire(asyncio.current_task())
            order.append(name)

        order: list = []
        first = asyncio.ensure_future(fill("first", order))
        await asyncio.sleep(0.3)
        assert order == ["first"] and gate.running == 1  # nothing filled yet: it goes
        second = asyncio.ensure_future(fill("second", order))
        third = asyncio.ensure_future(fill("third", order))
        await asyncio.sleep(0.6)
        assert order == ["first"]  # one place, taken
        gate.release(first)
        await asyncio.sleep(0.6)
        assert order == ["first"]  # pages busy: one fill per 30 s
        gate.demand(third)  # a page waits for this entry
        await asyncio.sleep(0.6)
        assert order == ["first", "third"] and gate.running == 0  # without a place
        now[0] = 31.0
        await asyncio.sleep(0.6)
        assert order == ["first", "third", "second"] and gate.running == 1
        await asyncio.gather(first, second, third)

    run_coroutine(run())


def test_a_first_fill_waits_only_for_a_place():
    from dpexplore.voila.pool import FillGate

    gate = FillGate(slots=1, clock=lambda: 0.0)
    gate.pages_busy = lambda: True
    gate.last_start = 0.0  # a fill just started: a refill would wait 30 s

    async def run():
        entry = asyncio.current_task()
        await asyncio.wait_for(gate.acquire(entry, refill=False), 2.0)
        return gate.running

    assert run_coroutine(run()) == 1


def test_a_page_whose_kernel_dies_at_start_ends_with_a_message(monkeypatch):
    """A kernel that died before replying to kernel_info (its port taken by another kernel starting
    at the same moment) made Voilà's page-rendering task raise; the page's GET never ended. The
    guarded renderer logs the error and ends the page with a message that reloads it."""
    from voila.notebook_renderer import NotebookRenderer

    from dpexplore.voila import pool

    def dying(self, kernel_id=None, kernel_future=None):
        async def gen():
            yield "<html><head></head><body>", None
            raise RuntimeError("Kernel died before replying to kernel_info")

        return gen()

    monkeypatch.setattr(NotebookRenderer, "generate_content_generator", dying)
    pool.guard_page_start()
    pool.guard_page_start()  # once only: the second call does not wrap again
    assert NotebookRenderer.generate_content_generator.dpexplore_guarded

    async def page():
        return [html async for html, _ in NotebookRenderer.generate_content_generator(object())]

    with patch.object(pool.log, "warning") as warn:
        parts = run_coroutine(page())
    assert parts[0].startswith("<html>") and parts[-1] == pool.PAGE_NOT_STARTED
    assert 'role="alert"' in parts[-1] and "location.reload()" in parts[-1]
    assert "Traceback" not in "".join(parts) and "kernel_info" not in "".join(parts)
    assert "Kernel died" in str(warn.call_args)  # for the operator


def test_page_end_one_retry_script_for_both_ways_a_page_can_lack_its_dashboard():
    """The page template's filter and the page whose kernel died at start share one notice:
    an alert, the same per-address retry count, a reload; only the lost-output page also shuts
    its kernel down (it has one). A page with its output resets the count."""
    from dpexplore.voila import pool

    assert pool.page_end(_nb(SHOWN), "/base/") == pool.RETRY_RESET
    assert 'removeItem("dpexplore-retry:" + location.pathname)' in pool.RETRY_RESET
    with patch.object(pool.log, "warning") as warn:
        lost = pool.page_end(_nb(), "/b</script>/")
    assert "no code cell has an output" in str(warn.call_args)
    assert "came up without its dashboard" in lost and 'role="alert"' in lost
    assert 'navigator.sendBeacon("/b\\u003c/script>/voila/api/shutdown/"' in lost  # no early </script>
    assert lost.count("</script>") == 1
    dead = pool.PAGE_NOT_STARTED
    assert "could not start its dashboard" in dead and "sendBeacon" not in dead
    for page in (lost, dead):
        assert page.count('"dpexplore-retry:" + location.pathname') == 1
        assert f"n = {pool.PAGE_RETRIES}" in page and "location.reload()" in page
    # one script: without the message and the beacon line the two are the same text
    script = lambda t: "\n".join(l for l in t.split("</div>", 1)[1].splitlines() if "sendBeacon" not in l)
    assert script(lost) == script(dead)


def test_page_template_renders_the_page_end():
    """The Voila template calls the filter named in voila.json (a renamed filter would fail the
    page render, not this test, without this check)."""
    import json
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2] / "dpexplore" / "voila"
    names = json.loads((root / "voila.json").read_text())["VoilaExporter"]["filters"]
    template = (root / "templates" / "dpexplore" / "index.html.j2").read_text()
    assert names == {"dpexplore_page_end": "dpexplore.voila.pool.page_end"}
    assert "nb | dpexplore_page_end(resources.base_url)" in template
