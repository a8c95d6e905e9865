"""Release strategies: how a private table becomes DP aggregates.

:class:`WorkloadRelease` (``"workload"``, what ``release="auto"`` picks unless
the sampler reads sparse counts) and :class:`SDSRelease` (``"sds"``) are the
strategies of :class:`~dpsynth.DPMarginalSynthesizer`, registered by name;
:func:`get_release` resolves a ``release`` value, :class:`Release` is the
interface (:mod:`dpsynth.release.base`).  The algorithms behind them:

- :mod:`dpsynth.release.sds` (with its budget, :mod:`dpsynth.release.sds_budget`): Algorithm 1 of the DP-marginals paper with the
  options of Microsoft's Synthetic Data Showcase (every 1..R combination, DP
  percentile contribution bounds, Gaussian noise, thresholds).
- :mod:`dpsynth.release.workload`: adaptive selection of 2- and 3-way
  marginals in the style of AIM (McKenna et al. 2022), scored on a synthetic
  population fitted by marginal matching, accounted in zCDP;
  :mod:`dpsynth.release.adaptive` runs it from a table (DP discovery of
  undeclared values first) into :class:`~dpsynth.DPAggregates`.
- :mod:`dpsynth.release.allocation`: given a workload of marginals and a
  budget, choose per-measurement budgets that minimise the total expected
  squared error (Cormode et al. 2012 for measured marginals; ResidualPlanner,
  Xiao et al. 2023, for Gaussian noise), measure, and make the noisy
  marginals exactly consistent by generalised least squares.
- :mod:`dpsynth.release.fitting`: fitting a population of records to dense
  (noisy, consistent, possibly negative) target marginals.
- :class:`PriViewSynthesizer` (Qardaji, Yang, Li, SIGMOD 2014; Li, Lyu, Su,
  Yang, "Differential Privacy: From Theory to Practice", Section 6.3): views
  chosen by a covering design, with the consistency, non-negativity and
  maximum-entropy machinery (:mod:`dpsynth.views`) it shares with the
  local-DP :class:`~dpsynth.local.CALMSynthesizer`.
"""

from .base import RELEASES, Release, get_release, register_release
from .priview import PriViewSynthesizer, priview_noise_error, view_counts
from .strategies import SDSRelease, WorkloadRelease

register_release("workload", WorkloadRelease)
register_release("sds", SDSRelease)

__all__ = ["PriViewSynthesizer", "Release", "RELEASES", "SDSRelease", "WorkloadRelease",
           "get_release", "priview_noise_error", "register_release", "view_counts"]
