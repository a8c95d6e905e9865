"""Tests of the SDS aggregate-seeded sampler (project issue 4).

The sampler (``dpsynth/_core/_sampling.pyx``, ``AggregateSeededSampler``,
``DPMarginalSynthesizer.sample``) is checked against a brute-force Python
reference written from the SDS design document (section 4) and the kernel's
module docstring, which defines the rules:

* candidate: an attribute whose column is not in the record, whose remaining
  1-count is positive and whose addition creates no combination of length
  <= R absent from the aggregates;
* weight: the count of the new combination while the record (with the
  candidate) has at most R attributes, else the ``weight_selection_percentile``
  (numpy's default linear interpolation) of the counts of every
  sub-combination of length 1..R containing the candidate;
* ``use_synthetic_counts``: every count used is reduced by how often the
  combination was already synthesized; candidates of weight <= 0 are not
  drawn (``candidate_weights`` still reports them, with their weight);
* ``missing="category"``: dead ends are completed by the fallback rule of the
  module docstring.

Everything runs on tiny aggregates built here without noise: exact counts of
small random frames (a pure-Python counter, cross-checked with
``exact_marginals``), and perturbed ones (noise, suppression, fabrication,
then closure and SDS normalisation) so that the constraints bite.
"""

import gc
import inspect
import itertools
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpsynth import DPMarginalSynthesizer
from dpsynth.sampling import AggregateSeededSampler
from tests._support import exact_marginals
from dpsynth.accounting import PrivacySpent
from dpsynth.aggregates import DPAggregates
from dpsynth.preprocessing import TableEncoder

PRIVACY = PrivacySpent(1.0, 1e-5, 0.0)
# The sampler under test is SDS's; select it where the estimator offers others.
SDS = ({"synthesis": "aggregate_seeded"}
       if "synthesis" in inspect.signature(DPMarginalSynthesizer).parameters else {})
HYPOTHESIS = settings(max_examples=12, deadline=None, derandomize=True,
                      suppress_health_check=[HealthCheck.too_slow])


# =================================================================== helpers
def random_frame(rng, n_rows, n_columns, *, missing_rate=0.0, n_values=(2, 4)):
    """Small categorical frame with correlated columns (so constraints bite)."""
    data = {}
    latent = rng.integers(0, 3, size=n_rows)
    for j in range(n_columns):
        k = int(rng.integers(n_values[0], n_values[1] + 1))
        independent = rng.integers(0, k, size=n_rows)
        follow = rng.random(n_rows) < 0.6
        codes = np.where(follow, latent % k, independent)
        values = np.array([f"v{c}" for c in codes], dtype=object)
        if missing_rate:
            values[rng.random(n_rows) < missing_rate] = None
        data[f"c{j}"] = values
    return pd.DataFrame(data)


def attribute_ids(encoder, frame):
    """Attribute-id matrix of ``frame`` under ``encoder`` (-1: empty cell)."""
    codes = encoder.transform(frame)
    return np.where(codes >= 0, codes + encoder.offsets_[:-1], -1).astype(np.int32)


def combination_counts(ids, reporting_length):
    """Exact counts of every combination of length 1..R (pure Python)."""
    counts = Counter()
    for row in ids.tolist():
        attrs = sorted(a for a in row if a >= 0)
        for k in range(1, reporting_length + 1):
            counts.update(itertools.combinations(attrs, k))
    return dict(counts)


def close_and_normalise(combos, column_of, reporting_length, rng=None, fabricate=0):
    """Keep combinations whose sub-combinations are all kept; cap counts (SDS 3.4).

    With ``rng``, ``fabricate`` extra combinations per length >= 2 are made
    up by extending kept ones (they are released although absent from the data).
    """
    n_attr = len(column_of)
    out = {}
    for k in range(1, reporting_length + 1):
        level = sorted(key for key in combos if len(key) == k)
        if rng is not None and k >= 2 and fabricate:
            shorter = sorted(key for key in out if len(key) == k - 1)
            for _ in range(fabricate if shorter else 0):
                base = shorter[int(rng.integers(len(shorter)))]
                a = int(rng.integers(n_attr))
                if column_of[a] in {column_of[b] for b in base}:
                    continue
                key = tuple(sorted(base + (a,)))
                if key not in combos and key not in level:
                    level.append(key)
                    combos = {**combos, key: int(rng.integers(1, 6))}
        for key in level:
            count = combos[key]
            if k > 1:
                parents = [key[:i] + key[i + 1:] for i in range(k)]
                if not all(p in out for p in parents):
                    continue
                count = min([count] + [out[p] for p in parents])
            if count >= 1:
                out[key] = int(count)
    return out


def perturb(combos, rng, *, drop=0.25, noise=2):
    """Noisy, partly suppressed copy of exact counts (not yet closed)."""
    out = {}
    for key, count in combos.items():
        if len(key) > 1 and rng.random() < drop:
            continue
        if len(key) == 1 and rng.random() < drop / 4:
            continue
        count = count + int(rng.integers(-noise, noise + 1))
        if count >= 1:
            out[key] = count
    return out


def make_aggregates(schema, reporting_length, combos, n_records=None):
    """``DPAggregates`` holding exactly ``combos`` (sorted within each length)."""
    tuples, counts = [], []
    for k in range(1, reporting_length + 1):
        level = sorted(key for key in combos if len(key) == k)
        tuples.append(np.array(level, dtype=np.int32).reshape(-1, k))
        counts.append(np.array([combos[key] for key in level], dtype=np.int64))
    while tuples and tuples[-1].shape[0] == 0:
        tuples.pop()
        counts.pop()
    if n_records is None:
        n_records = max(combos.values(), default=1)
    return DPAggregates(schema, reporting_length, tuples, counts, n_records, PRIVACY)


def aggregate_dict(aggs):
    """``{sorted id tuple: count}`` and ``{tuple: index into the concatenated counts}``."""
    combos, index = {}, {}
    position = 0
    for tuples, counts in zip(aggs.tuples, aggs.counts):
        for row, count in zip(tuples.tolist(), counts.tolist()):
            combos[tuple(row)] = count
            index[tuple(row)] = position
            position += 1
    return combos, index


class Reference:
    """Brute-force SDS sampler rules over a ``{combination: count}`` dict."""

    def __init__(self, aggs):
        self.combos, self.index = aggregate_dict(aggs)
        self.column_of = [int(c) for c in aggs.schema.attribute_columns]
        self.n_attr = len(self.column_of)
        self.n_columns = len(aggs.schema.columns)
        self.R = aggs.reporting_length
        self.one_counts = [self.combos.get((a,), 0) for a in range(self.n_attr)]

    def count(self, key, synthesized, use_synth):
        """Count used as a weight (None: absent from the aggregates)."""
        count = self.combos.get(key)
        if count is None or not use_synth:
            return count
        return count - synthesized[self.index[key]]

    def weights(self, partial, available, synthesized, pct, use_synth):
        """SDS candidate weights after ``partial`` (NaN: not a candidate)."""
        partial = list(partial)
        used = {self.column_of[x] for x in partial}
        out = np.full(self.n_attr, np.nan)
        for a in range(self.n_attr):
            if self.column_of[a] in used or available[a] <= 0:
                continue
            values = []
            ok = True
            # every sub-combination of partial + [a] of length 1..R containing a
            for size in range(0, min(self.R - 1, len(partial)) + 1):
                for sub in itertools.combinations(partial, size):
                    count = self.count(tuple(sorted(sub + (a,))), synthesized, use_synth)
                    if count is None:
                        ok = False
                        break
                    values.append(count)
                if not ok:
                    break
            if not ok:
                continue
            if len(partial) + 1 <= self.R:
                out[a] = self.count(tuple(sorted(partial + [a])), synthesized, use_synth)
            else:
                out[a] = np.percentile(values, pct)
        return out

    def fallback_weights(self, record, column, synthesized, pct, use_synth):
        """Fallback weights of the values of an empty column (module docstring rule)."""
        L = len(record)
        limit = min(self.R, L + 1)
        support = {}
        for v in range(self.n_attr):
            if self.column_of[v] != column or (v,) not in self.combos:
                continue
            s = 1
            for size in range(1, limit):
                if all(tuple(sorted(sub + (v,))) in self.combos
                       for sub in itertools.combinations(record, size)):
                    s = size + 1
                else:
                    break
            support[v] = s
        weights = {}
        if not support:
            return weights
        best = max(support.values())
        for v, s in support.items():
            if s != best:
                continue
            if s - 1 == L:
                w = self.count(tuple(sorted(record + [v])), synthesized, use_synth)
            else:
                values = [self.count(tuple(sorted(sub + (v,))), synthesized, use_synth)
                          for size in range(0, s)
                          for sub in itertools.combinations(record, size)]
                w = np.percentile(values, pct)
            weights[v] = max(float(w), 1.0)
        return weights

    def every_column_released(self):
        return {self.column_of[a] for a in range(self.n_attr)
                if self.one_counts[a] > 0} == set(range(self.n_columns))

    def combinations_of(self, record):
        attrs = sorted(record)
        for k in range(1, min(self.R, len(attrs)) + 1):
            yield from itertools.combinations(attrs, k)

    def violations(self, record):
        """Combinations of length <= R of ``record`` absent from the aggregates."""
        return [c for c in self.combinations_of(record) if c not in self.combos]


# --- the kernel's PRNG (splitmix64, ``_hashing.pxd``), for the exact replay
_MASK = (1 << 64) - 1


def _mix64(x):
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


class SplitMix64:
    def __init__(self, seed):
        self.state = _mix64(seed & _MASK)

    def uniform(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        return (_mix64(self.state) >> 11) * (1.0 / 9007199254740992.0)


def _draw(weights, rng):
    """Linear scan draw over ``{attribute: weight}`` in ascending attribute order
    (no uniform is consumed when nothing has a positive weight)."""
    items = sorted((a, w) for a, w in weights.items() if w > 0)
    if not items:
        return -1
    total = 0.0
    for _, w in items:
        total += w
    u = rng.uniform() * total
    last = -1
    for a, w in items:
        last = a
        u -= w
        if u < 0:
            return a
    return last


def reference_sample(ref, n_records, *, complete, pct, use_synth, seed, events=None):
    """Whole SDS sampling loop in Python, drawing with the kernel's PRNG.

    Recomputes every candidate weight from scratch with :meth:`Reference.weights`
    (no incremental state).  Returns ``(ids, (fallback_records, fallback_cells,
    passes))`` like ``_sampling.sample_records``.  ``events`` (a Counter)
    records which rules were exercised.
    """
    events = Counter() if events is None else events
    rng = SplitMix64(seed)
    one_counts = ref.one_counts
    available = list(one_counts)
    synthesized = np.zeros(len(ref.combos), dtype=np.int64)
    total_available = sum(c for c in one_counts if c > 0)
    target = n_records if n_records >= 0 else sum(one_counts)
    records = []
    fallback_records = fallback_cells = 0
    passes = 1
    while len(records) < target:
        if total_available <= 0:
            if n_records < 0:
                break
            available = [max(c, 0) for c in one_counts]
            total_available = sum(available)
            passes += 1
        record = []
        while True:
            w = ref.weights(record, available, synthesized, pct, use_synth)
            candidates = {a: w[a] for a in range(ref.n_attr) if not np.isnan(w[a])}
            if any(v <= 0 for v in candidates.values()):
                events["non_positive_weight"] += 1
            if len(record) >= ref.R and candidates:
                events["beyond_r"] += 1
            if (not record and candidates
                    and not any(v > 0 for v in candidates.values())):
                # documented in ``_choose``: a first attribute is drawn by 1-counts left
                events["first_by_available"] += 1
                candidates = {a: float(available[a]) for a in candidates}
            x = _draw(candidates, rng)
            if x < 0:
                break
            record.append(x)
            available[x] -= 1
            total_available -= 1
        used_fallback = False
        if complete and len(record) < ref.n_columns:
            used = {ref.column_of[x] for x in record}
            order = [c for c in range(ref.n_columns) if c not in used]
            for j in range(len(order) - 1, 0, -1):
                i = int(rng.uniform() * (j + 1))
                order[i], order[j] = order[j], order[i]
            for column in order:
                weights = ref.fallback_weights(record, column, synthesized, pct, use_synth)
                x = _draw(weights, rng)
                if x < 0:
                    continue
                record.append(x)
                if available[x] > 0:
                    available[x] -= 1
                    total_available -= 1
                fallback_cells += 1
                used_fallback = True
        if used_fallback:
            fallback_records += 1
        if not record:
            continue
        records.append(record)
        if use_synth:
            for combo in ref.combinations_of(record):
                if combo in ref.index:
                    synthesized[ref.index[combo]] += 1
    ids = np.full((len(records), ref.n_columns), -1, dtype=np.int32)
    for i, record in enumerate(records):
        for x in record:
            ids[i, ref.column_of[x]] = x
    return ids, (fallback_records, fallback_cells, passes)


def kernel_seed(seed):
    """Seed ``AggregateSeededSampler.sample`` derives from ``default_rng(seed)``."""
    return int(np.random.default_rng(seed).integers(0, 2**63))


def tiny_aggregates(seed, reporting_length, missing, perturbed):
    """Exact (or perturbed) aggregates of a small random frame."""
    rng = np.random.default_rng(seed)
    n_columns = int(rng.integers(4, 7))
    n_rows = int(rng.integers(6, 25))
    frame = random_frame(rng, n_rows, n_columns,
                         missing_rate=0.15 if rng.random() < 0.7 else 0.0)
    encoder = TableEncoder(missing=missing).fit(frame)
    ids = attribute_ids(encoder, frame)
    combos = combination_counts(ids, reporting_length)
    column_of = encoder.schema_.attribute_columns
    if perturbed:
        combos = close_and_normalise(perturb(combos, rng), column_of, reporting_length,
                                     rng=rng, fabricate=int(rng.integers(0, 6)))
    return make_aggregates(encoder.public_schema(), reporting_length, combos, n_rows), rng


def random_partial(ref, rng, available, synthesized, pct, use_synth):
    """A partial record: either a walk through the reference's candidates or
    arbitrary attributes of distinct columns (possibly not valid candidates)."""
    if rng.random() < 0.6:
        partial = []
        stop = int(rng.integers(0, ref.n_columns + 1))
        while len(partial) < stop:
            w = ref.weights(partial, available, synthesized, pct, use_synth)
            candidates = np.flatnonzero(~np.isnan(w))
            if candidates.size == 0:
                break
            partial.append(int(rng.choice(candidates)))
        return partial
    columns = rng.permutation(ref.n_columns)[: int(rng.integers(0, ref.n_columns + 1))]
    partial = []
    for c in columns:
        values = [a for a in range(ref.n_attr) if ref.column_of[a] == c]
        partial.append(int(rng.choice(values)))
    return partial


def synthetic_ids(aggs, frame):
    """Attribute ids of a synthetic frame under the aggregates' public encoder."""
    return attribute_ids(aggs.encoder, frame)


# ====================================== 1. kernel vs brute-force reference
def test_pure_python_counter_matches_exact_marginals():
    rng = np.random.default_rng(3)
    for missing in ("absent", "category"):
        frame = random_frame(rng, 30, 5, missing_rate=0.2)
        enc = TableEncoder(missing=missing).fit(frame)
        ids = attribute_ids(enc, frame)
        levels = exact_marginals(ids, enc.schema_.attribute_columns, 5, 3)
        aggs = DPAggregates.from_release(enc.schema_, levels, 3, len(frame), PRIVACY)
        expected = combination_counts(ids, 3)
        # every observed attribute is released, so public ids = encoder ids
        assert aggregate_dict(aggs)[0] == expected


@pytest.mark.parametrize("reporting_length", [2, 3, 4])
@pytest.mark.parametrize("missing", ["absent", "category"])
@pytest.mark.parametrize("perturbed", [False, True], ids=["exact", "perturbed"])
@HYPOTHESIS
@given(seed=st.integers(0, 2**32 - 1))
def test_candidate_weights_match_reference(reporting_length, missing, perturbed, seed):
    aggs, rng = tiny_aggregates(seed, reporting_length, missing, perturbed)
    ref = Reference(aggs)
    n_combos = len(ref.combos)
    agg_counts = np.array([ref.combos[k] for k in sorted(ref.index, key=ref.index.get)])
    for _ in range(6):
        pct = float(rng.choice([0.0, 5.0, 50.0, 95.0, 100.0, rng.uniform(0, 100)]))
        use_synth = bool(rng.random() < 0.5)
        sampler = AggregateSeededSampler(pct, use_synth).fit(aggs)
        if rng.random() < 0.5:
            available = np.array(ref.one_counts, dtype=np.int64)
        else:  # some 1-counts used up, some attributes released but exhausted
            available = np.where(rng.random(ref.n_attr) < 0.25, 0,
                                 rng.integers(0, 4, size=ref.n_attr)).astype(np.int64)
        synthesized = (rng.integers(0, agg_counts + 2) if use_synth or rng.random() < 0.3
                       else np.zeros(n_combos, dtype=np.int64)).astype(np.int64)
        partial = random_partial(ref, rng, available, synthesized, pct, use_synth)
        for length in range(len(partial) + 1):  # every prefix, i.e. every step
            expected = ref.weights(partial[:length], available, synthesized, pct, use_synth)
            got = sampler.candidate_weights(partial[:length], available=available,
                                            synthesized=synthesized)
            step = f"after {partial[:length]} (pct={pct}, use_synth={use_synth})"
            np.testing.assert_array_equal(np.isnan(got), np.isnan(expected),
                                          err_msg=f"candidate sets differ {step}")
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-9,
                                       err_msg=f"weights differ {step}")


def test_candidate_weights_hand_example_beyond_r_and_synthetic_counts():
    # 3 columns A, B, C with one or two values; R = 2 so a third attribute is
    # weighted by the percentile of its 1- and 2-combinations.
    frame = pd.DataFrame({"A": ["a0", "a1"], "B": ["b0", "b1"], "C": ["c0", "c1"]})
    schema = TableEncoder(missing="absent").fit(frame).public_schema()
    # ids: A: 0, 1; B: 2, 3; C: 4, 5
    combos = {(0,): 10, (1,): 4, (2,): 8, (3,): 6, (4,): 9, (5,): 5,
              (0, 2): 7, (0, 4): 6, (2, 4): 5, (0, 5): 3, (1, 3): 4, (3, 5): 2,
              (1, 4): 2}
    aggs = make_aggregates(schema, 2, combos)
    sampler = AggregateSeededSampler(95, False).fit(aggs)
    w = sampler.candidate_weights([])
    np.testing.assert_array_equal(w, [10, 4, 8, 6, 9, 5])
    w = sampler.candidate_weights([0])
    # within R: count of the pair; (0, 3) is absent -> 3 is not a candidate
    np.testing.assert_array_equal(w, [np.nan, np.nan, 7, np.nan, 6, 3])
    w = sampler.candidate_weights([0, 2])
    # beyond R: C = c0 (4): counts {(4,): 9, (0, 4): 6, (2, 4): 5} -> p95 of [5, 6, 9]
    # C = c1 (5): (2, 5) absent -> excluded
    assert np.isnan(w[[0, 1, 2, 3, 5]]).all()
    assert w[4] == pytest.approx(np.percentile([5, 6, 9], 95)) == pytest.approx(8.7)
    w = AggregateSeededSampler(0, False).fit(aggs).candidate_weights([0, 2])
    assert w[4] == 5.0
    # use_synthetic_counts: counts minus what was synthesized; weights <= 0 are
    # still reported (the kernel reports them; the sampler never draws them)
    _, index = aggregate_dict(aggs)
    synthesized = np.zeros(len(combos), dtype=np.int64)
    synthesized[index[(0, 2)]] = 7   # weight 0
    synthesized[index[(0, 4)]] = 8   # weight -2
    synthesized[index[(4,)]] = 1
    synth_sampler = AggregateSeededSampler(95, True).fit(aggs)
    w = synth_sampler.candidate_weights([0], synthesized=synthesized)
    np.testing.assert_array_equal(w, [np.nan, np.nan, 0, np.nan, -2, 3])
    w = synth_sampler.candidate_weights([0, 2], synthesized=synthesized)
    assert w[4] == pytest.approx(np.percentile([9 - 1, 6 - 8, 5], 95))
    # an exhausted 1-count removes the candidate
    available = np.array([10, 4, 8, 6, 0, 5])
    w = sampler.candidate_weights([0], available=available)
    np.testing.assert_array_equal(w, [np.nan, np.nan, 7, np.nan, np.nan, 3])


def test_use_synthetic_counts_excludes_exhausted_combinations():
    # a0: 2, b0: 2, (a0, b0): 1.  Without synthetic counts every record is
    # (a0, b0); with them, once (a0, b0) is synthesized its weight is 0 and
    # the second record cannot pair them again.
    frame = pd.DataFrame({"A": ["a0"], "B": ["b0"]})
    schema = TableEncoder(missing="absent").fit(frame).public_schema()
    aggs = make_aggregates(schema, 2, {(0,): 2, (1,): 2, (0, 1): 1})
    for seed in range(20):
        plain = DPMarginalSynthesizer.from_aggregates(aggs, **SDS, random_state=seed)
        out = plain.sample(exhaust_counts=True)
        assert len(out) == 2 and out.notna().all().all()
        synth = DPMarginalSynthesizer.from_aggregates(aggs, synthesis=AggregateSeededSampler(use_synthetic_counts=True), random_state=seed)
        out = synth.sample(exhaust_counts=True)
        rows = sorted(tuple("-" if pd.isna(v) else v for v in r)
                      for r in out.itertuples(index=False))
        assert rows == [("-", "b0"), ("a0", "-"), ("a0", "b0")]


def _replay(aggs, rng, complete, configs, sizes, events=None):
    """Run kernel and reference on the same seeds; return the kernel's stats."""
    ref = Reference(aggs)
    seen = []
    for pct, use_synth in configs:
        sampler = AggregateSeededSampler(pct, use_synth).fit(aggs)
        for n in sizes:
            rng_seed = int(rng.integers(2**32))
            ids = sampler.sample_ids(n, np.random.default_rng(rng_seed), complete=complete)
            stats = sampler.stats_
            expected_ids, expected_stats = reference_sample(
                ref, -1 if n is None else n, complete=complete, pct=pct,
                use_synth=use_synth, seed=kernel_seed(rng_seed), events=events)
            np.testing.assert_array_equal(ids, expected_ids)
            assert (stats["fallback_records"], stats["fallback_cells"],
                    stats["passes"]) == expected_stats
            seen.append(stats)
    return seen


@pytest.mark.parametrize("reporting_length", [2, 3, 4])
@pytest.mark.parametrize("missing", ["absent", "category"])
@settings(max_examples=4, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_sampling_loop_replays_reference_exactly(reporting_length, missing, seed):
    """Whole sampler (availability, passes, synthetic counts, fallback) vs a
    from-scratch Python replay drawing with the same PRNG stream."""
    aggs, rng = tiny_aggregates(seed, reporting_length, missing, perturbed=bool(seed % 2))
    complete = missing == "category"
    if complete and not Reference(aggs).every_column_released():
        return  # complete records are impossible (tested elsewhere)
    configs = [(95.0, False), (float(rng.uniform(0, 100)), True)]
    _replay(aggs, rng, complete, configs, (None, aggs.n_records + 2))


@pytest.mark.parametrize("reporting_length", [2, 3])
@pytest.mark.parametrize("missing", ["absent", "category"])
def test_sampling_loop_replay_covers_passes_fallback_and_synthetic_counts(
        missing, reporting_length):
    # seed 28: an aggregate on which every rule is exercised (checked below)
    aggs, rng = tiny_aggregates(28, reporting_length, missing, perturbed=True)
    complete = missing == "category"
    events = Counter()
    stats = _replay(aggs, rng, complete, [(95.0, False), (50.0, True), (0.0, True)],
                    (None, 2 * aggs.n_records + 3), events)
    assert max(s["passes"] for s in stats) > 1
    assert events["beyond_r"] > 0 and events["non_positive_weight"] > 0
    assert events["first_by_available"] > 0
    if complete:
        assert min(s["fallback_records"] for s in stats) > 0


@pytest.mark.parametrize("n_columns, reporting_length",
                         [(1, 1), (1, 3), (2, 2), (2, 3), (3, 1), (3, 5)])
@pytest.mark.parametrize("missing", ["absent", "category"])
def test_sampling_loop_replay_with_reporting_length_at_or_above_width(
        n_columns, reporting_length, missing):
    rng = np.random.default_rng(n_columns * 10 + reporting_length)
    frame = random_frame(rng, 10, n_columns, missing_rate=0.1)
    enc = TableEncoder(missing=missing).fit(frame)
    combos = combination_counts(attribute_ids(enc, frame), reporting_length)
    aggs = make_aggregates(enc.public_schema(), reporting_length, combos, 10)
    ref = Reference(aggs)
    for partial in ([], [0], list(range(0, ref.n_attr, max(ref.n_attr // n_columns, 1)))):
        partial = [a for i, a in enumerate(partial)
                   if ref.column_of[a] not in {ref.column_of[b] for b in partial[:i]}]
        np.testing.assert_allclose(
            AggregateSeededSampler().fit(aggs).candidate_weights(partial),
            ref.weights(partial, ref.one_counts, np.zeros(len(combos), np.int64), 95, False))
    _replay(aggs, rng, missing == "category", [(95.0, False), (50.0, True)], (None, 25))


def test_first_record_distribution_matches_reference():
    """Frequencies of sampled records vs the exact distribution enumerated
    from the reference rules (counts scaled so depletion is negligible)."""
    aggs, _ = tiny_aggregates(11, 2, "absent", perturbed=True)
    combos, _ = aggregate_dict(aggs)
    scale = 10**6
    scaled = make_aggregates(aggs.schema, 2, {k: v * scale for k, v in combos.items()})
    ref = Reference(scaled)
    zero = np.zeros(len(ref.combos), dtype=np.int64)
    probabilities = Counter()

    def walk(record, p):
        w = ref.weights(record, ref.one_counts, zero, 95, False)
        positive = {a: w[a] for a in range(ref.n_attr) if not np.isnan(w[a]) and w[a] > 0}
        if not positive:
            probabilities[frozenset(record)] += p
            return
        total = sum(positive.values())
        for a, wa in positive.items():
            walk(record + [a], p * wa / total)

    walk([], 1.0)
    assert len(probabilities) > 5
    n = 20000
    ids = AggregateSeededSampler().fit(scaled).sample_ids(n, np.random.default_rng(5),
                                                          complete=False)
    observed = Counter(frozenset(int(a) for a in row if a >= 0) for row in ids)
    assert set(observed) <= set(probabilities)
    for record, p in probabilities.items():
        freq = observed[record] / n
        assert abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / n) + 2 / n, (sorted(record), freq, p)


# ================================================= fallback (missing="category")
def test_fallback_prefers_longest_released_support():
    """A dead end on C after (a0, b0) is filled with c0 (its pairs with a0 and
    b0 are released, though its 1-count is used up), never with the far more
    frequent c1 (whose pairs are not)."""
    frame = pd.DataFrame({"A": ["a0", "a1"], "B": ["b0", "b0"], "C": ["c0", "c1"]})
    schema = TableEncoder().fit(frame).public_schema()
    # ids: A: a0 0, a1 1, <missing> 2; B: b0 3, <missing> 4; C: c0 5, c1 6, <missing> 7
    combos = {(0,): 10, (1,): 10, (3,): 20, (5,): 1, (6,): 10,
              (0, 3): 10, (0, 5): 1, (3, 5): 1, (1, 6): 10}
    aggs = make_aggregates(schema, 2, combos)
    synth = DPMarginalSynthesizer.from_aggregates(aggs, **SDS, random_state=0)
    out = synth.sample(400)
    assert out.notna().all().all()
    ab = out[(out.A == "a0") & (out.B == "b0")]
    assert len(ab) > 50 and (ab.C == "c0").all()
    assert set(map(tuple, out.to_numpy().tolist())) <= {
        ("a0", "b0", "c0"), ("a1", "b0", "c1")}
    stats = synth.sampling_stats_
    assert stats["fallback_records"] > 0 and stats["empty_cell_share"] == 0.0


def test_complete_mode_requires_a_released_value_per_column():
    frame = pd.DataFrame({"A": ["a0"], "B": ["b0"]})
    schema = TableEncoder().fit(frame).public_schema()  # A: 0, <m> 1; B: 2, <m> 3
    aggs = make_aggregates(schema, 2, {(0,): 5})
    with pytest.raises(ValueError, match="complete records"):
        DPMarginalSynthesizer.from_aggregates(aggs, **SDS, random_state=0).sample(3)
    schema = TableEncoder(missing="absent").fit(frame).public_schema()
    aggs = make_aggregates(schema, 2, {(0,): 5})
    out = DPMarginalSynthesizer.from_aggregates(aggs, **SDS, random_state=0).sample(3)
    assert out.A.tolist() == ["a0"] * 3 and out.B.isna().all()


# ============================================ 2. no-target mode (exhaust_counts)
@pytest.mark.parametrize("use_synth", [False, True])
@pytest.mark.parametrize("pct", [95, 0])
def test_exhaust_counts_reproduces_one_counts_exactly(use_synth, pct):
    rng = np.random.default_rng(1)
    frame = random_frame(rng, 3000, 6, missing_rate=0.1, n_values=(2, 5))
    est = DPMarginalSynthesizer(synthesis=AggregateSeededSampler(weight_selection_percentile=pct, use_synthetic_counts=use_synth), epsilon=2.0, reporting_length=3, random_state=0,
                                encoder=TableEncoder(missing="absent")).fit(frame)
    aggs = est.aggregates_
    out = est.sample(exhaust_counts=True)
    ids = synthetic_ids(aggs, out)
    n_attr = int(aggs.encoder.offsets_[-1])
    synthetic = np.bincount(ids[ids >= 0], minlength=n_attr)
    expected = np.zeros(n_attr, dtype=np.int64)
    expected[aggs.tuples[0][:, 0]] = aggs.counts[0]
    np.testing.assert_array_equal(synthetic, expected)
    assert est.sampling_stats_["passes"] == 1
    assert est.sampling_stats_["n_records"] == len(out) >= aggs.counts[0].max()
    with pytest.raises(ValueError, match="exhaust_counts"):
        est.sample(5, exhaust_counts=True)


def test_exhaust_counts_in_category_mode_uses_every_one_count():
    """With the fallback, exhausted values may be placed again: the synthetic
    1-way counts are then >= the DP 1-counts (never below)."""
    aggs, _ = tiny_aggregates(28, 2, "category", perturbed=True)
    synth = DPMarginalSynthesizer.from_aggregates(aggs, **SDS, random_state=0)
    out = synth.sample(exhaust_counts=True)
    ids = synthetic_ids(aggs, out)
    n_attr = int(aggs.encoder.offsets_[-1])
    synthetic = np.bincount(ids.ravel(), minlength=n_attr)
    expected = np.zeros(n_attr, dtype=np.int64)
    expected[aggs.tuples[0][:, 0]] = aggs.counts[0]
    assert (synthetic >= expected).all() and (synthetic[expected == 0] == 0).all()
    assert synthetic.sum() - expected.sum() <= synth.sampling_stats_["fallback_cells"]


@pytest.mark.parametrize("missing", ["absent", "category"])
def test_empty_aggregates_cannot_be_sampled(missing):
    frame = pd.DataFrame({"A": ["a0"], "B": ["b0"]})
    schema = TableEncoder(missing=missing).fit(frame).public_schema()
    aggs = DPAggregates(schema, 2, [], [], 0, PRIVACY)
    synth = DPMarginalSynthesizer.from_aggregates(aggs, **SDS, random_state=0)
    with pytest.raises(ValueError):
        synth.sample(5)
    assert np.isnan(AggregateSeededSampler().fit(aggs).candidate_weights([])).all()


# ========================================= 3. constraints and sampling_stats_
def _check_stats(stats, out, n_columns):
    n = len(out)
    assert stats["n_records"] == n
    assert 0 <= stats["fallback_records"] <= n
    assert stats["fallback_records"] <= stats["fallback_cells"] \
        <= stats["fallback_records"] * max(n_columns - 1, 0)
    assert stats["fallback_cells"] <= n * n_columns
    assert stats["fallback_record_share"] == pytest.approx(stats["fallback_records"] / max(n, 1))
    assert stats["fallback_cell_share"] == pytest.approx(
        stats["fallback_cells"] / max(n * n_columns, 1))
    assert 0.0 <= stats["empty_cell_share"] <= 1.0
    assert stats["passes"] >= 1


@pytest.mark.parametrize("use_synth", [False, True])
def test_absent_mode_records_only_hold_released_combinations(use_synth):
    rng = np.random.default_rng(2)
    frame = random_frame(rng, 2000, 7, missing_rate=0.1)
    est = DPMarginalSynthesizer(synthesis=AggregateSeededSampler(use_synthetic_counts=use_synth), epsilon=1.0, reporting_length=3, random_state=0,
                                encoder=TableEncoder(missing="absent")).fit(frame)
    out = est.sample(1500)
    ref = Reference(est.aggregates_)
    ids = synthetic_ids(est.aggregates_, out)
    assert len(out) == 1500
    for row in ids.tolist():
        record = [a for a in row if a >= 0]
        assert record and not ref.violations(record)
    stats = est.sampling_stats_
    _check_stats(stats, out, frame.shape[1])
    assert stats["fallback_records"] == 0 and stats["fallback_cells"] == 0
    assert stats["empty_cell_share"] == pytest.approx(np.mean(ids < 0))
    assert stats["empty_cell_share"] == pytest.approx(out.isna().to_numpy().mean())


@pytest.mark.parametrize("reporting_length", [2, 3])
@pytest.mark.parametrize("use_synth", [False, True])
def test_category_mode_records_complete_and_fallback_share_bounds_violations(
        reporting_length, use_synth):
    rng = np.random.default_rng(4)
    frame = random_frame(rng, 1500, 9, missing_rate=0.03, n_values=(3, 5))
    est = DPMarginalSynthesizer(synthesis=AggregateSeededSampler(use_synthetic_counts=use_synth), epsilon=3.0, reporting_length=reporting_length, random_state=0).fit(frame)
    aggs = est.aggregates_
    out = est.sample()
    assert len(out) == est.n_records_
    ref = Reference(aggs)
    ids = synthetic_ids(aggs, out)
    released = np.array(ref.one_counts) > 0
    assert (ids >= 0).all()                 # one value per column...
    assert released[ids].all()              # ...always a released 1-way value
    # a missing cell appears only where the missing code was released
    for j, name in enumerate(frame.columns):
        missing_id = int(aggs.encoder.offsets_[j + 1]) - 1
        if not released[missing_id]:
            assert out[name].notna().all()
    violating = sum(bool(ref.violations(row)) for row in ids.tolist())
    stats = est.sampling_stats_
    _check_stats(stats, out, frame.shape[1])
    assert stats["empty_cell_share"] == 0.0
    assert violating / len(out) <= stats["fallback_record_share"]
    # the table is wide enough for dead ends: the fallback is exercised
    assert stats["fallback_records"] > 0


def test_category_mode_sampler_ids_have_no_empty_cell():
    aggs, _ = tiny_aggregates(7, 2, "category", perturbed=True)
    sampler = AggregateSeededSampler().fit(aggs)
    ids = sampler.sample_ids(300, np.random.default_rng(0), complete=True)
    stats = sampler.stats_
    assert ids.shape == (300, len(aggs.schema.columns)) and (ids >= 0).all()
    assert stats["empty_cell_share"] == 0.0


# =================================================== 4. determinism, counts
@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    frame = random_frame(rng, 800, 6, missing_rate=0.05)
    return DPMarginalSynthesizer(**SDS, epsilon=3.0, random_state=0).fit(frame), frame


def test_same_random_state_same_rows(fitted):
    est, frame = fitted
    a = est.sample(200, random_state=7)
    b = est.sample(200, random_state=7)
    pd.testing.assert_frame_equal(a, b)
    c = est.sample(200, random_state=8)
    assert not a.equals(c)
    # None uses the estimator's random_state: stable across calls
    pd.testing.assert_frame_equal(est.sample(50), est.sample(50))
    clone_est = DPMarginalSynthesizer(**SDS, epsilon=3.0, random_state=0).fit(frame)
    pd.testing.assert_frame_equal(clone_est.sample(50), est.sample(50))
    # rows are shuffled, not sorted (SDS sorts them)
    assert not a.equals(a.sort_values(list(a.columns), ignore_index=True))


def test_same_random_state_same_rows_with_binned_columns():
    """Binned columns decode to random values within each bin; those draws
    must follow ``random_state`` too ("same seed, same rows")."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.choice(["x", "y"], 2000),
                          "b": rng.uniform(0, 100, 2000)})
    est = DPMarginalSynthesizer(
        **SDS, epsilon=4.0, random_state=0,
        encoder=TableEncoder(bounds={"b": (0, 100)}, random_state=0)).fit(frame)
    a = est.sample(20, random_state=1)
    b = est.sample(20, random_state=1)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("n_samples", [0, 1, 7, 333])
def test_n_samples_exact(fitted, n_samples):
    est, frame = fitted
    out = est.sample(n_samples)
    assert out.shape == (n_samples, frame.shape[1])
    assert list(out.columns) == list(frame.columns)
    assert est.sampling_stats_["n_records"] == n_samples


def test_default_n_samples_is_dp_count_and_new_passes(fitted):
    est, frame = fitted
    assert len(est.sample()) == est.n_records_
    # one pass holds at most sum(1-counts) / n_columns complete records
    total = int(est.aggregates_.counts[0].sum())
    big = 2 * total // frame.shape[1] + 10
    out = est.sample(big)
    assert len(out) == big and est.sampling_stats_["passes"] > 1
    assert out.notna().any().all()


@pytest.mark.parametrize("bad", [-1, 2.5, True, "3"])
def test_invalid_n_samples(fitted, bad):
    with pytest.raises(ValueError):
        fitted[0].sample(bad)


# ============================================== 5. dtype and column round trip
_NONE = object()


def _dtype_frame(n, rng):
    def pick(values, missing=_NONE, rate=0.25):
        out = np.array(values, dtype=object)[rng.integers(0, len(values), n)]
        if missing is not _NONE:
            out[rng.random(n) < rate] = missing
        return out

    return pd.DataFrame({
        "obj": pd.Series(pick(["a", "b", "c"], None), dtype=object),
        "pystr": pd.Series(pick(["u", "v"], np.nan), dtype="str"),
        "string": pd.Series(pick(["p", "q", "r"], pd.NA), dtype="string"),
        "cat": pd.Series(pd.Categorical(pick(["lo", "mid", "hi"], np.nan),
                                        categories=["lo", "mid", "hi"], ordered=True)),
        "flag": pd.Series(pick([True, False]).astype(bool)),
        "int": pd.Series(pick([1, 5, 9]).astype(np.int64)),
        "Int": pd.Series(pick([10, 20], pd.NA), dtype="Int64"),
        "boolean": pd.Series(pick([True, False], pd.NA), dtype="boolean"),
        "float": pd.Series(pick([0.5, 1.5, 2.5], np.nan).astype(float)),
        "when": pd.Series(pd.to_datetime(pick(["2020-01-01", "2021-06-30"], None))),
        "when_tz": pd.Series(pd.to_datetime(pick(["2020-01-01", "2021-06-30"], None))
                             .tz_localize("Europe/Paris")),
        "delta": pd.Series(pd.to_timedelta(pick(["1D", "2h"], None))),
        "f32": pd.Series(pick([0.5, 1.5], np.nan).astype(np.float32)),
        "u8": pd.Series(pick([1, 2]).astype(np.uint8)),
        "Float": pd.Series(pick([0.25, 0.75], pd.NA), dtype="Float64"),
        "objint": pd.Series(pick([1, 2], None), dtype=object),
    })


@pytest.mark.parametrize("missing", ["category", "absent"])
def test_dtype_and_column_round_trip(missing):
    rng = np.random.default_rng(9)
    frame = _dtype_frame(3000, rng)
    est = DPMarginalSynthesizer(**SDS, epsilon=8.0, reporting_length=2, random_state=0,
                                encoder=TableEncoder(missing=missing)).fit(frame)
    out = est.sample(2000)
    assert list(out.columns) == list(frame.columns)
    for name in frame.columns:
        original, synthetic = frame[name], out[name]
        values = set(original.dropna().tolist())
        assert set(synthetic.dropna().tolist()) <= values, name
        if missing == "category":
            assert synthetic.dtype == original.dtype, name
            assert synthetic.isna().any() == original.isna().any(), name
        else:  # empty cells may turn an int/bool column nullable (documented)
            nullable = {"int64": "Int64", "uint8": "UInt8", "bool": "boolean"}
            assert str(synthetic.dtype) in (str(original.dtype),
                                            nullable.get(str(original.dtype))), name
    if missing == "category":
        # released missing values come back with the marker of the column's dtype
        # (object: NaN, whatever the data used), never one chosen by the data
        assert out["obj"].isna().any() and out["string"].isna().any()
        assert all(isinstance(v, float) and np.isnan(v) for v in out["obj"] if pd.isna(v))
        assert all(v is pd.NA for v in out["string"] if pd.isna(v))


def test_binned_numeric_column_round_trip():
    rng = np.random.default_rng(10)
    frame = pd.DataFrame({"x": rng.normal(50, 15, 2000).clip(0, 100),
                          "n": rng.integers(0, 40, 2000),
                          "c": rng.choice(["a", "b"], 2000)})
    frame.loc[rng.random(2000) < 0.1, "x"] = np.nan
    encoder = TableEncoder(bounds={"x": (0, 100), "n": (0, 39)}, n_bins=5)
    est = DPMarginalSynthesizer(**SDS, epsilon=4.0, random_state=0, encoder=encoder).fit(frame)
    out = est.sample(500)
    assert out.dtypes.to_dict() == frame.dtypes.to_dict()
    assert out["x"].dropna().between(0, 100).all() and out["x"].isna().any()
    assert out["n"].between(0, 39).all()
    # a sampled value falls in the bin the aggregates' encoder assigns it
    codes = est.aggregates_.encoder.transform(out)
    assert (codes >= 0).all()


def test_numpy_input_gives_numpy_output():
    rng = np.random.default_rng(0)
    X = random_frame(rng, 500, 3).to_numpy()
    est = DPMarginalSynthesizer(**SDS, epsilon=4.0, random_state=0).fit(X)
    out = est.sample(10)
    assert isinstance(out, np.ndarray) and out.shape == (10, 3)
    assert set(out.ravel().tolist()) <= set(X.ravel().tolist())


# ================================================== 6. privacy boundary
@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_sampling_from_loaded_aggregates_without_private_state(tmp_path, fmt):
    rng = np.random.default_rng(5)
    frame = random_frame(rng, 1000, 5, missing_rate=0.1)
    est = DPMarginalSynthesizer(**SDS, epsilon=2.0, random_state=0).fit(frame)
    path = tmp_path / f"aggregates.{fmt}"
    est.aggregates_.save(path)
    loaded = DPAggregates.load(path)
    from_file = DPMarginalSynthesizer.from_aggregates(loaded, **SDS, random_state=0)
    assert not hasattr(from_file, "encoder_")
    # the fitted estimator without its private encoder and without the data
    del est.encoder_
    del frame
    gc.collect()
    a = est.sample(300, random_state=3)
    b = from_file.sample(300, random_state=3)
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(est.sample(), from_file.sample())  # both seeded 0
    assert from_file.sample().shape[0] == loaded.n_records


def test_sample_only_reads_the_aggregates(monkeypatch):
    """``sample`` must not call anything fitted on the private table."""
    rng = np.random.default_rng(6)
    frame = random_frame(rng, 500, 4)
    est = DPMarginalSynthesizer(**SDS, epsilon=4.0, random_state=0).fit(frame)
    expected = est.sample(100, random_state=1)

    def forbidden(*args, **kwargs):
        raise AssertionError("sample touched the training-time encoder")

    monkeypatch.setattr(est.encoder_, "transform", forbidden)
    monkeypatch.setattr(est.encoder_, "inverse_transform", forbidden)
    monkeypatch.setattr(TableEncoder, "fit", forbidden)
    pd.testing.assert_frame_equal(est.sample(100, random_state=1), expected)


# ======================================================== 7. y handling
def _target(kind, raw):
    labels = np.array(["n", "p", "q"])[raw]
    with_missing = np.where(raw == 2, None, labels).astype(object)
    return {
        "category": lambda: pd.Series(pd.Categorical(labels)),
        "int": lambda: pd.Series(raw.astype(np.int64)),
        "str": lambda: pd.Series(labels, dtype="str"),
        "float": lambda: pd.Series(np.where(raw == 2, np.nan, raw / 2)),
        "datetime_tz": lambda: pd.Series(pd.to_datetime(
            np.where(raw == 2, None, np.array(["2020-01-01", "2021-01-01"])[raw % 2])
        ).tz_localize("UTC")),
        "Int64": lambda: pd.Series(pd.array(np.where(raw == 2, None, raw).tolist(),
                                            dtype="Int64")),
        "boolean": lambda: pd.Series(pd.array(np.where(raw == 2, None, raw == 1).tolist(),
                                              dtype="boolean")),
        "string": lambda: pd.Series(with_missing, dtype="string"),
        "object": lambda: pd.Series(with_missing, dtype=object),
    }[kind]().rename("label")


@pytest.mark.parametrize("y_kind", [
    "category", "int", "str", "float", "datetime_tz",
    "Int64",
    "boolean",
    "string",
    "object",
])
def test_fit_with_y_returns_x_and_y(tmp_path, y_kind):
    rng = np.random.default_rng(8)
    X = random_frame(rng, 800, 4)
    raw = rng.integers(0, 3, size=len(X))
    y = _target(y_kind, raw)
    est = DPMarginalSynthesizer(**SDS, epsilon=4.0, random_state=0).fit(X, y)
    Xs, ys = est.sample(120)
    assert list(Xs.columns) == list(X.columns)
    assert isinstance(ys, pd.Series) and ys.name == "label"
    assert len(Xs) == len(ys) == 120
    assert set(ys.dropna().tolist()) <= set(y.dropna().tolist())
    if y_kind == "category":  # undeclared dtype categories: the published values' dtype
        assert isinstance(ys.dtype, pd.CategoricalDtype)
        assert ys.cat.categories.dtype == pd.Index(list(ys.cat.categories)).dtype
        if set(ys.cat.categories) == set(y.cat.categories):  # every value released
            assert ys.dtype == y.dtype
        assert set(ys.cat.categories) <= set(y.cat.categories)
    else:
        assert ys.dtype == y.dtype
    # the target survives the aggregates' round trip
    path = tmp_path / "aggs.json"
    est.aggregates_.save(path)
    loaded = DPMarginalSynthesizer.from_aggregates(DPAggregates.load(path), **SDS,
                                                   random_state=0)
    Xl, yl = loaded.sample(120)
    pd.testing.assert_frame_equal(Xl, Xs)
    pd.testing.assert_series_equal(yl, ys)


def test_unnamed_y_and_numpy_input():
    rng = np.random.default_rng(8)
    X = random_frame(rng, 500, 3)
    raw = rng.integers(0, 3, size=len(X))
    _, y = DPMarginalSynthesizer(**SDS, epsilon=4.0, random_state=0).fit(X, raw).sample(5)
    assert y.name == "y" and y.dtype == np.int64
    Xs, ys = DPMarginalSynthesizer(**SDS, epsilon=4.0, random_state=0).fit(
        X.to_numpy(), raw).sample(7)
    assert isinstance(Xs, np.ndarray) and Xs.shape == (7, 3)
    assert isinstance(ys, np.ndarray) and ys.shape == (7,) and ys.dtype == np.int64
