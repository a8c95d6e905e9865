"""Numeric fidelity on Adult (issue #17): values on their original scale.

For every numeric column of UCI Adult, the Wasserstein-1 distance between the
real and the synthetic values divided by the column's public range (0:
identical), and the share of records equal to each declared special value
(capital-gain = 0, capital-loss = 0, hours-per-week = 40), for:

- ``dpsynth`` with public bounds and 10 equal-width bins, decoded uniformly in
  each bin (what dpsynth did before issue #17);
- ``dpsynth + special values``: the same, with ``special_values`` declared;
- ``dpsynth + special + DP frequent values``: also frequent exact values found
  by a DP stability-based histogram (``frequent_epsilon`` 0.2 of the total);
- ``dpsynth + special + DP within-bin``: also a DP sub-bin histogram per bin
  (``inverse_epsilon`` 0.2 of the total);
- ``MST`` (smartnoise-synth, the reference): read from
  ``results/reference.json`` (a ``numeric_w1`` entry of an Adult MST run) or
  from an earlier ``results/numeric.json``; ``--mst`` computes it in the
  reference environment (``$DPSYNTH_BENCH_PYTHON``), training MST on the
  binned Adult of :func:`benchmarks.datasets.load_adult` (whose hand-made
  edges give 0 and 40 bins of their own) and decoding each bin uniformly.

Every configuration spends the same total epsilon (the DP extras come out of
the synthesizer's budget).  Usage, from the repository root::

    nice -n 10 .venv/bin/python -m benchmarks.run_numeric [--epsilon 4] [--mst]

Writes ``results/numeric.json`` and ``results/numeric.md``.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

_RESULTS = Path(__file__).parent / "results"
_REPO = Path(__file__).resolve().parents[1]
EXTRA_EPSILON = 0.2


def _configurations(epsilon):
    from .datasets import ADULT_SPECIAL_VALUES

    special = {"special_values": ADULT_SPECIAL_VALUES}
    return {
        "dpsynth": ({}, epsilon),
        "dpsynth + special values": (special, epsilon),
        "dpsynth + special + DP frequent values": (
            {**special, "frequent_values": "dp", "frequent_epsilon": EXTRA_EPSILON},
            epsilon - EXTRA_EPSILON),
        "dpsynth + special + DP within-bin": (
            {**special, "inverse": "dp_histogram", "inverse_epsilon": EXTRA_EPSILON},
            epsilon - EXTRA_EPSILON),
    }


def _measure(real, fake, columns, bounds, special):
    from dpsynth.metrics import value_shares, wasserstein_numeric

    w1 = wasserstein_numeric(real, fake, columns=columns, ranges=bounds)
    shares = value_shares(real, fake, special)
    return {"w1_range": {c: float(v) for c, v in w1.items()},
            "special_shares": [{"column": r.column, "value": float(r.value),
                                "real": float(r.real), "synthetic": float(r.synthetic)}
                               for r in shares.itertuples(index=False)]}


def run_dpsynth(epsilon, seed):
    """Every dpsynth configuration on Adult; W1 / range and special shares."""
    from dpsynth import DPMarginalSynthesizer
    from dpsynth.preprocessing import TableEncoder

    from .datasets import ADULT_NUMERIC_BOUNDS, ADULT_SPECIAL_VALUES, load_adult_numeric

    real = load_adult_numeric()
    columns = list(ADULT_NUMERIC_BOUNDS)
    binned = {c: b for c, b in ADULT_NUMERIC_BOUNDS.items() if c != "education-num"}
    results = {}
    for name, (params, synth_epsilon) in _configurations(epsilon).items():
        start = time.perf_counter()
        encoder = TableEncoder(bounds=binned, **params)
        synth = DPMarginalSynthesizer(epsilon=synth_epsilon, encoder=encoder,
                                      random_state=seed).fit(real)
        fake = synth.sample()
        entry = _measure(real, fake, columns, ADULT_NUMERIC_BOUNDS, ADULT_SPECIAL_VALUES)
        entry["epsilon"] = float(synth.privacy_spent_["epsilon"])
        entry["delta"] = float(synth.privacy_spent_["delta"])
        entry["seconds"] = time.perf_counter() - start
        frequent = {c.name: list(c.binning.frequent) for c in synth.aggregates_.schema
                    if c.binning is not None and c.binning.frequent}
        if frequent:
            entry["frequent_values"] = frequent
        results[name] = entry
        print(f"{name}: " + ", ".join(f"{c} {v:.4f}" for c, v in entry["w1_range"].items()),
              flush=True)
    return results


def _decode_label(label, rng):
    """A value of an Adult bin label ``"lo-hi"`` (inclusive integers) or ``"v"``."""
    text = str(label)
    if "-" in text[1:]:
        low, high = (int(v) for v in text.split("-"))
        return int(rng.integers(low, high + 1))
    return int(text)


def run_mst_child(epsilon, seed):
    """MST on the binned Adult, bins decoded uniformly (run in the reference env)."""
    from .datasets import ADULT_NUMERIC_BOUNDS, ADULT_SPECIAL_VALUES, load_adult, \
        load_adult_numeric
    from .reference_runners import run_mst

    out = run_mst(load_adult(), epsilon=epsilon, seed=seed)
    rng = np.random.default_rng(seed)
    fake = out["synthetic"].copy()
    for column in ADULT_NUMERIC_BOUNDS:
        fake[column] = [_decode_label(v, rng) for v in fake[column]]
        fake[column] = fake[column].astype(np.int64)
    entry = _measure(load_adult_numeric(), fake, list(ADULT_NUMERIC_BOUNDS),
                     ADULT_NUMERIC_BOUNDS, ADULT_SPECIAL_VALUES)
    entry.update(epsilon=float(epsilon), delta=float(out["delta"]),
                 seconds=out["fit_seconds"] + out["sample_seconds"],
                 note="trained on load_adult()'s public bins (0 and 40 are bins of their "
                      "own there), each bin decoded uniformly")
    return entry


def _mst_from_files(epsilon):
    """MST's numbers from reference.json (``numeric_w1``) or an earlier numeric.json."""
    reference = _RESULTS / "reference.json"
    if reference.is_file():
        for run in json.loads(reference.read_text()).get("runs", []):
            if (run.get("runner") == "run_mst" and run.get("dataset") == "adult"
                    and run.get("params", {}).get("epsilon") == epsilon
                    and "numeric_w1" in run):
                return {"w1_range": run["numeric_w1"], "source": "reference.json"}
    previous = _RESULTS / "numeric.json"
    if previous.is_file():
        document = json.loads(previous.read_text())
        if document.get("epsilon") == epsilon and "MST" in document.get("results", {}):
            return document["results"]["MST"]
    return None


def run_mst(epsilon, seed):
    python = os.environ.get("DPSYNTH_BENCH_PYTHON", sys.executable)
    command = [python, "-m", "benchmarks.run_numeric", "--child-mst", str(epsilon), str(seed)]
    done = subprocess.run(command, cwd=_REPO, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(f"MST failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def markdown(document):
    """The table of ``results/numeric.md``: W1 / range per numeric column, then the special shares."""
    results = document["results"]
    columns = list(next(iter(results.values()))["w1_range"])
    lines = [f"Adult, epsilon = {document['epsilon']:g} (same total for every row), "
             "Wasserstein-1 / range per numeric column (lower is better):", "",
             "| method | " + " | ".join(columns) + " |",
             "| --- |" + " ---: |" * len(columns)]
    for name, entry in results.items():
        lines.append(f"| {name} | " + " | ".join(f"{entry['w1_range'][c]:.4f}"
                                                 for c in columns) + " |")
    if "MST" not in results:
        lines += ["", "MST: missing (no `numeric_w1` in `results/reference.json`; run with "
                  "`--mst` in the reference environment)."]
    lines += ["", "Share of records equal to each declared special value (real | synthetic):",
              ""]
    specials = [(s["column"], s["value"]) for s in
                next(iter(results.values()))["special_shares"]]
    lines += ["| method | " + " | ".join(f"{c} = {v:g}" for c, v in specials) + " |",
              "| --- |" + " ---: |" * len(specials)]
    first = next(iter(results.values()))["special_shares"]
    lines.append("| real | " + " | ".join(f"{s['real']:.4f}" for s in first) + " |")
    for name, entry in results.items():
        lines.append(f"| {name} | " + " | ".join(f"{s['synthetic']:.4f}"
                                                 for s in entry["special_shares"]) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, default=4.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mst", action="store_true",
                        help="compute MST's numbers in $DPSYNTH_BENCH_PYTHON (~80 s)")
    parser.add_argument("--output", type=Path, default=_RESULTS / "numeric.json")
    parser.add_argument("--child-mst", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_mst:
        entry = run_mst_child(float(args.child_mst[0]), int(args.child_mst[1]))
        print(json.dumps(entry, default=float))
        return 0
    results = run_dpsynth(args.epsilon, args.seed)
    mst = run_mst(args.epsilon, args.seed) if args.mst else _mst_from_files(args.epsilon)
    if mst is None:
        print("MST: missing (no numeric_w1 in results/reference.json; run with --mst in the "
              "reference environment)")
    else:
        results["MST"] = mst
    document = {"dataset": "adult", "epsilon": args.epsilon, "seed": args.seed,
                "results": results}
    args.output.write_text(json.dumps(document, indent=1, default=float) + "\n")
    table = markdown(document)
    args.output.with_suffix(".md").write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
