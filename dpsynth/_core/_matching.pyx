# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Greedy coordinate descent of a synthetic population towards target marginals.

The loss is ``sum_m w_m * sum_cells (P_m - T_m)**2`` over target marginals
``m`` of any number of columns, ``P_m`` the population's counts.
``residual`` holds ``P - T`` for every cell of every target, flattened.

The targets a column ``j`` belongs to are listed in CSR form: entries
``e = entry_start[j] .. entry_start[j + 1] - 1``, each with the flat index
``entry_base[e]`` of the target's cell where every column takes value 0, the
stride ``entry_step[e]`` of column ``j`` in it, the weight ``entry_weight[e]``
and the other columns of the target with their strides
(``other_column[e, :]``, ``other_step[e, :]``, unused slots hold column -1).

Moving record ``r`` from value ``u`` to ``v`` in column ``j`` changes the
loss by ``sum_e w_e (2 R_e[v | rest] - 2 R_e[u | rest] + 2)``; each visit
moves the record to the value with the most negative change, if any.  Records
and columns are visited in orders drawn by the caller, so the result depends
only on the inputs.
"""

import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t


def descend(int32_t[:, ::1] records, double[::1] residual,
            const int64_t[::1] entry_start, const int64_t[::1] entry_base,
            const int64_t[::1] entry_step, const double[::1] entry_weight,
            const int32_t[:, ::1] other_column, const int64_t[:, ::1] other_step,
            const int32_t[::1] n_values, const uint8_t[::1] allowed,
            const int64_t[::1] value_base, const int64_t[:, ::1] record_orders,
            const int32_t[:, ::1] column_orders):
    """Run ``len(record_orders)`` sweeps; returns the number of moves per sweep.

    A record only moves to values with ``allowed[value_base[j] + v]`` set (the
    values the aggregates released).
    """
    cdef Py_ssize_t n = records.shape[0], d = records.shape[1]
    cdef Py_ssize_t sweeps = record_orders.shape[0], n_entries = entry_base.shape[0]
    cdef Py_ssize_t n_others = other_column.shape[1]
    cdef Py_ssize_t sweep, t, jj, r, e, o
    cdef int j, u, v, best_v, max_values = 1
    cdef double best, change, w
    cdef int64_t b, step, moves
    for j in range(d):
        if n_values[j] > max_values:
            max_values = n_values[j]
    delta_arr = np.zeros(max_values, dtype=np.float64)
    cdef double[::1] delta = delta_arr
    cell_arr = np.zeros(max(n_entries, 1), dtype=np.int64)  # per-entry cell at value 0
    cdef int64_t[::1] cell = cell_arr
    constant_arr = np.zeros(d, dtype=np.float64)  # + 2 w for each pair of touched cells
    cdef double[::1] constant = constant_arr
    for j in range(d):
        for e in range(entry_start[j], entry_start[j + 1]):
            constant[j] += 2.0 * entry_weight[e]
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
                        delta[v] = 0.0
                    for e in range(entry_start[j], entry_start[j + 1]):
                        b = entry_base[e]
                        for o in range(n_others):
                            if other_column[e, o] < 0:
                                break
                            b += records[r, other_column[e, o]] * other_step[e, o]
                        cell[e] = b
                        step = entry_step[e]
                        w = 2.0 * entry_weight[e]
                        for v in range(n_values[j]):
                            delta[v] += w * residual[b + v * step]
                    best = 0.0
                    best_v = u
                    for v in range(n_values[j]):
                        if v == u or not allowed[value_base[j] + v]:
                            continue
                        change = delta[v] - delta[u] + constant[j]
                        if change < best:
                            best = change
                            best_v = v
                    if best_v == u:
                        continue
                    v = best_v
                    for e in range(entry_start[j], entry_start[j + 1]):
                        residual[cell[e] + u * entry_step[e]] -= 1.0
                        residual[cell[e] + v * entry_step[e]] += 1.0
                    records[r, j] = v
                    moves += 1
            moves_out[sweep] = moves
    return moves_arr
