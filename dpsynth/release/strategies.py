"""The release strategies of :class:`~dpsynth.DPMarginalSynthesizer`, as objects.

- :class:`WorkloadRelease` (``release="workload"``, what ``"auto"`` picks):
  DP discovery of undeclared values, then all 1-way marginals and
  adaptively selected 2- and 3-way marginals measured with Gaussian noise,
  after AIM (:func:`~dpsynth.release.adaptive.release_adaptive`).
- :class:`SDSRelease` (``release="sds"``): the counts of every combination of
  up to ``reporting_length`` values, Algorithm 1 of Gopi, Mahabadi and
  Yekhanin with the options of Microsoft's Synthetic Data Showcase
  (:func:`~dpsynth.release.sds.release_marginals`), kept for parity with
  pac-synth.
"""

from numbers import Integral, Real
import warnings

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..accounting import gdp_mu, zcdp_rho, zcdp_rho_tight
from ..aggregates import DPAggregates
from ..engines.blocks import as_blocks
from ..exceptions import ResourceLimitError, ResourceLimitWarning
from ..mechanisms import laplace_count
from ..utils._resources import basis_bytes, format_bytes, time_class
from .workload_release import release_adaptive
from .base import Release
from .sds import release_marginals, sds_privacy_spent
from .sds_budget import fabrication_thresholds, plan_budget, sigma_proportions

__all__ = ["WorkloadRelease", "SDSRelease"]


class WorkloadRelease(Release):
    """The workload-aware release: 1-way and adaptively selected 2- and 3-way marginals.

    ``(epsilon, delta)`` becomes a Gaussian-DP budget ``mu`` (exact
    conversion of Dong, Roth and Su); the values of undeclared columns are
    discovered under DP (a share of the budget that falls with ``epsilon``,
    :func:`~dpsynth.release.adaptive.discovery_proportion`); then every
    1-way marginal is measured with Gaussian noise and, round after round, a
    2- or 3-way marginal is selected with the exponential mechanism (scored
    on a population fitted to the measurements so far) and measured, after
    AIM (McKenna et al. 2022), until the budget is spent.  The release holds
    dense noisy marginals (:func:`~dpsynth.release.adaptive.release_adaptive`
    and :func:`~dpsynth.release.workload.release_workload` give the details).
    The defaults are the ones chosen on the benchmarks (see
    ``benchmarks/LOG.md``).

    Parameters
    ----------
    rounds_factor : float, default=16
        ``T = rounds_factor * d`` nominal rounds (``d`` columns) set the
        initial per-round budget (AIM uses 16), lowered on small tables
        (``max_relative_noise``).
    alpha : float, default=0.9
        Share of each round's budget spent on measurement, the rest on
        selection; in ``(0, 1)``.
    max_cells : int or None, default=None
        Largest candidate table, in cells (a public limit); ``None`` means
        ``10**5``.
    population_size : int or None, default=None
        Records of the population the candidates are scored on; ``None``
        means the estimated number of records, at most 8,000.
    full_sweep_every : int, default=5
        A full descent sweep of the scoring population every that many
        rounds (otherwise only the new marginal's columns are swept).
    initial_sweeps : int, default=2
        Sweeps of the population's first fit to the 1-way measurements.
    max_rounds : int or None, default=None
        Cap on the number of rounds (the last one spends the rest of the
        budget); ``None`` means ``4 T``.
    fit_targets : {"measurements", "consistent"}, default="measurements"
        What the scoring population is fitted to each round: the noisy
        measurements weighted by their precision, or the marginals made
        consistent by generalised least squares.
    max_relative_noise : float or None, default=0.03
        Largest noise standard deviation of a round's measurement, as a
        share of the records estimated from the 1-way measurements: fewer,
        more precise rounds on small tables.  ``None`` keeps ``T`` whatever
        the table's size.
    accounting : {"gdp", "zcdp"}, default="gdp"
        ``"gdp"``: the budget is the exact Gaussian-DP ``mu`` of ``(epsilon,
        delta)`` and selections are charged their GDP ``mu``; ``"zcdp"``:
        the budget is the zCDP ``rho`` of the Canonne-Kamath-Steinke
        conversion and selections are charged their zCDP.
    measurement : {"residuals", "marginals"}, default="residuals"
        What a round measures: the selected marginal's residuals (its parts
        orthogonal to every sub-marginal, the budget put where the marginal
        is least known) or the marginal itself, every cell with the same
        noise.
    one_way_rounds : float or None, default=384
        The 1-way marginals are measured at the noise of at most that many
        nominal rounds (or ``4 d``, whichever is larger; never more than
        ``T``): on a wide table, where AIM's ``T = 16 d`` leaves the 1-way
        marginals of the columns no round selects at a noise growing with
        ``d``, they take more than ``1 / rounds_factor`` of the budget (at
        most a quarter).  ``None`` measures them at ``T``'s noise.
    target_weight : int, default=5
        When ``fit`` is given ``y`` (a model's target, a public declaration,
        as :class:`~dpsynth.TrainOnSynthetic` gives it), the 2- and 3-way
        candidates holding the target weigh this many times their workload
        weight in the selection: they are measured first, so that a model of
        the target trained on the synthetic table learns the interactions it
        needs (a few features that decide a rare class are in no marginal of
        the plain workload), at some cost to the other marginals.  ``1`` is
        the plain workload; without ``y`` it plays no part.

    Examples
    --------
    >>> from dpsynth import DPMarginalSynthesizer
    >>> from dpsynth.release import WorkloadRelease
    >>> synth = DPMarginalSynthesizer(release=WorkloadRelease(max_cells=10_000))
    """

    _parameter_constraints = {
        "rounds_factor": [Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "max_cells": [Interval(Integral, 1, None, closed="left"), None],
        "population_size": [Interval(Integral, 1, None, closed="left"), None],
        "full_sweep_every": [Interval(Integral, 1, None, closed="left")],
        "initial_sweeps": [Interval(Integral, 0, None, closed="left")],
        "max_rounds": [Interval(Integral, 1, None, closed="left"), None],
        "fit_targets": [StrOptions({"measurements", "consistent"})],
        "max_relative_noise": [Interval(Real, 0, None, closed="neither"), None],
        "accounting": [StrOptions({"gdp", "zcdp"})],
        "measurement": [StrOptions({"residuals", "marginals"})],
        "one_way_rounds": [Interval(Real, 0, None, closed="neither"), None],
        "target_weight": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, *, rounds_factor=16, alpha=0.9, max_cells=None, population_size=None,
                 full_sweep_every=5, initial_sweeps=2, max_rounds=None,
                 fit_targets="measurements", max_relative_noise=0.03, accounting="gdp",
                 measurement="residuals", one_way_rounds=384, target_weight=5):
        self.rounds_factor = rounds_factor
        self.alpha = alpha
        self.max_cells = max_cells
        self.population_size = population_size
        self.full_sweep_every = full_sweep_every
        self.initial_sweeps = initial_sweeps
        self.max_rounds = max_rounds
        self.fit_targets = fit_targets
        self.max_relative_noise = max_relative_noise
        self.accounting = accounting
        self.measurement = measurement
        self.one_way_rounds = one_way_rounds
        self.target_weight = target_weight

    def budget_rho(self, epsilon, delta):
        """``mu**2 / 2`` of the exact Gaussian-DP ``mu`` (``accounting="gdp"``), else the
        Canonne-Kamath-Steinke zCDP ``rho``: the budget the release itself converts."""
        if self.accounting == "gdp":
            return gdp_mu(epsilon, delta) ** 2 / 2.0
        return zcdp_rho_tight(epsilon, delta)

    def check_resources(self, columns, max_bytes):
        """Every column's marginal is measured in a dense ``n x (n - 1)`` contrast basis:
        refuse a column whose public codes make it larger than ``max_bytes``."""
        for name, size, source in columns:
            need = basis_bytes(size) if size else 0.0
            if need > max_bytes:
                fewer = ("a smaller n_bins" if source.startswith("n_bins")
                         else "fewer bins" if "bin" in source else "fewer categories")
                raise ResourceLimitError(
                    f"Column {name!r} has {size - 1} public codes ({source}); the "
                    "workload release measures it in a dense basis of "
                    f"{size} x {size - 1} numbers, about {format_bytes(need)}, over "
                    f"max_memory={format_bytes(max_bytes)}. Give it {fewer} (a few "
                    "hundred at most: its size also costs time growing with its "
                    "cube), or raise max_memory.")

    def release(self, codes, schema, *, epsilon, delta, reporting_length, rng, target=None,
                epsilon_binning=0.0, delta_binning=0.0, encoder_spends=(), sampler=None,
                n_threads=1, noise="discrete", max_bytes=None, log=None):
        log = self._logger(log)
        log("releasing the DP aggregates (workload-aware)", done=0, total=1, label="marginals")
        options = self.get_params()
        aggregates = release_adaptive(
            codes, schema, epsilon=epsilon, delta=delta,
            reporting_length=min(int(reporting_length), len(schema)),
            rng=rng, epsilon_binning=epsilon_binning, delta_binning=delta_binning,
            target=target, encoder_spends=encoder_spends, n_threads=n_threads, noise=noise,
            **options)
        log(f"{len(aggregates.marginals)} noisy marginals measured", done=1, total=1,
            label="marginals")
        return aggregates


class SDSRelease(Release):
    """The SDS release: DP counts of every combination of up to ``reporting_length`` values.

    Algorithm 1 of Gopi, Mahabadi and Yekhanin ("Differentially Private
    Marginals") as used by Microsoft's Synthetic Data Showcase (SDS): a
    Laplace record count, then per length ``k``, a DP percentile bounds each
    record's contribution, Gaussian noise is added to every candidate
    combination and noisy counts below a threshold are suppressed; the 1-way
    threshold makes the data-derived value universe cost ``delta / 2``.  The
    budget split is :func:`~dpsynth.release.sds_budget.plan_budget` (all its
    numbers are in ``privacy_spent_``).  Kept for parity with pac-synth; its
    sparse counts are what SDS's aggregate-seeded sampler reads.

    Parameters
    ----------
    percentile : float, default=99
        Percentile Q of the per-record combination counts that bounds each
        record's contribution at every length, in ``(0, 100]``.
    percentile_epsilon_proportion : float, default=0.01
        Share of the zCDP budget spent on the R percentile selections, in
        ``(0, 1)``.
    accuracy_mode : str or sequence of float, default="auto"
        Noise proportions by length: ``"prioritize_long"`` ([1, 1/2, ..,
        1/R]), ``"prioritize_short"`` ([1/R, .., 1]), ``"balanced"`` or R
        positive numbers.  ``"auto"`` follows the sampler: SDS's default
        ``"prioritize_long"`` for the aggregate-seeded sampler (parity with
        pac-synth), ``"prioritize_short"`` for the others, which rely most
        on short combinations and suffer most from suppressed 1-way values
        (chosen on the benchmarks, see ``benchmarks/LOG.md``).  The sigmas
        used are in ``privacy_spent_``.
    fabrication_mode : str or dict, default="uncontrolled"
        Thresholds of lengths >= 2 (SDS): ``"uncontrolled"``,
        ``"progressive"``, ``"balanced"``, ``"minimize"``,
        ``{"fixed": {k: t}}`` or ``{"adaptive": {k: eta}}``.
    number_of_records_epsilon_proportion : float, default=0.005
        Share of ``epsilon`` spent on the Laplace record count, in ``(0, 1)``.

    Examples
    --------
    >>> from dpsynth import DPMarginalSynthesizer
    >>> from dpsynth.release import SDSRelease
    >>> synth = DPMarginalSynthesizer(release=SDSRelease(percentile=95,
    ...                                                  fabrication_mode="progressive"))
    """

    sparse_counts = True

    _parameter_constraints = {
        "percentile": [Interval(Real, 0, 100, closed="right")],
        "percentile_epsilon_proportion": [Interval(Real, 0, 1, closed="neither")],
        "accuracy_mode": [StrOptions({"auto", "prioritize_long", "prioritize_short",
                                      "balanced"}), "array-like"],
        "fabrication_mode": [StrOptions({"uncontrolled", "progressive", "balanced",
                                         "minimize"}), dict],
        "number_of_records_epsilon_proportion": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, *, percentile=99, percentile_epsilon_proportion=0.01,
                 accuracy_mode="auto", fabrication_mode="uncontrolled",
                 number_of_records_epsilon_proportion=0.005):
        self.percentile = percentile
        self.percentile_epsilon_proportion = percentile_epsilon_proportion
        self.accuracy_mode = accuracy_mode
        self.fabrication_mode = fabrication_mode
        self.number_of_records_epsilon_proportion = number_of_records_epsilon_proportion

    def validate(self, reporting_length, n_columns=None):
        """Check the parameters, the noise proportions (one per length released) and
        the fabrication rules (which may name any length up to ``reporting_length``)."""
        self._validate_params()
        R = int(reporting_length) if n_columns is None else min(int(reporting_length),
                                                                 int(n_columns))
        sigma_proportions(self._accuracy_mode(None), R)
        fabrication_thresholds(self.fabrication_mode, int(reporting_length))
        return self

    def _accuracy_mode(self, sampler):
        """``accuracy_mode`` with ``"auto"`` resolved by the sampler that reads the release."""
        if isinstance(self.accuracy_mode, str) and self.accuracy_mode == "auto":
            seeded = getattr(sampler, "needs_sparse_counts", False)
            return "prioritize_long" if seeded else "prioritize_short"
        return self.accuracy_mode

    def _fabrication_rules(self, reporting_length, released_length):
        """The threshold rules of lengths ``2..released_length``, as defined for
        ``reporting_length`` (the length asked for, which sets the progressive mode's
        steps and the lengths a rule may name)."""
        rules = fabrication_thresholds(self.fabrication_mode, reporting_length)
        return {k: rule for k, rule in rules.items() if k <= released_length}

    def budget_rho(self, epsilon, delta):
        """The Bun-Steinke zCDP ``rho`` of the marginals' share of ``epsilon`` (the rest
        pays for the record count)."""
        return zcdp_rho(epsilon * (1.0 - self.number_of_records_epsilon_proportion), delta)

    def release(self, codes, schema, *, epsilon, delta, reporting_length, rng, target=None,
                epsilon_binning=0.0, delta_binning=0.0, encoder_spends=(), sampler=None,
                n_threads=1, noise="discrete", max_bytes=None, log=None):
        log = self._logger(log)
        R = min(int(reporting_length), len(schema))
        proportions = sigma_proportions(self._accuracy_mode(sampler), R)
        rules = self._fabrication_rules(int(reporting_length), R)
        blocks = as_blocks(codes)
        epsilon_records = epsilon * self.number_of_records_epsilon_proportion
        n_records = max(int(round(laplace_count(blocks.n_rows(), epsilon_records, rng,
                                                noise=noise))), 1)
        plan = plan_budget(
            epsilon=epsilon, delta=delta, reporting_length=R,
            percentile_epsilon_proportion=self.percentile_epsilon_proportion,
            proportions=proportions, epsilon_records=epsilon_records,
            public_universe=schema.public_universe,
            rho_reserved=sum(s.rho for s in encoder_spends))
        log("releasing the DP aggregates", done=0, total=R, label="marginals")

        def on_level(k, n_candidates, bound, n_released):
            # |V_1| of a data-derived universe is private: named from length 2 on only
            candidates = "" if k == 1 else f"{n_candidates} candidates, "
            log(f"length {k}: {candidates}contribution bound {bound}, "
                f"{n_released} released", done=k, total=R, label="marginals")

        stopped = []
        levels = release_marginals(
            blocks.map(lambda block: schema.ids(block).astype(np.int32)),
            schema.attribute_columns, len(schema), plan,
            percentile=self.percentile, fabrication_rules=rules,
            public_universe=schema.public_universe, rng=rng, on_level=on_level,
            possible=schema.possible_attributes, max_bytes=max_bytes,
            on_limit=lambda *limit: stopped.append(limit), noise=noise)
        privacy = sds_privacy_spent(plan, levels, n_columns=len(schema),
                                    epsilon_binning=epsilon_binning,
                                    delta_binning=delta_binning,
                                    encoder_spends=encoder_spends, noise=noise)
        if stopped:
            R = _warn_stopped(*stopped[0], R=R, max_bytes=max_bytes, log=log)
        return DPAggregates.from_release(schema, levels, R, n_records, privacy, target=target)


def _warn_stopped(k, n_candidates, need, *, R, max_bytes, log):
    """Warn that lengths >= k were not released; return the effective R."""
    warnings.warn(
        f"reporting_length reduced from {R} to {k - 1}: length {k} would have up to "
        f"{n_candidates:.4g} candidate combinations (bounded from the released "
        f"length-{k - 1} combinations; {time_class(n_candidates)} of work), about "
        f"{format_bytes(need)}, over max_memory="
        f"{format_bytes(max_bytes)}. Lower reporting_length, declare, bin or drop "
        "high-cardinality columns, raise epsilon (fewer fabricated combinations) or "
        "raise max_memory.", ResourceLimitWarning, stacklevel=3)
    log(f"length {k} skipped: about {format_bytes(need)} needed, over "
        f"max_memory", done=R, total=R, label="marginals")
    return k - 1
