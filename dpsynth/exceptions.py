"""Warnings and errors specific to dpsynth."""

__all__ = ["NoisyReleaseWarning", "PrivacyLeakWarning", "ResourceLimitError",
           "ResourceLimitWarning"]


class PrivacyLeakWarning(UserWarning):
    """A data-dependent choice was made without paying privacy budget for it.

    Raised only when the user explicitly opts in to such a choice (for example
    ``bounds="data"``).  Turn it into an error for a strict mode with
    ``warnings.simplefilter("error", PrivacyLeakWarning)``.
    """


class ResourceLimitError(ValueError):
    """A computation would exceed its resource limit (e.g. ``max_memory``).

    Raised before the work starts, with the estimate, the limit and what to
    change in the message.  The estimate uses public facts only.
    """


class ResourceLimitWarning(UserWarning):
    """A release was reduced to fit its resource limit (e.g. fewer lengths).

    The message states the estimate, the limit and what to change.
    """


class NoisyReleaseWarning(UserWarning):
    """A release is dominated by its noise: too few records for its budget.

    Its synthetic records then reproduce little of the table (e.g. columns
    whose values the release could not publish come back as their other
    value only).  The message uses public facts and DP outputs only: the
    budget, the noise of the measurements, the DP record count and the
    values released.
    """
