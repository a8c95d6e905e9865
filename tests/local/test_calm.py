"""CALM: Algorithm 1 against the paper's Table 2, and the estimator."""

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from dpsynth.exceptions import PrivacyLeakWarning
from dpsynth.local import (CALMSynthesizer, bounded_cover, calm_parameters, covering_design,
                           covering_number, select_marginals)
from dpsynth.covering import schoenheim_bound

EPSILONS = [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]


def _row(text):
    return [tuple(int(x) for x in cell.split(",")) for cell in text.split()]


# Zhang et al., CCS 2018, Table 2: (ell, m) per epsilon; all d = 8 rows and d = 16, k = 3
TABLE2 = {
    (8, 3, 16): "2,28 2,28 2,28 2,28 2,28 2,28 2,28 3,56 3,56 4,14",
    (8, 4, 16): "2,28 2,28 2,28 2,28 2,28 2,28 2,28 3,56 3,56 3,56",
    (8, 5, 16): "2,28 2,28 2,28 2,28 2,28 2,28 2,28 2,28 3,56 3,56",
    (8, 6, 16): "2,28 2,28 2,28 2,28 2,28 2,28 2,28 2,28 3,56 3,56",
    (8, 7, 16): "2,28 2,28 2,28 2,28 2,28 2,28 2,28 2,28 2,28 3,56",
    (8, 8, 16): "2,28 2,28 2,28 2,28 2,28 2,28 2,28 2,28 2,28 3,56",
    (8, 3, 18): "2,28 2,28 2,28 2,28 3,56 3,56 3,56 3,56 3,56 4,14",
    (8, 4, 18): "2,28 2,28 2,28 2,28 3,56 3,56 4,70 4,70 4,70 4,70",
    (8, 5, 18): "2,28 2,28 2,28 2,28 2,28 3,56 3,56 4,70 5,56 5,56",
    (8, 6, 18): "2,28 2,28 2,28 2,28 2,28 3,56 3,56 4,70 4,70 5,56",
    (8, 7, 18): "2,28 2,28 2,28 2,28 2,28 3,56 3,56 3,56 4,70 5,56",
    (8, 8, 18): "2,28 2,28 2,28 2,28 2,28 2,28 3,56 3,56 4,70 4,70",
    (16, 3, 16): "2,65 2,65 2,65 2,65 2,65 2,65 2,65 2,65 3,65 3,65",
    (16, 3, 18): "2,120 2,120 2,120 2,120 2,120 3,262 3,262 4,140 4,140 4,140",
}


@pytest.mark.parametrize("key", sorted(TABLE2))
def test_table2(key):
    d, k, log_n = key
    got = [calm_parameters(d, k, 2 ** log_n, eps) for eps in EPSILONS]
    assert got == _row(TABLE2[key])


def test_worked_example():
    ell, m, details = calm_parameters(8, 3, 2 ** 16, 2.0, return_details=True)
    assert (ell, m) == (4, 14)
    assert details["sampling_error"] == pytest.approx(14 / 2 ** 16)
    assert details["noise_error"] == pytest.approx(0.00077, abs=5e-6)
    for eps in (0.2, 0.6, 1.0, 1.4):  # "for eps <= 1.4 only ell = 2 fits"
        assert calm_parameters(8, 3, 2 ** 16, eps)[0] == 2


def test_covering_numbers():
    known = {(8, 4, 3): 14, (8, 5, 3): 8, (8, 6, 3): 4, (8, 7, 3): 4, (16, 4, 3): 140,
             (8, 3, 3): 56, (8, 5, 4): 20}
    for (v, k, t), number in known.items():
        assert covering_number(v, k, t) == number
    for v, k, t in [(8, 4, 3), (8, 5, 4), (16, 5, 3), (10, 4, 2), (12, 6, 3)]:
        blocks = covering_design(v, k, t)
        assert len(blocks) >= schoenheim_bound(v, k, t)
        assert all(len(b) == k for b in blocks)
        covered = {s for b in blocks for s in __import__("itertools").combinations(b, t)}
        assert len(covered) == math.comb(v, t)


def test_parameters_validation():
    with pytest.raises(ValueError, match="k"):
        calm_parameters(4, 5, 1000, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        calm_parameters(4, 2, 1000, 0)
    with pytest.raises(ValueError, match="cardinality"):
        calm_parameters(4, 2, 1000, 1.0, cardinality=[2, 3])
    # non-binary: more cells per marginal, so no larger marginals than binary
    assert calm_parameters(8, 3, 2 ** 18, 2.0, cardinality=3)[0] <= 4


def _planted(n, d, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 3, n)
    cols = {}
    for j in range(d):
        noise = rng.integers(0, 3, n)
        cols[f"c{j}"] = np.where(rng.random(n) < 0.7, z, noise)
    frame = pd.DataFrame(cols).astype(np.int64)
    return frame, {c: [0, 1, 2] for c in frame}


def _true_marginal(X, cols, cards):
    codes = X[cols].to_numpy()
    idx = np.ravel_multi_index(codes.T, cards)
    return np.bincount(idx, minlength=int(np.prod(cards))).reshape(cards) / len(X)


def test_fit_sample_marginal_roundtrip():
    X, cats = _planted(20000, 5)
    synth = CALMSynthesizer(epsilon=2.0, k=3, categories=cats, random_state=0).fit(X)
    assert synth.n_marginals_ == len(synth.marginal_sets_) == len(synth.oracles_)
    assert synth.group_sizes_.sum() == len(X)
    assert synth.group_sizes_.max() - synth.group_sizes_.min() <= 1
    sample = synth.sample(100)
    assert list(sample.columns) == list(X.columns)
    assert (sample.dtypes == X.dtypes).all()
    est = synth.marginal(["c3", "c0", "c1"])
    assert est.shape == (3, 3, 3) and est.sum() == pytest.approx(1.0) and est.min() >= 0
    truth = _true_marginal(X, ["c3", "c0", "c1"], (3, 3, 3))
    uniform = np.full((3, 3, 3), 1 / 27)
    # far better than the uniform baseline on planted correlations
    assert ((est - truth) ** 2).sum() < 0.2 * ((uniform - truth) ** 2).sum()
    frame = synth.marginal(["c1", "c2"], as_frame=True)
    assert list(frame.columns) == ["c1", "c2", "fraction"] and len(frame) == 9


def test_views_are_consistent_after_fit():
    X, cats = _planted(5000, 6)
    synth = CALMSynthesizer(epsilon=1.0, categories=cats, random_state=1).fit(X)
    from dpsynth.views import project
    views = synth.views_
    for i, (a, t) in enumerate(views):
        for b, u in views[i + 1:]:
            shared = tuple(sorted(set(a) & set(b)))
            np.testing.assert_allclose(project(t, a, shared), project(u, b, shared), atol=1e-9)


def test_privacy_spent_matches_an_independent_computation():
    X, cats = _planted(3000, 4)
    synth = CALMSynthesizer(epsilon=0.7, categories=cats, random_state=0).fit(X)
    assert synth.privacy_spent_["epsilon"] == 0.7
    assert synth.privacy_spent_["delta"] == 0.0
    # every user sends one report; the worst likelihood ratio of each oracle used is e^0.7
    for oracle in synth.oracles_:
        if oracle.name == "grr":
            worst = math.log(oracle.p / oracle.q)
        else:  # OUE: (1/2 / q) * ((1 - q) / (1/2))
            worst = math.log((1 - oracle.q) / oracle.q)
        assert worst == pytest.approx(synth.privacy_spent_["epsilon"], abs=1e-12)


def test_partition_does_not_depend_on_values():
    X, cats = _planted(3000, 4)
    a = CALMSynthesizer(epsilon=1.0, categories=cats, random_state=3).fit(X)
    Y = X.copy()
    Y.iloc[:, :] = 2 - Y.to_numpy()
    b = CALMSynthesizer(epsilon=1.0, categories=cats, random_state=3).fit(Y)
    np.testing.assert_array_equal(a.assign_groups(3000), b.assign_groups(3000))
    assert a.marginal_sets_ == b.marginal_sets_


def test_plan_perturb_fit_reports_equals_fit():
    X, cats = _planted(4000, 4)
    params = dict(epsilon=1.5, categories=cats, random_state=5)
    fitted = CALMSynthesizer(**params).fit(X)
    server = CALMSynthesizer(**params).plan(len(X), pd.DataFrame(cats))
    assert server.marginal_sets_ == fitted.marginal_sets_
    groups = server.assign_groups(len(X))
    reports = [server.perturb(X[groups == g], g, random_state=g) for g in
               range(server.n_marginals_)]
    server.fit_reports(reports)
    cols = [f"c{a}" for a in server.marginal_sets_[0][:2]]  # a pair inside a view
    est = server.marginal(cols)
    truth = _true_marginal(X, cols, (3, 3))
    assert np.abs(est - truth).max() < 0.1
    with pytest.raises(ValueError, match="reports"):
        server.fit_reports(reports[:-1])


def test_reproducible_and_clone():
    X, cats = _planted(2000, 4)
    synth = CALMSynthesizer(epsilon=1.0, categories=cats, random_state=7)
    a = synth.fit(X).marginal(["c0", "c1"])
    b = clone(synth).fit(X).marginal(["c0", "c1"])
    np.testing.assert_array_equal(a, b)
    assert clone(synth).get_params()["epsilon"] == 1.0
    pd.testing.assert_frame_equal(synth.sample(50), synth.sample(50))


def test_numeric_column_binned_with_public_bounds():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.integers(18, 90, 3000), "sex": rng.choice(["F", "M"], 3000)})
    synth = CALMSynthesizer(epsilon=2.0, k=2, bounds={"age": (18, 90)}, n_bins=3,
                            categories={"sex": ["F", "M"]}, random_state=0).fit(X)
    assert list(synth.cardinalities_) == [3, 2]
    out = synth.sample(200)
    assert out["age"].between(18, 90).all() and out["age"].dtype == X["age"].dtype


def test_undeclared_domain_warns_and_missing_is_an_error():
    X, _ = _planted(500, 3)
    with pytest.warns(PrivacyLeakWarning, match="c0"):
        CALMSynthesizer(epsilon=1.0, random_state=0).fit(X)
    Y = X.astype(object)
    Y.iloc[0, 1] = None
    declared = {c: [0, 1, 2] for c in X}
    with pytest.raises(ValueError, match="c1"):
        CALMSynthesizer(epsilon=1.0, categories=declared, random_state=0).fit(Y)
    synth = CALMSynthesizer(epsilon=1.0, categories=declared, allow_missing=True,
                            random_state=0).fit(Y)
    assert list(synth.cardinalities_) == [4, 4, 4]
    # values read from the data (warned): the missing value is read too, where present
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        synth = CALMSynthesizer(epsilon=1.0, random_state=0).fit(Y)
    assert list(synth.cardinalities_) == [3, 4, 3]
    assert synth.sample(50).shape == (50, 3)


@pytest.mark.parametrize("param, value", [("epsilon", 0), ("epsilon", "1"), ("k", 0),
                                          ("binning", "quantile"), ("large_domain", "x")])
def test_bad_parameters(param, value):
    X, cats = _planted(200, 3)
    with pytest.raises((ValueError, TypeError), match=param):
        CALMSynthesizer(categories=cats, **{param: value}).fit(X)


def test_bad_marginal_query():
    X, cats = _planted(1000, 3)
    synth = CALMSynthesizer(epsilon=1.0, categories=cats, random_state=0).fit(X)
    with pytest.raises(ValueError, match="nope"):
        synth.marginal(["c0", "nope"])
    with pytest.raises(ValueError, match="repeated"):
        synth.marginal(["c0", "c0"])
    with pytest.raises(ValueError, match="n_samples"):
        synth.sample(-1)
    # zero records: the fitted columns and dtypes, as DPMarginalSynthesizer gives
    empty = synth.sample(0)
    assert empty.shape == (0, X.shape[1]) and list(empty.columns) == list(X.columns)
    pd.testing.assert_series_equal(empty.dtypes, synth.sample(5).dtypes)


def test_given_ell_uses_algorithm_1_rule_for_m():
    X, cats = _planted(14000, 8)
    synth = CALMSynthesizer(epsilon=1.0, ell=4, categories=cats, random_state=0).fit(X)
    # m = min(floor(theta n), CoverDesign(8, 3, 4)) = min(14, 14)
    assert (synth.ell_, synth.n_marginals_) == (4, 14)
    assert synth.marginal_sets_ == covering_design(8, 4, 3)
    synth = CALMSynthesizer(epsilon=1.0, ell=3, n_marginals=10, categories=cats,
                            random_state=0).fit(X)
    assert (synth.ell_, synth.n_marginals_) == (3, 10)
    usage = np.bincount(np.concatenate(synth.marginal_sets_), minlength=8)
    assert usage.max() - usage.min() <= 1  # balanced choice of the 10 sets


def test_plan_accepts_a_dict_domain():
    cats = {"a": ["x", "y", "z"], "b": [0, 1]}
    server = CALMSynthesizer(epsilon=1.0, k=2, categories=cats, random_state=0).plan(5000, cats)
    assert list(server.cardinalities_) == [3, 2]
    assert list(server.feature_names_in_) == ["a", "b"]
    unseeded = CALMSynthesizer(epsilon=1.0, k=2, categories=cats).plan(5000, cats)
    np.testing.assert_array_equal(unseeded.assign_groups(5000), unseeded.assign_groups(5000))


def _cells(view, cards):
    return math.prod(cards[a] for a in view)


@pytest.mark.parametrize("cards, budget, strength", [
    ([87, 2, 3, 4, 5, 6, 8, 10, 12, 16], 4096, 2),
    ([87, 2, 3, 4, 5, 6, 8, 10, 12, 16], 256, 3),
    ([40, 50, 3, 2, 2], 64, 2),
    ([3, 4, 5, 6, 7, 2], 512, 3),
])
def test_bounded_cover_holds_every_pair_within_the_budget(cards, budget, strength):
    views = bounded_cover(cards, budget, strength)
    assert views == sorted(set(views)) and all(list(v) == sorted(v) for v in views)
    d = len(cards)
    for pair in itertools.combinations(range(d), 2):
        assert any(set(pair) <= set(v) for v in views)
    for triple in itertools.combinations(range(d), 3):
        if strength >= 3 and _cells(triple, cards) <= budget:
            assert any(set(triple) <= set(v) for v in views)
    for v in views:  # within the budget, but for a pair too large on its own
        assert _cells(v, cards) <= budget or len(v) == 2
    smallest = sorted(cards[1:])
    if cards[0] * smallest[0] * smallest[1] <= budget:  # views built around column 0
        assert any(0 in v and len(v) >= 3 for v in views)


def test_bounded_cover_is_the_covering_design_on_equal_columns():
    assert bounded_cover([2] * 10, 256) == covering_design(10, 8, 2)
    assert bounded_cover([2] * 10, 300, 3) == covering_design(10, 8, 3)
    assert bounded_cover([3] * 9, 81, 2) == covering_design(9, 4, 2)
    assert bounded_cover([2] * 12, 4096, max_size=8) == covering_design(12, 8, 2)
    assert all(len(v) <= 3 for v in bounded_cover([5, 2, 2, 3, 2, 4], 10 ** 6, max_size=3))


@pytest.mark.parametrize("cards, budget", [([2, 0, 3], 16), ([2, 3], 0), ([2, 3], True)])
def test_bounded_cover_validation(cards, budget):
    with pytest.raises(ValueError, match="cardinalities|max_cells"):
        bounded_cover(cards, budget)


def test_many_valued_column_is_in_calm_marginals_like_any_other():
    # Algorithm 1 has no cell budget: the marginal size comes from the mean cells of an
    # ell-set, and every column, the 87-value one too, is in about m * ell / d marginals
    rng = np.random.default_rng(0)
    n = 20000
    big = rng.integers(0, 87, n)
    X = pd.DataFrame({"big": big, "a": big % 3, "b": rng.integers(0, 4, n),
                      "c": (big // 30 + rng.integers(0, 2, n)) % 3, "e": rng.integers(0, 2, n)})
    cats = {"big": list(range(87)), "a": [0, 1, 2], "b": [0, 1, 2, 3], "c": [0, 1, 2],
            "e": [0, 1]}
    synth = CALMSynthesizer(epsilon=4.0, categories=cats, random_state=0).fit(X)
    ell, m = calm_parameters(5, 3, n, 4.0, cardinality=[87, 3, 4, 3, 2])
    assert (synth.ell_, synth.n_marginals_) == (ell, m)
    use = np.bincount(np.concatenate(synth.marginal_sets_), minlength=5)
    assert use.min() >= 1 and use.max() - use.min() <= 1
    # the (big, a) association survives in the released marginal (a = big mod 3)
    est = synth.marginal(["big", "a"])
    assert est[np.arange(87), np.arange(87) % 3].sum() > 0.6


def test_bounded_cover_strength_one_packs_each_attribute_once():
    cards = [21, 3, 7, 11, 4, 9, 13, 6, 5, 3, 8, 2]
    views = bounded_cover(cards, 1024, 1, max_size=4)
    assert sorted(a for v in views for a in v) == list(range(len(cards)))
    assert all(_cells(v, cards) <= 1024 and len(v) <= 4 for v in views)


@pytest.mark.parametrize("n_users, epsilon", [(20_000, 1.0), (200_000, 4.0)])
def test_default_marginals_hold_a_many_valued_column_with_the_others(n_users, epsilon):
    # non-binary defaults: Algorithm 1 on the mean cells of an ell-set, and the
    # marginals use every column about equally, the 60-value one like the others;
    # no marginal size leaves it alone (PriView's fixed 256-cell views did)
    cards = [60, 3, 3, 6, 7, 10, 4, 11, 4, 21]
    ell, m = calm_parameters(10, 3, n_users, epsilon, cardinality=cards)
    assert ell == 2  # more cells per marginal than binary: the smallest size
    sets = select_marginals(10, ell, m, 3, np.random.default_rng(0))
    usage = np.bincount([a for s in sets for a in s], minlength=10)
    assert usage.min() >= (2 * m) // 10 and usage.max() - usage.min() <= 1
    with_big = {b for s in sets if 0 in s for b in s} - {0}
    assert len(with_big) == usage[0]  # each of its marginals pairs it with another column
    if m >= math.comb(10, 2):
        assert len(with_big) == 9  # enough users: every pair is a marginal


def _calm_plan(n_users, epsilon, cards):
    cats = {f"c{j}": list(range(c)) for j, c in enumerate(cards)}
    return CALMSynthesizer(epsilon=epsilon, categories=cats, random_state=0).plan(n_users, cats)


@pytest.mark.parametrize("n_users, epsilon, ell", [(20_000, 1.0, 1), (20_000, 4.0, 1),
                                                   (200_000, 4.0, 2)])
def test_default_plan_reports_columns_alone_when_pairs_are_noise(n_users, epsilon, ell):
    # a many-valued table: Algorithm 1 takes pairs (ell = 2) whatever the noise; when the
    # oracle's noise would bury a pair's table (expected total variation above
    # CALM_PAIR_TVD_LIMIT), each column is reported alone, every column once
    from dpsynth.local.calm import CALM_PAIR_TVD_LIMIT, pair_noise_tvd
    cards = [60, 3, 3, 6, 7, 10, 4, 11, 4, 21]
    alg_ell, alg_m = calm_parameters(10, 3, n_users, epsilon, cardinality=cards)
    assert alg_ell == 2
    noisy = pair_noise_tvd(n_users, alg_m, epsilon, cards) > CALM_PAIR_TVD_LIMIT
    assert noisy == (ell == 1)
    server = _calm_plan(n_users, epsilon, cards)
    assert server.ell_ == ell
    if ell == 1:
        assert sorted(server.marginal_sets_) == [(j,) for j in range(10)]
    else:
        assert server.n_marginals_ == alg_m


def test_default_plan_on_binary_table2_is_algorithm_1():
    # the binary rows of Table 2 keep Algorithm 1's (ell, m), but the one whose pairs' tables
    # hold the most noise (d = 16, n = 2^16, epsilon 0.2: 4-cell tables from ~1,000 users
    # each, expected total variation 0.41)
    for d, log_n, eps in [(8, 16, 0.2), (8, 16, 1.0), (8, 18, 2.0), (16, 18, 0.2),
                          (16, 16, 1.0)]:
        server = _calm_plan(2 ** log_n, eps, [2] * d)
        assert (server.ell_, server.n_marginals_) == calm_parameters(d, 3, 2 ** log_n, eps)
    assert _calm_plan(2 ** 16, 0.2, [2] * 16).ell_ == 1


def test_default_plan_puts_every_column_in_a_marginal_with_few_users():
    # theta n = 7 marginals for 21 columns: Algorithm 1 would leave 7 columns out (drawn
    # uniformly); the plan takes ceil(d / ell) marginals at least
    cards = [5, 3, 4, 2, 6, 3, 2, 4, 5, 3, 2, 6, 4, 3, 2, 5, 3, 4, 2, 3, 6]
    assert calm_parameters(21, 3, 7634, 4.0, cardinality=cards)[1] == 7
    server = _calm_plan(7634, 4.0, cards)
    assert server.n_marginals_ >= math.ceil(21 / server.ell_)
    assert sorted({a for s in server.marginal_sets_ for a in s}) == list(range(21))



def _latent_table(n, cards, seed):
    # a latent class drives every column, with skewed (Zipf-like) values: the regime of
    # benchmarks/run_priview.py's synth87 tables
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 4, n)
    cols = {}
    for j, c in enumerate(cards):
        popularity = 1.0 / np.arange(1, c + 1) ** 1.2
        by_class = np.array([rng.dirichlet(0.3 * c * popularity / popularity.sum() + 0.02)
                             for _ in range(4)])
        u = rng.random(n)
        cols[f"c{j}"] = (by_class[z].cumsum(axis=1) < u[:, None]).sum(axis=1).clip(0, c - 1)
    return pd.DataFrame(cols)


def test_defaults_do_not_collapse_on_a_many_valued_table():
    # 20,000 users, a 60-value column among columns of 5-12 values: Algorithm 1 takes
    # pairs whose tables would be mostly noise; the default reports the columns alone,
    # which at epsilon 1 is far closer to the table than the pairs, gains with epsilon, and
    # at epsilon 4 is about as close as shuffling each (exact) column independently
    from dpsynth.metrics import marginal_tvd
    cards = (60, 6, 8, 10, 12, 5)
    X = _latent_table(20_000, cards, 1)
    cats = {c: list(range(k)) for c, k in zip(X.columns, cards)}
    rng = np.random.default_rng(1)
    uniform = marginal_tvd(X, pd.DataFrame({c: rng.choice(cats[c], len(X)) for c in X}), k=3)
    shuffled = marginal_tvd(X, pd.DataFrame({c: rng.permutation(X[c].to_numpy()) for c in X}),
                            k=3)

    def tvd(epsilon, **params):
        synth = CALMSynthesizer(epsilon=epsilon, categories=cats, random_state=0,
                                **params).fit(X)
        return synth.ell_, marginal_tvd(X, synth.sample(random_state=1), k=3)

    ell_1, default_1 = tvd(1.0)
    ell_4, default_4 = tvd(4.0)
    _, pairs_1 = tvd(1.0, ell=2)
    assert calm_parameters(6, 3, 20_000, 1.0, cardinality=cards)[0] == 2
    assert ell_1 == ell_4 == 1
    assert default_1 < pairs_1 - 0.1
    assert default_4 < default_1 - 0.1
    assert default_4 < shuffled + 0.03 and default_4 < 0.5 * uniform
