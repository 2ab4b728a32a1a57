"""Host-side planning of the row method (:mod:`gpu.knapsack.rows`) for a whole batch.

Everything is vectorised over the instances of the batch (padded item arrays
of shape (K, n_max)); planning cost: docs/notes/gpu.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpu.knapsack import kernels_rows as kr

__all__ = ["BatchPlan", "PlanTooLargeError", "pad_rows", "plan_batch"]

#: Cells of a batch's widest windows past which the plan's int64 sizes (cells,
#: decision words, their prefix sums) could overflow; far beyond any device.
MAX_PLAN_CELLS = 2**56


class PlanTooLargeError(ValueError):
    """A batch whose DP windows are far beyond any device's memory (``needed_bytes``: a lower bound)."""

    def __init__(self, cells: int):
        self.needed_bytes = 2 * 4 * int(cells)
        super().__init__(f"the KP dynamic program would need {self.needed_bytes:,} bytes or more")


@dataclass(frozen=True)
class BatchPlan:
    """Everything the row kernels of one batch need, built on the host.

    Attributes
    ----------
    meta : (n_steps, K, N_FIELDS) int64
    subsets : (n_steps, K, 2**M, 3) int64
    tile_start : (n_steps, K + 1) int64
    n_steps : (K,) int64
        Steps of each instance.
    order : (K, n_max) int64
        Original item index of each processing position (valid for the first n_k).
    n_kept : (K,) int64
        Items that can be taken (weights within the capacities, profit > 0).
    items_per_step : int
    cells_per_thread : int
        Cells of a window row per thread and tile (a tile is ``threads * cells_per_thread`` cells).
    row_cells : int
        Cells of one row buffer (sum over instances of their widest window).
    bit_words : int
        uint32 words of all decision planes.
    row_starts : (K,) int64
        Offset of each instance in the row buffers.
    profits, weights1, weights2 : (K, n_max) int64
        Items in processing order (dimensions swapped where ``plan`` swapped them),
        zeros past the usable items.
    capacities1, capacities2 : (K,) int64
        The capacities in the same orientation, clamped to the total weights.
    """

    meta: np.ndarray
    subsets: np.ndarray
    tile_start: np.ndarray
    n_steps: np.ndarray
    order: np.ndarray
    n_kept: np.ndarray
    items_per_step: int
    cells_per_thread: int
    row_cells: int
    bit_words: int
    row_starts: np.ndarray
    profits: np.ndarray
    weights1: np.ndarray
    weights2: np.ndarray
    capacities1: np.ndarray
    capacities2: np.ndarray


def pad_rows(arrays, lengths, n_max):
    """(K, n_max) int64, row k holding ``arrays[k]`` then zeros."""
    out = np.zeros((len(arrays), n_max), dtype=np.int64)
    if len(arrays):
        rows = np.repeat(np.arange(len(arrays)), lengths)
        cols = np.arange(rows.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        out[rows, cols] = np.concatenate(arrays)
    return out


def _sorted_items(profits, w1, w2, c1, c2, n_items):
    """Keep the usable items, orient each instance (wider state dimension second), sort."""
    n_max = profits.shape[1]
    valid = np.arange(n_max)[None, :] < n_items[:, None]
    keep = valid & (w1 <= c1[:, None]) & (w2 <= c2[:, None]) & (profits > 0)
    tot1 = np.where(keep, w1, 0).sum(axis=1)
    tot2 = np.where(keep, w2, 0).sum(axis=1)
    cap1, cap2 = np.minimum(c1, tot1), np.minimum(c2, tot2)
    swap = cap2 < cap1
    w1, w2 = np.where(swap[:, None], w2, w1), np.where(swap[:, None], w1, w2)
    cap1, cap2 = np.where(swap, cap2, cap1), np.where(swap, cap1, cap2)
    # Heavy items first: the windows hi = min(c, S) saturate early and lo = c - R
    # rises late, which keeps the summed window area small.  Usable items before
    # the others, then by w1 and by w2 (both descending): separate sort keys, as a
    # combined key w1 * (c2 + 1) + w2 overflows int64 for large weights.
    order = np.lexsort((-w2, -w1, ~keep), axis=1)
    take = lambda a: np.take_along_axis(np.where(keep, a, 0), order, axis=1)  # noqa: E731
    return take(profits), take(w1), take(w2), cap1, cap2, order, keep.sum(axis=1)


def _stage_windows(w, cap, n_kept, items_per_step, n_stages):
    """(K, n_stages) lo and hi of one dimension at every stage boundary."""
    cum = np.concatenate([np.zeros((w.shape[0], 1), np.int64), np.cumsum(w, axis=1)], axis=1)
    stage_items = np.minimum(np.arange(n_stages)[None, :] * items_per_step, n_kept[:, None])
    done = np.take_along_axis(cum, stage_items, axis=1)
    rest = cum[:, -1][:, None] - done
    return np.maximum(0, cap[:, None] - rest), np.minimum(cap[:, None], done)


def _subset_table(p, w1, w2, n_kept, items_per_step, n_steps_max):
    """(n_steps, K, 2**M, 3): weights and profit of every subset of each step's items."""
    K = p.shape[0]
    n_pad = n_steps_max * items_per_step
    pad = lambda a: np.pad(a, ((0, 0), (0, max(0, n_pad - a.shape[1]))))[:, :n_pad]  # noqa: E731
    live = np.arange(n_pad)[None, :] < n_kept[:, None]
    fields = np.stack([pad(a) * live for a in (w1, w2, p)], axis=-1)  # (K, n_pad, 3)
    fields = fields.reshape(K, n_steps_max, items_per_step, 3).transpose(1, 0, 3, 2)
    n_sub = 2**items_per_step
    members = (np.arange(n_sub)[None, :] >> np.arange(items_per_step)[:, None]) & 1  # (M, n_sub)
    return np.ascontiguousarray((fields @ members).transpose(0, 1, 3, 2))  # (S, K, n_sub, 3)


def _meta_table(windows, n_steps, M, tile_cells):
    """(S, K, N_FIELDS) step metadata, bit words per (step, instance) and row starts.

    ``windows`` holds the (K, S + 1) arrays lo1, hi1, lo2, hi2 of every stage.
    """
    lo1, hi1, lo2, hi2 = windows
    S = lo1.shape[1] - 1
    rows, w2n = hi1 - lo1 + 1, hi2 - lo2 + 1
    live = np.arange(S)[:, None] < n_steps[None, :]  # (S, K)
    widest = (rows * w2n).max(axis=1)
    row_starts = np.concatenate([[0], np.cumsum(widest)[:-1]]).astype(np.int64)
    meta = np.zeros((S, lo1.shape[0], kr.N_FIELDS), dtype=np.int64)
    nxt = lambda a: a[:, 1:].T  # noqa: E731  stage s+1, as (S, K)
    cur = lambda a: a[:, :-1].T  # noqa: E731  stage s
    meta[..., kr.LO1], meta[..., kr.LO2] = nxt(lo1), nxt(lo2)
    meta[..., kr.ROWS], meta[..., kr.W2N] = nxt(rows), nxt(w2n)
    meta[..., kr.TPR] = -(-nxt(w2n) // tile_cells)
    meta[..., kr.ROW_OFF] = row_starts[None, :]
    meta[..., kr.PLO1], meta[..., kr.PLO2] = cur(lo1), cur(lo2)
    meta[..., kr.PHI1], meta[..., kr.PHI2] = cur(hi1), cur(hi2)
    meta[..., kr.PW2N] = cur(w2n)
    meta[..., kr.WPR] = -(-nxt(w2n) // 32)
    # Every live step has M planes; a last step with fewer items runs padding items
    # of weight 0 and profit 0, which never beat the subsets without them.
    meta[..., kr.NITEMS] = M * live
    meta[..., kr.NSUB] = np.where(live, 2**M, 0)
    words = np.where(live, nxt(rows) * M * meta[..., kr.WPR], 0)
    meta[..., kr.BIT_OFF] = (np.cumsum(words) - words.ravel()).reshape(S, -1) if words.size else 0
    return meta, words, row_starts, int(widest.sum())


def _check_cells(windows) -> None:
    """PlanTooLargeError when the widest windows add up to more than :data:`MAX_PLAN_CELLS`.

    Counted in float64, which cannot overflow, before any int64 product is formed.
    """
    lo1, hi1, lo2, hi2 = (w.astype(np.float64) for w in windows)
    cells = float(((hi1 - lo1 + 1) * (hi2 - lo2 + 1)).max(axis=1).sum())
    if cells > MAX_PLAN_CELLS:
        raise PlanTooLargeError(int(cells))


def plan_batch(profits, w1, w2, c1, c2, items_per_step, threads_per_block, cells_per_thread=1):
    """Plan the row method for K instances of KP2 (KP1: ``w1 = 0``, ``c1 = 0``).

    Parameters
    ----------
    profits, w1, w2 : list of K (n_k,) int64 arrays
    c1, c2 : (K,) int64
    items_per_step : int
        ``M`` >= 1, items per launch.
    threads_per_block : int
        A multiple of 32.
    cells_per_thread : int

    Returns
    -------
    BatchPlan

    Raises
    ------
    PlanTooLargeError
        When the windows hold more than :data:`MAX_PLAN_CELLS` cells.
    """
    n_items = np.array([len(a) for a in profits], dtype=np.int64)
    n_max = max(1, int(n_items.max()))
    c1, c2 = np.asarray(c1, np.int64), np.asarray(c2, np.int64)
    padded = [pad_rows(a, n_items, n_max) for a in (profits, w1, w2)]
    p, a1, a2, cap1, cap2, order, n_kept = _sorted_items(*padded, c1, c2, n_items)
    M = items_per_step
    n_steps = -(-n_kept // M)
    S = max(1, int(n_steps.max()))
    windows = (*_stage_windows(a1, cap1, n_kept, M, S + 1), *_stage_windows(a2, cap2, n_kept, M, S + 1))
    _check_cells(windows)
    meta, words, row_starts, row_cells = _meta_table(windows, n_steps, M, threads_per_block * cells_per_thread)
    tiles = np.where(meta[..., kr.NSUB] > 0, meta[..., kr.ROWS] * meta[..., kr.TPR], 0)
    tile_start = np.concatenate([np.zeros((S, 1), np.int64), np.cumsum(tiles, axis=1)], axis=1)
    return BatchPlan(
        meta=meta,
        subsets=_subset_table(p, a1, a2, n_kept, M, S),
        tile_start=tile_start,
        n_steps=n_steps.astype(np.int64),
        order=order,
        n_kept=n_kept.astype(np.int64),
        items_per_step=M,
        cells_per_thread=cells_per_thread,
        row_cells=row_cells,
        bit_words=int(words.sum()),
        row_starts=row_starts,
        profits=p,
        weights1=a1,
        weights2=a2,
        capacities1=cap1,
        capacities2=cap2,
    )
