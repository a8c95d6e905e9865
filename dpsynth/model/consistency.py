"""Exactly consistent marginals from noisy measurements, by generalised least squares.

Consistency (:func:`make_consistent`) is exact generalised least squares in
the residual basis (:mod:`dpsynth.model.residuals`): the component
``theta_A`` of every measured marginal ``S >= A`` is an independent unbiased
estimate of ``theta_A`` with variance ``v_S prod_{i in S - A} n_i`` per
coordinate (the projections onto the orthogonal residual subspaces of
isotropic noise are independent), and the residuals of different ``A`` are
free parameters of the consistent marginals, so the GLS estimate is the
inverse-variance average per ``A``.  This is the Fourier consistency of
Cormode et al. (ICDT 2013, Sec. 4) generalised from binary to any number of
codes, and the reconstruction of ResidualPlanner.  It costs
``O(sum_S 2**|S| cells_S)`` and never touches the full domain.  The outputs
are exactly consistent: two marginals sharing columns have the same
sub-marginal, and every marginal has the same total.  They are unbiased,
hence may be negative (non-negativity is left to the consumer, e.g. the
population fit of :mod:`dpsynth.model.descent`).
"""

from dataclasses import dataclass
import math

import numpy as np

from .marginal import NoisyMarginal
from .residuals import (canonical_columns, cells_outside, from_residual, residual_size, subsets,
                        to_residual)

__all__ = ["ConsistentMarginal", "make_consistent", "consistent_marginals",
           "merge_repeated"]


# ----------------------------------------------------------- consistency
@dataclass(frozen=True)
class ConsistentMarginal:
    """A marginal of the GLS-consistent estimate.

    An estimate derived from :class:`~dpsynth.model.marginal.NoisyMarginal`
    measurements, not one of them: its columns come in the order the caller
    asked for and its variance is ``inf`` where part of it was never
    measured, which a released measurement never is.

    Attributes
    ----------
    columns : tuple of int
    table : ndarray of float64, shape ``n_values[columns]``
        Unbiased, possibly negative.
    variance : float
        Mean variance of its cells (``inf`` if part of it was never
        measured: that part is then the minimum-norm completion).
    """

    columns: tuple
    table: np.ndarray
    variance: float


def _residual_estimates(measurements, n_values):
    """Inverse-variance averages ``{A: (theta_hat_A, variance per coordinate)}``."""
    sums, precisions = {}, {}
    for m in measurements:
        cols = tuple(m.columns)
        values = np.asarray(m.table, dtype=np.float64)
        if list(cols) != sorted(cols):
            order = np.argsort(cols)
            cols = tuple(cols[i] for i in order)
            values = values.transpose(order)
        if m.basis == "residual":
            parts = [(cols, values, m.variance)]
        elif m.basis == "marginal":
            parts = [(sub, to_residual(values, cols, sub),
                      m.variance * cells_outside(cols, sub, n_values))
                     for sub in subsets(cols) if residual_size(sub, n_values) > 0]
        else:
            raise ValueError(f"unknown measurement basis {m.basis!r}.")
        for sub, estimate, variance in parts:
            if not variance > 0:
                raise ValueError("measurement variances must be > 0.")
            sums[sub] = sums.get(sub, 0.0) + estimate / variance
            precisions[sub] = precisions.get(sub, 0.0) + 1.0 / variance
    return {sub: (sums[sub] / precisions[sub], 1.0 / precisions[sub]) for sub in sums}


def make_consistent(measurements, n_values, targets=None, possible=None, cache=None):
    """Exactly consistent marginals by generalised least squares (residual basis).

    Parameters
    ----------
    measurements : sequence of NoisyMarginal or of ``(columns, table, variance)``
        Noisy dense marginals (or residuals) with iid noise of the given
        variance per coordinate; tables may be negative.
    n_values : array-like of int
    targets : sequence of column sets, optional
        Marginals to return (default: the measured column sets, in order).
        A target with a part never measured gets the minimum-norm
        completion of that part (its residual set to 0, e.g. the additive,
        not the independent, combination of two measured 1-way marginals)
        and ``variance=inf``.
    possible : sequence of array-like of bool, optional
        Per column, the codes that can occur (public facts, e.g. no missing
        value in a column declared without).  The GLS then runs on those
        codes only: marginal measurements must hold exact zeros elsewhere
        (they are dropped there), residual measurements are over the
        possible codes (shape ``possible[c].sum() - 1`` per column), and
        the outputs are zero on the impossible cells.
    cache : dict, optional
        Kept by the caller between calls with growing measurements: every
        residual part of a target is stored with the estimate it came from
        and reused while that estimate is unchanged (compared exactly, so
        the outputs are those computed afresh).

    Returns
    -------
    list of ConsistentMarginal
        The GLS estimate (minimum variance among unbiased linear estimates
        that are consistent): every pair of outputs agrees on its shared
        sub-marginal and all have the same total.
    """
    n_values = np.asarray(n_values)
    if possible is not None:
        return _consistent_on_possible(measurements, n_values, targets, possible, cache)
    measurements = list(measurements)
    if targets is None:
        targets = [_caller_columns(m) for m in measurements]
    items = []
    for m in map(_as_measurement, measurements):
        expected = tuple(int(n_values[c]) - (m.basis == "residual") for c in m.columns)
        if np.shape(m.table) != expected:
            raise ValueError(f"measurement over {m.columns} has shape {np.shape(m.table)}; "
                             f"expected {expected}.")
        items.append(m)
    estimates = _residual_estimates(items, n_values)
    out = []
    for target in targets:
        cols = canonical_columns(target)
        scols = tuple(sorted(cols))
        shape = tuple(int(n_values[c]) for c in scols)
        table = np.zeros(shape)
        variance = 0.0
        for sub in subsets(scols):
            size = residual_size(sub, n_values)
            if size == 0:
                continue
            if sub not in estimates:
                variance = math.inf
                if not sub:  # no total at all: nothing to complete from
                    raise ValueError("no measurement estimates the total.")
                continue
            theta, var = estimates[sub]
            table += _part(theta, scols, sub, n_values, cache)
            variance += size * var / cells_outside(scols, sub, n_values)
        if scols != cols:  # back to the caller's column order
            table = table.transpose([scols.index(c) for c in cols])
        out.append(ConsistentMarginal(cols, table, variance / max(table.size, 1)))
    return out


def _part(theta, cols, sub, n_values, cache):
    """:func:`from_residual`, reused from ``cache`` while ``theta`` and the sizes are unchanged."""
    if cache is None:
        return from_residual(theta, cols, sub, n_values)
    key = (cols, sub, tuple(int(n_values[c]) for c in cols))
    hit = cache.get(key)
    if hit is not None and hit[0].shape == theta.shape and np.array_equal(hit[0], theta):
        return hit[1]
    part = from_residual(theta, cols, sub, n_values)
    cache[key] = (np.array(theta, copy=True), part)
    return part


def _as_measurement(m):
    """``m`` as a :class:`~dpsynth.model.marginal.NoisyMarginal` (from one, or from a
    marginal ``(columns, table, variance)`` whose columns may come in any order)."""
    if isinstance(m, NoisyMarginal):
        return m
    columns, table, variance = m
    columns = canonical_columns(columns)
    table = np.asarray(table, dtype=float)
    if list(columns) != sorted(columns) and table.ndim == len(columns):
        order = np.argsort(columns)
        columns, table = tuple(columns[i] for i in order), table.transpose(order)
    return NoisyMarginal(columns, table, float(variance))


def _caller_columns(m):
    """The column sets of the measurements, in the caller's order (the default targets)."""
    return tuple(m.columns) if isinstance(m, NoisyMarginal) else canonical_columns(m[0])


def _consistent_on_possible(measurements, n_values, targets, possible, cache=None):
    """:func:`make_consistent` on the possible codes only, zero-padded back."""
    possible = [np.asarray(p, dtype=bool) for p in possible]
    if len(possible) != n_values.size or any(p.shape != (int(k),)
                                             for p, k in zip(possible, n_values)):
        raise ValueError("possible must hold one boolean array of n_values[c] codes per "
                         "column c.")
    free = np.array([int(p.sum()) for p in possible])
    measurements = list(measurements)
    if targets is None:
        targets = [_caller_columns(m) for m in measurements]
    items = []
    for m in map(_as_measurement, measurements):
        if m.basis == "marginal":
            values = np.asarray(m.table, dtype=float)
            expected = tuple(int(n_values[c]) for c in m.columns)
            if values.shape != expected:
                raise ValueError(f"measurement over {m.columns} has shape {values.shape}; "
                                 f"expected {expected}.")
            m = NoisyMarginal(m.columns, values[np.ix_(*[possible[c] for c in m.columns])],
                              m.variance)
        items.append(m)
    out = []
    for m in make_consistent(items, free, targets, cache=cache):
        shape = tuple(int(n_values[c]) for c in m.columns)
        table = np.zeros(shape)
        table[np.ix_(*[possible[c] for c in m.columns])] = m.table
        out.append(ConsistentMarginal(m.columns, table,
                                      m.variance * max(m.table.size, 1) / max(table.size, 1)))
    return out


def consistent_marginals(marginals, residuals, n_values, possible=None, touching=None,
                         cache=None):
    """GLS-consistent marginals of every measured column set.

    Repeated marginal measurements of a set are averaged by inverse variance,
    then they and the residual measurements are made exactly consistent over
    the ``possible`` codes (:func:`~dpsynth.model.consistency.make_consistent`).

    Parameters
    ----------
    marginals, residuals : sequences of ``(columns, table, variance)``
        Whole noisy marginals, and residuals over the possible codes.
    n_values : array-like of int
    possible : list of array-like of bool, optional
    touching : collection of int, optional
        Only the measured sets holding one of these columns (each set's
        marginal does not depend on which others are returned).
    cache : dict, optional
        See :func:`make_consistent`.

    Returns
    -------
    list of ConsistentMarginal
        One per measured set (or per set ``touching``), the marginal sets
        first, in order.
    """
    merged = merge_repeated(marginals)
    items = list(merged) + [NoisyMarginal(tuple(cols), values, var, "residual")
                            for cols, values, var in residuals]
    sets = list(dict.fromkeys([tuple(cols) for cols, _, _ in merged]
                              + [tuple(cols) for cols, _, _ in residuals]))
    if touching is not None:
        touching = set(touching)
        sets = [cols for cols in sets if touching.intersection(cols)]
    return make_consistent(items, n_values, targets=sets, possible=possible, cache=cache)


def merge_repeated(measurements):
    """Inverse-variance average of repeated measurements of a column set."""
    acc = {}
    for cols, table, var in measurements:
        key = tuple(cols)
        s, p = acc.get(key, (0.0, 0.0))
        var = max(float(var), 1e-12)  # a file may hold an exact (zero-variance) table
        acc[key] = (s + np.asarray(table) / var, p + 1.0 / var)
    return [(cols, s / p, 1.0 / p) for cols, (s, p) in acc.items()]
