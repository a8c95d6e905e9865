"""A raw table through the default path, nothing declared (issue #36).

UCI Adult (training split) with its six numeric columns un-binned (``int64``)
and its categorical columns as strings (``"?"`` kept as a value), split 80/20
into train and test.  ``DPMarginalSynthesizer(epsilon=4)`` with nothing
declared is fitted on the train split (Python API: the numeric dtypes are the
declaration), and the command line ``dpsynth synthesize train.csv -o out.csv``
with no flags (every field read as text; a DP count decides which columns
hold numbers).  For each synthetic table:

- the row count against the train split's;
- per numeric column, the Kolmogorov-Smirnov statistic against the train
  split, the share of its most frequent real value (0 for the capital
  columns, 40 for hours-per-week; a point mass) in both, and the missing
  share;
- per categorical column, the 1-way total variation distance;
- a gradient-boosting classifier (scikit-learn's
  ``HistGradientBoostingClassifier``) of ``income`` trained on the synthetic
  table and on the real train split, both scored (ROC AUC) on the real test split.

Usage, from the repository root::

    nice -n 10 .venv/bin/python -m benchmarks.run_raw [--epsilon 4] [--seeds 0 1 2]

Writes ``results/raw.json`` and ``results/raw.md``.
"""

import argparse
import contextlib
import io
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ._results import save

TARGET = "income"


def _split(frame, seed=0):
    rng = np.random.default_rng(seed)
    test = rng.random(len(frame)) < 0.2
    return (frame[~test].reset_index(drop=True), frame[test].reset_index(drop=True))


def _ks(a, b):
    from scipy.stats import ks_2samp

    a, b = pd.to_numeric(a, errors="coerce").dropna(), pd.to_numeric(b, errors="coerce").dropna()
    return float(ks_2samp(a, b).statistic) if len(a) and len(b) else 1.0


def _tvd(a, b):
    p = a.astype(str).value_counts(normalize=True, dropna=False)
    q = b.astype(str).value_counts(normalize=True, dropna=False)
    return float(0.5 * p.subtract(q, fill_value=0).abs().sum())


def _auc(train, test, numeric):
    from .run_messy import _auc as auc

    return auc(train, test, TARGET, ">50K", numeric)


def _measure(real, fake, test, numeric):
    out = {"rows": len(fake), "rows_real": len(real),
           "row_error": abs(len(fake) - len(real)) / len(real), "numeric": {},
           "categorical": {}}
    for c in numeric:
        top = real[c].value_counts().idxmax()
        values = pd.to_numeric(fake[c], errors="coerce")
        out["numeric"][c] = {
            "ks": _ks(real[c], fake[c]), "point": float(top),
            "point_share_real": float((real[c] == top).mean()),
            "point_share_synthetic": float((values == top).mean()),
            "missing_real": float(real[c].isna().mean()),
            "missing_synthetic": float(values.isna().mean())}
    for c in real.columns:
        if c not in numeric:
            out["categorical"][c] = _tvd(real[c], fake[c])
    out["auc_synthetic"] = _auc(fake, test, numeric)
    return out


def _python_api(train, epsilon, seed):
    from dpsynth import DPMarginalSynthesizer

    synth = DPMarginalSynthesizer(epsilon=epsilon, random_state=seed).fit(train)
    spent = synth.privacy_spent_
    return synth.sample(random_state=seed), {
        "epsilon": spent["epsilon"], "delta": spent["delta"], "rho": spent["rho"],
        "rho_numeric": spent.get("rho_numeric", 0.0),
        "n_numeric_mechanisms": sum(m.name.startswith("numeric") for m in spent.mechanisms)}


def _command_line(train, epsilon, seed):
    from dpsynth import DPAggregates
    from dpsynth.cli import main

    with tempfile.TemporaryDirectory() as folder:
        data, out = Path(folder) / "train.csv", Path(folder) / "out.csv"
        aggregates = Path(folder) / "agg.json"
        train.to_csv(data, index=False)
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(["synthesize", str(data), "-o", str(out), "--epsilon", str(epsilon),
                         "--seed", str(seed), "--aggregates-out", str(aggregates)])
        if code != 0:
            raise RuntimeError(f"dpsynth synthesize exited with {code}")
        privacy = DPAggregates.load(aggregates).privacy
        numeric = sorted({m.name.split("'")[1] for m in privacy.mechanisms
                          if m.name.endswith(": bins and shape")})
        return pd.read_csv(out, keep_default_na=False, na_values=[""]), {
            "epsilon": privacy["epsilon"], "delta": privacy["delta"],
            "found_numeric": numeric}


def main(argv=None):
    from .datasets import ADULT_NUMERIC_BOUNDS, load_adult_numeric

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epsilon", type=float, default=4.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args(argv)
    train, test = _split(load_adult_numeric())
    numeric = list(ADULT_NUMERIC_BOUNDS)
    results = {"epsilon": args.epsilon, "rows_train": len(train), "rows_test": len(test),
               "auc_real": _auc(train, test, numeric), "runs": []}
    for seed in args.seeds:
        for route, fit in (("python", _python_api), ("cli", _command_line)):
            start = time.perf_counter()
            fake, privacy = fit(train, args.epsilon, seed)
            seconds = time.perf_counter() - start
            measured = _measure(train, fake, test, numeric)
            measured.update(route=route, seed=seed, seconds=seconds, privacy=privacy,
                            auc_ratio=measured["auc_synthetic"] / results["auc_real"])
            results["runs"].append(measured)
            print(f"{route} seed {seed}: {seconds:.0f}s rows {measured['rows']} "
                  f"AUC {measured['auc_synthetic']:.3f}", flush=True)
    save("raw", results, _table(results, numeric))
    return results


def _table(results, numeric):
    lines = [f"Adult, raw numeric columns, nothing declared, epsilon "
             f"{results['epsilon']:g} (train {results['rows_train']} rows, test "
             f"{results['rows_test']}); mean over seeds "
             f"{sorted({r['seed'] for r in results['runs']})}.", "",
             "| | Python API | CLI, no flags |", "|---|---|---|"]

    def mean(route, get):
        return float(np.mean([get(r) for r in results["runs"] if r["route"] == route]))

    def row(label, get, fmt="{:.3f}"):
        lines.append(f"| {label} | {fmt.format(mean('python', get))} | "
                     f"{fmt.format(mean('cli', get))} |")

    row("row count error", lambda r: r["row_error"])
    for c in numeric:
        row(f"KS {c}", lambda r, c=c: r["numeric"][c]["ks"])
    for c in numeric:
        entry = next(r for r in results["runs"])["numeric"][c]
        row(f"share of {c} = {entry['point']:g} (real {entry['point_share_real']:.3f})",
            lambda r, c=c: r["numeric"][c]["point_share_synthetic"])
    categorical = list(next(r for r in results["runs"])["categorical"])
    row("max 1-way TVD, categorical", lambda r: max(r["categorical"].values()))
    row("mean 1-way TVD, categorical", lambda r: np.mean(list(r["categorical"].values())))
    row(f"AUC trained on synthetic (real: {results['auc_real']:.3f})",
        lambda r: r["auc_synthetic"])
    row("AUC ratio synthetic / real", lambda r: r["auc_ratio"])
    row("seconds", lambda r: r["seconds"], "{:.0f}")
    lines += ["", f"Categorical columns: {', '.join(categorical)}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
