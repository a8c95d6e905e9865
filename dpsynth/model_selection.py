"""Model selection with synthesizers: train-on-synthetic studies and their privacy cost.

- :class:`TrainOnSynthetic`: a meta-estimator that fits a synthesizer on the
  training data, samples from it and fits a model on the synthetic rows only,
  so ``GridSearchCV(TrainOnSynthetic(...), {"synthesizer__epsilon": [...]})``
  is a train-on-synthetic, test-on-real (TSTR) study with scikit-learn alone.
- :func:`search_privacy_cost`: the total privacy budget a hyper-parameter
  search spends on its training data (basic composition over candidates,
  cross-validation folds and the final refit).

Scores computed on real data (every ``cv_results_`` entry, ``best_score_``,
``best_params_``) are *not* differentially private releases; see the user
guide page "Grid search over privacy parameters".
"""

import math
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.model_selection import (
    GridSearchCV,
    GroupKFold,
    KFold,
    LeaveOneGroupOut,
    LeaveOneOut,
    ParameterGrid,
    RepeatedKFold,
    RepeatedStratifiedKFold,
    StratifiedGroupKFold,
    StratifiedKFold,
    check_cv,
)
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .accounting import check_delta
from .exceptions import PrivacyLeakWarning
from .preprocessing import DPKBinsDiscretizer, TableEncoder
from .synthesizer import DPMarginalSynthesizer
from .utils._validation import check_target

__all__ = ["TrainOnSynthetic", "search_privacy_cost"]


def _target_column(synthesizer):
    """The target's :class:`~dpsynth.schema.Column` in a synthesizer's release (None:
    no release, or a release without a target)."""
    aggregates = getattr(synthesizer, "aggregates_", None)
    target = getattr(aggregates, "target", None)
    if target is None:
        return None
    return aggregates.schema[aggregates.column_names.index(target)]


def _other_label_of_target(synthesizer):
    """The label a synthesizer's other value of y decodes to (None: no such label)."""
    column = _target_column(synthesizer)
    return column.other_label if column is not None and column.other else None


def _target_dtype(synthesizer):
    """The declared dtype of the target in a synthesizer's release (None: unknown)."""
    column = _target_column(synthesizer)
    return None if column is None else column.dtype


def _estimator_has(attr):
    """``available_if`` check: the fitted (else the unfitted) inner estimator has ``attr``."""

    def check(self):
        if hasattr(self, "estimator_"):
            return hasattr(self.estimator_, attr)
        return hasattr(self.estimator, attr)

    return check


def _typed(synthetic):
    """An object array of synthetic values (from a list X or y, whose dtype is never
    inferred from the private values) typed from its own values, as scikit-learn's
    estimators expect; the synthetic data is a release, so this is post-processing."""
    if isinstance(synthetic, np.ndarray) and synthetic.dtype == object:
        if synthetic.ndim == 1:
            return pd.Series(synthetic, dtype=object).infer_objects().to_numpy()
        return pd.DataFrame(synthetic, dtype=object).infer_objects().to_numpy()
    return synthetic


def _plain_labels(y, declared=None):
    """Labels without missing ones in the target's declared NumPy integer or bool dtype
    (``declared``, the release schema's: public), else ``y`` of a nullable integer or
    boolean dtype in the matching NumPy dtype.  An ``int64`` target decodes as ``Int64``
    (or as ``float64`` from an array ``y``) when its other value (classes the release
    did not publish) decodes as missing, and scikit-learn reads nullable labels as
    floats: the classes were ``0.0, 1.0`` for a target of 0 and 1."""
    if pd.isna(np.asarray(y, dtype=object)).any():
        return y
    dtype = getattr(y, "dtype", None)
    if isinstance(declared, np.dtype) and declared.kind in "iub":
        target = declared
    elif isinstance(dtype, pd.api.extensions.ExtensionDtype) and dtype.kind in "iub":
        target = getattr(dtype, "numpy_dtype", None)
    else:
        return y
    try:
        values = np.asarray(y).astype(target)
    except (TypeError, ValueError):  # labels the dtype cannot hold: as they are
        return y
    if not (np.asarray(values, dtype=object) == np.asarray(y, dtype=object)).all():
        return y  # not each label's own value (a fraction): as they are
    if isinstance(y, pd.Series):
        return pd.Series(values, index=y.index, name=y.name)
    return values


class TrainOnSynthetic(MetaEstimatorMixin, BaseEstimator):
    """Fit an estimator on synthetic data drawn from a synthesizer of the training data.

    ``fit(X, y)`` fits a clone of ``synthesizer`` on ``(X, y)``, draws a
    synthetic ``(X_syn, y_syn)`` from it and fits a clone of ``estimator`` on
    the synthetic rows only.  Prediction and scoring are delegated to that
    estimator, so they run on *real* data: in cross-validation or
    :class:`~sklearn.model_selection.GridSearchCV` this is a train-on-synthetic,
    test-on-real (TSTR) study, e.g. of accuracy against ``epsilon``.

    The meta-estimator takes the type of ``estimator``: wrapping a classifier
    gives a classifier (``is_classifier`` is True, ``cross_val_score`` and
    ``GridSearchCV`` use stratified folds and accuracy), wrapping a regressor
    gives a regressor.

    Parameters
    ----------
    estimator : estimator object
        The model trained on synthetic data (cloned in ``fit``).  Synthetic
        columns keep the training dtypes, so categorical or string columns
        need encoding: use e.g. ``make_pipeline(OneHotEncoder(
        handle_unknown="ignore"), LogisticRegression())``;
        ``handle_unknown="ignore"`` matters because real test rows may hold
        values the synthetic data lack.
    synthesizer : estimator object
        An object with ``fit(X, y)`` and ``sample(n_samples)`` returning
        ``(X_syn, y_syn)`` when fitted with ``y``, such as
        :class:`~dpsynth.DPMarginalSynthesizer` (cloned in ``fit``).  Tune its
        parameters with the ``synthesizer__`` prefix.
    n_samples : int, default=None
        Number of synthetic records; ``None`` lets the synthesizer decide
        (:class:`~dpsynth.DPMarginalSynthesizer` draws its DP record count).
        Records whose synthetic label is missing are dropped before fitting
        the estimator (with ``TableEncoder(missing="absent")`` the sampler
        may leave any cell empty, the label's too), and so are those whose
        label is the other value (classes the release did not publish,
        see ``TableEncoder(other_label=...)``): neither is a class.

    Attributes
    ----------
    synthesizer_ : estimator object
        The fitted synthesizer; its ``privacy_spent_`` is the privacy cost of
        this fit.
    estimator_ : estimator object
        The estimator fitted on the synthetic data.
    classes_ : ndarray
        Classes of ``estimator_`` (classifiers only): those present in the
        synthetic labels, which may lack rare real classes.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of str
        Column names seen during ``fit`` (DataFrame input only).

    See Also
    --------
    dpsynth.metrics.tstr_score : the same study for one synthetic table.
    search_privacy_cost : privacy budget spent by a search over this estimator.

    Notes
    -----
    Each ``fit`` spends the synthesizer's privacy budget on its training
    data.  A grid search fits once per candidate and fold, plus a refit, and
    these costs add up (:func:`search_privacy_cost`).  The scores are
    computed on real data and are not differentially private.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> from dpsynth import DPMarginalSynthesizer, TrainOnSynthetic
    >>> rng = np.random.RandomState(0)
    >>> y = pd.Series(rng.choice(["no", "yes"], 1000), name="label")
    >>> X = pd.DataFrame({"a": np.where(rng.rand(1000) < 0.9, y, "other"),
    ...                   "b": rng.choice(["u", "v"], 1000)})
    >>> model = TrainOnSynthetic(
    ...     make_pipeline(OneHotEncoder(handle_unknown="ignore"), LogisticRegression()),
    ...     DPMarginalSynthesizer(epsilon=4.0, random_state=0)).fit(X, y)
    >>> model.classes_.tolist()
    ['no', 'yes']
    >>> bool(model.score(X, y) > 0.8)
    True
    """

    def __init__(self, estimator, synthesizer, *, n_samples=None):
        self.estimator = estimator
        self.synthesizer = synthesizer
        self.n_samples = n_samples

    def fit(self, X, y):
        """Fit the synthesizer on ``(X, y)`` and the estimator on its samples.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Training data (private).
        y : array-like of shape (n_samples,)
            Target, modelled jointly with ``X`` by the synthesizer (a
            Series's name becomes the synthetic target's name; one that names
            a column of ``X``, as ``X["c"] > 0`` does, becomes ``"y"``, or
            ``"y_0"``, ... if ``X`` has a column ``"y"``).  A column
            vector is raveled with a ``DataConversionWarning``.

        Returns
        -------
        self : TrainOnSynthetic
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        if is_classifier(self.estimator):  # the labels present (missing ones are dropped
            # from the synthetic table before the classifier is trained)
            labels = y if isinstance(y, pd.Series) else pd.Series(column_or_1d(y, warn=False))
            check_classification_targets(labels[labels.notna()].to_numpy())
        # a Series keeps its name (the target's column name); a list becomes an
        # object Series, since its dtype would be inferred from its values
        y = check_target(y)
        if isinstance(y.name, str) and y.name in [str(c) for c in getattr(X, "columns", ())]:
            # y = (X["income"] > 50000) keeps the name "income": the target's name is
            # the synthetic table's column name only, which no estimator sees here;
            # unnamed, it gets the synthesizer's free name ("y", "y_0", ...)
            y = y.rename(None)
        synthesizer = clone(self.synthesizer).fit(X, y)
        synthetic = synthesizer.sample(self.n_samples)
        if not (isinstance(synthetic, tuple) and len(synthetic) == 2):
            raise TypeError(
                f"{type(synthesizer).__name__}.sample must return (X, y) after fitting "
                f"with y; got {type(synthetic).__name__}."
            )
        X_syn, y_syn = synthetic
        labelled = ~np.asarray(pd.isna(y_syn), dtype=bool)
        other = _other_label_of_target(synthesizer)
        if other is not None:  # no class: the release did not publish that label
            labelled &= np.asarray(pd.Series(np.asarray(y_syn, dtype=object)) != other)
        if len(labelled) and not labelled.any():
            name = getattr(getattr(synthesizer, "aggregates_", None), "target", None) or "y"
            raise ValueError(
                f"None of the {len(labelled)} synthetic records has a label: the release "
                "published no class of y (see the synthesizer's warnings), so there is "
                "nothing to train the estimator on. Raise the synthesizer's epsilon, fit "
                "on more records, or declare the classes in its encoder, e.g. "
                f"TableEncoder(categories={{{name!r}: [...]}}).")
        labelled = np.flatnonzero(labelled)
        self.synthesizer_ = synthesizer
        if is_classifier(self.estimator):
            self._warn_single_class(synthesizer)
        y_fit = _typed(_safe_indexing(y_syn, labelled))
        if is_classifier(self.estimator):  # labels, not amounts
            y_fit = _plain_labels(y_fit, _target_dtype(synthesizer))
        self.estimator_ = clone(self.estimator).fit(_typed(_safe_indexing(X_syn, labelled)),
                                                    y_fit)
        self.n_features_in_ = synthesizer.n_features_in_
        if hasattr(synthesizer, "feature_names_in_"):
            self.feature_names_in_ = synthesizer.feature_names_in_
        elif hasattr(self, "feature_names_in_"):  # refitted on an array
            del self.feature_names_in_
        if is_classifier(self.estimator):
            self._warn_lost_classes(synthesizer)
        return self

    def _warn_single_class(self, synthesizer):
        """Warn, before the estimator sees them, that the release published one class of y.

        Many classifiers refuse a single class with a message about the
        training data only; this one names the cause and the fix.  The count
        is the *release*'s (declared or released by DP), as in
        :meth:`_warn_lost_classes`.
        """
        column = _target_column(synthesizer)
        if column is None:
            return
        released, target = list(column.values), column.name
        if len(released) == 1:
            warnings.warn(
                f"The release published a single class of y ({released[0]!r}): every "
                "labelled synthetic record has it, and many classifiers refuse to fit on "
                "one class. Raise the synthesizer's epsilon, fit on more records, or "
                "declare the classes in its encoder, e.g. "
                f"TableEncoder(categories={{{target!r}: [...]}}).", UserWarning)

    def _warn_lost_classes(self, synthesizer):
        """Warn about released classes of y that the synthetic labels lack.

        The comparison is with the classes of the *release* (declared, or
        released by DP), never with the real y: an analyst who sees this
        warning learns nothing beyond the DP release.
        """
        column = _target_column(synthesizer)
        if column is None:
            return
        released = list(column.values)
        known = set(pd.Series(self.estimator_.classes_).tolist())
        lost = [c for c in released if c not in known]
        if lost:
            warnings.warn(
                f"The synthetic labels lack {len(lost)} of the {len(released)} released "
                f"class(es) of y ({lost[:5]}); the estimator cannot predict them. More "
                "privacy budget or more synthetic records may bring them back.",
                UserWarning,
            )

    @property
    def classes_(self):
        """Classes known to the fitted estimator."""
        check_is_fitted(self)
        return self.estimator_.classes_

    @available_if(_estimator_has("predict"))
    def predict(self, X):
        """Predict with the estimator trained on synthetic data.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities from the estimator trained on synthetic data.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        check_is_fitted(self)
        return self.estimator_.predict_proba(X)

    @available_if(_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities from the estimator trained on synthetic data.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self.estimator_.predict_log_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the estimator trained on synthetic data.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self.estimator_.decision_function(X)

    @available_if(_estimator_has("score"))
    def score(self, X, y, sample_weight=None):
        """Score of the estimator trained on synthetic data on ``(X, y)``.

        With real held-out ``(X, y)`` this is the TSTR score (accuracy for
        classifiers, R^2 for regressors).  It is computed on real data and is
        not differentially private.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
        """
        check_is_fitted(self)
        if sample_weight is None:
            return self.estimator_.score(X, y)
        return self.estimator_.score(X, y, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        synthesizer = get_tags(self.synthesizer)
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        tags.target_tags.required = True
        # fit's X goes to the synthesizer; the estimator gets values of the same kinds
        tags.input_tags.allow_nan = synthesizer.input_tags.allow_nan
        tags.input_tags.string = synthesizer.input_tags.string
        tags.input_tags.categorical = synthesizer.input_tags.categorical
        return tags


# ------------------------------------------------------------------ search cost
_PARTITION_SPLITTERS = (KFold, StratifiedKFold, GroupKFold, StratifiedGroupKFold,
                        LeaveOneOut, LeaveOneGroupOut)
_REPEATED_SPLITTERS = (RepeatedKFold, RepeatedStratifiedKFold)


def _nested_estimators(estimator):
    """``estimator`` and every estimator reachable through its parameters.

    Follows estimator-valued parameters, lists of steps (``Pipeline``,
    ``ColumnTransformer``) and dicts (``TableEncoder(binning={...})``).
    """
    found = [estimator]
    stack = list(estimator.get_params(deep=False).values())
    while stack:
        value = stack.pop()
        if hasattr(value, "get_params") and not isinstance(value, type):
            found.append(value)
            stack.extend(value.get_params(deep=False).values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
    return found


def _dp_mechanisms(estimator):
    """``(mechanism, configured epsilon)`` of every dpsynth mechanism inside ``estimator``."""
    for part in _nested_estimators(estimator):
        if isinstance(part, DPMarginalSynthesizer):
            yield part, float(part.epsilon)
        elif isinstance(part, TableEncoder):
            yield part, 0.0 if part.binning_epsilon is None else float(part.binning_epsilon)
        elif isinstance(part, DPKBinsDiscretizer):
            yield part, 0.0 if part.epsilon is None else float(part.epsilon)


def _total_delta(mechanisms):
    """Sum of the synthesizers' ``delta``, ``None`` counted as the fixed default
    (:data:`~dpsynth.accounting.DEFAULT_DELTA`, through the synthesizer's own
    :func:`~dpsynth.accounting.check_delta`)."""
    return math.fsum(check_delta(part.delta) for part, _ in mechanisms
                     if isinstance(part, DPMarginalSynthesizer))


def _folds_per_record(cv, n_splits):
    """Largest number of training sets of ``cv`` that one record can be in."""
    if isinstance(cv, _REPEATED_SPLITTERS):
        return n_splits - cv.n_repeats
    if isinstance(cv, _PARTITION_SPLITTERS):
        return n_splits - 1
    return n_splits


def search_privacy_cost(search, *, estimator=None, cv=5, refit=True):
    """Total privacy budget a hyper-parameter search spends on its training data.

    A search fits the estimator once per candidate and cross-validation
    split, then refits the best candidate on all the data.  Every fit that
    sees a record spends privacy budget on it; by basic composition the
    costs add up.  With K-fold cross-validation each record is in K - 1 of
    the K training sets, so

    ``epsilon_total <= sum_c (K - 1) * epsilon_c + epsilon_refit``

    and likewise for ``delta``.  Example: ``epsilon`` in ``{0.1, 1, 10}``,
    ``cv=5`` and a refit at 10 cost ``4 * 11.1 + 10 = 54.4``.

    The cost of one fit is the sum of the configured budgets of the dpsynth
    mechanisms inside the candidate: every
    :class:`~dpsynth.DPMarginalSynthesizer` ``epsilon``, every
    :class:`~dpsynth.preprocessing.TableEncoder` ``binning_epsilon`` and
    every :class:`~dpsynth.preprocessing.DPKBinsDiscretizer` ``epsilon``
    (found in ``TrainOnSynthetic``, pipelines and encoders, with the
    candidate's parameters applied).  These are upper bounds: a binner can
    spend less (see its ``epsilon_spent_``).

    The bound covers the *fits*.  The scores the search computes on real
    data, and the choice of the best candidate, are not differentially
    private at all and are not counted here.

    Basic composition assumes that every fit draws fresh noise: a fixed
    ``random_state`` makes all fits add the *same* noise, which cancels when
    their releases are compared (and a known seed lets anyone remove it), so
    a :class:`~dpsynth.PrivacyLeakWarning` is emitted when a DP mechanism of
    the search has one.

    ``delta`` adds up the synthesizers' ``delta`` the same way.  A
    synthesizer left at ``delta=None`` uses the fixed default ``1e-9``
    (:data:`~dpsynth.accounting.DEFAULT_DELTA`), which is counted for each of
    its fits: 13 fits at the default cost ``1.3e-08``.

    Parameters
    ----------
    search : GridSearchCV, fitted search, dict or list of dicts
        A :class:`~sklearn.model_selection.GridSearchCV` (fitted or not), any
        fitted scikit-learn search (its ``cv_results_["params"]``,
        ``n_splits_`` and ``best_index_`` are used), or a parameter grid as
        accepted by ``GridSearchCV``.  The searched estimator may be a
        synthesizer, a :class:`TrainOnSynthetic` or a pipeline holding them.
    estimator : estimator object, default=None
        The searched estimator; required with a parameter grid (parameters
        not in the grid take its values), not allowed with a search.
    cv : int or cross-validation splitter, default=5
        Cross-validation of a parameter grid, as in ``GridSearchCV`` (ignored
        with a search, which has its own).
    refit : bool, default=True
        Whether a parameter grid's search refits the best candidate (ignored
        with a search, which has its own ``refit``).

    Returns
    -------
    cost : dict
        ``epsilon`` and ``delta`` (total), ``n_candidates``, ``n_splits``,
        ``folds_per_record`` (training sets a record is in: K - 1 for
        K-fold, ``n_repeats * (K - 1)`` for repeated K-fold, every split for
        other splitters, which may reuse a record in every training set),
        ``candidate_epsilons`` and ``candidate_deltas`` (one fit of each
        candidate, in ``ParameterGrid`` / ``cv_results_`` order),
        ``refit_epsilon`` and ``refit_delta`` (0 without refit).  An unfitted
        search does not know its best candidate yet: its refit is charged the
        largest candidate epsilon and delta.

    Raises
    ------
    ValueError
        If the search is neither fitted nor a ``GridSearchCV``, its
        splitter's number of splits needs the data, or the estimator holds no
        dpsynth mechanism.

    Warns
    -----
    PrivacyLeakWarning
        If a mechanism that spends budget has a fixed ``random_state``.

    Examples
    --------
    >>> from dpsynth import DPMarginalSynthesizer
    >>> from dpsynth.model_selection import search_privacy_cost
    >>> cost = search_privacy_cost({"epsilon": [0.1, 1, 10]},
    ...                            estimator=DPMarginalSynthesizer(delta=1e-6), cv=5)
    >>> round(cost["epsilon"], 6), round(cost["delta"], 12)
    (54.4, 1.3e-05)
    """
    if not isinstance(search, (Mapping, list, tuple)):
        if estimator is not None:
            raise ValueError("estimator is taken from the search; do not pass it.")
        estimator, refit = search.estimator, search.refit
        fitted = hasattr(search, "cv_results_")
        if fitted:
            candidates = list(search.cv_results_["params"])
            n_splits = search.n_splits_
        elif isinstance(search, GridSearchCV):
            candidates = list(ParameterGrid(search.param_grid))
        else:
            raise ValueError(
                f"An unfitted {type(search).__name__} does not list its candidates; fit "
                "it first or pass its parameter grid."
            )
        cv = search.cv
        best_index = search.best_index_ if fitted and refit else None
    else:
        if estimator is None:
            raise ValueError("A parameter grid needs the searched estimator: pass estimator=.")
        candidates = list(ParameterGrid(search))
        fitted, best_index = False, None
    splitter = check_cv(cv, classifier=is_classifier(estimator))
    if not fitted:
        try:
            n_splits = splitter.get_n_splits()
        except (TypeError, ValueError):
            raise ValueError(
                f"The number of splits of {splitter!r} depends on the data; fit the "
                "search first."
            ) from None
    folds = _folds_per_record(splitter, n_splits)

    fits = [list(_dp_mechanisms(clone(estimator).set_params(**params)))
            for params in candidates]
    if not any(fits):
        raise ValueError(
            f"Found no dpsynth mechanism (DPMarginalSynthesizer, TableEncoder, "
            f"DPKBinsDiscretizer) in {estimator!r}; its privacy cost is unknown."
        )
    if any(epsilon > 0 and part.random_state is not None
           for mechanisms in fits for part, epsilon in mechanisms):
        warnings.warn(
            "A DP mechanism of the search has a fixed random_state: every fit draws the "
            "same noise, so comparing the releases of overlapping training sets cancels "
            "it, and anyone who knows the seed can remove it. The composition bound "
            "assumes fresh noise: use random_state=None for searches on private data.",
            PrivacyLeakWarning,
        )
    candidate_epsilons = [math.fsum(epsilon for _, epsilon in mechanisms)
                          for mechanisms in fits]
    candidate_deltas = [_total_delta(mechanisms) for mechanisms in fits]
    if not refit:
        refit_epsilon, refit_delta = 0.0, 0.0
    elif best_index is not None:
        refit_epsilon, refit_delta = candidate_epsilons[best_index], candidate_deltas[best_index]
    else:
        refit_epsilon = max(candidate_epsilons)
        refit_delta = max(candidate_deltas)

    epsilon = folds * math.fsum(candidate_epsilons) + refit_epsilon
    delta = folds * math.fsum(candidate_deltas) + refit_delta
    return {
        "epsilon": float(epsilon),
        "delta": float(delta),
        "n_candidates": len(candidates),
        "n_splits": int(n_splits),
        "folds_per_record": int(folds),
        "candidate_epsilons": candidate_epsilons,
        "candidate_deltas": candidate_deltas,
        "refit_epsilon": float(refit_epsilon),
        "refit_delta": float(refit_delta),
    }
