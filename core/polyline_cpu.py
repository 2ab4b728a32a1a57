"""The numba CPU solvers ``window`` (O(m d^2)) and ``mitm`` (O(m d^3)).

Both run the pair-state dynamic program of the chain of layers L0..L(m+1)
(see :mod:`core.polyline`): ``F1 = T0`` and

    F(k+1)[q, r] = Tk[q, r] + max { Fk[p, q] : lo_k[q, r] <= p <= hi_k[q, r] }

for the inner layers k = 1..m, values in float64, ``-inf`` for states no
feasible path reaches, int32 argmax tables (-1 where empty) for backtracking.

``F`` is kept transposed, ``cols[q, p] = F[p, q]``, so that the column that
every state ``(q, r)`` maximises over is one contiguous row.

- ``window``: for fixed q the ranges [lo, hi] slide towards larger p as r
  decreases (both ends are monotone), so one monotone deque over the column
  answers all r of that q in O(d) in all.
- ``mitm``: Seredin (2016): forward from L0 up to the middle guide c, backward
  from L(m+1) down to it, merged at c with the turn limit there; every state
  checks every candidate of the previous (or next) layer against the ranges,
  O(d) per state.

The stage kernels are ``parallel=True`` (prange over states) and are called
under :data:`core.parallel.PARALLEL_LOCK`.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit, prange

from core.parallel import PARALLEL_LOCK
from core.polyline import PreparedProblem, check_memory, infeasible_error

__all__ = ["solve_window", "solve_mitm"]


@njit(cache=True, nogil=True, parallel=True)
def _window_stage(cols, table, lo, hi, next_cols, arg):
    """One forward stage by sliding-window maxima.

    cols : (d, n_prev) float64, ``cols[q, p] = Fk[p, q]``
    table : (d, n_next) float32 or float64, ``Tk[q, r]``
    lo, hi : (d, n_next) int64, the feasible p of ``(q, r)``
    next_cols : (n_next, d) float64 out, ``next_cols[r, q] = F(k+1)[q, r]``
    arg : (d, n_next) int32 out, the maximising p (-1 when none)
    """
    d, n_prev = cols.shape
    n_next = table.shape[1]
    for q in prange(d):
        col = cols[q]
        queue = np.empty(n_prev, dtype=np.int64)  # indices, values decreasing
        head, tail, pushed = 0, 0, 0
        for r in range(n_next - 1, -1, -1):  # lo and hi grow as r falls
            while pushed <= hi[q, r]:
                value = col[pushed]
                while tail > head and col[queue[tail - 1]] <= value:
                    tail -= 1
                queue[tail] = pushed
                tail += 1
                pushed += 1
            while head < tail and queue[head] < lo[q, r]:
                head += 1
            if head < tail:  # every queued p lies in [lo, hi]
                best = queue[head]
                next_cols[r, q] = table[q, r] + col[best]
                arg[q, r] = best
            else:
                next_cols[r, q] = -np.inf
                arg[q, r] = -1


@njit(cache=True, nogil=True, parallel=True)
def _scan_stage(cols, table, lo, hi, next_cols, arg):
    """One forward stage of Seredin's DP: every p checked for every (q, r).

    Same arrays as :func:`_window_stage`; O(n_prev) per state.
    """
    d, n_prev = cols.shape
    n_next = table.shape[1]
    for q in prange(d):
        col = cols[q]
        for r in range(n_next):
            first, last = lo[q, r], hi[q, r]
            best, best_p = -np.inf, -1
            for p in range(n_prev):
                if first <= p <= last and col[p] > best:
                    best, best_p = col[p], p
            next_cols[r, q] = table[q, r] + best
            arg[q, r] = best_p


@njit(cache=True, nogil=True, parallel=True)
def _scan_backward_stage(rows, table, lo, hi, prev_rows, arg):
    """One backward stage of Seredin's DP: every s checked for every (q, r).

    rows : (d, n_after) float64, ``B(k+1)[r, s]``: best suffix from link r -> s
    table : (n_k, d) float32, ``Tk[q, r]``
    lo, hi : (d, n_after) int64, ranges of layer k+1: q may precede r -> s
        when ``lo[r, s] <= q <= hi[r, s]``
    prev_rows : (n_k, d) float64 out, ``Bk[q, r] = Tk[q, r] + max_s B(k+1)[r, s]``
    arg : (n_k, d) int32 out, the maximising s (-1 when none)
    """
    d, n_after = rows.shape
    n_k = table.shape[0]
    for r in prange(d):
        row, lo_r, hi_r = rows[r], lo[r], hi[r]
        for q in range(n_k):
            best, best_s = -np.inf, -1
            for s in range(n_after):
                if lo_r[s] <= q <= hi_r[s] and row[s] > best:
                    best, best_s = row[s], s
            prev_rows[q, r] = table[q, r] + best
            arg[q, r] = best_s


def _layer_sizes(prepared: PreparedProblem) -> list[int]:
    """Number of points of layers L0..L(m+1)."""
    d = prepared.n_points
    return [prepared.first.shape[0]] + [d] * prepared.n_guides + [prepared.last.shape[1]]


def _check_solver_memory(prepared: PreparedProblem, method: str) -> None:
    sizes = _layer_sizes(prepared)
    d, m = prepared.n_points, prepared.n_guides
    args = sum(4 * d * sizes[k + 1] for k in range(1, m + 1))  # int32 argmax per inner layer
    values = 3 * 8 * d * max(sizes)  # float64 F (or B) tables alive at once
    check_memory(args + values, f"the {method} solver's tables")


def _best_state(next_cols: np.ndarray, prepared: PreparedProblem):
    """(q, r) of the largest ``next_cols[r, q]``; NoFeasiblePolylineError when all are -inf."""
    flat = int(np.argmax(next_cols))
    if next_cols.flat[flat] == -np.inf:
        raise infeasible_error(prepared)
    r, q = divmod(flat, next_cols.shape[1])
    return q, r


def _trace_back(path: np.ndarray, forward_args: list, k_top: int) -> None:
    """Fill path[0 .. k_top-1] from path[k_top], path[k_top+1] and the forward argmax tables."""
    for k in range(k_top, 0, -1):
        path[k - 1] = forward_args[k - 1][path[k], path[k + 1]]


def _forward(prepared: PreparedProblem, stage, cols: np.ndarray, k_from: int, k_to: int, args: list):
    """Run forward stages k_from..k_to from ``cols`` (F_k_from transposed); return the last output."""
    d = prepared.n_points
    for k in range(k_from, k_to + 1):
        table = prepared.table(k)
        lo, hi = prepared.ranges[k - 1]
        next_cols = np.empty((table.shape[1], d))
        arg = np.empty(table.shape, dtype=np.int32)
        stage(cols, table, lo, hi, next_cols, arg)
        args.append(arg)
        cols = next_cols
    return cols


def _first_cols(prepared: PreparedProblem) -> np.ndarray:
    """F1 = T0 transposed: (d, n0) float64."""
    return np.ascontiguousarray(prepared.first.T, dtype=np.float64)


def _record(timings_ms: dict | None, key: str, since: float) -> float:
    now = time.perf_counter()
    if timings_ms is not None:
        timings_ms[key] = (now - since) * 1e3
    return now


def solve_window(prepared: PreparedProblem, timings_ms: dict | None = None):
    """The exact optimum by sliding-window maxima, O(m d^2).

    Parameters
    ----------
    prepared : PreparedProblem
    timings_ms : dict, optional
        Receives ``"dp"`` and ``"backtrack"`` in milliseconds.

    Returns
    -------
    start_index : int
    indices : (m,) int64 ndarray
    end_index : int

    Raises
    ------
    core.polyline.NoFeasiblePolylineError
        When no polyline satisfies the angle limit.
    ValueError
        When the tables would not fit in the machine's memory.
    """
    _check_solver_memory(prepared, "window")
    m = prepared.n_guides
    t0 = time.perf_counter()
    args: list[np.ndarray] = []
    with PARALLEL_LOCK:
        final_cols = _forward(prepared, _window_stage, _first_cols(prepared), 1, m, args)
    t1 = _record(timings_ms, "dp", t0)
    path = np.empty(m + 2, dtype=np.int64)
    path[m], path[m + 1] = _best_state(final_cols, prepared)
    _trace_back(path, args, m)
    _record(timings_ms, "backtrack", t1)
    return int(path[0]), path[1:-1].copy(), int(path[-1])


def _backward(prepared: PreparedProblem, k_to: int, args: dict) -> np.ndarray:
    """B_k_to (n, d) from B_m = T_m by backward stages k = m-1..k_to; args[k] = argmax s."""
    rows = prepared.last.astype(np.float64)  # one kernel specialisation for B
    for k in range(prepared.n_guides - 1, k_to - 1, -1):
        table = prepared.table(k)
        lo, hi = prepared.ranges[k]  # the turn at layer k+1
        prev_rows = np.empty(table.shape)
        arg = np.empty(table.shape, dtype=np.int32)
        _scan_backward_stage(rows, table, lo, hi, prev_rows, arg)
        args[k] = arg
        rows = prev_rows
    return rows


def solve_mitm(prepared: PreparedProblem, timings_ms: dict | None = None):
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
    forward_args: list[np.ndarray] = []
    backward_args: dict[int, np.ndarray] = {}
    with PARALLEL_LOCK:
        cols = _forward(prepared, _scan_stage, _first_cols(prepared), 1, c - 1, forward_args)
        suffix = _backward(prepared, c, backward_args)
        lo, hi = prepared.ranges[c - 1]
        merged = np.empty((suffix.shape[1], prepared.n_points))
        merge_arg = np.empty(suffix.shape, dtype=np.int32)
        _scan_stage(cols, suffix, lo, hi, merged, merge_arg)
    t1 = _record(timings_ms, "dp", t0)
    path = np.empty(m + 2, dtype=np.int64)
    path[c], path[c + 1] = _best_state(merged, prepared)
    path[c - 1] = merge_arg[path[c], path[c + 1]]
    _trace_back(path, forward_args, c - 1)
    for k in range(c, m):
        path[k + 2] = backward_args[k][path[k], path[k + 1]]
    _record(timings_ms, "backtrack", t1)
    return int(path[0]), path[1:-1].copy(), int(path[-1])
