"""Line layers in and out through pyogrio: any vector format GDAL reads, written by extension, atomically.

A layer is kept column-wise as pyogrio gives it (field arrays, WKB
geometries), so every input property survives the round trip with its type
(integer and boolean fields with nulls as masked arrays).  A write changes
only what its format cannot hold, and says what (:class:`FieldChanges`).
"""

from __future__ import annotations

import contextlib
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.batch.datetimes import has_offsets, split_iso_datetimes
from core.batch.feature_ids import id_column, read_feature_ids
from core.batch.fields import (
    FieldChanges,
    fit_shapefile_text,
    geopackage_utc,
    layer_field_names,
    shapefile_field_names,
)
from core.batch.frames import is_pixel_crs
from core.batch.replace import (
    check_writable,
    check_written,
    copy_file,
    first_line,
    is_sqlite,
    move_into_place,
    remove_stale_folders,
    temporary_folder,
)
from core.batch.wkb import decode_lines, encode_lines

__all__ = ["DRIVERS", "FieldChanges", "LineLayer", "check_writable", "driver_for", "read_line_layer",
           "shapefile_field_names", "write_line_layer"]

#: GDAL's warning, once per read, for a GeoPackage DateTime with a UTC offset (its standard holds UTC only;
#: GDAL itself writes them so, other tools too): the value is read with its offset (core.batch.datetimes).
_GPKG_OFFSETS_WARNING = r"Non-conformant content for record \d+ in column .*, successfully parsed$"
#: Output formats by file extension.
DRIVERS = {".geojson": "GeoJSON", ".json": "GeoJSON", ".gpkg": "GPKG", ".shp": "ESRI Shapefile",
           ".fgb": "FlatGeobuf"}


@dataclass(eq=False)
class LineLayer:
    """The features of a vector layer.

    Attributes
    ----------
    parts : list
        Per feature: a list of (k, 2) float64 vertex arrays in ``crs`` (its
        LineString parts), the geometry type's name for other geometries, or None.
    wkb : list of bytes or None
        Per feature, its geometry as read (written back for features left unchanged).
    crs : str or None
        The layer's CRS (``EPSG:4326``, WKT, ...), None when it has none.
    fields : dict of str to ndarray
        The attribute columns, one array per field, in file order.
    path : str
    has_z : bool
        The geometries carry Z values (``parts`` holds their x and y only).
    fids : list or None
        Per feature its id (int or str; None where missing): a GeoPackage's fid, a GeoJSON ``id`` member
        (core.batch.feature_ids); None: the layer has no ids of its own (or they were not read).
    tz_flags : dict of str to (n,) int16 ndarray
        Of the DateTime fields whose values give UTC offsets, GDAL's time zone flag per value
        (core.batch.datetimes); the field's datetime64 values are then the times as written, not UTC.
    """

    parts: list
    wkb: list
    crs: str | None
    fields: dict = field(default_factory=dict)
    path: str = ""
    has_z: bool = False
    fids: list | None = None
    tz_flags: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.parts)

    def line_indices(self) -> list[int]:
        """Indices of the features that are lines (LineString or MultiLineString)."""
        return [k for k, parts in enumerate(self.parts) if isinstance(parts, list)]


def read_line_layer(path, columns=None, empty_ok: bool = False) -> LineLayer:
    """Read a vector layer whose features are LineStrings or MultiLineStrings.

    Parameters
    ----------
    path : str or os.PathLike
        Any vector file GDAL reads (GeoJSON, GeoPackage, Shapefile, FlatGeobuf, ...).
    columns : list of str, optional
        The fields to read (all by default; ``[]``: geometry only, much faster
        for a large GeoJSON file).  Of a GeoPackage of several layers, the one
        named like the file is read (the one :func:`write_line_layer` writes), else the first of lines.
        With all fields the features' ids are read too (``LineLayer.fids``).
    empty_ok : bool
        Read a layer of no features as an empty LineLayer (what an export of no
        lines writes) instead of refusing it.

    Returns
    -------
    LineLayer

    Raises
    ------
    ValueError
        A missing or unreadable file, an empty layer (unless ``empty_ok``), or a
        layer whose features are not lines.
    """
    import pyogrio.raw

    path = str(path)
    if not path.startswith("/vsi") and not Path(path).is_file():
        raise ValueError(f"lines file {path} does not exist")
    try:
        named = _layer_named_like(path)
        with warnings.catch_warnings():  # GDAL parsed another tool's offsets in a GeoPackage: kept, not a fault
            warnings.filterwarnings("ignore", _GPKG_OFFSETS_WARNING, RuntimeWarning)
            # datetimes as GDAL's ISO text: pyogrio's datetime64 drops their UTC offsets (core.batch.datetimes)
            meta, fids, geometry, field_data = pyogrio.raw.read(path, columns=columns, layer=named,
                                                                return_fids=columns is None, datetime_as_string=True)
    except Exception as err:  # pyogrio's DataSourceError and friends share no public base besides Exception
        raise ValueError(f"cannot read lines file {path}: {first_line(err)}") from err
    geometry = list(geometry) if geometry is not None else []
    columns = _typed_columns(meta, field_data, lambda name: _exact_integers(path, named, name, len(geometry)))
    tz_flags = _datetime_columns(meta, columns, path)
    ids, columns = read_feature_ids(path, fids, columns) if columns is not None else (None, columns)
    layer = LineLayer([decode_lines(g) for g in geometry], geometry, meta.get("crs"), columns, path,
                      " Z" in str(meta.get("geometry_type") or ""), ids, tz_flags)
    if len(layer) or not empty_ok:
        _check_has_lines(layer)
    return layer


def _layer_named_like(path: str) -> str | None:
    """Of a GeoPackage of several layers, the one named like the file (ignoring case), else the first of lines
    (a points layer listed first hid a roads layer); None: GDAL's first."""
    import pyogrio

    if Path(path).suffix.lower() != ".gpkg":  # (listing a GeoJSON's layers would parse it twice)
        return None
    try:
        layers = [(str(name), str(kind)) for name, kind in pyogrio.list_layers(path)]
    except Exception:  # as in read_line_layer; the reading says what is wrong
        return None
    if len(layers) < 2:
        return None
    named = [name for name, _ in layers if name.lower() == Path(path).stem.lower()]
    lines = [name for name, kind in layers if "LineString" in kind]
    return (named + lines + [None])[0]


#: Integers from this magnitude on are not all exact in a float64.
_FLOAT_EXACT_BELOW = 2**53


def _typed_columns(meta: dict, field_data, exact=None) -> dict:
    """The field columns by name; integer and boolean ones with nulls as masked arrays of their type.

    pyogrio's raw reader gives such a column as float64 with NaN for the nulls,
    which an export would write back as reals (a road_id 230 as 230.0), and which
    rounds integers of 2^53 and more (two 64-bit ids 2^60 + 7 and 2^60 + 9 both
    read 2^60): such a column is read again as text by ``exact(name)``, which
    returns its values as Python ints or None.
    """
    columns = {}
    for name, dtype, values in zip(meta["fields"], meta["dtypes"], field_data):
        if str(dtype).startswith("list("):  # GDAL's list fields (a GeoJSON array, OSM's refs): JSON text
            columns[str(name)] = np.array([None if v is None else json.dumps(np.asarray(v).tolist()) for v in values],
                                          dtype=object)
            continue
        if np.dtype(dtype).kind in "iub" and values.dtype.kind == "f":
            nulls = np.isnan(values)
            if exact is not None and np.any(np.abs(values[~nulls]) >= _FLOAT_EXACT_BELOW):
                values = np.array([0 if v is None else v for v in exact(str(name))], dtype)
            else:
                values = np.where(nulls, 0, values).astype(dtype)
            values = np.ma.masked_array(values, mask=nulls)
        columns[str(name)] = values
    return columns


def _datetime_columns(meta: dict, columns: dict, path: str) -> dict:
    """The Date and DateTime fields of ``columns`` (read as ISO text) as datetime64, in place; returns the time
    zone flags of those that give UTC offsets (:attr:`LineLayer.tz_flags`)."""
    flags = {}
    for name, dtype in zip(meta["fields"], meta["dtypes"]):
        values = columns[str(name)]
        if not str(dtype).startswith("datetime64") or values.dtype.kind != "O":
            continue
        if np.dtype(dtype) == np.dtype("datetime64[D]"):
            columns[str(name)] = np.array(["NaT" if v is None else v for v in values], dtype)
            continue
        try:
            columns[str(name)], zones = split_iso_datetimes(values)
        except ValueError as err:
            raise ValueError(f"lines file {path}: field {name!r}: {err}") from None
        if has_offsets(zones):
            flags[str(name)] = zones
    return flags


def _exact_integers(path: str, layer: str | None, name: str, count: int) -> list:
    """The values of integer field ``name`` of ``layer`` (None: the first) as Python ints (None where null), read
    as text by GDAL's SQL."""
    import pyogrio
    import pyogrio.raw

    layer = layer or str(pyogrio.list_layers(path)[0, 0])
    quoted = name.replace('"', '""')
    sql = f'SELECT CAST("{quoted}" AS CHARACTER(24)) AS v FROM "{layer.replace(chr(34), chr(34) * 2)}"'
    _, _, _, (text,) = pyogrio.raw.read(path, sql=sql, sql_dialect="OGRSQL", read_geometry=False)
    if len(text) != count:
        raise ValueError(f"lines file {path}: field {name!r} read again as text gave {len(text)} values "
                         f"for {count} features")
    return [None if v is None else int(v) for v in text]


def _check_has_lines(layer: LineLayer) -> None:
    if len(layer) == 0:
        raise ValueError(f"lines file {layer.path} holds no features")
    if not layer.line_indices():
        found = sorted({p for p in layer.parts if isinstance(p, str)}) or ["no geometry"]
        raise ValueError(f"lines file {layer.path} holds no LineString or MultiLineString features "
                         f"(found {', '.join(found)})")


def driver_for(path) -> str:
    """The GDAL driver of an output file, from its extension (any case); ValueError for an unknown one."""
    suffix = Path(path).suffix.lower()
    if suffix not in DRIVERS:
        raise ValueError(f"output {path}: unknown format {suffix or '(no extension)'!r}; "
                         f"use one of {', '.join(sorted(set(DRIVERS)))}")
    if suffix == ".shp" and Path(path).suffix not in (".shp", ".SHP"):
        raise ValueError(f"output {path}: write a Shapefile as .shp or .SHP (GDAL opens no other case)")
    return DRIVERS[suffix]


def write_line_layer(path, geometries, fields: dict, crs: str | None, fids=None, tz_flags=None) -> FieldChanges:
    """Write features atomically (a temporary file beside ``path``, then a rename).

    A GeoPackage keeps its other layers: the layer named like the file is
    written (replaced) in a copy of it, which then replaces it.

    Parameters
    ----------
    path : str or os.PathLike
        ``.geojson`` / ``.json`` (RFC 7946, WGS84; ``crs`` None: the coordinates as they are), ``.gpkg``,
        ``.shp`` or ``.fgb`` (in ``crs``), any case.
    geometries : list
        Per feature, a list of (k, 2) vertex arrays in ``crs``, or WKB bytes written as they are.
    fields : dict of str to ndarray
        Attribute columns, each as long as ``geometries`` (masked arrays: nulls where masked).
    crs : str or None
    fids : list, optional
        Per feature its id (int, str or None), written as the format holds ids
        (:func:`core.batch.feature_ids.id_column`: GeoJSON ``id`` members, a
        GeoPackage's fids, else a field ``fid``); None: no ids.
    tz_flags : dict of str to (n,) int16 ndarray, optional
        Of datetime64 fields, GDAL's time zone flag per value (:attr:`LineLayer.tz_flags`): their UTC offsets
        are written (a Shapefile's DateTime fields as ISO text with them; a GeoPackage's in UTC).

    Returns
    -------
    FieldChanges
        ``{name: name written}`` for the fields written under another name (a
        Shapefile's names hold 10 bytes and differ ignoring case, see
        :func:`shapefile_field_names`; a GeoPackage's differ ignoring case and
        are not ``fid`` or ``geom``), and for a Shapefile the text values cut
        to 254 bytes and the JSON fields left out; ``describe()`` says it in one line.

    Raises
    ------
    OSError
        Naming ``path``: its folder cannot be written, GDAL failed, or the file does not read back whole.
    """
    import pyogrio.raw

    path = Path(path)
    driver = driver_for(path)
    changes = FieldChanges(driver=driver)
    tz_flags = {name: zones for name, zones in (tz_flags or {}).items() if name in fields}
    if driver == "ESRI Shapefile":
        fields, tz_flags = fit_shapefile_text(fields, changes, tz_flags), {}
    elif driver == "GPKG" and tz_flags:
        fields, tz_flags = geopackage_utc(fields, tz_flags, changes)
    ids = id_column(fids, driver, list(fields))
    if ids is not None and not ids[4]:
        fields = {**fields, ids[0]: np.ma.masked_array(ids[1], ids[2]) if ids[2] is not None else ids[1]}
        ids = (None, None, None, ids[3], False)  # a field like the others (GeoJSON's: its ``id`` members)
    names = layer_field_names(list(fields), driver, path)
    changes.update((old, new) for old, new in zip(fields, names) if old != new)
    zones = {new: np.asarray(tz_flags[old], np.int32) for old, new in zip(fields, names) if old in tz_flags}
    wkb = np.array([g if isinstance(g, (bytes, type(None))) else encode_lines(g) for g in geometries], dtype=object)
    # FlatGeobuf's spatial index would reorder the features: keep the input's order.  GeoJSON: RFC 7946 is WGS84;
    # coordinates without a CRS are written as they are (not clipped to WGS84), a plain image's pixels marked so
    options = {"GeoJSON": _geojson_options(crs), "FlatGeobuf": {"SPATIAL_INDEX": "NO"}}.get(driver, {})
    # a masked column (integers with nulls) goes as data and mask: GDAL's null, not a sentinel number
    masks = [np.ma.getmaskarray(v) if np.ma.isMaskedArray(v) else None for v in fields.values()]
    arrays = [np.ma.getdata(v) if np.ma.isMaskedArray(v) else np.asarray(v) for v in fields.values()]
    if ids is not None and ids[0] is not None:  # a GeoPackage's fids: GDAL takes a field named like them as them
        names, arrays, masks = [ids[0], *names], [ids[1], *arrays], [ids[2], *masks]
    options = {**options, **(ids[3] if ids is not None else {})}
    remove_stale_folders(path)
    folder = temporary_folder(path)
    try:
        temporary = folder / path.name
        if driver == "GPKG" and is_sqlite(path):  # its other layers are kept: the layer is written into a copy
            copy_file(path, temporary)
            options = {"OVERWRITE": "YES"}  # the layer of that name, in any case
        try:
            with warnings.catch_warnings():  # no CRS is meant (the layer had none): not pyogrio's warning
                warnings.filterwarnings("ignore", "'crs' was not provided", UserWarning)
                pyogrio.raw.write(str(temporary), wkb, arrays, names, layer=path.stem, crs=crs, driver=driver,
                                  field_mask=masks if any(m is not None for m in masks) else None,
                                  geometry_type=_geometry_type(geometries), layer_options=options,
                                  gdal_tz_offsets=zones or None)
        except Exception as err:  # pyogrio's errors share no public base besides Exception
            raise OSError(f"cannot write {path}: {_short(first_line(err))}") from err
        written = next((f for f in folder.iterdir() if f.name.lower() == path.name.lower()), temporary)
        check_written(written, len(geometries), path, path.stem if driver == "GPKG" else None)
        move_into_place(folder, written, path)
    finally:
        for left in folder.iterdir():
            with contextlib.suppress(OSError):
                left.unlink()
        with contextlib.suppress(OSError):
            folder.rmdir()
    return changes


def _geojson_options(crs: str | None) -> dict:
    if not is_pixel_crs(crs):
        return {"RFC7946": "YES" if crs is not None else "NO"}
    from core.io.geojson import PIXEL_CRS_WKT  # the members of LineSnap's own GeoJSON of a plain image

    member = {"crs": {"type": "name", "properties": {"name": PIXEL_CRS_WKT}}}
    return {"RFC7946": "NO", "FOREIGN_MEMBERS_COLLECTION": json.dumps(member)}


def _short(text: str, keep: int = 240) -> str:
    """``text`` cut in its middle to ``keep`` characters (GDAL quotes whole SQL scripts; the reason is at the end)."""
    return text if len(text) <= keep else f"{text[:keep // 3]} ... {text[-2 * keep // 3:]}"


def _geometry_type(geometries) -> str:
    kinds = set()
    for g in geometries:
        parts = decode_lines(g) if isinstance(g, bytes) else g
        if isinstance(parts, list):
            kinds.add("LineString" if len(parts) == 1 else "MultiLineString")
        elif parts is not None:
            kinds.add(parts)
    if kinds <= {"LineString"}:
        return "LineString"
    if kinds <= {"LineString", "MultiLineString"}:
        return "MultiLineString"
    return "Unknown"
