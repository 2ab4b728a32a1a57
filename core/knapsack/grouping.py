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
        mask = np.zeros(len(self.members), np.bool_)
        counts = self.counts
        picked = np.flatnonzero(np.asarray(chosen, np.bool_))
        if len(picked):
            take = np.repeat(self.starts[picked], counts[picked]) + _ranks(counts[picked])
            mask[self.members[take]] = True
        return mask


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
    if (int(profits.max()) - int(profits.min())) * span + span < 2**63:
        # one int64 key per (profit, weight): sorting it costs a twentieth of the lexsort at n = 10000
        key = (profits - profits.min()) * span + (weights - weights.min())
        order = np.argsort(key, kind="stable")  # the lexsort's order: by profit, then weight, then position
    else:
        order = np.lexsort((weights, profits))
    new_type = np.ones(n, np.bool_)
    new_type[1:] = (np.diff(profits[order]) != 0) | (np.diff(weights[order]) != 0)
    first = np.flatnonzero(new_type)
    counts = np.diff(np.append(first, n))
    powers = np.floor(np.log2(counts + 1)).astype(np.int64)  # 2^k <= c + 1 < 2^(k + 1)
    remainders = counts - (2**powers - 1)
    pieces = powers + (remainders > 0)
    if pieces.sum() > MAX_SPLIT_SHARE * n:
        return None
    owner = np.repeat(np.arange(len(first)), pieces)
    # Largest piece first: the greedy solution in efficiency order (ties kept in this order) then fills a
    # type's room with its smaller pieces, as it would with single copies.
    sizes = _split_sizes(powers, remainders, pieces)
    sizes = sizes[np.lexsort((-sizes, owner))]
    starts = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=starts[1:])
    return Grouping(profits[order][first][owner] * sizes, weights[order][first][owner] * sizes,
                    order.astype(np.int64), starts)


def _split_sizes(powers, remainders, pieces) -> np.ndarray:
    """Per type, the sizes ``1, 2, ..., 2^(k-1)`` and the remainder (when not 0), types one after another (each
    type's in that order)."""
    rank = _ranks(pieces)  # 0.. within each type
    own_power = np.repeat(powers, pieces)
    return np.where(rank < own_power, 2**rank, np.repeat(remainders, pieces)).astype(np.int64)


def _ranks(counts: np.ndarray) -> np.ndarray:
    """``0, 1, ..., c - 1`` for each count ``c``, one after another."""
    counts = np.asarray(counts, np.int64)
    ends = np.cumsum(counts)
    return np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64) - np.repeat(ends - counts, counts)


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
