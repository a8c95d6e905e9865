"""Fit a population of records to dense target marginals (post-processing).

:func:`fit_population` draws ``n`` records column by column from the 1-way
distributions implied by the targets, then moves them by the greedy
coordinate descent of :mod:`dpsynth.sampling.marginal_matching` (Cython kernel
``_core._matching.descend``) on the weighted squared error
``sum_m w_m ||P_m - T_m||^2`` between the population's counts ``P_m`` and
the targets ``T_m`` (rescaled to ``n`` records).

Noisy tables need no clipping: the population's counts are non-negative
integers, so the descent computes (greedily) the weighted least-squares
projection of the targets onto the marginals of actual populations, which
is non-negative and consistent by construction.  With the targets'
inverse noise variances as weights, this is the estimator that Private-PGM
and AIM use (McKenna et al. 2019, 2022: ``min_p sum_r ||M_r(p) - y_r||^2 /
sigma_r^2``), over populations instead of graphical models.  A value whose
estimated 1-way count is not positive is never written (it is pruned).
"""

from concurrent.futures import ThreadPoolExecutor, wait
from itertools import combinations
import math

import numpy as np

from .._core import _matching
from ..metrics._encoding import combined_key
from ..sampling.marginal_matching import _layout
from ..utils._threads import leave_signals_to_main_thread

__all__ = ["one_way_estimates", "fit_population", "descend", "population_counts",
           "table_layout", "count_tables", "add_counts", "TableShards", "move_counts",
           "mix_within_neighbourhoods", "round_to_reference"]


def one_way_estimates(n_values, targets):
    """Per-column counts implied by the targets (the most precise target holding the column).

    Parameters
    ----------
    n_values : array-like of int
    targets : list of ``(columns, table, weight)``

    Returns
    -------
    list of ndarray
        One non-negative float array per column (uniform if no target
        holds the column or its clipped counts are all 0).
    """
    n_values = np.asarray(n_values)
    best = {}
    for cols, table, weight in targets:
        for p, c in enumerate(cols):
            # marginalising a k-way table adds the noise of the cells summed:
            # prefer high weight per summed cell
            cells = np.asarray(table).size // int(n_values[c])
            score = weight / max(cells, 1)
            if c not in best or score > best[c][0]:
                axes = tuple(q for q in range(len(cols)) if q != p)
                best[c] = (score, np.asarray(table, dtype=float).sum(axis=axes))
    out = []
    for c in range(n_values.size):
        counts = np.maximum(best[c][1], 0.0) if c in best else np.zeros(int(n_values[c]))
        if not counts.sum() > 0:
            counts = np.ones(int(n_values[c]))
        out.append(counts)
    return out


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


def add_counts(counts, records, layout, tables=None, weight=1.0):
    """Add ``weight`` times the counts of ``records`` to ``counts``, in place.

    As :func:`count_tables` without a new array: moving records between
    populations' counts (``weight=-1`` for the old rows, ``+1`` for the new)
    touches only the cells of the tables counted (integer counts stay
    exact in float64).
    """
    base, column, step = layout
    starts = base[:-1]
    if tables is not None:
        starts, column, step = starts[tables], column[tables], step[tables]
    if len(starts) and len(records):
        _matching.count_cells(np.ascontiguousarray(np.asarray(records, dtype=np.int32).T),
                              counts, np.ascontiguousarray(starts),
                              np.ascontiguousarray(column), np.ascontiguousarray(step),
                              float(weight))


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


def descend(records, n_values, targets, rng, *, sweeps=1, columns=None, allowed=None,
            total=None, settle=0.0):
    """Greedy coordinate descent of ``records`` towards weighted targets, in place.

    Parameters
    ----------
    records : ndarray of int32, shape (n, d), C-contiguous
        Updated in place.
    n_values : array-like of int
    targets : list of ``(columns, table, weight)``
        Tables of any sign; rescaled by ``n / total``.
    rng : numpy.random.Generator or int or None
        Visiting orders.
    sweeps : int, default=1
    columns : sequence of int, optional
        Columns visited by each sweep (default: all, in a random order).
    allowed : list of ndarray of bool, optional
        Values that may be written, per column (default: all).
    total : float, optional
        Number of records the targets describe (default: the first
        target's sum).
    settle : float, default=0.0
        A column whose visit in a sweep moves fewer than ``settle * n``
        records is skipped by the later sweeps (0: every sweep visits every
        column).  The visiting orders are drawn as without it.

    Returns
    -------
    ndarray
        Number of moves per sweep.
    """
    n, d = records.shape
    n_values = np.asarray(n_values)
    if not targets or n == 0:
        return np.zeros(sweeps, dtype=np.int64)
    if total is None:
        total = float(np.sum(targets[0][1]))
    scale = n / max(float(total), 1e-12)
    if allowed is None:
        allowed = [np.ones(int(k), dtype=bool) for k in n_values]
    # values never written nor held are left out of every table
    keep = [np.flatnonzero(allowed[j] | (np.bincount(records[:, j], minlength=int(n_values[j]))
                                         > 0)) for j in range(d)]
    code = np.empty_like(records)
    for j in range(d):
        recode = np.full(int(n_values[j]), -1, dtype=np.int32)
        recode[keep[j]] = np.arange(keep[j].size, dtype=np.int32)
        code[:, j] = recode[records[:, j]]
    sizes = np.array([k.size for k in keep], dtype=np.int32)
    allowed_flat = np.concatenate([allowed[j][keep[j]] for j in range(d)]).astype(np.uint8)
    value_base = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    tables = []
    for cols, table, weight in targets:
        cols = tuple(int(c) for c in cols)
        table = np.asarray(table, dtype=np.float64) * scale
        table = table[np.ix_(*[keep[c] for c in cols])]
        tables.append((cols, table, float(weight)))
    layout = _layout(code, tables)
    record_orders = np.array([rng.permutation(n) for _ in range(sweeps)],
                             dtype=np.int64).reshape(sweeps, n)
    if columns is None:
        column_orders = np.array([rng.permutation(d) for _ in range(sweeps)], dtype=np.int32)
    else:
        columns = np.asarray(columns, dtype=np.int32)
        column_orders = np.array([rng.permutation(columns) for _ in range(sweeps)],
                                 dtype=np.int32)
    column_orders = column_orders.reshape(sweeps, -1)
    moves = _matching.descend(code, *layout, sizes, allowed_flat, value_base,
                              record_orders, column_orders,
                              min_moves=math.ceil(settle * n))
    for j in range(d):
        records[:, j] = keep[j][code[:, j]]
    return moves


def fit_population(n_values, targets, n, rng, *, sweeps=3, total=None, init=None,
                   settle=0.0):
    """A population of ``n`` records fitted to dense target marginals.

    Parameters
    ----------
    n_values : array-like of int
        Number of codes of every column (public).
    targets : list of ``(columns, table, weight)``
        Dense tables (shape ``n_values[columns]``, any sign, e.g. noisy
        measurements or GLS-consistent marginals) and their weights in the
        loss (e.g. inverse noise variance).
    n : int
        Number of records.
    rng : numpy.random.Generator or int or None
        Source of all randomness (initial draws, visiting orders).
    sweeps : int, default=3
        Passes over all (record, column) pairs.
    total : float, optional
        Number of records the targets describe (default: the first target's
        sum); tables are rescaled by ``n / total``.
    init : ndarray of int, shape (n, d), optional
        Starting population (copied) instead of independent draws.
    settle : float, default=0.0
        See :func:`descend`.

    Returns
    -------
    ndarray of int32, shape (n, d)
    """
    rng = np.random.default_rng(rng)
    n_values = np.asarray(n_values)
    d = n_values.size
    one_way = one_way_estimates(n_values, targets)
    allowed = [counts > 0 for counts in one_way]
    if init is not None:
        records = np.array(init, dtype=np.int32, order="C", copy=True)
        if records.shape != (n, d):
            raise ValueError(f"init must have shape ({n}, {d}); got {records.shape}.")
    else:
        records = np.empty((n, d), dtype=np.int32)
        for j in range(d):
            records[:, j] = rng.choice(int(n_values[j]), size=n, p=one_way[j] / one_way[j].sum())
    if total is None and targets:
        total = float(np.sum(targets[0][1]))
    descend(records, n_values, targets, rng, sweeps=sweeps, allowed=allowed, total=total,
            settle=settle)
    return records


def mix_within_neighbourhoods(records, n_values, column_sets, rng):
    """Permute each column's values among records that agree on its neighbours, in place.

    Two columns are neighbours when some measured set holds both.  Swapping
    column ``c``'s values between records with the same values on all of
    ``c``'s neighbours leaves the counts of every measured set unchanged (a
    set holding ``c`` holds only neighbours besides it; the others do not
    hold ``c``), so the fit's loss is unchanged.  What changes is the
    dependence between columns never measured together, which the descent
    creates arbitrarily: after a random permutation within every group,
    ``c`` is independent of its non-neighbours given its neighbours, the
    Markov property of the maximum-entropy distribution with the measured
    marginals (the graphical model Private-PGM and AIM fit); it lowered the
    3-way TVD on the benchmarks (see ``benchmarks/LOG.md``).

    Parameters
    ----------
    records : ndarray of int32, shape (n, d)
        Updated in place.
    n_values : array-like of int
        Number of codes of every column.
    column_sets : iterable of tuple of int
        The measured column sets.
    rng : numpy.random.Generator
        The permutations (one pass over the columns in a random order).
    """
    n, d = records.shape
    neighbours = [set() for _ in range(d)]
    for cols in column_sets:
        for c in cols:
            neighbours[c].update(x for x in cols if x != c)
    n_values = [int(k) for k in n_values]
    wide = records.astype(np.int64)
    for c in rng.permutation(d):
        if len(neighbours[c]) == d - 1:  # swaps among otherwise equal records: no change
            continue
        groups = (combined_key(wide, n_values, sorted(neighbours[c]))[0] if neighbours[c]
                  else np.zeros(n, dtype=np.int64))
        in_place = np.argsort(groups)
        starts = np.empty(n, dtype=bool)
        starts[:1] = True
        np.not_equal(groups[in_place[1:]], groups[in_place[:-1]], out=starts[1:])
        if starts.all():  # every group a single record
            continue
        # group number plus a uniform in [0, 1): sorting it shuffles within groups
        shuffled = in_place[np.argsort(np.cumsum(starts) + rng.random(n))]
        wide[in_place, c] = wide[shuffled, c]
    records[:] = wide


def round_to_reference(records, n_values, targets, reference, rng, *, length, total,
                       sweeps=2, max_cells=4_000_000, n_threads=1):
    """Fit ``records`` also to the unmeasured marginals of a larger reference population.

    ``records`` and ``reference`` are both fitted to ``targets`` (and mixed
    within neighbourhoods): draws from one model.  A small sample carries
    sampling noise in the marginals that no target pins down (every
    ``length``-way set not among the targets; see ``benchmarks/LOG.md``).
    The reference's
    counts of those sets, rescaled, estimate the model's expected counts, and
    the descent moves ``records`` towards them as well (each weighted as the
    least precise target, so that measured targets come first): the sample
    keeps its size and loses most of that noise, as Private-PGM's randomized
    rounding does for a graphical model.  Post-processing only.

    Parameters
    ----------
    records : ndarray of int32, shape (n, d)
        Updated in place.
    n_values : array-like of int
    targets : list of ``(columns, table, weight)``
        The targets both populations were fitted to.
    reference : ndarray of int, shape (m, d)
        The larger population (``m > n``).
    rng : numpy.random.Generator
        Visiting orders of the descent.
    length : int
        Size of the column sets taken from the reference (``min(length, d)``).
    total : float
        Number of records the targets describe.
    sweeps : int, default=2
    max_cells : int, default=4_000_000
        Largest number of cells of the reference tables together (public
        facts only: the smallest sets are taken first; each cell costs the
        descent 8 + 4 ``length`` bytes, and time, about 80 MB at the
        default; chosen on the benchmarks, see ``benchmarks/LOG.md``).
    n_threads : int, default=1
        Threads counting the reference (:class:`TableShards`); the result
        does not depend on it.

    Returns
    -------
    int
        Number of reference tables used.
    """
    n_values = np.asarray(n_values)
    d = n_values.size
    k = min(int(length), d)
    measured = {tuple(cols) for cols, _, _ in targets}
    sets = [cols for cols in combinations(range(d), k) if cols not in measured]
    cells = [math.prod(int(n_values[c]) for c in cols) for cols in sets]
    chosen, used = [], 0
    for t in np.argsort(cells, kind="stable"):
        if used + cells[t] > max_cells:
            break
        chosen.append(sets[t])
        used += cells[t]
    if not chosen or not len(records):
        return 0
    weight = min(float(w) for _, _, w in targets)
    scale = float(total) / len(reference)
    shapes = [tuple(int(n_values[c]) for c in cols) for cols in chosen]
    layout = table_layout(list(zip(chosen, shapes)))
    with TableShards(layout, n_threads) as shards:
        counts = shards.count(reference)  # converts to int32 itself
    base = layout[0]
    smooth = [(cols, counts[base[t]:base[t + 1]].reshape(shape) * scale, weight)
              for t, (cols, shape) in enumerate(zip(chosen, shapes))]
    # the values the targets allow, as fit_population: never one a fit would not write
    allowed = [estimate > 0 for estimate in one_way_estimates(n_values, targets)]
    descend(records, n_values, list(targets) + smooth, rng, sweeps=sweeps, allowed=allowed,
            total=total)
    return len(chosen)

