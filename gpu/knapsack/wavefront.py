"""Host side of the KP1 wavefront (:mod:`gpu.knapsack.kernels_wavefront`): geometry, launch, recovery.

:func:`plan` sizes the capacity chunks, item batches and the ring of
published rows for one instance (None when a chunk does not fit a block's
shared memory); :func:`run` launches the persistent kernel and the
speculative backtracking.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from gpu import config
from gpu.device import multiprocessor_count, simulator
from gpu.knapsack import kernels_wavefront as kw
from gpu.knapsack.common import mark, workspace

__all__ = ["WavefrontPlan", "plan", "run"]


class WavefrontPlan:
    """Launch geometry of the wavefront kernel for one KP1 instance (see :func:`plan`)."""

    def __init__(self, n, N, threads, blocks, S, K, D, reach, value_dtype):
        self.n, self.N, self.threads, self.blocks = n, N, threads, blocks
        self.S, self.K, self.D, self.reach, self.value_dtype = S, K, D, reach, value_dtype
        self.nwords = blocks * S // 32

    @property
    def shared_bytes(self) -> int:
        """Dynamic shared memory of one block: two own rows and ``K`` halos of ``S`` cells."""
        return (2 + self.K) * self.S * self.value_dtype.itemsize

    @property
    def device_bytes(self) -> int:
        """Device memory of :func:`run`: decision bits, the ring, item tables and counters."""
        bits = 4 * self.n * self.nwords
        ring = self.D * self.N * self.value_dtype.itemsize
        items = 33 * self.n  # weight, profit and two ring offsets (int64), and a taken flag
        return bits + ring + items + 4 * (self.blocks + 1) + 64


def plan(n_items: int, max_shift: int, capacity: int, value_dtype) -> WavefrontPlan | None:
    """Geometry for ``n_items`` items over capacities 0..capacity, or None when a chunk's
    rows do not fit the shared memory of a block."""
    T = config.KNAPSACK_WAVEFRONT_THREADS
    N = capacity + 1
    blocks_wanted = config.KNAPSACK_WAVEFRONT_BLOCKS or multiprocessor_count()
    per_thread = -(-N // (blocks_wanted * T))
    S = per_thread * T
    blocks = -(-N // S)
    rows_bytes = config.KNAPSACK_WAVEFRONT_SHARED_BYTES - kw.STATIC_SHARED_BYTES
    K = min(config.KNAPSACK_WAVEFRONT_BATCH, kw.MAX_BATCH, rows_bytes // (S * value_dtype.itemsize) - 2)
    if K < 1:
        return None
    D = config.KNAPSACK_WAVEFRONT_RING_ROWS or 4 * K + 1
    if simulator():  # blocks run one after another there: never wait on a right neighbour
        D = n_items + 1
    D = max(K + 1, min(D, n_items + 1))
    reach = -(-max_shift // S)
    return WavefrontPlan(n_items, N, T, blocks, S, K, D, reach, np.dtype(value_dtype))


def run(plan: WavefrontPlan, weights: np.ndarray, profits: np.ndarray, timer=None):
    """Solve on the device; returns (optimum, (n,) uint8 taken flags in the given item order)."""
    items = np.arange(plan.n, dtype=np.int64)
    table = cuda.to_device(np.stack([weights, profits, (items + 1) % plan.D * plan.N,
                                     np.where(items > 0, items % plan.D * plan.N, -1)]).astype(np.int64))
    shift, profit, write_slot, read_slot = table[0], table[1], table[2], table[3]
    ring = workspace("row_a", plan.D * plan.N, plan.value_dtype)
    bits = workspace("bits", plan.n * plan.nwords, np.uint32)
    counters = cuda.to_device(np.zeros(plan.blocks + 1, dtype=np.int32))
    progress, failed = counters[: plan.blocks], counters[plan.blocks:]
    result = cuda.device_array(1, dtype=np.int64)
    kernel = kw.wavefront_kernel(plan.value_dtype.name, plan.S // plan.threads)
    mark(timer, "upload")
    kernel[plan.blocks, plan.threads, 0, plan.shared_bytes](
        shift, profit, write_slot, read_slot, plan.N, plan.S, plan.K, plan.D, plan.reach, ring, bits, plan.nwords,
        progress, result, failed)
    mark(timer, "wavefront")
    levels = min(int(math.log2(config.KNAPSACK_BACKTRACK_THREADS)), kw.MAX_LEVELS)
    taken = cuda.device_array(max(1, plan.n), dtype=np.uint8)
    kw.speculative_backtrack_kernel[1, 1 << levels](shift, bits, plan.nwords, plan.N - 1, levels, taken)
    mark(timer, "backtrack")
    if failed.copy_to_host()[0]:
        raise RuntimeError("the wavefront kernel's blocks were not all resident at once; "
                           "lower gpu.config.KNAPSACK_WAVEFRONT_BLOCKS")
    value, flags = int(result.copy_to_host()[0]), taken.copy_to_host()[: plan.n]
    mark(timer, "download")
    return value, flags
