"""KS of numeric columns of several shapes binned with nothing declared (issue #36).

Each column of 6,000 values is binned by
:func:`~dpsynth.preprocessing._numeric.numeric_binning` at a per-column budget
of a wide table at epsilon 4 (``rho`` 0.005: step sigma 20), 6,000 values are
decoded from the binning's own noisy interval and point counts (the release
alone, without the rest of the table), and compared with the column
(Kolmogorov-Smirnov), over ``--seeds`` seeds.  The shapes: uniform integers
in a band far from 0 (ages 18-89, scores 600-699, days 17,897-19,399 since
1970: dates of 2019-2023), two clusters far apart (integers and floats), a
skewed amount (integers and floats), a band of floats, identifiers (every
third integer from 1,077,501: a narrow band high in its octave), and two tails
that thin out (normal ages, exponential durations).

Usage, from the repository root::

    python -m benchmarks.run_numeric_shapes [--seeds 200] [--stem numeric_shapes]

Writes ``results/<stem>.json`` and ``.md``: mean, 95th percentile and maximum KS,
the number of seeds above 0.07, the mean number of intervals, and the mean share of
decoded values below the column's smallest value or above its largest.
"""

import argparse

import numpy as np
from scipy.stats import ks_2samp

from dpsynth.preprocessing._discretizer import decode_binning
from dpsynth.preprocessing._numeric import numeric_binning

from ._results import save

RHO = 4 * 1 / (2 * 20.1 ** 2)
"""zCDP budget of one numeric column (three steps of sigma 20)."""
N = 6000


def shapes():
    """``{name: (values, integer)}``."""
    rng = np.random.default_rng(1)
    return {
        "ages 18-89": (rng.integers(18, 90, N).astype(float), True),
        "scores 600-699": (rng.integers(600, 700, N).astype(float), True),
        "days 2019-2023": (rng.integers(17897, 19400, N).astype(float), True),
        "two clusters (int)": (np.r_[rng.integers(100, 200, N // 2),
                                     rng.integers(5000, 5200, N // 2)].astype(float), True),
        "skewed amount (int)": (np.round(rng.lognormal(7, 1.5, N)), True),
        "skewed amount (float)": (np.round(rng.lognormal(7, 1.5, N), 2), False),
        "two clusters (float)": (np.round(np.r_[rng.uniform(1, 2, N // 2),
                                               rng.uniform(50, 52, N // 2)], 3), False),
        "band 600-700 (float)": (np.round(rng.uniform(600, 700, N), 2), False),
        "identifiers (int)": (rng.permutation(np.arange(1_077_501, 1_077_501 + 3 * N, 3))
                              .astype(float), True),
        "ages, thinning tail (int)": (np.round(rng.normal(38, 9, N)).clip(16, None), True),
        "durations, exponential (float)": (np.round(rng.exponential(30, N), 1), False),
    }


def run_one(values, integer, seed):
    """KS of ``N`` values decoded from the binning's counts, its intervals, and the
    share of decoded values beyond the column's smallest and largest values."""
    binning, _, _ = numeric_binning(values, integer=integer, rho=RHO, delta=1e-9, n_bins=10,
                                    max_points=10, rng=np.random.default_rng(seed))
    counts = np.clip(np.nan_to_num(np.asarray(binning.counts[0]), nan=0.0), 0, None)
    draw = np.random.default_rng(10_000 + seed)
    codes = draw.choice(counts.size, size=N, p=counts / counts.sum())
    decoded = decode_binning(codes, binning, draw)
    beyond = float(np.mean((decoded < values.min()) | (decoded > values.max())))
    return float(ks_2samp(values, decoded).statistic), binning.n_intervals, beyond


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--stem", default="numeric_shapes")
    args = parser.parse_args(argv)
    rows = {}
    for name, (values, integer) in shapes().items():
        runs = [run_one(values, integer, seed) for seed in range(args.seeds)]
        ks = np.array([r[0] for r in runs])
        rows[name] = {"mean": float(ks.mean()), "p95": float(np.quantile(ks, 0.95)),
                      "max": float(ks.max()), "above_0.07": int((ks > 0.07).sum()),
                      "intervals": float(np.mean([r[1] for r in runs])),
                      "beyond": float(np.mean([r[2] for r in runs]))}
        print(name, rows[name], flush=True)
    lines = [f"KS of numeric columns binned with nothing declared (rho {RHO:.4f} a column, "
             f"{N} values, {args.seeds} seeds): decoded from the binning's noisy counts.", "",
             "| column | mean KS | 95th percentile | max | seeds above 0.07 | intervals "
             "| beyond the column's values |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {name} | {r['mean']:.4f} | {r['p95']:.4f} | {r['max']:.4f} | "
              f"{r['above_0.07']} | {r['intervals']:.1f} | {r['beyond']:.2%} |"
              for name, r in rows.items()]
    save(args.stem, {"rho": RHO, "n": N, "seeds": args.seeds, "rows": rows},
         "\n".join(lines) + "\n")
    return rows


if __name__ == "__main__":
    main()
