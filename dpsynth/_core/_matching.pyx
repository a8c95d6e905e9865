# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Greedy coordinate descent of a synthetic population towards target marginals.

The loss is ``sum_m w_m * sum_cells (P_m - T_m)**2`` over target marginals
``m`` of any number of columns, ``P_m`` the population's counts.

Layout
------
``residual`` (float64) holds ``P - T`` for every cell of every target,
flattened in C order: target ``m`` starts at ``target_base[m]`` and its
columns ``target_column[m, :]`` have the strides ``target_step[m, :]``.

Scoring every value of a column ``j`` for a record reads, for each target
containing ``j``, the cells that differ from the record's only in ``j``.  In
C order these are ``stride`` apart (one cache line per value), so each target
is also stored once per column of it, as an *entry*: a float32 copy of
``w_m * (P - T)`` whose innermost axis is that column, so that the cells read
are contiguous.  ``copies`` holds all of them; a move updates the cells in
``residual`` and rewrites the matching cell of every copy from it, so the
copies never drift from the exact float64 residual (they are its rounding).

Entry ``e`` belongs to column ``entry_column[e]``, which is column
``entry_position[e]`` of target ``entry_target[e]``; its copy's cell where
every column takes value 0 is ``copies[entry_base[e]]`` and the target's
other columns have the strides ``other_step[e, :]`` in it
(``other_column[e, :]``).  Entries are sorted by column: those of column
``j`` are ``entry_start[j] .. entry_start[j + 1] - 1``.  The entries of
target ``m`` are ``target_entry[i]`` for ``i`` in ``target_start[m] ..
target_start[m + 1] - 1``, and ``copy_step[i, p]`` is the stride of the
target's column ``p`` in that copy.  Unused slots of ``target_column`` and
``other_column`` hold column 0 with step 0.  ``copies`` is padded with 16
values: runs are summed 4, 8 or 16 values at a time (float32 sums over
blocks of 32 entries, added up in float64).

Descent
-------
Moving a record from value ``u`` to ``v`` in column ``j`` changes the loss by
``sum_m w_m (2 R_m[v | rest] - 2 R_m[u | rest] + 2)``; each visit moves the
record to the value with the most negative change, if any.  A sweep visits
the columns in a given order and, for each column, all records in a given
order (column by column, so that the copies read while one column is
visited stay in cache).  The orders are drawn by the caller, so the result
depends only on the inputs.  The kernel runs without the GIL: independent
populations (each with its own ``records``, ``residual`` and ``copies``) can
be fitted in concurrent threads.
"""

import numpy as np

from libc.math cimport fabs
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t

from ._hashing cimport SIGNAL_CHECK_WORK, check_signals, raise_pending

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define DPSYNTH_PREFETCH(p) __builtin_prefetch((const void *)(p))
    #else
    #define DPSYNTH_PREFETCH(p) ((void)0)
    #endif
    /* the caller's stop flag, written by another thread: read it afresh */
    static inline int dpsynth_flag_set(const unsigned char *flag) {
        return flag != NULL && *(const volatile unsigned char *)flag != 0;
    }
    #if defined(_MSC_VER)
    #define DPSYNTH_RESTRICT __restrict
    #else
    #define DPSYNTH_RESTRICT restrict
    #endif
    /* total[v] = sum_e cop[cell[e] + v] for v < nv, e < count: the sum is
       kept in float32 registers, W values at a time, over blocks of BLOCK
       entries, then added to the float64 total.  Reads up to W - 1 values
       past a run (the caller pads the copies).  With GCC and Clang the
       accumulators are explicit 4-float vectors (portable vector extension)
       and the functions are compiled out of line, so that the vector code
       does not depend on the optimiser's choices in the caller; elsewhere
       plain loops. */
    #if defined(__GNUC__) || defined(__clang__)
    typedef float dpsynth_v4 __attribute__((vector_size(16)));
    static inline dpsynth_v4 dpsynth_load(const float *p) {
        dpsynth_v4 x;
        __builtin_memcpy(&x, p, sizeof x);
        return x;
    }
    /* W = 4, 8 or 16: named accumulators, so that they stay in registers */
    #define DPSYNTH_SUM_RUNS(W)                                                   \
    static __attribute__((noinline)) void dpsynth_sum_runs_##W(                   \
            double *DPSYNTH_RESTRICT total, const float *DPSYNTH_RESTRICT cop,    \
            const int64_t *DPSYNTH_RESTRICT cell, Py_ssize_t count, int nv,       \
            int block) {                                                          \
        const dpsynth_v4 zero = {0.0f, 0.0f, 0.0f, 0.0f};                         \
        for (int v = 0; v < nv; v++) total[v] = 0.0;                              \
        for (Py_ssize_t first = 0; first < count; first += block) {               \
            Py_ssize_t last = first + block < count ? first + block : count;      \
            for (int v0 = 0; v0 < nv; v0 += W) {                                  \
                dpsynth_v4 a0 = zero, a1 = zero, a2 = zero, a3 = zero;            \
                if (nv > W)  /* long runs: fetch this part of the next block */   \
                    for (Py_ssize_t e = last; e < last + block && e < count; e++) \
                        DPSYNTH_PREFETCH(cop + cell[e] + v0);                     \
                for (Py_ssize_t e = first; e < last; e++) {                       \
                    const float *row = cop + cell[e] + v0;                        \
                    a0 += dpsynth_load(row);                                      \
                    if (W > 4) a1 += dpsynth_load(row + 4);                       \
                    if (W > 8) {                                                  \
                        a2 += dpsynth_load(row + 8);                              \
                        a3 += dpsynth_load(row + 12);                             \
                    }                                                             \
                }                                                                 \
                int m = nv - v0 < W ? nv - v0 : W;                                \
                for (int k = 0; k < m && k < 4; k++) total[v0 + k] += a0[k];      \
                for (int k = 4; k < m && k < 8; k++) total[v0 + k] += a1[k - 4];  \
                for (int k = 8; k < m && k < 12; k++) total[v0 + k] += a2[k - 8]; \
                for (int k = 12; k < m; k++) total[v0 + k] += a3[k - 12];         \
            }                                                                     \
        }                                                                         \
    }
    #else
    #define DPSYNTH_SUM_RUNS(W)                                                   \
    static void dpsynth_sum_runs_##W(                                             \
            double *DPSYNTH_RESTRICT total, const float *DPSYNTH_RESTRICT cop,    \
            const int64_t *DPSYNTH_RESTRICT cell, Py_ssize_t count, int nv,       \
            int block) {                                                          \
        for (int v = 0; v < nv; v++) total[v] = 0.0;                              \
        for (Py_ssize_t first = 0; first < count; first += block) {               \
            Py_ssize_t last = first + block < count ? first + block : count;      \
            for (int v0 = 0; v0 < nv; v0 += W) {                                  \
                float acc[W];                                                     \
                for (int k = 0; k < W; k++) acc[k] = 0.0f;                        \
                for (Py_ssize_t e = first; e < last; e++) {                       \
                    const float *row = cop + cell[e] + v0;                        \
                    for (int k = 0; k < W; k++) acc[k] += row[k];                 \
                }                                                                 \
                int m = nv - v0 < W ? nv - v0 : W;                                \
                for (int k = 0; k < m; k++) total[v0 + k] += acc[k];              \
            }                                                                     \
        }                                                                         \
    }
    #endif
    DPSYNTH_SUM_RUNS(4)
    DPSYNTH_SUM_RUNS(8)
    DPSYNTH_SUM_RUNS(16)
    static inline void dpsynth_sum_runs(double *total, const float *cop,
                                        const int64_t *cell, Py_ssize_t count,
                                        int nv, int block) {
        if (nv <= 4) dpsynth_sum_runs_4(total, cop, cell, count, nv, block);
        else if (nv <= 8) dpsynth_sum_runs_8(total, cop, cell, count, nv, block);
        else dpsynth_sum_runs_16(total, cop, cell, count, nv, block);
    }
    """
    void DPSYNTH_PREFETCH(const void *p) nogil
    bint dpsynth_flag_set(const uint8_t *flag) nogil
    void dpsynth_sum_runs(double *total, const float *cop, const int64_t *cell,
                          Py_ssize_t count, int nv, int block) nogil


cdef enum:
    BLOCK = 32  # rows summed in float32 before adding to the float64 total
    AHEAD = 8  # records prefetched ahead of the visit
    SMALL_TABLE = 16384  # count_cells: tables up to this many cells use histograms
    N_HISTOGRAMS = 4  # count_cells: interleaved histograms of a small table
    STOPPED = -1  # _sweep: the caller's stop flag was set
    SIGNALLED = -2  # _sweep: a signal handler raised (the exception is set)


class Stopped(Exception):
    """The caller's stop flag ended a descent (another thread was interrupted or failed)."""


cdef inline int64_t _cell(const int32_t *row, int64_t start, const int32_t *column,
                          const int64_t *step, Py_ssize_t width) noexcept nogil:
    """``start + sum_o row[column[o]] * step[o]``, the flat index of a record's cell."""
    cdef Py_ssize_t o
    for o in range(width):
        start += row[column[o]] * step[o]
    return start


cdef struct Layout:
    # raw pointers to the arrays of :func:`descend` (see the module docstring)
    int32_t *records
    Py_ssize_t n_columns
    double *residual
    float *copies
    const int64_t *target_base
    const int32_t *target_column
    const int64_t *target_step
    const double *target_weight
    Py_ssize_t target_width
    const int64_t *target_start
    const int64_t *target_entry
    const int64_t *copy_step
    const int64_t *entry_start
    const int32_t *entry_column
    const int64_t *entry_target
    const int32_t *entry_position
    const int64_t *entry_base
    const int32_t *other_column
    const int64_t *other_step
    Py_ssize_t width
    const int32_t *n_values
    const uint8_t *allowed
    const int64_t *value_base
    const double *constant  # 2 * sum of the weights of the targets of a column
    double *delta  # scratch: loss terms of every value of the visited column
    int64_t *cell  # scratch: start of the run read, per entry of the visited column
    int64_t *cell_next  # scratch: the same for the next record (located ahead)
    int64_t *move_cell  # scratch: residual cell of every entry touched by a move
    uint8_t *settled  # columns no longer visited (moved fewer than min_moves records)
    const uint8_t *stop  # set by the caller to stop the descent (NULL: none)
    Py_ssize_t work  # values read since the last periodic check


cdef inline void _locate(Layout *L, const int32_t *rec, Py_ssize_t first, Py_ssize_t last,
                         int64_t *cell) noexcept nogil:
    """Start of every entry's run for a record (``cell[e - first]``), each prefetched.

    The runs' positions depend on the record's other columns only, so they
    can be located (and fetched) while the previous record is scored.
    """
    cdef Py_ssize_t e, width = L.width
    cdef int64_t c
    cdef const int64_t *base = L.entry_base
    cdef const int32_t *ocol = L.other_column
    cdef const int64_t *ostep = L.other_step
    if width == 2:
        for e in range(first, last):
            c = (base[e] + rec[ocol[2 * e]] * ostep[2 * e]
                 + rec[ocol[2 * e + 1]] * ostep[2 * e + 1])
            cell[e - first] = c
            DPSYNTH_PREFETCH(L.copies + c)
    else:
        for e in range(first, last):
            c = _cell(rec, base[e], ocol + e * width, ostep + e * width, width)
            cell[e - first] = c
            DPSYNTH_PREFETCH(L.copies + c)


cdef inline void _move(Layout *L, int32_t *rec, int j, int dv, Py_ssize_t first,
                       Py_ssize_t last) noexcept nogil:
    """Move ``rec`` by ``dv`` in column ``j``: update the residual and rewrite the copies.

    Two passes: the first computes (and prefetches) every residual cell
    touched, so that their cache misses overlap; the second applies the
    changes and rewrites the matching cell of every copy.
    """
    cdef Py_ssize_t e, i, k, m, p, width = L.width, target_width = L.target_width
    cdef int64_t c, c_new
    cdef double w
    cdef float old_value, new_value
    cdef double *res = L.residual
    cdef float *cop = L.copies
    cdef int64_t *cell = L.move_cell
    cdef const int64_t *base = L.entry_base
    cdef const int32_t *ocol = L.other_column
    cdef const int64_t *ostep = L.other_step
    for e in range(first, last):
        m = L.entry_target[e]
        c = _cell(rec, L.target_base[m], L.target_column + m * target_width,
                  L.target_step + m * target_width, target_width)
        cell[e - first] = c
        DPSYNTH_PREFETCH(res + c)
        DPSYNTH_PREFETCH(res + c + dv * L.target_step[m * target_width + L.entry_position[e]])
    for e in range(first, last):
        m = L.entry_target[e]
        p = L.entry_position[e]
        w = L.target_weight[m]
        c = cell[e - first]
        c_new = c + dv * L.target_step[m * target_width + p]
        res[c] -= 1.0
        res[c_new] += 1.0
        old_value = <float>(w * res[c])
        new_value = <float>(w * res[c_new])
        for i in range(L.target_start[m], L.target_start[m + 1]):
            k = L.target_entry[i]
            c = _cell(rec, base[k] + rec[L.entry_column[k]], ocol + k * width,
                      ostep + k * width, width)
            cop[c] = old_value
            cop[c + dv * L.copy_step[i * target_width + p]] = new_value


cdef int64_t _sweep(Layout *L, const int64_t *record_order, Py_ssize_t n,
                    const int32_t *column_order, Py_ssize_t n_visited,
                    int64_t min_moves) noexcept nogil:
    """One sweep of the descent; returns the number of moves.

    The runs of the next record are located and prefetched before the
    current one is scored (software pipelining: their cache misses overlap
    the summing).  Every ``SIGNAL_CHECK_WORK`` values read it checks the
    caller's stop flag (returns ``STOPPED``) and, in the main thread, runs
    the signal handlers (returns ``SIGNALLED`` when one raised).  A stopped
    sweep leaves a consistent state: every move made is complete.  A column
    flagged in ``L.settled`` is not visited; a column whose visit moves
    fewer than ``min_moves`` records is flagged.
    """
    cdef Py_ssize_t t, jj, k, first, last
    cdef int64_t column_moves
    cdef Py_ssize_t d = L.n_columns
    cdef int j, u, v, best_v, nv
    cdef int64_t vb, moves = 0
    cdef double best, change, delta_u, constant
    cdef int32_t *rec
    cdef int32_t *ahead
    cdef double *delta = L.delta
    cdef int64_t *cell = L.cell
    cdef int64_t *cell_next = L.cell_next
    cdef int64_t *swap
    cdef const uint8_t *allowed
    if n == 0:
        return 0
    for jj in range(n_visited):
        j = column_order[jj]
        if L.settled[j]:
            continue
        column_moves = 0
        nv = L.n_values[j]
        vb = L.value_base[j]
        allowed = L.allowed + vb
        constant = L.constant[j]
        first = L.entry_start[j]
        last = L.entry_start[j + 1]
        _locate(L, L.records + record_order[0] * d, first, last, cell_next)
        for t in range(n):
            L.work += (last - first) * nv + 1
            if L.work >= SIGNAL_CHECK_WORK:
                L.work = 0
                if dpsynth_flag_set(L.stop):
                    return STOPPED
                if check_signals():
                    return SIGNALLED
            if t + AHEAD < n:  # a record spans up to a few cache lines
                ahead = L.records + record_order[t + AHEAD] * d
                for k in range(0, d, 16):
                    DPSYNTH_PREFETCH(ahead + k)
                DPSYNTH_PREFETCH(ahead + d - 1)
            swap = cell
            cell = cell_next
            cell_next = swap
            rec = L.records + record_order[t] * d
            if t + 1 < n:  # locate the next record's runs while this one is scored
                _locate(L, L.records + record_order[t + 1] * d, first, last, cell_next)
            # sum the runs (float32 blocks, float64 total)
            dpsynth_sum_runs(delta, L.copies, cell, last - first, nv, BLOCK)
            best = 0.0
            u = rec[j]
            best_v = u
            delta_u = delta[u]
            for v in range(nv):
                if v == u or not allowed[v]:
                    continue
                change = 2.0 * (delta[v] - delta_u) + constant
                if change < best:
                    best = change
                    best_v = v
            if best_v == u:
                continue
            _move(L, rec, j, best_v - u, first, last)
            rec[j] = best_v
            column_moves += 1
        moves += column_moves
        if column_moves < min_moves:
            L.settled[j] = 1
    return moves


def descend(int32_t[:, ::1] records, double[::1] residual, float[::1] copies,
            const int64_t[::1] target_base, const int32_t[:, ::1] target_column,
            const int64_t[:, ::1] target_step, const double[::1] target_weight,
            const int64_t[::1] target_start, const int64_t[::1] target_entry,
            const int64_t[:, ::1] copy_step,
            const int64_t[::1] entry_start, const int32_t[::1] entry_column,
            const int64_t[::1] entry_target, const int32_t[::1] entry_position,
            const int64_t[::1] entry_base,
            const int32_t[:, ::1] other_column, const int64_t[:, ::1] other_step,
            const int32_t[::1] n_values, const uint8_t[::1] allowed,
            const int64_t[::1] value_base, const int64_t[:, ::1] record_orders,
            const int32_t[:, ::1] column_orders, const uint8_t[::1] stop=None,
            int64_t min_moves=0):
    """Run ``len(record_orders)`` sweeps; returns the number of moves per sweep.

    Sweep ``s`` visits the columns ``column_orders[s]`` in that order and,
    for each, the records in the order ``record_orders[s]``.  A record only
    moves to values with ``allowed[value_base[j] + v]`` set (the values the
    aggregates released).  ``records``, ``residual`` and ``copies`` are
    updated in place.  Raises ``ValueError`` unless every cell the descent
    may touch lies in the arrays.

    The descent runs without the GIL.  Every few thousand visits it takes
    the GIL briefly to run the signal handlers (in the main thread: Ctrl-C
    raises ``KeyboardInterrupt`` within a fraction of a second) and reads
    ``stop[0]``: a caller running descents in threads sets it to 1 to end
    them all (they raise :class:`Stopped`).  Either way the arrays are left
    with every completed move applied.

    A column whose visit in a sweep moves fewer than ``min_moves`` records
    is settled: later sweeps skip it (default 0: every column is visited in
    every sweep).
    """
    cdef Py_ssize_t n = records.shape[0], d = records.shape[1]
    cdef Py_ssize_t sweeps = record_orders.shape[0], n_entries = entry_base.shape[0]
    cdef Py_ssize_t n_targets = target_base.shape[0]
    cdef Py_ssize_t width = other_column.shape[1], target_width = target_column.shape[1]
    cdef Py_ssize_t sweep, r, j, e, k, m, max_values = 1
    cdef int64_t c
    cdef Layout L
    if record_orders.shape[1] != n or column_orders.shape[0] != sweeps:
        raise ValueError("record_orders and column_orders must hold one order per sweep")
    if n_values.shape[0] != d or entry_start.shape[0] != d + 1:
        raise ValueError("n_values and entry_start must describe every column")
    moves_arr = np.zeros(sweeps, dtype=np.int64)
    if n == 0 or n_entries == 0 or column_orders.shape[1] == 0:
        return moves_arr
    if width == 0 or target_width == 0:
        raise ValueError("other_column and target_column need at least one slot")
    # the sweeps index with raw pointers: check every cell they may reach
    for j in range(d):
        max_values = max(max_values, n_values[j])
        if n_values[j] < 1 or entry_start[j] > entry_start[j + 1]:
            raise ValueError("n_values and entry_start are inconsistent")
    if entry_start[0] != 0 or entry_start[d] != n_entries:
        raise ValueError("entry_start does not cover the entries")
    for r in range(n):
        for j in range(d):
            if not 0 <= records[r, j] < n_values[j]:
                raise ValueError("records hold a code outside range(n_values)")
    for m in range(n_targets):
        if target_base[m] < 0:
            raise ValueError("residual is too small for the targets")
        c = _last_cell(target_base[m], target_column, target_step, m, n_values)
        if c < 0:
            raise ValueError("target_column holds an unknown column")
        if c >= residual.shape[0]:
            raise ValueError("residual is too small for the targets")
    for e in range(n_entries):
        if not 0 <= entry_column[e] < d or not 0 <= entry_target[e] < n_targets:
            raise ValueError("entry_column or entry_target out of range")
        if entry_base[e] < 0:
            raise ValueError("copies is too small (or not padded) for the entries")
        # runs are read 16 values at a time
        c = _last_cell(entry_base[e] + n_values[entry_column[e]] - 1 + 15,
                       other_column, other_step, e, n_values)
        if c < 0:
            raise ValueError("other_column holds an unknown column")
        if c >= copies.shape[0]:
            raise ValueError("copies is too small (or not padded) for the entries")
    for k in range(target_entry.shape[0]):
        if not 0 <= target_entry[k] < n_entries:
            raise ValueError("target_entry out of range")
    delta_arr = np.zeros(max_values, dtype=np.float64)
    cell_arr = np.zeros(3 * n_entries, dtype=np.int64)
    constant_arr = np.zeros(d, dtype=np.float64)  # + 2 w for each pair of touched cells
    cdef double[::1] delta = delta_arr
    cdef int64_t[::1] cell = cell_arr
    cdef double[::1] constant = constant_arr
    for j in range(d):
        for e in range(entry_start[j], entry_start[j + 1]):
            constant[j] += 2.0 * target_weight[entry_target[e]]
    L.records = &records[0, 0]
    L.n_columns = d
    L.residual = &residual[0]
    L.copies = &copies[0]
    L.target_base = &target_base[0]
    L.target_column = &target_column[0, 0]
    L.target_step = &target_step[0, 0]
    L.target_weight = &target_weight[0]
    L.target_width = target_width
    L.target_start = &target_start[0]
    L.target_entry = &target_entry[0]
    L.copy_step = &copy_step[0, 0]
    L.entry_start = &entry_start[0]
    L.entry_column = &entry_column[0]
    L.entry_target = &entry_target[0]
    L.entry_position = &entry_position[0]
    L.entry_base = &entry_base[0]
    L.other_column = &other_column[0, 0]
    L.other_step = &other_step[0, 0]
    L.width = width
    L.n_values = &n_values[0]
    L.allowed = &allowed[0]
    L.value_base = &value_base[0]
    L.constant = &constant[0]
    L.delta = &delta[0]
    L.cell = &cell[0]
    L.cell_next = &cell[n_entries]
    settled_arr = np.zeros(d, dtype=np.uint8)
    cdef uint8_t[::1] settled = settled_arr
    L.settled = &settled[0]
    L.move_cell = &cell[2 * n_entries]
    L.stop = &stop[0] if stop is not None and stop.shape[0] > 0 else NULL
    L.work = 0
    cdef int64_t[::1] moves = moves_arr
    cdef int64_t status = 0
    with nogil:
        for sweep in range(sweeps):
            status = _sweep(&L, &record_orders[sweep, 0], n,
                            &column_orders[sweep, 0], column_orders.shape[1], min_moves)
            if status < 0:
                break
            moves[sweep] = status
    raise_pending(status == SIGNALLED)
    if status == STOPPED:
        raise Stopped("descent stopped by the caller's stop flag")
    return moves_arr


cdef int64_t _last_cell(int64_t start, const int32_t[:, ::1] column,
                        const int64_t[:, ::1] step, Py_ssize_t row,
                        const int32_t[::1] n_values) noexcept:
    """Largest flat index ``start + sum_o (n_values[column[row, o]] - 1) * step[row, o]``.

    Returns -1 when a column is out of range.
    """
    cdef Py_ssize_t o
    for o in range(column.shape[1]):
        if not 0 <= column[row, o] < n_values.shape[0]:
            return -1
        start += (n_values[column[row, o]] - 1) * step[row, o]
    return start


ctypedef fused code_t:
    uint8_t
    int32_t


cdef void _count_tables(const code_t *columns, Py_ssize_t n, double *counts,
                        const int64_t *table_base, const int64_t *table_cells,
                        const int32_t *table_column, const int64_t *table_step,
                        Py_ssize_t n_tables, Py_ssize_t width,
                        uint32_t *scratch, double weight,
                        const double *weights) noexcept nogil:
    """The loops of :func:`count_cells` over codes of type ``code_t`` (column by column).

    A table of at most ``SMALL_TABLE`` cells, and at most half as many
    cells as records, is counted in ``N_HISTOGRAMS`` integer histograms,
    record ``r`` in histogram ``r % N_HISTOGRAMS``, then added up:
    consecutive records often hit the same cell of a small table, and one
    histogram would make every increment wait for the previous one.  Other
    tables are counted directly in ``counts``.  Every count is
    multiplied by ``weight`` (+1 or -1: exact in float64).  With ``weights``
    (not NULL) record ``r`` adds ``weight * weights[r]``, directly.
    """
    cdef Py_ssize_t m, o, r, q, cells, segment, end, n4
    cdef const code_t *c0
    cdef const code_t *c1
    cdef const code_t *c2
    cdef int64_t s0, s1, s2, index
    cdef double *out
    cdef uint32_t *h
    for m in range(n_tables):
        out = counts + table_base[m]
        cells = table_cells[m]
        if weights != NULL:  # rows standing for several records: added directly
            for r in range(n):
                index = 0
                for o in range(width):
                    index += columns[table_column[m * width + o] * n + r] * table_step[m * width + o]
                out[index] += weight * weights[r]
            continue
        if width > 3:
            for r in range(n):
                index = 0
                for o in range(width):
                    index += columns[table_column[m * width + o] * n + r] * table_step[m * width + o]
                out[index] += weight
            continue
        # unused slots (step 0) point at column 0: they add nothing
        c0 = columns + table_column[m * width] * n
        s0 = table_step[m * width]
        c1 = columns + table_column[m * width + 1] * n if width > 1 else c0
        s1 = table_step[m * width + 1] if width > 1 else 0
        c2 = columns + table_column[m * width + 2] * n if width > 2 else c0
        s2 = table_step[m * width + 2] if width > 2 else 0
        if cells > SMALL_TABLE or n < 2 * cells:  # histograms would cost more than they save
            for r in range(n):
                out[c0[r] * s0 + c1[r] * s1 + c2[r] * s2] += weight
            continue
        h = scratch
        segment = 0
        while segment < n:  # at most 2**30 records per histogram fill: no overflow
            end = segment + (1 << 30) if segment + (1 << 30) < n else n
            for q in range(N_HISTOGRAMS * cells):
                h[q] = 0
            n4 = segment + (end - segment) // N_HISTOGRAMS * N_HISTOGRAMS
            r = segment
            while r < n4:
                h[c0[r] * s0 + c1[r] * s1 + c2[r] * s2] += 1
                h[cells + c0[r + 1] * s0 + c1[r + 1] * s1 + c2[r + 1] * s2] += 1
                h[2 * cells + c0[r + 2] * s0 + c1[r + 2] * s1 + c2[r + 2] * s2] += 1
                h[3 * cells + c0[r + 3] * s0 + c1[r + 3] * s1 + c2[r + 3] * s2] += 1
                r += N_HISTOGRAMS
            while r < end:
                h[c0[r] * s0 + c1[r] * s1 + c2[r] * s2] += 1
                r += 1
            for q in range(cells):
                out[q] += weight * (<double>(h[q] + h[cells + q])
                                    + <double>(h[2 * cells + q] + h[3 * cells + q]))
            segment = end


def count_cells(const int32_t[:, ::1] columns, double[::1] counts,
                const int64_t[::1] table_base, const int32_t[:, ::1] table_column,
                const int64_t[:, ::1] table_step, double weight=1.0,
                const double[::1] weights=None):
    """Add a population's counts (times ``weight``) to flattened tables.

    For every table ``m`` and record ``r``, adds 1 to ``counts[table_base[m] +
    sum_o columns[table_column[m, o], r] * table_step[m, o]]``.  ``columns``
    holds the records' codes column by column (shape ``(n_columns, n)``), so
    that each table is counted in one pass over contiguous codes; unused
    slots of ``table_column`` hold column 0 with step 0.  Codes below 256
    are read as bytes (a quarter of the memory traffic).  ``weights`` (one
    per record, e.g. how many records a distinct row stands for) multiplies
    each record's 1; integer weights keep the counts exact.
    """
    cdef Py_ssize_t n = columns.shape[1], n_tables = table_base.shape[0]
    cdef const double *w = NULL
    cdef Py_ssize_t width = table_column.shape[1], m, o
    cdef int64_t index
    if n == 0 or n_tables == 0:
        return
    if weights is not None:
        if weights.shape[0] != n:
            raise ValueError("weights must hold one weight per record")
        w = &weights[0]
    # the counting indexes with raw pointers: check every cell it may reach
    codes = np.asarray(columns)
    largest_arr = codes.max(axis=1).astype(np.int64)
    cdef int64_t[::1] largest = largest_arr
    if codes.min() < 0:
        raise ValueError("columns hold negative codes")
    cells_arr = np.zeros(n_tables, dtype=np.int64)  # cells reachable in every table
    cdef int64_t[::1] cells = cells_arr
    for m in range(n_tables):
        index = table_base[m]
        for o in range(width):
            if not 0 <= table_column[m, o] < columns.shape[0]:
                raise ValueError("table_column holds an unknown column")
            index += largest[table_column[m, o]] * table_step[m, o]
        if table_base[m] < 0 or index >= counts.shape[0]:
            raise ValueError("counts is too small for the tables")
        cells[m] = index - table_base[m] + 1
    scratch_arr = np.empty(N_HISTOGRAMS * SMALL_TABLE, dtype=np.uint32)
    cdef uint32_t[::1] scratch = scratch_arr
    cdef const uint8_t[:, ::1] narrow
    if largest_arr.max() < 256:
        narrow = codes.astype(np.uint8)
        with nogil:
            _count_tables(&narrow[0, 0], n, &counts[0], &table_base[0], &cells[0],
                          &table_column[0, 0], &table_step[0, 0], n_tables, width,
                          &scratch[0], weight, w)
    else:
        with nogil:
            _count_tables(&columns[0, 0], n, &counts[0], &table_base[0], &cells[0],
                          &table_column[0, 0], &table_step[0, 0], n_tables, width,
                          &scratch[0], weight, w)


def table_distance(const double[::1] data, const double[::1] population, double scale,
                   const int64_t[::1] table_base):
    """L1 distance ``sum |data - scale * population|`` of every flattened table.

    Table ``m`` holds the cells ``table_base[m] .. table_base[m + 1] - 1``
    (``table_base`` has one more entry: the total size).  One pass, no
    temporary arrays (the selection of :func:`~dpsynth.release.adaptive_selection.
    release_workload` scores every candidate table each round).
    """
    cdef Py_ssize_t n_tables = table_base.shape[0] - 1, m, q
    cdef double acc
    if data.shape[0] != population.shape[0]:
        raise ValueError("data and population must have the same size")
    if n_tables < 0 or (n_tables > 0 and (table_base[0] < 0
                                          or table_base[n_tables] > data.shape[0])):
        raise ValueError("table_base does not fit the tables")
    for m in range(n_tables):
        if table_base[m] > table_base[m + 1]:
            raise ValueError("table_base must be non-decreasing")
    out_arr = np.zeros(max(n_tables, 0), dtype=np.float64)
    cdef double[::1] out = out_arr
    with nogil:
        for m in range(n_tables):
            acc = 0.0
            for q in range(table_base[m], table_base[m + 1]):
                acc += fabs(data[q] - scale * population[q])
            out[m] = acc
    return out_arr
