"""The efficiency order without a sort of every item: the break item by weighted selection (combo's
partitioning) and the order of the few items a KP1 pass needs in order (:mod:`core.knapsack.kp1_first`).

The efficiency order: item ``i`` comes before item ``j`` where ``e[i] > e[j]``, or ``e[i] == e[j]`` and
``tie[i] < tie[j]`` (the caller's index: the order of :func:`core.knapsack.kp1_greedy.ordered`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from core.knapsack.sorting import bucket_order

__all__ = ["break_item", "in_efficiency_order", "sort_positions"]

#: Ranges of at most this many items are put in order by insertion.
_SMALL = 16


# The comparisons are written out in each loop: as a helper function, even one numba
# inlines, a 256-item insertion sort took ten times as long on the benchmark VM.


@njit(cache=True, nogil=True)
def _insertion(ids, lo, hi, e, tie):
    for k in range(lo + 1, hi):
        x, q = ids[k], k
        ex, tx = e[x], tie[x]
        while q > lo:
            y = ids[q - 1]
            if ex > e[y] or (ex == e[y] and tx < tie[y]):
                ids[q] = y
                q -= 1
            else:
                break
        ids[q] = x


@njit(cache=True, nogil=True)
def _partition(ids, lo, hi, e, tie, w):
    """``ids[lo:hi]`` (``hi - lo >= 3``) rearranged as the items before a pivot (the median of the first,
    middle and last), the pivot, the items after it: ``(pivot's position, weight of the items before it)``."""
    mid = (lo + hi - 1) // 2
    _insertion_three(ids, lo, mid, hi - 1, e, tie)
    ids[mid], ids[hi - 1] = ids[hi - 1], ids[mid]
    pivot = ids[hi - 1]
    pe, pt = e[pivot], tie[pivot]
    store, weight = lo, np.int64(0)
    for k in range(lo, hi - 1):  # without branches on the comparison, half of which a predictor would miss
        x = ids[k]
        ex = e[x]
        before = (ex > pe) | ((ex == pe) & (tie[x] < pt))
        ids[k] = ids[store]
        ids[store] = x
        store += before
        weight += w[x] * before
    ids[hi - 1] = ids[store]
    ids[store] = pivot
    return store, weight


@njit(cache=True, nogil=True)
def _insertion_three(ids, a, b, c, e, tie):
    """``ids[a], ids[b], ids[c]`` in the efficiency order."""
    for first, second in ((a, b), (b, c), (a, b)):
        x, y = ids[first], ids[second]
        if e[y] > e[x] or (e[y] == e[x] and tie[y] < tie[x]):
            ids[first], ids[second] = y, x


@njit(cache=True, nogil=True)
def sort_positions(ids, e, tie):
    """Sort ``ids`` in place into the efficiency order (:func:`_precedes`): a quicksort by
    :func:`_partition`, the smaller side first, insertion below :data:`_SMALL` items."""
    stack = np.empty(128, np.int64)
    top = 0
    lo, hi = 0, len(ids)
    while True:
        if hi - lo <= _SMALL:
            _insertion(ids, lo, hi, e, tie)
            if top == 0:
                return
            top -= 2
            lo, hi = stack[top], stack[top + 1]
            continue
        k, _ = _partition(ids, lo, hi, e, tie, tie)
        if k - lo < hi - k - 1:  # the larger side waits (depth at most log2 n)
            stack[top], stack[top + 1] = k + 1, hi
            hi = k
        else:
            stack[top], stack[top + 1] = lo, k
            lo = k + 1
        top += 2


@njit(cache=True, nogil=True)
def break_item(ids, e, tie, w, capacity):
    """The break item by weighted selection: ``ids`` rearranged in place so that ``ids[:b]`` are the items
    before it in the efficiency order (in no particular order), ``ids[b]`` the break item (the first that does
    not fit after all before it) and the rest after it: ``(b, weight of ids[:b])``, ``b = len(ids)`` where
    all fit.

    Expected linear time, as combo's partitioning: a sample of the items in efficiency order estimates the
    break item's efficiency, one pass splits the items into those clearly before it, a band around it and
    those clearly after, and partitions around pivots (median of three) narrow the range that holds it
    (the band, where the estimate was right); a range that does not shrink in 64 partitions is sorted."""
    lo, hi, used = _split_by_estimate(ids, e, tie, w, capacity)
    rounds = 0
    while hi - lo > _SMALL and rounds < 64:
        rounds += 1
        k, left = _partition(ids, lo, hi, e, tie, w)
        if used + left > capacity:
            hi = k
        elif used + left + w[ids[k]] > capacity:
            return k, used + left
        else:
            used += left + w[ids[k]]
            lo = k + 1
    part = ids[lo:hi]
    sort_positions(part, e, tie)
    for k in range(lo, hi):
        if used + w[ids[k]] > capacity:
            return k, used
        used += w[ids[k]]
    return hi, used


#: :func:`_split_by_estimate` samples this many items (at most) ...
_SAMPLE = 256
#: ... and its band reaches this many sampled items either side of the estimate.
_BAND = 24


@njit(cache=True, nogil=True)
def _split_by_estimate(ids, e, tie, w, capacity):
    """``ids`` (the items in any order) rearranged as those clearly before the break item, a band, those
    clearly after: ``(lo, hi, used)``, the range of ``ids`` that holds the break item and the weight of the
    items before it (the whole range where the estimate missed the band, or ``n`` is small)."""
    n = len(ids)
    if n <= 4 * _SAMPLE:
        return 0, n, np.int64(0)
    sample = np.empty(_SAMPLE, np.int64)
    for k in range(_SAMPLE):
        sample[k] = ids[k * n // _SAMPLE]
    sort_positions(sample, e, tie)
    total, sampled = np.int64(0), np.int64(0)
    for j in range(n):
        total += w[j]
    for k in range(_SAMPLE):
        sampled += w[sample[k]]
    q, reach = 0, capacity * (sampled / total)  # the estimate: where the sample's weight passes its share
    acc = 0.0
    while q < _SAMPLE - 1 and acc + w[sample[q]] <= reach:
        acc += w[sample[q]]
        q += 1
    high, low = e[sample[max(q - _BAND, 0)]], e[sample[min(q + _BAND, _SAMPLE - 1)]]
    before, band, after = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    nb, nm, na = 0, 0, 0
    w_before, w_band = np.int64(0), np.int64(0)
    for k in range(n):
        x = ids[k]
        if e[x] > high:
            before[nb] = x
            nb += 1
            w_before += w[x]
        elif e[x] < low:
            after[na] = x
            na += 1
        else:
            band[nm] = x
            nm += 1
            w_band += w[x]
    ids[:nb] = before[:nb]
    ids[nb : nb + nm] = band[:nm]
    ids[nb + nm :] = after[:na]
    if w_before > capacity:
        return 0, nb, np.int64(0)
    if w_before + w_band > capacity:
        return nb, nb + nm, w_before
    return nb + nm, n, w_before + w_band


@njit(cache=True, nogil=True)
def in_efficiency_order(positions, count, e, order, reverse):
    """The first ``count`` of ``positions`` sorted into the efficiency order (ties by caller index, ``order``
    the caller's index of each position), or its reverse: few by :func:`sort_positions`, many first into
    buckets of nearly equal efficiency (:func:`core.knapsack.sorting.bucket_order`; numba's sort and this
    module's take several times numpy's on thousands, and a class-5 instance at n = 10000 leaves 3000 items
    free), then each bucket by insertion (by :func:`sort_positions` where it holds more than :data:`_SMALL`)."""
    if count <= _FEW:
        out = positions[:count].copy()
        sort_positions(out, e, order)
    else:
        falling = np.empty(count, np.float64)
        for k in range(count):
            falling[k] = -e[positions[k]]
        ranked, starts = bucket_order(falling, count)
        out = positions[:count][ranked]
        _sort_buckets(out, starts, e, order)
    return out[::-1].copy() if reverse else out


@njit(cache=True, nogil=True)
def _sort_buckets(out, starts, e, order):
    """Each bucket ``out[starts[q]:starts[q + 1]]`` put in the efficiency order.  A loop of its own: in
    :func:`in_efficiency_order`, whose ``out`` is assigned on two paths, every bucket cost numba's reference
    counts an atomic update each way (a thousand buckets: 2000 updates, about 5 us)."""
    for q in range(len(starts) - 1):
        lo, hi = starts[q], starts[q + 1]
        if hi - lo > _SMALL:
            sort_positions(out[lo:hi], e, order)
            continue
        for k in range(lo + 1, hi):  # (inline: a call per bucket, with its reference counts, cost more)
            x, j = out[k], k
            ex, tx = e[x], order[x]
            while j > lo:
                y = out[j - 1]
                if ex > e[y] or (ex == e[y] and tx < order[y]):
                    out[j] = y
                    j -= 1
                else:
                    break
            out[j] = x


#: :func:`in_efficiency_order` sorts at most this many positions by comparisons alone.
_FEW = 64
