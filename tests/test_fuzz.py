"""Property-based fuzzing of every public entry point (issue #14, item 10).

Each case either returns valid output or raises a ``ValueError`` /
``TypeError`` (or a warning); it never crashes with another exception,
hangs, or returns data that violates the released schema.

Cases per test: a quarter of the active hypothesis profile's
``max_examples`` (``tests/conftest.py``): 25 in CI, 1,000 with
``--hypothesis-profile=long`` (over 10,000 in all).
"""

import contextlib
import io
import os
import string
import tempfile
import warnings

from hypothesis import given, settings, strategies as st
import numpy as np
import pandas as pd
import pytest

from dpsynth import DPAggregates, DPMarginalSynthesizer
from dpsynth.cli import main
from dpsynth.metrics import marginal_tvd
from dpsynth.preprocessing import DPKBinsDiscretizer, TableEncoder

EXAMPLES = max(5, settings.default.max_examples // 4)
fuzz = settings(max_examples=EXAMPLES)
ALLOWED = (ValueError, TypeError)

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)
NAMES = st.text(alphabet=string.ascii_letters + "éü_ 0", min_size=1, max_size=5)


@st.composite
def columns(draw, n):
    """One column of ``n`` values of a random pandas dtype and missing pattern."""
    kind = draw(st.sampled_from([
        "int", "Int64", "float", "bool", "boolean", "object", "string", "category",
        "datetime", "constant", "unique", "mixed", "allna"]))
    missing = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    small = draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
    if kind == "int":
        return pd.Series(np.asarray(small, dtype=np.int64))
    if kind == "Int64":
        return pd.Series([None if m else v for v, m in zip(small, missing)], dtype="Int64")
    if kind == "float":
        return pd.Series([np.nan if m else v / 2 for v, m in zip(small, missing)],
                         dtype=np.float64)
    if kind == "bool":
        return pd.Series([v > 0 for v in small], dtype=bool)
    if kind == "boolean":
        return pd.Series([None if m else v > 0 for v, m in zip(small, missing)],
                         dtype="boolean")
    texts = draw(st.lists(TEXT, min_size=3, max_size=3))
    if kind in ("object", "string", "category"):
        values = [None if m else texts[v % 3] for v, m in zip(small, missing)]
        dtype = {"object": object, "string": "string", "category": "category"}[kind]
        return pd.Series(values, dtype=dtype)
    if kind == "datetime":
        return pd.Series([pd.NaT if m else pd.Timestamp("2020-01-01") + pd.Timedelta(days=v)
                          for v, m in zip(small, missing)])
    if kind == "constant":
        return pd.Series([texts[0]] * n, dtype=object)
    if kind == "unique":
        return pd.Series([f"{texts[0]}{i}" for i in range(n)], dtype=object)
    if kind == "mixed":
        return pd.Series([None if m else (v if v % 2 else texts[0])
                          for v, m in zip(small, missing)], dtype=object)
    return pd.Series([None] * n, dtype=object)


@st.composite
def frames(draw, max_rows=30, max_columns=4):
    n = draw(st.integers(1, max_rows))
    names = draw(st.lists(NAMES, min_size=1, max_size=max_columns, unique=True))
    return pd.DataFrame({name: draw(columns(n)) for name in names})


def _expect_clean(call):
    """Run ``call``: its result, or None if it raised an allowed error."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return call()
        except ALLOWED as exc:
            assert str(exc), f"{type(exc).__name__} without a message"
            return None


def _check_records(X, synth, n):
    """Sampled records: the training columns, n rows, released values (or the other
    label) only."""
    assert list(X.columns) == list(synth.feature_names_in_)
    assert len(X) == n
    schema = synth.aggregates_.schema
    for column in schema:
        if column.binning is not None:
            continue
        allowed = {v for v in column.decoded_values if v is not None}
        values = X[column.name]
        present = values[values.notna()] if len(values) else values
        for value in present.tolist():
            assert value in allowed or str(value) in {str(v) for v in allowed}, (
                column.name, value, allowed)


@fuzz
@given(X=frames(), epsilon=st.sampled_from([0.5, 4.0, 1e4]),
       R=st.integers(1, 3), synthesis=st.sampled_from(["marginal_matching",
                                                        "aggregate_seeded"]),
       missing=st.sampled_from(["category", "absent"]), n=st.integers(0, 20))
def test_fit_and_sample(X, epsilon, R, synthesis, missing, n):
    synth = DPMarginalSynthesizer(epsilon=epsilon, reporting_length=R, synthesis=synthesis,
                                  encoder=TableEncoder(missing=missing), random_state=0)
    fitted = _expect_clean(lambda: synth.fit(X))
    if fitted is None:
        return
    assert 1 <= fitted.reporting_length_ <= R
    records = _expect_clean(lambda: fitted.sample(n))
    if records is not None:
        _check_records(records, fitted, n)


@fuzz
@given(X=frames())
def test_table_encoder_round_trip(X):
    encoder = TableEncoder()
    codes = _expect_clean(lambda: encoder.fit_transform(X))
    if codes is None:
        return
    assert codes.shape == X.shape
    assert np.all((codes >= 0) & (codes < encoder.n_values_[None, :]))
    back = encoder.inverse_transform(codes)
    assert list(back.columns) == list(X.columns)
    assert back.columns.dtype == X.columns.dtype
    for name in X.columns:
        original, decoded = X[name], back[name]
        assert (original.isna().to_numpy() == decoded.isna().to_numpy()).all(), name
        kept = original.notna().to_numpy()
        assert [str(v) for v in original[kept]] == [str(v) for v in decoded[kept]], name


@fuzz
@given(values=st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True,
                                            width=32), st.none()),
                       min_size=1, max_size=40),
       n_bins=st.integers(1, 12), strategy=st.sampled_from(["uniform", "log", "quantile"]),
       low=st.floats(-1e6, 1e6), width=st.floats(1e-3, 1e6))
def test_discretizer(values, n_bins, strategy, low, width):
    column = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    binner = DPKBinsDiscretizer(n_bins, bounds=(low, low + width), strategy=strategy,
                                epsilon=1.0 if strategy == "quantile" else None,
                                random_state=0)
    codes = _expect_clean(lambda: binner.fit_transform(column.reshape(-1, 1)))
    if codes is None:
        return
    codes = np.asarray(codes)
    assert codes.shape[0] == column.shape[0]
    finite = np.isfinite(column)
    assert np.all(codes[finite] >= 0)


@fuzz
@given(X=frames(max_rows=20, max_columns=3), Y=frames(max_rows=20, max_columns=3),
       k=st.integers(1, 3))
def test_marginal_tvd(X, Y, k):
    Y = Y.iloc[:, :X.shape[1]]
    Y.columns = X.columns[:Y.shape[1]]
    value = _expect_clean(lambda: marginal_tvd(X, Y, k=k))
    if value is not None:
        assert 0.0 <= value <= 1.0 + 1e-12


@fuzz
@given(X=frames(max_rows=40), fmt=st.sampled_from(["json", "csv"]))
def test_aggregates_save_load(X, fmt):
    synth = _expect_clean(lambda: DPMarginalSynthesizer(epsilon=1e4, random_state=0).fit(X))
    if synth is None:
        return
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"a.{fmt}")
        synth.aggregates_.save(path)
        loaded = DPAggregates.load(path)
        assert loaded.to_dict() == synth.aggregates_.to_dict()
        assert loaded.schema.to_json() == synth.aggregates_.schema.to_json()
        assert dict(loaded.privacy) == dict(synth.aggregates_.privacy)
        assert os.listdir(folder) == [f"a.{fmt}"]


@pytest.fixture(scope="module")
def saved_release(tmp_path_factory):
    frame = pd.DataFrame({"a": ["x", "y", "z"] * 60, "b": ["u", "v"] * 90,
                          "c": list(range(6)) * 30})
    synth = DPMarginalSynthesizer(epsilon=1e3, random_state=0).fit(frame)
    folder = tmp_path_factory.mktemp("release")
    out = {}
    for fmt in ("json", "csv"):
        path = folder / f"a.{fmt}"
        synth.aggregates_.save(path)
        out[fmt] = path.read_bytes()
    return out


@fuzz
@given(fmt=st.sampled_from(["json", "csv"]), data=st.data(),
       how=st.sampled_from(["replace", "delete", "insert", "truncate"]))
def test_damaged_release_files(saved_release, fmt, data, how):
    content = bytearray(saved_release[fmt])
    at = data.draw(st.integers(0, len(content) - 1))
    byte = data.draw(st.integers(0, 255))
    if how == "replace":
        content[at] = byte
    elif how == "delete":
        del content[at]
    elif how == "insert":
        content.insert(at, byte)
    else:
        del content[at:]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"a.{fmt}")
        with open(path, "wb") as handle:
            handle.write(bytes(content))
        try:
            DPAggregates.load(path)
        except ValueError as exc:
            assert "Invalid aggregates file" in str(exc) or "Cannot read" in str(exc)


@fuzz
@given(X=frames(max_rows=25, max_columns=3),
       command=st.sampled_from(["aggregate", "synthesize"]),
       epsilon=st.sampled_from(["1", "1000"]))
def test_cli_commands(X, command, epsilon):
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "in.csv")
        X.to_csv(source, index=False)
        out = os.path.join(folder, "out.json" if command == "aggregate" else "out.csv")
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = main([command, source, "-o", out, "--epsilon", epsilon])
        err = stderr.getvalue()
        assert code in (0, 1), (code, err)
        assert "Traceback" not in err
        leftovers = [f for f in os.listdir(folder) if f.endswith(".tmp")]
        assert not leftovers
        if code == 1:
            assert err.strip() and not os.path.exists(out), err
        elif command == "aggregate":
            DPAggregates.load(out)


@fuzz
@given(X=frames(max_rows=30, max_columns=3), rename=st.booleans())
def test_score(X, rename):
    synth = _expect_clean(lambda: DPMarginalSynthesizer(epsilon=1e4, random_state=0).fit(X))
    if synth is None:
        return
    other = X.rename(columns={X.columns[0]: X.columns[0] + "?"}) if rename else X
    value = _expect_clean(lambda: synth.score(other))
    if rename:
        assert value is None
    elif value is not None:
        assert 0.0 <= value <= 1.0 + 1e-12


@fuzz
@given(X=frames(max_rows=30, max_columns=3), data=st.data(), n=st.integers(0, 30))
def test_declared_categories(X, data, n):
    name = X.columns[0]
    observed = [v for v in pd.unique(X[name].dropna())]
    extra = data.draw(st.lists(TEXT, max_size=3, unique=True))
    declared = list(dict.fromkeys(observed + [e for e in extra if e not in observed]))
    encoder = TableEncoder(categories={name: declared},
                           handle_unknown=data.draw(st.sampled_from(["error", "missing"])))
    synth = _expect_clean(lambda: DPMarginalSynthesizer(epsilon=1e3, encoder=encoder,
                                                        random_state=0).fit(X))
    if synth is None:
        return
    records = _expect_clean(lambda: synth.sample(n))
    if records is not None:
        _check_records(records, synth, n)
        present = records[name].dropna().tolist()
        assert all(v in declared or str(v) in map(str, declared) for v in present)


@fuzz
@given(fmt=st.sampled_from(["json", "csv"]), n=st.integers(0, 50),
       seed=st.integers(0, 2**32 - 1))
def test_cli_sample(saved_release, fmt, n, seed):
    with tempfile.TemporaryDirectory() as folder:
        release = os.path.join(folder, f"a.{fmt}")
        with open(release, "wb") as handle:
            handle.write(saved_release[fmt])
        out = os.path.join(folder, "out.csv")
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            code = main(["sample", release, "-o", out, "-n", str(n), "--seed", str(seed)])
        assert code == 0, stderr.getvalue()
        frame = pd.read_csv(out)
        assert len(frame) == n and list(frame.columns) == ["a", "b", "c"]
        assert not [f for f in os.listdir(folder) if f.endswith(".tmp")]
