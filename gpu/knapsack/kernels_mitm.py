"""Kernel of the exact meet-in-the-middle search for KP2 instances with few items (one block each).

Sums are int32 (the host checks that they fit); docs/notes/gpu.md, "Knapsack methods".
"""

from __future__ import annotations

from numba import cuda, int32, int64

from gpu.knapsack.kernels_common import inline_device

__all__ = ["HALF_SUBSETS", "MAX_HALF", "MAX_ITEMS", "THREADS", "mitm_kernel"]

#: Largest half handled in shared memory: 2**11 subsets of B.
MAX_HALF = 11
#: 2**MAX_HALF, written out: shared-array shapes must be literal constants for numba.
HALF_SUBSETS = 2048
MAX_ITEMS = 2 * MAX_HALF
#: Threads per block, and the size of the block's reduction arrays (a compile-time constant).
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
