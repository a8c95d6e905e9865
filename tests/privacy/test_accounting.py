"""Privacy accounting: checked against independent computations, not the code's helpers."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from dpsynth import DPMarginalSynthesizer, accounting
from dpsynth.release import SDSRelease, sds_budget
from dpsynth.mechanisms import (
    dp_percentile,
    exponential_mechanism_probabilities,
    percentile_utilities,
)
from dpsynth.preprocessing import TableEncoder


def _table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "a": rng.choice(["x", "y", "z"], n),
        "b": rng.choice(["u", "v"], n),
        "c": rng.choice(["p", "q", "r", "s"], n),
        "d": rng.choice(["m", "n"], n),
    })


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0, 10.0])
@pytest.mark.parametrize("delta", [1e-6, 1e-4, None])
@pytest.mark.parametrize("reporting_length", [1, 2, 3])
@pytest.mark.parametrize("accuracy_mode",
                         ["auto", "prioritize_long", "balanced", [1.0, 0.3, 2.0]])
def test_privacy_spent_satisfies_zcdp_budget(epsilon, delta, reporting_length, accuracy_mode):
    synth = DPMarginalSynthesizer(release=SDSRelease(accuracy_mode=accuracy_mode,
                                                     percentile_epsilon_proportion=0.1),
                                  epsilon=epsilon, delta=delta,
                                  reporting_length=reporting_length, random_state=0)
    spent = synth.fit(_table()).privacy_spent_
    R = reporting_length
    rho = spent["rho"]
    # components add up to rho (zCDP composition), with the encoder's DP counts
    # that find the text columns hold no numbers
    total = R * spent["percentile_epsilon"] ** 2 / 2 + sum(
        1 / (2 * spent["sigmas"][k] ** 2) for k in range(1, R + 1)) + spent["rho_numeric"]
    assert total == pytest.approx(rho, rel=1e-12)
    # rho converts back to the marginals' epsilon at delta/2 (squared form);
    # the unsquared formula of the papers fails this identity.  The delta of the
    # marginals is what the numeric steps leave (a text column that noise decides
    # holds numbers spends a share on its point masses: rare, but a DP output)
    numeric_delta = sum(m.delta for m in spent.mechanisms if m.name.startswith("numeric"))
    assert spent["conversion_delta"] == pytest.approx((spent["delta"] - numeric_delta) / 2,
                                                      rel=1e-12)
    log_term = math.log(1 / spent["conversion_delta"])
    assert rho + 2 * math.sqrt(rho * log_term) == pytest.approx(
        epsilon - spent["epsilon_records"], rel=1e-12)
    if epsilon < 8:  # below ~8.6 the unsquared budget overstates epsilon
        unsquared = math.sqrt(epsilon - spent["epsilon_records"] + log_term) - math.sqrt(log_term)
        assert unsquared + 2 * math.sqrt(unsquared * log_term) > epsilon
    assert spent["epsilon_records"] == pytest.approx(epsilon * 0.005)
    assert spent["epsilon"] == pytest.approx(epsilon)
    if delta is not None:
        assert spent["delta"] == delta


@pytest.mark.parametrize("synthesis, mode", [("marginal_matching", "prioritize_short"),
                                             ("aggregate_seeded", "prioritize_long")])
def test_auto_accuracy_mode_follows_synthesis(synthesis, mode):
    # "auto" gives marginal matching the short-combination split and the SDS
    # sampler SDS's default; the sigmas are SDS's proportions [1/R..1] / [1..1/R]
    auto = DPMarginalSynthesizer(release="sds", synthesis=synthesis, random_state=0).fit(_table())
    explicit = DPMarginalSynthesizer(release=SDSRelease(accuracy_mode=mode),
                                     synthesis=synthesis, random_state=0).fit(_table())
    sigmas = [auto.privacy_spent_["sigmas"][k] for k in (1, 2, 3)]
    assert sigmas == [explicit.privacy_spent_["sigmas"][k] for k in (1, 2, 3)]
    expected = [1 / 3, 1 / 2, 1] if mode == "prioritize_short" else [1, 1 / 2, 1 / 3]
    np.testing.assert_allclose(np.array(sigmas) / sigmas[np.argmax(expected)], expected)
    strategy = DPMarginalSynthesizer(release=SDSRelease(), synthesis=synthesis,
                                     random_state=0).fit(_table())
    assert strategy.privacy_spent_["sigmas"] == auto.privacy_spent_["sigmas"]
    assert strategy.get_params()["release__accuracy_mode"] == "auto"  # left as given


def test_unknown_accuracy_mode_names_the_choices():
    with pytest.raises(ValueError, match="accuracy_mode"):
        DPMarginalSynthesizer(release=SDSRelease(accuracy_mode="fast")).fit(_table())


def test_default_delta_is_fixed_before_seeing_the_data():
    # leak 6 of the privacy-boundary issue: the default used to be 1 / (n ln n)
    # with n the DP record count, a delta chosen after seeing a DP output
    small = DPMarginalSynthesizer(release="sds", random_state=0).fit(_table(300))
    large = DPMarginalSynthesizer(release="sds", random_state=1).fit(_table(2000))
    assert small.privacy_spent_["delta"] == large.privacy_spent_["delta"] \
        == accounting.DEFAULT_DELTA == 1e-9


def test_the_default_delta_does_not_warn_on_large_tables_a_chosen_one_does():
    # the default must hold whatever the (private) table size: no warning on a
    # table of more than 100,000 records; a delta the user chose is still checked
    import warnings

    rng = np.random.default_rng(0)
    n = 120_000
    X = pd.DataFrame({"a": rng.choice(["x", "y", "z"], n), "b": rng.choice(["u", "v"], n)})
    for delta, expected in ((None, []), (1e-5, ["delta=1e-05 is not below 1 / n_records_"])):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            DPMarginalSynthesizer(delta=delta, random_state=0).fit(X)
        assert [str(w.message)[:len("delta=1e-05 is not below 1 / n_records_")]
                for w in caught] == expected


@pytest.mark.parametrize("delta", [0.5, 0.02, 1.0, 0.0, -1e-6, float("nan")])
def test_meaningless_delta_is_refused(delta):
    with pytest.raises(ValueError, match="delta"):
        DPMarginalSynthesizer(release="sds", delta=delta).fit(_table(300))


def test_delta_above_one_over_n_warns_the_data_owner():
    with pytest.warns(UserWarning, match="not below 1 / n_records_"):
        DPMarginalSynthesizer(release="sds", delta=0.01, random_state=0).fit(_table(300))


def test_budget_split_matches_digest_numbers():
    # seeds digest F2.2: epsilon 4, delta 1e-6, R = 3, Q_p = 0.1, equal sigmas
    # (conversion at delta/2: the data-derived universe)
    plan = sds_budget.plan_budget(epsilon=4.0, delta=1e-6, reporting_length=3,
                                  percentile_epsilon_proportion=0.1,
                                  proportions=[1, 1, 1], epsilon_records=0.0,
                                  public_universe=False)
    assert plan.rho == pytest.approx(0.243193, abs=1e-6)
    assert plan.percentile_epsilon == pytest.approx(0.127330, abs=1e-6)
    np.testing.assert_allclose(plan.sigmas, 2.617876, atol=1e-6)


@pytest.mark.parametrize("epsilon,delta,expected", [
    (1, 1e-6, 0.016662), (4, 1e-6, 0.24319), (0.5, 1e-5, 0.005018), (10, 1e-6, 1.30325)])
def test_zcdp_rho_table(epsilon, delta, expected):
    # Appendix A of the digest uses L = log(2/delta), i.e. conversion at delta/2
    assert accounting.zcdp_rho(epsilon, delta / 2) == pytest.approx(expected, rel=2e-4)


@pytest.mark.parametrize("sigma,bound,delta", [(1.0, 5, 1e-6), (2.0, 10, 1e-6), (3.0, 21, 1e-5)])
def test_first_level_threshold_crossing_probability_is_half_delta(sigma, bound, delta):
    threshold = accounting.first_level_threshold(sigma, bound, delta)
    # a value held by one record has count 1; noise std sigma * sqrt(bound)
    per_item = norm.sf((threshold - 1) / (sigma * math.sqrt(bound)))
    assert 1 - (1 - per_item) ** bound == pytest.approx(delta / 2, rel=1e-6)


def test_first_level_threshold_digest_values():
    assert accounting.first_level_threshold(1.0, 5, 1e-6) == pytest.approx(12.6261, abs=1e-3)
    assert accounting.first_level_threshold(2.0, 10, 1e-6) == pytest.approx(34.6892, abs=1e-3)


def test_fabrication_modes_follow_sds():
    assert sds_budget.fabrication_thresholds("uncontrolled", 3) == {
        2: ("adaptive", 1.0), 3: ("adaptive", 1.0)}
    progressive = sds_budget.fabrication_thresholds("progressive", 4)
    assert [progressive[k][1] for k in (2, 3, 4)] == pytest.approx([0.1, 0.55, 1.0])
    balanced = sds_budget.fabrication_thresholds("balanced", 4)
    assert [balanced[k][1] for k in (2, 3, 4)] == pytest.approx([0.55, 1.0, 1.0])
    assert sds_budget.fabrication_thresholds("minimize", 3)[3] == ("adaptive", 0.01)
    assert sds_budget.fabrication_thresholds({"fixed": {2: 30}}, 3) == {
        2: ("fixed", 30.0), 3: ("fixed", 0.0)}
    with pytest.raises(ValueError, match="1-tuple"):
        sds_budget.fabrication_thresholds({"fixed": {1: 3}}, 3)
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        sds_budget.fabrication_thresholds({"adaptive": {2: 1.5}}, 3)


def test_adaptive_threshold_uses_contribution_bound_of_its_level():
    sigma, bound, eta = 2.0, 36, 0.2
    assert sds_budget.adaptive_threshold(sigma, bound, eta) == pytest.approx(
        sigma * 6 * norm.isf(eta / 2))
    assert sds_budget.adaptive_threshold(sigma, bound, 1.0) == 0.0


def test_sigma_proportions_modes():
    np.testing.assert_allclose(sds_budget.sigma_proportions("prioritize_long", 3), [1, 1 / 2, 1 / 3])
    np.testing.assert_allclose(sds_budget.sigma_proportions("prioritize_short", 3), [1 / 3, 1 / 2, 1])
    np.testing.assert_allclose(sds_budget.sigma_proportions("balanced", 2), [1, 1])
    with pytest.raises(ValueError, match="proportion"):
        sds_budget.sigma_proportions([1.0], 3)
    with pytest.raises(ValueError, match="> 0"):
        sds_budget.sigma_proportions([1.0, -1.0], 2)


def _brute_force_percentile_probabilities(values, q, upper, epsilon):
    n = len(values)
    utilities = []
    for c in range(upper + 1):
        at_most = sum(1 for v in values if min(v, upper) <= c)
        utilities.append(-abs(at_most - q / 100 * n))
    weights = np.exp(epsilon * np.array(utilities) / 2)
    return weights / weights.sum()


@pytest.mark.parametrize("q", [50, 90, 99])
def test_dp_percentile_probabilities_ratio_bounded_on_neighbours(q):
    epsilon, upper = 0.7, 12
    rng = np.random.default_rng(q)
    for _ in range(20):
        values = list(rng.integers(0, upper + 3, size=rng.integers(1, 9)))
        extra = int(rng.integers(0, upper + 3))
        p = exponential_mechanism_probabilities(percentile_utilities(values, q, upper), epsilon)
        p_neighbour = exponential_mechanism_probabilities(
            percentile_utilities(values + [extra], q, upper), epsilon)
        np.testing.assert_allclose(p, _brute_force_percentile_probabilities(values, q, upper, epsilon))
        ratio = np.maximum(p / p_neighbour, p_neighbour / p)
        assert ratio.max() <= math.exp(epsilon) * (1 + 1e-9)
        assert p.size == upper + 1  # candidates are the public range, not the data's max


def test_dp_percentile_concentrates_and_stays_in_range():
    rng = np.random.default_rng(0)
    values = rng.integers(0, 50, size=5000)
    draws = [dp_percentile(values, 90, 100, 5.0, rng) for _ in range(20)]
    assert all(0 <= d <= 100 for d in draws)
    assert abs(np.median(draws) - np.percentile(values, 90)) <= 2


def test_public_universe_changes_conversion_delta_and_first_threshold():
    frame = _table(3000)
    categories = {c: sorted(frame[c].unique()) for c in frame}
    public = DPMarginalSynthesizer(release="sds", 
        encoder=TableEncoder(categories=categories), random_state=0).fit(frame)
    private = DPMarginalSynthesizer(release="sds", random_state=0).fit(frame)
    assert public.privacy_spent_["public_universe"] is True
    assert private.privacy_spent_["public_universe"] is False
    assert public.privacy_spent_["conversion_delta"] == public.privacy_spent_["delta"]
    assert private.privacy_spent_["conversion_delta"] == private.privacy_spent_["delta"] / 2
    # level 1 follows the uncontrolled fabrication rule (threshold 0) when public
    assert public.privacy_spent_["thresholds"][1] == 0.0
    assert private.privacy_spent_["thresholds"][1] > 1.0
    spent = public.privacy_spent_
    log_term = math.log(1 / spent["delta"])
    assert spent["rho"] + 2 * math.sqrt(spent["rho"] * log_term) == pytest.approx(
        spent["epsilon"] - spent["epsilon_records"])


# --------------------------------------------------------------- privacy curve
def _gdp_delta_independent(mu, epsilon):
    """Dong-Roth-Su's delta(epsilon) of mu-GDP, with scipy's normal distribution."""
    from scipy.stats import norm
    return norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2)


def test_privacy_curve_of_gdp_plus_pure_parts_against_an_independent_computation():
    from dpsynth.accounting import PrivacySpent, Spend
    from dpsynth.accounting import gdp_mu

    mu = gdp_mu(1.5, 5e-6)
    spent = PrivacySpent(1.7, 1e-5 + 1e-7, mu**2 / 2, [
        Spend("marginals", "discrete_gaussian", rho=mu**2 / 2),
        Spend("universe", "set union", delta=5e-6),
        Spend("binning", "encoder", epsilon=0.2, delta=1e-7)], {"mu": mu})
    # at the reported delta: the reported epsilon; smaller delta: larger epsilon
    assert spent.epsilon_at(spent.delta) == pytest.approx(1.7, rel=1e-9)
    assert spent.epsilon_at(spent.delta) <= 1.7 * (1 + 1e-12)
    assert spent.epsilon_at(8e-6) > spent.epsilon_at(1e-5) > spent.epsilon_at(5e-5)
    # at or below the delta spent directly (the set union and the binning's) no epsilon is
    # proven: inf, or with strict=True an error naming the steps
    assert spent.delta_floor == pytest.approx(5.1e-6, rel=1e-12)
    for below in (5e-6, 5.1e-6, 0.0):
        assert spent.epsilon_at(below) == math.inf
        with pytest.raises(ValueError, match=r"'universe' \(5e-06\).*'binning' \(1e-07\)"):
            spent.epsilon_at(below, strict=True)
    assert math.isfinite(spent.epsilon_at(5.2e-6, strict=True))
    assert spent.epsilon_at(5.2e-6) > spent.epsilon_at(8e-6)
    for epsilon in (0.5, 1.0, 2.0, 4.0):  # basic composition over the GDP curve
        expected = _gdp_delta_independent(mu, epsilon - 0.2) + 5e-6 + 1e-7
        assert spent.delta_at(epsilon) == pytest.approx(expected, rel=1e-9)
        if epsilon < 3:  # (beyond, the GDP part is lost in the fixed delta's rounding)
            assert spent.epsilon_at(spent.delta_at(epsilon)) == pytest.approx(epsilon, rel=1e-6)
    assert spent.delta_at(0.1) == 1.0  # below the pure epsilon
    with pytest.raises(ValueError, match="delta"):
        spent.epsilon_at(1.5)


def test_privacy_curve_of_zcdp_and_pure_releases():
    from dpsynth.accounting import PrivacySpent, Spend

    rho, delta = 0.05, 1e-6
    eps = accounting.zcdp_to_epsilon(rho, delta)  # Bun-Steinke, as the SDS release converts
    spent = PrivacySpent(eps + 0.01, delta, rho, [Spend("count", "discrete_laplace", epsilon=0.01),
                                                  Spend("levels", "discrete_gaussian", rho=rho)])
    assert spent.epsilon_at(delta) == pytest.approx(eps + 0.01, rel=1e-12)
    assert spent.delta_at(eps + 0.01) == pytest.approx(delta, rel=1e-9)
    pure = PrivacySpent(1.0, 0.0, 0.0, [Spend("views", "discrete_laplace", epsilon=1.0)])
    assert pure.epsilon_at(0.0) == 1.0 and pure.delta_at(1.0) == 0.0 and pure.delta_at(0.5) == 1
    assert pure.delta_floor == 0.0
    # pure epsilon with a delta spent directly: exactly that delta gives the pure epsilon
    mixed = PrivacySpent(1.0, 1e-7, 0.0, [Spend("views", "discrete_laplace", epsilon=1.0),
                                          Spend("frequent values", "stability", delta=1e-7)])
    assert mixed.epsilon_at(1e-7) == 1.0 and mixed.epsilon_at(0.5) == 1.0
    assert mixed.epsilon_at(5e-8) == math.inf
    with pytest.raises(ValueError, match="'frequent values'.*no epsilon buys back"):
        mixed.epsilon_at(5e-8, strict=True)


@pytest.mark.parametrize("release", ["workload", "sds"])
def test_epsilon_at_the_reported_delta_is_the_reported_epsilon(release):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("xyz"), 400), "b": rng.choice(list("uv"), 400)})
    spent = DPMarginalSynthesizer(epsilon=1.0, random_state=0, release=release).fit(
        X).privacy_spent_
    assert spent.epsilon_at(spent.delta) == pytest.approx(spent.epsilon, rel=1e-9)
    assert spent.epsilon_at(spent.delta) <= spent.epsilon * (1 + 1e-12)
    assert spent.epsilon_at(0.7 * spent.delta) > spent.epsilon
    assert spent.delta_at(spent.epsilon) == pytest.approx(spent.delta, rel=1e-6)
    # defaults: only exact discrete noise
    assert not {"gaussian", "laplace"} & {m.mechanism for m in spent.mechanisms}
    ledger = spent.ledger()
    assert len(ledger) == len(spent.mechanisms)
    assert math.fsum(r["share"] for r in ledger if r["share_of"] == "rho") == pytest.approx(1.0)


def test_one_spend_type_for_every_release():
    """The workload loop, the SDS release and the encoder record the same Spend."""
    import pickle

    from dpsynth.accounting import Spend
    from dpsynth.release import adaptive_selection as workload

    assert not hasattr(workload, "Spend") or workload.Spend is Spend
    spend = Spend("round 1", "gaussian", rho=0.5,
                  params={"sigma": 1.0, "columns": (0, 2), "basis": "residual"})
    assert spend.params["columns"] == (0, 2) and list(spend.params) == ["sigma", "columns",
                                                                        "basis"]
    assert spend == Spend("round 1", "gaussian", rho=0.5,
                          params=[("sigma", 1.0), ("columns", (0, 2)), ("basis", "residual")])
    with pytest.raises(TypeError):
        spend.params["sigma"] = 2.0
    assert pickle.loads(pickle.dumps(spend)) == spend and hash(spend) == hash(
        pickle.loads(pickle.dumps(spend)))
    # what a release file lists: scalar parameters only, by name
    published = spend.scalar_params()
    assert list(published.params.items()) == [("basis", "residual"), ("sigma", 1.0)]
    assert published.to_dict() == {"name": "round 1", "mechanism": "gaussian", "epsilon": 0.0,
                                   "rho": 0.5, "delta": 0.0,
                                   "params": {"basis": "residual", "sigma": 1.0}}
    assert Spend.from_dict(published.to_dict()) == published
    with pytest.raises(ValueError, match="distinct names"):
        Spend("x", "gaussian", params=[("sigma", 1.0), ("sigma", 2.0)])


def test_accounting_holds_the_conversions():
    """One accounting module: the conversions and the report under dpsynth.accounting."""
    for name in ("gdp_mu", "gdp_delta", "gdp_epsilon", "zcdp_rho", "zcdp_rho_tight",
                 "zcdp_delta", "zcdp_epsilon", "zcdp_to_epsilon", "bounded_range_mu",
                 "bounded_range_epsilon", "PrivacySpent", "Spend", "check_delta",
                 "DEFAULT_DELTA", "first_level_threshold"):
        assert name in accounting.__all__ and callable(getattr(accounting, name)) or \
            name == "DEFAULT_DELTA"
    assert accounting.zcdp_rho_tight(1.0, 1e-5) >= accounting.zcdp_rho(1.0, 1e-5)
