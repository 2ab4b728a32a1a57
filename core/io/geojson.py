"""GeoJSON export and import of digitized lines (RFC 7946 FeatureCollections of LineStrings).

Georeferenced rasters give WGS84 lon/lat; plain images keep pixel ``(x, y)``,
marked ``"linesnap:coordinates": "pixel"``.  Every feature carries its
``pixel_coordinates``.  Files are written atomically (temporary file, then a
rename), so a failed export leaves an earlier file intact.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.io.antimeridian import cut_at_antimeridian, is_cut_at_antimeridian, join_cut_parts
from core.io.atomic import atomic_write_text
from core.io.jsonfile import check_depth, load_json
from core.io.line_report import FID, part_properties, source_fid_name

__all__ = [
    "COORDINATES_MEMBER",
    "PIXEL_CRS_WKT",
    "GeoJSONError",
    "LineFeature",
    "atomic_write_text",
    "feature_from_result",
    "format_geojson",
    "name_key",
    "read_geojson",
    "to_feature_collection",
    "write_geojson",
]

#: Foreign member of LineSnap's collections: "lonlat" (WGS84) or "pixel".
COORDINATES_MEMBER = "linesnap:coordinates"
#: Deepest nesting of a feature's properties written (a reader's depth limit stays above the whole file's).
MAX_PROPERTY_DEPTH = 32
#: Pixel coordinates beyond this (in absolute value) are refused: no raster is that large.
MAX_COORDINATE_PX = 1e9
#: The CRS of pixel coordinates (x = column, y = row, down): a local CRS, so that GDAL never reads
#: a plain image's lines as EPSG:4326 (GeoJSON names it in a pre-RFC 7946 ``crs`` member).
PIXEL_CRS_WKT = ('LOCAL_CS["LineSnap image pixels (x = column, y = row, down)",LOCAL_DATUM["image",32767],'
                 'UNIT["pixel",1],AXIS["X",EAST],AXIS["Y",SOUTH]]')

_NUMBER = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_NUMBER_PAIR = re.compile(r"\[\n\s*" + _NUMBER + r",\n\s*" + _NUMBER + r"\n\s*\]")


class GeoJSONError(ValueError):
    """A feature cannot be exported, or a file is not LineSnap GeoJSON."""


@dataclass(eq=False)
class LineFeature:
    """One digitized line.

    Attributes
    ----------
    vertices_px : (k, 2) float64 ndarray
        Vertices in pixel space ``(x, y) = (col, row)``, ``k >= 2``, finite.
    name : str
        Free text shown to the user.
    properties : dict
        JSON-able extra properties, e.g. score, settings, backend, timings_ms.
    """

    vertices_px: np.ndarray
    name: str = ""
    properties: dict = field(default_factory=dict)

    def __post_init__(self):
        self.vertices_px = _check_vertices(self.vertices_px, "vertices_px")
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str; got {type(self.name).__name__}")
        if not isinstance(self.properties, dict):
            raise TypeError(f"properties must be a dict; got {type(self.properties).__name__}")


def feature_from_result(result, name: str = "") -> LineFeature:
    """The :class:`LineFeature` of an ExtractionResult.

    Properties: ``score``, ``settings`` (with the snapping half-width actually
    used), ``backend``, ``method``, ``timings_ms``, and where the result has
    one, the ``estimate`` of the object (width, polarity, contrast, course,
    confidence) and the ``confidence`` alone; for a long span run coarse-to-fine,
    ``coarse_to_fine`` (the reduction ``factor`` and the full-resolution ``pieces``).
    """
    settings = result.settings.to_dict() if hasattr(result.settings, "to_dict") else dict(result.settings)
    guides = getattr(result, "guides", None)
    if settings.get("snap_endpoints") and settings.get("snap_half_width_px") is None and guides is not None:
        settings["snap_half_width_px"] = float(guides.start_offsets[-1])  # the default's value, as used
    properties = {
        "score": float(result.score),
        "settings": settings,
        "backend": result.backend,
        "method": result.method,
        "timings_ms": {key: float(value) for key, value in result.timings_ms.items()},
    }
    estimate = getattr(result, "estimate", None)
    if estimate is not None:
        properties["estimate"] = estimate.to_dict()
        properties["confidence"] = float(estimate.confidence)
    if getattr(result, "coarse_factor", 1) > 1:
        properties["coarse_to_fine"] = {"factor": int(result.coarse_factor), "pieces": int(result.pieces)}
    return LineFeature(np.array(result.vertices_px, np.float64), name, properties)


def to_feature_collection(features, raster=None) -> dict:
    """An RFC 7946 FeatureCollection (a JSON-able dict) of line features.

    With a georeferenced ``raster`` (core.io.raster.Raster) the coordinates are
    WGS84 ``[lon, lat]``; otherwise pixel ``[x, y]``.
    """
    _check_raster(raster)
    features = list(features)
    for k, feature in enumerate(features):
        if not isinstance(feature, LineFeature):
            raise TypeError(f"features[{k}] must be a LineFeature; got {type(feature).__name__}")
    lonlat = raster is not None and raster.georeferenced
    collection = {"type": "FeatureCollection", COORDINATES_MEMBER: "lonlat" if lonlat else "pixel"}
    if not lonlat:  # GDAL would read a collection without a crs member as EPSG:4326
        collection["crs"] = {"type": "name", "properties": {"name": PIXEL_CRS_WKT}}
    if raster is not None:
        collection["linesnap:image"] = raster.path
        if lonlat:
            collection["linesnap:source_crs"] = raster.crs.to_string()
    collection["features"] = [_feature_dict(f, raster if lonlat else None, k) for k, f in enumerate(features)]
    return collection


def _feature_dict(feature: LineFeature, raster, k: int) -> dict:
    vertices = feature.vertices_px
    if raster is None:
        positions = vertices
    else:
        try:
            lon, lat = raster.pixel_to_lonlat(vertices[:, 0], vertices[:, 1])
        except ValueError as err:  # core.io.raster.RasterError: PROJ failed for these positions
            raise GeoJSONError(f"feature {k} ({feature.name!r}): {err}") from err
        positions = np.column_stack([lon, lat])
        if not (np.isfinite(positions).all() and np.all(np.abs(lat) <= 90)):
            raise GeoJSONError(f"feature {k} ({feature.name!r}) has vertices with no valid lon/lat position")
    properties = {"name": feature.name}
    check_depth(feature.properties, f"features[{k}].properties", GeoJSONError, max_depth=MAX_PROPERTY_DEPTH)
    properties.update(_jsonable(feature.properties, f"features[{k}].properties"))
    properties["pixel_coordinates"] = vertices.tolist()
    parts = cut_at_antimeridian(positions) if raster is not None else [positions]
    geometry = {"type": "LineString", "coordinates": positions.tolist()} if len(parts) == 1 else \
        {"type": "MultiLineString", "coordinates": [part.tolist() for part in parts]}
    return {"type": "Feature", "geometry": geometry, "properties": properties}


def write_geojson(path, features, raster=None) -> None:
    """Write features as an RFC 7946 FeatureCollection to ``path``, atomically.

    ``raster`` as for :func:`to_feature_collection`.  Raises GeoJSONError or
    TypeError for features that cannot be exported (nothing is written), OSError
    when the file cannot be written (an earlier file stays intact).
    """
    atomic_write_text(path, format_geojson(to_feature_collection(features, raster)))


def format_geojson(collection: dict) -> str:
    """Indented JSON text, one ``[x, y]`` position per line; ValueError for NaN or infinities."""
    text = json.dumps(collection, indent=1, allow_nan=False)
    # JSON strings hold no raw newline, so only real number pairs match.
    return _NUMBER_PAIR.sub(r"[\1, \2]", text) + "\n"


def read_geojson(path, raster=None, report=None) -> list[LineFeature]:
    """Read the lines of a GeoJSON file into features in pixel space.

    The geometry places each line, so edits made in other programs count:
    ``"pixel"`` files hold pixel ``(x, y)``; lon/lat files (LineSnap's and other
    tools' RFC 7946 files) need a georeferenced ``raster``, except that
    LineSnap's own fall back to their ``pixel_coordinates`` without one.  Saved
    ``pixel_coordinates`` are kept where the geometry agrees with them (to
    1e-6 px), so export -> import is exact.

    Parameters
    ----------
    path : str or os.PathLike
    raster : core.io.raster.Raster, optional
        The image the lines are imported onto.
    report : core.io.line_report.LinesRead, optional
        Told what was left out or changed (features that are not lines, parts, heights).

    Returns
    -------
    list of LineFeature
        In file order, one per part of a MultiLineString, with ``name`` and the
        other properties.  Other tools' non-line features are skipped.

    Raises
    ------
    GeoJSONError
        Missing or unreadable file, invalid JSON, not a FeatureCollection, a
        broken feature, features none of which is a line, a ``crs`` other than
        WGS84, or lon/lat with no georeferenced raster.  A collection of no
        features gives an empty list.
    """
    path = _check_path(path)
    _check_raster(raster)
    document = _as_collection(load_json(path, GeoJSONError))
    if not isinstance(document, dict) or document.get("type") != "FeatureCollection":
        raise GeoJSONError(f"{path} is not a GeoJSON FeatureCollection, Feature or geometry")
    features = document.get("features")
    if not isinstance(features, list):
        raise GeoJSONError(f"{path}: 'features' must be a list")
    ours = COORDINATES_MEMBER in document
    kind = document.get(COORDINATES_MEMBER, "pixel" if _names_pixel_crs(document.get("crs")) else "lonlat")
    if kind not in ("pixel", "lonlat"):
        raise GeoJSONError(f"{path}: {COORDINATES_MEMBER!r} must be 'pixel' or 'lonlat'; got {kind!r}")
    _check_crs_member(document.get("crs"), path)
    georeferenced = raster is not None and raster.georeferenced
    if kind == "lonlat" and not georeferenced and (raster is not None or not ours):
        raise GeoJSONError(
            f"{path} holds WGS84 longitudes and latitudes (RFC 7946): open a georeferenced image to import it onto"
        )
    # the split features' ids: one property name for the layer, one it does not use already
    source_fid = source_fid_name(key for item in features if isinstance(item, dict)
                                 and isinstance(item.get("properties"), dict) for key in item["properties"])
    lines = []
    for k, item in enumerate(features):
        lines += _line_features(item, f"{path}: feature {k}", ours, kind == "lonlat", report, source_fid)
    if not lines and not ours and features:  # (no features at all: an export of no lines)
        raise GeoJSONError(f"{path} holds no LineString or MultiLineString feature")
    if kind == "lonlat" and georeferenced:
        lines = [_placed_on(raster, feature, saved) for feature, saved in lines]
    else:
        lines = [LineFeature(saved if saved is not None and kind == "lonlat" else feature.vertices_px,
                             feature.name, feature.properties) for feature, saved in lines]
    return lines


def _names_pixel_crs(crs) -> bool:
    properties = crs.get("properties") if isinstance(crs, dict) else None
    return isinstance(properties, dict) and properties.get("name") == PIXEL_CRS_WKT


def _check_crs_member(crs, path) -> None:
    """RFC 7946 dropped ``crs``; an old file may still name one: WGS84 lon/lat, or LineSnap's pixels."""
    if crs is None or _names_pixel_crs(crs):
        return
    properties = crs.get("properties") if isinstance(crs, dict) else None
    name = properties.get("name", "") if isinstance(properties, dict) else ""
    if not re.search(r"CRS84$|EPSG:+4326$", str(name)):
        raise GeoJSONError(f"{path} names the coordinate system {name or crs!r} (a pre-RFC 7946 'crs' member); "
                           "only WGS84 longitude, latitude is supported: reproject it to EPSG:4326 first")


def _placed_on(raster, feature: LineFeature, saved) -> LineFeature:
    """``feature`` (lon/lat vertices) in ``raster``'s pixels; ``saved`` pixel coordinates win where they agree."""
    xs, ys = raster.lonlat_to_pixel(feature.vertices_px[:, 0], feature.vertices_px[:, 1])
    vertices = np.column_stack([xs, ys])
    if not np.isfinite(vertices).all():
        raise GeoJSONError(f"feature {feature.name!r} has positions that do not map onto the image's CRS")
    if saved is not None and saved.shape == vertices.shape and np.abs(saved - vertices).max() <= 1e-6:
        vertices = saved
    return LineFeature(vertices, feature.name, feature.properties)


def _check_path(path) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or os.PathLike); got {type(path).__name__}")
    return Path(path)


def _check_raster(raster) -> None:
    if raster is not None and not all(hasattr(raster, name) for name in ("georeferenced", "lonlat_to_pixel")):
        raise TypeError(f"raster must be an open core.io.raster.Raster (open_raster(path)) or None; "
                        f"got {type(raster).__name__}")


def _line_features(item, where: str, ours: bool, lonlat: bool, report, source_fid: str) -> list[tuple]:
    """(feature with the geometry's positions, its saved ``pixel_coordinates`` (k, 2) or None) per line of
    ``item``; ``report`` (core.io.line_report.LinesRead) told what the feature became; a multi-part feature's
    parts hold its id as ``source_fid`` (core.io.line_report.part_properties)."""
    if not isinstance(item, dict) or item.get("type") != "Feature":
        raise GeoJSONError(f"{where} is not a GeoJSON Feature")
    geometry = item.get("geometry")
    kind = geometry.get("type") if isinstance(geometry, dict) else None
    if kind not in ("LineString", "MultiLineString"):
        if ours:
            raise GeoJSONError(f"{where} is not a LineString")
        return report.feature(kind, 0) if report is not None else []
    properties = item.get("properties")
    properties = dict(properties) if isinstance(properties, dict) else {}
    saved = properties.pop("pixel_coordinates", None)
    if not isinstance(item.get("id"), (bool, type(None))) and isinstance(item["id"], (int, str)):
        properties.setdefault(FID, item["id"])  # the feature's id, written back as one (core.batch.feature_ids)
    if ours and saved is None:
        raise GeoJSONError(f"{where} has no 'pixel_coordinates' property")
    name = properties.pop(name_key(properties), "")
    name = "" if name is None else name if isinstance(name, str) else str(name)
    parts = geometry.get("coordinates")
    parts = [parts] if kind == "LineString" else parts
    if not ours and isinstance(parts, list):  # empty geometries (RFC 7946 allows them) and single positions
        parts = [part for part in parts if not (isinstance(part, list) and len(part) < 2)]
        if not parts:
            return report.feature(kind, 0) if report is not None else []
    if not isinstance(parts, list) or not parts:
        raise GeoJSONError(f"{where} has no coordinates")
    heights = any(isinstance(p, list) and p and isinstance(p[0], list) and len(p[0]) > 2 for p in parts)
    parts = [_positions(part, f"{where if kind == 'LineString' else f'{where}, part {j}'}: coordinates", lonlat)
             for j, part in enumerate(parts)]
    if kind == "MultiLineString" and ((ours and saved is not None) or (lonlat and is_cut_at_antimeridian(parts))):
        kind, parts = "LineString", [join_cut_parts(parts)]  # one line, cut at the antimeridian
    properties = part_properties(properties, len(parts), report, source_fid)
    lines = []
    for j, positions in enumerate(parts):
        label = where if kind == "LineString" else f"{where}, part {j}"
        saved_px = None
        if saved is not None and kind == "LineString":
            try:
                saved_px = _check_vertices(saved, "pixel_coordinates")
            except (TypeError, ValueError) as err:
                if ours:
                    raise GeoJSONError(f"{label}: {str(err)[:160]}") from err
                # another program rewrote a LineSnap line (e.g. as text): only a hint, the geometry places it
        part_name = name if len(parts) == 1 or not name else f"{name} ({j + 1})"
        lines.append((LineFeature(positions, part_name, properties), saved_px))
    if report is not None:
        report.feature(kind, len(lines), heights)
    return lines


def name_key(properties: dict) -> str:
    """The key of a feature's name: ``name``, else the first key that reads ``name`` ignoring case (a
    Shapefile's ``NAME``)."""
    if "name" in properties:
        return "name"
    return next((key for key in properties if isinstance(key, str) and key.lower() == "name"), "name")


def _as_collection(document):
    """A single Feature, or a bare geometry, as a collection of it (RFC 7946 allows either as the top level)."""
    if isinstance(document, dict) and document.get("type") in ("LineString", "MultiLineString"):
        document = {"type": "Feature", "properties": {}, "geometry": document}
    if isinstance(document, dict) and document.get("type") == "Feature":
        return {"type": "FeatureCollection", "features": [document],
                **{k: v for k, v in document.items() if k in ("crs", COORDINATES_MEMBER)}}
    return document


def _positions(part, where: str, lonlat: bool) -> np.ndarray:
    """(k, 2) float64 positions of one line (an elevation is dropped); GeoJSONError naming the place."""
    try:
        array = np.array(part) if isinstance(part, list) else None
    except (TypeError, ValueError, OverflowError):  # ragged lists, numbers numpy cannot hold
        array = None
    if array is None or array.ndim != 2 or array.shape[1] not in (2, 3) or array.dtype.kind not in "iuf":
        raise GeoJSONError(f"{where} must be a list of positions [x, y] (or [x, y, z]) given as numbers")
    array = array[:, :2].astype(np.float64)
    if len(array) < 2:
        raise GeoJSONError(f"{where} has {len(array)} position(s); a line needs at least 2")
    limits = (180.0, 90.0) if lonlat else (MAX_COORDINATE_PX, MAX_COORDINATE_PX)
    for axis, (name, limit) in enumerate(zip(("longitude", "latitude") if lonlat else ("x", "y"), limits)):
        outside = np.flatnonzero(np.abs(array[:, axis]) > limit)
        if outside.size:
            k = int(outside[0])
            raise GeoJSONError(f"{where}[{k}]: {name} {array[k, axis]:g} is out of range [-{limit:g}, {limit:g}]")
    return array


def _check_vertices(vertices, name: str) -> np.ndarray:
    """(k, 2) float64 copy of ``vertices``; ValueError unless k >= 2 and all finite."""
    try:
        array = np.array(vertices, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as err:
        raise TypeError(f"{name} must be a (k, 2) array of numbers: {str(err)[:80]}") from err
    if array.ndim != 2 or array.shape[1] != 2 or array.shape[0] < 2:
        raise ValueError(f"{name} must have shape (k, 2) with k >= 2; got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite; got NaN or infinite values")
    if np.abs(array).max() > MAX_COORDINATE_PX:
        raise ValueError(f"{name} must lie within +-{MAX_COORDINATE_PX:g} px; got {np.abs(array).max():g}")
    return array


def _jsonable(value, where: str):
    """``value`` with numpy types turned into plain JSON types; non-finite floats become None."""
    if isinstance(value, dict):
        return {str(key): _jsonable(item, f"{where}[{key!r}]") for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_jsonable(item, f"{where}[{k}]") for k, item in enumerate(value)]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (str, bool, int)):
        return value
    raise GeoJSONError(f"{where} is a {type(value).__name__}, which GeoJSON cannot hold")
