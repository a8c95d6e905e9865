# Shared C-level helpers of the kernels, defined once here and used by every
# kernel: packed k-tuple keys, an open-addressing hash table over them, a small
# deterministic PRNG, and the periodic check for signals (Ctrl-C).
#
# A k-tuple of attribute ids a_0 < a_1 < ... < a_{k-1} (ids in 0..2**bits - 2)
# is packed as sum_i (a_i + 1) << (bits * i); 0 is never a valid key and marks
# an empty slot.  Tuples of different lengths never collide.
from libc.stdint cimport int32_t, int64_t, uint64_t

cdef extern from "Python.h":
    # declared without an exception value: the caller decides what to do
    # with the KeyboardInterrupt (or other exception) that a handler sets
    int PyErr_CheckSignals()


cdef enum:
    # elementary steps (table look-ups, values read) between two checks for
    # signals: a check takes the GIL, so it must be rare, yet this much work
    # takes milliseconds
    SIGNAL_CHECK_WORK = 1 << 22


# ---------------------------------------------------------------- keys
cdef inline uint64_t key_add(uint64_t key, int32_t id_, int position, int bits) noexcept nogil:
    """``key`` with ``id_`` packed at ``position`` (see the file header)."""
    return key | ((<uint64_t>(id_ + 1)) << (bits * position))


cdef inline uint64_t pack_key(const int32_t* ids, Py_ssize_t k, int bits) noexcept nogil:
    """Packed key of the sorted tuple ``ids[0..k)``."""
    cdef uint64_t key = 0
    cdef Py_ssize_t i
    for i in range(k):
        key = key_add(key, ids[i], <int>i, bits)
    return key


# ---------------------------------------------------------------- hash table
cdef inline uint64_t mix64(uint64_t x) noexcept nogil:
    """splitmix64 finaliser: a fast, well-mixed 64-bit hash."""
    x = (x ^ (x >> 30)) * <uint64_t>0xbf58476d1ce4e5b9
    x = (x ^ (x >> 27)) * <uint64_t>0x94d049bb133111eb
    return x ^ (x >> 31)


cdef inline int64_t table_find(const uint64_t[::1] slots, const int64_t[::1] values,
                               uint64_t key) noexcept nogil:
    """Value stored under ``key``, or -1 when absent (capacity is a power of 2)."""
    cdef uint64_t mask = slots.shape[0] - 1
    cdef uint64_t i = mix64(key) & mask
    cdef uint64_t slot
    while True:
        slot = slots[i]
        if slot == key:
            return values[i]
        if slot == 0:
            return -1
        i = (i + 1) & mask


# ---------------------------------------------------------------- PRNG
cdef inline uint64_t rng_seed(uint64_t seed) noexcept nogil:
    """Initial state of the generator of ``seed``."""
    return mix64(seed)


cdef inline uint64_t rng_seed_stream(uint64_t seed, uint64_t stream,
                                     uint64_t substream) noexcept nogil:
    """Initial state of stream ``(stream, substream)`` of ``seed`` (e.g. a record and a copy)."""
    return mix64(seed ^ mix64(stream) ^ mix64(~substream))


cdef inline uint64_t rng_next(uint64_t* state) noexcept nogil:
    """splitmix64 generator step."""
    state[0] += <uint64_t>0x9e3779b97f4a7c15
    return mix64(state[0])


cdef inline double rng_uniform(uint64_t* state) noexcept nogil:
    """Uniform double in [0, 1) with 53 random bits."""
    return (rng_next(state) >> 11) * (1.0 / 9007199254740992.0)


# ---------------------------------------------------------------- signals
cdef inline bint check_signals() noexcept nogil:
    """Run the signal handlers now, taking the GIL briefly.

    Returns True when a handler raised (Ctrl-C: ``KeyboardInterrupt``); the
    exception is then set, and the caller must stop, free what it holds and
    return to Python with it (see ``raise_pending``).  Handlers only run in
    the main thread: elsewhere this never fires, and threads stop through
    their caller's stop flag.
    """
    cdef int raised = 0
    with gil:
        raised = PyErr_CheckSignals()
    return raised != 0


cdef inline bint signal_raised(Py_ssize_t* work, Py_ssize_t cost) noexcept nogil:
    """Add ``cost`` steps to ``work``; past ``SIGNAL_CHECK_WORK``, :func:`check_signals`."""
    work[0] += cost
    if work[0] < SIGNAL_CHECK_WORK:
        return False
    work[0] = 0
    return check_signals()


cdef inline int raise_pending(bint interrupted) except -1:
    """With ``interrupted``, propagate the exception a signal handler set (holding the GIL)."""
    return -1 if interrupted else 0
