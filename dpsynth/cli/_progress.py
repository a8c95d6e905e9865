"""The command line's progress display: a logging handler for ``log_progress`` records.

The library reports progress as ``INFO`` records of the ``"dpsynth"``
logger (see :mod:`dpsynth.utils._progress`); nothing is read from stdout.
:class:`ProgressHandler` shows them on stderr: a tqdm bar per task label
when tqdm is installed and stderr is a terminal, the messages as lines with
``-v``, nothing otherwise (so scripts and pipes see only the results).
"""

import contextlib
import logging
import sys

from ..utils._progress import PROGRESS_KEY, progress_logger

__all__ = ["ProgressHandler", "show_progress"]


def _tqdm():
    try:
        from tqdm import tqdm  # optional dependency: a progress bar when installed
    except ImportError:
        return None
    return tqdm


class ProgressHandler(logging.Handler):
    """Show dpsynth progress records on a stream.

    Parameters
    ----------
    verbose : bool
        Print each record's message as a line.
    stream : file-like, default=None
        Where to show progress; None means ``sys.stderr``.
    """

    def __init__(self, *, verbose, stream=None):
        super().__init__(logging.INFO)
        self.stream = sys.stderr if stream is None else stream
        self.verbose = verbose
        isatty = getattr(self.stream, "isatty", None)
        self._tqdm = _tqdm() if isatty is not None and isatty() else None
        self.bar = None
        self._label = None

    def emit(self, record):
        try:
            message = record.getMessage()
            progress = getattr(record, PROGRESS_KEY, None)
            if self._tqdm is not None and progress is not None:
                self._advance(*progress, message)
            elif self.verbose:
                self._print(message)
        except Exception:  # never let the display break a command
            self.handleError(record)

    def _advance(self, done, total, label, message):
        if self.bar is None or (label, total) != self._label:  # a new task: a new bar
            self._close_bar()
            self.bar = self._tqdm(total=total, file=self.stream, desc=label, leave=False,
                                  unit="step")
            self._label = (label, total)
        self.bar.n = done
        self.bar.set_postfix_str(message.split(",")[0], refresh=False)
        self.bar.refresh()
        if self.verbose:
            self.bar.write(message, file=self.stream)

    def _print(self, message):
        if self.bar is not None:
            self.bar.write(message, file=self.stream)
        else:
            print(message, file=self.stream, flush=True)

    def _close_bar(self):
        if self.bar is not None:
            self.bar.close()
        self.bar, self._label = None, None

    def close(self):
        self._close_bar()
        super().close()


@contextlib.contextmanager
def show_progress(verbose, stream=None):
    """Install a :class:`ProgressHandler` on the ``"dpsynth"`` logger for the block.

    The logger's level and propagation are restored afterwards, so the
    command line leaves no trace on an application's logging set-up.

    Parameters
    ----------
    verbose : bool
        Print every message as a line.
    stream : file-like, default=None
        None means ``sys.stderr``.

    Yields
    ------
    ProgressHandler
    """
    logger = progress_logger()
    handler = ProgressHandler(verbose=verbose, stream=stream)
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate
        handler.close()
