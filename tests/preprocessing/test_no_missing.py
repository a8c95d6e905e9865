"""Columns declared without missing values (``TableEncoder(no_missing=...)``).

A public ``NOT NULL`` declaration: the column's missing code is impossible, the
workload release measures its cells as exact zeros, no synthetic record is
missing there, and input that breaks the declaration is refused.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpsynth import DPAggregates, DPMarginalSynthesizer
from dpsynth.cli import main
from dpsynth.io import Declaration
from dpsynth.preprocessing import TableEncoder
from dpsynth.release.adaptive_selection import release_workload


def _table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y", "z"], n)
    b = np.where(a == "x", rng.choice(["p", "q"], n), rng.choice(["q", "r"], n))
    c = rng.choice(["u", "v", None], n, p=[0.5, 0.4, 0.1])
    return pd.DataFrame({"a": a, "b": b, "c": c}, dtype=object)


CATEGORIES = {"a": ["x", "y", "z"], "b": ["p", "q", "r"], "c": ["u", "v"]}


def test_encoder_marks_declared_columns_without_a_missing_code():
    encoder = TableEncoder(categories=CATEGORIES, no_missing=["a", "b"]).fit(_table())
    assert [c.has_missing for c in encoder.schema_] == [False, False, True]
    possible = encoder.schema_.possible_attributes
    missing_ids = encoder.schema_.offsets[1:] - 1
    assert possible[missing_ids].tolist() == [False, False, True]
    # the default declares nothing: every column keeps its missing code
    assert all(c.has_missing for c in TableEncoder().fit(_table()).schema_)


def test_possible_cells_of_a_dense_table():
    # declared columns without missing values have no possible missing cell; an
    # undeclared column's missing code holds the values a release did not
    # publish; missing="absent" adds an empty cell, always possible
    schema = TableEncoder(categories={"a": CATEGORIES["a"], "b": CATEGORIES["b"]},
                          no_missing=["a"]).fit(_table()).schema_
    cells = schema.possible_cells()
    assert [c.tolist() for c in cells] == [[True, True, True, False],
                                           [True, True, True, True],
                                           [True] * len(cells[2])]
    absent = TableEncoder(categories=CATEGORIES, missing="absent").fit(_table()).schema_
    assert all(c.all() and c.size == k + 1
               for c, k in zip(absent.possible_cells(), absent.n_values))


def test_encoder_refuses_input_that_breaks_the_declaration():
    X = _table()
    with pytest.raises(ValueError, match="Column 'c' has missing values, but `no_missing`"):
        TableEncoder(no_missing=["c"]).fit(X)
    encoder = TableEncoder(categories=CATEGORIES, no_missing=["a"],
                           handle_unknown="missing").fit(X)
    bad = X.copy()
    bad.loc[0, "a"] = "w"
    with pytest.raises(ValueError, match="Column 'a' has a value outside its categories"):
        encoder.transform(bad)
    bad.loc[0, "a"] = None
    with pytest.raises(ValueError, match="Column 'a' has missing values"):
        encoder.transform(bad)
    assert bad.loc[0, "a"] is None  # input not modified
    with pytest.raises(ValueError, match=r"no_missing names column\(s\) \['d'\]"):
        TableEncoder(no_missing=["d"]).fit(X)
    with pytest.raises(TypeError, match="no_missing must be a list of column names"):
        TableEncoder(no_missing=[0]).fit(X)
    with pytest.raises(ValueError, match="no_missing"):  # scikit-learn's validation
        TableEncoder(no_missing="a").fit(X)


@pytest.mark.parametrize("declared", [True, False])
def test_workload_release_measures_the_impossible_cells_as_zeros(declared):
    X = _table(n=600)
    encoder = TableEncoder(categories=CATEGORIES if declared else "auto",
                           no_missing=["a", "b"])
    synth = DPMarginalSynthesizer(epsilon=2.0, encoder=encoder, random_state=0).fit(X)
    schema = synth.aggregates_.schema
    assert synth.privacy_spent_["public_universe"] is declared
    if declared:  # a declared column without missing values publishes none
        assert [c.has_missing for c in schema] == [False, False, True]
    # an undeclared column keeps its missing code: values the DP release does
    # not publish are encoded as missing
    marginals = synth.aggregates_.marginals
    assert marginals
    residuals = [m for m in marginals if m.basis == "residual"]
    possible = schema.possible_cells()
    for m in residuals:  # measured over the possible codes only: no impossible cell
        assert m.table.shape == tuple(int(possible[j].sum()) - 1 for j in m.columns)
    for m in marginals:
        if m.basis == "residual":
            continue
        for axis, j in enumerate(m.columns):
            if schema[j].has_missing:
                continue
            cells = np.take(m.table, [schema.n_values[j] - 1], axis=axis)
            assert np.all(cells == 0.0), (m.columns, j)
    synthetic = synth.sample(2000, random_state=1)
    if declared:
        assert not synthetic[["a", "b"]].isna().any().any()
        assert synthetic["c"].isna().any()  # the nullable column still gets missing values
    # the accounting does not change: the same rho with or without the declaration
    plain = DPMarginalSynthesizer(epsilon=2.0, random_state=0, encoder=TableEncoder(
        categories=CATEGORIES if declared else "auto")).fit(X)
    assert synth.privacy_spent_["rho"] == pytest.approx(plain.privacy_spent_["rho"])


def test_the_declaration_survives_a_release_file(tmp_path):
    X = _table()
    synth = DPMarginalSynthesizer(epsilon=2.0, random_state=0, encoder=TableEncoder(
        categories=CATEGORIES, no_missing=["a", "b"])).fit(X)
    path = tmp_path / "release.json"
    synth.aggregates_.save(path)
    loaded = DPAggregates.load(path)
    assert [c.has_missing for c in loaded.schema] == [False, False, True]
    sample = DPMarginalSynthesizer.from_aggregates(loaded, random_state=2).sample(1000)
    assert not sample[["a", "b"]].isna().any().any()


def test_release_workload_empty_cells_are_exact_zeros_and_checked():
    rng = np.random.default_rng(0)
    codes = np.column_stack([rng.integers(0, 3, 500), rng.integers(0, 2, 500)])
    n_values = np.array([4, 2])
    empty = [np.array([False, False, False, True]), np.zeros(2, dtype=bool)]
    release = release_workload(codes, n_values, rho=0.5, rng=1, empty_cells=empty)
    for cols, table, _ in release.measurements:
        if 0 in cols:
            assert np.all(np.take(table, [3], axis=cols.index(0)) == 0.0)
        assert np.all(table != 0.0) or 0 in cols  # elsewhere the noise is untouched
    bad = codes.copy()
    bad[0, 0] = 3
    with pytest.raises(ValueError, match="column 0 holds a code that empty_cells rules out"):
        release_workload(bad, n_values, rho=0.5, rng=1, empty_cells=empty)
    with pytest.raises(ValueError, match="empty_cells must hold one boolean array"):
        release_workload(codes, n_values, rho=0.5, rng=1, empty_cells=empty[:1])


def test_declaration_files_and_the_cli_declare_it(tmp_path, monkeypatch, capsys):
    document = {"columns": [
        {"name": "a", "kind": "categorical", "categories": ["x", "y", "z"], "no_missing": True},
        {"name": "b", "kind": "categorical", "no_missing": False}]}
    declaration = Declaration.from_dict(document)
    assert declaration.encoder_params()["no_missing"] == ["a"]
    assert Declaration.from_dict(declaration.to_dict()) == declaration
    with pytest.raises(ValueError, match='"no_missing" must be true or false'):
        Declaration.from_dict({"columns": [{"name": "a", "kind": "categorical",
                                            "no_missing": "yes"}]})

    monkeypatch.chdir(tmp_path)
    _table().to_csv("table.csv", index=False)
    Path("cats.json").write_text(json.dumps(CATEGORIES))
    code = main(["synthesize", "table.csv", "-o", "out.csv", "--categories", "cats.json",
                 "--no-missing", "a", "b", "--aggregates-out", "agg.json", "--seed", "0"])
    assert code == 0, capsys.readouterr().err
    assert [c.has_missing for c in DPAggregates.load("agg.json").schema] == [False, False, True]
    assert not pd.read_csv("out.csv")[["a", "b"]].isna().any().any()
    capsys.readouterr()
    code = main(["synthesize", "table.csv", "-o", "out2.csv", "--no-missing", "c"])
    err = capsys.readouterr().err
    assert code == 1 and "Column 'c' has missing values" in err and "Traceback" not in err
    code = main(["synthesize", "table.csv", "-o", "out2.csv", "--no-missing", "d"])
    err = capsys.readouterr().err
    assert code == 1 and "--no-missing names column(s) ['d']" in err


@pytest.mark.parametrize("synthesis", ["marginal_matching", "aggregate_seeded"])
def test_sds_release_synthesizes_no_missing_value_in_a_complete_column(synthesis):
    encoder = TableEncoder(categories=CATEGORIES, no_missing=["a", "b"])
    synth = DPMarginalSynthesizer(epsilon=2.0, release="sds", synthesis=synthesis,
                                  encoder=encoder, random_state=0).fit(_table(n=2000))
    synthetic = synth.sample(3000, random_state=1)
    assert not synthetic[["a", "b"]].isna().any().any()
    assert synthetic["c"].isna().any()


def test_dask_partitions_give_the_same_release_and_the_same_refusal():
    dd = pytest.importorskip("dask.dataframe")
    X = _table(n=2000)

    def fitted(data):
        encoder = TableEncoder(categories=CATEGORIES, no_missing=["a", "b"])
        return DPMarginalSynthesizer(epsilon=2.0, random_state=0, encoder=encoder).fit(data)

    in_memory = fitted(X)
    partitioned = fitted(dd.from_pandas(X, npartitions=3))
    assert partitioned.aggregates_.to_dict() == in_memory.aggregates_.to_dict()
    bad = X.copy()
    bad.loc[5, "a"] = None
    with pytest.raises(ValueError, match="Column 'a' has missing values"):
        fitted(dd.from_pandas(bad, npartitions=3))


def test_an_undeclared_column_declared_complete_never_synthesizes_missing_values():
    # its values are learned (some too rare to be released): they become its other
    # value, so its missing code stays impossible and no record gets it
    frame = _table(2000)
    rare = np.arange(len(frame)) % 10 == 0  # above 3.09 sigma of the undiscovered count
    frame.loc[rare, "a"] = [f"rare-{i}" for i in range(rare.sum())]
    synth = DPMarginalSynthesizer(epsilon=1.0, random_state=0,
                                  encoder=TableEncoder(no_missing=["a", "b"])).fit(frame)
    schema = synth.aggregates_.schema
    # b and c: every value found (an other code where their noisy undiscovered
    # counts cannot rule out 1% of the records: epsilon 1 on 2,000 records)
    assert schema[0].other
    assert [c.has_missing for c in schema] == [False, False, True]
    assert not schema.possible_attributes[schema.offsets[1:] - 1][:2].any()
    for seed in range(3):
        out = synth.sample(random_state=seed)
        assert out[["a", "b"]].notna().all().all()
        assert 0.05 < (out["a"] == "<other>").mean() < 0.15
        assert not (out[["b", "c"]] == "<other>").any().any()
