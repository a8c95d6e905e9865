"""Numbers written as text: the one parsing rule that binning and the metrics share."""

import numpy as np
import pandas as pd

from ._validation import factorize

__all__ = ["parse_numbers"]


def parse_numbers(series):
    """The numbers of a text column: float64, NaN where a field is missing or no number.

    A field is a number when it parses as a finite decimal number and is not
    written with a leading zero (``"02134"`` is a code, ``"0.5"`` a number).
    Each distinct field is parsed once, so that a long column of few values
    costs one hashing pass.
    """
    if pd.api.types.infer_dtype(series, skipna=True) not in ("string", "empty"):
        return _parse_fields(series)  # mixed types: True and 1 are one value to a hash table
    codes, uniques = factorize(series)
    distinct = pd.Series(np.asarray(uniques, dtype=object), dtype=object)
    present = codes >= 0
    out = np.full(len(series), np.nan)
    out[present] = _parse_fields(distinct)[codes[present]]
    return out


def _parse_fields(series):
    """:func:`parse_numbers` field by field."""
    text = series.astype(object).where(series.notna(), None)
    text = pd.Series(text, dtype="string").str.strip()
    coded = text.str.fullmatch(r"[+-]?0\d.*").fillna(False).astype(bool).to_numpy()
    numbers = pd.to_numeric(text, errors="coerce").astype("Float64")
    out = numbers.to_numpy(dtype=np.float64, na_value=np.nan)
    out[coded | ~np.isfinite(out)] = np.nan
    return out
