"""Downstream utility of a synthetic table: train on synthetic, test on real (TSTR).

A classifier learns a table's target column from the synthetic records and is scored
(ROC AUC) on real records held out from everything the synthesizer was fitted on:
for a table ``name@rows`` (:func:`benchmarks.datasets.split`), the rows of ``name``
outside the subset. The same classifier trained on the real fitted table gives the
reference AUC that synthetic data can at best approach.
"""

import numpy as np

TARGETS = {"adult": ("income", ">50K"), "adult_pgm": ("income>50K", "1")}
"""Table name to (target column, positive value): the tables with a prediction task."""


def target_of(dataset):
    """``(column, positive value)`` of the table ``dataset`` (``name`` or
    ``name@rows``), or None if it has no prediction task."""
    return TARGETS.get(dataset.partition("@")[0])


def tstr_auc(train, test, target, positive, seed=0):
    """ROC AUC on ``test`` of a classifier fitted on ``train`` to predict
    ``train[target] == positive``.

    scikit-learn's ``HistGradientBoostingClassifier`` (its defaults, ``random_state``
    ``seed``) on the other columns, ordinal-encoded on ``train``'s values and all
    declared categorical; missing cells, and values ``train`` lacks, are missing to
    the classifier. Rows whose target is missing are dropped.

    Parameters
    ----------
    train, test : pandas.DataFrame
        All-categorical tables with the same columns (strings, ``NaN`` for missing).
    target : str
        Column to predict.
    positive : str
        Its positive value.
    seed : int, default=0
        ``random_state`` of the classifier (its early-stopping split).

    Returns
    -------
    float or None
        The AUC, or None if ``train`` holds only one class (no classifier can be fitted).
    """
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.metrics import roc_auc_score
    from sklearn.preprocessing import OrdinalEncoder

    features = [c for c in train.columns if c != target]
    train = train[train[target].notna()]
    test = test[test[target].notna()]
    y = (train[target] == positive).to_numpy()
    if y.all() or not y.any():
        return None
    encoder = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan)

    def features_of(df):
        return df[features].astype(object).where(df[features].notna(), np.nan)

    x = encoder.fit_transform(features_of(train))
    model = HistGradientBoostingClassifier(categorical_features=np.ones(len(features), bool),
                                           random_state=seed).fit(x, y)
    scores = model.predict_proba(encoder.transform(features_of(test)))[:, 1]
    return float(roc_auc_score((test[target] == positive).to_numpy(), scores))
