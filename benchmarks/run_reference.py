"""Run the reference synthesizers on the benchmark datasets and save raw results.

Each run happens in a child process (:func:`~benchmarks.reference_runners.measure_in_subprocess`)
so that its peak memory is its own; Google dpsynth's runners (AIM-GDP, SWIFT, MST:
:mod:`benchmarks.google_runners`) run in the interpreter ``$DPSYNTH_GOOGLE_PYTHON``
(the virtualenv of ``benchmarks/setup_peer_env.sh``). The metrics are computed
afterwards in this process with :mod:`dpsynth.metrics`: mean TVD of all 1-, 2- and
3-way marginals, on NIST MA the NIST k-marginal score, and on a table with a
prediction task and a held-out real split (``adult@rows``: the other Adult rows)
the train-on-synthetic / test-on-real AUC (:mod:`benchmarks.utility`). Runs already in the output file are
kept, not repeated, unless ``--rerun`` is given or they lack a metric this
version records. The file is rewritten after every run, so that a long session
that is stopped keeps what it finished; it also holds a ``summary`` (mean and
standard deviation over seeds) and ``results/reference.md`` the same as a table,
with dpsynth's configurations of ``results/workload.json`` (:mod:`benchmarks.run_workload`)
beside the peers.
Usage, from the repository root in the benchmark environment::

    python -m benchmarks.run_reference [--output benchmarks/results/reference.json]
        [--rerun] [--runners run_aim run_mst] [--datasets nist_ma adult@2000]
        [--epsilons 1] [--seeds 0] [--dry-run]
    python -m benchmarks.run_reference --merge /tmp/reference_2.json  # parallel runs
    python -m benchmarks.run_reference --report-only  # summary and .md from the runs

``--datasets`` also takes tables outside :data:`RUNS` (``name@rows``): the selected
runners then run on them with the epsilons and seeds given (default: all).
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

from .datasets import DATASETS, split, table_argument
from .google_runners import GOOGLE_RUNNERS
from .reference_runners import aggregate_errors, exact_aggregates, measure_in_subprocess
from .utility import target_of, tstr_auc

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


GOOGLE_SEEDS = SEEDS
"""Seeds of Google dpsynth's runs (each takes minutes to an hour on these tables:
``--seeds 0 1`` narrows them)."""
GOOGLE_PYTHON = "DPSYNTH_GOOGLE_PYTHON"
"""Environment variable naming the interpreter of Google dpsynth's virtualenv."""


def _google(dataset, seeds=GOOGLE_SEEDS, epsilons=EPSILONS,
            runners=("run_google_aim_gdp", "run_google_swift", "run_google_mst")):
    return [(runner, dataset, {"epsilon": epsilon, "seed": seed})
            for seed in seeds for epsilon in epsilons for runner in runners]


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
    + [run for dataset in ("nist_ma", "adult", "nist_ma2018", "pums", "adult_pgm")
       for run in _google(dataset)]
)
"""(runner, dataset, keyword arguments) of every benchmark run, in the order they
are run. pac-synth 0.0.8 cannot be seeded, so it runs once per epsilon. Every MST
and AIM model is also sampled with :data:`ALSO_SAMPLE`. Every AIM model is also
sampled by randomized rounding with random assignment within groups (Private-PGM's
way, which removes most of i.i.d. sampling's noise; see :data:`ALSO_SAMPLE`); at
epsilon 1, whose i.i.d. runs came before that, and at seed 0 at epsilon 4 and 10,
whose models were fitted before it was added to :data:`ALSO_SAMPLE`, it is also
fitted on its own with ``sampling="randomized_round"`` (AIM's noise comes from
OpenDP and cannot be seeded, so an old fit cannot be repeated). Google dpsynth's
AIM-GDP, SWIFT and MST run last, at seeds :data:`GOOGLE_SEEDS`."""

_SMARTNOISE = {"run_mst", "run_aim"}
_SEEDED = _SMARTNOISE | set(GOOGLE_RUNNERS)
ALSO_SAMPLE = ("mbi_sample", "round", "randomized_round")
"""Record generators also run on every MST and AIM model fitted with the default
``sampling="sample"`` (:func:`~benchmarks.reference_runners.sample_model`), scored
under ``alternative_samplers``: mbi 1.1.0's ``synthetic_data(method="sample")``,
smartnoise's default, ``method="round"``, and randomized rounding with random
assignment within groups (``"randomized_round"``, which :func:`summarize` also
counts as a run with that ``sampling``)."""
_PACKAGES = ["pac-synth", "smartnoise-synth", "mbi", "opendp", "jax", "pandas", "numpy"]
_GOOGLE_PACKAGES = ["dpsynth", "jax", "jaxlib", "mbi", "dp-accounting", "numpy", "pandas"]


def _runs_for(runner, dataset, epsilons, seeds):
    """The runs of ``runner`` on a table outside :data:`RUNS`, configured as in it."""
    if runner == "run_pacsynth":
        return [(runner, dataset, {"epsilon": e, "reporting_length": REPORTING_LENGTH})
                for e in epsilons]
    if runner == "run_aim":
        return _aim(dataset, seeds, epsilons=epsilons)
    if runner in _SEEDED:
        return [(runner, dataset, {"epsilon": e, "seed": seed})
                for seed in seeds for e in epsilons]
    raise ValueError(f"unknown runner {runner!r}")


def _key(func_name, dataset_name, params):
    """Identity of a run; a seeded runner's seed defaults to 0 (its default)."""
    if func_name in _SEEDED:
        params = {"seed": 0, **params}
    return func_name, dataset_name, json.dumps(params, sort_keys=True)


def _complete(record):
    """Whether an earlier record has every metric this version records."""
    dataset = record["dataset"]
    return ("mean_tvd" in record and (dataset != "nist_ma" or "k_marginal" in record)
            and ("@" not in dataset or target_of(dataset) is None or "tstr_auc" in record))


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


def run_one(func_name, dataset_name, kwargs, real, exact, test=None):
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
    test : pandas.DataFrame, optional
        Real rows held out from ``real`` (see :func:`_fidelity`).

    Returns
    -------
    dict
        JSON-ready record of timings, memory and metrics.
    """
    extra = {}
    if func_name in _SMARTNOISE and kwargs.get("sampling", "sample") == "sample":
        extra["also_sample"] = ALSO_SAMPLE
    python = None
    if func_name in GOOGLE_RUNNERS:
        python = os.environ.get(GOOGLE_PYTHON)
        if not python:
            raise RuntimeError(f"{func_name} runs in Google dpsynth's virtualenv: set "
                               f"{GOOGLE_PYTHON} (benchmarks/setup_peer_env.sh)")
    result = measure_in_subprocess(func_name, dataset_name, python=python, **kwargs, **extra)
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
        **_fidelity(real, synthetic, dataset_name, test),
    }
    for name in ("fit_cpu_seconds", "sample_cpu_seconds"):
        if name in result:
            record[name] = result[name]
    if func_name in _SMARTNOISE:
        record["sampler"] = kwargs.get("sampling", "sample")
        record["model_cliques"] = result["model_cliques"]
        record["alternative_samplers"] = {
            method: _fidelity(real, table, dataset_name, test)
            for method, table in result["alternatives"].items()
        }
    if func_name in GOOGLE_RUNNERS:
        for name in ("model_tvd", "epsilon_spent", "zcdp_rho", "calibrate_seconds",
                     "phase_seconds", "n_measurements", "model_cliques", "domain_sizes",
                     "max_map_count", "model_tvd_seconds"):
            if name in result:
                record[name] = result[name]
    if "aggregates" in result:
        record["empty_cell_share"] = result["empty_cell_share"]
        record["dp_number_of_records"] = result["dp_number_of_records"]
        record["aggregates"] = aggregate_errors(result["aggregates"], exact(), REPORTING_LENGTH)
    return record


def _fidelity(real, synthetic, dataset_name=None, test=None):
    """Mean TVD of 1-, 2-, 3-way marginals; on NIST MA the k-marginal score; and, if
    ``test`` (real rows held out from ``real``) is given and the table has a target
    (:func:`benchmarks.utility.target_of`), the train-on-synthetic / test-on-real AUC
    ``tstr_auc``."""
    fidelity = {"mean_tvd": {str(k): marginal_tvd(real, synthetic, k=k)
                             for k in range(1, REPORTING_LENGTH + 1)}}
    if "PUMA" in real.columns:
        fidelity["k_marginal"] = k_marginal_score(real, synthetic)
    target = target_of(dataset_name) if dataset_name else None
    if test is not None and target is not None:
        fidelity["tstr_auc"] = tstr_auc(synthetic, test, *target)
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
        ``sample_cpu_seconds``, ``model_tvd_3`` (the fitted model's own 3-way
        TVD, Google dpsynth), ``tstr_auc``, ``epsilon_spent`` (Google dpsynth's
        own PLD, else RDP, accounting of what its calibration spends) and
        ``epsilon_spent_rdp`` (its RDP accounting), where every run has them, and
        ``peak_rss_mb``.
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
        if all("model_tvd" in r for r in runs):
            values["model_tvd_3"] = [r["model_tvd"]["3"] for r in runs]
        if all(r.get("tstr_auc") is not None for r in runs):
            values["tstr_auc"] = [r["tstr_auc"] for r in runs]
        if all("epsilon_spent" in r for r in runs):
            values["epsilon_spent"] = [r["epsilon_spent"]["pld"] or r["epsilon_spent"]["rdp"]
                                       for r in runs]
            if all(r["epsilon_spent"].get("rdp") is not None for r in runs):
                values["epsilon_spent_rdp"] = [r["epsilon_spent"]["rdp"] for r in runs]
        group["seeds"] = [r["params"].get("seed", 0 if r["runner"] in _SEEDED else None)
                          for r in runs]
        group["mean"] = {name: float(np.mean(v)) for name, v in values.items()}
        group["std"] = {name: float(np.std(v, ddof=1)) if len(v) > 1 else None
                        for name, v in values.items()}
        summary.append(group)
    return summary


_LABELS = {"run_mst": "MST", "run_aim": "AIM", "run_pacsynth": "pac-synth",
           "run_google_aim_gdp": "Google AIM-GDP", "run_google_swift": "Google SWIFT",
           "run_google_mst": "Google MST"}


def _dpsynth_summary(path):
    """dpsynth's configurations from ``workload.json`` beside the results file ``path``
    (:func:`benchmarks.run_workload.summarize`), in :func:`summarize`'s form and in
    :data:`benchmarks.run_workload.METHODS`' order, or [] if there is none."""
    workload = Path(path).with_name("workload.json")
    if not workload.exists():
        return []
    from .run_workload import LABELS, METHODS, summarize as summarize_workload

    summary = summarize_workload(json.loads(workload.read_text())["records"])
    return [{"runner": LABELS[method], "dataset": data, "params": {"epsilon": eps},
             "seeds": entry["seeds"], "mean": entry["mean"], "std": entry["std"]}
            for (data, eps, method), entry in sorted(
                summary.items(), key=lambda item: METHODS.index(item[0][2]))]


def markdown(summary, dpsynth=(), datasets=None):
    """The summary as a Markdown table (mean over seeds, +- standard deviation).

    Parameters
    ----------
    summary : list of dict
        :func:`summarize` of the peers' runs.
    dpsynth : list of dict, optional
        dpsynth's configurations in the same form (:func:`_dpsynth_summary`), put
        first in each table's and epsilon's rows, so that every figure of the peers
        (3-way TVD, train-on-synthetic / test-on-real AUC, times, peak memory) stands
        beside dpsynth's.
    datasets : dict, optional
        The results' dataset descriptions: the AUC of the classifier trained on the
        real rows (``tstr_auc_real``), where measured, is listed below the table.
    """

    def cell(entry, name, digits):
        mean = entry["mean"].get(name)
        if mean is None:
            return "-"
        std = entry["std"].get(name)
        return f"{mean:.{digits}f}" + (f" ± {std:.{digits}f}" if std is not None else "")

    ours = {id(entry): i for i, entry in enumerate(dpsynth)}  # in run_workload's order
    lines = ["| data | eps | method | seeds | TVD 1-way | TVD 2-way | TVD 3-way | "
             "model TVD 3-way | TSTR AUC | k-marginal | fit s | sample s | fit CPU s | "
             "peak MB | ε spent |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for entry in sorted([*dpsynth, *summary],
                        key=lambda e: (e["dataset"], e["params"]["epsilon"],
                                       id(e) not in ours, ours.get(id(e), 0),
                                       _LABELS.get(e["runner"], e["runner"]))):
        params = entry["params"]
        label = _LABELS.get(entry["runner"], entry["runner"])
        extras = [f"{k}={v}" for k, v in params.items() if k not in ("epsilon",
                                                                     "reporting_length")]
        if extras:
            label += f" ({', '.join(extras)})"
        seeds = ",".join("-" if s is None else str(s) for s in entry["seeds"])
        lines.append(
            f"| {entry['dataset']} | {params['epsilon']:g} | {label} | {seeds} | "
            + " | ".join(cell(entry, f"tvd_{k}", 3) for k in "123") + " | "
            + f"{cell(entry, 'model_tvd_3', 3)} | {cell(entry, 'tstr_auc', 3)} | "
            + f"{cell(entry, 'k_marginal', 0)} | {cell(entry, 'fit_seconds', 0)} | "
            + f"{cell(entry, 'sample_seconds', 1)} | {cell(entry, 'fit_cpu_seconds', 0)} | "
            + f"{cell(entry, 'peak_rss_mb', 0)} | {cell(entry, 'epsilon_spent', 3)} |")
    lines += ["", "TSTR AUC: a classifier trained on the synthetic table, scored on the real "
              "rows held out of a random subset (`name@rows`; `benchmarks/utility.py`). "
              "ε spent: what Google dpsynth's calibrated mechanism spends by its own PLD "
              "accountant."]
    real = {name: d["tstr_auc_real"] for name, d in (datasets or {}).items()
            if d.get("tstr_auc_real") is not None}
    if real:
        lines += ["", "The same classifier trained on the real subset: "
                  + ", ".join(f"{name} {auc:.3f}" for name, auc in sorted(real.items())) + "."]
    return "\n".join(lines) + "\n"


def _versions(names, python=None):
    """``{name: version or None}`` of installed distributions, in this interpreter or
    in ``python``'s (None if it cannot be run)."""
    if python is None:
        out = {}
        for name in names:
            try:
                out[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                out[name] = None
        return out
    code = ("import json, sys\nfrom importlib import metadata\nout = {}\n"
            "for n in sys.argv[1:]:\n    try: out[n] = metadata.version(n)\n"
            "    except metadata.PackageNotFoundError: out[n] = None\nprint(json.dumps(out))")
    try:
        done = subprocess.run([python, "-c", code, *names], capture_output=True, text=True,
                              check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return json.loads(done.stdout)


def environment(earlier=None):
    """Versions of Python and of the benchmarked libraries, and the machine.

    ``packages`` are those of the interpreter that runs pac-synth and smartnoise
    (``$DPSYNTH_BENCH_PYTHON``, else this one); if it has no smartnoise-synth, the
    ``packages`` of ``earlier`` (the environment of the results file, whose runs it
    made) are kept. ``google_packages`` are those of ``$DPSYNTH_GOOGLE_PYTHON``, if
    set, else ``earlier``'s.
    """
    earlier = earlier or {}
    packages = _versions(_PACKAGES, os.environ.get("DPSYNTH_BENCH_PYTHON"))
    if (not packages or packages.get("smartnoise-synth") is None) and earlier.get("packages"):
        packages = earlier["packages"]
    google = os.environ.get(GOOGLE_PYTHON)
    google_packages = (_versions(_GOOGLE_PACKAGES, google) if google else None) \
        or earlier.get("google_packages")
    out = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "packages": packages,
    }
    if google_packages:
        out["google_packages"] = google_packages
    return out


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
    path.with_suffix(".md").write_text(markdown(summary, _dpsynth_summary(path), datasets))


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
    of datasets it lacks (and the Google dpsynth package versions, if it has none)
    are added; a run in both keeps ``path``'s record.
    """
    saved = json.loads(path.read_text())
    records = _keyed(saved["runs"])
    datasets = dict(saved.get("datasets", {}))
    env = dict(saved.get("environment", {}))
    before = len(records)
    for other in others:
        loaded = json.loads(other.read_text())
        for name, description in loaded.get("datasets", {}).items():
            datasets.setdefault(name, description)
        if "google_packages" in loaded.get("environment", {}):
            env.setdefault("google_packages", loaded["environment"]["google_packages"])
        for key, record in _keyed(loaded["runs"]).items():
            records.setdefault(key, record)
    _write(path, datasets, {}, records, env or None)
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
    parser.add_argument("--datasets", nargs="+", type=table_argument, metavar="NAME[@ROWS]",
                        help=f"only these datasets ({', '.join(DATASETS)}); name@rows, a "
                             "random subset, also runs the selected runners (default: "
                             "Google dpsynth's) at the selected epsilons and seeds")
    parser.add_argument("--epsilons", nargs="+", type=float, help="only these epsilons")
    parser.add_argument("--seeds", nargs="+", type=int, help="only these seeds (seeded runners)")
    parser.add_argument("--dry-run", action="store_true",
                        help="list the runs that would be made and exit")
    parser.add_argument("--report-only", action="store_true",
                        help="only rewrite the output's summary and its .md table (with "
                             "dpsynth's rows from workload.json beside it) from its runs, "
                             "and exit")
    parser.add_argument("--merge", nargs="+", type=Path, metavar="FILE",
                        help="add the runs of other result files (e.g. parallel runs with "
                             "their own --output) that the output lacks, and exit")
    args = parser.parse_args(argv)
    if args.merge:
        merge(args.output, args.merge)
        return
    if args.report_only:
        saved = json.loads(args.output.read_text())
        _write(args.output, saved.get("datasets", {}), {}, _keyed(saved["runs"]),
               saved.get("environment"))
        print(f"wrote the summary of {args.output} and {args.output.with_suffix('.md')}",
              flush=True)
        return

    earlier, datasets, saved = {}, {}, {}
    if args.output.exists():
        saved = json.loads(args.output.read_text())
        datasets = saved.get("datasets", {})
        if not args.rerun:
            earlier = _keyed(saved["runs"])
    env = environment(saved.get("environment"))
    planned = {run[1] for run in RUNS}
    extra = [run for dataset in args.datasets or () if dataset not in planned
             for runner in args.runners or GOOGLE_RUNNERS
             for run in _runs_for(runner, dataset, args.epsilons or EPSILONS,
                                  args.seeds or GOOGLE_SEEDS)]
    pending = [run for run in [*RUNS, *extra]
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
            real, test = split(dataset_name)
            cache = {}

            def exact(real=real, cache=cache, name=dataset_name):
                if "exact" not in cache:
                    datasets[name], cache["exact"] = describe_dataset(real)
                return cache["exact"]

            loaded[dataset_name] = real, exact, test
            if dataset_name not in datasets:
                exact()
            target = target_of(dataset_name)
            if test is not None and target is not None:
                datasets[dataset_name]["heldout_rows"] = len(test)
                datasets[dataset_name].setdefault("tstr_auc_real", tstr_auc(real, test, *target))
        real, exact, test = loaded[dataset_name]
        print(f"{time.strftime('%H:%M:%S')} {func_name} on {dataset_name} with {kwargs}",
              flush=True)
        try:
            record = run_one(func_name, dataset_name, kwargs, real, exact, test)
        except (subprocess.CalledProcessError, RuntimeError) as error:
            print(f"  failed: {error}", flush=True)
            continue
        done[_key(func_name, dataset_name, kwargs)] = record
        print(f"  fit {record['fit_seconds']:.0f} s, sample {record['sample_seconds']:.1f} s, "
              f"peak {record['peak_rss_mb']:.0f} MB, TVD "
              + " / ".join(f"{record['mean_tvd'][k]:.4f}" for k in "123")
              + (f", k-marginal {record['k_marginal']:.0f}" if "k_marginal" in record else "")
              + (", model TVD " + " / ".join(f"{record['model_tvd'][k]:.4f}" for k in "123")
                 if "model_tvd" in record else "")
              + (f", TSTR AUC {record['tstr_auc']}" if "tstr_auc" in record else ""),
              flush=True)
        _write(args.output, datasets, done, earlier, env)
    if not pending and earlier:
        _write(args.output, datasets, done, earlier, env)
    print(f"wrote {args.output}", flush=True)


if __name__ == "__main__":
    main()
