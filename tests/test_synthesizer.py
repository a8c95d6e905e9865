"""Tests of the main estimator, DPMarginalSynthesizer: parameters, fitted state, sampling."""

import logging

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from dpsynth import DPAggregates, DPMarginalSynthesizer, PrivacySpent, Schema
from dpsynth.preprocessing import TableEncoder
from dpsynth.sampling import AggregateSeededSampler, MarginalMatchingSampler


def _table(n=800, seed=0):
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 3, n)
    return pd.DataFrame({
        "color": np.array(["red", "green", "blue"])[group],
        "size": np.array(["S", "M", "L"])[(group + rng.integers(0, 2, n)) % 3],
        "age": (group * 20 + rng.integers(0, 20, n)).astype(np.int64),
    })


def _encoder():
    return TableEncoder(bounds={"age": (0, 60)}, n_bins=6)


@pytest.mark.parametrize("params, name", [
    ({"epsilon": 0}, "epsilon"),
    ({"epsilon": -1.0}, "epsilon"),
    ({"epsilon": "4"}, "epsilon"),
    ({"delta": 0.5}, "delta"),
    ({"reporting_length": 0}, "reporting_length"),
    ({"percentile": 0}, "percentile"),
    ({"percentile_epsilon_proportion": 1.0}, "percentile_epsilon_proportion"),
    ({"accuracy_mode": "fast"}, "accuracy_mode"),
    ({"fabrication_mode": "never"}, "fabrication_mode"),
    ({"number_of_records_epsilon_proportion": 0.0}, "number_of_records_epsilon_proportion"),
    ({"synthesis": "magic"}, "synthesis"),
    ({"encoder": "table"}, "encoder"),
    ({"n_jobs": 0}, "n_jobs"),
    ({"random_state": "seed"}, "random_state"),
])
def test_bad_parameters_are_named_before_any_dp_step(params, name, monkeypatch):
    calls = []
    monkeypatch.setattr("dpsynth.synthesizer.laplace_count",
                        lambda *args: calls.append(args) or 0)
    with pytest.raises((ValueError, TypeError), match=name):
        DPMarginalSynthesizer(**params).fit(_table())
    assert calls == []  # no budget was spent


def test_init_stores_parameters_only_and_clone_round_trips():
    synth = DPMarginalSynthesizer(epsilon=2.0, encoder=_encoder(),
                                  synthesis=AggregateSeededSampler(90), random_state=3)
    params = synth.get_params()
    assert params["epsilon"] == 2.0 and params["synthesis__weight_selection_percentile"] == 90
    again = clone(synth)
    assert again.get_params()["synthesis"] is not synth.synthesis
    assert not hasattr(again, "aggregates_")


def test_fitted_attributes_come_from_the_release():
    synth = DPMarginalSynthesizer(encoder=_encoder(), random_state=0).fit(_table())
    assert isinstance(synth.aggregates_, DPAggregates)
    assert isinstance(synth.aggregates_.schema, Schema)
    assert isinstance(synth.privacy_spent_, PrivacySpent)
    assert synth.privacy_spent_ is synth.aggregates_.privacy
    assert synth.n_records_ == synth.aggregates_.n_records
    assert synth.reporting_length_ == 3 and synth.n_features_in_ == 3
    assert list(synth.feature_names_in_) == ["color", "size", "age"]
    assert synth.encoder_.schema_ is not synth.aggregates_.schema  # private vs public


def test_fit_encodes_the_table_once(monkeypatch):
    calls = []
    original = TableEncoder.transform

    def counting(self, X):
        calls.append(len(X))
        return original(self, X)

    monkeypatch.setattr(TableEncoder, "transform", counting)
    DPMarginalSynthesizer(encoder=_encoder(), random_state=0).fit(_table())
    assert calls == [800]


def test_the_encoder_parameter_is_never_fitted():
    encoder = _encoder()
    DPMarginalSynthesizer(encoder=encoder, random_state=0).fit(_table())
    assert not hasattr(encoder, "schema_")


def test_sample_types_shapes_and_dtypes():
    frame = _table()
    synth = DPMarginalSynthesizer(encoder=_encoder(), random_state=0).fit(frame)
    out = synth.sample(123)
    assert out.shape == (123, 3) and list(out.columns) == list(frame.columns)
    assert (out.dtypes == frame.dtypes).all()
    assert out["age"].between(0, 60).all()
    assert synth.sample().shape[0] == synth.n_records_
    arrays = DPMarginalSynthesizer(encoder=TableEncoder(), random_state=0).fit(
        frame[["color", "size"]].to_numpy())
    assert isinstance(arrays.sample(5), np.ndarray)


def test_sample_is_reproducible_and_independent_of_fit_noise():
    synth = DPMarginalSynthesizer(encoder=_encoder(), random_state=7).fit(_table())
    pd.testing.assert_frame_equal(synth.sample(50), synth.sample(50))
    other = synth.sample(50, random_state=8)
    assert not synth.sample(50).equals(other)


def test_unseeded_sampling_draws_fresh_entropy():
    synth = DPMarginalSynthesizer(encoder=_encoder()).fit(_table())
    np.random.seed(0)
    first = synth.sample(200)
    np.random.seed(0)
    assert not first.equals(synth.sample(200))


@pytest.mark.parametrize("synthesis", ["marginal_matching", "aggregate_seeded",
                                       MarginalMatchingSampler(sweeps=1),
                                       AggregateSeededSampler(use_synthetic_counts=True)])
def test_every_sampler_through_the_estimator(synthesis):
    synth = DPMarginalSynthesizer(encoder=_encoder(), synthesis=synthesis, random_state=0)
    out = synth.fit(_table()).sample(60)
    assert out.shape == (60, 3) and out.notna().all().all()
    assert synth.sampling_stats_["n_records"] == 60


def test_sampler_options_can_be_grid_searched():
    search = GridSearchCV(
        DPMarginalSynthesizer(epsilon=8.0, encoder=_encoder(),
                              synthesis=MarginalMatchingSampler(), random_state=0),
        {"synthesis__sweeps": [1, 2]}, cv=2)
    search.fit(_table())
    assert search.best_params_["synthesis__sweeps"] in (1, 2)


def test_from_aggregates_samples_without_private_state(tmp_path):
    synth = DPMarginalSynthesizer(encoder=_encoder(), random_state=0).fit(_table())
    synth.aggregates_.save(tmp_path / "agg.json")
    loaded = DPMarginalSynthesizer.from_aggregates(DPAggregates.load(tmp_path / "agg.json"),
                                                   random_state=4)
    assert not hasattr(loaded, "encoder_")
    pd.testing.assert_frame_equal(loaded.sample(30),
                                  synth.set_params(random_state=4).sample(30))
    with pytest.raises(TypeError, match="DPAggregates"):
        DPMarginalSynthesizer.from_aggregates({"not": "aggregates"})


def test_score_changes_nothing_and_names_renamed_columns():
    frame = _table()
    synth = DPMarginalSynthesizer(encoder=_encoder(), random_state=0).fit(frame)
    before = synth.aggregates_.schema
    score = synth.score(frame)
    assert 0 < score <= 1 and synth.aggregates_.schema is before
    with pytest.raises(ValueError, match="missing \\['age'\\]"):
        synth.score(frame.rename(columns={"age": "years"}))


def test_fit_with_a_target_returns_x_and_y():
    frame = _table()
    y = pd.Series(np.where(frame["color"] == "red", "yes", "no"), name="label")
    synth = DPMarginalSynthesizer(encoder=_encoder(), random_state=0).fit(frame, y)
    X_syn, y_syn = synth.sample(40)
    assert list(X_syn.columns) == list(frame.columns) and y_syn.name == "label"
    assert synth.aggregates_.target == "label"


@pytest.mark.parametrize("release, steps", [("sds", [0, 1, 2, 3]), ("workload", [0, 1])])
def test_progress_goes_to_the_dpsynth_logger(caplog, release, steps):
    with caplog.at_level(logging.INFO, logger="dpsynth"):
        DPMarginalSynthesizer(release=release, encoder=_encoder(), random_state=0).fit(
            _table()).sample(10)
    progress = [r.dpsynth_progress for r in caplog.records if hasattr(r, "dpsynth_progress")]
    assert progress[0] == (0, steps[-1], "marginals")
    assert [p[0] for p in progress if p[2] == "marginals"] == steps
    assert progress[-1] == (1, 1, "sampling")


def test_verbose_prints_one_line_per_length(capsys):
    DPMarginalSynthesizer(release="sds", encoder=_encoder(), random_state=0,
                          verbose=1).fit(_table())
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "[DPMarginalSynthesizer] length 1", "[DPMarginalSynthesizer] length 2",
        "[DPMarginalSynthesizer] length 3"]
