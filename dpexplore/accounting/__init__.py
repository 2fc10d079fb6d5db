"""Accounting: what a mechanism's privacy is, in every notion, alone and composed.

One module per idea:

* :mod:`.profiles` — privacy profiles δ(ε) (:class:`~.profiles.PrivacyProfile`,
  :class:`~.profiles.GaussianDPProfile`, …), the common currency of every other module;
* :mod:`.conversions` — between pure DP, Rényi DP, zCDP, GDP and (ε, δ), trade-off functions,
  attack risk;
* :mod:`.composition` — composition theorems (basic, advanced, optimal, RDP, zCDP, GDP), tight
  composition (:func:`~.composition.compose`) and DP-SGD accounting;
* :mod:`.pld` — privacy loss distributions: discretisation and FFT composition;
* :mod:`.filters` — privacy filters and odometers for adaptively chosen mechanisms;
* :mod:`.composition_settings` — Desfontaines 2023's table of which composition results are known
  in which setting, each pointing at the object here that implements it;
* :mod:`.risk` — what an attacker can infer from a profile (TPR at FPR, advantage, posterior);
* :mod:`.auditing` — the empirical side: ε lower bounds from attacks (Clopper–Pearson audits).

The modules load on first use (``dpexplore.accounting.composition`` imports it). They were
``dpexplore.<module>`` before; those names still work, with a DeprecationWarning.
"""

from __future__ import annotations

from .._moved import lazy_submodules

__all__ = ["auditing", "composition", "composition_settings", "conversions", "filters", "pld", "profiles", "risk"]

__getattr__, __dir__ = lazy_submodules(__name__, __all__, globals())
