"""Synthetic Data Showcase (SDS) evaluation of combination counts.

SDS (``microsoft/synthetic-data-showcase``) evaluates synthetic data and DP
aggregates by comparing the counts of *attribute combinations*: every set of
``(column, value)`` pairs of length 1..R (the reporting length) present in a
table, with the number of records containing it.  :func:`combination_counts`
computes them exactly and :func:`aggregate_error_report` reproduces the SDS
evaluator (``packages/core/src/processing/evaluator``).
"""

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._encoding import (align_columns, as_frame, column_subsets, combined_key, dense_key,
                        encode_jointly)

__all__ = ["combination_counts", "aggregate_error_report", "AggregateErrorReport"]

# SDS count buckets: (0, 10], (10, 20], (20, 40], ... (preservation_by_count.rs).
_FIRST_BUCKET = 10
_BUCKET_RATIO = 2


def _check_missing(missing):
    if missing not in ("absent", "category"):
        raise ValueError(f"missing must be 'absent' or 'category'; got {missing!r}.")


def combination_counts(df, reporting_length=3, *, missing="absent", max_subsets=None,
                       random_state=None):
    """Exact counts of all attribute combinations of length 1..R (SDS aggregates).

    A combination of length ``k`` is a set of ``k`` distinct columns with one
    value each; its count is the number of rows holding all of those values.
    Only combinations present in at least one row are returned.  This is the
    aggregate data ``A_R`` of SDS (section 2.1 of "Differentially private
    aggregation and synthesis"), without noise.

    Counting is vectorised per column subset (codes, mixed-radix key,
    ``np.bincount``); building the dictionary is linear in its size.

    Parameters
    ----------
    df : DataFrame or 2-D array-like
    reporting_length : int, default=3
        Longest combination length R, clamped to the number of columns.
    missing : {"absent", "category"}, default="absent"
        ``"absent"`` (SDS): a missing cell (None, NaN, pd.NA, NaT) is never
        part of a combination.  ``"category"``: missing is a value, reported
        as ``None``.
    max_subsets : int, default=None
        For a length ``k`` with more than ``max_subsets`` sets of ``k``
        columns, count the combinations of a seeded uniform sample of
        ``max_subsets`` of them only (a wide table has billions of
        combinations of length 3).  The same ``random_state`` draws the same
        sets for two tables with the same number of columns.
    random_state : int, RandomState instance or None, default=None
        Seed for that sample (only used with ``max_subsets``).

    Returns
    -------
    counts : dict
        ``{((column, value), ...): count}`` with the pairs in the column
        order of ``df``, values as Python scalars and ``None`` for missing:
        the format of ``DPAggregates.to_dict()``, so both compare directly.
        Counts of the real data are *not* a differentially private release.

    Examples
    --------
    >>> import pandas as pd
    >>> from dpsynth.metrics import combination_counts
    >>> df = pd.DataFrame({"A": ["a1", "a1", "a2"], "B": ["b1", None, "b1"]})
    >>> combination_counts(df, 2)  # doctest: +NORMALIZE_WHITESPACE
    {(('A', 'a1'),): 2, (('A', 'a2'),): 1, (('B', 'b1'),): 2,
     (('A', 'a1'), ('B', 'b1')): 1, (('A', 'a2'), ('B', 'b1')): 1}
    """
    _check_missing(missing)
    df = as_frame(df, "df")
    if reporting_length < 1:
        raise ValueError(f"reporting_length must be >= 1; got {reporting_length}.")
    n_columns = df.shape[1]
    codes, uniques = encode_jointly([df])
    cards, pairs = [], []
    for j, column in enumerate(df.columns):
        values = uniques[j].tolist()
        if missing == "category":
            is_missing = codes[:, j] < 0
            if is_missing.any():
                codes[is_missing, j] = len(values)
                values.append(None)
        cards.append(len(values))
        column_pairs = np.empty(len(values), dtype=object)
        column_pairs[:] = [(column, v) for v in values]
        pairs.append(column_pairs)

    counts = {}
    for k in range(1, min(reporting_length, n_columns) + 1):
        for subset in column_subsets(n_columns, k, max_subsets, random_state):
            sub_codes = codes[:, subset]
            if missing == "absent":
                sub_codes = sub_codes[(sub_codes >= 0).all(axis=1)]
            if len(sub_codes) == 0:
                continue
            sub_cards = [cards[j] for j in subset]
            key, size = dense_key(*combined_key(sub_codes, sub_cards, range(k)))
            cell_counts = np.bincount(key, minlength=size)
            representative = np.empty(size, dtype=np.int64)
            representative[key] = np.arange(len(key))
            cells = np.flatnonzero(cell_counts)
            rows = representative[cells]
            combos = zip(*(pairs[j][sub_codes[rows, i]] for i, j in enumerate(subset)))
            counts.update(zip(combos, cell_counts[cells].tolist()))
    return counts


@dataclass(frozen=True, repr=False, eq=False)
class AggregateErrorReport:
    """Result of :func:`aggregate_error_report` (SDS evaluation).

    Attributes
    ----------
    by_length : DataFrame
        One row per combination length.
    by_bucket : DataFrame
        One row per SDS count bucket of the other table.
    mean_abs_error : float
        Mean ``|other - reference|`` over combinations present in both.
    suppressed_pct, fabricated_pct : float
        Combinations only in the reference / only in the other, in percent
        of the number of reference combinations.
    mean_proportional_error : float
        Mean over count buckets of the bucket's mean proportional error.
    combination_loss : float
        Mean over count buckets of ``1 - mean preservation``.
    record_expansion : float
        ``n_other / n_reference`` records (NaN when a count is unknown).
    leakage_count : int
        Rare reference combinations (count < resolution) present in the
        other with a count < resolution.
    reporting_length, resolution : int
        Parameters of the evaluation.
    """

    by_length: pd.DataFrame
    by_bucket: pd.DataFrame
    mean_abs_error: float
    suppressed_pct: float
    fabricated_pct: float
    mean_proportional_error: float
    combination_loss: float
    record_expansion: float
    leakage_count: int
    reporting_length: int
    resolution: int

    def summary(self):
        """The scalar results as a Series."""
        names = ["mean_abs_error", "suppressed_pct", "fabricated_pct",
                 "mean_proportional_error", "combination_loss",
                 "record_expansion", "leakage_count"]
        return pd.Series({name: getattr(self, name) for name in names}, dtype=float)

    def __repr__(self):
        scalars = [f"  {name:<25} {value:.4g}" for name, value in self.summary().items()]
        with pd.option_context("display.width", 120, "display.max_columns", 20,
                               "display.precision", 4):
            return "\n".join([
                f"AggregateErrorReport(reporting_length={self.reporting_length}, "
                f"resolution={self.resolution})",
                *scalars,
                "",
                "by combination length:",
                self.by_length.to_string(index=False),
                "",
                "by count bucket of the other table (bucket = upper bound):",
                self.by_bucket.to_string(index=False),
            ])


def _as_counts(data, name, reporting_length, missing):
    """Return ``(counts dict, number of records or None)`` for one input."""
    if isinstance(data, (pd.DataFrame, np.ndarray)):
        return combination_counts(data, reporting_length, missing=missing), len(data)
    if hasattr(data, "to_dict") and not isinstance(data, Mapping):
        n_records, data = getattr(data, "n_records", None), data.to_dict()
    elif isinstance(data, Mapping):
        n_records = None
    else:
        raise TypeError(f"{name} must be a DataFrame, an object with a to_dict() "
                        f"method or a dict of combination counts; got "
                        f"{type(data).__name__}.")
    counts = {
        combo: count for combo, count in data.items()
        if 1 <= len(combo) <= reporting_length
        and (missing == "category" or all(v is not None for _, v in combo))
    }
    return counts, n_records


def _nanmean(values, mask):
    return float(values[mask].mean()) if mask.any() else np.nan


def _pct(count, total):
    return 100.0 * count / total if total else np.nan


def aggregate_error_report(reference, other, reporting_length=3, *,
                           missing="absent", resolution=10):
    """Compare combination counts the way Synthetic Data Showcase does.

    Implements the SDS evaluator (``microsoft/synthetic-data-showcase``,
    ``packages/core/src/processing/evaluator``) so that dpsynth results read
    like pac-synth's.  ``reference`` is normally the real (sensitive) data;
    ``other`` the synthetic data or the DP aggregates.  All quantities are
    computed from the real data and are *not* differentially private
    releases.

    Definitions (``ref`` and ``oth`` are the counts of one combination, 0
    when it is absent; presence means being a key of the counts):

    * mean absolute error: mean of ``|oth - ref|`` over combinations present
      in both;
    * suppressed %: combinations present only in the reference, in percent
      of the reference combinations;
    * fabricated %: combinations present only in the other, in percent of
      the *reference* combinations (SDS's denominator, so it can exceed 100);
    * preservation and mean proportional error are computed on the
      *evaluated* combinations: reference combinations with
      ``ref >= resolution`` plus every combination present in the other.
      Per combination, preservation is ``min(oth / ref, 1)`` (0 when
      ``ref = 0``) and the proportional error ``|oth - ref| / ref`` (1 when
      ``ref = 0``); tables report their means;
    * count buckets (SDS): a combination falls in the first bucket
      ``10 * 2**i`` that is ``>= oth``, i.e. ``(0, 10]`` (with 0),
      ``(10, 20]``, ``(20, 40]``... up to the largest count of the other;
      the scalar ``mean_proportional_error`` and ``combination_loss``
      average the buckets' means, an empty bucket counting as 0 (as SDS);
    * leakage: reference combinations with ``ref < resolution`` present in
      the other with ``oth < resolution``; percentages are of the reference
      combinations of that length (SDS ``calc_leakage_percentage_by_len``);
    * record expansion: ``n_other / n_reference`` records.

    Parameters
    ----------
    reference, other : DataFrame, aggregates object or dict
        A DataFrame is turned into exact counts with
        :func:`combination_counts` (when both are DataFrames, ``other``'s
        columns are reordered to ``reference``'s).  An object with a
        ``to_dict()`` method (e.g. ``DPAggregates``) or a dict must map
        ``((column, value), ...)`` tuples, in the column order of the data,
        to counts, with ``None`` for a missing value; its ``n_records``
        attribute, if any, is its number of records.  Both sides must use
        the same value representation (e.g. the same binning).
    reporting_length : int, default=3
        Longest combination length R; longer dict keys are ignored.
    missing : {"absent", "category"}, default="absent"
        ``"absent"`` (SDS): missing cells belong to no combination, and dict
        keys containing ``None`` are dropped.  ``"category"``: missing is a
        value.
    resolution : int, default=10
        SDS reporting resolution: reference counts below it are "rare"
        (excluded from preservation, checked for leakage).

    Returns
    -------
    AggregateErrorReport
        ``by_length`` has columns ``length, n_reference, n_other,
        mean_abs_error, n_suppressed, suppressed_pct, n_fabricated,
        fabricated_pct, preservation, mean_proportional_error,
        leakage_count, leakage_pct``; ``by_bucket`` has ``bucket,
        n_combinations, mean_count, mean_length, preservation,
        mean_proportional_error`` (NaN means for empty buckets).
    """
    _check_missing(missing)
    if reporting_length < 1:
        raise ValueError(f"reporting_length must be >= 1; got {reporting_length}.")
    if isinstance(reference, pd.DataFrame) and isinstance(other, pd.DataFrame):
        reference, other = align_columns(reference, other,
                                         names=("reference", "other"))
    ref, n_ref = _as_counts(reference, "reference", reporting_length, missing)
    oth, n_oth = _as_counts(other, "other", reporting_length, missing)

    only_other = [combo for combo in oth if combo not in ref]
    combos = list(ref) + only_other
    in_ref = np.arange(len(combos)) < len(ref)
    in_oth = np.fromiter((c in oth for c in ref), bool, len(ref))
    in_oth = np.concatenate([in_oth, np.ones(len(only_other), bool)])
    ref_count = np.zeros(len(combos))
    ref_count[: len(ref)] = list(ref.values())
    oth_count = np.fromiter((oth.get(c, 0) for c in combos), float, len(combos))
    length = np.fromiter(map(len, combos), np.int64, len(combos))

    both = in_ref & in_oth
    abs_error = np.abs(oth_count - ref_count)
    evaluated = (in_ref & (ref_count >= resolution)) | in_oth
    positive = ref_count > 0
    safe_ref = np.where(positive, ref_count, 1.0)
    preservation = np.where(positive, np.minimum(oth_count / safe_ref, 1.0), 0.0)
    proportional_error = np.where(positive, abs_error / safe_ref, 1.0)
    rare_ref = in_ref & (ref_count < resolution)
    leaked = rare_ref & in_oth & (oth_count < resolution)

    # Report lengths 1..R, R clamped to the number of columns seen.
    n_columns = len({combos[i][0][0] for i in np.flatnonzero(length == 1)})
    max_length = min(reporting_length, max(n_columns, length.max(initial=0)))
    rows = []
    for k in range(1, max_length + 1):
        at = length == k
        n_reference = int((in_ref & at).sum())
        n_suppressed = int((in_ref & ~in_oth & at).sum())
        n_fabricated = int((in_oth & ~in_ref & at).sum())
        n_leaked = int((leaked & at).sum())
        rows.append({
            "length": k,
            "n_reference": n_reference,
            "n_other": int((in_oth & at).sum()),
            "mean_abs_error": _nanmean(abs_error, both & at),
            "n_suppressed": n_suppressed,
            "suppressed_pct": _pct(n_suppressed, n_reference),
            "n_fabricated": n_fabricated,
            "fabricated_pct": _pct(n_fabricated, n_reference),
            "preservation": _nanmean(preservation, evaluated & at),
            "mean_proportional_error": _nanmean(proportional_error, evaluated & at),
            "leakage_count": n_leaked,
            "leakage_pct": _pct(n_leaked, n_reference),
        })
    by_length = pd.DataFrame(rows)

    bounds = [_FIRST_BUCKET]
    max_other = oth_count[in_oth].max() if in_oth.any() else 0
    while bounds[-1] < max_other:
        bounds.append(bounds[-1] * _BUCKET_RATIO)
    bucket = np.searchsorted(bounds, oth_count, side="left")
    bucket_rows = []
    for b, bound in enumerate(bounds):
        at = evaluated & (bucket == b)
        bucket_rows.append({
            "bucket": bound,
            "n_combinations": int(at.sum()),
            "mean_count": _nanmean(oth_count, at),
            "mean_length": _nanmean(length.astype(float), at),
            "preservation": _nanmean(preservation, at),
            "mean_proportional_error": _nanmean(proportional_error, at),
        })
    by_bucket = pd.DataFrame(bucket_rows)

    n_reference = int(in_ref.sum())
    return AggregateErrorReport(
        by_length=by_length,
        by_bucket=by_bucket,
        mean_abs_error=_nanmean(abs_error, both),
        suppressed_pct=_pct(int((in_ref & ~in_oth).sum()), n_reference),
        fabricated_pct=_pct(len(only_other), n_reference),
        mean_proportional_error=float(
            by_bucket["mean_proportional_error"].fillna(0.0).mean()),
        combination_loss=float(
            (1.0 - by_bucket["preservation"]).fillna(0.0).mean()),
        record_expansion=(n_oth / n_ref if n_oth is not None and n_ref
                          else np.nan),
        leakage_count=int(leaked.sum()),
        reporting_length=reporting_length,
        resolution=resolution,
    )
