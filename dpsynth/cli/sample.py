"""``dpsynth sample``: synthetic records from a released DP aggregates file."""

import numpy as np
import pandas as pd

from .. import io
from ..aggregates import DPAggregates
from ..synthesizer import DPMarginalSynthesizer
from ..utils._numbers import parse_formatted
from ..utils._temporal import DATE_OBJECTS, parse_dates
from . import _common, _distributed

__all__ = ["parse_where", "run"]


def load_aggregates(path):
    """Load and fully check an aggregates file (errors become one line)."""
    _common.check_inputs(path, what="aggregates file")
    try:
        return DPAggregates.load(path)
    except ValueError as exc:
        raise _common.CommandError(_common.one_line(exc)) from None


def _number(text, option, number_format=None):
    """A number of ``--where``: plain, or written in the column's ``number_format``."""
    if number_format is not None:
        number = parse_formatted(pd.Series([text], dtype=object), number_format)[0]
        if not np.isnan(number):
            return float(number)
    try:
        return float(text)
    except ValueError:
        written = "" if number_format is None else f" (plain or written as {number_format!r})"
        raise _common.CommandError(f"--where {option}: {text!r} is not a number"
                                   f"{written}") from None


def _dates(text, binning, option):
    """A date column's ``--where`` value: a code, a date in the column's format, or
    ``LO:HI`` dates (split at the ``:`` where both ends are dates or empty, since
    times hold ``:`` too)."""
    fmt = binning.date_format

    def as_object(part):  # a column of date or time objects: the ISO text's object
        try:
            value = pd.Timestamp(part)
        except (TypeError, ValueError):
            return None
        if value is pd.NaT:
            return None
        if fmt == "object:date":
            return value.date() if value == value.normalize() and value.tzinfo is None \
                else None
        if fmt == "object:timestamp-utc":
            return value.tz_localize("UTC") if value.tzinfo is None else value
        return value if value.tzinfo is None else None

    def is_date(part):
        if fmt in DATE_OBJECTS:
            return as_object(part) is not None
        return not np.isnan(parse_dates(pd.Series([part], dtype=object), fmt)[0])

    def value(part):
        return as_object(part) if fmt in DATE_OBJECTS else part

    if text in binning.codes:
        return text
    if is_date(text):
        return value(text)
    for at in [k for k, c in enumerate(text) if c == ":"]:
        low, high = text[:at], text[at + 1:]
        if all(not part or is_date(part) for part in (low, high)):
            return (value(low) if low else None, value(high) if high else None)
    written = (f"an ISO date or time of a {fmt!r} column" if fmt in DATE_OBJECTS
               else f"a date written as {fmt!r}")
    raise _common.CommandError(f"--where {option}: {text!r} is not {written}, "
                               f"a range LO:HI of them or one of the column's codes "
                               f"{list(binning.codes)}")


def parse_where(specs, schema):
    """``["race=Black", "age=30:40"]`` -> the ``conditions`` of ``sample``.

    ``COL=LO:HI`` on a numeric (binned) column is a range (an empty end is
    open); ``COL=VALUE`` a value, matched to the released values by their
    text (a number on a numeric column, plain or written in its number format,
    ``"$1,200"``); several ``--where`` on one column
    allow any of their values.
    """
    if not specs:
        return None
    conditions = {}
    for spec in specs:
        name, sep, text = spec.partition("=")
        if not sep or not name:
            raise _common.CommandError(f"--where takes COL=VALUE or COL=LO:HI; got {spec!r}")
        if name not in schema.names:
            raise _common.CommandError(f"--where {spec}: the release has no column {name!r}; "
                                       f"its columns are {schema.names}")
        column = schema[schema.names.index(name)]
        if column.binning is not None and column.binning.date_format is not None:
            value = _dates(text, column.binning, spec)
        elif column.binning is not None:
            fmt = column.binning.number_format
            if ":" in text:
                low, _, high = text.partition(":")
                value = (_number(low, spec, fmt) if low.strip() else None,
                         _number(high, spec, fmt) if high.strip() else None)
            elif column.binning.is_text and text in column.binning.codes:
                value = text  # a released text code of a column holding numbers
            else:
                value = _number(text, spec, fmt)
        else:
            by_text = {str(v): v for v in column.values}
            value = by_text.get(text, text)
        if name in conditions:
            if isinstance(value, tuple) or isinstance(conditions[name], tuple):
                raise _common.CommandError(f"--where: column {name!r} has a range and another "
                                           "condition; give one range per column")
            previous = conditions[name]
            conditions[name] = (previous if isinstance(previous, list) else [previous]) + [value]
        else:
            conditions[name] = value
    return conditions


def run(args):
    """Check the aggregates file completely, then sample it in chunks into one CSV.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of the command (see ``dpsynth sample --help``).

    Returns
    -------
    int
        Exit status 0; errors raise :class:`~dpsynth.cli._common.CommandError`
        (or ``ValueError``/``OSError``), reported by :func:`dpsynth.cli.main`.
    """
    _distributed.check_engine_options(args)
    parquet = _distributed.parquet_output(args, args.output)
    _common.check_inputs(args.aggregates, what="aggregates file")
    if parquet:
        _distributed.check_partition_output(args.output, args.force)
    else:
        _common.check_outputs([("--output", args.output)], inputs=[args.aggregates],
                              force=args.force)
        _common.check_records_output(args.output)
    _common.check_n_samples(args.n_samples)
    _common.check_n_jobs(args.n_jobs)
    aggregates = load_aggregates(args.aggregates)
    constraints = None
    if getattr(args, "schema", None):
        _common.check_inputs(args.schema, what="schema file")
        constraints = list(io.load_declaration(args.schema).constraints) or None
    synthesizer = DPMarginalSynthesizer.from_aggregates(
        aggregates, random_state=args.seed, n_jobs=args.n_jobs, constraints=constraints)
    _common.check_samplable(aggregates, args.aggregates)
    conditions = parse_where(getattr(args, "where", None), aggregates.schema)
    if conditions and parquet:
        raise _common.CommandError("--where writes CSV output; drop the Parquet output or "
                                   "the conditions")
    if conditions:
        written = _common.write_records(synthesizer, args.n_samples, args.output, args.seed,
                                        conditions=conditions)
    elif parquet:
        with _distributed.engine_client(args):
            written = _distributed.write_partitions(synthesizer, args.n_samples, args.output,
                                                    args.seed, args.partition_size,
                                                    args.force)
    else:
        _common.check_free_space(synthesizer, args.n_samples, args.output)
        written = _common.write_records(synthesizer, args.n_samples, args.output, args.seed)
    print(_common.aggregates_line(aggregates))
    print(f"released with {_common.privacy_terms(aggregates.privacy)}; "
          "sampling spends no more")
    print(f"wrote {written} synthetic records to {args.output}")
    return 0
