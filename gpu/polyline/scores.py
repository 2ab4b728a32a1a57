"""Link scores and turn ranges computed on the device, straight into the buffers the DP reads.

Also the adaptive mode's map scores (:func:`map_scores_on_device`), which come
back to the host.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from core.extraction.options import ScoringOptions
from core.extraction.scores import excluded_flags, excluded_link_score
from core.polyline.turns import turn_limit_rad
from gpu import config, device
from gpu.device import buffer
from gpu.launching import LaunchList
from gpu.polyline.dp import DeviceProblem, grid_blocks, range_slots, workspace_problem
from gpu.polyline.kernels_dp import link_angle_table, turn_ranges
from gpu.polyline.kernels_scores import corner_means, link_scores, map_link_scores

__all__ = ["map_scores_on_device", "score_on_device", "turn_ranges_on_device", "synchronize"]

_map_cache: dict = {}
device.register_cache(_map_cache.clear)  # its array lies in the workspace's "map" buffer


def synchronize() -> None:
    """Wait for the device (so that host clocks measure finished work)."""
    cuda.synchronize()


def _points(guides, excluded=None):
    """``(m + 2, n_max, 2)`` float64 (x, y) and ``(m + 2, n_max)`` uint8 excluded flags of every layer's points,
    zero-padded; ``excluded`` is None or (n_points,) bool, layer after layer."""
    layers = guides.layer_points()
    sizes = np.array([layer.shape[0] for layer in layers])
    flat = np.zeros(sizes.sum(), np.bool_) if excluded is None else excluded_flags(excluded, int(sizes.sum()))
    points = np.zeros((len(layers), sizes.max(), 2))
    flags = np.zeros((len(layers), sizes.max()), np.uint8)
    for k, (layer, layer_flags) in enumerate(zip(layers, np.split(flat, np.cumsum(sizes)[:-1]))):
        points[k, : sizes[k]] = layer
        flags[k, : sizes[k]] = layer_flags
    return points, flags


def score_on_device(grad, gradient, guides, options: ScoringOptions, excluded=None) -> DeviceProblem:
    """Score every link of the guides into the tables of the workspace's problem of that shape.

    ``grad`` is the (Hg, Wg) complex64 device copy of ``gradient`` (whose
    position and step are read); ``excluded`` as in
    core.extraction.scores.link_score_tables.  Returns the DeviceProblem with
    its tables being filled asynchronously; its ranges are stale until
    :func:`turn_ranges_on_device`.
    """
    m, d = guides.n_guides, guides.offsets.shape[0]
    n0, n1 = guides.start_offsets.shape[0], guides.end_offsets.shape[0]
    problem = workspace_problem(m, d, n0, n1)
    host_points, host_flags = _points(guides, excluded)
    points = problem.scratch("points", host_points.shape, np.float64)
    points.copy_to_device(host_points)
    flags = problem.scratch("excluded", host_flags.shape, np.uint8)
    flags.copy_to_device(host_flags)
    total = n0 * d + (m - 1) * d * d + d * n1
    codes = options.kernel_codes()
    excluded_score = 0.0 if excluded is None else excluded_link_score(gradient, guides)
    link_scores[grid_blocks(total), config.THREADS_PER_BLOCK](
        grad, float(gradient.col_off), float(gradient.row_off), 1.0 / float(gradient.step_px), points, flags,
        excluded_score, n0, n1, codes.mode, codes.radius_px, codes.polarity, codes.combine,
        problem.first, problem.first_t, problem.links, problem.last,
    )
    return problem


def _ranges_plan(problem: DeviceProblem):
    """The parameter array and launches of :func:`turn_ranges_on_device`, built once per problem."""
    key = ("ranges", config.THREADS_PER_BLOCK)
    if key in problem.plans:
        return problem.plans[key]
    n0, d = problem.n0, problem.d
    params = problem.scratch("range_params", (2 + n0 + d + problem.n1,), np.float64)
    start, inner, end = params[2 : 2 + n0], params[2 + n0 : 2 + n0 + d], params[2 + n0 + d :]
    launches = []

    def angles(name, source, target):
        table = problem.scratch(name, (source.shape[0], target.shape[0]), np.float64)
        launches.append((link_angle_table, (grid_blocks(table.size), config.THREADS_PER_BLOCK),
                         (source, target, params, table)))
        return table

    inner_angles = angles("angles_inner", inner, inner)
    start_angles = angles("angles_start", start, inner)
    end_angles = angles("angles_end", inner, end)
    tables = {0: (start_angles, end_angles if problem.m == 1 else inner_angles),
              1: (inner_angles, inner_angles), 2: (inner_angles, end_angles)}
    done = set()
    for k, slot in enumerate(range_slots(problem.m), start=1):
        if slot not in done:
            done.add(slot)
            lo, hi = problem.ranges[k - 1]
            launches.append((turn_ranges, (grid_blocks(lo.size), config.THREADS_PER_BLOCK),
                             (*tables[slot], params, lo, hi)))
    plan = problem.plans[key] = (params, LaunchList(launches))
    return plan


def turn_ranges_on_device(problem: DeviceProblem, guides, max_turn_deg: float) -> None:
    """Write the feasible index ranges of every inner layer into ``problem.ranges``.

    ``guides`` has ``spacing``, ``start_offsets``, ``offsets`` and ``end_offsets``
    (guides, or a :class:`core.polyline.PreparedProblem`).  The rule of
    :func:`core.polyline.turns.feasible_ranges`; the device's float64 ``atan2``
    may differ from the C library's in the last bit, which moves a decision only
    for a turn within ~1e-15 rad of the limit.
    """
    params, launches = _ranges_plan(problem)
    header = [float(guides.spacing), turn_limit_rad(max_turn_deg)]
    params.copy_to_device(np.concatenate((header, guides.start_offsets, guides.offsets, guides.end_offsets)))
    launches.run()
    problem.ranges_changed = True


def map_scores_on_device(window, points, excluded, m: int, n0: int, n1: int, base: float, normal,
                         lateral_penalty: float, sample_step_px: float = 1.0) -> np.ndarray:
    """The flat float32 map scores of the chain of layers, computed on the device and copied back.

    ``points`` (n0 + m d + n1, 2) float64 and ``excluded`` (same length) bool
    are the checked inputs of :func:`gpu.polyline.map_link_tables`; the result
    holds T0, T1..T(m-1), Tm flattened row-major, one after the other.  The
    map is uploaded once per ``window`` object.  Call under ``LOCK``.
    """
    d = (points.shape[0] - n0 - n1) // m
    total = n0 * d + (m - 1) * d * d + d * n1
    device_points = buffer("map_points", points.shape, np.float64)
    device_points.copy_to_device(points)
    device_excluded = buffer("map_excluded", excluded.shape, np.uint8)
    device_excluded.copy_to_device(excluded.view(np.uint8))
    out = buffer("map_scores", (total,), np.float32)
    map_link_scores[grid_blocks(total), config.THREADS_PER_BLOCK](
        _device_map(window), float(window.col_off), float(window.row_off), device_points, device_excluded,
        m, n0, n1, base, float(normal[0]), float(normal[1]), lateral_penalty, sample_step_px, out,
    )
    return out.copy_to_host()


def corner_means_on_device(window, start, end, corners: np.ndarray) -> np.ndarray:
    """The mean map value along ``start -> corner -> end`` for every corner (n, 2), computed on the device.

    Call under ``LOCK``.
    """
    device_corners = buffer("map_corners", corners.shape, np.float64)
    device_corners.copy_to_device(corners)
    out = buffer("map_corner_means", (corners.shape[0],), np.float64)
    corner_means[grid_blocks(corners.shape[0]), config.THREADS_PER_BLOCK](
        _device_map(window), float(window.col_off), float(window.row_off), float(start[0]), float(start[1]),
        float(end[0]), float(end[1]), device_corners, out,
    )
    return out.copy_to_host()


def _device_map(window):
    """``window.values`` on the device, (H, W) float32 in the workspace's "map" buffer; reused for the same object."""

    def upload():
        values = np.ascontiguousarray(window.values, dtype=np.float32)
        array = buffer("map", values.shape, np.float32)
        array.copy_to_device(values)
        return array

    return device.upload_once(_map_cache, window, upload)
