"""Marginal-matching synthesis: denoising formulas, exact reproduction, privacy boundary."""

import numpy as np
import pandas as pd
import pytest
from scipy import integrate
from scipy.stats import norm

from dpsynth import DPAggregates, DPMarginalSynthesizer
from dpsynth._marginal_matching import MarginalMatcher, denoise_censored, rake
from dpsynth._marginals import exact_marginals
from dpsynth.metrics import marginal_tvd
from dpsynth.preprocessing import TableEncoder


def _dependent_table(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.choice(3, n)
    b = (a + rng.choice(2, n)) % 3
    c = rng.choice(2, n)
    d = (b + c + rng.choice(2, n, p=[0.8, 0.2])) % 4
    e = np.where(rng.random(n) < 0.1, None, (a * c).astype(str))
    return pd.DataFrame({"a": a, "b": b, "c": c, "d": d}).astype(str).assign(e=e)


def _exact_aggregates(frame, missing, reporting_length=3):
    encoder = TableEncoder(missing=missing).fit(frame)
    codes = encoder.transform(frame)
    ids = np.where(codes >= 0, codes + encoder.offsets_[:-1], -1).astype(np.int32)
    levels = exact_marginals(ids, encoder.attribute_columns_, frame.shape[1], reporting_length)
    zeros = {k: 0.0 for k in range(1, reporting_length + 1)}
    privacy = {"epsilon": 1.0, "noise_scales": zeros, "thresholds": zeros}
    return DPAggregates.from_release(encoder, levels, reporting_length, len(frame), privacy)


def _posterior_mean_numeric(m, v, noise, threshold):
    """E[c | c + e <= t] for c ~ N(m, v), e ~ N(0, noise^2), by quadrature."""
    def weight(c):
        return norm.pdf(c, m, np.sqrt(v)) * norm.cdf((threshold - c) / noise)
    lo, hi = m - 12 * np.sqrt(v), m + 12 * np.sqrt(v)
    mass = integrate.quad(weight, lo, hi, limit=200)[0]
    first = integrate.quad(lambda c: c * weight(c), lo, hi, limit=200)[0]
    return first / mass


@pytest.mark.parametrize("m,noise,threshold", [(5.0, 10.0, 0.5), (50.0, 20.0, 0.5),
                                               (0.5, 3.0, 2.0), (30.0, 60.0, 10.0)])
def test_censored_posterior_matches_numerical_integration(m, noise, threshold):
    # one released cell far from the prior pins kappa; the suppressed cell follows it
    prior = np.array([m, m])
    y = np.array([m + 3 * noise, 0.0])
    released = np.array([True, False])
    candidate = np.array([True, True])
    out = denoise_censored(prior, y, released, candidate, noise, threshold)
    # recover the kappa the function chose from the released cell's shrinkage
    shrink = (out[0] - m) / (y[0] - m)
    v = shrink * noise**2 / (1 - shrink)
    expected = max(_posterior_mean_numeric(m, v, noise, threshold), 0.0)
    assert out[1] == pytest.approx(expected, rel=1e-4, abs=1e-6)
    assert out[1] < m  # suppression is evidence of a small count


def test_denoise_without_noise_is_exact_and_non_candidates_keep_prior():
    prior = np.array([3.0, 3.0, 3.0])
    y = np.array([7.0, 0.0, 0.0])
    out = denoise_censored(prior, y, np.array([True, False, False]),
                           np.array([True, True, False]), 0.0, 0.5)
    np.testing.assert_array_equal(out, [7.0, 0.0, 3.0])


def test_rake_matches_margins():
    table = np.array([[1.0, 2.0], [3.0, 4.0]])
    raked = rake(table, np.array([5.0, 5.0]), np.array([4.0, 6.0]))
    np.testing.assert_allclose(raked.sum(axis=1), [5, 5])
    np.testing.assert_allclose(raked.sum(axis=0), [4, 6])


@pytest.mark.parametrize("missing", ["category", "absent"])
def test_noiseless_aggregates_are_reproduced(missing):
    frame = _dependent_table()
    aggregates = _exact_aggregates(frame, missing)
    synth = DPMarginalSynthesizer.from_aggregates(aggregates, random_state=0)
    out = synth.sample(len(frame))
    assert out.shape == frame.shape
    assert marginal_tvd(frame, out, k=1) < 0.002
    assert marginal_tvd(frame, out, k=2) < 0.005
    # with missing="absent" no combination holds an empty cell, so the joint
    # distribution of empty cells is only constrained through the 1-way counts
    assert marginal_tvd(frame, out, k=3) < (0.01 if missing == "category" else 0.02)


def test_marginal_matching_reads_only_the_aggregates(tmp_path):
    frame = _dependent_table(3000, seed=1)
    fitted = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(frame)
    expected = fitted.sample(500)
    path = tmp_path / "aggregates.json"
    fitted.aggregates_.save(path)
    del fitted.encoder_
    loaded = DPMarginalSynthesizer.from_aggregates(DPAggregates.load(path), random_state=0)
    pd.testing.assert_frame_equal(loaded.sample(500), expected)
    pd.testing.assert_frame_equal(fitted.sample(500), expected)


def test_marginal_matching_is_deterministic_and_seed_dependent():
    frame = _dependent_table(3000, seed=2)
    synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(frame)
    first = synth.sample(400)
    pd.testing.assert_frame_equal(first, synth.sample(400))
    assert not first.equals(synth.sample(400, random_state=1))
    assert synth.sample(0).shape == (0, frame.shape[1])


def test_marginal_matching_beats_aggregate_seeded_on_noisy_aggregates():
    frame = _dependent_table(4000, seed=3)
    synth = DPMarginalSynthesizer(epsilon=2.0, random_state=0).fit(frame)
    matched = synth.sample()
    seeded = synth.set_params(synthesis="aggregate_seeded").sample()
    assert marginal_tvd(frame, matched, k=2) < marginal_tvd(frame, seeded, k=2)


def test_three_way_targets_only_use_released_structure():
    frame = _dependent_table(3000, seed=4)
    aggregates = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(frame).aggregates_
    matcher = MarginalMatcher(aggregates)
    records = matcher.sample(300, np.random.default_rng(0))
    targets = matcher.three_way_targets(records.astype(np.int64), 300)
    released_triples = {tuple(int(c) for c in matcher.column_of[t]) for t in aggregates.tuples[2]}
    # triples whose data show no evidence against the population are skipped
    assert targets and set(targets) <= released_triples
    assert all(np.all(t >= 0) for t in targets.values())


def test_unknown_synthesis_is_rejected():
    frame = _dependent_table(500)
    with pytest.raises(ValueError, match="synthesis"):
        DPMarginalSynthesizer(synthesis="gan").fit(frame)
    synth = DPMarginalSynthesizer(random_state=0).fit(frame)
    with pytest.raises(ValueError, match="aggregate_seeded"):
        synth.sample(exhaust_counts=True)
