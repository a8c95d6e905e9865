"""Joint integer encoding of tables, shared by the counting metrics.

Every metric in this package compares *values by equality*.  To do that fast,
each column of the tables being compared is factorized once on the
concatenation of the tables, so that equal values get the same integer code on
both sides whatever their dtypes (``int64`` vs ``Int64``, ``str`` vs
``object``...).  A column subset is then one integer key per row (mixed radix
over the codes), and a contingency table is one ``np.bincount``.
"""

from itertools import combinations
from math import comb

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

# Mixed-radix keys stay below this bound; beyond it they are compressed first.
_MAX_KEY = 2**62


def as_frame(X, name):
    """Return ``X`` as a DataFrame (2-D array-likes get columns 0..d-1)."""
    if isinstance(X, pd.DataFrame):
        return X
    if isinstance(X, pd.Series):
        raise ValueError(f"{name} must be 2-D (a DataFrame); got a Series.")
    # Lists become object arrays so that mixed rows keep their value types.
    array = X if isinstance(X, np.ndarray) else np.asarray(X, dtype=object)
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-D; got an array of shape {array.shape}.")
    return pd.DataFrame(array)


def align_columns(reference, other, columns=None, names=("real", "synth")):
    """Check that two tables have the same columns; return ``other`` reordered.

    Parameters
    ----------
    reference, other : DataFrame
    columns : list or None
        Columns to keep (default: all columns of ``reference``).
    names : tuple of str
        How to call the two tables in error messages.

    Returns
    -------
    reference, other : DataFrame
        Both restricted to ``columns`` in the same order.
    """
    for table, name in zip((reference, other), names):
        if table.columns.has_duplicates:
            duplicated = table.columns[table.columns.duplicated()].unique().tolist()
            raise ValueError(f"{name} has duplicated column names {duplicated}.")
    ref_cols, oth_cols = list(reference.columns), list(other.columns)
    missing = [c for c in ref_cols if c not in set(oth_cols)]
    extra = [c for c in oth_cols if c not in set(ref_cols)]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"{names[1]} lacks columns {missing}")
        if extra:
            parts.append(f"{names[1]} has extra columns {extra}")
        raise ValueError(f"{names[0]} and {names[1]} must have the same columns: "
                         + "; ".join(parts) + ".")
    if columns is None:
        columns = ref_cols
    else:
        columns = list(columns)
        unknown = [c for c in columns if c not in set(ref_cols)]
        if unknown:
            raise ValueError(f"columns {unknown} are not columns of {names[0]}.")
        if not columns:
            raise ValueError("columns must name at least one column.")
    reference, other = reference[columns], other[columns]
    check_value_kinds(reference, other, names)
    return reference, other


def check_value_kinds(reference, other, names=("real", "synth")):
    """Refuse a column (of ``reference``, looked up in ``other``) whose values are of
    one kind in one table and of another in the other (dates against text, bools
    against ``"True"``): equal values would never match, and a score would say the
    tables differ when their values agree."""
    for j, column in enumerate(reference.columns):
        kinds = [_value_kind(reference.iloc[:, j]), _value_kind(other[column])]
        if None not in kinds and kinds[0] != kinds[1]:
            raise ValueError(
                f"Column {column!r} holds {kinds[0]} values in {names[0]} but {kinds[1]} "
                f"values in {names[1]}; equal values would never match.  Convert one "
                "of them (e.g. .astype(str) or pd.to_numeric) before comparing.")


_KINDS = {"integer": "numeric", "floating": "numeric", "mixed-integer-float": "numeric",
          "decimal": "numeric", "complex": "numeric", "string": "text", "bytes": "bytes",
          "boolean": "boolean", "datetime64": "datetime", "datetime": "datetime",
          "date": "date", "timedelta64": "timedelta", "timedelta": "timedelta"}


def _value_kind(series):
    """What the non-missing values of a column are ("numeric", "text", ...), or None
    when unclear (all missing, mixed, categorical codes of mixed values)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        values = pd.Series(series.cat.categories)
    else:
        values = series
    return _KINDS.get(pd.api.types.infer_dtype(values, skipna=True))


def encode_jointly(frames):
    """Factorize every column jointly over several tables.

    Parameters
    ----------
    frames : list of DataFrame
        Tables with the same columns in the same order.

    Returns
    -------
    codes : ndarray of shape (sum of rows, n_columns), Fortran order
        Code of each cell; missing cells (None, NaN, pd.NA, NaT) get -1.
    uniques : list of pandas.Index
        Per column, the value of each non-negative code.
    """
    n_rows = sum(len(f) for f in frames)
    columns = frames[0].columns
    codes = np.empty((n_rows, len(columns)), dtype=np.int64, order="F")
    uniques = []
    for j in range(len(columns)):
        values = pd.concat([f.iloc[:, j] for f in frames], ignore_index=True)
        codes[:, j], col_uniques = pd.factorize(values, use_na_sentinel=True)
        uniques.append(col_uniques)
    return codes, uniques


def missing_as_category(codes, uniques):
    """Give missing cells their own code; return ``(codes, cardinalities)``."""
    codes = codes.copy(order="F")
    cards = []
    for j, col_uniques in enumerate(uniques):
        n_values = len(col_uniques)
        missing = codes[:, j] < 0
        codes[missing, j] = n_values
        cards.append(n_values + int(missing.any()))
    return codes, cards


def combined_key(codes, cards, subset):
    """One integer per row identifying its cell in the table over ``subset``.

    The key is the mixed-radix number of the column codes (first column most
    significant).  When the radix product would overflow int64 the partial
    key is compressed to dense ranks first, so any subset works.

    Returns
    -------
    key : ndarray of int64
    size : int
        Upper bound (exclusive) of the key values.
    """
    key = codes[:, subset[0]].copy()
    size = cards[subset[0]]
    for j in subset[1:]:
        if size * cards[j] >= _MAX_KEY:
            _, key = np.unique(key, return_inverse=True)
            size = int(key.max()) + 1
        key *= cards[j]
        key += codes[:, j]
        size *= cards[j]
    return key, size


def dense_key(key, size):
    """Relabel keys to ``0..m-1`` when ``size`` is much larger than needed.

    Keeps ``np.bincount`` cheap for wide tables (sparse contingency tables).
    """
    if size > 4 * len(key) + 1024:
        _, key = np.unique(key, return_inverse=True)
        size = int(key.max()) + 1 if len(key) else 0
    return key, size


def column_subsets(n_columns, k, max_subsets=None, random_state=None):
    """All k-subsets of ``range(n_columns)``, or a seeded sample of them.

    Returns a lexicographically sorted list of tuples.  When ``max_subsets``
    is smaller than C(n_columns, k), ``max_subsets`` distinct subsets are
    drawn uniformly at random (without enumerating all of them).
    """
    if not 1 <= k <= n_columns:
        raise ValueError(f"k must be between 1 and the number of columns "
                         f"({n_columns}); got {k}.")
    total = comb(n_columns, k)
    if max_subsets is not None and max_subsets < 1:
        raise ValueError(f"max_subsets must be a positive integer; got {max_subsets}.")
    if max_subsets is None or max_subsets >= total:
        return list(combinations(range(n_columns), k))
    rng = check_random_state(random_state)
    chosen = set()
    while len(chosen) < max_subsets:
        chosen.add(tuple(sorted(rng.choice(n_columns, size=k, replace=False).tolist())))
    return sorted(chosen)
