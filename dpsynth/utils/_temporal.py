"""Instants and durations as numbers: how binning reads and writes ``datetime64`` /
``timedelta64`` columns (whole numbers of the column's own unit)."""

import numpy as np
import pandas as pd

__all__ = ["is_temporal", "numbers_of", "temporal_numbers", "temporal_seconds", "temporal_array"]


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


def numbers_of(series):
    """The float64 values binning reads from a numeric or temporal column (NaN where
    missing): instants and durations as :func:`temporal_numbers`."""
    if is_temporal(series.dtype):
        return temporal_numbers(series)
    return series.to_numpy(dtype=np.float64, na_value=np.nan)
