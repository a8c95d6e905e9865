"""Samplers: synthetic records from released DP aggregates alone.

``"marginal_matching"`` (:class:`MarginalMatchingSampler`, the default) and
``"aggregate_seeded"`` (:class:`AggregateSeededSampler`, SDS's sampler) are
registered by name; :func:`get_sampler` resolves a ``synthesis`` value.
"""

from .aggregate_seeded import AggregateSeededSampler
from .base import SAMPLERS, Sampler, get_sampler, register_sampler
from .marginal_matching import MarginalMatchingSampler

register_sampler("marginal_matching", MarginalMatchingSampler)
register_sampler("aggregate_seeded", AggregateSeededSampler)

__all__ = ["AggregateSeededSampler", "MarginalMatchingSampler", "Sampler", "SAMPLERS",
           "get_sampler", "register_sampler"]
