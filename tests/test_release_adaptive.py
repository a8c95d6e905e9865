"""The workload-aware release through the estimator (``release="workload"``)."""

import json
import math

import numpy as np

from dpsynth.mechanisms import discrete_gaussian_mu
import pandas as pd
import pytest

from dpsynth import DPAggregates, DPMarginalSynthesizer
from dpsynth.aggregates import NoisyMarginal
from dpsynth.preprocessing import TableEncoder
from dpsynth.release.adaptive import discovery_proportion
from dpsynth.release.conversion import zcdp_delta
from dpsynth.sampling import AggregateSeededSampler


def _table(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 3, n)
    return pd.DataFrame({
        "a": np.array(["x", "y", "z"])[group],
        "b": np.array(["u", "v", "w"])[(group + rng.integers(0, 2, n)) % 3],
        "c": np.array(["p", "q"])[(group == 0).astype(int)],
        "age": (group * 20 + rng.integers(0, 20, n)).astype(np.int64),
    })


def _fit(frame=None, **params):
    params.setdefault("encoder", TableEncoder(bounds={"age": (0, 60)}, n_bins=6))
    params.setdefault("random_state", 0)
    return DPMarginalSynthesizer(release="workload", **params).fit(
        _table() if frame is None else frame)


def test_release_holds_dense_marginals_and_samples():
    synth = _fit()
    aggregates = synth.aggregates_
    assert aggregates.marginals and len(aggregates) == 0  # no sparse counts
    assert {m.columns for m in aggregates.marginals} >= {(0,), (1,), (2,), (3,)}
    possible = aggregates.schema.possible_cells()
    for m in aggregates.marginals:
        assert isinstance(m, NoisyMarginal) and m.variance > 0
        if m.basis == "marginal":
            assert m.table.shape == tuple(aggregates.table_sizes[list(m.columns)])
        else:  # the coordinates of a residual over the possible codes
            assert m.basis == "residual"
            assert m.table.shape == tuple(int(possible[c].sum()) - 1 for c in m.columns)
    assert any(m.basis == "residual" and len(m.columns) >= 2 for m in aggregates.marginals)
    out = synth.sample(500)
    assert out.shape == (500, 4) and (out.dtypes == _table().dtypes).all()
    real = pd.crosstab(_table()["a"], _table()["c"], normalize=True)
    fake = pd.crosstab(out["a"], out["c"], normalize=True).reindex_like(real).fillna(0)
    assert 0.5 * np.abs(real - fake).to_numpy().sum() < 0.1


def _gdp_delta_by_integration(mu, epsilon):
    """delta(epsilon) of mu-GDP as E_P[(1 - exp(epsilon - L))_+], L ~ N(mu**2/2, mu**2)."""
    from scipy import integrate, stats

    loss = stats.norm(mu * mu / 2.0, mu)
    value, _ = integrate.quad(lambda x: (1.0 - math.exp(epsilon - x)) * loss.pdf(x),
                              epsilon, mu * mu / 2.0 + 40.0 * mu, limit=500)
    return value


def _mu_of_spends(mechanisms):
    """The release's GDP mu recomputed from each mechanism's own parameters."""
    from scipy.stats import norm

    total = 0.0
    for m in mechanisms:
        params = dict(m.params)
        if m.mechanism == "gaussian":  # sensitivity / noise scale (discovery: sqrt(bound) both)
            scale = params.get("noise_scale", params.get("sigma"))
            total += (params.get("sensitivity", math.sqrt(params.get("contribution_bound", 1)))
                      / scale) ** 2
        elif m.mechanism == "discrete_gaussian" and "noise_scale" in params:
            # the exact GDP mu of the discrete Gaussian drawn, per unit shift
            total += (params.get("sensitivity", 1.0) ** 2 * params.get("contribution_bound", 1)
                      * discrete_gaussian_mu(params["noise_scale"]) ** 2)
        elif m.mechanism == "discrete_gaussian":  # residuals: calibrated per coordinate
            total += (params["sensitivity"] / params["sigma"]) ** 2
        elif m.mechanism == "exponential":  # randomized response at epsilon / 2
            eps = params["epsilon"]
            total += (2.0 * norm.ppf(math.exp(eps / 2) / (1 + math.exp(eps / 2)))) ** 2
    return math.sqrt(total)


def test_accounting_against_an_independent_computation():
    spent = _fit(epsilon=2.0, delta=1e-6).privacy_spent_
    # every mechanism's mu**2 / 2 adds up to rho = mu**2 / 2, and mu is the largest
    # Gaussian-DP budget whose (epsilon, delta) curve at delta/2 is within epsilon
    assert math.fsum(m.rho for m in spent.mechanisms) == pytest.approx(spent["rho"], rel=1e-9)
    assert spent["mu"] == pytest.approx(math.sqrt(2.0 * spent["rho"]))
    assert _mu_of_spends(spent.mechanisms) == pytest.approx(spent["mu"], rel=1e-7)
    assert _gdp_delta_by_integration(spent["mu"], 2.0) == pytest.approx(0.5e-6, rel=1e-4)
    assert _gdp_delta_by_integration(spent["mu"] * 1.01, 2.0) > 0.5e-6
    assert spent["conversion"] == "Gaussian DP (Dong-Roth-Su)"
    # mu-GDP is also mu**2/2-zCDP: the zCDP conversion would need a smaller budget
    assert zcdp_delta(spent["rho"], 2.0) > 0.5e-6
    # the other half of delta pays for the set union of discovered values
    assert math.fsum(m.delta for m in spent.mechanisms) == pytest.approx(0.5e-6)
    discovery = [m for m in spent.mechanisms if m.name.startswith("discovery")]
    assert discovery[0].rho == pytest.approx(discovery_proportion(2.0) * spent["rho"]) \
        == pytest.approx(0.4 * spent["rho"])
    assert dict(discovery[0].params)["contribution_bound"] == 3  # a, b, c (age is binned)
    assert spent["epsilon"] == 2.0 and spent["strategy"] == "workload"


def test_zcdp_accounting_is_kept_as_an_option():
    from dpsynth.release import adaptive

    encoder = TableEncoder(bounds={"age": (0, 60)}, n_bins=6)
    codes = encoder.fit_transform(_table())
    spent = adaptive.release_adaptive(codes, encoder.schema_, epsilon=2.0, delta=1e-6,
                                      reporting_length=3, rng=np.random.default_rng(0),
                                      accounting="zcdp").privacy
    with pytest.raises(ValueError, match="accounting"):
        adaptive.release_adaptive(codes, encoder.schema_, epsilon=2.0, delta=1e-6,
                                  reporting_length=3, rng=np.random.default_rng(0),
                                  accounting="pld")
    assert spent["conversion"] == "Canonne-Kamath-Steinke" and "mu" not in spent
    assert zcdp_delta(spent["rho"], 2.0) <= 0.5e-6 + 1e-15
    assert zcdp_delta(spent["rho"] * 1.001, 2.0) > 0.5e-6
    assert math.fsum(m.rho for m in spent.mechanisms) == pytest.approx(spent["rho"], rel=1e-9)


def test_discovery_counts_are_averaged_into_the_one_way_marginals():
    from dpsynth.release.adaptive import release_adaptive

    frame = _table(n=3000)
    frame.loc[frame.index[::3], "b"] = None
    encoder = TableEncoder(bounds={"age": (0, 60)}, n_bins=6)
    codes = encoder.fit_transform(frame)
    errors, claimed = [], []
    for seed in range(12):
        aggregates = release_adaptive(codes, encoder.schema_, epsilon=1.0, delta=1e-6,
                                      reporting_length=3, rng=np.random.default_rng(seed))
        params = {m.name: dict(m.params) for m in aggregates.privacy.mechanisms}
        discovery = params["discovery of undeclared values"]["noise_scale"] ** 2
        own = params["1-way marginal 0"]["noise_scale"] ** 2  # the (calibrated) noise drawn
        combined = 1.0 / (1.0 / own + 1.0 / discovery)
        for j, name in enumerate(["a", "b"]):
            values = aggregates.schema.columns[j].values  # then the missing code
            assert len(values) == 3
            truth = np.append(frame[name].value_counts().reindex(list(values)).to_numpy(float),
                              frame[name].isna().sum())  # b: a third missing
            (one_way,) = [m for m in aggregates.marginals
                          if m.columns == (j,) and m.basis == "marginal"]
            errors.append(one_way.table - truth)
            # every code is measured by both: the missing code (public) too
            assert one_way.variance == pytest.approx(combined)
        claimed.append(combined)
        (declared,) = [m for m in aggregates.marginals  # age: declared bins
                       if m.columns == (3,) and m.basis == "marginal"]
        assert declared.variance == pytest.approx(params["1-way marginal 3"]["noise_scale"] ** 2)
    # the released values' counts are as precise as both measurements together
    assert np.mean(np.square(errors)) == pytest.approx(np.mean(claimed), rel=0.35)
    assert np.mean(np.square(errors)) < 0.2 * own


def test_a_declared_universe_spends_nothing_on_discovery():
    encoder = TableEncoder(bounds={"age": (0, 60)}, n_bins=6, categories={
        "a": ["x", "y", "z"], "b": ["u", "v", "w"], "c": ["p", "q"]})
    spent = _fit(encoder=encoder).privacy_spent_
    assert not any(m.name.startswith("discovery") for m in spent.mechanisms)
    assert spent["conversion_delta"] == spent["delta"]
    assert math.fsum(m.rho for m in spent.mechanisms) == pytest.approx(spent["rho"])


def test_a_unique_value_is_not_released():
    frame = _table()
    frame.loc[0, "a"] = "UNIQUE-PERSON"
    synth = _fit(frame)
    assert "UNIQUE-PERSON" not in synth.aggregates_.schema[0].values
    assert "UNIQUE-PERSON" not in set(synth.sample(2000)["a"])


@pytest.mark.parametrize("suffix", ["json", "csv"])
def test_save_load_and_sample_again(tmp_path, suffix):
    synth = _fit(random_state=3)
    path = tmp_path / f"agg.{suffix}"
    synth.aggregates_.save(path)
    loaded = DPAggregates.load(path)
    assert loaded.privacy == synth.privacy_spent_ and loaded.schema == synth.aggregates_.schema
    assert len(loaded.marginals) == len(synth.aggregates_.marginals)
    for a, b in zip(loaded.marginals, synth.aggregates_.marginals):
        assert a.columns == b.columns and a.variance == b.variance and a.basis == b.basis
        np.testing.assert_array_equal(a.table, b.table)
    assert any(m.basis == "residual" for m in loaded.marginals)
    again = DPMarginalSynthesizer.from_aggregates(loaded, random_state=9).sample(100)
    pd.testing.assert_frame_equal(again, synth.set_params(random_state=9).sample(100))


def test_auto_picks_the_workload_release_unless_the_sampler_needs_sparse_counts():
    assert DPMarginalSynthesizer()._resolved_release() == "workload"
    assert DPMarginalSynthesizer(synthesis="aggregate_seeded")._resolved_release() == "sds"
    seeded = DPMarginalSynthesizer(synthesis=AggregateSeededSampler(), random_state=0)
    assert seeded._resolved_release() == "sds"
    with pytest.raises(ValueError, match="release='sds'"):
        DPMarginalSynthesizer(release="workload", synthesis="aggregate_seeded").fit(_table())


def test_missing_values_and_absent_mode():
    frame = _table()
    frame.loc[frame.index[:300], "b"] = None
    for missing in ("category", "absent"):
        synth = _fit(frame, encoder=TableEncoder(bounds={"age": (0, 60)}, missing=missing))
        out = synth.sample(3000)
        share = out["b"].isna().mean()
        assert abs(share - 0.2) < 0.06, (missing, share)


def test_reproducible_with_a_seed_and_fresh_without():
    first, again = _fit(random_state=5), _fit(random_state=5)
    assert json.dumps(first.aggregates_.privacy.to_dict()) == \
        json.dumps(again.aggregates_.privacy.to_dict())
    for a, b in zip(first.aggregates_.marginals, again.aggregates_.marginals):
        np.testing.assert_array_equal(a.table, b.table)
    fresh = [_fit(random_state=None).aggregates_.marginals[0].table for _ in range(2)]
    assert not np.array_equal(*fresh)


def test_an_all_missing_column_with_missing_absent_gives_a_clear_error():
    # no attribute exists at all: fit releases nothing, and sample says so
    # (this crashed with an IndexError while mapping codes to the public schema)
    X = pd.DataFrame({"a": [None, None, None]}, dtype=object)
    synth = DPMarginalSynthesizer(epsilon=0.5, reporting_length=1, random_state=0,
                                  encoder=TableEncoder(missing="absent")).fit(X)
    with pytest.raises(ValueError, match="no released attribute"):
        synth.sample(5)


def test_a_release_file_with_a_bad_residual_is_refused(tmp_path):
    from dpsynth.aggregates import _checksum

    synth = _fit(random_state=3)
    path = tmp_path / "release.json"
    synth.aggregates_.save(path)
    document = json.loads(path.read_text())
    entry = next(m for m in document["marginals"] if m.get("basis") == "residual")

    def write():
        document["checksum"] = _checksum(document)  # a well-formed file, bad content
        path.write_text(json.dumps(document))

    entry["values"] = entry["values"] + [0.0]
    write()
    with pytest.raises(ValueError, match="values"):
        DPAggregates.load(path)
    entry["values"] = entry["values"][:-1]
    entry["basis"] = "wavelet"
    write()
    with pytest.raises(ValueError, match="basis"):
        DPAggregates.load(path)
