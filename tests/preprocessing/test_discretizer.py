"""Tests of the DP quantile mechanism and of DPKBinsDiscretizer."""

import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpsynth.exceptions import PrivacyLeakWarning
from dpsynth.mechanisms import (dp_quantile, dp_quantile_probabilities, dp_quantiles,
                                laplace_histogram, merge_weights, stable_histogram)
from dpsynth.preprocessing import DPKBinsDiscretizer


# --------------------------------------------------------- DP quantile mechanism
def _piece_masses(points, probabilities, cuts):
    """Probability of each elementary interval [cuts[i], cuts[i+1]).

    The output is uniform within each piece of ``points``, so the mass of a
    sub-interval is the piece's probability times the covered fraction.
    """
    masses = np.zeros(len(cuts) - 1)
    for i in range(len(points) - 1):
        a, b = points[i], points[i + 1]
        if b <= a:
            assert probabilities[i] == 0.0  # zero-length pieces carry no mass
            continue
        for k in range(len(cuts) - 1):
            overlap = min(b, cuts[k + 1]) - max(a, cuts[k])
            if overlap > 0:
                masses[k] += probabilities[i] * overlap / (b - a)
    return masses


def _max_log_ratio(data, neighbour, quantile, bounds, epsilon):
    p1, q1 = dp_quantile_probabilities(data, quantile, bounds, epsilon)
    p2, q2 = dp_quantile_probabilities(neighbour, quantile, bounds, epsilon)
    cuts = np.unique(np.concatenate([p1, p2]))
    m1, m2 = _piece_masses(p1, q1, cuts), _piece_masses(p2, q2, cuts)
    assert m1.sum() == pytest.approx(1.0) and m2.sum() == pytest.approx(1.0)
    positive = (m1 > 0) | (m2 > 0)
    assert np.all(m1[positive] > 0) and np.all(m2[positive] > 0)
    return np.max(np.abs(np.log(m1[positive]) - np.log(m2[positive])))


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("quantile", [0.0, 0.25, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("extra", [-5.0, 0.5, 2.0, 7.0, 50.0])
def test_dp_quantile_neighbouring_datasets_within_e_epsilon(epsilon, quantile, extra):
    # D and D + one record (values outside the bounds are clipped)
    data = np.array([1.0, 2.0, 2.0, 4.5, 6.0])
    neighbour = np.append(data, extra)
    bounds = (0.0, 10.0)
    worst = _max_log_ratio(data, neighbour, quantile, bounds, epsilon)
    assert worst <= epsilon + 1e-9


def test_dp_quantile_privacy_loss_is_not_vacuous():
    # a record shifts the utility of part of the line by a whole unit, so at
    # least epsilon / 2 of the budget is really used: the bound has teeth
    data = np.zeros(20) + 5.0
    neighbour = np.append(data, 5.0)
    worst = _max_log_ratio(data, neighbour, 0.0, (0.0, 10.0), 2.0)
    assert 0.99 < worst <= 2.0


def test_dp_quantile_probabilities_shape_and_ties():
    points, probabilities = dp_quantile_probabilities([3, 3, 3, 8], 0.5, (0, 10), 1.0)
    assert points.tolist() == [0, 3, 8, 10]  # tied records: pieces of length 0, merged
    assert probabilities.shape == (3,)
    assert probabilities.sum() == pytest.approx(1.0)
    # the median pieces [3, 8) carries the most mass per unit of length
    density = probabilities / np.where(np.diff(points) > 0, np.diff(points), np.inf)
    assert np.argmax(density) == 1


def _per_record_probabilities(values, quantile, bounds, epsilon):
    """The mechanism written over one piece per record (ties: pieces of length 0)."""
    lo, hi = bounds
    points = np.concatenate([[lo], np.sort(np.clip(values, lo, hi)), [hi]])
    utilities = -np.abs(np.arange(points.size - 1) - quantile * len(values))
    with np.errstate(divide="ignore"):
        log_weights = np.log(np.diff(points)) + epsilon / 2.0 * utilities
    weights = np.exp(log_weights - log_weights.max())
    return points, weights / weights.sum()


@pytest.mark.parametrize("seed", range(6))
def test_dp_quantile_on_weights_is_the_mechanism_on_the_repeated_values(seed):
    # ties, values on and outside the bounds: merged pieces carry the same mass, and
    # the weighted form draws the same value as the values repeated
    rng = np.random.default_rng(seed)
    distinct = np.unique(np.round(rng.normal(5, 4, 12), 1))
    weights = rng.integers(0, 6, distinct.size)
    repeated = np.repeat(distinct, weights)
    for quantile in (0.0, 0.3, 0.5, 1.0):
        points, probabilities = dp_quantile_probabilities(distinct, quantile, (0, 10), 2.0,
                                                          weights=weights)
        reference, expected = _per_record_probabilities(repeated, quantile, (0, 10), 2.0)
        masses = _piece_masses(points, probabilities, np.unique(reference))
        np.testing.assert_allclose(masses, _piece_masses(reference, expected,
                                                         np.unique(reference)), rtol=1e-12)
        np.testing.assert_array_equal(
            points, dp_quantile_probabilities(repeated, quantile, (0, 10), 2.0)[0])
    for draw in range(20):
        expected = dp_quantiles(repeated[rng.permutation(repeated.size)], [0.25, 0.5, 0.75],
                                (0, 10), 1.0, np.random.default_rng(draw))
        got = dp_quantiles(distinct, [0.25, 0.5, 0.75], (0, 10), 1.0,
                           np.random.default_rng(draw), weights=weights)
        np.testing.assert_array_equal(got, expected)


def test_mechanisms_on_weights_release_what_the_repeated_values_release():
    values = np.array([2.0, -1.5, 2.0, 7.0, 0.0, 7.0])  # unsorted, repeated: merged
    weights = np.array([3, 40, 1, 25, 0, 2])
    repeated = np.repeat(values, weights)
    for seed in range(10):
        a = stable_histogram(repeated, 1.0, 1e-3, np.random.default_rng(seed))
        b = stable_histogram(values, 1.0, 1e-3, np.random.default_rng(seed), weights=weights)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
        index = np.array([0, 3, 3, 1, 4, 0])
        np.testing.assert_array_equal(
            laplace_histogram(np.repeat(index, weights), 6, 1.0, np.random.default_rng(seed)),
            laplace_histogram(index, 6, 1.0, np.random.default_rng(seed), weights=weights))
    distinct, counts = merge_weights(values, weights)
    assert distinct.tolist() == [-1.5, 2.0, 7.0] and counts.tolist() == [40, 4, 27]
    assert counts.dtype == np.int64
    with pytest.raises(ValueError, match="non-negative integers"):
        merge_weights(values, weights - 2)
    with pytest.raises(ValueError, match="one per value"):
        merge_weights(values, weights[:3])


def test_dp_quantile_samples_follow_exact_distribution():
    data = np.array([1.0, 2.0, 2.5, 4.0, 9.0])
    points, probabilities = dp_quantile_probabilities(data, 0.5, (0, 10), 1.0)
    rng = np.random.default_rng(0)
    draws = np.array([dp_quantile(data, 0.5, (0, 10), 1.0, rng) for _ in range(20000)])
    pieces = np.searchsorted(points, draws, side="right") - 1
    frequencies = np.bincount(np.minimum(pieces, len(probabilities) - 1),
                              minlength=len(probabilities)) / draws.size
    np.testing.assert_allclose(frequencies, probabilities, atol=0.015)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.floats(-1e6, 1e6), max_size=30),
       quantile=st.floats(0, 1),
       epsilon=st.floats(1e-3, 50),
       lo=st.floats(-1e3, 1e3), width=st.floats(1e-3, 1e4),
       seed=st.integers(0, 2**32 - 1))
def test_dp_quantile_output_inside_bounds(values, quantile, epsilon, lo, width, seed):
    hi = lo + width
    out = dp_quantile(values, quantile, (lo, hi), epsilon, np.random.default_rng(seed))
    assert lo <= out <= hi


def test_dp_quantile_is_accurate_with_large_epsilon():
    rng = np.random.default_rng(1)
    data = rng.normal(50, 10, 5000)
    out = dp_quantile(data, 0.3, (0, 100), 20.0, rng)
    assert abs(np.mean(data <= out) - 0.3) < 0.01


def test_dp_quantiles_split_epsilon_and_sort():
    data = np.random.default_rng(2).uniform(0, 10, 50)
    got = dp_quantiles(data, [0.9, 0.1], (0, 10), 1.0, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    one_by_one = [dp_quantile(data, q, (0, 10), 0.5, rng) for q in (0.9, 0.1)]
    np.testing.assert_array_equal(got, np.sort(one_by_one))


@pytest.mark.parametrize("kwargs, match", [
    ({"values": [1.0, np.nan]}, "NaN"),
    ({"bounds": (5, 5)}, "lo < hi"),
    ({"bounds": (0, np.inf)}, "finite"),
    ({"quantile": 1.5}, "quantile"),
    ({"epsilon": 0.0}, "epsilon"),
])
def test_dp_quantile_rejects_bad_input(kwargs, match):
    args = {"values": [1.0, 2.0], "quantile": 0.5, "bounds": (0, 10), "epsilon": 1.0}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        dp_quantile(rng=np.random.default_rng(0), **args)


# ------------------------------------------------------ scikit-learn conventions
@parametrize_with_checks([
    DPKBinsDiscretizer(bounds=(0, 1)),
    DPKBinsDiscretizer(5, bounds=(-1, 1), strategy="quantile", epsilon=1.0, random_state=0),
    DPKBinsDiscretizer(bounds=(0, 10), strategy="log", inverse="midpoint"),
    DPKBinsDiscretizer(bin_edges=[0.0, 0.2, 0.5, 1.0]),
])
def test_sklearn_compatible(estimator, check):
    # Every applicable common check passes (no expected_failed_checks needed);
    # scikit-learn itself skips check_array_api_input unless SCIPY_ARRAY_API=1.
    check(estimator)


# ---------------------------------------------------------------- round trips
def _mixed_frame():
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame({
        "age": rng.integers(0, 100, n),
        "income": rng.lognormal(10, 1, n),
        "hours": rng.uniform(0, 80, n).astype(np.float32),
        "kids": pd.array(rng.integers(0, 6, n), dtype="Int64"),
        "small": rng.integers(0, 250, n).astype(np.uint8),
        "score": pd.array(rng.normal(0, 1, n), dtype="Float64"),
    })
    frame.loc[::7, "income"] = np.nan
    frame.loc[::11, "kids"] = pd.NA
    frame.loc[::13, "score"] = pd.NA
    return frame


BOUNDS = {"age": (0, 99), "income": (0, 1e6), "hours": (0, 80), "kids": (0, 19),
          "small": (0, 255), "score": (-5, 5)}


@pytest.mark.filterwarnings(r"ignore:Column 'age' gets \d bin\(s\):UserWarning")
@pytest.mark.parametrize("strategy", ["uniform", "log", "quantile"])
@pytest.mark.parametrize("inverse", ["uniform", "midpoint"])
def test_round_trip_values_in_bins_and_dtypes(strategy, inverse):
    X = _mixed_frame()
    original = X.copy()
    epsilon = 1.0 if strategy == "quantile" else None
    binner = DPKBinsDiscretizer(6, bounds=BOUNDS, strategy=strategy, epsilon=epsilon,
                                inverse=inverse, random_state=0)
    codes = binner.fit_transform(X)
    pd.testing.assert_frame_equal(X, original)  # input untouched
    assert codes.dtype == np.int64
    back = binner.inverse_transform(codes)
    pd.testing.assert_frame_equal(X, original)
    assert isinstance(back, pd.DataFrame)
    assert list(back.columns) == list(X.columns)
    pd.testing.assert_series_equal(back.dtypes, X.dtypes)
    # every value lands in its own bin, missing stays missing
    np.testing.assert_array_equal(binner.transform(back), codes)
    pd.testing.assert_frame_equal(back.isna(), X.isna())
    for j, name in enumerate(X.columns):
        lo, hi = binner.bounds_[j]
        values = back[name].dropna().to_numpy(dtype=float)
        assert np.all((values >= lo) & (values <= hi))
        if pd.api.types.is_integer_dtype(X[name].dtype):
            assert np.all(values == np.round(values))
        missing = codes[:, j] == binner.n_bins_[j]
        np.testing.assert_array_equal(missing, X[name].isna().to_numpy())


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.floats(-1e5, 1e5), min_size=1, max_size=40),
       n_bins=st.integers(1, 12), strategy=st.sampled_from(["uniform", "log"]),
       lo=st.floats(-1e5, 0), width=st.floats(1e-2, 2e5),
       integer=st.booleans(), seed=st.integers(0, 1000))
def test_round_trip_property(values, n_bins, strategy, lo, width, integer, seed):
    X = np.array(values)[:, None]
    if integer:
        X = np.round(X).astype(np.int64)
    binner = DPKBinsDiscretizer(n_bins, bounds=(lo, lo + width), strategy=strategy,
                                random_state=seed)
    if integer and math.ceil(lo) > math.floor(lo + width):
        with pytest.raises(ValueError, match="include at least one integer"):
            binner.fit(X)
        return
    with warnings.catch_warnings():  # narrow integer ranges may lose empty bins
        warnings.simplefilter("ignore", UserWarning)
        codes = binner.fit_transform(X)
    back = binner.inverse_transform(codes)
    assert back.dtype == X.dtype
    np.testing.assert_array_equal(binner.transform(back), codes)
    assert np.all((back >= binner.bounds_[0, 0]) & (back <= binner.bounds_[0, 1]))


def test_integer_draws_cover_the_bin_uniformly():
    binner = DPKBinsDiscretizer(8, bounds=(0, 99), random_state=0).fit(np.zeros((1, 1), int))
    assert binner.bin_edges_[0][:2].tolist() == [0, 13]  # bin 0 holds 0..12
    back = binner.inverse_transform(np.zeros((13000, 1), dtype=int)).ravel()
    counts = np.bincount(back, minlength=13)
    assert counts.size == 13 and counts.min() > 850 and counts.max() < 1150


def test_midpoints():
    binner = DPKBinsDiscretizer(4, bounds={"x": (0, 8), "k": (0, 99)}, inverse="midpoint")
    X = pd.DataFrame({"x": [0.5, 7.9], "k": [0, 99]})
    binner.fit(X)
    back = binner.inverse_transform([[0, 0], [3, 3]])
    assert back["x"].tolist() == [1.0, 7.0]
    assert back["k"].tolist() == [12, 87]  # middle of 0..24 and of 75..99


def test_missing_code_on_integer_column_gives_nullable_integers():
    X = pd.DataFrame({"age": np.array([1, 50, 99], dtype=np.int32)})
    binner = DPKBinsDiscretizer(4, bounds=(0, 99), random_state=0).fit(X)
    back = binner.inverse_transform([[0], [4], [3]])
    assert str(back["age"].dtype) == "Int32"
    assert back["age"].isna().tolist() == [False, True, False]
    array_back = DPKBinsDiscretizer(4, bounds=(0, 99)).fit(X.to_numpy()).inverse_transform(
        [[0], [4]])
    assert array_back.dtype == np.float64 and np.isnan(array_back[1, 0])


def test_ndarray_in_ndarray_out():
    X = np.array([[1, 2], [30, 40]], dtype=np.int64)
    binner = DPKBinsDiscretizer(3, bounds=[(0, 30), (0, 60)], random_state=1).fit(X)
    back = binner.inverse_transform(binner.transform(X))
    assert isinstance(back, np.ndarray) and back.dtype == np.int64
    np.testing.assert_array_equal(binner.transform(back), binner.transform(X))


def test_random_state_reproducible():
    X = _mixed_frame()
    a = DPKBinsDiscretizer(5, bounds=BOUNDS, random_state=3).fit(X)
    codes = a.transform(X)
    first = a.inverse_transform(codes)
    pd.testing.assert_frame_equal(first, clone(a).fit(X).inverse_transform(codes))
    other = a.inverse_transform(codes, random_state=4)
    assert not first.equals(other)
    pd.testing.assert_frame_equal(other, a.inverse_transform(codes, random_state=4))
    q1 = DPKBinsDiscretizer(5, bounds=BOUNDS, strategy="quantile", epsilon=1.0,
                            random_state=3).fit(X)
    q2 = clone(q1).fit(X)
    for e1, e2 in zip(q1.bin_edges_, q2.bin_edges_):
        np.testing.assert_array_equal(e1, e2)


def test_set_output_pandas_and_feature_names():
    X = _mixed_frame()
    binner = DPKBinsDiscretizer(4, bounds=BOUNDS).set_output(transform="pandas")
    out = binner.fit_transform(X)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(X.columns)
    assert out.index.equals(X.index)
    assert all(dtype == np.int64 for dtype in out.dtypes)
    assert list(binner.get_feature_names_out()) == list(X.columns)
    pd.testing.assert_series_equal(binner.inverse_transform(out).dtypes, X.dtypes)


def test_pickle_and_params_untouched():
    bounds = {"age": (0, 99)}
    binner = DPKBinsDiscretizer(4, bounds=bounds)
    params = binner.get_params()
    binner.fit(pd.DataFrame({"age": [1, 2]}))
    assert binner.get_params() == params and binner.bounds is bounds
    restored = pickle.loads(pickle.dumps(binner))
    np.testing.assert_array_equal(restored.bin_edges_[0], binner.bin_edges_[0])


# -------------------------------------------------------------- edges and bounds
def test_uniform_and_log_edges():
    X = np.array([[1.0]])
    uniform = DPKBinsDiscretizer(4, bounds=(0, 8)).fit(X)
    np.testing.assert_allclose(uniform.bin_edges_[0], [0, 2, 4, 6, 8])
    log = DPKBinsDiscretizer(3, bounds=(1, 1000), strategy="log").fit(X)
    np.testing.assert_allclose(log.bin_edges_[0], [1, 10, 100, 1000])
    shifted = DPKBinsDiscretizer(3, bounds=(-1, 998), strategy="log").fit(X)
    np.testing.assert_allclose(shifted.bin_edges_[0], [-1, 8, 98, 998])  # log of x + 2


def test_bounds_and_edges_forms():
    X = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    pair = DPKBinsDiscretizer(2, bounds=(0, 4)).fit(X)
    listed = DPKBinsDiscretizer(2, bounds=[(0, 4), (0, 4)]).fit(X)
    for e1, e2 in zip(pair.bin_edges_, listed.bin_edges_):
        np.testing.assert_array_equal(e1, e2)
    mixed = DPKBinsDiscretizer(2, bounds=(0, 4), bin_edges={"b": [0, 1, 3, 10]}).fit(X)
    assert mixed.n_bins_.tolist() == [2, 3]  # bin_edges take precedence over bounds
    single = DPKBinsDiscretizer(bin_edges=[0, 2.5, 5]).fit(X)
    assert single.n_bins_.tolist() == [2, 2]
    positional = DPKBinsDiscretizer(2, bounds={0: (0, 4), 1: (0, 8)}).fit(X.to_numpy())
    assert positional.bounds_.tolist() == [[0, 4], [0, 8]]


def test_integer_edges_drop_bins_without_integers():
    with pytest.warns(UserWarning, match="'k' gets 3 bin"):
        binner = DPKBinsDiscretizer(10, bounds=(0, 2)).fit(pd.DataFrame({"k": [0, 1, 2]}))
    assert binner.bin_edges_[0].tolist() == [0, 1, 2, 3]
    assert binner.bounds_.tolist() == [[0, 2]]


def test_quantile_strategy_accounting_and_accuracy():
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"a": rng.normal(50, 10, 4000), "b": rng.exponential(5, 4000),
                      "c": rng.uniform(0, 1, 4000)})
    binner = DPKBinsDiscretizer(4, bounds={"a": (0, 100), "b": (0, 100)},
                                bin_edges={"c": [0, 0.5, 1]}, strategy="quantile",
                                epsilon=30.0, random_state=0).fit(X)
    assert binner.epsilon_spent_ == 30.0  # total, split over a and b
    for j, name in enumerate(["a", "b"]):
        edges = binner.bin_edges_[j]
        assert np.all(np.diff(edges) > 0) and edges[0] == 0 and edges[-1] == 100
        np.testing.assert_allclose(np.mean(X[name].to_numpy()[:, None] <= edges[1:-1], 0),
                                   [0.25, 0.5, 0.75], atol=0.03)
    public = DPKBinsDiscretizer(4, bin_edges=[0, 1, 100], strategy="quantile",
                                epsilon=1.0).fit(X)
    assert public.epsilon_spent_ == 0.0
    assert DPKBinsDiscretizer(4, bounds=(0, 100)).fit(X).epsilon_spent_ == 0.0


def test_quantile_with_infinite_epsilon_warns():
    X = np.arange(100.0)[:, None]
    with pytest.warns(PrivacyLeakWarning, match="exact quantiles"):
        binner = DPKBinsDiscretizer(4, bounds=(0, 99), strategy="quantile",
                                    epsilon=np.inf).fit(X)
    np.testing.assert_allclose(binner.bin_edges_[0], [0, 24.75, 49.5, 74.25, 99])
    assert binner.epsilon_spent_ == math.inf


# ------------------------------------------------------------------- errors
def test_no_bounds_names_the_column_and_the_fix():
    X = pd.DataFrame({"a": [1.0], "PINCP": [2.0]})
    with pytest.raises(ValueError, match=r"Column 'PINCP' has no public bounds.*bounds="):
        DPKBinsDiscretizer(bounds={"a": (0, 1)}).fit(X)
    with pytest.raises(ValueError, match="Column 0 has no public bounds"):
        DPKBinsDiscretizer().fit(np.ones((2, 1)))


def test_bounds_from_data_warns_and_uses_min_max():
    X = pd.DataFrame({"a": [3.0, -2.0, np.nan, 10.0]})
    with pytest.warns(PrivacyLeakWarning, match="'a'.*min and max"):
        binner = DPKBinsDiscretizer(4, bounds="data").fit(X)
    assert binner.bounds_.tolist() == [[-2.0, 10.0]]


def test_quantile_needs_epsilon():
    with pytest.raises(ValueError, match="needs a privacy budget: pass epsilon"):
        DPKBinsDiscretizer(bounds=(0, 1), strategy="quantile").fit(np.ones((2, 1)))
    with pytest.raises(ValueError, match="epsilon is only used with strategy='quantile'"):
        DPKBinsDiscretizer(bounds=(0, 1), epsilon=1.0).fit(np.ones((2, 1)))
    with pytest.raises(ValueError, match="epsilon"):
        DPKBinsDiscretizer(bounds=(0, 1), strategy="quantile", epsilon=-1).fit(
            np.ones((2, 1)))


def test_out_of_bounds_clip_or_raise():
    X = pd.DataFrame({"age": [-3, 50, 120]})
    codes = DPKBinsDiscretizer(4, bounds=(0, 99)).fit_transform(X)
    assert codes.ravel().tolist() == [0, 2, 3]
    with pytest.raises(ValueError, match="Column 'age' has values outside its bounds") as error:
        DPKBinsDiscretizer(4, bounds=(0, 99), clip=False).fit_transform(X)
    # before DP the values and their count are private: the message names neither
    assert "120" not in str(error.value) and "-3" not in str(error.value)
    assert "2 value" not in str(error.value)
    binner = DPKBinsDiscretizer(4, bounds=(0, 99), clip=False).fit(X.clip(0, 99))
    with pytest.raises(ValueError, match="clip=True"):
        binner.transform(X)


def test_missing_values_error_mode():
    X = pd.DataFrame({"a": [1.0, np.nan]})
    with pytest.raises(ValueError, match="Column 'a' has missing values"):
        DPKBinsDiscretizer(bounds=(0, 1), handle_missing="error").fit(X)
    binner = DPKBinsDiscretizer(bounds=(0, 1), handle_missing="error").fit(X.dropna())
    with pytest.raises(ValueError, match="out of range"):
        binner.inverse_transform([[binner.n_bins_[0]]])


@pytest.mark.parametrize("params, error, match", [
    ({"bounds": (5, 1)}, ValueError, "low <= high"),
    ({"bounds": (0, np.inf)}, ValueError, "finite"),
    ({"bounds": {"a": "x"}}, ValueError, r"bounds for column 'a' must be a \(low, high\)"),
    ({"bounds": {"zzz": (0, 1)}}, ValueError, "bounds names column 'zzz'"),
    ({"bounds": [(0, 1)] * 3}, ValueError, "bounds has 3 entries but X has 1"),
    ({"bin_edges": {"a": [0, 2, 1]}}, ValueError, "strictly increasing"),
    ({"bin_edges": {"a": [1]}}, ValueError, "at least 2 edges"),
    ({"n_bins": 0, "bounds": (0, 1)}, ValueError, "n_bins"),
    ({"strategy": "kmeans", "bounds": (0, 1)}, ValueError, "strategy"),
    ({"inverse": "median", "bounds": (0, 1)}, ValueError, "inverse"),
    ({"handle_missing": "ignore", "bounds": (0, 1)}, ValueError, "handle_missing"),
    ({"clip": "yes", "bounds": (0, 1)}, TypeError, "clip"),
])
def test_bad_parameters(params, error, match):
    with pytest.raises(error, match=match):
        DPKBinsDiscretizer(**params).fit(pd.DataFrame({"a": [0.5]}))


def test_bad_input_values():
    with pytest.raises(TypeError, match="Column 'name' has dtype"):
        DPKBinsDiscretizer(bounds=(0, 1)).fit(pd.DataFrame({"name": ["x", "y"]}))
    with pytest.raises(ValueError, match="Column 'a' contains infinite values"):
        DPKBinsDiscretizer(bounds=(0, 1)).fit_transform(pd.DataFrame({"a": [np.inf]}))
    binner = DPKBinsDiscretizer(4, bounds=(0, 1)).fit(np.ones((2, 2)))
    with pytest.raises(TypeError, match="Codes must be integers"):
        binner.inverse_transform([[0.5, 1.0]])
    with pytest.raises(ValueError, match="Code 7 is out of range for column 1"):
        binner.inverse_transform([[0, 7]])
    with pytest.raises(ValueError, match="shape"):
        binner.inverse_transform([[0, 1, 2]])


def test_decimals_per_column_dict_is_accepted_as_documented():
    # the docstring says "int or dict": a dict used to be refused by the parameter check
    X = pd.DataFrame({"a": [0.123456, 0.5, 0.987654], "b": [1.23456, 2.5, 3.98765]})
    binner = DPKBinsDiscretizer(n_bins=2, bounds=(0, 5), decimals={"a": 2},
                                random_state=0).fit(X)
    out = np.asarray(binner.inverse_transform(binner.transform(X)), dtype=float)
    assert np.array_equal(out[:, 0], np.round(out[:, 0], 2))
    assert not np.array_equal(out[:, 1], np.round(out[:, 1], 2))
    with pytest.raises(ValueError, match="decimals for column 'a' must be a non-negative"):
        DPKBinsDiscretizer(bounds=(0, 5), decimals={"a": -1}).fit(X)
    with pytest.raises(ValueError, match="decimals names column 'c'"):
        DPKBinsDiscretizer(bounds=(0, 5), decimals={"c": 1}).fit(X)
