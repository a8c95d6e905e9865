"""Exact discrete noise: the samplers' distributions, reproducibility and accounting."""

from fractions import Fraction
import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp, ndtri_exp

from dpsynth.mechanisms import (discrete_gaussian, discrete_gaussian_mu, discrete_gaussian_scale,
                                discrete_gaussian_tail, discrete_laplace, dyadic_variance,
                                gaussian_measure, laplace_count, laplace_measure)
from dpsynth.accounting import gdp_delta


def _dg_pmf(sigma, support):
    y = np.arange(-support, support + 1)
    logw = -(y.astype(float) ** 2) / (2.0 * sigma**2)
    return y, np.exp(logw - logsumexp(logw))


def _chi_square_pvalue(draws, support_values, pmf, min_expected=5.0):
    """Chi-square p-value of integer draws against an exact pmf (sparse tails pooled)."""
    n = draws.size
    counts = np.array([(draws == v).sum() for v in support_values], dtype=float)
    expected = n * pmf
    keep = expected >= min_expected
    obs = np.append(counts[keep], n - counts[keep].sum())
    exp = np.append(expected[keep], n - expected[keep].sum())
    if exp[-1] < min_expected:  # fold the pooled tail into the largest cell
        obs[np.argmax(exp[:-1])] += obs[-1]
        exp[np.argmax(exp[:-1])] += exp[-1]
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp).pvalue


@pytest.mark.parametrize("sigma", [0.6, 2.5, 17.3])
def test_discrete_gaussian_matches_the_exact_pmf(sigma):
    draws = discrete_gaussian(60_000, sigma, np.random.default_rng(1))
    assert draws.dtype == np.int64
    y, pmf = _dg_pmf(sigma, int(12 * sigma) + 3)
    mean, var = float((y * pmf).sum()), float((y * y * pmf).sum())
    assert abs(draws.mean() - mean) < 5 * math.sqrt(var / draws.size)
    assert abs(draws.var() / var - 1) < 0.05
    assert _chi_square_pvalue(draws, y, pmf) > 1e-3


@pytest.mark.parametrize("scale", [0.4, 3.0, 25.0])
def test_discrete_laplace_matches_the_exact_pmf(scale):
    draws = discrete_laplace(60_000, scale, np.random.default_rng(2))
    y = np.arange(-int(30 * scale) - 5, int(30 * scale) + 6)
    q = math.exp(-1.0 / scale)
    pmf = (1 - q) / (1 + q) * q ** np.abs(y)
    assert abs(draws.var() / (2 * q / (1 - q) ** 2) - 1) < 0.05
    assert _chi_square_pvalue(draws, y, pmf) > 1e-3


def test_large_scales_keep_their_variance():
    rng = np.random.default_rng(3)
    for sigma in (1e4, 3e7):
        draws = discrete_gaussian(20_000, sigma, rng).astype(float)
        assert abs(draws.var() / sigma**2 - 1) < 0.05
        assert abs(draws.mean()) < 5 * sigma / math.sqrt(draws.size)


def test_per_draw_scales():
    sigma = np.array([1.0, 1000.0] * 5000)
    draws = discrete_gaussian(sigma.shape, sigma, np.random.default_rng(4)).astype(float)
    assert draws[0::2].std() < 1.5 and 900 < draws[1::2].std() < 1100


def test_seeded_draws_reproduce_and_seeds_differ():
    a = discrete_gaussian(500, 3.0, np.random.default_rng(7))
    b = discrete_gaussian(500, 3.0, np.random.default_rng(7))
    c = discrete_gaussian(500, 3.0, np.random.default_rng(8))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    np.testing.assert_array_equal(discrete_laplace(300, 2.0, np.random.default_rng(5)),
                                  discrete_laplace(300, 2.0, np.random.default_rng(5)))
    # a shared generator moves on: the next call gives other draws
    rng = np.random.default_rng(9)
    assert not np.array_equal(discrete_gaussian(200, 5.0, rng), discrete_gaussian(200, 5.0, rng))


@pytest.mark.parametrize("sigma", [1e-3, 0.3, 1.0, math.pi, 1234.5678, 2.0**40 / 3])
def test_dyadic_variance_rounds_up_by_a_tiny_amount(sigma):
    S, e, tau = dyadic_variance(sigma)
    rounded = S * Fraction(2) ** e
    exact = Fraction(sigma) ** 2
    assert rounded >= exact
    assert rounded - exact <= exact * Fraction(2) ** -10
    assert Fraction(4) ** tau >= rounded and (tau == 0 or Fraction(4) ** (tau - 1) < rounded)


def test_invalid_scales_are_refused():
    with pytest.raises(ValueError, match="sigma"):
        discrete_gaussian(3, 0.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="scale"):
        discrete_laplace(3, -1.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="integer"):
        gaussian_measure(np.array([0.5, 1.0]), 1.0, np.random.default_rng(0))


# ------------------------------------------------------------------ accounting
def _kinks_mu(sigma, delta):
    """sup over every kink within 20 sigma of Phi^-1(F(k)) - Phi^-1(F(k - delta))."""
    K = int(40 * sigma) + 40
    x = np.arange(-K, K)
    logw = -(x.astype(float) ** 2) / (2 * sigma**2)
    lower = ndtri_exp(np.logaddexp.accumulate(logw) - logsumexp(logw))  # accurate for x < 0
    z = np.where(x < 0, lower, -lower[np.clip(-1 - x + K, 0, 2 * K - 1)])  # z(k) = -z(-1-k)
    inner = np.abs(x) <= 20 * sigma + delta
    diffs = z[delta:] - z[:-delta]
    return float(np.max(diffs[inner[delta:] & inner[:-delta]]))


@pytest.mark.parametrize("sigma", [0.4, 1.0, 2.2, 6.0, 25.0, 140.0])
@pytest.mark.parametrize("delta", [1, 2, 3])
def test_gdp_mu_is_the_supremum_over_all_kinks(sigma, delta):
    mu = discrete_gaussian_mu(sigma, delta)
    assert mu == pytest.approx(_kinks_mu(sigma, delta), rel=1e-9, abs=1e-12)
    # never more per unit of shift than at sensitivity 1
    assert mu / delta <= discrete_gaussian_mu(sigma, 1) * (1 + 1e-12)


def test_discrete_gaussian_is_not_exactly_one_over_sigma_gdp_but_the_scale_is():
    """Independent check: the exact privacy profile of the pair N_Z(0), N_Z(1)."""
    for sigma in (0.8, 1.5, 4.0):
        y, p = _dg_pmf(sigma, int(30 * sigma) + 5)
        q = np.roll(p, 1)  # N_Z(1, sigma^2) on the same support
        profile = lambda eps: float(np.maximum(p - np.exp(eps) * q, 0).sum())  # noqa: E731
        grid = np.linspace(0.0, 6.0 / sigma, 60)
        # mu = 1/sigma understates the loss somewhere
        assert any(profile(eps) > gdp_delta(1.0 / sigma, eps) * (1 + 1e-9) + 1e-15
                   for eps in grid)
        # the exact mu bounds the profile everywhere
        mu = discrete_gaussian_mu(sigma)
        assert all(profile(eps) <= gdp_delta(mu, eps) + 1e-12 for eps in grid)
        # and the calibrated scale is 1/sigma-GDP
        scale = discrete_gaussian_scale(sigma)
        assert scale > sigma and discrete_gaussian_mu(scale) <= 1.0 / sigma
        y, p = _dg_pmf(scale, int(30 * scale) + 5)
        q = np.roll(p, 1)
        assert all(float(np.maximum(p - np.exp(eps) * q, 0).sum())
                   <= gdp_delta(1.0 / sigma, eps) + 1e-12 for eps in grid)


def test_mu_decreases_with_the_scale_and_the_excess_vanishes():
    sigmas = np.geomspace(0.3, 1e4, 40)
    mus = [discrete_gaussian_mu(s) for s in sigmas]
    assert all(a > b for a, b in zip(mus, mus[1:]))
    excess = [m * s for m, s in zip(mus, sigmas)]
    assert all(a >= b for a, b in zip(excess, excess[1:]))
    assert excess[-1] == pytest.approx(1.0, abs=1e-8)
    assert discrete_gaussian_scale(100.0) == pytest.approx(100.0 * (1 + 1 / 24e4), rel=1e-6)


def test_zcdp_of_the_discrete_gaussian_is_the_continuous_one():
    """CKS20 Thm 4: Renyi divergence of N_Z(0), N_Z(1) at alpha is <= alpha / (2 sigma^2)."""
    for sigma in (0.7, 2.0, 9.0):
        y, p = _dg_pmf(sigma, int(30 * sigma) + 5)
        q = np.roll(p, 1)
        for alpha in (1.5, 2.0, 4.0, 10.0):
            mask = p > 0
            renyi = logsumexp(alpha * np.log(p[mask]) + (1 - alpha) * np.log(q[mask])) / (alpha - 1)
            assert renyi <= alpha / (2 * sigma**2) + 1e-12


@pytest.mark.parametrize("sigma", [0.7, 3.0, 20.0])
def test_tail_bound_covers_the_exact_tail(sigma):
    y, p = _dg_pmf(sigma, int(40 * sigma) + 5)
    for threshold in range(1, int(6 * sigma) + 3):
        assert p[y >= threshold].sum() <= discrete_gaussian_tail(threshold, sigma) + 1e-15


def test_measures_add_integer_noise_to_counts():
    rng = np.random.default_rng(0)
    counts = np.arange(1000)
    noisy, scale = gaussian_measure(counts, 4.0, rng)
    assert noisy.dtype == np.float64 and np.all(noisy == np.rint(noisy))
    assert scale > 4.0 and 3 < (noisy - counts).std() < 5
    noisy = laplace_measure(counts, 0.5, rng)
    assert np.all(noisy == np.rint(noisy)) and 2 < (noisy - counts).std() < 4
    count = laplace_count(10, 1.0, rng, noise="discrete")
    assert count == int(count)
    continuous, _ = gaussian_measure(counts.astype(float) + 0.5, 4.0, rng, noise="continuous")
    assert not np.all(continuous == np.rint(continuous))


def test_discrete_residuals_are_unbiased_with_the_planned_variance():
    from dpsynth.model.residuals import to_residual
    from dpsynth.release.allocation import noisy_residual
    rng = np.random.default_rng(11)
    table = rng.integers(0, 50, size=(3, 4, 2))
    theta = to_residual(table, (0, 1, 2), (0, 2))
    draws = np.array([noisy_residual(table, (0, 1, 2), (0, 2), 2.0, rng)[0]
                      for _ in range(3000)])
    assert draws.shape[1:] == theta.shape
    error = draws - theta
    assert np.abs(error.mean(axis=0)).max() < 5 * 2.0 / math.sqrt(3000)
    _, variance = noisy_residual(table, (0, 1, 2), (0, 2), 2.0, rng)
    assert 4.0 < variance < 4.0 * 1.01
    np.testing.assert_allclose(error.var(axis=0), variance, rtol=0.1)
    # the continuous path keeps numpy's draws
    noisy, variance = noisy_residual(table, (0, 1, 2), (0, 2), 2.0, np.random.default_rng(0),
                                     sampler="continuous")
    np.testing.assert_allclose(noisy, theta + np.random.default_rng(0).normal(0, 2.0, theta.shape))


# ------------------------------------------------------- exact exponential mechanism
def _em_exact_probabilities(utilities, epsilon, sensitivity):
    u = np.array([float(Fraction(v)) for v in utilities])
    logits = epsilon * (u - u.max()) / (2.0 * float(sensitivity))
    return np.exp(logits - logsumexp(logits))


@pytest.mark.parametrize("utilities, epsilon, sensitivity", [
    ([0.0, 1.0, 2.0, 3.5, -1.25], 1.3, 1.0),         # floats read exactly
    ([5, 5, 5, 1, 0, 9], 0.7, 2),                     # ties (evaluated once), integers
    ([Fraction(1, 3), Fraction(2, 7), Fraction(-1, 5)], 4.1, Fraction(1, 10)),
    (list(range(0, 40)), 0.35, 3.0),                  # many candidates, most far below
    ([0.1 * i for i in range(12)], 0.0371, 0.013),    # a denominator beyond 2**62
])
def test_exact_exponential_mechanism_matches_its_probabilities(utilities, epsilon, sensitivity):
    from dpsynth.mechanisms import exponential_mechanism
    rng = np.random.default_rng(11)
    n = 8_000
    draws = np.array([exponential_mechanism(np.array(utilities, dtype=object)
                                            if isinstance(utilities[0], Fraction)
                                            else np.array(utilities), epsilon, rng,
                                            sensitivity=sensitivity, noise="discrete")
                      for _ in range(n)])
    pmf = _em_exact_probabilities(utilities, epsilon, sensitivity)
    assert _chi_square_pvalue(draws, np.arange(len(utilities)), pmf) > 1e-3


def test_exact_exponential_select_kernel_by_exact_enumeration():
    """x = (0, 1/3, 1, 7/3, 7/3): P[j] = exp(-x_j) / sum, against the exact frequencies of 6e4 draws."""
    from dpsynth._core._noise import BitSource, exponential_select
    gaps = np.array([0, 1, 3, 7, 7], dtype=np.int64)   # x = gaps * 1/3 ... with a tie (class 3)
    index = np.array([0, 1, 2, 3, 3], dtype=np.int64)  # two candidates share class 3
    lower = np.zeros(5, dtype=np.uint64)
    source = BitSource(np.random.default_rng(5).bit_generator)
    x = np.array([0, 1 / 3, 1, 7 / 3, 7 / 3])
    pmf = np.exp(-x) / np.exp(-x).sum()
    n = 60_000
    draws = np.array([exponential_select(source, gaps[:4], 1, 3, lower[:4], index)
                      for _ in range(n)])
    assert _chi_square_pvalue(draws, np.arange(5), pmf) > 1e-3
    # integer lower bounds only skip ahead: the same distribution with lower = floor(x)
    lower = np.array([0, 0, 1, 2], dtype=np.uint64)
    draws = np.array([exponential_select(source, gaps[:4], 1, 3, lower, index)
                      for _ in range(n)])
    assert _chi_square_pvalue(draws, np.arange(5), pmf) > 1e-3
    with pytest.raises(ValueError, match="lower"):
        exponential_select(source, gaps[:4], 1, 3, np.array([0, 1, 2, 3], dtype=np.uint64),
                           np.array([1], dtype=np.int64))


def test_exact_exponential_mechanism_reproduces_and_handles_extremes():
    from dpsynth.mechanisms import exponential_mechanism_exact
    u = np.array([3.0, 1e300, -1e300, 2.0**-1074, 0.5])
    picks = [exponential_mechanism_exact(u, 0.5, np.random.default_rng(s)) for s in range(20)]
    assert picks == [1] * 20  # exp(-huge) is never accepted
    big = np.array([2**70, 2**70 - 3, 12], dtype=object)  # Python integers
    a = [exponential_mechanism_exact(big, 1.0, np.random.default_rng(s), 2) for s in range(40)]
    b = [exponential_mechanism_exact(big, 1.0, np.random.default_rng(s), 2) for s in range(40)]
    assert a == b and set(a) == {0, 1}
    with pytest.raises(ValueError, match="finite"):
        exponential_mechanism_exact(np.array([0.0, np.inf]), 1.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="integers"):
        exponential_mechanism_exact(np.array([0.5, 1.0]), 1.0, np.random.default_rng(0),
                                    denominator=4)


def test_exact_dp_percentile_matches_the_exponential_mechanism():
    from dpsynth.mechanisms import dp_percentile, percentile_utilities
    values = np.arange(6)
    weights = np.array([30, 12, 5, 2, 1, 0])
    rng = np.random.default_rng(4)
    draws = np.array([dp_percentile(values, 95.0, 8, 1.5, rng, weights=weights,
                                    noise="discrete") for _ in range(8_000)])
    utilities = percentile_utilities(values, 95.0, 8, weights)
    pmf = _em_exact_probabilities(utilities, 1.5, 1.0)
    assert _chi_square_pvalue(draws, np.arange(9), pmf) > 1e-3


def test_l1_score_numerators_are_the_exact_scores_in_every_path():
    from dpsynth.mechanisms import l1_score_numerators
    rng = np.random.default_rng(9)
    base = np.array([0, 4, 10, 18])
    data = rng.integers(0, 50, 18).astype(float)
    population = rng.integers(0, 9, 18).astype(float)
    scale, weights, offsets = 5.3717, np.array([3.0, 6.0, 6.0]), np.array([0.7, 1.9, 2.2])

    def kernel(d, p, s):
        return np.array([np.abs(d[lo:hi] - s * p[lo:hi]).sum() for lo, hi in zip(base, base[1:])])

    fast, den = l1_score_numerators(kernel, data, population, scale, base, weights, offsets,
                                    magnitude=data.sum())
    a = round(Fraction(scale) * den)
    for r, (lo, hi) in enumerate(zip(base, base[1:])):
        exact = weights[r] * (sum(abs(Fraction(int(c)) - int(p) * Fraction(a, den))
                                  for c, p in zip(data[lo:hi], population[lo:hi])))
        exact -= Fraction(round(offsets[r] * weights[r] * den), den)
        assert Fraction(int(fast[r]), den) == exact
    # a total far above the public magnitude: the same integers, without the float kernel
    slow, den2 = l1_score_numerators(lambda *a: pytest.fail("float kernel used"),
                                     data * 2**40, population, scale * 2**40, base, weights,
                                     offsets, magnitude=data.sum())
    assert den2 == den and slow.dtype == object
    # one record more moves every score by at most its weight
    moved = data.copy()
    moved[5] += 1
    other, _ = l1_score_numerators(kernel, moved, population, scale, base, weights, offsets,
                                   magnitude=data.sum())
    assert np.all(np.abs((other - fast).astype(float)) <= weights * den)
    # the scaled counts kept between calls give the same scores, for every population
    cache = {}
    for pop in (population, population + 1.0, population):
        cached, den3 = l1_score_numerators(kernel, data, pop, scale, base, weights, offsets,
                                           magnitude=data.sum(), cache=cache)
        fresh, _ = l1_score_numerators(kernel, data, pop, scale, base, weights, offsets,
                                       magnitude=data.sum())
        assert den3 == den and np.array_equal(cached, fresh)
    assert list(cache) == [int(math.log2(den))]


def _left_tail_z(sigma, k):
    """``Phi^-1(P[Y <= k])`` for ``Y ~ N_Z(0, sigma**2)`` and ``k <= 0``, in log space.

    The terms below ``k`` fall by ``exp(-|k| / sigma**2)`` or faster, so
    ``60 sigma**2 / |k| + 60`` of them leave out a relative ``e**-60``.
    """
    from dpsynth.mechanisms import _normaliser
    terms = int(60 * sigma**2 / max(abs(k), 1)) + 60
    j = np.arange(k - terms, k + 1, dtype=float)
    return float(ndtri_exp(logsumexp(-j * j / (2 * sigma**2)) - math.log(_normaliser(sigma))))


@pytest.mark.parametrize("sigma", [0.6, 2.0, 5.0, 14.0, 25.0, 140.0])
@pytest.mark.parametrize("delta", [1, 2])
def test_far_tail_kinks_stay_below_the_central_one(sigma, delta):
    """The kinks far in the tail, out to 40 sigma**2 (probabilities down to exp(-800 sigma**2)).

    Beyond ``|k| ~ sigma**2`` one term dominates the tail and the slope of
    ``Phi^-1(F(k))`` is ``(1 + sigma**2 (ln(|k|/sigma**2) - 1)/k**2) / sigma`` to
    first order: it exceeds ``1/sigma`` again, by at most ``0.025 / sigma**3`` near
    ``|k| = 4.5 sigma**2`` (past the ``20 sigma`` of the test above when ``sigma > 4``),
    less than the central excess ``~1 / (24 sigma**3)``, and tends to ``1/sigma``.  This
    checks it on a grid of 200 kinks from ``20 sigma`` to ``40 sigma**2``.
    """
    mu = discrete_gaussian_mu(sigma, delta)
    top = max(40 * sigma**2, 80 * sigma)
    ks = -np.unique(np.geomspace(20 * sigma + delta, top, 200).astype(int))
    diffs = np.array([_left_tail_z(sigma, k) - _left_tail_z(sigma, k - delta) for k in ks])
    assert np.all(np.isfinite(diffs))
    assert diffs.max() <= mu * (1 + 1e-9)
    assert diffs.max() > delta / sigma  # the tail bump is there (the check is not vacuous)
