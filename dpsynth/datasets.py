"""Built-in demo table: scikit-learn's handwritten digits with public binning.

The table ships with scikit-learn (no download) and every choice that makes
it ready for synthesis is public information, known without looking at the
records: pixel intensities lie in 0..16 by construction of the data set, and
the digit is one of 0..9.
"""

from sklearn.datasets import load_digits
from sklearn.utils import Bunch

__all__ = ["DEMO_PIXELS", "load_demo_table"]

#: Six informative pixels spread over the 8x8 image (fixed in advance, not
#: selected on the data at run time).  Fewer columns keep the per-record
#: contribution bound, and hence the noise, small at ``epsilon=4`` on 1797
#: records; with ten pixels the 2-way marginals are barely better than
#: independent columns.
DEMO_PIXELS = ("pixel_2_5", "pixel_3_2", "pixel_3_4", "pixel_4_2", "pixel_5_3", "pixel_7_5")


def load_demo_table():
    """Load the demo table: 6 pixels of the digits data set and the digit.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with

        frame : DataFrame of shape (1797, 7)
            The pixels (``int64``, intensities 0..16) and the ``digit``
            (``int64``, 0..9).
        bounds : dict
            Public bounds ``{pixel: (0, 16)}`` for
            :class:`~dpsynth.preprocessing.TableEncoder`.
        categories : dict
            Public categories ``{"digit": [0, ..., 9]}``.
        n_bins : int
            Suggested number of bins per pixel (4).
        DESCR : str
            Description of the table.

    Examples
    --------
    >>> from dpsynth.datasets import load_demo_table
    >>> from dpsynth.preprocessing import TableEncoder
    >>> demo = load_demo_table()
    >>> demo.frame.shape
    (1797, 7)
    >>> encoder = TableEncoder(bounds=demo.bounds, categories=demo.categories,
    ...                        n_bins=demo.n_bins)
    """
    digits = load_digits(as_frame=True)
    frame = digits.frame[list(DEMO_PIXELS)].astype("int64")
    frame["digit"] = digits.target.astype("int64").to_numpy()
    description = (
        "Optical recognition of handwritten digits (UCI, bundled with "
        "scikit-learn): 1797 images of 8x8 pixels with intensities 0..16. "
        f"The demo keeps {len(DEMO_PIXELS)} pixels ({', '.join(DEMO_PIXELS)}) "
        "and the digit. Public information: pixel bounds (0, 16) and the "
        "digits 0..9."
    )
    return Bunch(
        frame=frame,
        bounds={name: (0, 16) for name in DEMO_PIXELS},
        categories={"digit": list(range(10))},
        n_bins=4,
        DESCR=description,
    )
