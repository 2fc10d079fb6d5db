"""The tight profile of k runs of concrete mechanisms: :func:`compose`, :func:`compose_all`,
:func:`compose_epsilon` and the profiles they return.

A mechanism states how it composes (``dpexplore.mechanisms._base._PrivacyMechanism``): in closed
form where it is exactly μ-GDP (√k·μ-GDP) or has the profile of ε-DP randomized response
(:class:`~dpexplore.accounting.composition.OptimalProfile`), else numerically, by the composition it picks
from :class:`_Numerical` (the privacy loss distribution of its losses, :mod:`dpexplore.accounting.pld`).
This module names no mechanism class. Re-exported by :mod:`dpexplore.accounting.composition`.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...accounting import pld as _pld
from ..._numerics import gdp_epsilon_core
from ..._validation import check_delta, check_k, scalar_out
from ..conversions import RDPProfile
from ...mechanisms.subsampled import MaxProfile, RareEventProfile, one_run_among_k
from ..profiles import GaussianDPProfile, PrivacyProfile
from .dpsgd import _dpsgd_rdp_epsilon
from .theorems import OptimalProfile, _gdp_of_parts, _kov_epsilon, _kov_log_delta, optimal


# ------------------------------------------------------------------------------------------------
# tight composition of one mechanism
# ------------------------------------------------------------------------------------------------
class _PureDPPLDProfile(_pld.PLDProfile):
    """The PLD profile of k runs of an eps_max-DP additive mechanism (Laplace, Logistic), capped
    by the KOV profile of k-fold eps_max-DP (Kairouz, Oh & Viswanath 2015, Theorem 3.3): both are
    upper bounds of the true δ, so their minimum is too. The cap only matters where the numerical
    PLD is loose (δ below its truncation/round-off floor, or near k·eps_max).

    >>> from dpexplore.mechanisms import Laplace
    >>> p = compose(Laplace(1.0), 5)
    >>> p.epsilon(1e-6) <= optimal(1.0, 5, 1e-6)
    True
    """

    def __init__(self, pld, eps0: float, k: int, name: str):
        super().__init__(pld, name=name)
        self.eps0, self.k = eps0, k

    def _log_delta(self, eps):
        return np.minimum(
            self.pld._log_delta(eps), _kov_log_delta(*_flat(eps, self.eps0, self.k)).reshape(np.shape(eps))
        )

    def _epsilon(self, delta):
        delta = np.asarray(delta, dtype=np.float64)
        d, e, k = _flat(delta, self.eps0, self.k)
        with np.errstate(divide="ignore"):
            kov = _kov_epsilon(np.log(d), e, k).reshape(delta.shape)
        return np.minimum(self.pld._epsilon(delta), kov)


def _flat(x, eps0, k):
    """Flattened (x, ε₀, k) arrays of x's size for the private KOV kernels."""
    x = np.asarray(x, dtype=np.float64).ravel()
    return x, np.full(x.shape, float(eps0)), np.full(x.shape, int(k), dtype=np.int64)


#: where a single FFT power's round-off term (``DiscretePLD.extra``, added to δ: up to ~1e-11 at
#: 10⁴ runs) exceeds this share of the δ asked, :class:`_RefinedProfile` also composes by
#: tilted products (:func:`dpexplore.accounting.pld.composed_pld_many` with ``tilted=True``), whose round-off
#: stays relative to the tail: Laplace(1), 10⁴ runs, δ 1e-12 gave 5236 (the truth is ~4242)
_NOISE_SHARE = 1e-2


class _RefinedProfile(_pld.PLDProfile):
    """A numerical (PLD) profile whose grid is chosen from the error target at each ε query.

    ``build(n)`` gives the pessimistic profile composed on a grid of n points (never below the
    true δ). ``epsilon(δ)`` refines the grid (n, 4n, 16n, … up to
    :data:`dpexplore.accounting.pld.REFINE_MAX_GRID`) until the ε of two successive grids agree to a quarter
    of max(1e-2·ε, 1e-3) (:func:`dpexplore.accounting.pld.refine_epsilon`), so the ε it returns is within
    ~1 % (or 1e-3) of the true ε and never below it. ``delta(ε)`` is the smallest δ of the grids built so
    far (first the default one). Where the largest grid is reached without that agreement the
    returned ε is still an upper bound, and ``uncertified`` (a set of δ) records it."""

    def __init__(self, build, grid_size: int, name: str, build_tilted=None):
        self._build = build
        self._build_tilted = build_tilted
        self._cache = {}
        self._n = int(grid_size)
        self.uncertified = set()
        first = self._get(self._n)
        self.eps_max = first.eps_max
        self.name = name

    def _get(self, n: int):
        if n not in self._cache:
            self._cache[n] = self._build(n)
        return self._cache[n]

    def epsilon_upper(self, delta):
        """An upper bound of ε(δ) from the grids built so far, without refining (cheap, but not
        held to the accuracy target: for a plot's range, say)."""
        return np.minimum.reduce(
            [
                np.asarray(p._epsilon(np.asarray(delta, dtype=np.float64)), dtype=np.float64)
                for p in self._cache.values()
            ]
        )

    def _eps_on(self, n: int, delta):
        """ε on the grid n: from ``build(n)``, and where that PLD's round-off term (added to δ)
        exceeds 1 % of the smallest δ asked, also from ``build_tilted(n)`` (the smaller of the two:
        both are upper bounds)."""
        fast = np.asarray(self._get(n)._epsilon(delta), dtype=np.float64)
        if self._build_tilted is None:
            return fast
        extra = float(getattr(self._get(n).pld, "extra", 0.0))
        if not extra > _NOISE_SHARE * float(np.min(delta)):
            return fast
        key = ("tilted", n)
        if key not in self._cache:
            self._cache[key] = self._build_tilted(n)
        return np.minimum(fast, np.asarray(self._cache[key]._epsilon(delta), dtype=np.float64))

    @property
    def current(self) -> PrivacyProfile:
        """The profile on the finest grid built so far."""
        return self._get(max(n for n in self._cache if isinstance(n, int)))

    @property
    def pld(self):
        """The discrete PLD on the finest grid built so far."""
        return self.current.pld

    def _log_delta(self, eps):
        # every grid's δ is an upper bound: their minimum is one too, and it is the δ that the
        # ε of :meth:`_epsilon` (the minimum over the grids) answers to
        return np.minimum.reduce([np.asarray(p._log_delta(eps), dtype=np.float64) for p in self._cache.values()])

    def _epsilon(self, delta):
        delta = np.asarray(delta, dtype=np.float64)
        eps, ok, n = _pld.refine_epsilon(lambda m: self._eps_on(m, delta), self._n)
        if not np.all(ok):
            bad = np.atleast_1d(delta)[~np.atleast_1d(ok)]
            self.uncertified.update(float(d) for d in bad)
            _pld.warn_unconverged(self.name, bad)
        return np.minimum(eps, self.eps_max)


# ------------------------------------------------------------------------------------------------
# (compose)
# ------------------------------------------------------------------------------------------------
def compose(mechanism, k, *, grid_size: int | None = None) -> PrivacyProfile:
    """The tight privacy profile of k runs of ``mechanism`` (non-adaptive or adaptive; the
    worst-case pair of every mechanism below is fixed, so the composition theorem is exact):

    * ``Gaussian(σ, Δ)`` — exact: √k Δ/σ-GDP (Dong, Roth & Su 2022, Corollary 3.3; Liu et al. 2022), a
      :class:`~dpexplore.accounting.profiles.GaussianDPProfile`;
    * ``RandomizedResponse(ε)`` — exact: :class:`OptimalProfile` (Kairouz, Oh & Viswanath 2015,
      Theorem 3.3; its privacy loss takes the values ±ε); ``Exponential(ε)`` — the same pure-DP
      worst case (an upper bound for any score function);
    * ``Laplace``, ``Logistic``, ``Subbotin`` — numerical: the k-fold privacy loss distribution
      (:func:`dpexplore.accounting.pld.composed_pld`: pessimistic connect-the-dots discretization, FFT
      power, truncated mass bounded and added), a :class:`~dpexplore.accounting.pld.PLDProfile` whose δ is
      never below the true δ and whose ε exceeds the true ε(δ) by at most k·h (grid spacing h,
      :func:`dpexplore.accounting.pld.composed_pld`); measured: Laplace(1), k = 1000, ε(1e-6) within 1e-5
      relative of dp_accounting's, ~20 ms cold. Without ``grid_size`` the grid is chosen from
      the error target at each ε query (refined until ε is within ~1 % or 1e-3 of the truth:
      :func:`dpexplore.accounting.pld.refine_epsilon`); ``grid_size`` fixes the FFT size instead.

    For the pure-DP additive mechanisms (finite eps_max: Laplace, Logistic) the PLD profile is
    capped by the KOV profile of k-fold eps_max-DP (both are upper bounds, so the minimum is one);
    the cap only acts where the PLD is loose (below its ~1e-15 floor, or near k·eps_max).
    k = 1 returns the mechanism's own exact profile. The composed PLD is computed once per
    (mechanism, k) and cached; mechanism parameters must be scalars.

    >>> from dpexplore.mechanisms import Gaussian, Laplace
    >>> round(compose(Gaussian(10.0), 100).epsilon(1e-5), 6) == round(GaussianDPProfile(1.0).epsilon(1e-5), 6)
    True
    >>> p = compose(Laplace(1.0), 10)
    >>> p.eps_max, p.delta(10.0), 0.04 < p.delta(7.0) < 0.05
    (10.0, 0.0, True)
    """
    kk = check_k(k, "k")
    if kk.ndim != 0:
        raise ValueError(f"k must be a single integer for a profile, got {k!r}")
    k = int(kk)
    try:
        hash(mechanism)
    except TypeError as exc:
        raise ValueError(f"mechanism parameters must be scalars to compose, got {mechanism!r}") from exc
    return _built_by(_compose(mechanism, k, grid_size), ((mechanism, k),), f"compose({mechanism!r}, {k!r})")


def compose_epsilon(mechanism, k, delta):
    """ε(δ) of :func:`compose` (``mechanism``, k) for an array of k (broadcast with ``delta``): the
    same numbers as ``compose(mechanism, k).epsilon(delta)`` one k at a time, vectorized where the
    profile has a closed form —

    * ``Gaussian(σ, Δ)``: ε of √k Δ/σ-GDP (Dong, Roth & Su 2022, Corollary 3.3), the safeguarded
      Newton inverse of :func:`dpexplore.accounting.conversions.gdp_epsilon` (its safe side), also at k = 1;
    * ``RandomizedResponse(ε)``, ``Exponential(ε)``: :func:`optimal` (ε, k, δ) (Kairouz, Oh &
      Viswanath 2015, Theorem 3.3), the function :class:`OptimalProfile` calls;
    * the others: one composed profile per distinct k (cached by :func:`compose`), whose ε is
      never below the true ε(δ) (pure-DP additive mechanisms capped by the KOV bound).

    >>> from dpexplore.mechanisms import Gaussian, Laplace
    >>> e = compose_epsilon(Gaussian(10.0), [1, 100], 1e-5)
    >>> round(float(e[1]), 6) == round(compose(Gaussian(10.0), 100).epsilon(1e-5), 6)
    True
    >>> compose_epsilon(Laplace(1.0), [1, 2], 0.0).tolist()       # pure DP: δ = 0 at k·ε
    [1.0, 2.0]
    """
    kk = check_k(k, "k")
    d = check_delta(delta, "delta")
    try:
        hash(mechanism)
    except TypeError as exc:
        raise ValueError(f"mechanism parameters must be scalars to compose, got {mechanism!r}") from exc
    kk, d = np.broadcast_arrays(kk, d)
    _check_mechanism(mechanism)
    mu = mechanism._gdp_mu()
    if mu is not None:
        return scalar_out(gdp_epsilon_core(np.sqrt(kk.astype(np.float64)) * mu, d))
    eps = mechanism._pure_eps()
    if eps is not None:
        return optimal(eps, kk, d)
    out = np.empty(kk.shape, dtype=np.float64)
    for n in np.unique(kk):
        at = kk == n
        out[at] = np.asarray(compose(mechanism, int(n)).epsilon(d[at]), dtype=np.float64)
    return scalar_out(out)


def _built_by(prof, parts, call):
    """Record on a composed profile what it is made of (its card lists the parts and sums
    their RDP and zCDP) and the call that built it (its repr, so that "Reproduce in Python"
    can show it)."""
    prof._parts = tuple(parts)
    prof._call = call
    return prof


def _pld_above_lower_bound(prof, mechanism, k: int) -> bool:
    """Whether the composed profile's δ(ε) stays above a lower bound on the true δ on a grid of
    ε (one run that saw the record, at an unknown place among k:
    :func:`~dpexplore.mechanisms.subsampled.one_shifted_step_lower_epsilon`'s bound,
    δ_k(ε) ≥ p₀c₁·δ_M(log(γ′k/c₁))). A PLD below it lost mass, and is not an upper bound."""
    q, base = float(mechanism.q), mechanism.mechanism
    if q >= 1.0:
        return True
    p0, log_c1 = one_run_among_k(q, k)
    hi = _dpsgd_rdp_epsilon(float(base.sigma) / float(base.sensitivity), q, k, 1e-12)  # cheap, above
    eps = np.unique(np.concatenate([np.geomspace(1e-6, 1.0, 25), np.linspace(0.0, min(hi, 1e4), 65)]))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        log_g = np.where(eps < 700.0, np.log1p(np.expm1(np.minimum(eps, 700.0)) / p0), eps - np.log(p0))
        arg = log_g + np.log(k) - log_c1
        # (a mechanism whose δ is rounded up, the Gaussian, gives its lower bound on δ here)
        base_lower = getattr(base, "_log_delta_lower", base.profile._log_delta_checked)
        lb = np.log(p0) + log_c1 + np.asarray(base_lower(np.maximum(arg, 0.0)))
        ours = np.asarray(prof._log_delta_checked(eps), dtype=np.float64)
        bad = (arg >= 0.0) & np.isfinite(lb) & (ours < lb - 1e-9 * np.abs(lb) - 1e-12)
    return not bool(np.any(bad))


#: k·q up to which compose() of a Poisson-subsampled mechanism also takes the rare-event bound
#: (:class:`~dpexplore.mechanisms.subsampled.RareEventProfile`; above, its tail C(k, 2)·q² nears
#: the δ asked and the PLD is the tighter)
_RARE_RATE = 1e-4


class _LeastOfProfiles(PrivacyProfile):
    """The least of several upper bounds on one profile: δ(ε) = min_i δ_i(ε) and ε(δ) =
    min_i ε_i(δ), each an upper bound on the truth when every δ_i is."""

    def __init__(self, profiles, name: str):
        self.profiles = list(profiles)
        self.eps_max = min(float(p.eps_max) for p in self.profiles)
        self.name = name

    def _log_delta(self, eps):
        return np.minimum.reduce([np.asarray(p._log_delta_checked(eps), dtype=np.float64) for p in self.profiles])

    def _epsilon(self, delta):
        return np.minimum.reduce([np.asarray(p._epsilon(delta), dtype=np.float64) for p in self.profiles])


def _check_mechanism(mechanism, what: str = "one of dpexplore.mechanisms' mechanisms"):
    """``mechanism`` if it is a mechanism instance (one that states how it composes), else
    ``ValueError``."""
    if isinstance(mechanism, type) or not callable(getattr(mechanism, "_compose_pld", None)):
        raise ValueError(f"mechanism must be {what}, got {mechanism!r}")
    return mechanism


def _compose(mechanism, k: int, grid_size):
    """k runs of ``mechanism``: in closed form where it states one (exactly μ-GDP: √k·μ-GDP;
    the profile of ε-DP randomized response: :class:`OptimalProfile`), else the numerical
    composition it chooses (:meth:`_compose_pld` with the choices of :class:`_Numerical`)."""
    _check_mechanism(mechanism)
    label = mechanism._label()
    mu = mechanism._gdp_mu()
    if mu is not None:
        prof = GaussianDPProfile(np.sqrt(k) * mu)
        prof.name = f"{k}×{label}"
        return prof
    eps = mechanism._pure_eps()
    if eps is not None:
        prof = OptimalProfile(eps, k)
        prof.name = f"{k}×{label}"
        return prof
    return mechanism._compose_pld(k, _Numerical(grid_size, label))


class _Numerical:
    """The numerical compositions a mechanism chooses from in its ``_compose_pld(k, how)``
    (:func:`compose` passes this as ``how``): so each mechanism states its own rule and this
    module names none (and no mechanism module imports this one)."""

    def __init__(self, grid_size, label: str):
        self.grid_size = grid_size
        self.label = label

    def pld(self, pairs) -> PrivacyProfile:
        """The privacy loss distribution of the mechanisms' losses (their ``_pld_losses``),
        [(mechanism, k), …], both directions where one has two (:func:`compose_all`)."""
        return _compose_all(pairs, self.grid_size)

    def pld_power(self, mechanism, k: int) -> PrivacyProfile:
        """The k-th power of one mechanism's privacy loss distribution
        (:func:`dpexplore.accounting.pld.composed_pld`, also by tilted products where its round-off matters),
        on a grid refined to the error target unless ``grid_size`` fixes it; where the loss is
        bounded (finite eps_max) capped by the Kairouz–Oh–Viswanath profile of k-fold
        eps_max-DP (:class:`_PureDPPLDProfile`)."""
        label = self.label

        def profile_of(pld):
            if np.isfinite(float(mechanism.eps_max)):
                return _PureDPPLDProfile(pld, float(mechanism.eps_max), k, name=f"{k}×{label}")
            return _pld.PLDProfile(pld, name=f"{k}×{label}")

        def build(n):
            return profile_of(_pld.composed_pld(mechanism, k, grid_size=n))

        def build_tilted(n):
            return profile_of(_pld.composed_pld_many([(mechanism, k)], grid_size=n, tilted=True))

        if self.grid_size is not None:
            return build(self.grid_size)
        return _RefinedProfile(build, _pld.default_grid_size(k), name=f"{k}×{label}", build_tilted=build_tilted)

    def poisson(self, mechanism, k: int) -> PrivacyProfile:
        """k runs of a Poisson-subsampled mechanism: :meth:`pld` of both directions; with a
        Gaussian base checked against a lower bound on the true δ (where the PLD falls below it,
        the Rényi DP and rare-event bounds answer instead, with an AccuracyWarning); at a tiny
        rate (k·q ≤ :data:`_RARE_RATE`) also bounded by
        :class:`~dpexplore.mechanisms.subsampled.RareEventProfile`."""
        prof = self.pld([(mechanism, k)])
        if k > 1 and mechanism._gaussian_base and not _pld_above_lower_bound(prof, mechanism, k):
            # the PLD lost mass: the other upper bounds answer instead. A check that should
            # not fire: it caught the tilted FFT products losing the rare large losses (σ 0.3,
            # q 1e-5, 100 runs: ε(1e-5) 0.001 where the truth is 1.3465; fixed in
            # :func:`dpexplore.accounting.pld._convolve`, which merges tilts)
            warnings.warn(
                f"compose({mechanism!r}, {k}): the privacy loss distribution's δ(ε) falls "
                "below a lower bound on the true δ; the Rényi DP and rare-event bounds "
                "answer instead",
                _pld.AccuracyWarning,
                stacklevel=5,
            )
            orders = np.concatenate([np.linspace(1.05, 10.95, 100), np.arange(11.0, 64.0), 2.0 ** np.arange(6, 11)])
            rdp = RDPProfile(orders, k * np.asarray(mechanism.rdp(orders), dtype=np.float64))
            return _LeastOfProfiles([rdp, RareEventProfile(mechanism.mechanism, mechanism.q, k)], name=prof.name)
        if k > 1 and k * mechanism.q <= _RARE_RATE:
            # the PLD's error k·h swamps a tiny rate's ε (σ 0.05, q 1e-17, 10⁶ runs, δ 1e-12:
            # 9.9e6 where the truth is 185.52): the rare-event bound holds it at the truth
            rare = RareEventProfile(mechanism.mechanism, mechanism.q, k)
            prof = _LeastOfProfiles([prof, rare], name=prof.name)
        return prof


# ------------------------------------------------------------------------------------------------
# mixed compositions
# ------------------------------------------------------------------------------------------------
def _check_items(items):
    try:
        pairs = [tuple(it) for it in items]
    except TypeError as exc:
        raise ValueError(f"items must be a sequence of (mechanism, k) pairs, got {items!r}") from exc
    if not pairs or any(len(p) != 2 for p in pairs):
        raise ValueError(f"items must be a non-empty sequence of (mechanism, k) pairs, got {items!r}")
    out = []
    for m, k in pairs:
        kk = check_k(k, "k")
        if kk.ndim != 0:
            raise ValueError(f"k must be a single integer in each pair, got {k!r}")
        try:
            hash(m)
        except TypeError as exc:
            raise ValueError(f"mechanism parameters must be scalars to compose, got {m!r}") from exc
        _check_mechanism(m, "one of dpexplore.mechanisms' mechanisms or a subsampled one")
        out.append((m, int(kk)))
    return out


def compose_all(items, *, grid_size: int | None = None) -> PrivacyProfile:
    """The tight privacy profile of a mixed composition: ``items`` = [(mechanism, k), …], k runs
    of each (any order, adaptively chosen or not: each mechanism's worst-case pair is fixed).

    * only Gaussians: exact, √(Σ k_i (Δ_i/σ_i)²)-GDP (Dong, Roth & Su 2022, Corollary 3.3);
    * otherwise the privacy loss distribution of the sum of all losses (Koskela, Jälkö & Honkela
      2020; Doroshenko et al. 2022 connect-the-dots, :func:`dpexplore.accounting.pld.composed_pld_many`):
      δ never below the truth, ε̂(δ) ≤ ε(δ) + (Σk_i)·h. Randomized response and the exponential
      mechanism enter as their worst case, the ±ε loss of ε-DP randomized response (Kairouz, Oh &
      Viswanath 2015). With a Poisson-subsampled mechanism (:func:`dpexplore.mechanisms.subsample`)
      both directions of the add/remove relation are composed and the worse is taken (Zhu, Dong
      & Wang 2022): δ(ε) = max(δ_remove(ε), δ_add(ε)).

    >>> from dpexplore.mechanisms import Gaussian, Laplace
    >>> round(compose_all([(Gaussian(1.0), 3), (Gaussian(2.0), 4)]).mu, 12)   # √(3 + 4/4)
    2.0
    >>> p = compose_all([(Laplace(1.0), 2), (Gaussian(4.0), 10)])
    >>> 2.0 < p.epsilon(1e-6) < 6.0
    True
    """
    pairs = _check_items(items)
    call = "compose_all([" + ", ".join(f"({m!r}, {k!r})" for m, k in pairs) + "])"
    return _built_by(_compose_all(pairs, grid_size), pairs, call)


def _compose_all(pairs, grid_size):
    mus = [m._gdp_mu() for m, _ in pairs]
    if all(mu is not None for mu in mus):  # exactly GDP: √(Σ k_i μ_i²)-GDP, rounded upward
        prof = GaussianDPProfile(_gdp_of_parts(mus, [k for _, k in pairs]))
        prof.name = " + ".join(f"{k}×{m._label()}" for m, k in pairs)
        return prof
    label = " + ".join(f"{k}×{m._label()}" for m, k in pairs)
    losses = [(m._pld_losses(), k) for m, k in pairs]
    # with a Poisson-subsampled run, both directions of the add/remove relation
    directions = ("remove", "add") if any(len(ls) == 2 for ls, _ in losses) else ("remove",)
    profiles = []
    for direction in directions:
        items = [(ls[0] if direction == "remove" else ls[-1], k) for ls, k in losses]

        def build(n, items=items, direction=direction):
            return _pld.PLDProfile(_pld.composed_pld_many(items, grid_size=n), name=f"{label} ({direction})")

        if grid_size is not None:
            profiles.append(build(grid_size))
        else:
            n0 = _pld.refine_start(items)
            profiles.append(_RefinedProfile(build, n0, name=f"{label} ({direction})"))
    if len(profiles) == 1:
        profiles[0].name = label
        return profiles[0]
    if grid_size is None:
        return _Directions(profiles, name=label)
    return MaxProfile(profiles, name=label)


class _Directions(MaxProfile):
    """The remove and add directions of a composition with Poisson-subsampled runs, each a
    :class:`_RefinedProfile`: ε(δ) is the larger of the two. The add direction is usually far
    below (DP-SGD: 5.6 against 6.19 at σ 1, q 0.01, 10⁴ steps), so its ε is first read off the
    grids it has (an upper bound, without refining); only where that exceeds the remove
    direction's refined ε is it refined as well — as :func:`dpsgd_epsilon` does. Where it does
    not, the larger is the remove direction's ε, within the target of the truth (the true
    maximum is at least the remove direction's true ε), and the add direction's grid need not
    converge (σ 0.15, q 2e-7, 52205 steps, δ 8.9e-4 warned that it had not, for an ε it did not
    set)."""

    def _epsilon(self, delta):
        remove, add = self.profiles
        d = np.atleast_1d(np.asarray(delta, dtype=np.float64))
        e_rem = np.atleast_1d(np.asarray(remove._epsilon(d), dtype=np.float64))
        e_add = np.atleast_1d(np.asarray(add.epsilon_upper(d), dtype=np.float64))
        need = e_add > e_rem
        if np.any(need):
            e_add[need] = np.minimum(e_add[need], np.asarray(add._epsilon(d[need]), dtype=np.float64))
        out = np.maximum(e_rem, e_add)
        return out.reshape(np.shape(delta)) if np.ndim(delta) else out[0]
