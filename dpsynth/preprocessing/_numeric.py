"""Numeric columns with nothing declared: DP range, DP point masses, DP bins and shape.

A numeric column that the user gave no ``bounds``, ``bin_edges`` or
``categories`` is binned from Gaussian mechanisms only, in three steps that
each read every record once (sensitivity 1, so each is exactly
``1/sigma``-Gaussian-DP, i.e. ``1/(2 sigma**2)``-zCDP):

1. **Range.**  A noisy histogram over a *public* grid of signed
   powers of two (``[2**k, 2**(k+1))`` and their negatives, and a zero
   cell; integer columns from ``k = 0``, float columns from ``k = -30``), as
   in SmartNoise's DP bounds: the lowest and highest cells whose noisy
   count clears a threshold give the range (a float range on one side of 0
   also takes its mirror image when that window clears a level of its own,
   and the cells of both sides where the grid folded at 0 shows records when
   each side's own count there clears a level: a column centred on 0, whose
   records the two sides split); values outside are clipped
   into it (what keeps a record's influence bounded).
2. **Point masses.**  The exact values in the range (floats exactly as
   they are, or rounded to declared ``decimals``)
   with Gaussian noise; the values above the threshold of the DP set union
   (a value held by one record crosses it with probability ``delta``) and
   holding at least :data:`MIN_POINT_SHARE` of the noisy count are
   released, at most ``max_points`` of them, each with a bin of its own
   that decodes to exactly that value (a 0 income, 40 hours, the 0/1/2 of
   a small count, a 2195.3 shared by a town's records).  The value 0 is a
   public candidate: measured whether or not a record holds it, it is kept
   above a plain noise level, without the set union's ``delta`` threshold.
   An integer column whose range holds at most :data:`MAX_CODE_LEVELS`
   integers (codes such as ``1``-``24``, a small count) has every integer of
   the range as a public candidate, and a larger share of the budget here
   (not the fallback cell of 0 of a range that step 1 did not find).
3. **Bins and shape.**  The other values on a finer public grid, in two
   rounds of half the step's budget each.  Round 1 covers the range, the
   cells between it and 0 and a few cells beyond it (each power-of-two cell
   cut into as many equal parts as its noisy count of step 1 fills; whole
   integers for integer columns); the range widens over the cells whose
   counts of step 1 and round 1 together show records (a sparse column
   whose octaves are each below the noise), and a positive integer range
   down to 0 when those counts fit its lowest cell's density going on below
   it better than empty cells (the same test keeps the parts below the first
   part that holds records after round 2); a column whose range neither step
   found takes the likeliest run of cells next to 0 when its sum clears a
   weak test (its values drawn there, not all decoded as 0).  A float range on
   one side of 0 has the mirror image of its window counted too (from the
   values beyond 0), and a float range that step 1 did not find is folded at 0
   as well: the other side is taken when the fold of step 1 and round 1 shows
   it as step 1's does; a float range across 0 has the sixty-odd octaves
   between its two sides' innermost populated cells measured as two parts,
   ``[-a, 0)`` and ``[0, b)``, that round 2 cuts in equal parts.  Round 2 counts the final
   range's parts again, a part holding more records than its width was
   sized for cut further (values crowded into a sliver of their octave, an
   identifier), a part crowded enough zoomed in sub-rounds of round 2 that
   cut its crowded parts further (an hour of instants of 2024), and an end
   part far less dense than its neighbour narrowed to its density; the
   rounds are averaged by inverse variance, and an outermost run of kept
   parts far from the others must clear the range threshold, as must any run
   beyond the point values when the noisy count of the records outside them
   does not clear its threshold (with no such run, the one interval spans
   the point values: a constant column decodes as its value).
   Post-processing of these histograms gives both the ``n_bins`` interval
   edges (their noisy quantiles) and, for every interval, the DP
   probabilities of its sub-bins from which decoded values are drawn
   (``inverse="dp_histogram"``), so that skewed and small-count columns
   keep their shape inside each bin; a shape that the noisy counts do not
   tell apart from an even one (a sparse column's) is shrunk toward it by
   its signal-to-noise.

Float columns decode rounded to :func:`default_decimals` of the DP range (a
public rule: four significant digits of the largest magnitude), or to more
decimals when a released point value has more (post-processing), unless
``decimals`` is given.  :func:`decide_numeric` is the DP decision, for text
columns (a CSV file read as text), of whether a column holds numbers (plain,
or written in a format of a public list such as ``"12.5%"`` or ``"$1,234.56"``)
or dates written in a format of a public list; in an ``object`` column, also of
date and time objects or ``decimal.Decimal`` numbers.
"""

import math
from dataclasses import replace
from decimal import Decimal
from numbers import Real
from typing import NamedTuple
import warnings

import numpy as np
import pandas as pd
from scipy.special import ndtri
from scipy.stats import chi2

from ..accounting import Spend, first_level_threshold
from ..exceptions import NoisyReleaseWarning
from ..mechanisms import discrete_gaussian_scale, gaussian_measure
from ..schema import (DEFAULT_OTHER_LABEL, Binning, Column, default_missing_marker,
                      integer_room, other_code_label, sub_bin_edges)
from ._discretizer import _check_special, _snap_edges, decode_binning, encode_binning
from ..utils._numbers import (ACCOUNTING, DECIMAL_COMMA, GROUPED, NUMBER_CELLS, NUMBER_FORMATS,
                              format_numbers, number_cells, parse_formatted, parse_numbers)
from ..utils._validation import by_distinct_text, quoted_names
from ..utils._temporal import (DATE_CELLS, DATE_FORMATS, DATE_OBJECTS, date_cells, date_unit,
                               format_dates, is_temporal, numbers_of, object_date_cells,
                               parse_dates, temporal_unit)

__all__ = ["numeric_binning", "default_decimals", "parse_numbers", "decide_numeric",
           "decide_kind_counts", "KindCounts", "text_weight", "decide_text_column", "is_auto_numeric",
           "MIN_POINT_SHARE", "RANGE_FALSE_CELL"]

#: The most parts a crowded cell of the range is cut into (a year column's
#: one octave 1024-2047 needs parts of a few years, not 64).
MAX_SUB_CELLS = 256
#: A float range whose span is below this share of its magnitude decodes at four
#: significant digits of its span (:func:`span_decimals`), not only of its magnitude.
NARROW_SPAN = 0.01
#: Sub-rounds of step 3's round 2 over a crowded part (:func:`_zoomed`): its
#: children are counted in each, with ``1/ZOOM_ROUNDS`` of the round's budget, and
#: a child holding many more records than it was sized for is cut further in the
#: next (values crowded into a sliver of a part: an hour of 2024 in microseconds).
#: Each sub-round can cut a part finer only as far as its noisy counts allow, so
#: the narrowest window found shrinks with every round; the number was chosen on
#: the benchmarks (``benchmarks/LOG.md``).
ZOOM_ROUNDS = 4
#: An end part of step 3's range whose density is this many times below its
#: neighbour's, while it holds at least END_MASS_SHARE of the neighbour's records,
#: is narrowed to the neighbour's density (:func:`_tightened_ends`).
END_DENSITY_RATIO = 4.0
END_MASS_SHARE = 0.5
#: Sub-bins per interval in the released within-bin histogram.
WITHIN_SUB_BINS = 16
#: A run of empty parts of step 3's grid spanning more than this share of an interval
#: becomes an interval of its own (:func:`_split_off_gaps`).
GAP_SHARE = 0.5
#: A released point mass holds at least this share of the column's noisy count.
MIN_POINT_SHARE = 0.01
#: Probability that noise alone makes an empty cell of the range grid clear
#: the range threshold (over all the grid's cells).
RANGE_FALSE_CELL = 1e-3
#: With no cell above the range threshold, the largest noisy cell is the range when
#: noise alone exceeds its count in one of the grid's cells with this probability at
#: most; otherwise the cell of 0 is.
RANGE_FALLBACK = 0.01
#: A shape of step 3 whose parts' noisy counts deviate from an even density less than
#: noise alone does with this probability is shrunk toward it (:func:`_even_shrunk`).
EVEN_SHAPE_LEVEL = 1e-3
#: Cells next to the DP range whose noisy count exceeds this many sigma widen it.
RANGE_NEIGHBOUR = 2.5
#: A column whose range neither step 1 nor step 3 found, and whose cell of 0 holds
#: no point mass, takes the run of cells next to 0 whose summed estimate is
#: likeliest when it clears this many sigma (:func:`_likeliest_run`; a weak test:
#: the alternative decodes every value as 0, a value the column may not hold).
FALLBACK_RUN_SIGMAS = 2.0
#: A column whose range neither step found beside its point mass of 0 takes the run of
#: cells likeliest to hold its other records (:func:`_run_holding`) when their noisy
#: count (the table's record count less the cell of 0 and the missing records) clears
#: this many times its noise.
REST_SIGMAS = 3.09
#: A column whose noisy count of records outside its point values does not clear this
#: many times its noise has its intervals span those values only, unless a run of parts
#: beyond them clears the range threshold (:func:`_point_hull`): lower than
#: :data:`REST_SIGMAS`, since a column with a few records spread thinly beside a point
#: mass loses them all when the test fails, and a constant column only a few values.
POINT_HULL_SIGMAS = 2.5
#: The widest run of cells (octaves) :func:`_run_holding` considers.
MAX_REST_RUN = 16
#: A column whose range holds fewer records than its noisy count of records that are
#: neither 0 nor missing, by more than this many standard deviations of the
#: difference, widens its range by the run of cells beside it likeliest to hold the
#: difference (:func:`_run_beside`).
DEFICIT_SIGMAS = 2.5
#: An integer column whose step-1 range is short of that count by more than this
#: many standard deviations is not binned as codes (:func:`_range_shortfall`): stricter
#: than :data:`DEFICIT_SIGMAS`, since a scale that noise alone makes short would
#: lose its codes, while a wider window of step 3 costs little.
CODES_DEFICIT_SIGMAS = 4.0
#: Widths (in cells) of the windows of the range grid tested against the threshold.
RANGE_WINDOWS = (1, 2, 4, 8)
#: How many cells past the DP range are tested at that level.
RANGE_LOOKAHEAD = 3
#: A float column's range on one side of 0 takes its mirror image on the other side
#: when that window's noisy sum clears this many of its standard deviations.
MIRROR_SIGMAS = 3.09
#: ...and holds at least this share of the range's own noisy sum (a column of thousands
#: of positive amounts is not widened by noise that clears the level on the other side).
MIRROR_SHARE = 0.05
#: A side of a float column's folded range (:func:`_folded_range`) joins the range when
#: its noisy sum, on magnitudes chosen from the other side's counts, clears this many of
#: its standard deviations (the level of :data:`MIRROR_SIGMAS`).
FOLD_SIDE_SIGMAS = 3.09
#: The public point candidate 0 is kept when its noisy count exceeds this many sigma.
PUBLIC_POINT_SIGMAS = 3.0
#: Step 2's public round candidates: the multiples of the finest unit of
#: :data:`ROUND_UNITS` times a power of ten of which the range holds at most
#: MAX_ROUND_CANDIDATES (:func:`round_candidates`), each kept when its noisy count
#: exceeds the level that noise alone exceeds in one of them with probability
#: ROUND_FALSE_POINT.
ROUND_UNITS = (1.0, 2.5, 5.0)
MAX_ROUND_CANDIDATES = 2000
ROUND_FALSE_POINT = 0.002
#: A round candidate is measured only in a cell of step 1's grid whose noisy count
#: exceeds this many of its standard deviations: a point's records are counted in
#: its cell too, and a round value where step 1 shows no records is no candidate.
ROUND_CELL_SIGMAS = 3.5
#: The finest round unit of an integer column (its multiples of 1 are every integer).
MIN_INTEGER_ROUND_UNIT = 10.0
#: Float values are told apart as point masses to this many decimals at most
#: (the cap of :func:`default_decimals`).
MAX_DECIMALS = 10
#: A column has a missing code when step 1's noisy count of its records without a
#: value exceeds this many sigma (noise alone does so with probability 0.1%).
MISSING_SIGMAS = 3.09
#: The most text codes (``"N"``, ``"n/a"``) released in a text column holding numbers.
MAX_CODES = 32
#: A text column holding numbers keeps an other code when the DP count of its
#: fields that are neither a number nor a released code exceeds this many times
#: its noise scale (noise alone does so with probability 0.01%: a false other code
#: writes a label among a complete column's numbers, so a file of many numeric
#: columns must almost never get one); see :func:`text_other`.
OTHER_SIGMAS = 3.71
#: A text column holds numbers when its text fields are at most this share of
#: its present fields (up to noise): its texts are then codes of their own.
MAX_TEXT_SHARE = 0.5
#: A text column holds dates of a format when the noisy count of its dates clears this
#: many times its noise: noise alone does so for one of the fourteen formats with
#: probability 0.15% at most (about 3 sigma of one test, over the formats).
DATE_SIGMAS = 3.71
#: A text column holds numbers in a format of the public list
#: :data:`~dpsynth.utils._numbers.NUMBER_FORMATS` (``"12.5%"``, ``"$1,234.56"``) when the
#: noisy count of its numbers in that format clears this many times its noise, the
#: level of :data:`DATE_SIGMAS`: one test clears it by noise alone with probability
#: 1.04e-4, so that over the twenty-two formats of both lists (fourteen of dates,
#: eight of numbers) noise alone makes a column of words one of them with probability
#: 0.23% at most (a union bound), and with 0.09% at most for the eight number formats.
FORMAT_SIGMAS = DATE_SIGMAS
#: Of :func:`decide_numeric`'s five number and text cells (integers as objects, as
#: text, other numbers as objects, as text, texts): those of plain numbers written as
#: text, numbers of ``GROUPED`` too (below 1,000), and those of non-integers.
_WRITTEN = np.array([False, True, False, True, False])
_DECIMALS = np.array([False, False, True, True, False])
#: The number formats whose plain numbers written as text are theirs too, and which of
#: the five cells those are: ``GROUPED``'s numbers below 1,000, ``DECIMAL_COMMA``'s
#: whole numbers (its others are written with a comma), ``ACCOUNTING``'s positive
#: numbers below 1,000.
_PLAIN_CELLS = {GROUPED: _WRITTEN, DECIMAL_COMMA: np.array([False, True, False, False, False]),
                ACCOUNTING: _WRITTEN}
#: The number formats whose numbers are another format's too: ``ACCOUNTING``'s
#: positive numbers are ``GROUPED``'s (its own cells hold its negatives in
#: parentheses).
_SHARED_FORMAT = {ACCOUNTING: GROUPED}
_GROUPED_CELLS = np.array([fmt == GROUPED for fmt, _ in NUMBER_CELLS])
_ACCOUNTING_CELLS = np.array([fmt == ACCOUNTING for fmt, _ in NUMBER_CELLS])
#: The cells of :func:`decide_numeric`'s count of the Python objects that are neither
#: texts nor plain numbers, in order: one per kind of date or time object of the
#: public list :data:`~dpsynth.utils._temporal.DATE_OBJECTS` (``datetime.date``,
#: naive and time-zone-aware ``datetime``/``Timestamp``), then ``decimal.Decimal``
#: objects holding whole numbers and other numbers (a fixed function of each cell's
#: own type and value: a field is in one of them at most, and then in no other cell).
OBJECT_CELLS = tuple(DATE_OBJECTS) + ("decimal:int", "decimal:float")
_N_DATE_OBJECTS = len(DATE_OBJECTS)
#: A text column holding numbers writes some as number objects and some as text only
#: when both noisy counts clear this many times their noise: a false mix (one column
#: in ~740 at 3 sigma) would put number objects in a column of texts, which
#: columnar formats such as Parquet refuse.
MIXED_SIGMAS = 5.0
#: A column of texts (no typed number) is a float column when its written decimals
#: clear this many times their noise, tested in their own cell: a false float (one
#: column in ~30,000) would spread a whole-number column's values inside its bins.
STRING_DECIMAL_SIGMAS = 4.0
#: A date column written as text whose parts of step 3 that hold records cover at most
#: this many units of its format (months, days, ...) has one interval per unit (ten
#: years of a month format, four months of a day format) ...
MAX_LEVELS = 120
#: ... and whose values hold on average at least this many times the noise of one
#: round of step 3 (below, each value's count is mostly noise: quantile intervals,
#: whose within-bin shape averages neighbouring values, are closer).
LEVEL_SIGMAS = 3.0
#: An integer column that is no date (a code such as ``1``-``24``, a small count)
#: whose DP range of step 1 holds at most this many integers is binned as codes:
#: every integer of the range is a public point candidate of step 2, and the
#: integers that are no point value get one interval per run of consecutive
#: ones, so that the release measures each code as it would a category's where
#: quantile intervals would merge codes that mean different things.
MAX_CODE_LEVELS = 32
#: A code of a column binned as codes beyond its outermost point value ends the range
#: when step 3's estimate of it clears this many times its noise (:func:`_code_ends`).
CODE_END_SIGMAS = 2.0
#: A text column decided numeric weighs ``1 + TEXT_WEIGHT f`` in the split of
#: ``numeric_rho`` over the numeric columns, ``f`` the noisy share of texts among its
#: present fields (a DP output of its decision, down to a multiple of 1/8, at least
#: 1/8 once its texts clear their level); the part above 1 goes to step 2,
#: which releases its texts as codes by the set union's threshold.
TEXT_WEIGHT = 4.0
#: Keys of step 2's noisy counts of the values below and above the range (codes).
BELOW, ABOVE = ("below",), ("above",)  # not a text code (codes are str)
#: Shares of a column's zCDP budget: range, point masses, bins and shape.
STEP_SHARES = (0.25, 0.25, 0.5)
#: The same for an integer column of at most :data:`MAX_CODE_LEVELS` integers in
#: step 1's range: its integers are public point candidates, so the point masses
#: hold most records and take the larger share.
CODE_STEP_SHARES = (0.25, 0.5, 0.25)
_FLOAT_OCTAVES = (-30, 63)  # |x| in [2**-30, 2**63): below, the zero cell
_INT_OCTAVES = (0, 63)


def is_auto_numeric(dtype):
    """Whether a column of ``dtype`` is binned by DP when nothing is declared (public rule).

    Integer (not boolean) and float dtypes, NumPy or pandas nullable, and
    instants and durations (``datetime64``, ``timedelta64``), binned as
    integer counts of their unit.
    """
    if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(dtype):
        return False
    return (pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_float_dtype(dtype)
            or is_temporal(dtype))


def _sigma(rho):
    return math.sqrt(1.0 / (2.0 * rho))


def range_grid(integer):
    """The public grid of step 1: edges of signed power-of-two cells and a zero cell."""
    if integer:
        low, high = _INT_OCTAVES
        positive = np.concatenate([[0.0], 2.0 ** np.arange(low, high + 1)])
        negative = 1.0 - 2.0 ** np.arange(low + 1, high + 1)  # [-3, -1) holds -3, -2
        return np.concatenate([negative[::-1], positive])
    low, high = _FLOAT_OCTAVES
    positive = 2.0 ** np.arange(low, high + 1)
    return np.concatenate([-positive[::-1], positive])


def _cells(values, edges):
    """Cell of each value on ``edges`` (half-open cells, clipped into the end cells)."""
    index = np.searchsorted(edges, values, side="right") - 1
    return np.clip(index, 0, edges.size - 2)


def _histogram(values, weights, edges):
    return np.bincount(_cells(values, edges), weights=weights,
                       minlength=edges.size - 1).astype(np.float64)


def default_decimals(low, high, smallest=None):
    """Decimals of decoded floats: four significant digits of ``max(|low|, |high|)``,
    and at least two of ``smallest``.

    A public rule applied to public (declared or DP) bounds, between 0 and 10.
    ``smallest`` is the smallest nonzero magnitude known to hold values (the
    lowest populated cell of the DP range grid): without it, a column
    spanning several orders of magnitude (ratios from 1e-5 to 1) would round
    its small values to 0, a point mass the data does not have.
    """
    magnitude = max(abs(float(low)), abs(float(high)))
    if not magnitude > 0 or not math.isfinite(magnitude):
        return 3
    decimals = 3 - math.floor(math.log10(magnitude))
    if smallest is not None and 0 < smallest < magnitude:
        decimals = max(decimals, 1 - math.floor(math.log10(smallest)))
    return int(min(MAX_DECIMALS, max(0, decimals)))


def span_decimals(low, high):
    """Decimals of decoded floats in a range far narrower than its magnitude: four
    significant digits of its span ``high - low`` when that is below
    :data:`NARROW_SPAN` of ``max(|low|, |high|)``, else 0 (a public rule on public
    bounds, at most :data:`MAX_DECIMALS`).

    Weights of 1000.25 +- 0.1 grams in a range of 1000.0-1000.6 need the
    decimals of 0.6, not of 1000 (which would round every value to a gram).
    """
    magnitude, span = max(abs(float(low)), abs(float(high))), float(high) - float(low)
    if not (span > 0 and math.isfinite(magnitude)) or span >= NARROW_SPAN * magnitude:
        return 0
    return int(min(MAX_DECIMALS, max(0, 3 - math.floor(math.log10(span)))))


def smallest_magnitude(noisy, threshold, integer):
    """The smallest nonzero magnitude of the DP range: the lower edge, in absolute
    value, of the populated cell of the range grid nearest to zero (post-processing
    of step 1's noisy counts); None if only the zero cell is populated."""
    grid = range_grid(integer)
    above = np.flatnonzero(noisy > threshold)
    above = above[~((grid[above] < 0) & (grid[above + 1] > 0))]  # not the zero cell
    magnitudes = np.minimum(np.abs(grid[above]), np.abs(grid[above + 1]))
    magnitudes = magnitudes[magnitudes > 0]
    return float(magnitudes.min()) if magnitudes.size else None


def _noisy(counts, sigma, rng):
    """``counts`` (integers) plus exact discrete Gaussian noise, ``1/sigma``-GDP per
    unit shift (:func:`~dpsynth.mechanisms.gaussian_measure`: the scale drawn is
    calibrated so that the accounting holds exactly, and no floating-point
    sampler is involved)."""
    return gaussian_measure(np.rint(counts), sigma, rng, "discrete")[0]


def _below_precision(decimals):
    """The cells of the float range grid, but the cell of 0, that lie within half a
    unit of the last of ``decimals`` decimals of 0: their values decode to 0."""
    grid = range_grid(False)
    floor = 0.5 * 10.0 ** -int(decimals)
    inside = (grid[:-1] >= -floor) & (grid[1:] <= floor)
    inside[_zero_cell(False)] = False
    return inside


def _dp_range(values, weights, integer, rho, rng, missing=0.0, empty=None):
    """Step 1: the DP range ``(low, high)`` (grid edges), the noisy total count, the
    noisy counts of the grid's cells and the noisy count of ``missing`` records.

    The records without a value are one more cell of the same histogram (each
    record is in exactly one cell, so the sensitivity stays 1 and the spend is
    the same).  The cells ``empty`` (a mask of the grid's cells, or None) are
    read as empty (post-processing): a float column decoded at known decimals
    (declared, or found by :func:`decide_written_decimals`) passes its cells
    below half a unit of its last decimal (:func:`_below_precision`), whose
    values decode to 0 only, so that the noise of some twenty octaves below it
    no longer competes with the few records of a mostly-zero column for the
    range.
    """
    grid = range_grid(integer)
    sigma = _sigma(rho)
    noisy = _noisy(np.append(_histogram(values, weights, grid), missing), sigma, rng)
    noisy, noisy_missing = noisy[:-1], float(noisy[-1])
    if empty is not None:
        noisy[empty] = 0.0
    n_cells = grid.size - 1
    threshold = sigma * float(-ndtri(RANGE_FALSE_CELL / (n_cells * len(RANGE_WINDOWS))))
    above = np.flatnonzero(noisy > threshold)
    found = True
    if above.size:
        first, last = int(above[0]), int(above[-1])
    else:  # nothing clears the threshold: the largest noisy cell, if noise alone
        # rarely reaches it, else the public cell of 0 (a pure-noise argmax could
        # be any octave up to 2**63)
        first = last = int(np.argmax(noisy))
        if not noisy[first] > sigma * float(-ndtri(RANGE_FALLBACK / n_cells)):
            first = last = int(np.searchsorted(grid, 0.0, side="right")) - 1
            found = False
    first, last = _grouped_cells(noisy, np.full(n_cells, sigma), first, last,
                                 threshold / sigma, RANGE_NEIGHBOUR)
    first, last = _extend_range(noisy, first, last, RANGE_NEIGHBOUR * sigma)
    if not integer and found:
        first, last = _mirrored_range(noisy, first, last, sigma)
    if not integer:
        folded = _folded_range(noisy, first, last, sigma)
        if folded != (first, last):
            first, last, found = *folded, True
    low, high = _bounds(first, last, integer)
    total = float(np.clip(noisy[first:last + 1], 0, None).sum())
    spend = Spend("range", "discrete_gaussian", rho=rho,
                  params=(("sigma", sigma), ("threshold", threshold), ("n_cells", n_cells),
                          ("sensitivity", 1)) + ((("found", False),) if not found else ()))
    return (low, high), total, spend, noisy, noisy_missing


def _zero_cell(integer):
    """Index of the range grid's cell that holds 0."""
    return int(np.searchsorted(range_grid(integer), 0.0, side="right")) - 1


def _bounds(first, last, integer):
    """The range ``(low, high)`` of the range grid's cells ``first..last``.

    A float range ending in the zero cell (``|x| < 2**-30``) ends at 0.
    """
    grid = range_grid(integer)
    low, high = float(grid[first]), float(grid[last + 1])
    if not integer:
        zero = _zero_cell(integer)
        if first == zero:
            low = 0.0
        if last == zero:
            high = 0.0
    return low, high


def _range_cells(low, high, integer):
    """The first and last cells of the range grid that ``[low, high)`` covers."""
    grid = range_grid(integer)
    top = high - 1 if integer else np.nextafter(high, -np.inf)
    return int(_cells(np.array([low]), grid)[0]), int(_cells(np.array([max(top, low)]), grid)[0])


def _window(first, last, integer, reach=None):
    """Cells of the range grid that step 3's first round measures (public): the DP
    range, every cell between it and 0, and :data:`RANGE_LOOKAHEAD` cells beyond it
    away from 0.

    A range of the zero cell alone (step 1 found nothing else) looks past it on
    both sides up to the magnitude ``2**max(RANGE_WINDOWS)`` (values up to 255
    in magnitude).  ``reach``, cells ``(a, b)`` where step 1's counts place the
    records that a range short of the count of the records elsewhere lacks
    (:func:`_range_shortfall`), widens the window to them and
    :data:`RANGE_LOOKAHEAD` cells past them.
    """
    zero, n_cells = _zero_cell(integer), range_grid(integer).size - 1
    margin = RANGE_LOOKAHEAD
    if first == last == zero:
        margin = max(RANGE_WINDOWS) - (0 if integer else _FLOAT_OCTAVES[0])
    low = zero if first > zero else max(0, first - margin)
    high = zero if last < zero else min(n_cells - 1, last + margin)
    if reach is not None:
        low = min(low, max(0, reach[0] - (RANGE_LOOKAHEAD if reach[0] < zero else 0)))
        high = max(high, min(n_cells - 1, reach[1] + (RANGE_LOOKAHEAD if reach[1] > zero else 0)))
    return low, high


def _widen(estimate, variance, first, last, level):
    """Cells ``first..last`` widened on each side to the farthest run of adjacent
    cells (widths 1, 2, 4, ... up to the array's end) whose summed ``estimate``
    exceeds ``level`` times its standard deviation (post-processing).

    Values spread thinly below a range (a column of months 0-119 whose lower
    octaves hold few records each) clear as a run when no cell does.
    """
    def farthest(order):
        clear = [w for w, total, sd in _runs(estimate, variance, order) if total > level * sd]
        return max(clear) if clear else 0

    first -= farthest(np.arange(first - 1, -1, -1))
    last += farthest(np.arange(last + 1, estimate.size))
    return first, last


def _likeliest_run(estimate, variance, zero, level):
    """The cell ``zero`` alone, or widened to the run of cells next to it (widths
    1, 2, 4, ... on either side) whose summed ``estimate`` has the largest ratio
    to its standard deviation, when that ratio exceeds ``level`` (post-processing).

    The last resort of a column whose range neither step found: its present
    values are drawn over the run that most likely holds them rather than all
    decoded as 0, a value they may not hold.
    """
    best, run = level, (zero, zero)
    for side in (-1, 1):
        order = (np.arange(zero - 1, -1, -1) if side < 0
                 else np.arange(zero + 1, estimate.size))
        for w, total, sd in _runs(estimate, variance, order):
            z = total / sd
            if z > best:
                best = z
                run = (zero - w, zero) if side < 0 else (zero, zero + w)
    return run


def _run_terms(estimate, variance, empty=None):
    """The terms of a run's score (:func:`_run_scores`): the estimates and variances
    with the unmeasured cells (infinite variance) and the cells ``empty`` (a mask,
    or None) set to 0, each cell's gain ``max(e, 0)**2 / v``, and the mask of the
    cells that hold a count of their own."""
    finite = np.isfinite(variance)
    if empty is not None:
        finite = finite & ~empty
    e = np.where(finite, estimate, 0.0)
    v = np.where(finite, variance, 0.0)
    gain = np.where(finite & (e > 0), e * e / np.where(finite, variance, 1.0), 0.0)
    return e, v, gain, finite


def _run_scores(terms, cells, rest):
    """The Gaussian log-likelihood scores of the runs ``cells[:1], cells[:2], ...``
    holding ``rest = (count, variance)`` records (:func:`_run_holding`), less one
    per cell; ``terms`` from :func:`_run_terms`."""
    e, v, gain, finite = terms
    sums, variances = np.cumsum(e[cells]), np.cumsum(v[cells])
    return (np.cumsum(gain[cells]) - (sums - rest[0]) ** 2 / (variances + rest[1])
            - np.cumsum(finite[cells]))


def _run_holding(estimate, variance, zero, rest):
    """The cell ``zero`` widened to the run of cells, on one side of it, likeliest to
    hold ``rest = (count, variance)`` records (post-processing).

    For a column whose records are mostly a point mass in the cell of 0 and
    whose noisy count of the others (``rest``) shows that some are
    elsewhere: a run ``W`` of adjacent cells (up to :data:`MAX_REST_RUN`) is
    scored by the Gaussian log-likelihood that its cells hold those records
    and the others none, ``sum_W max(e, 0)**2 / v - (sum_W e - count)**2 /
    (sum_W v + variance)``, less one per cell of ``W`` (each holds a count of
    its own); the best run is returned with the cell of 0.  The known
    count is what tells the records' cells from the likeliest of many runs
    of noise: a few non-zero amounts spread over octaves that are each below
    the noise, and that no run next to 0 reaches (a float's grid has 30
    octaves below 1).
    """
    terms = _run_terms(estimate, variance)
    best, run = -np.inf, (zero, zero)
    for side in (-1, 1):
        cells = np.arange(zero - 1, -1, -1) if side < 0 else np.arange(zero + 1, estimate.size)
        for i in range(cells.size):
            stop = min(cells.size, i + MAX_REST_RUN)
            inner = cells[i:stop]
            score = _run_scores(terms, inner, rest)
            w = int(np.argmax(score))
            if score[w] > best:
                best = float(score[w])
                far = int(inner[w])
                run = (far, zero) if side < 0 else (zero, far)
    return run


def _run_beside(estimate, variance, first, last, zero, rest, empty=None):
    """Cells ``first..last`` widened by the run of cells beside them likeliest to hold
    what they miss of ``rest = (count, variance)``, the records that are neither 0
    nor missing, when the miss clears :data:`DEFICIT_SIGMAS` standard deviations
    (post-processing).

    The range's estimate (its cells but the cell ``zero``) is compared with the
    count; a significant shortfall means records outside it.  Each run of
    adjacent cells (up to :data:`MAX_REST_RUN`) that starts beside the range is
    scored as in :func:`_run_holding`, its cells against the shortfall, and
    against leaving the range as it is; a range that holds values on one side of
    0 only is widened on that side.  A sparse column whose lower octaves are
    each below the noise (a few hundred months 0-119, most records missing) keeps
    them when step 1 and round 1 found only its upper octave: their records are
    what the count shows and the range lacks.  The cells ``empty`` (a mask, or
    None) are known to hold no value but 0 (below a float's precision): they add
    neither noise nor a count of their own.
    """
    terms = _run_terms(estimate, variance, empty)
    e, v = terms[:2]
    inside = np.zeros(e.size, dtype=bool)
    inside[first:last + 1] = True
    inside[zero] = False
    shortfall = rest[0] - float(e[inside].sum())
    spread = rest[1] + float(v[inside].sum())
    if not shortfall > DEFICIT_SIGMAS * math.sqrt(spread):
        return first, last
    best, run = -shortfall ** 2 / spread, (first, last)
    for side in (-1, 1):
        cells = (np.arange(first - 1, max(-1, first - 1 - MAX_REST_RUN), -1) if side < 0
                 else np.arange(last + 1, min(e.size, last + 1 + MAX_REST_RUN)))
        cells = cells[cells != zero]
        if first >= zero and last > zero:  # a range of positive values stays positive
            cells = cells[cells > zero]
        elif last <= zero and first < zero:  # and one of negative values negative
            cells = cells[cells < zero]
        if not cells.size:
            continue
        score = _run_scores(terms, cells, (shortfall, spread))
        w = int(np.argmax(score))
        if score[w] > best:
            best = float(score[w])
            run = (min(first, int(cells[w])), last) if side < 0 else (first, max(last, int(cells[w])))
    return run


def _records_elsewhere(records, zero, missing, texts):
    """``(count, variance)`` of the records that are neither 0 nor missing (nor a text
    of a column of numbers): the table's noisy record count ``records`` less the
    noisy counts ``zero`` (of 0), ``missing`` and ``texts`` (each ``(count,
    variance)``, or None when not subtracted; post-processing)."""
    count, variance = records
    for part in (zero, missing, texts):
        if part is not None:
            count, variance = count - part[0], variance + part[1]
    return float(count), float(variance)


def _range_shortfall(cells, sigma, first, last, zero, rest, empty=None):
    """``(shortfall, sd)``: how far step 1's noisy counts of the cells from the cell
    ``zero`` to the far ends of the range ``first..last`` (the cell of 0 and the
    cells ``empty`` left out; noise ``sigma`` each) fall short of ``rest = (count,
    variance)``, the records neither 0 nor missing, and that difference's standard
    deviation (post-processing).  A shortfall of several sd means records beyond
    the range, away from 0, past the cells that step 3 measures anyway: a
    mostly-zero amount whose range is the cell of 0 and a cell beside it is then
    neither binned as a few codes (:data:`CODES_DEFICIT_SIGMAS`) nor measured on a
    window that clips its amounts to a few octaves above 0 (:data:`DEFICIT_SIGMAS`,
    :func:`_beyond_window`).
    """
    inside = np.zeros(cells.size, dtype=bool)
    inside[min(first, zero):max(last, zero) + 1] = True
    inside[zero] = False
    if empty is not None:
        inside &= ~empty
    shortfall = rest[0] - float(cells[inside].sum())
    return shortfall, math.sqrt(rest[1] + inside.sum() * sigma ** 2)


def _beyond_window(cells, sigma, first, last, zero, rest, empty, integer):
    """Cells ``(a, b)`` of the run likeliest to hold ``rest``, the records neither 0 nor
    missing, by step 1's noisy ``cells`` (:func:`_run_holding`; noise ``sigma``
    each, the cells ``empty`` left out), when its cells outside step 3's window of
    the range ``first..last`` (:func:`_window`) hold more than
    :data:`DEFICIT_SIGMAS` times their noise together; else None
    (post-processing).

    A mostly-zero amount whose step 1 found only the cell of 0 has its window
    end at 255, and its amounts of thousands, each octave below the noise, were
    clipped into the window's last cell; the run of cells that holds them in
    step 1 widens the window to them.  The test of the run's cells beyond the
    window keeps a run of noise from widening it.
    """
    variance = np.full(cells.size, sigma ** 2)
    if empty is not None:
        variance[empty] = np.inf
    a, b = _run_holding(cells, variance, zero, rest)
    w_first, w_last = _window(first, last, integer)
    beyond = np.arange(a, b + 1)
    beyond = beyond[((beyond < w_first) | (beyond > w_last)) & np.isfinite(variance[beyond])]
    if not beyond.size:
        return None
    if not cells[beyond].sum() > DEFICIT_SIGMAS * sigma * math.sqrt(beyond.size):
        return None
    return a, b


def _runs(estimate, variance, order):
    """``(width, summed estimate, its standard deviation)`` of the runs of the cells
    ``order`` (outward from a range) of widths 1, 2, 4, ... and all of them."""
    sums, variances = np.cumsum(estimate[order]), np.cumsum(variance[order])
    return [(w, sums[w - 1], math.sqrt(variances[w - 1])) for w in _doubling(order.size)]


def _doubling(n):
    """Widths 1, 2, 4, ... below ``n``, and ``n``."""
    widths, w = [], 1
    while w < n:
        widths.append(w)
        w *= 2
    return widths + ([n] if n else [])


def _grouped_cells(noisy, sd, first, last, z, level):
    """Cells ``first..last`` widened to the windows of :data:`RANGE_WINDOWS` adjacent
    cells outside them whose noisy sum clears ``z`` times its own standard deviation
    (the cells' standard deviations ``sd`` added in quadrature), each trimmed of
    its outer cells under ``level`` standard deviations (post-processing).

    Values spread thinly over several octaves (the 10% non-zero part of a
    mostly-zero amount) clear as a group when no single cell does.
    """
    for width in RANGE_WINDOWS[1:]:
        if width > noisy.size:  # np.convolve would swap its operands
            break
        sums = np.convolve(noisy, np.ones(width), "valid")
        spread = np.sqrt(np.convolve(sd ** 2, np.ones(width), "valid"))
        for start in np.flatnonzero(sums > z * spread):
            start, end = int(start), int(start) + width - 1
            if end < first:
                while start < end and noisy[start] <= level * sd[start]:
                    start += 1
                first = min(first, start)
            elif start > last:
                while end > start and noisy[end] <= level * sd[end]:
                    end -= 1
                last = max(last, end)
    return first, last


def _side_stream(rng):
    """A generator for noise drawn beside ``rng``'s without changing what ``rng`` (or
    a stream spawned from its seed) draws next: ``rng``'s bit generator jumped
    far ahead (a new object; ``rng`` itself is not advanced), so that a measurement
    added to a step leaves every other noise draw of the release as it was."""
    bits = rng.bit_generator
    return np.random.Generator(bits.jumped()) if hasattr(bits, "jumped") else rng


def _central_parts(noisy, sigma, first, last):
    """The stretch ``(-a, b)`` around 0 of a float range of cells ``first..last`` that
    holds 0, between the innermost cells of each side's run of populated cells, or
    None (post-processing of noisy counts ``noisy`` of the whole grid, of noise
    ``sigma``: step 1's, or step 1's and round 1's together as z-scores).

    A side's run starts at its largest noisy cell in the range when that clears
    :data:`RANGE_NEIGHBOUR` times ``sigma``, and goes on toward 0 while one of
    the next :data:`RANGE_LOOKAHEAD` cells clears it too (:func:`_extend_range`'s
    test); a side without one takes the other side's mirror image.  Step 3
    measures the stretch as two parts, ``[-a, 0)`` and ``[0, b)``, that its round
    2 cuts further in equal parts as any crowded part: the float grid holds
    some sixty octaves there, each with a noisy count of its own, and the level
    that keeps a part picks a few of them by noise alone, drawing a column
    centred on 0 (a standardised feature) as a spike at 0.
    """
    zero = _zero_cell(False)
    if not first < zero < last:
        return None
    level = RANGE_NEIGHBOUR * sigma

    def inner(cells, step):  # the run's innermost cell, walking toward 0 by step
        if not cells.size or not noisy[cells].max() > level:
            return None
        cell = int(cells[np.argmax(noisy[cells])])
        while True:
            near = [j for j in range(1, RANGE_LOOKAHEAD + 1)
                    if (cell + step * j - zero) * (cell - zero) > 0
                    and noisy[cell + step * j] > level]
            if not near:
                return cell
            cell += step * max(near)

    below = inner(np.arange(first, zero), 1)
    above = inner(np.arange(zero + 1, last + 1), -1)
    mirror = noisy.size - 1  # the grid is symmetric: cell k's mirror image is mirror - k
    if below is None and above is None:
        return None
    below = mirror - above if below is None else below
    above = mirror - below if above is None else above
    if above - below < 3:  # no cell between them but the zero cell
        return None
    grid = range_grid(False)
    return float(grid[below + 1]), float(grid[above])


def _folded_range(noisy, first, last, sd, zero=None, extend=True):
    """Cells ``first..last`` of the float grid, when they hold values on one side of 0
    at most, widened to the cells of both sides at the magnitudes where the noisy
    counts of the two sides added up show records, on each side whose own noisy
    sum there clears :data:`FOLD_SIDE_SIGMAS` times its standard deviation and
    whose noisy count holds :data:`MIRROR_SHARE` of the other side's
    (post-processing).

    ``sd`` is the cells' standard deviation (a number, or one per cell; an infinite
    one: an unmeasured cell), ``zero`` the index of the cell of 0, at the middle
    of ``noisy`` (cell ``zero + k`` mirrors ``zero - k``; by default the whole
    grid's).  Folding the grid at 0 adds a cell to its mirror image: the windows
    of :data:`RANGE_WINDOWS` folded cells whose sums clear the range threshold of
    one window (:data:`RANGE_FALSE_CELL` over the folded cells) give the
    magnitudes ``k1..k2`` that hold records, trimmed of outer cells under
    :data:`RANGE_NEIGHBOUR` sd.  A side is then tested on magnitudes chosen
    from the other side's counts alone (not the tested side's noise, which the
    test reads): the window whose sum clears its sd most, and the cells that
    clear :data:`RANGE_NEIGHBOUR` sd.  A column centred on 0 splits its records
    between the two sides, so that on a small table neither side's cells, nor
    its windows, may clear the threshold alone while their fold does.
    """
    zero = _zero_cell(False) if zero is None else zero
    if first < zero < last:
        return first, last
    var = np.broadcast_to(np.asarray(sd, dtype=np.float64) ** 2, noisy.shape)
    finite = np.isfinite(var)
    est = np.where(finite, noisy, 0.0)
    pos, neg = est[zero + 1:2 * zero + 1], est[zero - 1::-1]  # magnitude k: zero +- (k + 1)
    pos_var, neg_var = var[zero + 1:2 * zero + 1], var[zero - 1::-1]
    folded, folded_var = pos + neg, pos_var + neg_var
    z = float(-ndtri(RANGE_FALSE_CELL / (folded.size * len(RANGE_WINDOWS))))
    k1, k2 = folded.size, -1
    for width in RANGE_WINDOWS:
        if width > folded.size:
            break
        sums = np.convolve(folded, np.ones(width), "valid")
        spread = np.sqrt(np.convolve(folded_var, np.ones(width), "valid"))
        for start in np.flatnonzero(sums > z * spread):
            start, end = int(start), int(start) + width - 1
            while start < end and not folded[start] > RANGE_NEIGHBOUR * math.sqrt(
                    folded_var[start]):
                start += 1
            while end > start and not folded[end] > RANGE_NEIGHBOUR * math.sqrt(
                    folded_var[end]):
                end -= 1
            k1, k2 = min(k1, start), max(k2, end)
    if k2 < k1:
        return first, last
    sides = [(neg[k1:k2 + 1], neg_var[k1:k2 + 1]), (pos[k1:k2 + 1], pos_var[k1:k2 + 1])]
    tests = []
    for (own, own_var), (other, other_var) in zip(sides, sides[::-1]):
        best, window = -np.inf, slice(0, other.size)
        for width in RANGE_WINDOWS:
            for start in range(other.size - width + 1):
                score = float(other[start:start + width].sum()) / math.sqrt(
                    float(other_var[start:start + width].sum()))
                if score > best:
                    best, window = score, slice(start, start + width)
        held = np.flatnonzero(other > RANGE_NEIGHBOUR * np.sqrt(other_var))
        tests.append(max([float(own[cells].sum()) / math.sqrt(float(own_var[cells].sum()))
                          for cells in (window, held) if own[cells].size]))
    totals = [float(own.sum()) for own, _ in sides]
    whole = [(zero - 1 - k2, zero - 1 - k1), (zero + 1 + k1, zero + 1 + k2)]
    empty = [not first < zero, not last > zero]  # a side the range holds stays as it is
    widened = first, last
    for (a, b), z_own, own, other, test in zip(whole, tests, totals, totals[::-1], empty):
        if test and z_own > FOLD_SIDE_SIGMAS and own > MIRROR_SHARE * other:
            widened = min(widened[0], a), max(widened[1], b)
    if widened == (first, last) or not extend:
        return widened
    return _extend_range(est / np.sqrt(var), *widened, RANGE_NEIGHBOUR)


def _mirrored_range(noisy, first, last, sigma):
    """Cells ``first..last`` of the float grid, when on one side of 0, widened to their
    mirror image on the other side when its noisy sum clears :data:`MIRROR_SIGMAS` times
    its standard deviation and :data:`MIRROR_SHARE` of the range's own noisy sum, then
    extended there as :func:`_extend_range` does (post-processing).

    The float grid holds some sixty octaves between ``-1/8`` and ``1/8``, so a
    column centred on 0 (standardised features) has two runs of populated cells
    that no neighbour test joins; on a small table only one of them may clear the
    range threshold, and the other side of the column would be clipped into it.
    One window of cells is tested, at a level of its own.
    """
    if first <= _zero_cell(False) <= last:  # the range holds 0 already
        return first, last
    lo, hi = noisy.size - 1 - last, noisy.size - 1 - first  # the grid is symmetric
    mirrored = float(noisy[lo:hi + 1].sum())
    if not (mirrored > MIRROR_SIGMAS * sigma * math.sqrt(hi - lo + 1)
            and mirrored > MIRROR_SHARE * float(noisy[first:last + 1].sum())):
        return first, last
    first, last = min(first, lo), max(last, hi)
    return _extend_range(noisy, first, last, RANGE_NEIGHBOUR * sigma)


def _extend_range(noisy, first, last, level):
    """Cells ``first..last`` widened outward while one of the next
    :data:`RANGE_LOOKAHEAD` cells on that side has a noisy count above ``level``
    (post-processing), to the farthest such cell.

    The range threshold guards the whole grid against false cells, so on a
    small table it misses populated end cells (a 10% zero cell of a
    1,000-record integer column); cells near the range are tested at the
    lower ``level`` instead, looking past sparse cells (0, then 1, 2-3 and
    4-7: few records may hold 1-3 when many hold 0 and 4-15).  A false
    extension widens the range by a few octaves, which the noisy shape
    histogram of step 3 leaves empty.
    """
    n_cells = noisy.size
    while True:
        near = [j for j in range(1, RANGE_LOOKAHEAD + 1)
                if first - j >= 0 and noisy[first - j] > level]
        if not near:
            break
        first -= max(near)
    while True:
        near = [j for j in range(1, RANGE_LOOKAHEAD + 1)
                if last + j < n_cells and noisy[last + j] > level]
        if not near:
            break
        last += max(near)
    return first, last


def _clip(values, low, high, integer):
    top = high - 1 if integer and high > low else high
    return np.clip(values, low, top)


def _dp_points(values, weights, low, high, integer, decimals, rho, delta, total,
               max_points, rng, texts=None, text_weights=None, codes=False, missing=None,
               range_cells=None):
    """Step 2: DP frequent exact values (a Gaussian DP set union over one record's value).

    Candidates are the values in the range, floats rounded to ``decimals``
    (declared) or else exactly as they are (a point mass is a value records
    hold exactly, such as 2195.3 in a column of four-digit magnitudes, or a
    log of 0.1 repeated to the last bit).  The public candidate ``0`` (when in
    the range) is measured whether or not a record holds it, so it needs no
    set-union threshold: it is kept above :data:`PUBLIC_POINT_SIGMAS` sigma.
    So are the range's round values (:func:`round_candidates`) in the cells of
    step 1's grid whose noisy counts ``range_cells = (counts, sigma)`` exceed
    :data:`ROUND_CELL_SIGMAS` sigma, kept above the level that noise alone
    exceeds in one of them with probability :data:`ROUND_FALSE_POINT` (at most
    the set union's threshold).

    ``texts`` (a text column holding numbers): its fields that are no number,
    candidates of the same set union (one record holds one field: a number
    or a text), released above its threshold (without :data:`MIN_POINT_SHARE`:
    a code is a value of its own, as a text column's values are in the
    release's discovery, not a point of the numbers' shape), at most :data:`MAX_CODES` of
    them, in sorted order.  Returns ``(points, codes, spend, noisy)``: ``noisy``
    maps each released point value and code to its noisy count.
    """
    points, spend, noisy_points = _dp_number_points(values, weights, low, high, integer,
                                                    decimals, rho, delta, total, max_points,
                                                    rng, codes, missing, range_cells)
    if texts is None:
        return points, (), spend, noisy_points
    threshold = dict(spend.params)["threshold"]
    observed, inverse = np.unique(np.asarray(texts, dtype=object).astype(str),
                                  return_inverse=True)
    counts = np.bincount(inverse, weights=text_weights, minlength=observed.size)
    if not observed.size:
        return points, (), spend, noisy_points
    noisy = _noisy(counts, _sigma(rho), rng)
    keep = noisy > threshold
    order = np.flatnonzero(keep)[np.argsort(-noisy[keep], kind="stable")][:MAX_CODES]
    noisy_points.update((str(observed[k]), float(noisy[k])) for k in order)
    return points, tuple(sorted(str(v) for v in observed[order])), spend, noisy_points


def _dp_number_points(values, weights, low, high, integer, decimals, rho, delta, total,
                      max_points, rng, codes=False, missing=None, range_cells=None):
    """:func:`_dp_points` of the numbers.

    With ``codes`` (an integer range of at most :data:`MAX_CODE_LEVELS` values),
    every integer of the range is a public candidate, kept above
    :data:`PUBLIC_POINT_SIGMAS` sigma, and up to that many are released; the
    values below and above the range are two more cells (``noisy[BELOW]``,
    ``noisy[ABOVE]``), and so are, with ``missing``, the records without a value
    (``noisy[None]``): each record is in one cell, so the spend is the same.
    """
    sigma = _sigma(rho)
    # a unique value is released with probability at most delta: the discrete
    # Gaussian's tail P[Y >= m] <= P[N(0, s^2) >= m - 1] (Canonne et al.), one
    # count above the continuous threshold for the scale s drawn
    threshold = first_level_threshold(discrete_gaussian_scale(sigma), 1, 2.0 * delta) + 1.0
    # round values of the range: public candidates too (a public function of step 1)
    rounds = np.zeros(0) if codes else round_candidates(low, high, integer)
    rounds = rounds[rounds != 0.0]
    if rounds.size and range_cells is not None:  # where step 1 shows records only
        cells, cell_sigma = range_cells
        grid = range_grid(integer)
        at = np.clip(np.searchsorted(grid, rounds, side="right") - 1, 0, cells.size - 1)
        rounds = rounds[cells[at] > ROUND_CELL_SIGMAS * cell_sigma]
    round_level = min(threshold, max(PUBLIC_POINT_SIGMAS, float(-ndtri(
        ROUND_FALSE_POINT / rounds.size))) * sigma) if rounds.size else threshold
    spend = Spend("point masses", "discrete_gaussian", rho=rho, delta=delta,
                  params=(("sigma", sigma), ("threshold", threshold),
                          ("public_threshold", PUBLIC_POINT_SIGMAS * sigma),
                          ("round_candidates", int(rounds.size)),
                          ("round_threshold", round_level),
                          ("min_share", MIN_POINT_SHARE), ("max_points", max_points),
                          ("sensitivity", 1)))
    # + 0.0: -0.0 and 0.0 are one value, spelled 0.0 whichever a record used
    # values in the range only: values clipped into it would pile up at its ends
    # as a point mass no record holds (step 3 may widen the range past them)
    inside = (values >= low) & ((values < high) if integer else (values <= high))
    if not integer:  # +-inf: candidates wherever the range is (a value of their own)
        inside |= np.isinf(values)
    candidates = point_keys(values[inside], integer, decimals)
    observed, inverse = np.unique(candidates, return_inverse=True)
    counts = np.bincount(inverse, weights=None if weights is None else weights[inside],
                         minlength=observed.size)
    levels = np.full(observed.size, threshold)
    if rounds.size:  # the range's round values
        observed, counts, levels = _measured_too(observed, counts, levels, rounds,
                                                 round_level)
    if codes:  # every integer of a small DP range, kept above a plain noise level
        observed, counts, levels = _measured_too(
            observed, counts, levels, np.arange(low, high, dtype=np.float64),
            PUBLIC_POINT_SIGMAS * sigma)
        max_points = max(max_points, MAX_CODE_LEVELS)
    if low <= 0.0 and (0.0 < high if integer else 0.0 <= high):  # 0 in the range
        observed, counts, levels = _measured_too(observed, counts, levels, np.zeros(1),
                                                 PUBLIC_POINT_SIGMAS * sigma)
    extra = {}
    if codes:  # the values below and above the range: the cells that clipping joins
        w = np.ones(values.size) if weights is None else weights
        outside = [float(w[values < low].sum()), float(w[values >= high].sum())]
        noisy = _noisy(np.concatenate([counts, outside, [missing or 0.0]]), sigma, rng)
        noisy, extra = noisy[:-3], dict(zip((BELOW, ABOVE, None), map(float, noisy[-3:])))
    elif missing is not None:
        noisy = _noisy(np.append(counts, missing), sigma, rng)
        noisy, extra = noisy[:-1], {None: float(noisy[-1])}
    elif observed.size:
        noisy = _noisy(counts, sigma, rng)
    if not observed.size:
        return (), spend, extra
    keep = (noisy > levels) & (noisy >= MIN_POINT_SHARE * total)
    order = np.flatnonzero(keep)[np.argsort(-noisy[keep], kind="stable")][:max_points]
    return (tuple(float(v) for v in np.sort(observed[order])), spend,
            {**{float(observed[k]): float(noisy[k]) for k in order}, **extra})


def _measured_too(observed, counts, levels, candidates, level):
    """``observed`` values with their ``counts`` and ``levels``, and the public
    ``candidates`` measured whether or not a record holds one (a count of 0),
    each at ``level`` (a public candidate needs no set-union threshold), in
    ascending order: the order of the noisy counts drawn for them."""
    unheld = candidates[~np.isin(candidates, observed)]
    observed = np.concatenate([observed, unheld])
    counts = np.concatenate([counts, np.zeros(unheld.size)])
    levels = np.where(np.isin(observed, candidates), level,
                      np.concatenate([levels, np.zeros(unheld.size)]))
    ascending = np.argsort(observed, kind="stable")
    return observed[ascending], counts[ascending], levels[ascending]


def round_candidates(low, high, integer):
    """The round values of the range ``[low, high)`` (``[low, high]`` for floats):
    the multiples of the finest unit ``u`` times a power of ten, ``u`` in
    :data:`ROUND_UNITS` (for an integer column at least
    :data:`MIN_INTEGER_ROUND_UNIT`), of which the range holds at most
    :data:`MAX_ROUND_CANDIDATES`; none for an empty or infinite range.

    A public function of the DP range: values that people write (bracket
    midpoints such as 7500 or 125000, hours of 40, amounts of 5000) are
    measured as public candidates, whether or not a record holds one, so they
    need no set-union threshold, only the level that noise alone exceeds in one
    of them with probability :data:`ROUND_FALSE_POINT`.
    """
    low, high = float(low), float(high)
    if not (math.isfinite(low) and math.isfinite(high) and high > low):
        return np.zeros(0)
    width = high - low
    exponent = math.floor(math.log10(width / MAX_ROUND_CANDIDATES)) - 1
    for _ in range(8):
        for unit in ROUND_UNITS:
            step = unit * 10.0 ** exponent
            if integer and step < MIN_INTEGER_ROUND_UNIT:
                continue
            first, last = math.ceil(low / step), math.floor(high / step)
            if integer and last * step >= high:
                last -= 1
            if last - first + 1 <= MAX_ROUND_CANDIDATES:
                if last < first:
                    return np.zeros(0)
                values = np.arange(first, last + 1, dtype=np.float64) * step
                return np.round(values, max(0, -exponent + 1)) + 0.0
        exponent += 1
    return np.zeros(0)


def point_keys(values, integer, decimals):
    """The values as the point masses match them: floats rounded to declared
    ``decimals``, else exactly as they are (a log or a standardised value
    such as ``-2.3025850929940455`` is released as that value, so that the
    synthetic records holding it equal the real ones), ``-0.0`` as ``0.0``."""
    values = np.asarray(values, dtype=np.float64) + 0.0
    if integer or decimals is None:
        return values
    with np.errstate(over="ignore", invalid="ignore"):  # +-inf: no warning of its own
        rounded = np.round(values, decimals) + 0.0
    return np.where(np.isfinite(rounded), rounded, values)


def _at_points(values, integer, decimals, points):
    """Whether each value is one of ``points``, exactly or at ``decimals`` (what
    :func:`~dpsynth.preprocessing._discretizer.encode_binning` codes as a point: a
    point value of more digits than the column decodes at is matched exactly)."""
    values = np.asarray(values, dtype=np.float64)
    return np.isin(point_keys(values, integer, decimals), points) | np.isin(values, points)


def point_decimals(points):
    """The decimals that spell every value of ``points`` exactly (at most
    :data:`MAX_DECIMALS`): the shortest round-trip spelling of each."""
    places = 0
    for value in points:
        text = np.format_float_positional(float(value), unique=True, trim="-")
        places = max(places, len(text.partition(".")[2]))
    return min(places, MAX_DECIMALS)


def _shape_grid(grid, first, last, integer, parts):
    """Step 3's grid: cells ``first..last`` of the range grid, cell ``k`` cut in ``parts[k]``."""
    edges = []
    for k, n_parts in zip(range(first, last + 1), parts):
        low, high = grid[k], grid[k + 1]
        if not integer and low < 0 < high:  # the zero cell stays whole
            edges.extend([low, high])
        elif integer:
            edges.extend(np.round(np.linspace(low, high, min(n_parts, int(high - low)) + 1)))
        else:
            edges.extend(np.linspace(low, high, n_parts + 1))
    return np.unique(np.asarray(edges, dtype=np.float64))


def _overlap(lower, upper, fine):
    """Matrix of the share of each fine cell that lies in each ``[lower_i, upper_i)``."""
    left = np.maximum(lower[:, None], fine[None, :-1])
    right = np.minimum(upper[:, None], fine[None, 1:])
    return np.clip(right - left, 0, None) / np.diff(fine)[None, :]


def _capacity(lower, upper, integer, points):
    """Values each sub-bin can decode to: its length, integers that are no point value."""
    if not integer:
        return (upper > lower).astype(np.float64) + (upper == lower)
    return integer_room(lower, upper, points)


def _parts_grid(grid, first, last, integer, parts, low, high):
    """Edges of cells ``first..last`` of the range grid, cell ``k`` cut in ``parts[k]``,
    bounded by ``low`` and ``high``."""
    fine = _shape_grid(grid, first, last, integer, parts)
    fine = fine[(fine > low) & (fine < high)]
    if not integer:  # the zero cell |x| < 2**-30 merges with its neighbours
        fine = fine[np.abs(fine) != 2.0 ** _FLOAT_OCTAVES[0]]
    return np.concatenate([[low], fine, [high]])


def _inverse_variance(a, var_a, b, var_b):
    """Inverse-variance average of two independent estimates (``inf``: none)."""
    w_a = np.where(np.isfinite(var_a), 1.0 / var_a, 0.0)
    w_b = np.where(np.isfinite(var_b), 1.0 / var_b, 0.0)
    total = w_a + w_b
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(total > 0, (np.where(w_a > 0, a, 0.0) * w_a
                                    + np.where(w_b > 0, b, 0.0) * w_b) / total, 0.0)
        return mean, np.where(total > 0, 1.0 / total, np.inf)


def _whole_cells(left, right, grid, point_cells):
    """The range-grid cell of each ``[left, right)`` and whether it is that whole cell
    and holds no point mass (its count of step 1 counts the same records)."""
    k = _cells(left, grid)
    return k, (grid[k] == left) & (grid[k + 1] == right) & ~np.isin(k, point_cells)


def _tightened_ends(fine, mass, integer):
    """``fine`` with an end part that holds about as many records as its neighbour
    at a far lower density narrowed to the neighbour's density, on its inner
    side (post-processing of the kept parts' estimates ``mass``).

    A range that ends at the edge of a wide part of round 1 (identifiers
    crowded into a sliver high in their octave) would otherwise spread that
    part's records over the empty stretch beside them; an end at 0 stays.
    """
    fine = np.array(fine, dtype=np.float64)
    if mass.size < 2:
        return fine
    width = np.diff(fine)
    for end, neighbour, sign in ((0, 1, 1), (-1, -2, -1)):
        edge = fine[0] if end == 0 else fine[-1]
        if edge == 0 or not (mass[end] > 0 and mass[neighbour] > 0):
            continue
        density, next_density = mass[end] / width[end], mass[neighbour] / width[neighbour]
        if (next_density < END_DENSITY_RATIO * density
                or mass[end] < END_MASS_SHARE * mass[neighbour]):
            continue
        narrowed = mass[end] / next_density
        narrowed = math.ceil(narrowed) if integer else narrowed
        if end == 0:
            fine[0] = fine[1] - min(width[0], max(narrowed, 1.0 if integer else 0.0))
        else:
            fine[-1] = fine[-2] + min(width[-1], max(narrowed, 1.0 if integer else 0.0))
    return fine


def _kept_mass(estimate, variance, capacity, fine, measured, fallback):
    """The records each part of step 3's grid ``fine`` holds (post-processing of
    its estimates and their variances).

    A part's estimate is kept when it clears the level that noise alone clears
    in half a part of the grid on average (at least one standard deviation);
    outside step 1's range ``measured`` on the side away from 0, where a false
    part would stretch the range by octaves, when it clears the range
    threshold.  The parts the range widened over toward 0 (or all of them when
    step 1 found only the ``fallback`` cell of 0) hold records together,
    though few clear the level alone: what they hold beyond their kept parts is
    spread over the others by capacity (an even density).  Away from 0, where a
    tail thins out, only the parts that clear the level hold records.
    """
    toward = [fallback or measured[0] > 0,
              fallback or measured[1] <= 0 < measured[1] - measured[0]]
    widened = [(fine[1:] <= measured[0]) & (capacity > 0),
               (fine[:-1] >= measured[1]) & (capacity > 0)]
    sigmas = np.full(estimate.size, max(1.0, float(-ndtri(0.5 / estimate.size))))
    for part, near in zip(widened, toward):
        if not near:
            sigmas[part] = float(-ndtri(RANGE_FALSE_CELL / estimate.size))
    mass = np.where((estimate > sigmas * np.sqrt(variance)) & (capacity > 0), estimate, 0.0)
    for part, near in zip(widened, toward):
        spare = float(estimate[part].sum() - mass[part].sum())
        room = np.where(part & (mass == 0), capacity, 0.0)
        if near and spare > 0 and room.sum() > 0:
            mass += spare * room / room.sum()
    return mass


def _without_far_ends(mass, estimate, variance, fine, rest=None):
    """``mass`` without an outermost run of kept parts that lies farther from the
    next kept part than the other kept parts span, unless the run's summed
    estimate clears the range threshold at its noise (post-processing).

    A part is kept at a level that noise alone clears in half a part of the grid
    on average, so that thin tails are kept, and the cells that the range
    widened over toward 0 share what their sum measured; but a false part or
    run far from the records (1988 beside a week of 2024) would stretch the
    range, and the interval that holds it, by more than the records span: such
    a run needs the level that a cell outside step 1's range needs
    (:data:`RANGE_FALSE_CELL`).  With ``rest = (count, variance)``, the noisy
    count of the records that are neither 0 nor missing, a run is kept too
    when the estimates of the parts that the other kept parts span fall short
    of that count by more than :data:`DEFICIT_SIGMAS` standard deviations: its
    records are the ones the count shows (a mostly-zero amount whose few
    others lie octaves above the parts near 0 that noise kept).
    """
    mass = np.array(mass, dtype=np.float64)
    level = float(-ndtri(RANGE_FALSE_CELL / estimate.size))

    def needed(run):  # the parts the other kept parts span lack what the count shows
        if rest is None:
            return False
        others = np.flatnonzero(mass)
        others = others[~np.isin(others, run)]
        span = np.arange(others.min(), others.max() + 1)
        shortfall = rest[0] - float(estimate[span].sum())
        return shortfall > DEFICIT_SIGMAS * math.sqrt(rest[1] + float(variance[span].sum()))
    while True:
        kept = np.flatnonzero(mass)
        breaks = np.flatnonzero(np.diff(kept) > 1)
        if not breaks.size:
            return mass
        low_run, after = kept[:breaks[0] + 1], kept[breaks[0] + 1]
        high_run, before = kept[breaks[-1] + 1:], kept[breaks[-1]]
        ends = ((low_run, fine[after] - fine[low_run[-1] + 1],
                 fine[kept[-1] + 1] - fine[after]),
                (high_run, fine[high_run[0]] - fine[before + 1],
                 fine[before + 1] - fine[kept[0]]))
        z = [estimate[run].sum() / math.sqrt(variance[run].sum()) for run, _, _ in ends]
        far = [(score, run) for (run, gap, span), score in zip(ends, z)
               if gap > span and score <= level and not needed(run)]
        if not far:
            return mass
        mass[min(far, key=lambda item: item[0])[1]] = 0.0  # one run at a time


def _reaches_zero(estimate, variance, width, edge, edge_variance, edge_width):
    """Whether the values of a positive range's lowest cell of the range grid (or
    lowest part of step 3 that holds records) go on below it (post-processing of
    noisy counts and their variances).

    ``estimate`` are the noisy counts of the cells (or parts) below it, down to
    0 (of ``width`` values each, ``variance`` their variances), ``edge`` its own
    noisy count.  Two models of the cells below are
    weighed with equal prior odds: empty, or holding the lowest cell's density
    (values per unit).  The data is the density of the cells below estimated by
    least squares (each cell weighed by its width over its variance, so that
    the narrow cells near 0 count for little); the model under which it is the
    more likely wins.  A sparse integer column (months 0-119 in a few hundred
    records, every octave near its noise) whose step 1 found only its upper
    octaves then reaches 0 rather than piling its low values onto the range's
    lower edge, while a lowest cell that holds many records (years, ages from
    17) is told apart from the empty cells below it.
    """
    usable = (width > 0) & np.isfinite(variance) & (variance > 0)
    info = float(np.sum(width[usable] ** 2 / variance[usable]))
    if not (info > 0 and edge_width > 0 and np.isfinite(edge_variance)):
        return False
    below = float(np.sum(width[usable] * estimate[usable] / variance[usable])) / info
    below_var = 1.0 / info
    density, density_var = float(edge) / edge_width, float(edge_variance) / edge_width ** 2
    if not density > 0:
        return False
    empty = -0.5 * below ** 2 / below_var - 0.5 * math.log(below_var)
    spread = below_var + density_var
    continued = -0.5 * (below - density) ** 2 / spread - 0.5 * math.log(spread)
    return continued > empty


def _cut_at_gaps(edges, fine, mass, grid):
    """``edges`` with an interval that holds records on both sides of a run of
    empty parts of ``fine`` spanning a whole cell of the range ``grid`` (an
    empty octave) cut at the widest such run: its upper edge moved to the run's
    start (the last interval: its lower edge to the run's end), so that no
    value is drawn across the gap (post-processing).

    A cluster of values near ``4e-5`` and the bulk above ``0.01`` in one
    interval would otherwise decode the cluster spread over its first sub-bin.
    """
    edges = np.array(edges, dtype=np.float64)
    for k in range(edges.size - 1):
        inside = np.flatnonzero((fine[:-1] >= edges[k]) & (fine[1:] <= edges[k + 1]))
        held = inside[mass[inside] > 0]
        if held.size < 2:
            continue
        empty = np.arange(held[0], held[-1] + 1)
        empty = empty[mass[empty] == 0]
        runs = [(fine[r[0]], fine[r[-1] + 1]) for r in
                np.split(empty, np.flatnonzero(np.diff(empty) > 1) + 1) if r.size]
        runs = [(a, b) for a, b in runs  # holding a whole cell of the range grid
                if np.any((grid[:-1] >= a) & (grid[1:] <= b))]
        if not runs:
            continue
        start, end = max(runs, key=lambda run: run[1] - run[0])
        if k + 1 < edges.size - 1:
            edges[k + 1] = start
        elif k > 0:
            edges[k] = end
    return np.unique(edges)


def _split_off_gaps(edges, fine, mass, share=GAP_SHARE):
    """``edges`` with the widest run of empty parts of ``fine`` in each interval made an
    interval of its own when it spans more than ``share`` of the interval (at most
    two more edges per interval; post-processing).

    Decoded values are drawn from an interval's :data:`WITHIN_SUB_BINS` equal
    sub-bins: an interval whose records sit in a sliver of it (the end of one
    cluster of values and the start of another far away, a range widened past
    its values) would spread them over a sub-bin far wider than the sliver.
    """
    out = [edges[0]]
    for low, high in zip(edges[:-1], edges[1:]):
        inside = np.flatnonzero((fine[:-1] >= low) & (fine[1:] <= high))
        held = inside[mass[inside] > 0]
        cuts = []
        if held.size:
            gaps = np.flatnonzero(np.diff(held) > 1)
            runs = ([(low, fine[held[0]])]
                    + [(fine[held[g] + 1], fine[held[g + 1]]) for g in gaps]
                    + [(fine[held[-1] + 1], high)])
            start, end = max(runs, key=lambda run: run[1] - run[0])
            if end - start > share * (high - low):
                cuts = [x for x in (start, end) if low < x < high]
        out.extend(cuts + [high])
    return np.unique(np.asarray(out, dtype=np.float64))


def _level_edges(fine, mass, low, high, points, runs=False):
    """Edges of one interval per integer of ``[low, high)`` that is no point value (a
    point value has a bin of its own) and holds records by ``mass`` on the grid
    ``fine`` (all of them when none does): each interval starts at such an
    integer and runs to the next, so that it decodes to that integer (to its
    first sub-bin's integers when it spans more than :data:`WITHIN_SUB_BINS`),
    and a stretch of parts below the noise is no run of intervals of its own.

    With ``runs`` (a column binned as codes), one interval per run of consecutive
    integers that are no point value, whatever they hold: the release measures
    them, where step 3's noise would decide which hold records."""
    values = np.arange(low, high)
    values = values[~np.isin(values, np.asarray(points, dtype=np.float64))]
    if runs:
        values = values[np.diff(values, prepend=-np.inf) > 1]
    else:
        held = values[(_overlap(values, values + 1.0, fine) @ mass) > 0]
        values = held if held.size else values
    if not values.size:
        return np.array([low, high])
    return np.concatenate([[low], values[1:], [high]])


def _even_shrunk(shape, estimate, variance, room, fine, edges):
    """``shape`` on the parts of ``fine``, in each interval of ``edges`` whose parts'
    noisy counts ``estimate`` (of ``variance``) differ from even shares by noise
    alone shrunk toward them by their signal-to-noise (post-processing).

    The even shares of an interval's parts (each in the interval holding its
    midpoint) are proportional to their ``room`` (:func:`_capacity`: the
    integers they hold, an even density; one per part of a float column,
    whose parts step 3 cuts to hold comparable counts on a scale of powers of
    two).  They are fitted to the parts' estimates by
    least squares; ``Q``, the sum of the squared standardized deviations from
    the fit, has about ``p`` degrees of freedom (the parts less one) when the
    parts differ by noise alone.  When ``Q`` is below the level that noise
    alone exceeds with probability :data:`EVEN_SHAPE_LEVEL`, each part keeps
    ``max(0, 1 - p / Q)`` of its deviation from its even share (the
    empirical-Bayes factor of a normal prior); above it the shape is left as
    it is.  A sparse column whose parts' counts are below their noise then
    gets a nearly even shape rather than the spikes of the few parts that
    noise left above their level, while a shape that the counts show (a skewed
    amount, a narrow cluster) is kept.
    """
    shape = np.array(shape, dtype=np.float64)
    middle = (fine[:-1] + fine[1:]) / 2.0
    which = np.searchsorted(edges, middle, side="right") - 1
    for k in range(edges.size - 1):
        inside = np.flatnonzero((which == k) & (room > 0) & np.isfinite(variance)
                                & (variance > 0))
        if inside.size < 2 or not shape[inside].sum() > 0:
            continue
        c, e, v = room[inside], estimate[inside], variance[inside]
        fit = float(np.sum(c * e / v) / np.sum(c ** 2 / v))
        q = float(np.sum((e - c * fit) ** 2 / v))
        p = inside.size - 1
        if q > chi2.isf(EVEN_SHAPE_LEVEL, p):
            continue
        keep = max(0.0, 1.0 - p / q) if q > 0 else 0.0
        even = c * shape[inside].sum() / c.sum()
        shape[inside] = even + keep * (shape[inside] - even)
    return shape


def _tail_scale(near, far, width, span):
    """Scale ``lam`` of the exponential density that puts ``near`` records on a
    stretch of length ``width`` and ``far`` on the ``span`` beyond it (``inf``
    when ``far`` is at least an even density's share: no thinning shown)."""
    if not (near > 0 and far > 0) or far / near >= span / width:
        return math.inf

    def far_over_near(lam):
        return math.exp(-width / lam) * -math.expm1(-span / lam) / -math.expm1(-width / lam)

    low, high = width * 1e-3, width * 1e3
    if far_over_near(high) <= far / near:
        return math.inf
    for _ in range(100):  # far_over_near grows with lam: bisection on its logarithm
        middle = math.sqrt(low * high)
        low, high = (middle, high) if far_over_near(middle) < far / near else (low, middle)
    return math.sqrt(low * high)


def _tapered_ends(fine, shape, integer):
    """``fine`` and ``shape`` with each end part away from 0 that is wider than
    its neighbour and thinner than the parts beside it cut into parts whose
    records fall off exponentially outward (post-processing).

    A column's tail thins out toward its largest magnitudes, and the range ends
    at a power of two: drawn evenly over a wide end part, the few records it
    holds would reach values far beyond any the column holds (ages up to the
    octave's end).  The scale is the one exponential that gives the end part
    and the parts beside it (a quarter of its length or more) the records they
    hold; an end part no thinner than its neighbours stays even.
    """
    fine = np.asarray(fine, dtype=np.float64)
    shape = np.asarray(shape, dtype=np.float64)
    for upper in (True, False):
        if fine.size < 3:
            break
        if upper:
            inner, grid, mass = fine[-2], fine[::-1], shape[::-1]
        else:
            inner, grid, mass = fine[1], fine, shape
        if (inner < 0) if upper else (inner > 0):
            continue  # the end toward 0
        lengths = np.abs(np.diff(grid))
        span = lengths[0]
        if not (mass[0] > 0 and span >= 2.0 * lengths[1]):
            continue
        run = min(int(np.searchsorted(np.cumsum(lengths[1:]), span / 4.0)) + 1, lengths.size - 1)
        lam = _tail_scale(float(mass[1:run + 1].sum()), float(mass[0]),
                          float(lengths[1:run + 1].sum()), float(span))
        if not math.isfinite(lam):
            continue
        step = max(lam / 2.0, span / 32.0)
        offsets = np.append(np.arange(step, min(span, 10.0 * lam), step), span)
        if integer:
            offsets = np.unique(np.clip(np.ceil(offsets), 1.0, span))
        offsets = np.unique(np.concatenate([[0.0], offsets]))
        cumulative = -np.expm1(-offsets / lam) / -np.expm1(-span / lam)
        pieces = float(mass[0]) * np.diff(cumulative)
        cuts = inner + offsets if upper else inner - offsets
        if upper:
            fine = np.concatenate([fine[:-2], cuts])
            shape = np.concatenate([shape[:-1], pieces])
        else:
            fine = np.concatenate([cuts[::-1], fine[2:]])
            shape = np.concatenate([pieces[::-1], shape[1:]])
    return fine, shape


def _edges_and_within(fine, mass, low, high, cells, integer, points, n_bins, decimals,
                      by_value=False, runs=False, shape=None, noisy=None):
    """Interval edges (the noisy quantiles of ``mass`` on the grid ``fine``, or the
    range grid's ``cells`` when no part holds records; with ``by_value``, one per
    integer that holds records, or with ``runs`` per run of integers:
    :func:`_level_edges`) and each interval's within-bin sub-bin probabilities
    (post-processing), from ``shape`` when given (else ``mass``)."""
    cumulative = np.cumsum(mass)
    if by_value:
        edges = _level_edges(fine, mass, low, high, points, runs)
    elif cumulative[-1] > 0 and n_bins > 1:
        targets = cumulative[-1] * np.arange(1, n_bins) / n_bins
        cuts = fine[1:][np.searchsorted(cumulative, targets)]
        edges = _split_off_gaps(_cut_at_gaps(np.unique(np.concatenate([[low], cuts, [high]])),
                                             fine, mass, range_grid(integer)), fine, mass)
    else:  # no shape measured: the range grid's cells
        edges = np.unique(np.clip(cells, low, high))
        if edges.size - 1 > n_bins:
            edges = edges[np.unique(np.linspace(0, edges.size - 1, n_bins + 1).round()
                                    .astype(int))]
    if integer:  # snapped as a closed range: the last edge is the largest value + 1
        edges = _snap_edges(np.append(edges[:-1], edges[-1] - 1), np.dtype(np.int64))
    else:
        if decimals is not None:  # readable edges, and decoded values rounded inside them
            edges = np.unique(np.concatenate([[low], np.round(edges[1:-1], decimals),
                                              [high]]))
            edges = edges[(edges >= low) & (edges <= high)]
        edges = _snap_edges(edges, np.dtype(np.float64))
    shape = mass if shape is None else shape
    if noisy is not None:
        shape = _even_shrunk(shape, *noisy, _capacity(fine[:-1], fine[1:], integer, points),
                             fine, edges)
    if not by_value:
        fine, shape = _tapered_ends(fine, shape, integer)
    within = []
    for k in range(edges.size - 1):
        sub = sub_bin_edges(edges[k], edges[k + 1], integer, WITHIN_SUB_BINS)
        weights_k = _overlap(sub[:-1], sub[1:], fine) @ shape
        room = _capacity(sub[:-1], sub[1:], integer, points)
        weights_k = np.where(room > 0, weights_k, 0.0)
        if not weights_k.sum() > 0:
            weights_k = np.where(room > 0, 1.0, 0.0) if (room > 0).any() else np.ones(room.size)
        weights_k = weights_k / weights_k.sum()
        within.append(tuple(round(float(w), 6) for w in weights_k))
    return edges, tuple(within)


def _sized(count, unit, low, high, integer):
    """Parts of ``[low, high)`` holding about ``unit`` records each for a noisy
    ``count`` (1 to :data:`MAX_SUB_CELLS`; whole integers for integer columns)."""
    n = int(np.clip(np.floor(np.nan_to_num(count) / unit), 1, MAX_SUB_CELLS))
    if integer:
        n = int(min(n, high - low))
        return np.unique(np.round(np.linspace(low, high, n + 1)))
    return np.linspace(low, high, n + 1)


def _zoom_unit(sigma, level, rounds=ZOOM_ROUNDS):
    """Records a part cut in sub-round ``level`` (1: the first) of a zoomed part is
    sized for: ``4`` standard deviations of its count over the sub-rounds left."""
    return 4.0 * sigma * math.sqrt(rounds / (rounds - level + 1.0))


def _zoomable(first_round, base, children, sigma, integer):
    """Whether each part of round 2's ``base`` is zoomed (:func:`_zoomed`): its
    round-1 noisy count could fill two parts of the last sub-round, and its
    children are not single integers already (a public function of round 1).
    A part with fewer records, which the sub-rounds could hardly cut, keeps its
    one count of round 2."""
    room = np.diff(base) > children if integer else np.ones(children.size, dtype=bool)
    return (np.nan_to_num(first_round) >= 2.0 * _zoom_unit(sigma, ZOOM_ROUNDS)) & room


def _zoomed(values, weights, low, high, total, total_var, sigma, integer, rng,
            rounds=ZOOM_ROUNDS):
    """The parts of one crowded part ``[low, high)`` of round 2, their estimates and
    variances, from :data:`ZOOM_ROUNDS` sub-rounds of noisy counts of ``sigma *
    sqrt(rounds)`` each (together ``1/sigma``-GDP: each record is counted once in
    each sub-round).

    Sub-round 1 counts the part's children, sized as round 2 sizes them (about
    ``4 sigma`` records each by ``total``, the part's round-1 count of variance
    ``total_var``); each later sub-round counts every part of the one before
    again, one whose noisy count so far holds at least two parts' worth
    (:func:`_zoom_unit`: ``4`` standard deviations of a part counted in the
    sub-rounds left) cut into that many (a public function of the counts
    already released).  An hour of events among the seconds of 2024, which
    round 2's children would spread over a day, is cut into minutes.  The
    counts of the tree (the part, every part and its children) are combined
    by least squares (inverse-variance sums up the tree, differences shared
    down by variance, post-processing): a part that is never cut is as
    precise as one counted once in round 2.
    """
    s2 = rounds * sigma ** 2
    edges = _sized(total, _zoom_unit(sigma, 1, rounds), low, high, integer)
    levels, acc, cnt, parent = [], None, None, np.zeros(edges.size - 1, dtype=np.int64)
    for level in range(1, rounds + 1):
        if level > 1:  # cut the crowded parts of the sub-round before
            unit = _zoom_unit(sigma, level, rounds)
            pieces = [_sized(a / c, unit, lo, hi, integer)
                      for a, c, lo, hi in zip(acc, cnt, edges[:-1], edges[1:])]
            parent = np.concatenate([np.full(piece.size - 1, k, dtype=np.int64)
                                     for k, piece in enumerate(pieces)])
            single = np.array([piece.size == 2 for piece in pieces])
            edges = np.unique(np.concatenate(pieces))
        y = _noisy(_histogram(values, weights, edges), sigma * math.sqrt(rounds), rng)
        levels.append((edges, y, parent))
        if level == 1:
            acc, cnt = y.copy(), np.ones(y.size)
        else:  # a part counted again keeps its counts so far, a cut one starts afresh
            acc = y + np.where(single, acc, 0.0)[parent]
            cnt = 1.0 + np.where(single, cnt, 0.0)[parent]
    # least squares on the tree: sums up (inverse variance), differences down
    z, v = [None] * rounds, [None] * rounds
    z[-1], v[-1] = levels[-1][1], np.full(levels[-1][1].size, s2)
    sums = [None] * rounds
    for k in range(rounds - 1, -1, -1):
        kids = levels[k][2]
        n_up = 1 if k == 0 else levels[k - 1][1].size
        s_up = np.bincount(kids, weights=z[k], minlength=n_up)
        vs_up = np.bincount(kids, weights=v[k], minlength=n_up)
        sums[k] = (s_up, vs_up)
        if k == 0:
            top, top_var = _inverse_variance(np.array([total]), np.array([total_var]),
                                             s_up, vs_up)
        else:
            z[k - 1], v[k - 1] = _inverse_variance(levels[k - 1][1], np.full(n_up, s2),
                                                   s_up, vs_up)
    f, fv = top, top_var
    for k in range(rounds):
        kids = levels[k][2]
        s_up, vs_up = sums[k]
        share = v[k] / vs_up[kids]
        f, fv = (z[k] + (f - s_up)[kids] * share,
                 v[k] - v[k] * share + share ** 2 * fv[kids])
    return levels[-1][0], f, fv


def _bins_and_shape(values, weights, first, last, integer, points, rho, n_bins, rng,
                    range_counts, range_sigma, decimals_of, levels=None, codes=False,
                    others=None, point_total=None, empty=None, reach=None):
    """Step 3: the final range, interval edges (noisy quantiles) and within-bin
    sub-bin probabilities, from two rounds of noisy counts of ``rho / 2`` each.

    Round 1 counts the values (but the point masses) on :func:`_window` of the
    DP range, each cell of the range grid cut into as many parts (up to
    :data:`MAX_SUB_CELLS`) as its noisy count of step 1 fills with about
    ``4 sigma / sqrt(2)`` records each (the two rounds' precision; empty
    octaves stay whole).  The range widens (:func:`_grouped_cells`, then
    :func:`_widen` at :data:`RANGE_NEIGHBOUR` sigma) over the cells whose
    counts of step 1 and round 1 together show records: a sparse column whose
    octaves are each below the noise still finds its range; a positive range
    of an integer column reaches 0 when those counts say that its lowest
    cell's density goes on below it (:func:`_reaches_zero`); a range whose
    estimate falls short of ``others`` (the noisy count of the records neither 0
    nor missing) takes the run beside it likeliest to hold the difference
    (:func:`_run_beside`).  A float range on
    one side of 0 (not step 1's fallback cell of 0) has round 1 count the
    mirror image of its window too, from the values beyond 0 (each record is
    still in one part of the round, so the spend is the same; its noise comes
    from a stream of its own, :func:`_side_stream`, so that the other draws of
    the release are as without it): the other side is taken when the fold of
    step 1 and round 1 (:func:`_folded_range`) shows it, as is that of a
    float column whose step 1 found nothing.  A float range across 0 counts
    the octaves between its two sides' innermost populated cells
    (:func:`_central_parts`) as two parts, in round 1 when step 1's range
    held them, else in round 2 alone.  Round 2 counts
    the final range's parts again, a part whose round-1 count holds more than
    ``4 sigma`` records per part cut further in the same way (values crowded
    into a sliver of their octave, such as an identifier column), one whose
    round-1 count could fill two parts of the finest cut zoomed in
    :data:`ZOOM_ROUNDS` sub-rounds (:func:`_zoomed`); the two
    rounds, and step 1 where a part is a whole cell, are averaged by inverse
    variance, so that a part measured twice is as precise as one measured
    once with ``rho``.  All else is post-processing: a part's estimate is kept
    when it clears the level that noise alone clears in half a part of the
    grid on average (at least one standard deviation; outside step 1's range
    away from 0, the range threshold; an outermost run far from the other kept
    parts, the range threshold at its sum: :func:`_without_far_ends`); what
    the cells widened over toward 0
    hold beyond their kept parts is spread evenly over their other parts; the
    range ends at the outermost kept parts, but at 0 when it was widened from
    step 1's fallback cell of 0 (a sparse column's values near 0 are drawn
    there, not clipped up to its first kept part), and a nonnegative integer
    range keeps the parts below its first kept one when their estimates fit
    that part's density going on better than empty parts
    (:func:`_reaches_zero`); a shape whose parts differ from even shares by
    noise alone, over the whole range and then in each interval, is shrunk
    toward them (:func:`_even_shrunk`); float edges are
    rounded to the column's decimals; an integer range of at most ``levels`` values has one
    interval per value (a date column of few months or days: each is then
    measured by the release, as a category would be).  With ``codes`` (see
    :data:`MAX_CODE_LEVELS`) the range ends at the outermost point values or
    codes shown to hold records (:func:`_code_ends`; step 1's range, whose
    integers were all public candidates of step 2, when there is neither), the
    integers that are no point value get one interval per run of consecutive
    ones, and the within-bin shape follows
    every part's estimate clipped at 0 (the kept parts alone would give an
    interval's records to the one part that noise left above its level).
    ``empty``: the cells of the range grid that step 1 read as empty (a float
    column's cells below its precision, :func:`_below_precision`), read as
    empty in the estimate of step 1 and round 1 together too.

    Returns
    -------
    edges, within, spend, decimals, (first, last)
        The last: the final range's cells of the range grid.
    """
    grid = range_grid(integer)
    sigma = _sigma(rho / 2.0)
    spend = Spend("bins and shape", "discrete_gaussian", rho=rho,
                  params=(("sigma", sigma), ("rounds", 2), ("sensitivity", 1)))
    pts = np.asarray(points, dtype=np.float64)
    point_cells = np.unique(_cells(pts, grid)) if pts.size else np.array([], dtype=np.int64)
    # round 1: the window of the DP range
    zero_cell = _zero_cell(integer)
    w_first, w_last = _window(first, last, integer, reach)
    w_low, w_high = _bounds(w_first, w_last, integer)
    # parts sized for the precision of the two rounds together (sigma / sqrt(2))
    parts = np.clip(np.floor(range_counts[w_first:w_last + 1] * math.sqrt(2.0) / (4.0 * sigma)),
                    1, MAX_SUB_CELLS).astype(int)
    fine = _parts_grid(grid, w_first, w_last, integer, parts, w_low, w_high)
    central = None if integer else _central_parts(range_counts, range_sigma, first, last)
    if central is not None:  # the octaves near 0 of a range across it: two parts
        fine = np.union1d(fine[(fine <= central[0]) | (fine >= central[1])], [0.0])
    rest = ~_at_points(values, integer, decimals_of(*_bounds(first, last, integer)), pts)
    # a float range on one side of 0 (not step 1's fallback cell of 0): round 1 also
    # counts the window's mirror image, where its other side is tested, from the
    # values beyond 0 (each record still in one part of the round: the same spend)
    one_sided = not integer and first < last and (first >= zero_cell or last <= zero_cell) \
        or not integer and (first > zero_cell or last < zero_cell)
    e_first, e_last = w_first, w_last
    inside = np.ones(values.shape, dtype=bool)
    positive = last > zero_cell  # a range on the positive side (else the negative)
    if one_sided:
        reach = max(zero_cell - w_first, w_last - zero_cell)
        e_first, e_last = zero_cell - reach, zero_cell + reach
        inside = values >= w_low if positive else values <= w_high
    mine = rest & inside
    noisy = _noisy(_histogram(_clip(values[mine], w_low, w_high, integer),
                              None if weights is None else weights[mine], fine), sigma, rng)
    window_parts = fine, noisy  # the window's own parts and counts
    if one_sided:  # the mirror image's noise from a stream of its own: the window's
        # noise, and all that follows, as without it
        beyond = rest & ~inside
        e_low, e_high = _bounds(e_first, e_last, integer)
        m_first, m_last = (e_first, w_first - 1) if positive else (w_last + 1, e_last)
        m_low, m_high = (e_low, w_low) if positive else (w_high, e_high)
        m_parts = np.clip(np.floor(range_counts[m_first:m_last + 1] * math.sqrt(2.0)
                                   / (4.0 * sigma)), 1, MAX_SUB_CELLS).astype(int)
        m_fine = _parts_grid(grid, m_first, m_last, integer, m_parts, m_low, m_high)
        m_noisy = _noisy(_histogram(_clip(values[beyond], m_low, m_high, integer),
                                    None if weights is None else weights[beyond], m_fine),
                         sigma, _side_stream(rng))
        if positive:
            fine, noisy = np.concatenate([m_fine[:-1], fine]), np.concatenate([m_noisy, noisy])
        else:
            fine, noisy = np.concatenate([fine[:-1], m_fine]), np.concatenate([noisy, m_noisy])
    n_extended = e_last - e_first + 1
    # each part's cell of the range grid: the one holding its middle (a float's zero
    # cell merged with its neighbours is the zero cell's, not its lower neighbour's);
    # a central part spans many cells and counts for none of them
    octave = _cells((fine[:-1] + fine[1:]) / 2.0, grid) - e_first
    single = np.ones(octave.size, dtype=bool) if central is None else ~(
        (fine[:-1] >= central[0]) & (fine[1:] <= central[1]))
    sums = np.bincount(octave[single], weights=noisy[single], minlength=n_extended)
    counted = np.bincount(octave[single], minlength=n_extended)
    step1 = np.full(n_extended, range_sigma ** 2)
    step1[np.isin(np.arange(e_first, e_last + 1), point_cells)] = np.inf
    extended = _inverse_variance(sums, np.where(counted > 0, counted * sigma ** 2, np.inf),
                                 range_counts[e_first:e_last + 1], step1)
    if empty is not None:  # cells read as empty in step 1 (below a float's precision)
        extended[0][empty[e_first:e_last + 1]] = 0.0
    # the range's own window (the mirror image is read by the fold test alone)
    n_window = w_last - w_first + 1
    estimate, variance = (a[w_first - e_first:w_last - e_first + 1] for a in extended)
    measured = _bounds(first, last, integer)  # step 1's range
    fallback = first == last == _zero_cell(integer)  # the cell of 0 alone: no evidence
    z_window = float(-ndtri(RANGE_FALSE_CELL / (n_window * len(RANGE_WINDOWS))))
    first, last = _grouped_cells(estimate, np.sqrt(variance), first - w_first, last - w_first,
                                 z_window, RANGE_NEIGHBOUR)
    zero = _zero_cell(integer) - w_first
    # the cell of 0 holds the records themselves, not a point mass (floats of
    # magnitudes below the grid, such as 1e-12): widening from it over the wide
    # window of step 1's fallback needs the range threshold, not a neighbour's level
    at_zero = bool(estimate[zero] > z_window * math.sqrt(variance[zero]))
    first, last = _widen(estimate, variance, first, last,
                         z_window if fallback and at_zero else RANGE_NEIGHBOUR)
    folded_fallback = False
    if (fallback and not integer and not first < zero < last and reach is None
            and zero + w_first not in point_cells and not at_zero):
        # step 1's fallback on a float column: its symmetric window folded at 0, step 1
        # and round 1 together (a column centred on 0 on a small table)
        folded = _folded_range(estimate, first, last, np.sqrt(variance), zero=zero,
                               extend=False)
        if folded != (first, last) and folded[0] < zero < folded[1]:
            (first, last), folded_fallback = folded, True
    if folded_fallback:
        pass
    elif (fallback and first == last == zero and zero + w_first not in point_cells
            and not at_zero):
        # still nothing, and neither a point mass in the cell of 0 nor a count there
        # that would hold the values (a column of zeros, of magnitudes below the
        # grid): the likeliest run, if any
        first, last = _likeliest_run(estimate, variance, zero, FALLBACK_RUN_SIGMAS)
    elif (fallback and first == last == zero and others is not None
          and others[0] > REST_SIGMAS * math.sqrt(others[1])):
        # a point mass of 0, and a count showing other records: the run likeliest to
        # hold them (a mostly-zero amount whose other values are all below the noise)
        first, last = _run_holding(estimate, variance, zero, others)
    if others is not None and not codes and np.all(point_cells == zero + w_first):
        first, last = _run_beside(estimate, variance, first, last, zero, others,
                                  None if empty is None else empty[w_first:w_last + 1])
    if integer and not codes and first > zero >= 0:  # a positive range: do its values reach 0?
        width = np.diff(grid)[w_first:w_last + 1]
        if _reaches_zero(estimate[zero:first], variance[zero:first], width[zero:first],
                         estimate[first], variance[first], width[first]):
            first = zero
    first, last = first + w_first, last + w_first
    central_2 = None  # the octaves near 0 of a range that step 3 took across it
    if folded_fallback:
        measured = _bounds(first, last, integer)
        scores = np.zeros(range_counts.size)
        scores[e_first:e_last + 1] = extended[0] / np.sqrt(extended[1])
        central_2 = _central_parts(scores, 1.0, first, last)
    if one_sided:  # its other side, by the fold of step 1 and round 1 together
        folded = _folded_range(extended[0], first - e_first, last - e_first,
                               np.sqrt(extended[1]), zero=zero_cell - e_first, extend=False)
        if folded[0] + e_first < first or folded[1] + e_first > last:
            first, last = folded[0] + e_first, folded[1] + e_first
            measured = _bounds(first, last, integer)  # kept as step 1's range would be
            scores = np.zeros(range_counts.size)  # the octaves near 0: two parts of round 2
            scores[e_first:e_last + 1] = extended[0] / np.sqrt(extended[1])
            central_2 = _central_parts(scores, 1.0, first, last)
        else:  # round 2 as without the mirror image
            fine, noisy = window_parts
    low, high = _bounds(first, last, integer)
    decimals = decimals_of(low, high)
    if not integer:  # bounds at the column's precision
        low = math.floor(low * 10 ** decimals) / 10 ** decimals
        high = math.ceil(high * 10 ** decimals) / 10 ** decimals
    if high <= low:  # one value (a float range [0, 0]): one closed bin
        return np.array([low, high]), ((1.0,),), spend, decimals, (first, last), None
    # round 2: the final range's parts, crowded parts cut further
    base = np.concatenate([[low], fine[(fine > low) & (fine < high)], [high]])
    if central_2 is not None:  # measured by round 2 alone
        base = np.union1d(base[(base <= central_2[0]) | (base >= central_2[1])], [0.0])
    at = np.searchsorted(base, fine[:-1])
    same = (at < base.size - 1)
    same[same] = (base[at[same]] == fine[:-1][same]) & (base[at[same] + 1] == fine[1:][same])
    first_round = np.full(base.size - 1, np.nan)
    first_round[at[same]] = noisy[same]
    pieces = [_sized(count, 4.0 * sigma, a, b, integer)
              for a, b, count in zip(base[:-1], base[1:], first_round)]
    children = np.array([piece.size - 1 for piece in pieces])
    fine = np.unique(np.concatenate(pieces))
    parent = _cells(fine[:-1], base)
    rest = ~_at_points(values, integer, decimals, pts)
    clipped = _clip(values[rest], low, high, integer)
    rest_weights = None if weights is None else weights[rest]
    zoom = _zoomable(first_round, base, children, sigma, integer)
    plain = ~zoom[parent]  # a zoomed part's children are counted by _zoomed alone
    second = np.zeros(fine.size - 1)
    second[plain] = _noisy(_histogram(clipped, rest_weights, fine)[plain], sigma, rng)
    n_children = np.bincount(parent, minlength=base.size - 1)
    parent_sum = np.bincount(parent, weights=second, minlength=base.size - 1)
    # a parent measured in both rounds: the children's estimates add up to the
    # inverse-variance average of its two totals (the least-squares estimate)
    total, _ = _inverse_variance(first_round, np.where(np.isnan(first_round), np.inf,
                                                       sigma ** 2),
                                 parent_sum, n_children * sigma ** 2)
    estimate = second + ((total - parent_sum) / n_children)[parent]
    variance = sigma ** 2 * np.where(np.isnan(first_round), 1.0,
                                     n_children / (n_children + 1.0))[parent]
    if zoom.any():  # the zoomed parts: their sub-rounds replace their children
        at_part = _cells(clipped, base)
        blocks = []
        for k in range(base.size - 1):
            inside = parent == k
            if not zoom[k]:
                blocks.append((fine[:-1][inside], estimate[inside], variance[inside]))
                continue
            mine = at_part == k
            edges_k, est_k, var_k = _zoomed(
                clipped[mine], None if rest_weights is None else rest_weights[mine],
                base[k], base[k + 1], first_round[k], sigma ** 2, sigma, integer, rng)
            blocks.append((edges_k[:-1], est_k, var_k))
        fine = np.append(np.concatenate([b[0] for b in blocks]), high)
        estimate = np.concatenate([b[1] for b in blocks])
        variance = np.concatenate([b[2] for b in blocks])
    cell, whole = _whole_cells(fine[:-1], fine[1:], grid, point_cells)
    estimate[whole], variance[whole] = _inverse_variance(
        estimate[whole], variance[whole], range_counts[cell[whole]], range_sigma ** 2)
    def capacity_of(fine):
        return _capacity(fine[:-1], fine[1:], integer, points)

    capacity = capacity_of(fine)
    mass = _kept_mass(estimate, variance, capacity, fine, measured, fallback)
    if not codes:
        mass = _without_far_ends(mass, estimate, variance, fine,
                                 others if np.all(point_cells == zero_cell) else None)
    hull = _point_hull(pts, integer, point_total, range_counts[first:last + 1], range_sigma)
    if hull is not None:  # no records shown outside the point values: a run beyond
        mass = _without_weak_runs(mass, estimate, variance, fine, hull)  # them needs more
    shape = np.where(capacity > 0, np.clip(estimate, 0.0, None), 0.0) if codes else mass
    parts = fine.copy()  # every part measured, before the range ends at the kept ones
    kept = np.flatnonzero(mass)
    code_range = None
    if codes:  # the range ends at the outermost point values or parts shown to hold records
        kept, code_range = _code_ends(fine, estimate, variance, capacity, pts, kept, measured)
    if kept.size and fallback and not codes and fine[0] == 0:
        kept = np.union1d(kept, [0])  # widened from the cell of 0: the range starts there
    elif kept.size and integer and not codes and kept[0] > 0 and fine[0] >= 0:
        j = int(kept[0])  # the parts below the first kept one: its density going on?
        if _reaches_zero(estimate[:j], variance[:j], capacity[:j].astype(np.float64),
                         estimate[j], variance[j], float(capacity[j])):
            kept = np.union1d(kept, [0])
    noisy = (estimate, variance)
    if hull is not None and not kept.size:  # the point values' hull alone, one interval
        low, high = hull
        first, last = _range_cells(low, high, integer)
        if high <= low:  # one float point value: one closed bin
            edges, within = np.array([low, high]), ((1.0,),)
        else:
            fine, mass = np.array([low, high]), np.zeros(1)
            edges, within = _edges_and_within(fine, mass, low, high, fine, integer, points,
                                              n_bins, decimals)
        return (edges, within, spend, decimals, (first, last),
                _interval_counts(edges, parts, estimate, variance))
    if kept.size:  # the range ends at the outermost kept parts
        fine = fine[kept[0]:kept[-1] + 2]
        mass = mass[kept[0]:kept[-1] + 1]
        shape = shape[kept[0]:kept[-1] + 1]
        noisy = (estimate[kept[0]:kept[-1] + 1], variance[kept[0]:kept[-1] + 1])
        fine = _tightened_ends(fine, mass, integer)
        if code_range is not None:
            fine[0], fine[-1] = code_range
        low, high = float(fine[0]), float(fine[-1])
        if not integer:  # a range narrow for its magnitude: the digits of its span too
            decimals = max(decimals, decimals_of(low, high, span=True))
            low = math.floor(low * 10 ** decimals) / 10 ** decimals
            high = math.ceil(high * 10 ** decimals) / 10 ** decimals
            fine[0], fine[-1] = low, high
    # the values of the parts that hold records (not the range's width: one false
    # part far out must not make a column of few values quantiles), each holding
    # LEVEL_SIGMAS times a round's noise on average (fewer: quantiles smooth it)
    held = float(np.diff(fine)[mass > 0].sum())
    by_value = codes or (integer and levels is not None and 0 < held <= levels
                         and float(mass.sum()) >= LEVEL_SIGMAS * sigma * held)
    if not by_value:  # a range whose parts differ by noise alone: toward an even density
        mass = shape = _even_shrunk(mass, *noisy, capacity_of(fine), fine,
                                    np.array([fine[0], fine[-1]]))
    edges, within = _edges_and_within(fine, mass, low, high, grid[first:last + 2],
                                      integer, points, n_bins, decimals, by_value,
                                      runs=codes, shape=shape, noisy=None if by_value else noisy)
    return (edges, within, spend, decimals, (first, last),
            _interval_counts(edges, parts, estimate, variance, exact=by_value))


def _without_weak_runs(mass, estimate, variance, fine, hull):
    """``mass`` without the runs of kept parts outside ``hull = (low, high)`` whose
    summed estimate does not clear the range threshold at its noise, the level of
    :func:`_without_far_ends` (post-processing).

    For a column whose records outside its point values do not clear their
    threshold (:func:`_point_hull`): a part kept at the level that noise alone
    clears in half a part of the grid is no evidence of records there.
    """
    mass = np.array(mass, dtype=np.float64)
    level = float(-ndtri(RANGE_FALSE_CELL / estimate.size))
    outside = (fine[:-1] < hull[0]) | (fine[1:] > hull[1])
    held = np.flatnonzero((mass != 0) & outside)
    for run in np.split(held, np.flatnonzero(np.diff(held) > 1) + 1):
        if run.size and not (estimate[run].sum()
                             > level * math.sqrt(variance[run].sum())):
            mass[run] = 0.0
    return mass


def _code_ends(fine, estimate, variance, capacity, points, kept, measured):
    """The range of a column binned as codes (post-processing): the parts it keeps at
    its ends and ``(low, high)``, from its outermost released point value to its
    outermost part shown to hold records (kept, ``kept``, or whose estimate
    clears :data:`CODE_END_SIGMAS` times its noise); step 1's range ``measured``
    when neither exists.

    Step 1's range ends at a power of two: a scale of 1-6 gets the range 1-7, and
    the run of codes beyond the last point value, measured by the release as a
    category, comes back holding what the release's noise gave a value no record
    holds.  A code beyond the point values stays when step 3 shows records there.
    """
    shown = np.union1d(kept, np.flatnonzero((capacity > 0) & (
        estimate > CODE_END_SIGMAS * np.sqrt(variance)))).astype(int)
    lows = [fine[shown[0]]] if shown.size else []
    highs = [fine[shown[-1] + 1]] if shown.size else []
    if points.size:
        lows.append(float(points.min()))
        highs.append(float(points.max()) + 1.0)
    if not lows:
        inside = np.flatnonzero((fine[:-1] >= measured[0]) & (fine[1:] <= measured[1]))
        return (inside[[0, -1]] if inside.size else kept), None
    low, high = max(min(lows), fine[0]), min(max(highs), fine[-1])
    parts = np.flatnonzero((fine[1:] > low) & (fine[:-1] < high))
    return parts[[0, -1]], (low, high)


def _point_hull(points, integer, point_total, range_counts, range_sigma):
    """``(low, high)``, the span of the released point values ``points``, when the noisy
    count of the records outside them does not clear :data:`POINT_HULL_SIGMAS` times its
    noise; else ``None`` (post-processing).

    That count is the records of the final range's cells of the range grid
    (``range_counts``, step 1's noisy counts, of noise ``range_sigma`` each; averaged
    by inverse variance with the table's noisy count of present records, when
    ``point_total`` carries it) less the points' noisy counts of step 2
    (``point_total = (sum, variance, present)``).  A fourth item, ``True``, says
    that the sum holds step 1's count of the cell of 0 (averaged with step 2's
    count of 0): the count is then the present records alone, since the range's
    cells hold that count too.  A constant column (a timestamp
    held by every record) has parts that noise alone keeps and a range that noise
    may widen by octaves, decades from its value; with no records shown outside
    its point values, its intervals span those values only (an integer interval
    whose integers are all point values holds no record).
    """
    if point_total is None or not points.size or not np.all(np.isfinite(points)):
        return None
    total, total_variance, present, *zero_counted = point_total
    count = float(np.sum(range_counts))
    count_variance = range_counts.size * range_sigma ** 2
    if zero_counted:  # total holds step 1's count of 0: the present records alone
        count, count_variance = present
    elif present is not None:
        count, count_variance = (float(v[0]) for v in _inverse_variance(
            np.array([count]), np.array([count_variance]),
            np.array([present[0]]), np.array([present[1]])))
    rest, rest_variance = count - total, count_variance + total_variance
    if rest > POINT_HULL_SIGMAS * math.sqrt(rest_variance):
        return None
    return float(points.min()), float(points.max()) + (1.0 if integer else 0.0)


def _interval_counts(edges, parts, estimate, variance, exact=False):
    """Noisy count of the records in each interval of ``edges`` and its variance: the
    sums of the unbiased estimates of step 3's ``parts`` (post-processing).

    A part belongs to the interval holding its midpoint; the parts beyond the end
    edges to the end intervals, where their values are clipped.  Summing the
    parts' variances overstates the variance of parts cut from one parent (their
    sum is measured more precisely), which only weighs the counts less.  With
    ``exact``, an interval that a part straddles is not measured (count NaN,
    variance ``inf``): its count would hold its neighbour's records (narrow
    intervals of one value each).
    """
    n = edges.size - 1
    middle = (parts[:-1] + parts[1:]) / 2.0
    k = np.clip(np.searchsorted(edges, middle, side="right") - 1, 0, n - 1)
    counts = np.bincount(k, weights=estimate, minlength=n)
    variances = np.bincount(k, weights=variance, minlength=n)
    if exact:
        inner = edges[1:-1]
        cut = np.flatnonzero(np.any((parts[:-1, None] < inner[None, :])
                                    & (parts[1:, None] > inner[None, :]), axis=1))
        straddled = np.zeros(n, dtype=bool)
        for part in cut:  # the intervals the part overlaps
            lo = np.searchsorted(edges, parts[part], side="right") - 1
            hi = np.searchsorted(edges, parts[part + 1], side="left") - 1
            straddled[max(lo, 0):min(hi, n - 1) + 1] = True
        counts[straddled], variances[straddled] = np.nan, np.inf
    return (tuple(float(v) for v in counts), tuple(float(v) for v in variances))


def numeric_binning(values, *, integer, rho, delta, n_bins, max_points, rng,
                    weights=None, special=(), decimals=None, clip=True, missing=0.0,
                    texts=None, text_weights=None, text_options=None, levels=None,
                    code_levels=None, text_rho=0.0, records=None):
    """The DP :class:`~dpsynth.schema.Binning` of one numeric column, its spends and
    whether it holds missing values.

    Parameters
    ----------
    values : ndarray of float64
        The column's values, missing values removed (or distinct values, with
        ``weights`` their numbers of records).
    integer : bool
        Whether the column holds integers (its dtype, public).
    rho : float
        zCDP budget of the column (``rho = mu**2 / 2`` in Gaussian DP),
        split by :data:`STEP_SHARES` over the three steps.
    delta : float
        Failure probability of the point masses' threshold.
    n_bins : int
        Largest number of intervals.
    max_points : int
        Largest number of DP point masses.
    rng : numpy.random.Generator
    weights : ndarray, default=None
        Records per value.
    special : sequence of float, default=()
        Declared point values (free; excluded from the DP steps 2 and 3).
    decimals : int, default=None
        Declared decimals of a float column; ``None`` uses
        :func:`default_decimals` of the DP range.
    missing : float, default=0.0
        Number of records without a value (counted in step 1's histogram).
    texts : ndarray of object, default=None
        A text column holding numbers: its present fields that are no
        number (``text_weights`` their numbers of records), whose frequent
        values step 2 releases as the binning's ``codes``.
    text_options : dict, default=None
        More fields of the :class:`~dpsynth.schema.Binning` of a text column
        (``other_label``, ``text_share``), and ``texts``: the noisy count of
        its fields that are no number and that count's noise scale
        (:func:`decide_numeric`), which decide with the released codes'
        noisy counts whether it gets an other code (:func:`text_other`).
    levels : int, default=None
        An integer column whose final DP range (step 3) holds at most this
        many values gets one interval per value instead of ``n_bins`` noisy
        quantiles (a public function of the DP range): a date column of a few
        dozen months keeps each month's share, measured by the release like a
        category's, rather than drawn inside wide intervals from step 3's
        noisier histogram.
    code_levels : int, default=None
        An integer column whose DP range of step 1 (one it found, not its
        fallback cell of 0) holds at most this many
        integers is binned as codes (:data:`MAX_CODE_LEVELS`): step 2 measures
        every integer of the range and the count of records without a value
        with :data:`CODE_STEP_SHARES` of ``rho``, releases up to
        ``code_levels`` point values above :data:`PUBLIC_POINT_SIGMAS` sigma,
        and step 3 gives the other integers one interval per run (a public
        function of step 1's output): the codes of a column such as ``1``-``24``
        each keep their share, where quantile intervals would merge them.
    text_rho : float, default=0.0
        ``rho`` spent on step 2 on top of its share of ``rho`` (a text
        column whose texts step 2 releases).
    records : tuple or None, default=None
        The table's noisy record count and its noise variance
        (:func:`noisy_records`).  Less step 1's counts of the cell of 0 and of
        the missing records (when the column has any) and the noisy count of
        a text column's texts (when it released some, or that count clears
        :data:`MISSING_SIGMAS` times its noise), it counts the records whose
        values are elsewhere: when step 1 found only the cell of 0 and it holds a point
        mass, step 3 looks for their run (:func:`_run_holding`) if that count
        clears :data:`REST_SIGMAS` times its noise; a range whose records fall
        short of it by more than :data:`DEFICIT_SIGMAS` of its noise takes the
        run beside it likeliest to hold them (:func:`_run_beside`), and a run
        of kept parts far from the others stays when they lack what it holds
        (:func:`_without_far_ends`); step 1's range short of it (by step 1's
        counts) is no range of codes at :data:`CODES_DEFICIT_SIGMAS`, and
        step 3's window widens to step 1's run that holds what it lacks when
        that run's cells beyond the window clear together
        (:func:`_beyond_window`), all post-processing.  When 0 is a
        released point value, step 1's count of the cell of 0 is averaged with
        step 2's count of 0 (both count the same records).  Not
        used with declared ``special`` values (their records are in neither).

    Returns
    -------
    binning : dpsynth.schema.Binning
    spends : list of dpsynth.accounting.Spend
    has_missing : bool
        Whether the noisy count of records without a value (step 1's, averaged
        with step 2's by inverse variance for codes) clears
        :data:`MISSING_SIGMAS` times its noise (a DP output): a column that
        does not has no missing code, so that noise cannot put synthetic
        records there.
    """
    values = np.asarray(values, dtype=np.float64)
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
    # +-inf (a ratio's division by zero): no cell of step 1, so that they never stretch
    # the range; a float column's candidates of step 2 (released when frequent,
    # decoded as themselves); else outliers, clipped into the end parts by step 3
    infinite = np.isinf(values)
    if integer:  # a DP whole-numbers decision can miss a few decimals: each is
        # measured as the integer its interval holds it as (encode_binning's floor)
        values = np.floor(values)
    rho_range = rho * STEP_SHARES[0]
    declared = decimals
    # the float grid's cells whose values decode to 0 at the column's decimals
    empty = _below_precision(declared) if declared is not None and not integer else None
    (low, high), total, range_spend, cells, noisy_missing = _dp_range(
        values[~infinite], None if weights is None else weights[~infinite], integer,
        rho_range, rng, missing, empty)
    # the records neither 0 nor missing by step 1's counts: a range short of them
    # (records beyond it) is no range of a few codes, and step 3 may look past it
    zero = _zero_cell(integer)
    sigma_range = dict(range_spend.params)["sigma"]
    def texts_part(released=False):  # a text column's texts, when released or shown
        if text_options is None:
            return None
        noisy_texts, sigma_texts = text_options["texts"]
        if released or noisy_texts > MISSING_SIGMAS * sigma_texts:
            return noisy_texts, sigma_texts ** 2
        return None

    short_codes, reach = False, None
    if records is not None and not special:
        rest_1 = _records_elsewhere(
            records, (float(cells[zero]), sigma_range ** 2),
            (noisy_missing, sigma_range ** 2)
            if noisy_missing > MISSING_SIGMAS * sigma_range else None, texts_part())
        r_first, r_last = _range_cells(low, high, integer)
        shortfall, sd = _range_shortfall(cells, sigma_range, r_first, r_last, zero, rest_1,
                                         empty)
        short_codes = shortfall > CODES_DEFICIT_SIGMAS * sd
        if shortfall > DEFICIT_SIGMAS * sd:
            reach = _beyond_window(cells, sigma_range, r_first, r_last, zero, rest_1, empty,
                                   integer)
    # codes: a public function of step 1's DP range, when step 1 found one (its
    # fallback cell of 0 is no evidence of a few codes)
    as_codes = bool(integer and code_levels is not None and high - low <= code_levels
                    and dict(range_spend.params).get("found", True) and not short_codes)
    rho_points, rho_shape = (rho * share for share in
                             (CODE_STEP_SHARES if as_codes else STEP_SHARES)[1:])
    rho_points += text_rho
    first, last = _range_cells(low, high, integer)
    smallest = None if integer or declared is not None else smallest_magnitude(
        cells, dict(range_spend.params)["threshold"], integer)
    if not integer:  # bounds at the column's precision
        places = default_decimals(low, high, smallest) if declared is None else declared
        low, high = math.floor(low * 10 ** places) / 10 ** places, \
            math.ceil(high * 10 ** places) / 10 ** places
    special = tuple(float(v) for v in special)
    is_special = np.isin(values, np.asarray(special, dtype=np.float64))
    found = _dp_points(
        values[~is_special], None if weights is None else weights[~is_special], low, high,
        integer, declared, rho_points, delta, total, max_points, rng, texts=texts,
        text_weights=text_weights, codes=as_codes, missing=missing if as_codes else None,
        range_cells=(cells, sigma_range))
    frequent, codes, points_spend, noisy_points = found
    # the count of records without a value: step 1's, averaged with step 2's when
    # step 2 measured it (inverse variance), against MISSING_SIGMAS of its noise
    estimate, variance = noisy_missing, sigma_range ** 2
    if None in noisy_points:
        estimate, variance = _inverse_variance(
            noisy_missing, variance, noisy_points.pop(None),
            dict(points_spend.params)["sigma"] ** 2)
    has_missing = estimate > MISSING_SIGMAS * math.sqrt(variance)
    points = special + frequent
    sigma_points = dict(points_spend.params)["sigma"]

    def decimals_of(low, high, span=False):  # of the final range, and of the point values
        if integer or declared is not None:
            return declared
        if span:  # the range's span alone (a range narrowed to the parts that hold records)
            return span_decimals(low, high)
        return max(default_decimals(low, high, smallest), point_decimals(frequent))

    # the records at 0: step 1's count of the cell of 0, averaged by inverse variance
    # with step 2's count of the point value 0 when it released one (both count
    # nearly the same records, the cell's other values being below any decimal)
    zero_count = (float(cells[zero]), sigma_range ** 2)
    both_zero = 0.0 in frequent and not special and (empty is None or not empty[zero])
    if both_zero:
        zero_count = tuple(float(v) for v in _inverse_variance(
            zero_count[0], zero_count[1], noisy_points[0.0], sigma_points ** 2))
    found_missing = (estimate, variance) if has_missing else None
    others = None
    if records is not None and not special:  # the records neither 0 nor missing
        others = _records_elsewhere(records, zero_count, found_missing,
                                    texts_part(bool(codes)))
    point_total = None  # the released point values' noisy counts (step 2), summed
    if frequent and not special and not as_codes:
        present = None if records is None else _records_elsewhere(  # the present
            records, None, found_missing, None)  # records, also counted
        point_total = (float(sum(noisy_points[v] for v in frequent)),
                       len(frequent) * sigma_points ** 2, present)
        if both_zero and records is not None:  # 0 by both counts; the present records
            # alone, since the range's cells hold step 1's count of 0 too
            point_total = (point_total[0] - noisy_points[0.0] + zero_count[0],
                           point_total[1] - sigma_points ** 2 + zero_count[1],
                           point_total[2], True)
    edges, within, shape_spend, decimals, final, counts = _bins_and_shape(
        values, weights, first, last, integer, points, rho_shape, n_bins, rng, cells,
        sigma_range, decimals_of, levels, as_codes, others, point_total, empty, reach)
    if final != (first, last):  # step 3 found a range past step 1's fallback cell
        range_spend = replace(range_spend, params=tuple(
            (k, v) for k, v in range_spend.params.items() if k != "found"))
    binning = Binning(tuple(float(e) for e in edges), bool(integer), "dp_histogram",
                      bool(clip), special=special, frequent=frequent, within=within,
                      decimals=None if integer else int(decimals))
    remainder = None
    if text_options is not None:
        options = dict(text_options)
        noisy_texts, sigma_texts = options.pop("texts")
        # a code spelled like a bin or point label goes to the other code
        labels = set(binning.labels) | {other_code_label(options.get("other_label"))}
        codes = tuple(c for c in codes if c not in labels)
        remainder, other = text_other(noisy_texts, sigma_texts,
                                      [noisy_points[c] for c in codes], sigma_points)
        fill = None if other or not codes else max(codes, key=lambda c: noisy_points[c])
        binning = replace(binning, codes=codes, other=other, text_fill=fill, **options)
    # the intervals' counts of step 3, then each released point value's and code's
    # noisy count of step 2 (a declared special value is not measured), then the
    # other code's (the noisy count of the texts not released, also added to the
    # code that takes them without an other code)
    after = [noisy_points.get(v, np.nan) if v not in binning.special else np.nan
             for v in binning.special + binning.frequent]
    variances = [sigma_points ** 2] * len(after)
    # a point value at an end of the final range holds the values clipped into it:
    # step 2's count of the values beyond that end of its range (codes) joins its count
    ends = ((BELOW, low, float(binning.edges[0])),
            (ABOVE, high - 1.0, float(binning.edges[-1]) - (1.0 if integer else 0.0)))
    for key, end, final_end in ends:
        if key in noisy_points and end == final_end and end in binning.frequent:
            k = len(binning.special) + binning.frequent.index(end)
            after[k] += noisy_points[key]
            variances[k] += sigma_points ** 2
    for code in binning.codes:
        joined = code == binning.text_fill
        after.append(noisy_points[code] + (remainder[0] if joined else 0.0))
        variances.append(sigma_points ** 2 + (remainder[1] if joined else 0.0))
    if binning.other:
        after.append(remainder[0])
        variances.append(remainder[1])
    binning = replace(binning, counts=(
        tuple(counts[0]) + tuple(float(v) for v in after),
        tuple(counts[1]) + tuple(float(v) for v in variances))
        if counts is not None else None)
    return binning, [range_spend, points_spend, shape_spend], bool(has_missing)


def text_other(noisy_texts, sigma_texts, code_counts, sigma_codes):
    """Whether a text column holding numbers keeps an other code, from DP outputs only.

    ``noisy_texts`` is the noisy count of the column's fields that are no
    number (the text cell of :func:`decide_numeric`, noise scale
    ``sigma_texts``), ``code_counts`` the noisy counts of step 2 of the
    codes it released (each of noise scale ``sigma_codes``).  Their
    difference counts the fields that are neither a number nor a released
    code, unbiased up to the set union's selection (post-processing: the
    counts of the texts *not* released are not used, as their presence
    depends on the data).  The column keeps its other code when that count
    exceeds :data:`OTHER_SIGMAS` times its noise scale, plus one (the
    noise is integer: at a large epsilon a single noisy count of 1 is not
    a text); otherwise noise
    alone would put synthetic records in a code that holds (almost) none,
    and those few fields join a released code (or, with none released,
    the missing code).

    Returns
    -------
    remainder : tuple
        ``(count, variance)`` of the fields not released.
    other : bool
    """
    count = float(noisy_texts) - float(np.sum(code_counts))
    variance = float(sigma_texts) ** 2 + len(code_counts) * float(sigma_codes) ** 2
    return (count, variance), bool(count > 1.0 + OTHER_SIGMAS * math.sqrt(variance))


# ------------------------------------------------------------- text columns
def is_typed_number(value):
    """Whether ``value`` is a number object (``12``, ``2.5``), not a text or a bool."""
    return isinstance(value, Real) and not isinstance(value, (bool, np.bool_))


def _typed(series):
    """Whether each field of a text column is a number object (not its spelling)."""
    if not series.dtype == object:  # a string dtype holds texts only
        return np.zeros(len(series), dtype=bool)
    found, distinct = pd.factorize(series, use_na_sentinel=True)
    typed = np.fromiter((is_typed_number(v) for v in distinct), dtype=bool,
                        count=len(distinct))
    return np.append(typed, False)[found]


def text_fields(series, numbers=None):
    """The fields of a text column that are texts (not numbers, not missing), as a
    mask; a field that is no text (a bool, a date in an object column) is not one
    of them and goes to the other value.  ``numbers``: the column's values read
    as numbers (default :func:`parse_numbers`; the dates of a date column)."""
    present = series.notna().to_numpy()
    values = series.to_numpy(dtype=object)
    is_text = np.fromiter((isinstance(v, str) for v in values), dtype=bool,
                          count=values.size)
    numbers = parse_numbers(series) if numbers is None else numbers
    return present & is_text & np.isnan(numbers)


def binning_numbers(series, binning):
    """The numbers of a text column of ``binning`` (``binning.is_text``): its dates as
    counts of their format's unit (:func:`~dpsynth.utils._temporal.parse_dates`)
    when it is a date column, its numbers in its number format
    (:func:`~dpsynth.utils._numbers.parse_formatted`) when it has one, else
    :func:`parse_numbers`."""
    if binning.date_format is not None:
        return parse_dates(series, binning.date_format)
    if binning.number_format is not None:
        return parse_formatted(series, binning.number_format)
    return parse_numbers(series)


def decide_numeric(series, rho, rng, *, weights=None, max_text_share=MAX_TEXT_SHARE,
                   date_rng=None, format_rng=None, object_rng=None, prior=None):
    """DP decision of whether a text column holds numbers or dates, and which kind.

    The present fields of the column fall in public cells: integers and
    other decimal numbers, each as number objects or written as text, then
    dates written in each format of the public list
    :data:`~dpsynth.utils._temporal.DATE_FORMATS` (one cell per format, and
    one for the fields that two formats both read, such as ``03/04/2021``:
    :data:`~dpsynth.utils._temporal.DATE_CELLS`), then integers and other
    numbers written in each format of the public list
    :data:`~dpsynth.utils._numbers.NUMBER_FORMATS` (``"12.5%"``,
    ``"$1,234.56"``, ``"1,234"``: :data:`~dpsynth.utils._numbers.NUMBER_CELLS`), then the
    other texts, then the Python objects of an ``object`` column that are
    neither texts nor plain numbers (:data:`OBJECT_CELLS`): one cell per kind
    of date or time object of the public list
    :data:`~dpsynth.utils._temporal.DATE_OBJECTS` (``datetime.date``, naive
    and time-zone-aware ``datetime``/``pandas.Timestamp``), and two for
    ``decimal.Decimal`` objects (whole numbers and others); which cell a field
    is in is a fixed function of its own type and value.  Each field is in one
    cell at most, so one record changes
    one count by one: the counts with Gaussian noise of one scale are one
    histogram of sensitivity 1, ``rho``-zCDP however many cells it has (the
    date cells, the number-format cells and the object cells cost nothing
    beyond the number cells; their noise is drawn from ``date_rng``,
    ``format_rng`` and ``object_rng``, default ``rng`` for the first two and a
    child spawned from ``rng``'s seed sequence for the last, so that ``rng``'s
    own draws are those of a decision without object cells).  From the noisy
    counts alone:

    - the column holds numbers when their four cells' sum clears ``3 sigma``
      of its noise (``6 sigma``) and the texts (with the dates of the date
      cells that clear :data:`DATE_SIGMAS` times their noise, and the
      numbers of the number-format cells that clear :data:`FORMAT_SIGMAS`
      times theirs) do not exceed ``max_text_share`` of the fields by more
      than ``3 sigma`` (its texts, such as a code ``"N"``, then become codes
      of their own); integers when the two decimal cells do not clear
      ``3 sigma`` of their sum's noise and make at most 0.1% of the numbers
      (each level one count higher: the noise is integer);
    - otherwise it holds dates of the format ``F``, or numbers in the number
      format ``F``, whose cells' sum is the largest of those that clear
      :data:`DATE_SIGMAS` (:data:`FORMAT_SIGMAS`) times their noise (``3
      sigma`` of one test over both lists' seventeen formats) while the other
      cells (numbers and other texts included) do not exceed
      ``max_text_share`` of the fields by more than ``3 sigma``: the other
      fields are then texts, codes of their own (an other code when their
      noisy count clears ``3 sigma`` of its noise).  Numbers in a format are
      integers unless the format's decimal cell clears ``3 sigma`` and 0.1%
      of the format's numbers (the rule of the plain numbers).  The numbers
      of ``"#,###"`` (thousands separators) include the plain numbers written
      as text (its numbers below 1,000 have no separator): when its own cells
      clear their level it is decided before plain numbers, which would make
      every number with a separator a text;
    - Decimal objects are numbers (number objects, beside the ints and floats)
      where their two cells' sum clears :data:`DATE_SIGMAS` times its noise,
      and date and time objects texts in the numbers' decision where their
      cell clears it (otherwise neither counts: the decision is that of the
      other cells alone, bit for bit); a column not found to hold numbers
      holds date or time objects of a kind of
      :data:`~dpsynth.utils._temporal.DATE_OBJECTS` when that kind's cell
      clears :data:`DATE_SIGMAS` times its noise, is the largest of the date
      cells and formats that do (then the first in the lists' order: text
      formats, object kinds, number formats), and the other cells do not exceed
      ``max_text_share`` of the fields by more than ``3 sigma``.

    The share of numbers written as text decides how they decode in an
    ``object`` column (a string dtype holds texts only); dates and numbers
    in a format decode as text, date and time objects as objects of their
    kind.  Among the numbers decoded as objects, the share of Decimals
    (:attr:`KindCounts.decimal_share`) decides how many decode as
    ``decimal.Decimal``: 1.0 when the int and float objects do not clear
    :data:`MIXED_SIGMAS`, the noisy ratio when both they and the Decimals do,
    None (no Decimal) when the Decimals do not.

    ``series`` may be the column's distinct fields with ``weights`` their
    numbers of records.

    ``prior``: the noisy counts of an earlier measurement of the same cells
    (:class:`KindCounts`, from :func:`decide_kind_counts`); the two are
    averaged by inverse variance and the rules above read the mean, at the
    mean's noise.  This is the second round of a column whose first round
    was not settled (:attr:`KindCounts.settled`: neither its numbers, its
    texts, its dates nor its numbers in a format cleared their level, so
    that few present fields decided nothing), with the budget that such
    sparse columns alone get.

    Returns
    -------
    kind : {"int", "float", "date", None}
        ``None``: the column stays text.
    spend : dpsynth.accounting.Spend
    text_share : float
        The DP share of numbers written as text (1.0 when number objects do
        not clear ``3 sigma``, 0.0 when numbers written as text do not; 1.0
        for dates and numbers in a format).
    texts : tuple
        ``(noisy count, noise scale)`` of the texts (of a date column or a
        column of numbers in a format: of the fields that are not its dates
        or numbers in its format): with the noisy counts of the codes
        released later, it decides whether the column gets an other code for
        its texts that are not released (:func:`text_other`).
    fmt : str or None
        The format of a date column (a key of
        :data:`~dpsynth.utils._temporal.DATE_FORMATS`), or of an ``"int"`` or
        ``"float"`` column of numbers in a format (one of
        :data:`~dpsynth.utils._numbers.NUMBER_FORMATS`); None for plain
        numbers.
    """
    kind, spend, text_share, texts, fmt, _ = decide_kind_counts(
        series, rho, rng, weights=weights, max_text_share=max_text_share,
        date_rng=date_rng, format_rng=format_rng, object_rng=object_rng, prior=prior)
    return kind, spend, text_share, texts, fmt


class KindCounts(NamedTuple):
    """The noisy counts of :func:`decide_numeric`'s cells, their noise and whether
    they settled the decision (DP outputs and public scales only).

    ``settled`` is False when the numbers did not clear their level and neither
    the other texts, any date cell, any number-format cell nor any object cell
    cleared theirs: the column's present fields are too few for the noise,
    whatever they are.  ``decimal_share`` is the DP share of the numbers decoded
    as Python objects that decode as ``decimal.Decimal`` (None: no Decimal cell
    cleared :data:`MIXED_SIGMAS`, see :func:`decide_numeric`).
    """

    noisy: np.ndarray
    noisy_dates: np.ndarray
    sigma: float
    settled: bool
    noisy_formats: np.ndarray = None
    noisy_objects: np.ndarray = None
    decimal_share: float = None


def _decimal_objects(series):
    """Whether each field of a column is a ``decimal.Decimal`` object."""
    if not series.dtype == object:
        return np.zeros(len(series), dtype=bool)
    values = series.to_numpy(dtype=object)
    return np.fromiter((isinstance(v, Decimal) for v in values), dtype=bool, count=values.size)


def _kind_cells(series, weights):
    """Exact counts of :func:`decide_numeric`'s cells: the five number and text
    cells, the date cells (:data:`~dpsynth.utils._temporal.DATE_CELLS`), the
    number-format cells (:data:`~dpsynth.utils._numbers.NUMBER_CELLS`) and the
    object cells (:data:`OBJECT_CELLS`)."""
    present = series.notna().to_numpy()
    numbers = parse_numbers(series)
    is_number = ~np.isnan(numbers)
    is_integer = is_number & (np.abs(numbers) < 2.0 ** 53)
    is_integer[is_integer] = numbers[is_integer] == np.round(numbers[is_integer])
    typed = _typed(series)
    # a Decimal holding a (finite) number is in a cell of its own, not a number's
    decimal = is_number & _decimal_objects(series)
    plain = is_number & ~decimal
    object_cell = object_date_cells(series)
    object_cell[decimal] = _N_DATE_OBJECTS + np.where(is_integer[decimal], 0, 1)
    is_object = object_cell >= 0
    cell = np.where(is_number, -1, date_cells(series))
    is_date = cell >= 0
    format_cell = np.where(is_number | is_date, -1, number_cells(series))
    is_formatted = format_cell >= 0
    weights = np.ones(present.size) if weights is None else np.asarray(weights, np.float64)
    counts = np.array([weights[plain & is_integer & typed].sum(),
                       weights[plain & is_integer & ~typed].sum(),
                       weights[plain & ~is_integer & typed].sum(),
                       weights[plain & ~is_integer & ~typed].sum(),
                       weights[present & ~is_number & ~is_date & ~is_formatted
                               & ~is_object].sum()],
                      dtype=np.float64)
    dates = np.bincount(cell[is_date], weights=weights[is_date], minlength=len(DATE_CELLS))
    formats = np.bincount(format_cell[is_formatted], weights=weights[is_formatted],
                          minlength=len(NUMBER_CELLS))
    objects = np.bincount(object_cell[is_object], weights=weights[is_object],
                          minlength=len(OBJECT_CELLS)).astype(np.float64)
    return counts, dates, formats, objects


def decide_kind_counts(series, rho, rng, *, weights=None, max_text_share=MAX_TEXT_SHARE,
                       date_rng=None, format_rng=None, object_rng=None, prior=None):
    """:func:`decide_numeric` and the :class:`KindCounts` it read, for a second round:
    ``(kind, spend, text_share, texts, fmt, counts)``."""
    counts, dates, formats, objects = _kind_cells(series, weights)
    sigma = _sigma(rho)
    noisy = _noisy(counts, sigma, rng)
    noisy_dates = _noisy(dates, sigma, rng if date_rng is None else date_rng)
    noisy_formats = _noisy(formats, sigma, rng if format_rng is None else format_rng)
    if object_rng is None:  # a fresh child of rng's seed: rng's own draws do not move
        object_rng = np.random.default_rng(rng.bit_generator.seed_seq.spawn(1)[0])
    noisy_objects = _noisy(objects, sigma, object_rng)
    spend = Spend("numeric or text" if prior is None else "numeric or text, second round",
                  "discrete_gaussian", rho=rho,
                  params=(("sigma", sigma), ("max_text_share", max_text_share),
                          ("sensitivity", 1)))
    if prior is not None:  # inverse-variance mean of both rounds (post-processing)
        w_prior, w_now = prior.sigma ** -2, sigma ** -2
        noisy = (prior.noisy * w_prior + noisy * w_now) / (w_prior + w_now)
        noisy_dates = (prior.noisy_dates * w_prior + noisy_dates * w_now) / (w_prior + w_now)
        noisy_formats = (prior.noisy_formats * w_prior + noisy_formats * w_now) \
            / (w_prior + w_now)
        noisy_objects = (prior.noisy_objects * w_prior + noisy_objects * w_now) \
            / (w_prior + w_now)
        sigma = (w_prior + w_now) ** -0.5
    found = _decide_kind(noisy, noisy_dates, sigma, max_text_share,
                         isinstance(series.dtype, pd.StringDtype), noisy_formats,
                         noisy_objects)
    return (*found[:1], spend, *found[1:4],
            KindCounts(noisy, noisy_dates, float(sigma), bool(found[4]), noisy_formats,
                       noisy_objects, found[5]))


def _decide_kind(noisy, noisy_dates, sigma, max_text_share, string_dtype, noisy_formats=None,
                 noisy_objects=None):
    """The rules of :func:`decide_numeric` on noisy counts of noise ``sigma``:
    ``(kind, text_share, texts, fmt, settled, decimal_share)``."""
    if noisy_formats is None:
        noisy_formats = np.zeros(len(NUMBER_CELLS))
    if noisy_objects is None:
        noisy_objects = np.zeros(len(OBJECT_CELLS))
    # sums of k noisy cells (not clipped: unbiased) carry noise sigma * sqrt(k);
    # the noise is integer, so a level is one count higher (discrete_gaussian_tail:
    # at a small sigma, 3 sigma alone is below the first nonzero draw)
    # the number cells: typed and written, whole and not; a string dtype holds no
    # typed number (public), so its number cells are the two written ones
    level_1, level_all = (1.0 + 3 * sigma * math.sqrt(k) for k in (1, 2 if string_dtype else 4))
    n_typed, n_written = noisy[0] + noisy[2], noisy[1] + noisy[3]
    if string_dtype:
        n_typed = 0.0
    level_mixed = 1.0 + MIXED_SIGMAS * sigma * math.sqrt(2)
    # Decimal objects are numbers (objects, not texts) where their two cells' sum
    # clears DATE_SIGMAS, date and time objects texts where their cell does: without
    # them, the decision is that of the cells before them alone
    object_dates = noisy_objects[:_N_DATE_OBJECTS]
    dated_objects = object_dates > 1.0 + DATE_SIGMAS * sigma
    n_date_objects = float(object_dates[dated_objects].sum())
    n_decimal = float(noisy_objects[_N_DATE_OBJECTS:].sum())
    decimal = n_decimal > 1.0 + DATE_SIGMAS * sigma * math.sqrt(2)
    n_objects = n_date_objects + (n_decimal if decimal else 0.0)
    n_object_cells = int(dated_objects.sum()) + (2 if decimal else 0)
    decimal_share = None
    if decimal:
        plain_typed = n_typed
        n_typed = n_typed + n_decimal
        if n_decimal > level_mixed:  # as with texts: a false mix would hold both types
            decimal_share = (1.0 if not plain_typed > level_mixed
                             else round(float(n_decimal / n_typed), 6))
    if string_dtype or not n_typed > level_mixed:
        text_share = 1.0
    elif not n_written > level_mixed:
        text_share = 0.0
    else:
        text_share = round(float(n_written / (n_typed + n_written)), 6)
    n_numbers = n_typed + n_written
    # dates and numbers in a format count as texts in the numbers' decision where
    # their cell clears DATE_SIGMAS (FORMAT_SIGMAS): without them, the decision is
    # that of the five cells alone (the noise of 21 empty cells would blur its
    # text count)
    dated = noisy_dates > 1.0 + DATE_SIGMAS * sigma
    n_dates = float(noisy_dates[dated].sum())
    formatted = noisy_formats > 1.0 + FORMAT_SIGMAS * sigma
    n_formatted = float(noisy_formats[formatted].sum())
    n_cleared = int(dated.sum()) + int(formatted.sum())
    texts = (float(noisy[4]) + n_dates + n_formatted, sigma * math.sqrt(1 + n_cleared))
    total = max(float(noisy.sum()) + n_dates + n_formatted, 0.0)
    if n_object_cells:  # (a column without them keeps the arithmetic above, bit for bit)
        texts = (texts[0] + n_date_objects,
                 sigma * math.sqrt(1 + n_cleared + int(dated_objects.sum())))
        total = max(float(noisy.sum()) + n_dates + n_formatted + n_objects, 0.0)
    # numbers with thousands separators that clear their level: a column of such
    # numbers (its plain numbers, below 1,000, read by that format too), not plain
    # numbers with a few texts.  Not a decimal comma's: its plain numbers are whole
    # ones only, so noise in its cells must not take a column of plain decimals
    # from the plain numbers' decision (whose texts its numbers are)
    # so are numbers with negatives in parentheses whose two cells clear their level
    # together (as the format's own test: its cells one by one would double the
    # chance that noise takes a column of plain numbers from their decision)
    level_format = 1.0 + FORMAT_SIGMAS * sigma * math.sqrt(2)  # a format's two cells
    grouped = formatted[_GROUPED_CELLS].any() or bool(
        noisy_formats[_ACCOUNTING_CELLS].sum() > level_format)
    level_numbers = level_all if not decimal else 1.0 + 3 * sigma * math.sqrt(6)
    if (n_numbers > level_numbers and texts[0] <= max_text_share * total + 3 * sigma
            and not grouped):
        n_decimals, k, sigmas = noisy[2] + noisy[3], 2, 3.0
        if decimal:
            n_decimals, k = n_decimals + noisy_objects[-1], 3
        elif string_dtype:
            # a text column holds no typed number: its typed cell is noise alone, so
            # the written decimals are tested by themselves, one cell at a stricter
            # level (fewer false decimals than two cells at three sigmas)
            n_decimals, k, sigmas = noisy[3], 1, STRING_DECIMAL_SIGMAS
        if _found(n_decimals, sigma, k, n_numbers, sigmas):
            return "float", text_share, texts, None, True, decimal_share
        return "int", text_share, texts, None, True, decimal_share
    fmt, best, kind = None, -np.inf, None
    n_cells = noisy.size + noisy_dates.size
    for date_format in DATE_FORMATS:  # in the public order: a tie keeps the first
        own = np.array([date_format in formats for formats in DATE_CELLS])
        found = float(noisy_dates[own].sum())
        rest = float(noisy.sum() + noisy_dates[~own].sum()) + n_formatted
        if n_object_cells:
            rest += n_objects
        if (found > 1.0 + DATE_SIGMAS * sigma * math.sqrt(own.sum()) and found > best
                and rest <= max_text_share * (total + n_formatted) + 3 * sigma):
            fmt, best, kind = date_format, found, "date"
            fmt_texts = (rest, sigma * math.sqrt(n_cells - own.sum() + int(formatted.sum())
                                                 + n_object_cells))
    for k, date_object in enumerate(DATE_OBJECTS):  # then the date and time objects
        found = float(object_dates[k])
        others = n_objects - (found if dated_objects[k] else 0.0)
        rest = float(noisy.sum()) + n_dates + n_formatted + others
        if (dated_objects[k] and found > best
                and rest <= max_text_share * (rest + found) + 3 * sigma):
            fmt, best, kind = date_object, found, "date"
            fmt_texts = (rest, sigma * math.sqrt(noisy.size + n_cleared + n_object_cells - 1))
    for k, number_format in enumerate(NUMBER_FORMATS):  # then the number formats
        own = np.zeros(len(NUMBER_CELLS), dtype=bool)
        own[2 * k:2 * k + 2] = True
        found = float(noisy_formats[own].sum())
        cleared = found > level_format
        decimals = noisy_formats[2 * k + 1]
        if number_format in _SHARED_FORMAT:  # its numbers written as another format's
            j = NUMBER_FORMATS.index(_SHARED_FORMAT[number_format])
            found += float(noisy_formats[2 * j:2 * j + 2].sum())
            decimals += noisy_formats[2 * j + 1]
            own[2 * j:2 * j + 2] = True
        others = formatted & ~own
        plain = _PLAIN_CELLS.get(number_format, np.zeros(noisy.size, dtype=bool))
        found += float(noisy[plain].sum())
        decimals += float(noisy[plain & _DECIMALS].sum())
        rest = float(noisy[~plain].sum()) + n_dates + float(noisy_formats[others].sum())
        if n_object_cells:
            rest += n_objects
        if (cleared and found > best
                and rest <= max_text_share * (rest + found) + 3 * sigma):
            fmt, best = number_format, found
            kind = "float" if _found(decimals, sigma, 1 + int(plain.any()), found) else "int"
            fmt_texts = (rest, sigma * math.sqrt(noisy.size - int(plain.sum())
                                                 + int(dated.sum()) + int(others.sum())
                                                 + n_object_cells))
    if fmt is not None:
        return kind, 1.0, fmt_texts, fmt, True, None
    settled = bool(n_numbers > level_all or noisy[4] > level_1 or dated.any()
                   or formatted.any() or n_object_cells)
    return None, text_share, texts, None, settled, decimal_share


def encode_text_binning(series, binning, name, missing_code):
    """Codes of a text column holding numbers (``binning.is_text``).

    Numbers get their bin (:func:`encode_binning`); a text equal to one of
    ``binning.codes`` its code; any other present field the other code (or,
    without one, the code of ``binning.text_fill``, else the missing code);
    a missing field the missing code.  A column of texts is encoded once per
    distinct field.
    """
    return by_distinct_text(series, lambda fields, _: _encode_text_fields(
        fields, binning, name, missing_code), missing_code)


def _encode_text_fields(series, binning, name, missing_code):
    """:func:`encode_text_binning` field by field."""
    numbers = binning_numbers(series, binning)
    codes = encode_binning(numbers, binning, name)
    present = series.notna().to_numpy()
    rest = present & np.isnan(numbers)
    if rest.any():
        fields = series.to_numpy(dtype=object)[rest]
        lookup = {code: binning.n_numbers + k for k, code in enumerate(binning.codes)}
        other = (binning.n_numbers + len(binning.codes) if binning.other
                 else lookup[binning.text_fill] if binning.text_fill is not None
                 else missing_code)
        codes[rest] = [lookup.get(v, other) if isinstance(v, str) else other for v in fields]
    codes[codes < 0] = missing_code
    return codes


def number_text(values, integer, date_format=None, number_format=None, decimals=None):
    """Numbers spelled as text: integers in digits, floats in their shortest spelling,
    dates (counts of their format's unit) in ``date_format``, numbers in
    ``number_format`` (:func:`~dpsynth.utils._numbers.format_numbers`, a currency
    amount with ``decimals`` decimals)."""
    if date_format is not None:
        return format_dates(values, date_format)
    if number_format is not None:
        return format_numbers(values, number_format, integer, decimals)
    if integer:
        return [str(int(v)) for v in values]
    return [np.format_float_positional(float(v), unique=True, trim="0") for v in values]


def binning_text(values, binning):
    """:func:`number_text` of numbers of a text column of ``binning``, in its format."""
    return number_text(values, binning.integer, binning.date_format, binning.number_format,
                       binning.decimals)


def decode_text_binning(codes, binning, rng):
    """Decoded fields of a text column holding numbers, and their missing mask.

    Number codes decode as :func:`decode_binning` does (a date column's to
    dates written in its format, or to date or time objects of its kind of
    :data:`~dpsynth.utils._temporal.DATE_OBJECTS`; a column of numbers in a
    format to numbers written in it), then a ``binning.text_share`` of them
    (drawn independently) as text, the rest as Python numbers, of which a
    ``binning.decimal_share`` (drawn independently) as ``decimal.Decimal``
    (:func:`decimal_numbers`); a text code to its text; the other code to
    ``binning.other_label`` (missing when it is None); missing codes to missing.

    Returns
    -------
    values : ndarray of object
    mask : ndarray of bool
        Missing cells.
    """
    codes = np.asarray(codes, dtype=np.int64)
    n_numbers = binning.n_numbers
    n_codes = len(binning.codes)
    out = np.empty(codes.shape, dtype=object)
    is_number = (codes >= 0) & (codes < n_numbers)
    where = np.flatnonzero(is_number)
    numbers = decode_binning(codes[where], binning, rng)
    share = binning.text_share
    as_text = (np.ones(where.size, dtype=bool) if share >= 1.0
               else np.zeros(where.size, dtype=bool) if share <= 0.0
               else rng.random(where.size) < share)
    if as_text.any():
        out[where[as_text]] = _per_distinct(
            numbers[as_text], lambda v: binning_text(v, binning))
    as_objects = where[~as_text]
    decimal = binning.decimal_share or 0.0
    as_decimal = (np.ones(as_objects.size, dtype=bool) if decimal >= 1.0
                  else np.zeros(as_objects.size, dtype=bool) if decimal <= 0.0
                  else rng.random(as_objects.size) < decimal)
    if as_decimal.any():
        out[as_objects[as_decimal]] = _per_distinct(
            numbers[~as_text][as_decimal], lambda v: decimal_numbers(v, binning))
    out[as_objects[~as_decimal]] = _per_distinct(
        numbers[~as_text][~as_decimal],
        lambda v: [int(x) for x in v] if binning.integer else [float(x) for x in v])
    is_code = (codes >= n_numbers) & (codes < n_numbers + n_codes)
    if is_code.any():
        out[is_code] = np.asarray(binning.codes, dtype=object)[codes[is_code] - n_numbers]
    mask = ~(is_number | is_code)
    is_other = (codes == n_numbers + n_codes) & binning.other
    if binning.other_label is not None and is_other.any():
        out[is_other] = binning.other_label
        mask &= ~is_other
    return out, mask


def decimal_numbers(values, binning):
    """Decoded numbers of ``binning`` as ``decimal.Decimal`` objects: integers exactly,
    others with the binning's ``decimals`` decimals (``Decimal("12.50")`` at two; a
    public precision: the declared ``decimals`` or that of the DP range), or in
    their shortest spelling without them."""
    if binning.integer:
        return [Decimal(int(v)) for v in values]
    if binning.decimals is not None:
        return [Decimal(f"{float(v):.{binning.decimals}f}") for v in values]
    return [Decimal(np.format_float_positional(float(v), unique=True, trim="-"))
            for v in values]


def _per_distinct(numbers, spell):
    """``spell(numbers)`` as an object array, each distinct number spelled once (the
    cells share its object: a large sample of few values holds few objects)."""
    distinct, index = _distinct_numbers(numbers)
    spelled = np.empty(distinct.size, dtype=object)
    spelled[:] = spell(distinct)
    return spelled[index.reshape(-1)]


def _distinct_numbers(numbers, max_span=1 << 20):
    """``np.unique(numbers, return_inverse=True)``; whole numbers of a span up to
    ``max_span`` in linear time (a table of the span instead of a sort)."""
    numbers = np.asarray(numbers, dtype=np.float64).reshape(-1)
    if numbers.size:
        low, high = numbers.min(), numbers.max()
        if (np.isfinite(low) and np.isfinite(high) and high - low < max_span
                and np.array_equal(numbers, np.floor(numbers))):
            offset = (numbers - low).astype(np.intp)
            held = np.zeros(int(high - low) + 1, dtype=bool)
            held[offset] = True
            return np.flatnonzero(held) + low, (np.cumsum(held) - 1)[offset]
    distinct, index = np.unique(numbers, return_inverse=True)
    return distinct, index.reshape(-1)


def with_numbers(series, numbers, where, binning):
    """``series`` (a decoded text column holding numbers) with its cells ``where``
    replaced by ``numbers[where]``, each written as the cell it replaces was (a
    text, or a number object)."""
    fields = series.to_numpy(dtype=object).copy()
    rows = np.flatnonzero(where)
    for row, value in zip(rows, np.asarray(numbers)[rows]):
        if isinstance(fields[row], str) or binning.date_format is not None:
            fields[row] = binning_text([value], binning)[0]  # a date object of its kind too
        elif isinstance(fields[row], Decimal):
            fields[row] = decimal_numbers([value], binning)[0]
        else:
            fields[row] = int(value) if binning.integer else float(value)
    return pd.Series(fields, index=series.index, dtype=series.dtype)


# ------------------------------------------------------------ the encoder's hooks
#: Share of the synthesizer's zCDP budget spent on each candidate column of
#: ``numeric="auto"``, and the most spent on all of them.
SHARE_PER_COLUMN = 0.1
MAX_SHARE = 0.25
#: Share of the synthesizer's ``delta`` given to the point masses' thresholds.
DELTA_SHARE = 0.1


def numeric_share(n_candidates):
    """Share of the synthesizer's budget for ``numeric="auto"``: a public function.

    ``min(0.25, 0.1 * n_candidates)`` of ``rho`` (0.1 for one candidate
    column, 0.2 for two, 0.25 from three on).
    """
    return min(MAX_SHARE, SHARE_PER_COLUMN * n_candidates) if n_candidates else 0.0

#: ``spawn_key`` of the random stream of ``numeric="auto"`` (distinct from ``spawn``'s).
NUMERIC = 2 ** 20 + 36
#: ``spawn_key`` suffix, under ``NUMERIC``'s stream, of the noise of the date cells of
#: the text candidates' decisions (:func:`decide_numeric`).
DATES = 1
#: ``spawn_key`` suffix, under ``NUMERIC``'s stream, of the noise of the second round of
#: the text candidates' decisions (see ``SETTLE_GAIN``).
SETTLE = 2
#: ``spawn_key`` suffix, under ``NUMERIC``'s stream, of the noise of the float columns'
#: decisions of whether they hold whole numbers only (:func:`decide_whole_numbers`).
WHOLE = 3
#: ``spawn_key`` suffix, under ``NUMERIC``'s stream, of the noise of the temporal
#: columns' decisions of their step (:func:`decide_temporal_step`).
STEP = 4
#: The steps, in seconds, that a ``datetime64`` / ``timedelta64`` column may be found
#: to hold whole multiples of (a fixed, public list, coarsest first): days, hours,
#: minutes, seconds, milliseconds.
TEMPORAL_STEPS = (86400, 3600, 60, 1, 1e-3)
#: ``spawn_key`` suffixes, under ``NUMERIC``'s stream, of the noise of the number-format
#: cells of the text candidates' decisions (:func:`decide_numeric`), in the first and
#: in the second round: the draws of every other cell are those of a decision
#: without them.
FORMATS, SETTLE_FORMATS = 5, 6
#: ``spawn_key`` suffix, under ``NUMERIC``'s stream, of the noise of the table's record
#: count (:func:`noisy_records`).
RECORDS = 7
#: ``spawn_key`` suffixes, under ``NUMERIC``'s stream, of the noise of the object cells
#: (:data:`OBJECT_CELLS`: date and time objects, Decimals) of the text candidates'
#: decisions, in the first and in the second round: the draws of every other cell are
#: those of a decision without them.
OBJECTS, SETTLE_OBJECTS = 8, 9
#: ``spawn_key`` suffix, under ``NUMERIC``'s stream, of the noise of the decimal
#: columns' written decimals (:func:`decide_written_decimals`).
DECIMALS = 10
#: Decimals that :func:`decide_written_decimals` can find a column written with; values
#: needing more fall in one last cell (decoded at :func:`default_decimals`).
WRITTEN_DECIMALS = 6
#: Share of a column's decision ``rho`` (:data:`DECIDE_SHARE`) that its written decimals
#: spend (:func:`decide_written_decimals`): the cell that most of its numbers need is
#: found at a fraction of the decision's precision, and its binning keeps the rest.
DECIMALS_SHARE = 0.5
#: Share of ``numeric_rho`` spent on the table's record count when it has a numeric
#: column to bin (the decisions and the columns share the rest): with it, a column's records that are neither a
#: point mass of its cell of 0 nor missing are counted (:func:`numeric_binning`), so
#: that the few non-zero amounts of a mostly-zero column find their range.
RECORDS_SHARE = 0.04


def noisy_records(n_records, rho, rng):
    """The table's record count with discrete Gaussian noise (one record changes it by
    one: ``rho``-zCDP) and the noise variance: ``(count, variance), spend``."""
    sigma = _sigma(rho)
    noisy = float(_noisy(np.array([n_records]), sigma, rng)[0])
    spend = Spend("numeric columns: record count", "discrete_gaussian", rho=rho,
                  params=(("sigma", sigma), ("sensitivity", 1)))
    return (noisy, sigma ** 2), spend


def decide_whole_numbers(name, series, weights, *, rho, rng):
    """DP decision of whether a float column holds whole numbers only.

    A column of a float dtype often holds counts or codes: pandas reads an
    integer column with missing values as ``float64``.  Its present values fall
    in two public cells, whole numbers (``inf`` included) and the others; each
    record is in one cell at most, so the two counts with Gaussian noise are
    ``rho``-zCDP.  The column holds decimals when their noisy count clears
    ``1 + 3 sigma`` and 0.1% of the numbers (the rule of
    :func:`decide_numeric` for text columns); otherwise it is binned as an
    integer column (its dtype kept: the values decode to whole floats).

    Returns
    -------
    kind : {"whole", "number"}
    spends : list of dpsynth.accounting.Spend
    """
    values = numbers_of(series)
    present = ~np.isnan(values)
    with np.errstate(invalid="ignore"):
        whole = present & ((values == np.round(values)) | np.isinf(values))
    w = np.ones(values.size) if weights is None else np.asarray(weights, dtype=np.float64)
    counts = np.array([w[whole].sum(), w[present & ~whole].sum()], dtype=np.float64)
    sigma = _sigma(rho)
    noisy = _noisy(counts, sigma, rng)
    spend = Spend("whole numbers or decimals", "discrete_gaussian", rho=rho,
                  params=(("sigma", sigma), ("sensitivity", 1)))
    decimals = _found(noisy[1], sigma, 1, float(noisy.sum()))
    return ("number" if decimals else "whole"), _named([spend], name)


def decimals_needed(values, single=False):
    """Decimals each value needs to be written exactly, 0 to :data:`WRITTEN_DECIMALS`,
    or ``WRITTEN_DECIMALS + 1`` for more (and for ``inf``): the fewest ``d`` with
    ``round(value, d)`` equal to the value up to a relative ``1e-12`` (the binary
    rounding of a value read from decimal text).  ``single``: the values of a
    single-precision column (a public dtype), ``0.2800000011920929`` as a ``float32``
    holds ``0.28``: the fewest ``d`` with ``round(value, d)`` the same single."""
    values = np.asarray(values, dtype=np.float64)
    needed = np.full(values.size, WRITTEN_DECIMALS + 1, dtype=np.int64)
    open_ = np.isfinite(values)
    tolerance = 1e-12 * np.maximum(np.abs(values), 1.0)
    with np.errstate(invalid="ignore", over="ignore"):
        held = values.astype(np.float32) if single else None
        for d in range(WRITTEN_DECIMALS + 1):
            rounded = np.round(values, d)
            exact = np.abs(rounded - values) <= tolerance
            if single:
                exact |= rounded.astype(np.float32) == held
            exact &= open_
            needed[exact] = d
            open_ &= ~exact
    return needed


def decide_written_decimals(name, values, weights, *, rho, rng, single=False):
    """DP decision of the decimals a column of decimal numbers is written with.

    A column of amounts in cents or of rates to one decimal keeps that
    precision in its synthetic values, not four significant digits of its
    range (which writes ``61085.44`` as ``61085`` and ``1.5`` as ``1.513``).
    Each present number falls in one public cell, the decimals it needs
    (:func:`decimals_needed`: 0 to :data:`WRITTEN_DECIMALS`, or more), so the
    noisy counts of the cells are ``rho``-zCDP.  The column's decimals are the
    most that a cell clearing ``1 + 3 sigma`` and 0.1% of the noisy numbers
    needs (the rule of :func:`decide_whole_numbers`), when the cells needing
    more do not clear it, one by one or together; otherwise (the last cell
    clears it, or no cell with decimals does: a sparse column) None, and the
    column decodes at :func:`default_decimals` of its range.

    ``values``: the column's numbers (NaN for no number), ``weights`` their
    numbers of records (None: one each), ``single``: whether the column's dtype is
    single precision (:func:`decimals_needed`).

    Returns
    -------
    decimals : int or None
    cells : tuple
        The noisy counts of the cells and their noise scale, which
        :func:`binning_places` reads (with or without ``decimals``: a column found
        to hold mostly whole numbers keeps them).
    spends : list of dpsynth.accounting.Spend
    """
    values = np.asarray(values, dtype=np.float64)
    present = ~np.isnan(values)
    w = np.ones(values.size) if weights is None else np.asarray(weights, dtype=np.float64)
    counts = np.bincount(decimals_needed(values[present], single), weights=w[present],
                         minlength=WRITTEN_DECIMALS + 2).astype(np.float64)
    sigma = _sigma(rho)
    noisy = _noisy(counts, sigma, rng)
    spend = Spend("written decimals", "discrete_gaussian", rho=rho,
                  params=(("sigma", sigma), ("cells", WRITTEN_DECIMALS + 2),
                          ("sensitivity", 1)))
    total = float(noisy.sum())
    found = [d for d in range(1, WRITTEN_DECIMALS + 2) if _found(noisy[d], sigma, 1, total)]
    decimals = None
    if found and found[-1] <= WRITTEN_DECIMALS:
        finer = noisy[found[-1] + 1:]
        if not _found(float(finer.sum()), sigma, finer.size, total):
            decimals = int(found[-1])
    return decimals, (tuple(float(v) for v in noisy), sigma), _named([spend], name)


def binning_places(cells, binning):
    """:attr:`~dpsynth.schema.Binning.places` of a float ``binning`` decoded at its
    ``decimals``, from the noisy counts of :func:`decide_written_decimals`
    (``cells``: the counts and their noise scale; post-processing of DP outputs).

    A released point value decodes as itself, so its records leave the cell of the
    decimals it needs (its noisy count from ``binning.counts`` subtracted, its
    variance added): the shares are those of the values decoded in intervals.  A
    cell counts when it clears the level of :func:`_found` at its noise, else
    nothing; the cells of more decimals than ``binning.decimals``, and the cell of
    more than :data:`WRITTEN_DECIMALS`, join its last.
    None when no cell of fewer decimals counts (every value decodes at
    ``decimals``, as without shares)."""
    if cells is None or binning.integer or binning.decimals is None:
        return None
    noisy, sigma = cells
    counts = np.array(noisy, dtype=np.float64)
    variances = np.full(counts.size, float(sigma) ** 2)
    points = np.asarray(binning.points, dtype=np.float64)
    if binning.counts is not None and points.size:
        start = binning.n_intervals
        point_counts = np.asarray(binning.counts[0][start:start + points.size], np.float64)
        point_variances = np.asarray(binning.counts[1][start:start + points.size],
                                     np.float64)
        measured = np.isfinite(point_counts) & np.isfinite(point_variances)
        cell = decimals_needed(points[measured])
        np.subtract.at(counts, cell, point_counts[measured])
        np.add.at(variances, cell, point_variances[measured])
    total = float(counts.sum())
    kept = [_found(c, math.sqrt(v), 1, total) for c, v in zip(counts, variances)]
    counts = np.where(kept, counts, 0.0)
    decimals = binning.decimals
    places = np.zeros(decimals + 1)
    cell = np.minimum(np.arange(counts.size), decimals)
    cell[WRITTEN_DECIMALS + 1:] = decimals  # needing more than the cells tell: the most
    np.add.at(places, cell, counts)
    if not places[:-1].any() or not places.sum() > 0:
        return None
    return tuple(round(float(v), 6) for v in places / places.sum())


def _found(count, sigma, k, total, sigmas=3.0):
    """Whether a noisy ``count`` (a sum of ``k`` cells of noise ``sigma``) shows values of
    a kind (decimals, values off a step): above ``1 + sigmas * sigma sqrt(k)`` (the noise
    is integer: one count higher) and above 0.1% of the noisy ``total``, so that a handful
    of odd records in a large column do not change its kind."""
    return bool(count > 1.0 + sigmas * sigma * math.sqrt(k) and count > 0.001 * total)


def temporal_steps(unit):
    """:data:`TEMPORAL_STEPS` in ``unit`` (a temporal dtype, or a unit such as ``"s"``,
    ``"m"``), coarsest first, those of at least two units (none for days and
    months)."""
    if not isinstance(unit, str):
        unit = temporal_unit(unit)
    if unit in ("D", "W", "M", "Y"):
        return ()
    per_second = np.timedelta64(1, "s") / np.timedelta64(1, unit)
    steps = [round(seconds * per_second) for seconds in TEMPORAL_STEPS]
    return tuple(int(step) for step in steps if step >= 2)


def decide_temporal_step(name, series, weights, *, rho, rng, date_format=None):
    """DP decision of the coarsest public step whose whole multiples a temporal column
    holds (``None``: none of :func:`temporal_steps`); ``date_format``: a text column
    of dates of that format with a time (its unit's steps).

    A column of dates read as ``datetime64[us]`` holds whole days; drawn inside
    its bins, its synthetic instants would carry hours and microseconds (a
    text column of times to the second, minutes with random seconds).  Each
    present value falls in one public cell, that of the coarsest step it is a
    multiple of (or a last cell for none), so the noisy counts of the cells
    are ``rho``-zCDP.  The step is the coarsest one whose finer cells' noisy
    count does not clear both ``1 + 3 sigma sqrt(k)`` (``k`` such cells) and
    0.1% of the noisy numbers (the rule of :func:`decide_whole_numbers`).

    Returns
    -------
    step : int or None
        In units of the column's dtype (of its format's unit).
    spends : list of dpsynth.accounting.Spend
    """
    if date_format is not None:
        steps, values = temporal_steps(date_unit(date_format)), parse_dates(series,
                                                                            date_format)
    else:
        steps, values = temporal_steps(series.dtype), numbers_of(series)
    present = ~np.isnan(values)
    cell = np.full(values.size, len(steps), dtype=np.int64)
    for k in reversed(range(len(steps))):  # the coarsest step that divides a value
        cell[present & (np.mod(values, steps[k]) == 0)] = k
    w = np.ones(values.size) if weights is None else np.asarray(weights, dtype=np.float64)
    counts = np.bincount(cell[present], weights=w[present], minlength=len(steps) + 1)
    sigma = _sigma(rho)
    noisy = _noisy(counts.astype(np.float64), sigma, rng)
    spend = Spend("whole days, hours, minutes or seconds", "discrete_gaussian", rho=rho,
                  params=(("sigma", sigma), ("sensitivity", 1)))
    total = float(noisy.sum())
    for k, step in enumerate(steps):
        finer = float(noisy[k + 1:].sum())
        if not _found(finer, sigma, len(steps) - k, max(total, 0.0)):
            return step, _named([spend], name)
    return None, _named([spend], name)


def text_weight(texts, counts):
    """The extra weight, beyond 1, of a text column decided numeric in the split of
    ``numeric_rho``: ``TEXT_WEIGHT f``, ``f`` the noisy share of texts among its
    present fields (``texts``: the noisy count of texts and its noise, from the
    column's decision; ``counts``: the decision's :class:`KindCounts`), down to a
    multiple of 1/8 so that neighbours whose shares round alike get the same split
    bit for bit, and up to 1/8 when it is less: a few texts beside the numbers (an
    ``"N"`` for not applicable held by 3% of the records) are a value the records
    mean, released only if step 2 can tell them from its noise; 0 unless the noisy
    count of texts clears ``1 + 3 sigma``."""
    noisy_texts, sigma = texts
    if not noisy_texts > 1.0 + 3.0 * sigma:
        return 0.0
    share = min(noisy_texts / max(float(counts.noisy.sum()), 1.0), 1.0)
    return TEXT_WEIGHT * max(math.floor(8.0 * share), 1.0) / 8.0


def is_text_dtype(dtype):
    """Object or pandas string dtype (a column read as text)."""
    return dtype == object or isinstance(dtype, pd.StringDtype)


def numeric_mode(numeric, name):
    """A column's ``numeric`` setting: ``"auto"`` or ``"categorical"``.

    ``numeric`` is the encoder's parameter: one of the two for every column,
    or a dict ``{column: mode}`` whose absent columns are ``"auto"``.
    """
    if isinstance(numeric, dict):
        return numeric.get(name, "auto")
    return numeric


def check_numeric(numeric, names):
    """Validate a dict ``numeric`` against the table's column ``names``."""
    if not isinstance(numeric, dict):
        return
    unknown = [name for name in numeric if name not in names]
    if unknown:
        raise ValueError(f"numeric names column(s) {unknown} that are not in X; X has "
                         f"columns {list(names)}.")
    bad = {name: mode for name, mode in numeric.items() if mode not in ("auto", "categorical")}
    if bad:
        raise ValueError(f"numeric values must be 'auto' or 'categorical'; got {bad}.")


def auto_columns(frame, *, declared, bounds, binning, text_numbers, numeric="auto"):
    """Candidates of ``numeric="auto"``: ``{name: "number" | "text"}``, from the declaration.

    Numeric columns (see :func:`is_auto_numeric`) and, with
    ``text_numbers="dp"``, text columns, that have no declared categories,
    ``bounds`` or ``binning`` entry and are not ``"categorical"`` in
    ``numeric`` (see :func:`numeric_mode`).  Reads names and dtypes only.
    """
    named = set(bounds or ()) | set(binning if isinstance(binning, dict) else ())
    out = {}
    for name in frame.columns:
        if name in declared or name in named or numeric_mode(numeric, name) != "auto":
            continue
        dtype = frame[name].dtype
        if is_auto_numeric(dtype):
            out[name] = "number"
        elif text_numbers == "dp" and is_text_dtype(dtype):
            out[name] = "text"
    return out


def _named(spends, name):
    return [Spend(f"numeric column {name!r}: {s.name}", s.mechanism, s.epsilon, s.rho,
                  s.delta, s.params) for s in spends]


#: Share of a text candidate's budget (``numeric_rho`` over the candidates) that
#: decides whether it holds numbers (:func:`decide_numeric`).
DECIDE_SHARE = 0.1
#: A text candidate whose first decision is not settled (:class:`KindCounts`: too
#: few present fields for its noise) is measured again with this many times the
#: first round's ``rho`` ...
SETTLE_GAIN = 8.0
#: ... and at most this share of ``numeric_rho`` over all such columns (a sparse
#: column's second round takes little from the binning of the others).
SETTLE_SHARE = 0.1


def decide_text_column(name, series, weights, *, rho, rng, date_rng=None, format_rng=None,
                       object_rng=None, prior=None):
    """The DP decision of :func:`decide_numeric` for a text candidate of
    ``numeric="auto"``: ``("int" | "float" | "date" | None, (text_share, texts,
    fmt, decimal_share), spends, counts)``, ``fmt`` its date or number format (or
    kind of date objects), ``decimal_share`` that of :class:`KindCounts`, ``counts``
    the :class:`KindCounts` read (``prior``: those of the first round, for the
    second)."""
    found, spend, *text, counts = decide_kind_counts(series, rho, rng, weights=weights,
                                                     date_rng=date_rng,
                                                     format_rng=format_rng,
                                                     object_rng=object_rng, prior=prior)
    return found, (*text, counts.decimal_share), _named([spend], name), counts


def fit_auto_column(name, series, weights, *, kind, rho, delta, n_bins, rng, special=(),
                    decimals=None, other_label=DEFAULT_OTHER_LABEL, text=None, text_rho=0.0,
                    step=None, records=None):
    """The binned :class:`~dpsynth.schema.Column` of one numeric column of ``numeric="auto"``.

    Parameters
    ----------
    name : str
    series : Series
        The column (or its distinct values, ``weights`` their numbers of records).
    weights : ndarray or None
    kind : {"number", "whole", "int", "float", "date"}
        A column of a numeric dtype (``"whole"``: of a float dtype, found by
        :func:`decide_whole_numbers` to hold whole numbers, binned as an
        integer column), or a text column that
        :func:`decide_text_column` found to hold integers, other numbers
        (plain, or written in a number format such as ``"12.5%"``) or dates of
        one format.  Such a text column keeps its dtype: its numbers (its
        dates as whole numbers of their format's unit) are binned, its
        frequent texts (codes such as ``"N"``) released with the point
        masses, each a code of its own, and its other texts share an other
        code that decodes to ``other_label`` when their DP count clears its
        threshold (:func:`text_other`), else join the released code with the
        largest noisy count.
    text : tuple or None
        For a text column: ``(text_share, texts, fmt)`` of its DP decision
        (:func:`decide_numeric`), ``fmt`` its date format (``kind="date"``),
        number format or None.
    rho, delta : float
        The column's budget.
    n_bins : int
        Intervals and point masses, at most.
    text_rho : float, default=0.0
        More ``rho`` for the step that releases a text column's point masses
        and texts (:func:`numeric_binning`).
    records : tuple or None, default=None
        The table's noisy record count and its variance (:func:`numeric_binning`).

    Returns
    -------
    column : dpsynth.schema.Column
        Without a missing code when the DP count of records without a number
        does not clear its threshold (:func:`numeric_binning`); the few such
        records are coded as :func:`~dpsynth.schema.Binning.fill_code`.
    spends : list of dpsynth.accounting.Spend
    """
    texts = text_weights = text_options = None
    if kind in ("int", "float", "date"):
        text_share, noisy_texts, fmt, *rest = text
        decimal_share = rest[0] if rest else None
        date_format = fmt if kind == "date" else None
        number_format = fmt if kind != "date" else None
        values = (parse_dates(series, date_format) if date_format is not None
                  else parse_formatted(series, number_format) if number_format is not None
                  else parse_numbers(series))
        integer = kind != "float"
        dtype = series.dtype  # the column keeps its dtype: numbers and codes decode into it
        is_text = text_fields(series, values)
        texts = series.to_numpy(dtype=object)[is_text]
        text_weights = (None if weights is None
                        else np.asarray(weights, dtype=np.float64)[is_text])
        text_options = {"texts": noisy_texts, "other_label": other_label,
                        "text_share": text_share, "date_format": date_format}
        if number_format is not None:
            text_options["number_format"] = number_format
        if decimal_share is not None and date_format is None and number_format is None:
            text_options["decimal_share"] = decimal_share
        absent = series.isna().to_numpy()  # texts and other fields have codes of their own
    else:  # instants and durations are whole numbers of their unit
        dtype = series.dtype
        values = numbers_of(series)
        integer = (kind == "whole" or is_temporal(dtype)
                   or pd.api.types.is_integer_dtype(dtype))
        absent = np.isnan(values)
    present = ~np.isnan(values)
    weights = None if weights is None else np.asarray(weights, dtype=np.float64)
    missing = float(absent.sum() if weights is None else weights[absent].sum())
    binning, spent, has_missing = numeric_binning(
        values[present], integer=integer, rho=rho, delta=delta, n_bins=n_bins,
        max_points=n_bins, rng=rng, weights=None if weights is None else weights[present],
        special=_special(special, name, integer), decimals=decimals, missing=missing,
        texts=texts, text_weights=text_weights, text_options=text_options,
        text_rho=text_rho if texts is not None else 0.0,
        levels=MAX_LEVELS if kind == "date" else None,
        code_levels=(MAX_CODE_LEVELS if integer and kind != "date" and not is_temporal(dtype)
                     else None), records=records)
    if step is not None:
        binning = replace(binning, step=int(step))
    return Column(name, dtype, tuple(binning.labels), declared=True,
                  missing_marker=default_missing_marker(dtype), has_missing=has_missing,
                  binning=binning), \
        _named(spent, name)


def warn_no_range(names, stacklevel=3):
    """One warning naming every numeric column of ``names`` whose DP range step found no
    range (a DP outcome: ``found`` in its spend), so that a wide table gets one line."""
    if not names:
        return
    if len(names) == 1:
        what, hold, its, it = f"column {names[0]!r}", "it holds", "its", "it"
    else:
        what, hold, its, it = (f"columns {quoted_names(names)} ({len(names)} columns)",
                               "they hold",
                               "their", "them")
    warnings.warn(
        f"No DP range was found for the numeric {what} (too few records for {its} share "
        f"of the budget): any synthetic values {hold} are drawn near 0. Declare {its} "
        f"bounds, raise epsilon or drop {it}.", NoisyReleaseWarning, stacklevel=stacklevel)


def range_found(spent):
    """Whether the DP range step of a column's spends (``fit_auto_column``'s) found one."""
    return dict(spent[0].params).get("found", True) is not False


def _special(values, name, integer):
    special = _check_special(values, name) if len(values) else ()
    if integer and not all(float(v).is_integer() for v in special):
        raise ValueError(f"special_values for the integer column {name!r} must be integers; "
                         f"got {list(special)}.")
    return special


def raise_all(errors):
    """Raise one error for every column of ``errors`` (``[(name, exception)]``).

    One column: its own exception.  Several: a ``ValueError`` listing each
    column and what fixes it, so that one run reports them all.
    """
    if not errors:
        return
    if len(errors) == 1:
        raise errors[0][1]
    lines = "\n".join(f"  - {name!r}: {' '.join(str(exc).split())}" for name, exc in errors)
    raise ValueError(f"{len(errors)} columns cannot be encoded; fix each of them:\n{lines}")
