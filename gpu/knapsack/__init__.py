"""The GPU twins of core.knapsack's solvers: numba.cuda kernels and their host code.

``solve`` holds the entries; host modules are named after their method
(``rows``, ``mitm``, ``wavefront``, ``subset_sum``, ``mckp``, ``plan``),
kernel modules start with ``kernels_``.  Importing this package needs no GPU.
"""

from gpu.knapsack.solve import (
    release_memory,
    solve_kp1,
    solve_kp2,
    solve_kp2_batch,
    solve_mckp,
    solve_subset_sum,
)

__all__ = ["release_memory", "solve_kp1", "solve_kp2", "solve_kp2_batch", "solve_mckp", "solve_subset_sum"]
