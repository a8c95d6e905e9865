"""Which columns of a table are binned, and how: one DPKBinsDiscretizer per column.

Used by :class:`~dpsynth.preprocessing.TableEncoder`.  Bounds and edges are
public declarations; DP quantile edges are paid for with ``binning_epsilon``
(split evenly over the columns binned by quantiles) and reported in the
encoder's ``epsilon_spent_``.
"""

import numbers

from sklearn.base import clone

from ..schema import Binning, Column, default_missing_marker
from ..utils._random import seed_sequence
from ._discretizer import _STRATEGIES, DPKBinsDiscretizer

__all__ = ["make_binners", "binned_column"]


def _check_columns(param, spec, names):
    unknown = [c for c in spec if c not in names]
    if unknown:
        raise ValueError(f"{param} names column(s) {unknown} that are not in X; X has "
                         f"columns {list(names)}.")


def make_binners(*, bounds, binning, binning_epsilon, n_bins, names, declared,
                 random_state):
    """One unfitted :class:`DPKBinsDiscretizer` per binned column, by name.

    Parameters are those of :class:`TableEncoder`; ``declared`` holds the
    columns with declared categories (never binned).  Each binner gets its
    own child of ``random_state``'s :class:`numpy.random.SeedSequence`.
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
    binned = [c for c in names if (c in bounds or c in per_column) and c not in declared]
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
        binners[name] = binner
    return binners


def binned_column(name, series, binner):
    """Fit ``binner`` on ``series`` and describe the binned column (public facts only)."""
    binner.fit(series.to_frame())
    binning = Binning(tuple(binner.bin_edges_[0]), bool(binner._integer[0]), binner.inverse,
                      bool(binner.clip))
    return Column(name, series.dtype, tuple(binning.labels), declared=True,
                  missing_marker=default_missing_marker(series.dtype), binning=binning)
