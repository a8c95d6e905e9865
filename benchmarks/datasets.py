"""Benchmark datasets, prepared as all-categorical tables.

The raw files live in the project's ``shared`` folder, next to the repository
(``<repo>/../shared``), or wherever the ``DPSYNTH_SHARED`` environment variable
points. They are read in place and never copied into the repository.

Every loader returns a :class:`pandas.DataFrame` whose columns are of ``object``
dtype and hold strings, with ``NaN`` for a missing value, so that callers decide
how missing values are encoded. Numeric columns are binned with fixed, public
edges (documented per loader), never with edges derived from the data.
"""

from functools import partial
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

_NIST_DIR = Path("data") / "nist-diverse-communities-ma"
_ADULT_DIR = Path("data") / "adult-uci"
_PUMS_DIR = Path("data") / "pums-smartnoise"
_ADULT_PGM_DIR = Path("data") / "adult-pgm"


def shared_dir():
    """Return the folder holding the shared benchmark data.

    Returns
    -------
    pathlib.Path
        ``$DPSYNTH_SHARED`` if set, else ``<repo>/../shared``.

    Raises
    ------
    FileNotFoundError
        If the folder does not exist.
    """
    env = os.environ.get("DPSYNTH_SHARED")
    path = Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared"
    if not path.is_dir():
        raise FileNotFoundError(
            f"Benchmark data folder not found: {path}. Set DPSYNTH_SHARED to the "
            "folder that contains data/nist-diverse-communities-ma and data/adult-uci."
        )
    return path


def _bin(values, edges, labels):
    """Bin numbers into labelled intervals ``[edges[i], edges[i + 1])``.

    Parameters
    ----------
    values : pandas.Series
        Numbers, ``NaN`` for missing.
    edges : sequence of float
        Increasing bin edges; every non-missing value must lie in
        ``[edges[0], edges[-1])``.
    labels : sequence of str
        One label per bin.

    Returns
    -------
    pandas.Series
        ``object`` dtype, a label per value, ``NaN`` where the value is missing.
    """
    numbers = pd.to_numeric(values)
    present = numbers.notna()
    outside = present & ((numbers < edges[0]) | (numbers >= edges[-1]))
    if outside.any():
        raise ValueError(
            f"{values.name}: {int(outside.sum())} value(s) outside the public range "
            f"[{edges[0]}, {edges[-1]})"
        )
    codes = np.searchsorted(edges, numbers[present].to_numpy(), side="right") - 1
    out = pd.Series(np.nan, index=values.index, dtype=object, name=values.name)
    out[present] = np.asarray(labels, dtype=object)[codes]
    return out


def _int_bins(edges):
    """Labels ``"lo-hi"`` (inclusive) for integer bins, or ``"v"`` for width 1.

    Parameters
    ----------
    edges : sequence of int
        Increasing edges of half-open bins ``[edges[i], edges[i + 1])``.

    Returns
    -------
    list of str
    """
    return [
        str(lo) if hi - lo == 1 else f"{lo}-{hi - 1}" for lo, hi in zip(edges[:-1], edges[1:])
    ]


def _read_int_binned(path, edges):
    """A CSV file of the shared data read as text, integer columns binned by ``edges``.

    ``edges`` maps a column to the edges of its half-open integer bins
    (labels from :func:`_int_bins`); every column comes back as ``object``.
    """
    df = pd.read_csv(shared_dir() / path, dtype=str, keep_default_na=False)
    for column, column_edges in edges.items():
        df[column] = _bin(df[column], column_edges, _int_bins(column_edges))
    return df.astype(object)


def _check_range(dictionary, column, edges):
    """Check that the data dictionary's public range lies within the bin edges."""
    values = dictionary[column]["values"]
    numbers = [values["min"], values["max"]]
    numbers += [int(key) for key in values if key.lstrip("-").isdigit()]
    if min(numbers) < edges[0] or max(numbers) >= edges[-1]:
        raise ValueError(f"{column}: public range changed, bins need updating")


def load_nist_ma(year=2019):
    """Load the NIST Diverse Communities MA 2019 excerpt as 21 categorical columns.

    ``year=2018`` reads NIST's control set instead: the 2018 sample of the
    same PUMAs (7,244 rows), binned the same way; the benchmarks use it as a
    held-out table (nothing was tuned on it).

    Reads ``data/nist-diverse-communities-ma/ma2019.csv`` (7,634 rows) and its
    ``data_dictionary.json``. ``INDP`` (hundreds of industry codes; ``INDP_CAT``
    keeps the 19 categories) and the sampling weights ``PWGTP`` and ``WGTP`` are
    dropped. The null marker ``N`` becomes ``NaN``. Categorical codes are kept
    as strings (``"1"``, ``"25-00503"``, ...).

    The six numeric columns are binned with edges chosen from the public ranges
    of the data dictionary (checked at load time); labels are inclusive integer
    ranges ``"lo-hi"`` unless stated:

    - ``AGEP`` (0-99): decades, ``0-9`` ... ``90-99`` (10 bins).
    - ``NOC`` (0, 1-19): ``0``, ``1``, ``2``, ``3``, ``4``, ``5-9``, ``10-19`` (7 bins).
    - ``NPF`` (2-20): ``2`` ... ``7``, ``8-9``, ``10-20`` (8 bins).
    - ``DENSITY`` (16.3-52864.7 persons per sq. mile, a PUMA-level value):
      ``[0,1000)``, ``[1000,1500)``, ... steps of 500 up to 4000, then
      ``[4000,5000)``, ``[5000,10000)``, ``[10000,60000)`` (10 bins, labels in
      half-open interval notation). The five MA PUMAs fall into four bins.
    - ``PINCP`` (-9000-1341000 dollars): ``-9000--1``, ``0-9999``,
      ``10000-24999``, ``25000-49999``, ``50000-74999``, ``75000-99999``,
      ``100000-149999``, ``150000-249999``, ``250000-499999``,
      ``500000-1341000`` (10 bins).
    - ``POVPIP`` (0-500, 501 = above 5x poverty line): ``0-49``, ``50-99``,
      ``100-149``, ``150-199``, ``200-299``, ``300-399``, ``400-500``, ``501``
      (8 bins).

    Returns
    -------
    pandas.DataFrame
        7,634 rows, 21 ``object`` columns of strings, ``NaN`` for missing.
    """
    folder = shared_dir() / _NIST_DIR
    dictionary = json.loads((folder / "data_dictionary.json").read_text())
    df = pd.read_csv(
        folder / f"ma{int(year)}.csv", dtype=str, na_values="N", keep_default_na=False
    ).drop(columns=["INDP", "PWGTP", "WGTP"])

    def int_spec(edges):
        return edges, _int_bins(edges)

    density_edges = [0, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 5000, 10000, 60000]
    pincp_edges = [-9000, 0, 10000, 25000, 50000, 75000, 100000, 150000, 250000, 500000, 1341001]
    bins = {
        "AGEP": int_spec(list(range(0, 101, 10))),
        "NOC": int_spec([0, 1, 2, 3, 4, 5, 10, 20]),
        "NPF": int_spec([2, 3, 4, 5, 6, 7, 8, 10, 21]),
        "DENSITY": (
            density_edges,
            [f"[{lo},{hi})" for lo, hi in zip(density_edges[:-1], density_edges[1:])],
        ),
        "PINCP": int_spec(pincp_edges),
        "POVPIP": int_spec([0, 50, 100, 150, 200, 300, 400, 501, 502]),
    }
    for column, (edges, labels) in bins.items():
        _check_range(dictionary, column, edges)
        df[column] = _bin(df[column], edges, labels)
    return df.astype(object)


def load_adult():
    """Load UCI Adult (training split) as 15 categorical columns.

    Reads ``data/adult-uci/adult.csv`` (32,561 rows). The UCI marker ``?`` (in
    ``workclass``, ``occupation`` and ``native-country``) is kept as its own
    value ``"?"``, so this table has no ``NaN``; the NIST loader exercises
    missing values. ``education-num`` is kept as is (16 codes, one-to-one with
    ``education``). The other numeric columns are binned with fixed public edges;
    labels are inclusive integer ranges ``"lo-hi"``:

    - ``age`` (17-90, the survey's extraction filter and top code): ``17-19``,
      then decades ``20-29`` ... ``70-79``, ``80-90`` (8 bins).
    - ``fnlwgt`` (a CPS weight): steps of 50,000 up to 300,000, then
      ``300000-399999``, ``400000-499999``, ``500000-1499999`` (9 bins).
    - ``capital-gain`` (0-99999, top code 99999): ``0``, ``1-999``,
      ``1000-2999``, ``3000-4999``, ``5000-9999``, ``10000-19999``,
      ``20000-49999``, ``50000-99999`` (8 bins).
    - ``capital-loss`` (0-4999): ``0``, ``1-999``, ``1000-1499``,
      ``1500-1999``, ``2000-2499``, ``2500-2999``, ``3000-4999`` (7 bins).
    - ``hours-per-week`` (1-99): ``1-9``, ``10-19``, ``20-29``, ``30-39``,
      ``40``, ``41-49``, ``50-59``, ``60-69``, ``70-99`` (9 bins).

    Returns
    -------
    pandas.DataFrame
        32,561 rows, 15 ``object`` columns of strings.
    """
    return _read_int_binned(_ADULT_DIR / "adult.csv", {
        "age": [17, 20, 30, 40, 50, 60, 70, 80, 91],
        "fnlwgt": [0, 50000, 100000, 150000, 200000, 250000, 300000, 400000, 500000, 1500000],
        "capital-gain": [0, 1, 1000, 3000, 5000, 10000, 20000, 50000, 100000],
        "capital-loss": [0, 1, 1000, 1500, 2000, 2500, 3000, 5000],
        "hours-per-week": [1, 10, 20, 30, 40, 41, 50, 60, 70, 100],
    })


#: Public declarations of Adult's numeric columns (from the UCI/CPS documentation:
#: age 17-90 is the extraction filter and top code, capital-gain is top-coded at
#: 99999, hours-per-week is 1-99), and the point masses a data owner knows of.
ADULT_NUMERIC_BOUNDS = {
    "age": (17, 90),
    "fnlwgt": (0, 1_500_000),
    "education-num": (1, 16),
    "capital-gain": (0, 99_999),
    "capital-loss": (0, 4_999),
    "hours-per-week": (1, 99),
}
ADULT_SPECIAL_VALUES = {"capital-gain": [0], "capital-loss": [0], "hours-per-week": [40]}


def load_adult_numeric():
    """Load UCI Adult (training split) with its numeric columns as integers.

    Reads ``data/adult-uci/adult.csv`` (32,561 rows): the six numeric columns
    (``age``, ``fnlwgt``, ``education-num``, ``capital-gain``,
    ``capital-loss``, ``hours-per-week``) as ``int64``, the others as
    ``object`` strings (``"?"`` kept as a value).  Use with
    :data:`ADULT_NUMERIC_BOUNDS` (public bounds) and
    :data:`ADULT_SPECIAL_VALUES`.

    Returns
    -------
    pandas.DataFrame
    """
    df = pd.read_csv(shared_dir() / _ADULT_DIR / "adult.csv", dtype=str, keep_default_na=False)
    for column in ADULT_NUMERIC_BOUNDS:
        df[column] = df[column].astype(np.int64)
    for column in df.columns:
        if column not in ADULT_NUMERIC_BOUNDS:
            df[column] = df[column].astype(object)
    return df


def load_pums():
    """Load SmartNoise's 1,000-row PUMS sample as 6 categorical columns.

    Reads ``data/pums-smartnoise/PUMS.csv``: a small table (no missing
    values) on which the DP discovery of values costs the most.  ``sex``,
    ``educ``, ``race`` and ``married`` are codes, kept as strings; ``age`` and
    ``income`` are binned with fixed edges inside the public bounds of
    ``PUMS.yaml`` (0-100 and 0-500,000): ``age`` in decades ``0-9`` ...
    ``90-100`` (10 bins), ``income`` as ``0``, ``1-9999``, then steps of
    10,000 to 50,000, ``50000-74999``, ``75000-99999``, ``100000-149999``,
    ``150000-500000`` (10 bins).

    Returns
    -------
    pandas.DataFrame
        1,000 rows, 6 ``object`` columns of strings.
    """
    return _read_int_binned(_PUMS_DIR / "PUMS.csv", {
        "age": [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 101],
        "income": [0, 1, 10000, 20000, 30000, 40000, 50000, 75000, 100000, 150000, 500001],
    })


def load_adult_pgm():
    """Load Private-PGM's discretised Adult (AIM's own benchmark table).

    Reads ``data/adult-pgm/adult.csv`` (48,842 rows, 14 columns, the UCI train
    and test splits combined), integer codes ``0..k-1`` kept as strings. The
    binning is upstream's (equal-width, public): ``age`` 85 bins,
    ``fnlwgt``, ``capital-gain`` and ``capital-loss`` 100 bins,
    ``hours-per-week`` 99, so its 3-way marginals have up to 547,000 cells
    (7.7 million in all), where the other tables' have at most about 11,000.
    There are no missing values (``?`` is its own code).

    Returns
    -------
    pandas.DataFrame
        48,842 rows, 14 ``object`` columns of strings.
    """
    df = pd.read_csv(shared_dir() / _ADULT_PGM_DIR / "adult.csv", dtype=str,
                     keep_default_na=False)
    return df.astype(object)


DATASETS = {"nist_ma": load_nist_ma, "adult": load_adult, "pums": load_pums,
            "adult_pgm": load_adult_pgm, "nist_ma2018": partial(load_nist_ma, year=2018)}


SUBSET_SEED = 7
"""Seed of the random row subsets ``name@rows`` (:func:`load`): a public choice of the
benchmark."""


def split(dataset):
    """The table ``dataset`` (see :func:`load`) and the rows of its source table it
    leaves out: for ``name@rows``, the other rows of ``name`` (index reset), a real
    split held out from anything fitted on the subset; for ``name``, None.

    Raises
    ------
    KeyError
        If ``name`` is not in :data:`DATASETS`.
    """
    name, _, rows = dataset.partition("@")
    if name not in DATASETS:
        raise KeyError(f"unknown dataset {name!r}; choose from {sorted(DATASETS)} "
                       "(optionally as name@rows)")
    real = DATASETS[name]()
    if not rows:
        return real, None
    subset = real.sample(int(rows), random_state=SUBSET_SEED)
    return subset.reset_index(drop=True), real.drop(index=subset.index).reset_index(drop=True)


def load(dataset):
    """The table ``dataset`` of :data:`DATASETS`, or ``name@rows``: a random subset of
    ``rows`` rows of it (drawn with :data:`SUBSET_SEED`, index reset).

    Raises
    ------
    KeyError
        If ``name`` is not in :data:`DATASETS`.
    """
    return split(dataset)[0]


def table_argument(value):
    """``value`` if it names a table :func:`load` knows (``name`` or ``name@rows``), for
    ``argparse``'s ``type=``."""
    import argparse

    name, at, rows = value.partition("@")
    if name not in DATASETS or (at and not (rows.isdigit() and int(rows) > 0)):
        raise argparse.ArgumentTypeError(
            f"{value!r}: expected one of {sorted(DATASETS)}, optionally as name@rows")
    return value
