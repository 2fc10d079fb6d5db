"""Accounting benchmark: dpexplore's composed ε against dp_accounting's PLD, side by side.

Run:  python benchmarks/bench_accounting.py            (every row; a few minutes)
      python benchmarks/bench_accounting.py --quick    (the rows that take dp_accounting < ~5 s)
      ... --baseline-ref REF   first the same rows of git commit REF (its code in a temporary
                               worktree, in a child process), before and after side by side
      ... --interval 1e-4      dp_accounting at this interval on every row (equal accuracy)
      ... --only "q 0.1,q 0.3" the rows whose label holds one of these texts

For each setting: dpexplore's ε (``composition.dpsgd_epsilon``, or ``compose(...).epsilon`` for
the Laplace rows) from a cold cache and its wall time (best of N), then dp_accounting's
pessimistic PLD (connect-the-dots, the interval shown; ``from_gaussian_mechanism(σ,
sampling_prob=q)`` or ``from_laplace_mechanism``, ``self_compose(k)``, ``get_epsilon_for_delta``)
and its time, the relative difference (ours − theirs)/theirs and the speed ratio. dp_accounting's
pessimistic ε is an upper bound of the truth up to its own tail truncation (it drops mass below
e^{−50} per mechanism and 1e-15 per composition, so at δ = 1e-12 it can fall below the truth:
σ 100, q 1, 10⁶ steps gives 115.33 against the exact GDP value 119.59); where the truth has a
closed form (q = 1: √k/σ-GDP) it is printed too. The load average is printed before and after:
timings on a loaded machine are not comparable.

Not a test module (no ``test_`` functions); pytest does not collect it.
"""

from __future__ import annotations

import logging
import os
import sys
import time
import warnings

import numpy as np

from dpexplore.accounting import composition as C
from dpexplore.accounting import pld
from dpexplore.accounting.conversions import gdp_epsilon
from dpexplore.mechanisms import Laplace

#: (label, kind, parameters, δ, dp_accounting interval, dp_accounting slow?)
ROWS = [
    ("DP-SGD σ 1, q 0.01, 10⁴ steps", "dpsgd", (1.0, 0.01, 10_000), 1e-5, 1e-4, False),
    ("DP-SGD σ 1, q 0.01, 10⁶ steps", "dpsgd", (1.0, 0.01, 1_000_000), 1e-5, 1e-3, False),
    ("DP-SGD σ 0.5, q 0.01, 10⁴ steps", "dpsgd", (0.5, 0.01, 10_000), 1e-5, 1e-3, False),
    ("DP-SGD σ 0.5, q 1e-4, 10⁴ steps, δ 1e-12", "dpsgd", (0.5, 1e-4, 10_000), 1e-12, 1e-4, False),
    ("DP-SGD σ 0.05, q 0.01, 100 steps", "dpsgd", (0.05, 0.01, 100), 1e-5, 1e-3, True),
    ("DP-SGD σ 10, q 0.5, 10⁶ steps, δ 1e-12", "dpsgd", (10.0, 0.5, 1_000_000), 1e-12, 1e-3, False),
    ("DP-SGD σ 100, q 1, 10⁶ steps, δ 1e-12", "dpsgd", (100.0, 1.0, 1_000_000), 1e-12, 1e-3, False),
    ("DP-SGD σ 0.05, q 1, 1 step, δ 1e-12", "dpsgd", (0.05, 1.0, 1), 1e-12, 1e-3, True),
    ("DP-SGD σ 1, q 1e-17, 1000 steps", "dpsgd", (1.0, 1e-17, 1000), 1e-5, None, False),
    # the rest of the table that opened issue 35 (δ 1e-5, dp_accounting at interval 1e-3 as there)
    ("DP-SGD σ 0.5, q 0.01, 100 steps", "dpsgd", (0.5, 0.01, 100), 1e-5, 1e-3, False),
    ("DP-SGD σ 0.5, q 0.1, 1000 steps", "dpsgd", (0.5, 0.1, 1000), 1e-5, 1e-3, True),
    ("DP-SGD σ 0.7, q 0.1, 10⁴ steps", "dpsgd", (0.7, 0.1, 10_000), 1e-5, 1e-3, True),
    ("DP-SGD σ 0.7, q 0.3, 1000 steps", "dpsgd", (0.7, 0.3, 1000), 1e-5, 1e-3, True),
    ("DP-SGD σ 1, q 0.1, 10⁴ steps", "dpsgd", (1.0, 0.1, 10_000), 1e-5, 1e-3, True),
    ("DP-SGD σ 1, q 0.3, 10⁴ steps", "dpsgd", (1.0, 0.3, 10_000), 1e-5, 1e-3, True),
    ("DP-SGD σ 1, q 1e-17, 100 steps", "dpsgd", (1.0, 1e-17, 100), 1e-5, None, False),
    # small σ and a small rate: the composed PLD lost the rare large losses before 2026-11-29
    ("DP-SGD σ 0.3, q 1e-5, 100 steps", "dpsgd", (0.3, 1e-5, 100), 1e-5, 1e-4, False),
    ("DP-SGD σ 0.3, q 1e-5, 10⁴ steps", "dpsgd", (0.3, 1e-5, 10_000), 1e-5, 1e-4, False),
    ("DP-SGD σ 0.05, q 1e-4, 10⁴ steps, δ 1e-12", "dpsgd", (0.05, 1e-4, 10_000), 1e-12, 1e-3, True),
    ("Laplace(1), k 1000, δ 1e-6", "laplace", (1.0, 1000), 1e-6, 1e-4, False),
    ("Laplace(1), k 10⁴, δ 1e-12", "laplace", (1.0, 10_000), 1e-12, 1e-3, False),
    ("Laplace(1), k 10⁵, δ 1e-6", "laplace", (1.0, 100_000), 1e-6, 1e-3, False),
]


def ours(kind, params, delta):
    if kind == "dpsgd":
        s, q, k = params
        return C.dpsgd_epsilon(s, q, k, delta)
    b, k = params
    return float(C.compose(Laplace(b), k).epsilon(delta))


def theirs(kind, params, delta, interval):
    from dp_accounting.pld import privacy_loss_distribution as dpa

    if kind == "dpsgd":
        s, q, k = params
        p = dpa.from_gaussian_mechanism(s, sampling_prob=q, value_discretization_interval=interval)
    else:
        b, k = params
        p = dpa.from_laplace_mechanism(b, sensitivity=1, value_discretization_interval=interval)
    if k > 1:
        p = p.self_compose(k)
    return float(p.get_epsilon_for_delta(delta))


def exact(kind, params, delta):
    """The exact ε where there is a closed form (q = 1: the Gaussian, √k/σ-GDP), else None."""
    if kind == "dpsgd" and params[1] == 1.0:
        return float(gdp_epsilon(np.sqrt(params[2]) / params[0], delta))
    return None


def timed(fn, repeats, setup=None):
    best, out = np.inf, None
    for _ in range(repeats):
        if setup is not None:
            setup()
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def cold():
    pld.clear_caches()
    C._one_step_rdp.cache_clear()


def ours_json(quick: bool) -> int:
    """``--ours-json``: every row's (ε, ms) of the dpexplore on the path, as JSON (the baseline's
    half of ``--baseline-ref``, run in a child whose PYTHONPATH is the baseline's checkout)."""
    import json

    out = {}
    for label, kind, params, delta, _, _ in ROWS:
        t_o, e_o = timed(lambda: ours(kind, params, delta), 3, setup=cold)
        out[label] = [e_o, t_o]
    print(json.dumps(out))
    return 0


def baseline(ref: str, quick: bool) -> dict:
    """{label: (ε, seconds)} of git commit ``ref`` (a temporary worktree, a child process; the
    same rows)."""
    import json
    import subprocess
    import tempfile

    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = tempfile.mkdtemp(prefix="bench-acc-base-")
    os.rmdir(path)
    subprocess.run(["git", "worktree", "add", "--detach", path, ref], cwd=repo, check=True, capture_output=True)
    try:
        env = dict(os.environ, PYTHONPATH=path)
        got = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--ours-json"] + (["--quick"] if quick else []),
            cwd=path,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        return {k: tuple(v) for k, v in json.loads(got.stdout.strip().splitlines()[-1]).items()}
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", path], cwd=repo, capture_output=True)


def main(argv) -> int:
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    quick = "--quick" in argv
    global ROWS
    if "--only" in argv:
        keep = [t.strip() for t in argv[argv.index("--only") + 1].split(",")]
        ROWS = [r for r in ROWS if any(t in r[0] for t in keep)]
    if "--interval" in argv:
        h = float(argv[argv.index("--interval") + 1])
        ROWS = [(*r[:4], h if r[4] is not None else None, r[5]) for r in ROWS]
    if "--ours-json" in argv:
        return ours_json(quick)
    base_ref = argv[argv.index("--baseline-ref") + 1] if "--baseline-ref" in argv else None
    if base_ref:
        print(f"baseline {base_ref} (a child process first; load average {os.getloadavg()[0]:.2f})")
        base = baseline(base_ref, quick)
        print(
            f"{'setting':<44s} {'before ε':>13s} {'ms':>8s}   {'now ε':>13s} {'ms':>8s}   "
            f"{'rel. change':>11s} {'speed-up':>8s}"
        )
        for label, kind, params, delta, _, _ in ROWS:
            t_o, e_o = timed(lambda: ours(kind, params, delta), 3, setup=cold)
            e_b, t_b = base[label]
            print(
                f"{label:<44s} {e_b:13.6f} {t_b * 1e3:8.1f}   {e_o:13.6f} {t_o * 1e3:8.1f}   "
                f"{(e_o - e_b) / e_b if e_b else 0.0:+11.2e} {t_b / t_o:7.2f}×",
                flush=True,
            )
        print()
    print(
        f"dpexplore vs dp_accounting: composed ε (load average {os.getloadavg()[0]:.2f} "
        f"on {os.cpu_count()} cores; ours best of 3 from a cold cache, theirs one run)\n"
    )
    head = (
        f"{'setting':<44s} {'dpexplore ε':>13s} {'ms':>8s}   {'dp_accounting ε':>15s} "
        f"{'interval':>8s} {'ms':>9s}   {'rel. diff':>9s} {'speed-up':>8s}   exact"
    )
    print(head)
    print("-" * len(head))
    for label, kind, params, delta, interval, slow in ROWS:
        t_o, e_o = timed(lambda: ours(kind, params, delta), 3, setup=cold)
        ex = exact(kind, params, delta)
        ex_text = f"{ex:.6f}" if ex is not None else ""
        if interval is None or (quick and slow):
            why = "no grid fits" if interval is None else "skipped (--quick)"
            print(
                f"{label:<44s} {e_o:13.6f} {t_o * 1e3:8.1f}   {why:>15s} {'':>8s} {'':>9s}   "
                f"{'':>9s} {'':>8s}   {ex_text}"
            )
            continue
        t_t, e_t = timed(lambda: theirs(kind, params, delta, interval), 1)
        rel = (e_o - e_t) / e_t if e_t else float("nan")
        print(
            f"{label:<44s} {e_o:13.6f} {t_o * 1e3:8.1f}   {e_t:15.6f} {interval:8.0e} "
            f"{t_t * 1e3:9.1f}   {rel:+9.2e} {t_t / t_o:7.1f}×   {ex_text}",
            flush=True,
        )
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
