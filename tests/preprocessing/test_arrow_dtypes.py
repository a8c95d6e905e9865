"""pyarrow-backed columns (``pd.ArrowDtype``) go through the default path as their
pandas equivalents and come back in their own dtype."""

import io
import json

import numpy as np
import pandas as pd
import pytest

from dpsynth import DPMarginalSynthesizer
from dpsynth.preprocessing import TableEncoder
from dpsynth.utils._arrow import standard_dtype

pa = pytest.importorskip("pyarrow")


def _table(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    start = pd.Timestamp("2021-01-01")
    days = rng.integers(0, 100, n)
    frame = pd.DataFrame({
        "group": rng.choice(["a", "b", "c"], n),
        "city": rng.choice([f"city{i}" for i in range(60)], n),
        "day": (start + pd.to_timedelta(days, unit="D")).strftime("%Y-%m-%d"),
        "amount": pd.Series(rng.normal(50, 10, n).round(1)).astype(str),
        "when": start + pd.to_timedelta(rng.integers(0, 100 * 86400, n), unit="s"),
        "wait": pd.to_timedelta(rng.integers(0, 100, n), unit="h"),
        "count": rng.integers(0, 50, n),
    })
    arrow = frame.copy()
    for name in ("group", "city", "day", "amount"):
        arrow[name] = frame[name].astype(pd.ArrowDtype(pa.string()))
    arrow["when"] = frame["when"].astype(pd.ArrowDtype(pa.timestamp("us")))
    arrow["wait"] = frame["wait"].astype(pd.ArrowDtype(pa.duration("us")))
    arrow["count"] = frame["count"].astype(pd.ArrowDtype(pa.int64()))
    arrow["date"] = (start + pd.to_timedelta(days, unit="D")).to_series(index=arrow.index) \
        .astype(pd.ArrowDtype(pa.date32()))
    arrow["zoned"] = frame["when"].dt.tz_localize("UTC").astype(
        pd.ArrowDtype(pa.timestamp("us", tz="UTC")))
    return arrow


def test_standard_dtype_maps_text_and_temporal_arrow_types_only():
    assert standard_dtype(pd.ArrowDtype(pa.string())) == pd.StringDtype()
    assert standard_dtype(pd.ArrowDtype(pa.large_string())) == pd.StringDtype()
    assert standard_dtype(pd.ArrowDtype(pa.timestamp("ms"))) == np.dtype("datetime64[ms]")
    assert standard_dtype(pd.ArrowDtype(pa.timestamp("s", tz="UTC"))) == \
        pd.DatetimeTZDtype("s", "UTC")
    assert standard_dtype(pd.ArrowDtype(pa.date32())) == np.dtype("datetime64[s]")
    assert standard_dtype(pd.ArrowDtype(pa.duration("ns"))) == np.dtype("timedelta64[ns]")
    assert standard_dtype(pd.ArrowDtype(pa.int64())) is None
    assert standard_dtype(np.dtype("float64")) is None


def test_arrow_columns_come_back_complete_in_their_dtypes():
    X = _table()
    before = X.copy()
    synthetic = DPMarginalSynthesizer(epsilon=4, random_state=0).fit(X).sample()
    pd.testing.assert_frame_equal(X, before)  # the input is not modified
    assert synthetic.dtypes.to_dict() == X.dtypes.to_dict()
    assert abs(len(synthetic) - len(X)) < 0.05 * len(X)
    # no missing value in a column that had none: the other value is a text label
    assert synthetic.notna().all().all(), synthetic.isna().sum()
    assert set(synthetic["city"]) <= set(X["city"]) | {"<other>"}
    # text columns of dates and numbers are binned as such (their values, not <other>)
    days = pd.to_datetime(synthetic["day"].astype(str), format="%Y-%m-%d", errors="coerce")
    assert days.notna().mean() > 0.99
    assert days.min() >= pd.Timestamp("2020-12-01") and days.max() <= pd.Timestamp("2021-05-01")
    amounts = pd.to_numeric(synthetic["amount"].astype(str), errors="coerce")
    assert amounts.notna().mean() > 0.99 and abs(amounts.median() - 50) < 3
    # instants, dates and durations keep their range
    seconds = (synthetic["when"].astype("datetime64[us]") - pd.Timestamp("2021-01-01")) \
        .dt.total_seconds()
    assert seconds.quantile(0.05) >= -86400 and seconds.quantile(0.95) <= 101 * 86400
    assert synthetic["zoned"].dt.tz is not None
    hours = synthetic["wait"].astype("timedelta64[us]").dt.total_seconds() / 3600
    assert 40 < hours.median() < 60


def test_the_same_csv_read_with_either_backend_gives_the_same_release():
    X = _table(n=1500, seed=1)[["group", "day", "amount"]]
    text = X.astype(str).to_csv(index=False)
    default = pd.read_csv(io.StringIO(text))
    arrow = pd.read_csv(io.StringIO(text), dtype_backend="pyarrow")
    a = DPMarginalSynthesizer(epsilon=2, random_state=3).fit(default).sample()
    b = DPMarginalSynthesizer(epsilon=2, random_state=3).fit(arrow).sample()
    pd.testing.assert_frame_equal(a.astype(object), b.astype(object).where(b.notna(), a))
    assert (b.dtypes == arrow.dtypes).all()


def test_the_encoder_round_trips_arrow_columns():
    X = _table(n=500)[["group", "when", "wait", "date"]]
    encoder = TableEncoder(random_state=0).fit(X)
    decoded = encoder.inverse_transform(encoder.transform(X))
    assert decoded.dtypes.to_dict() == X.dtypes.to_dict()
    assert decoded["group"].tolist() == X["group"].tolist()


def test_a_loaded_release_decodes_to_the_source_dtypes(tmp_path):
    # the period, sparse and pyarrow dtypes travel in the release file (public: the
    # user's declaration), so a release loaded elsewhere samples them too
    from dpsynth import DPAggregates

    rng = np.random.default_rng(0)
    n = 1500
    X = _table(n=n)[["group", "when"]].assign(
        month=pd.Series(pd.period_range("2015-01", periods=48, freq="M")[
            rng.integers(0, 48, n)]),
        count=pd.arrays.SparseArray(np.where(rng.random(n) < .8, 0, rng.integers(1, 9, n))))
    synth = DPMarginalSynthesizer(epsilon=4, random_state=0).fit(X)
    synth.aggregates_.save(tmp_path / "r.json")
    loaded = DPAggregates.load(tmp_path / "r.json")
    assert loaded.schema == synth.aggregates_.schema
    for sampler in (DPMarginalSynthesizer.from_aggregates(loaded, random_state=0),
                    synth.publishable()):
        assert sampler.sample(30).dtypes.to_dict() == X.dtypes.to_dict()
    # a source dtype that no reading maps is refused when loading
    from dpsynth.aggregates import _checksum

    text = (tmp_path / "r.json").read_text().replace('"period[M]"', '"int64"')
    document = json.loads(text)
    document["checksum"] = _checksum(document)  # a file written so, not a damaged one
    (tmp_path / "bad.json").write_text(json.dumps(document))
    with pytest.raises(ValueError, match="source_dtype"):
        DPAggregates.load(tmp_path / "bad.json")
