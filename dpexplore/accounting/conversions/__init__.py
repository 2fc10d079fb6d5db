"""Conversions between privacy notions: pure DP, Rényi DP, zCDP, Gaussian DP and (ε, δ)-DP; and
whether a privacy profile is Gaussian DP, and for which μ.

Names follow ``<source>_to_<target>`` (as OpenDP and dp_accounting name theirs). Every function is pure, validates
its arguments at entry (``ValueError`` naming the parameter), broadcasts numpy arrays and returns
a Python float for scalar input. Where a result is computed numerically it is rounded to the
safe side (a larger ε, δ or μ, a smaller ρ); each docstring says by how much.

Sources (full entries in :mod:`dpexplore.bibliography.references`): T. Steinke's post "Tight RDP &
zCDP bounds from pure DP" (Steinke 2024, Theorems 4 and 5: pure DP → RDP, zCDP); Liu, Sun, Jiang &
Kong, "Identification, Amplification and Measurement: a bridge to Gaussian Differential Privacy"
(Liu et al. 2022); T. Steinke's post "Composition basics" (Steinke 2022, footnote 2); and the
standard statements of Balle & Wang 2018, Dong, Roth & Su 2022, Mironov 2017 and Balle et al. 2020.

The package, by idea (every name is imported from here):

* :mod:`.notions` — the conversions: pure DP → RDP, zCDP, GDP; RDP, zCDP → (ε, δ); the μ-GDP
  profile and its inverses; the trade-off functions; the profiles implied by ρ-zCDP, an RDP curve
  and a trade-off equation (:class:`ZCDPProfile`, :class:`RDPProfile`, :class:`EquationProfile`);
* :mod:`.gdp_measurement` — GDP identification and measurement (Liu et al. 2022):
  :func:`gdp_identify`, :func:`gdp_violated_mu`, :func:`gdp_measure`, and the dashboards' readouts
  :func:`gdp_bracket` and :func:`gdp_certified_mu`; it imports :mod:`.notions`, never the other way.

Also imported from here: the (ε, δ)-DP profiles and :func:`implied_delta` of
:mod:`dpexplore.accounting.profiles`, and the attack risk of any profile of
:mod:`dpexplore.accounting.risk` (:func:`tpr_at_fpr`, :func:`advantage`, :func:`posterior_bound`).
"""

from __future__ import annotations

from ..profiles import ApproxDPProfile, GaussianDPProfile, PureDPProfile, implied_delta  # noqa: F401  (GaussianDPProfile)
from ..risk import advantage, posterior_bound, tpr_at_fpr
from . import gdp_measurement as _gdp_measurement
from . import notions as _notions
from .gdp_measurement import (
    CertifiedMu,
    GdpBracket,
    gdp_bracket,
    gdp_certified_mu,
    gdp_identify,
    gdp_measure,
    gdp_violated_mu,
)
from .notions import (  # noqa: F401  (GDP_MU_MARGIN: approx_to_gdp's margin; _rdp_eps_terms: composition.dpsgd)
    GDP_MU_MARGIN,
    EquationProfile,
    RDPProfile,
    ZCDPProfile,
    _rdp_eps_terms,
    approx_to_gdp,
    approx_to_zcdp,
    equation_profile,
    gdp_delta,
    gdp_epsilon,
    gdp_log_delta,
    gdp_to_zcdp,
    pure_to_gdp,
    pure_to_rdp,
    pure_to_zcdp,
    rdp_epsilon_terms,
    rdp_to_approx,
    tradeoff_approx,
    tradeoff_envelope,
    tradeoff_gdp,
    zcdp_to_approx,
    zcdp_to_rdp,
)

# every other name of the two modules (their private helpers and constants, and the names they
# import) is a name of dpexplore.accounting.conversions, as it was when this was one module
for _module in (_notions, _gdp_measurement):
    globals().update({k: v for k, v in vars(_module).items() if k not in globals() and not k.startswith("__")})
del _module, _notions, _gdp_measurement

__all__ = [
    "pure_to_rdp",
    "pure_to_zcdp",
    "gdp_to_zcdp",
    "zcdp_to_rdp",
    "rdp_to_approx",
    "rdp_epsilon_terms",
    "zcdp_to_approx",
    "approx_to_zcdp",
    "gdp_delta",
    "gdp_log_delta",
    "gdp_epsilon",
    "approx_to_gdp",
    "pure_to_gdp",
    "implied_delta",
    "tradeoff_approx",
    "tradeoff_gdp",
    "tradeoff_envelope",
    "gdp_identify",
    "gdp_measure",
    "gdp_violated_mu",
    "gdp_bracket",
    "GdpBracket",
    "gdp_certified_mu",
    "CertifiedMu",
    "ApproxDPProfile",
    "PureDPProfile",
    "ZCDPProfile",
    "RDPProfile",
    "EquationProfile",
    "equation_profile",
    "tpr_at_fpr",
    "advantage",
    "posterior_bound",
]
