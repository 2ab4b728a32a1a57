"""Refine a line layer onto imagery: pieces between vertices, extracted on Dask, joined, written back.

Every input feature is written back with its properties and the refinement's
result: ``status``, ``confidence`` and the displacement ``dmean_px``,
``dmax_px``, ``dmean_m``, ``dmax_m`` (an input field of one of these names is
kept as ``input_<name>``).  A line that cannot be refined is written unchanged
with its status.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.batch.fields import FieldChanges
from core.batch.frames import is_pixel_crs, transform_wkb, transform_xy
from core.batch.joints import joined_parts, node_positions
from core.batch.layers import check_writable, driver_for, read_line_layer, write_line_layer
from core.batch.outcome import RESULT_COLUMNS, feature_outcomes, result_columns
from core.batch.plan import MIN_PIECE_PX, plan_pieces
from core.batch.runner import discard, run_tasks, task_key
from core.batch.sources import list_sources
from core.batch.work import refine_tile

__all__ = ["RefineReport", "assign_tiles", "coverage_px", "kept_input_fields", "refine_layer", "resume_dir_for"]

#: Pieces are grouped by raster tiles of this size (px): a task opens its raster once.
TILE_PX = 1024
#: Weight of a refined piece without a confidence, and the least weight of one with.
_DEFAULT_WEIGHT, _MIN_WEIGHT = 1.0, 0.05
#: The shift search of ``align`` (core.batch.shift.estimate_shift's keywords), chosen with bench_batch.
ALIGN = {"half_px": [16], "search_px": 10}


@dataclass
class RefineReport:
    """What a refinement did.

    Attributes
    ----------
    features : int
        Features written.
    statuses : dict of str to int
        Features per status.
    pieces : int
        Pieces extracted (or tried), computed now or resumed.
    pieces_resumed : int
        Of those, the ones whose result came from an interrupted run.
    compute_s : float
        Wall time of the extraction phase (s).
    total_s : float
        Wall time of the whole call (s).
    renamed_fields : core.batch.fields.FieldChanges
        Fields written under another name, ``{name: name written}``, and text
        cut or left out, as the format demanded (:meth:`FieldChanges.describe`).
    kept_fields : dict of str to str
        The input's fields named like a result column, kept under another name
        (:func:`kept_input_fields`), ``{name: name written}``.
    assumed_image_crs : bool
        The layer has no CRS and its coordinates were taken as in the (first)
        image's CRS, as File > Import Lines takes them; it is written back without one.
    dropped_z : bool
        The layer has Z values and some of its lines were refined: those are
        written in x and y only (the imagery has no heights).
    """

    features: int = 0
    statuses: dict = field(default_factory=dict)
    pieces: int = 0
    pieces_resumed: int = 0
    compute_s: float = 0.0
    total_s: float = 0.0
    renamed_fields: FieldChanges = field(default_factory=FieldChanges)
    kept_fields: dict = field(default_factory=dict)
    assumed_image_crs: bool = False
    dropped_z: bool = False


def resume_dir_for(output) -> Path:
    """The folder beside ``output`` that keeps finished work for a rerun."""
    output = Path(output)
    return output.parent / f".{output.name}.linesnap-resume"


def refine_layer(lines, images, output, settings=None, *, client_factory=None, progress=None,
                 max_piece_px: float = 100.0, min_piece_px: float = MIN_PIECE_PX, tile_px: int = TILE_PX,
                 align: bool = True) -> RefineReport:
    """Move every line of a layer onto the imagery and write the result.

    Parameters
    ----------
    lines : str or os.PathLike
        A vector file of LineStrings / MultiLineStrings (any format and CRS GDAL reads).
    images : sequence of str
        Rasters, folders of rasters, VRTs or ``http(s)://`` URLs of cloud-optimized GeoTIFFs.
    output : str or os.PathLike
        ``.geojson`` (WGS84), ``.gpkg``, ``.shp`` or ``.fgb`` (in the first image's CRS; a layer without a
        CRS, or rasters without one, in the layer's coordinates).
    settings : core.extraction.ExtractionSettings, optional
    client_factory : callable, optional
        Context manager giving a dask.distributed Client (default: a local cluster).
    progress : callable, optional
        ``progress(done_pieces, total_pieces)``.
    max_piece_px, min_piece_px : float
        Longest piece (longer straight parts are cut) and shortest piece extracted.
    tile_px : int
        Size of the raster tiles that group pieces into tasks.
    align : bool
        Move the pieces of each tile together by the shift that best centres them on their roads
        (core.batch.shift) before extracting them: a displaced layer is mostly shifted as a whole.

    Returns
    -------
    RefineReport

    Raises
    ------
    ValueError
        Bad inputs: unreadable or empty layers, no lines, unknown formats or CRSs, missing rasters.
    core.batch.runner.Interrupted
        On Ctrl+C; a rerun with the same output resumes.
    """
    from core.extraction import ExtractionSettings

    began = time.perf_counter()
    settings = ExtractionSettings() if settings is None else settings
    if settings.backend == "gpu":  # refused here, not in every worker after the cluster started
        from core.engine import resolve_backend

        resolve_backend("gpu")
    output = _checked_output(output, lines)
    layer = read_line_layer(lines)
    _check_shapefile_kinds(output, layer)
    sources = list_sources(images)
    reference = sources[0]
    indices = layer.line_indices()
    crs = layer.crs if layer.crs is not None else reference.crs  # no CRS: the image's, as File > Import takes it
    pixels = is_pixel_crs(layer.crs)  # LineSnap's exports of plain images: pixels of the (first) image
    parts_px = [part.copy() if pixels else _to_pixels(part, crs, reference)
                for k in indices for part in layer.parts[k]]
    # written in the (first) image's CRS, as DESIGN.md's contract has it; a layer without a CRS stays without,
    # except in GeoJSON, which holds WGS84 (GDAL clipped coordinates without a CRS to longitudes and latitudes)
    geojson = driver_for(output) == "GeoJSON"
    out_crs = layer.crs if pixels else reference.crs if layer.crs is not None or geojson else None
    geometries = transform_wkb(layer.wkb, crs, crs if out_crs is None else out_crs)  # before the work
    plan = plan_pieces(parts_px, max_piece_px, min_piece_px, coverage_px(sources, reference))
    tiles, placed = assign_tiles(plan, sources, reference, tile_px)
    tasks = {task_key(t): t for t in _tasks(tiles, settings, sources, ALIGN if align else None)}
    weights = {key: len(task["pieces"]) for key, task in tasks.items()}
    resume = resume_dir_for(output)
    run_began = time.perf_counter()
    kwargs = {} if client_factory is None else {"client_factory": client_factory}
    results, resumed = run_tasks(refine_tile, tasks, resume, progress=progress, weights=weights, **kwargs)
    compute_s = time.perf_counter() - run_began
    pieces = _piece_results(results, placed, sources, reference)
    refined = {p: (np.asarray(r["vertices_px"]), _weight(r)) for p, r in pieces.items() if r["status"] == "refined"}
    nodes = node_positions(plan, refined)
    outcomes = feature_outcomes(layer, indices, plan, pieces, joined_parts(plan, refined, nodes), reference)
    for k, outcome in outcomes.items():
        if outcome.parts_px is not None:
            geometries[k] = [p if pixels else reference.pixel_to_map(p) for p in outcome.parts_px]
    fields, kept = kept_input_fields(layer.fields)
    renamed = write_line_layer(output, geometries, {**fields, **result_columns(len(layer), outcomes)}, out_crs,
                               layer.fids, {kept.get(name, name): zones for name, zones in layer.tz_flags.items()})
    discard(resume)
    statuses = {}
    for k in range(len(layer)):
        status = outcomes[k].status if k in outcomes else "not_a_line"
        statuses[status] = statuses.get(status, 0) + 1
    return RefineReport(len(layer), statuses, sum(weights.values()), sum(weights[k] for k in list(results)[:resumed]),
                        compute_s, time.perf_counter() - began, renamed, kept,
                        layer.crs is None and reference.crs is not None,
                        layer.has_z and any(o.parts_px is not None for o in outcomes.values()))


def kept_input_fields(fields: dict) -> tuple[dict, dict]:
    """The input's fields with those named like a result column (ignoring case, as GeoPackage and Shapefile
    compare names) renamed ``input_<name>`` (then ``input_<name>_2``, ...), so that the results do not overwrite
    them: ``(fields, {name: new name})``.  A layer refined before keeps its earlier results so."""
    results = {name.lower() for name in RESULT_COLUMNS}
    taken = {name.lower() for name in fields} | results
    out, kept = {}, {}
    for name, values in fields.items():
        if name.lower() in results:
            new, number = f"input_{name}", 2
            while new.lower() in taken:
                new, number = f"input_{name}_{number}", number + 1
            taken.add(new.lower())
            kept[name] = name = new
        out[name] = values
    return out, kept


def _checked_output(output, lines) -> Path:
    output = Path(output)
    driver_for(output)
    if output.is_dir():
        raise ValueError(f"output {output} is a folder; give a file name such as {output / 'refined.gpkg'}")
    if not output.parent.is_dir():
        raise ValueError(f"output folder {output.parent} does not exist")
    source = Path(lines) if isinstance(lines, (str, os.PathLike)) else None
    if output.exists() and source is not None and source.exists() and output.samefile(source):
        raise ValueError(f"output {output} is the input layer, which the refined lines would replace; give "
                         "another file name")
    check_writable(output)  # before the work (it named a hidden temporary file after it)
    return output


#: What a Shapefile of lines holds besides lines: no geometry (nulls, and lines of one position, written so).
_SHAPEFILE_LINE_KINDS = ("empty LineString", "empty MultiLineString", "invalid geometry")


def _check_shapefile_kinds(output: Path, layer) -> None:
    """Refuse, before the work, a Shapefile output for a layer with features of another kind than lines: a
    Shapefile holds one kind, and every feature is written back (GDAL refused the points after the work)."""
    if driver_for(output) != "ESRI Shapefile":
        return
    kinds = {}
    for parts in layer.parts:
        if isinstance(parts, str) and parts not in _SHAPEFILE_LINE_KINDS:
            kinds[parts] = kinds.get(parts, 0) + 1
    if kinds:
        found = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
        raise ValueError(f"a Shapefile holds lines only, and the layer has features of other kinds ({found}), "
                         f"which refine writes back unchanged; give a .gpkg, .fgb or .geojson output instead")


def _to_pixels(part, layer_crs, reference) -> np.ndarray:
    """A part's vertices in the reference raster's pixels."""
    try:
        return reference.map_to_pixel(transform_xy(part, layer_crs, reference.crs))
    except ValueError as err:
        raise ValueError(f"cannot place the lines on {reference.path}: {err}") from None


#: How far (px) outside a raster a piece's end may come out of the reprojection and still count as on its border:
#: lines clipped at a tile's edge (as SpaceNet's are) end on it, and a round trip through another CRS leaves them
#: 1e-9 px either side, which made such lines off the image or partial by chance.
EDGE_TOLERANCE_PX = 1e-6


#: Samples along each edge of a raster when its outline is placed in the reference raster's pixels.
_OUTLINE_SAMPLES = 64


def coverage_px(sources, reference) -> tuple[float, float, float, float] | None:
    """``(x0, y0, x1, y1)`` in the reference raster's pixels around every raster, with a margin; None when a
    raster's outline cannot be placed there (then no part of a line is taken to be off them all).

    Lines beyond it cannot touch the imagery: :func:`core.batch.plan.plan_pieces` does not cut them.
    The margin (1 px and 1 % of the size) covers the bend of an outline reprojected between its samples.
    """
    corners = []
    for source in sources:
        t = np.linspace(0.0, 1.0, _OUTLINE_SAMPLES)[:, None]
        w, h = float(source.width), float(source.height)
        outline = np.concatenate([t * (w, 0.0), (w, 0.0) + t * (0.0, h), (0.0, h) + t * (w, 0.0), t * (0.0, h)])
        try:
            corners.append(_between(outline, source, reference))
        except ValueError:  # (a CRS that PROJ cannot relate to the reference's there)
            return None
    xy = np.concatenate(corners)
    if not np.isfinite(xy).all():
        return None
    low, high = xy.min(axis=0), xy.max(axis=0)
    margin = 1.0 + 0.01 * float((high - low).max())
    return (*(low - margin).tolist(), *(high + margin).tolist())


def assign_tiles(plan, sources, reference, tile_px: int = TILE_PX) -> tuple[dict, dict]:
    """The extracted pieces grouped by raster tile.

    Each piece goes to the raster that holds both its ends farthest from its
    border.  Returns ``tiles``: ``(source index, tile column, tile row)`` to
    rows ``[piece, start_x, start_y, end_x, end_y]`` in that raster's pixels,
    and ``placed``: piece to source index.
    """
    wanted = np.flatnonzero(plan.extract)
    ends = plan.nodes_px[plan.pieces[wanted]].reshape(-1, 2)
    best, best_margin, local = np.full(len(wanted), -1), np.full(len(wanted), -np.inf), {}
    for s, source in enumerate(sources):
        xy = _between(ends, reference, source).reshape(-1, 2, 2)
        margin = np.minimum.reduce([xy[..., 0], xy[..., 1], source.width - xy[..., 0],
                                    source.height - xy[..., 1]]).min(axis=1)
        better = (margin >= -EDGE_TOLERANCE_PX) & (margin > best_margin)
        best[better], best_margin[better], local[s] = s, margin[better], xy
    tiles, placed = {}, {}
    for j, piece in enumerate(wanted):
        s = int(best[j])
        if s < 0:
            continue
        xy = np.clip(local[s][j], 0.0, (sources[s].width, sources[s].height))  # (ends on the border: on it)
        tile = (s, *(int(v) for v in (xy.mean(axis=0) // tile_px)))
        tiles.setdefault(tile, []).append([int(piece), *xy.ravel().tolist()])
        placed[int(piece)] = s
    return tiles, placed


def _between(xy_px, source_a, source_b) -> np.ndarray:
    """Pixel positions of ``source_a`` in ``source_b``'s pixels."""
    if source_a is source_b:
        return xy_px
    return source_b.map_to_pixel(transform_xy(source_a.pixel_to_map(xy_px), source_a.crs, source_b.crs))


def _tasks(tiles: dict, settings, sources, align) -> list[dict]:
    return [{"source": sources[tile[0]].path, "settings": settings.to_dict(), "pieces": rows, "tile": list(tile),
             "align": align} for tile, rows in sorted(tiles.items())]


def _piece_results(results: dict, placed: dict, sources, reference) -> dict:
    """Per piece tried: its result with ``vertices_px`` in the reference raster's pixels."""
    out = {}
    for rows in results.values():
        for row in rows:
            row = dict(row)
            if row["vertices"] is not None:
                source = sources[placed[row["piece"]]]
                row["vertices_px"] = _between(np.asarray(row["vertices"], np.float64), source, reference)
            out[row["piece"]] = row
    return out


def _weight(result: dict) -> float:
    confidence = result.get("confidence")
    return _DEFAULT_WEIGHT if confidence is None else max(float(confidence), _MIN_WEIGHT)
