"""Table encoding and privacy-preserving binning of numeric columns."""

from ._discretizer import DPKBinsDiscretizer
from ._encoder import TableEncoder

__all__ = ["DPKBinsDiscretizer", "TableEncoder"]
