"""The sampler interface and the registry of samplers by name.

A sampler turns released :class:`~dpsynth.DPAggregates` into synthetic
records.  It reads the aggregates only (post-processing: no privacy cost):

>>> sampler = get_sampler("marginal_matching").fit(aggregates)   # doctest: +SKIP
>>> codes = sampler.sample(1000, np.random.default_rng(0))      # doctest: +SKIP

``sample`` returns codes of the aggregates' public schema (``-1`` for an
empty cell with ``missing="absent"``); :class:`DPMarginalSynthesizer` decodes
them.  A sampler's own options are its constructor's parameters, so they
can be set and grid-searched through the estimator's ``synthesis``
parameter (``synthesis__use_three_way``).  Adding a sampler is adding a
module with a :class:`Sampler` subclass and registering it here.
"""

from sklearn.base import BaseEstimator, clone

__all__ = ["Sampler", "SAMPLERS", "get_sampler", "register_sampler"]


class Sampler(BaseEstimator):
    """Base class of the samplers: ``fit(aggregates)``, then ``sample(n, rng)``.

    Subclasses take their options as keyword arguments of ``__init__``
    (scikit-learn parameters: ``get_params``/``set_params``/``clone`` work)
    and implement :meth:`fit` and :meth:`sample`.
    """

    #: Whether the sampler reads the sparse combination counts of an SDS
    #: release (a release strategy's ``sparse_counts``) rather than dense
    #: noisy marginals; ``release="auto"`` picks the strategy by it.
    needs_sparse_counts = False

    def fit(self, aggregates):
        """Prepare sampling from ``aggregates`` (a :class:`~dpsynth.DPAggregates`)."""
        raise NotImplementedError

    def sample(self, n_samples, rng):
        """Codes of ``n_samples`` synthetic records, shape (n_samples, n_columns), int32.

        Parameters
        ----------
        n_samples : int or None
            Number of records (``None``: the sampler's natural size, if it
            has one).
        rng : numpy.random.Generator
            The only source of randomness.
        """
        raise NotImplementedError


#: Samplers by name; :func:`register_sampler` adds one.
SAMPLERS = {}


def register_sampler(name, cls):
    """Make ``cls`` (a :class:`Sampler` subclass) available as ``synthesis=name``."""
    if not (isinstance(cls, type) and issubclass(cls, Sampler)):
        raise TypeError(f"{cls!r} is not a Sampler subclass.")
    SAMPLERS[name] = cls
    return cls


def get_sampler(synthesis, n_jobs=None, **params):
    """A new sampler for a ``synthesis`` value: a registered name or a Sampler.

    A :class:`Sampler` instance is cloned (so fitting never changes the
    caller's object).  ``n_jobs`` (the estimator's) fills the sampler's own
    ``n_jobs`` only where that is ``None``: ``MarginalMatchingSampler(n_jobs=1)``
    keeps running on one thread.  ``params`` set the parameters the sampler
    has, whatever their value.
    """
    if isinstance(synthesis, Sampler):
        sampler = clone(synthesis)
    elif isinstance(synthesis, str) and synthesis in SAMPLERS:
        sampler = SAMPLERS[synthesis]()
    else:
        raise ValueError(f"synthesis must be one of {sorted(SAMPLERS)} or a "
                         f"dpsynth.sampling.Sampler instance; got {synthesis!r}.")
    own = sampler.get_params(deep=False)
    update = {k: v for k, v in params.items() if k in own}
    if "n_jobs" in own and own["n_jobs"] is None:
        update["n_jobs"] = n_jobs
    sampler.set_params(**update)
    return sampler
