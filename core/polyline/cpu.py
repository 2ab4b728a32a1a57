"""The numba CPU solvers ``window`` (O(m d^2)) and ``mitm`` (O(m d^3)).

Both run the pair-state dynamic program of the chain of layers L0..L(m+1)
(see :mod:`core.polyline`): ``F1 = T0`` and

    F(k+1)[q, r] = Tk[q, r] + max { Fk[p, q] : lo_k[q, r] <= p <= hi_k[q, r] }

for the inner layers k = 1..m, in float64, ``-inf`` for states that no
feasible path reaches, with the int32 ranges of ``PreparedProblem.ranges32``.  Every ``F`` is stored as ``(n_prev, d)`` like the
tables; a stage loads the columns ``F[:, q]`` of a few q at a time into a
small contiguous tile (one strided pass), so the per-state loops read and
write contiguous rows.

- ``window``: for fixed q the range [lo, hi] slides towards larger p as r
  decreases (both ends are monotone).  The maximum over a sliding window is
  kept as suffix maxima from ``lo`` up to a boundary plus prefix maxima above
  it, so each window is the larger of two lookups; when ``lo`` passes the
  boundary, the suffix maxima are rebuilt from the current ``hi``, and the
  prefix maxima are extended a few points ahead of ``hi`` at a time.  Every p
  enters at most one rebuild and (but for a few points past each rebuild's
  ``hi``) one extension, so a column costs
  O(n_prev + n_next) with no branch on the scores (a monotone deque does the
  same work but its pops mispredict; it measured two to five times slower
  here).  Stages out of or into a layer of a few points (the start and end)
  sweep those points one by one with branch-free vectorised loops instead.
  The argmax is not stored: backtracking recomputes it from the kept ``F``.
- ``mitm``: Seredin (2016): forward from L0 up to the middle guide c,
  backward from L(m+1) down to it, merged at c with the turn limit there;
  every state checks every candidate of the previous (or next) layer against
  the ranges, O(d) per state, with int32 argmax tables for backtracking.

The stage kernels are ``parallel=True`` (prange over blocks of states), are
called under :data:`core.parallel.PARALLEL_LOCK`, and run small stages on one
thread.  Both solvers stop between stages when their cancel token is set
(core.cancel); a ``mitm`` stage, O(d^3), also polls it before every block of
states, since one stage at d = 1024 takes about a second.
"""

from __future__ import annotations

import contextlib
import time

import numba
import numpy as np
from numba import njit, prange, uint64

from core.cancel import check, flag_of
from core.memory import check_allocation
from core.parallel import PARALLEL_LOCK, cancel_requested
from core.polyline.problem import PreparedProblem, infeasible_error

__all__ = ["solve_window", "solve_mitm"]

#: Columns F[:, q] that one parallel task loads into its tile (8 float64 = one cache line).
_TILE_COLUMNS = 8

#: Points by which :func:`_window_column` extends its prefix maxima at a time:
#: fewer extensions mispredict less, longer ones compute maxima never used.
_PREFIX_STEP = 16

#: Columns q that one task of :func:`_few_next_stage` sweeps (a 512-byte piece of each row).
_ROW_BLOCK = 64

#: A layer of at most this many points (the start or end, or guides of very few
#: points) is handled point by point by a vectorised masked sweep instead of the
#: sliding window, which only pays off for long columns.
_FEW_POINTS = 16

#: Stages with fewer elementary steps than this (about a millisecond on one
#: thread) run on one thread: waking the pool costs microseconds on an idle
#: machine but, with numba's OpenMP layer, up to tens of milliseconds when
#: other processes keep the cores busy.
_PARALLEL_MIN_STEPS = 1 << 18


@contextlib.contextmanager
def _parallel_section():
    """Hold PARALLEL_LOCK; yield this thread's numba thread count, restored afterwards."""
    with PARALLEL_LOCK:
        threads = numba.get_num_threads()
        try:
            yield threads
        finally:
            numba.set_num_threads(threads)


def _use_threads_for(steps: int, threads: int) -> None:
    """One thread for a small stage, ``threads`` for a large one (inside _parallel_section)."""
    numba.set_num_threads(1 if steps < _PARALLEL_MIN_STEPS else threads)


@njit(cache=True, nogil=True)
def _load_tile(values, q0, tile):
    """Copy the columns q0.. of ``values`` (n_prev, d) into the rows of ``tile`` (k, n_prev)."""
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
def _window_stage(values, table, lo, hi, out):
    """One stage by sliding-window maxima.

    values : (n_prev, d) float64, Fk
    table : (d, n_next) float32, Tk
    lo, hi : (d, n_next) int32, the feasible p of each state (q, r)
    out : (d, n_next) float64, F(k+1) (written)
    """
    n_prev, d = values.shape
    for block in prange((d + _TILE_COLUMNS - 1) // _TILE_COLUMNS):
        q0 = block * _TILE_COLUMNS
        tile = np.empty((_TILE_COLUMNS, n_prev))
        suffix, prefix = np.empty(n_prev), np.empty(n_prev)
        for i in range(_load_tile(values, q0, tile)):
            q = q0 + i
            _window_column(tile[i], lo[q], hi[q], table[q], out[q], suffix, prefix)


@njit(cache=True, nogil=True, parallel=True)
def _few_previous_stage(values, table, lo, hi, out):
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


@njit(cache=True, nogil=True, parallel=True)
def _few_next_stage(values, table, lo, hi, out):
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


@njit(cache=True, nogil=True, parallel=True)
def _scan_stage(values, table, lo, hi, out, arg, cancel_flag):
    """One forward stage of Seredin's DP: every p checked for every state (q, r).

    values, table, lo, hi, out as in :func:`_window_stage` (``table`` may be
    float64); arg : (d, n_next) int32, the maximising p, -1 when none;
    cancel_flag : (1,) uint8, the blocks left are skipped once it is set.
    """
    n_prev, d = values.shape
    n_next = table.shape[1]
    for block in prange((d + _TILE_COLUMNS - 1) // _TILE_COLUMNS):
        if cancel_requested(cancel_flag):
            continue
        q0 = block * _TILE_COLUMNS
        tile = np.empty((_TILE_COLUMNS, n_prev))
        for i in range(_load_tile(values, q0, tile)):
            q, col = q0 + i, tile[i]
            for r in range(n_next):
                first, last = lo[q, r], hi[q, r]
                best, best_p = -np.inf, -1
                for p in range(n_prev):
                    if first <= p <= last and col[p] > best:
                        best, best_p = col[p], p
                out[q, r] = table[q, r] + best
                arg[q, r] = best_p


@njit(cache=True, nogil=True, parallel=True)
def _scan_backward_stage(suffix, table, lo, hi, out, arg, cancel_flag):
    """One backward stage of Seredin's DP: every s checked for every state (q, r).

    suffix : (d, n_after) float64, ``B(k+1)[r, s]``: the best path from link r -> s on
    table : (n_k, d) float32, Tk
    lo, hi : (d, n_after) int32, ranges of layer k+1: q may precede r -> s
        when ``lo[r, s] <= q <= hi[r, s]``
    out : (n_k, d) float64, ``Bk[q, r] = Tk[q, r] + max_s B(k+1)[r, s]`` (written)
    arg : (n_k, d) int32, the maximising s, -1 when none
    cancel_flag : (1,) uint8, the rows left are skipped once it is set
    """
    d, n_after = suffix.shape
    n_k = table.shape[0]
    for r in prange(d):
        if cancel_requested(cancel_flag):
            continue
        row, lo_r, hi_r = suffix[r], lo[r], hi[r]
        for q in range(n_k):
            best, best_s = -np.inf, -1
            for s in range(n_after):
                if lo_r[s] <= q <= hi_r[s] and row[s] > best:
                    best, best_s = row[s], s
            out[q, r] = table[q, r] + best
            arg[q, r] = best_s


def _layer_sizes(prepared: PreparedProblem) -> list[int]:
    """Number of points of layers L0..L(m+1)."""
    return [prepared.first.shape[0]] + [prepared.n_points] * prepared.n_guides + [prepared.last.shape[1]]


def _check_solver_memory(prepared: PreparedProblem, method: str) -> None:
    sizes = _layer_sizes(prepared)
    states = sum(sizes[k] * sizes[k + 1] for k in range(len(sizes) - 1))
    per_state = 8 if method == "window" else 8 + 4  # float64 F kept, + int32 argmax for mitm
    check_allocation(per_state * states, f"the {method} solver's tables",
                     advice="use fewer points per guide or fewer nodes")


def _best_state(values: np.ndarray, prepared: PreparedProblem) -> tuple[int, int]:
    """Row and column of the largest entry; NoFeasiblePolylineError when all are -inf."""
    flat = int(np.argmax(values))
    if values.flat[flat] == -np.inf:
        raise infeasible_error(prepared)
    return divmod(flat, values.shape[1])


def _record(timings_ms: dict | None, key: str, since: float) -> float:
    now = time.perf_counter()
    if timings_ms is not None:
        timings_ms[key] = (now - since) * 1e3
    return now


def _as_result(path: np.ndarray):
    return int(path[0]), path[1:-1].copy(), int(path[-1])


#: The float64 tables of ``window`` live in one buffer kept between calls (up to
#: this size): fresh pages cost a page fault each, which in a virtual machine
#: made the DP at 8 x 1024 four times slower.  Used only under PARALLEL_LOCK.
_KEEP_WORKSPACE_BYTES = 256 * 2**20
_workspace = {"buffer": np.empty(0)}


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
    path[m], path[m + 1] = _best_state(values[m], prepared)
    for k in range(m, 0, -1):
        q, r = path[k], path[k + 1]
        low, high = (int(bound[q, r]) for bound in prepared.ranges[k - 1])
        path[k - 1] = low + int(np.argmax(values[k - 1][low : high + 1, q]))
    return path


def _window_kernel(n_prev: int, d: int, n_next: int):
    """The stage kernel for layers of these sizes, and its number of elementary steps."""
    if n_prev <= _FEW_POINTS:
        return _few_previous_stage, n_prev * d * n_next
    if n_next <= _FEW_POINTS:
        return _few_next_stage, n_prev * d * n_next
    return _window_stage, d * (n_prev + n_next)


def solve_window(prepared: PreparedProblem, timings_ms: dict | None = None, cancel=None):
    """The exact optimum by sliding-window maxima, O(m d^2).

    Parameters
    ----------
    prepared : PreparedProblem
    timings_ms : dict, optional
        Receives ``"dp"`` and ``"backtrack"`` in milliseconds.
    cancel : core.cancel.CancelToken, optional
        Checked between stages.

    Returns
    -------
    start_index : int
    indices : (m,) int64 ndarray
    end_index : int

    Raises
    ------
    core.polyline.NoFeasiblePolylineError
        When no polyline satisfies the angle limit.
    core.memory.HostMemoryError
        When the tables would exceed the host-memory budget (a ValueError).
    core.cancel.Cancelled
        When ``cancel`` was cancelled.
    """
    _check_solver_memory(prepared, "window")
    m = prepared.n_guides
    t0 = time.perf_counter()
    with _parallel_section() as threads:
        values = _value_tables([prepared.table(k).shape for k in range(m + 1)])  # F1..F(m+1)
        values[0][:] = prepared.first
        for k in range(1, m + 1):
            check(cancel)
            stage, steps = _window_kernel(values[k - 1].shape[0], prepared.n_points, values[k].shape[1])
            _use_threads_for(steps, threads)
            stage(values[k - 1], prepared.table(k), *prepared.ranges32[k - 1], values[k])
        t1 = _record(timings_ms, "dp", t0)
        path = _window_path(prepared, values)
    _record(timings_ms, "backtrack", t1)
    return _as_result(path)


def _backward(prepared: PreparedProblem, k_to: int, args: dict, threads: int, cancel) -> np.ndarray:
    """B_k_to (n, d) from B_m = T_m by backward stages k = m-1..k_to; args[k] = argmax s."""
    suffix = prepared.last.astype(np.float64)  # one kernel specialisation for B
    for k in range(prepared.n_guides - 1, k_to - 1, -1):
        check(cancel)
        table = prepared.table(k)
        out = np.empty(table.shape)
        arg = np.empty(table.shape, dtype=np.int32)
        _use_threads_for(suffix.size * table.shape[0], threads)
        # the turn at layer k+1
        _scan_backward_stage(suffix, table, *prepared.ranges32[k], out, arg, flag_of(cancel))
        args[k] = arg
        suffix = out
    return suffix


def solve_mitm(prepared: PreparedProblem, timings_ms: dict | None = None, cancel=None):
    """The exact optimum by Seredin's meet-in-the-middle pair-state DP, O(m d^3).

    Forward stages run from L0 to the middle guide ``c = m // 2 + 1``, backward
    stages from L(m+1) down to it, and the two halves meet in one more scan
    that applies the turn limit at guide c.  Parameters, returns and errors as
    :func:`solve_window`.
    """
    _check_solver_memory(prepared, "mitm")
    m = prepared.n_guides
    c = m // 2 + 1
    t0 = time.perf_counter()
    values = prepared.first.astype(np.float64)
    forward_args, backward_args = [], {}
    with _parallel_section() as threads:
        for k in range(1, c):
            check(cancel)
            table = prepared.table(k)
            out, arg = np.empty(table.shape), np.empty(table.shape, dtype=np.int32)
            _use_threads_for(values.size * table.shape[1], threads)
            _scan_stage(values, table, *prepared.ranges32[k - 1], out, arg, flag_of(cancel))
            forward_args.append(arg)
            values = out
        suffix = _backward(prepared, c, backward_args, threads, cancel)
        merged, merge_arg = np.empty(suffix.shape), np.empty(suffix.shape, dtype=np.int32)
        _use_threads_for(values.size * suffix.shape[1], threads)
        _scan_stage(values, suffix, *prepared.ranges32[c - 1], merged, merge_arg, flag_of(cancel))
    check(cancel)  # the stages skipped their blocks: the tables are garbage
    t1 = _record(timings_ms, "dp", t0)
    path = np.empty(m + 2, dtype=np.int64)
    path[c], path[c + 1] = _best_state(merged, prepared)
    path[c - 1] = merge_arg[path[c], path[c + 1]]
    for k in range(c - 1, 0, -1):
        path[k - 1] = forward_args[k - 1][path[k], path[k + 1]]
    for k in range(c, m):
        path[k + 2] = backward_args[k][path[k], path[k + 1]]
    _record(timings_ms, "backtrack", t1)
    return _as_result(path)
