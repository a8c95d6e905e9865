"""Sampling throughput: ``sample(n)`` from one release, in records per second, by phase.

Usage::

    python -m benchmarks.run_sampling [--rows 1000000] [--sizes 1000000 10000000]
        [--data-dir DIR] [--aggregates PATH] [--label TEXT]

Fits ``DPMarginalSynthesizer(epsilon=4, random_state=0)`` (the default
release) on ``--rows`` bootstrap records of the raw 24-column MA table
(:func:`benchmarks.run_large.write_parquet`'s files, kept in ``--data-dir``
if given), or loads the release saved at ``--aggregates`` (and saves it
there after a fit, so that runs of two commits can sample from the same
release).  Then, in a fresh interpreter per size, samples ``n`` records
(``random_state=1``) and records the wall and CPU time of ``sample``, the
CPU time of its decoding (codes to the output dtypes) and of the rest (the
sampler: model, expansion), the peak resident memory, the load average,
and a digest of the table (equal digests: identical tables, values and
dtypes).  Results go to ``results/sampling.json`` and ``.md``.
"""

import argparse
import hashlib
import json
import os
from pathlib import Path
import resource
import sys
import tempfile
import time

import pandas as pd

from dpsynth import DPAggregates, DPMarginalSynthesizer

from ._results import run_child, save
from .run_large import write_parquet


def digest(frame):
    """16 hex digits of the table's values and dtypes."""
    hashed = pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes()
    dtypes = ",".join(str(t) for t in frame.dtypes).encode()
    return hashlib.sha256(hashed + dtypes).hexdigest()[:16]


def measure(aggregates, n):
    """Sample ``n`` records from the saved release (in this process)."""
    synth = DPMarginalSynthesizer.from_aggregates(DPAggregates.load(aggregates),
                                                  random_state=1)
    decode, spent = synth._decode, {"decode": 0.0}

    def timed(*args, **kwargs):
        cpu = time.process_time()
        try:
            return decode(*args, **kwargs)
        finally:
            spent["decode"] += time.process_time() - cpu

    synth._decode = timed
    load = os.getloadavg()[0]
    start, cpu = time.perf_counter(), time.process_time()
    frame = synth.sample(n)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"n": n, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "sampler_cpu_s": round(cpu - spent["decode"], 1),
            "decode_cpu_s": round(spent["decode"], 1),
            "records_per_s": round(n / max(wall, 1e-9)),
            "records_per_cpu_s": round(n / max(cpu, 1e-9)),
            "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "load_average_before": round(load, 1),
            "load_average_after": round(os.getloadavg()[0], 1),
            "rows": len(frame), "digest": digest(frame)}


def fit(files, path):
    """Fit the default release on the Parquet files and save it to ``path``."""
    table = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    start, cpu = time.perf_counter(), time.process_time()
    synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(table)
    synth.aggregates_.save(path)
    return {"rows": len(table), "fit_s": round(time.perf_counter() - start, 1),
            "fit_cpu_s": round(time.process_time() - cpu, 1),
            "marginals": len(synth.aggregates_.marginals)}


def _markdown(results):
    lines = [f"Measured {results['date']} on {results['cpu_count']} cores: "
             f"`{results['command']}` ({results['label']}; release fitted on "
             f"{results['fit'].get('rows', '?'):,} rows).", "",
             "| n | wall s | CPU s | sampler CPU s | decode CPU s | records/s (wall) "
             "| records per CPU s | peak MB | load before, after | digest |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in results["runs"]:
        if "error" in r:
            lines.append(f"| {r.get('n', '?')} | failed: {r['error'][-200:]} |")
            continue
        lines.append(f"| {r['n']:,} | {r['wall_s']} | {r['cpu_s']} | {r['sampler_cpu_s']} | "
                     f"{r['decode_cpu_s']} | {r['records_per_s']:,} | "
                     f"{r['records_per_cpu_s']:,} | {r['peak_mb']:,} | "
                     f"{r['load_average_before']}, {r['load_average_after']} | "
                     f"`{r['digest']}` |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--aggregates", default=None,
                        help="release file: loaded if it exists, else written after the fit")
    parser.add_argument("--label", default="", help="free text kept with the results")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--fit-child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.child[0], int(args.child[1]))))
        return
    if args.fit_child:
        print(json.dumps(fit(args.fit_child[1:], args.fit_child[0])))
        return
    work = Path(tempfile.mkdtemp(prefix="dpsynth-sampling-"))
    aggregates = Path(args.aggregates or work / "release.json")
    fitted = {}
    if not aggregates.exists():
        directory = Path(args.data_dir or work)
        directory.mkdir(parents=True, exist_ok=True)
        files = write_parquet(directory, args.rows)
        fitted = run_child(["benchmarks.run_sampling", "--fit-child", str(aggregates), *files])
        if "error" in fitted:
            raise SystemExit(f"the fit failed: {fitted['error']}")
    results = {"command": "python -m benchmarks.run_sampling " + " ".join(sys.argv[1:]),
               "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "cpu_count": os.cpu_count(), "label": args.label or "this commit",
               "fit": fitted or {"rows": args.rows, "loaded": str(aggregates)}, "runs": []}
    for n in args.sizes:  # one fresh interpreter per size: its own peak memory
        run = run_child(["benchmarks.run_sampling", "--child", str(aggregates), str(n)])
        run.setdefault("n", n)
        results["runs"].append(run)
    save("sampling", results, _markdown(results))


if __name__ == "__main__":
    main()
