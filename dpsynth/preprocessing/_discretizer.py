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
import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ..exceptions import PrivacyLeakWarning
from ..mechanisms import dp_quantiles
from ..utils._random import seed_sequence

__all__ = ["DPKBinsDiscretizer"]

_STRATEGIES = ("uniform", "log", "quantile")


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
        raise ValueError(
            f"Column {name!r} has {int(outside.sum())} value(s) outside its "
            f"bounds [{lo:g}, {hi:g}] (e.g. {values[outside][0]!r}). Widen the "
            "public bounds or set clip=True to put them in the end bins."
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
    if integer:
        lower, upper = lower.astype(np.int64), upper.astype(np.int64)
        if inverse == "midpoint":
            return (lower + upper - 1) // 2
        return rng.integers(lower, upper) if codes.size else lower
    if inverse == "midpoint":
        return (lower + upper) / 2.0
    drawn = rng.uniform(lower, upper) if codes.size else lower
    # uniform() may round up to the open upper edge; keep values in their bin
    last = codes == len(edges) - 2
    return np.where(last | (drawn < upper), drawn, np.nextafter(upper, -np.inf))


def _restore_numeric(values, mask, dtype):
    """An array of ``dtype`` from decoded values, ``mask`` marking missing cells.

    A NumPy integer column that receives missing values becomes the matching
    pandas nullable integer array (``Int64``, ``UInt8``, ...), as in
    :class:`TableEncoder`.
    """
    has_missing = bool(mask.any())
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
    inverse : {"uniform", "midpoint"}, default="uniform"
        What :meth:`inverse_transform` returns for a bin: a uniform draw
        inside it (integers uniformly among the bin's integers), which avoids
        spikes in the synthetic data, or its midpoint.
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
        Number of bins of each column; ``n_bins_[j]`` is the missing code.
    bounds_ : ndarray of shape (n_features, 2)
        Closed range of values covered by each column's bins.
    epsilon_spent_ : float
        Privacy budget spent by ``fit`` (0.0 unless DP quantiles were
        computed); add it to the budget of anything else released from the
        same data (basic composition).
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
                 random_state=None):
        self.n_bins = n_bins
        self.bounds = bounds
        self.bin_edges = bin_edges
        self.strategy = strategy
        self.epsilon = epsilon
        self.clip = clip
        self.handle_missing = handle_missing
        self.inverse = inverse
        self.random_state = random_state

    # ----------------------------------------------------------- validation
    def _check_params(self):
        if (not isinstance(self.n_bins, numbers.Integral) or isinstance(self.n_bins, bool)
                or self.n_bins < 1):
            raise ValueError(f"n_bins must be a positive integer; got {self.n_bins!r}.")
        if self.strategy not in _STRATEGIES:
            raise ValueError(
                f"strategy must be one of {_STRATEGIES}; got {self.strategy!r}."
            )
        if self.handle_missing not in ("bin", "error"):
            raise ValueError(
                f"handle_missing must be 'bin' or 'error'; got {self.handle_missing!r}."
            )
        if self.inverse not in ("uniform", "midpoint"):
            raise ValueError(
                f"inverse must be 'uniform' or 'midpoint'; got {self.inverse!r}."
            )
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
                dtype = series.dtype
                if pd.api.types.is_complex_dtype(dtype):
                    raise ValueError(f"Complex data not supported (column {name!r}).")
                if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype):
                    raise TypeError(
                        f"Column {name!r} has dtype {dtype}; DPKBinsDiscretizer bins "
                        "numeric columns only. Leave categorical columns to "
                        "TableEncoder(categories=...) or convert the column to numbers."
                    )
                columns.append(series.to_numpy(dtype=np.float64, na_value=np.nan))
                dtypes.append(dtype)
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

    def _check_missing(self, columns, names):
        if self.handle_missing == "error":
            for name, values in zip(names, columns):
                if np.isnan(values).any():
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
        self._check_missing(columns, names)
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
        quantile_columns = [j for j in range(len(names)) if j not in edges_spec
                            and self.strategy == "quantile"]
        column_epsilon = (self.epsilon / len(quantile_columns)) if quantile_columns else 0.0
        rng = _generator(self.random_state)
        edges_list, spent = [], 0.0
        for j, name in enumerate(names):
            if j in edges_spec:
                edges = _check_edges(edges_spec[j], name)
            else:
                lo, hi = self._column_bounds(bounds_spec[j], columns[j], name)
                if j in quantile_columns and lo < hi and self.n_bins > 1:
                    interior = self._quantile_edges(columns[j], lo, hi, column_epsilon, rng)
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
                    f"({dtypes[j]}) were removed.", UserWarning, stacklevel=2)
            edges_list.append(edges)
        self.bin_edges_ = np.empty(len(names), dtype=object)
        self.bin_edges_[:] = edges_list
        self.n_bins_ = np.array([len(e) - 1 for e in edges_list], dtype=np.int64)
        self._integer = [_is_integer_dtype(d) for d in dtypes]
        self.bounds_ = np.array([_value_range(e, i) for e, i in zip(edges_list, self._integer)])
        self._dtypes = dtypes
        self._output_frame = isinstance(X, pd.DataFrame)
        self.epsilon_spent_ = float(spent)
        return self

    def _column_bounds(self, spec, values, name):
        if isinstance(spec, str) and spec == "data":
            observed = values[~np.isnan(values)]
            if observed.size == 0:
                raise ValueError(
                    f"Column {name!r} has only missing values, so bounds='data' has "
                    "nothing to use; give public bounds."
                )
            warnings.warn(
                f"Column {name!r}: bounds='data' uses the data's min and max, which "
                "discloses them; give public bounds to avoid this leak.",
                PrivacyLeakWarning, stacklevel=3)
            return float(observed.min()), float(observed.max())
        return _check_pair(spec, name)

    def _quantile_edges(self, values, lo, hi, epsilon, rng):
        observed = np.clip(values[~np.isnan(values)], lo, hi)
        quantiles = np.arange(1, self.n_bins) / self.n_bins
        if np.isinf(epsilon):
            warnings.warn(
                "epsilon=inf computes exact quantiles: no privacy. Use it for "
                "debugging only.", PrivacyLeakWarning, stacklevel=3)
            if observed.size == 0:
                return np.linspace(lo, hi, self.n_bins + 1)[1:-1]
            return np.quantile(observed, quantiles)
        edges = dp_quantiles(observed, quantiles, (lo, hi), epsilon, rng)
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
        self._check_missing(columns, names)
        codes = np.empty((columns[0].size, len(columns)), dtype=np.int64)
        for j, values in enumerate(columns):
            col = _encode(values, self.bin_edges_[j], self._integer[j], self.clip, names[j])
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
        values = _decode(np.where(mask, 0, col), self.bin_edges_[j], self._integer[j],
                         self.inverse, rng)
        return values, mask

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.transformer_tags.preserves_dtype = []
        return tags
