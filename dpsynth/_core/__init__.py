"""Cython kernels: k-tuple counting (``_counting``) and sampling (``_sampling``)."""
