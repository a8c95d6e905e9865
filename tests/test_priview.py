"""PriView (central DP): the book's consistency example, noise scale w/eps, accounting."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from dpsynth.local import covering_design
from dpsynth.release import PriViewSynthesizer, priview_noise_error, view_counts
from dpsynth.views import make_consistent, project


def _binary(n, d, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 2, n)
    frame = pd.DataFrame({f"b{j}": np.where(rng.random(n) < 0.75, z, rng.integers(0, 2, n))
                          for j in range(d)}).astype(np.int64)
    return frame, {c: [0, 1] for c in frame}


def test_book_consistency_example_equal_weights():
    views = [((0, 1), np.array([[.3, .3], [.3, .1]])), ((0, 2), np.array([[.2, .3], [.1, .4]]))]
    out = make_consistent(views, [2, 2, 2], weights="equal")
    np.testing.assert_allclose(out[0][1].ravel(), [.275, .275, .325, .125], atol=1e-12)
    np.testing.assert_allclose(out[1][1].ravel(), [.225, .325, .075, .375], atol=1e-12)


def test_book_view_size_table():
    # Li et al. Section 6.3: ell = 8 minimises 2^(ell/2) / (ell (ell-1)) -> 0.286 / 0.048
    assert 2 ** 4 / (8 * 7) == pytest.approx(0.286, abs=5e-4)
    assert 2 ** 4 / (8 * 7 * 6) == pytest.approx(0.048, abs=5e-4)
    X, cats = _binary(500, 10)
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, strength=2, random_state=0).fit(X)
    assert synth.view_size_ == 8  # 2^8 = 256 cells


def test_noise_scale_is_w_over_epsilon_per_cell():
    X, cats = _binary(3000, 10)
    synth = PriViewSynthesizer(epsilon=0.5, view_size=4, strength=2, categories=cats,
                               random_state=1).fit(X)
    w = len(covering_design(10, 4, 2))
    assert len(synth.marginal_sets_) == w
    assert synth.noise_scale_ == pytest.approx(w / 0.5)
    codes = X.to_numpy()
    noise = np.concatenate([
        (t - view_counts(codes, a, [2] * 10)).ravel() for a, t in synth.noisy_views_])
    # Laplace(b): mean absolute deviation b, std sqrt(2) b
    assert np.abs(noise).mean() == pytest.approx(w / 0.5, rel=0.25)
    assert noise.std() == pytest.approx(math.sqrt(2) * w / 0.5, rel=0.3)


def test_accounting_against_independent_computation():
    X, cats = _binary(2000, 12)
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0).fit(X)
    spent = synth.privacy_spent_
    # sequential composition: the count (1/eps_c) plus the views (one record moves one
    # cell in each of the w views, L1 sensitivity w, Laplace scale w / eps_v)
    w = len(synth.marginal_sets_)
    eps_views = w / synth.noise_scale_
    eps_count = sum(s.epsilon for s in spent.mechanisms if s.name.startswith("record"))
    assert eps_count + eps_views == pytest.approx(1.0)
    assert spent["epsilon"] == pytest.approx(1.0) and spent["delta"] == 0.0
    fixed = PriViewSynthesizer(epsilon=1.0, strength=2, categories=cats, random_state=0).fit(X)
    assert fixed.noise_scale_ == pytest.approx(len(fixed.marginal_sets_) / 1.0)


def test_cnc_output_consistent_and_nonnegative():
    X, cats = _binary(1000, 10)
    synth = PriViewSynthesizer(epsilon=0.5, view_size=5, strength=2, categories=cats,
                               negativity_tol=0.5, n_rounds=10, random_state=2).fit(X)
    assert min(t.min() for _, t in synth.views_) >= -0.5  # counts: half a record
    for (a, t), (b, u) in itertools.combinations(synth.views_, 2):
        shared = tuple(sorted(set(a) & set(b)))
        np.testing.assert_allclose(project(t, a, shared), project(u, b, shared), atol=1e-7)
    # the common total estimates the number of records
    assert abs(synth.n_records_ - len(X)) < 10 * synth.noise_scale_


def test_accuracy_far_above_uniform_and_sampling():
    X, cats = _binary(20000, 10)
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=3).fit(X)
    cols = ["b0", "b4", "b9"]
    est = synth.marginal(cols)
    truth = pd.crosstab(X.b0, [X.b4, X.b9], normalize=True).to_numpy().reshape(2, 2, 2)
    assert ((est - truth) ** 2).sum() < 1e-3
    out = synth.sample(500)
    assert list(out.columns) == list(X.columns) and (out.dtypes == X.dtypes).all()


def test_eq_6_7():
    # err = 2^((ell+1)/2) / (N eps) * sqrt(w d (d-1) / (ell (ell - 1)))
    err = priview_noise_error(10_000, 1.0, 6, 16, 8)
    assert err == pytest.approx(2 ** 4.5 / 10_000 * math.sqrt(6 * 16 * 15 / 56))


def test_clone_and_reproducible():
    X, cats = _binary(1000, 6)
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=4)
    a = synth.fit(X).marginal(["b0", "b1"])
    b = clone(synth).fit(X).marginal(["b0", "b1"])
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("param, value", [("epsilon", -1), ("strength", 0),
                                          ("weights", "mean"), ("view_size", "big")])
def test_bad_parameters(param, value):
    X, cats = _binary(100, 4)
    with pytest.raises((ValueError, TypeError), match=param):
        PriViewSynthesizer(categories=cats, **{param: value}).fit(X)
