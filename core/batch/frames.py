"""Coordinates between CRSs (rasterio.warp), with one clear error for a CRS PROJ does not know."""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["crs_label", "is_pixel_crs", "parse_crs", "same_crs", "transform_wkb", "transform_xy"]


@functools.lru_cache(maxsize=64)
def parse_crs(text: str):
    """A rasterio CRS from ``EPSG:4326``, WKT, a PROJ string, ...; ValueError naming it when unknown."""
    import rasterio
    from rasterio.crs import CRS
    from rasterio.errors import CRSError

    try:
        with rasterio.Env():  # GDAL's complaint goes to logging, not to stderr
            return CRS.from_user_input(text)
    except CRSError:
        raise ValueError(f"unknown CRS {text!r} (give e.g. EPSG:4326, a WKT or a PROJ string)") from None


def is_pixel_crs(crs: str | None) -> bool:
    """Whether ``crs`` is the local pixel CRS of LineSnap's exports of plain images (its coordinates are pixels)."""
    from core.io.geojson import PIXEL_CRS_WKT

    return crs is not None and same_crs(crs, PIXEL_CRS_WKT)


def same_crs(a: str | None, b: str | None) -> bool:
    """Whether two CRSs (None: none) are the same."""
    if a is None or b is None:
        return a is None and b is None
    return a == b or parse_crs(a) == parse_crs(b)


def transform_xy(xy, src_crs: str | None, dst_crs: str | None) -> np.ndarray:
    """(n, 2) float64 positions moved from ``src_crs`` to ``dst_crs``.

    Both None: unchanged (plain pixel or map coordinates).  ValueError when only
    one has a CRS, or when PROJ cannot convert (non-finite results).
    """
    xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
    if same_crs(src_crs, dst_crs) or xy.size == 0:
        return xy.copy()
    if src_crs is None or dst_crs is None:
        raise ValueError("cannot relate coordinates with a CRS to coordinates without one "
                         f"({'the lines have' if src_crs is None else 'the image has'} none)")
    from rasterio.warp import transform

    try:
        xs, ys = transform(parse_crs(src_crs), parse_crs(dst_crs), xy[:, 0], xy[:, 1])
    except Exception as err:  # PROJ's refusals come as rasterio's CPLE errors, none of them a ValueError
        raise ValueError(f"cannot convert positions from {crs_label(src_crs)} to {crs_label(dst_crs)}: "
                         f"{str(err).splitlines()[0][:200]} (a position outside the CRS's area?)") from None
    out = np.column_stack([np.asarray(xs, np.float64), np.asarray(ys, np.float64)])
    if not np.isfinite(out).all():
        bad = int(np.flatnonzero(~np.isfinite(out).all(axis=1))[0])
        raise ValueError(f"cannot convert position {tuple(float(v) for v in xy[bad])} from {crs_label(src_crs)} "
                         f"to {crs_label(dst_crs)} (outside the CRS's area?)")
    return out


def crs_label(crs: str) -> str:
    """A short name of a CRS for messages (its authority code where it has one)."""
    try:
        parsed = parse_crs(crs)
    except ValueError:
        return "an unknown CRS"
    authority = parsed.to_authority()
    return ":".join(authority) if authority else "a custom CRS"


def transform_wkb(geometries, src_crs: str | None, dst_crs: str | None) -> list:
    """WKB geometries (any type; None kept) moved from ``src_crs`` to ``dst_crs``, heights kept, in one
    transformation of all their positions.

    A geometry GEOS cannot read (a LineString of one position) comes back as None: it has no place in
    ``dst_crs``.  Raises ValueError as :func:`transform_xy` does.
    """
    geometries = list(geometries)
    if same_crs(src_crs, dst_crs):
        return geometries
    import shapely

    shapes = shapely.from_wkb(geometries, on_invalid="ignore")  # (None in, None out)
    present = [k for k, shape in enumerate(shapes) if shape is not None]
    shapes = shapes[present]
    out = [None] * len(geometries)
    has_z = shapely.has_z(shapes)
    for with_z in (False, True):
        chosen = np.flatnonzero(has_z == with_z)
        if not chosen.size:
            continue
        group = shapes[chosen]
        coords = shapely.get_coordinates(group, include_z=with_z)
        coords[:, :2] = transform_xy(coords[:, :2], src_crs, dst_crs)
        moved = shapely.to_wkb(shapely.set_coordinates(group.copy(), coords), output_dimension=3 if with_z else 2)
        for k, wkb in zip(chosen.tolist(), moved):
            out[present[k]] = wkb
    return out
