"""Category lists: checking declared (public) ones and discovering observed (private) ones.

Declared categories are public input and cost no privacy budget.  Observed
values are private: they enter the release only through the DP threshold of
length 1 (see :mod:`dpsynth.release.sds`).  A pandas categorical dtype's
category list usually comes from the data (``astype("category")``), so it
is public only when declared with ``categories="dtype"``.
"""

import pandas as pd

from ..schema import python_scalar
from ..utils._validation import is_missing_scalar

__all__ = ["check_categories", "discover_values", "observed_values", "value_list", "DTYPE"]

#: ``categories`` value that declares a categorical dtype's category list public.
DTYPE = "dtype"


def check_categories(categories, frame):
    """Declared category lists by column name, validated.

    Parameters
    ----------
    categories : "auto", "dtype", None, dict or list
        The encoder's parameter: a dict ``{column: values | "auto" |
        "dtype"}``, one list per column, ``"dtype"`` for every categorical
        column's dtype categories, or ``"auto"``/None (nothing declared).
    frame : DataFrame
        The table (its column names, and its dtypes for ``"dtype"``).

    Returns
    -------
    dict
        ``{column: [values]}`` of the declared columns only.
    """
    names = list(frame.columns)
    if categories is None or (isinstance(categories, str) and categories == "auto"):
        return {}
    if isinstance(categories, str) and categories == DTYPE:
        declared = {name: DTYPE for name in names
                    if isinstance(frame[name].dtype, pd.CategoricalDtype)}
    elif isinstance(categories, dict):
        unknown = [c for c in categories if c not in names]
        if unknown:
            raise ValueError(f"categories names column(s) {unknown} that are not in X; "
                             f"X has columns {names}.")
        declared = dict(categories)
    elif isinstance(categories, (list, tuple)):
        if len(categories) != len(names):
            raise ValueError(
                f"categories has {len(categories)} list(s) but X has {len(names)} "
                "columns; give one list per column or a dict by column name.")
        declared = dict(zip(names, categories))
    else:
        raise TypeError("categories must be 'auto', 'dtype', a dict {column: values} or a "
                        f"list of value lists; got {type(categories).__name__}.")
    checked = {}
    for name, values in declared.items():
        if isinstance(values, str) and values == "auto":
            continue
        if isinstance(values, str) and values == DTYPE:
            dtype = frame[name].dtype
            if not isinstance(dtype, pd.CategoricalDtype):
                raise ValueError(f"categories[{name!r}] is 'dtype' but column {name!r} has "
                                 f"dtype {dtype}, not a pandas categorical dtype.")
            values = list(dtype.categories)
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise TypeError(f"categories[{name!r}] must be a list of values; got {values!r}.")
        values = [python_scalar(v) for v in values]
        if any(is_missing_scalar(v) for v in values):
            raise ValueError(f"categories[{name!r}] contains a missing value; missing values "
                             "are handled by the `missing` parameter.")
        try:
            if len(set(values)) != len(values):
                raise ValueError(f"categories[{name!r}] has duplicate values.")
        except TypeError:
            raise TypeError(f"categories[{name!r}] contains unhashable values.") from None
        if not values:
            raise ValueError(f"categories[{name!r}] is empty.")
        checked[name] = values
    return checked


def _sorted(values):
    try:
        return sorted(values)
    except TypeError:
        return list(values)


def observed_values(series):
    """The distinct non-missing values of ``series`` (private), as Python scalars."""
    return [python_scalar(v) for v in pd.unique(series[~series.isna()])]


def value_list(name, dtype, observed, max_float_values):
    """The private value list of an undeclared column of ``dtype``, in code order.

    A categorical dtype's categories (in their order), else the ``observed``
    values (e.g. the union of :func:`observed_values` over partitions),
    sorted.  A float column with more than ``max_float_values`` distinct
    values is refused: it needs public bounds to be binned.
    """
    if isinstance(dtype, pd.CategoricalDtype):
        return [python_scalar(v) for v in dtype.categories]
    observed = list(dict.fromkeys(observed))
    if pd.api.types.is_float_dtype(dtype) and len(observed) > max_float_values:
        raise ValueError(
            f"Column {name!r} is a float column with more than max_float_values="
            f"{max_float_values} distinct values; dpsynth encodes every column as "
            "categorical, so bin it first with public bounds, e.g. "
            f"TableEncoder(bounds={{{name!r}: (low, high)}}) or "
            "dpsynth.preprocessing.DPKBinsDiscretizer, or declare its categories.")
    return _sorted(observed)


def discover_values(name, series, max_float_values):
    """The private value list of an undeclared column (see :func:`value_list`)."""
    dtype = series.dtype
    observed = [] if isinstance(dtype, pd.CategoricalDtype) else observed_values(series)
    return value_list(name, dtype, observed, max_float_values)
