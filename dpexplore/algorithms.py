"""The teaching algorithms under their former single-module name: every name of
:mod:`dpexplore.teaching` (report noisy max, AboveThreshold / Sparse, Thresholdout,
generalization and max-information bounds, shuffle amplification, the inverse-sensitivity
median), re-exported so that ``dpexplore.algorithms.X`` keeps working. New code imports them from
:mod:`dpexplore.teaching` (one module per algorithm there).

:func:`advanced_composition_pure` (deprecated) lives here only.
"""

from __future__ import annotations

from .teaching import *  # noqa: F403 -- the public names, listed in __all__ below
from .teaching import __all__ as _TEACHING_ALL
from .teaching._common import _advanced_or_basic, _solve_eps0  # noqa: F401 -- used by tests
from .teaching.generalization import LOG2E  # noqa: F401 -- a public constant of the old module
from .teaching.thresholdout import _pm1_corr  # noqa: F401 -- used by tests

__all__ = [*_TEACHING_ALL, "advanced_composition_pure"]


def advanced_composition_pure(eps0, k, delta):
    """Deprecated: the better of basic and advanced composition of k ε₀-DP mechanisms at total
    failure δ; use ``min(k * eps0, dpexplore.accounting.composition.advanced(eps0, 0.0, k, delta)[0])``
    (its name collides with :func:`dpexplore.accounting.composition.advanced_pure`, a different theorem).

    The better of basic composition, ``k ε₀`` (Bassi 2019, slide "Composition of several DP
    mechanisms"), and the advanced composition theorem of Dwork, Rothblum & Vadhan (Bassi 2019,
    slide "Advanced adaptive composition"; Dwork & Roth 2014, Theorem 3.20 with per-step δ = 0)::

        ε' = sqrt(2k ln(1/δ)) ε₀ + k ε₀ (e^{ε₀} − 1),        (ε', δ)-DP,

    computed by :func:`dpexplore.accounting.composition.advanced` (rounded up by 4 ulps: the safe side).
    With δ = 0 only basic composition applies.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     a, b = advanced_composition_pure(0.1, 100, 1e-6), advanced_composition_pure(0.1, 100, 0)
    >>> round(a, 6), b
    (6.308231, 10.0)
    """
    import warnings

    warnings.warn(
        "dpexplore.algorithms.advanced_composition_pure is deprecated: use "
        "min(k * eps0, dpexplore.accounting.composition.advanced(eps0, 0.0, k, delta)[0])",
        DeprecationWarning,
        stacklevel=2,
    )
    return _advanced_or_basic(eps0, k, delta)
