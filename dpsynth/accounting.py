"""Privacy accounting: the SDS release's budget, the default delta, the privacy report.

:class:`PrivacySpent` is the report every release writes, and
:data:`DEFAULT_DELTA` / :func:`check_delta` hold for every release.  For the
SDS release (``release="sds"``), one place owns every number that the privacy
guarantee rests on (the workload release converts its budget with
:mod:`dpsynth.release.conversion`):

- the split of the total ``(epsilon, delta)`` between the Laplace record
  count (``epsilon_records``, pure DP, basic composition) and the marginals;
- the conversion of the marginals' ``(epsilon_M, delta')`` into a zCDP budget
  ``rho = (sqrt(epsilon_M + log(1/delta')) - sqrt(log(1/delta')))**2``
  (Bun & Steinke 2016, Prop. 1.3 inverted).  The DP-marginals paper (Gopi,
  Mahabadi, Yekhanin, Thm 1.1) and the SDS design document print this
  without the square, which overstates the budget; dpsynth uses the square;
- the split of ``rho`` into ``R`` exponential-mechanism percentiles
  (``epsilon_Q`` each, ``epsilon_Q**2 / 2`` zCDP) and ``R`` Gaussian levels
  (``1 / (2 sigma_k**2)`` zCDP each, SDS eq. [3]-[4]);
- the thresholds: ``rho_1`` (DP set union, privacy-critical) and the
  fabrication-controlling ``rho_k`` of levels ``k >= 2``.

When the 1-tuple universe is data-derived, ``delta`` is split in two halves:
``delta/2`` for the set union at level 1 (``rho_1``) and ``delta' = delta/2``
for the zCDP conversion.  When every column's categories are public the
universe is public, no set-union term is needed and ``delta' = delta``.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
import math
import numbers
from types import MappingProxyType

import numpy as np
from scipy.special import ndtri, ndtr

__all__ = [
    "zcdp_rho",
    "zcdp_to_epsilon",
    "sigma_proportions",
    "fabrication_thresholds",
    "first_level_threshold",
    "adaptive_threshold",
    "fabrication_probability",
    "BudgetPlan",
    "plan_budget",
    "DEFAULT_DELTA",
    "check_delta",
    "Spend",
    "PrivacySpent",
]


def zcdp_rho(epsilon, delta):
    """Largest zCDP ``rho`` whose ``(epsilon, delta)``-DP conversion fits the budget.

    ``rho = (sqrt(epsilon + L) - sqrt(L))**2`` with ``L = log(1/delta)``; it
    satisfies ``rho + 2 * sqrt(rho * L) = epsilon`` exactly.
    """
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0; got {epsilon}.")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1); got {delta}.")
    log_term = math.log(1.0 / delta)
    return (math.sqrt(epsilon + log_term) - math.sqrt(log_term)) ** 2


def zcdp_to_epsilon(rho, delta):
    """``epsilon`` of the ``(epsilon, delta)``-DP guarantee implied by ``rho``-zCDP."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


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


def first_level_threshold(sigma, contribution_bound, delta):
    """``rho_1 = 1 + sigma * sqrt(Delta_1) * PhiInv((1 - delta/2)**(1/Delta_1))``.

    With this threshold, each of the at most ``Delta_1`` attributes unique to
    one record crosses it with probability ``q = 1 - (1 - delta/2)**(1/Delta_1)``,
    so some crossing happens with probability exactly ``delta/2`` (DP set
    union, Gopi et al. Algorithm 1).  ``q`` is computed with ``expm1/log1p``
    for precision at small ``delta``.
    """
    q = -math.expm1(math.log1p(-delta / 2.0) / contribution_bound)
    return 1.0 + sigma * math.sqrt(contribution_bound) * float(-ndtri(q))


def adaptive_threshold(sigma, contribution_bound, eta):
    """``rho_k = sigma_k * sqrt(Delta_k) * PhiInv(1 - eta/2)`` (SDS adaptive rule, Delta_k).

    A zero-count candidate is then kept with probability ``eta / 2``.
    """
    return sigma * math.sqrt(contribution_bound) * float(-ndtri(eta / 2.0)) + 0.0


def fabrication_probability(threshold, sigma, contribution_bound):
    """Probability that a zero-count candidate's noisy count exceeds ``threshold``."""
    return float(1.0 - ndtr(threshold / (sigma * math.sqrt(contribution_bound))))


#: Default ``delta``: a constant fixed before seeing any data.  A delta
#: chosen from the data (SDS's ``1 / (n ln n)`` with ``n`` a DP count) is not
#: the delta that holds.  ``1e-9`` (private-pgm's AIM default) is far below
#: ``1 / n`` for any table that fits in memory (the synthesizer warns the data
#: owner when ``delta >= 1 / n``), so the default needs no adjusting to the
#: table's size, which is private.
DEFAULT_DELTA = 1e-9

#: Largest ``delta`` accepted: beyond it the guarantee means little (a
#: mechanism may then publish a record outright with probability ``delta``).
MAX_DELTA = 1e-2
# The largest epsilon accepted: far beyond any meaningful privacy (the noise is
# already negligible), and below where the conversions to zCDP and back overflow.
MAX_EPSILON = 1e15


def check_delta(delta):
    """``delta`` as a float in ``(0, MAX_DELTA]``; ``None`` gives :data:`DEFAULT_DELTA`."""
    if delta is None:
        return DEFAULT_DELTA
    if (isinstance(delta, bool) or not isinstance(delta, numbers.Real)
            or not math.isfinite(delta) or not 0 < delta <= MAX_DELTA):
        raise ValueError(
            f"delta must be a number in (0, {MAX_DELTA:g}] (and far below 1 / n_records for a "
            f"meaningful guarantee), or None for the fixed default {DEFAULT_DELTA:g}; got "
            f"{delta!r}.")
    return float(delta)


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


# --------------------------------------------------------------- the report
@dataclass(frozen=True)
class Spend:
    """The privacy loss of one accounted mechanism.

    Attributes
    ----------
    name : str
        What was released, e.g. ``"record count"`` or ``"gaussian k=2"``.
    mechanism : str
        ``"laplace"``, ``"exponential"``, ``"gaussian"``, ``"set union"``, ...
    epsilon : float
        Pure-DP loss (``0`` for a zCDP mechanism).
    rho : float
        zCDP loss (``0`` for a pure-DP mechanism accounted outside zCDP).
    delta : float
        Failure probability spent directly (e.g. the DP set union of a
        data-derived 1-tuple universe).
    params : tuple of (str, value)
        Public parameters: noise scale, sensitivity, threshold, ...
    """

    name: str
    mechanism: str
    epsilon: float = 0.0
    rho: float = 0.0
    delta: float = 0.0
    params: tuple = ()

    def to_dict(self):
        return {"name": self.name, "mechanism": self.mechanism, "epsilon": self.epsilon,
                "rho": self.rho, "delta": self.delta, "params": dict(self.params)}

    @classmethod
    def from_dict(cls, entry):
        if not isinstance(entry, dict):
            raise ValueError("a mechanism entry must be an object")
        try:
            spend = cls(entry["name"], entry["mechanism"], entry["epsilon"], entry["rho"],
                        entry["delta"], tuple(sorted(entry.get("params", {}).items())))
        except (KeyError, AttributeError, TypeError) as exc:
            raise ValueError(f"malformed mechanism entry: {exc}") from None
        numbers_ok = all(isinstance(v, (int, float)) and not isinstance(v, bool)
                         and math.isfinite(v) and v >= 0
                         for v in (spend.epsilon, spend.rho, spend.delta))
        if not (isinstance(spend.name, str) and isinstance(spend.mechanism, str) and numbers_ok):
            raise ValueError(f"malformed mechanism entry {entry!r:.120}")
        return spend


def _freeze(value):
    """Read-only copy of a JSON-like value (dicts keep int keys)."""
    if isinstance(value, np.ndarray):
        return tuple(_freeze(v) for v in value.tolist())
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, np.generic):
        return value.item()
    return value


def _thaw(value):
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    return value


class PrivacySpent(Mapping):
    """What a release cost, immutable: the guarantee and every mechanism's share.

    It is a read-only mapping (``spent["epsilon"]``, ``spent["delta"]``,
    ``spent["rho"]`` and the release's public parameters, e.g.
    ``spent["sigmas"]``), renders to the release file with :meth:`to_dict`
    and is parsed back with :meth:`from_dict`.

    Parameters
    ----------
    epsilon, delta : float
        The ``(epsilon, delta)``-DP guarantee of the whole release (privacy
        unit: one record, add/remove neighbours).
    rho : float
        zCDP budget of the mechanisms accounted in zCDP.
    mechanisms : sequence of Spend
        Every accounted mechanism.
    details : dict
        Public parameters of the release strategy (noise scales, thresholds,
        contribution bounds, budget split, ...).
    """

    _CORE = ("epsilon", "delta", "rho")

    def __init__(self, epsilon, delta, rho, mechanisms=(), details=None):
        for name, value in (("epsilon", epsilon), ("delta", delta), ("rho", rho)):
            if (isinstance(value, bool) or not isinstance(value, numbers.Real)
                    or not math.isfinite(value) or value < 0):
                raise ValueError(f"privacy {name} must be a finite number >= 0; got {value!r}")
        if not epsilon > 0:
            raise ValueError(f"privacy epsilon must be > 0; got {epsilon!r}")
        if not delta < 1:
            raise ValueError(f"privacy delta must be < 1; got {delta!r}")
        details = dict(details or {})
        clash = set(details) & (set(self._CORE) | {"mechanisms"})
        if clash:
            raise ValueError(f"details may not redefine {sorted(clash)}")
        object.__setattr__(self, "_values", MappingProxyType({
            "epsilon": float(epsilon), "delta": float(delta), "rho": float(rho),
            **{k: _freeze(v) for k, v in details.items()}}))
        object.__setattr__(self, "mechanisms", tuple(mechanisms))

    def __setattr__(self, name, value):
        raise AttributeError("PrivacySpent is immutable")

    def __getitem__(self, key):
        return self._values[key]

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def __getattr__(self, name):
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __eq__(self, other):
        if not isinstance(other, PrivacySpent):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None

    def __repr__(self):
        return (f"PrivacySpent(epsilon={self.epsilon:g}, delta={self.delta:.3g}, "
                f"rho={self.rho:.4g}, mechanisms={len(self.mechanisms)})")

    def __reduce__(self):
        return (PrivacySpent.from_dict, (self.to_dict(),))

    def to_dict(self):
        """The JSON-ready form written into release files."""
        out = {k: _thaw(v) for k, v in self._values.items()}
        out["mechanisms"] = [m.to_dict() for m in self.mechanisms]
        return out

    @classmethod
    def from_dict(cls, document):
        """Parse :meth:`to_dict` output; malformed input raises ``ValueError``."""
        if not isinstance(document, Mapping):
            raise ValueError("privacy must be an object")
        document = dict(document)
        missing = [k for k in cls._CORE if k not in document]
        if missing:
            raise ValueError(f"privacy lacks {missing}")
        mechanisms = document.pop("mechanisms", [])
        if not isinstance(mechanisms, list):
            raise ValueError("privacy 'mechanisms' must be a list")
        core = [document.pop(k) for k in cls._CORE]
        details = {}
        for key, value in document.items():  # JSON turns per-length int keys into str
            if isinstance(value, dict) and value and all(str(k).isdigit() for k in value):
                value = {int(k): v for k, v in value.items()}
            details[key] = value
        return cls(*core, mechanisms=[Spend.from_dict(m) for m in mechanisms],
                   details=details)

    # ------------------------------------------------------ privacy curve
    def _parts(self):
        """``(kind, value, epsilon_pure, delta_fixed)`` of the guarantee's composition.

        ``kind`` is ``"gdp"`` (``value`` = ``mu``), ``"cks"`` (zCDP ``rho``,
        Canonne-Kamath-Steinke conversion), ``"bun-steinke"`` (zCDP ``rho``,
        Bun & Steinke's) or ``None`` (no zCDP part), as the release itself
        converted; the pure-epsilon mechanisms (record count, DP binning,
        Laplace views) and the delta spent directly (DP set union, frequent
        values) are composed on top.
        """
        epsilon_pure = math.fsum(m.epsilon for m in self.mechanisms)
        delta_fixed = math.fsum(m.delta for m in self.mechanisms)
        values = self._values
        if not self.rho > 0:
            return None, 0.0, epsilon_pure, delta_fixed
        if "mu" in values:
            return "gdp", float(values["mu"]), epsilon_pure, delta_fixed
        if values.get("conversion") == "Canonne-Kamath-Steinke":
            return "cks", self.rho, epsilon_pure, delta_fixed
        return "bun-steinke", self.rho, epsilon_pure, delta_fixed

    def delta_at(self, epsilon):
        """Smallest ``delta`` this release's analysis proves at ``epsilon`` (whole release).

        The Gaussian-DP part (``mu``) has the exact curve of Dong, Roth & Su
        (Cor. 2.13): ``delta(e) = Phi(-e/mu + mu/2) - exp(e) Phi(-e/mu -
        mu/2)``; a zCDP part the conversion the release used (Canonne, Kamath
        & Steinke 2020, Prop. 12, or Bun & Steinke 2016, Prop. 1.3:
        ``exp(-(e - rho)**2 / (4 rho))``).  Pure-epsilon mechanisms
        (``epsilon_p`` in total) and the delta spent directly (``delta_0``)
        are composed on top by basic composition, which is conservative:
        ``delta(epsilon) = delta_main(epsilon - epsilon_p) + delta_0``
        (1 when ``epsilon < epsilon_p``).
        """
        from .release.conversion import gdp_delta, zcdp_delta
        if (isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real)
                or math.isnan(epsilon) or epsilon < 0):
            raise ValueError(f"epsilon must be a number >= 0; got {epsilon!r}.")
        kind, value, epsilon_pure, delta_fixed = self._parts()
        rest = float(epsilon) - epsilon_pure
        if rest < -1e-12 * max(1.0, epsilon_pure):
            return 1.0
        rest = max(rest, 0.0)
        if kind is None:
            main = 0.0
        elif kind == "gdp":
            main = gdp_delta(value, rest)
        elif kind == "cks":
            main = zcdp_delta(value, rest)
        else:
            main = math.exp(-((rest - value) ** 2) / (4.0 * value)) if rest > value else 1.0
        return min(1.0, main + delta_fixed)

    @property
    def delta_floor(self):
        """The ``delta`` spent directly by approximate-DP steps (0 if none).

        Those steps (a DP set union, a stability-based histogram of frequent
        values, ...) fail with probability up to their ``delta`` whatever
        ``epsilon`` one is willing to concede, so no ``(epsilon, delta)``
        guarantee with ``delta`` at or below this sum is proven:
        :meth:`epsilon_at` is ``inf`` there.
        """
        return math.fsum(m.delta for m in self.mechanisms)

    def epsilon_at(self, delta, strict=False):
        """Smallest ``epsilon`` this release's analysis proves at ``delta``.

        The inverse of :meth:`delta_at`: ``epsilon_p + epsilon_main(delta -
        delta_0)`` (exact for the Gaussian-DP part, to 1e-12 relative, on the
        safe side); at the reported ``delta`` it gives the reported
        ``epsilon``, and a smaller ``delta`` gives a larger ``epsilon``.

        At or below :attr:`delta_floor` (the ``delta_0`` spent directly by
        approximate-DP steps) no finite ``epsilon`` is proven, and none
        exists for those steps: the result is ``inf`` (so that the curve can
        be tabulated over any range), or, with ``strict=True``, a
        ``ValueError`` naming the steps.  Without a zCDP/GDP part, ``delta =
        delta_0`` itself gives the pure ``epsilon_p``; with one, only a
        larger ``delta`` gives a finite ``epsilon``.
        """
        from .release.conversion import gdp_epsilon, zcdp_epsilon
        if (isinstance(delta, bool) or not isinstance(delta, numbers.Real)
                or math.isnan(delta) or not 0 <= delta < 1):
            raise ValueError(f"delta must be a number in [0, 1); got {delta!r}.")
        kind, value, epsilon_pure, delta_fixed = self._parts()
        rest = float(delta) - delta_fixed
        if kind is None:
            reachable = rest >= -1e-15 * max(delta_fixed, 1e-300)
        else:
            reachable = rest > 0
        if not reachable:
            if strict:
                steps = ", ".join(f"{m.name!r} ({m.delta:.3g})" for m in self.mechanisms
                                  if m.delta > 0)
                raise ValueError(
                    f"No epsilon is proven at delta={float(delta):.3g}: the release spends "
                    f"delta={delta_fixed:.3g} directly ({steps}), which no epsilon buys "
                    f"back; ask for a delta above {delta_fixed:.3g}.")
            return math.inf
        if kind is None:
            return epsilon_pure
        if kind == "gdp":
            main = gdp_epsilon(value, rest)
        elif kind == "cks":
            main = zcdp_epsilon(value, rest)
        else:
            main = zcdp_to_epsilon(value, rest)
        return epsilon_pure + main

    def ledger(self):
        """Every accounted mechanism as a row: name, mechanism, scale, sensitivity, share.

        ``scale`` is the noise standard deviation drawn (``noise_scale``, else
        ``sigma``) for a Gaussian mechanism, ``None`` otherwise; ``epsilon``
        the pure-DP or exponential-mechanism epsilon; ``share`` the
        mechanism's part of the zCDP/GDP budget ``rho`` (for mechanisms
        accounted there) or of the pure epsilon (for the others), and
        ``delta`` what it spends directly.
        """
        epsilon_pure = math.fsum(m.epsilon for m in self.mechanisms)
        rows = []
        for m in self.mechanisms:
            params = dict(m.params)
            scale = params.get("noise_scale", params.get("sigma", params.get("scale")))
            if "gaussian" not in m.mechanism and "laplace" not in m.mechanism:
                scale = None
            sensitivity = params.get("sensitivity")
            if sensitivity is None and "contribution_bound" in params:
                sensitivity = math.sqrt(params["contribution_bound"])
            if m.rho > 0:
                share, unit = (m.rho / self.rho if self.rho > 0 else 0.0), "rho"
            elif m.epsilon > 0:
                share, unit = (m.epsilon / epsilon_pure if epsilon_pure > 0 else 0.0), "epsilon"
            else:
                share, unit = 0.0, "delta"
            rows.append({"name": m.name, "mechanism": m.mechanism, "scale": scale,
                         "epsilon": params.get("epsilon", m.epsilon or None),
                         "sensitivity": sensitivity, "rho": m.rho, "delta": m.delta,
                         "share": share, "share_of": unit})
        return rows

    def with_details(self, **details):
        """A copy with more public parameters (e.g. a PrivacyLeakWarning note)."""
        merged = {k: v for k, v in self._values.items() if k not in self._CORE}
        merged.update(details)
        return PrivacySpent(self.epsilon, self.delta, self.rho, self.mechanisms, merged)
