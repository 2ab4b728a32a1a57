"""Lines of any vector file GDAL reads, placed on an image: GeoJSON (any CRS), GeoPackage, Shapefile, FlatGeobuf.

:func:`read_lines` (File > Import, editable work): RFC 7946 GeoJSON and
LineSnap's own files go through :func:`core.io.geojson.read_geojson` (exact pixel
round trip, properties kept); everything else, legacy GeoJSON with a ``crs``
member included, through pyogrio, reprojected from the file's CRS to the image's.

:func:`read_line_geometry` (reference layers, which keep only geometry): every
format, GeoJSON included, through pyogrio/GDAL, which parses the file without
holding Python's interpreter lock (``json.loads`` of a 15 MB file held it for
seconds, freezing the window although the reading ran on a worker thread).
LineSnap's extraction details, written by :func:`core.vector.write_lines` as
JSON text in one field (:data:`core.vector.export.DETAILS_FIELD`), come back
as the nested properties they were (:func:`unpack_details`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from core.batch.datetimes import iso_texts
from core.batch.feature_ids import FID_FIELD
from core.gc_pause import paused_collection
from core.io.geojson import PIXEL_CRS_WKT, GeoJSONError, LineFeature, name_key, read_geojson
from core.io.jsonfile import without_coordinates
from core.io.line_report import LinesRead, part_properties, source_fid_name
from core.vector.export import DETAILS_FIELD, FIELD_TYPES_KEY

__all__ = ["read_lines", "read_line_geometry", "unpack_details"]

_GEOJSON_SUFFIXES = (".geojson", ".json")
#: LineSnap writes ``"linesnap:coordinates"`` before the features: it is looked for in this many first bytes.
_PEEK_BYTES = 64 * 1024
_PIXEL_MEMBER = re.compile(rb'"linesnap:coordinates"\s*:\s*"pixel"')


def read_lines(path, raster=None, report: LinesRead | None = None) -> list[LineFeature]:
    """The lines of ``path`` in ``raster``'s pixels, one LineFeature per LineString part.

    Parameters
    ----------
    path : str or os.PathLike
        Any vector file GDAL reads.
    raster : core.io.raster.Raster, optional
        The image the lines go onto; without one (or for a plain image) only
        pixel files (LineSnap's exports of plain images) can be placed.
    report : core.io.line_report.LinesRead, optional
        Filled with what was left out or changed: features that are not lines,
        multi-part lines split into their parts, heights dropped.

    Raises
    ------
    GeoJSONError
        Unreadable file, features none of which is a line, or a CRS that cannot
        be related to the image's.  A file of no features (an export of no
        lines) gives an empty list.
    """
    with paused_collection():  # (only acyclic lists, dicts and lines are built: core.gc_pause says why)
        return _read_lines(Path(path), raster, report)


def _read_lines(path: Path, raster, report: LinesRead | None) -> list[LineFeature]:
    if path.suffix.lower() in _GEOJSON_SUFFIXES and _plain_geojson(path):
        return [LineFeature(f.vertices_px, f.name, unpack_details(f.properties))
                for f in read_geojson(path, raster, report)]
    from core.batch.layers import read_line_layer

    try:
        layer = read_line_layer(path, empty_ok=True)
    except ValueError as err:
        raise GeoJSONError(str(err)) from err
    names = list(layer.fields)
    source_fid = source_fid_name(names)  # the split features' ids, in a column of their own (one per layer)
    indices = layer.line_indices()
    if report is not None:
        for parts in layer.parts:
            lines = isinstance(parts, list)
            report.feature(("MultiLineString" if len(parts) > 1 else "LineString") if lines else parts,
                           len(parts) if lines else 0)
        report.heights = layer.has_z or _any_heights([layer.wkb[k] for k in indices])
    placed = iter(_place_parts([part for k in indices for part in layer.parts[k]], layer.crs, raster, path))
    dates = {name: "date" if np.datetime_data(values.dtype)[0] == "D" else "datetime"
             for name, values in layer.fields.items() if getattr(values, "dtype", None) is not None
             and values.dtype.kind == "M"}
    # ISO text, with the UTC offsets the values give (written back as DateTime with them where the format can)
    texts = {name: iso_texts(layer.fields[name], layer.tz_flags.get(name)) for name in dates}
    lines = []
    for k in indices:
        properties = {name: texts[name][k] if name in texts else _plain(layer.fields[name][k]) for name in names}
        if layer.fids is not None and layer.fids[k] is not None:
            properties.setdefault(FID_FIELD, layer.fids[k])
        if dates:
            properties[FIELD_TYPES_KEY] = dict(dates)
        name = properties.pop(name_key(properties), None)
        name = "" if name is None else str(name)
        parts = layer.parts[k]
        properties = part_properties(properties, len(parts), report, source_fid)
        for j in range(len(parts)):
            label = name if len(parts) == 1 or not name else f"{name} ({j + 1})"
            lines.append(LineFeature(next(placed), label, unpack_details(properties)))
    return lines


def read_line_geometry(path, raster=None) -> list[np.ndarray]:
    """The lines of ``path`` in ``raster``'s pixels, geometry only (a reference layer), read by GDAL.

    GeoJSON is read by GDAL as the other formats are (RFC 7946 files as WGS84,
    a legacy ``crs`` member as the CRS it names), so that a worker reading a
    large file leaves the GUI thread running.  LineSnap's own exports of plain
    images are pixel coordinates: their ``crs`` member names
    :data:`core.io.geojson.PIXEL_CRS_WKT`, and older ones without it say
    ``"linesnap:coordinates": "pixel"`` in the file's first bytes.

    Parameters
    ----------
    path : str or os.PathLike
        Any vector file GDAL reads.
    raster : core.io.raster.Raster, optional
        The image the lines go onto, as for :func:`read_lines`.

    Returns
    -------
    list of (k, 2) float64 ndarray
        In file order, one per LineString part, pixels ``(x, y)``, k >= 2.

    Raises
    ------
    GeoJSONError
        One line naming the file: unreadable (GDAL's message quoted), features
        none of which is a line, or a CRS that cannot be related to the image's
        (a file of no features gives an empty list).
    """
    from core.batch.layers import read_line_layer

    path = Path(path)
    try:
        layer = read_line_layer(path, columns=[], empty_ok=True)
    except ValueError as err:
        raise GeoJSONError(str(err)) from err
    crs = PIXEL_CRS_WKT if _says_pixel(path) else layer.crs
    parts = [part for k in layer.line_indices() for part in layer.parts[k] if len(part) >= 2]
    return _place_parts(parts, crs, raster, path)


def _says_pixel(path: Path) -> bool:
    """Whether a GeoJSON file says ``"linesnap:coordinates": "pixel"`` in its first bytes (LineSnap's pixel files)."""
    if path.suffix.lower() not in _GEOJSON_SUFFIXES:
        return False
    try:
        with open(path, "rb") as file:
            return bool(_PIXEL_MEMBER.search(file.read(_PEEK_BYTES)))
    except OSError:
        return False


def unpack_details(properties: dict) -> dict:
    """``properties`` with the JSON text of :data:`DETAILS_FIELD` replaced by the members it holds.

    The flat fields win over a detail of the same name (they are what the file
    says now).  Text that is not a JSON object (another program's field of that
    name, or a Shapefile's cut-off text) stays as it is.
    """
    text = properties.get(DETAILS_FIELD)
    if not isinstance(text, str):
        return dict(properties)
    try:
        details = json.loads(text)
    except ValueError:
        return dict(properties)
    if not isinstance(details, dict):
        return dict(properties)
    flat = {k: v for k, v in properties.items() if k != DETAILS_FIELD}
    return {**flat, **{k: v for k, v in details.items() if k not in flat}}


def _plain_geojson(path: Path) -> bool:
    """Whether a GeoJSON file is RFC 7946 or LineSnap's (no ``crs`` member, or WGS84's, or the pixel CRS)."""
    try:
        data = path.read_bytes()
        if b'"crs"' not in data:  # most files: no need to parse them twice (json.loads holds the GIL for seconds)
            return True
        document = json.loads(without_coordinates(data).decode("utf-8"))  # (its crs member only)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: nested too deep
        return True  # read_geojson names what is wrong with it (its parser has depth and number limits)
    crs = document.get("crs") if isinstance(document, dict) else None
    if crs is None:
        return True
    name = str((crs.get("properties") or {}).get("name", "")) if isinstance(crs, dict) else ""
    return name == PIXEL_CRS_WKT or name.endswith(("CRS84", "EPSG:4326", "EPSG::4326"))


def _place_parts(parts: list, crs: str | None, raster, path: Path) -> list[np.ndarray]:
    """(k, 2) positions in the layer's ``crs`` -> the image's pixels, per part.

    The CRS is converted once for all the parts together (not part by part);
    each part is then placed through ``raster`` on its own, so that a watching
    raster (``app.import_job.WatchedRaster``) counts the lines and can stop the reading.
    """
    from core.batch.frames import crs_label, same_crs, transform_xy

    if not parts:
        return []
    if crs is None or same_crs(crs, PIXEL_CRS_WKT):
        if raster is not None and raster.crs is not None and crs is None:
            return [np.column_stack(raster.map_to_pixel(*part.T)) for part in parts]  # no CRS: taken as the image's
        return [np.array(part, dtype=np.float64) for part in parts]
    if raster is None or raster.crs is None:
        raise GeoJSONError(f"{path.name} is in {crs_label(crs)}: open a georeferenced image to import it onto")
    positions = np.concatenate(parts)
    if getattr(raster, "georeferenced", False) and same_crs(crs, "EPSG:4326"):
        xy = np.column_stack(raster.lonlat_to_map(*positions.T))  # longitudes turned to the image's side
    else:
        try:
            xy = transform_xy(positions, crs, raster.crs.to_wkt())
        except ValueError as err:
            raise GeoJSONError(f"{path.name}: {err}") from err
    ends = np.cumsum([len(part) for part in parts])[:-1]
    placed = [np.column_stack(raster.map_to_pixel(*part.T)) for part in np.split(xy, ends)]
    if not all(np.isfinite(part).all() for part in placed):
        raise GeoJSONError(f"{path.name} has positions that do not map onto the image's CRS")
    return placed


def _any_heights(wkbs) -> bool:
    """Whether any of these geometries has Z values (a layer of mixed types does not say so in its type)."""
    import shapely

    wkbs = [w for w in wkbs if w is not None]
    return bool(wkbs) and bool(shapely.has_z(shapely.from_wkb(wkbs, on_invalid="ignore")).any())


def _plain(value):
    """A numpy field value as a JSON-able Python value (NaN and masked values as None)."""
    if value is np.ma.masked:  # an integer or boolean field's null
        return None
    if isinstance(value, np.datetime64):  # ISO text (a date, or a date and time to the millisecond); NaT: null
        return None if np.isnat(value) else str(value)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)  # dates and times: as text
