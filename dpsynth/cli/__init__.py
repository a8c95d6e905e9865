"""The ``dpsynth`` command: synthesize, aggregate, sample, evaluate, demo.

Every command reads CSV files as text (see :func:`dpsynth.io.read_csv`),
checks everything that can fail before spending privacy budget, reports bad
input as one line on stderr with exit status 1 (never a traceback, unless
``--traceback``), refuses to overwrite an existing output without
``--force`` and never overwrites an input, and writes each output through
:func:`dpsynth.utils._files.atomic_write`, so an output is complete or
absent, also when the command is interrupted or terminated (``SIGTERM``).

Run ``dpsynth demo`` for an end-to-end example, ``dpsynth COMMAND --help``
for the options of a command.
"""

import os
import sys
import warnings

from ..utils._files import Terminated, raise_on_sigterm
from ._common import CommandError, one_line
from ._parser import build_parser
from ._progress import show_progress

__all__ = ["main"]

_EXPECTED_ERRORS = (CommandError, ValueError, TypeError, OSError)
_BROKEN_PIPE = 141  # 128 + SIGPIPE: what the shell reports for `cat big | head`


def _broken_pipe():
    """Exit quietly when stdout's reader is gone (``dpsynth evaluate ... | head``).

    As ``cat`` or ``git`` killed by ``SIGPIPE``: status 141, no message.
    stdout is pointed at the null device so that the interpreter's final
    flush does not fail again.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file behind stdout
        pass
    return _BROKEN_PIPE


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"dpsynth: warning: {one_line(message)}", file=sys.stderr)


def main(argv=None):
    """Run the ``dpsynth`` command line.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments without the program name; None reads ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit status: 0 on success, 1 on an error (reported on one line of
        stderr), 130 when interrupted, 143 when terminated by ``SIGTERM``,
        141 (silently) when the reader of stdout goes away, as ``| head`` does.
        Usage errors exit with status 2 via ``SystemExit``, as in every
        argparse program.
    """
    args = build_parser().parse_args(argv)
    if getattr(args, "missing", None) == "absent":
        print(f"dpsynth {args.command}: note: --missing absent is now called "
              "--missing uncounted", file=sys.stderr)
    try:
        with raise_on_sigterm(), warnings.catch_warnings(), \
                show_progress(getattr(args, "verbose", False)):
            warnings.showwarning = _show_warning
            code = args.func(args)
            sys.stdout.flush()  # a closed pipe fails here, not at the interpreter's exit
            return code
    except BrokenPipeError:
        return _broken_pipe()
    except KeyboardInterrupt:
        print("dpsynth: interrupted", file=sys.stderr)
        return 130
    except Terminated as exc:
        print("dpsynth: terminated", file=sys.stderr)
        return exc.code
    except _EXPECTED_ERRORS as exc:
        if args.traceback:
            raise
        print(f"dpsynth {args.command}: error: {one_line(exc)}", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug: still one line, with a way to see more
        if args.traceback:
            raise
        print(f"dpsynth {args.command}: error: internal error ({type(exc).__name__}): "
              f"{one_line(exc)}; run again with --traceback and report it",
              file=sys.stderr)
        return 1
