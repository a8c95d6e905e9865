"""Marginal-matching synthesis: denoise the DP aggregates, then fit a population to them.

The SDS aggregate-seeded sampler follows the released counts literally; on
wide tables those counts are dominated by noise (at epsilon 4 on 21 columns
the 2-way noise std is about 36 records per cell), half of the absent
combinations are fabricated, and records reach dead ends.  This module uses
the same :class:`DPAggregates` (post-processing only: no privacy cost) in
four steps.

1. **Denoising by empirical Bayes with censoring.**  Every cell ``c`` of a
   2-way marginal over released values was a candidate of the release: it
   was either released with ``y = c + N(0, s^2)`` or suppressed, i.e.
   ``c + noise <= t`` (``s`` and ``t`` are the public noise scale and
   threshold of length 2; rounding below 1 also suppresses, so ``t >=
   0.5``).  With a prior ``c ~ N(m, v)`` centred on the independence
   prediction ``m`` (from the 1-way counts), the posterior mean is
   ``m + v / (v + s^2) (y - m)`` for a released cell and
   ``m - v / sqrt(v + s^2) * phi(z) / Phi(z)``, ``z = (t - m) / sqrt(v +
   s^2)``, for a suppressed one.  The prior variance ``v = kappa (m + 1)``
   has one scale per marginal, chosen by maximising the marginal likelihood
   of that marginal's observations (Efron & Morris style empirical Bayes).
2. **Consistency.**  Each denoised 2-way table is raked (iterative
   proportional fitting) to the 1-way counts, which are far less noisy, so
   all targets agree on every column's distribution.
3. **Population fitting.**  ``n`` records drawn independently from the
   1-way targets are moved by greedy coordinate descent (Cython kernel
   ``_core._matching``) on the weighted squared error between the
   population's 1- and 2-way counts and the targets: each visit of a
   (record, column) sets the value that lowers the error most.  A sweep
   visits the columns in a random order and, for each, all records in a
   random order.
4. **3-way refinement.**  The 3-way aggregates are denoised like the 2-way
   ones, with the fitted population's counts as the prior (one vectorised
   pass over all column triples), and the descent continues with the 3-way
   tables added to the targets (weighted by their noise variance relative
   to the 2-way one).

The descent keeps the residual ``P - T`` of every target (float64) and,
for every target and each of its columns ``j``, a float32 copy of the
weighted residual with ``j`` as the innermost axis: scoring all values of
``j`` for a record then reads one contiguous run per target instead of one
cache line per value.  A move rewrites the affected cells of every copy
from the float64 residual, so copies never drift.  Values that are never
released nor held are dropped from the tables.  The residual and its copies
take 8 + 4 k bytes per cell of a k-way table (about 63 MB for a population
of 50,000 records fitted to 1,700 3-way tables on 24 columns).

Samples larger than ``model_size`` are drawn from a model of
``model_size`` records (built as below; with dense marginals, in
populations of ``model_population`` records) by randomized rounding of the
record multiplicities (:func:`expand_population`), so their cost beyond the
model is drawing and decoding records.  Samples larger than
``max_population`` (up to ``model_size``) are built as independent
populations; with ``n_jobs`` they are fitted in threads (the kernels run
without the GIL), each with its own records and residual.  All randomness
(initial draws and visiting orders) comes from one
``numpy.random.Generator``, from which one child generator per population
is derived up front, so results are reproducible and do not depend on
``n_jobs``.
"""

from concurrent.futures import ThreadPoolExecutor
from numbers import Integral, Real

import numpy as np
from scipy.special import log_ndtr
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._core import _matching
from ..model.dense import dense_targets, fit_dense_populations
from ..model.layout import descent_layout
from ..utils._threads import leave_signals_to_main_thread, n_threads
from .base import Sampler

__all__ = ["MarginalMatchingSampler", "denoise_censored", "expand_population", "rake"]

_KAPPAS = np.logspace(-2, 4, 25)


def denoise_censored(prior, y, released, candidate, noise, threshold, return_scale=False):
    """Empirical-Bayes posterior means of a marginal's cells (flattened arrays).

    Parameters
    ----------
    prior : ndarray
        Prior mean of every cell.
    y : ndarray
        Released count (ignored where not released).
    released, candidate : ndarray of bool
        Released cells; cells that were candidates (released or suppressed).
    noise : float
        Noise std of the release.
    threshold : float
        A suppressed candidate's noisy count was at most this.

    return_scale : bool, default=False
        Also return the prior scale ``kappa`` chosen (``inf`` without noise,
        ``0`` without observations).

    Returns
    -------
    ndarray
        Non-negative posterior means; non-candidate cells keep the prior.
    """
    out = prior.astype(float).copy()
    if noise <= 0:  # exact counts: a suppressed candidate had count 0
        out[candidate] = 0.0
        out[released] = y[released]
        return (out, np.inf) if return_scale else out
    cells = np.flatnonzero(candidate)  # one marginal: a single segment
    estimate, kappa = _denoise_segments(out[cells], y[cells], released[cells],
                                        np.zeros(cells.size, dtype=np.int64), 1, noise, threshold)
    out[cells] = estimate
    return (out, float(kappa[0])) if return_scale else out


def _denoise_segments(prior, y, released, segment, n_segments, noise, threshold):
    """Empirical-Bayes posterior means of many marginals at once, on their candidate cells.

    The estimator of :func:`denoise_censored` (which calls this with one
    segment), with one prior scale per marginal.

    Parameters
    ----------
    prior, y : ndarray
        Prior mean and released count (ignored where not released) of every
        candidate cell of every marginal.
    released : ndarray of bool
        Released candidates (the others were suppressed).
    segment : ndarray of int
        Marginal of every cell, in ``range(n_segments)``.
    n_segments : int
    noise, threshold : float
        As in :func:`denoise_censored`, shared by all marginals.

    Returns
    -------
    estimate : ndarray
        Non-negative posterior means of the cells.
    kappa : ndarray of shape (n_segments,)
        Prior scale chosen for every marginal (``inf`` without noise, ``0``
        without observations).
    """
    if noise <= 0:  # exact counts: a suppressed candidate had count 0
        return np.where(released, y, 0.0), np.full(n_segments, np.inf)
    prior = np.asarray(prior, dtype=float)
    rel, sup = released, ~released
    m_rel, y_rel, s_rel = prior[rel], y[rel], segment[rel]
    s_sup = segment[sup]
    observed = np.bincount(segment, minlength=n_segments) > 0
    # a suppressed cell's likelihood depends on its prior only: sum over the
    # distinct (marginal, prior) pairs, weighted by how often each occurs
    values, inverse = np.unique(prior[sup], return_inverse=True)
    pairs, multiplicity = np.unique(s_sup * max(values.size, 1) + inverse.ravel(),
                                    return_counts=True)
    pair_segment, pair_value = np.divmod(pairs, max(values.size, 1))
    ll = np.empty((_KAPPAS.size, n_segments))
    for i, kappa in enumerate(_KAPPAS):  # maximise the marginal likelihood per marginal
        var_rel = kappa * (m_rel + 1.0) + noise**2
        ll[i] = -0.5 * np.bincount(s_rel, np.log(var_rel) + (y_rel - m_rel) ** 2 / var_rel,
                                   minlength=n_segments)
        sup_ll = log_ndtr((threshold - values) / np.sqrt(kappa * (values + 1.0) + noise**2))
        ll[i] += np.bincount(pair_segment, multiplicity * sup_ll[pair_value],
                             minlength=n_segments)
    best = _KAPPAS[np.argmax(ll, axis=0)]  # the first maximum, as in denoise_censored
    out = prior.copy()
    v_rel = best[s_rel] * (m_rel + 1.0)
    out[rel] = m_rel + v_rel / (v_rel + noise**2) * (y_rel - m_rel)
    m_sup = prior[sup]
    v_sup = best[s_sup] * (m_sup + 1.0)
    scale = np.sqrt(v_sup + noise**2)
    z = (threshold - m_sup) / scale
    inverse_mills = np.exp(-0.5 * z**2 - log_ndtr(z)) / np.sqrt(2 * np.pi)
    out[sup] = m_sup - v_sup / scale * inverse_mills
    return np.maximum(out, 0.0), np.where(observed, best, 0.0)


def rake(table, row_totals, column_totals, iterations=25):
    """Iterative proportional fitting of a 2-D table to row and column totals."""
    table = np.maximum(np.asarray(table, dtype=float), 1e-9)
    for _ in range(iterations):
        table *= (row_totals / np.maximum(table.sum(axis=1), 1e-12))[:, None]
        table *= (column_totals / np.maximum(table.sum(axis=0), 1e-12))[None, :]
    return table


class MarginalMatchingSampler(Sampler):
    """Marginal-matching synthesis from one :class:`DPAggregates`.

    Parameters
    ----------
    sweeps : int, default=3
        Passes of coordinate descent over all (record, column) pairs towards
        the 1- and 2-way targets.
    three_way_sweeps : int, default=2
        Passes once the 3-way targets are added.  A pass then reads about
        ten times more cells (24 columns), and few records still move after
        the first one (a third pass gained little for its time on the
        benchmarks, see ``benchmarks/LOG.md``).
    use_three_way : bool, default=True
        Also denoise the 3-way aggregates (prior: the population fitted to
        the 1- and 2-way targets) and fit to them.
    max_population : int, default=50_000
        Larger samples (up to ``model_size``) are built as independent
        populations of at most this size (each fitted to the same targets),
        so time grows linearly with the number of records and memory stays
        bounded.
    n_jobs : int or None, default=None
        Populations fitted concurrently, in threads (the kernel releases the
        GIL); a sample of one population counts its reference population
        (``reference_size``) on that many threads instead, and a sample
        drawn from the model (``model_size``) gathers its columns on them.  ``None`` uses
        every processor this process may use (as scikit-learn's
        OpenMP-based estimators do by default), ``1`` one thread, ``-2`` all
        but one.  The result does not depend on it.
        Each thread holds one population's residual and its copies: 8 + 4 k
        bytes per cell of every k-way target table (about 63 MB for 50,000
        records of a 24-column table with 1,700 3-way targets).
    dense_sweeps : int, default=15
        Passes of coordinate descent towards dense noisy marginals (a
        workload-aware release, :mod:`dpsynth.release.workload_release`).  A column
        whose pass moves fewer than 0.05% of a population's records is
        settled: the later passes skip it.
    min_count : float or "auto", default="auto"
        With dense marginals, a value whose consistent 1-way estimate is
        below ``min_count`` noise standard deviations is never synthesized
        (a value absent from the data would otherwise appear through noise
        alone).  ``0`` keeps every value with a positive estimate.
        ``"auto"``: 1 for declared values, 2 for values a DP release
        discovered (chosen on the benchmarks, see ``benchmarks/LOG.md``);
        for the missing code, the level at which noise alone gives some
        complete column of the table a missing value once in a thousand
        fits (:func:`~dpsynth.model.dense.missing_sigmas`: 3.09 for one
        column, 4.14 for 57, applied step-down so that columns whose code
        clearly holds records do not raise it), and the same for a
        column's other value (:attr:`~dpsynth.schema.Column.other`) over
        the columns that have one: a column whose values were all released
        gets no other value.
    reference_size : int, default=300_000
        With dense marginals, a sample of ``n <= max_population`` records
        (one population) is rounded to a reference population of
        ``min(reference_size, 10 n)`` records fitted to the same targets: it
        is fitted once more, also to the reference's counts of the
        ``reporting_length``-way sets that were not measured (the smallest
        first, up to 4,000,000 cells in all;
        :func:`~dpsynth.model.rounding.round_to_reference`), which removes
        most of its sampling noise there, as Private-PGM's randomized
        rounding does.  Skipped unless the reference has more than ``2 n``
        records; ``0`` never rounds.  A sample of several populations is
        not rounded: their sampling noise averages out.  Rounding costs
        sampling time and buys accuracy on the unmeasured marginals; the
        sizes were chosen on the benchmarks (see ``benchmarks/LOG.md``).
    model_size : int, default=300_000
        A sample of ``n > model_size`` records is drawn from a model:
        ``model_size`` fitted records (:meth:`fit_model`; see
        ``model_population``) whose records are repeated ``n //
        model_size`` times, ``n % model_size`` distinct ones of them once
        more (chosen at random), in
        random order (:func:`expand_population`).  Sampling time and memory
        beyond the model then grow only with drawing and decoding the
        records, at the price of the sampling noise of ``model_size``
        records instead of ``n``: every count of the expanded sample is the
        model's count scaled to ``n`` (up to the sampling noise of the ``n
        % model_size`` extra copies), so its error against the released
        marginals is the model's, and the dependence the model's records
        hold by chance is repeated rather than averaged away (the size was
        chosen on the benchmarks, see ``benchmarks/LOG.md``).  Decoding
        draws every copy's within-bin numeric values afresh.  ``0`` fits
        every record.  Samples of up to ``model_size`` records do not
        depend on it.
    model_population : int, default=150_000
        With dense marginals (a workload release), the model
        (``model_size``) is fitted as independent populations of up to
        ``max(max_population, model_population)`` records (two of
        150,000 by default, one per thread on two cores), not of
        ``max_population``: a larger population fits the targets more
        closely for the same time per record (its counts are finer), and a
        model's error is repeated in every copy rather than averaged over
        more populations.  A population's fitting memory is mostly its
        targets' residual (see ``n_jobs``), which does not grow with its
        records.  The model of an SDS release (sparse counts) is built as
        a sample of ``model_size`` records.  Samples of up to ``model_size``
        records do not depend on it.
    model_sweeps : int, default=8
        Passes of coordinate descent of the model's populations towards
        dense marginals (``dense_sweeps`` for the others).  With populations
        of ``model_population`` records, fewer passes than ``dense_sweeps``
        still fit the released 2- and 3-way marginals, and the unreleased
        ones, more closely than ``max_population``-record populations with
        ``dense_sweeps`` passes (the 1-way ones about as closely), in less
        time: the model's size, populations and passes were chosen together
        on the benchmarks (see ``benchmarks/LOG.md``).  Samples of up to
        ``model_size`` records do not depend on it.
    """

    _parameter_constraints = {
        "sweeps": [Interval(Integral, 1, None, closed="left")],
        "use_three_way": ["boolean"],
        "max_population": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "three_way_sweeps": [Interval(Integral, 1, None, closed="left")],
        "dense_sweeps": [Interval(Integral, 1, None, closed="left")],
        "min_count": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "reference_size": [Interval(Integral, 0, None, closed="left")],
        "model_size": [Interval(Integral, 0, None, closed="left")],
        "model_population": [Interval(Integral, 1, None, closed="left")],
        "model_sweeps": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, sweeps=3, use_three_way=True, max_population=50_000, n_jobs=None,
                 three_way_sweeps=2, dense_sweeps=15, min_count="auto",
                 reference_size=300_000, model_size=300_000, model_population=150_000,
                 model_sweeps=8):
        self.sweeps = sweeps
        self.three_way_sweeps = three_way_sweeps
        self.use_three_way = use_three_way
        self.max_population = max_population
        self.n_jobs = n_jobs
        self.dense_sweeps = dense_sweeps
        self.min_count = min_count
        self.reference_size = reference_size
        self.model_size = model_size
        self.model_population = model_population
        self.model_sweeps = model_sweeps

    def fit(self, aggregates):
        """Read the public facts the targets need from ``aggregates``."""
        self._validate_params()
        if isinstance(self.n_jobs, bool) or self.n_jobs == 0:
            raise ValueError("n_jobs must be None or a non-zero integer (-1: all "
                             f"processors); got {self.n_jobs!r}.")
        schema = aggregates.schema
        self.aggregates = aggregates
        self.offsets = schema.offsets.astype(np.int64)
        self.n_columns = len(schema)
        self.column_of = schema.attribute_columns
        self.absent = schema.missing == "absent"
        # with missing="absent" every column gets one more value: the empty cell
        self.sizes = aggregates.table_sizes.astype(np.int64)
        privacy = aggregates.privacy
        self._noise = {int(k): float(v) for k, v in privacy.get("noise_scales", {}).items()}
        self._threshold = {int(k): max(float(v), 0.5)
                           for k, v in privacy.get("thresholds", {}).items()}
        one_counts = aggregates.one_counts().astype(float)
        self.one_counts = [np.append(one_counts[self.offsets[j]:self.offsets[j + 1]],
                                     [0.0] * (1 if self.absent else 0))
                           for j in range(self.n_columns)]
        self._three_way = None  # structure of the 3-way targets, built on first use
        self.fitted_ = True
        return self

    # --------------------------------------------------------- targets
    def one_way_targets(self, n):
        """1-way counts scaled to ``n`` records (the empty cell gets the rest)."""
        targets = []
        for counts in self.one_counts:
            counts = counts.copy()
            if self.absent:
                counts[-1] = max(self.aggregates.n_records - counts[:-1].sum(), 0.0)
            total = counts.sum()
            targets.append(counts * (n / total) if total > 0
                           else np.full(counts.size, n / counts.size))
        return targets

    def two_way_targets(self, one_way, n):
        """Denoised, raked 2-way tables for every released column pair."""
        if len(self.aggregates.tuples) < 2:
            return {}
        tuples, counts = self.aggregates.tuples[1], self.aggregates.counts[1]
        columns = self.column_of[tuples]
        codes = tuples - self.offsets[columns]
        pair_key = columns[:, 0] * self.n_columns + columns[:, 1]  # few pairs: masks are cheap
        released_values = [c > 0 for c in self.one_counts]
        scale = n / max(self.aggregates.n_records, 1)
        targets = {}
        for key in np.unique(pair_key):
            i, j = divmod(int(key), self.n_columns)
            rows = pair_key == key
            shape = (int(self.sizes[i]), int(self.sizes[j]))
            cells = np.ravel_multi_index(codes[rows].T, shape)
            y = np.zeros(shape[0] * shape[1])
            y[cells] = counts[rows] * scale
            released = np.zeros(y.size, dtype=bool)
            released[cells] = True
            # every pair of released values was a candidate (never the empty cell)
            candidate = np.multiply.outer(released_values[i], released_values[j]).ravel()
            prior = np.multiply.outer(one_way[i], one_way[j]).ravel() / n
            estimate = denoise_censored(prior, y, released, candidate,
                                        self._noise.get(2, 0.0) * scale,
                                        self._threshold.get(2, 0.5) * scale)
            targets[(i, j)] = rake(estimate.reshape(shape), one_way[i], one_way[j])
        return targets

    def three_way_targets(self, records, n):
        """Denoised 3-way tables, with the current population as the prior.

        Parameters
        ----------
        records : ndarray of int, shape (n, n_columns)
            The population (codes, the empty cell as its own value).
        n : int
            Number of records the targets are scaled to.

        Returns
        -------
        dict
            ``{(i, j, k): table}`` for the released column triples whose data
            show evidence against the population (a prior scale above the
            smallest; otherwise the table would equal the population's).
        """
        structure = self._three_way_structure()
        if structure is None:
            return {}
        triples, shapes, table_base, table_column, table_step, cells, y, released, segment = \
            structure
        counts = np.zeros(int(table_base[-1]))
        _matching.count_cells(np.ascontiguousarray(np.asarray(records, dtype=np.int32).T),
                              counts, table_base[:-1], table_column, table_step)
        scale = n / max(self.aggregates.n_records, 1)
        estimate, kappa = _denoise_segments(
            counts[cells], y * scale, released, segment, len(triples),
            self._noise.get(3, 0.0) * scale, self._threshold.get(3, 0.5) * scale)
        counts[cells] = estimate  # cells that were no candidates keep the prior
        # at the smallest prior scale the data carry no evidence against the
        # population: the target would equal it, so skip the table
        return {cols: counts[table_base[t]:table_base[t + 1]].reshape(shapes[t])
                for t, cols in enumerate(triples) if kappa[t] > _KAPPAS[0]}

    def _three_way_structure(self):
        """What the 3-way targets need from the aggregates alone, computed once.

        Returns ``None`` without 3-way aggregates, else ``(triples, shapes,
        table_base, table_column, table_step, cells, y, released, segment)``:
        the released column triples, their table shapes and layout in one
        flat array (``table_base`` has one more entry: the total size), and
        for every candidate cell (a cell whose three 2-sub-combinations were
        released) its flat index, released count (0 if suppressed), whether
        it was released and its triple.
        """
        if self._three_way is not None:
            return self._three_way or None
        if len(self.aggregates.tuples) < 3 or len(self.aggregates.counts[2]) == 0:
            self._three_way = ()
            return None
        tuples, counts = self.aggregates.tuples[2], self.aggregates.counts[2]
        columns = self.column_of[tuples]
        codes = tuples - self.offsets[columns]
        key = np.ravel_multi_index(columns.T, (self.n_columns,) * 3)
        order = np.argsort(key, kind="stable")
        key, codes, counts = key[order], codes[order], counts[order]
        starts = np.flatnonzero(np.r_[True, np.diff(key) != 0])
        stops = np.r_[starts[1:], key.size]
        pair_released = self._released_pairs()
        triples, shapes, bases = [], [], [0]
        all_cells, all_y, all_released, all_segment = [], [], [], []
        for t, (start, stop) in enumerate(zip(starts, stops)):
            cols = tuple(int(c) for c in np.unravel_index(key[start], (self.n_columns,) * 3))
            shape = tuple(int(self.sizes[c]) for c in cols)
            size = int(np.prod(shape))
            cells = np.ravel_multi_index(codes[start:stop].T, shape)
            y = np.zeros(size)
            y[cells] = counts[start:stop]
            released = np.zeros(size, dtype=bool)
            released[cells] = True
            # candidates: cells whose three 2-sub-combinations were released
            candidate = np.ones(shape, dtype=bool)
            for drop in range(3):
                sub = tuple(c for i, c in enumerate(cols) if i != drop)
                candidate &= np.expand_dims(pair_released[sub], axis=drop)
            candidate = np.flatnonzero(candidate)
            triples.append(cols)
            shapes.append(shape)
            all_cells.append(bases[-1] + candidate)
            all_y.append(y[candidate])
            all_released.append(released[candidate])
            all_segment.append(np.full(candidate.size, t, dtype=np.int64))
            bases.append(bases[-1] + size)
        table_column = np.array(triples, dtype=np.int32)
        table_step = np.array([[shape[1] * shape[2], shape[2], 1] for shape in shapes],
                              dtype=np.int64)
        self._three_way = (triples, shapes, np.array(bases, dtype=np.int64), table_column,
                           table_step, np.concatenate(all_cells), np.concatenate(all_y),
                           np.concatenate(all_released), np.concatenate(all_segment))
        return self._three_way

    def _released_pairs(self):
        """Boolean table of released value pairs for every column pair."""
        tables = {}
        for i in range(self.n_columns):
            for j in range(i + 1, self.n_columns):
                tables[(i, j)] = np.zeros((self.sizes[i], self.sizes[j]), dtype=bool)
        if len(self.aggregates.tuples) >= 2:
            tuples = self.aggregates.tuples[1]
            columns = self.column_of[tuples]
            codes = tuples - self.offsets[columns]
            for (i, j), (a, b) in zip(columns.tolist(), codes.tolist()):
                tables[(i, j)][a, b] = True
        return tables

    def _weight(self, k):
        """Weight of a k-way target in the loss: inverse noise variance relative to 2-way."""
        if self._noise.get(k, 0.0) <= 0 or self._noise.get(2, 0.0) <= 0:
            return 1.0
        return float(np.clip((self._noise[2] / self._noise[k]) ** 2, 0.05, 20.0))

    # ------------------------------------------------------------ sample
    def sample(self, n, rng):
        """Codes (n, n_columns) of a population fitted to the denoised marginals.

        Parameters
        ----------
        n : int
            Number of records.
        rng : numpy.random.Generator
            Source of all randomness: one child generator per population is
            derived from it up front, so the result depends on ``rng`` only
            (not on ``n_jobs``).

        Returns
        -------
        ndarray of int32, shape (n, n_columns)
            Codes; with ``missing="absent"`` empty cells are ``-1``.
        """
        check_is_fitted(self, "fitted_")
        if n is None:
            n = self.aggregates.n_records
        self.aggregates.check_samplable(complete=not self.absent)
        if n == 0:
            return np.zeros((0, self.n_columns), dtype=np.int32)
        if 0 < self.model_size < n:  # a fixed-size model, its records repeated
            return expand_population(self.fit_model(rng), n, rng,
                                     n_threads=n_threads(self.n_jobs))
        return self._fit_records(n, rng, self.max_population, self.dense_sweeps)

    def fit_model(self, rng):
        """The model larger samples are drawn from: ``model_size`` fitted records.

        The records are fitted as a sample of ``model_size`` records would be,
        but, towards dense marginals (a workload release), in populations of
        up to ``max(max_population, model_population)`` records with
        ``model_sweeps`` passes.

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of all randomness (as in :meth:`sample`).

        Returns
        -------
        ndarray of int32, shape (model_size, n_columns)
            Codes; with ``missing="absent"`` empty cells are ``-1``.
        """
        check_is_fitted(self, "fitted_")
        self.aggregates.check_samplable(complete=not self.absent)
        if self.model_size == 0:
            raise ValueError("model_size=0 fits every record: there is no model to fit.")
        if not self.aggregates.marginals:  # the sparse path: as a sample of model_size
            return self._fit_records(self.model_size, rng, self.max_population,
                                     self.dense_sweeps)
        return self._fit_records(self.model_size, rng,
                                 max(self.max_population, self.model_population),
                                 self.model_sweeps)

    def _fit_records(self, n, rng, population, dense_sweeps):
        """``n >= 1`` records fitted in populations of at most ``population`` records
        (``dense_sweeps`` descent passes towards dense marginals)."""
        n_parts = -(-n // population)
        sizes = np.full(n_parts, n // n_parts) + (np.arange(n_parts) < n % n_parts)
        seed = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
        generators = [np.random.default_rng(child) for child in seed.spawn(n_parts)]
        if self.aggregates.marginals:  # dense noisy marginals (release="workload")
            return self._dense_populations(sizes, generators, dense_sweeps)
        # the targets (but the 3-way ones) do not depend on the population:
        # compute them once; threads share them read-only
        scale = max(self.aggregates.n_records, 1)
        one_way = self.one_way_targets(scale)
        targets = [((j,), t, self._weight(1)) for j, t in enumerate(one_way)]
        targets += [(cols, t, 1.0) for cols, t in self.two_way_targets(one_way, scale).items()]
        if self.use_three_way:
            self._three_way_structure()

        stop = np.zeros(1, dtype=np.uint8)  # set: every thread's descent stops

        def population(part):
            return self._population(int(sizes[part]), one_way, targets, generators[part],
                                    stop)

        n_workers = min(n_threads(self.n_jobs), n_parts)
        if n_workers <= 1:
            parts = [population(part) for part in range(n_parts)]
        else:
            with ThreadPoolExecutor(max_workers=n_workers,
                                    initializer=leave_signals_to_main_thread) as executor:
                try:
                    parts = list(executor.map(population, range(n_parts)))
                except BaseException:  # Ctrl-C or a failure: end the other threads now
                    stop[0] = 1
                    executor.shutdown(wait=True, cancel_futures=True)
                    raise
        records = np.concatenate(parts)
        if self.absent:
            records = np.where(records == (self.sizes - 1)[None, :], -1, records)
        return records.astype(np.int32)

    def _dense_populations(self, sizes, generators, sweeps):
        """Populations fitted to the GLS-consistent dense marginals of the release
        (:func:`~dpsynth.model.dense.dense_targets`, then
        :func:`~dpsynth.model.dense.fit_dense_populations`)."""
        targets = dense_targets(self.aggregates.marginals, self.sizes, self.aggregates.schema,
                                absent=self.absent, min_count=self.min_count)
        records = fit_dense_populations(
            self.sizes, targets, sizes, generators,
            total=max(float(self.aggregates.n_records), 1.0), sweeps=sweeps,
            reference_size=self.reference_size, length=self.aggregates.reporting_length,
            n_jobs=self.n_jobs)
        if self.absent:
            records = np.where(records == (self.sizes - 1)[None, :], -1, records)
        return records.astype(np.int32)

    def _population(self, n, one_way, targets, rng, stop=None):
        """One population of ``n`` records fitted to the targets (touches no shared state
        but ``stop``, the flag that ends the descents early)."""
        records = np.empty((n, self.n_columns), dtype=np.int32)
        for j, target in enumerate(one_way):
            records[:, j] = rng.choice(self.sizes[j], size=n, p=target / target.sum())
        self._descend(records, one_way, targets, rng, self.sweeps, stop)
        triples = self.three_way_targets(records, n) if self.use_three_way else {}
        if triples:
            weight = self._weight(3)
            self._descend(records, one_way,
                          targets + [(c, t, weight) for c, t in triples.items()], rng,
                          self.three_way_sweeps, stop)
        return records

    def _descend(self, records, one_way, targets, rng, sweeps, stop=None):
        """Greedy coordinate descent (Cython) towards weighted target marginals.

        ``targets`` is a list of ``(columns, table, weight)``; tables are
        rescaled to the population size.  ``one_way`` gives the values that
        may be written.  ``records`` is updated in place; returns the number
        of moves per sweep (``sweeps`` of them).  ``stop``: see ``_matching.descend``.
        """
        d, n = self.n_columns, records.shape[0]
        # values that are never written nor held are left out of every table:
        # their cells cannot change, so the descent is the same without them
        keep = [np.flatnonzero((one_way[j] > 0)
                               | (np.bincount(records[:, j], minlength=one_way[j].size) > 0))
                for j in range(d)]
        code = np.empty_like(records)
        for j in range(d):
            recode = np.full(int(self.sizes[j]), -1, dtype=np.int32)
            recode[keep[j]] = np.arange(keep[j].size, dtype=np.int32)
            code[:, j] = recode[records[:, j]]
        sizes = np.array([k.size for k in keep], dtype=np.int32)
        allowed = np.concatenate([one_way[j][keep[j]] > 0 for j in range(d)]).astype(np.uint8)
        value_base = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        tables = []
        for cols, table, weight in targets:
            table = table * (n / max(table.sum(), 1e-12))
            table = table[np.ix_(*[keep[c] for c in cols])]
            tables.append((cols, table, weight))
        layout = descent_layout(code, tables)
        record_orders = np.array([rng.permutation(n) for _ in range(sweeps)],
                                 dtype=np.int64).reshape(sweeps, n)
        column_orders = np.array([rng.permutation(d) for _ in range(sweeps)],
                                 dtype=np.int32).reshape(sweeps, d)
        moves = _matching.descend(code, *layout, sizes, allowed, value_base,
                                  record_orders, column_orders, stop)
        for j in range(d):
            records[:, j] = keep[j][code[:, j]]
        return moves


def expand_population(records, n, rng, n_threads=1):
    """``n`` records drawn from a population by randomized rounding of multiplicities.

    Every record of ``records`` (``m`` of them) is repeated ``n // m`` times
    and ``n % m`` distinct records, chosen uniformly, once more; the result
    is in random order.  Each record's multiplicity is its expected share
    ``n / m`` rounded up or down at random (with exactly ``n`` in all), so
    every count of the result is the population's count times ``n // m``
    plus the count of a simple random sample (without replacement) of
    ``n % m`` of its records: the population's fit to its targets is kept,
    and the only sampling noise added is that of the ``n % m`` extra
    records (none when ``m`` divides ``n``).

    Parameters
    ----------
    records : ndarray of shape (m, n_columns)
        The population (codes), ``m >= 1``.
    n : int
        Number of records to draw.
    rng : numpy.random.Generator
    n_threads : int, default=1
        Threads gathering the columns (numpy's gather runs without the GIL);
        the result does not depend on it.

    Returns
    -------
    ndarray of shape (n, n_columns), of the dtype of ``records``
        In Fortran order: decoding reads it column by column.
    """
    m = records.shape[0]
    whole, rest = divmod(int(n), m)
    index = np.empty(int(n), dtype=np.int32 if m < 2**31 else np.int64)
    index[:whole * m].reshape(whole, m)[...] = np.arange(m, dtype=index.dtype)
    index[whole * m:] = rng.choice(m, size=rest, replace=False)
    rng.shuffle(index)
    columns = np.ascontiguousarray(records.T)
    out = np.empty((columns.shape[0], int(n)), dtype=records.dtype)

    def gather(j):
        np.take(columns[j], index, out=out[j])

    if n_threads > 1 and columns.shape[0] > 1 and n >= 100_000:
        with ThreadPoolExecutor(max_workers=min(n_threads, columns.shape[0]),
                                initializer=leave_signals_to_main_thread) as executor:
            list(executor.map(gather, range(columns.shape[0])))
    else:
        for j in range(columns.shape[0]):
            gather(j)
    return out.T
