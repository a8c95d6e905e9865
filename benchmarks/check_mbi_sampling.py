"""mbi 1.1.0's two record-generation bugs, and :func:`~benchmarks.reference_runners.sample_model`.

Two small models are fitted to exact counts:

- a star ``B - A - C``, which holds ``B`` and ``C`` independent given ``A``;
- a cycle ``A - B - C - D - A`` with a pendant ``D - E``, whose graph is not
  chordal: its junction tree adds a fill-in edge.

For each record generator the script prints the TVD between every 2-way
marginal of 30,000 generated records and the model's own marginal (sampling
noise alone gives about 0.01). mbi 1.1.0's default ``synthetic_data(method="round")``
(what smartnoise-synth 1.0.8's ``sample()`` uses) assigns values by rank within
each group, so ``B`` and ``C`` of the star come out comonotone; its
``method="sample"`` is right on the star (a tree) but conditions on the measured
cliques instead of the junction tree's, and misses the fill-in dependency of the
cycle. Both are fixed upstream in mbi's pull request 145. Run in the benchmark
environment::

    python -m benchmarks.check_mbi_sampling

Seen with mbi 1.1.0 (mean / worst pair TVD): star: round 0.203 / 0.608 (B-C),
mbi_sample 0.006 / 0.009, sample_model 0.010 / 0.011; cycle: round 0.203 / 0.586,
mbi_sample 0.034 / 0.147 (A-C, the fill-in edge), sample_model 0.006 / 0.008.
``sample_model(..., rounding=True)`` (randomized rounding with random assignment
within groups) has neither bug and less noise: star 0.002 / 0.007, cycle 0.001 / 0.004.
"""

import itertools

import numpy as np
from mbi import Domain, LinearMeasurement, estimation, marginal_oracles

from .reference_runners import sample_model


def _counts(domain, columns, data):
    shape = tuple(domain[column] for column in columns)
    return np.bincount(np.ravel_multi_index([data[c] for c in columns], shape),
                       minlength=int(np.prod(shape))).astype(float)


def _models(n, rng):
    """(name, fitted model) of the star and the cycle."""
    star = Domain(["A", "B", "C"], [2, 5, 5])
    a = rng.integers(0, 2, n)
    data = {"A": a, "B": (2 * a + rng.integers(0, 3, n)) % 5,
            "C": (3 * a + rng.integers(0, 3, n)) % 5}
    yield "star", star, [("A", "B"), ("A", "C")], data
    cycle = Domain(list("ABCDE"), [3, 4, 3, 4, 2])
    a = rng.integers(0, 3, n)
    b = (a + rng.integers(0, 2, n)) % 4
    c = (b + rng.integers(0, 2, n)) % 3
    d = (c + a + rng.integers(0, 2, n)) % 4
    e = (d > 1).astype(int) ^ (rng.random(n) < 0.1)
    yield ("cycle", cycle, [("A", "B"), ("B", "C"), ("C", "D"), ("D", "A"), ("D", "E")],
           {"A": a, "B": b, "C": c, "D": d, "E": e})


def main(n=30000, seed=0):
    """Print the mean and worst 2-way TVD to the model of each generator on each model."""
    np.random.seed(seed)  # mbi samples with NumPy's global generator
    rng = np.random.default_rng(seed)
    for name, domain, cliques, data in _models(n, rng):
        measurements = [LinearMeasurement(_counts(domain, cl, data), cl, 1.0) for cl in cliques]
        model = estimation.mirror_descent(domain, measurements, iters=1000,
                                          marginal_oracle=marginal_oracles.message_passing_stable)
        generators = {
            "round (mbi 1.1.0 default)": lambda: model.synthetic_data(rows=n, method="round"),
            "mbi_sample (mbi 1.1.0 method='sample')":
                lambda: model.synthetic_data(rows=n, method="sample"),
            "sample_model": lambda: sample_model(model, n),
            "sample_model, rounding": lambda: sample_model(model, n, rounding=True),
        }
        for label, generate in generators.items():
            df = generate().df
            synthetic = {a: df[a].to_numpy() for a in domain.attrs}
            tvds = {}
            for pair in itertools.combinations(domain.attrs, 2):
                target = np.asarray(model.project(pair).datavector())
                q = _counts(domain, pair, synthetic)
                tvds[pair] = 0.5 * np.abs(q / q.sum() - target / target.sum()).sum()
            worst = max(tvds, key=tvds.get)
            print(f"{name}, {label}: mean TVD {np.mean(list(tvds.values())):.3f}, "
                  f"worst {tvds[worst]:.3f} on {'-'.join(worst)}")


if __name__ == "__main__":
    main()
