"""Kernels of KP1 with many items in one persistent launch: a wavefront over capacity chunks.

One launch per item (:mod:`gpu.knapsack.rows`) costs a host launch per item,
which dominates when an item's row is small (docs/notes/gpu.md).  Here every block owns a chunk of ``S`` consecutive
capacities for the whole run and keeps its chunk's row in shared memory.  Row
``i`` of a chunk needs row ``i - 1`` at ``j - w_i``: its own chunk and, below it,
a *halo* of at most ``S`` cells that belongs to blocks on its left.  Blocks
publish every row into a ring of ``D`` rows in global memory and a progress
counter; a block waits only for its neighbours within reach of the heaviest
item (left: the rows it reads are published; right: they have read the ring
slots it is about to overwrite), then runs a batch of up to ``K`` items with
block barriers alone, reading the whole batch's halos in one pass.  The
critical path is about ``(n / K + blocks)`` exchanges instead of ``n`` launches.

All blocks must be resident at once (at most one per multiprocessor by
default).  The numba simulator runs blocks one after another, in order, so the
host (:mod:`gpu.knapsack.wavefront`) makes the ring as deep as the item count
there: no block then waits on a block to its right.

Decisions go to a bit matrix (item, capacity) by warp ballots.  Backtracking is
speculative: a block of ``2**L`` threads loads the decision bits of all
``2**L - 1`` states reachable in the next ``L`` items at once, so one round
trip to memory resolves ``L`` items.
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
    """The wavefront kernel for DP cells of the numba type named ``value_type_name`` and
    ``cells_per_thread`` cells per thread (a compile-time constant)."""
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
            Offset in ``ring`` of the row item ``i`` writes and of the row it reads (-1: the zero row).
        N, S, K, D, reach : int
            Capacities, chunk width, items per batch, ring rows, neighbours within the heaviest weight.
        ring : (D * N,) int32 or int64
            Published rows.
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

    Node ``v`` (1 .. 2**levels - 1, thread ``v - 1``) stands for the path whose
    decisions are the bits of ``v`` below its leading one; it loads the decision
    bit of the state that path reaches, so one round trip to memory serves
    ``levels`` items.  The weights of the next round are prefetched meanwhile.

    Parameters
    ----------
    shift : (n,) int64
        Item weights in processing order.
    bits : (n * nwords,) uint32
        Bit ``j`` of row ``i``: item ``i`` taken in the optimum of capacity ``j``.
    state : int
        The final capacity.
    levels : int
        log2 of the block size, at most log2(MAX_BACKTRACK_THREADS).
    taken : (n,) uint8, out
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
