"""Host helpers shared by the knapsack methods: cell types, workspace, budget checks, phase timers.

Nothing here loads numba.cuda at import: the entries of :mod:`gpu.knapsack.solve`
import this module, and ``import gpu.knapsack`` needs no GPU.
"""

from __future__ import annotations

import numpy as np

from core.knapsack.problems import MemoryBudgetError
from gpu import config, device

__all__ = ["INT32_LIMIT", "PhaseTimer", "check_budget", "mark", "value_dtype", "workspace"]

#: Values at or above this bound use int64 DP cells instead of int32.
INT32_LIMIT = 2**30


def value_dtype(largest_value: int) -> np.dtype:
    """int32 DP cells when every value stays below 2**30, else int64."""
    return np.dtype(np.int32) if largest_value < INT32_LIMIT else np.dtype(np.int64)


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
