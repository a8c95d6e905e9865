"""Tests of dpsynth.report: binned views, fidelity summaries and the HTML report."""

import base64
import html
import io
import logging
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping

import numpy as np
import pandas as pd
import pytest

from dpsynth.preprocessing import TableEncoder
from dpsynth.report import FidelitySummary, binned_view, fidelity_summary, write_report

_IMAGE = re.compile(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"')


@pytest.fixture(scope="module")
def tables():
    """A real table and a noisy copy of it, with an ordered binned column and nulls."""
    rng = np.random.default_rng(0)
    n = 500
    a = rng.choice(["p", "q", "r", "s"], n)
    b = np.where(a == "p", "x", rng.choice(["x", "y", "z"], n))
    age = pd.Categorical(rng.choice(["[0, 29]", "[30, 59]", "[60, 99]"], n),
                         categories=["[0, 29]", "[30, 59]", "[60, 99]"], ordered=True)
    city = pd.Series(rng.choice(["north", "south", None], n), dtype=object)
    real = pd.DataFrame({"a": a, "b": b, "age": age, "city": city})
    synth = real.sample(frac=1.0, random_state=1, ignore_index=True)
    synth["b"] = rng.permutation(synth["b"].to_numpy())  # breaks the a-b relation
    return real, synth


@pytest.fixture
def no_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)


def _images(page):
    return [base64.b64decode(data) for data in _IMAGE.findall(page)]


def _image_shape(png):
    image = pytest.importorskip("matplotlib.image")
    return image.imread(io.BytesIO(png), format="png").shape


# -------------------------------------------------------------- binned_view
def test_binned_view_uses_bin_labels():
    X = pd.DataFrame({"age": [3, 45, 99, None], "job": ["a", "b", "a", "c"]})
    X["age"] = X["age"].astype("Int64")
    encoder = TableEncoder(bounds={"age": (0, 99)}, n_bins=3).fit(X[["age"]])
    view = binned_view(X, encoder)
    labels = list(encoder.schema_[0].values)
    assert view["age"].dtype == pd.CategoricalDtype(labels, ordered=True)
    assert view["age"].tolist()[:3] == [labels[0], labels[1], labels[2]]
    assert pd.isna(view["age"].iloc[3])
    assert view["job"].equals(X["job"])  # columns the encoder does not bin are kept
    assert X["age"].dtype == "Int64"  # the input is not modified


def test_binned_view_tolerates_unknown_categories():
    X = pd.DataFrame({"hours": [10, 50], "kind": ["u", "v"]})
    encoder = TableEncoder(bounds={"hours": (0, 100)}, n_bins=2).fit(X)
    other = pd.DataFrame({"hours": [90, 1], "kind": ["w", "u"]})  # "w" unseen at fit
    view = binned_view(other, encoder)
    assert view["hours"].tolist() == [list(encoder.schema_[0].values)[1],
                                      list(encoder.schema_[0].values)[0]]
    assert view["kind"].tolist() == ["w", "u"]


# --------------------------------------------------------- fidelity_summary
def test_fidelity_summary_hand_computed():
    real = pd.DataFrame({"a": [0, 0, 1, 1], "b": ["x", "y", "x", "y"]})
    synth = pd.DataFrame({"a": [0, 0, 0, 1], "b": ["x", "x", "y", "y"]})
    summary = fidelity_summary(real, synth)
    assert summary.tvd.to_dict() == {1: 0.125, 2: 0.25}  # clamped to 2 columns
    assert summary.columns.to_dict("list") == {"column": ["a", "b"], "tvd": [0.25, 0.0]}
    assert summary.k_marginal == pytest.approx(750.0)
    assert summary.by_length["length"].tolist() == [1, 2]
    assert summary.by_length["fabricated_pct"].tolist() == [0.0, 0.0]
    assert summary.by_length["suppressed_pct"].tolist() == [0.0, 25.0]  # (a=1, b=x)
    assert summary.real_counts[(("a", 0), ("b", "x"))] == 1
    assert summary.synth_counts[(("a", 0), ("b", "x"))] == 2
    assert (summary.n_real, summary.n_synth) == (4, 4)
    assert "2-way 0.2500" in repr(summary)


def test_fidelity_summary_identical_tables(tables):
    real, _ = tables
    summary = fidelity_summary(real, real.copy(), reporting_length=3)
    assert summary.tvd.tolist() == [0.0, 0.0, 0.0]
    assert summary.k_marginal == 1000.0
    assert summary.by_length["mean_abs_error"].tolist() == [0.0, 0.0, 0.0]
    assert summary.real_counts == summary.synth_counts


def test_fidelity_summary_sees_the_broken_relation(tables):
    real, synth = tables
    summary = fidelity_summary(real, synth)
    assert summary.tvd[1] == pytest.approx(0.0)  # same 1-way marginals
    assert summary.tvd[2] > 0.05
    assert summary.by_length["fabricated_pct"].iloc[1] > 0  # (a=p, b=y) is not real


def test_fidelity_summary_reorders_columns(tables):
    real, synth = tables
    summary = fidelity_summary(real, synth[["city", "age", "b", "a"]], reporting_length=2)
    assert summary.tvd[1] == pytest.approx(0.0)
    assert summary.by_length["suppressed_pct"].iloc[0] == 0.0


def test_fidelity_summary_single_column():
    real = pd.DataFrame({"a": ["x", "y", "y"]})
    summary = fidelity_summary(real, pd.DataFrame({"a": ["x", "x", "y"]}))
    assert summary.k_marginal is None
    assert summary.tvd.to_dict() == {1: pytest.approx(1 / 3)}


def test_fidelity_summary_checks_its_input(tables):
    real, synth = tables
    with pytest.raises(ValueError, match="reporting_length"):
        fidelity_summary(real, synth, reporting_length=0)
    with pytest.raises(TypeError, match="DataFrames"):
        fidelity_summary(real.to_numpy(), synth)


# ------------------------------------------------------------- write_report
def test_report_with_plots(tables, tmp_path):
    pytest.importorskip("matplotlib")
    real, synth = tables
    path = tmp_path / "report.html"
    privacy = {"epsilon": 4.0, "delta": 1e-5, "rho": 0.3, "public_universe": True,
               "contribution_bounds": {1: 4, 2: 6}, "thresholds": {1: 0.0, 2: 1.5}}
    summary = write_report(real, synth, path, reporting_length=2, title="A & B",
                           privacy=privacy, max_columns=3)
    assert isinstance(summary, FidelitySummary)
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<title>A &amp; B</title>" in page
    assert "<h2>Privacy</h2>" in page and "contribution_bounds" in page
    assert "not</b> a differentially private release" in page
    assert f"{summary.k_marginal:.1f} / 1000" in page
    images = _images(page)
    assert len(images) == 3  # counts, errors by length, column distributions
    shapes = []
    for png in images:
        assert png.startswith(b"\x89PNG")
        shapes.append(_image_shape(png)[:2])
    assert all(height > 200 and width > 300 for height, width in shapes)
    assert shapes[2][0] < 400  # max_columns=3: one row of column charts (4 need two)
    assert "matplotlib is not installed" not in page


def test_report_without_matplotlib(tables, tmp_path, no_matplotlib):
    real, synth = tables
    path = tmp_path / "report.html"
    write_report(real, synth, path)
    page = path.read_text(encoding="utf-8")
    assert "matplotlib is not installed" in page
    assert "<img" not in page
    assert "<h2>Privacy</h2>" not in page  # no privacy given
    # TVD by k, quality scores, column shapes, errors by length, columns
    assert page.count("<table") == 5
    assert "Quality report (SDMetrics-style)" in page and "Column Pair Trends" in page


def test_report_is_self_contained(tables, tmp_path, no_matplotlib):
    real, synth = tables
    path = tmp_path / "report.html"
    write_report(real, synth, path)
    page = path.read_text(encoding="utf-8")
    assert "<style>" in page
    for external in ("http://", "https://", "<script", "<link"):
        assert external not in page


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_report_renders_in_a_headless_browser(tables, tmp_path):
    image = pytest.importorskip("matplotlib.image")
    real, synth = tables
    page = tmp_path / "report.html"
    write_report(real, synth, page)
    shot = tmp_path / "shot.png"
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", f"--screenshot={shot}", "--window-size=1200,2400",
                    page.as_uri()], capture_output=True, timeout=120, check=True)
    pixels = image.imread(shot)
    assert pixels.shape[:2] == (2400, 1200)
    colors = pixels[..., :3].reshape(-1, 3)
    assert colors.std() > 0.05  # text, tables and plots were drawn
    plotted = np.abs(colors[:, 2] - colors[:, 0]) > 0.3  # blue bars of the plots
    assert plotted.mean() > 0.001


class _ReadOnlyPrivacy(Mapping):
    """A read-only mapping like the coming ``PrivacySpent``."""

    def __init__(self, data):
        self._data = data

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)


def test_report_privacy_section_of_a_release(tables, tmp_path, no_matplotlib):
    from dpsynth import DPMarginalSynthesizer

    real, synth = tables
    encoder = TableEncoder(categories={"a": ["p", "q", "r", "s"]})
    release = DPMarginalSynthesizer(encoder=encoder, random_state=0).fit(
        real[["a", "b"]]).aggregates_
    path = tmp_path / "report.html"
    write_report(real[["a", "b"]], synth[["a", "b"]], path, release=release)
    page = path.read_text(encoding="utf-8")
    assert "<h2>Privacy</h2>" in page
    for name in ("epsilon_records", "epsilon_marginals", "epsilon_binning", "rho"):
        assert f"<td>{name}</td>" in page
    assert "declared (public)" in page  # column a
    assert "released by the DP mechanism" in page  # column b
    privacy = _ReadOnlyPrivacy({**release.privacy,
                                "thresholds": _ReadOnlyPrivacy({1: 0.5, 2: 1.5})})
    write_report(real, synth, path, privacy=privacy)
    page = path.read_text(encoding="utf-8")
    assert "By combination length" in page and "thresholds" in page


def test_report_shows_the_privacy_curve_and_the_ledger(tables, tmp_path):
    pytest.importorskip("matplotlib")
    from dpsynth import DPMarginalSynthesizer
    from dpsynth.report import privacy_curve

    real, synth = tables
    fitted = DPMarginalSynthesizer(epsilon=2.0, random_state=0).fit(real[["a", "b"]])
    spent = fitted.privacy_spent_
    deltas, epsilons = privacy_curve(spent)
    assert len(deltas) > 10 and np.all(np.diff(epsilons) < 0)  # larger delta, smaller epsilon
    assert deltas[0] < spent.delta < deltas[-1]
    path = tmp_path / "report.html"
    write_report(real[["a", "b"]], synth[["a", "b"]], path, release=fitted.aggregates_)
    page = path.read_text(encoding="utf-8")
    assert "privacy curve" in page and page.count("<img") >= 2
    for row in spent.ledger():  # every mechanism, with its mechanism name
        assert row["name"] in html.unescape(page)  # "numeric column 'a': ..." quoted
    assert "<td>discrete_gaussian</td>" in page and "<td>gaussian</td>" not in page
    assert "share of the budget" in page


def test_report_is_written_atomically(tables, tmp_path, no_matplotlib, monkeypatch):
    import dpsynth.report

    real, synth = tables
    path = tmp_path / "report.html"
    path.write_text("old report")

    def broken_open(file, mode="r", **kwargs):
        handle = open(file, mode, **kwargs)
        handle.write("<!DOCTYPE html> half a pa")
        handle.close()
        raise OSError("disk full")

    monkeypatch.setattr(dpsynth.report, "open", broken_open, raising=False)
    with pytest.raises(OSError, match="disk full"):
        write_report(real, synth, path)
    assert path.read_text() == "old report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_fidelity_summary_reports_progress(tables, caplog):
    real, synth = tables
    with caplog.at_level(logging.INFO, logger="dpsynth"):
        fidelity_summary(real, synth, reporting_length=2)
    steps = [r.dpsynth_progress for r in caplog.records]
    assert steps[0] == (0, 5, "evaluation") and steps[-1] == (5, 5, "evaluation")
    assert [done for done, _, _ in steps] == sorted(done for done, _, _ in steps)


# ------------------------------------------- numeric columns, leaks (#17)
def _spiky_release():
    import warnings

    from dpsynth import DPMarginalSynthesizer

    rng = np.random.default_rng(5)
    n = 3000
    real = pd.DataFrame({
        "gain": np.where(rng.random(n) < 0.9, 0, rng.integers(1, 100_000, n)),
        "hours": np.where(rng.random(n) < 0.5, 40, rng.integers(1, 100, n)),
        "kind": rng.choice(["a", "b", "c"], n)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        encoder = TableEncoder(bounds={"gain": (0, 99_999), "hours": "data"},
                               special_values={"gain": [0]})
        synth = DPMarginalSynthesizer(encoder=encoder, random_state=0).fit(real)
    return real, synth


def test_wasserstein_numeric_sees_a_lost_spike():
    from dpsynth.metrics import value_shares, wasserstein_numeric

    real = pd.DataFrame({"v": np.r_[np.zeros(900), np.linspace(0, 100, 100)]})
    spread = pd.DataFrame({"v": np.linspace(0, 100, 1000)})
    assert wasserstein_numeric(real, real)["v"] == 0.0
    w1 = wasserstein_numeric(real, spread, ranges={"v": (0, 100)})["v"]
    assert 0.3 < w1 < 0.5  # mass at 0 moved on average ~40% of the range
    shares = value_shares(real, spread, {"v": [0]})
    assert shares.loc[0, "real"] == pytest.approx(0.901)
    assert shares.loc[0, "synthetic"] == pytest.approx(0.001)
    with pytest.raises(TypeError, match="not numeric"):
        wasserstein_numeric(pd.DataFrame({"v": ["a"]}), pd.DataFrame({"v": ["b"]}),
                            columns=["v"])


def test_summary_compares_numeric_columns_on_the_original_scale():
    real, synth = _spiky_release()
    fake = synth.sample()
    summary = fidelity_summary(real, fake, reporting_length=2,
                               encoder=synth.aggregates_.encoder)
    assert set(summary.numeric["column"]) == {"gain", "hours"}
    assert summary.numeric["W1 / range"].between(0, 0.2).all()
    assert list(summary.quantiles.columns[2:]) == ["5%", "25%", "50%", "75%", "95%", "mean"]
    shares = summary.special_shares.set_index("column")
    assert shares.loc["gain", "real"] == pytest.approx((real["gain"] == 0).mean())
    assert abs(shares.loc["gain", "difference"]) < 0.05
    # the marginals are still compared bin by bin
    assert summary.tvd[1] < 0.1


def test_report_shows_numeric_histograms_quantiles_and_leak_warning(tmp_path):
    real, synth = _spiky_release()
    path = tmp_path / "report.html"
    write_report(real, synth.sample(), path, reporting_length=2, release=synth.aggregates_,
                 encoder=synth.aggregates_.encoder)
    page = path.read_text()
    assert "Numeric columns on their original scale" in page
    assert "W1 / range" in page and "95%" in page
    assert "special or frequent value" in page
    assert "PrivacyLeakWarning" in page and "bounds=&#x27;data&#x27;" in page
    assert "LEAKED (not DP)" in page
    assert "pip install dpsynth[plots]" not in page


def test_summary_and_report_compare_dates_and_durations_through_the_release(tmp_path):
    # a datetime64 / timedelta64 column made W1 raise "not numeric", and a column of
    # dates written as text made the report's histograms raise (its text read as floats)
    import warnings

    from dpsynth import DPMarginalSynthesizer

    rng = np.random.default_rng(1)
    n = 2000
    days = pd.to_timedelta(rng.integers(0, 400, n), unit="D")
    real = pd.DataFrame({"code": rng.choice([1, 2, 3], n),
                         "when": pd.Timestamp("2021-01-01") + days,
                         "dur": pd.to_timedelta(rng.integers(0, 100, n), unit="h"),
                         "day": (pd.Timestamp("2020-01-01") + days).strftime("%Y-%m-%d")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = DPMarginalSynthesizer(epsilon=1, random_state=0).fit(real)
    encoder = synth.aggregates_.encoder
    assert encoder.schema_[3].binning.date_format == "%Y-%m-%d"  # the text-date path
    fake = synth.sample()
    summary = fidelity_summary(real, fake, reporting_length=2, encoder=encoder)
    assert {"when", "dur", "day"} <= set(summary.numeric["column"])
    assert summary.numeric["W1 / range"].between(0, 0.2).all()
    path = tmp_path / "report.html"
    write_report(real, fake, path, reporting_length=2, encoder=encoder)
    assert "Numeric columns on their original scale" in path.read_text()


def test_fidelity_summary_samples_the_column_sets_of_a_wide_table(caplog):
    # 300 columns have 4.5 million sets of 3 and billions of combinations of length 3:
    # `dpsynth evaluate` on a wide CSV ran out of time and memory; past max_subsets
    # the marginals, the score and the combination counts share one seeded sample
    from math import comb

    from dpsynth.metrics import combination_counts, marginal_tvd

    rng = np.random.default_rng(0)
    real = pd.DataFrame(rng.integers(0, 3, (200, 12)), columns=[f"c{j}" for j in range(12)])
    synth = pd.DataFrame(rng.integers(0, 3, (150, 12)), columns=real.columns)
    summary = fidelity_summary(real, synth, reporting_length=3, max_subsets=50)
    assert summary.sampled == {2: (50, comb(12, 2)), 3: (50, comb(12, 3))}
    assert "50 of the 220 sets of 3 columns" in summary.sampling_note()
    assert summary.tvd[1] == pytest.approx(marginal_tvd(real, synth, 1))  # 12 sets: all
    assert summary.tvd[3] == pytest.approx(
        marginal_tvd(real, synth, 3, max_subsets=50, random_state=0))
    lengths = {len(c) for c in summary.real_counts}
    assert lengths == {1, 2, 3}
    sets = {tuple(col for col, _ in c) for c in summary.real_counts if len(c) == 3}
    assert len(sets) == 50 and sets == {tuple(col for col, _ in c)
                                        for c in summary.synth_counts if len(c) == 3}
    # every set compared when asked, and by default on a table this narrow
    full = fidelity_summary(real, synth, reporting_length=3, max_subsets=None)
    assert full.sampled == {} and full.sampling_note() == ""
    assert full.real_counts == combination_counts(real, 3, missing="category")
    assert fidelity_summary(real, synth, reporting_length=3).sampled == {}
    with pytest.raises(ValueError, match="max_subsets must be a positive integer"):
        fidelity_summary(real, synth, max_subsets=0)
