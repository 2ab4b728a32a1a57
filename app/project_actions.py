"""File > Save / Open Project, recent projects, reference layers, and settings that belong to each image.

Settings per image: when an image is left, its settings are remembered (in the
settings file, by absolute path, and in the open project); an image opened
again gets its own back, a new image the defaults (the backend and solver, which
belong to the machine, stay).  They are never carried silently from one image
to the next: the status bar says which settings an image got.

With a project open, opening another image keeps the image left (its work
layer, settings, view and reference layers) in the project and writes the
project file, so nothing is lost by switching; an image the project holds comes
back as it was left.
"""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtWidgets import QMenu

from app import dialogs
from app.docks.layers import show_layers_dock
from app.errors import reports_errors
from app.map.reference_overlay import ReferenceOverlay
from app.model.reference import ReferenceLayers, load_reference_layer
from app.model.snapping import ReferenceTargets
from app.model.viewmath import ViewTransform
from app.project import ImageEntry, Project, ProjectError, load_project, work_of
from app.reference_job import start_reference
from app.session import SessionError, fields_from_session
from app.startup_checks import clean_recent_paths
from core.extraction import ExtractionSettings

__all__ = ["ProjectActions", "IMAGE_SETTINGS_KEY", "RECENT_PROJECTS_KEY", "MAX_IMAGES_REMEMBERED"]

IMAGE_SETTINGS_KEY = "extraction/per_image"
RECENT_PROJECTS_KEY = "recent_projects"
#: The settings of this many images are kept in the settings file (the most recently left).
MAX_IMAGES_REMEMBERED = 200
MAX_RECENT_PROJECTS = 8


class ProjectActions:
    """The project, the reference layers and the per-image settings of a :class:`app.main_window.MainWindow`."""

    def __init__(self, window):
        self.window = window
        self.parent_widget = window  # the parent of the error dialogs (app.errors.reports_errors)
        self.project: Project | None = None
        self.references = ReferenceLayers()
        self.overlay = ReferenceOverlay(self.references)
        window.viewer.overlay_painters.insert(0, self.overlay)  # under the work layer
        self.references.changed.connect(window.viewer.update)
        self._snap_cache = (None,)  # (layers, vertices, segments, targets) of the last snap query
        window.controller.editing.reference_targets = self._snap_targets
        window.settings_panel.settings_changed.connect(self._on_settings_changed)
        self.recent_menu: QMenu | None = None
        self.reference_job = None  # the reference layer being read on a worker (app.reference_job), if any
        self.image_actions: list = []  # menu actions that need an open image (app.menus): enabled once there is one
        self.queued_references: list[tuple] = []  # (path, colour, visible, kept) to read after it, in turn
        self.unread_references: list[dict] = []  # a project's or recovery's layers that failed to read (kept)

    def _snap_targets(self):
        """(vertices, segments, ReferenceTargets) px of the visible reference layers, kept until they change."""
        layers = self.references.layers
        if self._snap_cache[0] is not layers:
            vertices, segments = self.references.vertices_px(), self.references.segments_px()
            self._snap_cache = (layers, vertices, segments, ReferenceTargets(vertices, segments))
        return self._snap_cache[1:]

    # ---------------------------------------------------------- per image
    def _stored_settings(self) -> dict:
        text = self.window.qsettings.value(IMAGE_SETTINGS_KEY)
        try:
            stored = json.loads(text) if isinstance(text, str) else {}
        except ValueError:
            stored = {}
        return stored if isinstance(stored, dict) else {}

    def remember_settings(self, image_path: str, settings: ExtractionSettings) -> None:
        """Keep ``settings`` as those of ``image_path`` in the settings file (read again first and written at once:
        another LineSnap on the same settings file keeps its images' settings, which a stale copy replaced)."""
        self.window.qsettings.sync()
        stored = self._stored_settings()
        stored.pop(image_path, None)
        stored[image_path] = settings.to_dict()
        kept = dict(list(stored.items())[-MAX_IMAGES_REMEMBERED:])
        self.window.qsettings.setValue(IMAGE_SETTINGS_KEY, json.dumps(kept))
        self.window.qsettings.sync()

    def _on_settings_changed(self, settings: ExtractionSettings) -> None:
        document = self.window.document
        if document is not None and document.path:
            self.remember_settings(document.path, settings)

    def settings_for(self, image_path: str | None) -> tuple[ExtractionSettings, str]:
        """The settings an image opens with and where they come from ("project", "image", "defaults")."""
        current = self.window.tool.settings
        entry = self.project.entry(image_path) if self.project is not None and image_path else None
        if entry is not None:
            return entry.settings, "project"
        values = self._stored_settings().get(image_path) if image_path else None
        if isinstance(values, dict):
            try:
                return ExtractionSettings.from_dict({**values, "band": values.get("band")}), "image"
            except (TypeError, ValueError):
                pass  # stored by another version: the defaults
        return ExtractionSettings(backend=current.backend, solver=current.solver), "defaults"

    def leave_image(self) -> None:
        """Before another image replaces the open one: in a project, keep all of it (the project is written)."""
        document = self.window.document
        if document is not None and document.path and self.project is not None:
            self.project.put(self.current_entry())
            self._write_project()

    def enter_image(self, document) -> None:
        """After ``document`` became the open image: its settings, and in a project its work, view and layers."""
        window = self.window
        for action in self.image_actions:
            action.setEnabled(True)
        self.references.clear()
        self.queued_references.clear()  # the previous image's (one being read now is dropped when done)
        self.unread_references.clear()
        settings, source = self.settings_for(document.path)
        window.settings_panel.show_settings(settings, announce=True)
        entry = self.project.entry(document.path) if self.project is not None and document.path else None
        if entry is not None:
            self.project.active = entry.path
            window.tool.restore(*entry.tool_state(f"{self.project.path}: {Path(entry.path).name}"))
            window.tool.restore_fields(entry.fields)
            window.tool.mark_saved()
            if entry.view is not None:
                window.viewer.set_transform(ViewTransform(**entry.view))
            self.queue_references(entry.references)
        names = {"project": "the project's settings", "image": "this image's last settings",
                 "defaults": "the default settings (a new image)"}
        window.status.showMessage(f"{document.title}: {names[source]}", 8000)

    def current_entry(self) -> ImageEntry:
        """The open image as a project entry (work layer, settings, view, reference layers)."""
        window = self.window
        t = window.viewer.transform
        return ImageEntry(window.document.path, window.tool.settings,
                          {"scale": t.scale, "origin_x": t.origin_x, "origin_y": t.origin_y},
                          work_of(window.tool), self.reference_entries(), window.tool.fields)

    def session_context(self) -> dict:
        """What the crash autosave keeps besides the work layer: the project and reference layers (absolute)."""
        return {"project": self.project.path if self.project is not None else None,
                "references": self.reference_entries()}

    def reference_entries(self) -> list[dict]:
        """The reference layers as project entries (``path``, ``colour``, ``visible``): those shown, then the
        one being read and those queued after it, then those of the project that could not be read (a file
        missing for now), so that saving while they load, or while one is missing, drops none of them."""
        job = self.reference_job
        reading = [job.entry] if job is not None and not job.token.cancelled and job.entry is not None else []
        queued = [{"path": path, "colour": colour, "visible": bool(visible)}
                  for path, colour, visible, _ in self.queued_references]
        return self.references.to_list() + reading + queued + self.unread_references

    def restore_context(self, session: dict) -> None:
        """After a crash recovery: the project and reference layers the session names (what cannot be read is said)."""
        problems = []
        try:
            self.window.tool.restore_fields(fields_from_session(session))
        except SessionError as err:
            problems.append(str(err))
        if isinstance(session.get("project"), str):
            try:
                self.project = load_project(session["project"])
            except ProjectError as err:
                problems.append(str(err))
        references = session.get("references") or []
        if not isinstance(references, list) or not all(isinstance(r, dict) and isinstance(r.get("path"), str)
                                                       for r in references):
            problems.append("reference layers: not a list of {'path': ...} entries")
        elif references and self.window.document is None:
            problems.append("reference layers: no image to put them onto")
        else:
            self.queue_references(references)  # read on a worker; a file that cannot be read is an error dialog
        if problems:
            self.window.status.showMessage("; ".join(problems), 15000)

    # ----------------------------------------------------------- projects
    def save_project(self, path) -> None:
        """Write the project (every image it holds, the open one as it is now) to ``path``."""
        window = self.window
        if window.document is None or not window.document.path:
            raise ProjectError("open an image file before saving a project: a project keeps the image by its path, "
                               "and " + ("no image is open" if window.document is None else
                                         f"{window.document.title} was not opened from a file"))
        project = self.project or Project()
        project.put(self.current_entry())
        project.active = window.document.path
        project.save(path)
        self.project = project
        window.tool.mark_saved()
        self._remember_project(project.path)
        window.status.showMessage(f"project saved to {project.path}", 8000)

    def _write_project(self) -> None:
        if self.project is not None and self.project.path:
            self.project.save(self.project.path)

    def open_project(self, path) -> bool:
        """Open a project: its active image (else its first) with its work, settings, view and layers."""
        project = load_project(path)
        image = project.active or next(iter(project.images), None)
        if image is None:
            raise ProjectError(f"{project.path}: the project holds no image")
        if not self.window.feature_io.confirm_discard("opening a project"):
            return False
        previous, self.project, dirty = self.project, project, self.window.tool.dirty
        self.window.tool.mark_saved()  # asked already: opening the image must not ask again
        if not self.window.open_image(image):  # (the work stays on screen, and unsaved: a close must still ask)
            self.project, self.window.tool.dirty = previous, dirty
            return False
        self._remember_project(project.path)
        return True

    @reports_errors("Could not save the project")
    def save_dialog(self) -> None:
        suggestion = self.project.path if self.project is not None and self.project.path else ""
        path = dialogs.ask_project_path(self.window, True, suggestion)
        if path:
            self.save_project(path)

    @reports_errors("Could not save the project")
    def save_dialog_to(self, path) -> None:
        """:meth:`save_project` to ``path``, an error as a dialog (the work then stays unsaved)."""
        self.save_project(path)

    @reports_errors("Could not open the project")
    def open_dialog(self) -> None:
        path = dialogs.ask_project_path(self.window, False, "")
        if path:
            self.open_project(path)

    @reports_errors("Could not open the project")
    def open_recent(self, path: str) -> None:
        self.open_project(path)

    def recent_projects(self) -> list[str]:
        """Recently saved or opened projects, newest first."""
        return clean_recent_paths(self.window.qsettings.value(RECENT_PROJECTS_KEY), MAX_RECENT_PROJECTS)[0]

    def _remember_project(self, path: str) -> None:
        recent = [path] + [p for p in self.recent_projects() if p != path]
        self.window.qsettings.setValue(RECENT_PROJECTS_KEY, recent[:MAX_RECENT_PROJECTS])
        self.update_recent_menu()

    def update_recent_menu(self) -> None:
        """Fill File > Open Recent Project."""
        if self.recent_menu is None:
            return
        self.recent_menu.clear()
        for path in self.recent_projects():
            self.recent_menu.addAction(Path(path).name, lambda p=path: self.open_recent(p)).setToolTip(path)
        self.recent_menu.setEnabled(bool(self.recent_projects()))

    # ---------------------------------------------------- reference layers
    def add_reference(self, path) -> None:
        """Show a vector file, reprojected onto the open image, as a read-only layer under the work layer.

        Reads on this thread (scripts); File > Add Reference Layer, projects and
        crash recovery read on a worker (:meth:`start_reference`, :meth:`queue_references`).
        """
        self.add_loaded_reference(self._load_reference(path, None, True), added=False)

    def start_reference(self, path):
        """Read ``path`` as a reference layer on a worker, with a progress dialog whose Cancel stops it.

        The layer is added when the reading is done; returns the running
        :class:`app.reference_job.ReferenceJob`, or None when another layer is
        being read: this one is queued after it.
        """
        if self.window.document is None:
            raise ProjectError("open the image the reference layer goes onto first")
        if self.reference_job is not None:
            self.queued_references.append((str(path), None, True, False))
            return None
        return start_reference(self, path)

    def queue_references(self, entries) -> None:
        """Read the layers of project or session ``entries`` (``path``, ``colour``, ``visible``) on a worker,
        one after another in their order (bottom first), after any being read now."""
        self.queued_references += [(e["path"], e.get("colour"), e.get("visible", True), True) for e in entries]
        self.start_next_reference()

    def start_next_reference(self) -> None:
        """Start reading the next queued layer, unless one is being read (it starts the next when it ends)."""
        if self.reference_job is None and self.queued_references and self.window.document is not None:
            path, colour, visible, kept = self.queued_references.pop(0)
            start_reference(self, path, colour, bool(visible), kept)

    def add_loaded_reference(self, layer, added: bool = True) -> None:
        """Put a layer read already on top of the others (unless ``added`` already) and say so."""
        if added:
            self.references.add(layer)
            show_layers_dock(self.window)
        self.window.status.showMessage(f"reference layer {layer.name}: {len(layer.lines_px)} lines", 8000)

    def _load_reference(self, path, colour, visible: bool):
        if self.window.document is None:
            raise ProjectError("open the image the reference layer goes onto first")
        layer = load_reference_layer(path, self.window.document.raster, colour or self.references.next_colour())
        self.references.add(layer)
        show_layers_dock(self.window)  # added, or brought back by a project or a recovery
        if not visible:
            self.references.set_visible(len(self.references.layers) - 1, False)
        return layer

    @reports_errors("Could not add the reference layer")
    def reference_dialog(self) -> None:
        document = self.window.document
        folder = str(Path(document.path).parent) if document is not None and document.path else ""
        path = dialogs.ask_reference_path(self.window, folder)
        if path:
            self.start_reference(path)
