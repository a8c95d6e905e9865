"""Tests of the ``dpsynth`` command line (dpsynth.cli)."""

import io
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpsynth import DPAggregates, DPMarginalSynthesizer
from dpsynth import cli
from dpsynth.cli import _common, main
from dpsynth.cli._progress import show_progress
from dpsynth.utils._progress import log_progress

BOUNDS = ["--bounds", "age=0:100", "income=0.0:200000"]


@pytest.fixture(scope="module")
def table_csv(tmp_path_factory):
    """300 records: two related categorical columns, an integer and a float column."""
    rng = np.random.default_rng(0)
    n = 300
    color = rng.choice(["red", "green", "blue"], n)
    size = np.where(color == "red", rng.choice(["S", "M"], n), rng.choice(["M", "L"], n))
    frame = pd.DataFrame({"color": color, "size": size,
                          "age": rng.integers(18, 90, n),
                          "income": rng.gamma(2.0, 20000.0, n).round(2)})
    path = tmp_path_factory.mktemp("data") / "table.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def no_plots(monkeypatch):
    """Reports without plots (fast): tests/test_report.py covers the plots."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, err, command, *fragments):
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"dpsynth {command}: error: ")
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0]


def listing(folder):
    return sorted(p.name for p in Path(folder).iterdir())


# ------------------------------------------------------------- synthesize
def test_synthesize_writes_records_and_aggregates(capsys, work, table_csv):
    code, out, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS,
                         "--aggregates-out", "agg.json", "--n-samples", 120, "--seed", 0)
    assert code == 0, err
    synthetic = pd.read_csv("out.csv")
    assert list(synthetic.columns) == ["color", "size", "age", "income"]
    assert len(synthetic) == 120
    # values are drawn inside the public bounds (DP noise may add missing cells)
    assert synthetic["income"].dropna().between(0, 200000).all()
    assert synthetic["age"].dropna().between(0, 100).all()
    aggregates = DPAggregates.load("agg.json")
    assert aggregates.column_names == ["color", "size", "age", "income"]
    assert "privacy spent: epsilon 4," in out
    assert "wrote 120 synthetic records to out.csv" in out
    assert listing(work) == ["agg.json", "out.csv"]


def test_synthesize_default_size_and_options(capsys, work, table_csv):
    code, out, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS,
                         "--epsilon", 8, "--delta", 1e-6, "--reporting-length", 2,
                         "--n-bins", 5, "--aggregates-out", "agg.json", "--seed", 1)
    assert code == 0, err
    aggregates = DPAggregates.load("agg.json")
    assert aggregates.reporting_length == 2
    assert aggregates.privacy["epsilon"] == 8
    assert aggregates.privacy["delta"] == 1e-6
    assert len(aggregates.schema[2].values) == 5  # age in 5 bins
    assert len(pd.read_csv("out.csv")) == aggregates.n_records
    assert "epsilon 8, delta 1e-06" in out


def test_synthesize_seed_is_reproducible(capsys, work, table_csv):
    for name in ("a.csv", "b.csv"):
        assert run(capsys, "synthesize", table_csv, "-o", name, *BOUNDS, "--seed", 7)[0] == 0
    assert Path("a.csv").read_bytes() == Path("b.csv").read_bytes()


def test_categories_file_makes_the_universe_public(capsys, work, table_csv):
    Path("cats.json").write_text(json.dumps(
        {"color": ["red", "green", "blue", "purple"], "size": ["S", "M", "L"]}))
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS,
                       "--categories", "cats.json", "--aggregates-out", "agg.json")
    assert code == 0, err
    aggregates = DPAggregates.load("agg.json")
    assert aggregates.privacy["public_universe"] is True
    assert aggregates.schema[0].values == ("red", "green", "blue", "purple")


def test_categories_declare_the_column_type(capsys, work):
    pd.DataFrame({"rooms": [1, 2, 3, 4] * 50, "zip": ["02139", "10001"] * 100}).to_csv(
        "in.csv", index=False)
    Path("cats.json").write_text(json.dumps({"rooms": [1, 2, 3, 4, 5],
                                             "zip": ["02139", "10001", "94110"]}))
    code, _, err = run(capsys, "synthesize", "in.csv", "-o", "out.csv", "--seed", 0,
                       "--categories", "cats.json", "--aggregates-out", "agg.json")
    assert code == 0, err
    columns = DPAggregates.load("agg.json").schema
    assert columns[0].values == (1, 2, 3, 4, 5)  # JSON numbers: a numeric column
    assert columns[1].values == ("02139", "10001", "94110")  # text stays text
    text = pd.read_csv("out.csv", dtype=str, keep_default_na=False)
    assert set(text["zip"]) <= {"02139", "10001", "94110"}  # leading zeros kept
    assert set(text["rooms"]) <= {"1", "2", "3", "4", "5"}


def test_na_values_make_a_numeric_column(capsys, work):
    rng = np.random.default_rng(1)
    hours = rng.integers(0, 60, 400).astype(object)
    hours[rng.random(400) < 0.4] = "N"
    pd.DataFrame({"hours": hours, "job": rng.choice(["a", "b"], 400)}).to_csv(
        "in.csv", index=False)
    code, _, err = run(capsys, "synthesize", "in.csv", "-o", "out.csv",
                       "--bounds", "hours=0:60", "--seed", 0)
    assert_one_line_error(code, err, "synthesize", "'hours'")  # "N" makes it text

    code, _, err = run(capsys, "synthesize", "in.csv", "-o", "out.csv",
                       "--bounds", "hours=0:60", "--na-values", "N", "--seed", 0)
    assert code == 0, err
    text = pd.read_csv("out.csv", dtype=str, keep_default_na=False)["hours"]
    assert (text == "").any()  # missing values are synthesized as missing
    values = text[text != ""]
    assert values.str.fullmatch(r"\d+").all()  # integers, not "12.0"
    assert values.astype(int).between(0, 60).all()


def test_missing_absent_option(capsys, work, table_csv):
    code, _, err = run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS,
                       "--missing", "absent")
    assert code == 0, err
    assert DPAggregates.load("agg.json").encoder.missing == "absent"


def test_quantile_binning_spends_its_own_budget(capsys, work, table_csv):
    code, out, err = run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS,
                         "--binning", "quantile", "--binning-epsilon", 0.5, "--n-bins", 4)
    assert code == 0, err
    assert DPAggregates.load("agg.json").privacy["epsilon_binning"] == pytest.approx(0.5)
    assert "epsilon 0.5 for DP bin edges" in out


@pytest.mark.parametrize("options, fragment", [
    (["--binning", "quantile"], "--binning-epsilon"),
    (["--binning-epsilon", "1"], "only used with --binning quantile"),
])
def test_quantile_binning_option_errors(capsys, work, table_csv, options, fragment):
    code, _, err = run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS, *options)
    assert_one_line_error(code, err, "aggregate", fragment)
    assert listing(work) == []


def test_many_valued_integer_column_prints_nothing_data_dependent(capsys, work, table_csv):
    # the console output of a release must not depend on the data: no note
    # about how many distinct values a column holds
    code, _, err = run(capsys, "aggregate", table_csv, "-o", "agg.json",
                       "--bounds", "income=0.0:200000")
    assert code == 0, err
    # a note that none of its values was released is a DP output (the values
    # released), with the public threshold, and so is the note that the threshold is
    # a large share of the DP record count; nothing counts its distinct values
    # (a run without a seed: which of these notes a draw gives is itself a DP output,
    # e.g. the DP ranges' note when the DP record count falls below 40 range sigmas)
    notes = ("dpsynth: warning: No value of the column(s) ['age'] was released",
             "dpsynth: warning: At epsilon=4, delta=1e-09, a value of an undeclared column "
             "is released only when its noisy count clears",
             "dpsynth: warning: The DP ranges of the numeric column(s) 'age' are unreliable",
             "dpsynth: warning: The release at epsilon=4, delta=1e-09 is dominated by its noise")
    assert all(line.startswith(notes) for line in err.splitlines()), err
    assert len(err.splitlines()) <= len(notes)


# ----------------------------------------------------- aggregate and sample
@pytest.mark.parametrize("name", ["agg.json", "agg.csv"])
def test_aggregate_then_sample(capsys, work, table_csv, name):
    code, out, err = run(capsys, "aggregate", table_csv, "-o", name, *BOUNDS, "--seed", 0)
    assert code == 0, err
    assert f"wrote the DP aggregates to {name}" in out
    assert Path(name).read_text().startswith("# " if name.endswith(".csv") else "{")

    code, out, err = run(capsys, "sample", name, "-n", 50, "-o", "out.csv", "--seed", 3)
    assert code == 0, err
    synthetic = pd.read_csv("out.csv")
    assert synthetic.shape == (50, 4)
    assert set(synthetic["color"].dropna()) <= {"red", "green", "blue"}
    assert "sampling spends no more" in out
    assert listing(work) == sorted([name, "out.csv"])


def test_sample_defaults_to_the_dp_record_count(capsys, work, table_csv):
    assert run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS)[0] == 0
    code, _, err = run(capsys, "sample", "agg.json", "-o", "out.csv")
    assert code == 0, err
    assert len(pd.read_csv("out.csv")) == DPAggregates.load("agg.json").n_records


def test_sample_where_conditions_every_record(capsys, work, table_csv):
    assert run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS, "--seed", 0)[0] == 0
    code, out, err = run(capsys, "sample", "agg.json", "-n", 200, "-o", "out.csv",
                         "--where", "color=red", "--where", "color=blue",
                         "--where", "age=30:60", "--seed", 1)
    assert code == 0, err
    synthetic = pd.read_csv("out.csv")
    assert len(synthetic) == 200 and "wrote 200 synthetic records" in out
    assert set(synthetic["color"]) <= {"red", "blue"}
    assert synthetic["age"].between(30, 60).all()
    code, _, err = run(capsys, "sample", "agg.json", "-o", "all.csv", "--where", "color=red")
    assert code == 0, err
    share = len(pd.read_csv("all.csv")) / DPAggregates.load("agg.json").n_records
    assert 0.15 < share < 0.5  # the model's matching records (about a third)
    code, _, err = run(capsys, "sample", "agg.json", "-o", "bad.csv", "--where", "color=pink")
    assert_one_line_error(code, err, "sample", "'pink'", "available")
    code, _, err = run(capsys, "sample", "agg.json", "-o", "bad.csv", "--where", "age=x:3")
    assert_one_line_error(code, err, "sample", "is not a number")
    code, _, err = run(capsys, "sample", "agg.json", "-o", "bad.csv", "--where", "colour")
    assert_one_line_error(code, err, "sample", "COL=VALUE")
    assert not Path("bad.csv").exists()


def test_sample_where_on_object_columns_of_a_python_release(capsys, work):
    # a release fitted in Python on object columns of date and time objects: --where
    # takes ISO text for them (a range or a value), and a clear error otherwise
    import datetime

    rng = np.random.default_rng(0)
    days = rng.integers(0, 120, 2000)
    X = pd.DataFrame({
        "day": pd.Series([datetime.date(2021, 1, 1) + datetime.timedelta(days=int(d))
                          for d in days], dtype=object),
        "utc": pd.Series([pd.Timestamp("2021-01-01", tz="UTC") + pd.Timedelta(hours=int(h))
                          for h in rng.integers(0, 24 * 90, 2000)], dtype=object),
        "kind": rng.choice(["a", "b"], 2000)})
    DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(X).aggregates_.save("agg.json")
    code, _, err = run(capsys, "sample", "agg.json", "-n", 100, "-o", "out.csv", "--seed", 1,
                       "--where", "day=2021-02-01:2021-02-28", "--where", "utc=2021-02-01:")
    assert code == 0, err
    synthetic = pd.read_csv("out.csv")
    assert synthetic["day"].between("2021-02-01", "2021-02-28").all()
    assert (pd.to_datetime(synthetic["utc"]) >= pd.Timestamp("2021-02-01", tz="UTC")).all()
    code, _, err = run(capsys, "sample", "agg.json", "-o", "bad.csv", "--where", "day=soon")
    assert_one_line_error(code, err, "sample", "ISO date or time", "'object:date'")


def test_schema_constraints_hold_in_synthesize_and_sample(capsys, work, table_csv):
    schema = {"columns": [{"name": "age", "kind": "numeric", "dtype": "int64",
                           "bounds": [0, 100]},
                          {"name": "income", "kind": "numeric", "dtype": "float64",
                           "bounds": [0, 200000]}],
              "constraints": [{"kind": "forbidden_combinations", "columns": ["color", "size"],
                               "combinations": [["red", "M"]]},
                              {"kind": "range", "column": "age", "low": 20, "high": 80}]}
    Path("schema.json").write_text(json.dumps(schema))
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "syn.csv", "--schema",
                       "schema.json", "-n", 500, "--aggregates-out", "agg.json", "--seed", 0)
    assert code == 0, err
    code, _, err = run(capsys, "sample", "agg.json", "-o", "more.csv", "-n", 500,
                       "--schema", "schema.json")
    assert code == 0, err
    for name in ("syn.csv", "more.csv"):
        synthetic = pd.read_csv(name)
        assert not ((synthetic["color"] == "red") & (synthetic["size"] == "M")).any()
        assert synthetic["age"].between(20, 80).all()
    schema["constraints"] = [{"kind": "inequality", "low": "age"}]
    Path("bad.json").write_text(json.dumps(schema))
    code, _, err = run(capsys, "sample", "agg.json", "-o", "bad.csv", "--schema", "bad.json")
    assert_one_line_error(code, err, "sample", "constraint 0", "unknown field")


def test_sample_threads_give_the_same_records(capsys, work, table_csv):
    assert run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS, "--seed", 0)[0] == 0
    for jobs, output in (("1", "one.csv"), ("2", "two.csv")):
        code, _, err = run(capsys, "sample", "agg.json", "-n", 60_000, "-j", jobs,
                           "-o", output, "--seed", 1)
        assert code == 0, err
    pd.testing.assert_frame_equal(pd.read_csv("one.csv"), pd.read_csv("two.csv"))
    code, _, err = run(capsys, "sample", "agg.json", "-j", 0, "-o", "zero.csv")
    assert_one_line_error(code, err, "sample", "-j/--n-jobs must be a non-zero integer")
    assert not Path("zero.csv").exists()


def test_sample_joins_a_target_column(capsys, work):
    from dpsynth import DPMarginalSynthesizer

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(["x", "y"], 300)})
    y = pd.Series(rng.choice(["no", "yes"], 300), name="label")
    DPMarginalSynthesizer(random_state=0).fit(X, y).aggregates_.save("agg.json")
    code, _, err = run(capsys, "sample", "agg.json", "-n", 20, "-o", "out.csv")
    assert code == 0, err
    assert list(pd.read_csv("out.csv").columns) == ["a", "label"]


# --------------------------------------------------------------- evaluate
def _synthesize(capsys, table_csv):
    assert run(capsys, "synthesize", table_csv, "-o", "synth.csv", *BOUNDS, "--seed", 0)[0] == 0


def test_evaluate_prints_metrics(capsys, work, table_csv):
    _synthesize(capsys, table_csv)
    code, out, err = run(capsys, "evaluate", table_csv, "synth.csv", *BOUNDS)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1].split() == ["1-way", "2-way", "3-way"]
    tvd = [float(v) for v in next(l for l in lines if l.startswith("mean TVD")).split()[2:]]
    assert len(tvd) == 3 and all(0 < v < 1 for v in tvd)
    assert any(l.startswith("suppressed combinations") for l in lines)
    assert any(l.startswith("fabricated combinations") for l in lines)
    assert "k-marginal score (NIST CRC, 2-way):" in out
    assert "not a DP release" in out


def test_evaluate_identical_tables(capsys, work, table_csv):
    code, out, err = run(capsys, "evaluate", table_csv, table_csv, *BOUNDS,
                         "--reporting-length", 2)
    assert code == 0, err
    assert "mean TVD                     0.0000   0.0000" in out
    assert "1000.0 / 1000" in out


def test_evaluate_writes_a_report(capsys, work, table_csv, no_plots):
    _synthesize(capsys, table_csv)
    code, out, err = run(capsys, "evaluate", table_csv, "synth.csv", *BOUNDS,
                         "--report", "report.html", "--title", "My <run>")
    assert code == 0, err
    page = Path("report.html").read_text()
    assert "<h1>My &lt;run&gt;</h1>" in page
    assert "mean TVD" in page
    assert "wrote the report to report.html" in out
    assert listing(work) == ["report.html", "synth.csv"]


def test_evaluate_says_when_it_samples_the_column_sets(capsys, work, no_plots):
    # 33 columns: 5,456 sets of 3 (> MAX_SUBSETS); a 300-column CSV has 4.5 million
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.choice(["a", "b"], (60, 33)), columns=[f"c{j}" for j in range(33)])
    frame.to_csv("real.csv", index=False)
    frame.sample(frac=1, random_state=1).to_csv("fake.csv", index=False)
    code, out, err = run(capsys, "evaluate", "real.csv", "fake.csv", "--report", "r.html")
    assert code == 0, err
    assert ("(marginals, score and combinations compared on a seeded uniform sample of the "
            "column sets (3-way: 5,000 of the 5,456 sets of 3 columns))") in out
    assert "5,000 of the 5,456 sets of 3 columns" in Path("r.html").read_text()


def test_evaluate_compares_the_columns_both_tables_hold(capsys, work, table_csv):
    pd.read_csv(table_csv).drop(columns="size").to_csv("synth.csv", index=False)
    code, out, err = run(capsys, "evaluate", table_csv, "synth.csv", *BOUNDS)
    assert code == 0, err
    assert "3 columns" in out
    assert err == (f"dpsynth evaluate: note: comparing the 3 column(s) both tables hold; "
                   f"left out size (only in {table_csv})\n")
    code, _, err = run(capsys, "evaluate", table_csv, "synth.csv", *BOUNDS,
                       "--columns", "color,size")
    assert_one_line_error(code, err, "evaluate", "--columns names column(s) ['size'] that "
                          "synth.csv does not have")
    code, _, err = run(capsys, "evaluate", table_csv, "synth.csv", *BOUNDS, "--drop", "zzz")
    assert_one_line_error(code, err, "evaluate", "--drop names column(s) ['zzz'] that "
                          "neither")
    code, _, err = run(capsys, "evaluate", table_csv, "synth.csv", "--bounds",
                       "income=0.0:200000", "--columns", "color,income")
    assert code == 0, err
    assert err == ""


@pytest.mark.parametrize("drop", [[], ["--drop", "rownames"]])
@pytest.mark.parametrize("through_release", [False, True])
def test_evaluate_after_synthesize_with_drop(capsys, work, table_csv, drop,
                                             through_release):
    # the real table keeps the identifier the synthesizing command dropped
    frame = pd.read_csv(table_csv)
    frame.insert(0, "rownames", np.arange(len(frame)))
    frame.to_csv("real.csv", index=False)
    code, _, err = run(capsys, "synthesize", "real.csv", "-o", "synth.csv", *BOUNDS,
                       "--drop", "rownames", "--aggregates-out", "agg.json", "--seed", 0)
    assert code == 0, err
    how = ["--aggregates", "agg.json"] if through_release else BOUNDS
    code, out, err = run(capsys, "evaluate", "real.csv", "synth.csv", *how, *drop)
    assert code == 0, err
    assert "4 columns" in out and "mean TVD" in out
    assert ("left out rownames (only in real.csv)" in err) == (not drop)


def test_a_target_is_declared_and_its_marginals_selected_first(capsys, work):
    # a rare flag decides the target; --target makes the release measure them together
    rng = np.random.default_rng(0)
    n = 3000
    frame = pd.DataFrame({f"c{k}": rng.choice(list("abcd"), n) for k in range(6)})
    for k in range(1, 6, 2):
        frame[f"c{k}"] = np.where(rng.random(n) < 0.8, frame[f"c{k - 1}"], frame[f"c{k}"])
    frame["flag"] = np.where(rng.random(n) < 0.05, "yes", "no")
    frame.insert(2, "label", np.where(frame["flag"] == "yes",
                                      np.where(rng.random(n) < 0.9, "bad", "good"),
                                      np.where(rng.random(n) < 0.05, "bad", "good")))
    frame.to_csv("real.csv", index=False)
    before = open("real.csv").read()
    releases = {}
    for name, extra in (("plain", []), ("target", ["--target", "label"])):
        code, out, err = run(capsys, "synthesize", "real.csv", "-o", f"{name}.csv",
                             "--aggregates-out", f"{name}.json", "--seed", 0, *extra)
        assert code == 0, err
        releases[name] = json.loads(open(f"{name}.json").read())
    assert open("real.csv").read() == before
    assert releases["target"]["target"] == "label" and releases["plain"]["target"] is None
    out = pd.read_csv("target.csv")
    assert list(out.columns) == [c for c in frame.columns if c != "label"] + ["label"]
    assert set(out["label"]) == {"bad", "good"}

    def holding(document):
        sets = [m["columns"] for m in document["marginals"]]  # column names
        return [s for s in sets if "label" in s and len(s) > 1]

    assert len(holding(releases["target"])) > len(holding(releases["plain"]))
    assert any("flag" in s for s in holding(releases["target"]))
    # a target the table does not hold, or that --drop leaves out: named, nothing written
    for extra, message in ((["--target", "nope"], "not among the columns read"),
                           (["--target", "label", "--drop", "label"], "--drop leaves out")):
        code, _, err = run(capsys, "synthesize", "real.csv", "-o", "bad.csv", *extra)
        assert code != 0 and message in err and "'" in err
        assert not os.path.exists("bad.csv")


def test_evaluate_reads_a_number_spelt_two_ways_as_one_value(capsys, work):
    # pandas writes whole numbers beside NaN as "2.0"; dpsynth's synthetic file (or a
    # file another tool wrote) spells them "2": one value, not two categories (the
    # score column's 1-way TVD was 1.0)
    rng = np.random.default_rng(0)
    score = np.where(rng.random(400) < 0.1, np.nan, rng.integers(0, 5, 400))
    real = pd.DataFrame({"score": score,
                         "code": rng.choice(["007", "7", "12"], 400, p=[0.5, 0.3, 0.2])})
    real.to_csv("real.csv", index=False)
    assert "2.0" in open("real.csv").read()
    with open("synth.csv", "w") as handle:
        handle.write("score,code\n" + "".join(
            f"{'' if np.isnan(v) else int(v)},{c}\n" for v, c in zip(score, real["code"])))
    code, out, err = run(capsys, "evaluate", "real.csv", "synth.csv",
                         "--reporting-length", 1)
    assert code == 0, err
    assert "mean TVD                     0.0000" in out
    # codes with leading zeros stay as written: "007" and "7" are two values
    real.assign(code=real["code"].map({"007": "7", "7": "007", "12": "12"})).to_csv(
        "codes.csv", index=False)
    code, out, err = run(capsys, "evaluate", "real.csv", "codes.csv",
                         "--reporting-length", 1)
    assert code == 0, err
    assert "mean TVD                     0.0000" not in out


def test_evaluate_reads_numbers_in_a_format_and_beside_a_few_texts(capsys, work):
    # a spreadsheet's export (decimal commas, ";"), an amount with "-" for missing: the
    # synthetic file spells them as dpsynth synthesize writes them ("12,5" or "12");
    # they were compared as text, each value a category (1-way TVD 0.93 on a
    # table whose release, through --aggregates, gave 0.019)
    rng = np.random.default_rng(0)
    n = 600
    price = np.round(rng.gamma(2.0, 20.0, n), 1)
    count = rng.integers(0, 4, n).astype(float)
    capital = np.round(rng.gamma(2.0, 100.0, n), 2).astype(object)
    capital[rng.random(n) < 0.05] = "-"
    real = pd.DataFrame({"price": price, "count": count, "capital": capital})
    real.to_csv("real.csv", sep=";", decimal=",", index=False)
    assert "2,0" in open("real.csv").read()
    same = real.sample(frac=1.0, random_state=1)
    with open("synth.csv", "w") as handle:
        handle.write("price,count,capital\n" + "".join(
            f'"{str(p).replace(".", ",")}",{int(c)},{v}\n' for p, c, v in
            zip(same["price"], same["count"], same["capital"])))
    code, out, err = run(capsys, "evaluate", "real.csv", "synth.csv", "--reporting-length", 1)
    assert code == 0, err
    assert "mean TVD                     0.0000" in out
    assert err.endswith("many values): price, capital\n")
    shifted = same.assign(price=same["price"] * 3)
    with open("shifted.csv", "w") as handle:
        handle.write("price,count,capital\n" + "".join(
            f'"{str(p).replace(".", ",")}",{int(c)},{v}\n' for p, c, v in
            zip(shifted["price"], shifted["count"], shifted["capital"])))
    code, out, err = run(capsys, "evaluate", "real.csv", "shifted.csv",
                         "--reporting-length", 1)
    assert code == 0, err
    assert float(next(line for line in out.splitlines()
                      if line.startswith("mean TVD")).split()[2]) > 0.15


def test_evaluate_bins_undeclared_many_valued_numbers_and_dates_by_real_quantiles(
        capsys, work, table_csv):
    # nothing declared: the command that made synth.csv needed nothing either
    frame = pd.read_csv(table_csv)
    rng = np.random.default_rng(1)
    days = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 900, len(frame)), "D")
    frame["opened"] = days.strftime("%Y-%m-%d")
    frame.loc[::10, "income"] = np.nan
    frame.to_csv("real.csv", index=False)
    code, out, err = run(capsys, "evaluate", "real.csv", "real.csv")
    assert code == 0, err
    assert err == ("dpsynth evaluate: note: compared by the real table's 10 quantiles (not "
                   "declared, many values): age, income, opened\n")
    # a wide table: the note names ten columns and counts the rest
    wide = pd.concat([frame[["income"]].add_suffix(f"_{k}") for k in range(12)], axis=1)
    wide.to_csv("wide.csv", index=False)
    code, out, err = run(capsys, "evaluate", "wide.csv", "wide.csv")
    assert code == 0, err
    assert err.endswith("income_8, income_9 and 2 more\n")
    assert "mean TVD                     0.0000   0.0000   0.0000" in out
    # a synthetic table of the same distribution is close; one shifted is far; fields
    # that are no number keep their text (a category of their own)
    synth = frame.sample(frac=1.0, replace=True, random_state=2)
    synth.to_csv("same.csv", index=False)
    shifted = frame.assign(income=frame["income"] * 3, opened="2031-05-05",
                           age=frame["age"].astype(object))
    shifted.loc[:4, "age"] = "n/a"
    shifted.to_csv("shifted.csv", index=False)
    tvd = {}
    for name in ("same", "shifted"):
        code, out, err = run(capsys, "evaluate", "real.csv", f"{name}.csv",
                             "--reporting-length", 1)
        assert code == 0, err
        tvd[name] = float(next(l for l in out.splitlines()
                               if l.startswith("mean TVD")).split()[2])
    assert tvd["same"] < 0.05 < 0.2 < tvd["shifted"]
    # declared bounds still win for the columns they name
    code, _, err = run(capsys, "evaluate", "real.csv", "real.csv", *BOUNDS)
    assert code == 0 and err.endswith("many values): opened\n")


# ------------------------------------------------------------------- demo
def test_demo(capsys, work):
    code, out, err = run(capsys, "demo")
    assert code == 0, err
    assert "1797 handwritten digits" in out
    assert "privacy spent: epsilon 4, delta" in out
    assert "zCDP rho" in out
    rows = {line.split("  ")[1]: [float(v) for v in line.split()[-3:]]
            for line in out.splitlines()
            if "dpsynth synthetic data" in line or "independent columns" in line}
    ours = rows["dpsynth synthetic data (epsilon 4)"]
    baseline = rows["independent columns (baseline, not private)"]
    assert all(0 <= v < 1 for v in ours + baseline)
    assert ours[1] < baseline[1] and ours[2] < baseline[2]  # it learned the relations
    assert listing(work) == []


def test_demo_report(capsys, work, no_plots):
    code, out, err = run(capsys, "demo", "--epsilon", 2, "--seed", 1, "--report", "demo.html")
    assert code == 0, err
    assert "epsilon 2" in out
    page = Path("demo.html").read_text()
    assert "<h2>Privacy</h2>" in page and "rho" in page


# --------------------------------------------------------------- progress
def test_verbose_shows_progress_lines(capsys, work, table_csv):
    code, out, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS, "-v")
    assert code == 0, err
    assert "releasing the DP aggregates" in err and "noisy marginals" in err
    assert "sampled" in err
    # seeded: a small table's DP contribution bound may come out 0 and stop the levels
    code, out, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS, "-v",
                         "--release", "sds", "--force", "--seed", "0")
    assert code == 0, err
    assert "length 1:" in err and "length 3:" in err and "sampled" in err
    assert "[DPMarginalSynthesizer]" not in err + out
    assert "contribution bound" not in out and "sampled" not in out  # stdout: results

    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS, "--force")
    assert code == 0
    assert err == ""  # off a terminal, progress stays quiet


def test_progress_handler_is_removed_after_the_command(capsys, work, table_csv):
    logger = logging.getLogger("dpsynth")
    handlers, level, propagate = list(logger.handlers), logger.level, logger.propagate
    assert run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS, "-v")[0] == 0
    assert (logger.handlers, logger.level, logger.propagate) == (handlers, level, propagate)


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _feed(verbose, stream):
    with show_progress(verbose, stream) as handler:
        log_progress(1, 3, "marginals", "length 1: contribution bound 3, 9 released")
        log_progress(2, 3, "marginals", "length 2: 12 candidates, contribution bound 2, "
                     "7 released")
        bar = handler.bar
        log_progress(1, 2, "sampling", "sampled 10 of 20 records")
        return bar, handler.bar


def test_progress_bar_on_a_terminal():
    pytest.importorskip("tqdm")
    stream = _Terminal()
    marginals, sampling = _feed(False, stream)
    assert (marginals.n, marginals.total) == (2, 3)
    assert (sampling.n, sampling.total) == (1, 2)  # a new label starts a new bar
    shown = stream.getvalue()
    assert "marginals:" in shown and "/3" in shown and "sampling:" in shown
    assert "contribution bound" not in shown.replace("length 1: contribution bound", "")


def test_progress_bar_restarts_when_the_total_changes():
    pytest.importorskip("tqdm")
    with show_progress(False, _Terminal()) as handler:
        log_progress(1, 4, "sampling", "population 1 of 4")
        first = handler.bar
        log_progress(2, 4, "sampling", "population 2 of 4")
        assert handler.bar is first and first.n == 2
        log_progress(1, 3, "sampling", "sampled 1 of 3 chunks")
        assert handler.bar is not first and handler.bar.total == 3


def test_progress_bar_with_verbose_lines():
    pytest.importorskip("tqdm")
    stream = _Terminal()
    _feed(True, stream)
    assert "length 1: contribution bound 3, 9 released\n" in stream.getvalue()
    assert "sampled 10 of 20 records\n" in stream.getvalue()


def test_progress_without_tqdm_is_quiet_unless_verbose(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    stream = _Terminal()
    _feed(False, stream)
    assert stream.getvalue() == ""
    _feed(True, stream)
    assert stream.getvalue() == ("length 1: contribution bound 3, 9 released\n"
                                 "length 2: 12 candidates, contribution bound 2, 7 released\n"
                                 "sampled 10 of 20 records\n")


def test_progress_off_a_terminal_is_quiet():
    stream = io.StringIO()
    marginals, _ = _feed(False, stream)
    assert marginals is None and stream.getvalue() == ""


# -------------------------------------------------------------- bad input
@pytest.mark.parametrize("argv, command", [
    (["synthesize", "nope.csv", "-o", "out.csv"], "synthesize"),
    (["aggregate", "nope.csv", "-o", "agg.json"], "aggregate"),
    (["evaluate", "nope.csv", "nope.csv"], "evaluate"),
])
def test_missing_input_file(capsys, work, argv, command):
    code, _, err = run(capsys, *argv)
    assert_one_line_error(code, err, command, "input file not found: nope.csv")
    assert listing(work) == []


def test_missing_aggregates_file(capsys, work):
    code, _, err = run(capsys, "sample", "nope.json", "-o", "out.csv")
    assert_one_line_error(code, err, "sample", "aggregates file not found: nope.json")


def test_invalid_aggregates_file(capsys, work):
    Path("agg.json").write_text('{"format": "something else"}')
    code, _, err = run(capsys, "sample", "agg.json", "-o", "out.csv")
    assert_one_line_error(code, err, "sample", "Invalid aggregates file")
    assert listing(work) == ["agg.json"]


def test_a_csv_in_another_encoding_is_read_with_encoding(capsys, work):
    rng = np.random.default_rng(0)
    text = "name,city,amount\n" + "".join(
        f"{rng.choice(['José', 'Zoë', 'Ana'])},{rng.choice(['München', 'Köln'])},"
        f"{rng.integers(1, 99)}\n" for _ in range(300))
    Path("excel.csv").write_bytes(text.encode("cp1252"))  # as Excel saves it on Windows
    code, _, err = run(capsys, "synthesize", "excel.csv", "-o", "out.csv", "--seed", "0")
    assert_one_line_error(code, err, "synthesize",
                          "excel.csv is not UTF-8 text; save it as UTF-8 CSV, or give its "
                          "encoding with --encoding")
    code, _, err = run(capsys, "synthesize", "excel.csv", "-o", "out.csv", "--seed", "0",
                       "--encoding", "cp1252", "--aggregates-out", "agg.json")
    assert code == 0, err
    out = pd.read_csv("out.csv")  # written as UTF-8
    assert set(out["name"]) <= {"José", "Zoë", "Ana", "<other>"} and "José" in set(out["name"])
    # evaluate: --encoding is the real table's; the synthetic one dpsynth wrote is UTF-8
    code, report, err = run(capsys, "evaluate", "excel.csv", "out.csv", "--encoding", "cp1252")
    assert code == 0, err
    with pytest.raises(SystemExit) as exit_info:  # a usage error, as argparse reports it
        run(capsys, "synthesize", "excel.csv", "-o", "x.csv", "--encoding", "nope")
    assert exit_info.value.code == 2
    assert "unknown text encoding 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("content, fragment", [
    (b"\xff\xfe\x00\x81\x9f binary \x00\x00", "in.csv is not UTF-8 text"),
    (b"a,b\n1,2\n3,4,5,6\n", "in.csv, line 3: the record has more fields than the "
                              "header row (2, separated by ','); quote the fields that hold "
                              "the separator, or give the file's separator with --sep"),
    (b"a,b\n1,2\n3\n", "in.csv, line 3: the record has fewer fields"),
    (b'a,b\n1,"2\n', "cannot read in.csv as CSV"),
    (b"", "in.csv is empty"),
    (b"a,a\n1,2\n", "names column(s) ['a'] more than once"),
    (b"1,2\n3,4\n", "--no-header"),
    (b"a,b\n", "has a header but no records"),
])
def test_unreadable_csv(capsys, work, content, fragment):
    Path("in.csv").write_bytes(content)
    code, _, err = run(capsys, "synthesize", "in.csv", "-o", "out.csv")
    assert_one_line_error(code, err, "synthesize", fragment)
    assert listing(work) == ["in.csv"]
    assert Path("in.csv").read_bytes() == content


def test_directory_as_input(capsys, work):
    Path("folder").mkdir()
    code, _, err = run(capsys, "aggregate", "folder", "-o", "agg.json")
    assert_one_line_error(code, err, "aggregate", "is a directory")


@pytest.mark.parametrize("spec", ["income", "income=5", "income=a:b", "income=9:1",
                                  "=0:1", "income=0:inf", "income=:5"])
def test_malformed_bounds(capsys, work, table_csv, spec):
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", "--bounds", spec)
    assert_one_line_error(code, err, "synthesize", repr(spec))
    assert listing(work) == []


@pytest.mark.parametrize("command", ["synthesize", "evaluate"])
def test_unknown_column_in_bounds(capsys, work, table_csv, command):
    argv = ([command, table_csv, "-o", "out.csv"] if command == "synthesize"
            else [command, table_csv, table_csv])
    code, _, err = run(capsys, *argv, "--bounds", "weight=0:10")
    assert_one_line_error(code, err, command, "unknown column 'weight'", "color, size")
    assert listing(work) == []


def _numeric_csv(path, n=3000, seed=0):
    """A CSV whose numeric columns are undeclared: floats with a point mass, counts, codes."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "spend": np.where(rng.random(n) < 0.36, 0.0, rng.gamma(2.0, 300.0, n).round(2)),
        "visits": np.where(rng.random(n) < 0.8, 0, rng.poisson(3, n) + 1),
        "ratio": pd.Series(rng.beta(2, 5, n)).where(rng.random(n) > 0.1),
        "zip": rng.choice(["02139", "01002", "02210"], n),
        "color": rng.choice(["red", "green"], n)})
    frame.to_csv(path, index=False)
    return frame


def test_decimal_column_without_bounds(capsys, work, table_csv):
    # nothing declared: a DP count finds "age" and "income" numeric, DP bins them
    code, out, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", "--seed", 0,
                         "--aggregates-out", "agg.json")
    assert code == 0, err
    privacy = DPAggregates.load("agg.json").privacy
    names = [m.name for m in privacy.mechanisms]
    for column in ("color", "size", "age", "income"):
        assert f"numeric column {column!r}: numeric or text" in names
    assert "numeric column 'income': bins and shape" in names
    assert "numeric column 'color': range" not in names
    assert privacy["epsilon"] == 4 and privacy["delta"] == pytest.approx(1e-9)
    synthetic = pd.read_csv("out.csv")
    assert synthetic["age"].dtype == np.int64 and synthetic["income"].dtype == np.float64


def test_synthesize_with_no_flags_keeps_numeric_columns(capsys, work):
    from scipy.stats import ks_2samp

    real = _numeric_csv(work / "data.csv")
    code, out, err = run(capsys, "synthesize", "data.csv", "-o", "out.csv", "--seed", 1)
    assert code == 0, err
    assert err == ""
    fake = pd.read_csv("out.csv", dtype={"zip": str})
    assert abs(len(fake) - len(real)) <= 0.03 * len(real)
    visits = fake["visits"].dropna()
    assert (visits == visits.round()).all() and fake["visits"].isna().mean() <= 0.03
    assert abs((fake["spend"] == 0).mean() - (real["spend"] == 0).mean()) <= 0.05
    assert abs((fake["visits"] == 0).mean() - 0.8) <= 0.05
    for name in ("spend", "ratio"):
        assert ks_2samp(real[name].dropna(), fake[name].dropna()).statistic <= 0.10
    assert abs(fake["ratio"].isna().mean() - real["ratio"].isna().mean()) <= 0.03
    # codes written with a leading zero stay text; no float shows 15+ digits
    assert set(fake["zip"].dropna()) <= {"02139", "01002", "02210"}
    text = Path("out.csv").read_text()
    assert not any(len(field.partition(".")[2]) > 4
                   for line in text.splitlines()[1:] for field in line.split(","))


def test_decimals_option(capsys, work):
    _numeric_csv(work / "data.csv", n=1000)
    code, _, err = run(capsys, "synthesize", "data.csv", "-o", "out.csv", "--seed", 1,
                       "--decimals", "1", "ratio=2")
    assert code == 0, err
    fake = pd.read_csv("out.csv")
    assert (fake["spend"] == fake["spend"].round(1)).all()
    ratio = fake["ratio"].dropna()
    assert (ratio == ratio.round(2)).all() and not (ratio == ratio.round(1)).all()


@pytest.mark.parametrize("value, fragment", [
    ("x", "malformed --decimals 'x'"), ("ratio=-1", "between 0 and 15"),
    ("nope=2", "unknown column 'nope'")])
def test_decimals_option_errors(capsys, work, value, fragment):
    _numeric_csv(work / "data.csv", n=200)
    code, _, err = run(capsys, "synthesize", "data.csv", "-o", "out.csv", "--decimals", value)
    assert_one_line_error(code, err, "synthesize", fragment)
    assert listing(work) == ["data.csv"]


@pytest.mark.parametrize("argv", [
    ["synthesize", "{table}", "-o", "out.csv", *BOUNDS],
    ["aggregate", "{table}", "-o", "out.csv", *BOUNDS],
    ["evaluate", "{table}", "{table}", *BOUNDS, "--report", "out.csv"],
    ["demo", "--report", "out.csv"],
])
def test_existing_output_needs_force(capsys, work, table_csv, no_plots, argv):
    argv = [str(table_csv) if a == "{table}" else a for a in argv]
    Path("out.csv").write_text("precious")
    code, _, err = run(capsys, *argv)
    assert_one_line_error(code, err, argv[0], "out.csv exists; pass --force")
    assert Path("out.csv").read_text() == "precious"
    code, _, err = run(capsys, *argv, "--force")
    assert code == 0, err
    assert Path("out.csv").read_text() != "precious"
    assert listing(work) == ["out.csv"]


@pytest.mark.parametrize("argv", [
    ["sample", "agg.json", "-o", "agg.json", "--force"],
    ["sample", "agg.json", "-o", "./agg.json", "--force"],
    ["synthesize", "agg.json", "-o", "out.csv", "--aggregates-out", "agg.json", "--force"],
    ["aggregate", "agg.json", "-o", "agg.json", "--force"],
    ["evaluate", "agg.json", "agg.json", "--report", "agg.json", "--force"],
])
def test_an_input_is_never_overwritten(capsys, work, argv):
    Path("agg.json").write_text("the release")
    code, _, err = run(capsys, *argv)
    assert_one_line_error(code, err, argv[0], "is also an input")
    assert Path("agg.json").read_text() == "the release"
    assert listing(work) == ["agg.json"]


def test_existing_aggregates_output_needs_force(capsys, work, table_csv):
    Path("agg.json").write_text("precious")
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS,
                       "--aggregates-out", "agg.json")
    assert_one_line_error(code, err, "synthesize", "agg.json exists")
    assert listing(work) == ["agg.json"]  # nothing else written either


@pytest.mark.parametrize("output, fragment", [
    ("missing/out.csv", "directory of output missing/out.csv does not exist"),
    (".", "is a directory"),
])
def test_bad_output_path(capsys, work, table_csv, output, fragment):
    code, _, err = run(capsys, "synthesize", table_csv, "-o", output, *BOUNDS)
    assert_one_line_error(code, err, "synthesize", fragment)


@pytest.mark.parametrize("output, fragment", [
    ("out.parquet", "not .parquet; name the output .csv or pass --engine dask"),
    ("out.XLSX", "not .XLSX; name the output .csv"),
])
def test_records_output_named_as_another_format_is_refused(capsys, work, table_csv, output,
                                                           fragment):
    # the records are CSV text: a file named .parquet would hold something else
    code, _, err = run(capsys, "synthesize", table_csv, "-o", output, *BOUNDS)
    assert_one_line_error(code, err, "synthesize", fragment)
    assert not (work / output).exists()
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS,
                       "--aggregates-out", "agg.json")
    assert code == 0
    code, _, err = run(capsys, "sample", "agg.json", "-o", output)
    assert_one_line_error(code, err, "sample", fragment)


@pytest.mark.parametrize("given, fragment", [
    ("data.parquet", "data.parquet is a Parquet file; this engine reads CSV: pass --engine dask"),
    ("parts/*.csv", "input file not found: parts/*.csv (a pattern of files is read with "
                    "--engine dask)"),
])
def test_parquet_and_patterns_point_to_the_dask_engine(capsys, work, given, fragment):
    if given.endswith(".parquet"):
        Path(given).write_bytes(b"PAR1")
    code, _, err = run(capsys, "synthesize", given, "-o", "out.csv")
    assert_one_line_error(code, err, "synthesize", fragment)


def test_same_output_twice(capsys, work, table_csv):
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "x.csv", *BOUNDS,
                       "--aggregates-out", "./x.csv")
    assert_one_line_error(code, err, "synthesize", "must be different files")


@pytest.mark.parametrize("content, fragment", [
    (None, "categories file not found"),
    ("{not json", "cannot read cats.json as JSON"),
    ('["red"]', "must hold a JSON object"),
    ('{"color": "red"}', "must hold a JSON object"),
    ('{"colour": ["red"]}', "--categories names the unknown column 'colour'"),
    ('{"age": ["old"]}', "'old' of the numeric column 'age' is not a number"),
])
def test_bad_categories_file(capsys, work, table_csv, content, fragment):
    if content is not None:
        Path("cats.json").write_text(content)
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS,
                       "--categories", "cats.json")
    assert_one_line_error(code, err, "synthesize", fragment)
    assert "out.csv" not in listing(work)


def test_invalid_parameter_from_the_estimator(capsys, work, table_csv):
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS,
                       "--epsilon", -1)
    assert_one_line_error(code, err, "synthesize", "epsilon")
    assert listing(work) == []


def test_failed_write_leaves_the_old_output(capsys, work, table_csv, monkeypatch):
    Path("out.csv").write_text("precious")
    real_to_csv = pd.DataFrame.to_csv

    def broken_to_csv(frame, path, **kwargs):
        real_to_csv(frame.head(3), path, **kwargs)  # a partial file ...
        raise OSError("disk full")  # ... then the disk fills up

    monkeypatch.setattr(pd.DataFrame, "to_csv", broken_to_csv)
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS, "--force")
    assert_one_line_error(code, err, "synthesize", "disk full")
    assert Path("out.csv").read_text() == "precious"
    assert listing(work) == ["out.csv"]  # no temporary file left behind


# ------------------------------------------------------------ error paths
def test_traceback_option_reraises(work):
    with pytest.raises(cli.CommandError, match="input file not found"):
        main(["synthesize", "nope.csv", "-o", "out.csv", "--traceback"])


def test_unexpected_error_is_one_line(capsys, work, table_csv, monkeypatch):
    def crash(self, X, y=None):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(DPMarginalSynthesizer, "fit", crash)
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS)
    assert_one_line_error(code, err, "synthesize", "internal error (RuntimeError): boom "
                          "second line", "--traceback")


def test_interrupt_exits_130(capsys, work, table_csv, monkeypatch):
    def interrupt(self, X, y=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(DPMarginalSynthesizer, "fit", interrupt)
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS)
    assert code == 130
    assert err == "dpsynth: interrupted\n"
    assert listing(work) == []


def test_warnings_are_one_line(capsys, work, table_csv, monkeypatch):
    read_table = _common.read_table

    def read_with_warning(*args):
        warnings.warn("first\nsecond", UserWarning)
        return read_table(*args)

    monkeypatch.setattr(_common, "read_table", read_with_warning)
    code, _, err = run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS)
    assert code == 0
    assert err == "dpsynth: warning: first second\n"


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["synthesize"])
    assert exit_info.value.code == 2
    assert "required" in capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith("dpsynth ")


# ------------------------------------------------------------- entry points
def test_python_dash_m(tmp_path):
    bad = subprocess.run([sys.executable, "-m", "dpsynth", "sample", "nope.json", "-o",
                          "out.csv"], capture_output=True, text=True, cwd=tmp_path,
                         timeout=120)
    assert bad.returncode == 1
    assert bad.stderr == "dpsynth sample: error: aggregates file not found: nope.json\n"


def test_console_script():
    script = Path(sys.executable).with_name("dpsynth")
    if not script.exists():
        pytest.skip("the dpsynth console script is not installed in this environment")
    result = subprocess.run([str(script), "--help"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0
    for command in ("synthesize", "aggregate", "sample", "evaluate", "demo"):
        assert command in result.stdout


# ------------------------------------------------- declarations and reading
SCHEMA = {"columns": [
    {"name": "age", "kind": "numeric", "dtype": "int64", "bounds": [0, 100]},
    {"name": "income", "kind": "numeric", "bounds": [0.0, 200000], "n_bins": 4},
    {"name": "color", "kind": "categorical", "categories": ["red", "green", "blue"]},
    {"name": "size", "kind": "categorical"}]}


@pytest.fixture
def zip_csv(work):
    rng = np.random.default_rng(2)
    n = 400
    frame = pd.DataFrame({"zip": rng.choice(["02139", "00501", "10001"], n),
                          "note": rng.choice(["NA", "None", "ok"], n),
                          "age": rng.integers(0, 90, n).astype(str),
                          "id": np.arange(n)})
    frame.to_csv("in.csv", index=False, sep=";")
    return Path("in.csv")


def test_schema_file_declares_the_columns(capsys, work, table_csv):
    Path("schema.json").write_text(json.dumps(SCHEMA))
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", "--seed", 0,
                       "--schema", "schema.json", "--aggregates-out", "agg.json")
    assert code == 0, err
    columns = {c.name: c for c in DPAggregates.load("agg.json").schema}
    assert len(columns["income"].values) == 4  # its own n_bins
    assert len(columns["age"].values) == 10
    assert columns["color"].declared and not columns["size"].declared
    out = pd.read_csv("out.csv", dtype=str, keep_default_na=False)
    assert out["age"].str.fullmatch(r"\d*").all()  # int64 declared: no "12.0"


def test_schema_merges_with_bounds_and_categories(capsys, work, table_csv):
    Path("schema.json").write_text(json.dumps({"columns": SCHEMA["columns"][2:]}))
    Path("cats.json").write_text(json.dumps({"size": ["S", "M", "L"]}))
    code, _, err = run(capsys, "aggregate", table_csv, "-o", "agg.json", "--schema",
                       "schema.json", *BOUNDS, "--categories", "cats.json")
    assert code == 0, err
    aggregates = DPAggregates.load("agg.json")
    assert aggregates.privacy["public_universe"] is True  # every column declared

    code, _, err = run(capsys, "aggregate", table_csv, "-o", "agg.json", "--force",
                       "--schema", "schema.json", *BOUNDS, "--bounds", "color=0:5")
    assert_one_line_error(code, err, "aggregate", "'color'", "--schema schema.json",
                          "--bounds")


@pytest.mark.parametrize("argv, fragment", [
    (["--bounds", "weight=0:10"], "--bounds names the unknown column 'weight'"),
    (["--schema", "missing.json"], "schema file not found: missing.json"),
    (["--bounds", "age=0:100", "age=0:50"], "--bounds gives column 'age' twice"),
    (["--drop", "age", "--bounds", "age=0:100"], "--drop leaves out the declared column"),
])
def test_declaration_errors_before_fitting(capsys, work, table_csv, argv, fragment):
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv",
                       "--bounds", "income=0.0:200000", *argv)
    assert_one_line_error(code, err, "synthesize", fragment)
    assert listing(work) == []


def test_values_outside_the_bounds_are_clipped_silently(capsys, work):
    # whether a value lies outside the bounds is a fact about the data: the
    # console says nothing about it (clipping is documented with --bounds)
    Path("in.csv").write_text("age,job\n" + "30,a\n" * 150 + "40,b\n" * 150 + "977,b\n")
    code, _, err = run(capsys, "synthesize", "in.csv", "-o", "out.csv",
                       "--bounds", "age=0:100", "--seed", 0)
    assert code == 0, err
    assert err == ""
    assert pd.read_csv("out.csv")["age"].dropna().between(0, 100).all()


def test_categorical_float_column_with_too_many_values(capsys, work):
    Path("in.csv").write_text("x\n" + "".join(f"{i / 7:.3f}\n" for i in range(100)))
    Path("schema.json").write_text(json.dumps(
        {"columns": [{"name": "x", "kind": "categorical", "dtype": "float64"}]}))
    code, _, err = run(capsys, "aggregate", "in.csv", "-o", "agg.json", "--schema",
                       "schema.json")
    assert_one_line_error(code, err, "aggregate", "'x'", "--bounds x=LO:HI")
    assert "100" not in err


@pytest.mark.parametrize("option, fragment", [
    (["--epsilon", "0"], "--epsilon must be a positive number"),
    (["--epsilon", "nan"], "--epsilon must be a positive number"),
    (["--delta", "1"], "--delta must be in (0, 0.01]"),
    (["--delta", "0.5"], "--delta must be in (0, 0.01]"),
    (["--reporting-length", "0"], "--reporting-length must be at least 1"),
    (["--n-bins", "0"], "--n-bins must be a positive integer"),
])
def test_privacy_options_are_checked_first(capsys, work, option, fragment):
    Path("in.csv").write_text("a\n1\n")
    code, _, err = run(capsys, "aggregate", "in.csv", "-o", "agg.json", *option)
    assert_one_line_error(code, err, "aggregate", fragment)


def test_text_is_kept_and_separator_detected(capsys, work, zip_csv):
    code, _, err = run(capsys, "synthesize", zip_csv, "-o", "out.csv", "--drop", "id",
                       "--bounds", "age=0:100", "--seed", 0)
    assert code == 0, err
    out = pd.read_csv("out.csv", dtype=str, keep_default_na=False)
    assert list(out.columns) == ["zip", "note", "age"]
    assert set(out["zip"]) <= {"02139", "00501", "10001", ""}
    assert {"NA", "None"} & set(out["note"])  # "NA" and "None" are values, not missing
    code, _, err = run(capsys, "aggregate", zip_csv, "-o", "agg.json",
                       "--columns", "note,zip")
    assert code == 0, err
    assert DPAggregates.load("agg.json").column_names == ["note", "zip"]


def test_columns_and_drop_take_a_name_holding_a_comma_in_quotes(capsys, work):
    # "x,y" could not be chosen: --columns split it, and the error's list of columns
    # read "the columns are x,y, id"
    rng = np.random.default_rng(0)
    pd.DataFrame({"x,y": rng.integers(0, 3, 300), "id": np.arange(300),
                  "g": rng.choice(["a", "b"], 300)}).to_csv("in.csv", index=False)
    code, _, err = run(capsys, "aggregate", "in.csv", "-o", "agg.json",
                       "--columns", '"x,y", g')
    assert code == 0, err
    assert DPAggregates.load("agg.json").column_names == ["x,y", "g"]
    code, _, err = run(capsys, "aggregate", "in.csv", "-o", "agg.json", "--force",
                       "--drop", '"x,y"')
    assert code == 0, err
    assert DPAggregates.load("agg.json").column_names == ["id", "g"]
    code, _, err = run(capsys, "aggregate", "in.csv", "-o", "agg.json", "--force",
                       "--columns", "x,y")
    assert_one_line_error(code, err, "aggregate", "unknown column(s) ['x', 'y']")
    assert 'the columns are "x,y", id, g' in err
    with pytest.raises(SystemExit):  # argparse's usage error
        main(["aggregate", "in.csv", "-o", "agg.json", "--columns", '"x,y'])
    assert 'in double quotes, "x,y"' in capsys.readouterr().err
    for empty in ("--drop=", "--columns="):  # an empty list names nothing: refused
        with pytest.raises(SystemExit):
            main(["aggregate", "in.csv", "-o", "agg.json", "--force", empty])
        assert "without empty names" in capsys.readouterr().err


def test_explicit_separator_and_no_header(capsys, work):
    Path("in.csv").write_text("".join(f"{i % 7}|{i % 2}\n" for i in range(300)))
    code, _, err = run(capsys, "aggregate", "in.csv", "-o", "agg.json", "--sep", "|")
    assert_one_line_error(code, err, "aggregate", "--no-header")
    Path("schema.json").write_text(json.dumps({"columns": [
        {"name": "day", "kind": "categorical", "categories": list(range(7))},
        {"name": "kind", "kind": "categorical"}]}))
    code, _, err = run(capsys, "aggregate", "in.csv", "-o", "agg.json", "--sep", "|",
                       "--no-header", "--schema", "schema.json")
    assert code == 0, err
    assert DPAggregates.load("agg.json").column_names == ["day", "kind"]


def test_a_schema_may_describe_columns_left_out(capsys, work, table_csv):
    Path("schema.json").write_text(json.dumps(SCHEMA))
    code, _, err = run(capsys, "aggregate", table_csv, "-o", "agg.json", "--schema",
                       "schema.json", "--columns", "color,size,age")
    assert code == 0, err
    assert DPAggregates.load("agg.json").column_names == ["color", "size", "age"]


def test_columns_and_drop_exclude_each_other(capsys, work, table_csv):
    with pytest.raises(SystemExit):
        main(["aggregate", str(table_csv), "-o", "agg.json", "--columns", "a",
              "--drop", "b"])
    assert "not allowed with argument" in capsys.readouterr().err


# ------------------------------------------------------------ outputs
def test_unwritable_output_directory_is_refused_before_fitting(capsys, work, table_csv,
                                                              monkeypatch):
    real_access = os.access
    monkeypatch.setattr(_common.os, "access",
                        lambda path, mode: False if mode & os.W_OK else real_access(path, mode))
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS)
    assert_one_line_error(code, err, "synthesize", "cannot write to the directory")


def test_sample_checks_the_aggregates_before_writing(capsys, work, table_csv):
    # Seeded: about one unseeded SDS release in 700 draws the contribution bound
    # Delta_1 = 0 (the DP percentile's candidates are 0..C(d, k), as in SDS) and
    # holds no aggregate to damage.
    assert run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS,
               "--release", "sds", "--seed", 0)[0] == 0
    document = json.loads(Path("agg.json").read_text())
    document["aggregates"][0]["counts"] = document["aggregates"][0]["counts"][:-1]
    Path("broken.json").write_text(json.dumps(document))
    code, _, err = run(capsys, "sample", "broken.json", "-o", "out.csv")
    assert_one_line_error(code, err, "sample", "Invalid aggregates file")
    assert "out.csv" not in listing(work)


def test_an_empty_release_is_refused_with_advice(capsys, work, table_csv):
    # At epsilon 0.01 the SDS release of 300 records suppresses every count.
    tiny = ("--release", "sds", "--epsilon", 0.01, "--seed", 0)
    code, out, _ = run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS, *tiny)
    assert code == 0 and "0 combination counts" in out
    code, _, err = run(capsys, "sample", "agg.json", "-o", "out.csv")
    assert_one_line_error(code, err, "sample", "holds no value at all",
                          "agg.json cannot be sampled", "larger --epsilon")
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS, *tiny)
    assert_one_line_error(code, err, "synthesize", "holds no value at all",
                          "release again from the data with a larger --epsilon")
    assert listing(work) == ["agg.json"]


def test_synthesize_keeps_the_release_when_sampling_fails(capsys, work, table_csv,
                                                          monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(_common, "write_records", broken)
    code, out, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS,
                         "--aggregates-out", "agg.json")
    assert_one_line_error(code, err, "synthesize", "disk full",
                          "dpsynth sample agg.json -o out.csv")
    assert listing(work) == ["agg.json"]
    DPAggregates.load("agg.json")  # complete


class _CountingSamples:
    def __init__(self, monkeypatch):
        self.sizes = []
        original = DPMarginalSynthesizer.sample
        counter = self

        def sample(self, n_samples=None, **kwargs):
            counter.sizes.append(n_samples)
            return original(self, n_samples, **kwargs)

        monkeypatch.setattr(DPMarginalSynthesizer, "sample", sample)


def test_large_outputs_are_written_in_chunks(capsys, work, table_csv, monkeypatch):
    assert run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS, "--seed", 0)[0] == 0
    monkeypatch.setattr(_common, "CHUNK_SIZE", 70)
    calls = _CountingSamples(monkeypatch)
    code, out, err = run(capsys, "sample", "agg.json", "-n", 200, "-o", "a.csv",
                         "--seed", 5, "-v")
    assert code == 0, err
    assert calls.sizes == [70, 70, 60]  # memory bounded by the chunk size
    assert "sampled 140 of 200 records" in err
    first = pd.read_csv("a.csv")
    assert len(first) == 200 and list(first.columns) == ["color", "size", "age", "income"]
    assert not first.iloc[:60].reset_index(drop=True).equals(
        first.iloc[70:130].reset_index(drop=True))  # each chunk its own stream
    assert run(capsys, "sample", "agg.json", "-n", 200, "-o", "b.csv", "--seed", 5)[0] == 0
    assert Path("a.csv").read_bytes() == Path("b.csv").read_bytes()


def test_zero_records_write_a_header(capsys, work, table_csv):
    assert run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS)[0] == 0
    code, _, err = run(capsys, "sample", "agg.json", "-n", 0, "-o", "out.csv")
    assert code == 0, err
    assert Path("out.csv").read_text() == "color,size,age,income\n"


def test_sigterm_leaves_no_output(work, table_csv, capsys):
    assert run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS)[0] == 0
    script = textwrap.dedent("""
        import sys, time
        from dpsynth.cli import _common, main
        as_table = _common.as_table
        def slow(sample):
            print("ready", flush=True)
            time.sleep(60)
            return as_table(sample)
        _common.as_table = slow
        sys.exit(main(["sample", "agg.json", "-n", "10", "-o", "out.csv"]))
    """)
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=work)
    try:
        assert process.stdout.readline().strip() == "ready"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 143
        assert process.stderr.read() == "dpsynth: terminated\n"
    finally:
        process.kill()
        process.stdout.close()
        process.stderr.close()
    assert listing(work) == ["agg.json"]


# ------------------------------------------------------ missing values
def test_missing_uncounted_and_its_old_name(capsys, work, table_csv):
    code, _, err = run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS,
                       "--missing", "uncounted")
    assert code == 0 and err == ""
    assert DPAggregates.load("agg.json").encoder.missing == "absent"
    code, _, err = run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS,
                       "--missing", "absent", "--force")
    assert code == 0
    assert "--missing absent is now called --missing uncounted" in err


def test_missing_help_says_what_it_does(capsys):
    with pytest.raises(SystemExit):
        main(["synthesize", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "{category,uncounted}" in text
    assert "columns without missing values can get some" in text


# ------------------------------------------------------------- evaluate
def test_evaluate_through_the_release(capsys, work, table_csv, no_plots):
    Path("schema.json").write_text(json.dumps(SCHEMA))
    assert run(capsys, "synthesize", table_csv, "-o", "synth.csv", "--schema", "schema.json",
               "--aggregates-out", "agg.json", "--seed", 0)[0] == 0
    code, out, err = run(capsys, "evaluate", table_csv, "synth.csv", "--aggregates",
                         "agg.json", "--report", "report.html")
    assert code == 0, err
    assert "release agg.json: epsilon 4" in out
    assert "mean TVD" in out
    page = Path("report.html").read_text()
    assert "<h2>Privacy</h2>" in page
    assert "epsilon_records" in page and "public_universe" in page
    assert "declared (public)" in page and "released by the DP mechanism" in page
    assert "public bins over [0, 200000]" in page

    code, _, err = run(capsys, "evaluate", table_csv, "synth.csv", "--aggregates",
                       "agg.json", *BOUNDS)
    assert_one_line_error(code, err, "evaluate", "leave out --bounds and --schema")


def test_evaluate_bins_like_the_release(capsys, work, table_csv):
    """With --aggregates, the same bins as with the --bounds used for synthesis."""
    assert run(capsys, "synthesize", table_csv, "-o", "synth.csv", *BOUNDS,
               "--aggregates-out", "agg.json", "--seed", 0)[0] == 0
    code, via_release, err = run(capsys, "evaluate", table_csv, "synth.csv",
                                 "--aggregates", "agg.json")
    assert code == 0, err
    code, via_bounds, err = run(capsys, "evaluate", table_csv, "synth.csv", *BOUNDS)
    assert code == 0, err
    table = [line for line in via_release.splitlines() if line.startswith("mean TVD")]
    assert table == [line for line in via_bounds.splitlines() if line.startswith("mean TVD")]


def test_evaluate_shows_progress_with_verbose(capsys, work, table_csv):
    code, _, err = run(capsys, "evaluate", table_csv, table_csv, *BOUNDS, "-v")
    assert code == 0
    assert "mean TVD of the 2-way marginals" in err and "combination errors" in err


def test_unsamplable_release_gets_command_line_hints(capsys, work):
    rng = np.random.default_rng(0)
    pd.DataFrame({"id": [f"u{i}" for i in range(300)], "job": rng.choice(["a", "b"], 300)}).to_csv(
        "in.csv", index=False)
    # (the SDS release; a workload release maps unreleased values to missing)
    code, _, err = run(capsys, "synthesize", "in.csv", "-o", "out.csv", "--release", "sds",
                       "--aggregates-out", "agg.json", "--seed", 0)
    assert code == 1
    error = err.strip().splitlines()[-1]
    assert error.startswith("dpsynth synthesize: error: no value of column(s) ['id']")
    assert "--drop id" in error and "--missing uncounted" in error
    assert "TableEncoder" not in error  # no Python spelling on the command line
    assert error.endswith("; the DP aggregates are saved in agg.json")
    assert listing(work) == ["agg.json", "in.csv"]  # the release is kept

    code, _, err = run(capsys, "sample", "agg.json", "-o", "out.csv")
    assert_one_line_error(code, err, "sample", "agg.json cannot be sampled", "--drop id")
    assert listing(work) == ["agg.json", "in.csv"]


# ------------------------------------------------------ special values (#17)
@pytest.fixture(scope="module")
def spiky_csv(tmp_path_factory):
    """2000 records: a gain column that is 0 for most, hours that are often 40."""
    rng = np.random.default_rng(3)
    n = 2000
    frame = pd.DataFrame({
        "kind": rng.choice(["a", "b"], n),
        "gain": np.where(rng.random(n) < 0.85, 0, rng.integers(1, 100_000, n)),
        "hours": np.where(rng.random(n) < 0.5, 40, rng.integers(1, 100, n))})
    path = tmp_path_factory.mktemp("spiky") / "spiky.csv"
    frame.to_csv(path, index=False)
    return path


def test_special_values_option_keeps_point_masses(capsys, work, spiky_csv):
    code, out, err = run(capsys, "synthesize", spiky_csv, "-o", "synth.csv",
                         "--bounds", "gain=0:99999", "hours=1:99",
                         "--special-values", "gain=0", "hours=40",
                         "--aggregates-out", "agg.json", "--seed", 0)
    assert code == 0, err
    aggregates = DPAggregates.load("agg.json")
    assert aggregates.schema[1].binning.special == (0.0,)
    assert aggregates.schema[2].values[-1] == "=40"
    real, fake = pd.read_csv(spiky_csv), pd.read_csv("synth.csv")
    assert abs((fake["gain"] == 0).mean() - (real["gain"] == 0).mean()) < 0.1
    code, out, err = run(capsys, "evaluate", spiky_csv, "synth.csv",
                         "--aggregates", "agg.json")
    assert code == 0, err
    assert "gain: Wasserstein-1 / range" in out
    assert "hours = 40: real share" in out


def test_special_values_from_the_schema_file(capsys, work, spiky_csv):
    Path("schema.json").write_text(json.dumps({"columns": [
        {"name": "gain", "kind": "numeric", "bounds": [0, 99999], "special_values": [0]},
        {"name": "hours", "kind": "numeric", "bounds": [1, 99]}]}))
    code, out, err = run(capsys, "synthesize", spiky_csv, "-o", "synth.csv", "--schema",
                         "schema.json", "--aggregates-out", "agg.json", "--seed", 0)
    assert code == 0, err
    assert DPAggregates.load("agg.json").schema[1].values[-1] == "=0"


@pytest.mark.parametrize("spec, fragment", [
    ("gain", "expected COL=V1,V2"),
    ("gain=x", "finite numbers"),
    ("kind=1", "not declared numeric"),
    ("gain=0.5", "holds integers"),
])
def test_special_values_option_errors(capsys, work, spiky_csv, spec, fragment):
    code, out, err = run(capsys, "synthesize", spiky_csv, "-o", "synth.csv",
                         "--bounds", "gain=0:99999", "hours=1:99", "--special-values", spec)
    assert_one_line_error(code, err, "synthesize", fragment)


def test_evaluate_through_a_release_with_special_values_outside_the_bounds(capsys, work):
    rng = np.random.default_rng(4)
    n = 1500
    frame = pd.DataFrame({"kind": rng.choice(["a", "b"], n),
                          "income": np.where(rng.random(n) < 0.3, -9,
                                             rng.integers(0, 1000, n))})
    frame.to_csv("real.csv", index=False)
    code, out, err = run(capsys, "synthesize", "real.csv", "-o", "synth.csv",
                         "--bounds", "income=0:999", "--special-values", "income=-9",
                         "--aggregates-out", "agg.json", "--seed", 0)
    assert code == 0, err
    assert "has values outside" not in out + err
    assert (pd.read_csv("synth.csv")["income"] == -9).mean() > 0.2
    code, out, err = run(capsys, "evaluate", "real.csv", "synth.csv", "--aggregates",
                         "agg.json")
    assert code == 0, err
    assert "income = -9: real share" in out


def test_max_memory_option(capsys, work, table_csv):
    code, _, err = run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS,
                       "--release", "sds", "--max-memory", "1k")
    assert_one_line_error(code, err, "aggregate", "max_memory")
    assert listing(work) == []
    code, _, err = run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS,
                       "--max-memory", "2G")
    assert code == 0, err
    with pytest.raises(SystemExit):
        run(capsys, "aggregate", table_csv, "-o", "agg.json", "--max-memory", "lots")



# ------------------------------------------------ output safety (issue 30)
def test_device_node_output_is_written_through_not_replaced(capsys, work, table_csv):
    before = os.stat(os.devnull)
    code, out, err = run(capsys, "synthesize", table_csv, "-o", os.devnull, *BOUNDS,
                         "--aggregates-out", os.devnull, "--force", "--seed", 0)
    assert code == 0, err
    after = os.stat(os.devnull)
    assert (after.st_mode, after.st_rdev, after.st_ino) == \
        (before.st_mode, before.st_rdev, before.st_ino)
    # nothing is replaced, so no --force is needed for a device
    code, _, err = run(capsys, "aggregate", table_csv, "-o", os.devnull, *BOUNDS)
    assert code == 0, err
    assert listing(work) == []


def test_symlink_output_replaces_its_target(capsys, work, table_csv):
    Path("real").mkdir()
    Path("real/out.csv").write_text("old")
    Path("link.csv").symlink_to(Path("real/out.csv").resolve())
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "link.csv", *BOUNDS)
    assert_one_line_error(code, err, "synthesize", "link.csv exists", "--force")
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "link.csv", *BOUNDS,
                       "--force", "-n", 7)
    assert code == 0, err
    assert Path("link.csv").is_symlink()
    assert len(pd.read_csv("real/out.csv")) == 7


def _no_fit(monkeypatch):
    def fit(self, X, y=None):
        raise AssertionError("the fit ran before the outputs were checked")

    monkeypatch.setattr(DPMarginalSynthesizer, "fit", fit)


@pytest.mark.parametrize("flag", ["-o", "--aggregates-out"])
def test_unwritable_outputs_are_refused_before_the_fit(capsys, work, table_csv, monkeypatch,
                                                      flag):
    # os.access says yes to root everywhere (e.g. /proc): the directory is probed
    _no_fit(monkeypatch)
    Path("sealed").mkdir()
    real_mkstemp = _common.tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if dir is not None and Path(dir).name == "sealed":
            raise PermissionError(13, "Read-only file system")
        return real_mkstemp(*args, dir=dir, **kwargs)

    monkeypatch.setattr(_common.tempfile, "mkstemp", mkstemp)
    outputs = {"-o": "out.csv", "--aggregates-out": "agg.json"}
    outputs[flag] = "sealed/x.csv"
    code, _, err = run(capsys, "synthesize", table_csv, *BOUNDS,
                       *[a for pair in outputs.items() for a in pair])
    assert_one_line_error(code, err, "synthesize", "cannot write to the directory of "
                          "output sealed/x.csv: Read-only file system")
    assert listing(work) == ["sealed"]


@pytest.mark.skipif(not (sys.platform.startswith("linux") and os.geteuid() == 0
                         and os.path.isdir("/proc")), reason="root on Linux")
def test_proc_output_is_refused_before_the_fit_as_root(capsys, work, table_csv,
                                                       monkeypatch):
    _no_fit(monkeypatch)
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS,
                       "--aggregates-out", "/proc/x.json")
    assert_one_line_error(code, err, "synthesize", "/proc/x.json")
    assert listing(work) == []


def test_sample_refuses_records_that_do_not_fit_on_the_disk(capsys, work, table_csv,
                                                            monkeypatch):
    assert run(capsys, "aggregate", table_csv, "-o", "agg.json", *BOUNDS, "--seed", 0)[0] == 0
    free = 50 * 2**20
    monkeypatch.setattr(_common.shutil, "disk_usage",
                        lambda path: type("usage", (), {"free": free})())
    code, _, err = run(capsys, "sample", "agg.json", "-o", "out.csv", "-n", 10_000_000_000)
    assert_one_line_error(code, err, "sample", "would take about", "bytes a record",
                          "measured on 1000 records", "has 50 MiB free", "-n/--n-samples")
    assert listing(work) == ["agg.json"]
    # the estimate is close to what is written
    code, _, err = run(capsys, "sample", "agg.json", "-o", "small.csv", "-n", 20_000)
    assert code == 0, err
    size = Path("small.csv").stat().st_size
    monkeypatch.setattr(_common.shutil, "disk_usage",
                        lambda path: type("usage", (), {"free": size * 0.8})())
    code, _, err = run(capsys, "sample", "agg.json", "-o", "again.csv", "-n", 20_000)
    assert_one_line_error(code, err, "sample", "would take about")
    # a device stores nothing: no check
    code, _, err = run(capsys, "sample", "agg.json", "-o", os.devnull, "-n", 5000)
    assert code == 0, err


def test_synthesize_refuses_records_that_cannot_fit_before_the_fit(capsys, work, table_csv,
                                                                   monkeypatch):
    _no_fit(monkeypatch)
    monkeypatch.setattr(_common.shutil, "disk_usage",
                        lambda path: type("usage", (), {"free": 2**30})())
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS,
                       "-n", 10**12)
    assert_one_line_error(code, err, "synthesize", "at least 4 bytes a record",
                          "has 1 GiB free")


@pytest.mark.parametrize("argv", [["aggregate", "--epsilon", "1e300"],
                                  ["aggregate", "--epsilon", "inf"]])
def test_huge_epsilon_is_refused_clearly(capsys, work, table_csv, argv):
    code, _, err = run(capsys, argv[0], table_csv, "-o", "agg.json", *BOUNDS, *argv[1:])
    assert_one_line_error(code, err, "aggregate", "--epsilon must be")
    assert "sensitivity" not in err


def test_huge_epsilon_in_python():
    frame = pd.DataFrame({"a": ["x", "y"] * 50})
    with pytest.raises(ValueError, match=r"'epsilon' parameter .* range \(0.0, 1"):
        DPMarginalSynthesizer(epsilon=1e300).fit(frame)
    spent = DPMarginalSynthesizer(epsilon=1e15, random_state=0).fit(frame).privacy_spent_
    assert spent["epsilon"] == 1e15


def test_a_closed_stdout_pipe_exits_quietly(work, table_csv):
    # `dpsynth evaluate ... | head`: as cat or git killed by SIGPIPE (141), no traceback
    assert main(["synthesize", str(table_csv), "-o", "synth.csv", *BOUNDS, "--seed",
                 "0"]) == 0
    process = subprocess.Popen(
        [sys.executable, "-m", "dpsynth", "evaluate", str(table_csv), "synth.csv", *BOUNDS],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    process.stdout.close()  # the reader is gone before anything is printed
    err = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait(timeout=300) == 141
    assert err == ""


def test_verbose_prints_each_sampled_chunk_once(capsys, work, table_csv, monkeypatch):
    monkeypatch.setattr(_common, "CHUNK_SIZE", 100)
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", *BOUNDS, "-v",
                       "-n", 250)
    assert code == 0, err
    sampled = [line for line in err.splitlines() if "sampled" in line]
    assert sampled == ["sampled 100 of 250 records", "sampled 200 of 250 records",
                       "sampled 250 of 250 records"]


# ------------------------------------------------------------ schema draft
def test_schema_draft_round_trip(capsys, work, table_csv):
    code, out, err = run(capsys, "schema", "draft", table_csv)
    assert code == 0, err
    document = json.loads(out)
    assert list(document)[0] == "_warning"
    assert "WITHOUT DIFFERENTIAL PRIVACY" in document["_warning"]
    assert "published without differential privacy" in err and "review" in err
    columns = {c["name"]: c for c in document["columns"]}
    assert columns["color"]["categories"] == ["blue", "green", "red"]
    assert columns["age"]["kind"] == "numeric" and columns["age"]["dtype"] == "int64"
    assert columns["income"]["dtype"] == "float64" and columns["income"]["decimals"] == 2
    assert all(c["no_missing"] for c in document["columns"])
    Path("schema.json").write_text(out)
    code, _, err = run(capsys, "synthesize", table_csv, "-o", "out.csv", "--schema",
                       "schema.json", "--aggregates-out", "agg.json", "--seed", 0)
    assert code == 0, err
    schema = {c.name: c for c in DPAggregates.load("agg.json").schema}
    assert schema["color"].declared and schema["size"].declared
    out = pd.read_csv("out.csv", dtype=str, keep_default_na=False)
    assert out["age"].str.fullmatch(r"\d+").all()  # declared int64, no missing


def test_schema_draft_to_a_file(capsys, work, table_csv):
    code, out, err = run(capsys, "schema", "draft", table_csv, "-o", "schema.json",
                         "--drop", "income", "--max-numeric-categories", "100")
    assert code == 0, err
    assert out == "" and "schema.json" in err
    document = json.loads(Path("schema.json").read_text())
    assert [c["name"] for c in document["columns"]] == ["color", "size", "age"]
    assert document["columns"][2]["kind"] == "categorical"  # 72 ages <= 100
    code, _, err = run(capsys, "schema", "draft", table_csv, "-o", "schema.json")
    assert_one_line_error(code, err, "schema draft", "schema.json exists", "--force")
    code, _, err = run(capsys, "schema", "draft", "missing.csv")
    assert_one_line_error(code, err, "schema draft", "input file not found")


def test_synthesize_keeps_text_codes_of_numeric_columns(capsys, work):
    # a complete count column with a code "N" (as census files write "not
    # applicable"): the code comes back as itself, never as an empty field
    rng = np.random.default_rng(5)
    n = 4000
    count = rng.poisson(2, n).astype(str).astype(object)
    count[rng.random(n) < 0.04] = "N"
    pd.DataFrame({"count": count, "group": rng.choice(["a", "b"], n)}).to_csv(
        work / "data.csv", index=False)
    code, out, err = run(capsys, "synthesize", "data.csv", "-o", "out.csv", "--seed", 1)
    assert code == 0, err
    fake = pd.read_csv("out.csv", dtype=str, keep_default_na=False)
    assert (fake["count"] == "").mean() <= 0.005
    assert abs((fake["count"] == "N").mean() - (count == "N").mean()) <= 0.02
    numbers = pd.to_numeric(fake["count"], errors="coerce").dropna()
    assert (numbers == numbers.round()).all()
    assert abs(numbers.mean() - 2) <= 0.2


def test_synthesize_keeps_dates_written_as_text(capsys, work):
    # every field of a CSV file is text: ISO dates (with a code and empty fields),
    # month-year as loan exports write it and timestamps come back as dates in
    # the same format, with their distribution, not as rare categories
    from scipy.stats import ks_2samp

    from dpsynth.utils._temporal import parse_dates

    rng = np.random.default_rng(6)
    n = 4000
    days = pd.Timestamp("2012-01-01") + pd.to_timedelta(
        rng.gamma(2.0, 400.0, n).astype(int), unit="D")
    opened = np.array(days.strftime("%Y-%m-%d"), dtype=object)
    opened[rng.random(n) < 0.05] = ""
    opened[rng.random(n) < 0.03] = "0000-00-00"
    real = pd.DataFrame({
        "opened": opened, "issue_d": [f"{d:%b}-{d.year}" for d in days],
        "stamp": (days + pd.to_timedelta(rng.integers(0, 86400, n), unit="s"))
        .strftime("%Y-%m-%d %H:%M:%S"),
        "grade": rng.choice(["A", "B", "C"], n)})
    real.to_csv(work / "data.csv", index=False)
    code, out, err = run(capsys, "synthesize", "data.csv", "-o", "out.csv", "--seed", 1,
                         "--aggregates", "release.json")
    assert code == 0, err
    formats = {c["name"]: c.get("binning", {}).get("date_format") for c in
               json.loads((work / "release.json").read_text())["schema"]["columns"]}
    assert formats == {"opened": "%Y-%m-%d", "issue_d": "%b-%Y",
                       "stamp": "%Y-%m-%d %H:%M:%S", "grade": None}
    real = pd.read_csv("data.csv", dtype=str, keep_default_na=False)
    fake = pd.read_csv("out.csv", dtype=str, keep_default_na=False)
    for name, fmt in (("opened", "%Y-%m-%d"), ("issue_d", "%b-%Y"),
                      ("stamp", "%Y-%m-%d %H:%M:%S")):
        a, b = parse_dates(real[name], fmt), parse_dates(fake[name], fmt)
        assert ks_2samp(a[~np.isnan(a)], b[~np.isnan(b)]).statistic <= 0.1, name
        assert set(fake[name][np.isnan(b)]) <= {"", "0000-00-00"}, name
    assert abs((fake["opened"] == "").mean() - 0.05) <= 0.02
    assert abs((fake["opened"] == "0000-00-00").mean() - 0.03) <= 0.015
    assert (fake["issue_d"] != "").all()
    # --where takes the column's dates (a range LO:HI, split where both ends are dates)
    code, out, err = run(capsys, "sample", "release.json", "-n", 100, "-o", "where.csv",
                         "--seed", 2, "--where", "stamp=2013-01-01 00:00:00:2013-12-31 23:59:59",
                         "--where", "issue_d=Mar-2013")
    assert code == 0, err
    picked = pd.read_csv("where.csv", dtype=str, keep_default_na=False)
    assert picked["stamp"].str.startswith("2013-").all() and len(picked) == 100
    assert (picked["issue_d"] == "Mar-2013").all()
    code, out, err = run(capsys, "sample", "release.json", "-n", 5, "-o", "bad.csv",
                         "--where", "opened=2014/01/01")
    assert code != 0 and "not a date written as '%Y-%m-%d'" in err
    # evaluate compares the dates as the numbers they are binned in
    code, out, err = run(capsys, "evaluate", "data.csv", "out.csv", "--aggregates",
                         "release.json")
    assert code == 0, err
    assert "issue_d: Wasserstein-1 / range" in out and "stamp: Wasserstein-1 / range" in out
