"""Issue #15: the adaptive workload release against the current default and AIM.

For NIST MA and Adult (all-categorical, public binning, ``benchmarks.datasets``)
at epsilon 1, 4 and 10 with delta = 1e-5 and several seeds, it runs

- ``workload``: :func:`dpsynth.release.workload.release_workload` on the
  integer codes, with ``rho = zcdp_rho_tight(epsilon, delta)`` (the
  Canonne-Kamath-Steinke conversion, :mod:`dpsynth.release.conversion`,
  as MST and AIM use; ``--bun-steinke`` for the squared Bun-Steinke
  ``zcdp_rho``), then :func:`~dpsynth.release.workload.sample_release`
  (the marginal-matching population fit) for as many records as the
  estimated total;
- ``default``: ``DPMarginalSynthesizer()`` with ``epsilon`` (its own delta
  rule) on the same table (optional, ``--no-default`` to skip).

Codes: every column's observed values, plus a code for missing values when
the column has any, are treated as public categories (as MST gets them
from smartnoise and the ``categories declared`` benchmark configuration).

Metrics: mean total variation distance of all 1-, 2- and 3-way marginals
(:func:`dpsynth.metrics.marginal_tvd`, missing values as a category) and
fit + sample seconds (wall clock, 2 shared cores).  AIM and MST numbers for
NIST MA are those of issue #15 (MST from ``results/reference.json``).

Usage::

    nice -n 10 python -m benchmarks.run_workload [--seeds 0 1 2] [--datasets nist_ma adult]
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dpsynth import DPMarginalSynthesizer
from dpsynth.accounting import zcdp_rho
from dpsynth.metrics import marginal_tvd
from dpsynth.release.conversion import zcdp_rho_tight
from dpsynth.release.workload import release_workload, sample_release

from .datasets import DATASETS

DELTA = 1e-5
TIGHT = True  # Canonne-Kamath-Steinke conversion (as MST/AIM in private-pgm)
_RESULTS = Path(__file__).parent / "results"
# issue #15 (NIST MA, 3-way TVD)
AIM = {"nist_ma": {1.0: 0.094, 4.0: 0.063, 10.0: 0.059}}
MST = {"nist_ma": {1.0: 0.123, 4.0: 0.084, 10.0: 0.079}}


def encode(df):
    """Integer codes (n, d), the number of codes and the values of every column."""
    codes, n_values, values = [], [], []
    for column in df.columns:
        series = df[column]
        uniques = sorted(series.dropna().unique().tolist())
        mapping = {v: i for i, v in enumerate(uniques)}
        has_missing = bool(series.isna().any())
        code = series.map(mapping).fillna(len(uniques)).to_numpy().astype(np.int32)
        codes.append(code)
        n_values.append(len(uniques) + has_missing)
        values.append(uniques + ([None] if has_missing else []))
    return np.column_stack(codes).astype(np.int32), np.array(n_values), values


def decode(codes, columns, values):
    return pd.DataFrame({c: np.asarray(v, dtype=object)[codes[:, j]]
                         for j, (c, v) in enumerate(zip(columns, values))})


def tvds(real, synthetic):
    return {str(k): marginal_tvd(real, synthetic, k=k) for k in (1, 2, 3)}


def run_workload(real, codes, n_values, values, epsilon, seed, **options):
    rng = np.random.default_rng(seed)
    rho = (zcdp_rho_tight if TIGHT else zcdp_rho)(epsilon, DELTA)
    cpu = time.process_time()
    start = time.perf_counter()
    release = release_workload(codes, n_values, rho=rho, rng=rng, **options)
    fit_seconds = time.perf_counter() - start
    n = max(int(round(release.total)), 1)
    synthetic = sample_release(release, n, rng)
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu
    selected = [s.params["selected"] for s in release.spends if s.mechanism == "exponential"]
    return {"method": "workload", "epsilon": epsilon, "delta": DELTA, "rho": rho,
            "seed": seed, "fit_seconds": fit_seconds, "seconds": seconds,
            "cpu_seconds": cpu_seconds,
            "rho_spent": release.rho_spent, "rounds": len(selected),
            "selected_sizes": [len(s) for s in selected],
            "tvd": tvds(real, decode(synthetic, real.columns, values))}


def run_default(real, epsilon, seed):
    synth = DPMarginalSynthesizer(epsilon=epsilon, random_state=seed)
    cpu = time.process_time()
    start = time.perf_counter()
    synth.fit(real)
    synthetic = synth.sample()
    seconds = time.perf_counter() - start
    return {"method": "default", "epsilon": epsilon, "seed": seed, "seconds": seconds,
            "cpu_seconds": time.process_time() - cpu,
            "delta": synth.privacy_spent_["delta"],
            "tvd": tvds(real, synthetic.astype(object).where(synthetic.notna(), None))}


def summary(records):
    lines = ["| data | eps | method | seeds | TVD 1 | TVD 2 | TVD 3 | wall s | CPU s | AIM 3 | 0.9 x AIM | MST 3 |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    keys = sorted({(r["dataset"], r["epsilon"], r["method"]) for r in records})
    for data, eps, method in keys:
        rs = [r for r in records if (r["dataset"], r["epsilon"], r["method"]) == (data, eps, method)]
        mean = {k: np.mean([r["tvd"][k] for r in rs]) for k in "123"}
        sec = np.mean([r["seconds"] for r in rs])
        cpu = np.mean([r["cpu_seconds"] for r in rs])
        aim = AIM.get(data, {}).get(eps)
        mst = MST.get(data, {}).get(eps)
        lines.append(f"| {data} | {eps:g} | {method} | {len(rs)} | {mean['1']:.4f} | "
                     f"{mean['2']:.4f} | {mean['3']:.4f} | {sec:.1f} | {cpu:.1f} | "
                     f"{aim if aim else '-'} | {f'{0.9 * aim:.4f}' if aim else '-'} | "
                     f"{mst if mst else '-'} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 4.0, 10.0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--no-default", action="store_true")
    parser.add_argument("--bun-steinke", action="store_true",
                        help="convert (epsilon, delta) with dpsynth.accounting.zcdp_rho")
    parser.add_argument("--output", type=Path, default=_RESULTS / "workload.json")
    args = parser.parse_args(argv)
    global TIGHT
    TIGHT = not args.bun_steinke
    records = []
    for name in args.datasets:
        real = DATASETS[name]()
        real = real.astype(object).where(real.notna(), None)
        codes, n_values, values = encode(real)
        for epsilon in args.epsilons:
            for seed in args.seeds:
                r = run_workload(real, codes, n_values, values, epsilon, seed)
                records.append({"dataset": name, **r})
                print(name, epsilon, seed, "workload", {k: round(v, 4) for k, v in r["tvd"].items()},
                      f"{r['seconds']:.1f}s rounds={r['rounds']}", flush=True)
                if not args.no_default:
                    r = run_default(real, epsilon, seed)
                    records.append({"dataset": name, **r})
                    print(name, epsilon, seed, "default",
                          {k: round(v, 4) for k, v in r["tvd"].items()},
                          f"{r['seconds']:.1f}s", flush=True)
    table = summary(records)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"delta": DELTA, "conversion": "tight" if TIGHT else "bun-steinke", "aim_issue_15": AIM, "mst_issue_15": MST,
                                       "records": records, "table": table}, indent=1,
                                      default=float))
    print(table)


if __name__ == "__main__":
    main()
