"""Adaptive workload release (AIM-style selection on a marginal-matching population)."""

import math

import numpy as np

from dpsynth.mechanisms import discrete_gaussian_mu
import pytest

from dpsynth.engines import InMemoryCodes
from dpsynth.model.counts import TableShards, count_tables, move_counts, table_layout
from dpsynth.model.descent import fit_population
from dpsynth.model.mixing import mix_within_neighbourhoods
from dpsynth.model.residuals import marginal_table
from dpsynth.model.rounding import round_to_reference
from dpsynth.release.adaptive_selection import (
    candidate_sets,
    nominal_rounds,
    release_workload,
    sample_release,
)

N_VALUES = np.array([3, 4, 2, 5, 3, 6])


def _table(n=3000, seed=0):
    """Correlated categorical codes: a chain 0 -> 1 -> 2 and 3 -> 4, column 5 noise."""
    rng = np.random.default_rng(seed)
    a = rng.choice(3, n, p=[0.6, 0.3, 0.1])
    b = (a + (rng.random(n) < 0.2) * rng.integers(1, 4, n)) % 4
    c = ((b >= 2) ^ (rng.random(n) < 0.1)).astype(int)
    d = rng.integers(0, 5, n)
    e = np.where(rng.random(n) < 0.8, d % 3, rng.integers(0, 3, n))
    f = rng.integers(0, 6, n)
    return np.column_stack([a, b, c, d, e, f]).astype(np.int32)


def _tvd(codes, synthetic, cols):
    p = marginal_table(codes, N_VALUES, cols).ravel() / len(codes)
    q = marginal_table(synthetic, N_VALUES, cols).ravel() / len(synthetic)
    return 0.5 * np.abs(p - q).sum()


@pytest.fixture(scope="module")
def release():
    return release_workload(_table(), N_VALUES, rho=0.5, rng=np.random.default_rng(7),
                            rounds_factor=4)


# ------------------------------------------------------------------ accounting
@pytest.mark.parametrize("accounting", ["gdp", "zcdp"])
@pytest.mark.parametrize("rho", [0.01, 0.5, 3.0])
def test_spends_sum_to_the_budget(rho, accounting):
    from scipy.stats import norm

    rel = release_workload(_table(n=800), N_VALUES, rho=rho, rng=np.random.default_rng(1),
                           rounds_factor=2, accounting=accounting)
    assert math.isclose(rel.rho_spent, rho, rel_tol=1e-9)
    # independent recomputation from each mechanism's public parameters
    recomputed = []
    for spend in rel.spends:
        if spend.mechanism in ("gaussian", "discrete_gaussian"):
            sigma, sens = spend.params["sigma"], spend.params["sensitivity"]
            recomputed.append(sens**2 / (2 * sigma**2))
        else:
            assert spend.mechanism == "exponential"
            eps = spend.params["epsilon"]
            if accounting == "zcdp":  # bounded range: eps**2 / 8 zCDP
                recomputed.append(eps**2 / 8)
            else:  # GDP mu of randomized response at eps / 2, as mu**2 / 2
                p = math.exp(eps / 2) / (1 + math.exp(eps / 2))
                recomputed.append((2 * norm.ppf(p)) ** 2 / 2)
    assert math.isclose(math.fsum(recomputed), rho, rel_tol=1e-9)
    for spend, value in zip(rel.spends, recomputed):
        assert math.isclose(spend.rho, value, rel_tol=1e-9)
    # every marginal measurement is a Gaussian spend with the same columns and variance
    gaussians = [s for s in rel.spends if s.mechanism == "discrete_gaussian"]
    whole = [s for s in gaussians if s.params.get("basis") != "residual"]
    assert len(whole) == len(rel.measurements)
    assert all(len(cols) == 1 for cols, _, _ in rel.measurements)  # only 1-way ones whole
    for spend, (cols, table, var) in zip(whole, rel.measurements):
        assert spend.params["columns"] == cols
        assert math.isclose(var, spend.params["noise_scale"] ** 2)
        # the exact discrete Gaussian's GDP mu is the accounted 1 / sigma
        assert discrete_gaussian_mu(spend.params["noise_scale"]) <= 1 / spend.params["sigma"]
        assert discrete_gaussian_mu(spend.params["noise_scale"]) == pytest.approx(
            1 / spend.params["sigma"], rel=1e-9)
        assert table.shape == tuple(N_VALUES[list(cols)])
    # each round measures residuals of the selected set: one Gaussian mechanism on
    # the stacked residuals, whose squared sensitivities prod(1 - 1/n_i) weighted by
    # the inverse noise variances add up to the spend's 1 / sigma**2
    rounds = [s for s in gaussians if s.params.get("basis") == "residual"]
    assert sum(s.params["n_residuals"] for s in rounds) == len(rel.residuals)
    start = 0
    for spend in rounds:
        part = rel.residuals[start:start + spend.params["n_residuals"]]
        start += spend.params["n_residuals"]
        assert all(set(cols) <= set(spend.params["columns"]) for cols, _, _ in part)
        squared = math.fsum(math.prod(1 - 1 / N_VALUES[c] for c in cols) / var
                            for cols, _, var in part)
        # the discrete noise drawn is calibrated a little above the accounted sigma
        assert squared <= 1 / spend.params["sigma"] ** 2 * (1 + 1e-12)
        assert math.isclose(squared, 1 / spend.params["sigma"] ** 2, rel_tol=1e-2)
        for cols, values, _ in part:
            assert values.shape == tuple(N_VALUES[list(cols)] - 1)
    # each selection is followed by the measurement of the selected set
    for k, spend in enumerate(rel.spends):
        if spend.mechanism == "exponential":
            assert rel.spends[k + 1].params["columns"] == spend.params["selected"]


def test_one_way_only_spends_everything():
    rel = release_workload(_table(n=200)[:, :1], N_VALUES[:1], rho=0.3,
                           rng=np.random.default_rng(0))
    assert len(rel.measurements) == 1
    assert math.isclose(rel.rho_spent, 0.3, rel_tol=1e-12)


# ------------------------------------------------------------------ public facts only
def test_selection_uses_public_facts_only(monkeypatch):
    # candidates depend on n_values (and the options) only
    assert candidate_sets(N_VALUES, 3, None) == candidate_sets(N_VALUES.copy(), 3, None)
    assert all(math.prod(N_VALUES[list(c)]) <= 30 for c in candidate_sets(N_VALUES, 3, 30))
    # two different tables: same candidates, same sensitivity, same first budgets
    rels = [release_workload(_table(n=n, seed=s), N_VALUES, rho=0.2,
                             rng=np.random.default_rng(3), rounds_factor=2)
            for n, s in [(500, 1), (2000, 2)]]
    first = [[s for s in r.spends if s.mechanism == "exponential"][0] for r in rels]
    assert first[0].params["n_candidates"] == first[1].params["n_candidates"]
    assert first[0].params["sensitivity"] == first[1].params["sensitivity"]
    assert first[0].params["epsilon"] == first[1].params["epsilon"]
    assert [s.rho for s in rels[0].spends[:6]] == [s.rho for s in rels[1].spends[:6]]
    # the data are read once, by one sum of per-block counts that only the accounted
    # mechanisms use (Gaussian measurements, exponential mechanism scores)
    reads = []

    class SpyBlocks(InMemoryCodes):
        def map_sum(self, func):
            reads.append(func)
            return super().map_sum(func)

        def sum_into(self, make, add):
            reads.append(add)
            return super().sum_into(make, add)

        def sum_distinct_into(self, make, add):
            reads.append(add)
            return super().sum_distinct_into(make, add)

    codes = _table(n=500)
    rel = release_workload(SpyBlocks(codes), N_VALUES, rho=0.2, rng=np.random.default_rng(3),
                           rounds_factor=2)
    assert len(reads) == 1
    same = release_workload(codes, N_VALUES, rho=0.2, rng=np.random.default_rng(3),
                            rounds_factor=2)
    for (c1, t1, v1), (c2, t2, v2) in zip(rel.measurements, same.measurements, strict=True):
        assert c1 == c2 and v1 == v2 and np.array_equal(t1, t2)


# ------------------------------------------------------------------ reproducibility
def test_reproducible_with_a_seed():
    codes = _table(n=1000)
    runs = []
    for _ in range(2):
        rng = np.random.default_rng(11)
        rel = release_workload(codes, N_VALUES, rho=0.3, rng=rng, rounds_factor=2)
        runs.append((rel, sample_release(rel, 500, rng)))
    (a, sa), (b, sb) = runs
    assert [s.rho for s in a.spends] == [s.rho for s in b.spends]
    assert [m[0] for m in a.measurements] == [m[0] for m in b.measurements]
    for (_, ta, _), (_, tb, _) in zip(a.measurements, b.measurements):
        np.testing.assert_array_equal(ta, tb)
    np.testing.assert_array_equal(sa, sb)
    other = release_workload(codes, N_VALUES, rho=0.3, rng=np.random.default_rng(12),
                             rounds_factor=2)
    assert not np.array_equal(other.measurements[0][1], a.measurements[0][1])


def test_threads_do_not_change_the_release():
    # 25 columns: 2,600 two- and three-way candidates, so two shards of tables
    rng = np.random.default_rng(5)
    n_values = rng.integers(2, 6, 25)
    codes = np.column_stack([rng.integers(0, k, 600) for k in n_values]).astype(np.int32)
    codes[:, 1] = codes[:, 0] % n_values[1]  # something to select
    runs = [release_workload(codes, n_values, rho=1.0, rng=np.random.default_rng(3),
                             rounds_factor=1, n_threads=k) for k in (1, 2)]
    assert len(candidate_sets(n_values, 3, 10**5)) >= 2_000
    assert runs[0].spends == runs[1].spends
    for (ca, ta, va), (cb, tb, vb) in zip(runs[0].residuals, runs[1].residuals):
        assert ca == cb and va == vb
        np.testing.assert_array_equal(ta, tb)
    np.testing.assert_array_equal(runs[0].population, runs[1].population)


def _cells(sets, n_values):
    return sum(math.prod(int(n_values[c]) for c in cols) for cols in sets)


def test_candidate_sets_capped_by_total_cells(monkeypatch):
    from dpsynth.release import adaptive_selection

    n_values = np.random.default_rng(0).integers(2, 9, 40)
    every = candidate_sets(n_values, 3, 10**5)
    total = _cells(every, n_values)
    # a cap the sets fit under changes nothing (and draws nothing)
    assert candidate_sets(n_values, 3, 10**5, total, rng=None) == every
    # below it: every pair, a random subset of the triples, within the cap
    pairs = [c for c in every if len(c) == 2]
    cap = _cells(pairs, n_values) + total // 10
    sets = candidate_sets(n_values, 3, 10**5, cap, np.random.default_rng(1))
    assert sets[:len(pairs)] == pairs
    triples = sets[len(pairs):]
    assert triples == sorted(set(triples)) and all(len(c) == 3 for c in triples)
    assert _cells(sets, n_values) <= cap
    assert _cells(sets, n_values) > cap - 9 ** 3 * 20  # nearly filled
    assert set(triples) <= set(every)
    # public randomness: the same seed gives the same sets, another seed others
    assert candidate_sets(n_values, 3, 10**5, cap, np.random.default_rng(1)) == sets
    assert candidate_sets(n_values, 3, 10**5, cap, np.random.default_rng(2)) != sets
    with pytest.raises(ValueError, match="needs rng"):
        candidate_sets(n_values, 3, 10**5, cap)
    # too many triples to list: drawn, the same contract
    monkeypatch.setattr(adaptive_selection, "_ENUMERATED_SETS", 1000)
    drawn = candidate_sets(n_values, 3, 200, cap, np.random.default_rng(1))
    triples = drawn[len(pairs):]
    assert drawn[:len(pairs)] == pairs and triples == sorted(set(triples))
    assert all(_cells([c], n_values) <= 200 for c in triples)
    assert cap - 200 < _cells(drawn, n_values) <= cap
    # every triple too large (8 cells at least): the draw stops with the pairs
    small = candidate_sets(n_values, 3, 7, 10**6, np.random.default_rng(1))
    assert small and all(len(c) == 2 for c in small)


def test_release_on_a_table_too_wide_for_every_triple():
    rng = np.random.default_rng(4)
    n_values = rng.integers(2, 5, 30)
    codes = np.column_stack([rng.integers(0, k, 400) for k in n_values]).astype(np.int32)
    codes[:, 1] = codes[:, 0] % n_values[1]
    every = candidate_sets(n_values, 3, 10**5)
    cap = _cells(every, n_values) // 3
    runs = [release_workload(codes[:n], n_values, rho=0.5, rng=np.random.default_rng(3),
                             rounds_factor=1, max_total_cells=cap) for n in (400, 399)]
    selections = [[s for s in r.spends if s.mechanism == "exponential"] for r in runs]
    n_candidates = {s.params["n_candidates"] for sel in selections for s in sel}
    # the candidates are the same for neighbouring tables and fewer than every set
    assert len(n_candidates) == 1 and n_candidates.pop() < len(every)
    assert math.isclose(runs[0].rho_spent, 0.5, rel_tol=1e-9)


# ------------------------------------------------------------------ counting
def _tables_and_records(seed, n=300, d=7):
    rng = np.random.default_rng(seed)
    n_values = rng.integers(2, 7, d)
    sets = [(c,) for c in range(d)] + candidate_sets(n_values, 3, 10**5) + [(0, 2, 4, 6)]
    tables = [(cols, tuple(int(n_values[c]) for c in cols)) for cols in sets]
    records = np.column_stack([rng.integers(0, k, n) for k in n_values]).astype(np.int32)
    return rng, n_values, tables, records


@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_move_counts_follows_the_records(seed, n_threads):
    rng, n_values, tables, records = _tables_and_records(seed)
    layout = table_layout(tables)
    holding = [np.array([t for t, (cols, _) in enumerate(tables) if c in cols])
               for c in range(len(n_values))]
    counts = count_tables(records, layout)
    current = records.copy()
    for _ in range(3):  # some records change one column, some several, most none
        previous = current.copy()
        rows = rng.choice(len(current), 80, replace=False)
        for r in rows:
            for c in rng.choice(len(n_values), rng.integers(1, 4), replace=False):
                current[r, c] = rng.integers(0, n_values[c])
        shards = TableShards(layout, n_threads)
        shards.bounds = [len(tables) * k // n_threads for k in range(n_threads + 1)]
        with shards:
            move_counts(counts, previous, current, layout, holding, shards)
        np.testing.assert_array_equal(counts, count_tables(current, layout))


@pytest.mark.parametrize("n", [5, 40, 3000])  # direct counts and histograms (n >= 2 cells)
def test_counts_and_distances_on_shards_match_one_pass(n):
    _, _, tables, records = _tables_and_records(2, n=n, d=9)
    layout = table_layout(tables)
    expected = np.concatenate([
        np.bincount(np.ravel_multi_index(records[:, list(cols)].T, shape),
                    minlength=math.prod(shape)) for cols, shape in tables]).astype(float)
    data = expected + np.random.default_rng(0).normal(0, 3, expected.size)
    base = layout[0]
    for parts in (1, 2, 5):
        shards = TableShards(layout, parts)
        shards.bounds = [len(tables) * k // parts for k in range(parts + 1)]
        with shards:
            counts = shards.count(records)
            distance = shards.distance(data, counts, 1.5)
        np.testing.assert_array_equal(counts, expected)
        np.testing.assert_allclose(distance, [np.abs(data[a:b] - 1.5 * expected[a:b]).sum()
                                              for a, b in zip(base[:-1], base[1:])])


def test_shards_keep_a_thousand_tables_per_thread():
    layout = table_layout([((0, 1), (3, 3))] * 2_500)
    assert TableShards(layout, 8).bounds == [0, 1_250, 2_500]
    assert TableShards(table_layout([((0,), (2,))] * 10), 4).bounds == [0, 10]


# ------------------------------------------------------------------ outputs
def test_consistent_targets_agree(release):
    targets = release.targets("consistent")
    tables = {tuple(cols): table for cols, table, _ in targets}
    totals = {round(float(t.sum()), 6) for t in tables.values()}
    assert len(totals) == 1
    for cols, table in tables.items():  # every 1-way view of every target agrees
        for p, c in enumerate(cols):
            view = table.sum(axis=tuple(q for q in range(len(cols)) if q != p))
            np.testing.assert_allclose(view, tables[(c,)], atol=1e-8)
    for _, _, weight in targets:
        assert weight > 0
    assert release.total == pytest.approx(3000, rel=0.05)
    assert {len(c) for c, _, _ in release.measurements} <= {1, 2, 3}


def test_end_to_end_accuracy(release):
    codes = _table()
    synthetic = sample_release(release, len(codes), np.random.default_rng(5))
    assert synthetic.shape == codes.shape and synthetic.dtype == np.int32
    assert np.all(synthetic >= 0) and np.all(synthetic < N_VALUES)
    pairs = [(0, 1), (1, 2), (3, 4), (0, 2)]
    ours = np.mean([_tvd(codes, synthetic, p) for p in pairs])
    rng = np.random.default_rng(0)
    independent = np.column_stack([rng.permutation(codes[:, j]) for j in range(6)])
    baseline = np.mean([_tvd(codes, independent, p) for p in pairs])
    assert ours < 0.05
    assert ours < 0.4 * baseline


def test_fit_population_matches_exact_targets():
    codes = _table(n=2000)
    targets = [((j,), marginal_table(codes, N_VALUES, (j,)), 1.0) for j in range(6)]
    targets += [((0, 1), marginal_table(codes, N_VALUES, (0, 1)), 1.0),
                ((3, 4), marginal_table(codes, N_VALUES, (3, 4)), 1.0)]
    # noisy, partly negative tables are accepted as they are
    noisy = [(c, t - 3.0, w) for c, t, w in targets]
    population = fit_population(N_VALUES, targets, 2000, np.random.default_rng(0), sweeps=4)
    for cols in [(0, 1), (3, 4), (2,)]:
        assert _tvd(codes, population, cols) < 0.01
    population = fit_population(N_VALUES, noisy, 1000, np.random.default_rng(0),
                                total=2000.0)
    assert population.shape == (1000, 6)
    assert _tvd(codes, population, (0, 1)) < 0.05


def test_mixing_keeps_measured_counts_and_removes_made_up_dependence():
    # chain a - b - c measured as (a, b) and (b, c); a and c were made dependent
    # beyond b (c copies a): mixing must keep both measured tables exactly and
    # make a and c independent given b, the maximum-entropy answer
    rng = np.random.default_rng(0)
    n = 20000
    a = rng.integers(0, 3, n)
    b = (a + rng.integers(0, 2, n)) % 3
    records = np.column_stack([a, b, a, rng.integers(0, 4, n)]).astype(np.int32)
    original = records.copy()
    sizes = np.array([3, 3, 3, 4])
    sets = [(0, 1), (1, 2), (3,)]
    mix_within_neighbourhoods(records, sizes, sets, np.random.default_rng(1))
    for cols in sets + [(0,), (1,), (2,)]:
        np.testing.assert_array_equal(marginal_table(records, sizes, cols),
                                      marginal_table(original, sizes, cols))
    assert np.mean(original[:, 0] == original[:, 2]) == 1.0
    for value in range(3):  # P(a, c | b) = P(a | b) P(c | b)
        rows = records[records[:, 1] == value]
        joint = marginal_table(rows, sizes, (0, 2)) / len(rows)
        product = np.outer(joint.sum(axis=1), joint.sum(axis=0))
        assert np.abs(joint - product).sum() < 0.05
    # a column without neighbours is permuted across all records
    assert np.mean(records[:, 3] == original[:, 3]) < 0.4
    # reproducible with the same generator
    again = original.copy()
    mix_within_neighbourhoods(again, sizes, sets, np.random.default_rng(1))
    np.testing.assert_array_equal(again, records)


def test_input_validation():
    codes = _table(n=50)
    with pytest.raises(ValueError, match="rho"):
        release_workload(codes, N_VALUES, rho=0.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="codes"):
        release_workload(codes + 10, N_VALUES, rho=1.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="alpha"):
        release_workload(codes, N_VALUES, rho=1.0, rng=np.random.default_rng(0), alpha=1.5)


# ------------------------------------------------------------------ small tables
def _one_way_total(measurements, d):
    """Inverse-variance mean of the first d (1-way) measurements' sums, recomputed."""
    sums = [(float(np.sum(table)), var * table.size) for _, table, var in measurements[:d]]
    return sum(s / v for s, v in sums) / sum(1.0 / v for _, v in sums)


def test_small_table_gets_fewer_more_precise_rounds():
    d, rho, alpha, kappa = len(N_VALUES), 0.05, 0.9, 0.03
    rel = release_workload(_table(n=400), N_VALUES, rho=rho, rng=np.random.default_rng(5),
                           rounds_factor=16, alpha=alpha, max_relative_noise=kappa)
    sigma_0 = math.sqrt(16 * d / (2 * alpha * rho))
    first, again = rel.measurements[:d], rel.measurements[d:2 * d]
    assert [cols for cols, _, _ in first] == [cols for cols, _, _ in again] == \
        [(c,) for c in range(d)]
    assert all(math.isclose(var, sigma_0**2, rel_tol=1e-4) for _, _, var in first)
    # the rounds' noise: kappa times the records estimated from the first 1-way
    # measurements (a DP output), at most sigma_0, at least one round per column
    n_hat = _one_way_total(rel.measurements, d)
    sigma = max(math.sqrt(d / (2 * alpha * rho)), min(sigma_0, kappa * n_hat))
    assert sigma < sigma_0
    rounds = [s.params["sigma"] for s in rel.spends
              if s.mechanism == "discrete_gaussian" and s.params.get("basis") == "residual"]
    assert math.isclose(rounds[0], sigma, rel_tol=1e-9)
    # both 1-way measurements together are as precise as one round's measurement
    combined = 1.0 / (1.0 / first[0][2] + 1.0 / again[0][2])
    # (the discrete noise drawn is calibrated a little above the accounted sigma)
    assert sigma**2 <= combined and math.isclose(combined, sigma**2, rel_tol=1e-3)
    assert math.isclose(rel.rho_spent, rho, rel_tol=1e-9)
    names = [s.name for s in rel.spends if s.mechanism == "discrete_gaussian"][d:2 * d]
    assert all(name.endswith("second measurement") for name in names)


def test_large_table_keeps_aims_rounds():
    kwargs = dict(rho=0.5, rounds_factor=4)
    capped = release_workload(_table(), N_VALUES, rng=np.random.default_rng(2), **kwargs)
    plain = release_workload(_table(), N_VALUES, rng=np.random.default_rng(2),
                             max_relative_noise=None, **kwargs)
    assert len(capped.measurements) == len(plain.measurements)
    for (c1, t1, v1), (c2, t2, v2) in zip(capped.measurements, plain.measurements):
        assert c1 == c2 and v1 == v2 and np.array_equal(t1, t2)


@pytest.mark.parametrize("one_way_rounds, d, expected", [
    (None, 30, 16 * 30),     # AIM's T = 16 d
    (384, 30, 384),          # a wide table: the 1-way marginals take d / 384 of the budget
    (384, 120, 4 * 120),     # at most a quarter of it
    (384, 20, 16 * 20),      # a narrow table keeps AIM's T
    (64, 3, 16 * 3),         # never above T
    (8, 10, 4 * 10),         # never below 4 d (a quarter of the budget)
])
def test_one_way_marginals_of_a_wide_table_get_more_budget(one_way_rounds, d, expected):
    rng = np.random.default_rng(0)
    n_values = np.full(d, 2)
    codes = rng.integers(0, 2, size=(500, d)).astype(np.int32)
    rho, alpha = 2.0, 0.9
    rel = release_workload(codes, n_values, rho=rho, rng=np.random.default_rng(1),
                           rounds_factor=16, alpha=alpha, max_relative_noise=None,
                           one_way_rounds=one_way_rounds, max_rounds=2)
    sigmas = [s.params["sigma"] for s in rel.spends[:d]]
    assert [s.params["columns"] for s in rel.spends[:d]] == [(c,) for c in range(d)]
    assert all(math.isclose(s, math.sqrt(expected / (2 * alpha * rho))) for s in sigmas)
    # the rounds keep AIM's noise; the spends still sum to the budget
    first_round = next(s for s in rel.spends[d:] if s.mechanism != "exponential")
    assert math.isclose(first_round.params["sigma"], math.sqrt(16 * d / (2 * alpha * rho)))
    assert math.isclose(rel.rho_spent, rho, rel_tol=1e-9)


@pytest.mark.parametrize("total, expected", [(10_000, 16 * 6), (300, 0.03**2 * 300**2 * 2 * 0.9 * 0.05),
                                             (50, 6), (-20, 6)])
def test_nominal_rounds(total, expected):
    assert math.isclose(nominal_rounds(16 * 6, 6, total, 0.05, 0.9, 0.03), expected)


def _decided_by_a_rare_feature(n=4000, d=12, seed=0):
    """``y`` (last column) decided by a feature held by 4% of the records (column 0)
    beside columns that depend on each other but not on it."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 4, size=(n, d)).astype(np.int32)
    for c in range(2, d - 1, 2):  # chained pairs: what the plain workload measures
        codes[:, c] = np.where(rng.random(n) < 0.8, codes[:, c - 1], codes[:, c])
    codes[:, 0] = rng.random(n) < 0.04
    codes[:, -1] = np.where(codes[:, 0] == 1, rng.random(n) < 0.9, rng.random(n) < 0.05)
    n_values = np.full(d, 4)
    n_values[[0, -1]] = 2
    return codes, n_values


def test_the_sets_holding_the_target_weigh_more_in_the_selection():
    codes, n_values = _decided_by_a_rare_feature()
    d = n_values.size

    def selected(**kwargs):
        rel = release_workload(codes, n_values, rho=0.2, rng=np.random.default_rng(3),
                               **kwargs)
        assert math.isclose(rel.rho_spent, 0.2, rel_tol=1e-9)
        return [s.params["selected"] for s in rel.spends if s.mechanism == "exponential"]

    plain, weighted = selected(), selected(target=d - 1, target_weight=5)
    holding = [sum(d - 1 in r for r in sets) / len(sets) for sets in (plain, weighted)]
    assert holding[1] > 2 * holding[0]
    assert any(set(r) >= {0, d - 1} for r in weighted)
    # weight 1 is the plain workload, draw for draw
    assert selected(target=d - 1, target_weight=1) == plain
    for bad in (0, 2.5, True, "5"):
        with pytest.raises(ValueError, match="target_weight"):
            selected(target=d - 1, target_weight=bad)
    with pytest.raises(ValueError, match="target"):
        selected(target=d)


@pytest.mark.parametrize("bad", [0, -0.1, float("nan"), float("inf"), "0.03"])
def test_max_relative_noise_is_checked(bad):
    with pytest.raises(ValueError, match="max_relative_noise"):
        release_workload(_table(n=100), N_VALUES, rho=0.1, rng=np.random.default_rng(0),
                         max_relative_noise=bad)


# ------------------------------------------------------------------ rounding
def _model_populations(n, m):
    """A small and a large population of one model: both fitted to the same targets
    (exact 1-way and the chain's 2-way tables) and mixed within neighbourhoods."""
    codes = _table(n=4000, seed=3)
    sets = [(j,) for j in range(6)] + [(0, 1), (1, 2), (3, 4)]
    targets = [(cols, marginal_table(codes, N_VALUES, cols), 1.0) for cols in sets]
    pops = []
    for size, seed in [(n, 1), (m, 2)]:
        rng = np.random.default_rng(seed)
        pop = fit_population(N_VALUES, targets, size, rng, sweeps=4, total=4000.0)
        mix_within_neighbourhoods(pop, N_VALUES, sets, rng)
        pops.append(pop)
    return targets, pops


@pytest.mark.parametrize("d, k, max_cells", [(40, 3, 3000), (40, 3, 10**6), (70, 2, 900),
                                               (45, 3, 10**9)])
def test_smallest_sets_streamed_as_listed(monkeypatch, d, k, max_cells):
    from dpsynth.model import rounding

    rng = np.random.default_rng(d)
    n_values = rng.integers(2, 9, d)
    excluded = {tuple(sorted(rng.choice(d, k, replace=False).tolist())) for _ in range(30)}
    listed = rounding.smallest_sets(n_values, k, excluded, max_cells)
    assert listed and not excluded & set(listed)
    cells = [math.prod(int(n_values[c]) for c in cols) for cols in listed]
    assert cells == sorted(cells) and sum(cells) <= max_cells
    monkeypatch.setattr(rounding, "_LISTED_SETS", 0)  # a wide table: streamed
    assert rounding.smallest_sets(n_values, k, excluded, max_cells) == listed


def test_round_to_reference_removes_sampling_noise_and_keeps_the_targets():
    from itertools import combinations

    targets, (small, reference) = _model_populations(400, 8000)
    rounded = small.copy()
    used = round_to_reference(rounded, N_VALUES, targets, reference,
                              np.random.default_rng(4), length=3, total=4000.0)
    assert used == math.comb(6, 3)  # no 3-way set was a target
    triples = list(combinations(range(6), 3))

    def distance(pop, sets):
        return np.mean([_tvd(reference, pop, cols) for cols in sets])

    # closer to the model's expected counts on the unmeasured sets ...
    assert distance(rounded, triples) < 0.7 * distance(small, triples)
    # ... and as close to the targets as before
    for cols, table, _ in targets:
        target = table.ravel() / table.sum()
        before = 0.5 * np.abs(marginal_table(small, N_VALUES, cols).ravel() / 400 - target).sum()
        after = 0.5 * np.abs(marginal_table(rounded, N_VALUES, cols).ravel() / 400 - target).sum()
        assert after <= before + 0.01
    # reproducible; a cell budget takes the smallest sets first; nothing to do: untouched
    again = small.copy()
    round_to_reference(again, N_VALUES, targets, reference, np.random.default_rng(4),
                       length=3, total=4000.0)
    np.testing.assert_array_equal(again, rounded)
    few = small.copy()
    cells = sorted(math.prod(int(N_VALUES[c]) for c in cols) for cols in triples)
    assert round_to_reference(few, N_VALUES, targets, reference, np.random.default_rng(4),
                              length=3, total=4000.0, max_cells=sum(cells[:5])) == 5
    # a limit on the tables (a wide table of small ones) takes the smallest as well
    fewer = small.copy()
    assert round_to_reference(fewer, N_VALUES, targets, reference, np.random.default_rng(4),
                              length=3, total=4000.0, max_sets=5) == 5
    np.testing.assert_array_equal(fewer, few)
    same = small.copy()
    measured = targets + [(cols, marginal_table(reference, N_VALUES, cols), 1.0)
                          for cols in triples]
    assert round_to_reference(same, N_VALUES, measured, reference, np.random.default_rng(4),
                              length=3, total=4000.0) == 0
    np.testing.assert_array_equal(same, small)


# ------------------------------------------------------------------ residual rounds
def _allocation_objective(columns, precision, free, lam, weight):
    return sum(weight[b] / (precision.get(b, 0.0) + lam.get(b, 0.0)) for b in weight)


@pytest.mark.parametrize("workload_length", [None, 3])
def test_residual_allocation_spends_the_budget_and_is_optimal(workload_length):
    from itertools import combinations

    from dpsynth.release.adaptive_selection import residual_allocation

    free = np.array([3, 4, 2, 5, 6])
    columns = (0, 1, 3)
    precision = {(0,): 5.0, (1,): 0.2, (3,): 1.0, (0, 1): 0.01}
    rho = 0.7
    lam = residual_allocation(columns, precision, free, rho, workload_length)
    subsets = [b for k in (1, 2, 3) for b in combinations(columns, k)]
    p = {b: math.prod(1 - 1 / free[c] for c in b) for b in subsets}
    assert math.isclose(sum(p[b] * v for b, v in lam.items()) / 2, rho, rel_tol=1e-12)
    assert all(v > 0 for v in lam.values()) and set(lam) <= set(subsets)
    # the weights, recomputed by enumerating the workload's marginals
    weight = {}
    for b in subsets:
        size = math.prod(int(free[c]) - 1 for c in b)
        if workload_length is None:
            holders = [columns]
        else:
            holders = [s for s in combinations(range(free.size), workload_length)
                       if set(b) <= set(s)]
        weight[b] = size * sum(1 / math.prod(int(free[c]) for c in s if c not in b)
                               for s in holders)
    best = _allocation_objective(columns, precision, free, lam, weight)
    rng = np.random.default_rng(0)
    for _ in range(300):  # no other allocation of the same budget does better
        raw = rng.dirichlet(np.ones(len(subsets))) * 2 * rho
        other = {b: raw[i] / p[b] for i, b in enumerate(subsets)}
        assert _allocation_objective(columns, precision, free, other, weight) >= best - 1e-9
    # a residual known very precisely already gets nothing
    known = residual_allocation(columns, {**precision, (0,): 1e9}, free, rho,
                                workload_length)
    assert (0,) not in known


def test_residual_rounds_measure_the_true_residuals():
    from dpsynth.model.residuals import to_residual

    codes = _table()
    rel = release_workload(codes, N_VALUES, rho=1e7, rng=np.random.default_rng(4),
                           rounds_factor=1, max_rounds=4)
    assert rel.residuals
    for cols, values, var in rel.residuals:
        truth = to_residual(marginal_table(codes, N_VALUES, cols), cols, cols)
        assert np.abs(values - truth).max() < 8 * math.sqrt(var) + 1e-9
    # the consistent targets reproduce the data's marginals of the measured sets
    for cols, table, _ in rel.targets("consistent"):
        np.testing.assert_allclose(table, marginal_table(codes, N_VALUES, cols), atol=0.5)


def test_marginal_rounds_are_kept_as_an_option():
    rel = release_workload(_table(), N_VALUES, rho=0.5, rng=np.random.default_rng(7),
                           measurement="marginals")
    assert not rel.residuals and any(len(cols) >= 2 for cols, _, _ in rel.measurements)
    with pytest.raises(ValueError, match="measurement must be"):
        release_workload(_table(), N_VALUES, rho=0.5, rng=0, measurement="fourier")


# ------------------------------------------------------------------ earlier 1-way counts
def test_earlier_one_way_counts_are_averaged_into_the_one_way_marginal():
    codes, rho, seed = _table(n=2000), 0.5, 7
    truth = np.bincount(codes[:, 0], minlength=3).astype(float)
    counts = truth + np.array([3.0, -2.0, np.nan])  # code 2 was not measured
    plain = release_workload(codes, N_VALUES, rho=rho, rng=np.random.default_rng(seed))
    rel = release_workload(codes, N_VALUES, rho=rho, rng=np.random.default_rng(seed),
                           one_way_counts={0: (counts, 4.0)})
    (cols, own, var), (cols2, combined, mean_var) = plain.measurements[0], rel.measurements[0]
    assert cols == cols2 == (0,)
    both = 1.0 / (1.0 / var + 1.0 / 4.0)
    expected = own.copy()  # the same noise draw: the first draw of the same seed
    expected[:2] = (own[:2] / var + counts[:2] / 4.0) * both
    np.testing.assert_allclose(combined, expected, rtol=1e-12)
    assert math.isclose(mean_var, (2 * both + var) / 3, rel_tol=1e-12)
    # the other columns' measurements are untouched, and the budget is the same
    assert all(np.array_equal(t1, t2) and v1 == v2 for (_, t1, v1), (_, t2, v2)
               in zip(plain.measurements[1:len(N_VALUES)], rel.measurements[1:len(N_VALUES)]))
    assert math.isclose(rel.rho_spent, rho, rel_tol=1e-9)
    assert [s.name for s in rel.spends[:len(N_VALUES)]] == \
        [s.name for s in plain.spends[:len(N_VALUES)]]


def test_publicly_empty_codes_stay_zero_when_combined():
    codes = _table(n=2000)
    empty = [np.zeros(k, dtype=bool) for k in N_VALUES]
    empty[3][4] = True
    codes[codes[:, 3] == 4, 3] = 0
    counts = np.bincount(codes[:, 3], minlength=5).astype(float)
    counts[4] = 50.0  # a count on an impossible code is ignored
    rel = release_workload(codes, N_VALUES, rho=0.5, rng=np.random.default_rng(0),
                           empty_cells=empty, one_way_counts={3: (counts, 1.0)})
    cols, table, var = rel.measurements[3]
    assert cols == (3,) and table[4] == 0.0
    np.testing.assert_allclose(table[:4], counts[:4], atol=6.0)  # nearly the precise counts
    sigma2 = rel.spends[3].params["noise_scale"] ** 2  # the (calibrated) noise drawn
    assert math.isclose(var, 1.0 / (1.0 / sigma2 + 1.0), rel_tol=1e-12)


def test_a_small_table_measures_again_only_the_precision_it_lacks():
    d, rho, alpha = len(N_VALUES), 0.05, 0.9
    codes = _table(n=400)
    precise = {c: (np.bincount(codes[:, c], minlength=k).astype(float), 0.01)
               for c, k in enumerate(N_VALUES) if c != 2}
    rel = release_workload(codes, N_VALUES, rho=rho, rng=np.random.default_rng(5),
                           alpha=alpha, one_way_counts=precise)
    again = [s for s in rel.spends if s.name.endswith("second measurement")]
    assert [s.params["columns"] for s in again] == [(2,)]  # the others are precise enough
    assert math.isclose(rel.rho_spent, rho, rel_tol=1e-9)
    plain = release_workload(codes, N_VALUES, rho=rho, rng=np.random.default_rng(5),
                             alpha=alpha)
    assert len([s for s in plain.spends if s.name.endswith("second measurement")]) == d
    # and more of the budget is left for the rounds
    def one_way_rho(release):
        return math.fsum(s.rho for s in release.spends if s.name.startswith("1-way"))

    assert one_way_rho(rel) < 0.4 * one_way_rho(plain)


@pytest.mark.parametrize("bad, match", [
    ([1, 2], "one_way_counts must be a dict"),
    ({9: (np.zeros(3), 1.0)}, "column 9"),
    ({0: (np.zeros(4), 1.0)}, r"shape \(4,\)"),
    ({0: (np.zeros(3), 0.0)}, "variance"),
    ({0: (np.array([1.0, np.inf, 0.0]), 1.0)}, "finite"),
    ({0: np.zeros(3)}, "pair"),
    ({0: (np.zeros(3), "1")}, "pair"),
    ({0: (np.zeros(3), np.ones(2))}, "one per code"),
    ({0: (np.zeros(3), np.array([1.0, 0.0, 1.0]))}, "variance"),
])
def test_one_way_counts_are_checked(bad, match):
    with pytest.raises((TypeError, ValueError), match=match):
        release_workload(_table(n=100), N_VALUES, rho=0.1, rng=np.random.default_rng(0),
                         one_way_counts=bad)
