# Shared C-level helpers of the kernels: packed k-tuple keys, an
# open-addressing hash table over them, and a small deterministic PRNG.
#
# A k-tuple of attribute ids a_0 < a_1 < ... < a_{k-1} (ids in 0..2**bits - 2)
# is packed as sum_i (a_i + 1) << (bits * i); 0 is never a valid key and marks
# an empty slot.  Tuples of different lengths never collide.
from libc.stdint cimport int64_t, uint64_t


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


cdef inline uint64_t rng_next(uint64_t* state) noexcept nogil:
    """splitmix64 generator step."""
    state[0] += <uint64_t>0x9e3779b97f4a7c15
    return mix64(state[0])


cdef inline double rng_uniform(uint64_t* state) noexcept nogil:
    """Uniform double in [0, 1) with 53 random bits."""
    return (rng_next(state) >> 11) * (1.0 / 9007199254740992.0)
