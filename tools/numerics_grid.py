"""Evaluate the public accounting functions on a grid covering the range users try, and store the
values (``tests/data/numerics_grid.npz``) for ``tests/accounting/test_numerics_policy.py``.

The stored values are the "before" side of the numerics policy's before/after comparison: they
were computed by the code before the rounding margins and searches moved into
``dpexplore/_numerics.py`` (the first step's baseline was 0e53d06; the stored file is from
fda7567, before the second step moved the remaining searches — bracket growth, Newton, regula
falsi, golden section — and inline margins, with the cases after "pld_compose_laplace_eps"
added for it). Regenerate them from that commit (or any later one, to take a new
baseline) with::

    git archive <commit> dpexplore | tar -x -C /tmp/dpx-before
    python tools/numerics_grid.py --src /tmp/dpx-before --commit <commit>

``--src`` is the directory that holds the ``dpexplore`` package to evaluate (default: this
checkout). The test imports :func:`cases` from here and evaluates the same grid on the current
code; each case names the side that is safe (``"up"``: an upper bound on ε, δ, ρ, μ or a TPR,
larger is safe; ``"down"``: a trade-off β or a budget, smaller is safe).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "numerics_grid.npz"

EPS = np.array(
    [0.0, 1e-300, 1e-30, 1e-12, 1e-6, 1e-3, 0.05, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 100.0, 700.0, 1e3, 1e6, 1e100]
)
DELTA = np.array([0.0, 1e-300, 1e-100, 1e-30, 1e-12, 1e-9, 1e-6, 1e-3, 0.01, 0.1, 0.3, 0.5])
RHO = np.array([0.0, 1e-300, 1e-30, 1e-10, 1e-4, 0.01, 0.1, 0.5, 1.0, 3.0, 10.0, 100.0, 1e6])
MU = np.array([1e-300, 1e-30, 1e-10, 1e-4, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 40.0, 1e6])
ALPHA = np.array([1.0 + 1e-6, 1.01, 1.5, 2.0, 4.0, 8.0, 32.0, 256.0, 1e4, np.inf])
FPR = np.array([0.0, 1e-300, 1e-30, 1e-10, 1e-4, 0.01, 0.1, 0.3, 0.5, 0.9, 1.0])
K = np.array([1, 2, 10, 100, 10_000, 1_000_000])


def _grid(*axes):
    return [a.ravel() for a in np.meshgrid(*axes, indexing="ij")]


def _each(fn, *cols):
    """fn applied point by point (for functions that take one profile at a time)."""
    return np.array([float(fn(*args)) for args in zip(*cols)])


def _rare_profiles(mech):
    """Rare-event profiles from a tiny rate to a single run (the margins of their tails)."""
    sqk = ((0.05, 1e-17, 10**6), (1.0, 1e-9, 1000), (2.0, 1e-6, 1))
    return [mech.subsampled.RareEventProfile(mech.Gaussian(s), q, k) for s, q, k in sqk]


def _gdp_measures(conv, mech):
    """gdp_measure's (lo, hi) rows for two profiles at two tolerances."""
    profiles = (conv.PureDPProfile(1.0), mech.Laplace(2.0))
    return np.array([conv.gdp_measure(p, tol) for p in profiles for tol in (1e-2, 1e-3)])


def _accounting(dp):
    """Where the accounting modules are: ``dpexplore.accounting`` (since the package is laid out by
    layer), or the package itself in a commit from before."""
    try:
        return importlib.import_module(dp.__name__ + ".accounting")
    except ModuleNotFoundError:
        return dp


def cases(dp):
    """{name: (safe side, thunk)}: each thunk returns a float array (``dp`` is the package)."""
    acc = _accounting(dp)
    conv, comp, prof, risk, mech = acc.conversions, acc.composition, acc.profiles, acc.risk, dp.mechanisms
    e2, a2 = _grid(EPS[EPS < 1e100], ALPHA)
    r2, d2 = _grid(RHO, DELTA)
    m2, dm = _grid(MU, DELTA)
    ed_e, ed_d = _grid(EPS, DELTA)
    mu_e, eps_m = _grid(MU, EPS)
    orders = np.array([1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0])
    ek_e, ek_k, ek_d = _grid(np.array([1e-6, 1e-3, 0.01, 0.1, 1.0, 5.0]), K, np.array([1e-300, 1e-12, 1e-6, 0.1]))
    bud_e, bud_d, bud_k = _grid(
        np.array([1e-6, 0.01, 0.5, 1.0, 10.0, 1e3]), np.array([1e-300, 1e-12, 1e-6, 0.1, 0.5]), K
    )
    tr_e, tr_d, tr_a = _grid(np.array([0.0, 1e-6, 0.1, 1.0, 5.0, 30.0]), np.array([0.0, 1e-12, 1e-3, 0.1]), FPR)
    tg_m, tg_a = _grid(MU, FPR)

    c = {
        "pure_to_rdp": ("up", lambda: conv.pure_to_rdp(e2, a2)),
        "pure_to_rdp_zcdp": ("up", lambda: conv.pure_to_rdp(e2, a2, bound="zcdp")),
        "pure_to_zcdp": ("up", lambda: conv.pure_to_zcdp(EPS)),
        "pure_to_zcdp_quadratic": ("up", lambda: conv.pure_to_zcdp(EPS, bound="quadratic")),
        "rdp_to_approx": ("up", lambda: conv.rdp_to_approx(orders, r2[:, None] * orders, d2)),
        "rdp_to_approx_mironov": ("up", lambda: conv.rdp_to_approx(orders, r2[:, None] * orders, d2, bound="mironov")),
        "zcdp_to_approx": ("up", lambda: conv.zcdp_to_approx(r2, d2)),
        "approx_to_zcdp": ("down", lambda: conv.approx_to_zcdp(ed_e, ed_d)),
        "gdp_delta": ("up", lambda: conv.gdp_delta(mu_e, eps_m)),
        "gdp_epsilon": ("up", lambda: conv.gdp_epsilon(m2, dm)),
        "approx_to_gdp": ("down", lambda: conv.approx_to_gdp(ed_e, ed_d)),
        "pure_to_gdp": ("up", lambda: conv.pure_to_gdp(EPS)),
        "tradeoff_approx": ("down", lambda: conv.tradeoff_approx(tr_e, tr_d, tr_a)),
        "tradeoff_gdp": ("down", lambda: conv.tradeoff_gdp(tg_m, tg_a)),
        "zcdp_profile_epsilon": ("up", lambda: _each(lambda r, d: conv.ZCDPProfile(r).epsilon(d), r2, d2)),
        "zcdp_profile_delta": ("up", lambda: np.concatenate([conv.ZCDPProfile(r).delta(EPS) for r in RHO])),
        "rdp_profile_epsilon": (
            "up",
            lambda: np.concatenate([conv.RDPProfile(orders, r * orders).epsilon(DELTA) for r in RHO]),
        ),
        "equation_profile_epsilon": (
            "up",
            lambda: np.concatenate(
                [
                    conv.EquationProfile(2.0, 1.0, s, refined=rf).epsilon(DELTA[1:])
                    for s in (0.5, 2.0, 20.0)
                    for rf in (False, True)
                ]
            ),
        ),
        "gaussian_profile_epsilon": ("up", lambda: _each(lambda m, d: prof.GaussianDPProfile(m).epsilon(d), m2, dm)),
        "approx_profile_delta": (
            "up",
            lambda: np.concatenate(
                [conv.ApproxDPProfile(e, d).delta(EPS) for e in (0.1, 1.0, 5.0) for d in (0.0, 1e-6, 0.1)]
            ),
        ),
        "approx_profile_epsilon": (
            "up",
            lambda: np.concatenate(
                [conv.ApproxDPProfile(e, d).epsilon(DELTA) for e in (0.1, 1.0, 5.0) for d in (0.0, 1e-6, 0.1)]
            ),
        ),
        "function_profile_epsilon": (
            "up",
            lambda: np.concatenate(
                [prof.FunctionProfile(lambda x, m=m: conv.gdp_log_delta(m, x)).epsilon(DELTA) for m in MU[3:12]]
            ),
        ),
        "advanced": ("up", lambda: comp.advanced(ek_e, 0.0, ek_k, ek_d)[0]),
        "advanced_pure": ("up", lambda: np.array([comp.advanced_pure(e, d, k) for e, d, k in zip(ek_e, ek_d, ek_k)])),
        "optimal": (
            "up",
            lambda: np.array([comp.optimal(e, k, d) for e, d, k in zip(ek_e, ek_d, ek_k) if k <= 10_000]),
        ),
        "zcdp_compose": ("up", lambda: np.array([comp.zcdp(r, k) for r in RHO for k in K])),
        "gdp_compose": ("up", lambda: np.array([comp.gdp(m, k) for m in MU for k in K])),
        "rdp_compose": ("up", lambda: np.concatenate([np.ravel(comp.rdp(r * orders, k)) for r in RHO for k in K])),
        "gaussian_tpr": ("up", lambda: risk.tpr_at_fpr(prof.GaussianDPProfile(1.0), FPR)),
        "tpr_gdp": ("up", lambda: np.concatenate([risk.tpr_at_fpr(prof.GaussianDPProfile(m), FPR) for m in MU])),
        "tpr_approx": (
            "up",
            lambda: np.concatenate(
                [
                    risk.tpr_at_fpr(conv.ApproxDPProfile(e, d), FPR)
                    for e in (1e-6, 0.1, 1.0, 5.0, 30.0)
                    for d in (0.0, 1e-12, 1e-3)
                ]
            ),
        ),
        "tpr_laplace": (
            "up",
            lambda: np.concatenate([risk.tpr_at_fpr(mech.Laplace(b), FPR) for b in (0.2, 1.0, 10.0)]),
        ),
        "tpr_zcdp": (
            "up",
            lambda: np.concatenate([risk.tpr_at_fpr(conv.ZCDPProfile(r), FPR) for r in (0.01, 0.5, 3.0)]),
        ),
        "advantage": (
            "up",
            lambda: np.array(
                [
                    risk.advantage(p)
                    for p in (
                        prof.GaussianDPProfile(0.5),
                        conv.ApproxDPProfile(1.0, 1e-6),
                        mech.Laplace(1.0),
                        conv.ZCDPProfile(0.5),
                        conv.PureDPProfile(2.0),
                    )
                ]
            ),
        ),
        "posterior_bound": (
            "up",
            lambda: np.array(
                [
                    risk.posterior_bound(p, pi, f)
                    for p in (prof.GaussianDPProfile(0.5), conv.ApproxDPProfile(1.0, 1e-6), mech.Laplace(1.0))
                    for pi in (1e-6, 0.1, 0.5)
                    for f in (None, 0.01)
                ]
            ),
        ),
        "laplace_tradeoff": ("down", lambda: np.concatenate([mech.Laplace(b).tradeoff(FPR) for b in (0.1, 1.0, 10.0)])),
        "gaussian_tradeoff": (
            "down",
            lambda: np.concatenate([mech.Gaussian(s).tradeoff(FPR) for s in (0.1, 1.0, 10.0)]),
        ),
        "rr_tradeoff": (
            "down",
            lambda: np.concatenate([mech.RandomizedResponse(e).tradeoff(FPR) for e in (0.01, 1.0, 10.0)]),
        ),
        "discrete_laplace_tradeoff": (
            "down",
            lambda: np.concatenate([mech.DiscreteLaplace(s).tradeoff(FPR) for s in (0.5, 2.0)]),
        ),
        "discrete_gaussian_tradeoff": (
            "down",
            lambda: np.concatenate([mech.DiscreteGaussian(s).tradeoff(FPR) for s in (0.5, 2.0)]),
        ),
        "discrete_laplace_calibrate": (
            "up",
            lambda: np.array(
                [
                    mech.DiscreteLaplace.calibrate(e, d).scale
                    for e in (0.0, 0.1, 1.0, 5.0)
                    for d in (1e-12, 1e-6, 1e-3, 0.3)
                    if e > 0 or d > 0
                ]
            ),
        ),
        "discrete_gaussian_delta": (
            "up",
            lambda: np.concatenate([mech.DiscreteGaussian(s).delta(EPS[:14]) for s in (0.5, 2.0, 30.0)]),
        ),
        "discrete_gaussian_epsilon": (
            "up",
            lambda: np.concatenate([mech.DiscreteGaussian(s).epsilon(DELTA) for s in (0.5, 2.0, 30.0)]),
        ),
        "discrete_laplace_epsilon": (
            "up",
            lambda: np.concatenate([mech.DiscreteLaplace(s).epsilon(DELTA) for s in (0.5, 2.0, 30.0)]),
        ),
        "laplace_epsilon": ("up", lambda: np.concatenate([mech.Laplace(b).epsilon(DELTA) for b in (0.1, 1.0, 10.0)])),
        "gaussian_epsilon": ("up", lambda: np.concatenate([mech.Gaussian(s).epsilon(DELTA) for s in (0.1, 1.0, 10.0)])),
        "subbotin_epsilon": ("up", lambda: np.concatenate([mech.Subbotin(s, 1.5).epsilon(DELTA) for s in (0.5, 2.0)])),
        "laplace_delta": ("up", lambda: np.concatenate([mech.Laplace(b).delta(EPS) for b in (0.1, 1.0, 10.0)])),
        "laplace_rho": (
            "up",
            lambda: np.array([mech.Laplace(b)._card_closed_forms()["rho"][0] for b in (0.1, 0.7, 1.0, 3.0, 100.0)]),
        ),
        "per_step_budget_basic": ("down", lambda: comp.per_step_budget(bud_e, bud_d, bud_k, "basic")),
        "per_step_budget_advanced": ("down", lambda: comp.per_step_budget(bud_e, bud_d, bud_k, "advanced")),
        "per_step_budget_advanced_pure": ("down", lambda: comp.per_step_budget(bud_e, bud_d, bud_k, "advanced_pure")),
        "per_step_budget_zcdp": ("down", lambda: comp.per_step_budget(bud_e, bud_d, bud_k, "zcdp")),
        "per_step_budget_optimal": (
            "down",
            lambda: comp.per_step_budget(bud_e[bud_k <= 100], bud_d[bud_k <= 100], bud_k[bud_k <= 100], "optimal"),
        ),
        "renyi_filter_budget": (
            "down",
            lambda: np.concatenate(
                [acc.filters.RenyiFilter.from_target(e, 1e-6, a).budget for e in (5.0, 10.0, 50.0) for a in (8.0, 32.0)]
            ),
        ),
        "renyi_odometer": (
            "up",
            lambda: np.array(
                [
                    acc.filters.RenyiOdometer([2.0, 8.0, 32.0], d).epsilon(np.full((n, 3), 0.01))
                    for d in (1e-12, 1e-6)
                    for n in (1, 10, 1000)
                ]
            ),
        ),
        "gdp_identify": (
            "exact",
            lambda: np.array([conv.gdp_identify(mech.Laplace(1.0)), conv.gdp_identify(prof.GaussianDPProfile(0.7))]),
        ),
        "pld_compose_laplace": (
            "up",
            lambda: comp.compose(mech.Laplace(1.0), 10).delta(np.array([0.5, 1.0, 3.0, 8.0])),
        ),
        "pld_compose_laplace_eps": (
            "up",
            lambda: comp.compose(mech.Laplace(1.0), 10).epsilon(np.array([1e-12, 1e-6, 1e-3])),
        ),
        # -- the searches and margins moved onto the policy in its second step (grow_bracket,
        # newton_search, illinois, golden_min; the named margins of the rare-event tail, the
        # discrete mechanisms' RDP and the optimal composition)
        "zcdp_profile_log_delta": (
            "up",
            lambda: np.concatenate([conv.ZCDPProfile(r).log_delta(EPS[1:14]) for r in (1e-6, 0.01, 0.5, 3.0, 100.0)]),
        ),
        "equation_profile_delta": (
            "up",
            lambda: np.concatenate(
                [conv.EquationProfile(2.0, 1.0, s, refined=True).delta(EPS[:14]) for s in (0.5, 2.0, 20.0)]
            ),
        ),
        "gdp_measure_hi": ("up", lambda: _gdp_measures(conv, mech)[:, 1]),
        "gdp_measure_lo": ("down", lambda: _gdp_measures(conv, mech)[:, 0]),
        "dpsgd_sigma_rdp": (
            "up",
            lambda: np.array([comp.dpsgd_sigma(e, 1e-5, 0.01, 1000, "rdp") for e in (0.5, 2.0, 8.0)]),
        ),
        "discrete_laplace_calibrate_eps0": (
            "up",
            lambda: np.array(
                [mech.DiscreteLaplace.calibrate(0.0, d, s).scale for d in (1e-6, 1e-3, 0.3, 0.9) for s in (1, 5)]
            ),
        ),
        "discrete_rdp": (
            "up",
            lambda: np.concatenate(
                [m.rdp(ALPHA) for m in (mech.DiscreteLaplace(0.5), mech.DiscreteLaplace(3.0, 4))]
                + [m.rdp(ALPHA[:-1]) for m in (mech.DiscreteGaussian(0.2), mech.DiscreteGaussian(2.0, 3))]
            ),
        ),
        "subsampled_epsilon": (
            "up",
            lambda: np.concatenate(
                [mech.subsample(mech.Gaussian(s), q).epsilon(DELTA[1:]) for s in (0.5, 2.0) for q in (1e-6, 0.01, 0.5)]
            ),
        ),
        "rare_event_delta": ("up", lambda: np.concatenate([r.delta(EPS[:14]) for r in _rare_profiles(mech)])),
        "rare_event_epsilon": ("up", lambda: np.concatenate([r.epsilon(DELTA[1:]) for r in _rare_profiles(mech)])),
        "fixed_subsampled_rdp": (
            "up",
            lambda: np.concatenate(
                [
                    np.ravel(mech.subsample(mech.Gaussian(s), q, "fixed").rdp(np.array([3.0, 4.0, 8.0, 16.0, 64.0])))
                    for s in (0.3, 1.0, 5.0)
                    for q in (0.01, 0.3)
                ]
            ),
        ),
        "rare_event_tail": (
            "up",
            lambda: np.array(
                [mech.subsampled.rare_event_tail(q, k) for q in (1e-17, 1e-6, 0.1) for k in (1, 2, 10**6)]
            ),
        ),
        "one_shifted_step_lower_epsilon": (
            "down",
            lambda: np.concatenate(
                [
                    np.ravel(mech.subsampled.one_shifted_step_lower_epsilon(mech.Gaussian(s), q, K, d))
                    for s in (0.1, 1.0)
                    for q in (1e-9, 1e-4)
                    for d in (1e-12, 1e-6)
                ]
            ),
        ),
    }
    return c


def evaluate(dp):
    """{name: float array} of every case (NaN where a case raises, with the error recorded)."""
    import warnings

    out, errors = {}, {}
    for name, (_, thunk) in cases(dp).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out[name] = np.asarray(thunk(), dtype=np.float64).ravel()
            except Exception as exc:  # noqa: BLE001 - recorded, compared as an error
                errors[name] = f"{type(exc).__name__}: {exc}"
    return out, errors


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default=str(ROOT), help="directory holding the dpexplore package to evaluate")
    ap.add_argument("--commit", required=True, help="commit the package was taken from (stored in the file)")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    sys.path.insert(0, args.src)
    dp = importlib.import_module("dpexplore")
    acc = _accounting(dp)
    for sub in ("conversions", "composition", "profiles", "risk", "filters"):
        importlib.import_module(f"{acc.__name__}.{sub}")
    importlib.import_module("dpexplore.mechanisms")
    assert Path(dp.__file__).resolve().is_relative_to(Path(args.src).resolve()), dp.__file__
    values, errors = evaluate(dp)
    meta = {"commit": args.commit, "errors": errors}
    np.savez_compressed(args.out, __meta__=np.array(json.dumps(meta)), **values)
    n = sum(v.size for v in values.values())
    print(f"{len(values)} cases, {n} values, {len(errors)} errors -> {args.out}")
    for k, v in errors.items():
        print(f"  {k}: {v}")


if __name__ == "__main__":
    main()
