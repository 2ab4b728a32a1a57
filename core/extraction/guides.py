"""Guides: the candidate points of a polyline between two clicked endpoints.

Endpoints ``a``, ``b`` (``(x, y) = (col, row)``) span the axis
``u = (b - a) / L`` with left normal ``n = (-u_y, u_x)``.  There are
``m = nodes - 2`` guides ``h = L / (nodes - 1)`` apart; guide ``t`` crosses
the axis at ``a + t h u`` and carries ``points`` candidates at offsets in
``[-W, W]`` along ``n``.  The start and end are layers of one point at offset
0, or of ``points`` candidates across the axis with endpoint snapping, so
every link advances by ``h`` along the axis.  Given the raster's size, an
endpoint's candidates off the raster are left out (a click at its border
would otherwise snap beyond it); the inner guides' candidates off it are
flagged by :meth:`Guides.off_raster`, since all guides share one offset array.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import validation

__all__ = ["Guides", "build_guides", "clipped_to_raster", "guides_with_offsets", "offset_range_on_raster",
           "offsets_on_raster", "DEFAULT_SNAP_HALF_WIDTH_PX"]

#: Half-width (px) of the endpoint guides when snapping and none is given
#: (capped at the guide half-width): clicks are typically a few pixels off the
#: centre line (docs/notes/extraction-and-polyline.md, "Default settings").
DEFAULT_SNAP_HALF_WIDTH_PX = 8.0


@dataclass(frozen=True, eq=False)
class Guides:
    """Geometry of the candidate points (all lengths in pixels).

    Attributes
    ----------
    start_xy, end_xy : (2,) float64 ndarray
        The clicked endpoints ``a`` and ``b`` as ``(x, y)``.
    axis : (2,) float64 ndarray
        Unit vector ``u`` from ``a`` to ``b``.
    normal : (2,) float64 ndarray
        Left normal ``n = (-u_y, u_x)``; offsets are measured along it.
    spacing : float
        Distance ``h`` between consecutive layers along the axis.
    offsets : (d,) float64 ndarray
        Ascending offsets of the candidates of every inner guide.
    start_offsets, end_offsets : (n0,) and (n1,) float64 ndarray
        Offsets of the start and end candidates (``[0.0]`` for fixed endpoints).
    n_guides : int
        Number ``m`` of inner guides (``nodes - 2``).
    """

    start_xy: np.ndarray
    end_xy: np.ndarray
    axis: np.ndarray
    normal: np.ndarray
    spacing: float
    offsets: np.ndarray
    start_offsets: np.ndarray
    end_offsets: np.ndarray
    n_guides: int

    @property
    def snapped(self) -> bool:
        """True when the endpoints are guides of their own (endpoint snapping)."""
        return self.start_offsets.size > 1 or self.end_offsets.size > 1

    def layer_points(self) -> list[np.ndarray]:
        """``(x, y)`` of the candidates of every layer: ``m + 2`` float64 arrays of shape (n_k, 2).

        Point ``p`` of layer ``t`` is ``a + t h u + offsets[p] n``.
        """
        layers = [self._layer(0, self.start_offsets)]
        layers += [self._layer(t, self.offsets) for t in range(1, self.n_guides + 1)]
        layers.append(self._layer(self.n_guides + 1, self.end_offsets))
        return layers

    def vertices(self, start_index: int, indices, end_index: int) -> np.ndarray:
        """The (m + 2, 2) float64 ``(x, y)`` vertices through one chosen candidate per layer.

        ``indices`` (m,) picks the candidate on each guide, ``start_index`` and
        ``end_index`` those of the end layers.
        """
        indices = np.asarray(indices, dtype=np.int64)
        layer_offsets = np.concatenate(
            ([self.start_offsets[start_index]], self.offsets[indices], [self.end_offsets[end_index]])
        )
        steps = np.arange(self.n_guides + 2, dtype=np.float64) * self.spacing
        return self.start_xy + steps[:, None] * self.axis + layer_offsets[:, None] * self.normal

    def off_raster(self, size) -> np.ndarray:
        """(n_points,) bool: which candidates, layer after layer (:meth:`layer_points` concatenated), lie off
        ``[0, width] x [0, height]`` (``size``), beyond a rounding margin of 1e-9 px."""
        points = np.concatenate(self.layer_points())
        return ((points < -1e-9) | (points > np.asarray(size, np.float64) + 1e-9)).any(axis=1)

    def bounds_px(self, margin_px: float) -> tuple[int, int, int, int]:
        """The pixel window ``(col_off, row_off, width, height)`` covering every candidate plus ``margin_px``.

        It may overhang the raster.
        """
        points = np.concatenate(self.layer_points())
        lo = np.floor(points.min(axis=0) - margin_px).astype(np.int64)
        hi = np.ceil(points.max(axis=0) + margin_px).astype(np.int64)
        return int(lo[0]), int(lo[1]), int(hi[0] - lo[0]), int(hi[1] - lo[1])

    def _layer(self, t: int, offsets: np.ndarray) -> np.ndarray:
        centre = self.start_xy + (t * self.spacing) * self.axis
        return centre + offsets[:, None] * self.normal


def build_guides(
    start_xy,
    end_xy,
    nodes: int,
    points: int,
    half_width_px: float,
    snap_endpoints: bool = False,
    snap_half_width_px: float | None = None,
    size=None,
) -> Guides:
    """Lay out the guides between two endpoints.

    Parameters
    ----------
    start_xy, end_xy : (2,) array_like of float
        Endpoints ``a`` and ``b`` in pixel coordinates ``(x, y)``; distinct, finite.
    nodes : int
        Split points of ``[a, b]`` including both endpoints (>= 3): ``nodes - 2`` guides.
    points : int
        Candidates per guide (>= 2).
    half_width_px : float
        Guide half-width ``W`` (> 0): candidates span ``[-W, W]`` across the axis.
    snap_endpoints : bool
        Give the endpoints guides of their own (``points`` candidates each).
    snap_half_width_px : float, optional
        Half-width of the endpoint guides (> 0); default
        ``min(half_width_px, DEFAULT_SNAP_HALF_WIDTH_PX)``.
    size : (width, height), optional
        The raster's: endpoint candidates off ``[0, width] x [0, height]`` are left out.

    Returns
    -------
    Guides

    Raises
    ------
    ValueError, TypeError
        For endpoints that are not distinct finite 2-vectors, and for counts or
        widths out of range.

    Examples
    --------
    >>> from core.extraction.guides import build_guides
    >>> guides = build_guides((0, 0), (30, 0), nodes=4, points=3, half_width_px=2)
    >>> guides.n_guides, guides.spacing, guides.offsets.tolist()
    (2, 10.0, [-2.0, 0.0, 2.0])
    >>> guides.vertices(0, [2, 1], 0).tolist()
    [[0.0, 0.0], [10.0, 2.0], [20.0, 0.0], [30.0, 0.0]]
    """
    a = _endpoint(start_xy, "start_xy")
    b = _endpoint(end_xy, "end_xy")
    if np.array_equal(a, b):
        raise ValueError(f"start and end must differ; both are ({a[0]:g}, {a[1]:g})")
    nodes = validation.integer(nodes, "nodes", 3)
    points = validation.integer(points, "points", 2)
    half_width_px = validation.real(half_width_px, "half_width_px", 0.0, low_open=True, unit="pixels")
    offsets = np.linspace(-half_width_px, half_width_px, points)
    end_offsets = np.zeros(1)
    if snap_endpoints:
        if snap_half_width_px is None:
            snap_half_width_px = min(half_width_px, DEFAULT_SNAP_HALF_WIDTH_PX)
        snap_half_width_px = validation.real(snap_half_width_px, "snap_half_width_px", 0.0, low_open=True,
                                             unit="pixels")
        end_offsets = np.linspace(-snap_half_width_px, snap_half_width_px, points)
    return guides_with_offsets(a, b, nodes, offsets, end_offsets, size)


def guides_with_offsets(start_xy, end_xy, nodes: int, offsets, end_offsets, size=None) -> Guides:
    """Guides between two endpoints with given candidate offsets.

    Parameters
    ----------
    start_xy, end_xy : (2,) array_like of float
        Distinct, finite endpoints ``(x, y)``.
    nodes : int
        Split points of ``[a, b]`` including both endpoints (>= 3).
    offsets : (d,) array_like of float
        Ascending offsets (px) of every inner guide's candidates.
    end_offsets : (n,) array_like of float
        Ascending offsets (px) of the start's and the end's candidates (``[0]`` for fixed endpoints).
    size : (width, height), optional
        The raster's: each end keeps those of its candidates that lie on it (:func:`offsets_on_raster`).
    """
    a = _endpoint(start_xy, "start_xy")
    b = _endpoint(end_xy, "end_xy")
    nodes = validation.integer(nodes, "nodes", 3)
    length = float(np.hypot(*(b - a)))
    if length == 0.0:
        raise ValueError(f"start and end must differ; both are ({a[0]:g}, {a[1]:g})")
    axis = (b - a) / length
    normal = np.array([-axis[1], axis[0]])
    start_offsets = end_offsets = np.array(end_offsets, dtype=np.float64)
    if size is not None:
        start_offsets = offsets_on_raster(end_offsets, a, normal, size)
        end_offsets = offsets_on_raster(end_offsets, b, normal, size)
    arrays = dict(
        start_xy=a,
        end_xy=b,
        axis=axis,
        normal=normal,
        offsets=np.array(offsets, dtype=np.float64),
        start_offsets=start_offsets.copy(),
        end_offsets=end_offsets.copy(),
    )
    for array in arrays.values():
        array.flags.writeable = False  # a frozen dataclass should not hide mutable arrays
    return Guides(spacing=length / (nodes - 1), n_guides=nodes - 2, **arrays)


def offsets_on_raster(offsets, xy, normal, size) -> np.ndarray:
    """Those of ``offsets`` (ascending) whose points ``xy + offset normal`` lie within ``[0, width] x [0,
    height]`` (``size``); ``[0.0]``, the point itself, where none does (``xy`` is on the raster: a click)."""
    offsets = np.asarray(offsets, dtype=np.float64)
    lo, hi = offset_range_on_raster(xy, normal, size)
    kept = offsets[(offsets >= lo - 1e-9) & (offsets <= hi + 1e-9)]  # (a margin for rounding)
    return kept if kept.size else np.zeros(1)


def offset_range_on_raster(xy, normal, size) -> tuple[float, float]:
    """``(lo, hi)``: the offsets ``t`` for which ``xy + t normal`` lies within ``[0, width] x [0, height]``
    (``size``); ``xy`` on the raster gives ``lo <= 0 <= hi``."""
    lo, hi = -np.inf, np.inf
    for k in range(2):
        if normal[k] != 0.0:
            first, second = (0.0 - xy[k]) / normal[k], (size[k] - xy[k]) / normal[k]
            lo, hi = max(lo, min(first, second)), min(hi, max(first, second))
    return lo, hi


def clipped_to_raster(points, size) -> np.ndarray:
    """``points`` (n, 2) ``(x, y)`` moved onto ``[0, width] x [0, height]`` (``size``): a copy, float64."""
    return np.clip(np.asarray(points, np.float64), 0.0, np.asarray(size, np.float64))


def _endpoint(value, name: str) -> np.ndarray:
    try:
        xy = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a pair of numbers (x, y); got {value!r}") from None
    if xy.shape != (2,):
        raise ValueError(f"{name} must be a pair of numbers (x, y); got shape {xy.shape}")
    if not np.all(np.isfinite(xy)):
        raise ValueError(f"{name} must be finite; got ({xy[0]}, {xy[1]})")
    return xy
