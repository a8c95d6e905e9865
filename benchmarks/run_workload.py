"""Issue #15: dpsynth's two release strategies against MST and AIM, over seeds.

For NIST MA, Adult, PUMS, Private-PGM's Adult and NIST's MA 2018 control set
(all-categorical, public binning, ``benchmarks.datasets``; MA 2018 is held out:
no setting was tuned on it) at epsilon 1, 4 and 10 and several seeds, it fits and samples
:class:`dpsynth.DPMarginalSynthesizer` (R = 3) in three configurations, each
run in a fresh child process so that its peak memory is its own:

- ``default``: ``release="auto"`` as shipped (the workload release), with every
  column's values discovered under DP (nothing declared);
- ``declared``: the same, with every column's observed values declared as
  public categories and the columns without missing values declared so
  (``TableEncoder(categories=..., no_missing=...)``), which is what
  smartnoise-synth's MST and AIM get (the data's own category sets);
- ``sds``: ``release="sds"`` (the SDS release of every combination, kept for
  parity with pac-synth), nothing declared.

``delta`` is the one the reference runners give MST and AIM on the same table,
``1 / (n ln n)`` (:func:`reference_delta`), so that every method has the same
guarantee.  Metrics: mean total variation distance of all 1-, 2- and 3-way
marginals (:func:`dpsynth.metrics.marginal_tvd`, missing values as a category),
the NIST k-marginal score on NIST MA, fit and sample seconds (wall clock and
process CPU), the child's peak resident memory and, on a random subset of a table
with a prediction task (``adult@1000``, ``adult_pgm@2000`` ...), the
train-on-synthetic / test-on-real AUC on the rows outside the subset
(:func:`benchmarks.utility.tstr_auc`, as :mod:`benchmarks.run_reference` scores
the peers).

The table (``results/workload.md``) puts beside them MST and AIM from
``results/reference.json`` (:mod:`benchmarks.run_reference`, run in the
benchmark environment): both sampled i.i.d. from the fitted model, and AIM also
by randomized rounding.  A second table gives dpsynth's 3-way TVD as a multiple
of AIM's (issue #15's target: at most 0.9).

``--rows 1000 2000`` runs on random subsets of that many rows instead (the
tables ``adult@1000`` ...), to see how the strategies compare on small tables.

Usage, from the repository root (records of configurations not run are kept)::

    python -m benchmarks.run_workload [--seeds 0 1 2] [--datasets nist_ma adult]
        [--epsilons 1 4 10] [--methods default declared sds] [--rows N ...]
        [--table-only]
"""

import argparse
import json
import math
import time

import numpy as np

from dpsynth import DPMarginalSynthesizer
from dpsynth.preprocessing import TableEncoder
from dpsynth.metrics import k_marginal_score, marginal_tvd

from ._results import RESULTS, run_child, save
from .datasets import DATASETS, split
from .reference_runners import _max_rss_mb
from .utility import target_of, tstr_auc

METHODS = ("default", "declared", "sds")
PEERS = {"run_pacsynth": "pac-synth", "run_google_mst": "Google MST",
         "run_google_aim_gdp": "Google AIM-GDP", "run_google_swift": "Google SWIFT"}
"""Peers of ``run_reference`` other than smartnoise's MST and AIM, by runner, with
their labels."""
LABELS = {"default": "dpsynth default", "declared": "dpsynth, categories declared",
          "sds": 'dpsynth release="sds"', "run_mst": "MST", "run_aim": "AIM",
          "run_aim/randomized_round": "AIM, randomized rounding", **PEERS}
REPORTING_LENGTH = 3
STEM = "workload"


def reference_delta(n_rows):
    """``1 / (n ln n)``: the delta :mod:`benchmarks.reference_runners` gives MST and AIM."""
    return 1.0 / (math.log(n_rows) * n_rows)


def synthesizer(real, method, epsilon, seed):
    """The configured, unfitted synthesizer of ``method`` (see the module docstring)."""
    params = {"epsilon": epsilon, "delta": reference_delta(len(real)),
              "reporting_length": REPORTING_LENGTH, "random_state": seed}
    if method == "declared":
        categories = {c: sorted(real[c].dropna().unique().tolist()) for c in real.columns}
        complete = [c for c in real.columns if not real[c].isna().any()]
        params["encoder"] = TableEncoder(categories=categories, no_missing=complete)
    elif method == "sds":
        params["release"] = "sds"
    elif method != "default":
        raise ValueError(f"method must be one of {METHODS}; got {method!r}.")
    return DPMarginalSynthesizer(**params)


def fidelity(real, synthetic):
    """TVD of the 1-, 2-, 3-way marginals and, on NIST MA, the k-marginal score."""
    real = real.astype(object).where(real.notna(), None)
    synthetic = synthetic.astype(object).where(synthetic.notna(), None)
    out = {"tvd": {str(k): marginal_tvd(real, synthetic, k=k)
                   for k in range(1, REPORTING_LENGTH + 1)}}
    if "PUMA" in real.columns:
        out["k_marginal"] = k_marginal_score(real, synthetic)
    return out


def run_one(dataset, method, epsilon, seed):
    """Fit and sample one configuration in this process; return its record."""
    real, test = split(dataset)
    synth = synthesizer(real, method, epsilon, seed)
    baseline = _max_rss_mb()
    start, cpu = time.perf_counter(), time.process_time()
    synth.fit(real)
    fit_seconds, fit_cpu = time.perf_counter() - start, time.process_time() - cpu
    start, cpu = time.perf_counter(), time.process_time()
    synthetic = synth.sample()
    sample_seconds, sample_cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = _max_rss_mb()
    target = target_of(dataset)
    utility = {}
    if test is not None and target is not None:  # after the peak: the classifier's memory
        utility["tstr_auc"] = tstr_auc(synthetic, test, *target)  # is not dpsynth's
    return {"dataset": dataset, "method": method, "epsilon": epsilon, "seed": seed,
            "delta": synth.privacy_spent_["delta"],
            "release": synth.privacy_spent_.get("strategy"),
            "fit_seconds": fit_seconds, "sample_seconds": sample_seconds,
            "fit_cpu_seconds": fit_cpu, "sample_cpu_seconds": sample_cpu,
            "peak_rss_mb": peak, "baseline_rss_mb": baseline, "rows": len(synthetic),
            **fidelity(real, synthetic), **utility}


_METRICS = ("tvd_1", "tvd_2", "tvd_3", "k_marginal", "fit_seconds", "sample_seconds",
            "fit_cpu_seconds", "peak_rss_mb", "tstr_auc")


def _values(record):
    values = {f"tvd_{k}": v for k, v in record["tvd"].items()}
    # a None AUC (a synthetic table with one class only) has no mean
    values.update({name: record[name] for name in _METRICS
                   if record.get(name) is not None})
    return values


def summarize(records):
    """Mean and standard deviation (``ddof=1``) over seeds per dataset, epsilon and method.

    Returns ``{(dataset, epsilon, method): {"seeds", "mean", "std"}}``; a metric
    is summarised only when every seed has it.
    """
    groups = {}
    for r in records:
        groups.setdefault((r["dataset"], float(r["epsilon"]), r["method"]), []).append(r)
    out = {}
    for key, runs in groups.items():
        values = [_values(r) for r in runs]
        names = [m for m in _METRICS if all(m in v for v in values)]
        out[key] = {"seeds": sorted(r["seed"] for r in runs),
                    "mean": {m: float(np.mean([v[m] for v in values])) for m in names},
                    "std": {m: float(np.std([v[m] for v in values], ddof=1))
                            if len(runs) > 1 else None for m in names}}
    return out


def reference_summary(path=RESULTS / "reference.json"):
    """The peers of ``run_reference``'s results, in :func:`summarize`'s form: MST and
    AIM (sampled i.i.d. by the fitted model, ``run_mst`` and ``run_aim``, or by
    randomized rounding, ``run_aim/randomized_round``) and the runners of
    :data:`PEERS`, keyed by runner; an entry's ``mean`` also holds ``tstr_auc``,
    ``model_tvd_3`` and ``epsilon_spent`` where every run has them."""
    if not path.exists():
        return {}
    from .run_reference import summarize as summarize_reference

    out = {}
    for entry in summarize_reference(json.loads(path.read_text())["runs"]):
        sampling = entry["params"].get("sampling", "sample")
        if entry["runner"] in PEERS:
            method = entry["runner"]
        elif entry["runner"] in ("run_mst", "run_aim") and sampling in (
                "sample", "randomized_round"):
            method = entry["runner"] + ("" if sampling == "sample" else f"/{sampling}")
        else:
            continue
        if method not in LABELS:
            continue
        out[(entry["dataset"], float(entry["params"]["epsilon"]), method)] = {
            "seeds": entry["seeds"], "mean": entry["mean"], "std": entry["std"]}
    return out


def _cell(entry, name, digits):
    if entry is None or name not in entry["mean"]:
        return "-"
    text = f"{entry['mean'][name]:.{digits}f}"
    std = entry["std"].get(name)
    return text + (f" ± {std:.{digits}f}" if std is not None else "")


def markdown(ours, reference):
    """The full table and the ratio-to-AIM table."""
    both = {**ours, **reference}
    order = list(METHODS) + ["run_mst", "run_aim", "run_aim/randomized_round"]
    lines = ["| data | ε | method | seeds | TVD 1-way | TVD 2-way | TVD 3-way | k-marginal | "
             "fit s | sample s | fit CPU s | peak MB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for data, eps in sorted({(d, e) for d, e, _ in both}):
        for method in order:
            entry = both.get((data, eps, method))
            if entry is None:
                continue
            lines.append(
                f"| {data} | {eps:g} | {LABELS[method]} | "
                f"{','.join(map(str, entry['seeds']))} | "
                + " | ".join(_cell(entry, f"tvd_{k}", 3) for k in "123") + " | "
                + " | ".join([_cell(entry, "k_marginal", 0), _cell(entry, "fit_seconds", 1),
                              _cell(entry, "sample_seconds", 1),
                              _cell(entry, "fit_cpu_seconds", 1),
                              _cell(entry, "peak_rss_mb", 0)]) + " |")
    lines += ["", "TVD 1 / 2 / 3-way, mean over the seeds (the README's table shows the "
              "3-way):", "",
              "| data | ε | " + " | ".join(LABELS[m] for m in order) + " |",
              "|---|---|" + "---|" * len(order)]
    for data, eps in sorted({(d, e) for d, e, _ in both}):
        cells = []
        for method in order:
            entry = both.get((data, eps, method))
            cells.append("-" if entry is None else " / ".join(
                f"{entry['mean'][f'tvd_{k}']:.3f}" for k in "123")
                + f" ({len(entry['seeds'])})")
        lines.append(f"| {data} | {eps:g} | " + " | ".join(cells) + " |")
    lines += ["", "3-way TVD as a multiple of AIM's (issue #15's target: at most 0.9):", "",
              "| data | ε | method | x AIM i.i.d. | x AIM, randomized rounding |",
              "|---|---|---|---|---|"]
    for data, eps, method in sorted(ours, key=lambda k: (k[0], k[1], METHODS.index(k[2]))):
        ratios = []
        for aim in ("run_aim", "run_aim/randomized_round"):
            entry = reference.get((data, eps, aim))
            if entry is None:
                ratios.append("-")
                continue
            seeds = len(entry["seeds"])
            ratio = ours[(data, eps, method)]["mean"]["tvd_3"] / entry["mean"]["tvd_3"]
            ratios.append(f"{ratio:.2f} ({seeds} seed{'s' if seeds > 1 else ''})")
        lines.append(f"| {data} | {eps:g} | {LABELS[method]} | {' | '.join(ratios)} |")
    return "\n".join(lines) + "\n"


def _key(record):
    return record["dataset"], float(record["epsilon"]), record["method"], record["seed"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", choices=list(DATASETS),
                        default=list(DATASETS))
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 4.0, 10.0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--rows", nargs="+", type=int,
                        help="run on random subsets of this many rows of each dataset "
                             "instead (recorded as name@rows)")
    parser.add_argument("--table-only", action="store_true",
                        help="rewrite the table from the saved records and reference.json")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        dataset, method, epsilon, seed = args.child
        print(json.dumps(run_one(dataset, method, float(epsilon), int(seed))))
        return

    path = RESULTS / f"{STEM}.json"
    records = {}
    if path.exists():
        records = {_key(r): r for r in json.loads(path.read_text())["records"]}
    datasets = args.datasets
    if args.rows:
        datasets = [f"{name}@{rows}" for name in args.datasets for rows in args.rows]
    if not args.table_only:
        for dataset in datasets:
            for epsilon in args.epsilons:
                for seed in args.seeds:
                    for method in args.methods:
                        r = run_child(["benchmarks.run_workload", "--child", dataset, method,
                                       str(epsilon), str(seed)])
                        if "error" in r:
                            raise RuntimeError(f"{dataset} {method} {epsilon} {seed}: "
                                               f"{r['error']}")
                        records[_key(r)] = r
                        print(dataset, epsilon, seed, method,
                              " / ".join(f"{r['tvd'][k]:.4f}" for k in "123"),
                              f"fit {r['fit_seconds']:.1f} s, sample {r['sample_seconds']:.1f} s,"
                              f" {r['peak_rss_mb']:.0f} MB", flush=True)
    ordered = sorted(records.values(), key=lambda r: (r["dataset"], r["epsilon"],
                                                       METHODS.index(r["method"]), r["seed"]))
    save(STEM, {"records": ordered}, markdown(summarize(ordered), reference_summary()))


if __name__ == "__main__":
    main()
