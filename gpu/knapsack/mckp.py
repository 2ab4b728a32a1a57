"""Host side of the GPU multiple-choice knapsack (:mod:`gpu.knapsack.kernels_mckp`)."""

from __future__ import annotations

import numpy as np
from numba import cuda

from gpu import config
from gpu.device import multiprocessor_count
from gpu.knapsack import kernels_mckp as kk
from gpu.knapsack.common import check_budget, check_time_limit, mark, workspace

__all__ = ["prune_dominated", "solve"]


def prune_dominated(profits: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Indices, by ascending weight, of the items of one class that no other item dominates.

    An item is dominated by another that weighs no more and earns at least as much.
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
    """Optimum and (m,) chosen item per class of a validated, feasible MCKP instance.

    ``value_dtype`` is the DP cell type; ``prune`` drops dominated items first.
    """
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
    rows = (workspace("row_a", width, value_dtype), workspace("row_b", width, value_dtype))
    rows[0].copy_to_device(np.zeros(width, dtype=value_dtype))
    choice = workspace("bits", m * width, choice_dtype)
    d_profits, d_weights = cuda.to_device(profits), cuda.to_device(weights)
    T, CPT, chunk = config.MCKP_THREADS, config.MCKP_CELLS_PER_THREAD, config.MCKP_ITEM_CHUNK
    tile = T * CPT
    mark(timer, "upload")
    for k in range(m):
        w_lo = int(weights[firsts[k]: firsts[k] + sizes[k]].min())
        w_hi = int(weights[firsts[k]: firsts[k] + sizes[k]].max())
        shared = (tile + w_hi - w_lo) * itemsize
        staged = shared <= config.MCKP_ROW_SHARED_BYTES
        kernel = kk.class_kernel(value_dtype.name, CPT, chunk, staged)
        blocks = max(1, min(-(-(int(hi[k + 1]) - int(lo[k + 1]) + 1) // tile), 32 * multiprocessor_count()))
        kernel[blocks, T, 0, shared if staged else 0](
            rows[k % 2], rows[1 - k % 2], choice, d_profits, d_weights, int(firsts[k]), int(sizes[k]), k,
            int(lo[k]), int(hi[k]), int(lo[k + 1]), int(hi[k + 1]), w_lo, w_hi, neg)
        check_time_limit(k + 1, m, "MCKP")
    mark(timer, "classes")
    selected = cuda.device_array(m, dtype=np.int64)
    kk.backtrack_kernel[1, 1](choice, d_weights, cuda.to_device(firsts), capacity, selected)
    value = int(rows[m % 2][capacity: capacity + 1].copy_to_host()[0])
    local = selected.copy_to_host()
    mark(timer, "backtrack")
    return value, np.array([keep[k][local[k]] for k in range(m)], dtype=np.int64)
