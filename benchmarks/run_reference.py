"""Run the reference synthesizers on the benchmark datasets and save raw results.

Each run happens in a child process (:func:`~benchmarks.reference_runners.measure_in_subprocess`)
so that its peak memory is its own; the metrics are computed afterwards in this
process. Runs already in the output file are kept, not repeated, unless
``--rerun`` is given. Usage, from the repository root in the benchmark
environment::

    python -m benchmarks.run_reference [--output benchmarks/results/reference.json] [--rerun]
"""

import argparse
import json
import os
import platform
import sys
from importlib import metadata
from pathlib import Path

from .datasets import DATASETS
from .reference_runners import (
    aggregate_errors,
    exact_aggregates,
    marginal_tvd,
    measure_in_subprocess,
)

REPORTING_LENGTH = 3
RUNS = [
    ("run_pacsynth", dataset, {"epsilon": epsilon, "reporting_length": REPORTING_LENGTH})
    for dataset in DATASETS
    for epsilon in (1.0, 4.0, 10.0)
] + [
    ("run_mst", dataset, {"epsilon": epsilon})
    for dataset in DATASETS
    for epsilon in (1.0, 4.0, 10.0)
] + [
    ("run_mst", "nist_ma", {"epsilon": 4.0, "sampling": "round"})
]
"""(runner, dataset, keyword arguments) of every benchmark run; the last one
shows the effect of mbi 1.1.0's rounding bug (see ``run_mst``)."""

_PACKAGES = ["pac-synth", "smartnoise-synth", "mbi", "opendp", "jax", "pandas", "numpy"]


def describe_dataset(df):
    """Shape, missing share and exact combination counts of a prepared table.

    Parameters
    ----------
    df : pandas.DataFrame
        Prepared (all-categorical) table.

    Returns
    -------
    summary : dict
        JSON-ready description.
    exact : dict
        Exact aggregates up to :data:`REPORTING_LENGTH`.
    """
    exact = exact_aggregates(df, REPORTING_LENGTH)
    summary = {
        "rows": len(df),
        "columns": len(df.columns),
        "missing_cell_share": float(df.isna().to_numpy().mean()),
        "n_exact_combinations": {
            str(length): sum(len(key) == length for key in exact)
            for length in range(1, REPORTING_LENGTH + 1)
        },
    }
    return summary, exact


def run_one(func_name, dataset_name, kwargs, real, exact):
    """Run one benchmark in a child process and score its output.

    Parameters
    ----------
    func_name, dataset_name : str
        Runner and dataset names.
    kwargs : dict
        Runner arguments.
    real : pandas.DataFrame
        The prepared real table.
    exact : dict
        Exact aggregates of ``real``.

    Returns
    -------
    dict
        JSON-ready record of timings, memory and metrics.
    """
    result = measure_in_subprocess(func_name, dataset_name, **kwargs)
    synthetic = result["synthetic"]
    record = {
        "runner": func_name,
        "dataset": dataset_name,
        "params": kwargs,
        "delta": result["delta"],
        "fit_seconds": result["fit_seconds"],
        "sample_seconds": result["sample_seconds"],
        "peak_rss_mb": result["peak_rss_mb"],
        "baseline_rss_mb": result["baseline_rss_mb"],
        "synthetic_rows": len(synthetic),
        "synthetic_nan_cell_share": float(synthetic.isna().to_numpy().mean()),
        "mean_tvd": {
            str(k): marginal_tvd(real, synthetic, k) for k in range(1, REPORTING_LENGTH + 1)
        },
    }
    if "aggregates" in result:
        record["empty_cell_share"] = result["empty_cell_share"]
        record["dp_number_of_records"] = result["dp_number_of_records"]
        record["aggregates"] = aggregate_errors(result["aggregates"], exact, REPORTING_LENGTH)
    return record


def environment():
    """Versions of Python and of the benchmarked libraries, and the machine."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "packages": {name: metadata.version(name) for name in _PACKAGES},
    }


def main(argv=None):
    """Run every entry of :data:`RUNS` and write the results as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--output", type=Path, default=Path(__file__).parent / "results" / "reference.json"
    )
    parser.add_argument("--rerun", action="store_true",
                        help="repeat the runs already in the output file")
    args = parser.parse_args(argv)

    earlier = {}
    if args.output.exists() and not args.rerun:
        earlier = {(r["runner"], r["dataset"], json.dumps(r["params"], sort_keys=True)): r
                   for r in json.loads(args.output.read_text())["runs"]}
    datasets, records = {}, []
    for dataset_name, loader in DATASETS.items():
        real = loader()
        summary, exact = describe_dataset(real)
        datasets[dataset_name] = summary
        for func_name, run_dataset, kwargs in RUNS:
            if run_dataset != dataset_name:
                continue
            key = (func_name, dataset_name, json.dumps(kwargs, sort_keys=True))
            if key in earlier:
                records.append(earlier[key])
                continue
            print(f"{func_name} on {dataset_name} with {kwargs}", flush=True)
            records.append(run_one(func_name, dataset_name, kwargs, real, exact))

    args.output.parent.mkdir(parents=True, exist_ok=True)
    output = {"environment": environment(), "datasets": datasets, "runs": records}
    args.output.write_text(json.dumps(output, indent=2) + "\n")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
