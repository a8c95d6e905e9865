"""``dpsynth schema draft``: a declaration drafted from a CSV file, for its owner to edit."""

import json
import sys

from .. import io
from ..utils._files import atomic_write
from . import _common

__all__ = ["run_draft"]


def run_draft(args):
    """Write the draft declaration of ``args.input`` (stdout, or ``-o``).

    The draft holds values of the data, published without DP by every
    release made with it: the file starts with a ``"_warning"`` saying so,
    and a note on stderr repeats it.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of the command (see ``dpsynth schema draft --help``).

    Returns
    -------
    int
        Exit status 0; errors raise :class:`~dpsynth.cli._common.CommandError`
        (or ``ValueError``/``OSError``), reported by :func:`dpsynth.cli.main`.
    """
    _common.check_inputs(args.input)
    if args.output is not None:
        _common.check_outputs([("--output", args.output)], inputs=[args.input],
                              force=args.force)
    if args.max_categories < 0 or args.max_numeric_categories < 0:
        raise _common.CommandError("--max-categories and --max-numeric-categories must be "
                                   "non-negative integers")
    notes = []
    try:
        draft = io.draft_declaration(
            args.input, sep=args.sep, na_values=("", *(args.na_values or ())),
            columns=args.columns, drop=args.drop, header=not args.no_header,
            encoding=args.encoding,
            max_categories=args.max_categories,
            max_numeric_categories=args.max_numeric_categories, notes=notes)
    except ValueError as exc:
        raise _common.CommandError(_common.one_line(exc)) from None
    text = json.dumps({"_warning": io.DRAFT_WARNING, **draft.to_dict()}, indent=2,
                      ensure_ascii=False) + "\n"
    if args.output is None:
        sys.stdout.write(text)
    else:
        with atomic_write(args.output) as temporary:
            with open(temporary, "w", encoding="utf-8") as handle:
                handle.write(text)
    where = "" if args.output is None else f" written to {args.output}"
    print(f"dpsynth schema draft: warning: the draft{where} holds values of {args.input} "
          "(categories, minima and maxima, complete columns); everything kept in it is "
          "published without differential privacy by releases made with --schema: review "
          "and edit it first", file=sys.stderr)
    for note in notes:
        print(f"dpsynth schema draft: note: {note}", file=sys.stderr)
    return 0
