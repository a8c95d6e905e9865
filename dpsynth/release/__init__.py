"""Release strategies: how a private table becomes DP aggregates.

- :mod:`dpsynth.release.sds`: Algorithm 1 of the DP-marginals paper with the
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

from .priview import PriViewSynthesizer, priview_noise_error, view_counts

__all__ = ["PriViewSynthesizer", "priview_noise_error", "view_counts"]
