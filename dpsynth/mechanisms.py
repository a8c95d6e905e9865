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


def percentile_utilities(values, percentile, upper):
    """Utility of each candidate ``c = 0..upper`` for the Q-th percentile.

    ``u(c) = -| #{v <= c} - Q/100 * n |``.  Adding or removing one record moves
    ``#{v <= c}`` by at most 1 and the target rank by ``Q/100``, in the same
    direction, so the sensitivity is ``max(Q, 100 - Q)/100 <= 1``; the
    mechanism uses 1 (seeds digest, section 0 item 7).  Values above ``upper``
    are counted as ``upper`` (clipping changes no record's contribution by
    more than one).
    """
    values = np.asarray(values, dtype=np.int64)
    if values.ndim != 1:
        raise ValueError("values must be 1-D.")
    if not 0 <= percentile <= 100:
        raise ValueError(f"percentile must be in [0, 100]; got {percentile}.")
    upper = int(upper)
    if upper < 0:
        raise ValueError(f"upper must be >= 0; got {upper}.")
    clipped = np.clip(values, 0, upper)
    at_most = np.cumsum(np.bincount(clipped, minlength=upper + 1))
    target = percentile / 100.0 * values.size
    return -np.abs(at_most - target)


def dp_percentile(values, percentile, upper, epsilon, rng):
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

    Returns
    -------
    int
    """
    utilities = percentile_utilities(values, percentile, upper)
    return exponential_mechanism(utilities, epsilon, rng, sensitivity=1.0)


def gaussian_noise(size, scale, rng):
    """``scale * N(0, 1)`` noise of the given size (Gaussian mechanism)."""
    return scale * rng.standard_normal(size)
