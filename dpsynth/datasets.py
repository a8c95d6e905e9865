"""Built-in tables: scikit-learn's handwritten digits with public binning, and a
generated ``people`` table for the CSV tutorial.

The table ships with scikit-learn (no download) and every choice that makes
it ready for synthesis is public information, known without looking at the
records: pixel intensities lie in 0..16 by construction of the data set, and
the digit is one of 0..9.
"""

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.utils import Bunch

__all__ = ["DEMO_PIXELS", "load_demo_table", "make_people"]

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


#: ZIP codes of :func:`make_people`: ten common ones, then rare ones.
_COMMON_ZIPS = ("02139", "02140", "02141", "02142", "02143", "10001", "10002", "10003",
                "94110", "94112")


def make_people(n_samples=5000, random_state=0):
    """Generate the ``people`` table of the CSV tutorial (no real person in it).

    Columns: ``id`` (1..n), ``age`` (integers 18..99), ``sex`` (``F``/``M``),
    ``zip`` (text with leading zeros: ten common ZIP codes and 59 rare ones,
    each held by fewer than five people), ``hours`` (weekly working hours,
    integers, missing for about one person in eight, more often past 65)
    and ``income`` (yearly, two decimals, rising with hours).  Write it with
    ``frame.to_csv("people.csv", index=False)`` or ``dpsynth demo --write-csv
    people.csv``.

    Parameters
    ----------
    n_samples : int, default=5000
    random_state : int, default=0
        The same seed gives the same table on every machine.

    Returns
    -------
    DataFrame
        ``id``, ``age`` and ``hours`` as ``Int64`` (``hours`` with missing
        values), ``sex`` and ``zip`` as text, ``income`` as ``float64``.
    """
    if int(n_samples) < 100:
        raise ValueError(f"n_samples must be at least 100; got {n_samples}.")
    n = int(n_samples)
    rng = np.random.default_rng(random_state)
    age = np.clip(np.round(rng.gamma(4.0, 6.0, n) + 18), 18, 99).astype(np.int64)
    sex = np.where(rng.random(n) < 0.52, "F", "M").astype(object)
    rare = [f"{z:05d}" for z in rng.choice(np.arange(1000, 99999), 59, replace=False)]
    zips = np.asarray(_COMMON_ZIPS, dtype=object)[rng.integers(0, len(_COMMON_ZIPS), n)]
    holders = rng.permutation(n)[:59 * 4]  # each rare code held by 1 to 4 people
    counts = rng.integers(1, 5, 59)
    start = 0
    for code, count in zip(rare, counts):
        zips[holders[start:start + count]] = code
        start += count
    hours = np.clip(np.round(rng.normal(38, 10, n)), 1, 99)
    missing = rng.random(n) < np.where(age > 65, 0.5, 0.08)
    income = np.round(rng.lognormal(9.6, 0.8, n) * (0.3 + hours / 40), 2)
    frame = pd.DataFrame({
        "id": pd.array(np.arange(1, n + 1), dtype="Int64"),
        "age": pd.array(age, dtype="Int64"), "sex": sex, "zip": zips,
        "hours": pd.array(np.where(missing, np.nan, hours), dtype="Float64").astype("Int64"),
        "income": income})
    frame["sex"] = frame["sex"].astype(str)
    frame["zip"] = frame["zip"].astype(str)
    return frame
