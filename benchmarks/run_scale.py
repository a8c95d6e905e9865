"""Scale curve: fit, sample and write time and peak memory against rows and columns.

Two curves, each point in a child interpreter so that its peak resident
memory (``ru_maxrss``) is its own:

- rows: the 24-column table of :mod:`benchmarks.run_large` (the NIST MA
  excerpt, tiled) at 10^4 .. 10^6 rows;
- columns: 10 .. 100 columns at a fixed number of rows (default 10^4): the 24
  columns repeated in blocks, block ``b`` with its rows shifted by ``b * 997``
  (so that blocks are not copies of each other), cut to the width.

Every point runs ``DPMarginalSynthesizer(epsilon=4, reporting_length=3)``
with the default settings: fit, ``sample()`` (``n_records_`` rows, marginal
matching with ``--n-jobs`` threads) and ``to_csv``.  Results go to
``results/scale.json`` and ``results/scale.md``.  Time should grow linearly
in rows and as ``C(d, <= 3)`` in columns.  Usage::

    python -m benchmarks.run_scale [--rows 10000 30000 100000 300000 1000000]
                                   [--columns 10 20 40 70 100] [--column-rows 10000]
                                   [--n-jobs -1] [--stem scale]

Wide tables (past :data:`~dpsynth.release.adaptive_selection.MAX_CANDIDATE_CELLS`,
a random subset of the triples are candidates)::

    python -m benchmarks.run_scale --rows --columns 100 200 300 500 --stem scale_wide
"""

import argparse
import json
import math
import os
import resource
import sys
import tempfile
import time

import numpy as np
import pandas as pd

from ._results import run_child, save

_SHIFT = 997


def wide_table(rows, columns):
    """``rows`` x ``columns`` table from the 24-column MA excerpt (see module docstring)."""
    from .run_large import load_wide_table

    base = load_wide_table(rows)
    blocks = []
    for b in range(math.ceil(columns / base.shape[1])):
        block = base.iloc[np.roll(np.arange(rows), b * _SHIFT)].reset_index(drop=True)
        blocks.append(block.add_suffix(f"_{b}") if b else block)
    return pd.concat(blocks, axis=1).iloc[:, :columns]


def run_point(rows, columns, n_jobs):
    """Fit, sample and write one table; returns the measurements (in this process)."""
    from dpsynth import DPMarginalSynthesizer

    table = wide_table(rows, columns)
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    synth = DPMarginalSynthesizer(epsilon=4.0, reporting_length=3, n_jobs=n_jobs,
                                  random_state=0)
    cpu = time.process_time()
    start = time.perf_counter()
    synth.fit(table)
    fit = time.perf_counter() - start
    start = time.perf_counter()
    synthetic = synth.sample()
    sample = time.perf_counter() - start
    handle, path = tempfile.mkstemp(suffix=".csv")
    os.close(handle)
    try:
        start = time.perf_counter()
        synthetic.to_csv(path, index=False)
        write = time.perf_counter() - start
    finally:
        os.unlink(path)
    return {"rows": rows, "columns": columns, "n_jobs": n_jobs,
            "fit_s": round(fit, 2), "sample_s": round(sample, 2), "write_s": round(write, 2),
            "total_s": round(fit + sample + write, 2),
            "cpu_s": round(time.process_time() - cpu, 2),
            "load_average": round(os.getloadavg()[0], 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "baseline_rss_mb": round(baseline),
            "combinations_up_to_3": sum(math.comb(columns, k) for k in (1, 2, 3)),
            # noisy tables of the workload release (SDS: its released combinations)
            "released_combinations": len(synth.aggregates_.marginals) or len(synth.aggregates_)}


def _measure(rows, columns, n_jobs):
    """Run :func:`run_point` in a child interpreter; returns its result (or the error)."""
    result = run_child(["benchmarks.run_scale", "--point", str(rows), str(columns),
                        "--n-jobs", str(n_jobs)])
    return {"rows": rows, "columns": columns, **result} if "error" in result else result


def _markdown(results):
    lines = ["| curve | rows | columns | C(d, <=3) | fit s | sample s | write s | total s "
             "| cpu s | peak MB | load avg |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for curve, points in results["curves"].items():
        for p in points:
            if "error" in p:
                lines.append(f"| {curve} | {p['rows']} | {p['columns']} | | error | | | | | | |")
                continue
            lines.append(f"| {curve} | {p['rows']} | {p['columns']} | "
                         f"{p['combinations_up_to_3']} | {p['fit_s']} | {p['sample_s']} | "
                         f"{p['write_s']} | {p['total_s']} | {p['cpu_s']} | {p['peak_rss_mb']} | "
                         f"{p['load_average']} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    """Run the curves and write ``results/scale.json`` and ``results/scale.md``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="*",
                        default=[10_000, 30_000, 100_000, 300_000, 1_000_000])
    parser.add_argument("--columns", type=int, nargs="*", default=[10, 20, 40, 70, 100])
    parser.add_argument("--column-rows", type=int, default=10_000,
                        help="rows of the tables of the columns curve")
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--stem", default="scale",
                        help="results/STEM.json and .md (default: scale)")
    parser.add_argument("--point", type=int, nargs=2, metavar=("ROWS", "COLUMNS"),
                        help=argparse.SUPPRESS)  # one point, in this process
    args = parser.parse_args(argv)
    if args.point:
        print(json.dumps(run_point(*args.point, args.n_jobs)))
        return
    results = {"command": "python -m benchmarks.run_scale " + " ".join(sys.argv[1:]),
               "cpu_count": os.cpu_count(), "curves": {"rows": [], "columns": []}}
    for curve, points in (("rows", [(r, 24) for r in args.rows]),
                          ("columns", [(args.column_rows, c) for c in args.columns])):
        for rows, columns in points:
            result = _measure(rows, columns, args.n_jobs)
            print(json.dumps(result), flush=True)
            results["curves"][curve].append(result)
    save(args.stem, results, _markdown(results))


if __name__ == "__main__":
    main()
