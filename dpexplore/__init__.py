"""dpexplore: see differential privacy.

An exact, numerically careful backend — mechanisms, conversions between privacy notions,
composition theorems — behind interactive Jupyter/Voilà dashboards.

>>> import dpexplore
>>> dpexplore.PrivacyProfile.__name__
'PrivacyProfile'
"""
from .profiles import FunctionProfile, GaussianDPProfile, PrivacyProfile

__all__ = ["PrivacyProfile", "FunctionProfile", "GaussianDPProfile"]
__version__ = "0.1.0"
