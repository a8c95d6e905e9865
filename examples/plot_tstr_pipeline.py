"""
Train on synthetic, test on real
================================

Can a model trained only on DP synthetic records classify real ones?
:class:`~dpsynth.model_selection.TrainOnSynthetic` wraps a scikit-learn
model and a synthesizer: ``fit(X, y)`` fits the synthesizer on the training
data, samples synthetic ``(X, y)`` and trains the model on them, while
``predict`` and ``score`` run on real data.  This example predicts the digit
of the demo table from its six pixels, compares train-on-synthetic accuracy
with train-on-real accuracy, then lets ``GridSearchCV`` pick ``epsilon``.

The scores use real data, so they are not a differentially private release,
and every fit of a search spends privacy budget: see
:func:`~dpsynth.model_selection.search_privacy_cost`.

Set ``DPSYNTH_EXAMPLE_FAST=1`` for a quicker run (fewer budgets and folds).
"""

import os
import sys
import tempfile

from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from dpsynth import DPMarginalSynthesizer
from dpsynth.datasets import load_demo_table
from dpsynth.model_selection import TrainOnSynthetic, search_privacy_cost
from dpsynth.preprocessing import TableEncoder

FAST = os.environ.get("DPSYNTH_EXAMPLE_FAST") == "1"
EPSILONS = [4.0] if FAST else [0.5, 1.0, 2.0, 4.0, 8.0, 16.0]

demo = load_demo_table()
X, y = demo.frame.drop(columns="digit"), demo.frame["digit"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                    random_state=0)
# DP noise can release a few missing pixels too: the model imputes them.
model = make_pipeline(SimpleImputer(strategy="median"), StandardScaler(),
                      LogisticRegression(max_iter=1000))
encoder = TableEncoder(bounds=demo.bounds, categories=demo.categories, n_bins=demo.n_bins)


class CompleteLabels(DPMarginalSynthesizer):
    """A synthesizer whose samples keep only the rows with a label.

    A missing value is a public category of every column (``missing="category"``),
    so DP noise can release a few missing digits although the real labels have
    none; a classifier cannot learn from those rows.
    """

    def sample(self, n_samples=None, **kwargs):
        X_syn, y_syn = super().sample(n_samples, **kwargs)
        labelled = y_syn.notna().to_numpy()
        return X_syn[labelled], y_syn[labelled]


# %%
# Train on real (no privacy) vs train on synthetic, by epsilon
# -------------------------------------------------------------
# The synthesizer models the target jointly with the pixels: the target's
# name, ``digit``, is the column its encoder declares categories for.
accuracy_real = model.fit(X_train, y_train).score(X_test, y_test)
print(f"train on real, test on real: accuracy {accuracy_real:.3f}")
accuracy = {}
for epsilon in EPSILONS:
    tstr = TrainOnSynthetic(model, CompleteLabels(epsilon=epsilon, encoder=encoder,
                                                  random_state=0))
    accuracy[epsilon] = tstr.fit(X_train, y_train).score(X_test, y_test)
    print(f"train on synthetic (epsilon {epsilon:g}), test on real: "
          f"accuracy {accuracy[epsilon]:.3f}")

# %%
# Choose epsilon by cross-validation, and count what the search spent
# -------------------------------------------------------------------
# The search fits on overlapping folds of the private data: each fit must draw
# fresh noise, so its synthesizer has no fixed ``random_state`` (a fixed one
# warns with a ``PrivacyLeakWarning``, and the accounting below would not hold).
search = GridSearchCV(
    TrainOnSynthetic(model, CompleteLabels(encoder=encoder)),
    {"synthesizer__epsilon": [1.0, 4.0]}, cv=2 if FAST else 3)
search.fit(X_train, y_train)
print(f"best: {search.best_params_}, held-out accuracy {search.score(X_test, y_test):.3f}")
cost = search_privacy_cost(search)
print(f"privacy budget spent on the training data by the whole search: epsilon "
      f"{cost['epsilon']:g} ({cost['n_candidates']} candidates, {cost['n_splits']} folds, "
      "and the refit)")

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
    ax.plot(list(accuracy), list(accuracy.values()), marker="o", label="train on synthetic")
    ax.axhline(accuracy_real, color="grey", linestyle="--", label="train on real")
    ax.set_xscale("log")
    ax.set_xlabel("epsilon")
    ax.set_ylabel("accuracy on real test data")
    ax.legend()
    fig.tight_layout()
    if matplotlib.get_backend().lower() == "agg":  # not interactive: save it
        folder = os.environ.get("DPSYNTH_EXAMPLE_OUTPUT", tempfile.gettempdir())
        path = os.path.join(folder, "plot_tstr_pipeline.png")
        fig.savefig(path)
        print(f"saved the figure to {path}")
    else:
        plt.show()
