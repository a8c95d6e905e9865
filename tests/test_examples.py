"""Every script in examples/ runs (in fast mode) and prints its results."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# what each example must print; a new example must be added here
EXPECTED = {
    "plot_end_to_end.py": ["mean TVD of 3-way marginals", "more records from the released file"],
    "plot_privacy_utility_curve.py": ["mean TVD by epsilon", "independent columns"],
    "plot_tstr_pipeline.py": ["train on synthetic (epsilon", "privacy budget spent"],
    "plot_local_dp.py": ["local DP (CALM): epsilon=2.0", "mean SSE of the 3-way marginals"],
    "plot_conditional_sampling.py": ["conditional sample: 500 records, digits [3]",
                                     "violations in the synthetic records: [0, 0]",
                                     "quality score"],
}

# runs the script with `import matplotlib` failing, as if it were not installed
_WITHOUT_MATPLOTLIB = ("import runpy, sys; sys.modules['matplotlib'] = None; "
                       "runpy.run_path(sys.argv[1], run_name='__main__')")


def _run(args):
    env = dict(os.environ, DPSYNTH_EXAMPLE_FAST="1", MPLBACKEND="Agg")
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          timeout=120, cwd=EXAMPLES)


def _skip_if_unavailable(name):
    if name == "plot_tstr_pipeline.py" and importlib.util.find_spec(
            "dpsynth.model_selection") is None:
        pytest.skip("dpsynth.model_selection (TrainOnSynthetic) is not available")


def test_every_example_is_tested():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs(name):
    _skip_if_unavailable(name)
    result = _run([str(EXAMPLES / name)])
    assert result.returncode == 0, result.stderr
    for text in EXPECTED[name]:
        assert text in result.stdout
    # an example shows good practice: none trips the library's privacy warnings
    assert "PrivacyLeakWarning" not in result.stderr


def test_example_runs_without_matplotlib():
    # every example guards its plots the same way; one run checks the pattern
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib is not installed: test_example_runs covers this case")
    name = "plot_end_to_end.py"
    result = _run(["-c", _WITHOUT_MATPLOTLIB, str(EXAMPLES / name)])
    assert result.returncode == 0, result.stderr
    assert EXPECTED[name][0] in result.stdout


def test_headless_example_saves_its_figure(tmp_path):
    """Without a display an example draws with Agg and saves the figure (issue #17, 8)."""
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib is not installed")
    env = dict(os.environ, DPSYNTH_EXAMPLE_FAST="1", DPSYNTH_EXAMPLE_OUTPUT=str(tmp_path))
    env.pop("DISPLAY", None)
    env.pop("MPLBACKEND", None)
    name = "plot_end_to_end.py"
    result = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True,
                            text=True, env=env, timeout=120, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "plot_end_to_end.png").is_file()
    assert "saved the figure to" in result.stdout


def test_gallery_is_configured():
    """The docs build the examples with sphinx-gallery (figures shown in the docs)."""
    root = EXAMPLES.parent
    conf = (root / "doc" / "conf.py").read_text()
    assert "sphinx_gallery.gen_gallery" in conf and "auto_examples" in conf
    assert (EXAMPLES / "README.txt").is_file()
    assert "sphinx-gallery" in (root / "pyproject.toml").read_text()
