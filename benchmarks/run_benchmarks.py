"""dpsynth against pac-synth (and MST) on the NIST MA excerpt and UCI Adult.

For every dataset and epsilon (R = 3, SDS defaults) it runs, each in a child
process so that peak memory is measured per run:

- ``dpsynth default``: the defaults (``release="auto"``, the workload
  release, and ``synthesis="marginal_matching"``);
- ``dpsynth default, categories declared``: the same with every column's
  observed values declared as public categories, which MST gets from
  smartnoise for free (no set-union threshold at length 1);
- ``dpsynth (..., prioritize_long)``: one fit of the SDS release with SDS's
  budget split (``SDSRelease(accuracy_mode="prioritize_long")``; its
  aggregates are compared with pac-synth's), then ``sample`` with
  ``"aggregate_seeded"`` (SDS's sampler, complete records) and
  ``"marginal_matching"``;
- ``dpsynth (..., absent)``: the SDS parity mode,
  ``TableEncoder(missing="absent")`` with the aggregate-seeded sampler (empty
  cells allowed, like pac-synth);
- ``pac-synth`` (SDS's Rust core) with the same parameters;
- ``independent``: exact 1-way marginals, columns independent (a non-private
  reference point).

MST and AIM results are read from ``results/reference.json`` (``run_reference``),
averaged over the seeds run there, as they take minutes and GBs per run; both
are sampled i.i.d. from the fitted model (``synthetic_data(method="sample")``,
see :mod:`benchmarks.reference_runners`).

Metrics, against the exact counts of the real table (missing values are a
value of their own): for DP aggregates and for synthetic data, by combination
length 1..3, the mean absolute error on combinations present in both,
suppressed % (exact combinations absent, % of exact) and fabricated %
(combinations whose exact count is 0, % of the released or synthetic ones);
the mean total variation distance of all 1-, 2- and 3-way marginals
(:func:`dpsynth.metrics.marginal_tvd`), the NIST k-marginal score
(:func:`dpsynth.metrics.k_marginal_score`), the share of empty cells and, for
the aggregate-seeded sampler, the share of records (and cells) completed by
its fallback rule.  A last table checks issue #5's targets for the default:
synthetic 2-/3-way MAE over the DP aggregates' own, and whether it beats
independent columns (2-/3-way TVD, k-marginal), pac-synth (every metric) and
MST (TVD, where a reference run exists).

Usage, from the repository root, in an environment with dpsynth, pac-synth and
the reference requirements installed (``benchmarks/README.md``)::

    python -m benchmarks.run_benchmarks [--epsilons 1 4 10] [--datasets nist_ma adult]
"""

import argparse
import json
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dpsynth import DPMarginalSynthesizer
from dpsynth.metrics import combination_counts, k_marginal_score, marginal_tvd
from dpsynth.preprocessing import TableEncoder
from dpsynth.release import SDSRelease

from .datasets import DATASETS
from .reference_runners import RUNNERS, _max_rss_mb, aggregate_errors

REPORTING_LENGTH = 3
_REPO = Path(__file__).resolve().parents[1]
_RESULTS = Path(__file__).parent / "results"


def run_dpsynth(df, epsilon=4.0, reporting_length=3, seed=0, missing="category",
                syntheses=("marginal_matching",), accuracy_mode="auto",
                declare_categories=False):
    """Fit dpsynth once and sample with each synthesis method.

    ``declare_categories=True`` declares every column's observed values as its
    public category list, the information MST gets from smartnoise (which
    takes category sets from the data).

    Returns
    -------
    dict
        ``fit_seconds``, ``aggregates`` (``to_dict()``), ``dp_number_of_records``
        and, per synthesis method, ``{"sample_seconds", "synthetic"}`` under
        ``samples``.
    """
    categories = "auto"
    if declare_categories:
        categories = {c: sorted(df[c].dropna().unique().tolist()) for c in df.columns}
    # an accuracy mode is the SDS release's option: "auto" keeps the default release
    release = "auto" if accuracy_mode == "auto" else SDSRelease(accuracy_mode=accuracy_mode)
    synth = DPMarginalSynthesizer(epsilon=epsilon, reporting_length=reporting_length,
                                  release=release,
                                  encoder=TableEncoder(missing=missing, categories=categories),
                                  random_state=seed)
    start = time.perf_counter()
    synth.fit(df)
    fit_seconds = time.perf_counter() - start
    samples = {}
    for synthesis in syntheses:
        synth.set_params(synthesis=synthesis)
        start = time.perf_counter()
        synthetic = synth.sample()
        samples[synthesis] = {"sample_seconds": time.perf_counter() - start,
                              "synthetic": synthetic.astype(object).where(synthetic.notna(), None),
                              "empty_cell_share": synth.sampling_stats_["empty_cell_share"],
                              "stats": dict(synth.sampling_stats_)}
    return {"fit_seconds": fit_seconds, "aggregates": synth.aggregates_.to_dict(),
            "dp_number_of_records": synth.n_records_, "samples": samples,
            "delta": synth.privacy_spent_["delta"]}


ALL_RUNNERS = {**RUNNERS, "run_dpsynth": run_dpsynth}


def measure(func_name, dataset_name, **kwargs):
    """Run a runner in a child interpreter; add its peak RSS (MiB) to the result."""
    with tempfile.TemporaryDirectory() as tmp:
        request, result = Path(tmp) / "request.pkl", Path(tmp) / "result.pkl"
        request.write_bytes(pickle.dumps((func_name, dataset_name, kwargs)))
        subprocess.run([sys.executable, "-m", "benchmarks.run_benchmarks", "--child",
                        str(request), str(result)], cwd=_REPO, check=True)
        return pickle.loads(result.read_bytes())


def _child(request, result):
    func_name, dataset_name, kwargs = pickle.loads(Path(request).read_bytes())
    output = ALL_RUNNERS[func_name](DATASETS[dataset_name](), **kwargs)
    output["peak_rss_mb"] = _max_rss_mb()  # VmHWM: this process's own peak
    Path(result).write_bytes(pickle.dumps(output))


def _as_keys(df):
    """Values as plain strings/None so that tables and aggregates compare."""
    return df.astype(object).where(df.notna(), None)


def synthetic_metrics(real, synthetic, exact, empty_cell_share=0.0):
    """Error and fidelity of one synthetic table (see the module docstring).

    A missing cell counts as the value ``None`` (as in the exact counts),
    also where a synthesizer left it empty; ``empty_cell_share`` reports those.
    """
    synthetic = _as_keys(synthetic)
    counts = combination_counts(synthetic, REPORTING_LENGTH, missing="category")
    metrics = {
        "errors": aggregate_errors(counts, exact, REPORTING_LENGTH),
        "tvd": {str(k): marginal_tvd(real, synthetic, k=k)
                for k in range(1, REPORTING_LENGTH + 1)},
        "empty_cell_share": float(empty_cell_share),
        "rows": len(synthetic),
    }
    if "PUMA" in real.columns:
        metrics["k_marginal"] = k_marginal_score(real, synthetic)
    return metrics


def independent_columns(real, seed=0):
    """Exact 1-way marginals, columns drawn independently (same number of rows)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({c: real[c].to_numpy()[rng.integers(0, len(real), len(real))]
                         for c in real.columns})


DEFAULT_LABEL = "dpsynth default (marginal_matching, prioritize_short)"

# (label, label of its aggregates or None, extra run_dpsynth arguments) of
# every dpsynth configuration
DPSYNTH_CONFIGS = [
    (DEFAULT_LABEL, "dpsynth default (prioritize_short)", {}),
    ("dpsynth default, categories declared (as MST)", None, {"declare_categories": True}),
    ("dpsynth ({synthesis}, prioritize_long)", "dpsynth (prioritize_long, as SDS)",
     {"syntheses": ("aggregate_seeded", "marginal_matching"),
      "accuracy_mode": "prioritize_long"}),
    ("dpsynth ({synthesis}, prioritize_long, absent)", None,
     {"syntheses": ("aggregate_seeded",), "accuracy_mode": "prioritize_long",
      "missing": "absent"}),
]


def _record(common, method, run, fit_seconds, sample, real, exact, aggregates=None,
            aggregates_label=None):
    record = {**common, "method": method, "fit_seconds": fit_seconds,
              "sample_seconds": sample["sample_seconds"], "peak_rss_mb": run["peak_rss_mb"],
              **synthetic_metrics(real, sample["synthetic"], exact, sample["empty_cell_share"])}
    if aggregates is not None:
        record["aggregates"] = aggregate_errors(aggregates, exact, REPORTING_LENGTH)
        record["aggregates_label"] = aggregates_label or method
    if "fallback_record_share" in sample.get("stats", {}):
        record["fallback_record_share"] = sample["stats"]["fallback_record_share"]
        record["fallback_cell_share"] = sample["stats"]["fallback_cell_share"]
    return record


def run(datasets, epsilons, seed=0):
    """Every configuration; returns JSON-ready records."""
    records = []
    for dataset_name in datasets:
        real = _as_keys(DATASETS[dataset_name]())
        exact = combination_counts(real, REPORTING_LENGTH, missing="category")
        records.append({"dataset": dataset_name, "method": "independent", "epsilon": None,
                        **synthetic_metrics(real, independent_columns(real, seed), exact)})
        for epsilon in epsilons:
            print(f"{dataset_name}, epsilon {epsilon}", flush=True)
            common = {"dataset": dataset_name, "epsilon": epsilon}
            for label, aggregates_label, options in DPSYNTH_CONFIGS:
                dp = measure("run_dpsynth", dataset_name, epsilon=epsilon,
                             reporting_length=REPORTING_LENGTH, seed=seed, **options)
                for index, (synthesis, sample) in enumerate(dp["samples"].items()):
                    with_aggregates = index == 0 and aggregates_label is not None
                    records.append(_record(
                        common, label.format(synthesis=synthesis), dp, dp["fit_seconds"],
                        sample, real, exact, dp["aggregates"] if with_aggregates else None,
                        aggregates_label))
            pac = measure("run_pacsynth", dataset_name, epsilon=epsilon,
                          reporting_length=REPORTING_LENGTH, seed=seed)
            records.append(_record(common, "pac-synth", pac, pac["fit_seconds"], pac, real,
                                   exact, pac["aggregates"]))
    return records


def _reference_records():
    """MST and AIM (sampled i.i.d.) from ``results/reference.json``, averaged over seeds.

    Each record carries the means of the seeds run so far (``seeds`` lists
    them) and the standard deviations under ``std``.
    """
    from .run_reference import summarize

    path = _RESULTS / "reference.json"
    if not path.exists():
        return []
    runs = [r for r in json.loads(path.read_text())["runs"]
            if r["runner"] in ("run_mst", "run_aim")
            and r["params"].get("sampling", "sample") == "sample"]
    labels = {"run_mst": "MST", "run_aim": "AIM"}
    records = []
    for entry in summarize(runs):
        mean = entry["mean"]
        record = {"dataset": entry["dataset"], "epsilon": entry["params"]["epsilon"],
                  "method": labels[entry["runner"]], "seeds": entry["seeds"],
                  "fit_seconds": mean["fit_seconds"], "sample_seconds": mean["sample_seconds"],
                  "peak_rss_mb": mean["peak_rss_mb"],
                  "tvd": {k: mean[f"tvd_{k}"] for k in "123"}, "std": entry["std"]}
        if "k_marginal" in mean:
            record["k_marginal"] = mean["k_marginal"]
        records.append(record)
    return records


def _fmt(value, digits=1):
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def markdown(records):
    """The tables of ``results/benchmarks.md`` (quoted in ``LOG.md``)."""
    lines = ["| data | eps | method | fit s | peak MB | DP aggr. MAE 1/2/3 | "
             "DP aggr. suppr. % 1/2/3 | DP aggr. fabr. % 1/2/3 |",
             "|---|---|---|---|---|---|---|---|"]
    for r in records:
        if "aggregates" not in r:
            continue
        a = r["aggregates"]
        lines.append(
            f"| {r['dataset']} | {r['epsilon']:g} | {r.get('aggregates_label', r['method'])} | "
            f"{_fmt(r['fit_seconds'])} | {_fmt(r['peak_rss_mb'], 0)} | "
            + " / ".join(_fmt(a[k]["mae"]) for k in "123") + " | "
            + " / ".join(_fmt(a[k]["suppressed_pct"]) for k in "123") + " | "
            + " / ".join(_fmt(a[k]["fabricated_pct"]) for k in "123") + " |")
    lines += ["", "| data | eps | method | fit+sample s | peak MB | empty cells % | "
              "fallback rec. / cells % | synthetic MAE 1/2/3 | TVD 1/2/3 | k-marginal |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        total = (r["fit_seconds"] + r["sample_seconds"]) if "fit_seconds" in r else None
        errors = r.get("errors")
        lines.append(
            f"| {r['dataset']} | {_fmt(r['epsilon'], 0) if r['epsilon'] else '-'} | "
            f"{r['method']} | {_fmt(total)} | {_fmt(r.get('peak_rss_mb'), 0)} | "
            f"{_fmt(100 * r['empty_cell_share']) if 'empty_cell_share' in r else '-'} | "
            + (f"{_fmt(100 * r['fallback_record_share'])} / "
               f"{_fmt(100 * r['fallback_cell_share'])}" if "fallback_record_share" in r
               else "-") + " | "
            + (" / ".join(_fmt(errors[k]["mae"]) for k in "123") if errors else "-") + " | "
            + " / ".join(_fmt(r["tvd"][k], 3) for k in "123") + " | "
            + (_fmt(r.get("k_marginal"), 0) if r.get("k_marginal") else "-") + " |")
    return "\n".join(lines + [""] + target_lines(records))


def _better(ours, theirs, higher_is_better=False):
    """``yes``/``no`` for strictly better, ``-`` when a number is missing."""
    if ours is None or theirs is None:
        return "-"
    return "yes" if (ours > theirs if higher_is_better else ours < theirs) else "no"


def target_lines(records):
    """Issue #5's targets for the default synthesis, one row per dataset and epsilon."""
    lines = ["| data | eps | synthetic / DP aggr. MAE 2, 3 (target <= 1.5) | "
             "better than independent (TVD 2, 3, k-marginal) | "
             "better than pac-synth (MAE 1/2/3, TVD 1/2/3, k-marginal) | "
             "better than MST (TVD 1/2/3) |",
             "|---|---|---|---|---|---|"]
    find = {(r["dataset"], r["epsilon"], r["method"]): r for r in records}
    for r in records:
        if r["method"] != DEFAULT_LABEL:
            continue
        data, eps = r["dataset"], r["epsilon"]
        ind = find.get((data, None, "independent"), {})
        pac = find.get((data, eps, "pac-synth"), {})
        mst = find.get((data, eps, "MST"), {})
        ratios = " / ".join(_fmt(r["errors"][k]["mae"] / r["aggregates"][k]["mae"], 2)
                            for k in "23")
        vs_ind = [_better(r["tvd"][k], ind.get("tvd", {}).get(k)) for k in "23"]
        vs_ind.append(_better(r.get("k_marginal"), ind.get("k_marginal"), True))
        vs_pac = [_better(r["errors"][k]["mae"], pac["errors"][k]["mae"]) if pac else "-"
                  for k in "123"]
        vs_pac += [_better(r["tvd"][k], pac.get("tvd", {}).get(k)) for k in "123"]
        vs_pac.append(_better(r.get("k_marginal"), pac.get("k_marginal"), True))
        vs_mst = [_better(r["tvd"][k], mst.get("tvd", {}).get(k)) for k in "123"]
        lines.append(f"| {data} | {eps:g} | {ratios} | {' / '.join(vs_ind)} | "
                     f"{' / '.join(vs_pac)} | {' / '.join(vs_mst)} |")
    return lines


def main(argv=None):
    """Run the benchmark, save raw results as JSON and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 4.0, 10.0])
    parser.add_argument("--output", type=Path, default=_RESULTS / "benchmarks.json")
    parser.add_argument("--tables-only", action="store_true",
                        help="print the tables of an earlier run's --output file")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(*args.child)
        return
    if args.tables_only:
        records = json.loads(args.output.read_text())
    else:
        records = run(args.datasets, args.epsilons)
        records += [r for r in _reference_records() if r["dataset"] in args.datasets]
        records.sort(key=lambda r: (r["dataset"], r["epsilon"] or 0, r["method"]))
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(records, indent=1, default=float))
    table = markdown(records)
    (args.output.with_suffix(".md")).write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
