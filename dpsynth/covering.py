"""Covering designs: sets of ``block``-subsets covering every ``strength``-subset.

The views of both CALM (:mod:`dpsynth.local.calm`) and PriView
(:mod:`dpsynth.release.priview`) are the blocks of a covering design: public
choices made from the number of columns and their cardinalities only.
(:func:`bounded_cover` is the cardinality-aware variant PriView uses on
non-binary tables: blocks bounded by their number of cells, not of points.)

A ``(v, k, t)`` covering design is a family of ``k``-subsets (blocks) of
``{0..v-1}`` such that every ``t``-subset lies in at least one block; the
covering number ``C(v, k, t)`` is the least number of blocks.  CALM's
Algorithm 1 calls it ``CoverDesign(d, k, l)`` (its reference [18] is the La
Jolla Covering Repository of D. Gordon); PriView (Li, Lyu, Su, Yang,
"Differential Privacy: From Theory to Practice", Section 6.3) takes its views
from a covering design.

Where the designs come from (:func:`covering_design` reports it):

``"trivial"``
    ``k >= v`` (one block), ``k == t`` (all ``t``-subsets, ``C(v, t)``
    blocks), ``k == v - 1`` (the ``t + 1`` blocks missing one of ``0..t``:
    a ``t``-set misses at most ``t`` points).  All optimal.
``"steiner"``
    ``t = 3, k = 4, v = 2^r``: the planes ``{a, b, c, a^b^c}`` of the affine
    space AG(r, 2), a Steiner quadruple system with ``C(v, 3) / 4`` blocks,
    the Schoenheim lower bound, so optimal (e.g. ``C(8, 4, 3) = 14``,
    ``C(16, 4, 3) = 140``).
``"table"``
    The designs of :data:`KNOWN_DESIGNS`, solved to proven optimality by an
    integer linear program (HiGHS through :func:`scipy.optimize.milp`) for
    ``v = 8``: ``C(8,3,2)=11, C(8,4,2)=6, C(8,5,2)=4, C(8,6,2)=3, C(8,5,3)=8,
    C(8,6,3)=4, C(8,5,4)=20, C(8,6,4)=7, C(8,6,5)=12`` (and the trivial and
    Steiner ones above).  These agree with the La Jolla repository.
``"greedy"``
    Everything else: a deterministic greedy cover (start each block from the
    first uncovered ``t``-set, add the point that covers most uncovered
    ``t``-sets, ties to the smallest point).  Its size is an upper bound on
    the covering number, not necessarily the optimum (e.g. 82 blocks for
    ``C(16, 5, 3)``, whose Schoenheim lower bound is 61; CALM's Table 2 is
    the same for any value >= 61, see :func:`dpsynth.local.calm_parameters`).
"""

import itertools
import math
from functools import lru_cache

import numpy as np

__all__ = ["covering_design", "covering_number", "schoenheim_bound", "bounded_cover",
           "KNOWN_DESIGNS"]

# (v, k, t) -> blocks; optimal designs from an exact ILP (see the module docstring)
KNOWN_DESIGNS = {
    (8, 3, 2): ((0, 1, 7), (0, 2, 6), (0, 3, 6), (0, 4, 5), (1, 2, 3), (1, 2, 5),
                (1, 4, 6), (2, 4, 7), (3, 4, 6), (3, 5, 7), (5, 6, 7)),
    (8, 4, 2): ((0, 1, 2, 6), (0, 2, 4, 5), (0, 3, 6, 7), (1, 3, 5, 7), (1, 4, 5, 6),
                (2, 3, 4, 7)),
    (8, 5, 2): ((0, 1, 4, 5, 6), (0, 2, 3, 4, 7), (1, 2, 3, 5, 6), (1, 4, 5, 6, 7)),
    (8, 6, 2): ((0, 1, 2, 4, 5, 6), (0, 2, 3, 4, 5, 7), (1, 2, 3, 4, 6, 7)),
    (8, 5, 3): ((0, 1, 2, 4, 7), (0, 1, 3, 5, 7), (0, 1, 4, 5, 6), (0, 2, 3, 5, 6),
                (0, 3, 4, 6, 7), (1, 2, 3, 4, 6), (1, 2, 5, 6, 7), (2, 3, 4, 5, 7)),
    (8, 6, 3): ((0, 1, 2, 3, 4, 5), (0, 1, 3, 4, 6, 7), (0, 2, 4, 5, 6, 7),
                (1, 2, 3, 5, 6, 7)),
    (8, 5, 4): ((0, 1, 2, 3, 5), (0, 1, 2, 4, 5), (0, 1, 2, 5, 6), (0, 1, 2, 5, 7),
                (0, 1, 3, 4, 6), (0, 1, 3, 6, 7), (0, 1, 4, 6, 7), (0, 2, 3, 4, 7),
                (0, 2, 3, 5, 6), (0, 2, 4, 5, 6), (0, 2, 5, 6, 7), (0, 3, 4, 5, 7),
                (1, 2, 3, 4, 6), (1, 2, 3, 6, 7), (1, 2, 4, 5, 6), (1, 2, 4, 6, 7),
                (1, 3, 4, 5, 7), (1, 3, 5, 6, 7), (2, 3, 4, 5, 7), (3, 4, 5, 6, 7)),
    (8, 6, 4): ((0, 1, 2, 3, 4, 6), (0, 1, 2, 4, 5, 7), (0, 1, 3, 4, 5, 6),
                (0, 1, 3, 4, 6, 7), (0, 2, 3, 4, 5, 7), (0, 2, 4, 5, 6, 7),
                (1, 2, 3, 5, 6, 7)),
    (8, 6, 5): ((0, 1, 2, 3, 4, 6), (0, 1, 2, 3, 5, 6), (0, 1, 2, 3, 6, 7),
                (0, 1, 2, 4, 5, 7), (0, 1, 3, 4, 5, 7), (0, 1, 4, 5, 6, 7),
                (0, 2, 3, 4, 5, 7), (0, 2, 4, 5, 6, 7), (0, 3, 4, 5, 6, 7),
                (1, 2, 3, 4, 5, 6), (1, 2, 3, 4, 6, 7), (1, 2, 3, 5, 6, 7)),
}


def _check_args(v, k, t):
    for name, value in (("n_points", v), ("block_size", k), ("strength", t)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer; got {value!r}.")
    if t > k:
        raise ValueError(f"strength ({t}) must be <= block_size ({k}).")
    return int(v), int(k), int(t)


def _steiner_quadruples(v):
    """Planes of AG(r, 2): blocks {a, b, c, a^b^c}."""
    blocks = set()
    for a, b, c in itertools.combinations(range(v), 3):
        blocks.add(tuple(sorted((a, b, c, a ^ b ^ c))))
    return sorted(blocks)


def _greedy(v, k, t):
    tsets = list(itertools.combinations(range(v), t))
    index = {s: i for i, s in enumerate(tsets)}
    covered = np.zeros(len(tsets), dtype=bool)
    blocks = []
    next_uncovered = 0
    while True:
        while next_uncovered < len(tsets) and covered[next_uncovered]:
            next_uncovered += 1
        if next_uncovered == len(tsets):
            break
        block = list(tsets[next_uncovered])
        while len(block) < k:
            best, best_gain = None, -1
            for x in range(v):
                if x in block:
                    continue
                gain = 0
                for sub in itertools.combinations(block, t - 1):
                    if not covered[index[tuple(sorted(sub + (x,)))]]:
                        gain += 1
                if gain > best_gain:
                    best, best_gain = x, gain
            block.append(best)
        block = tuple(sorted(block))
        for sub in itertools.combinations(block, t):
            covered[index[sub]] = True
        blocks.append(block)
    return blocks


@lru_cache(maxsize=256)
def _design(v, k, t):
    if k >= v:
        return (tuple(range(v)),), "trivial"
    if k == t:
        return tuple(itertools.combinations(range(v), t)), "trivial"
    if k == v - 1:
        return tuple(tuple(x for x in range(v) if x != miss) for miss in range(t + 1)), "trivial"
    if t == 1:
        blocks = [tuple(range(s, min(s + k, v))) for s in range(0, v, k)]
        last = blocks[-1]
        if len(last) < k:  # pad the last block with the first points
            blocks[-1] = tuple(sorted(set(last) | set(range(k - len(last)))))
        return tuple(blocks), "trivial"
    if (v, k, t) in KNOWN_DESIGNS:
        return KNOWN_DESIGNS[(v, k, t)], "table"
    if t == 3 and k == 4 and v >= 4 and (v & (v - 1)) == 0:
        return tuple(_steiner_quadruples(v)), "steiner"
    return tuple(_greedy(v, k, t)), "greedy"


def covering_design(n_points, block_size, strength, *, return_source=False):
    """A family of ``block_size``-subsets covering every ``strength``-subset.

    Parameters
    ----------
    n_points : int
        Number of points ``v`` (attributes).
    block_size : int
        Size ``k`` of each block (view / marginal).
    strength : int
        Every ``t``-subset of points lies in some block.
    return_source : bool, default=False
        Also return where the design comes from: ``"trivial"``,
        ``"steiner"``, ``"table"`` (optimal) or ``"greedy"`` (an upper bound).

    Returns
    -------
    blocks : list of tuple of int
        Sorted blocks, each sorted.
    source : str
        Only with ``return_source=True``.

    References
    ----------
    D. M. Gordon, La Jolla Covering Repository; cited as [18] by Zhang et
    al., "CALM", CCS 2018.

    Examples
    --------
    >>> from dpsynth.local import covering_design
    >>> len(covering_design(8, 4, 3))
    14
    """
    v, k, t = _check_args(n_points, block_size, strength)
    if t > v:
        raise ValueError(f"strength ({t}) must be <= n_points ({v}).")
    blocks, source = _design(v, k, t)
    blocks = [tuple(b) for b in blocks]
    return (blocks, source) if return_source else blocks


def covering_number(n_points, block_size, strength):
    """Size of :func:`covering_design` (the covering number where it is known)."""
    return len(covering_design(n_points, block_size, strength))


def schoenheim_bound(v, k, t):
    """Schoenheim's lower bound on the covering number ``C(v, k, t)``."""
    v, k, t = _check_args(v, k, t)
    bound = 1
    for i in range(t - 1, -1, -1):
        bound = math.ceil((v - i) / (k - i) * bound)
    return bound


def bounded_cover(cardinalities, max_cells, strength=2, *, max_size=None):
    """Views of at most ``max_cells`` cells covering every pair (and ``strength``-set).

    The cardinality-aware covering of PriView's views on non-binary tables:
    with ``strength >= 2`` every pair of attributes lies in some view, and so does every
    ``strength``-set whose own table has at most ``max_cells`` cells.  A pair
    whose table alone exceeds ``max_cells`` (two many-valued attributes) is a
    view of its own, the smallest that holds it.  Greedy and deterministic:
    sets are taken largest table first (the many-valued attributes get their
    views first, built around them), and each view grows by the attribute
    that covers the most uncovered sets and still fits (ties: fewest values,
    then smallest index).  When every attribute has the same number of
    values ``c``, the views are the covering design of
    :func:`covering_design` with ``floor(log_c(max_cells))`` attributes per
    view (the book's designs).

    Parameters
    ----------
    cardinalities : sequence of int
        Number of values of each attribute (>= 1).
    max_cells : int
        Cell budget of a view (>= 1).
    strength : int, default=2
        Cover every ``strength``-set that fits in ``max_cells`` cells.
        ``1``: no pair is required; each attribute lies in exactly one view
        (first-fit packing, most values first).
    max_size : int, default=None
        At most this many attributes per view (no limit: ``None``).

    Returns
    -------
    list of tuple of int
        Sorted views, each a sorted tuple of attribute indices.
    """
    cards = [int(c) for c in cardinalities]
    if not cards or min(cards) < 1:
        raise ValueError(f"cardinalities must be positive integers; got {cardinalities!r}.")
    if isinstance(max_cells, bool) or not isinstance(max_cells, (int, np.integer)) \
            or max_cells < 1:
        raise ValueError(f"max_cells must be a positive integer; got {max_cells!r}.")
    d = len(cards)
    if d == 1:
        return [(0,)]
    size = d if max_size is None else max(2, min(int(max_size), d))
    if int(strength) <= 1:
        return _packing(cards, int(max_cells), size)
    t = min(int(strength), size)
    if len(set(cards)) == 1 and cards[0] > 1:
        ell = 1
        while ell < size and cards[0] ** (ell + 1) <= max_cells:
            ell += 1
        if ell >= 2:
            return covering_design(d, ell, min(t, ell))
    return [tuple(b) for b in _bounded_greedy(tuple(cards), int(max_cells), t, size)]


def _packing(cards, max_cells, max_size):
    """Strength 1: each attribute in one view, first fit, most values first."""
    views = []
    for a in sorted(range(len(cards)), key=lambda a: (-cards[a], a)):
        for view in views:
            if len(view) < max_size and math.prod(cards[b] for b in view) * cards[a] <= max_cells:
                view.append(a)
                break
        else:
            views.append([a])
    return sorted(tuple(sorted(v)) for v in views)


@lru_cache(maxsize=64)
def _bounded_greedy(cards, max_cells, t, max_size):
    d = len(cards)
    logc = [math.log(c) for c in cards]
    budget = math.log(max_cells) + 1e-9

    def log_cells(s):
        return sum(logc[a] for a in s)

    required = set(itertools.combinations(range(d), 2))
    for size in range(3, t + 1):
        required |= {s for s in itertools.combinations(range(d), size)
                     if log_cells(s) <= budget}
    order = sorted(required, key=lambda s: (-log_cells(s), len(s), s))
    uncovered = set(required)
    blocks = []
    for start in order:
        if start not in uncovered:
            continue
        block = list(start)
        while len(block) < max_size:
            room = budget - log_cells(block)
            best, best_key = None, None
            for x in range(d):
                if x in block or logc[x] > room:
                    continue
                gain = sum(1 for size in range(2, t + 1)
                           for sub in itertools.combinations(block, size - 1)
                           if tuple(sorted(sub + (x,))) in uncovered)
                if gain == 0:
                    continue
                key = (-gain, cards[x], x)
                if best_key is None or key < best_key:
                    best, best_key = x, key
            if best is None:
                break
            block.append(best)
        block = tuple(sorted(block))
        for size in range(2, min(t, len(block)) + 1):
            for sub in itertools.combinations(block, size):
                uncovered.discard(sub)
        blocks.append(block)
    return tuple(sorted(set(blocks)))
