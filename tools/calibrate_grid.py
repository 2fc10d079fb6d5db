"""Evaluate the additive mechanisms' numerical ``calibrate`` (Gaussian, Subbotin) on a grid covering
what users try, and store the scales (``tests/data/calibrate_grid.npz``) for
``tests/mechanisms/test_calibrate_grid.py``.

The stored scales are the "before" side of a before/after comparison: they were computed by the
bisection / regula falsi calibration (``AdditiveNoiseMechanism._calibrate_d`` at f1f5f39), before
it became a grid bracket plus a safeguarded Newton search. The numerics grid's rule, "identical
or safer" (``tools/numerics_grid.py``), does not fit a calibrated scale: both searches end on
the last float of log(Δ/s) where δ(ε) ≤ δ_target holds, but where the computed δ is not monotone
in its last ulps they can stop at neighbouring crossings, a few ulps apart either way. The test
checks instead that every new scale meets the target (with the backend's δ) and is at least the
old one less 2 ulps. Regenerate from a commit with::

    git archive <commit> dpexplore | tar -x -C /tmp/dpx-before
    python tools/calibrate_grid.py --src /tmp/dpx-before --commit <commit>

The grid: ε from 1e-6 to 50, δ from 1e-300 to 0.9, sensitivity 1e-3, 1 and 1e3, Subbotin shapes
1.2, 1.5, 2, 3, 5 (and shape 1, where δ = 0 is allowed), an array of shapes, and the Noise lab's
own grids (``CURVE_DELTA`` at five ε, ``GRID_EPS`` × ``GRID_DELTA``), whose values are
reproduced here so that the old commit need not have the lab.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "calibrate_grid.npz"

EPS = np.array([1e-6, 1e-4, 1e-3, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0])
DELTA = np.array([1e-300, 1e-200, 1e-100, 1e-50, 1e-30, 1e-20, 1e-12, 1e-9, 1e-6, 1e-5, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.9])
SENSITIVITY = np.array([1e-3, 1.0, 1e3])
SHAPES = np.array([1.2, 1.5, 2.0, 3.0, 5.0])
#: the Noise lab's grids (dpexplore.apps.noise_lab CURVE_DELTA, GRID_EPS, GRID_DELTA)
CURVE_DELTA = np.logspace(-300, math.log10(0.5), 61)
CURVE_EPS = np.array([0.01, 0.1, 1.0, 5.0, 50.0])
GRID_EPS = np.logspace(-2, 1, 40)
GRID_DELTA = np.logspace(-12, math.log10(0.5), 40)


def _grid(*axes):
    return [a.ravel() for a in np.meshgrid(*axes, indexing="ij")]


def cases():
    """{name: (kind, eps, delta, sensitivity, shape)}: flat float arrays of one length (``shape``
    NaN for the Gaussian)."""
    out = {}
    e, d, s = _grid(EPS, DELTA, SENSITIVITY)
    out["gaussian"] = ("Gaussian", e, d, s, np.full(e.shape, np.nan))
    for r in SHAPES:
        out[f"subbotin_{r:g}"] = ("Subbotin", e, d, s, np.full(e.shape, r))
    e1, d1 = _grid(EPS, np.concatenate([[0.0], DELTA[::3]]))
    out["subbotin_1"] = ("Subbotin", e1, d1, np.ones(e1.shape), np.ones(e1.shape))
    e, d = _grid(CURVE_EPS, CURVE_DELTA)
    out["lab_curve_gaussian"] = ("Gaussian", e, d, np.ones(e.shape), np.full(e.shape, np.nan))
    for r in (1.5, 3.0, 4.0):
        out[f"lab_curve_subbotin_{r:g}"] = ("Subbotin", e, d, np.ones(e.shape), np.full(e.shape, r))
    e, d = _grid(GRID_EPS, GRID_DELTA)
    out["lab_map_gaussian"] = ("Gaussian", e, d, np.ones(e.shape), np.full(e.shape, np.nan))
    r, d = _grid(np.linspace(1.1, 4.0, 30), np.array([1e-300, 1e-12, 1e-5, 0.1]))
    out["subbotin_shape_array"] = ("Subbotin", np.ones(r.shape), d, np.ones(r.shape), r)
    return out


def calibrate(mech, kind, eps, delta, sensitivity, shape):
    """The calibrated scales, one vectorised call per run of equal (ε, Δ, shape) (as the lab calls it),
    point by point where that raises (NaN where a point raises). Returns (scales, errors)."""
    out = np.full(eps.shape, np.nan)
    errors = {}

    def call(idx):
        if kind == "Gaussian":
            return np.asarray(mech.Gaussian.calibrate(eps[idx], delta[idx], sensitivity[idx[0]]).sigma)
        return np.asarray(mech.Subbotin.calibrate(eps[idx], delta[idx], sensitivity[idx[0]], shape=shape[idx]).scale)

    key = np.stack([eps, sensitivity, np.nan_to_num(shape)], axis=1)
    _, groups = np.unique(key, axis=0, return_inverse=True)
    groups = groups.ravel()
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        if np.unique(sensitivity[idx]).size > 1:  # pragma: no cover - the key includes it
            raise AssertionError("mixed sensitivities")
        try:
            out[idx] = call(idx)
        except ValueError:
            for i in idx:
                try:
                    out[i] = call(np.array([i]))[0]
                except ValueError as exc:
                    errors[int(i)] = str(exc)[:120]
    return out, errors


def evaluate(dp):
    """{name: scales}, {name: {index: error}}: every case on the package ``dp``."""
    import warnings

    mech = dp.mechanisms
    values, errors = {}, {}
    for name, (kind, e, d, s, r) in cases().items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values[name], err = calibrate(mech, kind, e, d, s, r)
        if err:
            errors[name] = err
    return values, errors


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default=str(ROOT), help="directory holding the dpexplore package to evaluate")
    ap.add_argument("--commit", required=True, help="commit the package was taken from (stored in the file)")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    sys.path.insert(0, args.src)
    dp = importlib.import_module("dpexplore")
    importlib.import_module("dpexplore.mechanisms")
    assert Path(dp.__file__).resolve().is_relative_to(Path(args.src).resolve()), dp.__file__
    values, errors = evaluate(dp)
    meta = {"commit": args.commit, "errors": {k: {str(i): m for i, m in v.items()} for k, v in errors.items()}}
    np.savez_compressed(args.out, __meta__=np.array(json.dumps(meta)), **values)
    n = sum(v.size for v in values.values())
    print(f"{len(values)} cases, {n} scales, {sum(len(v) for v in errors.values())} errors -> {args.out}")
    for k, v in errors.items():
        print(f"  {k}: {len(v)} points raise, e.g. {next(iter(v.values()))}")


if __name__ == "__main__":
    main()
