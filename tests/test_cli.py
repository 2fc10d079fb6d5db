"""``dpexplore serve``: command line and the shipped Voila configuration."""

from __future__ import annotations

import json
import pathlib
import shutil
import signal
import subprocess
import sys

import pytest

from dpexplore import cli
from dpexplore import voila as dvoila


def _run(*args, timeout=60):
    return subprocess.run(
        [sys.executable, "-m", "dpexplore.cli", *args], capture_output=True, text=True, timeout=timeout
    )


def test_serve_help():
    out = _run("serve", "--help")
    assert out.returncode == 0, out.stderr
    for opt in ("--port", "--ip", "--no-browser", "--root"):
        assert opt in out.stdout
    assert "127.0.0.1" in out.stdout


def test_console_script_help():
    exe = shutil.which("dpexplore", path=str(pathlib.Path(sys.executable).parent))
    if exe is None:
        pytest.skip("console script not installed next to this python")
    out = subprocess.run([exe, "serve", "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "--port" in out.stdout


def test_no_command_is_an_error():
    out = _run()
    assert out.returncode != 0


def test_defaults():
    args = cli.parse_args(["serve"])
    assert (args.port, args.ip, args.no_browser) == (8866, "127.0.0.1", False)
    argv = cli.build_voila_argv(args)
    assert "--Voila.ip=127.0.0.1" in argv and "--port=8866" in argv
    assert pathlib.Path(argv[-1]) == cli.default_root().resolve()
    assert (pathlib.Path(argv[-1]) / "index.ipynb").is_file()
    assert cli.serve_url(args) == "http://127.0.0.1:8866/voila/render/index.ipynb"


def test_options_map_to_voila():
    args = cli.parse_args(
        ["serve", "--port", "9000", "--ip", "0.0.0.0", "--no-browser", "--root", str(cli.default_root())]
    )
    argv = cli.build_voila_argv(args)
    assert argv[:3] == ["--port=9000", "--Voila.ip=0.0.0.0", "--no-browser"]


def test_missing_root_is_a_clear_error(tmp_path):
    args = cli.parse_args(["serve", "--root", str(tmp_path / "nope")])
    with pytest.raises(SystemExit, match="notebooks folder not found"):
        cli.build_voila_argv(args)


def test_shipped_config():
    c = dvoila.load_config()
    vc = c["VoilaConfiguration"]
    assert vc["show_tracebacks"] is False
    assert vc["strip_sources"] is True
    assert vc["preheat_kernel"] is True and vc["default_pool_size"] >= 1
    # lab extensions a dashboard does not use (Notebook 7's fails to load in Voilà: a console error)
    assert {"jupyterlab-plotly", "@jupyter-notebook/lab-extension", "jupyterlab_pygments"} <= set(
        vc["extension_denylist"]
    )
    km = c["MappingKernelManager"]
    assert 0 < km["cull_idle_timeout"] <= 600
    assert 0 < km["cull_interval"] <= km["cull_idle_timeout"]
    assert km["cull_connected"] is False  # an open page keeps its kernel; closed pages are culled
    assert c["Voila"]["ip"] == "127.0.0.1"


def test_app_reads_only_the_shipped_config():
    app = dvoila.DPExploreVoila()
    old = signal.getsignal(signal.SIGTERM)
    try:
        app.initialize(["--no-browser", "--port=8899", str(cli.default_root())])
    finally:  # Voila installs its own SIGTERM handler: give pytest its own back
        signal.signal(signal.SIGTERM, old)
    assert app.config_file_paths == [str(dvoila.CONFIG_DIR)]
    assert app.ip == "127.0.0.1"
    assert app.voila_configuration.show_tracebacks is False
    assert app.voila_configuration.strip_sources is True
    assert app.voila_configuration.preheat_kernel is True
    assert (
        app.config.MappingKernelManager.cull_idle_timeout
        == dvoila.load_config()["MappingKernelManager"]["cull_idle_timeout"]
    )
    assert app.template_paths[0] == str(dvoila.TEMPLATE_DIR)
    assert app.config.VoilaConfiguration.resources["dpexplore_plotly_path"].startswith(
        "dpexplore/static/plotly.min.js?v="
    )


def test_pool_and_culling_flags_map_to_traits():
    args = cli.parse_args(["serve", "--pool-size", "2", "--cull-idle-timeout", "5", "--cull-interval", "2"])
    argv = cli.build_voila_argv(args)
    assert "--VoilaConfiguration.default_pool_size=2" in argv
    assert "--MappingKernelManager.cull_idle_timeout=5" in argv
    assert "--MappingKernelManager.cull_interval=2" in argv
    assert not any("cull" in a for a in cli.build_voila_argv(cli.parse_args(["serve"])))


def test_page_and_kernel_caps_map_to_traits():
    from dpexplore.voila.hardening import default_max_kernels, default_max_pages

    argv = cli.build_voila_argv(cli.parse_args(["serve"]))
    assert f"--DPExploreVoila.max_pages={default_max_pages()}" in argv  # 15 per core
    assert f"--DPExploreVoila.max_kernels={default_max_kernels()}" in argv
    argv = cli.build_voila_argv(cli.parse_args(["serve", "--max-pages", "0", "--max-kernels", "7"]))
    assert "--DPExploreVoila.max_pages=0" in argv and "--DPExploreVoila.max_kernels=7" in argv


@pytest.mark.parametrize(
    "flag, value",
    [
        ("--pool-size", "-1"),
        ("--cull-idle-timeout", "0"),
        ("--cull-interval", "-3"),
        ("--max-pages", "-1"),
        ("--max-kernels", "-2"),
    ],
)
def test_bad_pool_and_culling_flags(flag, value):
    with pytest.raises(SystemExit, match=flag):
        cli.build_voila_argv(cli.parse_args(["serve", flag, value]))


def test_command_line_overrides_win_over_voila_json():
    app = dvoila.DPExploreVoila()
    old = signal.getsignal(signal.SIGTERM)
    argv = cli.build_voila_argv(
        cli.parse_args(
            [
                "serve",
                "--no-browser",
                "--port",
                "8898",
                "--cull-idle-timeout",
                "7",
                "--cull-interval",
                "3",
                "--pool-size",
                "2",
            ]
        )
    )
    try:
        app.initialize(argv)
    finally:
        signal.signal(signal.SIGTERM, old)
    # (deferred strings: the kernel manager parses them as its int traits)
    assert int(app.config.MappingKernelManager.cull_idle_timeout) == 7
    assert int(app.config.MappingKernelManager.cull_interval) == 3
    assert app.voila_configuration.default_pool_size == 2
    assert app.config.MappingKernelManager.cull_connected is False  # the file's other values stay


def test_no_prefetch_flag_reaches_the_kernels(monkeypatch):
    """``--no-prefetch`` sets DPEXPLORE_PREFETCH=0 in the server's environment, which every kernel
    it starts inherits (ui.controls reads it at import)."""
    import os

    seen = {}
    app_cls = dvoila.DPExploreVoila
    monkeypatch.setattr(
        app_cls, "launch_instance", classmethod(lambda cls, argv: seen.update(env=os.environ.get("DPEXPLORE_PREFETCH")))
    )
    monkeypatch.delenv("DPEXPLORE_PREFETCH", raising=False)
    assert cli.main(["serve", "--no-browser", "--no-prefetch"]) == 0
    assert seen["env"] == "0"
    monkeypatch.delenv("DPEXPLORE_PREFETCH", raising=False)
    assert cli.main(["serve", "--no-browser"]) == 0
    assert seen["env"] is None


def test_version():
    """`dpexplore --version` and ``dpexplore.__version__`` print the one version,
    dpexplore/_version.py, which pyproject.toml's dynamic version reads (a wheel's metadata and
    ``--version`` agree: tests/browser/test_install_browser.py)."""
    import dpexplore
    from dpexplore._version import __version__

    out = _run("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"dpexplore {__version__}"
    assert dpexplore.__version__ == __version__ != "0.1.0"
    pyproject = (pathlib.Path(cli.__file__).parents[1] / "pyproject.toml").read_text()
    assert 'version = { attr = "dpexplore._version.__version__" }' in pyproject


def test_root_help_says_instead_and_where_the_apps_are():
    out = _run("serve", "--help")
    text = " ".join(out.stdout.split())
    assert "INSTEAD of the apps shipped" in text
    assert str(cli.default_root()).replace(" ", "") in text.replace(" ", "")


def test_root_without_index_lists_its_notebooks(tmp_path, monkeypatch, capsys):
    (tmp_path / "mine.ipynb").write_text("{}")
    app_cls = dvoila.DPExploreVoila
    seen = {}
    monkeypatch.setattr(app_cls, "launch_instance", classmethod(lambda cls, argv: seen.update(argv=argv)))
    assert cli.main(["serve", "--no-browser", "--root", str(tmp_path)]) == 0
    assert seen["argv"][-1] == str(tmp_path.resolve())
    assert "voila/render/mine.ipynb" in capsys.readouterr().out


def test_kernels_run_on_this_interpreter_whatever_python3_kernelspec_the_user_has(tmp_path, monkeypatch):
    """A user's own ``python3`` kernelspec (first in JUPYTER_PATH here) points at another Python;
    ``dpexplore serve``'s kernels still run on the interpreter dpexplore is installed in."""
    from jupyter_client.kernelspec import KernelSpecManager

    theirs = tmp_path / "theirs" / "kernels" / "python3"
    theirs.mkdir(parents=True)
    (theirs / "kernel.json").write_text(
        json.dumps(
            {
                "argv": ["/elsewhere/bin/python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (elsewhere)",
                "language": "python",
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "theirs"))
    assert KernelSpecManager().get_kernel_spec("python3").argv[0] == "/elsewhere/bin/python"

    app = dvoila.DPExploreVoila()
    old = signal.getsignal(signal.SIGTERM)
    try:
        # (no preheated pool: init_settings would schedule pool fills on a loop the app never
        # runs, and their failures were printed when the test session ended)
        app.initialize(
            ["--no-browser", "--port=8897", "--VoilaConfiguration.preheat_kernel=False", str(cli.default_root())]
        )
        app.init_settings()
    finally:
        signal.signal(signal.SIGTERM, old)
    ksm = app.kernel_spec_manager
    assert app.kernel_manager.kernel_spec_manager is ksm
    spec = ksm.get_kernel_spec("python3")
    assert spec.argv[0] == sys.executable and spec.argv[1:3] == ["-m", "ipykernel_launcher"]
    assert pathlib.Path(spec.resource_dir).parent == pathlib.Path(ksm.kernel_dirs[0])
    assert str(tmp_path / "theirs" / "kernels") in ksm.kernel_dirs  # their other kernels stay


def test_lecture_mode_takes_an_app_by_its_name_before_the_rename(capsys):
    args = cli.parse_args(["serve", "--expect", "30", "--apps", "profile_vs_gdp,demo"])
    argv = cli._pool_argv(args, cli.default_root())
    assert argv[-1] == "--DPExploreVoila.expect_apps=profile_gdp.ipynb,demo.ipynb"
    assert "profile_vs_gdp.ipynb is now profile_gdp.ipynb" in capsys.readouterr().err
