"""Dask backend: fit on a ``dask.dataframe.DataFrame``, write samples as Parquet partitions.

Optional dependencies: dask, distributed, pyarrow (the repository's ``dask``
extra: ``pip install -e ".[dask]"``).

Nothing here collects the private table on one machine.  Each partition is
encoded on its worker with the declared schema, and only per-partition
statistics travel to the client: the distinct values of undeclared columns
(value discovery, private, used only through the DP threshold of the
release), the value counts of columns binned by DP quantiles or DP
frequent values, and the counts of the release's tables, summed in a tree.  The
noise is added once, on the client.  Counts are integers, so their sum, and
hence the noisy aggregates for a given seed, are the same as for the table
in memory, whatever the partitioning.

:func:`sample_to_parquet` samples a large synthetic table in parallel: one
task per partition, each with its own child of one
:class:`numpy.random.SeedSequence`, each shipping only the public
aggregates to its worker.
"""

import os
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from ..preprocessing import DPKBinsDiscretizer
from ..preprocessing._binning import binned_column_from_counts, binned_names
from ..preprocessing._categories import check_categories, value_list
from ..preprocessing._discretizer import ValueCounts, value_counts
from ..preprocessing._encoder import values_and_weights
from ..schema import python_scalar
from ..sampling import get_sampler
from ..utils._random import SAMPLE, stream
from ..utils._validation import _named_columns, column_labels
from .blocks import CodeBlocks, add_results

__all__ = ["check_frame", "named_frame", "fit_encoder", "DaskCodes", "sample_to_parquet", "split_multiplicities",
           "tree_reduce"]

_INSTALL = 'pip install "dask[dataframe]" distributed pyarrow (the "dask" extra)'


def _dask():
    try:
        import dask  # optional dependency (the "dask" extra)
        import dask.dataframe  # noqa: F401
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise ImportError(f"A dask DataFrame needs dask: {_INSTALL}.") from exc
    return dask


def named_frame(X, name="X"):
    """``(X, labels)``: a dask DataFrame ``X`` with its number labels named by their text
    (``0`` -> ``"0"``, lazily: a rename of the graph, no value read) and ``{name:
    label}`` of those labels (see :func:`~dpsynth.utils._validation.column_labels`), so
    that the release names its columns as it does for the same table in memory and
    gives the labels back; anything else unchanged, with no labels."""
    dd = _dask().dataframe
    if not isinstance(X, dd.DataFrame):
        return X, {}
    labels = column_labels(X._meta)
    if not labels:
        return X, {}
    named = _named_columns(X._meta, name)  # the errors of a table in memory
    return X.rename(columns=dict(zip(X._meta.columns, named.columns))), labels


def check_frame(X, name="X"):
    """Validate a dask DataFrame's declaration; return its (empty) pandas ``meta``.

    Only the column names and dtypes are read (public); the values are
    checked partition by partition when they are encoded.
    """
    dd = _dask().dataframe
    if not isinstance(X, dd.DataFrame):
        raise TypeError(f"{name} must be a dask DataFrame (not a {type(X).__name__}); "
                        "convert a dask Series with .to_frame().")
    meta = X._meta
    names = list(meta.columns)
    if not names:
        raise ValueError(f"{name} has 0 feature(s) while a minimum of 1 is required.")
    bad = [c for c in names if not isinstance(c, str)]
    if bad:
        raise TypeError(f"Column labels of {name} must be strings or numbers; got {bad[:5]!r}. "
                        "Rename them, e.g. X.columns = X.columns.astype(str).")
    if len(set(names)) != len(names):
        dup = sorted({c for c in names if names.count(c) > 1})
        raise ValueError(f"{name} has duplicate column names {dup}; rename them.")
    for column in names:
        dtype = meta[column].dtype
        if isinstance(dtype, pd.CategoricalDtype) and "__UNKNOWN_CATEGORIES__" in \
                list(dtype.categories):
            raise ValueError(
                f"Column {column!r} is categorical with unknown categories (as "
                "dd.read_parquet reads one); make them known, "
                f"X = X.categorize(columns=[{column!r}]) (one pass over the data; the "
                "categories stay private, released under DP like any undeclared "
                "column's values), or make it a plain column (.astype(str)).")
    return meta


def tree_reduce(parts, combine=add_results):
    """Combine delayed results pairwise, in a tree (no task holds every partial); delayed."""
    dask = _dask()
    combine = dask.delayed(combine, pure=True)
    while len(parts) > 1:
        parts = [combine(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return parts[0]


def _reads_values(binner):
    """Whether a binner's fit reads the values (else its bins are declared)."""
    return (binner.strategy == "quantile" or binner.frequent_values is not None
            or binner.inverse == "dp_histogram" or isinstance(binner.bounds, str))


def _may_read_values(encoder):
    """Whether any binner of ``encoder`` may read values (from its parameters alone)."""
    specs = encoder.binning.values() if isinstance(encoder.binning, dict) else [encoder.binning]
    bounds = (encoder.bounds or {}).values()
    return (any(isinstance(s, DPKBinsDiscretizer) or s == "quantile" for s in specs)
            or encoder.frequent_values is not None or encoder.inverse == "dp_histogram"
            or any(isinstance(b, str) for b in bounds))


def _value_counts(partition, names, dtypes=None):
    """Each column's value counts and missing count in one partition, whose dtypes must
    be the frame's declared ones (``dtypes``)."""
    for name, dtype in (dtypes or {}).items():
        if partition[name].dtype != dtype:
            raise TypeError(
                f"Column {name!r} is {dtype} in the dask DataFrame's metadata but "
                f"{partition[name].dtype} in one of its partitions (files written with "
                f"different types); give its dtype, e.g. X = X.astype({{{name!r}: "
                f"{str(partition[name].dtype)!r}}}), or read the files with that dtype.")
    return {name: (partition[name].value_counts(dropna=True), int(partition[name].isna().sum()))
            for name in names}


def _merge_value_counts(a, b):
    return {name: (a[name][0].add(b[name][0], fill_value=0), a[name][1] + b[name][1])
            for name in a}


def _column_counts(counts):
    """A binned column's :class:`~dpsynth.preprocessing._discretizer.ValueCounts` from its
    value counts summed over the partitions (one entry per distinct value)."""
    values, n_missing = counts
    distinct = values.index.to_numpy(dtype=np.float64, na_value=np.nan)
    return value_counts(distinct, values.to_numpy())._replace(n_missing=int(n_missing))


def _binner_column(name, binner, dtype, counts):
    """A binned column's :class:`Column`: declared bins, or fitted on its summed value
    counts, taken out of ``counts`` (absent when not computed: the bins are declared) and
    dropped once converted, so that the binner's fit does not hold them too.

    Every value-reading step of a binner (DP quantiles, DP frequent values,
    within-bin histograms, ``bounds="data"``) depends on the multiset of the
    values only: fitting on the value counts gives the binning of the column
    in memory, with the same random draws, and never builds a row per record.
    """
    summed = counts.pop(name, None)
    if not _reads_values(binner):
        return binned_column_from_counts(name, dtype, ValueCounts(None, None, 0), binner)
    column_counts = _column_counts(summed)
    del summed  # the last reference to the summed value counts
    return binned_column_from_counts(name, dtype, column_counts, binner)


def _distinct_values(name, dtype, counts):
    """A column's distinct values (a Series of its dtype) and the records holding each:
    what ``numeric="auto"`` reads (:func:`~dpsynth.preprocessing._numeric.fit_auto_column`)."""
    return values_and_weights(name, dtype, *counts)


def fit_encoder(encoder, X):
    """Fit a :class:`~dpsynth.preprocessing.TableEncoder` on a dask DataFrame's partitions.

    Declared categories and bins come from the declaration.  The values of
    undeclared columns are the union of every partition's distinct values
    (private, like the in-memory encoder's); a binner that reads values (DP
    quantiles, DP frequent values, ``inverse="dp_histogram"``,
    ``bounds="data"``) and ``numeric="auto"`` are fitted on the column's
    value counts summed over the partitions (one entry per distinct value,
    on the client; no row per record is rebuilt).  Both are merged in a
    tree.

    Returns
    -------
    encoder : TableEncoder
        ``encoder``, fitted; its ``schema_`` (and its DP bin edges, for the
        same ``random_state``) equal those of ``encoder.fit(X.compute())``.
    value_counts : dict
        ``{column: (value counts, number of missing values)}`` of the
        undeclared columns, for :class:`DaskCodes` (the counts that value
        discovery needs, so that it takes no second pass).
    """
    dask = _dask()
    meta = check_frame(X)
    encoder._validate_params()
    declared = check_categories(encoder.categories, meta)
    binned = binned_names(meta.columns, encoder.bounds, encoder.binning, declared)
    # undeclared columns, categorical ones too (their categories are private, as in
    # memory: the release finds which of them it names from the counts)
    discover = [name for name in meta.columns if name not in declared and name not in binned]
    counted = discover + (binned if binned and _may_read_values(encoder) else [])
    dtypes = meta.dtypes.to_dict()
    counts = (dask.compute(tree_reduce([dask.delayed(_value_counts, pure=True)(p, counted, dtypes)
                                        for p in X.to_delayed()], _merge_value_counts))[0]
              if counted else {})
    observed = {name: [python_scalar(v) for v in counts[name][0].index] for name in discover}
    encoder._build_schema(
        meta, True,
        discover=lambda name: value_list(name, meta[name].dtype, observed[name],
                                         encoder.max_float_values),
        fit_binner=lambda name, binner: _binner_column(name, binner, meta[name].dtype,
                                                       counts),
        column_values=lambda name: _distinct_values(name, meta[name].dtype, counts[name]))
    binned_now = {c.name for c in encoder.schema_ if c.binning is not None}  # numeric="auto"
    return encoder, {name: counts[name] for name in discover if name not in binned_now}


def _code_counts(schema, j, counts):
    """Counts of column ``j``'s codes from its value counts (what a bincount of the codes gives)."""
    values, n_missing = counts
    position = {v: i for i, v in enumerate(schema[j].values)}
    out = np.zeros(int(schema.n_values[j]))
    for value, count in zip(values.index, values.to_numpy()):
        out[position[python_scalar(value)]] += count
    if schema.missing == "category":
        out[schema.missing_codes[j]] += n_missing
    return out


def _encode(partition, encoder, funcs):
    if len(partition) == 0:  # an empty partition has no rows to check or encode
        codes = np.empty((0, len(encoder.schema_)), dtype=np.int32)
    else:
        codes = encoder._transform(partition)
    for func in funcs:
        codes = func(codes)
    return codes


def _block_statistic(partition, encoding, statistic, start=None):
    codes = _encode(partition, *encoding)
    return statistic(codes) if start is None else statistic(codes, start)


class DaskCodes(CodeBlocks):
    """A dask DataFrame's codes, one block per partition, encoded on the workers.

    Parameters
    ----------
    X : dask.dataframe.DataFrame
    encoder : TableEncoder
        Fitted (e.g. by :func:`fit_encoder`); shipped to the workers.
    funcs : tuple of callables, default=()
        Per-record transformations applied after encoding (see :meth:`map`).
    value_counts : dict, default=None
        The second output of :func:`fit_encoder`: :meth:`column_counts` of
        those columns then needs no pass over the partitions.
    """

    def __init__(self, X, encoder, funcs=(), value_counts=None):
        self.X = X
        self.encoder = encoder
        self.funcs = tuple(funcs)
        self.n_columns = len(encoder.schema_)
        self._starts = self._n_rows = None
        self._value_counts = value_counts or {}

    def column_counts(self, columns, n_values):
        # the value counts merged while fitting the encoder, when they cover the columns
        names = [self.encoder.schema_[j].name for j in columns]
        if self.funcs or not all(name in self._value_counts for name in names):
            return super().column_counts(columns, n_values)
        schema = self.encoder.schema_
        return tuple(_code_counts(schema, j, self._value_counts[name])
                     for j, name in zip(columns, names))

    def map(self, func, once=False):
        blocks = DaskCodes(self.X, self.encoder, self.funcs + (func,))
        blocks._starts, blocks._n_rows = self._starts, self._n_rows  # rows are kept
        return blocks

    def starts(self):
        """Position in the table of every partition's first row (one pass, then cached).

        Private (the partition sizes), used only to key per-record randomness.
        """
        if self._starts is None:
            dask = _dask()
            lengths = dask.compute(*[dask.delayed(len)(p) for p in self.X.to_delayed()])
            ends = np.cumsum(lengths, dtype=np.int64)
            self._starts = np.concatenate([[0], ends[:-1]]).astype(np.int64)
            self._n_rows = int(ends[-1]) if len(ends) else 0
        return self._starts

    def n_rows(self):
        if self._starts is None:
            self.starts()
        return int(self._n_rows)

    def map_sum(self, func, indexed=False):
        dask = _dask()
        # the encoder and the recodings hold the private schema: sent to each worker
        # once, never embedded in the task graph
        encoding = _shipped((self.encoder, self.funcs))
        starts = self.starts() if indexed else [None] * self.X.npartitions
        parts = [dask.delayed(_block_statistic, pure=True)(
            p, encoding, func, None if start is None else int(start))
            for p, start in zip(self.X.to_delayed(), starts)]
        return dask.compute(tree_reduce(parts))[0]


def _write_frame(frame, path):
    """Write ``frame`` to ``path``; the file appears only once complete."""
    if isinstance(frame, tuple):  # fitted with y: the target as its last column
        frame = pd.concat(frame, axis=1)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        frame.to_parquet(temporary, index=False)
        os.replace(temporary, path)
    finally:
        if temporary.exists():
            temporary.unlink()
    return str(path)


def _write_part(synthesizer, path, n, seed):
    """Sample ``n`` records (each fitted) into ``path``."""
    return _write_frame(synthesizer.sample(n, random_state=seed), path)


def _fit_model(synthesizer, size, seed):
    """The codes of the sampler's model of ``size`` records (the shared model)."""
    sampler = get_sampler(synthesizer.synthesis, n_jobs=synthesizer.n_jobs)
    sampler.fit(synthesizer.aggregates_)
    rng = np.random.default_rng(seed)
    model = sampler.fit_model(rng) if hasattr(sampler, "fit_model") else sampler.sample(size, rng)
    if model.shape[0] != size:
        raise RuntimeError(f"the sampler's model has {model.shape[0]} records, not {size}.")
    return model


def _write_model_part(synthesizer, model, multiplicities, path, seed):
    """Write the model's records, each ``multiplicities[i]`` times, in random order."""
    order_seed, decoding_seed = seed.spawn(2)
    index = np.repeat(np.arange(model.shape[0], dtype=np.int64), multiplicities)
    np.random.default_rng(order_seed).shuffle(index)
    codes = np.ascontiguousarray(model.T).take(index, axis=1).T  # decoded column by column
    return _write_frame(synthesizer._decode(codes, decoding_seed, as_frame=True), path)


def split_multiplicities(n, m, sizes, rng):
    """Per-partition multiplicities of ``m`` model records drawn ``n`` times in all.

    The records' multiplicities are those of
    :func:`~dpsynth.sampling.marginal_matching.expand_population` (each
    ``n // m`` times, ``n % m`` distinct ones once more); the partitions
    take them as consecutive slices of one random order would: partition
    ``i`` gets a multivariate hypergeometric draw of ``sizes[i]`` of the
    copies not yet taken.  The union of the partitions is thus distributed
    as one expanded sample of ``n`` records, and only ``m`` small integers
    per partition are held (never an index of ``n`` records).

    Yields
    ------
    ndarray of shape (m,)
        One per partition, in order; partition ``i``'s sums to ``sizes[i]``.
    """
    whole, rest = divmod(int(n), int(m))
    remaining = np.full(int(m), whole, dtype=np.int64)
    remaining[rng.choice(int(m), size=rest, replace=False)] += 1
    dtype = np.min_scalar_type(whole + 1)
    for size in sizes[:-1]:
        taken = rng.multivariate_hypergeometric(remaining, int(size), method="marginals")
        remaining -= taken
        yield taken.astype(dtype)
    yield remaining.astype(dtype)


def _shipped(obj, broadcast=True):
    """``obj`` for the tasks, out of the task graph when a distributed client runs:
    sent to every worker once (``broadcast``), or to one worker."""
    dask = _dask()
    try:
        from distributed import get_client  # optional dependency
        client = get_client()
    except (ImportError, ValueError):  # no distributed client: the local scheduler
        return dask.delayed(obj)
    return client.scatter(obj, broadcast=broadcast)


def sample_to_parquet(synthesizer, path, n_samples=None, *, n_partitions=None,
                      partition_size=500_000, random_state=None):
    """Sample a synthetic table as Parquet partitions, in parallel on dask.

    Every task works from the public aggregates only
    (:meth:`DPMarginalSynthesizer.from_aggregates`: no private state is
    shipped), and the randomness of each comes from its own child of the
    sampling stream of ``random_state``, so the result is reproducible for
    an integer ``random_state`` whatever the scheduler or the number of
    workers.

    When the sampler draws large samples from a fixed-size model (the
    marginal-matching sampler's ``model_size``, 300,000 records by default,
    smaller than ``n_samples``), the model is fitted once, by one task, and
    each partition's task draws its share of the model's copies and decodes
    them: the union of the partitions is distributed as ``sample(n_samples)``
    in memory (same model size, same randomized rounding of the
    multiplicities, see :func:`split_multiplicities`), and sampling costs
    little more than decoding and writing.  Otherwise (``model_size=0``, a
    sample no larger than the model, another sampler, or ``constraints``)
    each partition is sampled on its own, every record fitted.

    Parameters
    ----------
    synthesizer : DPMarginalSynthesizer
        Fitted.
    path : str or path-like
        A directory, created if needed; files ``part.<i>.parquet``.  Existing
        ``part.*.parquet`` files are refused rather than mixed in.
    n_samples : int, default=None
        Records in all; ``None`` gives ``n_records_``.
    n_partitions : int, default=None
        Number of files; default ``ceil(n_samples / partition_size)``.
    partition_size : int, default=500_000
        Records per partition when ``n_partitions`` is not given.
    random_state : int, SeedSequence, Generator or None, default=None
        Root of the partitions' streams; ``None`` uses the synthesizer's
        ``random_state`` (OS entropy if that is None too).

    Returns
    -------
    list of str
        The files written, in order; partition sizes differ by at most one
        and sum to ``n_samples``.
    """
    dask = _dask()
    check_is_fitted(synthesizer, "aggregates_")
    n = synthesizer.n_records_ if n_samples is None else n_samples
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n_samples must be a non-negative integer; got {n_samples!r}.")
    if isinstance(partition_size, bool) or not isinstance(partition_size, (int, np.integer)) \
            or partition_size < 1:
        raise ValueError(f"partition_size must be a positive integer; got {partition_size!r}.")
    if n_partitions is None:
        n_partitions = max(-(-int(n) // int(partition_size)), 1)
    if isinstance(n_partitions, bool) or not isinstance(n_partitions, (int, np.integer)) \
            or n_partitions < 1:
        raise ValueError(f"n_partitions must be a positive integer; got {n_partitions!r}.")
    directory = Path(os.fspath(path))
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"path {str(directory)!r} exists and is not a directory.")
    directory.mkdir(parents=True, exist_ok=True)
    if any(directory.glob("part.*.parquet")):
        raise ValueError(f"path {str(directory)!r} already holds part.*.parquet files; "
                         "give an empty or new directory.")
    synthesis = synthesizer.synthesis
    if not isinstance(synthesis, str):
        synthesis = clone(synthesis)
    public = type(synthesizer).from_aggregates(
        synthesizer.aggregates_, synthesis=synthesis, n_jobs=1,
        max_memory=synthesizer.max_memory, constraints=synthesizer.constraints)
    n_partitions, n = int(n_partitions), int(n)
    model_stream, split_stream, parts_stream = stream(
        synthesizer.random_state if random_state is None else random_state, SAMPLE).spawn(3)
    seeds = parts_stream.spawn(n_partitions)
    sizes = np.full(n_partitions, n // n_partitions)
    sizes[: n % n_partitions] += 1
    width = len(str(n_partitions - 1))
    paths = [directory / f"part.{i:0{width}d}.parquet" for i in range(n_partitions)]
    model_size = getattr(get_sampler(synthesis), "model_size", 0)
    public = _shipped(public)  # one thread per task: the workers' threads are the cores
    if synthesizer.constraints or not 0 < model_size < n:
        tasks = [dask.delayed(_write_part, pure=False)(public, p, int(size), seed)
                 for p, size, seed in zip(paths, sizes, seeds)]
        return list(dask.compute(*tasks))
    model = dask.delayed(_fit_model, pure=True)(public, model_size, model_stream)
    split = split_multiplicities(n, model_size, sizes, np.random.default_rng(split_stream))
    tasks = [dask.delayed(_write_model_part, pure=False)(public, model, _shipped(counts, broadcast=False), p, seed)
             for p, counts, seed in zip(paths, split, seeds)]
    return list(dask.compute(*tasks))
