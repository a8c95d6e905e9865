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
