"""pyarrow-backed columns (``pd.ArrowDtype``) read as their pandas equivalents.

``pd.read_csv(..., dtype_backend="pyarrow")`` and
``DataFrame.convert_dtypes(dtype_backend="pyarrow")`` give text, instants,
dates and durations dtypes that pandas' own type checks do not name as
text or temporal.  The package reads such a column in the pandas dtype that
holds the same values (a text column as ``string``, a timestamp as
``datetime64``, a date as ``datetime64[s]`` at midnight, a duration as
``timedelta64``), so that it is binned and decoded as those are, and gives
the decoded column its pyarrow dtype back.  The mapping is a function of the
dtype alone, which the user declared by choosing it.  Other pyarrow dtypes
(numbers, booleans, dictionaries) already behave as their pandas
equivalents and are left as they are.

A ``period`` column (``Series.dt.to_period("M")``) is read the same way, as
the instants its periods start at (``datetime64``), and decoded back to
periods of its frequency: a column of months is binned as dates rather than
taken for categories (whose rare months would be lost to DP discovery).
A sparse column (``pd.SparseDtype``) is read as its dense values and given
its sparse dtype back (kept dense when a decoded value cannot be held by it:
a missing value in a sparse column of integers).
"""

import pandas as pd

__all__ = ["standard_dtype", "standard_columns", "arrow_dtypes", "arrow_restored"]


def standard_dtype(dtype):
    """The pandas dtype that reads a pyarrow text or temporal ``dtype``; ``None`` for
    any other dtype (kept as it is)."""
    if isinstance(dtype, pd.PeriodDtype):  # the instant each period starts at
        return pd.api.types.pandas_dtype("datetime64[us]")
    if isinstance(dtype, pd.SparseDtype):  # its values, dense
        return dtype.subtype
    if not isinstance(dtype, pd.ArrowDtype):
        return None
    import pyarrow as pa  # present whenever an ArrowDtype is

    kind = dtype.pyarrow_dtype
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or (
            hasattr(pa.types, "is_string_view") and pa.types.is_string_view(kind)):
        return pd.StringDtype()
    if pa.types.is_timestamp(kind):
        unit = kind.unit
        return (pd.DatetimeTZDtype(unit, kind.tz) if kind.tz is not None
                else pd.api.types.pandas_dtype(f"datetime64[{unit}]"))
    if pa.types.is_date(kind):
        return pd.api.types.pandas_dtype("datetime64[s]")
    if pa.types.is_duration(kind):
        return pd.api.types.pandas_dtype(f"timedelta64[{kind.unit}]")
    return None


def arrow_dtypes(frame):
    """``{name: dtype}`` of ``frame``'s columns that :func:`standard_dtype` reads
    in another dtype."""
    return {name: dtype for name, dtype in frame.dtypes.items()
            if standard_dtype(dtype) is not None}


def standard_columns(frame):
    """``frame`` with its pyarrow text and temporal columns in their pandas dtypes
    (a new frame when any is; the input is not modified)."""
    found = arrow_dtypes(frame)
    if not found:
        return frame
    frame = frame.copy(deep=False)
    for name, dtype in found.items():
        frame[name] = _as_text_objects(frame[name]).astype(standard_dtype(dtype))
    return frame


def _as_text_objects(series):
    """A text column's cells as Python objects, ``None`` where missing (what every text
    dtype converts from); any other column as it is."""
    if not pd.api.types.is_string_dtype(series.dtype):
        return series
    return series.astype(object).where(series.notna(), None)


def arrow_restored(frame, dtypes):
    """``frame`` with the columns of ``dtypes`` (see :func:`arrow_dtypes`) given
    their pyarrow dtype back (a date column's instants at their day), and period
    columns their periods."""
    if not dtypes:
        return frame
    if any(isinstance(dtype, pd.ArrowDtype) for dtype in dtypes.values()):
        import pyarrow as pa  # present whenever an ArrowDtype is

    for name, dtype in dtypes.items():
        if name in frame.columns:
            series = frame[name]
            if isinstance(dtype, pd.PeriodDtype):  # the period holding each instant
                frame[name] = series.dt.to_period(dtype.freq)
                continue
            if isinstance(dtype, pd.SparseDtype):
                try:
                    frame[name] = series.astype(dtype)
                except (TypeError, ValueError):  # e.g. a missing value among integers
                    pass
                continue
            if pa.types.is_date(dtype.pyarrow_dtype):
                series = series.dt.floor("D")
            frame[name] = _as_text_objects(series).astype(dtype)
    return frame
