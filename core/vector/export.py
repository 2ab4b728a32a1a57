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

from core.batch.datetimes import split_iso_datetimes
from core.batch.feature_ids import FID_FIELD, filled_ids
from core.batch.layers import DRIVERS, FieldChanges
from core.io.antimeridian import cut_at_antimeridian
from core.io.geojson import PIXEL_CRS_WKT, GeoJSONError, atomic_write_text

__all__ = ["COORDINATE_DECIMALS", "DETAILS_FIELD", "EXPORT_FORMATS", "FIELD_TYPES_KEY", "ExportLine", "export_format",
           "write_lines"]

#: Output formats by file extension (GDAL driver names).
EXPORT_FORMATS = DRIVERS  # one table of extensions for exports and ``linesnap refine`` outputs
#: The field of LineSnap's extraction details (JSON text); Shapefile leaves it out (254 characters at most).
DETAILS_FIELD = "linesnap"
#: The detail (an imported line's property) naming its date and date-time fields, ``{name: "date" | "datetime"}``
#: (their values are ISO text): written as dates where the format has them (GeoPackage; Shapefile: dates).
FIELD_TYPES_KEY = "linesnap:field_types"
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
    does); ``field_types`` (name -> ``"text"``, ``"integer"``, ``"real"``, ``"date"`` or ``"datetime"``)
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
    columns, tz_flags = _columns(records, {**_date_types(lines), **(field_types or {})})
    return write_line_layer(path, [[p] for p in positions], columns, crs, _feature_ids(lines), tz_flags)


def geojson_text(lines, raster=None, details: bool = True) -> str:
    """An RFC 7946 FeatureCollection of ``lines`` as text (ids from 1, flat properties)."""
    lonlat = raster is not None and raster.georeferenced
    if raster is not None and raster.crs is not None and not lonlat:
        raise GeoJSONError("GeoJSON holds WGS84 longitudes and latitudes only, and this image's CRS has no known "
                           "relation to WGS84: export to GeoPackage, FlatGeobuf or Shapefile (in the image's CRS)")
    collection = {"type": "FeatureCollection"}
    if not lonlat:
        collection["crs"] = {"type": "name", "properties": {"name": PIXEL_CRS_WKT}}
    features, ids = [], _feature_ids(lines)
    ids = range(1, len(lines) + 1) if ids is None else filled_ids(ids)  # the lines' own, else from 1
    for fid, line in zip(ids, lines):
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
    """A line's fields (its id is the feature's, its date types the columns')."""
    record = {str(k): _plain(v) for k, v in line.attributes.items() if k != FID_FIELD}
    kept = {k: v for k, v in (line.details or {}).items() if k != FIELD_TYPES_KEY}
    if details and kept:
        record[DETAILS_FIELD] = json.dumps(kept, allow_nan=False, separators=(",", ":"), default=_plain)
    return record


def _feature_ids(lines) -> list | None:
    """Per line its imported id (attribute :data:`core.batch.feature_ids.FID_FIELD`), None if no line has one."""
    ids = [line.attributes.get(FID_FIELD) for line in lines]
    return ids if any(v is not None for v in ids) else None


def _date_types(lines) -> dict:
    """Field name -> ``"date"`` or ``"datetime"`` for the fields that every line holding a value of calls so."""
    said, other = {}, set()
    for line in lines:
        types = (line.details or {}).get(FIELD_TYPES_KEY) or {}
        for name, value in line.attributes.items():
            if value is None:
                continue
            kind = types.get(name) if isinstance(types, dict) else None
            if kind not in ("date", "datetime") or said.setdefault(name, kind) != kind:
                other.add(name)
    return {name: kind for name, kind in said.items() if name not in other}


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
    "date": lambda values: np.array(["NaT" if v is None else v for v in values], dtype="datetime64[D]"),
    "datetime": lambda values: split_iso_datetimes(values)[0],  # (times as written; :func:`_columns` keeps offsets)
}


def _columns(records: list[dict], field_types: dict) -> tuple[dict, dict]:
    """Attribute columns for pyogrio: booleans, integers, reals or text per field (None: null text, NaN reals),
    and the time zone flags of the date-and-time ones whose text gives UTC offsets (core.batch.datetimes).

    A field of ``field_types`` gets that type; booleans and integers with nulls
    are masked arrays (GDAL's nulls: an imported road_id 230 is not exported as 230.0).
    """
    names = list(dict.fromkeys(name for record in records for name in record))
    columns, tz_flags = {}, {}
    for name in names:
        values = [record.get(name) for record in records]
        present = [v for v in values if v is not None]
        if name in field_types:
            if field_types[name] not in _TYPED_COLUMNS or field_types[name] == "boolean":
                raise ValueError(f"field_types[{name!r}] must be text, integer, real, date or datetime; "
                                 f"got {field_types[name]!r}")
            try:
                if field_types[name] == "datetime":
                    columns[name], zones = split_iso_datetimes(values)
                    tz_flags.update({name: zones} if zones is not None else {})
                else:
                    columns[name] = _TYPED_COLUMNS[field_types[name]](values)
            except ValueError:  # (text that is no ISO date: as text)
                columns[name] = _TYPED_COLUMNS["text"](values)
        elif present and all(isinstance(v, bool) for v in present):
            columns[name] = _TYPED_COLUMNS["boolean"](values)
        elif present and all(isinstance(v, int) and _INT64[0] <= v <= _INT64[1] for v in present):
            columns[name] = _TYPED_COLUMNS["integer"](values)
        elif present and all(isinstance(v, (int, float, bool)) for v in present):
            columns[name] = np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)
        else:
            columns[name] = np.array([None if v is None else str(v) for v in values], dtype=object)
    return columns, tz_flags
