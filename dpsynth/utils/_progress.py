"""Progress reports through the standard :mod:`logging` module.

Library code reports progress with :func:`log_progress`: an ``INFO`` record
on the ``"dpsynth"`` logger whose ``extra`` carries
``dpsynth_progress=(done, total, label)``.  Nothing is shown unless the
application configures logging (Python's last-resort handler ignores
``INFO``); the ``dpsynth`` command line installs a handler that drives a
progress bar or prints the messages.  Progress messages must not contain
anything computed from private data other than DP outputs.

To see progress in a script::

    import logging
    logging.basicConfig(level=logging.INFO)  # or a handler on "dpsynth" only
"""

import contextlib
import logging

__all__ = ["PROGRESS_KEY", "log_progress", "muted_progress", "progress_logger"]

PROGRESS_KEY = "dpsynth_progress"
_LOGGER_NAME = "dpsynth"


def progress_logger():
    """The ``"dpsynth"`` logger that progress records go to.

    Returns
    -------
    logging.Logger
    """
    return logging.getLogger(_LOGGER_NAME)


def log_progress(done, total, label, message):
    """Report that ``done`` of ``total`` steps of ``label`` are finished.

    Parameters
    ----------
    done : int
        Steps finished so far (0 announces the start of a task).
    total : int or None
        Number of steps of the task, None if unknown.
    label : str
        Short name of the task, e.g. ``"marginals"`` or ``"sampling"``; a
        new label starts a new bar.
    message : str
        One line for humans, e.g. ``"length 2: 41 released"``; only DP
        outputs and public parameters may appear in it.
    """
    logger = progress_logger()
    if logger.isEnabledFor(logging.INFO):
        logger.info(message, extra={PROGRESS_KEY: (int(done), total, str(label))})


class _MuteLabel(logging.Filter):
    def __init__(self, label):
        super().__init__()
        self.label = label

    def filter(self, record):
        progress = getattr(record, PROGRESS_KEY, None)
        return progress is None or progress[2] != self.label


@contextlib.contextmanager
def muted_progress(label):
    """Drop the progress records of task ``label`` inside the block.

    For a caller that reports the same task itself at a coarser grain (the
    command line's chunked sampling reports each chunk, not each ``sample``
    call inside it).

    Parameters
    ----------
    label : str
    """
    logger = progress_logger()
    mute = _MuteLabel(label)
    logger.addFilter(mute)
    try:
        yield
    finally:
        logger.removeFilter(mute)
