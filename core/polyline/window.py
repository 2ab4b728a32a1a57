"""The CPU ``window`` solver: the exact optimum by sliding-window maxima, O(m d^2).

Notes: docs/notes/extraction-and-polyline.md, "CPU solvers".
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64

from core.cancel import check
from core.polyline.problem import PolylineSolution, PreparedProblem
from core.polyline.ranges_even import diagonal_range, diagonal_row
from core.polyline.stages import (
    TILE_COLUMNS,
    Stopwatch,
    best_state,
    check_solver_memory,
    load_tile,
    parallel_section,
    serial_twin,
    solution,
    threaded_kernel,
)
from core.polyline.tables import check_finite_from_rows, row_exponent

__all__ = ["compile_stages", "solve_window"]

#: Points by which :func:`_window_column` extends its prefix maxima at a time:
#: fewer extensions mispredict less, longer ones compute maxima never used.
_PREFIX_STEP = 16

#: Columns q that one task of :func:`_few_next_stage` sweeps (a 512-byte piece of each row).
_ROW_BLOCK = 64

#: A layer of at most this many points (the start or end, or guides of very few
#: points) is swept point by point instead of by the sliding window.
_FEW_POINTS = 16

#: The float64 tables live in one buffer kept between calls (up to this size):
#: fresh pages cost a page fault each (4x slower DP at 8 x 1024 in a VM).
#: Used only under PARALLEL_LOCK.
_KEEP_WORKSPACE_BYTES = 256 * 2**20
_workspace = {"buffer": np.empty(0)}


@njit(cache=True, nogil=True)
def _window_column(col, lo_q, hi_q, table_q, out_q, suffix, prefix):
    """``out_q[r] = table_q[r] + max(col[lo_q[r] : hi_q[r] + 1])`` for every r (-inf when empty).

    ``suffix[p]`` holds ``max(col[p : boundary + 1])`` for p from the last
    rebuild's ``lo`` up to ``boundary`` and ``prefix[p]`` holds
    ``max(col[boundary + 1 : p + 1])`` for p above it up to ``extent``
    (``prefix[boundary]`` is -inf), so every non-empty window is
    ``max(suffix[lo], prefix[hi])``.  Indices go through ``uint64``: numba
    then skips its check for negative indices, about a quarter of this loop's time.
    """
    n_prev = col.shape[0]
    boundary, extent = -1, -1
    for r in range(out_q.shape[0] - 1, -1, -1):  # lo and hi grow as r falls
        low, high = lo_q[r], hi_q[r]
        if low > boundary:  # the window left the suffix maxima (or is empty)
            if low > high:  # empty windows have low > boundary: every earlier high >= boundary
                out_q[r] = -np.inf
                continue
            boundary = extent = high
            running = -np.inf
            for p in range(high, low - 1, -1):
                running = max(running, col[uint64(p)])
                suffix[uint64(p)] = running
            prefix[uint64(high)] = -np.inf
        if high > extent:  # extend the prefix maxima a few points at a time
            top = min(n_prev - 1, max(high, extent + _PREFIX_STEP))
            running = prefix[uint64(extent)]
            for p in range(extent + 1, top + 1):
                running = max(running, col[uint64(p)])
                prefix[uint64(p)] = running
            extent = top
        out_q[r] = table_q[r] + max(suffix[uint64(low)], prefix[uint64(high)])


@njit(cache=True, nogil=True, parallel=True)
def _window_stage(values, table, lo, hi, out, exponents):
    """One stage by sliding-window maxima.

    values : (n_prev, d) float64, Fk
    table : (d, n_next) float32, Tk
    lo, hi : (d, n_next) int32, the feasible p of each state (q, r)
    out : (d, n_next) float64, F(k+1) (written)
    exponents : (d,) uint32, :func:`core.polyline.tables.row_exponent` of each row of Tk (written): the
        finiteness check rides on the stage, which reads every row anyway
    """
    n_prev, d = values.shape
    for block in prange((d + TILE_COLUMNS - 1) // TILE_COLUMNS):
        q0 = block * TILE_COLUMNS
        tile = np.empty((TILE_COLUMNS, n_prev))
        suffix, prefix = np.empty(n_prev), np.empty(n_prev)
        for i in range(load_tile(values, q0, tile)):
            q = q0 + i
            _window_column(tile[i], lo[q], hi[q], table[q], out[q], suffix, prefix)
            exponents[q] = row_exponent(table[q])


@njit(cache=True, nogil=True, parallel=True)
def _diagonal_stage(values, table, k_lo, k_hi, out, exponents):
    """:func:`_window_stage` between three equal layers, each row of the ranges made from their diagonals.

    k_lo, k_hi : (2d - 1,) int64, :meth:`PreparedProblem.turn_diagonals`; the
    rows are built in the cache instead of read from a (d, d) pair.
    """
    n_prev, d = values.shape
    for block in prange((d + TILE_COLUMNS - 1) // TILE_COLUMNS):
        q0 = block * TILE_COLUMNS
        tile = np.empty((TILE_COLUMNS, n_prev))
        suffix, prefix = np.empty(n_prev), np.empty(n_prev)
        lo_q, hi_q = np.empty(d, dtype=np.int32), np.empty(d, dtype=np.int32)
        for i in range(load_tile(values, q0, tile)):
            q = q0 + i
            diagonal_row(k_lo, k_hi, q, lo_q, hi_q)
            _window_column(tile[i], lo_q, hi_q, table[q], out[q], suffix, prefix)
            exponents[q] = row_exponent(table[q])


@njit(cache=True, nogil=True, parallel=True)
def _few_previous_stage(values, table, lo, hi, out, exponents):
    """The stage out of a layer of a few points (the start): each p against every r at once.

    Same arrays as :func:`_window_stage`; the loops over r are branch-free and vectorise.
    """
    n_prev, d = values.shape
    n_next = table.shape[1]
    for q in prange(d):
        lo_q, hi_q, out_q = lo[q], hi[q], out[q]
        out_q[:] = -np.inf
        for p in range(n_prev):
            value = values[p, q]
            for r in range(n_next):
                candidate = value if lo_q[r] <= p <= hi_q[r] else -np.inf
                out_q[r] = max(out_q[r], candidate)
        table_q = table[q]
        for r in range(n_next):
            out_q[r] += table_q[r]
        exponents[q] = row_exponent(table_q)


@njit(cache=True, nogil=True, parallel=True)
def _start_stage(values, table, rlo, rhi, out, exponents):
    """The stage out of a layer of a few points (the start) by their reach over r.

    values : (n_prev, d) float64, F1
    table : (d, n_next) float32, T1
    rlo, rhi : (d, n_prev) int32, :attr:`PreparedProblem.start_reach`
    out : (d, n_next) float64, F2 (written)
    exponents : (d,) uint32, as in :func:`_window_stage` (written)
    """
    n_prev, d = values.shape
    for q in prange(d):
        out_q = out[q]
        out_q[:] = -np.inf
        for p in range(n_prev):
            value = values[p, q]
            for r in range(rlo[q, p], rhi[q, p] + 1):
                out_q[r] = max(out_q[r], value)
        table_q = table[q]
        for r in range(out_q.shape[0]):
            out_q[r] += table_q[r]
        exponents[q] = row_exponent(table_q)


@njit(cache=True, nogil=True, parallel=True)
def _few_next_stage(values, table, lo, hi, out, exponents):
    """The stage into a layer of a few points (the end): the rows of Fk swept once per r, masked.

    Same arrays as :func:`_window_stage`; the loops over q are branch-free and vectorise.
    """
    n_prev, d = values.shape
    n_next = table.shape[1]
    for block in prange((d + _ROW_BLOCK - 1) // _ROW_BLOCK):
        q0 = block * _ROW_BLOCK
        width = min(_ROW_BLOCK, d - q0)
        best, first, last = np.empty(width), np.empty(width, dtype=lo.dtype), np.empty(width, dtype=hi.dtype)
        for r in range(n_next):
            for i in range(width):
                first[i], last[i], best[i] = lo[q0 + i, r], hi[q0 + i, r], -np.inf
            for p in range(n_prev):
                row = values[p]
                for i in range(width):
                    candidate = row[q0 + i] if first[i] <= p <= last[i] else -np.inf
                    best[i] = max(best[i], candidate)
            for i in range(width):
                out[q0 + i, r] = table[q0 + i, r] + best[i]
        for i in range(width):
            exponents[q0 + i] = row_exponent(table[q0 + i])


#: Each stage kernel's :func:`core.polyline.stages.serial_twin`, which runs the small stages.
_SERIAL = {kernel: serial_twin(kernel)
           for kernel in (_window_stage, _diagonal_stage, _few_previous_stage, _start_stage, _few_next_stage)}


def compile_stages(serial: bool = True) -> None:
    """Run the end, middle and start stage kernels, in this order, once on layers of 4 points.

    That compiles them (or loads them from numba's cache): ``core.warmup``
    compiles the stages that a first extraction reaches last first.
    ``serial``: their serial twins (what small stages run), else the parallel kernels.
    """
    values, out, table = np.zeros((4, 4)), np.empty((4, 4)), np.zeros((4, 4), np.float32)
    ranges, exponents = np.zeros((4, 4), np.int32), np.empty(4, np.uint32)
    with parallel_section():
        for kernel in (_few_next_stage, _window_stage, _start_stage):
            (_SERIAL[kernel] if serial else kernel)(values, table, ranges, ranges, out, exponents)


def _value_tables(shapes: list[tuple[int, int]]) -> list[np.ndarray]:
    """Uninitialised float64 arrays of the given shapes, views of the kept workspace."""
    sizes = [rows * cols for rows, cols in shapes]
    buffer = _workspace["buffer"]
    if buffer.size < sum(sizes):
        buffer = np.empty(sum(sizes))
        if buffer.nbytes <= _KEEP_WORKSPACE_BYTES:
            _workspace["buffer"] = buffer
    ends = np.cumsum(sizes)
    return [buffer[end - size : end].reshape(shape) for shape, size, end in zip(shapes, sizes, ends)]


def _window_path(prepared: PreparedProblem, values: list[np.ndarray]) -> np.ndarray:
    """Backtrack from the best final state: the p that each F(k+1)[q, r] took its maximum from."""
    m = prepared.n_guides
    path = np.empty(m + 2, dtype=np.int64)
    path[m], path[m + 1] = best_state(values[m], prepared)
    for k in range(m, 0, -1):
        q, r = path[k], path[k + 1]
        if k == 1 and _from_start(prepared):
            rlo, rhi = prepared.start_reach
            feasible = np.flatnonzero((rlo[q] <= r) & (r <= rhi[q]))
            path[0] = feasible[int(np.argmax(values[0][feasible, q]))]
        else:
            diagonals = prepared.turn_diagonals(k)
            if diagonals is not None:
                low, high = diagonal_range(*diagonals, q, r)
            else:
                low, high = (int(bound[q, r]) for bound in prepared.turn_pair(k))
            path[k - 1] = low + int(np.argmax(values[k - 1][low : high + 1, q]))
    return path


def _from_start(prepared: PreparedProblem) -> bool:
    """Whether the first stage runs by the start candidates' reach (few of them): no (d, d) ranges for it."""
    return prepared.first.shape[0] <= _FEW_POINTS


def _window_kernel(n_prev: int, d: int, n_next: int):
    """The stage kernel for layers of these sizes, and its number of elementary steps."""
    if n_prev <= _FEW_POINTS:
        return _few_previous_stage, n_prev * d * n_next
    if n_next <= _FEW_POINTS:
        return _few_next_stage, n_prev * d * n_next
    return _window_stage, d * (n_prev + n_next)


def solve_window(prepared: PreparedProblem, cancel=None) -> PolylineSolution:
    """The exact optimum by sliding-window maxima, O(m d^2).

    Parameters
    ----------
    prepared : PreparedProblem
    cancel : core.cancel.CancelToken, optional
        Checked between stages.

    Returns
    -------
    PolylineSolution
        Method "window", backend "cpu", ``timings_ms`` with ``dp`` and ``backtrack``.

    Raises
    ------
    ValueError
        When ``prepared.finite_checked`` is False and a table holds inf or NaN (the message of
        :func:`core.polyline.prepare`): the stages check the rows they read, no separate pass.
    core.polyline.NoFeasiblePolylineError, core.memory.HostMemoryError, core.cancel.Cancelled
    """
    check_solver_memory(prepared, "window")
    m = prepared.n_guides
    clock = Stopwatch()
    with parallel_section() as threads:
        values = _value_tables([prepared.table(k).shape for k in range(m + 1)])  # F1..F(m+1)
        values[0][:] = prepared.first
        exponents = np.empty((m, prepared.n_points), dtype=np.uint32)
        for k in range(1, m + 1):
            check(cancel)
            stage, steps = _window_kernel(values[k - 1].shape[0], prepared.n_points, values[k].shape[1])
            diagonals = prepared.turn_diagonals(k) if stage is _window_stage else None
            if k == 1 and _from_start(prepared):
                stage, ranges = _start_stage, prepared.start_reach
            elif diagonals is not None:
                stage, ranges = _diagonal_stage, diagonals
            else:
                ranges = prepared.turn_pair(k)
            stage = threaded_kernel(stage, _SERIAL[stage], steps, threads)
            stage(values[k - 1], prepared.table(k), *ranges, values[k], exponents[k - 1])
        if not prepared.finite_checked:
            check_finite_from_rows(prepared, exponents)
        clock.lap("dp")
        path = _window_path(prepared, values)
    clock.lap("backtrack")
    return solution(prepared, path, "window", clock.timings_ms)
