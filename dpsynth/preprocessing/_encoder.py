"""Whole-table encoder: DataFrame <-> int32 code matrix.

Every column is encoded as categorical: its own values, or, for numeric
columns given public ``bounds`` (or a binner), the bins of a
:class:`~dpsynth.preprocessing.DPKBinsDiscretizer`.  Column ``j`` gets the
codes ``0 .. n_values_[j] - 1``; with ``missing="category"`` the last code is
the column's missing value.  A public schema (a release's) also gives each
column whose values are not declared an *other* code, right after its
values, for every value the release did not publish.

The fitted encoder's :class:`~dpsynth.schema.Schema` (``schema_``) is
private: it lists every observed value of the undeclared columns.  A release
publishes ``schema_.restrict(released)`` only, and
:meth:`TableEncoder.from_schema` rebuilds a fitted encoder from any schema
(e.g. the one a release file carries).  The encoder's jobs live in their own
modules: category lists in :mod:`._categories`, binning in :mod:`._binning`,
output dtypes in :mod:`._dtypes`; this one maps values to codes and back.
"""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..accounting import MAX_EPSILON
from ..schema import (DEFAULT_OTHER_LABEL, Column, Schema, default_missing_marker,
                      python_scalar, value_to_json)
from ..utils._arrow import arrow_dtypes, arrow_restored
from ..utils._random import seed_sequence, stream
from ..utils._threads import leave_signals_to_main_thread, n_threads
from ..utils._validation import (check_table, column_labels, factorize, is_missing_scalar,
                                 named_keys)
from ._binning import binned_column, make_binners
from ._categories import check_categories, discover_values, dtype_declared
from ._discretizer import (_INVERSES, _STRATEGIES, _restore_numeric, decode_binning,
                           encode_binning)
from ._discretizer import DEFAULT_FREQUENT_DELTA
from ..utils._numbers import parse_formatted
from ..utils._temporal import date_unit, is_temporal, numbers_of
from ._dtypes import nullable_dtype, restore_dtype
from ._numeric import (DATES, DECIDE_SHARE, DECIMALS, DECIMALS_SHARE, FORMATS, NUMERIC,
                       OBJECTS, RECORDS, RECORDS_SHARE,
                       SETTLE, SETTLE_FORMATS, SETTLE_GAIN, SETTLE_OBJECTS, SETTLE_SHARE, STEP,
                       WHOLE,
                       auto_columns, check_numeric, noisy_records,
                       decide_text_column, decide_temporal_step, decide_whole_numbers,
                       binning_places, decide_written_decimals, decode_text_binning,
                       encode_text_binning, fit_auto_column, is_text_dtype, parse_numbers,
                       range_found, warn_no_range,
                       raise_all, temporal_steps, text_weight)

__all__ = ["TableEncoder"]

# the parameters that name columns (dict keys, list entries)
COLUMN_PARAMETERS = ("categories", "no_missing", "other_label", "numeric", "bounds", "binning",
                     "special_values", "decimals")


def output_labels(schema):
    """The column index of a decoded table: each column's input label (its number label,
    else its name)."""
    labels = schema.labels()
    return pd.Index([labels.get(name, name) for name in schema.names])

_RANDOM_STATE = ["random_state", np.random.Generator, np.random.SeedSequence]

_PARALLEL_DECODE_ROWS = 100_000
"""Tables of fewer rows are decoded in one thread (a thread costs more than it saves)."""


def _check_integer_bounds(bounds, frame):
    """Bounds of an integer column must lie in its dtype's range (e.g. below 2**63)."""
    if not isinstance(bounds, dict):
        return
    for name, pair in bounds.items():
        if name not in frame.columns or isinstance(pair, str):
            continue
        dtype = frame[name].dtype
        if not (pd.api.types.is_integer_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)):
            continue
        info = np.iinfo(getattr(dtype, "numpy_dtype", dtype))
        try:
            low, high = pair
            ok = info.min <= low <= info.max and info.min <= high <= info.max
        except (TypeError, ValueError):
            continue  # the binner reports malformed bounds
        if not ok:
            raise ValueError(
                f"bounds[{name!r}] = {tuple(pair)!r:.80} is outside the range of the "
                f"column's dtype {dtype} ([{info.min}, {info.max}]); give bounds within "
                "it, or convert the column to float.")


class TableEncoder(TransformerMixin, BaseEstimator):
    """Encode a table's columns as integer category codes (or bins), and back.

    The input frame's column names and dtypes are the user's declaration of
    the table's schema (public); so are ``categories``, ``bounds`` and bin
    edges.  Everything else the encoder learns from the data is private:
    a synthesizer publishes only what a DP mechanism releases.

    Parameters
    ----------
    categories : "auto", "dtype", dict or list, default="auto"
        Public category lists.  ``"auto"`` learns them from the data (they
        then stay private; the DP release decides which ones are published),
        but for boolean columns, whose dtype declares their two values.
        A dict maps column names to value lists (or ``"dtype"``/``"auto"``);
        a list gives one value list per column in order.  ``"dtype"``
        declares the category list of every pandas categorical column public
        (a promise that it does not come from the data).  Columns absent
        from a dict are learned.  Declared lists are public information:
        the synthesizer does not pay privacy budget for them.  Without
        ``"dtype"``, a categorical column's categories come from the data
        (``astype("category")``), and so does their dtype: its public schema
        then has ``object`` categories (the released values only).
    missing : {"category", "absent"}, default="category"
        ``"category"``: missing values (None, NaN, pd.NA, NaT) are one more
        category of their column.  ``"absent"``: the SDS semantics, a missing
        cell is empty, encoded as ``-1`` and never counted.
    handle_unknown : {"error", "missing"}, default="error"
        What to do with a value outside a declared category list: raise, or
        treat it as missing.  A column with an other value (see
        ``other_label``) encodes such a value as other instead.
    no_missing : list of str, default=None
        Columns declared to hold no missing values (public, like a schema's
        ``NOT NULL`` constraints).  With ``missing="category"`` their missing
        code is impossible, so no noise can put synthetic records there (and
        none is spent measuring it).  A missing value in such
        a column (or an unknown value with ``handle_unknown="missing"``)
        raises ``ValueError``.  This holds for columns whose values are not
        declared too: the values a DP release does not publish become their
        other value, not missing ones.
    other_label : str, dict or None, default="<other>"
        The public label of the *other* value of the columns whose values
        are not declared.  A DP release publishes only some of their values;
        it gives each such column one more code, *other*, for all the
        values it did not publish (whether or not there are any: the code
        never depends on the data), measured and synthesized like any value
        and apart from the missing one, as scikit-learn's infrequent
        categories.  Synthetic other values decode to this label in text
        columns (object, string, categorical of strings) and to the missing
        marker in the others (numbers, booleans, datetimes), whose dtype
        cannot hold a text.  An ``object`` column whose published values are
        all numbers decodes a text label as missing too (so that the column
        holds numbers only; decided from the published values).  A dict
        ``{column: label}`` sets the label of
        some columns (any value their dtype holds, e.g. ``-1`` for an integer
        column; ``None``: the missing marker); the other text columns keep
        ``"<other>"``.  ``None`` decodes every other value as missing.  The
        label is public: chosen by you, never read from the data.  (A
        released value equal to it decodes the same way.)
    max_float_values : int, default=32
        With ``numeric="categorical"`` (or no ``numeric_rho``), a float
        column with more distinct values than this (and no declared
        categories or bounds) is rejected: give it public ``bounds``.
    numeric : {"auto", "categorical"} or dict, default="auto"
        ``"auto"``: every numeric column (integer or float dtype, not bool;
        ``datetime64`` and ``timedelta64`` as whole numbers of their unit)
        with no declared ``categories``, ``bounds`` or ``binning`` is binned
        by DP from ``numeric_rho`` alone (see
        :mod:`dpsynth.preprocessing._numeric` and the numeric columns page):
        a DP range, DP point masses (exact values such as 0 or 40, at most
        ``n_bins`` of them, each decoding to exactly that value), ``n_bins``
        DP quantile intervals and a DP histogram of values inside each
        interval; integer columns decode to integers, float columns to the
        declared ``decimals`` (else four significant digits of the DP
        range).  ``"categorical"``: such columns are categorical (each value
        a category).  A dict ``{column: "auto" | "categorical"}`` sets it
        per column (absent columns: ``"auto"``).  A :class:`~dpsynth.DPMarginalSynthesizer` gives
        ``numeric_rho`` a share of its own budget; an encoder fitted alone
        with ``numeric_rho=None`` treats numeric columns as categorical.
    numeric_rho : float, default=None
        zCDP budget (``mu**2 / 2`` in Gaussian DP) of ``numeric="auto"``:
        :data:`~dpsynth.preprocessing._numeric.RECORDS_SHARE` of it counts the
        table's records when a column is found numeric, the rest is split
        evenly over its candidate columns (in ``rho_spent_``).
    numeric_delta : float, default=None
        ``delta`` of the point masses' threshold, split evenly over the
        candidate columns (``None``: the fixed ``1e-9``; in ``delta_spent_``).
    text_numbers : {"dp", None}, default="dp"
        ``"dp"``: undeclared text columns (object or string dtype) are
        candidates of ``numeric="auto"`` too: a DP count of their fields
        that are integers, other numbers or texts decides whether the column
        holds numbers (:func:`~dpsynth.preprocessing._numeric.decide_numeric`,
        a tenth of the column's share: numbers, and texts at most half of
        the fields).  Such a column keeps its dtype: its numbers are binned
        as above, and its texts (codes such as ``"N"`` or ``"n/a"``, and
        numbers written with a leading zero such as ``"02134"``) are
        released like point masses, each decoding to exactly that text; the
        texts not released share one other code, decoded to the column's
        other label.  In an ``object`` column, a DP share of the numbers
        decodes as text (``"12"``) and the rest as Python numbers (``12``),
        as the column held them.  The same DP count has a cell per date
        format of the public list
        :data:`~dpsynth.utils._temporal.DATE_FORMATS` (``"2021-03-04"``,
        ``"Dec-2011"``, ...): a column not found to hold numbers whose fields
        are mostly dates of one format is binned as whole days, seconds,
        minutes or months, with its other texts as codes, and decodes to
        dates written in that format; likewise a cell per number format of
        the public list :data:`~dpsynth.utils._numbers.NUMBER_FORMATS`
        (percentages ``"12.5%"``, amounts ``"$1,234.56"``, ``"-€5"``, numbers
        with thousands separators ``"1,234"``), whose
        numbers are binned as above and decode written in that format.
        In an ``object`` column, the same DP count has a cell per kind of
        date or time object of the public list
        :data:`~dpsynth.utils._temporal.DATE_OBJECTS` (``datetime.date``,
        naive and aware ``datetime``/``Timestamp``): a column mostly of one
        kind is binned as days or microseconds and decodes to objects of that
        kind (``datetime.date``, ``pd.Timestamp``, aware ones in UTC); and two
        cells for ``decimal.Decimal`` objects, numbers beside the ints and
        floats, a DP share of the numbers decoded as objects then decoding as
        ``Decimal`` (at the column's decimals).
        ``None``: text columns are categorical.
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
    special_values : dict, default=None
        ``{column: [values]}``: public point masses of binned columns (zeros,
        round numbers, top codes, or codes outside the bounds such as
        ``-9``), each with a bin of its own, labelled ``"=0"``; a value equal
        to one of them decodes to exactly that value.  Declared, so free.
        E.g. ``special_values={"capital-gain": [0]}``.
    frequent_values : {None, "dp"}, default=None
        ``"dp"``: also give a bin of its own to every frequent exact value of
        a binned column that a DP stability-based histogram releases (see
        :class:`~dpsynth.preprocessing.DPKBinsDiscretizer`).
    frequent_epsilon : float, default=None
        Budget of ``frequent_values="dp"``, split evenly over the binned
        columns (in ``epsilon_spent_``).
    frequent_delta : float, default=None
        ``delta`` of ``frequent_values="dp"`` (``None``: the fixed
        ``1e-9``), split evenly over the binned columns (in
        ``delta_spent_``).
    inverse : {"uniform", "midpoint", "dp_histogram"}, default="uniform"
        How binned columns decode (see ``DPKBinsDiscretizer``):
        ``"dp_histogram"`` draws from a DP histogram of sub-bins released in
        ``fit`` with ``inverse_epsilon`` (split evenly over the binned
        columns, in ``epsilon_spent_``).
    inverse_epsilon : float, default=None
        Budget of ``inverse="dp_histogram"``.
    decimals : int or dict, default=None
        Decoded values of binned float columns are rounded to this many
        decimals (their declared precision); a dict sets it per column.
        Integer columns always decode to integers.
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the DP quantiles and the within-bin draws of
        :meth:`inverse_transform`.  ``None``: OS entropy, or, inside a
        :class:`~dpsynth.DPMarginalSynthesizer`, a child of the synthesizer's
        stream.  A seed given here is kept by the synthesizer (which warns
        when its own ``random_state`` is None: the DP steps would then draw
        the same noise at every fit).

    Attributes
    ----------
    schema_ : dpsynth.schema.Schema
        Every column's facts, with the observed values of undeclared columns
        (private: publish ``schema_.restrict(...)`` only).
    epsilon_spent_ : float
        Privacy budget spent while fitting on DP quantiles, DP frequent
        values and DP within-bin histograms (0.0 without them).  A
        synthesizer adds it to its own spending (basic composition).
    rho_spent_ : float
        zCDP budget spent by ``numeric="auto"`` (Gaussian mechanisms, part of
        ``numeric_rho``; 0.0 without them).  A synthesizer counts it inside
        its own budget.
    delta_spent_ : float
        ``delta`` spent while fitting (DP frequent values and point masses;
        else 0.0).
    spends_ : tuple of dpsynth.accounting.Spend
        Every mechanism of ``numeric="auto"``, by column.
    n_values_ : ndarray of shape (n_features,)
        Number of codes of each column (including the missing code).
    offsets_ : ndarray of shape (n_features + 1,)
        Attribute id of code 0 of each column; ``offsets_[-1]`` is the total
        number of attributes.
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    Missing values decode to a marker fixed by the column's dtype, never by
    the data: ``NaN`` in object and float columns, the dtype's ``na_value``
    in string columns, ``pd.NA`` in nullable ones, ``NaT`` in datetimes.
    With ``missing="category"`` they are a value of their own, so a column
    without missing values gets none back (up to noise), and a column
    declared in ``no_missing`` never does.

    The values of an undeclared column are kept in one canonical spelling
    per equality class and in a total order that no record can change
    (``-0.0`` is ``0.0``, ``1.0`` among ints is ``1``, tz-aware timestamps
    are in the dtype's zone or UTC; sorted by type rank, then value; see
    the privacy page of the documentation).  A Python
    list ``X`` has ``object`` columns: its dtypes would be inferred from its
    values.

    Examples
    --------
    >>> import pandas as pd
    >>> from dpsynth.preprocessing import TableEncoder
    >>> X = pd.DataFrame({"a": ["x", "y", None], "b": [1, 2, 2]}, dtype=object)
    >>> enc = TableEncoder().fit(X)
    >>> enc.transform(X)
    array([[0, 0],
           [1, 1],
           [2, 1]], dtype=int32)
    >>> enc.inverse_transform(enc.transform(X))["b"].tolist()
    [1, 2, 2]
    """

    _parameter_constraints = {
        "categories": [StrOptions({"auto", "dtype"}), dict, list, tuple, None],
        "missing": [StrOptions({"category", "absent"})],
        "handle_unknown": [StrOptions({"error", "missing"})],
        "no_missing": [list, tuple, None],
        "other_label": [str, dict, None],
        "max_float_values": [Interval(Integral, 1, None, closed="left")],
        "numeric": [StrOptions({"auto", "categorical"}), dict],
        "numeric_rho": [Interval(Real, 0, None, closed="neither"), None],
        "numeric_delta": [Interval(Real, 0, 1, closed="neither"), None],
        "text_numbers": [StrOptions({"dp"}), None],
        "bounds": [dict, None],
        "n_bins": [Interval(Integral, 1, None, closed="left")],
        "binning": [StrOptions(set(_STRATEGIES)), dict],
        "binning_epsilon": [Interval(Real, 0, MAX_EPSILON, closed="right"), None],
        "special_values": [dict, None],
        "frequent_values": [StrOptions({"dp"}), None],
        "frequent_epsilon": [Interval(Real, 0, MAX_EPSILON, closed="right"), None],
        "frequent_delta": [Interval(Real, 0, 1, closed="neither"), None],
        "inverse": [StrOptions(set(_INVERSES))],
        "inverse_epsilon": [Interval(Real, 0, MAX_EPSILON, closed="right"), None],
        "decimals": [Interval(Integral, None, None, closed="neither"), dict, None],
        "random_state": _RANDOM_STATE,
    }

    def __init__(self, *, categories="auto", missing="category",
                 handle_unknown="error", no_missing=None, other_label=DEFAULT_OTHER_LABEL,
                 max_float_values=32, numeric="auto", numeric_rho=None, numeric_delta=None,
                 text_numbers="dp", bounds=None, n_bins=10,
                 binning="uniform", binning_epsilon=None, special_values=None,
                 frequent_values=None, frequent_epsilon=None, frequent_delta=None,
                 inverse="uniform", inverse_epsilon=None, decimals=None, random_state=None):
        self.categories = categories
        self.missing = missing
        self.handle_unknown = handle_unknown
        self.no_missing = no_missing
        self.other_label = other_label
        self.max_float_values = max_float_values
        self.numeric = numeric
        self.numeric_rho = numeric_rho
        self.numeric_delta = numeric_delta
        self.text_numbers = text_numbers
        self.bounds = bounds
        self.n_bins = n_bins
        self.binning = binning
        self.binning_epsilon = binning_epsilon
        self.special_values = special_values
        self.frequent_values = frequent_values
        self.frequent_epsilon = frequent_epsilon
        self.frequent_delta = frequent_delta
        self.inverse = inverse
        self.inverse_epsilon = inverse_epsilon
        self.decimals = decimals
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def _fit_schema(self, X, factorized=None):
        """Check ``X`` and fit the schema; returns the checked frame.  ``factorized``
        (a dict) receives each discovered column's :func:`pandas.factorize`
        (``int32`` positions, distinct values) for :meth:`_encode`."""
        self._validate_params()
        self._arrow_dtypes = arrow_dtypes(X) if isinstance(X, pd.DataFrame) else {}
        self._labels = column_labels(X)  # number labels, named by their text
        frame, was_frame = check_table(X, copy=False)  # only read

        def discover(name):
            series = frame[name]
            if factorized is None or isinstance(series.dtype, pd.CategoricalDtype):
                return discover_values(name, series, self.max_float_values)
            found, distinct = factorize(series)
            factorized[name] = (found.astype(np.int32), distinct)
            return discover_values(name, series, self.max_float_values, distinct)

        self._build_schema(
            frame, was_frame,
            discover=discover,
            fit_binner=lambda name, binner: binned_column(name, frame[name], binner),
            column_values=lambda name: _distinct_values(frame[name]))
        return frame

    def _declaration(self):
        """The column-keyed parameters with the input's number labels (``0``) replaced
        by their names (``"0"``): a declaration may name a column either way."""
        labels = getattr(self, "_labels", None)
        return {p: named_keys(getattr(self, p), labels) for p in COLUMN_PARAMETERS}

    def _auto_columns(self, frame, declared, params):
        """The candidates of ``numeric="auto"``: ``{name: "number" | "text"}`` (public)."""
        check_numeric(params["numeric"], list(frame.columns))
        if params["numeric"] == "categorical" or self.numeric_rho is None:
            return {}
        return auto_columns(frame, declared=declared, bounds=params["bounds"],
                            binning=params["binning"], text_numbers=self.text_numbers,
                            numeric=params["numeric"])

    def _numeric_kinds(self, auto, column_values, dtypes, rng, spends, errors, decimals=None):
        """The numeric columns of ``numeric="auto"`` and each one's budget.

        A text candidate first spends ``DECIDE_SHARE`` of an even share of
        ``numeric_rho`` on the DP decision of whether it holds numbers (a
        column of a float dtype, on whether it holds whole numbers only:
        :func:`~dpsynth.preprocessing._numeric.decide_whole_numbers`); the
        candidates whose decision is not settled (too few present fields for
        its noise, a DP output) are measured again, each with ``SETTLE_GAIN``
        times that ``rho`` and together at most ``SETTLE_SHARE`` of
        ``numeric_rho``, and decided on the mean of both rounds, so that a
        sparse column of numbers is found numeric.  The rest of ``numeric_rho``
        (and ``numeric_delta``) is split over the columns of a numeric dtype
        and the text columns decided numeric (a public function of DP
        outputs), so that the words of a CSV file leave their budget to its
        numbers: evenly, but a text column decided numeric weighs ``1 +
        TEXT_WEIGHT f``, ``f`` the noisy share of texts among its present
        fields in its decision (a DP output, down to a multiple of 1/8 and at
        least 1/8; 0 unless their noisy count clears ``1 + 3 sigma``), and the part above 1 goes to
        the step that releases its texts (``text_rho``): its codes (``"0-49"``
        beside the number ``501``) then clear a threshold nearer the one a
        text column's values meet in the release.

        All of this is out of ``1 - RECORDS_SHARE`` of ``numeric_rho``: the
        rest counts the table's records once a column is found numeric
        (:func:`~dpsynth.preprocessing._numeric.noisy_records`), which every
        column's binning reads.

        A column found to hold decimal numbers (of a float dtype, or text) whose
        ``decimals`` are not declared (``decimals``: the parameter) spends
        ``DECIMALS_SHARE`` of its decision's ``rho`` on the decimals it is written
        with (:func:`~dpsynth.preprocessing._numeric.decide_written_decimals`).

        Returns ``({name: "number" | "whole" | "int" | "float" | "date" | None}, {name:
        (text_share, texts, fmt)}, {name: (rho, text_rho)}, delta,
        {name: column_values(name)}, {name: step}, records, {name: decimals})``
        (the second for the text candidates, the fifth the values read for the
        decisions of the columns found numeric, so that their binning does not
        read them again, the sixth the temporal columns' steps,
        :func:`~dpsynth.preprocessing._numeric.decide_temporal_step`); the
        decisions' spends and errors are appended to ``spends`` and ``errors``;
        ``records`` is the noisy record count and its variance (None without a
        numeric column); the last, the written decimals found.
        """
        if not auto:
            return {}, {}, {}, 0.0, {}, {}, None, {}
        kinds, texts, unsettled, values, shares, steps = {}, {}, {}, {}, {}, {}

        def read(name):
            if name not in values:
                values[name] = column_values(name)
            return values[name]

        # the noise of the date cells and of the number-format cells, and the second
        # round's, come from child streams of ``rng``'s seed, so that the draws of
        # the number cells and of the binning are those of a decision without date
        # or number-format cells and without a second round
        sequence = rng.bit_generator.seed_seq
        date_rng, whole_rng, step_rng, format_rng, object_rng = (
            np.random.default_rng(stream(sequence, key))
            for key in (DATES, WHOLE, STEP, FORMATS, OBJECTS))
        # RECORDS_SHARE of numeric_rho is the table's record count's (spent when a
        # column is found numeric); the decisions and the columns share the rest
        base = self.numeric_rho * (1.0 - RECORDS_SHARE)
        rho_first = DECIDE_SHARE * base / len(auto)
        for name, kind in auto.items():
            if kind != "text":
                kinds[name] = kind
                if kind == "number" and pd.api.types.is_float_dtype(dtypes[name]):
                    kinds[name], spent = decide_whole_numbers(
                        name, *read(name), rho=rho_first, rng=whole_rng)
                    spends.extend(spent)
                elif kind == "number" and is_temporal(dtypes[name]):
                    steps[name], spent = decide_temporal_step(
                        name, *read(name), rho=rho_first, rng=step_rng)
                    spends.extend(spent)
                continue
            try:
                kinds[name], texts[name], spent, counts = decide_text_column(
                    name, *read(name), rho=rho_first, rng=rng, date_rng=date_rng,
                    format_rng=format_rng, object_rng=object_rng)
                spends.extend(spent)
                shares[name] = counts
                if not counts.settled:
                    unsettled[name] = counts
                elif kinds[name] is None:  # stays text: its values are not read again
                    values.pop(name)
            except (ValueError, TypeError) as exc:
                kinds[name] = None
                errors.append((name, exc))
        if unsettled:  # which columns are unsettled is a DP output
            rho_second = min(SETTLE_GAIN * rho_first,
                             SETTLE_SHARE * base / len(unsettled))
            settle_rng, settle_format_rng, settle_object_rng = (
                np.random.default_rng(stream(sequence, key))
                for key in (SETTLE, SETTLE_FORMATS, SETTLE_OBJECTS))
            for name, counts in unsettled.items():
                kinds[name], texts[name], spent, shares[name] = decide_text_column(
                    name, *read(name), rho=rho_second, rng=settle_rng,
                    date_rng=settle_rng, format_rng=settle_format_rng,
                    object_rng=settle_object_rng, prior=counts)
                spends.extend(spent)
        for name, kind in kinds.items():  # dates written with a time: their step
            if kind == "date" and temporal_steps(date_unit(texts[name][2])):
                steps[name], spent = decide_temporal_step(
                    name, *read(name), rho=rho_first, rng=step_rng,
                    date_format=texts[name][2])
                spends.extend(spent)
        written = self._written_decimals(kinds, texts, dtypes, read,
                                         DECIMALS_SHARE * rho_first, spends,
                                         decimals, stream(sequence, DECIMALS))
        numeric = [name for name, kind in kinds.items() if kind is not None]
        values = {name: values[name] for name in numeric if name in values}
        if not numeric:
            return kinds, texts, {}, 0.0, values, steps, None, written
        extra = {name: text_weight(texts[name][1], shares[name])
                 for name in numeric if name in texts}
        unit = (base - sum(s.rho for s in spends)) / (len(numeric) + sum(extra.values()))
        # the table's record count (every column holds every record: the first one's)
        series, weights = read(numeric[0])
        records, spent = noisy_records(
            len(series) if weights is None else float(np.sum(weights)),
            RECORDS_SHARE * self.numeric_rho, np.random.default_rng(stream(sequence, RECORDS)))
        spends.append(spent)
        rho = {name: (unit, unit * extra.get(name, 0.0)) for name in numeric}
        delta = (DEFAULT_FREQUENT_DELTA if self.numeric_delta is None
                 else self.numeric_delta) / len(numeric)
        return kinds, texts, rho, delta, values, steps, records, written

    @staticmethod
    def _written_decimals(kinds, texts, dtypes, read, rho, spends, declared, seed):
        """``{name: (decimals, cells)}`` of the columns found to hold decimal numbers
        whose decimals are not ``declared`` (their DP decision, each ``rho``: the
        decimals, or None, and the noisy counts of the numbers' decimals; spends
        appended to ``spends``; noise from ``seed``'s stream alone)."""
        written, rng = {}, np.random.default_rng(seed)
        if declared is not None and not isinstance(declared, dict):  # one for every column
            return written
        for name, kind in kinds.items():
            if declared is not None and name in declared:
                continue
            if not (kind == "float" or (kind == "number"
                                        and pd.api.types.is_float_dtype(dtypes[name]))):
                continue
            series, weights = read(name)
            fmt = texts[name][2] if kind == "float" else None
            numbers = (numbers_of(series) if kind == "number"
                       else parse_formatted(series, fmt) if fmt is not None
                       else parse_numbers(series))
            single = kind == "number" and getattr(dtypes[name], "numpy_dtype",
                                                  dtypes[name]) == np.float32
            decimals, cells, spent = decide_written_decimals(name, numbers, weights,
                                                             rho=rho, rng=rng, single=single)
            written[name] = (decimals, cells)
            spends.extend(spent)
        return written

    def _build_schema(self, frame, was_frame, *, discover, fit_binner, column_values=None):
        """Set ``schema_`` from the declaration (``frame``'s names and dtypes, parameters).

        ``discover(name)`` gives an undeclared column's private value list,
        ``fit_binner(name, binner)`` a binned column's :class:`Column` and
        ``column_values(name)`` a column's values (a Series, or its distinct
        values and their numbers of records), so that the values can come
        from a frame in memory or from partitions (:mod:`dpsynth.engines.dask`).
        Every column that cannot be encoded is reported in one error.
        """
        names = list(frame.columns)
        params = self._declaration()
        declared = check_categories(params["categories"], frame)
        not_null = _check_no_missing(params["no_missing"], names)
        _check_integer_bounds(params["bounds"], frame)
        auto = self._auto_columns(frame, declared, params)
        binners = make_binners(bounds=params["bounds"], binning=params["binning"],
                               binning_epsilon=self.binning_epsilon, n_bins=self.n_bins,
                               names=names, declared=declared,
                               random_state=self.random_state,
                               special_values=params["special_values"],
                               frequent_values=self.frequent_values,
                               frequent_epsilon=self.frequent_epsilon,
                               frequent_delta=self.frequent_delta, inverse=self.inverse,
                               inverse_epsilon=self.inverse_epsilon,
                               decimals=params["decimals"], auto=auto)
        labels = _other_labels(params["other_label"], frame, declared, binners)
        dtype_public = dtype_declared(params["categories"], frame)
        auto_rng = np.random.default_rng(stream(self.random_state, NUMERIC))
        columns, errors, spends, no_range = [], [], [], []
        kinds, texts, rho_column, delta_column, read_values, steps, records, written = \
            self._numeric_kinds(auto, column_values, frame.dtypes, auto_rng, spends, errors,
                                params["decimals"])
        for name in names:
            dtype = frame[name].dtype
            try:
                if name in binners:
                    columns.append(replace(fit_binner(name, binners[name]),
                                           has_missing=name not in not_null))
                    continue
                if kinds.get(name) is not None:
                    found, cells = written.get(name, (None, None))
                    column, spent = fit_auto_column(
                        name, *(read_values.pop(name, None) or column_values(name)),
                        kind=kinds[name], rho=rho_column[name][0],
                        text_rho=rho_column[name][1], delta=delta_column,
                        n_bins=self.n_bins, rng=auto_rng,
                        other_label=labels.get(name), text=texts.get(name),
                        step=steps.get(name), records=records,
                        special=(params["special_values"] or {}).get(name, ()),
                        decimals=(params["decimals"].get(name, found)
                                  if isinstance(params["decimals"], dict)
                                  else params["decimals"] if params["decimals"] is not None
                                  else found))
                    spends.extend(spent)
                    column = _with_places(column, cells)
                    if not range_found(spent):
                        no_range.append(name)
                    columns.append(replace(column, has_missing=column.has_missing
                                           and name not in not_null))
                    continue
                values = declared.get(name)
                public = name in declared
                if values is None and _is_bool(dtype):  # the dtype declares its two values
                    values, public = [False, True], True
                if values is None:
                    values = discover(name)
                columns.append(Column(name, dtype, tuple(values), declared=public,
                                      missing_marker=default_missing_marker(dtype),
                                      has_missing=name not in not_null,
                                      categories_dtype_declared=name in dtype_public,
                                      other_label=labels.get(name)))
            except (ValueError, TypeError) as exc:
                errors.append((name, exc))
        raise_all(errors)
        warn_no_range(no_range, stacklevel=4)
        # numeric="auto" columns clip +-inf into their end bins, like any outlier
        self._auto_binned = frozenset(c.name for c in columns
                                      if c.name in auto and c.binning is not None)
        self.epsilon_spent_ = float(sum(b.epsilon_spent_ for b in binners.values()))
        self.rho_spent_ = float(sum(s.rho for s in spends))
        self.spends_ = tuple(spends)
        self.delta_spent_ = float(sum(b.delta_spent_ for b in binners.values())
                                  + sum(s.delta for s in spends))
        labels = getattr(self, "_labels", None)
        self._set_schema(Schema(tuple(columns), self.missing).with_labels(labels), was_frame)
        self._not_null = not_null
        self._columns_dtype = None if labels else frame.columns.dtype  # declared with the names

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
        frame = self._fit_schema(X)
        self._transform(frame)  # surfaces values outside declared categories now
        return self

    def fit_transform(self, X, y=None):
        """Fit and return the codes of X (encodes X once)."""
        return self._fit_transform(X)

    def _fit_transform(self, X):
        """:meth:`fit_transform` as an array whatever ``set_output`` says (for dpsynth's
        own use: its code matrices are arrays)."""
        factorized = {}  # each discovered column is read once
        return self._encode(self._fit_schema(X, factorized), factorized)  # checked by the fit

    def _set_schema(self, schema, was_frame):
        self.schema_ = schema
        self.n_features_in_ = len(schema)
        self.feature_names_in_ = np.asarray(schema.names, dtype=object)
        self._output_frame = was_frame
        self._indexes = [pd.Index(list(c.values), dtype=object) for c in schema]

    def get_feature_names_out(self, input_features=None):
        """The output's column names: one code column per input column, in order.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Must equal ``feature_names_in_`` when given.

        Returns
        -------
        ndarray of str
            ``feature_names_in_``; with it, ``set_output(transform="pandas")``
            and a ``ColumnTransformer`` name the code columns as the input's.
        """
        check_is_fitted(self, "schema_")
        names = np.asarray(self.feature_names_in_, dtype=object)
        if input_features is not None:
            given = np.asarray(input_features, dtype=object)
            if given.shape != names.shape or not (given == names).all():
                raise ValueError(f"input_features is not equal to feature_names_in_: "
                                 f"{list(given)} != {list(names)}.")
        return names.copy()

    @property
    def n_values_(self):
        """Number of codes of each column (the missing code included)."""
        check_is_fitted(self, "schema_")
        return self.schema_.n_values

    @property
    def offsets_(self):
        """Attribute id of code 0 of each column, and the number of attributes."""
        check_is_fitted(self, "schema_")
        return self.schema_.offsets

    # ------------------------------------------------------------ transform
    def _check_columns(self, frame):
        names = list(frame.columns)
        expected = list(self.feature_names_in_)
        if len(names) != len(expected):
            raise ValueError(f"X has {len(names)} features, but {type(self).__name__} is "
                             f"expecting {len(expected)} features as input.")
        if names != expected:
            if sorted(names) == sorted(expected):
                raise ValueError("The columns of X are in a different order than at fit; "
                                 f"expected {expected}.")
            missing = [c for c in expected if c not in names]
            extra = [c for c in names if c not in expected]
            raise ValueError(f"X has different columns than at fit: missing {missing}, "
                             f"unexpected {extra}.")

    def transform(self, X):
        """Encode X as an ``int32`` code matrix of shape (n_samples, n_features).

        Missing cells get the column's missing code (``missing="category"``)
        or ``-1`` (``missing="absent"``).  In a column with an other value
        (a release's schema), every value outside the column's values, its
        other label included, gets the other code.  ``set_output(transform="pandas")``
        makes it a DataFrame of the codes, with X's column names and index.
        """
        return self._transform(X)

    def _transform(self, X):
        """:meth:`transform` as an array whatever ``set_output`` (or scikit-learn's
        ``transform_output`` setting) says: dpsynth's own code matrices are arrays."""
        check_is_fitted(self, "schema_")
        frame, _ = check_table(X, copy=False)  # only read
        if not self._output_frame and not isinstance(X, pd.DataFrame):
            frame.columns = list(self.feature_names_in_)[: frame.shape[1]]
        return self._encode(frame)

    def _encode(self, frame, factorized=None):
        """:meth:`transform` of a checked frame (``factorized``: see :meth:`_fit_schema`;
        its entries are used up)."""
        self._check_columns(frame)
        codes = np.empty(frame.shape, dtype=np.int32)
        missing_codes = self.schema_.missing_codes
        for j, (column, index) in enumerate(zip(self.schema_, self._indexes)):
            series = frame[column.name]
            not_null = column.name in getattr(self, "_not_null", ())
            if column.binning is not None:
                if not_null and series.isna().any():
                    raise _missing_in_no_missing(column.name)
                # a column without a missing code (numeric="auto" found too few
                # records without a value) codes them as its fill code
                missing_code = (missing_codes[j] if column.has_missing or missing_codes[j] < 0
                                else column.binning.fill_code)
                codes[:, j] = _bin_column(column, series, missing_code,
                                          column.name in getattr(self, "_auto_binned", ()))
                continue
            # each distinct value looked up once: position among the distinct values
            # (-1: missing), then the code of each of them
            if factorized and column.name in factorized:
                found, distinct = factorized.pop(column.name)
            else:
                found, distinct = factorize(series)
            mask = found < 0
            if not_null and mask.any():
                raise _missing_in_no_missing(column.name)
            if not isinstance(series.dtype, pd.StringDtype):  # looked up as Python objects
                distinct = np.asarray(distinct.astype(object), dtype=object)  # no inference
            lookup = np.append(index.get_indexer(distinct).astype(np.int32), np.int32(-1))
            col = lookup.take(found)  # a missing cell (-1) takes the last entry, -1
            unknown = (col < 0) & ~mask
            if column.other:  # every value outside the list is the other value
                col[unknown] = len(column.values)
            elif unknown.any():
                if self.handle_unknown == "error":
                    shown = list(column.values[:10])
                    raise ValueError(
                        f"Column {column.name!r} has the value "
                        f"{series.astype(object).iloc[np.flatnonzero(unknown)[0]]!r}, which "
                        f"is not among its categories {shown}"
                        f"{'...' if len(column.values) > 10 else ''}. Add it to "
                        "`categories` or set handle_unknown='missing'.")
                if not_null:
                    raise ValueError(
                        f"Column {column.name!r} has a value outside its categories; "
                        "handle_unknown='missing' would make it missing, but `no_missing` "
                        "declares the column has no missing values. Add the value to "
                        "`categories` or remove the column from `no_missing`.")
                mask = mask | unknown
            col[mask] = missing_codes[j]
            codes[:, j] = col
        return codes

    def inverse_transform(self, X, *, random_state=None, n_jobs=1):
        """Decode a code matrix back into a table with the declared dtypes.

        Binned columns get a value inside each bin: a uniform draw (integers
        among the bin's integers) or the midpoint, per the binner's
        ``inverse``.

        Parameters
        ----------
        X : array-like of int of shape (n_samples, n_features)
        random_state : int, RandomState, Generator, SeedSequence or None, default=None
            Seed of the within-bin draws; ``None`` uses ``self.random_state``.
        n_jobs : int or None, default=1
            With more than one thread (``None``: every processor), a large
            table's binned columns are decoded in a second thread while the
            others are gathered.  The result does not depend on it.

        Returns
        -------
        DataFrame (if fitted on one) or ndarray
            Column names (or the input's number labels), order and dtypes
            restored.  An integer or bool column that receives missing values
            becomes the matching pandas nullable
            dtype (``Int64``, ``boolean``); with ``missing="absent"`` it always
            does (any cell may be empty), so the dtype never depends on the codes.
            The other code decodes to its column's other label; without one
            (numeric and datetime columns by default) to the missing marker,
            like a missing code.
        """
        return self._inverse_transform(X, random_state=random_state, n_jobs=n_jobs)

    def _inverse_transform(self, X, *, random_state=None, n_jobs=1, labelled=True):
        """:meth:`inverse_transform`; ``labelled=False`` keeps the columns' names
        where the input had number labels (dpsynth's own use)."""
        check_is_fitted(self, "schema_")
        codes = np.asarray(X)
        if codes.ndim != 2 or codes.shape[1] != len(self.schema_):
            raise ValueError(f"Expected a code matrix with {len(self.schema_)} columns; got "
                             f"shape {codes.shape}.")
        if not np.issubdtype(codes.dtype, np.integer):
            raise TypeError(f"Codes must be integers; got dtype {codes.dtype}.")
        if isinstance(n_jobs, bool) or not (n_jobs is None or isinstance(n_jobs, Integral)) \
                or n_jobs == 0:
            raise ValueError("n_jobs must be None or a non-zero integer (-1: all processors); "
                             f"got {n_jobs!r}.")
        rng = np.random.default_rng(
            seed_sequence(self.random_state if random_state is None else random_state))
        binned = [j for j, column in enumerate(self.schema_) if column.binning is not None]
        others = [j for j, column in enumerate(self.schema_) if column.binning is None]
        decoded = {}

        def decode(columns):  # binned columns draw from rng, in column order
            for j in columns:
                decoded[j] = self._decode_column(j, codes[:, j], rng)

        if (binned and others and codes.shape[0] >= _PARALLEL_DECODE_ROWS
                and n_threads(n_jobs) > 1):
            # the binned columns' draws (numpy, mostly without the GIL) in a
            # thread of their own while this one gathers the others: the same
            # draws in the same order, so the same values
            with ThreadPoolExecutor(max_workers=1,
                                    initializer=leave_signals_to_main_thread) as executor:
                drawing = executor.submit(decode, binned)
                decode(others)
                drawing.result()
        else:
            decode(range(len(self.schema_)))
        data = {column.name: decoded[j] for j, column in enumerate(self.schema_)}
        # copy=False: the columns stay apart, not copied into one block per dtype
        frame = pd.DataFrame(data, index=pd.RangeIndex(codes.shape[0]), copy=False)
        if isinstance(X, pd.DataFrame):  # named codes (set_output(transform="pandas"))
            frame.index = X.index  # keep their index, as transform gave it
        frame.columns = pd.Index(self.schema_.names,
                                 dtype=getattr(self, "_columns_dtype", None))
        if labelled and self.schema_.labels():  # the input's number labels
            frame.columns = output_labels(self.schema_)
        if self._output_frame:
            return arrow_restored(frame, getattr(self, "_arrow_dtypes", {}))
        return frame.to_numpy()

    def _decode_column(self, j, col, rng):
        column = self.schema_[j]
        if self.schema_.missing == "absent":  # any cell may be empty: fixed nullable dtype
            column = replace(column, dtype=nullable_dtype(column.dtype))
        n_real = len(column.values)
        n_values = int(self.schema_.n_values[j])
        # the range from two reductions: a large sample's column is read twice, not
        # rewritten into masks (the masks only when some code needs one)
        low, high = (int(col.min()), int(col.max())) if col.size else (0, -1)
        lowest = 0 if self.schema_.missing == "category" else -1
        if low < lowest or high >= n_values:
            bad = (col < lowest) | (col >= n_values)
            raise ValueError(f"Code {col[bad][0]} is out of range for column {column.name!r} "
                             f"(valid: 0..{n_values - 1}).")

        def outside(n):  # codes below 0 or from n on; None when the range shows none
            return (col < 0) | (col >= n) if low < 0 or high >= n else None

        mask = outside(n_real)
        if mask is None and column.binning is not None:
            mask = np.zeros(col.shape, dtype=bool)
        if column.binning is not None and column.binning.is_text:
            values, mask = decode_text_binning(col, column.binning, rng)
            return restore_dtype(values, mask, column)
        if column.binning is not None:
            values = decode_binning(np.where(mask, 0, col), column.binning, rng)
            return pd.Series(_restore_numeric(values, mask, column.dtype))
        decoded = column.decoded_values  # the values, then the other label
        n_decoded = len(decoded)
        lookup = np.empty(n_decoded + 1, dtype=object)
        lookup[:n_decoded] = decoded
        lookup[n_decoded] = None
        if column.other and column.other_label is not None:
            mask = outside(n_decoded)
        index = col if mask is None else np.where(mask, n_decoded, col)
        dtype = column.output_dtype
        if (isinstance(dtype, np.dtype) and dtype.kind in "iub") or (  # nullable if any is
                isinstance(dtype, pd.IntervalDtype)  # missing; intervals of integers: of floats
                and np.dtype(dtype.subtype).kind in "iu"):
            return restore_dtype(lookup[index], np.zeros(col.shape, dtype=bool)
                                 if mask is None else mask, column)
        # the dtype does not depend on the cells: restore the distinct values, then gather
        last = np.zeros(n_decoded + 1, dtype=bool)
        last[n_decoded] = True
        distinct = restore_dtype(lookup, last, column)
        if isinstance(distinct.dtype, np.dtype):  # numpy-backed (object): numpy's gather,
            # without the missing-value scan pandas' array construction makes
            return pd.Series(distinct.to_numpy().take(index), dtype=distinct.dtype, copy=False)
        return pd.Series(distinct.array.take(index), dtype=distinct.dtype, copy=False)

    # --------------------------------------------------- public metadata
    def public_schema(self, keep=None):
        """The publishable :class:`~dpsynth.schema.Schema`: declared values and ``keep``.

        Parameters
        ----------
        keep : array-like of bool of shape (n_attributes,), default=None
            Attributes released by a DP mechanism.  ``None`` keeps every
            value (only for an encoder whose values are all public).

        Returns
        -------
        dpsynth.schema.Schema
        """
        check_is_fitted(self, "schema_")
        if keep is None:
            keep = np.ones(self.schema_.n_attributes, dtype=bool)
        return self.schema_.restrict(keep)[0]

    @classmethod
    def from_schema(cls, schema, **params):
        """A fitted encoder for a :class:`~dpsynth.schema.Schema` (or its JSON form).

        ``params`` set the encoder's parameters (e.g. ``handle_unknown``,
        ``no_missing``); ``missing`` always comes from the schema.
        """
        if not isinstance(schema, Schema):
            schema = Schema.from_json(schema)
        encoder = cls(**params).set_params(missing=schema.missing)
        encoder.epsilon_spent_ = 0.0
        encoder.rho_spent_ = 0.0
        encoder.spends_ = ()
        encoder.delta_spent_ = 0.0
        encoder._set_schema(schema, True)
        encoder._not_null = _check_no_missing(encoder.no_missing, schema.names)
        return encoder

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.transformer_tags.preserves_dtype = []
        return tags


def _distinct_values(series):
    """What ``numeric="auto"`` reads of a column: its :func:`values_and_weights` (the
    fit depends on the multiset of the values only, so this is the fit on every row,
    at the cost of one hashing pass, and what the Dask engine reads from its summed
    value counts); a boolean column and None."""
    dtype = series.dtype
    if _is_bool(dtype):
        return series, None
    if pd.api.types.is_numeric_dtype(dtype) or is_temporal(dtype):
        counts = series.value_counts(dropna=True)
        return values_and_weights(series.name, dtype, counts, int(series.isna().sum()))
    codes, uniques = factorize(series)  # text: each distinct object hashed once
    present = codes >= 0
    counts = pd.Series(np.bincount(codes[present], minlength=len(uniques)),
                       index=pd.Index(uniques, dtype=object))
    return values_and_weights(series.name, dtype, counts, int((~present).sum()))


def values_and_weights(name, dtype, counts, n_missing):
    """A column's distinct values (a Series of ``dtype``, one entry more for the
    ``n_missing`` records without a value) and the records holding each, from its
    value counts (``counts``: a Series indexed by value)."""
    index = counts.index  # object values kept as objects: no dtype inferred from them
    values = (pd.Series(np.asarray(index, dtype=object), name=name, dtype=object)
              if index.dtype == object else pd.Series(index.array, name=name)).astype(dtype)
    weights = counts.to_numpy(dtype=np.float64)
    if n_missing:  # the records without a value, one entry (counted by numeric="auto")
        values = pd.concat([values, pd.Series([None], name=name).astype(dtype)],
                           ignore_index=True)
        weights = np.append(weights, float(n_missing))
    return values, weights


def _with_places(column, cells):
    """``column`` whose float binning decodes its values at decimals drawn from the
    DP shares of its numbers' decimals (:func:`binning_places`), when they hold more
    than one number of decimals up to the binning's."""
    binning = column.binning
    places = None if binning is None else binning_places(cells, binning)
    return column if places is None else replace(column, binning=replace(binning,
                                                                         places=places))


def _is_bool(dtype):
    """Whether ``dtype`` is a boolean dtype (numpy ``bool`` or pandas ``boolean``)."""
    return (not isinstance(dtype, pd.CategoricalDtype)
            and pd.api.types.is_bool_dtype(dtype))


def _is_text(dtype):
    """Whether a column of ``dtype`` holds text (its other value then decodes to a text)."""
    if isinstance(dtype, pd.CategoricalDtype):
        categories = dtype.categories
        return categories is None or _is_text(categories.dtype)
    return isinstance(dtype, pd.StringDtype) or dtype == object


def _check_other_label(label, name, dtype):
    """``label`` as the other label of column ``name`` of ``dtype``, validated."""
    where = f"other_label[{name!r}]"
    label = python_scalar(label)
    if label is None:
        return None
    if is_missing_scalar(label):
        raise ValueError(f"{where} is a missing value; give None to decode the other value "
                         "as missing.")
    if isinstance(dtype, pd.CategoricalDtype):
        dtype = dtype.categories.dtype
    if isinstance(dtype, pd.StringDtype):
        ok = isinstance(label, str)
    elif dtype == object:
        ok = True
    elif pd.api.types.is_bool_dtype(dtype):
        ok = isinstance(label, bool)
    elif pd.api.types.is_integer_dtype(dtype):
        ok = isinstance(label, Integral) and not isinstance(label, bool)
        if ok:
            info = np.iinfo(getattr(dtype, "numpy_dtype", dtype))
            ok = info.min <= label <= info.max
    elif pd.api.types.is_float_dtype(dtype):
        ok = isinstance(label, Real) and not isinstance(label, bool)
    elif pd.api.types.is_datetime64_any_dtype(dtype):
        ok = isinstance(label, pd.Timestamp)
    elif pd.api.types.is_timedelta64_dtype(dtype):
        ok = isinstance(label, pd.Timedelta)
    else:
        ok = True
    if not ok:
        raise TypeError(f"{where} = {label!r:.60} does not fit the column's dtype {dtype}; "
                        "give a value of that type, or None to decode it as missing.")
    value_to_json(label, name)  # it is written to release files
    return label


def _other_labels(other_label, frame, declared, binners):
    """``{column: label}`` of the columns whose values are not declared (public:
    from the parameter and the dtypes only)."""
    names = list(frame.columns)
    default, per_column = other_label, {}
    if isinstance(other_label, dict):
        default, per_column = DEFAULT_OTHER_LABEL, other_label
        unknown = [c for c in per_column if c not in names]
        if unknown:
            raise ValueError(f"other_label names column(s) {unknown} that are not in X; X "
                             f"has columns {names}.")
        fixed = [c for c in per_column if c in declared or c in binners]
        if fixed:
            raise ValueError(f"other_label names column(s) {fixed} whose values are "
                             "declared (categories or bins): they have no other value; "
                             "remove them from other_label.")
    labels = {}
    for name in names:
        if name in declared or name in binners:
            continue
        dtype = frame[name].dtype
        if name in per_column:
            labels[name] = _check_other_label(per_column[name], name, dtype)
        elif default is not None and _is_text(dtype):
            labels[name] = _check_other_label(default, name, dtype)
        else:
            labels[name] = None
    return labels


def _check_no_missing(no_missing, names):
    """The columns declared without missing values (``no_missing`` validated)."""
    if no_missing is None:
        return frozenset()
    bad = [c for c in no_missing if not isinstance(c, str)]
    if bad:
        raise TypeError(f"no_missing must be a list of column names; got {bad[0]!r}.")
    unknown = [c for c in no_missing if c not in names]
    if unknown:
        raise ValueError(f"no_missing names column(s) {unknown} that are not in X; X has "
                         f"columns {names}.")
    return frozenset(no_missing)


def _missing_in_no_missing(name):
    return ValueError(f"Column {name!r} has missing values, but `no_missing` declares it "
                      "has none; remove it from `no_missing` or fill its missing values.")


def _bin_column(column, series, missing_code, clip_infinite=False):
    dtype = series.dtype
    if column.binning.is_text and is_text_dtype(dtype):
        return encode_text_binning(series, column.binning, column.name, missing_code)
    if (is_text_dtype(dtype) and pd.api.types.is_numeric_dtype(column.dtype)
            and not pd.api.types.is_bool_dtype(column.dtype)):
        # a text column found to hold numbers (text_numbers="dp"): fields that are
        # no number are missing
        col = encode_binning(parse_numbers(series), column.binning, column.name)
        col[col < 0] = missing_code
        return col
    if not is_temporal(dtype) and (pd.api.types.is_bool_dtype(dtype)
                                   or not pd.api.types.is_numeric_dtype(dtype)):
        raise TypeError(f"Column {column.name!r} is binned but has dtype {dtype}; give it as "
                        "numbers.")
    col = encode_binning(numbers_of(series), column.binning, column.name, clip_infinite)
    col[col < 0] = missing_code
    return col
