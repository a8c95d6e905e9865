"""`DPMarginalSynthesizer`: DP k-way marginals in, synthetic records out.

``fit`` releases differentially private marginals as :class:`DPAggregates`
through a release strategy (:mod:`dpsynth.release`): by default
(``release="auto"``) the workload-aware :class:`~dpsynth.release.WorkloadRelease`
(DP value discovery, then 1-way and adaptively selected 2- and 3-way
marginals under Gaussian noise, after AIM), or, with ``release="sds"``
(:class:`~dpsynth.release.SDSRelease`), every k-tuple count up to
``reporting_length`` with the DP-marginals algorithm (Gopi, Mahabadi,
Yekhanin; as in Microsoft's Synthetic Data Showcase), kept for parity with
pac-synth.  ``sample`` builds synthetic records from the aggregates alone,
with a sampler of :mod:`dpsynth.sampling`.
"""

import inspect
from numbers import Integral, Real
import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, DensityMixin, clone
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, column_or_1d

from . import accounting
from .aggregates import DPAggregates
from .constraints import check_constraint_columns, check_constraints
from .engines import InMemoryCodes, is_dask_collection
from .engines import dask as dask_engine  # imports dask itself on first use (optional)
from .exceptions import NoisyReleaseWarning, ResourceLimitError
from .metrics import marginal_tvd
from .preprocessing import TableEncoder
from .preprocessing._encoder import COLUMN_PARAMETERS, output_labels
from .preprocessing._binning import make_binners
from .preprocessing._categories import check_categories
from .preprocessing._numeric import (DELTA_SHARE, MAX_CODE_LEVELS, RECORDS_SHARE,
                                    auto_columns, is_auto_numeric, numeric_mode,
                                    numeric_share)
from .release import Release, get_release
from .sampling import SAMPLERS, Sampler, get_sampler
from .sampling.conditional import (draw_restricted, fill_known, parse_conditions,
                                  restore_column)
from .preprocessing._numeric import with_numbers
from .utils._arrow import arrow_dtypes, arrow_restored, standard_columns
from .utils._progress import log_progress
from .utils._random import FIT, SAMPLE, stream
from .utils._threads import n_threads
from .utils._resources import default_max_memory, format_bytes, level_bytes, public_worst_case
from .utils._validation import check_table, check_target, column_labels, named_keys, quoted_names

__all__ = ["DPMarginalSynthesizer"]


#: A release whose DP record count is below this many noise standard deviations
#: of its best-measured 1-way marginal is dominated by noise (warned about):
#: a value with a share below ``min_count / _NOISY_RELEASE_FACTOR`` of the
#: records is then within the sampler's ``min_count`` of zero.
_NOISY_RELEASE_FACTOR = 20
#: A numeric column binned with nothing declared whose range histogram's noise
#: standard deviation is above ``1 / _NOISY_RANGE_FACTOR`` of the DP record count has
#: a range and shape that noise can move by octaves (a side of a column centred on 0
#: lost): the release warns, naming such columns.
_NOISY_RANGE_FACTOR = 40
#: When the DP set union's threshold is above this share of the DP record count, a
#: value of an undeclared column must hold that share of the records to be released
#: (rarer ones come back as the column's other value): the release warns, with the
#: threshold, so that a small table's missing categories are explained.
_RARE_VALUE_SHARE = 0.2


def _noisy_release_warnings(aggregates, epsilon, delta):
    """Warn about a release dominated by its noise, and about columns without a released value.

    Reads the release alone (public facts and DP outputs): the noise of its
    1-way measurements, the DP record count, the discovery threshold and
    the values released.
    """
    schema = aggregates.schema
    precision = np.zeros(len(schema))
    for m in aggregates.marginals:
        if m.basis == "marginal" and len(m.columns) == 1:
            precision[m.columns[0]] += 1.0 / max(m.variance, 1e-12)
    n = aggregates.n_records
    budget = f"epsilon={epsilon:g}, delta={delta:g}"
    dominated = False
    if precision.any():
        sigma = float(np.sqrt(1.0 / precision.max()))
        dominated = n < _NOISY_RELEASE_FACTOR * sigma
        if dominated:
            warnings.warn(
                f"The release at {budget} is dominated by its noise: the DP record count "
                f"n_records_={n} is below {_NOISY_RELEASE_FACTOR} times the noise standard "
                f"deviation of its 1-way marginals ({sigma:.3g} records), so the synthetic "
                "records reproduce little of the table. Raise epsilon, fit on more "
                "records, declare the columns' categories (TableEncoder(categories=...)) "
                "or drop columns.", NoisyReleaseWarning, stacklevel=3)
    spends = {m.name: m for m in aggregates.privacy.mechanisms}
    ranges = {c.name: dict(spends[key].params)["sigma"] for c in schema
              if (key := f"numeric column {c.name!r}: range") in spends}
    noisy = [name for name, sigma in ranges.items() if n < _NOISY_RANGE_FACTOR * sigma]
    if noisy and not dominated:
        shown = quoted_names(noisy)
        widest = max(ranges[name] for name in noisy)
        warnings.warn(
            f"The DP ranges of the numeric column(s) {shown} are unreliable at {budget}: "
            f"the noise of their range histograms (standard deviation up to {widest:.3g} "
            f"records per cell) is above 1/{_NOISY_RANGE_FACTOR} of the DP record count "
            f"n_records_={n}, so parts of their values (a side of a column centred on 0) "
            "may come back elsewhere. Declare their bounds (bounds={column: (low, high)}, "
            "--bounds), raise epsilon, or drop columns.", NoisyReleaseWarning, stacklevel=3)
    empty = [c.name for c in schema if c.other and not c.values]
    threshold = [dict(m.params).get("threshold") for m in aggregates.privacy.mechanisms
                 if m.name.startswith("discovery")]
    threshold = threshold[0] if threshold else None
    discovered = [c.name for c in schema if c.other and c.values and c.binning is None]
    if (discovered and threshold is not None and not dominated
            and threshold > _RARE_VALUE_SHARE * max(n, 1)):
        shown = quoted_names(discovered)
        warnings.warn(
            f"At {budget}, a value of an undeclared column is released only when its noisy "
            f"count clears {threshold:.3g} records, {threshold / max(n, 1):.0%} of the DP "
            f"record count n_records_={n}: rarer values of {shown} come back as their "
            "other value. Declare their categories (TableEncoder(categories=...), "
            "dpsynth schema draft), raise epsilon or fit on more records.",
            NoisyReleaseWarning, stacklevel=3)
    if empty:
        need = (f" (a value needs a noisy count above {threshold:.3g} records at {budget})"
                if threshold is not None else "")
        shown = f"{empty[:10]}{'...' if len(empty) > 10 else ''}"
        warnings.warn(
            f"No value of the column(s) {shown} was released{need}: they come back as "
            "their other value only (TableEncoder's other_label, missing in non-text "
            "columns). Declare their categories, bin numeric ones, or drop columns such "
            "as identifiers.", NoisyReleaseWarning, stacklevel=3)


#: Options of the SDS release, parameters of :class:`~dpsynth.release.SDSRelease`
#: (no longer of the estimator: the other releases do not read them).
_SDS_PARAMETERS = ("percentile", "percentile_epsilon_proportion", "accuracy_mode",
                   "fabrication_mode", "number_of_records_epsilon_proportion")


def _check_moved_parameters(cls, params, fix, error):
    """Refuse the SDS release's options given to the estimator, naming where they went."""
    moved = [name for name in _SDS_PARAMETERS if name in params]
    if moved:
        given = ", ".join(f"{name}={params[name]!r}" for name in moved)
        raise error(
            f"{cls.__name__} has no parameter {', '.join(moved)}: the SDS release's options "
            "are parameters of its strategy, dpsynth.release.SDSRelease. Pass "
            f"{fix.format(given)}.")


#: Peak bytes of one sampled cell: its code and a copy (int32; the samplers'
#: work arrays are per population or model, bounded), the decoded value (a
#: pointer or an 8-byte number) and the temporaries of decoding its column.
_BYTES_PER_SAMPLED_CELL = 32


def _public_domains(encoder, table, *, sources=None):
    """Number of codes of each column that the encoder's parameters make public
    (declared categories, bins, booleans, at most ``2 n_bins`` or
    :data:`~dpsynth.preprocessing._numeric.MAX_CODE_LEVELS` for a
    ``numeric="auto"`` column; plus the missing code), else None.

    Reads parameters and dtypes only, never values.  ``sources``, a list, gets
    what sets each size (a phrase naming the parameter).
    """
    encoder = encoder if encoder is not None else TableEncoder()
    names = list(table.columns)
    try:
        declared = check_categories(encoder.categories, table)
        binners = make_binners(bounds=encoder.bounds, binning=encoder.binning,
                               binning_epsilon=encoder.binning_epsilon,
                               n_bins=encoder.n_bins, names=names, declared=declared,
                               random_state=0)
    except (ValueError, TypeError, KeyError):  # the encoder's fit will say what is wrong
        return [None] * len(names)
    sizes = []
    for name in names:
        if name in binners:
            edges = getattr(binners[name], "bin_edges", None)
            n = len(edges) - 1 if edges is not None else getattr(binners[name], "n_bins", None)
            source = "its bin_edges" if edges is not None else f"n_bins={n}"
        elif name in declared:
            n = len(declared[name])
            source = "its declared categories"
        elif pd.api.types.is_bool_dtype(table[name].dtype):
            n, source = 2, "its bool dtype"
        elif (numeric_mode(encoder.numeric, name) == "auto"
              and is_auto_numeric(table[name].dtype)):
            # DP intervals and point masses, at most; integer codes: one per integer
            n = max(2 * encoder.n_bins, MAX_CODE_LEVELS)
            source = ("numeric='auto' (n_bins DP intervals and point masses, or "
                      f"{MAX_CODE_LEVELS} integer codes)")
        else:
            n, source = None, None
        sizes.append(None if n is None else int(n) + 1)
        if sources is not None:
            sources.append(source)
    return sizes


def _named_encoder(encoder, labels):
    """``encoder`` (a clone) whose column-keyed declarations name the input's number
    labels by their names (``{0: ...}`` -> ``{"0": ...}``); itself without labels."""
    if not labels or not isinstance(encoder, TableEncoder):
        return encoder
    named = clone(encoder)
    return named.set_params(**{p: named_keys(getattr(encoder, p), labels)
                               for p in COLUMN_PARAMETERS})


def _target_as_classes(encoder, table, target):
    """Keep an integer target categorical: integer labels are classes, not amounts.

    A public rule on the target's dtype; a ``numeric`` setting the user gave
    for the target column wins.
    """
    if (target is None or not isinstance(encoder, TableEncoder)
            or encoder.numeric == "categorical"):
        return
    numeric = encoder.numeric
    if isinstance(numeric, dict) and target in numeric:
        return
    dtype = table[target].dtype
    if pd.api.types.is_integer_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        modes = dict(numeric) if isinstance(numeric, dict) else {}
        encoder.set_params(numeric={**modes, target: "categorical"})


def _binner_delta(encoder):
    """``delta`` of the encoder's binners (its ``numeric="auto"`` spends are listed apart)."""
    spent = getattr(encoder, "delta_spent_", 0.0)
    return max(spent - sum(s.delta for s in getattr(encoder, "spends_", ())), 0.0)


class DPMarginalSynthesizer(DensityMixin, BaseEstimator):
    """Differentially private synthetic data from DP k-way marginals.

    ``fit`` releases DP marginals of the table under ``(epsilon,
    delta)``-differential privacy (privacy unit: one record; add/remove
    neighbours).  By default (``release="auto"``, the workload-aware
    :class:`~dpsynth.release.WorkloadRelease`) it discovers the values of
    undeclared columns under DP, then measures all 1-way marginals and
    adaptively selected 2- and 3-way marginals with Gaussian noise (after
    AIM [3]_).  With ``release="sds"`` (:class:`~dpsynth.release.SDSRelease`)
    it releases the counts of all attribute combinations of length
    ``1..reporting_length`` with Algorithm 1 of Gopi, Mahabadi and Yekhanin
    [1]_ as used by Microsoft's Synthetic Data Showcase (SDS) [2]_: per
    length k, a DP percentile bounds each record's contribution, Gaussian
    noise is added to every candidate combination and noisy counts below a
    threshold are suppressed.  The result, ``aggregates_``, is a :class:`DPAggregates` that can be published.
    ``sample`` then synthesizes records from the aggregates only
    (post-processing: no further privacy cost).

    Parameters
    ----------
    epsilon : float, default=4.0
        Total privacy budget of the release (record count + marginals, and
        the DP binning of numeric columns with nothing declared, which takes
        a share of it; an encoder's ``binning_epsilon``, ``frequent_epsilon``
        and ``inverse_epsilon`` are added on top, see ``privacy_spent_``),
        in ``(0, 1e15]``: larger budgets protect nothing and would overflow
        the accounting.
    delta : float or None, default=None
        ``delta`` of the guarantee, in ``(0, 0.01]``.  ``None`` uses the
        fixed default ``1e-9`` (as private-pgm's AIM), chosen before seeing
        any data (a delta that depends on the data, such as SDS's
        ``1 / (n ln n)``, is not the delta that holds) and far below
        ``1 / n`` for any table in memory.  ``fit`` warns when
        ``delta >= 1 / n_records_``.
    reporting_length : int, default=3
        Longest combination length R (clamped to the number of columns).
    release : {"auto", "workload", "sds"} or Release, default="auto"
        How ``fit`` spends the budget: a name registered in
        :mod:`dpsynth.release` or a release-strategy object with its own
        options, e.g. ``SDSRelease(percentile=95)`` (a grid search reaches
        them as ``release__percentile``).  ``"workload"``
        (:class:`~dpsynth.release.WorkloadRelease`): DP discovery of
        undeclared values, then all 1-way marginals and adaptively selected
        2- and 3-way marginals measured with Gaussian noise, after AIM
        (McKenna et al. 2022); the budget is the exact Gaussian-DP ``mu`` of
        ``(epsilon, delta)`` (Dong, Roth and Su); the release holds dense
        noisy marginals.  ``"sds"`` (:class:`~dpsynth.release.SDSRelease`):
        the SDS release of every 1..R combination (Gopi et al. Algorithm 1),
        kept for parity with pac-synth; its options (``percentile``,
        ``accuracy_mode``, ``fabrication_mode``, ...) are the strategy's
        parameters.  ``"auto"`` picks ``"workload"`` (the more accurate on
        the benchmarks, see ``benchmarks/LOG.md``), unless the sampler needs
        SDS's sparse counts (``synthesis="aggregate_seeded"``).
    synthesis : {"marginal_matching", "aggregate_seeded"} or Sampler, default="marginal_matching"
        How ``sample`` turns the aggregates into records (every sampler reads
        only the aggregates): a name registered in :mod:`dpsynth.sampling`,
        or a sampler object with its own options, e.g.
        ``AggregateSeededSampler(weight_selection_percentile=90)``.
        ``"aggregate_seeded"`` is SDS's sampler (for parity with pac-synth).  ``"marginal_matching"`` denoises the 2-way
        aggregates by empirical Bayes (accounting for suppressed cells), makes
        them consistent with the 1-way counts and fits a population to them
        by coordinate descent; it is far more accurate (see
        ``benchmarks/LOG.md``).
    encoder : TableEncoder or None, default=None
        How columns become categorical codes; ``None`` means
        ``TableEncoder()``.  Declaring every column's ``categories`` makes the
        1-tuple universe public (see Notes).
    n_jobs : int or None, default=None
        Threads of ``fit``'s counting (chunks of 100,000 rows; with
        ``release="workload"``, also the candidate tables' counts and
        scores each round) and of ``sample`` for samplers that use them
        (marginal matching: one population of at most 50,000 records per
        thread; decoding: the binned columns' within-bin draws beside the
        other columns).  ``None`` uses every processor this process may use (as
        scikit-learn's OpenMP-based estimators do), ``1`` one thread.  The
        release and the records do not depend on it.
    random_state : int, Generator, RandomState or None, default=None
        Seeds the noise of ``fit`` and the draws of ``sample``, through two
        independent child streams of one :class:`numpy.random.SeedSequence`
        (``sample`` never replays the noise).  ``None`` draws fresh OS
        entropy, whatever NumPy's global state.  A fixed, known seed makes
        the noise reproducible by anyone, so it is for experiments and tests
        only: **publish releases made with ``random_state=None``** (and never
        compare releases that share a seed).  The encoder's DP steps (DP
        quantile bin edges, ...) draw from a child stream of it, unless the
        encoder has its own ``random_state``: an explicit encoder seed is
        kept (``fit`` warns when it is combined with ``random_state=None``,
        since its DP outputs then repeat across fits).
    max_memory : float or None, default=None
        Memory limit in bytes of one step of ``fit`` (one combination length)
        and of ``sample``; ``None`` means half the RAM available when the
        step starts, ``numpy.inf`` no limit.  Work is estimated from public
        facts before it starts (see Notes): ``fit`` refuses a table whose
        declared domains alone exceed it, and stops at the longest length
        that fits (with a :class:`~dpsynth.exceptions.ResourceLimitWarning`
        stating the estimate; ``reporting_length_`` is then smaller);
        ``sample`` refuses an ``n_samples`` that cannot fit.
    verbose : int, default=0
        Print one line per released combination length and per sampling run
        (the same lines go to the ``logging`` logger ``"dpsynth"`` at INFO,
        whatever ``verbose``).
    constraints : list or None, default=None
        Public rules every sampled record satisfies (objects of
        :mod:`dpsynth.constraints`, or their dictionary form): allowed or
        forbidden combinations, implications, inequalities between numeric
        columns, numeric ranges.  They are declarations, like the bounds
        (write them from knowledge of the domain, not from the data); they
        do not change the release, only ``sample``, which conditions the
        released model on them (post-processing: no privacy cost).
    noise : {"discrete", "continuous"}, default="discrete"
        How noise is drawn.  ``"discrete"``: every count gets exact integer
        noise (discrete Gaussian, discrete Laplace for the record count;
        Canonne, Kamath & Steinke 2020) sampled with integer arithmetic from
        the random bits of ``random_state``, so the floating-point attacks on
        noise samplers do not apply; its scale is calibrated so that the
        reported guarantee holds exactly as for the continuous noise (see
        :mod:`dpsynth.mechanisms`).  ``"continuous"``: numpy's floating-point
        Gaussian and Laplace noise.

    Attributes
    ----------
    aggregates_ : DPAggregates
        The release (the privacy boundary): the DP marginals or combination
        counts with their public schema.  Publish it with
        ``aggregates_.save(path)``, or publish :meth:`publishable`.
    privacy_spent_ : dpsynth.accounting.PrivacySpent
        Immutable read-only mapping: ``epsilon``, ``delta``, ``rho`` (zCDP
        of the marginals), ``epsilon_records``, ``epsilon_binning``,
        ``percentile_epsilon``, ``sigmas``, ``noise_scales``,
        ``contribution_bounds`` and ``thresholds`` (by length),
        ``conversion_delta``, ``public_universe`` (the SDS release's
        names; the workload release adds ``mu`` and its own split);
        ``.mechanisms`` lists every accounted mechanism with its share.
    n_records_ : int
        DP record count.
    reporting_length_ : int
        Effective R.
    encoder_ : TableEncoder
        The encoder fitted on the training data.  **Private**: it lists every
        value observed in the undeclared columns, those the DP release
        suppressed included, so a fitted synthesizer (and its pickle) is not
        a release.  ``sample`` does not need it (it uses the public
        ``aggregates_.schema``).  Absent after :meth:`from_aggregates` and
        :meth:`publishable`.
    sampling_stats_ : dict
        Statistics of the last ``sample`` (``n_records``,
        ``empty_cell_share``; SDS's sampler adds its fallback shares; with
        conditions or constraints, and after ``sample_remaining_columns``,
        ``pool_records`` drawn from the model, ``matching_records`` and
        ``repeated_records``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    What is private and what is the release: the fitted synthesizer holds
    the private ``encoder_`` (and, like any estimator, may be pickled with
    it); the release is ``aggregates_`` (with ``privacy_spent_`` and the
    records ``sample`` draws from it).  ``synth.publishable()``, the same as
    ``DPMarginalSynthesizer.from_aggregates(synth.aggregates_)``, is a
    synthesizer holding the release only: pickle or share that one.

    Workload release: ``(epsilon, delta')`` is converted exactly to a
    Gaussian-DP ``mu``, written ``rho = mu**2 / 2`` (``delta' = delta/2``
    with a data-derived universe, whose discovery spends
    :func:`~dpsynth.release.workload_release.discovery_proportion` of ``rho``, times
    the share of undeclared columns, and
    the other ``delta/2``; its noisy counts also measure the 1-way
    marginals); every selection and measurement is listed in
    ``privacy_spent_.mechanisms`` and they add up to ``rho``.

    Values a workload release does not publish (too rare to pass the DP
    threshold: identifiers, the tail of a many-valued column) become their
    column's *other* value, a code every undeclared column has whatever the
    data, measured and synthesized like any value: the DP record count and
    the other columns' marginals do not depend on how many values a column
    has.  It decodes to the encoder's ``other_label`` (``"<other>"`` in text
    columns, missing in numeric ones).  Missing values are a value of their
    own, so a column without them gets none back, up to noise.  A release
    too noisy for its table (few records for its budget), with a column
    of which no value was released, or with numeric columns whose DP ranges
    are too noisy for the DP record count, raises a
    :class:`~dpsynth.NoisyReleaseWarning` in ``fit``.

    SDS release, budget split (all numbers in ``privacy_spent_``): ``epsilon_records =
    epsilon * number_of_records_epsilon_proportion`` (Laplace; a parameter of
    :class:`~dpsynth.release.SDSRelease`); the rest is
    converted to zCDP ``rho = (sqrt(eps_M + L) - sqrt(L))**2`` with
    ``L = ln(1/delta')``, ``delta' = delta/2`` (the other half pays for the
    data-derived 1-tuple universe through the threshold ``rho_1``).  The
    papers print this budget without the square, which would overstate it.
    If every column's categories are declared, the universe is public:
    ``delta' = delta`` and level 1 uses the fabrication rule of length 2.

    Resources are estimated from public facts only: before any DP step from
    the number of columns, R and the declared domains (categories, bin
    counts); before length ``k >= 2`` from the combinations released at
    length ``k - 1`` (a DP output), whose apriori joins bound the length's
    candidates (about ``4 k + 130`` bytes each at the kernels' peak).  The
    number of values of an undeclared column is private and is never used.

    References
    ----------
    .. [1] S. Gopi, S. Mahabadi, S. Yekhanin. "Differentially Private
       Marginals." (Microsoft Research note).
    .. [2] Microsoft, "Synthetic Data Showcase: Differentially private
       aggregation and synthesis" (design document).
    .. [3] R. McKenna, B. Mullins, D. Sheldon, G. Miklau. "AIM: An Adaptive
       and Iterative Mechanism for Differentially Private Synthetic Data."
       VLDB 2022.

    Examples
    --------
    >>> import pandas as pd
    >>> from dpsynth import DPMarginalSynthesizer
    >>> X = pd.DataFrame({"a": ["x", "y"] * 200, "b": ["u", "u", "v", "v"] * 100})
    >>> synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(X)
    >>> synth.sample(5).shape
    (5, 2)
    """

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, accounting.MAX_EPSILON, closed="right")],
        "delta": [Interval(Real, 0, accounting.MAX_DELTA, closed="right"), None],
        "reporting_length": [Interval(Integral, 1, None, closed="left")],
        # any name: strategies registered later are reachable, get_release names the choices
        "release": [str, Release],
        "synthesis": [StrOptions(set(SAMPLERS)), Sampler],
        "encoder": [HasMethods(["fit_transform", "inverse_transform"]), None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
        "max_memory": [Interval(Real, 0, None, closed="neither"), None],
        "verbose": ["verbose"],
        "constraints": [list, tuple, None],
        "noise": [StrOptions({"discrete", "continuous"})],
    }

    def __new__(cls, *args, **kwargs):
        _check_moved_parameters(cls, kwargs, "DPMarginalSynthesizer(release=SDSRelease({}))",
                                TypeError)
        return super().__new__(cls)

    def __init__(self, *, epsilon=4.0, delta=None, reporting_length=3, release="auto",
                 synthesis="marginal_matching", encoder=None, n_jobs=None,
                 random_state=None, max_memory=None, verbose=0, constraints=None,
                 noise="discrete"):
        self.epsilon = epsilon
        self.delta = delta
        self.reporting_length = reporting_length
        self.release = release
        self.synthesis = synthesis
        self.encoder = encoder
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.max_memory = max_memory
        self.verbose = verbose
        self.constraints = constraints
        self.noise = noise

    # __new__ only refuses the old keywords; the constructor's signature is __init__'s
    __new__.__signature__ = inspect.signature(__init__)

    # ----------------------------------------------------------- params
    def set_params(self, **params):
        """Set the parameters (``release__percentile`` reaches a strategy's own)."""
        _check_moved_parameters(type(self), params, "set_params(release=SDSRelease({})) or "
                                "release__<name> on an SDSRelease", ValueError)
        nested = sorted(k for k in params if k.startswith("release__"))
        if nested and isinstance(params.get("release", self.release), str):
            raise ValueError(
                f"{nested[0]} sets an option of a release strategy object, but release="
                f"{params.get('release', self.release)!r} is a name; give the object first, "
                "e.g. release=SDSRelease() or release=WorkloadRelease() (in the estimator or "
                "in the same grid).")
        return super().set_params(**params)

    def _check_params(self, n_columns):
        """Validate every parameter (declaratively, the release strategy's too).

        Returns ``(epsilon, R, strategy, sampler)``: R the longest length
        released, the release strategy and the sampler it is for.
        """
        self._validate_params()
        if self.encoder is not None and not isinstance(self.encoder, TableEncoder):
            raise TypeError(
                f"encoder must be a dpsynth.preprocessing.TableEncoder or None; got "
                f"{type(self.encoder).__name__}.")
        self._check_n_jobs()
        strategy, sampler = self._release_strategy()
        strategy.validate(int(self.reporting_length), n_columns)
        R = min(int(self.reporting_length), n_columns)
        return float(self.epsilon), R, strategy, sampler

    def _check_n_jobs(self):
        if isinstance(self.n_jobs, bool) or self.n_jobs == 0:
            raise ValueError("n_jobs must be None or a non-zero integer (-1: all processors); "
                             "got 0.")

    def _release_strategy(self):
        """The release strategy (a new object; ``"auto"`` resolved by the sampler) and the
        sampler it is for; refuses a sampler that cannot read what the strategy releases."""
        sampler = get_sampler(self.synthesis)
        strategy = get_release(self.release, sampler=sampler)
        if sampler.needs_sparse_counts and not strategy.sparse_counts:
            name = (f"synthesis={self.synthesis!r}" if isinstance(self.synthesis, str)
                    else f"synthesis={type(sampler).__name__}(...)")
            raise ValueError(f"{name} samples SDS's sparse combination counts; use "
                             "release='sds' (or release=SDSRelease(...)) with it, or "
                             f"synthesis='marginal_matching' with release={self.release!r}.")
        return strategy, sampler

    # --------------------------------------------------------------- fit
    @staticmethod
    def _join_target(frame, y):
        """The table to release: X, with y as one more column (and y's name)."""
        if y is None:
            return frame, None
        target = check_target(y, len(frame))
        if isinstance(target.name, str):
            name = target.name
        else:  # unnamed (an array, a list): "y", or "y_0", ... when X has a column "y"
            taken = {str(c) for c in frame.columns}
            name = next(n for n in ("y", *(f"y_{i}" for i in range(len(taken) + 1)))
                        if n not in taken)
        if name in frame.columns:
            raise ValueError(f"y's name {name!r} is also a column of X; rename one of them.")
        frame = frame.copy()
        frame[name] = target.set_axis(frame.index)  # keeps extension and object dtypes
        return frame, name

    def fit(self, X, y=None):
        """Release the DP aggregates of X (and y, as one more column).

        Parameters
        ----------
        X : DataFrame, dask DataFrame or array-like of shape (n_samples, n_features)
            Its column names and dtypes are the declared (public) schema
            (number labels, as ``pd.DataFrame(array)`` gives, are named by
            their text and come back in ``sample``).  A
            dask DataFrame (the ``dask`` extra: dask, distributed, pyarrow) is encoded and
            counted partition by partition on its cluster (either
            release); the aggregates equal those of the same table in
            memory for the same ``random_state``.
        y : array-like of shape (n_samples,), default=None
            Modelled jointly with X; ``sample`` then returns ``(X, y)``.  An
            integer or bool ``y`` is taken for class labels: categorical
            (each label a value) unless the encoder's ``numeric`` names it;
            a float ``y`` is binned like any numeric column.

        Returns
        -------
        self : DPMarginalSynthesizer
        """
        distributed = is_dask_collection(X)
        if distributed:  # the declaration only; partitions are read by the release
            if y is not None:
                raise ValueError("y is not supported with a dask DataFrame X; add the "
                                 "target to X as a column.")
            X, labels = dask_engine.named_frame(X)  # 0 -> "0", as in memory
            table, was_frame, target = dask_engine.check_frame(X), True, None
            source_dtypes = arrow_dtypes(table)
            if source_dtypes:  # pyarrow, period, sparse: partitions read as in memory
                table = standard_columns(table)
                X = X.map_partitions(standard_columns, meta=table)
        else:  # only read (a copy of a large table would cost its memory again)
            frame, was_frame = check_table(X, copy=False)
            labels = column_labels(X)  # 0 -> "0": the release keeps the labels
            table, target = self._join_target(frame, y)
            source_dtypes = arrow_dtypes(X) if isinstance(X, pd.DataFrame) else {}
        if target is not None:  # y joined as it came (a period or sparse y too)
            source_dtypes.update(arrow_dtypes(table[[target]]))
        epsilon, R, strategy, sampler = self._check_params(table.shape[1])

        check_constraint_columns([c.named(labels) for c in check_constraints(self.constraints)],
                                 list(table.columns))  # before any DP step
        delta = accounting.check_delta(self.delta)
        declared_encoder = _named_encoder(self.encoder, labels)
        max_bytes = self._check_resources(table, R, strategy, declared_encoder)  # public, before DP
        noise_stream, binning_stream = stream(self.random_state, FIT).spawn(2)
        rng = np.random.default_rng(noise_stream)
        encoder = clone(declared_encoder) if declared_encoder is not None else TableEncoder()
        seeded_encoder = encoder.random_state is not None  # the user's explicit choice
        if not seeded_encoder:  # DP quantile binning: a child stream of ours
            encoder.set_params(random_state=binning_stream)
        _target_as_classes(encoder, table, None if distributed else target)
        self._share_numeric_budget(encoder, table, epsilon, delta, strategy)
        if distributed:
            encoder, value_counts = dask_engine.fit_encoder(encoder, X)
            codes = dask_engine.DaskCodes(X, encoder, value_counts=value_counts)
        else:  # counted in row chunks on the threads n_jobs allows
            codes = InMemoryCodes(encoder._fit_transform(table), n_threads(self.n_jobs))
        # the period, sparse and pyarrow dtypes of the input (public: the user chose them)
        # travel with the release, so that a loaded release decodes to them too
        schema = encoder.schema_.with_source_dtypes(source_dtypes).with_labels(labels)
        schema.to_json()  # every value can be written to a release file, before DP
        if seeded_encoder and self.random_state is None and (
                encoder.epsilon_spent_ or getattr(encoder, "delta_spent_", 0.0)
                or getattr(encoder, "spends_", ())):
            warnings.warn(
                "encoder.random_state is fixed while random_state=None: the encoder's DP "
                "steps (DP quantile bin edges, frequent values, within-bin histograms) "
                "draw the same noise at every fit, so their outputs repeat across "
                "releases and whoever knows the seed can remove it. For a release you "
                "publish, leave encoder.random_state=None: the synthesizer then seeds "
                "it from its own fresh stream.", UserWarning, stacklevel=2)
        # the point masses' thresholds spent part of delta: the release has the rest
        release_delta = delta - sum(s.delta for s in getattr(encoder, "spends_", ()))
        aggregates = strategy.release(
            codes, schema, epsilon=epsilon, delta=release_delta,
            reporting_length=int(self.reporting_length), rng=rng,
            target=target, epsilon_binning=encoder.epsilon_spent_,
            delta_binning=_binner_delta(encoder),
            encoder_spends=getattr(encoder, "spends_", ()), sampler=sampler,
            n_threads=n_threads(self.n_jobs), noise=self.noise, max_bytes=max_bytes,
            log=self._log)
        if schema.leaks:  # PrivacyLeakWarnings of the encoder: not covered by the guarantee
            aggregates.privacy = aggregates.privacy.with_details(privacy_leak_warnings=[
                note for notes in schema.leaks.values() for note in notes])
        self.encoder_ = encoder
        self._set_release(aggregates, output_frame=was_frame)
        _noisy_release_warnings(aggregates, epsilon, delta)
        accounting.warn_large_delta(delta, self.n_records_)
        return self

    def _share_numeric_budget(self, encoder, table, epsilon, delta, strategy):
        """Give ``encoder`` its share of the budget for ``numeric="auto"``.

        A public function of the declaration (the candidate columns, read
        from names and dtypes) and of ``(epsilon, delta)``: the share
        :func:`~dpsynth.preprocessing._numeric.numeric_share` of the zCDP
        ``rho`` of the release (computed with the smaller of its conversion
        deltas, so never more than that share of the ``rho`` it uses), over
        ``1 - RECORDS_SHARE`` so that the table's record count the encoder
        measures comes on top of the columns' share, and ``DELTA_SHARE`` of
        ``delta``.  The release spends what the encoder
        does not (both are counted inside the one ``(epsilon, delta)``): its
        conversion delta is then at least the one used here.
        """
        if (not isinstance(encoder, TableEncoder) or encoder.numeric == "categorical"
                or encoder.numeric_rho is not None):
            return
        try:
            declared = check_categories(encoder.categories, table)
        except (ValueError, TypeError):  # the encoder's fit says what is wrong
            return
        candidates = auto_columns(table, declared=declared, bounds=encoder.bounds,
                                  binning=encoder.binning, text_numbers=encoder.text_numbers,
                                  numeric=encoder.numeric)
        if not candidates:
            return
        numeric_delta = DELTA_SHARE * delta
        conversion_delta = (delta - numeric_delta) / 2.0
        rho = strategy.budget_rho(epsilon, conversion_delta)
        # the decisions' and columns' share, and on top of it the table's record count
        # (RECORDS_SHARE of the encoder's numeric_rho, unspent without a numeric column:
        # the release spends it then)
        encoder.set_params(numeric_rho=numeric_share(len(candidates)) * rho
                           / (1.0 - RECORDS_SHARE), numeric_delta=numeric_delta)

    def _max_bytes(self):
        return default_max_memory() if self.max_memory is None else float(self.max_memory)

    def _check_resources(self, table, R, strategy, encoder=None):
        """Refuse, before any DP step, a table whose public domains exceed ``max_memory``.

        Uses public facts only: the number of columns, R, and the domains the
        encoder's parameters declare (categories, bin counts, booleans).
        Returns the limit in bytes.
        """
        max_bytes = self._max_bytes()
        sources = []
        domains = _public_domains(self.encoder if encoder is None else encoder, table,
                                  sources=sources)
        worst = public_worst_case(domains, R)
        need = level_bytes(worst[0], 1)
        if need > max_bytes:
            raise ResourceLimitError(
                f"The declared domains have {worst[0]:.4g} values in all; counting them "
                f"needs about {format_bytes(need)}, over max_memory="
                f"{format_bytes(max_bytes)}. Declare fewer categories (bin or drop "
                "high-cardinality columns) or raise max_memory.")
        strategy.check_resources(list(zip(table.columns, domains, sources)), max_bytes)
        return max_bytes

    def _check_sample_size(self, n_samples):
        """Refuse, before sampling, ``n_samples`` records that cannot fit ``max_memory``."""
        n_columns = len(self.aggregates_.schema)
        need = float(n_samples) * max(n_columns, 1) * _BYTES_PER_SAMPLED_CELL
        max_bytes = self._max_bytes()
        if need > max_bytes:
            raise ResourceLimitError(
                f"n_samples={n_samples} records of {n_columns} columns need about "
                f"{format_bytes(need)}, over max_memory={format_bytes(max_bytes)}; call "
                f"sample in chunks of at most {int(max_bytes // (max(n_columns, 1) * _BYTES_PER_SAMPLED_CELL))} "
                "records (the command line writes large outputs in chunks) or raise "
                "max_memory.")

    def _set_release(self, aggregates, *, output_frame):
        """Fitted state, all derived from the (public) aggregates."""
        self.aggregates_ = aggregates
        self.privacy_spent_ = aggregates.privacy
        self.n_records_ = aggregates.n_records
        self.reporting_length_ = aggregates.reporting_length
        names = [n for n in aggregates.column_names if n != aggregates.target]
        self.n_features_in_ = len(names)
        # scikit-learn's convention: feature names only when every label is a string
        if output_frame and not aggregates.schema.labels():
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self._output_frame = output_frame

    @property
    def _target_name(self):
        return self.aggregates_.target

    @classmethod
    def from_aggregates(cls, aggregates, **params):
        """A fitted synthesizer that samples from released aggregates alone.

        Parameters
        ----------
        aggregates : DPAggregates
            E.g. ``DPAggregates.load(path)``.
        **params
            Sampling parameters (``synthesis``, ``n_jobs``, ``random_state``,
            ``verbose``, ``constraints``).

        Returns
        -------
        DPMarginalSynthesizer
            ``sample`` works; there is no ``encoder_`` (no private state).
        """
        if not isinstance(aggregates, DPAggregates):
            raise TypeError(f"aggregates must be a DPAggregates; got {type(aggregates).__name__}.")
        synth = cls(epsilon=aggregates.privacy.epsilon,
                    reporting_length=aggregates.reporting_length, **params)
        synth._validate_params()
        synth._set_release(aggregates, output_frame=True)
        return synth

    def publishable(self):
        """A synthesizer that holds the release only: safe to pickle or share.

        It samples as this one does (same ``synthesis``, ``n_jobs``,
        ``max_memory``, ``verbose``; output type) from ``aggregates_``
        alone, like :meth:`from_aggregates`: no ``encoder_``, so none of the
        values the DP release suppressed.  Its ``random_state`` is None: a
        seed of this synthesizer would also regenerate the noise of ``fit``.

        Returns
        -------
        DPMarginalSynthesizer
        """
        check_is_fitted(self, "aggregates_")
        synthesis = self.synthesis if isinstance(self.synthesis, str) else clone(self.synthesis)
        synth = type(self).from_aggregates(self.aggregates_, synthesis=synthesis,
                                           n_jobs=self.n_jobs, max_memory=self.max_memory,
                                           verbose=self.verbose)
        synth._set_release(self.aggregates_, output_frame=self._output_frame)
        return synth

    # ------------------------------------------------------------ sample
    def sample(self, n_samples=None, *, conditions=None, random_state=None,
               exhaust_counts=False):
        """Synthesize records from the DP aggregates only.

        Parameters
        ----------
        n_samples : int, default=None
            Number of records; ``None`` gives ``n_records_`` (the DP count),
            or with ``conditions`` the model's expected number of records
            that satisfy them (its conditional sub-population).
        conditions : dict or None, default=None
            ``{column: value}``, ``{column: [values]}`` or, for a numeric
            (binned) column, ``{column: (low, high)}`` (``None`` for an open
            end): every record returned satisfies all of them, and the other
            columns follow the released model's conditional distribution
            (see :mod:`dpsynth.sampling.conditional`; post-processing, no
            privacy cost).  A value the release does not hold, or conditions
            the model gives (near-)zero mass, raise ``ValueError``.
        random_state : int, Generator, RandomState or None, default=None
            ``None`` uses the estimator's ``random_state`` (so an int seed
            gives the same rows on every call; with ``random_state=None``
            every call draws fresh entropy); pass a seed for other draws.
        exhaust_counts : bool, default=False
            SDS's no-target mode (``synthesis="aggregate_seeded"`` only):
            sample until every DP 1-count is used up (``n_samples`` must be
            None).  With ``missing="absent"`` the synthetic 1-way counts then
            equal the DP 1-counts exactly.

        Returns
        -------
        X : DataFrame or ndarray
            Columns in training order with their dtypes restored, rows in
            random order.  ``(X, y)`` if the synthesizer was fitted with y.
        """
        check_is_fitted(self, "aggregates_")
        self._validate_params()
        self._check_n_jobs()
        predicates = self._predicates(conditions)
        if predicates and exhaust_counts:
            raise ValueError("exhaust_counts=True samples until the 1-counts are used up; it "
                             "cannot be combined with conditions or constraints.")
        sampler = get_sampler(self.synthesis, n_jobs=self.n_jobs)
        if predicates and n_samples is None:
            target = None
        elif exhaust_counts:
            if type(sampler).__name__ != "AggregateSeededSampler":
                raise ValueError("exhaust_counts=True is SDS's no-target mode; it needs "
                                 "synthesis='aggregate_seeded'.")
            if n_samples is not None:
                raise ValueError("exhaust_counts=True samples until the 1-counts are used "
                                 "up; leave n_samples=None.")
            target = None
        elif n_samples is None:
            target = self.n_records_
        else:
            if (isinstance(n_samples, bool) or not isinstance(n_samples, Integral)
                    or n_samples < 0):
                raise ValueError(f"n_samples must be a non-negative integer; got {n_samples!r}.")
            target = int(n_samples)
            self._check_sample_size(target)
        sampling_stream, decoding_stream = stream(
            self.random_state if random_state is None else random_state, SAMPLE).spawn(2)
        if predicates:
            return self._sample_restricted(predicates, target, sampling_stream,
                                           decoding_stream, conditions)
        codes = sampler.fit(self.aggregates_).sample(target, np.random.default_rng(sampling_stream))
        stats = getattr(sampler, "stats_", None) or {
            "n_records": codes.shape[0],
            "empty_cell_share": float(np.mean(codes < 0)) if codes.size else 0.0}
        self.sampling_stats_ = stats
        self._log(f"sampled {codes.shape[0]} records", done=1, total=1, label="sampling")
        return self._decode(codes, decoding_stream)

    # ------------------------------------------------ conditional sampling
    def _predicates(self, conditions):
        """The prepared predicates of ``conditions`` and of the declared ``constraints``."""
        schema = self.aggregates_.schema
        conditions = named_keys(conditions, schema.labels())  # {0: ...} names column "0"
        predicates = [c.prepare(schema) for c in parse_conditions(conditions, schema)]
        predicates += [c.named(schema.labels()).prepare(schema)
                       for c in check_constraints(self.constraints)]
        return predicates

    def _pool_draw(self):
        """``draw(n, rng)``: model records for conditional sampling.

        The pools are subsampled, so the marginal-matching sampler's rounding
        of a small sample to a larger reference (``reference_size``) is not
        needed and is skipped; and every pool record is fitted
        (``model_size=0``): repeated model records would give a rare
        condition fewer distinct records.
        """
        sampler = get_sampler(self.synthesis, n_jobs=self.n_jobs, reference_size=0,
                              model_size=0)
        sampler.fit(self.aggregates_)
        return sampler.sample

    def _max_pool(self, n):
        n_columns = max(len(self.aggregates_.schema), 1)
        memory = int(self._max_bytes() // (n_columns * _BYTES_PER_SAMPLED_CELL))
        return max(min(max(20 * (n or self.n_records_), 2_000_000), memory), 1)

    def _sample_restricted(self, predicates, n, sampling_stream, decoding_stream, conditions):
        """Records of the model that satisfy ``predicates`` (conditions and constraints)."""
        what = "the conditions" if conditions else "the constraints"
        if conditions and self.constraints:
            what = "the conditions with the constraints"
        rng = np.random.default_rng(sampling_stream)
        codes, values, stats = draw_restricted(
            self._pool_draw(), self.aggregates_.schema, predicates, n, rng,
            n_records=float(self.n_records_), max_pool=self._max_pool(n), describe=what)
        if n is None:
            self._check_sample_size(codes.shape[0])
        stats["empty_cell_share"] = float(np.mean(codes < 0)) if codes.size else 0.0
        self.sampling_stats_ = stats
        self._log(f"sampled {codes.shape[0]} records satisfying {what} (from "
                  f"{stats['pool_records']} model records)", done=1, total=1, label="sampling")
        return self._decode(codes, decoding_stream, values=values)

    def sample_remaining_columns(self, known, *, random_state=None):
        """Fill in the other columns of ``known`` from the model's conditional distribution.

        Every row of ``known`` gets values of the other columns drawn from the
        released model given that row's known values (binned columns: given
        their bin, which is all the model holds of them).  Post-processing of
        the release: no privacy cost.

        Parameters
        ----------
        known : DataFrame
            Some of the columns (by name) the synthesizer was fitted on (with
            y: the target too), any index.
        random_state : int, Generator, RandomState or None, default=None
            As in :meth:`sample`.

        Returns
        -------
        X : DataFrame
            ``known``'s rows (same index) with every column in training order;
            the columns of ``known`` are kept exactly (values and dtypes).
            ``(X, y)`` if the synthesizer was fitted with y.

        Raises
        ------
        ValueError
            A column or value the release does not hold, or a row whose known
            values have zero mass in the model.
        """
        check_is_fitted(self, "aggregates_")
        self._validate_params()
        self._check_n_jobs()
        if not isinstance(known, pd.DataFrame):
            raise TypeError("known must be a DataFrame whose columns are some of the "
                            f"synthesizer's; got {type(known).__name__}.")
        schema = self.aggregates_.schema
        labels = schema.labels()
        if labels:  # number labels name their columns by their text
            known = known.rename(columns=lambda c: named_keys([c], labels)[0]
                                 if not isinstance(c, str) else c)
        unknown = [c for c in known.columns if c not in schema.names]
        if unknown or known.columns.duplicated().any():
            raise ValueError(f"known has column(s) {unknown or list(known.columns)} that are "
                             f"not (once) among the synthesizer's columns {schema.names}.")
        if known.shape[1] == 0:
            raise ValueError("known has no column; use sample(n_samples) instead.")
        predicates = self._predicates(None)
        sampling_stream, decoding_stream = stream(
            self.random_state if random_state is None else random_state, SAMPLE).spawn(2)
        rng = np.random.default_rng(sampling_stream)
        self._check_sample_size(len(known))
        codes, values, stats = fill_known(
            self._pool_draw(), schema, predicates, known, rng,
            max_pool=self._max_pool(len(known)), n_records=float(self.n_records_))
        stats["empty_cell_share"] = float(np.mean(codes < 0)) if codes.size else 0.0
        self.sampling_stats_ = stats
        out = self._decode(codes, decoding_stream, values=values, as_frame=True)
        out.index = known.index
        for name in known.columns:
            out[name] = known[name]
        if labels:
            out.columns = output_labels(schema)
        target = self._target_name
        if target is None:
            return out
        return out.drop(columns=[target]), out[target]

    def fit_resample(self, X, y):
        """Fit on ``(X, y)`` and return a synthetic ``(X, y)`` of ``n_records_`` rows.

        Duck-types imbalanced-learn's samplers, so the synthesizer can stand in
        an ``imblearn.pipeline.Pipeline`` (applied only when fitting).
        """
        return self.fit(X, y).sample()

    def score(self, X, y=None):
        """Fidelity of the synthesizer to X: ``1 - mean TVD`` of 2-way marginals.

        Samples ``len(X)`` records (seeded by ``random_state``) and compares
        every pair of columns (every column when there is one) after encoding
        both tables with the public schema, so binned numeric columns are
        compared bin by bin.  ``y`` joins the comparison when the synthesizer
        was fitted with one.  Higher is better; usable by ``GridSearchCV``.
        The score is computed on real data and is not a DP release.
        """
        check_is_fitted(self, "aggregates_")
        frame, _ = check_table(X)
        target = self._target_name
        names = self.aggregates_.column_names
        features = [c for c in names if c != target]
        if frame.shape[1] != len(features):
            raise ValueError(f"X has {frame.shape[1]} features, but {type(self).__name__} "
                             f"is expecting {len(features)} features as input.")
        if not self._output_frame:
            frame.columns = features
        elif list(frame.columns) != features:
            if sorted(frame.columns) == sorted(features):
                raise ValueError("The columns of X are in a different order than at fit; "
                                 f"give them in this order: X[{features}].")
            missing = [c for c in features if c not in frame.columns]
            extra = [c for c in frame.columns if c not in features]
            raise ValueError(f"X has different columns than at fit: missing {missing}, "
                             f"unexpected {extra}; give the columns {features}.")
        synthetic = self.sample(len(frame))
        X_syn, y_syn = synthetic if isinstance(synthetic, tuple) else (synthetic, None)
        real = frame[features].reset_index(drop=True)
        fake = pd.DataFrame(X_syn, columns=features) if not isinstance(X_syn, pd.DataFrame) \
            else X_syn.reset_index(drop=True).set_axis(features, axis=1)  # labels -> names
        compared = list(features)
        if target is not None:  # the encoder needs every column: fill the target
            if y is not None:
                real[target] = pd.Series(column_or_1d(y, warn=True) if not isinstance(
                    y, pd.Series) else y.to_numpy())
                fake[target] = np.asarray(y_syn)
                compared.append(target)
            else:
                real[target] = fake[target] = None
        # real values outside the release count as other (undeclared columns) or missing
        encoder = TableEncoder.from_schema(self.aggregates_.schema, handle_unknown="missing")
        positions = [names.index(c) for c in compared]
        real_codes = pd.DataFrame(encoder._transform(real[names])[:, positions], columns=compared)
        fake_codes = pd.DataFrame(encoder._transform(fake[names])[:, positions], columns=compared)
        return 1.0 - marginal_tvd(real_codes, fake_codes, k=2 if len(compared) >= 2 else 1)

    def _decode(self, codes, seed, values=None, as_frame=False):
        """Codes -> the declared dtypes (within-bin draws from their own stream).

        ``values``: ``{column index: (values, missing)}`` already drawn for
        some binned columns (conditional sampling), kept as they are.
        ``as_frame``: one DataFrame, target included.
        """
        frame = self.aggregates_.encoder._inverse_transform(
            codes, random_state=seed, n_jobs=self.n_jobs, labelled=False)
        if values:
            schema = self.aggregates_.schema
            for j, (drawn, missing) in values.items():
                if schema[j].binning.is_text:  # numbers replaced; codes, types kept
                    frame[schema[j].name] = with_numbers(frame[schema[j].name], drawn,
                                                         ~missing, schema[j].binning)
                    continue
                frame[schema[j].name] = restore_column(schema, j, drawn, missing)
        frame = arrow_restored(frame, self.aggregates_.schema.source_dtypes())
        if as_frame:
            return frame
        target = self._target_name
        if self._output_frame and self.aggregates_.schema.labels():  # the input's labels
            frame.columns = output_labels(self.aggregates_.schema)
        if target is None:
            return frame if self._output_frame else frame.to_numpy()
        y = frame.pop(target)
        if self._output_frame:
            return frame, y
        return frame.to_numpy(), y.to_numpy()

    def _log(self, message, *, done, total, label):
        """Progress: a :func:`~dpsynth.utils._progress.log_progress` record, printed if
        ``verbose``.  Messages hold public parameters and DP outputs only."""
        log_progress(done, total, label, message)
        if self.verbose and done:
            print(f"[{type(self).__name__}] {message}", flush=True)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.target_tags.required = False
        return tags
