"""Rounding a small fitted sample to a larger reference population of the same model.
"""

from itertools import combinations
import math

import numpy as np

from .counts import TableShards, table_layout
from .descent import descend, one_way_estimates

__all__ = ["round_to_reference"]


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
