"""Central-DP release strategies built on consistent views.

:class:`PriViewSynthesizer` (Qardaji, Yang, Li, SIGMOD 2014; Li, Lyu, Su,
Yang, "Differential Privacy: From Theory to Practice", Section 6.3) shares
its consistency, non-negativity and maximum-entropy machinery
(:mod:`dpsynth.views`) with the local-DP :class:`~dpsynth.local.CALMSynthesizer`.
"""

from .priview import PriViewSynthesizer, priview_noise_error, view_counts

__all__ = ["PriViewSynthesizer", "priview_noise_error", "view_counts"]
