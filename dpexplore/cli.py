"""Command line: ``dpexplore serve`` starts Voilà on the dashboard gallery.

::

    dpexplore --version
    dpexplore hub-users add|reset|list|remove|prune [NAME ...] [--roster PATH]   (a hub's roster)
    dpexplore serve [--port 8866] [--ip 127.0.0.1] [--no-browser] [--root NOTEBOOKS_DIR]
                    [--base-url /] [--pool-size 1] [--cull-idle-timeout 60] [--cull-interval 15]
                    [--no-prefetch] [--no-fork] [--no-clone] [--max-kernels N] [--fill-slots N]
                    [--expect N [--apps rdp_explorer,composition_explorer]]

The gallery directory is the app notebooks shipped inside the package (``dpexplore/apps/notebooks``;
the repository's top-level ``notebooks/`` links there), so ``dpexplore serve`` works from any folder
after ``pip install dpexplore``. ``--root DIR`` serves the notebooks in DIR *instead* (Voilà serves
one folder; a user's notebook builds any app with one import, and whoever wants both copies the
shipped notebooks into DIR). Voilà runs as :class:`dpexplore.voila.DPExploreVoila` with the configuration in
``dpexplore/voila/voila.json`` (tracebacks off, sources stripped, preheated kernels, culling of
idle kernels of closed pages). ``--ip`` maps to ``--Voila.ip`` (``--ip`` is not a Voilà alias);
``--pool-size``, ``--cull-idle-timeout`` and ``--cull-interval`` override
``VoilaConfiguration.default_pool_size`` and ``MappingKernelManager.cull_idle_timeout`` /
``cull_interval`` of the shipped configuration (command-line values win over ``voila.json``).
``--fill-slots`` bounds the kernels started for the pools at once, ``--expect N --apps A,B``
(lecture mode) keeps N kernels ready over those apps (:mod:`dpexplore.voila.pool`).
``--no-fork`` sets ``DPEXPLORE_FORK_KERNELS=0``: every kernel is started as a new interpreter
instead of being forked from the warm template process (:mod:`dpexplore.voila.forkserver`).
``--no-clone`` sets ``DPEXPLORE_CLONE_PAGES=0``: every page of a dashboard runs its notebook and is
rendered anew, instead of being a copy of the dashboard's first rendered page with a kernel forked
with the app already built (:mod:`dpexplore.voila.clone`; ``--no-fork`` implies it).
``--no-prefetch`` sets ``DPEXPLORE_PREFETCH=0`` for the kernels: the dashboards then do not compute
the next slider step in the background (``ui.controls.PREFETCHER``, which also stops by itself
while the machine's load average is high). The kernels get ``DPEXPLORE_DEFER_HIDDEN=1``: a plot in
a tab not shown sends its changes when the tab is opened (``ui.offstage``).

>>> build_voila_argv(parse_args(["serve", "--port", "9999", "--no-browser", "--root", "."]))[:3]
['--port=9999', '--Voila.ip=127.0.0.1', '--no-browser']
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys

__all__ = ["main", "parse_args", "build_voila_argv", "default_root", "serve_url"]


def default_root() -> pathlib.Path:
    """The gallery folder: the app notebooks shipped inside the package.

    >>> (default_root() / "index.ipynb").is_file()
    True
    """
    return pathlib.Path(__file__).resolve().parent / "apps" / "notebooks"


def _version() -> str:
    """dpexplore's version, from its one source ``dpexplore/_version.py`` (the distribution's
    metadata is written from it at build time, but an editable install's metadata keeps the
    version of its last install)."""
    from ._version import __version__

    return __version__


def _shipped_hint() -> str:
    return str(default_root()).replace("%", "%%")


def parse_args(argv=None) -> argparse.Namespace:
    """Parse ``dpexplore`` command-line arguments."""
    parser = argparse.ArgumentParser(prog="dpexplore", description="dpexplore: see differential privacy.")
    parser.add_argument("--version", action="version", version=f"dpexplore {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser(
        "serve",
        help="serve the dashboard gallery with Voila",
        description="Serve the dpexplore dashboard gallery with Voila (bound to 127.0.0.1 by "
        "default; configuration shipped in dpexplore/voila/voila.json).",
    )
    serve.add_argument("--port", type=int, default=8866, help="port (default 8866)")
    serve.add_argument(
        "--ip", default="127.0.0.1", help="address to bind (default 127.0.0.1; 0.0.0.0 exposes it to the network)"
    )
    serve.add_argument("--no-browser", action="store_true", help="do not open a web browser")
    serve.add_argument(
        "--root",
        type=pathlib.Path,
        default=None,
        metavar="DIR",
        help="serve the notebooks in DIR (e.g. your own, which can build any app: "
        "`from dpexplore.apps.demo import build_demo; build_demo()`) INSTEAD "
        "of the apps shipped with dpexplore; / opens DIR/index.ipynb. To serve "
        "them next to the shipped apps, copy those into DIR first (they are "
        "in %s). Default: the shipped apps" % _shipped_hint(),
    )
    serve.add_argument("--base-url", default="/", help="URL prefix (default /)")
    serve.add_argument(
        "--pool-size",
        type=int,
        default=None,
        metavar="N",
        help="preheated kernels per notebook (default 1, from voila.json)",
    )
    serve.add_argument(
        "--cull-idle-timeout",
        type=int,
        default=None,
        metavar="SECONDS",
        help="shut down kernels of closed pages idle this long (default 60)",
    )
    serve.add_argument(
        "--cull-interval",
        type=int,
        default=None,
        metavar="SECONDS",
        help="how often idle kernels are checked (default 15)",
    )
    serve.add_argument(
        "--max-kernels",
        type=int,
        default=None,
        metavar="N",
        help="cap on concurrent kernels (each open page holds one, ~150 MB); past "
        "it a new page is told the server is full (HTTP 503). Default: half "
        "the machine's memory at 160 MiB per kernel; 0 = no cap",
    )
    serve.add_argument(
        "--max-pages",
        type=int,
        default=None,
        metavar="N",
        help="cap on open pages (the pool's ready kernels not counted); past it a "
        "new page is told the server is full (HTTP 503) and the open ones keep "
        "their speed. Default: 15 per core (a 2-core machine answers 30 pages "
        "moving a slider once a second); 0 = no cap",
    )
    serve.add_argument(
        "--fill-slots",
        type=int,
        default=None,
        metavar="N",
        help="kernels started for the pools at once (default: one per two cores); "
        "a page that waits for its kernel never waits for this",
    )
    serve.add_argument(
        "--expect",
        type=int,
        default=None,
        metavar="N",
        help="lecture mode: N students will open --apps together; each of those "
        "apps keeps N / (number of apps) kernels ready, filled before the "
        "class comes (watch for 'is filled with' in the log)",
    )
    serve.add_argument(
        "--apps",
        default=None,
        metavar="A,B",
        help="with --expect: the apps the class opens, e.g. "
        "rdp_explorer,composition_explorer (default: every notebook served)",
    )
    serve.add_argument(
        "--no-prefetch",
        action="store_true",
        help="dashboards do not compute the next slider step in the background "
        "(saves CPU on a crowded server; steps then wait for their numbers)",
    )
    serve.add_argument(
        "--no-fork",
        action="store_true",
        help="start every kernel as a new process instead of forking it from a "
        "warm template process (slower; same as DPEXPLORE_FORK_KERNELS=0)",
    )
    serve.add_argument(
        "--no-clone",
        action="store_true",
        help="run each page's notebook and render the page anew instead of "
        "copying the dashboard's first rendered page onto a kernel forked "
        "with the app built (slower; same as DPEXPLORE_CLONE_PAGES=0)",
    )
    from .hub.cli import add_parser as _hub_users

    _hub_users(sub)
    return parser.parse_args(argv)


def build_voila_argv(args: argparse.Namespace) -> list[str]:
    """The Voilà command line for ``args``."""
    root = (args.root if args.root is not None else default_root()).resolve()
    if not root.is_dir():
        raise SystemExit(f"dpexplore serve: notebooks folder not found: {root} (use --root)")
    argv = [f"--port={args.port}", f"--Voila.ip={args.ip}"]
    if args.no_browser:
        argv.append("--no-browser")
    argv.append(f"--Voila.base_url={args.base_url}")
    for opt, trait, low in (
        ("pool_size", "VoilaConfiguration.default_pool_size", 0),
        ("cull_idle_timeout", "MappingKernelManager.cull_idle_timeout", 1),
        ("cull_interval", "MappingKernelManager.cull_interval", 1),
    ):
        value = getattr(args, opt, None)
        if value is not None:
            if value < low:
                raise SystemExit(f"dpexplore serve: --{opt.replace('_', '-')} must be >= {low}, got {value}")
            argv.append(f"--{trait}={value}")
    from .voila.hardening import default_max_kernels, default_max_pages

    for opt, default in (("max_kernels", default_max_kernels), ("max_pages", default_max_pages)):
        cap = getattr(args, opt, None)
        if cap is None:
            cap = default()
        if cap < 0:
            raise SystemExit(f"dpexplore serve: --{opt.replace('_', '-')} must be >= 0, got {cap}")
        argv.append(f"--DPExploreVoila.{opt}={cap}")
    argv += _pool_argv(args, root)
    argv.append(str(root))
    return argv


def _pool_argv(args: argparse.Namespace, root: pathlib.Path) -> list[str]:
    """Voilà options of ``--fill-slots``, ``--expect`` and ``--apps`` (lecture mode).

    >>> _pool_argv(parse_args(["serve", "--expect", "30", "--apps", "rdp_explorer"]), default_root())
    ['--DPExploreVoila.expect=30', '--DPExploreVoila.expect_apps=rdp_explorer.ipynb']
    """
    from .voila import RENAMED

    argv = []
    slots = getattr(args, "fill_slots", None)
    if slots is not None:
        if slots < 1:
            raise SystemExit(f"dpexplore serve: --fill-slots must be >= 1, got {slots}")
        argv.append(f"--DPExploreVoila.fill_slots={slots}")
    expect, apps = getattr(args, "expect", None), getattr(args, "apps", None)
    if expect is None:
        if apps is not None:
            raise SystemExit("dpexplore serve: --apps goes with --expect N (lecture mode)")
        return argv
    if expect < 1:
        raise SystemExit(f"dpexplore serve: --expect must be >= 1, got {expect}")
    served = sorted(p.name for p in root.glob("*.ipynb") if p.name != "index.ipynb")
    names = []
    for a in apps.split(",") if apps else served:
        a = a.strip()
        name = a if a.endswith(".ipynb") else a + ".ipynb"
        if name not in served and RENAMED.get(name) in served:  # an app's name before its rename
            print(f"dpexplore serve: --apps: {name} is now {RENAMED[name]}", file=sys.stderr)
            name = RENAMED[name]
        if name not in served:
            raise SystemExit(
                f"dpexplore serve: --apps: no notebook {name!r} in {root} (served: {', '.join(n[:-6] for n in served)})"
            )
        names.append(name)
    if not names:
        raise SystemExit(f"dpexplore serve: --apps names no notebook, got {apps!r}")
    return argv + [f"--DPExploreVoila.expect={expect}", f"--DPExploreVoila.expect_apps={','.join(names)}"]


def serve_url(args: argparse.Namespace) -> str:
    """The gallery URL ``dpexplore serve`` prints.

    >>> serve_url(parse_args(["serve"]))
    'http://127.0.0.1:8866/voila/render/index.ipynb'
    """
    base = "/" + args.base_url.strip("/") + "/" if args.base_url.strip("/") else "/"
    return f"http://{args.ip}:{args.port}{base}voila/render/index.ipynb"


def main(argv=None) -> int:
    """Entry point of the ``dpexplore`` console script."""
    args = parse_args(argv)
    if args.command == "hub-users":
        from .hub.cli import run

        return run(args)
    if args.command == "serve":
        from ._server_imports import skip_slow_optional_imports

        skip_slow_optional_imports()  # before Voilà and jupyter_server are imported
        from .voila import DPExploreVoila

        voila_argv = build_voila_argv(args)
        print(f"dpexplore: serving the dashboard gallery at {serve_url(args)}", flush=True)
        root = pathlib.Path(voila_argv[-1])
        if not (root / "index.ipynb").is_file():  # --root without a gallery: list its notebooks
            names = sorted(p.name for p in root.glob("*.ipynb"))
            print(
                f"dpexplore: {root} has no index.ipynb; its notebooks: "
                + (", ".join(serve_url(args).rsplit("/", 1)[0] + "/" + n for n in names) or "none"),
                flush=True,
            )
        os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
        # page kernels: hidden tabs' plots are sent when shown (a test may set it to 0)
        os.environ.setdefault("DPEXPLORE_DEFER_HIDDEN", "1")
        if args.no_prefetch:
            os.environ["DPEXPLORE_PREFETCH"] = "0"  # read by every kernel (ui.controls)
        if args.no_fork:
            os.environ["DPEXPLORE_FORK_KERNELS"] = "0"  # read by dpexplore.voila.forkserver
        if args.no_clone:
            os.environ["DPEXPLORE_CLONE_PAGES"] = "0"  # read by dpexplore.voila.clone
        DPExploreVoila.launch_instance(voila_argv)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
