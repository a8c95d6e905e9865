"""dpsynth: differentially private synthetic tabular data, scikit-learn style.

The main estimator, :class:`DPMarginalSynthesizer`, releases differentially
private marginals of a table and samples synthetic records from them alone.
By default (``release="auto"``) ``fit`` runs the workload-aware release: DP
discovery of undeclared values, then the 1-way marginals and adaptively
selected 2- and 3-way marginals measured with Gaussian noise (after AIM).
``release="sds"`` runs instead the DP-marginals algorithm of Gopi, Mahabadi and
Yekhanin (as in Microsoft's Synthetic Data Showcase), kept for parity with
pac-synth.  The release, :class:`DPAggregates`, is the privacy boundary.
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
