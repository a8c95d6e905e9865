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
- :func:`discrete_gaussian` / :func:`discrete_laplace`: exact integer noise
  (Canonne, Kamath & Steinke, NeurIPS 2020), sampled with integer arithmetic
  in :mod:`dpsynth._core._noise`; :func:`gaussian_measure` and
  :func:`laplace_measure` add it (``noise="discrete"``, the default) or the
  floating-point noise of ``numpy`` (``noise="continuous"``) to counts.

With ``noise="discrete"`` no released value depends on floating-point noise:
integer queries get integer noise, drawn exactly from random bits, so the
attacks on floating-point samplers (Mironov 2012) do not apply.  The
continuous samplers remain for comparison.
"""

from fractions import Fraction
from functools import lru_cache
import math

import numpy as np
from scipy.special import ndtr, ndtri

from ._core import _noise

__all__ = [
    "laplace_count",
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "exponential_mechanism_exact",
    "l1_score_numerators",
    "percentile_utilities",
    "dp_percentile",
    "gaussian_noise",
    "laplace_histogram",
    "stability_threshold",
    "stable_histogram",
    "NOISES",
    "check_noise",
    "discrete_gaussian",
    "discrete_gaussian_multiples",
    "discrete_laplace",
    "dyadic_variance",
    "discrete_gaussian_mu",
    "discrete_gaussian_scale",
    "discrete_gaussian_tail",
    "gaussian_measure",
    "laplace_measure",
    "mechanism_name",
]

#: Noise kinds: exact integer noise (default) or numpy's floating-point noise.
NOISES = ("discrete", "continuous")


def check_noise(noise):
    """``noise`` if it is ``"discrete"`` or ``"continuous"``, else a ``ValueError``."""
    if not isinstance(noise, str) or noise not in NOISES:
        raise ValueError(f"noise must be 'discrete' (exact integer noise, the default) or "
                         f"'continuous' (numpy floating-point noise); got {noise!r}.")
    return noise


def mechanism_name(kind, noise):
    """Ledger name of a ``"gaussian"`` or ``"laplace"`` mechanism under ``noise``."""
    return f"discrete_{kind}" if check_noise(noise) == "discrete" else kind


def laplace_count(count, epsilon, rng, noise="continuous"):
    """Release ``count + Laplace(1/epsilon)``: epsilon-DP for a sensitivity-1 count.

    ``noise="discrete"``: the integer count plus discrete Laplace noise of
    scale ``1/epsilon`` (the geometric mechanism, also epsilon-DP).
    """
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0; got {epsilon}.")
    if check_noise(noise) == "discrete":
        return float(laplace_measure(np.array([count]), epsilon, rng, noise)[0])
    return float(count) + rng.laplace(0.0, 1.0 / epsilon)


# ------------------------------------------------------ exact integer noise
def _bits(rng):
    return _noise.BitSource(np.random.default_rng(rng).bit_generator)


def _floor_log2(value):
    """``floor(log2(value))`` of a positive Fraction, exactly."""
    l = value.numerator.bit_length() - value.denominator.bit_length()
    if Fraction(2) ** l > value:
        l -= 1
    elif Fraction(2) ** (l + 1) <= value:
        l += 1
    return l


def dyadic_variance(sigma, bits=24):
    """``sigma**2`` rounded **up** to ``S * 2**e`` with ``S`` of at most ``bits`` bits.

    Returns ``(S, e, tau)`` with ``t = 2**tau`` the smallest power of two
    ``>= sigma`` (the discrete Laplace proposal of the sampler).  The float
    ``sigma`` is read exactly (``Fraction``); rounding up adds at most a
    relative ``2**(1 - bits)`` to the variance, so the noise is never smaller
    than asked and the accounting at ``sigma`` stays valid.  Below
    ``sigma = 1`` fewer bits keep the sampler's denominators within 62 bits.
    """
    if not (isinstance(sigma, (int, float, np.floating, np.integer)) and math.isfinite(sigma)
            and sigma > 0):
        raise ValueError(f"sigma must be a finite number > 0; got {sigma!r}.")
    variance = Fraction(float(sigma)) ** 2
    l = _floor_log2(variance)
    e = l + 1 - bits
    if l < 0:  # den = S 2**(1 - e) ~ variance 2**(1 - 2e) must stay below 2**61
        e = max(e, (l - 58) // 2 + 1)
    S = math.ceil(variance / Fraction(2) ** e)
    rounded = S * Fraction(2) ** e
    tau = 0
    while Fraction(4) ** tau < rounded:
        tau += 1
    return S, e, tau


def discrete_gaussian(size, sigma, rng):
    """Exact draws of the discrete Gaussian ``P(y) ∝ exp(-y**2 / (2 sigma**2))`` on the integers.

    ``sigma**2`` is rounded up to a dyadic rational (:func:`dyadic_variance`);
    every draw is exact for that variance (Canonne, Kamath & Steinke 2020,
    Algorithm 3, in :mod:`dpsynth._core._noise`).  ``sigma`` may be an array
    broadcast to ``size`` (one scale per draw).  Random bits come from
    ``rng``'s bit generator in a fixed order, so a seeded ``rng`` reproduces
    the draws.

    Returns
    -------
    ndarray of int64 of shape ``size``
    """
    shape = (size,) if np.isscalar(size) else tuple(size)
    sigmas = np.broadcast_to(np.asarray(sigma, dtype=np.float64), shape).ravel()
    out = np.empty(sigmas.size, dtype=np.int64)
    if out.size:
        unique, inverse = np.unique(sigmas, return_inverse=True)
        params = np.array([dyadic_variance(float(s)) for s in unique], dtype=object)
        S = np.array([p[0] for p in params], dtype=np.uint64)[inverse]
        e = np.array([p[1] for p in params], dtype=np.int64)[inverse]
        tau = np.array([p[2] for p in params], dtype=np.int64)[inverse]
        _noise.discrete_gaussian(_bits(rng), out, np.ascontiguousarray(S), np.ascontiguousarray(e),
                                 np.ascontiguousarray(tau))
    return out.reshape(shape)


def discrete_gaussian_multiples(sigma, multiples, rng):
    """Exact discrete Gaussian draws of variance ``sigma**2 * multiples[i]``, one per entry.

    ``multiples`` are positive integers (e.g. the squared norms of an
    integer basis): ``sigma**2`` is rounded up once to ``S * 2**e``
    (:func:`dyadic_variance`) and each ``S * multiples[i]`` is exact in
    64-bit integers, then rounded up to 24 significant bits, so every
    variance is at least the asked one, without a rational per entry.

    Returns
    -------
    ndarray of int64 of the shape of ``multiples``
    """
    multiples = np.asarray(multiples)
    if multiples.dtype.kind not in "iu" or (multiples.size and multiples.min() < 1):
        raise ValueError("multiples must be positive integers.")
    S0, e0, _ = dyadic_variance(sigma)
    flat = multiples.astype(np.uint64).ravel()
    if flat.size and int(flat.max()) >= 2**63 // S0:
        return discrete_gaussian(multiples.shape, sigma * np.sqrt(multiples.astype(float)),
                                 rng)
    product = flat * np.uint64(S0)
    length = np.floor(np.log2(product.astype(np.float64))).astype(np.int64) + 1
    # exact bit lengths (the float log can be one off near powers of two)
    too_long = (product >> np.maximum(length - 1, 0).astype(np.uint64)) > 1
    length[too_long] += 1
    too_short = (length > 0) & ((product >> np.maximum(length - 1, 0).astype(np.uint64)) == 0)
    length[too_short] -= 1
    shift = np.maximum(length - 24, 0)
    S = (product + ((np.uint64(1) << shift.astype(np.uint64)) - np.uint64(1))) >> shift.astype(
        np.uint64)
    e = e0 + shift
    bits = np.floor(np.log2(S.astype(np.float64))).astype(np.int64) + 2  # >= bit length of S
    tau = np.maximum((bits + e + 1) // 2, 0)   # 4**tau >= 2**(bits + e) > S 2**e
    out = np.empty(flat.size, dtype=np.int64)
    if out.size:
        _noise.discrete_gaussian(_bits(rng), out, np.ascontiguousarray(S), np.ascontiguousarray(e),
                                 np.ascontiguousarray(tau))
    return out.reshape(multiples.shape)


def discrete_laplace(size, scale, rng):
    """Exact draws of the discrete Laplace ``P(y) ∝ exp(-|y| / scale)`` on the integers.

    ``scale`` is rounded up to ``t / 2**m`` with ``t`` an integer of about 31
    bits (never less noise than asked); CKS20 Algorithm 2.  The discrete
    Laplace mechanism of scale ``Delta / epsilon`` is epsilon-DP for integer
    queries of L1 sensitivity ``Delta`` (the geometric mechanism, Ghosh,
    Roughgarden & Sundararajan 2009).

    Returns
    -------
    ndarray of int64 of shape ``size``
    """
    if not (isinstance(scale, (int, float, np.floating, np.integer)) and math.isfinite(scale)
            and 0 < scale <= 2.0**60):
        raise ValueError(f"scale must be a finite number in (0, 2**60]; got {scale!r}.")
    exact = Fraction(float(scale))
    m = max(0, 31 - max(_floor_log2(exact), 0))
    t = math.ceil(exact * 2**m)
    shape = (size,) if np.isscalar(size) else tuple(size)
    out = np.empty(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)
    if out.size:
        _noise.discrete_laplace(_bits(rng), out, t, 2**m)
    return out.reshape(shape)


def _normaliser(sigma):
    """``sum_y exp(-y**2 / (2 sigma**2))`` over the integers, to double precision."""
    if sigma < 1.0:  # a few terms
        y = np.arange(1, int(40 * sigma) + 12, dtype=np.float64)
        return 1.0 + 2.0 * math.fsum(np.exp(-y * y / (2.0 * sigma * sigma)))
    # Poisson summation: sqrt(2 pi) sigma (1 + 2 sum_j exp(-2 pi^2 sigma^2 j^2)); j <= 3
    # leaves less than exp(-2 pi^2 16) < 1e-137 out
    theta = sum(math.exp(-2.0 * math.pi**2 * sigma**2 * j * j) for j in (1, 2, 3))
    return math.sqrt(2.0 * math.pi) * sigma * (1.0 + 2.0 * theta)


def _center_cdf(sigma, k):
    """``P[Y <= k]`` of the discrete Gaussian ``N_Z(0, sigma**2)`` for small ``|k|``."""
    total = _normaliser(sigma)
    if k >= 0:
        tail = math.fsum(math.exp(-v * v / (2.0 * sigma * sigma)) for v in range(1, k + 1))
        return 0.5 + (0.5 + tail) / total
    return 1.0 - _center_cdf(sigma, -k - 1)


def discrete_gaussian_mu(sigma, sensitivity=1):
    """Gaussian-DP ``mu`` of the discrete Gaussian mechanism of integer ``sensitivity``.

    The pair ``N_Z(0, sigma**2)``, ``N_Z(Delta, sigma**2)`` has a monotone
    likelihood ratio, so its trade-off function is the piecewise-linear curve
    through the threshold tests ``(P[Y >= k], P[Y <= k - 1 - Delta])``; the
    Gaussian trade-off ``G_mu`` is convex, so it lies below the curve exactly
    when it does at those kinks, i.e. for
    ``mu = sup_k Phi^-1(F(k)) - Phi^-1(F(k - Delta))`` (``F`` the CDF).
    The supremum is at the symmetric kink (``k = floor((Delta - 1) / 2)``),
    which is computed here.  Checked numerically in the tests against every
    kink within ``20 sigma`` and a grid of kinks out to ``40 sigma**2``: far
    in the tail (``|k| ~ 4.5 sigma**2``) the slope rises above ``Delta /
    sigma`` again, by a relative ``~0.025 / sigma**2`` to first order, below
    the central ``~1 / (24 sigma**2)``, and tends to ``Delta / sigma``.  It exceeds the continuous ``Delta / sigma`` by a relative
    ``~1/(24 sigma**2)``: the discrete Gaussian is *not* exactly
    ``Delta/sigma``-GDP, hence :func:`discrete_gaussian_scale`.
    """
    if not (math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be a finite number > 0; got {sigma!r}.")
    delta = int(sensitivity)
    if delta != sensitivity or delta < 1:
        raise ValueError(f"sensitivity must be a positive integer; got {sensitivity!r}.")
    k = (delta - 1) // 2
    return float(ndtri(_center_cdf(sigma, k)) - ndtri(_center_cdf(sigma, k - delta)))


def discrete_gaussian_scale(sigma):
    """Smallest discrete Gaussian scale that is ``1/sigma``-GDP at sensitivity 1 (to 1e-12).

    The discrete Gaussian of scale ``sigma`` is about ``(1 + 1/(24
    sigma**2)) / sigma``-GDP (:func:`discrete_gaussian_mu`); this returns the
    slightly larger scale whose exact ``mu`` is ``1/sigma``, so that a
    measurement accounted as the continuous Gaussian of ``sigma`` (``mu =
    1/sigma``, ``rho = 1/(2 sigma**2)``) keeps its guarantee.  Its zCDP
    ``1/(2 scale**2)`` (Canonne, Kamath & Steinke 2020, Thm 4) is below the
    continuous one.  For integer sensitivity ``Delta``, ``mu`` is at most
    ``Delta`` times the sensitivity-1 ``mu`` (tested), so the same scale
    serves every integer shift of L2 norm ``Delta``.
    """
    if not (math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be a finite number > 0; got {sigma!r}.")
    return _calibrated_scale(float(sigma))


@lru_cache(maxsize=4096)
def _calibrated_scale(sigma):
    target = 1.0 / sigma
    if sigma >= 1.0:  # fixed point of s -> s sigma mu(s): contracts by ~1/(12 s**2) a step
        scale = sigma * (1.0 + 1.0 / (24.0 * sigma**2))
        for _ in range(8):
            scale *= discrete_gaussian_mu(scale) * sigma
        for _ in range(8):  # the last ulps: on the safe side
            if discrete_gaussian_mu(scale) <= target:
                return scale
            scale *= 1.0 + 1e-13
    lo, hi = sigma, sigma * (1.0 + 0.1 / sigma**2) + 0.5  # mu(hi) < 1/sigma (excess ~1/24)
    while discrete_gaussian_mu(hi) > target:
        hi = 2.0 * hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if discrete_gaussian_mu(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi


def discrete_gaussian_tail(threshold, sigma):
    """Upper bound on ``P[Y >= threshold]`` for ``Y ~ N_Z(0, sigma**2)``: ``P[N(0, sigma**2) >= threshold - 1]``.

    For ``y >= threshold >= 1``, ``exp(-y**2/(2 sigma**2))`` is at most the
    integral of the Gaussian density over ``[y - 1, y]`` and the normaliser
    is at least ``sqrt(2 pi) sigma`` (Poisson summation), so thresholds set
    for the continuous Gaussian stay valid one count higher.
    """
    return float(ndtr(-(threshold - 1.0) / sigma))


def _integer_valued(values, what="values"):
    values = np.asarray(values)
    if values.dtype.kind in "iub":
        return values.astype(np.int64)
    rounded = np.rint(values)
    if not np.array_equal(rounded, values):
        raise ValueError(f"discrete noise needs integer {what}; use noise='continuous' for "
                         "real-valued queries.")
    return rounded.astype(np.int64)


def gaussian_measure(values, sigma, rng, noise="discrete"):
    """``values`` plus Gaussian noise accounted as ``1/sigma``-GDP per unit shift.

    ``noise="discrete"``: ``values`` must be integers (counts); the noise is
    the discrete Gaussian of scale :func:`discrete_gaussian_scale`
    ``(sigma)``, drawn exactly.  ``"continuous"``: ``N(0, sigma**2)`` from
    numpy.  ``sigma`` may be an array (one scale per value).

    Returns
    -------
    noisy : ndarray of float64
    scale : float or ndarray
        The noise scale drawn (its square bounds the noise variance).
    """
    if check_noise(noise) == "continuous":
        values = np.asarray(values, dtype=np.float64)
        return values + rng.normal(0.0, sigma, size=values.shape), sigma
    integers = _integer_valued(values)
    sigma_arr = np.asarray(sigma, dtype=np.float64)
    if sigma_arr.ndim == 0:
        scale = discrete_gaussian_scale(float(sigma_arr))
    else:
        unique, inverse = np.unique(sigma_arr, return_inverse=True)
        scale = np.array([discrete_gaussian_scale(float(s)) for s in unique])[inverse]
        scale = scale.reshape(sigma_arr.shape)
    noise_draws = discrete_gaussian(integers.shape, scale, rng)
    return (integers + noise_draws).astype(np.float64), scale


def laplace_measure(values, epsilon, rng, noise="discrete", sensitivity=1.0):
    """``values`` plus Laplace noise of scale ``sensitivity / epsilon`` (epsilon-DP in L1).

    ``noise="discrete"``: integer ``values`` and integer ``sensitivity`` get
    the discrete Laplace (geometric) noise, drawn exactly;
    ``"continuous"``: numpy's Laplace.
    """
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0; got {epsilon}.")
    scale = float(sensitivity) / float(epsilon)
    if check_noise(noise) == "continuous":
        values = np.asarray(values, dtype=np.float64)
        return values + rng.laplace(0.0, scale, size=values.shape)
    integers = _integer_valued(values)
    return (integers + discrete_laplace(integers.shape, scale, rng)).astype(np.float64)


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


def _exact_numerators(utilities, denominator):
    """``(numerators, denominator)`` with ``utilities[i] == numerators[i] / denominator`` exactly.

    ``denominator`` given: ``utilities`` must already be integers.  Else
    integers pass as they are, floats are read exactly (each is a dyadic
    rational) and ``Fraction`` objects over their common denominator.
    """
    values = np.asarray(utilities)
    if values.ndim != 1 or values.size == 0:
        raise ValueError("utilities must be a non-empty 1-D array.")
    if denominator is not None:
        denominator = int(denominator)
        if denominator < 1:
            raise ValueError(f"denominator must be a positive integer; got {denominator}.")
        if values.dtype.kind in "iu":
            return values.astype(np.int64), denominator
        if values.dtype == object and all(isinstance(v, (int, np.integer)) for v in values):
            return values, denominator
        raise ValueError("utilities given with a denominator must be integers.")
    if values.dtype.kind in "iub":
        return values.astype(np.int64), 1
    if values.dtype.kind == "f":
        values = values.astype(np.float64)
        if not np.isfinite(values).all():
            raise ValueError("utilities must be finite.")
        mantissa, exponent = np.frexp(values)  # v = M 2**(e - 53), M an exact 53-bit integer
        whole = (mantissa * 2.0**53).astype(np.int64)
        exponent = exponent.astype(np.int64) - 53
        low = int(exponent[whole != 0].min()) if (whole != 0).any() else 0
        shift = np.where(whole != 0, exponent - low, 0)
        if low >= 0:  # integers: their own numerators over 1
            shift, low = shift + low, 0
        if int(shift.max()) <= 8:  # numerators within 62 bits
            return whole << shift, 2**(-low)
        return np.array([int(w) << int(t) for w, t in zip(whole, shift)], dtype=object), 2**(-low)
    elif values.dtype == object:
        fractions = [Fraction(v) for v in values]
    else:
        raise ValueError(f"utilities must be numbers; got dtype {values.dtype}.")
    common = math.lcm(*(f.denominator for f in fractions))
    return (np.array([f.numerator * (common // f.denominator) for f in fractions],
                     dtype=object), common)


def exponential_mechanism_exact(utilities, epsilon, rng, sensitivity=1, denominator=None):
    """Exact draw of the exponential mechanism on exact (rational) utilities.

    ``P[i] ∝ exp(epsilon u_i / (2 sensitivity))`` with ``u_i =
    utilities[i] / denominator`` (or ``utilities[i]`` read exactly: integers,
    floats as the dyadic rationals they are, ``Fraction``); ``epsilon`` and
    ``sensitivity`` are read exactly too.  The exponents ``x_i = epsilon
    (max u - u_i) / (2 sensitivity)`` are exact fractions over one
    denominator and the index is drawn by rejection from the uniform
    proposal with ``Bernoulli(exp(-x_i))`` acceptance, in integer arithmetic
    on random bits (Canonne, Kamath & Steinke 2020, Algorithm 1;
    :func:`dpsynth._core._noise.exponential_select`): no floating point is
    involved in the draw, so the attacks on floating-point samplers do not
    apply (a floating-point estimate of each exponent only chooses how many
    ``Bernoulli(exp(-1))`` draws come first, on the safe side).  Same
    mechanism, same ``epsilon``-DP (and ``epsilon**2 / 8``-zCDP, bounded
    range) as :func:`exponential_mechanism` with ``noise="continuous"``.
    Equal utilities are evaluated once.  The
    running time depends on the utilities (a timing channel, see the privacy
    page), the output does not depend on anything else.

    Returns
    -------
    int
    """
    numerators, denominator = _exact_numerators(utilities, denominator)
    eps = Fraction(float(epsilon)) if not isinstance(epsilon, Fraction) else epsilon
    sens = (Fraction(float(sensitivity)) if not isinstance(sensitivity, (int, Fraction))
            else Fraction(sensitivity))
    if not (eps > 0 and sens > 0):
        raise ValueError("epsilon and sensitivity must be > 0.")
    values, index = np.unique(numerators, return_inverse=True)
    factor = eps / (2 * sens * denominator)  # x = factor * (max - numerator)
    top = values[-1]
    if values.dtype.kind == "i" and int(top) - int(values[0]) < 2**62:
        gaps = top - values  # int64, no overflow
    else:
        gaps = np.array([int(top) - int(v) for v in values], dtype=object)
    # integer lower bounds of the exponents (floating point, on the safe side: 1e-12
    # relative covers the rounding of the float product; the exact test is in integers)
    if gaps.dtype == object or not 1e-300 < float(factor) < 1e300:
        lower = np.array([min(int(g) * factor.numerator // factor.denominator, 2**62)
                          for g in gaps], dtype=np.uint64)
    else:
        approx = gaps.astype(np.float64) * float(factor) * (1.0 - 1e-12)
        lower = np.floor(np.minimum(approx, 2.0**62)).astype(np.uint64)
    return int(_noise.exponential_select(_bits(rng), gaps, factor.numerator, factor.denominator,
                                  lower, np.ascontiguousarray(index.ravel(), dtype=np.int64)))


def exponential_mechanism(utilities, epsilon, rng, sensitivity=1.0, noise="continuous",
                          denominator=None):
    """Index of one candidate drawn by the exponential mechanism (epsilon-DP).

    ``P[i] ∝ exp(epsilon * utilities[i] / (2 * sensitivity))``.
    ``noise="discrete"``: drawn exactly (:func:`exponential_mechanism_exact`,
    the utilities read as exact rationals, ``utilities / denominator`` when a
    ``denominator`` is given); ``"continuous"``: by ``rng.choice`` on the
    floating-point probabilities.
    """
    if check_noise(noise) == "discrete":
        return exponential_mechanism_exact(utilities, epsilon, rng, sensitivity, denominator)
    if denominator is not None:
        utilities = np.asarray(utilities, dtype=np.float64) / float(denominator)
    probabilities = exponential_mechanism_probabilities(utilities, epsilon, sensitivity)
    return int(rng.choice(probabilities.size, p=probabilities))


def l1_score_numerators(distance, data, population, scale, base, weights, offsets, magnitude,
                        cache=None):
    """Scores ``w_r (||data_r - s population_r||_1 - offsets_r)`` as exact rationals ``U_r / 2**b``.

    The exact utilities of :func:`exponential_mechanism_exact` for a
    selection on L1 distances (the workload release's): ``data`` and
    ``population`` hold integer counts of every table (table ``r`` is
    ``base[r]:base[r + 1]``), ``scale`` (public) is read as ``s = a /
    2**b``, the nearest such dyadic rational, with ``b`` chosen from the
    public ``magnitude`` (an estimate of the counts' total) so that
    ``2**b`` times the distances stays below ``2**53``.  Then ``2**b`` times
    a table's distance is an integer that ``distance(data * 2**b,
    population, a)`` (a floating-point L1 kernel, e.g.
    ``TableShards.distance``) computes exactly: every product, difference
    and partial sum is an integer below ``2**53``, which is checked; if a
    count is larger than ``magnitude`` suggests, the same integers are
    computed in 64-bit (or Python) integers instead.  The public
    ``offsets`` (a float per table, data-independent) are rounded to the
    grid ``2**-b``.  One record more changes one cell of each table by one:
    ``U_r`` by at most ``w_r 2**b``, i.e. the score by at most ``w_r``,
    exactly, whatever rounding happened before.  ``cache`` (a dict the
    caller keeps while ``data`` is the same) holds ``data`` scaled by
    ``2**b`` between calls, as repeated selections score the same counts.

    Returns
    -------
    numerators : ndarray of int64 or object
    denominator : int
        ``2**b``.
    """
    weights = _integer_valued(weights, "weights")
    bits = int(min(24, max(0, 49 - math.ceil(math.log2(max(float(magnitude), 1.0))))))
    a = round(Fraction(float(scale)) * 2**bits)
    data = np.asarray(data, dtype=np.float64)
    population = np.asarray(population, dtype=np.float64)
    lim = 2.0**52
    distances = None
    if cache is None or bits not in cache:
        scaled = (data * 2.0**bits, float(data.max()) * 2.0**bits if data.size else 0.0)
        if cache is not None:
            cache.clear()
            cache[bits] = scaled
    else:
        scaled = cache[bits]
    if (not data.size or (scaled[1] < lim and population.max() * a < lim)):
        distances = np.asarray(distance(scaled[0], population, float(a)))
        if distances.size and not distances.max() < lim:
            distances = None
    if distances is None:  # exact integers beyond the float kernel's range
        terms = [abs(int(c) * 2**bits - int(p) * a) for c, p in zip(data, population)]
        distances = np.array([sum(terms[lo:hi]) for lo, hi in zip(base[:-1], base[1:])],
                             dtype=object)
    else:
        distances = distances.astype(np.int64)
    grid = np.rint(np.asarray(offsets, dtype=np.float64) * weights * 2.0**bits)
    if distances.dtype != object and grid.size and (
            float(np.abs(grid).max()) + float(weights.max()) * float(distances.max()) < 2.0**62):
        return weights * distances - grid.astype(np.int64), 2**bits
    return (np.array([int(w) * int(e) - int(g) for w, e, g in zip(weights, distances, grid)],
                     dtype=object), 2**bits)


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


def _percentile_numerators(values, percentile, upper, weights):
    """:func:`percentile_utilities` exactly: ``(numerators, denominator)`` of rationals.

    ``u(c) = -|#{v <= c} - Q n / 100|`` with the float ``Q`` read exactly;
    weights must be integers.
    """
    percentile_utilities(values, percentile, upper, weights)  # validates the input
    values = np.asarray(values, dtype=np.int64)
    clipped = np.clip(values, 0, int(upper))
    if weights is None:
        at_most = np.cumsum(np.bincount(clipped, minlength=int(upper) + 1))
        n = values.size
    else:
        counts = _integer_valued(weights, "weights")
        at_most = np.cumsum(np.bincount(clipped, weights=counts, minlength=int(upper) + 1)
                            .astype(np.int64)) if counts.size else np.zeros(upper + 1, np.int64)
        n = int(counts.sum())
    target = Fraction(float(percentile)) * n / 100
    den, num = target.denominator, target.numerator
    if at_most.size and (int(at_most[-1]) + 1) * den + num < 2**62:
        return -np.abs(at_most.astype(np.int64) * den - num), den
    return np.array([-abs(int(a) * den - num) for a in at_most], dtype=object), den


def dp_percentile(values, percentile, upper, epsilon, rng, weights=None, noise="continuous"):
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
    noise : {"continuous", "discrete"}, default="continuous"
        ``"discrete"``: the utilities are exact rationals and the draw is
        exact (:func:`exponential_mechanism_exact`); the same mechanism.

    Returns
    -------
    int
    """
    if check_noise(noise) == "discrete":
        numerators, den = _percentile_numerators(values, percentile, upper, weights)
        return exponential_mechanism_exact(numerators, epsilon, rng, 1, denominator=den)
    utilities = percentile_utilities(values, percentile, upper, weights)
    return exponential_mechanism(utilities, epsilon, rng, sensitivity=1.0)


def gaussian_noise(size, scale, rng):
    """``scale * N(0, 1)`` noise of the given size (Gaussian mechanism)."""
    return scale * rng.standard_normal(size)


def merge_weights(values, weights=None):
    """Sorted distinct ``values`` and the records each stands for.

    ``values`` (float64, no NaN) in any order, repeated or not; ``weights``
    (non-negative integers, one per value; ``None``: one record each).
    Returns ``(distinct, counts)``, ``counts`` int64: what
    ``np.unique(np.repeat(values, weights), return_counts=True)`` gives,
    without building the repeated array.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError("values must be 1-D.")
    if weights is None:
        distinct, counts = np.unique(values, return_counts=True)
        return distinct, counts.astype(np.int64, copy=False)
    weights = np.asarray(weights)
    if weights.shape != values.shape:
        raise ValueError(f"weights must be one per value; got shape {weights.shape} for "
                         f"{values.size} values.")
    counts = weights.astype(np.int64, copy=False)
    if (weights.dtype.kind not in "iu" and not np.array_equal(counts, weights)) or \
            (counts.size and counts.min() < 0):
        raise ValueError("weights must be non-negative integers (numbers of records).")
    if not counts.all():  # a value no record holds is no value of the column
        kept = counts > 0
        values, counts = values[kept], counts[kept]
    if values.size > 1 and not (values[1:] > values[:-1]).all():  # else: already merged
        order = np.argsort(values, kind="stable")
        values, counts = values[order], counts[order]
        del order
        if not (values[1:] > values[:-1]).all():  # else: distinct, now sorted
            starts = np.flatnonzero(np.concatenate([[True], values[1:] != values[:-1]]))
            values, counts = values[starts], np.add.reduceat(counts, starts)
    return values, counts


def _check_quantile_args(quantiles, bounds, epsilon):
    quantiles = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    if not np.all((quantiles >= 0.0) & (quantiles <= 1.0)):
        raise ValueError(f"quantile must be in [0, 1]; got {quantiles.tolist()}.")
    lo, hi = (float(b) for b in bounds)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds must be finite with lo < hi; got {bounds}.")
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0; got {epsilon}.")
    return quantiles, lo, hi


def _clipped_distinct(values, weights, lo, hi):
    """Sorted distinct values clipped to ``[lo, hi]`` and their numbers of records."""
    values = np.asarray(values, dtype=np.float64)
    if np.isnan(values).any():
        raise ValueError("values must not contain NaN; drop missing values first.")
    return merge_weights(np.clip(values, lo, hi), weights)  # refuses a value array not 1-D


def _quantile_pieces(distinct, counts, lo, hi):
    """The pieces between ``lo``, the sorted distinct clipped values and ``hi``: their
    ends, log lengths, and the records at or below each (shared by every quantile)."""
    points = np.concatenate([[lo], distinct, [hi]])
    with np.errstate(divide="ignore"):  # tied ends: a piece of length 0, probability 0
        log_lengths = np.log(np.diff(points))
    at_most = np.empty(log_lengths.size)
    at_most[0] = 0.0
    np.cumsum(counts, out=at_most[1:])  # integers in float64: exact
    return points, log_lengths, at_most


def _piece_probabilities(pieces, quantile, epsilon):
    """``P[piece i] ∝ length_i * exp(epsilon * u_i / 2)``, ``u_i = -|r_i - q n|``
    (in place in one buffer: the client may hold one piece per record)."""
    _, log_lengths, at_most = pieces
    weights = np.subtract(at_most, quantile * at_most[-1])
    np.abs(weights, out=weights)
    weights *= -(epsilon / 2.0)
    weights += log_lengths
    weights -= weights.max()
    np.exp(weights, out=weights)
    weights /= weights.sum()
    return weights


def _draw_piece(points, probabilities, rng):
    i = int(rng.choice(probabilities.size, p=probabilities))
    return float(min(rng.uniform(points[i], points[i + 1]), points[-1]))


def dp_quantile_probabilities(values, quantile, bounds, epsilon, weights=None):
    """Exact output distribution of :func:`dp_quantile`.

    The output of the mechanism is a continuous value in ``bounds``; its
    density is piecewise constant between the sorted distinct (clipped) data
    values.  This function returns those pieces and the probability of
    each, so the distribution can be checked exactly (e.g. the
    ``e^epsilon`` ratio between neighbouring datasets).

    Parameters
    ----------
    values : array-like of float of shape (n,)
        One value per record, without missing values (or distinct values,
        ``weights`` giving the records each stands for).
    quantile : float
        Target quantile ``q`` in [0, 1].
    bounds : (float, float)
        Public range ``(lo, hi)`` with ``lo < hi``; values are clipped to it.
    epsilon : float
        Privacy budget (pure epsilon-DP).
    weights : array-like of int of shape (n,), default=None
        Records each value stands for (e.g. value counts summed over
        partitions); ``None``: one each.  The result depends on the
        multiset of the records' values only.

    Returns
    -------
    points : ndarray of shape (k + 2,)
        ``lo``, the ``k`` sorted distinct clipped values, ``hi``.  Piece ``i``
        is the interval ``[points[i], points[i + 1])``.
    probabilities : ndarray of shape (k + 1,)
        Probability that the output falls in piece ``i``; within a piece the
        output is uniform.

    Notes
    -----
    Every ``x`` in piece ``i`` has the same number ``r_i`` of data points at
    or below it, so its utility is ``u_i = -|r_i - q n|``.  Adding or
    removing one record changes ``r_i`` by at most 1 and ``q n`` by ``q`` in
    the same direction, so the sensitivity is ``max(q, 1 - q) <= 1``; we use
    1.  Piece ``i`` is chosen with probability proportional to ``length_i *
    exp(epsilon * u_i / 2)``: the exponential mechanism with the base
    measure of the real line (Smith 2011, "Privacy-preserving statistical
    estimation with optimal convergence rates", STOC; Li et al.,
    *Differential Privacy: From Theory to Practice*, section 2.3).  The
    density at any point changes by at most ``e^(epsilon/2)`` between
    neighbours and so does the normaliser, hence epsilon-DP.  Tied records
    only add pieces of length 0 (probability 0) between equal points, so
    merging them changes no probability.
    """
    (quantile,), lo, hi = _check_quantile_args(quantile, bounds, epsilon)
    pieces = _quantile_pieces(*_clipped_distinct(values, weights, lo, hi), lo, hi)
    return pieces[0], _piece_probabilities(pieces, quantile, epsilon)


def dp_quantile(values, quantile, bounds, epsilon, rng, weights=None):
    """epsilon-DP ``quantile`` of continuous values within public ``bounds``.

    The exponential mechanism over the intervals between sorted clipped data
    points (Smith 2011): pick an interval with probability proportional to
    ``length * exp(epsilon * utility / 2)``, then a uniform point inside it.
    See :func:`dp_quantile_probabilities` for the distribution and the proof
    sketch.  The result always lies in ``[lo, hi]``.  Sampled in floating
    point (numpy's ``choice`` and ``uniform``), unlike the exact
    :func:`exponential_mechanism_exact`: the weights ``length * exp(-x)``
    have lengths spread over many orders of magnitude, which the uniform
    proposal of the exact sampler cannot handle in bounded time.

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
    weights : array-like of int of shape (n,), default=None
        Records each value stands for: the same output, for the same
        ``rng``, as the values repeated.

    Returns
    -------
    float
    """
    return _draw_piece(*dp_quantile_probabilities(values, quantile, bounds, epsilon, weights),
                       rng)


def dp_quantiles(values, quantiles, bounds, epsilon, rng, weights=None):
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
    weights : array-like of int of shape (n,), default=None
        Records each value stands for (see :func:`dp_quantile`).

    Returns
    -------
    ndarray of shape (m,)
    """
    quantiles = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    if quantiles.size == 0:
        return np.empty(0)
    share = epsilon / quantiles.size
    quantiles, lo, hi = _check_quantile_args(quantiles, bounds, share)
    pieces = _quantile_pieces(*_clipped_distinct(values, weights, lo, hi), lo, hi)  # once
    return np.sort([_draw_piece(pieces[0], _piece_probabilities(pieces, q, share), rng)
                    for q in quantiles])


__all__ += ["dp_quantile_probabilities", "dp_quantile", "dp_quantiles", "merge_weights"]


def stability_threshold(epsilon, delta, noise="continuous"):
    """Threshold of the Laplace stability-based histogram: ``1 + ln(1 / (2 delta)) / epsilon``.

    A value held by a single record gets the noisy count ``1 + Lap(1/epsilon)``,
    which exceeds this threshold with probability exactly
    ``exp(-(t - 1) epsilon) / 2 = delta``.  With ``noise="discrete"`` the
    count is ``1 + Y``, ``Y`` discrete Laplace with ``P[Y >= m] = a**m / (1 +
    a) < a**m``, ``a = exp(-1/scale)``; the threshold ``1 + ln(1/delta) /
    epsilon'`` with ``epsilon' = epsilon (1 - 2**-29)`` (below ``1/scale``
    after the sampler's rounding of the scale) keeps it below ``delta``.
    """
    if check_noise(noise) == "discrete":
        return 1.0 + np.log(1.0 / delta) / (epsilon * (1.0 - 2.0**-29))
    return 1.0 + np.log(1.0 / (2.0 * delta)) / epsilon


def stable_histogram(values, epsilon, delta, rng, noise="discrete", weights=None):
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
    noise : {"discrete", "continuous"}, default="discrete"
        Discrete Laplace (exact, integer) or numpy's Laplace noise.
    weights : array-like of int, default=None
        Records each value stands for (see :func:`merge_weights`): the same
        release, for the same ``rng``, as the values repeated.

    Returns
    -------
    released : ndarray of float64
        Values above the threshold, sorted.
    noisy_counts : ndarray of float64
        Their noisy counts.
    """
    observed, counts = merge_weights(values, weights)
    noisy = laplace_measure(counts, epsilon, rng, noise)
    keep = noisy > stability_threshold(epsilon, delta, noise)
    return observed[keep], noisy[keep]


def laplace_histogram(bin_index, n_bins, epsilon, rng, noise="discrete", weights=None):
    """Counts of ``bin_index`` over ``n_bins`` public bins with ``Lap(1/epsilon)`` noise.

    One record falls in one bin (sensitivity 1): ``epsilon``-DP, with the
    discrete Laplace (default) or numpy's Laplace (``noise="continuous"``).
    ``weights`` (integers) makes index ``i`` stand for ``weights[i]``
    records.  Negative noisy counts are set to zero (post-processing).
    """
    bin_index = np.asarray(bin_index, dtype=np.int64)
    if weights is None:
        counts = np.bincount(bin_index, minlength=n_bins)
    else:  # integer sums in float64, exact: the counts of the repeated indices
        counts = np.bincount(bin_index, weights=np.asarray(weights, dtype=np.float64),
                             minlength=n_bins).astype(np.int64)
    return np.maximum(laplace_measure(counts, epsilon, rng, noise), 0.0)
