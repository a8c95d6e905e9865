"""Numbers written as text: the one parsing rule that binning and the metrics share, and
the public list of number formats (percentages, currency amounts) a text column may hold."""

import numpy as np
import pandas as pd

from ._validation import by_distinct_text

__all__ = ["parse_numbers", "NUMBER_FORMATS", "NUMBER_CELLS", "GROUPED", "DECIMAL_COMMA",
           "ACCOUNTING",
           "check_number_format", "parse_formatted", "number_cells", "format_numbers"]


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


# ------------------------------------------------------------- numbers in a format
#: The format of plain numbers written with thousands separators (:data:`NUMBER_FORMATS`).
GROUPED = "#,###"
#: The format of numbers written with a decimal comma (:data:`NUMBER_FORMATS`).
DECIMAL_COMMA = "#.###,##"
#: The format of numbers written as accountants write them (:data:`NUMBER_FORMATS`):
#: negatives in parentheses.
ACCOUNTING = "(#,###)"
#: The number formats a text column may be found to hold (``numeric="auto"``): a
#: fixed, public list (never read from the values), ``#`` standing for the number.
#: ``"#%"``: a percentage, the number as written (``"12.5%"`` is 12.5), with an
#: optional sign (``"-3%"``, ``"+3%"``).  ``"$#"``, ``"€#"``, ``"£#"``: an amount
#: with a currency prefix and an optional minus before it (``"$1,234.56"``,
#: ``"-$5"``, ``"€0.99"``).  The number is digits, optionally with thousands
#: separators ``","`` in groups of three, and optional decimals after a ``"."``;
#: without a leading zero (``"$05"`` is a code, as ``"02134"`` is), and
#: whitespace around the field is ignored, as :func:`parse_numbers` does.
#: ``"#,###"``: a plain number with thousands separators (``"1,234"``,
#: ``"-12,500.5"``), as spreadsheets export them; its numbers below 1,000 are
#: plain numbers (``"523"``), read by this format too.  ``"#.###,##"``: a number
#: with a decimal comma (``"12,5"``, ``"-1.234,56"``, optional ``"."`` thousands
#: separators), as spreadsheets in many European locales write them; its whole
#: numbers are plain (``"12"``, ``"1.234"`` as 1234), and a field that
#: ``"#,###"`` also reads (``"1,234"``) is counted as that format's.
#: ``"# %"``: a percentage written with a space (or a no-break space) before the
#: sign, as in French and German (``"12.5 %"``), written back with a space.
#: ``"(#,###)"``: numbers with thousands separators whose negatives are in
#: parentheses (``"(1,234.50)"``), as spreadsheets' accounting formats and
#: financial exports write them; its positive numbers are ``"#,###"``'s (and
#: plain numbers below 1,000), read by this format too, so that its own cells
#: hold the fields in parentheses only.  Each new format goes last in the list,
#: so that the cells of those before it keep their place.
NUMBER_FORMATS = ("#%", "$#", "€#", "£#", GROUPED, DECIMAL_COMMA, "# %", ACCOUNTING)
#: The cells of the DP count of a text column's numbers in a format: for each
#: format of :data:`NUMBER_FORMATS`, in order, its whole numbers then its other
#: numbers.  A field is read by one format at most (the symbols differ) and is
#: either whole or not, so it falls in one cell at most: one record changes one
#: count by one.
NUMBER_CELLS = tuple((fmt, kind) for fmt in NUMBER_FORMATS for kind in ("int", "float"))
_DIGITS = r"(?P<n>(?:0|[1-9]\d{0,2}(?:,\d{3})+|[1-9]\d*)(?:\.\d+)?)"
_NUMBER_PATTERNS = {
    "#%": r"(?P<s>[+-]?)" + _DIGITS + "%",
    "$#": r"(?P<s>-?)\$" + _DIGITS,
    "€#": r"(?P<s>-?)€" + _DIGITS,
    "£#": r"(?P<s>-?)£" + _DIGITS,
    GROUPED: r"(?P<s>[+-]?)" + _DIGITS,
    DECIMAL_COMMA: r"(?P<s>[+-]?)(?P<n>(?:0|[1-9]\d{0,2}(?:\.\d{3})+|[1-9]\d*)(?P<c>,\d+)?)",
    "# %": r"(?P<s>[+-]?)" + _DIGITS + "[ \u00a0]%",
    ACCOUNTING: r"(?P<s>\()?" + _DIGITS + r"(?(s)\))",
}


def check_number_format(fmt):
    """Raise a ``ValueError`` naming :data:`NUMBER_FORMATS` unless ``fmt`` is one."""
    if not isinstance(fmt, str) or fmt not in NUMBER_FORMATS:
        raise ValueError(f"a number format must be one of {list(NUMBER_FORMATS)} ('#' "
                         f"stands for the number); got {fmt!r}")


def _formatted_fields(series, fmt, own=False):
    """:func:`parse_formatted` field by field (a Series of distinct fields); ``own``:
    only the fields that carry the format's mark (a decimal-comma number its comma)."""
    values = series.to_numpy(dtype=object)
    out = np.full(values.size, np.nan)
    is_text = np.fromiter((isinstance(v, str) for v in values), dtype=bool,
                          count=values.size)
    if not is_text.any():
        return out
    text = pd.Series(values[is_text], dtype=object).str.strip()
    found = text.str.extract("^" + _NUMBER_PATTERNS[fmt] + r"\Z")
    if fmt == DECIMAL_COMMA:
        digits = found["n"].str.replace(".", "", regex=False).str.replace(",", ".",
                                                                           regex=False)
        if own:
            digits = digits.where(found["c"].notna())
    else:
        digits = found["n"].str.replace(",", "", regex=False)
        if own and fmt == ACCOUNTING:
            digits = digits.where(found["s"].notna())
    numbers = np.array(pd.to_numeric(digits, errors="coerce").to_numpy(
        dtype=np.float64, na_value=np.nan))
    numbers[found["s"].isin(["-", "("]).to_numpy()] *= -1.0
    numbers[~np.isfinite(numbers)] = np.nan
    out[is_text] = numbers
    return out


def parse_formatted(series, fmt):
    """The numbers of a text column written in ``fmt`` (one of :data:`NUMBER_FORMATS`):
    float64, the number as written (``"12.5%"`` is 12.5, ``"-$1,234.5"`` is
    -1234.5); NaN where a field is missing, no text or not a number in exactly
    that format.  Each distinct field is parsed once."""
    check_number_format(fmt)
    return by_distinct_text(series, lambda fields, _: _formatted_fields(fields, fmt), np.nan)


def number_cells(series):
    """The cell of :data:`NUMBER_CELLS` of each field of a text column (``-1``: no
    number in any format, missing or no text)."""

    def cells(fields, _):
        out = np.full(len(fields), -1, dtype=np.int64)
        for k, fmt in enumerate(NUMBER_FORMATS):
            numbers = _formatted_fields(fields, fmt, own=True)
            read = ~np.isnan(numbers) & (out < 0)  # a field read by two: the first's
            whole = read & (np.abs(numbers) < 2.0 ** 53)
            whole[whole] = numbers[whole] == np.round(numbers[whole])
            out[read] = 2 * k + np.where(whole[read], 0, 1)
        return out

    return by_distinct_text(series, cells, -1).astype(np.int64)


def format_numbers(numbers, fmt, integer, decimals=None):
    """Texts in ``fmt`` (one of :data:`NUMBER_FORMATS`) of ``numbers``.

    Integers in digits; other numbers with ``decimals`` decimals in a currency
    format or with thousands separators (``"$1,020.50"``, ``"1,020.50"``, as
    amounts are written) and in their shortest spelling otherwise
    (``"7.3%"``, or without ``decimals``).  Currency amounts and
    :data:`GROUPED` numbers carry thousands separators, percentages and
    :data:`DECIMAL_COMMA` numbers none (``"1234,5"``); a minus goes before a
    currency symbol (``"-$5"``) and before a number.
    """
    check_number_format(fmt)
    out = []
    comma = fmt == DECIMAL_COMMA  # a decimal comma, no thousands separators
    separators = fmt not in ("#%", "# %", DECIMAL_COMMA)
    template = "#" if fmt in (GROUPED, DECIMAL_COMMA) else fmt
    for value in np.asarray(numbers, dtype=np.float64).tolist():
        if integer:
            magnitude = abs(int(round(value)))
            text = f"{magnitude:,}" if separators else str(magnitude)
        elif (separators or comma) and decimals is not None:
            text = f"{abs(value):{',' if separators else ''}.{int(decimals)}f}"
        else:
            text = np.format_float_positional(abs(value), unique=True, trim="0")
            if separators:
                whole, dot, rest = text.partition(".")
                text = f"{int(whole):,}" + dot + rest
        if comma:
            text = text.replace(".", ",")
        negative = value < 0 and text.strip("0.,") != ""
        if fmt == ACCOUNTING:
            out.append(f"({text})" if negative else text)
            continue
        sign = "-" if negative else ""
        out.append(sign + template.replace("#", text))
    return out
