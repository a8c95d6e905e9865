"""PriView: consistent noisy views and maximum-entropy marginals (central DP).

Qardaji, Yang, Li, "PriView: Practical Differentially Private Release of
Marginal Contingency Tables", SIGMOD 2014, as presented in Li, Lyu, Su, Yang,
"Differential Privacy: From Theory to Practice" (Synthesis Lectures, 2016),
Section 6.3.  The trusted curator computes ``w`` views (marginals over the
blocks of a covering design), adds ``Laplace(w / epsilon)`` to every cell
(one record changes one cell of each view: L1 sensitivity ``w``), makes them
consistent and non-negative (C+N+C) and answers any marginal by summation or
maximum entropy.  The post-processing is shared with CALM
(:mod:`dpsynth.views`).
"""

import itertools
import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions

from ..covering import bounded_cover, covering_design
from ..mechanisms import (exponential_mechanism, gaussian_measure, laplace_count,
                          laplace_measure, mechanism_name)
from ..accounting import (MAX_DELTA, PrivacySpent, Spend, check_delta, warn_large_delta,
                          zcdp_rho, zcdp_to_epsilon)
from ..utils._random import seed_sequence
from ..views import MergedValues, ViewSet, _ViewEstimatorMixin, postprocess, project

__all__ = ["PriViewSynthesizer", "gaussian_crossover", "priview_noise_error", "view_counts"]

#: Attributes per view the book recommends (Li et al., Section 6.3: ``ell = 8``
#: minimises the noise of pairs and triples at equal coverage for binary attributes).
BOOK_VIEW_SIZE = 8
_MAX_AUTO_CELLS = 2 ** 22  # no view of the automatic choice beyond 4 million cells
_MAX_AUTO_SETS = 50_000  # strength 3 and 4 are considered up to this many sets
#: Eq. 6.7 error of the pairs' design above which ``strength="auto"`` covers no pair
#: (strength 1) when the views are a covering design of a given ``view_size``.
PAIR_NOISE_LIMIT = 0.05
#: With cell-bounded views of strength 1: the automatic cell budget is the largest whose
#: views hold on average at least this many noise scales of records per cell.
MIN_CELL_SNR = 10.0
#: Cell-bounded views, ``strength="auto"``: strength 1 (joined by pairs chosen under DP)
#: when the pairs' cover of least expected noise (:meth:`PriViewSynthesizer._pair_noise`,
#: total variation of a pair's table) is above this.
PAIR_TVD_LIMIT = 0.10
#: The same limit for the plan on the full domain that sets the merge threshold (the
#: threshold ``merge_threshold`` was tuned with the views this limit plans).
MERGE_PLAN_TVD_LIMIT = 0.25
#: Cell-bounded views of strength 2 or more: the automatic cell budget is the largest, up
#: to the noise-versus-coverage optimum, whose pairs' expected noise is at most this (else
#: the budget of least pairs' noise).
PAIR_TVD_TARGET = 0.05
#: With ``select_pairs`` on: the shares of the views' budget spent on the strength-1 views,
#: on choosing the pairs (exponential mechanism) and on the chosen pairs' tables.
SELECT_SHARES = (0.2, 0.2, 0.6)
#: With ``select_pairs`` on and the automatic budget: the cell budget of the strength-1
#: views, the least of the automatic plan (each column alone, or two binary columns
#: together): the chosen pairs, not a fixed grouping, carry the associations.
SELECT_VIEW_CELLS = 4
#: With ``select_pairs`` on: a candidate pair's utility is lowered by this times the
#: expected L1 noise of its table (cells times the chosen tables' Laplace scale), so that
#: a pair of many-valued columns, whose table would be mostly noise, is chosen only when
#: its association is that much stronger.
SELECT_NOISE_PENALTY = 0.5
#: With ``select_pairs`` on and Gaussian noise: pairs beyond the spanning tree are chosen while
#: the expected noise (total variation) of a chosen pair's table of the median cells of
#: the candidate pairs, at the tables' noise once that many more are measured
#: (:meth:`PriViewSynthesizer._extra_pairs`), stays at most this; ``None``: the tree only.
EXTRA_PAIR_TVD = 0.10
#: At most this many times the tree's pairs are chosen beyond it.
EXTRA_PAIR_FACTOR = 1.0
#: The utility of the pairs beyond the tree: ``"model"``, the L1 distance of a pair's table
#: from its marginal in the tree's model (the consistent views and measured tree pairs),
#: or ``"independence"``, from the product of its columns' distributions (the tree's).
EXTRA_PAIR_UTILITY = "model"
#: Gaussian noise of a group of tables measured together: ``"equal"``, one sigma, or
#: ``"cells"``, sigma proportional to ``cells**(-1/3)`` (the least summed L1 noise).
GAUSSIAN_ALLOCATION = "cells"
#: ``mechanism="auto"``: below :func:`gaussian_crossover`, Gaussian noise when its own
#: plan's expected pair error (:meth:`PriViewSynthesizer._plan_error`, each plan's floored
#: at :data:`PAIR_TVD_TARGET`) is below ``1 - AUTO_PLAN_MARGIN`` times the Laplace plan's.
AUTO_PLAN_MARGIN = 0.035


def priview_noise_error(n_records, epsilon, n_views, n_attributes, view_size, n_cells=None,
                        *, coverage=None):
    """Expected noise error of a pair marginal (Li et al., eq. 6.7).

    ``err = sqrt(2 L) / (N eps) * sqrt(w d (d - 1) / (ell (ell - 1)))`` with
    ``L = 2^ell`` cells per view for binary attributes (``2^((ell+1)/2)`` in
    the book); ``n_cells`` generalises ``L`` to other cardinalities (the mean
    cells of a view).  The second factor is ``w / sqrt(r)`` with
    ``r = w ell (ell - 1) / (d (d - 1))`` the mean number of views holding a
    pair; ``coverage`` gives ``r`` directly (views of unequal sizes).
    """
    L = 2 ** view_size if n_cells is None else n_cells
    d, ell = n_attributes, view_size
    base = math.sqrt(2 * L) / (n_records * epsilon)
    if coverage is not None:
        return base * n_views / math.sqrt(max(coverage, 1e-12))
    if ell < 2:
        return base * math.sqrt(n_views)
    return base * math.sqrt(n_views * d * (d - 1) / (ell * (ell - 1)))


def gaussian_crossover(epsilon, delta):
    """Tables measured together from which Gaussian noise is the smaller.

    ``k`` tables (one record moves one cell of each) measured with the whole
    budget get ``Laplace(k / epsilon)`` noise per cell, of variance ``2 k**2 /
    epsilon**2``, or Gaussian noise of variance ``k / (2 rho)`` with ``rho =
    zcdp_rho(epsilon, delta)``, the zCDP budget of ``(epsilon, delta)``
    (:func:`~dpsynth.accounting.zcdp_rho`); the two are equal at ``k =
    epsilon**2 / (4 rho)``, which is returned: the Laplace variance grows as
    ``k**2``, the Gaussian one as ``k``.
    """
    return float(epsilon) ** 2 / (4.0 * zcdp_rho(float(epsilon), float(delta)))


def view_counts(codes, attrs, cardinalities):
    """Exact counts of a coded table over the attributes ``attrs``."""
    shape = tuple(int(cardinalities[a]) for a in attrs)
    cells = np.ravel_multi_index(tuple(codes[:, a] for a in attrs), shape)
    return np.bincount(cells, minlength=int(np.prod(shape))).reshape(shape).astype(float)


def _tree_marginals(tables, cardinalities):
    """Every pair's marginal in the model of tables joined as a forest.

    ``tables`` are consistent, non-negative (attrs, counts) tables whose
    two-column projections (a view's columns chained in order, and the pairs'
    tables) form a forest over the columns; the model is the one of that
    forest (each column given its neighbour towards the other).  Returns a
    dict from each sorted pair of connected columns to its counts (the
    tables' total).  A post-processing of the tables only.
    """
    edges = {}
    for attrs, table in tables:
        for a, b in zip(attrs[:-1], attrs[1:]):
            pair = np.clip(project(table, attrs, (a, b)), 0, None)
            edges.setdefault(a, []).append((b, pair))
            edges.setdefault(b, []).append((a, pair.T))
    total = max(float(tables[0][1].sum()), 0.0) if tables else 0.0
    marginals = {}
    for source in edges:
        first = np.clip(edges[source][0][1].sum(axis=1), 0, None)
        p = first / first.sum() if first.sum() > 0 else np.full(
            int(cardinalities[source]), 1.0 / int(cardinalities[source]))
        joint = {source: np.diag(p)}
        stack = [source]
        while stack:
            x = stack.pop()
            for y, pair in edges[x]:
                if y in joint:
                    continue
                rows = pair.sum(axis=1, keepdims=True)
                column = pair.sum(axis=0)
                fallback = column / column.sum() if column.sum() > 0 else np.full(
                    pair.shape[1], 1.0 / pair.shape[1])
                cond = np.where(rows > 0, pair / np.where(rows > 0, rows, 1.0), fallback)
                joint[y] = joint[x] @ cond
                stack.append(y)
        for y, j in joint.items():
            if source < y:
                marginals[(source, y)] = total * j
    return marginals


class PriViewSynthesizer(_ViewEstimatorMixin, BaseEstimator):
    """Central-DP marginals and synthetic data from consistent noisy views.

    PriView [1]_ [2]_: the views are sets of columns that together hold every
    ``strength``-set (the blocks of a covering design), each released with
    ``Laplace(w / epsilon)`` noise per cell, then made consistent (weighted
    means over every shared attribute set), non-negative (Ripple) and
    consistent again; any marginal is a sum of a view's cells or the
    maximum-entropy table matching the views; synthetic records are drawn
    from the views and moved by coordinate descent until their counts match
    every view (:meth:`~dpsynth.views.ViewSet.sample`).  Add/remove
    neighbours; ``mechanism="laplace"`` is the book's, pure ``epsilon``-DP,
    ``mechanism="gaussian"`` ``(epsilon, delta)``-DP, and the default
    ``mechanism="auto"``, ``(epsilon, delta)``-DP, takes the noise of the
    two that the plan favours (below).

    On a table too small for a pairs' cover (strength 1 chosen
    automatically: each column in one view, the views disjoint) the views
    get a fifth of their budget; a fifth goes to choosing, by the
    exponential mechanism, one pair of columns per view but one that joins
    the views into a spanning tree (the most associated pairs, by the L1
    distance of their table from the product of the columns' released
    distributions), and the rest to those pairs' tables (Laplace), made
    consistent with the views by noise-weighted consistency
    (``select_pairs``): a handful of pairs the data says matter instead of
    every pair, which that budget could not measure above the noise.  With
    Gaussian noise and records enough for more tables, the same shares
    also choose and measure pairs beyond the tree, as many as a public rule
    on the tables' expected noise allows (``select_pairs``).

    Before the views, the columns with many values (``merge_min_values`` or
    more) are shrunk, as MST does: a share ``merge_share`` of ``epsilon``
    releases their value counts (Laplace, L1 sensitivity the number of such
    columns), and in each of them the values counted below
    ``merge_threshold`` times the noise scale of a view cell (of the views
    planned on the full domain) share one merged code.  The views, their
    cell budget and design are then planned again on these smaller domains
    (a many-valued column's rare values hold little signal per unit of view
    noise but multiply the cells of every view that holds the column); the
    counts, summed over each merged code, also enter the consistency step
    as one-column tables weighted by their own noise; marginals and samples
    split a merged code among its values in proportion to their noisy
    counts.  Which columns are measured depends on the public domain only,
    which values are merged on the noisy counts only.  Binary and other
    small columns are never measured nor merged.

    With ``mechanism="gaussian"`` every measurement (value counts, record
    count, views, chosen pairs' tables) adds Gaussian noise instead
    (:func:`~dpsynth.mechanisms.gaussian_measure`, exact discrete Gaussian by
    default) and the release is accounted in zCDP: the budget is ``rho =
    (sqrt(epsilon + L) - sqrt(L))**2``, ``L = ln(1 / delta)``
    (:func:`~dpsynth.accounting.zcdp_rho`; the domain is declared, so no
    step spends ``delta`` directly and all of it is the conversion's),
    split as ``epsilon`` is: ``merge_share`` of ``rho`` to the value counts,
    ``count_epsilon**2 / 2`` to the record count (noise of scale ``1 /
    count_epsilon``, as the Laplace count's), and the rest to the views, or
    in ``SELECT_SHARES`` to the views, the choice of pairs and their
    tables.  ``k`` tables measured together (one record moves one cell of
    each: L2 sensitivity ``sqrt(k)``) with ``rho_k`` get ``sigma_i =
    sigma_c L_i**(-1/3)`` per cell of table ``i`` of ``L_i`` cells, ``rho_k
    = sum_i 1 / (2 sigma_i**2)`` (``sigma = sqrt(k / (2 rho_k))`` when the
    cells are equal): the split of ``rho_k`` of least summed L1 noise
    ``sum_i L_i sigma_i``, a function of the public domain; consistency
    weighs each table by its own variance.  The ``r`` rounds of the exponential mechanism
    with ``rho_s`` run at ``epsilon_r = sqrt(8 rho_s / r)`` each (bounded
    range: ``epsilon_r**2 / 8`` a round).  The plan (strength, cell budget,
    merge threshold, the pairs' noise penalty) reads the Gaussian noise as
    the Laplace noise of the same variance.  Why: Gaussian noise grows as the
    square root of the number of tables measured together, Laplace noise
    linearly, and a split of ``rho`` costs each part less noise than the
    same split of ``epsilon``; so on a table measured by tens of tables or
    more the views and pairs get less noise, for a ``delta`` above 0.  With
    a few tables (few columns, or a binary table's few wide views) the
    conversion costs more than it saves and Laplace noise is the smaller.

    With ``mechanism="auto"`` (the default) the record count (when the plan
    needs it) is drawn with Laplace noise whichever the choice, and the views
    are planned as for ``mechanism="laplace"`` on the declared domain (before
    any value is merged: the value counts are measured with the chosen
    noise); the number ``k`` of tables that plan measures (its views, and the
    chosen pairs joining them: ``planned_tables_``) picks the noise
    (``mechanism_``): Gaussian when ``k >=`` :func:`gaussian_crossover`
    ``(epsilon, delta) = epsilon**2 / (4 rho)``, the number of tables
    measured together from which the Gaussian variance ``k / (2 rho)`` is
    below the Laplace variance ``2 k**2 / epsilon**2`` (about 21 at
    ``epsilon = 1`` and 23 at ``epsilon = 4`` for ``delta = 1e-9``).  Below
    it, the views are also planned as for ``mechanism="gaussian"`` (the
    same domain and count), and each plan's expected pair error is
    estimated as the planner models it (:meth:`_plan_error`: the mean over
    all pairs of columns of the noise of the pair's table, a pair no table
    holds at :data:`PAIR_TVD_LIMIT`; each plan's floored at
    :data:`PAIR_TVD_TARGET`): Gaussian when the Gaussian plan's error is
    below ``1 - AUTO_PLAN_MARGIN`` times the Laplace plan's (``plan_errors_``),
    else Laplace.  Laplace: the release is ``mechanism="laplace"``'s, draw for
    draw, and ``privacy_spent_`` reports pure ``epsilon``, ``delta`` 0.
    Gaussian: the release is ``mechanism="gaussian"``'s but for the record
    count, whose Laplace noise of scale ``1 / count_epsilon`` is pure
    ``count_epsilon``-DP, hence ``count_epsilon**2 / 2``-zCDP (Bun and
    Steinke 2016, Prop. 1.4), the ``rho`` of the Gaussian count.  The choice
    reads public facts (the declared domain, ``epsilon``, ``delta``, the
    parameters) and a DP output (the noisy record count) only, so the whole
    is ``(epsilon, delta)``-DP: every output of the Laplace branch has a
    privacy loss of at most ``epsilon`` (hence the ``delta`` 0 it reports),
    but whether that branch is taken may depend on the noisy count; pass
    ``mechanism="laplace"`` for a pure ``epsilon``-DP guarantee.  Why: the
    plan says how many tables share the budget, and for that many the noise
    of the smaller variance is the better; below that, Gaussian noise can
    still pay through another plan (more pairs joining strength-1 views),
    which only its own plan shows, and the margin keeps Laplace noise when
    the two plans are near a tie, where the estimate cannot tell them apart;
    a binary table's few wide views keep the book's Laplace noise.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget (including ``count_epsilon`` and the share
        ``merge_share`` when spent).
    delta : float or None, default=None
        ``delta`` of the ``(epsilon, delta)`` guarantee with
        ``mechanism="gaussian"`` or ``"auto"``, in ``(0, 0.01]``; ``None``
        uses the fixed default ``1e-9`` (:data:`~dpsynth.accounting.DEFAULT_DELTA`, as
        :class:`~dpsynth.DPMarginalSynthesizer`), chosen before seeing any
        data and far below ``1 / n`` for any table in memory; ``fit`` warns
        when ``delta >= 1 / n_records_`` (with Gaussian noise).  Checked but
        not used with ``mechanism="laplace"``, whose release is ``(epsilon,
        0)``-DP.
    view_size : int or "auto", default="auto"
        Attributes per view.  An int: the views are a covering design of the
        column indices with that many columns each, whatever their numbers
        of values (the book's construction).  ``"auto"``: views built from
        the columns' numbers of codes in the views
        (``view_cardinalities_``; :func:`~dpsynth.local.bounded_cover`):
        every pair of columns lies in a view of at most ``max_view_cells``
        cells (a pair larger than that is a view of its own), with at most 8
        columns per view, the book's ``ell``; many-valued columns get views
        of their own built around them.  On a table whose columns all have
        ``c`` values these are the book's covering designs with
        ``floor(log_c(max_view_cells))`` columns per view.
    max_view_cells : int or "auto", default="auto"
        Cell budget of a view (with ``view_size="auto"``).  ``"auto"``: at
        most the power of two whose views minimise the book's
        noise-versus-coverage factor, ``sqrt(L / (P T))`` with ``L`` the mean
        cells of a view and ``P``, ``T`` the mean pairs and triples of
        columns it holds (the geometric mean of the two columns of the book's
        table in Section 6.3), from the numbers of codes of the columns in
        the views alone (``view_cardinalities_``, after merging), as the
        book's ``ell = 8`` is independent of the data: 256 cells (8 columns)
        on binary tables, larger budgets holding a many-valued column with a
        few others on non-binary ones.  With a noisy record count (when the
        strength is chosen), the largest power of two up to that optimum
        whose pairs' tables get an expected noise (total variation) of at
        most ``PAIR_TVD_TARGET = 0.05`` (:meth:`_pair_noise`), else the one
        of least such noise: with few records per cell, smaller views and
        more of them, so that a pair's table is not noise-dominated.  At
        strength 1 (no pair covered) joined by chosen pairs
        (``select_pairs``): ``SELECT_VIEW_CELLS = 4``, each column a view of
        its own (two binary columns may share one), the chosen pairs
        carrying the associations; at strength 1 without chosen pairs: the
        largest power of two whose views hold on average at least
        ``MIN_CELL_SNR = 10`` noise scales of records per cell
        (``N epsilon / (w L)``, ``N`` the noisy record count, ``w`` the
        views).  Set it to trade noise for coverage
        yourself: larger when associations among three or more columns
        matter more than the noise of each cell (many records, a large
        epsilon), smaller when the cells are noise-dominated (few records, a
        small epsilon).
    strength : int or "auto", default="auto"
        Every ``strength``-set of columns lies in a view (with
        ``view_size="auto"``: every such set that fits the cell budget).
        ``"auto"``: the largest ``t`` in {2, 3, 4} whose eq. 6.7 noise error
        (:func:`priview_noise_error`, with the design's mean cells and
        coverage) is <= 0.003, else 2 (the book's rule); but 1 when even
        the pairs' cover of least noise would add an expected total
        variation above ``PAIR_TVD_LIMIT = 0.10`` to a pair's table
        (cell-bounded views; with a given ``view_size``: when the eq. 6.7
        error exceeds 0.05 at strength 2): a small table with many columns,
        where the noise of a pair's table would exceed the pairwise
        associations the views are meant to carry; the views are then
        joined by a few pairs chosen under DP (``select_pairs``).  ``1``: no
        pair is required, each column lies in one view, the views as wide as
        the budget allows (see ``max_view_cells`` for the automatic budget;
        no pairs are chosen unless ``select_pairs=True``).  Override it with
        ``2`` when every pair matters even on a table that small, or with
        ``1`` when the per-column distributions matter most.
    count_epsilon : float, default=0.001
        Budget of the record count that ``strength="auto"`` and the
        automatic budgets need (only spent when more than one
        strength is possible, three or more columns, or when ``strength=1``
        is given with the automatic budget).  Its noise has scale
        ``1 / count_epsilon`` (1000 records by default: a rough estimate, as
        the book suggests); with ``mechanism="gaussian"`` it is Gaussian
        noise of that scale, ``rho = count_epsilon**2 / 2``.
    merge_share : float in [0, 1), default=0.1
        Share of ``epsilon`` (of ``rho`` with ``mechanism="gaussian"``)
        spent on the value counts of the columns with at
        least ``merge_min_values`` values (only spent when there is one);
        ``0``: no column is measured nor merged.
    merge_min_values : int, default=9
        Columns with at least this many values (the missing value included)
        are measured and may have values merged; at least 3, so that binary
        columns never are.
    merge_threshold : float, default=20.0
        A measured column's values whose noisy count is below
        ``merge_threshold`` times the noise scale of a view cell share one
        code in the views (when at least two are below it).  The scale is
        ``w / epsilon_views`` of the views planned on the full domain
        (``w`` their number): a value with fewer records holds little more
        than noise in every view that holds it.  Raise it to merge more,
        lower it to keep more values apart; ``0`` merges (almost) nothing
        but still spends ``merge_share`` on the counts.
    categories, bounds, n_bins, binning, allow_missing
        The public domain, as in :class:`~dpsynth.local.CALMSynthesizer`.
    weights : {"cells", "equal"}, default="cells"
        Consistency weights (identical for equal-size views).
    negativity_tol : float, default=1e-6
        Ripple threshold on counts.
    n_rounds : int, default=1
        Rounds of (Ripple, consistency) after the first consistency: 1 is the
        book's C+N+C.
    maxent_tol, maxent_max_iter : float, int
        Tolerance and cap of the IPF reconstruction.
    random_state : int, Generator or None, default=None
        ``None``: OS entropy; child streams by ``SeedSequence.spawn``.
    mechanism : {"auto", "laplace", "gaussian"}, default="auto"
        ``"laplace"``: the book's PriView, pure ``epsilon``-DP, Laplace noise
        and sequential composition of ``epsilon``.  ``"gaussian"``: Gaussian
        noise and the exponential mechanism accounted in zCDP, the release
        ``(epsilon, delta)``-DP (see above and ``delta``).  ``"auto"``:
        Gaussian noise when the Laplace plan measures at least
        :func:`gaussian_crossover` tables, or when the Gaussian plan's
        expected pair error is clearly below the Laplace plan's, else
        Laplace noise; ``(epsilon, delta)``-DP (see above).  Pass
        ``"laplace"`` when the guarantee must be pure, ``"gaussian"`` to have
        Gaussian noise whatever the plan.
    noise : {"discrete", "continuous"}, default="discrete"
        Exact integer noise of the same scale on the integer cell counts
        (discrete Laplace, the geometric mechanism, also ``epsilon``-DP,
        :func:`~dpsynth.mechanisms.laplace_measure`; or the discrete
        Gaussian calibrated to the continuous one's guarantee,
        :func:`~dpsynth.mechanisms.gaussian_measure`) or numpy's
        floating-point noise.
    select_pairs : bool or "auto", default="auto"
        Whether strength-1 views are joined by pairs chosen under DP.
        ``"auto"``: when strength 1 is chosen automatically
        (``strength="auto"`` with ``view_size="auto"``); ``True``: whenever
        the views have strength 1 (e.g. ``strength=1`` given); ``False``:
        never (the book's strength-1 views, with the whole budget).  With
        two or more strength-1 views, the views' budget ``epsilon_v`` is
        split ``SELECT_SHARES = (0.2, 0.2, 0.6)``: the strength-1 views
        (with the automatic budget, each column alone: ``SELECT_VIEW_CELLS``
        cells, so that the tree is MST's over the columns: a grouping fixed
        by the domain sizes alone would spend its cells on pairs the data may
        not associate); ``w - 1``
        rounds of the exponential mechanism (``0.2 epsilon_v / (w - 1)``
        each, utility sensitivity 1), each choosing the pair of columns from
        two still unjoined views whose table is furthest (L1) from the
        product of the two columns' distributions in the consistent
        strength-1 views scaled to their total, less half the expected L1
        noise its table would get (``SELECT_NOISE_PENALTY``: a pair of
        many-valued columns must be that much more associated to be worth
        its noise); and the chosen pairs' tables,
        ``Laplace(r / (0.6 epsilon_v))`` per cell (``r = w - 1`` tables).
        With Gaussian noise, ``k`` more pairs beyond the tree
        (``n_extra_pairs_``, :meth:`_extra_pairs`): the largest ``k`` up to
        ``EXTRA_PAIR_FACTOR = 1`` times ``w - 1`` for which a table of the
        median cells of the pairs of columns of different views, measured
        among ``r = w - 1 + k`` tables, has an expected noise (total
        variation, from the noisy record count) of at most
        ``EXTRA_PAIR_TVD = 0.10``: a function of the views' domain, the
        budget and the noisy count only, 0 where the tree's tables are
        noise-dominated (and with Laplace noise, whose scale grows as the
        tables measured, not as their square root).  The tree's pairs are
        then chosen and measured first, with ``(w - 1) / r`` of the
        selection's and of the tables' shares (every round and every table
        as if the ``r`` were measured together), and the ``k`` more drawn
        by the exponential mechanism from the pairs of different views not
        chosen, by the L1 distance of their table from their marginal in
        the model of the consistent views and the tree's tables (each
        column given its neighbour on the tree's path:
        :func:`_tree_marginals`; a post-processing, so sensitivity 1), less
        the same noise penalty, and measured with the rest: pairs whose
        association the tree does not already carry.
        Consistency then weighs each table by its own noise (GLS).  Set it
        to ``False`` when each column's own distribution matters more than
        any association.

    Attributes
    ----------
    encoder_, cardinalities_, feature_names_in_, n_features_in_
    view_size_, strength_ : int
        Most columns in a view, and the strength of the cover.
    merge_columns_ : list of int
        The columns whose value counts were measured (public: from the
        domain sizes).
    value_counts_ : dict of int to ndarray
        The noisy count of each value of those columns (original codes).
    merged_values_ : MergedValues
        The merged code of each value and its share of it
        (:class:`~dpsynth.views.MergedValues`; false when nothing is merged).
    merge_min_count_ : float or None
        The merge threshold in records (``None`` when nothing was measured).
    view_cardinalities_ : ndarray of int
        Number of codes of each column in the views (``cardinalities_``
        with the rare values of a measured column counted as one code).
    max_view_cells_ : int
        The cell budget used (the views have at most this many cells, but
        for a pair larger than it); with a given ``view_size``, the cells of
        the largest view.
    noisy_count_ : float or None
        The noisy count of the records (at least 1) that chose the
        strength (and the budget at strength 1) and, with
        ``mechanism="auto"``, the noise; ``None`` when it was not needed.
    marginal_sets_ : list of tuple of int
        The views' column sets (the covering design; a function of the
        views' domain), followed by ``selected_pairs_`` when pairs were
        chosen.
    noise_scale_ : float
        Noise scale per cell of the views of the design: Laplace ``w /
        epsilon_views`` (``epsilon_views`` their share of the budget), or
        the largest Gaussian scale drawn (each view its own, the smallest
        view's the largest, at least its ``sigma_i``; ``privacy_spent_``).
    select_pairs_ : bool
        Whether pairs were chosen to join strength-1 views.
    selected_pairs_ : list of tuple of int
        The chosen pairs, in the order drawn (a DP output; empty when none):
        the tree's ``w - 1``, then the ``n_extra_pairs_`` beyond it.
    n_extra_pairs_ : int
        How many pairs beyond the tree were chosen (public: from the views'
        domain, the budget and the noisy record count; 0 without chosen
        pairs).
    pair_noise_scale_ : float or None
        Noise scale per cell of the chosen pairs' tables (as
        ``noise_scale_``: the largest drawn, the tree's and the extra
        pairs' tables included).
    noisy_views_ : list of (tuple, ndarray)
        Noisy counts as released (on the views' domain), the chosen pairs'
        tables last.
    views_ : list of (tuple, ndarray)
        Consistent, non-negative counts (on the views' domain), in the order
        of ``noisy_views_``.
    view_set_ : ViewSet
    n_records_ : int
        The views' common (noisy) total.
    mechanism_ : {"laplace", "gaussian"}
        The noise used: ``mechanism``, or the choice of ``mechanism="auto"``.
    planned_tables_ : int or None
        With ``mechanism="auto"``: the tables (views and chosen pairs) of the
        Laplace plan on the declared domain, which chose ``mechanism_``;
        ``None`` otherwise.
    plan_errors_ : dict or None
        With ``mechanism="auto"`` below the crossover: the expected pair
        error (floored at :data:`PAIR_TVD_TARGET`) of the Laplace and of the
        Gaussian plan, keyed ``"laplace"`` and ``"gaussian"``, which chose
        ``mechanism_``; ``None`` otherwise.
    rho_ : float or None
        The zCDP budget of ``(epsilon, delta)`` with Gaussian noise
        (``None`` with Laplace noise).
    privacy_spent_ : PrivacySpent
        Laplace: ``epsilon`` (= ``epsilon``), ``delta`` 0, and each
        mechanism's ``epsilon``.  Gaussian: each mechanism's ``rho`` (with
        its ``sigma``, or ``sigma_c``, ``sigma_min`` and ``sigma_max`` for
        tables of unequal sigmas, L2 ``sensitivity`` and drawn (largest)
        ``noise_scale``, or the
        exponential mechanism's ``epsilon`` a round and ``rounds``), their
        sum ``rho``, ``delta`` and the ``epsilon = rho + 2 sqrt(rho
        ln(1/delta))`` they prove (at most ``epsilon``); with
        ``mechanism="auto"`` the Laplace record count has ``rho =
        count_epsilon**2 / 2`` (its ``pure_epsilon`` a parameter).

    References
    ----------
    .. [1] W. Qardaji, W. Yang, N. Li, "PriView: Practical Differentially
       Private Release of Marginal Contingency Tables", SIGMOD 2014.
    .. [2] N. Li, M. Lyu, D. Su, W. Yang, "Differential Privacy: From Theory
       to Practice", Morgan & Claypool 2016, Section 6.3.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from dpsynth.release import PriViewSynthesizer
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({c: rng.choice(["a", "b"], 2000) for c in "pqrs"})
    >>> synth = PriViewSynthesizer(epsilon=1.0, categories={c: ["a", "b"] for c in X},
    ...                            random_state=0).fit(X)
    >>> synth.marginal(["p", "s"]).shape
    (2, 2)
    """

    _parameter_constraints = {
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "delta": [Interval(numbers.Real, 0, MAX_DELTA, closed="right"), None],
        "view_size": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "max_view_cells": [Interval(numbers.Integral, 2, None, closed="left"),
                           StrOptions({"auto"})],
        "strength": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "count_epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "merge_share": [Interval(numbers.Real, 0, 1, closed="left")],
        "merge_min_values": [Interval(numbers.Integral, 3, None, closed="left")],
        "merge_threshold": [Interval(numbers.Real, 0, None, closed="left")],
        "weights": [StrOptions({"cells", "equal"})],
        "mechanism": [StrOptions({"auto", "laplace", "gaussian"})],
        "noise": [StrOptions({"discrete", "continuous"})],
        "select_pairs": ["boolean", StrOptions({"auto"})],
        **_ViewEstimatorMixin._view_constraints,
    }

    def __init__(self, *, epsilon=1.0, delta=None, view_size="auto", max_view_cells="auto",
                 strength="auto", count_epsilon=0.001, merge_share=0.1, merge_min_values=9,
                 merge_threshold=20.0, categories="auto", bounds=None, n_bins=3,
                 binning="uniform", allow_missing=False, weights="cells", negativity_tol=1e-6,
                 n_rounds=1, maxent_tol=1e-8, maxent_max_iter=1000, random_state=None,
                 mechanism="auto", noise="discrete", select_pairs="auto"):
        self.epsilon = epsilon
        self.delta = delta
        self.view_size = view_size
        self.max_view_cells = max_view_cells
        self.strength = strength
        self.count_epsilon = count_epsilon
        self.merge_share = merge_share
        self.merge_min_values = merge_min_values
        self.merge_threshold = merge_threshold
        self.categories = categories
        self.bounds = bounds
        self.n_bins = n_bins
        self.binning = binning
        self.allow_missing = allow_missing
        self.weights = weights
        self.negativity_tol = negativity_tol
        self.n_rounds = n_rounds
        self.maxent_tol = maxent_tol
        self.maxent_max_iter = maxent_max_iter
        self.random_state = random_state
        self.mechanism = mechanism
        self.noise = noise
        self.select_pairs = select_pairs

    def _measure_values(self, codes, rng, total):
        """Release the value counts of the many-valued columns.

        Sets ``merge_columns_`` (from the public domain sizes) and
        ``value_counts_``; returns the spend of the counts (``None`` when
        nothing is measured), a share ``merge_share`` of the budget
        ``total`` (``epsilon``, or ``rho`` with the Gaussian mechanism).
        """
        cards = [int(c) for c in self.cardinalities_]
        self.merge_columns_ = self._merge_columns()
        self.value_counts_ = {}
        if not self.merge_columns_:
            return None
        m = len(self.merge_columns_)
        if self.mechanism_ == "gaussian":
            # one record adds 1 to one count of each measured column: L2 sensitivity sqrt(m)
            rho = float(self.merge_share) * total
            sigma = math.sqrt(m / (2.0 * rho))
            scale = sigma
            for j in self.merge_columns_:
                counts = np.bincount(codes[:, j], minlength=cards[j])
                self.value_counts_[j], scale = gaussian_measure(counts, sigma, rng, self.noise)
            return {"name": f"value counts of {m} columns (to merge rare values)",
                    "mechanism": mechanism_name("gaussian", self.noise), "rho": rho,
                    "sigma": sigma, "sensitivity": math.sqrt(m),
                    "noise_scale": float(scale)}
        epsilon = float(self.merge_share) * total
        # one record adds 1 to one count of each measured column: L1 sensitivity m
        for j in self.merge_columns_:
            counts = np.bincount(codes[:, j], minlength=cards[j])
            self.value_counts_[j] = laplace_measure(counts, epsilon, rng, self.noise,
                                                    sensitivity=m)
        return {"name": f"value counts of {m} columns (to merge rare values)",
                "mechanism": mechanism_name("laplace", self.noise), "epsilon": epsilon,
                "sensitivity": float(m), "scale": m / epsilon}

    def _merge_columns(self):
        """The columns whose value counts are measured: from the public domain sizes."""
        if not self.merge_share > 0:
            return []
        return [j for j, c in enumerate(self.cardinalities_) if int(c) >= self.merge_min_values]

    def _choose_mechanism(self, candidates, delta):
        """``mechanism="auto"``: the noise of the smaller variance, or of the better plan.

        The Laplace plan of the views on the declared domain (before any
        value is merged: the value counts are measured with the noise chosen
        here) with the noisy record count ``noisy_count_`` (drawn by Laplace
        noise whatever the choice) measures ``planned_tables_`` tables, its
        views and the chosen pairs joining them; Gaussian noise when that is
        at least :func:`gaussian_crossover` of ``(epsilon, delta)``.  Below
        it, the Gaussian plan on the same domain and count too: Gaussian
        noise when its expected pair error (:meth:`_plan_error`, floored at
        :data:`PAIR_TVD_TARGET`) is below ``1 - AUTO_PLAN_MARGIN`` times the
        Laplace plan's, else Laplace noise; Laplace noise too when the
        Gaussian budget cannot pay the record count.  A function of the
        declared domain, the parameters and the noisy record count only.
        """
        self.mechanism_ = "laplace"  # the plan below is the Laplace plan
        self.view_cardinalities_ = np.asarray(self.cardinalities_, dtype=np.int64)
        merge_share = float(self.merge_share) if self._merge_columns() else 0.0
        eps_views = float(self.epsilon) * (1.0 - merge_share)
        # as fit's Gaussian budget (a relative 1e-12 less), so fit never refuses the choice
        rho_views = zcdp_rho(float(self.epsilon), delta) * (1.0 - 1e-12) * (1.0 - merge_share)
        if self.noisy_count_ is not None:
            eps_views -= float(self.count_epsilon)
            rho_views -= float(self.count_epsilon) ** 2 / 2.0
            if eps_views <= 0.0:
                return "laplace"  # fit says why (count_epsilon too large)
        budget, t = self._plan(candidates, eps_views)
        self.planned_tables_ = self._planned_tables(budget, t)
        if rho_views <= 0.0:
            return "laplace"
        if self.planned_tables_ >= gaussian_crossover(float(self.epsilon), delta):
            return "gaussian"
        if self.noisy_count_ is None:
            return "laplace"
        # below the crossover: each noise's own plan, by its expected pair error
        laplace_error = max(self._plan_error(budget, t, eps_views), PAIR_TVD_TARGET)
        self.mechanism_ = "gaussian"
        g_budget, g_t = self._plan(candidates, rho_views)
        gaussian_error = max(self._plan_error(g_budget, g_t, rho_views), PAIR_TVD_TARGET)
        self.mechanism_ = "laplace"
        self.plan_errors_ = {"laplace": laplace_error, "gaussian": gaussian_error}
        if gaussian_error < (1.0 - AUTO_PLAN_MARGIN) * laplace_error:
            return "gaussian"
        return "laplace"

    def _plan_error(self, budget, t, epsilon_views):
        """Expected noise of a pair's table under the plan ``(budget, t)``, over all pairs.

        Each pair of columns counts with the expected total variation its
        table gets from the plan, as the planner models it: a pair held by a
        view as :meth:`_pair_noise` (its smallest view, ``w`` tables
        measured with ``epsilon_views``); with strength-1 views joined by
        chosen pairs (:meth:`fit`'s split and shares), a chosen pair as
        :meth:`_extra_pairs` (a table of the median cells among the tree's
        and the extra pairs' tables); a pair no table holds counts
        :data:`PAIR_TVD_LIMIT`, the noise above which the planner leaves
        pairs uncovered.  Read under ``mechanism_``; a function of the
        declared domain, the budget and the noisy record count only.
        """
        d = self.n_features_in_
        n = max(float(self.noisy_count_), 1.0)
        cards = [int(c) for c in self.view_cardinalities_]
        views, eps_views, chosen = self._design(budget, t), epsilon_views, 0
        if self._selects_pairs(t):
            split = self._design(SELECT_VIEW_CELLS if self.max_view_cells == "auto"
                                 else budget, t)
            if len(split) >= 2:
                views, eps_views = split, epsilon_views * SELECT_SHARES[0]
                eps_pairs = epsilon_views * SELECT_SHARES[2]
                group = {a: i for i, v in enumerate(split) for a in v}
                cells = [cards[a] * cards[b] for a, b in itertools.combinations(sorted(group), 2)
                         if group[a] != group[b]]
                chosen = len(split) - 1 + self._extra_pairs([(v, None) for v in split],
                                                            eps_pairs)
                scale = chosen / self._laplace_epsilon(chosen, eps_pairs)
                chosen_noise = float(np.median(cells)) * scale / (n * math.sqrt(math.pi))
        scale, roots = self._pair_roots(views, n, eps_views)
        total = sum(scale * root for root in roots.values())
        pairs = max(1, d * (d - 1) // 2)
        if chosen:
            total += chosen * chosen_noise
        total += max(0, pairs - len(roots) - chosen) * PAIR_TVD_LIMIT
        return float(total / pairs)

    def _laplace_epsilon(self, n_tables, budget):
        """The epsilon whose Laplace noise on ``n_tables`` tables has the variance of ours.

        ``budget`` is the tables' share: an epsilon (Laplace: returned as
        is) or a zCDP ``rho`` (Gaussian: noise ``sigma = sqrt(n / (2 rho))``
        per cell, of the variance of the Laplace scale ``n / epsilon`` for
        ``epsilon = 2 sqrt(n rho)``).  The plan (strength, cell budget,
        merge threshold, the pairs' noise penalty) is written for Laplace
        scales ``n / epsilon``; this makes it read the Gaussian noise by its
        variance.  A function of public parameters only.
        """
        if self.mechanism_ == "gaussian":
            return 2.0 * math.sqrt(n_tables * budget)
        return budget

    def _cost(self, spend):
        """A spend's share of the budget: its epsilon (Laplace) or its rho (Gaussian)."""
        return spend["rho"] if self.mechanism_ == "gaussian" else spend["epsilon"]

    def _variances(self, spend, n_tables):
        """Each table's noise variance relative to ``noise_scale_`` (GLS weights)."""
        scales = spend.get("_scales") or [self._drawn_scale(spend)] * n_tables
        return [(float(x) / self.noise_scale_) ** 2 for x in scales]

    def _drawn_scale(self, spend):
        """The noise scale per cell a measurement drew (Laplace ``b``, Gaussian ``sigma``)."""
        return spend["noise_scale"] if self.mechanism_ == "gaussian" else spend["scale"]

    def _plan(self, candidates, epsilon_views, final=True):
        """The cell budget and the strength, on the views' domain ``view_cardinalities_``.

        With a given ``view_size``: the book's rule (the largest strength whose
        eq. 6.7 error is <= 0.003, else 2; 1 above :data:`PAIR_NOISE_LIMIT`),
        budget ``None``.  With cell-bounded views: :meth:`_plan_cells`.
        """
        if self.view_size == "auto":
            return self._plan_cells(candidates, epsilon_views, final)
        t = candidates[0]
        if self.noisy_count_ is not None:
            for cand in candidates:
                err = self._noise_error(self._design(None, cand), self.noisy_count_,
                                        epsilon_views)
                if err <= 0.003:
                    t = cand
                if cand == 2 and err > PAIR_NOISE_LIMIT:
                    t = 1  # the pairs' views would hold more noise than association
                    break
        return None, t

    def _plan_cells(self, candidates, epsilon_views, final=True):
        """Cell budget and strength of cell-bounded views, from public facts only.

        The inputs are the views' domain (``view_cardinalities_``), the
        budget of the views (``epsilon_views``) and the noisy record count.
        For each power-of-two budget up to the noise-versus-coverage optimum
        (:meth:`_choose_budget`, the book's trade-off) the pairs' cover is
        built and its expected noise per pair computed (:meth:`_pair_noise`).
        ``strength="auto"``: strength 1 when the least of these is above
        :data:`PAIR_TVD_LIMIT` (the pairs' tables would hold more noise than
        association), the budget then being the largest power of two whose
        views (each column in one) hold on average at least
        :data:`MIN_CELL_SNR` noise scales of records per cell; otherwise the
        budget is the largest up to the optimum whose pairs' noise is at most
        :data:`PAIR_TVD_TARGET` (else the least-noise budget) and the strength
        the book's (the largest candidate whose eq. 6.7 error is <= 0.003,
        else 2).  ``strength=1`` given: the records-per-cell budget.  The
        plan on the full domain (``final=False``, before rare values are
        merged; its number of views sets the merge threshold) keeps the
        optimum budget and switches to strength 1 above
        :data:`MERGE_PLAN_TVD_LIMIT` instead.  A given ``max_view_cells`` is kept (only the
        strength is chosen); without a noisy count (nothing to choose) the
        plan is the optimum and the given strength.
        """
        n, eps = self.noisy_count_, epsilon_views
        fixed = self.max_view_cells != "auto"
        optimum = int(self.max_view_cells) if fixed else self._choose_budget()
        if n is None:
            return optimum, candidates[0]
        budgets = [optimum] if fixed else [2 ** k for k in range(2, optimum.bit_length())]
        noise = {b: self._pair_noise(self._design(b, 2), n, eps) for b in budgets}
        least = min(budgets, key=lambda b: (noise[b], -b))
        limit = PAIR_TVD_LIMIT if final else MERGE_PLAN_TVD_LIMIT
        if candidates == [1] or (self.strength == "auto" and noise[least] > limit):
            if fixed or not final:
                return optimum, 1
            budget = 4
            for k in range(2, optimum.bit_length()):
                views = self._design(2 ** k, 1)
                cells = np.mean([math.prod(int(self.view_cardinalities_[a]) for a in v)
                                 for v in views])
                if n * self._laplace_epsilon(len(views), eps) / (len(views) * cells) \
                        >= MIN_CELL_SNR:
                    budget = 2 ** k
            return budget, 1
        quiet = [b for b in budgets if noise[b] <= PAIR_TVD_TARGET]
        budget = optimum if not final else (max(quiet) if quiet else least)
        t = candidates[0]
        for cand in candidates:
            if self._noise_error(self._design(budget, cand), n, eps) <= 0.003:
                t = max(t, cand)
        return budget, t

    def _pair_noise(self, views, n_records, epsilon):
        """Expected total variation that the views' noise adds to a pair's table.

        Mean over the pairs held by a view: a pair ``(a, b)`` read from the
        smallest view holding it, of ``L_V`` cells, sums ``L_V / L_ab``
        Laplace(``w / epsilon``) cells into each of its ``L_ab`` cells, so
        its expected total variation is about
        ``w sqrt(L_ab L_V) / (epsilon N sqrt(pi))`` (normal approximation).
        A function of the public domain, the views and the noisy count.
        """
        scale, roots = self._pair_roots(views, n_records, epsilon)
        if not roots:
            return 0.0
        return scale * float(np.mean(list(roots.values())))

    def _pair_roots(self, views, n_records, epsilon):
        """``(scale, {pair: sqrt(L_ab L_V)})`` of :meth:`_pair_noise`: the pairs held by
        a view, each with its smallest view's ``L_V``; a pair's expected total
        variation is ``scale`` times its root."""
        cards = [int(c) for c in self.view_cardinalities_]
        epsilon = self._laplace_epsilon(len(views), epsilon)
        scale = len(views) / (epsilon * max(float(n_records), 1.0) * math.sqrt(math.pi))
        smallest = {}
        for v in views:
            cells = math.prod(cards[a] for a in v)
            for pair in itertools.combinations(sorted(v), 2):
                if cells < smallest.get(pair, math.inf):
                    smallest[pair] = cells
        return scale, {(a, b): math.sqrt(cards[a] * cards[b] * cells)
                       for (a, b), cells in smallest.items()}

    def _measure_tables(self, codes, sets, epsilon, rng, what):
        """Noisy counts of every cell of the tables over ``sets``, and their spend.

        One record adds one to one cell of each table: L1 sensitivity
        ``len(sets)``, Laplace scale ``len(sets) / epsilon``; with the
        Gaussian mechanism ``epsilon`` is a ``rho``, the L2 sensitivity
        ``sqrt(len(sets))`` and table ``i`` of ``L_i`` cells gets ``sigma_i
        = sigma_c L_i**(-1/3)``, ``rho = sum_i 1 / (2 sigma_i**2)``
        (:data:`GAUSSIAN_ALLOCATION`; ``"equal"``: ``sigma = sqrt(len(sets)
        / (2 rho))``).
        """
        if self.mechanism_ == "gaussian" and GAUSSIAN_ALLOCATION == "cells" and len(sets) > 1:
            # sigma_i proportional to cells_i**(-1/3): the least summed L1 noise
            # sum cells_i sigma_i at rho = sum 1 / (2 sigma_i**2) (one record moves one
            # cell of each table: table i is 1 / (2 sigma_i**2)-zCDP, the tables compose)
            cells = np.array([math.prod(int(self.view_cardinalities_[a]) for a in attrs)
                              for attrs in sets], dtype=float)
            c = math.sqrt(float(np.sum(cells ** (2.0 / 3.0))) / (2.0 * epsilon))
            sigmas = c * cells ** (-1.0 / 3.0)
            noisy, scales = [], []
            for attrs, sigma in zip(sets, sigmas):
                table, scale = gaussian_measure(
                    view_counts(codes, attrs, self.view_cardinalities_), float(sigma), rng,
                    self.noise)
                noisy.append((attrs, table))
                scales.append(float(scale))
            return noisy, {"name": f"{len(sets)} {what}, every cell",
                           "mechanism": mechanism_name("gaussian", self.noise),
                           "rho": float(np.sum(1.0 / (2.0 * sigmas ** 2))),
                           "sigma_c": c, "sigma_min": float(sigmas.min()),
                           "sigma_max": float(sigmas.max()),
                           "allocation": "sigma = sigma_c * cells**(-1/3)",
                           "sensitivity": math.sqrt(len(sets)),
                           "noise_scale": float(max(scales)), "_scales": scales}
        if self.mechanism_ == "gaussian":
            # one record adds one to one cell of each table: L2 sensitivity sqrt(len(sets))
            sigma = math.sqrt(len(sets) / (2.0 * epsilon))
            noisy, scale = [], sigma
            for attrs in sets:
                table, scale = gaussian_measure(
                    view_counts(codes, attrs, self.view_cardinalities_), sigma, rng, self.noise)
                noisy.append((attrs, table))
            return noisy, {"name": f"{len(sets)} {what}, every cell",
                           "mechanism": mechanism_name("gaussian", self.noise), "rho": epsilon,
                           "sigma": sigma, "sensitivity": math.sqrt(len(sets)),
                           "noise_scale": float(scale)}
        scale = len(sets) / epsilon
        noisy = [(attrs, laplace_measure(view_counts(codes, attrs, self.view_cardinalities_),
                                         1.0, rng, self.noise, sensitivity=scale))
                 for attrs in sets]
        return noisy, {"name": f"{len(sets)} {what}, every cell",
                       "mechanism": mechanism_name("laplace", self.noise),
                       "epsilon": epsilon, "sensitivity": float(len(sets)), "scale": scale}

    def _selects_pairs(self, t):
        """Whether strength-1 views are joined by chosen pairs: a public function of the plan.

        ``select_pairs=True``: whenever the views have strength 1;
        ``"auto"``: when strength 1 was chosen automatically for cell-bounded
        views (``strength="auto"``, ``view_size="auto"``), i.e. when covering
        every pair would bury the pairs' tables in noise.
        """
        if self.select_pairs is True or self.select_pairs == "auto" and (
                self.strength == "auto" and self.view_size == "auto"):
            return t == 1 and self.n_features_in_ >= 2
        return False

    def _column_shares(self, views):
        """Each column's distribution in disjoint ``views`` (clipped), and their total."""
        cards = [int(c) for c in self.view_cardinalities_]
        shares = {}
        for attrs, table in views:
            for a in attrs:
                column = np.clip(project(table, attrs, (a,)), 0, None)
                shares[a] = column / column.sum() if column.sum() > 0 \
                    else np.full(cards[a], 1.0 / cards[a])
        return shares, max(float(views[0][1].sum()), 0.0)

    def _choose_pairs(self, codes, views, epsilon, epsilon_pairs, rng, *, n_tables=None,
                      extra=0, chosen=None, model=None):
        """The pairs of columns that join the strength-1 views, chosen under DP.

        The views are disjoint sets of columns.  A spanning tree joins them
        (as MST does for single columns): each of the ``w - 1`` rounds draws,
        by the exponential mechanism, one pair of columns of two still
        unjoined groups, with utility the L1 distance between the pair's
        table and the product of its two columns' distributions in ``views``
        (consistent, non-negative: a post-processing of the noisy views)
        scaled to their total, minus :data:`SELECT_NOISE_PENALTY` times the
        expected L1 noise of the pair's table once measured (its cells times
        the Laplace scale of ``n_tables`` tables measured with
        ``epsilon_pairs``; ``n_tables`` defaults to ``w - 1``).  Then
        ``extra`` rounds draw pairs of columns of different views not yet
        chosen, by the same utility; with ``chosen`` (the tree, already
        measured) only these, and ``model`` (the consistent views and the
        tree's tables) replaces the product by the pair's marginal in the
        tree's model (:func:`_tree_marginals`).  The product and the model
        are fixed by released outputs and the penalty by public facts, so one
        record more or less moves a utility by at most 1 (sensitivity 1);
        the rounds of a call share ``epsilon`` equally.  With the Gaussian
        mechanism ``epsilon`` and ``epsilon_pairs`` are ``rho``s: the rounds
        run at ``sqrt(8 rho / rounds)`` each (zCDP ``epsilon**2 / 8`` a
        round), the tables' scale is their Laplace equivalent
        (:meth:`_laplace_epsilon`).  Returns the pairs (sorted tuples, in the
        order drawn) and the spend.
        """
        d = self.n_features_in_
        cards = [int(c) for c in self.view_cardinalities_]
        group = np.empty(d, dtype=np.int64)
        for i, (attrs, table) in enumerate(views):
            group[list(attrs)] = i
        view_of = group.copy()
        shares, total = self._column_shares(views)
        tree = 0 if chosen is not None else len(views) - 1
        rounds = tree + int(extra)
        n_tables = len(views) - 1 if n_tables is None else int(n_tables)
        gaussian = self.mechanism_ == "gaussian"
        # Gaussian: epsilon is a rho; a round at eps costs eps**2 / 8 (bounded range)
        eps_round = math.sqrt(8.0 * epsilon / rounds) if gaussian else epsilon / rounds
        # of each chosen table's cells (its Laplace-equivalent scale): public
        noise_scale = n_tables / self._laplace_epsilon(n_tables, epsilon_pairs)
        marginals = _tree_marginals(model, cards) if model is not None else {}
        utility = {}
        for a, b in itertools.combinations(range(d), 2):
            if view_of[a] != view_of[b]:
                table = view_counts(codes, (a, b), cards)
                expected = marginals.get((a, b))
                if expected is None:
                    expected = total * np.outer(shares[a], shares[b])
                distance = np.abs(table - expected).sum()
                penalty = SELECT_NOISE_PENALTY * cards[a] * cards[b] * noise_scale
                utility[(a, b)] = float(distance) - penalty
        picked = []
        taken = set(chosen or ())
        for k in range(rounds):
            if k < tree:
                candidates = [p for p in utility if group[p[0]] != group[p[1]]]
            else:
                candidates = [p for p in utility if p not in taken]
            if not candidates:
                break
            i = exponential_mechanism(np.array([utility[p] for p in candidates]), eps_round,
                                      rng, sensitivity=1.0, noise=self.noise)
            a, b = candidates[i]
            picked.append((a, b))
            taken.add((a, b))
            group[group == group[b]] = group[a]
        what = (f"{rounds} pairs joining the views (exponential mechanism)" if not extra
                else f"{tree} pairs joining the views and {extra} more (exponential mechanism)"
                if tree else f"{rounds} pairs beyond the tree (exponential mechanism)")
        if gaussian:
            return picked, {"name": what, "mechanism": "exponential",
                            "rho": rounds * eps_round ** 2 / 8.0,
                            "epsilon": eps_round, "sensitivity": 1.0, "rounds": rounds,
                            "accounting": "zCDP (bounded range): epsilon**2 / 8 a round"}
        return picked, {"name": what, "mechanism": "exponential", "epsilon": float(epsilon),
                        "sensitivity": 1.0, "rounds": rounds}

    def _extra_pairs(self, views, epsilon_pairs):
        """How many pairs beyond the spanning tree are chosen: a public function.

        The largest ``k`` up to :data:`EXTRA_PAIR_FACTOR` times the tree's ``w
        - 1`` pairs (and the pairs of columns of different views) for which
        a table of ``L`` cells, measured among ``w - 1 + k`` chosen tables
        with ``epsilon_pairs``, has an expected noise (total variation,
        ``L b / (N sqrt(pi))`` with ``b`` the Laplace-equivalent scale and
        ``N`` the noisy record count, as :meth:`_pair_noise`) of at most
        :data:`EXTRA_PAIR_TVD`; ``L`` is the median cells of the pairs of
        columns of different views.  0 when that noise is above the limit
        already for one table more than the tree, or without a noisy count.
        It reads the views' domain, their grouping, the budget and the noisy
        count only, never the data: more pairs where records are many
        against the noise, none where the tree's tables are noise-dominated.
        """
        if EXTRA_PAIR_TVD is None or self.noisy_count_ is None or self.mechanism_ != "gaussian":
            return 0  # Laplace noise: each table's noise grows as the tables measured
        cards = [int(c) for c in self.view_cardinalities_]
        group = {a: i for i, (attrs, _) in enumerate(views) for a in attrs}
        cells = [cards[a] * cards[b] for a, b in itertools.combinations(sorted(group), 2)
                 if group[a] != group[b]]
        tree = len(views) - 1
        most = min(len(cells) - tree, int(math.floor(EXTRA_PAIR_FACTOR * tree)))
        if not cells or most <= 0:
            return 0
        size = float(np.median(cells))
        n = max(float(self.noisy_count_), 1.0)
        k = 0
        for more in range(1, most + 1):
            r = tree + more
            scale = r / self._laplace_epsilon(r, epsilon_pairs)
            if size * scale / (n * math.sqrt(math.pi)) > EXTRA_PAIR_TVD:
                break
            k = more
        return k

    def _needs_count(self, candidates):
        """Whether the plan needs the record count: a public function of the parameters.

        The strength is chosen (``strength="auto"`` over three or more
        columns: strength 1 is always a candidate, even when only one of 2, 3
        and 4 is, e.g. on a table too wide for the triples' designs), or the
        cell budget of strength-1 cell-bounded views over two or more columns
        is.
        """
        return len(candidates) > 1 or (
            self.strength == "auto" and self.n_features_in_ >= 3) or (
            candidates == [1] and self.view_size == "auto" and self.max_view_cells == "auto"
            and self.n_features_in_ >= 2)

    def _merged_counts(self, j):
        """The noisy value counts of column ``j`` on the views' (merged) codes."""
        counts = self.value_counts_[j]
        g = self.merged_values_.groups[j]
        if g is None:
            return np.asarray(counts, dtype=float)
        return np.bincount(g, weights=counts, minlength=int(self.view_cardinalities_[j]))

    def _design(self, budget, t):
        """The views: a covering design (``view_size`` given) or a cell-bounded cover."""
        d = self.n_features_in_
        if self.view_size != "auto":
            ell = min(int(self.view_size), d)
            return [tuple(b) for b in covering_design(d, ell, min(t, ell))]
        return bounded_cover(self.view_cardinalities_, budget, t, max_size=BOOK_VIEW_SIZE)

    def _noise_error(self, views, n_records, epsilon):
        """Eq. 6.7 for the design ``views``: ``sqrt(2 L / r) * w / (N eps)``."""
        d = self.n_features_in_
        epsilon = self._laplace_epsilon(len(views), epsilon)
        cells = [math.prod(int(self.view_cardinalities_[a]) for a in v) for v in views]
        n_pairs = max(1, d * (d - 1) // 2)
        coverage = sum(len(v) * (len(v) - 1) // 2 for v in views) / n_pairs
        return priview_noise_error(n_records, epsilon, len(views), d, 2,
                                   float(np.mean(cells)), coverage=coverage)

    def _choose_budget(self):
        """The cell budget whose views balance noise and coverage (Li et al., Section 6.3).

        The book's trade-off: a view of ``L`` cells adds noise of order
        ``sqrt(L)`` to every marginal read from it and covers ``C(ell, 2)``
        pairs and ``C(ell, 3)`` triples; with ``w`` proportional to the sets
        to cover over the sets per view, the noise of a pair goes as
        ``sqrt(L) / C(ell, 2)`` and that of a triple as ``sqrt(L) / C(ell, 3)``
        (the columns of its table).  The budget minimises their geometric
        mean, with ``L``, ``C(ell, 2)`` and ``C(ell, 3)`` the means over the
        views of :func:`~dpsynth.local.bounded_cover`; for binary columns
        this is ``ell = 8`` (256 cells), the book's choice.  Ties: the
        smallest budget.
        """
        best, previous = None, None
        budget = 4
        while budget <= _MAX_AUTO_CELLS:
            views = self._design(budget, 2)
            if views != previous:
                cells = np.mean([math.prod(int(self.view_cardinalities_[a]) for a in v)
                                 for v in views])
                pairs = np.mean([math.comb(len(v), 2) for v in views])
                triples = np.mean([math.comb(len(v), 3) for v in views])
                key = ((0, math.sqrt(cells / (pairs * triples))) if triples > 0
                       else (1, math.sqrt(cells) / pairs) if pairs > 0 else (2, cells))
                if best is None or key < best[0]:
                    best = (key, budget)
                previous = views
            if all(len(v) >= min(BOOK_VIEW_SIZE, self.n_features_in_) for v in views):
                break  # every view is as wide as allowed: larger budgets change nothing
            budget *= 2
        return best[1]

    def _merge_and_plan(self, candidates, epsilon_views, codes):
        """The merge of rare values (from the noisy value counts) and the views' plan.

        Sets ``merged_values_``, ``merge_min_count_`` and
        ``view_cardinalities_``; returns the cell budget, the strength and
        ``codes`` on the views' domain.
        """
        d = self.n_features_in_
        budget, t = self._plan(candidates, epsilon_views, final=not self.value_counts_)
        self.merged_values_ = MergedValues([None] * d, [None] * d)
        self.merge_min_count_ = None
        if self.value_counts_:
            # the noise scale of a cell of the views planned on the full domain
            w_planned = len(self._design(budget, t))
            planned = w_planned / self._laplace_epsilon(w_planned, epsilon_views)
            self.merge_min_count_ = float(self.merge_threshold) * planned
            self.merged_values_ = MergedValues.from_counts(
                self.value_counts_, self.cardinalities_, self.merge_min_count_)
            if self.merged_values_:
                self.view_cardinalities_ = self.merged_values_.cardinalities(self.cardinalities_)
                codes = self.merged_values_.merge(codes)
            budget, t = self._plan(candidates, epsilon_views)
        return budget, t, codes

    def _planned_tables(self, budget, t):
        """How many tables the plan ``(budget, t)`` measures: its views and chosen pairs.

        Strength-1 views joined by chosen pairs (``select_pairs``) are split
        as :meth:`fit` splits them, ``w`` views and ``w - 1`` pairs.  A
        function of the plan, hence of public facts and DP outputs only.
        """
        tables = len(self._design(budget, t))
        if self._selects_pairs(t):
            split = self._design(SELECT_VIEW_CELLS if self.max_view_cells == "auto"
                                 else budget, t)
            if len(split) >= 2:
                tables = 2 * len(split) - 1
        return int(tables)

    def fit(self, X, y=None):
        """Release the noisy views of X and post-process them.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_records, n_features)
        y : None
            Ignored.

        Returns
        -------
        self
        """
        codes = self._validated_codes(X)
        delta = check_delta(self.delta)  # before any DP step (unused with Laplace noise)
        count_ss, noise_ss, _, merge_ss = seed_sequence(self.random_state).spawn(4)
        d = self.n_features_in_
        max_t = d if self.view_size == "auto" else min(int(self.view_size), d)
        if self.strength != "auto":
            candidates = [min(int(self.strength), max_t)]
        else:
            candidates = [t for t in (2, 3, 4)
                          if t <= max_t and math.comb(d, t) <= _MAX_AUTO_SETS] or [min(2, d)]
        spends = []
        self.noisy_count_ = None
        needs_count = self._needs_count(candidates)
        self.mechanism_, self.planned_tables_, self.plan_errors_ = self.mechanism, None, None
        if self.mechanism == "auto":
            # the record count first, by Laplace noise whichever the choice (pure
            # count_epsilon-DP, hence count_epsilon**2 / 2-zCDP): the choice reads it
            if needs_count:
                self.noisy_count_ = max(1.0, float(laplace_count(
                    codes.shape[0], self.count_epsilon, np.random.default_rng(count_ss),
                    self.noise)))
            self.mechanism_ = self._choose_mechanism(candidates, delta)
        gaussian = self.mechanism_ == "gaussian"
        # the budget in the mechanism's unit: epsilon (Laplace: pure DP, sequential
        # composition) or rho (Gaussian: zCDP, the rho of (epsilon, delta) by Bun and
        # Steinke, a relative 1e-12 less so that the float sum of its shares never proves
        # more than epsilon); the names epsilon_* below hold a rho with Gaussian noise
        self.rho_ = zcdp_rho(float(self.epsilon), delta) * (1.0 - 1e-12) if gaussian else None
        total = self.rho_ if gaussian else float(self.epsilon)
        epsilon_views = total
        self.view_cardinalities_ = np.asarray(self.cardinalities_, dtype=np.int64)
        merge_spend = self._measure_values(codes, np.random.default_rng(merge_ss), total)
        if merge_spend is not None:
            spends.append(merge_spend)
            epsilon_views -= self._cost(merge_spend)
        if needs_count:
            rng = np.random.default_rng(count_ss)
            drawn = self.noisy_count_ is not None  # mechanism="auto": by Laplace noise
            if gaussian:
                # noise of scale 1 / count_epsilon, as the Laplace count's: rho = c**2 / 2
                sigma = 1.0 / float(self.count_epsilon)
                rho_count = 1.0 / (2.0 * sigma * sigma)
                if rho_count >= epsilon_views:
                    raise ValueError(
                        f"count_epsilon ({self.count_epsilon}) gives the record count "
                        f"rho = count_epsilon**2 / 2 = {rho_count:.4g}, which must be below "
                        f"the rho of (epsilon={self.epsilon}, delta={delta:g}), "
                        f"{self.rho_:.4g}, minus the share spent on merging rare values.")
                epsilon_views -= rho_count
                if drawn:
                    # Laplace noise of scale 1 / c: pure c-DP, hence c**2 / 2-zCDP (Bun and
                    # Steinke 2016, Prop. 1.4), the rho of the Gaussian count
                    spends.append({"name": "record count (to choose the views)",
                                   "mechanism": mechanism_name("laplace", self.noise),
                                   "rho": rho_count, "pure_epsilon": float(self.count_epsilon),
                                   "sensitivity": 1.0,
                                   "accounting": "pure epsilon-DP as zCDP: epsilon**2 / 2"})
                else:
                    noisy, scale = gaussian_measure(np.array([codes.shape[0]]), sigma, rng,
                                                    self.noise)
                    self.noisy_count_ = max(1.0, float(noisy[0]))
                    spends.append({"name": "record count (to choose the views)",
                                   "mechanism": mechanism_name("gaussian", self.noise),
                                   "rho": rho_count, "sigma": sigma, "sensitivity": 1.0,
                                   "noise_scale": float(scale)})
            else:
                if self.count_epsilon >= epsilon_views:
                    raise ValueError(f"count_epsilon ({self.count_epsilon}) must be below "
                                     f"epsilon ({self.epsilon}) minus the share spent on "
                                     f"merging rare values.")
                epsilon_views -= float(self.count_epsilon)
                if not drawn:
                    self.noisy_count_ = max(1.0, float(
                        laplace_count(codes.shape[0], self.count_epsilon, rng, self.noise)))
                spends.append({"name": "record count (to choose the views)",
                               "mechanism": mechanism_name("laplace", self.noise),
                               "epsilon": float(self.count_epsilon), "sensitivity": 1.0})
        budget, t, codes = self._merge_and_plan(candidates, epsilon_views, codes)
        views = self._design(budget, t)
        self.select_pairs_ = self._selects_pairs(t)
        epsilon_select = epsilon_pairs = 0.0
        if self.select_pairs_:
            if self.max_view_cells == "auto":
                budget = SELECT_VIEW_CELLS  # columns (nearly) alone: the pairs join them
            split = self._design(budget, t)
            if len(split) >= 2:  # a public fact: two or more views to connect
                views = split
                epsilon_select, epsilon_pairs = (epsilon_views * SELECT_SHARES[1],
                                                 epsilon_views * SELECT_SHARES[2])
                epsilon_views *= SELECT_SHARES[0]
            else:
                self.select_pairs_ = False
                budget, t = self._plan(candidates, epsilon_views)
                views = self._design(budget, t)
        ell = max(len(v) for v in views)
        self.max_view_cells_ = int(budget) if budget is not None else int(max(
            math.prod(int(self.view_cardinalities_[a]) for a in v) for v in views))
        self.view_size_, self.strength_ = int(ell), int(t)
        self.marginal_sets_ = [tuple(b) for b in views]
        w = len(self.marginal_sets_)
        rng = np.random.default_rng(noise_ss)
        noisy, spend = self._measure_tables(codes, self.marginal_sets_, epsilon_views, rng,
                                            "views")
        self.noise_scale_ = self._drawn_scale(spend)
        spends.append(spend)
        # the measured value counts (summed over each merged code) join the consistency
        # as one-column tables, weighted by their own noise scale
        one_way = [((j,), self._merged_counts(j)) for j in self.merge_columns_]
        variances = self._variances(spend, w) + (
            [(self._drawn_scale(merge_spend) / self.noise_scale_) ** 2] * len(one_way)
            if one_way else [])
        self.selected_pairs_, self.pair_noise_scale_, self.n_extra_pairs_ = [], None, 0
        if self.select_pairs_:
            first, _ = postprocess(noisy + one_way, self.view_cardinalities_,
                                   tol=self.negativity_tol, n_rounds=self.n_rounds,
                                   weights=self.weights, variances=variances)
            tree = w - 1
            self.n_extra_pairs_ = extra = self._extra_pairs(first[:w], epsilon_pairs)
            n_tables = tree + extra
            # the tree's share of the choice and of the tables (all of them without extra
            # pairs): every chosen table gets the noise of n_tables measured together, every
            # round the same budget
            select_tree = epsilon_select * tree / n_tables if extra else epsilon_select
            pairs_tree = epsilon_pairs * tree / n_tables if extra else epsilon_pairs
            model_utility = extra and EXTRA_PAIR_UTILITY == "model"
            pairs, select_spend = self._choose_pairs(
                codes, first[:w], select_tree, epsilon_pairs, rng, n_tables=n_tables,
                extra=0 if model_utility else extra)
            spends.append(select_spend)
            measured = [(pairs, pairs_tree if model_utility else epsilon_pairs)]
            if model_utility:
                tables, spend = self._measure_tables(codes, pairs, pairs_tree, rng,
                                                     "chosen pairs' tables")
                spends.append(spend)
                tree_spend = spend
                model, _ = postprocess(
                    noisy + tables + one_way, self.view_cardinalities_,
                    tol=self.negativity_tol, n_rounds=self.n_rounds, weights=self.weights,
                    variances=variances[:w] + self._variances(spend, len(tables))
                    + variances[w:])
                more, extra_spend = self._choose_pairs(
                    codes, first[:w], epsilon_select - select_tree, epsilon_pairs, rng,
                    n_tables=n_tables, extra=extra, chosen=pairs,
                    model=model[:w + len(tables)])
                spends.append(extra_spend)
                measured = [(more, epsilon_pairs - pairs_tree)]
                noisy += tables
                pairs = pairs + more
            r = len(pairs)
            if r:
                self.selected_pairs_ = pairs
                pair_variances = ([] if not model_utility else
                                  self._variances(tree_spend, len(pairs) - len(more)))
                for sets, budget_pairs in measured:
                    tables, spend = self._measure_tables(
                        codes, sets, budget_pairs, rng, "tables of the pairs beyond the tree"
                        if model_utility else "chosen pairs' tables")
                    noisy += tables
                    spends.append(spend)
                    pair_variances += self._variances(spend, len(tables))
                self.pair_noise_scale_ = max(
                    [self._drawn_scale(spend)]
                    + ([self._drawn_scale(tree_spend)] if model_utility else []))
                self.marginal_sets_ += pairs
                variances = variances[:w] + pair_variances + variances[w:]
        self.noisy_views_ = noisy
        n_views = len(noisy)
        views, self.n_postprocess_rounds_ = postprocess(
            noisy + one_way, self.view_cardinalities_, tol=self.negativity_tol,
            n_rounds=self.n_rounds, weights=self.weights,
            variances=variances if one_way or n_views > w or len(set(variances)) > 1
            else None)
        self.views_ = views[:n_views]
        total = float(self.views_[0][1].sum())
        self.n_records_ = max(1, int(round(total)))
        self.view_set_ = ViewSet(self.views_, self.view_cardinalities_, tol=self.maxent_tol,
                                 max_iter=self.maxent_max_iter)
        if gaussian:
            rho = math.fsum(s["rho"] for s in spends)
            self.privacy_spent_ = PrivacySpent(
                zcdp_to_epsilon(rho, delta), delta, rho,
                [Spend(s["name"], s["mechanism"], rho=s["rho"],
                       params=tuple((k, v) for k, v in s.items()
                                    if k not in ("name", "mechanism", "rho")
                                    and not k.startswith("_")))
                 for s in spends],
                details={"model": "central", "conversion": "Bun-Steinke",
                         "conversion_delta": delta, "rho_budget": self.rho_})
            warn_large_delta(delta, self.n_records_)
            return self
        self.privacy_spent_ = PrivacySpent(
            float(sum(s["epsilon"] for s in spends)), 0.0, 0.0,
            [Spend(s["name"], s["mechanism"], epsilon=s["epsilon"],
                   params=tuple((k, v) for k, v in s.items()
                                if k not in ("name", "mechanism", "epsilon")))
             for s in spends],
            details={"model": "central"})
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        tags.input_tags.categorical = True
        tags.input_tags.allow_nan = True  # a missing category (see allow_missing)
        tags.input_tags.string = True
        return tags
