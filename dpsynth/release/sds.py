"""The DP-marginals release: Algorithm 1 and NoisyThresholding of Gopi, Mahabadi
and Yekhanin, "Differentially Private Marginals", with the options of
Microsoft's Synthetic Data Showcase (SDS) design document, sections 2-3.

For k = 1..R:

1. candidates V_k: at k = 1 the attributes observed in the data (a
   data-derived universe, made private by the delta-calibrated threshold
   ``rho_1``) or, with public categories, every attribute; at k >= 2 every
   k-tuple whose (k-1)-sub-tuples were all released at level k-1 (a universe
   derived from public outputs only; zero-count candidates get noise too);
2. ``Delta_k``: the DP Q-th percentile of the per-record candidate counts
   ``|W_u|`` (exponential mechanism over the public range ``0..C(d, k)``);
3. contribution bounding: a record with more than ``Delta_k`` candidates
   adds +1 to a uniformly random ``Delta_k``-subset of them (Cython kernel);
4. Gaussian noise ``sigma_k * sqrt(Delta_k) * N(0, 1)`` on every candidate;
5. keep ``noisy > max(threshold_k, 0)``, round to integers, drop zeros.

Because rounding happens before the next level's candidates are built, the
released sets are closed under sub-tuples by construction (no parent ever has
to be re-inserted).  Finally every count is capped at the minimum of its
sub-combinations (SDS normalisation).  Everything after the noise is
post-processing.
"""

from dataclasses import dataclass
import math

import numpy as np

from .. import accounting
from ..accounting import PrivacySpent, Spend
from ..mechanisms import (check_noise, discrete_gaussian, discrete_gaussian_scale, dp_percentile,
                          gaussian_measure,
                          mechanism_name)
from ..engines.blocks import as_blocks
from ..utils._resources import join_bound, level_bytes
from .._core import _counting
from ..model.tuples import sub_tuple_counts
from . import sds_budget

__all__ = ["LevelResult", "release_marginals", "normalise_counts", "sub_tuple_counts",
           "sds_privacy_spent"]

_RELEASED = -2  # table value of a released shorter tuple (a walk prefix)


@dataclass
class LevelResult:
    """What one level released, plus its public parameters."""

    length: int
    tuples: np.ndarray  # (m, k) int32 original attribute ids, rows sorted
    counts: np.ndarray  # (m,) int64
    contribution_bound: int
    threshold: float
    noise_scale: float
    n_candidates: int


def _table(tuple_blocks, bits):
    """Hash table over several blocks ``(tuples, values)`` of compact-id rows."""
    keys = [_counting.pack_tuples(np.ascontiguousarray(t, dtype=np.int32), bits)
            for t, _ in tuple_blocks]
    values = [np.asarray(v, dtype=np.int64) for _, v in tuple_blocks]
    return _counting.build_table(np.concatenate(keys), np.concatenate(values))


def _distinct_rows(ids, weights=None, return_inverse=False):
    """Distinct rows of the id matrix and how many records each stands for.

    Identical records have identical candidate tuples, so the kernels walk
    each distinct row once (common in categorical tables).  One hashing pass
    finds them (linear in the rows); they are then sorted as by
    ``np.unique(axis=0)``.  ``weights`` is how many records each row of
    ``ids`` already stands for (default 1).  With ``return_inverse``, also
    the distinct row of every row of ``ids``.
    """
    ids = np.ascontiguousarray(ids, dtype=np.int32)
    if weights is None:
        weights = np.ones(ids.shape[0], dtype=np.int64)
    first, multiplicity, *inverse = _counting.distinct_rows(ids, weights, return_inverse)
    rows = ids[first]
    order = _counting.lex_order(rows)
    if not return_inverse:
        return np.ascontiguousarray(rows[order]), multiplicity[order]
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return np.ascontiguousarray(rows[order]), multiplicity[order], rank[inverse[0]]


@dataclass
class _Level:
    """What the workers need to count one length: public facts and released tuples."""

    k: int
    bits: int
    walk_table: tuple  # (slots, slot_values) of the candidates and released prefixes
    n_candidates: int
    compact: np.ndarray = None  # attribute id -> compact id (k >= 2), or None
    plan: tuple = None  # _counting.dense_plan of the candidates, or None

    def rows(self, ids, return_inverse=False):
        """The distinct rows of a block's ids (compact ids from length 2 on)."""
        ids = np.asarray(ids)
        if self.compact is not None:
            ids = np.where(ids >= 0, self.compact[np.maximum(ids, 0)], -1)
        return _distinct_rows(ids, return_inverse=return_inverse)

    def sizes(self, rows):
        slots, slot_values = self.walk_table
        return np.asarray(_counting.record_tuple_counts(rows, self.k, self.bits, slots,
                                                        slot_values, self.plan))

    def size_histogram(self, ids, upper):
        """How many records of the block have ``0..upper`` candidates (``|W_u|``)."""
        rows, multiplicity = self.rows(ids)
        sizes = np.minimum(self.sizes(rows), upper)
        return np.bincount(sizes, weights=multiplicity, minlength=upper + 1)

    def bounded_counts(self, ids, start, bound, seed):
        """The block's bounded candidate counts; record ``i`` of the block is
        record ``start + i`` of the table, the key of its random subset."""
        rows, multiplicity, inverse = self.rows(ids, return_inverse=True)
        sizes = self.sizes(rows)
        truncated = np.flatnonzero(sizes[inverse] > bound)  # records, in table order
        owner = inverse[truncated]
        order = np.argsort(owner, kind="stable")
        keys = (np.uint64(start) + truncated[order].astype(np.uint64))
        key_start = np.zeros(rows.shape[0], dtype=np.int64)
        key_start[1:] = np.cumsum(np.bincount(owner, minlength=rows.shape[0]))[:-1]
        slots, slot_values = self.walk_table
        counts = _counting.bounded_counts(rows, self.k, self.bits, slots, slot_values,
                                          self.n_candidates, sizes, bound, seed, multiplicity,
                                          self.plan, keys, key_start)
        return counts.astype(np.float64)


def _level_counts(blocks, level, bound_fn, rng, upper):
    """The contribution bound ``Delta_k`` and the bounded counts of one length.

    Two sums over the blocks: the histogram of the per-record candidate
    counts (what the DP percentile reads), then the bounded counts.  Each
    truncated record's random subset is keyed by its position in the table,
    so the counts do not depend on how the table is split into blocks.
    """
    histogram = blocks.map_sum(lambda ids: level.size_histogram(ids, upper))
    bound = int(bound_fn(histogram))
    if bound <= 0:
        return bound, np.zeros(level.n_candidates, dtype=np.int64)
    seed = int(rng.integers(0, 2**63)) if rng is not None else 0
    counts = blocks.map_sum(lambda ids, start: level.bounded_counts(ids, start, bound, seed),
                            indexed=True)
    return bound, np.rint(counts).astype(np.int64)


def _run_levels(ids, column_of, n_columns, reporting_length, *, bound_fn,
                release_fn, public_universe, rng, possible=None, max_bytes=None,
                on_limit=None):
    """The level loop of the release (also driven by the tests' exact counter).

    ``ids`` is the attribute-id matrix, in memory or as
    :class:`~dpsynth.engines.CodeBlocks` (e.g. dask partitions).
    ``bound_fn(k, histogram)`` returns ``Delta_k`` from the histogram of the
    per-record candidate counts; ``release_fn(k, counts, bound,
    candidate_is_observed)`` returns ``(keep_mask, released_counts,
    threshold, noise_scale)``.  Before length ``k >= 2`` the candidates are
    bounded from the released ``(k-1)``-combinations (public); if their
    estimated memory exceeds ``max_bytes`` the loop stops there and calls
    ``on_limit(k, n_candidates_bound, estimated_bytes)``.
    """
    blocks = as_blocks(ids)
    n_attributes = column_of.shape[0]
    levels = []
    # ---- level 1: attribute ids themselves are the keys
    bits = _counting.key_bits(n_attributes)
    singles = np.arange(n_attributes, dtype=np.int32)[:, None]
    level = _Level(1, bits, _table([(singles, np.arange(n_attributes))], bits), n_attributes)
    bound, counts = _level_counts(blocks, level, lambda h: bound_fn(1, h), rng,
                                  math.comb(n_columns, 1))
    if bound <= 0:
        return levels
    if public_universe:  # every attribute the public schema allows
        universe = np.ones(n_attributes, bool) if possible is None else possible
    else:  # the values observed (private: made safe by the threshold rho_1)
        universe = counts > 0
    keep, released, threshold, scale = release_fn(1, counts[universe], bound)
    tuples = singles[universe][keep]
    levels.append(LevelResult(1, tuples, released, bound, threshold, scale,
                              int(universe.sum())))
    if reporting_length < 2 or tuples.shape[0] == 0:
        return levels
    # ---- levels k >= 2 on compact ids (released attributes only)
    released_attrs = tuples[:, 0]
    compact = np.full(n_attributes, -1, dtype=np.int32)
    compact[released_attrs] = np.arange(released_attrs.size, dtype=np.int32)
    bits = _counting.key_bits(released_attrs.size)
    if bits * reporting_length > 64:
        raise ValueError(
            f"{released_attrs.size} released attributes do not fit a 64-bit key "
            f"at reporting_length={reporting_length}; lower reporting_length or "
            "bin high-cardinality columns."
        )
    compact_columns = np.ascontiguousarray(column_of[released_attrs], dtype=np.int32)
    released_compact = [compact[released_attrs][:, None].astype(np.int32)]
    for k in range(2, reporting_length + 1):
        previous = released_compact[-1]
        if max_bytes is not None:
            bound_k = join_bound(previous, compact_columns)
            need = level_bytes(bound_k, k)
            if need > max_bytes:
                if on_limit is not None:
                    on_limit(k, bound_k, need)
                break
        prev_table = _table([(previous, np.zeros(len(previous)))], bits)
        candidates = _counting.candidate_tuples(previous, compact_columns,
                                                *prev_table, bits)
        if candidates.shape[0] == 0:
            break
        walk = [(t, np.full(len(t), _RELEASED)) for t in released_compact]
        walk.append((candidates, np.arange(len(candidates))))
        level = _Level(k, bits, _table(walk, bits), len(candidates), compact,
                       _counting.dense_plan(candidates, compact_columns))
        bound, counts = _level_counts(blocks, level, lambda h: bound_fn(k, h), rng,
                                      math.comb(n_columns, k))
        if bound <= 0:
            break
        keep, released, threshold, scale = release_fn(k, counts, bound)
        kept_compact = candidates[keep]
        levels.append(LevelResult(k, released_attrs[kept_compact].astype(np.int32),
                                  released, bound, threshold, scale,
                                  len(candidates)))
        if kept_compact.shape[0] == 0:
            break
        released_compact.append(kept_compact)
    return levels


class _NoisyRelease:
    """Gaussian noise and thresholds of one DP run (callable per level)."""

    def __init__(self, plan, rules, public_universe, rng, on_level=None, noise="discrete"):
        self.plan = plan
        self.rules = rules
        self.public_universe = public_universe
        self.rng = rng
        self.on_level = on_level
        self.noise = check_noise(noise)

    def scale(self, k, bound):
        """Noise scale of length ``k``'s counts (discrete: calibrated, at least the nominal)."""
        scale = float(self.plan.sigmas[k - 1]) * math.sqrt(bound)
        return discrete_gaussian_scale(scale) if self.noise == "discrete" else scale

    def threshold(self, k, bound):
        sigma = self.plan.sigmas[k - 1]
        if k == 1 and not self.public_universe:
            if self.noise == "discrete":  # the discrete tail: the continuous one's, one count up
                return accounting.first_level_threshold(
                    self.scale(k, bound) / math.sqrt(bound), bound, self.plan.delta) + 1.0
            return accounting.first_level_threshold(sigma, bound, self.plan.delta)
        kind, value = self.rules.get(max(k, 2), ("adaptive", 1.0))
        if kind == "fixed":
            return float(value)
        # the fabrication rule (not a privacy matter) at the scale drawn
        return sds_budget.adaptive_threshold(self.scale(k, bound) / math.sqrt(bound), bound,
                                             value)

    def __call__(self, k, counts, bound):
        if self.noise == "discrete":  # exact, of the calibrated scale
            scale = self.scale(k, bound)
            noisy = (np.asarray(counts, dtype=np.int64)
                     + discrete_gaussian(counts.shape[0], scale, self.rng)).astype(np.float64)
        else:
            scale = self.scale(k, bound)
            noisy, _ = gaussian_measure(np.asarray(counts, dtype=np.float64), scale, self.rng,
                                        "continuous")
        threshold = self.threshold(k, bound)
        rounded = np.rint(noisy)
        keep = (noisy > max(threshold, 0.0)) & (rounded >= 1)
        if self.on_level is not None:
            self.on_level(k, counts.shape[0], bound, int(keep.sum()))
        return keep, rounded[keep].astype(np.int64), threshold, scale


def release_marginals(ids, column_of, n_columns, plan, *, percentile,
                      fabrication_rules, public_universe, rng, on_level=None,
                      possible=None, max_bytes=None, on_limit=None, noise="discrete"):
    """Run the DP-marginals release on an attribute-id matrix.

    Parameters
    ----------
    ids : ndarray of int32, shape (n_records, n_columns), or dpsynth.engines.CodeBlocks
        Attribute id of each cell, -1 for an absent cell; in memory or in
        blocks (e.g. dask partitions).
    column_of : ndarray of int32, shape (n_attributes,)
        Column of each attribute id.
    n_columns : int
    plan : dpsynth.release.sds_budget.BudgetPlan
    percentile : float
        Q of the DP percentile that sets ``Delta_k``.
    fabrication_rules : dict
        Output of :func:`~dpsynth.release.sds_budget.fabrication_thresholds`.
    public_universe : bool
        Whether every attribute is public (declared categories).
    rng : numpy.random.Generator
    on_level : callable, default=None
        ``on_level(k, n_candidates, contribution_bound, n_released)`` after
        each level (progress reporting; receives only public numbers).
    possible : ndarray of bool, default=None
        With a public universe, the attributes it contains (by default all).
    max_bytes : float, default=None
        Memory limit of one length: a length whose candidates (bounded from
        the released shorter combinations, public) would need more is not
        computed, nor any longer one.
    on_limit : callable, default=None
        ``on_limit(k, n_candidates_bound, estimated_bytes)`` when length ``k``
        is skipped for ``max_bytes``.
    noise : {"discrete", "continuous"}, default="discrete"
        Exact discrete Gaussian noise (its scale calibrated to the
        continuous one's guarantee, the set union's threshold one count
        higher) or numpy's Gaussian noise.

    Returns
    -------
    list of LevelResult
        Normalised released tuples and counts by length.
    """
    release = _NoisyRelease(plan, fabrication_rules, public_universe, rng, on_level, noise)

    def bound_fn(k, histogram):
        return dp_percentile(np.arange(histogram.size), percentile, math.comb(n_columns, k),
                             plan.percentile_epsilon, rng, weights=histogram, noise=noise)

    levels = _run_levels(ids, column_of, n_columns, plan.reporting_length,
                         bound_fn=bound_fn, release_fn=release,
                         public_universe=public_universe, rng=rng, possible=possible,
                         max_bytes=max_bytes, on_limit=on_limit)
    return normalise_counts(levels)


def normalise_counts(levels):
    """Cap every count at the minimum count of its (k-1)-sub-tuples (SDS §3.4).

    Levels are processed in increasing length, so a tuple ends up capped by
    all of its sub-combinations of every shorter length.
    """
    for previous, level in zip(levels, levels[1:]):
        parents = sub_tuple_counts(previous.tuples, previous.counts, level.tuples)
        if np.any(parents < 0):  # closure is guaranteed by construction
            raise AssertionError("released tuple with an unreleased sub-tuple")
        level.counts = np.minimum(level.counts, parents.min(axis=1))
    return levels


def sds_privacy_spent(plan, levels, *, n_columns, epsilon_binning=0.0, delta_binning=0.0,
                      encoder_spends=(), noise="continuous"):
    """The :class:`~dpsynth.accounting.PrivacySpent` of one SDS release.

    Every mechanism of the release is listed: the Laplace record count, the
    DP bin edges (if any), per length the exponential-mechanism percentile
    and the Gaussian counts, and the DP set union of a data-derived 1-tuple
    universe (``delta / 2``); ``encoder_spends`` are the encoder's zCDP
    mechanisms (inside ``plan.rho``, their ``delta`` added).  Only public numbers enter it: the plan, the
    DP contribution bounds, thresholds and noise scales, and ``|V_k|`` for
    ``k >= 2`` (derived from released tuples); ``|V_1|`` of a data-derived
    universe is private and left out.  ``noise`` names the mechanisms
    (``"discrete_laplace"``, ``"discrete_gaussian"`` for the exact samplers).
    """
    by_length = {level.length: level for level in levels}
    lengths = range(1, plan.reporting_length + 1)
    spends = [Spend("record count", mechanism_name("laplace", noise), epsilon=plan.epsilon_records,
                    params=(("scale", 1.0 / plan.epsilon_records), ("sensitivity", 1)))]
    if epsilon_binning or delta_binning:  # the encoder's DP steps (quantiles, values)
        spends.append(Spend("binning (DP quantiles, frequent values, within-bin)",
                            "encoder", epsilon=float(epsilon_binning),
                            delta=float(delta_binning)))
    spends += list(encoder_spends)
    for k in lengths:
        spends.append(Spend(f"percentile k={k}", "exponential",
                            rho=plan.percentile_epsilon ** 2 / 2.0,
                            params=(("epsilon", plan.percentile_epsilon),
                                    ("range", math.comb(n_columns, k)))))
        sigma = float(plan.sigmas[k - 1])
        params = [("sigma", sigma)]
        if k in by_length:
            level = by_length[k]
            params += [("contribution_bound", int(level.contribution_bound)),
                       ("noise_scale", float(level.noise_scale)),
                       ("threshold", float(level.threshold))]
        spends.append(Spend(f"gaussian k={k}", mechanism_name("gaussian", noise),
                            rho=1.0 / (2.0 * sigma ** 2),
                            params=tuple(params)))
    if not plan.public_universe:
        spends.append(Spend("data-derived universe (length 1)", "set union",
                            delta=plan.delta - plan.conversion_delta))
    details = {
        "strategy": "sds",
        "epsilon_marginals": plan.epsilon_marginals,
        "epsilon_records": plan.epsilon_records,
        "epsilon_binning": float(epsilon_binning),
        "rho_numeric": float(sum(s.rho for s in encoder_spends)),
        "delta_binning": float(delta_binning),
        "conversion_delta": plan.conversion_delta,
        "public_universe": plan.public_universe,
        "percentile_epsilon": plan.percentile_epsilon,
        "sigmas": {k: float(plan.sigmas[k - 1]) for k in lengths},
        "contribution_bounds": {k: int(by_length[k].contribution_bound)
                                for k in lengths if k in by_length},
        "noise_scales": {k: float(by_length[k].noise_scale) for k in lengths if k in by_length},
        "thresholds": {k: float(by_length[k].threshold) for k in lengths if k in by_length},
        "n_candidates": {k: int(by_length[k].n_candidates) for k in lengths
                         if k in by_length and (k > 1 or plan.public_universe)},
    }
    return PrivacySpent(plan.epsilon + float(epsilon_binning),
                        plan.delta + float(delta_binning)
                        + sum(s.delta for s in encoder_spends), plan.rho, spends, details)
