"""PriView: consistent noisy views and maximum-entropy marginals (central DP).

Qardaji, Yang, Li, "PriView: Practical Differentially Private Release of
Marginal Contingency Tables", SIGMOD 2014, as presented in Li, Lyu, Su, Yang,
"Differential Privacy: From Theory to Practice" (Synthesis Lectures, 2016),
Section 6.3.  The trusted curator computes ``w`` views (marginals over the
blocks of a covering design), adds ``Laplace(w / epsilon)`` to every cell
(one record changes one cell of each view: L1 sensitivity ``w``), makes them
consistent and non-negative (C+N+C) and answers any marginal by summation or
maximum entropy.  The post-processing is shared with CALM
(:mod:`dpsynth.views`).
"""

import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions

from ..local._covering import covering_design
from ..mechanisms import laplace_count, laplace_measure, mechanism_name
from ..accounting import PrivacySpent, Spend
from ..utils._random import seed_sequence
from ..views import ViewSet, _ViewEstimatorMixin, postprocess

__all__ = ["PriViewSynthesizer", "priview_noise_error", "view_counts"]


def priview_noise_error(n_records, epsilon, n_views, n_attributes, view_size, n_cells=None):
    """Expected noise error of a pair marginal (Li et al., eq. 6.7).

    ``err = sqrt(2 L) / (N eps) * sqrt(w d (d - 1) / (ell (ell - 1)))`` with
    ``L = 2^ell`` cells per view for binary attributes (``2^((ell+1)/2)`` in
    the book); ``n_cells`` generalises ``L`` to other cardinalities.
    """
    L = 2 ** view_size if n_cells is None else n_cells
    d, ell = n_attributes, view_size
    if ell < 2:
        return math.sqrt(2 * L) / (n_records * epsilon) * math.sqrt(n_views)
    return (math.sqrt(2 * L) / (n_records * epsilon)
            * math.sqrt(n_views * d * (d - 1) / (ell * (ell - 1))))


def view_counts(codes, attrs, cardinalities):
    """Exact counts of a coded table over the attributes ``attrs``."""
    shape = tuple(int(cardinalities[a]) for a in attrs)
    cells = np.ravel_multi_index(tuple(codes[:, a] for a in attrs), shape)
    return np.bincount(cells, minlength=int(np.prod(shape))).reshape(shape).astype(float)


class PriViewSynthesizer(_ViewEstimatorMixin, BaseEstimator):
    """Central-DP marginals and synthetic data from consistent noisy views.

    PriView [1]_ [2]_: the views are the blocks of a covering design of all
    ``strength``-sets of columns by ``view_size``-sets, each released with
    ``Laplace(w / epsilon)`` noise per cell, then made consistent (weighted
    means over every shared attribute set), non-negative (Ripple) and
    consistent again; any marginal is a sum of a view's cells or the
    maximum-entropy table matching the views.  ``epsilon``-DP (pure) with
    add/remove neighbours.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget (including ``count_epsilon`` when spent).
    view_size : int or "auto", default="auto"
        Attributes per view.  ``"auto"``: the most attributes whose views
        have at most ``max_view_cells`` cells on average (8 binary attributes,
        the book's recommendation, for the default 256).
    max_view_cells : int, default=256
        See ``view_size``.
    strength : int or "auto", default="auto"
        Every ``strength``-set of columns lies in a view.  ``"auto"``: the
        largest ``t`` in {2, 3, 4} whose eq. 6.7 noise error is <= 0.003
        (else 2), with the number of records estimated by a Laplace count
        that spends ``count_epsilon``.
    count_epsilon : float, default=0.001
        Budget of that count (only spent with ``strength="auto"`` and more
        than one possible design).
    categories, bounds, n_bins, binning, allow_missing
        The public domain, as in :class:`~dpsynth.local.CALMSynthesizer`.
    weights : {"cells", "equal"}, default="cells"
        Consistency weights (identical for equal-size views).
    negativity_tol : float, default=1e-6
        Ripple threshold on counts.
    n_rounds : int, default=1
        Rounds of (Ripple, consistency) after the first consistency: 1 is the
        book's C+N+C.
    maxent_tol, maxent_max_iter : float, int
        Tolerance and cap of the IPF reconstruction.
    random_state : int, Generator or None, default=None
        ``None``: OS entropy; child streams by ``SeedSequence.spawn``.
    noise : {"discrete", "continuous"}, default="discrete"
        Exact discrete Laplace noise of the same scale on the integer cell
        counts (the geometric mechanism, also ``epsilon``-DP;
        :func:`~dpsynth.mechanisms.laplace_measure`) or numpy's Laplace.

    Attributes
    ----------
    encoder_, cardinalities_, feature_names_in_, n_features_in_
    view_size_, strength_ : int
    marginal_sets_ : list of tuple of int
        The views' column sets (the covering design; public).
    noise_scale_ : float
        Laplace scale per cell, ``w / epsilon_views``.
    noisy_views_ : list of (tuple, ndarray)
        Noisy counts as released.
    views_ : list of (tuple, ndarray)
        Consistent, non-negative counts.
    view_set_ : ViewSet
    n_records_ : int
        The views' common (noisy) total.
    privacy_spent_ : dict
        ``epsilon`` (= ``epsilon``), ``delta`` 0, and the spend of each
        mechanism.

    References
    ----------
    .. [1] W. Qardaji, W. Yang, N. Li, "PriView: Practical Differentially
       Private Release of Marginal Contingency Tables", SIGMOD 2014.
    .. [2] N. Li, M. Lyu, D. Su, W. Yang, "Differential Privacy: From Theory
       to Practice", Morgan & Claypool 2016, Section 6.3.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from dpsynth.release import PriViewSynthesizer
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({c: rng.choice(["a", "b"], 2000) for c in "pqrs"})
    >>> synth = PriViewSynthesizer(epsilon=1.0, categories={c: ["a", "b"] for c in X},
    ...                            random_state=0).fit(X)
    >>> synth.marginal(["p", "s"]).shape
    (2, 2)
    """

    _parameter_constraints = {
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "view_size": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "max_view_cells": [Interval(numbers.Integral, 2, None, closed="left")],
        "strength": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "count_epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "weights": [StrOptions({"cells", "equal"})],
        "noise": [StrOptions({"discrete", "continuous"})],
        **_ViewEstimatorMixin._view_constraints,
    }

    def __init__(self, *, epsilon=1.0, view_size="auto", max_view_cells=256, strength="auto",
                 count_epsilon=0.001, categories="auto", bounds=None, n_bins=3,
                 binning="uniform", allow_missing=False, weights="cells", negativity_tol=1e-6,
                 n_rounds=1, maxent_tol=1e-8, maxent_max_iter=1000, random_state=None,
                 noise="discrete"):
        self.epsilon = epsilon
        self.view_size = view_size
        self.max_view_cells = max_view_cells
        self.strength = strength
        self.count_epsilon = count_epsilon
        self.categories = categories
        self.bounds = bounds
        self.n_bins = n_bins
        self.binning = binning
        self.allow_missing = allow_missing
        self.weights = weights
        self.negativity_tol = negativity_tol
        self.n_rounds = n_rounds
        self.maxent_tol = maxent_tol
        self.maxent_max_iter = maxent_max_iter
        self.random_state = random_state
        self.noise = noise

    def _expected_cells(self, ell):
        from ..local.calm import _expected_cells
        return _expected_cells([int(c) for c in self.cardinalities_], ell)

    def _choose_view_size(self):
        d = self.n_features_in_
        if self.view_size != "auto":
            return min(int(self.view_size), d)
        ell = 1
        while ell < d and self._expected_cells(ell + 1) <= self.max_view_cells:
            ell += 1
        return ell

    def fit(self, X, y=None):
        """Release the noisy views of X and post-process them.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_records, n_features)
        y : None
            Ignored.

        Returns
        -------
        self
        """
        codes = self._validated_codes(X)
        count_ss, noise_ss = seed_sequence(self.random_state).spawn(3)[:2]
        d = self.n_features_in_
        ell = self._choose_view_size()
        spends = []
        if self.strength != "auto":
            t = min(int(self.strength), ell)
            epsilon_views = float(self.epsilon)
        else:
            candidates = [t for t in (2, 3, 4) if t <= ell] or [min(ell, d)]
            if ell >= d or len(candidates) == 1:
                t, epsilon_views = candidates[0], float(self.epsilon)
            else:
                if self.count_epsilon >= self.epsilon:
                    raise ValueError(f"count_epsilon ({self.count_epsilon}) must be below "
                                     f"epsilon ({self.epsilon}).")
                epsilon_views = float(self.epsilon) - float(self.count_epsilon)
                rng = np.random.default_rng(count_ss)
                noisy_n = laplace_count(codes.shape[0], self.count_epsilon, rng, self.noise)
                spends.append({"name": "record count (to choose strength)",
                               "mechanism": mechanism_name("laplace", self.noise),
                               "epsilon": float(self.count_epsilon),
                               "sensitivity": 1.0})
                L = self._expected_cells(ell)
                t = candidates[0]
                for cand in candidates:
                    w = len(covering_design(d, ell, cand))
                    err = priview_noise_error(max(noisy_n, 1.0), epsilon_views, w, d, ell, L)
                    if err <= 0.003:
                        t = cand
        self.view_size_, self.strength_ = int(ell), int(t)
        self.marginal_sets_ = [tuple(b) for b in covering_design(d, ell, t)]
        w = len(self.marginal_sets_)
        self.noise_scale_ = w / epsilon_views
        rng = np.random.default_rng(noise_ss)
        noisy = []
        for attrs in self.marginal_sets_:
            counts = view_counts(codes, attrs, self.cardinalities_)
            noisy.append((attrs, laplace_measure(counts, 1.0, rng, self.noise,
                                                 sensitivity=self.noise_scale_)))
        spends.append({"name": f"{w} views, every cell",
                       "mechanism": mechanism_name("laplace", self.noise),
                       "epsilon": epsilon_views, "sensitivity": float(w),
                       "scale": self.noise_scale_})
        self.noisy_views_ = noisy
        self.views_, self.n_postprocess_rounds_ = postprocess(
            noisy, self.cardinalities_, tol=self.negativity_tol, n_rounds=self.n_rounds,
            weights=self.weights)
        total = float(self.views_[0][1].sum())
        self.n_records_ = max(1, int(round(total)))
        self.view_set_ = ViewSet(self.views_, self.cardinalities_, tol=self.maxent_tol,
                                 max_iter=self.maxent_max_iter)
        self.privacy_spent_ = PrivacySpent(
            float(sum(s["epsilon"] for s in spends)), 0.0, 0.0,
            [Spend(s["name"], s["mechanism"], epsilon=s["epsilon"],
                   params=tuple((k, v) for k, v in s.items()
                                if k not in ("name", "mechanism", "epsilon")))
             for s in spends],
            details={"model": "central"})
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        tags.input_tags.categorical = True
        tags.input_tags.allow_nan = True  # a missing category (see allow_missing)
        tags.input_tags.string = True
        return tags
