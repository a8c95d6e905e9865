"""Fidelity, utility and SDS-style error metrics for synthetic data.

All metrics compare synthetic data (or DP aggregates) with *real* data, so
their values are not differentially private releases: publishing them spends
privacy that no budget accounts for.

- :func:`marginal_tvd`: mean total variation distance of k-way marginals.
- :func:`k_marginal_score`: the NIST CRC / SDNist k-marginal score (0-1000).
- :func:`combination_counts`, :func:`aggregate_error_report`: the Synthetic
  Data Showcase evaluation of attribute-combination counts.
- :func:`wasserstein_numeric`, :func:`numeric_quantiles`, :func:`value_shares`:
  numeric columns on their original scale (W1 / range, quantiles, point masses).
- :func:`quality_report`, :func:`column_shapes`, :func:`column_pair_trends`:
  the SDMetrics-style quality report (Column Shapes, Column Pair Trends).
- :func:`tstr_score`: train on synthetic, test on real.
- :func:`make_fidelity_scorer`: a scorer for ``GridSearchCV`` over synthesizers.
"""

from ._tvd import k_marginal_score, marginal_tvd
from ._scorers import make_fidelity_scorer
from ._sds import AggregateErrorReport, aggregate_error_report, combination_counts
from ._tstr import tstr_score
from ._numeric import numeric_quantiles, value_shares, wasserstein_numeric
from ._quality import column_pair_trends, column_shapes, quality_report

__all__ = [
    "AggregateErrorReport",
    "aggregate_error_report",
    "column_pair_trends",
    "column_shapes",
    "combination_counts",
    "k_marginal_score",
    "make_fidelity_scorer",
    "marginal_tvd",
    "numeric_quantiles",
    "quality_report",
    "tstr_score",
    "value_shares",
    "wasserstein_numeric",
]
