"""numba.cuda kernels and their host wrappers.

Importing this package never fails, with or without CUDA: nothing here
imports numba.cuda at module level.  It silences numba-cuda's low-occupancy
warning, which small problems trigger by design.  :func:`solve_prepared` and
:func:`score_and_solve` load :mod:`gpu.polyline` on first use; without a usable
CUDA GPU they raise :class:`core.engine.BackendUnavailableError`.
"""

from __future__ import annotations

import warnings

from core.engine import BackendUnavailableError, gpu_available

# numba-cuda warns of every launch of fewer than 128 blocks.  Small problems (a short span, a
# knapsack row of a few thousand cells) launch small grids on purpose; a dozen such lines per
# extraction buried the command line's output and its one-line errors.
# numba may colour the message (ANSI codes before the text), hence the leading ".*".
warnings.filterwarnings("ignore", message=r".*Grid size \d+ will likely result in GPU under-utilization")

__all__ = ["available", "solve_prepared", "score_and_solve", "BackendUnavailableError"]


def available() -> bool:
    """True when numba.cuda can run kernels here (a GPU, or the simulator)."""
    return gpu_available()


def solve_prepared(prepared, method: str):
    """:func:`gpu.polyline.solve_prepared` (raises BackendUnavailableError without CUDA)."""
    _require_gpu()
    from gpu.polyline import solve_prepared as solve

    return solve(prepared, method)


def score_and_solve(gradient, guides, settings):
    """:func:`gpu.polyline.score_and_solve` (raises BackendUnavailableError without CUDA)."""
    _require_gpu()
    from gpu.polyline import score_and_solve as run

    return run(gradient, guides, settings)


def _require_gpu() -> None:
    from core.engine import resolve_backend

    resolve_backend("gpu")
