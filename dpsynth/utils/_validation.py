"""Input validation shared by every dpsynth estimator.

The synthesizers take heterogeneous tables, so the usual
``sklearn.utils.check_array`` (one dtype for the whole matrix) does not fit.
:func:`check_table` turns a DataFrame or a 2-D array-like into a validated
DataFrame *copy* and raises a clear ``ValueError``/``TypeError`` that names the
offending column for every problem it finds.
"""

import warnings
from collections.abc import Hashable

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.validation import column_or_1d

from .._core import _counting
from ._arrow import standard_columns

__all__ = ["check_table", "check_target", "is_missing_scalar", "value_kind"]


def is_missing_scalar(value):
    """Return True for the scalars dpsynth treats as missing (None, NaN, pd.NA, NaT)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, (float, np.floating)):
        return bool(np.isnan(value))
    if isinstance(value, (np.datetime64, np.timedelta64)):
        return bool(np.isnat(value))
    return False


def value_kind(value):
    """Coarse type of a non-missing scalar, used to detect mixed-type columns."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, np.integer)):
        return "number"
    if isinstance(value, (float, np.floating)):
        return "number"
    if isinstance(value, str):
        return "str"
    if isinstance(value, bytes):
        return "bytes"
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return "datetime"
    if isinstance(value, (pd.Timedelta, np.timedelta64)):
        return "timedelta"
    return type(value).__name__


# pandas' C-level type inference: object columns of one scalar kind pass at once
_HOMOGENEOUS = {"string", "integer", "floating", "mixed-integer-float", "boolean",
                "datetime", "datetime64", "date", "timedelta", "timedelta64", "bytes",
                "decimal", "empty"}


def distinct_objects(series, return_codes=True):
    """The distinct objects of an ``object`` Series by identity: ``(first, codes)`` as
    :func:`dpsynth._core._counting.distinct_objects` returns them, or None (another
    dtype, or more distinct objects than half the cells: then reading every cell
    costs about as much)."""
    if series.dtype != object or len(series) < 2:
        return None
    cells = np.ascontiguousarray(series.to_numpy(dtype=object, copy=False))
    return _counting.distinct_objects(cells, len(cells) // 2, return_codes)


def factorize(series):
    """``pandas.factorize(series, use_na_sentinel=True)``: the same codes and uniques.

    An ``object`` column whose cells share few objects (a Parquet reader, a
    categorical's values) is hashed by address first and only its distinct
    objects are compared as values, which costs a fraction of hashing every
    string; equal values stored as different objects are merged there.
    """
    found = distinct_objects(series)
    if found is None:
        return pd.factorize(series, use_na_sentinel=True)
    first, codes = found
    inner, uniques = pd.factorize(pd.Series(series.to_numpy(dtype=object, copy=False)[first],
                                            dtype=object), use_na_sentinel=True)
    return inner.take(codes), uniques


def by_distinct_text(series, apply, missing):
    """``apply(fields, weights)`` computed once per distinct field of a text column.

    When every present field is a ``str``, ``apply`` gets the distinct fields
    (an object Series) and the records holding each, and its result is spread
    back to the cells, ``missing`` where a cell is missing; otherwise (mixed
    types: ``True`` and ``1`` are one value to a hash table) it gets the column
    and ``weights=None``.  Long columns of few texts then cost one hashing pass.
    """
    if pd.api.types.infer_dtype(series, skipna=True) not in ("string", "empty"):
        return apply(series, None)
    codes, uniques = factorize(series)
    present = codes >= 0
    distinct = pd.Series(np.asarray(uniques, dtype=object), dtype=object)
    out = apply(distinct, np.bincount(codes[present], minlength=len(distinct)))
    return np.append(out, missing)[codes]


def _check_object_column(name, series):
    """Reject unhashable cells in an object column.

    Value types may mix (numbers and words, as spreadsheets export them):
    each distinct value is a category of its own, ``7`` apart from ``"7"``,
    in a type-ranked order that no record chooses (see
    :func:`~dpsynth.preprocessing._categories.canonical_order`); refusing
    them would make one record's type decide whether a release is made.
    """
    found = distinct_objects(series, return_codes=False)
    if found is not None:  # the same objects, each read once
        series = pd.Series(series.to_numpy(dtype=object, copy=False)[found[0]], dtype=object)
    if pd.api.types.infer_dtype(series, skipna=True) in _HOMOGENEOUS:
        return
    for value in series:
        if not is_missing_scalar(value) and not isinstance(value, Hashable):
            raise TypeError(
                f"Column {name!r} contains an unhashable value of type "
                f"{type(value).__name__}; every cell must be a "
                "scalar (str, number, bool, date) or missing."  # no value: it is private
            )


def _as_array(data):
    """An array of ``data``: a Python list or tuple, which declares no dtype,
    becomes an object array (its values kept as they are); anything else keeps
    its own dtype.

    ``np.asarray`` would infer the dtype from the values (one ``2.5`` makes a
    column of ints float, one ``None`` makes it object, one number among
    strings turns every number into text): a dtype chosen by a record.
    """
    if isinstance(data, (list, tuple)):
        return np.array(data, dtype=object)
    return np.asarray(data)


def check_target(y, n_rows=None):
    """``y`` as a Series: a Series as it is, other array-likes 1-D (see :func:`_as_array`).

    A list or tuple becomes an ``object`` Series: its dtype would otherwise be
    inferred from its values.  Give a Series or an array of the dtype you
    declare (e.g. ``np.asarray(y, dtype=np.int64)``) to keep another.  A one-column
    DataFrame (``df[["label"]]``) is its column, with its name and dtype (a category
    or nullable dtype turned into ``object`` through NumPy), after scikit-learn's
    ``DataConversionWarning`` for a column-vector ``y``.
    """
    if isinstance(y, pd.DataFrame) and y.shape[1] == 1:
        warnings.warn("A column-vector y was passed when a 1d array was expected: its "
                      "single column is used. Pass y as a Series, e.g. df['label'].",
                      DataConversionWarning, stacklevel=3)
        y = y.iloc[:, 0]
    if isinstance(y, pd.Series):
        target = y
    else:
        values = column_or_1d(_as_array(y), warn=True)
        # an object array stays object: pandas would infer ``str`` from its values
        target = pd.Series(values, dtype=object if values.dtype == object else None)
    if n_rows is not None and len(target) != n_rows:
        raise ValueError(f"y must be 1-D with one value per row of X ({n_rows}); got "
                         f"shape {np.shape(y)}.")
    return target


def _to_frame(X, name, copy=True):
    if isinstance(X, pd.DataFrame):
        return (X.copy() if copy else X), True
    if isinstance(X, pd.Series):
        raise ValueError(
            f"{name} must be 2-D (a DataFrame or array of shape (n_samples, "
            "n_features)); got a Series. Use X.to_frame() for one column."
        )
    if sparse.issparse(X):
        raise TypeError(f"{name} is a sparse matrix; dpsynth needs dense data: convert it "
                        "with X.toarray() (categorical tables are rarely sparse).")
    if hasattr(X, "__array__") or isinstance(X, (list, tuple)):
        try:
            array = _as_array(X)
        except ValueError as exc:  # ragged nested sequences
            raise ValueError(
                f"{name} is ragged: its rows have different lengths ({exc}). "
                "Give a rectangular table."
            ) from None
        if array.dtype == object and array.ndim == 1 and len(array) and all(
            isinstance(row, (list, tuple, np.ndarray)) for row in array
        ):
            raise ValueError(
                f"{name} is ragged: its rows have different lengths. Give a "
                "rectangular table."
            )
        if array.ndim != 2:
            raise ValueError(
                f"{name} must be 2-D of shape (n_samples, n_features); got an "
                f"array with {array.ndim} dimension(s). Reshape your data, e.g. "
                "X.reshape(-1, 1) for a single feature."
            )
        if np.iscomplexobj(array):
            raise ValueError(f"Complex data not supported in {name}.")
        columns = [f"x{j}" for j in range(array.shape[1])]
        # an object array stays object: pandas would infer ``str`` from its values
        dtype = object if array.dtype == object else None
        return pd.DataFrame(array, columns=columns, dtype=dtype).copy(), False
    raise TypeError(
        f"{name} must be a pandas DataFrame or a 2-D array-like; got "
        f"{type(X).__name__}."
    )


def check_table(X, *, name="X", copy=True):
    """Validate a table and return ``(frame, was_dataframe)``.

    Parameters
    ----------
    X : DataFrame or array-like of shape (n_samples, n_features)
        The table. A numpy array gets the column names ``x0, x1, ...``.
    name : str, default="X"
        Name used in error messages.
    copy : bool, default=True
        ``False``: a DataFrame comes back as it is (for callers that only
        read it: a deep copy of a large table costs its memory again).

    Returns
    -------
    frame : DataFrame
        A copy of the input (the caller's object is never modified), or the
        input DataFrame itself with ``copy=False``.
    was_dataframe : bool
        Whether the input was a DataFrame (outputs mirror the input type).

    Raises
    ------
    ValueError
        Empty table, no column, duplicate column names, ragged or non-2-D input.
    TypeError
        Non-string column names, unhashable cells, mixed-type object columns.
    """
    frame, was_dataframe = _to_frame(X, name, copy)
    frame = standard_columns(frame)  # pyarrow text and temporal columns as pandas reads them
    n_rows, n_cols = frame.shape
    if n_cols == 0:
        raise ValueError(
            f"{name} has 0 feature(s) (shape={frame.shape}) while a minimum of 1 is required."
        )
    if n_rows == 0:
        raise ValueError(
            f"{name} has 0 sample(s) (shape={frame.shape}) while a minimum of 1 is required."
        )
    names = list(frame.columns)
    bad = [c for c in names if not isinstance(c, str)]
    if bad:
        raise TypeError(
            f"Column names of {name} must all be strings; got {bad[:5]!r}. "
            "Rename them, e.g. X.columns = X.columns.astype(str)."
        )
    if "" in names:
        raise ValueError(
            f"{name} has a column with an empty name (position {names.index('')}); give "
            "every column a name, e.g. X = X.rename(columns={'': 'unnamed'})."
        )
    duplicated = sorted({c for c in names if names.count(c) > 1})
    if duplicated:
        raise ValueError(
            f"{name} has duplicate column names {duplicated}; give every column "
            "a unique name."
        )
    for column in names:
        series = frame[column]
        if pd.api.types.is_complex_dtype(series.dtype):
            raise ValueError(f"Complex data not supported (column {column!r}).")
        if series.dtype == object:
            _check_object_column(column, series)
    return frame, was_dataframe
