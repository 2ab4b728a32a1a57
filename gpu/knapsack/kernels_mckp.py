"""Kernels of the multiple-choice knapsack on the GPU (after Suri, Bordoloi and Eles).

One launch per class over its capacity window, with multi-cell threads and
shared-memory staging (docs/notes/gpu.md, "Knapsack methods").
"""

from __future__ import annotations

import functools

from numba import cuda, int32, int64

__all__ = ["backtrack_kernel", "class_kernel"]


@functools.cache
def class_kernel(value_type_name: str, cells_per_thread: int, chunk: int, staged: bool):
    """The class kernel for one value type, cells per thread, item chunk and staging choice."""
    value_type = {"int32": int32, "int64": int64}[value_type_name]
    CPT = cells_per_thread

    @cuda.jit
    def mckp_class(prev, cur, choice, profits, weights, first, count, k, lo_prev, hi_prev, lo, hi, w_min, w_max, neg):
        """Row ``cur`` of class ``k`` over capacities ``lo..hi`` from row ``prev`` (valid on ``lo_prev..hi_prev``).

        ``neg`` marks infeasible cells; ``choice`` row ``k`` receives the argmax item
        within the class (-1 for none); class ``k`` is items ``first .. first + count - 1``
        of ``profits`` and ``weights``, whose extremes ``w_min`` and ``w_max`` bound
        the staged slice of ``prev``.
        """
        sm_p = cuda.shared.array(chunk, int64)
        sm_w = cuda.shared.array(chunk, int32)
        sm_f = cuda.shared.array(0, value_type)
        T = cuda.blockDim.x
        t = cuda.threadIdx.x
        tile = T * CPT
        row = k * cur.shape[0]
        for tb in range(cuda.blockIdx.x, (hi - lo + tile) // tile, cuda.gridDim.x):
            J0 = lo + tb * tile
            best = cuda.local.array(CPT, value_type)
            arg = cuda.local.array(CPT, int32)
            for r in range(CPT):
                best[r] = neg
                arg[r] = -1
            if staged:
                base = J0 - w_max
                for x in range(t, tile + w_max - w_min, T):
                    src = base + x
                    sm_f[x] = prev[src] if lo_prev <= src <= hi_prev else neg
            for c0 in range(0, count, chunk):
                n_here = min(chunk, count - c0)
                cuda.syncthreads()
                for x in range(t, n_here, T):
                    sm_p[x] = profits[first + c0 + x]
                    sm_w[x] = weights[first + c0 + x]
                cuda.syncthreads()
                for it in range(n_here):
                    wt = sm_w[it]
                    pt = sm_p[it]
                    for r in range(CPT):
                        if staged:
                            v = sm_f[r * T + t + w_max - wt]
                        else:
                            src = J0 + r * T + t - wt
                            v = prev[src] if lo_prev <= src <= hi_prev else neg
                        cand = v + pt
                        if cand > best[r]:
                            best[r] = cand
                            arg[r] = c0 + it
            for r in range(CPT):
                j = J0 + r * T + t
                if j <= hi:
                    cur[j] = best[r]
                    choice[row + j] = arg[r]
            cuda.syncthreads()

    return mckp_class


@cuda.jit(cache=True)
def backtrack_kernel(choice, weights, firsts, capacity, selected):
    """One thread: the chosen item of every class, last class first."""
    if cuda.grid(1) != 0:
        return
    width = capacity + 1
    j = capacity
    for k in range(firsts.shape[0] - 1, -1, -1):
        t = choice[k * width + j]
        selected[k] = t
        j -= weights[firsts[k] + t]
