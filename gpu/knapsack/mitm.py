"""Exact meet-in-the-middle search for KP2 instances with few items (one block each).

For ``n`` usable items (at most 22) the items are split into halves ``A`` and
``B``; the block enumerates all ``2**|B|`` subsets of ``B`` into shared memory,
then every thread takes subsets of ``A`` and scans all of ``B`` for the most
profitable pair that fits both capacities.  That is ``2**n`` pair checks: a
million for MSB's 20 items, against about 5 million DP cells (items x window)
for the same instance, and a single launch for the whole batch.

Sums are int32, so an instance qualifies only when its total weights and
profit stay below 2**31 (the host checks).  KP1 is KP2 with ``w1 = 0``.
Host work is vectorised over the batch.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64

from gpu.knapsack.common import check_budget, inline_device
from gpu.knapsack.plan import _pad

#: Largest half handled in shared memory: 2**11 subsets of B.
MAX_HALF = 11
#: 2**MAX_HALF, written out: shared-array shapes must be literal constants for numba.
HALF_SUBSETS = 2048
MAX_ITEMS = 2 * MAX_HALF
THREADS = 256


@inline_device
def _subset_sums(items, k, first, count, mask):
    """(w1, w2, p) of the subset ``mask`` of items ``first..first+count-1`` of instance k."""
    w1 = 0
    w2 = 0
    p = 0
    for b in range(count):
        if (mask >> b) & 1:
            w1 += items[k, 0, first + b]
            w2 += items[k, 1, first + b]
            p += items[k, 2, first + b]
    return w1, w2, p


@cuda.jit(cache=True)
def mitm_kernel(items, n_items, capacities, values, masks):
    """Best pair (subset of A, subset of B) of instance ``blockIdx.x``.

    Parameters
    ----------
    items : (K, 3, n_max) int64
        w1, w2, p of the usable items.
    n_items : (K,) int64
    capacities : (K, 2) int64
    values : (K,) int64, out
    masks : (K,) int64, out
        Bit ``i`` set: usable item ``i`` chosen.
    """
    sb_w1 = cuda.shared.array(HALF_SUBSETS, int32)
    sb_w2 = cuda.shared.array(HALF_SUBSETS, int32)
    sb_p = cuda.shared.array(HALF_SUBSETS, int32)
    red_v = cuda.shared.array(THREADS, int64)
    red_m = cuda.shared.array(THREADS, int64)
    k = cuda.blockIdx.x
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    n = n_items[k]
    nb = min(n, MAX_HALF)
    na = n - nb
    c1 = capacities[k, 0]
    c2 = capacities[k, 1]
    b = t
    while b < (1 << nb):
        w1, w2, p = _subset_sums(items, k, 0, nb, b)
        sb_w1[b] = w1
        sb_w2[b] = w2
        sb_p[b] = p
        b += T
    cuda.syncthreads()
    best = -1
    best_mask = 0
    a = t
    while a < (1 << na):
        a1, a2, ap = _subset_sums(items, k, nb, na, a)
        if a1 <= c1 and a2 <= c2:
            room1 = c1 - a1
            room2 = c2 - a2
            for b in range(1 << nb):
                if sb_w1[b] <= room1 and sb_w2[b] <= room2 and sb_p[b] + ap > best:
                    best = sb_p[b] + ap
                    best_mask = (a << nb) | b
        a += T
    red_v[t] = best
    red_m[t] = best_mask
    cuda.syncthreads()
    half = T // 2
    while half > 0:
        if t < half and red_v[t + half] > red_v[t]:
            red_v[t] = red_v[t + half]
            red_m[t] = red_m[t + half]
        cuda.syncthreads()
        half //= 2
    if t == 0:
        values[k] = red_v[0]
        masks[k] = red_m[0]


def solve_batch(profits, w1, w2, c1, c2, max_items, budget_bytes):
    """MITM on the instances of a KP2 batch that have at most ``max_items`` usable items.

    Parameters
    ----------
    profits, w1, w2 : list of K (n_k,) int64 arrays
    c1, c2 : (K,) int64
    max_items : int
        At most :data:`MAX_ITEMS`; 0 solves none.
    budget_bytes : int
        Device-memory budget (the item tables and results).

    Returns
    -------
    solved : (Ks,) int64 ndarray
        Indices of the instances solved here (usable items <= max_items and every
        sum below 2**31); the others are left to the dynamic program.
    results : list of Ks (value, selected)
    """
    counts = np.array([len(a) for a in profits], dtype=np.int64)
    n_max = max(1, int(counts.max()))
    P, A, B = (_pad(x, counts, n_max) for x in (profits, w1, w2))
    c1, c2 = np.asarray(c1, dtype=np.int64), np.asarray(c2, dtype=np.int64)
    keep = (np.arange(n_max)[None, :] < counts[:, None]) & (A <= c1[:, None]) & (B <= c2[:, None]) & (P > 0)
    kept = keep.sum(axis=1)
    small = kept <= min(max_items, MAX_ITEMS)
    for x in (P, A, B):
        small &= np.where(keep, x, 0).sum(axis=1) < 2**31
    solved = np.flatnonzero(small)
    if solved.size == 0:
        return solved, []
    keep = keep[solved]
    order = np.argsort(~keep, axis=1, kind="stable")  # usable items first, in input order
    fields = [np.take_along_axis(np.where(keep, x[solved], 0), order, axis=1) for x in (A, B, P)]
    items = np.ascontiguousarray(np.stack(fields, axis=1))
    check_budget("the KP meet in the middle", items.nbytes + 48 * solved.size, budget_bytes)
    values = cuda.device_array(solved.size, dtype=np.int64)
    masks = cuda.device_array(solved.size, dtype=np.int64)
    caps = np.stack([c1[solved], c2[solved]], axis=1)
    mitm_kernel[solved.size, THREADS](cuda.to_device(items), cuda.to_device(kept[solved]),
                                      cuda.to_device(caps), values, masks)
    return solved, _selections(values.copy_to_host(), masks.copy_to_host(), order, fields, kept[solved], caps)


def _selections(values, masks, order, fields, kept, caps):
    """Chosen original indices per instance, checked against the values and capacities."""
    n = order.shape[1]
    chosen = ((masks[:, None] >> np.arange(n)[None, :]) & 1).astype(bool) & (np.arange(n)[None, :] < kept[:, None])
    loads = [np.where(chosen, f, 0).sum(axis=1) for f in fields]
    bad = np.flatnonzero((loads[2] != values) | (loads[0] > caps[:, 0]) | (loads[1] > caps[:, 1]))
    if bad.size:
        raise RuntimeError(f"GPU KP meet-in-the-middle: instance {int(bad[0])} chose an inconsistent set; this is a bug")
    rows, cols = np.nonzero(chosen)
    picked = order[rows, cols]
    ranked = np.lexsort((picked, rows))
    selected = np.split(picked[ranked].astype(np.int64), np.cumsum(chosen.sum(axis=1))[:-1])
    return [(int(v), s) for v, s in zip(values, selected)]
