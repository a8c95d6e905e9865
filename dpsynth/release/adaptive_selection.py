"""Adaptive release of 1-, 2- and 3-way marginals (AIM-style), accounted in GDP or zCDP.

:func:`release_workload` follows the idea of AIM (McKenna, Mullins, Sheldon
& Miklau, "AIM: An Adaptive and Iterative Mechanism for Differentially
Private Synthetic Data", VLDB 2022), with the graphical model replaced by a
synthetic population fitted by marginal matching
(:mod:`dpsynth.model.descent`):

1. Measure every 1-way marginal with Gaussian noise ``sigma_0``
   (``sigma_0 = sqrt(T / (2 alpha rho))`` with ``T = rounds_factor * d``
   nominal rounds; ``alpha`` = share of measurement vs selection).
   On a small table the rounds are fewer and more precise: with ``n_hat``
   the total estimated from these measurements (a DP output), ``T`` is
   lowered to ``max(d, (kappa n_hat)**2 2 alpha rho)`` when that is smaller,
   so that a round's noise ``sigma`` is at most ``kappa = max_relative_noise``
   times the records (:func:`nominal_rounds`), and the 1-way marginals are
   measured once more so that, averaged by inverse variance, their noise is
   that ``sigma`` too (two Gaussian measurements cost what one of the
   combined variance does, so nothing is lost to measuring twice).
2. Fit a population to the measurements.
3. Each round, select one column set ``r`` among the candidates (every 2-
   and 3-way set, up to ``reporting_length``, whose dense table has at most
   ``max_cells`` cells: public facts only) with the exponential mechanism
   (budget ``eps``, bounded range: Durfee & Rogers 2019; cost ``mu**2 / 2``
   with its Gaussian-DP ``mu``,
   :func:`~dpsynth.accounting.bounded_range_mu`, or its zCDP
   ``eps**2 / 8``, Cesar & Rogers 2021, see ``accounting``) on the score
   ``w_r (||M_r(D) - M_r(P)||_1 - sqrt(2/pi) sigma n_r)``,
   where ``M_r(P)`` are the population's counts scaled to the estimated
   total, ``n_r`` the number of cells and ``w_r = sum_{s in W} |r & s|``
   (AIM's workload weights, ``W`` = all ``reporting_length``-way sets).
   The score's sensitivity is ``max_r w_r`` (add/remove one record changes
   one cell of ``M_r(D)`` by 1; the population depends on the data only
   through earlier outputs).
4. Measure, with the budget ``1 / (2 sigma**2)`` (one Gaussian
   mechanism): by default the residuals of ``r`` (its components orthogonal
   to every sub-marginal, ResidualPlanner's basis), the budget shared among
   them by :func:`residual_allocation`; with ``measurement="marginals"``,
   ``M_r(D) + N(0, sigma**2 I)``.
5. Refit the population (a sweep over the new marginal's columns, and a
   full sweep every ``full_sweep_every`` rounds) to all measurements,
   weighted by inverse noise variance.
6. Anneal as AIM: when the fitted counts of ``r`` moved by less than the
   expected noise ``sqrt(2/pi) sigma n_r``, halve ``sigma`` and multiply
   the selection's budget by four (which doubles ``eps`` in zCDP); when the
   remaining budget cannot pay for two more rounds, the next round spends
   exactly what is left.  The release stops when ``rho``
   is spent; the spends sum to ``rho`` (up to rounding, the last one takes
   the exact remainder).

The number of records is never released on its own: the total is
estimated from the noisy marginals (inverse-variance mean of their sums).
All randomness comes from ``rng``.

In the code a round is three named steps: select
(:meth:`_Candidates.select`), measure (:meth:`_Measurements.marginal` or
:meth:`_Measurements.residuals_of`, which also keep the spends) and refit
(:func:`_refit`); :func:`_round_budget` sets a round's budget.

The scores need the population's counts over every candidate each round;
after a refit they follow the moved records column by column
(:func:`~dpsynth.model.counts.move_counts`), on ``n_threads``
threads that each keep their own candidates
(:class:`~dpsynth.model.counts.TableShards`).  Both are exact: the
release does not depend on them.
"""

from dataclasses import dataclass, field
from itertools import combinations
import math

import numpy as np

from ..accounting import Spend, bounded_range_epsilon, bounded_range_mu
from ..mechanisms import (check_noise, exponential_mechanism, gaussian_measure,
                          l1_score_numerators, mechanism_name)
from ..engines.blocks import as_blocks
from ..model.consistency import consistent_marginals, merge_repeated
from ..model.counts import TableShards, add_counts, move_counts, table_layout
from ..model.descent import descend, fit_population, one_way_estimates
from ..model.mixing import mix_within_neighbourhoods
from ..model.residuals import cells_outside, residual_size, subsets as _all_subsets
from .allocation import noisy_residual

__all__ = ["WorkloadRelease", "release_workload", "candidate_sets", "sample_release",
           "nominal_rounds", "selection_cost", "selection_epsilon", "residual_allocation"]

ACCOUNTINGS = ("gdp", "zcdp")
MEASUREMENTS = ("marginals", "residuals")
# the 1-way marginals of a wide table take at most 1 / 4 of the measurement budget
MAX_ONE_WAY_SHARE_INVERSE = 4


def selection_cost(epsilon, accounting="gdp"):
    """Budget (``rho`` units) of one exponential-mechanism selection at ``epsilon``.

    ``"gdp"``: ``mu**2 / 2`` with ``mu = bounded_range_mu(epsilon)``, the
    selection's Gaussian-DP parameter, so that the whole release is
    ``sqrt(2 rho)``-GDP (and, as mu-GDP implies ``mu**2/2``-zCDP, rho-zCDP).
    ``"zcdp"``: its zCDP ``epsilon**2 / 8`` (Cesar & Rogers 2021): rho-zCDP only.
    """
    if accounting == "gdp":
        return bounded_range_mu(epsilon) ** 2 / 2.0
    return epsilon**2 / 8.0


def selection_epsilon(cost, accounting="gdp"):
    """Largest ``epsilon`` whose :func:`selection_cost` is at most ``cost``."""
    if accounting == "gdp":
        return bounded_range_epsilon(math.sqrt(2.0 * cost))
    return math.sqrt(8.0 * cost)


@dataclass
class WorkloadRelease:
    """Output of :func:`release_workload` (everything here is DP or public).

    Attributes
    ----------
    n_values : ndarray of int
    measurements : list of ``(columns, table, variance)``
        Every Gaussian measurement, in order: dense float64 tables of shape
        ``n_values[columns]`` (noisy, possibly negative) and the noise
        variance of every cell.
    spends : list of Spend
        Every selection (exponential mechanism) and measurement (Gaussian),
        in order; ``sum(s.rho for s in spends) == rho``.
    rho : float
        Budget given.
    total : float
        Estimated number of records (from the noisy marginals).
    population : ndarray of int32 or None
        The population fitted during selection (post-processing).
    residuals : list of ``(columns, values, variance)``
        Gaussian measurements of residuals (``measurement="residuals"``):
        ``values`` of shape ``possible[columns].sum() - 1``, the coordinates
        of the marginal's component orthogonal to all its sub-marginals
        (:mod:`dpsynth.release.allocation`), over the possible codes.
    possible : list of ndarray of bool or None
        Per column, the codes that can hold records (public; ``None``: all).
    cell_variances : dict
        ``{column: variance of each code}`` of the columns whose first
        1-way measurement averages earlier counts into some of its codes
        (``one_way_counts``): its ``variance`` is their mean.
    """

    n_values: np.ndarray
    measurements: list
    spends: list
    rho: float
    total: float
    population: np.ndarray = None
    residuals: list = field(default_factory=list)
    possible: list = None
    cell_variances: dict = field(default_factory=dict)

    @property
    def rho_spent(self):
        return math.fsum(s.rho for s in self.spends)

    def targets(self, kind="measurements", touching=None, cache=None):
        """Targets ``(columns, table, weight)`` for :func:`fit_population`.

        ``kind="measurements"``: the measurements, repeated column sets
        merged by inverse-variance averaging, weighted by inverse variance.
        ``kind="consistent"``: the GLS-consistent marginals of the measured
        sets (:func:`~dpsynth.model.consistency.make_consistent`),
        weighted by the inverse of their mean cell variance.
        With residual measurements both kinds give the GLS-consistent
        marginals (a residual is not a marginal to fit on its own).
        ``touching`` (columns) keeps only the targets holding one of them;
        ``cache`` (a dict kept between calls) reuses the GLS's unchanged
        parts (:func:`~dpsynth.model.consistency.make_consistent`).
        """
        if kind not in ("measurements", "consistent"):
            raise ValueError(f"kind must be 'measurements' or 'consistent'; got {kind!r}.")
        if kind == "measurements" and not self.residuals:
            return [(cols, table, 1.0 / var)
                    for cols, table, var in merge_repeated(self.measurements)
                    if touching is None or set(touching).intersection(cols)]
        consistent = consistent_marginals(self.measurements, self.residuals, self.n_values,
                                          self.possible, touching=touching, cache=cache)
        return [(m.columns, m.table, 1.0 / m.variance) for m in consistent]


def _subsets(cols):
    """Non-empty subsets of ``cols``, shortest first."""
    return (sub for sub in _all_subsets(cols) if sub)


def _elementary_symmetric(values, k):
    """``e_k(values)``: the sum of the products of every ``k`` of ``values``."""
    e = [1.0] + [0.0] * k
    for v in values:
        for j in range(k, 0, -1):
            e[j] += e[j - 1] * v
    return e[k]


def residual_allocation(columns, precision, free, rho, workload_length=None):
    """Inverse noise variances of the residuals of ``columns`` measured with budget ``rho``.

    The marginal over ``columns`` is the orthogonal sum of the residuals
    ``theta_B`` of its non-empty subsets ``B`` (and the total), ``theta_B``
    adding ``c_B = prod_{i in B} (free_i - 1) / prod_{i in columns - B}
    free_i`` times its per-coordinate variance to the marginal's total
    variance (Xiao et al. 2023, ResidualPlanner).  Earlier measurements give
    ``theta_B`` the precision ``precision[B]`` per coordinate.  With
    ``workload_length=k``, ``c_B`` is instead the sum of those weights over
    every ``k``-way marginal that holds ``B`` (ResidualPlanner's weight for
    the workload of all ``k``-way marginals): a lower-order residual counts
    for every marginal it is part of.  Measuring it
    again with noise variance ``1 / lambda_B`` costs ``p_B lambda_B / 2``
    (``p_B = prod_{i in B} (1 - 1/free_i)``: its squared L2 sensitivity).
    The ``lambda_B >= 0`` minimise the marginal's variance ``sum_B c_B /
    (precision_B + lambda_B)`` at total cost ``rho``: by the KKT conditions,
    ``lambda_B = max(0, sqrt(c_B / (kappa p_B)) - precision_B)``
    (water-filling, solved exactly by dropping the residuals whose
    ``lambda_B`` would be negative until none is).

    Parameters
    ----------
    columns : tuple of int
    precision : dict
        ``{subset: precision per coordinate}`` of earlier measurements.
    free : array-like of int
        Possible codes per column (public).
    rho : float
        Budget of this measurement.
    workload_length : int, optional
        Weigh each residual by its part in all ``workload_length``-way
        marginals (default: in the marginal over ``columns`` only).

    Returns
    -------
    dict
        ``{subset: lambda}`` for the residuals to measure (``lambda > 0``);
        ``sum(p_B lambda_B) / 2 == rho``.
    """
    cost, weight = {}, {}
    for sub in _subsets(columns):
        size = residual_size(sub, free)
        if size > 0:
            cost[sub] = math.prod(1.0 - 1.0 / int(free[c]) for c in sub)
            if workload_length is None:
                weight[sub] = size / cells_outside(columns, sub, free)
            else:  # its weight in every workload_length-way marginal that holds it
                others = [1.0 / int(free[c]) for c in range(len(free)) if c not in sub]
                weight[sub] = size * _elementary_symmetric(others, workload_length - len(sub))
    active = list(cost)
    while active:
        scale = ((2.0 * rho + math.fsum(cost[b] * precision.get(b, 0.0) for b in active))
                 / math.fsum(math.sqrt(weight[b] * cost[b]) for b in active))
        lam = {b: scale * math.sqrt(weight[b] / cost[b]) - precision.get(b, 0.0)
               for b in active}
        keep = [b for b in active if lam[b] > 0]
        if len(keep) == len(active):
            total = math.fsum(cost[b] * lam[b] for b in active) / 2.0
            return {b: lam[b] * (rho / total) for b in active}  # the budget exactly
        active = keep
    return {}


MAX_CANDIDATE_CELLS = 2 ** 25
"""Cells of all candidate tables together, at most (the default of
:func:`release_workload`'s ``max_total_cells``): the data's and the scoring
population's counts over the candidates are arrays of that many float64 cells
(about 270 MB each), and every round scores them all."""
_ENUMERATED_SETS = 2_000_000
"""Up to this many sets of one size are listed in full; past it they are drawn."""


def candidate_sets(n_values, reporting_length=3, max_cells=None, max_total_cells=None,
                   rng=None):
    """The 2.. ``reporting_length``-way column sets a round may select.

    Every set whose dense table has at most ``max_cells`` cells, as long as
    their tables hold at most ``max_total_cells`` cells together.  Past that
    (a wide table: 300 columns have 4.5 million triples), the smaller sets
    come first: every pair, then a uniformly random subset of the triples
    (and so on) that fits, drawn from ``rng`` -- randomness that no record
    touches, so the candidates stay a function of public facts.  Within a
    size, sets are in lexicographic order.

    Parameters
    ----------
    n_values : array-like of int
        Public number of codes per column.
    reporting_length : int, default=3
    max_cells : int, optional
        Largest table (default: no limit).
    max_total_cells : int, optional
        Cells of all tables together (default: no limit).
    rng : numpy.random.Generator, optional
        Draws the subset of a size that does not fit whole (needed then only).
    """
    n_values = np.asarray(n_values, dtype=np.int64)
    d = n_values.size
    budget = math.inf if max_total_cells is None else float(max_total_cells)
    out = []
    for k in range(2, min(reporting_length, d) + 1):
        if budget <= 0:
            break
        if math.comb(d, k) <= _ENUMERATED_SETS:
            sets = [cols for cols in combinations(range(d), k)
                    if max_cells is None or math.prod(int(n_values[c]) for c in cols)
                    <= max_cells]
            cells = np.array([math.prod(int(n_values[c]) for c in cols) for cols in sets],
                             dtype=float)
            if cells.sum() <= budget:
                out += sets
                budget -= float(cells.sum())
                continue
        if rng is None:
            raise ValueError("candidate_sets needs rng to draw a subset of the "
                             f"{k}-way sets (max_total_cells={max_total_cells}).")
        if math.comb(d, k) <= _ENUMERATED_SETS:
            order = rng.permutation(len(sets))
            kept = order[np.cumsum(cells[order]) <= budget]
        else:
            sets, kept = _drawn_sets(n_values, k, max_cells, budget, rng)
        kept = np.sort(kept)
        out += [sets[i] for i in kept]
        budget = 0.0  # a size drawn in part leaves nothing for larger ones
    return out


def _drawn_sets(n_values, k, max_cells, budget, rng):
    """``k``-way sets drawn uniformly without replacement (too many to list) while
    their tables fit ``budget`` cells: ``(sets sorted, indices of the kept ones)``."""
    d = n_values.size
    found, seen, used, stale = [], set(), 0.0, 0
    total = math.comb(d, k)
    while len(seen) < total and stale < 64:
        draws = np.sort(rng.integers(0, d, size=(4096, k)), axis=1)
        before, full = len(found), False
        for row in draws[np.all(np.diff(draws, axis=1) > 0, axis=1)]:
            cols = tuple(int(c) for c in row)
            if cols in seen:
                continue
            seen.add(cols)
            cells = math.prod(int(n_values[c]) for c in cols)
            if max_cells is not None and cells > max_cells:
                continue
            if used + cells > budget:
                full = True
                break
            used += cells
            found.append(cols)
        if full:
            break
        stale = stale + 1 if len(found) == before else 0  # every set left is too large
    found.sort()
    return found, np.arange(len(found))


def _workload_weights(candidates, d, reporting_length):
    """AIM's weights ``w_r = sum_{s in W} |r & s|`` for W = all k-way sets, k = R."""
    k = min(reporting_length, d)
    # number of k-sets containing a given i-subset of r, times the overlap:
    # sum_s |r & s| = sum_{c in r} #{s : c in s} = |r| * C(d - 1, k - 1)
    per_column = math.comb(d - 1, k - 1)
    return np.array([len(r) * per_column for r in candidates], dtype=float)


def _total_estimate(measurements, free):
    """Inverse-variance mean of the measurements' sums (``free``: possible codes per column,
    the cells that hold noise)."""
    num = den = 0.0
    for cols, table, var in measurements:
        v = var * math.prod(int(free[c]) for c in cols)
        num += float(np.sum(table)) / v
        den += 1.0 / v
    return num / den


def nominal_rounds(rounds, n_columns, total, rho, alpha, max_relative_noise):
    """Nominal rounds ``T`` for a table of about ``total`` records.

    ``min(rounds, max(n_columns, (max_relative_noise * total)**2 * 2 alpha rho))``:
    the largest ``T`` up to ``rounds`` whose per-round noise
    ``sigma = sqrt(T / (2 alpha rho))`` is at most ``max_relative_noise *
    total``, but never fewer rounds than columns (the 1-way marginals then
    take at most ``alpha rho``).  ``total`` must be a DP output (the release
    uses the total of its noisy 1-way marginals).

    AIM's ``T = 16 d`` (McKenna et al. 2022) spreads a small budget over
    many noisy rounds; on a small table each round's noise is then a large
    share of the records, and fewer, more precise rounds are more accurate
    (chosen on the benchmarks, see ``benchmarks/LOG.md``).
    """
    cap = (max_relative_noise * max(float(total), 0.0)) ** 2 * 2.0 * alpha * rho
    return min(float(rounds), max(float(n_columns), cap))


def release_workload(codes, n_values, *, rho, rng, reporting_length=3, rounds_factor=16,
                     alpha=0.9, max_cells=None, population_size=None, full_sweep_every=5,
                     initial_sweeps=2, max_rounds=None, fit_targets="measurements",
                     empty_cells=None, max_relative_noise=0.03, accounting="gdp",
                     measurement="residuals", one_way_counts=None, n_threads=1,
                     one_way_rounds=384, noise="discrete", max_total_cells=MAX_CANDIDATE_CELLS,
                     target=None, target_weight=1):
    """Adaptive zCDP release of 1-way and selected 2-/3-way dense marginals.

    Parameters
    ----------
    codes : ndarray of int, shape (n, d), or dpsynth.engines.CodeBlocks
        Code ``j`` of column ``c`` in ``0..n_values[c] - 1`` (the missing
        value is a code of its own), in memory or in blocks (e.g. dask
        partitions).  Read once: the counts of every 1-way and candidate
        table, summed over the blocks; only the accounted mechanisms use
        them.
    n_values : array-like of int
        Public number of codes per column.
    rho : float
        zCDP budget, spent exactly.
    rng : numpy.random.Generator or int or None
        All randomness (noise, selections, population fits).
    reporting_length : int, default=3
        Largest marginal selected.
    rounds_factor : int, default=16
        ``T = rounds_factor * d`` nominal rounds set the initial per-round
        budget (AIM uses 16), lowered on small tables (``max_relative_noise``).
    alpha : float, default=0.9
        Share of each round's budget spent on measurement (the rest on
        selection).
    max_cells : int, optional
        Largest candidate table (default ``10**5`` cells; public).
    max_total_cells : int, default=MAX_CANDIDATE_CELLS
        Cells of all candidate tables together: on a table too wide for
        every triple, every pair and a uniformly random subset of the
        triples (drawn from ``rng``, no record involved) are the candidates
        (:func:`candidate_sets`), so that memory and each round's scoring
        stay bounded.  ``None``: no limit.
    population_size : int, optional
        Records of the population used for scoring (default: the estimated
        total, at most 8,000; its counts are scaled to the estimated total).
    full_sweep_every : int, default=5
        A full descent sweep every that many rounds (otherwise only the new
        marginal's columns are swept).
    initial_sweeps : int, default=2
        Sweeps of the first fit to the 1-way measurements.
    max_rounds : int, optional
        Safety cap on the number of rounds (the last one spends the rest).
    fit_targets : {"measurements", "consistent"}, default="measurements"
        What the scoring population is fitted to each round (see
        :meth:`WorkloadRelease.targets`).
    empty_cells : list of array-like of bool, optional
        Per column, the codes that the public schema rules out (e.g. the
        missing code of a column declared without missing values).  Their
        cells are released as exact zeros (post-processing of public facts);
        a record holding such a code is refused.
    max_relative_noise : float or None, default=0.03
        Largest noise standard deviation of a round's measurement, as a
        share of the records estimated from the 1-way measurements: fewer
        nominal rounds on tables too small for ``T`` (:func:`nominal_rounds`).
        ``None`` keeps ``T = rounds_factor * d`` whatever the table's size.
    accounting : {"gdp", "zcdp"}, default="gdp"
        How a selection is charged (:func:`selection_cost`).  ``"gdp"``: the
        release is ``sqrt(2 rho)``-GDP (Gaussian measurements are exactly
        ``1/sigma``-GDP; GDP composes adaptively, Smith & Thakurta 2022) and
        rho-zCDP; a selection costs about 1.57x its zCDP, but the GDP
        guarantee converts to (epsilon, delta) exactly
        (:func:`~dpsynth.accounting.gdp_mu`).  ``"zcdp"``: rho-zCDP
        only, for a budget from a zCDP conversion.
    measurement : {"marginals", "residuals"}, default="residuals"
        What a round measures.  ``"marginals"``: the selected marginal, with
        i.i.d. noise ``sigma`` on every cell.  ``"residuals"``: the same
        budget ``1 / (2 sigma**2)`` spread over the residuals of the
        selected set (its components orthogonal to every sub-marginal,
        over the possible codes) by :func:`residual_allocation`, which puts
        it where the marginal is least known: a residual already measured
        precisely (the 1-way parts, measured first) gets little or nothing,
        and a residual's squared sensitivity ``prod (1 - 1/n_i)`` is below
        a marginal's 1.  The 1-way marginals are always measured whole.
    one_way_rounds : float or None, default=384
        The 1-way marginals are measured at the noise of ``min(T, max(one_way_rounds,
        4 d))`` nominal rounds instead of ``T``: on a table of more than
        ``one_way_rounds / rounds_factor`` columns they take more than AIM's
        ``1 / rounds_factor`` of the measurement budget (at most a quarter), so
        that the columns no round selects keep their distributions; ``None`` is
        AIM's ``T``.  Narrower tables are unchanged.
    one_way_counts : dict, optional
        ``{column: (counts, variance)}``: earlier Gaussian measurements of
        some of a column's 1-way counts (DP outputs accounted outside
        ``rho``), ``counts`` of length ``n_values[column]`` with NaN for the
        codes not measured, ``variance`` one number or one per code; e.g. the noisy counts of the values that DP
        discovery released (:mod:`dpsynth.release.workload_release`).  Each is
        combined with the column's own 1-way measurement by inverse-variance
        averaging, code by code (:func:`_combine_one_way`); the combined
        marginal replaces that measurement, and a small table's second 1-way
        measurement (``max_relative_noise``) only makes up the precision it
        still lacks.
    n_threads : int, default=1
        Threads that keep the scoring population's counts over the
        candidates and score them each round
        (:class:`~dpsynth.model.counts.TableShards`: disjoint tables
        per thread).  The release does not depend on it.
    noise : {"discrete", "continuous"}, default="discrete"
        ``"discrete"``: every measurement is of integers (counts, or the
        integer Helmert coordinates of a residual) with exact discrete
        Gaussian noise, its scale calibrated to be ``1/sigma``-GDP
        (:func:`~dpsynth.mechanisms.gaussian_measure`,
        :func:`~dpsynth.release.allocation.noisy_residual`), so the
        accounting is the continuous one's; ``"continuous"``: numpy's
        floating-point Gaussian noise.
    target : int or None, default=None
        The column of a model's target (a public declaration: ``y`` given to
        ``fit``), whose candidate sets weigh ``target_weight`` times their
        workload weight in the selection, so that the interactions a model of
        the target learns are measured first.
    target_weight : int, default=1
        See ``target``: a whole number (the selection's exact scores), 1 for
        the plain workload.  The selection's sensitivity is the largest
        weight, so the other sets are selected with less precision.

    Returns
    -------
    WorkloadRelease
    """
    rng = np.random.default_rng(rng)
    check_noise(noise)
    blocks = as_blocks(codes)
    n_values = np.asarray(n_values, dtype=np.int64)
    empty_cells = _check_arguments(blocks, n_values, rho, alpha, accounting, measurement,
                                   max_relative_noise, fit_targets, empty_cells)
    d = n_values.size
    T = max(int(rounds_factor * d), 1)
    if max_rounds is None:
        max_rounds = 4 * T
    if max_cells is None:
        max_cells = 10**5
    if target is not None and not (0 <= target < d):
        raise ValueError(f"target must be a column index in [0, {d}); got {target!r}.")
    if not (isinstance(target_weight, (int, np.integer)) and not isinstance(target_weight, bool)
            and target_weight >= 1):
        raise ValueError(f"target_weight must be a whole number >= 1; got {target_weight!r}.")
    candidates = _Candidates(candidate_sets(n_values, reporting_length, max_cells,
                                            max_total_cells, rng)
                             if d > 1 else [], n_values, empty_cells, reporting_length,
                             target, target_weight)
    data = _DataCounts(blocks, n_values, candidates.sets, empty_cells)
    measured = _Measurements(data, n_values, empty_cells, rng, noise,
                             workload_length=min(reporting_length, d))
    sigma = math.sqrt(T / (2.0 * alpha * rho))
    select_rho = (1.0 - alpha) * rho / T  # budget of one selection
    if not candidates.sets:  # nothing to select: all of rho on the 1-way marginals
        sigma = math.sqrt(d / (2.0 * rho))

    sigma_one_way = sigma
    if one_way_rounds is not None and candidates.sets:
        # a wide table: the columns no round selects keep their 1-way noise
        sigma_one_way = math.sqrt(min(T, max(one_way_rounds, MAX_ONE_WAY_SHARE_INVERSE * d))
                                  / (2.0 * alpha * rho))
    measured.one_way(sigma_one_way, _checked_one_way_counts(one_way_counts, n_values))
    if not candidates.sets:
        measured.spends[-1] = _exact_last(measured.spends, rho)
        return measured.release(rho, measured.total())
    total = measured.total()
    if max_relative_noise is not None:  # a small table: fewer, more precise rounds
        rounds_nominal = nominal_rounds(T, d, total, rho, alpha, max_relative_noise)
        if rounds_nominal < T:
            sigma = measured.fewer_rounds(math.sqrt(rounds_nominal / (2.0 * alpha * rho)))
            select_rho = (1.0 - alpha) * rho / rounds_nominal
            total = measured.total()
    m = int(population_size or min(max(round(total), 1), 8_000))
    targets = measured.targets(fit_targets, rho, total)
    population = fit_population(n_values, targets, m, rng, sweeps=initial_sweeps,
                                total=total)
    allowed = [w > 0 for w in one_way_estimates(n_values, targets)]
    used = measured.used()
    with TableShards(candidates.layout, n_threads) as shards:
        pop_counts = shards.count(population)
        rounds = 0
        while used < rho * (1 - 1e-12) and rounds < max_rounds:
            rounds += 1
            sigma, select_rho, last = _round_budget(rho - used, sigma, select_rho, alpha,
                                                    last=rounds == max_rounds)
            # --- select
            epsilon = selection_epsilon(select_rho, accounting)
            choice = candidates.select(shards, data.candidate_counts, pop_counts, total, m,
                                       sigma, epsilon, rng, noise)
            r = candidates.sets[choice]
            measured.spends.append(Spend(f"select round {rounds}", "exponential",
                                         rho=selection_cost(epsilon, accounting),
                                         params={"epsilon": epsilon,
                                                 "sensitivity": candidates.sensitivity,
                                                 "n_candidates": len(candidates.sets),
                                                 "selected": r, "accounting": accounting}))
            # --- measure
            if last:  # the exact remainder, so that the spends sum to rho
                sigma = math.sqrt(1.0 / (2.0 * (rho - measured.used())))
            if measurement == "residuals":
                measured.residuals_of(r, sigma, f"residuals of {r} round {rounds}")
            else:
                measured.marginal(r, sigma, f"marginal {r} round {rounds}")
            used = measured.used()
            # --- refit
            total, change = _refit(population, pop_counts, choice, candidates, measured,
                                   shards, rng, kind=fit_targets, rho=rho, total=total,
                                   full=rounds % full_sweep_every == 0, allowed=allowed)
            if change <= math.sqrt(2.0 / math.pi) * sigma * candidates.cells[choice]:
                sigma /= 2.0  # anneal: the model already knew this marginal
                select_rho *= 4.0
    return measured.release(rho, float(total), population)


def _check_arguments(blocks, n_values, rho, alpha, accounting, measurement, max_relative_noise,
                     fit_targets, empty_cells):
    """Refuse bad arguments of :func:`release_workload`; return ``empty_cells`` as arrays."""
    if blocks.n_columns != n_values.size:
        raise ValueError("codes must be a 2-D array with one column per entry of n_values.")
    if np.any(n_values < 1):
        raise ValueError("n_values must be positive.")
    if not (isinstance(rho, (int, float, np.floating)) and math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite number > 0; got {rho!r}.")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}.")
    if accounting not in ACCOUNTINGS:
        raise ValueError(f"accounting must be 'gdp' or 'zcdp'; got {accounting!r}.")
    if measurement not in MEASUREMENTS:
        raise ValueError("measurement must be 'marginals' or 'residuals'; "
                         f"got {measurement!r}.")
    if max_relative_noise is not None and not (
            isinstance(max_relative_noise, (int, float, np.floating))
            and math.isfinite(max_relative_noise) and max_relative_noise > 0):
        raise ValueError("max_relative_noise must be None or a finite number > 0; "
                         f"got {max_relative_noise!r}.")
    if fit_targets not in ("measurements", "consistent"):
        raise ValueError("fit_targets must be 'measurements' or 'consistent'; "
                         f"got {fit_targets!r}.")
    if empty_cells is None:
        empty_cells = [np.zeros(k, dtype=bool) for k in n_values]
    empty_cells = [np.asarray(e, dtype=bool) for e in empty_cells]
    if len(empty_cells) != n_values.size or any(e.shape != (k,)
                                                for e, k in zip(empty_cells, n_values)):
        raise ValueError("empty_cells must hold one boolean array of length n_values[c] "
                         "per column c.")
    return empty_cells


class _DataCounts:
    """The only read of the data: every 1-way and candidate table, counted in one pass."""

    def __init__(self, blocks, n_values, candidates, empty_cells):
        d = n_values.size
        one_way = [((c,), (int(n_values[c]),)) for c in range(d)]
        self.tables = one_way + [(r, tuple(int(n_values[c]) for c in r)) for r in candidates]
        self.layout = table_layout(self.tables)
        self.index = {cols: t for t, (cols, _) in enumerate(self.tables)}
        self.counts = blocks.sum_distinct_into(  # a repeated row is counted once, weighted
            lambda: np.zeros(int(self.layout[0][-1])),
            lambda out, block, weights: add_counts(
                out, _checked(block, n_values, empty_cells), self.layout, weights=weights))
        self.candidate_counts = self.counts[self.layout[0][d]:]

    def table(self, cols):
        """The exact counts over ``cols`` (read only by the mechanisms)."""
        t = self.index[tuple(cols)]
        base = self.layout[0]
        return self.counts[base[t]:base[t + 1]].reshape(self.tables[t][1])


class _Candidates:
    """The column sets a round may select, with their public weights and noise cells."""

    def __init__(self, sets, n_values, empty_cells, reporting_length, target=None,
                 target_weight=1):
        d = n_values.size
        self.sets = sets
        self.scaled_counts = {}  # the data's counts as the exact scores scale them
        free = [k - int(e.sum()) for e, k in zip(empty_cells, n_values)]  # possible codes
        if not sets:
            return
        self.weights = _workload_weights(sets, d, reporting_length)
        if target is not None:  # the sets holding the target weigh more (public)
            self.weights *= np.array([target_weight if target in r else 1 for r in sets])
        self.sensitivity = float(self.weights.max())
        # noise the score expects: only the cells the public schema allows hold noise
        self.cells = np.array([math.prod(int(free[c]) for c in r) for r in sets], dtype=float)
        self.layout = table_layout([(r, tuple(int(n_values[c]) for c in r)) for r in sets])
        holding = [[] for _ in range(d)]  # the candidates holding each column, increasing
        for t, cols in enumerate(sets):
            for c in cols:
                holding[c].append(t)
        self.tables_of_column = [np.array(h, dtype=np.int64) for h in holding]

    def counts(self, pop_counts, choice, scale):
        """The population's counts of candidate ``choice``, scaled."""
        base = self.layout[0]
        return pop_counts[base[choice]:base[choice + 1]] * scale

    def select(self, shards, data_counts, pop_counts, total, m, sigma, epsilon, rng, noise):
        """Index of the candidate chosen by the exponential mechanism (bounded range) on
        ``w_r (||M_r(D) - M_r(P)||_1 - sqrt(2/pi) sigma n_r)``; with discrete noise the
        scores are exact rationals and the draw is exact."""
        offsets = math.sqrt(2.0 / math.pi) * sigma * self.cells
        if noise == "discrete":
            scores, denominator = l1_score_numerators(
                shards.distance, data_counts, pop_counts, total / m, self.layout[0],
                self.weights, offsets, 2.0 * total, cache=self.scaled_counts)
        else:
            error = shards.distance(data_counts, pop_counts, total / m)
            scores, denominator = self.weights * (error - offsets), None
        return exponential_mechanism(scores, epsilon, rng, sensitivity=self.sensitivity,
                                     noise=noise, denominator=denominator)


class _Measurements:
    """Every Gaussian measurement so far, its spends, and the precision of every residual."""

    def __init__(self, data, n_values, empty_cells, rng, noise, workload_length):
        self.data = data
        self.n_values = n_values
        self.empty_cells = empty_cells
        self.free = np.array([k - int(e.sum()) for e, k in zip(empty_cells, n_values)])
        self.possible = [~e for e in empty_cells]
        self.rng = rng
        self.noise = noise
        self.gaussian_name = mechanism_name("gaussian", noise)
        self.workload_length = workload_length
        self.marginals, self.residuals, self.spends = [], [], []
        self.precision = {}  # residual subset -> precision per coordinate of its estimate
        self.cell_variances = {}  # column -> variance of each code of its first 1-way
        self.gls_cache = {}  # the GLS's residual parts, reused while unchanged

    def marginal(self, cols, s, name):
        """Measure the marginal over ``cols`` with Gaussian noise ``s`` (budget ``1/(2 s**2)``)."""
        noisy, scale = gaussian_measure(self.data.table(cols), s, self.rng,
                                        self.noise)  # scale >= s: see its docstring
        for axis, c in enumerate(cols):  # publicly empty cells: exact zeros
            if self.empty_cells[c].any():
                index = [slice(None)] * len(cols)
                index[axis] = self.empty_cells[c]
                noisy[tuple(index)] = 0.0
        self.marginals.append((tuple(cols), noisy, float(scale) ** 2))
        self.spends.append(Spend(name, self.gaussian_name, rho=1.0 / (2.0 * s * s),
                                 params={"columns": tuple(cols), "sigma": s,
                                         "sensitivity": 1.0, "noise_scale": float(scale)}))
        for sub in _subsets(tuple(cols)):  # what it tells about each residual
            self.precision[sub] = (self.precision.get(sub, 0.0)
                                   + 1.0 / (s * s * cells_outside(cols, sub, self.free)))

    def residuals_of(self, cols, s, name):
        """Measure the residuals of ``cols`` with the budget ``1/(2 s**2)`` of one marginal."""
        # one Gaussian mechanism on the stacked residual queries: squared
        # sensitivity sum_B p_B lambda_B = 1 / s**2, as the marginal's would be
        lam = residual_allocation(tuple(cols), self.precision, self.free, 1.0 / (2.0 * s * s),
                                  workload_length=self.workload_length)
        for sub, inverse_variance in lam.items():
            table = self.data.table(sub)[np.ix_(*[self.possible[c] for c in sub])]
            noisy, variance = noisy_residual(table, sub, sub, 1.0 / math.sqrt(inverse_variance),
                                             self.rng, self.noise)
            self.residuals.append((sub, noisy, variance))
            self.precision[sub] = self.precision.get(sub, 0.0) + inverse_variance
        self.spends.append(Spend(name, self.gaussian_name, rho=1.0 / (2.0 * s * s),
                                 params={"columns": tuple(cols), "sigma": s,
                                         "sensitivity": 1.0, "basis": "residual",
                                         "n_residuals": len(lam)}))

    def one_way(self, sigma, one_way_counts):
        """Measure every 1-way marginal, each averaged with its earlier counts if any."""
        for c in range(self.n_values.size):
            self.marginal((c,), sigma, f"1-way marginal {c}")
            if c in one_way_counts:
                cols, table, variance = self.marginals[-1]
                combined, mean_variance, cells = _combine_one_way(
                    table, variance, *one_way_counts[c], self.empty_cells[c])
                self.marginals[-1] = (cols, combined, mean_variance)
                self.cell_variances[c] = cells
                self.precision[cols] = 1.0 / mean_variance

    def fewer_rounds(self, sigma_rounds):
        """Measure the 1-way marginals again where needed so that the inverse-variance mean
        of a column's measurements has variance ``sigma_rounds**2`` (together they cost what
        that single one would); returns ``sigma_rounds``."""
        for c in range(self.n_values.size):
            lacking = 1.0 / sigma_rounds**2 - self.precision[(c,)]
            if lacking > 1e-12 / sigma_rounds**2:
                self.marginal((c,), 1.0 / math.sqrt(lacking),
                              f"1-way marginal {c}, second measurement")
        return sigma_rounds

    def used(self):
        return math.fsum(s.rho for s in self.spends)

    def total(self):
        return _total_estimate(self.marginals, self.free)

    def release(self, rho, total, population=None, spends=None):
        return WorkloadRelease(self.n_values, self.marginals,
                               self.spends if spends is None else spends, float(rho), total,
                               population, residuals=self.residuals, possible=self.possible,
                               cell_variances=self.cell_variances)

    def targets(self, kind, rho, total, touching=None):
        """Targets of the scoring population (:meth:`WorkloadRelease.targets`)."""
        return self.release(rho, total, spends=[]).targets(kind, touching, self.gls_cache)


def _round_budget(remaining, sigma, select_rho, alpha, last):
    """``(sigma, select_rho, last)`` of a round: when ``remaining`` cannot pay for two
    more rounds (or ``last``), this one spends all of it."""
    step = 1.0 / (2.0 * sigma**2) + select_rho
    if remaining <= 2.0 * step or last:
        return (math.sqrt(1.0 / (2.0 * alpha * remaining)), (1.0 - alpha) * remaining, True)
    return sigma, select_rho, False


def _refit(population, pop_counts, choice, candidates, measured, shards, rng, *, kind, rho,
           total, full, allowed):
    """Refit the population to all measurements after measuring candidate ``choice``, in place.

    One sweep over the selected set's columns (every column when ``full``);
    the candidates' counts follow the moved records.  Returns the new
    estimated total and how much the selected set's fitted counts moved.
    """
    m = len(population)
    r = candidates.sets[choice]
    before = candidates.counts(pop_counts, choice, total / m)
    total = measured.total()
    # a sweep over r's columns only touches the targets holding one
    targets = measured.targets(kind, rho, total, touching=None if full else r)
    previous = population.copy()
    descend(population, measured.n_values, targets, rng, sweeps=1,
            columns=None if full else r, allowed=allowed, total=total)
    # the candidates' counts follow the moved records, column by column
    move_counts(pop_counts, previous, population, candidates.layout,
                candidates.tables_of_column, shards)
    after = candidates.counts(pop_counts, choice, total / m)
    return total, np.abs(after - before).sum()


def _checked_one_way_counts(one_way_counts, n_values):
    """``one_way_counts`` as ``{column: (float array, variance)}``, validated."""
    if one_way_counts is None:
        return {}
    if not isinstance(one_way_counts, dict):
        raise TypeError("one_way_counts must be a dict {column: (counts, variance)}; got "
                        f"{type(one_way_counts).__name__}.")
    out = {}
    for c, entry in one_way_counts.items():
        if not (isinstance(c, (int, np.integer)) and 0 <= c < n_values.size):
            raise ValueError(f"one_way_counts has column {c!r}; columns are "
                             f"0..{n_values.size - 1}.")
        if not (isinstance(entry, tuple) and len(entry) == 2
                and isinstance(entry[1], (int, float, np.floating, np.ndarray))):
            raise TypeError(f"one_way_counts[{c}] must be a pair (counts, variance).")
        counts, variance = entry
        counts = np.asarray(counts, dtype=np.float64)
        if counts.shape != (int(n_values[c]),):
            raise ValueError(f"one_way_counts[{c}] has shape {counts.shape}; expected "
                             f"({int(n_values[c])},).")
        variance = np.asarray(variance, dtype=np.float64)
        if variance.shape not in ((), counts.shape):
            raise ValueError(f"one_way_counts[{c}]: the variance is one number or one per "
                             f"code (shape {counts.shape}); got shape {variance.shape}.")
        variance = np.broadcast_to(variance, counts.shape)
        measured = ~np.isnan(counts)
        if np.isinf(counts).any() or not (np.isfinite(variance[measured]).all()
                                          and (variance[measured] > 0).all()):
            raise ValueError(f"one_way_counts[{c}]: counts must be finite or NaN (not "
                             "measured) and the variance (one, or one per code) finite "
                             "and > 0.")
        out[int(c)] = (counts, variance)
    return out


def _combine_one_way(table, variance, counts, counts_variance, empty):
    """Inverse-variance average, code by code, of a 1-way measurement and earlier counts.

    ``counts`` is NaN where it measured nothing; publicly empty codes stay
    exact zeros.  Returns the combined table and the mean variance of the
    possible codes (the variance the consistency step and the fit use: it
    is lower on the codes both measured, ``variance`` elsewhere) and the
    variance of each code (0 on the empty ones).
    """
    measured = ~np.isnan(counts) & ~empty
    earlier = np.broadcast_to(np.asarray(counts_variance, dtype=np.float64), counts.shape)
    both = 1.0 / (1.0 / variance + 1.0 / earlier[measured])
    combined = np.array(table, dtype=np.float64)
    combined[measured] = (table[measured] / variance
                          + counts[measured] / earlier[measured]) * both
    cells = np.where(empty, 0.0, float(variance))
    cells[measured] = both
    mean_variance = math.fsum(cells[~empty]) / max(int((~empty).sum()), 1)
    return combined, mean_variance, cells


def _checked(block, n_values, empty_cells):
    """``block`` as int32 codes, refused unless every code lies in ``0..n_values[c] - 1``
    and none is ruled out by ``empty_cells``."""
    block = np.asarray(block)
    if block.ndim != 2 or block.shape[1] != n_values.size:
        raise ValueError("codes must be a 2-D array with one column per entry of n_values.")
    if block.size and (block.min() < 0 or np.any(block.max(axis=0) >= n_values)):
        raise ValueError("codes must lie in 0..n_values[c] - 1 for every column c.")
    for c, empty in enumerate(empty_cells):
        if block.size and empty.any() and empty[block[:, c]].any():
            raise ValueError(f"column {c} holds a code that empty_cells rules out.")
    return block.astype(np.int32, copy=False)


def _exact_last(spends, rho):
    """Rescale the budget bookkeeping of a 1-way-only release (all rho on d marginals)."""
    last = spends[-1]
    return Spend(last.name, last.mechanism, rho=rho - math.fsum(s.rho for s in spends[:-1]),
                 params=last.params)


def sample_release(release, n, rng, *, sweeps=15, kind="consistent", warm_start=True):
    """Synthetic codes (n, d) fitted to a release's measurements (post-processing).

    Parameters
    ----------
    release : WorkloadRelease
    n : int
        Number of records.
    rng : numpy.random.Generator or int or None
    sweeps : int, default=15
    kind : {"measurements", "consistent"}, default="consistent"
        Targets: see :meth:`WorkloadRelease.targets`.  The GLS-consistent
        marginals pool every measurement's information on shared
        sub-marginals, and were the more accurate targets on the benchmarks
        (see ``benchmarks/LOG.md``).
    warm_start : bool, default=True
        Start from the selection population when it has at least ``0.9 n``
        records (a subset of ``n`` rows, or all rows and a few drawn twice),
        otherwise from independent draws (both chosen on the benchmarks,
        see ``benchmarks/LOG.md``).

    The fitted records are then mixed within the measured sets'
    neighbourhoods (:func:`~dpsynth.model.mixing.mix_within_neighbourhoods`).

    Returns
    -------
    ndarray of int32, shape (n, d)
    """
    rng = np.random.default_rng(rng)
    targets = release.targets(kind)
    init = None
    if warm_start and release.population is not None and len(release.population):
        population = release.population
        m = len(population)
        if m >= n:
            init = population[np.sort(rng.choice(m, n, replace=False))] if m > n else population
        elif m >= 0.9 * n:  # all rows, and a few drawn twice
            init = population[np.concatenate([np.arange(m), rng.choice(m, n - m)])]
        # a much smaller population: duplicating its rows fits worse than fresh draws
    records = fit_population(release.n_values, targets, n, rng, sweeps=sweeps,
                             total=release.total, init=init)
    mix_within_neighbourhoods(records, release.n_values, [cols for cols, _, _ in targets], rng)
    return records
