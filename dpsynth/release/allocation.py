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

The measurements are made consistent by the generalised least squares of
:func:`dpsynth.model.consistency.make_consistent` (exact, in the residual
basis of :mod:`dpsynth.model.residuals`).
"""

from dataclasses import dataclass, field
import math

import numpy as np

from ..mechanisms import (check_noise, discrete_gaussian_multiples, discrete_gaussian_scale,
                          gaussian_measure, laplace_measure)
from ..model.consistency import make_consistent
from ..model.marginal import NoisyMarginal
from ..model.residuals import (canonical_columns, cells_outside, integer_basis, marginal_table,
                               residual_size, subsets, to_residual)

__all__ = [
    "noisy_residual",
    "PlannedMeasurement",
    "Allocation",
    "optimal_allocation",
    "measure",
    "reconstruction_variance",
    "release_marginals",
]


def noisy_residual(table, cols, sub, sigma, rng, sampler="discrete"):
    """``to_residual(table, cols, sub)`` plus noise of standard deviation ``sigma`` per coordinate.

    ``sampler="continuous"``: numpy's ``N(0, sigma**2)``.  ``"discrete"``:
    the residual is ``h / R`` with ``h = (x) H_i^T`` applied to the integer
    counts (exact integers, :func:`integer_basis`) and ``R`` the outer
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
    if check_noise(sampler) == "continuous":
        theta = to_residual(table, cols, sub)
        return theta + rng.normal(0.0, sigma, size=theta.shape), sigma * sigma
    out = np.asarray(table)
    rounded = np.rint(out)
    if out.dtype.kind not in "iub" and not np.array_equal(rounded, out):
        raise ValueError("discrete noise needs integer counts.")
    out = rounded.astype(np.int64)
    norms_sq = []
    for k in reversed(range(len(cols))):
        if cols[k] in sub:
            helmert, r = integer_basis(out.shape[k])
            out = np.moveaxis(np.tensordot(out, helmert, axes=([k], [0])), -1, k)
            norms_sq.insert(0, np.arange(1, out.shape[k] + 1, dtype=np.int64)
                            * np.arange(2, out.shape[k] + 2, dtype=np.int64))
        else:
            out = out.sum(axis=k)
    multiples = np.ones((), dtype=np.int64)
    signed = np.ones(())
    for k, squared in enumerate(norms_sq):
        multiples = np.multiply.outer(multiples, squared)
        signed = np.multiply.outer(signed, integer_basis(out.shape[k] + 1)[1])
    if out.size == 0:
        return out.astype(np.float64), sigma * sigma
    smallest = sigma * math.sqrt(float(multiples.min()))
    scaled = sigma * discrete_gaussian_scale(smallest) / smallest
    noise = discrete_gaussian_multiples(scaled, multiples, rng)
    return (out + noise) / signed, scaled * scaled


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
        cols = tuple(sorted(canonical_columns(columns)))
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
    closure = sorted({sub for s in sets for sub in subsets(s)}, key=lambda a: (len(a), a))
    closure = [a for a in closure if residual_size(a, n_values) > 0]
    p = np.array([math.prod(1.0 - 1.0 / int(n_values[c]) for c in a) for a in closure])
    c = np.zeros(len(closure))
    for k, a in enumerate(closure):
        size = residual_size(a, n_values)
        for s, w in zip(sets, weights):
            if set(a) <= set(s):
                c[k] += w * size / cells_outside(s, a, n_values)
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
    list of NoisyMarginal
        Laplace noise of scale ``1/eps`` or Gaussian noise of variance
        ``1/(2 rho) * sensitivity**2`` per coordinate, as planned (the
        discrete Gaussian's calibrated scale is at most 0.5% above it for
        a variance of 10 or more; the variance recorded is the drawn one).
    """
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
        out.append(NoisyMarginal(m.columns, noisy, variance, m.basis))
    return out


def reconstruction_variance(plan, n_values, targets):
    """Total variance ``E||mu_hat_S - mu_S||^2`` of GLS-consistent marginals (no data).

    Parameters
    ----------
    plan : sequence of PlannedMeasurement or NoisyMarginal
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
        subs = [cols] if m.basis == "residual" else list(subsets(cols))
        for sub in subs:
            if residual_size(sub, n_values) > 0:
                v = m.variance * (1 if m.basis == "residual" else cells_outside(cols, sub, n_values))
                precisions[sub] = precisions.get(sub, 0.0) + 1.0 / v
    out = []
    for target in targets:
        cols = tuple(sorted(canonical_columns(target)))
        total = 0.0
        for sub in subsets(cols):
            size = residual_size(sub, n_values)
            if size == 0:
                continue
            if sub not in precisions:
                total = math.inf
                break
            total += size / precisions[sub] / cells_outside(cols, sub, n_values)
        out.append(total)
    return np.array(out)


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
