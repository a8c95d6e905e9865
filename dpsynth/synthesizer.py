"""`DPMarginalSynthesizer`: DP k-way marginals in, synthetic records out.

``fit`` releases differentially private k-tuple counts with the DP-marginals
algorithm (Gopi, Mahabadi, Yekhanin; as in Microsoft's Synthetic Data
Showcase).  ``sample`` builds synthetic records from those counts alone.
"""

import math
import numbers

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, DensityMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, column_or_1d

from . import accounting
from ._marginals import release_marginals
from ._aggregate_seeded import AggregateSeededSampler
from ._marginal_matching import MarginalMatcher
from .aggregates import DPAggregates
from .mechanisms import laplace_count
from .preprocessing import TableEncoder
from .utils._validation import check_table

__all__ = ["DPMarginalSynthesizer"]


def _generator(random_state):
    """numpy Generator derived from a scikit-learn ``random_state``."""
    seeds = check_random_state(random_state).randint(0, 2**32, size=4, dtype=np.uint64)
    return np.random.default_rng(np.random.SeedSequence([int(s) for s in seeds]))


def _check_real(name, value, low, high, *, low_open=True, high_open=True):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number; got {value!r}.")
    too_low = value <= low if low_open else value < low
    too_high = value >= high if high_open else value > high
    if too_low or too_high:
        lo = "(" if low_open else "["
        hi = ")" if high_open else "]"
        raise ValueError(f"{name} must be in {lo}{low}, {high}{hi}; got {value!r}.")
    return float(value)


class DPMarginalSynthesizer(DensityMixin, BaseEstimator):
    """Differentially private synthetic data from DP k-way marginals.

    ``fit`` releases the counts of all attribute combinations of length
    ``1..reporting_length`` under ``(epsilon, delta)``-differential privacy
    (privacy unit: one record; add/remove neighbours) with Algorithm 1 of
    Gopi, Mahabadi and Yekhanin [1]_ as used by Microsoft's Synthetic Data
    Showcase (SDS) [2]_: per length k, a DP percentile bounds each record's
    contribution, Gaussian noise is added to every candidate combination and
    noisy counts below a threshold are suppressed.  The result,
    ``aggregates_``, is a :class:`DPAggregates` that can be published.
    ``sample`` then synthesizes records from the aggregates only
    (post-processing: no further privacy cost).

    Parameters
    ----------
    epsilon : float, default=4.0
        Total privacy budget of the release (record count + marginals; an
        encoder's DP binning budget is added on top, see ``privacy_spent_``).
    delta : float or None, default=None
        ``None`` uses ``1 / (n ln n)`` with ``n`` the DP record count.
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
    weight_selection_percentile : float, default=95
        Percentile of sub-combination counts used as a sampling weight once a
        record is longer than R (SDS).
    use_synthetic_counts : bool, default=False
        Subtract already-synthesized counts from sampling weights (SDS).
    synthesis : {"marginal_matching", "aggregate_seeded"}, default="marginal_matching"
        How ``sample`` turns the aggregates into records (both read only the
        aggregates).  ``"aggregate_seeded"`` is SDS's sampler (for parity
        with pac-synth).  ``"marginal_matching"`` denoises the 2-way
        aggregates by empirical Bayes (accounting for suppressed cells), makes
        them consistent with the 1-way counts and fits a population to them
        by coordinate descent; it is far more accurate (see the README's
        benchmark).
    encoder : TableEncoder or None, default=None
        How columns become categorical codes; ``None`` means
        ``TableEncoder()``.  Declaring every column's ``categories`` makes the
        1-tuple universe public (see Notes).
    n_jobs : int or None, default=None
        Threads of ``sample`` with ``synthesis="marginal_matching"`` (one
        population of at most 50,000 records per thread).  ``None`` means 1
        unless in a :func:`joblib.parallel_config` context, ``-1`` all
        processors.  The records do not depend on it.
    random_state : int, RandomState instance or None, default=None
        Seeds the noise of ``fit`` and the draws of ``sample``.  A fixed,
        known seed makes the noise reproducible by anyone, so it is for
        experiments and tests only: **publish releases made with
        ``random_state=None``** (and never compare releases that share a seed).
    verbose : int, default=0
        Print one line per released combination length and per sampling run.

    Attributes
    ----------
    aggregates_ : DPAggregates
        The released DP combination counts (the privacy boundary).
    privacy_spent_ : dict
        ``epsilon``, ``delta``, ``rho`` (zCDP of the marginals),
        ``epsilon_records``, ``epsilon_binning``, ``percentile_epsilon``,
        ``sigmas``, ``noise_scales``, ``contribution_bounds`` and
        ``thresholds`` (by length), ``conversion_delta``, ``public_universe``.
    n_records_ : int
        DP record count.
    reporting_length_ : int
        Effective R.
    encoder_ : TableEncoder
        The encoder fitted on the training data (private: not needed by
        ``sample``, which uses ``aggregates_.encoder``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    Budget split (all numbers in ``privacy_spent_``): ``epsilon_records =
    epsilon * number_of_records_epsilon_proportion`` (Laplace); the rest is
    converted to zCDP ``rho = (sqrt(eps_M + L) - sqrt(L))**2`` with
    ``L = ln(1/delta')``, ``delta' = delta/2`` (the other half pays for the
    data-derived 1-tuple universe through the threshold ``rho_1``).  The
    papers print this budget without the square, which would overstate it.
    If every column's categories are declared, the universe is public:
    ``delta' = delta`` and level 1 uses the fabrication rule of length 2.

    References
    ----------
    .. [1] S. Gopi, S. Mahabadi, S. Yekhanin. "Differentially Private
       Marginals." (Microsoft Research note).
    .. [2] Microsoft, "Synthetic Data Showcase: Differentially private
       aggregation and synthesis" (design document).

    Examples
    --------
    >>> import pandas as pd
    >>> from dpsynth import DPMarginalSynthesizer
    >>> X = pd.DataFrame({"a": ["x", "y"] * 200, "b": ["u", "u", "v", "v"] * 100})
    >>> synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(X)
    >>> synth.sample(5).shape
    (5, 2)
    """

    def __init__(self, *, epsilon=4.0, delta=None, reporting_length=3, percentile=99,
                 percentile_epsilon_proportion=0.01, accuracy_mode="auto",
                 fabrication_mode="uncontrolled",
                 number_of_records_epsilon_proportion=0.005,
                 weight_selection_percentile=95, use_synthetic_counts=False,
                 synthesis="marginal_matching", encoder=None, n_jobs=None,
                 random_state=None, verbose=0):
        self.epsilon = epsilon
        self.delta = delta
        self.reporting_length = reporting_length
        self.percentile = percentile
        self.percentile_epsilon_proportion = percentile_epsilon_proportion
        self.accuracy_mode = accuracy_mode
        self.fabrication_mode = fabrication_mode
        self.number_of_records_epsilon_proportion = number_of_records_epsilon_proportion
        self.weight_selection_percentile = weight_selection_percentile
        self.use_synthetic_counts = use_synthetic_counts
        self.synthesis = synthesis
        self.encoder = encoder
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ----------------------------------------------------------- params
    def _check_params(self, n_columns):
        epsilon = _check_real("epsilon", self.epsilon, 0, math.inf)
        if self.delta is not None:
            _check_real("delta", self.delta, 0, 1)
        R = self.reporting_length
        if isinstance(R, bool) or not isinstance(R, numbers.Integral) or R < 1:
            raise ValueError(f"reporting_length must be an integer >= 1; got {R!r}.")
        _check_real("percentile", self.percentile, 0, 100, high_open=False)
        _check_real("percentile_epsilon_proportion", self.percentile_epsilon_proportion, 0, 1)
        _check_real("number_of_records_epsilon_proportion",
                    self.number_of_records_epsilon_proportion, 0, 1)
        _check_real("weight_selection_percentile", self.weight_selection_percentile, 0, 100,
                    low_open=False, high_open=False)
        if not isinstance(self.use_synthetic_counts, (bool, np.bool_)):
            raise ValueError(f"use_synthetic_counts must be a bool; got {self.use_synthetic_counts!r}.")
        self._check_synthesis()
        if self.encoder is not None and not isinstance(self.encoder, TableEncoder):
            raise TypeError(
                f"encoder must be a dpsynth.preprocessing.TableEncoder or None; got "
                f"{type(self.encoder).__name__}.")
        R = min(int(R), n_columns)
        proportions = accounting.sigma_proportions(self._resolved_accuracy_mode(), R)
        rules = accounting.fabrication_thresholds(self.fabrication_mode, R)
        return epsilon, R, proportions, rules

    def _resolved_accuracy_mode(self):
        """``accuracy_mode`` with ``"auto"`` replaced by the synthesis method's best split."""
        if isinstance(self.accuracy_mode, str) and self.accuracy_mode == "auto":
            return ("prioritize_short" if self.synthesis == "marginal_matching"
                    else "prioritize_long")
        return self.accuracy_mode

    def _check_synthesis(self):
        if self.synthesis not in ("marginal_matching", "aggregate_seeded"):
            raise ValueError("synthesis must be 'marginal_matching' or 'aggregate_seeded'; "
                             f"got {self.synthesis!r}.")

    # --------------------------------------------------------------- fit
    def _join_target(self, frame, y):
        if y is None:
            self._target_name = None
            return frame
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
        self._target_name = name
        return frame

    def fit(self, X, y=None):
        """Release the DP aggregates of X (and y, as one more column).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), default=None
            Modelled jointly with X; ``sample`` then returns ``(X, y)``.

        Returns
        -------
        self : DPMarginalSynthesizer
        """
        frame, was_frame = check_table(X)
        self.n_features_in_ = frame.shape[1]
        if was_frame:
            self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self._output_frame = was_frame
        table = self._join_target(frame, y)
        epsilon, R, proportions, rules = self._check_params(table.shape[1])
        rng = _generator(self.random_state)
        encoder = clone(self.encoder) if self.encoder is not None else TableEncoder()
        if encoder.random_state is None:  # DP quantile binning draws from our stream
            encoder.set_params(random_state=int(rng.integers(0, 2**31 - 1)))
        codes = encoder.fit(table).transform(table)
        self.encoder_ = encoder

        epsilon_records = epsilon * self.number_of_records_epsilon_proportion
        noisy_n = laplace_count(codes.shape[0], epsilon_records, rng)
        self.n_records_ = max(int(round(noisy_n)), 1)
        delta = accounting.default_delta(noisy_n) if self.delta is None else float(self.delta)
        public_universe = all(c["public"] for c in encoder.columns_)
        plan = accounting.plan_budget(
            epsilon=epsilon, delta=delta, reporting_length=R,
            percentile_epsilon_proportion=self.percentile_epsilon_proportion,
            proportions=proportions, epsilon_records=epsilon_records,
            public_universe=public_universe)

        ids = np.where(codes >= 0, codes + encoder.offsets_[:-1].astype(np.int32), -1)
        levels = release_marginals(
            np.ascontiguousarray(ids, dtype=np.int32), encoder.attribute_columns_,
            table.shape[1], plan, percentile=self.percentile, fabrication_rules=rules,
            public_universe=public_universe, rng=rng, on_level=self._report_level,
            possible=encoder.possible_attributes_)
        self.reporting_length_ = R
        self.privacy_spent_ = self._privacy_report(plan, levels, encoder)
        self.aggregates_ = DPAggregates.from_release(
            encoder, levels, R, self.n_records_, self.privacy_spent_,
            target=self._target_name)
        return self

    @classmethod
    def from_aggregates(cls, aggregates, **params):
        """A fitted synthesizer that samples from released aggregates alone.

        Parameters
        ----------
        aggregates : DPAggregates
            E.g. ``DPAggregates.load(path)``.
        **params
            Sampling parameters (``weight_selection_percentile``,
            ``use_synthetic_counts``, ``random_state``, ...).

        Returns
        -------
        DPMarginalSynthesizer
            ``sample`` works; there is no ``encoder_`` (no private state).
        """
        if not isinstance(aggregates, DPAggregates):
            raise TypeError(f"aggregates must be a DPAggregates; got {type(aggregates).__name__}.")
        privacy = aggregates.privacy
        synth = cls(epsilon=privacy["epsilon"], reporting_length=aggregates.reporting_length,
                    **params)
        synth.aggregates_ = aggregates
        synth.n_records_ = aggregates.n_records
        synth.privacy_spent_ = privacy
        synth.reporting_length_ = aggregates.reporting_length
        synth._target_name = aggregates.target
        names = [n for n in aggregates.column_names if n != aggregates.target]
        synth.n_features_in_ = len(names)
        synth.feature_names_in_ = np.asarray(names, dtype=object)
        synth._output_frame = True
        return synth

    # ------------------------------------------------------------ sample
    def sample(self, n_samples=None, *, random_state=None, exhaust_counts=False):
        """Synthesize records from the DP aggregates only.

        Parameters
        ----------
        n_samples : int, default=None
            Number of records; ``None`` gives ``n_records_`` (the DP count).
        random_state : int, RandomState instance or None, default=None
            ``None`` uses the estimator's ``random_state`` (so an int seed
            gives the same rows on every call); pass a seed for other draws.
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
        self._check_synthesis()
        if exhaust_counts:
            if self.synthesis != "aggregate_seeded":
                raise ValueError("exhaust_counts=True is SDS's no-target mode; it needs "
                                 "synthesis='aggregate_seeded'.")
            if n_samples is not None:
                raise ValueError("exhaust_counts=True samples until the 1-counts are used "
                                 "up; leave n_samples=None.")
            target = None
        elif n_samples is None:
            target = self.n_records_
        else:
            if (isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral)
                    or n_samples < 0):
                raise ValueError(f"n_samples must be a non-negative integer; got {n_samples!r}.")
            target = int(n_samples)
        _check_real("weight_selection_percentile", self.weight_selection_percentile, 0, 100,
                    low_open=False, high_open=False)
        rng = _generator(self.random_state if random_state is None else random_state)
        if self.synthesis == "marginal_matching":
            n_jobs = self.n_jobs
            if n_jobs is not None and (isinstance(n_jobs, bool)
                                       or not isinstance(n_jobs, numbers.Integral)
                                       or n_jobs == 0):
                raise ValueError(f"n_jobs must be None or a non-zero integer (-1: all "
                                 f"processors); got {n_jobs!r}.")
            codes = MarginalMatcher(self.aggregates_, n_jobs=n_jobs).sample(target, rng)
            stats = {"n_records": codes.shape[0],
                     "empty_cell_share": float(np.mean(codes < 0)) if codes.size else 0.0}
            self._log(f"sampled {codes.shape[0]} records by marginal matching")
        else:
            sampler = AggregateSeededSampler(self.aggregates_,
                                             self.weight_selection_percentile,
                                             bool(self.use_synthetic_counts))
            complete = self.aggregates_.encoder.missing == "category"
            ids, stats = sampler.sample(target, rng, complete=complete)
            codes = sampler.to_codes(ids[rng.permutation(ids.shape[0])])
            self._log(f"sampled {stats['n_records']} records ({stats['fallback_record_share']:.1%} "
                      "completed by the fallback rule)")
        self.sampling_stats_ = stats
        return self._decode(codes, rng)

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
        both tables with the public encoder, so binned numeric columns are
        compared bin by bin.  ``y`` joins the comparison when the synthesizer
        was fitted with one.  Higher is better; usable by ``GridSearchCV``.
        The score is computed on real data and is not a DP release.
        """
        from .metrics import marginal_tvd

        check_is_fitted(self, "aggregates_")
        frame, _ = check_table(X)
        target = getattr(self, "_target_name", None)
        names = self.aggregates_.column_names
        features = [c for c in names if c != target]
        if frame.shape[1] != len(features):
            raise ValueError(f"X has {frame.shape[1]} features, but {type(self).__name__} "
                             f"is expecting {len(features)} features as input.")
        if not self._output_frame:
            frame.columns = features
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
        encoder = TableEncoder.from_schema(self.aggregates_.schema)
        encoder.handle_unknown = "missing"  # real values outside the release
        positions = [names.index(c) for c in compared]
        real_codes = pd.DataFrame(encoder.transform(real[names])[:, positions], columns=compared)
        fake_codes = pd.DataFrame(encoder.transform(fake[names])[:, positions], columns=compared)
        return 1.0 - marginal_tvd(real_codes, fake_codes, k=2 if len(compared) >= 2 else 1)

    def _decode(self, codes, rng):
        seed = int(rng.integers(0, 2**31 - 1))  # within-bin draws of numeric columns
        frame = self.aggregates_.encoder.inverse_transform(codes, random_state=seed)
        target = getattr(self, "_target_name", None)
        if target is None:
            return frame if self._output_frame else frame.to_numpy()
        y = frame.pop(target)
        if self._output_frame:
            return frame, y
        return frame.to_numpy(), y.to_numpy()

    def _log(self, message):
        if self.verbose:
            print(f"[{type(self).__name__}] {message}", flush=True)

    def _report_level(self, k, n_candidates, bound, n_released):
        candidates = "" if k == 1 else f"{n_candidates} candidates, "
        self._log(f"length {k}: {candidates}contribution bound {bound}, "
                  f"{n_released} released")

    @staticmethod
    def _privacy_report(plan, levels, encoder):
        epsilon_binning = float(getattr(encoder, "epsilon_spent_", 0.0))
        by_length = {level.length: level for level in levels}
        lengths = range(1, plan.reporting_length + 1)
        return {
            "epsilon": plan.epsilon + epsilon_binning,
            "delta": plan.delta,
            "epsilon_marginals": plan.epsilon_marginals,
            "epsilon_records": plan.epsilon_records,
            "epsilon_binning": epsilon_binning,
            "rho": plan.rho,
            "conversion_delta": plan.conversion_delta,
            "public_universe": plan.public_universe,
            "percentile_epsilon": plan.percentile_epsilon,
            "sigmas": {k: float(plan.sigmas[k - 1]) for k in lengths},
            "contribution_bounds": {k: int(by_length[k].contribution_bound)
                                    for k in lengths if k in by_length},
            "noise_scales": {k: float(by_length[k].noise_scale)
                             for k in lengths if k in by_length},
            "thresholds": {k: float(by_length[k].threshold)
                           for k in lengths if k in by_length},
            # |V_1| of a data-derived universe is private (the number of
            # distinct observed values); longer lengths derive from releases
            "n_candidates": {k: int(by_length[k].n_candidates)
                             for k in lengths if k in by_length
                             and (k > 1 or plan.public_universe)},
        }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.target_tags.required = False
        return tags
