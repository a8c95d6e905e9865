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

The peer, given the same raw table: Google's dpsynth (``TabularConfig`` with
MST, or AIM-GDP) on the domains of
:func:`benchmarks.google_runners.google_raw_domains` (string columns' values by
its DP partition selection; numeric columns on their observed ``[min, max]``,
read without DP as its scalable API's population phase does, then its DP
quantile bins), run in its own virtualenv (``$DPSYNTH_GOOGLE_PYTHON``, see
``benchmarks/README.md``) in a child process with a time limit.  Its bins are
decoded back to numbers by the peer itself, twice from the same records: its
default (the bin's midpoint) and uniform in the bin.  Every route gets the same
``epsilon`` and ``delta`` (passed explicitly; the default ``1e-9`` is dpsynth's
``delta=None``).

Usage, from the repository root::

    nice -n 10 .venv/bin/python -m benchmarks.run_raw [--epsilon 4] [--seeds 0 1 2] \
        [--routes python cli google_mst] [--peer-timeout 1800]

Writes ``results/raw.json`` and ``results/raw.md``; runs of earlier invocations
at the same epsilon and delta are kept unless re-run (same route and seed).
"""

import argparse
import contextlib
import io
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ._results import RESULTS, save

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


def _python_api(train, epsilon, delta, seed):
    from dpsynth import DPMarginalSynthesizer

    synth = DPMarginalSynthesizer(epsilon=epsilon, delta=delta, random_state=seed).fit(train)
    spent = synth.privacy_spent_
    return synth.sample(random_state=seed), {
        "epsilon": spent["epsilon"], "delta": spent["delta"], "rho": spent["rho"],
        "rho_numeric": spent.get("rho_numeric", 0.0),
        "n_numeric_mechanisms": sum(m.name.startswith("numeric") for m in spent.mechanisms)}


def _command_line(train, epsilon, delta, seed):
    from dpsynth import DPAggregates
    from dpsynth.cli import main

    with tempfile.TemporaryDirectory() as folder:
        data, out = Path(folder) / "train.csv", Path(folder) / "out.csv"
        aggregates = Path(folder) / "agg.json"
        train.to_csv(data, index=False)
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(["synthesize", str(data), "-o", str(out), "--epsilon", str(epsilon),
                         "--delta", repr(delta), "--seed", str(seed),
                         "--aggregates-out", str(aggregates)])
        if code != 0:
            raise RuntimeError(f"dpsynth synthesize exited with {code}")
        privacy = DPAggregates.load(aggregates).privacy
        numeric = sorted({m.name.split("'")[1] for m in privacy.mechanisms
                          if m.name.endswith(": bins and shape")})
        return pd.read_csv(out, keep_default_na=False, na_values=[""]), {
            "epsilon": privacy["epsilon"], "delta": privacy["delta"],
            "found_numeric": numeric}


PEERS = {"google_mst": "MSTConfig", "google_aim_gdp": "AIMGDPConfig"}
"""Peer routes: Google dpsynth's discrete mechanism for each."""
DECODINGS = {"midpoint": "", "sample": "/uniform"}
"""The peer's decodings of a bin, and the suffix of their route in the results."""


def _peer(route, epsilon, delta, seed, python, timeout):
    """Run the peer ``route`` (:data:`PEERS`) in a child ``python``; return
    ``{decoding: synthetic frame}`` and what the child reports."""
    with tempfile.TemporaryDirectory() as folder:
        try:
            subprocess.run([python, "-m", "benchmarks.run_raw", "--peer-child", PEERS[route],
                            folder, "--epsilon", repr(epsilon), "--delta", repr(delta),
                            "--seeds", str(seed)],
                           cwd=Path(__file__).resolve().parents[1], check=True,
                           timeout=timeout, capture_output=True, text=True)
        except subprocess.TimeoutExpired:
            return None, {"error": f"stopped after the {timeout:g} s limit"}
        except subprocess.CalledProcessError as error:
            return None, {"error": error.stderr.strip()[-500:]}
        info = json.loads((Path(folder) / "info.json").read_text())
        frames = {name: pd.read_csv(Path(folder) / f"{name}.csv", keep_default_na=False,
                                    na_values=[""]) for name in DECODINGS}
        return frames, info


def _peer_child(mechanism, folder, epsilon, delta, seed):
    """Child side of :func:`_peer`, in the peer's interpreter: run
    :func:`benchmarks.google_runners.run_google_raw` on the train split; write each
    decoding to ``<folder>/<decoding>.csv`` and the rest to ``info.json``."""
    from .datasets import ADULT_NUMERIC_BOUNDS, load_adult_numeric
    from .google_runners import run_google_raw

    train, _ = _split(load_adult_numeric())
    output = run_google_raw(train, list(ADULT_NUMERIC_BOUNDS), epsilon=epsilon, delta=delta,
                            seed=seed, mechanism=mechanism)
    for name, frame in output.pop("synthetic").items():
        frame.to_csv(Path(folder) / f"{name}.csv", index=False)
    (Path(folder) / "info.json").write_text(json.dumps(output))


def _previous_runs(epsilon, delta, replaced):
    """The runs of ``results/raw.json`` at ``epsilon`` and ``delta`` whose (route,
    seed) is not in ``replaced``."""
    path = RESULTS / "raw.json"
    if not path.is_file():
        return []
    old = json.loads(path.read_text())
    if old.get("epsilon") != epsilon or old.get("delta") != delta:
        return []
    return [r for r in old["runs"] if (r["route"].split("/")[0], r["seed"]) not in replaced]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epsilon", type=float, default=4.0)
    parser.add_argument("--delta", type=float, default=1e-9,
                        help="given to every route (default: 1e-9, dpsynth's delta=None)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--routes", nargs="+", default=["python", "cli"],
                        choices=["python", "cli", *PEERS])
    parser.add_argument("--peer-python", default=os.environ.get("DPSYNTH_GOOGLE_PYTHON"),
                        help="the peer's interpreter (default: $DPSYNTH_GOOGLE_PYTHON)")
    parser.add_argument("--peer-timeout", type=float, default=1800.0,
                        help="seconds a peer run may take (default: 1800)")
    parser.add_argument("--peer-child", nargs=2, metavar=("MECHANISM", "FOLDER"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.peer_child:
        return _peer_child(*args.peer_child, args.epsilon, args.delta, args.seeds[0])
    if any(r in PEERS for r in args.routes) and not args.peer_python:
        parser.error("a peer route needs --peer-python or $DPSYNTH_GOOGLE_PYTHON "
                     "(benchmarks/README.md)")

    from .datasets import ADULT_NUMERIC_BOUNDS, load_adult_numeric

    train, test = _split(load_adult_numeric())
    numeric = list(ADULT_NUMERIC_BOUNDS)
    results = {"epsilon": args.epsilon, "delta": args.delta, "rows_train": len(train),
               "rows_test": len(test), "auc_real": _auc(train, test, numeric),
               "runs": _previous_runs(args.epsilon, args.delta,
                                      {(r, s) for r in args.routes for s in args.seeds})}

    def record(route, seed, fake, seconds, privacy, load):
        measured = _measure(train, fake, test, numeric)
        measured.update(route=route, seed=seed, seconds=seconds, privacy=privacy,
                        load_average=load, auc_ratio=measured["auc_synthetic"]
                        / results["auc_real"])
        results["runs"].append(measured)
        print(f"{route} seed {seed}: {seconds:.0f}s rows {measured['rows']} "
              f"AUC {measured['auc_synthetic']:.3f}", flush=True)

    for seed in args.seeds:
        for route in args.routes:
            load = os.getloadavg()[0]
            if route in PEERS:
                frames, info = _peer(route, args.epsilon, args.delta, seed, args.peer_python,
                                     args.peer_timeout)
                if frames is None:
                    results["runs"].append({"route": route, "seed": seed, **info})
                    print(f"{route} seed {seed}: {info['error']}", flush=True)
                    continue
                seconds = info.pop("seconds")
                for name, suffix in DECODINGS.items():
                    record(route + suffix, seed, frames[name], seconds, info, load)
                continue
            fit = {"python": _python_api, "cli": _command_line}[route]
            start = time.perf_counter()
            fake, privacy = fit(train, args.epsilon, args.delta, seed)
            record(route, seed, fake, time.perf_counter() - start, privacy, load)
    order = {r: i for i, r in enumerate(ROUTES)}
    results["runs"].sort(key=lambda r: (order.get(r["route"], len(order)), r["seed"]))
    save("raw", results, _table(results, numeric))
    return results


ROUTES = {"python": "dpsynth, Python API", "cli": "dpsynth CLI, no flags",
          "google_mst": "Google MST (its midpoint decoding)",
          "google_mst/uniform": "Google MST, uniform in bin",
          "google_aim_gdp": "Google AIM-GDP (its midpoint decoding)",
          "google_aim_gdp/uniform": "Google AIM-GDP, uniform in bin"}
"""Each route's column heading, in the table's order."""


def _table(results, numeric):
    runs = [r for r in results["runs"] if "error" not in r]
    routes = [r for r in ROUTES if any(run["route"] == r for run in runs)]
    lines = [f"Adult, raw numeric columns, nothing declared, epsilon "
             f"{results['epsilon']:g}, delta {results['delta']:g} (train "
             f"{results['rows_train']} rows, test {results['rows_test']}); mean over the "
             f"seeds in brackets.", "",
             "| | " + " | ".join(f"{ROUTES[r]} ({sum(x['route'] == r for x in runs)})"
                                 for r in routes) + " |",
             "|---|" + "---|" * len(routes)]

    def row(label, get, fmt="{:.3f}"):
        lines.append(f"| {label} | " + " | ".join(
            fmt.format(np.mean([get(x) for x in runs if x["route"] == r])) for r in routes)
            + " |")

    row("row count error", lambda r: r["row_error"])
    for c in numeric:
        row(f"KS {c}", lambda r, c=c: r["numeric"][c]["ks"])
    for c in numeric:
        entry = runs[0]["numeric"][c]
        row(f"share of {c} = {entry['point']:g} (real {entry['point_share_real']:.3f})",
            lambda r, c=c: r["numeric"][c]["point_share_synthetic"])
    categorical = list(runs[0]["categorical"])
    row("max 1-way TVD, categorical", lambda r: max(r["categorical"].values()))
    row("mean 1-way TVD, categorical", lambda r: np.mean(list(r["categorical"].values())))
    row(f"AUC trained on synthetic (real: {results['auc_real']:.3f})",
        lambda r: r["auc_synthetic"])
    row("AUC ratio synthetic / real", lambda r: r["auc_ratio"])
    row("seconds", lambda r: r["seconds"], "{:.0f}")
    lines += ["", f"Categorical columns: {', '.join(categorical)}."]
    failed = [r for r in results["runs"] if "error" in r]
    lines += [f"{r['route']} seed {r['seed']}: {r['error']}" for r in failed]
    if any(r.startswith("google") for r in routes):
        lines += ["", PEER_NOTE, ""]
        for route in [r for r in routes if r.startswith("google") and "/" not in r]:
            seed, privacy = next((x["seed"], x["privacy"]) for x in runs
                                 if x["route"] == route)
            bounds = ", ".join(f"{c} [{lo:.10g}, {hi:.10g}]" for c, (lo, hi) in
                               privacy["bounds"].items())
            rho = ", ".join(f"{part} {value:.4f}" for part, value in privacy["rho"].items())
            spent = " / ".join("-" if v is None else f"{v:.3f}"
                               for v in privacy["epsilon_spent"].values())
            lines.append(f"{ROUTES[route]}: ranges read from the data without DP: {bounds}; "
                         f"zCDP rho {privacy['zcdp_rho']:.4f} ({rho}); epsilon spent by "
                         f"dp_accounting's PLD / RDP accountants {spent}; quantile bins "
                         f"released {privacy['n_bins']}; values released (with `<OOD>`) "
                         f"{privacy['n_values']} (seed {seed}).")
    return "\n".join(lines) + "\n"


PEER_NOTE = (
    "Google's dpsynth (`benchmarks/google_runners.py`, `run_google_raw`) gets the same "
    "train split with the six numeric columns marked numeric (dpsynth's Python API reads "
    "the same from the dtypes). Its in-memory API needs every numeric range declared; "
    "where nothing is declared its scalable API takes each numeric column's exact "
    "minimum and maximum from the data, **without DP**, and so does this run. Everything "
    "else is DP: `calibrate(epsilon, delta)` gives 10% of its zCDP rho, split evenly, to "
    "the record count and one initializer per column (32 quantile bins by the exponential "
    "mechanism for a numeric column; Gaussian counts kept above a threshold, with 10% of "
    "delta, for a string column's values, the others becoming `<OOD>`), the rest to the "
    "mechanism (MST: half selecting the tree of pairs, half measuring it; AIM-GDP: its "
    "adaptive rounds). Its numbers are decoded from "
    "the bins by the peer: the midpoint (its default) or uniform in the bin, integers "
    "rounded up.")
"""What the peer got, spent and read without DP (under the table)."""


if __name__ == "__main__":
    main()
