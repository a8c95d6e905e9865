"""Issue #37: the accuracy floor that DP value discovery sets for the default path.

With nothing declared, the workload release (:mod:`dpsynth.release.workload_release`)
publishes a column's value only when its noisy count crosses the DP set union's
threshold; the records of the values not released become the column's *other*
value.  A synthetic record never holds a value that was not released, so in
every k-way marginal the real records holding an unreleased value in one of
its columns are unmatched: their share is a lower bound on the k-way TVD of
the default, whatever the rest of the release does (no noise, a perfect fit).

For each table and epsilon, this computes the threshold of the released
values (discrete Gaussian noise, as the release draws it, at the benchmark's
``delta = 1 / (n ln n)``) for the discovery share the release uses
(:func:`~dpsynth.release.workload_release.discovery_proportion`) and for the whole
budget, then the expected share of unmatched records, averaged over every
1-, 2- and 3-way column set (each value released with the probability that
its count plus the noise crosses the threshold).  ``declared`` is the 3-way
TVD of the release with the categories declared (``results/workload.json``,
``benchmarks.run_workload``) when it was measured there; the default can
come within ``x`` of it only if the floor is below ``x`` times it.

A second table gives the floor of the release as it runs today, with its
second discovery round (:func:`two_round_floor`): the first round at
``SECOND_ROUND_DELTA`` less delta, the columns whose expected undiscovered
count passes the release's rule measured again, a value unreleased when it
stays below both rounds' thresholds.

Usage, from the repository root::

    python -m benchmarks.run_discovery_floor [--datasets adult@1000 adult@2000 pums]
        [--epsilons 1 4 10]
"""

import argparse
import itertools
import json
import math

import numpy as np
from scipy.stats import norm

from dpsynth import accounting
from dpsynth.mechanisms import discrete_gaussian_scale
from dpsynth.release.workload_release import (MAX_GAIN, MIN_REMAINDER, NOISE_MARGIN,
                                              REMAINDER_SHARE,
                                              SECOND_ROUND_DELTA, SECOND_ROUND_SHARE,
                                              combined_threshold, discovery_proportion)
from dpsynth.accounting import gdp_mu

from ._results import RESULTS, save
from .datasets import load, table_argument
from .run_workload import reference_delta

STEM = "discovery_floor"
DEFAULT_TABLES = ("adult@1000", "adult@2000", "pums", "nist_ma", "adult")


def threshold(n_columns, rho, delta):
    """``(noise scale, threshold)`` of one discovery of ``n_columns`` undeclared columns
    with budget ``rho``, as :mod:`dpsynth.release.workload_release` draws it (discrete noise)."""
    scale = discrete_gaussian_scale(math.sqrt(n_columns / (2.0 * rho)))
    return scale, accounting.first_level_threshold(scale / math.sqrt(n_columns), n_columns,
                                                   delta) + 1.0


def _record_counts(column):
    """Per record: the count of its value in ``column`` (NaN where missing)."""
    return column.map(column.value_counts()).to_numpy(float)


def floor(real, scale, tau, lengths=(1, 2, 3)):
    """Expected share of records unmatched in the k-way marginals, mean over the sets
    (``{str(k): share}`` for every k of ``lengths`` up to the number of columns)."""
    unreleased = np.zeros(real.shape)  # per record and column: its value is not released
    for j, name in enumerate(real.columns):
        column = real[name]
        unreleased[:, j] = np.where(column.isna(), 0.0,  # the missing code is public
                                    norm.cdf((tau - _record_counts(column)) / scale))
    return _unmatched(unreleased, lengths)


def two_round_floor(real, rho, delta, lengths=(1, 2, 3)):
    """The floor of :func:`floor` for the release's two discovery rounds.

    ``rho`` is the first round's budget.  A column takes part in the second
    round when its expected undiscovered count passes the release's rule
    (``MIN_REMAINDER`` of its records and ``NOISE_MARGIN`` times the remainder count's noise,
    taken at its expectation); there a value stays unreleased when its first
    noisy count is below the first threshold and the second round's statistic
    below its threshold (a bivariate normal probability: the mean of both
    rounds is correlated with the first).  Returns the floor, the number of
    columns selected and the second round's threshold (None if none).
    """
    from scipy.stats import multivariate_normal

    n, d = real.shape
    scale, tau = threshold(d, rho, delta * (1.0 - SECOND_ROUND_DELTA))
    rest = discrete_gaussian_scale(math.sqrt(d / (2.0 * REMAINDER_SHARE * rho)))
    counts = [_record_counts(real[name]) for name in real.columns]
    unreleased = np.zeros(real.shape)
    for j, c in enumerate(counts):
        unreleased[:, j] = np.where(np.isnan(c), 0.0, norm.cdf((tau - c) / scale))
    remainder = unreleased.sum(axis=0)
    selected = [j for j in range(d) if remainder[j] > max(MIN_REMAINDER * n, NOISE_MARGIN * rest)]
    if not selected:
        return _unmatched(unreleased, lengths), 0, None
    k = len(selected)
    rho_second = min(SECOND_ROUND_SHARE, MAX_GAIN * k / d) * rho
    second, alone = threshold(k, rho_second, delta * SECOND_ROUND_DELTA)
    mean = combined_threshold(scale, second, k, delta * SECOND_ROUND_DELTA, "discrete")
    variance = 1.0 / (1.0 / scale**2 + 1.0 / second**2)
    for j in selected:
        present = ~np.isnan(counts[j])
        for c in np.unique(counts[j][present]):
            if mean <= alone:  # first noisy count and the mean of both: correlated normals
                corr = math.sqrt(variance) / scale
                p = multivariate_normal.cdf([(tau - c) / scale, (mean - c) / math.sqrt(variance)],
                                            mean=[0.0, 0.0], cov=[[1.0, corr], [corr, 1.0]])
            else:
                p = norm.cdf((tau - c) / scale) * norm.cdf((alone - c) / second)
            unreleased[present & (counts[j] == c), j] = p
    return _unmatched(unreleased, lengths), k, min(mean, alone)


def _unmatched(unreleased, lengths):
    """Mean over the k-column sets of the expected share of records holding an
    unreleased value in one of the set's columns (``{str(k): share}``)."""
    kept = 1.0 - unreleased
    d = unreleased.shape[1]
    return {str(k): float(np.mean([1.0 - np.prod(kept[:, list(cols)], axis=1).mean()
                                   for cols in itertools.combinations(range(d), k)]))
            for k in lengths if k <= d}


def declared_tvd(path=RESULTS / "workload.json"):
    """``{(dataset, epsilon): mean 3-way TVD}`` of the declared mode in ``workload.json``."""
    if not path.exists():
        return {}
    groups = {}
    for r in json.loads(path.read_text())["records"]:
        if r["method"] == "declared":
            groups.setdefault((r["dataset"], float(r["epsilon"])), []).append(r["tvd"]["3"])
    return {key: float(np.mean(values)) for key, values in groups.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", type=table_argument,
                        default=list(DEFAULT_TABLES))
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 4.0, 10.0])
    args = parser.parse_args(argv)
    declared = declared_tvd()
    records = []
    lines = ["| data | ε | discovery share | threshold (records) | floor of TVD 1 / 2 / 3-way "
             "| declared 3-way | floor / declared |", "|---|---|---|---|---|---|---|"]
    second_lines = ["| data | ε | columns in round 2 | threshold (records) | floor of TVD "
                    "1 / 2 / 3-way | declared 3-way | floor / declared |",
                    "|---|---|---|---|---|---|---|"]
    for dataset in args.datasets:
        real = load(dataset)
        n, d = real.shape
        delta = reference_delta(n)
        for epsilon in args.epsilons:
            rho = gdp_mu(epsilon, delta / 2.0) ** 2 / 2.0  # delta / 2 pays for the set union
            for share in (discovery_proportion(epsilon), 1.0):
                scale, tau = threshold(d, share * rho, delta)
                bound = floor(real, scale, tau)
                ref = declared.get((dataset, float(epsilon)))
                records.append({"dataset": dataset, "epsilon": epsilon, "rows": n,
                                "delta": delta, "discovery_share": share,
                                "noise_scale": scale, "threshold": tau,
                                "tvd_floor": bound, "declared_tvd_3": ref})
                lines.append(
                    f"| {dataset} | {epsilon:g} | {share:.2f} | {tau:.0f} | "
                    + " / ".join(f"{bound[k]:.3f}" for k in "123")
                    + (f" | {ref:.3f} | {bound['3'] / ref:.2f}x |" if ref else " | - | - |"))
                print(lines[-1], flush=True)
            share = discovery_proportion(epsilon)
            bound, k, tau = two_round_floor(real, share * rho, delta)
            ref = declared.get((dataset, float(epsilon)))
            records.append({"dataset": dataset, "epsilon": epsilon, "rows": n, "delta": delta,
                            "discovery_share": share, "second_round_columns": k,
                            "threshold": tau, "tvd_floor": bound, "declared_tvd_3": ref})
            second_lines.append(
                f"| {dataset} | {epsilon:g} | {k} of {d} | "
                + ("-" if tau is None else f"{tau:.0f}") + " | "
                + " / ".join(f"{bound[k]:.3f}" for k in "123")
                + (f" | {ref:.3f} | {bound['3'] / ref:.2f}x |" if ref else " | - | - |"))
            print(second_lines[-1], flush=True)
    save(STEM, {"records": records}, "\n".join(lines) + "\n\nWith the second discovery "
         "round (as the release runs it; the first round's share as above, the columns "
         "selected at their expected undiscovered counts):\n\n" + "\n".join(second_lines)
         + "\n")


if __name__ == "__main__":
    main()
