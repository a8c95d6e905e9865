"""The residual basis of dense marginals (ResidualPlanner's, Xiao et al. 2023).

A marginal over columns ``S`` is the orthogonal sum of its *residuals*
``theta_A = (x)_{i in A} U_i^T (x)_{i in S - A} 1^T mu_S`` over the subsets
``A`` of ``S`` (``U_i``: :func:`contrast_basis`, an orthonormal basis of the
vectors orthogonal to ones).  :func:`to_residual` and :func:`from_residual`
go between the two; the GLS consistency of :mod:`dpsynth.model.consistency`
and the measurements of :mod:`dpsynth.release.allocation` work in it.
"""

from functools import lru_cache
from itertools import combinations
import math

import numpy as np

__all__ = ["contrast_basis", "canonical_columns", "subsets", "marginal_table", "to_residual",
           "integer_basis", "from_residual", "residual_size", "cells_outside"]


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


def canonical_columns(columns):
    cols = tuple(int(c) for c in columns)
    if len(set(cols)) != len(cols):
        raise ValueError(f"a marginal's columns must be distinct; got {columns!r}.")
    return cols


def subsets(cols):
    for k in range(len(cols) + 1):
        yield from combinations(cols, k)


def marginal_table(codes, n_values, columns):
    """Dense counts of ``codes`` (n, d) over ``columns``; shape ``n_values[columns]``."""
    cols = canonical_columns(columns)
    shape = tuple(int(n_values[c]) for c in cols)
    if not cols:
        return np.array(float(len(codes)))
    key = np.ravel_multi_index(tuple(np.asarray(codes)[:, c] for c in cols), shape)
    return np.bincount(key, minlength=int(np.prod(shape))).reshape(shape).astype(np.float64)


def to_residual(table, cols, sub):
    """``(x)_{i in sub} U_i^T (x)_{i in cols - sub} 1^T`` applied to ``table``."""
    out = np.asarray(table, dtype=np.float64)
    for k in reversed(range(len(cols))):
        if cols[k] in sub:
            out = np.moveaxis(np.tensordot(out, _basis(out.shape[k]), axes=([k], [0])), -1, k)
        else:
            out = out.sum(axis=k)
    return out


@lru_cache(maxsize=256)
def integer_basis(n):
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


def from_residual(theta, cols, sub, n_values):
    """The part of marginal ``cols`` carried by residual ``sub``: ``(x) U_i (x) 1/n_i``."""
    out = np.asarray(theta, dtype=np.float64)
    for k, c in enumerate(sub):
        out = np.moveaxis(np.tensordot(out, _basis(int(n_values[c])), axes=([k], [1])), -1, k)
    shape = [int(n_values[c]) if c in sub else 1 for c in cols]
    scale = math.prod(int(n_values[c]) for c in cols if c not in sub)
    full = tuple(int(n_values[c]) for c in cols)
    return np.broadcast_to(out.reshape(shape) / scale, full)


def residual_size(sub, n_values):
    return math.prod(int(n_values[c]) - 1 for c in sub)


def cells_outside(cols, sub, n_values):
    return math.prod(int(n_values[c]) for c in cols if c not in sub)
