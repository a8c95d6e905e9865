"""What a release may declare and what a data-derived universe costs.

:data:`DEFAULT_DELTA` / :func:`check_delta` and the limits on ``epsilon`` and
``delta`` hold for every release; :func:`first_level_threshold` is the DP set
union's threshold (Gopi, Mahabadi and Yekhanin, Algorithm 1, level 1) that
makes publishing the values found in the data cost ``delta / 2``.
"""

import math
import numbers
import warnings

from scipy.special import ndtri

__all__ = ["DEFAULT_DELTA", "MAX_DELTA", "MAX_EPSILON", "check_delta", "warn_large_delta",
           "first_level_threshold"]


#: Default ``delta``: a constant fixed before seeing any data.  A delta
#: chosen from the data (SDS's ``1 / (n ln n)`` with ``n`` a DP count) is not
#: the delta that holds.  ``1e-9`` (private-pgm's AIM default) is far below
#: ``1 / n`` for any table that fits in memory (the synthesizer warns the data
#: owner when ``delta >= 1 / n``), so the default needs no adjusting to the
#: table's size, which is private.
DEFAULT_DELTA = 1e-9

#: Largest ``delta`` accepted: beyond it the guarantee means little (a
#: mechanism may then publish a record outright with probability ``delta``).
MAX_DELTA = 1e-2
# The largest epsilon accepted: far beyond any meaningful privacy (the noise is
# already negligible), and below where the conversions to zCDP and back overflow.
MAX_EPSILON = 1e15


def check_delta(delta):
    """``delta`` as a float in ``(0, MAX_DELTA]``; ``None`` gives :data:`DEFAULT_DELTA`."""
    if delta is None:
        return DEFAULT_DELTA
    if (isinstance(delta, bool) or not isinstance(delta, numbers.Real)
            or not math.isfinite(delta) or not 0 < delta <= MAX_DELTA):
        raise ValueError(
            f"delta must be a number in (0, {MAX_DELTA:g}] (and far below 1 / n_records for a "
            f"meaningful guarantee), or None for the fixed default {DEFAULT_DELTA:g}; got "
            f"{delta!r}.")
    return float(delta)


def warn_large_delta(delta, n_records, stacklevel=3):
    """Warn the data owner when ``delta`` is not below ``1 / n_records`` (a DP count):
    a guarantee with such a delta allows publishing a record outright."""
    if delta >= 1.0 / n_records:
        warnings.warn(
            f"delta={delta:g} is not below 1 / n_records_ (the DP record count): a "
            "guarantee with such a delta allows publishing a record outright; pass a "
            "smaller delta.", UserWarning, stacklevel=stacklevel)


def first_level_threshold(sigma, contribution_bound, delta):
    """``rho_1 = 1 + sigma * sqrt(Delta_1) * PhiInv((1 - delta/2)**(1/Delta_1))``.

    With this threshold, each of the at most ``Delta_1`` attributes unique to
    one record crosses it with probability ``q = 1 - (1 - delta/2)**(1/Delta_1)``,
    so some crossing happens with probability exactly ``delta/2`` (DP set
    union, Gopi et al. Algorithm 1).  ``q`` is computed with ``expm1/log1p``
    for precision at small ``delta``.
    """
    q = -math.expm1(math.log1p(-delta / 2.0) / contribution_bound)
    return 1.0 + sigma * math.sqrt(contribution_bound) * float(-ndtri(q))
