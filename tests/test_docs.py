"""Docs facts: generated quickstart numbers and README table, install hints, the README's
commands and code, front pages that say what the default does (issues #17 and #31)."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_quickstart_numbers_are_generated_from_the_benchmark_output():
    pytest.importorskip("benchmarks.run_reference")
    from benchmarks import make_quickstart_numbers as make

    committed = (ROOT / "doc" / "_generated" / "quickstart_numbers.rst").read_text()
    assert committed == make.committed_numbers(), \
        "run python -m benchmarks.make_quickstart_numbers"
    # the default's row is the workload release's (workload.json), not an older run's
    workload = json.loads((ROOT / "benchmarks" / "results" / "workload.json").read_text())
    first = next(r for r in workload["records"] if r["dataset"] == "adult"
                 and r["method"] == "default" and r["epsilon"] == 1.0)
    assert first["release"] == "workload"
    assert "dpsynth (default)" in committed
    quickstart = (ROOT / "doc" / "quickstart.rst").read_text()
    assert ".. include:: _generated/quickstart_numbers.rst" in quickstart
    assert "_generated/quickstart_demo.txt" in quickstart
    demo = (ROOT / "doc" / "_generated" / "quickstart_demo.txt").read_text()
    assert demo.startswith("$ dpsynth demo --seed 0") and "mean TVD" in demo


def test_no_install_hint_names_a_package_that_is_not_on_the_index():
    files = [*ROOT.glob("doc/*.rst"), ROOT / "README.md", *ROOT.glob("dpsynth/**/*.py")]
    offenders = [str(p.relative_to(ROOT)) for p in files
                 if re.search(r"pip install \"?dpsynth\b", p.read_text())]
    assert offenders == []


def test_readme_results_table_is_generated_from_the_benchmark_output():
    pytest.importorskip("benchmarks.run_reference")
    from benchmarks import make_readme_table as make

    readme = (ROOT / "README.md").read_text()
    table = make.committed_table()
    assert make.replace_block(readme, table) == readme, \
        "run python -m benchmarks.make_readme_table"
    assert table.count("\n") >= 2 + 5 * 3  # header, rule, 5 tables x 3 epsilons
    header = table.splitlines()[0]
    assert "| NIST MA | 1 |" in table
    for title in ("dpsynth default (x best peer)", "dpsynth, declared (x best peer)",
                  "pac-synth", "| MST |", "| AIM |"):
        assert title in header, title


def _summary(tvd3, seeds, **mean):
    return {"seeds": list(seeds), "mean": {"tvd_1": 0.0, "tvd_2": 0.0, "tvd_3": tvd3, **mean},
            "std": {}}


def test_results_table_puts_dpsynth_beside_every_peer_and_its_ratio_to_the_best():
    from benchmarks import make_readme_table as make

    ours = {("pums", 1.0, "default"): _summary(0.30, range(6)),
            ("pums", 1.0, "declared"): _summary(0.21, range(6)),
            ("pums", 1.0, "sds"): _summary(0.40, range(3)),
            ("pums", 4.0, "default"): _summary(0.16, range(3)),
            ("pums", 4.0, "declared"): _summary(0.15, range(3)),
            ("adult", 1.0, "declared"): _summary(0.045, range(2)),
            ("adult@1000", 1.0, "default"): _summary(0.36, range(3))}  # subsets: left out
    reference = {
        ("pums", 1.0, "run_mst"): _summary(0.28, range(3)),
        ("pums", 1.0, "run_aim"): _summary(0.25, range(3)),  # i.i.d.: not a column
        ("pums", 1.0, "run_aim/randomized_round"): _summary(0.24, range(3)),
        ("pums", 1.0, "run_google_aim_gdp"): _summary(0.242, [0], epsilon_spent=0.893,
                                                      epsilon_spent_rdp=1.0),
        ("pums", 1.0, "run_google_swift"): _summary(0.20, [0, 1], epsilon_spent=0.90,
                                                    epsilon_spent_rdp=1.0),
        ("pums", 4.0, "run_aim/randomized_round"): _summary(0.175, range(3)),
        ("pums", 4.0, "run_google_aim_gdp"): _summary(0.2, [0], epsilon_spent=3.7),
        ("adult", 1.0, "run_pacsynth"): _summary(0.432, [None])}
    lines = make.results_table(ours, reference).splitlines()
    # Google MST never ran on these tables: no column of dashes for it
    assert lines[0] == ('| data | ε | dpsynth default (x best peer) | dpsynth, declared '
                        '(x best peer) | `release="sds"` | pac-synth | MST | AIM | '
                        'Google AIM-GDP | Google SWIFT |')
    assert lines[1] == "|---|---|" + "---|" * 8
    # rows in DATASETS order, then by epsilon; the best peer in bold, dpsynth's
    # default and declared as a multiple of it, the seed count in every cell
    assert lines[2] == ("| Adult | 1 | - | 0.045 = 0.10x (2) | - | **0.432** (1) | - | - | - "
                        "| - |")
    assert lines[3] == ("| PUMS | 1 | 0.300 = 1.50x (6) | 0.210 = 1.05x (6) | 0.400 (3) | - "
                        "| 0.280 (3) | 0.240 (3) | 0.242 (1) | **0.200** (2) |")
    assert lines[4] == ("| PUMS | 4 | 0.160 = 0.91x (3) | 0.150 = 0.86x (3) | - | - | - "
                        "| **0.175** (3) | 0.200 (1) | - |")
    # the epsilon Google's calibration spends by its own accountant, per epsilon over its runs
    assert lines[5:] == ["", "Google dpsynth's calibrated mechanisms spend, by its own PLD / "
                         "RDP accountants, ε 0.898 / 1.000 of 1 (3 runs), ε 3.700 / - of 4 "
                         "(1 run)."]
    # a row without any peer has no ratio; no Google run, no line about its budget
    alone = make.results_table({("nist_ma", 1.0, "default"): _summary(0.08, [0])}, {})
    assert alone.splitlines() == ["| data | ε | dpsynth default (x best peer) | dpsynth, "
                                  'declared (x best peer) | `release="sds"` |',
                                  "|---|---|---|---|---|", "| NIST MA | 1 | 0.080 (1) | - | - |"]


def test_readme_raw_table_is_generated_from_the_benchmark_output():
    from benchmarks import make_readme_table as make

    readme = (ROOT / "README.md").read_text()
    table = make.committed_raw_table()
    assert make.replace_block(readme, table, make.RAW_BEGIN, make.RAW_END) == readme, \
        "run python -m benchmarks.make_readme_table"
    assert make.rendered(readme) == readme
    # dpsynth's default beside the peer given the same raw table, every key row present
    header = table.splitlines()[0]
    assert "dpsynth default" in header and "Google dpsynth MST" in header
    for label in ("row count error", "largest KS", "largest point-mass", "largest 1-way TVD",
                  "AUC ratio", "seconds"):
        assert f"| {label}" in table, label
    raw = json.loads((ROOT / "benchmarks" / "results" / "raw.json").read_text())
    python = [r for r in raw["runs"] if r["route"] == "python"]
    assert python and all(r["privacy"]["delta"] == raw["delta"] for r in python)
    assert all(r["privacy"]["delta"] == raw["delta"] for r in raw["runs"] if "error" not in r)


def test_readme_scale_table_shows_the_large_checks_with_their_commands():
    from benchmarks import make_readme_table as make

    readme = (ROOT / "README.md").read_text()
    table = make.committed_scale_table()
    assert make.replace_block(readme, table, make.SCALE_BEGIN, make.SCALE_END) == readme, \
        "run python -m benchmarks.make_readme_table"
    large = {"command": "python -m benchmarks.run_large --parquet --data-dir /tmp/x",
             "check": {"rows": 10_000_000, "columns": 24, "fit_s": 43.8, "sample_s": 52.8,
                       "sample_rows": 9_999_987, "csv_write_peak_mb": 4766}}
    run = {"workers": 2, "fit_worker_peak_mb": [967, 1074], "sample_worker_peak_mb": [687, 779],
           "client_peak_mb": 336, "sample_files": 10, "sample_rows_written": 9_999_987,
           "fit_s": 77.8, "sample_s": 72.8,
           "command": "python -m benchmarks.run_dask --rows 10000000 --sample-dir /tmp"}
    lines = make.scale_table(large, {"runs": {"10000000": {**run, "rows": 10_000_000},
                                              "2000000": {**run, "rows": 2_000_000}}})
    lines = lines.splitlines()
    assert len(lines) == 4  # header, rule, in memory, the Dask run of the most rows
    assert lines[2] == ("| in memory | 10,000,000 x 24 | 44 | 53 (9,999,987) | 4.8 GB | "
                        "`python -m benchmarks.run_large --parquet` |")
    assert lines[3].startswith("| Dask, 2 workers x 1 thread, Parquet | 10,000,000 x 24 | 78 | "
                               "73 (9,999,987, 10 files) | 1.1 GB per worker, 0.3 GB client |")
    assert lines[3].endswith("`python -m benchmarks.run_dask --rows 10000000` |")


def test_raw_table_figures_are_the_mean_of_each_routes_runs():
    from benchmarks import make_readme_table as make

    def run(route, rows, ks, share, tvd, auc, seconds):
        return {"route": route, "row_error": rows, "auc_ratio": auc, "seconds": seconds,
                "numeric": {"a": {"ks": ks, "point_share_real": 0.5,
                                  "point_share_synthetic": share},
                            "b": {"ks": ks / 2, "point_share_real": 0.1,
                                  "point_share_synthetic": 0.1}},
                "categorical": {"c": tvd, "d": tvd / 3}}

    table = make.raw_table({"runs": [
        run("python", 0.0, 0.02, 0.5, 0.01, 0.98, 60),
        run("python", 0.02, 0.04, 0.4, 0.03, 0.96, 80),
        run("google_mst", 0.01, 0.5, 0.0, 0.1, 0.9, 200),
        {"route": "google_mst/uniform", "seed": 0, "error": "stopped"}]})
    lines = table.splitlines()
    assert lines[0] == "| | dpsynth default (2) | Google dpsynth MST (1) |"
    assert "| row count error | 0.010 | 0.010 |" in lines
    assert "| largest KS, numeric columns | 0.030 | 0.500 |" in lines
    assert "| largest point-mass share error | 0.050 | 0.500 |" in lines
    assert "| largest 1-way TVD, categorical | 0.020 | 0.100 |" in lines
    assert "| seconds, wall clock on a shared 2-core machine (load average) | 70 | 200 |" \
        in lines
    loaded = make.raw_table({"runs": [
        {**run("python", 0.0, 0.02, 0.5, 0.01, 0.98, 60), "load_average": 2.0},
        {**run("python", 0.0, 0.02, 0.5, 0.01, 0.98, 80), "load_average": 3.0}]})
    assert "| seconds, wall clock on a shared 2-core machine (load average) | 70 (2.5) |" \
        in loaded.splitlines()


def test_raw_results_page_says_what_the_peer_read_without_dp():
    from benchmarks import run_raw

    def run(route, seed, **extra):
        return {"route": route, "seed": seed, "row_error": 0.0, "seconds": 10.0,
                "auc_synthetic": 0.9, "auc_ratio": 0.97, "categorical": {"c": 0.01},
                "numeric": {"x": {"ks": 0.02, "point": 0.0, "point_share_real": 0.5,
                                  "point_share_synthetic": 0.4}}, **extra}

    peer = {"bounds": {"x": [0.0, 99999.0]}, "zcdp_rho": 0.2,
            "rho": {"count": 0.01, "mechanism": 0.19}, "epsilon_spent": {"pld": None,
                                                                        "rdp": 4.0},
            "n_bins": {"x": 4}, "n_values": {"c": 3}}
    page = run_raw._table({"epsilon": 4.0, "delta": 1e-9, "rows_train": 10, "rows_test": 2,
                           "auc_real": 0.93, "runs": [
                               run("python", 0), run("google_mst", 0, privacy=peer),
                               run("google_mst/uniform", 0, privacy=peer),
                               {"route": "google_aim_gdp", "seed": 0,
                                "error": "stopped after the 1800 s limit"}]}, ["x"])
    assert "| | dpsynth, Python API (1) | Google MST (its midpoint decoding) (1) |" in page
    assert "**without DP**" in page and "x [0, 99999]" in page
    assert "google_aim_gdp seed 0: stopped after the 1800 s limit" in page


def test_readme_table_generator_replaces_only_the_marked_block():
    from benchmarks import make_readme_table as make

    text = f"intro\n{make.BEGIN}\nold\n{make.END}\noutro\n"
    assert make.replace_block(text, "new\n") == f"intro\n{make.BEGIN}\nnew\n{make.END}\noutro\n"
    with pytest.raises(ValueError, match="markers"):
        make.replace_block("no markers here", "new\n")
    raw = f"{make.BEGIN}\nold\n{make.END}\n{make.RAW_BEGIN}\nold\n{make.RAW_END}\n"
    assert make.replace_block(raw, "new\n", make.RAW_BEGIN, make.RAW_END) == \
        f"{make.BEGIN}\nold\n{make.END}\n{make.RAW_BEGIN}\nnew\n{make.RAW_END}\n"


def test_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    for page in ("doc/privacy.rst", "doc/contributing.rst", "benchmarks/LOG.md",
                 "CHANGELOG.md"):
        assert page in readme and (ROOT / page).is_file(), page


def test_readme_test_command_is_what_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    readme = (ROOT / "README.md").read_text().splitlines()
    assert ci in readme
    assert "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/dpsynth demo" in readme


def test_readme_python_example_runs(tmp_path, monkeypatch):
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert blocks, "the README has no Python example"
    code = blocks[0]
    assert len(code.strip().splitlines()) <= 12
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert (tmp_path / "aggregates.json").is_file()
    assert len(namespace["X_syn"]) > 0
    assert list(namespace["X_syn"].columns) == list(namespace["demo"].frame.columns)


def test_front_pages_say_what_the_default_release_is():
    import dpsynth
    from dpsynth import synthesizer

    for name, text in [("dpsynth/__init__.py", dpsynth.__doc__),
                       ("dpsynth/synthesizer.py", synthesizer.__doc__),
                       ("doc/index.rst", (ROOT / "doc" / "index.rst").read_text())]:
        assert "workload" in text, name
        assert re.search(r"\bsds\b", text), name  # the other release, by its name


def test_readme_docs_command_needs_no_activated_environment():
    readme = (ROOT / "README.md").read_text()
    assert ".venv/bin/python -m sphinx -b html doc doc/_build/html" in readme
    assert ".venv/bin/pip install -e \".[docs]\"" in readme


def test_reference_summary_counts_each_rounded_sample_of_a_model_once():
    pytest.importorskip("benchmarks.run_reference")
    from benchmarks.run_reference import summarize

    def record(seed, tvd3, sampling=None, alternative=None):
        params = {"epsilon": 1.0, "rounds": 42, "seed": seed}
        if sampling:
            params["sampling"] = sampling
        r = {"runner": "run_aim", "dataset": "adult", "params": params, "fit_seconds": 10.0,
             "peak_rss_mb": 100.0, "mean_tvd": {"1": 0.0, "2": 0.0, "3": tvd3}}
        if alternative is not None:
            r["alternative_samplers"] = {"randomized_round": {
                "mean_tvd": {"1": 0.0, "2": 0.0, "3": alternative}}}
        return r

    runs = [record(0, 0.05, alternative=0.041), record(0, 0.04, sampling="randomized_round"),
            record(1, 0.06, alternative=0.045), record(2, 0.07)]
    by_sampling = {entry["params"].get("sampling", "sample"): entry
                   for entry in summarize(runs)}
    assert by_sampling["sample"]["seeds"] == [0, 1, 2]
    rounded = by_sampling["randomized_round"]
    # seed 0's own rounded run wins over its alternative sample; seed 1 adds one
    assert rounded["seeds"] == [0, 1]
    assert rounded["mean"]["tvd_3"] == pytest.approx((0.04 + 0.045) / 2)


def test_tstr_auc_learns_from_the_synthetic_table_and_scores_on_held_out_rows():
    pytest.importorskip("benchmarks.utility")
    from benchmarks.utility import target_of, tstr_auc

    rng = np.random.default_rng(0)
    x = rng.choice(["a", "b", "c"], 600)
    noise = rng.choice(["u", "v"], 600)
    y = np.where(x == "a", ">50K", "<=50K")
    table = pd.DataFrame({"x": x, "noise": noise, "income": y}, dtype=object)
    train, test = table.iloc[:400], table.iloc[400:]
    assert tstr_auc(train, test, "income", ">50K") == pytest.approx(1.0)
    # a synthetic table that lost the dependence predicts no better than chance
    shuffled = train.assign(x=rng.permutation(train["x"].to_numpy()))
    assert tstr_auc(shuffled, test, "income", ">50K") < 0.65
    # values the synthetic table lacks and missing cells are missing to the classifier
    odd = test.assign(x=np.where(np.arange(len(test)) % 2, "zzz", test["x"]))
    odd.loc[odd.index[:10], "noise"] = np.nan
    assert 0.5 <= tstr_auc(train, odd, "income", ">50K") <= 1.0
    # one class only: no classifier, no AUC
    assert tstr_auc(train.assign(income="<=50K"), test, "income", ">50K") is None
    assert target_of("adult@2000") == ("income", ">50K")
    assert target_of("nist_ma") is None


def test_split_holds_out_the_rows_of_the_source_table_outside_the_subset(monkeypatch):
    pytest.importorskip("benchmarks.datasets")
    from benchmarks import datasets

    full = pd.DataFrame({"a": [str(i) for i in range(50)], "b": ["x", "y"] * 25}, dtype=object)
    monkeypatch.setitem(datasets.DATASETS, "toy", lambda: full.copy())
    subset, rest = datasets.split("toy@20")
    assert len(subset) == 20 and len(rest) == 30
    assert sorted(subset["a"].tolist() + rest["a"].tolist()) == sorted(full["a"].tolist())
    assert datasets.load("toy@20").equals(subset)
    whole, none = datasets.split("toy")
    assert whole.equals(full) and none is None
    assert datasets.table_argument("toy@20") == "toy@20"
    for bad in ("toy@0", "toy@x", "nope"):
        with pytest.raises(Exception, match="expected one of"):
            datasets.table_argument(bad)


def test_google_domain_is_the_declared_mode_categories():
    pytest.importorskip("benchmarks.google_runners")
    from benchmarks.google_runners import google_domain
    from benchmarks.reference_runners import MISSING

    df = pd.DataFrame({"a": ["y", "x", None, "x"], "b": ["1", "2", "2", "1"]}, dtype=object)
    assert google_domain(df) == {"a": ["x", "y", MISSING], "b": ["1", "2"]}


def test_reference_summary_and_planning_of_the_google_runs(tmp_path, capsys):
    pytest.importorskip("benchmarks.run_reference")
    from benchmarks.run_reference import main, summarize

    def record(seed, tvd3, auc):
        return {"runner": "run_google_aim_gdp", "dataset": "adult@2000",
                "params": {"epsilon": 1.0, "seed": seed}, "fit_seconds": 100.0,
                "peak_rss_mb": 900.0, "mean_tvd": {"1": 0.0, "2": 0.0, "3": tvd3},
                "model_tvd": {"1": 0.0, "2": 0.0, "3": tvd3 / 2}, "tstr_auc": auc,
                "epsilon_spent": {"pld": 0.9, "rdp": 0.95}}

    (entry,) = summarize([record(0, 0.2, 0.8), record(1, 0.4, 0.7)])
    assert entry["seeds"] == [0, 1]
    assert entry["mean"]["tvd_3"] == pytest.approx(0.3)
    assert entry["mean"]["model_tvd_3"] == pytest.approx(0.15)
    assert entry["mean"]["tstr_auc"] == pytest.approx(0.75)
    assert entry["mean"]["epsilon_spent"] == pytest.approx(0.9)
    main(["--output", str(tmp_path / "r.json"), "--dry-run", "--datasets", "adult@100",
          "--epsilons", "1", "--seeds", "0", "1"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "6 runs to make"
    assert {line.split()[0] for line in lines[1:]} == {
        "run_google_aim_gdp", "run_google_swift", "run_google_mst"}


def _peer_run(runner, dataset, seed, tvd3, **extra):
    params = {"epsilon": 1.0, "seed": seed} if seed is not None else {
        "epsilon": 1.0, "reporting_length": 3}
    return {"runner": runner, "dataset": dataset, "params": params, "fit_seconds": 100.0,
            "sample_seconds": 0.0, "peak_rss_mb": 900.0,
            "mean_tvd": {"1": 0.01, "2": 0.02, "3": tvd3}, **extra}


def _dpsynth_run(dataset, method, seed, tvd3, **extra):
    return {"dataset": dataset, "method": method, "epsilon": 1.0, "seed": seed,
            "fit_seconds": 1.0, "sample_seconds": 0.5, "fit_cpu_seconds": 1.0,
            "peak_rss_mb": 250.0 + seed, "tvd": {"1": 0.01, "2": 0.02, "3": tvd3}, **extra}


def test_reference_page_puts_dpsynth_beside_the_peers_with_auc_and_memory(tmp_path, capsys):
    pytest.importorskip("benchmarks.run_reference")
    from benchmarks.run_reference import main

    google = {"model_tvd": {"1": 0.0, "2": 0.0, "3": 0.15},
              "epsilon_spent": {"pld": 0.9, "rdp": 1.0}}
    runs = [_peer_run("run_google_aim_gdp", "adult@2000", 0, 0.2, tstr_auc=0.8, **google),
            _peer_run("run_google_aim_gdp", "adult@2000", 1, 0.4, tstr_auc=0.7, **google),
            _peer_run("run_pacsynth", "adult@2000", None, 0.5, tstr_auc=0.6)]
    saved = {"environment": {"python": "3.12"}, "runs": runs, "summary": [],
             "datasets": {"adult@2000": {"rows": 2000, "tstr_auc_real": 0.88}}}
    (tmp_path / "reference.json").write_text(json.dumps(saved))
    (tmp_path / "workload.json").write_text(json.dumps({"records": [
        _dpsynth_run("adult@2000", "declared", 0, 0.1, tstr_auc=0.85),
        _dpsynth_run("adult@2000", "declared", 1, 0.12, tstr_auc=0.83),
        _dpsynth_run("adult@2000", "default", 0, 0.2, tstr_auc=None)]}))
    main(["--output", str(tmp_path / "reference.json"), "--report-only"])
    assert "wrote the summary" in capsys.readouterr().out
    rewritten = json.loads((tmp_path / "reference.json").read_text())
    assert rewritten["runs"] == runs and rewritten["environment"] == saved["environment"]
    assert {e["runner"] for e in rewritten["summary"]} == {"run_google_aim_gdp",
                                                          "run_pacsynth"}
    page = (tmp_path / "reference.md").read_text().splitlines()
    header = [cell.strip() for cell in page[0].strip("|").split("|")]
    rows = [[cell.strip() for cell in line.strip("|").split("|")]
            for line in page[2:] if line.startswith("| adult@2000")]

    def column(row, name):
        return row[header.index(name)]

    # dpsynth first, in run_workload's order, then the peers; each with its TSTR AUC
    # and peak memory; a one-class synthetic table (AUC None) leaves the mean out
    assert [row[2] for row in rows] == ["dpsynth default", "dpsynth, categories declared",
                                        "Google AIM-GDP", "pac-synth"]
    assert column(rows[0], "TSTR AUC") == "-" and column(rows[0], "peak MB") == "250"
    assert column(rows[1], "TSTR AUC") == "0.840 ± 0.014"
    assert column(rows[1], "peak MB") == "250 ± 1"
    assert column(rows[2], "TSTR AUC") == "0.750 ± 0.071"
    assert column(rows[2], "peak MB") == "900 ± 0"
    assert column(rows[2], "ε spent") == "0.900 ± 0.000"
    assert column(rows[2], "model TVD 3-way") == "0.150 ± 0.000"
    assert column(rows[3], "TSTR AUC") == "0.600" and column(rows[3], "seeds") == "-"
    assert "The same classifier trained on the real subset: adult@2000 0.880." in page


def test_workload_records_the_tstr_auc_on_subsets_of_tables_with_a_target():
    pytest.importorskip("benchmarks.run_workload")
    from benchmarks.run_workload import summarize
    from benchmarks.utility import target_of

    assert target_of("adult_pgm@2000") == ("income>50K", "1")
    summary = summarize([_dpsynth_run("adult@1000", "default", 0, 0.3, tstr_auc=0.8),
                         _dpsynth_run("adult@1000", "default", 1, 0.3, tstr_auc=0.7),
                         _dpsynth_run("adult@1000", "sds", 0, 0.3, tstr_auc=None)])
    assert summary[("adult@1000", 1.0, "default")]["mean"]["tstr_auc"] == pytest.approx(0.75)
    assert "tstr_auc" not in summary[("adult@1000", 1.0, "sds")]["mean"]
    assert summary[("adult@1000", 1.0, "sds")]["mean"]["peak_rss_mb"] == 250.0


def test_reference_summary_keys_every_peer_by_runner(tmp_path):
    pytest.importorskip("benchmarks.run_reference")
    from benchmarks.run_workload import reference_summary

    path = tmp_path / "reference.json"
    path.write_text(json.dumps({"runs": [
        _peer_run("run_google_swift", "pums", 0, 0.2,
                  epsilon_spent={"pld": 0.89, "rdp": 1.0}),
        _peer_run("run_pacsynth", "pums", None, 0.5),
        {**_peer_run("run_aim", "pums", 0, 0.25),
         "params": {"epsilon": 1.0, "rounds": 42, "seed": 0}},
        {**_peer_run("run_mst", "pums", 0, 0.3),
         "params": {"epsilon": 1.0, "seed": 0, "sampling": "round"}}]}))
    summary = reference_summary(path)
    assert set(summary) == {("pums", 1.0, "run_google_swift"), ("pums", 1.0, "run_pacsynth"),
                            ("pums", 1.0, "run_aim")}  # MST by "round" is no column
    assert summary[("pums", 1.0, "run_google_swift")]["mean"]["epsilon_spent"] == 0.89
    assert summary[("pums", 1.0, "run_google_swift")]["mean"]["epsilon_spent_rdp"] == 1.0
    assert summary[("pums", 1.0, "run_pacsynth")]["seeds"] == [None]


def test_discovery_floor_counts_the_records_of_values_below_the_threshold():
    pytest.importorskip("benchmarks.run_discovery_floor")
    from benchmarks.run_discovery_floor import floor, threshold

    frame = pd.DataFrame({"a": ["x"] * 90 + ["y"] * 10,
                          "b": ["z"] * 95 + [None] * 5}, dtype=object)
    # noise far below the counts: "y" (10 records) is never released, "x" always;
    # the missing code is public, so b's missing records are never unmatched
    bound = floor(frame, scale=1e-6, tau=50.0)
    assert bound == pytest.approx({"1": 0.05, "2": 0.10})  # no 3-way set of 2 columns
    assert floor(frame, scale=1e-6, tau=5.0)["2"] == pytest.approx(0.0)
    # a count at the threshold is released half of the time
    assert floor(frame, scale=3.0, tau=10.0)["1"] == pytest.approx(0.025)
    scale, tau = threshold(4, 0.05, 1e-5)
    wider, higher = threshold(4, 0.0125, 1e-5)
    assert scale > 0 and higher > tau > 1.0 and wider == pytest.approx(2 * scale, rel=1e-3)
def _blocks(text):
    """``(kind, lines)`` of every ``.. code-block:: kind`` of an .rst text."""
    out, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(".. code-block::"):
            body, j = [], i + 2
            while j < len(lines) and (lines[j].startswith("   ") or not lines[j].strip()):
                body.append(lines[j][3:])
                j += 1
            while body and not body[-1].strip():
                body.pop()
            out.append((line.split("::")[1].strip(), body))
    return out


_FIGURE = re.compile(r"-?\d+(?:\.\d+)?%?")


def _assert_same_output(lines, expected, command):
    """``lines`` are the page's ``expected`` lines: the same words, and the same
    figures up to the last bits of floating point (NumPy's and OpenBLAS's kernels
    depend on the CPU: a fidelity figure may move by a unit of its last digit or
    two between machines; counts and every word must match)."""
    assert len(lines) == len(expected), (command, lines)
    for line, want in zip(lines, expected):
        assert _FIGURE.sub("#", line) == _FIGURE.sub("#", want), (command, line, want)
        for got, figure in zip(_FIGURE.findall(line), _FIGURE.findall(want)):
            if "." not in figure:  # counts, sizes: exact
                assert got == figure, (command, line, want)
            else:
                a, b = float(got.rstrip("%")), float(figure.rstrip("%"))
                assert math.isclose(a, b, rel_tol=0.03, abs_tol=0.0015), (command, line, want)


def test_the_csv_tutorial_is_literally_true(tmp_path, monkeypatch, capsys):
    # every command of doc/tutorial_csv.rst run as written (--seed 0 added, as the
    # page says), on the people.csv it generates: the output is the page's
    from dpsynth.cli import main

    monkeypatch.chdir(tmp_path)
    blocks = _blocks((ROOT / "doc" / "tutorial_csv.rst").read_text())
    schema = next(body for kind, body in blocks if kind == "json")
    (tmp_path / "schema.json").write_text("\n".join(schema))
    ran = 0
    for kind, body in blocks:
        if kind != "console":
            continue
        command = body[0].removeprefix("$ ").split()
        if "-n" in command:  # the 250,000-record sample: its progress lines only
            continue
        assert command[0] == "dpsynth"
        args = command[1:]
        if args[0] in ("aggregate", "sample"):
            args += ["--seed", "0"]
        assert main(args) == 0
        _assert_same_output(capsys.readouterr().out.splitlines(), body[1:], " ".join(command))
        ran += 1
    assert ran == 4
    texts = [body for kind, body in blocks if kind == "text"]
    people = (tmp_path / "people.csv").read_text().splitlines()
    assert texts[0][:-1] == people[:len(texts[0]) - 1] and texts[0][-1] == "..."
    # the synthetic records shown: the header, and records of the same fields (which
    # records a seed draws depends on the CPU's floating point, see _assert_same_output)
    synthetic = (tmp_path / "synthetic.csv").read_text().splitlines()[:len(texts[1])]
    assert synthetic[0] == texts[1][0]
    assert [line.count(",") for line in synthetic] == [line.count(",") for line in texts[1]]
    # the ZIP-code story: 59 of 69 codes held by fewer than five people (3% of
    # records), about 3.4% of the synthetic records with the other value
    real = pd.read_csv(tmp_path / "people.csv", dtype=str, keep_default_na=False)
    counts = real["zip"].value_counts()
    assert (len(counts), int((counts < 5).sum())) == (69, 59)
    assert real["zip"].isin(counts[counts < 5].index).mean() == pytest.approx(0.03, abs=0.005)
    fake = pd.read_csv(tmp_path / "synthetic.csv", dtype=str, keep_default_na=False)
    assert (fake["zip"] == "<other>").mean() == pytest.approx(0.034, abs=0.005)
