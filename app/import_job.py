"""Line import off the GUI thread, with progress and cancel, committed as one undoable step.

Any format :func:`core.vector.read_lines` reads (GeoJSON, GeoPackage, Shapefile, FlatGeobuf).

Reading a large file (tens of thousands of lines, each placed through the
image's georeference) takes seconds to minutes; on the GUI thread it froze
the window.  :func:`prepare_import` does all of it (read, place, check, build
the features) on any thread, reporting progress and stopping at the next
line once cancelled; only :meth:`app.model.tool.ExtractionTool.add_built_features`
runs on the GUI thread, in milliseconds.  :class:`ImportJob` runs it on a
worker of its own.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from app.model import editing
from app.model.pieces import ToolState, feature_vertices
from app.worker_job import WorkerJob
from core.cancel import Cancelled, CancelToken
from core.gc_pause import paused_collection
from core.io.geojson import GeoJSONError
from core.io.line_report import LinesRead
from core.vector import read_lines
from core.vector.export import COORDINATE_DECIMALS

__all__ = ["ImportJob", "PreparedImport", "WatchedRaster", "prepare_import"]

#: Progress is reported (and cancel checked) every this many lines.
PROGRESS_EVERY = 500
#: An import of this many lines or more runs the garbage collector's full pass on its worker when built (the
#: pass its long-lived features make due; :meth:`ImportJob._prepare`).
COLLECT_AFTER_LINES = 10_000


@dataclass
class PreparedImport:
    """Features ready to add: ``features`` and their pieces' ``outcomes``; ``outside``: how many lie off the image;
    ``again``: how many have the vertices of a feature already there (``repeated``: which, per feature)."""

    path: str
    features: list = field(default_factory=list)
    outcomes: dict = field(default_factory=dict)
    vertices: list = field(default_factory=list)  # each feature's feature_vertices, computed here
    outside: int = 0
    again: int = 0
    repeated: list = field(default_factory=list)
    read: str = ""  # what reading the file left out or changed (core.io.line_report.LinesRead.text)

    def without_repeated(self) -> PreparedImport:
        """The same import less the features already there."""
        keep = [k for k, seen in enumerate(self.repeated) if not seen]
        features = [self.features[k] for k in keep]
        pieces = {p.id for f in features for p in f.pieces}
        return PreparedImport(self.path, features, {k: v for k, v in self.outcomes.items() if k in pieces},
                              [self.vertices[k] for k in keep], self.outside, 0, [False] * len(keep), self.read)


class WatchedRaster:
    """An image's raster as :func:`core.vector.read_lines` sees it: counts the lines it places, stops once cancelled.

    Every line (or part) read is placed through ``lonlat_to_pixel`` (RFC 7946
    GeoJSON) or ``map_to_pixel`` (other files), so both check ``token`` and
    report progress every :data:`PROGRESS_EVERY` lines.
    """

    def __init__(self, raster, token: CancelToken | None, report):
        self._raster, self._token, self._report = raster, token, report
        self._placed = 0

    def __getattr__(self, name):
        return getattr(self._raster, name)

    def _count(self) -> None:
        _check(self._token)
        self._placed += 1
        if self._placed % PROGRESS_EVERY == 0:
            self._report(self._placed, 0, "placing the lines on the image")

    def lonlat_to_pixel(self, lon, lat):
        self._count()
        return self._raster.lonlat_to_pixel(lon, lat)

    def map_to_pixel(self, xs, ys):
        self._count()
        return self._raster.map_to_pixel(xs, ys)


def _check(token: CancelToken | None) -> None:
    if token is not None and token.cancelled:
        raise Cancelled("the reading was cancelled")


def prepare_import(path, document, tool, token: CancelToken | None = None, report=None) -> PreparedImport:
    """Read the lines of a vector file onto ``document`` and build them as features of ``tool`` (any thread).

    ``tool`` is read only (its features and outcomes as they are now) and asked
    for fresh ids.  ``report(done, total, phase)`` hears of progress (total 0:
    unknown yet).  Raises GeoJSONError for a file whose lines all lie off the
    image, and :class:`core.cancel.Cancelled` once ``token`` is cancelled.
    """
    report = report or (lambda done, total, phase: None)
    state, outcomes = ToolState(tool.features), tool.outcomes
    report(0, 0, "reading the file")
    counts = LinesRead()
    lines = read_lines(path, WatchedRaster(document.raster, token, report), counts)
    _check(token)
    on_image = [_touches_image(f.vertices_px, document.width, document.height) for f in lines]
    if lines and not any(on_image):
        raise GeoJSONError(f"none of the {len(lines)} lines in {Path(path).name} lies on {document.title}: "
                           "were they digitized on another image?")
    existing = set(_export_keys([feature_vertices(f, outcomes) for f in state.features], document.raster))
    repeated = [key in existing for key in _export_keys([f.vertices_px for f in lines], document.raster)]
    prepared = PreparedImport(str(path), outside=on_image.count(False), again=sum(repeated), repeated=repeated,
                              read=counts.text())
    ids = tool.new_ids(2 * len(lines))
    for start in range(0, len(lines), PROGRESS_EVERY):
        _check(token)
        report(start, len(lines), "building the features")
        chunk = [(f.name, f.vertices_px, f.properties) for f in lines[start:start + PROGRESS_EVERY]]
        features, built = editing.imported_features(ToolState(state.features + tuple(prepared.features)), chunk,
                                                    ids[2 * start:2 * (start + len(chunk))])
        prepared.features += features
        prepared.outcomes.update(built)
        prepared.vertices += [feature_vertices(f, built) for f in features]
    return prepared


def _touches_image(vertices, width: int, height: int) -> bool:
    """Whether a polyline's bounding box overlaps the image (a line beside it may pass, one far away may not)."""
    (x0, y0), (x1, y1) = vertices.min(axis=0), vertices.max(axis=0)
    return x1 >= 0 and y1 >= 0 and x0 <= width and y0 <= height


def _export_keys(lines, raster) -> list[tuple]:
    """Per (k, 2) pixel line a key, equal for lines that export to the same positions (a set: n + m, not n m).

    GeoJSON holds lon/lat, or a plain image's pixels, to 7 decimals (:mod:`core.vector.export`), so a line
    exported and imported again comes back as that rounding: the key is the lon/lat on a georeferenced image,
    the pixels otherwise, rounded as the export rounds them (rounding is idempotent, so the file's values give
    their own key; a coarser key would round a second time, and a value the export put on a half-step of it
    would miss its original's).
    """
    if not lines:
        return []
    vertices = np.concatenate([np.asarray(line, dtype=np.float64) for line in lines])
    try:
        if raster is not None and raster.georeferenced:  # one transform for all lines
            vertices = np.round(np.column_stack(raster.pixel_to_lonlat(*vertices.T)), COORDINATE_DECIMALS)
        else:
            vertices = np.round(vertices, COORDINATE_DECIMALS)
    except ValueError:  # core.io.raster.RasterError: positions PROJ cannot map (far off the image)
        vertices = np.round(vertices, COORDINATE_DECIMALS)
    vertices = vertices + 0.0  # + 0.0 turns -0.0 into 0.0
    ends = np.cumsum([len(line) for line in lines])[:-1]
    return [(part.shape, part.tobytes()) for part in np.split(vertices, ends)]


class ImportJob(WorkerJob):
    """One import of ``path`` onto ``document`` for ``tool`` (:func:`prepare_import` on a worker thread of its own).

    ``done(prepared)`` brings a :class:`PreparedImport` to add with ``tool.add_built_features`` (on the GUI thread);
    the other signals are :class:`app.worker_job.WorkerJob`'s.
    """

    def __init__(self, path, document, tool, parent=None):
        self.path, self.document, self.tool = str(path), document, tool
        super().__init__(self._prepare, "Could not import the lines", parent)

    def _prepare(self, token: CancelToken, report) -> PreparedImport:
        # Reading and building make only acyclic objects (core.gc_pause says why the collector waits meanwhile), but
        # the features built will live long: in their number (tens of thousands) they make a full pass of the
        # collector due, which otherwise came within the next allocations, in the import's finish or the first
        # paint after it on the GUI thread (175-250 ms at 50,000 lines).  It runs here, once, instead; not after a
        # small import, which makes none due (a full pass holds the interpreter lock, the GUI thread waiting).
        with paused_collection():
            prepared = prepare_import(self.path, self.document, self.tool, token, report)
        if len(prepared.features) >= COLLECT_AFTER_LINES:
            gc.collect()
        return prepared
