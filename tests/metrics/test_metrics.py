"""Tests of dpsynth.metrics: hand-computed values, properties, sklearn integration."""

from collections import Counter
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from dpsynth.metrics import (
    AggregateErrorReport,
    aggregate_error_report,
    combination_counts,
    k_marginal_score,
    make_fidelity_scorer,
    marginal_tvd,
    tstr_score,
)

# --------------------------------------------------------------------------
# marginal_tvd


@pytest.fixture
def tiny():
    real = pd.DataFrame({"a": [0, 0, 1, 1], "b": ["x", "y", "x", "y"]})
    synth = pd.DataFrame({"a": [0, 0, 0, 1], "b": ["x", "x", "y", "y"]})
    return real, synth


def test_marginal_tvd_hand_computed(tiny):
    real, synth = tiny
    # a: p = (1/2, 1/2), q = (3/4, 1/4) -> 1/4; b: identical -> 0.
    mean, details = marginal_tvd(real, synth, k=1, return_details=True)
    assert mean == 0.125
    assert details["columns"].tolist() == [("a",), ("b",)]
    assert details["tvd"].tolist() == [0.25, 0.0]
    # Joint: real 1/4 on each of 4 cells; synth (0,x)=1/2, (0,y)=1/4, (1,y)=1/4.
    assert marginal_tvd(real, synth, k=2) == 0.25


def test_marginal_tvd_missing_is_a_category():
    real = pd.DataFrame({"a": [None, 1.0, 1.0, 2.0]})
    assert marginal_tvd(real, pd.DataFrame({"a": [np.nan, 1.0, 1.0, 2.0]}), k=1) == 0.0
    assert marginal_tvd(real, pd.DataFrame({"a": [pd.NA, 1, 1, 2]}, dtype="Int64"),
                        k=1) == 0.0
    # Missing share 1/4 vs 0: TVD 1/4.
    assert marginal_tvd(real, pd.DataFrame({"a": [2.0, 1.0, 1.0, 2.0]}), k=1) == 0.25


def test_marginal_tvd_compares_values_not_dtypes():
    real = pd.DataFrame({"a": np.array([1, 2, 2], dtype="int64")})
    assert marginal_tvd(real, real.astype("Int64"), k=1) == 0.0
    assert marginal_tvd(real, real.astype("float64"), k=1) == 0.0
    # numbers against their text forms: refused (issue #14 item 9), not TVD 1
    with pytest.raises(ValueError, match="'a' holds numeric values in real but text"):
        marginal_tvd(real, real.astype(str), k=1)


def test_marginal_tvd_column_order_and_mismatch(tiny):
    real, synth = tiny
    assert marginal_tvd(real, synth[["b", "a"]], k=2) == marginal_tvd(real, synth, k=2)
    with pytest.raises(ValueError, match=r"lacks columns \['b'\].*extra columns \['c'\]"):
        marginal_tvd(real, synth.rename(columns={"b": "c"}))
    assert marginal_tvd(real, synth, k=1, columns=["b"]) == 0.0
    with pytest.raises(ValueError, match="k must be between 1 and"):
        marginal_tvd(real, synth, k=3)


def test_marginal_tvd_accepts_arrays(tiny):
    real, synth = tiny
    assert marginal_tvd(real.to_numpy(), synth.to_numpy().tolist(), k=2) == 0.25


def test_marginal_tvd_max_subsets_is_a_seeded_sample():
    rng = np.random.default_rng(0)
    real = pd.DataFrame(rng.integers(0, 3, size=(50, 6)), columns=list("abcdef"))
    synth = pd.DataFrame(rng.integers(0, 3, size=(40, 6)), columns=list("abcdef"))
    mean, details = marginal_tvd(real, synth, 2, max_subsets=5, random_state=1,
                                 return_details=True)
    again = marginal_tvd(real, synth, 2, max_subsets=5, random_state=1,
                         return_details=True)[1]
    assert len(details) == 5 and details["columns"].is_unique
    assert details["columns"].tolist() == again["columns"].tolist()
    assert mean == pytest.approx(details["tvd"].mean())
    for cols, tvd in zip(details["columns"], details["tvd"]):
        assert marginal_tvd(real, synth, 2, columns=list(cols)) == pytest.approx(tvd)
    assert len(marginal_tvd(real, synth, 2, max_subsets=100,
                            return_details=True)[1]) == 15


def _naive_tvd(real, synth, k):
    """Reference implementation with Counters of row tuples."""
    tvds = []
    for cols in combinations(real.columns, k):
        p = Counter(map(tuple, real[list(cols)].itertuples(index=False)))
        q = Counter(map(tuple, synth[list(cols)].itertuples(index=False)))
        cells = set(p) | set(q)
        tvds.append(0.5 * sum(abs(p[c] / len(real) - q[c] / len(synth)) for c in cells))
    return float(np.mean(tvds))


_cell = st.sampled_from(["x", "y", "z", None])
_tables = st.integers(1, 3).flatmap(lambda d: st.tuples(
    st.lists(st.lists(_cell, min_size=d, max_size=d), min_size=1, max_size=12),
    st.lists(st.lists(_cell, min_size=d, max_size=d), min_size=1, max_size=12),
))


@settings(max_examples=60, deadline=None)
@given(_tables, st.integers(1, 3))
def test_marginal_tvd_properties(tables, k):
    real, synth = (pd.DataFrame(rows, dtype=object) for rows in tables)
    k = min(k, real.shape[1])
    tvd = marginal_tvd(real, synth, k)
    assert 0.0 <= tvd <= 1.0
    assert tvd == marginal_tvd(synth, real, k)
    assert marginal_tvd(real, real, k) == 0.0
    assert tvd == pytest.approx(_naive_tvd(real, synth, k))


def test_wide_keys_are_compressed_instead_of_overflowing():
    # 2000**6 > 2**62: the mixed-radix key must be compressed on the way.
    rng = np.random.default_rng(0)
    real = pd.DataFrame({c: rng.permutation(2000) for c in "abcdef"})
    synth = pd.concat([real.iloc[:1000], real.iloc[:1000]])
    # Each of the first 1000 rows: |1/2000 - 2/2000|; each of the others: 1/2000.
    assert marginal_tvd(real, synth, k=6) == 0.5
    counts = combination_counts(real, 6)
    full = [n for combo, n in counts.items() if len(combo) == 6]
    assert len(full) == 2000 and set(full) == {1}


def test_duplicated_column_names_are_rejected(tiny):
    real, synth = tiny
    with pytest.raises(ValueError, match=r"real has duplicated column names \['a'\]"):
        marginal_tvd(real[["a", "a"]], synth)


def test_marginal_tvd_disjoint_is_one():
    real = pd.DataFrame({"a": ["x"] * 3, "b": [1, 2, 3]})
    synth = pd.DataFrame({"a": ["y"] * 7, "b": [1] * 7})
    assert marginal_tvd(real, synth, k=2) == 1.0


# --------------------------------------------------------------------------
# k_marginal_score


@pytest.fixture
def puma():
    real = pd.DataFrame({"PUMA": ["A", "A", "B", "B"],
                         "x": [0, 1, 0, 1], "y": [0, 0, 1, 1]})
    synth = pd.DataFrame({"PUMA": ["A", "A", "A", "B"],
                          "x": [0, 1, 0, 1], "y": [0, 0, 0, 1]})
    return real, synth


def test_k_marginal_score_grouped_hand_computed(puma):
    real, synth = puma
    # One marginal (PUMA, x, y). Real: 1/4 on (A,0,0), (A,1,0), (B,0,1), (B,1,1);
    # synth: (A,0,0)=1/2, (A,1,0)=1/4, (B,1,1)=1/4. L1 = 1/2, TVD = 1/4.
    score, details = k_marginal_score(real, synth, return_details=True)
    assert score == 750.0
    assert details["marginals"]["columns"].tolist() == [("PUMA", "x", "y")]
    assert details["marginals"]["score"].tolist() == [750.0]
    groups = details["groups"]
    assert groups.index.tolist() == ["A", "B"] and groups.index.name == "PUMA"
    assert groups["n_real"].tolist() == [2, 2]
    assert groups["n_synth"].tolist() == [3, 1]
    # Each group: T_g = 1/2, D_g = 1/4 -> 1000 * (1 - 1/2).
    assert groups["score"].tolist() == [500.0, 500.0]


def test_k_marginal_group_scores_are_capped(puma):
    real, _ = puma
    synth = pd.DataFrame({"PUMA": ["A"] * 4, "x": [0] * 4, "y": [0] * 4})
    # Cells: (A,0,0) |1/4 - 1| = 3/4, three others 1/4: L1 = 3/2, TVD = 3/4.
    score, details = k_marginal_score(real, synth, return_details=True)
    assert score == 250.0
    # Group A: D_A = 1 > T_A = 1/2, capped to T_A -> score 0, not -1000.
    assert details["groups"]["score"].tolist() == [0.0, 0.0]


def test_k_marginal_score_excludes_indp_and_plain_version(puma):
    real, synth = puma
    noisy = synth.assign(INDP=[9, 9, 9, 9])
    assert k_marginal_score(real.assign(INDP=[1, 2, 3, 4]), noisy) == 750.0
    # No PUMA column: plain k-way marginals, 1000 * (1 - mean TVD).
    plain = k_marginal_score(real.drop(columns="PUMA"), synth.drop(columns="PUMA"))
    assert plain == pytest.approx(1000 * (1 - marginal_tvd(real[["x", "y"]],
                                                            synth[["x", "y"]], 2)))
    # group_by=None keeps PUMA as a feature: pairs (PUMA,x), (PUMA,y), (x,y).
    assert k_marginal_score(real, synth, group_by=None) == pytest.approx(
        1000 * (1 - marginal_tvd(real, synth, 2)))
    score, details = k_marginal_score(real, synth, group_by=None, return_details=True)
    assert details["groups"] is None and len(details["marginals"]) == 3


def _sdnist_k_marginal(td, dd):
    """SDNist v2 ``KMarginal._compute_score_grouped`` (pandas), for comparison."""
    marg_cols = sorted(set(td.columns) - {"PUMA", "INDP"})
    pairs = list(combinations(marg_cols, 2))
    total, group_n = 0.0, td.groupby(["PUMA"]).size()
    group_total = group_n * 0
    for pair in pairs:
        marg = ["PUMA", *pair]
        t_den = td.groupby(marg).size() / len(td)
        s_den = dd.groupby(marg).size() / len(dd)
        diff = t_den.subtract(s_den, fill_value=0).abs()
        group_t = t_den.groupby(["PUMA"]).sum()
        group_d = diff.groupby(["PUMA"]).sum()
        group_d = group_t.where(group_t <= group_d).fillna(group_d)
        group_total = group_total + group_d * len(td) / group_n
        total += diff.sum()
    return (2 - total / len(pairs)) * 500, (1 - group_total / len(pairs)) * 1000


def test_k_marginal_score_matches_sdnist_formula():
    rng = np.random.default_rng(3)
    columns = ["PUMA", "SEX", "EDU", "INDP", "AGEP"]
    real = pd.DataFrame(rng.integers(0, 4, size=(300, 5)), columns=columns)
    synth = pd.DataFrame(rng.integers(0, 5, size=(200, 5)), columns=columns)
    synth.loc[synth["PUMA"] == 4, "PUMA"] = 0
    expected, expected_groups = _sdnist_k_marginal(real, synth)
    score, details = k_marginal_score(real, synth, return_details=True)
    assert score == pytest.approx(expected)
    groups = details["groups"]["score"].sort_index()
    np.testing.assert_allclose(groups.to_numpy(), expected_groups.sort_index().to_numpy())


# --------------------------------------------------------------------------
# combination_counts


@pytest.fixture
def sds_example():
    """The 5-record example of SDS section 2.1 (⊥ = missing)."""
    return pd.DataFrame({
        "A": ["a1", "a1", "a2", "a2", "a1"],
        "B": ["b1", "b2", None, "b2", "b2"],
        "C": ["c1", "c1", "c2", "c1", np.nan],
    })


def test_combination_counts_sds_example(sds_example):
    A, B, C = (lambda v, c=c: (c, v) for c in "ABC")  # noqa: E731
    expected = {
        (A("a1"),): 3, (A("a2"),): 2, (B("b1"),): 1, (B("b2"),): 3,
        (C("c1"),): 3, (C("c2"),): 1,
        (A("a1"), B("b1")): 1, (A("a1"), B("b2")): 2, (A("a1"), C("c1")): 2,
        (A("a2"), B("b2")): 1, (A("a2"), C("c1")): 1, (A("a2"), C("c2")): 1,
        (B("b1"), C("c1")): 1, (B("b2"), C("c1")): 2,
        (A("a1"), B("b1"), C("c1")): 1, (A("a1"), B("b2"), C("c1")): 1,
        (A("a2"), B("b2"), C("c1")): 1,
    }
    counts = combination_counts(sds_example, reporting_length=3)
    assert len(counts) == 17
    assert counts == expected
    assert combination_counts(sds_example, reporting_length=10) == expected
    assert {c: n for c, n in counts.items() if len(c) == 1} == \
        combination_counts(sds_example, reporting_length=1)


def test_combination_counts_missing_category(sds_example):
    counts = combination_counts(sds_example, 3, missing="category")
    # 17 + B=⊥, C=⊥, (a2,B⊥), (B⊥,c2), (a1,C⊥), (b2,C⊥), (a2,⊥,c2), (a1,b2,⊥).
    assert len(counts) == 25
    assert counts[(("B", None),)] == 1
    assert counts[(("A", "a1"), ("B", "b2"), ("C", None))] == 1
    assert counts[(("A", "a2"), ("B", None), ("C", "c2"))] == 1
    with pytest.raises(ValueError, match="missing"):
        combination_counts(sds_example, missing="drop")


def test_combination_counts_values_are_python_scalars():
    df = pd.DataFrame({"i": [1, 1, 2], "f": [0.5, 0.5, 0.5],
                       "n": pd.array([7, None, 7], dtype="Int64")})
    counts = combination_counts(df, 1, missing="category")
    assert counts == {(("i", 1),): 2, (("i", 2),): 1, (("f", 0.5),): 3,
                      (("n", 7),): 2, (("n", None),): 1}
    assert {type(v) for combo in counts for _, v in combo} == {int, float, type(None)}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(_cell, min_size=3, max_size=3), min_size=1, max_size=10))
def test_combination_counts_matches_naive_count(rows):
    df = pd.DataFrame(rows, columns=["p", "q", "r"], dtype=object)
    expected = Counter()
    for row in rows:
        present = [(c, v) for c, v in zip(df.columns, row) if v is not None]
        for k in (1, 2):
            expected.update(combinations(present, k))
    assert combination_counts(df, 2) == dict(expected)


# --------------------------------------------------------------------------
# aggregate_error_report


class _Aggregates:
    """Duck-typed stand-in for DPAggregates."""

    def __init__(self, counts, n_records):
        self._counts, self.n_records = counts, n_records

    def to_dict(self):
        return dict(self._counts)


@pytest.fixture
def report():
    reference = pd.DataFrame({"A": ["a1", "a1", "a1", "a2"],
                              "B": ["b1", "b1", "b2", "b2"]})
    other = pd.DataFrame({"A": ["a1", "a1", "a3", "a2"],
                          "B": ["b1", "b1", "b2", "b2"]})
    return aggregate_error_report(reference, other, 2, resolution=2)


def test_aggregate_error_report_by_length(report):
    # Length 1: ref a1=3 a2=1 b1=2 b2=2; other a1=2 a2=1 a3=1 b1=2 b2=2.
    # Length 2: ref (a1,b1)=2 (a1,b2)=1 (a2,b2)=1; other (a1,b1)=2 (a3,b2)=1 (a2,b2)=1.
    by_length = report.by_length.set_index("length")
    assert by_length["n_reference"].tolist() == [4, 3]
    assert by_length["n_other"].tolist() == [5, 3]
    assert by_length["mean_abs_error"].tolist() == [0.25, 0.0]
    assert by_length["n_suppressed"].tolist() == [0, 1]
    assert by_length["suppressed_pct"].tolist() == pytest.approx([0.0, 100 / 3])
    assert by_length["n_fabricated"].tolist() == [1, 1]
    assert by_length["fabricated_pct"].tolist() == pytest.approx([25.0, 100 / 3])
    # Evaluated (ref >= 2 or in other): length 1 {a1, a2, a3, b1, b2},
    # preservation (2/3, 1, 0, 1, 1); proportional error (1/3, 0, 1, 0, 0).
    # Length 2 {(a1,b1), (a3,b2), (a2,b2)}: (1, 0, 1) and (0, 1, 0).
    assert by_length["preservation"].tolist() == pytest.approx([11 / 15, 2 / 3])
    assert by_length["mean_proportional_error"].tolist() == pytest.approx([4 / 15, 1 / 3])
    # Rare reference combinations also rare in other: a2 and (a2,b2).
    assert by_length["leakage_count"].tolist() == [1, 1]
    assert by_length["leakage_pct"].tolist() == pytest.approx([25.0, 100 / 3])


def test_aggregate_error_report_scalars_and_buckets(report):
    assert isinstance(report, AggregateErrorReport)
    assert report.mean_abs_error == pytest.approx(1 / 6)
    assert report.suppressed_pct == pytest.approx(100 / 7)
    assert report.fabricated_pct == pytest.approx(200 / 7)
    assert report.record_expansion == 1.0
    assert report.leakage_count == 2
    # One bucket (max other count 2 <= 10) with the 8 evaluated combinations.
    bucket = report.by_bucket.iloc[0]
    assert report.by_bucket["bucket"].tolist() == [10]
    assert bucket["n_combinations"] == 8
    assert bucket["mean_count"] == 1.5
    assert bucket["mean_length"] == 11 / 8
    assert bucket["preservation"] == pytest.approx(17 / 24)
    assert bucket["mean_proportional_error"] == pytest.approx(7 / 24)
    assert report.mean_proportional_error == pytest.approx(7 / 24)
    assert report.combination_loss == pytest.approx(7 / 24)
    text = repr(report)
    assert "suppressed_pct" in text and "by count bucket" in text
    assert report.summary()["leakage_count"] == 2


def test_aggregate_error_report_sds_buckets_from_dicts():
    reference = {(("A", 1),): 25, (("A", 2),): 5}
    other = _Aggregates({(("A", 1),): 45, (("A", 2),): 10, (("A", 3),): 11}, 30)
    report = aggregate_error_report(reference, other, resolution=1)
    buckets = report.by_bucket.set_index("bucket")
    # Buckets (0,10], (10,20], (20,40], (40,80]: counts 10, 11 and 45.
    assert buckets.index.tolist() == [10, 20, 40, 80]
    assert buckets["n_combinations"].tolist() == [1, 1, 0, 1]
    assert buckets["preservation"].iloc[[0, 1, 3]].tolist() == [1.0, 0.0, 1.0]
    assert buckets["mean_proportional_error"].iloc[[0, 1, 3]].tolist() == [1.0, 1.0, 0.8]
    assert np.isnan(buckets.loc[40, "preservation"])
    # SDS averages over all buckets, an empty one counting as 0.
    assert report.mean_proportional_error == pytest.approx((1 + 1 + 0 + 0.8) / 4)
    assert report.combination_loss == pytest.approx(0.25)
    assert report.fabricated_pct == 50.0
    assert report.mean_abs_error == pytest.approx((20 + 5) / 2)
    assert np.isnan(report.record_expansion)  # the plain dict has no record count
    assert report.by_length["length"].tolist() == [1]


def test_aggregate_error_report_record_expansion_from_aggregates(sds_example):
    aggregates = _Aggregates(combination_counts(sds_example, 3), n_records=10)
    report = aggregate_error_report(sds_example, aggregates)
    assert report.record_expansion == 2.0
    assert report.mean_abs_error == 0.0
    assert report.suppressed_pct == 0.0 and report.fabricated_pct == 0.0
    assert report.by_length["n_reference"].tolist() == [6, 8, 3]


def test_aggregate_error_report_missing_modes(sds_example):
    counts = combination_counts(sds_example, 3, missing="category")
    # Keys with None are dropped in "absent" mode, so the data match exactly.
    absent = aggregate_error_report(sds_example, counts)
    assert absent.fabricated_pct == 0.0 and absent.suppressed_pct == 0.0
    category = aggregate_error_report(sds_example, counts, missing="category")
    assert category.fabricated_pct == 0.0
    assert category.by_length["n_reference"].tolist() == [8, 12, 5]
    # An "absent" reference against "category" counts: the 8 None keys are fabricated.
    mixed = aggregate_error_report(combination_counts(sds_example, 3), counts,
                                   missing="category")
    assert mixed.fabricated_pct == pytest.approx(100 * 8 / 17)


def test_aggregate_error_report_validates_inputs(sds_example):
    with pytest.raises(TypeError, match="to_dict"):
        aggregate_error_report(sds_example, 3.0)
    with pytest.raises(ValueError, match="other lacks columns"):
        aggregate_error_report(sds_example, sds_example.drop(columns="C"))
    reordered = aggregate_error_report(sds_example, sds_example[["C", "A", "B"]])
    assert reordered.fabricated_pct == 0.0 and reordered.mean_abs_error == 0.0


# --------------------------------------------------------------------------
# tstr_score


@pytest.fixture
def classification():
    rng = np.random.default_rng(0)
    n = 200
    color = rng.choice(["red", "green", "blue"], size=n)
    size = rng.integers(0, 3, size=n)
    label = ((color == "red") | (size == 2)).astype(int)
    flip = rng.random(n) < 0.1
    df = pd.DataFrame({"color": color, "size": size, "label": np.where(flip, 1 - label, label)})
    return df.iloc[:150], df.iloc[150:]


def _pipeline():
    encode = make_column_transformer((OneHotEncoder(handle_unknown="ignore"),
                                      ["color", "size"]))
    return make_pipeline(encode, LogisticRegression())


def test_tstr_score_equals_manual_fit_and_score(classification):
    train, test = classification
    estimator = _pipeline()
    expected = _pipeline().fit(train[["color", "size"]], train["label"]).score(
        test[["color", "size"]], test["label"])
    score = tstr_score(estimator, train, test, target="label")
    assert score == expected and score > 0.7
    assert not hasattr(estimator, "classes_")  # cloned, not fitted in place
    as_tuples = tstr_score(estimator, (train[["color", "size"]], train["label"]),
                           (test[["color", "size"]], test["label"]))
    assert as_tuples == score
    assert tstr_score(estimator, train, test, target="label", scoring="accuracy") == score


def test_tstr_score_scoring_and_errors(classification):
    train, test = classification
    auc = tstr_score(_pipeline(), train, test, target="label", scoring="roc_auc")
    assert 0.5 < auc <= 1.0
    # A synthetic set whose labels are flipped gives a poor real-data score.
    flipped = train.assign(label=1 - train["label"])
    assert tstr_score(_pipeline(), flipped, test, target="label") < 0.4
    with pytest.raises(ValueError, match="target is required"):
        tstr_score(_pipeline(), train, test)
    with pytest.raises(ValueError, match="not a column"):
        tstr_score(_pipeline(), train, test, target="nope")


# --------------------------------------------------------------------------
# make_fidelity_scorer


class _ResamplingSynthesizer(BaseEstimator):
    """Fake synthesizer: resamples training rows, corrupting a share of cells."""

    def __init__(self, corruption=0.0):
        self.corruption = corruption

    def fit(self, X, y=None):
        self.X_ = X.reset_index(drop=True)
        self.y_ = None if y is None else pd.Series(y).reset_index(drop=True)
        return self

    def sample(self, n_samples=None, random_state=None):
        self.sample_calls_ = (n_samples, random_state)
        rng = np.random.default_rng(random_state)
        rows = rng.integers(0, len(self.X_), size=n_samples)
        X = self.X_.iloc[rows].reset_index(drop=True)
        X = X.mask(rng.random(X.shape) < self.corruption, "junk")
        if self.y_ is None:
            return X
        return X, self.y_.iloc[rows].reset_index(drop=True)


@pytest.fixture
def table():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 3, size=120)
    return pd.DataFrame({"a": a, "b": (a + rng.integers(0, 2, size=120)) % 3,
                         "c": rng.choice(["u", "v"], size=120)})


def test_fidelity_scorer_ranks_synthesizers_in_grid_search(table):
    search = GridSearchCV(_ResamplingSynthesizer(), {"corruption": [0.6, 0.0, 0.3]},
                          scoring=make_fidelity_scorer(), cv=3)
    search.fit(table)
    assert search.best_params_ == {"corruption": 0.0}
    scores = search.cv_results_["mean_test_score"]
    assert scores[1] > scores[2] > scores[0]
    assert np.all((scores >= 0) & (scores <= 1))


def test_fidelity_scorer_value_and_sampling_arguments(table):
    synthesizer = _ResamplingSynthesizer().fit(table)
    scorer = make_fidelity_scorer(k=1, random_state=7)
    value = scorer(synthesizer, table)
    assert synthesizer.sample_calls_ == (len(table), 7)
    expected = 1 - marginal_tvd(table, synthesizer.sample(len(table), random_state=7), 1)
    assert value == expected
    make_fidelity_scorer(n_samples=30)(synthesizer, table)
    assert synthesizer.sample_calls_ == (30, 0)
    k_marginal = make_fidelity_scorer("k_marginal", group_by=None)(synthesizer, table)
    assert k_marginal == pytest.approx(1000 * (1 - marginal_tvd(
        table, synthesizer.sample(len(table), random_state=0), 2)))
    assert "k_marginal" in repr(make_fidelity_scorer("k_marginal"))
    with pytest.raises(ValueError, match="metric must be one of"):
        make_fidelity_scorer("accuracy")


class _ConstantLabelSynthesizer(_ResamplingSynthesizer):
    """Returns the training rows unchanged with a label absent from the data."""

    def sample(self, n_samples=None, random_state=None):
        return self.X_.copy(), pd.Series(["never"] * len(self.X_), name="label")


def test_fidelity_scorer_joins_the_target(table):
    X, y = table[["a", "b"]], table["c"].rename("label")
    synthesizer = _ConstantLabelSynthesizer().fit(X, y)
    scorer = make_fidelity_scorer()
    # Features alone are identical.
    assert scorer(synthesizer, X) == 1.0
    # With y: of the 3 pairs (a,b), (a,label), (b,label), the two with the
    # label are disjoint (TVD 1), so the score is 1 - 2/3.
    assert scorer(synthesizer, X, y) == pytest.approx(1 / 3)
    # Arrays take the sample's column names.
    assert scorer(synthesizer, X.to_numpy()) == 1.0


# --------------------------------------------------- SDMetrics-style quality report
def test_quality_report_follows_the_sdmetrics_definitions():
    from scipy.stats import ks_2samp

    from dpsynth.metrics import column_pair_trends, column_shapes, quality_report

    rng = np.random.default_rng(0)
    real = pd.DataFrame({"x": rng.normal(size=500), "y": rng.normal(size=500),
                         "c": rng.choice(["a", "b"], size=500)})
    real["y"] = real["x"] + 0.5 * real["y"]
    synth = pd.DataFrame({"x": rng.normal(size=400), "y": rng.normal(size=400),
                          "c": rng.choice(["a", "b", "z"], size=400, p=[0.5, 0.3, 0.2])})
    shapes = column_shapes(real, synth).set_index("column")
    assert shapes.loc["x", "metric"] == "KSComplement"
    assert shapes.loc["x", "score"] == pytest.approx(1 - ks_2samp(real.x, synth.x).statistic)
    p = real.c.value_counts(normalize=True)
    q = synth.c.value_counts(normalize=True)
    assert shapes.loc["c", "score"] == pytest.approx(
        1 - 0.5 * p.subtract(q, fill_value=0).abs().sum())
    pairs = column_pair_trends(real, synth).set_index(["column_1", "column_2"])
    rho_r, rho_s = real.x.corr(real.y), synth.x.corr(synth.y)
    assert pairs.loc[("x", "y"), "score"] == pytest.approx(1 - abs(rho_r - rho_s) / 2)
    assert pairs.loc[("x", "c"), "metric"] == "ContingencySimilarity"
    report = quality_report(real, synth)
    assert report["score"] == pytest.approx(
        (report["column_shapes"] + report["column_pair_trends"]) / 2)
    same = quality_report(real, real)
    assert same["score"] == pytest.approx(1.0)
    assert report["score"] < same["score"]


def test_column_shapes_compare_dates_and_durations_as_numbers():
    # SDMetrics' KSComplement for datetimes; columns of different units compare
    from scipy.stats import ks_2samp

    from dpsynth.metrics import column_shapes

    rng = np.random.default_rng(1)
    start = pd.Timestamp("2021-01-01")
    real = pd.DataFrame({"when": start + pd.to_timedelta(rng.integers(0, 900, 300), unit="D"),
                         "wait": pd.to_timedelta(rng.integers(0, 60, 300), unit="min")})
    synth = pd.DataFrame({
        "when": (start + pd.to_timedelta(rng.integers(100, 900, 200), unit="D"))
        .astype("datetime64[s]"),
        "wait": pd.to_timedelta(rng.integers(0, 60, 200), unit="min").astype("timedelta64[s]")})
    synth.loc[::10, "when"] = pd.NaT
    shapes = column_shapes(real, synth).set_index("column")
    assert (shapes["metric"] == "KSComplement").all()
    days = lambda s: (s.dropna() - start) / pd.Timedelta(days=1)  # noqa: E731
    assert shapes.loc["when", "score"] == pytest.approx(
        1 - ks_2samp(days(real.when), days(synth.when)).statistic)
    minutes = lambda s: s / pd.Timedelta(minutes=1)  # noqa: E731
    assert shapes.loc["wait", "score"] == pytest.approx(
        1 - ks_2samp(minutes(real.wait), minutes(synth.wait)).statistic)


def test_quality_scores_refuse_a_column_of_another_kind_in_each_table():
    # dates against their text, bools against "True"/"False": every value would
    # differ, so the scores would say 0 for equal data; refused as marginal_tvd does
    from dpsynth.metrics import column_shapes, quality_report

    rng = np.random.default_rng(0)
    real = pd.DataFrame({
        "when": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 50, 200), "D"),
        "flag": rng.random(200) < .5})
    for column, text in (("when", real["when"].astype(str)),
                         ("flag", real["flag"].map({True: "True", False: "False"}))):
        synthetic = real.assign(**{column: text})
        for score in (column_shapes, quality_report):
            with pytest.raises(ValueError, match=f"Column '{column}' holds"):
                score(real, synthetic)
    # a synthetic column of numbers beside an other label (mixed) is still compared
    numbers = pd.DataFrame({"n": rng.integers(0, 5, 200)})
    mixed = numbers.assign(n=numbers["n"].astype(object).where(numbers["n"] > 0, "<other>"))
    assert column_shapes(numbers, mixed)["score"].notna().all()


def test_quality_report_sdmetrics_handoff_is_optional():
    from dpsynth.metrics import quality_report

    frame = pd.DataFrame({"a": ["x", "y"] * 10, "b": np.arange(20.0)})
    try:
        import sdmetrics  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="sdmetrics"):
            quality_report(frame, frame, use_sdmetrics=True)
    else:
        assert quality_report(frame, frame, use_sdmetrics=True)["source"] == "sdmetrics"


def _pair_trend_by_strings(real, synthetic, a, b):
    """The former per-pair ContingencySimilarity: labels rebuilt as text for every
    pair, counted with value_counts (the definition, slowly)."""
    from dpsynth.metrics._quality import _discretize, _is_numeric, _values

    parts = []
    for frame in (real, synthetic):
        keys = []
        for column in (a, b):
            ref = _values(real[column]) if _is_numeric(real[column]) else None
            if ref is not None and np.isfinite(ref).any():
                low, high = np.nanmin(ref), np.nanmax(ref)
            else:
                low = high = 0.0
            keys.append(_discretize(frame[column].reset_index(drop=True), low, high))
        parts.append((keys[0] + "\x1f" + keys[1]).value_counts(normalize=True))
    return 1.0 - 0.5 * parts[0].subtract(parts[1], fill_value=0).abs().sum()


def test_column_pair_trends_labels_each_column_once_with_the_same_scores():
    # a 300-column table took ~45 ms per pair (45,000 pairs: over half an hour of
    # `dpsynth evaluate`); each column is now labelled once, the scores unchanged
    from dpsynth.metrics import column_pair_trends

    n = 400

    def table(seed_shift):
        r = np.random.default_rng(seed_shift)
        frame = pd.DataFrame({
            "num": np.where(r.random(n) < 0.1, np.nan, r.normal(0, 1, n)),
            "int": pd.array(r.integers(0, 50, n), dtype="Int64"),
            "text": r.choice(["a", "b", "c", None], n),
            "flag": r.random(n) < 0.3,
            "cat": pd.Categorical(r.choice(["x", "y"], n)),
            "when": pd.Timestamp("2020-01-01") + pd.to_timedelta(r.integers(0, 99, n), "D"),
            "many": [f"v{k}" for k in r.integers(0, 5000, n)],  # sparse pair tables
        })
        return frame
    real, synth = table(0), table(1).iloc[: n - 37].reset_index(drop=True)
    synth["int"] = synth["int"].astype(object)  # numeric in one table only: labels differ
    got = column_pair_trends(real, synth)
    for row in got.itertuples(index=False):
        if row.metric == "ContingencySimilarity" and "int" not in (row.column_1, row.column_2):
            assert row.score == pytest.approx(
                _pair_trend_by_strings(real, synth, row.column_1, row.column_2), abs=1e-12)
    assert (got["metric"] == "CorrelationSimilarity").sum() == 1  # num-when
    assert got["score"].between(0, 1).all()
    assert column_pair_trends(real, synth.iloc[:0])["score"].isna().all()


def test_column_pair_trends_label_a_column_numeric_in_one_table_only_as_text():
    # an integer column whose synthetic copy holds an other label is read back as text:
    # its real values were cut into bins "0".."9" and its synthetic ones left as text,
    # so no pair with it matched (score 0.005 for identical tables)
    from dpsynth.metrics import column_pair_trends

    rng = np.random.default_rng(0)
    real = pd.DataFrame({"age": rng.integers(18, 90, 300), "c": rng.choice(["a", "b"], 300)})
    synth = real.astype({"age": object})
    synth.loc[:4, "age"] = "<other>"
    score = column_pair_trends(real, synth)["score"].iloc[0]
    assert score == pytest.approx(1 - 5 / 300)
