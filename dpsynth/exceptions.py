"""Warnings and errors specific to dpsynth."""

__all__ = ["PrivacyLeakWarning"]


class PrivacyLeakWarning(UserWarning):
    """A data-dependent choice was made without paying privacy budget for it.

    Raised only when the user explicitly opts in to such a choice (for example
    ``bounds="data"``).  Turn it into an error for a strict mode with
    ``warnings.simplefilter("error", PrivacyLeakWarning)``.
    """
