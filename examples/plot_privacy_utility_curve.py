"""
Privacy-utility curve
=====================

How faithful are the synthetic records as the privacy budget grows?  For
several values of ``epsilon`` this example fits a
:class:`~dpsynth.DPMarginalSynthesizer` on the demo table and measures the
mean total variation distance (TVD) of the 1-, 2- and 3-way marginals between
real and synthetic data, averaged over a few seeds.  An "independent columns"
table, drawn from the exact (non-private) 1-way marginals, gives a reference:
a synthesizer below its line has learned how the columns relate.

Set ``DPSYNTH_EXAMPLE_FAST=1`` for a quicker run (fewer budgets and seeds).
"""

import os
import sys
import tempfile

import numpy as np
import pandas as pd
from sklearn.base import clone

from dpsynth import DPMarginalSynthesizer
from dpsynth.datasets import load_demo_table
from dpsynth.metrics import marginal_tvd
from dpsynth.preprocessing import TableEncoder
from dpsynth.report import binned_view

FAST = os.environ.get("DPSYNTH_EXAMPLE_FAST") == "1"
EPSILONS = [0.5, 4.0, 32.0] if FAST else [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
SEEDS = [0] if FAST else [0, 1, 2]
LENGTHS = (1, 2, 3)

demo = load_demo_table()
X = demo.frame
encoder = TableEncoder(bounds=demo.bounds, categories=demo.categories, n_bins=demo.n_bins)
# the bins come from public bounds, so every fit bins the real data the same way
real_view = binned_view(X, clone(encoder).fit(X))

# %%
# Sweep the budget
# ----------------
rows = []
for epsilon in EPSILONS:
    for seed in SEEDS:
        synthesizer = DPMarginalSynthesizer(epsilon=epsilon, encoder=encoder,
                                            random_state=seed).fit(X)
        synth_view = binned_view(synthesizer.sample(), synthesizer.aggregates_.encoder)
        rows.append({"epsilon": epsilon, "seed": seed,
                     **{k: marginal_tvd(real_view, synth_view, k) for k in LENGTHS}})
curve = pd.DataFrame(rows).groupby("epsilon")[list(LENGTHS)].mean()

# %%
# The baseline: every column drawn independently from its real 1-way marginal
rng = np.random.default_rng(0)
independent = real_view.apply(lambda column: column.to_numpy()[rng.integers(0, len(X), len(X))])
baseline = pd.Series({k: marginal_tvd(real_view, independent, k) for k in LENGTHS})

print("mean TVD by epsilon (lower is better)")
print(curve.round(3).to_string())
print("independent columns:", baseline.round(3).to_dict())

# %%
# Plot (if matplotlib is installed)
# ---------------------------------
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
    fig, ax = plt.subplots(figsize=(6, 4))
    for k, color in zip(LENGTHS, ["C0", "C1", "C2"]):
        ax.plot(curve.index, curve[k], marker="o", color=color, label=f"{k}-way")
        ax.axhline(baseline[k], color=color, linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel("epsilon")
    ax.set_ylabel("mean TVD vs real data")
    ax.set_title("Privacy-utility curve (dashed: independent columns)")
    ax.legend()
    fig.tight_layout()
    if matplotlib.get_backend().lower() == "agg":  # not interactive: save it
        folder = os.environ.get("DPSYNTH_EXAMPLE_OUTPUT", tempfile.gettempdir())
        path = os.path.join(folder, "plot_privacy_utility_curve.png")
        fig.savefig(path)
        print(f"saved the figure to {path}")
    else:
        plt.show()
