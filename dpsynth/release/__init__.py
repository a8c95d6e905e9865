"""Release strategies: how a private table becomes DP aggregates.

- :mod:`dpsynth.release.sds`: Algorithm 1 of the DP-marginals paper with the
  options of Microsoft's Synthetic Data Showcase (every 1..R combination, DP
  percentile contribution bounds, Gaussian noise, thresholds).
- :class:`PriViewSynthesizer` (Qardaji, Yang, Li, SIGMOD 2014; Li, Lyu, Su,
  Yang, "Differential Privacy: From Theory to Practice", Section 6.3): views
  chosen by a covering design, with the consistency, non-negativity and
  maximum-entropy machinery (:mod:`dpsynth.views`) it shares with the
  local-DP :class:`~dpsynth.local.CALMSynthesizer`.
"""

from .priview import PriViewSynthesizer, priview_noise_error, view_counts

__all__ = ["PriViewSynthesizer", "priview_noise_error", "view_counts"]
