# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""k-tuple counting kernels of the DP-marginals release (Gopi et al., Algorithm 1).

All functions work on *compact* attribute ids: at level k >= 2 only the
attributes released at level 1 can appear in a candidate, so they are
renumbered 0..m-1 in increasing original-id order (which keeps the ids of one
record increasing from column to column).  A record is a row of a
``(n_records, n_columns)`` int32 matrix whose entry is the compact id of the
record's value in that column, or -1 (absent cell, or value not released).

Records are streamed twice per level: once to count each record's candidate
k-tuples ``|W_u|`` (for the DP percentile), once to add +1 to a uniformly
random ``Delta_k``-subset of them.  Memory stays ``O(n_records + |V_k|)``:
no record's tuple list is ever stored.
"""

import numpy as np

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy

from ._hashing cimport (key_add, mix64, pack_key, raise_pending, rng_seed_stream,
                       rng_uniform, signal_raised, table_find)

def key_bits(Py_ssize_t n_ids):
    """Bits per id in a packed key for ids ``0..n_ids-1`` (id + 1 must fit)."""
    cdef int bits = 1
    while (1 << bits) <= n_ids:
        bits += 1
    return bits


def pack_tuples(const int32_t[:, ::1] tuples, int bits):
    """Packed uint64 key of every row (rows must be sorted ascending)."""
    cdef Py_ssize_t n = tuples.shape[0], k = tuples.shape[1], i
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] keys = out
    if k == 0:
        keys[:] = 0
        return out
    with nogil:
        for i in range(n):
            keys[i] = pack_key(&tuples[i, 0], k, bits)
    return out


def lookup(const uint64_t[::1] slots, const int64_t[::1] slot_values,
           const uint64_t[::1] keys):
    """Vectorised :func:`build_table` lookup: the value of each key, or -1."""
    cdef Py_ssize_t n = keys.shape[0], i
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] values = out
    with nogil:
        for i in range(n):
            values[i] = table_find(slots, slot_values, keys[i])
    return out


def build_table(const uint64_t[::1] keys, const int64_t[::1] values):
    """Open-addressing hash table ``key -> value`` as two arrays ``(slots, slot_values)``.

    The capacity is a power of two at least twice the number of keys, so a
    lookup (``_hashing.table_find``) probes about 1.5 slots on average.
    Duplicate keys raise ``ValueError``.
    """
    cdef Py_ssize_t n = keys.shape[0], i
    cdef uint64_t capacity = 16
    while capacity < 2 * <uint64_t>n:
        capacity <<= 1
    slots_arr = np.zeros(capacity, dtype=np.uint64)
    vals_arr = np.full(capacity, -1, dtype=np.int64)
    cdef uint64_t[::1] slots = slots_arr
    cdef int64_t[::1] vals = vals_arr
    cdef uint64_t mask = capacity - 1, pos, key
    cdef Py_ssize_t duplicate = -1
    with nogil:
        for i in range(n):
            key = keys[i]
            pos = mix64(key) & mask
            while slots[pos] != 0 and slots[pos] != key:
                pos = (pos + 1) & mask
            if slots[pos] == key:
                duplicate = i
                break
            slots[pos] = key
            vals[pos] = values[i]
    if duplicate >= 0:
        raise ValueError(f"duplicate key at position {duplicate}")
    return slots_arr, vals_arr


def distinct_rows(const int32_t[:, ::1] ids, const int64_t[::1] weights,
                  bint return_inverse=False):
    """Distinct rows of ``ids`` by one hashing pass (no sort).

    Parameters
    ----------
    ids : ndarray of int32, shape (n, d)
    weights : ndarray of int64, shape (n,)
        How many records each row stands for.
    return_inverse : bool, default=False
        Also return the distinct row of every row.

    Returns
    -------
    first : ndarray of int64
        Index of the first occurrence of every distinct row, in order of
        first occurrence.
    total : ndarray of int64
        Sum of ``weights`` over the occurrences of every distinct row.
    inverse : ndarray of int64, shape (n,)
        Only with ``return_inverse``: row ``u`` is distinct row ``inverse[u]``.
    """
    cdef Py_ssize_t n = ids.shape[0], d = ids.shape[1], u, j, found = 0, work = 0
    cdef uint64_t capacity = 16, mask, pos, h
    cdef int64_t r
    cdef bint same, interrupted = False
    if weights.shape[0] != n:
        raise ValueError("weights must hold one weight per row")
    while capacity < 2 * <uint64_t>n:
        capacity <<= 1
    mask = capacity - 1
    slots_arr = np.full(capacity, -1, dtype=np.int64)  # distinct row number, -1: empty
    hashes_arr = np.zeros(n, dtype=np.uint64)
    first_arr = np.empty(n, dtype=np.int64)
    total_arr = np.zeros(n, dtype=np.int64)
    inverse_arr = np.empty(n if return_inverse else 0, dtype=np.int64)
    cdef int64_t[::1] slots = slots_arr, first = first_arr, total = total_arr
    cdef int64_t[::1] inverse = inverse_arr
    cdef uint64_t[::1] hashes = hashes_arr  # of the distinct rows
    with nogil:
        for u in range(n):
            if signal_raised(&work, d + 1):
                interrupted = True
                break
            h = <uint64_t>d
            for j in range(d):
                h = mix64(h ^ (<uint64_t><uint32_t>ids[u, j]))
            pos = h & mask
            while True:
                r = slots[pos]
                if r < 0:  # new distinct row
                    slots[pos] = found
                    hashes[found] = h
                    first[found] = u
                    total[found] = weights[u]
                    if return_inverse:
                        inverse[u] = found
                    found += 1
                    break
                if hashes[r] == h:
                    same = True
                    for j in range(d):
                        if ids[first[r], j] != ids[u, j]:
                            same = False
                            break
                    if same:
                        total[r] += weights[u]
                        if return_inverse:
                            inverse[u] = r
                        break
                pos = (pos + 1) & mask
    raise_pending(interrupted)
    if return_inverse:
        return first_arr[:found].copy(), total_arr[:found].copy(), inverse_arr
    return first_arr[:found].copy(), total_arr[:found].copy()


def lex_order(rows):
    """Permutation that sorts the rows of an int32 matrix lexicographically.

    The order of ``np.unique(rows, axis=0)`` (signed comparisons, first
    column first), found by packing each row, column after column, into as
    few 64-bit words as the columns' ranges allow and sorting those words:
    a few passes instead of one per column.  Stable.
    """
    arr = np.asarray(rows)
    n, d = arr.shape
    if n == 0 or d == 0:
        return np.arange(n)
    low = arr.min(axis=0).astype(np.int64)
    bits = [int(span).bit_length() for span in arr.max(axis=0).astype(np.int64) - low]
    words, word, used = [], np.zeros(n, dtype=np.uint64), 0
    for j in range(d):
        if bits[j] == 0:  # a constant column does not order anything
            continue
        if used + bits[j] > 64:
            words.append(word)
            word, used = np.zeros(n, dtype=np.uint64), 0
        word = (word << np.uint64(bits[j])) | (arr[:, j] - low[j]).astype(np.uint64)
        used += bits[j]
    words.append(word)
    return np.lexsort(words[::-1])  # np.lexsort's last key is the primary one


def candidate_tuples(const int32_t[:, ::1] previous, const int32_t[::1] column_of,
                     const uint64_t[::1] slots, const int64_t[::1] slot_values, int bits):
    """V_k: every k-tuple whose (k-1)-sub-tuples are all in ``previous``.

    ``previous`` holds S_{k-1} as rows of sorted compact ids, sorted
    lexicographically; ``slots``/``slot_values`` is a table containing their
    keys.  Candidates are the apriori joins of two rows that share their first
    k-2 ids and whose last ids come from different columns, kept when every
    other (k-1)-sub-tuple is in the table.  Returns an int32 array (m, k) of
    sorted rows in lexicographic order.
    """
    cdef Py_ssize_t m = previous.shape[0], km1 = previous.shape[1], k = km1 + 1
    cdef Py_ssize_t start, stop, i, i2, j, p, q, total = 0, written = 0, work = 0
    cdef int pass_
    cdef int32_t a, b
    cdef int32_t sub[64]  # a (k-1)-sub-tuple; packed keys hold at most 64 ids
    cdef bint ok, interrupted = False
    if k > 64:
        raise ValueError("tuples of more than 64 ids do not fit a packed key")
    out_arr = np.empty((0, k), dtype=np.int32)
    cdef int32_t[:, ::1] out = out_arr
    for pass_ in range(2):
        if pass_ == 1:
            out_arr = np.empty((total, k), dtype=np.int32)
            out = out_arr
        with nogil:
            start = 0
            while start < m:
                stop = start + 1
                while stop < m:
                    ok = True
                    for p in range(km1 - 1):
                        if previous[stop, p] != previous[start, p]:
                            ok = False
                            break
                    if not ok:
                        break
                    stop += 1
                for i in range(start, stop):
                    if signal_raised(&work, (stop - i) * km1 + 1):
                        interrupted = True
                        break
                    a = previous[i, km1 - 1]
                    for j in range(i + 1, stop):
                        b = previous[j, km1 - 1]
                        if column_of[a] == column_of[b]:
                            continue
                        ok = True
                        # drop prefix element p; the sub-tuple stays sorted
                        for p in range(km1 - 1):
                            q = 0
                            for i2 in range(km1 - 1):
                                if i2 != p:
                                    sub[q] = previous[i, i2]
                                    q += 1
                            sub[q] = a
                            sub[q + 1] = b
                            if table_find(slots, slot_values, pack_key(sub, km1, bits)) == -1:
                                ok = False
                                break
                        if not ok:
                            continue
                        if pass_ == 0:
                            total += 1
                        else:
                            for p in range(km1):
                                out[written, p] = previous[i, p]
                            out[written, km1] = b
                            written += 1
                if interrupted:
                    break
                start = stop
        raise_pending(interrupted)
    return out_arr


cdef inline Py_ssize_t _compact_record(const int32_t[:, ::1] ids, Py_ssize_t row,
                                       int32_t* buffer) noexcept nogil:
    cdef Py_ssize_t j, m = 0
    for j in range(ids.shape[1]):
        if ids[row, j] >= 0:
            buffer[m] = ids[row, j]
            m += 1
    return m


cdef Py_ssize_t _walk_record(int32_t* rec, Py_ssize_t m, int k, int bits,
                             const uint64_t[::1] slots, const int64_t[::1] slot_values,
                             Py_ssize_t* pos, uint64_t* keys,
                             int64_t[::1] counts, int64_t size, int64_t bound,
                             uint64_t* rng_state, int64_t increment,
                             Py_ssize_t* steps) noexcept nogil:
    """Depth-first walk over the record's k-subsets that are candidates.

    A prefix of length j < k is extended only if it is a released j-tuple
    (every candidate's sub-tuples are released, so this prunes exactly the
    subsets that cannot be candidates).  With ``counts`` empty the walk only
    counts the candidates; otherwise it adds ``increment`` to each candidate
    kept by selection sampling (Knuth's Algorithm S): a uniform ``bound``-subset
    of the record's ``size`` candidates, or all of them when ``size <= bound``.
    Adds the number of table look-ups to ``steps``.
    """
    cdef Py_ssize_t depth = 0, found = 0
    cdef int64_t value, chosen = 0
    cdef uint64_t key
    cdef bint counting = counts.shape[0] > 0
    if m < k:
        return 0
    pos[0] = 0
    keys[0] = 0
    while depth >= 0:
        if pos[depth] > m - (k - depth):
            depth -= 1
            if depth >= 0:
                pos[depth] += 1
            continue
        key = key_add(keys[depth], rec[pos[depth]], <int>depth, bits)
        value = table_find(slots, slot_values, key)
        steps[0] += 1
        if depth == k - 1:
            if value >= 0:
                if counting:
                    if size <= bound:
                        counts[value] += increment
                    elif (bound - chosen) > rng_uniform(rng_state) * (size - found):
                        counts[value] += increment
                        chosen += 1
                found += 1
            pos[depth] += 1
        elif value != -1:
            keys[depth + 1] = key
            pos[depth + 1] = pos[depth] + 1
            depth += 1
        else:
            pos[depth] += 1
    return found


cdef struct WalkBuffers:
    # scratch of one record walk: the record's ids, and per depth the
    # position in the record and the packed key of the prefix
    int32_t* rec
    Py_ssize_t* pos
    uint64_t* keys


cdef int _walk_alloc(WalkBuffers* w, Py_ssize_t d, int k) except -1:
    w.rec = <int32_t*> malloc((d + 1) * sizeof(int32_t))
    w.pos = <Py_ssize_t*> malloc((k + 1) * sizeof(Py_ssize_t))
    w.keys = <uint64_t*> malloc((k + 1) * sizeof(uint64_t))
    if w.rec == NULL or w.pos == NULL or w.keys == NULL:
        _walk_free(w)
        raise MemoryError()
    return 0


cdef void _walk_free(WalkBuffers* w) noexcept nogil:
    free(w.rec)
    free(w.pos)
    free(w.keys)
    w.rec = NULL
    w.pos = NULL
    w.keys = NULL


def record_tuple_counts(const int32_t[:, ::1] ids, int k, int bits,
                        const uint64_t[::1] slots, const int64_t[::1] slot_values,
                        plan=None):
    """``|W_u|`` for every record: how many of its k-subsets are candidates.

    With a :func:`dense_plan` of the candidates, by :func:`dense_counts`
    (same result); otherwise by a walk over each record's subsets.
    """
    cdef Py_ssize_t n = ids.shape[0], u, m, work = 0
    cdef bint interrupted = False
    out = np.zeros(n, dtype=np.int64)
    if plan is not None:
        return dense_counts(np.ascontiguousarray(np.asarray(ids).T), *plan,
                            np.ones(n, dtype=np.int64), np.zeros(0, dtype=np.int64), 0, out)
    cdef int64_t[::1] sizes = out
    cdef int64_t[::1] no_counts = np.zeros(0, dtype=np.int64)
    cdef WalkBuffers w
    cdef uint64_t state = 0
    _walk_alloc(&w, ids.shape[1], k)
    try:
        with nogil:
            for u in range(n):
                m = _compact_record(ids, u, w.rec)
                sizes[u] = _walk_record(w.rec, m, k, bits, slots, slot_values, w.pos, w.keys,
                                        no_counts, 0, 0, &state, 0, &work)
                if signal_raised(&work, 1):
                    interrupted = True
                    break
        raise_pending(interrupted)
    finally:
        _walk_free(&w)
    return out


def bounded_counts(const int32_t[:, ::1] ids, int k, int bits,
                   const uint64_t[::1] slots, const int64_t[::1] slot_values,
                   Py_ssize_t n_candidates, const int64_t[::1] sizes,
                   int64_t bound, uint64_t seed, const int64_t[::1] multiplicity,
                   plan=None, record_keys=None, key_start=None):
    """Candidate counts where each record adds +1 to at most ``bound`` candidates.

    A record with more than ``bound`` candidates contributes to a uniformly
    random ``bound``-subset of them (NoisyThresholding step 2, Gopi et al.),
    drawn with a per-record generator seeded from ``seed`` and the record's
    key, so the result does not depend on anything but the inputs.  Row ``u``
    stands for ``multiplicity[u]`` identical records: each copy adds +1 to all
    its candidates, or to its own random subset when truncated.  The key of
    copy ``c`` of a truncated row ``u`` is ``record_keys[key_start[u] + c]``
    (e.g. the record's position in the whole table, which makes the result
    independent of how the table is split into blocks); without
    ``record_keys`` it is the pair ``(u, c)``.
    ``sizes`` must be :func:`record_tuple_counts` of the same inputs.
    With a :func:`dense_plan`, the untruncated records are counted by
    :func:`dense_counts` and only the truncated ones walked (same result).
    """
    cdef Py_ssize_t n = ids.shape[0], u, m, work = 0
    cdef int64_t copy
    cdef bint interrupted = False
    cdef bint keyed = record_keys is not None
    cdef const uint64_t[::1] keys_of = (np.ascontiguousarray(record_keys, dtype=np.uint64)
                                        if keyed else np.zeros(0, dtype=np.uint64))
    cdef const int64_t[::1] start_of = (np.ascontiguousarray(key_start, dtype=np.int64)
                                        if keyed else np.zeros(0, dtype=np.int64))
    if keyed:  # the walk indexes keys_of without bounds checks: check the ranges here
        truncated = np.asarray(sizes) > bound
        first_key = np.asarray(start_of)[truncated] if start_of.shape[0] == n else None
        if first_key is None or (first_key.size and (
                first_key.min() < 0 or (first_key + np.asarray(multiplicity)[truncated]).max()
                > keys_of.shape[0])):
            raise ValueError("key_start must give every truncated row's copies a range of "
                             "record_keys")
    out = np.zeros(n_candidates, dtype=np.int64)
    cdef int64_t[::1] counts = out
    cdef WalkBuffers w
    cdef uint64_t state
    cdef bint truncated_only = plan is not None
    if n_candidates == 0:
        return out
    if truncated_only:
        dense_counts(np.ascontiguousarray(np.asarray(ids).T), *plan, multiplicity, sizes,
                     bound, out)
    _walk_alloc(&w, ids.shape[1], k)
    try:
        with nogil:
            for u in range(n):
                if sizes[u] == 0 or (truncated_only and sizes[u] <= bound):
                    continue
                if signal_raised(&work, 1):
                    interrupted = True
                    break
                m = _compact_record(ids, u, w.rec)
                if sizes[u] <= bound:  # untruncated copies all add the same +1s
                    _walk_record(w.rec, m, k, bits, slots, slot_values, w.pos, w.keys,
                                 counts, sizes[u], bound, &state, multiplicity[u], &work)
                    continue
                for copy in range(multiplicity[u]):  # an independent subset per copy
                    if copy > 0 and signal_raised(&work, 1):
                        interrupted = True
                        break
                    if keyed:
                        state = rng_seed_stream(seed, keys_of[start_of[u] + copy] + 1, 0)
                    else:
                        state = rng_seed_stream(seed, <uint64_t>u + 1, <uint64_t>copy)
                    _walk_record(w.rec, m, k, bits, slots, slot_values, w.pos, w.keys,
                                 counts, sizes[u], bound, &state, 1, &work)
                if interrupted:
                    break
        raise_pending(interrupted)
    finally:
        _walk_free(&w)
    return out


def dense_counts(const int32_t[:, ::1] columns, const int32_t[::1] column_start,
                 const int32_t[:, ::1] group_columns, const int64_t[::1] group_start,
                 const int32_t[:, ::1] candidates, const int64_t[::1] order,
                 const int64_t[::1] multiplicity, const int64_t[::1] sizes, int64_t bound,
                 int64_t[::1] out):
    """Candidate counts (or per-record candidate counts) one column group at a time.

    The sort-free counting pass of a level: the candidates are grouped by the
    columns of their ids, and for each group a dense table over the group's
    cells maps a cell to its candidate; one pass over the records' codes of
    those columns then finds every record's candidate of the group.  The table
    and the columns read stay in cache, so the cost is about one table read
    per (record, column group), whatever the number of candidates.

    Parameters
    ----------
    columns : ndarray of int32, shape (n_columns, n_records)
        Compact id of every record's value, column by column (-1: none).
    column_start : ndarray of int32, shape (n_columns + 1,)
        Compact ids of column ``c`` are ``column_start[c] ..
        column_start[c + 1] - 1``.
    group_columns : ndarray of int32, shape (n_groups, k)
        Columns of every group (increasing).
    group_start : ndarray of int64, shape (n_groups + 1,)
        Candidates ``order[group_start[g] : group_start[g + 1]]`` belong to group ``g``.
    candidates : ndarray of int32, shape (n_candidates, k)
    order : ndarray of int64
        Candidate indexes, grouped.
    multiplicity : ndarray of int64
        Records each row stands for.
    sizes : ndarray of int64, shape (0,) or (n_records,)
        Empty: add to ``out[u]`` the number of record ``u``'s candidates
        (``record_tuple_counts``).  Otherwise: add ``multiplicity[u]`` to
        ``out[candidate]`` for every candidate of every record with
        ``sizes[u] <= bound`` (the untruncated records of ``bounded_counts``).
    bound : int
    out : ndarray of int64
        Updated in place.
    """
    cdef Py_ssize_t n = columns.shape[1], k = group_columns.shape[1]
    cdef Py_ssize_t n_groups = group_columns.shape[0], g, i, u, p, work = 0
    cdef int64_t cell, largest = 1, cells, idx
    cdef int64_t step[64]
    cdef const int32_t* col[64]
    cdef int32_t value
    cdef bint per_record = sizes.shape[0] == 0, interrupted = False, skip
    if k > 64:
        raise ValueError("more than 64 columns in a group")
    for g in range(n_groups):
        cells = 1
        for p in range(k):
            c = group_columns[g, p]
            cells *= column_start[c + 1] - column_start[c]
        largest = max(largest, cells)
    table_arr = np.full(largest, -1, dtype=np.int64)
    cdef int64_t[::1] table = table_arr
    with nogil:
        for g in range(n_groups):
            # strides of the group's dense table (last column innermost)
            cells = 1
            for p in range(k - 1, -1, -1):
                step[p] = cells
                cells *= column_start[group_columns[g, p] + 1] - column_start[group_columns[g, p]]
                col[p] = &columns[group_columns[g, p], 0]
            for i in range(group_start[g], group_start[g + 1]):
                cell = 0
                for p in range(k):
                    cell += (candidates[order[i], p]
                             - column_start[group_columns[g, p]]) * step[p]
                table[cell] = order[i]
            for u in range(n):
                if not per_record and sizes[u] > bound:
                    continue
                cell = 0
                skip = False
                for p in range(k):
                    value = col[p][u]
                    if value < 0:
                        skip = True
                        break
                    cell += (value - column_start[group_columns[g, p]]) * step[p]
                if skip:
                    continue
                idx = table[cell]
                if idx < 0:
                    continue
                if per_record:
                    out[u] += 1
                else:
                    out[idx] += multiplicity[u]
            for i in range(group_start[g], group_start[g + 1]):  # clear the table
                cell = 0
                for p in range(k):
                    cell += (candidates[order[i], p]
                             - column_start[group_columns[g, p]]) * step[p]
                table[cell] = -1
            if signal_raised(&work, n + 1):
                interrupted = True
                break
    raise_pending(interrupted)
    return out


def dense_plan(const int32_t[:, ::1] candidates, column_of, Py_ssize_t max_cells=1 << 22):
    """Grouping of a level's candidates by columns, for :func:`dense_counts`.

    Parameters
    ----------
    candidates : ndarray of int32, shape (n_candidates, k)
        Sorted compact-id rows.
    column_of : ndarray of int
        Column of every compact id, non-decreasing (a column's ids are contiguous).
    max_cells : int, default=2**22
        Largest dense table allowed (8 bytes a cell).

    Returns
    -------
    tuple or None
        ``(column_start, group_columns, group_start, candidates, order)``, the
        arguments of :func:`dense_counts` after ``columns``; None when a
        group's table would exceed ``max_cells`` (then the walk counts).
    """
    column_of = np.asarray(column_of, dtype=np.int64)
    rows = np.asarray(candidates)
    if rows.shape[0] == 0 or np.any(np.diff(column_of) < 0):
        return None
    n_columns = int(column_of.max()) + 1
    column_start = np.searchsorted(column_of, np.arange(n_columns + 1)).astype(np.int32)
    width = np.diff(column_start).astype(np.int64)
    cols = column_of[rows]
    key = np.zeros(rows.shape[0], dtype=np.int64)
    for p in range(rows.shape[1]):
        key = key * n_columns + cols[:, p]
    order = np.argsort(key, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(key[order]) != 0])
    group_columns = np.ascontiguousarray(cols[order[starts]], dtype=np.int32)
    if np.prod(width[group_columns].astype(float), axis=1).max() > max_cells:
        return None
    group_start = np.r_[starts, rows.shape[0]].astype(np.int64)
    return (column_start, group_columns, group_start,
            np.ascontiguousarray(rows, dtype=np.int32), order.astype(np.int64))


cdef uint64_t* _grow_table(uint64_t* slots, Py_ssize_t* n_slots, const uint64_t* hashes,
                           Py_ssize_t found, uint64_t tag_mask) noexcept nogil:
    """Double an open-addressing table whose slots hold a row number + 1 (and the bits
    ``tag_mask`` of the row's hash), re-inserting rows ``0..found - 1`` by their
    ``hashes``; the old table is freed.  NULL when out of memory (the old one kept)."""
    cdef Py_ssize_t size = 2 * n_slots[0], r
    cdef uint64_t mask = size - 1, pos
    cdef uint64_t* grown = <uint64_t*>calloc(size, sizeof(uint64_t))
    if grown == NULL:
        return NULL
    for r in range(found):
        pos = hashes[r] & mask
        while grown[pos] != 0:
            pos = (pos + 1) & mask
        grown[pos] = (hashes[r] & tag_mask) | <uint64_t>(r + 1)
    free(slots)
    n_slots[0] = size
    return grown


cdef inline uint64_t _row_hash(const int32_t* row, Py_ssize_t d) noexcept nogil:
    """Hash of the ``d`` codes of one row (two codes per multiply, then mixed)."""
    cdef uint64_t h = <uint64_t>d * <uint64_t>0x9e3779b97f4a7c15
    cdef Py_ssize_t j = 0
    while j + 1 < d:
        h = (h ^ ((<uint64_t><uint32_t>row[j]) | ((<uint64_t><uint32_t>row[j + 1]) << 32))) \
            * <uint64_t>0xff51afd7ed558ccd
        h ^= h >> 29
        j += 2
    if j < d:
        h = (h ^ <uint64_t><uint32_t>row[j]) * <uint64_t>0xff51afd7ed558ccd
    return mix64(h)


cdef inline bint _same_row(const int32_t* a, const int32_t* b, Py_ssize_t d) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(d):
        if a[j] != b[j]:
            return False
    return True


def distinct_codes(const int32_t[:, ::1] codes, Py_ssize_t lo, Py_ssize_t hi,
                   Py_ssize_t max_distinct, const int64_t[::1] weights=None):
    """Distinct rows of ``codes[lo:hi]`` and how many times each occurs.

    One hashing pass; the table and the distinct rows grow with the number
    of distinct rows found (not with the rows read), so a table of few
    distinct rows is read at memory speed.  Safe to call from several
    threads on disjoint ranges (no GIL is held while hashing).

    Parameters
    ----------
    codes : ndarray of int32, shape (n, d)
    lo, hi : int
        The rows read.
    max_distinct : int
        Give up (return None) once more distinct rows than this are found.
    weights : ndarray of int64, shape (n,), optional
        How many times each row counts (default: once), e.g. to merge the
        results of several ranges.

    Returns
    -------
    (rows, counts) or None
        ``rows`` (int32, shape (m, d)) in order of first occurrence and
        ``counts`` (int64, shape (m,)) their occurrences (summed ``weights``).
    """
    cdef Py_ssize_t d = codes.shape[1], u, found = 0, capacity = 1024
    cdef const int64_t* w = NULL
    cdef Py_ssize_t n_slots = 2048, too_many = -1
    cdef uint64_t h, pos, mask, slot, tag
    cdef uint64_t* slots
    cdef uint64_t* grown
    cdef int32_t* rows
    cdef int32_t* more_rows
    cdef int64_t* counts
    cdef int64_t* more_counts
    cdef uint64_t* hashes
    cdef uint64_t* more_hashes
    cdef const int32_t* row
    cdef Py_ssize_t i, r
    cdef bint failed = False
    cdef int32_t[:, ::1] out_view
    cdef int64_t[::1] counts_view
    if not 0 <= lo <= hi <= codes.shape[0]:
        raise ValueError("rows lo..hi are outside the codes")
    max_distinct = min(max_distinct, 0xfffffffe)  # row numbers fit a slot's 32 bits
    if weights is not None:
        if weights.shape[0] != codes.shape[0]:
            raise ValueError("weights must hold one weight per row")
        if codes.shape[0]:
            w = &weights[0]
    if d == 0 or hi == lo:
        total = hi - lo if w == NULL else int(np.asarray(weights)[lo:hi].sum())
        if hi > lo and max_distinct < 1:
            return None
        return (np.zeros((1 if hi > lo else 0, d), dtype=np.int32),
                np.full(1 if hi > lo else 0, total, dtype=np.int64))
    slots = <uint64_t*>calloc(n_slots, sizeof(uint64_t))
    rows = <int32_t*>malloc(capacity * d * sizeof(int32_t))
    counts = <int64_t*>malloc(capacity * sizeof(int64_t))
    hashes = <uint64_t*>malloc(capacity * sizeof(uint64_t))
    if slots == NULL or rows == NULL or counts == NULL or hashes == NULL:
        free(slots); free(rows); free(counts); free(hashes)
        raise MemoryError()
    with nogil:
        mask = n_slots - 1
        for u in range(lo, hi):
            row = &codes[u, 0]
            h = _row_hash(row, d)
            tag = h & <uint64_t>0xffffffff00000000  # slot: tag | (row number + 1)
            pos = h & mask
            while True:
                slot = slots[pos]
                if slot == 0:  # a new distinct row
                    if found == max_distinct:
                        too_many = found
                        break
                    if found == capacity:  # grow the rows
                        capacity *= 2
                        more_rows = <int32_t*>realloc(rows, capacity * d * sizeof(int32_t))
                        more_counts = <int64_t*>realloc(counts, capacity * sizeof(int64_t))
                        more_hashes = <uint64_t*>realloc(hashes, capacity * sizeof(uint64_t))
                        if more_rows != NULL:
                            rows = more_rows
                        if more_counts != NULL:
                            counts = more_counts
                        if more_hashes != NULL:
                            hashes = more_hashes
                        if more_rows == NULL or more_counts == NULL or more_hashes == NULL:
                            failed = True
                            break
                    memcpy(&rows[found * d], row, d * sizeof(int32_t))
                    counts[found] = 1 if w == NULL else w[u]
                    hashes[found] = h
                    slots[pos] = tag | <uint64_t>(found + 1)
                    found += 1
                    if 2 * found > n_slots:  # keep the table at most half full
                        grown = _grow_table(slots, &n_slots, hashes, found,
                                            <uint64_t>0xffffffff00000000)
                        if grown == NULL:
                            failed = True
                            break
                        slots = grown
                        mask = n_slots - 1
                    break
                if (slot & <uint64_t>0xffffffff00000000) == tag:
                    r = <Py_ssize_t>(slot & <uint64_t>0xffffffff) - 1
                    if _same_row(&rows[r * d], row, d):
                        counts[r] += 1 if w == NULL else w[u]
                        break
                pos = (pos + 1) & mask
            if too_many >= 0 or failed:
                break
    try:
        if failed:
            raise MemoryError()
        if too_many >= 0:
            return None
        out_rows = np.empty((found, d), dtype=np.int32)
        out_counts = np.empty(found, dtype=np.int64)
        if found:
            out_view = out_rows
            memcpy(&out_view[0, 0], rows, found * d * sizeof(int32_t))
        counts_view = out_counts
        for i in range(found):
            counts_view[i] = counts[i]
        return out_rows, out_counts
    finally:
        free(slots); free(rows); free(counts); free(hashes)


def distinct_objects(values, Py_ssize_t max_distinct, bint return_codes=True):
    """The distinct objects (by identity) of an object array, by hashing their addresses.

    Cells holding the same object (as a Parquet reader or a categorical's
    values leave them) are read as one; equal objects at different addresses
    stay apart, so the caller merges equal values among the few distinct
    objects only (e.g. with :func:`pandas.factorize`), the same result as on
    every cell.  The objects are not touched (no reference counting, no
    comparison): the hashing runs without the GIL.

    Parameters
    ----------
    values : ndarray of object, shape (n,), contiguous
    max_distinct : int
        Give up (return None) past this many distinct objects.
    return_codes : bool, default=True

    Returns
    -------
    (first, codes) or None
        ``first`` (int64, shape (m,)): the position of every distinct object's
        first cell, in order of first appearance; ``codes`` (int32, shape (n,),
        or None without ``return_codes``): each cell's distinct object.
    """
    if values.dtype != object or values.ndim != 1 or not values.flags.c_contiguous:
        raise ValueError("values must be a contiguous 1-D object array")
    cdef Py_ssize_t n = values.shape[0], u, found = 0, n_slots = 1024, capacity = 512, r
    cdef const uint64_t* cells = <const uint64_t*><size_t>values.ctypes.data
    cdef uint64_t* slots
    cdef int64_t* rows
    cdef uint64_t* grown
    cdef int64_t* more
    cdef uint64_t key, mask, pos, h
    cdef uint64_t* hashes
    cdef uint64_t* more_hashes
    cdef bint failed = False, too_many = False
    cdef bint with_codes = return_codes
    cdef Py_ssize_t i
    cdef int64_t[::1] first_view
    max_distinct = min(max_distinct, 0x7ffffffe)
    codes_arr = np.empty(n if return_codes else 0, dtype=np.int32)
    cdef int32_t[::1] codes = codes_arr
    slots = <uint64_t*>calloc(n_slots, sizeof(uint64_t))  # slot: row number + 1
    rows = <int64_t*>malloc(capacity * sizeof(int64_t))
    hashes = <uint64_t*>malloc(capacity * sizeof(uint64_t))
    if slots == NULL or rows == NULL or hashes == NULL:
        free(slots); free(rows); free(hashes)
        raise MemoryError()
    with nogil:
        mask = n_slots - 1
        for u in range(n):
            key = cells[u]
            h = mix64(key)
            pos = h & mask
            while True:
                r = <Py_ssize_t>slots[pos] - 1
                if r < 0:
                    if found == max_distinct:
                        too_many = True
                        break
                    if found == capacity:
                        capacity *= 2
                        more = <int64_t*>realloc(rows, capacity * sizeof(int64_t))
                        if more != NULL:
                            rows = more
                        more_hashes = <uint64_t*>realloc(hashes, capacity * sizeof(uint64_t))
                        if more_hashes != NULL:
                            hashes = more_hashes
                        if more == NULL or more_hashes == NULL:
                            failed = True
                            break
                    rows[found] = u
                    hashes[found] = h
                    slots[pos] = found + 1
                    r = found
                    found += 1
                    if 2 * found > n_slots:
                        grown = _grow_table(slots, &n_slots, hashes, found, 0)
                        if grown == NULL:
                            failed = True
                            break
                        slots = grown
                        mask = n_slots - 1
                    break
                if cells[rows[r]] == key:
                    break
                pos = (pos + 1) & mask
            if too_many or failed:
                break
            if with_codes:
                codes[u] = <int32_t>r
    try:
        if failed:
            raise MemoryError()
        if too_many:
            return None
        first_arr = np.empty(found, dtype=np.int64)
        first_view = first_arr
        for i in range(found):
            first_view[i] = rows[i]
        return first_arr, (codes_arr if return_codes else None)
    finally:
        free(slots); free(rows); free(hashes)
