"""SDMetrics-style quality report: Column Shapes and Column Pair Trends.

The scores users of SDV/SDMetrics already read, with the same definitions:

- Column Shapes: ``1 - KS statistic`` (KSComplement) for numeric columns
  (dates and durations included, in seconds),
  ``1 - TVD`` (TVComplement) for categorical ones, missing values dropped;
- Column Pair Trends: ``1 - |rho_real - rho_synthetic| / 2``
  (CorrelationSimilarity, Pearson) for numeric pairs, ``1 - TVD`` of the
  2-way contingency table (ContingencySimilarity; numeric columns cut into
  10 equal-width bins of the real range, missing kept as a value) otherwise;
- overall score: the mean of the two property scores.

Like every metric here it reads the real data: not a DP release.
"""

from itertools import combinations

import warnings

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp

from ..utils._temporal import is_temporal, temporal_seconds
from ._encoding import check_value_kinds

__all__ = ["column_shapes", "column_pair_trends", "quality_report"]

#: Bins of a numeric column in ContingencySimilarity (as SDMetrics).
N_DISCRETE_BINS = 10


def _is_numeric(series):
    return ((pd.api.types.is_numeric_dtype(series.dtype)
             and not pd.api.types.is_bool_dtype(series.dtype)) or is_temporal(series.dtype))


def _check(real, synthetic):
    if not isinstance(real, pd.DataFrame) or not isinstance(synthetic, pd.DataFrame):
        raise TypeError("real and synthetic must be DataFrames.")
    missing = [c for c in real.columns if c not in synthetic.columns]
    if missing:
        raise ValueError(f"synthetic lacks the column(s) {missing} of real.")
    check_value_kinds(real, synthetic, ("real", "synthetic"))


def _tv_complement(a, b):
    p = pd.Series(a.astype(object).to_numpy()).value_counts(normalize=True, dropna=True)
    q = pd.Series(b.astype(object).to_numpy()).value_counts(normalize=True, dropna=True)
    if p.empty or q.empty:
        return np.nan
    return 1.0 - 0.5 * p.subtract(q, fill_value=0).abs().sum()


def _values(series):
    if is_temporal(series.dtype):
        return temporal_seconds(series)
    return series.to_numpy(dtype=np.float64, na_value=np.nan)


def _ks_complement(a, b):
    x, y = _values(a), _values(b)
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    if not x.size or not y.size:
        return np.nan
    return 1.0 - float(ks_2samp(x, y).statistic)


def column_shapes(real, synthetic):
    """Per-column shape scores (KSComplement or TVComplement) in [0, 1].

    Returns
    -------
    DataFrame
        ``column``, ``metric``, ``score``.
    """
    _check(real, synthetic)
    rows = []
    for column in real.columns:
        numeric = _is_numeric(real[column]) and _is_numeric(synthetic[column])
        score = (_ks_complement(real[column], synthetic[column]) if numeric
                 else _tv_complement(real[column], synthetic[column]))
        rows.append({"column": column, "metric": "KSComplement" if numeric else "TVComplement",
                     "score": score})
    return pd.DataFrame(rows, columns=["column", "metric", "score"])


def _text_labels(series):
    return series.astype(object).where(series.notna(), "<missing>").astype(str)


def _discretize(series, low, high):
    if not _is_numeric(series):
        return _text_labels(series)
    values = _values(series)
    edges = np.linspace(low, high, N_DISCRETE_BINS + 1) if high > low else np.array([low, low])
    codes = np.clip(np.searchsorted(edges[1:-1], values, side="right"), 0,
                    N_DISCRETE_BINS - 1).astype(object)
    codes[np.isnan(values)] = "<missing>"
    return pd.Series(codes).astype(str)


def _labels(real, synthetic):
    """Per column, the ContingencySimilarity label of every row of both tables (real
    rows first) as integer codes, and their number: numeric columns cut into
    :data:`N_DISCRETE_BINS` equal-width bins of the real range, other values as
    their text, missing values one label.  A column numeric in one table only (a
    synthetic column of numbers and an other label read back as text) is labelled as
    text in both, so that equal values match.  Each column is labelled once, whatever
    the number of pairs it is in."""
    out = {}
    for column in real.columns:
        ref = _values(real[column]) if _is_numeric(real[column]) else None
        if ref is not None and np.isfinite(ref).any():
            low, high = np.nanmin(ref), np.nanmax(ref)
        else:
            low = high = 0.0
        numeric = _is_numeric(real[column]) and _is_numeric(synthetic[column])
        labels = pd.concat([_discretize(frame[column].reset_index(drop=True), low, high)
                            if numeric else _text_labels(frame[column].reset_index(drop=True))
                            for frame in (real, synthetic)], ignore_index=True)
        codes, uniques = pd.factorize(labels)
        out[column] = (codes.astype(np.int64), len(uniques))
    return out


def _contingency(labels, n_real, a, b):
    """``1 - TVD`` of the 2-way tables of the labels of ``a`` and ``b``."""
    (codes_a, _), (codes_b, n_b) = labels[a], labels[b]
    key = codes_a * n_b + codes_b
    if key.size and int(key.max()) >= 4 * key.size + 1024:  # sparse: number the cells seen
        key = pd.factorize(key)[0]
    size = int(key.max()) + 1 if key.size else 0
    p = np.bincount(key[:n_real], minlength=size) / n_real
    q = np.bincount(key[n_real:], minlength=size) / (key.size - n_real)
    return 1.0 - 0.5 * float(np.abs(p - q).sum())


def _rho(x, y):
    keep = ~np.isnan(x) & ~np.isnan(y)
    if keep.sum() < 2 or np.std(x[keep]) == 0 or np.std(y[keep]) == 0:
        return np.nan
    return float(np.corrcoef(x[keep], y[keep])[0, 1])


def _correlation_similarity(real_values, synth_values, a, b):
    r = _rho(real_values[a], real_values[b])
    s = _rho(synth_values[a], synth_values[b])
    if np.isnan(r) or np.isnan(s):
        return np.nan
    return 1.0 - abs(r - s) / 2.0


def column_pair_trends(real, synthetic):
    """Per-pair trend scores (CorrelationSimilarity or ContingencySimilarity) in [0, 1].

    Each column is read (and labelled) once, so a wide table costs one pass per
    column and a count per pair.

    Returns
    -------
    DataFrame
        ``column_1``, ``column_2``, ``metric``, ``score`` (NaN when a table has
        no row, or a correlation is undefined).
    """
    _check(real, synthetic)
    columns = list(real.columns)
    numeric = {c: _is_numeric(real[c]) and _is_numeric(synthetic[c]) for c in columns}
    real_values = {c: _values(real[c]) for c in columns if numeric[c]}
    synth_values = {c: _values(synthetic[c]) for c in columns if numeric[c]}
    empty = len(real) == 0 or len(synthetic) == 0
    labels = None
    rows = []
    for a, b in combinations(columns, 2):
        both = numeric[a] and numeric[b]
        if empty:
            score = np.nan
        elif both:
            score = _correlation_similarity(real_values, synth_values, a, b)
        else:
            if labels is None:
                labels = _labels(real, synthetic[columns])
            score = _contingency(labels, len(real), a, b)
        rows.append({"column_1": a, "column_2": b,
                     "metric": "CorrelationSimilarity" if both
                     else "ContingencySimilarity", "score": score})
    return pd.DataFrame(rows, columns=["column_1", "column_2", "metric", "score"])


def quality_report(real, synthetic, *, use_sdmetrics=False, metadata=None):
    """The SDMetrics-style quality report of ``synthetic`` against ``real``.

    Parameters
    ----------
    real, synthetic : DataFrame
    use_sdmetrics : bool, default=False
        Hand off to ``sdmetrics.reports.single_table.QualityReport`` (the
        optional ``sdmetrics`` package; ``ImportError`` if absent).
        ``metadata`` is then its metadata dict (default: numerical for
        numeric columns, categorical otherwise).

    Returns
    -------
    dict
        ``score`` (mean of the two property scores), ``column_shapes`` and
        ``column_pair_trends`` (property scores), ``details``: the two
        per-column and per-pair tables.  The values read the real data: not
        a DP release.
    """
    _check(real, synthetic)
    synthetic = synthetic[list(real.columns)]
    if use_sdmetrics:
        try:
            with warnings.catch_warnings():  # newer sdmetrics deprecate this report
                warnings.simplefilter("ignore", FutureWarning)
                from sdmetrics.reports.single_table import QualityReport  # optional dependency
        except ImportError as exc:
            raise ImportError("use_sdmetrics=True needs the optional package sdmetrics "
                              "(pip install sdmetrics, or the extra: pip install "
                              "\".[sdmetrics]\" from the source tree).") from exc
        if metadata is None:
            metadata = {"columns": {c: {"sdtype": "numerical" if _is_numeric(real[c])
                                        else "categorical"} for c in real.columns}}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            report = QualityReport()
            report.generate(real, synthetic, metadata, verbose=False)
        properties = report.get_properties().set_index("Property")["Score"]
        return {"score": float(report.get_score()),
                "column_shapes": float(properties.get("Column Shapes", np.nan)),
                "column_pair_trends": float(properties.get("Column Pair Trends", np.nan)),
                "details": {"column_shapes": report.get_details("Column Shapes"),
                            "column_pair_trends": report.get_details("Column Pair Trends")},
                "source": "sdmetrics"}
    shapes = column_shapes(real, synthetic)
    pairs = column_pair_trends(real, synthetic)
    shape_score = float(np.nanmean(shapes["score"])) if shapes["score"].notna().any() else np.nan
    pair_score = float(np.nanmean(pairs["score"])) if pairs["score"].notna().any() else np.nan
    scores = [s for s in (shape_score, pair_score) if not np.isnan(s)]
    return {"score": float(np.mean(scores)) if scores else np.nan,
            "column_shapes": shape_score, "column_pair_trends": pair_score,
            "details": {"column_shapes": shapes, "column_pair_trends": pairs},
            "source": "dpsynth"}
