"""Binning of numeric columns with public or differentially private edges.

A synthesizer built on marginals needs every column to be categorical, so
numeric columns are cut into bins.  Where the bin edges come from matters for
privacy: edges taken from the data's minimum, maximum or exact quantiles
disclose individual values.  :class:`DPKBinsDiscretizer` therefore takes the
edges from public input (``bin_edges=``, ``bounds=``) at no privacy cost, or
from DP quantiles inside public bounds whose budget it reports in
``epsilon_spent_``.  Using the data's min/max requires an explicit
``bounds="data"`` and emits a :class:`~dpsynth.exceptions.PrivacyLeakWarning`.

The module-level helpers (edge snapping, coding, decoding, dtype restoration,
bin labels) are shared with :class:`~dpsynth.preprocessing.TableEncoder`, so a
binned column behaves the same whether it is binned alone or inside a table.
"""

import numbers
from typing import NamedTuple
import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..exceptions import PrivacyLeakWarning
from ..mechanisms import dp_quantiles, laplace_histogram, merge_weights, stable_histogram
from ..schema import Binning, sub_bin_edges
from ..utils._random import seed_sequence
from ..utils._temporal import is_temporal, temporal_array

__all__ = ["DPKBinsDiscretizer", "ValueCounts", "value_counts"]

_STRATEGIES = ("uniform", "log", "quantile")
_INVERSES = ("uniform", "midpoint", "dp_histogram")

#: Default total ``delta`` of the DP frequent-value discovery: a constant fixed
#: before seeing any data, far below ``1 / n`` for any table a machine holds (a
#: value held by one record is released with probability about ``delta``, so
#: on a column of millions of distinct values a larger default publishes some).
DEFAULT_FREQUENT_DELTA = 1e-9


class ValueCounts(NamedTuple):
    """A numeric column as the value-reading steps of a fit see it.

    Every step that reads values (``bounds="data"``, DP quantiles, DP
    frequent values, DP within-bin histograms) depends on the multiset of
    the column's values only, not on their order or on how many rows carry
    them: fitting on its value counts gives the binning of the column, with
    the same random draws, and needs one entry per distinct value instead
    of one per record (e.g. counts summed over partitions).

    Attributes
    ----------
    values : ndarray of float64 or None
        Sorted distinct values, missing values excluded (``-0.0`` as
        ``0.0``); ``None`` when no value is read (declared bins).
    counts : ndarray of int64 or None
        Records holding each value.
    n_missing : int
        Records with a missing value.
    """

    values: object
    counts: object
    n_missing: int


def value_counts(values, weights=None):
    """The :class:`ValueCounts` of float ``values`` (NaN: missing).

    ``weights`` (integers, one per value) makes value ``i`` stand for
    ``weights[i]`` records; ``None``: one each.
    """
    values = np.asarray(values, dtype=np.float64)
    missing = np.isnan(values)
    n_missing = 0
    if missing.any():
        n_missing = int(missing.sum() if weights is None else np.asarray(weights)[missing].sum())
        weights = None if weights is None else np.asarray(weights)[~missing]
        present = values[~missing]
    else:
        present = values.copy()
    present += 0.0  # -0.0 and 0.0 are one value, spelled 0.0 whichever a record used
    distinct, counts = merge_weights(present, weights)
    return ValueCounts(distinct, counts, n_missing)


def _generator(random_state):
    """A ``numpy.random.Generator`` from any ``random_state`` (``None``: OS entropy)."""
    return np.random.default_rng(seed_sequence(random_state))


def _is_integer_dtype(dtype):
    return pd.api.types.is_integer_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def _integer_limits(dtype):
    """Smallest and largest value of an integer dtype (capped to int64)."""
    info = np.iinfo(getattr(dtype, "numpy_dtype", dtype))
    int64 = np.iinfo(np.int64)
    return max(int(info.min), int(int64.min)), min(int(info.max), int(int64.max))


def _snap_edges(edges, dtype):
    """Adapt float edges to a column's dtype and drop bins that hold no value.

    Integer columns get integer edges with every bin half-open,
    ``[e_k, e_{k+1})``, so the last edge is the largest value + 1: a real
    bin ``[a, b)`` holds the same integers as ``[ceil(a), ceil(b))`` and the
    closed last bin ``[a, b]`` the same as ``[ceil(a), floor(b) + 1)``.
    Float32 columns get float32-representable edges.  Float bins are
    ``[e_k, e_{k+1})`` except the last, which is closed.

    Returns
    -------
    ndarray of float64
    """
    edges = np.asarray(edges, dtype=np.float64)
    if _is_integer_dtype(dtype):
        low, high = _integer_limits(dtype)
        lower = np.clip(np.ceil(edges[:-1]), low, high)
        top = np.clip(np.floor(edges[-1]), low - 1, high) + 1
        lower = lower[lower < top]
        return np.unique(np.append(lower, top))
    if getattr(dtype, "numpy_dtype", dtype) == np.float32:
        edges = edges.astype(np.float32).astype(np.float64)
    if edges[0] == edges[-1]:  # one value: a single closed bin [lo, lo]
        return edges[[0, -1]]
    return np.unique(edges)


def _value_range(edges, integer):
    """The closed range ``(lo, hi)`` of values covered by ``edges``."""
    return float(edges[0]), float(edges[-1] - 1 if integer else edges[-1])


def _encode(values, edges, integer, clip, name):
    """Bin indices of float ``values`` (NaN -> -1); out-of-range clipped or raised."""
    missing = np.isnan(values)
    if np.isinf(values).any():
        raise ValueError(
            f"Column {name!r} contains infinite values; replace them (e.g. by "
            "NaN, a missing value) before binning."
        )
    lo, hi = _value_range(edges, integer)
    outside = ~missing & ((values < lo) | (values > hi))
    if outside.any() and not clip:
        # neither the values nor their count: before DP both are private
        raise ValueError(
            f"Column {name!r} has values outside its bounds [{lo:g}, {hi:g}]. Widen "
            "the public bounds or set clip=True to put them in the end bins."
        )
    codes = np.searchsorted(edges[1:-1], values, side="right").astype(np.int64)
    codes[missing] = -1
    return codes


def _decode(codes, edges, integer, inverse, rng):
    """One value per code inside its bin: uniform draws or midpoints.

    Returns int64 values for integer columns, float64 otherwise; ``codes``
    must be valid bin indices.
    """
    lower, upper = edges[codes], edges[codes + 1]
    if integer:  # edges beyond int64 (a power-of-two grid reaches 2**63) are clipped
        lower, upper = (np.clip(e, _INT64_FLOAT_MIN, _INT64_FLOAT_MAX).astype(np.int64)
                        for e in (lower, upper))
        if inverse == "midpoint":
            return (lower + upper - 1) // 2
        return rng.integers(lower, upper) if codes.size else lower
    if inverse == "midpoint":
        return (lower + upper) / 2.0
    drawn = rng.uniform(lower, upper) if codes.size else lower
    # uniform() may round up to the open upper edge; keep values in their bin
    last = codes == len(edges) - 2
    return np.where(last | (drawn < upper), drawn, np.nextafter(upper, -np.inf))


def encode_binning(values, binning, name, clip_infinite=False):
    """Codes of float ``values`` under a :class:`~dpsynth.schema.Binning` (NaN -> -1).

    A value equal to a point value (declared special or DP-frequent; exactly,
    or at the binning's ``decimals``, if any) gets that point's bin, wherever it lies; the others get their interval
    (clipped into the end bins or refused, per ``binning.clip``).  In an
    integer column, a value that the interval would hold as a point value's
    integer (a value clipped onto it, or a non-integer such as 2.5 in the
    half-open ``[2, 3)``) gets that point's bin too, so that an interval
    whose integers are all point values holds no record
    (:attr:`~dpsynth.schema.Binning.empty_intervals`).  With ``clip_infinite``
    (a binning found under DP), +-inf that is no point value is an outlier,
    clipped into an end bin; otherwise it is refused.
    """
    values = np.asarray(values, dtype=np.float64)
    points = np.asarray(binning.points, dtype=np.float64)
    codes = np.full(values.shape, -1, dtype=np.int64)
    is_point = np.zeros(values.shape, dtype=bool)
    if points.size:
        # at the declared precision: 40.0001 is the point 40 of a 2-decimal column
        with np.errstate(over="ignore", invalid="ignore"):  # +-inf: no warning of its own
            matched = (values if binning.decimals is None or binning.integer
                       else np.round(values, binning.decimals))
        order = np.argsort(points, kind="stable")
        is_point, index = _point_index(points, order, matched)
        if matched is not values:  # a DP point value of more digits than the decimals
            # the column decodes at (a log, a standardised value) is matched exactly
            exact, index_exact = _point_index(points, order, values)
            is_point, index = is_point | exact, np.where(exact, index_exact, index)
        if binning.integer:  # the integer an interval holds the value as (+-inf: refused)
            lo, hi = _value_range(binning.edge_array, True)
            held = np.floor(np.clip(matched, lo, hi) if binning.clip else matched)
            held[~np.isfinite(matched) | is_point] = np.nan
            again, index_again = _point_index(points, order, held)
            is_point, index = is_point | again, np.where(again, index_again, index)
        codes[is_point] = binning.n_intervals + index[is_point]
    rest = ~is_point
    outliers = values[rest]
    if clip_infinite:
        outliers = np.clip(outliers, -np.finfo(np.float64).max, np.finfo(np.float64).max)
    codes[rest] = _encode(outliers, binning.edge_array, binning.integer, binning.clip, name)
    return codes


def _point_index(points, order, matched):
    """Which ``matched`` values are point values, and the index of their point
    (``order``: the points' argsort)."""
    position = np.clip(np.searchsorted(points[order], matched), 0, points.size - 1)
    return points[order][position] == matched, order[position]


#: The int64 range as floats that cast exactly (``float(2**63 - 1)`` rounds to ``2**63``).
_INT64_FLOAT_MIN = -2.0 ** 63
_INT64_FLOAT_MAX = float(np.nextafter(2.0 ** 63, 0))


def _draw(lower, upper, integer, closed, rng, points, middle=False):
    """Uniform draws in ``[lower, upper)`` (``closed``: ``[lower, upper]`` for floats).

    Integer draws skip the ``points`` (sorted int64) inside the range, which
    have bins of their own; a range holding nothing else gives ``lower``.
    ``middle=True`` (integers) takes the middle one instead of a draw.
    """
    if integer:  # edges beyond int64 (a power-of-two grid reaches 2**63) are clipped
        lower, upper = (np.clip(e, _INT64_FLOAT_MIN, _INT64_FLOAT_MAX).astype(np.int64)
                        for e in (lower, upper))
        n_points = (np.searchsorted(points, upper, side="left")
                    - np.searchsorted(points, lower, side="left")) if points.size else 0
        room = upper - lower - n_points
        if not lower.size:
            return lower
        if middle:
            drawn = lower + (np.maximum(room, 1) - 1) // 2
        else:
            drawn = lower + rng.integers(0, np.maximum(room, 1))
        if np.any(n_points):  # only ranges holding a point move past one
            rows = np.flatnonzero(n_points > 0)
            low, step, room_ = lower[rows], drawn[rows], room[rows]
            for point in points:  # ascending: the u-th integer of the range that is no point
                step += (point >= low) & (point <= step) & (room_ > 0)
            drawn[rows] = step
        return drawn
    if not lower.size:
        return lower.astype(np.float64)
    drawn = rng.uniform(lower, upper)
    # uniform() may round up to the open upper edge; keep values in their bin
    return np.where(closed | (drawn < upper), drawn, np.nextafter(upper, -np.inf))


def decode_binning(codes, binning, rng):
    """One value per (valid, non-missing) code under a :class:`~dpsynth.schema.Binning`.

    Point bins decode to their value exactly; intervals to a uniform draw
    (integer columns: among the integers that are no point value), the
    midpoint, or a draw from the DP sub-bin histogram (``inverse=
    "dp_histogram"``: a sub-bin by its DP probability, then uniformly inside
    it).  Float values are rounded to ``binning.decimals`` if set, or to
    decimals drawn from ``binning.places`` where that keeps them in their
    interval.

    Returns
    -------
    ndarray of int64 (integer columns) or float64
    """
    codes = np.asarray(codes, dtype=np.int64)
    edges = binning.edge_array
    n_int = binning.n_intervals
    integer = binning.integer
    points = np.asarray(binning.points, dtype=np.float64)
    out = np.empty(codes.shape, dtype=np.int64 if integer else np.float64)
    is_point = codes >= n_int
    if is_point.any():
        out[is_point] = points[codes[is_point] - n_int]
    where = np.flatnonzero(~is_point)
    interval = codes[where]
    skip = np.sort(points).astype(np.int64) if integer else np.empty(0)
    if binning.inverse == "midpoint":
        lower, upper = edges[interval], edges[interval + 1]
        if integer:  # the middle integer that is no point value
            values = _draw(lower, upper, True, None, rng, skip, middle=True)
        else:
            values = (lower + upper) / 2.0
    elif binning.inverse == "dp_histogram":
        # every interval's sub-bins in one table; a record's sub-bin is drawn
        # interval by interval (ascending), over its rows in row order
        bounds, closes, base = [], [], np.zeros(n_int + 1, dtype=np.int64)
        for k in range(n_int):
            sub = sub_bin_edges(edges[k], edges[k + 1], integer,
                                len(binning.within[k]))
            bounds.append(sub)
            last = np.zeros(sub.size - 1, dtype=bool)
            last[-1:] = k == n_int - 1
            closes.append(last)
            base[k + 1] = base[k] + sub.size - 1
        sub_low = np.concatenate([b[:-1] for b in bounds])
        sub_high = np.concatenate([b[1:] for b in bounds])
        sub_closed = np.concatenate(closes)
        counts = np.bincount(interval, minlength=n_int)
        starts = np.concatenate([[0], np.cumsum(counts)])
        # rows grouped by interval, in row order within each (a stable sort)
        order = np.argsort(interval.astype(np.int16 if n_int < 2**15 else np.int64),
                           kind="stable")
        grouped = np.empty(interval.size, dtype=np.int64)
        for k in np.flatnonzero(counts):
            size = int(counts[k])
            weights = np.asarray(binning.within[k], dtype=np.float64)
            total = weights.sum()
            chosen = (rng.choice(weights.size, size=size, p=weights / total)
                      if total > 0 else rng.integers(0, weights.size, size=size))
            grouped[starts[k]:starts[k + 1]] = base[k] + chosen
        sub = np.empty(interval.size, dtype=np.int64)
        sub[order] = grouped
        lower, upper, closed = sub_low[sub], sub_high[sub], sub_closed[sub]
        values = _draw(lower, upper, integer, closed, rng, skip)
    else:
        values = _draw(edges[interval], edges[interval + 1], integer,
                       interval == n_int - 1, rng, skip)
    if not integer and binning.decimals is not None and values.size:
        lower, upper = edges[interval], edges[interval + 1]
        rounded = np.clip(np.round(values, binning.decimals), lower, upper)
        if binning.places is not None:
            rounded = _at_drawn_places(values, rounded, lower, upper, interval == n_int - 1,
                                       binning.places, rng)
        values = rounded
    if integer and binning.step is not None and values.size:
        values = _on_steps(values, edges[interval], edges[interval + 1], binning.step,
                           interval == n_int - 1, skip)
    out[where] = values
    return out


def _at_drawn_places(values, rounded, lower, upper, closed, places, rng):
    """``values`` (drawn in ``[lower, upper)``, ``upper`` included where ``closed``)
    each rounded to a number of decimals drawn from the shares ``places`` (0, 1,
    ...), where that keeps it in its interval; ``rounded`` (at the column's
    decimals) elsewhere."""
    shares = np.asarray(places, dtype=np.float64)
    drawn = rng.choice(shares.size, size=values.size, p=shares / shares.sum())
    scale = 10.0 ** drawn
    coarse = np.round(values * scale) / scale + 0.0  # + 0.0: no negative zero
    inside = (coarse >= lower) & ((coarse < upper) | (closed & (coarse <= upper)))
    return np.where(inside, coarse, rounded)


def _on_steps(values, lower, upper, step, closed, skip):
    """``values`` (integers drawn in ``[lower, upper)``, ``upper`` included where
    ``closed``) moved down to a whole multiple of ``step``, or up when that leaves
    the interval; a value whose interval holds no multiple that is no point value
    (``skip``) stays as drawn."""
    values = np.asarray(values, dtype=np.int64)
    top = np.where(closed, upper, upper - 1).astype(np.int64)
    down = values - np.mod(values, step)
    up = down + step
    out = np.where(down >= lower, down, np.where(up <= top, up, values))
    if skip.size:  # a multiple that is a point value has a bin of its own
        out = np.where(np.isin(out, skip), values, out)
    return out


def within_histogram(values, binning, n_sub, epsilon, rng, name="column", weights=None):
    """DP sub-bin probabilities of every interval (Laplace, ``epsilon``-DP).

    Every record not in a point bin falls in one sub-bin of one interval:
    one Laplace histogram over all the (public) sub-bins, sensitivity 1.
    ``values`` holds one value per record, or distinct values with
    ``weights`` their numbers of records (the same histogram and draws).
    Sub-bins that can hold no value (integer sub-bins made only of point
    values) get probability 0; the probabilities of each interval sum to 1
    (an interval whose noisy counts are all 0 gets equal ones).

    Returns
    -------
    tuple of tuple of float
        Rounded to 6 decimals (post-processing).
    """
    edges = binning.edge_array
    n_int = binning.n_intervals
    subs = [sub_bin_edges(edges[k], edges[k + 1], binning.integer, n_sub)
            for k in range(n_int)]
    offsets = np.concatenate([[0], np.cumsum([len(e) - 1 for e in subs])])
    codes = encode_binning(values, binning, name)
    inside = (codes >= 0) & (codes < n_int)
    index = np.empty(int(inside.sum()), dtype=np.int64)
    kept_codes, kept_values = codes[inside], np.asarray(values, dtype=np.float64)[inside]
    kept_weights = None if weights is None else np.asarray(weights)[inside]
    if binning.clip:
        kept_values = np.clip(kept_values, edges[0], edges[-1])
    for k in range(n_int):
        rows = kept_codes == k
        position = np.searchsorted(subs[k][1:-1], kept_values[rows], side="right")
        index[rows] = offsets[k] + position
    noisy = laplace_histogram(index, int(offsets[-1]), epsilon, rng, weights=kept_weights)
    points = np.sort(np.asarray(binning.points, dtype=np.float64))
    within = []
    for k in range(n_int):
        weights = noisy[offsets[k]:offsets[k + 1]].copy()
        sub = subs[k]
        if binning.integer:
            n_points = (np.searchsorted(points, sub[1:], side="left")
                        - np.searchsorted(points, sub[:-1], side="left"))
            capacity = (sub[1:] - sub[:-1]) - n_points
            weights[capacity <= 0] = 0.0
        else:
            capacity = np.ones(weights.size)
        if weights.sum() <= 0:
            weights = (capacity > 0).astype(np.float64)
            if weights.sum() <= 0:
                weights = np.ones(weights.size)
        weights = weights / weights.sum()
        within.append(tuple(round(float(w), 6) for w in weights))
    return tuple(within)


def _restore_numeric(values, mask, dtype):
    """An array of ``dtype`` from decoded values, ``mask`` marking missing cells.

    A NumPy integer column that receives missing values becomes the matching
    pandas nullable integer array (``Int64``, ``UInt8``, ...), as in
    :class:`TableEncoder`.
    """
    has_missing = bool(mask.any())
    if is_temporal(dtype):
        return temporal_array(values, mask, dtype)
    if isinstance(dtype, np.dtype):
        if dtype.kind in "iu":
            if not has_missing:
                return values.astype(dtype)
            return pd.arrays.IntegerArray(np.where(mask, 0, values).astype(dtype), mask)
        values = values.astype(dtype)
        values[mask] = np.nan
        return values
    if isinstance(dtype, pd.core.dtypes.dtypes.BaseMaskedDtype):
        data = np.where(mask, 0, values).astype(dtype.numpy_dtype)
        array_type = (pd.arrays.IntegerArray if _is_integer_dtype(dtype)
                      else pd.arrays.FloatingArray)
        return array_type(data, mask.copy())
    series = pd.Series(values.astype(object))
    series[mask] = None
    return series.astype(dtype).array


def _is_scalar_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _check_dtype(dtype, name):
    """Refuse a column that is not numeric (bool, text, complex)."""
    if pd.api.types.is_complex_dtype(dtype):
        raise ValueError(f"Complex data not supported (column {name!r}).")
    if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype):
        raise TypeError(
            f"Column {name!r} has dtype {dtype}; DPKBinsDiscretizer bins "
            "numeric columns only (so do TableEncoder's bounds and binning). Remove "
            f"{name!r} from bounds/binning and leave it to TableEncoder (categories=... "
            "or nothing), or convert the column to numbers."
        )


def _weighted_quantiles(values, weights, quantiles):
    """``np.quantile`` (linear interpolation) of ``values`` repeated ``weights`` times.

    The two order statistics around each virtual index ``(n - 1) q`` are read
    from the cumulative counts and interpolated by ``np.quantile`` itself, so
    the result is the same float as on the repeated values.
    """
    n = int(weights.sum())
    ends = np.cumsum(weights)  # order statistic r (0-based) is values[searchsorted(ends, r)]
    virtual = (n - 1) * quantiles
    previous = np.floor(virtual)
    gamma = virtual - previous
    lower = values[np.searchsorted(ends, previous, side="right")]
    upper = values[np.searchsorted(ends, np.minimum(previous + 1, n - 1), side="right")]
    return np.array([np.quantile(np.array([a, b]), g) for a, b, g in zip(lower, upper, gamma)])


def _check_pair(pair, name):
    """Validate one ``(lo, hi)`` bounds pair for column ``name``."""
    if (isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__")
            or len(pair) != 2 or not all(_is_scalar_number(v) for v in pair)):
        raise ValueError(
            f"bounds for column {name!r} must be a (low, high) pair of numbers "
            f"or 'data'; got {pair!r}."
        )
    lo, hi = float(pair[0]), float(pair[1])
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi:
        raise ValueError(
            f"bounds for column {name!r} must be finite with low <= high; got {pair!r}."
        )
    return lo, hi


def _check_positive(value, param):
    if not _is_scalar_number(value) or not value > 0 or not np.isfinite(value):
        raise ValueError(f"{param} must be a positive finite number; got {value!r}.")


def _check_special(values, name):
    """Validate the declared special values of column ``name``: finite numbers."""
    if (isinstance(values, (str, bytes)) or not hasattr(values, "__len__")
            or not all(_is_scalar_number(v) for v in values)):
        raise ValueError(f"special_values for column {name!r} must be a list of numbers; "
                         f"got {values!r:.80}.")
    values = [float(v) for v in values]
    if not all(np.isfinite(values)):
        raise ValueError(f"special_values for column {name!r} must be finite; got {values}.")
    if len(set(values)) != len(values):
        raise ValueError(f"special_values for column {name!r} has duplicates: {values}.")
    return tuple(sorted(values))


def _is_number_list(spec):
    return (hasattr(spec, "__len__") and not isinstance(spec, (str, bytes, dict))
            and all(_is_scalar_number(v) for v in spec))


def _check_edges(edges, name):
    """Validate public ``bin_edges`` for column ``name``."""
    try:
        edges = np.asarray(edges, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"bin_edges for column {name!r} must be a list of numbers; got {edges!r:.80}."
        ) from None
    if edges.ndim != 1 or edges.size < 2:
        raise ValueError(
            f"bin_edges for column {name!r} must be 1-D with at least 2 edges; "
            f"got shape {edges.shape}."
        )
    if not np.isfinite(edges).all() or (np.diff(edges) <= 0).any():
        raise ValueError(
            f"bin_edges for column {name!r} must be finite and strictly increasing; "
            f"got {edges.tolist()}."
        )
    return edges


def _per_column(spec, param, names, is_single):
    """Spread a per-column parameter over the columns.

    ``spec`` is None, one value for every column (``is_single(spec)``), a
    sequence with one value per column, or a dict keyed by column name (or
    position).  Returns a dict {column index: value}.
    """
    n = len(names)
    if spec is None:
        return {}
    if isinstance(spec, dict):
        out = {}
        for key, value in spec.items():
            if key in names:
                out[names.index(key)] = value
            elif isinstance(key, numbers.Integral) and 0 <= key < n:
                out[int(key)] = value
            else:
                raise ValueError(
                    f"{param} names column {key!r}, which is not in X; X has the "
                    f"columns {names}."
                )
        return out
    if is_single(spec):
        return dict.fromkeys(range(n), spec)
    if isinstance(spec, (str, bytes)) or not hasattr(spec, "__len__"):
        raise TypeError(
            f"{param} must be a dict {{column: value}}, one value for every column "
            f"or a list with one value per column; got {spec!r:.80}."
        )
    if len(spec) != n:
        raise ValueError(
            f"{param} has {len(spec)} entries but X has {n} columns; give one "
            "entry per column or a dict {column: value}."
        )
    return {j: value for j, value in enumerate(spec) if value is not None}


def _is_pair(spec):
    return (isinstance(spec, str) and spec == "data") or (
        hasattr(spec, "__len__") and not isinstance(spec, (str, bytes, dict))
        and len(spec) == 2 and all(_is_scalar_number(v) for v in spec))


def _is_edge_list(spec):
    return (hasattr(spec, "__len__") and not isinstance(spec, (str, bytes, dict))
            and len(spec) > 0 and all(_is_scalar_number(v) for v in spec))


def _strategy_edges(strategy, lo, hi, n_bins):
    """Equal-width (``"uniform"``) or geometric (``"log"``) edges on [lo, hi]."""
    if strategy == "uniform":
        edges = np.linspace(lo, hi, n_bins + 1)
    elif lo > 0:
        edges = np.geomspace(lo, hi, n_bins + 1)
    else:  # shifted log: geometric widths of x - lo + 1
        edges = lo + np.expm1(np.linspace(0.0, np.log1p(hi - lo), n_bins + 1))
    edges[0], edges[-1] = lo, hi
    return edges


class DPKBinsDiscretizer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Bin numeric columns into integer codes without leaking the data's range.

    Bin edges come from public information (``bin_edges``, or ``bounds`` with
    equal-width or logarithmic bins: no privacy cost) or from differentially
    private quantiles within public ``bounds`` (``strategy="quantile"``,
    costing ``epsilon``).  The data's own min/max are used only with
    ``bounds="data"``, which emits a
    :class:`~dpsynth.exceptions.PrivacyLeakWarning`.

    Parameters
    ----------
    n_bins : int, default=10
        Number of bins per column for ``bounds``-based strategies.  Integer
        columns may get fewer bins: bins holding no integer are dropped (a
        warning says so).
    bounds : (float, float), list of pairs, dict, or "data", default=None
        Public range ``(low, high)`` of the values, e.g. from a data
        dictionary; never computed from the data you protect.  One pair for
        every column, a list with one pair per column, or a dict
        ``{column: (low, high)}`` (a value may also be ``"data"``).
        ``"data"`` uses each column's observed min/max, which discloses them:
        a :class:`~dpsynth.exceptions.PrivacyLeakWarning` is emitted.
    bin_edges : array-like, list of arrays, or dict, default=None
        Public, strictly increasing edges: one array for every column, one
        per column, or a dict ``{column: edges}``.  Takes precedence over
        ``bounds`` for the columns it covers.  Costs no privacy budget.
    strategy : {"uniform", "log", "quantile"}, default="uniform"
        How edges are placed between the bounds.  ``"uniform"``: equal widths.
        ``"log"``: geometric widths (for heavy tails); when ``low <= 0`` the
        widths are geometric in ``x - low + 1`` (a shifted log).
        ``"quantile"``: the ``k / n_bins`` quantiles, released by the
        exponential mechanism of Smith (2011) within the bounds (see
        :func:`dpsynth.mechanisms.dp_quantile`) and rounded to 4 significant
        digits (post-processing).
    epsilon : float, default=None
        Total privacy budget of ``strategy="quantile"`` (required there, and
        only allowed there).  It is split evenly over the columns binned by
        quantiles, and each column's share evenly over its ``n_bins - 1``
        interior quantiles (basic composition).  ``np.inf`` computes exact
        quantiles, for debugging only, with a ``PrivacyLeakWarning``.
    clip : bool, default=True
        Values outside the bounds go to the first/last bin (``True``) or
        raise a ``ValueError`` (``False``).  Clipping is what keeps each
        record's influence bounded.
    handle_missing : {"bin", "error"}, default="bin"
        ``"bin"``: missing values (NaN, None, pd.NA) get their own code
        ``n_bins_[j]`` and decode back to missing.  ``"error"``: raise.
    inverse : {"uniform", "midpoint", "dp_histogram"}, default="uniform"
        What :meth:`inverse_transform` returns for a bin: a uniform draw
        inside it (integers uniformly among the bin's integers that are not
        special or frequent values), its midpoint, or (``"dp_histogram"``) a
        draw from a finer DP histogram: each bin is cut into ``n_sub_bins``
        equal-width sub-bins whose counts are released with Laplace noise in
        ``fit`` (``inverse_epsilon``), a sub-bin is drawn by its noisy share
        and the value uniformly inside it.
    special_values : list of numbers, list of lists, or dict, default=None
        Public values with a bin of their own (point masses such as 0, a
        round number or a top code; also codes outside the bounds such as
        ``-9``): ``[0]`` for every column, one list per column or a dict
        ``{column: [values]}``.  A value equal to one of them is encoded to
        its bin and decodes to exactly that value.  Declared, so free.
    frequent_values : {None, "dp"}, default=None
        ``"dp"``: find the column's frequent exact values by DP (a Laplace
        stability-based histogram over the exact values within the bounds,
        see :func:`dpsynth.mechanisms.stable_histogram`) and give each
        released value a bin of its own, like ``special_values``.
    frequent_epsilon : float, default=None
        Budget of ``frequent_values="dp"`` (required there), split evenly
        over the columns.
    frequent_delta : float, default=None
        ``delta`` of ``frequent_values="dp"``, split evenly over the
        columns; ``None`` is the fixed ``1e-9`` (far below ``1 / n``).  Reported in
        ``delta_spent_``.
    max_frequent : int, default=5
        At most this many frequent values per column (the largest noisy
        counts above the threshold; post-processing).
    inverse_epsilon : float, default=None
        Budget of ``inverse="dp_histogram"`` (required there), split evenly
        over the columns.
    n_sub_bins : int, default=8
        Sub-bins per bin of ``inverse="dp_histogram"`` (integer bins: at
        most one per integer).
    decimals : int or dict, default=None
        Decoded float values are rounded to this many decimals (the
        column's declared precision); a dict sets it per column.  Integer
        columns always decode to integers.
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the DP quantiles (in ``fit``) and the draws of
        :meth:`inverse_transform`.  ``None``: OS entropy.

    Attributes
    ----------
    bin_edges_ : ndarray of shape (n_features,), dtype=object
        The edges of each column (float64 arrays).  Bins are
        ``[e_k, e_{k+1})``; for float columns the last bin is closed, for
        integer columns edges are integers and the last edge is the largest
        value + 1.
    n_bins_ : ndarray of shape (n_features,)
        Number of bins of each column (intervals, then one per special or
        frequent value); ``n_bins_[j]`` is the missing code.
    bounds_ : ndarray of shape (n_features, 2)
        Closed range of values covered by each column's bins.
    epsilon_spent_ : float
        Privacy budget spent by ``fit`` (DP quantiles, DP frequent values
        and the DP within-bin histograms; 0.0 without them); add it to the
        budget of anything else released from the same data (basic
        composition).
    delta_spent_ : float
        ``delta`` spent by ``fit`` (the DP frequent values; else 0.0); add it
        to the ``delta`` of anything else released from the same data.
    binnings_ : list of dpsynth.schema.Binning
        The public binning of each column (edges, special and frequent
        values, within-bin histograms, decimals).
    special_values_ : ndarray of shape (n_features,), dtype=object
        The point values of each column (declared special, then DP-frequent)
        in code order: their codes follow the intervals.
    leaks_ : list of list of str
        Per column, the :class:`~dpsynth.exceptions.PrivacyLeakWarning`
        messages of its fit (facts taken from the data without DP).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    See Also
    --------
    sklearn.preprocessing.KBinsDiscretizer : non-private binning.
    dpsynth.preprocessing.TableEncoder : bins columns inside a whole table.

    Notes
    -----
    The privacy unit is one record (add/remove one row).  Public bounds and
    edges cost nothing; DP quantiles cost ``epsilon`` in total.

    References
    ----------
    A. Smith, "Privacy-preserving statistical estimation with optimal
    convergence rates", STOC 2011.  N. Li, M. Lyu, D. Su and W. Yang,
    *Differential Privacy: From Theory to Practice*, Morgan & Claypool, 2016.

    Examples
    --------
    >>> import pandas as pd
    >>> from dpsynth.preprocessing import DPKBinsDiscretizer
    >>> X = pd.DataFrame({"age": [3, 25, 47, 99]})
    >>> binner = DPKBinsDiscretizer(4, bounds={"age": (0, 99)}, random_state=0)
    >>> binner.fit_transform(X).ravel().tolist()
    [0, 1, 1, 3]
    >>> back = binner.inverse_transform(binner.transform(X))
    >>> back.dtypes["age"]
    dtype('int64')
    """

    def __init__(self, n_bins=10, *, bounds=None, bin_edges=None, strategy="uniform",
                 epsilon=None, clip=True, handle_missing="bin", inverse="uniform",
                 special_values=None, frequent_values=None, frequent_epsilon=None,
                 frequent_delta=None, max_frequent=5, inverse_epsilon=None, n_sub_bins=8,
                 decimals=None, random_state=None):
        self.n_bins = n_bins
        self.bounds = bounds
        self.bin_edges = bin_edges
        self.strategy = strategy
        self.epsilon = epsilon
        self.clip = clip
        self.handle_missing = handle_missing
        self.inverse = inverse
        self.special_values = special_values
        self.frequent_values = frequent_values
        self.frequent_epsilon = frequent_epsilon
        self.frequent_delta = frequent_delta
        self.max_frequent = max_frequent
        self.inverse_epsilon = inverse_epsilon
        self.n_sub_bins = n_sub_bins
        self.decimals = decimals
        self.random_state = random_state

    # ----------------------------------------------------------- validation
    _parameter_constraints = {
        "n_bins": [Interval(numbers.Integral, 1, None, closed="left")],
        "bounds": [tuple, list, dict, StrOptions({"data"}), None],
        "bin_edges": ["array-like", dict, None],
        "strategy": [StrOptions(set(_STRATEGIES))],
        "epsilon": [Interval(numbers.Real, 0, np.inf, closed="right"), None],  # inf: debug
        "clip": ["boolean"],
        "handle_missing": [StrOptions({"bin", "error"})],
        "inverse": [StrOptions(set(_INVERSES))],
        "special_values": ["array-like", dict, None],
        "frequent_values": [StrOptions({"dp"}), None],
        "frequent_epsilon": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "frequent_delta": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "max_frequent": [Interval(numbers.Integral, 1, None, closed="left")],
        "inverse_epsilon": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "n_sub_bins": [Interval(numbers.Integral, 1, None, closed="left")],
        "decimals": [Interval(numbers.Integral, 0, None, closed="left"), dict, None],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
    }

    def _check_params(self):
        """Declarative checks of every parameter, then the ones between parameters."""
        self._validate_params()
        if self.inverse == "dp_histogram":
            if self.inverse_epsilon is None:
                raise ValueError(
                    "inverse='dp_histogram' releases a DP within-bin histogram and needs "
                    "a privacy budget: pass inverse_epsilon=<positive float>."
                )
            _check_positive(self.inverse_epsilon, "inverse_epsilon")
        elif self.inverse_epsilon is not None:
            raise ValueError("inverse_epsilon is only used with inverse='dp_histogram'.")
        if (not isinstance(self.n_sub_bins, numbers.Integral)
                or isinstance(self.n_sub_bins, bool) or self.n_sub_bins < 1):
            raise ValueError(f"n_sub_bins must be a positive integer; got {self.n_sub_bins!r}.")
        if self.frequent_values not in (None, "dp"):
            raise ValueError(f"frequent_values must be None or 'dp'; got "
                             f"{self.frequent_values!r}.")
        if self.frequent_values == "dp":
            if self.frequent_epsilon is None:
                raise ValueError(
                    "frequent_values='dp' releases frequent values by DP and needs a "
                    "privacy budget: pass frequent_epsilon=<positive float>."
                )
            _check_positive(self.frequent_epsilon, "frequent_epsilon")
            if self.frequent_delta is not None:
                _check_positive(self.frequent_delta, "frequent_delta")
                if not self.frequent_delta < 1:
                    raise ValueError(f"frequent_delta must be below 1; got "
                                     f"{self.frequent_delta!r}.")
            if (not isinstance(self.max_frequent, numbers.Integral)
                    or isinstance(self.max_frequent, bool) or self.max_frequent < 1):
                raise ValueError(f"max_frequent must be a positive integer; got "
                                 f"{self.max_frequent!r}.")
        elif self.frequent_epsilon is not None or self.frequent_delta is not None:
            raise ValueError("frequent_epsilon and frequent_delta are only used with "
                             "frequent_values='dp'.")
        if not isinstance(self.clip, (bool, np.bool_)):
            raise TypeError(f"clip must be True or False; got {self.clip!r}.")
        if self.strategy == "quantile":
            if self.epsilon is None:
                raise ValueError(
                    "strategy='quantile' computes DP quantiles and needs a privacy "
                    "budget: pass epsilon=<positive float>, or use public "
                    "bin_edges / strategy='uniform' at no privacy cost."
                )
            if not _is_scalar_number(self.epsilon) or not self.epsilon > 0:
                raise ValueError(f"epsilon must be a positive number; got {self.epsilon!r}.")
        elif self.epsilon is not None:
            raise ValueError(
                f"epsilon is only used with strategy='quantile'; got strategy="
                f"{self.strategy!r} and epsilon={self.epsilon!r}. Remove epsilon "
                "(public bounds cost no privacy budget) or use strategy='quantile'."
            )

    def _columns(self, X, reset):
        """Validate X; return its columns as float64 arrays (NaN = missing) and dtypes."""
        if isinstance(X, pd.DataFrame):
            validate_data(self, X, skip_check_array=True, reset=reset)
            if X.shape[0] == 0 or X.shape[1] == 0:
                raise ValueError(
                    f"X has shape {X.shape}; at least 1 sample and 1 feature are required."
                )
            columns, dtypes = [], []
            for name in X.columns:
                series = X[name]
                _check_dtype(series.dtype, name)
                columns.append(series.to_numpy(dtype=np.float64, na_value=np.nan))
                dtypes.append(series.dtype)
            return columns, dtypes
        X = validate_data(self, X, dtype="numeric", ensure_all_finite="allow-nan",
                          reset=reset)
        if X.dtype.kind == "b":
            raise TypeError(
                "X is boolean; DPKBinsDiscretizer bins numeric columns only."
            )
        values = X.astype(np.float64)
        return [values[:, j] for j in range(X.shape[1])], [X.dtype] * X.shape[1]

    def _names(self, n_features):
        if hasattr(self, "feature_names_in_"):
            return list(self.feature_names_in_)
        return list(range(n_features))

    def _check_missing(self, has_missing, names):
        if self.handle_missing == "error":
            for name, missing in zip(names, has_missing):
                if missing:
                    raise ValueError(
                        f"Column {name!r} has missing values and handle_missing="
                        "'error'; set handle_missing='bin' to give them their own code."
                    )

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Compute the bin edges of every column.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Numeric columns; missing values allowed with
            ``handle_missing="bin"``.
        y : None
            Ignored.

        Returns
        -------
        self : DPKBinsDiscretizer
        """
        self._check_params()
        columns, dtypes = self._columns(X, reset=True)
        names = self._names(len(columns))
        self._check_missing([np.isnan(values).any() for values in columns], names)
        counts = {}

        def column_counts(j):  # read by the value-reading steps only, once per column
            if j not in counts:
                counts[j] = value_counts(columns[j])
            return counts[j]

        self._fit_columns(names, dtypes, column_counts)
        self._output_frame = isinstance(X, pd.DataFrame)
        return self

    def _fit_counts(self, names, dtypes, counts):
        """Fit on the :class:`ValueCounts` of named columns instead of a table.

        The same bins, DP draws and fitted attributes as :meth:`fit` on a
        DataFrame holding those columns with those dtypes, for the same
        ``random_state``: every value-reading step depends on the multiset
        of a column's values only.  Used where the table is not in one
        place (partitions summed into value counts).

        Parameters
        ----------
        names : list of str
        dtypes : list of dtype
            The columns' dtypes (numeric, not bool).
        counts : list of ValueCounts
            Per column; ``values``/``counts`` may be ``None`` when the
            column's bins are declared (no step reads them).

        Returns
        -------
        self : DPKBinsDiscretizer
        """
        self._check_params()
        for name, dtype in zip(names, dtypes):
            _check_dtype(dtype, name)
        self.n_features_in_ = len(names)
        self.feature_names_in_ = np.asarray(names, dtype=object)
        self._check_missing([c.n_missing > 0 for c in counts], names)
        self._fit_columns(list(names), list(dtypes), lambda j: counts[j])
        self._output_frame = True
        return self

    def _fit_columns(self, names, dtypes, column_counts):
        """The fit proper: ``column_counts(j)`` gives column ``j``'s :class:`ValueCounts`."""
        edges_spec = _per_column(self.bin_edges, "bin_edges", names, _is_edge_list)
        bounds_spec = _per_column(self.bounds, "bounds", names, _is_pair)
        for j, name in enumerate(names):
            if j not in edges_spec and j not in bounds_spec:
                raise ValueError(
                    f"Column {name!r} has no public bounds. Binning needs a range known "
                    f"without looking at the data (e.g. from a data dictionary): pass "
                    f"bounds=(low, high), bounds={{{name!r}: (low, high)}} or "
                    f"bin_edges={{{name!r}: [...]}}. bounds='data' uses the data's "
                    "min/max, which leaks them (PrivacyLeakWarning)."
                )
        special_spec = _per_column(self.special_values, "special_values", names,
                                   _is_number_list)
        decimals_spec = _per_column(self.decimals, "decimals", names,
                                    lambda v: isinstance(v, numbers.Integral))
        for j, value in decimals_spec.items():
            if (not isinstance(value, numbers.Integral) or isinstance(value, bool)
                    or value < 0):
                raise ValueError(f"decimals for column {names[j]!r} must be a non-negative "
                                 f"integer; got {value!r}.")
        quantile_columns = [j for j in range(len(names)) if j not in edges_spec
                            and self.strategy == "quantile"]
        column_epsilon = (self.epsilon / len(quantile_columns)) if quantile_columns else 0.0
        rng = _generator(self.random_state)
        edges_list, spent = [], 0.0
        self.leaks_ = [[] for _ in names]
        for j, name in enumerate(names):
            if j in edges_spec:
                edges = _check_edges(edges_spec[j], name)
            else:
                lo, hi = self._column_bounds(bounds_spec[j], column_counts, name, j)
                if j in quantile_columns and lo < hi and self.n_bins > 1:
                    interior = self._quantile_edges(column_counts(j), lo, hi, column_epsilon,
                                                    rng, j)
                    spent += column_epsilon
                    edges = np.concatenate([[lo], interior, [hi]])
                else:
                    edges = _strategy_edges(
                        "uniform" if self.strategy == "quantile" else self.strategy,
                        lo, hi, self.n_bins)
            edges = _snap_edges(edges, dtypes[j])
            if len(edges) < 2:
                raise ValueError(
                    f"The bounds of column {name!r} contain no value of its dtype "
                    f"({dtypes[j]}); give bounds that include at least one integer."
                )
            if len(edges) - 1 < self.n_bins and j not in edges_spec:
                warnings.warn(
                    f"Column {name!r} gets {len(edges) - 1} bin(s) instead of "
                    f"{self.n_bins}: bins that cannot hold any value of its dtype "
                    f"({dtypes[j]}) were removed.", UserWarning, stacklevel=3)
            edges_list.append(edges)
        integer = [_is_integer_dtype(d) for d in dtypes]
        n_columns = len(names)
        binnings = []
        delta_spent = 0.0
        frequent_delta = (DEFAULT_FREQUENT_DELTA if self.frequent_delta is None
                          else float(self.frequent_delta))
        for j, name in enumerate(names):
            special = _check_special(special_spec.get(j, ()), name)
            if integer[j] and not all(float(v).is_integer() for v in special):
                raise ValueError(f"special_values for the integer column {name!r} must be "
                                 f"integers; got {list(special)}.")
            decimals = decimals_spec.get(j)
            binning = Binning(tuple(edges_list[j]), integer[j], "uniform", bool(self.clip),
                              special=special,
                              decimals=None if integer[j] or decimals is None
                              else int(decimals))
            if self.frequent_values == "dp":
                epsilon_j = float(self.frequent_epsilon) / n_columns
                delta_j = frequent_delta / n_columns
                frequent = self._frequent_values(column_counts(j), binning, epsilon_j,
                                                 delta_j, rng)
                spent += epsilon_j
                delta_spent += delta_j
                binning = Binning(binning.edges, binning.integer, "uniform", binning.clip,
                                  special=special, frequent=frequent,
                                  decimals=binning.decimals)
            if self.inverse == "dp_histogram":
                epsilon_j = float(self.inverse_epsilon) / n_columns
                observed = column_counts(j)
                within = within_histogram(observed.values, binning, self.n_sub_bins, epsilon_j,
                                          rng, name, weights=observed.counts)
                spent += epsilon_j
                binning = Binning(binning.edges, binning.integer, "dp_histogram",
                                  binning.clip, special=binning.special,
                                  frequent=binning.frequent, within=within,
                                  decimals=binning.decimals)
            elif self.inverse == "midpoint":
                binning = Binning(binning.edges, binning.integer, "midpoint", binning.clip,
                                  special=binning.special, frequent=binning.frequent,
                                  decimals=binning.decimals)
            binnings.append(binning)
        self.binnings_ = binnings
        self.bin_edges_ = np.empty(len(names), dtype=object)
        self.bin_edges_[:] = edges_list
        self.special_values_ = np.empty(len(names), dtype=object)
        self.special_values_[:] = [np.asarray(b.points, dtype=np.float64) for b in binnings]
        self.n_bins_ = np.array([len(b.labels) for b in binnings], dtype=np.int64)
        self._integer = integer
        self.bounds_ = np.array([_value_range(e, i) for e, i in zip(edges_list, self._integer)])
        self._dtypes = dtypes
        self.epsilon_spent_ = float(spent)
        self.delta_spent_ = float(delta_spent)

    def _frequent_values(self, counts, binning, epsilon, delta, rng):
        """DP frequent exact values of one column (stability-based histogram).

        Candidates are the column's values as they are binned: inside the
        public range (clipped into it with ``clip=True``), rounded to the
        declared ``decimals``, declared special values excluded (they have
        their bins already).  Each record contributes one value; ``counts``
        is the column's :class:`ValueCounts`.
        """
        observed, weights = counts.values, counts.counts
        lo, hi = _value_range(binning.edge_array, binning.integer)
        if binning.clip:
            observed = np.clip(observed, lo, hi)
        else:
            inside = (observed >= lo) & (observed <= hi)
            observed, weights = observed[inside], weights[inside]
        if binning.decimals is not None:
            observed = np.round(observed, binning.decimals)
        if binning.special:
            kept = ~np.isin(observed, np.asarray(binning.special))
            observed, weights = observed[kept], weights[kept]
        released, noisy = stable_histogram(observed, epsilon, delta, rng, weights=weights)
        top = np.argsort(-noisy, kind="stable")[: int(self.max_frequent)]
        return tuple(float(v) for v in np.sort(released[top]))

    def _column_bounds(self, spec, column_counts, name, j):
        if isinstance(spec, str) and spec == "data":
            observed = column_counts(j).values  # sorted
            if observed.size == 0:
                raise ValueError(
                    f"Column {name!r} has only missing values, so bounds='data' has "
                    "nothing to use; give public bounds."
                )
            message = (f"Column {name!r}: bounds='data' uses the data's min and max, which "
                       "discloses them; give public bounds to avoid this leak.")
            self.leaks_[j].append(message)
            warnings.warn(message, PrivacyLeakWarning, stacklevel=4)
            return float(observed[0]), float(observed[-1])
        return _check_pair(spec, name)

    def _quantile_edges(self, counts, lo, hi, epsilon, rng, j):
        quantiles = np.arange(1, self.n_bins) / self.n_bins
        if np.isinf(epsilon):
            message = ("epsilon=inf computes exact quantiles: no privacy. Use it for "
                       "debugging only.")
            self.leaks_[j].append(message)
            warnings.warn(message, PrivacyLeakWarning, stacklevel=4)
            observed, weights = merge_weights(np.clip(counts.values, lo, hi), counts.counts)
            if observed.size == 0:
                return np.linspace(lo, hi, self.n_bins + 1)[1:-1]
            return _weighted_quantiles(observed, weights, quantiles)
        edges = dp_quantiles(counts.values, quantiles, (lo, hi), epsilon, rng,
                             weights=counts.counts)
        # 4 significant digits: far finer than the DP noise, readable labels;
        # post-processing, so free.
        return np.clip([float(f"{e:.4g}") for e in edges], lo, hi)

    # ------------------------------------------------------------ transform
    def transform(self, X):
        """Bin ``X``: one int64 code per value, missing values -> ``n_bins_[j]``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of int64 of shape (n_samples, n_features)
            Use ``set_output(transform="pandas")`` for a DataFrame.
        """
        check_is_fitted(self)
        columns, _ = self._columns(X, reset=False)
        names = self._names(len(columns))
        self._check_missing([np.isnan(values).any() for values in columns], names)
        codes = np.empty((columns[0].size, len(columns)), dtype=np.int64)
        for j, values in enumerate(columns):
            col = encode_binning(values, self.binnings_[j], names[j])
            col[col < 0] = self.n_bins_[j]
            codes[:, j] = col
        return codes

    def inverse_transform(self, X, *, random_state=None):
        """Map codes back to values inside their bins, in the original dtypes.

        Parameters
        ----------
        X : array-like of int of shape (n_samples, n_features)
            Codes from :meth:`transform` (or synthetic ones); ``n_bins_[j]``
            means missing.
        random_state : int, RandomState or Generator, default=None
            Seed of the within-bin draws; ``None`` uses ``self.random_state``.

        Returns
        -------
        DataFrame (if fitted on one) or ndarray of shape (n_samples, n_features)
            Integer columns get integers within the bounds; a NumPy integer
            column that receives missing values becomes pandas nullable
            (``Int64``...) in a DataFrame, float with NaN in an ndarray.
        """
        check_is_fitted(self)
        codes = np.asarray(X.to_numpy() if isinstance(X, pd.DataFrame) else X)
        if codes.ndim != 2 or codes.shape[1] != len(self.n_bins_):
            raise ValueError(
                f"Expected codes of shape (n_samples, {len(self.n_bins_)}); got "
                f"shape {codes.shape}."
            )
        if codes.dtype.kind not in "iuf" or (
                codes.dtype.kind == "f" and not np.array_equal(codes, np.round(codes))):
            raise TypeError(f"Codes must be integers; got {codes.dtype} values.")
        codes = codes.astype(np.int64)
        rng = _generator(self.random_state if random_state is None else random_state)
        names = self._names(codes.shape[1])
        decoded = [self._decode_column(codes[:, j], j, name, rng)
                   for j, name in enumerate(names)]
        if self._output_frame:
            return pd.DataFrame(
                {name: _restore_numeric(values, mask, dtype) for name, (values, mask), dtype
                 in zip(names, decoded, self._dtypes)},
                index=pd.RangeIndex(codes.shape[0]))
        dtype = self._dtypes[0]
        if any(mask.any() for _, mask in decoded) and dtype.kind in "iu":
            dtype = np.dtype(np.float64)
        return np.column_stack([_restore_numeric(values, mask, dtype)
                                for values, mask in decoded])

    def _decode_column(self, col, j, name, rng):
        """Decoded values (int64 or float64) and the missing mask of column ``j``."""
        n_bins = self.n_bins_[j]
        top = n_bins if self.handle_missing == "bin" else n_bins - 1
        bad = (col < 0) | (col > top)
        if bad.any():
            raise ValueError(
                f"Code {col[bad][0]} is out of range for column {name!r} "
                f"(valid: 0..{top})."
            )
        mask = col == n_bins
        values = decode_binning(np.where(mask, 0, col), self.binnings_[j], rng)
        return values, mask

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.transformer_tags.preserves_dtype = []
        return tags
