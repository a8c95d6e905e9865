"""Optimal noise allocation and exact consistency for a workload of marginals.

A *workload* is a list of attribute (column) sets ``S``, each standing for
the dense marginal table ``mu_S`` (counts over every combination of the
columns' codes), with optional weights ``w_S``.  The attributes' numbers of
codes ``n_values`` are public.  Privacy unit: one record, add/remove
neighbours (every record adds 1 to exactly one cell of every marginal; the
factor 2 of Cormode et al.'s Prop. 3.1 is replace-one DP and is not used).

Two strategies (``strategy=``):

``"marginals"`` (Cormode, Procopiuc, Srivastava & Yaroslavtsev, "Accurate
and Efficient Private Release of Datacubes", ICDT 2013, Sec. 3, "Q+")
    Measure every workload marginal with its own noise.  Each marginal is
    one group of the strategy (grouping number 1), so the closed form of
    their Cor. 3.3 applies with ``s_r = w_r * cells_r``:

    - Laplace (epsilon-DP): ``eps_r = eps * s_r**(1/3) / sum_t s_t**(1/3)``,
      total variance ``2 (sum_r s_r**(1/3))**3 / eps**2`` before recovery;
    - Gaussian (rho-zCDP): ``1/sigma_r**2 = 2 rho sqrt(s_r) / sum_t sqrt(s_t)``,
      total variance ``(sum_r sqrt(s_r))**2 / (2 rho)`` before recovery.

    The noisy marginals are then made consistent by generalised least
    squares (:func:`make_consistent`), which lowers the error further
    (their Sec. 3.2; the introduction's example goes from 46.17/eps**2 to
    30.0/eps**2).
``"residuals"`` (ResidualPlanner: Xiao, Ding, Wang, Zhang & Kifer, "An
Optimal and Scalable Matrix Mechanism for Noisy Marginals under Convex Loss
Functions", NeurIPS 2023)
    Gaussian noise only.  Every marginal is an orthogonal sum of *residuals*
    ``theta_A = (x) U_i^T mu_A`` over the subsets ``A`` of its columns
    (``U_i``: an orthonormal basis of the contrasts of column ``i``, the
    vectors orthogonal to the all-ones vector).  Measure each residual of
    the workload's downward closure once, ``theta_A + N(0, tau_A**2 I)``
    (squared L2 sensitivity ``p_A = prod_{i in A} (1 - 1/n_i)``), and choose
    ``tau_A`` to minimise ``sum_A c_A tau_A**2`` subject to ``sum_A p_A /
    (2 tau_A**2) = rho``, where ``c_A = sum_{S >= A} w_S prod_{i in A}
    (n_i - 1) / prod_{i in S - A} n_i`` is the variance the residual adds to
    the weighted workload: ``tau_A**2 = sqrt(p_A / c_A) sum_B sqrt(p_B c_B) /
    (2 rho)``, total ``(sum_A sqrt(p_A c_A))**2 / (2 rho)``.  For marginal
    workloads and the weighted total variance this is optimal among all
    Gaussian linear mechanisms (Xiao et al., Thm. 4.2).

``strategy="auto"`` (the default) picks the one with the lower expected
weighted total squared error after reconstruction: with Gaussian noise this
is ResidualPlanner in every case we have tried (it is provably optimal; the
comparison is kept so that the choice is visible in
:attr:`Allocation.expected_errors`); Laplace noise has only ``"marginals"``.

Consistency (:func:`make_consistent`) is exact generalised least squares in
the residual basis: the component ``theta_A`` of every measured marginal
``S >= A`` is an independent unbiased estimate of ``theta_A`` with variance
``v_S prod_{i in S - A} n_i`` per coordinate (the projections onto the
orthogonal residual subspaces of isotropic noise are independent), and the
residuals of different ``A`` are free parameters of the consistent
marginals, so the GLS estimate is the inverse-variance average per ``A``.
This is the Fourier consistency of Cormode et al. (Sec. 4) generalised from
binary to any number of codes, and the reconstruction of ResidualPlanner.
It costs ``O(sum_S 2**|S| cells_S)`` and never touches the full domain.
The outputs are exactly consistent: two marginals sharing columns have the
same sub-marginal, and every marginal has the same total.  They are
unbiased, hence may be negative (non-negativity is left to the consumer,
e.g. the population fit of :mod:`dpsynth.release.fitting`).
"""

from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations
import math

import numpy as np

__all__ = [
    "PlannedMeasurement",
    "Allocation",
    "Measurement",
    "ConsistentMarginal",
    "contrast_basis",
    "marginal_table",
    "optimal_allocation",
    "measure",
    "make_consistent",
    "reconstruction_variance",
    "release_marginals",
]


# ----------------------------------------------------------------- basics
@lru_cache(maxsize=256)
def _basis(n):
    if n < 1:
        raise ValueError(f"a column needs at least one code; got {n}.")
    if n == 1:
        return np.zeros((1, 0))
    # orthonormal basis of the complement of the all-ones vector (QR of a
    # Helmert-like matrix: deterministic, so results are reproducible)
    helmert = np.zeros((n, n - 1))
    for k in range(1, n):
        helmert[:k, k - 1] = 1.0
        helmert[k, k - 1] = -k
    q, _ = np.linalg.qr(helmert)
    q.setflags(write=False)
    return q


def contrast_basis(n):
    """Orthonormal ``n x (n - 1)`` basis ``U`` of the vectors orthogonal to ones.

    ``U.T @ U = I`` and ``U @ U.T = I - 1 1^T / n``.
    """
    return _basis(int(n))


def _canonical(columns):
    cols = tuple(int(c) for c in columns)
    if len(set(cols)) != len(cols):
        raise ValueError(f"a marginal's columns must be distinct; got {columns!r}.")
    return cols


def _subsets(cols):
    for k in range(len(cols) + 1):
        yield from combinations(cols, k)


def marginal_table(codes, n_values, columns):
    """Dense counts of ``codes`` (n, d) over ``columns``; shape ``n_values[columns]``."""
    cols = _canonical(columns)
    shape = tuple(int(n_values[c]) for c in cols)
    if not cols:
        return np.array(float(len(codes)))
    key = np.ravel_multi_index(tuple(np.asarray(codes)[:, c] for c in cols), shape)
    return np.bincount(key, minlength=int(np.prod(shape))).reshape(shape).astype(np.float64)


def _to_residual(table, cols, sub):
    """``(x)_{i in sub} U_i^T (x)_{i in cols - sub} 1^T`` applied to ``table``."""
    out = np.asarray(table, dtype=np.float64)
    for k in reversed(range(len(cols))):
        if cols[k] in sub:
            out = np.moveaxis(np.tensordot(out, _basis(out.shape[k]), axes=([k], [0])), -1, k)
        else:
            out = out.sum(axis=k)
    return out


@lru_cache(maxsize=256)
def _integer_basis(n):
    """Integer Helmert matrix ``H`` (``n x (n - 1)``) and ``r`` with ``contrast_basis(n) = H / r``.

    The columns of ``H`` are orthogonal (ones above, ``-k`` on row ``k``),
    so the QR of :func:`_basis` only rescales them: ``r`` holds the signed
    column norms ``±sqrt(k (k + 1))``.
    """
    helmert = np.zeros((n, max(n - 1, 0)), dtype=np.int64)
    for k in range(1, n):
        helmert[:k, k - 1] = 1
        helmert[k, k - 1] = -k
    norms = np.sqrt(np.arange(1, n, dtype=np.float64) * np.arange(2, n + 1))
    signs = np.sign(np.einsum("ij,ij->j", helmert, _basis(n)))
    helmert.setflags(write=False)
    return helmert, signs * norms


def noisy_residual(table, cols, sub, sigma, rng, sampler="discrete"):
    """``_to_residual(table, cols, sub)`` plus noise of standard deviation ``sigma`` per coordinate.

    ``sampler="continuous"``: numpy's ``N(0, sigma**2)``.  ``"discrete"``:
    the residual is ``h / R`` with ``h = (x) H_i^T`` applied to the integer
    counts (exact integers, :func:`_integer_basis`) and ``R`` the outer
    product of the column norms, so each coordinate ``h_j`` gets exact
    discrete Gaussian noise of scale ``f sigma |R_j|`` and the result is
    ``(h + noise) / R`` (post-processing).  A record shifts ``h`` by an
    integer vector ``v`` with ``sum_j (v_j / R_j)**2`` the residual's
    squared sensitivity, so coordinate ``j`` is ``|v_j| / (sigma |R_j|)``-GDP
    at scale ``f sigma |R_j|`` when ``f`` is the calibration
    (:func:`~dpsynth.mechanisms.discrete_gaussian_scale`) at the smallest
    ``sigma |R_j|`` (the excess of the discrete Gaussian's ``mu`` shrinks
    as the scale grows): the whole is accounted as the continuous one.

    Returns
    -------
    noisy : ndarray of float64
    variance : float
        Noise variance per coordinate (at most ``(f sigma)**2``).
    """
    from ..mechanisms import check_noise, discrete_gaussian_multiples, discrete_gaussian_scale
    if check_noise(sampler) == "continuous":
        theta = _to_residual(table, cols, sub)
        return theta + rng.normal(0.0, sigma, size=theta.shape), sigma * sigma
    out = np.asarray(table)
    rounded = np.rint(out)
    if out.dtype.kind not in "iub" and not np.array_equal(rounded, out):
        raise ValueError("discrete noise needs integer counts.")
    out = rounded.astype(np.int64)
    norms_sq = []
    for k in reversed(range(len(cols))):
        if cols[k] in sub:
            helmert, r = _integer_basis(out.shape[k])
            out = np.moveaxis(np.tensordot(out, helmert, axes=([k], [0])), -1, k)
            norms_sq.insert(0, np.arange(1, out.shape[k] + 1, dtype=np.int64)
                            * np.arange(2, out.shape[k] + 2, dtype=np.int64))
        else:
            out = out.sum(axis=k)
    multiples = np.ones((), dtype=np.int64)
    signed = np.ones(())
    for k, squared in enumerate(norms_sq):
        multiples = np.multiply.outer(multiples, squared)
        signed = np.multiply.outer(signed, _integer_basis(out.shape[k] + 1)[1])
    if out.size == 0:
        return out.astype(np.float64), sigma * sigma
    smallest = sigma * math.sqrt(float(multiples.min()))
    scaled = sigma * discrete_gaussian_scale(smallest) / smallest
    noise = discrete_gaussian_multiples(scaled, multiples, rng)
    return (out + noise) / signed, scaled * scaled


def _from_residual(theta, cols, sub, n_values):
    """The part of marginal ``cols`` carried by residual ``sub``: ``(x) U_i (x) 1/n_i``."""
    out = np.asarray(theta, dtype=np.float64)
    for k, c in enumerate(sub):
        out = np.moveaxis(np.tensordot(out, _basis(int(n_values[c])), axes=([k], [1])), -1, k)
    shape = [int(n_values[c]) if c in sub else 1 for c in cols]
    scale = math.prod(int(n_values[c]) for c in cols if c not in sub)
    full = tuple(int(n_values[c]) for c in cols)
    return np.broadcast_to(out.reshape(shape) / scale, full)


def _residual_size(sub, n_values):
    return math.prod(int(n_values[c]) - 1 for c in sub)


def _outside(cols, sub, n_values):
    return math.prod(int(n_values[c]) for c in cols if c not in sub)


# ------------------------------------------------------------- allocation
@dataclass(frozen=True)
class PlannedMeasurement:
    """One measurement of a plan.

    Attributes
    ----------
    columns : tuple of int
        Sorted columns.
    basis : {"marginal", "residual"}
        ``"marginal"``: the dense marginal table; ``"residual"``: the
        residual ``theta_A`` (a table over ``n_values[c] - 1`` per column).
    budget : float
        ``epsilon`` (Laplace) or ``rho`` (Gaussian, zCDP) of this measurement.
    variance : float
        Noise variance of every coordinate.
    """

    columns: tuple
    basis: str
    budget: float
    variance: float


@dataclass(frozen=True)
class Allocation:
    """A noise allocation for a workload (see :func:`optimal_allocation`).

    Attributes
    ----------
    workload : tuple of tuple of int
    weights : tuple of float
    noise : {"gaussian", "laplace"}
    budget : float
        Total ``rho`` (Gaussian) or ``epsilon`` (Laplace).
    strategy : {"marginals", "residuals"}
    measurements : tuple of PlannedMeasurement
    expected_error : float
        Weighted total expected squared error of the workload's consistent
        marginals (``sum_S w_S E||mu_hat_S - mu_S||^2``).
    expected_errors : dict
        The same for every strategy considered, and ``"marginals, direct"``
        (the marginals strategy without consistency).
    """

    workload: tuple
    weights: tuple
    noise: str
    budget: float
    strategy: str
    measurements: tuple
    expected_error: float
    expected_errors: dict = field(default_factory=dict)


def _check_workload(workload, n_values, weights):
    n_values = np.asarray(n_values)
    if n_values.ndim != 1 or n_values.size == 0 or np.any(n_values < 1):
        raise ValueError("n_values must be a non-empty 1-D array of positive integers.")
    if len(workload) == 0:
        raise ValueError("workload must hold at least one column set.")
    sets = []
    for columns in workload:
        cols = tuple(sorted(_canonical(columns)))
        if any(not 0 <= c < n_values.size for c in cols):
            raise ValueError(f"workload column set {columns!r} has a column outside "
                             f"range({n_values.size}).")
        sets.append(cols)
    if len(set(sets)) != len(sets):
        raise ValueError("workload holds a column set twice; merge their weights.")
    if weights is None:
        weights = np.ones(len(sets))
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (len(sets),) or not np.all(np.isfinite(weights)) or np.any(weights <= 0):
        raise ValueError("weights must hold one finite positive number per workload set.")
    return sets, weights, n_values


def _marginal_plan(sets, weights, n_values, budget, noise):
    cells = np.array([math.prod(int(n_values[c]) for c in s) for s in sets], dtype=float)
    s = weights * cells
    if noise == "laplace":
        eta = budget * np.cbrt(s) / np.cbrt(s).sum()
        variance = 2.0 / eta**2
        budgets = eta
    else:
        precision = 2.0 * budget * np.sqrt(s) / np.sqrt(s).sum()
        variance = 1.0 / precision
        budgets = precision / 2.0
    return tuple(PlannedMeasurement(c, "marginal", float(b), float(v))
                 for c, b, v in zip(sets, budgets, variance))


def _residual_plan(sets, weights, n_values, rho):
    closure = sorted({sub for s in sets for sub in _subsets(s)}, key=lambda a: (len(a), a))
    closure = [a for a in closure if _residual_size(a, n_values) > 0]
    p = np.array([math.prod(1.0 - 1.0 / int(n_values[c]) for c in a) for a in closure])
    c = np.zeros(len(closure))
    for k, a in enumerate(closure):
        size = _residual_size(a, n_values)
        for s, w in zip(sets, weights):
            if set(a) <= set(s):
                c[k] += w * size / _outside(s, a, n_values)
    total = np.sqrt(p * c).sum()
    variance = np.sqrt(p / c) * total / (2.0 * rho)
    budgets = p / (2.0 * variance)
    return tuple(PlannedMeasurement(a, "residual", float(b), float(v))
                 for a, b, v in zip(closure, budgets, variance))


def optimal_allocation(workload, n_values, budget, *, weights=None, noise="gaussian",
                       strategy="auto"):
    """Per-measurement budgets minimising the workload's expected squared error.

    Parameters
    ----------
    workload : sequence of sequence of int
        Column sets whose marginals are wanted.
    n_values : array-like of int
        Public number of codes of every column.
    budget : float
        ``rho`` (zCDP) for ``noise="gaussian"``, ``epsilon`` for
        ``noise="laplace"``; the plan spends exactly this.
    weights : array-like of float, optional
        Weight ``w_S`` of every workload marginal in the loss (default 1).
    noise : {"gaussian", "laplace"}, default="gaussian"
    strategy : {"auto", "residuals", "marginals"}, default="auto"
        See the module docstring.  ``"auto"`` picks the lower expected error
        after GLS reconstruction (ResidualPlanner for Gaussian noise).

    Returns
    -------
    Allocation
    """
    sets, weights, n_values = _check_workload(workload, n_values, weights)
    if noise not in ("gaussian", "laplace"):
        raise ValueError(f"noise must be 'gaussian' or 'laplace'; got {noise!r}.")
    if strategy not in ("auto", "residuals", "marginals"):
        raise ValueError(f"strategy must be 'auto', 'residuals' or 'marginals'; got {strategy!r}.")
    if not (isinstance(budget, (int, float, np.floating)) and math.isfinite(budget)
            and budget > 0):
        raise ValueError(f"budget must be a finite number > 0; got {budget!r}.")
    if noise == "laplace" and strategy == "residuals":
        raise ValueError("strategy='residuals' (ResidualPlanner) needs noise='gaussian'.")
    plans = {"marginals": _marginal_plan(sets, weights, n_values, budget, noise)}
    if noise == "gaussian" and strategy != "marginals":
        plans["residuals"] = _residual_plan(sets, weights, n_values, budget)
    errors = {}
    for name, plan in plans.items():
        variances = reconstruction_variance(plan, n_values, sets)
        errors[name] = float(np.dot(weights, variances))
    errors["marginals, direct"] = float(sum(
        w * m.variance * math.prod(int(n_values[c]) for c in m.columns)
        for w, m in zip(weights, plans["marginals"])))
    if strategy == "auto":
        strategy = min(plans, key=lambda name: errors[name])
    return Allocation(workload=tuple(sets), weights=tuple(float(w) for w in weights),
                      noise=noise, budget=float(budget), strategy=strategy,
                      measurements=plans[strategy], expected_error=errors[strategy],
                      expected_errors=errors)


# ----------------------------------------------------------- measurement
@dataclass(frozen=True)
class Measurement:
    """A noisy measurement: a dense marginal or a residual, with iid noise.

    Attributes
    ----------
    columns : tuple of int
        Sorted columns.
    values : ndarray of float64
        Shape ``n_values[columns]`` (``basis="marginal"``) or
        ``n_values[columns] - 1`` (``basis="residual"``).
    variance : float
        Noise variance of every coordinate.
    basis : {"marginal", "residual"}
    """

    columns: tuple
    values: np.ndarray
    variance: float
    basis: str = "marginal"


def measure(codes, n_values, allocation, rng, sampler="discrete"):
    """Measure a plan on integer codes (the only step that reads the data).

    Parameters
    ----------
    codes : ndarray of int, shape (n, d)
        Code ``j`` of column ``c`` in ``0..n_values[c] - 1``.
    n_values : array-like of int
    allocation : Allocation or sequence of PlannedMeasurement
    rng : numpy.random.Generator or int or None
    sampler : {"discrete", "continuous"}, default="discrete"
        Exact integer noise (discrete Gaussian or Laplace of the planned
        scale, :mod:`dpsynth.mechanisms`) or numpy's floating-point noise.

    Returns
    -------
    list of Measurement
        Laplace noise of scale ``1/eps`` or Gaussian noise of variance
        ``1/(2 rho) * sensitivity**2`` per coordinate, as planned (the
        discrete Gaussian's calibrated scale is at most 0.5% above it for
        a variance of 10 or more; the variance recorded is the drawn one).
    """
    from ..mechanisms import check_noise, gaussian_measure, laplace_measure
    check_noise(sampler)
    rng = np.random.default_rng(rng)
    codes = np.asarray(codes)
    n_values = np.asarray(n_values)
    if codes.ndim != 2 or codes.shape[1] != n_values.size:
        raise ValueError("codes must be a 2-D array with one column per entry of n_values.")
    if codes.size and (codes.min() < 0 or np.any(codes.max(axis=0) >= n_values)):
        raise ValueError("codes must lie in 0..n_values[c] - 1 for every column c.")
    plan = allocation.measurements if isinstance(allocation, Allocation) else allocation
    noise = allocation.noise if isinstance(allocation, Allocation) else "gaussian"
    out = []
    for m in plan:
        table = marginal_table(codes, n_values, m.columns)
        variance = m.variance
        if m.basis == "residual":
            noisy, variance = noisy_residual(table, m.columns, m.columns,
                                             math.sqrt(m.variance), rng, sampler)
        elif noise == "laplace":
            scale = math.sqrt(m.variance / 2.0)
            noisy = laplace_measure(table, 1.0, rng, sampler, sensitivity=scale)
            if sampler == "discrete":  # the discrete Laplace's variance 2q / (1 - q)**2
                q = math.exp(-1.0 / scale)
                variance = 2.0 * q / (1.0 - q) ** 2
        else:
            noisy, scale = gaussian_measure(table, math.sqrt(m.variance), rng, sampler)
            variance = float(scale) ** 2
        out.append(Measurement(m.columns, noisy, variance, m.basis))
    return out


# ----------------------------------------------------------- consistency
@dataclass(frozen=True)
class ConsistentMarginal:
    """A marginal of the GLS-consistent estimate.

    Attributes
    ----------
    columns : tuple of int
    table : ndarray of float64, shape ``n_values[columns]``
        Unbiased, possibly negative.
    variance : float
        Mean variance of its cells (``inf`` if part of it was never
        measured: that part is then the minimum-norm completion).
    """

    columns: tuple
    table: np.ndarray
    variance: float


def _residual_estimates(measurements, n_values):
    """Inverse-variance averages ``{A: (theta_hat_A, variance per coordinate)}``."""
    sums, precisions = {}, {}
    for m in measurements:
        cols = tuple(m.columns)
        values = np.asarray(m.values, dtype=np.float64)
        if list(cols) != sorted(cols):
            order = np.argsort(cols)
            cols = tuple(cols[i] for i in order)
            values = values.transpose(order)
        if m.basis == "residual":
            parts = [(cols, values, m.variance)]
        elif m.basis == "marginal":
            parts = [(sub, _to_residual(values, cols, sub),
                      m.variance * _outside(cols, sub, n_values))
                     for sub in _subsets(cols) if _residual_size(sub, n_values) > 0]
        else:
            raise ValueError(f"unknown measurement basis {m.basis!r}.")
        for sub, estimate, variance in parts:
            if not variance > 0:
                raise ValueError("measurement variances must be > 0.")
            sums[sub] = sums.get(sub, 0.0) + estimate / variance
            precisions[sub] = precisions.get(sub, 0.0) + 1.0 / variance
    return {sub: (sums[sub] / precisions[sub], 1.0 / precisions[sub]) for sub in sums}


def reconstruction_variance(plan, n_values, targets):
    """Total variance ``E||mu_hat_S - mu_S||^2`` of GLS-consistent marginals (no data).

    Parameters
    ----------
    plan : sequence of PlannedMeasurement or Measurement
    n_values : array-like of int
    targets : sequence of column sets

    Returns
    -------
    ndarray
        One total variance per target (``inf`` if a part was never measured).
    """
    n_values = np.asarray(n_values)
    precisions = {}
    for m in plan:
        cols = tuple(sorted(m.columns))
        subs = [cols] if m.basis == "residual" else list(_subsets(cols))
        for sub in subs:
            if _residual_size(sub, n_values) > 0:
                v = m.variance * (1 if m.basis == "residual" else _outside(cols, sub, n_values))
                precisions[sub] = precisions.get(sub, 0.0) + 1.0 / v
    out = []
    for target in targets:
        cols = tuple(sorted(_canonical(target)))
        total = 0.0
        for sub in _subsets(cols):
            size = _residual_size(sub, n_values)
            if size == 0:
                continue
            if sub not in precisions:
                total = math.inf
                break
            total += size / precisions[sub] / _outside(cols, sub, n_values)
        out.append(total)
    return np.array(out)


def make_consistent(measurements, n_values, targets=None, possible=None):
    """Exactly consistent marginals by generalised least squares (residual basis).

    Parameters
    ----------
    measurements : sequence of Measurement or of ``(columns, table, variance)``
        Noisy dense marginals (or residuals) with iid noise of the given
        variance per coordinate; tables may be negative.
    n_values : array-like of int
    targets : sequence of column sets, optional
        Marginals to return (default: the measured column sets, in order).
        A target with a part never measured gets the minimum-norm
        completion of that part (its residual set to 0, e.g. the additive,
        not the independent, combination of two measured 1-way marginals)
        and ``variance=inf``.
    possible : sequence of array-like of bool, optional
        Per column, the codes that can occur (public facts, e.g. no missing
        value in a column declared without).  The GLS then runs on those
        codes only: marginal measurements must hold exact zeros elsewhere
        (they are dropped there), residual measurements are over the
        possible codes (shape ``possible[c].sum() - 1`` per column), and
        the outputs are zero on the impossible cells.

    Returns
    -------
    list of ConsistentMarginal
        The GLS estimate (minimum variance among unbiased linear estimates
        that are consistent): every pair of outputs agrees on its shared
        sub-marginal and all have the same total.
    """
    n_values = np.asarray(n_values)
    if possible is not None:
        return _consistent_on_possible(measurements, n_values, targets, possible)
    items = []
    for m in map(_as_measurement, measurements):
        expected = tuple(int(n_values[c]) - (m.basis == "residual") for c in m.columns)
        if np.shape(m.values) != expected:
            raise ValueError(f"measurement over {m.columns} has shape {np.shape(m.values)}; "
                             f"expected {expected}.")
        items.append(m)
    estimates = _residual_estimates(items, n_values)
    if targets is None:
        targets = [m.columns for m in items]
    out = []
    for target in targets:
        cols = _canonical(target)
        scols = tuple(sorted(cols))
        shape = tuple(int(n_values[c]) for c in scols)
        table = np.zeros(shape)
        variance = 0.0
        for sub in _subsets(scols):
            size = _residual_size(sub, n_values)
            if size == 0:
                continue
            if sub not in estimates:
                variance = math.inf
                if not sub:  # no total at all: nothing to complete from
                    raise ValueError("no measurement estimates the total.")
                continue
            theta, var = estimates[sub]
            table += _from_residual(theta, scols, sub, n_values)
            variance += size * var / _outside(scols, sub, n_values)
        if scols != cols:  # back to the caller's column order
            table = table.transpose([scols.index(c) for c in cols])
        out.append(ConsistentMarginal(cols, table, variance / max(table.size, 1)))
    return out


def _as_measurement(m):
    """``m`` as a :class:`Measurement` (from one, or from ``(columns, table, variance)``)."""
    if isinstance(m, Measurement):
        return m
    columns, table, variance = m
    return Measurement(tuple(int(c) for c in columns), np.asarray(table, dtype=float),
                       float(variance))


def _consistent_on_possible(measurements, n_values, targets, possible):
    """:func:`make_consistent` on the possible codes only, zero-padded back."""
    possible = [np.asarray(p, dtype=bool) for p in possible]
    if len(possible) != n_values.size or any(p.shape != (int(k),)
                                             for p, k in zip(possible, n_values)):
        raise ValueError("possible must hold one boolean array of n_values[c] codes per "
                         "column c.")
    free = np.array([int(p.sum()) for p in possible])
    items = []
    for m in map(_as_measurement, measurements):
        if m.basis == "marginal":
            values = np.asarray(m.values, dtype=float)
            expected = tuple(int(n_values[c]) for c in m.columns)
            if values.shape != expected:
                raise ValueError(f"measurement over {m.columns} has shape {values.shape}; "
                                 f"expected {expected}.")
            m = Measurement(m.columns, values[np.ix_(*[possible[c] for c in m.columns])],
                            m.variance)
        items.append(m)
    if targets is None:
        targets = [m.columns for m in items]
    out = []
    for m in make_consistent(items, free, targets):
        shape = tuple(int(n_values[c]) for c in m.columns)
        table = np.zeros(shape)
        table[np.ix_(*[possible[c] for c in m.columns])] = m.table
        out.append(ConsistentMarginal(m.columns, table,
                                      m.variance * max(m.table.size, 1) / max(table.size, 1)))
    return out


def release_marginals(codes, n_values, workload, budget, rng, *, weights=None,
                      noise="gaussian", strategy="auto", sampler="discrete"):
    """Plan, measure and make consistent: the non-adaptive release of a workload.

    :func:`optimal_allocation`, then :func:`measure` (the only data access;
    it spends exactly ``budget``), then :func:`make_consistent` for the
    workload's column sets.  ``sampler`` is :func:`measure`'s (exact
    integer noise by default).

    Returns
    -------
    marginals : list of ConsistentMarginal
        One per workload set, in order.
    allocation : Allocation
        The plan (budgets and variances of every measurement: the privacy
        report's entries).
    """
    allocation = optimal_allocation(workload, n_values, budget, weights=weights, noise=noise,
                                    strategy=strategy)
    measurements = measure(codes, n_values, allocation, rng, sampler=sampler)
    return make_consistent(measurements, n_values, list(workload)), allocation
