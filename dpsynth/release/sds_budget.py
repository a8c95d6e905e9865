"""The SDS release's budget: how ``(epsilon, delta)`` is split and what the thresholds are.

One place owns every number the SDS release's guarantee rests on:

- the split of the total ``(epsilon, delta)`` between the Laplace record
  count (``epsilon_records``, pure DP, basic composition) and the marginals;
- the conversion of the marginals' ``(epsilon_M, delta')`` into a zCDP budget
  ``rho = (sqrt(epsilon_M + log(1/delta')) - sqrt(log(1/delta')))**2``
  (Bun & Steinke 2016, Prop. 1.3 inverted, :func:`dpsynth.accounting.zcdp_rho`).
  The DP-marginals paper (Gopi, Mahabadi, Yekhanin, Thm 1.1) and the SDS
  design document print this without the square, which overstates the
  budget; dpsynth uses the square;
- the split of ``rho`` into ``R`` exponential-mechanism percentiles
  (``epsilon_Q`` each, ``epsilon_Q**2 / 2`` zCDP) and ``R`` Gaussian levels
  (``1 / (2 sigma_k**2)`` zCDP each, SDS eq. [3]-[4]);
- the thresholds: ``rho_1`` (DP set union, privacy-critical,
  :func:`dpsynth.accounting.first_level_threshold`) and the
  fabrication-controlling ``rho_k`` of levels ``k >= 2``.

When the 1-tuple universe is data-derived, ``delta`` is split in two halves:
``delta/2`` for the set union at level 1 (``rho_1``) and ``delta' = delta/2``
for the zCDP conversion.  When every column's categories are public the
universe is public, no set-union term is needed and ``delta' = delta``.
"""

from dataclasses import dataclass, field
import math
import numbers

import numpy as np
from scipy.special import ndtr, ndtri

from ..accounting import zcdp_rho

__all__ = ["sigma_proportions", "fabrication_thresholds", "adaptive_threshold",
           "fabrication_probability", "BudgetPlan", "plan_budget"]


def sigma_proportions(accuracy_mode, reporting_length):
    """Noise proportions ``p_1..p_R`` of SDS's accuracy modes.

    ``"prioritize_long"``: ``[1, 1/2, ..., 1/R]`` (less noise on long
    combinations); ``"prioritize_short"``: ``[1/R, ..., 1/2, 1]``;
    ``"balanced"``: all 1; or a sequence of ``R`` positive floats.
    """
    R = reporting_length
    if isinstance(accuracy_mode, str):
        if accuracy_mode == "prioritize_long":
            return np.array([1.0 / (i + 1) for i in range(R)])
        if accuracy_mode == "prioritize_short":
            return np.array([1.0 / (R - i) for i in range(R)])
        if accuracy_mode == "balanced":
            return np.ones(R)
        raise ValueError(
            "accuracy_mode must be 'auto', 'prioritize_long', 'prioritize_short', "
            f"'balanced' or a sequence of {R} positive numbers; got {accuracy_mode!r}."
        )
    try:
        proportions = np.asarray(accuracy_mode, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"accuracy_mode must be a mode name or a sequence of numbers; got {accuracy_mode!r}."
        ) from None
    if proportions.ndim != 1 or proportions.size < R:
        raise ValueError(
            f"accuracy_mode as a sequence needs one proportion per combination "
            f"length (reporting_length={R}); got {accuracy_mode!r}."
        )
    proportions = proportions[:R]
    if not np.all(np.isfinite(proportions)) or np.any(proportions <= 0):
        raise ValueError(f"accuracy_mode proportions must be finite and > 0; got {accuracy_mode!r}.")
    return proportions


def fabrication_thresholds(fabrication_mode, reporting_length):
    """Per-length threshold rules ``{k: ("adaptive", eta) | ("fixed", t)}`` for k >= 2.

    SDS definitions: ``"uncontrolled"`` eta = 1 for every k; ``"progressive"``
    eta grows linearly from 0.1 (k = 2) to 1.0 (k = R); ``"balanced"`` eta =
    0.55 for k = 2 and 1 above; ``"minimize"`` eta = 0.01 for every k.
    ``{"fixed": {k: t}}`` and ``{"adaptive": {k: eta}}`` give them per length;
    lengths not listed default to eta = 1 (adaptive) or t = 0 (fixed).
    """
    R = reporting_length
    lengths = range(2, R + 1)
    if isinstance(fabrication_mode, str):
        if fabrication_mode == "uncontrolled":
            return {k: ("adaptive", 1.0) for k in lengths}
        if fabrication_mode == "progressive":
            if R <= 2:
                return {k: ("adaptive", 0.1) for k in lengths}
            step = 0.9 / (R - 2)
            return {k: ("adaptive", min(1.0, 0.1 + step * (k - 2))) for k in lengths}
        if fabrication_mode == "balanced":
            return {k: ("adaptive", 0.55 if k == 2 else 1.0) for k in lengths}
        if fabrication_mode == "minimize":
            return {k: ("adaptive", 0.01) for k in lengths}
        raise ValueError(
            "fabrication_mode must be 'uncontrolled', 'progressive', 'balanced', "
            "'minimize', {'fixed': {k: t}} or {'adaptive': {k: eta}}; got "
            f"{fabrication_mode!r}."
        )
    if not isinstance(fabrication_mode, dict) or len(fabrication_mode) != 1:
        raise ValueError(
            "fabrication_mode as a dict must be {'fixed': {k: t}} or "
            f"{{'adaptive': {{k: eta}}}}; got {fabrication_mode!r}."
        )
    (kind, values), = fabrication_mode.items()
    if kind not in ("fixed", "adaptive") or not isinstance(values, dict):
        raise ValueError(
            "fabrication_mode as a dict must be {'fixed': {k: t}} or "
            f"{{'adaptive': {{k: eta}}}}; got {fabrication_mode!r}."
        )
    rules = {k: (kind, 1.0 if kind == "adaptive" else 0.0) for k in lengths}
    for k, value in values.items():
        if not isinstance(k, numbers.Integral) or not 2 <= k:
            raise ValueError(
                f"fabrication_mode keys are combination lengths >= 2 (the 1-tuple "
                f"threshold is fixed by privacy); got {k!r}."
            )
        if not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise ValueError(f"fabrication_mode value for length {k} must be a number; got {value!r}.")
        if kind == "adaptive" and not 0 < value <= 1:
            raise ValueError(f"adaptive fabrication eta must be in (0, 1]; got {value!r} for length {k}.")
        if kind == "fixed" and value < 0:
            raise ValueError(f"fixed fabrication thresholds must be >= 0; got {value!r} for length {k}.")
        if k > R:  # would be silently ignored
            raise ValueError(
                f"fabrication_mode names length {k}, but reporting_length is {R}; "
                f"give lengths 2..{R} only.")
        rules[int(k)] = (kind, float(value))
    return rules


def adaptive_threshold(sigma, contribution_bound, eta):
    """``rho_k = sigma_k * sqrt(Delta_k) * PhiInv(1 - eta/2)`` (SDS adaptive rule, Delta_k).

    A zero-count candidate is then kept with probability ``eta / 2``.
    """
    return sigma * math.sqrt(contribution_bound) * float(-ndtri(eta / 2.0)) + 0.0


def fabrication_probability(threshold, sigma, contribution_bound):
    """Probability that a zero-count candidate's noisy count exceeds ``threshold``."""
    return float(1.0 - ndtr(threshold / (sigma * math.sqrt(contribution_bound))))


@dataclass
class BudgetPlan:
    """How the total privacy budget is spent; every field is public.

    Attributes
    ----------
    epsilon, delta : float
        Total guarantee of the release.
    epsilon_records : float
        Laplace budget of the record count.
    epsilon_marginals : float
        ``epsilon - epsilon_records``, converted to zCDP.
    conversion_delta : float
        The delta of the zCDP -> (epsilon, delta) conversion (``delta/2`` with
        a data-derived 1-tuple universe, ``delta`` with a public one).
    rho : float
        zCDP budget of the marginals.
    percentile_epsilon : float
        Pure-DP budget of each of the ``R`` percentile selections.
    sigmas : ndarray
        Noise multiplier ``sigma_k`` of each level (the noise std is
        ``sigma_k * sqrt(Delta_k)``).
    public_universe : bool
    rho_reserved : float
        Part of ``rho`` spent before the release (an encoder's zCDP
        mechanisms, e.g. the DP binning of numeric columns); the
        percentiles and levels share the rest.
    """

    epsilon: float
    delta: float
    epsilon_records: float
    epsilon_marginals: float
    conversion_delta: float
    rho: float
    percentile_epsilon: float
    sigmas: np.ndarray = field(repr=False)
    public_universe: bool = False
    rho_reserved: float = 0.0

    @property
    def reporting_length(self):
        return len(self.sigmas)


def plan_budget(*, epsilon, delta, reporting_length, percentile_epsilon_proportion,
                proportions, epsilon_records, public_universe, rho_reserved=0.0):
    """Split the budget (SDS eq. [3]-[4] with the squared zCDP conversion).

    ``R * eps_Q**2 / 2 = rho' * Q_p`` and ``sum_k 1 / (2 sigma_k**2) = rho' * (1 - Q_p)``
    with ``sigma_k = p_k * sigma`` and ``rho' = rho - rho_reserved``.
    """
    epsilon_marginals = epsilon - epsilon_records
    if not epsilon_marginals > 0:
        raise ValueError("The record count uses the whole epsilon; lower "
                         "number_of_records_epsilon_proportion.")
    conversion_delta = delta if public_universe else delta / 2.0
    rho = zcdp_rho(epsilon_marginals, conversion_delta)
    available = rho - float(rho_reserved)
    if not available > 0:
        raise ValueError(f"The encoder's DP steps spent rho {rho_reserved:g}, the whole "
                         f"budget of the marginals ({rho:g}); raise epsilon.")
    R = reporting_length
    q_p = percentile_epsilon_proportion
    percentile_epsilon = math.sqrt(2.0 * available * q_p / R)
    proportions = np.asarray(proportions, dtype=np.float64)
    sigma = math.sqrt(np.sum(1.0 / proportions**2) / (2.0 * available * (1.0 - q_p)))
    return BudgetPlan(
        epsilon=float(epsilon), delta=float(delta),
        epsilon_records=float(epsilon_records),
        epsilon_marginals=float(epsilon_marginals),
        conversion_delta=float(conversion_delta), rho=float(rho),
        percentile_epsilon=float(percentile_epsilon),
        sigmas=proportions * sigma, public_universe=bool(public_universe),
        rho_reserved=float(rho_reserved),
    )
