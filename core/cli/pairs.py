"""``linesnap extract --pairs FILE`` and ``--crs``: many extractions in one process, points in any CRS.

A pairs file is a CSV with columns ``start_x, start_y, end_x, end_y`` (or
``start`` and ``end`` holding ``"X Y"``; an optional ``name``), or a vector
file (GeoJSON, GeoPackage, ...) of lines whose first and last vertices are the
pair, in the file's own CRS.
"""

from __future__ import annotations

import csv
import math
import re
import sys
from pathlib import Path

import numpy as np

__all__ = ["CRS_CHOICES", "read_pairs", "run_pairs", "to_pixels"]

#: ``--crs`` values besides a CRS string.
CRS_CHOICES = ("pixel", "image")
_CSV_SUFFIXES = (".csv", ".txt")
#: A CSV's columns of a pair's points (the other layout: ``start`` and ``end`` holding ``"X Y"``).
_XY_COLUMNS = ("start_x", "start_y", "end_x", "end_y")


def to_pixels(points, raster, crs: str = "pixel") -> np.ndarray:
    """(n, 2) raster pixels of points given in ``crs``: ``pixel``, ``image`` (the raster's CRS) or a CRS string."""
    xy = np.asarray(points, np.float64).reshape(-1, 2)
    if crs == "pixel":
        return xy
    if crs != "image":
        from core.batch.frames import parse_crs, transform_xy

        parse_crs(crs)  # an unknown CRS fails here, naming it
        if raster.crs is None:
            raise ValueError(f"--crs {crs} needs a georeferenced image; {raster.path or 'the image'} has no CRS")
        xy = transform_xy(xy, crs, raster.crs.to_wkt())
        if not np.isfinite(xy).all():
            raise ValueError(f"some points have no position in the image's CRS (are they {crs}?)")
    x, y = raster.map_to_pixel(xy[:, 0], xy[:, 1])
    return np.column_stack([x, y])


def read_pairs(path, raster, crs: str = "pixel") -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``(name, start_px, end_px)`` of every pair of a pairs file.

    CSV coordinates are in ``crs``; a vector file's are in its own CRS (``crs``
    applies only when it has none).  ValueError for a missing, empty or malformed file.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"pairs file {path} does not exist")
    if path.suffix.lower() in _CSV_SUFFIXES:
        names, starts, ends = _csv_pairs(path)
        file_crs = crs
    else:
        names, starts, ends, file_crs = _vector_pairs(path, crs)
    if not names:
        raise ValueError(f"pairs file {path} holds no pairs")
    if file_crs not in CRS_CHOICES and crs not in CRS_CHOICES and file_crs != crs:
        print(f"linesnap: note: {path.name} is in {file_crs}; --crs {crs} does not apply to it", file=sys.stderr)
    both = to_pixels(np.concatenate([starts, ends]), raster, file_crs)
    return list(zip(names, both[:len(names)], both[len(names):]))


def _csv_pairs(path: Path):
    """Names, starts and ends of a CSV's pairs; blank rows (nothing but spaces and commas) are skipped.

    ValueError naming the file, and the line of a row that is not a pair of points.
    """
    names, starts, ends = [], [], []
    with path.open(newline="", encoding="utf-8-sig") as stream:
        reader = csv.reader(stream)
        rows = _filled_rows(path, reader)
        header = next(rows, None)
        columns = _pair_columns(path, [cell.strip() for cell in header or []])
        for row in rows:
            try:
                start, end = _row_points(row, columns)
            except ValueError as err:
                raise ValueError(f"pairs file {path}, line {reader.line_num}: not a pair of points ({err})") from None
            names.append(_cell(row, columns.get("name")) or str(len(names) + 1))
            starts.append(start)
            ends.append(end)
    return names, np.asarray(starts, np.float64).reshape(-1, 2), np.asarray(ends, np.float64).reshape(-1, 2)


def _filled_rows(path: Path, reader):
    """The rows of a CSV reader that hold something: an empty line, or a spreadsheet's ``,,,``, is no pair."""
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                yield row
    except UnicodeDecodeError as err:
        raise ValueError(f"pairs file {path} is not UTF-8 text ({err})") from None
    except csv.Error as err:
        raise ValueError(f"pairs file {path}, line {reader.line_num}: not CSV ({err})") from None


def _pair_columns(path: Path, header: list[str]) -> dict:
    """The column index of each field of a pair (and of ``name`` when there is one), from the header row.

    A file of no rows at all has no pairs (no columns needed).
    """
    if not header:
        return {}
    index = {name: k for k, name in enumerate(header)}
    for wanted in (_XY_COLUMNS, ("start", "end")):
        if set(wanted) <= set(index):
            return {name: index[name] for name in (*wanted, "name") if name in index}
    raise ValueError(f"pairs file {path} needs columns start_x, start_y, end_x, end_y "
                     f"(or start and end as 'X Y'); it has {', '.join(sorted(filter(None, header))) or 'none'}")


def _row_points(row: list[str], columns: dict) -> tuple[list[float], list[float]]:
    """``(start, end)`` of a CSV row; ValueError saying which value is missing or not a number."""
    values = {name: _cell(row, k) for name, k in columns.items() if name != "name"}
    missing = [name for name, text in values.items() if not text.strip()]
    if missing:
        raise ValueError(f"no value for {', '.join(missing)}")
    if "start" in values:
        return _point(values["start"]), _point(values["end"])
    x0, y0, x1, y1 = (_number(values[name], name) for name in _XY_COLUMNS)
    return [x0, y0], [x1, y1]


def _cell(row: list[str], k: int | None) -> str:
    """The text of column ``k`` of a row ("" where the row is short or there is no such column)."""
    return row[k] if k is not None and k < len(row) else ""


def _number(text: str, column: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):  # ('nan' and 'inf' are read by float() too)
        raise ValueError(f"{column} is not a number: {text.strip()!r}")
    return value


def _point(text: str) -> list[float]:
    values = [float(v) for v in re.split(r"[\s,;]+", str(text).strip()) if v]
    if len(values) != 2 or not all(map(math.isfinite, values)):
        raise ValueError(f"expected 'X Y'; got {text!r}")
    return values


def _vector_pairs(path: Path, crs: str):
    from core.batch.layers import read_line_layer

    layer = read_line_layer(path)
    indices = layer.line_indices()
    from core.io.geojson import name_key

    labels = layer.fields.get(name_key(layer.fields))
    names = [str(labels[k]) if labels is not None and labels[k] else str(k + 1) for k in indices]
    starts = np.array([layer.parts[k][0][0] for k in indices])
    ends = np.array([layer.parts[k][-1][-1] for k in indices])
    from core.batch.frames import is_pixel_crs

    if is_pixel_crs(layer.crs):  # LineSnap's own output on a plain image: pixels
        return names, starts, ends, "pixel"
    return names, starts, ends, layer.crs if layer.crs is not None else crs


def run_pairs(args, raster, settings) -> int:
    """``linesnap extract IMAGE --pairs FILE``: every pair extracted from the open raster, one feature each.

    A pair that fails is reported on stderr (``linesnap: pair NAME: ...``) and
    left out; the others are written, and the exit status is then 1.  Where every
    pair failed nothing is written (an earlier output stays as it was).
    """
    from core.extraction import extract
    from core.io.geojson import feature_from_result

    pairs = read_pairs(args.pairs, raster, args.crs)
    features, failed = [], 0
    for name, start, end in pairs:
        try:
            features.append(feature_from_result(extract(raster, start, end, settings), name))
        except (ValueError, RuntimeError, MemoryError) as err:
            failed += 1
            print(f"linesnap: pair {name}: {' '.join(str(err).split())}", file=sys.stderr)
    if pairs and not features:
        print(f"linesnap: error: none of the {len(pairs)} pairs could be extracted; nothing written", file=sys.stderr)
        return 1
    _write(args.output, features, raster)
    if args.output is not None:
        print(f"linesnap: wrote {args.output}: {len(features)} of {len(pairs)} pairs", file=sys.stderr)
    return 1 if failed else 0


def _write(output, features, raster) -> None:
    write_features(output, features, raster)


def write_features(output, features, raster) -> None:
    """LineFeatures to stdout (GeoJSON) or ``output``, in the format of its extension.

    ``.geojson``, ``.json`` or no extension (the command refuses others) is LineSnap's RFC 7946
    collection; ``.gpkg``, ``.shp`` and ``.fgb`` hold the raster's CRS (pixels with a local pixel CRS for a
    plain image), with ``name``, ``score`` and ``confidence`` as fields and the other properties as JSON text in one
    ``linesnap`` field (``pixel_coordinates`` is no property of a LineFeature: the geometry holds the positions).
    """
    from core.io.geojson import atomic_write_text, format_geojson, to_feature_collection

    if output is None or output.suffix.lower() not in (".gpkg", ".shp", ".fgb"):  # GeoJSON, as ever
        text = format_geojson(to_feature_collection(features, raster))
        if output is None:
            sys.stdout.write(text)
        else:
            atomic_write_text(output, text)
        return
    from core.vector import ExportLine, write_lines

    flat = ("score", "confidence")
    lines = [ExportLine(f.vertices_px, {"name": f.name, **{k: f.properties.get(k) for k in flat}},
                        {k: v for k, v in f.properties.items() if k not in flat}) for f in features]
    changes = write_lines(output, lines, raster).describe()
    if changes:  # (instead of GDAL's raw warnings)
        print(f"linesnap: warning: {output}: {changes}", file=sys.stderr)
