"""The encoded private table as blocks of codes, read by sums of per-block statistics."""

from concurrent.futures import ThreadPoolExecutor
from functools import reduce

import threading

import numpy as np

from .._core import _counting
from ..utils._threads import leave_signals_to_main_thread

__all__ = ["CodeBlocks", "InMemoryCodes", "as_blocks", "is_dask_collection", "by_lookup"]

MAX_DISTINCT_SHARE = 0.5
"""Above this share of distinct rows, :class:`InMemoryCodes` reads every row."""


def is_dask_collection(X):
    """Whether ``X`` is a dask collection (checked without importing dask)."""
    return type(X).__module__.split(".")[0] in ("dask", "dask_expr") and hasattr(
        X, "__dask_graph__")


class CodeBlocks:
    """An encoded table split into blocks of rows (each an int32 array ``(n_b, d)``).

    The only way to read it is :meth:`map_sum`: a function of one block whose
    results are added over the blocks.  Release mechanisms count through it,
    so they run unchanged on a table in memory or on a cluster.
    :meth:`map` composes a per-record transformation (e.g. recoding to the
    public schema) that is applied lazily to every block.
    """

    n_columns: int

    def map_sum(self, func, indexed=False):
        """``sum(func(block) for block in blocks)``; ``func`` returns an array or a tuple of arrays.

        With ``indexed=True`` it is called as ``func(block, start)``, where
        ``start`` is the position in the whole table of the block's first row.
        """
        raise NotImplementedError

    def map(self, func, once=False):
        """Blocks ``func(block)`` for every block (lazy; ``func`` maps rows to rows).

        ``once=True`` says the result is read once: an engine that would
        otherwise keep the mapped rows may apply ``func`` at that read instead.
        """
        raise NotImplementedError

    def sum_into(self, make, add):
        """:meth:`map_sum` of a statistic added in place: ``add(out, block)`` adds one
        block's statistic into the array ``out = make()`` (zeros).

        The same sum as ``map_sum(lambda block: add(make(), block) or ...)``;
        in memory one ``out`` per thread serves all its blocks (a statistic
        as large as the candidate tables' counts is not made again per block).
        """
        def statistic(block):
            out = make()
            add(out, block)
            return out
        return self.map_sum(statistic)

    def sum_distinct_into(self, make, add):
        """:meth:`sum_into` of a statistic that adds up over records, given weighted rows:
        ``add(out, rows, weights)`` adds the statistic of ``rows`` counted ``weights[i]``
        times each (float64), or once each when ``weights`` is None.

        The same sum as ``sum_into(make, lambda out, block: add(out, block, None))``,
        which is what this default does; an engine may instead pass each distinct
        row once with its number of records (a table with repeated rows is then
        read at the cost of its distinct rows).
        """
        return self.sum_into(make, lambda out, block: add(out, block, None))

    def n_rows(self):
        """Number of rows (private: only for accounted mechanisms, e.g. a noisy count)."""
        raise NotImplementedError

    def column_counts(self, columns, n_values):
        """Counts of the codes ``0..n_values[j] - 1`` of each column ``j`` in ``columns``.

        Returns a tuple of float arrays, one per column.
        """
        return self.map_sum(lambda block: tuple(
            np.bincount(block[:, j][block[:, j] >= 0], minlength=int(n_values[j]))
            .astype(float) for j in columns))


class InMemoryCodes(CodeBlocks):
    """A code matrix in memory, summed in row chunks on ``n_threads`` threads.

    The kernels release the GIL, so chunks count in parallel; counts are
    integers, so the sum does not depend on the chunks.

    Parameters
    ----------
    codes : ndarray of int, shape (n, d)
    n_threads : int, default=1
    chunk_rows : int, default=100_000
        Rows per chunk with several threads (small chunks keep Ctrl-C prompt:
        the running ones finish, the others are cancelled).
    """

    def __init__(self, codes, n_threads=1, chunk_rows=100_000):
        self.codes = np.asarray(codes)
        if self.codes.ndim != 2:
            raise ValueError(f"codes must be 2-D; got shape {self.codes.shape}.")
        self.n_columns = self.codes.shape[1]
        self.n_threads = max(int(n_threads), 1)
        self.chunk_rows = int(chunk_rows)
        self._distinct = None  # (rows, counts), or False: too many distinct rows

    def _thread_totals(self, work, n=None):
        """``work(chunk_starts, stop)`` on each of ``n_threads`` threads, each given every
        ``n_threads``-th chunk start of rows ``0..n - 1`` (default: every row), and their
        results in a list.  On Ctrl-C or a failure ``stop`` is set, so the threads
        start no more chunks."""
        starts = range(0, self.codes.shape[0] if n is None else n, self.chunk_rows)
        stop = threading.Event()
        with ThreadPoolExecutor(max_workers=self.n_threads,
                                initializer=leave_signals_to_main_thread) as executor:
            try:
                return list(executor.map(lambda first: work(starts[first::self.n_threads], stop),
                                         range(min(self.n_threads, len(starts)))))
            except BaseException:
                stop.set()
                executor.shutdown(wait=True, cancel_futures=True)
                raise

    def map_sum(self, func, indexed=False):
        n = self.codes.shape[0]
        if self.n_threads <= 1 or n < 2 * self.chunk_rows:
            return func(self.codes, 0) if indexed else func(self.codes)

        def work(chunk_starts, stop):
            # each thread sums its own chunks in place: memory for n_threads
            # results, however many chunks finish before they are added up
            total = None
            for start in chunk_starts:
                if stop.is_set():
                    return None
                block = self.codes[start:start + self.chunk_rows]
                result = func(block, start) if indexed else func(block)
                total = result if total is None else _add_into(total, result)
            return total

        return reduce(add_results, self._thread_totals(work))

    def sum_into(self, make, add):
        return self._sum_chunks(make, lambda out, start, stop: add(out, self.codes[start:stop]))

    def _sum_chunks(self, make, add, n=None):
        """``add(out, start, stop)`` over the chunks of rows ``0..n - 1`` (default: every
        row), into one ``out = make()`` per thread; their sum."""
        n = self.codes.shape[0] if n is None else n
        if self.n_threads <= 1 or n < 2 * self.chunk_rows:
            out = make()
            for start in range(0, n, self.chunk_rows):  # chunks bound the temporaries
                add(out, start, min(start + self.chunk_rows, n))
            return out

        def work(chunk_starts, stop):
            out = make()
            for start in chunk_starts:
                if stop.is_set():
                    return None
                add(out, start, min(start + self.chunk_rows, n))
            return out

        return reduce(_add_into, self._thread_totals(work, n))

    def sum_distinct_into(self, make, add):
        """:meth:`CodeBlocks.sum_distinct_into`: each distinct row once, with its number
        of records, unless the rows are mostly distinct (then every row, unweighted)."""
        distinct = self.distinct_rows()
        if distinct is None:
            return super().sum_distinct_into(make, add)
        rows, counts = distinct
        weights = counts.astype(float)
        return self._sum_chunks(
            make, lambda out, start, stop: add(out, rows[start:stop], weights[start:stop]),
            rows.shape[0])

    def column_counts(self, columns, n_values):
        distinct = self.distinct_rows()
        if distinct is None:
            return super().column_counts(columns, n_values)
        rows, counts = distinct
        return tuple(np.bincount(rows[:, j][rows[:, j] >= 0], counts[rows[:, j] >= 0],
                                 minlength=int(n_values[j])).astype(float) for j in columns)

    def distinct_rows(self):
        """The distinct rows and how many times each occurs, or None when more than
        ``MAX_DISTINCT_SHARE`` of the rows are distinct (then reading every row costs
        about as much).  Found by hashing on the threads, once (kept for later calls).

        Returns
        -------
        (rows, counts) or None
            ``rows`` int32 of shape (m, d), ``counts`` int64 of shape (m,).
        """
        if self._distinct is None:
            self._distinct = _distinct_rows(self.codes, self.n_threads,
                                            MAX_DISTINCT_SHARE) or False
        return self._distinct or None

    def map(self, func, once=False):
        """``func`` applied chunk by chunk (rows of ``chunk_rows``) into one array:
        its temporaries then take memory for one chunk, not for the whole matrix.
        With ``once=True`` nothing is kept: ``func`` is applied to the rows (or
        the distinct rows) as the single read gets them."""
        if once:
            return _MappedCodes(self, func)
        n = self.codes.shape[0]
        if n <= self.chunk_rows:
            out = np.asarray(func(self.codes))
        else:
            first = np.asarray(func(self.codes[:self.chunk_rows]))
            out = np.empty((n,) + first.shape[1:], dtype=first.dtype)
            out[:self.chunk_rows] = first
            for start in range(self.chunk_rows, n, self.chunk_rows):
                out[start:start + self.chunk_rows] = func(self.codes[start:start + self.chunk_rows])
        return InMemoryCodes(out, self.n_threads, self.chunk_rows)

    def n_rows(self):
        return self.codes.shape[0]


class _MappedCodes(CodeBlocks):
    """:meth:`InMemoryCodes.map` with ``once=True``: ``func`` applied to what each read
    gets from the codes (chunks, or distinct rows with their numbers of records)."""

    def __init__(self, codes, func):
        self.source, self.func = codes, func
        self.n_columns = np.shape(func(codes.codes[:1]))[1]

    def map_sum(self, func, indexed=False):
        if indexed:
            return self.source.map_sum(lambda block, start: func(self.func(block), start), True)
        return self.source.map_sum(lambda block: func(self.func(block)))

    def sum_into(self, make, add):
        return self.source.sum_into(make, lambda out, block: add(out, self.func(block)))

    def sum_distinct_into(self, make, add):
        return self.source.sum_distinct_into(
            make, lambda out, rows, weights: add(out, self.func(rows), weights))

    def map(self, func, once=False):
        inner = self.func
        return _MappedCodes(self.source, lambda block: func(inner(block)))

    def n_rows(self):
        return self.source.n_rows()


def by_lookup(func, n_values):
    """``func``, a recoding of code blocks column by column, as one lookup per column.

    Column ``j`` of ``func(block)`` must depend only on column ``j`` of
    ``block``, whose codes lie in ``-1 .. n_values[j] - 1``; ``func`` is
    applied once, to every code, and the returned function gathers its
    results (the same output, without ``func``'s temporaries per block).
    """
    n_values = np.asarray(n_values, dtype=np.int64)
    largest = int(n_values.max()) if n_values.size else 0
    probe = np.minimum(np.arange(-1, largest, dtype=np.int32)[:, None],
                       (n_values - 1).astype(np.int32)[None, :])
    table = np.ascontiguousarray(np.asarray(func(probe)).T)  # (d, largest + 1)

    def recode(block):
        block = np.asarray(block)
        if block.ndim != 2 or block.shape[1] != n_values.size:
            raise ValueError("codes must be a 2-D array with one column per entry of n_values.")
        if block.size and (block.min() < -1 or np.any(block.max(axis=0) >= n_values)):
            raise ValueError("codes must lie in -1..n_values[c] - 1 for every column c.")
        out = np.empty(block.shape, dtype=table.dtype)
        for j in range(n_values.size):
            out[:, j] = table[j].take(block[:, j] + 1)
        return out

    return recode


def as_blocks(codes):
    """``codes`` as :class:`CodeBlocks` (an array becomes :class:`InMemoryCodes`)."""
    return codes if isinstance(codes, CodeBlocks) else InMemoryCodes(codes)


def _add_into(a, b):
    """``a + b`` for :meth:`CodeBlocks.map_sum` results, into ``a``'s arrays where it can."""
    if isinstance(a, tuple):
        return tuple(_add_into(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) and a.dtype == np.result_type(a, b) and a.shape == np.shape(b):
        a += b
        return a
    return a + b


def add_results(a, b):
    """Sum of two :meth:`CodeBlocks.map_sum` results (arrays, or tuples of arrays)."""
    if isinstance(a, tuple):
        return tuple(add_results(x, y) for x, y in zip(a, b))
    return a + b


def _distinct_rows(codes, n_threads, max_share):
    """:meth:`InMemoryCodes.distinct_rows` (None: more than ``max_share`` distinct)."""
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    n = codes.shape[0]
    limit = int(max_share * n)
    parts = max(1, min(n_threads, n // 100_000))
    bounds = [n * k // parts for k in range(parts + 1)]
    if parts == 1:
        return _counting.distinct_codes(codes, 0, n, limit)
    with ThreadPoolExecutor(max_workers=parts,
                            initializer=leave_signals_to_main_thread) as executor:
        found = list(executor.map(lambda k: _counting.distinct_codes(  # each part's share
            codes, bounds[k], bounds[k + 1], int(max_share * (bounds[k + 1] - bounds[k]))),
            range(parts)))
    if any(part is None for part in found):
        return None
    rows = np.concatenate([part[0] for part in found])
    counts = np.concatenate([part[1] for part in found])
    # a row met in several parts is merged, its counts added
    return _counting.distinct_codes(rows, 0, rows.shape[0], limit, counts)
