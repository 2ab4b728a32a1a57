"""Line layers in and out through pyogrio: any vector format GDAL reads, written by extension, atomically.

A layer is kept column-wise as pyogrio gives it (field arrays, WKB
geometries), so every input property survives the round trip with its type.
"""

from __future__ import annotations

import contextlib
import glob
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.batch.wkb import decode_lines, encode_lines
from core.io.atomic import STALE_TEMPORARY_S

__all__ = ["DRIVERS", "LineLayer", "driver_for", "read_line_layer", "shapefile_field_names", "write_line_layer"]

#: Bytes of a field name in a Shapefile (its dBASE table).
_DBF_NAME_BYTES = 10
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
    """

    parts: list
    wkb: list
    crs: str | None
    fields: dict = field(default_factory=dict)
    path: str = ""

    def __len__(self) -> int:
        return len(self.parts)

    def line_indices(self) -> list[int]:
        """Indices of the features that are lines (LineString or MultiLineString)."""
        return [k for k, parts in enumerate(self.parts) if isinstance(parts, list)]


def read_line_layer(path, columns=None) -> LineLayer:
    """Read a vector layer whose features are LineStrings or MultiLineStrings.

    Parameters
    ----------
    path : str or os.PathLike
        Any vector file GDAL reads (GeoJSON, GeoPackage, Shapefile, FlatGeobuf, ...).
    columns : list of str, optional
        The fields to read (all by default; ``[]``: geometry only, much faster
        for a large GeoJSON file).

    Returns
    -------
    LineLayer

    Raises
    ------
    ValueError
        A missing or unreadable file, an empty layer, or a layer without lines.
    """
    import pyogrio.raw

    path = str(path)
    if not path.startswith("/vsi") and not Path(path).is_file():
        raise ValueError(f"lines file {path} does not exist")
    try:
        meta, _, geometry, field_data = pyogrio.raw.read(path, columns=columns)
    except Exception as err:  # pyogrio's DataSourceError and friends share no public base besides Exception
        raise ValueError(f"cannot read lines file {path}: {_first_line(err)}") from err
    names = [str(name) for name in meta["fields"]]
    geometry = list(geometry) if geometry is not None else []
    layer = LineLayer([decode_lines(g) for g in geometry], geometry, meta.get("crs"),
                      dict(zip(names, field_data)), path)
    _check_has_lines(layer)
    return layer


def _check_has_lines(layer: LineLayer) -> None:
    if len(layer) == 0:
        raise ValueError(f"lines file {layer.path} holds no features")
    if not layer.line_indices():
        found = sorted({p for p in layer.parts if isinstance(p, str)}) or ["no geometry"]
        raise ValueError(f"lines file {layer.path} holds no LineString or MultiLineString features "
                         f"(found {', '.join(found)})")


def driver_for(path) -> str:
    """The GDAL driver of an output file, from its extension; ValueError for an unknown one."""
    suffix = Path(path).suffix.lower()
    if suffix not in DRIVERS:
        raise ValueError(f"output {path}: unknown format {suffix or '(no extension)'!r}; "
                         f"use one of {', '.join(sorted(set(DRIVERS)))}")
    return DRIVERS[suffix]


def write_line_layer(path, geometries, fields: dict, crs: str | None) -> dict[str, str]:
    """Write features atomically (a temporary file beside ``path``, then a rename).

    Parameters
    ----------
    path : str or os.PathLike
        ``.geojson`` / ``.json`` (RFC 7946, WGS84), ``.gpkg``, ``.shp`` or ``.fgb`` (in ``crs``).
    geometries : list
        Per feature, a list of (k, 2) vertex arrays in ``crs``, or WKB bytes written as they are.
    fields : dict of str to ndarray
        Attribute columns, each as long as ``geometries``.
    crs : str or None

    Returns
    -------
    dict of str to str
        The fields written under another name, ``{name: name written}``: a Shapefile's
        field names hold 10 bytes at most and must differ ignoring case (see
        :func:`shapefile_field_names`); empty for the other formats.
    """
    import pyogrio.raw

    path = Path(path)
    driver = driver_for(path)
    names = list(fields)
    if driver == "ESRI Shapefile":  # named as GDAL would, so that it renames nothing behind a raw warning
        names = shapefile_field_names(names, path)
    wkb = np.array([g if isinstance(g, (bytes, type(None))) else encode_lines(g) for g in geometries], dtype=object)
    # FlatGeobuf's spatial index would reorder the features: keep the input's order.
    options = {"GeoJSON": {"RFC7946": "YES"}, "FlatGeobuf": {"SPATIAL_INDEX": "NO"}}.get(driver, {})
    # a masked column (integers with nulls) goes as data and mask: GDAL's null, not a sentinel number
    masks = [np.ma.getmaskarray(v) if np.ma.isMaskedArray(v) else None for v in fields.values()]
    arrays = [np.ma.getdata(v) if np.ma.isMaskedArray(v) else np.asarray(v) for v in fields.values()]
    _remove_stale_folders(path)
    folder = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        temporary = folder / path.name
        try:
            pyogrio.raw.write(str(temporary), wkb, arrays, names, crs=crs, driver=driver,
                              field_mask=masks if any(m is not None for m in masks) else None,
                              geometry_type=_geometry_type(geometries), layer_options=options)
        except Exception as err:  # pyogrio's errors share no public base besides Exception
            raise OSError(f"cannot write {path}: {_short(_first_line(err))}") from err
        _check_written(temporary, len(geometries), path)
        for produced in sorted(folder.iterdir()):  # a shapefile is several files
            os.replace(produced, path.parent / produced.name)
    finally:
        for left in folder.iterdir():
            with contextlib.suppress(OSError):
                left.unlink()
        with contextlib.suppress(OSError):
            folder.rmdir()
    return {old: new for old, new in zip(fields, names) if old != new}


def shapefile_field_names(names, path="") -> list[str]:
    """The names that ``names`` get in a Shapefile, as GDAL's driver gives them, without its warnings.

    A dBASE field name holds 10 bytes: a longer name is cut (at a character's
    end: GDAL cut ``é`` in two, and the file could not be read again), trailing
    spaces dropped and ``:`` made ``_``; a name already taken, ignoring ASCII case,
    becomes its first 8 bytes and ``_1`` .. ``_9``, then ``10`` .. ``99``
    (``lane_number`` beside ``lane_numbe`` is ``lane_num_1``).  OSError naming
    ``path`` when 99 are taken.
    """
    taken, written = set(), []
    for name in names:
        radix = _cut_utf8(str(name), _DBF_NAME_BYTES).rstrip().replace(":", "_")
        candidate, number = radix, 1
        while candidate.encode().upper() in taken:  # GDAL compares upper-case (ASCII letters only)
            if number == 100:
                raise OSError(f"cannot write {path}: too many fields named like {name!r} once cut to "
                              f"{_DBF_NAME_BYTES} characters for a Shapefile")
            candidate = _cut_utf8(radix, _DBF_NAME_BYTES - 2) + (f"_{number}" if number < 10 else f"{number}")
            number += 1
        taken.add(candidate.encode().upper())
        written.append(candidate)
    return written


def _cut_utf8(text: str, size: int) -> str:
    """The longest start of ``text`` whose UTF-8 encoding holds at most ``size`` bytes."""
    return text.encode()[:size].decode(errors="ignore")


def _remove_stale_folders(path: Path) -> None:
    """Remove the ``.NAME.XXXXXXXX`` folders that an interrupted write of ``path`` (kill -9) left beside it.

    Only the files of that write (``path``'s name with any extension: a
    Shapefile is several) are removed, then the folder if nothing else is in it.
    """
    now = time.time()
    with contextlib.suppress(OSError):
        for folder in path.parent.glob(f".{glob.escape(path.name)}.*"):
            with contextlib.suppress(OSError):
                if folder.is_symlink() or not folder.is_dir():
                    continue
                touched = max([folder.stat().st_mtime] + [left.stat().st_mtime for left in folder.iterdir()])
                if now - touched <= STALE_TEMPORARY_S:  # another writer's, still being written
                    continue
                for left in folder.iterdir():
                    if left.stem == path.stem and left.is_file() and not left.is_symlink():
                        left.unlink()
                folder.rmdir()


def _check_written(temporary: Path, count: int, path: Path) -> None:
    """OSError naming ``path`` unless ``temporary`` reads back with ``count`` features.

    GDAL drops the write errors that come when it closes a file: a small layer
    is buffered until then, so on a full disk a Shapefile or FlatGeobuf was left
    empty and reported written (and then replaced a good ``path``).
    """
    import pyogrio

    try:
        found = pyogrio.read_info(str(temporary), force_feature_count=True)["features"]
    except Exception:  # as in write_line_layer; GDAL's words would name the hidden temporary file
        found, reason = None, "it does not open again"
    else:
        reason = f"{found} of its {count} features read back"
    if found != count:
        if _free_bytes(path.parent) == 0:
            reason = "no space left on the device"
        raise OSError(f"cannot write {path}: the file GDAL wrote is incomplete ({reason})")


def _free_bytes(folder: Path) -> int | None:
    try:
        stats = os.statvfs(folder)
    except (OSError, AttributeError):  # AttributeError: no statvfs on Windows
        return None
    return stats.f_bavail * stats.f_frsize


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


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__
