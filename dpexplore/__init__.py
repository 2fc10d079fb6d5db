"""dpexplore: see differential privacy.

An exact, numerically careful backend — mechanisms, conversions between privacy notions,
composition theorems — behind interactive Jupyter/Voilà dashboards (``dpexplore.apps``,
imported on demand so the backend never pulls in widgets).

>>> import dpexplore
>>> from dpexplore import mechanisms, conversions, composition
>>> round(conversions.pure_to_zcdp(1.0), 6)            # ε·tanh(ε/2)
0.462117
>>> mechanisms.Laplace(1.0).epsilon(0.0)
1.0
"""
from . import algorithms, auditing, composition, conversions, mechanisms
from .profiles import FunctionProfile, GaussianDPProfile, PrivacyProfile

__all__ = [
    "PrivacyProfile",
    "FunctionProfile",
    "GaussianDPProfile",
    "algorithms",
    "auditing",
    "composition",
    "conversions",
    "mechanisms",
]
__version__ = "0.1.0"
