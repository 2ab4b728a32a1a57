"""Snapping of clicks to the finished lines: their ends, vertices and segments (no Qt).

A click within the tolerance of a line's vertex lands exactly on that vertex
(an end is a vertex too, reported as ``"end"``); failing that, within the
tolerance of a segment, on the segment's nearest point.  Vertices win over
segments even when a segment passes nearer, as in QGIS: a junction is meant
to meet the other road's vertex, and a vertex a few pixels off is what the
user aimed at.  Candidates come from :class:`app.model.feature_index.FeatureIndex`,
so a query costs what lies near the cursor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ReferenceTargets", "SnapTarget", "find_snap", "find_reference_snap", "nearest_vertex",
           "nearest_on_segments", "handle_at", "touching_lines", "DEFAULT_SNAP_TOLERANCE_PX"]

#: Default snapping tolerance, in screen pixels (the window converts it to raster pixels at the zoom).
DEFAULT_SNAP_TOLERANCE_PX = 10.0


@dataclass(frozen=True)
class SnapTarget:
    """Where a click snaps to.

    Attributes
    ----------
    xy : tuple of float
        The snapped position (x, y) in raster pixels.
    kind : {"end", "vertex", "segment", "reference vertex", "reference segment"}
    feature_id : int
        -1 for a reference layer's line.
    index : int
        The vertex's index (``"end"``, ``"vertex"``) or the segment's first vertex (``"segment"``)
        in the feature's vertices.
    distance_px : float
        From the cursor to ``xy``, in raster pixels.
    """

    xy: tuple[float, float]
    kind: str
    feature_id: int
    index: int
    distance_px: float


def nearest_vertex(vertices: np.ndarray, x: float, y: float) -> tuple[int, float]:
    """Index of the vertex of ``vertices`` (k, 2) px nearest to (x, y), and its distance in px."""
    distances = np.hypot(vertices[:, 0] - x, vertices[:, 1] - y)
    index = int(np.argmin(distances))
    return index, float(distances[index])


def nearest_on_segments(vertices: np.ndarray, x: float, y: float) -> tuple[int, tuple[float, float], float]:
    """The segment of a (k >= 2, 2) polyline nearest to (x, y): its first vertex, the nearest point, the distance."""
    a, d = vertices[:-1], vertices[1:] - vertices[:-1]
    length2 = np.einsum("ij,ij->i", d, d)
    t = np.einsum("ij,ij->i", np.array([x, y]) - a, d) / np.where(length2 > 0, length2, 1.0)
    closest = a + np.clip(t, 0.0, 1.0)[:, None] * d
    distances = np.hypot(closest[:, 0] - x, closest[:, 1] - y)
    index = int(np.argmin(distances))
    return index, (float(closest[index, 0]), float(closest[index, 1])), float(distances[index])


def find_snap(index, xy, tolerance_px: float, exclude=(), segments: bool = True) -> SnapTarget | None:
    """The vertex (else the segment point) of an indexed line within ``tolerance_px`` of ``xy``, or None.

    Parameters
    ----------
    index : app.model.feature_index.FeatureIndex
        In step with the tool (the caller syncs it).
    xy : (float, float)
        The cursor (x, y) in raster pixels.
    tolerance_px : float
        Largest snapping distance in raster pixels; 0 or less: no snapping.
    exclude : collection of int
        Ids of features not to snap to (the line whose vertex is being dragged).
    segments : bool
        Snap to segments too, not only to vertices.
    """
    if tolerance_px <= 0:
        return None
    x, y = float(xy[0]), float(xy[1])
    near = [i for i in index.query((x - tolerance_px, y - tolerance_px, x + tolerance_px, y + tolerance_px))
            if i not in exclude]
    best_vertex = best_segment = None
    for feature_id in reversed(near):  # the topmost of equals
        vertices = index.entry(feature_id)[1]
        k, d = nearest_vertex(vertices, x, y)
        if d <= tolerance_px and (best_vertex is None or d < best_vertex.distance_px):
            kind = "end" if k in (0, len(vertices) - 1) else "vertex"
            best_vertex = SnapTarget((float(vertices[k, 0]), float(vertices[k, 1])), kind, feature_id, k, d)
        if segments and best_vertex is None and len(vertices) >= 2:
            s, point, d = nearest_on_segments(vertices, x, y)
            if d <= tolerance_px and (best_segment is None or d < best_segment.distance_px):
                best_segment = SnapTarget(point, "segment", feature_id, s, d)
    return best_vertex or best_segment


class ReferenceTargets:
    """The visible reference layers' vertices (n, 2) and segments (m, 2, 2) px, with a tree of each (GEOS
    STRtree, built on the first query), so that a hover tests what lies near the cursor, not every vertex of
    every layer (a scan of a million vertices took 60 ms per mouse move)."""

    def __init__(self, vertices_px: np.ndarray, segments_px: np.ndarray):
        self.vertices_px, self.segments_px = vertices_px, segments_px
        self._trees = None

    def near(self, x: float, y: float, reach: float) -> tuple[np.ndarray, np.ndarray]:
        """Indices of the vertices and of the segments whose boxes lie within ``reach`` of (x, y)."""
        import shapely

        if self._trees is None:
            self._trees = (shapely.STRtree(shapely.points(self.vertices_px)) if len(self.vertices_px) else None,
                           shapely.STRtree(shapely.linestrings(self.segments_px)) if len(self.segments_px) else None)
        box = shapely.box(x - reach, y - reach, x + reach, y + reach)
        return tuple(np.sort(tree.query(box)) if tree is not None else np.empty(0, np.int64) for tree in self._trees)


def find_reference_snap(vertices_px: np.ndarray, segments_px: np.ndarray, xy, tolerance_px: float,
                        targets: ReferenceTargets | None = None) -> SnapTarget | None:
    """The reference layers' vertex (else segment point) within ``tolerance_px`` of ``xy``, or None.

    ``vertices_px`` (n, 2) and ``segments_px`` (m, 2, 2) are those of the visible
    reference layers (:class:`app.model.reference.ReferenceLayers`); vertices win, as in :func:`find_snap`.
    With ``targets`` (the same, in trees) only those near ``xy`` are tested.
    """
    if tolerance_px <= 0:
        return None
    x, y = float(xy[0]), float(xy[1])
    vertex_ids, segment_ids = (targets.near(x, y, tolerance_px) if targets is not None else
                               (np.arange(len(vertices_px)), np.arange(len(segments_px))))
    if len(vertex_ids):
        k, d = nearest_vertex(vertices_px[vertex_ids], x, y)
        if d <= tolerance_px:
            k = int(vertex_ids[k])
            return SnapTarget((float(vertices_px[k, 0]), float(vertices_px[k, 1])), "reference vertex", -1, k, d)
    if len(segment_ids):
        segments = segments_px[segment_ids]
        a, d = segments[:, 0], segments[:, 1] - segments[:, 0]
        length2 = np.einsum("ij,ij->i", d, d)
        t = np.einsum("ij,ij->i", np.array([x, y]) - a, d) / np.where(length2 > 0, length2, 1.0)
        closest = a + np.clip(t, 0.0, 1.0)[:, None] * d
        distances = np.hypot(closest[:, 0] - x, closest[:, 1] - y)
        s = int(np.argmin(distances))
        if distances[s] <= tolerance_px:
            point = (float(closest[s, 0]), float(closest[s, 1]))
            return SnapTarget(point, "reference segment", -1, int(segment_ids[s]), float(distances[s]))
    return None


def handle_at(vertices: np.ndarray, xy, tolerance_px: float) -> tuple[str, int] | None:
    """The editing handle of a (k, 2) px line under ``xy``: ``("vertex", i)``, ``("midpoint", segment)`` or None.

    Vertices win over the midpoints of segments (new vertices are dragged out of those).
    """
    x, y = float(xy[0]), float(xy[1])
    index, distance = nearest_vertex(vertices, x, y)
    if distance <= tolerance_px:
        return ("vertex", index)
    if len(vertices) >= 2:
        index, distance = nearest_vertex((vertices[:-1] + vertices[1:]) / 2, x, y)
        if distance <= tolerance_px:
            return ("midpoint", index)
    return None


def touching_lines(index, feature_id: int, meet_px: float) -> list[int]:
    """Ids of the other indexed lines with an end within ``meet_px`` of an end of line ``feature_id``."""
    vertices = index.entry(feature_id)[1]
    found = []
    for x, y in (vertices[0], vertices[-1]):
        for other in index.query((x - meet_px, y - meet_px, x + meet_px, y + meet_px)):
            ends = index.entry(other)[1][[0, -1]]
            near = np.all(np.abs(ends - (x, y)) <= meet_px, axis=1).any()
            if other != feature_id and other not in found and near:
                found.append(other)
    return found
