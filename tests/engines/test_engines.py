"""Counting through CodeBlocks: the same sums however the rows are split."""

import numpy as np
import pytest

from dpsynth import DPMarginalSynthesizer
from dpsynth.engines import InMemoryCodes, as_blocks
from dpsynth.engines.blocks import CodeBlocks, by_lookup
from dpsynth.release import SDSRelease
from dpsynth.release.adaptive_selection import release_workload

from tests._support import exact_marginals


def _codes(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 3, n)
    return np.column_stack([group, (group + rng.integers(0, 2, n)) % 4,
                            rng.integers(0, 2, n), (group == 0) * rng.integers(0, 5, n)]
                           ).astype(np.int32)


def test_chunked_sums_equal_one_block():
    codes = _codes()
    one = InMemoryCodes(codes)
    chunked = InMemoryCodes(codes, n_threads=3, chunk_rows=250)
    stat = lambda block: (np.bincount(block[:, 0], minlength=3).astype(float),  # noqa: E731
                          np.array([float(block.shape[0])]))
    for a, b in zip(one.map_sum(stat), chunked.map_sum(stat)):
        np.testing.assert_array_equal(a, b)
    starts = chunked.map_sum(lambda block, start: np.array([float(start)]), indexed=True)
    assert starts[0] == sum(range(0, 3000, 250))
    assert chunked.map(lambda b: b[:, :2]).n_columns == 2
    assert chunked.n_rows() == 3000
    assert as_blocks(one) is one and isinstance(as_blocks(codes), InMemoryCodes)


def test_sum_into_equals_map_sum():
    codes = _codes()
    make = lambda: np.zeros(12)  # noqa: E731

    def add(out, block):
        out += np.bincount(block[:, 0] * 4 + block[:, 1], minlength=12)

    want = np.bincount(codes[:, 0] * 4 + codes[:, 1], minlength=12).astype(float)
    for blocks in (InMemoryCodes(codes), InMemoryCodes(codes, n_threads=3, chunk_rows=250),
                   InMemoryCodes(codes, chunk_rows=700)):
        np.testing.assert_array_equal(blocks.sum_into(make, add), want)

    class SumOnly(InMemoryCodes):  # an engine with map_sum only: the default sum_into
        sum_into = CodeBlocks.sum_into
    np.testing.assert_array_equal(SumOnly(codes, n_threads=2, chunk_rows=400).sum_into(
        make, add), want)


def test_distinct_rows_and_weighted_sums_equal_every_row():
    codes = _codes(n=5000)  # few distinct rows: summed once each, weighted
    rows, counts = InMemoryCodes(codes, n_threads=2, chunk_rows=300).distinct_rows()
    want_rows, want_counts = np.unique(codes, axis=0, return_counts=True)
    order = np.lexsort(rows.T[::-1])
    np.testing.assert_array_equal(rows[order], want_rows)
    np.testing.assert_array_equal(counts[order], want_counts)
    make = lambda: np.zeros(20)  # noqa: E731

    def add(out, block, weights):
        out += np.bincount(block[:, 0] * 5 + block[:, 3], weights, minlength=20)

    want = np.bincount(codes[:, 0] * 5 + codes[:, 3], minlength=20).astype(float)
    distinct = np.random.default_rng(0).integers(0, 1000, (5000, 4)).astype(np.int32)
    for blocks in (InMemoryCodes(codes), InMemoryCodes(codes, n_threads=3, chunk_rows=250)):
        np.testing.assert_array_equal(blocks.sum_distinct_into(make, add), want)
        np.testing.assert_array_equal(blocks.map(lambda b: b[:, ::-1], once=True)
                                      .sum_distinct_into(make, lambda o, b, w: add(o, b[:, ::-1], w)),
                                      want)
        for a, b in zip(blocks.column_counts([0, 3], [3, 4, 2, 5]),
                        CodeBlocks.column_counts(blocks, [0, 3], [3, 4, 2, 5])):
            np.testing.assert_array_equal(a, b)
    # on two threads (row ranges of 100,000 rows or more), merged across the ranges
    many = np.tile(codes, (50, 1))
    rows, counts = InMemoryCodes(many, n_threads=2).distinct_rows()
    order = np.lexsort(rows.T[::-1])
    np.testing.assert_array_equal(rows[order], want_rows)
    np.testing.assert_array_equal(counts[order], 50 * want_counts)
    # mostly distinct rows: every row is read, unweighted
    assert InMemoryCodes(distinct, n_threads=2).distinct_rows() is None
    seen = []

    def add_mod(out, block, weights):
        seen.append(weights)
        out += np.bincount(block[:, 0] % 20, weights, minlength=20)

    np.testing.assert_array_equal(InMemoryCodes(distinct).sum_distinct_into(make, add_mod),
                                  np.bincount(distinct[:, 0] % 20, minlength=20))
    assert seen and all(w is None for w in seen)


def test_by_lookup_recodes_as_the_function_does():
    codes = _codes()
    codes[::7, 3] = -1  # an empty cell ("absent")
    n_values = np.array([3, 4, 2, 5])

    def func(block):  # column by column, with temporaries
        return np.where(block < 0, 9, (block * 3 + np.arange(4)) % 5).astype(np.int32)

    recode = by_lookup(func, n_values)
    out = recode(codes)
    np.testing.assert_array_equal(out, func(codes))
    assert out.dtype == np.int32
    with pytest.raises(ValueError, match="must lie in"):
        recode(np.array([[0, 4, 0, 0]], dtype=np.int32))
    with pytest.raises(ValueError, match="2-D"):
        recode(codes[:, :3])


def test_workload_release_is_the_same_in_chunks():
    codes = _codes()
    n_values = np.array([3, 4, 2, 5])
    a = release_workload(codes, n_values, rho=0.5, rng=np.random.default_rng(1))
    b = release_workload(InMemoryCodes(codes, n_threads=2, chunk_rows=400), n_values, rho=0.5,
                         rng=np.random.default_rng(1))
    assert len(a.measurements) == len(b.measurements)
    for (c1, t1, v1), (c2, t2, v2) in zip(a.measurements, b.measurements):
        assert c1 == c2 and v1 == v2 and np.array_equal(t1, t2)


def test_exact_counts_are_the_same_in_chunks():
    codes = _codes()
    offsets = np.array([0, 3, 7, 9])
    ids = (codes + offsets[None, :]).astype(np.int32)
    column_of = np.repeat(np.arange(4), [3, 4, 2, 5]).astype(np.int32)
    whole = exact_marginals(ids, column_of, 4, 3)
    chunked = exact_marginals(InMemoryCodes(ids, n_threads=2, chunk_rows=300), column_of, 4, 3)
    for x, y in zip(whole, chunked, strict=True):
        np.testing.assert_array_equal(x.tuples, y.tuples)
        np.testing.assert_array_equal(x.counts, y.counts)


@pytest.mark.parametrize("release", ["workload", "sds"])
def test_fit_does_not_depend_on_n_jobs(tmp_path, release):
    import pandas as pd

    rng = np.random.default_rng(2)
    n = 250_000  # above two chunks of 100,000 rows: fit counts in threads
    frame = pd.DataFrame({"a": rng.choice(list("abcd"), n), "b": rng.integers(0, 6, n),
                          "c": rng.choice(["x", "y"], n)})
    frame.loc[rng.random(n) < 0.2, "c"] = None
    files = []
    for n_jobs in (1, 2):
        strategy = SDSRelease(percentile=70) if release == "sds" else release
        synth = DPMarginalSynthesizer(epsilon=2.0, delta=1e-7, release=strategy, n_jobs=n_jobs,
                                      random_state=0).fit(frame)
        path = tmp_path / f"{n_jobs}.json"
        synth.aggregates_.save(path)
        files.append(path.read_bytes())
    assert files[0] == files[1]
