"""Numbers written in a format (``"12.5%"``, ``"$1,234.56"``) in text columns: the public
list of formats, the DP decision that finds one, binning, decoding in the format, the
release file and the CLI."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ks_2samp

from dpsynth import DPAggregates, DPMarginalSynthesizer
from dpsynth.cli import main
from dpsynth.preprocessing import TableEncoder
from dpsynth.schema import Binning
from tests._support import (assert_one_cell_per_record, decision_counts as _decision_counts,
                            skip_unless_text_dtype)
from dpsynth.preprocessing._numeric import OBJECT_CELLS
from dpsynth.utils._temporal import DATE_CELLS
from dpsynth.utils._numbers import (NUMBER_CELLS, NUMBER_FORMATS, format_numbers,
                                    number_cells, parse_formatted)


_EXAMPLES = {  # spellings that parse and write back as they are
    "#%": (("12.5%", "-3.25%", "0.5%"), False, None),
    "$#": (("$1,234.56", "-$5.00", "$0.99", "$1,000,000.10"), False, 2),
    "€#": (("€12", "-€1,234", "€0"), True, None),
    "£#": (("£7.5", "£1,020.25"), False, None),
    "#,###": (("1,234", "-12,500", "523", "1,000,000"), True, None),
    "#.###,##": (("12,5", "-1234,56", "0,125", "7,25"), False, None),
    "# %": (("12.5 %", "-3.25 %", "0.5 %"), False, None),
    "(#,###)": (("(1,234.50)", "1,234.50", "523.25", "(0.50)"), False, 2),
}


def test_formats_parse_and_write_back_in_their_format():
    assert set(_EXAMPLES) == set(NUMBER_FORMATS)
    for fmt, (examples, integer, decimals) in _EXAMPLES.items():
        numbers = parse_formatted(pd.Series(examples, dtype=object), fmt)
        assert not np.isnan(numbers).any(), fmt
        assert format_numbers(numbers, fmt, integer, decimals) == list(examples), fmt
    # the number as written: a percentage is not divided by 100
    assert parse_formatted(pd.Series(["12.5%", "+4%", " 100% "]), "#%").tolist() == \
        [12.5, 4.0, 100.0]
    assert parse_formatted(pd.Series(["$1,234.56", "-$5", "$1234"]), "$#").tolist() == \
        [1234.56, -5.0, 1234.0]
    # exactly the format: other spellings, leading zeros, other symbols and non-texts
    bad = pd.Series(["12.5  %", "%12", "$ 5", "5$", "$-5", "$1,23", "$1,2345", "$05", "05%",
                     "12.5", "USD 5", "$", "%", "", "1e3%", "$inf", None, 12.5, True],
                    dtype=object)
    for fmt in NUMBER_FORMATS:
        # a plain number is a number of "#,###" (one below 1,000 has no separator); to a
        # decimal comma "12.5" is no number (a thousands dot has three digits after it)
        read = {"#,###": 1, "#.###,##": 0, "(#,###)": 1}.get(fmt, 0)
        assert np.isnan(parse_formatted(bad, fmt)).sum() == bad.size - read, fmt
    # thousands separators: in groups of three, a sign before the number
    assert parse_formatted(pd.Series(["1,234.5", "+2,000", "-7", "12345"]),
                           "#,###").tolist() == [1234.5, 2000.0, -7.0, 12345.0]
    assert np.isnan(parse_formatted(pd.Series(["1,23", "1.234,5", "12,3456", "$1,234",
                                               "1,234%", "01,234"]), "#,###")).all()
    assert format_numbers([1020.5, -1234567.0, 5.25], "#,###", False, 2) == \
        ["1,020.50", "-1,234,567.00", "5.25"]
    assert format_numbers([1020.5, 999.25], "#,###", False) == ["1,020.5", "999.25"]
    # currency amounts: thousands separators and the column's decimals; no "-$0.00"
    assert format_numbers([1020.5, -0.001], "$#", False, 2) == ["$1,020.50", "$0.00"]
    assert format_numbers([7.3, 12345.0], "#%", False, 1) == ["7.3%", "12345.0%"]
    assert format_numbers([-3, 1500], "#%", True) == ["-3%", "1500%"]
    # a percentage written with a space (a no-break space too): written back with one
    assert parse_formatted(pd.Series(["78 %", "12.5\u00a0%", "78%", "5  %"]),
                           "# %").tolist()[:2] == [78.0, 12.5]
    assert np.isnan(parse_formatted(pd.Series(["78%", "5  %"]), "# %")).all()
    assert format_numbers([78, 12.5], "# %", True) == ["78 %", "12 %"]
    assert format_numbers([7.25], "# %", False) == ["7.25 %"]


def test_each_field_falls_in_one_number_format_cell():
    fields = pd.Series(["12%", "12.5%", "$5", "-$5.5", "€1,000", "£0.25", "1,234",
                        "-1,234.5", "x", None, "2021-03-04", "12 %", "12.5 %"], dtype=object)
    cells = [NUMBER_CELLS[k] if k >= 0 else None for k in number_cells(fields)]
    assert cells == [("#%", "int"), ("#%", "float"), ("$#", "int"), ("$#", "float"),
                     ("€#", "int"), ("£#", "float"), ("#,###", "int"), ("#,###", "float"),
                     None, None, None, ("# %", "int"), ("# %", "float")]
    # accounting: its negatives in parentheses are its own cells; its positive
    # numbers with separators are "#,###"'s
    accounts = pd.Series(["(1,234)", "(12.5)", "1,234", "((5)", "(5"], dtype=object)
    cells = [NUMBER_CELLS[k] if k >= 0 else None for k in number_cells(accounts)]
    assert cells == [("(#,###)", "int"), ("(#,###)", "float"), ("#,###", "int"), None, None]
    assert parse_formatted(accounts, "(#,###)").tolist()[:3] == [-1234.0, -12.5, 1234.0]
    assert format_numbers([-1234.5, 7.0], "(#,###)", False, 2) == ["(1,234.50)", "7.00"]
    # a decimal comma: its own cells; a field "#,###" reads too is that format's
    commas = pd.Series(["12,5", "-1.234,50", "0,125", "1,234", "12", "1.234"], dtype=object)
    cells = [NUMBER_CELLS[k] if k >= 0 else None for k in number_cells(commas)]
    assert cells == [("#.###,##", "float"), ("#.###,##", "float"), ("#.###,##", "float"),
                     ("#,###", "int"), ("#,###", "int"), ("#,###", "float")]
    assert parse_formatted(commas, "#.###,##").tolist() == [12.5, -1234.5, 0.125, 1.234,
                                                             12.0, 1234.0]
    assert (number_cells(fields.astype("string")) == number_cells(fields)).all()


@pytest.mark.parametrize("bad", ["%", "#", "USD#", "%#", "#%%", ["#%"], 5])
def test_a_malformed_number_format_is_refused_clearly(bad):
    with pytest.raises(ValueError, match="number_format"):
        Binning((0.0, 10.0), False, text_share=1.0, number_format=bad)
    spec = Binning((0.0, 10.0), False, text_share=1.0, number_format="#%").to_json()
    spec["number_format"] = bad
    with pytest.raises(ValueError, match="number_format"):
        Binning.from_json(spec)


def test_a_number_format_needs_a_text_column_and_no_date_format():
    with pytest.raises(ValueError, match="number_format"):
        Binning((0.0, 10.0), False, number_format="$#")
    with pytest.raises(ValueError, match="number_format"):
        Binning((0.0, 10.0), True, text_share=1.0, date_format="%Y-%m-%d",
                number_format="$#")
    with pytest.raises(ValueError, match=r"must be one of \['#%', '\$#', '€#', '£#', '#,###', "
                                         r"'#.###,##', '# %', '\(#,###\)'\]"):
        parse_formatted(pd.Series(["5%"]), "percent")


@pytest.mark.parametrize("dtype", [object, "string"])
def test_one_record_changes_one_cell_of_the_decision_by_one(monkeypatch, dtype):
    # sensitivity 1: the number, date and number-format cells are one partition, so
    # that the cells of the formats cost nothing beyond the decision's histogram
    base = pd.Series(["12.5%"] * 20 + ["$5"] * 4 + ["12"] * 5 + ["n/a"] * 3, dtype=dtype)
    before = _decision_counts(monkeypatch, base)
    assert before.size == 5 + len(DATE_CELLS) + len(NUMBER_CELLS) + len(OBJECT_CELLS)
    extras = ["12%", "12.5%", "$5", "-$5.25", "€1,000", "£3", "12.5 %", "$1,2345", "05%",
              "1,234", "-1,234.5", "1,23", "1.234,5",
              "12", "2021-03-04", "x", "1e3%"]
    if dtype is object:
        extras += [7, 2.5, True]
    assert_one_cell_per_record(monkeypatch, base, extras, dtype)


def test_number_format_columns_are_decided_by_dp():
    from dpsynth.preprocessing._numeric import decide_numeric

    rng = np.random.default_rng(0)
    rates = np.round(rng.gamma(6.0, 2.0, 3000), 2)
    cases = {"#%": ([f"{v}%" for v in rates], "float"),
             "$#": ([f"-${-v:,}" if v < 0 else f"${v:,}"
                     for v in rng.integers(-500, 40000, 3000)], "int"),
             "€#": ([f"€{v:,.2f}" for v in rng.lognormal(6, 1, 3000)], "float"),
             "£#": ([f"£{v}" for v in rng.integers(0, 90, 3000)], "int")}
    for fmt, (fields, kind) in cases.items():
        for dtype in (object, "string"):
            found, spend, share, (texts, scale), got = decide_numeric(
                pd.Series(fields, dtype=dtype), 1.0, rng)
            assert (found, got, share) == (kind, fmt, 1.0), (fmt, dtype)
            assert texts <= 3.09 * scale + 1.0
            assert spend.rho == 1.0  # the one histogram's budget
    # codes beside the numbers: texts of their own, up to half the fields
    coded = pd.Series([f"{v}%" for v in rates[:2000]] + ["n/a"] * 1000, dtype=object)
    found, _, _, (texts, scale), fmt = decide_numeric(coded, 1.0, rng)
    assert (found, fmt) == ("float", "#%") and abs(texts - 1000) < 10 * scale
    # plain numbers stay plain numbers (no format)
    plain = pd.Series([str(v) for v in rates], dtype=object)
    assert decide_numeric(plain, 1.0, rng)[0::4] == ("float", None)
    # thousands separators: the format, with the plain numbers below 1,000 its numbers
    # too, wherever they are fewer or more than half the fields (spreadsheet exports)
    for scale in (5.0, 8.0):
        counts = np.round(rng.lognormal(scale, 1.5, 3000)).astype(int)
        grouped = pd.Series([f"{v:,}" for v in counts], dtype=object)
        found, _, share, (texts, scale_), fmt = decide_numeric(grouped, 1.0, rng)
        assert (found, fmt, share) == ("int", "#,###", 1.0), scale
        assert texts <= 3.09 * scale_ + 1.0
    amounts = pd.Series([f"{v:,.2f}" for v in rng.lognormal(7, 1, 3000)], dtype=object)
    assert decide_numeric(amounts, 1.0, rng)[0::4] == ("float", "#,###")
    # plain numbers above 1,000 without separators are plain numbers
    assert decide_numeric(pd.Series([str(v) for v in rng.integers(0, 10**6, 3000)]),
                          1.0, rng)[0::4] == ("int", None)


def test_a_column_mixing_formats_below_the_threshold_stays_text():
    from dpsynth.preprocessing._numeric import decide_numeric

    rng = np.random.default_rng(1)
    # three formats of a third each: none holds half the fields
    mixed = pd.Series(["12%", "$5", "€3.5"] * 1000, dtype=object)
    assert decide_numeric(mixed, 1.0, rng)[0::4] == (None, None)
    # words with a few percentages: texts
    words = pd.Series(["red", "green", "blue"] * 900 + ["5%"] * 300, dtype=object)
    assert decide_numeric(words, 1.0, rng)[0] is None
    # a handful of amounts is below the noise at a small budget
    assert decide_numeric(pd.Series(["$5"] * 5, dtype=object), 0.01, rng)[0] is None


def test_a_small_text_column_is_not_given_a_number_format_by_noise():
    from dpsynth.preprocessing._numeric import decide_numeric

    words = pd.Series(np.random.default_rng(0).choice(["red", "green", "blue"], 300),
                      dtype=object)
    rho = 1 / (2 * 13.6 ** 2)
    found = [decide_numeric(words, rho, np.random.default_rng(seed))
             for seed in range(300)]
    assert all(f[0] is None and f[4] is None for f in found)


def _money(n=4000, seed=3):
    rng = np.random.default_rng(seed)
    rate = np.round(rng.gamma(6.0, 2.2, n), 2)
    util = np.round(np.clip(rng.normal(55, 25, n), 0, 120), 1)
    util_text = pd.Series([f"{v}%" for v in util], dtype=object)
    util_text[rng.random(n) < 0.05] = None
    amount = np.round(rng.lognormal(7.0, 1.0, n), 2)
    fee = rng.choice([0, 0, 0, 5, 10, 25], n) * rng.integers(1, 40, n)
    visits = np.round(rng.lognormal(7.0, 1.5, n)).astype(int)  # a third below 1,000
    return pd.DataFrame({
        "int_rate": [f"{v}%" for v in rate],
        "revol_util": util_text,
        "amount": [f"-${-v:,.2f}" if v < 0 else f"${v:,.2f}"
                   for v in amount * np.where(rng.random(n) < 0.1, -1, 1)],
        "fee": [f"€{v:,}" if v else "none" for v in fee],
        "grade": rng.choice(list("ABCDE"), n),
        "visits": [f"{v:,}" for v in visits],
        # prices with a decimal comma, as European spreadsheets write them
        "price": [f"{v:.2f}".replace(".", ",") for v in np.round(rng.gamma(3.0, 9.0, n), 2)],
    }).astype(object)


_FORMATS = {"int_rate": "#%", "revol_util": "#%", "amount": "$#", "fee": "€#",
            "visits": "#,###", "price": "#.###,##"}


def _ks(a, b):
    return ks_2samp(a[~np.isnan(a)], b[~np.isnan(b)]).statistic


@pytest.mark.parametrize("dtype", [object, "str", "string"])
def test_number_format_columns_come_back_in_their_format_with_their_distribution(dtype):
    skip_unless_text_dtype(dtype)
    X = _money()
    if dtype != object:
        X = X.astype(dtype)
    synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(X)
    out = synth.sample(random_state=1)
    assert len(out) == pytest.approx(len(X), rel=0.03)
    assert out.dtypes.to_dict() == X.dtypes.to_dict()  # text columns stay text
    spent = [m.name for m in synth.privacy_spent_.mechanisms]
    schema = synth.aggregates_.schema
    for name, fmt in _FORMATS.items():
        binning = schema[list(X.columns).index(name)].binning
        assert binning.number_format == fmt and binning.is_text and binning.date_format is None
        assert binning.integer == (name in ("fee", "visits"))
        assert f"numeric column {name!r}: numeric or text" in spent
        assert f"numeric column {name!r}: bins and shape" in spent
        real, fake = parse_formatted(X[name], fmt), parse_formatted(out[name], fmt)
        assert _ks(real, fake) <= 0.05, name
        # every field is a number in the format, a released code or missing
        present = out[name].notna().to_numpy()
        assert (~np.isnan(fake) | ~present | out[name].isin(binning.codes).to_numpy()).all()
    assert schema[list(X.columns).index("fee")].binning.codes == ("none",)
    assert (out["fee"] == "none").mean() == pytest.approx((X["fee"] == "none").mean(),
                                                          abs=0.03)
    assert out["revol_util"].isna().mean() == pytest.approx(0.05, abs=0.02)
    assert out["int_rate"].notna().all() and out["amount"].notna().all()
    # written as the format writes them: decimals of the binning, separators for amounts
    decimals = schema[list(X.columns).index("amount")].binning.decimals
    amounts = out["amount"].astype(object)
    assert amounts.str.fullmatch(r"-?\$\d{1,3}(,\d{3})*" + (rf"\.\d{{{decimals}}}"
                                                             if decimals else "")).all()
    assert out["int_rate"].astype(object).str.fullmatch(r"\d+(\.\d+)?%").all()
    assert out["visits"].astype(object).str.fullmatch(r"\d{1,3}(,\d{3})*").all()
    assert out["price"].astype(object).str.fullmatch(r"\d+(,\d+)?").all()
    assert (parse_formatted(out["amount"], "$#") < 0).mean() == pytest.approx(0.1, abs=0.03)


def test_the_format_cells_add_no_spend():
    # the same table with plain numbers: the same mechanisms and the same rho
    X = _money(n=1500)
    plain = X.assign(int_rate=X["int_rate"].str.rstrip("%"))
    spends = []
    for frame in (X, plain):
        synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(frame)
        spends.append([(m.name, m.rho) for m in synth.privacy_spent_.mechanisms
                       if m.name.startswith("numeric column 'int_rate': numeric or text")])
    assert spends[0] == spends[1] and len(spends[0]) == 1


def test_a_number_format_column_round_trips_through_a_release_file(tmp_path):
    X = _money(n=2000)
    synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(X)
    synth.aggregates_.save(tmp_path / "r.json")
    document = json.loads((tmp_path / "r.json").read_text())
    columns = {c["name"]: c.get("binning", {}) for c in document["schema"]["columns"]}
    assert {name: columns[name].get("number_format") for name in columns} == {
        **_FORMATS, "grade": None}
    loaded = DPAggregates.load(tmp_path / "r.json")
    assert loaded.schema == synth.aggregates_.schema
    codes = TableEncoder.from_schema(loaded.schema).transform(X)
    binning = loaded.schema[0].binning
    assert (codes[:, 0] < binning.n_numbers).all()  # every rate is a number code
    again = DPMarginalSynthesizer.from_aggregates(loaded).sample(50, random_state=0)
    assert not np.isnan(parse_formatted(again["int_rate"], "#%")).any()


def test_a_release_file_without_the_field_still_loads(tmp_path):
    # a file written before number formats: a text column of plain numbers, and a
    # binning object without "number_format"
    X = pd.DataFrame({"n": [str(v) for v in np.random.default_rng(0).integers(0, 99, 800)],
                      "g": ["a", "b"] * 400}).astype(object)
    synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(X)
    synth.aggregates_.save(tmp_path / "old.json")
    text = (tmp_path / "old.json").read_text()
    assert "number_format" not in text
    loaded = DPAggregates.load(tmp_path / "old.json")
    assert loaded.schema[0].binning.number_format is None
    assert loaded.schema == synth.aggregates_.schema
    spec = {"edges": [0, 10], "integer": True, "inverse": "uniform", "clip": False,
            "text_share": 1.0, "codes": [], "other": False}
    assert Binning.from_json(spec).number_format is None


def test_conditions_on_a_number_format_column_take_numbers_or_its_spelling():
    X = _money(n=3000)
    synth = DPMarginalSynthesizer(epsilon=4.0, random_state=0).fit(X)
    out = synth.sample(200, conditions={"amount": ("$100", "$1,000.00")}, random_state=0)
    amounts = parse_formatted(out["amount"], "$#")
    assert ((amounts >= 100) & (amounts <= 1000)).all()
    out = synth.sample(50, conditions={"int_rate": (10, 12.5), "fee": "none"},
                       random_state=0)
    rates = parse_formatted(out["int_rate"], "#%")
    assert ((rates >= 10) & (rates <= 12.5)).all() and (out["fee"] == "none").all()
    with pytest.raises(ValueError, match="numbers written as '\\$#'"):
        synth.sample(5, conditions={"amount": "100 USD"})


def test_cli_keeps_percentages_and_amounts(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    X = _money(n=4000, seed=5)
    X.to_csv("data.csv", index=False)
    code = main(["synthesize", "data.csv", "-o", "out.csv", "--seed", "1",
                 "--aggregates", "release.json"])
    _, err = capsys.readouterr()
    assert code == 0, err
    formats = {c["name"]: c.get("binning", {}).get("number_format") for c in
               json.loads((tmp_path / "release.json").read_text())["schema"]["columns"]}
    assert formats == {**_FORMATS, "grade": None}
    real = pd.read_csv("data.csv", dtype=str, keep_default_na=False)
    fake = pd.read_csv("out.csv", dtype=str, keep_default_na=False)
    assert len(fake) == pytest.approx(len(real), rel=0.03)
    for name, fmt in _FORMATS.items():
        a, b = parse_formatted(real[name], fmt), parse_formatted(fake[name], fmt)
        assert _ks(a, b) <= 0.05, name
        assert set(fake[name][np.isnan(b)]) <= {"", "none"}, name
    # --where takes a number or the column's spelling, and ranges of either
    code = main(["sample", "release.json", "-n", "100", "-o", "where.csv", "--seed", "2",
                 "--where", "amount=$100:$1,000", "--where", "int_rate=10:15%"])
    _, err = capsys.readouterr()
    assert code == 0, err
    where = pd.read_csv("where.csv", dtype=str, keep_default_na=False)
    amounts = parse_formatted(where["amount"], "$#")
    rates = parse_formatted(where["int_rate"], "#%")
    assert ((amounts >= 100) & (amounts <= 1000)).all()
    assert ((rates >= 10) & (rates <= 15)).all()
    code = main(["sample", "release.json", "-n", "10", "-o", "bad.csv",
                 "--where", "amount=100 USD"])
    _, err = capsys.readouterr()
    assert code == 1 and "written as '$#'" in err


def test_a_column_with_a_decimal_comma_is_decided_by_dp():
    from dpsynth.preprocessing._numeric import decide_numeric

    rng = np.random.default_rng(3)
    values = np.round(rng.gamma(3.0, 9.0, 3000), 2)
    prices = pd.Series([f"{v:.2f}".replace(".", ",") for v in values], dtype=object)
    prices[:400] = [str(int(v)) for v in values[:400]]  # whole numbers written plain
    found = decide_numeric(prices, 1.0, np.random.default_rng(0))
    assert (found[0], found[4]) == ("float", "#.###,##")
    # the same numbers with a decimal point stay plain numbers
    plain = pd.Series([f"{v:.2f}" for v in values], dtype=object)
    assert decide_numeric(plain, 1.0, np.random.default_rng(0))[0::4] == ("float", None)


def _through_cli(tmp_path, columns):
    """``dpsynth synthesize`` of a CSV file of ``columns`` (seed 0); its output as text."""
    pd.DataFrame(columns).to_csv(tmp_path / "t.csv", index=False)
    assert main(["synthesize", str(tmp_path / "t.csv"), "-o", str(tmp_path / "o.csv"),
                 "--seed", "0"]) == 0
    return pd.read_csv(tmp_path / "o.csv", dtype=str)


def test_a_percentage_written_with_a_space_comes_back_in_its_format(tmp_path):
    # "78 %" (French, German): the whole column came back as its released values
    # and the other label (18% of the records) before the format was listed
    rng = np.random.default_rng(0)
    n = 3000
    share = rng.uniform(0, 100, n).round()
    out = _through_cli(tmp_path, {"score": [f"{v:.0f} %" for v in share],
                                  "kind": rng.choice(["a", "b"], n)})
    assert out["score"].str.fullmatch(r"-?\d+ %").all()
    fake = parse_formatted(out["score"], "# %")
    assert ks_2samp(share, fake).statistic <= 0.05


def test_accounting_negatives_in_parentheses_come_back_in_parentheses(tmp_path):
    # a balance exported with its negatives in parentheses: those 20% came back as
    # the other label before the format was listed
    rng = np.random.default_rng(0)
    n = 3000
    amount = np.round(rng.lognormal(7, 1.2, n), 2) * np.where(rng.random(n) < 0.2, -1, 1)
    out = _through_cli(tmp_path, {"balance": format_numbers(amount, "(#,###)", False, 2),
                                  "kind": rng.choice(["a", "b"], n)})
    assert out["balance"].str.fullmatch(r"\(?[\d,]+\.\d\d\)?").all()
    fake = parse_formatted(out["balance"], "(#,###)")
    assert np.isfinite(fake).all()
    assert abs((fake < 0).mean() - (amount < 0).mean()) < 0.03
    assert ks_2samp(amount, fake).statistic <= 0.05
