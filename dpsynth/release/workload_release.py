"""The workload-aware release of :class:`~dpsynth.DPMarginalSynthesizer` (``release="workload"``).

From a private table to :class:`~dpsynth.DPAggregates` holding dense noisy
marginals, every step accounted in zero-concentrated DP (zCDP):

1. **Budget.**  ``(epsilon, delta)`` becomes a Gaussian-DP budget ``mu``
   by the exact conversion of Dong, Roth and Su (2022)
   (:func:`~dpsynth.accounting.gdp_mu`), written ``rho = mu**2 / 2``
   (the release is then also rho-zCDP).  Every step below is a Gaussian
   mechanism (exactly ``1/sigma``-GDP) or an exponential mechanism (charged
   its GDP ``mu``, :func:`~dpsynth.accounting.bounded_range_mu`), and
   GDP composes adaptively (Smith & Thakurta 2022).  ``accounting="zcdp"``
   accounts in zCDP instead, converted by the bound of Canonne,
   Kamath and Steinke (2020) (:func:`~dpsynth.accounting.zcdp_rho_tight`),
   valid for any zCDP mechanism but looser for Gaussian ones (at epsilon 1
   and delta 1e-5, GDP allows 1.16-1.22x the ``rho``).  With a
   data-derived value universe, ``delta / 2`` pays for the DP set union of
   step 2 and ``delta / 2`` for the conversion.
2. **Discovery** (only for columns whose values are not declared; a share
   :func:`discovery_proportion` of ``rho`` times the share of undeclared
   columns in the schema): the
   1-way counts of the observed values get Gaussian noise and only values
   above the threshold ``rho_1`` of the DP set union are published (Gopi,
   Mahabadi and Yekhanin, Algorithm 1, level 1; each record has exactly one
   value per column, so its contribution bound is the number of undeclared
   columns, a public number).  An undeclared column gets an *other* code
   (see :meth:`~dpsynth.schema.Schema.restrict`) unless its noisy count of
   records whose values were not released (below) shows, with its noise,
   fewer than ``OTHER_SHARE`` of its records; the values that were not
   released are encoded as other from then on, and the missing code holds
   the missing values only.  In a column without an other code, the few
   undiscovered records join its most frequent released value.  Whether an
   other code holds synthetic records is the sampler's decision, from its
   1-way estimate (the undiscovered count averaged with step 3's
   measurement; :func:`_other_codes`, DP outputs only).  The released
   values' noisy counts are DP outputs as well (Gopi et al. release them),
   and so is the missing code's, measured without a threshold (it is
   public): they are averaged into the 1-way marginals of step 3, code by
   code, so the discovery budget is not
   spent on the value lists only.  Each of them counts exactly the records
   that the code holds in step 3, so the averages stay unbiased and every
   column's 1-way marginal sums to the same number of records; the other
   code (whose records depend on which values were released) is measured
   by the undiscovered count below and in step 3.  A **second round**
   (:func:`_discover`) then measures each undeclared column's count of
   records left to other (a share ``REMAINDER_SHARE`` of the first round's
   ``rho``) and, for the columns
   where that noisy count is large (a DP output), measures their counts
   again (``SECOND_ROUND_SHARE`` of the first round's ``rho``, spread over
   those columns only, so each gets more than in the first round); a value
   is released when the mean of its two noisy counts passes a threshold set
   for that mean.  The two rounds share the set union's ``delta / 2``
   (``SECOND_ROUND_DELTA`` of it for the second, spent even when no column
   is selected); the second round's ``rho`` is spent only when it runs.
   Where many values may lie just below the threshold (a selected column's
   noisy remainder above ``EXTRA_MIN`` thresholds) and the later steps can
   spare it, the **frequency profile** of such a column's unreleased values
   (:func:`frequency_profile`, a share ``PROFILE_SHARE``) says how many
   records more ``rho`` would release, and the column gets an *extra*
   ``rho`` in the second round (:func:`_extra_rhos`) on top of its broad
   share: an identifier-like column, whose undiscovered records lie in
   values no round can reach, gets nothing.
3. **Adaptive selection** (:func:`~dpsynth.release.adaptive_selection.release_workload`,
   after AIM, McKenna et al. 2022) over the public domain: all 1-way
   marginals, then rounds of exponential-mechanism selection of a 2- or
   3-way marginal scored on a population fitted to the measurements so far,
   and a Gaussian measurement of it.

The noisy measurements are stored as they are (dense, possibly negative);
the samplers post-process them (consistency, population fitting).  The DP
record count is the total of the noisy 1-way marginals: no separate budget.
"""

import math

import numpy as np
from scipy.special import ndtr, ndtri

from .. import accounting
from ..accounting import PrivacySpent, Spend, gdp_mu, zcdp_rho_tight
from ..aggregates import DPAggregates, NoisyMarginal
from ..engines.blocks import as_blocks, by_lookup
from ..mechanisms import (check_noise, discrete_gaussian, discrete_gaussian_scale,
                          gaussian_measure, mechanism_name)
from .adaptive_selection import ACCOUNTINGS, release_workload

__all__ = ["release_adaptive", "discovery_proportion"]


def discovery_proportion(epsilon):
    """Share of ``rho`` spent on discovering undeclared values (step 2).

    ``0.5 - 0.1 log2(epsilon)`` up to epsilon 4, then ``0.4 - 0.05
    log2(epsilon)``, kept within ``[0.2, 0.5]``: a public function of
    ``epsilon`` (0.5 up to epsilon 1, 0.4 at 2, 0.3 at 4, 0.23 at 10, 0.2 from
    16).  The DP threshold suppresses the values rarer than a count that
    grows as the share shrinks; a small table loses most to it, a large one
    to the budget taken from the other measurements (the discovery's noisy
    counts are reused as 1-way measurements, so it is not lost).  Chosen on
    the benchmarks, see ``benchmarks/LOG.md``.
    """
    log_epsilon = math.log2(float(epsilon))
    return min(0.5, max(0.2, 0.5 - 0.1 * log_epsilon, 0.4 - 0.05 * log_epsilon))


SECOND_ROUND_DELTA = 0.5
"""Share of the set union's ``delta`` reserved for the second discovery round
(spent whether or not a column is selected: the worst case counts)."""
REMAINDER_SHARE = 0.1
"""``rho`` of the noisy undiscovered counts, as a share of the first round's."""
SECOND_ROUND_SHARE = 0.5
"""``rho`` of the second discovery round, as a share of the first round's
(spent only when a column is selected; otherwise the later steps have it), at
most ``MAX_GAIN`` times the first round's ``rho`` per column for the columns
selected."""
MAX_GAIN = 4.0
"""See ``SECOND_ROUND_SHARE``: a few columns selected among many do not take
the budget of the later measurements for a small gain."""
MIN_REMAINDER = 0.02
"""A column takes part in the second round when its noisy undiscovered count is
above this share of its estimated records and ``NOISE_MARGIN`` times the
count's noise scale."""
NOISE_MARGIN = 3.0
"""See ``MIN_REMAINDER``: a column with nothing undiscovered is selected with
probability below 0.0014.  Also the margin of the extra's expected gain (in
noise scales of its estimate)."""
OTHER_SHARE = 0.01
"""A column keeps its other code unless its noisy undiscovered count shows, at
``OTHER_UPPER_SIGMAS`` standard deviations above it, fewer records than this share
of its records (then its few undiscovered records join its most frequent released
value, :func:`_other_codes`): an other code that holds nothing costs every
marginal of the column a cell of noise, one that is missing moves its records."""
OTHER_UPPER_SIGMAS = 1.0
"""See ``OTHER_SHARE``: the undiscovered count's upper bound."""
EXTRA_MIN = 2.0
"""A column selected for the second round is a candidate for an *extra* budget
when its noisy undiscovered count is above this many first-round thresholds
(only then can many values just below the threshold hold its records)."""
PROFILE_SHARE = 0.1
"""``rho`` of the candidates' frequency profiles, as a share of the first
round's (spent only when a column is a candidate)."""
PROFILE_LEVELS = (0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0)
"""The profile's levels as shares of the first round's threshold ``tau``
(:func:`profile_levels`): values with at most ``tau / 4`` records are out of
reach of any second round and not measured; the layers are narrow where a
second round's threshold falls."""
GAIN_STEPS = (1.0, 2.0, 4.0, 8.0, 16.0)
"""The extra ``rho`` a candidate may get, in units of a column's first-round
``rho`` (the first round's over the undeclared columns)."""
EXTRA_SHARE = 1.5
"""The extra ``rho`` in all is at most this share of the first round's..."""
EXTRA_REST = 0.5
"""...and at most this share of what the discovery leaves to the later steps."""
MIN_EXTRA = 4.0
"""The profiles are measured only when the extras may take at least this many
units of ``GAIN_STEPS`` beyond what the profiles cost themselves
(``PROFILE_SHARE u`` units; a public function of epsilon and the number of
undeclared columns): at small epsilon the discovery leaves the later steps
too little for an extra to pay for the profiles."""
EXTRA_PRICE = 0.1
"""A unit of ``GAIN_STEPS`` is spent on a candidate only where it is expected to
release at least this share of ``1/u`` of the column's estimated records more
than the second round's broad share would."""


def profile_levels(threshold):
    """The public integer levels ``0 < t_1 < ... < t_L`` of :func:`frequency_profile`:
    ``round(share * threshold)`` for the shares ``PROFILE_LEVELS`` (those above 0)."""
    top = max(float(threshold), 1.0)
    levels = {int(round(share * top)) for share in PROFILE_LEVELS}
    return np.array(sorted(v for v in levels if v > 0), dtype=np.int64)


def frequency_profile(counts, levels):
    """Records of each upper layer of the values' counts (a "layer cake").

    Entry ``l`` is ``sum_v min(max(c_v - t_l, 0), t_{l+1} - t_l)`` over the
    values ``v`` of counts ``c_v`` (the last layer is unbounded): the records
    of the values with more than ``t_l`` records that lie between their
    ``t_l``-th and ``t_{l+1}``-th, so the entry of layer ``l`` over its width
    is the average, over ``t`` in the layer, of the number of values with
    more than ``t`` records.  Records below ``t_1`` are in no layer.
    **Sensitivity**: one record more of value ``v`` (``c_v`` to ``c_v + 1``,
    a new value from 0 to 1) adds 1 to the layer holding ``c_v`` (``t_l <=
    c_v < t_{l+1}``, the levels being integers), or to none if ``c_v < t_1``,
    and changes no other; one record less subtracts 1 from at most one layer.
    So over ``k`` columns, one record per column, the profiles have L2
    sensitivity ``sqrt(k)``, as one count per column.
    """
    counts = np.asarray(counts, dtype=np.int64)
    widths = np.append(np.diff(levels), np.iinfo(np.int64).max // 4)
    return np.clip(counts[:, None] - levels[None, :], 0, widths[None, :]).sum(axis=0)


def gain_coefficients(levels, threshold, scale):
    """Linear map from a column's profile to the records a measurement releases.

    The values of a layer are spread evenly over its counts (``t_l + 1,
    ..., t_{l+1}``; those of the top layer hold ``2 t_L``); the number of
    values with more than ``t`` records is the layer's average (its entry
    over its width; the top layer: over ``t_L``); a value of ``c`` records is
    released when ``c`` plus noise of ``scale`` passes ``threshold``
    (probability ``Phi((c - threshold) / scale)``).  The expected records
    released, ``sum_l n_l g_l`` (``n_l`` the values of layer ``l``, ``g_l``
    their mean of ``c Phi(...)``), is linear in the profile: the
    coefficients are returned.  Values below ``t_1`` count for nothing.
    """
    per_value = []
    for low, high in zip(levels[:-1], levels[1:]):
        c = np.arange(low + 1, high + 1, dtype=float)
        per_value.append(float(np.mean(c * ndtr((c - threshold) / scale))))
    top = 2.0 * max(float(levels[-1]), 1.0)
    per_value.append(top * float(ndtr((top - threshold) / scale)))
    widths = np.append(np.diff(levels), max(levels[-1], 1)).astype(float)
    return np.diff(np.array(per_value), prepend=0.0) / widths


class _Round:
    """One Gaussian measurement of the undeclared columns' value counts.

    ``bound`` columns, each record one unit in each of them (L2 sensitivity
    ``sqrt(bound)``), ``rho`` in all: noise ``sigma sqrt(bound)`` with
    ``sigma = sqrt(1 / (2 rho))``, calibrated to the discrete Gaussian when
    ``noise="discrete"`` (the ``bound`` unit shifts are together
    ``1/sigma``-GDP).
    """

    def __init__(self, rho, bound, noise):
        self.rho, self.bound, self.noise = rho, bound, check_noise(noise)
        self.sigma = math.sqrt(1.0 / (2.0 * rho))
        self.scale = self.sigma * math.sqrt(bound)
        if self.noise == "discrete":
            self.scale = discrete_gaussian_scale(self.scale)

    def threshold(self, delta):
        """The set union's threshold at ``delta``
        (:func:`~dpsynth.accounting.first_level_threshold`; discrete noise: one
        count more, :func:`~dpsynth.mechanisms.discrete_gaussian_tail`)."""
        if self.noise == "discrete":
            return accounting.first_level_threshold(self.scale / math.sqrt(self.bound),
                                                    self.bound, delta) + 1.0
        return accounting.first_level_threshold(self.sigma, self.bound, delta)

    def spend(self, name, **params):
        return Spend(name, mechanism_name("gaussian", self.noise), rho=self.rho,
                     params=(("sigma", self.sigma), ("contribution_bound", self.bound),
                             ("noise_scale", self.scale))
                     + tuple(params.items()))

    def measure(self, counts, rng):
        return _noisy(counts, self.scale, rng, self.noise)


def combined_threshold(scale_first, scale_second, bound, delta, noise):
    """Threshold of the inverse-variance mean of two independent noisy counts.

    A value unique to one record (count 1) crosses it with probability at
    most ``q = 1 - (1 - delta/2)**(1/bound)``, so that one of a record's at
    most ``bound`` unique values crosses it with probability at most
    ``delta / 2``.  The mean's noise has scale ``s = (scale_first**-2 +
    scale_second**-2)**-0.5``; it is Gaussian for continuous noise (threshold
    ``1 + s PhiInv(1 - q)``) and ``s``-subgaussian for the discrete Gaussian
    (Canonne, Kamath and Steinke 2020, Cor. 9: threshold ``1 + s sqrt(2
    ln(1/q))``).  The second round keeps the first round's noisy counts of
    the values it did not release, so both measurements count.
    """
    q = -math.expm1(math.log1p(-delta / 2.0) / bound)
    s = 1.0 / math.sqrt(1.0 / scale_first**2 + 1.0 / scale_second**2)
    if check_noise(noise) == "discrete":
        return 1.0 + s * math.sqrt(-2.0 * math.log(q))
    return 1.0 + s * float(-ndtri(q))


def _discover(codes, schema, rho, delta, rng, noise="discrete", rho_remainder=0.0,
              rho_second=0.0, rho_profile=0.0, rho_extra=0.0):
    """Released attributes of the undeclared columns (DP set union, in up to two rounds).

    **First round**: Gaussian noise (``rho``) on the counts of the observed
    values of every undeclared column and, with ``missing="category"``, of
    the missing code where the declaration allows missing values (a public
    code, always measured: a record holds one value or the missing code per
    column, so the L2 sensitivity stays ``sqrt(bound)``); the values above
    the set union's threshold at ``(1 - SECOND_ROUND_DELTA) delta`` are released.

    **Second round** (``rho_remainder > 0``): each undeclared column's count
    of records whose value was not released (the first round's releases are
    public, so this is a count of L2 sensitivity ``sqrt(bound)`` over the
    columns) is measured with ``rho_remainder``; the columns whose noisy
    remainder exceeds ``MIN_REMAINDER`` of their estimated records and
    ``NOISE_MARGIN`` times its noise scale (DP outputs only) have their
    counts measured again with ``rho_second`` (at most ``MAX_GAIN rho``
    per selected column over the undeclared ones; sensitivity
    ``sqrt(selected)``, fewer columns, so less noise per column; every
    observed value and the missing code, the released ones too), and a
    value is released when the inverse-variance mean
    of its two noisy counts passes :func:`combined_threshold` at
    ``SECOND_ROUND_DELTA delta`` (or the second count alone its own threshold,
    whichever threshold is lower: a public choice).  A value unique to one
    record is released in the first round with probability at most
    ``(1 - SECOND_ROUND_DELTA) delta / 2`` and in the second with at most
    ``SECOND_ROUND_DELTA delta / 2`` (union bound): the set union's
    ``delta / 2`` in all, whatever is selected.  With no column selected
    nothing more is spent but the remainder counts.

    **Extra** (``rho_profile > 0`` and ``rho_extra`` at least ``MIN_EXTRA``
    units of ``rho / u`` more than ``rho_profile``, public numbers): the
    selected columns
    whose noisy remainder is above ``EXTRA_MIN`` times the first round's
    threshold (*candidates*, DP outputs only) have the
    :func:`frequency_profile` of their unreleased values measured with
    ``rho_profile`` (levels :func:`profile_levels` of the first round's
    threshold, public; L2 sensitivity ``sqrt(candidates)``);
    :func:`_extra_rhos` turns the noisy profiles into an extra ``rho`` per
    candidate (at most ``rho_extra`` in all), where many records are expected
    to lie in values just below the threshold.  Such a column's second
    measurement is its own Gaussian mechanism of ``rho`` its broad share plus
    its extra (sensitivity one), and its threshold is set for the same
    ``selected`` columns, so the second round's ``delta`` is unchanged; the
    broad measurement keeps the others.  Both spends are listed.

    Returns the attributes to keep, the spends, the released noisy counts
    ``{column: (attribute ids, noisy counts, noise variance[, other count,
    its variance])}`` (DP outputs, as in Gopi et al.'s release; a
    second-round column's counts are the means of both rounds, every one of
    its measured codes; the noisy remainder of a column the second round
    left out counts exactly the records of its other code) and the ``rho``
    spent in all.  With ``noise="discrete"`` every count gets exact
    discrete Gaussian noise of the calibrated scale
    (:func:`~dpsynth.mechanisms.discrete_gaussian_scale`) and the first
    round's threshold is one count higher
    (:func:`~dpsynth.mechanisms.discrete_gaussian_tail`).
    """
    undeclared = [j for j, column in enumerate(schema) if not column.declared]
    keep = np.zeros(schema.n_attributes, dtype=bool)
    possible = schema.possible_attributes
    for j, column in enumerate(schema):  # declared values are public
        if column.declared:
            span = slice(schema.offsets[j], schema.offsets[j + 1])
            keep[span] = possible[span]
    two_rounds = rho_remainder > 0
    delta_first = delta * (1.0 - SECOND_ROUND_DELTA) if two_rounds else delta
    first = _Round(rho, len(undeclared), noise)
    threshold = first.threshold(delta_first)
    released, state = {}, {}
    for j, counts in zip(undeclared, codes.column_counts(undeclared, schema.n_values)):
        n_known = len(schema.columns[j].values)
        # the private universe: observed values only (not the missing code)
        observed = np.flatnonzero(counts[:n_known] > 0)
        missing_id = schema.offsets[j + 1] - 1
        measured_missing = bool(schema.missing == "category" and possible[missing_id])
        # public, so its count is measured (same noise, same sensitivity) unthresholded
        measured = np.append(observed, [n_known] * measured_missing).astype(np.int64)
        values = counts[measured]
        noisy = first.measure(values, rng)
        above = (noisy > threshold) | (measured == n_known)
        ids = np.where(measured == n_known, missing_id, schema.offsets[j] + measured)
        keep[ids[above]] = True
        released[j] = (ids[above], noisy[above], first.scale ** 2)
        state[j] = (ids, values, noisy, above)
    spends = [first.spend("discovery of undeclared values", threshold=threshold),
              Spend("data-derived universe (length 1)", "set union", delta=delta_first / 2.0)]
    spent = rho
    if not two_rounds:
        return keep, spends, released, spent
    # the records of each column that the first round did not release, counted and noised
    rest = _Round(rho_remainder, len(undeclared), noise)
    remainders = rest.measure(np.array([state[j][1][~state[j][3]].sum() for j in undeclared]),
                              rng)
    spends.append(rest.spend("undiscovered records of undeclared columns"))
    spent += rho_remainder
    for j, r in zip(undeclared, remainders):  # the other code's count, unless round 2 runs
        released[j] += (r, rest.scale ** 2)
    # estimated records of a column: its remainder, released values and missing code
    selected = [j for j, r in zip(undeclared, remainders)
                if r > max(MIN_REMAINDER * (r + released[j][1].sum()),
                           NOISE_MARGIN * rest.scale)]
    if not selected:
        spends.append(Spend("data-derived universe (length 1), second round", "set union",
                            delta=delta * SECOND_ROUND_DELTA / 2.0))  # reserved: worst case
        return keep, spends, released, spent
    u = len(undeclared)
    rho_broad = min(rho_second, MAX_GAIN * rho * len(selected) / u)
    delta_second = delta * SECOND_ROUND_DELTA
    # columns whose undiscovered records may lie in many values just below the
    # threshold (a DP output above EXTRA_MIN thresholds): their frequency profile
    # says whether more rho would release them
    remainder = dict(zip(undeclared, remainders))
    candidates = [j for j in selected if remainder[j] > EXTRA_MIN * threshold]
    extra = {}
    # the extras must be able to take MIN_EXTRA units beyond the profiles' own cost
    if candidates and rho_profile > 0 and rho_extra >= MIN_EXTRA * rho / u + rho_profile:
        levels = profile_levels(threshold)
        profile = _Round(rho_profile, len(candidates), noise)
        layers = {j: profile.measure(frequency_profile(state[j][1][~state[j][3]], levels), rng)
                  for j in candidates}
        spends.append(profile.spend("frequency profile of undiscovered values",
                                    levels=" ".join(map(str, levels)),
                                    columns=len(candidates)))
        spent += rho_profile
        records = {j: max(float(remainder[j] + released[j][1].sum()), 1.0) for j in candidates}
        extra = _extra_rhos(layers, records, levels, first.scale, profile.scale, rho / u, u,
                            rho_broad / len(selected), len(selected), rho_extra,
                            delta_second, noise)
    # one Gaussian measurement of the columns at the broad share (sensitivity
    # sqrt(their number)) and one per column given an extra (its own rho)
    broad_columns = [j for j in selected if j not in extra]
    rounds = {j: _Round(rho_broad / len(selected) + extra[j], 1, noise) for j in extra}
    if broad_columns:
        broad = (_Round(rho_broad, len(selected), noise) if not extra else
                 _Round(rho_broad * len(broad_columns) / len(selected), len(broad_columns),
                        noise))
        rounds.update((j, broad) for j in broad_columns)
    for j in selected:
        second = rounds[j]
        # a unique value of any of the len(selected) columns crosses its
        # threshold with probability at most 1 - (1 - delta_second/2)**(1/len(selected))
        alone = (second.threshold(delta_second) if second.bound == len(selected)
                 else _threshold(second.scale, len(selected), delta_second, noise))
        mean = combined_threshold(first.scale, second.scale, len(selected), delta_second, noise)
        variance = 1.0 / (1.0 / first.scale**2 + 1.0 / second.scale**2)
        ids, values, noisy, above = state[j]
        again = second.measure(values, rng)
        both = (noisy / first.scale**2 + again / second.scale**2) * variance
        passes = above | ((both > mean) if mean <= alone else (again > alone))
        keep[ids[passes]] = True
        released[j] = (ids[passes], both[passes], variance)  # other: step 3 measures it
        if j in extra or j == broad_columns[-1]:
            name = ("discovery of undeclared values, second round" if j not in extra else
                    f"discovery of undeclared values, second round (extra), column {j}")
            spends.append(second.spend(name, threshold=min(mean, alone),
                                       threshold_of="mean of both rounds" if mean <= alone
                                       else "second round", columns=len(selected)))
    spends.append(Spend("data-derived universe (length 1), second round", "set union",
                        delta=delta_second / 2.0))
    return keep, spends, released, spent + rho_broad + sum(extra.values())


def _threshold(scale, bound, delta, noise):
    """The set union's threshold for a count with noise ``scale``, one of ``bound``
    columns (:func:`~dpsynth.accounting.first_level_threshold`; discrete: one count more)."""
    sigma = scale / math.sqrt(bound)
    return accounting.first_level_threshold(sigma, bound, delta) + (noise == "discrete")


def _extra_rhos(layers, records, levels, scale_first, scale_profile, unit, columns,
                rho_broad, bound, rho_extra, delta, noise):
    """``{column: extra rho}`` of the second round, from DP outputs and public numbers only.

    ``layers``: the candidates' noisy profiles (noise ``scale_profile``);
    ``records``: their estimated records (noisy); ``unit``: a column's
    first-round ``rho`` (``columns`` undeclared columns); ``rho_broad``: the ``rho`` each of the ``bound``
    second-round columns gets anyway; ``rho_extra``: the most the extras may
    spend.  A candidate's *gain* at ``a`` units (``a`` in ``GAIN_STEPS``) is
    the number of records a second measurement of ``rho_broad + a unit``
    would release more than one of ``rho_broad`` (:func:`gain_coefficients`
    at the threshold and noise of each, applied to its noisy profile), less
    ``NOISE_MARGIN`` times that estimate's noise scale, less ``a`` times
    ``EXTRA_PRICE`` of the column's records over ``columns``.  The steps (or none) are chosen to maximize
    the sum of the gains with at most ``rho_extra`` spent (:func:`_knapsack`).
    """
    def coefficients(rho_j):
        second = _Round(rho_j, 1, noise).scale
        tau = combined_threshold(scale_first, second, bound, delta, noise)
        scale = 1.0 / math.sqrt(1.0 / scale_first**2 + 1.0 / second**2)
        alone = _threshold(second, bound, delta, noise)
        if alone < tau:  # the second count alone decides (see _discover)
            tau, scale = alone, second
        return gain_coefficients(levels, tau, scale)

    steps = np.array(GAIN_STEPS)
    base = coefficients(rho_broad)
    more = [coefficients(rho_broad + a * unit) - base for a in steps]
    spread = np.array([NOISE_MARGIN * scale_profile * float(np.linalg.norm(m)) for m in more])
    values = {j: np.array([float(m @ layers[j]) for m in more]) - spread
              - EXTRA_PRICE * records[j] / columns * steps
              for j in layers}
    chosen = _knapsack(values, steps, rho_extra / unit)
    return {j: a * unit for j, a in chosen.items()}


def _knapsack(values, steps, budget):
    """``{key: step}`` maximizing the sum of ``values[key][step index]`` (only
    positive ones count) with the steps adding up to at most ``budget``
    (multiple-choice knapsack, exact on the grid of the smallest step)."""
    unit = float(min(steps))
    sizes = np.rint(np.asarray(steps) / unit).astype(int)
    capacity = int(math.floor(budget / unit + 1e-9))
    best = np.zeros(capacity + 1)  # best total with at most c units, over the keys so far
    picks = []
    for key, value in values.items():
        options = [(size, float(v)) for size, v in zip(sizes, value) if v > 0 and size <= capacity]
        new, pick = best.copy(), np.full(capacity + 1, -1)
        for index, (size, v) in enumerate(options):
            candidate = np.full(capacity + 1, -np.inf)
            candidate[size:] = best[:capacity + 1 - size] + v
            better = candidate > new
            new[better], pick[better] = candidate[better], index
        picks.append((key, options, pick))
        best = new
    chosen, c = {}, capacity
    for key, options, pick in reversed(picks):
        # walk back: the pick recorded at c for this key was made from best[c - size]
        if pick[c] >= 0:
            size = options[pick[c]][0]
            chosen[key] = float(size * unit)
            c -= size
    return chosen


def _noisy(counts, scale, rng, noise):
    """``counts`` plus Gaussian noise of ``scale`` (discrete: already calibrated)."""
    if noise == "continuous":
        return gaussian_measure(counts, scale, rng, noise)[0]
    return (counts.astype(np.int64) + discrete_gaussian(counts.shape, scale, rng)).astype(float)


def _other_codes(released, schema, undeclared):
    """The columns that keep an other code and the fill value of the others.

    Returns ``(with_other, fill)``: the indexes of the undeclared columns that
    the second round measured, that have no released value, or whose noisy
    undiscovered count (:func:`_discover`'s remainder) plus
    ``OTHER_UPPER_SIGMAS`` times its noise scale exceeds ``OTHER_SHARE`` of
    the column's noisy count of records; and ``{column: attribute id}`` of the
    others, their released value with the largest noisy count, which takes
    their undiscovered records (fewer than ``OTHER_SHARE`` of them, but for a
    one-in-six chance).  Functions of DP outputs only.  Whether an other code holds
    synthetic records is then the sampler's decision, from the 1-way
    estimate of step 3 (:func:`~dpsynth.model.dense.missing_sigmas`): the
    undiscovered count alone is too noisy to decide it in a wide table, where
    its noise hides a column's rare values, which then joined its mode.
    """
    with_other, fill = set(), {}
    for j in undeclared:
        ids, noisy, _, *other = released[j]
        values = ids < schema.offsets[j] + len(schema.columns[j].values)  # not missing
        if not other or not values.any():
            with_other.add(j)
            continue
        count, variance = other
        records = max(float(np.sum(noisy)) + count, 1.0)
        if count + OTHER_UPPER_SIGMAS * math.sqrt(variance) > OTHER_SHARE * records:
            with_other.add(j)
        else:
            fill[j] = int(ids[values][np.argmax(noisy[values])])
    return with_other, fill


def _public_counts(released, public, new_ids, sizes, fill=None):
    """The released noisy counts as :func:`release_workload`'s ``one_way_counts``.

    Over each column's public codes (``sizes``), NaN where discovery
    measured nothing (the ``"absent"`` code; the other code of a
    second-round column).  Every count
    measured is of exactly the records its public code holds: the values
    not released went to the other code, not to the missing one.  In a
    column without an other code they went to its ``fill`` value
    (:func:`_other_codes`), whose count is then the sum of its own noisy
    count and the noisy undiscovered count.
    """
    fill = fill or {}
    out = {}
    for j, (attributes, noisy, variance, *other) in released.items():
        counts = np.full(int(sizes[j]), np.nan)
        codes = new_ids[attributes] - public.offsets[j]
        counts[codes] = noisy
        if j in fill:  # the fill value holds the undiscovered records as well
            code = int(new_ids[fill[j]] - public.offsets[j])
            variances = np.full(counts.shape, float(variance))
            counts[code] += other[0]
            variances[code] += other[1]
            out[j] = (counts, variances)
            continue
        if other:  # the other code's count, with the variance of its own measurement
            variances = np.full(counts.shape, float(variance))
            counts[public.other_codes[j]], variances[public.other_codes[j]] = other
            variance = variances
        out[j] = (counts, variance)
    return out


def _interval_counts(public, sizes):
    """The noisy counts of the binned columns that carry them
    (:attr:`~dpsynth.schema.Binning.counts`, ``numeric="auto"``: intervals, then
    point values and text codes) as :func:`release_workload`'s
    ``one_way_counts``: NaN on the codes not measured (declared special values,
    the other and missing codes) and on the intervals that can hold no record.

    They are DP outputs of the encoder's accounted measurements, each count of
    exactly the records its interval code holds (post-processing).
    """
    out = {}
    for j, column in enumerate(public.columns):
        binning = column.binning
        if binning is None or binning.counts is None:
            continue
        values, variances = (np.asarray(v, dtype=np.float64) for v in binning.counts)
        empty = np.zeros(values.size, dtype=bool)
        empty[:binning.n_intervals] = binning.empty_intervals
        values = np.where(empty | ~(variances > 0), np.nan, values)
        counts = np.full(int(sizes[j]), np.nan)
        counts[:values.size] = values
        variance = np.full(int(sizes[j]), np.inf)
        variance[:values.size] = variances
        out[j] = (counts, variance)
    return out


def _public_codes(codes, schema, new_ids, public):
    """Codes of the public schema: unreleased values become other, empty cells
    (``missing="absent"``) stay ``-1``."""
    ids = schema.ids(codes)
    mapped = np.full(ids.shape, -1, dtype=np.int64)  # also when no attribute exists at all
    present = ids >= 0
    mapped[present] = new_ids[ids[present]]
    return public.codes(mapped).astype(np.int32)


def release_adaptive(codes, schema, *, epsilon, delta, reporting_length, rng,
                     epsilon_binning=0.0, target=None, delta_binning=0.0,
                     accounting="gdp", encoder_spends=(), noise="discrete",
                     **workload_params):
    """Run the workload-aware release; return :class:`~dpsynth.DPAggregates`.

    Parameters
    ----------
    codes : ndarray of int32, shape (n, d), or dpsynth.engines.CodeBlocks
        The table's codes under the encoder's (private) ``schema``, in
        memory or in blocks (e.g. dask partitions, encoded on the workers).
    schema : dpsynth.schema.Schema
        The fitted encoder's schema; only its declared facts and the
        discovered values are published.
    epsilon, delta : float
        Budget of this release (DP binning is accounted on top).
    reporting_length : int
        Largest marginal selected.
    rng : numpy.random.Generator
    epsilon_binning : float, default=0.0
        DP bin edges already spent by the encoder (reported, added to the total).
    delta_binning : float, default=0.0
        ``delta`` already spent by the encoder (DP frequent values; added to
        the total).
    target : str or None
        Name of the target column.
    encoder_spends : sequence of Spend, default=()
        The encoder's Gaussian mechanisms (DP binning of numeric columns
        with nothing declared): their ``rho`` is part of the budget (the
        release spends the rest), their ``delta`` is added to the total.
    accounting : {"gdp", "zcdp"}, default="gdp"
        ``"gdp"``: the budget is the Gaussian-DP ``mu`` of ``(epsilon,
        delta)`` (exact conversion) and selections are charged their GDP
        ``mu``; ``"zcdp"``: the budget is the zCDP ``rho`` of the
        Canonne-Kamath-Steinke conversion and selections are charged their zCDP.
    noise : {"discrete", "continuous"}, default="discrete"
        Exact discrete Gaussian noise on every count (calibrated so that the
        GDP accounting above holds unchanged) or numpy's Gaussian noise.
    **workload_params
        Options of :func:`~dpsynth.release.adaptive_selection.release_workload`.

    Returns
    -------
    DPAggregates
        Dense :class:`~dpsynth.aggregates.NoisyMarginal` measurements, no
        sparse counts.
    """
    codes = as_blocks(codes)
    public_universe = schema.public_universe
    conversion_delta = delta if public_universe else delta / 2.0
    if accounting not in ACCOUNTINGS:
        raise ValueError(f"accounting must be 'gdp' or 'zcdp'; got {accounting!r}.")
    if accounting == "gdp":
        rho = gdp_mu(epsilon, conversion_delta) ** 2 / 2.0
    else:
        rho = zcdp_rho_tight(epsilon, conversion_delta)
    rho_total = rho
    rho_encoder = float(sum(s.rho for s in encoder_spends))
    rho = rho_total - rho_encoder
    if not rho > 0:
        raise ValueError(f"The encoder's DP steps spent rho {rho_encoder:g}, the whole "
                         f"budget ({rho_total:g}); raise epsilon.")
    spends = list(encoder_spends)
    if epsilon_binning or delta_binning:  # the encoder's DP steps
        spends.append(Spend("binning (DP quantiles, frequent values, within-bin)",
                            "encoder", epsilon=float(epsilon_binning),
                            delta=float(delta_binning)))
    if public_universe:
        keep = schema.possible_attributes.copy()
        rho_discovery = 0.0
    else:
        # the undiscovered counts come out of the discovery share, so a table
        # whose values are all found leaves the later steps what they had
        # each undeclared column gets the discovery budget it would have in a
        # table of undeclared columns only: the share scales with their number
        # (declared and binned columns have public values)
        undeclared = sum(not column.declared for column in schema)
        rho_first = (discovery_proportion(epsilon) * undeclared / len(schema.columns) * rho
                     / (1.0 + REMAINDER_SHARE))
        # the profiles and extras come out of the later steps' rho, spent only
        # when a column is a candidate (see _discover)
        rho_rest = rho - (1.0 + REMAINDER_SHARE + SECOND_ROUND_SHARE + PROFILE_SHARE) * rho_first
        keep, found, released, rho_discovery = _discover(
            codes, schema, rho_first, delta, rng, noise,
            rho_remainder=REMAINDER_SHARE * rho_first,
            rho_second=SECOND_ROUND_SHARE * rho_first,
            rho_profile=PROFILE_SHARE * rho_first,
            rho_extra=max(0.0, min(EXTRA_SHARE * rho_first, EXTRA_REST * rho_rest)))
        spends += found
    if public_universe:
        public, new_ids = schema.restrict(keep, other=True)
    else:  # other codes only where the noisy undiscovered counts call for one
        with_other, fill = _other_codes(released, schema, list(released))
        public, new_ids = schema.restrict(keep, other=with_other, fill=fill)
    sizes = public.n_values + (1 if public.missing == "absent" else 0)
    one_way = _interval_counts(public, sizes)
    if not public_universe:  # the discovery's noisy counts measure the 1-way marginals too
        one_way.update(_public_counts(released, public, new_ids, sizes, fill))
    if one_way:
        workload_params = dict(workload_params, one_way_counts=one_way)

    def table_codes(block):  # per record: public codes, "absent" as a code of its own
        public_codes = _public_codes(block, schema, new_ids, public)
        return np.where(public_codes < 0, sizes[None, :] - 1, public_codes).astype(np.int32)

    # cells the declaration rules out (a missing code declared no_missing or
    # in a numpy int/bool column) hold no record: measured as exact zeros.
    # An other code, where the release has one, is always possible.
    impossible = [~possible for possible in public.possible_cells()]
    if target is not None:  # its column, for the weight of the sets holding it
        workload_params = dict(workload_params, target=list(public.names).index(target))
    release = release_workload(codes.map(by_lookup(table_codes, schema.n_values), once=True),
                               sizes, rho=rho - rho_discovery, rng=rng,
                               reporting_length=reporting_length, empty_cells=impossible,
                               accounting=accounting, noise=noise, **workload_params)
    spends += [s.scalar_params() for s in release.spends]
    cells = dict(release.cell_variances)  # carried by a column's first 1-way measurement
    marginals = ([NoisyMarginal(tuple(cols), table, variance,
                                cell_variances=(cells.pop(cols[0], None) if len(cols) == 1
                                                else None))
                  for cols, table, variance in release.measurements]
                 + [NoisyMarginal(tuple(cols), values, variance, basis="residual")
                    for cols, values, variance in release.residuals])
    details = {"strategy": "workload",
               "conversion": ("Gaussian DP (Dong-Roth-Su)" if accounting == "gdp"
                              else "Canonne-Kamath-Steinke"),
               "conversion_delta": conversion_delta, "public_universe": public_universe,
               "epsilon_marginals": float(epsilon), "epsilon_records": 0.0,
               "epsilon_binning": float(epsilon_binning),
               "delta_binning": float(delta_binning),
               "rho_discovery": rho_discovery, "rho_numeric": rho_encoder,
               "n_measurements": len(marginals), "noise": noise}
    if accounting == "gdp":
        details["mu"] = math.sqrt(2.0 * rho_total)
    privacy = PrivacySpent(float(epsilon) + float(epsilon_binning),
                           float(delta) + float(delta_binning)
                           + sum(s.delta for s in encoder_spends), rho_total, spends, details)
    n_records = max(int(round(release.total)), 1)
    return DPAggregates(public, reporting_length, [], [], n_records, privacy, target,
                        marginals)
