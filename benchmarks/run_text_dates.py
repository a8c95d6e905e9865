"""Dates written as text, 5,000 rows at epsilon 4 on both routes (issue #36).

An ISO date column with a code ``unknown`` (4%) and a timestamp column
(``%Y-%m-%d %H:%M:%S``), beside a categorical and an integer column written as
text.  Prints per route and seed: rows, the KS statistic of the dates as days,
the 1-way TVD of the texts and of their months (``YYYY-MM``), and the shares
of ``<other>``, of dates and of ``unknown``.

    PYTHONPATH=<tree> python -m benchmarks.run_text_dates 0 1
"""

import contextlib
import io
from pathlib import Path
import sys
import tempfile
import warnings

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp

FORMATS = {"opened": "%Y-%m-%d", "stamp": "%Y-%m-%d %H:%M:%S"}


def table(seed, n=5000):
    rng = np.random.default_rng(100 + seed)
    days = pd.Timestamp("2014-01-01") + pd.to_timedelta(
        rng.gamma(3.0, 250.0, n).astype(int), unit="D")
    opened = pd.Series(days.strftime("%Y-%m-%d"), dtype=object)
    opened[rng.random(n) < 0.04] = "unknown"
    stamp = days + pd.to_timedelta(rng.integers(0, 86400, n), unit="s")
    return pd.DataFrame({"opened": opened, "stamp": stamp.strftime("%Y-%m-%d %H:%M:%S"),
                         "grade": rng.choice(["A", "B", "C", "D"], n, p=[.4, .3, .2, .1]),
                         "amount": rng.integers(1000, 35000, n).astype(str)})


def _days(series, fmt):
    values = pd.to_datetime(series.astype(object), format=fmt, errors="coerce")
    return ((values - pd.Timestamp("1970-01-01")) / pd.Timedelta(days=1)).dropna().to_numpy()


def _tvd(a, b):
    p = a.astype(object).fillna("<missing>").value_counts(normalize=True)
    q = b.astype(object).fillna("<missing>").value_counts(normalize=True)
    return float(0.5 * p.subtract(q, fill_value=0).abs().sum())


def _months(series):
    text = series.astype(object).fillna("<missing>").astype(str)
    return text.where(~text.str.match(r"\d{4}-\d{2}"), text.str[:7])


def synthesize(frame, route, seed):
    if route == "python":
        from dpsynth import DPMarginalSynthesizer

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            synth = DPMarginalSynthesizer(epsilon=4.0, random_state=seed).fit(frame)
            return synth.sample(random_state=seed)
    from dpsynth.cli import main

    with tempfile.TemporaryDirectory() as folder:
        data, out = Path(folder) / "x.csv", Path(folder) / "y.csv"
        frame.to_csv(data, index=False)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert main(["synthesize", str(data), "-o", str(out), "--seed", str(seed)]) == 0
        return pd.read_csv(out, dtype=str, keep_default_na=False)


def run(route, seed):
    real = table(seed)
    fake = synthesize(real, route, seed)
    parts = [route, str(seed), str(len(fake))]
    for name, fmt in FORMATS.items():
        a, b = _days(real[name], fmt), _days(fake[name], fmt)
        ks = ks_2samp(a, b).statistic if len(b) else 1.0
        parts.append(f"{name}: KS {ks:.3f} TVD {_tvd(real[name], fake[name]):.3f} "
                     f"month TVD {_tvd(_months(real[name]), _months(fake[name])):.3f} "
                     f"<other> {(fake[name] == '<other>').mean():.3f} "
                     f"dates {len(b) / len(fake):.3f} unknown {(fake[name] == 'unknown').mean():.3f}")
    parts.append(f"grade TVD {_tvd(real['grade'], fake['grade']):.3f}")
    print(" | ".join(parts), flush=True)


if __name__ == "__main__":
    for seed in map(int, sys.argv[1:] or ["0"]):
        for route in ("python", "cli"):
            run(route, seed)
