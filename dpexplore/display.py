"""What a privacy object means, at a glance: the facts behind its notebook card and :func:`compare`.

Every public privacy object — a mechanism, a subsampled mechanism, a privacy profile, a
composition (:func:`dpexplore.accounting.composition.compose`, :func:`~dpexplore.accounting.composition.compose_all`,
DP-SGD as ``compose(subsample(Gaussian(σ), q), T)``) and a privacy filter — has a
``_repr_html_`` that calls :func:`card_html`: a compact card of static HTML with an inline SVG
δ(ε) curve (no JavaScript, no widget: it renders in JupyterLab, Notebook 7, VS Code, Colab,
nbviewer, GitHub and a static HTML export). Its numbers come from the public API only:

* ε at δ = 1e-5, 1e-6, 1e-8 — ``profile.epsilon(δ)`` (tight where the profile is);
* pure ε — ``profile.eps_max`` when finite ("not defined" otherwise: δ(ε) > 0 for every ε);
* μ-GDP — exact where the object is Gaussian (Dong, Roth & Su 2022, Corollary 3.3 for its
  compositions), else where the profile is pure DP the best certified μ of
  ``conversions.gdp_certified_mu``: the smaller of the measured upper end (the certificate is then
  complete, Liu et al. 2022, result “GDPT”) and the pure-DP μ (Liu et al. 2022, result “all ε-DP
  algorithms are GDP”), else "not certified";
* zCDP ρ and RDP at orders 2, 8, 32 — from closed forms of the object (Gaussian α μ²/2, pure DP
  ``conversions.pure_to_zcdp`` / ``pure_to_rdp``, Steinke 2024, Theorems 4 and 5, or the
  object's own ``rdp``/``rho``), summed over the parts of a composition (Bun & Steinke 2016;
  Mironov 2017: both compose additively);
* attack risk — ``risk.tpr_at_fpr(profile, [0.01, 0.001])`` and ``risk.advantage(profile)``
  (Dong, Roth & Su 2022, result “f-DP as (ε, δ(ε))-DP for all ε”).

Every number is an upper bound (or exact) and is shown rounded UP to four significant digits,
so the card never claims more privacy than the API does. A quantity that has no value says
"not defined" (or "not known" / "not certified", with the reason in its tooltip); a card never
raises: any error while computing one row becomes that row's "not available". Values are
computed when the card is asked for (lazily), not when the object is built.
"""

from __future__ import annotations

import dataclasses
import html
import math
import weakref
from dataclasses import dataclass, field
from ._numerics import ceil_significant

import numpy as np

from ._card import CardMixin

__all__ = [
    "card_html",
    "card_facts",
    "compare",
    "format_up",
    "profile_of",
    "DELTAS",
    "FPRS",
    "RDP_ORDERS",
    "Fact",
    "Card",
]

#: δ values of the ε rows
DELTAS = (1e-5, 1e-6, 1e-8)
#: false-positive rates of the attack rows
FPRS = (0.01, 0.001)
#: Rényi orders of the RDP rows
RDP_ORDERS = (2.0, 8.0, 32.0)
#: significant digits shown (rounded up)
DIGITS = 4
#: points of the δ(ε) curve
_CURVE_POINTS = 48
#: δ range of the curve's log axis: 1 … 1e-10
_CURVE_LOG10_MIN = -10.0
#: the GDP certificate's bracket width (conversions.gdp_measure's tol)
_GDP_TOL = 1e-3


# ------------------------------------------------------------------------------------------------
# numbers
# ------------------------------------------------------------------------------------------------
def format_up(x, digits: int = DIGITS) -> str:
    """``x`` rounded UP (toward +inf) to ``digits`` significant digits, as text: the safe side
    for an ε, a δ, a TPR or an advantage (all upper bounds). The float's shortest decimal form
    (its ``repr``) is rounded, so 0.1 shows as 0.1000; every API value behind a card is itself
    rounded up by several ulps, far more than the half ulp between a float and its repr. inf
    gives "∞".

    >>> format_up(6.18712), format_up(0.38292492), format_up(1.0), format_up(2.5e-7), format_up(112500.0)
    ('6.188', '0.3830', '1.000', '2.500e-07', '1.125e+05')
    >>> format_up(float("inf")), format_up(0.0)
    ('∞', '0')
    """
    x = float(x)
    if math.isnan(x):
        raise ValueError(f"x must be a number, got {x!r}")
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x == 0.0:
        return "0"
    # the float's shortest decimal form (repr: 0.1, not 0.1000000000000000055…), rounded up
    q = ceil_significant(x, digits)
    exp = q.adjusted()
    if -4 <= exp < 4:
        return f"{q:f}"
    mant = q.scaleb(-exp)
    return f"{mant:f}e{exp:+03d}"


@dataclass
class Fact:
    """One number of a card: ``value`` (a float, the API's own value) or None with ``missing``
    ("not defined", "not known", "not certified", "not available") and ``why``; ``how`` says
    where the value comes from (exact, upper bound, certified)."""

    section: str
    label: str
    value: float | None = None
    missing: str = ""
    why: str = ""
    how: str = ""

    @property
    def text(self) -> str:
        return format_up(self.value) if self.value is not None else self.missing


@dataclass
class Card:
    """The content of a card: what the object is, and its :class:`Fact` rows."""

    title: str
    kind: str
    call: str
    params: list = field(default_factory=list)  # (name, text)
    parts: list = field(default_factory=list)  # (k, text)
    facts: list = field(default_factory=list)  # Fact
    note: str = ""
    curve: tuple | None = None  # (eps, log10 delta) arrays


def _val(x) -> float:
    v = float(np.asarray(x, dtype=np.float64))
    if math.isnan(v):
        raise ValueError("NaN")
    return v


# ------------------------------------------------------------------------------------------------
# what an object is
# ------------------------------------------------------------------------------------------------
class _Info:
    """What the card needs from an object: its profile (or why there is none), exact or bounded
    μ, ρ and an RDP function, its parameters and its parts. The object fills it in itself
    (``_card_describe(info)``, :mod:`dpexplore._card`); its fields:

    * ``profile`` (or ``no_profile``, the reason there is none), ``kind``, ``note``;
    * ``mu``, ``rho``: (value, how it is known), a reason ("not defined") or None (not known);
    * ``rdp``: a function α → ε̂(α), a reason or None; ``rdp_how``; ``rdp_why``, ``rho_why``,
      ``mu_why``: why a value is missing.
    """

    def __init__(self, obj):
        self.obj = obj
        self.profile = None
        self.no_profile = ""
        self.mu = None  # (value, how)
        self.rho = None  # (value, how) or str reason
        self.rdp = None  # callable alpha -> value, or None
        self.rdp_how = ""
        self.rdp_why = "no closed form for this object's Rényi DP"
        self.rho_why = "no closed form for this object's zCDP"
        self.mu_why = ""
        self.params = []
        self.parts = []
        self.kind = "profile"
        self.note = ""

    @staticmethod
    def pure_dp(eps: float):
        """(μ, ρ, RDP function) of ε-DP, each exact (:func:`dpexplore.accounting.conversions.pure_to_gdp`,
        ``pure_to_zcdp``, ``pure_to_rdp``): for the profiles that cannot import the conversions
        (they are built on them)."""
        from .accounting import conversions

        def rdp(a, e=eps):
            return _val(conversions.pure_to_rdp(e, a))

        return float(conversions.pure_to_gdp(eps)), float(conversions.pure_to_zcdp(eps)), rdp

    def add_parts(self, parts) -> None:
        """ρ and RDP of a composition, [(mechanism, k), …]: the sums over its parts (zCDP and RDP
        compose additively, Bun & Steinke 2016; Mironov 2017), each part's from its own closed
        forms (``_card_notions``); μ exact, √(Σ k μ²), when every part is exactly μ-GDP (Dong,
        Roth & Su 2022, Corollary 3.3), and then ρ = μ²/2. Each by the backend's composition
        theorems (:func:`dpexplore.accounting.composition.rdp`, ``zcdp``, ``gdp``: k runs of a
        part, then the parts; rounded up) and :func:`dpexplore.accounting.conversions.gdp_to_zcdp`."""
        from .accounting import composition, conversions

        total = sum(int(k) for _, k in parts)
        self.kind = f"of {total} run{'s' if total != 1 else ''}"
        self.parts = [(int(k), repr(m)) for m, k in parts]
        ks = [int(k) for _, k in parts]
        rdps, rhos = zip(*[_single_rdp_rho(m) for m, _ in parts])
        if all(r is not None for r in rdps):

            def rdp(alpha, _rdps=rdps, _ks=ks):
                return _val(_compose(composition.rdp, [_val(r(alpha)) for r in _rdps], _ks))

            self.rdp, self.rdp_how = rdp, "Σ k·rdp() of the parts (RDP composes additively)"
        if all(r is not None for r in rhos):
            self.rho = (_compose(composition.zcdp, rhos, ks), "Σ k·ρ of the parts")
        mus = [_gdp_mu(m) for m, _ in parts]
        if all(mu is not None for mu in mus):
            mu = _compose(composition.gdp, mus, ks)
            self.mu = (mu, "exact: √(Σ k μ²)")
            self.rho = (float(conversions.gdp_to_zcdp(mu)), "exact: μ²/2")


def _compose(theorem, values, ks) -> float:
    """``theorem`` (one of :mod:`dpexplore.accounting.composition`'s ``rdp``, ``zcdp``, ``gdp``)
    over parts with k_j runs each: k_j runs of each part, then the parts together (one call where
    there is one part)."""
    each = [float(theorem(v, k=k)) for v, k in zip(values, ks)]
    return each[0] if len(each) == 1 else float(theorem(each))


def _params_of(obj):
    if dataclasses.is_dataclass(obj):
        return [(f.name, repr(getattr(obj, f.name))) for f in dataclasses.fields(obj)]
    names = getattr(obj, "_repr_fields", ())
    return [(n, repr(getattr(obj, n))) for n in names if hasattr(obj, n)]


def _gdp_mu(m):
    """μ where the part ``m`` is exactly μ-GDP (its ``_gdp_mu``), else None."""
    try:
        return m._gdp_mu()
    except Exception:  # noqa: BLE001 - a part that states none
        return None


def _single_rdp_rho(m):
    """(rdp function or None, ρ or None) of one part of a composition."""
    sub = _Info(m)
    try:
        m._card_notions(sub)
    except Exception:  # noqa: BLE001 - a part without closed forms
        return None, None
    return sub.rdp, (sub.rho[0] if isinstance(sub.rho, tuple) else None)


def _info(obj, name: str = "obj") -> _Info:
    if isinstance(obj, type):
        raise ValueError(
            f"{name} must be an instance, got the class {obj.__name__}: pass {obj.__name__}(...) with its parameters"
        )
    if not isinstance(obj, CardMixin):
        raise ValueError(f"{name} must be a dpexplore privacy object, got {type(obj).__name__}")
    info = _Info(obj)
    info.params = _params_of(obj)
    obj._card_describe(info)
    return info


def profile_of(obj):
    """The privacy profile a card describes: a profile itself, a mechanism's (or subsampled
    mechanism's) ``.profile``, a filter's budget as a profile. ``ValueError`` naming ``obj`` for
    anything else (an odometer, array parameters, a non-privacy object).

    >>> from dpexplore.accounting.filters import GDPFilter
    >>> profile_of(GDPFilter(1.0))
    GaussianDPProfile(mu=1.0)
    """
    return _profile_of(obj, "obj")


def _profile_of(obj, name: str):
    """:func:`profile_of` whose errors name the argument ``name`` (e.g. ``objects[1]``)."""
    info = _info(obj, name)
    if info.profile is None:
        raise ValueError(f"{name} has no privacy profile ({info.no_profile}), got {obj!r}")
    return info.profile


# ------------------------------------------------------------------------------------------------
# the facts
# ------------------------------------------------------------------------------------------------
def _try(section, label, fn, how="", missing="not available"):
    """A Fact from ``fn()`` (a value, or ``(value, how)``); any error becomes "not available" with
    the error as its reason."""
    try:
        v = fn()
    except Exception as exc:  # noqa: BLE001 - a card never raises
        return Fact(section, label, None, missing, f"{type(exc).__name__}: {exc}"[:200], how)
    if isinstance(v, tuple):
        v, how = v
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return Fact(section, label, None, missing, "", how)
    return Fact(section, label, float(v), "", "", how)


def _eps_facts(p):
    out = []
    try:
        eps = np.asarray(p.epsilon(np.array(DELTAS)), dtype=np.float64)
    except Exception as exc:  # noqa: BLE001
        return [Fact("ε(δ)", f"ε at δ = {d:g}", None, "not available", str(exc)[:200]) for d in DELTAS]
    for d, e in zip(DELTAS, eps):
        if np.isfinite(e):
            out.append(Fact("ε(δ)", f"ε at δ = {d:g}", float(e), how="profile.epsilon(δ)"))
        else:
            out.append(Fact("ε(δ)", f"ε at δ = {d:g}", None, "not defined", f"δ(ε) > {d:g} for every ε"))
    return out


def _attack_facts(p):
    from .accounting import risk

    out = []
    try:
        tpr = np.asarray(risk.tpr_at_fpr(p, np.array(FPRS)), dtype=np.float64)
        for a, t in zip(FPRS, tpr):
            out.append(Fact("attack", f"TPR at FPR {a:.1%}", _val(t), how="risk.tpr_at_fpr"))
    except Exception as exc:  # noqa: BLE001
        out += [Fact("attack", f"TPR at FPR {a:.1%}", None, "not available", str(exc)[:200]) for a in FPRS]
    out.append(_try("attack", "advantage (TPR − FPR)", lambda: risk.advantage(p), "risk.advantage"))
    return out


def _shown_mu(info: _Info, p):
    """(μ, how) of an object's μ-GDP as its card and its plots show it: exact where the object is
    μ-GDP (its card's ``info.mu``), else for a pure-DP profile the best certified μ of
    ``conversions.gdp_certified_mu`` at tolerance ``_GDP_TOL``: the smaller of the measured upper
    end (Liu et al. 2022, result “GDPT”) and the pure-DP μ (Liu et al. 2022, result “all ε-DP
    algorithms are GDP”), as the notion converter shows it; None where μ is not defined or not
    known."""
    from .accounting import conversions

    if isinstance(info.mu, tuple):
        return info.mu
    if isinstance(info.mu, str) or not np.isfinite(float(p.eps_max)):
        return None
    c = conversions.gdp_certified_mu(p, tol=_GDP_TOL)
    if c.mu is None:
        return None
    if c.route == "measured":
        return c.mu, "certified: conversions.gdp_certified_mu (measured upper end)"
    return c.mu, "certified: conversions.gdp_certified_mu (pure ε-DP ⇒ μ = 2Φ⁻¹(e^ε/(1+e^ε)))"


def _notion_facts(info: _Info, p):
    out = []
    em = float(p.eps_max)
    if np.isfinite(em):
        out.append(Fact("notions", "pure ε", em, how="eps_max: δ(ε) = 0 from here on"))
    else:
        out.append(Fact("notions", "pure ε", None, "not defined", "δ(ε) > 0 for every ε: not pure DP"))
    if isinstance(info.mu, str):
        out.append(Fact("notions", "μ-GDP", None, info.mu, info.mu_why))
    elif info.mu is not None:
        out.append(Fact("notions", "μ-GDP", info.mu[0], how=info.mu[1]))
    elif np.isfinite(em):
        out.append(_try("notions", "μ-GDP", lambda: _shown_mu(info, p), "certified: conversions.gdp_certified_mu"))
    else:
        out.append(
            Fact(
                "notions",
                "μ-GDP",
                None,
                "not certified",
                "no closed form; a numerical μ would rest on tail extrapolation",
            )
        )
    if isinstance(info.rho, tuple):
        out.append(Fact("notions", "zCDP ρ", info.rho[0], how=info.rho[1]))
    else:
        out.append(
            Fact("notions", "zCDP ρ", None, info.rho if isinstance(info.rho, str) else "not known", info.rho_why)
        )
    for a in RDP_ORDERS:
        label = f"RDP ε̂(α = {a:g})"
        if callable(info.rdp):
            out.append(_try("notions", label, lambda a=a: _val(info.rdp(a)), info.rdp_how, missing="not known"))
            if out[-1].value is None and not out[-1].why.startswith("NotImplemented"):
                out[-1].why = out[-1].why or info.rdp_why
            elif out[-1].value is None:
                out[-1].why = info.rdp_why
        else:
            out.append(
                Fact("notions", label, None, info.rdp if isinstance(info.rdp, str) else "not known", info.rdp_why)
            )
    return out


def _curve(p):
    """(ε, log10 δ) on [0, E]: E the ε at δ = 1e-10 (or eps_max), capped at 50."""
    hi = float(np.asarray(p.epsilon(10.0**_CURVE_LOG10_MIN)))
    if not np.isfinite(hi):
        hi = float(p.eps_max) if np.isfinite(float(p.eps_max)) else 50.0
    hi = min(max(hi, 1e-3), 50.0)
    eps = np.linspace(0.0, hi, _CURVE_POINTS)
    with np.errstate(divide="ignore"):
        ld = np.asarray(p.log_delta(eps), dtype=np.float64) / np.log(10.0)
    return eps, np.maximum(np.where(np.isnan(ld), 0.0, ld), _CURVE_LOG10_MIN)


def card_facts(obj) -> Card:
    """The :class:`Card` of a privacy object (its numbers; see the module docstring). Raises
    ``ValueError`` for an object that is not one of dpexplore's privacy objects; errors while
    computing one number become that number's "not available".

    >>> from dpexplore.mechanisms import Gaussian
    >>> c = card_facts(Gaussian(1.0))
    >>> [(f.label, f.text) for f in c.facts][:2]
    [('ε at δ = 1e-05', '4.378'), ('ε at δ = 1e-06', '4.887')]
    """
    cached = _cached_card(obj)
    if cached is not None:
        return cached
    card = _card_facts(obj)
    _keep_card(obj, card)
    return card


#: cards of immutable objects (mechanisms, profiles), kept while the object lives: a notebook
#: re-renders an object's card on every display, and a card costs up to ~0.1 s (DiscreteGaussian)
_CARDS = weakref.WeakKeyDictionary()


def _cacheable(obj) -> bool:
    """Mechanisms and profiles: their numbers depend on their parameters only (a filter's card
    is cheap, and a filter's state changes as it is used: its ``_card_cacheable`` is False)."""
    return bool(getattr(obj, "_card_cacheable", False))


def _cached_card(obj):
    if not _cacheable(obj):
        return None
    try:
        return _CARDS.get(obj)
    except TypeError:  # unhashable, or no weak reference: not cached
        return None


def _keep_card(obj, card) -> None:
    if not _cacheable(obj):
        return
    try:
        _CARDS[obj] = card
    except TypeError:
        pass


def _card_facts(obj) -> Card:
    info = _info(obj)
    try:
        call = repr(obj)
    except Exception:  # noqa: BLE001
        call = f"<{type(obj).__name__}>"
    # a composition's profile class (MaxProfile, the worse of the two directions) means nothing to a
    # reader: its card is titled by what it is
    title = "Composition" if info.parts else type(obj).__name__
    card = Card(title=title, kind=info.kind, call=call, params=info.params, parts=info.parts, note=info.note)
    p = info.profile
    if p is None:
        card.note = info.no_profile
        return card
    card.facts = _eps_facts(p) + _notion_facts(info, p) + _attack_facts(p)
    try:
        card.curve = _curve(p)
    except Exception:  # noqa: BLE001 - the card keeps its numbers
        card.curve = None
    return card


# ------------------------------------------------------------------------------------------------
# HTML
# ------------------------------------------------------------------------------------------------
_CSS = """
.dpx-card{font:13px/1.35 system-ui,-apple-system,"Segoe UI",sans-serif;color:inherit;
 border:1px solid rgba(127,127,127,.45);border-radius:6px;padding:8px 10px;margin:4px 0;
 max-width:760px;display:flex;flex-wrap:wrap;gap:6px 18px;align-items:flex-start;background:transparent}
.dpx-card.dpx-card h3{font-size:14px;margin:0 0 2px;width:100%;font-weight:600;color:inherit}
.dpx-card .dpx-kind{font-weight:400;opacity:.75;font-size:12px}
.dpx-card.dpx-card code{font-size:12px;background:rgba(127,127,127,.15);padding:0 3px;
 border-radius:3px;word-break:break-all;color:inherit}
.dpx-card.dpx-card table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:0;
 border:0;font-size:12.5px;color:inherit;table-layout:auto}
.dpx-card.dpx-card tr,.dpx-card.dpx-card tbody tr:nth-child(odd),.dpx-card.dpx-card tbody tr:hover
 {background:transparent;border:0}
.dpx-card.dpx-card th,.dpx-card.dpx-card td{padding:1px 6px;text-align:left;border:0;
 vertical-align:top;background:transparent;color:inherit;line-height:1.35}
.dpx-card.dpx-card th[scope=row]{font-weight:400}
.dpx-card.dpx-card caption{font-weight:600;text-align:left;font-size:12px;opacity:.85;
 padding:0 6px 1px;caption-side:top;color:inherit}
.dpx-card.dpx-card thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);
 white-space:nowrap}
.dpx-card.dpx-card td.dpx-v{text-align:right;white-space:nowrap}
.dpx-card .dpx-missing{opacity:.75;font-style:italic}
.dpx-card.dpx-card .dpx-note{width:100%;font-size:11.5px;opacity:.8;margin:2px 0 0}
.dpx-card svg{color:inherit;overflow:visible}
"""


def _esc(x) -> str:
    return html.escape(str(x), quote=True)


def _table(caption: str, facts) -> str:
    rows = []
    for f in facts:
        if f.value is not None:
            tip = (
                f"{f.how}; exact value {f.value!r}, shown rounded up"
                if f.how
                else f"exact value {f.value!r}, shown rounded up"
            )
            cell = f'<td class="dpx-v" title="{_esc(tip)}">{_esc(f.text)}</td>'
        else:
            cell = f'<td class="dpx-v dpx-missing" title="{_esc(f.why)}">{_esc(f.text)}</td>'
        rows.append(f'<tr><th scope="row">{_esc(f.label)}</th>{cell}</tr>')
    return (
        f"<table><caption>{_esc(caption)}</caption>"
        f'<thead><tr><th scope="col">quantity</th><th scope="col">value</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _svg(card: Card) -> str:
    """The δ(ε) curve on a log axis (δ from 1 to 1e-10), in currentColor."""
    if card.curve is None:
        return ""
    eps, ld = card.curve
    w, h, left, bottom = 200.0, 110.0, 34.0, 18.0
    hi = float(eps[-1]) if eps[-1] > 0 else 1.0
    xs = left + (eps / hi) * (w - left - 6)
    ys = 4 + (ld / _CURVE_LOG10_MIN) * (h - bottom - 4)
    pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys))
    e5 = next((f.text for f in card.facts if f.label.startswith("ε at δ = 1e-05")), "")
    label = (
        f"δ(ε) curve of {card.title}: δ from {10 ** ld[0]:.3g} at ε = 0 down to "
        f"{10 ** ld[-1]:.1e} at ε = {hi:.3g}" + (f"; ε = {e5} at δ = 1e-5" if e5 else "")
    )
    ticks = []
    for k in (0, -5, -10):
        y = 4 + (k / _CURVE_LOG10_MIN) * (h - bottom - 4)
        ticks.append(
            f'<line x1="{left}" x2="{w - 6}" y1="{y:.1f}" y2="{y:.1f}" stroke="currentColor" '
            f'stroke-opacity=".18"/><text x="{left - 3}" y="{y + 3:.1f}" text-anchor="end" '
            f'font-size="9" fill="currentColor">{"1" if k == 0 else f"1e{k}"}</text>'
        )
    return (
        f'<svg role="img" aria-label="{_esc(label)}" width="{w:.0f}" height="{h:.0f}" '
        f'viewBox="0 0 {w:.0f} {h:.0f}" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{_esc(label)}</title>{''.join(ticks)}"
        f'<line x1="{left}" x2="{left}" y1="4" y2="{h - bottom:.0f}" stroke="currentColor" stroke-opacity=".5"/>'
        f'<polyline points="{pts}" fill="none" stroke="currentColor" stroke-width="1.6"/>'
        f'<text x="{left}" y="{h - 5:.0f}" font-size="9" fill="currentColor">0</text>'
        f'<text x="{w - 6:.0f}" y="{h - 5:.0f}" font-size="9" text-anchor="end" fill="currentColor">'
        f"ε = {hi:.3g}</text>"
        f'<text x="{(left + w) / 2:.0f}" y="{h - 5:.0f}" font-size="9" text-anchor="middle" '
        f'fill="currentColor">δ(ε), log scale</text></svg>'
    )


def card_html(obj) -> str:
    """The card of ``obj`` as static HTML (inline CSS and SVG, no JavaScript). Never raises: an
    object that cannot be described gives a card saying why.

    >>> from dpexplore.mechanisms import Laplace
    >>> h = card_html(Laplace(1.0))
    >>> "Laplace" in h and "<svg" in h and "<script" not in h
    True
    """
    try:
        card = card_facts(obj)
    except Exception as exc:  # noqa: BLE001 - a display never raises
        return (
            f'<div class="dpx-card" role="group"><p>{_esc(type(obj).__name__)}: no card '
            f"({_esc(type(exc).__name__)}: {_esc(str(exc)[:200])})</p></div>"
        )
    return _render(card)


def _render(card: Card) -> str:
    params = "".join(f'<tr><th scope="row">{_esc(n)}</th><td><code>{_esc(v)}</code></td></tr>' for n, v in card.params)
    parts = "".join(f'<tr><td class="dpx-v">{k}×</td><td><code>{_esc(v)}</code></td></tr>' for k, v in card.parts)
    what = ""
    if params:
        what += (
            f'<table><caption>parameters</caption><thead><tr><th scope="col">name</th>'
            f'<th scope="col">value</th></tr></thead><tbody>{params}</tbody></table>'
        )
    if parts:
        what += (
            f'<table><caption>composed of</caption><thead><tr><th scope="col">runs</th>'
            f'<th scope="col">mechanism</th></tr></thead><tbody>{parts}</tbody></table>'
        )
    sections = {}
    for f in card.facts:
        sections.setdefault(f.section, []).append(f)
    names = {"ε(δ)": "(ε, δ)-DP", "notions": "other notions", "attack": "what an attacker can do"}
    tables = "".join(_table(names.get(s, s), fs) for s, fs in sections.items())
    note = ""
    if card.facts:
        note = (
            "Every number is an upper bound (or exact), rounded up to 4 significant digits: "
            "the safe side. Hover a value for its source."
        )
    if card.note:
        note = _esc(card.note) + (". " + note if note else "")
    return (
        f'<div class="dpx-card" role="group" aria-label="{_esc(card.title)} privacy card">'
        f"<style>{_CSS}</style>"
        f'<h3>{_esc(card.title)} <span class="dpx-kind">{_esc(card.kind)}</span></h3>'
        f"<div><code>{_esc(card.call)}</code>{what}</div>{tables}{_svg(card)}"
        f'<p class="dpx-note">{note}</p></div>'
    )


# ------------------------------------------------------------------------------------------------
# compare
# ------------------------------------------------------------------------------------------------
#: :func:`compare` makes one row per parameter setting of a mechanism with array parameters, at
#: most this many in all (each row is a card: up to ~0.1 s)
MAX_COMPARE_ROWS = 200


def _settings(obj, name: str) -> list:
    """``obj`` itself, or for a mechanism with array parameters one mechanism per element of the
    broadcast parameters (in C order: its ``_card_settings``). ``ValueError`` naming ``name`` for
    a class or an object that is not a privacy object."""
    _info(obj, name)  # a class or a non-privacy object: ValueError naming `name`
    return obj._card_settings(name, MAX_COMPARE_ROWS)


def _compare_rows(objects):
    settings = [s for i, obj in enumerate(objects) for s in _settings(obj, f"objects[{i}]")]
    if len(settings) > MAX_COMPARE_ROWS:
        raise ValueError(f"objects must give at most {MAX_COMPARE_ROWS} rows, got {len(settings)}")
    rows, labels = [], []
    for obj in settings:
        card = card_facts(obj)  # a number that fails is "not available" on it (None here)
        row = {}
        for f in card.facts:
            row[f.label] = f.value
            if f.label not in labels:
                labels.append(f.label)
        rows.append((card.call, row))
    return rows, labels


def compare(*objects):
    """The numbers of the objects' cards side by side: a pandas DataFrame with one row per
    object (index: the object's repr; columns: ε at each δ, pure ε, μ, ρ, RDP, TPR, advantage;
    NaN where a card says "not defined"/"not known"). A mechanism with array parameters gives one
    row per element of its broadcast parameters (at most :data:`MAX_COMPARE_ROWS` rows in all).
    The values are the API's exact values (upper bounds: the safe side), not the cards' rounded
    text, so sorting by a column sorts by privacy or risk. ``ValueError`` naming the argument
    (``objects[i]``) for a class instead of an instance or an object that is not a privacy
    object.

    >>> from dpexplore.mechanisms import Gaussian, Laplace
    >>> t = compare(Gaussian(1.0), Laplace(1.0))
    >>> float(t.loc["Laplace(scale=1.0, sensitivity=1.0)", "pure ε"])
    1.0
    >>> list(compare(Laplace([1.0, 2.0]))["pure ε"])
    [1.0, 0.5]
    """
    import pandas as pd

    if not objects:
        raise ValueError("objects must hold at least one privacy object, got none")
    rows, labels = _compare_rows(objects)
    data = [[r.get(c, None) for c in labels] for _, r in rows]
    df = pd.DataFrame(data, index=[n for n, _ in rows], columns=labels, dtype=float)
    df.index.name = "object"
    return df
