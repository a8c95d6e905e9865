"""Release strategies: how a private table becomes DP aggregates.

:class:`WorkloadRelease` (``"workload"``, what ``release="auto"`` picks unless
the sampler reads sparse counts) and :class:`SDSRelease` (``"sds"``) are the
strategies of :class:`~dpsynth.DPMarginalSynthesizer`, registered by name;
:func:`get_release` resolves a ``release`` value, :class:`Release` is the
interface (:mod:`dpsynth.release.base`).  The algorithms behind them:

- :mod:`dpsynth.release.workload_release` (:func:`release_adaptive`): the
  workload-aware release of a table into :class:`~dpsynth.DPAggregates`:
  the budget plan, DP discovery of undeclared values, the 1-way
  measurements, then the adaptive selection.
- :mod:`dpsynth.release.adaptive_selection` (:func:`release_workload`): the
  adaptive loop in the style of AIM (McKenna et al. 2022): select a 2- or
  3-way marginal with the exponential mechanism, measure it (or its
  residuals) with Gaussian noise, refit the scoring population; accounted
  in Gaussian DP or zCDP.
- :mod:`dpsynth.release.sds` (with its budget, :mod:`dpsynth.release.sds_budget`): Algorithm 1 of the DP-marginals paper with the
  options of Microsoft's Synthetic Data Showcase (every 1..R combination, DP
  percentile contribution bounds, Gaussian noise, thresholds).
- :mod:`dpsynth.release.allocation`: given a workload of marginals and a
  budget, choose per-measurement budgets that minimise the total expected
  squared error (Cormode et al. 2012 for measured marginals; ResidualPlanner,
  Xiao et al. 2023, for Gaussian noise) and measure them.
- :class:`PriViewSynthesizer` (Qardaji, Yang, Li, SIGMOD 2014; Li, Lyu, Su,
  Yang, "Differential Privacy: From Theory to Practice", Section 6.3): views
  chosen by a covering design (:mod:`dpsynth.covering`), with the
  consistency, non-negativity and maximum-entropy machinery
  (:mod:`dpsynth.views`) it shares with the local-DP
  :class:`~dpsynth.local.CALMSynthesizer`.

The post-processing they share with the samplers (consistency, population
fitting) is the model layer, :mod:`dpsynth.model`.
"""

from .adaptive_selection import release_workload
from .base import RELEASES, Release, get_release, register_release
from .priview import PriViewSynthesizer, gaussian_crossover, priview_noise_error, view_counts
from .strategies import SDSRelease, WorkloadRelease
from .workload_release import release_adaptive

register_release("workload", WorkloadRelease)
register_release("sds", SDSRelease)

__all__ = ["PriViewSynthesizer", "Release", "RELEASES", "SDSRelease", "WorkloadRelease",
           "gaussian_crossover", "get_release", "priview_noise_error", "register_release",
           "release_adaptive",
           "release_workload", "view_counts"]
