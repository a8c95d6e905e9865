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
    return frame, DPMarginalSynthesizer(epsilon=6.0, random_state=0).fit(frame)


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
    synth = DPMarginalSynthesizer(epsilon=1.0, random_state=0).fit(frame)
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
    row = next(i for i, line in enumerate(lines) if i > 1 and ",north," in line)
    lines[row] = lines[row].replace(",north,", ",atlantis,")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="checksum mismatch"):
        DPAggregates.load(path)


def test_binned_columns_are_labelled(tmp_path):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"age": rng.integers(0, 90, 4000), "g": rng.choice(["a", "b"], 4000)})
    synth = DPMarginalSynthesizer(
        encoder=TableEncoder(bounds={"age": (0, 99)}, n_bins=5), random_state=0).fit(frame)
    labels = {value for combination in synth.aggregates_.to_dict()
              for name, value in combination if name == "age"}
    assert labels and all(isinstance(label, str) and label.startswith("[") for label in labels)
    path = tmp_path / "binned.csv"
    synth.aggregates_.save(path)
    assert DPAggregates.load(path).to_dict() == synth.aggregates_.to_dict()
