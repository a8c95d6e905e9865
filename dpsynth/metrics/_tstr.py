"""Machine-learning efficacy: train on synthetic, test on real (TSTR)."""

import pandas as pd
from sklearn.base import clone
from sklearn.metrics import check_scoring

__all__ = ["tstr_score"]


def _split(data, target, name):
    """Return ``(X, y)`` from an ``(X, y)`` pair or a DataFrame with ``target``."""
    if isinstance(data, tuple):
        if len(data) != 2:
            raise ValueError(f"{name} as a tuple must be (X, y); got {len(data)} items.")
        return data
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"{name} must be a DataFrame or an (X, y) tuple; got "
                        f"{type(data).__name__}.")
    if target is None:
        raise ValueError(f"target is required when {name} is a DataFrame.")
    if target not in data.columns:
        raise ValueError(f"target {target!r} is not a column of {name}.")
    return data.drop(columns=[target]), data[target]


def tstr_score(estimator, synth, real_test, *, target=None, scoring=None):
    """Train on synthetic, test on real: score of a model fitted on synthetic data.

    A clone of ``estimator`` is fitted on the synthetic data and scored on
    held-out real data.  This measures whether the synthetic data support
    the same predictive task as the real data (the "ML efficacy" of SDMetrics
    and the classification tasks of the DP-marginals literature); compare it
    with the same estimator trained on real data (TRTR).

    No encoding is done here: categorical or missing values must be handled
    by the estimator itself, e.g. a :class:`~sklearn.pipeline.Pipeline` with
    a :class:`~sklearn.compose.ColumnTransformer` and a
    :class:`~sklearn.preprocessing.OneHotEncoder`.

    The score uses real data and is *not* a differentially private release.

    Parameters
    ----------
    estimator : estimator object
        Unfitted scikit-learn estimator (it is cloned, never modified).
    synth, real_test : DataFrame or tuple (X, y)
        Training (synthetic) and test (real) data.  A DataFrame must contain
        the ``target`` column; a tuple is used as is, e.g. the ``(X, y)``
        returned by ``sample`` of a synthesizer fitted with ``y``.
    target : str, default=None
        Name of the target column of DataFrame inputs.
    scoring : str, callable or None, default=None
        A scikit-learn scorer name (see :func:`sklearn.metrics.get_scorer`)
        or callable ``scorer(estimator, X, y)``; None uses the estimator's
        ``score`` method.

    Returns
    -------
    score : float
        Higher is better (scikit-learn scorer convention).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from dpsynth.metrics import tstr_score
    >>> synth = pd.DataFrame({"x": [0, 0, 1, 1], "y": [0, 0, 1, 1]})
    >>> real = pd.DataFrame({"x": [0, 1, 1], "y": [0, 1, 0]})
    >>> round(tstr_score(DecisionTreeClassifier(), synth, real, target="y"), 3)
    0.667
    """
    X_train, y_train = _split(synth, target, "synth")
    X_test, y_test = _split(real_test, target, "real_test")
    model = clone(estimator).fit(X_train, y_train)
    return float(check_scoring(model, scoring=scoring)(model, X_test, y_test))
