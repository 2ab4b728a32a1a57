"""What the CPU solvers ``window`` and ``mitm`` share: threads, tiles, memory, the best final state.

Notes: docs/notes/extraction-and-polyline.md, "CPU solvers".
"""

from __future__ import annotations

import contextlib
import time
import types

import numba
import numpy as np
from numba import njit

from core.memory import check_allocation
from core.parallel import PARALLEL_LOCK
from core.polyline.problem import PolylineSolution, PreparedProblem, infeasible_error, solution_for_path

__all__ = ["PARALLEL_MIN_STEPS", "TILE_COLUMNS", "Stopwatch", "best_state", "check_solver_memory", "load_tile",
           "parallel_section", "serial_twin", "solution", "threaded_kernel", "use_threads_for"]

#: Columns F[:, q] that one parallel task loads into its tile (8 float64 = one cache line).
TILE_COLUMNS = 8

#: Stages with fewer elementary steps than this (about a millisecond on one
#: thread) run on one thread (waking the pool can cost milliseconds on a busy machine).
PARALLEL_MIN_STEPS = 1 << 18


@contextlib.contextmanager
def parallel_section():
    """Hold PARALLEL_LOCK; yield this thread's numba thread count, restored afterwards."""
    with PARALLEL_LOCK:
        threads = numba.get_num_threads()
        try:
            yield threads
        finally:
            numba.set_num_threads(threads)


def use_threads_for(steps: int, threads: int) -> None:
    """One thread for a small stage, ``threads`` for a large one (inside :func:`parallel_section`)."""
    numba.set_num_threads(1 if steps < PARALLEL_MIN_STEPS else threads)


def serial_twin(kernel):
    """``kernel``, a ``parallel=True`` dispatcher, compiled without ``parallel`` (``prange`` runs as ``range``).

    Its compile is about three times cheaper (no parfor lowering: 0.6 s
    against 1.8 s for :func:`core.polyline.window._window_stage` on a 2-core
    EPYC), which the first extraction after an install waits for; and a small
    stage runs on one thread anyway.  Every ``prange`` iteration writes its own
    outputs, so both give the same results.  The twin is a copy of the Python
    function under the name ``<name>_serial``: numba's cache files are named
    after it, so the two compiled versions never load in each other's place.
    """
    func = kernel.py_func
    twin = types.FunctionType(func.__code__, func.__globals__, f"{func.__name__}_serial", func.__defaults__,
                              func.__closure__)
    twin.__qualname__ = f"{func.__qualname__}_serial"
    twin.__module__, twin.__doc__ = func.__module__, func.__doc__
    options = {key: value for key, value in kernel.targetoptions.items() if key not in ("parallel", "nopython")}
    return njit(cache=True, **options)(twin)  # (``cache`` is not among a dispatcher's targetoptions)


def threaded_kernel(kernel, serial, steps: int, threads: int):
    """``serial`` (:func:`serial_twin` of ``kernel``) for a small stage, else ``kernel`` on ``threads`` threads.

    Call it inside :func:`parallel_section`; the threshold is :func:`use_threads_for`'s.
    """
    use_threads_for(steps, threads)
    return serial if steps < PARALLEL_MIN_STEPS else kernel


@njit(cache=True, nogil=True)
def load_tile(values, q0, tile):
    """Copy the columns q0.. of ``values`` (n_prev, d) into the rows of ``tile`` (k, n_prev); returns k used."""
    n_prev, d = values.shape
    n_cols = min(tile.shape[0], d - q0)
    if n_cols == 8:  # the usual full tile, written out: twice as fast as the loop below
        for p in range(n_prev):
            row = values[p]
            tile[0, p], tile[1, p], tile[2, p], tile[3, p] = row[q0], row[q0 + 1], row[q0 + 2], row[q0 + 3]
            tile[4, p], tile[5, p], tile[6, p], tile[7, p] = row[q0 + 4], row[q0 + 5], row[q0 + 6], row[q0 + 7]
        return n_cols
    for p in range(n_prev):
        for i in range(n_cols):
            tile[i, p] = values[p, q0 + i]
    return n_cols


def check_solver_memory(prepared: PreparedProblem, method: str) -> None:
    """Refuse (core.memory.HostMemoryError) tables of ``method`` beyond the host-memory budget."""
    sizes = [prepared.first.shape[0]] + [prepared.n_points] * prepared.n_guides + [prepared.last.shape[1]]
    states = sum(sizes[k] * sizes[k + 1] for k in range(len(sizes) - 1))
    per_state = 8 if method == "window" else 8 + 4  # float64 F kept, + int32 argmax for mitm
    check_allocation(per_state * states, f"the {method} solver's tables",
                     advice="use fewer points per guide or fewer nodes")


def best_state(values: np.ndarray, prepared: PreparedProblem) -> tuple[int, int]:
    """Row and column of the largest entry of ``values``; NoFeasiblePolylineError when all are -inf."""
    flat = int(np.argmax(values))
    if values.flat[flat] == -np.inf:
        raise infeasible_error(prepared.max_turn_deg, prepared.n_guides, prepared.offsets, prepared.spacing)
    return divmod(flat, values.shape[1])


class Stopwatch:
    """Milliseconds of consecutive phases: ``lap("dp")`` records the time since the previous lap."""

    def __init__(self):
        self.timings_ms: dict = {}
        self._last = time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.timings_ms[phase] = (now - self._last) * 1e3
        self._last = now


def solution(prepared: PreparedProblem, path: np.ndarray, method: str, timings_ms: dict) -> PolylineSolution:
    """The CPU solution of the layer indices ``path`` (m + 2,)."""
    return solution_for_path(prepared, int(path[0]), path[1:-1], int(path[-1]), method, "cpu", timings_ms)
