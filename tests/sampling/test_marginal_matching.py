"""Marginal-matching synthesis: denoising formulas, exact reproduction, privacy boundary."""

from itertools import combinations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import integrate
from scipy.stats import norm

from dpsynth import DPAggregates, DPMarginalSynthesizer
from dpsynth.accounting import PrivacySpent
from dpsynth.sampling.marginal_matching import MarginalMatchingSampler, denoise_censored, rake
from tests._support import exact_marginals
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
    levels = exact_marginals(ids, encoder.schema_.attribute_columns, frame.shape[1], reporting_length)
    zeros = {k: 0.0 for k in range(1, reporting_length + 1)}
    privacy = PrivacySpent(1.0, 1e-5, 0.0, details={"noise_scales": zeros, "thresholds": zeros})
    return DPAggregates.from_release(encoder.schema_, levels, reporting_length, len(frame),
                                     privacy)


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
    fitted = DPMarginalSynthesizer(release="sds", epsilon=4.0, random_state=0).fit(frame)
    expected = fitted.sample(500)
    path = tmp_path / "aggregates.json"
    fitted.aggregates_.save(path)
    del fitted.encoder_
    loaded = DPMarginalSynthesizer.from_aggregates(DPAggregates.load(path), random_state=0)
    pd.testing.assert_frame_equal(loaded.sample(500), expected)
    pd.testing.assert_frame_equal(fitted.sample(500), expected)


def test_marginal_matching_is_deterministic_and_seed_dependent():
    frame = _dependent_table(3000, seed=2)
    synth = DPMarginalSynthesizer(release="sds", epsilon=4.0, random_state=0).fit(frame)
    first = synth.sample(400)
    pd.testing.assert_frame_equal(first, synth.sample(400))
    assert not first.equals(synth.sample(400, random_state=1))
    assert synth.sample(0).shape == (0, frame.shape[1])


def test_marginal_matching_beats_aggregate_seeded_on_noisy_aggregates():
    frame = _dependent_table(4000, seed=3)
    synth = DPMarginalSynthesizer(release="sds", epsilon=2.0, random_state=0).fit(frame)
    matched = synth.sample()
    seeded = synth.set_params(synthesis="aggregate_seeded").sample()
    assert marginal_tvd(frame, matched, k=2) < marginal_tvd(frame, seeded, k=2)


def test_three_way_targets_only_use_released_structure():
    frame = _dependent_table(3000, seed=4)
    aggregates = DPMarginalSynthesizer(release="sds", epsilon=4.0, random_state=0).fit(frame).aggregates_
    matcher = MarginalMatchingSampler().fit(aggregates)
    records = matcher.sample(300, np.random.default_rng(0))
    targets = matcher.three_way_targets(records.astype(np.int64), 300)
    released_triples = {tuple(int(c) for c in matcher.column_of[t]) for t in aggregates.tuples[2]}
    # triples whose data show no evidence against the population are skipped
    assert targets and set(targets) <= released_triples
    assert all(np.all(t >= 0) for t in targets.values())


def test_get_sampler_keeps_a_sampler_objects_own_n_jobs(monkeypatch):
    from dpsynth.sampling import AggregateSeededSampler, get_sampler

    # the estimator's n_jobs only fills a sampler's unset one
    assert get_sampler(MarginalMatchingSampler(n_jobs=1), n_jobs=None).n_jobs == 1
    assert get_sampler(MarginalMatchingSampler(n_jobs=1), n_jobs=4).n_jobs == 1
    assert get_sampler(MarginalMatchingSampler(), n_jobs=4).n_jobs == 4
    assert get_sampler("marginal_matching", n_jobs=2).n_jobs == 2
    # other parameters passed by the estimator are set whatever the sampler's value
    sampler = MarginalMatchingSampler(reference_size=500, n_jobs=3)
    made = get_sampler(sampler, n_jobs=None, reference_size=0)
    assert (made.reference_size, made.n_jobs) == (0, 3)
    assert sampler.reference_size == 500 and made is not sampler
    assert isinstance(get_sampler("aggregate_seeded", n_jobs=2), AggregateSeededSampler)
    # through the estimator: the sampler it runs keeps the object's n_jobs
    seen, sample = [], MarginalMatchingSampler.sample

    def spy(self, n, rng):
        seen.append(self.n_jobs)
        return sample(self, n, rng)

    monkeypatch.setattr(MarginalMatchingSampler, "sample", spy)
    synth = DPMarginalSynthesizer(epsilon=4.0, synthesis=MarginalMatchingSampler(n_jobs=1),
                                  n_jobs=2, random_state=0).fit(_dependent_table(300))
    synth.sample(50)
    synth.set_params(synthesis="marginal_matching").sample(50)
    assert seen == [1, 2]


def test_unknown_synthesis_is_rejected():
    frame = _dependent_table(500)
    with pytest.raises(ValueError, match="synthesis"):
        DPMarginalSynthesizer(release="sds", synthesis="gan").fit(frame)
    synth = DPMarginalSynthesizer(release="sds", random_state=0).fit(frame)
    with pytest.raises(ValueError, match="aggregate_seeded"):
        synth.sample(exhaust_counts=True)


# ---------------------------------------------------------------- fast kernel
def _small_problem(seed, integer=True, n=40, four_way=False):
    """Records and weighted 1-, 2- and 3-way (and 4-way) targets on 4 small columns."""
    rng = np.random.default_rng(seed)
    n_values = np.array([3, 2, 4, 3], dtype=np.int32)
    records = np.column_stack([rng.integers(0, k, n) for k in n_values]).astype(np.int32)
    spec = [((0,), 2.0), ((1,), 2.0), ((2,), 2.0), ((3,), 2.0), ((0, 1), 1.0), ((1, 3), 1.0),
            ((2, 3), 1.0), ((0, 2, 3), 0.5), ((0, 1, 2), 0.5)]
    if four_way:
        spec.append(((3, 1, 0, 2), 0.25))
    targets = []
    for cols, weight in spec:
        shape = tuple(int(n_values[c]) for c in cols)
        table = rng.integers(0, 8, shape).astype(float)
        if not integer:
            table = table + rng.random(shape)
        targets.append((cols, table, weight))
    allowed = np.ones(n_values.sum(), dtype=np.uint8)
    allowed[3] = 0  # value 0 of column 1 may be left but not written
    return records, targets, n_values, allowed


def _loss(records, targets):
    loss = 0.0
    for cols, table, weight in targets:
        cells = np.ravel_multi_index(records[:, list(cols)].T, table.shape)
        counts = np.bincount(cells, minlength=table.size).reshape(table.shape)
        loss += weight * np.sum((counts - table) ** 2)
    return loss


def _run_kernel(records, targets, n_values, allowed, record_orders, column_orders):
    from dpsynth._core import _matching
    from dpsynth.model.layout import descent_layout

    records = records.copy()
    layout = descent_layout(records, targets)
    value_base = np.concatenate([[0], np.cumsum(n_values)[:-1]]).astype(np.int64)
    moves = _matching.descend(records, *layout, n_values, allowed, value_base,
                              record_orders, column_orders)
    return records, layout, moves


def _reference_descent(records, targets, n_values, allowed, record_orders, column_orders):
    """Pure numpy: each visit takes the value with the most negative loss change."""
    records = records.copy()
    value_base = np.concatenate([[0], np.cumsum(n_values)[:-1]])
    moves = []
    for sweep in range(len(record_orders)):
        moves.append(0)
        for j in column_orders[sweep]:
            for r in record_orders[sweep]:
                u = records[r, j]
                current = _loss(records, targets)
                best, best_v = 0.0, u
                for v in range(n_values[j]):
                    if v == u or not allowed[value_base[j] + v]:
                        continue
                    records[r, j] = v
                    change = _loss(records, targets) - current
                    records[r, j] = u
                    if change < best:
                        best, best_v = change, v
                records[r, j] = best_v
                moves[-1] += best_v != u
    return records, np.array(moves)


def _orders(seed, n, d, sweeps):
    rng = np.random.default_rng(seed)
    return (np.array([rng.permutation(n) for _ in range(sweeps)], dtype=np.int64),
            np.array([rng.permutation(d) for _ in range(sweeps)], dtype=np.int32))


@pytest.mark.parametrize("seed,four_way", [(0, False), (1, False), (2, False), (3, True)])
def test_descend_kernel_matches_numpy_reference(seed, four_way):
    # integer targets and power-of-two weights: every loss change is exact,
    # so the kernel must take exactly the reference's moves
    records, targets, n_values, allowed = _small_problem(seed, four_way=four_way)
    record_orders, column_orders = _orders(seed, len(records), len(n_values), 3)
    expected, expected_moves = _reference_descent(records, targets, n_values, allowed,
                                                  record_orders, column_orders)
    fitted, _, moves = _run_kernel(records, targets, n_values, allowed,
                                   record_orders, column_orders)
    np.testing.assert_array_equal(fitted, expected)
    np.testing.assert_array_equal(moves, expected_moves)
    assert moves[0] > 0


@pytest.mark.parametrize("seed,four_way", [(0, False), (1, False), (2, True)])
def test_descend_keeps_residual_and_copies_consistent(seed, four_way):
    records, targets, n_values, allowed = _small_problem(seed, integer=False, n=60,
                                                         four_way=four_way)
    losses = [_loss(records, targets)]
    for sweep in range(4):  # one sweep at a time: the loss never increases
        record_orders, column_orders = _orders(seed + 10 * sweep, len(records),
                                               len(n_values), 1)
        records, layout, moves = _run_kernel(records, targets, n_values, allowed,
                                             record_orders, column_orders)
        losses.append(_loss(records, targets))
        assert losses[-1] <= losses[-2] + 1e-9
        assert (losses[-1] < losses[-2]) == (moves[0] > 0)
        residual, copies, target_base = layout[:3]
        entry_column, entry_target, entry_position, entry_base = layout[10:14]
        for m, (cols, table, weight) in enumerate(targets):
            cells = np.ravel_multi_index(records[:, list(cols)].T, table.shape)
            expected = np.bincount(cells, minlength=table.size) - table.ravel()
            exact = residual[target_base[m]:target_base[m] + table.size]
            np.testing.assert_allclose(exact, expected, atol=1e-9)
            for e in np.flatnonzero(entry_target == m):  # copy with its column innermost
                order = [p for p in range(len(cols)) if p != entry_position[e]]
                order.append(entry_position[e])
                assert cols[entry_position[e]] == entry_column[e]
                copy = (weight * exact.reshape(table.shape)).transpose(order).ravel()
                np.testing.assert_array_equal(
                    copies[entry_base[e]:entry_base[e] + table.size], copy.astype(np.float32))
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("four_way", [False, True])
def test_count_cells_matches_bincount(four_way):
    from dpsynth._core import _matching
    from dpsynth.model.layout import descent_layout

    records, targets, _, _ = _small_problem(3, n=200, four_way=four_way)

    layout = descent_layout(records, [(c, np.zeros_like(t), w) for c, t, w in targets])
    residual, target_base = layout[0], layout[2]
    for m, (cols, table, _) in enumerate(targets):
        cells = np.ravel_multi_index(records[:, list(cols)].T, table.shape)
        np.testing.assert_array_equal(residual[target_base[m]:target_base[m] + table.size],
                                      np.bincount(cells, minlength=table.size))
    counts = np.zeros(int(residual.size))
    _matching.count_cells(np.ascontiguousarray(records.T), counts, *layout[2:5])
    np.testing.assert_array_equal(counts, residual)


def test_vectorised_denoising_matches_per_marginal():
    from dpsynth.sampling.marginal_matching import _denoise_segments

    rng = np.random.default_rng(0)
    sizes = [30, 1, 50, 12]
    segment = np.repeat(np.arange(len(sizes)), sizes)
    prior = rng.integers(0, 6, segment.size).astype(float)  # population counts
    truth = rng.poisson(prior + 3 * (segment == 2))
    y = truth + rng.normal(0, 4.0, segment.size)
    released = y > 2.0
    released[segment == 3] = False  # only suppressed cells
    estimate, kappa = _denoise_segments(prior, y, released, segment, len(sizes), 4.0, 2.0)
    for s in range(len(sizes)):
        rows = segment == s
        expected, expected_kappa = denoise_censored(
            prior[rows], y[rows], released[rows], np.ones(rows.sum(), dtype=bool), 4.0, 2.0,
            return_scale=True)
        np.testing.assert_allclose(estimate[rows], expected, rtol=1e-10, atol=1e-12)
        assert kappa[s] == expected_kappa
    exact, scale = _denoise_segments(prior, y, released, segment, len(sizes), 0.0, 0.5)
    np.testing.assert_array_equal(exact, np.where(released, y, 0.0))
    assert np.all(np.isinf(scale))


def test_results_do_not_depend_on_n_jobs():
    frame = _dependent_table(3000, seed=5)
    aggregates = DPMarginalSynthesizer(release="sds", epsilon=4.0, random_state=0).fit(frame).aggregates_
    samples = [MarginalMatchingSampler(max_population=300, n_jobs=n_jobs).fit(aggregates)
               .sample(1000, np.random.default_rng(7)) for n_jobs in (1, 2, -1, None)]
    for other in samples[1:]:
        np.testing.assert_array_equal(samples[0], other)
    assert samples[0].shape == (1000, frame.shape[1]) and samples[0].dtype == np.int32
    # populations are built from distinct generators
    again = MarginalMatchingSampler(max_population=300).fit(aggregates).sample(
        1000, np.random.default_rng(8))
    assert not np.array_equal(samples[0], again)


def test_descend_kernel_rejects_inconsistent_layouts():
    from dpsynth._core import _matching
    from dpsynth.model.layout import descent_layout

    records, targets, n_values, allowed = _small_problem(0)
    record_orders, column_orders = _orders(0, len(records), len(n_values), 1)
    value_base = np.concatenate([[0], np.cumsum(n_values)[:-1]]).astype(np.int64)

    def run(records, layout):
        return _matching.descend(records, *layout, n_values, allowed, value_base,
                                 record_orders, column_orders)

    layout = descent_layout(records, targets)
    with pytest.raises(ValueError, match="padded"):
        run(records.copy(), (layout[0], layout[1][:-16]) + layout[2:])
    with pytest.raises(ValueError, match="residual"):
        run(records.copy(), (layout[0][:-1],) + layout[1:])
    bad = records.copy()
    bad[5, 2] = n_values[2]
    with pytest.raises(ValueError, match="records"):
        run(bad, layout)
    with pytest.raises(ValueError, match="counts"):
        _matching.count_cells(np.ascontiguousarray(records.T), np.zeros(3), *layout[2:5])


def test_synthesizer_n_jobs_gives_the_same_records():
    # 120,000 records are three populations of at most 50,000
    synth = DPMarginalSynthesizer(release="sds", epsilon=4.0, random_state=0).fit(_dependent_table())
    serial = synth.sample(120_000)
    threaded = synth.set_params(n_jobs=2).sample(120_000)
    pd.testing.assert_frame_equal(serial, threaded)


def test_workload_fit_and_rounding_do_not_depend_on_n_jobs():
    # 25 columns: 2,600 candidate tables and about 2,250 reference sets, two shards each
    rng = np.random.default_rng(0)
    table = pd.DataFrame({f"c{j}": rng.integers(0, 3, 800).astype(str) for j in range(25)})
    table["c1"] = table["c0"]
    runs = []
    for n_jobs in (1, 2):
        synth = DPMarginalSynthesizer(epsilon=4.0, n_jobs=n_jobs, random_state=3).fit(table)
        runs.append((synth, synth.sample(500, random_state=4)))
    (a, sample_a), (b, sample_b) = runs
    assert [m.columns for m in a.aggregates_.marginals] == \
        [m.columns for m in b.aggregates_.marginals]
    for ma, mb in zip(a.aggregates_.marginals, b.aggregates_.marginals):
        np.testing.assert_array_equal(ma.table, mb.table)
    pd.testing.assert_frame_equal(sample_a, sample_b)


@pytest.mark.parametrize("n_jobs", [0, 1.5, "2", True])
def test_synthesizer_rejects_bad_n_jobs(n_jobs):
    with pytest.raises(ValueError, match="n_jobs"):  # checked before any DP step
        DPMarginalSynthesizer(release="sds", n_jobs=n_jobs, random_state=0).fit(_dependent_table())
    synth = DPMarginalSynthesizer(release="sds", random_state=0).fit(_dependent_table())
    with pytest.raises(ValueError, match="n_jobs"):
        synth.set_params(n_jobs=n_jobs).sample(10)


def test_dense_sample_is_rounded_to_a_reference_population():
    # workload release (dense marginals): a small sample is rounded to a larger
    # population of the same model; the marginals it was not measured on then lie
    # closer to that model's, it stays reproducible and within the allowed values
    # (over three releases: how much one sample gains depends on its noise)
    frame = _dependent_table(3000, seed=2)
    d = frame.shape[1]

    def tvd(a, b, cols):
        def table(x):
            keys, counts = np.unique(x[:, list(cols)], axis=0, return_counts=True)
            return {tuple(k): c / len(x) for k, c in zip(keys, counts)}
        p, q = table(a), table(b)
        return 0.5 * sum(abs(p.get(k, 0) - q.get(k, 0)) for k in set(p) | set(q))

    distances, changed = [], []
    for state in range(3):
        # (the 10% margin below was set on these three releases' continuous noise; with
        # the discrete noise's draws the same three releases gain 4.6%)
        aggregates = DPMarginalSynthesizer(epsilon=4.0, random_state=state,
                                           noise="continuous").fit(
            frame).aggregates_
        assert aggregates.marginals
        rounded_sampler = MarginalMatchingSampler().fit(aggregates)
        plain_sampler = MarginalMatchingSampler(reference_size=0).fit(aggregates)
        rounded = rounded_sampler.sample(500, np.random.default_rng(3))
        plain = plain_sampler.sample(500, np.random.default_rng(3))
        np.testing.assert_array_equal(rounded,
                                      rounded_sampler.sample(500, np.random.default_rng(3)))
        changed.append(not np.array_equal(rounded, plain))  # (a few cells: noise-dependent)
        large = plain_sampler.sample(20_000, np.random.default_rng(4))  # the model, nearly
        measured = {m.columns for m in aggregates.marginals}
        unmeasured = [c for c in combinations(range(d), 3) if c not in measured]
        assert unmeasured
        distances.append([np.mean([tvd(sample, large, cols) for cols in unmeasured])
                          for sample in (rounded, plain)])
    assert any(changed)
    rounded_distance, plain_distance = np.sum(distances, axis=0)
    # (0.92 here; 0.91 over eight releases, 0.89 before every undeclared column had
    # its other value, whose cells made the release select fewer 3-way sets)
    assert rounded_distance < 0.95 * plain_distance
    # values the plain sampler never writes, the rounded one does not either
    for j in range(d):
        assert set(np.unique(rounded[:, j])) <= set(np.unique(large[:, j]))
    # several populations are not rounded (their sampling noise averages out)
    parts = MarginalMatchingSampler(max_population=250).fit(aggregates)
    unrounded = MarginalMatchingSampler(max_population=250, reference_size=0).fit(aggregates)
    np.testing.assert_array_equal(parts.sample(500, np.random.default_rng(3)),
                                  unrounded.sample(500, np.random.default_rng(3)))


@pytest.mark.parametrize("m, n", [(7, 0), (7, 5), (7, 7), (7, 23), (1, 4), (300, 1000)])
def test_expand_population_rounds_multiplicities(m, n):
    from dpsynth.sampling.marginal_matching import expand_population

    records = np.column_stack([np.arange(m), np.arange(m) % 3]).astype(np.int32)
    out = expand_population(records, n, np.random.default_rng(0))
    assert out.shape == (n, 2) and out.dtype == np.int32 and out.flags.f_contiguous
    copies = np.bincount(out[:, 0], minlength=m)  # column 0 names the record
    assert copies.sum() == n and set(copies) <= {n // m, -(-n // m)}
    np.testing.assert_array_equal(out[:, 1], out[:, 0] % 3)  # whole records are copied
    # every count is the population's times n // m, plus at most the population's
    model = np.bincount(records[:, 1], minlength=3)
    extra = np.bincount(out[:, 1], minlength=3) - model * (n // m)
    assert np.all((extra >= 0) & (extra <= model)) and extra.sum() == n % m
    if n > m > 1:  # in random order, from the generator only
        assert not np.array_equal(out[:m, 0], np.arange(m))
        np.testing.assert_array_equal(out, expand_population(records, n,
                                                             np.random.default_rng(0)))


def test_expand_population_in_threads_gives_the_same_records():
    from dpsynth.sampling.marginal_matching import expand_population

    records = np.random.default_rng(1).integers(0, 50, size=(1000, 5)).astype(np.int32)
    one = expand_population(records, 150_001, np.random.default_rng(0))
    two = expand_population(records, 150_001, np.random.default_rng(0), n_threads=2)
    assert two.dtype == np.int32 and two.flags.f_contiguous
    np.testing.assert_array_equal(one, two)
    # whole records are copied: every row of the sample is a row of the model
    model_rows = {tuple(r) for r in records.tolist()}
    assert {tuple(r) for r in two[:2000].tolist()} <= model_rows


@pytest.mark.parametrize("release", ["sds", "workload"])
def test_samples_beyond_model_size_are_drawn_from_the_model(release):
    frame = _dependent_table(3000, seed=4)
    aggregates = DPMarginalSynthesizer(release=release, epsilon=4.0,
                                       random_state=0).fit(frame).aggregates_
    small = MarginalMatchingSampler(model_size=400, max_population=300,
                                    model_population=200).fit(aggregates)
    full = MarginalMatchingSampler(model_size=0, max_population=300).fit(aggregates)
    # up to the model size the sample does not depend on it
    for n in (250, 400):
        np.testing.assert_array_equal(small.sample(n, np.random.default_rng(1)),
                                      full.sample(n, np.random.default_rng(1)))
    rng = np.random.default_rng(2)
    # the model is the sample of model_size records in populations of
    # max(max_population, model_population) records, with model_sweeps passes...
    model = MarginalMatchingSampler(model_size=0, max_population=300, dense_sweeps=8).fit(
        aggregates).sample(400, rng)
    np.testing.assert_array_equal(small.fit_model(np.random.default_rng(2)), model)
    from dpsynth.sampling.marginal_matching import expand_population
    expected = expand_population(model, 1000, rng)  # ...expanded with the same generator
    large = small.sample(1000, np.random.default_rng(2))
    np.testing.assert_array_equal(large, expected)
    keys, counts = np.unique(large, axis=0, return_counts=True)
    model_keys, model_counts = np.unique(model, axis=0, return_counts=True)
    np.testing.assert_array_equal(keys, model_keys)  # the model's records, nothing else
    assert np.all(np.abs(counts - model_counts * 2.5) <= model_counts)  # 2 or 3 copies each
    assert not np.array_equal(large, full.sample(1000, np.random.default_rng(2)))


def test_synthesizer_sample_beyond_model_size_redraws_numeric_values():
    rng = np.random.default_rng(0)
    frame = _dependent_table(2000, seed=1).assign(x=rng.normal(50, 10, 2000).round(3))
    synth = DPMarginalSynthesizer(
        epsilon=4.0, random_state=0, encoder=TableEncoder(bounds={"x": (0.0, 100.0)}),
        synthesis=MarginalMatchingSampler(model_size=200)).fit(frame)
    out = synth.sample(2000)
    assert out.shape == (2000, frame.shape[1])
    assert list(out.dtypes) == list(frame.dtypes)
    assert not out.drop(columns="e").isna().any().any()
    text = out.drop(columns="x")
    assert len(text.drop_duplicates()) <= 200  # the model's records...
    assert out["x"].nunique() > 1500  # ...with fresh within-bin values for every copy
    pd.testing.assert_frame_equal(out, synth.sample(2000))


def test_model_is_fitted_in_model_population_records():
    frame = _dependent_table(3000, seed=5)
    aggregates = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(frame).aggregates_
    sampler = MarginalMatchingSampler(model_size=600, max_population=100,
                                      model_population=300).fit(aggregates)
    # two populations of 300, as a sample of 600 with max_population=300 is built
    model = sampler.fit_model(np.random.default_rng(0))
    np.testing.assert_array_equal(model, MarginalMatchingSampler(
        model_size=0, max_population=300, dense_sweeps=8).fit(aggregates).sample(
            600, np.random.default_rng(0)))  # model_sweeps=8 passes
    assert model.shape == (600, frame.shape[1]) and model.dtype == np.int32
    # ...not of max_population (six of 100), nor with dense_sweeps: other models
    for other in (dict(max_population=100, dense_sweeps=8), dict(max_population=300)):
        assert not np.array_equal(model, MarginalMatchingSampler(model_size=0, **other).fit(
            aggregates).sample(600, np.random.default_rng(0)))
    np.testing.assert_array_equal(  # model_sweeps sets the passes
        MarginalMatchingSampler(model_size=600, max_population=100, model_population=300,
                                model_sweeps=15).fit(aggregates).fit_model(
            np.random.default_rng(0)),
        MarginalMatchingSampler(model_size=0, max_population=300).fit(aggregates).sample(
            600, np.random.default_rng(0)))
    # model_population below max_population: max_population's populations
    small = MarginalMatchingSampler(model_size=600, max_population=300, model_population=50)
    np.testing.assert_array_equal(small.fit(aggregates).fit_model(np.random.default_rng(0)),
                                  model)
    with pytest.raises(ValueError, match="model_size=0"):
        MarginalMatchingSampler(model_size=0).fit(aggregates).fit_model(np.random.default_rng(0))
    with pytest.raises(ValueError, match="model_population"):
        MarginalMatchingSampler(model_population=0).fit(aggregates)


def test_large_sample_from_the_model_keeps_its_marginals():
    frame = _dependent_table(4000, seed=6)
    aggregates = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(frame).aggregates_
    sampler = MarginalMatchingSampler(model_size=500, model_population=250).fit(aggregates)
    n = 20_001  # 40 copies of every model record, one more of a random 1
    sample = sampler.sample(n, np.random.default_rng(3))
    assert sample.shape == (n, frame.shape[1]) and sample.dtype == np.int32
    np.testing.assert_array_equal(sample, sampler.sample(n, np.random.default_rng(3)))
    assert not np.array_equal(sample, sampler.sample(n, np.random.default_rng(4)))
    model = sampler.fit_model(np.random.default_rng(3))  # the same generator's model
    # every 1- and 2-way marginal is the model's, 40 times, plus one record at most
    for cols in [(j,) for j in range(frame.shape[1])] + list(combinations(
            range(frame.shape[1]), 2)):
        shape = tuple(int(sampler.sizes[c]) for c in cols)
        count = [np.bincount(np.ravel_multi_index(tuple(x[:, c] for c in cols), shape),
                             minlength=int(np.prod(shape))) for x in (sample, model)]
        extra = count[0] - 40 * count[1]
        assert extra.min() >= 0 and extra.sum() == 1
    # shuffled: the copies of a record are spread over the sample, not in runs
    keys = np.unique(sample, axis=0, return_inverse=True)[1].ravel()
    assert np.mean(keys[1:] == keys[:-1]) < 0.2
    first = np.flatnonzero(keys == keys[0])
    assert first.size >= 40 and np.ptp(first) > n // 2


def test_sds_model_is_the_sample_of_model_size_records():
    frame = _dependent_table(2000, seed=7)
    aggregates = DPMarginalSynthesizer(release="sds", epsilon=4.0,
                                       random_state=0).fit(frame).aggregates_
    sampler = MarginalMatchingSampler(model_size=400, max_population=100,
                                      model_population=400).fit(aggregates)
    # the sparse path keeps max_population's populations (model_* do not apply)
    np.testing.assert_array_equal(
        sampler.fit_model(np.random.default_rng(0)),
        MarginalMatchingSampler(model_size=0, max_population=100).fit(aggregates).sample(
            400, np.random.default_rng(0)))


def test_the_missing_code_needs_the_missing_sigmas_of_numeric_columns():
    # a complete column's missing code is measured with noise: synthesized only when its
    # consistent estimate clears missing_sigmas(columns that can hold one) standard
    # deviations, the 0.1% level shared by the table's columns
    from dpsynth.model.dense import MISSING_SIGMAS, dense_targets, missing_sigmas
    from dpsynth.model.marginal import NoisyMarginal
    from dpsynth.schema import Column, Schema

    assert MISSING_SIGMAS == pytest.approx(3.09, abs=0.001)
    assert missing_sigmas(2) == pytest.approx(3.29, abs=0.001)
    assert missing_sigmas(57) == pytest.approx(4.14, abs=0.005)
    # an independent check: the Gaussian tail of the level, shared by the columns
    for d in (1, 3, 20):
        tail = 0.5 * math.erfc(missing_sigmas(d) / math.sqrt(2))
        assert tail * d == pytest.approx(0.001, rel=1e-6)

    def kept_missing(n_columns, missing):  # 10 = the noise sd
        schema = Schema(tuple(Column(f"c{j}", np.dtype(object), ("x", "y"))
                              for j in range(n_columns)), "category")
        marginals = [NoisyMarginal((0,), np.array([500.0, 480.0, missing]), 100.0)]
        marginals += [NoisyMarginal((j,), np.array([600.0, 400.0, 0.0]), 100.0)
                      for j in range(1, n_columns)]
        targets = dense_targets(marginals, schema.n_values, schema, absent=False,
                                min_count="auto")
        table = {cols: t for cols, t, _ in targets}[(0,)]
        assert table[0] > 0 and table[1] > 0  # the values: 2 sd as before
        return table[-1] > 0

    assert not kept_missing(2, 25.0) and kept_missing(2, 35.0)  # 3.29 sd for two
    assert kept_missing(1, 32.0)  # 3.09 for one column
    # twenty columns that can hold a missing value share the level: 3.89 sd
    assert not kept_missing(20, 35.0) and kept_missing(20, 40.0)


def test_the_other_code_is_kept_by_its_own_noise_and_the_tables_level():
    # an other code measured once among values whose discovery counts were averaged in
    # is noisier than the marginal's mean variance says: its level is taken on its own
    # variance, held to the total (v - v**2 / sum(v)), at missing_sigmas of the columns
    # with an other code
    from dpsynth.model.dense import dense_targets, missing_sigmas
    from dpsynth.model.marginal import NoisyMarginal
    from dpsynth.schema import Column, Schema

    def kept_other(other, n_columns=1, cells=(4.0, 4.0, 64.0, 4.0)):
        schema = Schema(tuple(Column(f"c{j}", np.dtype(object), ("x", "y"), other=True)
                              for j in range(n_columns)), "category")
        cells = np.array(cells)
        marginals = [NoisyMarginal((j,), np.array([500.0, 480.0, other, 0.0]), cells.mean(),
                                   cell_variances=cells) for j in range(n_columns)]
        targets = dense_targets(marginals, schema.n_values, schema, absent=False,
                                min_count="auto")
        return {cols: t for cols, t, _ in targets}[(0,)][2] > 0

    held = 64.0 - 64.0 ** 2 / 76.0  # its variance held to the total: 10.1
    mean = (3 * (4.0 - 16.0 / 76.0) + held) / 4

    def sd(consistent):  # the consistent mean variance, scaled by held / mean
        return math.sqrt(consistent * held / mean)

    # one column: its consistent 1-way is its measurement (mean variance 19)
    assert not kept_other(0.98 * 3.09 * sd(19.0)) and kept_other(1.02 * 3.09 * sd(19.0))
    # the mean variance alone would have kept a count of noise: 3.09 * 4.4 = 13.5
    assert not kept_other(14.0)
    # ten columns share the level (3.72 sd); their shared total lowers the
    # consistent mean variance to 14.725
    level = missing_sigmas(10)
    assert not kept_other(0.98 * level * sd(14.725), 10)
    assert kept_other(1.02 * level * sd(14.725), 10)


def test_the_missing_and_other_codes_are_kept_by_a_step_down_test():
    # Holm's step-down: the code of most sd first against missing_sigmas(m), the next
    # against missing_sigmas(m - 1), ... until one fails; a column whose code clearly
    # holds records (an identifier's other code) does not raise the others' level
    from dpsynth.model.dense import _step_down, missing_sigmas

    assert missing_sigmas(3) > 3.35 > missing_sigmas(2)
    assert _step_down({"id": 40.0, "rare": 3.35, "none": 0.2}) == {"id", "rare"}
    assert _step_down({"id": 40.0, "rare": 3.0, "none": 3.2}) == {"id"}
    # the order of failure: nothing after the first code that fails is kept
    assert _step_down({"a": 3.25, "b": 3.2}) == set()  # 3.25 < 3.29: b (> 3.09) is not tested
    assert _step_down({}) == set()
