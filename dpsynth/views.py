"""Consistent views: the post-processing shared by CALM and PriView.

A *view* is a dense table over a set of attributes (columns of a coded
table): ``attrs`` is a sorted tuple of attribute indices and the table has one
axis per attribute, in that order, of length the attribute's cardinality.
Noisy views of overlapping attribute sets disagree on their common
sub-marginals and have negative cells.  This module makes them

* **consistent** (:func:`make_consistent`): for every attribute set ``A`` in
  the closure of the views under intersection, visited in topological
  (subset) order from the empty set, the views containing ``A`` get the same
  projection onto ``A``: the variance-optimal weighted mean with weights
  ``1 / C_i``, ``C_i = prod_{a in V_i \\ A} c_a`` the number of cells of view
  ``i`` summed into one cell of ``A``, and every cell of view ``i`` moves by
  ``(T_A(v) - T_{V_i}[A](v)) / C_i`` (CALM, Section 4.4 and Appendix A.3;
  PriView, Li et al., "Differential Privacy: From Theory to Practice",
  Section 6.3, where the views have equal sizes and the weights are equal);
* **non-negative** (:func:`ripple`): a cell below ``-tol`` is set to 0 and
  its value is subtracted evenly from its ``h = sum_a (c_a - 1)`` neighbours
  (cells differing in exactly one attribute), until no cell is below
  ``-tol``; the total is preserved (CALM, Appendix A.3, "Ripple");
* **queryable** (:func:`answer_marginal`): a marginal inside a view is a sum
  of its cells; otherwise the maximum-entropy table matching the projections
  of the views onto their intersections with the query, fitted by iterative
  proportional fitting (:func:`maximum_entropy`) with a tolerance and an
  iteration cap that is reported (:class:`~sklearn.exceptions.ConvergenceWarning`
  and the returned info) when hit.

:class:`ViewSet` bundles these, and samples records from the views (a pool
drawn from the views' conditionals, raked to match every view, then moved by
coordinate descent towards every view).
Everything here is post-processing of already private views: no privacy cost.
"""

import math
import numbers
import warnings
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._core._sampling import inverse_cdf, rake_sweep
from .exceptions import PrivacyLeakWarning
from .model.descent import fit_population
from .preprocessing import TableEncoder
from .preprocessing._dtypes import nullable_dtype
from .utils._arrow import arrow_dtypes, arrow_restored
from .utils._random import seed_sequence
from .preprocessing._encoder import output_labels
from .utils._validation import check_table, column_labels, named_keys

__all__ = ["project", "make_consistent", "ripple", "postprocess", "maximum_entropy",
           "answer_marginal", "ViewSet", "ReconstructionInfo", "MergedValues"]


def _check_attrs(attrs, name="attrs"):
    attrs = tuple(int(a) for a in attrs)
    if list(attrs) != sorted(set(attrs)):
        raise ValueError(f"{name} must be strictly increasing attribute indices; got {attrs}.")
    return attrs


def project(table, attrs, onto):
    """Sum a view over the attributes not in ``onto``.

    Parameters
    ----------
    table : ndarray
        View over ``attrs`` (one axis per attribute, in ``attrs`` order).
    attrs : tuple of int
        Sorted attribute indices of the view.
    onto : iterable of int
        Subset of ``attrs``.

    Returns
    -------
    ndarray
        Table over ``sorted(onto)``.
    """
    onto = set(onto)
    if not onto <= set(attrs):
        raise ValueError(f"Cannot project a view over {tuple(attrs)} onto {tuple(sorted(onto))}.")
    axes = tuple(i for i, a in enumerate(attrs) if a not in onto)
    return np.sum(table, axis=axes) if axes else np.array(table, copy=True)


def _expand(small, attrs, sub):
    """Reshape a table over ``sub`` to broadcast against a view over ``attrs``."""
    shape = [small.shape[sub.index(a)] if a in sub else 1 for a in attrs]
    return small.reshape(shape)


@lru_cache(maxsize=32)
def _consistency_plan(sets):
    """For each set of the closure (in subset order), the indices of its supersets."""
    plan = []
    for shared in _closure(sets):
        members = tuple(i for i, s in enumerate(sets) if shared <= s)
        if len(members) >= 2:
            plan.append((tuple(sorted(shared)), members))
    return tuple(plan)


def _closure(attr_sets):
    """All intersections of the sets (and the empty set), smallest first."""
    closure = {frozenset(s) for s in attr_sets}
    frontier = set(closure)
    while frontier:
        new = set()
        for a in frontier:
            for b in closure:
                c = a & b
                if c not in closure:
                    new.add(c)
        closure |= new
        frontier = new
    closure.add(frozenset())
    return sorted(closure, key=lambda s: (len(s), sorted(s)))


def make_consistent(views, cardinalities, *, weights="cells", variances=None):
    """Make overlapping views agree on every shared set of attributes.

    Parameters
    ----------
    views : list of (tuple of int, ndarray)
        ``(attrs, table)`` pairs.  Not modified.
    cardinalities : sequence of int
        Number of values of every attribute.
    weights : {"cells", "equal"}, default="cells"
        ``"cells"``: CALM's ``1 / C_i`` weights (variance-optimal when the
        views' cells have equal variance); ``"equal"``: the plain mean of the
        book's PriView (identical when the views have equal sizes).
    variances : sequence of float, default=None
        Noise variance of a cell of each view, relative to the others (with
        ``weights="cells"`` the weights become ``1 / (C_i v_i)``): views
        measured with different noise scales.  ``None``: all equal.

    Returns
    -------
    list of (tuple of int, ndarray)
        New consistent views (float64 copies).

    References
    ----------
    Zhang et al., "CALM", CCS 2018, Section 4.4 and Appendix A.3; Li, Lyu,
    Su, Yang, "Differential Privacy: From Theory to Practice", Section 6.3.
    """
    if weights not in ("cells", "equal"):
        raise ValueError(f"weights must be 'cells' or 'equal'; got {weights!r}.")
    cards = [int(c) for c in cardinalities]
    out = [(_check_attrs(a), np.array(t, dtype=float, copy=True)) for a, t in views]
    for attrs, table in out:
        if table.shape != tuple(cards[a] for a in attrs):
            raise ValueError(f"A view over {attrs} has shape {table.shape}; expected "
                             f"{tuple(cards[a] for a in attrs)}.")
    sets = tuple(frozenset(a) for a, _ in out)
    v = np.ones(len(out)) if variances is None else np.asarray(variances, dtype=float)
    if v.shape != (len(out),) or not (v > 0).all():
        raise ValueError(f"variances must hold one positive number per view; got {variances!r}.")
    for sub, members in _consistency_plan(sets):
        shared = set(sub)
        projections, sizes = [], []
        for i in members:
            attrs, table = out[i]
            projections.append(project(table, attrs, sub))
            sizes.append(math.prod(cards[a] for a in attrs if a not in shared))
        w = np.array([1.0 / (c * v[i]) if weights == "cells" else 1.0
                      for i, c in zip(members, sizes)])
        target = sum(wi * p for wi, p in zip(w, projections)) / w.sum()
        for i, p, c in zip(members, projections, sizes):
            attrs, table = out[i]
            table += _expand((target - p) / c, attrs, sub)
    return out


def ripple(table, tol=1e-6, *, max_iter=1000):
    """Ripple non-negativity: push negative cells onto their neighbours.

    While a cell holds ``c < -tol``, set it to 0 and subtract ``|c| / h`` from
    each of its ``h = sum_a (c_a - 1)`` neighbours (the cells that differ in
    exactly one attribute).  All such cells are processed at once in each
    sweep.  The total is preserved exactly.

    Parameters
    ----------
    table : ndarray
        One view (not modified).
    tol : float, default=1e-6
        Cells in ``[-tol, 0)`` are left as they are (CALM's ``theta`` of
        Appendix A.3; a separate parameter from the target error of
        Algorithm 1).
    max_iter : int, default=1000
        Cap on the sweeps.  A table whose total is not positive is returned
        unchanged (no non-negative table has its total).

    Returns
    -------
    table : ndarray
    n_iter : int
        Sweeps done; equal to ``max_iter`` when the cap stopped it.

    References
    ----------
    Zhang et al., "CALM", CCS 2018, Appendix A.3; Li et al., Section 6.3.
    """
    t = np.array(table, dtype=float, copy=True)
    h = sum(c - 1 for c in t.shape)
    if h == 0 or t.size == 0 or t.sum() <= 0:
        # nothing to spread to, or a non-positive total that no table >= 0 can keep
        return t, 0
    for it in range(max_iter):
        neg = np.where(t < -tol, t, 0.0)
        if not neg.any():
            return t, it
        spread = np.zeros_like(t)
        for axis in range(t.ndim):
            spread += np.sum(neg, axis=axis, keepdims=True) - neg
        t = t - neg + spread / h
    return t, max_iter


def postprocess(views, cardinalities, *, tol=1e-6, n_rounds=5, weights="cells",
                variances=None):
    """Consistency, then rounds of (Ripple non-negativity, consistency).

    Stops after the first round whose final consistency leaves no cell below
    ``-tol`` (CALM runs "the consistency step after the non-negativity step
    several times"; the book recommends C+N+C).

    Returns
    -------
    views : list of (tuple of int, ndarray)
    n_rounds_done : int
    """
    out = make_consistent(views, cardinalities, weights=weights, variances=variances)
    for r in range(1, n_rounds + 1):
        if min(float(t.min()) for _, t in out) >= -tol:
            return out, r - 1
        out = [(a, ripple(t, tol)[0]) for a, t in out]
        out = make_consistent(out, cardinalities, weights=weights, variances=variances)
    return out, n_rounds


@dataclass
class ReconstructionInfo:
    """How a marginal was answered.

    Attributes
    ----------
    method : {"direct", "maxent"}
    n_iter : int
        IPF sweeps (0 for ``"direct"``).
    converged : bool
        False when IPF stopped at its iteration cap (see
        :func:`maximum_entropy`).
    max_violation : float
        Largest absolute gap between a constraint and the answer's projection.
    constraints : list of tuple of int
        Attribute sets matched.
    """

    method: str
    n_iter: int = 0
    converged: bool = True
    max_violation: float = 0.0
    constraints: list = field(default_factory=list)


def maximum_entropy(constraints, attrs, cardinalities, *, tol=1e-8, max_iter=1000):
    """Maximum-entropy table over ``attrs`` matching sub-marginal constraints.

    Iterative proportional fitting from the uniform table: each sweep scales
    the table so that its projection onto each constraint's attributes equals
    the constraint.  With consistent constraints it converges to the
    maximum-entropy table that satisfies them (Csiszar 1975), the
    reconstruction CALM (Appendix A.3) and PriView (Li et al., Section 6.3)
    recommend.  It stops when every projection is within ``tol`` of its
    constraint, or when a sweep changes no cell by more than ``tol / 100``
    (slightly inconsistent constraints, e.g. after clipping small negative
    cells, have no exact solution: IPF then settles on a compromise and
    ``info.max_violation`` reports the residual).

    Parameters
    ----------
    constraints : list of (tuple of int, ndarray)
        ``(sub_attrs, table)`` with ``sub_attrs`` a subset of ``attrs``;
        tables are clipped at 0 and normalised to sum 1.
    attrs : tuple of int
        Sorted attributes of the answer.
    cardinalities : sequence of int
    tol : float, default=1e-8
        Stop when every projection is within ``tol`` of its constraint.
    max_iter : int, default=1000
        Cap on the sweeps; reaching it raises a
        :class:`~sklearn.exceptions.ConvergenceWarning` and sets
        ``info.converged = False``.

    Returns
    -------
    table : ndarray
        Fractions over ``attrs`` (sums to 1).
    info : ReconstructionInfo
    """
    attrs = _check_attrs(attrs)
    shape = tuple(int(cardinalities[a]) for a in attrs)
    prepared = []
    for sub, target in constraints:
        sub = _check_attrs(sub, "constraint attrs")
        if not set(sub) <= set(attrs):
            raise ValueError(f"Constraint over {sub} is not inside {attrs}.")
        target = np.clip(np.asarray(target, dtype=float), 0, None)
        total = target.sum()
        target = target / total if total > 0 else np.full(target.shape, 1.0 / target.size)
        prepared.append((sub, target))
    table = np.full(shape, 1.0 / math.prod(shape))
    info = ReconstructionInfo("maxent", constraints=[s for s, _ in prepared])
    if not prepared:
        return table, info
    for it in range(1, max_iter + 1):
        previous = table
        for sub, target in prepared:
            current = project(table, attrs, sub)
            ratio = np.divide(target, current, out=np.zeros_like(target), where=current > 0)
            table = table * _expand(ratio, attrs, sub)
        violation = max(float(np.abs(project(table, attrs, s) - t).max()) for s, t in prepared)
        change = float(np.abs(table - previous).max())
        if violation <= tol or change <= tol * 1e-2:
            info.n_iter, info.max_violation = it, violation
            return table, info
    info.n_iter, info.converged, info.max_violation = max_iter, False, violation
    warnings.warn(
        f"Maximum entropy (IPF) over attributes {attrs} stopped at max_iter={max_iter} with "
        f"a constraint violation of {violation:.3g} > tol={tol:g}; the constraints may be "
        "inconsistent. Increase max_iter or tol.", ConvergenceWarning, stacklevel=2)
    return table, info


def answer_marginal(views, attrs, cardinalities, *, tol=1e-8, max_iter=1000):
    """The marginal over ``attrs`` from consistent views.

    If views contain all of ``attrs``, the mean of their projections (equal
    after :func:`make_consistent`); otherwise the maximum-entropy table
    matching, for every maximal intersection ``B = V_i & attrs``, the mean
    projection onto ``B`` of the views containing ``B``.  Negative cells are
    clipped and the answer is normalised to fractions summing to 1.

    Returns
    -------
    table : ndarray over ``sorted(attrs)``
    info : ReconstructionInfo
    """
    attrs = _check_attrs(sorted(attrs))
    target = set(attrs)
    covering = [(a, t) for a, t in views if target <= set(a)]
    if covering:
        table = sum(project(t, a, attrs) for a, t in covering) / len(covering)
        table = np.clip(table, 0, None)
        total = table.sum()
        table = table / total if total > 0 else np.full(table.shape, 1.0 / table.size)
        return table, ReconstructionInfo("direct", constraints=[attrs])
    inter = {frozenset(a) & target for a, _ in views} - {frozenset()}
    maximal = [s for s in inter if not any(s < o for o in inter)]
    constraints = []
    for s in sorted(maximal, key=lambda s: (len(s), sorted(s))):
        sub = tuple(sorted(s))
        proj = [project(t, a, sub) for a, t in views if s <= set(a)]
        constraints.append((sub, sum(proj) / len(proj)))
    return maximum_entropy(constraints, attrs, cardinalities, tol=tol, max_iter=max_iter)


class ViewSet:
    """A set of consistent views over coded attributes, queryable and samplable.

    Parameters
    ----------
    views : list of (tuple of int, ndarray)
        Consistent views (fractions or counts).
    cardinalities : sequence of int
    tol, max_iter : float, int
        IPF settings of :func:`answer_marginal`.
    """

    def __init__(self, views, cardinalities, *, tol=1e-8, max_iter=1000):
        self.views = [(_check_attrs(a), np.asarray(t, dtype=float)) for a, t in views]
        self.cardinalities = [int(c) for c in cardinalities]
        self.tol = tol
        self.max_iter = max_iter

    def marginal(self, attrs):
        """Fractions over ``sorted(attrs)`` and a :class:`ReconstructionInfo`."""
        attrs = tuple(sorted(int(a) for a in attrs))
        if len(set(attrs)) != len(attrs):
            raise ValueError(f"Repeated attributes in {attrs}.")
        bad = [a for a in attrs if not 0 <= a < len(self.cardinalities)]
        if bad:
            raise ValueError(f"Unknown attribute indices {bad}.")
        return answer_marginal(self.views, attrs, self.cardinalities, tol=self.tol,
                               max_iter=self.max_iter)

    def sampling_order(self):
        """Attributes in sampling order, each with the view it is drawn from.

        Greedy: next is the unsampled attribute that shares a view with the
        most sampled attributes (ties: smallest index); an attribute in no
        view is drawn uniformly (view ``None``).
        """
        d = len(self.cardinalities)
        sampled, plan = [], []
        remaining = set(range(d))
        while remaining:
            best = None
            for a in sorted(remaining):
                for vi, (attrs, _) in enumerate(self.views):
                    if a in attrs:
                        overlap = len(set(attrs) & set(sampled))
                        key = (overlap, -a)
                        if best is None or key > best[0]:
                            best = (key, a, vi)
            if best is None:
                a = min(remaining)
                plan.append((a, None, ()))
            else:
                _, a, vi = best
                parents = tuple(p for p in self.views[vi][0] if p in sampled)
                plan.append((a, vi, parents))
            sampled.append(a)
            remaining.discard(a)
        return plan

    def sample(self, n, rng, *, pool_factor=3, max_iter=10, tol=1e-4, sweeps=3):
        """Draw ``n`` coded records that match every view, not only one per attribute.

        A pool of ``pool_factor * n`` candidates is drawn attribute by
        attribute, each from one view's conditional given the attributes
        already drawn in that view (:meth:`sampling_order`); such records keep
        the associations inside that view only.  The candidates are then
        weighted by iterative proportional fitting so that their weighted
        counts match every view (raking, the same fit as
        :func:`maximum_entropy` over the pool's support), and ``n`` records
        are drawn from the weights by systematic sampling.  Finally the
        records are moved, value by value, by the greedy coordinate descent
        of :func:`~dpsynth.model.descent.fit_population` on the squared
        error between their counts and every view (equal weights: the views
        are equally precise per cell), the least-squares fit the workload
        release uses: with many overlapping views (a pairs' cover) the pool
        drawn from one view per attribute holds too few of the records the
        views describe for raking to find them.  Post-processing of the views
        only.

        Parameters
        ----------
        n : int
        rng : numpy.random.Generator
        pool_factor : int, default=3
            Candidates per record (1: no choice among candidates, only the
            draw from the views' conditionals, then the descent).
        max_iter : int, default=10
            Cap on the raking sweeps (noisy views have no exact match: the cap,
            not ``tol``, usually ends the raking).
        tol : float, default=1e-4
            Stop when no view's weighted fractions move by more than ``tol``.
        sweeps : int, default=3
            Passes of the coordinate descent over every (record, attribute)
            (0: the raked draw as it is).

        Returns
        -------
        ndarray of int32, shape (n, n_attributes)
        """
        pool = self._draw(max(n, int(pool_factor) * n), rng)
        if len(pool) > n and self.views:
            weights = self._rake(pool, max_iter=max_iter, tol=tol)
            positions = (rng.random() + np.arange(n)) / n
            cumulative = np.cumsum(weights)
            cumulative /= cumulative[-1]
            picked = np.searchsorted(cumulative, positions, side="right").clip(0, len(pool) - 1)
            pool = pool[rng.permutation(picked)]
        if sweeps < 1 or not self.views:
            return pool
        targets = [(attrs, np.clip(table, 0, None), 1.0) for attrs, table in self.views]
        total = float(targets[0][1].sum())
        if not total > 0:
            return pool
        records = fit_population(self.cardinalities, targets, n, rng, sweeps=int(sweeps),
                                 total=total, init=pool)
        return records

    def _rake(self, pool, *, max_iter=10, tol=1e-4, smoothing=None):
        """Weights of the pool's records whose weighted fractions match every view.

        Each sweep scales the weights of the records in every cell of every
        view by ``(target + s) / (current + s)`` (fractions), ``s`` =
        ``smoothing`` (default: one record of the pool, ``1 / len(pool)``):
        a cell a noisy view puts at 0 lowers its records instead of removing
        them, so that overlapping noisy views cannot wipe out the pool.
        Identical candidates share one weight (they fall in the same cells),
        so the sweeps run over the distinct rows of the pool.
        """
        if smoothing is None:
            smoothing = 1.0 / len(pool)
        rows, inverse, multiplicity = _distinct_rows(pool, self.cardinalities)
        cells, targets = [], []
        for attrs, table in self.views:
            shape = tuple(self.cardinalities[a] for a in attrs)
            cells.append(np.ascontiguousarray(
                np.ravel_multi_index(tuple(rows[:, a] for a in attrs), shape), dtype=np.int64))
            target = np.clip(np.asarray(table, dtype=float).ravel(), 0, None)
            total = target.sum()
            targets.append(target / total if total > 0 else np.full(target.size, 1 / target.size))
        # mass of each distinct row: its multiplicity times the (shared) weight of a copy
        mass = multiplicity / len(pool)
        work = np.empty(max(t.size for t in targets))
        for _ in range(max_iter):
            moved = 0.0
            for cell, target in zip(cells, targets):
                step = rake_sweep(cell, target, mass, float(smoothing), work)
                if step < 0:  # no candidate left in the view's support
                    return np.full(len(pool), 1.0 / len(pool))
                moved = max(moved, step)
            if moved <= tol:
                break
        return (mass / multiplicity)[inverse]

    def _draw(self, n, rng):
        """``n`` coded records, each attribute from one view's conditional.

        Each attribute is drawn given the already drawn attributes that share
        the chosen view with it (:meth:`sampling_order`), from that view's
        (clipped) conditional distribution, by inverting the conditional
        distribution function of each record's parent cell.
        """
        d = len(self.cardinalities)
        codes = np.zeros((n, d), dtype=np.int32)
        for a, vi, parents in self.sampling_order():
            c = self.cardinalities[a]
            if vi is None:
                codes[:, a] = rng.integers(0, c, size=n)
                continue
            attrs, table = self.views[vi]
            sub = tuple(sorted(parents + (a,)))
            joint = np.clip(project(table, attrs, sub), 0, None)
            # move a's axis last, flatten the parents
            pos = sub.index(a)
            joint = np.moveaxis(joint, pos, -1).reshape(-1, c)
            marginal = joint.sum(axis=0)
            if marginal.sum() <= 0:
                marginal = np.ones(c)
            rows = joint.sum(axis=1, keepdims=True)
            cond = np.where(rows > 0, joint / np.where(rows > 0, rows, 1),
                            marginal / marginal.sum())
            if parents:
                idx = np.ravel_multi_index(tuple(codes[:, p] for p in parents),
                                           tuple(self.cardinalities[p] for p in parents))
            else:
                idx = np.zeros(n, dtype=np.int64)
            codes[:, a] = _inverse_cdf(cond, idx, rng.random(n))
        return codes


def _inverse_cdf(cond, idx, u):
    """Value ``v`` of each record with ``F(v - 1) <= u < F(v)``, ``F`` its row of ``cond``.

    ``cond`` holds one distribution per row; each record reads the
    distribution function of its row ``idx`` (a scan of at most ``c``
    entries, in the compiled kernel).
    """
    n_rows, c = cond.shape
    cum = np.cumsum(cond, axis=1)
    cum[:, -1] = 1.0
    out = np.empty(len(u), dtype=np.int32)
    inverse_cdf(np.ascontiguousarray(cum), np.ascontiguousarray(idx, dtype=np.int64),
                np.ascontiguousarray(u, dtype=float), out)
    return out


def _distinct_rows(codes, cardinalities):
    """Distinct rows of ``codes``, the row of each record and the rows' multiplicities."""
    sizes = [int(c) for c in cardinalities]
    if math.prod(sizes) < 2 ** 62:
        keys = np.ravel_multi_index(tuple(codes[:, j] for j in range(codes.shape[1])), sizes)
        _, first, inverse, counts = np.unique(keys, return_index=True, return_inverse=True,
                                              return_counts=True)
        return codes[first], inverse.ravel(), counts.astype(float)
    rows, inverse, counts = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
    return rows, inverse.ravel(), counts.astype(float)


class MergedValues:
    """Each column's rare values merged into one code, and the way back.

    PriView builds its views on a smaller domain: the values of a column
    whose (noisy) counts are small share one *merged* code.  ``groups[j]``
    maps every original code of column ``j`` to its code in the views and
    ``shares[j]`` gives each original value's share of its code (summing to
    1 over the values of a code), so that a table or a record on the merged
    domain expands back to the original values.  A column with
    ``groups[j] is None`` is unchanged.  Everything here is post-processing
    of already private counts.

    Parameters
    ----------
    groups : list of (ndarray of int or None)
        One entry per column: the merged code of each original code.
    shares : list of (ndarray of float or None)
        One entry per column: each original value's share of its code.
    """

    def __init__(self, groups, shares):
        self.groups = [None if g is None else np.asarray(g, dtype=np.int64) for g in groups]
        self.shares = [None if s is None else np.asarray(s, dtype=float) for s in shares]

    @classmethod
    def from_counts(cls, noisy_counts, cardinalities, threshold):
        """Merge, in each column of ``noisy_counts``, the values counted below ``threshold``.

        ``noisy_counts`` maps a column index to its (noisy) counts, one per
        code.  The values at or above ``threshold`` keep a code of their own
        (in their original order); the others share the last code, unless
        at most one value is below it (nothing to merge).  Within the merged
        code a value's share is proportional to its count clipped at 0
        (equal shares when no count is positive).
        """
        groups, shares = [None] * len(cardinalities), [None] * len(cardinalities)
        for j, counts in noisy_counts.items():
            counts = np.asarray(counts, dtype=float)
            rare = counts < threshold
            if rare.sum() <= 1:
                continue
            kept = np.flatnonzero(~rare)
            group = np.full(len(counts), len(kept), dtype=np.int64)
            group[kept] = np.arange(len(kept))
            share = np.ones(len(counts))
            mass = np.clip(counts[rare], 0, None)
            share[rare] = mass / mass.sum() if mass.sum() > 0 else 1.0 / rare.sum()
            groups[j], shares[j] = group, share
        return cls(groups, shares)

    def __bool__(self):
        return any(g is not None for g in self.groups)

    def cardinalities(self, cardinalities):
        """Number of codes of each column in the views."""
        return np.array([int(c) if g is None else int(g.max()) + 1
                         for c, g in zip(cardinalities, self.groups)], dtype=np.int64)

    def merge(self, codes):
        """The records' codes on the merged domain (a new array)."""
        out = np.array(codes, copy=True)
        for j, g in enumerate(self.groups):
            if g is not None:
                out[:, j] = g[codes[:, j]]
        return out

    def expand_table(self, table, attrs):
        """A table over ``attrs`` on the merged domain, on the original domain.

        Each cell of a merged code is split among its values by their shares.
        """
        for axis, a in enumerate(attrs):
            g = self.groups[a]
            if g is not None:
                shape = [1] * table.ndim
                shape[axis] = len(g)
                table = np.take(table, g, axis=axis) * self.shares[a].reshape(shape)
        return table

    def expand_codes(self, codes, rng):
        """Records on the merged domain, each merged code drawn back to one of its values."""
        out = np.array(codes, copy=True)
        for j, g in enumerate(self.groups):
            if g is None:
                continue
            merged = int(g.max())
            values = np.flatnonzero(g == merged)
            own = np.zeros(merged + 1, dtype=out.dtype)
            own[g[g < merged]] = np.flatnonzero(g < merged)  # a kept code's original value
            rows = np.flatnonzero(codes[:, j] == merged)
            out[:, j] = own[codes[:, j]]
            if len(rows) == 0:
                continue
            cum = np.cumsum(self.shares[j][values])
            cum /= cum[-1]
            pick = np.searchsorted(cum, rng.random(len(rows)), side="right")
            out[rows, j] = values[np.minimum(pick, len(values) - 1)]
        return out


# ---------------------------------------------------------------------------
# plumbing shared by the view-based estimators (CALM, PriView)
# ---------------------------------------------------------------------------

class _ViewEstimatorMixin:
    """Encoding, marginal queries and sampling of the view-based estimators.

    Requires the fitted attributes ``encoder_``, ``cardinalities_``,
    ``feature_names_in_``, ``view_set_`` and ``n_records_``.
    """

    #: Parameter constraints of the public domain, post-processing and sampling,
    #: shared by the view-based estimators.
    _view_constraints = {
        "categories": [StrOptions({"auto"}), dict, list],
        "bounds": [dict, None],
        "n_bins": [Interval(numbers.Integral, 2, None, closed="left")],
        "binning": [StrOptions({"uniform", "log"}), dict],
        "allow_missing": ["boolean"],
        "negativity_tol": [Interval(numbers.Real, 0, None, closed="left")],
        "n_rounds": [Interval(numbers.Integral, 0, None, closed="left")],
        "maxent_tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "maxent_max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
    }

    def _declared(self, parameter):
        """A column-keyed parameter with the input's number labels (``0``) named by
        their text (``"0"``), the names the encoder sees."""
        return named_keys(getattr(self, parameter), getattr(self, "_column_labels", None))

    def _make_encoder(self):
        return TableEncoder(categories=self._declared("categories"), missing="category",
                            bounds=self._declared("bounds"), n_bins=self.n_bins,
                            binning=self._declared("binning"), handle_unknown="error")

    def _check_domain_params(self):
        binning = self.binning
        strategies = binning.values() if isinstance(binning, dict) else [binning]
        for s in strategies:
            if not isinstance(s, str) or s not in ("uniform", "log"):
                raise ValueError(
                    "binning must be 'uniform' or 'log' (or a dict of them): bins come from "
                    f"public bounds only; got {s!r}.")

    def _validated_codes(self, X):
        """Validate the parameters and X, fit the public domain, return X's codes."""
        self._validate_params()
        self._check_domain_params()
        # pyarrow, period and sparse columns: read as check_table reads them, given their
        # dtype back in sample (a function of the dtypes alone)
        self._arrow_dtypes = arrow_dtypes(X) if isinstance(X, pd.DataFrame) else {}
        self._column_labels = column_labels(X)  # number labels: given back by sample
        frame, _ = check_table(X)
        self._fit_domain(frame)
        return self._encode(frame)

    def _fit_domain(self, frame):
        """Fit the encoder; warn when a column's domain is read from the data."""
        declared = set()
        categories, bounds = self._declared("categories"), self._declared("bounds")
        if isinstance(categories, dict):
            declared |= set(categories)
        elif isinstance(categories, (list, tuple)):
            declared |= set(frame.columns)
        if isinstance(bounds, dict):
            declared |= {c for c, b in bounds.items() if not isinstance(b, str)}
        self._check_finite(frame)
        undeclared = [c for c in frame.columns if c not in declared]
        if undeclared:
            warnings.warn(
                f"The values of columns {undeclared[:10]} were read from the data: their "
                "domain is not public. Declare it with `categories=` (or `bounds=` for numeric "
                "columns) for a release whose privacy guarantee covers the domain.",
                PrivacyLeakWarning, stacklevel=3)
        encoder = self._make_encoder().fit(frame)
        # a column whose values are read from the data also gets its missing value
        # from the data (the domain of such a column is not public anyway)
        learned_missing = [c in undeclared and bool(frame[c].isna().any())
                           for c in frame.columns]
        self._set_domain(encoder, learned_missing)

    def _set_domain(self, encoder, learned_missing=None):
        self.encoder_ = encoder
        n_values = np.asarray(encoder.n_values_, dtype=np.int64)
        keep = np.full(len(n_values), bool(self.allow_missing))
        if learned_missing is not None:
            keep |= np.asarray(learned_missing, dtype=bool)
        self.cardinalities_ = np.where(keep, n_values, n_values - 1)
        if (self.cardinalities_ < 1).any():
            bad = list(np.asarray(encoder.feature_names_in_)[self.cardinalities_ < 1])
            raise ValueError(f"Columns {bad} have no declared value.")
        self.feature_names_in_ = np.asarray(encoder.feature_names_in_, dtype=object)
        self.n_features_in_ = len(self.feature_names_in_)

    @staticmethod
    def _check_finite(frame):
        for name in frame.columns:
            col = frame[name]
            if pd.api.types.is_float_dtype(col.dtype) and np.isinf(col.to_numpy(float)).any():
                raise ValueError(f"Column {name!r} contains infinity; records must hold "
                                 "finite values.")

    def _encode(self, X):
        """Coded records; a missing value is an error unless ``allow_missing``."""
        frame, _ = check_table(X)
        self._check_finite(frame)
        codes = self.encoder_._transform(frame if isinstance(X, type(frame)) else X)
        over = codes >= self.cardinalities_[None, :]
        if over.any():
            j = int(np.flatnonzero(over.any(axis=0))[0])
            raise ValueError(
                f"Column {self.feature_names_in_[j]!r} contains missing values (NaN or "
                "None) but its declared domain has none; set allow_missing=True to make "
                "'missing' one more (public) category of every column.")
        return codes

    def _columns_to_attrs(self, columns):
        if isinstance(columns, (str, int, np.integer)):
            columns = [columns]
        names = list(self.feature_names_in_)
        attrs = []
        for c in columns:
            if isinstance(c, str):
                if c not in names:
                    raise ValueError(f"Unknown column {c!r} in columns; known: {names}.")
                attrs.append(names.index(c))
            elif isinstance(c, (int, np.integer)) and not isinstance(c, bool):
                if not 0 <= c < len(names):
                    raise ValueError(f"Column index {c} in columns is out of range.")
                attrs.append(int(c))
            else:
                raise TypeError(f"columns must be names or indices; got {c!r}.")
        if not attrs:
            raise ValueError("columns must name at least one column.")
        if len(set(attrs)) != len(attrs):
            raise ValueError(f"columns has repeated entries: {list(columns)}.")
        return attrs

    def marginal(self, columns, *, as_frame=False, return_info=False):
        """The estimated marginal distribution of some columns (fractions).

        Answered by summing a view that contains the columns, otherwise by
        maximum entropy over the views (:func:`dpsynth.views.answer_marginal`).
        Post-processing: no privacy cost.

        Parameters
        ----------
        columns : str, int or list of them
            Column names (or indices), in the order of the output axes.
        as_frame : bool, default=False
            Return a long DataFrame (one row per cell: the column values and a
            ``fraction`` column) instead of an array.
        return_info : bool, default=False
            Also return a :class:`~dpsynth.views.ReconstructionInfo`.

        Returns
        -------
        ndarray of shape (c_1, ..., c_k) or DataFrame
            Axis ``i`` is ``columns[i]``, indexed by its codes (the order of
            its categories or bins); the cells sum to 1.
        """
        check_is_fitted(self, "view_set_")
        attrs = self._columns_to_attrs(columns)
        table, info = self.view_set_.marginal(attrs)
        order = sorted(attrs)
        merged = getattr(self, "merged_values_", None)
        if merged:
            table = merged.expand_table(table, order)
        table = np.transpose(table, [order.index(a) for a in attrs])
        if as_frame:
            grids = np.indices(table.shape).reshape(len(attrs), -1)
            given = getattr(self, "_column_labels", None) or {}  # the input's number labels
            data = {}
            for a, g in zip(attrs, grids):
                labels = self._labels(a)
                name = self.feature_names_in_[a]
                data[given.get(name, name)] = [labels[i] for i in g]
            data["fraction"] = table.ravel()
            table = pd.DataFrame(data)
        return (table, info) if return_info else table

    def _labels(self, attr):
        schema = getattr(self.encoder_, "schema_", None)
        values = list(schema[attr].values) if schema is not None else []
        n = int(self.cardinalities_[attr])
        values = values + ["<missing>"] * (n - len(values))
        return values[:n]

    def _sample_codes(self, n_samples, random_state):
        check_is_fitted(self, "view_set_")
        if n_samples is None:
            n_samples = int(self.n_records_)
        if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) \
                or n_samples < 0:
            raise ValueError(f"n_samples must be a non-negative integer; got {n_samples!r}.")
        if random_state is None:
            ss = seed_sequence(self.random_state).spawn(3)[2] if self.random_state is not None \
                else np.random.SeedSequence()
        else:
            ss = seed_sequence(random_state)
        draw_ss, decode_ss = ss.spawn(2)
        if n_samples == 0:  # the table's columns and dtypes, no record
            return (np.zeros((0, len(self.cardinalities_)), dtype=np.int32),
                    np.random.default_rng(decode_ss))
        codes = self.view_set_.sample(int(n_samples), np.random.default_rng(draw_ss))
        merged = getattr(self, "merged_values_", None)
        if merged:
            codes = merged.expand_codes(codes, np.random.default_rng(ss.spawn(1)[0]))
        return codes, np.random.default_rng(decode_ss)

    def sample(self, n_samples=None, *, random_state=None):
        """Synthetic records drawn from the released views (post-processing).

        Parameters
        ----------
        n_samples : int, default=None
            Number of records (0: an empty table of the fitted columns and
            dtypes, as :class:`~dpsynth.DPMarginalSynthesizer` gives);
            ``None``: the (estimated) number of records.
        random_state : int, Generator or None, default=None
            ``None`` derives the stream from the estimator's ``random_state``
            (fresh OS entropy when that is None too).

        Returns
        -------
        DataFrame (or ndarray if fitted on one)
            Columns, column order and dtypes of the fitted table; with
            ``allow_missing`` (every column may then be missing) an integer or
            bool column is always its pandas nullable dtype (``Int64``,
            ``boolean``), whether or not a sample holds a missing cell.
        """
        codes, rng = self._sample_codes(n_samples, random_state)
        out = self.encoder_.inverse_transform(codes, random_state=rng)
        if self.allow_missing and isinstance(out, pd.DataFrame):
            for column in self.encoder_.schema_:
                if nullable_dtype(column.dtype) != column.dtype:
                    out[column.name] = out[column.name].astype(nullable_dtype(column.dtype))
        if isinstance(out, pd.DataFrame):
            out = arrow_restored(out, getattr(self, "_arrow_dtypes", {}))
            labels = getattr(self, "_column_labels", None)
            if labels:  # the input's number labels
                out.columns = output_labels(self.encoder_.schema_.with_labels(labels))
        return out
