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


def denoise_censored(prior, y, released, candidate, noise, threshold):
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

    Returns
    -------
    ndarray
        Non-negative posterior means; non-candidate cells keep the prior.
    """
    out = prior.astype(float).copy()
    if noise <= 0:
        out[released] = y[released]
        return out
    rel = released & candidate
    sup = candidate & ~released
    if not (rel.any() or sup.any()):
        return out
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
    return np.maximum(out, 0.0)


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
    sweeps : int, default=5
        Passes of coordinate descent over all (record, column) pairs.
    """

    def __init__(self, aggregates, sweeps=5):
        self.aggregates = aggregates
        self.sweeps = sweeps
        encoder = aggregates.encoder
        self.offsets = encoder.offsets_.astype(np.int64)
        self.n_columns = len(encoder.n_values_)
        self.column_of = encoder.attribute_columns_
        self.absent = encoder.missing == "absent"
        # with missing="absent" every column gets one more value: the empty cell
        self.sizes = encoder.n_values_.astype(np.int64) + (1 if self.absent else 0)
        privacy = aggregates.privacy
        self.noise = float(privacy.get("noise_scales", {}).get(2, 0.0))
        self.threshold = max(float(privacy.get("thresholds", {}).get(2, 0.0)), 0.5)
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
        pair_key = columns[:, 0] * self.n_columns + columns[:, 1]
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
                                        self.noise * scale, self.threshold * scale)
            targets[(i, j)] = rake(estimate.reshape(shape), one_way[i], one_way[j])
        return targets

    # ------------------------------------------------------------ sample
    def sample(self, n, rng):
        """Codes (n, n_columns) of a population fitted to the denoised marginals.

        With ``missing="absent"`` empty cells are ``-1``.
        """
        self.aggregates.check_samplable(complete=not self.absent)
        if n == 0:
            return np.zeros((0, self.n_columns), dtype=np.int32)
        one_way = self.one_way_targets(n)
        pairs = self.two_way_targets(one_way, n)
        records = np.empty((n, self.n_columns), dtype=np.int32)
        for j, target in enumerate(one_way):
            records[:, j] = rng.choice(self.sizes[j], size=n, p=target / target.sum())
        if self.sweeps > 0 and n > 0:
            self._descend(records, one_way, pairs, rng)
        if self.absent:
            records = np.where(records == (self.sizes - 1)[None, :], -1, records)
        return records.astype(np.int32)

    def _descend(self, records, one_way, pairs, rng):
        """Greedy coordinate descent (Cython) towards the 1-way and 2-way targets."""
        d, n = self.n_columns, records.shape[0]
        sizes = self.sizes.astype(np.int32)
        one_base = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)
        chunks = [np.bincount(records[:, j], minlength=sizes[j]) - one_way[j]
                  for j in range(d)]
        base = np.full((d, d), -1, dtype=np.int64)
        step_self = np.zeros((d, d), dtype=np.int64)
        step_other = np.zeros((d, d), dtype=np.int64)
        weight = np.zeros((d, d))
        offset = int(self.sizes.sum())
        for (i, j), target in pairs.items():
            target = target * (n / max(target.sum(), 1e-12))
            current = np.bincount(records[:, i].astype(np.int64) * sizes[j] + records[:, j],
                                  minlength=target.size)
            chunks.append(current - target.ravel())
            base[i, j], step_self[i, j], step_other[i, j] = offset, sizes[j], 1
            base[j, i], step_self[j, i], step_other[j, i] = offset, 1, sizes[j]
            weight[i, j] = weight[j, i] = 1.0
            offset += target.size
        residual = np.concatenate(chunks).astype(np.float64)
        record_orders = np.array([rng.permutation(n) for _ in range(self.sweeps)],
                                 dtype=np.int64)
        column_orders = np.array([rng.permutation(d) for _ in range(self.sweeps)],
                                 dtype=np.int32)
        _matching.descend(records, residual, base, step_self, step_other, weight,
                          one_base, np.ones(d), sizes, record_orders, column_orders)
