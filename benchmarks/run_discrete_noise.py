"""Issue #33: what the exact discrete noise costs against numpy's continuous noise.

For NIST MA and Adult (``benchmarks.datasets``, all-categorical, nothing
declared) at epsilon 1 and 4 and seeds 0, 1, 2, it fits and samples the
shipped default :class:`dpsynth.DPMarginalSynthesizer` (workload release,
R = 3, ``delta = 1 / (n ln n)`` as in :mod:`benchmarks.run_workload`) twice per
seed, with ``noise="discrete"`` (the default) and ``noise="continuous"``, one
right after the other in the same process so that both see the same machine
load.  Metrics: mean TVD of the 1-, 2- and 3-way marginals, fit seconds (wall
clock and process CPU).  The summary gives, per table and epsilon, the means
over seeds and the discrete/continuous ratios (the issue's goal: at most 1.02
for the 3-way TVD and 1.20 for the fit time).

Usage, from the repository root::

    python -m benchmarks.run_discrete_noise [--seeds 0 1 2] [--datasets nist_ma adult]
        [--epsilons 1 4] [--output discrete_noise.json]
"""

import argparse
import json
import time

import numpy as np

from ._results import RESULTS
from .run_workload import fidelity, load, synthesizer

NOISES = ("discrete", "continuous")


def run_one(real, epsilon, seed, noise):
    """Fit and sample the default synthesizer with ``noise``; return its record."""
    synth = synthesizer(real, "default", epsilon, seed).set_params(noise=noise)
    start, cpu = time.perf_counter(), time.process_time()
    synth.fit(real)
    fit_seconds, fit_cpu = time.perf_counter() - start, time.process_time() - cpu
    synthetic = synth.sample()
    mechanisms = sorted({m.mechanism for m in synth.privacy_spent_.mechanisms})
    return {"epsilon": epsilon, "seed": seed, "noise": noise,
            "fit_seconds": fit_seconds, "fit_cpu_seconds": fit_cpu,
            "mechanisms": mechanisms, **fidelity(real, synthetic)}


def summarize(records):
    """Means over seeds per (dataset, epsilon, noise) and the discrete/continuous ratios."""
    out = []
    keys = sorted({(r["dataset"], r["epsilon"]) for r in records})
    for dataset, epsilon in keys:
        entry = {"dataset": dataset, "epsilon": epsilon}
        for noise in NOISES:
            runs = [r for r in records if (r["dataset"], r["epsilon"], r["noise"])
                    == (dataset, epsilon, noise)]
            entry[noise] = {
                "seeds": sorted(r["seed"] for r in runs),
                **{f"tvd_{k}": float(np.mean([r["tvd"][str(k)] for r in runs]))
                   for k in (1, 2, 3)},
                "fit_seconds": float(np.mean([r["fit_seconds"] for r in runs])),
                "fit_cpu_seconds": float(np.mean([r["fit_cpu_seconds"] for r in runs]))}
        entry["ratio"] = {name: entry["discrete"][name] / entry["continuous"][name]
                          for name in ("tvd_1", "tvd_2", "tvd_3", "fit_seconds",
                                       "fit_cpu_seconds")}
        out.append(entry)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--datasets", nargs="+", default=["nist_ma", "adult"])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 4.0])
    parser.add_argument("--output", default="discrete_noise.json",
                        help="file name under benchmarks/results")
    args = parser.parse_args(argv)
    records = []
    for dataset in args.datasets:
        real = load(dataset)
        for epsilon in args.epsilons:
            for seed in args.seeds:
                for noise in NOISES:
                    record = {"dataset": dataset, **run_one(real, epsilon, seed, noise)}
                    records.append(record)
                    print(json.dumps(record), flush=True)
    summary = summarize(records)
    path = RESULTS / args.output
    path.write_text(json.dumps({"runs": records, "summary": summary}, indent=1) + "\n")
    for entry in summary:
        print(entry["dataset"], entry["epsilon"], json.dumps(entry["ratio"]))


if __name__ == "__main__":
    main()
