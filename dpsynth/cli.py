"""The ``dpsynth`` command: synthesize, aggregate, sample, evaluate, demo.

Every command reads CSV files with pandas, reports bad input as one line on
stderr with exit status 1 (never a traceback, unless ``--traceback``),
refuses to overwrite an existing output without ``--force``, and writes each
output to a temporary file in the target directory that is renamed into
place only once complete, so an output file is never half-written.

Run ``dpsynth demo`` for an end-to-end example, ``dpsynth COMMAND --help``
for the options of a command.
"""

import argparse
import contextlib
import json
import math
import os
import sys
import tempfile
import time
import warnings

import numpy as np
import pandas as pd

from ._version import __version__
from .aggregates import DPAggregates
from .datasets import load_demo_table
from .metrics import marginal_tvd
from .preprocessing import TableEncoder
from .report import binned_view, fidelity_summary, write_report
from .synthesizer import DPMarginalSynthesizer

__all__ = ["main"]

_EXPECTED_ERRORS = (ValueError, TypeError, OSError)


class CommandError(Exception):
    """Bad input, reported as one line on stderr with exit status 1."""


def _one_line(exc):
    return " ".join(str(exc).split())


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"dpsynth: warning: {_one_line(message)}", file=sys.stderr)


# --------------------------------------------------------------- progress
def _progress_bar(total, stream):
    """A tqdm bar on ``stream``, or None when tqdm is not installed."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, file=stream, desc="dpsynth", unit="step", leave=False)


class _Progress(contextlib.AbstractContextManager):
    """Show the estimator's ``verbose`` lines as progress on stderr.

    Inside the ``with`` block the estimator's lines (one per released
    combination length, one per sampling run) are captured from stdout.  On
    a terminal they advance a tqdm bar if tqdm is installed, else they are
    printed as they are; with ``verbose`` they are always printed (above the
    bar, if any).  Off a terminal and without ``verbose`` nothing is shown.

    Parameters
    ----------
    total : int
        Expected number of lines.
    verbose : bool
    stream : file-like, default=None
        Where to show progress; None means ``sys.stderr``.
    """

    def __init__(self, total, *, verbose, stream=None):
        self.stream = sys.stderr if stream is None else stream
        self.verbose = verbose
        interactive = self.stream.isatty()
        self.bar = _progress_bar(total, self.stream) if interactive else None
        self.show_lines = verbose or (interactive and self.bar is None)
        self._pending = ""
        self._redirect = contextlib.redirect_stdout(self)

    def __enter__(self):
        self._redirect.__enter__()
        return self

    def __exit__(self, *exc_info):
        self._redirect.__exit__(*exc_info)
        if self.bar is not None:
            self.bar.close()
        return None

    def write(self, text):
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            if line.strip():
                self._step(line.split("] ", 1)[-1])
        return len(text)

    def flush(self):
        """Nothing to flush: lines are handled as they complete."""

    def _step(self, message):
        if self.bar is not None:
            self.bar.set_postfix_str(message.split(",")[0], refresh=False)
            self.bar.update(1)
            if self.verbose:
                self.bar.write(message, file=self.stream)
        elif self.show_lines:
            print(message, file=self.stream, flush=True)


# ------------------------------------------------------------ input/output
def _read_csv(path, na_values):
    """Read a CSV file; integer columns that pandas made float for nulls become Int64."""
    if not os.path.exists(path):
        raise CommandError(f"input file not found: {path}")
    if os.path.isdir(path):
        raise CommandError(f"{path} is a directory, not a CSV file")
    try:
        frame = pd.read_csv(path, na_values=na_values or None, low_memory=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise CommandError(f"cannot read {path} as CSV: {_one_line(exc)}") from None
    if len(frame) == 0:
        raise CommandError(f"{path} has a header but no records")
    for name in frame.columns:
        column = frame[name]
        if column.dtype == np.float64 and column.isna().any():
            values = column.dropna()
            if len(values) and (values % 1 == 0).all() and values.abs().max() < 2**53:
                frame[name] = column.astype("Int64")
    return frame


def _check_output(path, force):
    """Refuse an existing output without ``force`` and an output in a missing directory."""
    if os.path.isdir(path):
        raise CommandError(f"output {path} is a directory")
    if os.path.exists(path) and not force:
        raise CommandError(f"output {path} exists; pass --force to overwrite it")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise CommandError(f"directory of output {path} does not exist")


@contextlib.contextmanager
def _atomic_output(path):
    """Yield a temporary path beside ``path``; rename it to ``path`` on success.

    On any error the temporary file is removed and ``path`` is left as it
    was, so an output is either complete or absent.
    """
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.",
                                         suffix=".tmp", dir=directory)
    os.close(handle)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temporary, 0o666 & ~umask)  # mkstemp makes it 0600
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _write_csv(frame, path):
    with _atomic_output(path) as temporary:
        frame.to_csv(temporary, index=False)


def _save_aggregates(aggregates, path):
    file_format = "csv" if path.lower().endswith(".csv") else "json"
    with _atomic_output(path) as temporary:
        aggregates.save(temporary, format=file_format)


# ---------------------------------------------------------------- encoding
def _number(text):
    """``"16"`` -> 16, ``"2.5"`` -> 2.5; ValueError unless a finite number."""
    try:
        return int(text)
    except ValueError:
        value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {text!r}")
    return value


def _column_list(columns):
    names = list(columns)
    shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
    return f"the columns are {shown}"


def _parse_bounds(specs, columns):
    """``["age=0:120", ...]`` -> ``{"age": (0, 120)}``, checked against ``columns``."""
    bounds = {}
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
        if name not in columns:
            raise CommandError(f"--bounds names the unknown column {name!r}; "
                               f"{_column_list(columns)}")
        bounds[name] = (low, high)
    return bounds


def _coerce_category(value, dtype, name, path):
    """A JSON category value in the type of its CSV column."""
    if pd.api.types.is_bool_dtype(dtype):
        return value
    if pd.api.types.is_numeric_dtype(dtype):
        if isinstance(value, str):
            try:
                return _number(value)
            except ValueError:
                raise CommandError(f"{path}: category {value!r} of the numeric column "
                                   f"{name!r} is not a number") from None
        return value
    return value if isinstance(value, str) else str(value)


def _load_categories(path, frame):
    """Read ``{column: [values, ...]}`` from a JSON file, in the columns' types."""
    if path is None:
        return {}
    if not os.path.isfile(path):
        raise CommandError(f"categories file not found: {path}")
    try:
        with open(path, encoding="utf-8") as handle:
            spec = json.load(handle)
    except (OSError, ValueError) as exc:
        raise CommandError(f"cannot read {path} as JSON: {_one_line(exc)}") from None
    if not isinstance(spec, dict) or not all(isinstance(v, list) for v in spec.values()):
        raise CommandError(f"{path} must hold a JSON object {{\"column\": [values, ...]}}")
    unknown = [name for name in spec if name not in frame.columns]
    if unknown:
        raise CommandError(f"{path} names unknown column(s) {unknown}; "
                           f"{_column_list(frame.columns)}")
    return {name: [_coerce_category(v, frame[name].dtype, name, path) for v in values]
            for name, values in spec.items()}


def _check_numeric_columns(frame, bounds, categories, command):
    """Continuous columns need bounds; many-valued integer columns get a note."""
    limit = TableEncoder().max_float_values
    unbinned = [name for name in frame.columns if name not in bounds
                and name not in categories and not pd.api.types.is_bool_dtype(frame[name])
                and pd.api.types.is_numeric_dtype(frame[name])]
    n_values = {name: frame[name].nunique() for name in unbinned}
    for name in unbinned:
        if pd.api.types.is_float_dtype(frame[name]) and n_values[name] > limit:
            raise CommandError(
                f"column {name!r} holds decimal numbers ({n_values[name]} distinct values); "
                f"give its public range with --bounds {name}=LO:HI to bin it, or declare "
                "its values with --categories")
    for name in unbinned:
        if n_values[name] > limit:
            print(f"dpsynth {command}: note: column {name!r} has {n_values[name]} distinct "
                  "integers and no --bounds, so each value counts as a category; if it "
                  f"is a quantity, --bounds {name}=LO:HI bins it", file=sys.stderr)


def _encoder(args, frame):
    bounds = _parse_bounds(args.bounds, frame.columns)
    categories = _load_categories(args.categories, frame)
    if args.binning == "quantile" and args.binning_epsilon is None:
        raise CommandError("--binning quantile spends privacy budget on the bin edges: "
                           "give it with --binning-epsilon")
    if args.binning_epsilon is not None and args.binning != "quantile":
        raise CommandError("--binning-epsilon is only used with --binning quantile")
    _check_numeric_columns(frame, bounds, categories, args.command)
    return TableEncoder(categories=categories or "auto", missing=args.missing,
                        bounds=bounds or None, n_bins=args.n_bins, binning=args.binning,
                        binning_epsilon=args.binning_epsilon)


# ---------------------------------------------------------------- summaries
def _privacy_terms(privacy):
    """``"epsilon 4, delta 7.2e-05 (zCDP rho 0.35 for the marginals)"``."""
    terms = (f"epsilon {privacy['epsilon']:g}, delta {privacy['delta']:.3g} "
             f"(zCDP rho {privacy['rho']:.4g} for the marginals")
    if privacy.get("epsilon_binning"):
        terms += f", epsilon {privacy['epsilon_binning']:g} for DP bin edges"
    return terms + ")"


def _aggregates_line(aggregates):
    by_length = ", ".join(f"{k}: {len(c)}" for k, c in enumerate(aggregates.counts, start=1))
    return (f"DP aggregates: {len(aggregates)} combination counts (by length {by_length}), "
            f"DP record count {aggregates.n_records}")


def _as_table(sample):
    """``sample``'s output as one DataFrame (a target column joined back)."""
    if isinstance(sample, tuple):
        features, target = sample
        return pd.concat([features, target], axis=1)
    return sample


def _fit(args, frame):
    """Fit a synthesizer on ``frame`` with the command's options, showing progress."""
    synthesizer = DPMarginalSynthesizer(
        epsilon=args.epsilon, delta=args.delta, reporting_length=args.reporting_length,
        encoder=_encoder(args, frame), n_jobs=getattr(args, "n_jobs", None),
        random_state=args.seed, verbose=1)
    steps = max(min(args.reporting_length, frame.shape[1]), 1) + (args.command == "synthesize")
    synthetic = None
    with _Progress(steps, verbose=args.verbose):
        synthesizer.fit(frame)
        if args.command == "synthesize":
            synthetic = _as_table(synthesizer.sample(args.n_samples))
    return synthesizer, synthetic


# ----------------------------------------------------------------- commands
def _cmd_synthesize(args):
    outputs = [args.output] + ([args.aggregates_out] if args.aggregates_out else [])
    if len(set(map(os.path.abspath, outputs))) != len(outputs):
        raise CommandError("--output and --aggregates-out must be different files")
    for path in outputs:
        _check_output(path, args.force)
    frame = _read_csv(args.input, args.na_values)
    synthesizer, synthetic = _fit(args, frame)
    if args.aggregates_out:
        _save_aggregates(synthesizer.aggregates_, args.aggregates_out)
    _write_csv(synthetic, args.output)
    print(_aggregates_line(synthesizer.aggregates_))
    print(f"privacy spent: {_privacy_terms(synthesizer.privacy_spent_)}")
    if args.aggregates_out:
        print(f"wrote the DP aggregates to {args.aggregates_out}")
    print(f"wrote {len(synthetic)} synthetic records to {args.output}")
    return 0


def _cmd_aggregate(args):
    _check_output(args.output, args.force)
    frame = _read_csv(args.input, args.na_values)
    synthesizer, _ = _fit(args, frame)
    _save_aggregates(synthesizer.aggregates_, args.output)
    print(_aggregates_line(synthesizer.aggregates_))
    print(f"privacy spent: {_privacy_terms(synthesizer.privacy_spent_)}")
    print(f"wrote the DP aggregates to {args.output}")
    return 0


def _cmd_sample(args):
    _check_output(args.output, args.force)
    if not os.path.isfile(args.aggregates):
        raise CommandError(f"aggregates file not found: {args.aggregates}")
    aggregates = DPAggregates.load(args.aggregates)
    synthesizer = DPMarginalSynthesizer.from_aggregates(aggregates, random_state=args.seed,
                                                         n_jobs=args.n_jobs, verbose=1)
    with _Progress(1, verbose=args.verbose):
        synthetic = _as_table(synthesizer.sample(args.n_samples))
    _write_csv(synthetic, args.output)
    print(_aggregates_line(aggregates))
    print(f"released with {_privacy_terms(aggregates.privacy)}; sampling spends no more")
    print(f"wrote {len(synthetic)} synthetic records to {args.output}")
    return 0


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


def _cmd_evaluate(args):
    if args.report:
        _check_output(args.report, args.force)
    real = _read_csv(args.real, args.na_values)
    synth = _read_csv(args.synthetic, args.na_values)
    bounds = _parse_bounds(args.bounds, real.columns)
    if sorted(real.columns) != sorted(synth.columns):
        missing = [c for c in real.columns if c not in synth.columns]
        extra = [c for c in synth.columns if c not in real.columns]
        raise CommandError(f"{args.synthetic} does not have the columns of {args.real}: "
                           f"missing {missing}, unexpected {extra}")
    synth = synth[list(real.columns)]
    _check_numeric_columns(real, bounds, {}, args.command)
    if bounds:
        names = list(bounds)
        encoder = TableEncoder(bounds=bounds, n_bins=args.n_bins).fit(real[names])
        real, synth = binned_view(real, encoder), binned_view(synth, encoder)
    print(f"fidelity of {args.synthetic} ({len(synth)} records) to {args.real} "
          f"({len(real)} records), {real.shape[1]} columns")
    if args.report:
        with _atomic_output(args.report) as temporary:
            summary = write_report(real, synth, temporary, title=args.title,
                                   reporting_length=args.reporting_length)
    else:
        summary = fidelity_summary(real, synth, reporting_length=args.reporting_length)
    _print_fidelity(summary)
    print("(lower TVD is better; computed from the real data: not a DP release)")
    if args.report:
        print(f"wrote the report to {args.report}")
    return 0


def _independent_columns(frame, n_samples, seed):
    """Each column drawn independently from its real 1-way marginal (a baseline)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({name: frame[name].to_numpy()[rng.integers(0, len(frame), n_samples)]
                         for name in frame.columns})


def _cmd_demo(args):
    if args.report:
        _check_output(args.report, args.force)
    demo = load_demo_table()
    real = demo.frame
    encoder = TableEncoder(bounds=demo.bounds, categories=demo.categories, n_bins=demo.n_bins)
    start = time.perf_counter()
    synthesizer = DPMarginalSynthesizer(epsilon=args.epsilon, encoder=encoder,
                                        random_state=args.seed).fit(real)
    synthetic = synthesizer.sample()
    elapsed = time.perf_counter() - start
    public = synthesizer.aggregates_.encoder
    real_view, synth_view = binned_view(real, public), binned_view(synthetic, public)
    baseline = _independent_columns(real_view, len(synth_view), args.seed)
    lengths = (1, 2, 3)
    rows = [(f"dpsynth synthetic data (epsilon {args.epsilon:g})", synth_view),
            ("independent columns (baseline, not private)", baseline)]
    n_pixels = len(demo.bounds)
    print(f"dpsynth demo: DP synthetic data from {len(real)} handwritten digits "
          "(scikit-learn's load_digits)")
    print(f"  {n_pixels} pixels binned into {demo.n_bins} bins with the public bounds 0..16, "
          "and the digit (public categories 0..9)")
    print()
    print(f"privacy spent: {_privacy_terms(synthesizer.privacy_spent_)}")
    print(_aggregates_line(synthesizer.aggregates_))
    print(f"synthesized {len(synthetic)} records in {elapsed:.2f} s (fit + sample)")
    print()
    label = 48
    print("mean TVD of k-way marginals vs the real data".ljust(label)
          + "".join(f"{k}-way".rjust(8) for k in lengths))
    for name, table in rows:
        cells = [f"{marginal_tvd(real_view, table, k):.3f}" for k in lengths]
        print(f"  {name}".ljust(label) + "".join(cell.rjust(8) for cell in cells))
    print("(lower is better: 0 = identical marginals, 1 = disjoint)")
    if args.report:
        with _atomic_output(args.report) as temporary:
            write_report(real_view, synth_view, temporary, privacy=synthesizer.privacy_spent_,
                         title="dpsynth demo: handwritten digits")
        print(f"wrote the report to {args.report}")
    return 0


# ------------------------------------------------------------------ parser
def _add_reading(group):
    group.add_argument("--na-values", action="append", metavar="TEXT",
                       help="also read TEXT as a missing value (repeatable), on top of "
                            "pandas' defaults (empty, NA, NaN, ...), e.g. --na-values N")


def _add_force(group):
    group.add_argument("--force", action="store_true", help="overwrite existing outputs")


def _add_bounds(group):
    group.add_argument("--bounds", action="extend", nargs="+", metavar="COL=LO:HI",
                       help="public range of a numeric column, which is then binned "
                            "(e.g. --bounds age=0:120 hours=0:168)")
    group.add_argument("--n-bins", type=int, default=10, metavar="N",
                       help="bins per numeric column with --bounds (default: 10)")


def _add_privacy(group):
    group.add_argument("--epsilon", type=float, default=4.0,
                       help="total privacy budget (default: 4)")
    group.add_argument("--delta", type=float, default=None,
                       help="delta of the (epsilon, delta) guarantee (default: 1/(n ln n) "
                            "with n the DP record count)")
    group.add_argument("--reporting-length", type=int, default=3, metavar="R",
                       help="longest combination of columns whose counts are released "
                            "(default: 3)")
    group.add_argument("--seed", type=int, default=None, help="random seed")


def _add_encoding(group):
    _add_bounds(group)
    group.add_argument("--binning", choices=("uniform", "log", "quantile"), default="uniform",
                       help="bin edges of --bounds columns: equal widths (default), "
                            "geometric widths, or DP quantiles (needs --binning-epsilon)")
    group.add_argument("--binning-epsilon", type=float, default=None, metavar="EPS",
                       help="extra privacy budget of the DP quantile bin edges")
    group.add_argument("--categories", metavar="FILE.json",
                       help="public categories: a JSON object {\"column\": [values, ...]}; "
                            "declared values cost no privacy and are never suppressed")
    group.add_argument("--missing", choices=("category", "absent"), default="category",
                       help="missing values are a category of their own (default) or "
                            "absent from every combination (as in SDS)")


def _add_jobs(parser):
    parser.add_argument("-j", "--n-jobs", type=int, default=None, metavar="N",
                        help="sampling threads, -1 for all processors (default: 1); "
                             "the records do not depend on it")


def _add_reporting(parser, verbose_help):
    if verbose_help is not None:
        parser.add_argument("-v", "--verbose", action="store_true", help=verbose_help)
    parser.add_argument("--traceback", action="store_true",
                        help="show the full traceback of an error (for bug reports)")


def _add_fitting_command(commands, name, output, summary, description, progress):
    """A subcommand that fits on IN.csv: input, output and the fitting options."""
    command = commands.add_parser(name, help=summary, description=description)
    command.add_argument("input", metavar="IN.csv")
    command.add_argument("-o", "--output", required=True, metavar=output)
    _add_force(command)
    _add_reading(command)
    _add_privacy(command.add_argument_group("privacy"))
    _add_encoding(command.add_argument_group("encoding"))
    _add_reporting(command, progress)
    return command


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="dpsynth",
        description="Differentially private synthetic tabular data from DP marginals. "
                    "Start with 'dpsynth demo'.")
    parser.add_argument("--version", action="version", version=f"dpsynth {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    progress = "print one line per released combination length and sampling run"

    command = _add_fitting_command(
        commands, "synthesize", "OUT.csv", "fit on a CSV file and write DP synthetic records",
        "Release DP aggregates of IN.csv and write synthetic records sampled from them.",
        progress)
    command.add_argument("--aggregates-out", metavar="AGG.json",
                         help="also save the DP aggregates (.json, or .csv)")
    command.add_argument("-n", "--n-samples", type=int, default=None, metavar="N",
                         help="number of synthetic records (default: the DP record count)")
    _add_jobs(command)
    command.set_defaults(func=_cmd_synthesize)

    command = _add_fitting_command(
        commands, "aggregate", "AGG.json", "release only the DP aggregates of a CSV file",
        "Release the DP combination counts of IN.csv to AGG.json (.json, or .csv): the "
        "privacy boundary, a file to share and sample from with 'dpsynth sample'.",
        progress)
    command.set_defaults(func=_cmd_aggregate)

    command = commands.add_parser(
        "sample", help="write synthetic records from released DP aggregates",
        description="Synthesize records from a DP aggregates file alone (no privacy cost).")
    command.add_argument("aggregates", metavar="AGG.json")
    command.add_argument("-o", "--output", required=True, metavar="OUT.csv")
    command.add_argument("-n", "--n-samples", type=int, default=None, metavar="N",
                         help="number of records (default: the DP record count)")
    command.add_argument("--seed", type=int, default=None, help="random seed")
    _add_jobs(command)
    _add_force(command)
    _add_reporting(command, "print a line about the sampling run")
    command.set_defaults(func=_cmd_sample)

    command = commands.add_parser(
        "evaluate", help="compare synthetic records with the real ones",
        description="Fidelity of SYNTH.csv to REAL.csv: mean TVD of 1-, 2- and 3-way "
                    "marginals, SDS combination errors, NIST k-marginal score. Give the "
                    "--bounds and --n-bins used for synthesis so binned columns are "
                    "compared bin by bin.")
    command.add_argument("real", metavar="REAL.csv")
    command.add_argument("synthetic", metavar="SYNTH.csv")
    command.add_argument("--report", metavar="REPORT.html",
                         help="also write an HTML report (plots need matplotlib)")
    command.add_argument("--title", default="dpsynth evaluation report",
                         help="title of the HTML report")
    command.add_argument("--reporting-length", type=int, default=3, metavar="R",
                         help="longest marginal compared (default: 3)")
    _add_force(command)
    _add_reading(command)
    _add_bounds(command)
    _add_reporting(command, None)
    command.set_defaults(func=_cmd_evaluate)

    command = commands.add_parser(
        "demo", help="run end to end on a built-in table and print privacy and fidelity",
        description="Synthesize scikit-learn's handwritten digits (6 pixels binned with "
                    "public bounds, and the digit) and compare with the real data.")
    command.add_argument("--epsilon", type=float, default=4.0,
                         help="total privacy budget (default: 4)")
    command.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    command.add_argument("--report", metavar="REPORT.html",
                         help="also write an HTML report (plots need matplotlib)")
    _add_force(command)
    _add_reporting(command, None)
    command.set_defaults(func=_cmd_demo)
    return parser


def main(argv=None):
    """Run the ``dpsynth`` command line.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments without the program name; None reads ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit status: 0 on success, 1 on an error (reported on one line of
        stderr), 130 when interrupted.  Usage errors exit with status 2 via
        ``SystemExit``, as in every argparse program.
    """
    args = _build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return args.func(args)
    except KeyboardInterrupt:
        print("dpsynth: interrupted", file=sys.stderr)
        return 130
    except (CommandError, *_EXPECTED_ERRORS) as exc:
        if args.traceback:
            raise
        print(f"dpsynth {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug: still one line, with a way to see more
        if args.traceback:
            raise
        print(f"dpsynth {args.command}: error: internal error ({type(exc).__name__}): "
              f"{_one_line(exc)}; run again with --traceback and report it",
              file=sys.stderr)
        return 1
