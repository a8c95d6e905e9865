"""Release strategies: how a private table becomes DP aggregates.

- :mod:`dpsynth.release.sds`: Algorithm 1 of the DP-marginals paper with the
  options of Microsoft's Synthetic Data Showcase (every 1..R combination, DP
  percentile contribution bounds, Gaussian noise, thresholds).
"""
