"""Launch configuration of every LineSnap kernel, in one place.

Tests patch these small (under ``NUMBA_ENABLE_CUDASIM=1``) so that launches span
several blocks and a partial last block.
"""

#: Threads per block of one-dimensional elementwise and grid-stride kernels.
THREADS_PER_BLOCK = 256
