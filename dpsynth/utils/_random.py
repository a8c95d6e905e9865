"""Random streams: one root :class:`numpy.random.SeedSequence`, children by ``spawn``.

Every random draw of dpsynth comes from a ``numpy.random.Generator`` whose
seed is a child of one root sequence:

- ``random_state=None`` draws the root from OS entropy (never from NumPy's
  global state, so ``np.random.seed`` elsewhere in a program cannot make an
  "unseeded" release reproducible);
- an integer is the root's entropy (reproducible, for experiments only);
- a ``Generator``, ``RandomState`` or ``SeedSequence`` given by the caller
  seeds the root with 128 bits drawn from it.

Independent jobs (the noise of ``fit``, the draws of ``sample``, DP bin
edges, within-bin draws) use distinct children, derived with
``SeedSequence.spawn`` or a fixed ``spawn_key``, never by drawing small
integer seeds from another stream.
"""

import numbers

import numpy as np

__all__ = ["seed_sequence", "stream", "spawn_generators", "FIT", "SAMPLE"]

#: ``spawn_key`` of the stream of ``fit`` (noise, discovery, DP binning).
FIT = 0
#: ``spawn_key`` of the stream of ``sample`` (independent of the noise).
SAMPLE = 1


def seed_sequence(random_state):
    """The root ``SeedSequence`` of a ``random_state`` parameter.

    Parameters
    ----------
    random_state : None, int, SeedSequence, Generator or RandomState
        ``None``: OS entropy.  An integer >= 0: fixed entropy.  A
        ``SeedSequence`` is returned as it is.  A ``Generator`` or
        ``RandomState`` contributes 128 bits drawn from it (it advances).

    Returns
    -------
    numpy.random.SeedSequence
    """
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer; got {random_state!r}.")
        return np.random.SeedSequence(int(random_state))
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(random_state.integers(0, 2**32, size=4).tolist())
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(
            random_state.randint(0, 2**32, size=4, dtype=np.uint64).tolist())
    raise TypeError(
        "random_state must be None, a non-negative int, a numpy Generator, RandomState "
        f"or SeedSequence; got {type(random_state).__name__}.")


def stream(random_state, purpose):
    """The child sequence of ``random_state`` for one purpose (:data:`FIT`, :data:`SAMPLE`).

    For an integer seed, ``fit`` and ``sample`` get the distinct children
    ``spawn_key=(FIT,)`` and ``(SAMPLE,)`` of the same root, so the draws of
    ``sample`` never replay the noise of ``fit``.
    """
    root = seed_sequence(random_state)
    return np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key + (purpose,),
                                  pool_size=root.pool_size)


def spawn_generators(sequence, n):
    """``n`` independent ``Generator`` objects spawned from ``sequence``."""
    if not isinstance(sequence, np.random.SeedSequence):
        sequence = seed_sequence(sequence)
    return [np.random.default_rng(child) for child in sequence.spawn(n)]
