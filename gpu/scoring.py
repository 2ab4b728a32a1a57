"""Link scores and turn ranges computed on the device (for :func:`gpu.polyline.score_and_solve`).

The tables are written straight into the workspace's problem buffers, where the
DP reads them: nothing goes back to the host between scoring and DP.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from core.turns import turn_limit_rad
from gpu import config
from gpu.kernels_polyline import link_angle_table, turn_ranges
from gpu.kernels_scores import link_scores
from gpu.polyline_dp import DeviceProblem, buffer, grid_blocks, range_slots

__all__ = ["score_on_device", "turn_ranges_on_device", "synchronize"]


def synchronize() -> None:
    """Wait for the device (so that host clocks measure finished work)."""
    cuda.synchronize()


def _points(guides) -> np.ndarray:
    """``(m + 2, n_max, 2)`` float64: the (x, y) of every layer's points, zero-padded."""
    layers = guides.layer_points()
    points = np.zeros((len(layers), max(layer.shape[0] for layer in layers), 2))
    for k, layer in enumerate(layers):
        points[k, : layer.shape[0]] = layer
    return points


def score_on_device(grad, col_off, row_off, guides, mode: int, radius: float, polarity: int) -> DeviceProblem:
    """Score every link of the guides into the workspace's problem tables.

    Parameters
    ----------
    grad : (H, W, 2) float32 device array
        Interleaved ``(gx, gy)`` of the gradient window.
    col_off, row_off : int
        Position of the window in the raster (pixels).
    guides : core.guides.Guides
    mode, radius, polarity : int, float, int
        Codes of :mod:`gpu.kernels_scores` and the ribbon half-width (px).

    Returns
    -------
    DeviceProblem
        With tables filled (asynchronously) and no ranges yet
        (:func:`turn_ranges_on_device`).
    """
    m, d = guides.n_guides, guides.offsets.shape[0]
    n0, n1 = guides.start_offsets.shape[0], guides.end_offsets.shape[0]
    host_points = _points(guides)
    points = buffer("points", host_points.shape, np.float64)
    points.copy_to_device(host_points)
    first = buffer("problem_first", (n0, d), np.float32)
    first_t = buffer("problem_first_t", (d, n0), np.float32)
    links = buffer("problem_links", (m - 1, d, d) if m > 1 else (1, 1, 1), np.float32)
    last = buffer("problem_last", (d, n1), np.float32)
    total = n0 * d + (m - 1) * d * d + d * n1
    link_scores[grid_blocks(total), config.THREADS_PER_BLOCK](
        grad, float(col_off), float(row_off), points, n0, n1, mode, float(radius), polarity,
        first, first_t, links, last,
    )
    return DeviceProblem(m, d, n0, n1, first, first_t, links, last, ranges=[])


def turn_ranges_on_device(problem: DeviceProblem, guides, max_turn_deg: float) -> None:
    """Fill ``problem.ranges`` with the feasible index ranges of every inner layer.

    The same rule as :func:`core.turns.feasible_ranges` over
    :func:`core.turns.link_angles`: the angle tables are computed once on the
    device (float64 ``atan2``, which may differ from numpy's in the last bit:
    that moves a decision only for a turn within ~1e-15 rad of
    ``max_turn + TURN_SLACK_RAD``), then binary searches give the ranges.
    The inner layers share one (d, d) table and one pair of ranges.
    """
    offsets = {}
    for name in ("start_offsets", "offsets", "end_offsets"):
        host = np.ascontiguousarray(getattr(guides, name), dtype=np.float64)
        offsets[name] = buffer(name, host.shape, np.float64)
        offsets[name].copy_to_device(host)

    def angles(name, source, target):
        table = buffer(name, (offsets[source].shape[0], offsets[target].shape[0]), np.float64)
        link_angle_table[grid_blocks(table.size), config.THREADS_PER_BLOCK](
            offsets[source], offsets[target], float(guides.spacing), table
        )
        return table

    inner = angles("angles_inner", "offsets", "offsets")
    into_first = angles("angles_start", "start_offsets", "offsets")
    out_of_last = angles("angles_end", "offsets", "end_offsets")
    tables = {0: (into_first, out_of_last if problem.m == 1 else inner), 1: (inner, inner), 2: (inner, out_of_last)}
    limit = turn_limit_rad(max_turn_deg)
    computed = {}
    for slot in range_slots(problem.m):
        if slot not in computed:
            angles_in, angles_out = tables[slot]
            pair = buffer(f"problem_ranges{slot}", (2,) + angles_out.shape, np.int32)
            turn_ranges[grid_blocks(pair[0].size), config.THREADS_PER_BLOCK](angles_in, angles_out, limit, pair[0], pair[1])
            computed[slot] = (pair[0], pair[1])
        problem.ranges.append(computed[slot])
