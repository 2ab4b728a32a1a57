"""The GPU twin of core.polyline and the link scoring: numba.cuda kernels and their host code.

Host modules: ``solve`` (the entries :func:`solve_prepared` and
:func:`score_and_solve`), ``dp`` (device-resident problems and the DP
drivers), ``scores`` (scoring and turn ranges on the device).  Kernel modules:
``kernels_dp``, ``kernels_window``, ``kernels_scores``.  Importing this package
needs no GPU.
"""

from gpu.polyline.solve import GPU_METHODS, GpuMemoryError, score_and_solve, solve_prepared

__all__ = ["GPU_METHODS", "GpuMemoryError", "score_and_solve", "solve_prepared"]
