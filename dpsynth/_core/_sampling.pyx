# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""SDS aggregate-seeded sampler (SDS design document, section 4) over attribute ids.

Reads only the released aggregates: the 1-counts, and a hash table from packed
combination keys (see ``_hashing.pxd``) to indexes into ``agg_counts``.

A record is built one attribute at a time.  A candidate is an attribute whose
column is still empty, whose remaining 1-count is positive, and whose addition
creates no combination of length <= R missing from the aggregates.  Its
weight is the count of the new combination while the record stays within R
attributes, and beyond R the ``weight_percentile`` of the counts of all its
sub-combinations of length 1..R (linear interpolation between order
statistics).  With ``use_synthetic_counts`` every count used as a weight is
reduced by how often the combination was already synthesized; candidates
whose weight is <= 0 are skipped.

The candidate checks are incremental: when attribute ``x`` joins a record,
only the combinations ``{a, x} + T`` (``T`` a subset of the previous record
with at most R - 2 attributes) are new for a candidate ``a``; their counts are
inserted into ``a``'s sorted list, from which the percentile is read.

Two rules go beyond the SDS document: a record's first attribute can always
be drawn (if synthetic-count balancing leaves no positive weight, it is drawn
by remaining 1-counts, so sampling always progresses), and fallback weights
are at least 1.

With ``complete=True`` (``missing="category"``) a record that runs out of
candidates while columns are still empty is completed column by column (in a
random order) by the *fallback rule*: for each released value ``v`` of the
column, its support is the largest ``s <= min(R, L + 1)`` such that every
combination of ``v`` with at most ``s - 1`` attributes of the record is
released; among the values of maximal support the weight is the count of the
full combination when ``s - 1`` equals the record length, else the weight
percentile of those combinations' counts.  Remaining 1-counts are decremented
where positive but do not restrict the fallback.
"""

import numpy as np

from libc.stdint cimport int32_t, int64_t, uint64_t, uint8_t, INT64_MIN
from libc.stdlib cimport malloc, free
from libc.string cimport memmove, memset

from ._hashing cimport (pack_key, raise_pending, rng_seed, rng_uniform, signal_raised,
                       table_find)

cdef int64_t ABSENT = INT64_MIN  # count of a combination missing from the aggregates


cdef struct Sampler:
    # aggregates
    int n_attr
    int n_columns
    int R
    int bits
    double pct
    bint use_synth
    const int32_t* column_of
    const int64_t* agg_counts
    int64_t* synth_counts
    # record state
    int L
    int32_t* record        # attributes in insertion order
    uint8_t* col_used
    int n_subsets          # subsets of the record with size <= R - 1
    int32_t* subset_ids    # n_subsets x R (sorted ids)
    int32_t* subset_size
    int max_subsets
    # candidate state
    int64_t* lists         # n_attr x cap, sorted adjusted counts
    int32_t* list_len
    int cap
    double* weight
    uint8_t* valid
    int32_t* active
    int n_active


cdef inline int64_t _combo_count(Sampler* s, const uint64_t[::1] slots,
                                 const int64_t[::1] slot_values,
                                 int32_t* ids, int k) noexcept nogil:
    """Adjusted count of the sorted combination ``ids[0..k)`` or INT64_MIN if absent."""
    cdef int64_t index = table_find(slots, slot_values, pack_key(ids, k, s.bits))
    if index < 0:
        return ABSENT
    if s.use_synth:
        return s.agg_counts[index] - s.synth_counts[index]
    return s.agg_counts[index]


cdef inline int _merge(int32_t* subset, int size, int32_t a, int32_t b,
                       int32_t* out) noexcept nogil:
    """Sorted union of a sorted subset and one or two ids (b < 0: only a)."""
    cdef int i, n = 0, j, which
    cdef int32_t v
    for i in range(size):
        out[n] = subset[i]
        n += 1
    for which in range(2):
        v = a if which == 0 else b
        if v < 0:
            continue
        j = n
        while j > 0 and out[j - 1] > v:
            out[j] = out[j - 1]
            j -= 1
        out[j] = v
        n += 1
    return n


cdef inline void _list_insert(Sampler* s, int32_t a, int64_t value) noexcept nogil:
    cdef int64_t* lst = s.lists + <Py_ssize_t>a * s.cap
    cdef int n = s.list_len[a]
    cdef int lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if lst[mid] <= value:
            lo = mid + 1
        else:
            hi = mid
    memmove(lst + lo + 1, lst + lo, (n - lo) * sizeof(int64_t))
    lst[lo] = value
    s.list_len[a] = n + 1


cdef inline double _percentile_sorted(int64_t* values, int n, double pct) noexcept nogil:
    cdef double position, frac
    cdef int lo
    if n == 1:
        return <double>values[0]
    position = (n - 1) * pct / 100.0
    lo = <int>position
    if lo >= n - 1:
        return <double>values[n - 1]
    frac = position - lo
    return values[lo] + frac * (values[lo + 1] - values[lo])


cdef void _start_record(Sampler* s, const int64_t* available,
                        const uint64_t[::1] slots, const int64_t[::1] slot_values) noexcept nogil:
    cdef int32_t a
    cdef int64_t c
    s.L = 0
    memset(s.col_used, 0, s.n_columns * sizeof(uint8_t))
    s.n_subsets = 1
    s.subset_size[0] = 0
    s.n_active = 0
    for a in range(s.n_attr):
        s.list_len[a] = 0
        s.valid[a] = 0
        if available[a] <= 0:
            continue
        c = _combo_count(s, slots, slot_values, &a, 1)
        if c == ABSENT:
            continue
        s.valid[a] = 1
        _list_insert(s, a, c)
        s.weight[a] = <double>c
        s.active[s.n_active] = a
        s.n_active += 1


cdef void _add_to_record(Sampler* s, int32_t x, const int64_t* available,
                         const uint64_t[::1] slots, const int64_t[::1] slot_values,
                         int32_t* buffer) noexcept nogil:
    """Append ``x``; update every active candidate's validity, list and weight."""
    cdef int i, t, n, kept = 0, old_subsets = s.n_subsets
    cdef int32_t a
    cdef int64_t c, full = 0
    cdef bint ok
    s.col_used[s.column_of[x]] = 1
    for i in range(s.n_active):
        a = s.active[i]
        if a == x or s.col_used[s.column_of[a]] or available[a] <= 0:
            s.valid[a] = 0
            continue
        ok = True
        full = 0
        for t in range(old_subsets):
            if s.subset_size[t] > s.R - 2:
                continue
            n = _merge(s.subset_ids + <Py_ssize_t>t * s.R, s.subset_size[t], a, x, buffer)
            c = _combo_count(s, slots, slot_values, buffer, n)
            if c == ABSENT:
                ok = False
                break
            _list_insert(s, a, c)
            if s.subset_size[t] == s.L:
                full = c
        if not ok:
            s.valid[a] = 0
            continue
        if s.L + 2 <= s.R:
            s.weight[a] = <double>full
        else:
            s.weight[a] = _percentile_sorted(s.lists + <Py_ssize_t>a * s.cap,
                                             s.list_len[a], s.pct)
        s.active[kept] = a
        kept += 1
    s.n_active = kept
    # record subsets: add T + {x} for every old subset with |T| <= R - 2
    for t in range(old_subsets):
        if s.subset_size[t] > s.R - 2 or s.n_subsets >= s.max_subsets:
            continue
        n = _merge(s.subset_ids + <Py_ssize_t>t * s.R, s.subset_size[t], x, -1,
                   s.subset_ids + <Py_ssize_t>s.n_subsets * s.R)
        s.subset_size[s.n_subsets] = n
        s.n_subsets += 1
    s.record[s.L] = x
    s.L += 1


cdef int32_t _choose(Sampler* s, const int64_t* available, uint64_t* state) noexcept nogil:
    """Weighted draw among the active candidates (-1: none has a positive weight).

    A record's first attribute can always be drawn: if synthetic-count
    balancing left no positive weight, it is drawn by remaining 1-counts.
    """
    cdef double total = 0.0, u
    cdef int i
    cdef int32_t a, last = -1
    for i in range(s.n_active):
        a = s.active[i]
        if s.weight[a] > 0:
            total += s.weight[a]
    if total <= 0 and s.L == 0 and s.n_active > 0:
        for i in range(s.n_active):
            a = s.active[i]
            s.weight[a] = <double>available[a]
            total += s.weight[a]
    if total <= 0:
        return -1
    u = rng_uniform(state) * total
    for i in range(s.n_active):
        a = s.active[i]
        if s.weight[a] > 0:
            last = a
            u -= s.weight[a]
            if u < 0:
                return a
    return last


cdef int32_t _fallback_value(Sampler* s, int column, const int32_t* column_start,
                             const int32_t* column_stop,
                             const uint64_t[::1] slots, const int64_t[::1] slot_values,
                             int32_t* buffer, int64_t* scratch, double* fweights,
                             uint64_t* state) noexcept nogil:
    """Value of an empty column by the fallback rule (see module docstring)."""
    cdef int32_t v
    cdef int t, n, size, support, best = 0, limit
    cdef int64_t c
    cdef bint ok
    cdef double total = 0.0, u
    cdef int32_t last = -1
    limit = s.R if s.R < s.L + 1 else s.L + 1
    for v in range(column_start[column], column_stop[column]):
        fweights[v - column_start[column]] = 0.0
        if _combo_count(s, slots, slot_values, &v, 1) == ABSENT:
            continue
        support = 1
        for size in range(1, limit):
            ok = True
            for t in range(s.n_subsets):
                if s.subset_size[t] != size:
                    continue
                n = _merge(s.subset_ids + <Py_ssize_t>t * s.R, size, v, -1, buffer)
                if _combo_count(s, slots, slot_values, buffer, n) == ABSENT:
                    ok = False
                    break
            if not ok:
                break
            support = size + 1
        if support < best:
            continue
        if support > best:
            best = support
            total = 0.0
            for t in range(column_start[column], v):
                fweights[t - column_start[column]] = 0.0
        # weight over the combinations of v with <= support - 1 record attributes
        n = 0
        for t in range(s.n_subsets):
            if s.subset_size[t] > support - 1:
                continue
            size = _merge(s.subset_ids + <Py_ssize_t>t * s.R, s.subset_size[t], v, -1, buffer)
            c = _combo_count(s, slots, slot_values, buffer, size)
            if support - 1 == s.L:
                if s.subset_size[t] == s.L:
                    scratch[0] = c
                    n = 1
                    break
                continue
            scratch[n] = c
            n += 1
        if n == 0:
            continue
        _sort_small(scratch, n)
        fweights[v - column_start[column]] = _percentile_sorted(scratch, n, s.pct)
        if fweights[v - column_start[column]] < 1.0:
            fweights[v - column_start[column]] = 1.0
        total += fweights[v - column_start[column]]
    if total <= 0:
        return -1
    u = rng_uniform(state) * total
    for v in range(column_start[column], column_stop[column]):
        if fweights[v - column_start[column]] > 0:
            last = v
            u -= fweights[v - column_start[column]]
            if u < 0:
                return v
    return last


cdef void _sort_small(int64_t* values, int n) noexcept nogil:
    cdef int i, j
    cdef int64_t v
    for i in range(1, n):
        v = values[i]
        j = i
        while j > 0 and values[j - 1] > v:
            values[j] = values[j - 1]
            j -= 1
        values[j] = v


def _n_subsets(int d, int R):
    cdef int total = 0, j
    cdef double c = 1.0
    for j in range(R):
        total += <int>(c + 0.5)
        c = c * (d - j) / (j + 1)
    return total


def sample_records(const int32_t[::1] column_of, const int64_t[::1] one_counts,
                   const int64_t[::1] agg_counts,
                   const uint64_t[::1] slots, const int64_t[::1] slot_values,
                   int n_columns, int reporting_length, int bits,
                   double weight_percentile, bint use_synthetic_counts,
                   bint complete, Py_ssize_t n_records, uint64_t seed,
                   Py_ssize_t max_records):
    """Synthesize records; returns ``(records, stats)``.

    ``records`` is an int32 array (m, n_columns) of attribute ids, -1 for an
    empty cell.  ``n_records >= 0`` asks for exactly that many records (a new
    pass with fresh 1-counts starts whenever they run out, as in SDS);
    ``n_records < 0`` samples until every 1-count is used up.
    ``stats`` = (records completed by the fallback, cells filled by it,
    passes over the 1-counts).
    """
    cdef int n_attr = column_of.shape[0]
    cdef Sampler s
    cdef Py_ssize_t produced = 0, i, target
    cdef int j, column, remaining_columns
    cdef int32_t x
    cdef int64_t total_available = 0
    cdef uint64_t state = rng_seed(seed)
    cdef int64_t fallback_records = 0, fallback_cells = 0, passes = 1
    cdef bint used_fallback, interrupted = False
    cdef Py_ssize_t work = 0
    if n_attr == 0:
        raise ValueError("no released attributes to sample from")
    for i in range(n_attr):
        if one_counts[i] > 0:
            total_available += one_counts[i]
    if total_available == 0:
        raise ValueError("every released 1-count is zero; nothing to sample")
    target = n_records if n_records >= 0 else max_records
    records_arr = np.full((target, n_columns), -1, dtype=np.int32)
    cdef int32_t[:, ::1] records = records_arr
    available_arr = np.asarray(one_counts, dtype=np.int64).copy()
    cdef int64_t[::1] available = available_arr
    synth_arr = np.zeros(agg_counts.shape[0], dtype=np.int64)
    cdef int64_t[::1] synth = synth_arr
    # per-column attribute ranges (attributes of a column are contiguous)
    start_arr = np.full(n_columns, 0, dtype=np.int32)
    stop_arr = np.full(n_columns, 0, dtype=np.int32)
    for i in range(n_attr - 1, -1, -1):
        start_arr[column_of[i]] = i
    for i in range(n_attr):
        stop_arr[column_of[i]] = i + 1
    cdef int32_t[::1] column_start = start_arr, column_stop = stop_arr
    cdef int32_t[::1] order = np.zeros(n_columns, dtype=np.int32)

    _init_sampler(&s, column_of, agg_counts, synth, n_columns, reporting_length, bits,
                  weight_percentile, use_synthetic_counts)
    cdef int32_t* buffer = <int32_t*> malloc((reporting_length + 2) * sizeof(int32_t))
    cdef int64_t* scratch = <int64_t*> malloc((s.max_subsets + 1) * sizeof(int64_t))
    cdef double* fweights = <double*> malloc((n_attr + 1) * sizeof(double))
    if buffer == NULL or scratch == NULL or fweights == NULL:
        _free(&s, buffer, scratch, fweights)
        raise MemoryError()
    try:
        with nogil:
            while produced < target:
                # a record costs about one look-up per candidate and record subset
                if signal_raised(&work, <Py_ssize_t>s.n_attr * s.max_subsets + 1):
                    interrupted = True
                    break
                if total_available <= 0:
                    if n_records < 0:
                        break
                    for i in range(n_attr):
                        available[i] = one_counts[i] if one_counts[i] > 0 else 0
                        total_available += available[i]
                    passes += 1
                _start_record(&s, &available[0], slots, slot_values)
                while True:
                    x = _choose(&s, &available[0], &state)
                    if x < 0:
                        break
                    _add_to_record(&s, x, &available[0], slots, slot_values, buffer)
                    available[x] -= 1
                    total_available -= 1
                used_fallback = False
                if complete and s.L < n_columns:
                    remaining_columns = 0
                    for column in range(n_columns):
                        if not s.col_used[column]:
                            order[remaining_columns] = column
                            remaining_columns += 1
                    for j in range(remaining_columns - 1, 0, -1):  # Fisher-Yates
                        i = <Py_ssize_t>(rng_uniform(&state) * (j + 1))
                        column = order[j]
                        order[j] = order[i]
                        order[i] = column
                    for j in range(remaining_columns):
                        x = _fallback_value(&s, order[j], &column_start[0], &column_stop[0],
                                            slots, slot_values, buffer, scratch,
                                            fweights, &state)
                        if x < 0:
                            continue
                        s.n_active = 0
                        _add_to_record(&s, x, &available[0], slots, slot_values, buffer)
                        if available[x] > 0:
                            available[x] -= 1
                            total_available -= 1
                        fallback_cells += 1
                        used_fallback = True
                if used_fallback:
                    fallback_records += 1
                if s.L == 0:
                    continue
                for j in range(s.L):
                    records[produced, s.column_of[s.record[j]]] = s.record[j]
                if s.use_synth:
                    _count_synthesized(&s, slots, slot_values, buffer)
                produced += 1
        raise_pending(interrupted)
    finally:
        _free(&s, buffer, scratch, fweights)
    return records_arr[:produced].copy(), (int(fallback_records), int(fallback_cells), int(passes))


cdef void _count_synthesized(Sampler* s, const uint64_t[::1] slots,
                             const int64_t[::1] slot_values, int32_t* buffer) noexcept nogil:
    """Add the record's combinations of length 1..R to the synthesized counts."""
    cdef int t, n, i
    cdef int64_t index
    cdef int32_t x
    # every subset of size <= R - 1 (including empty) plus one more record attribute
    # enumerates each combination of size 1..R once when the extra one is the largest
    for t in range(s.n_subsets):
        for i in range(s.L):
            x = s.record[i]
            if s.subset_size[t] > 0 and x <= s.subset_ids[<Py_ssize_t>t * s.R + s.subset_size[t] - 1]:
                continue
            n = _merge(s.subset_ids + <Py_ssize_t>t * s.R, s.subset_size[t], x, -1, buffer)
            index = table_find(slots, slot_values, pack_key(buffer, n, s.bits))
            if index >= 0:
                s.synth_counts[index] += 1


cdef int _init_sampler(Sampler* s, const int32_t[::1] column_of,
                       const int64_t[::1] agg_counts, int64_t[::1] synth, int n_columns,
                       int reporting_length, int bits, double weight_percentile,
                       bint use_synthetic_counts) except -1:
    """Fill the sampler's parameters and allocate its record and candidate state."""
    cdef int n_attr = column_of.shape[0]
    s.n_attr = n_attr
    s.n_columns = n_columns
    s.R = reporting_length
    s.bits = bits
    s.pct = weight_percentile
    s.use_synth = use_synthetic_counts
    s.column_of = &column_of[0]
    s.agg_counts = &agg_counts[0]
    s.synth_counts = &synth[0] if synth.shape[0] else NULL
    s.max_subsets = _n_subsets(n_columns, reporting_length)
    s.cap = _n_subsets(n_columns - 1, reporting_length)
    if <double>n_attr * s.cap > 2e8:
        raise ValueError(
            f"sampling state too large ({n_attr} attributes x {s.cap} combinations); "
            "lower reporting_length")
    s.record = <int32_t*> malloc(n_columns * sizeof(int32_t))
    s.col_used = <uint8_t*> malloc(n_columns * sizeof(uint8_t))
    s.subset_ids = <int32_t*> malloc(<Py_ssize_t>s.max_subsets * reporting_length * sizeof(int32_t))
    s.subset_size = <int32_t*> malloc(s.max_subsets * sizeof(int32_t))
    s.lists = <int64_t*> malloc(<Py_ssize_t>n_attr * s.cap * sizeof(int64_t))
    s.list_len = <int32_t*> malloc(n_attr * sizeof(int32_t))
    s.weight = <double*> malloc(n_attr * sizeof(double))
    s.valid = <uint8_t*> malloc(n_attr * sizeof(uint8_t))
    s.active = <int32_t*> malloc(n_attr * sizeof(int32_t))
    if (s.record == NULL or s.col_used == NULL or s.subset_ids == NULL
            or s.subset_size == NULL or s.lists == NULL or s.list_len == NULL
            or s.weight == NULL or s.valid == NULL or s.active == NULL):
        _free(s, NULL, NULL, NULL)
        raise MemoryError()
    return 0


cdef void _free(Sampler* s, int32_t* buffer, int64_t* scratch, double* fweights) noexcept:
    free(s.record); free(s.col_used); free(s.subset_ids); free(s.subset_size)
    free(s.lists); free(s.list_len); free(s.weight); free(s.valid); free(s.active)
    free(buffer); free(scratch); free(fweights)


def candidate_weights(const int32_t[::1] column_of, const int64_t[::1] agg_counts,
                      const int64_t[::1] synth_counts,
                      const uint64_t[::1] slots, const int64_t[::1] slot_values,
                      const int64_t[::1] available, const int32_t[::1] partial,
                      int n_columns, int reporting_length, int bits,
                      double weight_percentile, bint use_synthetic_counts):
    """Weights of every attribute after the attributes ``partial`` (in order).

    Replays the sampler's incremental updates; returns a float array with
    NaN for attributes that are not candidates (tests compare it with a
    brute-force reference of the SDS rules).
    """
    cdef int n_attr = column_of.shape[0]
    cdef Sampler s
    cdef int i
    synth_copy = np.array(synth_counts, dtype=np.int64)
    cdef int64_t[::1] synth = synth_copy
    _init_sampler(&s, column_of, agg_counts, synth, n_columns, reporting_length, bits,
                  weight_percentile, use_synthetic_counts)
    cdef int32_t* buffer = <int32_t*> malloc((reporting_length + 2) * sizeof(int32_t))
    if buffer == NULL:
        _free(&s, buffer, NULL, NULL)
        raise MemoryError()
    out = np.full(n_attr, np.nan)
    try:
        _start_record(&s, &available[0], slots, slot_values)
        for i in range(partial.shape[0]):
            _add_to_record(&s, partial[i], &available[0], slots, slot_values, buffer)
        for i in range(s.n_active):
            out[s.active[i]] = s.weight[s.active[i]]
    finally:
        _free(&s, buffer, NULL, NULL)
    return out


# ---------------------------------------------------------------------------
# view sampling (dpsynth.views.ViewSet.sample): inverse-CDF draws and raking
# ---------------------------------------------------------------------------

def inverse_cdf(const double[:, ::1] cum, const int64_t[::1] row, const double[::1] u,
                int32_t[::1] out):
    """``out[i]`` = number of entries of ``cum[row[i]]`` that are <= ``u[i]`` (at most c - 1).

    ``cum`` holds one distribution function per row (non-decreasing, last entry 1).
    """
    cdef Py_ssize_t i, n = u.shape[0], c = cum.shape[1]
    cdef int32_t v
    cdef double x
    cdef const double* r
    with nogil:
        for i in range(n):
            r = &cum[row[i], 0]
            x = u[i]
            v = 0
            while v < c - 1 and r[v] <= x:
                v += 1
            out[i] = v


def rake_sweep(const int64_t[::1] cell, const double[::1] target, double[::1] mass,
               double smoothing, double[::1] current):
    """One raking step of one view: scale ``mass`` so its cell fractions move to ``target``.

    ``mass[i] *= (target[k] + s) / (current[k] / total + s)`` with ``k = cell[i]``;
    returns ``max_k |current[k] / total - target[k]|`` before the step, or -1
    when the total mass is not positive (nothing is changed then).
    """
    cdef Py_ssize_t i, k, n = cell.shape[0], m = target.shape[0]
    cdef double total = 0.0, moved = 0.0, f
    with nogil:
        for k in range(m):
            current[k] = 0.0
        for i in range(n):
            current[cell[i]] += mass[i]
        for k in range(m):
            total += current[k]
        if not total > 0:
            moved = -1.0
        else:
            _rake_apply(&cell[0], &target[0], &mass[0], &current[0], n, m, total,
                        smoothing, &moved)
    return moved


cdef void _rake_apply(const int64_t* cell, const double* target, double* mass,
                      double* current, Py_ssize_t n, Py_ssize_t m, double total,
                      double smoothing, double* moved) noexcept nogil:
    cdef Py_ssize_t i, k
    cdef double f
    for k in range(m):
        f = current[k] / total
        if f - target[k] > moved[0]:
            moved[0] = f - target[k]
        elif target[k] - f > moved[0]:
            moved[0] = target[k] - f
        current[k] = (target[k] + smoothing) / (f + smoothing)
    for i in range(n):
        mass[i] *= current[cell[i]]
