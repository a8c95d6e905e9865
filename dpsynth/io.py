"""Reading user files without changing their values: CSV tables and schema declarations.

:func:`read_csv` reads every field as text, so nothing is inferred from the
values: ``"02139"`` stays ``"02139"``, ``"NA"`` and ``"None"`` stay text, and
only the declared missing-value markers (by default the empty field) become
missing.  Columns are converted to numbers only where a declaration says so
(a :class:`Declaration`, from a JSON file read by :func:`load_declaration`
or built in code).  What the synthesizer publishes about a column (its kind,
dtype, bins, declared categories) therefore comes from the declaration, never
from the data, as differential privacy requires of public metadata.

The declaration file::

    {"missing_values": ["", "NA"],
     "columns": [
       {"name": "age", "kind": "numeric", "dtype": "int64", "bounds": [0, 120],
        "n_bins": 12},
       {"name": "gain", "kind": "numeric", "bounds": [0, 99999], "special_values": [0]},
       {"name": "price", "kind": "numeric", "dtype": "float64", "bounds": [0, 1000],
        "decimals": 2},
       {"name": "sex", "kind": "categorical", "categories": ["F", "M"], "no_missing": true},
       {"name": "zip", "kind": "categorical"}]}

``kind`` is ``"numeric"`` (binned inside its public ``bounds``; ``dtype``
``"int64"`` or ``"float64"``, by default ``"int64"`` when both bounds are
JSON integers; ``special_values`` lists public point masses or codes that
get bins of their own, ``decimals`` the precision of a float column) or
``"categorical"`` (``categories`` declares the public
values, in code order; without it they are discovered by the DP release;
``dtype`` ``"str"`` (default, or the JSON type of the categories),
``"int64"``, ``"float64"`` or ``"bool"``).  ``"no_missing": true`` declares that
a column holds no missing values (``TableEncoder(no_missing=...)``: no synthetic
record gets one there).  ``missing_values`` lists the
text markers of missing values (default ``[""]``).  Columns of the file that
the declaration does not name are read as text.  Keys starting with ``_``
(such as the ``"_warning"`` of a :func:`draft_declaration`) are comments,
ignored.  An optional ``"constraints"`` list declares public rules every
synthetic record satisfies, e.g. ``{"kind": "inequality", "low_column":
"start", "high_column": "end"}`` (the kinds and fields are in
:mod:`dpsynth.constraints`).
"""

import codecs
import csv
import json
import math
import numbers
import os
import re
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from .constraints import constraint_from_dict
from .preprocessing import DPKBinsDiscretizer

__all__ = ["DRAFT_WARNING", "ColumnDeclaration", "Declaration", "InputFileError",
           "check_values", "draft_declaration", "load_declaration", "looks_numeric",
           "read_csv", "read_header"]

_SEPARATORS = ",;\t|"
_SAMPLE_BYTES = 1 << 16
_NUMERIC_DTYPES = ("int64", "float64")
_CATEGORICAL_DTYPES = ("str", "int64", "float64", "bool")
_COLUMN_KEYS = {"name", "kind", "dtype", "bounds", "categories", "n_bins", "special_values",
                "decimals", "no_missing"}
_TOP_KEYS = {"columns", "missing_values", "constraints"}


class InputFileError(ValueError):
    """A file that cannot be read as asked, with a hint in two spellings.

    ``str(error)`` names the Python parameters (``sep=";"``); the command
    line shows :meth:`for_cli`, which names its flags (``--sep ';'``).

    Parameters
    ----------
    template : str
        Message with ``{name}`` fields for each option in ``options``.
    **options : tuple of (str, str)
        ``name -> (python spelling, command-line spelling)``.
    """

    def __init__(self, template, **options):
        self.template = template
        self.options = options
        super().__init__(self._render(0))

    def _render(self, which):
        text = self.template  # not str.format: paths and names may hold braces
        for name, spellings in self.options.items():
            text = text.replace("{" + name + "}", spellings[which])
        return text

    def for_cli(self):
        """The message with command-line flags in place of parameter names."""
        return self._render(1)


def _sep_option(sep):
    shown = "\\t" if sep == "\t" else sep
    return (f"sep={shown!r}", f"--sep '{shown}'")


_NA_OPTION = ("na_values", "--na-values")
_NO_HEADER_OPTION = ("header=False", "--no-header")


# ------------------------------------------------------------ declarations
@dataclass(frozen=True)
class ColumnDeclaration:
    """What the data owner declares about one column (public information).

    Parameters
    ----------
    name : str
    kind : {"numeric", "categorical"}
    dtype : str
        ``"int64"``/``"float64"`` (numeric), or ``"str"``/``"int64"``/
        ``"float64"``/``"bool"`` (categorical).
    bounds : tuple of (float, float) or None
        Public range of a numeric column.
    categories : tuple or None
        Public values of a categorical column, in code order.
    n_bins : int or None
        Bins of a numeric column (None: the encoder's ``n_bins``).
    special_values : tuple or None
        Numbers of a numeric column with a bin of their own: point masses
        inside the bounds (``0``, ``40``, a top code) or codes outside them
        (e.g. ``-9`` for "refused", never clipped).  Public; passed to
        :class:`~dpsynth.preprocessing.TableEncoder` as ``special_values``.
    decimals : int or None
        Declared precision of a ``float64`` numeric column: synthetic values
        are rounded to this many decimals (``TableEncoder(decimals=...)``).
    no_missing : bool or None
        True: the column holds no missing values (``TableEncoder(no_missing=...)``).
    """

    name: str
    kind: str
    dtype: str
    bounds: tuple = None
    categories: tuple = None
    n_bins: int = None
    special_values: tuple = None
    decimals: int = None
    no_missing: bool = None

    @property
    def is_integer(self):
        """Whether the column holds integers (``int64``, or ``Int64`` with missing values)."""
        return self.dtype == "int64"

    @property
    def converts(self):
        """Whether the text of this column is converted (anything but ``"str"``)."""
        return self.dtype != "str"


@dataclass(frozen=True)
class Declaration:
    """Public declarations about a table: column kinds, dtypes, bounds, categories.

    Build one with :func:`load_declaration`, :meth:`from_dict`, or from
    command-line style specifications; use it with :func:`read_csv`
    (``schema=``) and :meth:`encoder_params` (for
    :class:`~dpsynth.preprocessing.TableEncoder`).

    Parameters
    ----------
    columns : tuple of ColumnDeclaration
    missing_values : tuple of str or None
        Text markers of missing values; None means not declared (readers
        then use the empty field).
    constraints : tuple of dict, default=()
        Public rules every synthetic record satisfies (the ``"constraints"``
        key: objects with a ``"kind"``, see :mod:`dpsynth.constraints`).
    """

    columns: tuple = ()
    missing_values: tuple = None
    constraints: tuple = ()
    _by_name: dict = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        names = [c.name for c in self.columns]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"the declaration names column(s) {duplicates} more than once")
        object.__setattr__(self, "_by_name", {c.name: c for c in self.columns})

    @property
    def names(self):
        """Declared column names, in declaration order."""
        return [c.name for c in self.columns]

    def __contains__(self, name):
        return name in self._by_name

    def __getitem__(self, name):
        return self._by_name[name]

    @property
    def dtypes(self):
        """``{column: dtype name}`` of the declared columns.

        ``"int64"`` columns are read as the nullable ``Int64`` and ``"bool"``
        as ``boolean`` whatever the data hold (a fixed, declared dtype);
        ``"str"`` columns get pandas' text dtype (``str`` in pandas 3,
        ``object`` before).
        """
        return {c.name: c.dtype for c in self.columns}

    @classmethod
    def from_dict(cls, document, *, source="the declaration"):
        """Validate a parsed declaration (the JSON format above).

        Parameters
        ----------
        document : dict
        source : str, default="the declaration"
            How to name the document in error messages (e.g. its path).

        Returns
        -------
        Declaration

        Raises
        ------
        ValueError
            Naming the entry and what is wrong with it.
        """
        if not isinstance(document, dict):
            raise ValueError(f"{source} must hold a JSON object with a \"columns\" list")
        document = _without_comments(document)
        unknown = sorted(set(document) - _TOP_KEYS)
        if unknown:
            raise ValueError(f"{source} has unknown key(s) {unknown}; the keys are "
                             "\"columns\", \"missing_values\" and \"constraints\"")
        columns = document.get("columns")
        if not isinstance(columns, list) or not columns:
            raise ValueError(f"{source} must have a non-empty \"columns\" list")
        missing = document.get("missing_values")
        if missing is not None:
            if (not isinstance(missing, list)
                    or not all(isinstance(v, str) for v in missing)):
                raise ValueError(f"{source}: \"missing_values\" must be a list of strings, "
                                 "e.g. [\"\", \"NA\"]")
            missing = tuple(dict.fromkeys(missing))
        parsed = [_parse_column(entry, i, source) for i, entry in enumerate(columns)]
        constraints = _parse_constraints(document.get("constraints", []), source)
        try:
            return cls(tuple(parsed), missing, constraints)
        except ValueError as exc:
            raise ValueError(f"{source}: {exc}") from None

    def merge(self, other, *, names=("the declaration", "the other declaration")):
        """Both declarations together; a column declared differently in both is an error.

        Parameters
        ----------
        other : Declaration
        names : tuple of str
            How to call ``self`` and ``other`` in error messages.

        Returns
        -------
        Declaration
            ``self``'s columns, then ``other``'s new ones; missing-value
            markers of both.
        """
        columns = list(self.columns)
        for column in other.columns:
            if column.name not in self:
                columns.append(column)
                continue
            mine = self[column.name]
            if mine != column:
                columns[columns.index(mine)] = _merge_column(mine, column, names)
        if self.missing_values is None and other.missing_values is None:
            missing = None
        else:
            missing = tuple(dict.fromkeys((self.missing_values or ())
                                          + (other.missing_values or ())))
        return Declaration(tuple(columns), missing, self.constraints + tuple(
            c for c in other.constraints if c not in self.constraints))

    def encoder_params(self, *, binning="uniform"):
        """Keyword arguments of :class:`~dpsynth.preprocessing.TableEncoder` that
        the declaration fixes: ``categories``, ``bounds``, ``no_missing`` and,
        for columns with their own ``n_bins``, ``binning``; ``numeric`` keeps the
        columns declared categorical without categories out of numeric
        discovery (a declared kind wins over the DP decision).

        Parameters
        ----------
        binning : {"uniform", "log"}, default="uniform"
            Strategy of the columns with their own ``n_bins``.

        Returns
        -------
        dict
            Only the declared things: no key for what is not declared.
        """
        params = {}
        no_missing = [c.name for c in self.columns if c.no_missing]
        if no_missing:
            params["no_missing"] = no_missing
        special = {c.name: list(c.special_values) for c in self.columns
                   if c.kind == "numeric" and c.special_values}
        if special:
            params["special_values"] = special
        decimals = {c.name: c.decimals for c in self.columns
                    if c.kind == "numeric" and c.decimals is not None}
        if decimals:
            params["decimals"] = decimals
        categories = {c.name: list(c.categories) for c in self.columns if c.categories}
        bounds = {c.name: c.bounds for c in self.columns if c.kind == "numeric"}
        if categories:
            params["categories"] = categories
        if bounds:
            params["bounds"] = bounds
        categorical = {c.name: "categorical" for c in self.columns
                       if c.kind == "categorical" and not c.categories}
        if categorical:
            params["numeric"] = categorical
        own_bins = {c.name: c for c in self.columns if c.kind == "numeric" and c.n_bins}
        if own_bins:
            if binning not in ("uniform", "log"):
                raise ValueError(f"per-column n_bins works with uniform or log binning, "
                                 f"not {binning!r}")

            params["binning"] = {name: DPKBinsDiscretizer(c.n_bins, bounds=c.bounds,
                                                          strategy=binning)
                                 for name, c in own_bins.items()}
        return params

    def to_dict(self):
        """The JSON form read by :func:`load_declaration`."""
        columns = []
        for c in self.columns:
            entry = {"name": c.name, "kind": c.kind, "dtype": c.dtype}
            for key in ("bounds", "categories", "special_values"):
                if getattr(c, key) is not None:
                    entry[key] = list(getattr(c, key))
            if c.decimals is not None:
                entry["decimals"] = c.decimals
            if c.n_bins is not None:
                entry["n_bins"] = c.n_bins
            if c.no_missing is not None:
                entry["no_missing"] = c.no_missing
            columns.append(entry)
        document = {"columns": columns}
        if self.missing_values is not None:
            document["missing_values"] = list(self.missing_values)
        if self.constraints:
            document["constraints"] = [dict(c) for c in self.constraints]
        return document


def _without_comments(entry):
    """``entry`` without its comment keys (those starting with ``_``, e.g. ``"_warning"``)."""
    return {k: v for k, v in entry.items() if not (isinstance(k, str) and k.startswith("_"))}


def _parse_constraints(constraints, source):
    """The ``"constraints"`` list, each entry checked (kept as dicts: JSON values)."""
    if not isinstance(constraints, list):
        raise ValueError(f"{source}: \"constraints\" must be a list of objects with a "
                         "\"kind\"")
    for i, entry in enumerate(constraints):
        try:
            constraint_from_dict(entry)
        except ValueError as exc:
            raise ValueError(f"{source}: constraint {i}: {exc}") from None
    return tuple(_FrozenDict(entry) for entry in constraints)


class _FrozenDict(dict):
    """A dict that compares and hashes by value (a frozen dataclass field)."""

    def __hash__(self):
        return hash(repr(sorted(self.items(), key=lambda item: item[0])))


def _merge_column(a, b, names):
    """One declaration of a column declared in two places; ValueError if they disagree."""
    if a.kind != b.kind:
        # "--bounds age=0:100" and "--categories" with numbers for age: the
        # encoder keeps the declared categories, in the numeric dtype
        numeric, other = (a, b) if a.kind == "numeric" else (b, a)
        if other.categories is None:
            raise ValueError(f"column {a.name!r} is declared numeric in one of {names[0]} "
                             f"and {names[1]} and categorical in the other; declare it "
                             "once")
        where = f"category of the numeric column {a.name!r}"
        categories = []
        for value in other.categories:
            try:
                categories.append(_coerce_category(value, numeric.dtype, where))
            except ValueError:
                raise ValueError(f"{value!r} of the numeric column {a.name!r} is not a "
                                 f"number (it is declared numeric in {names[0]} or "
                                 f"{names[1]})") from None
        if numeric.no_missing is None:
            numeric = replace(numeric, no_missing=other.no_missing)
        return replace(numeric, kind="categorical", bounds=None, n_bins=None,
                       categories=tuple(categories))
    fields = {}
    for key in ("bounds", "categories", "n_bins", "special_values", "decimals", "dtype",
                "no_missing"):
        x, y = getattr(a, key), getattr(b, key)
        if x is not None and y is not None and x != y:
            raise ValueError(f"column {a.name!r} has different {key} in {names[0]} and "
                             f"{names[1]}; declare it in one place")
        fields[key] = x if x is not None else y
    return replace(a, **fields)


def _is_number(value):
    return (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and math.isfinite(value))


def _parse_column(entry, position, source):
    where = f"{source}, column entry {position + 1}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be an object with \"name\" and \"kind\"")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where} needs a \"name\" (a non-empty string)")
    where = f"{source}, column {name!r}"
    entry = _without_comments(entry)
    unknown = sorted(set(entry) - _COLUMN_KEYS)
    if unknown:
        raise ValueError(f"{where} has unknown key(s) {unknown}; allowed: "
                         f"{sorted(_COLUMN_KEYS)}")
    kind = entry.get("kind")
    if kind not in ("numeric", "categorical"):
        raise ValueError(f"{where}: \"kind\" must be \"numeric\" or \"categorical\"; "
                         f"got {kind!r}")
    dtype = entry.get("dtype")
    no_missing = entry.get("no_missing")
    if no_missing is not None and not isinstance(no_missing, bool):
        raise ValueError(f"{where}: \"no_missing\" must be true or false")
    if kind == "numeric":
        for key in ("categories",):
            if key in entry:
                raise ValueError(f"{where}: a numeric column has no \"{key}\"; declare "
                                 "it \"categorical\" (with a \"dtype\") to list its values")
        bounds = entry.get("bounds")
        if (not isinstance(bounds, list) or len(bounds) != 2
                or not all(_is_number(b) for b in bounds)):
            raise ValueError(f"{where}: a numeric column needs \"bounds\": [low, high], "
                             "its public range (finite numbers)")
        if not bounds[0] < bounds[1]:
            raise ValueError(f"{where}: \"bounds\" low must be smaller than high")
        if dtype is None:
            dtype = "int64" if all(isinstance(b, int) for b in bounds) else "float64"
        if dtype not in _NUMERIC_DTYPES:
            raise ValueError(f"{where}: \"dtype\" of a numeric column must be one of "
                             f"{list(_NUMERIC_DTYPES)}; got {dtype!r}")
        n_bins = entry.get("n_bins")
        if n_bins is not None and (not isinstance(n_bins, int) or isinstance(n_bins, bool)
                                   or n_bins < 1):
            raise ValueError(f"{where}: \"n_bins\" must be a positive integer")
        special = entry.get("special_values")
        if special is not None:
            if not isinstance(special, list) or not all(_is_number(v) for v in special):
                raise ValueError(f"{where}: \"special_values\" must be a list of numbers")
            if len(set(special)) != len(special):
                raise ValueError(f"{where}: \"special_values\" has duplicates")
            if dtype == "int64" and not all(float(v).is_integer() for v in special):
                raise ValueError(f"{where}: \"special_values\" of an integer column must "
                                 "be integers")
            special = tuple(special)
        decimals = entry.get("decimals")
        if decimals is not None:
            if not isinstance(decimals, int) or isinstance(decimals, bool):
                raise ValueError(f"{where}: \"decimals\" must be an integer")
            if dtype != "float64":
                raise ValueError(f"{where}: \"decimals\" is for \"float64\" columns (integer "
                                 "columns always give integers)")
        return ColumnDeclaration(name, kind, dtype, bounds=(bounds[0], bounds[1]),
                                 n_bins=n_bins, special_values=special, decimals=decimals,
                                 no_missing=no_missing)
    for key in ("bounds", "n_bins", "special_values", "decimals"):
        if key in entry:
            raise ValueError(f"{where}: a categorical column has no \"{key}\"; declare "
                             "it \"numeric\" to bin it")
    categories = entry.get("categories")
    if categories is not None:
        categories = _parse_categories(categories, dtype, where)
        if dtype is None:
            dtype = _json_type(categories)
    dtype = "str" if dtype is None else dtype
    if dtype not in _CATEGORICAL_DTYPES:
        raise ValueError(f"{where}: \"dtype\" of a categorical column must be one of "
                         f"{list(_CATEGORICAL_DTYPES)}; got {dtype!r}")
    if categories is not None:
        categories = tuple(_coerce_category(v, dtype, where) for v in categories)
        if len(set(categories)) != len(categories):
            raise ValueError(f"{where}: \"categories\" has duplicate values")
    return ColumnDeclaration(name, kind, dtype, categories=categories, no_missing=no_missing)


def _parse_categories(categories, dtype, where):
    if not isinstance(categories, list) or not categories:
        raise ValueError(f"{where}: \"categories\" must be a non-empty list of values")
    for value in categories:
        if value is None or isinstance(value, (list, dict)):
            raise ValueError(f"{where}: \"categories\" holds {value!r}; categories are "
                             "strings or numbers (missing values are declared with "
                             "\"missing_values\")")
    return categories


def _json_type(values):
    if all(isinstance(v, bool) for v in values):
        return "bool"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "int64"
    if all(_is_number(v) for v in values):
        return "float64"
    if all(isinstance(v, str) for v in values):
        return "str"
    raise ValueError("categories mix strings and numbers; give a \"dtype\"")


def _coerce_category(value, dtype, where):
    """A declared category in the type of its column (JSON text may spell numbers)."""
    try:
        if dtype == "str":
            if not isinstance(value, str):
                raise ValueError
            return value
        if dtype == "bool":
            if isinstance(value, bool):
                return value
            return _parse_bool(value)
        if isinstance(value, bool):
            raise ValueError
        number = float(value) if isinstance(value, str) else value
        if not _is_number(number):
            raise ValueError
        if dtype == "int64":
            if number != int(number):
                raise ValueError
            return int(number)
        return float(number)
    except (ValueError, TypeError):
        kind = {"str": "a string", "bool": "true or false", "int64": "an integer",
                "float64": "a number"}[dtype]
        raise ValueError(f"{where}: category {value!r} is not {kind}, as the column's "
                         f"dtype {dtype!r} requires") from None


def _parse_bool(text):
    lowered = str(text).strip().lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    raise ValueError(f"not a boolean: {text!r}")


def load_declaration(path):
    """Read a schema declaration file (JSON; the format is in the module docstring).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    Declaration

    Raises
    ------
    ValueError
        If the file is missing, not JSON or not a valid declaration; the
        message names the file and the entry.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"schema file not found: {path}")
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read {path} as JSON: {' '.join(str(exc).split())}") from None
    return Declaration.from_dict(document, source=path)


# ------------------------------------------------------------------- CSV
def _text_encoding(encoding):
    """The codec that reads ``encoding`` (UTF-8 with its byte-order mark ignored),
    checked: an unknown name is refused."""
    try:
        name = codecs.lookup(encoding).name
    except (LookupError, TypeError):
        raise InputFileError(f"unknown text encoding {encoding!r}; give one such as "
                             "utf-8, cp1252 or latin-1 with {encoding}",
                             encoding=("encoding=", "--encoding")) from None
    return "utf-8-sig" if name in ("utf-8", "utf-8-sig") else name


def _not_encoded(path, encoding):
    """The error of a file that ``encoding`` cannot read."""
    if encoding in ("utf-8-sig", "utf-8"):
        return InputFileError(f"{path} is not UTF-8 text; save it as UTF-8 CSV, or give "
                              "its encoding with {encoding} (a CSV saved by Excel on "
                              "Windows: cp1252)", encoding=("encoding=", "--encoding"))
    return InputFileError(f"{path} is not {encoding} text; give its encoding with "
                          "{encoding}", encoding=("encoding=", "--encoding"))


def _first_line(path, encoding="utf-8-sig"):
    """The first line of ``path`` (its header row, or first record)."""
    try:
        with open(path, encoding=encoding, newline="") as handle:
            text = handle.read(_SAMPLE_BYTES)
    except UnicodeDecodeError:
        raise _not_encoded(path, encoding) from None
    if not text.strip():
        raise InputFileError(f"{path} is empty")
    return text.splitlines()[0] if text.splitlines() else ""


def _split(line, sep):
    """The fields of one line split at ``sep`` (quotes respected)."""
    return next(csv.reader([line], delimiter=sep), [])


def _header_separator(path, line):
    """The separator of a header row: the one of ``, ; TAB |`` that splits it most.

    Only the header row is looked at: column names are public, records are
    not, so no record can change how the file is split.  A row that no
    candidate splits is one column (``","``); a tie is an error asking for
    the separator.
    """
    counts = {sep: len(_split(line, sep)) for sep in _SEPARATORS}
    most = max(counts.values())
    if most == 1:
        return ","
    tied = [sep for sep, n in counts.items() if n == most]
    if len(tied) > 1:
        shown = " and ".join(repr(s) for s in tied)
        raise InputFileError(f"{path}: the header row splits into as many columns at "
                             f"{shown}; give the separator with {{sep}}",
                             sep=_sep_option(tied[0]))
    return tied[0]


def _looks_like_data(header):
    """Whether a header row looks like a record: every field a number."""
    def number(text):
        try:
            return math.isfinite(float(text))
        except ValueError:
            return False
    return all(number(field) for field in header) and bool(header)


def _check_sep(sep):
    if not isinstance(sep, str) or len(sep) != 1 or sep in "\"\n\r":
        raise InputFileError("the separator must be one character (not a quote or line "
                             "break); got {sep}", sep=(repr(sep), repr(sep)))


def _first_row(path, sep, header, encoding="utf-8-sig"):
    """``(sep, fields of the first line)``; the separator inferred from a header row
    when ``sep`` is None, ``","`` for a file without one (records never decide it)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise InputFileError(f"input file not found: {path}")
    if os.path.isdir(path):
        raise InputFileError(f"{path} is a directory, not a CSV file")
    line = _first_line(path, encoding)
    explicit = sep is not None
    if explicit:
        _check_sep(sep)
    elif header:
        sep = _header_separator(path, line)
    else:
        sep = ","
    first = _split(line, sep)
    if header:
        _check_header(path, first, sep, line, explicit)
    return sep, first


def _check_header(path, header, sep, line, explicit_sep):
    if len(header) == 1 and explicit_sep:
        likely = [other for other in _SEPARATORS if other != sep
                  and len(_split(line, other)) > 1]
        if likely:
            raise InputFileError(
                f"{path} was read as one column although {likely[0]!r} splits its header "
                "row; give the separator with {sep}", sep=_sep_option(likely[0]))
    if _looks_like_data(header):
        raise InputFileError(
            f"{path}: the first line looks like a record (all its fields are numbers), "
            "not a header of column names; add a header row, or pass {no_header} to "
            "name the columns column_1, column_2, ... (or after the schema's columns)",
            no_header=_NO_HEADER_OPTION)
    empty = [i + 1 for i, name in enumerate(header) if name == ""]
    if empty == [len(header)] and len(header) > 1:
        raise InputFileError(
            f"{path}: the header row ends with the separator {sep!r}, which makes an "
            f"unnamed last column ({len(header)}) (some spreadsheet exports end every "
            "line with one); remove the trailing separator from every line, or name "
            "that column")
    if empty:
        raise InputFileError(
            f"{path}: column(s) {empty} of the header row have no name; name them (a "
            "file saved with a row index has an unnamed first column)")
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        raise InputFileError(
            f"{path}: the header row names column(s) {duplicates} more than once; "
            "rename them so that every column has its own name")


_GENERIC_NAME = re.compile(r"column_[1-9][0-9]*")


def _headerless_names(path, first, schema):
    """The column names of a file without a header row, whose first line has the
    fields ``first``.

    A declaration that names its columns (any name but ``column_<k>``) names
    the fields in order, so it must declare one column per field; otherwise
    the columns are ``column_1, column_2, ...``, one per field of the first
    record.  Every record is then checked against that count.
    """
    if schema is None or not schema.columns or all(
            _GENERIC_NAME.fullmatch(name) for name in schema.names):
        return [f"column_{i + 1}" for i in range(len(first))]
    if len(schema.columns) != len(first):
        relation = "more" if len(first) > len(schema.columns) else "fewer"
        raise InputFileError(
            f"{path}, line 1: the record has {relation} fields ({len(first)}) than the "
            f"schema declares columns ({len(schema.columns)}); without a header row the "
            "schema names every field in order: declare one column per field, or give "
            "the file's separator with {sep}", sep=("sep=", "--sep"))
    return list(schema.names)


def read_header(path, *, sep=None, header=True, schema=None, encoding="utf-8"):
    """The column names of a CSV file, checked as :func:`read_csv` checks them.

    Parameters
    ----------
    path : str or path-like
    sep : str, default=None
        The separator; None infers it from the header row as :func:`read_csv` does.
    header : bool, default=True
        False: the file has no header row; the names are then the schema's
        (which must declare one column per field) or ``column_1``,
        ``column_2``, ...
    schema : Declaration, default=None
        As given to :func:`read_csv`.
    encoding : str, default="utf-8"
        As given to :func:`read_csv`.

    Returns
    -------
    list of str
    """
    _, first = _first_row(path, sep, header, _text_encoding(encoding))
    if not header:
        return _headerless_names(path, first, schema)
    return first


def _select(header, columns, drop, path):
    if columns is not None and drop is not None:
        raise InputFileError("give the columns to keep or the columns to drop, not both "
                             "({columns}, {drop})", columns=("columns=", "--columns"),
                             drop=("drop=", "--drop"))
    chosen = columns if columns is not None else drop
    if chosen is None:
        return list(header)
    chosen = list(chosen)
    unknown = [name for name in chosen if name not in header]
    if unknown:
        option = ("columns", "--columns") if columns is not None else ("drop", "--drop")
        raise InputFileError(f"{{option}} names unknown column(s) {unknown}; "
                             f"{column_list(header)} in {path}", option=option)
    repeated = sorted({name for name in chosen if chosen.count(name) > 1})
    if repeated:
        raise InputFileError(f"{{option}} names {repeated} more than once",
                             option=("columns", "--columns") if columns is not None
                             else ("drop", "--drop"))
    if columns is not None:
        return chosen
    kept = [name for name in header if name not in chosen]
    if not kept:
        raise InputFileError("{drop} leaves no column", drop=("drop", "--drop"))
    return kept


def column_list(columns):
    """``"the columns are a, b, c"`` (at most 12 names shown); a name holding a comma
    or a double quote is written as in a CSV header (``"x,y"``), as ``--columns``
    and ``--drop`` read it."""
    names = [str(n) for n in columns]
    names = ['"' + n.replace('"', '""') + '"' if ("," in n or '"' in n) else n
             for n in names]
    shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
    return f"the columns are {shown}"


def _text_dtype():
    """pandas' default dtype for text: ``str`` in pandas 3, object before."""
    return pd.Series(["a"]).dtype


def read_csv(path, schema=None, *, sep=None, na_values=("",), columns=None, drop=None,
             header=True, encoding="utf-8"):
    """Read a CSV file exactly as written: text, unless declared otherwise.

    Parameters
    ----------
    path : str or path-like
        A text file in ``encoding`` (UTF-8: a byte-order mark is ignored).
    schema : Declaration, default=None
        Declared columns are converted to their ``dtype`` (numbers, booleans);
        every other column stays text.  Its ``missing_values``, if declared,
        replace ``na_values``.
    sep : str, default=None
        The field separator.  None infers it from the header row alone (the
        one of ``, ; TAB |`` that splits it into the most columns; ``","``
        if none does) and uses ``","`` when ``header=False``: records never
        decide how the file is split.
    na_values : sequence of str, default=("",)
        Exact field texts read as missing (no other text is: ``"NA"``,
        ``"None"`` and ``"nan"`` stay text unless listed).
    columns, drop : sequence of str, default=None
        Keep only ``columns`` (in that order), or every column but ``drop``.
    header : bool, default=True
        Whether the first line names the columns.  Without one, a schema
        that names its columns names the fields in order and must declare one
        column per field; otherwise the columns are ``column_1, column_2,
        ...``, as many as the first record has fields.  Either way every
        record must have that many fields.
    encoding : str, default="utf-8"
        The file's text encoding, a Python codec name (``"cp1252"`` for a CSV
        that Excel saved on Windows, ``"latin-1"``, ``"utf-16"``).

    Returns
    -------
    DataFrame
        Text columns in pandas' text dtype (``str`` in pandas 3, ``object``
        in pandas 2) with missing values as NaN; declared ``int64`` columns
        as the nullable ``Int64``, ``float64`` as ``float64``, ``bool`` as
        ``boolean``: the dtype is the declaration's, never the data's (a
        column with no missing value gets the same dtype as one with some).

    Raises
    ------
    InputFileError
        (a ``ValueError``) for a file that cannot be read as asked: not
        UTF-8, empty, a header row split as many ways at two separators, one
        column where the header holds another separator, unnamed or
        duplicate header names, a header that looks like a record, a record
        with more or fewer fields than the header (naming its line), unknown ``columns``/``drop``/schema columns, or a value of a
        declared column that is not of its type (naming the column and line).
    OSError
        If the file cannot be opened.

    Examples
    --------
    >>> import os, tempfile
    >>> from dpsynth.io import read_csv
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(path, "w").write("zip;note\\n02139;NA\\n10001;\\n")
    >>> frame = read_csv(path)
    >>> frame["zip"].tolist(), frame["note"].tolist()
    (['02139', '10001'], ['NA', nan])
    """
    path = os.fspath(path)
    if schema is not None and not isinstance(schema, Declaration):
        raise TypeError(f"schema must be a dpsynth.io.Declaration; got "
                        f"{type(schema).__name__}")
    if isinstance(na_values, str):
        na_values = (na_values,)
    if schema is not None and schema.missing_values is not None:
        na_values = schema.missing_values
    na_values = list(dict.fromkeys(na_values))
    encoding = _text_encoding(encoding)
    sep, first = _first_row(path, sep, header, encoding)
    names = first if header else _headerless_names(path, first, schema)
    keep = _select(names, columns, drop, path)
    if schema is not None:
        absent = [c for c in schema.names if c not in names]
        if absent:
            raise InputFileError(f"the schema declares column(s) {absent} that {path} "
                                 f"does not have; {column_list(names)}")
    one_column = len(names) == 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False,
                                na_filter=False, header=0 if header else None,
                                names=None if header else names, index_col=False,
                                encoding=encoding, engine="c",
                                # a blank line is an empty field in a one-column file
                                skip_blank_lines=not one_column)
    except (pd.errors.ParserWarning, pd.errors.ParserError) as exc:
        _raise_ragged(path, sep, len(names), header, exc, encoding)
    except UnicodeDecodeError:
        raise _not_encoded(path, encoding) from None
    except pd.errors.EmptyDataError:
        raise InputFileError(f"{path} is empty") from None
    if one_column:
        frame = frame.fillna("")  # a blank line: one empty field
    elif len(frame) and (frame.iloc[:, -1] == "").any():
        # the parser fills a short record's absent fields with "": only records
        # whose last field is empty may be short, so only then is the file scanned
        _raise_ragged(path, sep, len(names), header, None, encoding)
    if na_values:
        frame = frame.mask(frame.isin(na_values))
    frame = frame[keep]
    text = _text_dtype()
    for name in frame.columns:
        if frame[name].dtype != text:
            frame[name] = frame[name].astype(text)
    if schema is not None:
        first_line = 2 if header else 1
        for column in schema.columns:
            if column.name in frame.columns and column.converts:
                frame[column.name] = _convert(frame[column.name], column, path, first_line)
    return frame


def _raise_ragged(path, sep, n_fields, header, error, encoding="utf-8-sig"):
    """Raise an InputFileError naming the first record whose field count is not the
    header's (its line, never its content).  ``error``: the parser's, raised if
    every record has the header's count; None: return then."""
    shown = "\\t" if sep == "\t" else sep
    with open(path, encoding=encoding, newline="") as handle:
        reader = csv.reader(handle, delimiter=sep)
        if header:
            next(reader, None)
        for row in reader:
            if not row and n_fields > 1:  # a blank line is skipped
                continue
            if len(row) != n_fields:
                what = "header row" if header else "first record"
                relation = "more" if len(row) > n_fields else "fewer"
                raise InputFileError(
                    f"{path}, line {reader.line_num}: the record has {relation} fields "
                    f"than the {what} ({n_fields}, separated by {shown!r}); quote the "
                    "fields that hold the separator, or give the file's separator with "
                    "{sep}", sep=("sep=", "--sep"))
    if error is None:
        return
    raise InputFileError(f"cannot read {path} as CSV: {' '.join(str(error).split())}"
                         ) from None


def _convert(series, column, path, first_line):
    """A text column in its declared dtype; the first bad field is reported by line."""
    missing = series.isna().to_numpy()
    hint = "; if it marks a missing value, declare the marker with {na}"

    def fail(position, what):
        line = first_line + int(position)
        raise InputFileError(f"column {column.name!r} of {path}, line {line}: the field "
                             f"is not {what}, as the column is declared {column.dtype}"
                             + hint, na=_NA_OPTION)

    if column.dtype == "bool":
        lowered = series.str.strip().str.lower()
        values = lowered.map({"true": True, "false": False, "1": True, "0": False})
        bad = values.isna().to_numpy() & ~missing
        if bad.any():
            fail(np.flatnonzero(bad)[0], "true or false")
        # nullable whatever the data hold: the dtype is part of the release and must
        # not tell whether some record had a missing value
        return values.astype("boolean")
    numbers_ = pd.to_numeric(series, errors="coerce")
    values = numbers_.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = (np.isnan(values) & ~missing) | np.isinf(values)
    if bad.any():
        fail(np.flatnonzero(bad)[0], "a finite number")
    if column.dtype == "int64":
        fractional = ~np.isnan(values) & (values != np.round(values))
        if fractional.any():
            raise InputFileError(
                f"column {column.name!r} of {path}, line "
                f"{first_line + int(np.flatnonzero(fractional)[0])}: the field is not an "
                "integer, as the column is declared int64; declare it as decimal "
                "numbers ({float_hint})",
                float_hint=("dtype \"float64\"", "write its bounds with a decimal point, "
                            f"--bounds {column.name}=LO.0:HI, or give it \"dtype\": "
                            "\"float64\" in the --schema file"))
        integers = np.where(np.isnan(values), 0, values).astype(np.int64)
        return pd.Series(pd.arrays.IntegerArray(integers, missing.copy()),
                         index=series.index, name=series.name)
    return pd.Series(values, index=series.index, name=series.name)


def check_values(frame, schema, *, path="the table", first_line=2, clip=False):
    """Check declared bounds and categories before fitting, without showing data.

    Parameters
    ----------
    frame : DataFrame
        As returned by :func:`read_csv` with ``schema``.
    schema : Declaration
    path : str, default="the table"
    first_line : int, default=2
        Line number of the first record (for the messages).
    clip : bool, default=False
        Values outside the bounds of a numeric column are allowed (the
        binning clips them into the end bins) instead of an error.

    Returns
    -------
    list of str
        With ``clip=True``: the numeric columns that have values outside
        their bounds (to tell the data owner).

    Raises
    ------
    InputFileError
        Naming the column, the line of the first offending field and what
        to do; never the offending value itself.
    """
    clipped = []
    for column in schema.columns:
        if column.name not in frame.columns:
            continue
        series = frame[column.name]
        present = series.notna().to_numpy()
        if column.categories is not None:
            allowed = pd.Index(list(column.categories), dtype=object)
            codes = allowed.get_indexer(series.astype(object).to_numpy())
            bad = present & (codes < 0)
            if bad.any():
                raise InputFileError(
                    f"column {column.name!r} of {path}, line "
                    f"{first_line + int(np.flatnonzero(bad)[0])}: the value is not among "
                    "its declared categories; add it to the categories ({cats}) or "
                    "declare it as a missing-value marker ({na})",
                    cats=("categories", "--categories/--schema"), na=_NA_OPTION)
        elif column.kind == "numeric":
            values = series.to_numpy(dtype=np.float64, na_value=np.nan)
            low, high = column.bounds
            bad = present & ((values < low) | (values > high))
            if column.special_values:  # declared codes have bins of their own
                bad &= ~np.isin(values, np.asarray(column.special_values, dtype=np.float64))
            if bad.any() and clip:
                clipped.append(column.name)
            elif bad.any():
                raise InputFileError(
                    f"column {column.name!r} of {path}, line "
                    f"{first_line + int(np.flatnonzero(bad)[0])}: the value is outside "
                    f"the declared bounds [{low:g}, {high:g}]; widen the bounds "
                    "({bounds}) or fix the data",
                    bounds=("bounds", f"--bounds {column.name}=LO:HI or the schema"))
    return clipped


_NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*")


def looks_numeric(series):
    """Whether every non-missing field of a text column spells a number.

    Returns
    -------
    {"integer", "decimal", None}
        ``"integer"`` if all are integers, ``"decimal"`` if some have a
        fraction or exponent, None if some are not numbers (or none present).
        Used for hints on the data owner's console only, never for the
        release.
    """
    values = series.dropna()
    if values.empty:
        return None
    text = values.astype(str)
    if not text.str.fullmatch(_NUMBER).all():
        return None
    return "integer" if text.str.fullmatch(r"\s*[-+]?\d+\s*").all() else "decimal"


# ------------------------------------------------------------ schema drafts
DRAFT_WARNING = (
    "DRAFT written from the data by 'dpsynth schema draft': every category, bound, "
    "special value and no_missing flag kept in this file is PUBLISHED WITHOUT "
    "DIFFERENTIAL PRIVACY in every release made with it (--schema). Review it before "
    "use: delete the categories that are private (rare values, identifiers), replace "
    "the observed minima and maxima by public bounds, and keep only what anyone could "
    "know without the data.")

_LEADING_ZERO = re.compile(r"\s*[-+]?0\d")
# a numeric column is left out of the draft when more than this share of its values
# (point masses apart) falls in one of DRAFT_BINS equal bins between its minimum and
# maximum: declared bounds bin it in equal widths (the encoder's n_bins), which would
# lump those values together, while an undeclared column gets DP quantile bins
DRAFT_BINS = 10
DRAFT_CROWDED_SHARE = 0.5


def _decimals(text):
    """Most digits after the decimal point in plain-notation numbers, or None."""
    if text.str.contains(r"[eE]").any():
        return None
    fraction = text.str.strip().str.extract(r"\.(\d*)$", expand=False).fillna("")
    return int(fraction.str.len().max())


def _value_kind(series):
    """``"text"`` or ``"numbers"`` when the present values of a non-numeric column (its
    categories for a categorical) are all ``str`` or all real numbers, else None: a
    draft declares such columns by their text, which other values (Timestamps,
    Intervals, mixed types) would not compare equal to."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        values = series.dropna().unique().tolist()
    else:
        values = pd.unique(series.dropna().to_numpy(dtype=object)).tolist()
    if all(isinstance(v, str) for v in values):
        return "text"
    if all(isinstance(v, (numbers.Real, np.number)) and not isinstance(v, (bool, np.bool_))
           for v in values):
        return "numbers"
    return None


def _draft_column(name, series, max_categories, max_numeric_categories, point_mass_share):
    """One column's draft ``(declaration, note)``; the declaration is None for a column
    left undeclared."""
    present = series.dropna()
    no_missing = True if len(present) == len(series) and len(series) else None
    note = None
    if present.empty:
        return ColumnDeclaration(name, "categorical", "str", no_missing=no_missing), note
    text = None
    if pd.api.types.is_bool_dtype(series.dtype):
        values = present.astype(bool)
        return ColumnDeclaration(name, "categorical", "bool",
                                 categories=tuple(sorted(set(values.tolist()))),
                                 no_missing=no_missing), note
    if pd.api.types.is_numeric_dtype(series.dtype):
        numbers_ = pd.to_numeric(present).astype(np.float64)
        integer = pd.api.types.is_integer_dtype(series.dtype)
    else:
        kind = _value_kind(series)
        if kind is None:
            note = (f"{name!r} holds values that are neither all text nor all numbers "
                    f"(dtype {series.dtype}: dates, durations, periods, intervals or mixed "
                    "types), which a schema file cannot declare: left out of the draft "
                    "(undeclared, the DP release bins or discovers them; in Python, "
                    "TableEncoder(categories=...) or bounds=... declare them)")
            return None, note
        text = present.astype(str)
        kind = looks_numeric(text)
        if kind is None or text.str.match(_LEADING_ZERO).any():  # "02139" is a code
            numbers_ = None
        else:
            numbers_ = pd.to_numeric(text).astype(np.float64)
            # "12.0" written for an integer column (pandas writes those with NaN so)
            integer = kind == "integer" or bool((numbers_ == np.round(numbers_)).all())
    if numbers_ is not None and not np.isfinite(numbers_.to_numpy()).all():
        numbers_ = None
    if numbers_ is None:
        observed = sorted(set(text.tolist()) if text is not None
                          else set(present.astype(str).tolist()))
        if len(observed) > max_categories:
            # undeclared, not declared categorical: the release's DP decision may
            # then find numbers or dates in it (a declared kind would forbid it)
            note = (f"{name!r} has more than {max_categories} values: left out of the draft "
                    "(undeclared, the DP release decides whether it holds numbers or dates "
                    "and which of its values to publish; --drop it if it is an identifier)")
            return None, note
        return ColumnDeclaration(name, "categorical", "str", categories=tuple(observed),
                                 no_missing=no_missing), note
    dtype = "int64" if integer else "float64"
    cast = int if integer else float
    distinct = np.unique(numbers_.to_numpy())
    if len(distinct) <= max_numeric_categories:
        return ColumnDeclaration(name, "categorical", dtype,
                                 categories=tuple(cast(v) for v in distinct),
                                 no_missing=no_missing), note
    shares = numbers_.value_counts(normalize=True)
    special = sorted(cast(v) for v, share in shares.items() if share >= point_mass_share)
    spread = numbers_[~numbers_.isin(special)].to_numpy()
    if spread.size and distinct[-1] > distinct[0]:
        counts, _ = np.histogram(spread, bins=DRAFT_BINS, range=(distinct[0], distinct[-1]))
        if counts.max() > DRAFT_CROWDED_SHARE * spread.size:
            note = (f"{name!r} is skewed (most of its values fall in one of {DRAFT_BINS} "
                    "equal bins between its minimum and maximum): left out of the draft, "
                    "the DP release bins it by DP quantiles; declared \"bounds\" would bin "
                    "it in equal widths (add them, with \"n_bins\", only if its public "
                    "range suits equal bins)")
            return None, note
    decimals = _decimals(text) if text is not None and not integer else None
    return ColumnDeclaration(name, "numeric", dtype,
                             bounds=(cast(distinct[0]), cast(distinct[-1])),
                             special_values=tuple(special) or None, decimals=decimals,
                             no_missing=no_missing), note


def draft_declaration(data, *, sep=None, na_values=("",), columns=None, drop=None,
                      header=True, encoding="utf-8", max_categories=100,
                      max_numeric_categories=32,
                      point_mass_share=0.05, notes=None):
    """A declaration drafted from the data, for the data owner to review and edit.

    Everything in it comes from the private values and is published without
    differential privacy by every release that uses it (see
    :data:`DRAFT_WARNING`): it is a starting point the owner edits into
    public knowledge, the explicit counterpart of the DP discovery that
    undeclared columns get.

    Parameters
    ----------
    data : DataFrame, or str or path-like
        A table, or a CSV file read as :func:`read_csv` reads it.
    sep, na_values, columns, drop, header, encoding
        How to read a CSV file (as in :func:`read_csv`).
    max_categories : int, default=100
        Text columns with at most this many values get them as
        ``categories``; the others are left out of the draft (undeclared: the
        DP release decides whether they hold numbers or dates, and finds their
        values).
    max_numeric_categories : int, default=32
        Numeric columns with at most this many values are declared
        categorical with those values (exact, no bins); the others numeric
        with their observed minimum and maximum as ``bounds``, but for a
        skewed column (more than half of its values, point masses apart, in
        one of ten equal bins between them), left out with a note:
        declared bounds bin a column in equal widths, an undeclared one gets
        DP quantile bins.
    point_mass_share : float, default=0.05
        Values of a numeric column held by at least this share of its
        records become ``special_values`` (bins of their own).
    notes : list, default=None
        If a list, one line is appended per column whose draft needs a word
        (categories left out).  A DataFrame's column whose values are neither
        all text nor all numbers (dates, durations, periods, intervals, mixed
        types) is left out with a note: a schema declares categories by their
        text, which such values never equal.

    Returns
    -------
    Declaration
        In the format of :func:`load_declaration`: text columns (codes with
        leading zeros included) as ``"str"`` categories, numbers as ``int64``
        or ``float64`` (with ``decimals`` for a file's decimal numbers), each
        complete column with ``no_missing``; ``missing_values`` as read.

    Examples
    --------
    >>> import json, pandas as pd
    >>> from dpsynth.io import DRAFT_WARNING, draft_declaration
    >>> frame = pd.DataFrame({"zip": ["02139", "10001"] * 20, "age": range(40)})
    >>> draft = draft_declaration(frame)
    >>> draft["zip"].categories, draft["age"].bounds
    (('02139', '10001'), (0, 39))
    >>> document = {"_warning": DRAFT_WARNING, **draft.to_dict()}  # json.dump it
    """
    for value, what in ((max_categories, "max_categories"),
                        (max_numeric_categories, "max_numeric_categories")):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise ValueError(f"{what} must be a non-negative integer; got {value!r}")
    if not 0 < point_mass_share <= 1:
        raise ValueError(f"point_mass_share must be in (0, 1]; got {point_mass_share!r}")
    if isinstance(data, pd.DataFrame):
        frame, missing = data, None
        if columns is not None or drop is not None:
            frame = frame[_select([str(c) for c in frame.columns], columns, drop,
                                  "the table")]
    else:
        if isinstance(na_values, str):
            na_values = (na_values,)
        frame = read_csv(data, sep=sep, na_values=na_values, columns=columns, drop=drop,
                         header=header, encoding=encoding)
        missing = tuple(dict.fromkeys(na_values))
    drafted = []
    for name in frame.columns:
        column, note = _draft_column(str(name), frame[name], max_categories,
                                     max_numeric_categories, point_mass_share)
        if column is not None:
            drafted.append(column)
        if note is not None and notes is not None:
            notes.append(note)
    return Declaration(tuple(drafted), missing)
