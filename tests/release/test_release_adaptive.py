"""The workload-aware release through the estimator (``release="workload"``)."""

import json
import math
import warnings

import numpy as np

from dpsynth.mechanisms import discrete_gaussian_mu
import pandas as pd
import pytest

from dpsynth import DPAggregates, DPMarginalSynthesizer
from dpsynth.aggregates import NoisyMarginal
from dpsynth.exceptions import NoisyReleaseWarning
from dpsynth.preprocessing import TableEncoder
from dpsynth.accounting import zcdp_delta
from dpsynth.release.workload_release import discovery_proportion
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


def _release_rho(spent):
    """The release's own budget: ``rho`` less what the encoder's DP steps spent (text
    columns are numeric candidates by default: each spends its DP decision)."""
    return spent["rho"] - spent["rho_numeric"]


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
    # the first round and the undiscovered counts share the discovery's proportion,
    # scaled by the share of undeclared columns (3 of 4: age is binned)
    undiscovered = [m for m in spent.mechanisms if m.name.startswith("undiscovered")]
    assert discovery[0].rho + undiscovered[0].rho == pytest.approx(
        discovery_proportion(2.0) * 3 / 4 * _release_rho(spent)) == pytest.approx(
        0.3 * _release_rho(spent))
    assert undiscovered[0].rho == pytest.approx(0.1 * discovery[0].rho)
    assert dict(discovery[0].params)["contribution_bound"] == 3  # a, b, c (age is binned)
    assert spent["epsilon"] == 2.0 and spent["strategy"] == "workload"


def test_zcdp_accounting_is_kept_as_an_option():
    from dpsynth.release import workload_release

    encoder = TableEncoder(bounds={"age": (0, 60)}, n_bins=6)
    codes = encoder.fit_transform(_table())
    spent = workload_release.release_adaptive(codes, encoder.schema_, epsilon=2.0, delta=1e-6,
                                              reporting_length=3, rng=np.random.default_rng(0),
                                              accounting="zcdp").privacy
    with pytest.raises(ValueError, match="accounting"):
        workload_release.release_adaptive(codes, encoder.schema_, epsilon=2.0, delta=1e-6,
                                          reporting_length=3, rng=np.random.default_rng(0),
                                          accounting="pld")
    assert spent["conversion"] == "Canonne-Kamath-Steinke" and "mu" not in spent
    assert zcdp_delta(spent["rho"], 2.0) <= 0.5e-6 + 1e-15
    assert zcdp_delta(spent["rho"] * 1.001, 2.0) > 0.5e-6
    assert math.fsum(m.rho for m in spent.mechanisms) == pytest.approx(spent["rho"], rel=1e-9)


def test_discovery_counts_are_averaged_into_the_one_way_marginals():
    from dpsynth.release.workload_release import release_adaptive

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
        remainder = params["undiscovered records of undeclared columns"]["noise_scale"] ** 2
        own = params["1-way marginal 0"]["noise_scale"] ** 2  # the (calibrated) noise drawn
        combined = 1.0 / (1.0 / own + 1.0 / discovery)
        # every value is found: a column without an other code has its most frequent
        # value hold the undiscovered records (none here), measured by its discovery
        # count plus the noisy count of undiscovered records; one with an other code
        # (its undiscovered count could not rule out 1% of the records) has that
        # count measure its other code
        added = 1.0 / (1.0 / own + 1.0 / (discovery + remainder))
        other = 1.0 / (1.0 / own + 1.0 / remainder)
        for j, name in enumerate(["a", "b"]):
            column = aggregates.schema.columns[j]
            values = column.values  # then the other code, if any, and the missing code
            assert len(values) == 3 and column.other != column.filled
            truth = np.concatenate([
                frame[name].value_counts().reindex(list(values)).to_numpy(float),
                [0.0] * column.other + [frame[name].isna().sum()]])  # b: a third missing
            (one_way,) = [m for m in aggregates.marginals
                          if m.columns == (j,) and m.basis == "marginal"]
            errors.append(one_way.table - truth)
            # every code is measured by both: the missing code (public) too
            expected = ((4 * combined + other) / 5 if column.other
                        else (3 * combined + added) / 4)
            assert one_way.variance == pytest.approx(expected)
            claimed.append(one_way.variance)
        (declared,) = [m for m in aggregates.marginals  # age: declared bins
                       if m.columns == (3,) and m.basis == "marginal"]
        assert declared.variance == pytest.approx(params["1-way marginal 3"]["noise_scale"] ** 2)
    # the 1-way counts are as precise as the measurements together
    squared = np.mean(np.concatenate([np.square(e) for e in errors]))
    assert squared == pytest.approx(np.mean(claimed), rel=0.35)
    assert squared < 0.2 * own


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
    def strategy(**params):
        return type(DPMarginalSynthesizer(**params)._release_strategy()[0]).__name__

    assert strategy() == "WorkloadRelease"
    assert strategy(synthesis="aggregate_seeded") == "SDSRelease"
    assert strategy(synthesis=AggregateSeededSampler()) == "SDSRelease"
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


def test_an_all_missing_column_with_missing_absent_warns_and_invents_no_value():
    # no value exists at all: fit releases none and says so, and sample gives the
    # column's public codes only, its other value or empty cells (this crashed with
    # an IndexError while mapping codes to the public schema)
    X = pd.DataFrame({"a": [None, None, None]}, dtype=object)
    synth = DPMarginalSynthesizer(epsilon=0.5, reporting_length=1, random_state=0,
                                  encoder=TableEncoder(missing="absent"))
    with pytest.warns(NoisyReleaseWarning) as caught:
        synth.fit(X)
    messages = " ".join(str(w.message) for w in caught)
    assert "dominated by its noise" in messages and "No value of the column(s) ['a']" in messages
    assert synth.aggregates_.schema[0].values == ()
    out = synth.sample(5)
    assert set(out["a"].dropna()) <= {"<other>"}


def test_a_small_table_warns_that_its_rare_values_come_back_as_other():
    # 150 records at epsilon 3: the set union's threshold is a large share of them,
    # so a value of 50 records may not be released; the warning gives the public
    # threshold and names the columns with released values (a DP output), nothing
    # counted from the data
    rng = np.random.default_rng(0)
    small = pd.DataFrame({"kind": rng.permutation(np.repeat(["x", "y", "z"], 50)),
                          "other": rng.choice(["p", "q"], 150),
                          "third": rng.choice(["u", "v"], 150)})
    with pytest.warns(NoisyReleaseWarning, match=r"released only when its noisy count "
                      r"clears [\d.]+ records, \d+% of the DP record count .*'kind'"):
        DPMarginalSynthesizer(epsilon=3.0, random_state=0).fit(small)
    large = pd.DataFrame({"kind": rng.choice(["x", "y", "z"], 20_000),
                          "other": rng.choice(["p", "q"], 20_000),
                          "third": rng.choice(["u", "v"], 20_000)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoisyReleaseWarning)
        DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(large)


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


# ------------------------------------------------- many-valued columns, other value
def _people(n=4000, seed=0, extra=None):
    """Four dependent categorical columns (2-14 values), and one many-valued column."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["M", "F"], n, p=[0.4, 0.6])
    education = rng.choice([f"e{i}" for i in range(7)], n,
                           p=[0.15, 0.3, 0.2, 0.15, 0.1, 0.05, 0.05])
    status = np.where(rng.random(n) < 0.5, np.where(sex == "M", "m0", "m1"),
                      rng.choice(["m0", "m1", "m2", "m3"], n, p=[0.4, 0.3, 0.2, 0.1]))
    pay = np.where((sex == "M") & (rng.random(n) < 0.3), "p0",
                   rng.choice([f"p{i}" for i in range(14)], n,
                              p=np.r_[[0.3, 0.2, 0.15], [0.35 / 11] * 11]))
    frame = pd.DataFrame({"sex": sex, "education": education, "status": status, "pay": pay},
                         dtype=object)
    if extra == "id":  # one value per record: nothing of it can be released
        frame["id"] = pd.Series([f"id-{i:06d}" for i in rng.permutation(n)], dtype=object)
    elif extra == "name":  # thousands of values, a few frequent ones
        common = rng.choice(["Ann", "Bob", "Eve"], n)
        frame["name"] = np.where(rng.random(n) < 0.4, common,
                                 [f"n{v}" for v in rng.integers(0, 3000, n)])
    return frame


@pytest.mark.parametrize("extra", ["id", "name"])
def test_a_many_valued_column_changes_no_other_column(extra):
    from dpsynth.metrics import marginal_tvd

    real = _people()
    columns = list(real.columns)
    plain = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(real).sample()
    wide_real = _people(extra=extra)
    synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0)
    if extra == "id":  # said, with public facts only
        with pytest.warns(NoisyReleaseWarning, match=r"No value of the column\(s\) \['id'\]"):
            synth.fit(wide_real)
    else:
        synth.fit(wide_real)
    wide = synth.sample()
    # every record comes back: the DP record count is the real one, up to noise
    assert abs(synth.n_records_ - len(real)) <= 0.03 * len(real)
    assert len(wide) == synth.n_records_
    for k in (1, 2):  # the other columns keep their marginals, within noise
        with_extra = marginal_tvd(real, wide[columns], k=k)
        without = marginal_tvd(real, plain, k=k)
        assert with_extra <= without + 0.01, (k, with_extra, without)
    assert marginal_tvd(real, wide[columns], k=1) <= 0.02
    # its values that were not released are its other value, never missing ones
    column = synth.aggregates_.schema[len(columns)]
    assert column.other and column.other_label == "<other>"
    assert wide[extra].notna().all()
    other_share = (wide[extra] == "<other>").mean()
    real_other = (~wide_real[extra].isin(column.values)).mean()
    assert abs(other_share - real_other) <= 0.03
    if extra == "name":  # the frequent names are released and keep their shares
        assert {"Ann", "Bob", "Eve"} <= set(column.values)
        assert abs((wide[extra] == "Ann").mean() - (wide_real[extra] == "Ann").mean()) < 0.02


def test_the_other_value_is_measured_and_the_missing_one_holds_missing_values_only():
    frame = _people(3000, extra="name")
    frame.loc[frame.index[::10], "status"] = None  # a tenth missing
    synth = DPMarginalSynthesizer(epsilon=2.0, random_state=1).fit(frame)
    schema = synth.aggregates_.schema
    j = schema.names.index("name")
    assert schema.other_codes[j] == len(schema[j].values)
    assert schema.missing_codes[j] == schema.other_codes[j] + 1
    # complete columns: their missing code is possible (not declared no_missing) but
    # measured near zero, so no record gets it; status keeps its missing share
    out = synth.sample()
    assert out["name"].isna().mean() < 0.005
    assert out["sex"].isna().mean() < 0.005
    assert abs(out["status"].isna().mean() - 0.1) < 0.02
    # the 1-way marginals of every column count the same records (the real count)
    for m in synth.aggregates_.marginals:
        if m.basis == "marginal" and len(m.columns) == 1:
            noise = math.sqrt(m.variance * m.table.size)
            assert abs(m.table.sum() - len(frame)) < 5 * noise


def test_a_column_whose_values_were_all_released_comes_back_without_other(tmp_path):
    frame = _table()[["a", "b", "c"]]
    frame = frame.astype(object)
    synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(frame)
    schema = synth.aggregates_.schema
    # every value released: a column whose undiscovered count cannot rule out 1% of
    # its records has an other code (it holds noise only), which the sampler, whose
    # level it does not clear, gives no record
    assert [len(c.values) for c in schema] == [3, 3, 2]
    np.testing.assert_array_equal(schema.n_values,  # values, other, missing
                                  [len(c.values) + c.other + 1 for c in schema])
    # it comes back from a file: JSON and CSV
    for name in ("agg.json", "agg.csv"):
        synth.aggregates_.save(tmp_path / name)
        loaded = DPAggregates.load(tmp_path / name)
        assert loaded.schema == schema
        again = DPMarginalSynthesizer.from_aggregates(loaded, random_state=0).sample()
        pd.testing.assert_frame_equal(again, synth.sample())
    for seed in range(6):
        out = DPMarginalSynthesizer(epsilon=4.0, random_state=seed).fit(frame).sample()
        assert not (out == "<other>").to_numpy().any()


def test_a_complete_text_column_comes_back_without_other_through_the_default_path():
    # a text column whose four values are all found (a numeric candidate first,
    # found text by its DP decision) beside a column of numbers and a column
    # with many rare values: only the latter comes back with the other label
    rng = np.random.default_rng(4)
    n = 3000
    frame = pd.DataFrame({"region": rng.choice(["N", "S", "E", "W"], n),
                          "amount": np.round(rng.lognormal(4, 1, n), 2),
                          "name": np.where(rng.random(n) < 0.5, rng.choice(["Ann", "Bob"], n),
                                           [f"n{v}" for v in rng.integers(0, 5000, n)])})
    frame["region"] = frame["region"].astype(object)
    frame["name"] = frame["name"].astype(object)
    others = []
    for seed in range(4):
        synth = DPMarginalSynthesizer(random_state=seed).fit(frame)
        schema = synth.aggregates_.schema
        region, name = (schema[schema.names.index(c)] for c in ("region", "name"))
        assert name.other
        out = synth.sample(random_state=seed)
        assert set(out["region"]) == {"N", "S", "E", "W"}
        assert out["region"].notna().all()
        others.append((out["name"] == "<other>").mean())
    assert abs(np.mean(others) - (~frame["name"].isin(["Ann", "Bob"])).mean()) < 0.05


def test_a_column_with_one_released_value_keeps_its_rare_second_value_as_other():
    # yes/no with 6% "yes" on 1,000 records beside numbers: "yes" is under the set
    # union's threshold, and its noisy undiscovered count alone is often under the
    # noise; the other code measured in step 3 as well keeps it, and a constant
    # column still comes back constant
    rng = np.random.default_rng(0)
    n = 1056
    frame = pd.DataFrame({
        "selfemp": np.where(rng.random(n) < 0.06, "yes", "no").astype(object),
        "constant": np.full(n, "same", dtype=object),
        "owner": np.where(rng.random(n) < 0.45, "yes", "no").astype(object),
        "card": np.where(rng.random(n) < 0.75, "yes", "no").astype(object),
        "age": np.round(rng.normal(33, 10, n), 1), "months": rng.integers(0, 500, n),
        "income": np.round(rng.lognormal(1, 0.5, n), 2)})
    shares = []
    for seed in range(8):
        out = DPMarginalSynthesizer(epsilon=4.0, random_state=seed).fit(frame).sample(
            random_state=seed)
        assert (out["constant"] == "same").all()
        shares.append((out["selfemp"] != "no").mean())
    # "yes" (52 records) was lost at 5 of these 8 seeds when the undiscovered count
    # alone decided the other code at 3.09 sigma; it still is at about 7% of seeds
    # (21 of 280: the noise of its measurements, which the workload chooses)
    assert sum(share == 0 for share in shares) <= 2
    assert abs(np.mean(shares) - (frame["selfemp"] == "yes").mean()) < 0.02


def test_rare_values_of_a_wide_table_come_back_as_other_not_as_the_mode():
    # 56 columns on 4,000 records at epsilon 4: the set union's threshold is ~4% of
    # the records, so up to three of the rarest values of a 12-value column (9%
    # together) are not released, and the noisy count of its undiscovered records
    # alone (a small share of the discovery budget) may be under 3.09 sigma (seed
    # 2: then they all went to the mode, 23% -> 29%).  Their records come back as
    # the other label, measured in step 3 as well, not as the column's mode
    rng = np.random.default_rng(3)
    n = 4000
    shares = np.array([22, 12, 8, 11, 10, 9, 8, 6, 5, 4, 3, 2], dtype=float)
    levels = [f"level {k}" for k in range(12)]
    frame = pd.DataFrame({"tenure": rng.choice(levels, n, p=shares / shares.sum())})
    for k in range(55):
        frame[f"c{k}"] = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    frame = frame.astype(object)
    real = frame["tenure"].value_counts(normalize=True)
    modes, rests = [], []
    for seed in (1, 2):
        synth = DPMarginalSynthesizer(epsilon=4.0, random_state=seed).fit(frame)
        column = synth.aggregates_.schema[0]
        assert column.other
        out = synth.sample(random_state=seed)["tenure"]
        modes.append((out == "level 0").mean())
        rests.append((out == "<other>").mean()
                     - real[~real.index.isin(column.values)].sum())
    # the mode kept its share; the other label holds the unreleased values' share
    assert max(abs(share - real["level 0"]) for share in modes) < 0.02
    assert abs(np.mean(rests)) < 0.03


def test_the_other_codes_noise_is_stored_code_by_code(tmp_path):
    # the first 1-way measurement of an undeclared column averages the discovery's
    # counts into its value codes, not into its other code: the release keeps each
    # code's variance, the file too, and a damaged list is refused
    synth = DPMarginalSynthesizer(epsilon=2.0, random_state=0).fit(_people(extra="name"))
    aggregates = synth.aggregates_
    j = aggregates.schema.names.index("name")
    (first, *_) = [m for m in aggregates.marginals if m.columns == (j,)]
    cells = first.cell_variances
    other = aggregates.schema.other_codes[j]
    assert cells.shape == first.table.shape
    assert cells[other] > cells[0]  # its values are measured twice
    assert first.variance == pytest.approx(cells.mean())
    path = tmp_path / "release.json"
    aggregates.save(path)
    loaded = DPAggregates.load(path)
    (again, *_) = [m for m in loaded.marginals if m.columns == (j,)]
    np.testing.assert_array_equal(again.cell_variances, cells)
    from tests.test_aggregates import _reseal

    document = json.loads(path.read_text())
    entry = next(e for e in document["marginals"] if "cell_variances" in e)
    entry["cell_variances"] = entry["cell_variances"][:-1]
    path.write_text(json.dumps(_reseal(document)))
    with pytest.raises(ValueError, match="cell variances"):
        DPAggregates.load(path)
    with pytest.raises(ValueError, match="cell_variances"):
        NoisyMarginal((0,), np.ones(3), 1.0, cell_variances=[1.0, -1.0, 1.0])


def test_the_other_label_is_a_condition_and_a_known_value():
    synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(_people(extra="name"))
    out = synth.sample(300, conditions={"name": "<other>"}, random_state=0)
    assert len(out) == 300 and (out["name"] == "<other>").all()
    known = pd.DataFrame({"name": ["<other>", "Ann", "<other>"]})
    filled = synth.sample_remaining_columns(known, random_state=0)
    assert filled["name"].tolist() == ["<other>", "Ann", "<other>"]
    assert filled.notna().all().all()
    with pytest.raises(ValueError, match=r"'<oth>'.*available: .*'<other>'"):
        synth.sample(10, conditions={"name": "<oth>"})


def test_a_tiny_table_warns_and_keeps_its_records():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(["x", "y"], 30), "b": rng.choice(["u", "v", "w"], 30)},
                     dtype=object)
    synth = DPMarginalSynthesizer(random_state=0)
    with pytest.warns(NoisyReleaseWarning) as caught:
        synth.fit(X)
    text = " ".join(str(w.message) for w in caught)
    # public facts only: the budget, the noise, DP outputs (the DP count, released values)
    assert "epsilon=4, delta=1e-09" in text and f"n_records_={synth.n_records_}" in text
    assert abs(synth.n_records_ - 30) < 15  # not half of the records lost
    out = synth.sample()
    assert len(out) == synth.n_records_
    assert out.notna().all().all()  # no value released: their other value, not missing


def test_numeric_columns_with_unreliable_dp_ranges_are_named_in_a_warning():
    import warnings

    # ten standardised columns: at 442 records the range histograms' noise (about 20
    # records per cell) loses a side of a column on some seeds; at 2,000 it does not,
    # and declared bounds spend nothing on a range
    def fit(n, **params):
        rng = np.random.default_rng(0)
        X = pd.DataFrame({f"c{j}": rng.normal(0, 1, n) for j in range(10)})
        synth = DPMarginalSynthesizer(random_state=0, **params)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            synth.fit(X)
        return synth, [str(w.message) for w in caught if w.category is NoisyReleaseWarning]

    synth, messages = fit(442)
    text = " ".join(m for m in messages if "unreliable" in m)
    sigmas = [dict(m.params)["sigma"] for m in synth.privacy_spent_.mechanisms
              if m.name.endswith(": range")]
    assert len(sigmas) == 10 and synth.n_records_ < 40 * min(sigmas)
    assert "'c0'" in text and "'c9'" in text and "bounds" in text
    # public facts only: the budget, the range noise and the DP count
    assert "epsilon=4, delta=1e-09" in text and f"n_records_={synth.n_records_}" in text
    assert f"{max(sigmas):.3g} records" in text
    assert not [m for m in fit(2000)[1] if "unreliable" in m]
    encoder = TableEncoder(bounds={f"c{j}": (-4.0, 4.0) for j in range(10)})
    assert not [m for m in fit(442, encoder=encoder)[1] if "unreliable" in m]


def _wide_table(n_common=1900, n_values=20, count=55, seed=0):
    """Three short columns and ``wide``: one common value and ``n_values`` values of
    ``count`` records each, rarer than the first discovery round's threshold at
    epsilon 1 (67 records at delta 1e-6) but not than the second's (40)."""
    rng = np.random.default_rng(seed)
    wide = np.array(["w-common"] * n_common
                    + [f"w{k:02d}" for k in range(n_values) for _ in range(count)], dtype=object)
    n = wide.size
    return pd.DataFrame({"a": rng.choice(["x", "y", "z"], n), "b": rng.choice(["u", "v"], n),
                         "c": rng.choice(["p", "q", "r"], n), "wide": rng.permutation(wide)})


def _wide_fit(frame, seed, epsilon=1.0):
    return DPMarginalSynthesizer(epsilon=epsilon, delta=1e-6, random_state=seed).fit(frame)


def test_second_discovery_round_releases_the_values_the_first_missed():
    frame = _wide_table()
    rare = {f"w{k:02d}" for k in range(20)}
    for seed in range(3):
        synth = _wide_fit(frame, seed)
        names = {m.name: m for m in synth.privacy_spent_.mechanisms}
        first = dict(names["discovery of undeclared values"].params)
        second = dict(names["discovery of undeclared values, second round"].params)
        assert first["threshold"] > 60 > 45 > second["threshold"]
        assert second["columns"] == second["contribution_bound"] == 1  # only wide
        released = set(synth.aggregates_.schema.columns[3].values)
        # one round releases a value of 55 records with probability ~0.17; two, ~0.99
        assert len(rare & released) >= 17
        # their records are sampled as their own values, not as other
        share = synth.sample(random_state=seed)["wide"].isin(rare).mean()
        assert share > 0.25  # 0.37 in the table


def test_second_discovery_round_accounting_against_an_independent_computation():
    from scipy.stats import norm

    spent = _wide_fit(_wide_table(), 0).privacy_spent_
    by_name = {m.name: m for m in spent.mechanisms}
    first = by_name["discovery of undeclared values"]
    rest = by_name["undiscovered records of undeclared columns"]
    second = by_name["discovery of undeclared values, second round"]
    # the shares of rho: the first round and a tenth of it share 0.5 (epsilon 1);
    # the second round takes half of the first's
    assert first.rho == pytest.approx(0.5 / 1.1 * _release_rho(spent))
    assert rest.rho == pytest.approx(0.1 * first.rho)
    assert second.rho == pytest.approx(0.5 * first.rho)
    # every mechanism's GDP mu recomputed from its noise scale and bound adds up to mu
    assert math.fsum(m.rho for m in spent.mechanisms) == pytest.approx(spent["rho"], rel=1e-9)
    assert _mu_of_spends(spent.mechanisms) == pytest.approx(spent["mu"], rel=1e-7)
    for m in (first, rest, second):  # discrete Gaussian, each at least its nominal scale
        p = dict(m.params)
        assert p["noise_scale"] >= math.sqrt(p["contribution_bound"] / (2.0 * m.rho))
        assert discrete_gaussian_mu(p["noise_scale"]) * math.sqrt(
            p["contribution_bound"]) == pytest.approx(math.sqrt(2.0 * m.rho), rel=1e-9)
    assert dict(first.params)["contribution_bound"] == dict(rest.params)["contribution_bound"] == 4
    # the set union's delta / 2 is shared by the rounds: a quarter of delta each
    unions = [m for m in spent.mechanisms if m.mechanism == "set union"]
    assert [m.delta for m in unions] == pytest.approx([0.25e-6, 0.25e-6])
    assert math.fsum(m.delta for m in spent.mechanisms) == pytest.approx(0.5e-6)
    # first threshold: 1 + scale PhiInv(1 - q) + 1, q = 1 - (1 - delta/4)**(1/4)
    s1 = dict(first.params)["noise_scale"]
    q1 = 1.0 - (1.0 - 0.25e-6) ** 0.25
    assert dict(first.params)["threshold"] == pytest.approx(2.0 + s1 * norm.isf(q1), rel=1e-6)
    # second: the mean of both noisy counts, subgaussian with s = (s1**-2 + s2**-2)**-0.5
    s2 = dict(second.params)["noise_scale"]
    s = (s1**-2 + s2**-2) ** -0.5
    q2 = 0.25e-6  # one column: 1 - (1 - delta/4)
    assert dict(second.params)["threshold_of"] == "mean of both rounds"
    assert dict(second.params)["threshold"] == pytest.approx(
        1.0 + s * math.sqrt(2.0 * math.log(1.0 / q2)), rel=1e-6)


def test_the_mean_of_two_discrete_gaussians_has_a_subgaussian_tail():
    """The bound the second round's threshold rests on, by exact convolution."""
    from dpsynth.release.workload_release import combined_threshold

    def pmf(scale):
        y = np.arange(-80, 81)
        p = np.exp(-y.astype(float) ** 2 / (2.0 * scale**2))
        return y, p / p.sum()

    for s1, s2 in [(3.0, 4.0), (2.5, 1.5), (6.0, 6.0)]:
        (y1, p1), (y2, p2) = pmf(s1), pmf(s2)
        v = 1.0 / (1.0 / s1**2 + 1.0 / s2**2)
        mean = (np.add.outer(y1 / s1**2, y2 / s2**2) * v).ravel()
        prob = np.multiply.outer(p1, p2).ravel()
        for bound, delta in [(1, 1e-3), (3, 1e-4), (1, 0.2)]:
            tau = combined_threshold(s1, s2, bound, delta, "discrete")
            q = 1.0 - (1.0 - delta / 2.0) ** (1.0 / bound)
            # a unique value: count 1 plus the mean's noise crosses tau with prob <= q
            assert prob[1.0 + mean > tau].sum() <= q
        assert combined_threshold(s1, s2, 2, 1e-6, "continuous") < combined_threshold(
            s1, s2, 2, 1e-6, "discrete")


def test_a_unique_value_is_not_released_by_the_second_round():
    frame = _wide_table()
    frame.loc[5, "wide"] = "UNIQUE-PERSON"
    for seed in range(3):
        synth = _wide_fit(frame, seed)
        assert any(m.name.endswith("second round") for m in synth.privacy_spent_.mechanisms)
        assert "UNIQUE-PERSON" not in synth.aggregates_.schema.columns[3].values


def test_no_second_round_when_every_value_is_discovered():
    spent = _fit(epsilon=2.0, delta=1e-6).privacy_spent_
    names = [m.name for m in spent.mechanisms]
    assert "undiscovered records of undeclared columns" in names
    assert not any(name == "discovery of undeclared values, second round" for name in names)
    # its share of the set union's delta is reserved all the same (the worst case)
    (reserved,) = [m for m in spent.mechanisms
                   if m.name == "data-derived universe (length 1), second round"]
    assert reserved.delta == pytest.approx(0.25e-6) and reserved.rho == 0.0
    assert spent["rho_discovery"] == pytest.approx(0.4 * 3 / 4 * _release_rho(spent))


# ------------------------------------------- the second round's extra budget (profiles)

def test_frequency_profile_layers_and_sensitivity_by_brute_force():
    from dpsynth.release.workload_release import frequency_profile, profile_levels

    levels = profile_levels(67.3)
    assert levels[0] == 17 and np.all(np.diff(levels) > 0) and levels[-1] == 67
    rng = np.random.default_rng(0)
    for _ in range(60):
        counts = rng.integers(0, 140, rng.integers(1, 30))
        counts[rng.random(counts.size) < 0.3] = rng.integers(0, 3)  # many small counts
        profile = frequency_profile(counts, levels)
        # the records above the first level, and nothing of the values below it
        assert profile.dtype.kind == "i"
        assert profile.sum() == np.maximum(counts - levels[0], 0).sum()
        # layer l holds, for each t from t_l to t_{l+1} - 1, the values above t
        bounds = np.append(levels, max(counts.max(), levels[-1]) + 1)
        for layer, (low, high) in enumerate(zip(bounds[:-1], bounds[1:])):
            assert profile[layer] == sum(np.sum(counts > t) for t in range(low, high))
        # brute force over every neighbour: one record more of each value (or of a
        # new one) or one less, anywhere in the column: at most one layer moves, by 1
        for i in range(counts.size + 1):
            more = np.append(counts, 0)
            more[i] += 1
            change = frequency_profile(more, levels) - profile
            assert np.abs(change).sum() == (more[i] > levels[0]) and change.min() >= 0
            if i < counts.size and counts[i] > 0:
                less = counts.copy()
                less[i] -= 1
                change = frequency_profile(less, levels) - profile
                assert np.abs(change).sum() == (counts[i] > levels[0]) and change.max() <= 0


def _profiles(frame, released, levels):
    """Each column's profile of the values outside ``released`` (the first round's
    releases are DP outputs: fixed across neighbours), from the table itself."""
    from dpsynth.release.workload_release import frequency_profile

    out = []
    for column in frame.columns:
        counts = frame[column].value_counts(dropna=True)
        out.append(frequency_profile(counts[~counts.index.isin(released[column])].to_numpy(),
                                     levels))
    return np.array(out)


@pytest.mark.parametrize("position", ["first", "middle", "last"])
def test_frequency_profiles_of_neighbouring_tables_differ_by_one_per_column(position):
    from dpsynth.release.workload_release import profile_levels

    frame = _wide_table(n_common=300, n_values=12, count=25)
    frame["id"] = [f"person-{k}" for k in range(len(frame))]
    released = {"a": ["x", "y"], "b": ["u", "v"], "c": ["p"], "wide": ["w-common", "w03"],
                "id": []}
    levels = profile_levels(40.0)  # 10, 15, ..., 40: the 25-record values are in them
    base = _profiles(frame, released, levels)
    at = {"first": 0, "middle": len(frame) // 2, "last": len(frame)}[position]
    records = [{"a": "z", "b": "u", "c": "r", "wide": "w05", "id": "person-new"},
               {"a": "x", "b": "v", "c": "q", "wide": "Reykjavik", "id": "person-3"},
               {"a": "y", "b": "u", "c": "p", "wide": "w-common", "id": None},
               {"a": None, "b": None, "c": None, "wide": None, "id": None}]
    for record in records:
        added = pd.concat([frame.iloc[:at], pd.DataFrame([record]), frame.iloc[at:]],
                          ignore_index=True)
        change = _profiles(added, released, levels) - base
        assert np.all(np.abs(change).sum(axis=1) <= 1)
        # L2 sensitivity sqrt(columns): one unit in at most every column
        assert np.square(change).sum() <= frame.shape[1]
    removed = frame.drop(index=frame.index[min(at, len(frame) - 1)])
    change = _profiles(removed, released, levels) - base
    assert np.all(np.abs(change).sum(axis=1) <= 1)


def test_the_extra_budgets_are_an_exact_knapsack():
    from itertools import product

    from dpsynth.release.workload_release import _knapsack

    rng = np.random.default_rng(1)
    steps = np.array([1.0, 2.0, 4.0, 8.0])
    for _ in range(40):
        values = {k: rng.normal(0, 10, steps.size) for k in range(4)}
        budget = float(rng.uniform(0, 14))
        chosen = _knapsack(values, steps, budget)
        assert sum(chosen.values()) <= budget + 1e-9
        total = sum(values[k][list(steps).index(a)] for k, a in chosen.items())
        best = 0.0
        for picks in product(range(-1, steps.size), repeat=4):  # -1: nothing
            if sum(steps[p] for p in picks if p >= 0) <= budget:
                best = max(best, sum(values[k][p] for k, p in enumerate(picks)
                                     if p >= 0 and values[k][p] > 0))
        assert total == pytest.approx(best)


def _mid_and_identifiers(n_values=100, count=30, n_ids=6, seed=0):
    """A many-valued column of mid-frequency values (``count`` records each, below
    the first round's threshold at epsilon 4), identifier-like columns and two
    small ones."""
    rng = np.random.default_rng(seed)
    mid = np.array([f"m{k:02d}" for k in range(n_values) for _ in range(count)], dtype=object)
    frame = {"mid": rng.permutation(mid)}
    for i in range(n_ids):
        frame[f"id{i}"] = [f"r{i}-{k}" for k in rng.permutation(mid.size)]
    frame.update({"a": rng.choice(["x", "y", "z"], mid.size),
                  "b": rng.choice(["u", "v"], mid.size)})
    return pd.DataFrame(frame)


def _extras(spent):
    return [m for m in spent.mechanisms
            if m.name.startswith("discovery of undeclared values, second round (extra)")]


def test_the_extra_goes_to_the_column_whose_values_lie_below_the_threshold():
    from dpsynth.release.workload_release import (EXTRA_SHARE, GAIN_STEPS, PROFILE_SHARE,
                                                  SECOND_ROUND_SHARE)

    frame = _mid_and_identifiers()
    for seed in range(2):
        with pytest.warns(NoisyReleaseWarning, match="id0"):  # identifiers: other only
            synth = DPMarginalSynthesizer(epsilon=4.0, delta=1e-6, random_state=seed).fit(frame)
        spent = synth.privacy_spent_
        by_name = {m.name: m for m in spent.mechanisms}
        first = by_name["discovery of undeclared values"]
        assert dict(first.params)["threshold"] > 35  # 30 records: out of the first's reach
        # mid and the six identifiers are left with most of their records: all seven
        # take part in the second round and have their profile measured
        profile = by_name["frequency profile of undiscovered values"]
        assert profile.rho == pytest.approx(PROFILE_SHARE * first.rho)
        assert dict(profile.params)["contribution_bound"] == 7
        broad = by_name["discovery of undeclared values, second round"]
        assert dict(broad.params)["contribution_bound"] == 6  # the identifiers
        # only mid's profile shows values a larger budget releases: it alone gets more
        (extra,) = _extras(spent)
        assert extra.name.endswith("column 0")
        unit = first.rho / 9
        share = SECOND_ROUND_SHARE * first.rho / 7  # each selected column's broad share
        assert broad.rho == pytest.approx(6 * share)
        assert min(abs((extra.rho - share) / unit - a) for a in GAIN_STEPS) < 1e-9
        assert extra.rho - share <= EXTRA_SHARE * first.rho
        # its threshold is set for the 7 columns of the second round, as the others'
        s1, s2 = dict(first.params)["noise_scale"], dict(extra.params)["noise_scale"]
        s = (s1**-2 + s2**-2) ** -0.5
        q = 1.0 - (1.0 - 0.25e-6) ** (1.0 / 7)
        assert dict(extra.params)["columns"] == dict(broad.params)["columns"] == 7
        assert dict(extra.params)["threshold"] == pytest.approx(
            1.0 + s * math.sqrt(2.0 * math.log(1.0 / q)), rel=1e-6)
        assert dict(extra.params)["threshold"] < 25 < dict(broad.params)["threshold"]
        # the many mid-frequency values are released, their records sampled as themselves
        assert len(synth.aggregates_.schema.columns[0].values) >= 95
        out = synth.sample(random_state=seed)
        assert out["mid"].str.startswith("m").mean() > 0.9
        # every spend is listed and they add up to the budget
        assert spent["rho_discovery"] == pytest.approx(
            math.fsum(m.rho for m in spent.mechanisms
                      if m.name.startswith(("discovery", "undiscovered", "frequency"))))
        assert math.fsum(m.rho for m in spent.mechanisms) == pytest.approx(spent["rho"], rel=1e-9)
        assert _mu_of_spends(spent.mechanisms) == pytest.approx(spent["mu"], rel=1e-7)
        assert math.fsum(m.delta for m in spent.mechanisms) == pytest.approx(0.5e-6)


def test_no_profile_without_a_column_holding_many_undiscovered_records():
    # every value found in the first round: nothing left to measure again
    spent = _fit(epsilon=2.0, delta=1e-6).privacy_spent_
    assert not any(m.name.startswith("frequency profile") for m in spent.mechanisms)
    assert not _extras(spent)


def test_no_profile_when_the_later_steps_cannot_spare_an_extra():
    # epsilon 1 and six undeclared columns: the extras' cap is 1.5 first-round
    # budgets of a column, below MIN_EXTRA; the broad second round runs alone
    from dpsynth.release.workload_release import MIN_EXTRA

    frame = _mid_and_identifiers(n_values=90, count=60, n_ids=3)
    with pytest.warns(NoisyReleaseWarning, match="id0"):
        spent = DPMarginalSynthesizer(epsilon=1.0, delta=1e-6, random_state=0).fit(
            frame).privacy_spent_
    assert MIN_EXTRA > 1.5
    assert not any(m.name.startswith("frequency profile") for m in spent.mechanisms)
    assert not _extras(spent)
    assert any(m.name == "discovery of undeclared values, second round"
               for m in spent.mechanisms)


@pytest.mark.parametrize("margin, profiled", [(0.5, False), (1.5, True)])
def test_no_profile_when_the_extras_cannot_pay_for_it(monkeypatch, margin, profiled):
    # the profiles cost PROFILE_SHARE u units of a column's first-round rho: they
    # are measured only when the extras' cap exceeds MIN_EXTRA units by that much
    from dpsynth.release import workload_release as w

    frame = _mid_and_identifiers()  # 9 undeclared columns, extras at epsilon 4
    fit = lambda: DPMarginalSynthesizer(epsilon=4.0, delta=1e-6,  # noqa: E731
                                        random_state=0).fit(frame).privacy_spent_
    with pytest.warns(NoisyReleaseWarning, match="id0"):
        spent = fit()
    first = next(m for m in spent.mechanisms if m.name == "discovery of undeclared values")
    u, rho = 9, _release_rho(spent)
    rest = rho - (1.0 + w.REMAINDER_SHARE + w.SECOND_ROUND_SHARE + w.PROFILE_SHARE) * first.rho
    cap = min(w.EXTRA_SHARE * first.rho, w.EXTRA_REST * rest) / (first.rho / u)
    profile_units = w.PROFILE_SHARE * u
    assert cap >= w.MIN_EXTRA + profile_units  # the default: profiled (see above)
    monkeypatch.setattr(w, "MIN_EXTRA", cap - margin * profile_units)
    with pytest.warns(NoisyReleaseWarning, match="id0"):
        spent = fit()
    assert any(m.name.startswith("frequency profile") for m in spent.mechanisms) == profiled
    # the broad second round runs either way
    assert any(m.name == "discovery of undeclared values, second round"
               for m in spent.mechanisms)


def test_the_extras_leave_the_later_steps_their_budget_at_small_epsilon(monkeypatch):
    from dpsynth.release import workload_release as w

    # free and certain gains: the extras take all they may, however small their cap
    # (one unit beyond the profiles' own cost, PROFILE_SHARE u units for u = 6)
    monkeypatch.setattr(w, "MIN_EXTRA", 1.0 - 6 * w.PROFILE_SHARE)
    monkeypatch.setattr(w, "EXTRA_PRICE", 0.0)
    monkeypatch.setattr(w, "NOISE_MARGIN", 0.0)
    frame = _mid_and_identifiers(n_values=90, count=60, n_ids=3)  # 6 undeclared columns
    for epsilon in (0.5, 1.0):
        with pytest.warns(NoisyReleaseWarning, match="id0"):
            synth = DPMarginalSynthesizer(epsilon=epsilon, delta=1e-6, random_state=0).fit(frame)
        spent = synth.privacy_spent_
        first = next(m for m in spent.mechanisms if m.name == "discovery of undeclared values")
        assert _extras(spent)
        second = math.fsum(m.rho for m in spent.mechanisms
                           if m.name.startswith("discovery of undeclared values, second round"))
        # mid, the three identifiers, a and b: the broad share of the selected ones
        # (left out or not) and the extras' cap
        (remainders,) = [m for m in spent.mechanisms if m.name.startswith("undiscovered")]
        assert dict(remainders.params)["contribution_bound"] == 6
        rest = _release_rho(spent) - (1.0 + w.REMAINDER_SHARE + w.SECOND_ROUND_SHARE
                               + w.PROFILE_SHARE) * first.rho
        assert second <= (w.SECOND_ROUND_SHARE * first.rho
                          + min(w.EXTRA_SHARE * first.rho, w.EXTRA_REST * rest)) * (1 + 1e-9)
        # what the discovery leaves the later steps, were the second round and profiles full
        assert _release_rho(spent) - spent["rho_discovery"] >= 0.5 * rest * (1 - 1e-9)
        assert math.fsum(m.rho for m in spent.mechanisms) == pytest.approx(spent["rho"], rel=1e-9)


def test_a_known_other_value_without_mass_is_named_in_the_error():
    # a known row holding the other label of a column whose other code the sampler
    # gives no record: the error names the label, not None (the missing code)
    from dpsynth.sampling.conditional import _describe_row
    from dpsynth.schema import Column, Schema

    schema = Schema((Column("region", np.dtype(object), ("N", "S"), other=True,
                            other_label="<other>"),
                     Column("size", np.dtype(object), ("a", "b"))), "category")
    assert _describe_row(schema, [0, 1], [2, 0]) == "region='<other>', size='a'"
    assert _describe_row(schema, [0, 1], [3, 2]) == "region=None, size=None"


def _rare_feature_frame(n=4000, seed=0):
    """A rare flag (4% of the records) that decides ``y`` beside text columns that
    depend on each other but not on it."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({f"c{k}": rng.choice(list("abcd"), n) for k in range(8)})
    for k in range(1, 8, 2):
        X[f"c{k}"] = np.where(rng.random(n) < 0.8, X[f"c{k - 1}"], X[f"c{k}"])
    X["flag"] = np.where(rng.random(n) < 0.04, "yes", "no")
    y = pd.Series(np.where(X["flag"] == "yes", rng.random(n) < 0.9, rng.random(n) < 0.05),
                  name="y")
    return X, y


def test_a_target_given_to_fit_weighs_its_marginals_more():
    from dpsynth.release import WorkloadRelease

    X, y = _rare_feature_frame()
    X_before = X.copy()

    def release(weight, with_y=True):
        synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0,
                                      release=WorkloadRelease(target_weight=weight))
        synth.fit(X, y) if with_y else synth.fit(X.assign(y=y))
        return synth.aggregates_, synth.privacy_spent_

    (plain, _), (weighted, spent) = release(1), release(5)
    assert weighted.target == "y" and plain.target == "y"
    t, flag = len(X.columns), list(X.columns).index("flag")
    holding = [sum(t in m.columns for m in a.marginals if len(m.columns) > 1) for a in
               (plain, weighted)]
    assert holding[1] > holding[0]
    assert any({t, flag} <= set(m.columns) for m in weighted.marginals)
    assert spent["rho"] == pytest.approx(sum(m.rho for m in spent.mechanisms))
    # without y nothing is weighed: the release of the same table is the plain one
    no_target, _ = release(5, with_y=False)
    assert [m.columns for m in no_target.marginals] == [m.columns for m in plain.marginals]
    pd.testing.assert_frame_equal(X, X_before)
