"""DP-marginals release: exact counting kernel, contribution bounding, noise, thresholds."""

from collections import Counter
from itertools import combinations
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from dpsynth import DPMarginalSynthesizer
from dpsynth._core import _counting
from tests._support import exact_marginals
from dpsynth.preprocessing import TableEncoder
from dpsynth.release import SDSRelease

SDS_EXAMPLE = pd.DataFrame({
    "A": ["a1", "a1", "a2", "a2", "a1"],
    "B": ["b1", "b2", None, "b2", "b2"],
    "C": ["c1", "c1", "c2", "c1", None],
})

SDS_COUNTS = {
    (("A", "a1"),): 3, (("A", "a2"),): 2, (("B", "b1"),): 1, (("B", "b2"),): 3,
    (("C", "c1"),): 3, (("C", "c2"),): 1,
    (("A", "a1"), ("B", "b1")): 1, (("A", "a1"), ("B", "b2")): 2,
    (("A", "a1"), ("C", "c1")): 2, (("A", "a2"), ("B", "b2")): 1,
    (("A", "a2"), ("C", "c1")): 1, (("A", "a2"), ("C", "c2")): 1,
    (("B", "b1"), ("C", "c1")): 1, (("B", "b2"), ("C", "c1")): 2,
    (("A", "a1"), ("B", "b1"), ("C", "c1")): 1, (("A", "a1"), ("B", "b2"), ("C", "c1")): 1,
    (("A", "a2"), ("B", "b2"), ("C", "c1")): 1,
}


def _ids(encoder, frame):
    codes = encoder.transform(frame)
    return np.where(codes >= 0, codes + encoder.offsets_[:-1], -1).astype(np.int32)


def _exact_dict(frame, reporting_length, missing):
    encoder = TableEncoder(missing=missing).fit(frame)
    levels = exact_marginals(_ids(encoder, frame), encoder.schema_.attribute_columns,
                             frame.shape[1], reporting_length)
    return {tuple(encoder.schema_.attribute_name(a) for a in row): int(c)
            for level in levels for row, c in zip(level.tuples.tolist(), level.counts)}


def _brute_force(frame, reporting_length, missing):
    counts = Counter()
    for record in frame.itertuples(index=False):
        cells = []
        for name, value in zip(frame.columns, record):
            is_missing = value is None or (isinstance(value, float) and math.isnan(value))
            if is_missing and missing == "absent":
                continue
            cells.append((name, None if is_missing else value))
        for k in range(1, reporting_length + 1):
            counts.update(combinations(cells, k))
    return dict(counts)


def test_sds_example_gives_the_17_documented_counts():
    assert _exact_dict(SDS_EXAMPLE, 3, "absent") == SDS_COUNTS


@pytest.mark.parametrize("missing", ["absent", "category"])
@pytest.mark.parametrize("reporting_length", [1, 2, 3, 4])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_counting_kernel_matches_brute_force(missing, reporting_length, seed):
    rng = np.random.default_rng(seed)
    n, d = 60, 5
    frame = pd.DataFrame({
        f"c{j}": pd.Series(rng.choice(["p", "q", "r", None][: 2 + j % 3], n), dtype=object)
        for j in range(d)})
    assert _exact_dict(frame, reporting_length, missing) == _brute_force(
        frame, reporting_length, missing)


def _single_level_table(tuples, bits):
    keys = _counting.pack_tuples(np.ascontiguousarray(tuples, dtype=np.int32), bits)
    return _counting.build_table(keys, np.arange(len(tuples), dtype=np.int64))


def test_bounded_counts_never_exceed_the_bound_per_record():
    rng = np.random.default_rng(0)
    n, d = 200, 6
    ids = np.full((n, d), -1, dtype=np.int32)
    for j in range(d):  # attribute ids 2j, 2j+1; some absent cells
        ids[:, j] = np.where(rng.random(n) < 0.8, 2 * j + rng.integers(0, 2, n), -1)
    column_of = np.repeat(np.arange(d, dtype=np.int32), 2)
    # level 2 with every pair of different columns as candidate
    pairs = np.array([(a, b) for a in range(2 * d) for b in range(a + 1, 2 * d)
                      if column_of[a] != column_of[b]], dtype=np.int32)
    singles = np.arange(2 * d, dtype=np.int32)[:, None]
    bits = _counting.key_bits(2 * d)
    keys = np.concatenate([_counting.pack_tuples(singles, bits),
                           _counting.pack_tuples(pairs, bits)])
    values = np.concatenate([np.full(2 * d, -2), np.arange(len(pairs))]).astype(np.int64)
    slots, slot_values = _counting.build_table(keys, values)
    sizes = _counting.record_tuple_counts(ids, 2, bits, slots, slot_values)
    present = (ids >= 0).sum(axis=1)
    np.testing.assert_array_equal(sizes, present * (present - 1) // 2)
    for bound in (1, 3, 7, 100):
        total = 0
        for u in range(n):  # one record at a time: its own contribution
            counts = _counting.bounded_counts(ids[u:u + 1], 2, bits, slots, slot_values,
                                              len(pairs), sizes[u:u + 1], bound, 12345 + u,
                                              np.ones(1, dtype=np.int64))
            assert counts.max(initial=0) <= 1
            assert counts.sum() == min(sizes[u], bound)
            total += counts.sum()
        all_counts = _counting.bounded_counts(ids, 2, bits, slots, slot_values, len(pairs),
                                              sizes, bound, 7, np.ones(n, dtype=np.int64))
        assert all_counts.sum() == total == np.minimum(sizes, bound).sum()


def test_contribution_bounding_keeps_a_uniform_subset():
    ids = np.arange(10, dtype=np.int32)[None, :]  # one record, 10 columns
    column_of = np.arange(10, dtype=np.int32)
    singles = np.arange(10, dtype=np.int32)[:, None]
    slots, values = _single_level_table(singles, _counting.key_bits(10))
    sizes = np.array([10], dtype=np.int64)
    kept = np.zeros(10)
    trials = 4000
    for seed in range(trials):
        kept += _counting.bounded_counts(ids, 1, _counting.key_bits(10), slots, values,
                                         10, sizes, 3, seed, np.ones(1, dtype=np.int64))
    # each item is kept with probability 3/10
    np.testing.assert_allclose(kept / trials, 0.3, atol=4 * math.sqrt(0.21 / trials))
    assert column_of.size == 10


@pytest.mark.parametrize("bound", [2, 10])
def test_repeated_rows_count_like_separate_records(bound):
    ids = np.arange(5, dtype=np.int32)[None, :]  # one distinct row, 5 candidates
    singles = np.arange(5, dtype=np.int32)[:, None]
    bits = _counting.key_bits(5)
    slots, values = _single_level_table(singles, bits)
    sizes = np.array([5], dtype=np.int64)
    counts = _counting.bounded_counts(ids, 1, bits, slots, values, 5, sizes, bound, 3,
                                      np.array([40], dtype=np.int64))
    assert counts.sum() == 40 * min(5, bound)
    assert counts.max() <= 40
    if bound >= 5:
        np.testing.assert_array_equal(counts, 40)
    else:  # 40 independent subsets: every candidate gets some, none gets all
        assert counts.min() > 0 and counts.max() < 40


def test_fabrication_rate_matches_threshold_formula():
    # 30 x 30 values but only the diagonal pairs exist: 870 zero-count candidates
    n_values, per_value = 30, 200
    values = np.repeat(np.arange(n_values), per_value)
    frame = pd.DataFrame({"A": [f"a{v}" for v in values], "B": [f"b{v}" for v in values]})
    eta = 0.5
    synth = DPMarginalSynthesizer(release=SDSRelease(fabrication_mode={"adaptive": {2: eta}}),
                                  epsilon=6.0, reporting_length=2,
                                  random_state=3).fit(frame)
    spent = synth.privacy_spent_
    assert len(synth.aggregates_.counts[0]) == 2 * n_values
    pairs = [c for c in synth.aggregates_.to_dict() if len(c) == 2]
    fabricated = sum(1 for (a, b) in pairs if a[1][1:] != b[1][1:])
    zero_candidates = n_values * n_values - n_values
    expected = 1 - norm.cdf(spent["thresholds"][2] / spent["noise_scales"][2])
    assert expected == pytest.approx(eta / 2)
    rate = fabricated / zero_candidates
    assert abs(rate - expected) < 4 * math.sqrt(expected * (1 - expected) / zero_candidates)


def _check_closed_and_normalised(aggregates):
    released = aggregates.to_dict()
    for combination, count in released.items():
        assert count >= 1
        for sub in combinations(combination, len(combination) - 1):
            if sub:
                assert sub in released
                assert released[sub] >= count


@pytest.mark.parametrize("mode", ["uncontrolled", "minimize", "progressive"])
def test_released_aggregates_are_closed_and_normalised(mode):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({f"c{j}": rng.choice(list("abcd")[: 2 + j % 3], 3000)
                          for j in range(6)})
    synth = DPMarginalSynthesizer(release=SDSRelease(fabrication_mode=mode),
                                  random_state=0).fit(frame)
    _check_closed_and_normalised(synth.aggregates_)
    assert set(synth.privacy_spent_["thresholds"]) == {1, 2, 3}


def test_first_level_only_releases_observed_values():
    frame = pd.DataFrame({"a": pd.Categorical(["x"] * 500 + ["y"] * 500,
                                              categories=["x", "y", "never"])})
    synth = DPMarginalSynthesizer(release="sds", epsilon=10, random_state=0).fit(frame)
    released = {c[0][1] for c in synth.aggregates_.to_dict()}
    assert released == {"x", "y"}
    # the unreleased dtype category is not published in the schema
    column = synth.aggregates_.schema.to_json()["columns"][0]
    assert column["values"] == ["x", "y"] and "categories" not in column["dtype"]
    assert list(synth.sample(50)["a"].cat.categories) == ["x", "y"]


def test_same_random_state_same_aggregates():
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({f"c{j}": rng.choice(list("abc"), 2000) for j in range(5)})
    first = DPMarginalSynthesizer(release="sds", random_state=11).fit(frame).aggregates_.to_dict()
    again = DPMarginalSynthesizer(release="sds", random_state=11).fit(frame).aggregates_.to_dict()
    other = DPMarginalSynthesizer(release="sds", random_state=12).fit(frame).aggregates_.to_dict()
    assert first == again
    assert first != other


def test_large_epsilon_counts_are_close_to_exact():
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({f"c{j}": rng.choice(list("ab"), 5000) for j in range(4)})
    exact = _brute_force(frame, 3, "category")
    released = DPMarginalSynthesizer(release="sds", epsilon=2000, random_state=0).fit(frame).aggregates_.to_dict()
    assert set(released) == set(exact)
    errors = [abs(released[c] - exact[c]) / exact[c] for c in exact]
    assert max(errors) < 0.05


def test_input_frame_is_not_modified():
    frame = SDS_EXAMPLE.copy()
    before = frame.copy()
    DPMarginalSynthesizer(release="sds", random_state=0).fit(frame)
    pd.testing.assert_frame_equal(frame, before)


def test_public_universe_excludes_impossible_missing_values():
    # int and bool columns cannot hold missing values: declaring their categories
    # must not let noise fabricate a missing value (it would change the dtype)
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"n": rng.integers(0, 3, 3000), "b": rng.random(3000) < 0.5,
                          "s": pd.Series(rng.choice(["x", None], 3000), dtype=object)})
    categories = {"n": [0, 1, 2], "b": [False, True], "s": ["x"]}
    encoder = TableEncoder(categories=categories).fit(frame)
    np.testing.assert_array_equal(encoder.schema_.possible_attributes,
                                  [True, True, True, False, True, True, False, True, True])
    for seed in range(5):
        synth = DPMarginalSynthesizer(release="sds", epsilon=0.5, encoder=TableEncoder(categories=categories),
                                      random_state=seed).fit(frame)
        assert synth.privacy_spent_["n_candidates"][1] == 7
        released = {c for c in synth.aggregates_.to_dict() if len(c) == 1}
        assert ("n", None) not in released and ("b", None) not in released
        out = synth.sample(500)
        assert out["n"].dtype == np.int64 and out["b"].dtype == bool


@pytest.mark.parametrize("shape, low, high", [((3000, 6), -1, 3), ((2000, 3), -5, 400),
                                              ((50, 1), 0, 1), ((0, 4), 0, 1)])
def test_distinct_rows_match_numpy_unique(shape, low, high):
    """The hashing pass plus packed-word sort gives np.unique(axis=0)'s rows and counts."""
    from dpsynth.release.sds import _distinct_rows
    rng = np.random.default_rng(1)
    ids = rng.integers(low, high, size=shape).astype(np.int32)
    if shape[0]:
        ids = np.concatenate([ids, ids[::3]])  # duplicates
    rows, multiplicity = _distinct_rows(ids)
    expected, counts = np.unique(ids, axis=0, return_counts=True)
    np.testing.assert_array_equal(rows, expected)
    np.testing.assert_array_equal(multiplicity, counts)
    # weights add up over the duplicates of a row
    again, total = _distinct_rows(np.concatenate([rows, rows]),
                                  np.concatenate([multiplicity, multiplicity]))
    np.testing.assert_array_equal(again, rows)
    np.testing.assert_array_equal(total, 2 * multiplicity)


@pytest.mark.parametrize("bound", [1, 3, 1000])
def test_dense_counting_matches_the_walk(bound):
    """Counting column group by column group gives the walk's sizes and bounded counts."""
    from dpsynth.release.sds import _RELEASED, _table
    rng = np.random.default_rng(2)
    widths = [3, 1, 4, 2, 5]
    column_of = np.repeat(np.arange(len(widths)), widths).astype(np.int32)
    start = np.r_[0, np.cumsum(widths)]
    ids = np.stack([start[c] + rng.integers(0, w, 400) for c, w in enumerate(widths)], axis=1)
    ids[rng.random(ids.shape) < 0.1] = -1  # absent cells
    ids = np.ascontiguousarray(ids, dtype=np.int32)
    singles = np.arange(column_of.size, dtype=np.int32)[:, None]
    pairs = np.array([(a, b) for a, b in combinations(range(column_of.size), 2)
                      if column_of[a] != column_of[b] and rng.random() < 0.8], dtype=np.int32)
    bits = _counting.key_bits(column_of.size)
    candidates = _counting.candidate_tuples(pairs, column_of,
                                            *_table([(pairs, np.zeros(len(pairs)))], bits), bits)
    assert len(candidates) > 20
    slots, values = _table([(singles, np.full(len(singles), _RELEASED)),
                            (pairs, np.full(len(pairs), _RELEASED)),
                            (candidates, np.arange(len(candidates)))], bits)
    plan = _counting.dense_plan(candidates, column_of)
    assert plan is not None
    sizes = _counting.record_tuple_counts(ids, 3, bits, slots, values)
    np.testing.assert_array_equal(
        _counting.record_tuple_counts(ids, 3, bits, slots, values, plan), sizes)
    multiplicity = rng.integers(1, 4, len(ids)).astype(np.int64)
    walked = _counting.bounded_counts(ids, 3, bits, slots, values, len(candidates), sizes,
                                      bound, 7, multiplicity)
    dense = _counting.bounded_counts(ids, 3, bits, slots, values, len(candidates), sizes,
                                     bound, 7, multiplicity, plan)
    np.testing.assert_array_equal(dense, walked)
