"""Log-space special functions used by several modules, and the package's numerics policy (no
validation here: callers validate).

The policy: a computed bound is moved to its safe side by :func:`up` or :func:`down` with a margin
named in :data:`MARGINS` (upper bounds on ε, δ, ρ, μ and TPRs go up; trade-off values, budgets and
lower bounds go down), and a monotone function is inverted by :func:`bracket_search` (or, for
δ(ε) = target, by :func:`epsilon_by_bisection`, which uses it), which keeps the end on the safe
side of the predicate; a bracket is found by :func:`grow_bracket`. The other searches are here
once each, with their safe end and stopping rule: :func:`newton_search`, :func:`illinois`
(regula falsi), :func:`golden_min`, :func:`step_up_until_ok`. The documentation page
"Numerical guarantees" lists which guarantee each public function gives."""

from __future__ import annotations

from . import gdp as _gdp
from . import rounding as _rounding
from . import search as _search
from . import special as _special

# every name of the four modules (private ones too: the package imports some) is a name of
# dpexplore._numerics, as it was when this was one module
for _module in (_special, _rounding, _search, _gdp):
    globals().update({k: v for k, v in vars(_module).items() if not (k.startswith("__") or k in ("annotations",))})
del _module
