"""The flat arrays the descent kernel reads for a population and its target tables.

The descent (``_core._matching.descend``) keeps the residual ``P - T`` of
every target (float64) and, for every target and each of its columns ``j``,
a float32 copy of the weighted residual with ``j`` as the innermost axis:
scoring all values of ``j`` for a record then reads one contiguous run per
target instead of one cache line per value.  A move rewrites the affected
cells of every copy from the float64 residual, so copies never drift.  The
residual and its copies take 8 + 4 k bytes per cell of a k-way table.
"""

import math
from typing import NamedTuple

import numpy as np

from .._core import _matching

__all__ = ["DescentLayout", "descent_layout"]


class DescentLayout(NamedTuple):
    """The arrays :func:`_matching.descend` reads, in its argument order.

    ``residual`` holds ``P - T`` of every target (float64, C order) and
    ``copies`` the weighted ``w * (P - T)`` (float32) once per column ``j``
    of each target, with ``j`` innermost.  The ``target_*`` arrays describe
    each target table (first cell, columns, strides, weight, its entries);
    the ``entry_*`` arrays each copy (by column), ``other_*`` the other
    columns of an entry's target.  Unused column slots hold column 0 with
    step 0.
    """

    residual: np.ndarray
    copies: np.ndarray
    target_base: np.ndarray
    target_column: np.ndarray
    target_step: np.ndarray
    target_weight: np.ndarray
    target_start: np.ndarray
    target_entry: np.ndarray
    copy_step: np.ndarray
    entry_start: np.ndarray
    entry_column: np.ndarray
    entry_target: np.ndarray
    entry_position: np.ndarray
    entry_base: np.ndarray
    other_column: np.ndarray
    other_step: np.ndarray


def descent_layout(records, targets):
    """Residual, its copies and the entry tables of :func:`_matching.descend`.

    Parameters
    ----------
    records : ndarray of int32, shape (n, n_columns)
        Codes of the population (in the tables' value order).
    targets : list of (columns, table, weight)
        Target counts, already scaled to ``n`` records.

    Returns
    -------
    DescentLayout
        The arguments of :func:`_matching.descend` from ``residual`` to
        ``other_step`` (8 + 4 k bytes per cell of a k-way target).
    """
    d = records.shape[1]
    n_targets = len(targets)
    target_width = max([len(cols) for cols, _, _ in targets] + [1])
    width = max(target_width - 1, 2)  # the kernel has a fast path for width 2
    sizes = np.array([table.size for _, table, _ in targets], dtype=np.int64)
    target_base = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    target_column = np.zeros((n_targets, target_width), dtype=np.int32)
    target_step = np.zeros((n_targets, target_width), dtype=np.int64)
    for m, (cols, table, _) in enumerate(targets):
        target_column[m, :len(cols)] = cols
        target_step[m, :len(cols)] = [math.prod(table.shape[p + 1:]) for p in range(len(cols))]
    residual = np.empty(int(target_base[-1]))
    for m, (_, table, _) in enumerate(targets):
        np.negative(table.ravel(), out=residual[target_base[m]:target_base[m + 1]])
    _matching.count_cells(np.ascontiguousarray(records.T), residual, target_base[:-1],
                          target_column, target_step)
    # the kernel reads up to 15 values past a run: pad with zeros
    copies = np.zeros(int(sum(len(cols) * table.size for cols, table, _ in targets)) + 16,
                      dtype=np.float32)
    entries, offset = [], 0
    for m, (cols, table, weight) in enumerate(targets):
        cells = residual[target_base[m]:target_base[m + 1]].reshape(table.shape)
        for position, column in enumerate(cols):
            order = [p for p in range(len(cols)) if p != position] + [position]
            copy = copies[offset:offset + table.size].reshape([table.shape[p] for p in order])
            np.multiply(cells.transpose(order), weight, out=copy, casting="same_kind")
            strides = [0] * len(cols)  # by position in the target: the copy's, C order
            stride = 1
            for p in reversed(order):
                strides[p] = stride
                stride *= table.shape[p]
            entries.append((column, m, offset, position, strides))
            offset += table.size
    entries.sort(key=lambda entry: entry[0])  # stable: by column, then target
    entry_column = np.array([entry[0] for entry in entries], dtype=np.int32)
    entry_target = np.array([entry[1] for entry in entries], dtype=np.int64)
    entry_base = np.array([entry[2] for entry in entries], dtype=np.int64)
    entry_position = np.array([entry[3] for entry in entries], dtype=np.int32)
    other_column = np.zeros((len(entries), width), dtype=np.int32)
    other_step = np.zeros((len(entries), width), dtype=np.int64)
    copy_step = np.zeros((len(entries), target_width), dtype=np.int64)
    target_entry = np.argsort(entry_target, kind="stable").astype(np.int64)
    for e, (_, m, _, position, strides) in enumerate(entries):
        others = [p for p in range(len(strides)) if p != position]
        other_column[e, :len(others)] = target_column[m, others]
        other_step[e, :len(others)] = [strides[p] for p in others]
    for i, e in enumerate(target_entry):
        strides = entries[e][4]
        copy_step[i, :len(strides)] = strides
    target_start = np.searchsorted(entry_target[target_entry],
                                   np.arange(n_targets + 1)).astype(np.int64)
    entry_start = np.searchsorted(entry_column, np.arange(d + 1)).astype(np.int64)
    target_weight = np.array([weight for _, _, weight in targets], dtype=np.float64)
    return DescentLayout(residual, copies, target_base[:-1], target_column, target_step,
                         target_weight, target_start, target_entry, copy_step, entry_start,
                         entry_column, entry_target, entry_position, entry_base,
                         other_column, other_step)
