"""Identical items grouped: a bounded knapsack's types split in powers of two, solved as a smaller 0-1 knapsack.

Many instances repeat items: Pisinger's spanner classes (11-13) draw every item
as a multiple ``a (p_k, w_k)``, ``a <= m``, of a few spanner items, so at
``n = 10000`` they hold 20 distinct items, 500 copies each; his classes 14-16
with coefficients up to ``R`` hold at most ``R`` distinct items.  Copies of one
item are a bounded knapsack type ``(p, w)`` of count ``c``; the 0-1 items
``s (p, w)`` for ``s = 1, 2, 4, ..., 2^(k-1)`` and ``s = c - (2^k - 1)``
(``2^k <= c + 1``) take every count ``0..c`` and no other, so the 0-1 knapsack
over them has the same optimum with ``O(log c)`` items per type instead of
``c`` (Martello and Toth 1990, section 3.2).  The chosen split items expand
back to that many copies of their type.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

__all__ = ["Grouping", "group_identical"]

#: Items are grouped only when the split items are at most this share of them (grouping costs a sort).
MAX_SPLIT_SHARE = 0.75


@dataclass(frozen=True, eq=False)
class Grouping:
    """The split items of :func:`group_identical` and the original items each stands for.

    Attributes
    ----------
    profits, weights : (k,) int64 ndarray
        The split items.
    members : (n,) int64 ndarray
        Positions of the original items, the copies of each split item consecutive.
    starts : (k + 1,) int64 ndarray
        Split item ``j`` stands for ``members[starts[j]:starts[j + 1]]``.
    """

    profits: np.ndarray
    weights: np.ndarray
    members: np.ndarray
    starts: np.ndarray

    @property
    def counts(self) -> np.ndarray:
        """(k,) int64: the copies each split item stands for."""
        return np.diff(self.starts)

    def expand(self, chosen: np.ndarray) -> np.ndarray:
        """(n,) bool mask over the original items from a (k,) bool mask over the split items."""
        return _expand(self.members, self.starts, np.asarray(chosen, np.bool_))


def group_identical(profits: np.ndarray, weights: np.ndarray) -> Grouping | None:
    """Identical items grouped and split in powers of two, or None where that would not remove
    at least a quarter of the items (:data:`MAX_SPLIT_SHARE`).

    Parameters
    ----------
    profits, weights : (n,) int64 ndarray
        The items; sums below ``2**62``, so no split item overflows.
    """
    profits, weights = np.asarray(profits, np.int64), np.asarray(weights, np.int64)
    n = len(profits)
    # there are at least as many pieces as types, so most instances are refused on their count alone, which
    # a hash table finds in one pass that stops at the limit (the sort it replaced cost an easy instance's
    # solve a tenth of its time)
    if n < 4 or _more_types_than(profits, weights, int(MAX_SPLIT_SHARE * n)):
        return None
    span = int(weights.max()) - int(weights.min()) + 1
    key_range = (int(profits.max()) - int(profits.min())) * span + span
    bits = max(n - 1, 1).bit_length()
    if key_range < 2 ** (63 - bits):
        # one int64 per item, (profit, weight) key above its position: a plain sort of it is the lexsort's
        # order (by profit, then weight, then position) at a third of a stable argsort's time
        key = ((profits - profits.min()) * span + (weights - weights.min())) << bits
        order = np.sort(key | np.arange(n, dtype=np.int64)) & ((1 << bits) - 1)
    else:
        order = np.lexsort((weights, profits))
    order = order.astype(np.int64, copy=False)
    split = _split(profits, weights, order, int(MAX_SPLIT_SHARE * n))
    return None if split is None else Grouping(split[0], split[1], order, split[2])


@njit(cache=True, nogil=True)
def _split(profits, weights, order, limit):
    """The split items of the types that ``order`` lists one after another (see :func:`group_identical`):
    ``(profits, weights, starts)``, or None where there would be more than ``limit``.  Per type of ``c``
    copies, the sizes ``1, 2, ..., 2^(k-1)`` (``2^k <= c + 1``) and the remainder ``c - (2^k - 1)`` when not
    0, largest first: the greedy solution in efficiency order (ties kept in this order) then fills a type's
    room with its smaller pieces, as it would with single copies.  One compiled pass to count, one to fill
    (numpy's dozen calls took twice the sort's time)."""
    n = len(order)
    pieces = 0
    start = 0
    while start < n:
        end = _type_end(profits, weights, order, start)
        pieces += _piece_count(end - start)
        if pieces > limit:
            return None
        start = end
    out_p, out_w = np.empty(pieces, np.int64), np.empty(pieces, np.int64)
    starts = np.zeros(pieces + 1, np.int64)
    q = 0
    start = 0
    while start < n:
        end = _type_end(profits, weights, order, start)
        count = end - start
        power = 1
        while 2 * power <= count + 1:  # 2^k <= c + 1: the sizes 2^(k-1) .. 1 and the remainder, largest first
            power *= 2
        remainder = count - (power - 1)
        p, w = profits[order[start]], weights[order[start]]
        while power > 1 or remainder > 0:
            if remainder > power // 2:  # (power // 2 is 0 once the powers are all out)
                size, remainder = remainder, 0
            else:
                power //= 2
                size = power
            out_p[q], out_w[q] = p * size, w * size
            starts[q + 1] = starts[q] + size
            q += 1
        start = end
    return out_p, out_w, starts


@njit(cache=True, nogil=True, inline="always")
def _type_end(profits, weights, order, start):
    """Past the copies of the type at ``order[start]`` (they follow one another in ``order``)."""
    p, w = profits[order[start]], weights[order[start]]
    end = start + 1
    while end < len(order) and profits[order[end]] == p and weights[order[end]] == w:
        end += 1
    return end


@njit(cache=True, nogil=True, inline="always")
def _piece_count(count):
    """The split items of ``count`` copies: ``k`` powers of two (``2^k <= count + 1``) and a nonzero remainder."""
    k, power = 0, 1
    while 2 * power <= count + 1:
        k += 1
        power *= 2
    return k + (count - (power - 1) > 0)


@njit(cache=True, nogil=True)
def _expand(members, starts, chosen):
    """The mask of :meth:`Grouping.expand` in one compiled pass (numpy's repeat and ranks took 62-80 us at
    n = 5000-10000, a twentieth of a spanner instance's solve)."""
    mask = np.zeros(len(members), np.bool_)
    for j in range(len(chosen)):
        if chosen[j]:
            for k in range(starts[j], starts[j + 1]):
                mask[members[k]] = True
    return mask


@njit(cache=True, nogil=True)
def _more_types_than(profits, weights, limit):
    """Whether more than ``limit`` distinct ``(profit, weight)`` pairs occur (open addressing, linear probing)."""
    size = 1
    while size < 2 * len(profits):
        size *= 2
    used = np.zeros(size, np.bool_)
    table_p, table_w = np.empty(size, np.int64), np.empty(size, np.int64)
    mask = np.uint64(size - 1)
    types = 0
    for j in range(len(profits)):
        p, w = profits[j], weights[j]
        slot = (np.uint64(p) * np.uint64(0x9E3779B97F4A7C15)) ^ (np.uint64(w) * np.uint64(0xC2B2AE3D27D4EB4F))
        slot = (slot ^ (slot >> np.uint64(29))) & mask
        while used[slot] and (table_p[slot] != p or table_w[slot] != w):
            slot = (slot + np.uint64(1)) & mask
        if not used[slot]:
            used[slot], table_p[slot], table_w[slot] = True, p, w
            types += 1
            if types > limit:
                return True
    return False
