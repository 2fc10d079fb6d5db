"""Calibration benchmark: the additive mechanisms' ``calibrate`` (Gaussian, Subbotin) and the
Noise lab's slider step, now against a git commit from before (default f1f5f39: the Illinois
search in the backend, the lab's own Newton search in ``noise_lab.min_scale``).

Run:  python benchmarks/bench_calibrate.py                  (baseline f1f5f39, ~30 s)
      ... --baseline-ref REF                               another commit as the baseline

The baseline's ``dpexplore`` is taken with ``git archive REF dpexplore`` into a temporary
directory and timed in a child process first (the same rows); then the rows are timed here. Each
timing is the best of N repeats (time.perf_counter). Printed per row: before, now, and the ratio
now/before; the calibrate rows also give now/(the lab's Newton before), the search the backend
was asked to match. The load average is printed before and after: on a loaded machine (2 shared
cores) ratios measured in one run are comparable, absolute times less so.

Rows: one Gaussian σ (ε = 1, δ = 1e-5) and one Subbotin(r = 1.5) scale; the 61 points of the
lab's scale-vs-δ curve (``CURVE_DELTA``) for the Gaussian and Subbotin(r = 3); the lab's
40 × 40 Gaussian ratio map (row by row, as ``ratio_maps`` computes it); and one slider step of
the lab (``compute_noise_lab`` at a new ε, every cache but the ratio maps cleared: the four
scales, the four curves, densities and sample histograms).

Not a test module (no ``test_`` functions); pytest does not collect it.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

BASELINE = "f1f5f39"
CURVE_DELTA = np.logspace(-300, math.log10(0.5), 61)
GRID_EPS = np.logspace(-2, 1, 40)
GRID_DELTA = np.logspace(-12, math.log10(0.5), 40)


def best_of(fn, repeats: int, setup=None) -> float:
    """Best wall time in seconds over ``repeats`` runs; ``setup`` runs untimed before each."""
    best = math.inf
    for _ in range(repeats):
        if setup is not None:
            setup()
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def rows() -> dict:
    """{label: seconds} for the ``dpexplore`` on sys.path (this checkout or the baseline's)."""
    from dpexplore.apps import noise_lab as nl
    from dpexplore.mechanisms import Gaussian, Subbotin

    E, D = np.meshgrid(GRID_EPS, GRID_DELTA)

    def grid():
        for i in range(E.shape[0]):
            Gaussian.calibrate(E[i], D[i])

    def clear():
        for f in (nl._scales, nl._curves, nl._samples):
            f.cache_clear()

    nl.ratio_maps()  # once per process, as in the lab
    step = iter(np.geomspace(0.05, 20.0, 1000))
    out = {
        "Gaussian.calibrate, one σ": best_of(lambda: Gaussian.calibrate(1.0, 1e-5), 30),
        "Subbotin.calibrate r=1.5, one scale": best_of(lambda: Subbotin.calibrate(1.0, 1e-5, shape=1.5), 20),
        "Gaussian.calibrate, 61-point curve": best_of(lambda: Gaussian.calibrate(1.0, CURVE_DELTA), 10),
        "Subbotin.calibrate r=3, 61-point curve": best_of(lambda: Subbotin.calibrate(1.0, CURVE_DELTA, shape=3.0), 10),
        "Gaussian.calibrate, 40×40 ratio map": best_of(grid, 3),
        "noise lab min_scale Gaussian, one σ": best_of(lambda: nl.min_scale("Gaussian", 1.0, 1e-5), 30),
        "noise lab min_scale Subbotin r=3, curve": best_of(lambda: nl.min_scale("Subbotin", 1.0, CURVE_DELTA, 3.0), 10),
        "noise lab slider step (compute_noise_lab)": best_of(
            lambda: nl.compute_noise_lab(nl.NoiseSpec(eps=float(next(step)), delta=1e-6, shape=3.0, n=1000, seed=0)),
            10,
            setup=clear,
        ),
    }
    return out


def baseline(ref: str) -> dict:
    """The rows of git commit ``ref`` (its ``dpexplore`` by git archive, a child process)."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory(prefix="bench-calib-base-") as path:
        archive = subprocess.run(["git", "archive", ref, "dpexplore"], cwd=repo, check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", path], input=archive.stdout, check=True)
        env = dict(os.environ, PYTHONPATH=path)
        got = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--json"],
            cwd=path,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        return json.loads(got.stdout.strip().splitlines()[-1])


def main(argv) -> int:
    warnings.simplefilter("ignore")
    if "--json" in argv:
        import dpexplore

        print(json.dumps({"file": dpexplore.__file__, **rows()}))
        return 0
    ref = argv[argv.index("--baseline-ref") + 1] if "--baseline-ref" in argv else BASELINE
    print(f"baseline {ref} (a child process first); load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    before = baseline(ref)
    print(f"  its dpexplore: {before.pop('file')}")
    import dpexplore

    now = rows()
    print(f"now: {dpexplore.__file__}\n")
    lab_newton = {
        "Gaussian.calibrate, one σ": before["noise lab min_scale Gaussian, one σ"],
        "Subbotin.calibrate r=3, 61-point curve": before["noise lab min_scale Subbotin r=3, curve"],
    }
    head = f"{'row':<44s} {'before ms':>10s} {'now ms':>9s} {'now/before':>11s} {'now/lab Newton before':>22s}"
    print(head)
    print("-" * len(head))
    for label, t in now.items():
        b = before[label]
        extra = f"{t / lab_newton[label]:21.2f}×" if label in lab_newton else ""
        print(f"{label:<44s} {b * 1e3:10.2f} {t * 1e3:9.2f} {t / b:10.2f}× {extra}")
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
