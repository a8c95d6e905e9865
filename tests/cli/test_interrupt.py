"""Ctrl-C stops the long Cython kernels promptly (issue #14).

Each case runs one long kernel in a child interpreter (counting, descent in
the main thread, descents in two worker threads), sends it SIGINT once the
kernel has started, and checks that the child ends with
``KeyboardInterrupt`` after at most a couple of seconds of its own CPU time
(without the periodic signal checks each would run for tens of seconds).
CPU time rather than wall time, so that a loaded machine does not fail it.
"""

import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGINT") or os.name == "nt",
                                reason="needs POSIX signals")

# every script prints "ready" right before entering a kernel that runs for
# far longer than the test waits; the child reports when the
# KeyboardInterrupt reached Python (its CPU time, and time.monotonic, which is
# system-wide on POSIX), so that the check does not depend on how fast the
# interpreter exits
_REPORT = """
import signal, sys, time
# a shell runs background jobs with SIGINT ignored, and children inherit that:
# install Python's Ctrl-C handler, as an interactive session has it
signal.signal(signal.SIGINT, signal.default_int_handler)
def _run():
    try:
        _kernel()
    except KeyboardInterrupt:
        print(f"interrupted {time.monotonic()!r} {time.process_time()!r}",
              file=sys.stderr, flush=True)
        raise
"""
_SCRIPTS = {
    "counting": """
        import itertools
        import numpy as np
        from dpsynth._core import _counting
        from dpsynth.release.sds import _table
        d, n = 30, 300_000
        column_of = np.repeat(np.arange(d), 2).astype(np.int32)
        ids = (np.arange(d) * 2 + np.random.default_rng(0).integers(0, 2, (n, d))).astype(np.int32)
        def tuples(k):
            out = []
            for cols in itertools.combinations(range(d), k):
                out += itertools.product(*[(2 * c, 2 * c + 1) for c in cols])
            return np.array(out, dtype=np.int32)
        triples = tuples(3)
        bits = _counting.key_bits(2 * d)
        table = _table([(tuples(1), np.full(2 * d, -2)), (tuples(2), np.full(len(tuples(2)), -2)),
                        (triples, np.arange(len(triples)))], bits)
        print("ready", flush=True)
        _counting.record_tuple_counts(ids, 3, bits, *table)
    """,
    "descent": """
        import numpy as np
        from dpsynth._core import _matching
        from dpsynth.model.layout import descent_layout
        rng = np.random.default_rng(0)
        n, d, v, sweeps = 20_000, 6, 30, 400
        records = rng.integers(0, v, (n, d)).astype(np.int32)
        targets = [((i, j), rng.random((v, v)) * n / v**2, 1.0)
                   for i in range(d) for j in range(i + 1, d)]
        layout = descent_layout(records, targets)
        orders = np.tile(np.arange(n, dtype=np.int64), (sweeps, 1))
        columns = np.tile(np.arange(d, dtype=np.int32), (sweeps, 1))
        sizes = np.full(d, v, dtype=np.int32)
        print("ready", flush=True)
        _matching.descend(records, *layout, sizes, np.ones(d * v, dtype=np.uint8),
                          np.arange(d, dtype=np.int64) * v, orders, columns)
    """,
    "threads": """
        import numpy as np
        import pandas as pd
        from dpsynth import DPMarginalSynthesizer
        from dpsynth.sampling import MarginalMatchingSampler
        rng = np.random.default_rng(0)
        base = rng.integers(0, 6, (4000, 1))
        frame = pd.DataFrame((base + rng.integers(0, 3, (4000, 12))) % 8).astype(str)
        frame.columns = [f"c{j}" for j in range(12)]
        aggregates = DPMarginalSynthesizer(release="sds", epsilon=4.0, reporting_length=2,
                                           random_state=0).fit(frame).aggregates_
        matcher = MarginalMatchingSampler(sweeps=200, max_population=20_000,
                                          n_jobs=2).fit(aggregates)
        print("ready", flush=True)
        matcher.sample(40_000, rng)
    """,
}


def _cpu_seconds(pid):
    """CPU time (user + system, all threads) of a running process, or None off Linux."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _child_code(script):
    body = textwrap.indent(textwrap.dedent(script), "    ")
    return _REPORT + "def _kernel():\n" + body + "\n_run()\n"


def test_sigint_stops_long_kernels():
    """The three children run at once, so that the test takes one start-up time."""
    children = {kernel: subprocess.Popen([sys.executable, "-c", _child_code(script)],
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True)
                for kernel, script in _SCRIPTS.items()}
    results = {}
    try:
        for kernel, child in children.items():
            assert child.stdout.readline().strip() == "ready", child.stderr.read()
        time.sleep(0.5)  # every child is inside its kernel by now
        sent = {}
        for kernel, child in children.items():
            assert child.poll() is None, f"{kernel}: the kernel ended before the signal"
            sent[kernel] = (time.monotonic(), _cpu_seconds(child.pid))
            child.send_signal(signal.SIGINT)
        for kernel, child in children.items():
            _, stderr = child.communicate(timeout=30)
            reached = re.search(r"^interrupted (\S+) (\S+)$", stderr, re.MULTILINE)
            wall, cpu = sent[kernel]
            if reached is None:
                elapsed = float("inf")
            elif cpu is None:
                elapsed = float(reached.group(1)) - wall
            else:
                elapsed = float(reached.group(2)) - cpu
            results[kernel] = (elapsed, child.returncode, stderr)
    finally:
        for child in children.values():
            if child.poll() is None:
                child.kill()
                child.communicate()
    for kernel, (elapsed, returncode, stderr) in results.items():
        assert "KeyboardInterrupt" in stderr, f"{kernel}: {stderr}"
        assert returncode != 0, kernel
        assert elapsed < 2.0, f"{kernel} ran {elapsed:.1f} s after the signal"
