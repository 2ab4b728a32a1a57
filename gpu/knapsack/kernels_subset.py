"""Subset-sum kernels: a word-parallel bitset and Yanasse-Soma's ``g`` vector (Curtis 2013).

``g[j]`` is the first item (1-based) after which ``j`` is reachable; each
method runs one launch per item or one persistent launch with grid barriers
(docs/notes/gpu.md, "Knapsack methods").
"""

from __future__ import annotations

from numba import cuda, int32, uint32, uint64

from gpu.knapsack.kernels_common import inline_device

ALL_ONES = uint64(0xFFFFFFFFFFFFFFFF)

#: Polls of the barrier counter before a block gives up and flags a failure.
SPIN_LIMIT = 1 << 25


@inline_device
def _bitset_item(cur, nxt, g, item, w, first_word, last_word, target, done, start, stride):
    """Words ``first_word..last_word`` of item ``item`` (1-based) of weight ``w``."""
    q = w >> 6
    r = uint64(w & 63)
    back = uint64(64) - r
    for k in range(first_word + start, last_word + 1, stride):
        old = cur[k]
        moved = uint64(0)
        if k - q >= 0:
            moved = cur[k - q] << r
            if r != 0 and k - q - 1 >= 0:
                moved |= cur[k - q - 1] >> back
        new = old | moved
        nxt[k] = new
        fresh = new & ~old
        while fresh != 0:
            low = uint32(fresh & uint64(0xFFFFFFFF))
            bit = cuda.ffs(low) - 1 if low != 0 else 31 + cuda.ffs(uint32(fresh >> uint64(32)))
            g[k * 64 + bit] = item
            fresh &= fresh - uint64(1)
        if k == target >> 6 and (new >> uint64(target & 63)) & uint64(1) != 0:
            cuda.atomic.max(done, 0, 1)


@inline_device
def _gvector_item(g, item, w, first, last, target, done, start, stride):
    """Yanasse-Soma update of ``g`` over capacities ``first..last`` for item ``item``."""
    unset = g[g.shape[0] - 1]  # the host keeps a sentinel cell holding "unset"
    for j in range(first + start, last + 1, stride):
        if g[j] == unset and j >= w and g[j - w] < item:
            g[j] = item
            if j == target:
                cuda.atomic.max(done, 0, 1)


@cuda.jit(cache=True)
def bitset_step_kernel(cur, nxt, g, item, w, first_word, last_word, target, done):
    """One launch per item (as Curtis): item ``item`` over words ``first_word..last_word``.

    ``cur`` and ``nxt`` (n_words,) uint64 are the reachable sums before and after
    the item; reaching ``target`` sets ``done[0]``.
    """
    if done[0] == 0:
        _bitset_item(cur, nxt, g, item, w, first_word, last_word, target, done, cuda.grid(1), cuda.gridsize(1))


@cuda.jit(cache=True)
def gvector_step_kernel(g, item, w, first, last, target, done):
    """One launch per item: Yanasse-Soma update over capacities ``first..last``."""
    if done[0] == 0:
        _gvector_item(g, item, w, first, last, target, done, cuda.grid(1), cuda.gridsize(1))


@inline_device
def _grid_barrier(arrived, target, failed):
    """Wait until ``arrived[0]`` reaches ``target`` (every block adds 1 per barrier)."""
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        cuda.threadfence()
        cuda.atomic.add(arrived, 0, 1)
        spins = 0
        while cuda.atomic.add(arrived, 0, 0) < target:
            spins += 1
            if spins > SPIN_LIMIT:
                failed[0] = 1
                break
        cuda.threadfence()
    cuda.syncthreads()


@inline_device
def _stop_after(done, items_run, i, sm_flag):
    """True in every thread of every block once the target was reached (read after a barrier)."""
    if cuda.threadIdx.x == 0:
        sm_flag[0] = cuda.atomic.add(done, 0, 0)
        if sm_flag[0] != 0 and cuda.blockIdx.x == 0:
            items_run[0] = i + 1
    cuda.syncthreads()
    return sm_flag[0] != 0


@cuda.jit(cache=True)
def bitset_persistent_kernel(buf_a, buf_b, g, weights, first_words, last_words, target, done, arrived,
                             items_run, failed):
    """Every item in one launch, a grid barrier between items; all blocks must be resident.

    Item ``i`` reads ``buf_a`` when ``i`` is even and writes ``buf_b`` (and the other
    way round); ``items_run[0]`` gets the number of items processed.
    """
    sm_flag = cuda.shared.array(1, int32)
    n = weights.shape[0]
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(n):
        cur = buf_a if i % 2 == 0 else buf_b
        nxt = buf_b if i % 2 == 0 else buf_a
        _bitset_item(cur, nxt, g, i + 1, weights[i], first_words[i], last_words[i], target, done, start, stride)
        _grid_barrier(arrived, (i + 1) * cuda.gridDim.x, failed)
        if _stop_after(done, items_run, i, sm_flag):
            return
    if start == 0:
        items_run[0] = n


@cuda.jit(cache=True)
def gvector_persistent_kernel(g, weights, firsts, lasts, target, done, arrived, items_run, failed):
    """Yanasse-Soma over every item in one launch, a grid barrier between items."""
    sm_flag = cuda.shared.array(1, int32)
    n = weights.shape[0]
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(n):
        _gvector_item(g, i + 1, weights[i], firsts[i], lasts[i], target, done, start, stride)
        _grid_barrier(arrived, (i + 1) * cuda.gridDim.x, failed)
        if _stop_after(done, items_run, i, sm_flag):
            return
    if start == 0:
        items_run[0] = n


@cuda.jit(cache=True)
def fill_kernel(g, value):
    """``g[:] = value`` (grid-stride)."""
    for j in range(cuda.grid(1), g.shape[0], cuda.gridsize(1)):
        g[j] = value


@inline_device
def _highest_bit(x):
    hi = uint32(x >> uint64(32))
    if hi != 0:
        return 63 - cuda.clz(hi)
    return 31 - cuda.clz(uint32(x & uint64(0xFFFFFFFF)))


@inline_device
def _lowest_bit(x):
    lo = uint32(x & uint64(0xFFFFFFFF))
    if lo != 0:
        return cuda.ffs(lo) - 1
    return 31 + cuda.ffs(uint32(x >> uint64(32)))


@cuda.jit(cache=True)
def bitset_best_kernel(bits, low, high, want_max, result):
    """Largest (``want_max``) or smallest set capacity in ``[low, high]`` into ``result[0]``."""
    for k in range((low >> 6) + cuda.grid(1), (high >> 6) + 1, cuda.gridsize(1)):
        lo_bit = max(low - 64 * k, 0)
        hi_bit = min(high - 64 * k, 63)
        mask = (ALL_ONES >> uint64(63 - hi_bit)) & (ALL_ONES << uint64(lo_bit))
        word = bits[k] & mask
        if word != 0:
            if want_max:
                cuda.atomic.max(result, 0, 64 * k + _highest_bit(word))
            else:
                cuda.atomic.min(result, 0, 64 * k + _lowest_bit(word))


@cuda.jit(cache=True)
def gvector_best_kernel(g, low, high, want_max, result):
    """Largest (``want_max``) or smallest capacity in ``[low, high]`` with ``g`` set."""
    unset = g[g.shape[0] - 1]
    for j in range(low + cuda.grid(1), high + 1, cuda.gridsize(1)):
        if g[j] != unset:
            if want_max:
                cuda.atomic.max(result, 0, j)
            else:
                cuda.atomic.min(result, 0, j)


@cuda.jit(cache=True)
def recover_kernel(g, weights, state, taken):
    """Follow ``g`` from ``state`` down to 0, marking the items used (one thread)."""
    if cuda.grid(1) != 0:
        return
    j = state
    while j > 0:
        item = g[j]
        taken[item - 1] = 1
        j -= weights[item - 1]
