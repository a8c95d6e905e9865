"""Reference synthesizers that dpsynth is compared with: pac-synth, MST and AIM.

``run_pacsynth`` runs pac-synth's ``DpAggregateSeededSynthesizer`` (the SDS DP
aggregate-seeded synthesizer); ``run_mst`` and ``run_aim`` run smartnoise-synth's
MST and AIM and sample i.i.d. records from the fitted model (``sample_model``). All three
take an all-categorical :class:`pandas.DataFrame` (strings, ``NaN`` for
missing, as returned by :mod:`benchmarks.datasets`) and return timings and the
synthetic table. ``measure_in_subprocess`` runs any of them in a child
Python process so that its peak memory can be measured.

The module also holds temporary metric helpers (``marginal_tvd``,
``exact_aggregates``, ``aggregate_errors``), to be replaced by
``dpsynth.metrics`` once the package has it.

Run as ``python -m benchmarks.reference_runners REQUEST RESULT`` it is the child
side of ``measure_in_subprocess``.
"""

import itertools
import math
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from .datasets import load

MISSING = "<NA>"
"""Explicit value standing in for a missing cell inside the reference libraries."""

_DELIMITER = ";"
_REPO = Path(__file__).resolve().parents[1]


def _fill_missing(df):
    """Return ``df`` as ``object`` dtype with ``NaN`` replaced by :data:`MISSING`."""
    if (df == MISSING).any(axis=None):
        raise ValueError(f"the data already contains the missing-value marker {MISSING!r}")
    return df.astype(object).where(df.notna(), MISSING)


def _restore_missing(df):
    """Return ``df`` with :data:`MISSING` and empty strings replaced by ``NaN``."""
    return df.astype(object).mask(df.isin([MISSING, ""]))


def run_pacsynth(df, epsilon=4.0, reporting_length=3, seed=0):
    """Fit pac-synth's DP aggregate-seeded synthesizer and sample from it.

    Parameters are the SDS defaults, set explicitly: percentile 99 with 1% of
    epsilon, 0.5% of epsilon for the record count, accuracy mode "prioritize
    long combinations", uncontrolled fabrication, weight selection percentile
    95, no synthetic counts, delta left to pac-synth's runtime rule
    ``1 / (ln(n) * n)`` with ``n`` its DP record count. Every column is listed
    in ``sensitive_zeros`` and missing cells are passed as :data:`MISSING`, so
    no value is dropped from the aggregates. ``len(df)`` records are sampled
    (without a target pac-synth keeps sampling until its DP counts are used
    up, which on NIST MA gave about twice as many, mostly partial, records).

    Parameters
    ----------
    df : pandas.DataFrame
        All-categorical table, strings or ``NaN``.
    epsilon : float, default=4.0
        Privacy budget.
    reporting_length : int, default=3
        Longest attribute combination aggregated.
    seed : int, default=0
        Unused: pac-synth 0.0.8 offers no way to seed its randomness. Kept so
        that all runners share one signature.

    Returns
    -------
    dict
        ``fit_seconds``, ``sample_seconds``; ``aggregates``, the released DP
        counts as ``{((column, value), ...): count}`` with pairs in column order
        and ``None`` for a missing value; ``synthetic``, ``len(df)`` rows with
        the columns of ``df`` and ``NaN`` for missing or unsynthesised cells;
        ``empty_cell_share``, the share of cells pac-synth left empty (real
        missing values excluded); ``dp_number_of_records`` and ``delta``.
    """
    import pacsynth

    del seed
    columns = list(df.columns)
    data = _fill_missing(df)
    if any(":" in column for column in columns) or data.apply(
        lambda column: column.str.contains(_DELIMITER, regex=False)
    ).to_numpy().any():
        raise ValueError(f"column names must not contain ':' nor values {_DELIMITER!r}")
    params = (
        pacsynth.DpAggregateSeededParametersBuilder()
        .reporting_length(reporting_length)
        .epsilon(epsilon)
        .percentile_percentage(99)
        .percentile_epsilon_proportion(0.01)
        .number_of_records_epsilon_proportion(0.005)
        .accuracy_mode(pacsynth.AccuracyMode.prioritize_long_combinations())
        .fabrication_mode(pacsynth.FabricationMode.uncontrolled())
        .weight_selection_percentile(95)
        .use_synthetic_counts(False)
        .build()
    )
    dataset = pacsynth.Dataset.from_data_frame(data, sensitive_zeros=columns)
    synth = pacsynth.DpAggregateSeededSynthesizer(params)

    start = time.perf_counter()
    synth.fit(dataset)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    raw = synth.sample(len(df))
    sample_seconds = time.perf_counter() - start

    synthetic = pd.DataFrame(raw[1:], columns=raw[0])[columns]
    n_records = synth.get_dp_number_of_records()
    return {
        "fit_seconds": fit_seconds,
        "sample_seconds": sample_seconds,
        "aggregates": _parse_aggregates(synth.get_dp_aggregates(_DELIMITER), columns),
        "synthetic": _restore_missing(synthetic),
        "empty_cell_share": float((synthetic == "").to_numpy().mean()),
        "dp_number_of_records": n_records,
        "delta": 1.0 / (math.log(n_records) * n_records),
    }


def _parse_aggregates(aggregates, columns):
    """Turn pac-synth's ``"col:value;col:value"`` keys into tuples of pairs.

    Parameters
    ----------
    aggregates : dict of str to int
        Output of ``get_dp_aggregates(";")``.
    columns : list of str
        Column order used to sort the pairs of each combination.

    Returns
    -------
    dict
        ``{((column, value), ...): count}``, ``None`` for a missing value.
    """
    position = {column: i for i, column in enumerate(columns)}
    parsed = {}
    for key, count in aggregates.items():
        pairs = []
        for item in key.split(_DELIMITER):
            column, value = item.split(":", 1)
            pairs.append((column, None if value == MISSING else value))
        parsed[tuple(sorted(pairs, key=lambda pair: position[pair[0]]))] = int(count)
    return parsed


def sample_model(model, rows, rounding=False):
    """Draw ``rows`` records from a fitted mbi ``MarkovRandomField`` (i.i.d. or rounded).

    The model's graph is triangulated into a junction tree
    (``mbi.junction_tree.make_junction_tree``), whose elimination order,
    reversed, is a perfect elimination order: when a column is drawn, the
    columns already drawn that share a junction-tree clique with it separate
    it from all other columns already drawn. Each column is therefore drawn
    from the model's conditional distribution given those columns (read off
    the clique marginals computed by ``message_passing_stable``), with one
    independent uniform per record. NumPy's global generator supplies the
    uniforms, as in mbi.

    This is what ``synthetic_data(method="sample")`` does in mbi 1.1.0, with
    two differences, both fixed upstream in mbi's pull request 145: mbi 1.1.0
    conditions on the columns sharing one of the model's *measured* cliques,
    which on a graph that is not chordal (AIM's, generally) misses the
    dependencies carried by the triangulation's fill-in edges; and its
    default ``method="round"`` assigns values by rank within each group (see
    :func:`run_mst`). On a tree (MST's graph) the two conditioning sets are
    the same.

    Parameters
    ----------
    model : mbi.MarkovRandomField
        Fitted model (``MSTSynthesizer.synthesizer``, ``AIMSynthesizer.synthesizer``).
    rows : int
        Number of records.
    rounding : bool, default=False
        Instead of one independent draw per record, Private-PGM's randomized
        rounding with random assignment within groups (the fix of mbi's pull
        request 145): for every group of records sharing the conditioning
        columns' values, the ``g`` records get ``floor(g p_v)`` copies of each
        value ``v`` plus the remaining ones drawn without replacement with
        probability proportional to the fractional parts, in a random order.
        It removes most of the sampling noise of i.i.d. draws: on Adult at
        epsilon 1, an mbi model's 3-way TVD is about 20% lower than that of
        its i.i.d. samples (``benchmarks/README.md``).

    Returns
    -------
    mbi.Dataset
        ``rows`` records over ``model.domain``.
    """
    from mbi import Dataset, junction_tree, marginal_oracles

    domain = model.domain
    jtree, order = junction_tree.make_junction_tree(domain, model.cliques)
    nodes = [set(node) for node in jtree.nodes]
    marginals = marginal_oracles.message_passing_stable(model.potentials.expand(list(jtree.nodes)))
    data = {}
    for column in reversed(order):
        parents = tuple(a for a in data if any(column in n and a in n for n in nodes))
        table = np.asarray(
            marginals.project(parents + (column,)).datavector(flatten=False), dtype=float
        )
        table = np.clip(table, 0.0, None).reshape(-1, domain[column])
        cdf = np.cumsum(table, axis=1)
        if parents:
            group = np.ravel_multi_index(tuple(data[a] for a in parents),
                                         tuple(domain[a] for a in parents))
        else:
            group = np.zeros(rows, dtype=np.intp)
        if rounding:
            data[column] = _round_groups(table, group)
            continue
        cdf = cdf[group]
        u = np.random.random_sample(rows) * cdf[:, -1]
        values = (cdf <= u[:, None]).sum(axis=1)
        data[column] = np.minimum(values, domain[column] - 1)
    return Dataset({a: data[a] for a in domain.attrs}, domain)


def _round_groups(table, group):
    """Values for records in groups ``group``, by randomized rounding of ``table[group]``.

    Row ``table[g]`` holds the (unnormalised) distribution of the value in
    group ``g``; the group's records get the rounded counts in a random order.
    """
    values = np.empty(group.size, dtype=np.int64)
    order = np.argsort(group, kind="stable")
    groups, starts, sizes = np.unique(group[order], return_index=True, return_counts=True)
    for g, start, size in zip(groups, starts, sizes):
        p = table[g]
        p = p / p.sum() if p.sum() > 0 else np.full(p.size, 1.0 / p.size)
        counts = size * p
        whole = np.floor(counts).astype(np.int64)
        extra = size - int(whole.sum())
        if extra > 0:
            fraction = counts - whole
            whole[np.random.choice(p.size, extra, replace=False,
                                   p=fraction / fraction.sum())] += 1
        drawn = np.repeat(np.arange(p.size), whole)
        np.random.shuffle(drawn)
        values[order[start:start + size]] = drawn
    return values


class _Sampling:
    """Wrap an mbi model so that smartnoise's ``sample()`` uses another record generator.

    ``method`` is ``"sample"`` (:func:`sample_model`), ``"randomized_round"``
    (:func:`sample_model` with ``rounding=True``) or ``"mbi_sample"`` (mbi
    1.1.0's ``synthetic_data(method="sample")``).
    """

    def __init__(self, model, method):
        self._model = model
        self._method = method

    def synthetic_data(self, rows=None):
        """Generate ``rows`` records."""
        if self._method in ("sample", "randomized_round"):
            return sample_model(self._model, rows, rounding=self._method == "randomized_round")
        return self._model.synthetic_data(rows=rows, method="sample")


SAMPLINGS = ("sample", "randomized_round", "mbi_sample", "round")
"""Record generators for MST and AIM: :func:`sample_model` (the benchmark's),
i.i.d. or with randomized rounding;
mbi 1.1.0's ``synthetic_data(method="sample")``; and its default
``method="round"``, which smartnoise-synth 1.0.8's ``sample()`` uses."""


def _run_smartnoise(name, df, epsilon, delta, seed, sampling, also_sample=(), **params):
    """Fit a smartnoise-synth graphical-model synthesizer and sample ``len(df)`` rows.

    Shared by :func:`run_mst` and :func:`run_aim` (see there for the
    parameters); ``params`` go to the synthesizer's constructor.
    """
    from snsynth import Synthesizer

    for method in (sampling, *also_sample):
        if method not in SAMPLINGS:
            raise ValueError(f"sampling must be one of {SAMPLINGS}, got {method!r}")
    n_rows = len(df)
    if delta is None:
        delta = 1.0 / (math.log(n_rows) * n_rows)
    np.random.seed(seed)
    synth = Synthesizer.create(name, epsilon=float(epsilon), delta=delta, **params)

    start, start_cpu = time.perf_counter(), time.process_time()
    synth.fit(_fill_missing(df), categorical_columns=list(df.columns), preprocessor_eps=0.0)
    fit_seconds = time.perf_counter() - start
    fit_cpu_seconds = time.process_time() - start_cpu
    model = synth.synthesizer
    # smartnoise names the encoded columns col0, col1, ... in input order
    names = {f"col{i}": column for i, column in enumerate(df.columns)}

    def generate(method):
        synth.synthesizer = model if method == "round" else _Sampling(model, method)
        start, start_cpu = time.perf_counter(), time.process_time()
        synthetic = synth.sample(n_rows)
        seconds = time.perf_counter() - start, time.process_time() - start_cpu
        synth.synthesizer = model
        return _restore_missing(synthetic[list(df.columns)]), seconds

    synthetic, (sample_seconds, sample_cpu_seconds) = generate(sampling)
    return {
        "fit_seconds": fit_seconds,
        "sample_seconds": sample_seconds,
        "fit_cpu_seconds": fit_cpu_seconds,
        "sample_cpu_seconds": sample_cpu_seconds,
        "synthetic": synthetic,
        "delta": delta,
        "model_cliques": [[names[attr] for attr in clique] for clique in model.cliques],
        "alternatives": {method: generate(method)[0] for method in also_sample},
    }


def run_mst(df, epsilon=4.0, delta=None, seed=0, sampling="sample", also_sample=()):
    """Fit smartnoise-synth's MST on all columns as categorical and sample.

    Missing cells are passed as :data:`MISSING` (a category of their own) and
    restored to ``NaN`` in the output. Category sets are taken from the data
    (smartnoise's default for declared categorical columns).

    Parameters
    ----------
    df : pandas.DataFrame
        All-categorical table, strings or ``NaN``.
    epsilon : float, default=4.0
        Privacy budget.
    delta : float, optional
        Defaults to ``1 / (ln(n) * n)`` with ``n = len(df)``, the rule
        pac-synth applies to its DP record count (smartnoise's own default is
        1e-9).
    seed : int, default=0
        Seeds NumPy's global generator, which drives MST's edge selection and
        sampling; its Gaussian measurement noise comes from OpenDP and cannot
        be seeded.
    sampling : {"sample", "randomized_round", "mbi_sample", "round"}, default="sample"
        How the fitted model generates records: i.i.d. sampling by
        :func:`sample_model`; its randomized rounding with random assignment
        within groups (``"randomized_round"``, Private-PGM's fixed
        rounding); mbi 1.1.0's ``synthetic_data(method="sample")``
        (the same on MST's tree); or smartnoise's default path, mbi 1.1.0's
        randomized rounding (``method="round"``), which within each group of
        records sharing the values already drawn assigns a column's values by
        the records' rank in the group rather than in random order, so that
        columns drawn in the same groups come out comonotone even where the
        model holds them independent (``python -m
        benchmarks.check_mbi_sampling``). On NIST MA at epsilon 4 this doubles
        MST's 2-way TVD.
    also_sample : sequence of str, default=()
        Other ``sampling`` methods to generate ``len(df)`` records with from
        the same fitted model, for comparison.

    Returns
    -------
    dict
        ``fit_seconds``, ``sample_seconds`` (wall clock), ``fit_cpu_seconds``,
        ``sample_cpu_seconds`` (CPU time of the process, all threads, less
        sensitive to other load on the machine), ``synthetic`` (``len(df)`` rows,
        ``NaN`` for missing), ``delta``, ``model_cliques`` (the column
        sets of the fitted model's cliques) and ``alternatives`` (method to
        synthetic table, one per ``also_sample``).

    References
    ----------
    McKenna, Miklau and Sheldon, "Winning the NIST Contest: A scalable and
    general approach to differentially private synthetic data", Journal of
    Privacy and Confidentiality 11(3), 2021.
    """
    return _run_smartnoise("mst", df, epsilon, delta, seed, sampling, also_sample)


def run_aim(df, epsilon=4.0, delta=None, seed=0, rounds=None, sampling="sample",
            also_sample=()):
    """Fit smartnoise-synth's AIM on all columns as categorical and sample.

    smartnoise-synth 1.0.8's ``AIMSynthesizer`` with its defaults (workload
    all 2-way marginals of at most 10,000 cells, ``max_model_size=80`` MB)
    except ``rounds``. Missing values, categories, ``delta``, seeding and
    sampling are as in :func:`run_mst`; the seed also drives AIM's
    exponential-mechanism selections (NumPy's global generator).

    Parameters
    ----------
    df : pandas.DataFrame
        All-categorical table, strings or ``NaN``.
    epsilon : float, default=4.0
        Privacy budget.
    delta : float, optional
        Defaults to ``1 / (ln(n) * n)`` with ``n = len(df)``.
    seed : int, default=0
        Seeds NumPy's global generator.
    rounds : int, optional
        Upper bound on AIM's selection rounds (the budget per round is
        ``rho / rounds``; AIM stops early once the budget is spent).
        smartnoise's default, ``16 * n_columns``, did not finish within 20
        minutes on NIST MA (21 columns, 336 rounds), hence the benchmark's
        ``rounds=42``.
    sampling : {"sample", "randomized_round", "mbi_sample", "round"}, default="sample"
        As in :func:`run_mst`; ``"mbi_sample"`` differs from ``"sample"``
        where AIM's graph is not chordal.
    also_sample : sequence of str, default=()
        As in :func:`run_mst`.

    Returns
    -------
    dict
        As :func:`run_mst`.

    References
    ----------
    McKenna, Mullins, Sheldon and Miklau, "AIM: An Adaptive and Iterative
    Mechanism for Differentially Private Synthetic Data", PVLDB 15(11), 2022.
    """
    params = {} if rounds is None else {"rounds": int(rounds)}
    return _run_smartnoise("aim", df, epsilon, delta, seed, sampling, also_sample, **params)


RUNNERS = {"run_pacsynth": run_pacsynth, "run_mst": run_mst, "run_aim": run_aim}
"""Runner name to runner; :func:`runner` also knows Google dpsynth's
(:data:`benchmarks.google_runners.GOOGLE_RUNNERS`)."""


def runner(func_name):
    """The runner called ``func_name``: one of :data:`RUNNERS` or of
    :data:`benchmarks.google_runners.GOOGLE_RUNNERS` (imported on demand: it uses this
    module's helpers)."""
    if func_name in RUNNERS:
        return RUNNERS[func_name]
    from .google_runners import GOOGLE_RUNNERS

    if func_name not in GOOGLE_RUNNERS:
        raise KeyError(f"unknown runner {func_name!r}; choose from "
                       f"{sorted(RUNNERS) + sorted(GOOGLE_RUNNERS)}")
    return GOOGLE_RUNNERS[func_name]


def _max_rss_mb():
    """Peak resident set size of this process so far, in MiB.

    Reads ``VmHWM`` from ``/proc/self/status`` where it exists: on Linux
    ``ru_maxrss`` also counts the parent's resident size at fork time, which the
    kernel carries over ``exec``. Elsewhere falls back to ``ru_maxrss``.
    """
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss / 2**20 if sys.platform == "darwin" else maxrss / 1024


def measure_in_subprocess(func_name, dataset_name, python=None, **kwargs):
    """Run a runner on a dataset in a child Python and measure its peak memory.

    Parameters
    ----------
    func_name : str
        A runner :func:`runner` knows.
    dataset_name : str
        A table :func:`benchmarks.datasets.load` knows (``name`` or
        ``name@rows``); the child loads it.
    python : str, optional
        Interpreter for the child; defaults to ``$DPSYNTH_BENCH_PYTHON`` or
        ``sys.executable``.
    **kwargs
        Passed to the runner.

    Returns
    -------
    dict
        The runner's result plus ``peak_rss_mb`` (child's peak RSS, data
        loading and imports included, unless the runner took it itself before
        work that is not part of the run) and ``baseline_rss_mb`` (its peak RSS
        after loading the data, before the runner).
    """
    python = python or os.environ.get("DPSYNTH_BENCH_PYTHON", sys.executable)
    with tempfile.TemporaryDirectory() as tmp:
        request, result = Path(tmp) / "request.pkl", Path(tmp) / "result.pkl"
        request.write_bytes(pickle.dumps((func_name, dataset_name, kwargs)))
        subprocess.run(
            [python, "-m", "benchmarks.reference_runners", str(request), str(result)],
            cwd=_REPO,
            check=True,
        )
        return pickle.loads(result.read_bytes())


def _child_main(request, result):
    """Child side of :func:`measure_in_subprocess`."""
    func_name, dataset_name, kwargs = pickle.loads(Path(request).read_bytes())
    df = load(dataset_name)
    baseline = _max_rss_mb()
    output = runner(func_name)(df, **kwargs)
    output.setdefault("peak_rss_mb", _max_rss_mb())
    output["baseline_rss_mb"] = baseline
    Path(result).write_bytes(pickle.dumps(_portable(output)))


def _portable(value):
    """``value`` with its tables' text columns (and column labels) as ``object``: the
    child may run another pandas major version than the parent (Google's
    virtualenv), and pandas 2 cannot unpickle pandas 3's ``str`` arrays."""
    if isinstance(value, pd.DataFrame):
        out = value.astype({c: object for c in value.columns
                            if pd.api.types.is_string_dtype(value[c].dtype)
                            and value[c].dtype != object})
        out.columns = pd.Index(list(out.columns), dtype=object)
        return out
    if isinstance(value, dict):
        return {key: _portable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_portable(item) for item in value)
    return value


# --- Temporary metric helpers, to be replaced by dpsynth.metrics -------------


def marginal_tvd(real, synthetic, k):
    """Mean total variation distance over all k-column marginals.

    TEMPORARY: to be replaced by ``dpsynth.metrics.marginal_tvd``.

    Missing values form a category of their own. For each set of ``k``
    columns, ``TVD = 0.5 * sum |p - q|`` over the cells of the two normalised
    contingency tables.

    Parameters
    ----------
    real, synthetic : pandas.DataFrame
        Tables with the same columns.
    k : int
        Marginal width.

    Returns
    -------
    float
        Mean TVD over the ``C(n_columns, k)`` marginals.
    """
    codes_real, codes_syn, sizes = [], [], []
    for column in real.columns:
        codes, uniques = pd.factorize(
            pd.concat([real[column], synthetic[column]], ignore_index=True),
            use_na_sentinel=False,
        )
        codes_real.append(codes[: len(real)])
        codes_syn.append(codes[len(real):])
        sizes.append(len(uniques))
    distances = []
    for subset in itertools.combinations(range(len(sizes)), k):
        shape = tuple(sizes[i] for i in subset)
        cells = math.prod(shape)
        p = np.bincount(
            np.ravel_multi_index([codes_real[i] for i in subset], shape), minlength=cells
        )
        q = np.bincount(
            np.ravel_multi_index([codes_syn[i] for i in subset], shape), minlength=cells
        )
        distances.append(0.5 * np.abs(p / p.sum() - q / max(q.sum(), 1)).sum())
    return float(np.mean(distances))


def exact_aggregates(df, max_length):
    """Exact counts of every attribute combination up to ``max_length``.

    TEMPORARY: to be replaced by dpsynth's own marginal counting.

    Parameters
    ----------
    df : pandas.DataFrame
        All-categorical table, ``NaN`` for missing (counted as ``None``).
    max_length : int
        Longest combination.

    Returns
    -------
    dict
        ``{((column, value), ...): count}`` in the format of
        ``run_pacsynth(...)["aggregates"]``.
    """
    data = df.astype(object).where(df.notna(), None)
    counts = {}
    for length in range(1, max_length + 1):
        for subset in itertools.combinations(data.columns, length):
            groups = data.groupby(list(subset), dropna=False, sort=False).size()
            for values, count in groups.items():
                values = values if isinstance(values, tuple) else (values,)
                key = tuple(
                    (column, None if pd.isna(value) else value)
                    for column, value in zip(subset, values)
                )
                counts[key] = int(count)
    return counts


def aggregate_errors(released, exact, max_length):
    """Compare released DP aggregates with exact counts, by combination length.

    TEMPORARY: to be replaced by ``dpsynth.metrics``.

    Parameters
    ----------
    released, exact : dict
        ``{((column, value), ...): count}`` dictionaries.
    max_length : int
        Longest combination.

    Returns
    -------
    dict
        Per length (as a string): ``n_released``, ``n_exact``, ``mae`` (mean
        absolute error over combinations in both), ``suppressed_pct`` (exact
        combinations not released, % of exact) and ``fabricated_pct`` (released
        combinations whose exact count is 0, % of released).
    """
    report = {}
    for length in range(1, max_length + 1):
        rel = {key: count for key, count in released.items() if len(key) == length}
        exa = {key: count for key, count in exact.items() if len(key) == length}
        common = rel.keys() & exa.keys()
        report[str(length)] = {
            "n_released": len(rel),
            "n_exact": len(exa),
            "mae": float(np.mean([abs(rel[key] - exa[key]) for key in common]))
            if common
            else float("nan"),
            "suppressed_pct": 100.0 * len(exa.keys() - rel.keys()) / max(len(exa), 1),
            "fabricated_pct": 100.0 * len(rel.keys() - exa.keys()) / max(len(rel), 1),
        }
    return report


if __name__ == "__main__":
    _child_main(*sys.argv[1:3])
