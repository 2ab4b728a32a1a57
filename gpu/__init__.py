"""numba.cuda kernels and their host wrappers.

Importing this package never fails, with or without CUDA: nothing here
imports numba.cuda at module level.  It silences numba-cuda's low-occupancy
warning, which small problems trigger by design.  ``gpu.polyline``
and ``gpu.knapsack`` are the twins of ``core.polyline`` (with the link
scoring) and ``core.knapsack``; without a usable CUDA GPU their solvers raise
:class:`core.engine.BackendUnavailableError`.  Both share the device through
``gpu.device`` (one lock, the workspace, free memory and out-of-memory
errors); launch parameters live in ``gpu.config``, launch helpers in
``gpu.launching``.
"""

from __future__ import annotations

import warnings

from core.engine import BackendUnavailableError, gpu_available

# numba-cuda warns of every launch of fewer than 128 blocks.  Small problems (a short span, a
# knapsack row of a few thousand cells) launch small grids on purpose; a dozen such lines per
# extraction buried the command line's output and its one-line errors.
# numba may colour the message (ANSI codes before the text), hence the leading ".*".
warnings.filterwarnings("ignore", message=r".*Grid size \d+ will likely result in GPU under-utilization")

__all__ = ["available", "BackendUnavailableError"]


def available() -> bool:
    """True when numba.cuda can run kernels here (a GPU, or the simulator)."""
    return gpu_available()
