"""``dpsynth sample``: synthetic records from a released DP aggregates file."""

from ..aggregates import DPAggregates
from ..synthesizer import DPMarginalSynthesizer
from . import _common, _distributed

__all__ = ["run"]


def load_aggregates(path):
    """Load and fully check an aggregates file (errors become one line)."""
    _common.check_inputs(path, what="aggregates file")
    try:
        return DPAggregates.load(path)
    except ValueError as exc:
        raise _common.CommandError(_common.one_line(exc)) from None


def run(args):
    """Check the aggregates file completely, then sample it in chunks into one CSV.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of the command (see ``dpsynth sample --help``).

    Returns
    -------
    int
        Exit status 0; errors raise :class:`~dpsynth.cli._common.CommandError`
        (or ``ValueError``/``OSError``), reported by :func:`dpsynth.cli.main`.
    """
    _distributed.check_engine_options(args)
    parquet = _distributed.parquet_output(args, args.output)
    _common.check_inputs(args.aggregates, what="aggregates file")
    if parquet:
        _distributed.check_partition_output(args.output, args.force)
    else:
        _common.check_outputs([("--output", args.output)], inputs=[args.aggregates],
                              force=args.force)
    _common.check_n_samples(args.n_samples)
    _common.check_n_jobs(args.n_jobs)
    aggregates = load_aggregates(args.aggregates)
    synthesizer = DPMarginalSynthesizer.from_aggregates(
        aggregates, random_state=args.seed, n_jobs=args.n_jobs)
    _common.check_samplable(aggregates, args.aggregates)
    if parquet:
        with _distributed.engine_client(args):
            written = _distributed.write_partitions(synthesizer, args.n_samples, args.output,
                                                    args.seed, args.partition_size,
                                                    args.force)
    else:
        _common.check_free_space(synthesizer, args.n_samples, args.output)
        written = _common.write_records(synthesizer, args.n_samples, args.output, args.seed)
    print(_common.aggregates_line(aggregates))
    print(f"released with {_common.privacy_terms(aggregates.privacy)}; "
          "sampling spends no more")
    print(f"wrote {written} synthetic records to {args.output}")
    return 0
