"""Host side of GPU subset sum: reductions, windows, the item loop and recovery.

The reductions and both kernels: docs/notes/gpu.md, "Knapsack methods".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import cuda, njit

from core.knapsack import limits
from gpu import config
from gpu.device import multiprocessor_count
from gpu.knapsack import kernels_subset as ks
from gpu.knapsack.common import check_budget, check_time_limit, mark, workspace
from gpu.launching import launch_resident

__all__ = ["SubsetPlan", "device_bytes", "reduce_instance", "solve_plan"]


@njit(cache=True, nogil=True)
def _greedy(weights, capacity):
    """Heaviest-first greedy on weights sorted in decreasing order: (sum, (n,) bool chosen)."""
    total = 0
    chosen = np.zeros(weights.size, dtype=np.bool_)
    for i in range(weights.size):
        if total + weights[i] <= capacity:
            total += weights[i]
            chosen[i] = True
    return total, chosen


@dataclass(frozen=True)
class SubsetPlan:
    """A reduced instance: items in processing order and the target range."""

    items: np.ndarray  # (n,) original indices, heaviest first
    weights: np.ndarray  # (n,) reduced weights (divided by gcd)
    gcd: int
    total: int  # sum of reduced weights
    low: int  # A
    high: int  # B
    complement: bool  # True: smallest reachable sum in [A, B]; False: largest

    @property
    def target(self) -> int:
        """The sum whose reachability proves optimality."""
        return self.low if self.complement else self.high

    def windows(self):
        """(n,) first and last useful capacity after each item."""
        done = np.cumsum(self.weights)
        rest = self.total - done
        return np.maximum(0, self.low - rest), np.minimum(self.high, done)


def reduce_instance(weights: np.ndarray, capacity: int, trivial_checks: bool = True):
    """Apply the reductions; returns ``(value, selected)`` when solved, else a SubsetPlan."""
    usable = np.flatnonzero((weights > 0) & (weights <= capacity))
    if usable.size == 0:
        return 0, np.zeros(0, dtype=np.int64)
    total = int(weights[usable].sum())
    if total <= capacity:
        return total, usable.astype(np.int64)
    g = int(np.gcd.reduce(weights[usable]))
    order = usable[np.argsort(-weights[usable], kind="stable")]
    w = weights[order] // g
    cap, total = capacity // g, total // g
    lower, chosen = _greedy(w, cap)
    if trivial_checks and lower == cap:
        return lower * g, np.sort(order[chosen]).astype(np.int64)
    if not trivial_checks:
        lower = 0
    complement_high = min(total - cap + int(w[0]) - 1, total - lower)
    if complement_high < cap:
        return SubsetPlan(order, w, g, total, total - cap, complement_high, True)
    return SubsetPlan(order, w, g, total, lower, cap, False)


def device_bytes(plan: SubsetPlan, method: str) -> int:
    """Device memory (bytes) of :func:`solve_plan` for ``plan`` and ``method`` ("bitset" or "gvector")."""
    n_words = plan.high // 64 + 1
    g_size = 2 if plan.weights.size < 32767 else 4
    cells = 64 * n_words if method == "bitset" else plan.high + 2
    extra = 25 * plan.weights.size + 64  # weights and windows (int64) and taken flags
    return (16 * n_words if method == "bitset" else 0) + g_size * cells + extra


def _blocks(count: int, threads: int) -> int:
    """Blocks of a grid-stride launch over ``count`` items (at most 32 per multiprocessor)."""
    return max(1, min(-(-count // threads), 32 * multiprocessor_count()))


def _run_items(plan, method, arrays, done):
    """Launch one kernel per item until the target is reachable; returns items launched."""
    threads = config.SUBSET_SUM_THREADS
    first, last = plan.windows()
    prefix = np.cumsum(plan.weights)
    weights = plan.weights.tolist()
    for i in range(plan.weights.size):
        if method == "bitset":
            lo, hi = int(first[i]) >> 6, int(last[i]) >> 6
            cur, nxt = arrays[i % 2], arrays[1 - i % 2]
            ks.bitset_step_kernel[_blocks(hi - lo + 1, threads), threads](
                cur, nxt, arrays[2], i + 1, weights[i], lo, hi, plan.target, done)
        else:
            lo, hi = int(first[i]), int(last[i])
            ks.gvector_step_kernel[_blocks(hi - lo + 1, threads), threads](
                arrays[2], i + 1, weights[i], lo, hi, plan.target, done)
        check_time_limit(i + 1, plan.weights.size, "subset sum")
        polling = prefix[i] >= plan.target and (i + 1) % config.SUBSET_SUM_POLL_ITEMS == 0
        if polling and done.copy_to_host()[0]:
            return i + 1
    return plan.weights.size


def _best_sum(plan, method, arrays, items_run):
    """Best reachable sum in the target range once every item has run."""
    final = arrays[items_run % 2] if method == "bitset" else arrays[2]
    result = cuda.to_device(np.array([2**62 if plan.complement else -1], dtype=np.int64))
    span = plan.high - plan.low + 1
    kernel = ks.bitset_best_kernel if method == "bitset" else ks.gvector_best_kernel
    count = span // 64 + 2 if method == "bitset" else span
    kernel[_blocks(count, 256), 256](final, plan.low, plan.high, not plan.complement, result)
    best = int(result.copy_to_host()[0])
    if not 0 <= best < 2**62:
        raise RuntimeError("subset sum: no reachable sum in the target range (a kernel fault)")
    return best


def _run_persistent(plan, method, arrays, done):
    """All items in one launch with grid barriers; returns items processed."""
    first, last = plan.windows()
    if method == "bitset":
        first, last = first >> 6, last >> 6
    threads = config.SUBSET_SUM_THREADS
    weights, first, last = (cuda.to_device(np.ascontiguousarray(a, dtype=np.int64))
                            for a in (plan.weights, first, last))
    arrived, items_run, failed = (cuda.to_device(np.zeros(1, dtype=np.int32)) for _ in range(3))
    if method == "bitset":
        kernel = ks.bitset_persistent_kernel
        args = (arrays[0], arrays[1], arrays[2], weights, first, last, plan.target, done, arrived, items_run, failed)
    else:
        kernel = ks.gvector_persistent_kernel
        args = (arrays[2], weights, first, last, plan.target, done, arrived, items_run, failed)
    launch_resident(kernel, args, threads, config.SUBSET_SUM_BLOCKS_PER_SM)
    if failed.copy_to_host()[0]:
        raise RuntimeError("subset sum: the persistent kernel's blocks were not all resident; "
                           "lower gpu.config.SUBSET_SUM_BLOCKS_PER_SM")
    return int(items_run.copy_to_host()[0])


def solve_plan(plan: SubsetPlan, method: str, budget_bytes: int, timer=None, persistent=None):
    """Run ``method`` ("bitset" or "gvector") on a reduced instance.

    ``persistent`` (default ``gpu.config.SUBSET_SUM_PERSISTENT``) runs every item
    in one launch with grid barriers.  Returns the optimum of the original
    instance, the sorted (k,) int64 original indices of a subset with that sum,
    and the number of items processed.
    """
    check_budget(f"subset sum ({method})", device_bytes(plan, method), budget_bytes)
    n_words = plan.high // 64 + 1
    g_dtype = np.int16 if plan.weights.size < 32767 else np.int32
    unset = np.iinfo(g_dtype).max
    if method == "bitset":
        arrays = [workspace(name, n_words, np.uint64) for name in ("row_a", "row_b")]
        for array in arrays:  # only the empty sum is reachable before the first item
            ks.fill_kernel[_blocks(n_words, 256), 256](array, 0)
            array[0:1].copy_to_device(np.ones(1, dtype=np.uint64))
        arrays.append(workspace("bits", 64 * n_words, g_dtype))
    else:
        g = workspace("bits", plan.high + 2, g_dtype)
        ks.fill_kernel[_blocks(g.size, 256), 256](g, unset)
        g[0:1].copy_to_device(np.zeros(1, dtype=g_dtype))
        arrays = (None, None, g)
    done = cuda.to_device(np.zeros(1, dtype=np.int32))
    mark(timer, "upload")
    if config.SUBSET_SUM_PERSISTENT if persistent is None else persistent:
        cells = plan.weights.size * float(n_words if method == "bitset" else plan.high + 1)
        limits.check_dp(cells, f"subset sum by one {method} launch on the GPU ({plan.weights.size:,} items)",
                        limits.GPU_DP_CELLS_PER_S)
        items_run = _run_persistent(plan, method, arrays, done)
    else:
        items_run = _run_items(plan, method, arrays, done)
    best = plan.target if done.copy_to_host()[0] else _best_sum(plan, method, arrays, items_run)
    mark(timer, "items")
    weights_d = cuda.to_device(plan.weights)
    taken = cuda.to_device(np.zeros(plan.weights.size, dtype=np.uint8))
    ks.recover_kernel[1, 1](arrays[2], weights_d, best, taken)
    chosen = taken.copy_to_host().astype(bool)
    mark(timer, "recover")
    if plan.complement:
        chosen = ~chosen
    value = int(plan.weights[chosen].sum())
    if value != (plan.total - best if plan.complement else best):
        raise RuntimeError("subset sum: the recovered subset does not add up to the optimum")
    return value * plan.gcd, np.sort(plan.items[chosen]).astype(np.int64), items_run

