"""Host side of the meet-in-the-middle search (:mod:`gpu.knapsack.kernels_mitm`) for a KP2 batch (KP1: ``w1 = 0``)."""

from __future__ import annotations

import numpy as np
from numba import cuda

from gpu.knapsack import kernels_mitm as km
from gpu.knapsack.common import check_budget
from gpu.knapsack.plan import pad_rows

__all__ = ["solve_batch"]


def solve_batch(profits, w1, w2, c1, c2, max_items, budget_bytes):
    """MITM on the instances of a KP2 batch with at most ``max_items`` usable items.

    Returns the (Ks,) indices of the instances solved here (the others, or those
    whose sums reach 2**31, are left to the DP) and their ``(value, selected)``.
    """
    counts = np.array([len(a) for a in profits], dtype=np.int64)
    n_max = max(1, int(counts.max()))
    P, A, B = (pad_rows(x, counts, n_max) for x in (profits, w1, w2))
    c1, c2 = np.asarray(c1, dtype=np.int64), np.asarray(c2, dtype=np.int64)
    keep = (np.arange(n_max)[None, :] < counts[:, None]) & (A <= c1[:, None]) & (B <= c2[:, None]) & (P > 0)
    kept = keep.sum(axis=1)
    small = kept <= min(max_items, km.MAX_ITEMS)
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
    km.mitm_kernel[solved.size, km.THREADS](cuda.to_device(items), cuda.to_device(kept[solved]),
                                      cuda.to_device(caps), values, masks)
    return solved, _selections(values.copy_to_host(), masks.copy_to_host(), order, fields, kept[solved], caps)


def _selections(values, masks, order, fields, kept, caps):
    """Chosen original indices per instance, checked against the values and capacities."""
    n = order.shape[1]
    chosen = ((masks[:, None] >> np.arange(n)[None, :]) & 1).astype(bool) & (np.arange(n)[None, :] < kept[:, None])
    loads = [np.where(chosen, f, 0).sum(axis=1) for f in fields]
    bad = np.flatnonzero((loads[2] != values) | (loads[0] > caps[:, 0]) | (loads[1] > caps[:, 1]))
    if bad.size:
        raise RuntimeError(f"GPU KP meet-in-the-middle: instance {int(bad[0])} chose an inconsistent set; "
                           "this is a bug")
    rows, cols = np.nonzero(chosen)
    picked = order[rows, cols]
    ranked = np.lexsort((picked, rows))
    selected = np.split(picked[ranked].astype(np.int64), np.cumsum(chosen.sum(axis=1))[:-1])
    return [(int(v), s) for v, s in zip(values, selected)]
