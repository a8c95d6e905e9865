"""Conditional sampling on columns binned with nothing declared."""

import numpy as np
import pandas as pd
import pytest

from dpsynth import DPMarginalSynthesizer


def test_conditions_and_known_values_on_an_undeclared_datetime_column():
    # a datetime column binned with nothing declared takes instants (or their text) in
    # conditions and known frames, in its own unit
    rng = np.random.default_rng(0)
    n = 1500
    X = pd.DataFrame({"age": rng.integers(18, 90, n),
                      "joined": pd.Timestamp("2020-01-01")
                      + pd.to_timedelta(rng.integers(0, 1000, n), unit="D")})
    synth = DPMarginalSynthesizer(epsilon=2.0, random_state=0).fit(X)
    low, high = pd.Timestamp("2021-01-01"), pd.Timestamp("2021-06-30")
    for spec in [(low, high), ("2021-01-01", "2021-06-30"), (low, None)]:
        out = synth.sample(200, conditions={"joined": spec})
        assert len(out) == 200 and out["joined"].dtype == X["joined"].dtype
        # within the bins that overlap the range (a bin's values are drawn in it)
        assert out["joined"].min() >= low - pd.Timedelta(days=200)
    with pytest.raises(ValueError, match="'joined' holds datetime64"):
        synth.sample(10, conditions={"joined": ("not a date", None)})
    known = X[["joined"]].head(5)
    filled = synth.sample_remaining_columns(known)
    pd.testing.assert_series_equal(filled["joined"], known["joined"])
    assert filled["age"].notna().all()
