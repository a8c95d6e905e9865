"""Docs facts of issue #17 (item 9): generated quickstart numbers, install hints,
the docs command."""

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module(path, name):
    if not path.is_file():
        pytest.skip(f"{path} is not available")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quickstart_numbers_are_generated_from_the_benchmark_output():
    make = _module(ROOT / "benchmarks" / "make_quickstart_numbers.py", "_make_quickstart")
    records = json.loads((ROOT / "benchmarks" / "results" / "benchmarks.json").read_text())
    numeric_path = ROOT / "benchmarks" / "results" / "numeric.json"
    numeric = json.loads(numeric_path.read_text()) if numeric_path.is_file() else None
    committed = (ROOT / "doc" / "_generated" / "quickstart_numbers.rst").read_text()
    assert committed == make.benchmark_numbers(records, numeric), \
        "run python -m benchmarks.make_quickstart_numbers"
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
