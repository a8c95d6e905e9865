"""Scale test: dpsynth on 1,000,000 rows x 24 columns (the NIST MA excerpt, tiled).

The 21 prepared columns of :func:`benchmarks.datasets.load_nist_ma` plus the
three it drops, made categorical with public codes or bins: ``INDP`` (industry
codes), ``PWGTP`` and ``WGTP`` (sampling weights, binned at fixed edges).
Prints fit time, sample time and CSV writing time (optional) and peak memory.
Usage::

    python -m benchmarks.run_large [--rows 1000000] [--sample] [--n-jobs N] [--output PATH]

With ``--sample`` the synthetic table is written as CSV to ``--output``
(default: a temporary file, deleted afterwards).
"""

import argparse
import os
import resource
import tempfile
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
    parser.add_argument("--output", default=None,
                        help="CSV file for the synthetic table (default: a temporary file)")
    args = parser.parse_args(argv)
    table = load_wide_table(args.rows)
    print(f"table: {table.shape[0]} rows x {table.shape[1]} columns", flush=True)
    synth = DPMarginalSynthesizer(epsilon=4.0, reporting_length=3, n_jobs=args.n_jobs,
                                  random_state=0, verbose=1)
    start, cpu = time.perf_counter(), time.process_time()
    synth.fit(table)
    print(f"fit: {time.perf_counter() - start:.1f} s (cpu {time.process_time() - cpu:.1f} s), "
          f"{synth.aggregates_}", flush=True)
    if args.sample:
        start, cpu = time.perf_counter(), time.process_time()
        synthetic = synth.sample()
        print(f"sample: {time.perf_counter() - start:.1f} s "
              f"(cpu {time.process_time() - cpu:.1f} s)", flush=True)
        output = args.output
        if output is None:
            handle, output = tempfile.mkstemp(suffix=".csv")
            os.close(handle)
        try:
            start, cpu = time.perf_counter(), time.process_time()
            synthetic.to_csv(output, index=False)
            print(f"write: {time.perf_counter() - start:.1f} s "
                  f"(cpu {time.process_time() - cpu:.1f} s, "
                  f"{os.path.getsize(output) / 1e6:.0f} MB)", flush=True)
        finally:
            if args.output is None:
                os.unlink(output)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory: {peak:.0f} MB; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores (wall times include waiting for other processes)")


if __name__ == "__main__":
    main()
