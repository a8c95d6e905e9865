"""Evaluation of synthetic data against real data: summary tables and an HTML report.

:func:`fidelity_summary` computes the numbers (mean TVD of k-way marginals,
the NIST k-marginal score, the Synthetic Data Showcase error report by
combination length, per-column distances); :func:`write_report` writes them
as one self-contained HTML page, with plots when matplotlib is installed
(from the source tree: ``pip install -e ".[plots]"``).  :func:`binned_view` puts binned numeric
columns on the same footing in both tables first.

Everything here is computed from the *real* data: these numbers are not a
differentially private release.
"""

import base64
import datetime
import html
import io
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._version import __version__
from .accounting import PrivacySpent
from .metrics import (aggregate_error_report, combination_counts, k_marginal_score,
                      marginal_tvd, numeric_quantiles, quality_report, value_shares,
                      wasserstein_numeric)
from .utils._files import atomic_write
from .utils._progress import log_progress
from .utils._numbers import parse_formatted
from .utils._temporal import is_temporal, parse_dates, temporal_numbers

__all__ = ["FidelitySummary", "binned_view", "fidelity_summary", "privacy_curve", "write_report"]

_MISSING_LABEL = "(missing)"
_OTHER_LABEL = "(other)"
_ABSENT_FLOOR = 0.5  # where the count plots draw a combination absent from one table
_MAX_VALUES = 15  # values per column shown in the distribution plots
_MAX_POINTS = 50_000  # points per length in the count plots


def binned_view(X, encoder):
    """Replace the values of binned columns by their bin labels.

    Synthetic values of a binned column are drawn inside their bins, so real
    and synthetic values only match bin by bin.  Comparing tables through
    this view measures the fidelity that the synthesizer controls.

    Parameters
    ----------
    X : DataFrame
        Must contain every column ``encoder`` was fitted on (other columns
        are kept as they are).
    encoder : TableEncoder
        A fitted encoder, e.g. ``synthesizer.aggregates_.encoder`` or one
        fitted with public ``bounds`` only.

    Returns
    -------
    DataFrame
        A copy of ``X`` in which each binned column is an ordered
        categorical of bin labels (``"[0, 3]"``, ...); missing values stay
        missing.
    """
    names = list(encoder.feature_names_in_)
    lenient = type(encoder).from_schema(encoder.schema_, handle_unknown="missing")
    codes = lenient._transform(X[names])
    view = X.copy()
    for j, column in enumerate(encoder.schema_):
        if column.binning is None:
            continue
        labels = np.array(list(column.values) + [None], dtype=object)
        # the missing code is len(values) ("category") or -1 ("absent"): both -> None
        view[column.name] = pd.Categorical(labels[codes[:, j]],
                                           categories=list(column.values), ordered=True)
    return view


@dataclass(frozen=True, repr=False)
class FidelitySummary:
    """Result of :func:`fidelity_summary`.

    Attributes
    ----------
    tvd : Series
        Mean total variation distance of the k-way marginals, indexed by k.
    columns : DataFrame
        ``column`` and ``tvd`` (1-way), worst column first.
    k_marginal : float or None
        NIST CRC k-marginal score (0..1000) of the 2-way marginals, None with
        fewer than two scored columns.
    by_length : DataFrame
        :func:`~dpsynth.metrics.aggregate_error_report` by combination length
        (missing values count as a value).
    real_counts, synth_counts : dict
        Combination counts of both tables up to the reporting length.
    n_real, n_synth : int
        Numbers of records.
    numeric : DataFrame
        Numeric columns on their original scale: ``column`` and ``W1 /
        range`` (:func:`~dpsynth.metrics.wasserstein_numeric`), worst first.
    quantiles : DataFrame
        :func:`~dpsynth.metrics.numeric_quantiles` of those columns.
    special_shares : DataFrame
        :func:`~dpsynth.metrics.value_shares` of the special and frequent
        values of binned columns (with ``encoder=``).
    quality : dict
        :func:`~dpsynth.metrics.quality_report` of the tables on their
        original scale (SDMetrics-style Column Shapes and Column Pair Trends).
    sampled : dict
        ``{k: (n_compared, n_sets)}`` for each length whose marginals and
        combinations were compared on a seeded sample of the sets of k
        columns (see ``max_subsets`` of :func:`fidelity_summary`); empty when
        every set was compared.
    """

    tvd: pd.Series
    columns: pd.DataFrame
    k_marginal: object
    by_length: pd.DataFrame
    real_counts: dict
    synth_counts: dict
    n_real: int
    n_synth: int
    numeric: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=["column", "W1 / range"]))
    quantiles: pd.DataFrame = field(default_factory=pd.DataFrame)
    special_shares: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=["column", "value", "real", "synthetic", "difference"]))
    quality: dict = None
    sampled: dict = field(default_factory=dict)

    def sampling_note(self):
        """One sentence on the lengths compared on a sample of column sets, or ""."""
        if not self.sampled:
            return ""
        parts = [f"{k}-way: {n:,} of the {total:,} sets of {k} columns"
                 for k, (n, total) in self.sampled.items()]
        return ("compared on a seeded uniform sample of the column sets ("
                + "; ".join(parts) + ")")

    def __repr__(self):
        tvd = ", ".join(f"{k}-way {v:.4f}" for k, v in self.tvd.items())
        score = "n/a" if self.k_marginal is None else f"{self.k_marginal:.1f}"
        return f"FidelitySummary(mean TVD: {tvd}; k-marginal score: {score})"


def _on_edge_scale(real, synth, encoder):
    """``real`` and ``synth`` with each binned column of ``encoder`` as the numbers its
    public edges cut: dates written as text parsed in their format, "12.5%" or
    "$1,234.56" as numbers, instants and durations (``datetime64``, ``timedelta64``)
    as counts of the unit of the column's public dtype; the other columns as they are."""
    readers = {}
    for column in encoder.schema_:
        binning, name = column.binning, column.name
        if binning is None or name not in real.columns:
            continue
        if binning.date_format is not None:  # dates written as text: their numbers
            def read(series, fmt=binning.date_format):
                return parse_dates(series, fmt)
        elif binning.number_format is not None:  # "12.5%", "$1,234.56": the numbers
            def read(series, fmt=binning.number_format):
                return parse_formatted(series, fmt)
        elif is_temporal(column.dtype):  # instants and durations: counts of its unit
            def read(series, dtype=column.dtype):
                if not is_temporal(series.dtype):
                    return series  # refused by the metrics, naming the column
                return temporal_numbers(series.astype(dtype))
        else:
            continue
        readers[name] = read
    if not readers:
        return real, synth
    out = []
    for frame in (real, synth):
        frame = frame.copy()  # once, whatever the number of columns read
        for name, read in readers.items():
            frame[name] = read(frame[name])
        out.append(frame)
    return tuple(out)


def _numeric_facts(real, synth, encoder):
    """W1 / range, quantiles and special-value shares on the original scale.

    With an encoder: its binned columns, normalised by the range of their
    public edges, with the shares of their point values (a column of dates
    written as text compared as the numbers it is binned in).  Without: every
    numeric column of both tables, normalised by the real range.
    """
    ranges, points, columns = {}, {}, None
    if encoder is not None:
        real, synth = _on_edge_scale(real, synth, encoder)
        columns = []
        for column in encoder.schema_:
            binning = column.binning
            if binning is None or column.name not in real.columns:
                continue
            edges = binning.edge_array
            ranges[column.name] = (edges[0], edges[-1] - 1 if binning.integer else edges[-1])
            if binning.points:
                points[column.name] = list(binning.points)
            columns.append(column.name)
    w1 = wasserstein_numeric(real, synth, columns=columns, ranges=ranges)
    numeric = pd.DataFrame({"column": list(w1.index), "W1 / range": w1.to_numpy()})
    numeric = numeric.sort_values("W1 / range", ascending=False, kind="stable")
    quantiles = numeric_quantiles(real, synth, columns=list(w1.index))
    shares = value_shares(real, synth, points)
    return numeric.reset_index(drop=True), quantiles, shares


#: Sets of k columns compared per length by :func:`fidelity_summary`: past it, a seeded
#: sample (a table of 300 columns has 4.5 million sets of 3 columns).
MAX_SUBSETS = 5_000


def fidelity_summary(real, synth, *, reporting_length=3, encoder=None,
                     max_subsets=MAX_SUBSETS):
    """Fidelity of a synthetic table to a real one, from several angles.

    Parameters
    ----------
    real, synth : DataFrame
        Tables with the same columns, compared value by value (bin numeric
        columns first, e.g. with :func:`binned_view`, or pass ``encoder``).
    reporting_length : int, default=3
        Longest marginal / combination length compared (clamped to the
        number of columns).
    encoder : TableEncoder, default=None
        With a fitted encoder (e.g. ``aggregates.encoder``), ``real`` and
        ``synth`` are on their original scale: their binned columns are
        compared value by value (Wasserstein-1 / range, quantiles, shares of
        special values) and then bin by bin with the other columns.
        Without one, numeric columns of the tables get the value-level
        comparison too.
    max_subsets : int or None, default=MAX_SUBSETS
        For a length ``k`` with more sets of ``k`` columns than this, the
        marginals, the k-marginal score and the combination counts are
        compared on the same uniform sample of ``max_subsets`` of them,
        drawn with a fixed seed (``summary.sampled`` says which lengths).
        ``None`` compares every set, however many.

    Returns
    -------
    FidelitySummary
        Not a differentially private release: it uses the real data.
    """
    if not isinstance(real, pd.DataFrame) or not isinstance(synth, pd.DataFrame):
        raise TypeError("real and synth must be DataFrames.")
    numeric, quantiles, shares = _numeric_facts(real, synth, encoder)
    quality = quality_report(real, synth)
    if encoder is not None:
        real, synth = binned_view(real, encoder), binned_view(synth, encoder)
    if int(reporting_length) < 1:
        raise ValueError(f"reporting_length must be >= 1; got {reporting_length!r}.")
    length = min(int(reporting_length), real.shape[1])
    if max_subsets is not None and (not isinstance(max_subsets, numbers.Integral)
                                    or isinstance(max_subsets, bool) or max_subsets < 1):
        raise ValueError(f"max_subsets must be a positive integer or None; got "
                         f"{max_subsets!r}.")
    sample = {"max_subsets": max_subsets, "random_state": 0}
    sampled = {k: (max_subsets, math.comb(real.shape[1], k)) for k in range(1, length + 1)
               if max_subsets is not None and math.comb(real.shape[1], k) > max_subsets}
    total = length + 3
    log_progress(0, total, "evaluation", "comparing the marginals")
    tvd = {}
    for k in range(1, length + 1):
        tvd[k] = marginal_tvd(real, synth, k, **sample)
        log_progress(k, total, "evaluation", f"mean TVD of the {k}-way marginals")
    tvd = pd.Series(tvd, name="mean TVD")
    tvd.index.name = "k"
    _, details = marginal_tvd(real, synth, 1, return_details=True)
    columns = pd.DataFrame({"column": [c[0] for c in details["columns"]],
                            "tvd": details["tvd"]})
    columns = columns.sort_values("tvd", ascending=False, kind="stable").reset_index(drop=True)
    try:
        k_marginal = k_marginal_score(real, synth, **sample)
    except ValueError:  # fewer than two columns left to pair
        k_marginal = None
    log_progress(length + 1, total, "evaluation", "k-marginal score")
    synth = synth[list(real.columns)]
    real_counts = combination_counts(real, length, missing="category", **sample)
    synth_counts = combination_counts(synth, length, missing="category", **sample)
    log_progress(length + 2, total, "evaluation", "combination counts")
    by_length = aggregate_error_report(real_counts, synth_counts, length,
                                       missing="category").by_length
    log_progress(total, total, "evaluation", "combination errors")
    return FidelitySummary(tvd=tvd, columns=columns, k_marginal=k_marginal,
                           by_length=by_length, real_counts=real_counts,
                           synth_counts=synth_counts, n_real=len(real), n_synth=len(synth),
                           numeric=numeric, quantiles=quantiles, special_shares=shares,
                           quality=quality, sampled=sampled)


# ------------------------------------------------------------------ plots
def _figure_class():
    """matplotlib's ``Figure`` (no pyplot, no global state), or None."""
    try:
        from matplotlib.figure import Figure  # optional dependency: plots only
    except ImportError:
        return None
    return Figure


def _png(figure):
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=96)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="" src="data:image/png;base64,{data}">'


def _plot_counts(Figure, summary):
    """Real vs synthetic combination counts, one log-log panel per length."""
    lengths = list(summary.tvd.index)
    figure = Figure(figsize=(4.2 * len(lengths), 4.0))
    scale = summary.n_real / summary.n_synth
    rng = np.random.default_rng(0)
    for i, k in enumerate(lengths):
        ax = figure.add_subplot(1, len(lengths), i + 1)
        combos = [c for c in summary.real_counts if len(c) == k]
        combos += [c for c in summary.synth_counts
                   if len(c) == k and c not in summary.real_counts]
        x = np.array([summary.real_counts.get(c, 0) for c in combos], dtype=float)
        y = np.array([summary.synth_counts.get(c, 0) for c in combos], dtype=float) * scale
        if len(x) > _MAX_POINTS:
            keep = rng.choice(len(x), _MAX_POINTS, replace=False)
            x, y = x[keep], y[keep]
        both = (x > 0) & (y > 0)
        groups = [(both, "in both", "#1f77b4"),
                  (y == 0, "suppressed (real only)", "#ff7f0e"),
                  (x == 0, "fabricated (synthetic only)", "#d62728")]
        for mask, label, color in groups:
            ax.scatter(np.maximum(x[mask], _ABSENT_FLOOR), np.maximum(y[mask], _ABSENT_FLOOR),
                       s=6, alpha=0.5, color=color, label=f"{label}: {int(mask.sum())}",
                       linewidths=0)
        top = max(float(x.max(initial=1)), float(y.max(initial=1))) * 1.5
        ax.plot([_ABSENT_FLOOR, top], [_ABSENT_FLOOR, top], color="grey", linewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(_ABSENT_FLOOR * 0.8, top)
        ax.set_ylim(_ABSENT_FLOOR * 0.8, top)
        ax.set_title(f"length {k}")
        ax.set_xlabel("real count")
        if i == 0:
            ax.set_ylabel("synthetic count (scaled to the real size)")
        ax.legend(loc="upper left", fontsize=7, markerscale=2)
    figure.tight_layout()
    return _png(figure)


def _plot_errors(Figure, summary):
    """Bars by length: mean TVD, mean absolute count error, suppressed/fabricated %."""
    by_length = summary.by_length
    lengths = by_length["length"].to_numpy()
    figure = Figure(figsize=(12, 3.4))
    ax = figure.add_subplot(1, 3, 1)
    ax.bar(summary.tvd.index, summary.tvd.to_numpy(), color="#1f77b4")
    ax.set_title("mean TVD of k-way marginals")
    ax.set_xlabel("k")
    ax = figure.add_subplot(1, 3, 2)
    ax.bar(lengths, by_length["mean_abs_error"].to_numpy(), color="#9467bd")
    ax.set_title("mean |synthetic - real| count")
    ax.set_xlabel("combination length")
    ax = figure.add_subplot(1, 3, 3)
    width = 0.38
    ax.bar(lengths - width / 2, by_length["suppressed_pct"].to_numpy(), width,
           color="#ff7f0e", label="suppressed")
    ax.bar(lengths + width / 2, by_length["fabricated_pct"].to_numpy(), width,
           color="#d62728", label="fabricated")
    ax.set_title("% of the real combinations")
    ax.set_xlabel("combination length")
    ax.legend(fontsize=8)
    for ax in figure.axes:
        ax.set_xticks(lengths)
    figure.tight_layout()
    return _png(figure)


def _value_order(real, synth):
    """Values to show for one column: ordered categories, sorted values or by frequency."""
    frequencies = real.value_counts(dropna=True)
    if isinstance(real.dtype, pd.CategoricalDtype):
        values = list(real.dtype.categories)
    else:
        values = list(pd.unique(pd.concat([real, synth], ignore_index=True).dropna()))
        try:
            values = sorted(values)
        except TypeError:
            values = sorted(values, key=lambda v: -frequencies.get(v, 0))
    if len(values) > _MAX_VALUES:
        top = set(frequencies.index[:_MAX_VALUES].tolist())
        values = [v for v in values if v in top]
    return values


def _proportions(series, values):
    """Shares of ``values`` in ``series``, then ``(other)`` and ``(missing)`` if present."""
    n = max(len(series), 1)
    counts = series.value_counts(dropna=True)
    shares = [counts.get(v, 0) / n for v in values]
    other = (series.notna().sum() - sum(counts.get(v, 0) for v in values)) / n
    return shares, other, series.isna().sum() / n


def _plot_columns(Figure, real, synth, names):
    """Real vs synthetic distribution of each named column, as grouped bars."""
    n_cols = min(3, len(names))
    n_rows = -(-len(names) // n_cols)
    figure = Figure(figsize=(4.4 * n_cols, 3.0 * n_rows))
    for i, name in enumerate(names):
        ax = figure.add_subplot(n_rows, n_cols, i + 1)
        values = _value_order(real[name], synth[name])
        real_shares, real_other, real_missing = _proportions(real[name], values)
        synth_shares, synth_other, synth_missing = _proportions(synth[name], values)
        labels = [str(v) for v in values]
        for label, r, s in ((_OTHER_LABEL, real_other, synth_other),
                            (_MISSING_LABEL, real_missing, synth_missing)):
            if r > 0 or s > 0:
                labels.append(label)
                real_shares.append(r)
                synth_shares.append(s)
        position = np.arange(len(labels))
        ax.bar(position - 0.2, real_shares, 0.4, color="#7f7f7f", label="real")
        ax.bar(position + 0.2, synth_shares, 0.4, color="#1f77b4", label="synthetic")
        ax.set_xticks(position)
        ax.set_xticklabels(labels, rotation=45 if len(labels) > 5 else 0,
                           ha="right" if len(labels) > 5 else "center", fontsize=7)
        ax.set_title(str(name), fontsize=9)
        if i == 0:
            ax.legend(fontsize=7)
    figure.tight_layout()
    return _png(figure)


def _plot_numeric(Figure, real, synth, summary, encoder, bins=40):
    """Histograms of numeric columns on their original scale, real vs synthetic.

    Point values (special or frequent) are drawn as separate bars of their
    share, so a lost spike shows; the rest as density histograms over the
    column's range.
    """
    names = summary.numeric["column"].tolist()
    if not names:
        return ""
    n_cols = min(3, len(names))
    n_rows = -(-len(names) // n_cols)
    figure = Figure(figsize=(4.4 * n_cols, 3.0 * n_rows))
    shares = summary.special_shares
    for i, name in enumerate(names):
        ax = figure.add_subplot(n_rows, n_cols, i + 1)
        x = real[name].to_numpy(dtype=np.float64, na_value=np.nan)
        y = synth[name].to_numpy(dtype=np.float64, na_value=np.nan)
        x, y = x[~np.isnan(x)], y[~np.isnan(y)]
        points = shares.loc[shares["column"] == name, "value"].to_numpy(dtype=np.float64)
        low = min(x.min(initial=np.inf), y.min(initial=np.inf))
        high = max(x.max(initial=-np.inf), y.max(initial=-np.inf))
        if not np.isfinite(low) or not np.isfinite(high):
            continue
        edges = np.linspace(low, high if high > low else low + 1, bins + 1)
        for values, color, label in ((x, "#7f7f7f", "real"), (y, "#1f77b4", "synthetic")):
            rest = values[~np.isin(values, points)]
            weights = np.full(rest.size, 1.0 / max(values.size, 1))
            ax.hist(rest, bins=edges, weights=weights, histtype="step", color=color,
                    label=label, linewidth=1.4)
        row = shares[shares["column"] == name]
        for _, share in row.iterrows():
            ax.plot([share["value"]] * 2, [0, share["real"]], color="#7f7f7f", linewidth=4,
                    alpha=0.6)
            ax.plot([share["value"]] * 2, [0, share["synthetic"]], color="#1f77b4",
                    linewidth=1.5)
        if len(row):
            ax.set_yscale("symlog", linthresh=1e-3)
        w1 = summary.numeric.set_index("column")["W1 / range"][name]
        ax.set_title(f"{name} (W1/range {w1:.4f})", fontsize=9)
        if i == 0:
            ax.legend(fontsize=7)
    figure.tight_layout()
    return _png(figure)


# ------------------------------------------------------------------- HTML
_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #222;
       max-width: 1180px; margin: 2em auto; padding: 0 1em; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 2em; }
.meta { color: #666; font-size: 0.9em; }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: 0.6em 1em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { padding: 0.25em 0.8em; border-bottom: 1px solid #e5e5e5; text-align: right; }
th { background: #f5f5f5; }
td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; }
.caption { color: #555; font-size: 0.85em; }
"""


def _table(frame, digits=4):
    return frame.to_html(index=False, border=0, na_rep="",
                         float_format=lambda v: f"{v:.{digits}g}")


_BUDGET_ROWS = [
    ("epsilon", "total epsilon of the release"),
    ("delta", "delta of the (epsilon, delta) guarantee"),
    ("rho", "zCDP rho of the marginals (mu**2 / 2 with Gaussian-DP accounting)"),
    ("mu", "Gaussian-DP mu of the marginals (workload release)"),
    ("epsilon_records", "epsilon of the DP record count (Laplace)"),
    ("epsilon_marginals", "epsilon of the marginals (before the conversion to rho or mu)"),
    ("percentile_epsilon", "epsilon of the DP contribution bounds (within the marginals)"),
    ("epsilon_binning", "epsilon of the encoder's DP steps: bin edges, frequent values, "
                        "within-bin histograms (added to the total)"),
    ("delta_binning", "delta of the DP frequent values (added to the total)"),
    ("conversion_delta", "delta of the conversion to rho or mu"),
    ("conversion", "the conversion to (epsilon, delta)"),
    ("public_universe", "every column's values declared (no budget for the universe)"),
]


def _public_columns(release):
    """What the release published about each column, from its public schema only."""
    rows = []
    for column in release.schema:
        if column.binning is not None:
            edges = column.binning.edges
            kind = "numeric, binned"
            source = f"public bins over [{float(edges[0]):g}, {float(edges[-1]):g}]"
            if column.binning.special:
                source += "; declared special values " + ", ".join(
                    f"{v:g}" for v in column.binning.special)
            if column.binning.frequent:
                source += "; frequent values released by DP " + ", ".join(
                    f"{v:g}" for v in column.binning.frequent)
            if column.binning.inverse == "dp_histogram":
                source += "; DP within-bin histogram"
            if column.leaked:
                source = "LEAKED (not DP): " + source
        else:
            kind = "categorical"
            source = ("declared (public)" if column.declared
                      else "released by the DP mechanism")
        rows.append((column.name, kind, source, len(column.values)))
    return pd.DataFrame(rows, columns=["column", "kind", "values", "number of values"])


def _privacy_warnings(privacy, release):
    """The PrivacyLeakWarning messages a release carries (schema and privacy notes)."""
    messages = []
    if release is not None:
        for name, notes in release.schema.leaks.items():
            messages.extend(f"{name}: {note}" if name not in note else note
                            for note in notes)
    for key in ("warnings", "privacy_leak_warnings"):
        value = privacy.get(key) if privacy is not None else None
        if isinstance(value, str):
            messages.append(value)
        elif isinstance(value, (list, tuple)):
            messages.extend(str(v) for v in value)
    return list(dict.fromkeys(messages))


def _as_spent(privacy):
    """``privacy`` as a :class:`~dpsynth.accounting.PrivacySpent`, or None if it is not one."""
    if isinstance(privacy, PrivacySpent):
        return privacy
    try:
        return PrivacySpent.from_dict(dict(privacy))
    except (ValueError, TypeError):
        return None


def privacy_curve(spent, n_points=60):
    """``(deltas, epsilons)`` of the release's privacy curve ``epsilon_at(delta)``.

    From just above the delta spent directly (which no epsilon can buy back)
    or ``1e-4`` times the reported delta, to ``max(1e-2, 10 delta)``.
    """
    fixed = spent.delta_floor
    top = max(1e-2, 10.0 * spent.delta)
    low = max(fixed * 1.05, spent.delta * 1e-4, 1e-300)
    if low >= top:
        return np.empty(0), np.empty(0)
    deltas = np.geomspace(low, top, n_points)
    epsilons = np.array([spent.epsilon_at(float(d)) for d in deltas])
    keep = np.isfinite(epsilons)
    return deltas[keep], epsilons[keep]


def _plot_privacy_curve(Figure, spent):
    """epsilon against delta for the whole release, the reported guarantee marked."""
    deltas, epsilons = privacy_curve(spent)
    figure = Figure(figsize=(5.5, 3.6))
    ax = figure.add_subplot(1, 1, 1)
    ax.plot(deltas, epsilons, color="#1f77b4", label="epsilon_at(delta)")
    ax.scatter([spent.delta], [spent.epsilon], color="#d62728", zorder=3,
               label=f"reported: epsilon={spent.epsilon:g}, delta={spent.delta:.3g}")
    ax.set_xscale("log")
    ax.set_xlabel("delta")
    ax.set_ylabel("epsilon")
    ax.set_title("privacy curve of the release")
    ax.legend(fontsize=7)
    figure.tight_layout()
    return _png(figure)


def _ledger_table(spent):
    rows = spent.ledger()
    frame = pd.DataFrame(rows, columns=["name", "mechanism", "scale", "epsilon", "sensitivity",
                                        "rho", "delta", "share", "share_of"])
    frame = frame.rename(columns={"scale": "noise scale (sigma or Laplace b)",
                                  "share": "share of the budget", "share_of": "budget"})
    return frame.astype(object).where(frame.notna(), "")


def _privacy_section(privacy, release=None, Figure=None):
    """The privacy of the release: epsilon, delta, budget split, what was public."""
    rows = [(label, name, privacy[name]) for name, label in _BUDGET_ROWS if name in privacy]
    overview = pd.DataFrame(rows, columns=["", "parameter", "value"]).astype(
        {"value": object})
    per_length = {name: dict(privacy[name]) for name in
                  ("contribution_bounds", "noise_scales", "thresholds", "n_candidates")
                  if isinstance(privacy.get(name), Mapping)}
    parts = ["<h2>Privacy</h2>",
             "<p>The guarantee of the DP release the synthetic data come from "
             "(sampling spends no budget), and how the budget was split.</p>",
             _table(overview)]
    if per_length:
        frame = pd.DataFrame(per_length).rename_axis("length").reset_index()
        parts += ["<p>By combination length:</p>", _table(frame)]
    spent = _as_spent(privacy)
    if spent is not None and spent.mechanisms:
        points = sorted({spent.delta, *[d for d in (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9)
                                        if d < 1.0]}, reverse=True)
        curve = pd.DataFrame({"delta": points,
                              "epsilon": [spent.epsilon_at(float(d)) for d in points]})
        parts += ["<p>The whole release's privacy curve: the smallest epsilon its analysis "
                  "proves at each delta (exact for the Gaussian-DP part; pure-epsilon "
                  "mechanisms and the delta spent directly are composed on top, "
                  "conservatively; inf: below the delta spent directly).</p>",
                  _table(curve, digits=6)]
        if Figure is not None and len(privacy_curve(spent)[0]):
            parts.append(_plot_privacy_curve(Figure, spent))
        parts += ["<p>Every accounted mechanism (noise scale: the standard deviation of the "
                  "Gaussian noise drawn or the Laplace scale; share: of the zCDP/GDP budget "
                  "rho, or of the pure epsilon):</p>", _table(_ledger_table(spent))]
    warnings_shown = _privacy_warnings(privacy, release)
    if warnings_shown:
        items = "".join(f"<li>{html.escape(w)}</li>" for w in warnings_shown)
        parts += ['<div class="note"><b>PrivacyLeakWarning</b>: facts of this release '
                  "come from the data without an accounted DP mechanism, so the guarantee "
                  f"above does not cover them.<ul>{items}</ul></div>"]
    if release is not None:
        parts += ["<p>What was public about each column: declared values and bins cost "
                  "no privacy; other values were published only if the DP mechanism "
                  "released them.</p>", _table(_public_columns(release))]
    return "\n".join(parts)


def _quality_section(quality):
    """The SDMetrics-style scores: overall, by property, and per column."""
    if not quality:
        return ""
    scores = pd.DataFrame({
        "property": ["Column Shapes", "Column Pair Trends", "Overall"],
        "score": [quality["column_shapes"], quality["column_pair_trends"],
                  quality["score"]]})
    return "\n".join([
        "<h2>Quality report (SDMetrics-style)</h2>",
        "<p>Column Shapes: 1 - Kolmogorov-Smirnov statistic of each numeric column, "
        "1 - TVD of each categorical one; Column Pair Trends: 1 - |difference of the "
        "Pearson correlations| / 2 for numeric pairs, 1 - TVD of the 2-way table "
        "otherwise; the overall score is their mean (1 is best; the definitions of "
        "SDMetrics' QualityReport).</p>",
        _table(scores),
        "<p>Column Shapes by column:</p>",
        _table(quality["details"]["column_shapes"])])


def write_report(real, synth, path, *, reporting_length=3,
                 title="dpsynth evaluation report", privacy=None, release=None,
                 max_columns=12, encoder=None, max_subsets=MAX_SUBSETS):
    """Write a self-contained HTML page comparing a synthetic table with a real one.

    The page holds the metrics tables (mean TVD of k-way marginals, the NIST
    k-marginal score, the Synthetic Data Showcase errors by combination
    length, per-column TVD) and, when matplotlib is installed, plots
    embedded as PNG: real vs synthetic combination counts per length
    (log-log), errors by length, and the distributions of the columns that
    differ most.  Without matplotlib the page says so and shows the tables.

    Parameters
    ----------
    real, synth : DataFrame
        Tables with the same columns, compared value by value (bin numeric
        columns first, e.g. with :func:`binned_view`).
    path : str or path-like
        Where to write the HTML file (replaced atomically: complete or absent).
    reporting_length : int, default=3
        Longest marginal / combination length compared.
    title : str, default="dpsynth evaluation report"
    privacy : mapping, default=None
        ``privacy_spent_`` of the synthesizer or ``aggregates.privacy``,
        shown in a section of its own (epsilon, delta, budget split).
        Defaults to ``release.privacy`` when ``release`` is given.
    release : DPAggregates, default=None
        The release the synthetic table was sampled from: the privacy
        section then also says what was public about each column (read
        from its public schema only).
    max_columns : int, default=12
        Number of column distributions plotted (the largest 1-way TVD first).
    encoder : TableEncoder, default=None
        With a fitted encoder (e.g. ``release.encoder``), ``real`` and
        ``synth`` are on their original scale: the page then compares the
        binned columns value by value (histograms, quantiles, shares of
        special values, Wasserstein-1 / range), then bin by bin.
    max_subsets : int or None, default=MAX_SUBSETS
        As in :func:`fidelity_summary` (the page says when it sampled).

    Returns
    -------
    FidelitySummary
        The numbers shown on the page.
    """
    if privacy is None and release is not None:
        privacy = release.privacy
    summary = fidelity_summary(real, synth, reporting_length=reporting_length,
                               encoder=encoder, max_subsets=max_subsets)
    raw_real, raw_synth = real, synth
    if encoder is not None:
        real, synth = binned_view(real, encoder), binned_view(synth, encoder)
    Figure = _figure_class()
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    tvd = summary.tvd.rename_axis("k").reset_index()
    tvd["1 - TVD"] = 1.0 - tvd["mean TVD"]
    by_length = summary.by_length[["length", "n_reference", "n_other", "mean_abs_error",
                                   "suppressed_pct", "fabricated_pct", "preservation"]]
    by_length = by_length.rename(columns={"n_reference": "real combinations",
                                          "n_other": "synthetic combinations"})
    score = ("n/a (fewer than two columns)" if summary.k_marginal is None
             else f"{summary.k_marginal:.1f} / 1000")
    body = [
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="meta">{summary.n_real} real and {summary.n_synth} synthetic records, '
        f"{real.shape[1]} columns; dpsynth {__version__}, {stamp}</p>",
        '<p class="note">Every number on this page is computed from the real data, so '
        "it is <b>not</b> a differentially private release. Share the synthetic data "
        "or the DP aggregates, not this page.</p>",
    ]
    if Figure is None:
        body.append('<p class="note">matplotlib is not installed, so this page has '
                    "tables only: install matplotlib (from the dpsynth source tree: "
                    "<code>pip install -e \".[plots]\"</code>) to add the plots.</p>")
    if privacy is not None:
        body.append(_privacy_section(privacy, release, Figure))
    body += [
        "<h2>Marginals</h2>",
        "<p>Total variation distance (TVD) between real and synthetic k-way marginals, "
        "averaged over all sets of k columns: 0 means identical, 1 disjoint.</p>",
        _table(tvd),
        f"<p>NIST CRC k-marginal score (2-way): <b>{score}</b></p>",
        (f"<p class=\"note\">Marginals, score and combination counts "
         f"{html.escape(summary.sampling_note())}.</p>" if summary.sampled else ""),
        _quality_section(summary.quality),
        "<h2>Combination counts</h2>",
        "<p>Counts of every combination of column values up to length "
        f"{int(summary.tvd.index.max())}, as in the Synthetic Data Showcase evaluation: "
        "suppressed combinations exist only in the real data, fabricated ones only in "
        "the synthetic data (percentages of the real combinations).</p>",
        _table(by_length),
    ]
    if Figure is not None:
        body += [_plot_counts(Figure, summary),
                 f'<p class="caption">Synthetic counts are scaled by n_real / n_synth; '
                 f"combinations absent from one table are drawn at {_ABSENT_FLOOR}.</p>",
                 _plot_errors(Figure, summary)]
    if len(summary.numeric):
        body += ["<h2>Numeric columns on their original scale</h2>",
                 "<p>Wasserstein-1 distance between the real and synthetic values of "
                 "each numeric column, divided by its range (0: identical; it shows "
                 "values spread inside their bins and lost point masses, which the "
                 "bin-level TVD cannot), worst first.</p>", _table(summary.numeric),
                 "<p>Quantiles and means:</p>", _table(summary.quantiles)]
        if len(summary.special_shares):
            body += ["<p>Share of the records equal to each special or frequent value "
                     "(a point mass):</p>", _table(summary.special_shares)]
        if Figure is not None:
            if encoder is not None:  # the values the summary compared
                raw_real, raw_synth = _on_edge_scale(raw_real, raw_synth, encoder)
            body += [_plot_numeric(Figure, raw_real, raw_synth, summary, encoder),
                     '<p class="caption">Histograms over each column\'s range (share of '
                     "records per bar); special and frequent values are drawn as "
                     "vertical bars of their share (thick grey: real, blue: synthetic)."
                     "</p>"]
    body += ["<h2>Columns</h2>", "<p>1-way TVD of each column, worst first.</p>",
             _table(summary.columns)]
    if Figure is not None:
        names = summary.columns["column"].tolist()[:max_columns]
        body.append(_plot_columns(Figure, real, synth, names))
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")
    with atomic_write(path) as temporary:
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(page)
    return summary
