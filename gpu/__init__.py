"""numba.cuda kernels and their host wrappers; importing this package never fails without CUDA.

``gpu.polyline`` and ``gpu.knapsack`` are the twins of ``core.polyline`` and
``core.knapsack``; they share the device through ``gpu.device``, launch
parameters live in ``gpu.config``.  numba-cuda's low-occupancy warning,
which small problems trigger by design, is silenced.
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
