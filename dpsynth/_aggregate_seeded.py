"""Aggregate-seeded synthesis (SDS design document, section 4) from `DPAggregates`.

Prepares the Cython sampler's inputs (a hash table over the released
combinations, the 1-counts) from the aggregates alone and turns its output
(attribute ids) back into codes of the aggregates' public encoder.  Nothing
here can see the training data: it only receives a :class:`DPAggregates`.
"""

import numpy as np

from ._core import _counting, _sampling

__all__ = ["AggregateSeededSampler"]


class AggregateSeededSampler:
    """The SDS sampler bound to one :class:`DPAggregates`.

    Parameters
    ----------
    aggregates : DPAggregates
    weight_selection_percentile : float
    use_synthetic_counts : bool
    """

    def __init__(self, aggregates, weight_selection_percentile=95,
                 use_synthetic_counts=False):
        self.aggregates = aggregates
        self.weight_selection_percentile = float(weight_selection_percentile)
        self.use_synthetic_counts = bool(use_synthetic_counts)
        encoder = aggregates.encoder
        self.n_attributes = int(encoder.offsets_[-1])
        self.column_of = np.ascontiguousarray(encoder.attribute_columns_, dtype=np.int32)
        self.reporting_length = aggregates.reporting_length
        self.bits = _counting.key_bits(self.n_attributes)
        if self.bits * self.reporting_length > 64:
            raise ValueError(
                f"{self.n_attributes} attributes at reporting length "
                f"{self.reporting_length} do not fit a 64-bit combination key.")
        self.one_counts = aggregates.one_counts()
        keys = [_counting.pack_tuples(t, self.bits) for t in aggregates.tuples]
        self.agg_counts = (np.concatenate(aggregates.counts) if aggregates.counts
                           else np.zeros(0, dtype=np.int64))
        self.slots, self.slot_values = _counting.build_table(
            np.concatenate(keys) if keys else np.zeros(0, dtype=np.uint64),
            np.arange(self.agg_counts.size, dtype=np.int64))

    def sample(self, n_samples, rng, *, complete):
        """Attribute ids of synthetic records and sampling statistics.

        ``n_samples=None`` samples until every 1-count is used up.
        """
        self.aggregates.check_samplable(complete=complete)
        target = -1 if n_samples is None else int(n_samples)
        max_records = int(self.one_counts.sum()) if n_samples is None else target
        seed = int(rng.integers(0, 2**63))
        ids, (fallback_records, fallback_cells, passes) = _sampling.sample_records(
            self.column_of, self.one_counts, self.agg_counts, self.slots,
            self.slot_values, len(self.aggregates.encoder.columns_),
            self.reporting_length, self.bits, self.weight_selection_percentile,
            self.use_synthetic_counts, complete, target, seed, max_records)
        n = ids.shape[0]
        n_cells = max(n * ids.shape[1], 1)
        stats = {
            "n_records": n,
            "fallback_records": fallback_records,
            "fallback_record_share": fallback_records / max(n, 1),
            "fallback_cells": fallback_cells,
            "fallback_cell_share": fallback_cells / n_cells,
            "empty_cell_share": float(np.mean(ids < 0)) if n else 0.0,
            "passes": passes,
        }
        return ids, stats

    def to_codes(self, ids):
        """Attribute ids (-1 empty) -> codes of the public encoder (-1 empty)."""
        offsets = self.aggregates.encoder.offsets_[:-1].astype(np.int32)
        return np.where(ids >= 0, ids - offsets, -1).astype(np.int32)

    def candidate_weights(self, partial, *, available=None, synthesized=None):
        """Kernel weights of every attribute after ``partial`` (tests/diagnostics)."""
        available = self.one_counts if available is None else np.asarray(available, np.int64)
        synthesized = (np.zeros_like(self.agg_counts) if synthesized is None
                       else np.asarray(synthesized, np.int64))
        return _sampling.candidate_weights(
            self.column_of, self.agg_counts, synthesized, self.slots, self.slot_values,
            np.ascontiguousarray(available), np.asarray(partial, dtype=np.int32),
            len(self.aggregates.encoder.columns_), self.reporting_length,
            self.bits, self.weight_selection_percentile, self.use_synthetic_counts)
