"""Export and import of features (GeoJSON, GeoPackage, Shapefile, FlatGeobuf); the question before work is lost."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QCoreApplication

from app import dialogs
from app.errors import reports_errors
from app.import_job import ImportJob, prepare_import
from app.model.attributes import export_types, export_values, with_imported_values
from app.model.document import sample_scene_path
from app.worker_job import start_with_progress
from core.io.geojson import GeoJSONError, LineFeature
from core.vector import ExportLine, export_format, write_lines

__all__ = ["FeatureIO", "feature_properties"]

PENDING_WAIT_S = 30.0


def feature_properties(tool, feature) -> dict:
    """JSON-able properties of a feature: score, backend, settings, timings, confidence, estimate and its pieces.

    A feature imported whole and not extended keeps the properties it was
    imported with, so export -> import -> export is stable.  An imported line
    that was extended keeps its file's attributes too (a road's id, type,
    lanes), under LineSnap's own properties, which describe it now.
    """
    outcomes = [tool.outcomes.get(p.id) for p in feature.pieces if p.kind in ("imported", "edited")]
    imported = [o.details["properties"] for o in outcomes if o is not None and "properties" in o.details]
    carried = {k: v for properties in imported for k, v in properties.items() if k != "name"}
    if len(feature.pieces) == 1 and imported:
        return carried
    return {**carried, **_drawn_properties(tool, feature)}


def _drawn_properties(tool, feature) -> dict:
    """LineSnap's properties of a feature made of pieces: score, backend, settings, timings, confidence, pieces.

    As in the command line's features (``core.io.geojson.feature_from_result``),
    ``estimate`` and ``confidence`` are present where known, and ``confidence``
    equals ``estimate["confidence"]``: the feature's are those of its least
    confident piece; every piece's own are in ``pieces`` (null where unknown).
    """
    pieces = []
    for piece in feature.pieces:
        outcome = tool.outcomes.get(piece.id)
        estimate = outcome.estimate if outcome is not None else None
        pieces.append({
            "kind": piece.kind,
            "status": outcome.status if outcome is not None else "pending",
            "score": outcome.score if outcome is not None else None,
            "backend": outcome.backend if outcome is not None else "",
            "method": outcome.method if outcome is not None else "",
            "settings": piece.settings.to_dict() if piece.settings is not None else None,
            "timings_ms": dict(outcome.timings_ms) if outcome is not None else {},
            "error": outcome.error if outcome is not None else "",
            "estimate": estimate.to_dict() if estimate is not None else None,
            "confidence": outcome.confidence if outcome is not None else None,
        })
    extracted = [p for p in pieces if p["kind"] == "extract"]
    properties = {
        "score": tool.feature_score(feature),
        "backend": ", ".join(sorted({p["backend"] for p in extracted if p["backend"]})),
        "settings": extracted[-1]["settings"] if extracted else None,
        "timings_ms": {"total": sum(p["timings_ms"].get("total", 0.0) for p in extracted)},
    }
    rated = [p for p in pieces if p["confidence"] is not None]
    if rated:  # as the command line: present where known
        weakest = min(rated, key=lambda p: p["confidence"])
        if weakest["estimate"] is not None:
            properties["estimate"] = weakest["estimate"]
        properties["confidence"] = weakest["confidence"]
    return {**properties, "pieces": pieces}


class FeatureIO:
    """File > Import / Export GeoJSON and the unsaved-work question of a :class:`MainWindow`."""

    def __init__(self, window):
        self.window = window
        self.parent_widget = window
        self.last_path: str | None = None
        self._exported: dict[str, str] = {}  # image path -> where its lines were exported last
        self.job: ImportJob | None = None  # the import running on a worker, if any

    @property
    def tool(self):
        return self.window.tool

    def wait_for_pieces(self, timeout_s: float | None = None) -> bool:
        """Let running extractions finish (events keep flowing); False on timeout (default :data:`PENDING_WAIT_S`)."""
        deadline = time.monotonic() + (PENDING_WAIT_S if timeout_s is None else timeout_s)
        while self.window.runner.busy and time.monotonic() < deadline:
            QCoreApplication.processEvents()
            time.sleep(0.002)
        return not self.window.runner.busy

    def line_features(self) -> list:
        """The finished features as ``core.io.geojson.LineFeature`` (the feature in progress is finished first)."""
        self.tool.finish()
        if not self.wait_for_pieces():  # (their straight stand-ins were written, and the work marked saved)
            pending = sum(self.tool.is_pending(p) for f in self.tool.features for p in f.pieces)
            raise RuntimeError(f"{pending} piece(s) are still being extracted after {PENDING_WAIT_S:g} s; nothing "
                               "was written: wait for them (or cancel them with Esc) and export again")
        features = []
        for feature in self.tool.features:
            vertices = self.tool.feature_vertices(feature)
            if len(vertices) >= 2:
                properties = {**feature_properties(self.tool, feature), **export_values(self.tool.fields, feature)}
                features.append(LineFeature(vertices, feature.name, properties))
        return features

    def export_geojson(self, path) -> int:
        """Write every feature to ``path`` atomically, in the format of its extension; returns how many.

        Every format is :func:`core.vector.write_lines`'s, as the command line
        writes it: ``.geojson`` RFC 7946 (WGS84, 7 decimals, ids from 1);
        ``.gpkg``, ``.shp``, ``.fgb`` in the image's CRS.  Flat fields (name,
        score, backend, confidence, the layer's attribute fields); the other
        extraction details (settings, timings, estimate, pieces) as JSON text in
        one ``linesnap`` field, which import unpacks again.  A GeoPackage keeps
        its other layers; fields the format renames or cuts are named in the status message.
        """
        raster = self.window.document.raster if self.window.document is not None else None
        export_format(path)  # an unknown extension is refused before the feature in progress is finished
        features = self.line_features()
        changes = write_lines(path, [_export_line(f) for f in features], raster,
                              field_types=export_types(self.tool.fields))
        if self.window.projects.project is None:  # (with a project open, saving it is what saves the work)
            self.tool.mark_saved()
        self.last_path = str(path)
        if self.window.document is not None and self.window.document.path:
            self._exported[self.window.document.path] = str(path)
        self.window.autosave()
        message = f"exported {len(features)} features to {path}"
        if changes.describe():  # fields the format renamed or cut: said once, instead of GDAL's raw warnings
            message += f"; {changes.describe()}"
        self.window.status.showMessage(message, 30000 if changes.describe() else 8000)
        return len(features)

    def import_geojson(self, path) -> list:
        """Add the lines of a GeoJSON file (LineSnap's own, or RFC 7946 lines of other tools) as editable features.

        Lines are placed by their geometry on the open image (lon/lat through
        its georeference).  Nothing is added when no line touches the image;
        lines beside it are added and counted in the status message.  Runs on
        this thread; File > Import runs the same on a worker (:meth:`import_dialog`).
        """
        return self._add_import(prepare_import(path, self._document_for_import(), self.tool))

    def _document_for_import(self):
        if self.window.document is None:
            raise GeoJSONError("open the image the lines belong to before importing them")
        return self.window.document

    def _add_import(self, prepared) -> list:
        """Add prepared features (one undoable step; lines already here skipped if the user says so) and say so."""
        again = prepared.again
        answer = dialogs.ask_skip_duplicates(self.window, again, len(prepared.features)) if again else "add"
        if answer == "cancel":
            self.window.status.showMessage(f"import of {Path(prepared.path).name} cancelled", 8000)
            return []
        if answer == "skip":
            prepared = prepared.without_repeated()
        added, outcomes = with_imported_values(self.tool.fields, prepared.features, prepared.outcomes)
        self.tool.add_built_features(added, outcomes, prepared.vertices)
        message = f"imported {len(added)} feature{'' if len(added) == 1 else 's'} from {Path(prepared.path).name}"
        if not prepared.features and not prepared.outside and not again:
            message += ": the file holds no lines"
        if prepared.outside:
            message += f"; {prepared.outside} of them lie outside the image"
        if prepared.read:
            message += f"; {prepared.read}"
        if again:
            message += (f"; {again} already here skipped" if answer == "skip"
                        else f"; {again} of them were already here: Ctrl+Z takes the import back")
        self.window.status.showMessage(message, 15000)
        return added

    def start_import(self, path) -> ImportJob:
        """Import on a worker, with a progress dialog whose Cancel stops it; returns the running job."""
        self.job = ImportJob(path, self._document_for_import(), self.tool, self.window)

        def end() -> None:
            self.job = None

        return start_with_progress(self.window, self.job, "Import lines", f"import of {Path(path).name}", "lines",
                                   self._add_import, end)

    @reports_errors("Could not export the lines")
    def export_dialog(self) -> None:
        path = dialogs.ask_export_path(self.window, self._suggestion())
        if path:
            self.export_geojson(path)

    @reports_errors("Could not import the lines")
    def import_dialog(self) -> None:
        # where the last export went, else the image's folder (not the folder LineSnap was started from)
        path = dialogs.ask_import_path(self.window, str(Path(self._suggestion()).parent))
        if path:
            self.start_import(path)

    def _suggestion(self) -> str:
        """The file this image's lines went to last, else one named after the image.

        In the folder of the last export, else beside the image, unless the image
        is the bundled sample (inside the package): then the home folder.
        """
        document = self.window.document
        image = document.path if document is not None else None
        if image in self._exported:
            return self._exported[image]
        suffix = Path(self.last_path).suffix if self.last_path else ".geojson"
        name = (Path(image).stem if image else "features") + suffix
        if self.last_path:
            folder = Path(self.last_path).parent
        elif image and not _is_inside(image, sample_scene_path().parent):
            folder = Path(image).parent
        else:
            folder = Path.home()
        return str(folder / name)

    def confirm_discard(self, what: str) -> bool:
        """Before work would be lost: True to go on (exported or discarded), False to stay."""
        tool = self.tool
        if not tool.dirty or not (tool.features or (tool.current is not None and tool.current.pieces)):
            return True
        projects, document = self.window.projects, self.window.document
        project = projects.project.path if projects.project is not None and document and document.path else None
        # with a project open, Save writes the project (an export left it stale, and marked the work saved)
        answer = dialogs.ask_unsaved(self.window, what, *([Path(project).name] if project else []))
        if answer == "save":
            if project:
                projects.save_dialog_to(project)
            else:
                self.export_dialog()
            return not tool.dirty
        return answer == "discard"


def _export_line(feature: LineFeature) -> ExportLine:
    """A LineFeature as flat fields (name, score, confidence and the file's own flat attributes) + details."""
    flat = {k: v for k, v in feature.properties.items() if v is None or isinstance(v, (str, int, float, bool))}
    details = {k: v for k, v in feature.properties.items() if k not in flat}
    return ExportLine(feature.vertices_px, {"name": feature.name, **flat}, details or None)


def _is_inside(path: str, folder: Path) -> bool:
    try:
        return Path(path).resolve().is_relative_to(folder.resolve())
    except OSError:
        return False

