"""Down sensitivity and the shifted inverse sensitivity mechanism (Steinke 2023b; Fang, Dong & Yi 2022).

Approximating a *monotone* function f of a dataset — the maximum, or a user-level sum where one
person contributes arbitrarily many non-negative items — whose local sensitivity is unbounded
(adding one item can raise f arbitrarily) but whose *down* sensitivity is not (Steinke 2023b,
"Beyond local sensitivity via down sensitivity", eq. (1)):

    DS^k_f(x) = sup_{x' ⊆ x, dist(x, x') ≤ k} |f(x) − f(x')|.

The loss (Steinke 2023b, eq. (4)) ℓ(x, y) = min{dist(x, x̃) : x̃ ⊆ x, f(x̃) ≤ y} counts the items (people) that
must be removed to bring f to at most y; for monotone f it has global sensitivity 1 (Steinke 2023b,
Proposition 3).
The shifted inverse sensitivity mechanism (Fang, Dong & Yi 2022) looks for a y whose loss is near a
shift τ > 0 instead of 0, so its output sits below f(x) but above f(x) − DS^{2τ}_f(x):

* :func:`shifted_inverse_pmf` / :func:`shifted_inverse_sample` — the exponential mechanism on the
  loss ℓ* (Steinke 2023b, Theorem 4 and its footnote 4, eqs. (A)–(B)): ε-DP.
* :func:`binary_search_pmf` / :func:`binary_search_sample` — the noisy binary search (Steinke 2023b,
  Theorem 5): (T/σ)-DP and T/(2σ²)-zCDP for T halving steps.

Outputs live on a finite, increasing grid Y = (y_0 < … < y_{m−1}); f is taken with values in Y
(the smallest grid point ≥ the raw value, capped at y_{m−1}; f(∅) = y_0), which keeps f monotone
and onto Y as the theorems require. Every mechanism has an exact output distribution over Y *and*
a seeded sampler implemented independently (Gumbel-max; literal simulation), so a lab can draw the
estimate's distribution against the true maximum and against the naive baselines
(:func:`laplace_clipped_max`, :func:`laplace_clipped_user_sum`: clip at a guessed bound and add
Laplace noise; with the bound at the grid's top this is global-sensitivity noise).

Per slider step a lab calls one ``grid_losses_*`` function (O(n log n)), the ``*_pmf`` functions
(O(|Y|)) and the baseline constructors (O(n)): ≈ 4 ms together for n = 10⁵ items and |Y| = 10⁴
(``benchmarks/bench_sources.py``).

>>> x = [0] + [1] * 5 + [2] * 10 + [3] * 10 + [4] * 5 + [5]      # Steinke 2023b, Figure 1
>>> loss_max(x, [0, 1, 2, 3, 4, 5]).tolist()
[31, 26, 16, 6, 1, 0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from .._numerics import div_up, sqrt_up
from .._validation import as_array, check_positive, scalar_out
from .._validation import check_rng as _rng

__all__ = [
    "check_grid",
    "loss_max",
    "loss_user_sum",
    "user_totals",
    "grid_losses_max",
    "grid_losses_user_sum",
    "value_from_losses",
    "down_sensitivity",
    "down_sensitivity_max",
    "shifted_loss",
    "shifted_inverse_tau",
    "shifted_inverse_pmf",
    "shifted_inverse_sample",
    "binary_search_steps",
    "binary_search_params",
    "binary_search_privacy",
    "binary_search_pmf",
    "binary_search_sample",
    "accuracy_range",
    "accuracy_probability",
    "GridEstimate",
    "LaplaceEstimate",
    "laplace_clipped_max",
    "laplace_clipped_user_sum",
]


# -- validation -----------------------------------------------------------------------------------

_GUMBEL_MAX = 10_000000
_SIZE_MAX = 10_000000


def _size(size) -> int:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not 1 <= size <= _SIZE_MAX:
        raise ValueError(f"size must be an integer in [1, 1e7], got {size!r}")
    return int(size)


def _data(x, name: str = "x") -> np.ndarray:
    arr = as_array(x, name, allow_inf=False)
    if arr.ndim > 1 or arr.size > 10_000000:
        raise ValueError(f"{name} must be one-dimensional with at most 1e7 items, got shape {arr.shape}")
    return arr.ravel()


def check_grid(grid, name: str = "grid") -> np.ndarray:
    """The output grid Y as a strictly increasing, finite float array of at least 2 points.

    >>> check_grid([0, 1, 2]).tolist()
    [0.0, 1.0, 2.0]
    """
    g = as_array(grid, name, allow_inf=False)
    if g.ndim != 1 or g.size < 2 or g.size > 1_000001:
        raise ValueError(f"{name} must be a one-dimensional array of 2 to 1000001 points, got shape {g.shape}")
    if (np.diff(g) <= 0).any():
        raise ValueError(f"{name} must be strictly increasing, got {g[:6].tolist()}...")
    return g


def _losses(loss, name: str = "loss") -> np.ndarray:
    arr = as_array(loss, name, allow_inf=False)
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(
            f"{name} must be a one-dimensional array of at least 2 values (one per grid point), got shape {arr.shape}"
        )
    if (arr < 0).any() or (arr != np.floor(arr)).any():
        raise ValueError(f"{name} must hold non-negative integers, got {arr[:6].tolist()}")
    if (np.diff(arr) > 0).any():
        raise ValueError(f"{name} must be non-increasing along the grid (f is monotone), got {arr[:6].tolist()}")
    if arr[-1] != 0:
        raise ValueError(f"{name} must end with 0 (f(x) <= the top of the grid), got {arr[-1]!r}")
    return arr.astype(np.int64)


def _pos_scalar(x, name: str) -> float:
    arr = check_positive(x, name)
    if arr.ndim:
        raise ValueError(f"{name} must be a scalar, got shape {arr.shape}")
    return float(arr)


def _beta(beta) -> float:
    arr = as_array(beta, "beta")
    if arr.ndim or not 0 < float(arr) < 1:
        raise ValueError(f"beta must be a number in (0, 1), got {beta!r}")
    return float(arr)


def _tau(tau) -> float:
    arr = as_array(tau, "tau", allow_inf=False)
    if arr.ndim or float(arr) <= 0:
        raise ValueError(f"tau must be a number > 0, got {tau!r}")
    return float(arr)


# -- the loss ℓ(x, y) -----------------------------------------------------------------------------
def loss_max(x, y) -> np.ndarray:
    """ℓ(x, y) for f = max (Steinke 2023b, eq. (4) and Figure 1): the number of items above y,

        ℓ(x, y) = #{i : x_i > y},

    since removing exactly the items above y is the cheapest way to bring the maximum to ≤ y.
    Vectorized over ``y``; ``x`` may be empty.

    >>> loss_max([3, 1, 4, 1, 5], [0, 1, 4.5, 5]).tolist()
    [5, 3, 1, 0]
    """
    xs = np.sort(_data(x))
    ys = as_array(y, "y")
    return (xs.size - np.searchsorted(xs, ys, side="right")).astype(np.int64)


def user_totals(user_ids, values) -> np.ndarray:
    """Each person's total contribution S_u = Σ of their items (values must be ≥ 0, so the sum is
    monotone; Steinke 2023b, "Monotonicity assumption"). Returned sorted by user id.

    >>> user_totals([7, 3, 7, 7], [1.0, 2.0, 0.5, 4.0]).tolist()
    [2.0, 5.5]
    """
    ids = np.asarray(user_ids)
    vals = _data(values, "values")
    if ids.ndim != 1 or ids.shape != vals.shape:
        raise ValueError(f"user_ids must be one-dimensional with the shape of values {vals.shape}, got {ids.shape}")
    if (vals < 0).any():
        raise ValueError(f"values must be >= 0 (the sum must be monotone), got {vals[vals < 0][:6].tolist()}")
    _, inv = np.unique(ids, return_inverse=True)
    return np.bincount(inv, weights=vals) if vals.size else np.zeros(0)


def _totals(totals) -> np.ndarray:
    t = _data(totals, "totals")
    if (t < 0).any():
        raise ValueError(f"totals must be >= 0 (the sum must be monotone), got {t[t < 0][:6].tolist()}")
    return t


def loss_user_sum(totals, y) -> np.ndarray:
    """ℓ(x, y) for the user-level sum f(x) = Σ_u S_u (S_u ≥ 0 the total of person u; one person is
    one unit of dist): the fewest people whose removal brings the sum to ≤ y. Removing the largest
    totals first is optimal, so with S_(1) ≥ S_(2) ≥ … ,

        ℓ(x, y) = min{k ≥ 0 : Σ_{j > k} S_(j) ≤ y}.

    >>> loss_user_sum([10.0, 1.0, 2.0], [0, 1, 2.5, 3, 13]).tolist()
    [3, 2, 2, 1, 0]
    """
    t = np.sort(_totals(totals))  # ascending
    ys = as_array(y, "y")
    # remaining[k] = sum after removing the k largest = sum of the n − k smallest (exact, monotone)
    small = np.concatenate(([0.0], np.cumsum(t)))  # small[j] = sum of the j smallest
    remaining = small[::-1]  # remaining[k] = small[n − k], non-increasing
    # first k with remaining[k] <= y: remaining is non-increasing, search on its negation
    return np.searchsorted(-remaining, -ys, side="left").astype(np.int64)


def _on_grid(raw: np.ndarray) -> np.ndarray:
    out = raw.copy()
    out[-1] = 0  # f is capped at the top of the grid: ℓ(x, y_{m−1}) = 0
    return out


def grid_losses_max(x, grid) -> np.ndarray:
    """ℓ(x, y_j) on the grid for the maximum with values in Y (raw loss below the top point, 0 at
    the top: f is capped at y_{m−1}, i.e. the data are clipped into the grid's range).

    >>> grid_losses_max([0, 2, 9], [0, 1, 2, 3]).tolist()
    [2, 2, 1, 0]
    """
    g = check_grid(grid)
    return _on_grid(loss_max(x, g))


def grid_losses_user_sum(totals, grid) -> np.ndarray:
    """ℓ(x, y_j) on the grid for the user-level sum capped at the top of the grid.

    >>> grid_losses_user_sum([10.0, 1.0, 2.0], [0, 2, 5, 20]).tolist()
    [3, 2, 1, 0]
    """
    g = check_grid(grid)
    return _on_grid(loss_user_sum(totals, g))


def value_from_losses(loss, grid) -> float:
    """f(x) on the grid: the smallest y_j with ℓ(x, y_j) = 0.

    >>> value_from_losses([3, 1, 0, 0], [0, 1, 2, 3])
    2.0
    """
    lo = _losses(loss)
    g = check_grid(grid)
    if g.size != lo.size:
        raise ValueError(f"grid must have one point per loss value ({lo.size}), got {g.size}")
    return float(g[np.argmax(lo == 0)])


def down_sensitivity(loss, grid, k):
    """k-down sensitivity on the grid (Steinke 2023b, eq. (1)), from the losses: removing at most k
    items can bring f down to the smallest y_j with ℓ(x, y_j) ≤ k, so

        DS^k_f(x) = f(x) − min{y_j : ℓ(x, y_j) ≤ k}.

    Vectorized over integer ``k`` ≥ 0.

    >>> down_sensitivity(grid_losses_max([0, 1, 1, 5], [0, 1, 2, 3, 4, 5]), [0, 1, 2, 3, 4, 5], [0, 1, 2, 3])
    array([0., 4., 4., 5.])
    """
    lo = _losses(loss)
    g = check_grid(grid)
    if g.size != lo.size:
        raise ValueError(f"grid must have one point per loss value ({lo.size}), got {g.size}")
    ks = as_array(k, "k", allow_inf=False)
    if (ks < 0).any() or (ks != np.floor(ks)).any():
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    fx = g[np.argmax(lo == 0)]
    # lo is non-increasing: first index with lo <= k
    idx = np.searchsorted(-lo, -ks, side="left")
    return scalar_out(fx - g[idx])


def down_sensitivity_max(x, k):
    """k-down sensitivity of the raw maximum: removing the k largest items is the worst case, so
    DS^k = x_(n) − x_(n−k) for k < n (sorted x_(1) ≤ … ≤ x_(n)); for k ≥ n every item can go and
    the value of the empty set is taken as x_(1) (the grid floor in the mechanisms). Vectorized over k.

    >>> down_sensitivity_max([0, 1, 1, 5], [0, 1, 2, 3])
    array([0., 4., 4., 5.])
    """
    xs = np.sort(_data(x))
    if xs.size == 0:
        raise ValueError("x must hold at least one item")
    ks = as_array(k, "k", allow_inf=False)
    if (ks < 0).any() or (ks != np.floor(ks)).any():
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    idx = np.clip(xs.size - 1 - ks.astype(np.int64), 0, None)
    return scalar_out(xs[-1] - xs[idx])


# -- Steinke 2023b, Theorem 4: the exponential mechanism on the shifted loss -----------------------
def shifted_loss(loss, tau) -> np.ndarray:
    """The shifted loss ℓ* of Steinke 2023b, footnote 4, eq. (B) (Fang, Dong & Yi 2022): with the
    strict loss of Steinke 2023b, eq. (A)
    ℓ̄(x, y) = min{dist(x, x̃) : x̃ ⊆ x, f(x̃) < y} — on a grid ℓ̄(x, y_j) = ℓ(x, y_{j−1}) and
    ℓ̄(x, y_0) = ∞ —

        ℓ*(x, y) = max(ℓ(x, y) − τ, τ − ℓ̄(x, y)).

    ℓ* has sensitivity 1 (ℓ and ℓ̄ both do, Steinke 2023b, Proposition 3), and ℓ*(x, ŷ) ≤ 0 at the grid point ŷ
    where ℓ steps across τ (ℓ(x, ŷ) ≤ τ ≤ ℓ̄(x, ŷ)). ℓ* < τ implies ℓ̄ > 0, i.e. y ≤ f(x), and
    ℓ < 2τ, i.e. y ≥ f(x) − DS^{2τ}_f(x).

    >>> shifted_loss([31, 26, 16, 6, 1, 0], 5).tolist()
    [26.0, 21.0, 11.0, 1.0, -1.0, 4.0]
    """
    lo = _losses(loss).astype(float)
    t = _tau(tau)
    strict = np.concatenate(([np.inf], lo[:-1]))
    return np.maximum(lo - t, t - strict)


def shifted_inverse_tau(eps, beta, grid_size) -> int:
    """The shift of Steinke 2023b, Theorem 4: τ = ⌈(2/ε) log(|Y|/β)⌉.

    >>> shifted_inverse_tau(1.0, 0.1, 100)
    14
    """
    e = _pos_scalar(eps, "eps")
    b = _beta(beta)
    if isinstance(grid_size, bool) or not isinstance(grid_size, (int, np.integer)) or grid_size < 2:
        raise ValueError(f"grid_size must be an integer >= 2, got {grid_size!r}")
    return int(math.ceil(2.0 / e * math.log(int(grid_size) / b)))


def _log_pmf_em(loss, eps, tau) -> np.ndarray:
    e = _pos_scalar(eps, "eps")
    score = -0.5 * e * shifted_loss(loss, tau)
    return score - logsumexp(score)


def shifted_inverse_pmf(loss, eps, tau) -> np.ndarray:
    """Exact output distribution of the shifted inverse sensitivity mechanism (Steinke 2023b,
    Theorem 4; Fang, Dong & Yi 2022): the exponential mechanism (McSherry & Talwar 2007) with
    utility −ℓ*, sensitivity 1,

        P[M(x) = y_j] ∝ exp(−ε ℓ*(x, y_j) / 2),

    which is ε-DP. With τ = :func:`shifted_inverse_tau` (ε, β, |Y|),
    P[f(x) ≥ M(x) ≥ f(x) − DS^{2τ}_f(x)] ≥ 1 − β (computed exactly by :func:`accuracy_probability`).
    Computed in log space (no underflow for any ε).

    >>> p = shifted_inverse_pmf([31, 26, 16, 6, 1, 0], 1.0, 5)
    >>> int(np.argmax(p)), round(float(p.sum()), 12)
    (4, 1.0)
    """
    return np.exp(_log_pmf_em(loss, eps, tau))


def shifted_inverse_sample(loss, grid, eps, tau, rng, size: int = 1) -> np.ndarray:
    """Seeded draws of the mechanism of Steinke 2023b, Theorem 4, by the Gumbel-max trick
    (argmax_j −ε ℓ*_j/2 + G_j with G_j i.i.d. Gumbel: an implementation independent of
    :func:`shifted_inverse_pmf`, which the tests compare it against); beyond size·|Y| = 10⁷ by the
    inverse CDF (memory stays O(|Y|)). ``size`` is at most 10⁷.

    >>> out = shifted_inverse_sample([31, 26, 16, 6, 1, 0], [0, 1, 2, 3, 4, 5], 1.0, 5, np.random.default_rng(0), 4)
    >>> out.shape
    (4,)
    """
    g = check_grid(grid)
    r = _rng(rng)
    n = _size(size)
    e = _pos_scalar(eps, "eps")
    score = -0.5 * e * shifted_loss(loss, tau)
    if score.size != g.size:
        raise ValueError(f"grid must have one point per loss value ({score.size}), got {g.size}")
    if n * score.size <= _GUMBEL_MAX:
        idx = np.argmax(score[None, :] + r.gumbel(size=(n, score.size)), axis=1)
    else:  # large requests: inverse CDF of the exact pmf (memory O(|Y|), time O(n log |Y|))
        cdf = np.cumsum(np.exp(score - logsumexp(score)))
        idx = np.minimum(np.searchsorted(cdf, r.random(n) * cdf[-1], side="right"), score.size - 1)
    return g[idx]


# -- Steinke 2023b, Theorem 5: noisy binary search ---------------------------------------------
def binary_search_steps(grid_size) -> int:
    """T, the largest number of halving steps of the noisy binary search on |Y| = m points (the
    loop ``while i_min + 1 < i_max`` on [0, m − 1]): T = ⌈log₂(m − 1)⌉. This equals log₂|Y| when |Y|
    is a power of two (the case Steinke 2023b's ε = log₂|Y|/σ counts); otherwise it can exceed it
    (|Y| = 6: T = 3 > log₂ 6, where log₂|Y|/σ would understate ε) or fall below it (|Y| = 3), so
    the accounting here uses the exact T.

    >>> [binary_search_steps(m) for m in (2, 3, 4, 6, 8, 1024)]
    [0, 1, 2, 3, 3, 10]
    """
    if isinstance(grid_size, bool) or not isinstance(grid_size, (int, np.integer)) or grid_size < 2:
        raise ValueError(f"grid_size must be an integer >= 2, got {grid_size!r}")
    m = int(grid_size)
    return 0 if m == 2 else int(math.ceil(math.log2(m - 1) - 1e-12))


def binary_search_params(grid_size, beta, *, eps=None, rho=None) -> tuple[float, float]:
    """(σ, τ) of Steinke 2023b, Theorem 5 (ρ-zCDP) or its ε-DP variant, with the step count T of
    :func:`binary_search_steps` (the exact number of Laplace draws) in place of log₂|Y| (equal when
    |Y| is a power of two):

        ε-DP:    σ = T/ε,            τ = σ log(T/β);
        ρ-zCDP:  σ = sqrt(T/(2ρ)),   τ = σ log(T/β).

    A union bound over the T Laplace(σ) draws gives P[all |noise| ≤ τ] ≥ 1 − T e^{−τ/σ} = 1 − β,
    and then f(x) ≥ M(x) ≥ f(x) − DS^{2τ}_f(x). ρ = ε²/(4 log(1/δ) + 4ε) suffices for (ε, δ)-DP.

    >>> s, t = binary_search_params(1024, 0.1, rho=0.5)
    >>> round(s, 6), round(t, 4)
    (3.162278, 14.5628)
    """
    steps = max(binary_search_steps(grid_size), 1)
    b = _beta(beta)
    if (eps is None) == (rho is None):
        raise ValueError(f"give exactly one of eps or rho, got eps={eps!r}, rho={rho!r}")
    if eps is not None:  # σ rounded upward (more noise: the safe side)
        sigma = float(div_up(steps, _pos_scalar(eps, "eps")))
    else:
        sigma = float(sqrt_up(div_up(steps, 2.0 * _pos_scalar(rho, "rho"))))
    return sigma, sigma * math.log(steps / b)


def binary_search_privacy(grid_size, sigma) -> dict:
    """Privacy of the noisy binary search with Laplace(σ) noise on a sensitivity-1 loss (Steinke
    2023b, Theorem 5 and the text before it): each step is (1/σ)-DP, hence 1/(2σ²)-zCDP, and by
    basic composition over T = :func:`binary_search_steps` steps the whole search is (T/σ)-DP and
    T/(2σ²)-zCDP.

    >>> binary_search_privacy(1024, 10.0)
    {'steps': 10, 'eps': 1.0, 'rho': 0.05}
    """
    steps = binary_search_steps(grid_size)
    s = _pos_scalar(sigma, "sigma")
    # T/σ and T/(2σ²) = (T/(2σ))/σ, each division rounded upward (exact where the result is a float)
    return {"steps": steps, "eps": float(div_up(steps, s)), "rho": float(div_up(div_up(steps, 2.0 * s), s))}


def _lap_cdf(z, sigma):
    z = np.asarray(z, float)
    return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0) / sigma), 1.0 - 0.5 * np.exp(-np.maximum(z, 0) / sigma))


def binary_search_pmf(loss, sigma, tau) -> np.ndarray:
    """Exact output distribution of the noisy binary search of Steinke 2023b (Theorem 5)::

        i_min, i_max = 0, m − 1
        while i_min + 1 < i_max:
            k = (i_min + i_max) // 2
            if ℓ(x, y_k) + Laplace(σ) < τ: i_max = k  else: i_min = k
        return y_{i_max}

    computed by propagating the probability of every interval through the search tree, level by
    level (P[go down at k] = F_Lap(τ − ℓ(x, y_k))). O(|Y|) work; y_0 is never returned.

    >>> p = binary_search_pmf([31, 26, 16, 6, 1, 0], 1.0, 3.0)
    >>> round(float(p.sum()), 12), float(p[0])
    (1.0, 0.0)
    """
    lo = _losses(loss)
    s = _pos_scalar(sigma, "sigma")
    t = _tau(tau)
    m = lo.size
    out = np.zeros(m)
    a, b, w = np.array([0]), np.array([m - 1]), np.array([1.0])
    while a.size:
        done = a + 1 >= b
        np.add.at(out, b[done], w[done])
        a, b, w = a[~done], b[~done], w[~done]
        if not a.size:
            break
        k = (a + b) // 2
        down = _lap_cdf(t - lo[k], s)  # P[ℓ + noise < τ]
        a, b = np.concatenate((a, k)), np.concatenate((k, b))
        w = np.concatenate((w * down, w * (1 - down)))
        keep = w > 0
        a, b, w = a[keep], b[keep], w[keep]
    return out


def binary_search_sample(loss, grid, sigma, tau, rng, size: int = 1) -> np.ndarray:
    """Seeded draws of the noisy binary search, simulated literally (all draws walk the search in
    lockstep, one Laplace draw per step): an implementation independent of :func:`binary_search_pmf`.

    >>> binary_search_sample([31, 26, 16, 6, 1, 0], [0, 1, 2, 3, 4, 5], 1.0, 3.0, np.random.default_rng(1), 3).shape
    (3,)
    """
    lo = _losses(loss)
    g = check_grid(grid)
    if g.size != lo.size:
        raise ValueError(f"grid must have one point per loss value ({lo.size}), got {g.size}")
    s = _pos_scalar(sigma, "sigma")
    t = _tau(tau)
    r = _rng(rng)
    n = _size(size)
    a = np.zeros(n, dtype=np.int64)
    b = np.full(n, lo.size - 1, dtype=np.int64)
    while True:
        active = a + 1 < b
        if not active.any():
            break
        k = (a + b) // 2
        v = lo[k] + r.laplace(0.0, s, size=n)
        go_down = active & (v < t)
        go_up = active & ~(v < t)
        b = np.where(go_down, k, b)
        a = np.where(go_up, k, a)
    return g[b]


def accuracy_range(loss, grid, tau) -> tuple[float, float, float]:
    """The range that Steinke 2023b, Theorems 4 and 5 guarantee (with probability ≥ 1 − β for their τ)::

        f(x) − DS^{⌊2τ⌋}_f(x) ≤ M(x) ≤ f(x),

    the integer 2τ rounded down (the binary search's τ need not be an integer; DS^k of
    :func:`down_sensitivity`, f(x) of :func:`value_from_losses`). Returns
    ``(low, high, width)`` = (f(x) − DS^{⌊2τ⌋}_f(x), f(x), DS^{⌊2τ⌋}_f(x)).

    >>> accuracy_range([31, 26, 16, 6, 1, 0], range(6), 3.5)      # DS^7 = 5 − 3
    (3.0, 5.0, 2.0)
    """
    lo = _losses(loss)
    g = check_grid(grid)
    if g.size != lo.size:
        raise ValueError(f"grid must have one point per loss value ({lo.size}), got {g.size}")
    t = _tau(tau)
    fx = float(g[np.argmax(lo == 0)])
    width = float(down_sensitivity(lo, g, math.floor(2 * t)))
    return fx - width, fx, width


def accuracy_probability(pmf, loss, grid, tau) -> float:
    """P[f(x) ≥ M(x) ≥ f(x) − DS^{2τ}_f(x)] for an output distribution ``pmf`` over the grid — the
    event of Steinke 2023b, Theorems 4 and 5 (with the integer 2τ rounded down: DS^{⌊2τ⌋};
    the range of :func:`accuracy_range`).

    >>> lo = [31, 26, 16, 6, 1, 0]
    >>> accuracy_probability(shifted_inverse_pmf(lo, 1.0, 5), lo, range(6), 5) > 0.5
    True
    """
    p = as_array(pmf, "pmf")
    lo = _losses(loss)
    g = check_grid(grid)
    if not (p.shape == lo.shape == g.shape):
        raise ValueError(f"pmf, loss and grid must have the same length, got {p.shape}, {lo.shape}, {g.shape}")
    low, fx, _ = accuracy_range(lo, g, tau)
    return float(p[(g <= fx) & (g >= low)].sum())


@dataclass(frozen=True, eq=False)
class GridEstimate:
    """An estimate with an exact output distribution ``pmf`` on the grid Y (the shifted inverse
    mechanism's, :func:`shifted_inverse_pmf`, or the binary search's, :func:`binary_search_pmf`),
    summarized like :class:`LaplaceEstimate`: quantiles and the root-mean-square error.
    ``pmf`` must be non-negative with sum 1 (within 1e-9), one value per grid point.

    >>> e = GridEstimate([0, 1, 2, 3], [0.1, 0.2, 0.3, 0.4])
    >>> e.quantile([0.05, 0.3, 0.5]).tolist(), round(e.rmse(2.0), 12)
    ([0.0, 1.0, 2.0], 1.0)
    """

    grid: np.ndarray
    pmf: np.ndarray

    def __post_init__(self):
        g = check_grid(self.grid)
        p = as_array(self.pmf, "pmf", allow_inf=False)
        if p.shape != g.shape:
            raise ValueError(f"pmf must have one value per grid point ({g.size}), got shape {p.shape}")
        if (p < 0).any() or not abs(float(p.sum()) - 1.0) <= 1e-9:
            raise ValueError(f"pmf must be non-negative and sum to 1, got sum {float(p.sum())!r}")
        for name, arr in (("grid", g), ("pmf", p)):
            arr = arr.copy()
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    def quantile(self, p):
        """The p-quantile of the discrete law: the smallest y_j with P[M ≤ y_j] ≥ p, i.e. the
        cumulative sum of ``pmf`` searched for p (the last grid point if rounding keeps the sum
        below p). Vectorised over ``p`` ∈ (0, 1).

        >>> GridEstimate([0, 1, 2], [0.25, 0.5, 0.25]).quantile(0.25)
        0.0
        """
        q = as_array(p, "p")
        if ((q <= 0) | (q >= 1)).any():
            raise ValueError(f"p must lie in (0, 1), got p = {p!r}")
        idx = np.minimum(np.searchsorted(np.cumsum(self.pmf), q), self.grid.size - 1)
        return scalar_out(self.grid[idx])

    def rmse(self, target):
        """Root-mean-square error against ``target``: √(Σ_j pmf_j (y_j − target)²). Vectorised over
        ``target``.

        >>> GridEstimate([0, 2], [0.5, 0.5]).rmse([0.0, 1.0]).tolist()
        [1.4142135623730951, 1.0]
        """
        t = as_array(target, "target", allow_inf=False)
        sq = np.sum(self.pmf * (self.grid - t[..., None]) ** 2, axis=-1)
        return scalar_out(np.sqrt(sq))


# -- naive baselines ------------------------------------------------------------------------------
@dataclass(frozen=True)
class LaplaceEstimate:
    """The output of a Laplace mechanism: center + Laplace(scale), with its exact pdf/cdf and a
    seeded sampler (the naive baselines' estimate distribution)."""

    center: float
    scale: float

    def pdf(self, t):
        z = np.abs(as_array(t, "t") - self.center)
        return scalar_out(np.exp(-z / self.scale) / (2 * self.scale))

    def cdf(self, t):
        return scalar_out(_lap_cdf(as_array(t, "t") - self.center, self.scale))

    def quantile(self, p):
        """The p-quantile: center + scale·log(2p) for p < ½, center − scale·log(2 − 2p) above
        (the inverse of the Laplace CDF). Vectorised over ``p`` ∈ (0, 1).

        >>> LaplaceEstimate(10.0, 2.0).quantile([0.25, 0.5, 0.75]).round(6).tolist()
        [8.613706, 10.0, 11.386294]
        """
        q = as_array(p, "p")
        if ((q <= 0) | (q >= 1)).any():
            raise ValueError(f"p must lie in (0, 1), got p = {p!r}")
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(
                q < 0.5, self.center + self.scale * np.log(2 * q), self.center - self.scale * np.log(2 - 2 * q)
            )
        return scalar_out(out)

    def rmse(self, target):
        """Root-mean-square error against ``target``: √((center − target)² + 2·scale²) (bias² plus
        the Laplace variance 2b²).

        >>> LaplaceEstimate(10.0, 2.0).rmse(7.0)
        4.123105625617661
        """
        t = as_array(target, "target", allow_inf=False)
        return scalar_out(np.sqrt((self.center - t) ** 2 + 2 * self.scale**2))

    def sample(self, rng, size: int = 1) -> np.ndarray:
        return self.center + _rng(rng).laplace(0.0, self.scale, size=_size(size))


def laplace_clipped_max(x, lower, bound, eps) -> LaplaceEstimate:
    """Naive baseline: clip the items into [lower, bound] (a guessed bound) and add Laplace noise.
    The clipped maximum (max(∅) = lower) changes by at most bound − lower when one item is added
    or removed, so Laplace((bound − lower)/ε) is ε-DP (Dwork, McSherry, Nissim & Smith 2006). With
    ``bound`` at the top of the output grid this is the global-sensitivity approach; a bound below
    the true maximum biases the estimate down.

    >>> e = laplace_clipped_max([1, 5, 20], 0, 10, 2.0)
    >>> e.center, e.scale
    (10.0, 5.0)
    """
    xs = _data(x)
    lo = float(as_array(lower, "lower", allow_inf=False))
    hi = float(as_array(bound, "bound", allow_inf=False))
    if hi <= lo:
        raise ValueError(f"bound must be > lower ({lo}), got {bound!r}")
    e = _pos_scalar(eps, "eps")
    center = float(np.clip(xs, lo, hi).max()) if xs.size else lo
    return LaplaceEstimate(center, (hi - lo) / e)


def laplace_clipped_user_sum(totals, bound, eps) -> LaplaceEstimate:
    """Naive baseline for the user-level sum: clip each person's total at ``bound`` (C) and add
    Laplace(C/ε): Σ_u min(S_u, C) changes by at most C when one person is added or removed
    (user-level ε-DP; Dwork et al. 2006).

    >>> e = laplace_clipped_user_sum([10.0, 1.0, 2.0], 5.0, 1.0)
    >>> e.center, e.scale
    (8.0, 5.0)
    """
    t = _totals(totals)
    c = _pos_scalar(bound, "bound")
    e = _pos_scalar(eps, "eps")
    return LaplaceEstimate(float(np.minimum(t, c).sum()), c / e)
