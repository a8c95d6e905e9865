"""Resource estimates of a release, from public facts only.

A DP-marginals release materialises every candidate combination of a length
``k`` (an int32 row, a hash-table slot pair, a count, its noise).  Before a
length is computed its candidate count is bounded from facts that are public
at that point, so that a fit never starts an allocation it cannot finish:

- before any DP step: the number of columns, ``reporting_length`` and the
  declared domains (declared categories, bin counts, boolean dtypes), which
  bound the candidates of every length whose columns are all declared
  (:func:`public_worst_case`); the values of undeclared columns are private and
  are not used;
- before length ``k >= 2``: the combinations released at length ``k - 1``
  (a DP output), whose apriori joins are exactly the rows the candidate
  generator walks (:func:`join_bound`, an upper bound of the candidates).

Memory figures are estimates of the kernels' peak (see :func:`level_bytes`).
"""

import math
import os

import numpy as np

__all__ = ["available_memory", "basis_bytes", "default_max_memory", "format_bytes",
           "join_bound", "level_bytes", "public_worst_case", "time_class"]

#: Candidates a level processes per second on one core (hash table, noise,
#: thresholds; measured: 10 million in about 2 s on a 2020 laptop core).
_CANDIDATES_PER_SECOND = 5e6

#: Bytes held per candidate of length ``k`` at the peak of a level, besides
#: ``4 k`` for the candidate row: the packed key and value (16) and their
#: concatenated copies (16), the hash table (capacity 2-4x keys, 16 bytes a
#: slot: 64), the count (8), the noise, noisy and rounded values (24), masks.
_BYTES_PER_CANDIDATE = 130


#: Bytes per cell of an ``n x n`` matrix at the peak of building a column's
#: orthonormal contrast basis (:func:`~dpsynth.model.residuals.contrast_basis`):
#: the Helmert matrix, QR's copy and factors, and the tensor products that use
#: it (measured: about 540 MB for 3,000 codes, 4.1 GB for 10,000).
_BYTES_PER_BASIS_CELL = 48


def basis_bytes(n_codes):
    """Estimated peak bytes of the workload release's basis of a column of ``n_codes``
    codes (dense ``n x (n - 1)`` floats; building it takes ``O(n**3)`` time)."""
    return float(n_codes) ** 2 * _BYTES_PER_BASIS_CELL


def level_bytes(n_candidates, k):
    """Estimated peak bytes of a level with ``n_candidates`` candidates of length ``k``."""
    return float(n_candidates) * (4 * k + _BYTES_PER_CANDIDATE)


def time_class(n_candidates):
    """Rough duration of a level with ``n_candidates`` candidates, as words."""
    seconds = float(n_candidates) / _CANDIDATES_PER_SECOND
    for limit, words in ((1, "under a second"), (60, "seconds"), (3600, "minutes"),
                         (86400, "hours")):
        if seconds < limit:
            return words
    return "days"


def available_memory():
    """Bytes of RAM available now (``MemAvailable``), or ``None`` if unknown."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def default_max_memory():
    """Half the available RAM (8 GiB when it cannot be read)."""
    available = available_memory()
    return 0.5 * available if available else 8.0 * 2**30


def format_bytes(n_bytes):
    """``1.5 GiB``-style text of a byte count."""
    n_bytes = float(n_bytes)
    if not math.isfinite(n_bytes):
        return "unlimited"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n_bytes < 1024 or unit == "PiB":
            return f"{n_bytes:.3g} {unit}"
        n_bytes /= 1024


def public_worst_case(domain_sizes, reporting_length):
    """Most candidates of each length ``k = 1..R`` over columns of known domains.

    Parameters
    ----------
    domain_sizes : sequence of int or None
        Public number of codes of each column (``None``: not public).
    reporting_length : int

    Returns
    -------
    list of float
        ``out[k-1]``: the sum over the k-subsets of the columns with a public
        domain of the product of their sizes (the elementary symmetric
        polynomial): a lower bound of the worst case of the whole table, and
        its exact worst case when every domain is public.
    """
    known = [float(s) for s in domain_sizes if s is not None]
    e = [1.0] + [0.0] * reporting_length
    for size in known:
        for k in range(reporting_length, 0, -1):
            e[k] += e[k - 1] * size
    return e[1:]


def join_bound(previous, column_of):
    """Candidates of length ``k`` the apriori join of ``previous`` can produce.

    ``previous`` holds the released ``(k-1)``-combinations as rows of sorted
    ids, rows in lexicographic order (as the release keeps them); two rows
    join when they share their first ``k-2`` ids and their last ids lie in
    different columns.  The count is exact for the join and an upper bound of
    the candidates (which also need every other sub-combination released).
    """
    previous = np.asarray(previous)
    m = previous.shape[0]
    if m < 2:
        return 0
    last_column = np.asarray(column_of)[previous[:, -1]].astype(np.int64)
    if previous.shape[1] > 1:
        prefix_change = np.any(previous[1:, :-1] != previous[:-1, :-1], axis=1)
    else:
        prefix_change = np.zeros(m - 1, dtype=bool)
    run_change = prefix_change | (last_column[1:] != last_column[:-1])

    def pairs(change):
        starts = np.flatnonzero(np.concatenate([[True], change, [True]]))
        sizes = np.diff(starts).astype(np.float64)
        return float(np.sum(sizes * (sizes - 1) / 2))

    return int(pairs(prefix_change) - pairs(run_change))
