"""Dask benchmark: fit on Parquet partitions and sample to Parquet partitions on a LocalCluster.

The table: the raw 24-column NIST MA excerpt of :func:`benchmarks.run_large.raw_table`
(21 text columns and 3 numeric ones, nothing declared: values discovered and
numeric columns binned under DP), drawn with replacement, one Parquet file of
``--partition-rows`` records per seed (file ``i`` with seed ``i``), written
file by file (:func:`benchmarks.run_large.write_parquet`; existing files in
``--data-dir`` are reused).  For every ``--rows`` value:

1. start ``LocalCluster(n_workers=--workers, threads_per_worker=1,
   memory_limit=--memory-limit)`` and fit ``DPMarginalSynthesizer(epsilon=4,
   random_state=0)`` (the default workload release) on
   ``dask.dataframe.read_parquet`` of the first files;
2. sample the DP record count (or ``--sample-rows``) into Parquet partitions
   of ``--partition-rows`` with :func:`dpsynth.engines.dask.sample_to_parquet`,
   and check the files' record count (Parquet metadata);
3. optionally (``--in-memory-rows``) the in-memory path on the first files,
   in a child interpreter.

``--binner-rows`` measures instead the client's cost of fitting the encoder
on one continuous float column (every value distinct, 5% missing), one Parquet
file of ``--partition-rows`` per seed, binned by DP quantiles with DP
frequent values and DP within-bin histograms (the binners that read values):
:func:`dpsynth.engines.dask.fit_encoder` on the same kind of cluster, in a
child interpreter per size (its own ``ru_maxrss``), then again with
``tracemalloc`` on (the peak of the client's traced allocations during the
fit, numpy arrays included).  Results go to ``results/dask_binner.json`` and
``results/dask_binner.md``.

Memory: every worker's resident set size is polled once a second
(``client.run``), and the peak of each worker is reported; the client's peak
is its ``ru_maxrss``.  The load average is sampled at the same time (its
maximum and its value at the end are reported).  Results accumulate in
``results/dask.json`` (one entry per row count, replaced when re-run) and
``results/dask.md``.  Usage::

    python -m benchmarks.run_dask --rows 10000000 20000000 [--partition-rows 1000000]
        [--workers 2] [--memory-limit 4GB] [--sample-rows N] [--in-memory-rows 0]
        [--data-dir DIR]
    python -m benchmarks.run_dask --binner-rows 1000000 10000000 [--partition-rows 1000000]
"""

import argparse
import json
import os
from pathlib import Path
import resource
import shutil
import tempfile
import threading
import time

import numpy as np
import pandas as pd

from ._results import RESULTS, run_child, save

EPSILON = 4.0


def _rss():
    import psutil  # a dependency of distributed

    return psutil.Process().memory_info().rss


def _cpu():
    times = os.times()
    return times.user + times.system


def _workers_cpu(client):
    return sum(client.run(_cpu).values())


class _Monitor:
    """Poll the workers' resident set sizes and the load average in a thread."""

    def __init__(self, client, interval=1.0):
        self.client, self.interval = client, interval
        self.peaks, self.load = {}, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                for worker, rss in self.client.run(_rss).items():
                    self.peaks[worker] = max(self.peaks.get(worker, 0), rss)
            except Exception:  # a worker restarting: measured at the next poll
                pass
            self.load.append(os.getloadavg()[0])
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def summary(self):
        return {"worker_peak_mb": sorted(round(v / 2**20) for v in self.peaks.values()),
                "load_average_max": round(max(self.load, default=0.0), 1)}


def _peak_mb():
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def run_dask(files, args, rows):
    """Fit and sample on a LocalCluster; returns the measurements."""
    import dask.dataframe as dd
    import distributed
    import pyarrow.parquet as pq

    from dpsynth import DPMarginalSynthesizer
    from dpsynth.engines.dask import sample_to_parquet

    result = {"rows": rows, "files": len(files), "workers": args.workers,
              "memory_limit": args.memory_limit, "partition_rows": args.partition_rows}
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                  memory_limit=args.memory_limit, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        table = dd.read_parquet(files)
        synth = DPMarginalSynthesizer(epsilon=EPSILON, random_state=0)
        result["load_average_start"] = round(os.getloadavg()[0], 1)
        with _Monitor(client) as monitor:
            start, cpu, workers = time.perf_counter(), time.process_time(), _workers_cpu(client)
            synth.fit(table)
            result["fit_s"] = round(time.perf_counter() - start, 1)
            result["fit_client_cpu_s"] = round(time.process_time() - cpu, 1)
            result["fit_workers_cpu_s"] = round(_workers_cpu(client) - workers, 1)
        result["fit_client_peak_mb"] = _peak_mb()
        result.update({f"fit_{k}": v for k, v in monitor.summary().items()})
        result["n_records_dp"] = int(synth.n_records_)
        result["n_marginals"] = len(synth.aggregates_.marginals)
        n = synth.n_records_ if args.sample_rows is None else args.sample_rows
        out = Path(tempfile.mkdtemp(prefix="dpsynth-sample-", dir=args.sample_dir))
        try:
            with _Monitor(client) as monitor:
                start, cpu = time.perf_counter(), time.process_time()
                workers = _workers_cpu(client)
                written = sample_to_parquet(synth, out, n, partition_size=args.partition_rows,
                                            random_state=1)
                result["sample_s"] = round(time.perf_counter() - start, 1)
                result["sample_client_cpu_s"] = round(time.process_time() - cpu, 1)
                result["sample_workers_cpu_s"] = round(_workers_cpu(client) - workers, 1)
            result.update({f"sample_{k}": v for k, v in monitor.summary().items()})
            result["sample_rows"] = int(n)
            result["sample_rows_written"] = sum(pq.read_metadata(f).num_rows for f in written)
            result["sample_files"] = len(written)
            result["sample_mb_on_disk"] = round(sum(os.path.getsize(f) for f in written) / 1e6)
        finally:
            shutil.rmtree(out, ignore_errors=True)
        result["client_peak_mb"] = _peak_mb()
        result["load_average_end"] = round(os.getloadavg()[0], 1)
    minutes = args.workers * result["fit_s"] / 60
    result["fit_rows_per_worker_minute"] = round(rows / minutes)
    result["sample_records_per_worker_minute"] = round(
        result["sample_rows"] / (args.workers * result["sample_s"] / 60))
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
    result["peak_mb"] = _peak_mb()
    return result


def _workspace(args, stem, prefix):
    """The input directory (``--data-dir``, else a temporary one) and the runs so far
    in ``results/<stem>.json``."""
    directory = Path(args.data_dir or tempfile.mkdtemp(prefix=prefix))
    directory.mkdir(parents=True, exist_ok=True)
    previous = RESULTS / f"{stem}.json"
    results = json.loads(previous.read_text()) if previous.exists() else {}
    return directory, {"runs": results.get("runs", {})}


def write_float_parquet(directory, rows, partition_rows):
    """``rows`` continuous float64 values (5% missing) in Parquet files of ``partition_rows``
    (file ``i`` drawn with seed ``i``, reused if present); returns their paths."""
    files = []
    for i, start in enumerate(range(0, rows, partition_rows)):
        path = Path(directory) / f"float.{i:03d}.parquet"
        files.append(str(path))
        if not path.exists():
            rng = np.random.default_rng(i)
            x = rng.gamma(2.0, 20_000.0, min(partition_rows, rows - start))
            x[rng.random(x.size) < 0.05] = np.nan
            pd.DataFrame({"x": x}).to_parquet(path, index=False)
    return files


def binner_fit_point(files, workers, memory_limit, traced):
    """Fit the value-reading binners of one float column on a LocalCluster (this process
    is the client); returns the client's time, CPU and memory."""
    import tracemalloc

    import dask.dataframe as dd
    import distributed

    from dpsynth.engines.dask import fit_encoder
    from dpsynth.preprocessing import TableEncoder

    encoder = TableEncoder(bounds={"x": (0, 400_000)}, binning="quantile", binning_epsilon=1.0,
                           n_bins=16, frequent_values="dp", frequent_epsilon=0.5,
                           inverse="dp_histogram", inverse_epsilon=0.5, random_state=0)
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                  memory_limit=memory_limit, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        table = dd.read_parquet(files)
        before = _peak_mb()
        load = os.getloadavg()[0]
        if traced:
            tracemalloc.start()
        start, cpu = time.perf_counter(), time.process_time()
        fit_encoder(encoder, table)
        result = {"fit_s": round(time.perf_counter() - start, 1),
                  "client_cpu_s": round(time.process_time() - cpu, 1)}
        if traced:
            result["traced_peak_mb"] = round(tracemalloc.get_traced_memory()[1] / 2**20)
            tracemalloc.stop()
        result.update(client_peak_mb=_peak_mb(), client_peak_before_fit_mb=before,
                      load_average=round(load, 1), edges=len(encoder.schema_[0].values))
    return result


def run_binner(args):
    """``--binner-rows``: each size in two child interpreters (untraced, traced)."""
    directory, results = _workspace(args, "dask_binner", "dpsynth-dask-float-")
    try:
        for rows in args.binner_rows:
            files = write_float_parquet(directory, rows, args.partition_rows)
            run = {"rows": rows, "files": len(files), "workers": args.workers,
                   "memory_limit": args.memory_limit,
                   "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   "command": (f"python -m benchmarks.run_dask --binner-rows {rows} "
                               f"--partition-rows {args.partition_rows} --workers "
                               f"{args.workers} --memory-limit {args.memory_limit}")}
            for traced in (False, True):
                point = ["benchmarks.run_dask", "--binner-point", str(int(traced)),
                         "--workers", str(args.workers), "--memory-limit", args.memory_limit,
                         "--files", *files]
                run["traced" if traced else "untraced"] = run_child(point)
            print(json.dumps(run), flush=True)
            results["runs"][str(rows)] = run
            lines = ["Client cost of `fit_encoder` on one continuous float column (DP "
                     "quantile bins, DP frequent values, DP within-bin histograms).", "",
                     "| rows | measured | fit s (client CPU s) | client peak RSS MB (before "
                     "the fit) | traced peak MB (fit s traced) | load average | command |",
                     "|---:|---|---:|---:|---:|---:|---|"]
            for key in sorted(results["runs"], key=int):
                d = results["runs"][key]
                u, t = d["untraced"], d["traced"]
                if "error" in u or "error" in t:
                    continue
                lines.append(
                    f"| {d['rows']:,} | {d['date']} | {u['fit_s']} ({u['client_cpu_s']}) | "
                    f"{u['client_peak_mb']} ({u['client_peak_before_fit_mb']}) | "
                    f"{t['traced_peak_mb']} ({t['fit_s']}) | {u['load_average']} | "
                    f"`{d['command']}` |")
            save("dask_binner", results, "\n".join(lines) + "\n")
    finally:
        if args.data_dir is None:
            shutil.rmtree(directory, ignore_errors=True)


def _markdown(results):
    lines = [
        "Fit (default workload release, epsilon 4, nothing declared) on Parquet files of "
        "the 24-column table (21 text, 3 numeric), then the DP record count sampled to "
        "Parquet files, on a `LocalCluster` of single-threaded workers with a memory limit; "
        "worker peaks are each worker's resident set size, polled every second.", "",
        "| rows | measured | workers x limit | fit s (CPU s: workers, client) | "
        "fit rows per worker-minute | sample s (CPU s: workers, client; records, files) | "
        "worker peak MB (fit / sample) | client peak MB | load average (start, max) | command |",
        "|---:|---|---|---:|---:|---:|---|---:|---|---|",
    ]
    for key in sorted(results["runs"], key=int):
        d = results["runs"][key]
        lines.append(
            f"| {d['rows']:,} | {d['date']} | {d['workers']} x {d['memory_limit']} | "
            f"{d['fit_s']} ({d['fit_workers_cpu_s']}, {d['fit_client_cpu_s']}) | "
            f"{d['fit_rows_per_worker_minute']:,} | {d['sample_s']} "
            f"({d['sample_workers_cpu_s']}, {d['sample_client_cpu_s']}; "
            f"{d['sample_rows_written']:,}, {d['sample_files']}) | "
            f"{'+'.join(map(str, d['fit_worker_peak_mb']))} / "
            f"{'+'.join(map(str, d['sample_worker_peak_mb']))} | {d['client_peak_mb']} | "
            f"{d['load_average_start']}, {max(d['fit_load_average_max'], d['sample_load_average_max'])} | "
            f"`{d['command']}` |")
        m = d.get("in_memory")
        if m and "fit_s" in m:
            lines.append(f"| {m['rows']:,} | {d['date']} | in memory, one process | "
                         f"{m['fit_s']} | | {m['sample_s']} | {m['peak_mb']} | | | |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    """Write the table, run each size, save ``results/dask.json`` and ``results/dask.md``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000_000])
    parser.add_argument("--partition-rows", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="4GB")
    parser.add_argument("--sample-rows", type=int, default=None)
    parser.add_argument("--in-memory-rows", type=int, default=0,
                        help="rows of an in-memory comparison (default 0: skip it)")
    parser.add_argument("--data-dir", default=None,
                        help="where the Parquet input is written (and reused if present)")
    parser.add_argument("--sample-dir", default=None,
                        help="where the synthetic partitions are written (then deleted)")
    parser.add_argument("--binner-rows", type=int, nargs="+", default=None,
                        help="measure the client's fit of value-reading binners on one "
                             "float column of these sizes instead")
    parser.add_argument("--in-memory-point", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--binner-point", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--files", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.in_memory_point:
        print(json.dumps(run_in_memory(args.files, args.in_memory_point)))
        return
    if args.binner_point is not None:
        print(json.dumps(binner_fit_point(args.files, args.workers, args.memory_limit,
                                          bool(args.binner_point))))
        return
    if args.binner_rows:
        run_binner(args)
        return
    import benchmarks.run_large as large

    large.PARTITION_ROWS = args.partition_rows
    directory, results = _workspace(args, "dask", "dpsynth-dask-")
    try:
        for rows in args.rows:
            start = time.perf_counter()
            files = large.write_parquet(directory, rows)
            print(f"{len(files)} Parquet files ready in {time.perf_counter() - start:.0f} s",
                  flush=True)
            run = run_dask(files, args, rows)
            run["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            run["cpu_count"] = os.cpu_count()
            run["command"] = (f"python -m benchmarks.run_dask --rows {rows} --partition-rows "
                              f"{args.partition_rows} --workers {args.workers} "
                              f"--memory-limit {args.memory_limit}")
            if args.in_memory_rows:
                needed = files[: -(-args.in_memory_rows // args.partition_rows)]
                run["in_memory"] = run_child(["benchmarks.run_dask", "--in-memory-point",
                                              str(args.in_memory_rows), "--files", *needed])
            print(json.dumps(run), flush=True)
            results["runs"][str(rows)] = run
            save("dask", results, _markdown(results))
    finally:
        if args.data_dir is None:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
