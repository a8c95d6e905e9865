"""``dpsynth aggregate``: release only the DP aggregates of a CSV file."""

from . import _common, _distributed, synthesize

__all__ = ["run"]


def run(args):
    """Fit on ``args.input`` and save the DP aggregates to ``args.output``.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of the command (see ``dpsynth aggregate --help``).

    Returns
    -------
    int
        Exit status 0; errors raise :class:`~dpsynth.cli._common.CommandError`
        (or ``ValueError``/``OSError``), reported by :func:`dpsynth.cli.main`.
    """
    _distributed.check_engine_options(args)
    inputs = synthesize._check_input(args)
    _common.check_privacy_options(args)
    _common.check_outputs([("--output", args.output)], inputs=inputs, force=args.force)
    declaration, origins = _common.build_declaration(args)
    with _distributed.engine_client(args):
        frame = synthesize.read_input(args, declaration, origins)
        synthesizer = _common.fit(args, frame, declaration)
    _common.save_aggregates(synthesizer.aggregates_, args.output)
    print(_common.aggregates_line(synthesizer.aggregates_))
    print(f"privacy spent: {_common.privacy_terms(synthesizer.privacy_spent_)}")
    print(f"wrote the DP aggregates to {args.output}")
    return 0
