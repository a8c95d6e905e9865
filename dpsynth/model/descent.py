"""Fit a population of records to dense target marginals (post-processing).

:func:`fit_population` draws ``n`` records column by column from the 1-way
distributions implied by the targets, then moves them by the greedy
coordinate descent of the Cython kernel ``_core._matching.descend`` (arrays
from :func:`~dpsynth.model.layout.descent_layout`) on the weighted squared error
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

import math

import numpy as np

from .._core import _matching
from .layout import descent_layout

__all__ = ["one_way_estimates", "descend", "fit_population"]


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
    layout = descent_layout(code, tables)
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
