"""Multiple-choice knapsack on the GPU (after Suri, Bordoloi and Eles).

DP over capacity, one launch per class: ``f_k[j] = max_t f_{k-1}[j - w_t] + p_t``
over the items ``t`` of class ``k`` ("at most ``j``" semantics, ``f_{-1} = 0``).
Only the window ``[lo_k, hi_k]`` is computed: below ``lo_k`` (the lightest items
of classes ``0..k``) nothing is feasible, above ``hi_k`` (the capacity less the
lightest items of the later classes) nothing is needed.

Each block owns tiles of ``T * CPT`` consecutive capacities; a thread holds
``CPT`` cells strided by the block width, so every load and store of a warp is
coalesced.  The class's items are prefetched into shared memory in chunks and
read as broadcasts; when it fits, the slice of the previous row that the tile
reads (``[J0 - w_max, J0 + tile - w_min)``) is staged in shared memory too.
The argmax item of every cell goes to a choice table for the backtracking.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, int32, int64

from gpu.knapsack.common import check_budget, device_buffer, mark, multiprocessor_count

__all__ = ["prune_dominated", "solve"]


@functools.cache
def class_kernel(value_type_name: str, cells_per_thread: int, chunk: int, staged: bool):
    """The class kernel for one value type, cells per thread, item chunk and staging choice."""
    value_type = {"int32": int32, "int64": int64}[value_type_name]
    CPT = cells_per_thread

    @cuda.jit
    def mckp_class(prev, cur, choice, profits, weights, first, count, k, lo_prev, hi_prev, lo, hi, w_min, w_max, neg):
        sm_p = cuda.shared.array(chunk, int64)
        sm_w = cuda.shared.array(chunk, int32)
        sm_f = cuda.shared.array(0, value_type)
        T = cuda.blockDim.x
        t = cuda.threadIdx.x
        tile = T * CPT
        row = k * cur.shape[0]
        for tb in range(cuda.blockIdx.x, (hi - lo + tile) // tile, cuda.gridDim.x):
            J0 = lo + tb * tile
            best = cuda.local.array(CPT, value_type)
            arg = cuda.local.array(CPT, int32)
            for r in range(CPT):
                best[r] = neg
                arg[r] = -1
            if staged:
                base = J0 - w_max
                for x in range(t, tile + w_max - w_min, T):
                    src = base + x
                    sm_f[x] = prev[src] if lo_prev <= src <= hi_prev else neg
            for c0 in range(0, count, chunk):
                n_here = min(chunk, count - c0)
                cuda.syncthreads()
                for x in range(t, n_here, T):
                    sm_p[x] = profits[first + c0 + x]
                    sm_w[x] = weights[first + c0 + x]
                cuda.syncthreads()
                for it in range(n_here):
                    wt = sm_w[it]
                    pt = sm_p[it]
                    for r in range(CPT):
                        if staged:
                            v = sm_f[r * T + t + w_max - wt]
                        else:
                            src = J0 + r * T + t - wt
                            v = prev[src] if lo_prev <= src <= hi_prev else neg
                        cand = v + pt
                        if cand > best[r]:
                            best[r] = cand
                            arg[r] = c0 + it
            for r in range(CPT):
                j = J0 + r * T + t
                if j <= hi:
                    cur[j] = best[r]
                    choice[row + j] = arg[r]
            cuda.syncthreads()

    return mckp_class


@cuda.jit(cache=True)
def backtrack_kernel(choice, weights, firsts, capacity, selected):
    """One thread: the chosen item of every class, last class first."""
    if cuda.grid(1) != 0:
        return
    width = capacity + 1
    j = capacity
    for k in range(firsts.shape[0] - 1, -1, -1):
        t = choice[k * width + j]
        selected[k] = t
        j -= weights[firsts[k] + t]


def prune_dominated(profits: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Indices of the items of one class that no other item dominates.

    An item is dominated when another one weighs no more and earns at least
    as much; dropping it keeps the optimum (swap it for its dominator).

    Returns
    -------
    (k,) int64 ndarray, ascending weights (and strictly ascending profits)
    """
    order = np.lexsort((-profits, weights))
    p = profits[order]
    best_before = np.maximum.accumulate(np.concatenate([[-1], p[:-1]]))
    return order[p > best_before].astype(np.int64)


def _windows(min_weights: np.ndarray, capacity: int):
    """(m + 1,) lo and hi of stages -1..m-1 (index 0 is the empty prefix)."""
    done = np.concatenate([[0], np.cumsum(min_weights)])
    return done, capacity - (done[-1] - done)


def solve(classes, capacity: int, budget_bytes: int, value_dtype: np.dtype, prune: bool, timer=None):
    """Optimum and chosen item per class of an MCKP instance (validated, feasible).

    Parameters
    ----------
    classes : tuple of (profits, weights) int64 array pairs
    capacity : int
    budget_bytes : int
    value_dtype : numpy dtype of the DP cells (int32 when all sums stay below 2**30)
    prune : bool
        Drop dominated items first (exact).

    Returns
    -------
    value : int
    selected : (m,) int64 ndarray
    """
    from gpu import config

    keep = [prune_dominated(p, w) if prune else np.arange(len(p)) for p, w in classes]
    profits = np.concatenate([p[i] for (p, _), i in zip(classes, keep)])
    weights = np.concatenate([w[i] for (_, w), i in zip(classes, keep)])
    sizes = np.array([len(i) for i in keep], dtype=np.int64)
    firsts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    m, width = len(classes), capacity + 1
    choice_dtype = np.int16 if sizes.max() < 32767 else np.int32
    itemsize = value_dtype.itemsize
    needed = m * width * np.dtype(choice_dtype).itemsize + 2 * width * itemsize + 16 * weights.size + 64 * m
    check_budget("MCKP", needed, budget_bytes)

    min_w = np.array([weights[f: f + s].min() for f, s in zip(firsts, sizes)], dtype=np.int64)
    lo, hi = _windows(min_w, capacity)
    neg = -(2**30) if value_dtype == np.int32 else -(2**62)
    rows = (device_buffer("row_a", width, value_dtype), device_buffer("row_b", width, value_dtype))
    rows[0].copy_to_device(np.zeros(width, dtype=value_dtype))
    choice = device_buffer("bits", m * width, choice_dtype)
    d_profits, d_weights = cuda.to_device(profits), cuda.to_device(weights)
    T, CPT, chunk = config.MCKP_THREADS, config.MCKP_CELLS_PER_THREAD, config.MCKP_ITEM_CHUNK
    tile = T * CPT
    mark(timer, "upload")
    for k in range(m):
        w_lo, w_hi = int(weights[firsts[k]: firsts[k] + sizes[k]].min()), int(weights[firsts[k]: firsts[k] + sizes[k]].max())
        shared = (tile + w_hi - w_lo) * itemsize
        staged = shared <= config.MCKP_ROW_SHARED_BYTES
        kernel = class_kernel(value_dtype.name, CPT, chunk, staged)
        blocks = max(1, min(-(-(int(hi[k + 1]) - int(lo[k + 1]) + 1) // tile), 32 * multiprocessor_count()))
        kernel[blocks, T, 0, shared if staged else 0](
            rows[k % 2], rows[1 - k % 2], choice, d_profits, d_weights, int(firsts[k]), int(sizes[k]), k,
            int(lo[k]), int(hi[k]), int(lo[k + 1]), int(hi[k + 1]), w_lo, w_hi, neg)
    mark(timer, "classes")
    selected = cuda.device_array(m, dtype=np.int64)
    backtrack_kernel[1, 1](choice, d_weights, cuda.to_device(firsts), capacity, selected)
    value = int(rows[m % 2][capacity: capacity + 1].copy_to_host()[0])
    local = selected.copy_to_host()
    mark(timer, "backtrack")
    return value, np.array([keep[k][local[k]] for k in range(m)], dtype=np.int64)
