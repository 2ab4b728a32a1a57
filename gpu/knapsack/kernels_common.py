"""Device functions shared by the knapsack kernels: forced inlining and the warp ballot.

The real warp ballot (``cuda.ballot_sync``) does not exist in numba's CUDA
simulator, so :data:`ballot` is bound at import time to a shared-memory
emulation there.  Both versions take the same arguments and must be called by
every thread of the block (the emulation synchronises the block; the real one
needs its whole warp), which the kernels guarantee by looping block-uniformly.
"""

from __future__ import annotations

from numba import config as numba_config
from numba import cuda, uint32

__all__ = ["SIMULATOR", "ballot", "inline_device"]

#: True under ``NUMBA_ENABLE_CUDASIM=1`` (read once: numba reads it at import too).
SIMULATOR = bool(numba_config.ENABLE_CUDASIM)


def inline_device(function):
    """``cuda.jit(device=True)``, always inlined by NVVM on a real GPU.

    Small helpers called per cell must not cost a call each (the simulator's
    ``jit`` knows no ``forceinline``).
    """
    if SIMULATOR:
        return cuda.jit(device=True)(function)
    return cuda.jit(device=True, forceinline=True)(function)


@inline_device
def _ballot_hardware(predicate, scratch):
    """32-bit mask of the lanes of this warp whose ``predicate`` is true."""
    return cuda.ballot_sync(0xFFFFFFFF, predicate)


@inline_device
def _ballot_simulated(predicate, scratch):
    """The same mask built in ``scratch`` (32 uint32 shared words) for the simulator."""
    warp = cuda.threadIdx.x // 32
    lane = cuda.threadIdx.x % 32
    cuda.syncthreads()
    if lane == 0:
        scratch[warp] = 0
    cuda.syncthreads()
    if predicate:
        cuda.atomic.or_(scratch, warp, uint32(1) << uint32(lane))
    cuda.syncthreads()
    word = scratch[warp]
    cuda.syncthreads()
    return word


#: ``ballot(predicate, scratch) -> uint32``; ``scratch`` is a (32,) uint32 shared array.
ballot = _ballot_simulated if SIMULATOR else _ballot_hardware
