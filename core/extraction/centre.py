"""Closeness to the object's centre line (the refinement map of the adaptive mode), on the part that is sampled.

The map is the distance transform of the closed object region.  Both are
computed on a crop of the window around the points that will be sampled,
:data:`CROP_MARGIN_PX` wider on every side; where the crop's distances show
that the crop may differ from the whole window (an object wider than the
margin can vouch for), the whole window is used.  Why the crop gives the same
values: docs/notes/extraction-and-polyline.md, "Adaptive extraction".
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from core.extraction.appearance import LikelihoodWindow
from core.extraction.estimate import _bilinear as _sample
from core.extraction.estimate import _resample

__all__ = ["CLOSING_RADIUS_PX", "CROP_MARGIN_PX", "bend_shape", "centre_map"]

#: The structuring element that closes the object's region (radius CLOSING_RADIUS_PX).
CLOSING_RADIUS_PX = 4
_DISC = np.hypot(*np.mgrid[-CLOSING_RADIUS_PX:CLOSING_RADIUS_PX + 1, -CLOSING_RADIUS_PX:CLOSING_RADIUS_PX + 1]) \
    <= CLOSING_RADIUS_PX
#: The crop reaches this far (px) beyond the sampled points.
CROP_MARGIN_PX = 40


def centre_map(window: LikelihoodWindow, course, reach_px: float, sampled_px=None) -> LikelihoodWindow:
    """Closeness to the object's centre line: the distance to its border over the largest such distance.

    The object is where the road-likeness is at least 0.5 (closed, so that an
    object whose edges resemble the clicks more than its middle is one region,
    not two stripes); the largest distance is taken within ``reach_px`` of the
    course.  The map peaks on the object's centre line (its medial axis) and
    has no plateau a path could wander on.

    Parameters
    ----------
    window : LikelihoodWindow
        The road-likeness.
    course : (k, 2) array_like
        ``(x, y)`` vertices of the course, in raster pixels.
    reach_px : float
        Half-width (px) of the corridor around the course.
    sampled_px : (n, 2) array_like, optional
        Points ``(x, y)`` whose bounding box holds every later sample of the
        map (e.g. the candidate points of the guides).  When given, the map
        covers only that box and a margin (its values there are those of the
        whole window); otherwise the whole window.

    Returns
    -------
    LikelihoodWindow
    """
    points = _resample(np.asarray(course, dtype=np.float64), 2.0)
    segments = np.diff(points, axis=0)
    normals = np.stack([-segments[:, 1], segments[:, 0]], axis=1) / np.maximum(np.hypot(*segments.T), 1e-12)[:, None]
    across = np.arange(-reach_px, reach_px + 1e-9, 1.0)
    grid = (points[:-1, None, :] + across[None, :, None] * normals[:, None, :]).reshape(-1, 2)
    distance = None
    if sampled_px is not None:
        distance = _cropped_distance(window, np.concatenate([grid, np.reshape(sampled_px, (-1, 2))]))
    if distance is None:
        distance = _object_distance(window)
    largest = max(float(_sample(distance, grid).max()), 1.0)
    return LikelihoodWindow(np.minimum(distance.values / np.float32(largest), np.float32(1.0)), distance.col_off,
                            distance.row_off)


def _object_distance(window: LikelihoodWindow) -> LikelihoodWindow:
    """Distance (px) of every pixel of the closed object region to its border (0 outside the object)."""
    inside = ndimage.binary_closing(window.values >= 0.5, _DISC, border_value=1)
    distance = ndimage.distance_transform_edt(inside).astype(np.float32)
    return LikelihoodWindow(distance, window.col_off, window.row_off)


def _cropped_distance(window: LikelihoodWindow, points_px) -> LikelihoodWindow | None:
    """:func:`_object_distance` on a crop around ``points_px``, or None where it may differ from the whole.

    The closing of the crop is that of the whole window at least twice the
    closing radius inside the crop's edges; a distance shorter than the margin
    less that is measured to such a border pixel, so it is the whole window's.
    """
    height, width = window.values.shape
    lo = np.floor(points_px.min(axis=0) - 0.5).astype(np.int64) - np.array([window.col_off, window.row_off]) - 2
    hi = np.floor(points_px.max(axis=0) - 0.5).astype(np.int64) - np.array([window.col_off, window.row_off]) + 3
    need_lo, need_hi = np.maximum(lo, 0), np.minimum(hi, [width, height])
    if np.any(need_hi <= need_lo):
        return None
    crop_lo = np.maximum(need_lo - CROP_MARGIN_PX, 0)
    crop_hi = np.minimum(need_hi + CROP_MARGIN_PX, [width, height])
    crop = LikelihoodWindow(window.values[crop_lo[1]:crop_hi[1], crop_lo[0]:crop_hi[0]],
                            window.col_off + int(crop_lo[0]), window.row_off + int(crop_lo[1]))
    distance = _object_distance(crop)
    needed = distance.values[need_lo[1] - crop_lo[1]:need_hi[1] - crop_lo[1],
                             need_lo[0] - crop_lo[0]:need_hi[0] - crop_lo[0]]
    if not (distance.values == 0).any() or needed.max() >= CROP_MARGIN_PX - 2 * CLOSING_RADIUS_PX - 1:
        return None
    return distance


def bend_shape(centre: LikelihoodWindow, vertices, start, end) -> tuple[float, float, float]:
    """``(bow_px, wiggle_px, width_cv)`` of a path found on a :func:`centre_map`: how it bends, how smoothly, and
    how steady the object's width is along it.

    The path's offsets across the segment ``start``-``end`` (samples 2 px
    apart) are fitted by a cubic in the position along it: ``bow_px`` is the
    largest distance of the cubic from the straight-line fit (a bend, not a
    shift or a tilt), ``wiggle_px`` the rms residual of the cubic.
    ``width_cv`` is the coefficient of variation of the centre map along the
    middle two thirds of the path (samples 1 px apart): small on a band of
    steady width, large where the path crosses junctions, verges or gaps.
    """
    start, end = np.asarray(start, np.float64), np.asarray(end, np.float64)
    vertices = np.asarray(vertices, np.float64)
    length = max(float(np.hypot(*(end - start))), 1e-9)
    axis = (end - start) / length
    points = _resample(vertices, 2.0) - start
    along, across = points @ axis / length, points @ np.array([-axis[1], axis[0]])
    cubic = np.polyval(np.polyfit(along, across, 3), along)
    bow = float(np.abs(cubic - np.polyval(np.polyfit(along, across, 1), along)).max())
    wiggle = float(np.sqrt(np.mean((across - cubic) ** 2)))
    values = _sample(centre, _resample(vertices, 1.0))
    values = values[len(values) // 6: len(values) - len(values) // 6]
    return bow, wiggle, float(values.std() / max(float(values.mean()), 1e-6))
