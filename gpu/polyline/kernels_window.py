"""CUDA kernel of the ``window`` DP step: range maxima in O(1) per query.

The feasible p of ``q -> r`` form ``[lo[q, r], hi[q, r]]``, so the step is a
range-maximum query over the column ``F_k[:, q]`` for every r.  One block per
q loads the column into shared memory and builds, in O(n) work, a bit mask of
in-block suffix maxima per position (blocks of ``2**bits``; the "linear RMQ"
of Fischer and Heun, simplified) and a sparse table over the block maxima;
a query is then at most two mask lookups and two table entries.  Shared
memory: :func:`shared_bytes` (8.75 KiB at n = 1024).
"""

from __future__ import annotations

import math

from numba import cuda, float32, int32, int64, uint32

from gpu.polyline.kernels_dp import NO_INDEX


def sparse_levels(n_blocks: int) -> int:
    """Levels of the sparse table over ``n_blocks`` block maxima (>= 1)."""
    return max(1, int(n_blocks).bit_length())


def shared_bytes(n_prev: int, bits: int) -> int:
    """Dynamic shared memory (bytes) of :func:`window_stage` for ``n_prev`` points."""
    n_blocks = (n_prev + (1 << bits) - 1) >> bits
    return 8 * n_prev + 4 * sparse_levels(n_blocks) * n_blocks


@cuda.jit(device=True)
def _suffix_max_mask(x, i, bits):
    """Bit mask of the suffix maxima of ``x[bs..i]`` (bs: start of i's block), relative to bs."""
    start = (i >> bits) << bits
    mask = int64(1) << (i - start)
    running = x[i]
    for j in range(i - 1, start - 1, -1):
        if x[j] > running:
            mask |= int64(1) << (j - start)
            running = x[j]
    return mask


@cuda.jit(device=True)
def _in_block_argmax(masks, first, last, bits):
    """Index of the maximum of ``x[first..last]``, both in one block (the rightmost among ties)."""
    shifted = int64(masks[last]) >> (first & ((1 << bits) - 1))
    lowest = shifted & -shifted
    return first + cuda.popc(lowest - 1)


@cuda.jit(device=True)
def _floor_log2(n):
    level = 0
    while (2 << level) <= n:
        level += 1
    return level


@cuda.jit(device=True)
def _range_argmax(x, masks, table, n_blocks, first, last, bits):
    """Index of the maximum of ``x[first..last]`` (first <= last)."""
    block_first = first >> bits
    block_last = last >> bits
    if block_first == block_last:
        return _in_block_argmax(masks, first, last, bits)
    best = _in_block_argmax(masks, first, ((block_first + 1) << bits) - 1, bits)
    other = _in_block_argmax(masks, block_last << bits, last, bits)
    if x[other] > x[best]:
        best = other
    if block_last - block_first >= 2:
        span = block_last - block_first - 1
        level = _floor_log2(span)
        other = table[level * n_blocks + block_first + 1]
        if x[other] > x[best]:
            best = other
        other = table[level * n_blocks + block_last - (1 << level)]
        if x[other] > x[best]:
            best = other
    return best


@cuda.jit(device=True)
def _build_sparse_table(x, masks, table, n_prev, n_blocks, bits):
    """Level 0: each block's argmax; level j: argmax over 2**j consecutive blocks."""
    t = cuda.threadIdx.x
    step = cuda.blockDim.x
    for b in range(t, n_blocks, step):
        block_end = min((b + 1) << bits, n_prev) - 1
        table[b] = _in_block_argmax(masks, b << bits, block_end, bits)
    cuda.syncthreads()
    level = 1
    while (1 << level) <= n_blocks:
        half = 1 << (level - 1)
        below = (level - 1) * n_blocks
        for b in range(t, n_blocks - (1 << level) + 1, step):
            left = table[below + b]
            right = table[below + b + half]
            table[below + n_blocks + b] = right if x[right] > x[left] else left
        cuda.syncthreads()
        level += 1


@cuda.jit(cache=True)
def window_stage(fwd_in, fwd_out, table, lo, hi, arg, bits):
    """One forward step of the DP with range-maximum queries; one block per column q.

    Parameters
    ----------
    fwd_in : (d, n_prev) float32
        ``F_k`` transposed: ``fwd_in[q, p]``.
    fwd_out : (n_next, d) float32
        Receives ``fwd_out[r, q] = table[q, r] + max``.
    table : (d, n_next) float32
    lo, hi : (d, n_next) int32
    arg : (d, n_next) int32
        Receives the argmax p (:data:`NO_INDEX` for an empty range).
    bits : int
        log2 of the in-block width (<= 5).
    """
    q = cuda.blockIdx.x
    n_prev = fwd_in.shape[1]
    n_next = fwd_out.shape[0]
    n_blocks = (n_prev + (1 << bits) - 1) >> bits
    x = cuda.shared.array(0, float32)[:n_prev]
    masks = cuda.shared.array(0, uint32)[n_prev:2 * n_prev]
    sparse = cuda.shared.array(0, int32)[2 * n_prev:]
    t = cuda.threadIdx.x
    step = cuda.blockDim.x
    for p in range(t, n_prev, step):
        x[p] = fwd_in[q, p]
    cuda.syncthreads()
    for p in range(t, n_prev, step):
        masks[p] = _suffix_max_mask(x, p, bits)
    cuda.syncthreads()
    _build_sparse_table(x, masks, sparse, n_prev, n_blocks, bits)
    for r in range(t, n_next, step):
        first = lo[q, r]
        last = hi[q, r]
        if first > last:
            fwd_out[r, q] = float32(-math.inf)
            arg[q, r] = NO_INDEX
        else:
            best = _range_argmax(x, masks, sparse, n_blocks, first, last, bits)
            fwd_out[r, q] = table[q, r] + x[best]
            arg[q, r] = best
