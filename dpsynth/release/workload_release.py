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
   :func:`discovery_proportion` of ``rho``): the
   1-way counts of the observed values get Gaussian noise and only values
   above the threshold ``rho_1`` of the DP set union are published (Gopi,
   Mahabadi and Yekhanin, Algorithm 1, level 1; each record has exactly one
   value per column, so its contribution bound is the number of undeclared
   columns, a public number).  Every undeclared column gets an *other*
   code (public: whatever was released, see
   :meth:`~dpsynth.schema.Schema.restrict`), and the values that were not
   released are encoded as other from then on: the missing code holds the
   missing values only.  The released values' noisy counts are DP outputs
   as well (Gopi et al. release them), and so is the missing code's,
   measured without a threshold (it is public): they are averaged into the
   1-way marginals of step 3, code by code, so the discovery budget is not
   spent on the value lists only.  Each of them counts exactly the records
   that the code holds in step 3, so the averages stay unbiased and every
   column's 1-way marginal sums to the same number of records; the other
   code (whose records depend on which values were released) is measured
   in step 3 only.
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


def _discover(codes, schema, rho, delta, rng, noise="discrete"):
    """Released attributes of the undeclared columns (DP set union, level 1).

    The Gaussian noise covers the observed values and, with
    ``missing="category"``, the missing code where the declaration allows
    missing values (a public code, always measured: a record holds one
    value or the missing code per column, so the L2 sensitivity stays
    ``sqrt(bound)``).  Returns the attributes to keep, the spends, the
    released noisy counts ``{column: (attribute ids, noisy counts)}`` (DP
    outputs, as in Gopi et al.'s release) and their noise variance.
    With ``noise="discrete"`` the counts get exact discrete Gaussian noise of
    the calibrated scale (:func:`~dpsynth.mechanisms.discrete_gaussian_scale`
    of ``sigma sqrt(bound)``: the ``bound`` unit shifts are together
    ``1/sigma``-GDP) and the threshold is the set union's for that scale plus
    one count (:func:`~dpsynth.mechanisms.discrete_gaussian_tail`).
    """
    undeclared = [j for j, column in enumerate(schema) if not column.declared]
    keep = np.zeros(schema.n_attributes, dtype=bool)
    possible = schema.possible_attributes
    for j, column in enumerate(schema):  # declared values are public
        if column.declared:
            span = slice(schema.offsets[j], schema.offsets[j + 1])
            keep[span] = possible[span]
    bound = len(undeclared)
    sigma = math.sqrt(1.0 / (2.0 * rho))  # noise std sigma * sqrt(bound): sensitivity sqrt(bound)
    scale = sigma * math.sqrt(bound)
    threshold = accounting.first_level_threshold(sigma, bound, delta)
    if check_noise(noise) == "discrete":  # the discrete tail is at most the continuous one's + 1
        scale = discrete_gaussian_scale(scale)
        threshold = accounting.first_level_threshold(scale / math.sqrt(bound), bound, delta) + 1.0
    released = {}
    for j, counts in zip(undeclared, codes.column_counts(undeclared, schema.n_values)):
        n_known = len(schema.columns[j].values)
        # the private universe: observed values only (not the missing code)
        observed = np.flatnonzero(counts[:n_known] > 0)
        noisy = _noisy(counts[observed], scale, rng, noise)
        above = noisy > threshold
        ids, found = schema.offsets[j] + observed[above], noisy[above]
        keep[ids] = True
        missing_id = schema.offsets[j + 1] - 1
        if schema.missing == "category" and possible[missing_id]:
            # public, so its count is measured (same noise, same sensitivity) unthresholded
            keep[missing_id] = True
            ids = np.append(ids, missing_id)
            found = np.append(found, _noisy(counts[n_known:n_known + 1], scale, rng, noise))
        released[j] = (ids, found)
    spends = [Spend("discovery of undeclared values", mechanism_name("gaussian", noise), rho=rho,
                    params=(("sigma", sigma), ("contribution_bound", bound),
                            ("noise_scale", scale), ("threshold", threshold))),
              Spend("data-derived universe (length 1)", "set union", delta=delta / 2.0)]
    return keep, spends, released, scale * scale


def _noisy(counts, scale, rng, noise):
    """``counts`` plus Gaussian noise of ``scale`` (discrete: already calibrated)."""
    if noise == "continuous":
        return gaussian_measure(counts, scale, rng, noise)[0]
    return (counts.astype(np.int64) + discrete_gaussian(counts.shape, scale, rng)).astype(float)


def _public_counts(released, variance, public, new_ids, sizes):
    """The released noisy counts as :func:`release_workload`'s ``one_way_counts``.

    Over each column's public codes (``sizes``), NaN where discovery
    measured nothing (the other code, the ``"absent"`` code).  Every count
    measured is of exactly the records its public code holds: the values
    not released went to the other code, not to the missing one.
    """
    out = {}
    for j, (attributes, noisy) in released.items():
        counts = np.full(int(sizes[j]), np.nan)
        counts[new_ids[attributes] - public.offsets[j]] = noisy
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
        rho_discovery = discovery_proportion(epsilon) * rho
        keep, found, released, discovery_variance = _discover(codes, schema, rho_discovery,
                                                              delta, rng, noise)
        spends += found
    public, new_ids = schema.restrict(keep, other=True)
    sizes = public.n_values + (1 if public.missing == "absent" else 0)
    if not public_universe:  # the discovery's noisy counts measure the 1-way marginals too
        workload_params = dict(workload_params, one_way_counts=_public_counts(
            released, discovery_variance, public, new_ids, sizes))

    def table_codes(block):  # per record: public codes, "absent" as a code of its own
        public_codes = _public_codes(block, schema, new_ids, public)
        return np.where(public_codes < 0, sizes[None, :] - 1, public_codes).astype(np.int32)

    # cells the declaration rules out (a missing code declared no_missing or
    # in a numpy int/bool column) hold no record: measured as exact zeros.
    # The other code is always possible (it never depends on the data).
    impossible = [~possible for possible in public.possible_cells()]
    release = release_workload(codes.map(by_lookup(table_codes, schema.n_values)), sizes, rho=rho - rho_discovery, rng=rng,
                               reporting_length=reporting_length, empty_cells=impossible,
                               accounting=accounting, noise=noise, **workload_params)
    spends += [s.scalar_params() for s in release.spends]
    marginals = ([NoisyMarginal(tuple(cols), table, variance)
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
