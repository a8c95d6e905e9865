"""Empirical privacy audit: canary distinguishing tests with a Clopper-Pearson lower bound on epsilon.

For each DP mechanism (the workload release, the SDS release, CALM, the DP
binning), neighbouring tables ``D0`` and ``D1 = D0 + one canary record`` are
released many times with fresh seeds; a released statistic of the canary
(its cell's noisy count, ...) is tested by the best threshold test
``s > t`` (or ``s < t``).  The threshold and the ``delta`` of the check are
chosen on the first half of the runs; on the second half, Clopper-Pearson
upper bounds on the test's false-positive rate ``a`` and false-negative
rate ``b`` give, for any ``(epsilon, delta)``-DP mechanism (``a e^epsilon +
b >= 1 - delta``), the lower bound ``epsilon >= log((1 - delta - b) / a)``
with confidence ``1 - 2 * ALPHA`` (Jagielski, Ullman & Oprea 2020; Nasr et
al. 2021).  It must stay below the epsilon the release claims at that delta
(``privacy_spent_.epsilon_at``, the whole privacy curve), and the same test
must exceed it when the mechanism is broken on purpose (less noise, by
monkeypatch).

The CI version (a few hundred runs per table, a few seconds per case) runs
each mechanism at a budget where the claim is tight enough that half the
noise is caught: the workload release (GDP, exact curve), the DP binning
and CALM (pure epsilon) and the numeric='auto' steps (GDP).  The SDS release
claims the Bun-Steinke conversion of its zCDP budget (the Laplace record
count and the percentile included), which at the deltas a few thousand runs
can audit (>= 0.02) lies well above the exact curve of its Gaussian
measurement: a 2x noise cut stays inside that claim there (it multiplies the
Gaussian's rho by 4), so the CI catches a tenth of the noise and the slow
version a quarter.  ``DPSYNTH_AUDIT_SLOW=1`` runs the slow version
(5,000 runs per table).
"""

import math
import os
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from dpsynth import DPMarginalSynthesizer
from dpsynth.local import CALMSynthesizer
from dpsynth.preprocessing import DPKBinsDiscretizer, TableEncoder
from dpsynth.accounting import gdp_epsilon
from dpsynth.preprocessing._numeric import _cells, _dp_range, range_grid
from dpsynth.release import SDSRelease
from dpsynth.release.adaptive_selection import release_workload

ALPHA = 0.005  # per Clopper-Pearson bound: a false alarm has probability <= 1%
DELTAS = (0.02, 0.05, 0.1, 0.2, 0.3, 0.4)
SLOW = os.environ.get("DPSYNTH_AUDIT_SLOW", "") not in ("", "0")
SLOW_RUNS = 5000


def clopper_pearson_upper(k, n, alpha=ALPHA):
    """One-sided ``1 - alpha`` upper confidence bound on a binomial proportion."""
    return 1.0 if k >= n else float(beta.ppf(1.0 - alpha, k + 1, n - k))


def epsilon_lower_bound(s0, s1, claimed):
    """``(lower bound, claimed epsilon, delta)`` of the best threshold test (see the module)."""
    s0, s1 = np.asarray(s0, dtype=float), np.asarray(s1, dtype=float)
    half = len(s0) // 2
    pooled = np.concatenate([s0[:half], s1[:half]])
    thresholds = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, 101)))
    best = None
    for sign in (1.0, -1.0):  # reject "no canary" when sign * s > sign * t
        for t in thresholds:
            fpr = max(np.mean(sign * s0[:half] > sign * t), 1.0 / half)
            fnr = np.mean(sign * s1[:half] <= sign * t)
            for delta in DELTAS:
                if 1.0 - delta - fnr > 0:
                    gap = math.log((1.0 - delta - fnr) / fpr) - claimed(delta)
                    if best is None or gap > best[0]:
                        best = (gap, sign, t, delta)
    _, sign, t, delta = best
    n = len(s0) - half
    a = clopper_pearson_upper(int(np.sum(sign * s0[half:] > sign * t)), n)
    b = clopper_pearson_upper(int(np.sum(sign * s1[half:] <= sign * t)), n)
    bound = math.log((1.0 - delta - b) / a) if 1.0 - delta - b > 0 else -math.inf
    return bound, claimed(delta), delta


def _audit(run, claimed, n_runs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s0 = [run(False, seed) for seed in range(n_runs)]
        s1 = [run(True, seed) for seed in range(n_runs, 2 * n_runs)]
    return epsilon_lower_bound(s0, s1, claimed)


# ------------------------------------------------------------------ mechanisms
def _workload(rho=2.0):
    """One column: the whole budget is the canary cell's discrete Gaussian measurement."""
    def run(canary, seed):
        codes = np.zeros((20 + canary, 1), dtype=np.int32)
        codes[20:] = 1
        return release_workload(codes, [2], rho=rho, rng=seed).measurements[0][1][1]
    return run, lambda delta: gdp_epsilon(math.sqrt(2.0 * rho), delta)


def _sds(epsilon=4.0):
    encoder = TableEncoder(categories={"a": ["x", "y"]})

    def fit(canary, seed):
        frame = pd.DataFrame({"a": ["x"] * 20 + ["y"] * (20 + canary)})
        # a larger percentile share: the one-column contribution bound (1) is found
        return DPMarginalSynthesizer(epsilon=epsilon, encoder=encoder,
                                     release=SDSRelease(percentile_epsilon_proportion=0.3),
                                     random_state=seed).fit(frame)

    def run(canary, seed):
        released = fit(canary, seed).aggregates_.to_frame()
        return float(released.loc[released["a"] == "y", "count"].sum())
    return run, fit(True, 0).privacy_spent_.epsilon_at


def _calm(epsilon=2.0):
    categories = {"a": ["x", "y"], "b": ["u", "v"]}

    def fit(canary, seed):
        frame = pd.DataFrame({"a": ["x"] + ["y"] * canary, "b": ["u"] + ["v"] * canary})
        # ell=2: the pair's own report is audited (with two users the automatic plan
        # reports each column alone, whose pairs would be noise)
        return CALMSynthesizer(epsilon=epsilon, k=2, ell=2, categories=categories,
                               random_state=seed).fit(frame)

    def run(canary, seed):
        return float(fit(canary, seed).marginal(["a", "b"])[1, 1])
    return run, fit(True, 0).privacy_spent_.epsilon_at


def _binning(epsilon=2.0):
    def fit(canary, seed):
        frame = pd.DataFrame({"v": [0.5] * 20 + [7.5] * canary})
        return DPKBinsDiscretizer(bounds=(0, 8), n_bins=1, inverse="dp_histogram",
                                  inverse_epsilon=epsilon, n_sub_bins=8,
                                  random_state=seed).fit(frame)

    def run(canary, seed):
        return fit(canary, seed).binnings_[0].within[0][7]
    spent = fit(True, 0).epsilon_spent_
    assert spent == epsilon
    return run, lambda delta: spent


def _numeric(rho=2.0):
    """numeric='auto' step 1 (the DP range): the canary's power-of-two cell's noisy count."""
    cell = int(_cells(np.array([1000.0]), range_grid(False))[0])

    def fit(canary, seed):
        values = np.array([0.5] * 20 + [1000.0] * canary)
        return _dp_range(values, None, False, rho, np.random.default_rng(seed))

    def run(canary, seed):
        return float(fit(canary, seed)[3][cell])
    spend = fit(True, 0)[2]
    assert spend.mechanism == "discrete_gaussian" and spend.rho == rho
    return run, lambda delta: gdp_epsilon(math.sqrt(2.0 * spend.rho), delta)


MECHANISMS = {"workload": _workload, "sds": _sds, "calm": _calm, "binning": _binning,
              "numeric": _numeric}


def _sabotage(monkeypatch, name, factor):
    """Cut the noise of mechanism ``name`` by ``factor`` (its claim unchanged)."""
    import dpsynth.local.calm as calm
    import dpsynth.mechanisms as mechanisms
    import dpsynth.preprocessing._discretizer as discretizer
    import dpsynth.release.sds as sds

    if name in ("workload", "numeric"):
        original = mechanisms.discrete_gaussian_scale
        monkeypatch.setattr(mechanisms, "discrete_gaussian_scale",
                            lambda sigma: original(sigma) / factor)
    elif name == "sds":
        original = sds.discrete_gaussian_scale
        monkeypatch.setattr(sds, "discrete_gaussian_scale", lambda sigma: original(sigma) / factor)
    elif name == "calm":
        original = calm.adaptive_oracle
        monkeypatch.setattr(calm, "adaptive_oracle", lambda size, epsilon, **kw: original(
            size, epsilon * factor, **kw))
    else:
        original = discretizer.laplace_histogram
        monkeypatch.setattr(discretizer, "laplace_histogram", lambda index, n, epsilon, rng, **kw:
                            original(index, n, epsilon * factor, rng, **kw))


CI_RUNS = {"workload": 400, "sds": 100, "calm": 300, "binning": 400, "numeric": 400}
#: the noise cut each audit must catch (see the module docstring for SDS)
CI_FACTOR = {"workload": 2.0, "sds": 10.0, "calm": 2.0, "binning": 2.0, "numeric": 2.0}
SLOW_FACTOR = {"workload": 2.0, "sds": 4.0, "calm": 2.0, "binning": 2.0, "numeric": 2.0}


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_canary_audit_stays_below_the_claim(name):
    run, claimed = MECHANISMS[name]()
    bound, claim, delta = _audit(run, claimed, CI_RUNS[name])
    assert bound <= claim, f"{name}: epsilon >= {bound:.3f} at delta={delta} > claimed {claim:.3f}"


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_canary_audit_catches_a_noise_cut(name, monkeypatch):
    """Half the noise (a tenth for SDS) is caught by the same test, in CI time."""
    run, claimed = MECHANISMS[name]()  # the claim of the intact mechanism
    _sabotage(monkeypatch, name, CI_FACTOR[name])
    bound, claim, delta = _audit(run, claimed, CI_RUNS[name])
    assert bound > claim, f"{name}: the sabotaged mechanism went unnoticed ({bound:.3f})"


@pytest.mark.skipif(not SLOW, reason="slow audit: set DPSYNTH_AUDIT_SLOW=1")
@pytest.mark.parametrize("name", list(MECHANISMS))
def test_slow_canary_audit(name, monkeypatch):
    """SLOW_RUNS runs per table: the intact mechanism passes, half the noise is caught
    (a quarter for SDS)."""
    run, claimed = MECHANISMS[name]()
    bound, claim, delta = _audit(run, claimed, SLOW_RUNS)
    print(f"{name}: intact, epsilon >= {bound:.3f} at delta={delta} (claimed {claim:.3f})")
    assert bound <= claim
    _sabotage(monkeypatch, name, SLOW_FACTOR[name])
    bound, claim, delta = _audit(run, claimed, SLOW_RUNS)
    print(f"{name}: 1/{SLOW_FACTOR[name]:g} of the noise, epsilon >= {bound:.3f} at "
          f"delta={delta} (claimed {claim:.3f})")
    assert bound > claim
