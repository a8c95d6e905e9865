"""Public constraints: business rules every synthetic record satisfies by construction.

A constraint is a rule the data owner declares about the table (``start <=
end``, ``pregnant == "yes"`` implies ``sex == "F"``, ``age`` in ``[0,
120]``, combinations of values that cannot occur).  Constraints are
**public**: they are part of the declaration, like the column names,
categories and bounds, so they must be written from knowledge of the domain,
never read off the private records.  They cost no privacy: ``sample``
conditions the released model on them (post-processing of the release, see
:mod:`dpsynth.sampling.conditional`), so every record satisfies them and the
other columns keep the model's distribution given them.

Pass them as ``DPMarginalSynthesizer(constraints=[...])``, or in a
declaration file (``"constraints": [{"kind": "inequality", "low": "start",
"high": "end"}, ...]``).  :func:`constraint_violations` counts the records of
a table that break each rule: on the real table, a report for the data
owner (not a DP release: do not publish it).

Kinds (the ``kind`` of their dictionary form in parentheses):

- :class:`AllowedCombinations` (``"allowed_combinations"``): only the listed
  combinations of values of some categorical columns occur.
- :class:`ForbiddenCombinations` (``"forbidden_combinations"``): the listed
  combinations never occur.
- :class:`Implication` (``"implication"``): a value of one column implies
  one of some values of another (a fixed combination).
- :class:`Inequality` (``"inequality"``): ``low <= high`` (or ``<``) between
  two numeric columns.
- :class:`ScalarRange` (``"range"``): a numeric column lies in ``[low, high]``.

A missing value satisfies every rule it takes part in (as in SDV).  A
column's *other* value (the values the release did not publish, see
``TableEncoder(other_label=...)``) is treated as the value it decodes to.
Its label (``"<other>"`` in text columns) is not one of the values a rule
names: a rule that restricts a column to named values
(:class:`AllowedCombinations`, the ``then_column`` of an :class:`Implication`
whose condition holds) never samples it there, and
:class:`ForbiddenCombinations` never forbids it; an other value without a
label (non-text columns) decodes to missing and satisfies every rule.  The
synthetic records therefore satisfy every rule as :func:`constraint_violations`
checks it.
"""

from dataclasses import dataclass, fields, replace
from numbers import Real

import numpy as np
import pandas as pd

from .sampling.conditional import _is_missing, overlapping_bins
from .utils._validation import label_name

__all__ = ["AllowedCombinations", "ForbiddenCombinations", "Implication", "Inequality",
           "ScalarRange", "check_constraints", "constraint_violations", "constraint_from_dict"]


def _is_number(value):
    return isinstance(value, (Real, np.number)) and not isinstance(value, (bool, np.bool_))


def _column_index(schema, name, kind):
    if name not in schema.names:
        raise ValueError(f"The {kind} constraint names the column {name!r}, which is not "
                         f"in the release; its columns are {schema.names}.")
    return schema.names.index(name)


def _categorical(schema, name, kind):
    j = _column_index(schema, name, kind)
    if schema[j].binning is not None:
        raise ValueError(f"The {kind} constraint needs categorical columns; {name!r} is "
                         "numeric (binned): use ScalarRange or Inequality on it.")
    return j


def _numeric(schema, name, kind):
    j = _column_index(schema, name, kind)
    if schema[j].binning is None:
        raise ValueError(f"The {kind} constraint needs numeric (binned) columns; {name!r} "
                         "is categorical.")
    return j


def _codes_of(schema, j, values):
    """Codes of ``values`` in column ``j``; values the release does not hold are dropped
    (a rule about a value that is never sampled is vacuous)."""
    column = schema[j]
    index = pd.Index(list(column.values), dtype=object)
    codes = []
    for value in values:
        if _is_missing(value):
            continue
        position = index.get_indexer(pd.Index([value], dtype=object))[0]
        if position >= 0:
            codes.append(int(position))
    return codes


def _frame_column(frame, name, kind):
    if name not in frame.columns:
        raise ValueError(f"The {kind} constraint names the column {name!r}, which the "
                         f"table does not have; its columns are {list(frame.columns)}.")
    return frame[name]


def _is_column(label):
    """Whether ``label`` can name a column: a string, or a number label (``0`` of
    ``pd.DataFrame(array)``, see :func:`~dpsynth.utils._validation.label_name`)."""
    return label_name(label) is not None


def _check_columns(columns, kind):
    if isinstance(columns, str) or not all(_is_column(c) for c in columns) \
            or len(columns) < 1 or len(set(columns)) != len(columns):
        raise ValueError(f"{kind}: columns must be a list of distinct column names; got "
                         f"{columns!r}.")


def _check_combinations(columns, combinations, kind):
    if isinstance(combinations, (str, bytes)) or not hasattr(combinations, "__iter__"):
        raise ValueError(f"{kind}: combinations must be a list of value tuples; got "
                         f"{combinations!r}.")
    out = []
    for combination in combinations:
        combination = tuple(combination) if isinstance(combination, (list, tuple)) \
            else (combination,)
        if len(combination) != len(columns):
            raise ValueError(f"{kind}: every combination has one value per column "
                             f"{list(columns)}; got {combination!r}.")
        out.append(combination)
    return out


class _Rule:
    """Shared machinery: the dictionary form and the prepared predicate."""

    kind = None

    def to_dict(self):
        out = {"kind": self.kind}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = [list(v) if isinstance(v, tuple) else v for v in value] \
                if isinstance(value, tuple) else value
        return out

    def referenced_columns(self):
        """The names of the columns the rule reads."""
        names = list(getattr(self, "columns", ()))
        names += [getattr(self, f.name) for f in fields(self) if f.name.endswith("column")]
        return names

    def named(self, labels):
        """The rule with the number labels of ``labels`` (``{name: label}``, a table's
        :func:`~dpsynth.utils._validation.column_labels`) replaced by their names, as
        the release names those columns (``0`` -> ``"0"``)."""
        if not labels:
            return self
        names = {label: name for name, label in labels.items()}

        def name(column):
            return column if isinstance(column, str) else names.get(column, column)

        changes = {f.name: name(getattr(self, f.name)) for f in fields(self)
                   if f.name.endswith("column")}
        if hasattr(self, "columns"):
            changes["columns"] = tuple(name(c) for c in self.columns)
        return replace(self, **changes)

    def violations(self, frame):
        """Number of records of ``frame`` that break the rule."""
        return int((~self.is_valid(frame)).sum())


class _CodeRule:
    """A prepared rule on codes only (the predicate interface of
    :mod:`dpsynth.sampling.conditional`)."""

    def __init__(self, masks=None, accept=None, numeric=(), redraw=None):
        self.masks = masks or {}
        self._accept = accept
        self.numeric = tuple(numeric)
        self.redraw = redraw

    def accept(self, codes, values):
        if self._accept is None:
            return np.ones(codes.shape[0], dtype=bool)
        return self._accept(codes, values)


def _combination_hits(schema, columns, combinations, codes):
    """Whether each record's codes in ``columns`` are one of ``combinations`` (codes)."""
    js = [schema.names.index(c) for c in columns]
    hit = np.zeros(codes.shape[0], dtype=bool)
    for combination in combinations:
        match = np.ones(codes.shape[0], dtype=bool)
        for j, code in zip(js, combination):
            match &= codes[:, j] == code
        hit |= match
    return hit


def _coded_combinations(schema, columns, combinations):
    js = [_categorical(schema, c, "combinations") for c in columns]
    out = []
    for combination in combinations:
        codes = [_codes_of(schema, j, [v]) for j, v in zip(js, combination)]
        if all(codes):
            out.append(tuple(c[0] for c in codes))
    return out


def _missing_codes(schema, j, codes):
    """Whether each code of column ``j`` decodes to a missing value: its missing
    code (``-1`` with ``missing="absent"``, else the code after the values and the
    other value), and its other value when that has no label (a column of a
    non-text dtype).  An other value with a label (``"<other>"``) is not missing:
    no rule names it, so it does not satisfy a rule that restricts the column."""
    column = schema[j]
    missing = (codes < 0) | (codes >= column.n_codes)
    if column.other and column.other_label is None:
        missing |= codes == len(column.values)
    return missing


def _missing_rows(codes, schema, columns):
    """Records with a missing value in one of ``columns`` (they satisfy every rule)."""
    missing = np.zeros(codes.shape[0], dtype=bool)
    for name in columns:
        j = schema.names.index(name)
        missing |= _missing_codes(schema, j, codes[:, j])
    return missing


def _frame_combinations(frame, columns, combinations, kind):
    series = [_frame_column(frame, c, kind) for c in columns]
    hit = np.zeros(len(frame), dtype=bool)
    missing = np.zeros(len(frame), dtype=bool)
    for s in series:
        missing |= s.isna().to_numpy()
    for combination in combinations:
        match = np.ones(len(frame), dtype=bool)
        for s, value in zip(series, combination):
            match &= (s.astype(object) == value).to_numpy(dtype=bool, na_value=False)
        hit |= match
    return hit, missing


class _CombinationRule(_Rule):
    """Rules on combinations of values of some categorical columns."""

    def __post_init__(self):
        name = type(self).__name__
        _check_columns(self.columns, name)
        object.__setattr__(self, "columns", tuple(self.columns))
        object.__setattr__(self, "combinations", tuple(
            _check_combinations(self.columns, self.combinations, name)))


@dataclass(frozen=True)
class AllowedCombinations(_CombinationRule):
    """Only these combinations of values of ``columns`` (categorical) occur.

    Parameters
    ----------
    columns : tuple of str
    combinations : tuple of tuple
        One value per column in each.
    """

    columns: tuple
    combinations: tuple
    kind = "allowed_combinations"

    def prepare(self, schema):
        coded = _coded_combinations(schema, self.columns, self.combinations)
        columns = self.columns

        def accept(codes, values):
            return (_combination_hits(schema, columns, coded, codes)
                    | _missing_rows(codes, schema, columns))
        return _CodeRule(accept=accept)

    def is_valid(self, frame):
        hit, missing = _frame_combinations(frame, self.columns, self.combinations,
                                           "allowed_combinations")
        return hit | missing


@dataclass(frozen=True)
class ForbiddenCombinations(_CombinationRule):
    """These combinations of values of ``columns`` (categorical) never occur."""

    columns: tuple
    combinations: tuple
    kind = "forbidden_combinations"

    def prepare(self, schema):
        coded = _coded_combinations(schema, self.columns, self.combinations)
        columns = self.columns
        return _CodeRule(accept=lambda codes, values: ~_combination_hits(
            schema, columns, coded, codes))

    def is_valid(self, frame):
        hit, _ = _frame_combinations(frame, self.columns, self.combinations,
                                     "forbidden_combinations")
        return ~hit


@dataclass(frozen=True)
class Implication(_Rule):
    """``column == value`` implies ``then_column`` in ``then_values`` (categorical).

    A fixed combination: e.g. ``Implication("pregnant", "yes", "sex", ["F"])``.
    """

    column: str
    value: object
    then_column: str
    then_values: tuple
    kind = "implication"

    def __post_init__(self):
        if not _is_column(self.column) or not _is_column(self.then_column) \
                or self.column == self.then_column:
            raise ValueError("Implication: column and then_column must be two different "
                             f"column names; got {self.column!r} and {self.then_column!r}.")
        values = self.then_values
        values = tuple(values) if isinstance(values, (list, tuple, set, frozenset)) \
            else (values,)
        if not values:
            raise ValueError("Implication: then_values lists no value.")
        object.__setattr__(self, "then_values", values)

    def prepare(self, schema):
        j = _categorical(schema, self.column, "implication")
        k = _categorical(schema, self.then_column, "implication")
        if_codes = _codes_of(schema, j, [self.value])
        then_codes = _codes_of(schema, k, self.then_values)

        def accept(codes, values):
            condition = np.isin(codes[:, j], if_codes)
            then = np.isin(codes[:, k], then_codes) | _missing_codes(schema, k, codes[:, k])
            return ~condition | then
        return _CodeRule(accept=accept)

    def is_valid(self, frame):
        first = _frame_column(frame, self.column, "implication")
        then = _frame_column(frame, self.then_column, "implication")
        condition = (first.astype(object) == self.value).to_numpy(dtype=bool, na_value=False)
        allowed = then.astype(object).isin(list(self.then_values)).to_numpy(dtype=bool)
        return ~condition | allowed | then.isna().to_numpy()

    def to_dict(self):
        return {"kind": self.kind, "column": self.column, "value": self.value,
                "then_column": self.then_column, "then_values": list(self.then_values)}


@dataclass(frozen=True)
class Inequality(_Rule):
    """``low_column <= high_column`` (``strict``: ``<``) between two numeric columns.

    The model holds the two columns' bins: a record whose bins order them
    keeps its in-bin values, a record whose bins overlap gets both in-bin
    values drawn again given the rule (uniform in-bin values conditioned on
    the order), and a record whose bins rule the order out is dropped, so
    the rule changes the bins' distribution only by what it rules out.
    """

    low_column: str
    high_column: str
    strict: bool = False
    kind = "inequality"

    def __post_init__(self):
        if not _is_column(self.low_column) or not _is_column(self.high_column) \
                or self.low_column == self.high_column:
            raise ValueError("Inequality: low_column and high_column must be two different "
                             f"column names; got {self.low_column!r}, {self.high_column!r}.")
        if not isinstance(self.strict, (bool, np.bool_)):
            raise ValueError(f"Inequality: strict must be True or False; got {self.strict!r}.")

    def prepare(self, schema):
        j = _numeric(schema, self.low_column, "inequality")
        k = _numeric(schema, self.high_column, "inequality")
        strict = bool(self.strict)

        def accept(codes, values):
            (low, low_missing), (high, high_missing) = values[j], values[k]
            ok = low < high if strict else low <= high
            return ok | low_missing | high_missing

        def redraw(codes, values, rng):
            _ordered_in_bins(schema, j, k, strict, codes, values, rng)
        return _CodeRule(accept=accept, numeric=(j, k), redraw=redraw)

    def is_valid(self, frame):
        low = _frame_column(frame, self.low_column, "inequality")
        high = _frame_column(frame, self.high_column, "inequality")
        a = low.to_numpy(dtype=np.float64, na_value=np.nan)
        b = high.to_numpy(dtype=np.float64, na_value=np.nan)
        with np.errstate(invalid="ignore"):
            ok = a < b if self.strict else a <= b
        return ok | np.isnan(a) | np.isnan(b)


def _bin_spans(schema, j, codes):
    """Continuous span ``[start, stop]`` of every code's values and whether it is an
    integer column (integer bins ``[e, e')`` hold the integers ``floor`` maps them to)."""
    binning = schema[j].binning
    edges = binning.edge_array
    points = np.asarray(binning.points, dtype=np.float64)
    n_int = binning.n_intervals
    safe = np.clip(codes, 0, n_int + points.size - 1)
    is_point = safe >= n_int
    interval = np.minimum(safe, n_int - 1)
    start = np.where(is_point, points[np.clip(safe - n_int, 0, max(points.size - 1, 0))]
                     if points.size else 0.0, edges[interval])
    stop = np.where(is_point, start, edges[interval + 1])
    return start, stop, binning.integer


def _ordered_pair(a1, b1, a2, b2, rng):
    """``u ~ U[a1, b1]``, ``v ~ U[a2, b2]`` drawn given ``u <= v`` (``a1 <= b2``).

    ``v`` has density proportional to ``P(u <= v)``: a ramp over ``[a1, b1]``,
    flat above; then ``u`` is uniform on ``[a1, min(b1, v)]``.  A span of
    width 0 is a point.
    """
    w1 = b1 - a1
    lo, hi = np.maximum(a2, a1), np.minimum(b2, b1)
    ramp = np.where((w1 > 0) & (hi > lo),
                    ((hi - a1) ** 2 - (lo - a1) ** 2) / (2 * np.where(w1 > 0, w1, 1)), 0.0)
    flat_start = np.maximum(a2, b1)
    flat = np.maximum(b2 - flat_start, 0.0)
    total = ramp + flat
    on_ramp = rng.random(a1.size) * np.where(total > 0, total, 1) < ramp
    root = np.sqrt((lo - a1) ** 2 + rng.random(a1.size) * ((hi - a1) ** 2 - (lo - a1) ** 2))
    v = np.where(on_ramp, a1 + root, flat_start + rng.random(a1.size) * flat)
    v = np.where(total > 0, v, np.maximum(a2, a1))  # a point, or spans meeting at a point
    v = np.clip(v, a2, b2)
    u = a1 + rng.random(a1.size) * (np.minimum(b1, v) - a1)
    return np.minimum(u, v), v


def _ordered_in_bins(schema, j, k, strict, codes, values, rng):
    """Redraw, in place, the in-bin values of columns ``j <= k`` where their bins overlap.

    Records whose bins order the columns whatever the in-bin values keep
    them; records whose bins overlap get both values drawn again given the
    order (uniform in-bin values conditioned on ``low <= high``), so the
    rule does not change which bins the model gives them; records whose bins
    rule the order out are left to ``accept`` (rejected).
    """
    (low, low_missing), (high, high_missing) = values[j], values[k]
    a1, b1, integer_low = _bin_spans(schema, j, codes[:, j])
    a2, b2, integer_high = _bin_spans(schema, k, codes[:, k])
    if integer_low:  # integer intervals [e, e') hold e .. e' - 1
        b1 = np.where(b1 > a1, b1 - 1e-9, b1)
    if integer_high:
        b2 = np.where(b2 > a2, b2 - 1e-9, b2)
    shift = 1.0 if strict and integer_high and integer_low else 0.0
    b2s, a2s = b2 - shift, a2 - shift
    partial = (~low_missing & ~high_missing & (b1 > a2s) & (a1 <= b2s))
    rows = np.flatnonzero(partial)
    if not rows.size:
        return
    u, v = _ordered_pair(a1[rows], b1[rows], a2s[rows], b2s[rows], rng)
    v = v + shift
    if integer_low:
        u = np.floor(u)
    if integer_high:
        v = np.floor(v)
    for name, column, drawn in (("low", j, u), ("high", k, v)):
        decimals = schema[column].binning.decimals
        if decimals is not None and not schema[column].binning.integer:
            drawn = np.round(drawn, decimals)
        target = low if name == "low" else high
        target[rows] = drawn.astype(target.dtype)


@dataclass(frozen=True)
class ScalarRange(_Rule):
    """Numeric ``column`` lies in ``[low, high]`` (``None``: unbounded)."""

    column: str
    low: float = None
    high: float = None
    kind = "range"

    def __post_init__(self):
        if not _is_column(self.column):
            raise ValueError(f"ScalarRange: column must be a column name; got {self.column!r}.")
        for name in ("low", "high"):
            value = getattr(self, name)
            if value is not None and not _is_number(value):
                raise ValueError(f"ScalarRange: {name} must be a number or None; got "
                                 f"{value!r}.")
        if self.low is not None and self.high is not None and not self.low <= self.high:
            raise ValueError(f"ScalarRange: low must be <= high; got ({self.low}, {self.high}).")

    def prepare(self, schema):
        j = _numeric(schema, self.column, "range")
        low = -np.inf if self.low is None else float(self.low)
        high = np.inf if self.high is None else float(self.high)
        mask = overlapping_bins(schema, j, low, high)
        mask[len(schema[j].values):] = True  # the missing value satisfies it

        def accept(codes, values):
            value, missing = values[j]
            return missing | ((value >= low) & (value <= high))
        return _CodeRule(masks={j: mask}, accept=accept, numeric=(j,))

    def is_valid(self, frame):
        values = _frame_column(frame, self.column, "range").to_numpy(
            dtype=np.float64, na_value=np.nan)
        low = -np.inf if self.low is None else float(self.low)
        high = np.inf if self.high is None else float(self.high)
        return np.isnan(values) | ((values >= low) & (values <= high))


_KINDS = {cls.kind: cls for cls in (AllowedCombinations, ForbiddenCombinations, Implication,
                                    Inequality, ScalarRange)}


def constraint_from_dict(spec):
    """A constraint from its dictionary form (``{"kind": ..., fields}``)."""
    if isinstance(spec, _Rule):
        return spec
    if not isinstance(spec, dict) or "kind" not in spec:
        raise ValueError(f"A constraint must be an object with a 'kind' (one of "
                         f"{sorted(_KINDS)}); got {spec!r}.")
    kind = spec["kind"]
    if kind not in _KINDS:
        raise ValueError(f"Unknown constraint kind {kind!r}; use one of {sorted(_KINDS)}.")
    cls = _KINDS[kind]
    names = {f.name for f in fields(cls)}
    extra = set(spec) - names - {"kind"}
    if extra:
        raise ValueError(f"Constraint {kind!r} has unknown field(s) {sorted(extra)}; its "
                         f"fields are {sorted(names)}.")
    try:
        return cls(**{k: v for k, v in spec.items() if k != "kind"})
    except TypeError as exc:
        raise ValueError(f"Constraint {kind!r}: {exc}") from None


def check_constraints(constraints):
    """The ``constraints`` parameter as a list of constraint objects (dicts converted)."""
    if constraints is None:
        return []
    if isinstance(constraints, (str, bytes, dict)) or not hasattr(constraints, "__iter__"):
        raise TypeError("constraints must be a list of constraints (e.g. "
                        "dpsynth.constraints.Inequality('start', 'end')) or None; got "
                        f"{type(constraints).__name__}.")
    return [constraint_from_dict(c) for c in constraints]


def check_constraint_columns(constraints, names):
    """Raise ``ValueError`` if a constraint names a column not in ``names``."""
    for constraint in check_constraints(constraints):
        unknown = [c for c in constraint.referenced_columns() if c not in names]
        if unknown:
            raise ValueError(f"The constraint {constraint!r} names the column(s) {unknown}, "
                             f"which the table does not have; its columns are {list(names)}.")


def constraint_violations(X, constraints):
    """Number of records of ``X`` that break each constraint.

    Run on the real table, it tells the data owner whether the declared
    rules hold (a rule the real data break often would change the
    synthetic distribution).  The counts are computed from the records: they
    are **not** differentially private; keep them out of any release.

    Returns
    -------
    pandas.DataFrame
        One row per constraint: ``constraint`` (its dictionary form as
        text), ``violations`` and ``share`` of the records.
    """
    if not isinstance(X, pd.DataFrame):
        raise TypeError(f"X must be a DataFrame; got {type(X).__name__}.")
    rows = []
    for constraint in check_constraints(constraints):
        count = constraint.violations(X)
        rows.append({"constraint": repr(constraint), "violations": count,
                     "share": count / len(X) if len(X) else 0.0})
    return pd.DataFrame(rows, columns=["constraint", "violations", "share"])
