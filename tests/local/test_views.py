"""Consistency (1/C_i weights), Ripple non-negativity and maximum entropy."""

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning

from dpsynth.views import (ViewSet, answer_marginal, make_consistent, maximum_entropy,
                           postprocess, project, ripple)


def _random_views(rng, cards, sets, scale=0.05):
    views = []
    for s in sets:
        shape = tuple(cards[a] for a in s)
        views.append((s, np.full(shape, 1 / np.prod(shape)) + rng.normal(0, scale, shape)))
    return views


def test_book_consistency_example():
    # Li et al., Section 6.3 (digest 4.4)
    views = [((0, 1), np.array([[.3, .3], [.3, .1]])), ((0, 2), np.array([[.2, .3], [.1, .4]]))]
    out = make_consistent(views, [2, 2, 2])
    np.testing.assert_allclose(out[0][1].ravel(), [.275, .275, .325, .125], atol=1e-12)
    np.testing.assert_allclose(out[1][1].ravel(), [.225, .325, .075, .375], atol=1e-12)
    np.testing.assert_allclose(project(out[0][1], (0, 1), (0,)), [.55, .45], atol=1e-12)
    # attributes not shared are untouched
    np.testing.assert_allclose(project(out[0][1], (0, 1), (1,)), [.6, .4], atol=1e-12)
    np.testing.assert_allclose(project(out[1][1], (0, 2), (2,)), [.3, .7], atol=1e-12)
    assert views[0][1][0, 0] == .3  # input not modified


def test_weights_are_one_over_cells():
    # view (0,1) has C = 3 cells per value of 0; view (0,) has C = 1
    a = ((0, 1), np.array([[0.3, 0.3, 0.3], [0.0, 0.05, 0.05]]))  # projection (0.9, 0.1)
    b = ((0,), np.array([0.5, 0.5]))
    out = make_consistent([a, b], [2, 3])
    w = np.array([1 / 3, 1.0])
    expected = (w[0] * np.array([0.9, 0.1]) + w[1] * np.array([0.5, 0.5])) / w.sum()
    np.testing.assert_allclose(out[1][1], expected)
    np.testing.assert_allclose(project(out[0][1], (0, 1), (0,)), expected)


def test_overall_consistency_on_many_views():
    rng = np.random.default_rng(0)
    cards = [2, 3, 4, 2, 3, 2]
    sets = [(0, 1, 2), (1, 2, 3), (0, 3, 4), (2, 4, 5), (0, 5), (1, 4, 5)]
    views = _random_views(rng, cards, sets)
    out = make_consistent(views, cards)
    for (a, t), (b, u) in itertools.combinations(out, 2):
        shared = tuple(sorted(set(a) & set(b)))
        np.testing.assert_allclose(project(t, a, shared), project(u, b, shared), atol=1e-9)
    # order of the views does not change the result
    rev = make_consistent(views[::-1], cards)[::-1]
    for (a, t), (_, u) in zip(out, rev):
        np.testing.assert_allclose(t, u, atol=1e-9)


def test_consistency_is_independent_of_the_topological_order(monkeypatch):
    import dpsynth.views as views_module
    rng = np.random.default_rng(8)
    cards = [2, 3, 2, 2, 3]
    sets = [(0, 1, 2), (1, 2, 3), (0, 3, 4), (1, 4), (2, 3, 4)]
    views = _random_views(rng, cards, sets)
    out = make_consistent(views, cards)
    original = views_module._consistency_plan.__wrapped__

    def reversed_within_size(sets_):
        plan = list(original(sets_))
        return tuple(sorted(plan, key=lambda p: (len(p[0]), [-a for a in p[0]])))

    monkeypatch.setattr(views_module, "_consistency_plan", reversed_within_size)
    other = make_consistent(views, cards)
    assert [p[0] for p in reversed_within_size(tuple(frozenset(s) for s in sets))] != \
        [p[0] for p in original(tuple(frozenset(s) for s in sets))]
    for (_, t), (_, u) in zip(out, other):
        np.testing.assert_allclose(t, u, atol=1e-9)


def test_single_view_and_disjoint_views_are_untouched_except_totals():
    rng = np.random.default_rng(1)
    cards = [2, 3, 2, 2]
    views = _random_views(rng, cards, [(0, 1), (2, 3)])
    out = make_consistent(views, cards)
    # only the totals are reconciled (the empty set); the shapes within are kept
    for (a, t), (_, u) in zip(views, out):
        np.testing.assert_allclose(u - u.mean(), t - t.mean(), atol=1e-12)
    assert out[0][1].sum() == pytest.approx(out[1][1].sum())


@pytest.mark.parametrize("shape", [(2, 2), (3, 4, 2), (5,), (2, 2, 2, 2)])
def test_ripple_keeps_total_and_clears_negatives(shape):
    rng = np.random.default_rng(2)
    tol = 1e-4
    for _ in range(5):
        t = np.full(shape, 1 / np.prod(shape)) + rng.normal(0, 0.1, shape)
        t += (1 - t.sum()) / t.size  # a positive total
        out, n_iter = ripple(t, tol)
        assert out.sum() == pytest.approx(t.sum(), abs=1e-12)
        assert out.min() >= -tol
        assert n_iter < 1000


def test_ripple_neighbours():
    t = np.array([[-0.2, 0.5, 0.3], [0.2, 0.1, 0.1]])
    out, _ = ripple(t, 1e-9)
    # h = (2-1) + (3-1) = 3 neighbours of (0, 0): (1, 0), (0, 1), (0, 2)
    expected = t.copy()
    expected[0, 0] = 0
    expected[1, 0] -= 0.2 / 3
    expected[0, 1] -= 0.2 / 3
    expected[0, 2] -= 0.2 / 3
    np.testing.assert_allclose(out, expected)


def test_postprocess_is_consistent_and_nearly_nonnegative():
    rng = np.random.default_rng(3)
    cards = [3, 3, 3, 3]
    views = _random_views(rng, cards, [(0, 1, 2), (1, 2, 3), (0, 3)], scale=0.03)
    out, rounds = postprocess(views, cards, tol=1e-3, n_rounds=20)
    assert min(t.min() for _, t in out) >= -1e-3
    for (a, t), (b, u) in itertools.combinations(out, 2):
        shared = tuple(sorted(set(a) & set(b)))
        np.testing.assert_allclose(project(t, a, shared), project(u, b, shared), atol=1e-9)


def test_maximum_entropy_of_disjoint_constraints_is_the_product():
    p, q = np.array([0.2, 0.8]), np.array([0.1, 0.6, 0.3])
    table, info = maximum_entropy([((0,), p), ((1,), q)], (0, 1), [2, 3])
    np.testing.assert_allclose(table, np.outer(p, q), atol=1e-12)
    assert info.converged and info.method == "maxent"


def test_maximum_entropy_beats_other_feasible_tables():
    rng = np.random.default_rng(4)
    joint = rng.dirichlet(np.ones(8)).reshape(2, 2, 2)
    cons = [((0, 1), joint.sum(2)), ((1, 2), joint.sum(0)), ((0, 2), joint.sum(1))]
    table, info = maximum_entropy(cons, (0, 1, 2), [2, 2, 2], tol=1e-12, max_iter=10_000)
    for sub, target in cons:
        np.testing.assert_allclose(project(table, (0, 1, 2), sub), target, atol=1e-9)

    def entropy(t):
        t = t[t > 0]
        return -(t * np.log(t)).sum()
    # the feasible tables form the line joint + s * (+-1 checkerboard)
    sign = np.fromfunction(lambda i, j, k: (-1) ** (i + j + k), (2, 2, 2))
    for s in np.linspace(-0.05, 0.05, 21):
        other = joint + s * sign
        if other.min() >= 0:
            assert entropy(table) >= entropy(other) - 1e-9


def test_maximum_entropy_reports_the_iteration_cap():
    rng = np.random.default_rng(7)
    joint = rng.dirichlet(np.ones(27)).reshape(3, 3, 3)
    cons = [((0, 1), joint.sum(2)), ((1, 2), joint.sum(0)), ((0, 2), joint.sum(1))]
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        _, info = maximum_entropy(cons, (0, 1, 2), [3, 3, 3], tol=1e-14, max_iter=2)
    assert not info.converged and info.n_iter == 2 and info.max_violation > 1e-14
    _, info = maximum_entropy(cons, (0, 1, 2), [3, 3, 3], tol=1e-10, max_iter=10_000)
    assert info.converged and info.max_violation <= 1e-10


def test_maximum_entropy_with_inconsistent_constraints_settles():
    # no table has both projections: IPF stops at a fixed point and reports the gap
    cons = [((0,), np.array([0.5, 0.5])), ((0, 1), np.array([[0.9, 0.0], [0.1, 0.0]]))]
    table, info = maximum_entropy(cons, (0, 1), [2, 2])
    assert info.converged and info.max_violation == pytest.approx(0.4)
    assert table.sum() == pytest.approx(1.0)


def test_answer_marginal_direct_and_maxent():
    rng = np.random.default_rng(5)
    joint = rng.dirichlet(np.ones(27)).reshape(3, 3, 3)
    views = [((0, 1), joint.sum(2)), ((1, 2), joint.sum(0))]
    direct, info = answer_marginal(views, (1,), [3, 3, 3])
    assert info.method == "direct"
    np.testing.assert_allclose(direct, joint.sum((0, 2)))
    table, info = answer_marginal(views, (0, 1, 2), [3, 3, 3])
    assert info.method == "maxent" and sorted(info.constraints) == [(0, 1), (1, 2)]
    # max entropy given (0,1) and (1,2) is the conditional-independence model
    mid = joint.sum((0, 2))
    expected = joint.sum(2)[:, :, None] * joint.sum(0)[None, :, :] / mid[None, :, None]
    np.testing.assert_allclose(table, expected, atol=1e-7)


def test_viewset_sampling_follows_the_views():
    rng = np.random.default_rng(6)
    joint = rng.dirichlet(np.ones(12)).reshape(2, 3, 2)
    views = [((0, 1), joint.sum(2)), ((1, 2), joint.sum(0))]
    codes = ViewSet(views, [2, 3, 2]).sample(20000, np.random.default_rng(0))
    emp = np.zeros((2, 3))
    np.add.at(emp, (codes[:, 0], codes[:, 1]), 1)
    np.testing.assert_allclose(emp / 20000, joint.sum(2), atol=0.02)


def test_viewset_sample_matches_every_view_not_only_one_per_attribute():
    # three pairwise views of a joint whose (0, 2) association is not implied by the
    # chain 0 - 1 - 2 that a one-view-per-attribute draw follows
    joint = np.zeros((2, 2, 2))
    joint[0, 0, 0], joint[1, 1, 1], joint[0, 1, 0], joint[1, 0, 1] = 0.3, 0.3, 0.2, 0.2
    views = [((0, 1), joint.sum(2)), ((1, 2), joint.sum(0)), ((0, 2), joint.sum(1))]
    view_set = ViewSet(views, [2, 2, 2])

    def gap(codes):
        emp = np.zeros((2, 2))
        np.add.at(emp, (codes[:, 0], codes[:, 2]), 1)
        return 0.5 * np.abs(emp / len(codes) - joint.sum(1)).sum()

    # the draw alone, and the raked pool (without the coordinate descent after it)
    chain = view_set.sample(20000, np.random.default_rng(0), pool_factor=1, sweeps=0)
    raked = view_set.sample(20000, np.random.default_rng(0), sweeps=0)
    assert gap(chain) > 0.2  # x0 and x2 drawn independently given x1
    assert gap(raked) < 0.03
    for attrs, table in views:  # and the other views still hold
        emp = np.zeros((2, 2))
        np.add.at(emp, (raked[:, attrs[0]], raked[:, attrs[1]]), 1)
        np.testing.assert_allclose(emp / len(raked), table, atol=0.03)


def test_viewset_sample_descends_onto_many_overlapping_views():
    # every pair of 8 columns is a view (a strength-2 cover): the raked pool, drawn
    # from one view per column, misses the pairs no draw followed; the coordinate
    # descent moves the records until every view holds
    rng = np.random.default_rng(3)
    n, cards = 20000, [3, 4, 3, 5, 2, 4, 3, 6]
    z = rng.integers(0, 4, n)
    X = np.column_stack([(z * (j + 1) + (rng.random(n) < 0.3) * rng.integers(0, c, n)) % c
                         for j, c in enumerate(cards)])
    views = []
    for a, b in itertools.combinations(range(8), 2):
        table = np.zeros((cards[a], cards[b]))
        np.add.at(table, (X[:, a], X[:, b]), 1)
        views.append(((a, b), table))  # counts: the descent rescales them to the sample

    def gap(codes):
        out = []
        for (a, b), table in views:
            emp = np.zeros_like(table)
            np.add.at(emp, (codes[:, a], codes[:, b]), 1)
            out.append(0.5 * np.abs(emp / len(codes) - table / n).sum())
        return np.mean(out)

    view_set = ViewSet(views, cards)
    raked = view_set.sample(5000, np.random.default_rng(0), sweeps=0)
    fitted = view_set.sample(5000, np.random.default_rng(0))
    assert fitted.shape == (5000, 8) and fitted.dtype == np.int32
    assert gap(fitted) < 0.003 and gap(fitted) < gap(raked) / 4
    # the same stream gives the same records
    np.testing.assert_array_equal(fitted, view_set.sample(5000, np.random.default_rng(0)))


def test_viewset_sample_survives_views_that_zero_every_candidate():
    # noisy views may put 0 where the others put all the mass: the weights stay finite
    views = [((0,), np.array([1.0, 0.0])), ((0, 1), np.array([[0.0, 0.0], [0.5, 0.5]]))]
    with np.errstate(all="raise"):
        codes = ViewSet(views, [2, 2]).sample(500, np.random.default_rng(1))
    assert codes.shape == (500, 2) and codes.min() >= 0 and codes.max() <= 1


def test_inverse_cdf_kernel_draws_each_records_conditional():
    from dpsynth.views import _inverse_cdf
    rng = np.random.default_rng(3)
    cond = rng.dirichlet(np.ones(5), size=7)
    cond[2] = [0, 0, 1, 0, 0]  # a point mass, and zero-probability values around it
    idx = rng.integers(0, 7, 50_000)
    u = rng.random(50_000)
    reference = (u[:, None] >= np.cumsum(cond, axis=1)[idx]).sum(axis=1).clip(0, 4)
    out = _inverse_cdf(cond, idx, u)
    np.testing.assert_array_equal(out, reference)
    assert (out[idx == 2] == 2).all()
    # boundaries: u = 0 takes the first value of positive mass, u -> 1 the last
    edge = _inverse_cdf(np.array([[0.0, 0.5, 0.5, 0.0]]), np.zeros(2, np.int64),
                        np.array([0.0, 1 - 1e-16]))
    np.testing.assert_array_equal(edge, [1, 2])


def test_rake_on_distinct_rows_equals_raking_every_candidate():
    # the compiled sweeps over the pool's distinct rows give every copy of a row the
    # weight that raking each candidate separately gives it
    rng = np.random.default_rng(4)
    cards = [2, 3, 4]
    views = _random_views(rng, cards, [(0, 1), (1, 2), (0, 2)], scale=0.01)
    views = [(a, np.clip(t, 0, None)) for a, t in views]
    view_set = ViewSet(views, cards)
    pool = view_set._draw(3000, rng)  # 24 possible rows: many duplicates
    got = view_set._rake(pool, max_iter=7, tol=0.0)
    smoothing = 1.0 / len(pool)
    weights = np.full(len(pool), 1.0 / len(pool))
    for _ in range(7):
        for attrs, table in views:
            cell = np.ravel_multi_index(tuple(pool[:, a] for a in attrs), table.shape)
            target = table.ravel() / table.sum()
            current = np.bincount(cell, weights=weights, minlength=target.size)
            weights = weights * ((target + smoothing)
                                 / (current / current.sum() + smoothing))[cell]
    np.testing.assert_allclose(got, weights, rtol=1e-10)


@pytest.mark.parametrize("cards", [[3, 4, 5], [2 ** 21] * 3])  # packed keys, and rows
def test_distinct_rows_of_the_pool(cards):
    from dpsynth.views import _distinct_rows
    codes = np.array([[0, 1, 2], [2, 3, 4], [0, 1, 2], [1, 0, 0], [2, 3, 4], [0, 1, 2]],
                     dtype=np.int32)
    rows, inverse, counts = _distinct_rows(codes, cards)
    np.testing.assert_array_equal(rows[inverse], codes)
    assert len(rows) == 3 and sorted(counts.tolist()) == [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(counts, np.bincount(inverse))


# scikit-learn's common checks on the two view-based estimators
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from dpsynth.local import CALMSynthesizer  # noqa: E402
from dpsynth.release import PriViewSynthesizer  # noqa: E402


@pytest.mark.filterwarnings("ignore::dpsynth.exceptions.PrivacyLeakWarning")
@parametrize_with_checks([CALMSynthesizer(random_state=0), PriViewSynthesizer(random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_make_consistent_variances_weight_each_view_by_its_noise():
    # a one-column table measured with 1/100 of the views' cell variance: the
    # consensus on that column is the inverse-variance mean (weights 1 / (C_i v_i))
    view = ((0, 1), np.array([[30.0, 10.0], [20.0, 40.0]]))
    one = ((0,), np.array([60.0, 40.0]))
    out = make_consistent([view, one], [2, 2], variances=[1.0, 0.01])
    w = np.array([1 / 2, 1 / 0.01])  # the view sums 2 cells into each cell of column 0
    expected = (w[0] * np.array([40.0, 60.0]) + w[1] * np.array([60.0, 40.0])) / w.sum()
    np.testing.assert_allclose(out[0][1].sum(axis=1), expected)
    np.testing.assert_allclose(out[1][1], expected)
    # equal variances: the same as no variances
    plain = make_consistent([view, one], [2, 2])
    same = make_consistent([view, one], [2, 2], variances=[3.0, 3.0])
    for (_, a), (_, b) in zip(plain, same):
        np.testing.assert_allclose(a, b)
    with pytest.raises(ValueError, match="variances"):
        make_consistent([view, one], [2, 2], variances=[1.0])


@pytest.mark.parametrize("estimator", ["priview", "calm"])
def test_allow_missing_gives_nullable_dtypes_whatever_the_sample(estimator):
    # with allow_missing every column may come back missing: an int or bool column's
    # dtype is its nullable one for every sample, not only for those holding a NaN
    from dpsynth import CALMSynthesizer, PriViewSynthesizer

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.integers(0, 5, 1500), "flag": rng.random(1500) < 0.3,
                      "city": rng.choice(["a", "b", "c"], 1500)})
    X.loc[:100, "city"] = None
    cls = PriViewSynthesizer if estimator == "priview" else CALMSynthesizer
    synth = cls(epsilon=2.0, allow_missing=True, random_state=0).fit(X)
    for n in (5, 1500):
        out = synth.sample(n)
        assert out["age"].dtype == "Int64" and out["flag"].dtype == "boolean", n
        assert out["city"].dtype == X["city"].dtype
    assert cls(epsilon=2.0, random_state=0).fit(X.dropna()).sample(50)["age"].dtype == np.int64


@pytest.mark.filterwarnings("ignore::dpsynth.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("estimator", ["priview", "calm"])
def test_period_and_sparse_columns_come_back_in_their_dtype(estimator):
    # check_table reads a period column as its start instants and a sparse one as its
    # dense values; sample gave them back as datetime64 and dense (DPMarginalSynthesizer
    # restores them)
    from dpsynth import CALMSynthesizer, PriViewSynthesizer

    rng = np.random.default_rng(0)
    n = 1500
    X = pd.DataFrame({
        "quarter": pd.Series(pd.period_range("2020Q1", periods=8, freq="Q")[
            rng.integers(0, 8, n)]),
        "flag": pd.arrays.SparseArray(rng.random(n) < 0.1, fill_value=False),
        "city": rng.choice(["a", "b", "c"], n)})
    cls = PriViewSynthesizer if estimator == "priview" else CALMSynthesizer
    out = cls(epsilon=2.0, random_state=0).fit(X).sample(200)
    assert out.dtypes.to_dict() == X.dtypes.to_dict()
    assert set(out["quarter"]) <= set(X["quarter"])
