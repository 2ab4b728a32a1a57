"""Compiled sorts for the few thousand items a compiled KP1 pass sorts: one counting pass into buckets of
nearly equal keys, then each bucket by insertion (or numba's sort where it holds many).

numba's own sort (a quicksort) took 2-5 times numpy's on 1,000-10,000 keys on the benchmark VM, and a
least significant digit radix sort needs five or six passes over keys 50-60 bits wide (efficiency keys
with the item's index below); spread over about as many buckets as keys, most buckets hold one or two.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["bucket_order", "sort_keys"]

#: Below this many keys numba's sort is used (the buckets' counts then cost more than they save).
_SMALL = 128
#: A bucket larger than this is sorted by numba's sort rather than by insertion.
_BUCKET_INSERTION = 32


@njit(cache=True, nogil=True)
def bucket_order(values, count):
    """The order (indices into ``values[:count]``) of ``values[:count]`` (float64 or int64) by bucket: the
    index of each value's bucket among about ``count`` equal ranges between the least and the largest,
    rising, ties in input order (a counting sort).  Returns ``(order, starts)``: bucket ``q`` holds
    ``order[starts[q]:starts[q + 1]]``, whose values lie between those of the buckets around it."""
    low, high = values[0], values[0]
    for k in range(count):
        low, high = min(low, values[k]), max(high, values[k])
    buckets = 1
    while buckets < count:
        buckets *= 2
    scale = buckets / (np.float64(high) - np.float64(low)) if high > low else 0.0
    bucket = np.empty(count, np.int64)
    starts = np.zeros(buckets + 1, np.int64)
    for k in range(count):  # (floating point keeps the ranges in order: rounding is monotone)
        q = min(np.int64((np.float64(values[k]) - np.float64(low)) * scale), buckets - 1)
        bucket[k] = q
        starts[q + 1] += 1
    for q in range(buckets):
        starts[q + 1] += starts[q]
    order, fill = np.empty(count, np.int64), starts[:-1].copy()
    for k in range(count):
        order[fill[bucket[k]]] = k
        fill[bucket[k]] += 1
    return order, starts


@njit(cache=True, nogil=True)
def sort_keys(keys):
    """``keys`` (int64) sorted: in place by numba's sort where few, else a new array by :func:`bucket_order`
    and each bucket sorted."""
    n = len(keys)
    if n <= _SMALL:
        keys.sort()
        return keys
    order, starts = bucket_order(keys, n)
    out = keys[order]
    for q in range(len(starts) - 1):
        lo, hi = starts[q], starts[q + 1]
        if hi - lo > _BUCKET_INSERTION:
            out[lo:hi].sort()
        else:
            for k in range(lo + 1, hi):
                x, j = out[k], k
                while j > lo and out[j - 1] > x:
                    out[j] = out[j - 1]
                    j -= 1
                out[j] = x
    return out
