"""Atomic file writes: an output is either complete or absent.

:func:`atomic_write` yields a temporary path in the target's directory; the
caller writes the whole file there, and only when the ``with`` block ends
without an error is the file flushed to disk (``fsync``) and renamed onto
the target (``os.replace``, atomic on POSIX and Windows).  On any error,
including ``KeyboardInterrupt`` and ``SystemExit``, the temporary file is
removed and the target is left as it was.

A symbolic link is followed: its target is replaced, the link stays.  An
existing file that is not a regular file (a device such as ``/dev/null``, a
named pipe) is written through, never replaced: renaming a file onto it
would destroy the node.  :func:`output_target` tells which case a path is.

A process killed by ``SIGTERM`` runs no ``finally`` block unless a handler
turns the signal into an exception: the command line installs
:func:`raise_on_sigterm` for that.  Nothing can clean up after ``SIGKILL``;
the leftover is then a hidden ``.NAME.*.tmp`` file beside the target, never
a half-written target.
"""

import contextlib
import os
import signal
import stat
import tempfile

__all__ = ["Terminated", "atomic_write", "output_target", "raise_on_sigterm"]


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_file(path):
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _fsync_directory(directory):
    """Make a rename durable; not possible on every platform (e.g. Windows)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def output_target(path):
    """Where a write to ``path`` lands, and how.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    target : str
        The file written: ``path`` with symbolic links resolved, or ``path``
        itself for a stream.
    kind : {"file", "new", "stream", "directory", "device"}
        ``"file"``: an existing regular file (replaced atomically);
        ``"new"``: nothing there yet (created atomically); ``"stream"``: a
        character device or named pipe (written through in place);
        ``"directory"`` and ``"device"`` (block device, socket): cannot be
        an output.
    """
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode  # follows symbolic links
    except FileNotFoundError:
        return os.path.realpath(path), "new"
    if stat.S_ISREG(mode):
        return os.path.realpath(path), "file"
    if stat.S_ISDIR(mode):
        return path, "directory"
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return path, "stream"
    return path, "device"


@contextlib.contextmanager
def atomic_write(path):
    """Yield a temporary path beside ``path``; move it onto ``path`` on success.

    Parameters
    ----------
    path : str or path-like
        The file to create or replace (through a symbolic link: its
        target).  Its directory must exist.

    Yields
    ------
    str
        A new, empty file in the same directory (so the final rename never
        crosses file systems), with the permissions a new file would get
        (``0o666`` minus the umask).  Write the complete output there, by
        name (``frame.to_csv(tmp)``) or by opening it.  For a character
        device or named pipe: ``path`` itself, written in place.

    Raises
    ------
    OSError
        If the directory does not exist or is not writable, or the write,
        flush or rename fails; the target is then unchanged.

    Examples
    --------
    >>> import os, tempfile
    >>> from dpsynth.utils._files import atomic_write
    >>> target = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_write(target) as tmp:
    ...     with open(tmp, "w") as handle:
    ...         _ = handle.write("complete")
    >>> open(target).read()
    'complete'
    """
    path = os.fspath(path)
    target, kind = output_target(path)
    if kind == "stream":  # /dev/null, a pipe: no rename can replace it safely
        yield path
        return
    if kind == "directory":
        raise IsADirectoryError(f"Cannot write {path!r}: it is a directory.")
    if kind == "device":
        raise OSError(f"Cannot write {path!r}: it is a block device or socket, not a file.")
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"Cannot write {path!r}: the directory {directory!r} "
                                "does not exist.")
    descriptor, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.",
                                             suffix=".tmp", dir=directory)
    try:
        os.close(descriptor)
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes it 0600
        yield temporary
        _fsync_file(temporary)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_directory(directory)


class Terminated(SystemExit):
    """Raised by the handler of :func:`raise_on_sigterm` (exit status 143)."""

    def __init__(self):
        super().__init__(128 + signal.SIGTERM)


def _raise_terminated(signum, frame):
    raise Terminated()


@contextlib.contextmanager
def raise_on_sigterm():
    """Turn ``SIGTERM`` into a :class:`Terminated` exception inside the block.

    ``finally`` blocks and context managers (such as :func:`atomic_write`)
    then clean up when a job scheduler or ``kill`` stops the process.  Only
    the main thread can install signal handlers; elsewhere this does nothing.
    The previous handler is restored on exit.
    """
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
