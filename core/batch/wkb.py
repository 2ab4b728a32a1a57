"""Well-known binary of line geometries: what pyogrio reads and writes, without a geometry library.

Only LineString and MultiLineString are decoded (Z and M values are dropped);
any other type comes back as its name, so that callers can say what they found.
"""

from __future__ import annotations

import struct

import numpy as np

__all__ = ["decode_lines", "encode_lines"]

_LINESTRING, _MULTILINESTRING = 2, 5
_TYPE_NAMES = {1: "Point", 2: "LineString", 3: "Polygon", 4: "MultiPoint", 5: "MultiLineString",
               6: "MultiPolygon", 7: "GeometryCollection"}


def decode_lines(wkb: bytes | None) -> list[np.ndarray] | str | None:
    """The parts of a (Multi)LineString as (k, 2) float64 arrays; a type name for other geometries.

    Parameters
    ----------
    wkb : bytes or None
        ISO or extended (PostGIS) well-known binary; None for a feature without geometry.

    Returns
    -------
    list of (k, 2) float64 ndarray, str or None
        The parts (x, y), the geometry's type name when it is not a line, or None.
    """
    if wkb is None:
        return None
    kind, dims, offset, order = _header(wkb, 0)
    if kind == _LINESTRING:
        return [_points(wkb, offset, dims, order)[0]]
    if kind == _MULTILINESTRING:
        (count,) = struct.unpack_from(order + "I", wkb, offset)
        offset += 4
        parts = []
        for _ in range(count):
            part_kind, part_dims, offset, part_order = _header(wkb, offset)
            if part_kind != _LINESTRING:
                return _TYPE_NAMES.get(part_kind, f"geometry type {part_kind}")
            part, offset = _points(wkb, offset, part_dims, part_order)
            parts.append(part)
        return parts
    return _TYPE_NAMES.get(kind, f"geometry type {kind}")


def encode_lines(parts) -> bytes:
    """ISO WKB of a LineString (one part) or a MultiLineString (several parts), 2-D, little-endian."""
    parts = [np.ascontiguousarray(part, dtype="<f8").reshape(-1, 2) for part in parts]
    if len(parts) == 1:
        return _linestring(parts[0])
    return struct.pack("<BII", 1, _MULTILINESTRING, len(parts)) + b"".join(_linestring(p) for p in parts)


def _linestring(points: np.ndarray) -> bytes:
    return struct.pack("<BII", 1, _LINESTRING, len(points)) + points.tobytes()


def _header(wkb: bytes, offset: int):
    """(base type, coordinates per point, offset after the header, struct byte order)."""
    order = "<" if wkb[offset] == 1 else ">"
    (code,) = struct.unpack_from(order + "I", wkb, offset + 1)
    offset += 5
    has_z, has_m = bool(code & 0x80000000), bool(code & 0x40000000)
    if code & 0x20000000:  # extended WKB: an SRID follows
        offset += 4
    code &= 0x0FFFFFFF
    iso_dims, kind = divmod(code, 1000)
    has_z, has_m = has_z or iso_dims in (1, 3), has_m or iso_dims in (2, 3)
    return kind, 2 + has_z + has_m, offset, order


def _points(wkb: bytes, offset: int, dims: int, order: str):
    (count,) = struct.unpack_from(order + "I", wkb, offset)
    offset += 4
    values = np.frombuffer(wkb, dtype=order + "f8", count=count * dims, offset=offset).reshape(count, dims)
    return np.array(values[:, :2], dtype=np.float64), offset + count * dims * 8
