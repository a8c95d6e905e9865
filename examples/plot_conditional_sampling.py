"""
Conditional sampling and public constraints
===========================================

The released model is a model of the joint distribution, so it can answer
"what do the records with ``digit == 3`` look like?" and fill in the missing
columns of partial records, at no privacy cost: both are post-processing of
the DP release.  Public constraints (rules of the domain, declared like the
bounds) hold in every synthetic record by construction.

The demo table has six pixels (binned with the public bounds 0..16) and the
digit.  Set ``DPSYNTH_EXAMPLE_FAST=1`` for a quicker run.
"""

import os
import sys
import tempfile

import numpy as np

from dpsynth import DPMarginalSynthesizer
from dpsynth.constraints import ForbiddenCombinations, Inequality, constraint_violations
from dpsynth.datasets import load_demo_table
from dpsynth.metrics import quality_report
from dpsynth.preprocessing import TableEncoder

FAST = os.environ.get("DPSYNTH_EXAMPLE_FAST") == "1"
N = 500 if FAST else 3000

demo = load_demo_table()
X = demo.frame
encoder = TableEncoder(bounds=demo.bounds, categories=demo.categories, n_bins=demo.n_bins)
synthesizer = DPMarginalSynthesizer(epsilon=4.0, encoder=encoder, random_state=0).fit(X)

# %%
# Records of one group: ``conditions``
# ------------------------------------
# Every record returned satisfies the conditions; the other columns follow
# the model's conditional distribution.  A numeric column takes a range.
threes = synthesizer.sample(N, conditions={"digit": 3})
bright = synthesizer.sample(N, conditions={"pixel_3_4": (12, 16), "digit": [0, 8]})
print(f"conditional sample: {len(threes)} records, digits {sorted(threes['digit'].unique().tolist())}")
print(f"pixel_3_4 in [{bright['pixel_3_4'].min()}, {bright['pixel_3_4'].max()}], "
      f"digits {sorted(bright['digit'].unique().tolist())}")
real_threes = X[X["digit"] == 3]
print("mean pixel_3_4 given digit 3: real "
      f"{real_threes['pixel_3_4'].mean():.2f}, synthetic {threes['pixel_3_4'].mean():.2f}, "
      f"all digits {X['pixel_3_4'].mean():.2f}")

# %%
# Fill in the other columns of partial records
# --------------------------------------------
# ``sample_remaining_columns`` keeps the known columns exactly (values, index,
# dtypes) and draws the others given each row's known values.
known = X[["digit"]].iloc[:200]
filled = synthesizer.sample_remaining_columns(known)
print(f"filled {filled.shape[1] - known.shape[1]} columns of {len(filled)} records; "
      f"known column kept: {filled['digit'].equals(known['digit'])}")

# %%
# Public constraints, respected by construction
# ---------------------------------------------
# Declared rules (not read from the data): here, pixel_2_5 is at most
# pixel_3_4, and the digit 7 is left out (a table for a study of the others).
# ``constraint_violations`` on the real table is for the data owner only (it
# reads the records: not a DP release).
constraints = [Inequality("pixel_2_5", "pixel_3_4"),
               ForbiddenCombinations(["digit"], [(7,)])]
print(constraint_violations(X, constraints).to_string(index=False))
constrained = DPMarginalSynthesizer.from_aggregates(synthesizer.aggregates_,
                                                    constraints=constraints, random_state=0)
X_con = constrained.sample(N)
print("violations in the synthetic records:",
      constraint_violations(X_con, constraints)["violations"].tolist())

# %%
# Quality report, SDMetrics-style
# -------------------------------
report = quality_report(X, synthesizer.sample(N))
print(f"quality score {report['score']:.3f} (column shapes {report['column_shapes']:.3f}, "
      f"column pair trends {report['column_pair_trends']:.3f})")

# %%
# Plot: a pixel's distribution, overall and given the digit
# ---------------------------------------------------------
try:
    import matplotlib
    # no display (a server, CI, a docs build): draw off-screen and save the figure
    HEADLESS = not (hasattr(sys, "ps1") or os.environ.get("DISPLAY")
                    or sys.platform in ("darwin", "win32"))
    if HEADLESS and "MPLBACKEND" not in os.environ:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
if plt is not None:
    fig, ax = plt.subplots(figsize=(6, 3.2))
    bins = np.arange(0, 18) - 0.5
    ax.hist(real_threes["pixel_3_4"], bins=bins, density=True, alpha=0.5,
            label="real, digit 3")
    ax.hist(threes["pixel_3_4"], bins=bins, density=True, histtype="step", linewidth=2,
            label="synthetic, digit 3")
    ax.hist(X["pixel_3_4"], bins=bins, density=True, histtype="step", linestyle="--",
            label="real, all digits")
    ax.set_xlabel("pixel_3_4")
    ax.legend()
    fig.tight_layout()
    if matplotlib.get_backend().lower() == "agg":  # not interactive: save it
        folder = os.environ.get("DPSYNTH_EXAMPLE_OUTPUT", tempfile.gettempdir())
        path = os.path.join(folder, "plot_conditional_sampling.png")
        fig.savefig(path)
        print(f"saved the figure to {path}")
    else:
        plt.show()
