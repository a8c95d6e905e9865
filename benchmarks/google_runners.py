"""Google's dpsynth (github google/dpsynth) as a reference peer: AIM-GDP, SWIFT and MST.

``run_google_aim_gdp``, ``run_google_swift`` and ``run_google_mst`` take the
all-categorical frame of :mod:`benchmarks.datasets` (strings, ``NaN`` for
missing), as the other runners of :mod:`benchmarks.reference_runners`, and run
Google's in-memory API (``TabularConfig(domains=..., discrete_mechanism=...)``,
``calibrate(epsilon=, delta=)``, then the calibrated mechanism on the frame).

Google's package needs Python >= 3.12, JAX 0.11 and mbi 2.0, so it lives in its
own virtualenv (``benchmarks/setup_peer_env.sh``) and these runners are meant to
run in a child interpreter of that environment
(:func:`~benchmarks.reference_runners.measure_in_subprocess` with
``python=$DPSYNTH_GOOGLE_PYTHON``). Its import name is ``dpsynth``, like this
repository's package: :func:`import_google_dpsynth` imports it with the
repository root out of ``sys.path``.

What the peer gets, and what it reports:

- **Domain**: every column a ``CategoricalAttribute`` whose ``possible_values``
  are the column's observed values (sorted), plus
  :data:`~benchmarks.reference_runners.MISSING` where the column has missing
  cells: the categories dpsynth's declared mode gets (``categories`` = observed
  values, ``no_missing`` = the complete columns), read from the data without
  privacy, as smartnoise's MST and AIM do.
- **delta**: ``1 / (n ln n)`` with ``n = len(df)`` unless given, the delta the
  other reference runners use (and ``run_workload`` gives dpsynth).
- **Budget**: Google's ``calibrate`` searches the largest zCDP rho whose
  composed ``dp_event`` meets ``(epsilon, delta)``, taking the smaller of the
  PLD and RDP answers; it leaves part of epsilon unused. The result records
  ``zcdp_rho`` and ``epsilon_spent`` (the mechanism's ``dp_event`` through
  dp_accounting's PLD accountant, and its RDP accountant).
- **Errors**: the synthetic table (scored by ``run_reference`` like every peer)
  and ``model_tvd``: the mean TVD of the fitted model's own 1-, 2- and 3-way
  marginals to the real table's (:func:`model_marginals`), the error before
  sampling.
- **Timing**: Google's call fits *and* samples; ``fit_seconds`` is calibration
  plus that call, ``sample_seconds`` is 0, and ``phase_seconds`` holds the
  mechanism's own phase timings. ``peak_rss_mb`` is measured before the model
  error is computed.

AIM-GDP compiles new XLA code every round; each executable keeps memory maps, and
at Linux's default ``vm.max_map_count`` (65530) a run dies after about 30 rounds.
``setup_peer_env.sh`` raises the limit (as root); the runners record it
(``max_map_count``) and warn when it is at the default.
"""

import itertools
import math
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from .reference_runners import MISSING, _fill_missing, _max_rss_mb, _restore_missing

_REPO = Path(__file__).resolve().parents[1]
MAX_MAP_COUNT = 1_048_576
"""``vm.max_map_count`` that ``setup_peer_env.sh`` sets: enough for AIM-GDP's
hundreds of rounds of compiled code."""


def import_google_dpsynth():
    """Import Google's ``dpsynth`` (not this repository's package of the same name).

    Raises
    ------
    ImportError
        If the module found is not Google's (this repository's was imported
        first, or Google's is not installed in this interpreter).
    """
    module = sys.modules.get("dpsynth")
    if module is None:
        os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars of its loops
        import jax

        # Every run compiles its own programs: a persistent cache would make a run's
        # time depend on the runs before it (mbi advises against it too).
        jax.config.update("jax_enable_compilation_cache", False)
        saved = list(sys.path)
        sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _REPO]
        try:
            with warnings.catch_warnings():
                # mbi's note that JAX runs in float32, the peer's default precision
                warnings.filterwarnings("ignore", message="JAX is running in float32")
                import dpsynth as module
        finally:
            sys.path[:] = saved
    if not hasattr(module, "TabularConfig"):
        raise ImportError(
            f"'dpsynth' resolves to {getattr(module, '__file__', module)}, not Google's "
            "dpsynth: run the Google runners in the environment benchmarks/setup_peer_env.sh "
            "builds (DPSYNTH_GOOGLE_PYTHON)")
    return module


def google_domain(df):
    """The peer's domain: each column's observed values, and :data:`MISSING` if it has
    missing cells (dpsynth's declared mode: ``categories`` and ``no_missing``).

    Returns
    -------
    dict
        ``{column: sorted list of str}``.
    """
    domain = {}
    for column in df.columns:
        values = sorted(str(v) for v in df[column].dropna().unique())
        if df[column].isna().any():
            values.append(MISSING)
        domain[column] = values
    return domain


def _max_map_count():
    """The kernel's per-process memory-map limit, or None where it cannot be read."""
    try:
        return int(Path("/proc/sys/vm/max_map_count").read_text())
    except (OSError, ValueError):
        return None


def _epsilon_spent(dp_accounting, event, delta):
    """Epsilon of ``event`` at ``delta`` by dp_accounting's PLD and RDP accountants."""
    spent = {}
    accountants = {"pld": dp_accounting.pld.PLDAccountant, "rdp": dp_accounting.rdp.RdpAccountant}
    for name, accountant in accountants.items():
        try:
            spent[name] = float(accountant().compose(event).get_epsilon(delta))
        except (dp_accounting.UnsupportedEventError, NotImplementedError):
            spent[name] = None
    return spent


def model_marginals(model, queries):
    """Exact marginals of an mbi 2 ``MarkovRandomField`` on the column sets ``queries``.

    The model's junction tree (``mbi.junction_tree.make_junction_tree``) and its
    calibrated clique marginals (``message_passing_stable``) factor the joint
    distribution as the root clique's marginal times, for every other clique, its
    marginal divided by that of its separator with its parent; each query sums the
    other columns out of that product with one NumPy ``einsum``. This is mbi's
    variable elimination without compiling one XLA program per query, which under
    load took tens of minutes for the 575 1-, 2- and 3-way queries of a 15-column
    table.

    Returns
    -------
    dict
        ``{query: ndarray}``, probabilities, axes in the query's column order.
    """
    import networkx as nx
    from mbi import junction_tree, marginal_oracles

    attrs = list(model.domain.attributes)
    if len(attrs) > 52:
        raise ValueError("model_marginals labels columns with letters: at most 52 columns")
    letter = dict(zip(attrs, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    jtree, _ = junction_tree.make_junction_tree(model.domain, [tuple(c) for c in model.cliques])
    nodes = list(jtree.nodes)
    beliefs = marginal_oracles.message_passing_stable(model.potentials.expand(nodes), 1.0,
                                                      jtree=jtree)
    operands = []
    for component in nx.connected_components(jtree):
        root = next(iter(component))
        for parent, child in [(None, root), *nx.bfs_edges(jtree, root)]:
            factor = beliefs.project(child)
            names = list(factor.domain.attributes)
            table = np.clip(np.asarray(factor.datavector(flatten=False), dtype=float), 0, None)
            if parent is not None:
                separator = [a for a in names if a in set(parent)]
                keep = tuple(i for i, a in enumerate(names) if a in separator)
                summed = tuple(i for i in range(len(names)) if i not in keep)
                below = table.sum(axis=summed, keepdims=True) if summed else table
                table = np.divide(table, below, out=np.zeros_like(table), where=below > 0)
            operands += [table, [letter[a] for a in names]]
    out = {}
    for query in queries:
        spec = ",".join("".join(ix) for ix in operands[1::2]) + "->" + "".join(
            letter[a] for a in query)
        out[tuple(query)] = np.einsum(spec, *operands[0::2], optimize="greedy")
    return out


def _model_tvd(model, encoded, max_k=3):
    """Mean TVD of the model's k-way marginals to the encoded real table's, k = 1..max_k."""
    attrs = list(encoded.domain.attributes)
    queries = [c for k in range(1, max_k + 1) for c in itertools.combinations(attrs, k)]
    estimates = model_marginals(model, queries)
    distances = {k: [] for k in range(1, max_k + 1)}
    for clique in queries:
        p = np.asarray(encoded.project(clique).datavector(flatten=False), dtype=float)
        q = estimates[clique]
        distances[len(clique)].append(0.5 * np.abs(p / p.sum() - q / q.sum()).sum())
    return {str(k): float(np.mean(v)) for k, v in distances.items()}


def _run_google(mechanism, df, epsilon, delta, seed, model_error, **params):
    """Calibrate and run Google's ``TabularConfig`` with ``mechanism`` (a name in
    ``discrete_mechanisms``: ``AIMGDPConfig``, ``SWIFTConfig``, ``MSTConfig``) built
    with ``params``; see :func:`run_google_aim_gdp` for the rest."""
    google = import_google_dpsynth()
    import dp_accounting
    import mbi

    mbi.set_log_fn(lambda *args, **kwargs: None)  # mirror descent's loss every 50 steps
    max_map_count = _max_map_count()
    if max_map_count is not None and max_map_count < MAX_MAP_COUNT:
        warnings.warn(f"vm.max_map_count is {max_map_count}: long AIM-GDP runs die when "
                      f"it is reached; raise it to {MAX_MAP_COUNT} (setup_peer_env.sh)")
    n_rows = len(df)
    if delta is None:
        delta = 1.0 / (math.log(n_rows) * n_rows)
    data = _fill_missing(df).astype(str)
    domain = google_domain(df)
    domains = {c: google.CategoricalAttribute(possible_values=v) for c, v in domain.items()}
    calibrated, result, times = _calibrate_and_run(google, domains, data, mechanism, params,
                                                   epsilon, delta, seed)
    calibrate_seconds, fit_seconds, fit_cpu_seconds = times
    peak_rss_mb = _max_rss_mb()

    mechanism_result = result.discrete_mechanism_result
    diagnostics = mechanism_result.diagnostics
    model = mechanism_result.model
    output = {
        "fit_seconds": fit_seconds,
        "sample_seconds": 0.0,
        "fit_cpu_seconds": fit_cpu_seconds,
        "sample_cpu_seconds": 0.0,
        "calibrate_seconds": calibrate_seconds,
        "phase_seconds": dict(diagnostics.phase_times) if diagnostics else {},  # often empty
        "peak_rss_mb": peak_rss_mb,
        "synthetic": _restore_missing(result.synthetic_data[list(df.columns)]),
        "delta": delta,
        "domain_sizes": {c: len(v) for c, v in domain.items()},
        "zcdp_rho": _zcdp_rho(calibrated),
        "epsilon_spent": _epsilon_spent(dp_accounting, calibrated.dp_event, delta),
        "n_measurements": len(mechanism_result.measurements),
        "model_cliques": [list(c) for c in model.cliques],
        "max_map_count": max_map_count,
        "google_params": {"mechanism": mechanism, **params},
    }
    if model_error:
        start = time.perf_counter()
        encoded = result.codec.encode(data)
        output["model_tvd"] = _model_tvd(model, encoded)
        output["model_tvd_seconds"] = time.perf_counter() - start
    return output


def _calibrate_and_run(google, domains, data, mechanism, params, epsilon, delta, seed,
                       **config):
    """Calibrate Google's ``TabularConfig(domains=domains, **config)`` with ``mechanism``
    (a name in ``discrete_mechanisms``, built with ``params``) to ``(epsilon, delta)`` and
    run it on ``data``, seeded by ``seed``.

    Returns
    -------
    tuple
        ``(calibrated, result, (calibrate_seconds, seconds, cpu_seconds))``: seconds of
        the calibration, and wall and CPU seconds of calibration plus the run.
    """
    tabular = google.TabularConfig(
        domains=domains, **config,
        discrete_mechanism=getattr(google.discrete_mechanisms, mechanism)(**params))
    np.random.seed(seed)  # mbi's record generation draws from NumPy's global generator
    rng = np.random.default_rng(seed)
    start, start_cpu = time.perf_counter(), time.process_time()
    calibrated = tabular.calibrate(epsilon=float(epsilon), delta=float(delta))
    calibrate_seconds = time.perf_counter() - start
    result = calibrated(rng, data)
    times = (calibrate_seconds, time.perf_counter() - start, time.process_time() - start_cpu)
    return calibrated, result, times


def _zcdp_rho(calibrated):
    """The zCDP rho the calibration chose: per-column initialisation, total count and
    the mechanism (its ``zcdp_rho``, or half its Gaussian-DP ``gdp_budget``, which is
    ``mu**2``);
    None if a part states neither."""
    rho = 1.0 / (2.0 * calibrated.total_count_sigma ** 2)
    for init in calibrated.initializers.values():
        if getattr(init, "sigma", None) is None:
            return None
        rho += 1.0 / (2.0 * init.sigma ** 2)
    base = calibrated.base_mechanism
    if getattr(base, "zcdp_rho", None) is not None:
        return float(rho + base.zcdp_rho)
    if getattr(base, "gdp_budget", None) is not None:
        return float(rho + base.gdp_budget / 2.0)  # dpsynth's GDP budget is mu**2
    return None


def run_google_aim_gdp(df, epsilon=4.0, delta=None, seed=0, model_error=True, **params):
    """Run Google dpsynth's AIM-GDP (``AIMGDPConfig``) and its sampling on ``df``.

    Its defaults: workload all 3-way marginals (and their downward closure) of at
    most 10^6 cells, ``max_model_size=80`` MB, ``16 * n_columns`` rounds at most,
    1,000 mirror-descent iterations per round. Records come from
    ``MarkovRandomField.synthetic_data()`` (randomized rounding, the model's noisy
    total of rows).

    Parameters
    ----------
    df : pandas.DataFrame
        All-categorical table, strings or ``NaN``.
    epsilon : float, default=4.0
        Privacy budget.
    delta : float, optional
        Defaults to ``1 / (ln(n) * n)`` with ``n = len(df)``.
    seed : int, default=0
        Seeds the mechanism's ``numpy.random.Generator`` (noise, selections) and
        NumPy's global generator (mbi's record generation).
    model_error : bool, default=True
        Also compute ``model_tvd`` (after ``peak_rss_mb`` is taken).
    **params
        Passed to ``AIMGDPConfig`` (e.g. ``max_rounds``).

    Returns
    -------
    dict
        ``fit_seconds`` (calibration, fit and sampling: Google's call does all),
        ``sample_seconds`` (0), ``fit_cpu_seconds``, ``calibrate_seconds``,
        ``phase_seconds``, ``peak_rss_mb``, ``synthetic`` (``NaN`` for missing),
        ``delta``, ``domain_sizes``, ``zcdp_rho``, ``epsilon_spent``
        (``{"pld", "rdp"}``), ``n_measurements``, ``model_cliques``,
        ``max_map_count``, ``google_params`` and ``model_tvd`` (``{"1", "2",
        "3"}``).

    References
    ----------
    McKenna, Mullins, Sheldon and Miklau, "AIM: An Adaptive and Iterative
    Mechanism for Differentially Private Synthetic Data", PVLDB 15(11), 2022.
    """
    return _run_google("AIMGDPConfig", df, epsilon, delta, seed, model_error, **params)


def run_google_swift(df, epsilon=4.0, delta=None, seed=0, model_error=True, **params):
    """Run Google dpsynth's SWIFT (``SWIFTConfig``) and its sampling on ``df``.

    Its defaults: workload all 3-way marginals of at most 10^6 cells, junction-tree
    cliques of at most 10^7 cells, 10,000 mirror-descent iterations, 10% of the
    budget for selection. Parameters and result as :func:`run_google_aim_gdp`
    (``params`` go to ``SWIFTConfig``).
    """
    return _run_google("SWIFTConfig", df, epsilon, delta, seed, model_error, **params)


def run_google_mst(df, epsilon=4.0, delta=None, seed=0, model_error=True, **params):
    """Run Google dpsynth's MST (``MSTConfig``) and its sampling on ``df``.

    Its defaults: half of the mechanism's budget selects a maximum spanning tree of
    pairs, the other half measures them, 5,000 mirror-descent iterations.
    Parameters and result as :func:`run_google_aim_gdp` (``params`` go to
    ``MSTConfig``).

    References
    ----------
    McKenna, Miklau and Sheldon, "Winning the NIST Contest: A scalable and
    general approach to differentially private synthetic data", Journal of
    Privacy and Confidentiality 11(3), 2021.
    """
    return _run_google("MSTConfig", df, epsilon, delta, seed, model_error, **params)


GOOGLE_RUNNERS = {"run_google_aim_gdp": run_google_aim_gdp,
                  "run_google_swift": run_google_swift,
                  "run_google_mst": run_google_mst}


def google_raw_domains(df, numeric, interval_handling="midpoint"):
    """The peer's domains for a raw table with nothing declared but which columns hold
    numbers.

    Google's in-memory API has no undeclared mode: a ``NumericalAttribute`` needs
    ``min_value``/``max_value``, a ``CategoricalAttribute`` its values. What the
    peer does where nothing is declared is its scalable API's population phase
    (``pipeline_transformations/dataset_encoding.py``): string columns get their
    values by DP partition selection (here ``OpenSetCategoricalAttribute``, the
    in-memory equivalent: Gaussian counts kept above a delta-calibrated threshold,
    the rest mapped to its default ``"<OOD>"``), numeric columns get the column's
    exact minimum and maximum (``numerical_values_derivation.py``:
    ``pipeline_functions.min_max_per_key``, read **without DP**) and then DP
    quantile bins. This builds the same: each column of ``numeric`` a
    ``NumericalAttribute`` on its observed ``[min, max]`` (``dtype="int"`` for
    integer columns, clipped to the range) whose bins the in-memory API draws by
    its DP quantiles (``TabularConfig.numerical_bins``, exponential mechanism);
    every other column an ``OpenSetCategoricalAttribute``.

    Parameters
    ----------
    df : pandas.DataFrame
        The raw table: numeric columns numeric, the others strings.
    numeric : list of str
        The numeric columns.
    interval_handling : {"midpoint", "sample"}, default="midpoint"
        How the peer decodes a bin back to a number (its default: the bin's
        midpoint, rounded up for integers; ``"sample"``: uniform in the bin).

    Returns
    -------
    dict
        ``{column: attribute}`` in ``df``'s column order.
    """
    import pandas as pd

    google = import_google_dpsynth()
    domains = {}
    for column in df.columns:
        if column in numeric:
            values = pd.to_numeric(df[column])
            low, high = float(values.min()), float(values.max())
            if low >= high:  # a constant column, padded as the peer pads it
                high = low + 1.0
            dtype = "int" if pd.api.types.is_integer_dtype(values) else "float"
            domains[column] = google.NumericalAttribute(
                min_value=low, max_value=high, dtype=dtype, clip_to_range=True,
                interval_handling=interval_handling)
        else:
            domains[column] = google.OpenSetCategoricalAttribute()
    return domains


def run_google_raw(df, numeric, epsilon=4.0, delta=1e-9, seed=0, mechanism="MSTConfig",
                   numerical_bins=32, **params):
    """Run Google dpsynth's ``TabularConfig`` on a raw table (numeric columns
    un-binned), with the domains of :func:`google_raw_domains`.

    The budget: ``calibrate(epsilon, delta)`` finds the largest zCDP rho whose
    composed event meets ``(epsilon, delta)``; ``init_budget_fraction`` (10%) of it
    is split evenly between the DP total count and one initializer per column (DP
    quantile bins of a numeric column: recursive median bisection by the
    exponential mechanism, ``log2(numerical_bins)`` levels; Gaussian counts and
    thresholding of a string column's values, which also takes 10% of ``delta``),
    the rest goes to ``mechanism`` (``MSTConfig``: half selects the tree of pairs,
    half measures them). A numeric column's one-way "measurement" is the noisy
    total spread evenly over its quantile bins.

    The synthetic table is decoded twice from the same records: with the
    peer's default ``interval_handling="midpoint"`` and with ``"sample"``
    (uniform in the bin; an integer column rounded up, as the peer does).

    Returns
    -------
    dict
        ``synthetic`` (``{"midpoint": frame, "sample": frame}``), ``seconds``,
        ``cpu_seconds``, ``calibrate_seconds``, ``delta``, ``zcdp_rho`` (total),
        ``rho`` (``{"count", "numeric_bins", "categories", "mechanism"}``),
        ``epsilon_spent`` (``{"pld", "rdp"}``), ``bounds`` (the ``[min, max]``
        read from the data), ``n_bins`` and ``n_values`` (categories released,
        the peer's ``"<OOD>"`` included), ``google_params``.
    """
    google = import_google_dpsynth()
    import dp_accounting
    import mbi
    from dpsynth import data_generation_v3 as generation  # Google's, once imported
    from dpsynth.local_mode import initialization

    mbi.set_log_fn(lambda *args, **kwargs: None)
    domains = google_raw_domains(df, numeric)
    calibrated, result, (calibrate_seconds, seconds, cpu_seconds) = _calibrate_and_run(
        google, domains, df, mechanism, params, epsilon, delta, seed,
        numerical_bins=numerical_bins)

    records = result.discrete_mechanism_result.synthetic_data
    sample_codec = generation.TabularCodec(columns={
        column: generation.ColumnCodec(
            codec.column_measurement,
            google_raw_domains(df[[column]], numeric, "sample")[column])
        for column, codec in result.codec.columns.items()})
    synthetic = {"midpoint": result.synthetic_data,
                 "sample": sample_codec.decode(records, np.random.default_rng([seed, 1]),
                                               list(df.columns))}

    rho = {"count": 1.0 / (2.0 * calibrated.total_count_sigma ** 2), "numeric_bins": 0.0,
           "categories": 0.0}
    for init in calibrated.initializers.values():
        if isinstance(init, initialization.NumericalInitializer):
            rho["numeric_bins"] += init.zcdp_rho
        else:
            rho["categories"] += 1.0 / (2.0 * init.sigma ** 2)
    rho["mechanism"] = float(calibrated.base_mechanism.zcdp_rho)
    measurements = {c: codec.column_measurement for c, codec in result.codec.columns.items()}
    return {
        "synthetic": synthetic,
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "calibrate_seconds": calibrate_seconds,
        "delta": float(delta),
        "zcdp_rho": float(sum(rho.values())),
        "rho": {k: float(v) for k, v in rho.items()},
        "epsilon_spent": _epsilon_spent(dp_accounting, calibrated.dp_event, delta),
        "bounds": {c: [domains[c].min_value, domains[c].max_value] for c in numeric},
        "n_bins": {c: measurements[c].categorical_attribute.size for c in numeric},
        "n_values": {c: m.categorical_attribute.size for c, m in measurements.items()
                     if c not in numeric},
        "google_params": {"mechanism": mechanism, "numerical_bins": numerical_bins,
                          **params},
    }
