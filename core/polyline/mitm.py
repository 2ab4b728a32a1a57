"""The CPU ``mitm`` solver: Seredin's (2016) meet-in-the-middle pair-state DP, O(m d^3).

Forward stages run from L0 to the middle guide ``c = m // 2 + 1``, backward
stages from L(m+1) down to it, and one scan merges the halves with the turn
limit at guide c.  A stage at d = 1024 takes about a second, so the kernels
poll the cancel flag before every block of states.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from core.cancel import check, flag_of
from core.parallel import cancel_requested
from core.polyline.problem import PolylineSolution, PreparedProblem
from core.polyline.stages import (
    TILE_COLUMNS,
    Stopwatch,
    best_state,
    check_solver_memory,
    load_tile,
    parallel_section,
    solution,
    use_threads_for,
)

__all__ = ["solve_mitm"]


@njit(cache=True, nogil=True, parallel=True)
def _scan_stage(values, table, lo, hi, out, arg, cancel_flag):
    """One forward stage of Seredin's DP: every p checked for every state (q, r).

    values : (n_prev, d) float64, Fk
    table : (d, n_next) float32 or float64, Tk
    lo, hi : (d, n_next) int32, the feasible p of each state (q, r)
    out : (d, n_next) float64, F(k+1) (written)
    arg : (d, n_next) int32, the maximising p, -1 when none (written)
    cancel_flag : (1,) uint8, the blocks left are skipped once it is set
    """
    n_prev, d = values.shape
    n_next = table.shape[1]
    for block in prange((d + TILE_COLUMNS - 1) // TILE_COLUMNS):
        if cancel_requested(cancel_flag):
            continue
        q0 = block * TILE_COLUMNS
        tile = np.empty((TILE_COLUMNS, n_prev))
        for i in range(load_tile(values, q0, tile)):
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
    arg : (n_k, d) int32, the maximising s, -1 when none (written)
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


def _forward(prepared: PreparedProblem, k_to: int, args: list, threads: int, cancel) -> np.ndarray:
    """F_k_to (n, d) from F_1 = T_0 by forward stages k = 1..k_to-1; args[k - 1] = argmax p."""
    values = prepared.first.astype(np.float64)
    for k in range(1, k_to):
        check(cancel)
        table = prepared.table(k)
        out, arg = np.empty(table.shape), np.empty(table.shape, dtype=np.int32)
        use_threads_for(values.size * table.shape[1], threads)
        _scan_stage(values, table, *prepared.ranges32[k - 1], out, arg, flag_of(cancel))
        args.append(arg)
        values = out
    return values


def _backward(prepared: PreparedProblem, k_to: int, args: dict, threads: int, cancel) -> np.ndarray:
    """B_k_to (n, d) from B_m = T_m by backward stages k = m-1..k_to; args[k] = argmax s."""
    suffix = prepared.last.astype(np.float64)  # one kernel specialisation for B
    for k in range(prepared.n_guides - 1, k_to - 1, -1):
        check(cancel)
        table = prepared.table(k)
        out, arg = np.empty(table.shape), np.empty(table.shape, dtype=np.int32)
        use_threads_for(suffix.size * table.shape[0], threads)
        # the turn at layer k+1
        _scan_backward_stage(suffix, table, *prepared.ranges32[k], out, arg, flag_of(cancel))
        args[k] = arg
        suffix = out
    return suffix


def solve_mitm(prepared: PreparedProblem, cancel=None) -> PolylineSolution:
    """The exact optimum by Seredin's meet-in-the-middle pair-state DP, O(m d^3).

    Parameters, returns and errors as :func:`core.polyline.window.solve_window`
    (method "mitm"); ``cancel`` is also polled inside every stage.
    """
    check_solver_memory(prepared, "mitm")
    m = prepared.n_guides
    c = m // 2 + 1
    clock = Stopwatch()
    forward_args, backward_args = [], {}
    with parallel_section() as threads:
        values = _forward(prepared, c, forward_args, threads, cancel)
        suffix = _backward(prepared, c, backward_args, threads, cancel)
        merged, merge_arg = np.empty(suffix.shape), np.empty(suffix.shape, dtype=np.int32)
        use_threads_for(values.size * suffix.shape[1], threads)
        _scan_stage(values, suffix, *prepared.ranges32[c - 1], merged, merge_arg, flag_of(cancel))
    check(cancel)  # the stages skipped their blocks: the tables are garbage
    clock.lap("dp")
    path = np.empty(m + 2, dtype=np.int64)
    path[c], path[c + 1] = best_state(merged, prepared)
    path[c - 1] = merge_arg[path[c], path[c + 1]]
    for k in range(c - 1, 0, -1):
        path[k - 1] = forward_args[k - 1][path[k], path[k + 1]]
    for k in range(c, m):
        path[k + 2] = backward_args[k][path[k], path[k + 1]]
    clock.lap("backtrack")
    return solution(prepared, path, "mitm", clock.timings_ms)
