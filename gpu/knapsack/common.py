"""Host helpers shared by the knapsack methods: cell types, workspace, budget checks, phase timers.

Nothing here loads numba.cuda at import: the entries of :mod:`gpu.knapsack.solve`
import this module, and ``import gpu.knapsack`` needs no GPU.
"""

from __future__ import annotations

import numpy as np

from core.knapsack import limits
from core.knapsack.problems import MemoryBudgetError
from gpu import config, device

__all__ = ["INT32_LIMIT", "PhaseTimer", "check_budget", "check_time_limit", "mark", "value_dtype", "weights_gcds",
           "workspace"]

#: Values at or above this bound use int64 DP cells instead of int32.
INT32_LIMIT = 2**30


def value_dtype(largest_value: int) -> np.dtype:
    """int32 DP cells when every value stays below 2**30, else int64."""
    return np.dtype(np.int32) if largest_value < INT32_LIMIT else np.dtype(np.int64)


def weights_gcds(weights) -> np.ndarray:
    """``core.knapsack.problems.weights_gcd`` of each array of ``weights`` (a batch), in one numpy pass."""
    sizes = np.fromiter((len(w) for w in weights), dtype=np.int64, count=len(weights))
    gcds = np.ones(len(sizes), dtype=np.int64)
    filled = sizes > 0
    if filled.any():
        starts = (np.cumsum(sizes) - sizes)[filled]  # empty arrays add no elements between them
        gcds[filled] = np.gcd.reduceat(np.concatenate([np.asarray(w, dtype=np.int64) for w in weights]), starts)
    gcds[gcds == 0] = 1  # all weights 0
    return gcds


def workspace(name: str, size: int, dtype):
    """A (max(1, size),) device array of ``dtype``: the device workspace's ``"knapsack." + name``.

    Kept between solves while ``gpu.config.KNAPSACK_KEEP_WORKSPACE`` is true
    (:func:`gpu.device.buffer`); call under :data:`gpu.device.LOCK`.
    """
    return device.buffer(f"knapsack.{name}", max(1, int(size)), dtype, keep=config.KNAPSACK_KEEP_WORKSPACE)


def check_budget(what: str, needed_bytes: int, budget_bytes: int) -> None:
    """Raise :class:`MemoryBudgetError` when ``needed_bytes`` exceeds the budget."""
    if needed_bytes > budget_bytes:
        raise MemoryBudgetError(f"{what} on the GPU", needed_bytes, budget_bytes)


def check_time_limit(launches: int, total: int, what: str) -> None:
    """Every ``KNAPSACK_POLL_LAUNCHES`` launches under a time limit: wait for the device, then check the limit.

    Launches are queued ahead of the device, so the host's clock says nothing of
    the device's progress until it waits; without a limit nothing waits.
    Raises :class:`~core.knapsack.problems.TimeLimitError` past the limit.
    """
    if limits.armed() and launches % config.KNAPSACK_POLL_LAUNCHES == 0:
        from numba import cuda  # only runners call this (see the module docstring)

        cuda.synchronize()
        limits.check(f"{what} on the GPU", f"{launches:,} of {total:,} launches done")


class PhaseTimer:
    """CUDA events between the phases of one solve, for benchmarks.

    Runners call ``mark(name)`` after each phase when given a timer; the
    milliseconds between consecutive marks are read once the device is idle.
    """

    def __init__(self):
        self._marks = []
        self.mark("start")

    def mark(self, name: str) -> None:
        from numba import cuda  # a timer exists only where kernels run (see the module docstring)

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
