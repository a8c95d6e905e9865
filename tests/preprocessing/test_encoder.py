"""TableEncoder: exact round trips, categories, missing values, input validation."""

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpsynth import DPMarginalSynthesizer
from dpsynth.preprocessing import TableEncoder
from dpsynth.preprocessing._dtypes import nullable_dtype

SHARED = Path(os.environ.get("DPSYNTH_SHARED", Path(__file__).resolve().parents[3] / "shared"))


# ----------------------------------------------------------- round trips
def _column(kind, values, missing):
    """A Series of the given dtype kind from small ints, with missing where asked."""
    values = np.asarray(values)
    if kind == "object_str":
        data = [f"v{v}" for v in values]
        return pd.Series([None if m else d for d, m in zip(data, missing)], dtype=object)
    if kind == "str":
        return pd.Series([pd.NA if m else f"s{v}" for v, m in zip(values, missing)], dtype="string")
    if kind == "pandas_str":
        return pd.Series([None if m else f"p{v}" for v, m in zip(values, missing)], dtype="str")
    if kind == "category":
        return pd.Series(pd.Categorical([None if m else f"c{v}" for v, m in zip(values, missing)],
                                        categories=[f"c{i}" for i in range(6)]))
    if kind == "ordered":
        return pd.Series(pd.Categorical([None if m else int(v) for v, m in zip(values, missing)],
                                        categories=list(range(6)), ordered=True))
    if kind == "bool":
        return pd.Series(values % 2 == 0)
    if kind == "boolean":
        return pd.Series([pd.NA if m else bool(v % 2) for v, m in zip(values, missing)],
                         dtype="boolean")
    if kind == "int":
        return pd.Series(values.astype(np.int64) - 2)
    if kind == "uint8":
        return pd.Series(values.astype(np.uint8))
    if kind == "Int64":
        return pd.Series([pd.NA if m else int(v) for v, m in zip(values, missing)], dtype="Int64")
    if kind == "float":
        return pd.Series([np.nan if m else v / 2 for v, m in zip(values, missing)], dtype=float)
    if kind == "datetime":
        stamps = pd.to_datetime("2020-01-01") + pd.to_timedelta(values, unit="D")
        return pd.Series(stamps).where(~np.asarray(missing))
    raise AssertionError(kind)


KINDS = ["object_str", "str", "pandas_str", "category", "ordered", "bool", "boolean",
         "int", "uint8", "Int64", "float", "datetime"]


@st.composite
def frames(draw):
    n_rows = draw(st.integers(1, 25))
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=6))
    columns = {}
    for j, kind in enumerate(kinds):
        values = draw(st.lists(st.integers(0, 5), min_size=n_rows, max_size=n_rows))
        missing = draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows))
        columns[f"{kind}_{j}"] = _column(kind, values, missing)
    return pd.DataFrame(columns)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=frames(), missing=st.sampled_from(["category", "absent"]))
def test_round_trip_is_exact(frame, missing):
    before = frame.copy()
    encoder = TableEncoder(missing=missing).fit(frame)
    codes = encoder.transform(frame)
    assert codes.dtype == np.int32 and codes.shape == frame.shape
    assert np.all(codes < encoder.n_values_[None, :])
    # exact, but for the missing marker of object columns, which the dtype
    # fixes (NaN) whatever marker the data used (None, NaN)
    expected = frame.copy()
    for name in expected.columns:
        if expected[name].dtype == object:
            expected[name] = expected[name].where(expected[name].notna(), np.nan)
        elif missing == "absent":  # any cell may be empty: numpy int/bool -> nullable
            expected[name] = expected[name].astype(nullable_dtype(expected[name].dtype))
    pd.testing.assert_frame_equal(encoder.inverse_transform(codes), expected)
    pd.testing.assert_frame_equal(frame, before)  # never modified in place
    # the public schema (everything kept) rebuilds the same decoder; a categorical
    # dtype's categories were not declared: they decode in the schema's order, with
    # the dtype pandas gives the published values
    schema = encoder.public_schema().to_json()
    rebuilt = TableEncoder.from_schema(schema).inverse_transform(codes)
    for column in encoder.schema_:
        dtype = expected[column.name].dtype
        if isinstance(dtype, pd.CategoricalDtype):
            inferred = pd.Index(list(column.values)).dtype
            public = pd.CategoricalDtype(pd.Index(list(column.values), dtype=inferred),
                                         ordered=dtype.ordered)
            assert rebuilt[column.name].cat.categories.dtype == inferred
            expected[column.name] = expected[column.name].astype(object).astype(public)
    pd.testing.assert_frame_equal(rebuilt, expected)


def test_missing_modes_codes():
    frame = pd.DataFrame({"a": ["x", None, "y"], "b": [1.0, np.nan, 1.0]})
    category = TableEncoder().fit(frame)
    np.testing.assert_array_equal(category.transform(frame), [[0, 0], [2, 1], [1, 0]])
    absent = TableEncoder(missing="absent").fit(frame)
    np.testing.assert_array_equal(absent.transform(frame), [[0, 0], [-1, -1], [1, 0]])
    np.testing.assert_array_equal(category.schema_.missing_codes, [2, 1])
    np.testing.assert_array_equal(absent.schema_.missing_codes, [-1, -1])


def test_attribute_ids_are_stable():
    frame = pd.DataFrame({"a": ["x", "y"], "b": [True, False]})
    encoder = TableEncoder().fit(frame)
    np.testing.assert_array_equal(encoder.offsets_, [0, 3, 6])
    np.testing.assert_array_equal(encoder.schema_.attribute_columns, [0, 0, 0, 1, 1, 1])
    assert [encoder.schema_.attribute_name(i) for i in range(6)] == [
        ("a", "x"), ("a", "y"), ("a", None), ("b", False), ("b", True), ("b", None)]


def test_numpy_input_gives_numpy_output():
    X = np.array([["a", "b"], ["c", "b"]], dtype=object)
    encoder = TableEncoder().fit(X)
    back = encoder.inverse_transform(encoder.transform(X))
    assert isinstance(back, np.ndarray)
    np.testing.assert_array_equal(back, X)


def test_int_column_receiving_missing_becomes_nullable():
    frame = pd.DataFrame({"a": [1, 2, 3]})
    encoder = TableEncoder(categories={"a": [1, 2, 3]}).fit(frame)
    out = encoder.inverse_transform(np.array([[0], [3]]))  # 3 = missing code
    assert str(out["a"].dtype) == "Int64"
    assert out["a"].isna().tolist() == [False, True]


# ------------------------------------------------------------- categories
def test_declared_categories_are_public_and_complete():
    frame = pd.DataFrame({"a": ["x", "x"], "b": ["u", "v"]})
    encoder = TableEncoder(categories={"a": ["x", "y", "z"]}).fit(frame)
    assert list(encoder.schema_[0].values) == ["x", "y", "z"]
    assert encoder.schema_[0].declared and not encoder.schema_[1].declared
    listed = TableEncoder(categories=[["x", "y"], ["u", "v"]]).fit(frame)
    assert all(c.declared for c in listed.schema_)


def test_value_outside_declared_categories_raises_naming_column_and_value():
    frame = pd.DataFrame({"a": ["x", "w"]})
    with pytest.raises(ValueError, match=r"Column 'a' has the value 'w'"):
        TableEncoder(categories={"a": ["x", "y"]}).fit(frame)
    encoder = TableEncoder(categories={"a": ["x", "y"]}, handle_unknown="missing").fit(frame)
    np.testing.assert_array_equal(encoder.transform(frame)[:, 0], [0, 2])


@pytest.mark.parametrize("categories,error,match", [
    ({"zz": ["x"]}, ValueError, "not in X"),
    ([["x"], ["y"]], ValueError, "one list per column"),
    ({"a": "xy"}, TypeError, "list of values"),
    ({"a": ["x", "x"]}, ValueError, "duplicate"),
    ({"a": ["x", None]}, ValueError, "missing value"),
    ({"a": []}, ValueError, "empty"),
    (3, TypeError, "categories"),
])
def test_bad_categories(categories, error, match):
    with pytest.raises(error, match=match):
        TableEncoder(categories=categories).fit(pd.DataFrame({"a": ["x"]}))


@pytest.mark.parametrize("param,value,match", [
    ("missing", "drop", "missing"),
    ("handle_unknown", "ignore", "handle_unknown"),
    ("max_float_values", 0, "max_float_values"),
])
def test_bad_parameters(param, value, match):
    with pytest.raises(ValueError, match=match):
        TableEncoder(**{param: value}).fit(pd.DataFrame({"a": ["x"]}))


def test_float_column_with_many_values_points_to_binning():
    frame = pd.DataFrame({"income": np.linspace(0, 1, 100)})
    with pytest.raises(ValueError, match=r"'income'.*bin it first.*bounds"):
        TableEncoder().fit(frame)
    # declared categories make it categorical
    TableEncoder(categories={"income": list(frame["income"])}).fit(frame)


# ------------------------------------------------------------- validation
@pytest.mark.parametrize("X,error,match", [
    (pd.DataFrame({"a": []}), ValueError, "0 sample"),
    (pd.DataFrame(index=range(3)), ValueError, "0 feature"),
    (pd.DataFrame([[1, 2]], columns=["a", "a"]), ValueError, "duplicate column names"),
    (pd.DataFrame([[1, 2]], columns=["a", ""]), ValueError, "empty name .position 1."),
    (pd.DataFrame([[1, 2]], columns=[0, "0"]), ValueError, "labels that read the same"),
    (pd.DataFrame([[1, 2]], columns=[0, 0]), ValueError, "duplicate column names"),
    (pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples([("a", 1), ("a", 2)])),
     TypeError, "MultiIndex columns"),
    (pd.DataFrame([[1, 2]], columns=[pd.Timestamp("2020-01-01"), "b"]), TypeError,
     "strings or numbers.*Timestamp.*position 0"),
    (pd.DataFrame({"a": [[1], [2]]}), TypeError, "unhashable"),
    ([[1, 2], [3]], ValueError, "ragged"),
    (np.array([1, 2, 3]), ValueError, "2-D"),
    (pd.Series([1, 2]), ValueError, "Series"),
    ("abc", TypeError, "DataFrame or a 2-D array-like"),
])
def test_input_validation_errors(X, error, match):
    with pytest.raises(error, match=match):
        TableEncoder().fit(X)
    with pytest.raises(error, match=match):
        DPMarginalSynthesizer().fit(X)


def test_mixed_value_types_are_categories_of_their_own():
    # numbers and words in one object column, as spreadsheets export them
    X = pd.DataFrame({"a": pd.Series([3, "x", "3", 3.0, None, "x", 2.5] * 50, dtype=object)})
    encoder = TableEncoder(categories={"a": [2.5, 3, "3", "x"]}).fit(X)
    assert list(encoder.schema_[0].values) == [2.5, 3, "3", "x"]
    back = encoder.inverse_transform(encoder.transform(X))
    assert back["a"].isna().tolist()[:7] == [False] * 4 + [True] + [False] * 2
    assert list(back["a"].iloc[[0, 1, 2, 3, 5, 6]]) == [3, "x", "3", 3, "x", 2.5]
    assert [type(v) for v in back["a"].iloc[:4]] == [int, str, str, int]
    # undeclared and categorical: the DP value list is in a type-ranked order,
    # numbers before text
    synth = DPMarginalSynthesizer(encoder=TableEncoder(numeric={"a": "categorical"}),
                                  epsilon=1e4, random_state=0).fit(X)
    assert list(synth.aggregates_.schema[0].values) == [2.5, 3, "3", "x"]
    sample = synth.sample(200)
    assert set(sample["a"].dropna()) <= {2.5, 3, "3", "x", "<other>"}
    # by default the column holds numbers (two thirds of its fields): they are
    # binned, "x" is a code of its own, and numbers decode as the column held them
    # (number objects and text, by a DP share)
    synth = DPMarginalSynthesizer(epsilon=1e4, random_state=0).fit(X)
    binning = synth.aggregates_.schema[0].binning
    assert binning.codes == ("x",) and binning.frequent == (2.5, 3.0)
    assert binning.text_share == pytest.approx(0.25, abs=0.02)
    sample = synth.sample(2000, random_state=0)["a"]
    assert sample.dtype == object
    # a column of decimal numbers: 3 decodes as the float 3.0, or as the text "3.0"
    assert set(sample.dropna().map(repr)) <= {"2.5", "3.0", "'2.5'", "'3.0'", "'x'",
                                              "'<other>'"}
    shares = sample.dropna().map(lambda v: type(v).__name__).value_counts(normalize=True)
    assert shares["str"] == pytest.approx(1 / 3 + 2 / 3 * 0.25, abs=0.05)


def test_transform_checks_columns():
    encoder = TableEncoder().fit(pd.DataFrame({"a": ["x"], "b": ["y"]}))
    with pytest.raises(ValueError, match="different order"):
        encoder.transform(pd.DataFrame({"b": ["y"], "a": ["x"]}))
    with pytest.raises(ValueError, match="X has 1 features, but TableEncoder is expecting 2"):
        encoder.transform(pd.DataFrame({"a": ["x"]}))
    with pytest.raises(ValueError, match="missing \\['b'\\]"):
        encoder.transform(pd.DataFrame({"a": ["x"], "c": ["y"]}))
    with pytest.raises(ValueError, match="out of range"):
        encoder.inverse_transform(np.array([[5, 0]]))


# ------------------------------------------------------------ real data
def _read(path, **kwargs):
    if not path.exists():
        pytest.skip(f"shared data not available ({path})")
    return pd.read_csv(path, **kwargs)


def test_round_trip_on_uci_adult():
    frame = _read(SHARED / "data" / "adult-uci" / "adult.csv")
    frame = frame.drop(columns=["fnlwgt"])  # ints: many values but still categorical
    encoder = TableEncoder().fit(frame)
    pd.testing.assert_frame_equal(encoder.inverse_transform(encoder.transform(frame)), frame)


@pytest.mark.parametrize("missing", ["category", "absent"])
def test_round_trip_on_nist_ma_excerpt(missing):
    frame = _read(SHARED / "data" / "nist-diverse-communities-ma" / "ma2019.csv",
                  na_values="N", keep_default_na=False)
    # float columns with many values need bins (DENSITY, PINCP) or integer dtypes
    frame = frame.drop(columns=["DENSITY"]).astype({"PINCP": "Int64", "POVPIP": "Int64",
                                                   "INDP": "Int64"})
    encoder = TableEncoder(missing=missing).fit(frame)
    expected = frame if missing == "category" else frame.astype(
        {name: nullable_dtype(dtype) for name, dtype in frame.dtypes.items()})
    pd.testing.assert_frame_equal(encoder.inverse_transform(encoder.transform(frame)), expected)


# ------------------------------------------- canonical values (issue #30)
def test_equal_values_have_one_canonical_spelling():
    from dpsynth.preprocessing._categories import canonical_value

    utc = pd.Timestamp("2024-03-02", tz="UTC")
    assert repr(canonical_value(-0.0, np.dtype(float))) == "0.0"
    assert repr(canonical_value(np.float32(-0.0), np.dtype(float))) == "0.0"
    # outside float columns a float equal to an int is that int; ints stay ints
    for value in (1.0, np.float64(1.0), 1, np.int8(1)):
        assert type(canonical_value(value, np.dtype(object))) is int
    assert repr(canonical_value(-0.0, np.dtype(object))) == "0"
    assert canonical_value(2.5, np.dtype(object)) == 2.5
    assert canonical_value(1.0, np.dtype(float)) == 1.0
    assert type(canonical_value(1.0, np.dtype(float))) is float
    assert canonical_value(True, np.dtype(object)) is True
    # one instant, one zone: the dtype's own, else UTC; naive stays naive
    tokyo = utc.tz_convert("Asia/Tokyo")
    assert repr(canonical_value(tokyo, np.dtype(object))) == repr(utc)
    assert str(canonical_value(utc, pd.DatetimeTZDtype(tz="Asia/Tokyo")).tz) == "Asia/Tokyo"
    assert canonical_value(pd.Timestamp("2024-03-02"), np.dtype(object)).tzinfo is None
    # one unit: the finest that holds the instant
    coarse = pd.Timestamp(np.datetime64("2024-03-02", "s"))
    assert canonical_value(coarse).unit == canonical_value(pd.Timestamp("2024-03-02")).unit
    import datetime
    assert isinstance(canonical_value(datetime.datetime(2024, 3, 2)), pd.Timestamp)


def test_the_value_order_is_total_and_independent_of_the_types_present():
    from dpsynth.preprocessing._categories import canonical_order

    naive = [pd.Timestamp("2024-03-03"), pd.Timestamp("2024-03-01")]
    aware = pd.Timestamp("2024-03-02", tz="UTC")
    assert canonical_order(naive) == sorted(naive)
    # one aware timestamp does not reorder the naive ones: ranked after them
    assert canonical_order([aware, *naive]) == [*sorted(naive), aware]
    assert canonical_order([*naive, aware]) == [*sorted(naive), aware]
    assert canonical_order(["b", 2, "a", True, 1.5]) == [True, 1.5, 2, "a", "b"]


@pytest.mark.parametrize("first", [-0.0, 1.0])
def test_the_first_record_does_not_choose_a_spelling(first):
    rest = pd.Series([2, 1, 0] * 10, dtype=object)
    for column in (pd.concat([pd.Series([first], dtype=object), rest], ignore_index=True),
                   pd.concat([rest, pd.Series([first], dtype=object)], ignore_index=True)):
        schema = TableEncoder().fit(column.to_frame("v")).schema_
        assert [repr(v) for v in schema[0].values] == ["0", "1", "2"]


def test_undeclared_categorical_dtypes_publish_object_categories():
    ints = pd.Series([1, 2, 3] * 10).astype("category")
    with_float = pd.Series([1, 2, 3] * 10 + [2.5]).astype("category")
    published = []
    for column in (ints, with_float):
        encoder = TableEncoder().fit(column.to_frame("c"))
        keep = np.ones(encoder.schema_.n_attributes, dtype=bool)
        keep[encoder.schema_.offsets[0] + 2] = not (len(column) % 2)  # 2.5 not released
        public = encoder.schema_.restrict(keep)[0][0]
        published.append((public.to_json()["dtype"], [repr(v) for v in public.values]))
        # the private encoder still round-trips its own dtype
        codes = encoder.transform(column.to_frame("c"))
        assert encoder.inverse_transform(codes)["c"].dtype == column.dtype
    assert published[0][0]["categories_dtype"] == "object"
    assert published[0][1] == ["1", "2", "3"]
    assert published[1] == published[0]  # 2.5 suppressed: nothing shows it was there
    # declared with categories="dtype": the dtype of the categories is public too
    declared = TableEncoder(categories="dtype").fit(ints.to_frame("c")).public_schema()
    assert declared[0].to_json()["dtype"]["categories_dtype"] == "int64"


def test_lists_are_object_columns_whatever_their_values():
    rows = [[1, "a"], [2, "b"], [2.5, None]]
    encoder = TableEncoder().fit(rows)
    assert [c.dtype for c in encoder.schema_] == [np.dtype(object)] * 2
    assert encoder.schema_[0].values == (1, 2, 2.5)
    # an array declares its dtype: kept
    assert TableEncoder().fit(np.array([[1], [2]])).schema_[0].dtype == np.int64


# ------------------------------------------------------------- other value
def _public(encoder, keep_first=1):
    """The release schema of an encoder that keeps the first value of every column."""
    keep = np.zeros(encoder.schema_.n_attributes, dtype=bool)
    keep[encoder.schema_.offsets[:-1]] = True
    return encoder.schema_.restrict(keep, other=True)[0]


def test_other_value_codes_and_labels():
    frame = pd.DataFrame({
        "text": pd.Series(["a", "b", None, "c"], dtype=object),
        "string": pd.Series(["a", "b", "c", "a"], dtype="string"),
        "cat": pd.Categorical(["a", "b", "c", "a"], ordered=True),
        "int": [1, 2, 3, 1],
        "flag": [True, False, True, True]})
    encoder = TableEncoder().fit(frame)
    # private schema: no other code yet, the labels from the parameter and the dtypes
    assert [c.other for c in encoder.schema_] == [False] * 5
    assert [c.other_label for c in encoder.schema_] == ["<other>"] * 3 + [None, None]
    assert encoder.schema_[4].declared and encoder.schema_[4].values == (False, True)
    public = TableEncoder.from_schema(_public(encoder))
    schema = public.schema_
    assert [c.other for c in schema] == [True, True, True, True, False]
    np.testing.assert_array_equal(schema.other_codes, [1, 1, 1, 1, -1])
    np.testing.assert_array_equal(schema.missing_codes, [2, 2, 2, 2, 2])
    # a value outside the released ones is other, the label itself too; missing stays
    codes = public.transform(frame)
    np.testing.assert_array_equal(codes[:, 0], [0, 1, 2, 1])
    np.testing.assert_array_equal(codes[:, 3], [0, 1, 1, 0])
    back = public.inverse_transform(codes)
    assert back["text"].tolist()[:2] == ["a", "<other>"] and pd.isna(back["text"][2])
    assert back["string"].tolist() == ["a", "<other>", "<other>", "a"]
    assert back["string"].dtype == frame["string"].dtype
    assert list(back["cat"].cat.categories) == ["a", "<other>"] and back["cat"].cat.ordered
    assert back["int"].isna().tolist() == [False, True, True, False]  # no text label
    again = public.transform(back)  # text labels read back as other; int's are missing
    np.testing.assert_array_equal(again[:, [0, 1, 2, 4]], codes[:, [0, 1, 2, 4]])
    np.testing.assert_array_equal(again[:, 3], [0, 2, 2, 0])


def test_other_label_parameter():
    frame = pd.DataFrame({"text": ["a", "b"], "int": [1, 2], "when": pd.to_datetime(
        ["2020-01-01", "2021-01-01"])})
    encoder = TableEncoder(other_label={"int": -1, "text": None}).fit(frame)
    assert [c.other_label for c in encoder.schema_] == [None, -1, None]
    public = TableEncoder.from_schema(_public(encoder))
    back = public.inverse_transform(np.array([[1, 1, 1]]))
    assert pd.isna(back["text"][0]) and back["int"].tolist() == [-1]
    assert back["int"].dtype == np.int64 and pd.isna(back["when"][0])
    assert [c.other_label for c in TableEncoder(other_label="OTHER").fit(frame).schema_] == [
        "OTHER", None, None]
    assert all(c.other_label is None
               for c in TableEncoder(other_label=None).fit(frame).schema_)



def test_other_value_of_an_object_column_of_numbers_is_no_text():
    # an object column whose published values are all numbers: a text label would
    # make it mixed str/int (scikit-learn's encoders refuse such a column); its
    # other value decodes as missing, as in numeric dtypes; a mixed column keeps it
    frame = pd.DataFrame({"codes": pd.Series([1, 2, 3, 4], dtype=object),
                          "mixed": pd.Series([1, "x", 2, "y"], dtype=object),
                          "floats": pd.Series([0.5, 1.5, 2.5, 3.5], dtype=object)})
    encoder = TableEncoder().fit(frame)
    keep = np.zeros(encoder.schema_.n_attributes, dtype=bool)
    start = encoder.schema_.offsets
    keep[[start[0], start[0] + 1, start[1], start[1] + 2, start[2]]] = True
    assert [encoder.schema_[1].values[i] for i in (0, 2)] == [1, "x"]
    schema = encoder.schema_.restrict(keep, other=True)[0]
    assert [c.other_label for c in schema] == [None, "<other>", None]
    back = TableEncoder.from_schema(schema).inverse_transform(np.array([[2, 2, 1]]))
    assert pd.isna(back["codes"][0]) and back["mixed"][0] == "<other>"
    assert pd.isna(back["floats"][0])
    # a number chosen as the label is kept
    labelled = TableEncoder(other_label={"codes": -1}).fit(frame).schema_
    assert labelled.restrict(keep, other=True)[0][0].other_label == -1
    # nothing published: nothing tells numbers from text, the label stays
    assert encoder.schema_.restrict(np.zeros_like(keep), other=True)[0][0].other_label == \
        "<other>"


@pytest.mark.parametrize("other_label,error,match", [
    ({"nope": "x"}, ValueError, "other_label names column"),
    ({"int": "x"}, TypeError, r"other_label\['int'\].*int64"),
    ({"int": True}, TypeError, r"other_label\['int'\]"),
    ({"text": np.nan}, ValueError, "missing value"),
    ({"binned": 0}, ValueError, "declared"),
    (3, ValueError, "other_label"),
])
def test_bad_other_label(other_label, error, match):
    frame = pd.DataFrame({"text": ["a", "b"], "int": [1, 2], "binned": [0.5, 1.5]})
    with pytest.raises(error, match=match):
        TableEncoder(other_label=other_label, bounds={"binned": (0, 2)}).fit(frame)


def test_other_value_round_trips_through_json():
    from dpsynth.schema import Schema

    frame = pd.DataFrame({"text": ["a", "b"], "int": [1, 2]})
    schema = _public(TableEncoder(other_label={"int": -7}).fit(frame))
    document = schema.to_json()
    assert document["version"] == 3
    assert document["columns"][0]["other"] and document["columns"][1]["other_label"] == -7
    assert Schema.from_json(document) == schema
    # a schema without the fields (an earlier version) has no other value
    for entry in document["columns"]:
        del entry["other"], entry["other_label"]
    old = Schema.from_json(document)
    assert not any(c.other for c in old) and old.n_values.tolist() == [2, 2]


def test_decoding_gathers_the_restored_values_with_the_declared_dtypes():
    # text, category and datetime columns decode by gathering their restored distinct
    # values: every cell and dtype as the input's (object stays object under pandas 3)
    X = pd.DataFrame({
        "obj": pd.Series(["a", np.nan, "b", "a"] * 5, dtype=object),
        "text": pd.array(["x", None, "y", "y"] * 5, dtype="string"),
        "cat": pd.Series(["p", "q", "q", "p"] * 5, dtype="category"),
        "when": pd.to_datetime(["2020-01-01", None, "2021-02-02", "2020-01-01"] * 5),
    })
    enc = TableEncoder().fit(X)
    out = enc.inverse_transform(enc.transform(X))
    assert list(out.dtypes) == list(X.dtypes)
    pd.testing.assert_frame_equal(out, X)


def test_fit_transform_encodes_as_fit_then_transform():
    # fit_transform reads each discovered column once: the same codes as a separate transform
    rng = np.random.default_rng(4)
    X = pd.DataFrame({
        "obj": pd.Series(rng.choice(["a", "b", None, 7], 200), dtype=object),
        "num": rng.choice([1.5, np.nan, -0.0, 0.0], 200),
        "cat": pd.Series(rng.choice(["p", "q"], 200), dtype="category"),
    })
    codes = TableEncoder().fit_transform(X)
    np.testing.assert_array_equal(codes, TableEncoder().fit(X).transform(X))


def test_inverse_transform_in_two_threads_gives_the_same_table():
    # binned columns drawn in a second thread beside the gathered ones: the same draws
    rng = np.random.default_rng(0)
    n = 120_000
    X = pd.DataFrame({"a": rng.choice(["x", "y", None], n).astype(object),
                      "age": rng.integers(0, 90, n),
                      "income": np.where(rng.random(n) < 0.1, np.nan, rng.gamma(2.0, 1e4, n)),
                      "b": pd.Categorical(rng.choice(["p", "q"], n))})
    encoder = TableEncoder(bounds={"age": (0, 100), "income": (0.0, 200_000.0)},
                           random_state=0).fit(X)
    codes = encoder.transform(X)
    one = encoder.inverse_transform(codes, random_state=3)
    pd.testing.assert_frame_equal(encoder.inverse_transform(codes, random_state=3, n_jobs=2),
                                  one)
    pd.testing.assert_frame_equal(encoder.inverse_transform(codes, random_state=3, n_jobs=None),
                                  one)
    assert one["age"].between(0, 100).all() and one["income"].isna().any()
    with pytest.raises(ValueError, match="n_jobs"):
        encoder.inverse_transform(codes, n_jobs=0)


def test_factorize_by_address_gives_pandas_codes_and_uniques():
    # cells sharing objects (as a Parquet reader leaves them) are hashed by address,
    # then equal values held by different objects, mixed types and missing values merge
    # exactly as pandas.factorize merges them
    from dpsynth.utils._validation import factorize

    words = ["a", "b", "".join(["a"]), None, np.nan, 1, 1.0, True, pd.NA, 2.5, pd.NaT, "7"]
    rng = np.random.default_rng(0)
    cells = np.empty(600, dtype=object)
    cells[:] = [words[i] for i in rng.integers(0, len(words), 600)]
    cases = [pd.Series(cells), pd.Series(cells[:1]), pd.Series(cells[:3]),
             pd.Series(np.array([str(i) for i in range(300)] * 2, dtype=object)),
             pd.Series(np.arange(40) % 3), pd.Series(cells).astype("category")]
    for series in cases:
        want_codes, want_uniques = pd.factorize(series, use_na_sentinel=True)
        codes, uniques = factorize(series)
        np.testing.assert_array_equal(codes, want_codes)
        assert codes.dtype == want_codes.dtype
        assert type(uniques) is type(want_uniques) and uniques.dtype == want_uniques.dtype
        assert [repr(v) for v in uniques] == [repr(v) for v in want_uniques]


def test_unhashable_cell_found_among_shared_objects():
    cell = [1]
    series = pd.Series(np.array(["a", cell, "a", cell] * 10, dtype=object))
    with pytest.raises(TypeError, match="unhashable value of type list") as info:
        TableEncoder().fit(pd.DataFrame({"x": series}))
    assert "[1]" not in str(info.value)  # the type, never the (private) value


@pytest.mark.parametrize("dtype", ["int64", "float64", "Int64", "datetime64[ns]"])
def test_numeric_auto_fitted_on_value_counts_as_on_every_row(dtype):
    # the encoder fits numeric="auto" on a column's value counts: the same column as
    # the fit on every row (which depends on the multiset of values only)
    from dpsynth.preprocessing._encoder import _distinct_values
    from dpsynth.preprocessing._numeric import fit_auto_column

    rng = np.random.default_rng(3)
    values = np.round(rng.lognormal(3, 1, 5000))
    series = pd.Series(values).astype("float64")
    series[rng.random(5000) < 0.1] = np.nan
    if dtype == "datetime64[ns]":
        series = pd.Timestamp("2020-01-01") + pd.to_timedelta(series, unit="h")
    elif dtype != "float64":
        series = series.fillna(0).astype(dtype) if dtype == "int64" else series.astype(dtype)
    distinct, weights = _distinct_values(series)
    assert weights is not None and weights.sum() == len(series)
    fits = [fit_auto_column("x", s, w, kind="number", rho=0.5, delta=1e-9, n_bins=12,
                            rng=np.random.default_rng(1))
            for s, w in ((series, None), (distinct, weights))]
    assert fits[0][0] == fits[1][0]
    assert [s.rho for s in fits[0][1]] == [s.rho for s in fits[1][1]]


# ------------------------------------------------- scikit-learn's set_output
def test_set_output_pandas_names_the_code_columns_and_keeps_the_index():
    from sklearn.compose import make_column_transformer

    X = pd.DataFrame({"a": ["x", "y", "z", "x"], "b": [1.5, 2.5, np.nan, 1.5],
                      "c": [True, False, True, True]}, index=["r1", "r2", "r3", "r4"])
    codes = TableEncoder().fit(X).transform(X)
    encoder = TableEncoder().set_output(transform="pandas")
    frame = encoder.fit_transform(X)
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == ["a", "b", "c"] and list(frame.index) == list(X.index)
    np.testing.assert_array_equal(frame.to_numpy(), codes)
    np.testing.assert_array_equal(encoder.transform(X).to_numpy(), codes)
    assert list(encoder.get_feature_names_out()) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="input_features"):
        encoder.get_feature_names_out(["a", "b", "d"])
    decoded = encoder.inverse_transform(frame)
    assert list(decoded.index) == list(X.index)  # the codes' index, as transform gave it
    pd.testing.assert_frame_equal(decoded[["a", "c"]], X[["a", "c"]].astype({"a": "str"}),
                                  check_dtype=False)
    # in a ColumnTransformer (which refused to set_output before)
    ct = make_column_transformer((TableEncoder(), ["a", "c"]), remainder="passthrough")
    out = ct.set_output(transform="pandas").fit_transform(X)
    assert list(out.columns) == ["tableencoder__a", "tableencoder__c", "remainder__b"]
    np.testing.assert_array_equal(out[["tableencoder__a", "tableencoder__c"]].to_numpy(),
                                  codes[:, [0, 2]])


def test_global_pandas_output_leaves_synthesizers_working():
    """dpsynth's own code matrices stay arrays under transform_output="pandas"."""
    import sklearn

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(["x", "y"], 400), "b": rng.normal(size=400)})
    expected = DPMarginalSynthesizer(random_state=0).fit(X).sample()
    with sklearn.config_context(transform_output="pandas"):
        synth = DPMarginalSynthesizer(encoder=TableEncoder(), random_state=0).fit(X)
        pd.testing.assert_frame_equal(synth.sample(), expected)
        assert 0 <= synth.score(X) <= 1
