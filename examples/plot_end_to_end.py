"""
End-to-end synthesis on the demo table
======================================

Fit a :class:`~dpsynth.DPMarginalSynthesizer` on the built-in demo table
(scikit-learn's handwritten digits: six pixels binned with the public bounds
0..16, and the digit), look at what the release cost and how faithful the
synthetic records are, then save the DP aggregates and synthesize again from
the file alone, as a data recipient would.

Set ``DPSYNTH_EXAMPLE_FAST=1`` for a quicker run (fewer synthetic records).
"""

import os
import sys
import tempfile

from dpsynth import DPAggregates, DPMarginalSynthesizer
from dpsynth.datasets import load_demo_table
from dpsynth.metrics import marginal_tvd
from dpsynth.preprocessing import TableEncoder
from dpsynth.report import binned_view

FAST = os.environ.get("DPSYNTH_EXAMPLE_FAST") == "1"

# %%
# Public information only: the pixel bounds and the digit's categories
# --------------------------------------------------------------------
demo = load_demo_table()
X = demo.frame
encoder = TableEncoder(bounds=demo.bounds, categories=demo.categories, n_bins=demo.n_bins)
synthesizer = DPMarginalSynthesizer(epsilon=4.0, encoder=encoder, random_state=0).fit(X)

privacy = synthesizer.privacy_spent_
print(f"epsilon {privacy['epsilon']:g}, delta {privacy['delta']:.2g}, "
      f"zCDP rho of the marginals {privacy['rho']:.3f}")
print(synthesizer.aggregates_)

# %%
# Sample and compare, bin by bin
# ------------------------------
# Synthetic pixel values are drawn inside their bins, so both tables are
# compared through the public encoder's bins.
X_syn = synthesizer.sample()
public = synthesizer.aggregates_.encoder
real_view, synth_view = binned_view(X, public), binned_view(X_syn, public)
for k in (1, 2, 3):
    print(f"mean TVD of {k}-way marginals: {marginal_tvd(real_view, synth_view, k):.3f}")

# %%
# Release the aggregates, synthesize from the file alone
# ------------------------------------------------------
# ``DPAggregates`` is the privacy boundary: the file holds DP counts and
# public metadata only, and sampling from it costs no privacy.
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "digits-aggregates.json")
    synthesizer.aggregates_.save(path)
    released = DPAggregates.load(path)
recipient = DPMarginalSynthesizer.from_aggregates(released, random_state=1)
more = recipient.sample(200 if FAST else 5000)
print(f"{len(more)} more records from the released file; columns {list(more.columns)}")

# %%
# Plot the distribution of the digit and of one pixel (if matplotlib is installed)
# --------------------------------------------------------------------------------
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
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    for ax, name in zip(axes, ["digit", "pixel_3_4"]):
        real_share = real_view[name].value_counts(normalize=True, sort=False).sort_index()
        synth_share = synth_view[name].value_counts(normalize=True, sort=False)
        synth_share = synth_share.reindex(real_share.index, fill_value=0)
        positions = range(len(real_share))
        ax.bar([p - 0.2 for p in positions], real_share.to_numpy(), 0.4, label="real")
        ax.bar([p + 0.2 for p in positions], synth_share.to_numpy(), 0.4, label="synthetic")
        ax.set_xticks(list(positions))
        ax.set_xticklabels([str(v) for v in real_share.index])
        ax.set_title(name)
    axes[0].legend()
    fig.tight_layout()
    if matplotlib.get_backend().lower() == "agg":  # not interactive: save it
        folder = os.environ.get("DPSYNTH_EXAMPLE_OUTPUT", tempfile.gettempdir())
        path = os.path.join(folder, "plot_end_to_end.png")
        fig.savefig(path)
        print(f"saved the figure to {path}")
    else:
        plt.show()
