"""Running a coroutine, or code with a loop of its own, from a test, whatever else the suite has
running."""

import asyncio
import concurrent.futures


def in_a_thread(fn, *args):
    """``fn(*args)`` in a thread of its own, its result returned (its exception raised).

    In the whole suite the browser tests' Playwright (its sync API) keeps an event loop running in
    the main thread for the session; ``asyncio.run`` and a second ``sync_playwright()`` both refuse
    to start inside a running loop, and a thread of its own has none.
    """
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


def run_coroutine(coro):
    """Run *coro* to the end on an event loop of its own, in a thread of its own."""
    return in_a_thread(asyncio.run, coro)
