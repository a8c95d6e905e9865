"""Optimal noise allocation and GLS consistency (Cormode et al.; ResidualPlanner)."""

import math
from itertools import product

import numpy as np
import pytest

from dpsynth.model.consistency import make_consistent
from dpsynth.model.marginal import NoisyMarginal
from dpsynth.model.residuals import contrast_basis, marginal_table
from dpsynth.release.allocation import (
    PlannedMeasurement,
    measure,
    optimal_allocation,
    reconstruction_variance,
    release_marginals,
)
from dpsynth.accounting import zcdp_delta, zcdp_epsilon, zcdp_rho_tight
from dpsynth.accounting import zcdp_rho

INTRO = [(0,), (0, 1)]  # Cormode et al., introduction: marginals A and AB of 3 binary columns
BINARY3 = [2, 2, 2]


# ------------------------------------------------------------------ intro example
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_intro_example_optimal_laplace_allocation(epsilon):
    plan = optimal_allocation(INTRO, BINARY3, epsilon, noise="laplace", strategy="marginals")
    eta = np.array([m.budget for m in plan.measurements]) / epsilon
    np.testing.assert_allclose(eta, [0.44249, 0.55751], atol=1e-5)
    # privacy constraint (2) with equality: every base cell lies in one cell of each marginal
    assert math.isclose(sum(m.budget for m in plan.measurements), epsilon, rel_tol=1e-12)
    # total variance before recovery: 46.17 / eps^2; after GLS: 29.95 / eps^2
    assert plan.expected_errors["marginals, direct"] * epsilon**2 == pytest.approx(46.168, abs=1e-3)
    assert plan.expected_error * epsilon**2 == pytest.approx(29.95, abs=0.01)


def test_intro_example_uniform_and_rounded_budgets():
    uniform = [PlannedMeasurement((0,), "marginal", 0.5, 2 / 0.5**2),
               PlannedMeasurement((0, 1), "marginal", 0.5, 2 / 0.5**2)]
    # 6 answers with variance 8 / eps^2 each, without recovery
    assert sum(m.variance * 2 ** len(m.columns) for m in uniform) == pytest.approx(48.0)
    rounded = [PlannedMeasurement((0,), "marginal", 4 / 9, 2 * (9 / 4) ** 2),
               PlannedMeasurement((0, 1), "marginal", 5 / 9, 2 * (9 / 5) ** 2)]
    direct = sum(m.variance * 2 ** len(m.columns) for m in rounded)
    assert direct == pytest.approx(46.17, abs=0.01)
    per_target = reconstruction_variance(rounded, BINARY3, INTRO)
    # GLS: 5.68 per A-row and 4.66 per AB-row, 30.0 in total (the paper's 34.6 is loose)
    assert per_target[0] / 2 == pytest.approx(5.684, abs=1e-3)
    assert per_target[1] / 4 == pytest.approx(4.661, abs=1e-3)
    assert per_target.sum() == pytest.approx(30.01, abs=0.01)


# ------------------------------------------------------------------ allocations
def test_gaussian_allocations_spend_the_budget_and_residuals_win():
    workload = [(0, 1), (1, 2), (0, 2), (0,), (3,)]
    n_values = [3, 4, 5, 2]
    plan = optimal_allocation(workload, n_values, 0.7)
    assert plan.strategy == "residuals"
    assert math.isclose(sum(m.budget for m in plan.measurements), 0.7, rel_tol=1e-12)
    marginals = optimal_allocation(workload, n_values, 0.7, strategy="marginals")
    assert math.isclose(sum(m.budget for m in marginals.measurements), 0.7, rel_tol=1e-12)
    errors = plan.expected_errors
    assert errors["residuals"] <= errors["marginals"] <= errors["marginals, direct"]
    # Gaussian closed form of the marginals strategy: (sum sqrt(cells))^2 / (2 rho)
    cells = [12, 20, 15, 3, 2]
    assert errors["marginals, direct"] == pytest.approx(sum(np.sqrt(cells)) ** 2 / 1.4)
    # 1/sigma^2 proportional to sqrt(cells)
    precision = [1 / m.variance for m in marginals.measurements]
    np.testing.assert_allclose(np.array(precision) / np.sqrt(cells),
                               precision[0] / np.sqrt(cells[0]))


def test_weights_shift_the_budget():
    light = optimal_allocation([(0,), (1,)], [4, 4], 1.0, strategy="marginals")
    heavy = optimal_allocation([(0,), (1,)], [4, 4], 1.0, weights=[1, 9], strategy="marginals")
    assert light.measurements[0].budget == pytest.approx(light.measurements[1].budget)
    assert heavy.measurements[1].budget == pytest.approx(3 * heavy.measurements[0].budget)


def test_residual_sensitivity_is_p_A():
    # column norms of (x)_{i in A} U_i^T: the planned budgets use p_A = prod(1 - 1/n_i)
    n_values = [3, 5]
    op = np.kron(contrast_basis(3).T, contrast_basis(5).T)
    assert np.max(np.sum(op**2, axis=0)) == pytest.approx((1 - 1 / 3) * (1 - 1 / 5))
    plan = optimal_allocation([(0, 1)], n_values, 1.0, strategy="residuals")
    for m in plan.measurements:
        p = math.prod(1 - 1 / n_values[c] for c in m.columns)
        assert m.budget == pytest.approx(p / (2 * m.variance))


def test_allocation_input_validation():
    with pytest.raises(ValueError, match="workload"):
        optimal_allocation([], [2], 1.0)
    with pytest.raises(ValueError, match="outside"):
        optimal_allocation([(0, 3)], [2, 2], 1.0)
    with pytest.raises(ValueError, match="budget"):
        optimal_allocation([(0,)], [2], -1.0)
    with pytest.raises(ValueError, match="noise"):
        optimal_allocation([(0,)], [2], 1.0, noise="cauchy")
    with pytest.raises(ValueError, match="residuals"):
        optimal_allocation([(0,)], [2], 1.0, noise="laplace", strategy="residuals")
    with pytest.raises(ValueError, match="weights"):
        optimal_allocation([(0,)], [2], 1.0, weights=[0.0])


# ------------------------------------------------------------------ consistency
def _data(n=400, n_values=(3, 4, 2, 5), seed=0):
    rng = np.random.default_rng(seed)
    codes = np.column_stack([rng.integers(0, k, n) for k in n_values])
    codes[:, 1] = (codes[:, 0] + rng.integers(0, 2, n)) % n_values[1]  # some dependence
    return codes, np.array(n_values)


def _brute_force_gls(measurements, n_values, targets):
    """GLS over the full domain (min-norm least squares), for small domains."""
    domain = list(product(*[range(k) for k in n_values]))
    rows, ys, ws = [], [], []
    for m in measurements:
        cells = list(product(*[range(n_values[c]) for c in m.columns]))
        for cell, y in zip(cells, np.ravel(m.table)):
            rows.append([float(all(x[c] == v for c, v in zip(m.columns, cell))) for x in domain])
            ys.append(y)
            ws.append(1 / math.sqrt(m.variance))
    a = np.array(rows) * np.array(ws)[:, None]
    x, *_ = np.linalg.lstsq(a, np.array(ys) * np.array(ws), rcond=None)
    out = []
    for t in targets:
        table = np.zeros([n_values[c] for c in t])
        for xi, point in zip(x, domain):
            table[tuple(point[c] for c in t)] += xi
        out.append(table)
    return out


def test_make_consistent_equals_full_domain_gls():
    codes, n_values = _data()
    rng = np.random.default_rng(1)
    measurements = []
    for cols, var in [((0, 1), 4.0), ((1, 2), 9.0), ((0,), 1.0), ((0, 2, 3), 25.0), ((3,), 2.0)]:
        table = marginal_table(codes, n_values, cols)
        measurements.append(NoisyMarginal(cols, table + rng.normal(0, math.sqrt(var), table.shape),
                                        var))
    targets = [(0, 1), (1, 2), (0, 2, 3), (2,), (0, 3)]
    ours = make_consistent(measurements, n_values, targets)
    expected = _brute_force_gls(measurements, n_values, targets)
    for got, want in zip(ours, expected):
        np.testing.assert_allclose(got.table, want, atol=1e-8)


def test_make_consistent_cache_gives_the_outputs_computed_afresh():
    # a cache kept across calls with growing measurements: bitwise the same outputs
    codes, n_values = _data()
    rng = np.random.default_rng(3)
    plan = [((0, 1), 4.0), ((1, 2), 9.0), ((0,), 1.0), ((0, 2, 3), 25.0), ((0, 1), 2.0)]
    targets = [(0, 1), (1, 2), (0, 2, 3), (2,), (3, 0)]
    cache, measurements = {}, []
    for cols, var in plan:
        table = marginal_table(codes, n_values, cols)
        measurements.append(NoisyMarginal(cols, table + rng.normal(0, math.sqrt(var),
                                                                   table.shape), var))
        cached = make_consistent(measurements, n_values, targets, cache=cache)
        fresh = make_consistent(measurements, n_values, targets)
        for a, b in zip(cached, fresh, strict=True):
            assert a.columns == b.columns and a.variance == b.variance
            assert np.array_equal(a.table, b.table)
    assert cache
    # the same cache over fewer possible codes (other sizes): not reused for them
    possible = [np.arange(k) > 0 if c == 0 else np.ones(k, dtype=bool)
                for c, k in enumerate(n_values)]
    cached = make_consistent(measurements, n_values, targets, possible=possible, cache=cache)
    fresh = make_consistent(measurements, n_values, targets, possible=possible)
    for a, b in zip(cached, fresh, strict=True):
        assert np.array_equal(a.table, b.table)


def test_outputs_are_exactly_consistent_and_noise_free_is_exact():
    codes, n_values = _data()
    rng = np.random.default_rng(2)
    plan = optimal_allocation([(0, 1), (1, 2), (2, 3), (0, 3)], n_values, 0.05,
                              strategy="marginals")
    noisy = measure(codes, n_values, plan, rng)
    out = {m.columns: m.table for m in make_consistent(noisy, n_values)}
    # shared sub-marginals agree (digest: to 1e-9), and so do the totals
    np.testing.assert_allclose(out[(0, 1)].sum(axis=0), out[(1, 2)].sum(axis=1), atol=1e-9)
    np.testing.assert_allclose(out[(1, 2)].sum(axis=0), out[(2, 3)].sum(axis=1), atol=1e-9)
    np.testing.assert_allclose(out[(2, 3)].sum(axis=0), out[(0, 3)].sum(axis=0), atol=1e-9)
    np.testing.assert_allclose(out[(0, 1)].sum(axis=1), out[(0, 3)].sum(axis=1), atol=1e-9)
    assert len({round(float(t.sum()), 9) for t in out.values()}) == 1
    # without noise the reconstruction is the true marginals (any targets inside the span)
    exact = [NoisyMarginal(m.columns, marginal_table(codes, n_values, m.columns), 1.0)
             for m in noisy]
    for got in make_consistent(exact, n_values, [(0, 1), (3,), (1,), ()]):
        np.testing.assert_allclose(got.table, marginal_table(codes, n_values, got.columns),
                                   atol=1e-9)
    # the caller's column order is kept
    swapped = make_consistent(exact, n_values, [(1, 0)])[0]
    np.testing.assert_allclose(swapped.table, marginal_table(codes, n_values, (0, 1)).T,
                               atol=1e-9)


@pytest.mark.parametrize("strategy", ["residuals", "marginals"])
def test_monte_carlo_variance_matches_prediction(strategy):
    codes, n_values = _data(n=200)
    workload = [(0, 1), (1, 2), (0,)]
    plan = optimal_allocation(workload, n_values, 0.5, strategy=strategy)
    truth = [marginal_table(codes, n_values, s) for s in workload]
    rng = np.random.default_rng(3)
    errors = np.zeros(len(workload))
    mean = [np.zeros_like(t) for t in truth]
    reps = 250
    for _ in range(reps):
        out = make_consistent(measure(codes, n_values, plan, rng), n_values, workload)
        for k, (o, t) in enumerate(zip(out, truth)):
            errors[k] += np.sum((o.table - t) ** 2) / reps
            mean[k] += o.table / reps
    predicted = reconstruction_variance(plan.measurements, n_values, workload)
    np.testing.assert_allclose(errors, predicted, rtol=0.15)
    assert errors.sum() == pytest.approx(plan.expected_error, rel=0.1)
    for m, t, p in zip(mean, truth, predicted):  # unbiased
        assert np.max(np.abs(m - t)) < 5 * math.sqrt(p / t.size / reps) + 1e-9


def test_laplace_measurement_variance():
    codes, n_values = _data(n=50)
    plan = optimal_allocation([(0,)], n_values, 2.0, noise="laplace")
    rng = np.random.default_rng(4)
    noise = np.concatenate([measure(codes, n_values, plan, rng, sampler="continuous")[0].table
                            - marginal_table(codes, n_values, (0,)) for _ in range(1500)])
    assert np.var(noise) == pytest.approx(2 / 2.0**2, rel=0.1)  # 2 (Delta_1 / eps)^2
    # the exact discrete Laplace of the same scale: integer noise, its own variance
    runs = [measure(codes, n_values, plan, rng) for _ in range(1500)]
    noise = np.concatenate([run[0].table - marginal_table(codes, n_values, (0,))
                            for run in runs])
    q = math.exp(-2.0)
    assert np.all(noise == np.rint(noise))
    assert runs[0][0].variance == pytest.approx(2 * q / (1 - q) ** 2)
    assert np.var(noise) == pytest.approx(2 * q / (1 - q) ** 2, rel=0.1)


def test_unmeasured_part_is_flagged():
    codes, n_values = _data()
    exact = [NoisyMarginal((0,), marginal_table(codes, n_values, (0,)), 1.0),
             NoisyMarginal((1,), marginal_table(codes, n_values, (1,)), 1.0)]
    out = make_consistent(exact, n_values, [(0, 1)])[0]
    assert math.isinf(out.variance)
    # the minimum-norm completion of the missing interaction (its residual is 0):
    # additive, mu[a, b] = mu_0[a] / n_1 + mu_1[b] / n_0 - N / (n_0 n_1)
    a, b, n = exact[0].table, exact[1].table, len(codes)
    additive = a[:, None] / b.size + b[None, :] / a.size - n / (a.size * b.size)
    np.testing.assert_allclose(out.table, additive, atol=1e-9)
    with pytest.raises(ValueError, match="shape"):
        make_consistent([((0,), np.zeros(5), 1.0)], n_values)


# ------------------------------------------------------------------ conversion
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0, 10.0])
def test_tight_conversion_is_valid_and_tighter(epsilon):
    delta = 1e-5
    rho = zcdp_rho_tight(epsilon, delta)
    assert zcdp_delta(rho, epsilon) <= delta
    assert zcdp_delta(rho * 1.001, epsilon) > delta
    assert rho >= zcdp_rho(epsilon, delta)
    assert zcdp_epsilon(rho, delta) == pytest.approx(epsilon, rel=1e-9)
    # any alpha > 1 bounds delta: a coarse grid never beats the optimiser
    grid = np.linspace(1.001, 200, 20000)
    with np.errstate(over="ignore"):
        coarse = np.min(np.exp((grid - 1) * (grid * rho - epsilon) + grid * np.log1p(-1 / grid))
                        / (grid - 1))
    assert zcdp_delta(rho, epsilon) <= coarse * (1 + 1e-9)


def test_tight_conversion_gain_at_epsilon_one():
    assert zcdp_rho_tight(1.0, 1e-5) / zcdp_rho(1.0, 1e-5) > 1.4


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_release_marginals_end_to_end(noise):
    codes, n_values = _data(n=2000)
    workload = [(0, 1), (1, 2), (3,)]
    out, plan = release_marginals(codes, n_values, workload, 50.0, np.random.default_rng(0),
                                  noise=noise)
    assert [m.columns for m in out] == workload
    assert math.isclose(sum(m.budget for m in plan.measurements), 50.0, rel_tol=1e-12)
    np.testing.assert_allclose(out[0].table.sum(axis=0), out[1].table.sum(axis=1), atol=1e-9)
    for m in out:  # a large budget: close to the truth
        truth = marginal_table(codes, n_values, m.columns)
        assert np.abs(m.table - truth).max() < 2.0


def test_make_consistent_on_the_possible_codes():
    rng = np.random.default_rng(3)
    n_values = np.array([3, 4, 2])
    codes = np.column_stack([rng.integers(0, 2, 400), rng.integers(0, 4, 400),
                             rng.integers(0, 2, 400)])  # code 2 of column 0 never occurs
    possible = [np.array([True, True, False]), np.ones(4, bool), np.ones(2, bool)]
    measured = []
    for cols in [(0,), (1,), (2,), (0, 1), (1, 2)]:
        table = marginal_table(codes, n_values, cols) + rng.normal(0, 2.0, n_values[list(cols)])
        if 0 in cols:  # the impossible cells are measured as exact zeros
            np.put_along_axis(table, np.full([1] * len(cols), 2), 0.0, axis=cols.index(0))
        measured.append((cols, table, 4.0))
    on_possible = make_consistent(measured, n_values, possible=possible)
    everything = make_consistent(measured, n_values, possible=[np.ones(k, bool)
                                                               for k in n_values])
    plain = make_consistent(measured, n_values)
    for a, b in zip(everything, plain):  # all codes possible: the usual GLS
        np.testing.assert_allclose(a.table, b.table, atol=1e-9)
    for m in on_possible:
        if 0 in m.columns:
            assert np.all(np.take(m.table, [2], axis=m.columns.index(0)) == 0.0)
    # a residual over the possible codes has shape possible.sum() - 1 per column
    theta = rng.normal(size=(1, 3))
    out = make_consistent(measured + [NoisyMarginal((0, 1), theta, 1.0, "residual")],
                          n_values, possible=possible)
    assert len(out) == len(measured) + 1
    with pytest.raises(ValueError, match="shape"):
        make_consistent(measured + [NoisyMarginal((0, 1), rng.normal(size=(2, 3)), 1.0,
                                                "residual")], n_values, possible=possible)
    with pytest.raises(ValueError, match="possible"):
        make_consistent(measured, n_values, possible=possible[:2])
