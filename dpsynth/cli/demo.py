"""``dpsynth demo``: end to end on a built-in table, with privacy and fidelity."""

import time

import numpy as np
import pandas as pd

from ..datasets import load_demo_table, make_people
from ..metrics import marginal_tvd
from ..preprocessing import TableEncoder
from ..report import binned_view, write_report
from ..synthesizer import DPMarginalSynthesizer
from ..utils._files import atomic_write
from . import _common

__all__ = ["run"]


def _independent_columns(frame, n_samples, seed):
    """Each column drawn independently from its real 1-way marginal (a baseline)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({name: frame[name].to_numpy()[rng.integers(0, len(frame), n_samples)]
                         for name in frame.columns})


def run(args):
    """Synthesize the handwritten digits and compare with the real table.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of the command (see ``dpsynth demo --help``).

    Returns
    -------
    int
        Exit status 0; errors raise :class:`~dpsynth.cli._common.CommandError`
        (or ``ValueError``/``OSError``), reported by :func:`dpsynth.cli.main`.
    """
    if getattr(args, "write_csv", None):
        return _write_people(args)
    if args.report:
        _common.check_outputs([("--report", args.report)], force=args.force)
    demo = load_demo_table()
    real = demo.frame
    encoder = TableEncoder(bounds=demo.bounds, categories=demo.categories, n_bins=demo.n_bins)
    start = time.perf_counter()
    synthesizer = DPMarginalSynthesizer(epsilon=args.epsilon, encoder=encoder,
                                        random_state=args.seed).fit(real)
    synthetic = synthesizer.sample()
    elapsed = time.perf_counter() - start
    public = synthesizer.aggregates_.encoder
    real_view, synth_view = binned_view(real, public), binned_view(synthetic, public)
    baseline = _independent_columns(real_view, len(synth_view), args.seed)
    lengths = (1, 2, 3)
    rows = [(f"dpsynth synthetic data (epsilon {args.epsilon:g})", synth_view),
            ("independent columns (baseline, not private)", baseline)]
    n_pixels = len(demo.bounds)
    print(f"dpsynth demo: DP synthetic data from {len(real)} handwritten digits "
          "(scikit-learn's load_digits)")
    print(f"  {n_pixels} pixels binned into {demo.n_bins} bins with the public bounds 0..16, "
          "and the digit (public categories 0..9)")
    print()
    print(f"privacy spent: {_common.privacy_terms(synthesizer.privacy_spent_)}")
    print(_common.aggregates_line(synthesizer.aggregates_))
    print(f"synthesized {len(synthetic)} records in {elapsed:.2f} s (fit + sample)")
    print()
    label = 48
    print("mean TVD of k-way marginals vs the real data".ljust(label)
          + "".join(f"{k}-way".rjust(8) for k in lengths))
    for name, table in rows:
        cells = [f"{marginal_tvd(real_view, table, k):.3f}" for k in lengths]
        print(f"  {name}".ljust(label) + "".join(cell.rjust(8) for cell in cells))
    print("(lower is better: 0 = identical marginals, 1 = disjoint)")
    if args.report:
        write_report(real_view, synth_view, args.report, privacy=synthesizer.privacy_spent_,
                     release=synthesizer.aggregates_, title="dpsynth demo: handwritten digits")
        print(f"wrote the report to {args.report}")
    return 0


def _write_people(args):
    """``dpsynth demo --write-csv PEOPLE.csv``: the tutorial's generated input."""
    _common.check_outputs([("--write-csv", args.write_csv)], force=args.force)
    frame = make_people(random_state=args.seed)
    with atomic_write(args.write_csv) as tmp:
        frame.to_csv(tmp, index=False, lineterminator="\n")
    print(f"wrote {len(frame)} generated records ({', '.join(frame.columns)}) to "
          f"{args.write_csv}")
    return 0
