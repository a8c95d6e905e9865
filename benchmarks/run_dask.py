"""Dask benchmark: fit and sample a 10M-row table on a LocalCluster, beside the in-memory path.

The table: the 24-column NIST MA excerpt of :mod:`benchmarks.run_large`, drawn
with replacement (a fresh bootstrap draw of ``--partition-rows`` records per
Parquet file, seeded by the file's number), ``--rows`` records in all.  Steps:

1. write the Parquet files (``--data-dir``, default a temporary directory);
2. start ``LocalCluster(n_workers=--workers, threads_per_worker=1,
   memory_limit=--memory-limit)`` and fit ``DPMarginalSynthesizer(epsilon=4)``
   (the default workload release) on ``dask.dataframe.read_parquet``;
3. sample ``--sample-rows`` records (default: the DP record count) into
   Parquet partitions of ``--partition-rows`` with
   :func:`dpsynth.engines.dask.sample_to_parquet`;
4. the in-memory path on ``--in-memory-rows`` rows (the first files, read
   with pandas), in a child interpreter so that its peak memory is its own.

Memory: the cluster's is sampled by ``distributed.diagnostics.MemorySampler``
(sum over workers of the process memory; the peak is reported), the client's
is its ``ru_maxrss``.  Results go to ``results/dask.json`` and
``results/dask.md``.  Usage::

    python -m benchmarks.run_dask [--rows 10000000] [--partition-rows 1000000]
        [--workers 2] [--memory-limit 6GB] [--sample-rows N] [--in-memory-rows 1000000]
        [--data-dir DIR]
"""

import argparse
import json
import os
from pathlib import Path
import resource
import shutil
import sys
import tempfile
import time

import numpy as np
import pandas as pd

from ._results import run_child, save

EPSILON = 4.0


def write_table(directory, rows, partition_rows):
    """Write ``rows`` bootstrap records of the 24-column table as Parquet files."""
    from .run_large import load_wide_table
    from .datasets import load_nist_ma

    base = load_wide_table(len(load_nist_ma()))
    files = []
    for i, start in enumerate(range(0, rows, partition_rows)):
        size = min(partition_rows, rows - start)
        picks = np.random.default_rng(i).integers(0, len(base), size)
        path = Path(directory) / f"part.{i:03d}.parquet"
        base.iloc[picks].reset_index(drop=True).to_parquet(path, index=False)
        files.append(str(path))
    return files


def _peak_mb():
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def run_dask(files, args):
    """Fit and sample on a LocalCluster; returns the measurements."""
    import dask.dataframe as dd
    import distributed
    from distributed.diagnostics import MemorySampler

    from dpsynth import DPMarginalSynthesizer
    from dpsynth.engines.dask import sample_to_parquet

    result = {}
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                  memory_limit=args.memory_limit, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        sampler = MemorySampler()
        table = dd.read_parquet(files)
        synth = DPMarginalSynthesizer(epsilon=EPSILON, random_state=0)
        with sampler.sample("fit", interval=0.5):
            start, cpu = time.perf_counter(), time.process_time()
            synth.fit(table)
            result["fit_s"] = round(time.perf_counter() - start, 1)
            result["fit_client_cpu_s"] = round(time.process_time() - cpu, 1)
        result["n_records_dp"] = int(synth.n_records_)
        result["n_marginals"] = len(synth.aggregates_.marginals)
        n = synth.n_records_ if args.sample_rows is None else args.sample_rows
        out = Path(tempfile.mkdtemp(prefix="dpsynth-sample-"))
        try:
            with sampler.sample("sample", interval=0.5):
                start = time.perf_counter()
                written = sample_to_parquet(synth, out, n, partition_size=args.partition_rows,
                                            random_state=1)
                result["sample_s"] = round(time.perf_counter() - start, 1)
            result["sample_rows"] = int(n)
            result["sample_files"] = len(written)
            result["sample_mb_on_disk"] = round(
                sum(os.path.getsize(f) for f in written) / 1e6)
        finally:
            shutil.rmtree(out, ignore_errors=True)
        frame = sampler.to_pandas()
        for label in ("fit", "sample"):
            result[f"{label}_cluster_peak_mb"] = round(float(frame[label].max()) / 2**20)
        result["client_peak_mb"] = _peak_mb()
        result["workers"] = args.workers
        result["memory_limit"] = args.memory_limit
        del client
    return result


def run_in_memory(files, rows):
    """The in-memory path on the first files (``rows`` records): fit, sample, write."""
    from dpsynth import DPMarginalSynthesizer

    table = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True).iloc[:rows]
    result = {"rows": len(table)}
    synth = DPMarginalSynthesizer(epsilon=EPSILON, random_state=0)
    start = time.perf_counter()
    synth.fit(table)
    result["fit_s"] = round(time.perf_counter() - start, 1)
    start = time.perf_counter()
    synthetic = synth.sample()
    result["sample_s"] = round(time.perf_counter() - start, 1)
    handle, path = tempfile.mkstemp(suffix=".parquet")
    os.close(handle)
    try:
        start = time.perf_counter()
        synthetic.to_parquet(path, index=False)
        result["write_s"] = round(time.perf_counter() - start, 1)
    finally:
        os.unlink(path)
    result["peak_mb"] = _peak_mb()
    return result


def _markdown(results):
    d, m = results["dask"], results.get("in_memory") or {}
    lines = [
        f"Measured {results['date']} on {results['cpu_count']} cores "
        f"(load average {results['load_average']}): `{results['command']}`.", "",
        "| path | rows | fit s | sample s (rows) | peak MB |",
        "|---|---:|---:|---:|---:|",
        f"| dask LocalCluster, {d['workers']} workers x 1 thread, {d['memory_limit']} each | "
        f"{results['rows']:,} | {d['fit_s']} | {d['sample_s']} ({d['sample_rows']:,}) | "
        f"cluster {max(d['fit_cluster_peak_mb'], d['sample_cluster_peak_mb'])}, "
        f"client {d['client_peak_mb']} |",
    ]
    if m:
        lines.append(f"| in memory (pandas), one process | {m['rows']:,} | {m['fit_s']} | "
                     f"{m['sample_s']} ({m['rows']:,}) | {m['peak_mb']} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    """Write the table, run both paths, save ``results/dask.json`` and ``results/dask.md``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--partition-rows", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="6GB")
    parser.add_argument("--sample-rows", type=int, default=None)
    parser.add_argument("--in-memory-rows", type=int, default=1_000_000,
                        help="rows of the in-memory comparison (0: skip it)")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--in-memory-point", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--files", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.in_memory_point:
        print(json.dumps(run_in_memory(args.files, args.in_memory_point)))
        return
    directory = Path(args.data_dir or tempfile.mkdtemp(prefix="dpsynth-dask-"))
    directory.mkdir(parents=True, exist_ok=True)
    try:
        start = time.perf_counter()
        files = write_table(directory, args.rows, args.partition_rows)
        print(f"wrote {len(files)} Parquet files in {time.perf_counter() - start:.0f} s",
              flush=True)
        results = {"command": "python -m benchmarks.run_dask " + " ".join(sys.argv[1:]),
                   "date": time.strftime("%Y-%m-%d"), "cpu_count": os.cpu_count(),
                   "rows": args.rows, "partition_rows": args.partition_rows}
        results["dask"] = run_dask(files, args)
        print(json.dumps(results["dask"]), flush=True)
        if args.in_memory_rows:
            needed = files[: -(-args.in_memory_rows // args.partition_rows)]
            results["in_memory"] = run_child(["benchmarks.run_dask", "--in-memory-point",
                                              str(args.in_memory_rows), "--files", *needed])
            print(json.dumps(results["in_memory"]), flush=True)
        results["load_average"] = round(os.getloadavg()[0], 1)
    finally:
        if args.data_dir is None:
            shutil.rmtree(directory, ignore_errors=True)
    save("dask", results, _markdown(results))


if __name__ == "__main__":
    main()
