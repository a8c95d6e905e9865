"""``dpsynth synthesize``: release DP aggregates of a CSV file (or, with ``--engine dask``,
CSV/Parquet files) and write synthetic records."""

from . import _common, _distributed

__all__ = ["run"]


def run(args):
    """Fit on ``args.input``, optionally save the aggregates, write the records.

    Everything is checked before fitting.  The aggregates are saved before
    sampling, so a failure while sampling never loses the release: the error
    says how to sample it again.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of the command (see ``dpsynth synthesize --help``).

    Returns
    -------
    int
        Exit status 0; errors raise :class:`~dpsynth.cli._common.CommandError`
        (or ``ValueError``/``OSError``), reported by :func:`dpsynth.cli.main`.
    """
    _distributed.check_engine_options(args)
    parquet = _distributed.parquet_output(args, args.output)
    outputs = [] if parquet else [("--output", args.output)]
    if args.aggregates_out:
        outputs.append(("--aggregates-out", args.aggregates_out))
    inputs = _check_input(args)
    _common.check_privacy_options(args)
    _common.check_outputs(outputs, inputs=inputs, force=args.force)
    if not parquet:
        _common.check_records_output(args.output)
    if parquet:
        _distributed.check_partition_output(args.output, args.force)
    _common.check_n_samples(args.n_samples)
    _common.check_n_jobs(args.n_jobs)
    declaration, origins = _common.build_declaration(args)
    with _distributed.engine_client(args):
        return _release_and_write(args, declaration, origins, parquet)


def _check_input(args):
    """The input files (one, or a glob's with ``--engine dask``), checked."""
    if args.engine == "dask":
        return _distributed.input_files(args.input)[0]
    _common.check_inputs(args.input, engines=True)
    return [args.input]


def read_input(args, declaration, origins):
    """The table of ``args.input``: a DataFrame, or a dask DataFrame with ``--engine dask``."""
    if args.engine == "dask":
        return _distributed.read_distributed(args, args.input, declaration)
    return _common.read_table(args, args.input, declaration, origins)


def _release_and_write(args, declaration, origins, parquet):
    frame = read_input(args, declaration, origins)
    if not parquet:
        _common.check_output_size(args.n_samples, frame.shape[1], args.output)
    synthesizer = _common.fit(args, frame, declaration)
    aggregates = synthesizer.aggregates_
    if args.aggregates_out:
        _common.save_aggregates(aggregates, args.aggregates_out)
    print(_common.aggregates_line(aggregates))
    print(f"privacy spent: {_common.privacy_terms(synthesizer.privacy_spent_)}")
    if args.aggregates_out:
        print(f"wrote the DP aggregates to {args.aggregates_out}")
    try:
        _common.check_samplable(aggregates)
        if parquet:
            written = _distributed.write_partitions(synthesizer, args.n_samples, args.output,
                                                    args.seed, args.partition_size,
                                                    args.force)
        else:
            _common.check_free_space(synthesizer, args.n_samples, args.output)
            written = _common.write_records(synthesizer, args.n_samples, args.output,
                                            args.seed)
    except (_common.CommandError, ValueError, OSError) as exc:
        if not args.aggregates_out or isinstance(exc, BrokenPipeError):
            raise  # a closed pipe (-o /dev/stdout | head) ends quietly
        if isinstance(exc, _common.CommandError):  # the release itself cannot be sampled
            raise _common.CommandError(f"{_common.one_line(exc)}; the DP aggregates are "
                                       f"saved in {args.aggregates_out}") from None
        raise _common.CommandError(
            f"{_common.one_line(exc)}; the DP aggregates are saved in "
            f"{args.aggregates_out}: sample them again with 'dpsynth sample "
            f"{args.aggregates_out} -o {args.output}'") from None
    print(f"wrote {written} synthetic records to {args.output}")
    return 0
