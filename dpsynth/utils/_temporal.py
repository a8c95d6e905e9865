"""Instants and durations as numbers: how binning reads and writes ``datetime64`` /
``timedelta64`` columns (whole numbers of the column's own unit)."""

import datetime
import re

import numpy as np
import pandas as pd

__all__ = ["is_temporal", "numbers_of", "temporal_numbers", "temporal_seconds", "temporal_array",
           "DATE_FORMATS", "DATE_CELLS", "DATE_OBJECTS", "date_unit", "object_date_cells",
           "parse_dates", "date_cells", "format_dates"]


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


# ------------------------------------------------------------- dates written as text
#: The date formats a text column may be found to hold (``numeric="auto"``): a
#: fixed, public list (never read from the values), each a strftime pattern
#: (``%b``: the English month abbreviations ``Jan`` .. ``Dec``, whatever the
#: locale) with the unit its dates are binned in (days, seconds, minutes or
#: months since 1970-01-01 00:00, a public origin).  Each field is matched
#: exactly: two-digit months, days and times, four-digit years 0001-9999; in the
#: formats with ``/`` or ``.`` (spreadsheet locales') months and days of one digit
#: too (``8/18/2024``, as a spreadsheet in the US locale exports dates), written
#: back with two.  Times of day alone (``13:45``, ``9:05:30``) come next:
#: minutes or seconds since midnight, hours of one digit too, written back with
#: two.  Quarters (``%q``, ``1`` to ``4``: ``1993Q1`` as pandas writes a
#: quarterly period, ``1993-Q1``) are the last two, binned in months (a quarter's
#: first month) and written back as quarters.
DATE_FORMATS = {
    "%Y-%m-%d": "D",
    "%Y-%m-%d %H:%M:%S": "s",
    "%Y-%m-%d %H:%M": "m",
    "%Y-%m-%dT%H:%M:%S": "s",
    "%Y-%m-%dT%H:%M:%SZ": "s",
    "%Y/%m/%d": "D",
    "%m/%d/%Y": "D",
    "%d/%m/%Y": "D",
    "%d.%m.%Y": "D",
    "%d-%b-%Y": "D",
    "%b-%Y": "M",
    "%Y-%m": "M",
    "%H:%M:%S": "s",
    "%H:%M": "m",
    "%YQ%q": "M",
    "%Y-Q%q": "M",
}
#: The cells of the DP count of a text column's dates (one per format, then the
#: fields that two formats both read, such as ``03/04/2021``; the quarters' cells
#: last, after it): every field falls in at most one cell, so that one record
#: changes one count by one.
_QUARTERS = ("%YQ%q", "%Y-Q%q")
DATE_CELLS = (tuple((f,) for f in DATE_FORMATS if f not in _QUARTERS)
              + (("%m/%d/%Y", "%d/%m/%Y"),) + tuple((f,) for f in _QUARTERS))
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
           "Dec")
_FIELDS = {"Y": r"(?P<Y>\d{4})", "m": r"(?P<m>\d{2})", "d": r"(?P<d>\d{2})",
           "H": r"(?P<H>\d{2})", "M": r"(?P<M>\d{2})", "S": r"(?P<S>\d{2})",
           "b": "(?P<b>" + "|".join(_MONTHS) + ")", "q": r"(?P<q>[1-4])"}
_PER_DAY = {"D": 1, "m": 1440, "s": 86400}

#: The kinds of date and time *objects* an ``object`` column may be found to hold
#: (``numeric="auto"``), a fixed, public list beside :data:`DATE_FORMATS`, with the
#: unit they are binned in (since 1970-01-01 00:00, a public origin), in the order of
#: their cells of the DP count (:func:`object_date_cells`):
#:
#: - ``"object:date"``: ``datetime.date`` objects (not datetimes), as a DATE column
#:   read by ``pandas.read_sql`` or ``Series.dt.date`` gives them; binned in days,
#:   decoded to ``datetime.date`` objects;
#: - ``"object:timestamp"``: naive ``datetime.datetime`` / ``pandas.Timestamp`` /
#:   ``numpy.datetime64`` objects, binned in microseconds (finer parts of a
#:   nanosecond Timestamp are dropped), decoded to naive ``pandas.Timestamp`` objects;
#: - ``"object:timestamp-utc"``: time-zone-aware ``datetime.datetime`` /
#:   ``pandas.Timestamp`` objects, read as their UTC instant in microseconds and
#:   decoded to ``pandas.Timestamp`` objects in UTC (a fixed zone: which zones the
#:   records used is never read).
#:
#: Each is a value of :attr:`~dpsynth.schema.Binning.date_format` (so that the code
#: reading and writing dates serves both); none is a ``strftime`` pattern.
DATE_OBJECTS = {"object:date": "D", "object:timestamp": "us", "object:timestamp-utc": "us"}


def date_unit(fmt):
    """The unit of a date format of :data:`DATE_FORMATS` or of :data:`DATE_OBJECTS`."""
    return DATE_OBJECTS[fmt] if fmt in DATE_OBJECTS else DATE_FORMATS[fmt]


def _object_kind(value):
    """The cell of :data:`DATE_OBJECTS` of one value (``-1``: none of them): a fixed
    function of the value's own type (and, for a datetime, of whether it has a
    time zone)."""
    if isinstance(value, datetime.datetime):  # pandas.Timestamp included; NaT is missing
        return -1 if value is pd.NaT else 1 if value.tzinfo is None else 2
    if isinstance(value, datetime.date):
        return 0
    if isinstance(value, np.datetime64):
        return -1 if np.isnat(value) else 1
    return -1


def object_date_cells(series):
    """The cell of :data:`DATE_OBJECTS` of each field of a column (``-1``: missing, or no
    date or time object: a text, a number)."""
    if not series.dtype == object:  # a string or numeric dtype holds no such object
        return np.full(len(series), -1, dtype=np.int64)
    values = series.to_numpy(dtype=object)
    return np.fromiter((_object_kind(v) for v in values), dtype=np.int64, count=values.size)


def _parse_objects(series, fmt):
    """:func:`parse_dates` of a kind of :data:`DATE_OBJECTS`: the objects of that kind
    as counts of its unit since 1970 (an aware datetime at its UTC instant), NaN
    elsewhere."""
    kind = list(DATE_OBJECTS).index(fmt)
    out = np.full(len(series), np.nan)
    where = np.flatnonzero(object_date_cells(series) == kind)
    if not where.size:
        return out
    values = series.to_numpy(dtype=object)[where]
    if kind == 2:  # the UTC instant, as a naive datetime
        values = [pd.Timestamp(v).tz_convert("UTC").tz_localize(None) for v in values]
    unit = DATE_OBJECTS[fmt]
    out[where] = np.array(list(values), dtype=f"M8[{unit}]").astype(np.int64)
    return out


def _format_objects(numbers, fmt):
    """:func:`format_dates` of a kind of :data:`DATE_OBJECTS`: ``datetime.date`` or
    ``pandas.Timestamp`` objects."""
    low, high = _date_range(fmt)
    unit = DATE_OBJECTS[fmt]
    counts = np.clip(np.rint(np.asarray(numbers, dtype=np.float64)), low, high).astype(np.int64)
    instants = counts.astype(f"M8[{unit}]")
    if fmt == "object:date":
        return instants.astype(object).tolist()
    index = pd.DatetimeIndex(instants)
    if fmt == "object:timestamp-utc":
        index = index.tz_localize("UTC")
    return list(index)


# spreadsheet locales' day and month fields: one or two digits
_SHORT_FIELDS = {**_FIELDS, "m": r"(?P<m>\d{1,2})", "d": r"(?P<d>\d{1,2})"}


def _pattern(fmt):
    """The regular expression that matches ``fmt`` exactly, with named fields."""
    out = []
    fields = _SHORT_FIELDS if ("/" in fmt or "." in fmt) else _FIELDS
    if fmt.startswith("%H"):  # a time of day alone: its hour of one digit too
        fields = {**fields, "H": r"(?P<H>\d{1,2})"}
    parts = re.split(r"(%[A-Za-z])", fmt)
    for part in parts:
        out.append(fields[part[1]] if part.startswith("%") else re.escape(part))
    return "".join(out)


_PATTERNS = {fmt: _pattern(fmt) for fmt in DATE_FORMATS}


def _date_range(fmt):
    """The numbers of 0001-01-01 00:00 and 9999-12-31 23:59:59 in ``fmt``'s unit."""
    unit = date_unit(fmt)
    first = np.datetime64("0001-01-01", unit).astype(np.int64)
    last = np.datetime64("9999-12-31T23:59:59", "s").astype(f"M8[{unit}]").astype(np.int64)
    return float(first), float(last)


def _texts(series):
    """The text fields of ``series``: a mask, and their positions in their distinct
    values (the distinct values, as a Series)."""
    values = series.to_numpy(dtype=object)
    is_text = series.notna().to_numpy() & np.fromiter(
        (isinstance(v, str) for v in values), dtype=bool, count=values.size)
    codes, distinct = pd.factorize(pd.Series(values[is_text], dtype=object))
    return is_text, codes, pd.Series(np.asarray(distinct, dtype=object), dtype=object)


def _parse_distinct(distinct, fmt):
    """:func:`parse_dates` of distinct texts (a Series of ``str``)."""
    if distinct.empty:
        return np.zeros(0)
    found = distinct.str.extract("^" + _PATTERNS[fmt] + r"\Z")
    return _numbers_of_fields(found, DATE_FORMATS[fmt])


def parse_dates(series, fmt):
    """The dates of a text column written in ``fmt`` (a key of :data:`DATE_FORMATS`),
    as float64 counts of its unit since 1970-01-01 00:00; NaN where a field is
    missing, no text or not a valid date in exactly that format.  ``fmt`` a key of
    :data:`DATE_OBJECTS`: the date or time objects of that kind, NaN elsewhere."""
    if fmt in DATE_OBJECTS:
        return _parse_objects(series, fmt)
    out = np.full(len(series), np.nan)
    is_text, codes, distinct = _texts(series)
    if is_text.any():
        out[is_text] = _parse_distinct(distinct, fmt)[codes]
    return out


def _numbers_of_fields(found, unit):
    """Counts of ``unit`` since 1970 of the fields matched by a format's pattern
    (NaN where a field did not match or is not a valid date)."""
    n = len(found)

    def field(name, default):
        if name not in found:
            return np.full(n, default, dtype=np.float64)
        return pd.to_numeric(found[name], errors="coerce").to_numpy(dtype=np.float64,
                                                                   na_value=np.nan)

    year = field("Y", 1970)
    if "b" in found:
        month = found["b"].map({m: k + 1 for k, m in enumerate(_MONTHS)}).to_numpy(
            dtype=np.float64, na_value=np.nan)
    elif "q" in found:  # a quarter: its first month
        month = 3.0 * field("q", 1) - 2.0
    else:
        month = field("m", 1)
    day, hour, minute, second = field("d", 1), field("H", 0), field("M", 0), field("S", 0)
    ok = (np.isfinite(year) & (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1)
          & (hour < 24) & (minute < 60) & (second < 60))
    months = np.where(ok, (year - 1970) * 12 + month - 1, 0).astype(np.int64)
    start = months.astype("M8[M]").astype("M8[D]").astype(np.int64)
    length = (months + 1).astype("M8[M]").astype("M8[D]").astype(np.int64) - start
    ok &= day <= length
    if unit == "M":
        out = months.astype(np.float64)
    else:
        days = start + np.where(ok, day, 1).astype(np.int64) - 1
        out = {"D": days, "m": days * 1440 + (hour * 60 + minute),
               "s": days * 86400 + (hour * 3600 + minute * 60 + second)}[unit]
        out = np.asarray(out, dtype=np.float64)
    out[~ok] = np.nan
    return out


def date_cells(series):
    """The cell of :data:`DATE_CELLS` of each field of a text column (``-1``: no date
    of any format, missing or no text)."""
    is_text, codes, distinct = _texts(series)
    readings = np.stack([~np.isnan(_parse_distinct(distinct, fmt)) for fmt in DATE_FORMATS]) \
        if len(distinct) else np.zeros((len(DATE_FORMATS), 0), dtype=bool)
    names = list(DATE_FORMATS)
    cell = np.full(len(distinct), -1, dtype=np.int64)
    for k, formats in reversed(list(enumerate(DATE_CELLS))):  # the first cell that fits
        rows = np.ones(len(distinct), dtype=bool)
        for j, fmt in enumerate(names):
            rows &= readings[j] if fmt in formats else ~readings[j]
        cell[rows] = k
    # a field read by formats that no cell names together goes to its first format
    unmatched = (cell < 0) & readings.any(axis=0)
    cell[unmatched] = np.argmax(readings[:, unmatched], axis=0)
    out = np.full(len(series), -1, dtype=np.int64)
    out[is_text] = cell[codes]
    return out


def format_dates(numbers, fmt):
    """Texts in ``fmt`` of counts of its unit since 1970 (clipped to the years
    0001-9999 that the format can write); ``fmt`` a key of :data:`DATE_OBJECTS`:
    objects of that kind (``datetime.date``, ``pandas.Timestamp``)."""
    numbers = np.asarray(numbers, dtype=np.float64)
    if numbers.size == 0:
        return []
    if fmt in DATE_OBJECTS:
        return _format_objects(numbers, fmt)
    low, high = _date_range(fmt)
    unit = DATE_FORMATS[fmt]
    distinct, where = np.unique(np.clip(np.rint(numbers), low, high).astype(np.int64),
                                return_inverse=True)
    if unit == "M":
        months = distinct
        days = months.astype("M8[M]").astype("M8[D]").astype(np.int64)
        rest = np.zeros_like(distinct)
    else:
        days, rest = np.divmod(distinct, _PER_DAY[unit])
    instants = days.astype("M8[D]")
    month_start = instants.astype("M8[M]")
    year = month_start.astype("M8[Y]").astype(np.int64) + 1970
    month = month_start.astype(np.int64) % 12 + 1
    day = (instants - month_start.astype("M8[D]")).astype(np.int64) + 1
    if unit == "m":
        hour, minute, second = rest // 60, rest % 60, np.zeros_like(rest)
    else:
        hour, minute, second = rest // 3600, rest // 60 % 60, rest % 60
    template = re.sub(r"%([A-Za-z])", lambda m: "{" + m.group(1) + "}", fmt)
    texts = [template.format(Y=f"{y:04d}", m=f"{mo:02d}", d=f"{d:02d}", H=f"{h:02d}",
                             M=f"{mi:02d}", S=f"{s:02d}", b=_MONTHS[mo - 1],
                             q=(mo - 1) // 3 + 1)
             for y, mo, d, h, mi, s in zip(year.tolist(), month.tolist(), day.tolist(),
                                           hour.tolist(), minute.tolist(), second.tolist())]
    return np.asarray(texts, dtype=object)[where].tolist()
