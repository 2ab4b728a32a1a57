"""Helpers shared by the knapsack kernels: warp ballot, memory budget, value types.

The real warp ballot (``cuda.ballot_sync``) does not exist in numba's CUDA
simulator, so :data:`ballot` is bound at import time to a shared-memory
emulation there.  Both versions take the same arguments and must be called by
every thread of the block (the emulation synchronises the block; the real one
needs its whole warp), which the kernels guarantee by looping block-uniformly.
"""

from __future__ import annotations

import math
import threading

import numpy as np
from numba import config as numba_config
from numba import cuda, uint32

from core.knapsack.problems import MemoryBudgetError
from core.memory import resolve_budget

__all__ = [
    "SIMULATOR",
    "SOLVE_LOCK",
    "PhaseTimer",
    "ballot",
    "device_buffer",
    "inline_device",
    "release_workspace",
    "device_budget_bytes",
    "check_budget",
    "multiprocessor_count",
    "launch_resident",
    "value_dtype",
]

#: True under ``NUMBA_ENABLE_CUDASIM=1`` (read once: numba reads it at import too).
SIMULATOR = bool(numba_config.ENABLE_CUDASIM)

#: Values at or above this bound use int64 DP cells instead of int32.
INT32_LIMIT = 2**30


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


def value_dtype(largest_value: int) -> np.dtype:
    """int32 DP cells when every value stays below 2**30, else int64."""
    return np.dtype(np.int32) if largest_value < INT32_LIMIT else np.dtype(np.int64)


def multiprocessor_count(fallback: int = 4) -> int:
    """Streaming multiprocessors of the current device (``fallback`` in the simulator)."""
    if SIMULATOR:
        return fallback
    return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)


def launch_resident(dispatcher, args, threads: int, per_sm: int = 0) -> int:
    """Launch ``dispatcher(*args)`` on a grid whose blocks can all be resident at once.

    For persistent kernels that synchronise across blocks.  ``per_sm`` > 0 asks
    for that many blocks per multiprocessor (capped by the residency limit); 0
    takes the limit itself.  One block under the simulator, which runs blocks
    one after another.  Returns the number of blocks launched.
    """
    if SIMULATOR:
        dispatcher[1, threads](*args)
        return 1
    kernel = dispatcher.specialize(*args)  # compiled for these argument types
    try:
        limit = int(next(iter(kernel.overloads.values())).max_cooperative_grid_blocks(threads))
    except Exception:  # no occupancy query here: two blocks per multiprocessor fit these kernels
        limit = 2 * multiprocessor_count()
    blocks = max(1, min(limit, per_sm * multiprocessor_count()) if per_sm > 0 else limit)
    kernel[blocks, threads](*args)
    return blocks


def device_budget_bytes(memory_budget_bytes=None) -> int:
    """The device-memory budget of one solve.

    Parameters
    ----------
    memory_budget_bytes : int or None
        A positive number of bytes, or None for the default: the share
        ``gpu.config.KNAPSACK_DEVICE_MEMORY_SHARE`` of the device memory that
        is free now.

    Raises
    ------
    ValueError
        For a budget that is not a positive integer.
    """
    from gpu import config

    if memory_budget_bytes is not None:
        return resolve_budget(memory_budget_bytes)
    free = cuda.current_context().get_memory_info().free
    if not math.isfinite(free):  # the simulator reports infinite memory
        return resolve_budget(None)
    kept = sum(buffer.size for buffer in _workspace.values())  # reused or freed by the next solve
    return int((free + kept) * config.KNAPSACK_DEVICE_MEMORY_SHARE)


def check_budget(what: str, needed_bytes: int, budget_bytes: int) -> None:
    """Raise :class:`MemoryBudgetError` when ``needed_bytes`` exceeds the budget."""
    if needed_bytes > budget_bytes:
        raise MemoryBudgetError(f"{what} on the GPU", needed_bytes, budget_bytes)


class PhaseTimer:
    """CUDA events between the phases of one solve, for benchmarks.

    Runners call ``mark(name)`` after each phase when given a timer; the
    milliseconds between consecutive marks are read once the device is idle.
    """

    def __init__(self):
        self._marks = []
        self.mark("start")

    def mark(self, name: str) -> None:
        event = cuda.event()
        event.record()
        self._marks.append((name, event))

    def phases_ms(self) -> dict:
        """``{phase: milliseconds}`` from the previous mark to each mark."""
        self._marks[-1][1].synchronize()
        return {
            name: before.elapsed_time(after)
            for (_, before), (name, after) in zip(self._marks, self._marks[1:])
        }


def mark(timer, name: str) -> None:
    """``timer.mark(name)`` when a timer is given."""
    if timer is not None:
        timer.mark(name)


#: Held by every public GPU knapsack solve: they share the workspace below.
SOLVE_LOCK = threading.RLock()

_workspace: dict = {}


def device_buffer(name: str, size: int, dtype) -> "cuda.devicearray.DeviceNDArray":
    """A (size,) device array of ``dtype``, carved from the workspace kept under ``name``.

    Large DP rows and decision tables are reused from one solve to the next
    (allocating gigabytes costs milliseconds) when
    ``gpu.config.KNAPSACK_KEEP_WORKSPACE`` is true; :func:`release_workspace`
    gives the memory back.  Call under :data:`SOLVE_LOCK`.
    """
    from gpu import config

    dtype = np.dtype(dtype)
    nbytes = max(1, size) * dtype.itemsize
    if not config.KNAPSACK_KEEP_WORKSPACE:
        return cuda.device_array(max(1, size), dtype=dtype)
    buffer = _workspace.get(name)
    if buffer is None or buffer.size < nbytes:
        if _workspace.pop(name, None) is not None:
            _flush_deallocations()  # free the smaller buffer before asking for the larger one
        buffer = cuda.device_array(nbytes, dtype=np.uint8)
        _workspace[name] = buffer
    return buffer[:nbytes].view(dtype)


def _flush_deallocations() -> None:
    """Free device arrays that numba has queued for deallocation (none in the simulator)."""
    deallocations = getattr(cuda.current_context(), "deallocations", None)
    if deallocations is not None:
        deallocations.clear()


def release_workspace() -> None:
    """Free the device memory kept between solves."""
    with SOLVE_LOCK:
        _workspace.clear()
        _flush_deallocations()
