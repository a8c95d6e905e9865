"""Sparse combination counts (the SDS release's form): lookups between lengths.

A release of length ``k`` is a sorted array of k-tuples of attribute ids
(a value of a column each) and their counts; checking that releases are
closed and normalised, and normalising them, needs each tuple's
(k-1)-sub-tuples' counts.
"""

import numpy as np

from .._core import _counting

__all__ = ["sub_tuple_counts"]


def sub_tuple_counts(previous_tuples, previous_counts, tuples):
    """Counts of the (k-1)-sub-tuples of every k-tuple row (-1 where not released).

    Column ``p`` of the result is the count of the row with element ``p``
    dropped.  Ids are compacted over the attributes present so that keys fit
    in 64 bits.
    """
    tuples = np.asarray(tuples)
    m, k = tuples.shape
    out = np.full((m, k), -1, dtype=np.int64)
    if m == 0 or len(previous_tuples) == 0:
        return out
    attributes = np.union1d(np.unique(previous_tuples), np.unique(tuples))
    bits = _counting.key_bits(attributes.size)
    if bits * k > 64:
        raise ValueError("too many attributes to pack the combinations in 64 bits")
    compact = np.searchsorted(attributes, previous_tuples).astype(np.int32)
    slots, values = _counting.build_table(
        _counting.pack_tuples(np.ascontiguousarray(compact), bits),
        np.arange(len(previous_tuples), dtype=np.int64))
    compact_rows = np.searchsorted(attributes, tuples).astype(np.int32)
    previous_counts = np.asarray(previous_counts, dtype=np.int64)
    for drop in range(k):
        sub = np.ascontiguousarray(np.delete(compact_rows, drop, axis=1))
        index = _counting.lookup(slots, values, _counting.pack_tuples(sub, bits))
        found = index >= 0
        out[found, drop] = previous_counts[index[found]]
    return out
