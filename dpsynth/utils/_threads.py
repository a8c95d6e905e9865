"""Threads: how many ``n_jobs`` means, and workers that leave Ctrl-C to the main thread."""

import signal

from joblib import effective_n_jobs

__all__ = ["n_threads", "leave_signals_to_main_thread"]


def n_threads(n_jobs):
    """Threads for ``n_jobs``: ``None`` means every usable processor (cgroup-aware)."""
    return effective_n_jobs(-1 if n_jobs is None else n_jobs)


def leave_signals_to_main_thread():
    """Block SIGINT in a worker thread, so that Ctrl-C wakes the waiting main thread."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
