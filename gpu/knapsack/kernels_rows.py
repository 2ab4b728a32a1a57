"""Kernels of the row method: KP1 / KP2 / (KP2)^k with one launch per step of ``M`` items (Lemos et al.).

Windows, the decision bit planes and the tiles: docs/notes/gpu.md, "Knapsack methods".
"""

from __future__ import annotations

import functools

from numba import boolean, cuda, int64, uint32

from gpu.knapsack.kernels_common import ballot, inline_device

__all__ = ["N_FIELDS", "init_stage0_kernel", "kp_backtrack_kernel", "step_kernel"]

# Fields of the per-(step, instance) metadata table ``meta[step, k, field]``.
LO1, LO2, ROWS, W2N, TPR, ROW_OFF, PLO1, PLO2, PHI1, PHI2, PW2N, BIT_OFF, WPR, NSUB, NITEMS = range(15)
N_FIELDS = 15
# Fields of the subset table ``subsets[step, k, q, field]``.
SUB_S1, SUB_S2, SUB_P = range(3)


@inline_device
def _find_instance(tile_start, step, tile):
    """Largest k with ``tile_start[step, k] <= tile`` (binary search over instances)."""
    lo = 0
    hi = tile_start.shape[1] - 2
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if tile_start[step, mid] <= tile:
            lo = mid
        else:
            hi = mid - 1
    return lo


@functools.cache
def step_kernel(items_per_step: int, cells_per_thread: int):
    """The DP step kernel for ``M`` items per step and ``CPT`` cells per thread (compile-time)."""
    M, CPT = items_per_step, cells_per_thread
    NSUB = 1 << M

    @cuda.jit
    def kp_step(meta, subsets, tile_start, step, tiles_per_block, src, dst, bits):
        """Stage ``step + 1`` (``dst``) of every instance from stage ``step`` (``src``).

        Block ``b`` runs tiles ``[b * tiles_per_block, (b + 1) * tiles_per_block)``
        in order.
        """
        scratch = cuda.shared.array(32, uint32)
        s1 = cuda.local.array(NSUB, int64)
        s2 = cuda.local.array(NSUB, int64)
        gain = cuda.local.array(NSUB, int64)
        row_base = cuda.local.array(NSUB, int64)
        usable = cuda.local.array(NSUB, boolean)
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        lane0 = (t & 31) == 0
        n_inst = tile_start.shape[1] - 1
        first = cuda.blockIdx.x * tiles_per_block
        stop = min(tile_start[step, n_inst], first + tiles_per_block)
        if first >= stop:
            return
        k = _find_instance(tile_start, step, first) - 1
        next_start = first  # forces loading instance k + 1 at the first tile
        row = seg = 0
        lo1 = lo2 = w2n = tpr = row_off = plo1 = plo2 = phi1 = phi2 = pw2n = bit_off = wpr = 0
        for tile in range(first, stop):
            if tile >= next_start:
                k += 1
                while tile >= tile_start[step, k + 1]:
                    k += 1
                next_start = tile_start[step, k + 1]
                m = meta[step, k]
                lo1, lo2, w2n, tpr, row_off = m[LO1], m[LO2], m[W2N], m[TPR], m[ROW_OFF]
                plo1, plo2, phi1, phi2, pw2n = m[PLO1], m[PLO2], m[PHI1], m[PHI2], m[PW2N]
                bit_off, wpr = m[BIT_OFF], m[WPR]
                for q in range(NSUB):
                    s1[q] = subsets[step, k, q, SUB_S1]
                    s2[q] = subsets[step, k, q, SUB_S2]
                    gain[q] = subsets[step, k, q, SUB_P]
                local = tile - tile_start[step, k]
                row = local // tpr
                seg = local - row * tpr
            j1 = lo1 + row
            for q in range(NSUB):
                usable[q] = j1 >= s1[q]
                row_base[q] = row_off + (min(j1 - s1[q], phi1) - plo1) * pw2n - plo2
            word_row = bit_off + row * M * wpr
            out_row = row_off + row * w2n
            for r in range(CPT):
                col = (seg * CPT + r) * T + t
                inside = col < w2n
                code = 0
                if inside:
                    j2 = lo2 + col
                    best = src[row_base[0] + min(j2, phi2)]
                    for q in range(1, NSUB):
                        if usable[q] and j2 >= s2[q]:
                            v = src[row_base[q] + min(j2 - s2[q], phi2)] + gain[q]
                            if v > best:
                                best = v
                                code = q
                    dst[out_row + col] = best
                for plane in range(M):
                    word = ballot((code >> plane) & 1 == 1, scratch)
                    if lane0 and inside:
                        bits[word_row + plane * wpr + (col >> 5)] = word
            seg += 1
            if seg == tpr:
                seg = 0
                row += 1

    return kp_step


@cuda.jit(cache=True)
def kp_backtrack_kernel(meta, subsets, n_steps, items_per_step, bits, row_a, row_b, taken, values):
    """Walk every instance's decisions back from its final state, one thread each.

    Stage s lives in ``row_a`` for even s, ``row_b`` otherwise; item
    ``step * M + b`` of the processing order is bit ``b`` of a step.  Writes
    ``taken`` (K, >= n_items) uint8 in processing order and ``values`` (K,).
    """
    k = cuda.grid(1)
    if k >= n_steps.shape[0]:
        return
    last = n_steps[k]
    if last == 0:
        values[k] = 0
        return
    final = meta[last - 1, k]
    values[k] = row_a[final[ROW_OFF]] if last % 2 == 0 else row_b[final[ROW_OFF]]
    j1 = final[LO1]
    j2 = final[LO2]
    for step in range(last - 1, -1, -1):
        m = meta[step, k]
        row = j1 - m[LO1]
        col = j2 - m[LO2]
        word_base = m[BIT_OFF] + row * m[NITEMS] * m[WPR] + col // 32
        code = 0
        for plane in range(m[NITEMS]):
            bit = (bits[word_base + plane * m[WPR]] >> (col % 32)) & 1
            taken[k, step * items_per_step + plane] = bit
            code |= bit << plane
        j1 = min(j1 - subsets[step, k, code, SUB_S1], m[PHI1])
        j2 = min(j2 - subsets[step, k, code, SUB_S2], m[PHI2])


@cuda.jit(cache=True)
def init_stage0_kernel(row_a, row_starts):
    """Stage 0 of every instance: the value 0 at its row start."""
    k = cuda.grid(1)
    if k < row_starts.shape[0]:
        row_a[row_starts[k]] = 0
