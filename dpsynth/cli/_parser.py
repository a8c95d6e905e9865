"""The argument parser of the ``dpsynth`` command."""

import argparse
import codecs
import csv
import math

from .._version import __version__
from . import aggregate, demo, evaluate, sample, schema, synthesize
from ._distributed import add_engine_options

__all__ = ["build_parser"]


def _names(text):
    """``"a,b"`` -> ``["a", "b"]`` for --columns/--drop; a name holding a comma is
    quoted as in a CSV header (``'"x,y",id'`` -> ``["x,y", "id"]``)."""
    try:
        row = next(csv.reader([text], skipinitialspace=True, strict=True), [])
    except csv.Error as exc:
        raise argparse.ArgumentTypeError(f"expected COL,COL,... (a name holding a comma "
                                         f'in double quotes, "x,y"); got {text!r}: {exc}')
    names = [name.strip() for name in row]
    if not names or not all(names):
        raise argparse.ArgumentTypeError(f"expected COL,COL,... without empty names; "
                                         f"got {text!r}")
    return names


def _separator(text):
    text = {"\\t": "\t", "tab": "\t", "TAB": "\t"}.get(text, text)
    if len(text) != 1 or text in "\"\n\r":
        raise argparse.ArgumentTypeError(f"expected one character (\\t for a tab); "
                                         f"got {text!r}")
    return text


def _encoding(text):
    try:
        codecs.lookup(text)
    except LookupError:
        raise argparse.ArgumentTypeError(f"unknown text encoding {text!r}; e.g. utf-8, "
                                         "cp1252 or latin-1") from None
    return text


def _add_reading(group, *, selection=True,
                 encoding_help="the input's text encoding (default utf-8, a byte-order "
                               "mark ignored; cp1252 for a CSV saved by Excel on Windows)"):
    group.add_argument("--sep", type=_separator, default=None, metavar="CHAR",
                       help="field separator, '\\t' for a tab (default: the one of , ; "
                            "tab | that splits the header row into the most columns, "
                            "never guessed from records; ',' with --no-header)")
    group.add_argument("--encoding", type=_encoding, default="utf-8", metavar="NAME",
                       help=encoding_help)
    group.add_argument("--na-values", action="append", metavar="TEXT",
                       help="also read the field TEXT as a missing value (repeatable); "
                            "by default only the empty field is missing and 'NA', "
                            "'None', ... stay text")
    group.add_argument("--no-header", action="store_true",
                       help="the first line is a record: the --schema columns name "
                            "the fields in order (one per field), else they are "
                            "column_1, column_2, ...; every record has as many fields")
    if selection:
        choose = group.add_mutually_exclusive_group()
        choose.add_argument("--columns", type=_names, metavar="COL,...",
                            help="use only these columns (in this order); a name with a "
                                 "comma in double quotes: '\"x,y\",id'")
        choose.add_argument("--drop", type=_names, metavar="COL,...",
                            help="leave out these columns (e.g. identifiers)")


def _add_force(group):
    group.add_argument("--force", action="store_true",
                       help="overwrite existing outputs (never an input)")


def _add_declarations(group, *, categories=True):
    group.add_argument("--schema", metavar="FILE.json",
                       help="declared columns: kinds, dtypes, public bounds and "
                            "categories, missing-value markers (see the tutorial); "
                            "--bounds and --categories add to it")
    group.add_argument("--bounds", action="extend", nargs="+", metavar="COL=LO:HI",
                       help="public range of a numeric column, which is then binned "
                            "(e.g. --bounds age=0:120 income=0.0:1e6); integer LO and HI "
                            "declare integers, a decimal point declares decimal numbers; "
                            "values outside the range go to the end bins")
    group.add_argument("--special-values", action="extend", nargs="+",
                       metavar="COL=V1,V2",
                       help="public special values of a numeric column, each with a bin of "
                            "its own and reproduced exactly (e.g. --special-values "
                            "capital-gain=0 hours-per-week=40): point masses such as 0, "
                            "round numbers and top codes, or codes outside the bounds "
                            "such as -9")
    group.add_argument("--no-missing", action="extend", nargs="+", metavar="COL",
                       help="columns declared to hold no missing values (like SQL NOT "
                            "NULL): no synthetic record gets one there, and a missing value "
                            "in the input is an error")
    group.add_argument("--n-bins", type=int, default=10, metavar="N",
                       help="bins per numeric column (default: 10)")
    if categories:
        group.add_argument("--categories", metavar="FILE.json",
                           help="public categories: a JSON object {\"column\": [values, "
                                "...]}; declared values cost no privacy and are never "
                                "suppressed (numbers declare a numeric column)")


def _size(text):
    """``"4G"``, ``"500M"``, ``"64k"`` or a number of bytes -> bytes (float)."""
    units = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
    number, unit = (text[:-1], text[-1].lower()) if text[-1:].lower() in units else (text, "")
    try:
        value = float(number) * units.get(unit, 1)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a size such as 4G, 500M or a number of bytes; got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"the size must be positive; got {text!r}")
    return value


def _add_privacy(group):
    group.add_argument("--epsilon", type=float, default=4.0,
                       help="total privacy budget (default: 4)")
    group.add_argument("--delta", type=float, default=None,
                       help="delta of the (epsilon, delta) guarantee, at most 0.01 (default: "
                            "1e-9, fixed before seeing the data and far below 1 / the "
                            "number of records)")
    group.add_argument("--reporting-length", type=int, default=3, metavar="R",
                       help="longest combination of columns whose counts are released "
                            "(default: 3)")
    group.add_argument("--release", choices=("auto", "workload", "sds"), default="auto",
                       help="'workload' (what 'auto' picks): all 1-way and adaptively chosen "
                            "2- and 3-way marginals, the most accurate; 'sds': every "
                            "combination up to R with thresholds, as SDS/pac-synth")
    group.add_argument("--target", metavar="COL", default=None,
                       help="the column a model will predict from the synthetic records: "
                            "the 2- and 3-way marginals holding it are selected first "
                            "(a public declaration; it comes back as the last column)")
    group.add_argument("--max-memory", type=_size, default=None, metavar="SIZE",
                       help="memory the release may use, e.g. 4G or 500M (default: half the "
                            "available RAM); checked from public facts before the work starts")
    group.add_argument("--seed", type=int, default=None,
                       help="random seed, for tests only: publish releases made without it")


def _add_encoding(group):
    _add_declarations(group)
    group.add_argument("--binning", choices=("uniform", "log", "quantile"), default="uniform",
                       help="bin edges of numeric columns: equal widths (default), "
                            "geometric widths, or DP quantiles (needs --binning-epsilon)")
    group.add_argument("--binning-epsilon", type=float, default=None, metavar="EPS",
                       help="extra privacy budget of the DP quantile bin edges")
    group.add_argument("--decimals", action="extend", nargs="+", metavar="[COL=]K",
                       help="decimals of the synthetic values of decimal-number columns: "
                            "K for every such column, COL=K for one (default: those "
                            "an undeclared column is written with, a DP decision, else "
                            "four significant digits of the column's public or DP range)")
    group.add_argument("--missing", choices=("category", "uncounted", "absent"),
                       default="category", metavar="{category,uncounted}",
                       help="'category' (default): a missing value is one more value of "
                            "its column, synthesized as often as the DP counts say. "
                            "'uncounted' (SDS's semantics; formerly 'absent'): missing "
                            "values are left out of every count, and the synthetic "
                            "records get an empty cell wherever a column's DP counts fall "
                            "short of the record count, so columns without missing "
                            "values can get some")


def _add_jobs(parser):
    parser.add_argument("-j", "--n-jobs", type=int, default=None, metavar="N",
                        help="sampling threads (default: every processor; 1 for one "
                             "thread); the records do not depend on it")


def _add_samples(parser, what):
    parser.add_argument("-n", "--n-samples", type=int, default=None, metavar="N",
                        help=f"number of {what} (default: the DP record count); written "
                             "in chunks of 100,000, so any N fits in memory")


def _add_reporting(parser, verbose_help):
    parser.add_argument("-v", "--verbose", action="store_true", help=verbose_help)
    parser.add_argument("--traceback", action="store_true",
                        help="show the full traceback of an error (for bug reports)")


def _add_fitting_command(commands, name, output, summary, description, progress):
    """A subcommand that fits on IN.csv: input, output and the fitting options."""
    command = commands.add_parser(name, help=summary, description=description)
    command.add_argument("input", metavar="IN.csv",
                         help="the CSV file; with --engine dask, a glob of CSV or Parquet "
                              "files (quoted, e.g. 'data/*.parquet') or their directory")
    command.add_argument("-o", "--output", required=True, metavar=output)
    _add_force(command)
    _add_reading(command.add_argument_group("reading IN.csv"))
    _add_privacy(command.add_argument_group("privacy"))
    _add_encoding(command.add_argument_group("encoding"))
    _add_reporting(command, progress)
    add_engine_options(command)
    return command


def build_parser():
    """The ``dpsynth`` parser; each subcommand sets ``func`` to its module's ``run``.

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = argparse.ArgumentParser(
        prog="dpsynth",
        description="Differentially private synthetic tabular data from DP marginals. "
                    "Start with 'dpsynth demo'.")
    parser.add_argument("--version", action="version", version=f"dpsynth {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    progress = "print one line per released combination length and sampled chunk"

    command = _add_fitting_command(
        commands, "synthesize", "OUT.csv", "fit on a CSV file and write DP synthetic records",
        "Release DP aggregates of IN.csv and write synthetic records sampled from them. "
        "Every field is read as text; a DP count decides which undeclared columns hold "
        "numbers, binned under DP (--bounds or --schema declare them for free).",
        progress)
    command.add_argument("--aggregates-out", metavar="AGG.json",
                         help="also save the DP aggregates (.json, or .csv); saved before "
                              "sampling, so a failed sampling never loses the release")
    _add_samples(command, "synthetic records")
    _add_jobs(command)
    command.set_defaults(func=synthesize.run)

    command = _add_fitting_command(
        commands, "aggregate", "AGG.json", "release only the DP aggregates of a CSV file",
        "Release the DP combination counts of IN.csv to AGG.json (.json, or .csv): the "
        "privacy boundary, a file to share and sample from with 'dpsynth sample'.",
        progress)
    command.set_defaults(func=aggregate.run)

    command = commands.add_parser(
        "sample", help="write synthetic records from released DP aggregates",
        description="Synthesize records from a DP aggregates file alone (no privacy cost). "
                    "The file is checked completely before anything is written.")
    command.add_argument("aggregates", metavar="AGG.json")
    command.add_argument("-o", "--output", required=True, metavar="OUT.csv")
    _add_samples(command, "records")
    command.add_argument("--seed", type=int, default=None, help="random seed")
    command.add_argument("--where", action="append", metavar="COL=VALUE", default=None,
                         help="condition every record satisfies: COL=VALUE, or COL=LO:HI for "
                              "a numeric column (LO or HI may be empty); repeat it for more "
                              "columns, or for one column to allow several values. Without "
                              "-n, writes the model's expected number of matching records")
    command.add_argument("--schema", metavar="FILE.json",
                         help="a declaration whose public \"constraints\" every record "
                              "satisfies (its columns are not used)")
    _add_jobs(command)
    _add_force(command)
    _add_reporting(command, "print a line per sampled chunk")
    add_engine_options(command)
    command.set_defaults(func=sample.run)

    command = commands.add_parser(
        "evaluate", help="compare synthetic records with the real ones",
        description="Fidelity of SYNTH.csv to REAL.csv: mean TVD of 1-, 2- and 3-way "
                    "marginals, SDS combination errors, NIST k-marginal score. Give the "
                    "release with --aggregates so both tables are read and binned with its "
                    "public schema (and the report shows its privacy), or the --bounds "
                    "(or --schema) used for synthesis (other columns of many numbers or "
                    "dates are compared through the real table's quantiles). The columns "
                    "both tables hold are "
                    "compared (a column only one holds, such as an identifier dropped "
                    "when synthesizing, is left out with a note); --drop and --columns "
                    "take the same names as the command that made SYNTH.csv.")
    command.add_argument("real", metavar="REAL.csv")
    command.add_argument("synthetic", metavar="SYNTH.csv")
    command.add_argument("--aggregates", metavar="AGG.json",
                         help="the release SYNTH.csv was sampled from: its public schema "
                              "bins both tables, its privacy goes into the report")
    command.add_argument("--report", metavar="REPORT.html",
                         help="also write an HTML report (plots need matplotlib)")
    command.add_argument("--title", default="dpsynth evaluation report",
                         help="title of the HTML report")
    command.add_argument("--reporting-length", type=int, default=3, metavar="R",
                         help="longest marginal compared (default: 3)")
    _add_force(command)
    _add_reading(command.add_argument_group("reading the tables"),
                 encoding_help="REAL.csv's text encoding (default utf-8; cp1252 for a CSV "
                               "saved by Excel on Windows); SYNTH.csv, written by dpsynth, "
                               "is read as UTF-8")
    _add_declarations(command.add_argument_group("binning (without --aggregates)"),
                      categories=False)
    _add_reporting(command, "print a line per evaluation step")
    command.set_defaults(func=evaluate.run)

    command = commands.add_parser(
        "schema", help="draft a --schema file from a CSV file (for its owner to edit)",
        description="Tools for the --schema declaration file.")
    actions = command.add_subparsers(dest="action", required=True, metavar="ACTION")
    draft = actions.add_parser(
        "draft", help="write a declaration drafted from the data",
        description="Write a --schema declaration drafted from IN.csv: the observed "
                    "categories of text columns, the dtype and observed range of numeric "
                    "columns (exact values for those with few), their frequent values as "
                    "special values, and no_missing for complete columns. Everything kept "
                    "in it is published WITHOUT differential privacy by releases made "
                    "with it: the owner reviews and edits it (public bounds, no private "
                    "categories) before passing it to --schema.")
    draft.add_argument("input", metavar="IN.csv")
    draft.add_argument("-o", "--output", metavar="SCHEMA.json",
                       help="write the draft there (default: stdout)")
    _add_force(draft)
    _add_reading(draft.add_argument_group("reading IN.csv"))
    draft.add_argument("--max-categories", type=int, default=100, metavar="N",
                       help="list the values of text columns with at most N of them "
                            "(default: 100); the others are left out of the draft (undeclared: "
                            "found by the DP release)")
    draft.add_argument("--max-numeric-categories", type=int, default=32, metavar="N",
                       help="declare numeric columns with at most N values categorical, "
                            "others numeric with bounds (default: 32)")
    _add_reporting(draft, "(no progress to show)")
    draft.set_defaults(func=schema.run_draft, command="schema draft")

    command = commands.add_parser(
        "demo", help="run end to end on a built-in table and print privacy and fidelity",
        description="Synthesize scikit-learn's handwritten digits (6 pixels binned with "
                    "public bounds, and the digit) and compare with the real data.")
    command.add_argument("--epsilon", type=float, default=4.0,
                         help="total privacy budget (default: 4)")
    command.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    command.add_argument("--report", metavar="REPORT.html",
                         help="also write an HTML report (plots need matplotlib)")
    command.add_argument("--write-csv", metavar="PEOPLE.csv",
                         help="instead, write the generated people table of the CSV "
                              "tutorial (5,000 records, no real person; --seed picks "
                              "the table) and stop")
    _add_force(command)
    _add_reporting(command, "print progress lines")
    command.set_defaults(func=demo.run)
    return parser
