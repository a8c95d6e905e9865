"""``dpsynth synthesize``: release DP aggregates of a CSV file and write synthetic records."""

from . import _common

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
    outputs = [("--output", args.output)]
    if args.aggregates_out:
        outputs.append(("--aggregates-out", args.aggregates_out))
    _common.check_inputs(args.input)
    _common.check_privacy_options(args)
    _common.check_outputs(outputs, inputs=[args.input], force=args.force)
    _common.check_n_samples(args.n_samples)
    _common.check_n_jobs(args.n_jobs)
    declaration, origins = _common.build_declaration(args)
    frame = _common.read_table(args, args.input, declaration, origins)
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
        written = _common.write_records(synthesizer, args.n_samples, args.output, args.seed)
    except (_common.CommandError, ValueError, OSError) as exc:
        if not args.aggregates_out:
            raise
        if isinstance(exc, _common.CommandError):  # the release itself cannot be sampled
            raise _common.CommandError(f"{_common.one_line(exc)}; the DP aggregates are "
                                       f"saved in {args.aggregates_out}") from None
        raise _common.CommandError(
            f"{_common.one_line(exc)}; the DP aggregates are saved in "
            f"{args.aggregates_out}: sample them again with 'dpsynth sample "
            f"{args.aggregates_out} -o {args.output}'") from None
    print(f"wrote {written} synthetic records to {args.output}")
    return 0
