"""CALM: Consistent Adaptive Local Marginal release under local DP.

Zhang, Wang, Li, He, Chen, "CALM: Consistent Adaptive Local Marginal for
Marginal Release under Local Differential Privacy", ACM CCS 2018.

Every user holds one record of ``d`` categorical attributes and never shows
it to the collector.  The collector publishes a plan: ``m`` attribute sets of
size ``ell`` (chosen by :func:`calm_parameters`, Algorithm 1, and a covering
design) and a public rule assigning each user to one set.  Each user projects
her record onto her set and sends **one** report of the cell she is in
through the adaptive frequency oracle with the full ``epsilon`` (no splitting
of ``epsilon``), so the protocol is ``epsilon``-LDP.  The collector estimates
each set's marginal from its group, makes the ``m`` noisy marginals consistent
(``1/C_i`` weights), non-negative (Ripple), consistent again, and answers any
marginal by summation or maximum entropy (:mod:`dpsynth.views`).
"""

import itertools
import math
import numbers

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..utils._validation import check_table
from ..accounting import PrivacySpent, Spend
from ..utils._random import seed_sequence
from ..views import ViewSet, _ViewEstimatorMixin, postprocess
from ..covering import covering_design, covering_number
from .oracles import adaptive_oracle, fo_variance

__all__ = ["calm_parameters", "CALMSynthesizer"]


def _check_int(name, value, low):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}.")
    return int(value)


def _expected_cells(cardinalities, ell):
    """Mean number of cells of an ``ell``-subset of the attributes."""
    # elementary symmetric polynomial e_ell(c) / C(d, ell)
    e = [1.0] + [0.0] * ell
    for c in cardinalities:
        for j in range(ell, 0, -1):
            e[j] += e[j - 1] * c
    return e[ell] / math.comb(len(cardinalities), ell)


def _noise_error(n, d, epsilon, ell, cards):
    """CALM eq. (7): NE = Var_FO(L) * (L / ell) * (d / n)."""
    L = _expected_cells(cards, ell)
    return fo_variance(L, epsilon) * L / ell * d / n


#: ``ell=None``: when Algorithm 1 chooses pairs (``ell = 2``) whose estimated tables
#: would carry an expected total variation of noise above this
#: (:func:`pair_noise_tvd`), each column is reported alone (``ell = 1``, ``m = d``).
CALM_PAIR_TVD_LIMIT = 0.3


def pair_noise_tvd(n_users, n_marginals, epsilon, cardinality):
    """Expected total variation the oracle's noise adds to an estimated pair table.

    A pair marginal of ``L`` cells (the mean over pairs of columns) is
    estimated from a group of ``n / m`` users, each cell with the variance
    ``Var_FO(L) m / n`` of CALM's eq. 3 (:func:`~dpsynth.local.oracles.fo_variance`);
    its total variation is about ``L sqrt(Var_FO(L) m / n) / sqrt(2 pi)``
    (half the expected absolute deviation of ``L`` normal cells).  Public
    inputs only: the number of users, of marginals, epsilon and the domain.
    """
    cards = [int(c) for c in cardinality]
    L = _expected_cells(cards, 2)
    sigma = math.sqrt(fo_variance(L, epsilon) * n_marginals / n_users)
    return L * sigma / math.sqrt(2 * math.pi)


def calm_parameters(n_attributes, k, n_users, epsilon, cardinality=2, theta=0.001, *,
                    return_details=False):
    """Marginal size ``ell`` and number of marginals ``m`` (CALM Algorithm 1).

    With the noise error ``NE(ell) = Var_FO(L) * (L / ell) * (d / n)`` (eq. 7,
    ``L`` the expected number of cells of an ``ell``-way marginal) and the
    sampling error ``SE(m) = m / n`` (eq. 8):

    1. ``m_u = floor(theta * n)``; ``ell_u`` = the largest size from 2 with
       ``k * NE(ell_u) <= theta``.
    2. If ``ell_u < k``: ``(ell_u, min(m_u, C(d, ell_u)))``.
    3. Otherwise lower ``ell_b`` from ``ell_u`` while ``ell_b > k`` and
       ``CoverDesign(d, k, ell_b - 1) <= m_u``.  If ``ell_b == ell_u``:
       ``(ell_u, min(m_u, CoverDesign(d, k, ell_u)))``.  This follows the
       paper's Table 2; the printed pseudocode (line 10) has ``C(d, ell_u)``
       instead, which differs from the table in two cells (d = 16, k = 3,
       n = 2^18, eps in {1.6, 1.8}: the table says (4, 140)).
    4. Else the ``ell_t`` in ``[ell_b, ell_u]`` with the least
       ``max(SE(CoverDesign(d, k, ell_t)), k * NE(ell_t))``.

    ``CoverDesign(d, k, ell)`` is the covering number ``C(d, ell, k)`` from
    :func:`dpsynth.local.covering_design`: exact for the trivial cases, the
    Steiner quadruple systems (e.g. ``C(16, 4, 3) = 140``) and the ILP-solved
    table for ``d = 8``; a greedy upper bound elsewhere.

    Parameters
    ----------
    n_attributes : int
        Number of attributes ``d``.
    k : int
        Size of the marginals the release is optimised for (1 <= k <= d).
    n_users : int
        Number of users ``n``.
    epsilon : float
        Local privacy budget of each user's single report.
    cardinality : int or sequence of int, default=2
        Number of values of every attribute (one int) or of each attribute.
    theta : float, default=0.001
        Target error threshold (the paper's ``theta``).
    return_details : bool, default=False
        Also return a dict with ``m_u``, ``ell_u``, ``ell_b`` and the errors.

    Returns
    -------
    ell : int
    m : int
        At least 1 (``floor(theta * n)`` is 0 below ``1 / theta`` users).
    details : dict
        Only with ``return_details=True``.

    References
    ----------
    Zhang, Wang, Li, He, Chen, "CALM", CCS 2018, Section 4.3 and Table 2.

    Examples
    --------
    >>> from dpsynth.local import calm_parameters
    >>> calm_parameters(8, 3, 2**16, 2.0)
    (4, 14)
    """
    d = _check_int("n_attributes", n_attributes, 1)
    k = _check_int("k", k, 1)
    if k > d:
        raise ValueError(f"k ({k}) must be <= n_attributes ({d}).")
    n = _check_int("n_users", n_users, 1)
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) \
            or not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be a finite number > 0; got {epsilon!r}.")
    if isinstance(theta, bool) or not isinstance(theta, numbers.Real) or not 0 < theta < 1:
        raise ValueError(f"theta must be in (0, 1); got {theta!r}.")
    if isinstance(cardinality, numbers.Integral) and not isinstance(cardinality, bool):
        cards = [int(cardinality)] * d
    else:
        cards = [int(c) for c in np.asarray(cardinality).ravel()]
        if len(cards) != d:
            raise ValueError(f"cardinality has {len(cards)} entries; expected n_attributes={d}.")
    if min(cards) < 1:
        raise ValueError(f"cardinality must be >= 1; got {cardinality!r}.")

    def ne(ell):
        return k * _noise_error(n, d, epsilon, ell, cards)

    m_u = max(1, math.floor(theta * n))
    details = {"m_u": m_u}
    if d == 1:
        result = (1, 1)
        return (*result, details) if return_details else result
    ell_u = 2
    while ell_u < d and ne(ell_u + 1) <= theta:
        ell_u += 1
    details.update(ell_u=ell_u, noise_error=ne(ell_u))
    if ell_u < k:
        result = (ell_u, min(m_u, math.comb(d, ell_u)))
    else:
        ell_b = ell_u
        while ell_b > k and covering_number(d, ell_b - 1, k) <= m_u:
            ell_b -= 1
        details["ell_b"] = ell_b
        if ell_b == ell_u:
            result = (ell_u, min(m_u, covering_number(d, ell_u, k)))
        else:
            best, result = 1.0, (ell_u, m_u)
            for ell_t in range(ell_b, ell_u + 1):
                m_t = covering_number(d, ell_t, k)
                err = max(m_t / n, ne(ell_t))
                if err < best:
                    best, result = err, (ell_t, m_t)
    details.update(sampling_error=result[1] / n, noise_error=ne(result[0]))
    return (*result, details) if return_details else result


def select_marginals(n_attributes, ell, m, k, rng):
    """The ``m`` attribute sets of size ``ell`` (public, data-independent).

    A covering design of the ``k``-sets when ``m`` is its size; otherwise
    ``m`` sets picked greedily to balance how often each attribute is used
    (ties broken by the public random order of ``rng``), after the covering
    design if ``m`` exceeds it.  CALM leaves this choice open (Section 4.2).
    """
    d = n_attributes
    ell = min(ell, d)
    strength = min(k, ell)
    design = covering_design(d, ell, strength) if strength < ell or ell == d else None
    if design is not None and len(design) == m:
        return [tuple(b) for b in design]
    total = math.comb(d, ell)
    if m >= total:
        return list(itertools.combinations(range(d), ell))
    chosen = list(design) if design is not None and len(design) < m else []
    usage = np.zeros(d)
    for b in chosen:
        usage[list(b)] += 1
    pool = [c for c in itertools.combinations(range(d), ell) if c not in set(chosen)]
    order = rng.permutation(len(pool))
    pool = [pool[i] for i in order]
    members = np.array(pool, dtype=np.int64)
    taken = np.zeros(len(pool), dtype=bool)
    while len(chosen) < m:
        score = usage[members].sum(axis=1) + np.where(taken, np.inf, 0)
        i = int(np.argmin(score))
        taken[i] = True
        chosen.append(pool[i])
        usage[list(pool[i])] += 1
    return [tuple(b) for b in chosen]


class CALMSynthesizer(_ViewEstimatorMixin, BaseEstimator):
    """Locally differentially private marginals and synthetic data (CALM).

    The CALM protocol of Zhang, Wang, Li, He and Chen [1]_: every user sends
    one ``epsilon``-LDP report of her record projected onto one of ``m``
    public ``ell``-attribute sets; the collector estimates, reconciles and
    reconstructs marginals from those reports alone.  ``fit`` *simulates* the
    users from a table (for evaluation, or when the data owner wants the
    local-DP guarantee for a table it holds); in a deployment call
    :meth:`plan`, let each user run :meth:`perturb` on her own device, and
    pass the reports to :meth:`fit_reports`.

    Many-valued columns: Algorithm 1 sizes the marginals from the mean
    number of cells of an ``ell``-set of columns (the paper's ``L`` for
    non-binary attributes) and :func:`select_marginals` uses every column
    about equally often, so a many-valued column is in as many marginals as
    any other (no cell budget leaves it out); those marginals have more cells
    than ``L`` and hence more noise per user.  With ``ell=None``, when
    Algorithm 1's pairs would be mostly noise (expected total variation of a
    pair's table above ``CALM_PAIR_TVD_LIMIT``, :func:`pair_noise_tvd`) each
    column is reported alone (``ell = 1``), and at least ``ceil(d / ell)``
    marginals are taken so that no column is left out (public facts only:
    users, epsilon, domain).

    Privacy: each user's only message is one frequency-oracle report with
    the full ``epsilon`` (GRR, OUE or OLH; :mod:`dpsynth.local.oracles`), so
    the release is ``epsilon``-LDP for every user, whatever the collector
    does.  The group of a user is assigned by a public random partition,
    never from her values.  The number of users and the domains of the
    columns are public (declare them with ``categories`` / ``bounds``).

    Parameters
    ----------
    epsilon : float, default=1.0
        Local privacy budget of each user.
    k : int, default=3
        Size of the marginals to optimise for (Algorithm 1's ``k``).
    theta : float, default=0.001
        Target error threshold of Algorithm 1.
    ell : int, default=None
        Size of the reported marginals; ``None``: Algorithm 1, with columns
        reported alone when its pairs would be noise-dominated.
    n_marginals : int, default=None
        Number ``m`` of reported marginals; ``None``: Algorithm 1.
    categories : "auto", dict or list, default="auto"
        Public category lists (see :class:`~dpsynth.preprocessing.TableEncoder`).
        Columns left to ``"auto"`` have their values read from the data, with
        a :class:`~dpsynth.PrivacyLeakWarning`: a real deployment publishes
        the domain beforehand.
    bounds : dict, default=None
        Public ``{column: (low, high)}`` of numeric columns, binned into
        ``n_bins`` bins.
    n_bins : int, default=3
        Bins per numeric column (the paper buckets attributes into <= 3
        categories).
    binning : {"uniform", "log"} or dict, default="uniform"
        Bin strategy (public bounds only; no data-dependent quantiles).
    allow_missing : bool, default=False
        Make "missing" one more category of every column (it enlarges every
        domain).  With ``False``, a missing value in a declared column is an
        error; a column left to ``categories="auto"`` (its values read from
        the data, with a warning) gets a missing category when the data has
        missing values.
    large_domain : {"oue", "olh"}, default="oue"
        Oracle used when GRR is not the best (same variance; OLH has short
        reports and a slower server side).
    negativity_tol : float, default=1e-6
        Ripple's threshold: cells of a view (fractions) below ``-tol`` are
        removed.
    n_rounds : int, default=5
        Maximum rounds of (Ripple, consistency) after the first consistency.
    maxent_tol : float, default=1e-8
        Tolerance of the maximum-entropy reconstruction (IPF).
    maxent_max_iter : int, default=1000
        Iteration cap of IPF (a :class:`~sklearn.exceptions.ConvergenceWarning`
        reports it when hit).
    random_state : int, Generator or None, default=None
        ``None``: OS entropy.  Child streams for the public partition, the
        choice of marginals, the users' randomness and sampling come from
        :meth:`numpy.random.SeedSequence.spawn`.

    Attributes
    ----------
    encoder_ : TableEncoder
        Codes of the public domain.
    cardinalities_ : ndarray of int
        Number of values of each column.
    ell_, n_marginals_ : int
        Marginal size and number of marginals used.
    marginal_sets_ : list of tuple of int
        The ``m`` attribute sets (column indices), public.
    partition_seed_ : numpy.random.SeedSequence
        Seed of the public partition of users (:meth:`assign_groups`).
    oracles_ : list of FrequencyOracle
        The oracle of each marginal (adaptive: GRR or OUE/OLH).
    group_sizes_ : ndarray of int
        Reports received per marginal.
    noisy_views_ : list of (tuple, ndarray)
        Frequency-oracle estimates (fractions of each group).
    views_ : list of (tuple, ndarray)
        Consistent, non-negative views after post-processing.
    view_set_ : ViewSet
    n_postprocess_rounds_ : int
    n_records_ : int
        Number of users (public in the local model).
    privacy_spent_ : dict
        ``{"epsilon": epsilon, "delta": 0.0, "model": "local", ...}``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    References
    ----------
    .. [1] Z. Zhang, T. Wang, N. Li, S. He, J. Chen, "CALM: Consistent
       Adaptive Local Marginal for Marginal Release under Local Differential
       Privacy", ACM CCS 2018.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from dpsynth.local import CALMSynthesizer
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({c: rng.choice(["a", "b"], 5000) for c in "pqrs"})
    >>> cats = {c: ["a", "b"] for c in X}
    >>> synth = CALMSynthesizer(epsilon=2.0, categories=cats, random_state=0).fit(X)
    >>> synth.sample(3).shape
    (3, 4)
    >>> synth.marginal(["p", "q"]).shape
    (2, 2)
    """

    _parameter_constraints = {
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "k": [Interval(numbers.Integral, 1, None, closed="left")],
        "theta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "ell": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_marginals": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "large_domain": [StrOptions({"oue", "olh"})],
        **_ViewEstimatorMixin._view_constraints,
    }

    def __init__(self, *, epsilon=1.0, k=3, theta=0.001, ell=None, n_marginals=None,
                 categories="auto", bounds=None, n_bins=3, binning="uniform",
                 allow_missing=False, large_domain="oue", negativity_tol=1e-6, n_rounds=5,
                 maxent_tol=1e-8, maxent_max_iter=1000, random_state=None):
        self.epsilon = epsilon
        self.k = k
        self.theta = theta
        self.ell = ell
        self.n_marginals = n_marginals
        self.categories = categories
        self.bounds = bounds
        self.n_bins = n_bins
        self.binning = binning
        self.allow_missing = allow_missing
        self.large_domain = large_domain
        self.negativity_tol = negativity_tol
        self.n_rounds = n_rounds
        self.maxent_tol = maxent_tol
        self.maxent_max_iter = maxent_max_iter
        self.random_state = random_state

    # --------------------------------------------------------------- plan
    def _streams(self):
        # 0: partition of users, 1: choice of marginals, 2: sampling, 3: users' reports
        return seed_sequence(self.random_state).spawn(4)

    def _plan(self, n_users, seeds):
        d = self.n_features_in_
        k = min(self.k, d)
        if self.ell is None:
            cards = [int(c) for c in self.cardinalities_]
            ell, m = calm_parameters(d, k, n_users, self.epsilon, cardinality=cards,
                                     theta=self.theta)
            if ell == 2 and pair_noise_tvd(n_users, m, self.epsilon, cards) > CALM_PAIR_TVD_LIMIT:
                # pairs' tables below the noise: each column's own distribution, every column
                ell, m = 1, min(d, n_users)
        else:  # a given size: Algorithm 1's rule for m at that size
            ell = min(self.ell, d)
            cover = covering_number(d, ell, k) if ell >= k else math.comb(d, ell)
            m = min(max(1, math.floor(self.theta * n_users)), cover)
        # few users (theta n below d / ell): still every column in some marginal (as many
        # as there are users to report them)
        m = max(m, min(-(-d // ell), n_users))
        if self.n_marginals is not None:
            m = self.n_marginals
        m = min(m, math.comb(d, ell))
        self.ell_, self.n_marginals_ = int(ell), int(m)
        self.marginal_sets_ = select_marginals(d, ell, m, k, np.random.default_rng(seeds[1]))
        self.oracles_ = [
            adaptive_oracle(max(2, int(np.prod(self.cardinalities_[list(s)]))), self.epsilon,
                            large_domain=self.large_domain)
            for s in self.marginal_sets_
        ]
        self.n_records_ = int(n_users)
        self.partition_seed_ = seeds[0]
        epsilon = float(max(o.epsilon for o in self.oracles_))
        self.privacy_spent_ = PrivacySpent(
            epsilon, 0.0, 0.0,
            [Spend("one frequency-oracle report per user", "local randomizer",
                   epsilon=epsilon,
                   params=(("oracles", ",".join(sorted({o.name for o in self.oracles_}))),))],
            details={"model": "local", "oracles": sorted({o.name for o in self.oracles_})})

    def plan(self, n_users, domain):
        """Publish the protocol before collecting reports (no data needed).

        Parameters
        ----------
        n_users : int
            Number of users who will report.
        domain : DataFrame or dict
            Public table whose columns (in order), dtypes and values declare
            the domain: e.g. one row per category, or the bounds of numeric
            columns (binned with ``bounds``/``n_bins``).  A dict
            ``{column: list of values}`` is turned into such a table (shorter
            lists are padded with their first value).  Never the private
            data.

        Returns
        -------
        self
        """
        self._validate_params()
        self._check_domain_params()
        n_users = _check_int("n_users", n_users, 1)
        if isinstance(domain, dict):
            if not domain or any(len(v) == 0 for v in domain.values()):
                raise ValueError("domain must give at least one value for every column.")
            length = max(len(v) for v in domain.values())
            domain = pd.DataFrame({c: list(v) + [list(v)[0]] * (length - len(v))
                                   for c, v in domain.items()})
        frame, _ = check_table(domain, name="domain")
        self._set_domain(self._make_encoder().fit(frame))
        self._plan(n_users, self._streams())
        return self

    def assign_groups(self, n_users, random_state=None):
        """Public partition of users ``0..n_users-1`` into the ``m`` groups.

        A random permutation (independent of the data) cut into near-equal
        groups: user ``i`` reports marginal ``groups[i]``.  With
        ``random_state=None`` the permutation comes from ``partition_seed_``,
        fixed by :meth:`plan` / :meth:`fit`, so repeated calls agree.
        """
        check_is_fitted(self, "marginal_sets_")
        n_users = _check_int("n_users", n_users, 1)
        rng = np.random.default_rng(self.partition_seed_ if random_state is None
                                    else seed_sequence(random_state))
        groups = np.empty(n_users, dtype=np.int64)
        groups[rng.permutation(n_users)] = np.arange(n_users) % self.n_marginals_
        return groups

    def perturb(self, X, group, random_state=None):
        """Client side: the reports of users of one group.

        Parameters
        ----------
        X : DataFrame
            Records of users assigned to ``group`` (run by each user on her
            own record in a deployment).
        group : int
            Index of the marginal these users report.
        random_state : int, Generator or None
            The users' randomness (``None``: OS entropy).

        Returns
        -------
        ndarray
            One report per user (compact array; see the oracle).
        """
        check_is_fitted(self, "marginal_sets_")
        group = _check_int("group", group, 0)
        if group >= self.n_marginals_:
            raise ValueError(f"group must be < {self.n_marginals_}; got {group}.")
        codes = self._encode(X)
        rng = np.random.default_rng(seed_sequence(random_state))
        return self._perturb_codes(codes, group, rng)

    def _perturb_codes(self, codes, group, rng):
        attrs = list(self.marginal_sets_[group])
        cells = np.ravel_multi_index(tuple(codes[:, a] for a in attrs),
                                     tuple(int(self.cardinalities_[a]) for a in attrs))
        return self.oracles_[group].perturb(cells.astype(np.int64), rng)

    # ---------------------------------------------------------------- fit
    def fit(self, X, y=None):
        """Simulate every record as one user, collect her report, release.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_users, n_features)
            One record per user, categorical (or binned numeric) columns.
        y : None
            Ignored.

        Returns
        -------
        self
        """
        codes = self._validated_codes(X)
        seeds = self._streams()
        self._plan(codes.shape[0], seeds)
        groups = self.assign_groups(codes.shape[0])
        user_streams = seeds[3].spawn(self.n_marginals_)
        order = np.argsort(groups, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(np.bincount(groups,
                                                            minlength=self.n_marginals_))])
        reports = [
            self._perturb_codes(codes[order[bounds[g]:bounds[g + 1]]], g,
                                np.random.default_rng(user_streams[g]))
            for g in range(self.n_marginals_)
        ]
        return self._release(reports)

    def fit_reports(self, reports):
        """Server side: release from the collected reports (after :meth:`plan`).

        Parameters
        ----------
        reports : list of ndarray
            ``reports[g]`` holds the reports of the users of group ``g``, as
            returned by :meth:`perturb`.

        Returns
        -------
        self
        """
        check_is_fitted(self, "marginal_sets_")
        if not isinstance(reports, (list, tuple)) or len(reports) != self.n_marginals_:
            raise ValueError(f"reports must be a list of {self.n_marginals_} arrays (one per "
                             "group).")
        return self._release(list(reports))

    def _release(self, reports):
        noisy, sizes = [], []
        for g, (attrs, oracle, rep) in enumerate(zip(self.marginal_sets_, self.oracles_, reports)):
            n_g = oracle.n_reports(rep)
            if n_g == 0:
                raise ValueError(f"reports[{g}] is empty: every group needs reports.")
            freq, _ = oracle.estimate(rep)
            shape = tuple(int(self.cardinalities_[a]) for a in attrs)
            noisy.append((tuple(attrs), freq[:int(np.prod(shape))].reshape(shape)))
            sizes.append(n_g)
        self.group_sizes_ = np.asarray(sizes, dtype=np.int64)
        self.noisy_views_ = noisy
        self.views_, self.n_postprocess_rounds_ = postprocess(
            noisy, self.cardinalities_, tol=self.negativity_tol, n_rounds=self.n_rounds)
        self.view_set_ = ViewSet(self.views_, self.cardinalities_, tol=self.maxent_tol,
                                 max_iter=self.maxent_max_iter)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        tags.input_tags.categorical = True
        tags.input_tags.allow_nan = True  # a missing category (see allow_missing)
        tags.input_tags.string = True
        tags.requires_fit = True
        return tags
