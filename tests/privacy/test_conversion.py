"""Gaussian-DP accounting of the workload release, against independent computations."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpsynth.mechanisms import exponential_mechanism_probabilities
from dpsynth.accounting import (bounded_range_epsilon, bounded_range_mu, gdp_delta,
                                        gdp_epsilon, gdp_mu, zcdp_rho_tight)
from dpsynth.release.adaptive_selection import selection_cost, selection_epsilon


def _delta_by_integration(mu, epsilon):
    """E_P[(1 - exp(epsilon - L))_+] with the Gaussian privacy loss L ~ N(mu**2/2, mu**2)."""
    loss = stats.norm(mu * mu / 2.0, mu)
    value, _ = integrate.quad(lambda x: (1.0 - math.exp(epsilon - x)) * loss.pdf(x),
                              epsilon, mu * mu / 2.0 + 40.0 * mu, limit=500)
    return value


@pytest.mark.parametrize("mu, epsilon", [(0.1, 0.05), (0.3, 1.0), (1.0, 2.0), (2.5, 4.0),
                                         (4.0, 10.0), (0.05, 0.0)])
def test_gdp_delta_matches_the_privacy_loss_integral(mu, epsilon):
    assert gdp_delta(mu, epsilon) == pytest.approx(_delta_by_integration(mu, epsilon),
                                                   rel=1e-6, abs=1e-15)


@pytest.mark.parametrize("epsilon, delta", [(0.5, 1e-6), (1.0, 1.5e-5), (4.0, 1e-5),
                                            (10.0, 1e-9), (40.0, 1e-5)])
def test_gdp_mu_is_the_largest_budget_within_delta(epsilon, delta):
    mu = gdp_mu(epsilon, delta)
    assert gdp_delta(mu, epsilon) <= delta
    assert gdp_delta(mu * (1 + 1e-9), epsilon) > delta * (1 - 1e-6)
    assert gdp_epsilon(mu, delta) == pytest.approx(epsilon, rel=1e-9)
    # a Gaussian release is tighter than any zCDP conversion allows
    assert mu * mu / 2.0 > zcdp_rho_tight(epsilon, delta)


def test_gdp_conversion_gain_over_zcdp_at_epsilon_one():
    ratio = gdp_mu(1.0, 1e-5) ** 2 / 2.0 / zcdp_rho_tight(1.0, 1e-5)
    assert 1.15 < ratio < 1.25


def _two_point_mu(epsilon, t):
    """mu_t of the pair whose loss takes only -t eps and (1 - t) eps (independent form)."""
    a, b = -t * epsilon, (1.0 - t) * epsilon
    q = (1.0 - math.exp(a)) / (math.exp(b) - math.exp(a))
    p = q * math.exp(b)
    return stats.norm.ppf(p) - stats.norm.ppf(q)


@pytest.mark.parametrize("epsilon", [1e-3, 0.05, 0.3, 1.0, 3.0, 8.0, 20.0])
def test_bounded_range_mu_is_the_worst_two_point_pair(epsilon):
    mu = bounded_range_mu(epsilon)
    ts = np.linspace(1e-4, 1 - 1e-4, 4001)
    worst = max(_two_point_mu(epsilon, t) for t in ts)
    assert worst <= mu * (1 + 1e-12)
    assert _two_point_mu(epsilon, 0.5) == pytest.approx(mu, rel=1e-9)
    assert bounded_range_epsilon(mu) == pytest.approx(epsilon, rel=1e-9)
    assert bounded_range_mu(bounded_range_epsilon(mu)) <= mu


def _profile(p, q, epsilon):
    """delta(epsilon) of the pair of distributions (p, q): sum (p - e^eps q)_+."""
    return float(np.clip(p - math.exp(epsilon) * q, 0.0, None).sum())


@pytest.mark.parametrize("seed", range(6))
def test_the_exponential_mechanism_on_neighbours_is_within_its_gdp_curve(seed):
    # exact output distributions on two inputs whose scores differ by at most
    # the sensitivity: their (epsilon', delta) profile must lie under mu-GDP's
    rng = np.random.default_rng(seed)
    epsilon, sensitivity = float(rng.uniform(0.05, 6.0)), float(rng.uniform(0.5, 3.0))
    scores = rng.normal(0.0, 5.0, size=int(rng.integers(2, 40)))
    shift = rng.uniform(-sensitivity, sensitivity, size=scores.size)
    shift[rng.random(scores.size) < 0.5] = rng.choice([-sensitivity, sensitivity])
    p = exponential_mechanism_probabilities(scores, epsilon, sensitivity)
    q = exponential_mechanism_probabilities(scores + shift, epsilon, sensitivity)
    mu = bounded_range_mu(epsilon)
    for eps in np.linspace(0.0, epsilon, 60):
        bound = gdp_delta(mu, eps) + 1e-12
        assert _profile(p, q, eps) <= bound
        assert _profile(q, p, eps) <= bound


def test_selection_cost_and_its_inverse():
    for accounting in ("gdp", "zcdp"):
        for cost in (1e-6, 1e-3, 0.02, 0.5):
            eps = selection_epsilon(cost, accounting)
            assert selection_cost(eps, accounting) <= cost * (1 + 1e-12)
            assert selection_cost(eps, accounting) == pytest.approx(cost, rel=1e-9)
    # in GDP a selection costs about pi/2 times its zCDP epsilon**2 / 8
    assert selection_cost(0.1, "gdp") / selection_cost(0.1, "zcdp") == pytest.approx(
        math.pi / 2, rel=1e-3)


@pytest.mark.parametrize("bad", [-1.0, math.nan])
def test_invalid_arguments(bad):
    with pytest.raises(ValueError):
        gdp_mu(bad, 1e-5)
    with pytest.raises(ValueError):
        gdp_delta(bad, 1.0)
    with pytest.raises(ValueError):
        bounded_range_mu(bad)
    with pytest.raises(ValueError):
        gdp_mu(1.0, 1.5)
