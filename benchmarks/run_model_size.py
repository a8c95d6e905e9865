"""Accuracy of large samples drawn from a fixed-size model (``model_size``) against fitting every record.

Fits ``DPMarginalSynthesizer(epsilon=4, reporting_length=3)`` (default
release) once on the 24-column table of :mod:`benchmarks.run_large` at
``--rows`` rows (the MA excerpt tiled, so its distribution is the excerpt's),
then samples ``--n`` records with ``MarginalMatchingSampler(model_size=m)``
for every ``m`` of ``--model-sizes`` (``0``: every record fitted, one
population per 50,000 records), ``--seeds`` sampling seeds each.  Reports the
mean 2- and 3-way TVD to the excerpt (every pair, ``--triples`` random
triples), sampling wall and CPU seconds.  Results go to
``results/model_size.json`` and ``results/model_size.md``.  Usage::

    python -m benchmarks.run_model_size [--rows 1000000] [--n 1000000]
        [--model-sizes 0 100000 300000] [--seeds 0 1] [--triples 500]
"""

import argparse
import os
import sys
import time

import numpy as np

from ._results import save


def main(argv=None):
    """Fit once, sample per model size and seed, save the TVDs and timings."""
    from dpsynth import DPMarginalSynthesizer
    from dpsynth.metrics import marginal_tvd
    from dpsynth.sampling import MarginalMatchingSampler

    from .datasets import load_nist_ma
    from .run_large import load_wide_table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--model-sizes", type=int, nargs="*", default=[0, 100_000, 300_000])
    parser.add_argument("--seeds", type=int, nargs="*", default=[0, 1])
    parser.add_argument("--triples", type=int, default=500)
    args = parser.parse_args(argv)
    reference = load_wide_table(len(load_nist_ma()))  # the excerpt: the tiled table's law
    table = load_wide_table(args.rows)
    results = {"command": "python -m benchmarks.run_model_size " + " ".join(sys.argv[1:]),
               "date": time.strftime("%Y-%m-%d"), "cpu_count": os.cpu_count(),
               "rows": args.rows, "n": args.n, "runs": []}
    synth = DPMarginalSynthesizer(epsilon=4.0, reporting_length=3, random_state=0)
    start, cpu = time.perf_counter(), time.process_time()
    synth.fit(table)
    results["fit_s"] = round(time.perf_counter() - start, 1)
    results["fit_cpu_s"] = round(time.process_time() - cpu, 1)
    del table
    for model_size in args.model_sizes:
        synth.set_params(synthesis=MarginalMatchingSampler(model_size=model_size))
        for seed in args.seeds:
            start, cpu = time.perf_counter(), time.process_time()
            synthetic = synth.sample(args.n, random_state=seed)
            run = {"model_size": model_size, "seed": seed,
                   "sample_s": round(time.perf_counter() - start, 1),
                   "sample_cpu_s": round(time.process_time() - cpu, 1),
                   "load_average": round(os.getloadavg()[0], 1),
                   "tvd2": round(marginal_tvd(reference, synthetic, k=2), 5),
                   "tvd3": round(marginal_tvd(reference, synthetic, k=3,
                                              max_subsets=args.triples, random_state=0), 5)}
            print(run, flush=True)
            results["runs"].append(run)
    lines = [f"Measured {results['date']} on {results['cpu_count']} cores: "
             f"`{results['command']}` (fit {results['fit_s']} s).", "",
             "| model_size | seeds | 2-way TVD | 3-way TVD | sample s | sample CPU s |",
             "|---:|---:|---:|---:|---:|---:|"]
    for model_size in args.model_sizes:
        runs = [r for r in results["runs"] if r["model_size"] == model_size]
        lines.append(f"| {model_size:,} | {len(runs)} | "
                     f"{np.mean([r['tvd2'] for r in runs]):.5f} | "
                     f"{np.mean([r['tvd3'] for r in runs]):.5f} | "
                     f"{np.mean([r['sample_s'] for r in runs]):.1f} | "
                     f"{np.mean([r['sample_cpu_s'] for r in runs]):.1f} |")
    save("model_size", results, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
