"""Non-private reference computations shared by the tests (not part of the package)."""

import numpy as np
import pandas as pd

from dpsynth.release.sds import _run_levels


class _ExactRelease:
    def __call__(self, k, counts, bound):
        keep = counts > 0
        return keep, counts[keep].astype(np.int64), 0.0, 0.0


def exact_marginals(ids, column_of, n_columns, reporting_length):
    """Exact counts of every non-empty k-tuple, k = 1..R (no privacy), by the release's loop."""
    return _run_levels(ids, column_of, n_columns, reporting_length,
                       bound_fn=lambda k, histogram: int(np.flatnonzero(histogram).max(initial=0)),
                       release_fn=_ExactRelease(), public_universe=False, rng=None)


# --------------------------------------------- the public part of a saved release
# Mechanism parameters that derive from DP outputs (the DP contribution bound).
_DP_PARAMS = {"contribution_bound", "noise_scale", "threshold", "threshold_of", "columns"}
# Privacy details that derive from DP outputs (whether the second discovery round ran).
_DP_DETAILS = {"contribution_bounds", "noise_scales", "thresholds", "n_candidates",
               "n_measurements", "rho_discovery"}


def _numeric_step(mechanism):
    """A binning step of a numeric column of ``numeric="auto"``: how ``numeric_rho`` is
    split over the columns derives from the DP decisions (which columns hold numbers,
    each text column's noisy share of texts), so its ``rho`` and noise are DP-derived
    (their sum over the columns is not)."""
    name = mechanism["name"]
    return name.startswith("numeric column ") and name.endswith(
        ("': range", "': point masses", "': bins and shape"))


def _adaptive(mechanism):
    """A mechanism of the workload release's adaptive rounds: which marginals were
    selected, and how the budget was annealed, are DP outputs; so is whether the
    second discovery round measured anything, which columns had their frequency
    profile measured and got an extra budget, and how much (its reserved delta
    is listed always), and which text candidates the numbers-or-text decision
    measured a second time."""
    return (" round " in mechanism["name"]
            or mechanism["name"].startswith(("discovery of undeclared values, second round",
                                             "frequency profile of undiscovered values"))
            or mechanism["name"].endswith("numeric or text, second round"))


def public_part(document, dp_binned=()):
    """The parts of a saved release that must not depend on the data."""
    privacy = document["privacy"]
    kept_privacy = {k: v for k, v in privacy.items()
                    if k not in _DP_DETAILS and k != "mechanisms"}
    # a DP-binned column's cell count is a DP output, and so is the budget share of
    # its 1-way measurements that derives from it (a small table's second measurement)
    binned_at = [i for i, c in enumerate(document["schema"]["columns"])
                 if c["name"] in dp_binned]
    dp_shared = tuple(f"1-way marginal {i}," for i in binned_at)

    def kept(m):
        m = {**m, "params": {p: v for p, v in m["params"].items() if p not in _DP_PARAMS}}
        if m["name"].startswith(dp_shared) or _numeric_step(m):
            m = {k: v for k, v in m.items() if k not in ("rho", "epsilon", "params")}
        return m

    kept_privacy["mechanisms"] = [  # whether a second measurement is needed: DP-derived too
        kept(m) for m in privacy["mechanisms"] if not _adaptive(m)
        and not (m["name"].startswith(dp_shared) and "second measurement" in m["name"])]
    columns = []
    for column in document["schema"]["columns"]:
        entry = {k: v for k, v in column.items() if k not in ("values", "has_missing")}
        if column["declared"] and column["name"] not in dp_binned:
            entry["values"] = column["values"]
            entry["has_missing"] = column["has_missing"]
        if column["name"] in dp_binned:  # DP quantile edges are DP outputs
            entry.pop("binning", None)
        columns.append(entry)
    return {"format": document["format"], "version": document["version"],
            "reporting_length": document["reporting_length"], "target": document["target"],
            "schema": {**document["schema"], "columns": columns}, "privacy": kept_privacy,
            "keys": sorted(document)}


def decision_counts(monkeypatch, series):
    """The exact counts of every cell of the numbers-or-text decision
    (:func:`dpsynth.preprocessing._numeric.decide_numeric`: numbers, texts, dates,
    numbers in a format), its noise patched out."""
    from dpsynth.preprocessing import _numeric

    seen = []
    monkeypatch.setattr(_numeric, "_noisy", lambda counts, sigma, rng: (
        seen.append(np.asarray(counts, dtype=np.float64)), np.asarray(counts, float))[1])
    _numeric.decide_numeric(series, 1.0, np.random.default_rng(0))
    return np.concatenate(seen)


def assert_one_cell_per_record(monkeypatch, base, extras, dtype):
    """One more record (each of ``extras``) changes :func:`decision_counts` of ``base``
    by one in one cell; a missing field changes none (it is counted elsewhere)."""
    before = decision_counts(monkeypatch, base)
    for extra in extras:
        after = decision_counts(monkeypatch, pd.concat(
            [base, pd.Series([extra], dtype=dtype)], ignore_index=True))
        assert np.abs(after - before).sum() == 1, extra
    after = decision_counts(monkeypatch, pd.concat([base, pd.Series([None], dtype=dtype)],
                                                   ignore_index=True))
    assert np.abs(after - before).sum() == 0


def skip_unless_text_dtype(dtype):
    """Skip a case parametrized by ``dtype`` when ``"str"`` is not a text dtype of
    its own (pandas < 3 reads it as ``object``, the case already covered)."""
    import pytest

    if dtype == "str" and not isinstance(pd.Series(["a"], dtype="str").dtype,
                                         pd.StringDtype):
        pytest.skip("pandas < 3: 'str' is object")
