"""Numeric columns on their original scale: Wasserstein-1 distance, quantiles,
shares of exact values.

Binned comparisons (TVD of bins) miss what happens inside a bin: a spike at
0 or at 40 that the synthetic data spread over its bin is invisible there.
These metrics compare the values themselves.  Like every metric here they
read the real data: not a DP release.
"""

import numpy as np
import pandas as pd
from scipy.stats import wasserstein_distance

from ..utils._numbers import parse_numbers

__all__ = ["numeric_quantiles", "value_shares", "wasserstein_numeric"]

#: Quantiles reported by :func:`numeric_quantiles`.
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def _values(frame, column, name):
    if column not in frame.columns:
        raise ValueError(f"{name} has no column {column!r}.")
    series = frame[column]
    if series.dtype == object or isinstance(series.dtype, pd.StringDtype):
        # a text column holding numbers and codes ("N"): its numbers; codes are ignored
        numbers = parse_numbers(series)
        if series.notna().any() and np.isnan(numbers).all():
            raise TypeError(f"Column {column!r} of {name} is not numeric (dtype "
                            f"{series.dtype}, no field is a number).")
        return numbers
    if pd.api.types.is_bool_dtype(series.dtype) or not pd.api.types.is_numeric_dtype(
            series.dtype):
        raise TypeError(f"Column {column!r} of {name} is not numeric (dtype {series.dtype}).")
    return series.to_numpy(dtype=np.float64, na_value=np.nan)


def _numeric_columns(real, synth, columns):
    if columns is not None:
        return list(columns)
    return [c for c in real.columns if c in synth.columns
            and pd.api.types.is_numeric_dtype(real[c].dtype)
            and not pd.api.types.is_bool_dtype(real[c].dtype)
            and pd.api.types.is_numeric_dtype(synth[c].dtype)
            and not pd.api.types.is_bool_dtype(synth[c].dtype)]


def wasserstein_numeric(real, synth, *, columns=None, ranges=None):
    """Wasserstein-1 distance of every numeric column, divided by its range.

    ``W1 / (high - low)`` is the average distance a unit of probability mass
    moves to turn the synthetic distribution into the real one, as a share
    of the column's range: 0 is identical, 1 the two ends of the range.
    It sees what bin-level metrics miss (values spread inside their bins,
    lost point masses).

    Parameters
    ----------
    real, synth : DataFrame
        Numeric columns on their original scale; missing values are ignored.
    columns : list of str, default=None
        Columns to compare; ``None``: every numeric (non-bool) column of both.
    ranges : dict, default=None
        ``{column: (low, high)}``, e.g. the public bounds.  Columns without
        one use the real column's min and max.

    Returns
    -------
    pandas.Series
        Indexed by column name (NaN when a table has no value to compare).
    """
    if not isinstance(real, pd.DataFrame) or not isinstance(synth, pd.DataFrame):
        raise TypeError("real and synth must be DataFrames.")
    ranges = {} if ranges is None else dict(ranges)
    out = {}
    for column in _numeric_columns(real, synth, columns):
        x, y = _values(real, column, "real"), _values(synth, column, "synth")
        x, y = x[~np.isnan(x)], y[~np.isnan(y)]
        if not x.size or not y.size:
            out[column] = np.nan
            continue
        low, high = ranges.get(column, (x.min(), x.max()))
        width = float(high) - float(low)
        distance = wasserstein_distance(x, y)
        out[column] = distance / width if width > 0 else float(distance > 0)
    return pd.Series(out, name="W1 / range", dtype=np.float64)


def numeric_quantiles(real, synth, *, columns=None, quantiles=QUANTILES):
    """Quantiles of every numeric column in both tables, on the original scale.

    Returns
    -------
    DataFrame
        One row per column and table (``column``, ``table``: ``"real"`` or
        ``"synthetic"``), one column per quantile (``"5%"``, ...), plus
        ``mean``.
    """
    rows = []
    for column in _numeric_columns(real, synth, columns):
        for label, frame in (("real", real), ("synthetic", synth)):
            values = _values(frame, column, label)
            values = values[~np.isnan(values)]
            row = {"column": column, "table": label}
            for q in quantiles:
                row[f"{100 * q:g}%"] = float(np.quantile(values, q)) if values.size else np.nan
            row["mean"] = float(values.mean()) if values.size else np.nan
            rows.append(row)
    return pd.DataFrame(rows)


def value_shares(real, synth, values):
    """Share of records equal to each given value, in both tables.

    Parameters
    ----------
    real, synth : DataFrame
    values : dict
        ``{column: [values]}``, e.g. the declared special values.

    Returns
    -------
    DataFrame
        ``column``, ``value``, ``real``, ``synthetic`` and ``difference``
        (synthetic - real) shares of all records.
    """
    rows = []
    for column, points in values.items():
        x, y = _values(real, column, "real"), _values(synth, column, "synth")
        for value in points:
            share_x = float(np.mean(x == value)) if x.size else np.nan
            share_y = float(np.mean(y == value)) if y.size else np.nan
            rows.append({"column": column, "value": value, "real": share_x,
                         "synthetic": share_y, "difference": share_y - share_x})
    return pd.DataFrame(rows, columns=["column", "value", "real", "synthetic", "difference"])
