"""Link scores over a scalar map (the adaptive mode's road-likeness), and two-segment path means (CPU, numba).

A link ``P -> Q`` scores ``integral (map - base)`` along it (samples at the
midpoints of ``K = max(2, ceil(|PQ|))`` equal pieces, bilinear, outside the
map counting 0) minus ``lateral_penalty`` per pixel it moves across the axis.
The CUDA twins are in ``gpu.polyline.kernels_scores``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from core import validation
from core.cancel import check, flag_of
from core.extraction.scores import _FASTMATH, excluded_flags, split_tables
from core.parallel import cancel_requested
from core.polyline.stages import parallel_section, serial_twin, threaded_kernel

__all__ = ["EXCLUDED_SCORE", "corner_path_means", "map_inputs", "map_link_tables"]

#: The score of a link that touches an excluded candidate point (see :func:`map_link_tables`).
EXCLUDED_SCORE = -1.0e6


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _cell(col_off, row_off, x, y):
    """``(i0, j0, fv, fu)``: the top-left pixel that interpolates ``(x, y)`` and the weights of its neighbours."""
    u = x - col_off - 0.5
    v = y - row_off - 0.5
    fj = math.floor(u)
    fi = math.floor(v)
    return int(fi), int(fj), v - fi, u - fj


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _bilinear(values, i0, j0, fv, fu):
    """The bilinear mix of the four pixels from ``values[i0, j0]`` (all inside)."""
    top = (1.0 - fu) * values[i0, j0] + fu * values[i0, j0 + 1]
    return (1.0 - fv) * top + fv * ((1.0 - fu) * values[i0 + 1, j0] + fu * values[i0 + 1, j0 + 1])


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _map_value(values, col_off, row_off, x, y):
    """Bilinearly interpolated ``values`` at pixel position ``(x, y)``; outside neighbours count 0."""
    i0, j0, fv, fu = _cell(col_off, row_off, x, y)
    height, width = values.shape
    if 0 <= i0 and i0 + 1 < height and 0 <= j0 and j0 + 1 < width:  # the common case
        return _bilinear(values, i0, j0, fv, fu)
    total = 0.0
    for di in range(2):
        i = i0 + di
        if i < 0 or i >= height:
            continue
        wi = fv if di == 1 else 1.0 - fv
        for dj in range(2):
            j = j0 + dj
            if 0 <= j < width:
                total += wi * (fu if dj == 1 else 1.0 - fu) * values[i, j]
    return total


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _map_link_score(values, col_off, row_off, px, py, qx, qy, base, nx, ny, lateral_penalty, sample_step):
    """``integral (map - base)`` along the link minus ``lateral_penalty`` per px it moves along ``(nx, ny)``."""
    dx = qx - px
    dy = qy - py
    length = math.sqrt(dx * dx + dy * dy)
    if length == 0.0:
        return 0.0
    n_samples = max(2, int(math.ceil(length / sample_step)))
    total = 0.0
    if _inside(values, col_off, row_off, px, py) and _inside(values, col_off, row_off, qx, qy):
        for k in range(n_samples):  # every sample inside (the map is convex): no bounds checks, the loop vectorises
            t = (k + 0.5) / n_samples
            total += _map_value_inside(values, col_off, row_off, px + t * dx, py + t * dy) - base
    else:
        for k in range(n_samples):
            t = (k + 0.5) / n_samples
            total += _map_value(values, col_off, row_off, px + t * dx, py + t * dy) - base
    return total * length / n_samples - lateral_penalty * abs(dx * nx + dy * ny)


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _inside(values, col_off, row_off, x, y):
    """Whether the four pixels that interpolate ``(x, y)`` all lie in ``values``."""
    u = x - col_off - 0.5
    v = y - row_off - 0.5
    return 0.0 <= u < values.shape[1] - 1 and 0.0 <= v < values.shape[0] - 1


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _map_value_inside(values, col_off, row_off, x, y):
    """:func:`_map_value` where :func:`_inside` holds."""
    i0, j0, fv, fu = _cell(col_off, row_off, x, y)
    return _bilinear(values, i0, j0, fv, fu)


@njit(cache=True, nogil=True, parallel=True, fastmath=_FASTMATH)
def _score_map_pairs(values, col_off, row_off, points, excluded, stages, base, nx, ny, lateral_penalty,
                     sample_step, out, cancel_flag):
    """:func:`_score_pairs` for :func:`_map_link_score`; links that touch an excluded point score EXCLUDED_SCORE."""
    n_stages = stages.shape[0]
    ends = np.empty(n_stages, dtype=np.int64)
    total = 0
    for s in range(n_stages):
        total += stages[s, 1] * stages[s, 3]
        ends[s] = total
    for flat in prange(total):
        if cancel_requested(cancel_flag):
            continue
        s = np.searchsorted(ends, flat, side="right")
        n_to = stages[s, 3]
        rest = flat - (ends[s] - stages[s, 1] * n_to)
        i = stages[s, 0] + rest // n_to
        j = stages[s, 2] + rest % n_to
        if excluded[i] or excluded[j]:
            out[flat] = EXCLUDED_SCORE
            continue
        out[flat] = _map_link_score(values, col_off, row_off, points[i, 0], points[i, 1], points[j, 0],
                                    points[j, 1], base, nx, ny, lateral_penalty, sample_step)


_score_map_pairs_serial = serial_twin(_score_map_pairs)  # small tables: cheaper to compile, one thread


def map_link_tables(window, guides, base: float, lateral_penalty: float, excluded=None, cancel=None,
                    sample_step_px: float = 1.0):
    """Score tables of the links of the guides over a map (the road-likeness of the adaptive mode).

    A link scores ``integral (map - base)`` along it, minus ``lateral_penalty``
    per pixel that it moves across the axis (which keeps a path straight where
    the map gives no reason to bend).

    Parameters
    ----------
    window : core.extraction.appearance.LikelihoodWindow
        The map, covering the guides (samples outside it count 0).
    guides : core.extraction.guides.Guides
    base : float
        Subtracted from every sample: map values below it count against a link.
    lateral_penalty : float
        Score per pixel of sideways movement (>= 0).
    excluded : (n_points,) bool array_like, optional
        Per candidate point of ``guides.layer_points()`` (concatenated): links
        from or to it score :data:`EXCLUDED_SCORE`.
    cancel : core.cancel.CancelToken, optional
    sample_step_px : float
        Samples along a link are about this far apart (px, > 0): ``max(2, ceil(length / step))`` of them.

    Returns
    -------
    first, links, last : float32 ndarrays
        As :func:`link_score_tables`.

    The CUDA twin is ``gpu.polyline.map_link_tables``.
    """
    points, excluded, sizes = map_inputs(guides, excluded)
    step = validation.real(sample_step_px, "sample_step_px", 0.0, low_open=True, unit="pixels")
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    stages = np.stack([starts[:-1], sizes[:-1], starts[1:], sizes[1:]], axis=1)
    out = np.empty(int((sizes[:-1] * sizes[1:]).sum()), dtype=np.float32)
    values = np.ascontiguousarray(window.values, dtype=np.float32)
    scored = ~excluded
    scored_links = sum(int(scored[a:a + n].sum()) * int(scored[b:b + m].sum()) for a, n, b, m in stages)
    with parallel_section() as threads:
        kernel = threaded_kernel(_score_map_pairs, _score_map_pairs_serial,
                                 scored_links * max(2, math.ceil(guides.spacing / step)), threads)
        kernel(values, float(window.col_off), float(window.row_off), np.ascontiguousarray(points),
                         excluded, stages, float(base), float(guides.normal[0]), float(guides.normal[1]),
                         float(lateral_penalty), step, out, flag_of(cancel))
    check(cancel)
    return split_tables(out, sizes, guides.n_guides)


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _map_mean(values, col_off, row_off, px, py, qx, qy):
    """``(sum of map samples, count)`` along a segment, one sample per pixel of length (at least 2)."""
    dx = qx - px
    dy = qy - py
    n_samples = max(2, int(math.ceil(math.sqrt(dx * dx + dy * dy))))
    total = 0.0
    if _inside(values, col_off, row_off, px, py) and _inside(values, col_off, row_off, qx, qy):
        for k in range(n_samples):
            t = (k + 0.5) / n_samples
            total += _map_value_inside(values, col_off, row_off, px + t * dx, py + t * dy)
    else:
        for k in range(n_samples):
            t = (k + 0.5) / n_samples
            total += _map_value(values, col_off, row_off, px + t * dx, py + t * dy)
    return total, n_samples


@njit(cache=True, nogil=True, parallel=True, fastmath=_FASTMATH)
def _corner_means(values, col_off, row_off, ax, ay, bx, by, corners, out):
    for i in prange(corners.shape[0]):
        first, n_first = _map_mean(values, col_off, row_off, ax, ay, corners[i, 0], corners[i, 1])
        second, n_second = _map_mean(values, col_off, row_off, corners[i, 0], corners[i, 1], bx, by)
        out[i] = (first + second) / (n_first + n_second)


_corner_means_serial = serial_twin(_corner_means)


def corner_path_means(window, start, end, corners) -> np.ndarray:
    """The mean map value along every two-segment path ``start -> corner -> end``.

    Parameters
    ----------
    window : core.extraction.appearance.LikelihoodWindow
    start, end : (2,) array_like
        ``(x, y)`` in raster pixels.
    corners : (n, 2) array_like
        Candidate corners ``(x, y)``.

    Returns
    -------
    (n,) float64 ndarray
        Samples one pixel apart, outside the window counting 0.
    """
    corners = np.ascontiguousarray(corners, dtype=np.float64).reshape(-1, 2)
    out = np.empty(corners.shape[0])
    samples = np.hypot(*(corners - start).T).sum() + np.hypot(*(corners - end).T).sum()
    with parallel_section() as threads:
        kernel = threaded_kernel(_corner_means, _corner_means_serial, int(samples), threads)
        kernel(np.ascontiguousarray(window.values, dtype=np.float32), float(window.col_off),
                      float(window.row_off), float(start[0]), float(start[1]), float(end[0]), float(end[1]),
                      corners, out)
    return out


def map_inputs(guides, excluded):
    """The candidate points (P, 2) float64, excluded flags (P,) bool and layer sizes of map scoring, checked.

    Shared by :func:`map_link_tables` and its CUDA twin.
    """
    layers = guides.layer_points()
    sizes = np.array([len(layer) for layer in layers], dtype=np.int64)
    points = np.ascontiguousarray(np.concatenate(layers), dtype=np.float64)
    excluded = np.zeros(len(points), np.bool_) if excluded is None else excluded_flags(excluded, len(points))
    return points, excluded, sizes
