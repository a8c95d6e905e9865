"""The decimals a column of decimal numbers is written with: a DP decision
(``decide_written_decimals``) that decoded values keep, in the Python API and the
CLI; declared decimals win and cost nothing."""

import numpy as np
import pandas as pd
import pytest

from dpsynth import DPMarginalSynthesizer
from dpsynth.cli import main
from dpsynth.preprocessing import TableEncoder
from dpsynth.preprocessing._numeric import (WRITTEN_DECIMALS, _below_precision, _zero_cell,
                                            binning_places, decide_written_decimals,
                                            decimals_needed, range_grid)
from dpsynth.schema import Binning


def _decimals_of(series):
    """The most decimals any value of ``series`` is written with (as pandas writes it)."""
    texts = series.dropna().map(lambda v: np.format_float_positional(v, trim="-"))
    return int(texts.str.partition(".")[2].str.len().max())


def _amounts(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "salary": np.round(rng.lognormal(10.5, 0.6, n), 2),  # cents of tens of thousands
        "rate": np.round(rng.uniform(0, 3, n), 2),  # two decimals below 3
        "score": rng.normal(0, 1, n),  # full precision
        "group": rng.choice(["a", "b", "c"], n)})


def test_decimals_needed_reads_values_as_written():
    values = np.array([0.0, 3.0, 0.5, 1.25, 61085.44, 0.1 + 0.2, 1e-7, 0.123456, np.inf,
                       -2.5])
    assert decimals_needed(values).tolist() == [0, 0, 1, 2, 2, 1, WRITTEN_DECIMALS + 1, 6,
                                                WRITTEN_DECIMALS + 1, 1]


def test_decimals_needed_reads_single_precision_values_as_written():
    # a float32 column holds 0.28 as 0.2800000011920929 once widened to double
    single = np.array([0.221, 3.9, 0.28, 12.5, 61085.44], dtype=np.float32)
    assert decimals_needed(single.astype(np.float64), single=True).tolist() == [
        3, 1, 2, 1, 2]
    # the same digits as text of a double column are its values, bit for bit
    assert decimals_needed(np.array([0.2800000011920929, 3.90000009536743])).tolist() == [
        WRITTEN_DECIMALS + 1] * 2
    # double-precision values keep all their decimals
    assert decimals_needed(np.array([1234567.891, 0.2210001, 16777217.5])).tolist() == [
        3, WRITTEN_DECIMALS + 1, 1]


def test_the_decision_finds_the_most_decimals_that_many_values_need():
    rng = np.random.default_rng(0)
    cents = np.round(rng.uniform(0, 1e5, 5000), 2)
    found, _, spends = decide_written_decimals("x", cents, None, rho=0.01,
                                               rng=np.random.default_rng(1))
    assert found == 2
    assert spends[0].name == "numeric column 'x': written decimals"
    assert dict(spends[0].params)["sensitivity"] == 1 and spends[0].rho == 0.01
    # a few values with more decimals (under the noise) do not raise it
    odd = cents.copy()
    odd[:5] += 0.001
    assert decide_written_decimals("x", odd, None, rho=0.01,
                                   rng=np.random.default_rng(1))[0] == 2
    # one decimal, with missing values; weights count records
    tenths = np.where(rng.random(5000) < 0.2, np.nan, np.round(rng.uniform(0, 50, 5000), 1))
    assert decide_written_decimals("x", tenths, None, rho=0.01,
                                   rng=np.random.default_rng(2))[0] == 1
    assert decide_written_decimals("x", np.array([0.5, 0.25]), np.array([3000.0, 10.0]),
                                   rho=0.01, rng=np.random.default_rng(3))[0] == 1
    # full precision, or too few numbers for the noise: the default rule (None)
    assert decide_written_decimals("x", rng.normal(size=5000), None, rho=0.01,
                                   rng=np.random.default_rng(4))[0] is None
    assert decide_written_decimals("x", cents[:20], None, rho=0.001,
                                   rng=np.random.default_rng(5))[0] is None


def test_cells_below_the_precision_are_those_that_decode_to_zero():
    grid = range_grid(False)
    below = _below_precision(2)
    assert not below[_zero_cell(False)]
    inner = np.flatnonzero(below)
    assert np.all(np.abs(grid[inner]) <= 0.005) and np.all(np.abs(grid[inner + 1]) <= 0.005)
    # the next cells out hold values of 0.005 and more (or less than -0.005)
    assert grid[inner.max() + 2] > 0.005 and grid[inner.min() - 1] < -0.005


def test_decimal_columns_come_back_at_their_written_decimals():
    X = _amounts()
    synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(X)
    S = synth.sample(random_state=0)
    assert _decimals_of(S["salary"]) == 2  # cents kept (not four significant digits)
    assert _decimals_of(S["rate"]) == 2  # not 1.513
    assert _decimals_of(S["score"]) > 2  # the default rule
    assert S.dtypes.to_dict() == X.dtypes.to_dict()
    names = [m.name for m in synth.privacy_spent_.mechanisms]
    assert {f"numeric column {c!r}: written decimals" for c in ("salary", "rate", "score")} \
        <= set(names)
    assert sum(m.rho for m in synth.privacy_spent_.mechanisms) == \
        pytest.approx(synth.privacy_spent_["rho"])
    X_before = X.copy()
    # declared decimals win and spend nothing on the decision
    declared = DPMarginalSynthesizer(epsilon=4.0, random_state=0,
                                     encoder=TableEncoder(decimals={"salary": 0})).fit(X)
    names = [m.name for m in declared.privacy_spent_.mechanisms]
    assert "numeric column 'salary': written decimals" not in names
    assert "numeric column 'rate': written decimals" in names
    assert _decimals_of(declared.sample(random_state=0)["salary"]) == 0
    pd.testing.assert_frame_equal(X, X_before)  # the input is not modified


def test_a_mostly_zero_column_finds_its_other_amounts_above_its_precision():
    # 94% zeros and ~240 amounts in cents beside six columns that take the budget:
    # each octave of the amounts is below the noise, and the cells far below a cent
    # no longer compete with them for the range (it came back at magnitudes of 1e-6,
    # or all 0, at 4 of these 12 seeds when they did)
    good = 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        n = 4000
        fee = np.where(rng.random(n) < 0.06, np.round(rng.exponential(15.0, n), 2), 0.0)
        X = pd.DataFrame({"fee": fee, "kind": rng.choice(list("abcd"), n)})
        for k in range(6):
            X[f"x{k}"] = np.round(rng.normal(50.0, 10.0, n), 1)
        S = DPMarginalSynthesizer(epsilon=2.0, random_state=seed).fit(X).sample(
            random_state=seed)
        real, fake = X["fee"][X["fee"] > 0], S["fee"][S["fee"] > 0]
        good += bool(fake.size and 0.5 <= fake.median() / real.median() <= 2.0)
    assert good >= 11


def test_the_cli_keeps_cents_in_a_currency_column(tmp_path):
    X = _amounts(3000, seed=1)
    X["salary"] = [f"${v:,.2f}" for v in X["salary"]]
    data, out = tmp_path / "data.csv", tmp_path / "out.csv"
    X.to_csv(data, index=False)
    assert main(["synthesize", str(data), "-o", str(out), "--seed", "0"]) == 0
    S = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert S["salary"].str.fullmatch(r"-?\$[\d,]+\.\d\d").all()
    assert S["rate"].str.partition(".")[2].str.len().max() == 2


def _binning(decimals, points=(), counts=None):
    return Binning((0.0, 10.0, 20.0), False, "uniform", True, frequent=points,
                   decimals=decimals, counts=counts)


def test_the_shares_of_decimals_are_those_of_the_values_decoded_in_intervals():
    cells = ((900.0, 3.0, 2100.0, -4.0, 2.0, 0.0, 1.0, -3.0), 10.0)
    # cells under their noise count nothing; the last cell takes the finer ones
    assert binning_places(cells, _binning(2)) == pytest.approx((0.3, 0.0, 0.7))
    assert binning_places(cells, _binning(1)) == pytest.approx((0.3, 0.7))
    # more decimals than the cells tell (a point value of ten): the values needing
    # more than six are in the last place
    many = ((900.0, 0.0, 2100.0, 0.0, 0.0, 0.0, 0.0, 500.0), 10.0)
    assert binning_places(many, _binning(10)) == pytest.approx(
        (0.3 * 3000 / 3500, 0, 0.7 * 3000 / 3500) + (0,) * 7 + (500 / 3500,))
    # a released point value (0: 880 noisy records) decodes as itself: its records
    # leave the cell of whole numbers, and what is left is under its noise
    counts = ((1.0, 1.0, 880.0), (1.0, 1.0, 100.0))
    assert binning_places(cells, _binning(2, (0.0,), counts)) is None
    # a point value of two decimals leaves the whole numbers in their cell
    counts = ((1.0, 1.0, 600.0), (1.0, 1.0, 100.0))
    assert binning_places(cells, _binning(2, (2.25,), counts)) == pytest.approx(
        (900 / 2400, 0.0, 1500 / 2400))
    assert binning_places(None, _binning(2)) is None
    assert binning_places(cells, _binning(None)) is None


def test_places_are_written_to_a_release_and_checked():
    binning = Binning((0.0, 1.0), False, "uniform", True, decimals=2, places=(0.5, 0, 0.5))
    assert Binning.from_json(binning.to_json()) == binning
    assert Binning.from_json(binning.to_json()).places == (0.5, 0.0, 0.5)
    for bad in [(0.5, 0.5), (-1.0, 1.0, 1.0), (0.0, 0.0, 0.0), ("a", 1, 1)]:
        with pytest.raises(ValueError, match="places"):
            Binning((0.0, 1.0), False, "uniform", True, decimals=2, places=bad)
    with pytest.raises(ValueError, match="places"):
        Binning((0.0, 1.0), True, "uniform", True, places=(1.0,))


def _survey(n=4000, seed=0, dtype=np.float64):
    """A mother's years of schooling, whole numbers with 11% imputed at the mean
    (10.25), and a housing-expense ratio of two decimals, a third with four."""
    rng = np.random.default_rng(seed)
    weights = np.array([1, 1, 1, 2, 3, 4, 6, 6, 12, 7, 8, 7, 38, 6, 5, 4, 10, 2, 2], float)
    years = rng.choice(np.arange(19), n, p=weights / weights.sum()).astype(float)
    years[rng.random(n) < 0.11] = 10.25
    ratio = np.round(rng.normal(0.27, 0.05, n), 2)
    fine = rng.random(n) < 0.33
    ratio[fine] = np.round(ratio[fine] + rng.uniform(-0.005, 0.005, fine.sum()), 4)
    return pd.DataFrame({"momed": years.astype(dtype), "hir": ratio.astype(dtype),
                         "deny": rng.choice(["yes", "no"], n, p=[0.12, 0.88])})


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_whole_numbers_and_two_decimal_values_come_back_beside_a_few_finer_ones(dtype):
    X = _survey(dtype=dtype)
    X_before = X.copy()
    synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(X)
    S = synth.sample(random_state=0)
    pd.testing.assert_frame_equal(X, X_before)
    assert S.dtypes.to_dict() == X.dtypes.to_dict()
    for name in ("momed", "hir"):
        column = next(c for c in synth.aggregates_.schema.columns if c.name == name)
        assert column.binning.places is not None
    real, fake = (frame["momed"].astype(np.float64) for frame in (X, S))
    # the whole numbers that are not point values keep their shares
    points = next(c for c in synth.aggregates_.schema.columns if c.name == "momed").binning.points
    rest = [v for v in range(19) if v not in points and (real == v).mean() > 0.02]
    assert rest
    for value in rest:
        assert abs((fake == value).mean() - (real == value).mean()) < 0.03
    assert abs((fake == fake.round()).mean() - (real == real.round()).mean()) < 0.05
    # the ratio's two-decimal values keep theirs (each 2-8% of the records)
    real, fake = (decimals_needed(frame["hir"].astype(np.float64).to_numpy())
                  for frame in (X, S))
    assert abs((fake <= 2).mean() - (real <= 2).mean()) < 0.08
    common = X["hir"].astype(np.float64).round(4).value_counts(normalize=True).head(5)
    shares = S["hir"].astype(np.float64).round(4).value_counts(normalize=True)
    assert (shares.reindex(common.index).fillna(0) > 0.5 * common).all()


def test_values_written_with_single_precision_digits_come_back_as_written(tmp_path):
    # a file exported from float32 data (3.20000004768372): its point masses come
    # back bit for bit, as a comparison of the two files reads them
    rng = np.random.default_rng(1)
    n = 3000
    rate = rng.choice(np.array([3.2, 3.1, 4.3, 3.9, 1.8], dtype=np.float32), n,
                      p=[0.4, 0.2, 0.15, 0.15, 0.1])
    data, out = tmp_path / "data.csv", tmp_path / "out.csv"
    with open(data, "w") as handle:  # as R writes doubles: 15 significant digits
        handle.write("uria,deny\n")
        for r, d in zip(rate.astype(np.float64), rng.choice(["yes", "no"], n)):
            handle.write(f"{r:.15g},{d}\n")
    assert "3.20000004768372" in data.read_text()
    assert main(["synthesize", str(data), "-o", str(out), "--seed", "0"]) == 0
    real, fake = (pd.read_csv(path)["uria"] for path in (data, out))
    for value, share in real.value_counts(normalize=True).items():
        assert abs((fake == value).mean() - share) < 0.03
