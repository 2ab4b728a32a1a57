"""KP1 / KP2 / (KP2)^k dynamic programming with one launch per step (Lemos et al.).

One *step* handles ``M`` consecutive items (``M = 1`` is the papers' one launch
per item; ``M = 2`` reads the previous row once for two items).  Every launch
covers all instances of a batch: their rows are concatenated through prefix
offsets and a block finds its instance from a prefix table of tiles.

States and windows.  After ``t`` items an instance's state is a capacity pair
``(j1, j2)``.  Only the window ``lo <= j <= hi`` of each stage matters, per
dimension: ``hi = min(c, S_t)`` (beyond the weight ``S_t`` of the first ``t``
items the value no longer changes, so reads clamp to ``hi``) and
``lo = max(0, c - R_t)`` (cells below it cannot reach the final state ``c``
with the remaining weight ``R_t``).  A stage's row stores its window row-major,
``row = j1 - lo1``, ``col = j2 - lo2``.

Decisions.  For every cell and step the code ``q`` of the chosen subset of the
step's items (bit ``b`` of ``q`` = item ``b`` taken) is kept in ``M`` bit planes,
32 cells a word, one warp ballot per plane.  Each window row starts a new word,
so that the ballot words line up with the rows.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, uint32

from gpu.knapsack_common import ballot, mark

# Fields of the per-(step, instance) metadata table ``meta[step, k, field]``.
LO1, LO2, ROWS, W2N, TPR, ROW_OFF, PLO1, PLO2, PHI1, PHI2, PW2N, BIT_OFF, WPR, NSUB, NITEMS = range(15)
N_FIELDS = 15
# Fields of the subset table ``subsets[step, k, q, field]``.
SUB_S1, SUB_S2, SUB_P = range(3)


@cuda.jit(device=True)
def _find_instance(tile_start, step, tile):
    """Largest k with ``tile_start[step, k] <= tile`` (binary search over instances)."""
    lo = 0
    hi = tile_start.shape[1] - 2
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if tile_start[step, mid] <= tile:
            lo = mid
        else:
            hi = mid - 1
    return lo


@cuda.jit(device=True)
def _best_subset(src, meta_k, sub_k, j1, j2):
    """Best value of cell (j1, j2) over the step's subsets, and the subset's code."""
    base = meta_k[ROW_OFF]
    c1 = min(j1, meta_k[PHI1]) - meta_k[PLO1]
    c2 = min(j2, meta_k[PHI2]) - meta_k[PLO2]
    best = src[base + c1 * meta_k[PW2N] + c2]
    code = 0
    for q in range(1, meta_k[NSUB]):
        s1 = sub_k[q, SUB_S1]
        s2 = sub_k[q, SUB_S2]
        if j1 >= s1 and j2 >= s2:
            a1 = min(j1 - s1, meta_k[PHI1]) - meta_k[PLO1]
            a2 = min(j2 - s2, meta_k[PHI2]) - meta_k[PLO2]
            v = src[base + a1 * meta_k[PW2N] + a2] + sub_k[q, SUB_P]
            if v > best:
                best = v
                code = q
    return best, code


@cuda.jit
def kp_step_kernel(meta, subsets, tile_start, step, src, dst, bits):
    """One DP step of every instance: ``dst`` (stage step+1) from ``src`` (stage step).

    Parameters
    ----------
    meta : (n_steps, K, N_FIELDS) int64
    subsets : (n_steps, K, 2**M, 3) int64
    tile_start : (n_steps, K + 1) int64
        Prefix sums of the tiles (``blockDim.x`` cells of one window row) per instance.
    step : int
    src, dst : (sum of row sizes,) int32 or int64
    bits : (total words,) uint32
    """
    scratch = cuda.shared.array(32, uint32)
    t = cuda.threadIdx.x
    width = cuda.blockDim.x
    total = tile_start[step, tile_start.shape[1] - 1]
    for tile in range(cuda.blockIdx.x, total, cuda.gridDim.x):  # block-uniform loop
        k = _find_instance(tile_start, step, tile)
        meta_k = meta[step, k]
        local = tile - tile_start[step, k]
        row = local // meta_k[TPR]
        col = (local - row * meta_k[TPR]) * width + t
        inside = col < meta_k[W2N]
        code = 0
        if inside:
            best, code = _best_subset(src, meta_k, subsets[step, k], meta_k[LO1] + row, meta_k[LO2] + col)
            dst[meta_k[ROW_OFF] + row * meta_k[W2N] + col] = best
        word_base = meta_k[BIT_OFF] + row * meta_k[NITEMS] * meta_k[WPR] + col // 32
        for plane in range(meta_k[NITEMS]):
            word = ballot((code >> plane) & 1 == 1, scratch)
            if t % 32 == 0 and inside:
                bits[word_base + plane * meta_k[WPR]] = word


@cuda.jit
def kp_backtrack_kernel(meta, subsets, n_steps, items_per_step, bits, row_a, row_b, taken, values):
    """Walk every instance's decisions back from its final state, one thread each.

    Parameters
    ----------
    n_steps : (K,) int64
        Steps of each instance (its stage ``n_steps[k]`` holds the optimum).
    items_per_step : int
        ``M``: item ``step * M + b`` of the processing order is bit ``b`` of a step.
    row_a, row_b : the two row buffers (stage s lives in ``row_a`` for even s).
    taken : (K, >= n_items) uint8, out
        1 where the item (in processing order) is chosen.
    values : (K,) int64, out
        The optimum of each instance.
    """
    k = cuda.grid(1)
    if k >= n_steps.shape[0]:
        return
    last = n_steps[k]
    if last == 0:
        values[k] = 0
        return
    final = meta[last - 1, k]
    values[k] = row_a[final[ROW_OFF]] if last % 2 == 0 else row_b[final[ROW_OFF]]
    j1 = final[LO1]
    j2 = final[LO2]
    for step in range(last - 1, -1, -1):
        m = meta[step, k]
        row = j1 - m[LO1]
        col = j2 - m[LO2]
        word_base = m[BIT_OFF] + row * m[NITEMS] * m[WPR] + col // 32
        code = 0
        for plane in range(m[NITEMS]):
            bit = (bits[word_base + plane * m[WPR]] >> (col % 32)) & 1
            taken[k, step * items_per_step + plane] = bit
            code |= bit << plane
        j1 = min(j1 - subsets[step, k, code, SUB_S1], m[PHI1])
        j2 = min(j2 - subsets[step, k, code, SUB_S2], m[PHI2])


@cuda.jit
def _init_stage0_kernel(row_a, row_starts):
    k = cuda.grid(1)
    if k < row_starts.shape[0]:
        row_a[row_starts[k]] = 0


def _launch_blocks(n_tiles: int) -> int:
    from gpu import config
    from gpu.knapsack_common import multiprocessor_count

    cap = config.KNAPSACK_MAX_BLOCKS or 16 * multiprocessor_count()
    return max(1, min(int(n_tiles), cap))


def device_bytes(plan, itemsize: int) -> int:
    """Device memory the row method needs for ``plan`` with cells of ``itemsize`` bytes."""
    tables = plan.meta.nbytes + plan.subsets.nbytes + plan.tile_start.nbytes
    taken = plan.n_steps.size * plan.n_steps.max(initial=1) * plan.items_per_step
    return 2 * plan.row_cells * itemsize + 4 * plan.bit_words + tables + taken + 64 * plan.n_steps.size


def run_plan(plan, value_dtype, timer=None):
    """Run the steps and the backtracking of a planned batch on the device.

    Returns
    -------
    values : (K,) int64 ndarray
    taken : (K, n_steps.max() * M) uint8 ndarray
        Choices in processing order (see ``plan.order``).
    """
    from gpu import config

    threads = config.KNAPSACK_THREADS_PER_BLOCK
    K = plan.n_steps.size
    row_a = cuda.device_array(plan.row_cells, dtype=value_dtype)
    row_b = cuda.device_array(plan.row_cells, dtype=value_dtype)
    bits = cuda.device_array(max(1, plan.bit_words), dtype=np.uint32)
    meta, subsets = cuda.to_device(plan.meta), cuda.to_device(plan.subsets)
    tile_start = cuda.to_device(plan.tile_start)
    starts = cuda.to_device(plan.row_starts)
    _init_stage0_kernel[-(-K // 128), 128](row_a, starts)
    mark(timer, "upload")
    rows = (row_a, row_b)
    for step in range(plan.meta.shape[0]):
        blocks = _launch_blocks(plan.tile_start[step, -1])
        kp_step_kernel[blocks, threads](meta, subsets, tile_start, step, rows[step % 2], rows[1 - step % 2], bits)
    mark(timer, "steps")
    width = max(1, int(plan.n_steps.max(initial=0)) * plan.items_per_step)
    taken = cuda.device_array((K, width), dtype=np.uint8)
    values = cuda.device_array(K, dtype=np.int64)
    n_steps = cuda.to_device(plan.n_steps)
    kp_backtrack_kernel[-(-K // 64), 64](
        meta, subsets, n_steps, plan.items_per_step, bits, row_a, row_b, taken, values)
    mark(timer, "backtrack")
    values, taken = values.copy_to_host(), taken.copy_to_host()
    mark(timer, "download")
    return values, taken


def selections(plan, taken) -> list[np.ndarray]:
    """Sorted original item indices chosen in each instance."""
    out = []
    for k in range(plan.n_steps.size):
        n = int(plan.n_kept[k])
        chosen = plan.order[k, :n][taken[k, :n] == 1]
        out.append(np.sort(chosen).astype(np.int64))
    return out
