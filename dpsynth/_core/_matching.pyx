# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Greedy coordinate descent of a synthetic population towards target marginals.

The loss is ``sum_m w_m * sum_cells (P_m - T_m)**2`` over target marginals of
one and two columns, ``P_m`` the population's counts.  ``residual`` holds
``P - T`` for every cell of every target, flattened; the cell of column ``j``
taking value ``v`` next to column ``l`` taking value ``w`` is
``residual[base[j, l] + v * step_self[j, l] + w * step_other[j, l]]``
(``base[j, l] < 0``: no target for that pair), the 1-way cell is
``residual[one_base[j] + v]``.

Moving record ``r`` from value ``u`` to ``v`` in column ``j`` changes the
loss by ``sum_l w_jl (2 R_jl[v, w_l] - 2 R_jl[u, w_l] + 2) + w_j (2 R_j[v] -
2 R_j[u] + 2)``; each visit moves the record to the value with the most
negative change, if any.  Records and columns are visited in orders drawn by
the caller, so the result depends only on the inputs.
"""

import numpy as np

from libc.stdint cimport int32_t, int64_t


def descend(int32_t[:, ::1] records, double[::1] residual,
            const int64_t[:, ::1] base, const int64_t[:, ::1] step_self,
            const int64_t[:, ::1] step_other, const double[:, ::1] weight,
            const int64_t[::1] one_base, const double[::1] one_weight,
            const int32_t[::1] n_values, const int64_t[:, ::1] record_orders,
            const int32_t[:, ::1] column_orders):
    """Run ``len(record_orders)`` sweeps; returns the number of moves per sweep."""
    cdef Py_ssize_t n = records.shape[0], d = records.shape[1]
    cdef Py_ssize_t sweeps = record_orders.shape[0], sweep, t, jj, l, r
    cdef int j, u, v, best_v, max_values = 0
    cdef double best, change
    cdef int64_t b, moves
    for j in range(d):
        if n_values[j] > max_values:
            max_values = n_values[j]
    delta_arr = np.zeros(max_values, dtype=np.float64)
    cdef double[::1] delta = delta_arr
    constant_arr = np.zeros(d, dtype=np.float64)  # + 2 w for each pair of touched cells
    cdef double[::1] constant = constant_arr
    for j in range(d):
        constant[j] = 2.0 * one_weight[j]
        for l in range(d):
            if base[j, l] >= 0:
                constant[j] += 2.0 * weight[j, l]
    moves_arr = np.zeros(sweeps, dtype=np.int64)
    cdef int64_t[::1] moves_out = moves_arr
    with nogil:
        for sweep in range(sweeps):
            moves = 0
            for t in range(n):
                r = record_orders[sweep, t]
                for jj in range(d):
                    j = column_orders[sweep, jj]
                    u = records[r, j]
                    for v in range(n_values[j]):
                        delta[v] = one_weight[j] * 2.0 * residual[one_base[j] + v]
                    for l in range(d):
                        b = base[j, l]
                        if b < 0:
                            continue
                        b += records[r, l] * step_other[j, l]
                        for v in range(n_values[j]):
                            delta[v] += weight[j, l] * 2.0 * residual[b + v * step_self[j, l]]
                    best = 0.0
                    best_v = u
                    for v in range(n_values[j]):
                        if v == u:
                            continue
                        change = delta[v] - delta[u] + constant[j]
                        if change < best:
                            best = change
                            best_v = v
                    if best_v == u:
                        continue
                    v = best_v
                    residual[one_base[j] + u] -= 1.0
                    residual[one_base[j] + v] += 1.0
                    for l in range(d):
                        b = base[j, l]
                        if b < 0:
                            continue
                        b += records[r, l] * step_other[j, l]
                        residual[b + u * step_self[j, l]] -= 1.0
                        residual[b + v * step_self[j, l]] += 1.0
                    records[r, j] = v
                    moves += 1
            moves_out[sweep] = moves
    return moves_arr
