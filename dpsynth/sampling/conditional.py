"""Conditional sampling: records of the released model that satisfy a restriction.

A sampler fitted to :class:`~dpsynth.DPAggregates` is a model of the joint
distribution: the records it draws (a population fitted to the DP marginals)
are draws from that model.  Conditioning the model on an event (``race ==
"Black"``, ``30 <= age <= 40``, a public constraint such as ``start <=
end``) is therefore restricting it: draw records of the model, keep those in
the event and take ``n`` of them.  Everything here reads the aggregates and
the model's records only: post-processing, no privacy cost.

The event is a conjunction of *predicates*.  A predicate may prune codes
(cheap, on the code matrix) and then accept records on their codes and on
the numeric values decoded inside their bins (the model's in-bin draw), so a
numeric range keeps exactly the records whose drawn value lies inside it:
the in-bin values of the kept records are draws of the model's conditional
distribution, never clipped or shifted.  The records kept are drawn from
pools of bounded size (:func:`draw_restricted`): there is no unbounded
rejection loop, and an event the model gives (near-)zero mass is an error.
"""

from dataclasses import dataclass
from decimal import Decimal
import math
from numbers import Real

import numpy as np
import pandas as pd

from ..preprocessing._discretizer import _restore_numeric, decode_binning, encode_binning
from ..preprocessing._numeric import (binning_numbers, encode_text_binning, is_text_dtype,
                                      parse_numbers)
from ..preprocessing._dtypes import nullable_dtype
from ..utils._arrow import standard_columns
from ..utils._temporal import DATE_OBJECTS, is_temporal, numbers_of, object_date_cells

__all__ = ["ValueCondition", "RangeCondition", "parse_conditions", "draw_restricted",
           "encode_known", "value_codes"]

#: Largest first pool of model records (one population of the marginal-matching
#: sampler); :func:`fill_known` starts with at least this many.
MIN_POOL = 50_000

#: Rounds of pool draws; the pool of the last rounds is sized from the share
#: of matching records seen so far.
MAX_ROUNDS = 4


def _is_missing(value):
    try:
        return value is None or value is pd.NA or value is pd.NaT or bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _is_number(value):
    return isinstance(value, (Real, np.number)) and not isinstance(value, (bool, np.bool_))


def code_index(codes, n_values):
    """Codes with an empty cell (``-1``, ``missing="absent"``) mapped to ``n_values``,
    so a boolean array of ``n_values + 1`` entries indexes every cell."""
    codes = np.asarray(codes)
    return np.where(codes < 0, n_values, codes)


def _value_index(column):
    """The values a categorical column's codes stand for, positions = codes: its
    values, then its other label when it has an other code that decodes to one
    (synthetic data hold that label, so a condition or a known value may too)."""
    labels = list(column.values)
    if column.other and column.other_label is not None and column.other_label not in labels:
        labels.append(column.other_label)
    return pd.Index(labels, dtype=object)


def _available(column, has_missing):
    labels = list(_value_index(column))
    shown = labels[:20]
    more = "..." if len(labels) > 20 else ""
    missing = " and missing (None)" if has_missing else ""
    return f"{shown}{more}{missing}"


def _column_has_missing(schema, j):
    """Whether the model can hold a missing value in column ``j``."""
    if schema.missing == "absent":
        return True
    return bool(schema.possible_codes()[j][-1])


def value_codes(schema, j, values, *, what="condition"):
    """Codes of categorical ``values`` in column ``j`` (the missing value included).

    Raises
    ------
    ValueError
        For a value the release does not hold, naming it and the values
        available.
    """
    column = schema[j]
    n = int(schema.n_values[j])
    index = _value_index(column)
    has_missing = _column_has_missing(schema, j)
    codes = []
    for value in values:
        if _is_missing(value):
            if not has_missing:
                raise ValueError(f"The {what} on column {column.name!r} asks for a missing "
                                 f"value, which the release does not hold; available: "
                                 f"{_available(column, False)}.")
            codes.append(n if schema.missing == "absent" else n - 1)
            continue
        position = index.get_indexer(pd.Index([value], dtype=object))[0]
        if position < 0:
            raise ValueError(f"The {what} on column {column.name!r} asks for the value "
                             f"{value!r}, which the release does not hold; available: "
                             f"{_available(column, has_missing)}.")
        codes.append(int(position))
    return codes


@dataclass(frozen=True)
class ValueCondition:
    """Column ``column`` takes one of ``values`` (categorical, or exact numbers)."""

    column: str
    values: tuple

    def prepare(self, schema):
        j = schema.names.index(self.column)
        column = schema[j]
        n = int(schema.n_values[j])
        mask = np.zeros(n + 1, dtype=bool)
        if column.binning is None:
            mask[value_codes(schema, j, self.values)] = True
            return _Prepared(self, {j: mask}, numeric=())
        numbers = []
        for value in self.values:
            if _is_missing(value):
                mask[value_codes(schema, j, [None])] = True
                continue
            codes = column.binning.codes
            if isinstance(value, str) and value in codes:  # a text code, exactly
                mask[column.binning.n_numbers + codes.index(value)] = True
                continue
            value = date_number(column.binning, value, self.column, column.dtype)
            if not _is_number(value):
                raise ValueError(f"Column {self.column!r} is numeric (binned); a condition on "
                                 f"it takes numbers or a range (low, high); got {value!r}.")
            code = _exact_code(column.binning, float(value))
            if code < 0:
                raise ValueError(
                    f"The condition on column {self.column!r} asks for the value {value!r}, "
                    f"outside the released bins {list(column.values[:20])}.")
            mask[code] = True
            numbers.append(float(value))
        return _Prepared(self, {j: mask}, numeric=(j,), exact=(j, np.array(numbers)))


@dataclass(frozen=True)
class RangeCondition:
    """Numeric column ``column`` lies in ``[low, high]`` (``None``: unbounded)."""

    column: str
    low: float = None
    high: float = None

    def prepare(self, schema):
        j = schema.names.index(self.column)
        column = schema[j]
        if column.binning is None:
            raise ValueError(f"A range condition needs a numeric (binned) column; "
                             f"{self.column!r} is categorical: give a value or a list of "
                             f"values, one of {_available(column, False)}.")
        low = -np.inf if self.low is None else float(
            date_number(column.binning, self.low, self.column, column.dtype))
        high = np.inf if self.high is None else float(
            date_number(column.binning, self.high, self.column, column.dtype))
        if not low <= high:
            raise ValueError(f"The range of column {self.column!r} must have low <= high; "
                             f"got ({self.low!r}, {self.high!r}).")
        mask = overlapping_bins(schema, j, low, high)
        if not mask.any():
            raise ValueError(f"The range [{self.low}, {self.high}] of column {self.column!r} "
                             f"overlaps none of its released bins "
                             f"{list(column.values[:20])}.")
        return _Prepared(self, {j: mask}, numeric=(j,), bounds=(j, low, high))


def date_number(binning, value, name, dtype=None):
    """``value`` as the number a date column bins (a text in the column's date format,
    see :func:`~dpsynth.utils._temporal.parse_dates`), a column of numbers in a
    format (a text in that format, see :func:`~dpsynth.utils._numbers.parse_formatted`)
    or a ``datetime64``/``timedelta64`` column of ``dtype`` (an instant or duration, or
    its text, as counts of the column's unit: the numbers its bins hold), an
    ``object`` column of date or time objects (an object of its kind of
    :data:`~dpsynth.utils._temporal.DATE_OBJECTS`: a ``datetime.date``, a naive or
    an aware ``datetime``/``Timestamp``); a finite ``decimal.Decimal`` as the
    float it holds; any other value as it is."""
    if binning.date_format in DATE_OBJECTS and value is not None and not _is_number(value) \
            and not (isinstance(value, str) and value in binning.codes):
        kind = list(DATE_OBJECTS).index(binning.date_format)
        cell = object_date_cells(pd.Series([value], dtype=object))[0]
        if cell != kind:
            wanted = ("datetime.date objects", "naive datetime or Timestamp objects",
                      "time-zone-aware datetime or Timestamp objects")[kind]
            raise ValueError(f"Column {name!r} holds {wanted}; a condition on it takes such "
                             f"objects, a range of them or one of its codes "
                             f"{list(binning.codes)}; got a {type(value).__name__}.")
        return float(binning_numbers(pd.Series([value], dtype=object), binning)[0])
    if isinstance(value, Decimal) and value.is_finite():
        return float(value)
    if dtype is not None and is_temporal(dtype) and value is not None \
            and not _is_number(value):
        try:
            return float(numbers_of(pd.Series([value]).astype(dtype))[0])
        except (TypeError, ValueError):
            raise ValueError(f"Column {name!r} holds {dtype} values; a condition on it takes "
                             f"instants or durations of that kind (or their text); got a "
                             f"{type(value).__name__}.") from None
    if not isinstance(value, str) or (binning.number_format is None
                                      and binning.date_format is None):
        return value
    number = binning_numbers(pd.Series([value], dtype=object), binning)[0]
    if not np.isnan(number):
        return float(number)
    if binning.number_format is not None:
        raise ValueError(f"Column {name!r} holds numbers written as "
                         f"{binning.number_format!r}; a condition on it takes numbers, "
                         f"numbers in that format, a range of them or one of its codes "
                         f"{list(binning.codes)}; got {value!r}.")
    raise ValueError(f"Column {name!r} holds dates written as {binning.date_format!r}; "
                     f"a condition on it takes dates in that format, a range of them "
                     f"or one of its codes {list(binning.codes)}; got {value!r}.")


def _exact_code(binning, value):
    """Code of the bin holding the number ``value``, or -1 if no bin holds it."""
    if value in binning.points:
        return binning.n_intervals + binning.points.index(value)
    edges = binning.edge_array
    inside = (edges[0] <= value < edges[-1]) or (not binning.integer and value == edges[-1])
    if not inside:
        return -1
    return int(np.searchsorted(edges[1:-1], value, side="right"))


def overlapping_bins(schema, j, low, high):
    """Codes of column ``j`` (plus the empty cell) whose values can lie in ``[low, high]``."""
    column = schema[j]
    binning = column.binning
    n = int(schema.n_values[j])
    mask = np.zeros(n + 1, dtype=bool)
    edges = binning.edge_array
    lower, upper = edges[:-1], edges[1:]
    if binning.integer:  # [lower, upper - 1] of integers
        hit = (lower <= high) & (upper - 1 >= low)
    else:
        last = np.arange(lower.size) == lower.size - 1
        hit = (lower <= high) & ((upper > low) | (last & (upper >= low)))
    mask[:lower.size] = hit
    points = np.asarray(binning.points, dtype=np.float64)
    mask[lower.size:lower.size + points.size] = (points >= low) & (points <= high)
    return mask


@dataclass
class _Prepared:
    """A predicate resolved against a schema: code masks, then value checks."""

    source: object
    masks: dict
    numeric: tuple = ()
    bounds: tuple = None
    exact: tuple = None

    def accept(self, codes, values):
        """Boolean array: records (already inside ``masks``) that satisfy the predicate."""
        keep = np.ones(codes.shape[0], dtype=bool)
        if self.bounds is not None:
            j, low, high = self.bounds
            value, missing = values[j]
            keep &= ~missing & (value >= low) & (value <= high)
        if self.exact is not None:
            j, numbers = self.exact
            value, missing = values[j]
            keep &= missing | np.isin(value, numbers)
        return keep


def parse_conditions(conditions, schema):
    """``conditions`` (a dict ``{column: value | list | (low, high)}``) -> predicates.

    A tuple of two numbers (or ``None``; on a column of dates written as text,
    dates in its format) on a numeric (binned) column is a range ``[low,
    high]``; a list or set is any of its values; anything else is one value.  Raises ``ValueError`` naming the column or value that the
    release does not hold.
    """
    if conditions is None:
        return []
    if isinstance(conditions, pd.DataFrame) or not hasattr(conditions, "items"):
        raise TypeError("conditions must be a dict {column: value, list of values or "
                        f"(low, high) range}}; got {type(conditions).__name__}.")
    names = schema.names
    out = []
    for name, spec in conditions.items():
        if name not in names:
            raise ValueError(f"conditions names the column {name!r}, which is not in the "
                             f"release; its columns are {names}.")
        j = names.index(name)
        binned = schema[j].binning is not None
        if isinstance(spec, tuple) and binned:
            instants = is_temporal(schema[j].dtype)  # Timestamps, Timedeltas or their text
            dates = schema[j].binning.date_format is not None or instants
            written = dates or schema[j].binning.number_format is not None
            objects = schema[j].binning.date_format in DATE_OBJECTS  # date or time objects
            if len(spec) != 2 or not all(v is None or _is_number(v) or (written and isinstance(
                    v, str)) or (instants and not isinstance(v, (list, tuple, dict, set)))
                    or (objects and object_date_cells(pd.Series([v], dtype=object))[0] >= 0)
                    or isinstance(v, Decimal) for v in spec):
                raise ValueError(f"The range of column {name!r} must be (low, high) with "
                                 f"{'dates, ' if dates else ''}"
                                 f"{'texts in its format, ' if written and not dates else ''}"
                                 f"numbers or None; got {spec!r}.")
            out.append(RangeCondition(name, *spec))
            continue
        if isinstance(spec, (list, set, frozenset, np.ndarray, pd.Index, pd.Series, tuple)):
            values = tuple(spec)
            if not values:
                raise ValueError(f"The condition on column {name!r} lists no value.")
        else:
            values = (spec,)
        out.append(ValueCondition(name, values))
    return out


def _decode_values(schema, j, codes, rng):
    """Decoded numeric values of column ``j`` (int64 or float64) and the missing mask."""
    column = schema[j]
    # the numbers' codes (a text column's codes and other value: no number, as missing)
    mask = (codes < 0) | (codes >= column.binning.n_numbers)
    values = decode_binning(np.where(mask, 0, codes), column.binning, rng)
    return values, mask


def restore_column(schema, j, values, mask):
    """Decoded values of binned column ``j`` in its output dtype (as the encoder does)."""
    dtype = schema[j].dtype
    if schema.missing == "absent":
        dtype = nullable_dtype(dtype)
    return pd.Series(_restore_numeric(values, mask, dtype))


class RestrictedPool:
    """Matching model records gathered from bounded pools.

    Parameters
    ----------
    draw : callable ``(n, rng) -> codes``
        Draws ``n`` records of the model (codes, ``-1`` for empty cells).
    schema : Schema
    predicates : list of _Prepared
    """

    def __init__(self, draw, schema, predicates, extra_numeric=()):
        self.draw = draw
        self.schema = schema
        self.predicates = predicates
        self.numeric = sorted({j for p in predicates for j in p.numeric}
                              | set(extra_numeric))
        n_values = schema.n_values
        masks = {}
        for p in predicates:
            for j, mask in p.masks.items():
                masks[j] = masks[j] & mask if j in masks else mask.copy()
        self.masks = masks
        self.n_values = n_values
        self.codes = []
        self.values = {j: ([], []) for j in self.numeric}
        self.drawn = 0
        self.kept = 0

    def add(self, n, rng):
        """Draw ``n`` model records and keep those satisfying every predicate."""
        codes = np.asarray(self.draw(n, rng))
        self.drawn += codes.shape[0]
        keep = np.ones(codes.shape[0], dtype=bool)
        for j, mask in self.masks.items():
            keep &= mask[code_index(codes[:, j], self.n_values[j])]
        codes = codes[keep]
        values = {j: _decode_values(self.schema, j, codes[:, j], rng) for j in self.numeric}
        for p in self.predicates:  # e.g. in-bin values drawn again given an inequality
            if getattr(p, "redraw", None) is not None:
                p.redraw(codes, values, rng)
        keep = np.ones(codes.shape[0], dtype=bool)
        for p in self.predicates:
            keep &= p.accept(codes, values)
        self.codes.append(codes[keep])
        for j in self.numeric:
            self.values[j][0].append(values[j][0][keep])
            self.values[j][1].append(values[j][1][keep])
        self.kept += int(keep.sum())
        return int(keep.sum())

    def share(self):
        return self.kept / max(self.drawn, 1)

    def result(self):
        codes = np.concatenate(self.codes) if self.codes else np.zeros(
            (0, len(self.schema)), dtype=np.int32)
        values = {j: (np.concatenate(v), np.concatenate(m)) for j, (v, m) in self.values.items()}
        return codes, values


def _range_hint(schema, predicates):
    """A hint for an exact number asked of a column whose values are drawn inside
    intervals (not one of its point values): such a value is (almost) never drawn."""
    for p in predicates:
        if getattr(p, "exact", None) is None:
            continue
        j, numbers = p.exact
        binning = schema[j].binning
        inside = [v for v in numbers if v not in binning.points]
        if binning.integer or not inside:
            continue
        value = float(inside[0])
        code = _exact_code(binning, value)
        low, high = binning.edge_array[code], binning.edge_array[code + 1]
        return (f" Column {schema.names[j]!r} holds numbers drawn inside intervals, so an "
                f"exact value such as {value!r} is almost never drawn: ask for a range, "
                f"e.g. conditions={{{schema.names[j]!r}: ({low:g}, {high:g})}} (the "
                "released interval holding it).")
    return ""


def draw_restricted(draw, schema, predicates, n, rng, *, n_records, max_pool,
                    describe="the conditions"):
    """``n`` records of the model that satisfy every predicate.

    Pools of model records are drawn (at most :data:`MAX_ROUNDS` rounds, at
    most ``max_pool`` records in all; the first has ``20 n`` records, at
    least 10,000 and at most :data:`MIN_POOL`, the next are sized from the
    share of matching records seen), and ``n`` matching records are taken without replacement.  If the
    pools hold fewer than ``n``, the rest are drawn with replacement from
    them (every matching record is a draw of the model's conditional
    distribution; the statistics say how many were repeated).

    Parameters
    ----------
    draw : callable ``(n, rng) -> codes``
    schema : Schema
    predicates : list
        Prepared predicates (:func:`parse_conditions` then ``prepare``).
    n : int or None
        ``None``: the model's expected number of matching records among its
        ``n_records`` (the conditional sub-population).
    rng : numpy.random.Generator
    n_records : float
        Records the model describes (the DP record count).
    max_pool : int
        Most model records drawn in all.
    describe : str
        How errors name the restriction.

    Returns
    -------
    codes : ndarray of int32, shape (n, d)
    values : dict
        ``{column index: (values, missing mask)}`` of the numeric columns the
        predicates read (their decoded values must be kept).
    stats : dict
        ``pool_records``, ``matching_records``, ``matching_share``,
        ``repeated_records``.

    Raises
    ------
    ValueError
        If the model gives the restriction (near-)zero mass: no matching
        record, or fewer than one expected among its ``n_records``.
    """
    pool = RestrictedPool(draw, schema, predicates)
    wanted = n
    # enough for a condition holding for 1 record in 10 to fill n in one round
    first = MIN_POOL if n is None else max(min(MIN_POOL, 20 * n), 10_000)
    first = int(min(first, max_pool))
    pool.add(first, rng)
    for _ in range(MAX_ROUNDS - 1):
        share = pool.share()
        if share <= 0:
            break
        if wanted is None:
            wanted = max(int(round(share * n_records)), 1)
        missing = wanted - pool.kept
        room = max_pool - pool.drawn
        if missing <= 0 or room <= 0:
            break
        size = int(min(room, max(math.ceil(1.2 * missing / share) + 1000, 1000)))
        pool.add(size, rng)
    share = pool.share()
    expected = share * n_records
    if pool.kept == 0 or expected < 1.0:
        raise ValueError(
            f"{describe[0].upper()}{describe[1:]} have (near-)zero mass in the released model: "
            f"{pool.kept} of {pool.drawn} model records satisfy them (about "
            f"{expected:.2g} of its {n_records:.0f} records). Relax them, or ask for values "
            f"the release holds more of.{_range_hint(schema, predicates)}")
    if wanted is None:
        wanted = max(int(round(expected)), 1)
    codes, values = pool.result()
    have = codes.shape[0]
    if have >= wanted:
        chosen = rng.choice(have, size=wanted, replace=False)
        repeated = 0
    else:
        extra = rng.integers(0, have, size=wanted - have)
        chosen = rng.permutation(np.concatenate([np.arange(have), extra]))
        repeated = wanted - have
    stats = {"n_records": int(wanted), "pool_records": int(pool.drawn),
             "matching_records": int(have), "matching_share": float(share),
             "repeated_records": int(repeated)}
    return (codes[chosen].astype(np.int32),
            {j: (v[chosen], m[chosen]) for j, (v, m) in values.items()}, stats)


def encode_known(schema, frame):
    """Codes of the columns of ``frame`` (a subset of the schema's) under the schema.

    Binned columns take their bin (a value outside the bins of a column that
    clips goes to its end bin); categorical values must be among the
    released ones or the column's other label (its other code).  Returns ``{column index: codes}`` (``-1`` for an empty
    cell with ``missing="absent"``).
    """
    names = schema.names
    out = {}
    frame = standard_columns(frame)  # pyarrow text and temporal, period, sparse: as fit read
    for name in frame.columns:
        j = names.index(name)
        column = schema[j]
        series = frame[name]
        n = int(schema.n_values[j])
        missing_code = -1 if schema.missing == "absent" else n - 1
        if column.binning is not None and column.binning.is_text \
                and is_text_dtype(series.dtype):  # numbers and codes written as text
            codes = encode_text_binning(series, column.binning, name, missing_code)
            if (codes == missing_code).any() and not _column_has_missing(schema, j):
                raise ValueError(f"Column {name!r} of known has missing values, which the "
                                 "release does not hold.")
            out[j] = codes.astype(np.int64)
            continue
        if column.binning is not None:
            dtype = series.dtype
            if is_temporal(column.dtype) and is_temporal(dtype):  # in the column's unit
                numbers = numbers_of(series.astype(column.dtype))
            elif pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype):
                raise TypeError(f"Column {name!r} is numeric (binned) in the release; give "
                                f"numbers, not dtype {dtype}.")
            else:
                numbers = series.to_numpy(dtype=np.float64, na_value=np.nan)
            codes = encode_binning(numbers, column.binning, name)
            if (codes < 0).any() and not _column_has_missing(schema, j):
                raise ValueError(f"Column {name!r} of known has missing values, which the "
                                 "release does not hold.")
            codes[codes < 0] = missing_code
            out[j] = codes.astype(np.int64)
            continue
        missing = series.isna().to_numpy()
        index = _value_index(column)
        codes = index.get_indexer(pd.Index(series.astype(object).to_numpy(), dtype=object))
        unknown = (codes < 0) & ~missing
        if unknown.any():
            value = series[unknown].iloc[0]
            raise ValueError(f"Column {name!r} of known has the value {value!r}, which the "
                             f"release does not hold; available: "
                             f"{_available(column, _column_has_missing(schema, j))}.")
        if missing.any() and not _column_has_missing(schema, j):
            raise ValueError(f"Column {name!r} of known has missing values, which the "
                             "release does not hold.")
        codes[missing] = missing_code
        out[j] = codes.astype(np.int64)
    return out


def _row_groups(*matrices):
    """Group ids of the rows of several code matrices (same columns), jointly."""
    stacked = np.concatenate(matrices)
    _, inverse = np.unique(stacked, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    out, start = [], 0
    for m in matrices:
        out.append(inverse[start:start + m.shape[0]])
        start += m.shape[0]
    return out


def _describe_row(schema, columns, row):
    parts = []
    for j, code in zip(columns, row):
        column = schema[j]
        value = None  # the missing code
        if 0 <= code < len(column.values):
            value = column.values[code]
        elif column.other and code == len(column.values):
            value = column.other_label
        parts.append(f"{column.name}={value!r}")
    return ", ".join(parts)


def fill_known(draw, schema, predicates, known, rng, *, max_pool, n_records):
    """Codes of model records matching each row of ``known`` on its columns.

    Each known row gets a model record drawn among the pool records with the
    same codes in the known columns (without replacement while there are
    enough, then with replacement); pools are drawn in at most
    :data:`MAX_ROUNDS` rounds of at most ``max_pool`` records in all, sized
    from the rarest combination still short.  ``predicates`` (the
    constraints) restrict the pool records as in :func:`draw_restricted`.

    Returns
    -------
    codes : ndarray of int32, shape (len(known), d)
    values : dict
        Decoded values of the numeric columns the predicates read.
    stats : dict

    Raises
    ------
    ValueError
        If some known combination matches no model record (none among at
        least twice ``n_records`` model records, when the pools get there).
    """
    encoded = encode_known(schema, known)
    columns = sorted(encoded)
    # a predicate reading a known numeric column checks the known value, row by row
    row_predicates = [p for p in predicates if set(p.numeric) & set(columns)]
    predicates = [p for p in predicates if p not in row_predicates]
    row_numeric = sorted({j for p in row_predicates for j in p.numeric} - set(columns))
    n = len(known)
    d = len(schema)
    if n == 0:
        return np.zeros((0, d), dtype=np.int32), {
            j: (np.zeros(0), np.zeros(0, dtype=bool))
            for j in sorted({j for p in predicates for j in p.numeric})}, {
            "n_records": 0, "pool_records": 0, "matching_records": 0, "repeated_records": 0}
    wanted = np.stack([code_index(encoded[j], schema.n_values[j]) for j in columns], axis=1)
    groups, inverse = np.unique(wanted, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    need = np.bincount(inverse, minlength=groups.shape[0])
    pool = RestrictedPool(draw, schema, predicates, extra_numeric=row_numeric)
    have = np.zeros(groups.shape[0], dtype=np.int64)
    size = int(min(max(MIN_POOL, 2 * n), max_pool))
    for _ in range(MAX_ROUNDS):
        pool.add(size, rng)
        codes, _ = pool.result()
        keys = np.stack([code_index(codes[:, j], schema.n_values[j]) for j in columns], axis=1)
        pool_group, _ = _group_of(groups, keys)
        have = np.bincount(pool_group[pool_group >= 0], minlength=groups.shape[0])
        short = have < need
        # a combination none of twice the model's records has is (near-)zero mass
        short &= (have > 0) | (pool.drawn < 2 * n_records)
        room = max_pool - pool.drawn
        if not short.any() or room <= 0:
            break
        share = np.maximum(have[short], 0.5) / pool.drawn
        size = int(min(room, np.max(1.2 * (need[short] - have[short]) / share) + 1000))
    empty = np.flatnonzero(have == 0)
    if empty.size:
        raise ValueError(
            f"{empty.size} combination(s) of known values have zero mass in the released "
            f"model (none of {pool.drawn} model records has them), e.g. "
            f"{_describe_row(schema, columns, groups[empty[0]])}. Leave such rows out, or "
            "give fewer known columns.")
    codes, values = pool.result()
    keys = np.stack([code_index(codes[:, j], schema.n_values[j]) for j in columns], axis=1)
    pool_group, _ = _group_of(groups, keys)
    chosen = np.empty(n, dtype=np.int64)
    order = np.argsort(pool_group, kind="stable")
    starts = np.searchsorted(pool_group[order], np.arange(groups.shape[0]))
    repeated = 0
    rows_by_group = np.argsort(inverse, kind="stable")
    row_starts = np.searchsorted(inverse[rows_by_group], np.arange(groups.shape[0]))
    for g in range(groups.shape[0]):
        candidates = order[starts[g]:starts[g] + have[g]]
        rows = rows_by_group[row_starts[g]:row_starts[g] + need[g]]
        if have[g] >= need[g]:
            picked = rng.choice(candidates, size=need[g], replace=False)
        else:
            picked = np.concatenate([candidates, rng.choice(candidates,
                                                            size=need[g] - have[g])])
            picked = rng.permutation(picked)
            repeated += int(need[g] - have[g])
        chosen[rows] = picked
        if row_predicates:
            chosen[rows] = _redraw_for_rows(row_predicates, schema, known, rows, candidates,
                                            chosen[rows], codes, values, columns, rng)
    stats = {"n_records": int(n), "pool_records": int(pool.drawn),
             "matching_records": int(have.sum()), "repeated_records": int(repeated)}
    return (codes[chosen].astype(np.int32),
            {j: (v[chosen], m[chosen]) for j, (v, m) in values.items()}, stats)


def _group_of(groups, keys):
    """Index in ``groups`` (sorted unique rows) of every row of ``keys``, -1 if absent."""
    if keys.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), None
    ids = _row_groups(groups, keys)
    group_ids, key_ids = ids
    lookup = np.full(int(max(group_ids.max(), key_ids.max())) + 1, -1, dtype=np.int64)
    lookup[group_ids] = np.arange(groups.shape[0])
    return lookup[key_ids], None


#: Rounds of redraws of a row whose known values break a constraint with its
#: candidate, before all the candidates are checked for that row.
_ROW_REDRAWS = 8


def _redraw_for_rows(predicates, schema, known, rows, candidates, picked, codes, values,
                     columns, rng):
    """Pool records for ``rows`` that satisfy ``predicates`` with the rows' known values.

    A row keeps a candidate drawn uniformly among those satisfying the
    predicates with its own known values (rejection with a bounded number of
    redraws, then an exact scan of the candidates for the rows left), which
    is the model's conditional distribution given the row and the rules.
    """
    known_values = {}
    for j in columns:
        name = schema[j].name
        if schema[j].binning is not None:
            cells = known[name].iloc[rows]
            v = (binning_numbers(cells, schema[j].binning)
                 if schema[j].binning.is_text and is_text_dtype(cells.dtype)
                 else parse_numbers(cells) if is_text_dtype(cells.dtype)
                 else cells.to_numpy(dtype=np.float64, na_value=np.nan))
            known_values[j] = (v, np.isnan(v))

    def accept(records, row_index):
        vals = {j: (v[records], m[records]) for j, (v, m) in values.items()}
        for j, (v, m) in known_values.items():
            vals[j] = (v[row_index], m[row_index])
        ok = np.ones(records.size, dtype=bool)
        for p in predicates:
            ok &= p.accept(codes[records], vals)
        return ok

    picked = picked.copy()
    todo = np.flatnonzero(~accept(picked, np.arange(rows.size)))
    for _ in range(_ROW_REDRAWS):
        if not todo.size:
            return picked
        picked[todo] = rng.choice(candidates, size=todo.size)
        todo = todo[~accept(picked[todo], todo)]
    for i in todo:  # the rest: uniform among the candidates that satisfy the rules
        ok = candidates[accept(candidates, np.full(candidates.size, i))]
        if not ok.size:
            row = known.iloc[rows[i]]
            raise ValueError(
                f"The known values {row.to_dict()} with the constraints have zero mass in "
                f"the released model (none of its {candidates.size} records with these "
                "known values satisfies them).")
        picked[i] = rng.choice(ok)
    return picked
