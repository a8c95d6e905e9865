"""Non-private reference computations shared by the tests (not part of the package)."""

import numpy as np

from dpsynth.release.sds import _run_levels


class _ExactRelease:
    def __call__(self, k, counts, bound):
        keep = counts > 0
        return keep, counts[keep].astype(np.int64), 0.0, 0.0


def exact_marginals(ids, column_of, n_columns, reporting_length):
    """Exact counts of every non-empty k-tuple, k = 1..R (no privacy), by the release's loop."""
    return _run_levels(ids, column_of, n_columns, reporting_length,
                       bound_fn=lambda k, histogram: int(np.flatnonzero(histogram).max(initial=0)),
                       release_fn=_ExactRelease(), public_universe=False, rng=None)
