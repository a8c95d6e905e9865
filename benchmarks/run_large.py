"""Scale test: dpsynth on 1,000,000 rows x 24 columns (the NIST MA excerpt, tiled).

The 21 prepared columns of :func:`benchmarks.datasets.load_nist_ma` plus the
three it drops, made categorical with public codes or bins: ``INDP`` (industry
codes), ``PWGTP`` and ``WGTP`` (sampling weights, binned at fixed edges).
Prints fit time, sample time and CSV writing time (optional) and peak memory.
Usage::

    python -m benchmarks.run_large [--rows 1000000] [--sample] [--n-jobs N] [--output PATH]

With ``--sample`` the synthetic table is written as CSV to ``--output``
(default: a temporary file, deleted afterwards).

``--parquet`` runs the large-table check instead (default 10,000,000 rows)::

    python -m benchmarks.run_large --parquet [--rows 10000000] [--data-dir DIR]

The table: the raw 24 columns of the MA excerpt, 21 of them categorical
(text codes, ``N`` as missing) and three numeric (``AGEP`` and ``PWGTP``
integers, ``PINCP`` float with missing values), nothing declared, drawn with
replacement (one seeded bootstrap draw of 1,000,000 records per Parquet file).
The files are written by a child interpreter (kept in ``--data-dir`` if
given, and reused there); another child reads them with pandas, fits
``DPMarginalSynthesizer(epsilon=4)`` (the default release), samples
``n_records_`` records and writes them to Parquet and CSV, recording wall
time, CPU time and peak resident memory after every step.  Results go to
``results/large.json`` and ``results/large.md``.
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

from dpsynth import DPMarginalSynthesizer

from ._results import run_child, save
from .datasets import load_nist_ma, shared_dir

NUMERIC = ("AGEP", "PWGTP", "PINCP")
"""The numeric columns of the ``--parquet`` table (the other 21 are text codes)."""

PARTITION_ROWS = 1_000_000

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


def raw_table():
    """The raw 24-column MA excerpt: 21 text columns and the three ``NUMERIC`` ones."""
    raw = pd.read_csv(shared_dir() / "data" / "nist-diverse-communities-ma" / "ma2019.csv",
                      dtype=str, na_values="N", keep_default_na=False)
    for column in NUMERIC:
        raw[column] = pd.to_numeric(raw[column])
    return raw


def write_parquet(directory, rows):
    """Write ``rows`` bootstrap records of :func:`raw_table` as Parquet files of
    ``PARTITION_ROWS`` (file ``i`` drawn with seed ``i``); returns their paths."""
    base = raw_table()
    files = []
    for i, start in enumerate(range(0, rows, PARTITION_ROWS)):
        path = Path(directory) / f"part.{i:03d}.parquet"
        files.append(str(path))
        if path.exists():
            continue
        picks = np.random.default_rng(i).integers(0, len(base), min(PARTITION_ROWS,
                                                                     rows - start))
        base.iloc[picks].reset_index(drop=True).to_parquet(path, index=False)
    return files


def _step(result, name, start, cpu, progress=None):
    result[f"{name}_s"] = round(time.perf_counter() - start, 1)
    result[f"{name}_cpu_s"] = round(time.process_time() - cpu, 1)
    result[f"{name}_peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    result[f"{name}_load_average"] = round(os.getloadavg()[0], 1)
    if progress:  # the steps so far, for a run that is stopped
        Path(progress).write_text(json.dumps(result))


def check_parquet(files, progress=None):
    """Read, fit, sample, write (in this process); returns the measurements."""
    result = {}
    start, cpu = time.perf_counter(), time.process_time()
    table = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    _step(result, "read", start, cpu, progress)
    result["rows"], result["columns"] = table.shape
    synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0)
    start, cpu = time.perf_counter(), time.process_time()
    synth.fit(table)
    _step(result, "fit", start, cpu, progress)
    del table
    start, cpu = time.perf_counter(), time.process_time()
    synthetic = synth.sample()
    _step(result, "sample", start, cpu, progress)
    result["sample_rows"] = len(synthetic)
    result["sample_records_per_s"] = round(len(synthetic) / max(result["sample_s"], 1e-9))
    directory = Path(tempfile.mkdtemp(prefix="dpsynth-large-"))
    try:
        start, cpu = time.perf_counter(), time.process_time()
        synthetic.to_parquet(directory / "synthetic.parquet", index=False)
        _step(result, "parquet_write", start, cpu, progress)
        start, cpu = time.perf_counter(), time.process_time()
        synthetic.to_csv(directory / "synthetic.csv", index=False)
        _step(result, "csv_write", start, cpu, progress)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    result["load_average"] = round(os.getloadavg()[0], 1)
    return result


def _markdown(results):
    r = results["check"]
    if "error" in r:
        return f"`{results['command']}` failed: {r['error']}\n"
    return "\n".join([
        f"Measured {results['date']} on {results['cpu_count']} cores (load average "
        f"{results['load_average_before']} before, {r['load_average']} after): "
        f"`{results['command']}`.", "",
        "| rows x columns | read s | fit s (cpu) | sample s (cpu) | records/s "
        "| Parquet write s | CSV write s | peak MB after fit | peak MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {r['rows']:,} x {r['columns']} | {r['read_s']} | {r['fit_s']} ({r['fit_cpu_s']}) | "
        f"{r['sample_s']} ({r['sample_cpu_s']}) | {r['sample_records_per_s']:,} | "
        f"{r['parquet_write_s']} | {r['csv_write_s']} | {r['fit_peak_mb']:,} | "
        f"{r['csv_write_peak_mb']:,} |"]) + "\n"


def main_parquet(args):
    """The ``--parquet`` check: write the files, measure in a child, save the results."""
    rows = args.rows if args.rows_given else 10_000_000
    directory = Path(args.data_dir or tempfile.mkdtemp(prefix="dpsynth-large-data-"))
    directory.mkdir(parents=True, exist_ok=True)
    try:
        write_parquet(directory, rows)
        files = sorted(str(p) for p in directory.glob("part.*.parquet"))
        files = files[:-(-rows // PARTITION_ROWS)]
        results = {"command": "python -m benchmarks.run_large " + " ".join(sys.argv[1:]),
                   "date": time.strftime("%Y-%m-%d"), "cpu_count": os.cpu_count(),
                   "load_average_before": round(os.getloadavg()[0], 1)}
        results["check"] = run_child(["benchmarks.run_large", "--progress",
                                      str(directory / "progress.json"), "--check-files", *files])
    finally:
        if args.data_dir is None:
            shutil.rmtree(directory, ignore_errors=True)
    save("large", results, _markdown(results))


def main(argv=None):
    """Fit (and optionally sample) and report time and peak memory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--sample", action="store_true", help="also sample n_records_ rows")
    parser.add_argument("--n-jobs", type=int, default=None,
                        help="sampling threads (-1: all processors; default 1)")
    parser.add_argument("--output", default=None,
                        help="CSV file for the synthetic table (default: a temporary file)")
    parser.add_argument("--parquet", action="store_true",
                        help="the large-table check from Parquet (see the module docstring)")
    parser.add_argument("--data-dir", default=None,
                        help="with --parquet: where the Parquet files are kept (and reused)")
    parser.add_argument("--check-files", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--progress", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.rows_given = any(a.startswith("--rows") for a in (argv or sys.argv[1:]))
    if args.check_files:
        print(json.dumps(check_parquet(args.check_files, args.progress)))
        return
    if args.parquet:
        main_parquet(args)
        return
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
