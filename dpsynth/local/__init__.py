"""Local differential privacy: frequency oracles and CALM marginal release.

In the local model each user randomises her own record before it leaves her
device, so the collector never sees raw data (Zhang et al., "CALM", CCS
2018).  :class:`CALMSynthesizer` releases k-way marginals and synthetic
records from such reports; the oracles (:class:`GRR`, :class:`OUE`,
:class:`OLH`, :func:`adaptive_oracle`) are the building blocks.
"""

from ..covering import bounded_cover, covering_design, covering_number
from .calm import CALMSynthesizer, calm_parameters, select_marginals
from .oracles import GRR, OLH, OUE, FrequencyOracle, adaptive_oracle, fo_variance

__all__ = ["CALMSynthesizer", "calm_parameters", "select_marginals", "covering_design",
           "bounded_cover",
           "covering_number", "FrequencyOracle", "GRR", "OUE", "OLH", "adaptive_oracle",
           "fo_variance"]
