"""Rounding a small fitted sample to a larger reference population of the same model.
"""

from itertools import combinations
import math

import numpy as np

from .counts import TableShards, table_layout
from .descent import descend, one_way_estimates

__all__ = ["round_to_reference", "smallest_sets", "MAX_REFERENCE_SETS"]

MAX_REFERENCE_SETS = 30_000
"""Reference tables of :func:`round_to_reference`, at most (see its ``max_sets``)."""


def round_to_reference(records, n_values, targets, reference, rng, *, length, total,
                       sweeps=2, max_cells=4_000_000, max_sets=MAX_REFERENCE_SETS,
                       n_threads=1):
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
    max_sets : int or None, default=MAX_REFERENCE_SETS
        Most reference tables (the smallest first, as for ``max_cells``): on a
        wide table of few values per column millions of small tables fit
        ``max_cells``, and each costs the descent time for every record
        (``None``: no limit).
    n_threads : int, default=1
        Threads counting the reference (:class:`TableShards`); the result
        does not depend on it.

    Returns
    -------
    int
        Number of reference tables used.
    """
    n_values = np.asarray(n_values)
    k = min(int(length), n_values.size)
    chosen = smallest_sets(n_values, k, {tuple(cols) for cols, _, _ in targets}, max_cells)
    if max_sets is not None:
        chosen = chosen[:int(max_sets)]
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


_LISTED_SETS = 1_000_000
"""Up to this many ``k``-sets are listed as tuples; past it they are streamed."""


def smallest_sets(n_values, k, excluded, max_cells):
    """The ``k``-column sets of fewest cells, while they hold ``max_cells`` cells together.

    Sets in ``excluded`` are skipped; the others are taken by increasing
    number of cells, ties in lexicographic order, up to the first that does
    not fit.  A function of public facts.  On a wide table (millions of
    triples) the sets are streamed through NumPy by their first column
    instead of listed, with the same result.
    """
    n_values = np.asarray(n_values, dtype=np.int64)
    d = n_values.size
    if math.comb(d, k) <= _LISTED_SETS or k not in (2, 3):
        sets = [cols for cols in combinations(range(d), k) if cols not in excluded]
        cells = [math.prod(int(n_values[c]) for c in cols) for cols in sets]
        chosen, used = [], 0
        for t in np.argsort(cells, kind="stable"):
            if used + cells[t] > max_cells:
                break
            chosen.append(sets[t])
            used += cells[t]
        return chosen
    excluded = [tuple(int(c) for c in cols) for cols in excluded if len(cols) == k]
    excluded_keys = np.array(sorted(_key(cols, d) for cols in excluded), dtype=np.int64)

    def blocks():  # (keys, cells) of every k-set, by first column, in lexicographic order
        for a in range(d - k + 1):
            if k == 2:
                rest = np.arange(a + 1, d, dtype=np.int64)
                keys, cells = a * d + rest, n_values[a] * n_values[rest]
            else:
                b, c = np.triu_indices(d - a - 1, 1)
                b, c = b.astype(np.int64) + a + 1, c.astype(np.int64) + a + 1
                keys, cells = (a * d + b) * d + c, n_values[a] * n_values[b] * n_values[c]
            keep = ~np.isin(keys, excluded_keys, assume_unique=True)
            yield keys[keep], cells[keep]

    # first pass: how many sets of each size of table, to find the last size taken
    sizes = {}
    for _, cells in blocks():
        values, counts = np.unique(cells, return_counts=True)
        for v, n in zip(values.tolist(), counts.tolist()):
            sizes[v] = sizes.get(v, 0) + n
    used, last, room = 0, None, 0
    for v in sorted(sizes):
        if used + v * sizes[v] > max_cells:
            last, room = v, (max_cells - used) // v  # that many sets of this size fit
            break
        used += v * sizes[v]
    # second pass: every set smaller than ``last``, the first ``room`` of size ``last``
    found_keys, found_cells, taken = [], [], 0
    for keys, cells in blocks():
        small = cells < last if last is not None else np.ones(cells.size, dtype=bool)
        if last is not None and taken < room:
            at_last = np.flatnonzero(cells == last)[:room - taken]
            taken += at_last.size
            small[at_last] = True
        found_keys.append(keys[small])
        found_cells.append(cells[small])
    keys, cells = np.concatenate(found_keys), np.concatenate(found_cells)
    order = np.lexsort((keys, cells))  # by cells, then lexicographically
    return [_cols(int(key), d, k) for key in keys[order]]


def _key(cols, d):
    key = 0
    for c in cols:
        key = key * d + int(c)
    return key


def _cols(key, d, k):
    out = []
    for _ in range(k):
        key, c = divmod(key, d)
        out.append(c)
    return tuple(reversed(out))
