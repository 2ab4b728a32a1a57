"""The GPU twins of core.knapsack's solvers (importing this package needs no GPU).

``solve`` holds the entries; host modules are named after their method
(``rows``, ``mitm``, ``wavefront``, ``subset_sum``, ``mckp``) or job (``plan``,
``common``), kernel modules start with ``kernels_``.
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
