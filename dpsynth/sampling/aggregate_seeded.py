"""Aggregate-seeded synthesis (SDS design document, section 4) from `DPAggregates`.

Prepares the Cython sampler's inputs (a hash table over the released
combinations, the 1-counts) from the aggregates alone and turns its output
(attribute ids) back into codes of the aggregates' public schema.  Nothing
here can see the training data: it only receives a :class:`DPAggregates`.
"""

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._core import _counting, _sampling
from .base import Sampler

__all__ = ["AggregateSeededSampler"]


class AggregateSeededSampler(Sampler):
    """The SDS aggregate-seeded sampler (parity with pac-synth).

    Records are built one attribute at a time, weighted by the released
    counts of the combinations they complete; no combination of length at
    most R that the aggregates lack is ever produced.

    Parameters
    ----------
    weight_selection_percentile : float, default=95
        Percentile of sub-combination counts used as a sampling weight once a
        record is longer than R (SDS).
    use_synthetic_counts : bool, default=False
        Subtract already-synthesized counts from sampling weights (SDS).

    Attributes
    ----------
    stats_ : dict
        Statistics of the last :meth:`sample`: ``n_records``,
        ``fallback_records``/``fallback_record_share`` (records completed by
        the fallback rule), ``fallback_cells``/``fallback_cell_share``,
        ``empty_cell_share`` and ``passes``.
    """

    #: It reads the sparse combination counts of an SDS release.
    needs_sparse_counts = True

    _parameter_constraints = {
        "weight_selection_percentile": [Interval(Real, 0, 100, closed="both")],
        "use_synthetic_counts": ["boolean"],
    }

    def __init__(self, weight_selection_percentile=95, use_synthetic_counts=False):
        self.weight_selection_percentile = weight_selection_percentile
        self.use_synthetic_counts = use_synthetic_counts

    def fit(self, aggregates):
        """Build the kernel's hash table over the released combinations."""
        self._validate_params()
        if not aggregates.tuples and aggregates.marginals:
            raise ValueError(
                "The aggregate-seeded sampler needs the sparse combination counts of an SDS "
                "release (DPMarginalSynthesizer(release='sds')); these aggregates hold "
                "dense marginals only: sample them with synthesis='marginal_matching'.")
        schema = aggregates.schema
        self.aggregates_ = aggregates
        self.complete_ = schema.missing == "category"
        self.n_attributes_ = schema.n_attributes
        self.column_of_ = np.ascontiguousarray(schema.attribute_columns, dtype=np.int32)
        self.reporting_length_ = aggregates.reporting_length
        self.bits_ = _counting.key_bits(self.n_attributes_)
        if self.bits_ * self.reporting_length_ > 64:
            raise ValueError(
                f"{self.n_attributes_} attributes at reporting length "
                f"{self.reporting_length_} do not fit a 64-bit combination key.")
        self.one_counts_ = aggregates.one_counts()
        keys = [_counting.pack_tuples(t, self.bits_) for t in aggregates.tuples]
        self.agg_counts_ = (np.concatenate(aggregates.counts) if aggregates.counts
                            else np.zeros(0, dtype=np.int64))
        self.slots_, self.slot_values_ = _counting.build_table(
            np.concatenate(keys) if keys else np.zeros(0, dtype=np.uint64),
            np.arange(self.agg_counts_.size, dtype=np.int64))
        return self

    def sample(self, n_samples, rng):
        """Codes of synthetic records (rows shuffled); ``None`` samples until every
        1-count is used up (SDS's no-target mode)."""
        ids = self.sample_ids(n_samples, rng)
        return self.aggregates_.schema.codes(ids[rng.permutation(ids.shape[0])])

    def sample_ids(self, n_samples, rng, *, complete=None):
        """Attribute ids of synthetic records in generation order; sets ``stats_``.

        ``complete`` (default: ``missing="category"``) makes every record
        get a value in every column (SDS's fallback rule fills dead ends).
        """
        check_is_fitted(self, "aggregates_")
        complete = self.complete_ if complete is None else bool(complete)
        self.aggregates_.check_samplable(complete=complete)
        target = -1 if n_samples is None else int(n_samples)
        max_records = int(self.one_counts_.sum()) if n_samples is None else target
        seed = int(rng.integers(0, 2**63))
        ids, (fallback_records, fallback_cells, passes) = _sampling.sample_records(
            self.column_of_, self.one_counts_, self.agg_counts_, self.slots_,
            self.slot_values_, len(self.aggregates_.schema), self.reporting_length_,
            self.bits_, float(self.weight_selection_percentile),
            bool(self.use_synthetic_counts), complete, target, seed, max_records)
        n = ids.shape[0]
        n_cells = max(n * ids.shape[1], 1)
        self.stats_ = {
            "n_records": n,
            "fallback_records": fallback_records,
            "fallback_record_share": fallback_records / max(n, 1),
            "fallback_cells": fallback_cells,
            "fallback_cell_share": fallback_cells / n_cells,
            "empty_cell_share": float(np.mean(ids < 0)) if n else 0.0,
            "passes": passes,
        }
        return ids

    def candidate_weights(self, partial, *, available=None, synthesized=None):
        """The kernel's weight of every attribute after the ids ``partial`` (diagnostics:
        why a record was completed the way it was)."""
        check_is_fitted(self, "aggregates_")
        available = self.one_counts_ if available is None else np.asarray(available, np.int64)
        synthesized = (np.zeros_like(self.agg_counts_) if synthesized is None
                       else np.asarray(synthesized, np.int64))
        return _sampling.candidate_weights(
            self.column_of_, self.agg_counts_, synthesized, self.slots_, self.slot_values_,
            np.ascontiguousarray(available), np.asarray(partial, dtype=np.int32),
            len(self.aggregates_.schema), self.reporting_length_, self.bits_,
            float(self.weight_selection_percentile), bool(self.use_synthetic_counts))
