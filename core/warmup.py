"""Compile the CPU kernels of an extraction (then the knapsack solvers') into numba's cache ahead of use:
``python -m core.warmup``.

After an install numba's cache is empty and the first extraction compiles
every kernel it runs, one after the other on one core (tens of seconds on a
2-core machine).  The window therefore starts this module in a child process
at its first start (:func:`start_in_background`): the child starts with the
kernels an extraction meets last (see :func:`compile_kernels`) while the
window's own warm-up extraction compiles them in order, so the two cores share
the work, and each process loads from the cache what the other has already
written there.  Then, at a lower priority, the child solves small knapsack
problems of every family (:func:`compile_knapsack_kernels`), so that the
knapsack panel's first solve does not compile for a minute.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

__all__ = ["cache_is_cold", "compile_kernels", "compile_knapsack_kernels", "knapsack_cache_is_cold", "kp1_warmups",
           "start_in_background"]


def cache_is_cold() -> bool:
    """Whether numba's cache lacks the ``window`` DP kernel (a fresh install, or a cleared cache)."""
    from core.polyline import window

    return _not_cached(window._window_stage)


def knapsack_cache_is_cold() -> bool:
    """Whether numba's cache lacks KP1's first pass (the knapsack solvers were never compiled here)."""
    from core.knapsack import kp1_first

    return _not_cached(kp1_first.first_pass)


def _not_cached(dispatcher) -> bool:
    """Whether numba's cache has no index for a compiled function (another numba's cache layout: assume it
    has, so that nothing is started or compiled ahead)."""
    try:
        return not os.path.exists(dispatcher._cache._cache_file._index_path)
    except AttributeError:
        return False


def _road_image(size_px: int = 96) -> np.ndarray:
    """A bright horizontal road on a darker, slightly noisy field (float32)."""
    rng = np.random.default_rng(0)
    image = rng.normal(50.0, 2.0, (size_px, size_px)).astype(np.float32)
    image[size_px // 2 - 4 : size_px // 2 + 4] += 100.0
    return image


def _solve_small_problems() -> None:
    """The polyline DP and its turn ranges at the shapes an extraction uses (fixed and snapped ends)."""
    from core.polyline import PolylineProblem, solve

    d, m = 24, 6
    offsets = np.linspace(-8.0, 8.0, d)
    for n_end in (1, d):
        ends = None if n_end == 1 else offsets
        start = np.ones(d, np.float32) if n_end == 1 else np.ones((d, d), np.float32)
        solve(PolylineProblem(start, np.ones((m - 1, d, d), np.float32), start.T.copy(), offsets, 10.0, 10.0,
                              start_offsets=ends, end_offsets=ends), "window", "cpu")


def _turn_ranges() -> None:
    """The turn ranges between guides: uneven layers (the general kernel), then equal, evenly spaced ones."""
    from core.polyline.ranges import turn_ranges

    offsets = np.linspace(-8.0, 8.0, 24)
    turn_ranges(offsets, offsets, offsets + 0.5, 10.0, 10.0)
    turn_ranges(offsets, offsets, offsets, 10.0, 10.0)


def _corner_means_both_sizes() -> None:
    """The corner means of the adaptive mode (its last kernel), serial (few corners) and parallel (many)."""
    from core.extraction.appearance import LikelihoodWindow
    from core.extraction.map_scores import corner_path_means
    from core.polyline.stages import PARALLEL_MIN_STEPS

    window = LikelihoodWindow(np.ones((8, 8), np.float32), 0, 0, None)
    start, end = np.zeros(2), np.array([700.0, 0.0])  # about 1000 samples per corner
    for n_corners in (1, PARALLEL_MIN_STEPS // 900):
        corner_path_means(window, start, end, np.full((n_corners, 2), 350.0))


def compile_kernels() -> None:
    """Run the CPU kernels of an extraction once on tiny inputs, those a first click reaches last first.

    The window's warm-up extraction compiles them in the order the click
    meets them: the scoring, the turn ranges, the DP stages, the corner means;
    so this process starts with the turn ranges (the slowest compile, met in
    the middle), then goes from the end back: the corner means, the DP's
    small-stage kernels from the last stage back; then every scoring mode, and
    last the parallel DP stages of large problems.
    """
    import core
    from core.geodesy import geodesic_distances_m
    from core.polyline.window import compile_stages

    _turn_ranges()
    _corner_means_both_sizes()
    compile_stages(serial=True)
    _solve_small_problems()
    image, row = _road_image(), 48.0
    for mode in ("ribbon", "edge", "auto"):
        core.extract(image, (20.0, row), (76.0, row), mode=mode, backend="cpu")
    image, row = _road_image(320), 160.0  # a click of usual length: the parallel kernels of large stages
    core.extract(image, (10.0, row), (310.0, row), mode="auto", backend="cpu")
    compile_stages(serial=False)
    geodesic_distances_m([0.0], [0.0], [0.001], [0.001])  # (the Features table's lengths in metres)


def kp1_warmups() -> list:
    """The KP1 instances of :func:`compile_knapsack_kernels`: one the first pass settles, one of identical
    items (grouped), one it hands over to the surrogate, one past the first pass's size."""
    from core.knapsack.generators import pisinger, pisinger_hard

    return [pisinger("uncorrelated", 200, 1000, 50, 100, seed=0), pisinger_hard(12, 300, 1000, 50, 100, seed=0),
            pisinger("almost-strongly", 300, 10**6, 50, 100, seed=0), pisinger("weakly", 2500, 1000, 50, 100, seed=0)]


def compile_knapsack_kernels(kinds=("kp1", "subset-sum", "kp2", "mckp")) -> None:
    """Solve small knapsack problems of the families ``kinds`` (default: every family) on the CPU, KP1 by each
    of its paths (the first pass, grouped identical items, a handover to the surrogate, the usual preparation
    of many items, the capacity DP), so that the knapsack panel's first solve finds them in numba's cache (a
    first KP1 solve compiled for about a minute on a 2-core machine).  With the cache filled it loads them
    into this process instead: about 1.6-2 s for every family, 1.1 s for KP1, on that machine."""
    from core.knapsack import KP2, SubsetSum, solve
    from core.knapsack.generators import MCKP_KINDS, pisinger, pisinger_mckp
    from core.knapsack.kp1 import solve_kp1

    rng = np.random.default_rng(0)
    if "kp1" in kinds:
        for problem in kp1_warmups():
            solve(problem, backend="cpu")
        solve_kp1(pisinger("uncorrelated", 40, 100, 50, 100, seed=0), method="dp")
    if "subset-sum" in kinds:
        weights = rng.integers(1, 1000, 60)
        solve(SubsetSum(weights, int(weights.sum()) // 2), backend="cpu")
    if "kp2" in kinds:
        solve(KP2(rng.integers(1, 100, 30), rng.integers(1, 100, 30), rng.integers(1, 100, 30), 500, 500),
              backend="cpu")
    if "mckp" in kinds:
        solve(pisinger_mckp(MCKP_KINDS[0], 10, 5, 100, seed=0), backend="cpu")


def start_in_background() -> subprocess.Popen | None:
    """Start ``python -m core.warmup`` in a child process when the cache is cold; None when warm.

    ``LINESNAP_PRECOMPILE=0`` in the environment turns it off.

    The child imports this very ``core`` (it starts in the folder that holds
    it), inherits the environment (``NUMBA_CACHE_DIR`` included) and exits by
    itself; its output is discarded.
    """
    if os.environ.get("LINESNAP_PRECOMPILE") == "0" or not cache_is_cold():
        return None
    return subprocess.Popen([sys.executable, "-m", "core.warmup"], cwd=Path(__file__).resolve().parents[1],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)


if __name__ == "__main__":
    compile_kernels()
    if hasattr(os, "nice"):  # the knapsack panel's turn comes after the first clicks': yield the core to them
        os.nice(10)
    compile_knapsack_kernels()
