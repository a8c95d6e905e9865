"""Random raw tables through every default route: a hunt for crashes (issue #36).

Each seed draws a table of 300-8,000 rows and 2-24 columns of the kinds users
bring (small counts, wide integers, identifiers, floats with a few decimals,
zero-inflated amounts, long-tailed categories, yes/no text, dates written as
text in four formats, datetime64, percentages and currency amounts as text,
booleans with and without missing values, nullable Int64, pandas categories,
numbers mixed with words, constants, sparse columns, tiny and huge floats;
missing shares 0-95%) and an epsilon of 0.5, 1, 4 or 10, and runs, with
nothing declared:

- the Python API (``fit`` and ``sample``; the input must be left unchanged,
  dtypes restored);
- every third seed, the command-line chain ``schema draft`` ->
  ``synthesize --schema``, ``synthesize --aggregates-out`` -> ``evaluate``
  (with and without ``--aggregates``) and ``sample``.

A run fails on any exception or non-zero exit; it is *flagged* when, without a
warning that the release is dominated by its noise, a table of 1,000+ rows
comes back more than 10% off in rows or a complete column with more than 0.5%
missing values; or (command line) when a CSV column of numbers only comes back
with more than 0.5% texts (labels only: unless the release warned that a
column had no value released).

Usage, from the repository root::

    python -m benchmarks.run_random_tables [--seeds 0 100] [--stem random_tables]

Writes ``results/<stem>.json`` and ``.md``.
"""

import argparse
import contextlib
import io
from pathlib import Path
import tempfile
import time
import warnings

import numpy as np
import pandas as pd

from ._results import save

KINDS = ("count", "wideint", "id", "float", "fewdec", "zeroinfl", "cat", "yesno", "datetext",
         "datetime", "pct", "money", "bool", "Int64", "category", "mixed", "constant",
         "sparse", "negfloat", "bigfloat", "tinyfloat", "boolna")
DATE_FORMATS = ("%Y-%m-%d", "%d/%m/%Y", "%b-%Y", "%Y-%m-%d %H:%M:%S")


def random_column(rng, n):
    """One column of ``n`` values of a random kind, and the kind."""
    kind = str(rng.choice(KINDS))
    missing = rng.random(n) < rng.choice([0, 0, 0.01, 0.1, 0.5, 0.95])
    if kind == "count":
        s = pd.Series(rng.poisson(rng.uniform(0.2, 8), n).astype(np.int64))
    elif kind == "wideint":
        s = pd.Series(rng.lognormal(rng.uniform(3, 12), 1, n).astype(np.int64))
    elif kind == "id":
        s = pd.Series(rng.permutation(n) * rng.integers(1, 5) + rng.integers(0, 10**7))
    elif kind == "float":
        s = pd.Series(np.round(rng.normal(rng.uniform(-100, 100), rng.uniform(0.1, 50), n),
                               rng.integers(0, 5)))
    elif kind == "fewdec":  # whole numbers but a few with cents
        v = rng.integers(0, 50, n).astype(float)
        cents = rng.random(n) < rng.uniform(0.005, 0.1)
        v[cents] += np.round(rng.random(cents.sum()), 2)
        s = pd.Series(v)
    elif kind == "zeroinfl":
        s = pd.Series(np.where(rng.random(n) < rng.uniform(0.5, 0.99), 0.0,
                               np.round(rng.exponential(rng.uniform(1, 1000), n), 2)))
    elif kind == "cat":
        m = int(rng.integers(2, 60))
        p = 1 / np.arange(1, m + 1) ** rng.uniform(0.3, 2)
        s = pd.Series(np.array([f"v{j}" for j in range(m)], dtype=object)[
            rng.choice(m, n, p=p / p.sum())])
    elif kind == "yesno":
        s = pd.Series(np.where(rng.random(n) < rng.uniform(0.01, 0.5), "yes", "no").astype(object))
    elif kind == "datetext":
        when = (pd.Timestamp("2015-01-01") + pd.to_timedelta(rng.integers(0, 3000, n), "D")
                + pd.to_timedelta(rng.integers(0, 86400, n), "s"))
        s = pd.Series(when.strftime(str(rng.choice(DATE_FORMATS)))).astype(object)
    elif kind == "datetime":
        s = pd.Series(pd.Timestamp("2019-01-01") + pd.to_timedelta(rng.integers(0, 10**8, n), "s"))
    elif kind == "pct":
        s = pd.Series(np.char.add(np.round(rng.uniform(0, 100, n), 1).astype(str), "%")
                      .astype(object))
    elif kind == "money":
        s = pd.Series(["$" + f"{v:,.2f}" for v in rng.lognormal(7, 1, n)], dtype=object)
    elif kind == "bool":
        s = pd.Series(rng.random(n) < rng.uniform(0.01, 0.9))
    elif kind == "boolna":
        return pd.Series([None if m else bool(v) for v, m in
                          zip(rng.random(n) < 0.3, missing)], dtype=object), kind
    elif kind == "Int64":
        s = pd.Series(rng.integers(-5, 300, n), dtype="Int64")
    elif kind == "category":
        s = pd.Series(pd.Categorical(rng.choice(["a", "b", "c", "d"], n,
                                                p=[0.6, 0.3, 0.08, 0.02])))
    elif kind == "mixed":
        v = np.empty(n, dtype=object)
        words = rng.random(n) >= 0.6
        v[~words] = rng.integers(0, 30, (~words).sum())
        v[words] = "unknown"
        s = pd.Series(v)
    elif kind == "constant":
        s = pd.Series(np.full(n, float(rng.choice([0.0, 1.0, 7.0]))))
    elif kind == "sparse":
        s = pd.Series(np.where(rng.random(n) < 0.92, np.nan, rng.integers(0, 120, n).astype(float)))
    elif kind == "negfloat":
        s = pd.Series(-np.round(rng.lognormal(2, 1.5, n), 3))
    elif kind == "bigfloat":
        s = pd.Series(rng.lognormal(30, 3, n))
    else:  # tinyfloat
        s = pd.Series(rng.lognormal(-12, 2, n))
    if missing.any() and kind not in ("bool", "constant", "category"):
        s = s.astype(object) if s.dtype == np.int64 else s
        s[missing] = None if s.dtype == object else np.nan
    return s, kind


def random_table(seed):
    """``(frame, epsilon)`` of ``seed``."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([300, 1000, 3000, 8000]))
    columns = {}
    for k in range(int(rng.integers(2, 25))):
        s, kind = random_column(rng, n)
        columns[f"c{k}_{kind}"] = s.reset_index(drop=True)
    return pd.DataFrame(columns), float(rng.choice([0.5, 1.0, 4.0, 10.0]))


def _flags(real, fake, warned, dtypes, unreleased=False):
    """``warned``: the release warned that it is dominated by its noise;
    ``unreleased``: that some column had no value released (it comes back as its
    other value only)."""
    out = []
    if len(real) >= 1000 and abs(len(fake) - len(real)) > 0.1 * len(real) and not warned:
        out.append(f"rows {len(fake)} of {len(real)}")
    for c in real.columns:
        if c not in fake.columns:
            out.append(f"column {c} missing")
        elif real[c].notna().all() and fake[c].isna().mean() > 0.005 and not warned:
            out.append(f"NaN {fake[c].isna().mean():.3f} in complete {c}")
        elif dtypes and str(real[c].dtype) != str(fake[c].dtype):
            out.append(f"dtype of {c}: {real[c].dtype} -> {fake[c].dtype}")
        elif not dtypes and pd.api.types.is_numeric_dtype(real[c]) \
                and not pd.api.types.is_bool_dtype(real[c]):  # a CSV column of numbers only
            present = fake[c].dropna()
            texts = pd.to_numeric(present, errors="coerce").isna().mean() if len(present) else 0
            # a label among numbers, or labels only where no column was warned about
            if texts > 0.005 and (texts < 1.0 or not unreleased):
                out.append(f"texts {texts:.3f} in numbers-only {c}")
    return out


def python_route(frame, epsilon, seed):
    from dpsynth import DPMarginalSynthesizer
    from dpsynth.exceptions import NoisyReleaseWarning

    before = frame.copy()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fake = DPMarginalSynthesizer(epsilon=epsilon, random_state=seed).fit(frame).sample(
            random_state=seed)
    pd.testing.assert_frame_equal(before, frame)  # input never modified
    warned = any(issubclass(w.category, NoisyReleaseWarning) for w in caught)
    return _flags(frame, fake, warned, dtypes=True)


def command_line_chain(frame, epsilon, seed):
    from dpsynth.cli import main

    with tempfile.TemporaryDirectory() as folder:
        f = Path(folder)
        data = f / "data.csv"
        frame.to_csv(data, index=False)
        steps = [["schema", "draft", str(data), "-o", str(f / "schema.json")],
                 ["synthesize", str(data), "-o", str(f / "declared.csv"), "--schema",
                  str(f / "schema.json"), "--seed", str(seed), "--epsilon", str(epsilon)],
                 ["synthesize", str(data), "-o", str(f / "out.csv"), "--aggregates-out",
                  str(f / "release.json"), "--seed", str(seed), "--epsilon", str(epsilon)],
                 ["evaluate", str(data), str(f / "out.csv")],
                 ["evaluate", str(data), str(f / "out.csv"), "--aggregates",
                  str(f / "release.json")],
                 ["sample", str(f / "release.json"), "-o", str(f / "again.csv"), "--seed", "1"]]
        noisy = unreleased = False
        for args in steps:
            err = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err), \
                    warnings.catch_warnings():
                warnings.simplefilter("always")  # the command line prints its warnings
                code = main(args)
            if args[0] == "synthesize" and "--schema" not in args:
                noisy |= "dominated by its noise" in err.getvalue()
                unreleased |= "No value of the column(s)" in err.getvalue()
            if code != 0:
                raise RuntimeError(f"{' '.join(args[:2])}: exit {code}: "
                                   f"{err.getvalue().strip()[-300:]}")
        return _flags(pd.read_csv(data), pd.read_csv(f / "out.csv"), noisy, dtypes=False,
                      unreleased=unreleased)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs=2, default=[0, 100],
                        help="first and last (exclusive) seed")
    parser.add_argument("--stem", default="random_tables")
    args = parser.parse_args(argv)
    runs = []
    for seed in range(*args.seeds):
        frame, epsilon = random_table(seed)
        routes = [("python", python_route)] + (
            [("cli", command_line_chain)] if seed % 3 == 0 else [])
        for route, run in routes:
            start = time.perf_counter()
            entry = {"seed": seed, "route": route, "rows": len(frame),
                     "columns": frame.shape[1], "epsilon": epsilon}
            try:
                entry["flags"] = run(frame, epsilon, seed)
            except Exception as error:  # a crash is the finding
                entry["error"] = f"{type(error).__name__}: {error}"[:600]
            entry["seconds"] = round(time.perf_counter() - start, 2)
            runs.append(entry)
            print(f"seed {seed} {route}: {entry.get('error') or entry['flags'] or 'ok'}",
                  flush=True)
    failed = [r for r in runs if "error" in r]
    flagged = [r for r in runs if r.get("flags")]
    lines = [f"Random raw tables, nothing declared: seeds {args.seeds[0]}-{args.seeds[1] - 1}, "
             f"{len(runs)} runs ({sum(r['route'] == 'cli' for r in runs)} command-line "
             f"chains); {len(failed)} failed, {len(flagged)} flagged.", "",
             "| seed | route | rows x columns | epsilon | finding |", "|---|---|---|---|---|"]
    for r in failed + flagged:
        lines.append(f"| {r['seed']} | {r['route']} | {r['rows']} x {r['columns']} | "
                     f"{r['epsilon']:g} | {r.get('error') or '; '.join(r['flags'])} |")
    save(args.stem, {"seeds": args.seeds, "runs": runs}, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
