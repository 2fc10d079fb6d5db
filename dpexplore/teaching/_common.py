"""Private helpers of the teaching algorithms: validation and the composition of their ε₀-DP
steps (used by Sparse and Thresholdout)."""

from __future__ import annotations

import numpy as np

from .._validation import as_array, check_delta, check_int, check_k, check_nonneg, check_positive, scalar_out
from .._validation import check_rng as _check_rng  # noqa: F401  (the teaching modules import it from here)
from ..accounting.composition import advanced, per_step_budget


def _scalar(arr: np.ndarray, name: str, value) -> float:
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a scalar, got {value!r}")
    return float(arr)


def _pos(x, name: str, *, allow_inf: bool = False) -> float:
    return _scalar(check_positive(x, name, allow_inf=allow_inf), name, x)


def _real(x, name: str) -> float:
    return _scalar(as_array(x, name, allow_inf=False), name, x)


def _int(x, name: str, minimum: int = 1) -> int:
    if minimum == 1:
        arr = check_k(x, name)
        return int(_scalar(arr.astype(np.float64), name, x))
    return check_int(x, name, minimum)


def _delta_open(x, name: str = "delta") -> np.ndarray:
    """δ ∈ (0, 1)."""
    arr = check_delta(x, name)
    if (arr <= 0).any():
        raise ValueError(f"{name} must lie in (0, 1), got {x!r}")
    return arr


def _values(x, name: str) -> np.ndarray:
    arr = as_array(x, name, allow_inf=False)
    return np.atleast_1d(arr)


def _advanced_or_basic(eps0, k, delta):
    """ε of the k-fold adaptive composition of ε₀-DP mechanisms at total failure δ: the better of
    basic composition, k ε₀, and advanced composition with per-step δ = 0 and slack δ,
    :func:`dpexplore.accounting.composition.advanced` (rounded up there by 4 ulps)."""
    e0 = check_nonneg(eps0, "eps0", allow_inf=False)
    kk = check_k(k, "k").astype(np.float64)
    d = check_delta(delta, "delta")
    with np.errstate(over="ignore"):
        basic = kk * e0
    return scalar_out(np.minimum(basic, np.asarray(advanced(e0, 0.0, kk, d)[0])))


def _solve_eps0(eps: float, k: int, delta: float) -> float:
    """Largest ε₀ with :func:`_advanced_or_basic` (ε₀, k, δ) ≤ eps: ε/k by basic composition, or
    the advanced composition budget :func:`dpexplore.accounting.composition.per_step_budget` (its bisection,
    lower end kept: the safe side) when that is larger."""
    if delta == 0.0:
        return eps / k
    return max(eps / k, float(per_step_budget(eps, delta, k, "advanced")))
