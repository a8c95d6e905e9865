"""The release-strategy interface and the registry of strategies by name.

A release strategy is how :meth:`DPMarginalSynthesizer.fit
<dpsynth.DPMarginalSynthesizer.fit>` spends the privacy budget: it reads the
encoded private table and returns :class:`~dpsynth.DPAggregates`, the privacy
boundary, with its :class:`~dpsynth.PrivacySpent` report.  A strategy's own
options are its constructor's parameters, so they can be set and
grid-searched through the estimator's ``release`` parameter
(``release__percentile``), as the samplers' are through ``synthesis``:

>>> from dpsynth import DPMarginalSynthesizer
>>> from dpsynth.release import SDSRelease
>>> synth = DPMarginalSynthesizer(release=SDSRelease(percentile=95))
>>> synth.get_params()["release__percentile"]
95

Adding a strategy is adding a :class:`Release` subclass and registering it
with :func:`register_release`.
"""

from sklearn.base import BaseEstimator, clone

from ..accounting import zcdp_rho
from ..utils._progress import log_progress

__all__ = ["Release", "RELEASES", "get_release", "register_release"]


def _log_only(message, *, done, total, label):
    log_progress(done, total, label, message)


class Release(BaseEstimator):
    """Base class of the release strategies: :meth:`release` a table's DP aggregates.

    Subclasses take their options as keyword arguments of ``__init__``
    (scikit-learn parameters: ``get_params``/``set_params``/``clone`` work,
    validated by ``_parameter_constraints``) and implement :meth:`release`;
    they may refine :meth:`validate`, :meth:`budget_rho` and
    :meth:`check_resources`, which the estimator calls before any DP step.
    A strategy object is never changed by a release (the estimator works
    on a clone).
    """

    #: Whether the release holds the sparse combination counts that SDS's
    #: aggregate-seeded sampler reads (a sampler's ``needs_sparse_counts``).
    sparse_counts = False

    #: Constraints of the parameters (scikit-learn's declarative validation);
    #: a parameter without one is not checked.
    _parameter_constraints: dict = {}

    def validate(self, reporting_length, n_columns=None):
        """Check the parameters for a release of up to ``reporting_length`` columns
        (the longest released is at most ``n_columns``, when given).

        Called before any DP step, so bad options fail before the encoder
        spends any budget.  Returns ``self``.
        """
        self._validate_params()
        return self

    def budget_rho(self, epsilon, delta):
        """The zCDP ``rho`` this strategy derives from ``(epsilon, delta)``.

        The encoder's DP steps for numeric columns with nothing declared
        (``numeric="auto"``) get a share of it, which the release then does
        not spend.  The default is the conversion of Bun and Steinke
        (:func:`~dpsynth.accounting.zcdp_rho`), valid for any zCDP release.
        """
        return zcdp_rho(epsilon, delta)

    def check_resources(self, columns, max_bytes):
        """Refuse, from public facts only, a release that cannot fit ``max_bytes``.

        ``columns`` lists ``(name, n_codes or None, source)``: the number of
        codes the declaration makes public (``None``: not public) and what
        sets it (a phrase naming the parameter).  The default checks nothing.
        """

    def release(self, codes, schema, *, epsilon, delta, reporting_length, rng, target=None,
                epsilon_binning=0.0, delta_binning=0.0, encoder_spends=(), sampler=None,
                n_threads=1, noise="discrete", max_bytes=None, log=None):
        """Release the DP aggregates of an encoded table.

        Parameters
        ----------
        codes : dpsynth.engines.CodeBlocks
            The table's codes under the encoder's (private) ``schema``, in
            memory or in blocks (e.g. dask partitions).
        schema : dpsynth.schema.Schema
            The fitted encoder's schema; only its declared facts and DP
            outputs may be published.
        epsilon, delta : float
            Budget of the release; the encoder's DP steps are accounted on
            top (``epsilon_binning``, ``delta_binning``) or inside it
            (``encoder_spends``' ``rho``, see :meth:`budget_rho`).
        reporting_length : int
            Longest combination of columns asked for; a strategy releases
            combinations of at most ``len(schema)`` columns.
        rng : numpy.random.Generator
            The only source of randomness.
        target : str or None
            Name of the target column (recorded in the aggregates).
        epsilon_binning, delta_binning : float
            What the encoder's DP binning and DP frequent values spent.
        encoder_spends : sequence of dpsynth.accounting.Spend
            The encoder's zCDP mechanisms.
        sampler : dpsynth.sampling.Sampler or None
            The sampler that will read the release (some ``"auto"``
            options follow it).
        n_threads : int
            Threads the counting may use; the release does not depend on it.
        noise : {"discrete", "continuous"}
            Exact discrete noise or numpy's floating-point noise.
        max_bytes : float or None
            Memory limit of one step.
        log : callable or None
            ``log(message, done=, total=, label=)`` for progress (public
            numbers only); ``None`` logs to the ``"dpsynth"`` logger.

        Returns
        -------
        DPAggregates
        """
        raise NotImplementedError

    @staticmethod
    def _logger(log):
        return _log_only if log is None else log


#: Release strategies by name; :func:`register_release` adds one.
RELEASES = {}


def register_release(name, cls):
    """Make ``cls`` (a :class:`Release` subclass) available as ``release=name``."""
    if not (isinstance(cls, type) and issubclass(cls, Release)):
        raise TypeError(f"{cls!r} is not a Release subclass.")
    if name == "auto":
        raise ValueError("'auto' is not a strategy's name: it picks one by the sampler.")
    RELEASES[name] = cls
    return cls


def get_release(release, *, sampler=None):
    """A new strategy for a ``release`` value: ``"auto"``, a registered name or a Release.

    ``"auto"`` is the workload-aware release (``"workload"``, the more
    accurate on the benchmarks, see ``benchmarks/LOG.md``), unless
    ``sampler`` reads sparse combination counts (SDS's aggregate-seeded
    sampler), which the SDS release (``"sds"``) holds.  A :class:`Release`
    instance is cloned, so releasing never changes the caller's object.
    """
    if isinstance(release, str) and release == "auto":
        release = "sds" if getattr(sampler, "needs_sparse_counts", False) else "workload"
    if isinstance(release, Release):
        return clone(release)
    if isinstance(release, str) and release in RELEASES:
        return RELEASES[release]()
    raise ValueError(f"release must be 'auto', one of {sorted(RELEASES)} or a "
                     f"dpsynth.release.Release instance; got {release!r}.")
