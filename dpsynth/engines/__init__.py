"""Where the private table lives while a release reads it: counting backends.

A release strategy reads the private table only through sums of per-block
statistics (code counts over dense tables, histograms of values), so one
mechanism serves a table in memory and a table spread over a cluster:

- :class:`~dpsynth.engines.blocks.CodeBlocks`: the encoded table as blocks
  of integer codes; :meth:`~CodeBlocks.map_sum` applies a function to every
  block and adds the results.  :class:`~dpsynth.engines.blocks.InMemoryCodes`
  holds one block (a numpy array).
- :mod:`dpsynth.engines.dask` (optional: the ``dask`` extra, ``pip install -e
  ".[dask]"``): a ``dask.dataframe.DataFrame`` encoded partition by
  partition on the workers (:class:`~dpsynth.engines.dask.DaskCodes`), value
  discovery on partitions, and :func:`~dpsynth.engines.dask.sample_to_parquet`
  writing a synthetic table as Parquet partitions in parallel.

Counts are integers held in float64 (exact below 2**53), so their sum does
not depend on how the rows are split into blocks: the noisy aggregates are
the same, for the same seed, whatever the partitioning.
"""

from .blocks import CodeBlocks, InMemoryCodes, as_blocks, is_dask_collection

__all__ = ["CodeBlocks", "InMemoryCodes", "as_blocks", "is_dask_collection"]
