"""Output dtypes: decoded values back into the dtype a column declared."""

import numpy as np
import pandas as pd

from ..schema import MISSING_MARKERS

__all__ = ["restore_dtype", "nullable_dtype"]


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
    if isinstance(dtype, pd.IntervalDtype) and has_missing \
            and np.dtype(dtype.subtype).kind in "iu":
        # an interval of integers cannot hold a missing cell: pandas' own fill
        # (``IntervalArray.take``) gives intervals of floats
        dtype = pd.IntervalDtype(np.float64, closed=dtype.closed)
    # pandas extension dtypes (Int64, boolean, Float64, datetime tz, ...)
    values = values.copy()
    values[mask] = None
    return pd.Series(pd.array(list(values), dtype=dtype))
