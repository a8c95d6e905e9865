"""Generated raw tables in the style of the ones users bring (issue #36).

Each generator returns a :class:`MessyTable`: a pandas DataFrame as a user
would hold it (numbers as numbers, text as text, missing values as ``NaN`` or
``None``), the epsilon to run it at, and which column (and value) a classifier
predicts.  The tables mimic the reproductions of issue #36 and the usual
defects of raw CSV exports: many-valued integers, unbounded floats, point
masses, identifiers, dates and percentages stored as text, columns mixing
numbers and words, booleans, constant and all-missing columns, very long
strings, unicode, and tiny tables.  Everything is drawn from a seeded
generator, so a table is the same on every machine.
"""

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["MessyTable", "TABLES", "make"]


@dataclass
class MessyTable:
    """A generated table and how the harness runs and scores it."""

    name: str
    frame: pd.DataFrame
    epsilon: float = 4.0
    target: str = None
    positive: object = None
    notes: str = ""
    numeric: list = field(default_factory=list)
    """Columns scored as numeric (KS, missing share, point masses); the rest are
    scored by 1-way TVD."""
    dates: dict = field(default_factory=dict)
    """Columns of dates written as text, ``{column: strftime format}``: scored as
    numbers (KS of the dates, missing share), as the release bins them; their
    TVD over the spelled values is reported apart."""
    formats: dict = field(default_factory=dict)
    """Columns of numbers written in a format, ``{column: number format}`` (``"#%"``:
    ``"12.5%"``, see ``dpsynth.utils._numbers.NUMBER_FORMATS``): scored as numbers
    (KS of the numbers read in the format, missing share), as the release bins
    them; their TVD over the spelled values is reported apart."""


def _choice(rng, values, p, n):
    p = np.asarray(p, dtype=float)
    return np.asarray(values, dtype=object)[rng.choice(len(values), n, p=p / p.sum())]


def credit_card(n=1319, seed=0):
    """Credit-card applications (AER's CreditCard, in shape): 25% of expenditures
    exactly 0, card approval hinging on it, reports a count with ~80% zeros."""
    rng = np.random.default_rng(seed)
    reports = np.where(rng.random(n) < 0.8, 0, rng.geometric(0.45, n)).clip(0, 14)
    income = np.round(rng.lognormal(1.1, 0.45, n).clip(0.21, 13.5), 4)
    age = np.round(rng.gamma(7.0, 4.8, n).clip(18, 83) + rng.choice([0, 1 / 12, 0.25, 0.5], n), 4)
    owner = _choice(rng, ["no", "yes"], [0.56, 0.44], n)
    selfemp = _choice(rng, ["no", "yes"], [0.93, 0.07], n)
    dependents = rng.poisson(0.99, n).clip(0, 6)
    months = rng.gamma(1.3, 43, n).astype(int).clip(0, 540)
    majorcards = (rng.random(n) < 0.82).astype(int)
    active = rng.poisson(7.0, n) * (rng.random(n) < 0.9)
    logit = 1.8 - 0.9 * reports + 0.3 * (income - 3) + 0.05 * active
    card = rng.random(n) < 1 / (1 + np.exp(-logit))
    spends = card & (rng.random(n) < 0.92)
    expenditure = np.where(spends, np.round(rng.lognormal(5.0, 1.0, n) * (0.5 + income / 6), 6), 0.0)
    share = np.where(spends, expenditure * 12 / (income * 10_000), 0.5 / (income * 10_000))
    frame = pd.DataFrame({
        "card": np.where(card, "yes", "no").astype(object), "reports": reports.astype(np.int64),
        "age": age, "income": income, "share": share, "expenditure": expenditure,
        "owner": owner, "selfemp": selfemp, "dependents": dependents.astype(np.int64),
        "months": months.astype(np.int64), "majorcards": majorcards.astype(np.int64),
        "active": active.astype(np.int64)})
    return MessyTable("credit_card", frame, target="card", positive="yes",
                      numeric=["reports", "age", "income", "share", "expenditure", "dependents",
                               "months", "active"],
                      notes="1,319 rows; expenditure 0 in ~25% of records, card hinges on it")


def _months(rng, n, start=2007, end=2016):
    years = rng.integers(start, end, n)
    names = np.array(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                      "Nov", "Dec"], dtype=object)
    return names[rng.integers(0, 12, n)] + "-" + years.astype(str).astype(object)


def loan(n=5000, seed=1):
    """A lending-club style export: ~50 columns, unbounded floats, ids, dates and
    percentages as text, constant and all-missing columns, long free text."""
    rng = np.random.default_rng(seed)
    grade_i = rng.choice(7, n, p=[0.25, 0.3, 0.2, 0.13, 0.07, 0.03, 0.02])
    grade = np.array(list("ABCDEFG"), dtype=object)[grade_i]
    sub = grade + (rng.integers(1, 6, n)).astype(str).astype(object)
    rate = np.round(6 + 3 * grade_i + rng.normal(0, 1, n).clip(-2, 2), 2)
    amount = (rng.lognormal(9.2, 0.65, n).clip(500, 35_000) // 25 * 25).astype(np.int64)
    term = _choice(rng, [" 36 months", " 60 months"], [0.75, 0.25], n)
    months = np.where(term == " 36 months", 36, 60)
    r = rate / 1200
    installment = np.round(amount * r / (1 - (1 + r) ** -months), 2)
    annual_inc = np.round(rng.lognormal(11.0, 0.55, n), -2)
    annual_inc[rng.random(n) < 0.003] = np.nan
    bad = rng.random(n) < 1 / (1 + np.exp(-(-2.6 + 0.35 * grade_i + 0.6 * (months == 60)
                                               - 0.4 * (annual_inc > 80_000))))
    status = np.where(bad, "Charged Off", "Fully Paid").astype(object)
    paid_share = np.where(bad, rng.beta(2, 3, n), 1.0)
    rec_prncp = np.round(amount * paid_share, 2)
    rec_int = np.round(installment * months * paid_share - amount * paid_share, 2).clip(0)
    late_fee = np.where(rng.random(n) < 0.05, np.round(rng.exponential(15, n), 2), 0.0)
    recoveries = np.where(bad & (rng.random(n) < 0.85), np.round(rng.exponential(500, n), 2), 0.0)
    delinq = np.where(rng.random(n) < 0.85, 0, rng.geometric(0.5, n))
    inq = rng.poisson(0.9, n)
    since_delinq = np.where(rng.random(n) < 0.63, np.nan, rng.integers(0, 120, n).astype(float))
    since_record = np.where(rng.random(n) < 0.93, np.nan, rng.integers(0, 120, n).astype(float))
    revol_util = np.round(rng.beta(2, 2, n) * 100, 1).astype(str).astype(object) + "%"
    revol_util[rng.random(n) < 0.01] = None
    jobs = np.array(["Teacher", "Manager", "Registered Nurse", "RN", "Supervisor", "Sales",
                     "Project Manager", "Owner", "Driver", "Office Manager", "US Army",
                     "Bank of America", "Walmart", "AT&T", "IBM", "self"], dtype=object)
    emp_title = np.where(rng.random(n) < 0.5, jobs[rng.integers(0, len(jobs), n)],
                         "employer " + rng.integers(0, 3000, n).astype(str).astype(object))
    emp_title[rng.random(n) < 0.06] = None
    purposes = ["debt_consolidation", "credit_card", "other", "home_improvement",
                "major_purchase", "small_business", "car", "wedding", "medical", "moving",
                "house", "educational", "vacation", "renewable_energy"]
    purpose = _choice(rng, purposes, [47, 13, 10, 7, 5, 5, 4, 2.4, 1.7, 1.5, 1, 1, 1, 0.3], n)
    titles = np.where(rng.random(n) < 0.6, purpose,
                      "Loan for " + rng.integers(0, 900, n).astype(str).astype(object))
    states = [f"S{k:02d}" for k in range(50)]
    desc = np.where(rng.random(n) < 0.7, None,
                    "Borrower added on " + _months(rng, n) + ": " + "I need this loan to "
                    + _choice(rng, ["pay off my cards", "fix the roof", "buy a car"], [5, 3, 2], n)
                    + ". " + "x" * 300)
    frame = pd.DataFrame({
        "id": rng.permutation(np.arange(1_077_501, 1_077_501 + 3 * n, 3))[:n].astype(np.int64),
        "member_id": rng.integers(1_000_000, 1_400_000, n).astype(np.int64),
        "loan_amnt": amount, "funded_amnt": np.where(rng.random(n) < 0.97, amount,
                                                     amount - 25 * rng.integers(1, 40, n)),
        "funded_amnt_inv": np.round(amount - np.where(rng.random(n) < 0.7, 0,
                                                      rng.exponential(300, n)), 2),
        "term": term, "int_rate": np.char.add(rate.astype(str), "%").astype(object),
        "installment": installment, "grade": grade, "sub_grade": sub,
        "emp_title": emp_title,
        "emp_length": _choice(rng, ["10+ years", "< 1 year", "1 year", "2 years", "3 years",
                                    "4 years", "5 years", "6 years", "7 years", "8 years",
                                    "9 years", "n/a"], [22, 12, 8, 11, 10, 9, 8, 6, 5, 4, 3, 2], n),
        "home_ownership": _choice(rng, ["RENT", "MORTGAGE", "OWN", "OTHER", "NONE"],
                                  [47.5, 44.5, 7.7, 0.25, 0.05], n),
        "annual_inc": annual_inc,
        "verification_status": _choice(rng, ["Not Verified", "Verified", "Source Verified"],
                                       [43, 32, 25], n),
        "issue_d": _months(rng, n, 2007, 2012), "loan_status": status,
        "pymnt_plan": np.full(n, "n", dtype=object),
        "url": "https://lendingclub.com/browse/loanDetail.action?loan_id="
               + rng.integers(0, 10**7, n).astype(str).astype(object),
        "desc": desc, "purpose": purpose, "title": titles,
        "zip_code": (rng.zipf(1.3, n) % 900 + 100).astype(str).astype(object) + "xx",
        "addr_state": _choice(rng, states, np.linspace(3, 0.2, 50), n),
        "dti": np.round(rng.gamma(4, 3.4, n).clip(0, 30), 2), "delinq_2yrs": delinq,
        "earliest_cr_line": _months(rng, n, 1960, 2009), "inq_last_6mths": inq,
        "mths_since_last_delinq": since_delinq, "mths_since_last_record": since_record,
        "open_acc": rng.poisson(9, n).clip(1), "pub_rec": (rng.random(n) < 0.05).astype(np.int64),
        "revol_bal": rng.lognormal(9.0, 1.1, n).astype(np.int64), "revol_util": revol_util,
        "total_acc": rng.poisson(22, n).clip(2),
        "initial_list_status": np.full(n, "f", dtype=object),
        "out_prncp": np.zeros(n), "out_prncp_inv": np.zeros(n),
        "total_pymnt": np.round(rec_prncp + rec_int + late_fee + recoveries, 6),
        "total_pymnt_inv": np.round((rec_prncp + rec_int) * rng.uniform(0.9, 1.0, n), 2),
        "total_rec_prncp": rec_prncp, "total_rec_int": rec_int,
        "total_rec_late_fee": late_fee, "recoveries": recoveries,
        "collection_recovery_fee": np.round(recoveries * np.where(rng.random(n) < 0.5, 0.0, 0.18), 4),
        "last_pymnt_d": np.where(rng.random(n) < 0.002, None, _months(rng, n, 2008, 2017)),
        "last_pymnt_amnt": np.round(rng.lognormal(7, 1.3, n), 2),
        "last_credit_pull_d": _months(rng, n, 2010, 2017),
        "collections_12_mths_ex_med": np.where(rng.random(n) < 0.01, np.nan, 0.0),
        "policy_code": np.ones(n, dtype=np.int64),
        "application_type": np.full(n, "INDIVIDUAL", dtype=object),
        "acc_now_delinq": np.zeros(n, dtype=np.int64),
        "chargeoff_within_12_mths": np.where(rng.random(n) < 0.01, np.nan, 0.0),
        "delinq_amnt": np.zeros(n, dtype=np.int64),
        "pub_rec_bankruptcies": np.where(rng.random(n) < 0.02, np.nan,
                                         (rng.random(n) < 0.04).astype(float)),
        "tax_liens": np.where(rng.random(n) < 0.01, np.nan, 0.0),
        "next_pymnt_d": np.full(n, None, dtype=object)})
    numeric = [c for c in frame.columns
               if pd.api.types.is_numeric_dtype(frame[c]) and frame[c].nunique() > 10]
    dates = {c: "%b-%Y" for c in ("issue_d", "earliest_cr_line", "last_pymnt_d",
                                  "last_credit_pull_d")}
    return MessyTable("loan", frame, target="loan_status", positive="Charged Off",
                      numeric=numeric, dates=dates,
                      formats={"int_rate": "#%", "revol_util": "#%"},
                      notes=f"{n} rows x {frame.shape[1]} columns")


def many_valued_integer(n=10_000, seed=2):
    """Four categorical columns (2-14 values) and an integer credit limit with
    ~9,000 distinct values (the first reproduction of issue #36)."""
    rng = np.random.default_rng(seed)
    limit = (rng.lognormal(11.8, 0.75, n)).astype(np.int64)
    education = _choice(rng, ["graduate school", "university", "high school", "others"],
                        [35, 47, 16, 2], n)
    marriage = _choice(rng, ["married", "single", "other"], [45, 53, 2], n)
    pay = _choice(rng, [str(k) for k in range(-2, 12)],
                  [9, 19, 49, 0.1, 12, 4, 2, 1, 0.5, 0.3, 0.2, 0.1, 0.1, 0.05], n)
    late = pay.astype(int) > 0
    default = rng.random(n) < 1 / (1 + np.exp(-(-1.8 + 1.5 * late - 0.5 * (limit > 150_000))))
    frame = pd.DataFrame({"education": education, "marriage": marriage, "pay_0": pay,
                          "default": np.where(default, "yes", "no").astype(object),
                          "limit_bal": limit})
    return MessyTable("many_valued_integer", frame, target="default", positive="yes",
                      numeric=["limit_bal"],
                      notes=f"limit_bal has {frame['limit_bal'].nunique()} distinct values")


def wide_categorical(n=5000, seed=3):
    """A complete 87-value categorical column at epsilon 0.5 (reproduction 2)."""
    rng = np.random.default_rng(seed)
    p = 1 / np.arange(1, 88) ** 0.9
    country = _choice(rng, [f"country {k:02d}" for k in range(87)], p, n)
    sex = _choice(rng, ["F", "M"], [1, 1], n)
    band = _choice(rng, ["young", "middle", "old"], [3, 5, 2], n)
    return MessyTable("wide_categorical", pd.DataFrame({"country": country, "sex": sex,
                                                        "band": band}),
                      epsilon=0.5, notes="87 values, no missing value, epsilon 0.5")


def zero_count(n=5000, seed=4):
    """A count column with 80% zeros, a skewed amount and a category."""
    rng = np.random.default_rng(seed)
    visits = np.where(rng.random(n) < 0.8, 0, rng.poisson(2.0, n) + 1).astype(np.int64)
    amount = np.where(visits > 0, np.round(rng.lognormal(4, 1, n), 2), 0.0)
    region = _choice(rng, ["north", "south", "east", "west"], [4, 3, 2, 1], n)
    return MessyTable("zero_count", pd.DataFrame({"visits": visits, "amount": amount,
                                                  "region": region}),
                      numeric=["visits", "amount"], notes="visits 0 in 80% of records")


def tiny(n=30, seed=5):
    """A 30-row table (reproduction 5): the release must warn, not return empty
    records."""
    rng = np.random.default_rng(seed)
    return MessyTable("tiny", pd.DataFrame({
        "group": _choice(rng, ["a", "b", "c"], [1, 1, 1], n),
        "count": rng.poisson(3, n).astype(np.int64),
        "score": np.round(rng.normal(10, 2, n), 3),
        "flag": rng.random(n) < 0.5}), numeric=["count", "score"], notes="30 rows")


def mixed_types(n=3000, seed=6):
    """Columns as exports leave them: object columns mixing numbers and words,
    booleans (one with missing values), a constant column, an all-missing
    column, very long strings, unicode, an integer column with missing values."""
    rng = np.random.default_rng(seed)
    mixed = np.empty(n, dtype=object)
    kind = rng.random(n)
    mixed[kind < 0.5] = rng.integers(0, 20, (kind < 0.5).sum())
    mixed[(kind >= 0.5) & (kind < 0.7)] = "unknown"
    mixed[(kind >= 0.7) & (kind < 0.8)] = "n/a"
    mixed[kind >= 0.8] = rng.integers(0, 20, (kind >= 0.8).sum()).astype(str)
    bool_missing = np.where(rng.random(n) < 0.1, None, rng.random(n) < 0.3).astype(object)
    long_text = _choice(rng, ["short", "L" * 5000, "lorem ipsum " * 100], [5, 3, 2], n)
    city = _choice(rng, ["São Paulo", "東京", "Zürich", "Kraków", "Αθήνα", "🙂 happy",
                         "naïve café", "Москва"], [3, 3, 2, 2, 1, 1, 1, 1], n)
    age = rng.integers(18, 90, n).astype(float)
    age[rng.random(n) < 0.15] = np.nan
    frame = pd.DataFrame({
        "mixed": mixed, "active": rng.random(n) < 0.7, "opted_in": bool_missing,
        "constant": np.full(n, "same", dtype=object), "empty": np.full(n, np.nan),
        "long_text": long_text, "city": city, "age": age,
        "weight": np.round(rng.normal(72, 12, n), 1),
        "label": _choice(rng, ["x", "y"], [6, 4], n)})
    return MessyTable("mixed_types", frame, numeric=["age", "weight"],
                      notes="object columns of numbers and words, booleans, constant, "
                            "all-missing, 5,000-character strings, unicode")


TABLES = {f.__name__: f for f in (credit_card, loan, many_valued_integer, wide_categorical,
                                  zero_count, tiny, mixed_types)}


def make(name, **kwargs):
    """The generated table called ``name`` (a key of :data:`TABLES`)."""
    return TABLES[name](**kwargs)
