"""Differential privacy mechanisms used by dpsynth.

Privacy unit everywhere: one record (add/remove-one neighbouring tables).

- :func:`laplace_count`: the Laplace mechanism on a count (sensitivity 1).
- :func:`exponential_mechanism`: the general exponential mechanism
  (McSherry & Talwar 2007; Li et al., *Differential Privacy: From Theory to
  Practice*, section 2.3) over a finite list of candidates.
- :func:`percentile_utilities` / :func:`dp_percentile`: the Q-th percentile of
  integer values by the exponential mechanism over a **public** candidate range
  ``0..upper`` (never ``0..max(data)``, which would leak the maximum).
- :func:`gaussian_noise`: the Gaussian mechanism's noise (analysed in zCDP, see
  :mod:`dpsynth.accounting`).

Noise comes from ``numpy.random.Generator`` floating-point samplers; like
most Python DP libraries we do not defend against floating-point attacks on
the noise samplers (documented limitation).
"""

import numpy as np

__all__ = [
    "laplace_count",
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "percentile_utilities",
    "dp_percentile",
    "gaussian_noise",
    "laplace_histogram",
    "stability_threshold",
    "stable_histogram",
]


def laplace_count(count, epsilon, rng):
    """Release ``count + Laplace(1/epsilon)``: epsilon-DP for a sensitivity-1 count."""
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0; got {epsilon}.")
    return float(count) + rng.laplace(0.0, 1.0 / epsilon)


def exponential_mechanism_probabilities(utilities, epsilon, sensitivity=1.0):
    """Exact output distribution of the exponential mechanism.

    ``P[i] ∝ exp(epsilon * utilities[i] / (2 * sensitivity))``, computed stably.
    """
    utilities = np.asarray(utilities, dtype=np.float64)
    if utilities.ndim != 1 or utilities.size == 0:
        raise ValueError("utilities must be a non-empty 1-D array.")
    if not epsilon > 0 or not sensitivity > 0:
        raise ValueError("epsilon and sensitivity must be > 0.")
    logits = utilities * (epsilon / (2.0 * sensitivity))
    logits -= logits.max()
    weights = np.exp(logits)
    return weights / weights.sum()


def exponential_mechanism(utilities, epsilon, rng, sensitivity=1.0):
    """Index of one candidate drawn by the exponential mechanism (epsilon-DP)."""
    probabilities = exponential_mechanism_probabilities(utilities, epsilon, sensitivity)
    return int(rng.choice(probabilities.size, p=probabilities))


def percentile_utilities(values, percentile, upper, weights=None):
    """Utility of each candidate ``c = 0..upper`` for the Q-th percentile.

    ``u(c) = -| #{v <= c} - Q/100 * n |``.  Adding or removing one record moves
    ``#{v <= c}`` by at most 1 and the target rank by ``Q/100``, in the same
    direction, so the sensitivity is ``max(Q, 100 - Q)/100 <= 1``; the
    mechanism uses 1 (seeds digest, section 0 item 7).  Values above ``upper``
    are counted as ``upper`` (clipping changes no record's contribution by
    more than one).  ``weights`` (non-negative integers) makes value ``i``
    stand for ``weights[i]`` records, e.g. a histogram summed over partitions.
    """
    values = np.asarray(values, dtype=np.int64)
    if values.ndim != 1:
        raise ValueError("values must be 1-D.")
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != values.shape or np.any(weights < 0):
            raise ValueError("weights must be non-negative, one per value.")
    if not 0 <= percentile <= 100:
        raise ValueError(f"percentile must be in [0, 100]; got {percentile}.")
    upper = int(upper)
    if upper < 0:
        raise ValueError(f"upper must be >= 0; got {upper}.")
    clipped = np.clip(values, 0, upper)
    if weights is None:
        at_most = np.cumsum(np.bincount(clipped, minlength=upper + 1))
        n = values.size
    else:  # integer counts in float64: exact, so the same utilities as repeated values
        at_most = np.cumsum(np.bincount(clipped, weights=weights, minlength=upper + 1))
        n = float(weights.sum())
    target = percentile / 100.0 * n
    return -np.abs(at_most - target)


def dp_percentile(values, percentile, upper, epsilon, rng, weights=None):
    """epsilon-DP Q-th percentile of non-negative integers, candidates ``0..upper``.

    Parameters
    ----------
    values : array-like of int
        One value per record (e.g. the number of k-tuples of each record).
    percentile : float
        Q in [0, 100].
    upper : int
        Public upper end of the candidate range (e.g. ``C(n_columns, k)``).
    epsilon : float
        Privacy budget of this call (pure epsilon-DP).
    rng : numpy.random.Generator
    weights : array-like of int, default=None
        Records each value stands for (see :func:`percentile_utilities`).

    Returns
    -------
    int
    """
    utilities = percentile_utilities(values, percentile, upper, weights)
    return exponential_mechanism(utilities, epsilon, rng, sensitivity=1.0)


def gaussian_noise(size, scale, rng):
    """``scale * N(0, 1)`` noise of the given size (Gaussian mechanism)."""
    return scale * rng.standard_normal(size)


def dp_quantile_probabilities(values, quantile, bounds, epsilon):
    """Exact output distribution of :func:`dp_quantile`.

    The output of the mechanism is a continuous value in ``bounds``; its
    density is piecewise constant between the sorted (clipped) data points.
    This function returns those pieces and the probability of each, so the
    distribution can be checked exactly (e.g. the ``e^epsilon`` ratio between
    neighbouring datasets).

    Parameters
    ----------
    values : array-like of float of shape (n,)
        One value per record, without missing values.
    quantile : float
        Target quantile ``q`` in [0, 1].
    bounds : (float, float)
        Public range ``(lo, hi)`` with ``lo < hi``; values are clipped to it.
    epsilon : float
        Privacy budget (pure epsilon-DP).

    Returns
    -------
    points : ndarray of shape (n + 2,)
        ``lo``, the sorted clipped values, ``hi``.  Piece ``i`` is the interval
        ``[points[i], points[i + 1])``.
    probabilities : ndarray of shape (n + 1,)
        Probability that the output falls in piece ``i``; within a piece the
        output is uniform.

    Notes
    -----
    Every ``x`` in piece ``i`` has exactly ``i`` data points at or below it
    (ties give empty pieces), so its utility is ``u_i = -|i - q n|``.  Adding or
    removing one record changes ``i`` by at most 1 and ``q n`` by ``q`` in the
    same direction, so the sensitivity is ``max(q, 1 - q) <= 1``; we use 1.
    Piece ``i`` is chosen with probability proportional to
    ``length_i * exp(epsilon * u_i / 2)``: the exponential mechanism with the
    base measure of the real line (Smith 2011, "Privacy-preserving statistical
    estimation with optimal convergence rates", STOC; Li et al., *Differential
    Privacy: From Theory to Practice*, section 2.3).  The density at any point
    changes by at most ``e^(epsilon/2)`` between neighbours and so does the
    normaliser, hence epsilon-DP.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError("values must be 1-D.")
    if np.isnan(values).any():
        raise ValueError("values must not contain NaN; drop missing values first.")
    if not 0.0 <= quantile <= 1.0:
        raise ValueError(f"quantile must be in [0, 1]; got {quantile}.")
    lo, hi = (float(b) for b in bounds)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds must be finite with lo < hi; got {bounds}.")
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0; got {epsilon}.")
    points = np.concatenate([[lo], np.sort(np.clip(values, lo, hi)), [hi]])
    lengths = np.diff(points)
    utilities = -np.abs(np.arange(lengths.size) - quantile * values.size)
    with np.errstate(divide="ignore"):
        log_weights = np.log(lengths) + (epsilon / 2.0) * utilities
    log_weights -= log_weights.max()
    weights = np.exp(log_weights)
    return points, weights / weights.sum()


def dp_quantile(values, quantile, bounds, epsilon, rng):
    """epsilon-DP ``quantile`` of continuous values within public ``bounds``.

    The exponential mechanism over the intervals between sorted clipped data
    points (Smith 2011): pick an interval with probability proportional to
    ``length * exp(epsilon * utility / 2)``, then a uniform point inside it.
    See :func:`dp_quantile_probabilities` for the distribution and the proof
    sketch.  The result always lies in ``[lo, hi]``.

    Parameters
    ----------
    values : array-like of float of shape (n,)
    quantile : float
        In [0, 1].
    bounds : (float, float)
        Public ``(lo, hi)``: never derived from the data.
    epsilon : float
        Privacy budget of this call.
    rng : numpy.random.Generator

    Returns
    -------
    float
    """
    points, probabilities = dp_quantile_probabilities(values, quantile, bounds, epsilon)
    i = int(rng.choice(probabilities.size, p=probabilities))
    return float(min(rng.uniform(points[i], points[i + 1]), points[-1]))


def dp_quantiles(values, quantiles, bounds, epsilon, rng):
    """Several epsilon-DP quantiles, sorted, with ``epsilon`` split evenly.

    Each of the ``m`` quantiles is released by :func:`dp_quantile` with
    ``epsilon / m``; by basic composition the whole call is epsilon-DP.
    Sorting the results is post-processing.

    Parameters
    ----------
    values : array-like of float of shape (n,)
    quantiles : array-like of float of shape (m,)
        Targets in [0, 1].
    bounds : (float, float)
    epsilon : float
        Total budget of the call.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (m,)
    """
    quantiles = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    if quantiles.size == 0:
        return np.empty(0)
    share = epsilon / quantiles.size
    return np.sort([dp_quantile(values, q, bounds, share, rng) for q in quantiles])


__all__ += ["dp_quantile_probabilities", "dp_quantile", "dp_quantiles"]


def stability_threshold(epsilon, delta):
    """Threshold of the Laplace stability-based histogram: ``1 + ln(1 / (2 delta)) / epsilon``.

    A value held by a single record gets the noisy count ``1 + Lap(1/epsilon)``,
    which exceeds this threshold with probability exactly
    ``exp(-(t - 1) epsilon) / 2 = delta``.
    """
    return 1.0 + np.log(1.0 / (2.0 * delta)) / epsilon


def stable_histogram(values, epsilon, delta, rng):
    """Frequent exact values by the Laplace stability-based histogram.

    Every distinct value of ``values`` gets its count plus ``Lap(1/epsilon)``
    noise; the values whose noisy count exceeds :func:`stability_threshold`
    are released with their noisy counts.  With add/remove-one neighbours a
    record changes one count by one: if its value is held by others too,
    that is the Laplace mechanism (``epsilon``); if it is its own, the value
    appears with probability at most ``delta``.  The whole release is
    ``(epsilon, delta)``-DP (Korolova et al., WWW 2009; Bun, Nissim and
    Stemmer, "Simultaneous private learning of multiple concepts", 2016; Li
    et al., *Differential Privacy: From Theory to Practice*, 2016).  Each
    record must contribute at most one value.

    Parameters
    ----------
    values : array-like of float
        One value per record (missing values removed).
    epsilon, delta : float
    rng : numpy.random.Generator

    Returns
    -------
    released : ndarray of float64
        Values above the threshold, sorted.
    noisy_counts : ndarray of float64
        Their noisy counts.
    """
    observed, counts = np.unique(np.asarray(values, dtype=np.float64), return_counts=True)
    noisy = counts + rng.laplace(0.0, 1.0 / epsilon, size=counts.size)
    keep = noisy > stability_threshold(epsilon, delta)
    return observed[keep], noisy[keep]


def laplace_histogram(bin_index, n_bins, epsilon, rng):
    """Counts of ``bin_index`` over ``n_bins`` public bins with ``Lap(1/epsilon)`` noise.

    One record falls in one bin (sensitivity 1): ``epsilon``-DP.  Negative
    noisy counts are set to zero (post-processing).
    """
    counts = np.bincount(np.asarray(bin_index, dtype=np.int64), minlength=n_bins)
    noisy = counts + rng.laplace(0.0, 1.0 / epsilon, size=n_bins)
    return np.maximum(noisy, 0.0)
