"""PriView (central DP): the book's consistency example, noise scale w/eps, accounting."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from dpsynth.local import bounded_cover, covering_design
from dpsynth.release import (PriViewSynthesizer, gaussian_crossover, priview_noise_error,
                              view_counts)
from dpsynth.release.priview import PAIR_TVD_LIMIT, SELECT_SHARES, SELECT_VIEW_CELLS
from dpsynth.views import MergedValues, make_consistent, project


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
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, strength=2, max_view_cells=256,
                               random_state=0).fit(X)
    assert synth.view_size_ == 8  # 2^8 = 256 cells


@pytest.mark.parametrize("epsilon", [1.0, 4.0])
def test_automatic_choice_on_binary_table_is_the_books(epsilon):
    # default settings, binary columns, enough records: 8 attributes per view (256
    # cells) and the book's covering design of the strength chosen by eq. 6.7
    X, cats = _binary(20000, 10)
    synth = PriViewSynthesizer(epsilon=epsilon, categories=cats, random_state=0).fit(X)
    assert synth.view_size_ == 8 and synth.max_view_cells_ == 256
    assert synth.marginal_sets_ == covering_design(10, 8, synth.strength_)
    assert all(len(v) == 8 for v in synth.marginal_sets_)
    # the strength: the largest t in {2, 3, 4} whose eq. 6.7 error is <= 0.003
    eps_views = epsilon - synth.count_epsilon
    errors = {t: priview_noise_error(synth.noisy_count_, eps_views,
                                     len(covering_design(10, 8, t)), 10, 8) for t in (2, 3, 4)}
    expected = max([t for t, e in errors.items() if e <= 0.003], default=2)
    assert synth.strength_ == expected


def _many_valued(n, seed=0):
    """One 40-value column tied to the others, plus small columns and missing values."""
    rng = np.random.default_rng(seed)
    big = rng.choice(40, n, p=np.r_[np.full(10, 0.08), np.full(30, 0.2 / 30)])
    frame = pd.DataFrame({
        "big": big,
        "a": (big % 3 + (rng.random(n) < 0.1)) % 3,
        "b": (big // 10 + rng.integers(0, 2, n)) % 4,
        "c": rng.integers(0, 2, n),
        "d": (big % 2 + rng.integers(0, 2, n)) % 5,
        "e": rng.integers(0, 3, n).astype(float),
    })
    frame.loc[rng.random(n) < 0.05, "e"] = np.nan
    cats = {"big": list(range(40)), "a": [0, 1, 2], "b": [0, 1, 2, 3], "c": [0, 1],
            "d": list(range(5)), "e": [0.0, 1.0, 2.0]}
    return frame, cats


def test_automatic_views_on_many_valued_columns():
    X, cats = _many_valued(20000)
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, allow_missing=True,
                               merge_threshold=60, random_state=0).fit(X)
    cards = synth.view_cardinalities_  # the views' domain: rare values of "big" merged
    assert cards[0] < synth.cardinalities_[0]
    views = synth.marginal_sets_
    cells = [math.prod(int(cards[a]) for a in v) for v in views]
    # every pair in some view; the many-valued column shares views with the others
    for pair in itertools.combinations(range(X.shape[1]), 2):
        assert any(set(pair) <= set(v) for v in views)
    assert any(0 in v and len(v) >= 3 for v in views)
    # the budget: the power of two minimising sqrt(L / (P T)) over the views built
    # (mean cells, pairs and triples of a view), computed here independently
    budget = synth.max_view_cells_
    assert budget & (budget - 1) == 0 and max(cells) <= budget
    assert views == bounded_cover(cards, budget, synth.strength_, max_size=8)

    def factor(b):
        vs = bounded_cover(cards, b, 2, max_size=8)
        size = np.mean([math.prod(int(cards[a]) for a in v) for v in vs])
        pairs = np.mean([len(v) * (len(v) - 1) / 2 for v in vs])
        triples = np.mean([len(v) * (len(v) - 1) * (len(v) - 2) / 6 for v in vs])
        return math.sqrt(size / (pairs * triples)) if triples else math.inf

    assert factor(budget) == min(factor(2 ** k) for k in range(2, 23))
    # like the book's ell, the budget depends on the views' domain only: at a larger
    # epsilon fewer values are merged (a larger domain), with none merged not at all
    wide = PriViewSynthesizer(epsilon=8.0, categories=cats, allow_missing=True,
                              merge_threshold=60, random_state=0).fit(X)
    assert wide.view_cardinalities_[0] > cards[0] and wide.strength_ >= synth.strength_
    plain = [PriViewSynthesizer(epsilon=e, categories=cats, allow_missing=True, merge_share=0,
                                random_state=0).fit(X).max_view_cells_ for e in (1.0, 8.0)]
    assert plain[0] == plain[1]
    # every column comes back, with its missing values
    out = synth.sample(5000, random_state=1)
    assert list(out.columns) == list(X.columns) and out["e"].isna().mean() > 0.01


def test_automatic_views_answer_marginals_with_a_many_valued_column():
    X, cats = _many_valued(20000, seed=1)
    cells = np.ravel_multi_index((X.big, X.a, X.b), (40, 3, 4))
    truth = np.bincount(cells, minlength=480).reshape(40, 3, 4) / len(X)

    def error(synth):
        est = synth.marginal(["big", "a", "b"])  # each axis ends with "missing" (empty)
        return 0.5 * (np.abs(est[:40, :3, :4] - truth).sum() + est[40:].sum()
                      + est[:40, 3:].sum() + est[:40, :3, 4:].sum())

    auto = PriViewSynthesizer(epsilon=2.0, categories=cats, allow_missing=True,
                              random_state=0).fit(X)
    independent = truth.sum(axis=(1, 2))[:, None, None] * truth.sum(axis=(0, 2))[None, :, None] \
        * truth.sum(axis=(0, 1))[None, None, :]
    assert error(auto) < 0.1 < 0.5 * np.abs(independent - truth).sum()
    # and the synthetic records keep it (they match every view, not only one per column)
    out = auto.sample(20000, random_state=0)[["big", "a", "b"]]
    complete = out.notna().all(axis=1).to_numpy()  # a missing value is a miss
    cells = np.ravel_multi_index(tuple(out[complete].to_numpy(int).T), (40, 3, 4))
    sampled = np.bincount(cells, minlength=480).reshape(40, 3, 4) / len(out)
    assert 0.5 * (np.abs(sampled - truth).sum() + (1 - complete.mean())) < 0.12


def _wide(n, d=16, seed=0):
    """``d`` columns of 2 to 6 values, each tied to the one before it."""
    rng = np.random.default_rng(seed)
    cards = [2 + j % 5 for j in range(d)]
    cols, prev = {}, rng.integers(0, 6, n)
    for j, c in enumerate(cards):
        prev = np.where(rng.random(n) < 0.6, prev % c, rng.integers(0, c, n))
        cols[f"c{j}"] = prev
    X = pd.DataFrame(cols)
    return X, {c: list(range(k)) for c, k in zip(X, cards)}


def _expected_plan(cards, n, eps):
    """The automatic (budget, strength >= 2 or 1) of cell-bounded views, recomputed."""
    def cells(v):
        return math.prod(cards[a] for a in v)

    def factor(b):
        vs = bounded_cover(cards, b, 2, max_size=8)
        size = np.mean([cells(v) for v in vs])
        pairs = np.mean([len(v) * (len(v) - 1) / 2 for v in vs])
        triples = np.mean([len(v) * (len(v) - 1) * (len(v) - 2) / 6 for v in vs])
        return math.sqrt(size / (pairs * triples)) if triples else math.inf

    def pair_noise(b):
        # each pair read from the smallest view holding it: L_V / L_ab Laplace(w / eps)
        # cells summed into each of its L_ab cells, total variation ~ w sqrt(L_ab L_V) /
        # (eps N sqrt(pi))
        vs = bounded_cover(cards, b, 2, max_size=8)
        held = {}
        for v in vs:
            for a, c in itertools.combinations(sorted(v), 2):
                held[a, c] = min(held.get((a, c), math.inf), cells(v))
        return np.mean([len(vs) * math.sqrt(cards[a] * cards[c] * lv)
                        / (eps * n * math.sqrt(math.pi)) for (a, c), lv in held.items()])

    factors = [factor(2 ** k) for k in range(2, 23)]
    optimum = 2 ** (2 + factors.index(min(factors)))
    noise = {2 ** k: pair_noise(2 ** k) for k in range(2, optimum.bit_length())}
    least = min(noise, key=lambda b: (noise[b], -b))
    if noise[least] <= PAIR_TVD_LIMIT:  # some pairs' cover is quiet enough
        quiet = [b for b, e in noise.items() if e <= 0.05]  # PAIR_TVD_TARGET
        return (max(quiet) if quiet else least), 2
    # strength 1: the largest budget whose cells hold >= 10 noise scales of records
    fits = [2 ** k for k in range(2, optimum.bit_length())
            if n * eps / (len(vs := bounded_cover(cards, 2 ** k, 1, max_size=8))
                          * np.mean([cells(v) for v in vs])) >= 10]
    return (max(fits) if fits else 4), 1


@pytest.mark.parametrize("n, epsilon, strength", [(3000, 1.0, 1), (3000, 4.0, 2),
                                                  (60000, 1.0, 2)])
def test_automatic_views_follow_the_public_inputs(n, epsilon, strength):
    # 16 columns of 2-6 values: with few records per unit of budget the pairs' views
    # would be noise-dominated (strength 1, views small enough that each cell holds ten
    # noise scales of records); with more, every pair is covered, by views small enough
    # that a pair's table is not noise-dominated (3,000 records at epsilon 4: views of
    # at most 128 cells, below the optimum of the noise-versus-coverage factor)
    X, cats = _wide(n)
    synth = PriViewSynthesizer(epsilon=epsilon, categories=cats, random_state=0,
                               mechanism="laplace").fit(X)
    cards = [int(c) for c in synth.view_cardinalities_]
    eps_views = epsilon - synth.count_epsilon
    budget, t = _expected_plan(cards, synth.noisy_count_, eps_views)
    if t == 1:
        # the strength-1 views joined by chosen pairs are the least of the automatic
        # plan: each column alone (or two binary columns together)
        budget = SELECT_VIEW_CELLS
    assert (synth.max_view_cells_, min(synth.strength_, 2)) == (budget, t) and t == strength
    own = bounded_cover(cards, budget, synth.strength_, max_size=8)
    assert synth.marginal_sets_ == own + synth.selected_pairs_
    if t == 1:
        assert sorted(a for v in own for a in v) == list(range(16))
        # more, smaller views than the pairs' optimum budget would pack them in
        assert synth.max_view_cells_ < 2 ** 10 and len(own) > 3
        # chosen pairs join the disjoint views into one tree: w - 1 pairs, no cycle
        assert synth.select_pairs_ and len(synth.selected_pairs_) == len(own) - 1
        group = {a: i for i, v in enumerate(own) for a in v}
        for a, b in synth.selected_pairs_:
            assert group[a] != group[b]
            old = group[b]
            group = {c: group[a] if g == old else g for c, g in group.items()}
        assert len(set(group.values())) == 1
    else:
        assert synth.selected_pairs_ == [] and not synth.select_pairs_
        pairs = itertools.combinations(range(16), 2)
        assert all(any(set(p) <= set(v) for v in synth.marginal_sets_) for p in pairs)
    # a function of the public inputs: the same plan from them alone, whatever the records
    # (the chosen pairs are DP outputs: they may differ)
    other = PriViewSynthesizer(epsilon=epsilon, categories=cats, random_state=0,
                               mechanism="laplace")
    other.fit(_wide(n, seed=1)[0])
    if other.noisy_count_ == synth.noisy_count_:  # the count is seeded: same noise
        assert other.marginal_sets_[:len(own)] == own
        assert len(other.selected_pairs_) == len(synth.selected_pairs_)


def test_wide_table_strength_one_uses_small_views():
    # 3,000 records, 16 columns of 6 values, epsilon 1: strength 1; by default each
    # column is a view of its own, joined by a tree of chosen pairs
    rng = np.random.default_rng(0)
    z = rng.integers(0, 6, 3000)
    X = pd.DataFrame({f"c{j}": (z + rng.integers(0, 2, 3000) * j) % 6 for j in range(16)})
    cats = {c: list(range(6)) for c in X}
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0,
                               mechanism="laplace").fit(X)
    assert synth.strength_ == 1 and synth.select_pairs_
    own = synth.marginal_sets_[:len(synth.marginal_sets_) - len(synth.selected_pairs_)]
    assert own == [(j,) for j in range(16)] and len(synth.selected_pairs_) == 15
    eps_own = (1.0 - synth.count_epsilon) * SELECT_SHARES[0]  # their share of the budget
    assert synth.noise_scale_ == pytest.approx(16 / eps_own)
    # without chosen pairs: views small enough that each cell holds ten noise scales of
    # records on average, with the whole budget
    alone = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0,
                               select_pairs=False, mechanism="laplace").fit(X)
    assert alone.strength_ == 1 and alone.selected_pairs_ == []
    sets = alone.marginal_sets_
    w, cells = len(sets), 6.0 ** np.array([len(v) for v in sets])
    assert alone.noisy_count_ * (1.0 - alone.count_epsilon) / (w * cells.mean()) >= 10
    assert sorted(a for v in alone.marginal_sets_ for a in v) == list(range(16))
    # with more records the same columns get the pairs' views
    many = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0,
                              mechanism="laplace").fit(pd.concat([X] * 20, ignore_index=True))
    assert many.strength_ >= 2


def test_table_too_wide_for_triples_still_chooses_the_strength():
    # 70 columns: C(70, 3) triples exceed what strength 3 considers, so 2 is the only
    # candidate of the book's rule; strength 1 stays one, and the record count is spent
    rng = np.random.default_rng(0)
    z = rng.integers(0, 4, 2000)
    X = pd.DataFrame({f"c{j}": (z + rng.integers(0, 2, 2000) * (j % 3)) % 4 for j in range(70)})
    cats = {c: list(range(4)) for c in X}
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0).fit(X)
    assert synth.noisy_count_ is not None and synth.strength_ == 1
    own = synth.marginal_sets_[:len(synth.marginal_sets_) - len(synth.selected_pairs_)]
    assert sorted(a for v in own for a in v) == list(range(70))
    assert len(synth.selected_pairs_) == len(own) - 1
    assert any("record count" in s.name for s in synth.privacy_spent_.mechanisms)
    assert synth.privacy_spent_.epsilon == pytest.approx(1.0)


def test_strength_one_puts_each_column_in_one_view():
    X, cats = _many_valued(3000)
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, allow_missing=True, strength=1,
                               max_view_cells=256, random_state=0).fit(X)
    columns = sorted(a for v in synth.marginal_sets_ for a in v)
    assert columns == list(range(6)) and synth.strength_ == 1
    # the 41-value column's counts take merge_share of the budget, the views the rest
    assert synth.merge_columns_ == [0]
    assert synth.noise_scale_ == pytest.approx(len(synth.marginal_sets_) / 0.9)
    assert synth.sample(100, random_state=0).shape == (100, 6)


def test_fixed_view_size_keeps_the_covering_design_of_indices():
    X, cats = _many_valued(3000)
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, allow_missing=True, view_size=3,
                               strength=2, random_state=0).fit(X)
    assert synth.marginal_sets_ == covering_design(6, 3, 2)
    assert synth.noisy_count_ is None  # nothing automatic: no count spent
    assert [s.name for s in synth.privacy_spent_.mechanisms] == [
        "value counts of 1 columns (to merge rare values)", "7 views, every cell"]


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
    # with the strength and the cell budget fixed, no count is needed: all to the views
    fixed = PriViewSynthesizer(epsilon=1.0, strength=2, max_view_cells=256, categories=cats,
                               random_state=0).fit(X)
    assert fixed.noise_scale_ == pytest.approx(len(fixed.marginal_sets_) / 1.0)
    assert fixed.noisy_count_ is None
    # strength 1 given with the automatic budget still needs the count (the budget
    # follows the records per cell): the count and the views add up to epsilon
    given = PriViewSynthesizer(epsilon=1.0, strength=1, categories=cats, random_state=0).fit(X)
    assert given.noisy_count_ is not None and given.strength_ == 1
    assert [m.name for m in given.privacy_spent_.mechanisms] == [
        "record count (to choose the views)", f"{len(given.marginal_sets_)} views, every cell"]
    assert sum(m.epsilon for m in given.privacy_spent_.mechanisms) == pytest.approx(1.0)
    assert given.noise_scale_ == pytest.approx(len(given.marginal_sets_) / 0.999)
    assert PriViewSynthesizer(epsilon=1.0, strength=2, categories=cats,
                              random_state=0).fit(X).noisy_count_ is None


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
                                          ("weights", "mean"), ("view_size", "big"),
                                          ("max_view_cells", "big"), ("max_view_cells", 1)])
def test_bad_parameters(param, value):
    X, cats = _binary(100, 4)
    with pytest.raises((ValueError, TypeError), match=param):
        PriViewSynthesizer(categories=cats, **{param: value}).fit(X)


def test_rare_values_merged_by_their_noisy_counts():
    X, cats = _many_valued(20000)
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, allow_missing=True,
                               merge_threshold=60, random_state=0).fit(X)
    cards = synth.cardinalities_
    # only the columns with at least merge_min_values values are measured (public domain)
    assert synth.merge_columns_ == [j for j, c in enumerate(cards) if c >= 9] == [0]
    # the merge is a function of DP outputs (the counts; the record count that chose
    # the strength) and public parameters only: the threshold is merge_threshold
    # times the cell noise scale w / eps_views of the views planned on the full domain
    eps_views = len(synth.marginal_sets_) / synth.noise_scale_
    threshold = synth.merge_min_count_
    planned = threshold * eps_views / synth.merge_threshold
    assert planned == pytest.approx(round(planned)) and round(planned) >= 1
    unmerged = PriViewSynthesizer(epsilon=1.0, categories=cats, allow_missing=True,
                                  merge_threshold=0, random_state=0).fit(X)
    assert round(planned) == len(unmerged.marginal_sets_)
    again = MergedValues.from_counts(synth.value_counts_, cards, threshold)
    g = synth.merged_values_.groups[0]
    np.testing.assert_array_equal(g, again.groups[0])
    counts = synth.value_counts_[0]
    rare = counts < threshold
    assert rare.sum() >= 2 and (g[rare] == g.max()).all() and (g[~rare] < g.max()).all()
    np.testing.assert_array_equal(g[~rare], np.arange((~rare).sum()))  # order kept
    assert synth.view_cardinalities_[0] == (~rare).sum() + 1
    assert list(synth.view_cardinalities_[1:]) == list(cards[1:])  # small columns unchanged
    for attrs, table in synth.views_:
        assert table.shape == tuple(synth.view_cardinalities_[a] for a in attrs)
    # marginals come back on the original values; a merged code is split by the counts
    est = synth.marginal(["big", "a"])
    assert est.shape == (41, 4) and est.sum() == pytest.approx(1.0)  # with "missing"
    share = np.clip(counts[rare], 0, None) / np.clip(counts[rare], 0, None).sum()
    np.testing.assert_allclose(est[rare].sum(axis=1) / est[rare].sum(), share, atol=1e-12)
    # the sample holds the rare values too, in proportion to their noisy counts
    out = synth.sample(40000, random_state=1)
    freq = out["big"].value_counts(normalize=True).reindex(range(40), fill_value=0).to_numpy()
    assert freq[rare[:40]].sum() == pytest.approx(est[rare].sum(), abs=0.01)
    assert (freq[rare[:40]] > 0).sum() >= 0.8 * (share[:rare[:40].sum()] > 0.01).sum()


def test_merge_accounting_and_noise():
    X, cats = _many_valued(20000)
    cats["d"] = list(range(10))  # a second measured column
    synth = PriViewSynthesizer(epsilon=2.0, categories=cats, allow_missing=True,
                               noise="continuous", random_state=3).fit(X)
    spent = synth.privacy_spent_
    merge = [s for s in spent.mechanisms if s.name.startswith("value counts")]
    assert len(merge) == 1 and synth.merge_columns_ == [0, 4]
    params = dict(merge[0].params)
    # one record adds one to one count of each of the m measured columns: sensitivity m
    assert merge[0].epsilon == pytest.approx(0.1 * 2.0) and params["sensitivity"] == 2.0
    assert params["scale"] == pytest.approx(2 / 0.2)
    # sequential composition: value counts + record count + views = epsilon
    eps_views = len(synth.marginal_sets_) / synth.noise_scale_
    assert merge[0].epsilon + synth.count_epsilon + eps_views == pytest.approx(2.0)
    assert spent["epsilon"] == pytest.approx(2.0) and spent["delta"] == 0.0
    codes = synth._encode(X)
    noise = np.concatenate([synth.value_counts_[j] - np.bincount(codes[:, j], minlength=c)
                            for j, c in ((0, 41), (4, 11))])
    assert np.abs(noise).mean() == pytest.approx(10.0, rel=0.3)  # Laplace(m / eps)
    # merge_share=0: nothing measured, the views get all but the record count
    plain = PriViewSynthesizer(epsilon=2.0, categories=cats, allow_missing=True,
                               merge_share=0, random_state=3).fit(X)
    assert plain.merge_columns_ == [] and not plain.merged_values_
    assert not any(s.name.startswith("value counts") for s in plain.privacy_spent_.mechanisms)
    assert list(plain.view_cardinalities_) == list(plain.cardinalities_)


def test_binary_columns_never_merged():
    X, cats = _binary(20000, 10)
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0).fit(X)
    assert synth.merge_columns_ == [] and synth.value_counts_ == {}
    assert not synth.merged_values_
    assert [s.name for s in synth.privacy_spent_.mechanisms][0].startswith("record count")


def test_merged_values_round_trip():
    merged = MergedValues.from_counts({1: np.array([50.0, 3.0, -2.0, 40.0, 1.0])},
                                      [2, 5], threshold=10)
    np.testing.assert_array_equal(merged.groups[1], [0, 2, 2, 1, 2])
    np.testing.assert_allclose(merged.shares[1], [1, 0.75, 0, 1, 0.25])
    assert list(merged.cardinalities([2, 5])) == [2, 3]
    codes = np.array([[0, 0], [1, 1], [0, 2], [1, 3], [0, 4]])
    np.testing.assert_array_equal(merged.merge(codes)[:, 1], [0, 2, 2, 1, 2])
    back = merged.expand_codes(merged.merge(codes), np.random.default_rng(0))
    assert list(back[[0, 3], 1]) == [0, 3] and set(back[[1, 2, 4], 1]) <= {1, 4}
    table = np.array([[0.1, 0.2, 0.3], [0.2, 0.1, 0.1]])
    full = merged.expand_table(table, (0, 1))
    np.testing.assert_allclose(full, [[0.1, 0.225, 0, 0.2, 0.075], [0.2, 0.075, 0, 0.1, 0.025]])
    # at most one value below the threshold: nothing to merge
    assert not MergedValues.from_counts({0: np.array([50.0, 3.0, 40.0])}, [3], threshold=10)


def test_strength_one_views_are_joined_by_the_most_associated_pairs():
    # 16 columns of 6 values, 3,000 records, epsilon 1: strength 1 (no pairs' cover), and
    # column j + 8 copies column j: the pairs chosen under DP to join the disjoint views
    # are the copies wherever a copy joins two groups not yet joined (Kruskal's choice)
    rng = np.random.default_rng(3)
    base = rng.integers(0, 6, size=(3000, 8))
    X = pd.DataFrame(np.hstack([base, base]), columns=[f"c{j}" for j in range(16)])
    cats = {c: list(range(6)) for c in X}
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0,
                               mechanism="laplace").fit(X)
    assert synth.strength_ == 1 and synth.select_pairs_
    own = synth.marginal_sets_[:len(synth.marginal_sets_) - len(synth.selected_pairs_)]
    group = {a: i for i, v in enumerate(own) for a in v}
    copies = [(j, j + 8) for j in range(8)]
    # how many copies a maximum spanning forest over the views' groups takes
    parent = list(range(len(own)))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    joining = 0
    for a, b in copies:
        ga, gb = find(group[a]), find(group[b])
        if ga != gb:
            parent[ga] = gb
            joining += 1
    chosen = set(synth.selected_pairs_)
    assert len(chosen & set(copies)) == joining >= 1
    # the accounting: views, selection and pairs' tables add up to epsilon
    spent = synth.privacy_spent_
    by_name = {s.name.split(" ", 1)[1]: s.epsilon for s in spent.mechanisms}
    eps_views = 1.0 - synth.count_epsilon
    r = len(synth.selected_pairs_)
    assert by_name[f"views, every cell"] == pytest.approx(eps_views * SELECT_SHARES[0])
    assert by_name["pairs joining the views (exponential mechanism)"] == pytest.approx(
        eps_views * SELECT_SHARES[1])
    assert by_name["chosen pairs' tables, every cell"] == pytest.approx(
        eps_views * SELECT_SHARES[2])
    assert synth.pair_noise_scale_ == pytest.approx(r / (eps_views * SELECT_SHARES[2]))
    assert spent.epsilon == pytest.approx(1.0)
    # the chosen pairs' noisy tables are the data's plus Laplace(r / eps_pairs)
    noise = np.concatenate([(t - view_counts(X.to_numpy(), a, [6] * 16)).ravel()
                            for a, t in synth.noisy_views_[len(own):]])
    assert np.abs(noise).mean() == pytest.approx(synth.pair_noise_scale_, rel=0.25)
    # the synthetic records keep the copies the chosen pairs carry
    sample = synth.sample(3000, random_state=0).to_numpy()
    for a, b in chosen & set(copies):
        assert (sample[:, a] == sample[:, b]).mean() > 0.6
    # off: the strength-1 views alone, with the whole budget
    alone = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0,
                               select_pairs=False, mechanism="laplace").fit(X)
    assert alone.selected_pairs_ == [] and alone.strength_ == 1
    assert sum(s.epsilon for s in alone.privacy_spent_.mechanisms) == pytest.approx(1.0)


def test_select_pairs_with_a_single_view_spends_all_on_it():
    # strength 1 whose views are one view (everything fits): nothing to join, so no share
    # goes to choosing pairs and the view gets the whole budget
    X, cats = _binary(500, 4)
    synth = PriViewSynthesizer(epsilon=1.0, strength=1, max_view_cells=4096, categories=cats,
                               select_pairs=True, random_state=0).fit(X)
    assert synth.marginal_sets_ == [(0, 1, 2, 3)] and not synth.select_pairs_
    assert synth.selected_pairs_ == [] and synth.pair_noise_scale_ is None
    assert synth.noise_scale_ == pytest.approx(1.0 / 1.0)
    assert [s.name for s in synth.privacy_spent_.mechanisms] == ["1 views, every cell"]
    # several strength-1 views, given: joined when asked, not by default
    given = dict(epsilon=1.0, strength=1, max_view_cells=4, categories=cats, random_state=0)
    joined = PriViewSynthesizer(select_pairs=True, **given).fit(X)
    assert joined.select_pairs_ and len(joined.selected_pairs_) == 1
    assert not PriViewSynthesizer(**given).fit(X).select_pairs_


@pytest.mark.parametrize("position", ["first", "middle", "last"])
def test_pair_choice_utilities_move_by_at_most_one_on_neighbours(monkeypatch, position):
    # the exponential mechanism choosing the pairs is calibrated to sensitivity 1: given
    # the same released views, one record more (anywhere) moves every candidate's
    # utility by at most 1; the noise penalty is public (domain sizes, budget, r)
    from dpsynth.release import priview
    rng = np.random.default_rng(5)
    base = rng.integers(0, 6, size=(2000, 6))
    X = pd.DataFrame(np.hstack([base, (base + rng.integers(0, 2, base.shape)) % 6]),
                     columns=[f"c{j}" for j in range(12)])
    cats = {c: list(range(6)) for c in X}
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0,
                               mechanism="laplace").fit(X)
    assert synth.select_pairs_
    w = len(synth.marginal_sets_) - len(synth.selected_pairs_)
    views = synth.views_[:w]
    codes = X.to_numpy()
    extra = np.array([[5, 0, 3, 1, 2, 4, 0, 5, 1, 3, 2, 2]])
    at = {"first": 0, "middle": len(codes) // 2, "last": len(codes)}[position]
    neighbour = np.insert(codes, at, extra, axis=0)
    seen = []

    def record(utility, epsilon, rng, sensitivity, noise):
        seen.append((np.array(utility, dtype=float), sensitivity))
        return int(np.argmax(utility))

    monkeypatch.setattr(priview, "exponential_mechanism", record)
    eps_select, eps_pairs = 0.2, 0.6
    first = synth._choose_pairs(codes, views, eps_select, eps_pairs, np.random.default_rng(0))
    n_rounds = len(seen)
    second = synth._choose_pairs(neighbour, views, eps_select, eps_pairs,
                                 np.random.default_rng(0))
    assert first[1] == second[1] and first[1]["epsilon"] == eps_select
    (u0, s0), (u1, s1) = seen[0], seen[n_rounds]
    assert s0 == s1 == 1.0 and u0.shape == u1.shape
    assert np.abs(u0 - u1).max() <= 1.0 + 1e-9 and np.abs(u0 - u1).max() > 0
    # the penalty: half the expected L1 noise of a 36-cell table at the pairs' scale
    r = w - 1
    shares, total = synth._column_shares(views)
    a, b = 0, 6  # in different views (each column alone)
    pairs = [(p, q) for p, q in itertools.combinations(range(12), 2)
             if not any({p, q} <= set(v) for v, _ in views)]
    distance = np.abs(view_counts(codes, (a, b), [6] * 12)
                      - total * np.outer(shares[a], shares[b])).sum()
    assert u0[pairs.index((a, b))] == pytest.approx(
        distance - priview.SELECT_NOISE_PENALTY * 36 * r / eps_pairs)


# ------------------------------------------------ mechanism="gaussian": zCDP accounting
def _copies_table(n=3000, seed=3):
    """16 columns of 6 values (column j + 8 copies column j) and an 18-value one: every
    step runs (value counts, record count, strength-1 views, chosen pairs)."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 6, size=(n, 8))
    X = pd.DataFrame(np.hstack([base, base]), columns=[f"c{j}" for j in range(16)])
    X["big"] = X["c0"] * 3 + rng.integers(0, 3, n)
    cats = {c: list(range(6)) for c in X}
    cats["big"] = list(range(18))
    return X, cats


@pytest.mark.parametrize("delta", [None, 1e-6])
def test_gaussian_accounting_against_independent_computation(delta):
    from dpsynth.mechanisms import discrete_gaussian_mu

    X, cats = _copies_table()
    synth = PriViewSynthesizer(epsilon=1.0, delta=delta, categories=cats, random_state=0,
                               mechanism="gaussian").fit(X)
    spent = synth.privacy_spent_
    names = [m.name.split(" ", 1)[1] for m in spent.mechanisms]
    assert names == ["counts of 1 columns (to merge rare values)",
                     "count (to choose the views)", "views, every cell",
                     "pairs joining the views (exponential mechanism)",
                     "chosen pairs' tables, every cell"]
    counts, record, views, select, pairs = spent.mechanisms
    assert synth.strength_ == 1 and synth.select_pairs_
    # the budget, by hand: rho = (sqrt(eps + L) - sqrt(L))**2, L = ln(1/delta), delta
    # defaulting to 1e-9 (no delta is spent directly: the domain is declared)
    d = 1e-9 if delta is None else delta
    L = math.log(1.0 / d)
    rho = (math.sqrt(1.0 + L) - math.sqrt(L)) ** 2
    # each Gaussian measurement: one record moves one cell of each of its k tables by
    # one, L2 sensitivity sqrt(k), noise sigma per cell: rho = k / (2 sigma**2)
    w, r = len(synth.marginal_sets_) - len(synth.selected_pairs_), len(synth.selected_pairs_)
    for spend, k in ((counts, len(synth.merge_columns_)), (record, 1)):
        p = spend.params
        assert spend.mechanism == "discrete_gaussian" and spend.epsilon == 0.0
        assert p["sensitivity"] == pytest.approx(math.sqrt(k))
        assert spend.rho == pytest.approx(k / (2.0 * p["sigma"] ** 2), rel=1e-12)
        # the discrete Gaussian drawn is at least as private as the continuous sigma
        assert p["noise_scale"] >= p["sigma"]
        assert discrete_gaussian_mu(p["noise_scale"]) <= 1.0 / p["sigma"] * (1 + 1e-12)
    # the views and the pairs' tables: table i gets sigma_i = sigma_c * cells_i**(-1/3),
    # rho = sum 1 / (2 sigma_i**2) (one record moves one cell of each table)
    cards = synth.view_cardinalities_
    for spend, sets in ((views, synth.marginal_sets_[:w]), (pairs, synth.marginal_sets_[w:])):
        p = spend.params
        assert spend.mechanism == "discrete_gaussian" and spend.epsilon == 0.0
        assert p["sensitivity"] == pytest.approx(math.sqrt(len(sets)))
        sigmas = p["sigma_c"] * np.array([math.prod(int(cards[a]) for a in v) for v in sets],
                                         dtype=float) ** (-1.0 / 3.0)
        assert spend.rho == pytest.approx(np.sum(1.0 / (2.0 * sigmas ** 2)), rel=1e-12)
        assert p["sigma_min"] == pytest.approx(sigmas.min())
        assert p["sigma_max"] == pytest.approx(sigmas.max()) and p["noise_scale"] >= sigmas.max()
        assert discrete_gaussian_mu(p["noise_scale"]) <= 1.0 / p["sigma_max"] * (1 + 1e-12)
    # the selection: r rounds of the exponential mechanism, eps_r**2 / 8 each
    assert select.mechanism == "exponential" and select.params["rounds"] == r
    assert select.rho == pytest.approx(r * select.params["epsilon"] ** 2 / 8.0, rel=1e-12)
    # the split: merge_share, the count's rho c**2 / 2, then SELECT_SHARES of the rest
    assert record.rho == pytest.approx(synth.count_epsilon ** 2 / 2.0)
    total = _check_gaussian_split(spent, rho, d)
    assert total == pytest.approx(rho, rel=1e-9)
    # the drawn noise has the scale reported: std sigma_i per cell of view i (the views'
    # noise_scale_ the largest)
    assert synth.noise_scale_ == views.params["noise_scale"]
    assert _view_noise(synth, X, per_sigma=True).std() == pytest.approx(1.0, rel=0.2)


def _check_gaussian_split(spent, rho, d):
    """``mechanism="gaussian"``'s split of ``rho`` (``merge_share``, the record
    count, then :data:`SELECT_SHARES` of the rest) and what the math proves of it:
    ``rho``-zCDP is ``(rho + 2 sqrt(rho L), delta)``-DP, ``L = ln(1 / delta)``,
    epsilon 1 here.  Returns the total ``rho`` spent."""
    counts, record, views, select, pairs = spent.mechanisms
    assert counts.rho == pytest.approx(0.1 * rho)
    for spend, share in zip((views, select, pairs), SELECT_SHARES):
        assert spend.rho == pytest.approx(share * (rho - counts.rho - record.rho))
    total = math.fsum(m.rho for m in spent.mechanisms)
    assert spent.rho == pytest.approx(total, rel=1e-12) and total <= rho
    assert spent.delta == d
    L = math.log(1.0 / d)
    assert spent.epsilon == pytest.approx(total + 2.0 * math.sqrt(total * L), rel=1e-12)
    assert spent.epsilon <= 1.0 and spent.epsilon == pytest.approx(1.0, rel=1e-9)
    assert spent.epsilon_at(d) == pytest.approx(spent.epsilon, rel=1e-9)
    return total


def _view_noise(synth, X, per_sigma=False):
    """The noise drawn on every cell of a fitted PriView's views (not the pairs'); with
    ``per_sigma``, each view's over its own Gaussian sigma (``sigma_c cells**(-1/3)``)."""
    codes = synth.merged_values_.merge(synth._encode(X)) if synth.merged_values_ \
        else synth._encode(X)
    w = len(synth.marginal_sets_) - len(synth.selected_pairs_)
    cards = synth.view_cardinalities_
    c = next(dict(m.params).get("sigma_c") for m in synth.privacy_spent_.mechanisms
             if m.name.endswith(" views, every cell")) if per_sigma else None
    return np.concatenate([(t - view_counts(codes, a, cards)).ravel()
                           / (c * math.prod(int(cards[j]) for j in a) ** (-1 / 3)
                              if per_sigma else 1.0)
                           for a, t in synth.noisy_views_[:w]])


def test_gaussian_delta_and_noise_kinds():
    X, cats = _copies_table()
    given = dict(epsilon=1.0, categories=cats, random_state=0)
    strict = PriViewSynthesizer(mechanism="gaussian", **given).fit(X)
    loose = PriViewSynthesizer(mechanism="gaussian", delta=1e-5, **given).fit(X)
    assert strict.privacy_spent_.delta == 1e-9 and loose.privacy_spent_.delta == 1e-5
    # a larger delta buys a larger rho, hence less noise per cell
    assert loose.privacy_spent_.rho > strict.privacy_spent_.rho
    assert loose.noise_scale_ < strict.noise_scale_
    # numpy's floating-point Gaussian: same accounting, other ledger name
    continuous = PriViewSynthesizer(mechanism="gaussian", noise="continuous", **given).fit(X)
    assert {m.mechanism for m in continuous.privacy_spent_.mechanisms} == {
        "gaussian", "exponential"}
    assert continuous.privacy_spent_.rho == pytest.approx(strict.privacy_spent_.rho)
    # delta is not used by the Laplace release (pure epsilon-DP): the same release
    laplace = PriViewSynthesizer(mechanism="laplace", **given).fit(X)
    with_delta = PriViewSynthesizer(mechanism="laplace", delta=1e-6, **given).fit(X)
    assert laplace.privacy_spent_ == with_delta.privacy_spent_
    assert laplace.privacy_spent_.delta == 0.0 and laplace.privacy_spent_.rho == 0.0
    for (a, t), (b, u) in zip(laplace.noisy_views_, with_delta.noisy_views_):
        assert a == b
        np.testing.assert_array_equal(t, u)


def test_gaussian_warns_when_delta_is_not_below_one_over_n():
    X, cats = _binary(300, 4)
    with pytest.warns(UserWarning, match="1 / n_records_"):
        PriViewSynthesizer(epsilon=1.0, delta=0.01, categories=cats, mechanism="gaussian",
                           random_state=0).fit(X)


def test_gaussian_crossover_from_the_accounting():
    from dpsynth.accounting import zcdp_rho

    for epsilon in (0.5, 1.0, 4.0):
        for delta in (1e-9, 1e-6):
            k = gaussian_crossover(epsilon, delta)
            rho = zcdp_rho(epsilon, delta)
            assert k == pytest.approx(epsilon ** 2 / (4.0 * rho), rel=1e-12)
            # k tables with the whole budget: Laplace(k / eps) has variance 2 k**2 / eps**2,
            # the Gaussian of rho k / (2 rho); equal at the crossover, Gaussian's smaller above
            for tables, smaller in ((k * 0.9, "laplace"), (k * 1.1, "gaussian")):
                laplace, gaussian = 2 * tables ** 2 / epsilon ** 2, tables / (2 * rho)
                assert (gaussian < laplace) == (smaller == "gaussian")
    assert 21 < gaussian_crossover(1.0, 1e-9) < 22 and 22 < gaussian_crossover(4.0, 1e-9) < 23
    assert gaussian_crossover(1.0, 1e-6) < gaussian_crossover(1.0, 1e-9)  # a larger delta


@pytest.mark.parametrize("epsilon", [1.0, 4.0])
def test_auto_is_the_default_and_the_books_laplace_on_a_binary_table(epsilon):
    X, cats = _binary(20000, 10)
    default = PriViewSynthesizer(epsilon=epsilon, categories=cats, random_state=0)
    assert default.get_params()["mechanism"] == "auto"
    assert default.get_params()["delta"] is None
    a = default.fit(X)
    b = PriViewSynthesizer(epsilon=epsilon, categories=cats, random_state=0,
                           mechanism="laplace").fit(X)
    # a few wide views (the book's plan): far fewer tables than the crossover
    assert a.mechanism_ == "laplace" and a.rho_ is None
    assert a.planned_tables_ == len(b.marginal_sets_) < gaussian_crossover(epsilon, 1e-9)
    # draw for draw the Laplace release, pure epsilon-DP
    assert a.privacy_spent_ == b.privacy_spent_
    assert a.privacy_spent_.epsilon == pytest.approx(epsilon) and a.privacy_spent_.delta == 0.0
    assert a.privacy_spent_.rho == 0.0
    assert a.noisy_count_ == b.noisy_count_ and a.marginal_sets_ == b.marginal_sets_
    for (s, t), (u, v) in zip(a.noisy_views_, b.noisy_views_):
        assert s == u
        np.testing.assert_array_equal(t, v)
    pd.testing.assert_frame_equal(a.sample(200, random_state=1), b.sample(200, random_state=1))
    assert b.mechanism_ == "laplace" and b.planned_tables_ is None


@pytest.mark.parametrize("delta", [None, 1e-6])
def test_auto_picks_gaussian_on_a_wide_table_with_its_accounting(delta):
    X, cats = _copies_table()
    given = dict(epsilon=1.0, delta=delta, categories=cats, random_state=0)
    auto = PriViewSynthesizer(**given).fit(X)
    d = 1e-9 if delta is None else delta
    # the Laplace plan on the declared domain (nothing merged: merge_threshold=0 merges
    # nothing here, with the same budget left to the views) measures its views and the
    # pairs joining them, past the crossover
    laplace = PriViewSynthesizer(mechanism="laplace", merge_threshold=0, **given).fit(X)
    assert not laplace.merged_values_
    assert auto.planned_tables_ == len(laplace.marginal_sets_)
    assert auto.planned_tables_ >= gaussian_crossover(1.0, d) and auto.mechanism_ == "gaussian"
    # the record count is the Laplace release's draw; the rest is mechanism="gaussian"'s
    assert auto.noisy_count_ == laplace.noisy_count_
    gaussian = PriViewSynthesizer(mechanism="gaussian", **given).fit(X)
    for j in gaussian.value_counts_:
        np.testing.assert_array_equal(auto.value_counts_[j], gaussian.value_counts_[j])
    assert auto.rho_ == gaussian.rho_
    spent, other = auto.privacy_spent_, gaussian.privacy_spent_
    assert [m.name for m in spent.mechanisms] == [m.name for m in other.mechanisms]
    counts, record, views, select, pairs = spent.mechanisms
    # the Laplace count of scale 1 / c is pure c-DP, hence c**2 / 2-zCDP: the rho of the
    # Gaussian count of sigma 1 / c
    assert record.mechanism == "discrete_laplace" and record.epsilon == 0.0
    assert record.rho == other.mechanisms[1].rho == pytest.approx(auto.count_epsilon ** 2 / 2)
    assert record.params["pure_epsilon"] == auto.count_epsilon
    for mine, theirs in zip((counts, views, select, pairs), (other.mechanisms[0],
                                                            *other.mechanisms[2:])):
        assert mine.mechanism == theirs.mechanism and mine.rho == pytest.approx(theirs.rho)
        assert mine.epsilon == 0.0
    # the budget, by hand: rho = (sqrt(eps + L) - sqrt(L))**2, split as mechanism="gaussian"
    L = math.log(1.0 / d)
    _check_gaussian_split(spent, (math.sqrt(1.0 + L) - math.sqrt(L)) ** 2, d)
    # the views' noise is Gaussian, of the scale reported
    assert _view_noise(auto, X, per_sigma=True).std() == pytest.approx(1.0, rel=0.2)
    assert auto.noise_scale_ == views.params["noise_scale"] >= views.params["sigma_max"]


def test_auto_without_the_count_for_the_gaussian_budget_stays_laplace():
    # a record count costing more than the Gaussian budget (c**2 / 2 > rho): a public fact
    X, cats = _copies_table()
    synth = PriViewSynthesizer(epsilon=1.0, count_epsilon=0.5, categories=cats,
                               random_state=0).fit(X)
    assert synth.planned_tables_ >= gaussian_crossover(1.0, 1e-9)
    assert synth.mechanism_ == "laplace" and synth.privacy_spent_.delta == 0.0
    assert synth.privacy_spent_.epsilon == pytest.approx(1.0)


@pytest.mark.parametrize("position", ["first", "middle", "last"])
def test_auto_choice_on_neighbouring_tables(position):
    # the choice reads the declared domain, epsilon, delta and a DP output, the noisy record
    # count: on a neighbour (one record more) with the same seed the discrete noise is the
    # same, the count moves by one and, far from the crossover, the choice is the same; and
    # it is the rule applied to the Laplace plan on the declared domain
    for X, cats, expected in (_binary(20000, 10) + ("laplace",),
                              _copies_table() + ("gaussian",)):
        codes = X.to_numpy()
        at = {"first": 0, "middle": len(codes) // 2, "last": len(codes)}[position]
        neighbour = pd.DataFrame(np.insert(codes, at, codes[7], axis=0), columns=X.columns)
        fits = [PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0).fit(T)
                for T in (X, neighbour)]
        assert [f.mechanism_ for f in fits] == [expected, expected]
        assert fits[1].noisy_count_ - fits[0].noisy_count_ == 1.0
        for f in fits:
            gaussian = f.planned_tables_ >= gaussian_crossover(1.0, 1e-9)
            assert f.mechanism_ == ("gaussian" if gaussian else "laplace")
            # the plan that chose it is the Laplace release's (public facts and DP outputs)
            plain = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0,
                                       mechanism="laplace", merge_threshold=0).fit(
                X if f is fits[0] else neighbour)
            assert not plain.merged_values_
            assert f.planned_tables_ == len(plain.marginal_sets_)
            assert (f.privacy_spent_.delta == 0.0) == (expected == "laplace")


def test_auto_clone_get_params_and_reproducible():
    X, cats = _copies_table(n=1500)
    synth = PriViewSynthesizer(epsilon=2.0, delta=1e-7, categories=cats, random_state=5)
    params = synth.get_params()
    assert params["mechanism"] == "auto"
    twin = clone(synth)
    assert twin.get_params() == params
    a, b = synth.fit(X), twin.fit(X)
    assert a.mechanism_ == b.mechanism_ and a.planned_tables_ == b.planned_tables_
    for (s, t), (u, v) in zip(a.noisy_views_, b.noisy_views_):
        assert s == u
        np.testing.assert_array_equal(t, v)
    assert a.privacy_spent_ == b.privacy_spent_
    pd.testing.assert_frame_equal(a.sample(300, random_state=2), b.sample(300, random_state=2))
    assert clone(synth).set_params(mechanism="laplace").fit(X).mechanism_ == "laplace"


def test_gaussian_clone_get_params_and_reproducible():
    X, cats = _copies_table(n=1500)
    synth = PriViewSynthesizer(epsilon=2.0, delta=1e-7, categories=cats, random_state=5,
                               mechanism="gaussian")
    params = synth.get_params()
    assert params["mechanism"] == "gaussian" and params["delta"] == 1e-7
    twin = clone(synth)
    assert twin.get_params() == params
    a, b = synth.fit(X), twin.fit(X)
    assert a.selected_pairs_ == b.selected_pairs_
    for (s, t), (u, v) in zip(a.noisy_views_, b.noisy_views_):
        assert s == u
        np.testing.assert_array_equal(t, v)
    assert a.privacy_spent_ == b.privacy_spent_
    pd.testing.assert_frame_equal(a.sample(300, random_state=2), b.sample(300, random_state=2))
    other = PriViewSynthesizer(**{**params, "random_state": 6}).fit(X)
    assert not all(np.array_equal(t, v) for (_, t), (_, v)
                   in zip(a.noisy_views_, other.noisy_views_))


@pytest.mark.parametrize("params, match", [
    ({"mechanism": "normal"}, "mechanism"),
    ({"mechanism": None}, "mechanism"),
    ({"mechanism": "Auto"}, "mechanism"),
    ({"mechanism": "auto", "delta": 0}, "delta"),
    ({"mechanism": "auto", "delta": 0.02}, "delta"),
    ({"mechanism": "gaussian", "delta": 0}, "delta"),
    ({"mechanism": "gaussian", "delta": 0.5}, "delta"),
    ({"mechanism": "gaussian", "delta": "1e-9"}, "delta"),
    ({"mechanism": "gaussian", "delta": float("nan")}, "delta"),
    ({"delta": -1e-9}, "delta"),  # checked whatever the mechanism
    ({"mechanism": "gaussian", "epsilon": 1.0, "count_epsilon": 0.5}, "count_epsilon"),
])
def test_gaussian_bad_parameters(params, match):
    X, cats = _binary(200, 4)
    with pytest.raises((ValueError, TypeError), match=match):
        PriViewSynthesizer(categories=cats, random_state=0, **params).fit(X)


# ------------------------------------------- pairs beyond the spanning tree (extra pairs)
def _noisy_copies(n, d=16, c=6, seed=3):
    """d columns of c values, column j + d/2 a noisy copy of column j."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, c, size=(n, d // 2))
    X = pd.DataFrame(np.hstack([base, (base + (rng.random(base.shape) < 0.3)) % c]),
                     columns=[f"c{j}" for j in range(d)])
    return X, {col: list(range(c)) for col in X}


def test_extra_pairs_are_a_public_function_and_zero_where_noise_dominates():
    from dpsynth.release import priview
    X, cats = _noisy_copies(6000)
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0).fit(X)
    assert synth.mechanism_ == "gaussian" and synth.strength_ == 1 and synth.select_pairs_
    w = len(synth.marginal_sets_) - len(synth.selected_pairs_)
    k = synth.n_extra_pairs_
    assert 0 < k <= priview.EXTRA_PAIR_FACTOR * (w - 1)
    assert len(synth.selected_pairs_) == w - 1 + k
    # the same shape, domain and seed (hence the same noisy count) but other data (every
    # column independent): the same number of extra pairs, other pairs
    rng = np.random.default_rng(9)
    Y = pd.DataFrame(rng.integers(0, 6, size=X.shape), columns=X.columns)
    other = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0).fit(Y)
    assert other.noisy_count_ == synth.noisy_count_ and other.n_extra_pairs_ == k
    # the rule itself: reads the views' domain and grouping, the budget and the noisy
    # count; none where the tables are noise-dominated, up to the cap with many records,
    # none with Laplace noise; more records never fewer pairs
    views = [(v, None) for v in synth.marginal_sets_[:w]]
    rho_pairs = sum(m.rho for m in synth.privacy_spent_.mechanisms if "tables" in m.name
                    and "views" not in m.name)
    counts = [100.0, 1000.0, 3000.0, 6000.0, 20000.0, 1e6]
    ks = []
    for n in counts:
        synth.noisy_count_ = n
        ks.append(synth._extra_pairs(views, rho_pairs))
    assert ks[0] == 0 and ks[-1] == int(priview.EXTRA_PAIR_FACTOR * (w - 1))
    assert ks == sorted(ks)
    synth.mechanism_ = "laplace"
    assert synth._extra_pairs(views, rho_pairs) == 0
    # a small table at the same settings: noise dominates, the tree only
    X_small, _ = _noisy_copies(3000)
    small = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0).fit(X_small)
    assert small.select_pairs_ and small.n_extra_pairs_ == 0
    assert len(small.selected_pairs_) == len(small.marginal_sets_) // 2


def test_extra_pairs_join_the_tree_first_and_are_accounted():
    X, cats = _noisy_copies(10000, d=20)
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0).fit(X)
    k = synth.n_extra_pairs_
    w = len(synth.marginal_sets_) - len(synth.selected_pairs_)
    assert synth.mechanism_ == "gaussian" and k > 0
    own = synth.marginal_sets_[:w]
    group = {a: i for i, v in enumerate(own) for a in v}
    # the first w - 1 pairs are a spanning tree over the views, the rest distinct pairs of
    # columns of different views
    parent = list(range(w))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b in synth.selected_pairs_[:w - 1]:
        ga, gb = find(group[a]), find(group[b])
        assert ga != gb
        parent[ga] = gb
    pairs = synth.selected_pairs_
    assert len(set(pairs)) == len(pairs) and all(group[a] != group[b] for a, b in pairs)
    # the accounting: the tree's and the extra pairs' choices share the selection's rho
    # equally per round, their tables the pairs' rho, every table the same sigma
    spent = synth.privacy_spent_
    by = {m.name: m for m in spent.mechanisms}
    rho_views = synth.rho_ - synth.count_epsilon ** 2 / 2
    tree_choice = by[f"{w - 1} pairs joining the views (exponential mechanism)"]
    extra_choice = by[f"{k} pairs beyond the tree (exponential mechanism)"]
    assert tree_choice.rho + extra_choice.rho == pytest.approx(rho_views * SELECT_SHARES[1])
    assert tree_choice.rho / (w - 1) == pytest.approx(extra_choice.rho / k)
    tree_tables = by[f"{w - 1} chosen pairs' tables, every cell"]
    extra_tables = by[f"{k} tables of the pairs beyond the tree, every cell"]
    rho_pairs = rho_views * SELECT_SHARES[2]
    assert tree_tables.rho + extra_tables.rho == pytest.approx(rho_pairs)
    sigma = math.sqrt((w - 1 + k) / (2 * rho_pairs))
    for m in (tree_tables, extra_tables):  # every pair's table has 36 cells
        assert dict(m.params)["sigma_min"] == pytest.approx(sigma)
        assert dict(m.params)["sigma_max"] == pytest.approx(sigma)
    assert math.fsum(m.rho for m in spent.mechanisms) <= synth.rho_
    assert spent.epsilon == pytest.approx(1.0) and spent.epsilon <= 1.0
    # the extra pairs' noisy tables are the data's plus that noise
    noise = np.concatenate([(t - view_counts(X.to_numpy(), a, [6] * 20)).ravel()
                            for a, t in synth.noisy_views_[w + w - 1:]])
    assert len(synth.noisy_views_) == w + w - 1 + k
    assert noise.std() == pytest.approx(sigma, rel=0.25)


def test_tree_marginals_of_a_chain():
    from dpsynth.release.priview import _tree_marginals
    # a -> b -> c, each a noisy copy: the model's (a, c) is P(a) P(b | a) P(c | b)
    ab = np.array([[40.0, 10.0], [5.0, 45.0]])
    bc = np.array([[30.0, 15.0], [10.0, 45.0]])
    tables = [((0,), ab.sum(axis=1)), ((1,), ab.sum(axis=0)), ((2,), bc.sum(axis=0)),
              ((0, 1), ab), ((1, 2), bc)]
    out = _tree_marginals(tables, [2, 2, 2])
    np.testing.assert_allclose(out[(0, 1)], ab)
    np.testing.assert_allclose(out[(1, 2)], bc)
    expected = ab @ (bc / bc.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(out[(0, 2)], expected)
    assert out[(0, 2)].sum() == pytest.approx(100.0)


def test_gaussian_noise_by_table_size_is_accounted(monkeypatch):
    # sigma_i proportional to cells_i**(-1/3) within each group of tables measured together:
    # the tables' rho = sum 1 / (2 sigma_i**2) is the group's share, the release's total
    # is unchanged, and each table's noise has its own sigma
    from dpsynth.release import priview
    monkeypatch.setattr(priview, "GAUSSIAN_ALLOCATION", "cells")
    X, cats = _copies_table()
    synth = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0,
                               mechanism="gaussian").fit(X)
    spent = synth.privacy_spent_
    assert math.fsum(m.rho for m in spent.mechanisms) <= synth.rho_
    assert spent.epsilon == pytest.approx(1.0) and spent.epsilon <= 1.0
    views = next(m for m in spent.mechanisms if m.name.endswith("views, every cell"))
    params = dict(views.params)
    w = len(synth.marginal_sets_) - len(synth.selected_pairs_)
    cards = synth.view_cardinalities_
    cells = np.array([math.prod(int(cards[a]) for a in v) for v in synth.marginal_sets_[:w]],
                     dtype=float)
    c = math.sqrt(np.sum(cells ** (2 / 3)) / (2 * views.rho))
    sigmas = c * cells ** (-1 / 3)
    assert np.sum(1 / (2 * sigmas ** 2)) == pytest.approx(views.rho)
    assert params["sigma_min"] == pytest.approx(sigmas.min())
    assert params["sigma_max"] == pytest.approx(sigmas.max())
    assert "_scales" not in params and "sigma" not in params
    pairs = next(m for m in spent.mechanisms if "pairs' tables" in m.name)
    before = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0,
                                mechanism="gaussian")
    monkeypatch.setattr(priview, "GAUSSIAN_ALLOCATION", "equal")
    before.fit(X)
    same = {m.name: m.rho for m in before.privacy_spent_.mechanisms}
    assert views.rho == pytest.approx(same[views.name])
    assert pairs.rho == pytest.approx(same[pairs.name])


def _uniform_table(n, cards, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({f"c{j}": rng.integers(0, c, n) for j, c in enumerate(cards)})
    return X, {f"c{j}": list(range(c)) for j, c in enumerate(cards)}


def test_auto_below_the_crossover_takes_gaussian_by_its_own_plan_with_a_margin(monkeypatch):
    import dpsynth.release.priview as priview
    # 11 columns, one many-valued: the Laplace plan (strength-1 views and their tree) is
    # below the crossover; the Gaussian plan, more pairs beyond the tree, expects clearly
    # less pair error
    X, cats = _uniform_table(10000, (50, 4, 2, 3, 6, 2, 5, 9, 3, 2, 4))
    auto = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0).fit(X)
    errors = auto.plan_errors_
    assert auto.planned_tables_ < gaussian_crossover(1.0, 1e-9)
    assert min(errors.values()) >= priview.PAIR_TVD_TARGET
    assert errors["gaussian"] < (1.0 - priview.AUTO_PLAN_MARGIN) * errors["laplace"]
    assert auto.mechanism_ == "gaussian" and auto.privacy_spent_.delta > 0.0
    gaussian = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0,
                                  mechanism="gaussian").fit(X)
    assert auto.rho_ == gaussian.rho_ and auto.marginal_sets_ == gaussian.marginal_sets_
    record = auto.privacy_spent_.mechanisms[1]
    assert record.mechanism == "discrete_laplace" and record.params["pure_epsilon"] == 0.001
    # the choice reads the declared domain and the noisy count only: other records of the
    # same number, the same plans and errors
    other = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0).fit(
        _uniform_table(10000, (50, 4, 2, 3, 6, 2, 5, 9, 3, 2, 4), seed=1)[0])
    assert other.plan_errors_ == errors and other.mechanism_ == "gaussian"
    # a margin the Gaussian plan does not clear: the Laplace release, draw for draw
    monkeypatch.setattr(priview, "AUTO_PLAN_MARGIN", 0.5)
    kept = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0).fit(X)
    laplace = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0,
                                 mechanism="laplace").fit(X)
    assert kept.plan_errors_ == errors and kept.mechanism_ == "laplace"
    assert kept.privacy_spent_ == laplace.privacy_spent_ and kept.privacy_spent_.delta == 0.0
    for (s, t), (u, v) in zip(kept.noisy_views_, laplace.noisy_views_):
        assert s == u
        np.testing.assert_array_equal(t, v)


def test_auto_keeps_laplace_when_the_plans_are_near_a_tie():
    import dpsynth.release.priview as priview
    # the Gaussian plan's error a little below the Laplace plan's (less than the margin)
    X, cats = _uniform_table(15000, (61, 4, 3, 7, 5, 10, 3, 6, 4))
    auto = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0).fit(X)
    errors = auto.plan_errors_
    assert auto.planned_tables_ < gaussian_crossover(1.0, 1e-9)
    assert (1.0 - priview.AUTO_PLAN_MARGIN) * errors["laplace"] <= errors["gaussian"]
    assert errors["gaussian"] < errors["laplace"]
    assert auto.mechanism_ == "laplace" and auto.privacy_spent_.delta == 0.0


def test_auto_plan_errors_only_below_the_crossover():
    X, cats = _copies_table()
    auto = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0).fit(X)
    assert auto.mechanism_ == "gaussian" and auto.plan_errors_ is None
    fixed = PriViewSynthesizer(epsilon=1.0, categories=cats, random_state=0,
                               mechanism="laplace").fit(X)
    assert fixed.plan_errors_ is None
