"""Counts of a population over many column sets, flat, optionally on threads.

:func:`table_layout` lays several dense tables out in one float64 array;
:func:`count_tables` and :func:`add_counts` count records into it (Cython
kernel ``_core._matching.count_cells``), :func:`move_counts` follows moved
records column by column, and :class:`TableShards` splits the tables among
threads that each touch only their own cells, so every result is exactly
that of one thread.
"""

from concurrent.futures import ThreadPoolExecutor, wait
import math

import numpy as np

from .._core import _matching
from ..utils._threads import leave_signals_to_main_thread

__all__ = ["table_layout", "count_tables", "add_counts", "population_counts", "TableShards",
           "move_counts"]


def table_layout(tables):
    """Flat layout of several tables: ``(base, column, step)`` for :func:`count_tables`.

    Parameters
    ----------
    tables : list of (columns, shape)
    """
    sizes = [math.prod(shape) for _, shape in tables]
    base = np.zeros(len(tables) + 1, dtype=np.int64)
    np.cumsum(sizes, out=base[1:])
    width = max([len(cols) for cols, _ in tables] + [1])
    column = np.zeros((len(tables), width), dtype=np.int32)
    step = np.zeros((len(tables), width), dtype=np.int64)
    for m, (cols, shape) in enumerate(tables):
        column[m, :len(cols)] = cols
        step[m, :len(cols)] = [math.prod(shape[p + 1:]) for p in range(len(cols))]
    return base, column, step


def count_tables(records, layout, tables=None):
    """Counts of ``records`` (n, d) over the tables of a :func:`table_layout`, flattened.

    ``tables`` (indices) restricts the counting to some tables; the others
    are left at 0.
    """
    counts = np.zeros(int(layout[0][-1]))
    add_counts(counts, records, layout, tables)
    return counts


def add_counts(counts, records, layout, tables=None, weight=1.0, weights=None):
    """Add ``weight`` times the counts of ``records`` to ``counts``, in place.

    As :func:`count_tables` without a new array: moving records between
    populations' counts (``weight=-1`` for the old rows, ``+1`` for the new)
    touches only the cells of the tables counted (integer counts stay
    exact in float64).  ``weights`` (one per row, or None) counts row ``i``
    ``weights[i]`` times: distinct rows with their numbers of records give
    the counts of the records.
    """
    base, column, step = layout
    starts = base[:-1]
    if tables is not None:
        starts, column, step = starts[tables], column[tables], step[tables]
    if len(starts) and len(records):
        _matching.count_cells(np.ascontiguousarray(np.asarray(records, dtype=np.int32).T),
                              counts, np.ascontiguousarray(starts),
                              np.ascontiguousarray(column), np.ascontiguousarray(step),
                              float(weight),
                              None if weights is None else np.ascontiguousarray(weights,
                                                                                dtype=float))


def population_counts(records, tables):
    """Counts of ``records`` (n, d) over several column sets, flattened in one array.

    Parameters
    ----------
    records : ndarray of int32, shape (n, d)
    tables : list of (columns, shape)

    Returns
    -------
    counts : ndarray of float64
    base : ndarray of int64
        Start of every table in ``counts`` (one more entry: the total size).
    """
    layout = table_layout(tables)
    return count_tables(records, layout), layout[0]


class TableShards:
    """Disjoint ranges of a layout's tables, one per thread, for counting and scoring.

    Every thread reads and writes only the cells of its own tables, so the
    results are exactly (bitwise) those of one thread; the kernels release
    the GIL.  Use as a context manager (the threads end with it).

    Parameters
    ----------
    layout : tuple
        From :func:`table_layout`.
    n_threads : int
        Threads (at most one per 1,000 tables; 1: everything on the caller's).
    """

    def __init__(self, layout, n_threads):
        self.layout = layout
        n_tables = len(layout[0]) - 1
        parts = max(1, min(int(n_threads), n_tables // 1_000))
        self.bounds = [n_tables * k // parts for k in range(parts + 1)]
        self._executor = None

    def __enter__(self):
        if len(self.bounds) > 2:
            self._executor = ThreadPoolExecutor(max_workers=len(self.bounds) - 1,
                                                initializer=leave_signals_to_main_thread)
        return self

    def __exit__(self, *exc):
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def map(self, func):
        """``[func(lo, hi) for every shard's tables lo..hi - 1]``, on the threads."""
        ranges = list(zip(self.bounds[:-1], self.bounds[1:]))
        if self._executor is None:
            return [func(lo, hi) for lo, hi in ranges]
        futures = [self._executor.submit(func, lo, hi) for lo, hi in ranges]
        try:
            return [f.result() for f in futures]
        except BaseException:  # Ctrl-C or a failure: wait for the others (they share counts)
            for f in futures:
                f.cancel()
            wait(futures)
            raise

    def count(self, records):
        """Counts of ``records`` (n, d) over every table, flattened (as :func:`count_tables`)."""
        counts = np.zeros(int(self.layout[0][-1]))
        self.map(lambda lo, hi: add_counts(counts, records, self.layout, np.arange(lo, hi)))
        return counts

    def distance(self, data, population, scale):
        """``sum |data - scale * population|`` per table (``_matching.table_distance``)."""
        base = self.layout[0]
        return np.concatenate(self.map(lambda lo, hi: _matching.table_distance(
            data, population, scale, base[lo:hi + 1])))


def move_counts(counts, previous, current, layout, tables_of_column, shards=None):
    """Update ``counts`` from the records ``previous`` to ``current`` (same rows), in place.

    A record whose value changed in column ``c`` changes only the cells of
    the tables holding ``c``.  The changes are applied one column at a time
    (each record walks through the states in which its first changed
    columns already hold their new values), so every pair (record, changed
    column) recounts only the tables holding that column: about ``d / 3``
    times less work on 3-way tables than recounting every table of every
    moved record, with the same exact integer counts.

    Parameters
    ----------
    counts : ndarray of float64
        Counts of ``previous`` over the tables of ``layout``; updated.
    previous, current : ndarray of int, shape (n, d)
    layout : tuple
        From :func:`table_layout`.
    tables_of_column : list of ndarray of int
        Indices of the tables holding each column, increasing.
    shards : TableShards, optional
        Count on its threads.
    """
    changed = previous != current
    moved = np.flatnonzero(changed.any(axis=1))
    if not moved.size:
        return
    changed = changed[moved]
    state = np.array(previous[moved], dtype=np.int32)
    target = current[moved]
    steps = []  # (column, its changed records before, after)
    for c in np.flatnonzero(changed.any(axis=0)):
        if len(tables_of_column[c]):  # a column no table holds is never read
            rows = np.flatnonzero(changed[:, c])
            before = state[rows]
            state[rows, c] = target[rows, c]
            steps.append((c, before, state[rows]))

    def move(lo, hi):
        for c, before, after in steps:
            tables = tables_of_column[c]
            tables = tables[np.searchsorted(tables, lo):np.searchsorted(tables, hi)]
            if len(tables):
                add_counts(counts, before, layout, tables, weight=-1.0)
                add_counts(counts, after, layout, tables)

    if shards is None:
        move(0, len(layout[0]) - 1)
    else:
        shards.map(move)
