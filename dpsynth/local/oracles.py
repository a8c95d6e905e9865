"""Frequency oracles for local differential privacy: GRR, OUE and OLH.

A frequency oracle (FO) is a pair of algorithms.  The *client side*
(:meth:`perturb`) turns one user's value ``v`` in ``{0, ..., D-1}`` into one
randomised report that satisfies ``epsilon``-local differential privacy (LDP):
for every two values ``v, v'`` and every report ``y``,
``P(y | v) <= exp(epsilon) * P(y | v')``.  The *server side*
(:meth:`estimate`) turns the reports of ``n`` users into unbiased estimates of
the fraction of users holding each value, with their variance.

All three oracles follow Wang et al. (USENIX Security 2017), the reference
[37] of CALM (Zhang, Wang, Li, He, Chen, "CALM: Consistent Adaptive Local
Marginal for Marginal Release under Local Differential Privacy", CCS 2018,
Section 2.2):

* :class:`GRR` (generalised randomised response) reports a value of the
  domain: the true one with probability ``p = e^eps / (e^eps + D - 1)``, any
  other with ``q = 1 / (e^eps + D - 1)``.  Per-cell variance (at frequency 0)
  ``(D - 2 + e^eps) / ((e^eps - 1)^2 n)``.
* :class:`OUE` (optimised unary encoding) reports a bit vector of length
  ``D``: the user's bit is 1 with probability 1/2, every other bit with
  ``q = 1 / (e^eps + 1)``.  Variance ``4 e^eps / ((e^eps - 1)^2 n)``.
* :class:`OLH` (optimised local hashing) hashes the value into ``g`` buckets
  with a hash function drawn by the user and runs GRR on the bucket.  Its
  variance is OUE's (for ``g = e^eps + 1``) with a report of a few integers.

Reports are compact numpy arrays (one row or one integer per user), never
Python objects per user, and perturbation is vectorised: a million users take
well under a second for GRR/OLH.

:func:`adaptive_oracle` picks the oracle of least variance for a domain size
and ``epsilon`` (CALM, Section 2.2: GRR when ``D < 3 e^eps + 2``).
"""

import math
import numbers

import numpy as np

__all__ = ["FrequencyOracle", "GRR", "OUE", "OLH", "adaptive_oracle", "fo_variance"]

_CHUNK = 1 << 16


def _check_epsilon(epsilon):
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) \
            or not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be a finite number > 0; got {epsilon!r}.")
    return float(epsilon)


def _check_domain(domain_size):
    if isinstance(domain_size, bool) or not isinstance(domain_size, numbers.Integral) \
            or domain_size < 2:
        raise ValueError(f"domain_size must be an integer >= 2; got {domain_size!r}.")
    return int(domain_size)


def _check_values(values, domain_size):
    arr = np.asarray(values)
    if arr.ndim > 1:
        raise ValueError(f"values must be a scalar or a 1-d array; got shape {arr.shape}.")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"values must be integers; got dtype {arr.dtype}.")
    flat = np.atleast_1d(arr).astype(np.int64)
    if flat.size and (flat.min() < 0 or flat.max() >= domain_size):
        raise ValueError(f"values must be in [0, {domain_size - 1}]; got values in "
                         f"[{flat.min()}, {flat.max()}].")
    return flat, arr.ndim == 0


def _check_rng(rng):
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be a numpy Generator, a seed or None; got {type(rng).__name__}.")


def fo_variance(domain_size, epsilon, n=1):
    """Per-cell variance of the adaptive frequency oracle (CALM, eq. 3).

    ``min(4 e^eps / (e^eps - 1)^2, (D - 2 + e^eps) / (e^eps - 1)^2) / n``:
    the variance of an estimated frequency of a value held by (almost) no
    user, for the better of OUE and GRR.

    Parameters
    ----------
    domain_size : int or float
        Number of possible values ``D`` (may be an expected, non-integer
        count of cells, as in CALM's error model).
    epsilon : float
    n : int or float, default=1
        Number of reporting users.

    Returns
    -------
    float
    """
    e = math.exp(epsilon)
    return min(4 * e / (e - 1) ** 2, (domain_size - 2 + e) / (e - 1) ** 2) / n


class FrequencyOracle:
    """Base class of the frequency oracles (see the module docstring).

    Parameters
    ----------
    domain_size : int
        Number of values ``D``; values are the integers ``0 .. D-1``.
    epsilon : float
        Local privacy budget of one report.
    """

    name = None

    def __init__(self, domain_size, epsilon):
        self.domain_size = _check_domain(domain_size)
        self.epsilon = _check_epsilon(epsilon)

    def __repr__(self):
        return f"{type(self).__name__}(domain_size={self.domain_size}, epsilon={self.epsilon!r})"

    # ----------------------------------------------------------- interface
    def perturb(self, values, rng):
        """Client side: one randomised report per value (vectorised over users)."""
        raise NotImplementedError  # pragma: no cover

    def support_counts(self, reports):
        """Number of reports that *support* each value (length ``D``)."""
        raise NotImplementedError  # pragma: no cover

    @property
    def p_star(self):
        """Probability that a report supports the user's own value."""
        raise NotImplementedError  # pragma: no cover

    @property
    def q_star(self):
        """Probability that a report supports a given other value."""
        raise NotImplementedError  # pragma: no cover

    def log_probability(self, report, value):
        """``log P(report | value)`` of one report, computed exactly."""
        raise NotImplementedError  # pragma: no cover

    # ------------------------------------------------------------ estimator
    def n_reports(self, reports):
        return int(np.asarray(reports).shape[0])

    def estimate(self, reports):
        """Server side: unbiased frequency estimates from the reports.

        ``f(v) = (C(v) / n - q*) / (p* - q*)`` where ``C(v)`` is the number of
        reports supporting ``v`` (CALM, eqs. 1-2; Wang et al. 2017).

        Parameters
        ----------
        reports : ndarray
            Reports of ``n >= 1`` users, as returned by :meth:`perturb`.

        Returns
        -------
        frequencies : ndarray of shape (domain_size,)
            Unbiased estimates of the fraction of users with each value (they
            sum to 1 only in expectation for OUE/OLH, exactly for GRR, and may
            be negative).
        variance : float
            Per-cell variance at frequency 0 (:meth:`variance` with ``n``).
        """
        n = self.n_reports(reports)
        if n == 0:
            raise ValueError("reports is empty: at least one report is needed.")
        counts = self.support_counts(reports)
        freq = (counts / n - self.q_star) / (self.p_star - self.q_star)
        return freq, self.variance(n)

    def variance(self, n, frequencies=None):
        """Variance of the estimate of each value's frequency.

        Parameters
        ----------
        n : int
            Number of reports.
        frequencies : array-like, default=None
            True frequencies ``f``.  ``None`` returns the variance at ``f = 0``
            (the formula of the paper); otherwise the exact variance per value,
            ``P(1 - P) / (n (p* - q*)^2)`` with ``P = f p* + (1 - f) q*``.

        Returns
        -------
        float or ndarray
        """
        ps, qs = self.p_star, self.q_star
        if frequencies is None:
            return qs * (1 - qs) / (n * (ps - qs) ** 2)
        f = np.asarray(frequencies, dtype=float)
        prob = f * ps + (1 - f) * qs
        return prob * (1 - prob) / (n * (ps - qs) ** 2)


class GRR(FrequencyOracle):
    """Generalised randomised response (direct encoding).

    Reports are ``int64`` values in ``0 .. D-1``: the true value with
    probability ``p = e^eps / (e^eps + D - 1)``, each other value with
    ``q = 1 / (e^eps + D - 1)`` (CALM, Section 2.2; Wang et al. 2017).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsynth.local import GRR
    >>> grr = GRR(4, epsilon=1.0)
    >>> reports = grr.perturb(np.zeros(10000, dtype=int), np.random.default_rng(0))
    >>> freq, var = grr.estimate(reports)
    >>> bool(abs(freq[0] - 1) < 0.1)
    True
    """

    name = "grr"

    @property
    def p(self):
        e = math.exp(self.epsilon)
        return e / (e + self.domain_size - 1)

    @property
    def q(self):
        return 1.0 / (math.exp(self.epsilon) + self.domain_size - 1)

    p_star = p
    q_star = q

    def perturb(self, values, rng):
        """Randomise values; returns an int64 array shaped like ``values``."""
        flat, scalar = _check_values(values, self.domain_size)
        rng = _check_rng(rng)
        keep = rng.random(flat.size) < self.p
        # an other value, uniform among the D-1 values != v
        other = rng.integers(0, self.domain_size - 1, size=flat.size)
        other += other >= flat
        out = np.where(keep, flat, other)
        return out[0] if scalar else out

    def support_counts(self, reports):
        reports = np.asarray(reports, dtype=np.int64).ravel()
        return np.bincount(reports, minlength=self.domain_size).astype(float)

    def log_probability(self, report, value):
        return math.log(self.p if int(report) == int(value) else self.q)

    def all_reports(self):
        """Every possible report (for exact checks on small domains)."""
        return list(range(self.domain_size))


class OUE(FrequencyOracle):
    """Optimised unary encoding.

    The value is one-hot encoded in ``D`` bits; the 1-bit is reported as 1
    with probability 1/2 and each 0-bit is flipped to 1 with probability
    ``q = 1 / (e^eps + 1)`` (CALM, Section 2.2, which leaves ``q`` to its
    reference [37], Wang et al. 2017).  Reports are the bit vectors packed
    with :func:`numpy.packbits`: ``uint8`` arrays of shape
    ``(n, ceil(D / 8))``.
    """

    name = "oue"

    @property
    def q(self):
        return 1.0 / (math.exp(self.epsilon) + 1)

    @property
    def p_star(self):
        return 0.5

    @property
    def q_star(self):
        return self.q

    def perturb(self, values, rng):
        """Randomise values; returns packed bits of shape (n, ceil(D/8))."""
        flat, scalar = _check_values(values, self.domain_size)
        rng = _check_rng(rng)
        n_bytes = (self.domain_size + 7) // 8
        out = np.empty((flat.size, n_bytes), dtype=np.uint8)
        q = self.q
        for start in range(0, flat.size, _CHUNK):
            v = flat[start:start + _CHUNK]
            bits = rng.random((v.size, self.domain_size)) < q
            bits[np.arange(v.size), v] = rng.random(v.size) < 0.5
            out[start:start + _CHUNK] = np.packbits(bits, axis=1)
        return out[0] if scalar else out

    def unpack(self, reports):
        """Packed reports -> boolean bit matrix of shape (n, D)."""
        reports = np.atleast_2d(np.asarray(reports, dtype=np.uint8))
        return np.unpackbits(reports, axis=1, count=self.domain_size).astype(bool)

    def support_counts(self, reports):
        reports = np.atleast_2d(np.asarray(reports, dtype=np.uint8))
        counts = np.zeros(self.domain_size)
        for start in range(0, reports.shape[0], _CHUNK):
            counts += self.unpack(reports[start:start + _CHUNK]).sum(axis=0)
        return counts

    def log_probability(self, report, value):
        bits = self.unpack(report)[0]
        q = self.q
        logp = 0.0
        for i, bit in enumerate(bits):
            if i == int(value):
                logp += math.log(0.5)
            else:
                logp += math.log(q if bit else 1 - q)
        return logp

    def all_reports(self):
        """Every possible report (2^D of them; for exact checks on small D)."""
        grid = ((np.arange(2 ** self.domain_size)[:, None] >> np.arange(self.domain_size)) & 1)
        return [np.packbits(row.astype(bool))[None, :] for row in grid]


def _is_prime(x):
    if x < 2:
        return False
    return all(x % d for d in range(2, int(math.isqrt(x)) + 1))


class OLH(FrequencyOracle):
    """Optimised local hashing.

    Each user draws a hash function ``h`` from a pairwise-independent family
    onto ``{0..g-1}`` and reports ``(h, GRR_g(h(v)))``: the bucket of her value
    with probability ``p = e^eps / (e^eps + g - 1)``, another bucket with
    ``1 / (e^eps + g - 1)`` each.  A report supports every value hashed to the
    reported bucket (Wang et al. 2017, as cited by CALM Section 2.2).

    The family is ``h_{a,b}(v) = (sum_i a_i v_i + b) mod g`` over the base-``g``
    digits ``v_i`` of ``v``, with ``g`` prime and ``a_i, b`` uniform in
    ``Z_g``: two distinct values collide with probability exactly ``1/g``, so
    the estimator is exactly unbiased.  ``g`` is the prime of least variance
    near the optimum ``e^eps + 1``.  Reports are ``int64`` rows
    ``[a_0, ..., a_{r-1}, b, y]`` of shape ``(n, r + 2)``.

    Parameters
    ----------
    domain_size : int
    epsilon : float
    n_buckets : int, default=None
        A prime ``g``; ``None`` chooses it as above.
    """

    name = "olh"

    def __init__(self, domain_size, epsilon, n_buckets=None):
        super().__init__(domain_size, epsilon)
        if n_buckets is None:
            n_buckets = self._best_prime()
        elif isinstance(n_buckets, bool) or not isinstance(n_buckets, numbers.Integral) \
                or not _is_prime(int(n_buckets)):
            raise ValueError(f"n_buckets must be a prime integer; got {n_buckets!r}.")
        self.n_buckets = int(n_buckets)
        self.n_digits = max(1, math.ceil(math.log(self.domain_size) / math.log(self.n_buckets)
                                         - 1e-12))
        while self.n_buckets ** self.n_digits < self.domain_size:
            self.n_digits += 1

    def __repr__(self):
        return (f"OLH(domain_size={self.domain_size}, epsilon={self.epsilon!r}, "
                f"n_buckets={self.n_buckets})")

    def _variance_for(self, g):
        e = math.exp(self.epsilon)
        p = e / (e + g - 1)
        qs = 1.0 / g
        return qs * (1 - qs) / (p - qs) ** 2

    def _best_prime(self):
        target = math.exp(self.epsilon) + 1
        primes = [g for g in range(2, int(2 * target) + 4) if _is_prime(g)]
        return min(primes, key=self._variance_for)

    @property
    def p(self):
        e = math.exp(self.epsilon)
        return e / (e + self.n_buckets - 1)

    @property
    def p_star(self):
        return self.p

    @property
    def q_star(self):
        return 1.0 / self.n_buckets

    def _digits(self, values):
        values = np.asarray(values, dtype=np.int64)
        powers = self.n_buckets ** np.arange(self.n_digits, dtype=np.int64)
        return (values[..., None] // powers) % self.n_buckets

    def hash(self, seeds, values):
        """``h_seed(value)`` for seed rows ``[a_0..a_{r-1}, b]`` and values."""
        seeds = np.asarray(seeds, dtype=np.int64)
        return ((self._digits(values) * seeds[..., :self.n_digits]).sum(-1)
                + seeds[..., self.n_digits]) % self.n_buckets

    def perturb(self, values, rng):
        """Randomise values; returns int64 rows ``[a..., b, y]``."""
        flat, scalar = _check_values(values, self.domain_size)
        rng = _check_rng(rng)
        g = self.n_buckets
        seeds = rng.integers(0, g, size=(flat.size, self.n_digits + 1))
        bucket = self.hash(seeds, flat)
        keep = rng.random(flat.size) < self.p
        other = rng.integers(0, g - 1, size=flat.size)
        other += other >= bucket
        y = np.where(keep, bucket, other)
        out = np.concatenate([seeds, y[:, None]], axis=1)
        return out[0] if scalar else out

    def support_counts(self, reports):
        reports = np.atleast_2d(np.asarray(reports, dtype=np.int64))
        values = np.arange(self.domain_size)
        digits = self._digits(values)                       # (D, r)
        counts = np.zeros(self.domain_size)
        chunk = max(1, (1 << 22) // self.domain_size)
        for start in range(0, reports.shape[0], chunk):
            rows = reports[start:start + chunk]
            h = (rows[:, :self.n_digits] @ digits.T + rows[:, [self.n_digits]]) % self.n_buckets
            counts += (h == rows[:, [self.n_digits + 1]]).sum(axis=0)
        return counts

    def log_probability(self, report, value):
        report = np.asarray(report, dtype=np.int64).ravel()
        g = self.n_buckets
        bucket = int(self.hash(report[:self.n_digits + 1], int(value)))
        seed_prob = g ** -(self.n_digits + 1)
        e = math.exp(self.epsilon)
        p_y = self.p if bucket == int(report[-1]) else 1.0 / (e + g - 1)
        return math.log(seed_prob * p_y)

    def all_reports(self):
        """Every possible report (for exact checks on small domains)."""
        g, r = self.n_buckets, self.n_digits
        grid = np.indices((g,) * (r + 2)).reshape(r + 2, -1).T
        return list(grid)


def adaptive_oracle(domain_size, epsilon, *, large_domain="oue"):
    """The frequency oracle of least variance for a domain size and epsilon.

    GRR when ``D < 3 e^eps + 2`` (its variance ``(D - 2 + e^eps)`` is then
    below OUE's ``4 e^eps``), otherwise OUE, or OLH (same variance, reports of
    ``O(log D)`` integers instead of ``D`` bits) with ``large_domain="olh"``.
    CALM, Section 2.2 ("adaptive FO").

    Parameters
    ----------
    domain_size : int
    epsilon : float
    large_domain : {"oue", "olh"}, default="oue"

    Returns
    -------
    FrequencyOracle
    """
    domain_size = _check_domain(domain_size)
    epsilon = _check_epsilon(epsilon)
    if large_domain not in ("oue", "olh"):
        raise ValueError(f"large_domain must be 'oue' or 'olh'; got {large_domain!r}.")
    if domain_size < 3 * math.exp(epsilon) + 2:
        return GRR(domain_size, epsilon)
    return OUE(domain_size, epsilon) if large_domain == "oue" else OLH(domain_size, epsilon)
