"""Cython kernels: k-tuple counting (``_counting``), SDS sampling (``_sampling``) and
the coordinate descent of marginal matching (``_matching``)."""
