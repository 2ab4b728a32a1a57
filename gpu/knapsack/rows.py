"""Host side of the row method (:mod:`gpu.knapsack.kernels_rows`): launches, memory, recovery.

A planned batch (:mod:`gpu.knapsack.plan`) runs one launch per step for all
its instances, then one backtracking launch; the choices come back in
processing order and are mapped to the original items and checked here.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from gpu import config
from gpu.device import multiprocessor_count
from gpu.knapsack import kernels_rows as kr
from gpu.knapsack.common import check_time_limit, mark, workspace

__all__ = ["device_bytes", "run_plan", "selections"]


def _launch_blocks(n_tiles: int) -> int:
    """Grid of a step launch over ``n_tiles`` tiles (``KNAPSACK_MAX_BLOCKS``, or 16 per multiprocessor)."""
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
    threads = config.KNAPSACK_THREADS_PER_BLOCK
    kernel = kr.step_kernel(plan.items_per_step, plan.cells_per_thread)
    K = plan.n_steps.size
    row_a = workspace("row_a", plan.row_cells, value_dtype)
    row_b = workspace("row_b", plan.row_cells, value_dtype)
    bits = workspace("bits", plan.bit_words, np.uint32)
    mark(timer, "alloc")
    meta, subsets = cuda.to_device(plan.meta), cuda.to_device(plan.subsets)
    tile_start = cuda.to_device(plan.tile_start)
    starts = cuda.to_device(plan.row_starts)
    kr.init_stage0_kernel[-(-K // 128), 128](row_a, starts)
    mark(timer, "upload")
    rows = (row_a, row_b)
    for step in range(plan.meta.shape[0]):
        total = int(plan.tile_start[step, -1])
        if total == 0:  # no instance has items left
            continue
        blocks = _launch_blocks(total)
        per_block = -(-total // blocks)
        kernel[-(-total // per_block), threads](
            meta, subsets, tile_start, step, per_block, rows[step % 2], rows[1 - step % 2], bits)
        check_time_limit(step + 1, plan.meta.shape[0], "the KP dynamic program")
    mark(timer, "steps")
    width = max(1, int(plan.n_steps.max(initial=0)) * plan.items_per_step)
    taken = cuda.device_array((K, width), dtype=np.uint8)
    values = cuda.device_array(K, dtype=np.int64)
    n_steps = cuda.to_device(plan.n_steps)
    kr.kp_backtrack_kernel[-(-K // 64), 64](
        meta, subsets, n_steps, plan.items_per_step, bits, row_a, row_b, taken, values)
    mark(timer, "backtrack")
    values, taken = values.copy_to_host(), taken.copy_to_host()
    mark(timer, "download")
    return values, taken


def selections(plan, taken, values) -> list[np.ndarray]:
    """Sorted original item indices chosen in each instance, checked against ``values``.

    Raises
    ------
    RuntimeError
        When a choice is not worth its instance's optimum or breaks a capacity.
    """
    n = min(taken.shape[1], plan.order.shape[1])
    usable = np.arange(n)[None, :] < plan.n_kept[:, None]  # the rest of ``taken`` is never written
    chosen = (taken[:, :n] == 1) & usable
    worth = np.where(chosen, plan.profits[:, :n], 0).sum(axis=1)
    load1 = np.where(chosen, plan.weights1[:, :n], 0).sum(axis=1)
    load2 = np.where(chosen, plan.weights2[:, :n], 0).sum(axis=1)
    bad = np.flatnonzero((worth != values) | (load1 > plan.capacities1) | (load2 > plan.capacities2))
    if bad.size:
        k = int(bad[0])
        raise RuntimeError(f"GPU KP solver: instance {k} chose items worth {worth[k]} for an optimum of "
                           f"{values[k]} (loads {load1[k]}, {load2[k]}); this is a bug")
    rows, cols = np.nonzero(chosen)
    items = plan.order[rows, cols]
    ranked = np.lexsort((items, rows))
    return np.split(items[ranked].astype(np.int64), np.cumsum(chosen.sum(axis=1))[:-1])
