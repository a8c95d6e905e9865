"""Privacy accounting: the privacy report of a release and the conversions between guarantees.

- :class:`PrivacySpent`, the report every release writes (``privacy_spent_``,
  the ``"privacy"`` of a release file), with one :class:`Spend` per
  accounted mechanism;
- the conversions between ``(epsilon, delta)``-DP, zCDP and Gaussian DP
  (:func:`zcdp_rho`, :func:`zcdp_rho_tight`, :func:`gdp_mu`,
  :func:`bounded_range_mu`, ... and back);
- :data:`DEFAULT_DELTA`, :func:`check_delta` and the limits that hold for
  every release, and the DP set union's threshold :func:`first_level_threshold`.

How a release strategy splits its budget belongs to the strategy (e.g.
:mod:`dpsynth.release.sds_budget` for the SDS release).
"""

from ._budget import (DEFAULT_DELTA, MAX_DELTA, MAX_EPSILON, check_delta, first_level_threshold,
                      warn_large_delta)
from ._conversion import (bounded_range_epsilon, bounded_range_mu, gdp_delta, gdp_epsilon,
                          gdp_mu, zcdp_delta, zcdp_epsilon, zcdp_rho, zcdp_rho_tight,
                          zcdp_to_epsilon)
from ._report import PrivacySpent, Spend

__all__ = ["DEFAULT_DELTA", "MAX_DELTA", "MAX_EPSILON", "check_delta", "first_level_threshold",
           "warn_large_delta",
           "bounded_range_epsilon", "bounded_range_mu", "gdp_delta", "gdp_epsilon", "gdp_mu",
           "zcdp_delta", "zcdp_epsilon", "zcdp_rho", "zcdp_rho_tight", "zcdp_to_epsilon",
           "PrivacySpent", "Spend"]
