"""Output dtypes: decoded values back into the dtype a column declared."""

import numpy as np
import pandas as pd

from ..schema import MISSING_MARKERS

__all__ = ["restore_dtype", "nullable_dtype", "is_temporal", "temporal_numbers",
           "temporal_seconds", "temporal_array"]


def is_temporal(dtype):
    """Whether ``dtype`` holds instants or durations (``datetime64``, with or without a
    time zone, or ``timedelta64``): columns binned as numbers by ``numeric="auto"``."""
    return (pd.api.types.is_datetime64_any_dtype(dtype)
            or pd.api.types.is_timedelta64_dtype(dtype))


def temporal_numbers(values):
    """The instants or durations of ``values`` as float64 counts of their dtype's unit
    (instants since 1970-01-01 UTC, a public origin), NaN where missing.

    Binning reads numbers; the unit is the column's own, so that integer
    counts decode back to values of that dtype exactly.
    """
    array = pd.array(values) if not isinstance(values, pd.Series) else values.array
    out = np.asarray(array.asi8, dtype=np.float64)
    out[np.asarray(pd.isna(array), dtype=bool)] = np.nan
    return out


def temporal_unit(dtype):
    """The unit (``"ns"``, ``"us"``, ``"s"``, ...) of a temporal ``dtype``."""
    return np.datetime_data(dtype)[0] if isinstance(dtype, np.dtype) else dtype.unit


def temporal_seconds(values):
    """:func:`temporal_numbers` in seconds, so that columns of different units compare."""
    dtype = values.dtype
    return temporal_numbers(values) * (np.timedelta64(1, temporal_unit(dtype))
                                       / np.timedelta64(1, "s"))


def temporal_array(numbers, mask, dtype):
    """A pandas array of the temporal ``dtype`` from counts of its unit (``mask``: missing)."""
    unit = temporal_unit(dtype)
    counts = np.where(mask, 0, np.rint(numbers)).astype(np.int64)
    if pd.api.types.is_timedelta64_dtype(dtype):
        array = pd.array(counts.view(f"m8[{unit}]"))
    else:
        array = pd.array(counts.view(f"M8[{unit}]"))
        tz = getattr(dtype, "tz", None)
        if tz is not None:
            array = array.tz_localize("UTC").tz_convert(tz)
    array = array.copy()
    array[np.asarray(mask, dtype=bool)] = pd.NaT
    return array


def nullable_dtype(dtype):
    """The pandas nullable dtype of a NumPy int/uint/bool dtype (others unchanged).

    With ``missing="absent"`` any cell may come out empty, so such columns
    always decode to their nullable dtype: the output dtype is then fixed by
    the declaration, not by whether a sample happened to hold an empty cell.
    """
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return pd.api.types.pandas_dtype(
            f"{'UInt' if dtype.kind == 'u' else 'Int'}{dtype.itemsize * 8}")
    if isinstance(dtype, np.dtype) and dtype.kind == "b":
        return pd.BooleanDtype()
    return dtype


def restore_dtype(values, mask, column):
    """A Series of ``column``'s output dtype from decoded object values.

    Parameters
    ----------
    values : ndarray of object
        Decoded values (anything where ``mask`` is set).
    mask : ndarray of bool
        Missing cells.
    column : dpsynth.schema.Column

    Returns
    -------
    pandas.Series
        An integer or bool column that receives missing values becomes the
        matching pandas nullable dtype (``Int64``, ``boolean``).
    """
    dtype = column.output_dtype
    has_missing = bool(mask.any())
    if isinstance(dtype, pd.CategoricalDtype):
        return pd.Series(pd.Categorical(values, dtype=dtype))
    if isinstance(dtype, np.dtype):
        if dtype.kind in "iu":
            if not has_missing:
                return pd.Series(values.astype(dtype))
            nullable = f"{'UInt' if dtype.kind == 'u' else 'Int'}{dtype.itemsize * 8}"
            return pd.Series(pd.array(list(values), dtype=nullable))
        if dtype.kind == "b":
            if not has_missing:
                return pd.Series(values.astype(bool))
            return pd.Series(values, dtype="boolean")
        if dtype.kind == "f":
            values = values.copy()
            values[mask] = np.nan
            return pd.Series(values.astype(dtype))
        if dtype.kind in "mM":
            return pd.Series(pd.array(values, dtype=dtype))
        if dtype == object:
            values = values.copy()
            values[mask] = MISSING_MARKERS[column.missing_marker]
            return pd.Series(values, dtype=object)
    if isinstance(dtype, pd.StringDtype):
        values = values.copy()
        values[mask] = dtype.na_value
        return pd.Series(values, dtype=dtype)
    # pandas extension dtypes (Int64, boolean, Float64, datetime tz, ...)
    values = values.copy()
    values[mask] = None
    return pd.Series(pd.array(list(values), dtype=dtype))
