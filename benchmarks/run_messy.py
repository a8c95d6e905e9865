"""Held-out-style stress test of the default path, nothing declared (issue #36).

The generated tables of :mod:`benchmarks.messy_tables` (credit-card approvals
with 25% zero expenditures, a 57-column loan export, a ~9,800-valued integer,
a complete 87-value column at epsilon 0.5, an 80%-zero count, a 30-row table,
columns of mixed types) and three real tables read from their CSV files as a
user would (``pandas.read_csv`` defaults: UCI Adult raw, SmartNoise's PUMS,
NIST's MA 2019 excerpt) go through

- the Python API, ``DPMarginalSynthesizer(epsilon=...).fit(train).sample()``,
  on the table as pandas holds it, and
- the command line, ``dpsynth synthesize train.csv -o out.csv`` with no
  flag but ``--seed`` (and ``--epsilon`` for a table run at another
  epsilon than the default 4); both files read back with ``pandas.read_csv``
  as the command line reads text (only an empty field is missing: a
  ``"n/a"`` it released as a value, or as part of the other value, is not
  scored as a missing one).

Each is scored against the issue's "Done when" (on an 80% train split; a
classifier's AUC on the other 20%):

- row count within 3% of the real one;
- each categorical column's 1-way TVD <= 0.03 (columns with more than 100
  distinct values, such as identifiers and free text, are reported apart).
  In a column with an other value (the values that DP discovery did not
  release, decoded to ``"<other>"``), the TVD is taken at the granularity of
  the release: the real records of the values that the release does not
  name are counted as ``"<other>"`` (the label stands for them), so that the
  metric scores the distribution the release can state rather than counting
  each such record twice, once as a missing real value and once as an extra
  label.  The share of records in ``"<other>"`` (the detail a release at this
  epsilon cannot name) is reported beside it (``other_share``, worst in the
  table's ``max other`` column, columns of at most 100 values), and the TVD
  over the labels as they are in ``categorical_labels``;
- each numeric column's Kolmogorov-Smirnov statistic <= 0.10, missing share
  within 0.03, and every value holding >= 5% of the records (a point mass)
  within 0.05 of its real share.  A column of dates written as text (the
  table's ``dates``, such as ``"Dec-2011"``) is scored as numbers, its dates
  parsed in their format: the release bins it as numbers, and the TVD over
  60 or more months of a few thousand records is mostly the noise of any
  sample (a bootstrap sample of the real months themselves is 0.05 away on
  the loan table's 60 months, 0.15 on its 587); that TVD is reported apart
  (``categorical_dates``).  So is a column of numbers written in a format (the
  table's ``formats``, such as ``"12.5%"``), its numbers read in that format;
- no missing value in a column that has none (the share of the other label,
  ``"<other>"``, in such a column is reported as ``other_in_complete``: values
  that DP discovery did not release, not a failure);
- a gradient-boosting classifier (``HistGradientBoostingClassifier``) of the
  table's target trained on the synthetic table reaches >= 0.95 of the AUC of
  one trained on the real train split.

A run whose release warns that it is dominated by its noise (a tiny table:
a public function of epsilon and the DP record count) is reported as
``warned``, the contract for such tables; its figures are kept apart
(``metric_failures``).

Usage, from the repository root::

    nice -n 10 .venv/bin/python -m benchmarks.run_messy [--tables credit_card loan ...]
        [--seeds 0 1] [--routes python cli]

Writes ``results/messy.json`` and ``results/messy.md``.
"""

import argparse
import contextlib
import io
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from dpsynth.schema import DEFAULT_OTHER_LABEL
from dpsynth.utils._numbers import parse_formatted
from dpsynth.utils._temporal import parse_dates

from ._results import save
from .messy_tables import TABLES, MessyTable
from .run_raw import _ks, _split

MANY = 100
"""Categorical columns with more distinct values than this are reported apart."""
NOISY = "dominated by its noise"
"""The synthesizer's warning that a release is too noisy to reproduce its table."""


def _real_tables():
    """The real tables, read from their CSV files with pandas' defaults."""
    from .datasets import shared_dir

    try:
        root = shared_dir() / "data"
    except FileNotFoundError:
        return {}
    specs = {"adult_raw": ("adult-uci/adult.csv", "income", ">50K"),
             "pums": ("pums-smartnoise/PUMS.csv", "married", 1),
             "nist_ma2019": ("nist-diverse-communities-ma/ma2019.csv", "OWN_RENT", 1)}
    out = {}
    for name, (path, target, positive) in specs.items():
        if (root / path).is_file():
            out[name] = (lambda p=root / path, n=name, t=target, v=positive: _from_csv(n, p, t, v))
    return out


def _from_csv(name, path, target, positive):
    frame = pd.read_csv(path)
    numeric = [c for c in frame.columns if _numeric_kind(frame[c])]
    return MessyTable(name, frame, target=target, positive=positive, numeric=numeric,
                      notes=f"{path.name} read with pandas.read_csv defaults")


def _comparable(series):
    """Values as a CSV round trip leaves them comparable: missing as one marker
    (None, NaN, pd.NA), numbers by value (``0``, ``0.0`` and ``"0.0"`` alike), the
    rest as text (booleans too: ``True`` and ``"True"`` alike, as a release read
    from text names them)."""
    values = series.astype(object)
    flags = values.map(lambda v: isinstance(v, (bool, np.bool_)))
    numbers = pd.to_numeric(values.where(series.notna() & ~flags, None), errors="coerce")
    text = series.astype(object).map(str)
    out = text.where(numbers.isna(), numbers.map(lambda v: f"{v:.10g}"))
    return out.where(series.notna(), "<missing>")


def _tvd(a, b, released=None):
    """1-way TVD of ``b`` against ``a``; with ``released`` (the values a release
    names in a column with an other value), ``a``'s records of the other values
    count as the other label (see the module docstring)."""
    real = _comparable(a)
    if released is not None:
        named = set(_comparable(pd.Series(list(released), dtype=object)))
        named.add("<missing>")
        real = real.where(real.isin(named), DEFAULT_OTHER_LABEL)
    p = real.value_counts(normalize=True)
    q = _comparable(b).value_counts(normalize=True)
    return float(0.5 * p.subtract(q, fill_value=0).abs().sum())


def _released_values(schema):
    """``{name: values}`` of the columns of a release's ``schema`` that have an
    other value (public: the release file's schema)."""
    return {c.name: tuple(c.values) for c in schema.columns
            if c.other and c.binning is None}


def _numeric_kind(column):
    return (pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)
            and column.nunique() > 10)


def _auc(train, test, target, positive, numeric):
    """ROC AUC on ``test`` of a gradient-boosting classifier trained on ``train``."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.metrics import roc_auc_score

    positive_spelled = _comparable(pd.Series([positive], dtype=object))[0]

    def label(frame):  # numbers by value: a target 1.0 read back as "1" is still 1
        return _comparable(frame[target]) == positive_spelled

    features = [c for c in test.columns if c != target]

    def spelled(column):  # numbers by value ("3" and "3.0" alike), as the TVD compares them
        return _comparable(column).where(column.notna())

    categories = {}
    for c in features:
        if c not in numeric:
            values = sorted(spelled(test[c]).dropna().unique())
            if 1 < len(values) <= 250:
                categories[c] = values
    kept = [c for c in features if c in numeric or c in categories]

    def prepared(frame):
        out = pd.DataFrame(index=frame.index)
        for c in kept:
            if c in numeric:
                out[c] = pd.to_numeric(frame[c], errors="coerce").astype(float)
            else:
                text = spelled(frame[c])
                out[c] = pd.Categorical(text.where(text.isin(categories[c])),
                                        categories=categories[c])
        return out

    y = label(train)
    if y.nunique() < 2 or label(test).nunique() < 2:
        return None
    X = prepared(train)
    # a numeric feature missing in every training record (a tiny synthetic table)
    # carries nothing to learn from; scikit-learn's binner refuses it
    kept = [c for c in kept if X[c].notna().any()]
    model = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=0)
    model.fit(X[kept], y)
    return float(roc_auc_score(label(test), model.predict_proba(prepared(test)[kept])[:, 1]))


def _point_masses(real, fake):
    """Values holding >= 5% of the real records: share real, share synthetic."""
    real_n = pd.to_numeric(real, errors="coerce")
    fake_n = pd.to_numeric(fake, errors="coerce")
    shares = real_n.value_counts(normalize=False) / len(real_n)
    out = {}
    for value, share in shares[shares >= 0.05].head(5).items():
        out[f"{value:g}"] = (float(share), float((fake_n == value).mean()))
    return out


def measure(real, fake, numeric, test=None, target=None, positive=None, released=None,
            dates=None, formats=None):
    """Score ``fake`` against ``real`` by the criteria of the module docstring;
    ``released``: :func:`_released_values` of the release; ``dates``: columns of
    dates written as text and their formats; ``formats``: columns of numbers
    written in a format and their formats."""
    released = released or {}
    dates = dict(dates or {})
    formats = formats or {}
    dates.update(formats)  # scored alike: their numbers, read in their format
    out = {"rows": len(fake), "rows_real": len(real),
           "row_error": abs(len(fake) - len(real)) / max(len(real), 1),
           "numeric": {}, "categorical": {}, "categorical_many": {}, "new_missing": {},
           "other_in_complete": {}, "categorical_labels": {}, "other_share": {},
           "categorical_dates": {},
           "missing_columns": sorted(set(real.columns) - set(fake.columns))}
    for c in real.columns:
        if c not in fake.columns:
            continue
        if real[c].notna().all() and len(fake) and fake[c].isna().any():
            out["new_missing"][c] = float(fake[c].isna().mean())
        if real[c].notna().all() and len(fake):  # the other label: values not released
            share = float((fake[c].astype(object).map(str) == DEFAULT_OTHER_LABEL).mean())
            if share:
                out["other_in_complete"][c] = share
        if c in dates:
            out["categorical_dates"][c] = _tvd(real[c], fake[c])
            parse = parse_formatted if c in formats else parse_dates
            parsed = [pd.Series(parse(frame[c], dates[c]), index=frame.index)
                      for frame in (real, fake)]
            out["numeric"][c] = {
                "ks": _ks(*parsed),
                ("number_format" if c in formats else "date_format"): dates[c],
                "missing_real": float(real[c].isna().mean()),
                "missing_synthetic": float(fake[c].isna().mean()) if len(fake) else 1.0,
                "not_numeric": float((parsed[1].isna() & fake[c].notna()).mean())
                if len(fake) else 0.0,
                "points": {}}
        elif c in numeric:
            values = pd.to_numeric(fake[c], errors="coerce")
            out["numeric"][c] = {
                "ks": _ks(real[c], fake[c]),
                "missing_real": float(real[c].isna().mean()),
                "missing_synthetic": float(fake[c].isna().mean()) if len(fake) else 1.0,
                "not_numeric": float((values.isna() & fake[c].notna()).mean())
                if len(fake) else 0.0,
                "points": _point_masses(real[c], fake[c])}
        else:
            many = real[c].nunique() > MANY
            (out["categorical_many"] if many else out["categorical"])[c] = _tvd(
                real[c], fake[c], released.get(c))
            if c in released and not many:
                out["categorical_labels"][c] = _tvd(real[c], fake[c])
                out["other_share"][c] = float(
                    (fake[c].astype(object).map(str) == DEFAULT_OTHER_LABEL).mean())
    if target is not None and test is not None and target in fake.columns:
        out["auc_synthetic"] = _auc(fake, test, target, positive, numeric) if len(fake) else None
    out["failures"] = failures(out)
    return out


def failures(m):
    """The Done-when criteria a measurement misses, as short strings."""
    out = []
    if m["row_error"] > 0.03:
        out.append(f"rows {m['rows']} vs {m['rows_real']}")
    out += [f"TVD {c} {v:.3f}" for c, v in m["categorical"].items() if v > 0.03]
    for c, v in m["numeric"].items():
        if v["ks"] > 0.10:
            out.append(f"KS {c} {v['ks']:.3f}")
        if abs(v["missing_real"] - v["missing_synthetic"]) > 0.03:
            out.append(f"missing {c} {v['missing_real']:.3f}->{v['missing_synthetic']:.3f}")
        for value, (a, b) in v["points"].items():
            if abs(a - b) > 0.05:
                out.append(f"point {c}={value} {a:.3f}->{b:.3f}")
    out += [f"NaN in complete {c} {v:.3f}" for c, v in m["new_missing"].items() if v > 0.01]
    out += [f"column {c} lost" for c in m["missing_columns"]]
    ratio = m.get("auc_ratio")
    if ratio is not None and ratio < 0.95:
        out.append(f"AUC ratio {ratio:.3f}")
    return out


def _python_api(table, train, seed):
    from dpsynth import DPMarginalSynthesizer

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        synth = DPMarginalSynthesizer(epsilon=table.epsilon, random_state=seed).fit(train)
        fake = synth.sample(random_state=seed)
    messages = sorted({f"{w.category.__name__}: {str(w.message)[:160]}" for w in caught})
    return train, fake, messages, _released_values(synth.aggregates_.schema)


def _command_line(table, train, seed):
    from dpsynth import DPAggregates
    from dpsynth.cli import main

    with tempfile.TemporaryDirectory() as folder:
        data, out = Path(folder) / "data.csv", Path(folder) / "out.csv"
        release = Path(folder) / "release.json"
        train.to_csv(data, index=False)
        # --aggregates-out saves the release (its public value lists); it changes
        # nothing in what is released or sampled
        args = ["synthesize", str(data), "-o", str(out), "--seed", str(seed),
                "--aggregates-out", str(release)]
        if table.epsilon != 4.0:
            args += ["--epsilon", str(table.epsilon)]
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code = main(args)
        messages = [line for line in stderr.getvalue().splitlines() if line.strip()]
        messages += [f"{w.category.__name__}: {str(w.message)[:160]}" for w in caught]
        if code != 0:
            raise RuntimeError(f"exit {code}: {' | '.join(messages)[-400:]}")
        return (_read_as_cli(data), _read_as_cli(out), messages,
                _released_values(DPAggregates.load(release).schema))


ROUTES = {"python": _python_api, "cli": _command_line}


def run_table(table, seeds, routes):
    """Every route and seed on ``table``; a list of measurements."""
    train, test = _split(table.frame)
    runs = []
    auc_real = (_auc(train, test, table.target, table.positive, table.numeric)
                if table.target else None)
    for seed in seeds:
        for route in routes:
            start = time.perf_counter()
            entry = {"table": table.name, "route": route, "seed": seed,
                     "epsilon": table.epsilon, "auc_real": auc_real}
            try:
                real, fake, messages, released = ROUTES[route](table, train, seed)
            except Exception as error:  # a failure is a finding, not the end of the run
                entry.update(error=f"{type(error).__name__}: {error}"[:600],
                             failures=["run failed"], seconds=time.perf_counter() - start)
                runs.append(entry)
                print(f"{table.name} {route} seed {seed}: FAILED {entry['error'][:200]}",
                      flush=True)
                continue
            entry["seconds"] = time.perf_counter() - start
            test_view = test if route == "python" else _reread(test)
            m = measure(real, fake, table.numeric, test_view, table.target, table.positive,
                        released, table.dates, table.formats)
            if auc_real and m.get("auc_synthetic") is not None:
                m["auc_ratio"] = m["auc_synthetic"] / auc_real
                m["failures"] = failures(m)
            entry.update(m, warnings=messages)
            if any(NOISY in message for message in messages):
                # the contract of a tiny or too-noisy table: a warning (a public
                # function of epsilon and the DP count), not the table's figures
                entry.update(warned=True, metric_failures=m["failures"],
                             failures=[f"warned: {NOISY}"])
            runs.append(entry)
            print(f"{table.name} {route} seed {seed}: {entry['seconds']:.0f}s rows "
                  f"{m['rows']}/{m['rows_real']} fails {entry['failures']}", flush=True)
    return runs


def _read_as_cli(source):
    """A CSV file read back as the command line reads text: only an empty field is
    missing (``"n/a"`` and ``"NA"`` stay values, as they were released), numbers
    as pandas reads them."""
    return pd.read_csv(source, keep_default_na=False, na_values=[""])


def _reread(frame):
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    buffer.seek(0)
    return _read_as_cli(buffer)


def main(argv=None):
    generators = dict(TABLES)
    generators.update(_real_tables())
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", nargs="+", default=list(generators),
                        choices=list(generators))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--routes", nargs="+", default=list(ROUTES), choices=list(ROUTES))
    parser.add_argument("--stem", default="messy")
    args = parser.parse_args(argv)
    runs = []
    tables = {}
    for name in args.tables:
        table = generators[name]()
        tables[name] = {"rows": len(table.frame), "columns": table.frame.shape[1],
                        "epsilon": table.epsilon, "target": table.target, "notes": table.notes}
        runs += run_table(table, args.seeds, args.routes)
    results = {"tables": tables, "seeds": args.seeds, "runs": runs}
    save(args.stem, results, _markdown(results))
    return results


def _markdown(results):
    lines = ["Raw tables through the default path, nothing declared (issue #36); "
             f"seeds {results['seeds']}. A cell is the worst over the table's columns.", "",
             "| table | route | rows (real) | max TVD | max other | max KS | max missing gap | "
             "max point gap | AUC ratio | fails |", "|---|---|---|---|---|---|---|---|---|---|"]

    def worst(values):
        return f"{max(values):.3f}" if values else "-"

    for r in results["runs"]:
        if "error" in r:
            lines.append(f"| {r['table']} | {r['route']} | error | | | | | | | "
                         f"{r['error'][:120]} |")
            continue
        num = r["numeric"].values()
        gaps = [abs(v["missing_real"] - v["missing_synthetic"]) for v in num]
        points = [abs(a - b) for v in num for a, b in v["points"].values()]
        ratio = r.get("auc_ratio")
        lines.append(
            f"| {r['table']} | {r['route']} | {r['rows']} ({r['rows_real']}) | "
            f"{worst(r['categorical'].values())} | {worst(r.get('other_share', {}).values())} | "
            f"{worst([v['ks'] for v in num])} | "
            f"{worst(gaps)} | {worst(points)} | {'-' if ratio is None else f'{ratio:.3f}'} | "
            f"{'; '.join(r['failures'][:6]) or 'none'} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
