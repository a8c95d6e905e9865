"""The noisy marginal: the one type of a dense DP measurement, released or derived.

A :class:`NoisyMarginal` is a noisy table over a set of columns (or the
noisy coordinates of one of its residuals) with the noise variance of its
cells: what :func:`dpsynth.release.allocation.measure` returns, what
:class:`~dpsynth.DPAggregates` stores, and what the GLS consistency of
:mod:`dpsynth.model.consistency` reads.  Two related types stay apart on
purpose: a :class:`~dpsynth.release.allocation.PlannedMeasurement` is a plan
(columns and a budget, no values), and a
:class:`~dpsynth.model.consistency.ConsistentMarginal` an estimate derived
from measurements (possibly of infinite variance).
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["NoisyMarginal"]


@dataclass(frozen=True, eq=False)
class NoisyMarginal:
    """A dense noisy marginal, or one of its residuals, over a set of columns.

    Attributes
    ----------
    columns : tuple of int
        Column indices, increasing (empty: the total, a 0-way marginal, which
        a planned measurement may hold; a release holds none).
    table : ndarray of float64
        ``basis="marginal"``: noisy counts of every cell, of shape
        ``table_sizes[columns]`` (may be negative: no thresholding).
        ``basis="residual"``: the noisy coordinates of the marginal's
        residual (its component orthogonal to every sub-marginal, in the
        orthonormal contrast basis of
        :func:`~dpsynth.model.residuals.contrast_basis`) over the
        possible codes (:meth:`~dpsynth.schema.Schema.possible_cells`), of
        shape ``possible[columns].sum() - 1``.
    variance : float
        Noise variance of every cell (coordinate).  A 1-way marginal of an
        undeclared column averages the discovery's noisy counts into its
        measurement (:mod:`dpsynth.release`); where its cells differ
        in variance (discovery does not measure the other code, nor, with
        ``missing="absent"``, the absent one), this is their mean.
    basis : {"marginal", "residual"}, default="marginal"
    cell_variances : ndarray of float64 or None, default=None
        The noise variance of each cell, of the table's shape, where the
        cells differ in variance (such a 1-way marginal); ``variance`` is
        their mean over the cells that can hold records.  The sampler reads
        it to tell a code's records from its noise, code by code.
    """

    columns: tuple
    table: np.ndarray
    variance: float
    basis: str = "marginal"
    cell_variances: np.ndarray = None

    def __post_init__(self):
        columns = tuple(int(c) for c in self.columns)
        table = np.array(self.table, dtype=np.float64)
        table.setflags(write=False)
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "table", table)
        object.__setattr__(self, "variance", float(self.variance))
        if list(columns) != sorted(set(columns)):
            raise ValueError(f"marginal columns must be distinct and increasing; got {columns}")
        if self.basis not in ("marginal", "residual"):
            raise ValueError("a marginal's basis must be 'marginal' or 'residual'; "
                             f"got {self.basis!r:.40}")
        if not np.isfinite(table).all() or not (np.isfinite(self.variance)
                                               and self.variance >= 0):
            raise ValueError(f"marginal over columns {columns}: values and variance must be "
                             "finite (variance >= 0)")
        if self.cell_variances is not None:
            cells = np.array(self.cell_variances, dtype=np.float64)
            if (cells.shape != table.shape or self.basis != "marginal"
                    or not (np.isfinite(cells).all() and (cells >= 0).all())):
                raise ValueError(f"marginal over columns {columns}: cell_variances must be "
                                 "finite, >= 0 and of the table's shape (a marginal's)")
            cells.setflags(write=False)
            object.__setattr__(self, "cell_variances", cells)
