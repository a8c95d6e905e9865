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
from dpsynth.release.workload_release import discovery_proportion
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


def floor(real, scale, tau, lengths=(1, 2, 3)):
    """Expected share of records unmatched in the k-way marginals, mean over the sets
    (``{str(k): share}`` for every k of ``lengths`` up to the number of columns)."""
    unreleased = np.zeros(real.shape)  # per record and column: its value is not released
    for j, name in enumerate(real.columns):
        column = real[name]
        counts = column.map(column.value_counts()).to_numpy(float)
        unreleased[:, j] = np.where(column.isna(), 0.0,  # the missing code is public
                                    norm.cdf((tau - counts) / scale))
    kept = 1.0 - unreleased
    return {str(k): float(np.mean([1.0 - np.prod(kept[:, list(cols)], axis=1).mean()
                                   for cols in itertools.combinations(range(real.shape[1]), k)]))
            for k in lengths if k <= real.shape[1]}


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
    save(STEM, {"records": records}, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
