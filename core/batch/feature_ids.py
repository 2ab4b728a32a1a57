"""Feature ids: a GeoPackage's fids and GeoJSON's ``id`` members, read with a layer and written back.

GIS users join tables on these ids, so a layer read and written again keeps
them where the output holds feature ids (GeoPackage fids for distinct
integers, GeoJSON ``id`` members), and as a field :data:`FID_FIELD` where it
does not (Shapefile and FlatGeobuf number their features themselves).
Shapefiles and FlatGeobuf files have no ids of their own (their feature
numbers are positions); a GeoJSON file without ``id`` members has none.
A layer's ids are written of one type, in every format and by ``refine`` and
File > Export alike: integers where every id is one, else all as text
(:func:`filled_ids`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.io.jsonfile import without_coordinates
from core.io.line_report import FID

__all__ = ["FID_FIELD", "filled_ids", "id_column", "read_feature_ids"]

#: The field (and GUI property) that holds a feature's id where the format has no feature ids of its own.
FID_FIELD = FID
#: Formats whose feature ids are kept, by extension (GDAL gives the others' positions as their ids).
_FID_SUFFIXES = (".gpkg", ".sqlite")
_GEOJSON_SUFFIXES = (".geojson", ".json")
_INT64 = (-2**63, 2**63 - 1)


def read_feature_ids(path: str, fids, fields: dict) -> tuple[list | None, dict]:
    """The ids of a layer's features (None: it has none), and its ``fields`` without GDAL's copy of them.

    ``fids`` are the ids GDAL read (pyogrio's ``return_fids``).  GDAL turns a
    GeoJSON file's string ids into a field ``id`` and its missing ones into
    positions, so a GeoJSON file's ids are read from the file itself.
    """
    suffix = Path(path).suffix.lower()
    if suffix in _FID_SUFFIXES and fids is not None:
        return [int(v) for v in fids], fields
    if suffix not in _GEOJSON_SUFFIXES or path.startswith("/vsi"):
        return None, fields
    ids, id_property = _geojson_ids(path)
    if ids is None or len(ids) != (len(fids) if fids is not None else -1):
        return None, fields
    if not id_property and "id" in fields:  # GDAL's field of the string ids, not a property of the file
        fields = {name: values for name, values in fields.items() if name != "id"}
    return ids, fields


def _geojson_ids(path: str) -> tuple[list | None, bool]:
    """Per feature its ``id`` member (int, str or None; None for all: no feature has one), and whether a
    feature's properties hold an ``id`` too."""
    import json

    try:
        data = Path(path).read_bytes()
        if b'"id"' not in data:  # most files: no need to parse them twice
            return None, False
        document = json.loads(without_coordinates(data).decode("utf-8"))  # (the ids: no need for the positions)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None, False
    if isinstance(document, dict) and document.get("type") == "Feature":
        document = {"features": [document]}
    features = document.get("features") if isinstance(document, dict) else None
    if not isinstance(features, list):
        return None, False
    ids = [_plain_id(f.get("id")) if isinstance(f, dict) else None for f in features]
    id_property = any(isinstance(f, dict) and isinstance(f.get("properties"), dict) and "id" in f["properties"]
                      for f in features)
    return (ids if any(v is not None for v in ids) else None), id_property


def _plain_id(value):
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    return value


def filled_ids(ids) -> list:
    """``ids`` of one type, each None given the next integer from 1 that no other feature has.

    One type per layer, as every output holds them: integers where every id is
    an integer of 64 bits, else text ("11" beside "r-2"; GDAL writes a GeoJSON
    file's ids of one type, a GeoPackage's text ids go to a text field).
    """
    ids = [_plain_id(v) for v in ids]
    text = not _all_integers(ids)
    taken = {str(v) for v in ids if v is not None}
    filled, number = [], 0
    for value in ids:
        if value is None:
            number += 1
            while str(number) in taken:
                number += 1
            value = number
        filled.append(str(value) if text else value)
    return filled


def _all_integers(ids) -> bool:
    """Whether every id present is an integer of 64 bits (what an integer field or a GeoPackage's fid holds)."""
    return all(isinstance(v, int) and _INT64[0] <= v <= _INT64[1] for v in ids if v is not None)


def id_column(ids, driver: str, names) -> tuple[str, np.ndarray, np.ndarray | None, dict, bool] | None:
    """How the feature ids are written: ``(column name, values, null mask or None, layer options, whether the
    column is the GeoPackage's fids rather than a field)``; None: none.

    GeoJSON: the ``id`` members (missing ones filled, :func:`filled_ids`).  GeoPackage: distinct integers as
    its fids (a missing one gets the next free fid), others as field :data:`FID_FIELD` (which the GeoPackage
    names are then chosen around).  Shapefile, FlatGeobuf: field :data:`FID_FIELD`, or ``fid_2``, ... when
    ``names`` (the other fields) hold it, ignoring case.
    """
    if ids is None or all(v is None for v in ids):
        return None
    taken = {str(name).lower() for name in names}
    if driver == "GeoJSON":
        name = next(n for n in ["id", FID_FIELD] + [f"{FID_FIELD}_{k}" for k in range(2, len(taken) + 3)]
                    if n not in taken)
        values, mask = _values(filled_ids(ids))
        return name, values, mask, {"ID_FIELD": name}, False
    values, mask = _values(ids)
    if driver == "GPKG" and values.dtype.kind == "i" and _distinct(values, mask):
        return FID_FIELD, values, mask, {}, True
    name = next(n for n in [FID_FIELD] + [f"{FID_FIELD}_{k}" for k in range(2, len(taken) + 3)] if n not in taken)
    return name, values, mask, {}, False


def _values(ids) -> tuple[np.ndarray, np.ndarray | None]:
    """Integers (with a null mask where missing) when all ids are integers of 64 bits, else text (None: null),
    as :func:`filled_ids` has them."""
    if _all_integers(ids):
        mask = np.array([v is None for v in ids])
        return np.array([0 if v is None else v for v in ids], np.int64), (mask if mask.any() else None)
    return np.array([None if v is None else str(v) for v in ids], dtype=object), None


def _distinct(values: np.ndarray, mask) -> bool:
    present = values if mask is None else values[~mask]
    return len(np.unique(present)) == len(present)
