"""Scale test: dpsynth on 1,000,000 rows x 24 columns (the NIST MA excerpt, tiled).

The 21 prepared columns of :func:`benchmarks.datasets.load_nist_ma` plus the
three it drops, made categorical with public codes or bins: ``INDP`` (industry
codes), ``PWGTP`` and ``WGTP`` (sampling weights, binned at fixed edges).
Prints fit time, sample time (optional) and peak memory.  Usage::

    python -m benchmarks.run_large [--rows 1000000] [--sample] [--n-jobs N]
"""

import argparse
import resource
import time

import numpy as np
import pandas as pd

from dpsynth import DPMarginalSynthesizer

from .datasets import load_nist_ma, shared_dir

WEIGHT_EDGES = [-1, 0, 25, 50, 100, 200, 400, 10_000]
"""Public bin edges of the sampling weights (0 marks group quarters for WGTP)."""


def load_wide_table(rows):
    """The 24-column MA excerpt, tiled to ``rows`` rows."""
    base = load_nist_ma()
    raw = pd.read_csv(shared_dir() / "data" / "nist-diverse-communities-ma" / "ma2019.csv",
                      dtype=str, keep_default_na=False)
    base["INDP"] = raw["INDP"].replace("N", None).to_numpy()
    for column in ("PWGTP", "WGTP"):
        base[column] = pd.cut(raw[column].astype(int), WEIGHT_EDGES).astype(str).to_numpy()
    repeats = int(np.ceil(rows / len(base)))
    return pd.concat([base] * repeats, ignore_index=True).iloc[:rows]


def main(argv=None):
    """Fit (and optionally sample) and report time and peak memory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--sample", action="store_true", help="also sample n_records_ rows")
    parser.add_argument("--n-jobs", type=int, default=None,
                        help="sampling threads (-1: all processors; default 1)")
    args = parser.parse_args(argv)
    table = load_wide_table(args.rows)
    print(f"table: {table.shape[0]} rows x {table.shape[1]} columns", flush=True)
    synth = DPMarginalSynthesizer(epsilon=4.0, reporting_length=3, n_jobs=args.n_jobs,
                                  random_state=0, verbose=1)
    start = time.perf_counter()
    synth.fit(table)
    print(f"fit: {time.perf_counter() - start:.1f} s, {synth.aggregates_}", flush=True)
    if args.sample:
        start = time.perf_counter()
        synth.sample()
        print(f"sample: {time.perf_counter() - start:.1f} s", flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory: {peak:.0f} MB")


if __name__ == "__main__":
    main()
