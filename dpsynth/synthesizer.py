"""`DPMarginalSynthesizer`: DP k-way marginals in, synthetic records out.

``fit`` releases differentially private k-tuple counts with the DP-marginals
algorithm (Gopi, Mahabadi, Yekhanin; as in Microsoft's Synthetic Data
Showcase).  ``sample`` builds synthetic records from those counts alone.
"""

from numbers import Integral, Real
import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, DensityMixin, clone
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, column_or_1d

from . import accounting
from .aggregates import DPAggregates
from .engines import InMemoryCodes, as_blocks, is_dask_collection
from .exceptions import ResourceLimitError, ResourceLimitWarning
from .mechanisms import laplace_count
from .preprocessing import TableEncoder
from .release.adaptive import release_adaptive
from .release.sds import release_marginals, sds_privacy_spent
from .sampling import SAMPLERS, Sampler, get_sampler
from .utils._progress import log_progress
from .utils._random import FIT, SAMPLE, stream
from .utils._threads import n_threads
from .utils._resources import (default_max_memory, format_bytes, level_bytes,
                               public_worst_case, time_class)
from .utils._validation import check_table

__all__ = ["DPMarginalSynthesizer"]


def dask_engine():
    """:mod:`dpsynth.engines.dask`, imported on first use (dask is optional)."""
    from .engines import dask as engine

    return engine


#: Peak bytes of one sampled cell: codes and work arrays of the samplers, the
#: decoded column (an object column holds a pointer and its value) and a copy.
_BYTES_PER_SAMPLED_CELL = 64


def _public_domains(encoder, table):
    """Number of codes of each column that the encoder's parameters make public
    (declared categories, bins, booleans; plus the missing code), else None.

    Reads parameters and dtypes only, never values.
    """
    from .preprocessing._binning import make_binners
    from .preprocessing._categories import check_categories

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
        elif name in declared:
            n = len(declared[name])
        elif pd.api.types.is_bool_dtype(table[name].dtype):
            n = 2
        else:
            n = None
        sizes.append(None if n is None else int(n) + 1)
    return sizes


class DPMarginalSynthesizer(DensityMixin, BaseEstimator):
    """Differentially private synthetic data from DP k-way marginals.

    ``fit`` releases DP marginals of the table under ``(epsilon,
    delta)``-differential privacy (privacy unit: one record; add/remove
    neighbours).  By default (``release="workload"``) it measures all 1-way
    marginals and adaptively selected 2- and 3-way marginals with Gaussian
    noise (after AIM [3]_).  With ``release="sds"`` it releases the counts of
    all attribute combinations of length ``1..reporting_length`` with
    Algorithm 1 of Gopi, Mahabadi and Yekhanin [1]_ as used by Microsoft's
    Synthetic Data Showcase (SDS) [2]_: per length k, a DP percentile bounds
    each record's contribution, Gaussian noise is added to every candidate
    combination and noisy counts below a threshold are suppressed.  The
    result, ``aggregates_``, is a :class:`DPAggregates` that can be published.
    ``sample`` then synthesizes records from the aggregates only
    (post-processing: no further privacy cost).

    Parameters
    ----------
    epsilon : float, default=4.0
        Total privacy budget of the release (record count + marginals; an
        encoder's DP binning budget is added on top, see ``privacy_spent_``).
    delta : float or None, default=None
        ``delta`` of the guarantee, in ``(0, 0.01]``.  ``None`` uses the
        fixed default ``1e-5``, chosen before seeing any data (a delta that
        depends on the data, such as SDS's ``1 / (n ln n)``, is not the delta
        that holds).  ``fit`` warns when ``delta >= 1 / n_records_``.
    reporting_length : int, default=3
        Longest combination length R (clamped to the number of columns).
    percentile : float, default=99
        Percentile Q of the per-record combination counts that bounds each
        record's contribution at every length.
    percentile_epsilon_proportion : float, default=0.01
        Share of the zCDP budget spent on the R percentile selections.
    accuracy_mode : str or sequence of float, default="auto"
        Noise proportions by length: ``"prioritize_long"`` ([1, 1/2, ..,
        1/R]), ``"prioritize_short"`` ([1/R, .., 1]), ``"balanced"`` or R
        positive numbers.  ``"auto"`` picks by ``synthesis`` at ``fit``:
        ``"prioritize_short"`` for ``"marginal_matching"``, which relies most
        on short combinations and suffers most from suppressed 1-way values
        (at epsilon 1 on the NIST benchmark it lowers the 2-way TVD from 0.14
        to 0.08), and SDS's default ``"prioritize_long"`` for
        ``"aggregate_seeded"`` (parity with pac-synth).  The sigmas used are
        in ``privacy_spent_``.
    fabrication_mode : str or dict, default="uncontrolled"
        Thresholds of lengths >= 2 (SDS): ``"uncontrolled"``,
        ``"progressive"``, ``"balanced"``, ``"minimize"``,
        ``{"fixed": {k: t}}`` or ``{"adaptive": {k: eta}}``.
    number_of_records_epsilon_proportion : float, default=0.005
        Share of ``epsilon`` spent on the Laplace record count.
    release : {"auto", "workload", "sds"}, default="auto"
        How ``fit`` spends the budget.  ``"workload"``: the workload-aware
        release of :mod:`dpsynth.release.adaptive` (DP discovery of
        undeclared values, then all 1-way marginals and adaptively selected
        2- and 3-way marginals measured with Gaussian noise, after AIM,
        McKenna et al. 2022; the budget is the exact Gaussian-DP ``mu`` of
        ``(epsilon, delta)``, Dong, Roth and Su); the release holds dense
        noisy marginals.  ``"sds"``: the SDS release of every 1..R combination
        (Gopi et al. Algorithm 1), kept for parity with pac-synth; the
        parameters ``percentile``, ``percentile_epsilon_proportion``,
        ``accuracy_mode``, ``fabrication_mode`` and
        ``number_of_records_epsilon_proportion`` apply to it only.
        ``"auto"`` picks ``"workload"`` (the more accurate at every epsilon
        on the benchmark, see the README), unless the sampler needs SDS's
        sparse counts (``synthesis="aggregate_seeded"``).
    synthesis : {"marginal_matching", "aggregate_seeded"} or Sampler, default="marginal_matching"
        How ``sample`` turns the aggregates into records (every sampler reads
        only the aggregates): a name registered in :mod:`dpsynth.sampling`,
        or a sampler object with its own options, e.g.
        ``AggregateSeededSampler(weight_selection_percentile=90)``.
        ``"aggregate_seeded"`` is SDS's sampler (for parity with pac-synth).  ``"marginal_matching"`` denoises the 2-way
        aggregates by empirical Bayes (accounting for suppressed cells), makes
        them consistent with the 1-way counts and fits a population to them
        by coordinate descent; it is far more accurate (see the README's
        benchmark).
    encoder : TableEncoder or None, default=None
        How columns become categorical codes; ``None`` means
        ``TableEncoder()``.  Declaring every column's ``categories`` makes the
        1-tuple universe public (see Notes).
    n_jobs : int or None, default=None
        Threads of ``fit``'s counting (chunks of 100,000 rows; with
        ``release="workload"``, also the candidate tables' counts and
        scores each round) and of ``sample`` for samplers that use them
        (marginal matching: one population of at most 50,000 records per
        thread).  ``None`` uses every processor this process may use (as
        scikit-learn's OpenMP-based estimators do), ``1`` one thread.  The
        release and the records do not depend on it.
    random_state : int, Generator, RandomState or None, default=None
        Seeds the noise of ``fit`` and the draws of ``sample``, through two
        independent child streams of one :class:`numpy.random.SeedSequence`
        (``sample`` never replays the noise).  ``None`` draws fresh OS
        entropy, whatever NumPy's global state.  A fixed, known seed makes
        the noise reproducible by anyone, so it is for experiments and tests
        only: **publish releases made with ``random_state=None``** (and never
        compare releases that share a seed).
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
        The released DP combination counts (the privacy boundary).
    privacy_spent_ : dpsynth.accounting.PrivacySpent
        Immutable read-only mapping: ``epsilon``, ``delta``, ``rho`` (zCDP
        of the marginals), ``epsilon_records``, ``epsilon_binning``,
        ``percentile_epsilon``, ``sigmas``, ``noise_scales``,
        ``contribution_bounds`` and ``thresholds`` (by length),
        ``conversion_delta``, ``public_universe``; ``.mechanisms`` lists
        every accounted mechanism with its share.
    n_records_ : int
        DP record count.
    reporting_length_ : int
        Effective R.
    encoder_ : TableEncoder
        The encoder fitted on the training data (private: not needed by
        ``sample``, which uses the public ``aggregates_.schema``).  Absent
        after :meth:`from_aggregates`.
    sampling_stats_ : dict
        Statistics of the last ``sample`` (``n_records``,
        ``empty_cell_share``; SDS's sampler adds its fallback shares).
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    Workload release: ``(epsilon, delta')`` is converted exactly to a
    Gaussian-DP ``mu``, written ``rho = mu**2 / 2`` (``delta' = delta/2``
    with a data-derived universe, whose discovery spends
    :func:`~dpsynth.release.adaptive.discovery_proportion` of ``rho`` and
    the other ``delta/2``; its noisy counts also measure the 1-way
    marginals); every selection and measurement is listed in
    ``privacy_spent_.mechanisms`` and they add up to ``rho``.

    SDS release, budget split (all numbers in ``privacy_spent_``): ``epsilon_records =
    epsilon * number_of_records_epsilon_proportion`` (Laplace); the rest is
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
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, accounting.MAX_DELTA, closed="right"), None],
        "reporting_length": [Interval(Integral, 1, None, closed="left")],
        "percentile": [Interval(Real, 0, 100, closed="right")],
        "percentile_epsilon_proportion": [Interval(Real, 0, 1, closed="neither")],
        "accuracy_mode": [StrOptions({"auto", "prioritize_long", "prioritize_short",
                                      "balanced"}), "array-like"],
        "fabrication_mode": [StrOptions({"uncontrolled", "progressive", "balanced",
                                         "minimize"}), dict],
        "number_of_records_epsilon_proportion": [Interval(Real, 0, 1, closed="neither")],
        "release": [StrOptions({"auto", "sds", "workload"})],
        "synthesis": [StrOptions(set(SAMPLERS)), Sampler],
        "encoder": [HasMethods(["fit_transform", "inverse_transform"]), None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
        "max_memory": [Interval(Real, 0, None, closed="neither"), None],
        "verbose": ["verbose"],
        "noise": [StrOptions({"discrete", "continuous"})],
    }

    def __init__(self, *, epsilon=4.0, delta=None, reporting_length=3, percentile=99,
                 percentile_epsilon_proportion=0.01, accuracy_mode="auto",
                 fabrication_mode="uncontrolled",
                 number_of_records_epsilon_proportion=0.005, release="auto",
                 synthesis="marginal_matching", encoder=None, n_jobs=None,
                 random_state=None, max_memory=None, verbose=0, noise="discrete"):
        self.epsilon = epsilon
        self.delta = delta
        self.reporting_length = reporting_length
        self.percentile = percentile
        self.percentile_epsilon_proportion = percentile_epsilon_proportion
        self.accuracy_mode = accuracy_mode
        self.fabrication_mode = fabrication_mode
        self.number_of_records_epsilon_proportion = number_of_records_epsilon_proportion
        self.release = release
        self.synthesis = synthesis
        self.encoder = encoder
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.max_memory = max_memory
        self.verbose = verbose
        self.noise = noise

    # ----------------------------------------------------------- params
    def _check_params(self, n_columns):
        """Validate every parameter (declaratively) and resolve the derived ones."""
        self._validate_params()
        if self.encoder is not None and not isinstance(self.encoder, TableEncoder):
            raise TypeError(
                f"encoder must be a dpsynth.preprocessing.TableEncoder or None; got "
                f"{type(self.encoder).__name__}.")
        self._check_n_jobs()
        self._resolved_release()
        R = min(int(self.reporting_length), n_columns)
        proportions = accounting.sigma_proportions(self._resolved_accuracy_mode(), R)
        rules = accounting.fabrication_thresholds(self.fabrication_mode,
                                                  int(self.reporting_length))
        rules = {k: rule for k, rule in rules.items() if k <= R}
        return float(self.epsilon), R, proportions, rules

    def _check_n_jobs(self):
        if isinstance(self.n_jobs, bool) or self.n_jobs == 0:
            raise ValueError("n_jobs must be None or a non-zero integer (-1: all processors); "
                             "got 0.")

    def _seeded_sampler(self):
        return self.synthesis == "aggregate_seeded" or type(self.synthesis).__name__ == \
            "AggregateSeededSampler"

    def _resolved_release(self):
        """``release`` with ``"auto"`` resolved: the workload-aware release, unless the
        sampler needs SDS's sparse combination counts (the aggregate-seeded one)."""
        if self.release == "auto":
            return "sds" if self._seeded_sampler() else "workload"
        if self.release == "workload" and self._seeded_sampler():
            raise ValueError("synthesis='aggregate_seeded' samples SDS's sparse combination "
                             "counts; use release='sds' with it, or "
                             "synthesis='marginal_matching' with release='workload'.")
        return self.release

    def _resolved_accuracy_mode(self):
        """``accuracy_mode`` with ``"auto"`` replaced by the synthesis method's best split."""
        if isinstance(self.accuracy_mode, str) and self.accuracy_mode == "auto":
            return "prioritize_long" if self._seeded_sampler() else "prioritize_short"
        return self.accuracy_mode

    # --------------------------------------------------------------- fit
    @staticmethod
    def _join_target(frame, y):
        """The table to release: X, with y as one more column (and y's name)."""
        if y is None:
            return frame, None
        target = y if isinstance(y, pd.Series) else pd.Series(column_or_1d(y, warn=True))
        if len(target) != len(frame):
            raise ValueError(
                f"y must be 1-D with one value per row of X ({len(frame)}); got "
                f"shape {np.shape(y)}.")
        name = target.name if isinstance(target.name, str) else "y"
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
            Its column names and dtypes are the declared (public) schema.  A
            dask DataFrame (the ``dask`` extra: dask, distributed, pyarrow) is encoded and
            counted partition by partition on its cluster (either
            release); the aggregates equal those of the same table in
            memory for the same ``random_state``.
        y : array-like of shape (n_samples,), default=None
            Modelled jointly with X; ``sample`` then returns ``(X, y)``.

        Returns
        -------
        self : DPMarginalSynthesizer
        """
        distributed = is_dask_collection(X)
        if distributed:  # the declaration only; partitions are read by the release
            if y is not None:
                raise ValueError("y is not supported with a dask DataFrame X; add the "
                                 "target to X as a column.")
            table, was_frame, target = dask_engine().check_frame(X), True, None
        else:
            frame, was_frame = check_table(X)
            table, target = self._join_target(frame, y)
        epsilon, R, proportions, rules = self._check_params(table.shape[1])
        delta = accounting.check_delta(self.delta)
        max_bytes = self._check_resources(table, R)  # public facts, before any DP step
        noise_stream, binning_stream = stream(self.random_state, FIT).spawn(2)
        rng = np.random.default_rng(noise_stream)
        encoder = clone(self.encoder) if self.encoder is not None else TableEncoder()
        if encoder.random_state is None:  # DP quantile binning: a child stream of ours
            encoder.set_params(random_state=binning_stream)
        if distributed:
            encoder, value_counts = dask_engine().fit_encoder(encoder, X)
            codes = dask_engine().DaskCodes(X, encoder, value_counts=value_counts)
        else:  # counted in row chunks on the threads n_jobs allows
            codes = InMemoryCodes(encoder.fit_transform(table), n_threads(self.n_jobs))
        schema = encoder.schema_
        schema.to_json()  # every value can be written to a release file, before DP
        if self._resolved_release() == "workload":
            self._log("releasing the DP aggregates (workload-aware)", done=0, total=1,
                      label="marginals")
            aggregates = release_adaptive(
                codes, schema, epsilon=epsilon, delta=delta, reporting_length=R, rng=rng,
                epsilon_binning=encoder.epsilon_spent_,
                delta_binning=getattr(encoder, "delta_spent_", 0.0), target=target,
                n_threads=n_threads(self.n_jobs), noise=self.noise)
            self._log(f"{len(aggregates.marginals)} noisy marginals measured", done=1,
                      total=1, label="marginals")
        else:
            aggregates = self._release_sds(codes, schema, epsilon, delta, R, proportions,
                                           rules, rng, encoder.epsilon_spent_, target,
                                           getattr(encoder, "delta_spent_", 0.0), max_bytes)
        if schema.leaks:  # PrivacyLeakWarnings of the encoder: not covered by the guarantee
            aggregates.privacy = aggregates.privacy.with_details(privacy_leak_warnings=[
                note for notes in schema.leaks.values() for note in notes])
        self.encoder_ = encoder
        self._set_release(aggregates, output_frame=was_frame)
        if delta >= 1.0 / self.n_records_:
            warnings.warn(
                f"delta={delta:g} is not below 1 / n_records_ (the DP record count): a "
                "guarantee with such a delta allows publishing a record outright; pass a "
                "smaller delta.", UserWarning, stacklevel=2)
        return self

    def _release_sds(self, codes, schema, epsilon, delta, R, proportions, rules, rng,
                     epsilon_binning, target, delta_binning=0.0, max_bytes=None):
        """The SDS release (Gopi et al. Algorithm 1 with SDS's options)."""
        blocks = as_blocks(codes)
        epsilon_records = epsilon * self.number_of_records_epsilon_proportion
        n_records = max(int(round(laplace_count(blocks.n_rows(), epsilon_records, rng,
                                                noise=self.noise))), 1)
        plan = accounting.plan_budget(
            epsilon=epsilon, delta=delta, reporting_length=R,
            percentile_epsilon_proportion=self.percentile_epsilon_proportion,
            proportions=proportions, epsilon_records=epsilon_records,
            public_universe=schema.public_universe)
        self._log("releasing the DP aggregates", done=0, total=R, label="marginals")
        stopped = []
        levels = release_marginals(
            blocks.map(lambda block: schema.ids(block).astype(np.int32)),
            schema.attribute_columns, len(schema), plan,
            percentile=self.percentile, fabrication_rules=rules,
            public_universe=schema.public_universe, rng=rng,
            on_level=lambda *level: self._report_level(*level, total=R),
            possible=schema.possible_attributes, max_bytes=max_bytes,
            on_limit=lambda *limit: stopped.append(limit), noise=self.noise)
        privacy = sds_privacy_spent(plan, levels, n_columns=len(schema),
                                    epsilon_binning=epsilon_binning,
                                    delta_binning=delta_binning, noise=self.noise)
        if stopped:
            R = self._warn_stopped(*stopped[0], R=R, max_bytes=max_bytes)
        return DPAggregates.from_release(schema, levels, R, n_records, privacy, target=target)

    def _max_bytes(self):
        return default_max_memory() if self.max_memory is None else float(self.max_memory)

    def _check_resources(self, table, R):
        """Refuse, before any DP step, a table whose public domains exceed ``max_memory``.

        Uses public facts only: the number of columns, R, and the domains the
        encoder's parameters declare (categories, bin counts, booleans).
        Returns the limit in bytes.
        """
        max_bytes = self._max_bytes()
        domains = _public_domains(self.encoder, table)
        worst = public_worst_case(domains, R)
        need = level_bytes(worst[0], 1)
        if need > max_bytes:
            raise ResourceLimitError(
                f"The declared domains have {worst[0]:.4g} values in all; counting them "
                f"needs about {format_bytes(need)}, over max_memory="
                f"{format_bytes(max_bytes)}. Declare fewer categories (bin or drop "
                "high-cardinality columns) or raise max_memory.")
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

    def _warn_stopped(self, k, n_candidates, need, *, R, max_bytes):
        """Warn that lengths >= k were not released; return the effective R."""
        warnings.warn(
            f"reporting_length reduced from {R} to {k - 1}: length {k} would have up to "
            f"{n_candidates:.4g} candidate combinations (bounded from the released "
            f"length-{k - 1} combinations; {time_class(n_candidates)} of work), about "
            f"{format_bytes(need)}, over max_memory="
            f"{format_bytes(max_bytes)}. Lower reporting_length, declare, bin or drop "
            "high-cardinality columns, raise epsilon (fewer fabricated combinations) or "
            "raise max_memory.", ResourceLimitWarning, stacklevel=3)
        self._log(f"length {k} skipped: about {format_bytes(need)} needed, over "
                  f"max_memory", done=R, total=R, label="marginals")
        return k - 1

    def _set_release(self, aggregates, *, output_frame):
        """Fitted state, all derived from the (public) aggregates."""
        self.aggregates_ = aggregates
        self.privacy_spent_ = aggregates.privacy
        self.n_records_ = aggregates.n_records
        self.reporting_length_ = aggregates.reporting_length
        names = [n for n in aggregates.column_names if n != aggregates.target]
        self.n_features_in_ = len(names)
        if output_frame:
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
            ``verbose``).

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

    # ------------------------------------------------------------ sample
    def sample(self, n_samples=None, *, random_state=None, exhaust_counts=False):
        """Synthesize records from the DP aggregates only.

        Parameters
        ----------
        n_samples : int, default=None
            Number of records; ``None`` gives ``n_records_`` (the DP count).
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
        sampler = get_sampler(self.synthesis, n_jobs=self.n_jobs)
        if exhaust_counts:
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
        codes = sampler.fit(self.aggregates_).sample(target, np.random.default_rng(sampling_stream))
        stats = getattr(sampler, "stats_", None) or {
            "n_records": codes.shape[0],
            "empty_cell_share": float(np.mean(codes < 0)) if codes.size else 0.0}
        self.sampling_stats_ = stats
        self._log(f"sampled {codes.shape[0]} records", done=1, total=1, label="sampling")
        return self._decode(codes, decoding_stream)

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
        from .metrics import marginal_tvd

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
            missing = [c for c in features if c not in frame.columns]
            extra = [c for c in frame.columns if c not in features]
            raise ValueError(f"X has different columns than at fit: missing {missing}, "
                             f"unexpected {extra}; give the columns {features}.")
        synthetic = self.sample(len(frame))
        X_syn, y_syn = synthetic if isinstance(synthetic, tuple) else (synthetic, None)
        real = frame[features].reset_index(drop=True)
        fake = pd.DataFrame(X_syn, columns=features) if not isinstance(X_syn, pd.DataFrame) \
            else X_syn.reset_index(drop=True)
        compared = list(features)
        if target is not None:  # the encoder needs every column: fill the target
            if y is not None:
                real[target] = pd.Series(column_or_1d(y, warn=True) if not isinstance(
                    y, pd.Series) else y.to_numpy())
                fake[target] = np.asarray(y_syn)
                compared.append(target)
            else:
                real[target] = fake[target] = None
        # real values outside the release count as missing
        encoder = TableEncoder.from_schema(self.aggregates_.schema, handle_unknown="missing")
        positions = [names.index(c) for c in compared]
        real_codes = pd.DataFrame(encoder.transform(real[names])[:, positions], columns=compared)
        fake_codes = pd.DataFrame(encoder.transform(fake[names])[:, positions], columns=compared)
        return 1.0 - marginal_tvd(real_codes, fake_codes, k=2 if len(compared) >= 2 else 1)

    def _decode(self, codes, seed):
        """Codes -> the declared dtypes (within-bin draws from their own stream)."""
        frame = self.aggregates_.encoder.inverse_transform(codes, random_state=seed)
        target = self._target_name
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

    def _report_level(self, k, n_candidates, bound, n_released, *, total=None):
        # |V_1| of a data-derived universe is private: named from length 2 on only
        candidates = "" if k == 1 else f"{n_candidates} candidates, "
        self._log(f"length {k}: {candidates}contribution bound {bound}, "
                  f"{n_released} released", done=k, total=total, label="marginals")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.target_tags.required = False
        return tags
