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

__all__ = ["check_table", "check_target", "column_labels", "is_missing_scalar", "label_name",
           "named_keys", "quoted_names", "value_kind"]


def quoted_names(names, limit=10):
    """``'a', 'b', ...``: the first ``limit`` of ``names`` quoted, for a message naming
    columns (an ellipsis when there are more)."""
    names = list(names)
    return ", ".join(map(repr, names[:limit])) + (", ..." if len(names) > limit else "")


def label_name(label):
    """The column name dpsynth gives a column label: the label itself for a string,
    its text for a number (``0`` -> ``"0"``, ``1.5`` -> ``"1.5"``); ``None`` for a label
    it does not take (a tuple of a MultiIndex, a bool, a timestamp, NaN).

    Column labels are the user's declaration (public); a number is kept as the
    label of its text name, so that outputs give the same labels back.
    """
    if isinstance(label, str):
        return label
    if isinstance(label, (bool, np.bool_)):
        return None
    if isinstance(label, (int, np.integer)):
        return str(int(label))
    if isinstance(label, (float, np.floating)) and np.isfinite(label):
        return str(float(label))
    return None


def column_labels(X):
    """``{name: label}`` of the columns of DataFrame ``X`` whose labels are numbers
    (see :func:`label_name`); empty for string labels and for anything else."""
    if not isinstance(X, pd.DataFrame) or isinstance(X.columns, pd.MultiIndex):
        return {}
    out = {}
    for label in X.columns:
        if not isinstance(label, str):
            name = label_name(label)
            if name is not None:
                out[name] = label.item() if isinstance(label, np.generic) else label
    return out


def named_keys(value, labels):
    """A column-keyed declaration (a dict's keys, a list's entries) with the number
    labels in ``labels`` (``{name: label}``) replaced by their names; anything else
    as it is."""
    if not labels:
        return value
    names = {label: name for name, label in labels.items()}

    def key(k):
        return k if isinstance(k, str) or isinstance(k, (bool, np.bool_)) else names.get(
            k, k) if isinstance(k, Hashable) else k

    if isinstance(value, dict):
        return {key(k): v for k, v in value.items()}
    if isinstance(value, (list, tuple)) and all(
            isinstance(k, (str, int, float, np.integer, np.floating)) for k in value):
        return type(value)(key(k) for k in value)
    return value


def _named_columns(frame, name):
    """``frame`` with its number labels replaced by their names (a shallow copy: the
    caller's frame keeps its labels); labels it cannot take raise ``TypeError``."""
    columns = frame.columns
    if isinstance(columns, pd.MultiIndex):
        raise TypeError(
            f"{name} has MultiIndex columns (levels {columns.nlevels}); dpsynth needs one "
            "name per column: join the levels, e.g. X.columns = ['_'.join(map(str, c)) "
            "for c in X.columns].")
    if all(isinstance(c, str) for c in columns):
        return frame
    if columns.has_duplicates:
        raise ValueError(
            f"{name} has duplicate column names {list(columns[columns.duplicated()])[:6]}; "
            "give every column a unique name.")
    names = []
    for position, label in enumerate(columns):
        text = label_name(label)
        if text is None:
            raise TypeError(
                f"Column labels of {name} must be strings or numbers; got "
                f"{type(label).__name__} {label!r:.60} (position {position}). Rename "
                "them, e.g. X.columns = X.columns.astype(str).")
        names.append(text)
    clashes = [c for c, n in zip(columns, names)
               if len({repr(d) for d, m in zip(columns, names) if m == n}) > 1]
    if clashes:  # 0 and "0": distinct labels, one name
        raise ValueError(
            f"{name} has column labels that read the same, {clashes[:6]!r}: a number "
            "label is named by its text; give every column a unique name.")
    shallow = frame.copy(deep=False)  # the caller's frame keeps its labels
    shallow.columns = names
    return shallow


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
        The table. A numpy array gets the column names ``x0, x1, ...``; a
        DataFrame's number labels are named by their text (``0`` -> ``"0"``,
        see :func:`column_labels` for the labels).
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
        Column labels that are neither strings nor numbers (MultiIndex,
        timestamps), unhashable cells, mixed-type object columns.
    """
    frame, was_dataframe = _to_frame(X, name, copy)
    frame = _named_columns(frame, name)  # 0 -> "0": see column_labels
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
