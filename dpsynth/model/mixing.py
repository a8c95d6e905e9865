"""Mixing a fitted population within the neighbourhoods of the measured column sets.

Permutations that keep every measured count and remove the dependence the
descent made up between columns never measured together.
"""

import numpy as np

from ..metrics._encoding import combined_key

__all__ = ["mix_within_neighbourhoods"]


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
