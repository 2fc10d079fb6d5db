"""Amplification by shuffling (Canonne 2022, "Privacy Doona", eq. (1); Feldman, McMillan & Talwar
2021)."""

from __future__ import annotations

import numpy as np

from .._validation import check_nonneg, check_positive, scalar_out
from ._common import _delta_open

__all__ = ["shuffle_amplification", "shuffle_amplification_valid", "shuffle_amplification_min_n"]


def shuffle_amplification_min_n(eps_local, delta):
    """The fewest users for which the condition of FMT21's closed-form bound holds:
    n_min = 16 log(4/δ) e^{ε_L}, i.e. ε_L ≤ ln(n / (16 ln(4/δ))) ⇔ n ≥ n_min (Feldman, McMillan &
    Talwar 2021, Theorem 3.1, with the log(4/δ) of the authors' reference implementation
    apple/ml-shuffling-amplification; :func:`shuffle_amplification_valid` tests the same condition
    in log form). Vectorized over ``eps_local`` and ``delta``; e^{ε_L} overflowing gives inf.

    >>> round(shuffle_amplification_min_n(1.0, 1e-6), 4)
    661.1646
    >>> shuffle_amplification_min_n(1.0, 0.0)
    Traceback (most recent call last):
    ...
    ValueError: delta must lie in (0, 1), got 0.0
    """
    e = check_nonneg(eps_local, "eps_local")
    d = _delta_open(delta)
    with np.errstate(over="ignore"):
        return scalar_out(16.0 * np.log(4.0 / d) * np.exp(e))


def shuffle_amplification_valid(eps_local, n, delta):
    """Whether the condition of FMT21's closed-form bound holds: ε_L ≤ ln(n / (16 ln(4/δ)))
    (Feldman, McMillan & Talwar 2021, Theorem 3.1, with the log(4/δ) used by the authors' reference
    implementation apple/ml-shuffling-amplification — the stricter of the versions in
    circulation; Canonne 2022 states it loosely as n ≫ e^{ε_L} log(1/δ)).

    >>> shuffle_amplification_valid(1.0, 10000, 1e-6), shuffle_amplification_valid(4.0, 10000, 1e-6)
    (True, False)
    """
    e = check_nonneg(eps_local, "eps_local")
    nn = check_positive(n, "n")
    d = _delta_open(delta)
    with np.errstate(divide="ignore", over="ignore"):
        bound = np.log(nn / (16.0 * np.log(4.0 / d)))
    return scalar_out(np.asarray(e <= bound))


def shuffle_amplification(eps_local, n, delta, *, strict=False):
    """Central ε after shuffling the messages of n users of an ε_L-LDP randomizer (Canonne 2022, "Privacy
    Doona", eq. (1); Feldman, McMillan & Talwar 2021)::

        ε = min(ε_L, log(1 + 16 (e^{ε_L} − 1)/(e^{ε_L} + 1) · sqrt(e^{ε_L} log(4/δ) / n))),

    an (ε, δ)-DP guarantee valid when ε_L ≤ ln(n/(16 ln(4/δ))) (:func:`shuffle_amplification_valid`;
    the factor 16 of Canonne 2022, eq. (1) absorbs the 8√(·)/√n + 8e^{ε_L}/n terms of the theorem of
    Feldman, McMillan & Talwar 2021 under that condition; Canonne 2022, eq. (1) is ≥ 1.37× their
    refined closed form there, checked in the tests).
    Where the condition fails the result is ε_L (shuffling is post-processing of ε_L-DP reports,
    so it never hurts), or a ValueError naming ``n`` with ``strict=True``. Closed form.

    >>> round(shuffle_amplification(1.0, 10000, 1e-6), 6)
    0.388861
    >>> shuffle_amplification(8.0, 10000, 1e-6)     # condition fails: no amplification
    8.0
    """
    e = check_nonneg(eps_local, "eps_local")
    nn = check_positive(n, "n")
    d = _delta_open(delta)
    e, nn, d = np.broadcast_arrays(e, nn, d)
    valid = np.asarray(shuffle_amplification_valid(e, nn, d), dtype=bool)
    if strict and not valid.all():
        raise ValueError(
            f"n too small for amplification by shuffling: need eps_local <= ln(n / (16 ln(2/delta))), "
            f"got n={n!r}, eps_local={eps_local!r}, delta={delta!r}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        ee = np.where(valid, e, 0.0)
        amp = np.log1p(16.0 * np.tanh(ee / 2.0) * np.exp(ee / 2.0) * np.sqrt(np.log(4.0 / d) / nn))
    return scalar_out(np.where(valid, np.minimum(amp, e), e))
