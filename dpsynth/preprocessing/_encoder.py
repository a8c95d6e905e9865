"""Whole-table encoder: DataFrame <-> int32 code matrix.

Every column is encoded as categorical: its own values, or, for numeric
columns given public ``bounds`` (or a binner), the bins of a
:class:`~dpsynth.preprocessing.DPKBinsDiscretizer`.  Each column ``j`` gets the codes
``0 .. n_values_[j] - 1``; with ``missing="category"`` the last code is the
column's missing value.  A (column, code) pair is one *attribute*, identified
by the integer ``offsets_[j] + code``; the Cython kernels work on those ids.

The encoder is fitted on private data, so its category lists are private:
only the values that survive the DP release (or that the user declared public
with ``categories=``) may leave the process.  :meth:`TableEncoder.public_schema`
exports exactly such a restricted, JSON-serialisable description, and
:meth:`TableEncoder.from_schema` rebuilds a fitted encoder from it.  Bin
edges are public (public bounds, or DP quantiles paid for in
``epsilon_spent_``), so binned columns are exported whole.
"""

import numbers

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..utils._validation import check_table, is_missing_scalar
from ._discretizer import (
    _STRATEGIES,
    DPKBinsDiscretizer,
    _bin_labels,
    _decode,
    _encode,
    _generator,
    _restore_numeric,
)

__all__ = ["TableEncoder"]

_MISSING_MARKERS = {"none": None, "nan": np.nan, "na": pd.NA, "nat": pd.NaT}


def _marker_name(value):
    if value is None:
        return "none"
    if value is pd.NA:
        return "na"
    if value is pd.NaT or isinstance(value, np.datetime64):
        return "nat"
    return "nan"


def _first_missing_marker(series, mask):
    """The missing marker an object column used first (None, NaN, pd.NA, NaT)."""
    if series.dtype != object or not mask.any():
        return "nan"
    return _marker_name(series[mask.to_numpy()].iloc[0])


def _sort_values(values):
    try:
        return sorted(values)
    except TypeError:
        return list(values)


def _python_scalar(value):
    """numpy scalar -> the equivalent Python scalar (JSON-friendly)."""
    if isinstance(value, np.datetime64):
        return pd.Timestamp(value)
    if isinstance(value, np.timedelta64):
        return pd.Timedelta(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


class TableEncoder(TransformerMixin, BaseEstimator):
    """Encode a table's columns as integer category codes (or bins), and back.

    Parameters
    ----------
    categories : "auto", dict or list, default="auto"
        Public category lists.  ``"auto"`` learns them from the data (they
        then stay private; the DP release decides which ones are published).
        A dict maps column names to value lists; a list gives one value list
        per column in order.  Columns absent from a dict are learned.
        Declared lists are public information: the synthesizer does not pay
        privacy budget for them.
    missing : {"category", "absent"}, default="category"
        ``"category"``: missing values (None, NaN, pd.NA, NaT) are one more
        category of their column.  ``"absent"``: the SDS semantics, a missing
        cell is empty, encoded as ``-1`` and never counted.
    handle_unknown : {"error", "missing"}, default="error"
        What to do with a value outside a declared category list: raise, or
        treat it as missing.
    max_float_values : int, default=32
        A float column with more distinct values than this (and no declared
        categories or bounds) is rejected: give it public ``bounds``.
    bounds : dict, default=None
        ``{column: (low, high)}``: public ranges of numeric columns, e.g. from
        a data dictionary.  These columns are binned (their codes are bin
        indices); a value may be ``"data"`` to use the data's min/max (leaks
        them: :class:`~dpsynth.exceptions.PrivacyLeakWarning`).  Columns with
        declared ``categories`` stay categorical even if named here.
    n_bins : int, default=10
        Number of bins of each column binned by a strategy name.
    binning : {"uniform", "log", "quantile"} or dict, default="uniform"
        How the columns in ``bounds`` are binned (see
        :class:`~dpsynth.preprocessing.DPKBinsDiscretizer`, ``strategy``).  A
        dict ``{column: strategy name or DPKBinsDiscretizer}`` sets it per
        column; columns of ``bounds`` missing from the dict use
        ``"uniform"``, and a column named only in the dict is binned too.  A
        ``DPKBinsDiscretizer`` is cloned and fitted on its column alone, with
        its own ``bounds``/``bin_edges``/``epsilon`` (it takes
        ``bounds[column]`` if it has neither bounds nor edges); its
        ``handle_missing`` is set to ``"bin"`` since ``missing`` governs
        missing values here.
    binning_epsilon : float, default=None
        Privacy budget of the DP quantiles of the columns binned with
        ``"quantile"`` by name; required with them, split evenly over them.
    random_state : int, RandomState or Generator, default=None
        Seeds the DP quantiles and the within-bin draws of
        :meth:`inverse_transform`.

    Attributes
    ----------
    columns_ : list of dict
        Per-column state: ``name``, ``dtype`` (pandas dtype), ``values``
        (non-missing values in code order), ``missing_marker``, ``public``.
        Binned columns have ``values`` = bin labels (``"[0, 12]"`` for an
        integer bin holding 0..12, ``"[0, 2.5)"`` for a float bin, the last
        float bin closed) and a ``binning`` dict: ``edges``, ``integer``,
        ``inverse``, ``clip``.
    epsilon_spent_ : float
        Privacy budget spent on DP quantiles while fitting (0.0 without
        them).  A synthesizer adds it to its own spending (basic composition).
    n_values_ : ndarray of shape (n_features,)
        Number of codes of each column (including the missing code).
    offsets_ : ndarray of shape (n_features + 1,)
        Attribute id of code 0 of each column; ``offsets_[-1]`` is the total
        number of attributes.
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Examples
    --------
    >>> import pandas as pd
    >>> from dpsynth.preprocessing import TableEncoder
    >>> X = pd.DataFrame({"a": ["x", "y", None], "b": [1, 2, 2]})
    >>> enc = TableEncoder().fit(X)
    >>> enc.transform(X)
    array([[0, 0],
           [1, 1],
           [2, 1]], dtype=int32)
    >>> enc.inverse_transform(enc.transform(X)).equals(X)
    True
    """

    _parameter_constraints = {}

    def __init__(self, *, categories="auto", missing="category",
                 handle_unknown="error", max_float_values=32, bounds=None, n_bins=10,
                 binning="uniform", binning_epsilon=None, random_state=None):
        self.categories = categories
        self.missing = missing
        self.handle_unknown = handle_unknown
        self.max_float_values = max_float_values
        self.bounds = bounds
        self.n_bins = n_bins
        self.binning = binning
        self.binning_epsilon = binning_epsilon
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def _check_params(self, names):
        if self.missing not in ("category", "absent"):
            raise ValueError(
                f"missing must be 'category' or 'absent'; got {self.missing!r}."
            )
        if self.handle_unknown not in ("error", "missing"):
            raise ValueError(
                "handle_unknown must be 'error' or 'missing'; got "
                f"{self.handle_unknown!r}."
            )
        if (not isinstance(self.max_float_values, numbers.Integral)
                or self.max_float_values < 1):
            raise ValueError(
                "max_float_values must be a positive integer; got "
                f"{self.max_float_values!r}."
            )
        cats = self.categories
        if isinstance(cats, str) and cats == "auto" or cats is None:
            return {}
        if isinstance(cats, dict):
            unknown = [c for c in cats if c not in names]
            if unknown:
                raise ValueError(
                    f"categories names column(s) {unknown} that are not in X; "
                    f"X has columns {list(names)}."
                )
            declared = dict(cats)
        elif isinstance(cats, (list, tuple)):
            if len(cats) != len(names):
                raise ValueError(
                    f"categories has {len(cats)} list(s) but X has {len(names)} "
                    "columns; give one list per column or a dict by column name."
                )
            declared = dict(zip(names, cats))
        else:
            raise TypeError(
                "categories must be 'auto', a dict {column: values} or a list of "
                f"value lists; got {type(cats).__name__}."
            )
        checked = {}
        for name, values in declared.items():
            if isinstance(values, str) and values == "auto":
                continue
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                raise TypeError(
                    f"categories[{name!r}] must be a list of values; got {values!r}."
                )
            values = [_python_scalar(v) for v in values]
            if any(is_missing_scalar(v) for v in values):
                raise ValueError(
                    f"categories[{name!r}] contains a missing value; missing "
                    "values are handled by the `missing` parameter."
                )
            try:
                if len(set(values)) != len(values):
                    raise ValueError(
                        f"categories[{name!r}] has duplicate values."
                    )
            except TypeError:
                raise TypeError(
                    f"categories[{name!r}] contains unhashable values."
                ) from None
            if not values:
                raise ValueError(f"categories[{name!r}] is empty.")
            checked[name] = values
        return checked

    def _binners(self, names, declared):
        """One unfitted DPKBinsDiscretizer per binned column, by name."""
        bounds = {} if self.bounds is None else self.bounds
        if not isinstance(bounds, dict):
            raise TypeError(
                "bounds must be a dict {column: (low, high)}; got "
                f"{type(bounds).__name__}."
            )
        if isinstance(self.binning, dict):
            per_column, default = self.binning, "uniform"
        elif isinstance(self.binning, str) and self.binning in _STRATEGIES:
            per_column, default = {}, self.binning
        else:
            raise ValueError(
                f"binning must be one of {_STRATEGIES} or a dict {{column: strategy "
                f"or DPKBinsDiscretizer}}; got {self.binning!r}."
            )
        for param, spec in (("bounds", bounds), ("binning", per_column)):
            unknown = [c for c in spec if c not in names]
            if unknown:
                raise ValueError(
                    f"{param} names column(s) {unknown} that are not in X; X has "
                    f"columns {list(names)}."
                )
        for name, spec in per_column.items():
            if not (isinstance(spec, DPKBinsDiscretizer)
                    or (isinstance(spec, str) and spec in _STRATEGIES)):
                raise ValueError(
                    f"binning[{name!r}] must be one of {_STRATEGIES} or a "
                    f"DPKBinsDiscretizer; got {spec!r}."
                )
        binned = [c for c in names
                  if (c in bounds or c in per_column) and c not in declared]
        by_quantile = [c for c in binned if per_column.get(c, default) == "quantile"]
        if by_quantile and self.binning_epsilon is None:
            raise ValueError(
                f"Columns {by_quantile} are binned by DP quantiles, which need a "
                "privacy budget: pass binning_epsilon=<positive float>, or use "
                "binning='uniform' at no privacy cost."
            )
        if self.binning_epsilon is not None:
            if not by_quantile:
                raise ValueError(
                    "binning_epsilon is only used for columns binned with "
                    "'quantile'; remove it or set binning='quantile'."
                )
            if (not isinstance(self.binning_epsilon, numbers.Real)
                    or not self.binning_epsilon > 0):
                raise ValueError(
                    "binning_epsilon must be a positive number; got "
                    f"{self.binning_epsilon!r}."
                )
        rng = check_random_state(self.random_state)
        binners = {}
        for name in binned:
            spec = per_column.get(name, default)
            seed = rng.randint(np.iinfo(np.int32).max)
            if isinstance(spec, DPKBinsDiscretizer):
                binner = clone(spec).set_params(handle_missing="bin")
                if binner.bounds is None and binner.bin_edges is None and name in bounds:
                    binner.set_params(bounds=bounds[name])
                if binner.random_state is None:
                    binner.set_params(random_state=seed)
            elif name not in bounds:
                raise ValueError(
                    f"Column {name!r} is binned with {spec!r} but has no public "
                    f"bounds: add bounds={{{name!r}: (low, high)}}."
                )
            else:
                epsilon = self.binning_epsilon / len(by_quantile) if spec == "quantile" else None
                binner = DPKBinsDiscretizer(self.n_bins, bounds=bounds[name], strategy=spec,
                                            epsilon=epsilon, random_state=seed)
            binners[name] = binner
        return binners

    def _fit_binned_column(self, name, series, binner):
        binner.fit(series.to_frame())
        edges = binner.bin_edges_[0]
        integer = binner._integer[0]
        return {
            "name": name,
            "dtype": series.dtype,
            "values": _bin_labels(edges, integer),
            "missing_marker": "nan",
            "public": True,
            "binning": {"edges": edges, "integer": integer,
                        "inverse": binner.inverse, "clip": bool(binner.clip)},
        }

    def _fit_column(self, name, series, declared):
        mask = series.isna()
        dtype = series.dtype
        if declared is not None:
            values = declared
        elif isinstance(dtype, pd.CategoricalDtype):
            values = [_python_scalar(v) for v in dtype.categories]
        else:
            observed = pd.unique(series[~mask])
            if (pd.api.types.is_float_dtype(dtype)
                    and len(observed) > self.max_float_values):
                raise ValueError(
                    f"Column {name!r} is a float column with {len(observed)} "
                    "distinct values; dpsynth encodes every column as "
                    "categorical, so bin it first with public bounds, e.g. "
                    f"TableEncoder(bounds={{{name!r}: (low, high)}}) or "
                    "dpsynth.preprocessing.DPKBinsDiscretizer, or declare its "
                    "categories."
                )
            values = _sort_values(_python_scalar(v) for v in observed)
        return {
            "name": name,
            "dtype": dtype,
            "values": list(values),
            "missing_marker": _first_missing_marker(series, mask),
            "public": declared is not None,
        }

    def fit(self, X, y=None):
        """Learn each column's categories (or take the declared ones).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self : TableEncoder
        """
        frame, was_frame = check_table(X)
        names = list(frame.columns)
        declared = self._check_params(names)
        binners = self._binners(names, declared)
        self.columns_ = [
            self._fit_binned_column(name, frame[name], binners[name]) if name in binners
            else self._fit_column(name, frame[name], declared.get(name))
            for name in names
        ]
        self.epsilon_spent_ = float(sum(b.epsilon_spent_ for b in binners.values()))
        self._finish_fit(names, was_frame)
        # transform once to surface values outside declared categories now
        self.transform(frame)
        return self

    def _finish_fit(self, names, was_frame):
        extra = 1 if self.missing == "category" else 0
        self.n_values_ = np.array(
            [len(c["values"]) + extra for c in self.columns_], dtype=np.int64
        )
        self.offsets_ = np.concatenate([[0], np.cumsum(self.n_values_)]).astype(np.int64)
        self.n_features_in_ = len(names)
        self.feature_names_in_ = np.asarray(names, dtype=object)
        self._output_frame = was_frame
        self._indexes = [pd.Index(c["values"], dtype=object) for c in self.columns_]

    # ------------------------------------------------------------ transform
    @property
    def missing_codes_(self):
        """Code of the missing value of each column (-1 with ``missing="absent"``)."""
        check_is_fitted(self, "columns_")
        if self.missing == "absent":
            return np.full(len(self.columns_), -1, dtype=np.int64)
        return self.n_values_ - 1

    def _check_columns(self, frame):
        names = list(frame.columns)
        expected = list(self.feature_names_in_)
        if len(names) != len(expected):
            raise ValueError(f"X has {len(names)} features, but {type(self).__name__} is "
                             f"expecting {len(expected)} features as input.")
        if names != expected:
            if sorted(names) == sorted(expected):
                raise ValueError(
                    "The columns of X are in a different order than at fit; "
                    f"expected {expected}."
                )
            missing = [c for c in expected if c not in names]
            extra = [c for c in names if c not in expected]
            raise ValueError(
                f"X has different columns than at fit: missing {missing}, "
                f"unexpected {extra}."
            )

    def transform(self, X):
        """Encode X as an ``int32`` code matrix of shape (n_samples, n_features).

        Missing cells get the column's missing code (``missing="category"``)
        or ``-1`` (``missing="absent"``).
        """
        check_is_fitted(self, "columns_")
        frame, _ = check_table(X)
        if not self._output_frame and not isinstance(X, pd.DataFrame):
            frame.columns = list(self.feature_names_in_)[: frame.shape[1]]
        self._check_columns(frame)
        codes = np.empty(frame.shape, dtype=np.int32)
        missing_codes = self.missing_codes_
        for j, (column, index) in enumerate(zip(self.columns_, self._indexes)):
            series = frame[column["name"]]
            if "binning" in column:
                codes[:, j] = self._bin_column(column, series, missing_codes[j])
                continue
            mask = series.isna().to_numpy()
            values = series.astype(object).to_numpy()
            col = index.get_indexer(values).astype(np.int32)
            unknown = (col < 0) & ~mask
            if unknown.any():
                bad = values[unknown][0]
                if self.handle_unknown == "error":
                    raise ValueError(
                        f"Column {column['name']!r} has the value {bad!r}, which "
                        "is not among its categories "
                        f"{column['values'][:10]}{'...' if len(column['values']) > 10 else ''}. "
                        "Add it to `categories` or set handle_unknown='missing'."
                    )
                mask = mask | unknown
            col[mask] = missing_codes[j]
            codes[:, j] = col
        return codes

    @staticmethod
    def _bin_column(column, series, missing_code):
        dtype = series.dtype
        if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype):
            raise TypeError(
                f"Column {column['name']!r} is binned but has dtype {dtype}; give "
                "it as numbers."
            )
        binning = column["binning"]
        col = _encode(series.to_numpy(dtype=np.float64, na_value=np.nan), binning["edges"],
                      binning["integer"], binning["clip"], column["name"])
        col[col < 0] = missing_code
        return col

    def inverse_transform(self, X, *, random_state=None):
        """Decode a code matrix back into a table with the original dtypes.

        Binned columns get a value inside each bin: a uniform draw (integers
        among the bin's integers) or the midpoint, per the binner's
        ``inverse``.

        Parameters
        ----------
        X : array-like of int of shape (n_samples, n_features)
        random_state : int, RandomState or Generator, default=None
            Seed of the within-bin draws; ``None`` uses ``self.random_state``.

        Returns
        -------
        DataFrame (if fitted on one) or ndarray
            Column names, order and dtypes restored.  An integer or bool column
            that receives missing values becomes the matching pandas nullable
            dtype (``Int64``, ``boolean``).
        """
        check_is_fitted(self, "columns_")
        codes = np.asarray(X)
        if codes.ndim != 2 or codes.shape[1] != len(self.columns_):
            raise ValueError(
                f"Expected a code matrix with {len(self.columns_)} columns; got "
                f"shape {codes.shape}."
            )
        if not np.issubdtype(codes.dtype, np.integer):
            raise TypeError(f"Codes must be integers; got dtype {codes.dtype}.")
        rng = _generator(self.random_state if random_state is None else random_state)
        data = {}
        for j, column in enumerate(self.columns_):
            data[column["name"]] = self._decode_column(j, codes[:, j], rng)
        frame = pd.DataFrame(data, index=pd.RangeIndex(codes.shape[0]))
        if self._output_frame:
            return frame
        return frame.to_numpy()

    def _decode_column(self, j, col, rng):
        column = self.columns_[j]
        n_real = len(column["values"])
        bad = (col < -1) | (col >= self.n_values_[j])
        if self.missing == "category":
            bad |= col == -1
        if bad.any():
            raise ValueError(
                f"Code {col[bad][0]} is out of range for column {column['name']!r} "
                f"(valid: 0..{self.n_values_[j] - 1})."
            )
        mask = (col < 0) | (col >= n_real)
        if "binning" in column:
            binning = column["binning"]
            values = _decode(np.where(mask, 0, col), binning["edges"], binning["integer"],
                             binning["inverse"], rng)
            return pd.Series(_restore_numeric(values, mask, column["dtype"]))
        lookup = np.empty(n_real + 1, dtype=object)
        lookup[:n_real] = column["values"]
        lookup[n_real] = None
        values = lookup[np.where(mask, n_real, col)]
        return _restore_dtype(values, mask, column)

    # ------------------------------------------------------- attribute ids
    def attribute_name(self, attribute):
        """Return ``(column_name, value)`` of an attribute id (missing -> None).

        For a binned column the value is the bin's label, e.g. ``"[0, 12]"``.
        """
        check_is_fitted(self, "columns_")
        j = int(np.searchsorted(self.offsets_, attribute, side="right") - 1)
        if not 0 <= j < len(self.columns_):
            raise ValueError(f"Attribute id {attribute} is out of range.")
        code = int(attribute - self.offsets_[j])
        column = self.columns_[j]
        value = column["values"][code] if code < len(column["values"]) else None
        return column["name"], value

    @property
    def possible_attributes_(self):
        """Which attribute ids can occur given the public schema.

        The missing code of a column whose dtype cannot hold a missing value
        (numpy integers and booleans) is impossible; a public universe must
        not contain it, or noise could fabricate missing values there.
        """
        check_is_fitted(self, "columns_")
        possible = np.ones(int(self.offsets_[-1]), dtype=bool)
        if self.missing == "category":
            for j, column in enumerate(self.columns_):
                dtype = column["dtype"]
                if isinstance(dtype, np.dtype) and dtype.kind in "iub":
                    possible[self.offsets_[j + 1] - 1] = False
        return possible

    @property
    def attribute_columns_(self):
        """Column index of every attribute id, as an int32 array."""
        check_is_fitted(self, "columns_")
        return np.repeat(np.arange(len(self.columns_), dtype=np.int32), self.n_values_)

    # --------------------------------------------------- public metadata
    def public_schema(self, keep=None):
        """JSON-serialisable description of the encoder, restricted to public values.

        Parameters
        ----------
        keep : array-like of bool of shape (n_attributes,), default=None
            Which attributes may be published (e.g. those released by the DP
            aggregation).  Declared categories are always kept.  ``None`` keeps
            everything (only for public encoders).

        Returns
        -------
        dict
            ``{"missing": ..., "columns": [{"name", "dtype", "values",
            "missing_marker", "public", "has_missing", ...}], "epsilon_spent"}``.
            Binned columns add ``"binning": {"edges", "integer", "inverse",
            "clip"}``; their edges are public.  Values are
            in code order of the *new* schema; :meth:`code_map` gives the
            mapping from this encoder's codes.
        """
        check_is_fitted(self, "columns_")
        keep = self._keep_mask(keep)
        columns = []
        for j, column in enumerate(self.columns_):
            start = self.offsets_[j]
            n_real = len(column["values"])
            kept = [v for i, v in enumerate(column["values"])
                    if column["public"] or keep[start + i]]
            entry = {
                "name": column["name"],
                "dtype": _dtype_to_json(column["dtype"], column, kept),
                "values": [_value_to_json(v) for v in kept],
                # which marker (None, NaN, ...) the data used is private unless
                # the missing value itself was released
                "missing_marker": "nan",
                "public": bool(column["public"]),
            }
            if self.missing == "category":
                entry["has_missing"] = bool(keep[start + n_real])
                if entry["has_missing"]:
                    entry["missing_marker"] = column["missing_marker"]
            if "binning" in column:
                binning = column["binning"]
                cast = int if binning["integer"] else float
                entry["binning"] = {**binning,
                                    "edges": [cast(e) for e in binning["edges"]]}
            columns.append(entry)
        return {"missing": self.missing, "columns": columns,
                "epsilon_spent": self.epsilon_spent_}

    def _keep_mask(self, keep):
        n = int(self.offsets_[-1])
        if keep is None:
            return np.ones(n, dtype=bool)
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (n,):
            raise ValueError(f"keep must have shape ({n},); got {keep.shape}.")
        return keep

    def code_map(self, keep=None):
        """Map each attribute id to its id in :meth:`public_schema` (or -1)."""
        check_is_fitted(self, "columns_")
        keep = self._keep_mask(keep)
        new_ids = np.full(int(self.offsets_[-1]), -1, dtype=np.int64)
        next_id = 0
        for j, column in enumerate(self.columns_):
            start = self.offsets_[j]
            n_real = len(column["values"])
            for i in range(n_real):
                if column["public"] or keep[start + i]:
                    new_ids[start + i] = next_id
                    next_id += 1
            if self.missing == "category":
                if keep[start + n_real]:
                    new_ids[start + n_real] = next_id
                next_id += 1
        return new_ids

    @classmethod
    def from_schema(cls, schema):
        """Rebuild a fitted encoder from :meth:`public_schema` output."""
        if not isinstance(schema, dict) or "columns" not in schema:
            raise ValueError("Encoder schema must be a dict with a 'columns' list.")
        encoder = cls(missing=schema.get("missing", "category"))
        encoder._check_params([])
        columns = []
        names = []
        for entry in schema["columns"]:
            try:
                name = entry["name"]
                values = [_value_from_json(v, entry["dtype"]) for v in entry["values"]]
                column = {
                    "name": name,
                    "dtype": _dtype_from_json(entry["dtype"]),
                    "values": values,
                    "missing_marker": entry.get("missing_marker", "nan"),
                    "public": bool(entry.get("public", False)),
                }
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"Malformed encoder schema entry {entry!r:.200}: {exc}") from None
            if not isinstance(name, str) or name in names:
                raise ValueError(f"Malformed encoder schema: bad column name {name!r}.")
            if column["missing_marker"] not in _MISSING_MARKERS:
                raise ValueError(f"Malformed encoder schema: missing_marker of {name!r}.")
            if "binning" in entry:
                column["binning"] = _binning_from_json(entry["binning"], name)
                if _bin_labels(column["binning"]["edges"],
                               column["binning"]["integer"]) != values:
                    raise ValueError(
                        f"Malformed encoder schema: the bins of {name!r} do not "
                        "match its edges."
                    )
            names.append(name)
            columns.append(column)
        encoder.columns_ = columns
        encoder.epsilon_spent_ = float(schema.get("epsilon_spent", 0.0))
        encoder._finish_fit(names, True)
        return encoder

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.transformer_tags.preserves_dtype = []
        return tags


def _binning_from_json(spec, name):
    """Validate and rebuild a binned column's ``binning`` dict from a schema."""
    try:
        edges = np.asarray(spec["edges"], dtype=np.float64)
        binning = {"edges": edges, "integer": spec["integer"],
                   "inverse": spec["inverse"], "clip": spec["clip"]}
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"Malformed encoder schema: binning of {name!r}: {exc}") from None
    if (edges.ndim != 1 or edges.size < 2 or not np.isfinite(edges).all()
            or (np.diff(edges) < 0).any()
            or not isinstance(binning["integer"], bool)
            or not isinstance(binning["clip"], bool)
            or binning["inverse"] not in ("uniform", "midpoint")):
        raise ValueError(f"Malformed encoder schema: binning of {name!r}.")
    return binning


# ---------------------------------------------------------------- dtypes
def _restore_dtype(values, mask, column):
    """Build a Series of the column's original dtype from object values."""
    dtype = column["dtype"]
    has_missing = bool(mask.any())
    if isinstance(dtype, pd.CategoricalDtype):
        categories = dtype.categories
        return pd.Series(pd.Categorical(values, categories=categories,
                                        ordered=dtype.ordered))
    if isinstance(dtype, np.dtype):
        if dtype.kind in "iu":
            if not has_missing:
                return pd.Series(values.astype(dtype))
            nullable = f"{'UInt' if dtype.kind == 'u' else 'Int'}{dtype.itemsize * 8}"
            return pd.Series(pd.array(list(values), dtype=nullable))
        if dtype.kind == "b":
            if not has_missing:
                return pd.Series(values.astype(bool))
            return pd.Series(values, dtype="boolean")
        if dtype.kind == "f":
            values = values.copy()
            values[mask] = np.nan
            return pd.Series(values.astype(dtype))
        if dtype.kind in "mM":
            return pd.Series(pd.array(values, dtype=dtype))
        if dtype == object:
            marker = _MISSING_MARKERS[column["missing_marker"]]
            values = values.copy()
            values[mask] = marker
            return pd.Series(values, dtype=object)
    if isinstance(dtype, pd.StringDtype):
        values = values.copy()
        values[mask] = dtype.na_value
        return pd.Series(values, dtype=dtype)
    # pandas extension dtypes (Int64, boolean, Float64, datetime tz, ...)
    values = values.copy()
    values[mask] = None
    return pd.Series(pd.array(list(values), dtype=dtype))


def _dtype_to_json(dtype, column, kept):
    if isinstance(dtype, pd.CategoricalDtype):
        if column["public"]:
            categories = list(dtype.categories)
        else:  # the dtype's category list is private: publish released ones only
            kept_set = set(kept)
            categories = [c for c in dtype.categories if _python_scalar(c) in kept_set]
        return {"kind": "category",
                "categories": [_value_to_json(_python_scalar(c)) for c in categories],
                "categories_dtype": str(dtype.categories.dtype),
                "ordered": bool(dtype.ordered)}
    return {"kind": "plain", "name": str(dtype)}


def _dtype_from_json(spec):
    if not isinstance(spec, dict) or "kind" not in spec:
        raise ValueError(f"bad dtype {spec!r}")
    if spec["kind"] == "category":
        sub = {"kind": "plain", "name": spec.get("categories_dtype", "object")}
        categories = [_value_from_json(v, sub) for v in spec["categories"]]
        return pd.CategoricalDtype(
            pd.Index(categories, dtype=_dtype_from_json(sub) if categories else None),
            ordered=bool(spec["ordered"]))
    if spec["kind"] == "plain":
        return pd.api.types.pandas_dtype(spec["name"])
    raise ValueError(f"unknown dtype kind {spec['kind']!r}")


def _value_to_json(value):
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return {"datetime": pd.Timestamp(value).isoformat()}
    if isinstance(value, (pd.Timedelta, np.timedelta64)):
        return {"timedelta": pd.Timedelta(value).isoformat()}
    if isinstance(value, float) and not np.isfinite(value):
        return {"float": repr(value)}
    if isinstance(value, (str, bool, int, float)):
        return value
    raise TypeError(f"cannot serialise category value {value!r} of type {type(value).__name__}")


def _value_from_json(value, dtype_spec):
    if isinstance(value, dict):
        if "datetime" in value:
            return pd.Timestamp(value["datetime"])
        if "timedelta" in value:
            return pd.Timedelta(value["timedelta"])
        if "float" in value:
            return float(value["float"])
        raise ValueError(f"unknown value encoding {value!r}")
    if isinstance(value, (str, bool, int, float)):
        return value
    raise ValueError(f"bad category value {value!r}")
