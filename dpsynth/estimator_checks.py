"""Checks of the ``sample`` contract of dpsynth synthesizers.

scikit-learn's common checks (:func:`sklearn.utils.estimator_checks.parametrize_with_checks`)
never call ``sample``.  These checks cover it, in the style of
imbalanced-learn's ``imblearn/utils/estimator_checks.py``: each check is a
function ``check(name, synthesizer_orig)`` that clones the synthesizer, fits it
on a fixed mixed-dtype table and raises an ``AssertionError`` when the
contract is broken.

The table has 1000 rows and the columns ``color`` (``str`` with missing
values), ``size`` (ordered ``category``), ``count`` (``int64``), ``flag``
(``bool``), ``score`` (``float64`` with three values and missing ones),
``level`` (``Int64`` with ``pd.NA``) and ``age`` (``int64`` in 0..99).  Its
columns depend on each other, so a release at the default budget keeps
combinations of every length; the target ``label`` (``str``) depends on them
too.  The synthesizer's encoder (``TableEncoder()`` when ``encoder=None``) is
cloned and given public bounds for ``age``, which is binned; its other
parameters (e.g. ``missing``) are kept.  The reproducibility checks give a
synthesizer without ``random_state`` the seed 0.

Use :func:`parametrize_with_sample_checks` in a test module::

    @parametrize_with_sample_checks([DPMarginalSynthesizer(random_state=0)])
    def test_sample(estimator, check):
        check(estimator)
"""

import math
import pickle
from functools import partial
from itertools import combinations
from unittest import SkipTest

import numpy as np
import pandas as pd
from sklearn.base import clone

from .preprocessing import TableEncoder

__all__ = [
    "check_no_param_mutation_on_refit",
    "check_privacy_accounting",
    "check_sample_clone_refit",
    "check_sample_combinations_released",
    "check_sample_dtypes_roundtrip",
    "check_sample_ndarray_in_out",
    "check_sample_pickle_roundtrip",
    "check_sample_reproducible",
    "check_sample_shape_and_columns",
    "check_sample_with_target",
    "check_sample_within_released_domain",
    "parametrize_with_sample_checks",
]

_N_ROWS = 1000
_AGE_BOUNDS = (0, 99)


def _table(seed=0):
    """The check table (see the module docstring) and a string target."""
    rng = np.random.RandomState(seed)
    group = rng.randint(0, 3, _N_ROWS)
    noise = rng.randint(0, 2, _N_ROWS)
    color = pd.Series(np.array(["red", "green", "blue"])[group], dtype="str")
    level = pd.array(group * 10, dtype="Int64")
    level[rng.rand(_N_ROWS) < 0.1] = pd.NA
    X = pd.DataFrame({
        "color": color.where(rng.rand(_N_ROWS) > 0.05),
        "size": pd.Categorical(np.array(["S", "M", "L"])[(group + noise) % 3],
                               categories=["S", "M", "L"], ordered=True),
        "count": (group + noise).astype(np.int64),
        "flag": (group == 0) ^ (rng.rand(_N_ROWS) < 0.1),
        "score": pd.Series(np.array([0.5, 1.5, 2.5])[group]).where(rng.rand(_N_ROWS) > 0.1),
        "level": level,
        "age": (group * 30 + rng.randint(0, 30, _N_ROWS)).astype(np.int64),
    })
    y = pd.Series(np.where((group == 2) ^ (rng.rand(_N_ROWS) < 0.1), "high", "low"),
                  name="label", dtype="str")
    return X, y


def _seeded(synthesizer):
    """A clone with an int ``random_state`` (0 if it had none)."""
    synthesizer = clone(synthesizer)
    if synthesizer.get_params()["random_state"] is None:
        synthesizer.set_params(random_state=0)
    return synthesizer


def _prepare(synthesizer_orig, **encoder_params):
    """A clone whose encoder bins ``age`` within public bounds."""
    synthesizer = clone(synthesizer_orig)
    encoder = synthesizer.get_params()["encoder"]
    encoder = TableEncoder() if encoder is None else clone(encoder)
    encoder.set_params(bounds={"age": _AGE_BOUNDS}, **encoder_params)
    return synthesizer.set_params(encoder=encoder)


def _nullable(dtype):
    """The pandas nullable dtype a NumPy int/bool column becomes when it gets missing cells."""
    if isinstance(dtype, np.dtype) and dtype.kind == "b":
        return pd.BooleanDtype()
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        prefix = "UInt" if dtype.kind == "u" else "Int"
        return pd.api.types.pandas_dtype(f"{prefix}{dtype.itemsize * 8}")
    return dtype


def _assert_frames_equal(left, right, what):
    try:
        pd.testing.assert_frame_equal(left, right)
    except AssertionError as exc:
        raise AssertionError(f"{what}: {exc}") from None


def check_sample_shape_and_columns(name, synthesizer_orig):
    """``sample(n)`` has n rows and the training columns in order; ``sample()`` ``n_records_``."""
    X, _ = _table()
    synthesizer = _prepare(synthesizer_orig).fit(X)
    for n_samples in (1, 257):
        sample = synthesizer.sample(n_samples)
        assert isinstance(sample, pd.DataFrame), (
            f"{name}.sample must return a DataFrame after fitting on one; got "
            f"{type(sample).__name__}.")
        assert sample.shape == (n_samples, X.shape[1]), (
            f"{name}.sample({n_samples}) has shape {sample.shape}.")
        assert list(sample.columns) == list(X.columns), (
            f"{name}.sample columns {list(sample.columns)} differ from {list(X.columns)}.")
    assert len(synthesizer.sample()) == synthesizer.n_records_, (
        f"{name}.sample() must return n_records_ rows.")
    assert synthesizer.sample(0).shape == (0, X.shape[1]), (
        f"{name}.sample(0) must return an empty table with the training columns.")


def check_sample_dtypes_roundtrip(name, synthesizer_orig):
    """DataFrame in, DataFrame out with the training dtypes.

    With ``missing="absent"`` (any cell may be empty) a NumPy ``int``/``bool``
    column always becomes the matching nullable dtype (``Int64``/``boolean``),
    whatever the sample holds; every other dtype is kept exactly.  A
    categorical column's categories are its public values (declared or
    released, among the training ones, in their order), then the other label
    of a column whose values were not declared.
    """
    X, _ = _table()
    synthesizer = _prepare(synthesizer_orig).fit(X)
    sample = synthesizer.sample()
    absent = synthesizer.encoder_.missing == "absent"
    for column in X.columns:
        expected, got = X[column].dtype, sample[column].dtype
        allowed = {_nullable(expected) if absent else expected}
        assert got in allowed or (isinstance(expected, pd.CategoricalDtype)
                                  and isinstance(got, pd.CategoricalDtype)), (
            f"{name}.sample changed the dtype of {column!r} from {expected} to {got}.")
        if isinstance(expected, pd.CategoricalDtype):
            # the public values (in their order), then the other label of an undeclared column
            public = synthesizer.aggregates_.schema[list(X.columns).index(column)]
            assert list(got.categories) == [v for v in public.decoded_values
                                            if v is not None], (
                f"{name}.sample changed the categories of {column!r}: {got}.")
            assert got.ordered == expected.ordered and set(public.values) <= set(
                expected.categories), (
                f"{name}.sample changed the categories of {column!r}: {got} != {expected}.")


def check_sample_with_target(name, synthesizer_orig):
    """Fitted with ``y``, ``sample`` returns ``(X, y)``: y named and typed as at fit."""
    X, y = _table()
    synthesizer = _prepare(synthesizer_orig).fit(X, y)
    sample = synthesizer.sample(100)
    assert isinstance(sample, tuple) and len(sample) == 2, (
        f"{name}.sample must return (X, y) after fit(X, y); got {type(sample).__name__}.")
    X_syn, y_syn = sample
    assert list(X_syn.columns) == list(X.columns), (
        f"{name}.sample's X has columns {list(X_syn.columns)}; expected {list(X.columns)}.")
    assert isinstance(y_syn, pd.Series) and y_syn.name == y.name, (
        f"{name}.sample's y must be a Series named {y.name!r}.")
    assert len(X_syn) == len(y_syn) == 100, f"{name}.sample's X and y lengths differ from 100."
    assert y_syn.dtype == y.dtype, f"{name}.sample's y has dtype {y_syn.dtype}, not {y.dtype}."
    assert set(y_syn.dropna()) <= set(y), f"{name}.sample's y has labels not in y."


def check_sample_ndarray_in_out(name, synthesizer_orig):
    """ndarray in, ndarray out, with values seen in training (or missing)."""
    X, y = _table()
    array = np.column_stack([X["count"].to_numpy(), X["age"].to_numpy() // 10])
    synthesizer = clone(synthesizer_orig).fit(array, y.to_numpy())
    X_syn, y_syn = synthesizer.sample(50)
    assert isinstance(X_syn, np.ndarray) and X_syn.shape == (50, 2), (
        f"{name}.sample must return an ndarray of shape (50, 2) after fitting on one; "
        f"got {type(X_syn).__name__} of shape {np.shape(X_syn)}.")
    assert isinstance(y_syn, np.ndarray) and y_syn.shape == (50,), (
        f"{name}.sample's y must be an ndarray of shape (50,).")
    for j in range(2):
        values = pd.Series(X_syn[:, j]).dropna()
        assert set(values) <= set(array[:, j]), (
            f"{name}.sample's column {j} has values never seen in training.")


def check_sample_reproducible(name, synthesizer_orig):
    """An int ``random_state`` fixes the fit and the default draws.

    Two fits with the same ``random_state`` release the same aggregates and
    draw the same rows; repeated ``sample()`` calls return the same rows
    (``GaussianMixture`` semantics); ``sample(random_state=s)`` is
    reproducible, differs between seeds and never changes what was fitted.
    """
    X, _ = _table()
    synthesizer_orig = _seeded(synthesizer_orig)
    first = _prepare(synthesizer_orig).fit(X)
    second = _prepare(synthesizer_orig).fit(X)
    assert first.aggregates_.to_dict() == second.aggregates_.to_dict(), (
        f"{name}: two fits with random_state={synthesizer_orig.random_state} released "
        "different aggregates.")
    _assert_frames_equal(first.sample(), second.sample(),
                         f"{name}: two fits with the same random_state sample differently")
    _assert_frames_equal(first.sample(), first.sample(),
                         f"{name}: repeated sample() calls differ")
    released = first.aggregates_.to_dict()
    _assert_frames_equal(first.sample(random_state=1), first.sample(random_state=1),
                         f"{name}: sample(random_state=1) is not reproducible")
    assert not first.sample(random_state=1).equals(first.sample(random_state=2)), (
        f"{name}: sample(random_state=1) and sample(random_state=2) are identical.")
    assert first.aggregates_.to_dict() == released, (
        f"{name}: sample(random_state=...) changed the fitted aggregates.")


def check_sample_clone_refit(name, synthesizer_orig):
    """``clone`` of a fitted synthesizer, refitted on the same data, samples the same rows."""
    X, _ = _table()
    synthesizer_orig = _seeded(synthesizer_orig)
    fitted = _prepare(synthesizer_orig).fit(X)
    refitted = clone(fitted).fit(X)
    assert not hasattr(clone(fitted), "aggregates_"), f"clone({name}) kept fitted state."
    _assert_frames_equal(fitted.sample(), refitted.sample(),
                         f"{name}: clone + refit samples differently")


def check_sample_pickle_roundtrip(name, synthesizer_orig):
    """A pickled and unpickled fitted synthesizer samples the same rows and keeps its release."""
    X, _ = _table()
    fitted = _prepare(synthesizer_orig).fit(X)
    restored = pickle.loads(pickle.dumps(fitted))
    assert restored.aggregates_.to_dict() == fitted.aggregates_.to_dict(), (
        f"{name}: the aggregates changed through pickle.")
    assert restored.privacy_spent_ == fitted.privacy_spent_, (
        f"{name}: privacy_spent_ changed through pickle.")
    for seed in (3, 4):
        _assert_frames_equal(restored.sample(random_state=seed),
                             fitted.sample(random_state=seed),
                             f"{name}: the unpickled synthesizer samples differently")


def _released_ids(synthesizer, sample):
    """Attribute ids of the sample's cells under the public encoder (-1: empty cell)."""
    encoder = synthesizer.aggregates_.encoder
    try:
        codes = encoder._transform(sample)
    except ValueError as exc:  # a value outside the public schema
        raise AssertionError(f"The sample leaves the released domain: {exc}") from None
    # a column with an other value encodes every value outside its list as other:
    # a synthetic one must be the other label itself (or missing, without a label)
    for j, column in enumerate(encoder.schema_):
        if not column.other:
            continue
        series = sample[column.name]
        outside = (codes[:, j] == len(column.values)) & series.notna().to_numpy()
        if column.other_label is not None:
            outside &= (series.astype(object) != column.other_label).to_numpy()
        if outside.any():
            raise AssertionError(
                f"The sample leaves the released domain: column {column.name!r} has the "
                f"value {series[outside].iloc[0]!r}, neither released nor its other label "
                f"{column.other_label!r}.")
    return encoder.schema_.ids(codes)


def _public_values(schema):
    """Mask over attribute ids: declared (public) non-missing values, e.g. bins."""
    public = np.zeros(schema.n_attributes, dtype=bool)
    for j, column in enumerate(schema):
        if column.declared:
            start = schema.offsets[j]
            public[start:start + len(column.values)] = True
    return public


def check_sample_within_released_domain(name, synthesizer_orig):
    """Every synthetic value is in the released domain.

    A sample of 5000 records is encoded with the aggregates' public encoder,
    which knows only the released values and the declared public ones (such
    as the bins of ``age``): any other value fails.  Each cell must moreover
    be a released 1-way attribute, except a public value, whose count may
    have been suppressed without meaning "never": a missing value, or a
    value learned from the data, is synthesized only if released.  Cells are
    empty only with ``missing="absent"``, and ``age`` stays in its bounds.
    """
    X, _ = _table()
    synthesizer = _prepare(synthesizer_orig).fit(X)
    sample = synthesizer.sample(5 * _N_ROWS)
    ids = _released_ids(synthesizer, sample)
    schema = synthesizer.aggregates_.schema
    allowed = _public_values(schema)
    if synthesizer.aggregates_.tuples:  # sparse counts: the released 1-tuples
        allowed[synthesizer.aggregates_.tuples[0][:, 0]] = True
    else:  # dense marginals: the public schema holds declared and released values only
        allowed |= schema.possible_attributes
    unreleased = np.unique(ids[(ids >= 0) & ~allowed[np.maximum(ids, 0)]])
    assert not unreleased.size, (
        f"{name}.sample produced {unreleased.size} unreleased (column, value) pair(s) "
        f"(None: missing), e.g. {[schema.attribute_name(a) for a in unreleased[:5]]}.")
    if synthesizer.encoder_.missing == "category":
        assert (ids >= 0).all(), f"{name}.sample left cells empty with missing='category'."
    low, high = _AGE_BOUNDS
    assert sample["age"].dropna().between(low, high).all(), (
        f"{name}.sample put 'age' outside its public bounds {_AGE_BOUNDS}.")


def check_sample_combinations_released(name, synthesizer_orig):
    """Aggregate-seeded records hold only released combinations (``missing="absent"``).

    This is the guarantee of SDS's aggregate-seeded sampler: a record grows
    only through combinations of length <= R that the aggregates contain.
    It does not hold with ``missing="category"`` (records are completed
    column by column) nor for other ``synthesis`` methods, for which the
    check is skipped.
    """
    synthesis = synthesizer_orig.get_params().get("synthesis", "aggregate_seeded")
    missing = (synthesizer_orig.get_params()["encoder"] or TableEncoder()).missing
    if synthesis != "aggregate_seeded" or missing != "absent":
        raise SkipTest(f"{name}: only aggregate-seeded synthesis with missing='absent' "
                       f"keeps to released combinations (synthesis={synthesis!r}, "
                       f"missing={missing!r}).")
    X, _ = _table()
    synthesizer = _prepare(synthesizer_orig).fit(X)
    ids = _released_ids(synthesizer, synthesizer.sample())
    released = {tuple(row) for tuples in synthesizer.aggregates_.tuples
                for row in tuples.tolist()}
    for record in ids.tolist():
        present = sorted(a for a in record if a >= 0)
        for k in range(1, synthesizer.reporting_length_ + 1):
            for combination in combinations(present, k):
                assert combination in released, (
                    f"{name}.sample produced the unreleased combination "
                    f"{[synthesizer.aggregates_.schema.attribute_name(a) for a in combination]}.")


def check_privacy_accounting(name, synthesizer_orig):
    """``privacy_spent_["epsilon"]`` is the configured epsilon plus the encoder's binning epsilon.

    Fitted twice: with free (uniform) binning and with DP-quantile binning of
    ``age`` at ``binning_epsilon=0.5``.  A configured ``delta`` is reported
    as is, and the aggregates carry the same accounting.
    """
    X, _ = _table()
    epsilon = synthesizer_orig.get_params()["epsilon"]
    for binning, binning_epsilon in (("uniform", None), ("quantile", 0.5)):
        synthesizer = _prepare(synthesizer_orig, binning=binning,
                               binning_epsilon=binning_epsilon).fit(X)
        spent = synthesizer.privacy_spent_
        expected_binning = 0.0 if binning_epsilon is None else binning_epsilon
        assert math.isclose(synthesizer.encoder_.epsilon_spent_, expected_binning), (
            f"{name}: the encoder spent {synthesizer.encoder_.epsilon_spent_} on "
            f"binning; expected {expected_binning}.")
        assert math.isclose(spent["epsilon_binning"], expected_binning), (
            f"{name}: privacy_spent_['epsilon_binning'] = {spent['epsilon_binning']}.")
        assert math.isclose(spent["epsilon"], epsilon + expected_binning), (
            f"{name}: privacy_spent_['epsilon'] = {spent['epsilon']}; expected "
            f"epsilon + binning = {epsilon + expected_binning}.")
        assert math.isclose(spent["epsilon_records"] + spent["epsilon_marginals"], epsilon), (
            f"{name}: the record count and the marginals do not add up to epsilon.")
        if synthesizer.delta is not None:
            assert spent["delta"] == synthesizer.delta, (
                f"{name}: privacy_spent_['delta'] = {spent['delta']}, configured "
                f"{synthesizer.delta}.")
        assert 0 < spent["delta"] < 1, f"{name}: privacy_spent_['delta'] = {spent['delta']}."
        assert synthesizer.aggregates_.privacy == spent, (
            f"{name}: aggregates_.privacy differs from privacy_spent_.")


def _plain_params(estimator):
    """``get_params(deep=True)`` with nested estimators replaced by their identity."""
    return {key: ("estimator", id(value)) if hasattr(value, "get_params") else value
            for key, value in estimator.get_params(deep=True).items()}


def check_no_param_mutation_on_refit(name, synthesizer_orig):
    """Fitting twice leaves every parameter (nested ones too) as given, and the encoder unfitted.

    A DP library that lowers ``epsilon`` after spending it, or stores the
    fitted encoder in ``encoder``, would make a refit spend a different
    budget or leak fitted state into clones.
    """
    X, _ = _table()
    synthesizer = _prepare(synthesizer_orig)
    before = _plain_params(synthesizer)
    for _ in range(2):
        synthesizer.fit(X)
        after = _plain_params(synthesizer)
        changed = sorted(key for key in before if before[key] != after.get(key))
        assert not changed, f"{name}.fit changed the parameter(s) {changed}."
    encoder = synthesizer.get_params()["encoder"]
    assert not hasattr(encoder, "schema_"), (
        f"{name}.fit fitted the encoder passed as a parameter; fit a clone (encoder_).")


def _yield_sample_checks():
    yield check_sample_shape_and_columns
    yield check_sample_dtypes_roundtrip
    yield check_sample_with_target
    yield check_sample_ndarray_in_out
    yield check_sample_reproducible
    yield check_sample_clone_refit
    yield check_sample_pickle_roundtrip
    yield check_sample_within_released_domain
    yield check_sample_combinations_released
    yield check_privacy_accounting
    yield check_no_param_mutation_on_refit


def parametrize_with_sample_checks(estimators, *, expected_failed_checks=None):
    """Pytest decorator running every ``sample`` check on every synthesizer.

    Like :func:`sklearn.utils.estimator_checks.parametrize_with_checks`, the
    test receives ``estimator`` and ``check`` (a callable of the estimator),
    is identified by the estimator's repr and the check's name, and expected
    failures are marked ``xfail`` with their reason.

    Parameters
    ----------
    estimators : list of estimator objects
        Unfitted synthesizers with an ``encoder`` parameter (a
        :class:`~dpsynth.preprocessing.TableEncoder` or None), e.g.
        ``DPMarginalSynthesizer(random_state=0)``.
    expected_failed_checks : callable, default=None
        ``expected_failed_checks(estimator) -> {check name: reason}``.

    Returns
    -------
    decorator : ``pytest.mark.parametrize``
    """
    import pytest  # optional: a test-time dependency, needed only to build the decorator

    cases = []
    for estimator in estimators:
        expected = {} if expected_failed_checks is None else expected_failed_checks(estimator)
        for check in _yield_sample_checks():
            marks = ([pytest.mark.xfail(reason=expected[check.__name__])]
                     if check.__name__ in expected else [])
            cases.append(pytest.param(estimator, partial(check, type(estimator).__name__),
                                      id=f"{estimator!r}-{check.__name__}", marks=marks))
    return pytest.mark.parametrize("estimator, check", cases)
