"""Numbers written as text: the one parsing rule that binning and the metrics share."""

import numpy as np
import pandas as pd

from ._validation import by_distinct_text

__all__ = ["parse_numbers"]


def parse_numbers(series):
    """The numbers of a text column: float64, NaN where a field is missing or no number.

    A field is a number when it parses as a finite decimal number and is not
    written with a leading zero (``"02134"`` is a code, ``"0.5"`` a number).
    Each distinct field is parsed once, so that a long column of few values
    costs one hashing pass.
    """
    return by_distinct_text(series, lambda fields, _: _parse_fields(fields), np.nan)


def _parse_fields(series):
    """:func:`parse_numbers` field by field."""
    text = series.astype(object).where(series.notna(), None)
    text = pd.Series(text, dtype="string").str.strip()
    coded = text.str.fullmatch(r"[+-]?0\d.*").fillna(False).astype(bool).to_numpy()
    numbers = pd.to_numeric(text, errors="coerce").astype("Float64")
    out = numbers.to_numpy(dtype=np.float64, na_value=np.nan)
    out[coded | ~np.isfinite(out)] = np.nan
    return out
