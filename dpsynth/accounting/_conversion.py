"""Conversions between (epsilon, delta)-DP and zCDP or Gaussian DP.

**zCDP.**

Bun & Steinke (2016, Prop. 1.3) give ``epsilon = rho + 2 sqrt(rho log(1/delta))``
(:func:`zcdp_to_epsilon`; :func:`zcdp_rho` inverts it: the SDS release's conversion).  Canonne, Kamath &
Steinke ("The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
Prop. 12 / Cor. 13) prove the tighter bound: a rho-zCDP mechanism is
(epsilon, delta)-DP for

    delta = inf_{a > 1} exp((a - 1)(a rho - epsilon)) / (a - 1) * (1 - 1/a)**a.

It holds for any rho-zCDP mechanism (Gaussian measurements and exponential
mechanism selections alike), so the same (epsilon, delta) allows a larger
rho, hence less noise: at delta = 1e-5 about 1.2x the Bun-Steinke rho at
epsilon = 1.  The infimum is found by bisection on the derivative of the
exponent, ``(2a - 1) rho - epsilon + log(1 - 1/a)``, which increases in
``a``; ``rho`` by bisection on ``delta(rho)``, which increases in ``rho``.
Both bisections err on the safe side (the returned ``rho`` satisfies
``zcdp_delta(rho, epsilon) <= delta``).

**Gaussian DP** (Dong, Roth & Su, "Gaussian Differential Privacy", JRSS B
2022).  A mechanism is mu-GDP when telling ``M(D)`` from ``M(D')`` is at
least as hard as telling ``N(0, 1)`` from ``N(mu, 1)``.  The Gaussian
mechanism of L2 sensitivity 1 and noise ``sigma`` is exactly ``1/sigma``-GDP,
and its (epsilon, delta) curve is exact (their Cor. 2.13; the analytic
Gaussian mechanism of Balle & Wang, ICML 2018):

    delta(epsilon) = Phi(-epsilon/mu + mu/2) - exp(epsilon) Phi(-epsilon/mu - mu/2).

GDP composes by ``mu**2 = sum mu_i**2``, also when each mechanism and its
``mu_i`` are chosen from earlier outputs, as long as the sum stays within the
budget (Smith & Thakurta, "Fully Adaptive Composition for Gaussian
Differential Privacy", 2022: a filter).  For Gaussian measurements this is
tighter than converting their zCDP: at delta = 1e-5 and epsilon = 1 the same
guarantee allows about 1.16-1.22x the ``rho = mu**2 / 2``.  A mu-GDP mechanism
is also ``mu**2 / 2``-zCDP.

The exponential mechanism is not Gaussian; :func:`bounded_range_mu` gives a
``mu`` for it (:func:`bounded_range_mu` explains why it holds).
"""

import math

from scipy.special import expit, log_ndtr, ndtr, ndtri

__all__ = ["zcdp_rho", "zcdp_to_epsilon", "zcdp_delta", "zcdp_epsilon", "zcdp_rho_tight", "gdp_delta", "gdp_mu",
           "gdp_epsilon", "bounded_range_mu", "bounded_range_epsilon"]


def zcdp_rho(epsilon, delta):
    """Largest zCDP ``rho`` whose ``(epsilon, delta)``-DP conversion fits the budget.

    ``rho = (sqrt(epsilon + L) - sqrt(L))**2`` with ``L = log(1/delta)``; it
    satisfies ``rho + 2 * sqrt(rho * L) = epsilon`` exactly.
    """
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0; got {epsilon}.")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1); got {delta}.")
    log_term = math.log(1.0 / delta)
    return (math.sqrt(epsilon + log_term) - math.sqrt(log_term)) ** 2


def zcdp_to_epsilon(rho, delta):
    """``epsilon`` of the ``(epsilon, delta)``-DP guarantee implied by ``rho``-zCDP."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def zcdp_delta(rho, epsilon):
    """Smallest ``delta`` of the Canonne-Kamath-Steinke bound for rho-zCDP at ``epsilon``."""
    if not rho >= 0 or not epsilon >= 0:
        raise ValueError("rho and epsilon must be >= 0.")
    if rho == 0:
        return 0.0
    lo, hi = 1.0 + 1e-9, max((epsilon + 1.0) / (2.0 * rho) + 2.0, 2.0)
    for _ in range(200):
        a = 0.5 * (lo + hi)
        if (2 * a - 1) * rho - epsilon + math.log1p(-1.0 / a) < 0:
            lo = a
        else:
            hi = a
    best = 1.0
    for a in (lo, hi):  # any a > 1 gives a valid bound: take the smaller
        log_delta = (a - 1) * (a * rho - epsilon) + a * math.log1p(-1.0 / a) - math.log(a - 1)
        best = min(best, math.exp(min(log_delta, 0.0)))
    return best


def _bisect(ok, good, bad):
    """The end of ``[good, bad]`` (either order) where ``ok`` holds, after 200 halvings.

    ``ok(good)`` holds and ``ok`` is monotone on the interval; the result
    always satisfies ``ok`` (the bisection errs on the safe side).
    """
    for _ in range(200):
        mid = 0.5 * (good + bad)
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good


def zcdp_epsilon(rho, delta):
    """Smallest ``epsilon`` (to 1e-12 relative) with ``zcdp_delta(rho, epsilon) <= delta``."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1); got {delta}.")
    bun_steinke = rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta)) + 1e-12
    return _bisect(lambda eps: zcdp_delta(rho, eps) <= delta, bun_steinke, 0.0)


def zcdp_rho_tight(epsilon, delta):
    """Largest ``rho`` (to 1e-12 relative) with ``zcdp_delta(rho, epsilon) <= delta``.

    Never smaller than the Bun-Steinke ``(sqrt(epsilon + L) - sqrt(L))**2``,
    ``L = log(1/delta)``.
    """
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0; got {epsilon}.")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1); got {delta}.")
    log_term = math.log(1.0 / delta)
    lo = (math.sqrt(epsilon + log_term) - math.sqrt(log_term)) ** 2
    if zcdp_delta(lo, epsilon) > delta:  # cannot happen (the bound is tighter): be safe
        return lo * (1 - 1e-9)
    return _bisect(lambda rho: zcdp_delta(rho, epsilon) <= delta, lo, epsilon + 1.0)


def gdp_delta(mu, epsilon):
    """``delta`` of a mu-GDP mechanism at ``epsilon`` (exact; Dong, Roth & Su, Cor. 2.13).

    ``Phi(-epsilon/mu + mu/2) - exp(epsilon) Phi(-epsilon/mu - mu/2)``, the
    second term computed in logs so that it neither overflows nor loses the
    difference for large ``epsilon``.
    """
    if not mu >= 0 or not epsilon >= 0:
        raise ValueError("mu and epsilon must be >= 0.")
    if mu == 0:
        return 0.0
    first = float(ndtr(-epsilon / mu + mu / 2.0))
    second = math.exp(epsilon + float(log_ndtr(-epsilon / mu - mu / 2.0)))
    return max(first - second, 0.0)


def gdp_mu(epsilon, delta):
    """Largest ``mu`` (to 1e-12 relative) whose mu-GDP implies (epsilon, delta)-DP.

    ``gdp_delta(mu, epsilon)`` increases in ``mu``; the bisection errs on the
    safe side (``gdp_delta(gdp_mu(epsilon, delta), epsilon) <= delta``).
    """
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0; got {epsilon}.")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1); got {delta}.")
    hi = 1.0
    while gdp_delta(hi, epsilon) <= delta:  # mu = 1 can be too small at large epsilon
        hi *= 2.0
    return _bisect(lambda mu: gdp_delta(mu, epsilon) <= delta, 0.0, hi)


def gdp_epsilon(mu, delta):
    """Smallest ``epsilon`` (to 1e-12 relative) with ``gdp_delta(mu, epsilon) <= delta``."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1); got {delta}.")
    if not mu >= 0:
        raise ValueError(f"mu must be >= 0; got {mu}.")
    hi = 1.0
    while gdp_delta(mu, hi) > delta:
        hi *= 2.0
    return _bisect(lambda eps: gdp_delta(mu, eps) <= delta, hi, 0.0)


def bounded_range_mu(epsilon):
    """``mu`` such that every epsilon-bounded-range mechanism is mu-GDP.

    The exponential mechanism ``P[r] ∝ exp(epsilon u_r / (2 Delta))`` with
    ``|u_r(D) - u_r(D')| <= Delta`` is epsilon-bounded-range (Durfee &
    Rogers 2019): on neighbouring inputs its privacy loss ``L(y) = log
    P(y)/Q(y)`` takes values in an interval ``[-t epsilon, (1 - t)
    epsilon]`` for some ``t`` in ``[0, 1]`` (the interval must hold 0, as
    ``E_Q[exp L] = 1``).  Such a pair ``(P, Q)`` is a post-processing of the
    two-point pair whose loss takes only the two ends ``a = -t epsilon`` and
    ``b = (1 - t) epsilon``, with ``Q(b) = q = (exp(t epsilon) - 1) /
    (exp(epsilon) - 1)`` and ``P(b) = p = q exp(b)``: the channel sending
    ``b`` to ``y`` with probability ``Q(y) (exp(L(y)) (1 - q) - (1 - p)) /
    (p - q)`` and ``a`` to ``y`` with ``Q(y) (p - q exp(L(y))) / (p - q)``
    is non-negative exactly when ``a <= L(y) <= b``, and sums to one.  The
    two-point pair's trade-off function is linear on both sides of its one
    kink ``(1 - p, q)``; the Gaussian trade-off ``G_mu`` is convex, equal at
    the ends, so ``G_mu`` lies below it exactly when ``G_mu(1 - p) <= q``:
    ``mu_t = Phi^-1(p) - Phi^-1(q)``.  Over ``t`` the largest is at
    ``t = 1/2`` (``mu_t = mu_{1-t}``; the tests check it on a fine grid of
    ``t`` for epsilon from 1e-3 to 20), where the pair is randomized
    response at ``epsilon / 2``::

        mu = 2 Phi^-1(1 / (1 + exp(-epsilon / 2)))

    For small ``epsilon``, ``mu ≈ 0.627 epsilon``: ``mu**2 / 2`` is about
    1.57 times the mechanism's zCDP ``epsilon**2 / 8`` (Cesar & Rogers
    2021), the price of composing it with Gaussian measurements in GDP.
    """
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be >= 0; got {epsilon}.")
    # = -2 Phi^-1(1 / (1 + exp(epsilon / 2))): the small probability keeps its digits
    return -2.0 * float(ndtri(expit(-epsilon / 2.0)))


def bounded_range_epsilon(mu):
    """Largest ``epsilon`` with ``bounded_range_mu(epsilon) <= mu`` (its inverse)."""
    if not mu >= 0:
        raise ValueError(f"mu must be >= 0; got {mu}.")
    # epsilon / 2 = logit(Phi(mu / 2)) = log Phi(mu/2) - log Phi(-mu/2), stable in logs
    epsilon = 2.0 * float(log_ndtr(mu / 2.0) - log_ndtr(-mu / 2.0))
    if bounded_range_mu(epsilon) <= mu:
        return epsilon
    # rounding put it just above: the largest epsilon below it that fits
    return _bisect(lambda eps: bounded_range_mu(eps) <= mu, 0.0, epsilon)
