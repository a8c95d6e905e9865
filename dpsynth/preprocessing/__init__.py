"""Table encoding and privacy-preserving binning of numeric columns."""

from ._encoder import TableEncoder

__all__ = ["TableEncoder"]
