"""Marginal-matching synthesis: denoise the DP aggregates, then fit a population to them.

The SDS aggregate-seeded sampler follows the released counts literally; on
wide tables those counts are dominated by noise (at epsilon 4 on 21 columns
the 2-way noise std is about 36 records per cell), half of the absent
combinations are fabricated, and records reach dead ends.  This module uses
the same :class:`DPAggregates` (post-processing only: no privacy cost) in
three steps.

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
   ``_core._matching``) on the squared error between the population's 1- and
   2-way counts and the targets: each visit of a (record, column) sets the
   value that lowers the error most.

Randomness (initial draws and visiting orders) comes from one
``numpy.random.Generator``, so results are reproducible.
"""

import numpy as np
from scipy.special import log_ndtr

from ._core import _matching

__all__ = ["MarginalMatcher"]

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
    rel = released & candidate
    sup = candidate & ~released
    if not (rel.any() or sup.any()):
        return (out, 0.0) if return_scale else out
    m_rel, y_rel, m_sup = prior[rel], y[rel], prior[sup]
    best, best_ll = _KAPPAS[0], -np.inf
    for kappa in _KAPPAS:  # maximise the marginal likelihood over the prior scale
        var_rel = kappa * (m_rel + 1.0) + noise**2
        var_sup = kappa * (m_sup + 1.0) + noise**2
        ll = -0.5 * np.sum(np.log(var_rel) + (y_rel - m_rel) ** 2 / var_rel)
        ll += np.sum(log_ndtr((threshold - m_sup) / np.sqrt(var_sup)))
        if ll > best_ll:
            best, best_ll = kappa, ll
    v_rel = best * (m_rel + 1.0)
    out[rel] = m_rel + v_rel / (v_rel + noise**2) * (y_rel - m_rel)
    v_sup = best * (m_sup + 1.0)
    scale = np.sqrt(v_sup + noise**2)
    z = (threshold - m_sup) / scale
    inverse_mills = np.exp(-0.5 * z**2 - log_ndtr(z)) / np.sqrt(2 * np.pi)
    out[sup] = m_sup - v_sup / scale * inverse_mills
    out = np.maximum(out, 0.0)
    return (out, best) if return_scale else out


def rake(table, row_totals, column_totals, iterations=25):
    """Iterative proportional fitting of a 2-D table to row and column totals."""
    table = np.maximum(np.asarray(table, dtype=float), 1e-9)
    for _ in range(iterations):
        table *= (row_totals / np.maximum(table.sum(axis=1), 1e-12))[:, None]
        table *= (column_totals / np.maximum(table.sum(axis=0), 1e-12))[None, :]
    return table


class MarginalMatcher:
    """Marginal-matching synthesis from one :class:`DPAggregates`.

    Parameters
    ----------
    aggregates : DPAggregates
    sweeps : int, default=3
        Passes of coordinate descent over all (record, column) pairs.
    use_three_way : bool, default=True
        Also denoise the 3-way aggregates (prior: the population fitted to
        the 1- and 2-way targets) and fit to them.
    max_population : int, default=50_000
        Larger samples are built as independent populations of at most this
        size (each fitted to the same targets), so time grows linearly with
        the number of records and memory stays bounded.
    """

    def __init__(self, aggregates, sweeps=3, use_three_way=True, max_population=50_000):
        self.aggregates = aggregates
        self.sweeps = sweeps
        self.use_three_way = use_three_way
        self.max_population = max_population
        encoder = aggregates.encoder
        self.offsets = encoder.offsets_.astype(np.int64)
        self.n_columns = len(encoder.n_values_)
        self.column_of = encoder.attribute_columns_
        self.absent = encoder.missing == "absent"
        # with missing="absent" every column gets one more value: the empty cell
        self.sizes = encoder.n_values_.astype(np.int64) + (1 if self.absent else 0)
        privacy = aggregates.privacy
        self._noise = {int(k): float(v) for k, v in privacy.get("noise_scales", {}).items()}
        self._threshold = {int(k): max(float(v), 0.5)
                           for k, v in privacy.get("thresholds", {}).items()}
        one_counts = aggregates.one_counts().astype(float)
        self.one_counts = [np.append(one_counts[self.offsets[j]:self.offsets[j + 1]],
                                     [0.0] * (1 if self.absent else 0))
                           for j in range(self.n_columns)]

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
        """Denoised 3-way tables, with the current population as the prior."""
        if len(self.aggregates.tuples) < 3 or len(self.aggregates.counts[2]) == 0:
            return {}
        tuples, counts = self.aggregates.tuples[2], self.aggregates.counts[2]
        columns = self.column_of[tuples]
        codes = tuples - self.offsets[columns]
        key = np.ravel_multi_index(columns.T, (self.n_columns,) * 3)
        order = np.argsort(key, kind="stable")
        key, codes, counts = key[order], codes[order], counts[order]
        starts = np.flatnonzero(np.r_[True, np.diff(key) != 0])
        stops = np.r_[starts[1:], key.size]
        scale = n / max(self.aggregates.n_records, 1)
        pair_released = self._released_pairs()
        targets = {}
        for start, stop in zip(starts, stops):
            cols = tuple(int(c) for c in np.unravel_index(key[start], (self.n_columns,) * 3))
            shape = tuple(int(self.sizes[c]) for c in cols)
            cells = np.ravel_multi_index(codes[start:stop].T, shape)
            y = np.zeros(int(np.prod(shape)))
            y[cells] = counts[start:stop] * scale
            released = np.zeros(y.size, dtype=bool)
            released[cells] = True
            # candidates: cells whose three 2-sub-combinations were released
            candidate = np.ones(shape, dtype=bool)
            for drop in range(3):
                sub = tuple(c for i, c in enumerate(cols) if i != drop)
                candidate &= np.expand_dims(pair_released[sub], axis=drop)
            prior = np.bincount(np.ravel_multi_index(records[:, list(cols)].T, shape),
                                minlength=y.size).astype(float)
            estimate, kappa = denoise_censored(
                prior, y, released, candidate.ravel(), self._noise[3] * scale,
                self._threshold[3] * scale, return_scale=True)
            # at the smallest prior scale the data carry no evidence against
            # the population: the target would equal it, so skip the table
            if kappa > _KAPPAS[0]:
                targets[cols] = estimate.reshape(shape)
        return targets

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

        With ``missing="absent"`` empty cells are ``-1``.
        """
        self.aggregates.check_samplable(complete=not self.absent)
        if n == 0:
            return np.zeros((0, self.n_columns), dtype=np.int32)
        n_parts = -(-n // self.max_population)
        sizes = np.full(n_parts, n // n_parts) + (np.arange(n_parts) < n % n_parts)
        # 1- and 2-way targets do not depend on the population: compute them once
        scale = max(self.aggregates.n_records, 1)
        one_way = self.one_way_targets(scale)
        targets = [((j,), t, self._weight(1)) for j, t in enumerate(one_way)]
        targets += [(cols, t, 1.0) for cols, t in self.two_way_targets(one_way, scale).items()]
        records = np.concatenate([self._population(int(size), one_way, targets, rng)
                                  for size in sizes])
        if self.absent:
            records = np.where(records == (self.sizes - 1)[None, :], -1, records)
        return records.astype(np.int32)

    def _population(self, n, one_way, targets, rng):
        """One population of ``n`` records fitted to the targets."""
        records = np.empty((n, self.n_columns), dtype=np.int32)
        for j, target in enumerate(one_way):
            records[:, j] = rng.choice(self.sizes[j], size=n, p=target / target.sum())
        self._descend(records, one_way, targets, rng)
        triples = self.three_way_targets(records, n) if self.use_three_way else {}
        if triples:
            weight = self._weight(3)
            self._descend(records, one_way,
                          targets + [(c, t, weight) for c, t in triples.items()], rng)
        return records

    def _descend(self, records, one_way, targets, rng):
        """Greedy coordinate descent (Cython) towards weighted target marginals.

        ``targets`` is a list of ``(columns, table, weight)``; tables are
        rescaled to the population size.  ``one_way`` gives the values that
        may be written.
        """
        d, n = self.n_columns, records.shape[0]
        sizes = self.sizes.astype(np.int32)
        entries = [[] for _ in range(d)]
        chunks, offset = [], 0
        for cols, table, weight in targets:
            table = table * (n / max(table.sum(), 1e-12))
            strides = [int(np.prod(table.shape[p + 1:])) for p in range(len(cols))]
            cells = np.ravel_multi_index(records[:, list(cols)].T, table.shape)
            chunks.append(np.bincount(cells, minlength=table.size) - table.ravel())
            for position, j in enumerate(cols):
                others = [(c, strides[p]) for p, c in enumerate(cols) if p != position]
                entries[j].append((offset, strides[position], weight, others))
            offset += table.size
        residual = np.concatenate(chunks).astype(np.float64)
        flat = [entry for column in entries for entry in column]
        width = max([len(e[3]) for e in flat] + [1])
        other_column = np.full((len(flat), width), -1, dtype=np.int32)
        other_step = np.zeros((len(flat), width), dtype=np.int64)
        for e, (_, _, _, others) in enumerate(flat):
            for o, (column, step) in enumerate(others):
                other_column[e, o], other_step[e, o] = column, step
        entry_start = np.concatenate([[0], np.cumsum([len(c) for c in entries])]).astype(np.int64)
        record_orders = np.array([rng.permutation(n) for _ in range(self.sweeps)],
                                 dtype=np.int64).reshape(self.sweeps, n)
        column_orders = np.array([rng.permutation(d) for _ in range(self.sweeps)],
                                 dtype=np.int32).reshape(self.sweeps, d)
        # only values with a positive 1-way target (released, or the empty cell
        # with missing="absent") may be written
        allowed = np.concatenate([target > 0 for target in one_way]).astype(np.uint8)
        value_base = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)
        self.moves_ = _matching.descend(
            records, residual, entry_start,
            np.array([e[0] for e in flat], dtype=np.int64),
            np.array([e[1] for e in flat], dtype=np.int64),
            np.array([e[2] for e in flat], dtype=np.float64),
            other_column, other_step, sizes, allowed, value_base, record_orders,
            column_orders)
