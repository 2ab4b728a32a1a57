"""How far a refined line moved: distances between polylines, in pixels and metres."""

from __future__ import annotations

import numpy as np

__all__ = ["displacement_px", "metres_per_px", "resample"]

_WGS84_A_M = 6378137.0
_WGS84_E2 = 6.69437999014e-3


def resample(vertices, step_px: float = 1.0) -> np.ndarray:
    """(n, 2) points every ``step_px`` (at most) along a polyline, its vertices included."""
    vertices = np.asarray(vertices, np.float64)
    points = [vertices[:1]]
    for a, b in zip(vertices[:-1], vertices[1:]):
        count = max(1, int(np.ceil(np.hypot(*(b - a)) / step_px)))
        points.append(a + np.arange(1, count + 1)[:, None] / count * (b - a))
    return np.concatenate(points)


#: Points x segments past which a tree of the segments measures faster than every point against every segment.
TREE_PAIRS = 1_000_000


def _distance_to_polyline(points: np.ndarray, vertices: np.ndarray) -> np.ndarray:
    """(n,) distance of each point to the polyline (a single vertex: to that point).

    A long line (past :data:`TREE_PAIRS` point-segment pairs) measures each
    point against its nearest segment found in a tree of the segments (GEOS):
    n log m instead of n m, which took 11 s for a 100,000 px line; a short one
    every point against every segment (numpy: cheaper than building a tree).
    """
    points = np.asarray(points, np.float64).reshape(-1, 2)
    if len(vertices) == 1:
        return np.hypot(*(points - vertices[0]).T)
    if not len(points):
        return np.empty(0)
    if len(points) * (len(vertices) - 1) > TREE_PAIRS:
        import shapely

        tree = shapely.STRtree(shapely.linestrings(np.stack([vertices[:-1], vertices[1:]], axis=1)))
        (found, _), distances = tree.query_nearest(shapely.points(points), return_distance=True, all_matches=False)
        best = np.full(len(points), np.inf)
        best[found] = distances
        return best
    a, b = vertices[:-1], vertices[1:]
    ab = b - a
    denom = np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-300)
    best = np.full(len(points), np.inf)
    for start in range(0, len(points), 4096):  # bounded memory for long lines
        p = points[start:start + 4096, None, :]
        t = np.clip(np.einsum("pij,ij->pi", p - a, ab) / denom, 0.0, 1.0)
        d = np.hypot(*np.moveaxis(a + t[..., None] * ab - p, -1, 0))
        best[start:start + 4096] = d.min(axis=1)
    return best


def displacement_px(before_parts, after_parts) -> tuple[float, float]:
    """(mean, max) distance in px between two versions of a line.

    The mean is over points every pixel of the refined line (their distance to
    the input line); the max is the larger of the two one-sided maxima (the
    Hausdorff distance).
    """
    before = [np.asarray(p, np.float64) for p in before_parts]
    after = [np.asarray(p, np.float64) for p in after_parts]
    after_points = np.concatenate([resample(p) for p in after])
    before_points = np.concatenate([resample(p) for p in before])
    to_before = np.min([_distance_to_polyline(after_points, p) for p in before], axis=0)
    to_after = np.min([_distance_to_polyline(before_points, p) for p in after], axis=0)
    return float(to_before.mean()), float(max(to_before.max(), to_after.max()))


def metres_per_px(source, xy_px) -> float | None:
    """Ground size (m) of one pixel of ``source`` (core.batch.sources.RasterSource) at ``xy_px``.

    The mean of a pixel's two sides, measured on the WGS84 ellipsoid (local
    radii of curvature); None for a raster without a CRS.
    """
    if source.crs is None:
        return None
    from core.batch.frames import transform_xy

    corners = np.array([xy_px, (xy_px[0] + 1, xy_px[1]), (xy_px[0], xy_px[1] + 1)], np.float64)
    try:
        lonlat = transform_xy(source.pixel_to_map(corners), source.crs, "EPSG:4326")
    except ValueError:
        return None
    lat = np.radians(lonlat[0, 1])
    w = np.sqrt(1 - _WGS84_E2 * np.sin(lat) ** 2)
    meridian, prime = _WGS84_A_M * (1 - _WGS84_E2) / w ** 3, _WGS84_A_M / w
    d = np.radians(lonlat[1:] - lonlat[0])
    sides = np.hypot(d[:, 1] * meridian, d[:, 0] * prime * np.cos(lat))
    value = float(sides.mean())
    return value if np.isfinite(value) else None
