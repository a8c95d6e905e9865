"""Tests of dpsynth.model_selection: TrainOnSynthetic, pipelines, searches, privacy cost."""

import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import HuberRegressor, LogisticRegression, Ridge
from sklearn.model_selection import (
    GridSearchCV,
    LeaveOneOut,
    RandomizedSearchCV,
    RepeatedStratifiedKFold,
    ShuffleSplit,
    StratifiedKFold,
    check_cv,
    cross_val_score,
)
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier

from dpsynth import DPMarginalSynthesizer, PrivacyLeakWarning, TrainOnSynthetic
from dpsynth.accounting import DEFAULT_DELTA
from dpsynth.metrics import make_fidelity_scorer
from dpsynth.model_selection import search_privacy_cost
from dpsynth.preprocessing import DPKBinsDiscretizer, TableEncoder
from dpsynth.sampling import MarginalMatchingSampler


def _one_hot_logistic():
    return make_pipeline(OneHotEncoder(handle_unknown="ignore"), LogisticRegression())


def _categorical_dataset(n=3000, seed=0):
    """Six 4-valued features, each tilted towards ``label`` with probability 0.45."""
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 2, n)
    columns = {}
    for j in range(6):
        tilted = 2 * y + rng.randint(0, 2, n)
        columns[f"f{j}"] = np.array(list("abcd"))[
            np.where(rng.rand(n) < 0.45, tilted, rng.randint(0, 4, n))]
    X = pd.DataFrame(columns)
    return X, pd.Series(np.where(y == 1, "yes", "no"), name="label")


@pytest.fixture(scope="module")
def categorical():
    return _categorical_dataset()


@pytest.fixture(scope="module")
def with_age(categorical):
    """The categorical data plus an integer ``age`` (0..99) that depends on the label."""
    X, y = categorical
    rng = np.random.RandomState(1)
    age = 20 + 40 * (y == "yes").to_numpy() + rng.randint(0, 40, len(y))
    return X.assign(age=np.clip(age, 0, 99)), y


# ------------------------------------------------------------ TrainOnSynthetic
def test_fit_equals_manual_train_on_synthetic(categorical):
    X, y = categorical
    synthesizer = DPMarginalSynthesizer(epsilon=2.0, random_state=0)
    model = TrainOnSynthetic(_one_hot_logistic(), synthesizer, n_samples=500).fit(X, y)

    X_syn, y_syn = clone(synthesizer).fit(X, y).sample(500)
    labelled = y_syn.notna()  # records with a missing synthetic label are dropped
    manual = _one_hot_logistic().fit(X_syn[labelled], y_syn[labelled])
    np.testing.assert_array_equal(model.predict(X), manual.predict(X))
    np.testing.assert_allclose(model.predict_proba(X), manual.predict_proba(X))
    np.testing.assert_allclose(model.decision_function(X), manual.decision_function(X))
    np.testing.assert_allclose(model.predict_log_proba(X), manual.predict_log_proba(X))
    assert model.score(X, y) == manual.score(X, y)
    weights = np.linspace(0.1, 1.0, len(y))
    assert model.score(X, y, sample_weight=weights) == manual.score(X, y, sample_weight=weights)
    assert model.classes_.tolist() == ["no", "yes"]
    assert model.n_features_in_ == X.shape[1]
    assert model.feature_names_in_.tolist() == list(X.columns)
    assert model.synthesizer_.privacy_spent_["epsilon"] == 2.0
    # the parameters are cloned, never fitted
    assert not hasattr(synthesizer, "aggregates_")
    assert not hasattr(model.estimator, "classes_")
    # refitted on an array, the model forgets the column names
    assert not hasattr(model.fit(X.to_numpy(), y), "feature_names_in_")


def test_estimator_type_follows_the_inner_estimator(categorical):
    X, y = categorical
    synthesizer = DPMarginalSynthesizer(random_state=0)
    classifier = TrainOnSynthetic(_one_hot_logistic(), synthesizer)
    assert is_classifier(classifier) and not is_regressor(classifier)
    # GridSearchCV and cross_val_score therefore stratify and score accuracy
    assert isinstance(check_cv(3, y, classifier=is_classifier(classifier)), StratifiedKFold)

    regressor = TrainOnSynthetic(make_pipeline(OneHotEncoder(handle_unknown="ignore"), Ridge()),
                                 synthesizer)
    assert is_regressor(regressor) and not is_classifier(regressor)
    target = (y == "yes").astype(np.int64) * 10 + (X["f0"] == "c")
    fitted = regressor.fit(X, target)
    manual = fitted.estimator_
    assert fitted.score(X, target) == manual.score(X, target)  # R^2
    assert fitted.score(X, target) > 0.3
    assert not hasattr(fitted, "classes_")


def test_methods_follow_the_inner_estimator(categorical):
    X, y = categorical
    tree = TrainOnSynthetic(DecisionTreeClassifier(random_state=0),
                            DPMarginalSynthesizer(random_state=0))
    assert not hasattr(tree, "decision_function")
    assert hasattr(tree, "predict_proba")
    encoded = X.apply(lambda column: column.map(dict(zip("abcd", range(4)))))
    fitted = tree.fit(encoded, y)
    assert not hasattr(fitted, "decision_function")
    assert fitted.predict_proba(encoded).shape == (len(y), 2)


def test_fit_validates_y(categorical):
    X, y = categorical
    model = TrainOnSynthetic(_one_hot_logistic(), DPMarginalSynthesizer(random_state=0))
    with pytest.raises(ValueError, match="requires y to be passed"):
        model.fit(X, None)
    with pytest.raises(ValueError, match="Unknown label type"):
        model.fit(X, np.linspace(0, 1, len(y)))
    # a column vector is raveled, with scikit-learn's warning
    column = y.to_numpy().reshape(-1, 1)
    with pytest.warns(UserWarning, match="column-vector y"):
        raveled = clone(model).fit(X, column)
    np.testing.assert_array_equal(raveled.predict(X), clone(model).fit(X, y.to_numpy()).predict(X))


def test_fit_requires_a_synthesizer_returning_x_and_y(categorical):
    class WithoutTarget(DPMarginalSynthesizer):
        def sample(self, n_samples=None, *, random_state=None):
            return super().sample(n_samples, random_state=random_state)[0]

    X, y = categorical
    model = TrainOnSynthetic(_one_hot_logistic(), WithoutTarget(random_state=0))
    with pytest.raises(TypeError, match=r"must return \(X, y\)"):
        model.fit(X, y)


def test_a_suppressed_class_is_not_named_to_the_analyst(categorical):
    # privacy boundary, leak 8: the warning used to name the classes of the
    # real y that the DP release suppressed
    X, y = categorical
    y = y.copy()
    y.iloc[:3] = "rare"  # three records never clear the DP threshold
    model = TrainOnSynthetic(_one_hot_logistic(), DPMarginalSynthesizer(random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(X, y)
    assert model.classes_.tolist() == ["no", "yes"]


def test_warns_when_the_synthetic_labels_lose_a_released_class(categorical):
    X, y = categorical
    name = y.name if isinstance(y.name, str) else "y"
    encoder = TableEncoder(categories={name: ["no", "yes", "declared-but-absent"]})
    # a value estimated within 3 noise sd of zero is never synthesized (noise alone
    # puts a declared, absent value above 1 sd, the default, one time in six)
    sampler = MarginalMatchingSampler(min_count=3.0)
    model = TrainOnSynthetic(_one_hot_logistic(),
                             DPMarginalSynthesizer(encoder=encoder, synthesis=sampler,
                                                   random_state=0))
    with pytest.warns(UserWarning, match=r"lack 1 of the 3 released class\(es\) of y "
                                         r"\(\['declared-but-absent'\]\)"):
        model.fit(X, y)


def test_clone_round_trips(categorical):
    X, y = categorical
    model = TrainOnSynthetic(
        _one_hot_logistic(),
        DPMarginalSynthesizer(epsilon=2.0, encoder=TableEncoder(missing="absent"),
                              random_state=0),
        n_samples=800)
    cloned = clone(model)
    assert cloned.get_params()["n_samples"] == 800
    assert cloned.synthesizer is not model.synthesizer
    params = cloned.get_params(deep=True)
    assert params["synthesizer__epsilon"] == 2.0
    assert params["synthesizer__encoder__missing"] == "absent"
    assert params["estimator__logisticregression__C"] == 1.0
    cloned.set_params(synthesizer__epsilon=3.0, estimator__logisticregression__C=0.5)
    assert cloned.synthesizer.epsilon == 3.0 and model.synthesizer.epsilon == 2.0

    fitted = clone(model).fit(X, y)
    refitted = clone(fitted)
    assert not hasattr(refitted, "estimator_") and not hasattr(refitted, "synthesizer_")
    np.testing.assert_array_equal(refitted.fit(X, y).predict(X), fitted.predict(X))
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.predict(X), fitted.predict(X))


# ---------------------------------------------------------------- grid search
def test_grid_search_over_epsilon_is_a_train_on_synthetic_study(categorical):
    X, y = categorical
    search = GridSearchCV(
        TrainOnSynthetic(_one_hot_logistic(), DPMarginalSynthesizer(random_state=0)),
        {"synthesizer__epsilon": [0.5, 1, 4]}, cv=3).fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    # accuracy rises with epsilon towards train-on-real (about 0.87)
    real = cross_val_score(_one_hot_logistic(), X, y, cv=3).mean()
    assert np.isfinite(scores).all()
    assert scores[0] <= scores[2] + 0.01
    assert 0.8 < scores[2] <= real + 0.02
    best = search.best_params_["synthesizer__epsilon"]
    assert search.best_estimator_.synthesizer_.privacy_spent_["epsilon"] == best
    # the default score is the TSTR accuracy on the held-out real fold
    first = search.cv_results_["split0_test_score"][2]
    train, test = next(StratifiedKFold(3).split(X, y))
    model = clone(search.estimator).set_params(synthesizer__epsilon=4)
    assert model.fit(X.iloc[train], y.iloc[train]).score(X.iloc[test], y.iloc[test]) == first


def test_grid_search_over_reporting_length(categorical):
    X, y = categorical
    search = GridSearchCV(
        TrainOnSynthetic(_one_hot_logistic(), DPMarginalSynthesizer(random_state=0)),
        {"synthesizer__reporting_length": [1, 2]}, cv=3).fit(X, y)
    independent, pairwise = search.cv_results_["mean_test_score"]
    # R=1 releases no feature-label combination: the synthetic label is independent
    assert independent < 0.65
    assert pairwise > independent + 0.15


def test_grid_search_on_the_synthesizer_with_a_fidelity_scorer(categorical):
    X, _ = categorical
    grid = {"epsilon": [0.5, 4]}
    scorer = make_fidelity_scorer("marginal_tvd", k=2)
    search = GridSearchCV(DPMarginalSynthesizer(random_state=0), grid, scoring=scorer,
                          cv=3).fit(X)
    low, high = search.cv_results_["mean_test_score"]
    assert 0 < low < high <= 1
    assert search.best_params_ == {"epsilon": 4}
    # the synthesizer's own score (1 - mean 2-way TVD) works without a scorer
    default = GridSearchCV(DPMarginalSynthesizer(random_state=0), grid, cv=3).fit(X)
    low, high = default.cv_results_["mean_test_score"]
    assert 0 < low < high <= 1


def test_pipeline_with_binning_and_the_synthesizer(with_age):
    X, _ = with_age
    binning = ColumnTransformer(
        [("age", DPKBinsDiscretizer(4, bounds=(0, 99)), ["age"])],
        remainder="passthrough", verbose_feature_names_out=False).set_output(transform="pandas")
    pipeline = Pipeline([("bin", binning), ("synth", DPMarginalSynthesizer(random_state=0))])
    fitted = clone(pipeline).fit(X)
    synthesizer = fitted.named_steps["synth"]
    # the synthesizer saw the bin codes of age, never the ages
    assert set(synthesizer.sample(200)["age"]) <= {0, 1, 2, 3}
    assert 0.5 < fitted.score(X) <= 1
    search = GridSearchCV(pipeline, {"bin__age__n_bins": [2, 8]}, cv=3).fit(X)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert clone(search).get_params()["estimator__bin__age__n_bins"] == 4


def test_pipeline_with_binning_and_train_on_synthetic(with_age):
    X, y = with_age
    binning = ColumnTransformer(
        [("age", DPKBinsDiscretizer(4, bounds=(0, 99), strategy="quantile", epsilon=0.5,
                                    random_state=0), ["age"])],
        remainder="passthrough", verbose_feature_names_out=False).set_output(transform="pandas")
    pipeline = Pipeline([
        ("bin", binning),
        ("model", TrainOnSynthetic(_one_hot_logistic(), DPMarginalSynthesizer(random_state=0))),
    ])
    assert is_classifier(pipeline)
    search = GridSearchCV(pipeline, {"model__synthesizer__epsilon": [1, 4]}, cv=2).fit(X, y)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.best_score_ > 0.8
    # every fit pays for the DP quantiles and the synthesizer: each record is in
    # 1 of the 2 training folds, 1 * (1.5 + 4.5), plus the refit 0.5 + best epsilon
    refit = 0.5 + search.best_params_["model__synthesizer__epsilon"]
    with pytest.warns(PrivacyLeakWarning, match="fixed random_state"):
        assert search_privacy_cost(search)["epsilon"] == pytest.approx(6.0 + refit)


# -------------------------------------------------------- search privacy cost
def test_search_privacy_cost_hand_computed():
    synthesizer = DPMarginalSynthesizer(delta=1e-6)
    grid = {"epsilon": [0.1, 1, 10]}
    cost = search_privacy_cost(grid, estimator=synthesizer, cv=5)
    # each record is in 4 of the 5 training folds: 4 * (0.1 + 1 + 10) + 10 (refit)
    assert cost["epsilon"] == pytest.approx(54.4)
    assert cost["delta"] == pytest.approx(4 * 3e-6 + 1e-6)
    assert cost["n_candidates"] == 3 and cost["n_splits"] == 5
    assert cost["folds_per_record"] == 4
    assert cost["candidate_epsilons"] == [0.1, 1, 10]
    assert cost["refit_epsilon"] == 10 and cost["refit_delta"] == 1e-6
    without_refit = search_privacy_cost(grid, estimator=synthesizer, cv=5, refit=False)
    assert without_refit["epsilon"] == pytest.approx(44.4)
    assert without_refit["refit_epsilon"] == 0.0
    unfitted = search_privacy_cost(GridSearchCV(synthesizer, grid, cv=5))
    assert unfitted == cost


def test_search_privacy_cost_counts_the_default_delta_per_fit():
    # delta=None is the synthesizer's fixed default (1e-9), not a data-dependent
    # delta: 3 candidates, 5 folds (each record in 4) and a refit are 13 fits
    grid = {"epsilon": [0.1, 1, 10]}
    cost = search_privacy_cost(grid, estimator=DPMarginalSynthesizer(), cv=5)
    assert DPMarginalSynthesizer().delta is None and DEFAULT_DELTA == 1e-9
    assert cost["candidate_deltas"] == [DEFAULT_DELTA] * 3
    assert cost["refit_delta"] == DEFAULT_DELTA
    assert cost["delta"] == pytest.approx(1.3e-08)
    unfitted = search_privacy_cost(GridSearchCV(DPMarginalSynthesizer(), grid, cv=5))
    assert unfitted["delta"] == pytest.approx(1.3e-08)
    without_refit = search_privacy_cost(grid, estimator=DPMarginalSynthesizer(), cv=5,
                                        refit=False)
    assert without_refit["delta"] == pytest.approx(1.2e-08)
    assert without_refit["refit_delta"] == 0.0


def test_search_privacy_cost_of_train_on_synthetic_grids():
    model = TrainOnSynthetic(
        HuberRegressor(epsilon=1.35),  # a loss parameter, not a privacy budget
        DPMarginalSynthesizer(encoder=TableEncoder(bounds={"age": (0, 99)}, binning="quantile",
                                                   binning_epsilon=0.5)))
    grid = [{"synthesizer__epsilon": [1, 2]},
            {"synthesizer__epsilon": [3], "synthesizer__reporting_length": [2]}]
    cost = search_privacy_cost(grid, estimator=model, cv=3)
    # every fit adds the encoder's 0.5: 2 * (1.5 + 2.5 + 3.5) + 3.5
    assert cost["candidate_epsilons"] == [1.5, 2.5, 3.5]
    assert cost["epsilon"] == pytest.approx(18.5)
    # delta=None is the fixed default, counted per fit: 2 * 3 + 1 fits
    assert cost["candidate_deltas"] == [DEFAULT_DELTA] * 3
    assert cost["delta"] == pytest.approx(7 * DEFAULT_DELTA)
    # parameters outside the grid take the estimator's values (epsilon=4)
    by_length = search_privacy_cost({"synthesizer__reporting_length": [1, 2, 3]},
                                    estimator=model, cv=3)
    assert by_length["epsilon"] == pytest.approx(2 * 3 * 4.5 + 4.5)


@pytest.mark.parametrize("cv, folds", [
    (RepeatedStratifiedKFold(n_splits=4, n_repeats=2), 6),  # 2 repeats * 3 training folds
    (ShuffleSplit(n_splits=4), 4),  # a record may be in every training set
    (StratifiedKFold(n_splits=10), 9),
])
def test_search_privacy_cost_counts_the_training_sets_of_a_record(cv, folds):
    cost = search_privacy_cost({"epsilon": [1, 2]},
                               estimator=DPMarginalSynthesizer(delta=1e-7), cv=cv,
                               refit=False)
    assert cost["folds_per_record"] == folds
    assert cost["epsilon"] == pytest.approx(3 * folds)
    assert cost["delta"] == pytest.approx(2e-7 * folds)


def test_search_privacy_cost_of_a_fitted_search(categorical):
    X, y = categorical
    search = GridSearchCV(
        TrainOnSynthetic(_one_hot_logistic(), DPMarginalSynthesizer(delta=1e-6, random_state=0)),
        {"synthesizer__epsilon": [4, 2]}, cv=2).fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="same noise"):
        cost = search_privacy_cost(search)
    best = search.best_estimator_.synthesizer_.privacy_spent_
    # the refit is charged the best candidate, as actually spent
    assert cost["refit_epsilon"] == best["epsilon"] == search.best_params_["synthesizer__epsilon"]
    assert cost["refit_delta"] == best["delta"] == 1e-6
    assert cost["epsilon"] == pytest.approx(1 * 6 + best["epsilon"])
    assert cost["delta"] == pytest.approx(1 * 2e-6 + 1e-6)


def test_search_privacy_cost_of_a_fitted_randomized_search(categorical):
    X, _ = categorical
    search = RandomizedSearchCV(
        DPMarginalSynthesizer(delta=1e-6),
        {"epsilon": [1, 2, 4, 8], "reporting_length": [2, 3]}, n_iter=3, cv=2,
        random_state=0).fit(X)
    cost = search_privacy_cost(search)
    epsilons = [params["epsilon"] for params in search.cv_results_["params"]]
    assert cost["candidate_epsilons"] == epsilons
    assert cost["refit_epsilon"] == search.best_params_["epsilon"]
    assert cost["epsilon"] == pytest.approx(sum(epsilons) + search.best_params_["epsilon"])


def test_search_privacy_cost_warns_about_shared_noise():
    grid = {"synthesizer__epsilon": [1, 2]}
    fresh = TrainOnSynthetic(LogisticRegression(random_state=0), DPMarginalSynthesizer())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a seeded model costs nothing: no warning
        search_privacy_cost(grid, estimator=fresh)
    for seeded in (clone(fresh).set_params(synthesizer__random_state=0),
                   DPMarginalSynthesizer(encoder=TableEncoder(
                       bounds={"age": (0, 99)}, binning="quantile", binning_epsilon=0.1,
                       random_state=np.random.RandomState(0)))):
        with pytest.warns(PrivacyLeakWarning, match="use random_state=None"):
            search_privacy_cost({}, estimator=seeded)


def test_search_privacy_cost_errors():
    synthesizer = DPMarginalSynthesizer()
    grid = {"epsilon": [1, 2]}
    with pytest.raises(ValueError, match="pass estimator="):
        search_privacy_cost(grid)
    with pytest.raises(ValueError, match="estimator is taken from the search"):
        search_privacy_cost(GridSearchCV(synthesizer, grid), estimator=synthesizer)
    with pytest.raises(ValueError, match="does not list its candidates"):
        search_privacy_cost(RandomizedSearchCV(synthesizer, grid, n_iter=2))
    with pytest.raises(ValueError, match="depends on the data"):
        search_privacy_cost(grid, estimator=synthesizer, cv=LeaveOneOut())
    with pytest.raises(ValueError, match="depends on the data"):
        search_privacy_cost(GridSearchCV(synthesizer, grid, cv=LeaveOneOut()))
    with pytest.raises(ValueError, match="Found no dpsynth mechanism"):
        search_privacy_cost({"C": [1, 2]}, estimator=LogisticRegression())
    assert math.isinf(search_privacy_cost({"epsilon": [1, math.inf]},
                                          estimator=synthesizer)["epsilon"])


# ------------------------------------------------ complete columns, other values
def _many_valued_dataset(n=4000, seed=0):
    """A complete 87-valued column (one frequent value, 86 rare ones) and a label."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "country": rng.choice([f"c{i:02d}" for i in range(87)], n,
                              p=np.r_[[0.3], [0.7 / 86] * 86]),
        "sex": rng.choice(["M", "F"], n),
        "work": rng.choice(["a", "b", "c", "d"], n)}, dtype=object)
    y = pd.Series(np.where((X["sex"] == "M") ^ (rng.random(n) < 0.2), "yes", "no"),
                  name="label")
    return X, y


def test_a_complete_many_valued_column_comes_back_without_missing_values():
    X, _ = _many_valued_dataset()
    for epsilon in (0.5, 4.0):
        synth = DPMarginalSynthesizer(epsilon=epsilon, random_state=0).fit(X)
        out = synth.sample()
        assert abs(len(out) - len(X)) < 0.03 * len(X)
        assert out.isna().to_numpy().mean() < 0.005  # up to noise: the min_count rule
        released = set(synth.aggregates_.schema[0].values)
        real_other = (~X["country"].isin(released)).mean()
        assert abs((out["country"] == "<other>").mean() - real_other) < 0.03
        if epsilon == 0.5:  # few values clear the threshold: the rest is other
            assert real_other > 0.3


def test_grid_search_on_a_complete_table_with_categorical_naive_bayes():
    from sklearn.naive_bayes import CategoricalNB
    from sklearn.preprocessing import OrdinalEncoder

    X, y = _many_valued_dataset()
    model = TrainOnSynthetic(
        make_pipeline(OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=88),
                      CategoricalNB(min_categories=89)),
        DPMarginalSynthesizer(random_state=0))
    search = GridSearchCV(model, {"synthesizer__epsilon": [0.5, 4.0]}, cv=3,
                          error_score="raise").fit(X, y)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.best_score_ > 0.7  # the label follows sex, 80% of the time


def test_records_labelled_other_are_not_a_class():
    X, y = _categorical_dataset(2000)
    y = y.where(np.arange(len(y)) % 10 != 0, pd.Series([f"rare{i}" for i in range(len(y))]))
    model = TrainOnSynthetic(_one_hot_logistic(),
                             DPMarginalSynthesizer(epsilon=2.0, random_state=0)).fit(X, y)
    assert model.synthesizer_.aggregates_.schema[-1].other
    assert sorted(model.classes_) == ["no", "yes"]


def test_a_release_without_any_class_is_a_clear_error():
    rng = np.random.RandomState(0)
    X = pd.DataFrame({"a": rng.choice(["x", "y"], 30), "b": rng.choice(["u", "v"], 30)})
    y = pd.Series(rng.randint(0, 2, 30), name="t")
    model = TrainOnSynthetic(_one_hot_logistic(), DPMarginalSynthesizer(random_state=0))
    with pytest.warns(UserWarning, match="dominated by its noise"), \
            pytest.raises(ValueError, match="published no class of y.*'t'"):
        model.fit(X, y)


def test_train_on_synthetic_takes_a_target_with_missing_labels():
    # records whose synthetic label is missing are dropped before training: a real
    # target with some missing labels is no error of scikit-learn's label check
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(["u", "v"], 1500), "b": rng.choice(["p", "q"], 1500)})
    y = pd.Series(rng.choice(["yes", "no"], 1500), name="target", dtype=object)
    y[:20] = None
    model = TrainOnSynthetic(make_pipeline(OneHotEncoder(handle_unknown="ignore"),
                                           LogisticRegression()),
                             DPMarginalSynthesizer(epsilon=2.0, random_state=0)).fit(X, y)
    assert set(model.predict(X)) <= {"yes", "no"}
    with pytest.raises(ValueError, match="Unknown label type"):  # continuous labels
        TrainOnSynthetic(LogisticRegression(), DPMarginalSynthesizer()).fit(
            X, pd.Series(rng.normal(size=1500)))


def test_an_integer_target_with_an_other_value_keeps_integer_classes():
    # a class the release does not publish decodes as missing in an int64 target (an
    # Int64 synthetic y); once those records are dropped the labels are int64 again,
    # not the floats scikit-learn makes of nullable labels
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(["u", "v"], 2000), "b": rng.choice(["p", "q"], 2000)})
    y = pd.Series(np.where(X["a"] == "u", 1, 0), name="t")
    y[:100] = np.arange(100, 200)  # each too rare to be released: their other value
    model = TrainOnSynthetic(make_pipeline(OneHotEncoder(handle_unknown="ignore"),
                                           DecisionTreeClassifier(random_state=0)),
                             DPMarginalSynthesizer(epsilon=4.0, random_state=0)).fit(X, y)
    _, y_syn = model.synthesizer_.sample()
    assert str(y_syn.dtype) == "Int64" and y_syn.isna().any()  # the case in question
    assert model.classes_.dtype.kind == "i" and model.classes_.tolist() == [0, 1]
    assert model.predict(X).dtype.kind == "i"
    assert model.score(X, y) >= 0.94  # the 100 rare labels cannot be predicted
    # an array y: its other value decodes as NaN in float64 labels, and the int64
    # declared by the array is given back to the labels kept
    codes = np.column_stack([(X["a"] == "u").to_numpy(int), (X["b"] == "p").to_numpy(int)])
    model = TrainOnSynthetic(DecisionTreeClassifier(random_state=0),
                             DPMarginalSynthesizer(epsilon=4.0, random_state=0))
    model.fit(codes, y.to_numpy())
    assert np.isnan(model.synthesizer_.sample()[1]).any()  # the case in question
    assert model.classes_.dtype.kind == "i" and model.classes_.tolist() == [0, 1]
    assert model.predict(codes).dtype.kind == "i"


def test_a_release_of_a_single_class_warns_before_the_estimator_refuses_it():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(["u", "v"], 1500), "b": rng.choice(["p", "q"], 1500)})
    y = pd.Series(np.where(np.arange(1500) < 20, "rare", "common"), name="t")
    model = TrainOnSynthetic(_one_hot_logistic(),
                             DPMarginalSynthesizer(epsilon=4.0, random_state=0))
    with pytest.warns(UserWarning, match=r"single class of y \('common'\).*"
                                         r"TableEncoder\(categories=\{'t': \[\.\.\.\]\}\)"), \
            pytest.raises(ValueError, match="at least 2 classes"):
        model.fit(X, y)
    with pytest.warns(UserWarning, match="single class of y"):  # a tree fits one class
        tree = TrainOnSynthetic(make_pipeline(OneHotEncoder(handle_unknown="ignore"),
                                              DecisionTreeClassifier()),
                                DPMarginalSynthesizer(epsilon=4.0, random_state=0)).fit(X, y)
    assert tree.classes_.tolist() == ["common"]


def test_a_target_named_after_a_column_of_x_is_renamed():
    # y = (X["c"] > 0) keeps the name "c": every fit of a search failed with
    # "y's name 'c' is also a column of X", a name no estimator sees here
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"c": rng.normal(size=1500), "y": rng.integers(0, 3, 1500)})
    y = (X["c"] > 0).astype(int)
    assert y.name == "c"
    model = TrainOnSynthetic(DecisionTreeClassifier(max_depth=2, random_state=0),
                             DPMarginalSynthesizer(epsilon=4.0, random_state=0)).fit(X, y)
    assert model.synthesizer_.aggregates_.target == "y_0"  # "y" is taken too
    assert model.synthesizer_.aggregates_.column_names == ["c", "y", "y_0"]
    assert model.score(X, y) > 0.9 and y.name == "c"  # the caller's y is unchanged
    # an unnamed y beside a column "y" (it failed the same way)
    synth = DPMarginalSynthesizer(random_state=0).fit(X, y.to_numpy())
    assert synth.aggregates_.target == "y_0" and synth.sample(5)[1].name == "y_0"
