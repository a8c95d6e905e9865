"""Fitting on a dask DataFrame and sampling to Parquet partitions (dpsynth[dask])."""

import os

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

from dpsynth import DPAggregates, DPMarginalSynthesizer  # noqa: E402
from dpsynth.engines import dask as dask_engine  # noqa: E402
from dpsynth.engines import is_dask_collection  # noqa: E402
from dpsynth.preprocessing import TableEncoder  # noqa: E402
from dpsynth.release import SDSRelease  # noqa: E402
from tests._support import public_part  # noqa: E402


def _table(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "city": rng.choice(["Boston", "Lowell", "Salem", "Worcester"], n, p=[.4, .3, .2, .1]),
        "age": rng.integers(18, 90, n),
        "income": rng.gamma(2.0, 20_000.0, n),
        "owner": rng.choice([True, False], n),
        "kids": pd.array(rng.integers(0, 4, n), dtype="Int64"),
    })
    frame.loc[frame.index % 9 == 0, "city"] = None
    frame.loc[frame.index % 11 == 0, "kids"] = pd.NA
    frame["city"] = frame["city"].astype("string")
    return frame


def _encoder():
    return TableEncoder(bounds={"age": (18, 90), "income": (0, 200_000)}, n_bins=6)


def _release_bytes(synth, tmp_path, name):
    path = tmp_path / name
    synth.aggregates_.save(path)
    return path.read_bytes()


@pytest.fixture(scope="module")
def frame():
    return _table()


@pytest.mark.parametrize("n_partitions, missing", [(1, "category"), (3, "category"),
                                                   (8, "category"), (3, "absent")])
def test_identical_aggregates_whatever_the_partitioning(frame, tmp_path, n_partitions, missing):
    X = dd.from_pandas(frame, npartitions=n_partitions)
    frame = X.compute()  # dask may convert text to string[pyarrow]: the same declaration
    encoder = _encoder().set_params(missing=missing)
    expected = DPMarginalSynthesizer(epsilon=1.0, encoder=encoder, random_state=5).fit(frame)
    with dask.config.set(scheduler="synchronous"):
        got = DPMarginalSynthesizer(epsilon=1.0, encoder=encoder, random_state=5).fit(X)
    assert _release_bytes(got, tmp_path, "dask.json") == _release_bytes(expected, tmp_path,
                                                                        "memory.json")
    assert got.privacy_spent_ == expected.privacy_spent_
    assert got.aggregates_.schema == expected.aggregates_.schema
    assert got.n_records_ == expected.n_records_


def test_an_undeclared_categorical_column_equals_the_fit_in_memory(tmp_path):
    # known categories (dd.from_pandas): private like any undeclared column's values,
    # counted over the partitions; the release is the in-memory one
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "kind": pd.Categorical(rng.choice(["x", "y", "z", "w"], 3000, p=[.5, .3, .19, .01]),
                               categories=["x", "y", "z", "w", "unused"]),
        "n": rng.integers(0, 100, 3000)})
    X = dd.from_pandas(frame, npartitions=3)
    expected = DPMarginalSynthesizer(random_state=0).fit(X.compute())
    with dask.config.set(scheduler="synchronous"):
        got = DPMarginalSynthesizer(random_state=0).fit(X)
    assert _release_bytes(got, tmp_path, "dask.json") == _release_bytes(expected, tmp_path,
                                                                        "memory.json")
    sample = got.sample()
    assert isinstance(sample["kind"].dtype, pd.CategoricalDtype)
    assert "unused" not in sample["kind"].cat.categories  # never released: no record


def test_pyarrow_period_and_sparse_columns_equal_the_fit_in_memory(tmp_path):
    # a pyarrow timestamp column failed on partitions ("'ArrowDtype' object has no
    # attribute 'unit'") and a period column was refused; both are read as in memory
    rng = np.random.default_rng(0)
    n = 2000
    frame = pd.DataFrame({
        "ts": pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 300, n), unit="D"),
        "code": rng.integers(0, 40, n).astype(str)}).convert_dtypes(dtype_backend="pyarrow")
    frame["month"] = pd.Series(pd.period_range("2020-01", periods=30, freq="M")[
        rng.integers(0, 30, n)])
    frame["count"] = pd.arrays.SparseArray(np.where(rng.random(n) < .8, 0, 3))
    X = dd.from_pandas(frame, npartitions=3)
    expected = DPMarginalSynthesizer(random_state=0).fit(frame)
    with dask.config.set(scheduler="synchronous"):
        got = DPMarginalSynthesizer(random_state=0).fit(X)
    assert _release_bytes(got, tmp_path, "dask.json") == _release_bytes(expected, tmp_path,
                                                                        "memory.json")
    assert got.sample(50).dtypes.to_dict() == frame.dtypes.to_dict()


def test_unequal_and_empty_partitions(frame, tmp_path):
    expected = DPMarginalSynthesizer(epsilon=2.0, encoder=_encoder(), random_state=1).fit(frame)
    X = dd.from_pandas(frame, npartitions=4)
    X = X.repartition(divisions=[0, 10, 10 + 1, 1500, len(frame) - 1])
    parts = X.to_delayed()
    empty = dask.delayed(lambda p: p.iloc[:0])(parts[0])
    X = dd.from_delayed([empty, *parts], meta=X._meta)
    with dask.config.set(scheduler="synchronous"):
        got = DPMarginalSynthesizer(epsilon=2.0, encoder=_encoder(), random_state=1).fit(X)
    assert _release_bytes(got, tmp_path, "a.json") == _release_bytes(expected, tmp_path, "b.json")


def test_on_a_local_cluster(frame, tmp_path):
    distributed = pytest.importorskip("distributed")
    expected = DPMarginalSynthesizer(epsilon=1.0, encoder=_encoder(), random_state=2).fit(frame)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        X = dd.from_pandas(frame, npartitions=5)
        got = DPMarginalSynthesizer(epsilon=1.0, encoder=_encoder(), random_state=2).fit(X)
        files = dask_engine.sample_to_parquet(got, tmp_path / "out", 3000, n_partitions=3,
                                              random_state=9)
    assert _release_bytes(got, tmp_path, "a.json") == _release_bytes(expected, tmp_path, "b.json")
    assert [os.path.basename(f) for f in files] == ["part.0.parquet", "part.1.parquet",
                                                     "part.2.parquet"]
    assert len(pd.read_parquet(tmp_path / "out")) == 3000


@pytest.mark.parametrize("params", [
    {"binning": "quantile", "binning_epsilon": 0.5},
    {"frequent_values": "dp", "frequent_epsilon": 0.5, "inverse": "dp_histogram",
     "inverse_epsilon": 0.3, "special_values": {"kids_f": [0.0]}},
])
def test_dp_binning_on_partitions_equals_binning_in_memory(frame, tmp_path, params):
    # binners that read values are fitted on the value counts merged over partitions
    frame = frame.assign(income=frame["income"].round(-2),
                         kids_f=frame["kids"].astype("Float64"))
    frame.loc[frame.index % 13 == 0, "income"] = np.nan
    encoder = TableEncoder(bounds={"age": (18, 90), "income": (0, 2e5), "kids_f": (0, 5)},
                           n_bins=5, **params)
    expected = DPMarginalSynthesizer(epsilon=1.0, encoder=encoder, random_state=4).fit(frame)
    assert expected.privacy_spent_.epsilon > 1.0  # the binning is accounted on top
    with dask.config.set(scheduler="synchronous"):
        got = DPMarginalSynthesizer(epsilon=1.0, encoder=encoder, random_state=4).fit(
            dd.from_pandas(frame, npartitions=4))
    assert _release_bytes(got, tmp_path, "a.json") == _release_bytes(expected, tmp_path, "b.json")


def _numeric_columns(n=3000, seed=3):
    """Numeric columns of every kind the binners read: ties, missing values, ints,
    floats, nullable and narrow dtypes, values outside the bounds, -0.0."""
    rng = np.random.default_rng(seed)
    missing = rng.random(n) < 0.1
    tied = np.round(rng.normal(50, 20, n), 0)  # ties, and values outside (0, 100)
    tied[::97] = -0.0
    frame = pd.DataFrame({
        "continuous": np.where(missing, np.nan, rng.gamma(2.0, 20.0, n)),
        "tied": tied,
        "ints": rng.integers(-5, 120, n),
        "nullable_ints": pd.array(np.where(missing, None, rng.integers(0, 40, n)),
                                  dtype="Int64"),
        "nullable_floats": pd.array(np.where(missing, None, np.round(rng.random(n) * 9, 1)),
                                    dtype="Float64"),
        "narrow": rng.integers(0, 200, n).astype(np.uint8),
        "single": np.float32(2.5) * np.ones(n, dtype=np.float32),
    })
    frame.loc[missing, "tied"] = np.nan
    return frame


_NUMERIC_BOUNDS = {"continuous": (0, 150), "tied": (0, 100), "ints": (0, 100),
                   "nullable_ints": (0, 40), "nullable_floats": (0, 9), "narrow": (0, 255),
                   "single": (0, 5)}


@pytest.mark.parametrize("params", [
    {"binning": "quantile", "binning_epsilon": 2.0},
    {"binning": "exact"},  # DPKBinsDiscretizer(epsilon=inf): exact quantiles (leaks)
    {"frequent_values": "dp", "frequent_epsilon": 3.0, "frequent_delta": 1e-3,
     "special_values": {"tied": [0.0], "ints": [100]}},
    {"inverse": "dp_histogram", "inverse_epsilon": 1.0, "decimals": 1},
    {"bounds": "data"},
    {"binning": "quantile", "binning_epsilon": 1.0, "frequent_values": "dp",
     "frequent_epsilon": 2.0, "inverse": "dp_histogram", "inverse_epsilon": 1.0},
])
def test_value_reading_binners_on_partitions_equal_the_fit_in_memory(params):
    # each binner that reads values is fitted on the value counts summed over the
    # partitions: the schema, DP edges, frequent values and within-bin shares of
    # encoder.fit(X.compute()) for the same random_state
    import warnings

    from dpsynth.exceptions import PrivacyLeakWarning
    from dpsynth.preprocessing import DPKBinsDiscretizer

    frame = _numeric_columns()
    params = dict(params)
    bounds = ({name: "data" for name in _NUMERIC_BOUNDS} if params.pop("bounds", None)
              else _NUMERIC_BOUNDS)
    if params.get("binning") == "exact":
        params["binning"] = {name: DPKBinsDiscretizer(6, strategy="quantile", epsilon=np.inf)
                             for name in _NUMERIC_BOUNDS}
    encoder = TableEncoder(bounds=bounds, n_bins=6, random_state=11, **params)
    X = dd.from_pandas(frame, npartitions=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        expected = TableEncoder(**encoder.get_params()).fit(X.compute())
        with dask.config.set(scheduler="synchronous"):
            got, _ = dask_engine.fit_encoder(encoder, X)
    assert got.schema_ == expected.schema_
    assert [c.binning for c in got.schema_] == [c.binning for c in expected.schema_]
    assert [c.dtype for c in got.schema_] == list(frame.dtypes)
    assert got.epsilon_spent_ == expected.epsilon_spent_
    if "frequent_values" in params:
        assert any(c.binning.frequent for c in got.schema_)
    if "inverse_epsilon" in params:
        assert all(c.binning.within for c in got.schema_)


def test_numeric_auto_on_partitions_equals_the_fit_in_memory():
    # numeric="auto" reads each column's distinct values and their counts
    frame = _numeric_columns().drop(columns="single")
    frame["text_numbers"] = frame["ints"].astype(str).astype("string")
    # instants and durations are binned as whole numbers of their unit
    frame["when"] = pd.Timestamp("2020-01-01", tz="UTC") + pd.to_timedelta(
        frame["ints"].fillna(0).astype("int64") * 3600, unit="s")
    frame["wait"] = pd.to_timedelta(frame["ints"].astype("float64"), unit="min")
    # dates written as text, with a code, are binned as whole days
    frame["day"] = (pd.Timestamp("2020-01-01") + pd.to_timedelta(
        frame["ints"].fillna(0).astype("int64"), unit="D")).dt.strftime("%Y-%m-%d")
    frame.loc[frame.index[::20], "day"] = "unknown"
    frame["day"] = frame["day"].astype(object)
    # numbers written in a format (percentages, amounts) are binned as numbers
    frame["rate"] = pd.Series([None if pd.isna(v) else f"{v / 4}%" for v in frame["ints"]],
                              dtype=object)
    frame["fee"] = pd.Series([None if pd.isna(v) else f"${int(v) * 100:,}"
                              for v in frame["ints"]], dtype="string")
    encoder = TableEncoder(numeric_rho=2.0, text_numbers="dp", random_state=4)
    X = dd.from_pandas(frame, npartitions=4)
    expected = TableEncoder(**encoder.get_params()).fit(X.compute())
    with dask.config.set(scheduler="synchronous"):
        got, _ = dask_engine.fit_encoder(encoder, X)
    assert got.schema_ == expected.schema_
    assert sum(c.binning is not None for c in got.schema_) >= 7
    binned = {c.name for c in got.schema_ if c.binning is not None}
    assert {"when", "wait", "day"} <= binned
    assert got.schema_[list(frame.columns).index("day")].binning.date_format == "%Y-%m-%d"
    assert [got.schema_[list(frame.columns).index(c)].binning.number_format
            for c in ("rate", "fee")] == ["#%", "$#"]


def test_binners_are_fitted_without_a_row_per_record(monkeypatch):
    # the client fits each binner on one entry per distinct value, never on the
    # column rebuilt from its counts
    from dpsynth.preprocessing import DPKBinsDiscretizer

    assert not hasattr(dask_engine, "_multiset")
    frame = _numeric_columns()
    distinct = {name: frame[name].nunique() for name in frame.columns}
    seen = {}
    fit_counts = DPKBinsDiscretizer._fit_counts

    def recording(self, names, dtypes, counts):
        for name, column in zip(names, counts):
            seen[name] = None if column.values is None else column.values.size
        return fit_counts(self, names, dtypes, counts)

    def refused(self, X, y=None):
        raise AssertionError("a binner was fitted on rows")

    monkeypatch.setattr(DPKBinsDiscretizer, "_fit_counts", recording)
    monkeypatch.setattr(DPKBinsDiscretizer, "fit", refused)
    bounds = dict(_NUMERIC_BOUNDS, single=(0, 5))
    encoder = TableEncoder(bounds=bounds, binning={"continuous": "quantile", "tied": "quantile",
                                                   "ints": "uniform"},
                           binning_epsilon=1.0, frequent_values="dp", frequent_epsilon=1.0,
                           random_state=0)
    with dask.config.set(scheduler="synchronous"):
        dask_engine.fit_encoder(encoder, dd.from_pandas(frame, npartitions=3))
    assert set(seen) == set(frame.columns)
    for name, size in seen.items():  # -0.0 and 0.0 are one value
        assert size <= distinct[name] < len(frame)


def test_declared_bins_read_no_value_on_partitions(monkeypatch):
    # bins from public bounds alone: no value counts are computed for the column
    calls = []
    monkeypatch.setattr(dask_engine, "_value_counts",
                        lambda partition, names: calls.append(names) or {})
    frame = _numeric_columns()[["ints", "nullable_floats"]]
    encoder = TableEncoder(bounds={"ints": (0, 100), "nullable_floats": (0, 9)}, n_bins=4)
    with dask.config.set(scheduler="synchronous"):
        got, _ = dask_engine.fit_encoder(encoder, dd.from_pandas(frame, npartitions=2))
    assert calls == []
    assert got.schema_ == TableEncoder(**encoder.get_params()).fit(frame).schema_


def test_discovered_values_and_declared_categories(frame):
    X = dd.from_pandas(frame, npartitions=3)
    encoder = TableEncoder(categories={"kids": [0, 1, 2, 3, 4]}, bounds={"age": (18, 90),
                                                                          "income": (0, 1e6)})
    with dask.config.set(scheduler="synchronous"):
        fitted, _ = dask_engine.fit_encoder(encoder, X)
    schema = fitted.schema_
    assert schema == TableEncoder(**encoder.get_params()).fit(X.compute()).schema_
    city, kids = schema[schema.names.index("city")], schema[schema.names.index("kids")]
    assert list(city.values) == ["Boston", "Lowell", "Salem", "Worcester"]
    assert not city.declared and kids.declared


def test_release_on_dask_is_the_workload_release(frame):
    X = dd.from_pandas(frame, npartitions=2)
    with dask.config.set(scheduler="synchronous"):
        synth = DPMarginalSynthesizer(epsilon=1.0, encoder=_encoder(), random_state=0).fit(X)
    assert synth.aggregates_.marginals and synth.privacy_spent_["strategy"] == "workload"
    sample = synth.sample(500)
    assert list(sample.columns) == list(frame.columns)
    assert (sample.dtypes == X.dtypes).all()


@pytest.mark.parametrize("synthesis", ["marginal_matching", "aggregate_seeded"])
@pytest.mark.parametrize("n_partitions", [1, 4])
def test_sds_release_on_partitions_equals_in_memory(frame, tmp_path, synthesis, n_partitions):
    # contribution bounding keys each truncated record's random subset by its
    # position in the table, and the DP percentile reads the merged histogram
    rng = np.random.default_rng(3)
    frame = frame.mask(rng.random(frame.shape) < 0.3)  # records of every size
    frame = frame.astype({"owner": "boolean"})
    encoder = TableEncoder(bounds={"age": (18, 90), "income": (0, 200_000)}, n_bins=6,
                           missing="absent")  # missing cells are not counted
    # a low bound: many records are truncated
    params = dict(epsilon=6.0, release=SDSRelease(percentile=60), synthesis=synthesis,
                  random_state=7)
    expected = DPMarginalSynthesizer(encoder=encoder, **params).fit(frame)
    bounds = [dict(m.params).get("contribution_bound")
              for m in expected.privacy_spent_.mechanisms
              if m.mechanism.endswith("gaussian") and not m.name.startswith("numeric")]
    assert bounds[1] < 10 and expected.aggregates_.reporting_length == 3  # C(5, 2) = 10
    with dask.config.set(scheduler="synchronous"):
        got = DPMarginalSynthesizer(encoder=encoder, **params).fit(
            dd.from_pandas(frame, npartitions=n_partitions))
    assert _release_bytes(got, tmp_path, "a.json") == _release_bytes(expected, tmp_path, "b.json")
    assert len(got.sample(50)) == 50


@pytest.mark.parametrize("kwargs, y, message", [
    ({}, "y", "add the target to X"),
])
def test_clear_errors(frame, kwargs, y, message):
    X = dd.from_pandas(frame, npartitions=2)
    params = {"encoder": _encoder(), **kwargs}
    target = frame["owner"] if y else None
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError, match=message):
        DPMarginalSynthesizer(epsilon=1.0, **params).fit(X, target)


def test_unknown_categories_refused(frame):
    X = dd.from_pandas(frame.assign(city=frame["city"].astype("category")), npartitions=2)
    X = X.assign(city=X["city"].cat.as_unknown())
    with pytest.raises(ValueError, match=r"unknown categories .*X = X.categorize\(columns="
                                         r"\['city'\]\)"):
        DPMarginalSynthesizer(encoder=_encoder()).fit(X)
    # what the message says works: the categories known, private as any column's values
    with dask.config.set(scheduler="synchronous"):
        fitted = DPMarginalSynthesizer(encoder=_encoder(), random_state=0).fit(
            X.categorize(columns=["city"]))
    assert isinstance(fitted.sample()["city"].dtype, pd.CategoricalDtype)


def test_number_labels_are_named_and_given_back_as_in_memory(tmp_path):
    # pd.DataFrame(array) on partitions: the release names the columns "0", "1" and
    # records the labels, byte for byte the release of the table in memory
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({0: rng.choice(["x", "y", "z"], 2000), 1: rng.integers(0, 5, 2000)})
    X = dd.from_pandas(frame, npartitions=3)
    expected = DPMarginalSynthesizer(epsilon=1.0, random_state=0).fit(X.compute())
    with dask.config.set(scheduler="synchronous"):
        got = DPMarginalSynthesizer(epsilon=1.0, random_state=0).fit(X)
    assert _release_bytes(got, tmp_path, "dask.json") == _release_bytes(expected, tmp_path,
                                                                        "memory.json")
    assert list(got.sample(5).columns) == [0, 1]
    assert list(X.columns) == [0, 1]  # the caller's frame keeps its labels
    with pytest.raises(TypeError, match="strings or numbers"):
        DPMarginalSynthesizer().fit(dd.from_pandas(
            pd.DataFrame({("a", "b"): [1, 2], ("a", "c"): [3, 4]}), npartitions=1))
    with pytest.raises(ValueError, match="read the same"):
        DPMarginalSynthesizer().fit(dd.from_pandas(
            pd.DataFrame([[1, 2]], columns=pd.Index([0, "0"], dtype=object)), npartitions=1))


def test_not_a_frame():
    series = dd.from_pandas(pd.Series([1, 2, 3], name="a"), npartitions=1)
    assert is_dask_collection(series) and not is_dask_collection(pd.Series([1]))
    with pytest.raises(TypeError, match="dask DataFrame"):
        DPMarginalSynthesizer().fit(series)


def test_bad_values_are_reported_from_the_partition(frame):
    X = dd.from_pandas(frame, npartitions=2)
    encoder = TableEncoder(categories={"city": ["Boston"]}, bounds={"age": (18, 90),
                                                                    "income": (0, 2e5)})
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError,
                                                                 match="not among its"):
        DPMarginalSynthesizer(encoder=encoder).fit(X)


# ------------------------------------------------------------------ Parquet sampling
@pytest.fixture(scope="module")
def fitted(frame):
    return DPMarginalSynthesizer(epsilon=2.0, encoder=_encoder(), random_state=0).fit(frame)


def test_sample_to_parquet_reproducible_and_independent(fitted, tmp_path):
    with dask.config.set(scheduler="synchronous"):
        first = dask_engine.sample_to_parquet(fitted, tmp_path / "a", 2500, partition_size=1000,
                                              random_state=4)
        again = dask_engine.sample_to_parquet(fitted, tmp_path / "b", 2500, partition_size=1000,
                                              random_state=4)
    assert len(first) == 3
    parts = [pd.read_parquet(f) for f in first]
    assert [len(p) for p in parts] == [834, 833, 833]
    for f, g in zip(first, again):
        pd.testing.assert_frame_equal(pd.read_parquet(f), pd.read_parquet(g))
    assert not parts[0].iloc[:833].reset_index(drop=True).equals(parts[1])  # own streams
    whole = pd.read_parquet(tmp_path / "a")  # the directory reads as one table
    assert len(whole) == 2500 and list(whole.columns) == list(fitted.feature_names_in_)
    assert whole["kids"].dtype == "Int64" and whole["owner"].dtype == bool


def test_sample_to_parquet_matches_the_marginals(fitted, tmp_path, frame):
    with dask.config.set(scheduler="synchronous"):
        files = dask_engine.sample_to_parquet(fitted, tmp_path / "m", 6000, n_partitions=4,
                                              random_state=1)
    sample = pd.concat([pd.read_parquet(f) for f in files])
    real = frame["city"].value_counts(normalize=True, dropna=False)
    fake = sample["city"].value_counts(normalize=True, dropna=False)
    assert (real - fake.reindex(real.index).fillna(0)).abs().sum() / 2 < 0.08


def test_sample_to_parquet_errors(fitted, tmp_path):
    with pytest.raises(ValueError, match="n_samples"):
        dask_engine.sample_to_parquet(fitted, tmp_path / "x", -1)
    with pytest.raises(ValueError, match="n_partitions"):
        dask_engine.sample_to_parquet(fitted, tmp_path / "x", 10, n_partitions=0)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="not a directory"):
        dask_engine.sample_to_parquet(fitted, tmp_path / "file", 10)
    with dask.config.set(scheduler="synchronous"):
        dask_engine.sample_to_parquet(fitted, tmp_path / "y", 10, random_state=0)
        with pytest.raises(ValueError, match="already holds"):
            dask_engine.sample_to_parquet(fitted, tmp_path / "y", 10, random_state=0)


@pytest.fixture(scope="module")
def fitted_model(frame):
    """A synthesizer whose samples beyond 400 records come from a 400-record model."""
    from dpsynth.sampling import MarginalMatchingSampler

    return DPMarginalSynthesizer(epsilon=2.0, encoder=_encoder(), random_state=0,
                                 synthesis=MarginalMatchingSampler(model_size=400)).fit(frame)


def test_split_multiplicities_is_one_expanded_sample():
    rng = np.random.default_rng(0)
    sizes = np.array([700, 700, 699, 0])
    parts = list(dask_engine.split_multiplicities(2099, 400, sizes, rng))
    assert [int(p.sum()) for p in parts] == sizes.tolist()
    total = np.sum(parts, axis=0)
    # every model record 2099 // 400 = 5 times, 2099 % 400 = 99 of them once more
    assert sorted(np.unique(total, return_counts=True)[1].tolist()) == [99, 301]
    assert set(np.unique(total).tolist()) == {5, 6}
    again = list(dask_engine.split_multiplicities(2099, 400, sizes, np.random.default_rng(0)))
    assert all(np.array_equal(a, b) for a, b in zip(parts, again))


def test_sample_to_parquet_from_the_model(fitted_model, tmp_path, frame):
    with dask.config.set(scheduler="synchronous"):
        files = dask_engine.sample_to_parquet(fitted_model, tmp_path / "a", 5003,
                                              partition_size=1000, random_state=3)
        again = dask_engine.sample_to_parquet(fitted_model, tmp_path / "b", 5003,
                                              partition_size=1000, random_state=3)
        other = dask_engine.sample_to_parquet(fitted_model, tmp_path / "c", 5003,
                                              partition_size=1000, random_state=4)
    parts = [pd.read_parquet(f) for f in files]
    assert [len(p) for p in parts] == [834] * 5 + [833]
    for f, g in zip(files, again):  # reproducible for a seed
        pd.testing.assert_frame_equal(pd.read_parquet(f), pd.read_parquet(g))
    assert not pd.read_parquet(files[0]).equals(pd.read_parquet(other[0]))
    whole = pd.read_parquet(tmp_path / "a")
    expected = fitted_model.sample(50)
    assert list(whole.columns) == list(expected.columns)
    assert whole.dtypes.to_dict() == expected.dtypes.to_dict()
    assert whole.notna().sum().gt(0).all()
    # the union is one expanded sample of the model: a binned record's codes repeat
    # 5003 // 400 = 12 or 13 times in all (numeric values are drawn per copy)
    codes = TableEncoder.from_schema(fitted_model.aggregates_.schema).transform(whole)
    _, counts = np.unique(codes, axis=0, return_counts=True)
    assert counts.sum() == 5003 and counts.min() >= 12
    real = frame["city"].value_counts(normalize=True, dropna=False)
    fake = whole["city"].value_counts(normalize=True, dropna=False)
    assert (real - fake.reindex(real.index).fillna(0)).abs().sum() / 2 < 0.08


def test_sample_to_parquet_model_on_a_local_cluster(fitted_model, tmp_path):
    distributed = pytest.importorskip("distributed")
    with dask.config.set(scheduler="synchronous"):
        expected = dask_engine.sample_to_parquet(fitted_model, tmp_path / "a", 2500,
                                                 n_partitions=3, random_state=5)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        got = dask_engine.sample_to_parquet(fitted_model, tmp_path / "b", 2500,
                                            n_partitions=3, random_state=5)
    for f, g in zip(expected, got):  # the same files whatever the scheduler
        pd.testing.assert_frame_equal(pd.read_parquet(f), pd.read_parquet(g))


def test_dask_fit_is_not_modified_in_place(frame):
    X = dd.from_pandas(frame, npartitions=2)
    before = X.compute()
    with dask.config.set(scheduler="synchronous"):
        DPMarginalSynthesizer(encoder=_encoder(), random_state=0).fit(X)
    pd.testing.assert_frame_equal(X.compute(), before)


def test_aggregates_round_trip(fitted, tmp_path):
    path = tmp_path / "agg.json"
    fitted.aggregates_.save(path)
    assert DPAggregates.load(path).n_records == fitted.n_records_


# ------------------------------------------------------------------ command line
def _write_parts(tmp_path, frame, n_files):
    paths = []
    for i, part in enumerate(np.array_split(np.arange(len(frame)), n_files)):
        path = tmp_path / f"in-{i}.csv"
        frame.iloc[part].to_csv(path, index=False)
        paths.append(path)
    frame.to_csv(tmp_path / "whole.csv", index=False)
    return paths


def test_cli_glob_gives_the_release_of_the_whole_file(frame, tmp_path, capsys):
    from dpsynth.cli import main

    _write_parts(tmp_path, frame, 3)
    common = ["--bounds", "age=18:90", "income=0.0:200000", "--seed", "3", "--epsilon", "2"]
    assert main(["aggregate", str(tmp_path / "whole.csv"), "-o", str(tmp_path / "a.json"),
                 *common]) == 0
    assert main(["synthesize", str(tmp_path / "in-*.csv"), "--engine", "dask", "-n", "1200",
                 "--partition-size", "500", "-o", str(tmp_path / "out"),
                 "--aggregates-out", str(tmp_path / "b.json"), "-j", "1", *common]) == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == ["part.0.parquet", "part.1.parquet", "part.2.parquet"]
    assert len(pd.read_parquet(tmp_path / "out")) == 1200
    out = capsys.readouterr()
    assert "wrote 1200 synthetic records" in out.out
    # an output ending in .csv is one CSV file, written by the client
    assert main(["sample", str(tmp_path / "b.json"), "--engine", "dask", "-n", "300",
                 "-o", str(tmp_path / "out.csv"), "--seed", "1"]) == 0
    assert len(pd.read_csv(tmp_path / "out.csv")) == 300


def test_cli_parquet_categorical_columns(tmp_path, capsys):
    # Parquet files of a categorical column: dd.read_parquet leaves its categories
    # unknown; the command reads them (private, released under DP)
    from dpsynth.cli import main

    rng = np.random.default_rng(0)
    for i in range(2):
        pd.DataFrame({"kind": pd.Categorical(rng.choice(["x", "y", "z"], 600)),
                      "n": rng.integers(0, 9, 600)}).to_parquet(tmp_path / f"p{i}.parquet",
                                                                  index=False)
    assert main(["synthesize", str(tmp_path / "p*.parquet"), "--engine", "dask", "-o",
                 str(tmp_path / "out.csv"), "--seed", "0", "-j", "1"]) == 0
    out = pd.read_csv(tmp_path / "out.csv")
    assert set(out["kind"]) <= {"x", "y", "z", "<other>"}
    assert out["kind"].isin(["x", "y", "z"]).mean() > 0.9


def test_cli_engine_errors(frame, tmp_path, capsys):
    from dpsynth.cli import main

    _write_parts(tmp_path, frame, 2)
    frame.iloc[:10].to_parquet(tmp_path / "in-9.parquet")
    cases = [
        (["aggregate", str(tmp_path / "none-*.csv"), "--engine", "dask"], "no input file"),
        (["aggregate", str(tmp_path / "in-*"), "--engine", "dask"], "both CSV and Parquet"),
        (["aggregate", str(tmp_path / "whole.csv"), "--scheduler", "tcp://h:1"],
         "--engine dask"),
        (["sample", str(tmp_path / "missing.json"), "--engine", "dask",
          "--partition-size", "0"], "--partition-size"),
        # the pandas engine writes one CSV file: a partition size would be ignored
        (["synthesize", str(tmp_path / "whole.csv"), "--partition-size", "1000"],
         "add --engine dask"),
    ]
    for argv, message in cases:
        assert main([*argv, "-o", str(tmp_path / "o.json")]) == 1
        assert message in capsys.readouterr().err


def test_neighbouring_tables_differ_only_in_dp_outputs(frame, tmp_path):
    # the privacy-boundary battery's check, on the dask path: one record more
    import json


    extra = pd.DataFrame({"city": pd.array(["Nantucket"], dtype="string"), "age": [89],
                          "income": [199_000.0], "owner": [False],
                          "kids": pd.array([3], dtype="Int64")})
    documents = []
    for i, table in enumerate([frame, pd.concat([frame, extra], ignore_index=True)]):
        with dask.config.set(scheduler="synchronous"):
            synth = DPMarginalSynthesizer(epsilon=2.0, encoder=_encoder(), random_state=i)
            synth.fit(dd.from_pandas(table, npartitions=3))
        synth.aggregates_.save(tmp_path / f"{i}.json")
        documents.append(json.loads((tmp_path / f"{i}.json").read_text()))
    assert public_part(documents[0]) == public_part(documents[1])


def test_an_interrupted_partition_write_leaves_the_old_output(fitted, tmp_path, monkeypatch):
    # the partitions are written beside the output and moved in at the end: an
    # interrupt (or a failure) mid-way leaves the old output whole, with --force too
    from dpsynth.cli import _distributed

    out = tmp_path / "out"
    out.mkdir()
    for i in range(3):
        (out / f"part.{i}.parquet").write_bytes(b"old")

    def interrupted(synthesizer, path, n, **kwargs):
        (tmp_path / "started").write_text("yes")
        open(os.path.join(path, "part.0.parquet"), "wb").write(b"new")
        raise KeyboardInterrupt

    monkeypatch.setattr(_distributed, "sample_to_parquet", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _distributed.write_partitions(fitted, 10, str(out), 0, 5, force=True)
    assert sorted(p.name for p in out.iterdir()) == [f"part.{i}.parquet" for i in range(3)]
    assert all(p.read_bytes() == b"old" for p in out.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "started"]  # no staging
    monkeypatch.undo()
    written = _distributed.write_partitions(fitted, 10, str(out), 0, 5, force=True)
    assert written == 10 and len(pd.read_parquet(out)) == 10


def test_partitions_whose_dtype_differs_from_the_metadata_are_refused_clearly(tmp_path):
    # files written with different types: dask's metadata takes the first file's
    rng = np.random.default_rng(0)
    pd.DataFrame({"x": rng.integers(0, 5, 500), "z": rng.choice(["p", "q"], 500)}).to_parquet(
        tmp_path / "p0.parquet", index=False)
    pd.DataFrame({"x": np.where(rng.random(500) < .1, np.nan, 1.0),
                  "z": rng.choice(["p", "q"], 500)}).to_parquet(tmp_path / "p1.parquet",
                                                                 index=False)
    X = dd.read_parquet(str(tmp_path / "*.parquet"))
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(TypeError, match=r"Column 'x' is int64 in the dask DataFrame's "
                                            r"metadata but float64 in one of its partitions"):
            DPMarginalSynthesizer(random_state=0).fit(X)
        fitted = DPMarginalSynthesizer(random_state=0).fit(X.astype({"x": "float64"}))
    assert fitted.sample()["x"].dtype == np.float64
