"""Entry validation shared by the whole backend.

Every public function validates its arguments here and raises a ``ValueError`` that names the
parameter and shows the offending value ("validate at entry, with the value in
the message"). Values are returned as float arrays so the numerics can broadcast; ``scalar_out``
turns 0-d results back into Python floats.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "as_array",
    "check_nonneg",
    "check_positive",
    "check_delta",
    "check_alpha",
    "check_k",
    "check_probability",
    "check_rng",
    "scalar_out",
]


def _show(x: np.ndarray) -> str:
    """A short rendering of the offending value(s) for an error message."""
    if x.ndim == 0:
        return repr(float(x))
    flat = x.ravel()
    return np.array2string(flat[:6], precision=6) + (" ..." if flat.size > 6 else "")


def as_array(x, name: str, *, allow_inf: bool = True) -> np.ndarray:
    """``x`` as a float64 array; NaN (and inf unless allowed) raise ``ValueError`` naming ``name``."""
    if isinstance(x, (str, bytes)) or x is None:
        raise ValueError(f"{name} must be a number or an array of numbers, got {x!r}")
    try:
        raw = np.asarray(x)
        # complex, datetime, timedelta, text: not real numbers (numpy would cast some of them)
        if raw.dtype.kind in "cmMSUV":
            raise TypeError(f"dtype {raw.dtype}")
        # OverflowError: Python ints beyond the float range (e.g. 10**400)
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{name} must be a number or an array of numbers, got {x!r}") from exc
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not be NaN, got {_show(arr)}")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must be finite, got {_show(arr)}")
    return arr


def check_nonneg(x, name: str = "eps", *, allow_inf: bool = True) -> np.ndarray:
    """Validate ``x >= 0`` (e.g. ε, ρ, μ, Rényi divergences)."""
    arr = as_array(x, name, allow_inf=allow_inf)
    if (arr < 0).any():
        raise ValueError(f"{name} must be >= 0, got {_show(arr[arr < 0])}")
    return arr


def check_positive(x, name: str, *, allow_inf: bool = False) -> np.ndarray:
    """Validate ``x > 0`` (scales, sensitivities, sample sizes)."""
    arr = as_array(x, name, allow_inf=allow_inf)
    if (arr <= 0).any():
        raise ValueError(f"{name} must be > 0, got {_show(arr[arr <= 0])}")
    return arr


def check_positive_scalar(x, name: str) -> float:
    """Validate one finite ``x > 0`` (a budget, a radius) and return it as a float."""
    arr = check_positive(x, name)
    if arr.ndim:
        raise ValueError(f"{name} must be a scalar, got shape {arr.shape}")
    return float(arr)


def check_delta(x, name: str = "delta", *, allow_one: bool = False) -> np.ndarray:
    """Validate δ ∈ [0, 1) (or [0, 1] with ``allow_one``)."""
    arr = as_array(x, name)
    bad = (arr < 0) | ((arr > 1) if allow_one else (arr >= 1))
    if bad.any():
        interval = "[0, 1]" if allow_one else "[0, 1)"
        raise ValueError(f"{name} must lie in {interval}, got {_show(arr[bad])}")
    return arr


def check_probability(x, name: str) -> np.ndarray:
    """Validate a probability in [0, 1] (e.g. a type I error α of a trade-off function)."""
    return check_delta(x, name, allow_one=True)


def check_alpha(x, name: str = "alpha") -> np.ndarray:
    """Validate a Rényi order α > 1 (α = inf is allowed: the max-divergence)."""
    arr = as_array(x, name)
    if (arr <= 1).any():
        raise ValueError(f"Renyi order {name} must be > 1, got {_show(arr[arr <= 1])}")
    return arr


def check_k(k, name: str = "k") -> np.ndarray:
    """Validate a number of compositions: integer-valued and >= 1. Returns an int64 array."""
    if isinstance(k, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer >= 1, got {k!r}")
    if isinstance(k, numbers.Integral) and not isinstance(k, np.generic):
        if k > 2**53:
            raise ValueError(f"{name} must be at most 2**53, got {k!r}")
        if k < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {k!r}")
        arr = np.asarray(int(k), dtype=np.float64)
    else:
        arr = as_array(k, name, allow_inf=False)
    if (arr < 1).any() or (arr != np.floor(arr)).any():
        bad = arr[(arr < 1) | (arr != np.floor(arr))]
        raise ValueError(f"{name} must be an integer >= 1, got {_show(bad)}")
    if (arr > 2**53).any():
        raise ValueError(f"{name} must be at most 2**53, got {_show(arr[arr > 2**53])}")
    return arr.astype(np.int64)


def check_int(x, name: str, minimum: int = 1) -> int:
    """``x`` as an ``int``: a whole number ≥ ``minimum`` (not a bool), else a ValueError naming it.

    >>> check_int(3.0, "n")
    3
    """
    if isinstance(x, bool):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {x!r}")
    arr = as_array(x, name, allow_inf=False)
    if arr.ndim != 0 or arr < minimum or arr != np.floor(arr):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {x!r}")
    return int(arr)


def check_rng(rng, name: str = "rng") -> np.random.Generator:
    """``rng`` itself if it is a ``numpy.random.Generator`` (every simulation takes one explicitly,
    so it is seeded and reproducible), else a ValueError naming it.

    >>> type(check_rng(np.random.default_rng(0))).__name__
    'Generator'
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{name} must be a numpy.random.Generator (e.g. np.random.default_rng(0)), got {rng!r}")
    return rng


def scalar_out(x):
    """Return Python floats for 0-d results and arrays otherwise."""
    x = np.asarray(x)
    if x.ndim == 0:
        return float(x) if x.dtype.kind == "f" else x.item()
    return x
