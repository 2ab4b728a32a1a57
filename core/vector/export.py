"""Export of digitized lines: GeoJSON (RFC 7946), GeoPackage, Shapefile and FlatGeobuf.

Attributes are flat fields (text, integer, real); LineSnap's extraction details
(settings, pieces, estimates, timings) go as JSON text into one optional field,
:data:`DETAILS_FIELD`.  Coordinates:

- a georeferenced image: GeoJSON in WGS84 longitude, latitude (7 decimals,
  about 1 cm); the other formats in the image's own CRS;
- an image whose CRS PROJ cannot relate to WGS84: its own CRS (not GeoJSON);
- a plain image: pixel ``(x, y)`` with :data:`core.io.geojson.PIXEL_CRS_WKT`,
  a local CRS that GDAL reads as such, never as EPSG:4326 (in GeoJSON as a
  ``crs`` member, which RFC 7946 leaves to prior arrangement).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.batch.layers import DRIVERS, FieldChanges
from core.io.antimeridian import cut_at_antimeridian
from core.io.geojson import PIXEL_CRS_WKT, GeoJSONError, atomic_write_text

__all__ = ["COORDINATE_DECIMALS", "DETAILS_FIELD", "EXPORT_FORMATS", "ExportLine", "export_format", "write_lines"]

#: Output formats by file extension (GDAL driver names).
EXPORT_FORMATS = DRIVERS  # one table of extensions for exports and ``linesnap refine`` outputs
#: The field of LineSnap's extraction details (JSON text); Shapefile leaves it out (254 characters at most).
DETAILS_FIELD = "linesnap"
#: Decimals of GeoJSON longitudes and latitudes (1e-7 degree is about 1 cm).
COORDINATE_DECIMALS = 7


@dataclass(eq=False)
class ExportLine:
    """One line to export.

    Attributes
    ----------
    vertices_px : (k, 2) float64 ndarray
        Pixel ``(x, y)``, k >= 2.
    attributes : dict
        Flat values: str, int, float, bool or None (a field each).
    details : dict or None
        JSON-able extraction details, written as text into :data:`DETAILS_FIELD`.
    """

    vertices_px: np.ndarray
    attributes: dict = field(default_factory=dict)
    details: dict | None = None

    def __post_init__(self):
        vertices = np.asarray(self.vertices_px, dtype=np.float64)
        if vertices.ndim != 2 or vertices.shape[1] != 2 or len(vertices) < 2 or not np.isfinite(vertices).all():
            raise ValueError(f"vertices_px must be finite with shape (k, 2), k >= 2; got shape {vertices.shape}")
        self.vertices_px = vertices
        for key, value in self.attributes.items():
            if not (value is None or isinstance(value, (str, int, float, bool, np.generic))):
                raise TypeError(f"attribute {key!r} must be text, a number or None; got {type(value).__name__}")


def export_format(path) -> str:
    """The GDAL driver for ``path``'s extension; ValueError naming the extensions known."""
    suffix = Path(path).suffix.lower()
    if suffix not in EXPORT_FORMATS:
        raise ValueError(f"cannot export to {Path(path).name}: unknown extension {suffix or '(none)'!r}; "
                         f"use {', '.join(EXPORT_FORMATS)}")
    return EXPORT_FORMATS[suffix]


def write_lines(path, lines, raster=None, details: bool = True, field_types: dict | None = None) -> FieldChanges:
    """Write ``lines`` (ExportLine) to ``path`` atomically, in the format of its extension.

    ``raster`` (core.io.raster.Raster or None) places the pixel vertices;
    ``details`` False leaves :data:`DETAILS_FIELD` out (a Shapefile always
    does); ``field_types`` (name -> ``"text"``, ``"integer"`` or ``"real"``)
    fixes the column type of those attributes whatever their values (nulls
    included); the others are inferred from their values.  A GeoPackage keeps
    its other layers (the layer named like the file is replaced).

    Returns
    -------
    core.batch.layers.FieldChanges
        What the format changed: ``{name: name written}`` for the renamed fields
        (a Shapefile's or GeoPackage's names), text cut to fit a Shapefile;
        ``.describe()`` says it in one line ("" when nothing changed), ``.driver``
        is the GDAL driver written.

    Raises
    ------
    ValueError
        An unknown extension.
    core.io.geojson.GeoJSONError
        GeoJSON of an image whose CRS is not related to WGS84.
    OSError
        Naming ``path``: it cannot be written.
    """
    driver = export_format(path)
    lines = list(lines)
    if driver == "GeoJSON":
        atomic_write_text(path, geojson_text(lines, raster, details))
        return FieldChanges(driver=driver)
    from core.batch.layers import write_line_layer

    positions, crs = _layer_positions(lines, raster)
    records = [_record(line, details and driver != "ESRI Shapefile") for line in lines]
    return write_line_layer(path, [[p] for p in positions], _columns(records, field_types or {}), crs)


def geojson_text(lines, raster=None, details: bool = True) -> str:
    """An RFC 7946 FeatureCollection of ``lines`` as text (ids from 1, flat properties)."""
    lonlat = raster is not None and raster.georeferenced
    if raster is not None and raster.crs is not None and not lonlat:
        raise GeoJSONError("GeoJSON holds WGS84 longitudes and latitudes only, and this image's CRS has no known "
                           "relation to WGS84: export to GeoPackage, FlatGeobuf or Shapefile (in the image's CRS)")
    collection = {"type": "FeatureCollection"}
    if not lonlat:
        collection["crs"] = {"type": "name", "properties": {"name": PIXEL_CRS_WKT}}
    features = []
    for fid, line in enumerate(lines, start=1):
        xy = np.column_stack(raster.pixel_to_lonlat(*line.vertices_px.T)) if lonlat else line.vertices_px
        if not np.isfinite(xy).all():
            raise GeoJSONError(f"line {fid} has vertices with no valid longitude, latitude")
        parts = [np.round(p, COORDINATE_DECIMALS).tolist() for p in (cut_at_antimeridian(xy) if lonlat else [xy])]
        geometry = ({"type": "LineString", "coordinates": parts[0]} if len(parts) == 1 else
                    {"type": "MultiLineString", "coordinates": parts})  # cut at 180 degrees (RFC 7946, 3.1.9)
        features.append({"type": "Feature", "id": fid, "properties": _record(line, details), "geometry": geometry})
    collection["features"] = features
    return json.dumps(collection, allow_nan=False, ensure_ascii=False) + "\n"


def _layer_positions(lines, raster) -> tuple[list, str]:
    """Per line its (k, 2) positions, and the CRS they are in (the pixel CRS for a plain image)."""
    if raster is None or raster.crs is None:
        return [line.vertices_px for line in lines], PIXEL_CRS_WKT
    positions = [np.column_stack(raster.pixel_to_map(*line.vertices_px.T)) for line in lines]
    return positions, raster.crs.to_wkt()


def _record(line: ExportLine, details: bool) -> dict:
    record = {str(k): _plain(v) for k, v in line.attributes.items()}
    if details and line.details is not None:
        record[DETAILS_FIELD] = json.dumps(line.details, allow_nan=False, separators=(",", ":"), default=_plain)
    return record


def _plain(value):
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


#: The integers a field holds (GDAL's Integer64).
_INT64 = (-2**63, 2**63 - 1)
_TYPED_COLUMNS = {
    "integer": lambda values: np.ma.masked_array([0 if v is None else int(v) for v in values],
                                                 mask=[v is None for v in values], dtype=np.int64),
    "boolean": lambda values: np.ma.masked_array([bool(v) for v in values], mask=[v is None for v in values]),
    "real": lambda values: np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64),
    "text": lambda values: np.array([None if v is None else str(v) for v in values], dtype=object),
}


def _columns(records: list[dict], field_types: dict) -> dict:
    """Attribute columns for pyogrio: booleans, integers, reals or text per field (None: null text, NaN reals).

    A field of ``field_types`` gets that type; booleans and integers with nulls
    are masked arrays (GDAL's nulls: an imported road_id 230 is not exported as 230.0).
    """
    names = list(dict.fromkeys(name for record in records for name in record))
    columns = {}
    for name in names:
        values = [record.get(name) for record in records]
        present = [v for v in values if v is not None]
        if name in field_types:
            if field_types[name] not in ("text", "integer", "real"):
                raise ValueError(f"field_types[{name!r}] must be text, integer or real; got {field_types[name]!r}")
            columns[name] = _TYPED_COLUMNS[field_types[name]](values)
        elif present and all(isinstance(v, bool) for v in present):
            columns[name] = _TYPED_COLUMNS["boolean"](values)
        elif present and all(isinstance(v, int) and _INT64[0] <= v <= _INT64[1] for v in present):
            columns[name] = _TYPED_COLUMNS["integer"](values)
        elif present and all(isinstance(v, (int, float, bool)) for v in present):
            columns[name] = np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)
        else:
            columns[name] = np.array([None if v is None else str(v) for v in values], dtype=object)
    return columns
