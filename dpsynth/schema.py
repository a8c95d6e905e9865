"""The public schema: every fact about a table's columns that a release may contain.

A :class:`Schema` is an immutable list of :class:`Column` objects, each with
its name, kind (categorical or binned numeric), output dtype, public values
in code order, missing-value marker and, for binned columns, the bin edges.
It is the only description of the columns that a release writes
(:class:`~dpsynth.DPAggregates`), and the one the samplers, the decoder and
the metrics read.

Where the facts come from (the privacy boundary, see ``doc/privacy.rst``):

- **declared** by the user: column names and dtypes (the input frame's
  dtypes, or a declaration file), ``categories=``, ``bounds=``, bin edges;
- **released** by an accounted DP mechanism: category values that survived
  the DP threshold of length 1, DP quantile bin edges;
- nothing else.  A fitted :class:`~dpsynth.preprocessing.TableEncoder` holds
  a *private* schema (with every observed value); :meth:`Schema.restrict`
  keeps the declared and released values only, which is what a release
  publishes.

Attributes: a (column, code) pair is one *attribute* with the integer id
``offsets[j] + code``.  A column's codes are its values, then its *other*
code if it has one (:attr:`Column.other`: the values a DP release did not
publish), then, with ``missing="category"``, its missing value (always the
last code).
"""

from dataclasses import dataclass, field, replace
import datetime
from decimal import Decimal, InvalidOperation
import math

import numpy as np
import pandas as pd

from .utils._numbers import NUMBER_FORMATS
from .utils._temporal import DATE_FORMATS, DATE_OBJECTS
from .utils._validation import label_name

__all__ = ["Binning", "Column", "Schema", "MISSING_MARKERS"]

#: Names of the missing-value markers a column can decode to.
MISSING_MARKERS = {"none": None, "nan": np.nan, "na": pd.NA, "nat": pd.NaT}

#: The default label of a text column's other value (values not released).
DEFAULT_OTHER_LABEL = "<other>"

_FORMAT_VERSION = 3  # 3: the other value ("other", "other_label")


# ------------------------------------------------------------------ values
def python_scalar(value):
    """numpy scalar -> the equivalent Python scalar (JSON-friendly)."""
    if isinstance(value, np.datetime64):
        return pd.Timestamp(value)
    if isinstance(value, np.timedelta64):
        return pd.Timedelta(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


_CLOSED = ("right", "left", "both", "neither")


def value_to_json(value, column=None):
    """A public category value as JSON (datetimes, timedeltas, dates, Decimals,
    intervals, inf/nan tagged)."""
    if isinstance(value, pd.Interval):  # a category of pd.cut / pd.qcut
        return {"interval": [value_to_json(value.left, column),
                             value_to_json(value.right, column), value.closed]}
    if isinstance(value, (pd.Timestamp, np.datetime64, datetime.datetime)):
        return {"datetime": pd.Timestamp(value).isoformat()}
    if isinstance(value, datetime.date):  # a date object (not a datetime)
        return {"date": value.isoformat()}
    if isinstance(value, Decimal) and not value.is_nan():
        return {"decimal": str(value)}
    if isinstance(value, (pd.Timedelta, np.timedelta64)):
        return {"timedelta": pd.Timedelta(value).isoformat()}
    if isinstance(value, float) and not math.isfinite(value):
        return {"float": repr(value)}
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63:
        return {"int": str(value)}
    if isinstance(value, (str, bool, int, float)):
        return value
    where = f" of column {column!r}" if column is not None else ""
    # the message names the type, not the value: it may be a private value (before DP)
    raise TypeError(
        f"A value of type {type(value).__name__}{where} cannot be written to a release "
        "file: give the column as str, number, bool, date, datetime, timedelta or "
        "interval.")


def value_from_json(value):
    """Inverse of :func:`value_to_json`."""
    if isinstance(value, dict):
        if len(value) == 1:
            (tag, text), = value.items()
            if tag == "interval" and isinstance(text, list) and len(text) == 3 \
                    and text[2] in _CLOSED:
                left, right = value_from_json(text[0]), value_from_json(text[1])
                try:
                    return pd.Interval(left, right, closed=text[2])
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"bad interval {text!r:.80}: {exc}") from None
            if isinstance(text, str):
                if tag == "datetime":
                    return pd.Timestamp(text)
                if tag == "timedelta":
                    return pd.Timedelta(text)
                if tag == "float":
                    number = float(text)
                    if math.isfinite(number):
                        raise ValueError(f"tagged float {text!r} must be inf or nan")
                    return number
                if tag == "int":
                    return int(text)
                if tag == "date":
                    return datetime.date.fromisoformat(text)
                if tag == "decimal":
                    try:
                        number = Decimal(text)
                    except InvalidOperation:
                        raise ValueError(f"bad decimal {text!r:.80}") from None
                    if number.is_nan():
                        raise ValueError(f"tagged decimal {text!r:.80} must not be NaN")
                    return number
        raise ValueError(f"unknown value encoding {value!r:.80}")
    if isinstance(value, (str, bool, int, float)):
        return value
    raise ValueError(f"bad category value {value!r:.80}")


# ------------------------------------------------------------------ dtypes
def dtype_to_json(dtype):
    """An output dtype as JSON.

    A categorical dtype is written *without* its category list: a dtype's
    categories usually come from the data (``astype("category")``), so only
    the column's public values become its categories when decoding.
    """
    if isinstance(dtype, pd.CategoricalDtype):
        categories = dtype.categories
        sub = "object" if categories is None else str(categories.dtype)
        return {"kind": "category", "categories_dtype": sub, "ordered": bool(dtype.ordered)}
    spec = {"kind": "plain", "name": str(dtype)}
    if isinstance(dtype, pd.StringDtype) and _string_storage(str(dtype)) != dtype.storage:
        # "string" names both storages: the one this pandas would not read it as
        spec["storage"] = dtype.storage
    return spec


def _string_storage(name):
    """The storage pandas gives the string dtype ``name`` (``"string"``, ``"str"``)."""
    try:
        return pd.api.types.pandas_dtype(name).storage
    except (TypeError, ImportError, AttributeError):
        return None


def dtype_from_json(spec):
    """Inverse of :func:`dtype_to_json` (a categorical dtype has no categories yet)."""
    if not isinstance(spec, dict) or "kind" not in spec:
        raise ValueError(f"bad dtype {spec!r:.80}")
    if spec["kind"] == "category":
        ordered = spec.get("ordered", False)
        if not isinstance(ordered, bool):
            raise ValueError("dtype 'ordered' must be true or false")
        return pd.CategoricalDtype(ordered=ordered)
    if spec["kind"] == "plain" and isinstance(spec.get("name"), str):
        try:
            dtype = pd.api.types.pandas_dtype(spec["name"])
        except TypeError as exc:
            raise ValueError(f"unknown dtype {spec['name']!r}: {exc}") from None
        if isinstance(dtype, np.dtype) and dtype.kind in "USV":
            dtype = np.dtype(object)  # a text dtype spelt differently by another pandas
        storage = spec.get("storage")
        if storage is not None:
            if storage not in ("python", "pyarrow"):
                raise ValueError(f"bad storage {storage!r:.40} of dtype {spec['name']!r:.40}")
            try:  # (a pandas without this string dtype read it as object, above)
                if isinstance(dtype, pd.StringDtype):
                    dtype = pd.StringDtype(storage, na_value=dtype.na_value)
            except ImportError:  # pyarrow storage without pyarrow: the default one
                pass
        return dtype
    raise ValueError(f"unknown dtype {spec!r:.80}")


def categories_dtype(dtype):
    """The dtype of a categorical column's categories, as recorded in its schema."""
    categories = getattr(dtype, "categories", None)
    return None if categories is None else categories.dtype


def can_hold_missing(dtype):
    """Whether a column of ``dtype`` can hold a missing value (numpy int/bool cannot)."""
    return not (isinstance(dtype, np.dtype) and dtype.kind in "iub")


def default_missing_marker(dtype):
    """The missing marker a dtype implies: fixed by the dtype, never by the data.

    Object columns decode missing cells as ``NaN`` (pandas' own marker for
    object arrays read from files); ``string``/``str`` columns use their
    dtype's ``na_value``; nullable dtypes ``pd.NA``; datetimes ``NaT``.
    """
    if isinstance(dtype, pd.StringDtype):
        return "na" if dtype.na_value is pd.NA else "nan"
    if isinstance(dtype, np.dtype):
        return "nat" if dtype.kind in "mM" else "nan"
    if isinstance(dtype, pd.DatetimeTZDtype):
        return "nat"
    if isinstance(dtype, pd.CategoricalDtype):
        return "nan"
    return "na"


# ------------------------------------------------------------------ binning
def integer_room(lower, upper, points):
    """Integers of each ``[lower_i, upper_i)`` that are no point value (``points``:
    the point values, any order)."""
    points = np.sort(np.asarray(points, dtype=np.float64))
    inside = np.searchsorted(points, upper, "left") - np.searchsorted(points, lower, "left")
    return (upper - lower) - inside


def bin_labels(edges, integer):
    """Readable bin names: ``"[0, 12]"`` (integer bins list their first and
    last value), ``"[0, 2.5)"`` and a closed last float bin ``"[7.5, 10]"``."""
    labels = []
    last = len(edges) - 2
    for k in range(last + 1):
        low, high = edges[k], edges[k + 1]
        if integer:
            labels.append(f"[{_format_edge(low)}, {_format_edge(high - 1)}]")
        else:
            close = "]" if k == last else ")"
            labels.append(f"[{_format_edge(low)}, {_format_edge(high)}{close}")
    return labels


def _format_edge(value):
    """12 significant digits: exact for public and rounded DP edges, and hides
    floating-point noise such as ``6622.349999999999``."""
    value = float(value)
    return str(int(value)) if value.is_integer() else f"{value:.12g}"


_INVERSES = ("uniform", "midpoint", "dp_histogram")


def point_label(value):
    """Label of the bin of one exact value: ``"=0"``, ``"=40"``, ``"=2.5"``."""
    return "=" + _format_edge(value)


def other_code_label(label):
    """Label of the other code of a text column holding numbers (its other label,
    or :data:`DEFAULT_OTHER_LABEL` when it decodes as missing)."""
    return DEFAULT_OTHER_LABEL if label is None else label


@dataclass(frozen=True)
class Binning:
    """Public bins of a numeric column (declared edges, or DP quantiles paid for).

    Codes ``0 .. len(edges) - 2`` are the intervals between the edges; the
    next codes are *point bins*, one per exact value: first the declared
    ``special`` values, then the ``frequent`` values released by DP.  A
    value equal to a point value is encoded to its point bin (even outside
    the edges) and decodes to exactly that value; the intervals never
    decode to a point value of an integer column.

    Attributes
    ----------
    edges : tuple of float
        Increasing bin edges (integer columns: half-open integer bins).
    integer : bool
        Whether the column holds integers.
    inverse : {"uniform", "midpoint", "dp_histogram"}
        How an interval code is decoded: a uniform draw inside the bin, its
        midpoint, or a draw from the DP sub-bin histogram ``within``.
    clip : bool
        Whether values outside the edges go to the end bins.
    special : tuple of float, default=()
        Declared (public) special values, each with a bin of its own.
    frequent : tuple of float, default=()
        Frequent values released by a DP stability-based histogram, each
        with a bin of its own.
    within : tuple of tuple of float or None, default=None
        With ``inverse="dp_histogram"``: for every interval, the DP
        probabilities of its equal-width sub-bins (integer columns:
        sub-bins of whole integers, see :func:`sub_bin_edges`).
    decimals : int or None, default=None
        Decoded float values are rounded to this many decimals.
    places : tuple of float or None, default=None
        With ``decimals``: the shares of the column's numbers written with 0, 1,
        ..., ``decimals`` decimals (post-processed noisy counts of the DP
        decision of the decimals its numbers are written with).  Each decoded interval value is
        rounded to a number of decimals drawn from them when that keeps it in
        its interval, so that a column of whole numbers with a few decimal
        ones (an imputed mean, a rate of two decimals with a few of four)
        keeps its whole numbers.  ``None``: every value at ``decimals``.
    codes : tuple of str, default=()
        Text values of a text column that holds numbers (``"N"``, ``"n/a"``),
        each with a code of its own after the point bins, decoding to
        exactly that text (released by DP with the point masses).
    other : bool, default=False
        Whether a code after :attr:`codes` holds the fields that are neither
        a number nor one of the codes (their *other* value).
    text_fill : str or None, default=None
        Without an other code: the code (one of :attr:`codes`) that takes
        the fields that are neither a number nor one of the codes, so that
        they keep a text (``numeric="auto"`` chooses the code with the
        largest noisy count when the DP count of those fields is too small
        for a code of their own).  ``None``: they take the missing code, or
        :attr:`fill_code` in a column without one.
    other_label : str or None, default=None
        What the other code decodes to (``None``: the missing marker).
    text_share : float or None, default=None
        For a text column that holds numbers: the share of its numbers
        decoded as text (``"12"``), the rest as Python numbers (``12``), a
        DP proportion (1.0 for a string dtype).  ``None``: a numeric column,
        whose values decode to its dtype.
    date_format : str or None, default=None
        For a text column of dates: their format, one of the public list
        :data:`~dpsynth.utils._temporal.DATE_FORMATS` (``"%Y-%m-%d"``,
        ``"%b-%Y"``, ...).  The edges and points are then whole numbers of
        the format's unit (days, seconds, minutes or months since
        1970-01-01), and dates decode as text in that format.  For an
        ``object`` column of date or time objects: their kind, one of
        :data:`~dpsynth.utils._temporal.DATE_OBJECTS` (``"object:date"``:
        days, decoded to ``datetime.date``; ``"object:timestamp"`` and
        ``"object:timestamp-utc"``: microseconds, decoded to naive or UTC
        ``pandas.Timestamp`` objects).
    step : int or None, default=None
        For an integer column: decoded values are whole multiples of this
        many units (a ``datetime64`` / ``timedelta64`` column that a DP count
        found to hold whole days, hours, minutes or seconds, counted in its
        dtype's unit), so that a column of dates decodes to dates rather than
        to instants of its finest unit.
    number_format : str or None, default=None
        For a text column of numbers written in a format: the format, one of
        the public list :data:`~dpsynth.utils._numbers.NUMBER_FORMATS`
        (``"#%"``: ``"12.5%"``; ``"$#"``, ``"€#"``, ``"£#"``: ``"$1,234.56"``;
        ``"#,###"``: ``"1,234.56"``),
        in which its numbers are read and decode as text.
    decimal_share : float or None, default=None
        For an ``object`` column holding numbers: the share of its numbers
        decoded as Python objects (not as text, see :attr:`text_share`) that
        decode as ``decimal.Decimal`` (a DP proportion: the column held
        Decimals), the rest as ``int``/``float``.  ``None``: no Decimal.
    counts : tuple or None, default=None
        ``(counts, variances)``: noisy counts of the records of each interval,
        then of each point value and code (NaN: not measured), and their
        variances, from the Gaussian measurements that placed the edges and
        released the points (``numeric="auto"``), so that a release can
        average them into the column's 1-way marginal (post-processing).
        Kept in memory only: not written to a release file, not compared.
    """

    edges: tuple
    integer: bool
    inverse: str = "uniform"
    clip: bool = False
    special: tuple = ()
    frequent: tuple = ()
    within: tuple = None
    decimals: int = None
    places: tuple = None
    codes: tuple = ()
    other: bool = False
    other_label: object = None
    text_share: float = None
    text_fill: str = None
    date_format: str = None
    step: int = None
    number_format: str = None
    decimal_share: float = None
    counts: tuple = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        edges = np.asarray(self.edges, dtype=np.float64)
        if (edges.ndim != 1 or edges.size < 2 or not np.isfinite(edges).all()
                or (np.diff(edges) < 0).any()):
            raise ValueError("bin edges must be at least two finite increasing numbers")
        if not isinstance(self.integer, bool) or not isinstance(self.clip, bool):
            raise ValueError("binning 'integer' and 'clip' must be true or false")
        if self.inverse not in _INVERSES:
            raise ValueError(f"binning 'inverse' must be one of {list(_INVERSES)}; got "
                             f"{self.inverse!r}")
        object.__setattr__(self, "edges", tuple(float(e) for e in edges))
        points = []
        for name in ("special", "frequent"):
            try:
                values = tuple(sorted(float(v) for v in self.__dict__[name]))
            except (TypeError, ValueError):
                raise ValueError(f"binning {name!r} must be a list of numbers") from None
            # +-inf is a value of its own (a float column's records may hold it)
            if any(math.isnan(v) or self.integer and math.isinf(v) for v in values):
                raise ValueError(f"binning {name!r} values must be numbers (+-inf in float "
                                 "columns only)")
            if self.integer and not all(v.is_integer() for v in values):
                raise ValueError(f"binning {name!r} values of an integer column must be "
                                 "integers")
            object.__setattr__(self, name, values)
            points.extend(values)
        if len(set(points)) != len(points):
            raise ValueError("binning special/frequent values must be distinct")
        if self.decimals is not None and (isinstance(self.decimals, bool)
                                          or not isinstance(self.decimals, int)):
            raise ValueError("binning 'decimals' must be an integer or null")
        if self.places is not None:
            try:
                places = tuple(float(v) for v in self.places)
            except (TypeError, ValueError):
                raise ValueError("binning 'places' must be a list of numbers") from None
            if (self.integer or self.decimals is None or len(places) != self.decimals + 1
                    or not all(math.isfinite(v) and v >= 0 for v in places)
                    or not sum(places) > 0):
                raise ValueError("binning 'places' must give one non-negative share per "
                                 "number of decimals 0 .. 'decimals' of a float column, "
                                 "not all 0")
            object.__setattr__(self, "places", places)
        if self.step is not None and (isinstance(self.step, bool)
                                      or not isinstance(self.step, int) or self.step < 1
                                      or not self.integer):
            raise ValueError("binning 'step' must be a positive integer (an integer "
                             "column's) or null")
        n_intervals = edges.size - 1
        if self.inverse == "dp_histogram":
            within = self.within
            if within is None or len(within) != n_intervals:
                raise ValueError("binning 'within' must give one sub-bin histogram per "
                                 "interval with inverse='dp_histogram'")
            checked = []
            for k, weights in enumerate(within):
                weights = np.asarray(weights, dtype=np.float64)
                n_sub = len(sub_bin_edges(edges[k], edges[k + 1], self.integer,
                                          max(weights.size, 1))) - 1
                if (weights.ndim != 1 or weights.size != n_sub
                        or not np.isfinite(weights).all() or (weights < 0).any()):
                    raise ValueError(f"binning 'within' of interval {k} must be "
                                     f"{n_sub} non-negative numbers")
                checked.append(tuple(float(w) for w in weights))
            object.__setattr__(self, "within", tuple(checked))
        elif self.within is not None:
            raise ValueError("binning 'within' is only used with inverse='dp_histogram'")
        self._check_text()

    def _check_text(self):
        """Validate the text fields (codes, other value, text share)."""
        codes = tuple(self.codes)
        if not all(isinstance(c, str) for c in codes):
            raise ValueError("binning 'codes' must be a list of texts")
        object.__setattr__(self, "codes", codes)
        if not isinstance(self.other, bool):
            raise ValueError("binning 'other' must be true or false")
        if self.text_fill is not None and (self.other or self.text_fill not in codes):
            raise ValueError("binning 'text_fill' must be one of its 'codes', in a binning "
                             "without an 'other' code")
        label = self.other_label
        if label is not None and (isinstance(label, bool)
                                  or not isinstance(label, (str, int, float))
                                  or isinstance(label, float) and not math.isfinite(label)):
            raise ValueError("binning 'other_label' must be a text, a finite number or null")
        share = self.text_share
        if share is not None:
            if isinstance(share, bool) or not isinstance(share, (int, float)) \
                    or not 0.0 <= share <= 1.0:
                raise ValueError("binning 'text_share' must be a number in [0, 1] or null")
            object.__setattr__(self, "text_share", float(share))
        elif codes or self.other:
            raise ValueError("binning 'codes' and 'other' need a 'text_share' (a text "
                             "column holding numbers)")
        if self.date_format is not None:
            if not isinstance(self.date_format, str) or (
                    self.date_format not in DATE_FORMATS
                    and self.date_format not in DATE_OBJECTS):
                raise ValueError(f"binning 'date_format' must be one of "
                                 f"{list(DATE_FORMATS) + list(DATE_OBJECTS)}; got "
                                 f"{self.date_format!r}")
            if share is None or not self.integer:
                raise ValueError("binning 'date_format' needs 'integer' true and a "
                                 "'text_share' (a text column of dates)")
        if self.number_format is not None:
            if not isinstance(self.number_format, str) \
                    or self.number_format not in NUMBER_FORMATS:
                raise ValueError(f"binning 'number_format' must be one of "
                                 f"{list(NUMBER_FORMATS)} ('#' stands for the number); got "
                                 f"{self.number_format!r}")
            if share is None or self.date_format is not None:
                raise ValueError("binning 'number_format' needs a 'text_share' and no "
                                 "'date_format' (a text column of numbers in a format)")
        decimal = self.decimal_share
        if decimal is not None:
            if isinstance(decimal, bool) or not isinstance(decimal, (int, float)) \
                    or not 0.0 <= decimal <= 1.0:
                raise ValueError("binning 'decimal_share' must be a number in [0, 1] or null")
            if share is None or self.date_format is not None \
                    or self.number_format is not None:
                raise ValueError("binning 'decimal_share' needs a 'text_share' and neither "
                                 "a 'date_format' nor a 'number_format' (an object column "
                                 "of numbers)")
            object.__setattr__(self, "decimal_share", float(decimal))
        labels = self.labels
        if len(set(labels)) != len(labels):
            raise ValueError("binning codes must differ from each other and from the bin "
                             "labels")

    @property
    def edge_array(self):
        return np.asarray(self.edges, dtype=np.float64)

    @property
    def n_intervals(self):
        return len(self.edges) - 1

    @property
    def points(self):
        """Values with a bin of their own, in code order (after the intervals)."""
        return self.special + self.frequent

    @property
    def empty_intervals(self):
        """Which intervals can hold no record: those of an integer column whose every
        integer is a point value (public: a function of the edges and points).

        Such a value is coded to its point bin, and a value clipped into the
        interval is clipped to a point value (:func:`encode_binning`), so the
        interval's code is impossible (:attr:`Schema.possible_attributes`).
        """
        n = self.n_intervals
        if not self.integer or not self.points:
            return np.zeros(n, dtype=bool)
        edges = self.edge_array
        return integer_room(edges[:-1], edges[1:], self.points) <= 0

    @property
    def fill_code(self):
        """Code of a record without a value in a column that has no missing code
        (a public function of the binning): the middle interval that can hold
        records (the edges are DP quantiles, so it holds the median), or the
        first point value if none can.

        ``numeric="auto"`` gives a column no missing code when the DP count of
        its records without a value does not clear its threshold; the few
        records it may still hold need a code.
        """
        possible = np.flatnonzero(~self.empty_intervals)
        return int(possible[possible.size // 2]) if possible.size else self.n_intervals

    @property
    def n_numbers(self):
        """Codes of the numbers: the intervals and the point bins."""
        return self.n_intervals + len(self.special) + len(self.frequent)

    @property
    def is_text(self):
        """Whether the column is a text column holding numbers (see :attr:`text_share`)."""
        return self.text_share is not None

    @property
    def labels(self):
        return (bin_labels(self.edge_array, self.integer)
                + [point_label(v) for v in self.points] + list(self.codes)
                + ([other_code_label(self.other_label)] if self.other else []))

    def to_json(self):
        cast = int if self.integer else float

        def point(v):  # JSON has no infinity: +-inf is written as a string
            return (("inf" if v > 0 else "-inf") if math.isinf(v) else cast(v))

        out = {"edges": [cast(e) for e in self.edges], "integer": self.integer,
               "inverse": self.inverse, "clip": self.clip}
        # optional fields: absent means none (files of earlier versions read the same)
        if self.special:
            out["special"] = [point(v) for v in self.special]
        if self.frequent:
            out["frequent"] = [point(v) for v in self.frequent]
        if self.within is not None:
            out["within"] = [list(w) for w in self.within]
        if self.decimals is not None:
            out["decimals"] = self.decimals
        if self.places is not None:
            out["places"] = list(self.places)
        if self.step is not None:
            out["step"] = self.step
        if self.text_share is not None:
            out["text_share"] = self.text_share
            out["codes"] = list(self.codes)
            out["other"] = self.other
            for key in ("other_label", "text_fill", "date_format", "number_format",
                        "decimal_share"):
                if getattr(self, key) is not None:
                    out[key] = getattr(self, key)
        return out

    @classmethod
    def from_json(cls, spec):
        if not isinstance(spec, dict):
            raise ValueError("binning must be an object")
        unknown = set(spec) - {"edges", "integer", "inverse", "clip", "special", "frequent",
                               "within", "decimals", "places", "codes", "other",
                               "other_label", "text_share", "text_fill", "date_format", "step",
                               "number_format", "decimal_share"}
        if unknown:
            raise ValueError(f"unknown binning field(s) {sorted(unknown)}")
        try:
            for name in ("special", "frequent", "within", "codes", "places"):
                if name in spec and not isinstance(spec[name], list):
                    raise ValueError(f"binning {name!r} must be a list")
            within = spec.get("within")
            return cls(tuple(spec["edges"]), spec["integer"], spec["inverse"], spec["clip"],
                       special=tuple(spec.get("special", ())),
                       frequent=tuple(spec.get("frequent", ())),
                       within=None if within is None else tuple(tuple(w) for w in within),
                       decimals=spec.get("decimals"),
                       places=None if spec.get("places") is None else tuple(spec["places"]),
                       codes=tuple(spec.get("codes", ())),
                       other=spec.get("other", False), other_label=spec.get("other_label"),
                       text_share=spec.get("text_share"), text_fill=spec.get("text_fill"),
                       date_format=spec.get("date_format"), step=spec.get("step"),
                       number_format=spec.get("number_format"),
                       decimal_share=spec.get("decimal_share"))
        except KeyError as exc:
            raise ValueError(f"binning lacks {exc}") from None
        except TypeError as exc:
            raise ValueError(f"bad binning: {exc}") from None


def sub_bin_edges(low, high, integer, n_sub):
    """Edges of ``n_sub`` equal-width sub-bins of the interval ``[low, high)``.

    Integer intervals are split at integers (fewer sub-bins when the
    interval holds fewer than ``n_sub`` integers).  Public: derived from the
    public edges only.
    """
    if integer:
        width = int(high - low)
        n_sub = max(1, min(int(n_sub), width))
        return np.unique(np.round(np.linspace(low, high, n_sub + 1)))
    if high <= low:
        return np.array([low, high], dtype=np.float64)
    return np.linspace(low, high, int(n_sub) + 1)


# ------------------------------------------------------------------ columns
@dataclass(frozen=True)
class Column:
    """The public facts of one column.

    Attributes
    ----------
    name : str
    dtype : numpy or pandas dtype
        Output dtype (declared: the input frame's dtype, or a declaration
        file).  A categorical dtype carries no category list here; its
        categories on output are :attr:`values`.
    values : tuple
        Non-missing values in code order: declared categories, values
        released by DP, or, for a binned column, its bin labels.
    declared : bool
        Whether :attr:`values` are public declarations (declared categories
        or bins).  Otherwise they are the values a DP release published, and
        the column's value universe is data-derived.
    missing_marker : {"none", "nan", "na", "nat"}
        The missing value decoded into an object column (fixed by the dtype).
    has_missing : bool
        Whether the missing value is part of the column's public values
        (with ``missing="category"``: declared possible, or released).  In a
        column with an other value it is the declaration alone: the column
        may hold missing values (not declared ``no_missing``) and its dtype
        can hold one.
    binning : Binning or None
        Bins of a numeric column.
    leaked : tuple of str, default=()
        Why facts of this column come from the data without an accounted
        mechanism (the :class:`~dpsynth.exceptions.PrivacyLeakWarning` messages,
        e.g. bins over the data's min and max).  Such a column is written to
        a release file with ``"declared": false`` and these messages.
    categories_dtype_declared : bool, default=True
        For a categorical :attr:`dtype`: whether the dtype of its categories
        is declared (``categories="dtype"``, or a release file).  An
        encoder's private schema sets it False for a categorical column whose
        dtype came with the data (``astype("category")`` infers it from the
        values: one ``2.5`` makes ints float); :meth:`Schema.restrict` then
        publishes ``object`` categories.
    other : bool, default=False
        Whether the column has an *other* value, coded right after
        :attr:`values`: every value outside them (like scikit-learn's
        infrequent categories).  A release gives one to the columns whose
        values are not declared, unless a DP count shows that it published
        (almost) all their values (:meth:`Schema.restrict`), and maps the
        values it does not publish to it, so they are counted and
        synthesized as one value of their own, apart from missing ones.
    other_label : object, default=None
        The public value the other value decodes to (``None``: the column's
        missing marker).  Chosen by the user or the fixed default
        :data:`DEFAULT_OTHER_LABEL` for text columns, never from the data;
        a private schema carries it for the column's release.
    filled : bool, default=False
        A column whose values are not declared and that a release gave no
        other value because a DP count of the records outside its published
        values was too small (:meth:`Schema.restrict` with ``fill``): those
        records took one of its values, so its missing code holds missing
        values only (and is possible only where the declaration allows).
    source_dtype : dtype or None, default=None
        The dtype the column had in the input when it was read in another
        (:attr:`dtype`): a ``period``, sparse or pyarrow dtype
        (:mod:`dpsynth.utils._arrow`), declared by the user's choice of
        dtype.  Decoded columns are given it back, also by a release loaded
        from a file.
    label : int, float or None, default=None
        The input's column label when it was a number (``pd.DataFrame(array)``
        labels its columns ``0, 1, ...``): :attr:`name` is its text
        (:func:`~dpsynth.utils._validation.label_name`), and outputs given as
        DataFrames take the label back.  Declared by the user (public).
    """

    name: str
    dtype: object
    values: tuple
    declared: bool = False
    missing_marker: str = "nan"
    has_missing: bool = True
    binning: Binning = None
    leaked: tuple = ()
    categories_dtype_declared: bool = True
    other: bool = False
    other_label: object = None
    filled: bool = False
    source_dtype: object = None
    label: object = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a column name must be a non-empty string; got {self.name!r}")
        if self.label is not None and (isinstance(self.label, str)
                                       or label_name(self.label) != self.name):
            raise ValueError(f"the label of column {self.name!r} must be a number whose "
                             f"text is the name; got {self.label!r:.60}")
        object.__setattr__(self, "values", tuple(self.values))
        object.__setattr__(self, "leaked", tuple(str(m) for m in self.leaked))
        if self.missing_marker not in MISSING_MARKERS:
            raise ValueError(f"missing_marker of column {self.name!r} must be one of "
                             f"{sorted(MISSING_MARKERS)}; got {self.missing_marker!r}")
        if self.binning is not None and list(self.values) != self.binning.labels:
            raise ValueError(f"the values of binned column {self.name!r} must be its bin "
                             "labels")
        if not isinstance(self.other, bool):
            raise ValueError(f"'other' of column {self.name!r} must be true or false")
        if self.other and (self.declared or self.binning is not None):
            raise ValueError(f"column {self.name!r} has declared values: it has no other "
                             "value")
        if not isinstance(self.filled, bool):
            raise ValueError(f"'filled' of column {self.name!r} must be true or false")
        if self.filled and (self.other or self.declared or self.binning is not None):
            raise ValueError(f"column {self.name!r} is 'filled': it has discovered values "
                             "and no other value")
        label = self.other_label
        if label is not None and (isinstance(label, float) and math.isnan(label)
                                  or label is pd.NA or label is pd.NaT):
            raise ValueError(f"the other label of column {self.name!r} must not be a "
                             "missing value")

    @property
    def kind(self):
        """``"numeric"`` (binned) or ``"categorical"``."""
        return "numeric" if self.binning is not None else "categorical"

    @property
    def n_codes(self):
        """Codes of the values and of the other value (the missing code not included)."""
        return len(self.values) + (1 if self.other else 0)

    @property
    def decoded_values(self):
        """What the codes ``0 .. n_codes - 1`` decode to (the other value: its label,
        ``None`` for the missing marker)."""
        return list(self.values) + ([self.other_label] if self.other else [])

    @property
    def output_dtype(self):
        """The dtype of decoded values; a categorical dtype gets the public values
        (and the other label).

        A private schema's categorical dtype that still holds its categories
        (a fitted encoder's) decodes to that dtype itself, so that encoding
        and decoding round-trip.  Categories recorded as ``object`` (the
        dtype of an undeclared column's categories is not published) take
        the dtype pandas gives these labels (integers, intervals of a
        ``pd.cut`` column, text), a function of the published values only,
        so that the synthetic column compares with the one it imitates.
        """
        if isinstance(self.dtype, pd.CategoricalDtype):
            held = self.dtype.categories
            if held is not None and len(held) and set(self.values) <= set(held):
                return self.dtype
            sub = categories_dtype(self.dtype)
            labels = [v for v in self.decoded_values if v is not None]
            if (sub is None or sub == object) and labels:
                try:
                    sub = pd.Index(labels).dtype
                except (TypeError, ValueError):
                    sub = object
            index = pd.Index(labels, dtype=object if sub is None else sub)
            return pd.CategoricalDtype(index, ordered=self.dtype.ordered)
        return self.dtype

    def to_json(self):
        entry = {"name": self.name, "kind": self.kind, "dtype": dtype_to_json(self.dtype),
                 "values": [value_to_json(v, self.name) for v in self.values],
                 "declared": bool(self.declared and not self.leaked),
                 "missing_marker": self.missing_marker,
                 "has_missing": bool(self.has_missing)}
        if self.leaked:  # not a public declaration: derived from the data, unaccounted
            entry["leaked"] = list(self.leaked)
        # optional fields: absent means none (files of earlier versions read the same)
        if self.other:
            entry["other"] = True
        if self.filled:
            entry["filled"] = True
        if self.other_label is not None:
            entry["other_label"] = value_to_json(self.other_label, self.name)
        if isinstance(self.dtype, pd.CategoricalDtype):
            sub = categories_dtype(self.dtype)
            entry["dtype"]["categories_dtype"] = "object" if sub is None else str(sub)
        if self.binning is not None:
            entry["binning"] = self.binning.to_json()
        if self.source_dtype is not None:
            entry["source_dtype"] = str(self.source_dtype)
        if self.label is not None:
            entry["label"] = self.label.item() if isinstance(self.label, np.generic) \
                else self.label
        return entry

    @classmethod
    def from_json(cls, entry):
        if not isinstance(entry, dict):
            raise ValueError("a column entry must be an object")
        name = entry.get("name")
        try:
            dtype_spec = entry["dtype"]
            dtype = dtype_from_json(dtype_spec)
            if isinstance(dtype, pd.CategoricalDtype):
                sub = dtype_spec.get("categories_dtype", "object")
                sub_dtype = dtype_from_json({"kind": "plain", "name": sub})
                dtype = pd.CategoricalDtype(pd.Index([], dtype=sub_dtype), ordered=dtype.ordered)
            raw_values = entry["values"]
            if not isinstance(raw_values, list):
                raise ValueError("'values' must be a list")
            values = tuple(value_from_json(v) for v in raw_values)
            declared = entry.get("declared", entry.get("public", False))
            leaked = entry.get("leaked", [])
            if not isinstance(leaked, list) or not all(isinstance(m, str) for m in leaked):
                raise ValueError("'leaked' must be a list of messages")
            if leaked:  # published values, though not declared: the universe is theirs
                declared = True
            has_missing = entry.get("has_missing", True)
            marker = entry.get("missing_marker", "nan")
            if not isinstance(declared, bool) or not isinstance(has_missing, bool):
                raise ValueError("'declared' and 'has_missing' must be true or false")
            try:
                binning = Binning.from_json(entry["binning"]) if "binning" in entry else None
            except ValueError as exc:
                raise ValueError(f"binning of {name!r}: {exc}") from None
            if binning is not None and list(values) != binning.labels:
                raise ValueError(f"the bins of {name!r} do not match its edges")
            if entry.get("kind", "numeric" if binning else "categorical") != (
                    "numeric" if binning else "categorical"):
                raise ValueError("'kind' contradicts 'binning'")
            if len(set(values)) != len(values):
                raise ValueError("duplicate values")
            if any(isinstance(v, float) and math.isnan(v) for v in values):
                raise ValueError("a value is NaN: missing values are not categories")
            other = entry.get("other", False)
            other_label = entry.get("other_label")
            if other_label is not None:
                other_label = value_from_json(other_label)
            source = entry.get("source_dtype")
            if source is not None:
                source = _source_dtype_from_json(source)
            label = entry.get("label")
            if label is not None and (isinstance(label, (str, bool))
                                      or not isinstance(label, (int, float))):
                raise ValueError(f"the label of column {name!r:.60} must be a number")
            return cls(name, dtype, values, declared, marker, has_missing, binning,
                       tuple(leaked), other=other, other_label=other_label,
                       filled=entry.get("filled", False), source_dtype=source, label=label)
        except KeyError as exc:
            raise ValueError(f"column {name!r:.60}: missing field {exc}") from None
        except (TypeError, ValueError) as exc:
            raise ValueError(f"column {name!r:.60}: {exc}") from None


def _source_dtype_from_json(text):
    """A column's ``source_dtype`` from its name: a period, sparse or pyarrow dtype
    (``None`` for a pyarrow dtype when pyarrow is not installed: the column then
    decodes in the dtype it was read in)."""
    if not isinstance(text, str):
        raise ValueError("'source_dtype' must be a dtype name")
    try:
        if text in ("string[pyarrow]", "large_string[pyarrow]"):  # pandas reads another
            import pyarrow as pa

            return pd.ArrowDtype(getattr(pa, text[:-len("[pyarrow]")])())
        dtype = pd.api.types.pandas_dtype(text)
    except ImportError:  # a pyarrow dtype without pyarrow
        return None
    except TypeError as exc:
        raise ValueError(f"unknown source_dtype {text!r:.80}: {exc}") from None
    if not isinstance(dtype, (pd.PeriodDtype, pd.SparseDtype, pd.ArrowDtype)):
        raise ValueError(f"source_dtype {text!r:.80} is not a period, sparse or pyarrow "
                         "dtype")
    return dtype


def _numbers_only(dtype, values):
    """Whether an ``object`` column's published ``values`` are all numbers (not bools)."""
    return (not isinstance(dtype, pd.CategoricalDtype) and dtype == object and len(values) > 0
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values))


# ------------------------------------------------------------------ schema
@dataclass(frozen=True)
class Schema:
    """An immutable list of :class:`Column` plus the missing-value semantics.

    Parameters
    ----------
    columns : sequence of Column
    missing : {"category", "absent"}, default="category"
        ``"category"``: the missing value is one more code of every column
        (its last); ``"absent"``: a missing cell is empty (code ``-1``).
        The other value of a column that has one (:attr:`Column.other`) is
        a code either way, right after the column's values.
    """

    columns: tuple
    missing: str = "category"
    _derived: dict = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "columns", tuple(self.columns))
        if self.missing not in ("category", "absent"):
            raise ValueError(f"missing must be 'category' or 'absent'; got {self.missing!r}")
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            raise ValueError("column names must be unique")
        extra = 1 if self.missing == "category" else 0
        n_values = np.array([c.n_codes + extra for c in self.columns], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(n_values)]).astype(np.int64)
        for array in (n_values, offsets):
            array.setflags(write=False)
        object.__setattr__(self, "_derived", {"n_values": n_values, "offsets": offsets})

    # ---------------------------------------------------------- structure
    def __len__(self):
        return len(self.columns)

    def __iter__(self):
        return iter(self.columns)

    def __getitem__(self, j):
        return self.columns[j]

    @property
    def names(self):
        """Column names, in order."""
        return [c.name for c in self.columns]

    @property
    def n_values(self):
        """Number of codes of every column (the other and missing codes included)."""
        return self._derived["n_values"]

    @property
    def offsets(self):
        """Attribute id of code 0 of every column, and the total (length d + 1)."""
        return self._derived["offsets"]

    @property
    def n_attributes(self):
        return int(self.offsets[-1])

    @property
    def attribute_columns(self):
        """Column index of every attribute id (int32)."""
        return np.repeat(np.arange(len(self.columns), dtype=np.int32), self.n_values)

    @property
    def missing_codes(self):
        """Code of each column's missing value (-1 with ``missing="absent"``)."""
        if self.missing == "absent":
            return np.full(len(self.columns), -1, dtype=np.int64)
        return self.n_values - 1

    @property
    def other_codes(self):
        """Code of each column's other value (-1 in a column without one)."""
        return np.array([len(c.values) if c.other else -1 for c in self.columns],
                        dtype=np.int64)

    @property
    def public_universe(self):
        """Whether every column's values are declared (no data-derived universe)."""
        return all(c.declared for c in self.columns)

    @property
    def leaks(self):
        """``{column: messages}`` of the columns with facts leaked from the data."""
        return {c.name: list(c.leaked) for c in self.columns if c.leaked}

    def ids(self, codes):
        """Attribute ids of a code matrix (-1 stays -1)."""
        codes = np.asarray(codes)
        offsets = self.offsets[:-1].astype(np.int32)
        return np.where(codes >= 0, codes + offsets, -1).astype(np.int32)

    def codes(self, ids):
        """Codes of an attribute-id matrix (-1 stays -1)."""
        ids = np.asarray(ids)
        offsets = self.offsets[:-1].astype(np.int32)
        return np.where(ids >= 0, ids - offsets, -1).astype(np.int32)

    def attribute_name(self, attribute):
        """``(column name, value)`` of an attribute id (see :meth:`attribute_names`)."""
        j = int(np.searchsorted(self.offsets, attribute, side="right") - 1)
        if not 0 <= j < len(self.columns):
            raise ValueError(f"Attribute id {attribute} is out of range.")
        return self._column_names(self.columns[j])[int(attribute - self.offsets[j])]

    def attribute_names(self):
        """``(column name, value)`` of every attribute id: the missing value is None,
        the other value its label (:data:`DEFAULT_OTHER_LABEL` if it has none)."""
        out = []
        for column in self.columns:
            out.extend(self._column_names(column))
        return out

    def _column_names(self, column):
        names = [(column.name, v) for v in column.values]
        if column.other:
            label = column.other_label
            names.append((column.name, DEFAULT_OTHER_LABEL if label is None else label))
        if self.missing == "category":
            names.append((column.name, None))
        return names

    @property
    def possible_attributes(self):
        """Which attribute ids can occur given the public schema.

        The missing code is impossible in a column whose dtype cannot hold a
        missing value (numpy integers and booleans) or whose declaration
        says it has none; a public universe must not contain it, or noise
        could fabricate missing values there.  So is an interval of an
        integer column whose integers are all point values
        (:attr:`Binning.empty_intervals`): a binary column whose two values
        are DP point masses has the two codes of its points only.
        """
        possible = np.ones(self.n_attributes, dtype=bool)
        for j, column in enumerate(self.columns):
            if self.missing == "category" and not (column.has_missing
                                                   and can_hold_missing(column.dtype)):
                possible[self.offsets[j + 1] - 1] = False
            if column.binning is not None:
                empty = column.binning.empty_intervals
                possible[self.offsets[j]:self.offsets[j] + empty.size] &= ~empty
        return possible

    def possible_codes(self):
        """:attr:`possible_attributes` split by column: one boolean array of
        ``n_values[j]`` codes per column."""
        return np.split(self.possible_attributes, self.offsets[1:-1])

    def possible_cells(self):
        """Per column, which codes of a dense table can hold records (public facts).

        A dense table has ``n_values[j]`` codes per column, plus the empty
        cell with ``missing="absent"`` (always possible).  An impossible
        missing code (:attr:`possible_attributes`) is ruled out.  A column
        whose values are not declared and that has no other value (a
        release file of version 3 or earlier) maps the values its release
        did not publish to the missing code, so none of its codes is (unless
        :attr:`Column.filled`: they took one of its values).
        """
        extra = 1 if self.missing == "absent" else 0
        return [np.append(codes, np.ones(extra, dtype=bool))
                if column.declared or column.other or column.filled
                else np.ones(codes.size + extra, dtype=bool)
                for column, codes in zip(self.columns, self.possible_codes())]

    # ------------------------------------------------------- publication
    def _with_field(self, field, values):
        """This schema with ``{name: value}`` as its named columns' ``field``."""
        if not values:
            return self
        return Schema(tuple(replace(c, **{field: values[c.name]}) if c.name in values
                            else c for c in self.columns), self.missing)

    def with_source_dtypes(self, dtypes):
        """This schema with ``{name: dtype}`` as its columns' :attr:`Column.source_dtype`
        (the period, sparse or pyarrow dtypes the input had; public)."""
        return self._with_field("source_dtype", dtypes)

    def source_dtypes(self):
        """``{name: source_dtype}`` of the columns that have one."""
        return {c.name: c.source_dtype for c in self.columns if c.source_dtype is not None}

    def with_labels(self, labels):
        """This schema with ``{name: label}`` as its columns' :attr:`Column.label` (the
        input's number labels; public)."""
        return self._with_field("label", labels)

    def labels(self):
        """``{name: label}`` of the columns whose input label was a number."""
        return {c.name: c.label for c in self.columns if c.label is not None}

    def restrict(self, keep, *, other=False, fill=None):
        """The publishable schema: declared values, plus the attributes in ``keep``.

        Parameters
        ----------
        keep : array-like of bool of shape (n_attributes,)
            Attributes released by a DP mechanism.  Declared values are
            always kept; so is the missing code of a declared column that
            can hold one.
        other : bool or collection of int, default=False
            Give every column whose values are not declared (``True``), or
            those of these indexes, an other value (:attr:`Column.other`),
            whatever ``keep`` holds, and map the values not kept to it.  Its
            missing code then holds the missing values only, and is public
            when the declaration allows one.  Without it, the values not kept
            are dropped (mapped to -1) or go to ``fill``.
        fill : dict, default=None
            ``{column index: attribute id}``: in a column without an other
            value, the values not kept map to the new id of this kept
            attribute instead of -1 (a release that found the column's other
            value too rare to publish, see
            :func:`~dpsynth.release.workload_release.release_adaptive`).  Its
            missing code stays as ``other`` would leave it.
            An ``object`` column whose published values are all numbers
            decodes its other value as missing (as numeric dtypes do), not
            to a text label: a function of the published values only.

        Returns
        -------
        schema : Schema
            Columns with only public values (a categorical dtype keeps no
            category list, see :func:`dtype_to_json`).
        code_map : ndarray of int64 of shape (n_attributes,)
            The new attribute id of every old one, -1 where dropped.
        """
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (self.n_attributes,):
            raise ValueError(f"keep must have shape ({self.n_attributes},); got {keep.shape}.")
        columns, new_ids, next_id = [], np.full(self.n_attributes, -1, dtype=np.int64), 0
        for j, column in enumerate(self.columns):
            start = int(self.offsets[j])
            kept = []
            for i, value in enumerate(column.values):
                if column.declared or keep[start + i]:
                    kept.append(value)
                    new_ids[start + i] = next_id
                    next_id += 1
            wanted = other if isinstance(other, bool) else j in other
            has_other = column.other or (wanted and not column.declared)
            filled = not has_other and fill is not None and j in fill
            if has_other:  # every value not kept (and an earlier other value) -> other
                span = new_ids[start:start + column.n_codes]
                span[span < 0] = next_id
                next_id += 1
            elif filled:  # every value not kept -> the fill value
                if not start <= fill[j] < start + len(column.values) or new_ids[fill[j]] < 0:
                    raise ValueError(f"fill of column {column.name!r} must be one of its "
                                     "kept values")
                span = new_ids[start:start + column.n_codes]
                span[span < 0] = new_ids[fill[j]]
            has_missing = column.has_missing
            if self.missing == "category":
                missing_id = start + column.n_codes
                possible = column.has_missing and can_hold_missing(column.dtype)
                has_missing = bool(possible if has_other or filled
                                   else (column.declared and possible) or keep[missing_id])
                if keep[missing_id] or has_missing:
                    new_ids[missing_id] = next_id
                next_id += 1
            dtype = column.dtype
            if isinstance(dtype, pd.CategoricalDtype):
                sub = categories_dtype(dtype) if column.categories_dtype_declared else None
                dtype = pd.CategoricalDtype(pd.Index([], dtype=sub), ordered=dtype.ordered)
            label = column.other_label
            if has_other and isinstance(label, str) and _numbers_only(column.dtype, kept):
                label = None  # a text label would make a column of numbers mixed
            columns.append(replace(column, values=tuple(kept), dtype=dtype,
                                   has_missing=has_missing, other=has_other,
                                   filled=column.filled or filled,
                                   categories_dtype_declared=True, other_label=label))
        return Schema(tuple(columns), self.missing), new_ids

    def to_json(self):
        """JSON form, as written in a release file."""
        return {"version": _FORMAT_VERSION, "missing": self.missing,
                "columns": [c.to_json() for c in self.columns]}

    @classmethod
    def from_json(cls, document):
        """Rebuild a schema from :meth:`to_json`; malformed input raises ``ValueError``."""
        if not isinstance(document, dict) or not isinstance(document.get("columns"), list):
            raise ValueError("a schema must be an object with a 'columns' list")
        columns = tuple(Column.from_json(entry) for entry in document["columns"])
        if not columns:
            raise ValueError("a schema needs at least one column")
        return cls(columns, document.get("missing", "category"))
