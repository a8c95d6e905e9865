"""Local-DP benchmark: CALM against FC, AM, FT and Uni (Zhang et al., CCS 2018, Section 5).

For each dataset (a binary table with planted correlations, and UCI Adult
bucketed to <= 3 categories per attribute), n in {2^16, 2^18}, d in {8, 16}
and epsilon in {0.4, 1, 2}, every method answers the same 50 random 3-way
marginals; the metric is their mean SSE on fraction tables,
``sum_v (M_A(v) - T_A(v))^2``, averaged over ``--repeats`` runs (mean and
std).  All methods are epsilon-LDP with one report per user and the adaptive
frequency oracle:

* **CALM**: :class:`dpsynth.local.CALMSynthesizer` (Algorithm 1's (ell, m),
  covering design, consistency, Ripple, maximum entropy).
* **FC**: every user reports her full record (one cell of the ``prod c_i``
  cells).  Simulated exactly per queried marginal without the full table:
  with OUE the support counts of a marginal's cells are
  ``Bin(N_A(v), 1/2) + Bin(n M - N_A(v), q)`` (independent bits), with GRR a
  multinomial per true cell (``M`` = full cells per marginal cell).
* **AM**: users split into ``C(d, 3)`` groups, each reporting one 3-way
  marginal; a query is answered by its group.
* **FT**: (binary data only, as in the paper) users split over the
  ``sum_{s=1..3} C(d, s)`` Fourier coefficients, each reporting the parity
  ``(-1)^<alpha, v>`` by randomised response; marginals rebuilt from the
  coefficients.
* **Uni**: the uniform table.

A central-DP section compares :class:`dpsynth.release.PriViewSynthesizer`
with the default :class:`dpsynth.DPMarginalSynthesizer` (marginals of its
synthetic records) at the same epsilon, and a scale section times CALM on
10^6 simulated users.

Run: ``nice -n 10 python -m benchmarks.run_local [--repeats 5] [--quick] [--keep-local]``.
Writes ``benchmarks/results/local.json`` and ``local.md`` (``local_quick.*`` with
``--quick``).
"""

import argparse
import itertools
import json
import math
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from dpsynth.local import CALMSynthesizer, adaptive_oracle
from dpsynth.local.oracles import GRR
from dpsynth.release import PriViewSynthesizer

RESULTS = Path(__file__).resolve().parent / "results"

# ---------------------------------------------------------------- datasets

# Adult bucketed to <= 3 categories with fixed, public rules (no data-derived cut points)
_ADULT_MAPS = {
    "age": lambda s: pd.cut(pd.to_numeric(s), [0, 34, 49, 200], labels=["17-34", "35-49", "50+"]),
    "workclass": lambda s: s.map(lambda v: "private" if v == "Private" else
                                 "self-emp" if v.startswith("Self-emp") else "other"),
    "fnlwgt": lambda s: pd.cut(pd.to_numeric(s), [0, 149999, 249999, 10 ** 7],
                               labels=["<150k", "150-250k", "250k+"]),
    "education": lambda s: s.map(lambda v: "college" if v in {
        "Bachelors", "Masters", "Prof-school", "Doctorate"} else "some-college" if v in {
        "Some-college", "Assoc-voc", "Assoc-acdm"} else "hs-or-less"),
    "education-num": lambda s: pd.cut(pd.to_numeric(s), [0, 9, 12, 16],
                                      labels=["1-9", "10-12", "13-16"]),
    "marital-status": lambda s: s.map(lambda v: "married" if v.startswith("Married-civ") or
                                      v == "Married-AF-spouse" else
                                      "never" if v == "Never-married" else "other"),
    "occupation": lambda s: s.map(lambda v: "white" if v in {
        "Exec-managerial", "Prof-specialty", "Tech-support", "Adm-clerical", "Sales"} else
        "blue" if v in {"Craft-repair", "Machine-op-inspct", "Transport-moving",
                        "Handlers-cleaners", "Farming-fishing", "Protective-serv",
                        "Armed-Forces"} else "other"),
    "relationship": lambda s: s.map(lambda v: v if v in {"Husband", "Not-in-family"}
                                    else "other"),
    "race": lambda s: s.map(lambda v: v if v in {"White", "Black"} else "other"),
    "sex": lambda s: s,
    "capital-gain": lambda s: pd.cut(pd.to_numeric(s), [-1, 0, 4999, 10 ** 6],
                                     labels=["0", "1-4999", "5000+"]),
    "capital-loss": lambda s: pd.cut(pd.to_numeric(s), [-1, 0, 1999, 10 ** 6],
                                     labels=["0", "1-1999", "2000+"]),
    "hours-per-week": lambda s: pd.cut(pd.to_numeric(s), [0, 39, 40, 200],
                                       labels=["<40", "40", ">40"]),
    "native-country": lambda s: s.map(lambda v: "US" if v == "United-States" else
                                      "?" if v == "?" else "other"),
    "income": lambda s: s,
}
ADULT_D8 = ["age", "workclass", "education", "marital-status", "occupation", "relationship",
            "sex", "income"]


def load_adult_buckets(columns):
    """UCI Adult (32,561 rows) with every attribute in <= 3 public buckets."""
    from .datasets import shared_dir
    raw = pd.read_csv(shared_dir() / "data" / "adult-uci" / "adult.csv", dtype=str,
                      keep_default_na=False)
    return pd.DataFrame({c: _ADULT_MAPS[c](raw[c]).astype(str) for c in columns})


def planted_binary(n, d, seed):
    """Binary table with planted correlations: a latent class and a Markov chain."""
    rng = np.random.default_rng(seed)
    tables = np.random.default_rng(1000 + d).beta(0.4, 0.4, size=(d, 4, 2))
    z = rng.choice(4, size=n, p=[0.4, 0.3, 0.2, 0.1])
    x = np.zeros((n, d), dtype=np.int64)
    x[:, 0] = rng.random(n) < tables[0, z, 0]
    for j in range(1, d):
        x[:, j] = rng.random(n) < tables[j, z, x[:, j - 1]]
    return pd.DataFrame(x, columns=[f"b{j}" for j in range(d)])


def make_table(dataset, n, d, seed):
    if dataset == "planted":
        return planted_binary(n, d, seed)
    columns = ADULT_D8 if d == 8 else list(_ADULT_MAPS)
    base = load_adult_buckets(columns)
    # Adult has 32,561 rows: resample with replacement to n users (the paper does not say how)
    idx = np.random.default_rng(seed).integers(0, len(base), n)
    return base.iloc[idx].reset_index(drop=True)


# ---------------------------------------------------------------- baselines

def _true(codes, attrs, cards):
    """Fractions of the rows in each cell (rows with a missing code, -1, count nowhere)."""
    shape = tuple(cards[a] for a in attrs)
    sub = codes[:, list(attrs)]
    sub = sub[(sub >= 0).all(axis=1)]
    idx = np.ravel_multi_index(tuple(sub.T), shape)
    return np.bincount(idx, minlength=int(np.prod(shape))).reshape(shape) / len(codes)



def _workload(dataset, n, d, k, n_queries, as_text=False):
    """The table, its public category lists, codes, and the queried k-way marginals
    (the same 50 for every method: a fixed query seed) with their true values."""
    X = make_table(dataset, n, d, seed=0)
    if as_text:
        X = X.astype(str)
    cats = {c: sorted(X[c].unique().tolist()) for c in X}  # public lists (fixed rules)
    d_eff = X.shape[1]
    cards = [len(cats[c]) for c in X]
    codes = np.column_stack([pd.Index(cats[c]).get_indexer(X[c]) for c in X])
    qrng = np.random.default_rng(42)
    all_sets = list(itertools.combinations(range(d_eff), k))
    queries = [all_sets[i] for i in qrng.choice(len(all_sets), n_queries, replace=False)]
    return X, cats, d_eff, cards, codes, queries, [_true(codes, q, cards) for q in queries]

def fc_answers(codes, cards, queries, epsilon, rng):
    """FC, simulated exactly per queried marginal (see the module docstring)."""
    n = len(codes)
    total_cells = int(np.prod(cards, dtype=np.float64))
    oracle = adaptive_oracle(min(total_cells, 2 ** 62), epsilon)
    out = []
    for attrs in queries:
        counts = _true(codes, attrs, cards).ravel() * n
        M = total_cells // int(np.prod([cards[a] for a in attrs]))
        if isinstance(oracle, GRR):
            p, q = oracle.p, oracle.q
            K = counts.size
            probs = np.full((K, K), M * q)
            np.fill_diagonal(probs, p + (M - 1) * q)
            support = sum(rng.multinomial(int(c), probs[i] / probs[i].sum())
                          for i, c in enumerate(counts))
            ps, qs = p, q
        else:
            ps, qs = 0.5, oracle.q
            support = rng.binomial(counts.astype(np.int64), 0.5) + \
                rng.binomial((n * M - counts).astype(np.int64), qs)
        est = (support / n - M * qs) / (ps - qs)
        out.append(est.reshape([cards[a] for a in attrs]))
    return out


def am_answers(codes, cards, queries, epsilon, rng, k=3):
    """AM: one group per k-way marginal, adaptive FO with the full epsilon."""
    d = codes.shape[1]
    sets = list(itertools.combinations(range(d), k))
    groups = np.empty(len(codes), dtype=np.int64)
    groups[rng.permutation(len(codes))] = np.arange(len(codes)) % len(sets)
    index = {s: i for i, s in enumerate(sets)}
    out = []
    for attrs in queries:
        g = index[tuple(attrs)]
        sub = codes[groups == g]
        shape = tuple(cards[a] for a in attrs)
        cells = np.ravel_multi_index(tuple(sub[:, a] for a in attrs), shape)
        oracle = adaptive_oracle(int(np.prod(shape)), epsilon)
        est, _ = oracle.estimate(oracle.perturb(cells, rng))
        out.append(est.reshape(shape))
    return out


def ft_answers(codes, queries, epsilon, rng, k=3):
    """FT (binary): users split over the Fourier coefficients of order 1..k."""
    n, d = codes.shape
    alphas = [a for s in range(1, k + 1) for a in itertools.combinations(range(d), s)]
    groups = np.empty(n, dtype=np.int64)
    groups[rng.permutation(n)] = np.arange(n) % len(alphas)
    grr = GRR(2, epsilon)
    theta = {(): 1.0}
    for i, alpha in enumerate(alphas):
        sub = codes[groups == i][:, list(alpha)]
        bit = sub.sum(axis=1) % 2                       # parity: (-1)^bit
        freq, _ = grr.estimate(grr.perturb(bit.astype(np.int64), rng))
        theta[alpha] = freq[0] - freq[1]                 # E[(-1)^<alpha, v>]
    out = []
    for attrs in queries:
        table = np.zeros((2,) * len(attrs))
        for v in itertools.product((0, 1), repeat=len(attrs)):
            total = 0.0
            for s in range(len(attrs) + 1):
                for sub in itertools.combinations(range(len(attrs)), s):
                    alpha = tuple(attrs[i] for i in sub)
                    total += theta[alpha] * (-1) ** sum(v[i] for i in sub)
            table[v] = total / 2 ** len(attrs)
        out.append(table)
    return out


def sse(estimates, truths):
    return float(np.mean([((e - t) ** 2).sum() for e, t in zip(estimates, truths)]))


# ---------------------------------------------------------------- runs

def run_local_grid(datasets, ns, ds, epsilons, repeats, n_queries=50, k=3):
    rows = []
    for dataset, n, d in itertools.product(datasets, ns, ds):
        X, cats, d_eff, cards, codes, queries, truths = _workload(dataset, n, d, k, n_queries)
        binary = all(c == 2 for c in cards)
        for eps in epsilons:
            res = {m: [] for m in ("CALM", "FC", "AM", "FT", "Uni")}
            calm_time, info = [], None
            for r in range(repeats):
                rng = np.random.default_rng([r, int(eps * 10), n, d])
                t0 = time.perf_counter()
                synth = CALMSynthesizer(epsilon=eps, k=k, categories=cats,
                                        random_state=r).fit(X)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = [synth.marginal([X.columns[a] for a in q]) for q in queries]
                calm_time.append(time.perf_counter() - t0)
                info = (synth.ell_, synth.n_marginals_, sorted({o.name for o in synth.oracles_}))
                res["CALM"].append(sse(est, truths))
                res["FC"].append(sse(fc_answers(codes, cards, queries, eps, rng), truths))
                res["AM"].append(sse(am_answers(codes, cards, queries, eps, rng, k), truths))
                if binary:
                    res["FT"].append(sse(ft_answers(codes, queries, eps, rng, k), truths))
                uni = [np.full(t.shape, 1 / t.size) for t in truths]
                res["Uni"].append(sse(uni, truths))
            row = {"dataset": dataset, "n": n, "d": d_eff, "epsilon": eps, "ell": info[0],
                   "m": info[1], "oracles": info[2], "calm_seconds": float(np.mean(calm_time))}
            for m, values in res.items():
                row[m] = (float(np.mean(values)), float(np.std(values))) if values else None
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def run_central(datasets, n, ds, epsilons, n_queries=50, k=3):
    from dpsynth import DPMarginalSynthesizer
    from dpsynth.preprocessing import TableEncoder
    rows = []
    for dataset, d in itertools.product(datasets, ds):
        X, cats, d_eff, cards, codes, queries, truths = _workload(dataset, n, d, k, n_queries,
                                                                  as_text=True)
        for eps in epsilons:
            row = {"dataset": dataset, "n": n, "d": d_eff, "epsilon": eps}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                pv = PriViewSynthesizer(epsilon=eps, categories=cats, random_state=0).fit(X)
                est = [pv.marginal([X.columns[a] for a in q]) for q in queries]
                row["PriView"] = sse(est, truths)
                row["priview_seconds"] = time.perf_counter() - t0
                row["priview_views"] = (pv.view_size_, pv.strength_, len(pv.marginal_sets_))
                t0 = time.perf_counter()
                dm = DPMarginalSynthesizer(epsilon=eps, encoder=TableEncoder(categories=cats),
                                           random_state=0).fit(X)
                syn = dm.sample(n)
                scodes = np.column_stack([pd.Index(cats[c]).get_indexer(syn[c].astype(str))
                                          for c in X])
                row["DPMarginal"] = sse([_true(scodes, q, cards) for q in queries], truths)
                row["dpmarginal_seconds"] = time.perf_counter() - t0
                calm = CALMSynthesizer(epsilon=eps, categories=cats, random_state=0).fit(X)
                row["CALM"] = sse([calm.marginal([X.columns[a] for a in q]) for q in queries],
                                  truths)
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


_SCALE_CODE = """
import json, resource, time, tracemalloc, sys
import numpy as np, pandas as pd
sys.path.insert(0, {root!r})
from benchmarks.run_local import planted_binary
from dpsynth.local import CALMSynthesizer, OUE
X = planted_binary({n}, 16, 0)
cats = {{c: [0, 1] for c in X}}
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
t0 = time.perf_counter()
synth = CALMSynthesizer(epsilon={eps}, categories=cats, random_state=0).fit(X)
fit = time.perf_counter() - t0
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
t0 = time.perf_counter(); synth.sample(100000, random_state=0); sample = time.perf_counter() - t0
rng = np.random.default_rng(0); values = rng.integers(0, 256, {n})
t0 = time.perf_counter(); rep = OUE(256, {eps}).perturb(values, rng)
oue = time.perf_counter() - t0
t0 = time.perf_counter(); OUE(256, {eps}).estimate(rep); oue_est = time.perf_counter() - t0
print(json.dumps({{"n_users": {n}, "d": 16, "epsilon": {eps}, "ell": synth.ell_,
    "m": synth.n_marginals_, "fit_seconds": fit, "fit_peak_mib": peak / 2**20,
    "process_maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "sample_100k_seconds": sample, "oue_256_perturb_seconds": oue,
    "oue_256_estimate_seconds": oue_est, "oue_report_mib": rep.nbytes / 2**20}}))
"""


def run_scale(n=1_000_000, eps=1.0):
    root = str(Path(__file__).resolve().parents[1])
    out = subprocess.run([sys.executable, "-c", _SCALE_CODE.format(root=root, n=n, eps=eps)],
                         capture_output=True, text=True, check=True)
    row = json.loads(out.stdout.strip().splitlines()[-1])
    print(json.dumps(row), flush=True)
    return row


# ---------------------------------------------------------------- report

def _fmt(cell):
    if cell is None:
        return "n/a"
    mean, std = cell
    return f"{mean:.2e} ± {std:.1e}"


def to_markdown(local, central, scale, repeats):
    lines = ["## Local DP: CALM against the paper's baselines", "",
             f"Mean SSE of 50 random 3-way marginals (fractions), mean ± std over {repeats} "
             "runs; lower is better. FT is defined for binary attributes only.", "",
             "| data | n | d | ε | (ℓ, m) | CALM | FC | AM | FT | Uni | FT / CALM |",
             "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in local:
        ratio = f"{r['FT'][0] / r['CALM'][0]:.0f}×" if r["FT"] else "n/a"
        lines.append(f"| {r['dataset']} | 2^{int(math.log2(r['n']))} | {r['d']} | "
                     f"{r['epsilon']} | ({r['ell']}, {r['m']}) | {_fmt(r['CALM'])} | "
                     f"{_fmt(r['FC'])} | {_fmt(r['AM'])} | {_fmt(r['FT'])} | {_fmt(r['Uni'])} "
                     f"| {ratio} |")
    if central:
        lines += ["", "## Central DP at the same ε: PriView against the default synthesizer", "",
                  "Mean SSE of the same 50 3-way marginals (one run). DPMarginal = the default "
                  "`DPMarginalSynthesizer`, measured on n synthetic records; CALM (local) for "
                  "scale.", "",
                  "| data | n | d | ε | PriView (ℓ, t, w) | PriView | DPMarginal | "
                  "CALM (local) | CALM / PriView |",
                  "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |"]
        for r in central:
            lines.append(
                f"| {r['dataset']} | 2^{int(math.log2(r['n']))} | {r['d']} | {r['epsilon']} | "
                f"{tuple(r['priview_views'])} | {r['PriView']:.2e} | {r['DPMarginal']:.2e} | "
                f"{r['CALM']:.2e} | {r['CALM'] / r['PriView']:.0f}× |")
    if scale:
        lines += ["", "## Scale: 10^6 simulated users", "",
                  "| users | d | ε | (ℓ, m) | fit (s) | fit peak (MiB, tracemalloc) | "
                  "process max RSS (MiB) | sample 100k (s) | OUE, 256 cells: perturb / estimate "
                  "(s) | OUE reports (MiB) |",
                  "| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for s in scale:
            lines.append(
                f"| {s['n_users']:,} | {s['d']} | {s['epsilon']} | ({s['ell']}, {s['m']}) | "
                f"{s['fit_seconds']:.2f} | {s['fit_peak_mib']:.0f} | "
                f"{s['process_maxrss_mib']:.0f} | {s['sample_100k_seconds']:.2f} | "
                f"{s['oue_256_perturb_seconds']:.2f} / {s['oue_256_estimate_seconds']:.2f} | "
                f"{s['oue_report_mib']:.0f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one small configuration")
    parser.add_argument("--no-central", action="store_true")
    parser.add_argument("--no-scale", action="store_true")
    parser.add_argument("--scale-only", action="store_true",
                        help="rerun only the 10^6-user timing, keep the other results")
    parser.add_argument("--keep-local", action="store_true",
                        help="rerun the central comparison and the timing, keep the local "
                             "grid (CALM against the baselines) of results/local.json")
    args = parser.parse_args(argv)
    if args.scale_only:
        payload = json.loads((RESULTS / "local.json").read_text())
        payload["scale"] = [run_scale()]
        (RESULTS / "local.json").write_text(json.dumps(payload, indent=1))
        md = to_markdown(payload["local"], payload["central"], payload["scale"],
                         payload["repeats"])
        (RESULTS / "local.md").write_text(md)
        return
    datasets = ["planted"]
    try:
        from .datasets import shared_dir
        shared_dir()
        datasets.append("adult")
    except FileNotFoundError:
        print("shared data not found: Adult skipped", file=sys.stderr)
    if args.quick:
        ns, ds, eps, repeats = [2 ** 16], [8], [1.0], 1
    else:
        ns, ds, eps, repeats = [2 ** 16, 2 ** 18], [8, 16], [0.4, 1.0, 2.0], args.repeats
    t0 = time.perf_counter()
    kept = None
    if args.keep_local:
        kept = json.loads((RESULTS / "local.json").read_text())
        local, repeats = kept["local"], kept["repeats"]
    else:
        local = run_local_grid(datasets, ns, ds, eps, repeats)
    central = [] if args.no_central else run_central(datasets, 2 ** 16, ds, eps)
    scale = [] if args.no_scale or args.quick else [run_scale()]
    RESULTS.mkdir(exist_ok=True)
    payload = {"local": local, "central": central, "scale": scale, "repeats": repeats,
               "seconds": time.perf_counter() - t0,
               "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if kept is not None:  # say which parts this run measured
        payload["local_grid_from"] = kept.get("local_grid_from", "an earlier full run")
        payload["seconds_local_grid"] = kept.get("seconds_local_grid", kept.get("seconds"))
    stem = "local_quick" if args.quick else "local"  # a quick run keeps the full results
    (RESULTS / f"{stem}.json").write_text(json.dumps(payload, indent=1))
    (RESULTS / f"{stem}.md").write_text(to_markdown(local, central, scale, repeats))
    print(to_markdown(local, central, scale, repeats))


if __name__ == "__main__":
    main()
