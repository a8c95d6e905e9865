"""Scorer factory for model selection of synthesizers (GridSearchCV and friends)."""

import pandas as pd

from ._tvd import k_marginal_score, marginal_tvd

__all__ = ["make_fidelity_scorer"]

_METRICS = ("marginal_tvd", "k_marginal")


class _FidelityScorer:
    """``scorer(estimator, X, y=None) -> float``; see :func:`make_fidelity_scorer`."""

    def __init__(self, metric, k, n_samples, random_state, kwargs):
        self.metric = metric
        self.k = k
        self.n_samples = n_samples
        self.random_state = random_state
        self.kwargs = kwargs

    def __repr__(self):
        extra = "".join(f", {key}={value!r}" for key, value in self.kwargs.items())
        return (f"make_fidelity_scorer(metric={self.metric!r}, k={self.k}, "
                f"n_samples={self.n_samples}, random_state={self.random_state}"
                f"{extra})")

    def __call__(self, estimator, X, y=None):
        n_samples = len(X) if self.n_samples is None else self.n_samples
        sample = estimator.sample(n_samples, random_state=self.random_state)
        y_synth = None
        if isinstance(sample, tuple):
            sample, y_synth = sample
        synth = pd.DataFrame(sample)
        real = X
        if not isinstance(X, pd.DataFrame):
            real = pd.DataFrame(X)
            if real.shape[1] == synth.shape[1]:
                real.columns = synth.columns
        if y is not None and y_synth is not None:
            name = getattr(y, "name", None)
            if name is None:
                name = getattr(y_synth, "name", None)
            name = "y" if name is None else name
            real, synth = real.copy(), synth.copy()
            real[name] = pd.Series(y).to_numpy()
            synth[name] = pd.Series(y_synth).to_numpy()
        if self.metric == "marginal_tvd":
            return 1.0 - marginal_tvd(real, synth, self.k, **self.kwargs)
        return k_marginal_score(real, synth, k=self.k, **self.kwargs)


def make_fidelity_scorer(metric="marginal_tvd", *, k=2, n_samples=None,
                         random_state=0, **kwargs):
    """Make a scorer that rates a fitted synthesizer by the fidelity of its samples.

    The scorer has the scikit-learn signature ``scorer(estimator, X, y=None)``
    and can be passed as ``scoring`` to :class:`~sklearn.model_selection.GridSearchCV`
    to tune a synthesizer (e.g. ``epsilon`` or ``reporting_length``) against
    held-out real data: it draws ``estimator.sample(n_samples,
    random_state=random_state)`` and compares the sample with ``X``.
    Higher is better.

    If the synthesizer was fitted with ``y``, ``sample`` returns
    ``(X_syn, y_syn)``; when the scorer is also given ``y`` the target is
    appended to both tables as one more column, named ``y.name`` (else
    ``y_syn.name``, else ``"y"``), so the marginals include it.  Without
    ``y`` only the features are compared.  ``X`` given as an array takes the
    sample's column names when the widths match.

    The score is computed from real data and is *not* a differentially
    private release; do not publish tuning results as if they were.

    Parameters
    ----------
    metric : {"marginal_tvd", "k_marginal"}, default="marginal_tvd"
        ``"marginal_tvd"`` scores ``1 - marginal_tvd(X, sample, k)`` (in
        [0, 1]); ``"k_marginal"`` scores ``k_marginal_score(X, sample, k=k)``
        (in [0, 1000], NIST CRC / SDNist).
    k : int, default=2
        Marginal size passed to the metric.
    n_samples : int, default=None
        Number of synthetic records; None draws ``len(X)``.
    random_state : int, RandomState instance or None, default=0
        Passed to ``sample``; fixed by default so that candidates are
        compared on equal footing.
    **kwargs
        Other keyword arguments of the metric (e.g. ``max_subsets``,
        ``columns``, ``group_by``).

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y=None) -> float``.

    See Also
    --------
    marginal_tvd, k_marginal_score
    """
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}; got {metric!r}.")
    return _FidelityScorer(metric, k, n_samples, random_state, kwargs)
