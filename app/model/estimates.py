"""What the tool keeps of an extraction's estimate of the road: its confidence and its ribbon (no Qt).

``core.extraction.estimate.RoadEstimate`` describes the object one extraction
followed: its width, polarity, contrast, course and a confidence in [0, 1].
Pieces below :data:`LOW_CONFIDENCE` are flagged (drawn dashed, marked in the
features list); the ribbon is the estimated width drawn along a piece.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from core.extraction.estimate import RoadEstimate

__all__ = ["LOW_CONFIDENCE", "MAX_MITER", "confidence_value", "estimate_from_dict", "is_low", "ribbon_edges"]

#: Pieces whose confidence is below this are drawn dashed: the image hardly tells the road apart there.
LOW_CONFIDENCE = 0.5
#: A ribbon edge's corner lies at most this many half-widths from its vertex (sharp turns would spike).
MAX_MITER = 3.0
_ESTIMATE_FIELDS = tuple(f.name for f in dataclasses.fields(RoadEstimate))


def is_low(confidence: float | None) -> bool:
    """True for a known confidence below :data:`LOW_CONFIDENCE` (None: nothing known, not low)."""
    return confidence is not None and confidence < LOW_CONFIDENCE


def confidence_value(value) -> float | None:
    """``value`` as a confidence in [0, 1], or None when it is not one (absent, or a damaged file)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if 0.0 <= value <= 1.0 else None


def estimate_from_dict(data) -> RoadEstimate | None:
    """The RoadEstimate of its ``to_dict()``, or None for anything else (older sessions and files have none).

    Keys added by later versions are ignored, so a newer file still gives its estimate.
    """
    if not isinstance(data, dict) or not all(name in data for name in _ESTIMATE_FIELDS):
        return None
    width, contrast = data["width_px"], data["contrast"]
    confidence = confidence_value(data["confidence"])
    width_ok = width is None or (_real(width) and 0.0 <= width < math.inf)
    if confidence is None or not width_ok or not _real(contrast):
        return None
    return RoadEstimate(None if width is None else float(width), str(data["polarity"]), float(contrast),
                        str(data["course"]), confidence)


def ribbon_edges(vertices, width_px: float) -> tuple[np.ndarray, np.ndarray]:
    """The two edges of a ribbon ``width_px`` wide centred on a polyline.

    Parameters
    ----------
    vertices : (k, 2) array_like
        The polyline ``(x, y)`` in raster pixels.
    width_px : float
        Full width of the ribbon (px).

    Returns
    -------
    first, second : (n, 2) float64 ndarray
        The polyline offset by ``+width_px / 2`` and ``-width_px / 2`` along its
        normal ``(-dy, dx)`` (mitred corners, capped at :data:`MAX_MITER`);
        repeated vertices are dropped, and both are empty for a polyline of no
        length.

    Examples
    --------
    >>> first, second = ribbon_edges([(0, 0), (10, 0)], 4.0)
    >>> first.tolist(), second.tolist()
    ([[0.0, 2.0], [10.0, 2.0]], [[0.0, -2.0], [10.0, -2.0]])
    """
    points = np.asarray(vertices, dtype=np.float64).reshape(-1, 2)
    if len(points):
        keep = np.ones(len(points), dtype=bool)
        keep[1:] = np.any(points[1:] != points[:-1], axis=1)
        points = points[keep]
    if len(points) < 2:
        empty = np.empty((0, 2))
        return empty, empty.copy()
    segments = np.diff(points, axis=0)
    normals = np.stack([-segments[:, 1], segments[:, 0]], axis=1) / np.hypot(*segments.T)[:, None]
    # each vertex: the mean of its segments' normals, lengthened so that the edge keeps its distance
    ends = np.concatenate([normals[:1], normals, normals[-1:]])
    mean = ends[:-1] + ends[1:]
    norm = np.hypot(*mean.T)
    mean = np.where(norm[:, None] > 1e-12, mean / np.maximum(norm, 1e-12)[:, None], ends[1:])
    cos_half = np.sum(mean * ends[1:], axis=1)
    offsets = mean / np.maximum(cos_half, 1.0 / MAX_MITER)[:, None] * (0.5 * float(width_px))
    return points + offsets, points - offsets


def _real(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
