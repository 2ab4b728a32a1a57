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


def group_identical(profits: np.ndarray, weights: np.ndarray, counted: bool = False) -> Grouping | None:
    """Identical items grouped and split in powers of two, or None where that would not remove
    at least a quarter of the items (:data:`MAX_SPLIT_SHARE`).

    Parameters
    ----------
    profits, weights : (n,) int64 ndarray
        The items; sums below ``2**62``, so no split item overflows.
    counted : bool
        The caller found few enough distinct items already (core.knapsack.kp1_first's pass counts them).
    """
    profits, weights = np.asarray(profits, np.int64), np.asarray(weights, np.int64)
    n = len(profits)
    if n < 4:
        return None
    # there are at least as many pieces as types, so most instances are refused on their count alone, which
    # a hash table finds in one pass that stops at the limit (5 us at n = 1000; the pass that numbers the
    # types returns four arrays, which alone costs about as much)
    limit = int(MAX_SPLIT_SHARE * n)
    if not counted and _more_types_than(profits, weights, limit):
        return None
    type_of, type_p, type_w, counts = _types(profits, weights)
    # the types in the lexsort's order (by profit, then weight), their copies by position: a sort of the
    # types and a counting pass over the items instead of a sort of every item (240-330 us at n = 5000-10000)
    ranked = np.lexsort((type_w, type_p)).astype(np.int64, copy=False)
    split = _split(type_of, type_p, type_w, counts, ranked, limit)
    return None if split is None else Grouping(*split)


@njit(cache=True, nogil=True)
def _split(type_of, type_p, type_w, counts, ranked, limit):
    """The split items of the types (see :func:`group_identical`) in the order ``ranked``, or None where there
    would be more than ``limit``: ``(profits, weights, members, starts)``, the copies of a type in
    ``members`` by position.  Per type of ``c`` copies, the sizes ``1, 2, ..., 2^(k-1)`` (``2^k <= c + 1``)
    and the remainder ``c - (2^k - 1)`` when not 0, largest first: the greedy solution in efficiency order
    (ties kept in this order) then fills a type's room with its smaller pieces, as it would with single
    copies."""
    pieces = 0
    for t in ranked:
        pieces += _piece_count(counts[t])
        if pieces > limit:
            return None
    out_p, out_w = np.empty(pieces, np.int64), np.empty(pieces, np.int64)
    starts = np.zeros(pieces + 1, np.int64)
    first = np.empty(len(counts), np.int64)  # where each type's copies begin in members
    q = 0
    for t in ranked:
        first[t] = starts[q]
        count = counts[t]
        power = 1
        while 2 * power <= count + 1:  # 2^k <= c + 1: the sizes 2^(k-1) .. 1 and the remainder, largest first
            power *= 2
        remainder = count - (power - 1)
        while power > 1 or remainder > 0:
            if remainder > power // 2:  # (power // 2 is 0 once the powers are all out)
                size, remainder = remainder, 0
            else:
                power //= 2
                size = power
            out_p[q], out_w[q] = type_p[t] * size, type_w[t] * size
            starts[q + 1] = starts[q] + size
            q += 1
    members = np.empty(len(type_of), np.int64)
    for j in range(len(type_of)):
        members[first[type_of[j]]] = j
        first[type_of[j]] += 1
    return out_p, out_w, members, starts


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


@njit(cache=True, nogil=True, inline="always")
def _slot(p, w, mask):
    """The hash table's first slot for the pair ``(p, w)``."""
    slot = (np.uint64(p) * np.uint64(0x9E3779B97F4A7C15)) ^ (np.uint64(w) * np.uint64(0xC2B2AE3D27D4EB4F))
    return (slot ^ (slot >> np.uint64(29))) & mask


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
        slot = _slot(p, w, mask)
        while used[slot] and (table_p[slot] != p or table_w[slot] != w):
            slot = (slot + np.uint64(1)) & mask
        if not used[slot]:
            used[slot], table_p[slot], table_w[slot] = True, p, w
            types += 1
            if types > limit:
                return True
    return False


@njit(cache=True, nogil=True)
def _types(profits, weights):
    """The distinct ``(profit, weight)`` pairs, numbered in order of first occurrence (the same table):
    each item's type, and the types' profits, weights and counts of copies."""
    size = 1
    while size < 2 * len(profits):
        size *= 2
    slot_type = np.full(size, -1, np.int64)
    type_of = np.empty(len(profits), np.int64)
    type_p, type_w = np.empty(len(profits), np.int64), np.empty(len(profits), np.int64)
    counts = np.zeros(len(profits), np.int64)
    mask = np.uint64(size - 1)
    types = 0
    for j in range(len(profits)):
        p, w = profits[j], weights[j]
        slot = _slot(p, w, mask)
        while slot_type[slot] >= 0 and (type_p[slot_type[slot]] != p or type_w[slot_type[slot]] != w):
            slot = (slot + np.uint64(1)) & mask
        t = slot_type[slot]
        if t < 0:
            t = types
            slot_type[slot], type_p[t], type_w[t] = t, p, w
            types += 1
        type_of[j] = t
        counts[t] += 1
    return type_of, type_p[:types], type_w[:types], counts[:types]
