"""The GPU twin of core.polyline and the link scoring (importing it needs no GPU).

Host modules: ``solve`` (the entries), ``dp`` (device-resident problems, DP
drivers), ``scores``; kernel modules: ``kernels_dp``, ``kernels_window``,
``kernels_scores``.
"""

from gpu.polyline.solve import (
                                GPU_METHODS,
                                GpuMemoryError,
                                corner_path_means,
                                map_link_tables,
                                score_and_solve,
                                solve_prepared,
)

__all__ = ["GPU_METHODS", "GpuMemoryError", "corner_path_means", "map_link_tables", "score_and_solve",
           "solve_prepared"]
