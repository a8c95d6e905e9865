"""The model layer: post-processing of noisy marginals, shared by releases and samplers.

Everything here reads DP outputs and public facts only (no privacy cost) and
imports nothing from :mod:`dpsynth.release` or :mod:`dpsynth.sampling`,
which both build on it.  One job per module:

- :mod:`~dpsynth.model.marginal`: :class:`NoisyMarginal`, the noisy marginal
  (or residual) with its noise variance;
- :mod:`~dpsynth.model.residuals`: the residual basis of dense marginals;
- :mod:`~dpsynth.model.consistency`: exactly consistent marginals by
  generalised least squares;
- :mod:`~dpsynth.model.counts`: counts of a population over many column
  sets, on threads;
- :mod:`~dpsynth.model.layout`: the arrays of the descent kernel;
- :mod:`~dpsynth.model.descent`: fitting a population to target marginals;
- :mod:`~dpsynth.model.mixing`: mixing a population within measured
  neighbourhoods;
- :mod:`~dpsynth.model.rounding`: rounding a sample to a larger reference;
- :mod:`~dpsynth.model.dense`: targets and populations from a release's dense
  marginals.
"""
