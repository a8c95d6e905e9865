"""The privacy report of a release: :class:`Spend` per mechanism, :class:`PrivacySpent` in all."""

from collections.abc import Mapping
from dataclasses import dataclass
import math
import numbers
from types import MappingProxyType

import numpy as np

from ._conversion import gdp_delta, gdp_epsilon, zcdp_delta, zcdp_epsilon, zcdp_to_epsilon

__all__ = ["Spend", "PrivacySpent"]


class _Params(Mapping):
    """Read-only ``{name: value}`` of a mechanism's public parameters, in the order given.

    Built from a mapping or from ``(name, value)`` pairs; hashable when its
    values are, picklable, and equal to any mapping with the same items.
    """

    __slots__ = ("_items", "_index")

    def __init__(self, items=()):
        pairs = tuple(items.items() if isinstance(items, Mapping) else items)
        index = dict(pairs)
        if len(index) != len(pairs):
            raise ValueError(f"a mechanism's parameters must have distinct names; got {pairs!r}")
        object.__setattr__(self, "_items", tuple(index.items()))
        object.__setattr__(self, "_index", index)

    def __setattr__(self, name, value):
        raise AttributeError("a mechanism's parameters are read-only")

    def __getitem__(self, key):
        return self._index[key]

    def __iter__(self):
        return iter(self._index)

    def __len__(self):
        return len(self._index)

    def __hash__(self):
        return hash(frozenset(self._items))

    def __reduce__(self):
        return (_Params, (self._items,))

    def __repr__(self):
        return repr(self._index)


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
    params : mapping of str to value
        Public parameters: noise scale, sensitivity, threshold, ... (read
        only, in the order given; pass a dict or ``(name, value)`` pairs).
    """

    name: str
    mechanism: str
    epsilon: float = 0.0
    rho: float = 0.0
    delta: float = 0.0
    params: Mapping = ()

    def __post_init__(self):
        object.__setattr__(self, "params", _Params(self.params))

    def scalar_params(self):
        """A copy with only the parameters that are numbers, text or bool, by name.

        What a release file lists: an adaptive release also records, for
        itself, the columns each round measured (public: they are in the
        release's marginals).
        """
        scalars = sorted((k, v) for k, v in self.params.items()
                         if isinstance(v, (int, float, str, bool)))
        return Spend(self.name, self.mechanism, epsilon=float(self.epsilon),
                     rho=float(self.rho), delta=float(self.delta), params=scalars)

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
