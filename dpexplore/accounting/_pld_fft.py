"""The composition engine of :mod:`dpexplore.accounting.pld`: k-fold and mixed compositions of discrete
privacy loss distributions by FFT — one FFT power for one mechanism (:func:`_composed`, its window
from Chernoff bounds), and for mixed compositions repeated squaring with exponentially tilted
products, tails cut pessimistically and grids coarsened by connect-the-dots as the runs add up
(:func:`_power`, :func:`_convolve`; Koskela, Jälkö & Honkela 2020). Every step only raises δ. The
grids themselves are chosen in :mod:`dpexplore.accounting.pld`, which re-exports every name here."""

from __future__ import annotations

import functools

import numpy as np
from scipy import fft as sp_fft

from ._pld_dist import DiscretePLD
from ._pld_grid import _SPLIT_MASS, _cell_masses, _head_cut, _loss_range, _single_pld

#: mass allowed outside the composition window on each side (bounded and added to δ)
TAIL_TOL = 1e-18
_COARSE_CELLS = 1024
_LAMBDAS = np.logspace(-4.0, 4.0, 65)


def _log_mgf(logp, losses, lam):
    """log E[e^{λL}] over a finite discrete distribution, for each λ in ``lam`` (any sign)."""
    keep = np.isfinite(logp)
    logp, losses = logp[keep], losses[keep]
    if logp.size == 0:
        return np.full(lam.shape, -np.inf)
    z = logp[None, :] + lam[:, None] * losses[None, :]
    m = z.max(axis=1)
    return m + np.log(np.exp(z - m[:, None]).sum(axis=1))


def _upper_tail_bound(w, losses, k, top, blocks=1024):
    """Chernoff bound min_λ e^{−λ·top} (Σ_i w_i e^{λ ℓ_i})^k on the k-fold mass at or above
    ``top``, with the masses first merged into ≤ ``blocks`` blocks placed at each block's largest
    loss (which can only increase the bound)."""
    s = max(1, -(-w.size // blocks))
    pad = (-w.size) % s
    wb = np.concatenate([w, np.zeros(pad)]).reshape(-1, s).sum(axis=1)
    lb = np.concatenate([losses, np.full(pad, losses[-1])]).reshape(-1, s).max(axis=1)
    with np.errstate(divide="ignore"):
        logw = np.log(wb)
    klog = _log_mgf(logw, lb, _LAMBDAS)
    return float(np.exp(np.min(k * klog - _LAMBDAS * top)))


@functools.lru_cache(maxsize=64)
def _coarse_mgf(mechanism):
    """log-MGFs of a coarse discretization (rounded up, and rounded down) of one mechanism's loss,
    on the λ grid; used to choose composition windows."""
    lo, hi = _loss_range(mechanism)
    x = np.linspace(lo, hi, _COARSE_CELLS + 1)
    p = _cell_masses(mechanism, x)[0]
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    return _log_mgf(logp, x[1:], _LAMBDAS), _log_mgf(logp, x[:-1], -_LAMBDAS), lo, hi


def _window(mechanism, k: int):
    """Chernoff window [A, B] holding all but TAIL_TOL of the k-fold loss on each side, from a
    coarse discretization (rounded up for the upper end, down for the lower end)."""
    ku, kd, lo, hi = _coarse_mgf(mechanism)
    log_tol = np.log(TAIL_TOL)
    b = np.min((k * ku - log_tol) / _LAMBDAS)
    a = np.max((log_tol - k * kd) / _LAMBDAS)
    return max(a, k * lo), min(b, k * hi), lo, hi


@functools.lru_cache(maxsize=48)
def _composed(mechanism, k: int, grid_size: int) -> DiscretePLD:
    a, b, lo, hi = _window(mechanism, k)
    n = grid_size
    h = max(b - a, hi - lo) / (n - 8)
    if 4 * k + 8 < n and np.isfinite(hi - lo):
        # if a slightly coarser grid holds the whole k-fold support, take it: no wrap-around
        h_all = k * (hi - lo) / (n - 4 * k - 8)
        if h_all <= 1.25 * h:
            h = h_all
    em = float(mechanism.eps_max)
    if np.isfinite(em) and em > 0:
        # put eps_max on the grid: the atom there (Laplace) stays exact, and δ(k·eps_max) = 0
        h = em / np.ceil(em / h)
    single = _single_pld(mechanism, h)
    w = single.pmf
    if k == 1:
        return DiscretePLD(h, single.offset, w, single.inf_mass, eps_max=single.eps_max)
    if w.size > n:  # cannot happen by the choice of h, kept as a guard
        raise RuntimeError("single PLD wider than the FFT window")
    lo_idx = k * single.offset  # index of the smallest possible k-fold loss
    hi_idx = k * (single.offset + w.size - 1)
    a_idx = max(int(np.floor(a / h)), lo_idx)
    extra = 0.0
    if hi_idx - lo_idx + 1 <= n:
        a_idx = lo_idx  # the whole support fits: no wrap-around at all
    else:
        a_idx = min(a_idx, hi_idx - n + 1)
        # Chernoff bound on the mass at or above index a_idx + n (wraps to the bottom: add it)
        top = (a_idx + n) * h
        extra += _upper_tail_bound(w, single.losses, k, top)
    spec = sp_fft.rfft(w, n)
    spec = _int_power(spec, k)
    raw = sp_fft.irfft(spec, n)
    # per-bin round-off: at least one ulp of the largest bin, or the largest negative excursion
    noise = max(-float(raw.min()), float(np.finfo(float).eps) * float(raw.max()))
    extra += n * noise
    # position j of the cyclic result holds index lo_idx + j (mod n); map to [a_idx, a_idx + n)
    shift = (a_idx - lo_idx) % n
    pmf = np.roll(np.maximum(raw, 0.0), -shift)
    inf_mass = -np.expm1(k * np.log1p(-single.inf_mass)) if single.inf_mass > 0 else 0.0
    return DiscretePLD(h, a_idx, pmf, inf_mass, extra, eps_max=k * single.eps_max)


#: points of the provisional fine single-mechanism PLD whose moments place a mixed composition's window
_PROBE_CELLS = 2**13
#: most points of one mechanism's PLD in a mixed composition (its grid is coarsened to fit)
_SINGLE_CELLS = 2**18


@functools.lru_cache(maxsize=64)
def _probe_moments(mechanism):
    """(mean, variance, lo, hi) of the loss of one mechanism, from a fine connect-the-dots PLD on
    the kept loss range [lo, hi]. Used to place windows only (a subsampled mechanism's loss lives
    within ~q of 0, far narrower than its range): every mass left outside a window is bounded from
    the PLDs actually used."""
    lo, hi = _loss_range(mechanism)
    # a loss model's long tails (a subsampled mechanism's) on 16 times coarser cells: the
    # variance moves by ~1e-9 relative, and a quarter of the points are evaluated
    d = _single_pld(mechanism, (hi - lo) / _PROBE_CELLS, 16 if hasattr(mechanism, "_loss_tails") else 1)
    p = d.pmf / d.pmf.sum()
    mean = _dot(p, d.losses)
    dev = d.losses - mean
    var = _dot(p, dev * dev)
    return mean, var, lo, hi


#: tail mass cut after each convolution of a mixed composition (below → the lowest kept loss,
#: above → +∞: both only raise δ); at most 2·(log₂ k + 1) cuts per mechanism
_TRUNC_TAIL = 1e-16


def _truncate(offset: int, pmf, inf_mass: float, tau: float = _TRUNC_TAIL):
    """Cut the tails of a PLD pessimistically: the lowest cells holding ≤ τ of mass move up to the
    lowest kept cell, the highest cells holding ≤ τ go to +∞ (δ can only grow, by ≤ τ)."""
    i, low = _head_cut(pmf, tau)
    if 0 < i < pmf.size:
        pmf = pmf[i:].copy()
        pmf[0] += low
        offset += i
    j, high = _head_cut(pmf, tau, from_end=True)
    if 0 < j < pmf.size:
        inf_mass = float(inf_mass + high)
        pmf = pmf[: pmf.size - j]
    return offset, pmf, inf_mass


#: most points of an FFT product in a mixed composition: past it both factors move to a grid twice
#: as coarse (:func:`_coarsen`)
_MAX_CONV = 2**20


def _coarsen(part):
    """A PLD (h, offset, pmf, inf_mass, extra) on the grid 2h by connect-the-dots (Doroshenko et
    al. 2022, Algorithm 1, applied to a discrete PLD): the mass p at an odd index i (loss ℓ = ih,
    halfway between the coarse points ℓ − h and ℓ + h) is split as p/(1 + e^{−h}) at ℓ + h and
    p·e^{−h}/(1 + e^{−h}) at ℓ − h, which keeps both the P-mass and E[e^{−L}] (the Q-mass). That
    is a mean-preserving spread of X = e^{−L}; δ(ε) = E[(1 − e^{ε}X)₊] is convex in X (and in each
    factor of a composition), so δ can only grow (Jensen), and by second-order amounts only:
    ~f(ε)·h²/2 for the density f of the final loss at ε, against up to h·f(ε)·… for rounding up."""
    h, off, pmf, inf_mass, extra = part
    if pmf.size == 0:
        return 2.0 * h, int(-(-off // 2)), pmf, inf_mass, extra
    if off % 2:  # start on an even index: prepend a zero
        off -= 1
        pmf = np.concatenate([[0.0], pmf])
    if pmf.size % 2 == 0:  # end on an even index
        pmf = np.concatenate([pmf, [0.0]])
    even, odd = pmf[0::2], pmf[1::2]  # even: sizes m + 1, odd: m
    up = 1.0 / (1.0 + np.exp(-h))
    out = even.copy()
    out[1:] += up * odd
    out[:-1] += (1.0 - up) * odd
    return 2.0 * h, off // 2, out, inf_mass, extra


#: exponential tilt of the FFT products: masses are convolved as p(ℓ)·e^{λℓ}, so the upper tail,
#: where δ lives, stays far above the FFT's round-off (which is relative to the largest value).
#: λ = min(3, max(1, 4/sd)) for the standard deviation sd of the product's loss: λ·sd ≤ 4 keeps
#: the tilted peak within 4 sd above the mean, so what the round-off hides lies below the mean
#: (far below any ε of interest), and λ = 3 lifts the thin upper tail of a subsampled
#: mechanism's first products (λ = 1 let round-off pad them to twice their true width)
_TILT_MAX = 3.0


#: zero padding of every FFT product beyond its support (a longer transform: without it the
#: round-off of a fixed-size-subsampled Laplace composition left δ(k·ε) at 4e-22 instead of 0)
_GUARD = 64


def _dot(a, b) -> float:
    """Σ a_i b_i without BLAS (np.dot hands long vectors to OpenBLAS threads, which then spin on
    the other core: twice the CPU time of a DP-SGD composition for the same wall time)."""
    return float(np.einsum("i,i->", a, b))


def _part_var(part) -> float:
    """The loss variance of a part (h, offset, pmf, …) (0 for an empty one)."""
    h, _, pmf, _, _ = part
    tot = float(pmf.sum())
    if tot <= 0.0:
        return 0.0
    idx = np.arange(pmf.size, dtype=np.float64)
    mean = _dot(pmf, idx) / tot
    d = idx - mean
    return h * h * max(_dot(pmf, d * d) / tot, 0.0)


def _tilt_for(a, b) -> float:
    """The tilt λ of the product of the parts ``a`` and ``b`` (see ``_TILT_MAX``)."""
    var = 2.0 * _part_var(a) if a is b else _part_var(a) + _part_var(b)
    return _tilt_of_var(var)


def _tilt_of_var(var: float) -> float:
    """λ = min(3, max(1, 4/sd)) for a product whose loss has variance ``var`` (see ``_TILT_MAX``)."""
    sd = np.sqrt(var)
    return float(min(_TILT_MAX, max(1.0, 4.0 / sd))) if sd > 0 else _TILT_MAX


def _exp_ramp(c0: float, step: float, n: int):
    """e^{c0 + step·i} for i = 0 … n − 1, as the outer product of e^{step·j} (j < b) and
    e^{c0 + step·b·m}: 2√n exponentials and one product per entry, within 2 ulps of the direct
    values (the arrays are long; an exponential costs ~7 products). |step|·b ≤ 8, so no factor
    overflows where the direct value does not."""
    b = int(min(512, 8.0 / abs(step))) if step else 512
    if n <= 4096 or b < 32:
        return np.exp(c0 + step * np.arange(n))
    rows = -(-n // b)
    inner = np.exp(step * np.arange(b))
    outer = np.exp(c0 + (step * b) * np.arange(rows))
    return np.multiply.outer(outer, inner).ravel()[:n]


def _tilted(p, offset: int, h: float, lam: float):
    """(t, log c) with t = p·e^{λℓ}/c, ℓ = h·(offset + i), scaled so that max t = 1."""
    span = lam * h * (p.size - 1)
    if span < 600.0:  # e^{−span} stays a normal float: no logarithms needed
        w = _exp_ramp(-span, lam * h, p.size)
        t = p * w
        m = float(t.max())
        if m > 0.0:
            return t / m, np.log(m) + span + lam * h * offset
    with np.errstate(divide="ignore"):
        lt = np.log(p) + lam * h * (offset + np.arange(p.size))
    m = float(lt.max())
    return np.exp(lt - m), m


def _convolve(a, b, tau: float = _TRUNC_TAIL, var: float | None = None):
    """The PLD of the sum of two independent losses, (h, offset, pmf, inf_mass, extra) each, by
    FFT; the finer factor is first coarsened to the other's grid, and both are coarsened while
    the product would exceed 2²² points.

    The factors are tilted by e^{λℓ} before the FFT (the convolution of tilted masses is the
    tilted convolution, exactly), which keeps the upper tail, where δ lives, far above the FFT's
    round-off (relative to the largest tilted value). Each value of the product has a round-off
    bound, 10·u·log₂N·‖ã‖₂‖b̃‖₂ in tilted units, so e^{−λℓ} times that untilted: large below the
    tilted peak. Where the tilted product does not resolve a value below its peak (one under its
    bound: the lower tail, or a valley between the bulk and a heavy upper tail), more products
    are taken — untilted, and tilts in between — and each value comes from the product with the
    smallest bound there (:func:`_merged_products`). The lower tail's values under their bound
    are set to 0 and the mass they lack moves up to the lowest resolved loss (δ only rises);
    above it every positive value is kept (negative round-off is set to 0, so the kept values
    lean to the safe side). Where a few cells hold almost all of both factors (a subsampled
    mechanism at a tiny rate: the bulk in one cell), those cells are convolved directly and only
    the rest by FFT (:func:`_head_product`), so the round-off is relative to the rest. The
    round-off of the kept values is not bounded rigorously, as in dp_accounting.

    (The tilted product alone once set such a valley to 0 and moved its mass to the bottom:
    σ 0.3, q 1e-5, 2 steps gave δ(0.5) = 2.1e-8 against the true 5.8e-7, and 100 steps ε 0.001
    against 1.3465 at δ 1e-5; zeroing the values under their bound between resolved ones still
    lost 3e-6 of δ at σ 0.05, q 1e-9, 1000 steps, δ 1e-12, where values sit at the bound.)
    ``var``: the product's loss variance where the caller knows it (it sets the tilt only).
    """
    while a[0] < b[0] * (1 - 1e-12):
        a = _coarsen(a)
    while b[0] < a[0] * (1 - 1e-12):
        b = _coarsen(b)
    while a[2].size + b[2].size - 1 > _MAX_CONV:
        a, b = _coarsen(a), _coarsen(b)
    h, oa, pa, ia, ea = a
    _, ob, pb, ib, eb = b
    same = pa is pb and oa == ob  # a square (repeated squaring): one forward FFT
    lam = _tilt_for(a, b) if var is None else _tilt_of_var(var)
    inf_mass = float(-np.expm1(np.log1p(-min(ia, 1.0)) + np.log1p(-min(ib, 1.0)))) if max(ia, ib) < 1 else 1.0
    ha = _narrow_head(pa)
    hb = ha if same else _narrow_head(pb)
    if ha is not None and hb is not None:
        # a few cells hold almost all of both factors (a subsampled mechanism at a tiny rate: the
        # bulk in one cell, the rare large losses 1e-10 below it): those cells are convolved
        # directly, and only the rest of each factor by FFT, whose round-off is then relative to
        # the rest (a valley 1e-16 below both the bulk and the large losses is lost to every
        # tilt of the whole: σ 0.1, q 1e-10, 2 steps lost 7 % of the mass at losses 0.5–5, and
        # at 10⁵ steps δ(0.1) was 0.14 % below a lower bound)
        off, pmf = _head_product(pa, oa, pb, ob, ha, hb, h, lam, tau, same)
    else:
        off, pmf = _fft_product(pa, oa, pb, ob, h, lam, tau, same, 1.0 - inf_mass)
    missing = (1.0 - inf_mass) - float(pmf.sum())
    if missing > 0:
        pmf[0] += missing  # the round-off points' mass, at the lowest kept loss
    off, pmf, inf_mass = _truncate(off, pmf, inf_mass, tau)
    return h, off, pmf, inf_mass, ea + eb


#: a factor with at most _HEAD_CELLS cells of at least _HEAD_FLOOR times its largest one is
#: convolved cell by cell there (:func:`_head_product`)
_HEAD_CELLS = 16
_HEAD_FLOOR = 1e-6


def _narrow_head(p):
    """The indices of the cells of ``p`` holding at least _HEAD_FLOOR of its largest value, if
    there are at most _HEAD_CELLS of them and more cells besides, else None."""
    if p.size <= _HEAD_CELLS:
        return None
    top = float(p.max())
    if not top > 0.0:
        return None
    idx = np.flatnonzero(p >= _HEAD_FLOOR * top)
    return idx if idx.size <= _HEAD_CELLS else None


def _head_product(pa, oa, pb, ob, ha, hb, h: float, lam: float, tau: float, same: bool):
    """(offset, pmf) of pa ∗ pb as head_a ∗ pb + rest_a ∗ head_b, direct (one shifted copy per
    head cell: exact to rounding, with no cancellation), + rest_a ∗ rest_b (:func:`_fft_product`)."""
    out = np.zeros(pa.size + pb.size - 1)
    ra = pa.copy()
    ra[ha] = 0.0
    if same:
        rb = ra
    else:
        rb = pb.copy()
        rb[hb] = 0.0
    for j in ha:
        out[j : j + pb.size] += pa[j] * pb
    for j in hb:
        out[j : j + ra.size] += pb[j] * ra
    mass = float(ra.sum()) * float(rb.sum())
    if mass > 0.0:
        roff, rest = _fft_product(ra, oa, rb, ob, h, lam, tau, same, mass)
        i = roff - (oa + ob)
        out[i : i + rest.size] += rest
    return oa + ob, out


def _fft_product(pa, oa, pb, ob, h: float, lam: float, tau: float, same: bool, mass: float):
    """(offset, pmf) of pa ∗ pb (of total mass ``mass``) by tilted FFT products (see
    :func:`_convolve`): pmf starts at the first resolved loss, which takes the lower tail's mass."""
    size = pa.size + pb.size - 1
    n = sp_fft.next_fast_len(size + _GUARD, real=True)
    raw, log_c, log_thr = _tilted_product(pa, oa, pb, ob, h, lam, n, same)
    step = lam * h
    above = raw > np.exp(log_thr)
    i0 = int(np.argmax(above))
    resolved = above[i0 : int(np.argmax(raw))].all()
    if lam > 0.0 and (not resolved or mass - _untilt_sum(raw, log_c, step, i0) > max(tau, 1e-12 * mass)):
        # the tilted product hides mass below its peak: merge it with an untilted product and
        # the tilts in between that resolve what both leave under their bounds
        prods = [(lam, raw, log_c, log_thr), (0.0,) + _tilted_product(pa, oa, pb, ob, h, 0.0, n, same)]
        i0, pmf = _merged_products(
            prods,
            size,
            h,
            tau,
            lambda t: _tilted_product(pa, oa, pb, ob, h, t, n, same),
            (pa, oa) if same else (pa, oa, pb, ob),
            n,
        )
        # the products' round-off can make the whole exceed its mass: the lowest losses (the
        # bulk, far below any ε) give up the excess; the upper tail, where δ lives, stays
        excess = float(pmf.sum()) - mass
        if excess > 0:
            pmf = _shed(pmf, excess)
    else:
        pmf = np.maximum(raw[i0:], 0.0) * _exp_ramp(log_c - step * i0, -step, size - i0)
    missing = mass - float(pmf.sum())
    if missing > 0:
        pmf[0] += missing  # the lower tail's mass, at the lowest kept loss
    return oa + ob + i0, pmf


def _untilt_sum(raw, log_c: float, step: float, i0: int) -> float:
    """Σ_{i ≥ i0} max(raw_i, 0)·e^{log_c − step·i}: the untilted mass a tilted product keeps."""
    return _dot(np.maximum(raw[i0:], 0.0), _exp_ramp(log_c - step * i0, -step, raw.size - i0))


def _tilted_product(pa, oa, pb, ob, h: float, lam: float, n: int, same: bool):
    """(raw, log c, log thr): the convolution of two pmfs by one FFT of size n, tilted by e^{λℓ}
    (see :func:`_convolve`): raw[i]·e^{log c − λh·i} is the mass at loss (oa + ob + i)·h, and
    thr the round-off bound of raw (relative to its largest value, 1)."""
    size = pa.size + pb.size - 1
    ta, ma = _tilted(pa, oa, h, lam)
    tb, mb = (ta, ma) if same else _tilted(pb, ob, h, lam)
    fa = sp_fft.rfft(ta, n)
    raw = sp_fft.irfft(fa * (fa if same else sp_fft.rfft(tb, n)), n)[:size]
    norm_a = _dot(ta, ta)
    thr = _roundoff(n) * float(np.sqrt(norm_a * (norm_a if same else _dot(tb, tb))))
    return raw, ma + mb - lam * h * (oa + ob), float(np.log(thr))


def _roundoff(n: int) -> float:
    """10·u·log₂N: the round-off bound of an FFT product of N points per unit of ‖ã‖₂‖b̃‖₂."""
    return 10.0 * np.finfo(float).eps * np.log2(max(n, 2))


#: most tilted products one convolution may merge (:func:`_merged_products`)
_MAX_TILTS = 4
#: the tilts :func:`_merged_products` chooses from, relative to the largest (_TILT_MAX or less)
_TILT_GRID = np.geomspace(1e-4, 1.0, 17)


def _envelope(prods, size: int, h: float):
    """[(j, s, e)]: the index ranges [s, e) on which product j of ``prods`` ((λ, raw, log c,
    log thr) each) has the smallest round-off bound, log thr + log c − λh·i in untilted units
    (lines in i: their lower envelope, walked from i = 0 towards larger λ)."""
    a = [p[3] + p[2] for p in prods]
    cur = min(range(len(prods)), key=lambda j: (a[j], prods[j][0]))
    segs, i = [], 0
    while True:
        cross, nxt = size, None
        for j, p in enumerate(prods):
            if p[0] > prods[cur][0]:
                x = max(int(np.ceil((a[j] - a[cur]) / ((p[0] - prods[cur][0]) * h))), i + 1)
                if x < cross:
                    cross, nxt = x, j
        segs.append((cur, i, cross))
        if nxt is None or cross >= size:
            return segs
        i, cur = cross, nxt


def _merged_products(prods, size: int, h: float, tau: float, product, factors, n: int):
    """(i0, pmf): the convolution from several tilted products of the same factors, each value
    taken from the product whose round-off bound is smallest there (:func:`_envelope`). i0 is
    the first resolved index (a value above its bound): pmf starts there, the lower tail below
    it is left out (its mass is moved up by the caller). Above i0 the positive values are kept,
    resolved or not.

    The values left under their bound between resolved ones may be anything up to it: while
    twice their bounds' sum exceeds τ, the tilt that lowers that sum most is added
    (``product(λ)`` computes it; the bound of a tilt is known before its FFT, from the factors:
    :func:`_tilt_bounds`), up to _MAX_TILTS products. At σ 0.05, q 1e-4, 10⁴ steps the untilted
    product resolves masses down to ~1e-16 a cell and the tilt e^{ℓ} those near the top only,
    while δ = 1e-12 is made of the masses between (their tilt is ~0.01: the density falls by a
    factor j + 1 from j to j + 1 large steps, 200 apart in loss): with the two alone ε was 2761
    on 2¹² points and 11182 on 2¹⁸ (noise kept), or below the truth (noise set to 0); with a
    third tilt it is 2740.95 and 2740.56, in the true [2740.5, 2741.5]."""
    lams = _TILT_GRID * max(p[0] for p in prods)
    lines = None
    while True:
        segs = _envelope(prods, size, h)
        vals = np.empty(size)
        ok = np.empty(size, dtype=bool)
        log_b = np.empty(size)
        for j, s, e in segs:
            lam_j, raw, log_c, log_thr = prods[j]
            vals[s:e] = raw[s:e] * _exp_ramp(log_c - lam_j * h * s, -lam_j * h, e - s)
            ok[s:e] = raw[s:e] > np.exp(log_thr)
            log_b[s:e] = log_thr + log_c - lam_j * h * np.arange(s, e)
        nz = np.flatnonzero(ok)
        if nz.size == 0:
            return 0, np.maximum(vals, 0.0)
        i0, i1 = int(nz[0]), int(nz[-1])
        gap = np.flatnonzero(~ok[i0:i1]) + i0
        hidden = 2.0 * float(np.exp(log_b[gap]).sum())
        if hidden <= tau or len(prods) >= _MAX_TILTS:
            break
        if lines is None:  # the candidates' bounds depend on the factors only: once per call
            lines = {float(lam): _tilt_bounds(factors, h, float(lam), n) for lam in lams}
        have = {p[0] for p in prods}
        best, best_lam = np.inf, None
        for lam, (a, slope) in lines.items():
            if lam in have:
                continue
            new = 2.0 * float(np.exp(np.minimum(log_b[gap], a - slope * gap)).sum())
            if new < best:
                best, best_lam = new, lam
        if best_lam is None or best > 0.5 * hidden:  # not worth an FFT
            break
        prods = prods + [(best_lam,) + product(best_lam)]
    return i0, np.maximum(vals[i0:], 0.0)


def _tilt_bounds(factors, h: float, lam: float, n: int):
    """(a, s): the round-off bound of the product of ``factors`` ((pa, oa, pb, ob), or (pa, oa)
    for a square) tilted by λ (:func:`_tilted_product`, an FFT of n points), as the line a − s·i
    in log untilted units at product index i — without its FFT: from the tilted factors' maxima
    and norms."""
    pairs = [(factors[0], factors[1])] if len(factors) == 2 else [(factors[0], factors[1]), (factors[2], factors[3])]
    logs, norms = [], []
    for p, o in pairs:
        with np.errstate(divide="ignore"):
            lt = np.log(p) + lam * h * (o + np.arange(p.size))
        m = float(lt.max())
        logs.append(m)
        norms.append(0.5 * np.log(float(np.exp(2.0 * (lt - m)).sum())))
    if len(pairs) == 1:
        pairs, logs, norms = pairs * 2, logs * 2, norms * 2
    log_thr = np.log(_roundoff(n)) + norms[0] + norms[1]
    return log_thr + logs[0] + logs[1] - lam * h * (pairs[0][1] + pairs[1][1]), lam * h


def _shed(pmf, excess: float):
    """``pmf`` with ``excess`` of mass taken from its lowest values (up to half of it at most)."""
    c = np.cumsum(pmf)
    j = int(np.searchsorted(c, excess))
    if j >= pmf.size or c[-1] < 2.0 * excess:
        return pmf
    pmf = pmf.copy()
    pmf[:j] = 0.0
    pmf[j] = c[j] - excess
    return pmf


def _power(single, k: int, total: int, h_final: float, levels: int = 0):
    """k-fold self-convolution by repeated squaring, tails cut after every product. A product of
    m runs is cut at τ = 1e-16·m/``total``: it enters the ``total``-run composition at most
    total/m times, so each product adds at most 1e-16 to the final δ (a fixed τ doubled with every
    squaring: 10⁷ runs made δ ≥ 1e-9 everywhere).

    The grid coarsens as the runs add up (see :func:`_spacing_for`): a product of m runs is moved
    by connect-the-dots (:func:`_coarsen`, never below the truth) to the spacing
    h_final·(m/total)^{1/3}. A factor of m runs enters the result total/m times, so coarsening it
    to spacing h_m moves ε by ~(total/m)·h_m² (second order): with h_m ∝ m^{1/3} the stages cost
    ~total^{1/3}·h_final² together, against total·h² for one fixed grid (Koskela, Jälkö & Honkela
    2020; dp_accounting), at a similar number of FFT points (the early, fine stages are narrow).

    Two grids (:class:`_Split`) where ``levels`` > 0 (the caller decides: the grid will coarsen
    past 2^levels (16) times the start, :func:`dpexplore.accounting.pld._two_grids`): each power is a fine
    bulk P plus a measure Q on that coarse grid holding both tails,
    the mass beyond the 1e-5 quantiles on each side, moved there by connect-the-dots after every
    product (never below the truth; the error is second order in the spacing and weighted by
    the little mass moved: ε moves by ~2e-7 relative at DP-SGD's σ 1, q 0.01, 10⁴ steps). A
    subsampled mechanism's loss has its bulk within ~q of 0 but tails over a range of order 1
    (47k points at the start spacing, 8k in the bulk), so the fine products span the bulk only.
    A square is P∗P on the fine grid and (2P + Q)∗Q on the coarse one, a product
    Pa∗Pb and Pa∗Qb + Qa∗(Pb + Qb); each of these products is cut at τ like the others (so a
    two-grid step adds up to 3τ). Q joins P once P's grid is within a factor 2 of Q's."""

    def fit(part, m):
        target = _spacing_for(h_final, m, total)
        while 2.0 * part[0] <= target * (1 + 1e-9) or part[2].size > _MAX_CONV // 2:
            part = _coarsen(part)
        return part

    var1 = _part_var(single)  # a product of m runs has m times its variance (sets the tilt)
    coarse_h = single[0] * 2**levels
    two_grids = levels > 0

    def step(a, b, m):
        tau = _TRUNC_TAIL * m / total
        if isinstance(a, tuple) and isinstance(b, tuple):
            return fit(_convolve(a, b, tau, var=m * var1), m)
        out = _Split.product(_Split.of(a, coarse_h), _Split.of(b, coarse_h), tau, m * var1)
        out.p = fit(out.p, m)
        return out.merged() if 2.0 * out.p[0] >= coarse_h * (1 - 1e-9) else out.resplit()

    result, copies = None, 0
    base = _Split.of(single, coarse_h).resplit() if two_grids else single
    base_copies = 1
    while True:
        if k & 1:
            copies += base_copies
            result = base if result is None else step(result, base, copies)
        k >>= 1
        if not k:
            return result if isinstance(result, tuple) else result.merged()
        base_copies *= 2
        base = step(base, base, base_copies)


def _measure_conv(a, b, tau: float, var: float | None = None):
    """(a ∗ b, mass sent to +∞) for two sub-probability measures given as parts (h, offset, pmf,
    ·, ·) whose pmf sums to their mass: :func:`_convolve` of the normalized measures, scaled back;
    its cut τ is taken relative to the product's mass, so that the absolute cut stays ≤ τ."""
    wa, wb = float(a[2].sum()), float(b[2].sum())
    if not (wa > 0.0 and wb > 0.0):
        return None, 0.0
    w = wa * wb
    r = _convolve((a[0], a[1], a[2] / wa, 0.0, 0.0), (b[0], b[1], b[2] / wb, 0.0, 0.0), min(tau / w, 1e-3), var)
    return (r[0], r[1], r[2] * w, 0.0, 0.0), r[3] * w


def _to_grid(part, h: float):
    """A sub-measure part moved to the grid h, a multiple 2^j of its own: by connect-the-dots
    (:func:`_coarsen`) if coarser, placed on it if finer."""
    while part[0] < h * (1 - 1e-12):
        part = _coarsen(part)
    step = int(round(part[0] / h))
    if step == 1:
        return part
    out = np.zeros((part[2].size - 1) * step + 1)
    out[::step] = part[2]
    return h, part[1] * step, out, part[3], part[4]


def _add_measures(a, b):
    """The sum of two sub-measures (parts; either may be None), on the coarser grid."""
    if a is None or b is None:
        return a if b is None else b
    h = max(a[0], b[0])
    a, b = _to_grid(a, h), _to_grid(b, h)
    lo = min(a[1], b[1])
    out = np.zeros(max(a[1] + a[2].size, b[1] + b[2].size) - lo)
    out[a[1] - lo : a[1] - lo + a[2].size] += a[2]
    out[b[1] - lo : b[1] - lo + b[2].size] += b[2]
    return h, lo, out, 0.0, 0.0


class _Split:
    """A PLD as a fine bulk P, a coarse measure Q and a mass R at +∞ (see :func:`_power`): P and
    Q are parts whose pmf sums to their mass; R is kept apart for precision (1 − |P| − |Q| would
    lose it)."""

    __slots__ = ("p", "q", "r", "extra", "coarse_h")

    def __init__(self, p, q, r: float, extra: float, coarse_h: float):
        self.p, self.q, self.r, self.extra, self.coarse_h = p, q, r, extra, coarse_h

    @classmethod
    def of(cls, x, coarse_h):
        if isinstance(x, cls):
            return x
        h, off, pmf, inf_mass, extra = x
        return cls((h, off, pmf, 0.0, 0.0), None, float(inf_mass), float(extra), coarse_h)

    @staticmethod
    def product(a, b, tau: float, var: float):
        """a ∗ b: P = Pa∗Pb (fine); Q = Pa∗Qb + Qa∗(Pb + Qb) (coarse), or (2P + Q)∗Q for a square."""
        p, cut = _measure_conv(a.p, b.p, tau, var)
        q = None
        if a is b:
            if a.q is not None:
                twice = (a.p[0], a.p[1], 2.0 * a.p[2], 0.0, 0.0)
                q, c2 = _measure_conv(_add_measures(_to_grid(twice, a.q[0]), a.q), a.q, tau)
                cut += c2
        else:
            if b.q is not None:
                q, c2 = _measure_conv(a.p, b.q, tau)
                cut += c2
            if a.q is not None:
                q2, c3 = _measure_conv(a.q, b.p if b.q is None else _add_measures(b.p, b.q), tau)
                q, cut = _add_measures(q, q2), cut + c3
        r = a.r + b.r - a.r * b.r + cut
        if p is None:  # all of the bulk went to +∞ (cannot happen for a real PLD)
            p = (a.p[0], 0, np.zeros(1), 0.0, 0.0)
        return _Split(p, q, min(r, 1.0), a.extra + b.extra, a.coarse_h)

    def resplit(self):
        """Move P's tails beyond the _SPLIT_MASS quantiles (of the whole measure) into Q."""
        h, off, pmf, _, _ = self.p
        i, low = _head_cut(pmf, _SPLIT_MASS)
        j, high = _head_cut(pmf, _SPLIT_MASS, from_end=True)
        if i + j >= pmf.size or (i < 64 and j < 64):
            return self
        moved = []
        if i >= 64:
            moved.append(_to_grid((h, off, pmf[:i].copy(), 0.0, 0.0), self.coarse_h))
        else:
            i = 0
        if j >= 64:
            moved.append(_to_grid((h, off + pmf.size - j, pmf[pmf.size - j :].copy(), 0.0, 0.0), self.coarse_h))
        else:
            j = 0
        q = self.q
        for m in moved:
            q = _add_measures(q, m)
        p = (h, off + i, pmf[i : pmf.size - j].copy(), 0.0, 0.0)
        return _Split(p, q, self.r, self.extra, self.coarse_h)

    def merged(self):
        """The part (h, offset, pmf, inf_mass, extra) of P + Q on P's grid (Q placed on it if
        coarser, moved to it by connect-the-dots if finer)."""
        p, q = self.p, self.q
        if q is not None:
            p = _add_measures(p, _to_grid(q, p[0]) if q[0] > p[0] else q)
        return p[0], p[1], p[2], self.r, self.extra


def _spacing_for(h_final: float, m: int, total: int) -> float:
    """The grid spacing a product of m of ``total`` runs may coarsen to: h_final·(m/total)^{1/3}
    (minimizes the summed ε error Σ (total/m)·h_m² for the FFT points spent; see :func:`_power`)."""
    return h_final * (m / total) ** (1.0 / 3.0)


def _int_power(z, k: int):
    """z**k for a complex array and an integer k ≥ 1 by repeated squaring (log₂ k products,
    much faster than numpy's complex pow; relative error ≲ 2k ulps, like any method)."""
    result = None
    base = z
    while True:
        if k & 1:
            result = base.copy() if result is None else result * base
        k >>= 1
        if not k:
            return result
        base = base * base
