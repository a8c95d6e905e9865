"""Shared pieces of the commands: errors, input and output checks, encoders, summaries.

Everything that can fail is checked before any privacy budget is spent:
the outputs (directory exists and is writable, outputs distinct from each
other and from the inputs, ``--force`` for existing files), the inputs
(readable, parseable, every declared column present and of its type,
values inside declared bounds and categories) and the options.  Messages
printed on a release path never contain a count or a value computed from
the private data (only DP outputs and public parameters).
"""

import glob
import json
import math
import os
import shutil
import tempfile
from dataclasses import replace

import numpy as np
import pandas as pd

from .. import accounting, io
from ..engines import is_dask_collection
from ..preprocessing import TableEncoder
from ..preprocessing._numeric import default_decimals
from ..synthesizer import DPMarginalSynthesizer
from ..utils._files import atomic_write, output_target
from ..utils._progress import log_progress, muted_progress
from ..utils._resources import format_bytes

__all__ = ["CHUNK_SIZE", "CommandError", "aggregates_line", "as_table",
           "build_declaration", "check_inputs", "check_n_jobs", "check_n_samples",
           "check_outputs", "check_privacy_options", "check_samplable",
           "encoder", "fit", "load_categories", "one_line", "parse_bounds", "privacy_terms",
           "read_table", "save_aggregates", "write_records"]

CHUNK_SIZE = 100_000  # synthetic records sampled and written at a time
MAX_CATEGORIES = 32  # above this, an undeclared numeric-looking column is no category


class CommandError(Exception):
    """Bad input, reported as one line on stderr with exit status 1."""


def one_line(exc):
    """The message of ``exc`` on one line (command-line spelling for file errors)."""
    text = exc.for_cli() if isinstance(exc, io.InputFileError) else str(exc)
    return " ".join(text.split())


# ------------------------------------------------------------ files
def check_inputs(*paths, what="input file", engines=False):
    """Each path exists, is a file and can be read.

    Parameters
    ----------
    *paths : str
    what : str, default="input file"
        How to call the files in the error message.
    engines : bool, default=False
        Whether the command has ``--engine dask`` (then a Parquet file or a pattern
        of files is refused with that hint).

    Raises
    ------
    CommandError
    """
    for path in paths:
        if engines and path.lower().endswith((".parquet", ".pq")):
            raise CommandError(f"{path} is a Parquet file; this engine reads CSV: pass "
                               "--engine dask to read Parquet files")
        if not os.path.exists(path):
            if engines and glob.has_magic(path):
                raise CommandError(f"{what} not found: {path} (a pattern of files is read "
                                   "with --engine dask)")
            raise CommandError(f"{what} not found: {path}")
        if os.path.isdir(path):
            raise CommandError(f"{path} is a directory, not a file")
        if not os.access(path, os.R_OK):
            raise CommandError(f"cannot read {path}: permission denied")


def _same_file(a, b):
    if os.path.abspath(a) == os.path.abspath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _probe_directory(directory, path):
    """Create and remove a file in ``directory``: the test ``atomic_write`` will pass.

    ``os.access`` alone is not enough: it says yes to root for ``/proc`` and
    for a read-only file system."""
    try:
        descriptor, probe = tempfile.mkstemp(prefix=".dpsynth-probe.", suffix=".tmp",
                                             dir=directory)
    except OSError as exc:
        raise CommandError(f"cannot write to the directory of output {path}: "
                           f"{exc.strerror or one_line(exc)}") from None
    os.close(descriptor)
    os.unlink(probe)


#: Names of formats the records output is not: ``--output`` writes CSV text (Parquet
#: partitions only with ``--engine dask``), so such a name would hold something else.
_NOT_CSV_SUFFIXES = (".parquet", ".pq", ".feather", ".arrow", ".orc", ".xlsx", ".xls",
                     ".json", ".pkl", ".pickle")


def check_records_output(path):
    """Refuse a records output named as a format it would not be (``out.parquet``)."""
    if path.lower().endswith(_NOT_CSV_SUFFIXES):
        suffix = path[path.rfind("."):]
        hint = (" or pass --engine dask to write Parquet partitions to a directory"
                if suffix.lower() in (".parquet", ".pq") else "")
        raise CommandError(f"--output {path}: records are written as CSV text, not "
                           f"{suffix}; name the output .csv{hint}")


def check_outputs(outputs, *, inputs=(), force=False):
    """Refuse outputs that would fail or destroy something, before any work is done.

    A character device or named pipe (``/dev/null``) is written through and
    needs no ``--force``: no file is replaced.  A symbolic link is followed.

    Parameters
    ----------
    outputs : list of (str, str)
        ``(flag, path)`` of every output the command will write.
    inputs : sequence of str
        Files the command reads: never overwritten, even with ``force``.
    force : bool
        Whether existing outputs may be replaced.
    """
    for i, (flag, path) in enumerate(outputs):
        target, kind = output_target(path)
        for other_flag, other in outputs[:i]:
            if kind != "stream" and _same_file(path, other):
                raise CommandError(f"{other_flag} and {flag} must be different files")
        for source in inputs:
            if _same_file(path, source):
                raise CommandError(f"{flag} {path} is also an input; write the output to "
                                   "another file (inputs are never overwritten)")
        if kind == "directory":
            raise CommandError(f"output {path} is a directory")
        if kind == "device":
            raise CommandError(f"output {path} is a block device or socket; write to a "
                               "file")
        if kind == "stream":
            if not os.access(path, os.W_OK):
                raise CommandError(f"cannot write to output {path}: permission denied")
            continue
        directory = os.path.dirname(target)
        if not os.path.isdir(directory):
            raise CommandError(f"directory of output {path} does not exist")
        if not os.access(directory, os.W_OK | os.X_OK):
            raise CommandError(f"cannot write to the directory of output {path}: "
                               "permission denied")
        if kind == "file" and not force:
            raise CommandError(f"output {path} exists; pass --force to overwrite it")
        _probe_directory(directory, path)


def save_aggregates(aggregates, path):
    """Save DP aggregates atomically.

    Parameters
    ----------
    aggregates : DPAggregates
    path : str
        ``.csv`` writes the CSV form, anything else JSON.
    """
    file_format = "csv" if path.lower().endswith(".csv") else "json"
    with atomic_write(path) as temporary:
        aggregates.save(temporary, format=file_format)


def as_table(sample):
    """``sample``'s output as one DataFrame (a target column joined back).

    Parameters
    ----------
    sample : DataFrame or tuple of (DataFrame, Series)

    Returns
    -------
    DataFrame
    """
    if isinstance(sample, tuple):
        features, target = sample
        return pd.concat([features, target], axis=1)
    return sample


def write_records(synthesizer, n_samples, path, seed, *, chunk_size=None, conditions=None):
    """Sample ``n_samples`` records chunk by chunk into one CSV file, atomically.

    Each chunk of at most ``chunk_size`` records is drawn with its own child
    stream of ``np.random.SeedSequence(seed)`` and appended to the file, so
    memory does not grow with ``n_samples`` and a seed gives the same file
    whatever the memory.  The file appears only once complete.

    Parameters
    ----------
    synthesizer : DPMarginalSynthesizer
        Fitted (or built with ``from_aggregates``).
    n_samples : int or None
        None: the DP record count.
    path : str
    seed : int or None
        None: OS entropy.
    chunk_size : int, default=None
        None: :data:`CHUNK_SIZE`.
    conditions : dict or None, default=None
        Passed to ``sample``: every record satisfies them; ``n_samples=None``
        is then the model's expected number of matching records.

    Returns
    -------
    int
        Number of records written.
    """
    chunk_size = CHUNK_SIZE if chunk_size is None else chunk_size
    if n_samples is None and conditions:  # the conditional sub-population's size
        n_samples = len(synthesizer.sample(None, conditions=conditions, random_state=seed))
    n_samples = synthesizer.n_records_ if n_samples is None else n_samples
    n_chunks = max(1, math.ceil(n_samples / chunk_size))
    streams = np.random.SeedSequence(seed).spawn(n_chunks)
    written = 0
    with atomic_write(path) as temporary:
        with open(temporary, "w", encoding="utf-8", newline="") as handle:
            for i, stream in enumerate(streams):
                size = min(chunk_size, n_samples - written)
                state = np.random.RandomState(np.random.MT19937(stream))
                with muted_progress("sampling"):  # one line per chunk, below
                    chunk = as_table(synthesizer.sample(size, random_state=state,
                                                        conditions=conditions))
                chunk.to_csv(handle, index=False, header=i == 0, lineterminator="\n")
                written += len(chunk)
                log_progress(i + 1, n_chunks, "sampling",
                             f"sampled {written} of {n_samples} records")
    return written


_PILOT_RECORDS = 1000  # records drawn to measure the size of a synthetic record


def _free_space(path):
    """``(free bytes, target)`` where ``path`` will be written, or None for a stream."""
    target, kind = output_target(path)
    if kind == "stream":  # /dev/null, a pipe: nothing is stored
        return None
    return shutil.disk_usage(os.path.dirname(target)).free, target


def _refuse_size(estimate, free, path, how):
    raise CommandError(f"the synthetic records would take about {format_bytes(estimate)} "
                       f"({how}), but the file system of {path} has "
                       f"{format_bytes(free)} free; ask for fewer records with "
                       "-n/--n-samples or write them to another disk")


def check_output_size(n_samples, n_columns, path):
    """Refuse, before any budget is spent, ``n_samples`` records that cannot fit.

    A lower bound from public facts: every record takes at least one byte
    per column (its separators and line break), whatever its values.

    Parameters
    ----------
    n_samples : int or None
        None: the DP record count, unknown before the release (no check).
    n_columns : int
    path : str
    """
    space = _free_space(path)
    if n_samples is None or space is None:
        return
    estimate = n_samples * max(n_columns, 1)
    if estimate > space[0]:
        _refuse_size(estimate, space[0], path, f"at least {n_columns} bytes a record")


def check_free_space(synthesizer, n_samples, path):
    """Refuse to start writing records that would not fit on the target's disk.

    The size of a record is measured on a pilot sample of the release (post-
    processing: no privacy cost, and its own random stream, so the written
    records do not change); not checked for a device or pipe, nor for at
    most 1,000 records.

    Parameters
    ----------
    synthesizer : DPMarginalSynthesizer
        Fitted, or built with ``from_aggregates``.
    n_samples : int or None
        None: the DP record count.
    path : str
    """
    n_samples = synthesizer.n_records_ if n_samples is None else n_samples
    if n_samples <= _PILOT_RECORDS:  # a small file: a failed write leaves nothing anyway
        return
    space = _free_space(path)
    if space is None:
        return
    pilot = _PILOT_RECORDS
    with muted_progress("sampling"):
        records = as_table(synthesizer.sample(pilot, random_state=np.random.RandomState(0)))
    header = len(records.iloc[:0].to_csv(index=False, lineterminator="\n").encode())
    body = len(records.to_csv(index=False, header=False, lineterminator="\n").encode())
    per_record = body / pilot
    estimate = header + per_record * n_samples
    if estimate > space[0]:
        _refuse_size(estimate, space[0], path, f"{per_record:.0f} bytes a record, measured "
                     f"on {pilot} records")


# ---------------------------------------------------------- declarations
def _number(text):
    """``"16"`` -> 16, ``"2.5"`` -> 2.5; ValueError unless a finite number."""
    try:
        return int(text)
    except ValueError:
        value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {text!r}")
    return value


def parse_bounds(specs):
    """``["age=0:120", "income=0.0:1e6"]`` -> a Declaration of numeric columns.

    LO and HI written as integers declare an integer column; a decimal point
    or exponent in either declares decimal numbers.

    Parameters
    ----------
    specs : list of str or None

    Returns
    -------
    dpsynth.io.Declaration
    """
    columns = []
    for spec in specs or ():
        name, equals, span = spec.rpartition("=")
        low, colon, high = span.partition(":")
        if not equals or not name or not colon:
            raise CommandError(f"malformed --bounds {spec!r}: expected COL=LO:HI, "
                               "e.g. --bounds age=0:120")
        try:
            low, high = _number(low), _number(high)
        except ValueError:
            raise CommandError(f"malformed --bounds {spec!r}: LO and HI must be "
                               "finite numbers") from None
        if not low < high:
            raise CommandError(f"--bounds {spec!r}: LO must be smaller than HI")
        if any(c.name == name for c in columns):
            raise CommandError(f"--bounds gives column {name!r} twice")
        integer = isinstance(low, int) and isinstance(high, int)
        columns.append(io.ColumnDeclaration(name, "numeric", "int64" if integer else "float64",
                                            bounds=(low, high)))
    return io.Declaration(tuple(columns))


def apply_special_values(specs, declaration):
    """``["capital-gain=0", "x=-9,99"]`` added to the numeric columns of ``declaration``.

    Parameters
    ----------
    specs : list of str or None
    declaration : dpsynth.io.Declaration

    Returns
    -------
    dpsynth.io.Declaration
    """
    if not specs:
        return declaration
    columns = list(declaration.columns)
    seen = set()
    for spec in specs:
        name, equals, values = spec.rpartition("=")
        if not equals or not name or not values:
            raise CommandError(f"malformed --special-values {spec!r}: expected COL=V1,V2, "
                               "e.g. --special-values capital-gain=0")
        if name in seen:
            raise CommandError(f"--special-values gives column {name!r} twice")
        seen.add(name)
        try:
            numbers = tuple(_number(v) for v in values.split(","))
        except ValueError:
            raise CommandError(f"malformed --special-values {spec!r}: the values must be "
                               "finite numbers") from None
        if len(set(numbers)) != len(numbers):
            raise CommandError(f"--special-values {spec!r} lists a value twice")
        if name not in declaration or declaration[name].kind != "numeric":
            raise CommandError(f"--special-values {spec!r}: column {name!r} is not declared "
                               f"numeric; give its range with --bounds {name}=LO:HI (or in "
                               "--schema)")
        column = declaration[name]
        if column.is_integer and not all(float(v).is_integer() for v in numbers):
            raise CommandError(f"--special-values {spec!r}: {name!r} holds integers")
        if column.special_values is not None and set(column.special_values) != set(numbers):
            raise CommandError(f"column {name!r} has different special values in --schema "
                               "and --special-values; declare them in one place")
        columns[columns.index(column)] = replace(column, special_values=numbers)
    return io.Declaration(tuple(columns), declaration.missing_values,
                          declaration.constraints)


def load_categories(path):
    """``{"column": [values, ...]}`` (JSON) -> a Declaration of categorical columns.

    JSON numbers declare a numeric column, strings a text column.

    Parameters
    ----------
    path : str

    Returns
    -------
    dpsynth.io.Declaration
    """
    check_inputs(path, what="categories file")
    try:
        with open(path, encoding="utf-8") as handle:
            spec = json.load(handle)
    except (OSError, ValueError) as exc:
        raise CommandError(f"cannot read {path} as JSON: {one_line(exc)}") from None
    if not isinstance(spec, dict) or not all(isinstance(v, list) for v in spec.values()):
        raise CommandError(f"{path} must hold a JSON object {{\"column\": [values, ...]}}")
    document = {"columns": [{"name": name, "kind": "categorical", "categories": values}
                            for name, values in spec.items()]}
    try:
        return io.Declaration.from_dict(document, source=path)
    except ValueError as exc:
        raise CommandError(one_line(exc)) from None


def build_declaration(args):
    """The schema file, ``--bounds`` and ``--categories`` as one Declaration.

    ``--na-values`` markers are added to the schema's ``missing_values``
    (default: the empty field).

    Parameters
    ----------
    args : argparse.Namespace

    Returns
    -------
    declaration : dpsynth.io.Declaration
    origins : dict
        ``{column: the option that declared it}``, for error messages.
    """
    sources = []
    schema = getattr(args, "schema", None)
    if schema is not None:
        check_inputs(schema, what="schema file")
        try:
            sources.append((f"--schema {schema}", io.load_declaration(schema)))
        except ValueError as exc:
            raise CommandError(one_line(exc)) from None
    sources.append(("--bounds", parse_bounds(getattr(args, "bounds", None))))
    categories = getattr(args, "categories", None)
    if categories is not None:
        sources.append((f"--categories {categories}", load_categories(categories)))
    merged, merged_name, origins = io.Declaration(), None, {}
    for name, other in sources:
        for column in other.names:
            origins.setdefault(column, name.split()[0])
        try:
            merged = merged.merge(other, names=(merged_name, name))
        except ValueError as exc:
            raise CommandError(one_line(exc)) from None
        merged_name = name if merged_name is None else f"{merged_name}, {name}"
    markers = getattr(args, "na_values", None) or []
    base = merged.missing_values if merged.missing_values is not None else ("",)
    declaration = io.Declaration(merged.columns, tuple(dict.fromkeys((*base, *markers))),
                                 merged.constraints)
    declaration = apply_special_values(getattr(args, "special_values", None), declaration)
    return declaration, origins


def read_table(args, path, declaration, origins=None):
    """Read ``path`` as the command's options say; errors become CommandError.

    The header is checked first (declared columns present, ``--columns`` /
    ``--drop`` consistent with the declarations), then the file is read with
    :func:`dpsynth.io.read_csv` and the declared values checked.  Values
    outside declared bounds are clipped into the end bins, silently: whether
    a table has such values is a fact about the data, and the console output
    of a release must not depend on the data (the ``--bounds`` help and the
    docs say so).

    Parameters
    ----------
    args : argparse.Namespace
    path : str
    declaration : dpsynth.io.Declaration
    origins : dict, default=None
        ``{column: option}`` from :func:`build_declaration`, for messages.

    Returns
    -------
    DataFrame
    """
    columns = getattr(args, "columns", None)
    drop = getattr(args, "drop", None)
    no_header = getattr(args, "no_header", False)
    try:
        names = io.read_header(path, sep=getattr(args, "sep", None), header=not no_header,
                               schema=declaration,
                               encoding=getattr(args, "encoding", "utf-8"))
        unknown = [c for c in declaration.names if c not in names]
        if unknown:
            flag = (origins or {}).get(unknown[0], "the declaration")
            raise CommandError(f"{flag} names the unknown column {unknown[0]!r}; "
                               f"{io.column_list(names)}")
        kept = set(columns) if columns is not None else set(names) - set(drop or ())
        # a schema file may describe more columns than are used; a flag may not
        left_out = [c for c in declaration.names if c not in kept and c in names
                    and origins is not None and origins.get(c) != "--schema"]
        if left_out:
            flag = "--columns" if columns is not None else "--drop"
            raise CommandError(f"{flag} leaves out the declared column {left_out[0]!r}; "
                               f"remove its declaration ({origins.get(left_out[0])}) or "
                               "keep the column")
        frame = io.read_csv(path, declaration, sep=getattr(args, "sep", None),
                            columns=columns, drop=drop, header=not no_header,
                            encoding=getattr(args, "encoding", "utf-8"))
        io.check_values(frame, declaration, path=path, first_line=1 if no_header else 2,
                        clip=True)
    except ValueError as exc:
        raise CommandError(one_line(exc)) from None
    if len(frame) == 0:
        raise CommandError(f"{path} has a header but no records")
    return frame


_MISSING = {"category": "category", "uncounted": "absent", "absent": "absent"}


def encoder(args, frame, declaration):
    """The TableEncoder of the command's options (checked, not fitted).

    Parameters
    ----------
    args : argparse.Namespace
    frame : DataFrame
        The table read with ``declaration`` (only for data-free checks).
    declaration : dpsynth.io.Declaration

    Returns
    -------
    TableEncoder
    """
    if args.binning == "quantile" and args.binning_epsilon is None:
        raise CommandError("--binning quantile spends privacy budget on the bin edges: "
                           "give it with --binning-epsilon")
    if args.binning_epsilon is not None and args.binning != "quantile":
        raise CommandError("--binning-epsilon is only used with --binning quantile")
    if args.binning_epsilon is not None and not args.binning_epsilon > 0:
        raise CommandError("--binning-epsilon must be a positive number")
    if args.n_bins < 1:
        raise CommandError("--n-bins must be a positive integer")
    used = io.Declaration(tuple(c for c in declaration.columns if c.name in frame.columns))
    for column in used.columns:
        if (column.kind == "categorical" and column.dtype == "float64"
                and column.categories is None
                and frame[column.name].nunique() > TableEncoder().max_float_values):
            raise CommandError(
                f"column {column.name!r} is declared categorical with decimal numbers but "
                "holds too many distinct values to be categories; declare it numeric with "
                f"its public range (--bounds {column.name}=LO:HI) or list its categories")
    try:
        params = used.encoder_params(binning=args.binning)
    except ValueError as exc:
        raise CommandError(one_line(exc)) from None
    flagged = getattr(args, "no_missing", None) or []
    unknown = [c for c in flagged if c not in frame.columns]
    if unknown:
        raise CommandError(f"--no-missing names column(s) {unknown} that the table does not "
                           f"have; its columns are {list(frame.columns)}")
    if flagged:
        params["no_missing"] = list(dict.fromkeys([*params.get("no_missing", []), *flagged]))
    if args.binning == "quantile" and not params.get("bounds"):
        raise CommandError("--binning quantile bins the columns given --bounds, and there "
                           "are none")
    if "binning" in params:  # columns with their own n_bins: the others by name
        params["binning"] = {**{c: args.binning for c in params.get("bounds", {})},
                             **params["binning"]}
    else:
        params["binning"] = args.binning
    decimals = parse_decimals(getattr(args, "decimals", None), frame.columns)
    params["decimals"] = _default_decimals(used, params.get("decimals"), decimals,
                                           list(frame.columns))
    # every field is read as text: a DP count decides which undeclared columns hold
    # numbers (TableEncoder's text_numbers="dp", in the release's budget)
    return TableEncoder(missing=_MISSING[args.missing], n_bins=args.n_bins,
                        binning_epsilon=args.binning_epsilon, text_numbers="dp", **params)


def parse_decimals(specs, columns):
    """``["2", "price=0"]`` -> ``(2, {"price": 0})``: the global K and per-column ones.

    Parameters
    ----------
    specs : list of str or None
        ``--decimals`` values: ``K`` or ``COL=K``.
    columns : sequence of str
        The table's columns (a named column must be one of them).

    Returns
    -------
    (int or None, dict)
    """
    every, by_column = None, {}
    for spec in specs or ():
        name, equals, text = spec.rpartition("=")
        try:
            value = int(text)
        except ValueError:
            raise CommandError(f"malformed --decimals {spec!r}: expected K or COL=K with K "
                               "an integer, e.g. --decimals 2 or --decimals price=0") from None
        if not 0 <= value <= 15:
            raise CommandError(f"--decimals {spec!r}: K must be between 0 and 15")
        if not equals:
            if every is not None and every != value:
                raise CommandError("--decimals gives two global values; give one K (and "
                                   "COL=K for single columns)")
            every = value
            continue
        if name not in columns:
            raise CommandError(f"--decimals names the unknown column {name!r}; "
                               f"{io.column_list(list(columns))}")
        if name in by_column and by_column[name] != value:
            raise CommandError(f"--decimals gives column {name!r} twice")
        by_column[name] = value
    return every, by_column


def _default_decimals(used, declared, options, columns):
    """The encoder's ``decimals``: ``COL=K``, else the schema's, else ``K``, else a rule.

    A declared decimal-number column without decimals gets
    :func:`~dpsynth.preprocessing._numeric.default_decimals` of its declared
    bounds (four significant digits); the columns found numeric by DP get
    it from their DP range in the encoder.  Returns a dict or None.
    """
    every, by_column = options
    out = dict.fromkeys(columns, every) if every is not None else {}
    for column in used.columns:
        if column.kind == "numeric" and not column.is_integer and column.bounds is not None:
            out.setdefault(column.name, default_decimals(*column.bounds))
    out.update(declared or {})
    out.update(by_column)
    return out or None


def _text_as_string(frame):
    """``frame`` with its ``object`` columns (fields read as text: pandas 2's dtype for
    text) as ``string``, as pandas 3 reads them: a string dtype states, as a public
    fact, that a column holds no number object, which the numbers-or-text decision
    reads, so a file gets the same release under either pandas."""
    text = {c: pd.StringDtype("python") for c in frame.columns if frame[c].dtype == object}
    return frame.astype(text) if text else frame


def fit(args, frame, declaration):
    """Fit a synthesizer with the command's options; progress goes to the log.

    Parameters
    ----------
    args : argparse.Namespace
    frame : DataFrame or dask DataFrame
    declaration : dpsynth.io.Declaration

    Returns
    -------
    DPMarginalSynthesizer
        Fitted; ``aggregates_`` is the release.
    """
    if not is_dask_collection(frame):
        frame = _text_as_string(frame)
    # a dask DataFrame: its declaration (empty meta) for the checks, its partitions to fit
    declared = frame._meta if is_dask_collection(frame) else frame
    synthesizer = DPMarginalSynthesizer(
        epsilon=args.epsilon, delta=args.delta, reporting_length=args.reporting_length,
        release=getattr(args, "release", "auto"),
        max_memory=getattr(args, "max_memory", None),
        encoder=encoder(args, declared, declaration), n_jobs=getattr(args, "n_jobs", None),
        random_state=args.seed, constraints=list(declaration.constraints) or None)
    target = getattr(args, "target", None)
    if target is None:
        return synthesizer.fit(frame)
    if is_dask_collection(frame):
        raise CommandError("--target works on one CSV file, not with --engine dask; "
                           "leave it out (the release then weighs every column alike)")
    if target in (getattr(args, "drop", None) or ()):
        raise CommandError(f"--target names the column {target!r}, which --drop leaves out; "
                           "keep it, or leave out --target")
    if target not in frame.columns:
        raise CommandError(f"--target names the column {target!r}, which is not among the "
                           f"columns read; {io.column_list(list(frame.columns))}")
    return synthesizer.fit(frame.drop(columns=[target]), frame[target])


# ---------------------------------------------------------------- summaries
def privacy_terms(privacy):
    """``"epsilon 4, delta 7.2e-05 (zCDP rho 0.35 for the marginals)"``.

    With Gaussian-DP accounting (the workload release) its ``mu`` comes first.

    Parameters
    ----------
    privacy : mapping
        ``privacy_spent_`` or ``aggregates.privacy``.

    Returns
    -------
    str
    """
    accounting = (f"Gaussian DP mu {privacy['mu']:.4g}, zCDP rho {privacy['rho']:.4g}"
                  if privacy.get("mu") is not None else f"zCDP rho {privacy['rho']:.4g}")
    terms = (f"epsilon {privacy['epsilon']:g}, delta {privacy['delta']:.3g} "
             f"({accounting} for the marginals")
    if privacy.get("epsilon_binning"):
        terms += f", epsilon {privacy['epsilon_binning']:g} for DP bin edges"
    if privacy.get("rho_numeric"):
        terms += f", rho {privacy['rho_numeric']:.4g} of it for DP numeric columns"
    return terms + ")"


def aggregates_line(aggregates):
    """One line about the released aggregates (DP outputs only).

    Parameters
    ----------
    aggregates : DPAggregates

    Returns
    -------
    str
    """
    lengths = range(1, aggregates.reporting_length + 1)
    if aggregates.marginals:  # a workload release: dense noisy marginals
        sets = {m.columns for m in aggregates.marginals}
        by_length = ", ".join(f"{sum(len(c) == k for c in sets)} {k}-way" for k in lengths)
        return (f"DP aggregates: {len(sets)} noisy marginals ({by_length}), "
                f"DP record count {aggregates.n_records}")
    counts = list(aggregates.counts) + [[]] * (len(lengths) - len(aggregates.counts))
    by_length = ", ".join(f"{k}: {len(c)}" for k, c in zip(lengths, counts))
    return (f"DP aggregates: {len(aggregates)} combination counts (by length {by_length}), "
            f"DP record count {aggregates.n_records}")


def check_samplable(aggregates, path=None):
    """Records can be sampled from ``aggregates``; else an error in command-line terms.

    Uses only the release (DP outputs and public metadata).

    Parameters
    ----------
    aggregates : DPAggregates
    path : str, default=None
        The aggregates file, when sampling one (changes the advice).

    Raises
    ------
    CommandError
    """
    schema = aggregates.schema
    released = aggregates.one_counts() > 0
    again = ("release again from the data with a larger --epsilon" if path is None else
             f"{path} cannot be sampled; release again with a larger --epsilon")
    if not released.any():
        raise CommandError(f"the DP release holds no value at all; {again}")
    if schema.missing != "category":
        return
    per_column = np.bincount(schema.attribute_columns[released], minlength=len(schema))
    empty = [c.name for c, n in zip(schema, per_column) if n == 0]
    if empty:
        raise CommandError(
            f"no value of column(s) {empty} survived the DP release, so complete records "
            f"cannot be synthesized; {again}, declare the column's categories "
            f"(--categories or --schema), leave it out (--drop {','.join(empty)}), or use "
            "--missing uncounted (empty cells allowed)")


def check_privacy_options(args):
    """The privacy parameters, checked before any file is read.

    Parameters
    ----------
    args : argparse.Namespace

    Raises
    ------
    CommandError
    """
    if not (math.isfinite(args.epsilon) and args.epsilon > 0):
        raise CommandError("--epsilon must be a positive number")
    if args.epsilon > accounting.MAX_EPSILON:
        raise CommandError(f"--epsilon must be at most {accounting.MAX_EPSILON:g}: larger "
                           "budgets protect nothing and overflow the privacy accounting")
    if args.delta is not None and not 0 < args.delta <= accounting.MAX_DELTA:
        raise CommandError(f"--delta must be in (0, {accounting.MAX_DELTA:g}] (and far below "
                           "1 / the number of records); leave it out for the fixed 1e-9")
    if args.reporting_length < 1:
        raise CommandError("--reporting-length must be at least 1")
    if args.n_bins < 1:
        raise CommandError("--n-bins must be a positive integer")


def check_n_samples(n_samples):
    if n_samples is not None and n_samples < 0:
        raise CommandError("-n/--n-samples must be a non-negative integer")


def check_n_jobs(n_jobs):
    if n_jobs == 0:
        raise CommandError("-j/--n-jobs must be a non-zero integer (-1: all processors)")
