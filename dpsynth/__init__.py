"""dpsynth: differentially private synthetic tabular data, scikit-learn style.

The main estimator, :class:`DPMarginalSynthesizer`, releases differentially
private k-way marginals with the DP-marginals algorithm of Gopi, Mahabadi and
Yekhanin (as used by Microsoft's Synthetic Data Showcase) and samples synthetic
records from those marginals alone.
"""

from ._version import __version__
from .accounting import PrivacySpent
from .aggregates import DPAggregates
from .exceptions import NoisyReleaseWarning, PrivacyLeakWarning
from .local import CALMSynthesizer
from .model_selection import TrainOnSynthetic
from .release import PriViewSynthesizer
from .schema import Column, Schema
from .synthesizer import DPMarginalSynthesizer

__all__ = ["__version__", "CALMSynthesizer", "Column", "DPAggregates", "DPMarginalSynthesizer",
           "NoisyReleaseWarning", "PrivacyLeakWarning", "PrivacySpent", "PriViewSynthesizer",
           "Schema", "TrainOnSynthetic"]
