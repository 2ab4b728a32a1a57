"""Kernels of KP1 with many items in one persistent launch: a wavefront over capacity chunks.

Blocks own capacity chunks, exchange rows through a ring in global memory and
backtrack speculatively; all blocks must be resident (docs/notes/gpu.md,
"Knapsack methods").
"""

from __future__ import annotations

import functools

from numba import cuda, int32, int64, uint32

from gpu.knapsack.kernels_common import ballot, inline_device

__all__ = ["MAX_BATCH", "MAX_LEVELS", "STATIC_SHARED_BYTES", "speculative_backtrack_kernel", "wavefront_kernel"]

#: Largest speculative backtracking block (shared arrays are sized for it).
MAX_BACKTRACK_THREADS = 1024
MAX_LEVELS = 10

#: Most items of one batch (the per-batch item table lives in static shared memory).
MAX_BATCH = 64

#: Static shared memory of the wavefront kernel (ballot scratch and the batch's item table),
#: which counts against the same 48 KiB as the dynamic rows.
STATIC_SHARED_BYTES = 32 * 4 + 4 * MAX_BATCH * 8

#: Polls of a neighbour's progress before a block gives up and flags a failure
#: instead of hanging the device (blocks that are not all resident).
SPIN_LIMIT = 1 << 25


@inline_device
def _wait_neighbours(progress, block, blocks, reach, need, left, failed):
    """Spin until every neighbour on one side (within ``reach``) has progress >= ``need``.

    Returns the smallest progress seen, which the caller keeps to skip later polls.
    """
    lowest = 1 << 62
    first = max(0, block - reach) if left else block + 1
    stop = block if left else min(blocks, block + reach + 1)
    for other in range(first, stop):
        seen = cuda.atomic.add(progress, other, 0)
        spins = 0
        while seen < need:
            spins += 1
            if spins > SPIN_LIMIT:
                failed[0] = 1
                return need
            seen = cuda.atomic.add(progress, other, 0)
        lowest = min(lowest, seen)
    return lowest


@inline_device
def _stage_batch(shift, profit, write_slot, read_slot, first, count, sm_item):
    """Weights, profits and ring offsets of the batch's items into shared memory."""
    q = cuda.threadIdx.x
    if q < count:
        sm_item[0, q] = shift[first + q]
        sm_item[1, q] = profit[first + q]
        sm_item[2, q] = write_slot[first + q]
        sm_item[3, q] = read_slot[first + q]


@inline_device
def _load_halos(dyn, halo, ring, sm_item, count, chunk_start, S):
    """Row before item q at ``[chunk_start - s_q, chunk_start)`` into ``dyn[halo + q*S:]``."""
    T = cuda.blockDim.x
    for q in range(count):
        s = sm_item[0, q]
        slot = sm_item[3, q]
        stop = min(s, S)
        local = cuda.threadIdx.x
        while local < stop:  # (a range with a run-time step would divide to count its trips)
            src = chunk_start + local - s
            if src >= 0:
                dyn[halo + q * S + local] = ring[slot + src] if slot >= 0 else 0
            local += T


@functools.cache
def wavefront_kernel(value_type_name: str, cells_per_thread: int = 1):
    """The wavefront kernel for cells of the numba type ``value_type_name``, ``cells_per_thread`` per thread."""
    value_type = {"int32": int32, "int64": int64}[value_type_name]
    R = cells_per_thread

    @cuda.jit
    def wavefront(shift, profit, write_slot, read_slot, N, S, K, D, reach, ring, bits, nwords, progress, result,
                  failed):
        """All ``n`` items over capacities ``0..N-1``; block ``b`` owns capacities ``[b S, (b + 1) S)``.

        Parameters
        ----------
        shift, profit : (n,) int64
            Item weights and profits in processing order.
        write_slot, read_slot : (n,) int64
            Offset in ``ring`` of the row item ``i`` writes and reads (-1: the zero row).
        N, S, K, D, reach : int
            Capacities, chunk width, items per batch, ring rows, neighbours within the heaviest weight.
        ring : (D * N,) int32 or int64
        bits : (n * nwords,) uint32, out
            Decision bit of (item, capacity).
        progress : (blocks,) int32
            Items each block has published.
        result : (1,) int64, out
            The optimum (capacity ``N - 1``).
        failed : (1,) int32, out
            Set when a block waited too long (blocks not all resident).
        """
        scratch = cuda.shared.array(32, uint32)
        sm_item = cuda.shared.array((4, MAX_BATCH), int64)
        dyn = cuda.shared.array(0, value_type)  # own rows [0, 2S), halos [2S, 2S + K*S)
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        lane0 = (t & 31) == 0
        block = cuda.blockIdx.x
        blocks = cuda.gridDim.x
        chunk = block * S
        n = shift.shape[0]
        for r in range(R):
            dyn[r * T + t] = 0
        cur = 0
        left_seen = 0
        right_seen = 0
        first = 0
        while first < n:
            count = min(K, n - first)
            last = first + count
            if t == 0:
                if left_seen < last - 1:
                    left_seen = _wait_neighbours(progress, block, blocks, reach, last - 1, True, failed)
                if right_seen < last - D + 1:
                    right_seen = _wait_neighbours(progress, block, blocks, reach, last - D + 1, False, failed)
                cuda.threadfence()
            _stage_batch(shift, profit, write_slot, read_slot, first, count, sm_item)
            cuda.syncthreads()
            _load_halos(dyn, 2 * S, ring, sm_item, count, chunk, S)
            cuda.syncthreads()
            for q in range(count):
                s = sm_item[0, q]
                p = sm_item[1, q]
                slot = sm_item[2, q]
                old = cur * S
                new = S - old
                halo = 2 * S + q * S
                row_bits = (first + q) * nwords
                for r in range(R):
                    local = r * T + t
                    j = chunk + local
                    v = dyn[old + local]
                    take = False
                    if j < N and j >= s:
                        below = local - s
                        cand = (dyn[old + below] if below >= 0 else dyn[halo + local]) + p
                        if cand > v:
                            v = cand
                            take = True
                    dyn[new + local] = v
                    if j < N:
                        ring[slot + j] = v
                    word = ballot(take, scratch)
                    if lane0 and j < N:
                        bits[row_bits + (j >> 5)] = word
                cur = 1 - cur
                cuda.syncthreads()
            if t == 0:
                cuda.threadfence()
                cuda.atomic.max(progress, block, last)
            first = last
        if t == 0 and chunk <= N - 1 < chunk + S:
            result[0] = dyn[cur * S + N - 1 - chunk]

    return wavefront


@cuda.jit(cache=True)
def speculative_backtrack_kernel(shift, bits, nwords, state, levels, taken):
    """Recover the chosen items from the decision bits, ``levels`` items per round.

    Thread ``v - 1`` (node v = 1 .. 2**levels - 1) stands for the path whose
    decisions are the bits of ``v`` below its leading one and loads the decision
    bit of the state it reaches.  ``bits`` (n * nwords,) uint32: bit ``j`` of
    row ``i`` is item ``i`` taken at capacity ``j``; ``taken`` (n,) uint8 out.
    """
    sh_bit = cuda.shared.array(MAX_BACKTRACK_THREADS, int32)
    sh_shift = cuda.shared.array(MAX_LEVELS, int64)
    sh_state = cuda.shared.array(1, int64)
    t = cuda.threadIdx.x
    node = t + 1
    i = shift.shape[0] - 1
    j = state
    ahead = shift[i - t] if t < levels and i - t >= 0 else 0
    while i >= 0:
        if t < levels:
            sh_shift[t] = ahead
            ahead = shift[i - levels - t] if i - levels - t >= 0 else 0
        cuda.syncthreads()
        if node < (1 << levels):
            depth = 31 - cuda.clz(int32(node))
            st = j
            for e in range(depth):
                if (node >> (depth - 1 - e)) & 1:
                    st -= sh_shift[e]
            bit = 0
            if i - depth >= 0 and st >= 0:
                bit = (bits[(i - depth) * nwords + (st >> 5)] >> (st & 31)) & 1
            sh_bit[node] = bit
        cuda.syncthreads()
        if t == 0:  # the walk is serial; the weights it needs are in shared memory already
            walk = 1
            for e in range(min(levels, i + 1)):
                bit = sh_bit[walk]
                taken[i - e] = bit
                if bit:
                    j -= sh_shift[e]
                walk = 2 * walk + bit
            sh_state[0] = j
        cuda.syncthreads()
        j = sh_state[0]
        i -= levels
