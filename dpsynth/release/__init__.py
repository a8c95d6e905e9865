"""Marginal release: optimal noise allocation, consistency and adaptive selection.

- :mod:`dpsynth.release.allocation`: given a workload of marginals and a
  budget, choose per-measurement budgets that minimise the total expected
  squared error (Cormode et al. 2012 for measured marginals; ResidualPlanner,
  Xiao et al. 2023, for Gaussian noise), measure, and make the noisy
  marginals exactly consistent by generalised least squares.
- :mod:`dpsynth.release.workload`: adaptive selection of 2- and 3-way
  marginals in the style of AIM (McKenna et al. 2022), scored on a synthetic
  population fitted by marginal matching, accounted in zCDP.
- :mod:`dpsynth.release.fitting`: fitting a population of records to dense
  (noisy, consistent, possibly negative) target marginals.
"""
