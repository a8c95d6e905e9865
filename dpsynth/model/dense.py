"""Targets and populations from a release's dense noisy marginals.

:func:`dense_targets` makes the measurements of a release (whole marginals
and residuals) exactly consistent by generalised least squares over the
codes the schema allows (:func:`~dpsynth.model.consistency.consistent_marginals`),
and drops the values the public schema or the consistent 1-way estimates
rule out.  :func:`fit_dense_populations` fits populations to them by
coordinate descent (:func:`~dpsynth.model.descent.fit_population`, every
table weighted by the inverse of its mean cell variance), mixes them within
the measured sets' neighbourhoods (:func:`~dpsynth.model.mixing.mix_within_neighbourhoods`:
the measured counts stay as fitted, and the dependence the descent made up
between columns never measured together is removed) and rounds a sample that
is one population to a larger reference population of the same model
(:func:`~dpsynth.model.rounding.round_to_reference`).  Post-processing only.
"""

from concurrent.futures import ThreadPoolExecutor
import math

import numpy as np
from scipy.special import ndtri

from ..utils._threads import n_threads
from .consistency import consistent_marginals
from .descent import fit_population
from .mixing import mix_within_neighbourhoods
from .rounding import round_to_reference

__all__ = ["dense_targets", "fit_dense_populations", "missing_sigmas", "MISSING_LEVEL",
           "MISSING_SIGMAS"]

#: Chance that noise alone gives any complete column of a table a missing code
#: in the sample (:func:`missing_sigmas`): a table without a missing value
#: comes back without NaN but once in a thousand fits, however wide it is.
MISSING_LEVEL = 0.001


def missing_sigmas(n_columns):
    """Noise standard deviations a missing (or other) code's consistent 1-way
    estimate must clear when ``n_columns`` columns can hold one (a public count).

    The one-sided Gaussian level :data:`MISSING_LEVEL` shared by the columns
    (Bonferroni), so that the chance of a NaN (or of the other label) in some
    column without one does not grow with the table's width; 3.09 for one
    column.  :func:`dense_targets` applies it step-down (Holm): a code that
    clearly holds records does not raise the level of the others.
    """
    return float(ndtri(1.0 - MISSING_LEVEL / max(int(n_columns), 1)))


#: :func:`missing_sigmas` of one column (3.09): the rule by which a numeric
#: column with nothing declared gets a missing code.
MISSING_SIGMAS = missing_sigmas(1)

_REFERENCE_FACTOR = 10
"""A sample of ``n`` records is rounded to a reference of at most this many
times ``n`` records (and at most ``reference_size``)."""

_REFERENCE_SWEEPS = 6
"""Dense sweeps of the reference population: as accurate as ``dense_sweeps``
and faster (chosen on the benchmarks, see ``benchmarks/LOG.md``)."""

_DENSE_SETTLE = 0.0005
"""A column moving fewer than this share of a population's records in a dense
sweep is skipped by the later sweeps: most of the time saved, little accuracy
lost (chosen on the benchmarks, see ``benchmarks/LOG.md``)."""


def dense_targets(marginals, sizes, schema, *, absent, min_count):
    """Weighted targets ``(columns, table, weight)`` from a release's dense marginals.

    Parameters
    ----------
    marginals : sequence of NoisyMarginal
        The release's measurements (``basis`` ``"marginal"`` or ``"residual"``).
    sizes : ndarray of int
        Codes per column (with the absent code when ``absent``).
    schema : Schema
        The release's public schema.
    absent : bool
        Whether an empty cell is a code of its own (``missing="absent"``).
    min_count : float or "auto"
        A value whose consistent 1-way estimate is within ``min_count`` noise
        standard deviations of zero is taken as absent (no fabricated
        values); ``"auto"``: declared values 1, the others 2; the other
        codes, and the missing codes, are kept by a step-down test at the
        level of :func:`missing_sigmas` over the columns that can hold one
        (:func:`_step_down`: a table of complete columns gets no missing
        value from noise but once in a thousand fits, nor a table whose
        values were all released an other value).  Each code is tested on
        its own noise (:func:`_cell_spread`).

    Returns
    -------
    list of ``(columns, table, weight)``
        One per measured set, the inverse of its mean cell variance as weight.
    """
    measured = [(m.columns, m.table, m.variance) for m in marginals if m.basis == "marginal"]
    residuals = [(m.columns, m.table, max(m.variance, 1e-12))
                 for m in marginals if m.basis == "residual"]
    # GLS over the codes that can hold records (the residuals' basis)
    consistent = consistent_marginals(measured, residuals, sizes, schema.possible_cells())
    # values the public schema rules out (a missing value in a numpy int
    # column or one declared no_missing) get no mass, whatever the noise gave them
    masks = ([np.ones(size, dtype=bool) for size in sizes] if absent
             else schema.possible_codes())
    spread = _cell_spread(marginals, sizes, schema.possible_cells())
    ones = {m.columns[0]: m for m in consistent if len(m.columns) == 1}
    # each code's noise standard deviation in the consistent estimate
    scales = {j: np.sqrt(m.variance * spread.get(j, np.ones(m.table.shape)))
              for j, m in ones.items()}
    if min_count == "auto":  # the other codes and the missing codes: a step-down test each
        other = {j: len(schema[j].values) for j in ones if schema[j].other}
        missing = {} if absent else {j: sizes[j] - 1 for j in ones if masks[j][-1]}
        kept_other, kept_missing = (
            _step_down({j: _z(ones[j].table[c], scales[j][c]) for j, c in codes.items()})
            for codes in (other, missing))
    for j, m in ones.items():
        threshold = min_count
        if threshold == "auto":
            threshold = np.full(sizes[j], 2.0)
            if schema[j].declared:
                threshold[:len(schema[j].values)] = 1.0
            if j in other:
                threshold[other[j]] = 0.0 if j in kept_other else np.inf
            if j in missing:
                threshold[missing[j]] = 0.0 if j in kept_missing else np.inf
        masks[j] = masks[j] & (m.table > threshold * scales[j])
    targets = []
    for m in consistent:
        mask = masks[m.columns[0]]
        for c in m.columns[1:]:
            mask = np.multiply.outer(mask, masks[c])
        targets.append((m.columns, np.where(mask, m.table, 0.0), 1.0 / max(m.variance, 1e-12)))
    return targets


def _z(estimate, scale):
    """``estimate`` in noise standard deviations ``scale`` (an exact estimate: +-inf)."""
    if scale > 0:
        return float(estimate) / float(scale)
    return math.inf if estimate > 0 else -math.inf


def _step_down(z):
    """The keys of ``z`` (noise standard deviations of codes that may hold no
    record) whose code is kept by Holm's step-down test at the level
    :data:`MISSING_LEVEL` for all of them: the largest first against
    :func:`missing_sigmas` of all ``m``, the next of ``m - 1``, ..., until one
    fails.  As likely as the single level :func:`missing_sigmas` of ``m``
    (Bonferroni) to keep some code of no record, and never keeps fewer codes
    than it."""
    kept, m = set(), len(z)
    for rank, key in enumerate(sorted(z, key=lambda k: -z[k])):
        if not z[key] > missing_sigmas(m - rank):
            break
        kept.add(key)
    return kept


def _cell_spread(marginals, sizes, possible):
    """``{column: each code's noise variance over their mean}`` of the columns whose
    1-way measurements differ in variance from code to code
    (:attr:`~dpsynth.model.marginal.NoisyMarginal.cell_variances`): the
    consistent 1-way estimate's mean variance, so scaled, is each code's.

    The codes' variances are those of the measurements averaged and then held
    to a known total (``v_i - v_i**2 / sum(v)``, the total of many columns'
    measurements being far more precise than one column's): a code measured
    once among codes measured often (the other code among discovered values)
    is estimated mostly as the total less the others.
    """
    one_way = {}  # column -> its 1-way measurements
    for m in marginals:
        if len(m.columns) == 1 and m.basis == "marginal":
            one_way.setdefault(m.columns[0], []).append(m)
    spread = {}
    for j, measured in one_way.items():
        if all(m.cell_variances is None for m in measured):
            continue
        precision = np.zeros(int(sizes[j]))
        for m in measured:
            cells = (m.cell_variances if m.cell_variances is not None
                     else np.full(precision.shape, m.variance))
            precision += np.where(cells > 0, 1.0 / np.maximum(cells, 1e-300), np.inf)
        can = possible[j] & np.isfinite(precision) & (precision > 0)
        if can.sum() < 2:
            continue
        variance = np.zeros(precision.shape)
        variance[can] = 1.0 / precision[can]
        variance[can] -= variance[can] ** 2 / variance[can].sum()
        spread[j] = np.where(can, variance / variance[can].mean(), 1.0)
    return spread


def fit_dense_populations(sizes, targets, population_sizes, generators, *, total, sweeps,
                          reference_size, length, n_jobs=None):
    """Records fitted to ``targets``: one population per entry of ``population_sizes``.

    Parameters
    ----------
    sizes : ndarray of int
        Codes per column.
    targets : list of ``(columns, table, weight)``
        From :func:`dense_targets`.
    population_sizes : sequence of int
    generators : sequence of numpy.random.Generator
        One per population, its only source of randomness (so the result
        does not depend on ``n_jobs``).
    total : float
        Number of records the targets describe.
    sweeps : int
        Descent sweeps of every population.
    reference_size : int
        Largest reference population a single population is rounded to
        (at most ``_REFERENCE_FACTOR`` times its size; 0: no rounding).
    length : int
        The release's reporting length (the sets taken from the reference).
    n_jobs : int or None
        Threads (see :func:`~dpsynth.utils._threads.n_threads`).

    Returns
    -------
    ndarray of int32, shape (sum(population_sizes), n_columns)
    """
    column_sets = [cols for cols, _, _ in targets]

    def population(part):
        size, rng = int(population_sizes[part]), generators[part]
        records = fit_population(sizes, targets, size, rng, sweeps=sweeps, total=total,
                                 settle=_DENSE_SETTLE)
        mix_within_neighbourhoods(records, sizes, column_sets, rng)
        reference = min(reference_size, _REFERENCE_FACTOR * size)
        # a sample of several populations averages their sampling noise already
        if len(population_sizes) == 1 and reference > 2 * size:  # the same model, larger
            larger = fit_population(sizes, targets, reference, rng, sweeps=_REFERENCE_SWEEPS,
                                    total=total, settle=_DENSE_SETTLE)
            mix_within_neighbourhoods(larger, sizes, column_sets, rng)
            round_to_reference(records, sizes, targets, larger, rng, length=length,
                               total=total, n_threads=n_threads(n_jobs))
        return records

    n_workers = min(n_threads(n_jobs), len(population_sizes))
    if n_workers <= 1:
        parts = [population(part) for part in range(len(population_sizes))]
    else:
        with ThreadPoolExecutor(max_workers=n_workers) as executor:
            parts = list(executor.map(population, range(len(population_sizes))))
    return np.concatenate(parts)
