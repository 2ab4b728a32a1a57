"""The GPU twins of core.knapsack's solvers: numba.cuda kernels and their host code.

``solve`` holds the entries (same signatures and :class:`core.knapsack.SolverResult`
as the CPU twins).  Host modules are named after their method (``rows``,
``mitm``, ``wavefront``, ``subset_sum``, ``mckp``) or job (``plan``,
``common``); kernel modules start with ``kernels_``.  The device (lock,
workspace, budget, :class:`GpuMemoryError`) is :mod:`gpu.device`.  Importing
this package needs no GPU.
"""

from gpu.device import GpuMemoryError
from gpu.knapsack.solve import (
    release_memory,
    solve_kp1,
    solve_kp2,
    solve_kp2_batch,
    solve_mckp,
    solve_subset_sum,
)

__all__ = [
    "GpuMemoryError", "release_memory", "solve_kp1", "solve_kp2", "solve_kp2_batch", "solve_mckp", "solve_subset_sum",
]
