"""TableEncoder with binned numeric columns (bounds, binning, DP quantiles)."""

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from dpsynth.exceptions import PrivacyLeakWarning
from dpsynth.preprocessing import DPKBinsDiscretizer, TableEncoder


def _table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "age": rng.integers(0, 100, n),
        "income": rng.lognormal(10, 1, n),
        "hours": rng.uniform(0, 80, n).astype(np.float32),
        "kids": pd.array(rng.integers(0, 6, n), dtype="Int64"),
        "city": rng.choice(["a", "b", "c"], n),
    })
    frame.loc[::9, "income"] = np.nan
    frame.loc[::7, "kids"] = pd.NA
    frame.loc[::5, "city"] = None
    return frame


BOUNDS = {"age": (0, 99), "income": (0, 1e6), "hours": (0, 80), "kids": (0, 19)}


def _assert_in_bins(encoder, codes, back, original):
    """Decoded values re-encode to the same codes, with the original dtypes."""
    pd.testing.assert_series_equal(back.dtypes, original.dtypes)
    np.testing.assert_array_equal(encoder.transform(back), codes)
    for column in encoder.schema_:
        if column.binning is not None:
            edges = column.binning.edges
            values = back[column.name].dropna().to_numpy(dtype=float)
            top = edges[-1] - 1 if column.binning.integer else edges[-1]
            assert np.all((values >= edges[0]) & (values <= top))


def test_bounds_bin_numeric_columns():
    X = _table()
    original = X.copy()
    encoder = TableEncoder(bounds=BOUNDS, n_bins=5, random_state=0).fit(X)
    pd.testing.assert_frame_equal(X, original)
    assert encoder.n_values_.tolist() == [6, 6, 6, 6, 4]  # 5 bins + missing each
    assert encoder.epsilon_spent_ == 0.0
    codes = encoder.transform(X)
    np.testing.assert_array_equal(codes[:, 0], X["age"].to_numpy() // 20)
    assert np.all(codes[X["income"].isna().to_numpy(), 1] == encoder.schema_.missing_codes[1])
    assert np.all(codes[X["kids"].isna().to_numpy(), 3] == 5)
    back = encoder.inverse_transform(codes)
    pd.testing.assert_frame_equal(X, original)
    _assert_in_bins(encoder, codes, back, X)
    # categorical exact (the missing marker is the dtype's: None or NaN in an object column)
    pd.testing.assert_series_equal(back["city"].isna(), X["city"].isna())
    observed = X["city"].notna()
    pd.testing.assert_series_equal(back["city"][observed], X["city"][observed])
    pd.testing.assert_frame_equal(back.isna(), X.isna())


def test_absent_missing_mode():
    X = _table()
    encoder = TableEncoder(bounds=BOUNDS, missing="absent", random_state=0).fit(X)
    codes = encoder.transform(X)
    assert encoder.n_values_[1] == 10
    assert np.all(codes[X["income"].isna().to_numpy(), 1] == -1)
    back = encoder.inverse_transform(codes)
    assert str(back["age"].dtype) == "Int64"  # any cell may be empty: fixed nullable dtype
    _assert_in_bins(encoder, codes, back.astype(X.dtypes.to_dict()), X)


def test_bin_labels_are_attribute_names():
    X = pd.DataFrame({"age": [1, 50], "x": [0.5, 2.0]})
    encoder = TableEncoder(bounds={"age": (0, 99), "x": (0, 4)}, n_bins=4).fit(X)
    names = [encoder.schema_.attribute_name(i) for i in range(encoder.offsets_[-1])]
    assert names == [("age", "[0, 24]"), ("age", "[25, 49]"), ("age", "[50, 74]"),
                     ("age", "[75, 99]"), ("age", None),
                     ("x", "[0, 1)"), ("x", "[1, 2)"), ("x", "[2, 3)"), ("x", "[3, 4]"),
                     ("x", None)]


def test_inverse_random_state():
    X = _table()
    encoder = TableEncoder(bounds=BOUNDS, random_state=1).fit(X)
    codes = encoder.transform(X)
    first = encoder.inverse_transform(codes)
    pd.testing.assert_frame_equal(first, encoder.inverse_transform(codes))
    pd.testing.assert_frame_equal(first, clone(encoder).fit(X).inverse_transform(codes))
    other = encoder.inverse_transform(codes, random_state=2)
    assert not first["income"].equals(other["income"])
    pd.testing.assert_frame_equal(other, encoder.inverse_transform(codes, random_state=2))


def test_bounds_on_a_text_column_name_the_parameter():
    X = _table()
    with pytest.raises(TypeError, match=r"(?s)'city'.*bounds/binning.*categories"):
        TableEncoder(bounds={**BOUNDS, "city": (0, 1)}, random_state=0).fit(X)


def test_float_column_without_bounds_points_to_bounds():
    X = _table()
    with pytest.raises(ValueError, match=r"Column 'income'.*bounds=\{'income'"):
        TableEncoder(bounds={"age": (0, 99)}).fit(X)


def test_declared_categories_stay_categorical():
    X = pd.DataFrame({"kids": [0, 1, 2, 1], "age": [3, 4, 5, 6]})
    encoder = TableEncoder(categories={"kids": [0, 1, 2, 3]},
                           bounds={"kids": (0, 19), "age": (0, 99)}, n_bins=4).fit(X)
    assert encoder.schema_[0].binning is None
    assert list(encoder.schema_[0].values) == [0, 1, 2, 3]
    assert encoder.schema_[1].binning is not None
    assert encoder.inverse_transform(encoder.transform(X))["kids"].equals(X["kids"])


def test_quantile_binning_spends_binning_epsilon():
    X = _table(2000)
    encoder = TableEncoder(bounds=BOUNDS, n_bins=4, binning="quantile", binning_epsilon=2.0,
                           random_state=0).fit(X)
    assert encoder.epsilon_spent_ == pytest.approx(2.0)
    codes = encoder.transform(X)
    # DP quartiles: each bin holds roughly a quarter of the ages
    shares = np.bincount(codes[:, 0], minlength=5)[:4] / len(X)
    np.testing.assert_allclose(shares, 0.25, atol=0.08)
    _assert_in_bins(encoder, codes, encoder.inverse_transform(codes), X)
    repeat = clone(encoder).fit(X)
    assert [c.values for c in repeat.schema_] == [c.values for c in encoder.schema_]


def test_per_column_binners():
    X = _table()
    own = DPKBinsDiscretizer(3, strategy="quantile", epsilon=0.5, inverse="midpoint")
    params = own.get_params()
    encoder = TableEncoder(
        bounds={"age": (0, 99), "income": (0, 1e6), "kids": (0, 19)},
        binning={"income": own, "kids": "log",
                 "hours": DPKBinsDiscretizer(bin_edges=[0, 20, 40, 80])},
        random_state=0)
    with pytest.warns(UserWarning, match="'kids' gets 9 bin"):  # log bins < 1 wide
        encoder.fit(X)
    assert own.get_params() == params and not hasattr(own, "bin_edges_")  # cloned
    assert encoder.epsilon_spent_ == 0.5
    assert encoder.n_values_.tolist()[:4] == [11, 4, 4, 10]
    income = encoder.schema_[1].binning
    assert income.inverse == "midpoint" and income.edges[-1] == 1e6
    codes = encoder.transform(X)
    back = encoder.inverse_transform(codes)
    _assert_in_bins(encoder, codes, back, X)
    edges = income.edge_array
    midpoints = (edges[:-1] + edges[1:]) / 2
    assert set(back["income"].dropna()) <= set(midpoints)


def test_binning_parameter_errors():
    X = _table()
    with pytest.raises(ValueError, match="need a privacy budget: pass binning_epsilon"):
        TableEncoder(bounds=BOUNDS, binning="quantile").fit(X)
    with pytest.raises(ValueError, match="binning_epsilon is only used"):
        TableEncoder(bounds=BOUNDS, binning_epsilon=1.0).fit(X)
    with pytest.raises(ValueError, match="binning"):
        TableEncoder(bounds=BOUNDS, binning="kmeans").fit(X)
    with pytest.raises(ValueError, match=r"binning\['age'\] must be"):
        TableEncoder(bounds=BOUNDS, binning={"age": 3}).fit(X)
    with pytest.raises(ValueError, match=r"bounds names column\(s\) \['AGE'\]"):
        TableEncoder(bounds={"AGE": (0, 99)}).fit(X)
    with pytest.raises(TypeError, match="bounds"):
        TableEncoder(bounds=(0, 99)).fit(X)
    with pytest.raises(ValueError, match=r"Column 'age' is binned with 'log' but has no"):
        TableEncoder(bounds={"income": (0, 1e6), "hours": (0, 80), "kids": (0, 9)},
                     binning={"age": "log"}).fit(X)
    with pytest.raises(TypeError, match="Column 'city' has dtype"):
        TableEncoder(bounds={**BOUNDS, "city": (0, 1)}).fit(X)
    with pytest.raises(ValueError, match="Column 'age' has values outside its bounds"):
        TableEncoder(bounds=BOUNDS, binning={"age": DPKBinsDiscretizer(clip=False)}).fit(
            X.assign(age=X["age"].where(X.index != 3, 150)))


def test_bounds_from_data_warns():
    X = _table()
    with pytest.warns(PrivacyLeakWarning, match="'income'"):
        encoder = TableEncoder(bounds={**BOUNDS, "income": "data"}).fit(X)
    assert encoder.schema_[1].binning.edges[-1] == X["income"].max()


def test_public_schema_round_trip_of_binned_columns():
    X = _table()
    encoder = TableEncoder(bounds=BOUNDS, n_bins=6, binning={"income": "quantile"},
                           binning_epsilon=1.0, random_state=0).fit(X)
    keep = np.zeros(encoder.offsets_[-1], dtype=bool)  # nothing released...
    schema = encoder.public_schema(keep).to_json()
    binned = [c for c in schema["columns"] if "binning" in c]
    assert len(binned) == 4  # ...but bin edges are public: every bin is kept
    assert all(len(c["values"]) == len(c["binning"]["edges"]) - 1 for c in binned)
    # bins keep their ids; the unreleased missing code of 'age' is dropped
    np.testing.assert_array_equal(encoder.schema_.restrict(keep)[1][:8],
                                  [0, 1, 2, 3, 4, 5, -1, 7])

    full = encoder.public_schema().to_json()
    loaded = TableEncoder.from_schema(full)
    codes = encoder.transform(X)
    np.testing.assert_array_equal(loaded.transform(X), codes)
    np.testing.assert_array_equal(loaded.n_values_, encoder.n_values_)
    back = loaded.inverse_transform(codes, random_state=0)
    _assert_in_bins(loaded, codes, back, X)
    assert ([loaded.schema_.attribute_name(i) for i in range(loaded.offsets_[-1])]
            == [encoder.schema_.attribute_name(i) for i in range(encoder.offsets_[-1])])


def test_from_schema_rejects_bad_binning():
    X = pd.DataFrame({"age": [1, 50]})
    schema = TableEncoder(bounds={"age": (0, 99)}, n_bins=4).fit(X).public_schema().to_json()
    broken = json.loads(json.dumps(schema))
    broken["columns"][0]["binning"]["edges"] = [0, 50, 25, 100, 200]
    with pytest.raises(ValueError, match="binning of 'age'"):
        TableEncoder.from_schema(broken)
    mismatch = json.loads(json.dumps(schema))
    mismatch["columns"][0]["binning"]["edges"] = [0, 10, 20, 30, 40]
    with pytest.raises(ValueError, match="bins of 'age' do not match"):
        TableEncoder.from_schema(mismatch)
    missing_key = json.loads(json.dumps(schema))
    del missing_key["columns"][0]["binning"]["inverse"]
    with pytest.raises(ValueError, match="binning of 'age'"):
        TableEncoder.from_schema(missing_key)


def test_encoder_without_bounds_unchanged():
    X = pd.DataFrame({"a": ["x", "y", None], "b": [1, 2, 2]})
    encoder = TableEncoder().fit(X)
    assert encoder.epsilon_spent_ == 0.0
    assert encoder.inverse_transform(encoder.transform(X)).equals(X)
    assert "binning" not in json.dumps(encoder.public_schema().to_json())


# ----------------------------------------------------------------- NIST data
def _shared_folder():
    env = os.environ.get("DPSYNTH_SHARED")
    return Path(env) if env else Path(__file__).resolve().parents[3] / "shared"


NIST = _shared_folder() / "data" / "nist-diverse-communities-ma"


def _public_bounds(dictionary):
    """(low, high) of each numeric column, from the data dictionary alone.

    A column's range spans its ``min``/``max`` and the numeric codes listed
    beside them (e.g. NOC ``"0"``, POVPIP ``"501"``, WGTP ``"0"``).
    """
    bounds = {}
    for name, entry in dictionary.items():
        values = entry.get("values", {})
        if not isinstance(values, dict) or "min" not in values:
            continue
        numbers = [values["min"], values["max"]]
        numbers += [float(k) for k in values if k.lstrip("-").isdigit()]
        bounds[name] = (min(numbers), max(numbers))
    return bounds


def test_nist_ma_excerpt_round_trip():
    if not (NIST / "ma2019.csv").exists():
        pytest.skip(f"shared NIST data not found at {NIST} (set DPSYNTH_SHARED)")
    X = pd.read_csv(NIST / "ma2019.csv", na_values="N", keep_default_na=False)
    dictionary = json.loads((NIST / "data_dictionary.json").read_text())
    bounds = _public_bounds(dictionary)
    assert bounds["AGEP"] == (0, 99) and bounds["POVPIP"] == (0, 501)
    assert bounds["PINCP"] == (-9000, 1341000) and bounds["NOC"] == (0, 19)
    # integer columns read as float because of their nulls: make them Int64;
    # INDP is a categorical code list (hundreds of codes), not a quantity
    for name in ["NOC", "NPF", "PINCP", "POVPIP", "INDP"]:
        X[name] = X[name].astype("Int64")
    original = X.copy()
    encoder = TableEncoder(bounds=bounds, n_bins=8,
                           binning={"PINCP": "quantile", "POVPIP": "quantile"},
                           binning_epsilon=1.0, random_state=0)
    with pytest.warns(UserWarning, match="instead of 8"):  # POVPIP's top bins collide
        encoder.fit(X)
    assert encoder.epsilon_spent_ == pytest.approx(1.0)
    binned = {c.name for c in encoder.schema_ if c.binning is not None}
    assert binned == set(bounds) == {"AGEP", "NOC", "NPF", "DENSITY", "PINCP", "POVPIP",
                                     "PWGTP", "WGTP"}
    codes = encoder.transform(X)
    back = encoder.inverse_transform(codes)
    pd.testing.assert_frame_equal(X, original)
    _assert_in_bins(encoder, codes, back, X)
    pd.testing.assert_frame_equal(back.isna(), X.isna())
    for name, (low, high) in bounds.items():
        assert back[name].min() >= low and back[name].max() <= high
    loaded = TableEncoder.from_schema(encoder.public_schema().to_json())
    _assert_in_bins(loaded, codes, loaded.inverse_transform(codes, random_state=1), X)


def test_nist_ma_end_to_end_synthesis_keeps_ranges_and_dtypes():
    if not (NIST / "ma2019.csv").exists():
        pytest.skip(f"shared NIST data not found at {NIST} (set DPSYNTH_SHARED)")
    from dpsynth import DPMarginalSynthesizer

    X = pd.read_csv(NIST / "ma2019.csv", na_values="N", keep_default_na=False)
    for name in ["NOC", "NPF", "PINCP", "POVPIP", "INDP"]:
        X[name] = X[name].astype("Int64")
    X = X.drop(columns=["INDP"])  # hundreds of codes: not needed here
    bounds = _public_bounds(json.loads((NIST / "data_dictionary.json").read_text()))
    synth = DPMarginalSynthesizer(
        epsilon=4.0, encoder=TableEncoder(bounds=bounds, n_bins=8), random_state=0).fit(X)
    out = synth.sample(2000)
    assert list(out.columns) == list(X.columns)
    # an integer column whose other value (its codes too rare to be released) is
    # synthesized decodes it as missing, so it becomes nullable; the others keep theirs
    schema = synth.aggregates_.schema
    for name, dtype in X.dtypes.items():
        column = schema[schema.names.index(name)]
        if out[name].dtype != dtype:
            assert column.other and X[name].dtype == np.int64 and out[name].dtype == "Int64"
            assert (~X[name].isin(column.values)).any()  # it does hold such codes
    for name, (low, high) in bounds.items():
        values = out[name].dropna()
        assert len(values) and values.min() >= low and values.max() <= high, name
    assert out["AGEP"].dtype == np.int64 and str(out["PINCP"].dtype) == "Int64"
    assert synth.score(X) > 0.85
