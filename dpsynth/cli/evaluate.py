"""``dpsynth evaluate``: fidelity of synthetic records to the real ones."""

import argparse
import sys

import numpy as np
import pandas as pd

from .. import io
from ..preprocessing import TableEncoder
from ..report import binned_view, fidelity_summary, write_report
from ..utils._numbers import NUMBER_FORMATS, parse_formatted
from ..utils._temporal import DATE_FORMATS, format_dates, parse_dates
from . import _common
from .sample import load_aggregates

__all__ = ["release_declaration", "run"]

_NOTE_NAMES = 10  # column names a note lists before 'and N more'


def _dtype_name(dtype):
    if isinstance(dtype, pd.CategoricalDtype):
        dtype = dtype.categories.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_integer_dtype(dtype):
        return "int64"
    if pd.api.types.is_float_dtype(dtype):
        return "float64"
    return "str"


def release_declaration(encoder):
    """How to read tables compared through a release: the dtypes of its public schema.

    Parameters
    ----------
    encoder : TableEncoder
        ``aggregates.encoder`` (rebuilt from the public schema).

    Returns
    -------
    dpsynth.io.Declaration
        Binned columns as numeric (with the range of their public edges),
        the others as categorical in the dtype of their released values.
    """
    columns = []
    for column in encoder.schema_:
        if column.binning is not None and column.binning.is_text:
            # a text column holding numbers and codes: read as text, binned on encoding
            columns.append(io.ColumnDeclaration(column.name, "categorical", "str"))
        elif column.binning is not None:
            edges = column.binning.edge_array
            integer = column.binning.integer
            high = edges[-1] - 1 if integer else edges[-1]
            low, high = (int(edges[0]), int(high)) if integer else (edges[0], high)
            points = column.binning.points  # special values may lie outside the edges
            if integer:
                points = tuple(int(v) for v in points)
            columns.append(io.ColumnDeclaration(column.name, "numeric",
                                                "int64" if integer else "float64",
                                                bounds=(low, high),
                                                special_values=points or None))
        else:
            columns.append(io.ColumnDeclaration(column.name, "categorical",
                                                _dtype_name(column.dtype)))
    return io.Declaration(tuple(columns))


def _encoding(args, path):
    """``--encoding`` for the real table; UTF-8 for the synthetic one (dpsynth wrote it)."""
    return "utf-8" if path == args.synthetic and path != args.real else args.encoding


def _header(args, path):
    try:
        names = io.read_header(path, sep=args.sep, header=not args.no_header,
                               encoding=_encoding(args, path))
    except ValueError as exc:
        raise _common.CommandError(_common.one_line(exc)) from None
    return names


def _compared_columns(args, required=None):
    """The columns compared: those both tables hold after ``--columns``/``--drop``.

    The two files come from different commands (the real table often has an
    identifier the synthesizing command dropped), so ``--drop`` leaves out
    the named columns from whichever table holds them, and columns only one
    table holds are left out with a note.  ``--columns`` names columns both
    must hold.  ``required``: columns both must hold (a release's).
    """
    headers = {path: _header(args, path) for path in (args.real, args.synthetic)}
    if args.drop:
        unknown = [c for c in args.drop if not any(c in h for h in headers.values())]
        if unknown:
            raise _common.CommandError(f"--drop names column(s) {unknown} that neither "
                                       f"{args.real} nor {args.synthetic} has")
    kept = {}
    for path, names in headers.items():
        if args.columns is not None:
            absent = [c for c in args.columns if c not in names]
            if absent:
                raise _common.CommandError(f"--columns names column(s) {absent} that "
                                           f"{path} does not have; "
                                           f"{io.column_list(names)}")
            kept[path] = list(args.columns)
        else:
            kept[path] = [c for c in names if c not in (args.drop or ())]
    real, synth = kept[args.real], kept[args.synthetic]
    for path, names in kept.items():
        absent = [c for c in (required or ()) if c not in names]
        if absent:
            raise _common.CommandError(f"{path} does not have the column(s) {absent} of the "
                                       f"release {args.aggregates}")
    compared = [c for c in (required or real) if c in real and c in synth]
    if not compared:
        raise _common.CommandError(f"{args.real} and {args.synthetic} have no column in "
                                   f"common; {io.column_list(real)} and "
                                   f"{io.column_list(synth).replace('the columns are ', '')}")
    only = [(f"only in {path}", [c for c in names if c not in compared])
            for path, names in kept.items()]
    only = [f"{', '.join(names)} ({where})" for where, names in only if names]
    if only:
        print(f"dpsynth evaluate: note: comparing the {len(compared)} column(s) both tables "
              f"hold; left out {'; '.join(only)}", file=sys.stderr)
    return compared


def _read(args, path, declaration, compared, origins=None):
    """``path`` read with ``--columns`` set to the compared columns."""
    return _common.read_table(
        argparse.Namespace(**{**vars(args), "columns": compared, "drop": None,
                              "encoding": _encoding(args, path)}), path,
        declaration, origins)


def _print_fidelity(summary):
    lengths = list(summary.tvd.index)
    by_length = summary.by_length.set_index("length")
    label = 26
    print(" " * label + "".join(f"{k}-way".rjust(9) for k in lengths))
    rows = [("mean TVD", [f"{summary.tvd[k]:.4f}" for k in lengths]),
            ("suppressed combinations", [f"{by_length.suppressed_pct[k]:.1f}%" for k in lengths]),
            ("fabricated combinations", [f"{by_length.fabricated_pct[k]:.1f}%" for k in lengths])]
    for name, cells in rows:
        print(name.ljust(label) + "".join(cell.rjust(9) for cell in cells))
    if summary.k_marginal is not None:
        print(f"k-marginal score (NIST CRC, 2-way): {summary.k_marginal:.1f} / 1000")
    if summary.sampled:
        print(f"(marginals, score and combinations {summary.sampling_note()})")
    for row in summary.numeric.itertuples(index=False):
        print(f"{row[0]}: Wasserstein-1 / range {row[1]:.4f} (original scale)")
    for row in summary.special_shares.itertuples(index=False):
        print(f"{row.column} = {row.value:g}: real share {row.real:.4f}, synthetic "
              f"{row.synthetic:.4f}")


def _tables_through_release(args):
    aggregates = load_aggregates(args.aggregates)
    declaration = release_declaration(aggregates.encoder)
    markers = tuple(dict.fromkeys(("", *(args.na_values or ()))))
    declaration = io.Declaration(declaration.columns, markers)
    names = _compared_columns(args, required=aggregates.column_names)
    real = _read(args, args.real, declaration, names)
    synth = _read(args, args.synthetic, declaration, names)
    try:  # both tables must bin under the release's schema
        binned_view(real, aggregates.encoder)
        binned_view(synth, aggregates.encoder)
    except (ValueError, TypeError) as exc:
        raise _common.CommandError(_common.one_line(exc)) from None
    return real, synth, aggregates


def _tables_with_bounds(args):
    declaration, origins = _common.build_declaration(args)
    compared = _compared_columns(args)
    undeclared = [c for c in declaration.names if c not in compared
                  and origins.get(c) != "--schema"]
    if undeclared:
        name = undeclared[0]
        held = [p for p in (args.real, args.synthetic) if name in _header(args, p)]
        what = (f"declares the column {name!r}, which only {held[0]} holds" if held
                else f"names the unknown column {name!r}")
        raise _common.CommandError(f"{origins[name]} {what}; {io.column_list(compared)}")
    real = _read(args, args.real, declaration, compared)
    synth = _read(args, args.synthetic, declaration, compared)
    real, synth = _quantile_binned(real, synth, declaration, args.n_bins)
    used = io.Declaration(tuple(c for c in declaration.columns
                                if c.name in real.columns and c.kind == "numeric"))
    encoder = None
    if used.columns:
        try:
            params = used.encoder_params()
            encoder = TableEncoder(n_bins=args.n_bins, **params).fit(real[used.names])
            binned_view(synth, encoder)
        except ValueError as exc:
            raise _common.CommandError(_common.one_line(exc)) from None
    return real, synth, encoder


def _quantile_binned(real, synth, declaration, n_bins):
    """``real`` and ``synth`` with each undeclared column of numbers with few values
    spelt one way (``"2.0"`` and ``"2"`` are one value), and each with many values
    (more than a categorical comparison can show, such as an amount or a
    many-valued count, dates written as text) replaced by the interval of the real
    table's ``n_bins`` quantiles that holds each value (open at both ends; a field
    that is no number keeps its text), with a note naming them.

    An evaluation is computed from the real table and is no release, so its
    quantiles may bin it: each value as a category of its own would make every
    marginal of such a column differ entirely.
    """
    binned, spelled = {}, {}
    for name in real.columns:
        if name in declaration:
            continue
        read = _number_reader(real[name])
        if read is None:
            continue
        numbers = pd.Series(read(real[name]))
        if numbers.nunique() <= _common.MAX_CATEGORIES:
            if read.numbers and not real[name].dropna().astype(str).str.match(
                    io._LEADING_ZERO).any():  # "02139" is a code: compared as written
                spelled[name] = read
            continue
        edges = np.unique(np.quantile(numbers.dropna().to_numpy(dtype=np.float64),
                                      np.linspace(0.0, 1.0, n_bins + 1)))
        binned[name] = (read, edges)
    if spelled:  # "2.0" (pandas writes whole numbers so beside NaN) is the value 2
        real, synth = (_numbers_spelled(frame, spelled) for frame in (real, synth))
    if not binned:
        return real, synth
    out = []
    for frame in (real, synth):
        frame = frame.copy()
        for name, (read, edges) in binned.items():
            numbers = read(frame[name])
            k = np.clip(np.searchsorted(edges, numbers, side="right") - 1, 0,
                        max(edges.size - 2, 0))
            labels = np.array(_interval_labels(edges, read.spell), dtype=object)
            values = frame[name].astype(object).to_numpy()
            values = np.where(np.isnan(numbers), values, labels[k])
            frame[name] = pd.Series(values, index=frame.index, dtype=object)
        out.append(frame)
    names = list(binned)
    shown = ", ".join(names[:_NOTE_NAMES]) + (
        f" and {len(names) - _NOTE_NAMES} more" if len(names) > _NOTE_NAMES else "")
    print(f"dpsynth evaluate: note: compared by the real table's {n_bins} quantiles (not "
          f"declared, many values): {shown}", file=sys.stderr)
    return tuple(out)


def _numbers_spelled(frame, readers):
    """``frame`` with the fields of the columns of ``readers`` (name: the reader of
    :func:`_number_reader`) that are numbers spelt one way (``"2.0"``, ``"2"`` and
    ``"2,0"`` as ``"2"``, ``"2.50"`` as ``"2.5"``); other fields as they are."""
    frame = frame.copy()
    for name, read in readers.items():
        values = frame[name].astype(object).to_numpy()
        numbers = np.asarray(read(frame[name]), dtype=np.float64)
        spelt = np.array([_spell_number(v) for v in numbers], dtype=object)
        frame[name] = pd.Series(np.where(np.isfinite(numbers), spelt, values),
                                index=frame.index, dtype=object)
    return frame


def _spell_number(value):
    if not np.isfinite(value):
        return None
    return str(int(value)) if value == np.round(value) and abs(value) < 2 ** 53 \
        else repr(float(value))


def _number_reader(series):
    """How to read ``series`` as numbers for :func:`_quantile_binned`: a function of a
    column giving float64 (NaN where a field is no number), with a ``spell``
    attribute writing an edge; None when the column is neither numbers nor dates.

    Numbers are plain (``"12.5"``) or in one format of the public list
    :data:`~dpsynth.utils._numbers.NUMBER_FORMATS` (``"12,5"``, ``"$1,234"``,
    ``"7%"``, as ``dpsynth synthesize`` finds them): the way that reads the most
    present fields, when it reads more than half of them (the other fields,
    such as ``"-"`` or ``"n/a"`` for a missing amount, keep their text); dates
    are in one format of the public list that reads every present field.
    """
    present = series.dropna()
    if present.empty:
        return None
    if io.looks_numeric(series) is not None:
        return _numbers_reader()
    if not all(isinstance(v, str) for v in present.head(1000)):
        return None
    best, most = None, len(present) / 2.0  # more than half of the present fields
    for read in map(_numbers_reader, (None, *NUMBER_FORMATS)):
        n_read = int(np.count_nonzero(~np.isnan(read(present))))
        if n_read > most:
            best, most = read, n_read
    if best is not None:
        return best
    for fmt in DATE_FORMATS:  # in the public order: the first that reads every field
        if not np.isnan(parse_dates(present, fmt)).any():
            def read(column, fmt=fmt):
                return parse_dates(column, fmt)
            read.spell = lambda value, fmt=fmt: format_dates([value], fmt)[0]
            read.numbers = False
            return read
    return None


def _numbers_reader(fmt=None):
    """The reader of numbers written plain (``fmt`` None) or in ``fmt``; an edge of a
    label is spelt as a plain number."""
    def read(column):
        if fmt is None:
            return pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
        return parse_formatted(column, fmt)
    read.spell = lambda value: f"{value:g}"
    read.numbers = True
    return read


def _interval_labels(edges, spell):
    """Labels of the intervals between ``edges``, the first and last open."""
    if edges.size < 2:
        return ["(-inf, inf)"]
    inner = [spell(v) for v in edges[1:-1]]
    lows, highs = ["-inf"] + inner, inner + ["inf"]
    return [f"{'(' if k == 0 else '['}{low}, {high})" for k, (low, high) in
            enumerate(zip(lows, highs))]


def run(args):
    """Compare ``args.synthetic`` with ``args.real`` and print (and write) the report.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of the command (see ``dpsynth evaluate --help``).

    Returns
    -------
    int
        Exit status 0; errors raise :class:`~dpsynth.cli._common.CommandError`
        (or ``ValueError``/``OSError``), reported by :func:`dpsynth.cli.main`.
    """
    _common.check_inputs(args.real, args.synthetic)
    if args.aggregates:
        _common.check_inputs(args.aggregates, what="aggregates file")
    inputs = [args.real, args.synthetic] + ([args.aggregates] if args.aggregates else [])
    if args.report:
        _common.check_outputs([("--report", args.report)], inputs=inputs, force=args.force)
    if args.reporting_length < 1:
        raise _common.CommandError("--reporting-length must be at least 1")
    if args.aggregates:
        if args.bounds or args.schema or args.special_values:
            raise _common.CommandError(
                "--aggregates bins the tables with the release's public schema; leave "
                "out --bounds and --schema")
        real, synth, aggregates = _tables_through_release(args)
        privacy, encoder = aggregates.privacy, aggregates.encoder
    else:
        real, synth, encoder = _tables_with_bounds(args)
        aggregates = privacy = None
    print(f"fidelity of {args.synthetic} ({len(synth)} records) to {args.real} "
          f"({len(real)} records), {real.shape[1]} columns")
    if aggregates is not None:
        print(f"release {args.aggregates}: {_common.privacy_terms(privacy)}")
    if args.report:
        summary = write_report(real, synth, args.report, title=args.title,
                               reporting_length=args.reporting_length,
                               privacy=privacy, release=aggregates, encoder=encoder)
    else:
        summary = fidelity_summary(real, synth, reporting_length=args.reporting_length,
                                   encoder=encoder)
    _print_fidelity(summary)
    print("(lower TVD is better; computed from the real data: not a DP release)")
    if args.report:
        print(f"wrote the report to {args.report}")
    return 0
