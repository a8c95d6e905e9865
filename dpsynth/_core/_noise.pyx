# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Exact samplers of the discrete Laplace and discrete Gaussian distributions.

Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy"
(NeurIPS 2020), Algorithms 1-3, in integer arithmetic only:

- ``Bernoulli(exp(-num/den))`` (Algorithm 1) from ``Bernoulli(num/den)``
  and ``Bernoulli(1/K)`` draws, each an exact uniform integer below the
  denominator (rejection sampling on random bits);
- the discrete Laplace ``P(y) ∝ exp(-|y| s / t)`` (Algorithm 2) from a
  uniform ``U < t`` accepted with ``Bernoulli(exp(-U/t))`` and a geometric
  number of ``Bernoulli(exp(-1))`` successes;
- the discrete Gaussian ``P(y) ∝ exp(-y**2 / (2 sigma**2))`` (Algorithm 3) by
  rejection from the discrete Laplace of scale ``t = 2**tau >= sigma``,
  accepting ``Y`` with probability ``exp(-(|Y| t - sigma**2)**2 / (2 sigma**2 t**2))``.

``sigma**2 = S * 2**e`` is a dyadic rational (the caller rounds the float
``sigma**2`` up to one, :func:`dpsynth.mechanisms.dyadic_variance`), so the
acceptance exponent is the exact fraction ``a**2 / den`` with
``a = |Y| 2**(tau - p) - S 2**(e - p)``, ``p = min(tau, e)`` and
``den = S 2**(e + 2 tau + 1 - 2 p)``; ``den`` stays below ``2**62`` (checked)
and ``a**2`` is formed in 64-bit integers when it fits, otherwise with
Python's unbounded integers (a rare far-tail proposal), so every output is an
exact draw.  Floating point is never used.

Random bits come from a numpy ``BitGenerator`` (``random_raw``), drawn in
blocks of 64-bit words and consumed in a fixed order: the same generator state
gives the same samples, whatever the data.  The one deviation from exactness:
a discrete Laplace draw whose geometric part exceeds ``2**62 / t`` (probability
below ``exp(-2**20)`` for the scales used) is redrawn instead of overflowing.
"""

from libc.stdint cimport int64_t, uint64_t

cdef uint64_t LIMIT = (<uint64_t>1) << 62


cdef inline int _bit_length(uint64_t x) noexcept:
    """Number of bits of ``x`` (0 for 0), by binary search over halving shifts."""
    cdef int n = 0
    cdef int shift = 32
    while shift:
        if x >> shift:
            x >>= shift
            n += shift
        shift >>= 1
    return n + <int>x


cdef class BitSource:
    """Random bits of a numpy ``BitGenerator``, consumed in a fixed order."""

    cdef object bitgen
    cdef object buffer
    cdef const uint64_t[::1] words
    cdef Py_ssize_t pos
    cdef Py_ssize_t block
    cdef uint64_t cache
    cdef int cached

    def __cinit__(self, bitgen, Py_ssize_t block=256):
        self.bitgen = bitgen
        self.block = block
        self.pos = block
        self.cached = 0
        self.cache = 0

    cdef int _refill(self) except -1:
        self.buffer = self.bitgen.random_raw(self.block)
        self.words = self.buffer
        self.pos = 0
        return 0

    cdef uint64_t bits(self, int k) except? 0xFFFFFFFFFFFFFFFF:
        """``k`` (1..63) uniform random bits."""
        cdef uint64_t out
        if self.cached < k:
            if self.pos >= self.block:
                self._refill()
            self.cache = self.words[self.pos]
            self.pos += 1
            self.cached = 64
        out = self.cache & (((<uint64_t>1) << k) - 1)
        self.cache >>= k
        self.cached -= k
        return out

    cdef uint64_t below(self, uint64_t n) except? 0xFFFFFFFFFFFFFFFF:
        """Uniform integer in ``0..n-1`` (``1 <= n <= 2**62``), by rejection."""
        cdef int k
        cdef uint64_t x
        if n <= 1:
            return 0
        k = _bit_length(n - 1)
        while True:
            x = self.bits(k)
            if x < n:
                return x

    cdef int bernoulli(self, uint64_t num, uint64_t den) except -1:
        """``Bernoulli(num / den)``, ``num <= den <= 2**62``.

        Compares a uniform binary fraction with ``num / den`` bit by bit
        (exact; two random bits on average).
        """
        cdef uint64_t digit
        if num >= den:
            return 1
        if num == 0:
            return 0
        if den <= 64:  # a small denominator: one short rejection draw
            return 1 if self.below(den) < num else 0
        while True:  # next binary digit of num/den: num < den < 2**62, so 2 num fits
            num <<= 1
            digit = 1 if num >= den else 0
            if digit:
                num -= den
            if self.bits(1) != digit:
                return <int>digit  # random bit below the digit: U < num/den
            if num == 0:
                return 0  # num/den's expansion ended: U >= num/den

    cdef int bernoulli_exp_fraction(self, uint64_t num, uint64_t den) except -1:
        """``Bernoulli(exp(-num/den))`` for ``0 <= num <= den`` (CKS Algorithm 1, gamma <= 1)."""
        cdef uint64_t k = 1
        while True:  # A ~ Bernoulli(gamma / k) = Bernoulli(1/k) and Bernoulli(num/den)
            if not self.bernoulli(1, k):
                break
            if not self.bernoulli(num, den):
                break
            k += 1
        return <int>(k & 1)

    cdef int bernoulli_exp(self, uint64_t whole, uint64_t num, uint64_t den) except -1:
        """``Bernoulli(exp(-(whole + num/den)))`` (CKS Algorithm 1, gamma > 1)."""
        cdef uint64_t i
        for i in range(whole):
            if not self.bernoulli_exp_fraction(1, 1):
                return 0
        return self.bernoulli_exp_fraction(num, den)

    cdef int64_t discrete_laplace(self, uint64_t t, uint64_t s) except? -1:
        """One draw of ``P(y) ∝ exp(-|y| s / t)`` (CKS Algorithm 2)."""
        cdef uint64_t u, v, x, y
        cdef uint64_t vmax = LIMIT // t
        while True:
            u = self.below(t)
            if not self.bernoulli_exp_fraction(u, t):
                continue
            v = 0
            while self.bernoulli_exp_fraction(1, 1):
                v += 1
                if v > vmax:
                    break
            if v > vmax:
                continue
            x = u + t * v
            y = x // s
            if self.bits(1):
                if y == 0:
                    continue
                return -<int64_t>y
            return <int64_t>y

    def raw_bits(self, int k):
        """``k`` random bits (for tests)."""
        return self.bits(k)


def discrete_laplace(BitSource source, int64_t[::1] out, uint64_t t, uint64_t s):
    """Fill ``out`` with exact draws of ``P(y) ∝ exp(-|y| s / t)``.

    ``1 <= t <= 2**62`` and ``s >= 1``: the discrete Laplace of scale ``t / s``.
    """
    cdef Py_ssize_t i
    if t < 1 or t > LIMIT or s < 1:
        raise ValueError("discrete_laplace needs 1 <= t <= 2**62 and s >= 1.")
    for i in range(out.shape[0]):
        out[i] = source.discrete_laplace(t, s)


cdef object _below_big(BitSource source, object n):
    """Uniform integer below ``n`` (any size) by rejection on random bits."""
    cdef int k = (n - 1).bit_length()
    cdef int take
    while True:
        x = 0
        left = k
        while left > 0:
            take = left if left < 62 else 62
            x = (x << take) | source.bits(take)
            left -= take
        if x < n:
            return x


cdef int _bernoulli_exp_fraction_big(BitSource source, object num, object den) except -1:
    """``Bernoulli(exp(-num/den))``, ``0 <= num <= den`` of any size."""
    k = 1
    while True:
        if not source.bernoulli(1, k):
            break
        if num < den and (num == 0 or _below_big(source, den) >= num):
            break
        k += 1
    return k & 1


cdef int _bernoulli_exp_rational(BitSource source, object num, object den) except -1:
    """``Bernoulli(exp(-num/den))`` for Python integers ``num >= 0``, ``den >= 1``."""
    whole, rest = divmod(num, den)
    while whole > 0:  # each step stops with probability 1 - 1/e
        if not source.bernoulli_exp_fraction(1, 1):
            return 0
        whole -= 1
    if den < LIMIT:
        return source.bernoulli_exp_fraction(<uint64_t>rest, <uint64_t>den)
    return _bernoulli_exp_fraction_big(source, rest, den)


def discrete_gaussian(BitSource source, int64_t[::1] out, const uint64_t[::1] S,
                      const int64_t[::1] e, const int64_t[::1] tau):
    """Fill ``out[i]`` with an exact draw of the discrete Gaussian of ``sigma**2 = S[i] * 2**e[i]``.

    ``tau[i] >= 0`` with ``t = 2**tau[i] >= sigma`` is the scale of the
    discrete Laplace proposal.  The acceptance test runs in 64-bit integers
    when its denominator and ``a**2`` fit, else with Python integers (exact,
    slower).
    """
    cdef Py_ssize_t i, n = out.shape[0]
    cdef int p, shift_y, shift_s, shift_den, tau_i
    cdef uint64_t t, den, ay, sterm, a, whole, num
    cdef int64_t y
    cdef bint fast
    if S.shape[0] != n or e.shape[0] != n or tau.shape[0] != n:
        raise ValueError("discrete_gaussian: one S, e and tau per output.")
    for i in range(n):
        tau_i = <int>tau[i]
        p = tau_i if tau_i < e[i] else <int>e[i]
        shift_y = tau_i - p       # a = |Y| 2**shift_y - S 2**shift_s
        shift_s = <int>e[i] - p
        shift_den = <int>e[i] + 2 * tau_i + 1 - 2 * p
        if tau_i < 0 or tau_i > 61 or S[i] < 1 or shift_den < 0:
            raise ValueError("discrete_gaussian: sigma**2 = S * 2**e out of the supported range.")
        den_py = int(S[i]) << shift_den
        sterm_py = int(S[i]) << shift_s
        fast = den_py < LIMIT and sterm_py < ((<uint64_t>1) << 31) and shift_y < 31
        den = <uint64_t>den_py if fast else 1
        sterm = <uint64_t>sterm_py if fast else 0
        t = (<uint64_t>1) << tau_i
        while True:
            y = source.discrete_laplace(t, 1)
            ay = <uint64_t>(y if y >= 0 else -y)
            if fast and ay < ((<uint64_t>1) << (31 - shift_y)):
                ay <<= shift_y   # < 2**31: a**2 fits in 62 bits
                a = ay - sterm if ay >= sterm else sterm - ay
                whole = (a * a) // den
                num = (a * a) - whole * den
                if source.bernoulli_exp(whole, num, den):
                    break
            else:
                a_py = (int(ay) << shift_y) - sterm_py
                if _bernoulli_exp_rational(source, a_py * a_py, den_py):
                    break
        out[i] = y



def exponential_select(BitSource source, object gaps, object num, object den,
                       const uint64_t[::1] lower, const int64_t[::1] index):
    """Exact draw of ``j`` with ``P[j] ∝ exp(-x[index[j]])``, ``x[c] = gaps[c] * num / den``.

    ``gaps`` are non-negative integers (one per class ``c``; indexable,
    e.g. an int64 or object array), ``num >= 0`` and ``den >= 1`` integers,
    and ``lower[c] <= x[c]`` integer lower bounds (any, e.g. from a
    floating-point estimate on the safe side: they only speed things up).
    Rejection from the uniform proposal: ``j`` uniform below ``len(index)``,
    accepted with ``Bernoulli(exp(-x))`` = ``lower`` draws of
    ``Bernoulli(exp(-1))`` then one of ``exp(-(x - lower))`` in exact
    integer arithmetic (CKS Algorithm 1), so the accepted ``j`` has exactly
    the asked distribution.  Some ``x`` must be 0 (the best candidate): the
    expected number of proposals is then at most ``len(index)``.
    """
    cdef Py_ssize_t n = index.shape[0], n_classes = lower.shape[0]
    cdef Py_ssize_t j, c
    cdef uint64_t w, i
    cdef bint ok
    if n < 1 or <uint64_t>n > LIMIT:
        raise ValueError("exponential_select needs 1 <= len(index) <= 2**62.")
    if len(gaps) != n_classes or den < 1 or num < 0:
        raise ValueError("exponential_select: one gap per class, num >= 0 and den >= 1.")
    for j in range(n):
        if index[j] < 0 or index[j] >= n_classes:
            raise ValueError("exponential_select: index out of range.")
    while True:
        j = <Py_ssize_t>source.below(<uint64_t>n)
        c = index[j]
        w = lower[c]
        ok = True
        i = 0
        while i < w:  # Bernoulli(exp(-lower)): lower draws of Bernoulli(exp(-1))
            if not source.bernoulli_exp_fraction(1, 1):
                ok = False
                break
            i += 1
        if not ok:
            continue
        rest = int(gaps[c]) * num - int(w) * den
        if rest < 0:
            raise ValueError("exponential_select: lower exceeds the exponent.")
        if _bernoulli_exp_rational(source, rest, den):
            return j
