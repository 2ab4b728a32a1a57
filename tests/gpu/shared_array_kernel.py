"""A kernel whose threads read each other's slot of one static shared array (tests/gpu/test_device.py).

At module level, so that the CUDA simulator swaps its ``cuda`` for the fake one.
"""

from numba import cuda, float64

THREADS = 16


@cuda.jit
def neighbours(out):
    """``out[block, t]``: what thread ``t + 1`` (mod THREADS) of the block wrote, ``t + 2``."""
    shared = cuda.shared.array(THREADS, float64)
    t = cuda.threadIdx.x
    shared[t] = t + 1.0
    cuda.syncthreads()
    out[cuda.blockIdx.x, t] = shared[(t + 1) % THREADS]
