"""Run the reference synthesizers on the benchmark datasets and save raw results.

Each run happens in a child process (:func:`~benchmarks.reference_runners.measure_in_subprocess`)
so that its peak memory is its own; the metrics are computed afterwards in this
process with :mod:`dpsynth.metrics`: mean TVD of all 1-, 2- and 3-way marginals
and, on NIST MA, the NIST k-marginal score. Runs already in the output file are
kept, not repeated, unless ``--rerun`` is given or they lack a metric this
version records. The file is rewritten after every run, so that a long session
that is stopped keeps what it finished; it also holds a ``summary`` (mean and
standard deviation over seeds) and ``results/reference.md`` the same as a table.
Usage, from the repository root in the benchmark environment::

    python -m benchmarks.run_reference [--output benchmarks/results/reference.json]
        [--rerun] [--runners run_aim run_mst] [--datasets nist_ma] [--dry-run]
    python -m benchmarks.run_reference --merge /tmp/reference_2.json  # parallel runs
"""

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import numpy as np

from dpsynth.metrics import k_marginal_score, marginal_tvd

from .datasets import DATASETS
from .reference_runners import aggregate_errors, exact_aggregates, measure_in_subprocess

REPORTING_LENGTH = 3
EPSILONS = (1.0, 4.0, 10.0)
SEEDS = (0, 1, 2)
AIM_ROUNDS = 42
"""AIM's ``rounds`` on both datasets: smartnoise's default ``16 * n_columns``
(336 on NIST MA) did not finish within 20 minutes on NIST MA."""


def _aim(dataset, seeds, epsilons=EPSILONS, **params):
    return [("run_aim", dataset, {"epsilon": epsilon, "rounds": AIM_ROUNDS, **params,
                                  "seed": seed})
            for seed in seeds for epsilon in epsilons]


def _mst(dataset, seeds):
    return [("run_mst", dataset, {"epsilon": epsilon, "seed": seed})
            for seed in seeds for epsilon in EPSILONS]


RUNS = (
    _aim("nist_ma", SEEDS[:1]) + _mst("nist_ma", SEEDS) + _aim("nist_ma", SEEDS[1:])
    + _aim("adult", SEEDS[:1]) + _mst("adult", SEEDS) + _aim("adult", SEEDS[1:])
    + [("run_pacsynth", dataset, {"epsilon": epsilon, "reporting_length": REPORTING_LENGTH})
       for dataset in DATASETS for epsilon in EPSILONS]
    + [run for dataset in ("nist_ma", "adult")
       for run in _aim(dataset, SEEDS, epsilons=EPSILONS[:1], sampling="randomized_round")]
    + [run for dataset in ("nist_ma", "adult")
       for run in _aim(dataset, SEEDS[:1], epsilons=EPSILONS[1:], sampling="randomized_round")]
    + _mst("pums", SEEDS) + _aim("pums", SEEDS)
    + _aim("adult_pgm", SEEDS, epsilons=EPSILONS[:1]) + _mst("adult_pgm", SEEDS)
    + _aim("adult_pgm", SEEDS, epsilons=EPSILONS[1:])
    + _aim("nist_ma2018", SEEDS) + _mst("nist_ma2018", SEEDS)
)
"""(runner, dataset, keyword arguments) of every benchmark run, in the order they
are run. pac-synth 0.0.8 cannot be seeded, so it runs once per epsilon. Every MST
and AIM model is also sampled with :data:`ALSO_SAMPLE`. Every AIM model is also
sampled by randomized rounding with random assignment within groups (Private-PGM's
way, which removes most of i.i.d. sampling's noise; see :data:`ALSO_SAMPLE`); at
epsilon 1, whose i.i.d. runs came before that, and at seed 0 at epsilon 4 and 10,
whose models were fitted before it was added to :data:`ALSO_SAMPLE`, it is also
fitted on its own with ``sampling="randomized_round"`` (AIM's noise comes from
OpenDP and cannot be seeded, so an old fit cannot be repeated)."""

_SEEDED = {"run_mst", "run_aim"}
ALSO_SAMPLE = ("mbi_sample", "round", "randomized_round")
"""Record generators also run on every MST and AIM model fitted with the default
``sampling="sample"`` (:func:`~benchmarks.reference_runners.sample_model`), scored
under ``alternative_samplers``: mbi 1.1.0's ``synthetic_data(method="sample")``,
smartnoise's default, ``method="round"``, and randomized rounding with random
assignment within groups (``"randomized_round"``, which :func:`summarize` also
counts as a run with that ``sampling``)."""
_PACKAGES = ["pac-synth", "smartnoise-synth", "mbi", "opendp", "jax", "pandas", "numpy"]


def _key(func_name, dataset_name, params):
    """Identity of a run; a seeded runner's seed defaults to 0 (its default)."""
    if func_name in _SEEDED:
        params = {"seed": 0, **params}
    return func_name, dataset_name, json.dumps(params, sort_keys=True)


def _complete(record):
    """Whether an earlier record has every metric this version records."""
    return "mean_tvd" in record and (record["dataset"] != "nist_ma" or "k_marginal" in record)


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
    exact : callable
        Returns the exact aggregates of ``real`` (only called for runners
        that release aggregates).

    Returns
    -------
    dict
        JSON-ready record of timings, memory and metrics.
    """
    extra = {}
    if func_name in _SEEDED and kwargs.get("sampling", "sample") == "sample":
        extra["also_sample"] = ALSO_SAMPLE
    result = measure_in_subprocess(func_name, dataset_name, **kwargs, **extra)
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
            str(k): marginal_tvd(real, synthetic, k=k) for k in range(1, REPORTING_LENGTH + 1)
        },
    }
    if "PUMA" in real.columns:
        record["k_marginal"] = k_marginal_score(real, synthetic)
    for name in ("fit_cpu_seconds", "sample_cpu_seconds"):
        if name in result:
            record[name] = result[name]
    if func_name in _SEEDED:
        record["sampler"] = kwargs.get("sampling", "sample")
        record["model_cliques"] = result["model_cliques"]
        record["alternative_samplers"] = {
            method: _fidelity(real, table) for method, table in result["alternatives"].items()
        }
    if "aggregates" in result:
        record["empty_cell_share"] = result["empty_cell_share"]
        record["dp_number_of_records"] = result["dp_number_of_records"]
        record["aggregates"] = aggregate_errors(result["aggregates"], exact(), REPORTING_LENGTH)
    return record


def _fidelity(real, synthetic):
    """Mean TVD of 1-, 2-, 3-way marginals and, on NIST MA, the k-marginal score."""
    fidelity = {"mean_tvd": {str(k): marginal_tvd(real, synthetic, k=k)
                             for k in range(1, REPORTING_LENGTH + 1)}}
    if "PUMA" in real.columns:
        fidelity["k_marginal"] = k_marginal_score(real, synthetic)
    return fidelity


def _rounded_alternatives(records):
    """Records of the models also sampled by randomized rounding, as if run so.

    A run fitted with ``sampling="sample"`` whose ``alternative_samplers`` hold
    ``"randomized_round"`` is the same fitted model sampled the other way; it
    counts as a ``sampling="randomized_round"`` run of its seed unless that
    run was made on its own.
    """
    own = {_key(r["runner"], r["dataset"], r["params"]) for r in records}
    extra = []
    for r in records:
        alternative = r.get("alternative_samplers", {}).get("randomized_round")
        if alternative is None:
            continue
        params = {**r["params"], "sampling": "randomized_round"}
        if _key(r["runner"], r["dataset"], params) in own:
            continue
        extra.append({"runner": r["runner"], "dataset": r["dataset"], "params": params,
                      **{k: r[k] for k in ("fit_seconds", "fit_cpu_seconds", "peak_rss_mb")
                         if k in r},
                      **alternative})
    return extra


def summarize(records):
    """Mean and standard deviation over seeds of every configuration.

    Parameters
    ----------
    records : list of dict
        Run records.

    Returns
    -------
    list of dict
        One entry per (runner, dataset, parameters other than the seed), in
        first-seen order: ``seeds``, and ``mean``/``std`` (``ddof=1``, None
        for one seed) of ``tvd_1``, ``tvd_2``, ``tvd_3``, ``k_marginal``
        (NIST MA), ``fit_seconds``, ``sample_seconds``, ``fit_cpu_seconds`` and
        ``sample_cpu_seconds`` (where every run has them) and ``peak_rss_mb``.
    """
    groups = {}
    records = list(records) + _rounded_alternatives(records)
    for r in records:
        params = {k: v for k, v in r["params"].items() if k != "seed"}
        key = (r["runner"], r["dataset"], json.dumps(params, sort_keys=True))
        groups.setdefault(key, {"runner": r["runner"], "dataset": r["dataset"],
                                "params": params, "runs": []})["runs"].append(r)
    summary = []
    for group in groups.values():
        runs = group.pop("runs")
        values = {f"tvd_{k}": [r["mean_tvd"][k] for r in runs] for k in "123"}
        values.update({name: [r[name] for r in runs]
                       for name in ("k_marginal", "fit_seconds", "sample_seconds",
                                    "fit_cpu_seconds", "sample_cpu_seconds", "peak_rss_mb")
                       if all(name in r for r in runs)})
        group["seeds"] = [r["params"].get("seed", 0 if r["runner"] in _SEEDED else None)
                          for r in runs]
        group["mean"] = {name: float(np.mean(v)) for name, v in values.items()}
        group["std"] = {name: float(np.std(v, ddof=1)) if len(v) > 1 else None
                        for name, v in values.items()}
        summary.append(group)
    return summary


_LABELS = {"run_mst": "MST", "run_aim": "AIM", "run_pacsynth": "pac-synth"}


def markdown(summary):
    """The summary as a Markdown table (mean over seeds, +- standard deviation)."""

    def cell(entry, name, digits):
        mean = entry["mean"].get(name)
        if mean is None:
            return "-"
        std = entry["std"].get(name)
        return f"{mean:.{digits}f}" + (f" ± {std:.{digits}f}" if std is not None else "")

    lines = ["| data | eps | method | seeds | TVD 1-way | TVD 2-way | TVD 3-way | "
             "k-marginal | fit s | sample s | fit CPU s | peak MB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for entry in sorted(summary, key=lambda e: (e["dataset"], e["params"]["epsilon"],
                                                _LABELS[e["runner"]])):
        params = entry["params"]
        label = _LABELS[entry["runner"]]
        extras = [f"{k}={v}" for k, v in params.items() if k not in ("epsilon",
                                                                     "reporting_length")]
        if extras:
            label += f" ({', '.join(extras)})"
        seeds = ",".join("-" if s is None else str(s) for s in entry["seeds"])
        lines.append(
            f"| {entry['dataset']} | {params['epsilon']:g} | {label} | {seeds} | "
            + " | ".join(cell(entry, f"tvd_{k}", 3) for k in "123") + " | "
            + f"{cell(entry, 'k_marginal', 0)} | {cell(entry, 'fit_seconds', 0)} | "
            + f"{cell(entry, 'sample_seconds', 1)} | {cell(entry, 'fit_cpu_seconds', 0)} | "
            + f"{cell(entry, 'peak_rss_mb', 0)} |")
    return "\n".join(lines) + "\n"


def environment():
    """Versions of Python and of the benchmarked libraries, and the machine."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "packages": {name: metadata.version(name) for name in _PACKAGES},
    }


def _write(path, datasets, done, earlier, environment_=None):
    """Write every finished or kept record, in :data:`RUNS` order, and the summary
    (with ``environment_``, or this environment's :func:`environment`)."""
    order = {_key(*run): i for i, run in enumerate(RUNS)}
    records = {**earlier, **done}
    runs = sorted(records.values(),
                  key=lambda r: order.get(_key(r["runner"], r["dataset"], r["params"]),
                                          math.inf))
    summary = summarize(runs)
    output = {"environment": environment_ or environment(), "datasets": datasets, "runs": runs,
              "summary": summary}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(output, indent=2) + "\n")
    tmp.replace(path)
    path.with_suffix(".md").write_text(markdown(summary))


def _keyed(runs):
    """``{run key: record}``, a seeded runner's seed made explicit."""
    out = {}
    for r in runs:
        if r["runner"] in _SEEDED:
            r["params"] = {**r["params"], "seed": r["params"].get("seed", 0)}
        out.setdefault(_key(r["runner"], r["dataset"], r["params"]), r)
    return out


def merge(path, others):
    """Add to the results file ``path`` the runs of ``others`` that it lacks.

    Its environment and dataset descriptions are kept, and the descriptions
    of datasets it lacks are added; a run in both keeps ``path``'s record.
    """
    saved = json.loads(path.read_text())
    records = _keyed(saved["runs"])
    datasets = dict(saved.get("datasets", {}))
    before = len(records)
    for other in others:
        loaded = json.loads(other.read_text())
        for name, description in loaded.get("datasets", {}).items():
            datasets.setdefault(name, description)
        for key, record in _keyed(loaded["runs"]).items():
            records.setdefault(key, record)
    _write(path, datasets, {}, records, saved.get("environment"))
    print(f"{path}: {before} -> {len(records)} runs", flush=True)


def main(argv=None):
    """Run every pending entry of :data:`RUNS`, saving the results after each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--output", type=Path, default=Path(__file__).parent / "results" / "reference.json"
    )
    parser.add_argument("--rerun", action="store_true",
                        help="repeat the runs already in the output file")
    parser.add_argument("--runners", nargs="+", help="only these runners (e.g. run_aim)")
    parser.add_argument("--datasets", nargs="+", choices=list(DATASETS),
                        help="only these datasets")
    parser.add_argument("--epsilons", nargs="+", type=float, help="only these epsilons")
    parser.add_argument("--seeds", nargs="+", type=int, help="only these seeds (seeded runners)")
    parser.add_argument("--dry-run", action="store_true",
                        help="list the runs that would be made and exit")
    parser.add_argument("--merge", nargs="+", type=Path, metavar="FILE",
                        help="add the runs of other result files (e.g. parallel runs with "
                             "their own --output) that the output lacks, and exit")
    args = parser.parse_args(argv)
    if args.merge:
        merge(args.output, args.merge)
        return

    earlier, datasets = {}, {}
    if args.output.exists():
        saved = json.loads(args.output.read_text())
        datasets = saved.get("datasets", {})
        if not args.rerun:
            earlier = _keyed(saved["runs"])
    pending = [run for run in RUNS
               if (not args.runners or run[0] in args.runners)
               and (not args.datasets or run[1] in args.datasets)
               and (not args.epsilons or run[2]["epsilon"] in args.epsilons)
               and (not args.seeds or run[2].get("seed") in args.seeds)
               and not (_key(*run) in earlier and _complete(earlier[_key(*run)]))]
    print(f"{len(pending)} runs to make", flush=True)
    if args.dry_run:
        for run in pending:
            print(*run)
        return

    loaded, done = {}, {}
    for func_name, dataset_name, kwargs in pending:
        if dataset_name not in loaded:
            real = DATASETS[dataset_name]()
            cache = {}

            def exact(real=real, cache=cache, name=dataset_name):
                if "exact" not in cache:
                    datasets[name], cache["exact"] = describe_dataset(real)
                return cache["exact"]

            loaded[dataset_name] = real, exact
            if dataset_name not in datasets:
                exact()
        real, exact = loaded[dataset_name]
        print(f"{time.strftime('%H:%M:%S')} {func_name} on {dataset_name} with {kwargs}",
              flush=True)
        try:
            record = run_one(func_name, dataset_name, kwargs, real, exact)
        except subprocess.CalledProcessError as error:
            print(f"  failed: {error}", flush=True)
            continue
        done[_key(func_name, dataset_name, kwargs)] = record
        print(f"  fit {record['fit_seconds']:.0f} s, sample {record['sample_seconds']:.1f} s, "
              f"peak {record['peak_rss_mb']:.0f} MB, TVD "
              + " / ".join(f"{record['mean_tvd'][k]:.4f}" for k in "123")
              + (f", k-marginal {record['k_marginal']:.0f}" if "k_marginal" in record else ""),
              flush=True)
        _write(args.output, datasets, done, earlier)
    if not pending and earlier:
        _write(args.output, datasets, done, earlier)
    print(f"wrote {args.output}", flush=True)


if __name__ == "__main__":
    main()
