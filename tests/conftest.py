"""Test configuration: hypothesis profiles for the property-based suites.

- ``ci`` (default): hypothesis's usual 100 examples per test; the fuzz suite
  (``tests/test_fuzz.py``) runs a quarter of them per test (bounded: the
  file takes under two minutes on a shared 2-core machine);
- ``long``: 4,000 examples per test, so the fuzz suite runs 1,000 cases per
  test, over 10,000 in all (its result is in benchmarks/LOG.md);
- ``dev``: a handful of cases per test, for quick edits.

Select one with ``pytest --hypothesis-profile=long`` or the environment
variable ``DPSYNTH_HYPOTHESIS_PROFILE=long``.
"""

import os

from hypothesis import HealthCheck, settings

_COMMON = dict(deadline=None, derandomize=False, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                      HealthCheck.filter_too_much])

settings.register_profile("ci", max_examples=100, **_COMMON)
settings.register_profile("dev", max_examples=20, **_COMMON)
settings.register_profile("long", max_examples=4000, **_COMMON)
settings.load_profile(os.environ.get("DPSYNTH_HYPOTHESIS_PROFILE", "ci"))
