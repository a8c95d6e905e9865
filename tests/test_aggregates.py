"""DPAggregates: views, JSON/CSV round trips, validation of malformed or tampered files."""

import json

import numpy as np
import pandas as pd
import pytest

from dpsynth import DPAggregates, DPMarginalSynthesizer
from dpsynth.preprocessing import TableEncoder


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    n = 3000
    frame = pd.DataFrame({
        "city": rng.choice(["north", "south", "east"], n),
        "age": rng.choice([20, 30, 40], n),
        "member": rng.choice([True, False], n),
        "note": pd.Series(rng.choice(["x", None], n, p=[0.7, 0.3]), dtype=object),
    })
    # "age" as categories (numeric="auto" would bin it): its values are attributes
    return frame, DPMarginalSynthesizer(release="sds", epsilon=6.0, random_state=0,
                                        encoder=TableEncoder(numeric="categorical")).fit(frame)


def test_to_dict_uses_column_order_original_types_and_none(fitted):
    frame, synth = fitted
    released = synth.aggregates_.to_dict()
    assert released
    order = list(frame.columns)
    for combination, count in released.items():
        names = [name for name, _ in combination]
        assert names == sorted(names, key=order.index)
        assert isinstance(count, int) and count >= 1
    singles = {c[0] for c in released if len(c) == 1}
    assert ("age", 20) in singles and isinstance(dict(singles)["age"], int)
    assert ("member", True) in singles
    assert ("note", None) in singles  # the missing value, released as None
    assert synth.aggregates_.n_records == synth.n_records_
    assert len(synth.aggregates_) == len(released)


def test_to_frame_has_one_row_per_combination(fitted):
    _, synth = fitted
    table = synth.aggregates_.to_frame()
    assert list(table.columns) == ["length", "count", "city", "age", "member", "note"]
    assert len(table) == len(synth.aggregates_)
    data = table[["city", "age", "member", "note"]]
    np.testing.assert_array_equal(data.notna().sum(axis=1), table["length"])
    assert (table["note"] == "<missing>").any()


@pytest.mark.parametrize("suffix", ["json", "csv"])
def test_save_load_round_trip(fitted, tmp_path, suffix):
    _, synth = fitted
    path = tmp_path / f"aggregates.{suffix}"
    synth.aggregates_.save(path)
    loaded = DPAggregates.load(path)
    assert loaded.to_dict() == synth.aggregates_.to_dict()
    assert loaded.n_records == synth.aggregates_.n_records
    assert loaded.reporting_length == 3
    assert loaded.privacy["sigmas"] == synth.privacy_spent_["sigmas"]
    assert loaded.privacy["epsilon"] == pytest.approx(6.0)
    assert not list(tmp_path.glob("*.tmp-*"))  # written atomically


def test_released_schema_holds_only_released_values(tmp_path):
    frame = pd.DataFrame({"a": ["common"] * 3000 + ["rare"], "b": ["x", "y", "z"] * 1000 + ["x"]})
    synth = DPMarginalSynthesizer(release="sds", epsilon=1.0, random_state=0).fit(frame)
    path = tmp_path / "aggregates.json"
    synth.aggregates_.save(path)
    text = path.read_text()
    assert "rare" not in text  # suppressed at level 1: never published
    assert "common" in text


def _reseal(document):
    """An edit made by someone who also recomputes the checksum (it is not a
    signature): the content checks must still catch it."""
    from dpsynth.aggregates import _checksum

    document["checksum"] = _checksum(document)
    return document


def _document(fitted, tmp_path):
    _, synth = fitted
    path = tmp_path / "aggregates.json"
    synth.aggregates_.save(path)
    return path, json.loads(path.read_text())


@pytest.mark.parametrize("tamper,match", [
    (lambda d: d.update(format="other"), "not a dpsynth aggregates file"),
    (lambda d: d.update(version=99), "unsupported version"),
    (lambda d: d["privacy"].update(epsilon=-1), "epsilon"),
    (lambda d: d["aggregates"][1]["counts"].__setitem__(0, 10**9), "not normalised"),
    (lambda d: d["aggregates"][0]["counts"].__setitem__(0, 0), "counts < 1"),
    (lambda d: d["aggregates"][1]["tuples"].__setitem__(0, [0, 1]), "one column"),
    (lambda d: d["aggregates"][0]["tuples"].__setitem__(0, [10_000]), "unknown attributes"),
    (lambda d: d["aggregates"][1]["counts"].__setitem__(0, 1.5), "integers"),
    (lambda d: d["aggregates"].pop(0), "listed by length|shape"),
    (lambda d: d["schema"]["columns"][0].pop("name"), "schema"),
    (lambda d: d.pop("privacy"), "malformed"),
])
def test_tampered_json_is_rejected(fitted, tmp_path, tamper, match):
    path, document = _document(fitted, tmp_path)
    tamper(document)
    path.write_text(json.dumps(_reseal(document)))
    with pytest.raises(ValueError, match=match):
        DPAggregates.load(path)


def test_unreleased_sub_combination_is_rejected(fitted, tmp_path):
    path, document = _document(fitted, tmp_path)
    level = document["aggregates"][0]
    # drop a 1-tuple that appears in some 2-tuple: closure is broken
    used = document["aggregates"][1]["tuples"][0][0]
    index = [t[0] for t in level["tuples"]].index(used)
    level["tuples"].pop(index)
    level["counts"].pop(index)
    path.write_text(json.dumps(_reseal(document)))
    with pytest.raises(ValueError, match="not closed"):
        DPAggregates.load(path)


@pytest.mark.parametrize("content", ["", "not json", "# {}\nlength,count\n", "[1, 2]"])
def test_garbage_files_are_rejected(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ValueError, match="Invalid aggregates file"):
        DPAggregates.load(path)
    with pytest.raises(ValueError, match="Cannot read"):
        DPAggregates.load(tmp_path / "missing.json")


def test_tampered_csv_is_rejected(fitted, tmp_path):
    _, synth = fitted
    path = tmp_path / "aggregates.csv"
    synth.aggregates_.save(path)
    lines = path.read_text().splitlines()
    row = next(i for i, line in enumerate(lines) if i > 1 and '"north"' in line)
    lines[row] = lines[row].replace('"north"', '"atlantis"')
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="checksum mismatch"):
        DPAggregates.load(path)


def test_binned_columns_are_labelled(tmp_path):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"age": rng.integers(0, 90, 4000), "g": rng.choice(["a", "b"], 4000)})
    synth = DPMarginalSynthesizer(release="sds", 
        encoder=TableEncoder(bounds={"age": (0, 99)}, n_bins=5), random_state=0).fit(frame)
    labels = {value for combination in synth.aggregates_.to_dict()
              for name, value in combination if name == "age"}
    assert labels and all(isinstance(label, str) and label.startswith("[") for label in labels)
    path = tmp_path / "binned.csv"
    synth.aggregates_.save(path)
    assert DPAggregates.load(path).to_dict() == synth.aggregates_.to_dict()


# ------------------------------------------ issue #14 items 5 and 6: files
from hypothesis import given, settings, strategies as st  # noqa: E402

from dpsynth.accounting import PrivacySpent  # noqa: E402
from dpsynth.schema import Column, Schema  # noqa: E402

_TEXT = st.one_of(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8),
                  st.sampled_from(["", "<missing>", "null", "None", "NaN", "\\", "\\n",
                                   "a,b", '"q"', "x" * 140_000]))
_VALUES = {
    "object": st.lists(_TEXT, min_size=1, max_size=5, unique=True),
    "int64": st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=5, unique=True),
    "float64": st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1,
                        max_size=5, unique_by=lambda v: v + 0.0),
    "bool": st.lists(st.booleans(), min_size=1, max_size=2, unique=True),
}


@st.composite
def releases(draw):
    """A random public schema and random closed, normalised aggregates over it."""
    names = draw(st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=4,
                          unique=True))
    missing = draw(st.sampled_from(["category", "absent"]))
    columns = []
    for name in names:
        dtype = draw(st.sampled_from(sorted(_VALUES)))
        values = draw(_VALUES[dtype])
        marker = {"object": "nan", "float64": "nan"}.get(dtype, "none")
        columns.append(Column(name, np.dtype(dtype) if dtype != "object" else np.dtype(object),
                              tuple(values), declared=draw(st.booleans()),
                              missing_marker=marker,
                              has_missing=dtype in ("object", "float64")))
    schema = Schema(tuple(columns), missing)
    n_attributes = schema.n_attributes
    column_of = schema.attribute_columns
    singles = sorted(draw(st.sets(st.integers(0, n_attributes - 1), min_size=1)))
    one = {a: draw(st.integers(1, 10**6)) for a in singles}
    pairs = [(a, b) for a in singles for b in singles if a < b and column_of[a] != column_of[b]]
    chosen = sorted(draw(st.sets(st.sampled_from(pairs), max_size=8))) if pairs else []
    tuples = [np.array([[a] for a in singles])]
    counts = [np.array([one[a] for a in singles])]
    if chosen:
        tuples.append(np.array(chosen))
        counts.append(np.array([draw(st.integers(1, min(one[a], one[b]))) for a, b in chosen]))
    privacy = PrivacySpent(draw(st.floats(0.01, 100)), draw(st.floats(1e-12, 1e-2)),
                           draw(st.floats(0, 10)))
    target = draw(st.sampled_from([None] + names))
    return DPAggregates(schema, draw(st.integers(len(tuples), 4)), tuples, counts,
                        draw(st.integers(0, 2**62)), privacy, target)


@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(release=releases(), fmt=st.sampled_from(["json", "csv"]))
def test_random_release_round_trips(tmp_path_factory, release, fmt):
    """Item 5: random schema + random aggregates -> save -> load -> identical."""
    path = tmp_path_factory.mktemp("rt") / f"release.{fmt}"
    release.save(path)
    loaded = DPAggregates.load(path)
    assert loaded.schema.to_json() == release.schema.to_json()
    assert loaded.to_dict() == release.to_dict()
    assert (loaded.n_records, loaded.reporting_length, loaded.target) == (
        release.n_records, release.reporting_length, release.target)
    assert loaded.privacy.to_dict() == release.privacy.to_dict()


def test_trailing_blank_lines_and_long_fields_read_back(fitted, tmp_path):
    _, synth = fitted
    path = tmp_path / "release.csv"
    synth.aggregates_.save(path)
    # blank lines added at the end (an editor, a concatenation) change no content
    path.write_text(path.read_text() + "\n\n")
    assert DPAggregates.load(path).to_dict() == synth.aggregates_.to_dict()


@pytest.mark.parametrize("edit,fragment", [
    (lambda d: d.update(n_records=-3), "n_records is out of range"),
    (lambda d: d.update(n_records=2.5), "n_records must be an integer"),
    (lambda d: d.update(n_records="7"), "n_records must be an integer"),
    (lambda d: d.update(reporting_length=0), "reporting_length is out of range"),
    (lambda d: d["schema"]["columns"][0].update(dtype="int64"), "schema"),
    (lambda d: d["aggregates"][0]["tuples"].__setitem__(0, [10**30]), "integers"),
    (lambda d: d["aggregates"][0]["tuples"].__setitem__(0, [99]), "unknown attributes"),
    (lambda d: d.update(target=5), "target"),
])
def test_contradicting_fields_are_refused(fitted, tmp_path, edit, fragment):
    """Item 6: edited files whose fields contradict each other (even with a
    recomputed checksum) raise one ValueError naming the field."""
    path, document = _document(fitted, tmp_path)
    edit(document)
    path.write_text(json.dumps(_reseal(document)))
    with pytest.raises(ValueError, match=f"Invalid aggregates file .*{fragment}"):
        DPAggregates.load(path)


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_any_edit_is_detected_by_the_checksum(fitted, tmp_path, fmt):
    _, synth = fitted
    path = tmp_path / f"release.{fmt}"
    synth.aggregates_.save(path)
    text = path.read_text()
    digit = next(i for i in range(len(text) - 1, 0, -1) if text[i] in "23456789")
    path.write_text(text[:digit] + str(int(text[digit]) - 1) + text[digit + 1:])
    with pytest.raises(ValueError, match="checksum mismatch"):
        DPAggregates.load(path)


@pytest.mark.parametrize("damage", [
    lambda b: b[: len(b) // 2],                       # truncated
    lambda b: b.replace(b"1", b"\x01", 1),           # a control character
    lambda b: b"\xff\xfe" + b,                        # not UTF-8
    lambda b: b.replace(b",", b'"', 1),               # an open quote
    lambda b: b + b"\x00",                            # a NUL byte
    lambda b: b"# " + b"[" * 100_000,                 # deep nesting
])
@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_byte_damage_raises_one_clear_error(fitted, tmp_path, fmt, damage):
    _, synth = fitted
    path = tmp_path / f"release.{fmt}"
    synth.aggregates_.save(path)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(ValueError, match="Invalid aggregates file|Cannot read"):
        DPAggregates.load(path)


def test_repr_describes_both_release_kinds(fitted):
    frame, synth = fitted
    text = repr(synth.aggregates_)
    assert text.startswith("DPAggregates(sds release, 4 columns, n_combinations=")
    assert f"n_records={synth.n_records_}, epsilon=6, delta=1e-09)" in text
    workload = DPMarginalSynthesizer(epsilon=6.0, random_state=0).fit(frame).aggregates_
    text = repr(workload)
    assert "n_combinations" not in text
    ways = sorted({len(m.columns) for m in workload.marginals})
    assert text.startswith(f"DPAggregates(workload release, 4 columns, "
                           f"n_marginals={len(workload.marginals)} (1-way: ")
    assert all(f"{k}-way: " in text for k in ways)


# ------------------------------------------- other values and earlier versions
DATA = __import__("pathlib").Path(__file__).parent / "data"


def test_release_files_of_version_3_still_load():
    # written by dpsynth before the other value: an undeclared column's missing code
    # also held the values its release did not publish
    workload = DPAggregates.load(DATA / "workload_release_v3.json")
    assert not any(c.other for c in workload.schema)
    assert workload.schema.n_values.tolist() == [4, 4]
    assert all(cells.all() for cells in workload.schema.possible_cells())
    out = DPMarginalSynthesizer.from_aggregates(workload, random_state=0).sample()
    assert len(out) == workload.n_records and set(out["b"].dropna()) <= {"p", "q", "r"}
    sds = DPAggregates.load(DATA / "sds_release_v3.csv")
    out = DPMarginalSynthesizer.from_aggregates(sds, synthesis="aggregate_seeded",
                                                random_state=0).sample(50)
    assert set(out["a"]) <= {"x", "y", "z"}


def test_other_values_in_csv_files_are_escaped(tmp_path):
    # rare values of one record each: too many to leave no other code
    frame = pd.DataFrame({"a": ["<other>", "x", "<missing>"] * 300
                          + [f"r{i}" for i in range(300)],
                          "b": ["u", "v", "w"] * 400}, dtype=object)
    synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(frame)
    schema = synth.aggregates_.schema
    assert set(schema[0].values) == {"<other>", "x", "<missing>"} and schema[0].other
    synth.aggregates_.save(tmp_path / "agg.csv")
    document = json.loads((tmp_path / "agg.csv").read_text().partition("\n")[0][2:])
    assert document["version"] == 4
    loaded = DPAggregates.load(tmp_path / "agg.csv")
    assert loaded.schema == schema
    assert loaded.schema.attribute_name(int(loaded.schema.offsets[0]) + 3) == ("a", "<other>")
    assert loaded._value_labels()[0][-2:] == ["<other>", "<missing>"]
    assert "\\<other>" in loaded._value_labels()[0]


def test_a_column_label_must_be_a_number_whose_text_is_the_name():
    from dpsynth.schema import Column
    entry = Column("0", np.dtype("int64"), (0, 1), declared=True, label=0).to_json()
    assert entry["label"] == 0 and Column.from_json(entry).label == 0
    for bad in (1, "0", True, [0]):
        with pytest.raises(ValueError, match="label"):
            Column.from_json({**entry, "label": bad})


@pytest.mark.parametrize("storage", ["python", "pyarrow"])
@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_a_loaded_release_gives_a_string_column_its_storage(tmp_path, storage, fmt):
    # "string" names both storages, and each pandas reads it as its own default
    # (pyarrow under pandas 3, python under 2): the release records the other one
    if storage == "pyarrow":
        pytest.importorskip("pyarrow")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"s": pd.Series(rng.choice(["a", "b", "c"], 2000),
                                     dtype=pd.StringDtype(storage)),
                      "k": rng.integers(0, 3, 2000)})
    synth = DPMarginalSynthesizer(epsilon=4, random_state=0).fit(X)
    path = tmp_path / f"release.{fmt}"
    synth.aggregates_.save(path)
    loaded = DPMarginalSynthesizer.from_aggregates(DPAggregates.load(path), random_state=0)
    assert loaded.sample()["s"].dtype == synth.sample()["s"].dtype == X["s"].dtype
    pd.testing.assert_frame_equal(loaded.sample(), synth.sample())
