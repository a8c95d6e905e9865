"""Which columns of a table are binned, and how: one DPKBinsDiscretizer per column.

Used by :class:`~dpsynth.preprocessing.TableEncoder`.  Bounds and edges are
public declarations; DP quantile edges are paid for with ``binning_epsilon``
(split evenly over the columns binned by quantiles) and reported in the
encoder's ``epsilon_spent_``.
"""

import numbers

from sklearn.base import clone

from ..schema import Column, default_missing_marker
from ..utils._random import seed_sequence
from ._discretizer import _STRATEGIES, DEFAULT_FREQUENT_DELTA, DPKBinsDiscretizer

__all__ = ["make_binners", "binned_column", "binned_column_from_counts", "binned_names"]


def _check_columns(param, spec, names):
    unknown = [c for c in spec if c not in names]
    if unknown:
        raise ValueError(f"{param} names column(s) {unknown} that are not in X; X has "
                         f"columns {list(names)}.")


def binned_names(names, bounds, binning, declared):
    """Columns a :class:`TableEncoder` bins: those in ``bounds`` or in a ``binning`` dict,
    unless their categories are declared (a public rule, from the parameters alone)."""
    per_column = binning if isinstance(binning, dict) else {}
    return [c for c in names if (c in (bounds or {}) or c in per_column) and c not in declared]


def make_binners(*, bounds, binning, binning_epsilon, n_bins, names, declared,
                 random_state, special_values=None, frequent_values=None,
                 frequent_epsilon=None, frequent_delta=None, inverse="uniform",
                 inverse_epsilon=None, decimals=None, auto=()):
    """One unfitted :class:`DPKBinsDiscretizer` per binned column, by name.

    Parameters are those of :class:`TableEncoder`; ``declared`` holds the
    columns with declared categories (never binned).  Each binner gets its
    own child of ``random_state``'s :class:`numpy.random.SeedSequence`.
    ``frequent_epsilon``/``frequent_delta`` and ``inverse_epsilon`` are
    split evenly over the binned columns.  ``auto`` names the candidates
    of ``numeric="auto"``, which may have ``special_values`` too.
    """
    bounds = {} if bounds is None else bounds
    if not isinstance(bounds, dict):
        raise TypeError(f"bounds must be a dict {{column: (low, high)}}; got "
                        f"{type(bounds).__name__}.")
    if isinstance(binning, dict):
        per_column, default = binning, "uniform"
    elif isinstance(binning, str) and binning in _STRATEGIES:
        per_column, default = {}, binning
    else:
        raise ValueError(f"binning must be one of {_STRATEGIES} or a dict {{column: strategy "
                         f"or DPKBinsDiscretizer}}; got {binning!r}.")
    _check_columns("bounds", bounds, names)
    _check_columns("binning", per_column, names)
    for name, spec in per_column.items():
        if not (isinstance(spec, DPKBinsDiscretizer)
                or (isinstance(spec, str) and spec in _STRATEGIES)):
            raise ValueError(f"binning[{name!r}] must be one of {_STRATEGIES} or a "
                             f"DPKBinsDiscretizer; got {spec!r}.")
    special_values = {} if special_values is None else special_values
    if not isinstance(special_values, dict):
        raise TypeError(f"special_values must be a dict {{column: [values]}}; got "
                        f"{type(special_values).__name__}.")
    _check_columns("special_values", special_values, names)
    if isinstance(decimals, dict):
        _check_columns("decimals", decimals, names)
    binned = binned_names(names, bounds, per_column, declared)
    unbinned = [c for c in special_values if c not in binned and c not in auto]
    if unbinned:
        raise ValueError(f"special_values names column(s) {unbinned} that are not binned; "
                         "give them public bounds (special values are bins of a numeric "
                         "column).")
    if frequent_values is not None and frequent_values != "dp":
        raise ValueError(f"frequent_values must be None or 'dp'; got {frequent_values!r}.")
    if (frequent_values == "dp") != (frequent_epsilon is not None):
        raise ValueError("frequent_values='dp' needs frequent_epsilon=<positive float> (and "
                         "frequent_epsilon is only used with frequent_values='dp').")
    if (inverse == "dp_histogram") != (inverse_epsilon is not None):
        raise ValueError("inverse='dp_histogram' needs inverse_epsilon=<positive float> (and "
                         "inverse_epsilon is only used with inverse='dp_histogram').")
    n_binned = max(len(binned), 1)
    extra = {"inverse": inverse}
    if frequent_values == "dp":
        extra.update(frequent_values="dp", frequent_epsilon=frequent_epsilon / n_binned,
                     frequent_delta=None if frequent_delta is None
                     else frequent_delta / n_binned)
        if frequent_delta is None:  # the default total, split
            extra["frequent_delta"] = DEFAULT_FREQUENT_DELTA / n_binned
    if inverse == "dp_histogram":
        extra["inverse_epsilon"] = inverse_epsilon / n_binned
    by_quantile = [c for c in binned if per_column.get(c, default) == "quantile"]
    if by_quantile and binning_epsilon is None:
        raise ValueError(
            f"Columns {by_quantile} are binned by DP quantiles, which need a privacy "
            "budget: pass binning_epsilon=<positive float>, or use binning='uniform' at "
            "no privacy cost.")
    if binning_epsilon is not None:
        if not by_quantile:
            raise ValueError("binning_epsilon is only used for columns binned with "
                             "'quantile'; remove it or set binning='quantile'.")
        if (isinstance(binning_epsilon, bool) or not isinstance(binning_epsilon, numbers.Real)
                or not binning_epsilon > 0):
            raise ValueError(f"binning_epsilon must be a positive number; got "
                             f"{binning_epsilon!r}.")
    children = seed_sequence(random_state).spawn(max(len(binned), 1))
    binners = {}
    for name, child in zip(binned, children):
        spec = per_column.get(name, default)
        if isinstance(spec, DPKBinsDiscretizer):
            binner = clone(spec).set_params(handle_missing="bin")
            if binner.bounds is None and binner.bin_edges is None and name in bounds:
                binner.set_params(bounds=bounds[name])
            if binner.random_state is None:
                binner.set_params(random_state=child)
        elif name not in bounds:
            raise ValueError(f"Column {name!r} is binned with {spec!r} but has no public "
                             f"bounds: add bounds={{{name!r}: (low, high)}}.")
        else:
            epsilon = binning_epsilon / len(by_quantile) if spec == "quantile" else None
            binner = DPKBinsDiscretizer(n_bins, bounds=bounds[name], strategy=spec,
                                        epsilon=epsilon, random_state=child)
        params = dict(extra) if not isinstance(spec, DPKBinsDiscretizer) else {}
        if name in special_values and binner.special_values is None:
            params["special_values"] = list(special_values[name])
        column_decimals = decimals.get(name) if isinstance(decimals, dict) else decimals
        if column_decimals is not None and binner.decimals is None:
            params["decimals"] = column_decimals
        binner.set_params(**params)
        binners[name] = binner
    return binners


def binned_column(name, series, binner):
    """Fit ``binner`` on ``series`` and describe the binned column (public facts only)."""
    binner.fit(series.to_frame())
    return _described(name, series.dtype, binner)


def binned_column_from_counts(name, dtype, counts, binner):
    """:func:`binned_column` from the column's
    :class:`~dpsynth.preprocessing._discretizer.ValueCounts` and its dtype: the same
    column, bins and DP draws as on the column itself (one entry per distinct value
    instead of one per record)."""
    binner._fit_counts([name], [dtype], [counts])
    return _described(name, dtype, binner)


def _described(name, dtype, binner):
    binning = binner.binnings_[0]
    return Column(name, dtype, tuple(binning.labels), declared=True,
                  missing_marker=default_missing_marker(dtype), binning=binning,
                  leaked=tuple(binner.leaks_[0]))
