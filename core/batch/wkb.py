"""Well-known binary of line geometries, what pyogrio reads and writes, through shapely.

Only LineString and MultiLineString are decoded (Z and M values are dropped);
any other type comes back as its name, so that callers can say what they found.
"""

from __future__ import annotations

import numpy as np
import shapely

__all__ = ["decode_lines", "encode_lines"]


def decode_lines(wkb: bytes | None) -> list[np.ndarray] | str | None:
    """The parts of a (Multi)LineString as (k, 2) float64 arrays; a type name for other geometries.

    Parameters
    ----------
    wkb : bytes or None
        ISO or extended (PostGIS) well-known binary; None for a feature without geometry.

    Returns
    -------
    list of (k, 2) float64 ndarray, str or None
        The parts (x, y), k >= 2, the geometry's type name when it is not a line (``empty LineString``, ...,
        for one without parts, ``invalid geometry`` for one GEOS cannot read), or None.
    """
    if wkb is None:
        return None
    try:
        geometry = shapely.from_wkb(wkb)
    except shapely.errors.GEOSException:  # e.g. a LineString of one position, which GEOS refuses
        return "invalid geometry"
    if geometry.geom_type not in ("LineString", "MultiLineString"):
        return geometry.geom_type
    parts = [np.array(shapely.get_coordinates(part), dtype=np.float64) for part in shapely.get_parts(geometry)]
    parts = [part for part in parts if len(part) >= 2]  # empty parts are no lines
    return parts if parts else f"empty {geometry.geom_type}"


def encode_lines(parts) -> bytes:
    """WKB of a LineString (one part) or a MultiLineString (several parts), 2-D, little-endian."""
    lines = [shapely.linestrings(np.asarray(part, dtype=np.float64).reshape(-1, 2)) for part in parts]
    geometry = lines[0] if len(lines) == 1 else shapely.multilinestrings(lines)
    return shapely.to_wkb(geometry, output_dimension=2, byte_order=1)
