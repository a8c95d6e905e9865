"""Frequency oracles: exact LDP ratio, unbiasedness, variance (CALM Section 2.2)."""

import math

import numpy as np
import pytest

from dpsynth.local import GRR, OLH, OUE, adaptive_oracle, fo_variance


def _max_log_ratio(oracle):
    """max over reports y and values v, v' of log P(y|v) - log P(y|v'), exactly."""
    D = oracle.domain_size
    worst = -np.inf
    for y in oracle.all_reports():
        logs = [oracle.log_probability(y, v) for v in range(D)]
        worst = max(worst, max(logs) - min(logs))
    return worst


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("make", [lambda e: GRR(5, e), lambda e: OUE(4, e),
                                  lambda e: OLH(6, e)])
def test_ldp_ratio_is_exactly_e_epsilon(make, epsilon):
    oracle = make(epsilon)
    assert _max_log_ratio(oracle) == pytest.approx(epsilon, abs=1e-12)


def test_probabilities_match_the_paper():
    e = math.exp(1.0)
    grr = GRR(10, 1.0)
    assert grr.p == pytest.approx(e / (e + 9)) and grr.q == pytest.approx(1 / (e + 9))
    assert OUE(10, 1.0).q == pytest.approx(1 / (e + 1))
    # GRR/OUE variances at frequency 0 are the paper's formulas (eqs. 1-3)
    assert grr.variance(100) == pytest.approx((10 - 2 + e) / ((e - 1) ** 2 * 100))
    assert OUE(10, 1.0).variance(100) == pytest.approx(4 * e / ((e - 1) ** 2 * 100))
    assert fo_variance(10, 1.0, 100) == pytest.approx(min(grr.variance(100),
                                                         OUE(10, 1.0).variance(100)))


def test_olh_variance_close_to_oue():
    for eps in (0.5, 1.0, 2.0, 4.0):
        olh, oue = OLH(1000, eps), OUE(1000, eps)
        assert olh.variance(1) <= 1.25 * oue.variance(1)


def test_adaptive_switch():
    for eps in (0.5, 1.0, 2.0):
        threshold = 3 * math.exp(eps) + 2
        for D in range(2, 40):
            oracle = adaptive_oracle(D, eps)
            assert isinstance(oracle, GRR) == (D < threshold)
            assert oracle.variance(1) == pytest.approx(fo_variance(D, eps, 1))
    assert isinstance(adaptive_oracle(100, 1.0, large_domain="olh"), OLH)


@pytest.mark.parametrize("oracle", [GRR(6, 1.0), OUE(6, 1.0), OLH(6, 1.0)],
                         ids=["grr", "oue", "olh"])
def test_unbiased_and_monte_carlo_variance(oracle):
    rng = np.random.default_rng(12345)
    freq = np.array([0.4, 0.3, 0.2, 0.1, 0.0, 0.0])
    n, reps = 400, 300
    values = np.repeat(np.arange(6), (freq * n).astype(int))
    est = np.array([oracle.estimate(oracle.perturb(values, rng))[0] for _ in range(reps)])
    expected_var = oracle.variance(n, freq)
    # unbiased: the mean is within 4 standard errors of the truth
    se = np.sqrt(expected_var / reps)
    assert np.all(np.abs(est.mean(axis=0) - freq) < 4 * se)
    # variance: a sample variance of `reps` draws has relative sd ~ sqrt(2 / reps)
    ratio = est.var(axis=0, ddof=1) / expected_var
    assert np.all(np.abs(ratio - 1) < 5 * np.sqrt(2 / reps))
    # the formula returned by estimate is the f = 0 variance
    assert oracle.estimate(oracle.perturb(values, rng))[1] == pytest.approx(oracle.variance(n))


def test_reports_are_compact_arrays():
    rng = np.random.default_rng(0)
    values = rng.integers(0, 20, 1000)
    assert GRR(20, 1.0).perturb(values, rng).shape == (1000,)
    assert OUE(20, 1.0).perturb(values, rng).dtype == np.uint8
    assert OUE(20, 1.0).perturb(values, rng).shape == (1000, 3)
    olh = OLH(20, 1.0)
    assert olh.perturb(values, rng).shape == (1000, olh.n_digits + 2)
    assert np.ndim(GRR(20, 1.0).perturb(3, rng)) == 0


def test_million_users_grr_works_on_arrays():
    # one array in, one array out (no per-user Python objects); speed is the benchmarks'
    rng = np.random.default_rng(0)
    values = rng.integers(0, 16, 1_000_000)
    reports = GRR(16, 1.0).perturb(values, rng)
    assert isinstance(reports, np.ndarray) and reports.shape == values.shape
    freq, _ = GRR(16, 1.0).estimate(reports)
    assert freq.sum() == pytest.approx(1.0)
    assert np.abs(freq - 1 / 16).max() < 0.01


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), "1", True])
def test_bad_epsilon(bad):
    with pytest.raises(ValueError, match="epsilon"):
        GRR(4, bad)


def test_bad_values_and_domain():
    with pytest.raises(ValueError, match="domain_size"):
        OUE(1, 1.0)
    with pytest.raises(ValueError, match="values"):
        GRR(4, 1.0).perturb([0, 4], np.random.default_rng(0))
    with pytest.raises(TypeError, match="values"):
        GRR(4, 1.0).perturb([0.5], np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_buckets"):
        OLH(10, 1.0, n_buckets=4)
    with pytest.raises(ValueError, match="empty"):
        GRR(4, 1.0).estimate(np.array([], dtype=int))
