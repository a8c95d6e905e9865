"""The privacy boundary: a release holds nothing about the data but DP outputs.

Everything in a release (the aggregates file, ``privacy_spent_``, the
synthetic table's schema, warnings an analyst sees) must be declared by the
user, output by an accounted mechanism, or computed from those two.  Two
kinds of tests pin it:

- one regression test per leak found in review (privacy-boundary issue,
  items 1-8);
- a **neighbour-invariance battery**: pairs of tables one record apart
  (added, removed or changed), fitted with the same seed; everything in the
  release except the DP outputs (noisy counts, the DP record count, DP
  contribution bounds and what derives from them, values released by the DP
  threshold, DP bin edges) must be identical.
"""

import datetime
from decimal import Decimal
import json
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from dpsynth import DPAggregates, DPMarginalSynthesizer, TrainOnSynthetic
from dpsynth.preprocessing import DPKBinsDiscretizer, TableEncoder
from dpsynth.utils._random import FIT, SAMPLE, stream
from tests._support import public_part as _public_part

# ----------------------------------------------------------------- helpers
def _base_table(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 3, n)
    return pd.DataFrame({
        "city": pd.Series(np.array(["Lyon", "Oslo", "Kyiv"])[group], dtype=object),
        "size": pd.Categorical(np.array(["S", "M", "L"])[(group + rng.integers(0, 2, n)) % 3],
                               categories=["S", "M", "L"]),
        "age": (group * 30 + rng.integers(0, 30, n)).astype(np.int64),
        "income": pd.Series(rng.uniform(0, 1000, n)).where(rng.random(n) > 0.1),
        "kids": pd.array(rng.integers(0, 4, n), dtype="Int64"),
        "flag": group == 0,
        "note": pd.Series(np.array(["a", "b"])[rng.integers(0, 2, n)], dtype="str"),
    })


POSITIONS = ("first", "middle", "last")


def _insert(frame, row, position):
    """``frame`` with ``row`` placed first, in the middle or last (index renumbered)."""
    middle = len(frame) // 2
    parts = {"first": [row, frame], "last": [frame, row],
             "middle": [frame.iloc[:middle], row, frame.iloc[middle:]]}[position]
    return pd.concat(parts, ignore_index=True)


def _row_index(frame, position):
    """The index of the record a position names (for removed or changed records)."""
    return {"first": 0, "middle": len(frame) // 2, "last": len(frame) - 1}[position]


def _neighbour(frame, position, values):
    """``frame`` without its record at ``position`` (``values`` None), else with one
    more record of ``values`` there (:func:`_with_record`)."""
    if values is None:
        return frame.drop(index=_row_index(frame, position)).reset_index(drop=True)
    return _with_record(frame, position, **values)


def _with_record(frame, position="last", **values):
    """``frame`` plus one record placed at ``position`` (other columns copy the
    first row), dtypes kept."""
    row = frame.iloc[[0]].copy()
    for name, value in values.items():
        if isinstance(row[name].dtype, pd.CategoricalDtype) and value is not None \
                and value not in row[name].cat.categories:
            row[name] = row[name].cat.add_categories([value])
        row[name] = pd.Series([value], index=row.index, dtype=row[name].dtype)
    out = _insert(frame, row, position)
    for name in frame.columns:  # concat may widen a categorical: keep declared dtypes
        if isinstance(frame[name].dtype, pd.CategoricalDtype):  # as astype("category")
            union = list(frame[name].cat.categories) + [
                c for c in row[name].cat.categories if c not in frame[name].cat.categories]
            out[name] = out[name].astype(object).astype(
                pd.CategoricalDtype(union, ordered=frame[name].dtype.ordered))
        else:
            out[name] = out[name].astype(frame[name].dtype)
    return out


def _changed(frame, index, **values):
    out = frame.copy()
    for name, value in values.items():
        column = out[name]
        if isinstance(column.dtype, pd.CategoricalDtype) and value is not None \
                and value not in column.cat.categories:
            out[name] = column.cat.add_categories([value])
        out.loc[index, name] = value
    return out


def _encoder(kind):
    bounds = {"age": (0, 120), "income": (0, 1000)}
    if kind == "declared":
        return TableEncoder(bounds=bounds, categories={
            "city": ["Lyon", "Oslo", "Kyiv"], "size": ["S", "M", "L"], "kids": [0, 1, 2, 3],
            "flag": [False, True], "note": ["a", "b"]}, handle_unknown="missing")
    if kind == "no_missing":  # complete columns declared (a public NOT NULL)
        return TableEncoder(bounds=bounds, categories={"size": ["S", "M", "L"]},
                            no_missing=["age", "flag"])
    if kind == "absent":
        return TableEncoder(bounds=bounds, missing="absent")
    if kind == "quantile":
        return TableEncoder(bounds=bounds, binning={"income": "quantile"},
                            binning_epsilon=0.5)
    if kind == "special":  # declared point masses (issue #17): public, data-free bins
        return TableEncoder(bounds=bounds, special_values={"income": [0, -5], "age": [40]},
                            decimals={"income": 2})
    if kind == "dp_values":  # DP frequent values and DP within-bin histograms
        return TableEncoder(bounds=bounds, special_values={"income": [0]},
                            frequent_values="dp", frequent_epsilon=0.5,
                            inverse="dp_histogram", inverse_epsilon=0.5)
    if kind == "plain":  # nothing declared (tables without the base table's columns)
        return TableEncoder()
    if kind == "timestamp categories":  # object columns of timestamps kept categorical
        return TableEncoder(numeric={"naive": "categorical", "aware": "categorical"})
    return TableEncoder(bounds=bounds)


def _release(frame, kind, tmp_path, name, y=None, seed=0, epsilon=4.0, delta=None):
    synth = DPMarginalSynthesizer(epsilon=epsilon, delta=delta, encoder=_encoder(kind),
                                  random_state=seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        synth.fit(frame, y)
        sample = synth.sample(40)
    path = tmp_path / f"{name}.json"
    synth.aggregates_.save(path)
    document = json.loads(path.read_text())
    sample_x = pd.DataFrame(sample[0] if isinstance(sample, tuple) else sample)
    if isinstance(sample, tuple):  # the target's values and dtype are compared too
        sample_x["(y)"] = pd.Series(sample[1]).reset_index(drop=True)
    messages = sorted((w.category.__name__, str(w.message)) for w in caught)
    return document, sample_x, messages


_BASE_RELEASES = {}


def _base_release(table, kind, tmp_path):
    """:func:`_release` of a table shared by many pairs, computed once per encoder kind."""
    key = (id(table), kind)
    if key not in _BASE_RELEASES:  # the table is kept alive with its release
        _BASE_RELEASES[key] = (_release(table, kind, tmp_path, "a"), table)
    return _BASE_RELEASES[key][0]


def _spellings(values):
    """``[(value, spelling)]`` of released values (as in JSON) or sampled cells."""
    from dpsynth.schema import value_from_json

    out = []
    for value in values:
        if isinstance(value, dict):
            value = value_from_json(value)
        out.append((value, f"{type(value).__name__}:{value!r}"))
    return out


def _spelling_mismatches(first, second):
    """Equal values spelt differently, or listed in another order, in two releases.

    Which values an undeclared column releases is a DP output, but the
    spelling (``-0.0``/``0.0``, ``1``/``1.0``, a time zone) and the relative
    order of the values both releases hold must not depend on the records.
    """
    bad = []
    for one, two in zip(first, second):
        one, two = _spellings(one), _spellings(two)
        matched = []  # (position in two, spelling in one, spelling in two)
        for value, spelt in one:
            for k, (other, other_spelt) in enumerate(two):
                try:
                    equal = bool(value == other)
                except TypeError:
                    equal = False
                if equal:
                    matched.append((k, spelt, other_spelt))
                    if spelt != other_spelt:
                        bad.append((spelt, other_spelt))
        if [k for k, _, _ in matched] != sorted(k for k, _, _ in matched):
            bad.append(("order", [a for _, a, _ in matched]))
    return bad


def _check_neighbours(first, second, dp_binned=(), ordered_samples=False):
    """Two neighbours' releases ``(document, sample, messages)`` differ only in DP outputs."""
    (doc_1, sample_1, messages_1), (doc_2, sample_2, messages_2) = first, second
    assert _public_part(doc_1, dp_binned) == _public_part(doc_2, dp_binned)
    assert _spelling_mismatches([c["values"] for c in doc_1["schema"]["columns"]],
                                [c["values"] for c in doc_2["schema"]["columns"]]) == []
    pd.testing.assert_series_equal(sample_1.dtypes, sample_2.dtypes)
    assert list(sample_1.columns) == list(sample_2.columns)
    distinct = [[sorted(set(sample[c].dropna().tolist()), key=repr) for c in sample.columns]
                for sample in (sample_1, sample_2)]
    assert [m for m in _spelling_mismatches(*distinct) if m[0] != "order"] == []
    assert messages_1 == messages_2


def _neighbours(position="last"):
    """(name, table, neighbour) pairs, one record apart; the record that differs is
    placed at ``position`` (first, middle or last)."""
    base = _base_table()
    at = _row_index(base, position)

    def plus(**values):
        return _with_record(base, position, **values)

    pairs = [
        ("add a unique category", plus(city="Reykjavik")),
        ("remove a record", base.drop(index=at).reset_index(drop=True)),
        ("add a duplicate record", plus()),
        ("change a category to a new one", _changed(base, at, city="Zanzibar")),
        ("missing city (None)", plus(city=None)),
        ("missing city (NaN)", plus(city=np.nan)),
        ("missing in a nullable int column", plus(kids=pd.NA)),
        ("new value in an int column", plus(kids=99)),
        ("record at the lower numeric bound", plus(age=0, income=0.0)),
        ("record at the upper numeric bound", plus(age=120, income=1000.0)),
        ("record outside the numeric bounds", plus(age=500, income=-5.0)),
        ("missing income", plus(income=np.nan)),
        ("value with a delimiter", plus(city='Paris, "TX"\nUSA')),
        ("value equal to the missing token", plus(city="<missing>")),
        ("empty string", plus(city="")),
        ("unicode value", plus(city="Ærøskøbing 🚲")),
        ("very long value", plus(city="x" * 5000)),
        ("a date object in a text column", plus(city=datetime.date(2021, 3, 4))),
        ("a Decimal in a text column", plus(city=Decimal("1.25"))),
        ("new categorical dtype category", plus(size="XXL")),
        ("missing in a categorical column", plus(size=None)),
        ("flip a bool", _changed(base, at, flag=not bool(base.loc[at, "flag"]))),
        ("missing in a str column", plus(note=None)),
        ("new value in a str column", plus(note="secret")),
        ("all-missing record", plus(city=None, size=None, income=np.nan, kids=pd.NA,
                                    note=None)),
    ]
    out = [(name, base, other) for name, other in pairs]
    # the missing marker of the first missing row must not matter
    with_none = _with_record(_with_record(base, position, city=None), position, city=np.nan)
    with_nan = _with_record(_with_record(base, position, city=np.nan), position, city=None)
    out.append(("first missing marker None vs NaN", with_none, with_nan))
    # the other value (values not released) is a code whether or not one was held back
    out.append(("value equal to the other label", base, _with_record(base, city="<other>")))
    return out


def _values_table(n=600, seed=2):
    """Undeclared columns whose values have several spellings or types: floats
    (``-0.0``), naive and tz-aware timestamps, an object column of ints and an
    ``astype("category")`` column of ints."""
    rng = np.random.default_rng(seed)
    day = pd.Timestamp("2024-03-01")
    days = rng.integers(0, 3, n)
    days[:3] = [2, 0, 1]  # first seen out of order: a failed sort would show it
    return pd.DataFrame({
        "score": np.array([0.0, 0.5, 1.0])[rng.integers(0, 3, n)],
        "naive": pd.Series([day + pd.Timedelta(days=int(d)) for d in days], dtype=object),
        "aware": pd.Series([(day + pd.Timedelta(days=int(d))).tz_localize("UTC")
                            for d in rng.integers(0, 3, n)], dtype=object),
        "count": pd.Series([int(v) for v in rng.integers(0, 3, n)], dtype=object),
        "level": pd.Series(rng.integers(1, 4, n)).astype("category"),
    })


def _value_neighbours(position="last"):
    """(name, table, neighbour) pairs of :func:`_values_table`: a value equal to a
    frequent one in another spelling or type, or of another type, at ``position``."""
    base = _values_table()
    same_instant = pd.Timestamp("2024-03-02", tz="UTC").tz_convert("Asia/Tokyo")
    pairs = [
        ("negative zero", _with_record(base, position, score=-0.0)),
        ("a tz-aware timestamp among naive ones",
         _with_record(base, position, naive=pd.Timestamp("2024-03-02", tz="UTC"))),
        ("the same instant in another zone", _with_record(base, position, aware=same_instant)),
        ("a float equal to an int in an object column", _with_record(base, position, count=1.0)),
        ("a word in an object column of ints", _with_record(base, position, count="many")),
        ("a numeric string in an object column of ints",
         _with_record(base, position, count="1")),
        ("a float in an astype('category') column of ints",
         _with_record(base, position, level=2.5)),
    ]
    return [(name, base, other) for name, other in pairs]


def _list_neighbours(position="last"):
    """(name, X, y, X', y'): y (or X) given as Python lists, one record apart."""
    X = _values_table()[["score"]]
    rng = np.random.default_rng(3)
    y = [int(v) for v in rng.integers(0, 3, len(X))]
    rows = [[int(a), int(b)] for a, b in rng.integers(0, 3, (len(X), 2))]
    at = {"first": 0, "middle": len(X) // 2, "last": len(X)}[position]
    X_other = _with_record(X, position)

    def put(values, value):
        return values[:at] + [value] + values[at:]

    return [
        ("a list y with a None", X, y, X_other, put(y, None)),
        ("a list y with a float", X, y, X_other, put(y, 2.5)),
        ("a list-of-lists X with a float", rows, None, put(rows, [2.5, 1]), None),
        ("a list-of-lists X with a None", rows, None, put(rows, [None, 1]), None),
    ]


# every pair with the default encoder at every position of the record that
# differs; with the declared encoder first and last; the other encoders (which
# vary the encoding rather than the position) with a subset
_CASES = [(name, "default", position) for name, _, _ in _neighbours()
          for position in POSITIONS] + [
    (name, "declared", position) for name, _, _ in _neighbours()
    for position in ("first", "last")] + [
    (name, kind, "last") for name in ("add a unique category", "missing city (None)",
                                      "remove a record", "missing income")
    for kind in ("absent", "quantile")] + [
    (name, kind, "first") for name in ("add a unique category", "missing income")
    for kind in ("absent", "quantile")] + [
    (name, kind, "last") for name in ("record at the lower numeric bound", "missing income",
                                      "record outside the numeric bounds",
                                      "add a duplicate record")
    for kind in ("special", "dp_values")] + [
    (name, "no_missing", position) for name in ("add a unique category", "remove a record",
                                                "record outside the numeric bounds",
                                                "missing in a categorical column",
                                                "all-missing record")
    for position in ("first", "last")]


@pytest.fixture(scope="module")
def neighbour_tables():
    return {(name, position): (table, other) for position in POSITIONS
            for name, table, other in _neighbours(position)}


def test_battery_has_at_least_thirty_pairs():
    assert len(_CASES) >= 30
    assert {position for _, _, position in _CASES} == set(POSITIONS)


@pytest.mark.parametrize("name,kind,position", _CASES)
def test_neighbours_differ_only_in_dp_outputs(name, kind, position, neighbour_tables,
                                              tmp_path):
    table, other = neighbour_tables[name, position]
    dp_binned = {"quantile": ("income",), "dp_values": ("income", "age")}.get(kind, ())
    if kind != "declared":  # "kids" (Int64, undeclared) is binned by DP: numeric="auto"
        dp_binned = (*dp_binned, "kids")
    _check_neighbours(_base_release(table, kind, tmp_path),
                      _release(other, kind, tmp_path, "b"), dp_binned)


@pytest.fixture(scope="module")
def value_tables():
    return {(name, position): (table, other) for position in POSITIONS
            for name, table, other in _value_neighbours(position)}


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name", [name for name, _, _ in _value_neighbours()])
def test_value_spellings_and_types_do_not_reach_the_release(name, position, value_tables,
                                                            tmp_path):
    # -0.0, a time zone, 1.0 among ints, 2.5 in a categorical of ints: the
    # release and its samples must not show which spelling or type a record used
    table, other = value_tables[name, position]
    # "score" (float, undeclared) is binned under DP by default (numeric="auto"), and
    # so are the object columns of timestamps ("naive", "aware": found to hold date
    # and time objects by a DP decision) and of ints ("count"), whose draws follow
    _check_neighbours(_base_release(table, "plain", tmp_path),
                      _release(other, "plain", tmp_path, "b"),
                      dp_binned=("score", "naive", "aware", "count"))
    if "timestamp" in name or "zone" in name:  # the timestamps as categories: their
        # released values keep one spelling (a zone, a unit) whichever record came first
        _check_neighbours(_base_release(table, "timestamp categories", tmp_path),
                          _release(other, "timestamp categories", tmp_path, "c"),
                          dp_binned=("score", "count"))


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name", [name for name, *_ in _list_neighbours()])
def test_list_inputs_get_no_dtype_from_their_values(name, position, tmp_path):
    X, y, X_other, y_other = {pair[0]: pair[1:] for pair in _list_neighbours(position)}[name]
    _check_neighbours(_release(X, "plain", tmp_path, "a", y=y),
                      _release(X_other, "plain", tmp_path, "b", y=y_other))


def test_neighbours_with_a_target_column(tmp_path):
    table = _base_table()
    y = pd.Series(np.where(table["flag"], "yes", "no"), name="label", dtype=object)
    other, y_other = _with_record(table), pd.concat([y, pd.Series(["rare"], name="label")],
                                                    ignore_index=True)
    first, _, messages_1 = _release(table, "default", tmp_path, "a", y=y)
    second, _, messages_2 = _release(other, "default", tmp_path, "b", y=y_other)
    assert _public_part(first) == _public_part(second)
    assert messages_1 == messages_2


# -------------------------------------------------- leak regression tests
def test_leak1_dtype_categories_are_not_published(tmp_path):
    # a categorical column with declared categories: a private value outside
    # the declaration (kept as missing) used to be written with the dtype
    frame = _with_record(_base_table(), size="PRIVATE-VALUE")
    encoder = TableEncoder(bounds={"age": (0, 120), "income": (0, 1000)},
                           categories={"size": ["S", "M", "L"]}, handle_unknown="missing")
    synth = DPMarginalSynthesizer(encoder=encoder, random_state=0).fit(frame)
    synth.aggregates_.save(tmp_path / "agg.json")
    synth.aggregates_.save(tmp_path / "agg.csv")
    for path in ("agg.json", "agg.csv"):
        assert "PRIVATE-VALUE" not in (tmp_path / path).read_text()
    out = synth.sample(30)
    assert list(out["size"].cat.categories) == ["S", "M", "L"]


def test_leak1_undeclared_dtype_categories_are_released_or_dropped(tmp_path):
    frame = _base_table()
    frame["size"] = frame["size"].cat.add_categories(["NEVER-SEEN"])
    synth = DPMarginalSynthesizer(encoder=_encoder("default"), random_state=0).fit(frame)
    synth.aggregates_.save(tmp_path / "agg.json")
    assert "NEVER-SEEN" not in (tmp_path / "agg.json").read_text()
    # categories="dtype" declares the dtype's list public: then it is written
    declared = DPMarginalSynthesizer(encoder=TableEncoder(
        categories={"size": "dtype"}, bounds={"age": (0, 120), "income": (0, 1000)}),
        random_state=0).fit(frame)
    assert "NEVER-SEEN" in declared.aggregates_.schema[1].values


def test_leak3_missing_marker_comes_from_the_dtype(tmp_path):
    base = _base_table()
    first = _with_record(_with_record(base, city=None), city=np.nan)
    second = _with_record(_with_record(base, city=np.nan), city=None)
    files = []
    for name, frame in (("a", first), ("b", second)):
        synth = DPMarginalSynthesizer(encoder=_encoder("default"), random_state=0).fit(frame)
        synth.aggregates_.save(tmp_path / f"{name}.json")
        files.append((tmp_path / f"{name}.json").read_text())
    assert files[0] == files[1]  # identical, noise included (same seed)


def test_leak4_none_is_os_entropy_whatever_the_global_seed():
    frame = _base_table()
    for release in ("sds", "workload"):
        releases = []
        for _ in range(2):
            np.random.seed(0)
            synth = DPMarginalSynthesizer(release=release, encoder=_encoder("default"))
            aggregates = synth.fit(frame).aggregates_
            releases.append(aggregates.to_dict() or aggregates.marginals[0].table.tolist())
        assert releases[0] != releases[1]


def test_leak5_child_streams_are_spawned_not_small_integers():
    seeded = DPMarginalSynthesizer(encoder=_encoder("quantile"), random_state=3)
    seeded.fit(_base_table())
    binner_state = seeded.encoder_.get_params()["random_state"]
    assert isinstance(binner_state, np.random.SeedSequence)
    assert binner_state.entropy == 3 and binner_state.spawn_key[:1] == (FIT,)
    # sample's stream is not fit's: the noise draws are never replayed
    fit_draws = np.random.default_rng(stream(3, FIT)).random(8)
    sample_draws = np.random.default_rng(stream(3, SAMPLE)).random(8)
    assert not np.array_equal(fit_draws, sample_draws)
    # a 128-bit root for generator inputs too
    assert len(stream(np.random.default_rng(0), SAMPLE).entropy) == 4  # 4 x 32 bits


def test_a_publishable_synthesizer_holds_no_suppressed_value():
    import pickle

    frame = _with_record(_base_table(), city="SUPPRESSED-CITY")
    synth = DPMarginalSynthesizer(encoder=_encoder("default"), random_state=0).fit(frame)
    assert "SUPPRESSED-CITY" not in synth.aggregates_.schema[0].values
    assert b"SUPPRESSED-CITY" in pickle.dumps(synth)  # encoder_ is private
    public = synth.publishable()
    blob = pickle.dumps(public)
    assert b"SUPPRESSED-CITY" not in blob and not hasattr(public, "encoder_")
    assert public.random_state is None and public.aggregates_ is synth.aggregates_
    again = pickle.loads(blob)
    assert again.sample(30).dtypes.equals(synth.sample(30).dtypes)
    assert b"SUPPRESSED-CITY" not in pickle.dumps(
        DPMarginalSynthesizer.from_aggregates(synth.aggregates_))
    # ndarray in, ndarray out: kept
    array = DPMarginalSynthesizer(random_state=0).fit(np.array([["a", "b"]] * 300))
    assert isinstance(array.publishable().sample(5), np.ndarray)


def _quantile_edges(synth):
    return synth.encoder_.schema_[3].binning.edges  # income, DP quantile edges


def test_an_explicit_encoder_seed_is_kept_and_warned_about_with_fresh_noise():
    table = _base_table()

    def fit(encoder_seed, seed):
        encoder = _encoder("quantile").set_params(random_state=encoder_seed)
        synth = DPMarginalSynthesizer(encoder=encoder, random_state=seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            synth.fit(table)
        return synth, [str(w.message) for w in caught if "encoder.random_state" in
                       str(w.message)]

    # an explicit encoder seed with fresh noise: kept (asked for), so the DP bin
    # edges repeat across fits, and fit says so
    (first, warned), (second, _) = fit(7, None), fit(7, None)
    assert _quantile_edges(first) == _quantile_edges(second)
    assert first.encoder_.random_state == 7
    assert len(warned) == 1 and "repeat across releases" in warned[0]
    # no encoder seed: a child of the synthesizer's stream, fresh at every fit
    (first, warned), (second, _) = fit(None, None), fit(None, None)
    assert warned == [] and _quantile_edges(first) != _quantile_edges(second)
    # both seeded (experiments, tests): no warning
    assert fit(7, 0)[1] == []
    # a seeded encoder without DP steps draws nothing while fitting: no warning
    synth = DPMarginalSynthesizer(encoder=_encoder("default").set_params(
        random_state=7, numeric="categorical"))  # no numeric="auto" DP steps either
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        synth.fit(table)


def test_leak6_default_delta_is_fixed(tmp_path):
    small = DPMarginalSynthesizer(encoder=_encoder("default"), random_state=0)
    large = DPMarginalSynthesizer(encoder=_encoder("default"), random_state=0)
    small.fit(_base_table(600))
    large.fit(_base_table(900))
    assert small.privacy_spent_["delta"] == large.privacy_spent_["delta"] == 1e-9


def test_leak7_only_post_processed_dp_outputs_are_released(tmp_path):
    synth = DPMarginalSynthesizer(encoder=_encoder("default"), random_state=0)
    synth.fit(_base_table())
    document = synth.aggregates_.save(tmp_path / "agg.json") or json.loads(
        (tmp_path / "agg.json").read_text())
    assert isinstance(document["n_records"], int)
    for level in document["aggregates"]:
        assert all(isinstance(c, int) for c in level["counts"])
    # delta no longer derives from the noisy count
    assert document["privacy"]["delta"] == 1e-9


def test_leak8_train_on_synthetic_names_only_released_classes():
    table = _base_table()
    y = pd.Series(np.where(table["flag"], "yes", "no"), name="label", dtype=object)
    y.iloc[:2] = "SUPPRESSED-CLASS"
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder
    model = TrainOnSynthetic(make_pipeline(OneHotEncoder(handle_unknown="ignore"),
                                           LogisticRegression()),
                             DPMarginalSynthesizer(encoder=_encoder("default"),
                                                   random_state=0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(table, y)
    assert not any("SUPPRESSED-CLASS" in str(w.message) for w in caught)


def test_loaded_release_equals_the_fitted_one(tmp_path):
    synth = DPMarginalSynthesizer(encoder=_encoder("quantile"), random_state=0)
    synth.fit(_base_table())
    synth.aggregates_.save(tmp_path / "agg.json")
    loaded = DPAggregates.load(tmp_path / "agg.json")
    assert loaded.privacy == synth.privacy_spent_
    assert loaded.schema == synth.aggregates_.schema
    again = DPMarginalSynthesizer.from_aggregates(loaded, random_state=5).sample(20)
    first = synth.set_params(random_state=5).sample(20)
    pd.testing.assert_frame_equal(first, again)


def test_privacy_spent_is_immutable_and_accounts_every_mechanism():
    synth = DPMarginalSynthesizer(release="sds", encoder=_encoder("quantile"), random_state=0)
    spent = synth.fit(_base_table()).privacy_spent_
    with pytest.raises((AttributeError, TypeError)):
        spent["epsilon"] = 1.0
    with pytest.raises(AttributeError):
        spent.epsilon = 1.0
    pure = sum(m.epsilon for m in spent.mechanisms)
    assert pure == pytest.approx(spent["epsilon_records"] + spent["epsilon_binning"])
    assert sum(m.rho for m in spent.mechanisms) == pytest.approx(spent["rho"])
    assert sum(m.delta for m in spent.mechanisms) + spent["conversion_delta"] == \
        pytest.approx(spent["delta"])
    names = [m.name for m in spent.mechanisms]
    assert names[:2] == ["record count", "binning (DP quantiles, frequent values, within-bin)"]
    assert isinstance(DPKBinsDiscretizer, type)


# ------------------------------------------------------- through the CLI
def _csv_base(n=600, seed=1):
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 3, n)
    return pd.DataFrame({
        "zip": np.array(["02139", "10001", "94110"])[group],
        "rooms": np.array(["1", "2", "3"])[(group + rng.integers(0, 2, n)) % 3],
        "age": (group * 30 + rng.integers(0, 30, n)).astype(str),
        "status": np.array(["NA", "ok", "None"])[rng.integers(0, 3, n)],
    })


def _csv_neighbours():
    base = _csv_base()
    row = base.iloc[[0]]

    def plus(where="last", **values):
        extra = row.copy()
        for name, value in values.items():
            extra[name] = value
        parts = {"first": [extra, base], "middle": [base.iloc[:300], extra, base.iloc[300:]],
                 "last": [base, extra]}[where]
        return pd.concat(parts, ignore_index=True)

    # canaries placed first, in the middle and last: the first record once decided
    # the separator of the file (io._detect_separator read the first lines)
    placed = [(f"{name} ({where})", plus(where, **values))
              for where in ("first", "middle", "last")
              for name, values in (("a separator canary", {"zip": "x,;'y';"}),
                                   ("a no-header separator canary", {"zip": "x;'y';z"}),
                                   ("a unique zip", {"zip": "99999"}),
                                   ("a duplicate record", {}),
                                   ("a tab and a pipe", {"status": "a\tb|c"}),
                                   ("a missing field", {"rooms": ""}))]
    placed += [(f"{name} ({where})", plus(where, **values))
               for where in ("first", "middle", "last")
               for name, values in (("a text code in a numeric column", {"rooms": "N"}),)]
    return placed + [
        ("add a unique zip", plus(zip="99999")),
        ("remove a record", base.iloc[1:]),
        ("a float in an integer-looking column", plus(rooms="2.5")),
        ("a missing field", plus(rooms="")),
        ("NA as text vs empty", plus(status="")),
        ("a record at the lower bound", plus(age="0")),
        ("a record at the upper bound", plus(age="120")),
        ("a record beyond the bounds", plus(age="977")),
        ("a value with a delimiter and quotes", plus(zip='1,"2"')),
        ("a value with a semicolon", plus(zip="a;b")),
        ("a missing age", plus(age="")),
    ]


def _cli_release(frame, tmp_path, name, extra, header=True):
    from dpsynth.cli import main

    folder = tmp_path / name
    folder.mkdir()
    data = folder / "table.csv"
    frame.to_csv(data, index=False, header=header)
    out = folder / "release.json"
    import contextlib
    import io
    stdout, stderr = io.StringIO(), io.StringIO()
    bounds = "age=0:120" if header else "column_3=0:120"
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["aggregate", str(data), "-o", str(out), "--bounds", bounds,
                     "--seed", "0", "--epsilon", "4", *extra])
    assert code == 0, stderr.getvalue()
    # DP outputs (counts) are printed: compare the text around them
    text = stdout.getvalue().replace(str(folder), "")
    masked = re.sub(r"[0-9.e+-]*[0-9]", "#", text)  # every number, whatever its length
    return json.loads(out.read_text()), masked, stderr.getvalue().replace(str(folder), "")


# with declared categories, a value outside them is refused before any release
# (an error to the data owner, documented): those pairs run undeclared only
_UNDECLARED_VALUES = {"add a unique zip", "a float in an integer-looking column",
                      "a value with a delimiter and quotes", "a value with a semicolon"} | {
    f"{name} ({where})" for where in ("first", "middle", "last")
    for name in ("a separator canary", "a no-header separator canary", "a unique zip",
                 "a tab and a pipe", "a text code in a numeric column")}


@pytest.mark.parametrize("name,declared", [
    (name, declared) for name, _ in _csv_neighbours() for declared in (False, True)
    if not (declared and name in _UNDECLARED_VALUES)])
def test_cli_neighbours_differ_only_in_dp_outputs(name, declared, tmp_path):
    other = dict(_csv_neighbours())[name]
    extra = []
    if declared:
        (tmp_path / "cats.json").write_text(json.dumps(
            {"zip": ["02139", "10001", "94110"], "rooms": ["1", "2", "3"],
             "status": ["NA", "ok", "None"]}))
        extra = ["--categories", str(tmp_path / "cats.json")]
    first, out_1, err_1 = _cli_release(_csv_base(), tmp_path, "a", extra)
    second, out_2, err_2 = _cli_release(other, tmp_path, "b", extra)
    # undeclared "rooms" holds numbers: a DP count finds it numeric, DP bins it (and
    # "age", and "zip" undeclared: numbers written with a leading 0)
    dp_binned = _dp_binned(first)
    assert ("rooms" in dp_binned) is not declared
    assert _public_part(first, dp_binned) == _public_part(second, dp_binned)
    assert (out_1, err_1) == (out_2, err_2)


@pytest.mark.parametrize("name", [name for name, _ in _csv_neighbours()])
def test_cli_neighbours_with_a_target_differ_only_in_dp_outputs(name, tmp_path):
    # --target (public) weighs the target's marginals; which ones are selected is DP
    other = dict(_csv_neighbours())[name]
    extra = ["--target", "zip"]
    first, out_1, err_1 = _cli_release(_csv_base(), tmp_path, "a", extra)
    second, out_2, err_2 = _cli_release(other, tmp_path, "b", extra)
    assert first["target"] == second["target"] == "zip"
    dp_binned = _dp_binned(first)
    assert _public_part(first, dp_binned) == _public_part(second, dp_binned)
    assert (out_1, err_1) == (out_2, err_2)


def _dp_binned(document):
    """The columns of a saved release binned by DP (numeric, no bounds declared): their
    binnings are DP outputs, which differ between neighbours whenever the random
    stream does (a text code of one more record is one more noisy count)."""
    return tuple(c["name"] for c in document["schema"]["columns"] if c["kind"] == "numeric")


def _csv_dates_base(n=600, seed=8):
    rng = np.random.default_rng(seed)
    days = pd.Timestamp("2018-01-01") + pd.to_timedelta(rng.integers(0, 900, n), unit="D")
    stamps = days + pd.to_timedelta(rng.integers(0, 86400, n), unit="s")
    return pd.DataFrame({
        "day": np.where(rng.random(n) < 0.1, "", days.strftime("%Y-%m-%d")),
        "stamp": stamps.strftime("%Y-%m-%d %H:%M:%S"),
        "issue_d": [f"{d:%b}-{d.year}" for d in days],
        "age": (rng.integers(0, 90, n)).astype(str)})


@pytest.mark.parametrize("where", ["first", "middle", "last"])
@pytest.mark.parametrize("name,values", [
    ("a date in another format", {"day": "03/04/2021", "stamp": "2021-03-04T13:45:00Z"}),
    ("a quarter", {"day": "2021Q1", "issue_d": "2021-Q4"}),
    ("a far date", {"day": "9999-12-31", "stamp": "0001-01-01 00:00:00",
                    "issue_d": "Jan-0001"}),
    ("an unparseable text", {"day": "x,;'y';", "stamp": "N/A", "issue_d": "??"}),
    ("a missing field", {"day": "", "stamp": "", "issue_d": ""}),
    ("a duplicate record", {}),
])
def test_cli_text_date_neighbours_differ_only_in_dp_outputs(name, values, where, tmp_path):
    base = _csv_dates_base()
    extra = base.iloc[[0]].copy()
    for column, value in values.items():
        extra[column] = value
    middle = len(base) // 2
    other = pd.concat({"first": [extra, base], "last": [base, extra],
                       "middle": [base.iloc[:middle], extra, base.iloc[middle:]]}[where],
                      ignore_index=True)
    first, out_1, err_1 = _cli_release(base, tmp_path, "a", [])
    second, out_2, err_2 = _cli_release(other, tmp_path, "b", [])
    for document in (first, second):  # dates in their format, binned by DP
        formats = {c["name"]: c.get("binning", {}).get("date_format")
                   for c in document["schema"]["columns"]}
        assert formats == {"day": "%Y-%m-%d", "stamp": "%Y-%m-%d %H:%M:%S",
                           "issue_d": "%b-%Y", "age": None}
    dp_binned = ("day", "stamp", "issue_d")
    assert _public_part(first, dp_binned) == _public_part(second, dp_binned)
    assert (out_1, err_1) == (out_2, err_2)


# ------------------------------------- numeric columns with nothing declared
def _numeric_base(n=800, seed=2):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "amount": pd.Series(np.where(rng.random(n) < 0.3, 0.0, rng.lognormal(5, 1, n)))
        .where(rng.random(n) > 0.05),
        "visits": rng.poisson(2, n).astype(np.int64),
        "kind": pd.Series(rng.choice(["a", "b"], n), dtype=object)})


def _default_releases(tables, tmp_path):
    """Each table through ``DPMarginalSynthesizer(epsilon=4)`` with nothing declared:
    ``(document, sample dtypes, warnings, synthesizer)`` of each."""
    releases = []
    for label, frame in zip("abcdefgh", tables):
        synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            synth.fit(frame)
            sample = synth.sample(40)
        path = tmp_path / f"{label}.json"
        synth.aggregates_.save(path)
        releases.append((json.loads(path.read_text()), sample.dtypes,
                         sorted(str(w.message) for w in caught), synth))
    return releases


def _check_numeric_neighbours(releases, dp_binned):
    """Releases of :func:`_default_releases` differ only in DP outputs."""
    (first, dtypes_1, messages_1, _), (second, dtypes_2, messages_2, _) = releases
    assert _public_part(first, dp_binned) == _public_part(second, dp_binned)
    pd.testing.assert_series_equal(dtypes_1, dtypes_2)
    assert messages_1 == messages_2
    # the share of the budget is public: the same rho for each numeric step
    numeric = [m for m in first["privacy"]["mechanisms"] if m["name"].startswith("numeric")]
    assert [m["rho"] for m in numeric] == [
        m["rho"] for m in second["privacy"]["mechanisms"] if m["name"].startswith("numeric")]
    assert first["privacy"]["epsilon"] == second["privacy"]["epsilon"] == 4.0


@pytest.mark.parametrize("name,values", [
    ("a huge amount", {"amount": 1e15}),
    ("a negative amount", {"amount": -3.5}),
    ("an infinite amount", {"amount": np.inf}),
    ("a missing amount", {"amount": np.nan}),
    ("a huge count", {"visits": 2 ** 40}),
    ("a negative count", {"visits": -7}),
    ("a duplicate record", {}),
])
def test_numeric_discovery_neighbours_differ_only_in_dp_outputs(name, values, tmp_path):
    base = _numeric_base()
    _check_numeric_neighbours(_default_releases([base, _with_record(base, **values)], tmp_path),
                              ("amount", "visits"))


def _many_columns_base(n=600, seed=6):
    """Ten undeclared columns (text, integers, a float): many triples of candidates."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({f"t{j}": pd.Series(rng.choice(list("abcd")[:2 + j % 3], n),
                                             dtype=object) for j in range(7)})
    frame["count"] = rng.poisson(3, n).astype(np.int64)
    frame["level"] = rng.integers(0, 5, n).astype(np.int64)
    frame["amount"] = np.round(rng.lognormal(3, 1, n), 2)
    return frame


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name,values", [
    ("a new text", {"t0": "zz"}),
    ("a huge count", {"count": 10 ** 9}),
    ("a missing amount", {"amount": np.nan}),
    ("a duplicate record", {}),
])
def test_neighbours_of_a_table_too_wide_for_every_triple(name, values, position, tmp_path,
                                                         monkeypatch):
    # the candidates of a wide table are every pair and a random subset of the triples
    # (drawn from the release's generator): forced here by a small cap on their cells
    from dpsynth.release import adaptive_selection

    listed = adaptive_selection.candidate_sets
    drawn = []

    def capped(n_values, reporting_length=3, max_cells=None, max_total_cells=None, rng=None):
        every = listed(n_values, reporting_length, max_cells)
        cap = sum(math.prod(int(n_values[c]) for c in cols) for cols in every) // 3
        out = listed(n_values, reporting_length, max_cells, cap, rng)
        drawn.append(len(out) < len(every))
        return out

    monkeypatch.setattr(adaptive_selection, "candidate_sets", capped)
    base = _many_columns_base()
    releases = _default_releases([base, _with_record(base, position, **values)], tmp_path)
    assert drawn == [True, True]
    _check_numeric_neighbours(releases, ("count", "level", "amount"))
    n_candidates = [{m["params"]["n_candidates"] for m in doc["privacy"]["mechanisms"]
                     if "n_candidates" in m.get("params", {})} for doc, *_ in releases]
    assert n_candidates[0] == n_candidates[1] and len(n_candidates[0]) == 1


def _cut_base(n=600, seed=7):
    """Categoricals of intervals (``pd.cut``, ordered) and an object column of intervals."""
    rng = np.random.default_rng(seed)
    age = rng.integers(17, 90, n)
    return pd.DataFrame({"group": pd.cut(age, [0, 18, 35, 65, 120]),
                         "span": pd.Series(list(pd.cut(age, [0, 50, 120])), dtype=object),
                         "kind": pd.Series(rng.choice(["a", "b"], n), dtype=object)})


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name,values", [
    ("a new interval category", {"group": pd.Interval(120, 200)}),
    ("a missing interval", {"group": None}),
    ("an interval of float ends equal to ints", {"span": pd.Interval(0.0, 50.0)}),
    ("an interval closed on the other side", {"span": pd.Interval(0, 50, closed="left")}),
    ("an interval of dates in an object column of intervals",
     {"span": pd.Interval(pd.Timestamp("2024-01-01"), pd.Timestamp("2024-02-01"))}),
])
def test_interval_neighbours_differ_only_in_dp_outputs(name, values, position, tmp_path):
    base = _cut_base()
    releases = _default_releases([base, _with_record(base, position, **values)], tmp_path)
    _check_numeric_neighbours(releases, ())
    docs = [doc for doc, *_ in releases]
    assert _spelling_mismatches([c["values"] for c in docs[0]["schema"]["columns"]],
                                [c["values"] for c in docs[1]["schema"]["columns"]]) == []


def _period_base(n=600, seed=9):
    rng = np.random.default_rng(seed)
    months = pd.period_range("2018-01", periods=48, freq="M")
    return pd.DataFrame({"month": pd.Series(months[rng.integers(0, 48, n)]),
                         "kind": pd.Series(rng.choice(["a", "b"], n), dtype=object)})


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name,values", [
    ("a month decades away", {"month": pd.Period("1950-06", freq="M")}),
    ("a missing month", {"month": pd.NaT}),
    ("a duplicate record", {}),
])
def test_period_neighbours_differ_only_in_dp_outputs(name, values, position, tmp_path):
    # a period column is binned as the instants its periods start at (DP range)
    base = _period_base()
    releases = _default_releases([base, _with_record(base, position, **values)], tmp_path)
    _check_numeric_neighbours(releases, ("month",))


def _whole_base(n=800, seed=4):
    """Float columns of whole numbers (a 0/1 flag and a count with missing values, as
    pandas reads integer columns with gaps) beside a float column of decimals."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "flag": np.where(rng.random(n) < 0.05, np.nan, (rng.random(n) < 0.2).astype(float)),
        "kids": np.where(rng.random(n) < 0.1, np.nan, rng.poisson(1.5, n).astype(float)),
        "amount": np.round(rng.lognormal(3, 1, n), 2),
        "kind": pd.Series(rng.choice(["a", "b"], n), dtype=object)})


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name,values", [
    ("a decimal in a whole column", {"flag": 0.5}),
    ("an infinite count", {"kids": np.inf}),
    ("a huge count", {"kids": 1e15}),
    ("a negative count", {"kids": -3.0}),
    ("a whole amount", {"amount": 7.0}),
    ("a missing flag", {"flag": np.nan}),
])
def test_whole_number_decision_neighbours_differ_only_in_dp_outputs(name, values, position,
                                                                  tmp_path):
    base = _whole_base()
    releases = _default_releases([base, _with_record(base, position, **values)], tmp_path)
    # whether a float column holds whole numbers is a DP decision (its binning's
    # integer flag, a DP output); its dtype is the declared float64 in both
    for *_, synth in releases:
        kinds = {c.name: c.binning.integer for c in synth.aggregates_.schema
                 if c.binning is not None}
        assert kinds == {"flag": True, "kids": True, "amount": False}
    _check_numeric_neighbours(releases, ("flag", "kids", "amount"))


def _coded_base(n=800, seed=6):
    """Text columns holding numbers: numbers written as text with a code "N", and
    number objects with words (as spreadsheets export them)."""
    rng = np.random.default_rng(seed)
    coded = rng.poisson(3, n).astype(str).astype(object)
    coded[rng.random(n) < 0.15] = "N"
    mixed = np.empty(n, dtype=object)
    mixed[:] = [int(v) for v in rng.integers(0, 50, n)]
    mixed[rng.random(n) < 0.25] = "n/a"
    return pd.DataFrame({"coded": coded, "mixed": mixed,
                         "kind": pd.Series(rng.choice(["a", "b"], n), dtype=object)})


_CODED_CHANGES = [
    ("a new code", {"coded": "X"}),
    ("a new long text", {"coded": "canary-" + "q" * 300}),
    ("an empty text", {"coded": ""}),
    ("a text equal to the other label", {"coded": "<other>"}),
    ("a text spelled like a point label", {"coded": "=3"}),
    ("a bool among texts", {"coded": True}),
    ("a known code", {"coded": "N"}),
    ("a number", {"coded": "4"}),
    ("a huge number", {"coded": "1000000000000"}),
    ("a number object among texts", {"coded": 4}),
    ("a date object among texts", {"coded": datetime.date(2021, 3, 4)}),
    ("a Decimal among texts", {"coded": Decimal("2.5")}),
    ("a decimal number", {"coded": "2.5"}),
    ("a code with a leading zero", {"coded": "007"}),
    ("a missing field", {"coded": None}),
    ("a new word", {"mixed": "zzz"}),
    ("a number written as text", {"mixed": "5"}),
    ("a bool", {"mixed": True}),
    ("a Decimal among number objects", {"mixed": Decimal("3")}),
    ("a timestamp among number objects", {"mixed": pd.Timestamp("2021-03-04")}),
]


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name,values", _CODED_CHANGES)
def test_text_codes_of_numeric_columns_neighbours_differ_only_in_dp_outputs(
        name, values, position, tmp_path):
    base = _coded_base()
    releases = _default_releases([base, _with_record(base, position, **values)], tmp_path)
    # both columns are found to hold numbers (a DP decision) in both releases;
    # their bins, codes, other code and text share are DP outputs
    for *_, synth in releases:
        assert all(c.binning is not None and c.binning.is_text
                   for c in synth.aggregates_.schema if c.name != "kind")
    _check_numeric_neighbours(releases, ("coded", "mixed"))


def test_a_code_held_by_one_record_is_not_released():
    # the codes are a DP set union with the point masses: a code held by one
    # record is released with probability at most delta
    base = _coded_base()
    for position in POSITIONS:
        frame = _with_record(base, position, coded="canary-1234")
        synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(frame)
        binning = synth.aggregates_.schema[0].binning
        assert binning.codes == ("N",)
        # nor does it make an other code: a DP count of the texts not released
        # (the test's texts cell minus the codes' counts) is below its threshold,
        # and the canary joins "N"
        assert not binning.other and binning.text_fill == "N"
        sample = set(synth.sample(5000, random_state=0)["coded"])
        assert "canary-1234" not in sample and "<other>" not in sample


def _sparse_base(n=800, seed=11):
    """A text column of numbers with 60 present fields in 800 records: too few for the
    first round of the numbers-or-text decision (not settled), so the DP decision
    measures it a second time; words beside it."""
    rng = np.random.default_rng(seed)
    sparse = np.full(n, None, dtype=object)
    sparse[rng.choice(n, 60, replace=False)] = rng.integers(0, 100, 60).astype(str)
    return pd.DataFrame({"kind": pd.Series(rng.choice(["a", "b"], n), dtype=object),
                         "sparse": sparse,
                         "amount": rng.integers(100, 5000, n).astype(str).astype(object)})


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name,values", [
    ("a number", {"sparse": "42"}),
    ("a huge number", {"sparse": "1000000000000"}),
    ("a word", {"sparse": "canary-1234"}),
    ("a date", {"sparse": "2021-03-04"}),
    ("a missing field", {"sparse": None}),
    ("a duplicate record", {}),
    ("remove a record", None),
])
def test_second_numeric_decision_round_neighbours_differ_only_in_dp_outputs(
        name, values, position, tmp_path):
    base = _sparse_base()
    releases = _default_releases([base, _neighbour(base, position, values)], tmp_path)
    for document, *_, synth in releases:  # measured twice, found numeric: DP outputs
        assert [m["name"] for m in document["privacy"]["mechanisms"]
                if m["name"].endswith("second round")
                and m["name"].startswith("numeric column")] == [
            "numeric column 'sparse': numeric or text, second round"]
        assert synth.aggregates_.schema[1].binning is not None
    _check_numeric_neighbours(releases, ("sparse", "amount"))


def _temporal_base(n=800, seed=5):
    rng = np.random.default_rng(seed)
    when = pd.Series(pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 700, n),
                                                                   unit="D"))
    return pd.DataFrame({
        "when": when.where(rng.random(n) > 0.1),
        "stay": pd.Series(pd.to_timedelta(rng.integers(1, 72, n), unit="h")),
        "kind": pd.Series(rng.choice(["a", "b"], n), dtype=object)})


@pytest.mark.parametrize("position", ["first", "middle", "last"])
@pytest.mark.parametrize("name,values", [
    ("a far future date", {"when": pd.Timestamp("2262-04-01")}),
    ("a date before 1970", {"when": pd.Timestamp("1901-05-05")}),
    ("a missing date", {"when": pd.NaT}),
    ("an instant that is no whole day", {"when": pd.Timestamp("2021-05-05 13:45:12.5")}),
    ("a duration of seconds", {"stay": pd.Timedelta(seconds=61)}),
    ("a negative duration", {"stay": pd.Timedelta(days=-400)}),
    ("a duplicate record", {}),
])
def test_temporal_column_neighbours_differ_only_in_dp_outputs(name, values, position,
                                                              tmp_path):
    base = _temporal_base()
    releases = _default_releases([base, _with_record(base, position, **values)], tmp_path)
    assert any(m["name"].startswith("numeric column 'when'")  # binned as numbers, by DP
               for m in releases[0][0]["privacy"]["mechanisms"])
    _check_numeric_neighbours(releases, ("when", "stay"))


def _text_dates_base(n=800, seed=7):
    """Dates written as text (as a CSV file read without parse_dates holds them): ISO
    dates with a code "unknown" and missing fields, month-year in a string column."""
    rng = np.random.default_rng(seed)
    days = pd.Timestamp("2016-01-01") + pd.to_timedelta(rng.integers(0, 1500, n), unit="D")
    opened = pd.Series(days.strftime("%Y-%m-%d"), dtype=object)
    opened[rng.random(n) < 0.1] = "unknown"
    opened[rng.random(n) < 0.05] = None
    stamps = days + pd.to_timedelta(rng.integers(0, 1440, n), unit="m")
    return pd.DataFrame({
        "opened": opened,
        "issue_d": pd.Series([f"{d:%b}-{d.year}" for d in days], dtype="string"),
        "stamp": pd.Series(stamps.strftime("%Y-%m-%d %H:%M:%S"), dtype=object),
        "kind": pd.Series(rng.choice(["a", "b"], n), dtype=object)})


_TEXT_DATE_CHANGES = [
    ("a date in another format", {"opened": "03/04/2021", "issue_d": "2021-03"}),
    ("a date read by two formats", {"opened": "04/05/2021"}),
    ("a far future date", {"opened": "9999-12-31", "issue_d": "Dec-9999"}),
    ("a date in year 1", {"opened": "0001-01-01", "issue_d": "Jan-0001"}),
    ("an impossible date", {"opened": "2021-02-30"}),
    ("an unparseable text", {"opened": "canary-1234", "issue_d": "n/a"}),
    ("a number", {"opened": "20210304", "issue_d": "7"}),
    ("a time with seconds", {"stamp": "2021-03-04 10:11:12"}),
    ("a number object", {"opened": 20210304}),
    ("a date object", {"opened": datetime.date(2021, 3, 4)}),
    ("a timestamp object", {"opened": pd.Timestamp("2021-03-04 10:11:12"),
                            "stamp": pd.Timestamp("2021-03-04 10:11:12")}),
    ("missing", {"opened": None, "issue_d": None}),
    ("a duplicate record", {}),
    ("remove a record", None),
]


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name,values", _TEXT_DATE_CHANGES)
def test_text_date_columns_neighbours_differ_only_in_dp_outputs(name, values, position,
                                                                tmp_path):
    # the columns are found to hold dates (a DP decision) of the same format in both
    # releases; their bins, codes and other code are DP outputs
    _check_format_neighbours(_text_dates_base(), position, values, tmp_path, "date_format",
                             {"opened": "%Y-%m-%d", "issue_d": "%b-%Y",
                              "stamp": "%Y-%m-%d %H:%M:%S"})


def _check_format_neighbours(base, position, values, tmp_path, attribute, formats):
    """Releases of ``base`` and its neighbour: every column of ``formats`` (in order,
    the first ones of the table) read in its format (``binning.<attribute>``), the
    canary text never a released code, and the two releases differing only in DP
    outputs."""
    other = _neighbour(base, position, values)
    releases = _default_releases([base, other], tmp_path)
    for *_, synth in releases:
        schema = synth.aggregates_.schema
        assert [getattr(schema[k].binning, attribute) for k in range(len(formats))] == \
            list(formats.values())
        assert "canary-1234" not in schema[0].binning.codes
    _check_numeric_neighbours(releases, tuple(formats))


def _number_formats_base(n=800, seed=7):
    """Numbers written in a format (as a CSV file holds them): percentages with a code
    "n/a" and missing fields in an object column, amounts in a string column."""
    rng = np.random.default_rng(seed)
    rate = pd.Series([f"{v}%" for v in np.round(rng.gamma(6.0, 2.0, n), 2)], dtype=object)
    rate[rng.random(n) < 0.1] = "n/a"
    rate[rng.random(n) < 0.05] = None
    amount = [f"${v:,.2f}" for v in np.round(rng.lognormal(7.0, 1.0, n), 2)]
    frame = pd.DataFrame({"rate": rate, "amount": pd.Series(amount, dtype="string"),
                          "kind": pd.Series(rng.choice(["a", "b"], n), dtype=object)})
    # counts with thousands separators, a third of them below 1,000 (written plain)
    frame["count"] = [f"{v:,}" for v in np.round(rng.lognormal(7.5, 1.2, n)).astype(int)]
    # prices with a decimal comma
    frame["price"] = [f"{v:.2f}".replace(".", ",") for v in np.round(rng.gamma(3, 9, n), 2)]
    return frame[["rate", "amount", "count", "price", "kind"]]  # the formats' columns first


_NUMBER_FORMAT_CHANGES = [
    ("a number in another format", {"rate": "$5", "amount": "12.5%", "count": "$1,234"}),
    ("an odd spelling", {"rate": "12.5 %", "amount": "$1,2345", "count": "1,2345"}),
    ("another odd spelling", {"rate": "05%", "amount": "5$", "count": "1.234,5"}),
    ("a huge number", {"rate": "99999999999999%", "amount": "$999,999,999,999,999",
                       "count": "999,999,999,999,999,999"}),
    ("a negative number", {"rate": "-99.99%", "amount": "-$1,000,000.01",
                           "count": "-1,000,000.5"}),
    ("a plain number", {"rate": "12.5", "amount": "1234.56", "count": "523"}),
    ("an unparseable text", {"rate": "canary-1234", "amount": "n/a"}),
    ("a date", {"rate": "2021-03-04", "amount": "Mar-2021"}),
    ("a decimal comma elsewhere", {"rate": "12,5", "count": "0,5", "price": "1,234"}),
    ("a comma price's odd spellings", {"price": "1.234.567,891"}),
    ("a price in another format", {"price": "12.50"}),
    ("a number object", {"rate": 12.5}),
    ("a Decimal object", {"rate": Decimal("12.5")}),
    ("missing", {"rate": None, "amount": None}),
    ("a duplicate record", {}),
    ("remove a record", None),
]


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name,values", _NUMBER_FORMAT_CHANGES)
def test_number_format_columns_neighbours_differ_only_in_dp_outputs(name, values, position,
                                                                    tmp_path):
    # both columns are found to hold numbers (a DP decision) in the same format in both
    # releases; their bins, decimals, codes and other code are DP outputs
    _check_format_neighbours(_number_formats_base(), position, values, tmp_path,
                             "number_format", {"rate": "#%", "amount": "$#",
                                               "count": "#,###", "price": "#.###,##"})


def _objects_base(n=800, seed=16):
    """Object columns of Python objects as ``pd.read_sql`` gives them: dates, naive and
    UTC timestamps, Decimals (with missing cells), float objects, and words."""
    rng = np.random.default_rng(seed)
    days = rng.integers(0, 400, n)
    day = pd.Series([datetime.date(2021, 1, 1) + datetime.timedelta(days=int(d)) for d in days],
                    dtype=object)
    day[rng.random(n) < 0.05] = None
    return pd.DataFrame({
        "day": day,
        "when": pd.Series([pd.Timestamp("2021-01-01") + pd.Timedelta(minutes=int(m))
                           for m in rng.integers(0, 60 * 24 * 90, n)], dtype=object),
        "utc": pd.Series([pd.Timestamp("2021-01-01", tz="UTC") + pd.Timedelta(hours=int(h))
                          for h in rng.integers(0, 24 * 90, n)], dtype=object),
        "amount": pd.Series([Decimal(f"{v:.2f}") for v in rng.gamma(2.0, 40.0, n)],
                            dtype=object),
        "ratio": pd.Series([float(v) for v in np.round(rng.random(n), 3)], dtype=object),
        "kind": pd.Series(rng.choice(["a", "b", "c"], n), dtype=object)})


_OBJECTS_BASE = {}


def _object_releases(other, tmp_path):
    """:func:`_default_releases` of :func:`_objects_base` (computed once) and ``other``,
    with the types of a large sample's cells of each column."""
    def types(synth):
        sample = synth.sample(2000, random_state=0)
        return {c: sorted({type(v).__name__ for v in sample[c].dropna()}) for c in sample}

    if "base" not in _OBJECTS_BASE:
        (tmp_path / "base").mkdir()
        (release,) = _default_releases([_objects_base()], tmp_path / "base")
        _OBJECTS_BASE["base"] = release, types(release[-1])
    (release,) = _default_releases([other], tmp_path)
    return [_OBJECTS_BASE["base"], (release, types(release[-1]))]


_OBJECT_CHANGES = [
    ("a date in the words", {"kind": datetime.date(2021, 3, 4)}),
    ("a timestamp in the words", {"kind": pd.Timestamp("2021-03-04 10:11:12")}),
    ("an aware timestamp in the words", {"kind": pd.Timestamp("2021-03-04", tz="Asia/Tokyo")}),
    ("a Decimal in the words", {"kind": Decimal("1.25")}),
    ("a far date", {"day": datetime.date(9999, 12, 31)}),
    ("a date in year 1", {"day": datetime.date(1, 1, 1)}),
    ("a timestamp among dates", {"day": pd.Timestamp("2021-03-04")}),
    ("a text date among dates", {"day": "2021-03-04"}),
    ("a datetime among timestamps", {"when": datetime.datetime(2021, 3, 4, 10, 11, 12, 5)}),
    ("a far timestamp", {"when": pd.Timestamp("2262-04-01")}),
    ("a nanosecond timestamp", {"when": pd.Timestamp("2021-03-04 10:11:12.000000001")}),
    ("an aware timestamp among naive ones", {"when": pd.Timestamp("2021-03-04",
                                                                 tz="Asia/Tokyo")}),
    ("a date among timestamps", {"when": datetime.date(2021, 3, 4), "utc": datetime.date(2021,
                                                                                       3, 4)}),
    ("another zone among UTC timestamps", {"utc": pd.Timestamp("2021-03-04 09:00",
                                                               tz="Asia/Tokyo")}),
    ("a naive timestamp among aware ones", {"utc": pd.Timestamp("2021-03-04")}),
    ("a huge Decimal", {"amount": Decimal("1E+20")}),
    ("a Decimal of many digits", {"amount": Decimal("3.14159265358979323846264338327950")}),
    ("an infinite Decimal", {"amount": Decimal("Infinity")}),
    ("a float among Decimals", {"amount": 2.5}),
    ("a text among Decimals", {"amount": "n/a"}),
    ("a Decimal among floats", {"ratio": Decimal("0.5")}),
    ("a Decimal NaN and NaT", {"amount": Decimal("NaN"), "when": pd.NaT, "day": np.nan}),
    ("a duplicate record", {}),
    ("remove a record", None),
]


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name,values", _OBJECT_CHANGES)
def test_object_columns_neighbours_differ_only_in_dp_outputs(name, values, position, tmp_path):
    # date, time and Decimal objects are binned like dates and numbers (a DP decision)
    # in both releases, come back as objects of their kind, and one more record of
    # any kind anywhere changes nothing but DP outputs
    (first, types_1), (second, types_2) = _object_releases(
        _neighbour(_objects_base(), position, values), tmp_path)
    for *_, synth in (first, second):
        schema = synth.aggregates_.schema
        assert [schema[k].binning.date_format for k in range(3)] == [
            "object:date", "object:timestamp", "object:timestamp-utc"]
        assert schema[3].binning.decimal_share == 1.0
        assert schema[4].binning.is_text and schema[4].binning.decimal_share is None
        assert schema[5].binning is None
    assert types_1 == types_2 == {"day": ["date"], "when": ["Timestamp"],
                                  "utc": ["Timestamp"], "amount": ["Decimal"],
                                  "ratio": ["float"], "kind": ["str"]}
    _check_numeric_neighbours([first, second], ("day", "when", "utc", "amount", "ratio"))


def _months_base(n=2400, seed=9):
    """A month-year column of 36 months with ~65 records each: at epsilon 4, one
    interval per month (a DP post-processing of the binning's counts)."""
    rng = np.random.default_rng(seed)
    span = pd.period_range("2013-01", periods=36, freq="M").strftime("%b-%Y")
    return pd.DataFrame({
        "issue_d": pd.Series(rng.choice(np.asarray(span, dtype=object), n), dtype=object),
        "kind": pd.Series(rng.choice(["a", "b"], n), dtype=object)})


@pytest.mark.parametrize("position", ["first", "last"])
@pytest.mark.parametrize("name,values", [
    ("a month far out", {"issue_d": "Dec-9999"}), ("a month just past", {"issue_d": "Jan-2016"}),
    ("a month inside", {"issue_d": "Jun-2014"}), ("another format", {"issue_d": "2014-06"}),
    ("a text", {"issue_d": "n/a"}), ("missing", {"issue_d": None}),
    ("remove a record", None)])
def test_month_column_by_month_neighbours_differ_only_in_dp_outputs(name, values, position,
                                                                    tmp_path):
    base = _months_base()
    other = _neighbour(base, position, values)
    releases = _default_releases([base, other], tmp_path)
    for *_, synth in releases:  # the case this battery is for: one interval per month
        binning = synth.aggregates_.schema[0].binning
        assert binning.date_format == "%b-%Y" and binning.n_intervals > 20
    _check_numeric_neighbours(releases, ("issue_d",))


# ------------------- narrow windows far from 0: step 3's zoom and its far end runs
def _window_base(n=3000, seed=12):
    """Columns crowded into a sliver of their range grid's cell, which step 3 zooms
    into (nothing declared): an event log of one hour of 2024 (instants to the
    microsecond, 2024-03-01 00:00-01:00) and identifiers 1e9..1e9+5000."""
    rng = np.random.default_rng(seed)
    start = pd.Timestamp("2024-03-01")
    return pd.DataFrame({
        "when": pd.Series(start + pd.to_timedelta(rng.integers(0, 3600 * 10 ** 6, n),
                                                  unit="us")).astype("datetime64[us]"),
        "ident": (10 ** 9 + rng.integers(0, 5001, n)).astype(np.int64),
        "kind": pd.Series(rng.choice(["a", "b"], n), dtype=object)})


def _window_column(low):
    """The column of :func:`_window_base` that a zoomed part starting at ``low`` is of."""
    return "when" if low > 1e12 else "ident"


def _zoomed_releases(tables, tmp_path, monkeypatch):
    """:func:`_default_releases` of each table, and of each the zoomed parts of step 3
    (``{column: [(low, high, edges of the last sub-round)]}``)."""
    from dpsynth.preprocessing import _numeric

    seen, zoomed = [], _numeric._zoomed

    def spy(values, weights, low, high, *args, **kwargs):
        out = zoomed(values, weights, low, high, *args, **kwargs)
        seen.append((float(low), float(high), np.asarray(out[0], dtype=np.float64)))
        return out

    monkeypatch.setattr(_numeric, "_zoomed", spy)
    releases, parts = [], []
    for k, frame in enumerate(tables):
        seen.clear()
        (tmp_path / str(k)).mkdir(parents=True)
        releases += _default_releases([frame], tmp_path / str(k))
        found = {}
        for low, high, edges in seen:
            found.setdefault(_window_column(low), []).append((low, high, edges))
        parts.append(found)
    return releases, parts


def _same_numeric_steps(releases):
    """The numeric steps' mechanisms, parameters included, are the same in both
    releases: in these tables every column is found numeric in both (the DP decisions
    that split the budget agree), and step 1 finds a range (no ``found`` flag), so
    their parameters are public, and the zoom's sub-rounds add no mechanism."""
    steps = [[m for m in document["privacy"]["mechanisms"] if m["name"].startswith("numeric")]
             for document, *_ in releases]
    assert steps[0] == steps[1]


def _check_window_neighbours(base, other, tmp_path, monkeypatch):
    releases, parts = _zoomed_releases([base, other], tmp_path, monkeypatch)
    for found in parts:  # the path this battery is for: both columns zoomed in both fits
        assert set(found) == {"when", "ident"}, found.keys()
    _check_numeric_neighbours(releases, ("when", "ident"))
    _same_numeric_steps(releases)
    return parts


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name,values", [
    ("one more instant inside the hour", {"when": pd.Timestamp("2024-03-01 00:31:07.123457")}),
    ("an instant 40 years earlier", {"when": pd.Timestamp("1984-03-01 00:30:00")}),
    ("a missing instant", {"when": pd.NaT}),
    ("an instant at the hour's end", {"when": pd.Timestamp("2024-03-01 01:00:00")}),
])
def test_one_hour_event_log_neighbours_differ_only_in_dp_outputs(name, values, position,
                                                                  tmp_path, monkeypatch):
    base = _window_base()
    _check_window_neighbours(base, _with_record(base, position, **values), tmp_path,
                             monkeypatch)


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name,values", [
    ("one more value inside", {"ident": 10 ** 9 + 2718}),
    ("a value at 0", {"ident": 0}),
    ("a value at -1e9", {"ident": -10 ** 9}),
])
def test_offset_integer_neighbours_differ_only_in_dp_outputs(name, values, position,
                                                             tmp_path, monkeypatch):
    base = _window_base()
    _check_window_neighbours(base, _with_record(base, position, **values), tmp_path,
                             monkeypatch)


_WINDOW_EDGES = {}


def _zoom_edge(column, tmp_path):
    """An edge of the last sub-round of the base table's zoomed part of ``column``,
    strictly inside the column's window and nearest its middle: a value on it
    is on the boundary of two parts counted apart."""
    if column not in _WINDOW_EDGES:
        with pytest.MonkeyPatch.context() as patch:
            _, (found,) = _zoomed_releases([_window_base()], tmp_path / "edges", patch)
        window = {"when": (pd.Timestamp("2024-03-01").value // 1000,
                           pd.Timestamp("2024-03-01 01:00").value // 1000),
                  "ident": (10 ** 9, 10 ** 9 + 5000)}
        for name, (low, high) in window.items():
            edges = np.concatenate([e for _, _, e in found[name]])
            inner = edges[(edges > low) & (edges < high)]
            assert inner.size, name
            _WINDOW_EDGES[name] = int(inner[np.argmin(np.abs(inner - (low + high) / 2))])
    return _WINDOW_EDGES[column]


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("column", ["when", "ident"])
def test_a_record_on_a_zoomed_part_edge_differs_only_in_dp_outputs(column, position,
                                                                   tmp_path, monkeypatch):
    edge = _zoom_edge(column, tmp_path)
    value = pd.Timestamp(edge, unit="us") if column == "when" else edge
    base = _window_base()
    other = _with_record(base, position, **{column: value})
    assert other.loc[_row_index(other, position), column] == value
    parts = _check_window_neighbours(base, other, tmp_path / "pair", monkeypatch)
    for found in parts:  # an edge of both fits' last sub-round (the same noise)
        assert any(edge in edges for _, _, edges in found[column])


# ---------------------------------------------------- +-inf in float columns
def _infinite_base(n=3000, seed=13):
    """A ratio with 10% +inf (a division by zero: released as a point value) and an
    amount without any, nothing declared."""
    rng = np.random.default_rng(seed)
    ratio = np.round(rng.lognormal(0, 1, n), 3)
    ratio[rng.random(n) < 0.1] = np.inf
    return pd.DataFrame({"ratio": ratio, "amount": np.round(rng.lognormal(2, 0.5, n), 2),
                         "kind": pd.Series(rng.choice(["a", "b"], n), dtype=object)})


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name,values", [
    ("one more +inf", {"ratio": np.inf}),
    ("a -inf", {"ratio": -np.inf}),
    ("one more finite ratio", {"ratio": 1.234}),
    ("a single +inf in a column without", {"amount": np.inf}),
    ("a single -inf in a column without", {"amount": -np.inf}),
])
def test_infinite_value_neighbours_differ_only_in_dp_outputs(name, values, position,
                                                             tmp_path):
    base = _infinite_base()
    releases = _default_releases([base, _with_record(base, position, **values)], tmp_path)
    top = float(base["amount"].max())
    finite = base["ratio"][np.isfinite(base["ratio"])]
    for document, _, _, synth in releases:
        ratio, amount = (c.binning for c in synth.aggregates_.schema[:2])
        # +inf held by 10% is released as a point value, written "inf" in the JSON,
        # and is no cell of the range: the ratio's bins are those of its finite values
        assert ratio.frequent == (np.inf,)
        assert document["schema"]["columns"][0]["binning"]["frequent"] == ["inf"]
        assert np.isfinite(ratio.edges).all() and ratio.edges[-1] <= 2 * finite.max()
        # one record's +-inf is neither released nor a cell of the range: the amount's
        # range and decimals stay those of its finite values (not 1e308 and 0 decimals)
        assert not any(np.isinf(amount.frequent))
        assert np.isfinite(amount.edges).all()
        assert 0 <= amount.edges[0] and amount.edges[-1] <= 2 * top
        assert amount.decimals == releases[0][3].aggregates_.schema[1].binning.decimals
    _check_numeric_neighbours(releases, ("ratio", "amount"))
    _same_numeric_steps(releases)
    sample = releases[1][3].sample(2000, random_state=0)
    assert np.isfinite(sample["amount"]).all() and not (sample["ratio"] == -np.inf).any()


# --------------------------------- floats narrow for their magnitude (span decimals)
def _narrow_base(n=3000, seed=14):
    """Weights of 1000.25 +- 0.1 (to the microgram), nothing declared: their range is
    far narrower than 1% of its magnitude, so they decode at four significant
    digits of its span."""
    rng = np.random.default_rng(seed)
    weight = np.round(1000.25 + np.clip(rng.normal(0, 0.04, n), -0.1, 0.1), 6)
    return pd.DataFrame({"weight": weight,
                         "kind": pd.Series(rng.choice(["a", "b"], n), dtype=object)})


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name,values", [
    ("a weight of 1e6", {"weight": 1e6}),
    ("a weight a hair above the middle", {"weight": 1000.2500001}),
])
def test_narrow_float_neighbours_differ_only_in_dp_outputs(name, values, position, tmp_path):
    base = _narrow_base()
    releases = _default_releases([base, _with_record(base, position, **values)], tmp_path)
    for *_, synth in releases:  # the path this battery is for: the span's decimals
        binning = synth.aggregates_.schema[0].binning
        assert 1000.0 <= binning.edges[0] and binning.edges[-1] <= 1000.6
        assert binning.decimals >= 3
    _check_numeric_neighbours(releases, ("weight",))
    _same_numeric_steps(releases)


# ------------------------------------------------------- pyarrow-backed columns
def _arrow_base(n=2000, seed=15, arrow=True):
    """A text, an instant and a duration column, in pyarrow dtypes (``string``,
    ``timestamp[us]``, ``duration[us]``, as ``read_csv(dtype_backend="pyarrow")``
    gives them) or, with ``arrow=False``, in the pandas dtypes the package reads
    them as (``string``, ``datetime64[us]``, ``timedelta64[us]``).  The cities have
    a tail of 100 held by one record each: the column's other code is then far from
    its DP decision's threshold (one more city would flip a decision at its edge,
    a DP output that the public part holds as public)."""
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(seed)
    city = pd.Series(rng.choice(["Lyon", "Oslo", "Kyiv", "Lima"], n), dtype=object)
    city[rng.choice(n, 100, replace=False)] = [f"village{k:03d}" for k in range(100)]
    city[rng.random(n) < 0.05] = None
    when = pd.Series(pd.Timestamp("2023-01-01") + pd.to_timedelta(
        rng.integers(0, 365 * 86400, n), unit="s")).astype("datetime64[us]")
    when[rng.random(n) < 0.05] = pd.NaT
    wait = pd.Series(pd.to_timedelta(rng.integers(1, 72 * 60, n), unit="m")) \
        .astype("timedelta64[us]")
    frame = pd.DataFrame({"city": city.astype(pd.StringDtype()), "when": when, "wait": wait,
                          "kind": pd.Series(rng.choice(["a", "b"], n), dtype=object)})
    if arrow:
        for name, kind in (("city", pa.string()), ("when", pa.timestamp("us")),
                           ("wait", pa.duration("us"))):
            frame[name] = frame[name].astype(pd.ArrowDtype(kind))
    return frame


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name,values", [
    ("a duplicate record", {}),
    ("remove a record", None),
    ("a new city", {"city": "canary-1234"}),
    ("a missing city", {"city": None}),
    ("a missing instant", {"when": None}),
    ("an instant 40 years earlier", {"when": pd.Timestamp("1983-06-01 12:00:00")}),
    ("a negative wait", {"wait": pd.Timedelta(days=-400)}),
])
def test_arrow_column_neighbours_differ_only_in_dp_outputs(name, values, position, tmp_path):
    base = _arrow_base()
    other = _neighbour(base, position, values)
    assert other.dtypes.to_dict() == base.dtypes.to_dict()
    releases = _default_releases([base, other], tmp_path)
    for document, dtypes, *_ in releases:  # decoded in the dtypes the user chose
        assert dtypes.to_dict() == base.dtypes.to_dict()
        city = document["schema"]["columns"][0]
        assert city["other"] and "canary-1234" not in city["values"]
    _check_numeric_neighbours(releases, ("when", "wait"))
    _same_numeric_steps(releases)


@pytest.mark.parametrize("seed", [0, 1])
def test_an_arrow_table_releases_what_its_pandas_equivalent_does(seed, tmp_path):
    from dpsynth.utils._arrow import standard_columns

    arrow, plain = _arrow_base(), _arrow_base(arrow=False)
    documents, samples = [], []
    for label, frame in (("arrow", arrow), ("plain", plain)):
        synth = DPMarginalSynthesizer(epsilon=4.0, random_state=seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            synth.fit(frame)
            samples.append((synth.sample(500), sorted(str(w.message) for w in caught)))
        synth.aggregates_.save(tmp_path / f"{label}.json")
        documents.append(json.loads((tmp_path / f"{label}.json").read_text()))
    # the whole release file, DP outputs included, and the warnings are the same, but
    # for the arrow columns' source dtypes (public: the dtypes the user chose) that a
    # loaded release decodes to
    sources = {c["name"]: c.pop("source_dtype") for c in documents[0]["schema"]["columns"]
               if "source_dtype" in c}
    assert sources == {name: str(dtype) for name, dtype in arrow.dtypes.items()
                       if isinstance(dtype, pd.ArrowDtype) and name in sources}
    assert sources and not any("source_dtype" in c
                               for c in documents[1]["schema"]["columns"])
    for document in documents:
        document.pop("checksum")
    assert documents[0] == documents[1]
    (from_arrow, messages_1), (from_plain, messages_2) = samples
    assert messages_1 == messages_2
    # the same records, each column in the dtype its table gave it
    assert from_arrow.dtypes.to_dict() == arrow.dtypes.to_dict()
    assert from_plain.dtypes.to_dict() == plain.dtypes.to_dict()
    pd.testing.assert_frame_equal(standard_columns(from_arrow), from_plain)


def _wide_base(seed=4):
    """A many-valued column whose rare values (55 records each) only the second
    discovery round releases at epsilon 1 (``tests/release``'s table)."""
    rng = np.random.default_rng(seed)
    wide = np.array(["common"] * 1200 + [f"w{k:02d}" for k in range(15) for _ in range(55)],
                    dtype=object)
    return pd.DataFrame({"a": rng.choice(["x", "y", "z"], wide.size),
                         "b": rng.choice(["u", "v"], wide.size), "wide": rng.permutation(wide)})


def _wide_release(frame, tmp_path, name):
    return _release(frame, "plain", tmp_path, name, epsilon=1.0, delta=1e-6)


@pytest.mark.parametrize("position", ["first", "last"])
@pytest.mark.parametrize("name,change", [
    ("a unique value", {"wide": "Reykjavik"}), ("a rare value again", {"wide": "w03"}),
    ("missing", {"wide": None}), ("a common value", {"wide": "common"})])
def test_second_discovery_round_neighbours_differ_only_in_dp_outputs(name, change, position,
                                                                     tmp_path):
    base = _wide_base()
    first = _wide_release(base, tmp_path, "a")
    assert any(m["name"] == "discovery of undeclared values, second round"
               for m in first[0]["privacy"]["mechanisms"])  # the round this battery is for
    second = _wide_release(_with_record(base, position, **change), tmp_path, "b")
    _check_neighbours(first, second)
    removed = base.drop(index=_row_index(base, position)).reset_index(drop=True)
    _check_neighbours(first, _wide_release(removed, tmp_path, "c"))


def _mid_base(seed=5):
    """A column of 50 values of 30 records each (below both the first round's
    threshold and the broad second round's at epsilon 4) beside six
    identifier-like columns: the mid column's frequency profile gives it an extra."""
    rng = np.random.default_rng(seed)
    mid = np.array([f"m{k:02d}" for k in range(50) for _ in range(30)], dtype=object)
    frame = {"mid": rng.permutation(mid)}
    for i in range(6):
        frame[f"id{i}"] = [f"r{i}-{k}" for k in rng.permutation(mid.size)]
    frame["a"] = rng.choice(["x", "y", "z"], mid.size)
    return pd.DataFrame(frame)


def _mid_release(frame, tmp_path, name):
    return _release(frame, "plain", tmp_path, name, epsilon=4.0, delta=1e-6)


@pytest.mark.parametrize("position", ["first", "last"])
@pytest.mark.parametrize("name,change", [
    ("a unique value", {"mid": "Reykjavik", "id0": "r0-new"}),
    ("a mid value again", {"mid": "m03", "id1": "r1-7"}), ("missing", {"mid": None})])
def test_second_round_extra_neighbours_differ_only_in_dp_outputs(name, change, position,
                                                                 tmp_path):
    base = _mid_base()
    first = _mid_release(base, tmp_path, "a")
    assert any(m["name"].startswith("discovery of undeclared values, second round (extra)")
               for m in first[0]["privacy"]["mechanisms"])  # the step this battery is for
    second = _mid_release(_with_record(base, position, **change), tmp_path, "b")
    _check_neighbours(first, second)
    removed = base.drop(index=_row_index(base, position)).reset_index(drop=True)
    _check_neighbours(first, _mid_release(removed, tmp_path, "c"))


@pytest.mark.parametrize("name", [name for name, _ in _csv_neighbours()
                                  if name.endswith(("(first)", "(middle)", "(last)"))
                                  or name == "remove a record"])
def test_cli_neighbours_without_a_header(name, tmp_path):
    # --no-header: the first line is a record, so the separator is "," unless --sep
    other = dict(_csv_neighbours())[name]
    first, out_1, err_1 = _cli_release(_csv_base(), tmp_path, "a", ["--no-header"],
                                       header=False)
    second, out_2, err_2 = _cli_release(other, tmp_path, "b", ["--no-header"], header=False)
    assert _public_part(first) == _public_part(second)
    assert [c["name"] for c in second["schema"]["columns"]] == [
        "column_1", "column_2", "column_3", "column_4"]
    assert (out_1, err_1) == (out_2, err_2)


# ------------------------- the view-based estimators (PriView, CALM)
# Their domain is declared (categories= and bounds=; a column read from the data
# is warned about as not public): a neighbour must change nothing but the DP
# outputs.  PriView's DP outputs are the value counts of its many-valued columns
# (and the merge of their rare values, which is computed from them), the record
# count that chooses the strength, the noisy views and all that derives from them;
# CALM's are the users' reports (the number of users is public in the local model).
_VIEW_CATEGORIES = {"code": list(range(14)), "kind": ["a", "b"], "size": ["S", "M", "L"]}
_VIEW_BOUNDS = {"age": (0, 90)}
# what a PriView release may change between neighbours: the mechanisms' outputs and
# their post-processing (a function of the outputs and the public domain alone)
_PRIVIEW_DP = {"value_counts_", "merged_values_", "merge_min_count_", "noisy_count_",
               "view_cardinalities_", "max_view_cells_", "view_size_", "strength_",
               "marginal_sets_", "noise_scale_", "noisy_views_", "views_", "view_set_",
               "n_records_", "n_postprocess_rounds_", "privacy_spent_",
               # mechanism="auto": the choice and its plan read the noisy record count
               "mechanism_", "planned_tables_", "plan_errors_", "rho_"}
_CALM_REPORTS = {"noisy_views_", "views_", "view_set_", "n_postprocess_rounds_"}


def _many_valued_table(n=800, seed=0):
    """A many-valued column ("code": 0..11 held, geometric, so that its last values
    are rare; 12 and 13 declared but held by no record) with small ones."""
    rng = np.random.default_rng(seed)
    code = np.minimum(rng.geometric(0.35, n) - 1, 11)
    return pd.DataFrame({
        "code": pd.Series([int(v) for v in code], dtype=object),
        "kind": pd.Series(rng.choice(["a", "b"], n), dtype="str"),
        "size": pd.Categorical(rng.choice(["S", "M", "L"], n), categories=["S", "M", "L"]),
        "age": rng.integers(0, 91, n).astype(np.int64),
    })


def _view_neighbours(position):
    """(name, table, neighbour): one record apart, the record at ``position``."""
    base = _many_valued_table()
    at = _row_index(base, position)
    counts = base["code"].value_counts()
    rare = int(counts.idxmin())  # a value merged at the default threshold
    assert counts[rare] < 10

    def plus(**values):
        return _with_record(base, position, **values)

    pairs = [
        ("a declared value no record holds", plus(code=13)),
        ("a rare value", plus(code=rare)),
        ("a frequent value", plus(code=0)),
        ("a rare value in a changed record", _changed(base, at, code=rare)),
        ("a rare value spelt as a float", plus(code=float(rare))),
        ("a rare value spelt as a numpy int32", plus(code=np.int32(rare))),
        ("a value spelt as a bool", plus(code=True)),
        ("a missing value (None)", plus(code=None)),
        ("a missing value (NaN)", plus(code=np.nan)),
        ("an all-missing record", plus(code=None, kind=None, size=None)),
        ("a record beyond the bounds", plus(age=500)),
        ("a record at the bounds", plus(age=0)),
        ("a removed record", base.drop(index=at).reset_index(drop=True)),
        ("a duplicate record", plus()),
    ]
    return [(name, base, other) for name, other in pairs]


@pytest.fixture(scope="module")
def view_neighbour_tables():
    return {(name, position): (table, other) for position in POSITIONS
            for name, table, other in _view_neighbours(position)}


def _fit_views(cls, frame, **params):
    synth = cls(categories=_VIEW_CATEGORIES, bounds=_VIEW_BOUNDS, allow_missing=True,
                random_state=0, **params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        synth.fit(frame)
        sample = synth.sample(60, random_state=1)
    return synth, sample, sorted((w.category.__name__, str(w.message)) for w in caught)


def _differing(first, second):
    """The fitted attributes (ending in ``_``) that differ between two estimators."""
    import pickle

    names = set(vars(first)) | set(vars(second))
    return {k for k in names if pickle.dumps(getattr(first, k, None))
            != pickle.dumps(getattr(second, k, None))}


def _check_view_samples(first, second):
    (_, sample_1, messages_1), (_, sample_2, messages_2) = first, second
    # the same dtypes, up to the documented switch of an integer column that receives a
    # missing value in its sample to pandas' nullable Int64 (a function of the sample)
    nullable = {c for c in sample_1 if sample_1[c].isna().any() != sample_2[c].isna().any()
                and {str(sample_1[c].dtype), str(sample_2[c].dtype)} == {"int64", "Int64"}}
    pd.testing.assert_series_equal(sample_1.dtypes.drop(list(nullable)),
                                   sample_2.dtypes.drop(list(nullable)))
    assert messages_1 == messages_2
    for sample in (sample_1, sample_2):  # nothing but declared values (and missing)
        for column, values in _VIEW_CATEGORIES.items():
            assert set(sample[column].dropna().tolist()) <= set(values)
        assert sample["age"].between(*_VIEW_BOUNDS["age"]).all()
    distinct = [[sorted(set(s[c].dropna().tolist()), key=repr) for c in s.columns]
                for s in (sample_1, sample_2)]
    assert [m for m in _spelling_mismatches(*distinct) if m[0] != "order"] == []


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian", "auto"])
@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name", [name for name, _, _ in _view_neighbours("last")])
def test_priview_neighbours_differ_only_in_dp_outputs(name, position, mechanism,
                                                      view_neighbour_tables):
    from dpsynth.release import PriViewSynthesizer
    from dpsynth.views import MergedValues

    table, other = view_neighbour_tables[name, position]
    first = _fit_views(PriViewSynthesizer, table, mechanism=mechanism)
    second = _fit_views(PriViewSynthesizer, other, mechanism=mechanism)
    (a, _, _), (b, _, _) = first, second
    assert _differing(a, b) <= _PRIVIEW_DP
    _check_view_samples(first, second)
    assert a.merge_columns_ == b.merge_columns_ == [0]  # from the declared domain
    for synth, frame in ((a, table), (b, other)):
        # the merge is a function of the released counts: the same merge from them alone
        again = MergedValues.from_counts(synth.value_counts_, synth.cardinalities_,
                                         synth.merge_min_count_)
        assert [None if g is None else g.tolist() for g in again.groups] == [
            None if g is None else g.tolist() for g in synth.merged_values_.groups]
        # one code per declared value and the public missing value, whatever the data
        assert len(synth.merged_values_.groups[0]) == len(_VIEW_CATEGORIES["code"]) + 1
        assert synth.merged_values_, "the rare values of 'code' are merged"
        # the marginal is over the declared values, expanded back from the merged code
        assert synth.marginal("code").shape == (len(_VIEW_CATEGORIES["code"]) + 1,)
    # the noise is pinned by the seed, not drawn from the data: the released value
    # counts differ by exactly the records' counts
    exact = [np.bincount(s._encode(f)[:, 0], minlength=int(s.cardinalities_[0]))
             for s, f in ((a, table), (b, other))]
    np.testing.assert_array_equal(b.value_counts_[0] - a.value_counts_[0],
                                  exact[1] - exact[0])
    # the accounting is public given the noise used (with "auto", chosen from the noisy
    # count: a DP output): the same epsilon, delta and mechanisms
    for synth in (a, b):
        expected = {"epsilon": 1.0, "delta": 0.0} if synth.mechanism_ == "laplace" else {
            "epsilon": pytest.approx(1.0, rel=1e-9), "delta": 1e-9}
        for key in ("epsilon", "delta"):
            assert synth.privacy_spent_[key] == expected[key]
    assert [m.name for m in a.privacy_spent_.mechanisms][:2] == [
        m.name for m in b.privacy_spent_.mechanisms][:2]


def _data_free_mechanisms(monkeypatch):
    """Replace PriView's mechanisms by outputs drawn from their seeded streams alone
    (as if every DP output were the same for both neighbours)."""
    from dpsynth.release import priview

    def measure(values, epsilon, rng, noise="discrete", sensitivity=1.0):
        return rng.integers(0, 60, size=np.shape(values)).astype(float)

    def count(count, epsilon, rng, noise="continuous"):
        return float(rng.integers(100, 100_000))

    def gaussian(values, sigma, rng, noise="discrete"):
        if np.size(values) == 1:  # the record count (no table here has one cell)
            return np.array([count(0, 1.0, rng)]), sigma
        return measure(values, 1.0, rng), sigma

    monkeypatch.setattr(priview, "laplace_measure", measure)
    monkeypatch.setattr(priview, "laplace_count", count)
    monkeypatch.setattr(priview, "gaussian_measure", gaussian)


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian", "auto"])
@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name", [name for name, _, _ in _view_neighbours("last")])
def test_priview_release_is_a_function_of_its_dp_outputs(name, position, mechanism,
                                                         monkeypatch, view_neighbour_tables):
    # with the mechanisms' outputs equal, the two fitted estimators (every attribute,
    # the pickled object) and their samples must be identical: whatever else differs
    # was read from the records
    import pickle

    from dpsynth.release import PriViewSynthesizer

    _data_free_mechanisms(monkeypatch)
    table, other = view_neighbour_tables[name, position]
    first = _fit_views(PriViewSynthesizer, table, mechanism=mechanism)
    second = _fit_views(PriViewSynthesizer, other, mechanism=mechanism)
    (a, sample_1, _), (b, sample_2, _) = first, second
    assert a.merged_values_ and a.merge_columns_ == [0]  # the merge step ran
    assert _differing(a, b) == set()
    assert pickle.dumps(a) == pickle.dumps(b)
    _check_view_samples(first, second)
    pd.testing.assert_frame_equal(sample_1, sample_2)
    pd.testing.assert_frame_equal(a.marginal(["code", "size"], as_frame=True),
                                  b.marginal(["code", "size"], as_frame=True))


def _equal_size_view_neighbours(position):
    """CALM's neighbours with as many users: the base plus a duplicate of a record
    against the base plus each other record (the number of users is public)."""
    base = _many_valued_table()
    duplicate = _with_record(base, position)
    return [(name, duplicate, other) for name, _, other in _view_neighbours(position)
            if len(other) == len(duplicate) and name != "a duplicate record"]


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("name", [name for name, _, _ in _equal_size_view_neighbours("last")])
def test_calm_neighbours_differ_only_in_the_reports(name, position, monkeypatch):
    import pickle

    from dpsynth.local import CALMSynthesizer

    table, other = dict((n, (t, o)) for n, t, o in _equal_size_view_neighbours(position))[name]
    first = _fit_views(CALMSynthesizer, table)
    second = _fit_views(CALMSynthesizer, other)
    assert _differing(first[0], second[0]) <= _CALM_REPORTS
    _check_view_samples(first, second)

    # with reports that do not depend on the records, nothing differs at all
    def reports(self, codes, group, rng):
        cells = int(np.prod([self.cardinalities_[a] for a in self.marginal_sets_[group]]))
        return self.oracles_[group].perturb(rng.integers(0, cells, len(codes)), rng)

    monkeypatch.setattr(CALMSynthesizer, "_perturb_codes", reports)
    first = _fit_views(CALMSynthesizer, table)
    second = _fit_views(CALMSynthesizer, other)
    assert pickle.dumps(first[0]) == pickle.dumps(second[0])
    pd.testing.assert_frame_equal(first[1], second[1])
    assert first[2] == second[2]


@pytest.mark.parametrize("position", POSITIONS)
def test_calm_one_more_user_changes_only_what_the_number_of_users_sets(position):
    from dpsynth.local import CALMSynthesizer

    base = _many_valued_table()
    rare = int(base["code"].value_counts().idxmin())
    first = _fit_views(CALMSynthesizer, base)
    second = _fit_views(CALMSynthesizer, _with_record(base, position, code=rare))
    # n is public in the local model: the plan, the groups and the record count follow it
    planned = CALMSynthesizer(categories=_VIEW_CATEGORIES, bounds=_VIEW_BOUNDS,
                              allow_missing=True, random_state=0).plan(
        len(base) + 1, {c: v for c, v in _VIEW_CATEGORIES.items()} | {"age": [0, 90]})
    assert second[0].marginal_sets_ == planned.marginal_sets_
    assert second[0].n_records_ == len(base) + 1
    assert _differing(first[0], second[0]) <= _CALM_REPORTS | {
        "n_records_", "group_sizes_", "ell_", "n_marginals_", "marginal_sets_", "oracles_",
        "privacy_spent_"}
    _check_view_samples(first, second)
