"""Command line: ``dpexplore serve`` starts Voilà on the dashboard gallery.

::

    dpexplore serve [--port 8866] [--ip 127.0.0.1] [--no-browser] [--root NOTEBOOKS_DIR]
                    [--base-url /] [--pool-size 1] [--cull-idle-timeout 60] [--cull-interval 15]
                    [--no-prefetch] [--max-kernels N]

The gallery directory is ``--root`` if given, else the app notebooks shipped inside the package
(``dpexplore/apps/notebooks``; the repository's top-level ``notebooks/`` links there). Voilà runs as :class:`dpexplore.voila.DPExploreVoila` with the configuration in
``dpexplore/voila/voila.json`` (tracebacks off, sources stripped, preheated kernels, culling of
idle kernels of closed pages). ``--ip`` maps to ``--Voila.ip`` (``--ip`` is not a Voilà alias);
``--pool-size``, ``--cull-idle-timeout`` and ``--cull-interval`` override
``VoilaConfiguration.default_pool_size`` and ``MappingKernelManager.cull_idle_timeout`` /
``cull_interval`` of the shipped configuration (command-line values win over ``voila.json``).
``--no-prefetch`` sets ``DPEXPLORE_PREFETCH=0`` for the kernels: the dashboards then do not compute
the next slider step in the background (``ui.controls.PREFETCHER``). ``--max-kernels`` caps the
concurrent kernels (pool included; default from the machine's memory,
``dpexplore.voila._hardening.default_max_kernels``, 0 = no cap): past it a page answers HTTP 503
"the server is full" and pages already open keep working.

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


def parse_args(argv=None) -> argparse.Namespace:
    """Parse ``dpexplore`` command-line arguments."""
    parser = argparse.ArgumentParser(
        prog="dpexplore", description="dpexplore: see differential privacy.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser(
        "serve", help="serve the dashboard gallery with Voila",
        description="Serve the dpexplore dashboard gallery with Voila (bound to 127.0.0.1 by "
                    "default; configuration shipped in dpexplore/voila/voila.json).")
    serve.add_argument("--port", type=int, default=8866, help="port (default 8866)")
    serve.add_argument("--ip", default="127.0.0.1",
                       help="address to bind (default 127.0.0.1; 0.0.0.0 exposes it to the network)")
    serve.add_argument("--no-browser", action="store_true", help="do not open a web browser")
    serve.add_argument("--root", type=pathlib.Path, default=None,
                       help="folder of the gallery notebooks (default: the apps shipped with dpexplore)")
    serve.add_argument("--base-url", default="/", help="URL prefix (default /)")
    serve.add_argument("--pool-size", type=int, default=None, metavar="N",
                       help="preheated kernels per notebook (default 1, from voila.json)")
    serve.add_argument("--cull-idle-timeout", type=int, default=None, metavar="SECONDS",
                       help="shut down kernels of closed pages idle this long (default 60)")
    serve.add_argument("--cull-interval", type=int, default=None, metavar="SECONDS",
                       help="how often idle kernels are checked (default 15)")
    serve.add_argument("--no-prefetch", action="store_true",
                       help="dashboards do not compute the next slider step in the background "
                            "(saves CPU on a crowded server; steps then wait for their numbers)")
    serve.add_argument("--max-kernels", type=int, default=None, metavar="N",
                       help="cap on concurrent kernels; past it new pages get HTTP 503 'server "
                            "full' (default: half the memory at ~160 MB a kernel; 0: no cap)")
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
    for opt, trait, low in (("pool_size", "VoilaConfiguration.default_pool_size", 0),
                            ("cull_idle_timeout", "MappingKernelManager.cull_idle_timeout", 1),
                            ("cull_interval", "MappingKernelManager.cull_interval", 1)):
        value = getattr(args, opt, None)
        if value is not None:
            if value < low:
                raise SystemExit(f"dpexplore serve: --{opt.replace('_', '-')} must be >= {low}, "
                                 f"got {value}")
            argv.append(f"--{trait}={value}")
    cap = getattr(args, "max_kernels", None)
    if cap is None:
        from .voila._hardening import default_max_kernels

        cap = default_max_kernels()
    if cap < 0:
        raise SystemExit(f"dpexplore serve: --max-kernels must be >= 0, got {cap}")
    argv.append(f"--DPExploreVoila.max_kernels={cap}")
    argv.append(str(root))
    return argv


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
    if args.command == "serve":
        from .voila import DPExploreVoila

        voila_argv = build_voila_argv(args)
        print(f"dpexplore: serving the dashboard gallery at {serve_url(args)}", flush=True)
        os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
        if args.no_prefetch:
            os.environ["DPEXPLORE_PREFETCH"] = "0"  # read by every kernel (ui.controls)
        DPExploreVoila.launch_instance(voila_argv)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
