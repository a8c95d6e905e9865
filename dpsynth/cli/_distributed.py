"""``--engine dask``: read CSV/Parquet globs as dask DataFrames, write Parquet partitions.

With ``--engine dask`` a fitting command reads ``IN`` (a file, a glob such as
``'data/*.csv'`` or ``'data/part-*.parquet'``, or a directory of such files)
as one partition per file, on the workers of ``--scheduler ADDRESS`` or of a
local cluster started for the command; each CSV file is read as text with
:func:`dpsynth.io.read_csv` exactly as the pandas engine reads one file.  An
output ``-o DIR`` that does not end in ``.csv`` is written as Parquet
partitions (:func:`dpsynth.engines.dask.sample_to_parquet`).
"""

from contextlib import contextmanager
import glob
import logging
import os
import shutil
import tempfile
import warnings

import pandas as pd

from .. import io
from ..engines.dask import sample_to_parquet
from ._common import CommandError, one_line

__all__ = ["add_engine_options", "check_engine_options", "engine_client", "input_files",
           "read_distributed", "parquet_output", "check_partition_output",
           "write_partitions"]


PARTITION_SIZE = 500_000
"""Records per Parquet file that ``--engine dask`` writes, unless ``--partition-size``."""


def add_engine_options(parser):
    """``--engine``, ``--scheduler`` and ``--partition-size`` (an argument group)."""
    group = parser.add_argument_group("distributed (dpsynth[dask])")
    group.add_argument("--engine", choices=("pandas", "dask"), default="pandas",
                       help="'dask' reads IN as a glob of CSV or Parquet files, one "
                            "partition per file, counts on a dask cluster, and writes an "
                            "output that does not end in .csv as Parquet partitions "
                            "(default: pandas)")
    group.add_argument("--scheduler", metavar="ADDRESS", default=None,
                       help="address of a running dask scheduler, e.g. tcp://host:8786 "
                            "(default with --engine dask: a local cluster with one worker "
                            "per processor, or --n-jobs workers)")
    group.add_argument("--partition-size", type=int, default=None, metavar="N",
                       help="with --engine dask: records per Parquet file written "
                            f"(default: {PARTITION_SIZE:,})")


def check_engine_options(args):
    """Refuse inconsistent engine options before any work is done."""
    engine = getattr(args, "engine", "pandas")
    if getattr(args, "scheduler", None) is not None and engine != "dask":
        raise CommandError("--scheduler is used with --engine dask; add --engine dask")
    size = getattr(args, "partition_size", None)
    if size is not None and size < 1:
        raise CommandError("--partition-size must be a positive integer")
    if size is not None and engine != "dask":
        raise CommandError("--partition-size sets the records per Parquet file that "
                           "--engine dask writes; add --engine dask (the pandas engine "
                           "writes one CSV file)")
    if hasattr(args, "partition_size") and size is None:
        args.partition_size = PARTITION_SIZE
    if engine == "dask":
        try:
            import dask.dataframe  # noqa: F401  (optional dependency)
            import distributed  # noqa: F401  (optional dependency)
        except ImportError:
            raise CommandError('--engine dask needs dask: pip install "dask[dataframe]" '
                               'distributed pyarrow') from None


@contextmanager
def engine_client(args):
    """A dask client for the command (None with the pandas engine), closed afterwards."""
    if getattr(args, "engine", "pandas") != "dask":
        yield None
        return
    import distributed  # optional dependency (the "dask" extra)

    # the workers' operational logs and dask's notes on graph sizes (memory, timing)
    # are not part of the command's output
    logging.getLogger("distributed").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
    if args.scheduler is not None:
        try:
            client = distributed.Client(args.scheduler, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise CommandError(f"cannot reach the dask scheduler at {args.scheduler}: "
                               f"{one_line(exc)}") from None
        with client:
            yield client
        return
    workers = getattr(args, "n_jobs", None)
    if workers is None or workers < 1:
        workers = os.cpu_count() or 1
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        yield client


def input_files(pattern):
    """The files of ``pattern`` (a file, glob or directory), sorted, all CSV or all Parquet.

    Returns
    -------
    files : list of str
    kind : {"csv", "parquet"}
    """
    if os.path.isdir(pattern):
        files = sorted(f for f in glob.glob(os.path.join(pattern, "*"))
                       if f.lower().endswith((".csv", ".parquet")))
    else:
        files = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
    files = [f for f in files if os.path.isfile(f)]
    if not files:
        raise CommandError(f"no input file matches {pattern}")
    kinds = {"parquet" if f.lower().endswith(".parquet") else "csv" for f in files}
    if len(kinds) > 1:
        raise CommandError(f"{pattern} matches both CSV and Parquet files; give one kind")
    for path in files:
        if not os.access(path, os.R_OK):
            raise CommandError(f"cannot read {path}: permission denied")
    return files, kinds.pop()


def _read_csv_part(path, declaration, options, names):
    frame = io.read_csv(path, declaration, **options)
    if names is not None and list(frame.columns) != names:
        raise ValueError(f"{path} has the columns {list(frame.columns)}, but the first file "
                         f"has {names}; every file must have the same columns")
    io.check_values(frame, declaration, path=path,
                    first_line=2 if options.get("header", True) else 1, clip=True)
    return frame


def read_distributed(args, pattern, declaration):
    """``pattern``'s files as a dask DataFrame read as the command's options say.

    CSV files are read on the workers, one partition each, as text unless
    declared (the declaration's dtypes, never the data's: every partition
    has the same dtypes).  Parquet files keep their stored column types.
    """
    import dask  # optional dependencies (the "dask" extra)
    import dask.dataframe as dd

    files, kind = input_files(pattern)
    columns = getattr(args, "columns", None)
    drop = getattr(args, "drop", None)
    if kind == "parquet":
        try:
            frame = dd.read_parquet(files)
        except (ValueError, OSError) as exc:
            raise CommandError(f"cannot read {pattern} as Parquet: {one_line(exc)}") from None
        names = list(frame.columns)
        unknown = [c for c in (columns or drop or ()) if c not in names]
        unknown += [c for c in declaration.names if c not in names]
        if unknown:
            raise CommandError(f"{pattern} has no column {unknown[0]!r}; "
                               f"{io.column_list(names)}")
        if columns is not None:
            frame = frame[list(columns)]
        elif drop:
            frame = frame.drop(columns=list(drop))
        unknown = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)
                   and not frame[c].cat.known]
        if unknown:  # categories read from the files: private, discovered under DP as
            # any undeclared column's values (one pass over the data)
            frame = frame.categorize(columns=unknown)
        return frame
    options = {"sep": getattr(args, "sep", None), "columns": columns, "drop": drop,
               "header": not getattr(args, "no_header", False),
               "encoding": getattr(args, "encoding", "utf-8")}
    try:
        first = dask.compute(dask.delayed(_read_csv_part)(files[0], declaration, options,
                                                          None))[0]
    except ValueError as exc:
        raise CommandError(one_line(exc)) from None
    meta = first.iloc[:0]  # the declaration's dtypes (read_csv never infers them)
    names = list(meta.columns)
    parts = [dask.delayed(_read_csv_part)(f, declaration, options, names) for f in files]
    with dask.config.set({"dataframe.convert-string": False}):  # keep read_csv's dtypes
        return dd.from_delayed(parts, meta=meta, verify_meta=True)


def parquet_output(args, path):
    """Whether ``path`` is written as Parquet partitions (``--engine dask``, not ``.csv``)."""
    return getattr(args, "engine", "pandas") == "dask" and not path.lower().endswith(".csv")


def check_partition_output(path, force):
    """Refuse a Parquet output directory that would mix old and new partitions."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise CommandError(f"output {path} exists and is not a directory (Parquet "
                           "partitions are written to a directory)")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise CommandError(f"directory of output {path} does not exist")
    old = glob.glob(os.path.join(path, "part.*.parquet"))
    if old and not force:
        raise CommandError(f"output {path} holds Parquet partitions; pass --force to "
                           "replace them")


def write_partitions(synthesizer, n_samples, path, seed, partition_size, force):
    """Sample into Parquet partitions of ``path`` on the cluster; returns the record count.

    The partitions are written to a staging directory beside ``path`` and moved in
    once all are written (the old ones, with ``force``, removed only then): an
    interrupted or failed run leaves ``path`` as it was, never a part of a sample.
    """
    n = synthesizer.n_records_ if n_samples is None else n_samples
    parent = os.path.dirname(os.path.abspath(path))
    staging = tempfile.mkdtemp(prefix=".dpsynth-partitions.", dir=parent)
    try:
        sample_to_parquet(synthesizer, staging, n, partition_size=partition_size,
                          random_state=seed)
        os.makedirs(path, exist_ok=True)
        if force:
            for old in glob.glob(os.path.join(path, "part.*.parquet")):
                os.remove(old)
        for new in sorted(glob.glob(os.path.join(staging, "part.*.parquet"))):
            os.replace(new, os.path.join(path, os.path.basename(new)))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return n
