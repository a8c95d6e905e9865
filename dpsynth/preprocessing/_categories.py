"""Category lists: checking declared (public) ones and discovering observed (private) ones.

Declared categories are public input and cost no privacy budget.  Observed
values are private: they enter the release only through the DP threshold of
length 1 (see :mod:`dpsynth.release.sds`).  A pandas categorical dtype's
category list usually comes from the data (``astype("category")``), so it
is public only when declared with ``categories="dtype"``.
"""

import datetime
from decimal import Decimal
import math

import pandas as pd

from ..schema import python_scalar
from ..utils._validation import is_missing_scalar

__all__ = ["check_categories", "discover_values", "observed_values", "value_list",
           "canonical_value", "canonical_order", "dtype_declared", "DTYPE"]

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


def dtype_declared(categories, frame):
    """Names of the categorical columns whose dtype's category list is declared
    (``categories="dtype"``, or ``{column: "dtype"}``): their categories' dtype is
    public too."""
    if isinstance(categories, str) and categories == DTYPE:
        return {name for name in frame.columns
                if isinstance(frame[name].dtype, pd.CategoricalDtype)}
    if isinstance(categories, dict):
        return {name for name, values in categories.items()
                if isinstance(values, str) and values == DTYPE}
    return set()


# Fixed ranking of value types: a total order that does not depend on which
# types a column happens to hold (e.g. one tz-aware timestamp among naive ones).
_RANKS = {"bool": 0, "number": 1, "str": 2, "bytes": 3, "naive datetime": 4,
          "aware datetime": 5, "timedelta": 6, "date": 7, "interval": 8}
_UNITS = ("ns", "us", "ms", "s")


def _finest_unit(value):
    """A Timestamp/Timedelta in the finest unit that holds it (one unit per instant)."""
    for unit in _UNITS:
        try:
            return value.as_unit(unit)
        except (OverflowError, ValueError):  # out of that unit's range
            continue
    return value


def canonical_value(value, dtype=None):
    """The one spelling of ``value``'s equality class that a release may show.

    Equal values can be spelt differently (``-0.0`` and ``0.0``, ``1`` and
    ``1.0`` in an object column, one instant in two time zones); which
    spelling a column's first record used must not reach a release.  The
    rule depends on the value and the declared ``dtype`` only:

    - floats: ``-0.0`` becomes ``0.0``; outside float columns (object,
      categorical), a float equal to an integer becomes that ``int`` (ints
      stay ints whatever the other records hold);
    - ``decimal.Decimal`` (equal to the int or float of the same value): a
      whole number becomes that ``int``, a number a float holds exactly that
      ``float``, others the Decimal's normalized spelling (``1.10`` is ``1.1``);
      an infinite one the float ``inf``;
    - tz-aware timestamps: the zone of a ``datetime64[ns, tz]`` column, else
      UTC; naive ones stay naive (a naive and an aware timestamp are never
      equal);
    - timestamps and timedeltas: the finest unit that holds them;
    - numpy scalars and ``datetime.datetime``: the Python/pandas equivalent;
    - intervals (``pd.cut`` categories): their ends by these rules.
    """
    value = python_scalar(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        if (not pd.api.types.is_float_dtype(dtype) and math.isfinite(value)
                and value.is_integer()):
            return int(value)
        return 0.0 if value == 0.0 else value
    if isinstance(value, Decimal) and not value.is_nan():
        if value.is_infinite():
            return float(value)
        if value == value.to_integral_value():
            return int(value)
        number = float(value)
        if math.isfinite(number) and Decimal(number) == value:
            return number
        sign, digits, exponent = value.as_tuple()  # trailing zeros dropped, exactly
        while len(digits) > 1 and digits[-1] == 0:
            digits, exponent = digits[:-1], exponent + 1
        return Decimal((sign, digits, exponent))
    if isinstance(value, datetime.datetime):
        value = pd.Timestamp(value)
        if value.tzinfo is not None:
            zone = getattr(dtype, "tz", None)
            value = value.tz_convert(zone if zone is not None else "UTC")
        return _finest_unit(value)
    if isinstance(value, datetime.timedelta):
        return _finest_unit(pd.Timedelta(value))
    if isinstance(value, pd.Interval):  # its ends spelt as values of an object column
        return pd.Interval(canonical_value(value.left), canonical_value(value.right),
                           closed=value.closed)
    return value


def _rank(value):
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float, Decimal)):
        return "number"
    if isinstance(value, pd.Timestamp):
        return "naive datetime" if value.tzinfo is None else "aware datetime"
    if isinstance(value, pd.Timedelta):
        return "timedelta"
    if isinstance(value, str):
        return "str"
    if isinstance(value, bytes):
        return "bytes"
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return "date"
    if isinstance(value, pd.Interval):
        return "interval"
    return None


def canonical_order(values):
    """``values`` in a total order that is independent of record order.

    Sorted by (type rank, value) with the fixed ranking bool < number (int,
    float, Decimal) < str < bytes < naive datetime < aware datetime <
    timedelta < date < interval (by its ends) < others; other
    types (which no release file can hold) sort by type name and ``repr``.
    """
    ranked = {}
    for value in values:
        ranked.setdefault(_rank(value), []).append(value)
    out = []
    for rank in sorted(ranked, key=lambda r: _RANKS.get(r, len(_RANKS))):
        group = ranked[rank]
        if rank is None:
            group = sorted(group, key=lambda v: (type(v).__qualname__, repr(v)))
        elif rank == "interval":  # by their ends' kind, then their ends (no mixed compare)
            group = sorted(group, key=lambda v: (_RANKS.get(_rank(v.left), len(_RANKS)),
                                                 v.left, v.right, v.closed))
        else:
            group = sorted(group)
        out.extend(group)
    return out


def observed_values(series):
    """The distinct non-missing values of ``series`` (private), as Python scalars."""
    values = pd.unique(series)  # in order of appearance; then the missing ones dropped
    return [python_scalar(v) for v in values[~pd.isna(values)]]


def _canonical_list(values, dtype):
    """Distinct canonical values (see :func:`canonical_value`)."""
    return list(dict.fromkeys(canonical_value(v, dtype) for v in values))


def value_list(name, dtype, observed, max_float_values):
    """The private value list of an undeclared column of ``dtype``, in code order.

    The ``observed`` values (e.g. the union of :func:`observed_values` over
    partitions), or a categorical dtype's categories, in their canonical
    spelling (:func:`canonical_value`) and in :func:`canonical_order`: the
    list depends on the set of values only, never on which record came
    first or which spelling it used.  An *ordered* categorical keeps its
    dtype's order (the order between its values is declared by the dtype).
    A float column with more than ``max_float_values`` distinct values is
    refused: it needs public bounds to be binned.
    """
    if isinstance(dtype, pd.CategoricalDtype):
        # the categories' own dtype comes from the data (astype("category")):
        # spelt as in an object column
        values = _canonical_list(dtype.categories, None)
        return values if dtype.ordered else canonical_order(values)
    observed = _canonical_list(observed, dtype)
    if pd.api.types.is_float_dtype(dtype) and len(observed) > max_float_values:
        raise ValueError(
            f"Column {name!r} is a float column with more than max_float_values="
            f"{max_float_values} distinct values; dpsynth encodes every column as "
            "categorical, so bin it first with public bounds, e.g. "
            f"bounds={{{name!r}: (low, high)}} (a parameter of TableEncoder, "
            "PriViewSynthesizer and CALMSynthesizer) or "
            "dpsynth.preprocessing.DPKBinsDiscretizer, or declare its categories.")
    return canonical_order(observed)


def discover_values(name, series, max_float_values, distinct=None):
    """The private value list of an undeclared column (see :func:`value_list`).

    ``distinct``: the column's distinct non-missing values if already known
    (e.g. from :func:`pandas.factorize`), so that it is not read again.
    """
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        observed = []
    elif distinct is not None:
        observed = [python_scalar(v) for v in distinct]
    else:
        observed = observed_values(series)
    return value_list(name, dtype, observed, max_float_values)
