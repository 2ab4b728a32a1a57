"""LineSnap's main window: map and knapsack tabs, settings and features docks, status bar.

The window owns the long-lived pieces (tool model, extraction runner, tile
loader, open image) and connects them; what happens on a click lives in
:mod:`app.map.controller`, the model in :mod:`app.model.tool`, the menus in
:mod:`app.menus`.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings, QStandardPaths, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow, QScrollArea, QTabWidget, QVBoxLayout, QWidget

from app import dialogs, errors
from app.autosave import Autosaver, Snapshot
from app.docks.display import DisplayPanel
from app.docks.features import FeaturesPanel
from app.docks.layers import build_layers_dock
from app.docks.settings import SettingsPanel
from app.errors import report_exception, reports_errors
from app.io_actions import FeatureIO
from app.knapsack.panel import KnapsackPanel
from app.map.controller import ToolController
from app.map.runner import ExtractionRunner
from app.map.tile_loader import TileLoader
from app.map.viewer import RasterViewer
from app.menus import RecentFiles, build_menus
from app.model.document import ImageDocument, sample_scene_path
from app.model.tiles import compute_stretch
from app.model.tool import ExtractionTool
from app.project_actions import ProjectActions
from app.session import SessionError, SessionStore, has_unsaved_work, session_summary, state_from_dict
from app.status import PositionText, StatusBar, describe_position
from core.extraction import ExtractionSettings

__all__ = ["MainWindow", "default_config_dir"]

#: A piece or preview running longer than this (s) is shown in the status bar, with its time.
SHOW_BUSY_AFTER_S = 0.5
BUSY_POLL_MS = 250
#: The status bar while the warm-up extraction runs: the first one after an install compiles the
#: solver (34 s measured on a shared 2-core machine; later starts load it in about 2 s).
PREPARING_TEXT = "compiling the solver (once after an install: about 30 s on 2 cores)..."
#: The same when numba's cache was empty at launch (a child process compiles beside the warm-up).
COMPILING_TEXT = "first start after an install: compiling the extraction code on every core (about 30 s on 2 cores)..."
#: The Features dock's share of the height at start (px): the Settings dock gets what its content needs.
FEATURES_DOCK_PX = 150
#: Edits reach the autosave file this long after the first unwritten one (a stream of them too; a worker writes).
AUTOSAVE_DELAY_MS = 150


def default_config_dir() -> Path:
    """Where settings and the autosaved session live ($LINESNAP_CONFIG_DIR overrides)."""
    override = os.environ.get("LINESNAP_CONFIG_DIR")
    if override:
        return Path(override)
    return Path(QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericConfigLocation)) / "linesnap"


class MainWindow(QMainWindow):
    """The application window.

    Parameters
    ----------
    config_dir : path, optional
        Folder of the settings file and the autosaved session
        (default :func:`default_config_dir`).
    extract_fn : callable, optional
        ``extract_fn(document, start_xy, end_xy, settings, cancel=token)``, run
        on the extraction worker; default :meth:`ImageDocument.extract`.  The
        one place where the extraction is chosen (tests pass slow or failing ones).
    """

    def __init__(self, config_dir=None, extract_fn=None):
        super().__init__()
        self.config_dir = Path(config_dir) if config_dir is not None else default_config_dir()
        self.config_dir.mkdir(parents=True, exist_ok=True)
        self.qsettings = QSettings(str(self.config_dir / "linesnap.ini"), QSettings.Format.IniFormat)
        self.session = SessionStore.claim(self.config_dir)
        self.document: ImageDocument | None = None
        self.loader: TileLoader | None = None
        self._samples: dict = {}
        self.setWindowTitle("LineSnap")
        self.resize(1400, 900)
        self.viewer = RasterViewer()
        self.tabs = QTabWidget(documentMode=True)
        self.tabs.addTab(self.viewer, "Map")
        self.setCentralWidget(self.tabs)
        self._last_tab = 0
        self.settings_panel = SettingsPanel(self.qsettings)
        self.display_panel = DisplayPanel()
        self.tool = ExtractionTool(self.settings_panel.settings)
        self.runner = ExtractionRunner(extract_fn or ImageDocument.extract, self)
        self.controller = ToolController(self.tool, self.runner, self.viewer, self)
        self.features_panel = FeaturesPanel(self.tool)
        self.feature_io = FeatureIO(self)
        self.projects = ProjectActions(self)
        self.refine_job = None  # the line layer being refined on a worker (app.refine_job), if any
        self.status = StatusBar()
        self.setStatusBar(self.status)
        self._build_docks()
        self.undo_action, self.redo_action, self.guides_action, self.ribbon_action, self.recent_menu = build_menus(self)
        self.recent = RecentFiles(self.qsettings, self.recent_menu, self.open_image)
        self._connect()
        self.autosaver = Autosaver(self)
        self.autosaver.failed.connect(lambda message: self.status.showMessage(f"autosave failed: {message}", 10000))
        self._autosave_timer = QTimer(self, singleShot=True, interval=AUTOSAVE_DELAY_MS,
                                      timeout=self._autosave_in_background)
        self._busy_shown = False
        self._busy_timer = QTimer(self, interval=BUSY_POLL_MS, timeout=self._show_busy)
        self._busy_timer.start()
        self.add_tab(KnapsackPanel(), "Knapsack")
        self._report_set_aside(self.session.notices + self.settings_panel.notices + self.recent.notices)

    def _report_set_aside(self, notices: list[str]) -> None:
        """One dialog about damaged files found at start-up (set aside; the window opens anyway)."""
        if notices:
            errors.show_error(self, errors.ErrorReport("Damaged files were set aside", "\n\n".join(notices)))

    # ------------------------------------------------------------- layout
    def _build_docks(self) -> None:
        holder = QWidget()
        layout = QVBoxLayout(holder)
        layout.addWidget(self.settings_panel)
        layout.addWidget(self.display_panel)
        layout.addStretch(1)
        scroll = QScrollArea(widgetResizable=True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(holder)
        scroll.setMinimumWidth(holder.sizeHint().width() + scroll.verticalScrollBar().sizeHint().width() + 4)
        self.settings_dock = QDockWidget("Settings", self, objectName="settings_dock")
        self.settings_dock.setWidget(scroll)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.settings_dock)
        self.features_dock = QDockWidget("Features", self, objectName="features_dock")
        self.features_dock.setWidget(self.features_panel)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.features_dock)
        self.layers_dock = build_layers_dock(self, self.features_dock)
        # The settings whole (at 1400 x 900 the features list keeps about six rows), not cut through a row
        settings_px = holder.sizeHint().height() + 2 * scroll.frameWidth()
        self.resizeDocks([self.settings_dock, self.features_dock], [settings_px, FEATURES_DOCK_PX],
                         Qt.Orientation.Vertical)

    def add_tab(self, widget: QWidget, title: str) -> int:
        """Add a panel as a tab beside the map; returns its index."""
        return self.tabs.addTab(widget, title)

    def _connect(self) -> None:
        self.settings_panel.settings_changed.connect(self.tool.set_settings)
        self.tabs.currentChanged.connect(self._show_map_docks)
        self.tool.settings_restored.connect(lambda settings: self.settings_panel.show_settings(settings, announce=True))
        self.display_panel.bands_changed.connect(self._show_bands)
        self.display_panel.stretch_changed.connect(lambda *_: self._apply_stretch())
        self.display_panel.show_guides_changed.connect(self.controller.set_show_guides)
        self.display_panel.show_guides_changed.connect(self.guides_action.setChecked)
        self.display_panel.show_ribbon_changed.connect(self.controller.set_show_ribbon)
        self.display_panel.show_ribbon_changed.connect(self.ribbon_action.setChecked)
        self.features_panel.zoom_requested.connect(self.viewer.zoom_to_rect)
        self.features_panel.drawing_resumed.connect(self.viewer.setFocus)
        self.viewer.hovered.connect(self._show_position)
        self.controller.extraction_finished.connect(self.status.show_run)
        self.runner.idle.connect(self._on_runner_idle)
        self.controller.message.connect(lambda text: self.status.showMessage(text, 5000))
        for event in (self.tool.changed, self.tool.outcomes_changed, self.tool.fields_changed,
                      self.projects.references.changed):  # (fields and reference layers were lost in a crash)
            event.connect(self._schedule_autosave)
        self.tool.changed.connect(self.update_edit_actions)
        self.update_edit_actions()

    def update_edit_actions(self) -> None:
        """Undo and Redo edit the map's features: only on the map's tab, where their effect shows."""
        on_map = self.tabs.currentWidget() is self.viewer
        self.undo_action.setEnabled(on_map and self.tool.can_undo)
        self.redo_action.setEnabled(on_map and self.tool.can_redo)

    def _show_position(self, x: float, y: float, _straight: bool) -> None:
        raster = self.document.raster if self.document is not None else None
        self.status.show_position(describe_position(raster, x, y))

    # ---------------------------------------------------------- the image
    @reports_errors("Could not open the image")
    def open_image_dialog(self) -> None:
        folder = str(Path(self.document.path).parent) if self.document and self.document.path else ""
        path = dialogs.ask_open_image(self, folder)
        if path:
            self.open_image(path)

    def open_image(self, source) -> bool:
        """Show ``source`` (a path, an array, or None for the bundled sample); False on failure.

        Unexported features of the previous image are offered for export first
        (they are in that image's pixel coordinates).
        """
        try:
            document, loader = self._open_document(sample_scene_path() if source is None else source)
        except Exception as err:  # the GUI edge: a dialog, and the old image stays
            report_exception(self, "Could not open the image", err)
            return False
        keeps_work = self.projects.project is not None  # the project keeps the image left
        if self.document is not None and not keeps_work \
                and not self.feature_io.confirm_discard("opening another image"):
            loader.close()
            document.close()
            return False
        self._replace_image(document, loader)
        return True

    def _open_document(self, source) -> tuple[ImageDocument, TileLoader]:
        """The image and its tile loader (raises what opening ``source`` raises)."""
        document = ImageDocument(source)
        try:
            return document, TileLoader(document.source, parent=self)
        except Exception:
            document.close()
            raise

    def _replace_image(self, document: ImageDocument, loader: TileLoader) -> None:
        old_document, old_loader = self.document, self.loader
        self.projects.leave_image()
        self.runner.set_image(document)
        self.tool.clear()
        if old_loader is not None:
            old_loader.close()
        self.runner.wait()
        if old_document is not None:
            old_document.close()
        self.document, self.loader, self._samples = document, loader, {}
        loader.loaded.connect(self._on_loaded)
        loader.failed.connect(self._on_load_failed)
        self.viewer.set_loader(loader)
        self.display_panel.set_band_count(document.raster.band_count, document.raster.dtype == "uint8")
        self.settings_panel.set_band_count(document.raster.band_count)
        self.features_panel.set_raster(document.raster)
        self._show_bands(self.display_panel.selected_bands)
        self.setWindowTitle(f"LineSnap — {document.title}")
        self.status.clearMessage()  # a message about the previous image no longer applies
        self.status.show_position(PositionText())  # nor do its coordinates, until the cursor moves
        self.status.show_estimate(None)
        self.projects.enter_image(document)  # its settings (and in a project its work, view and layers)
        self.overviews.offer(document)  # a large image without overviews: File > Build Overviews...
        if document.path:
            self.recent.remember(document.path)
        self._warm_up(document)
        self.autosave()

    def _show_map_docks(self, index: int) -> None:
        """The map's docks (Settings, Features, Layers): hidden on other tabs, back as they were."""
        on_map = self.tabs.widget(index) is self.viewer
        self.status.show_map_readouts(on_map)  # (they mean nothing on another tab)
        for dock in (self.settings_dock, self.features_dock, self.layers_dock):
            if on_map:
                dock.setVisible(dock.property("shown_on_map") is not False)
            else:
                if self.tabs.indexOf(self.viewer) == self._last_tab:
                    dock.setProperty("shown_on_map", dock.isVisible())
                dock.hide()
        self._last_tab = index
        self.update_edit_actions()

    def _warm_up(self, document: ImageDocument) -> None:
        """One throw-away extraction, so that the first click finds the kernels compiled."""
        w, h = document.width, document.height
        if min(w, h) >= 64 and not self.runner.busy:
            # the first run after an install compiles the kernels (seconds): say so until it is done
            self.status.run_label.setText(PREPARING_TEXT)
            # few nodes and points, a usual click's length: small and large stages run other kernels
            settings = self.tool.settings
            light = settings.replace(nodes=min(settings.nodes, 8), points=min(settings.points, 33))
            half_px = max(24.0, min(0.15 * min(w, h), 150.0))
            self.runner.submit_warmup((w / 2 - half_px, h / 2), (w / 2 + half_px, h / 2), light)

    def _show_busy(self) -> None:
        """Long extractions (many points or nodes) say so, instead of leaving the last message up."""
        running = self.runner.running()
        shown = self.status.run_label.text()
        prefix = next((p for p in (PREPARING_TEXT, COMPILING_TEXT) if shown.startswith(p)), None)
        if running is not None and running[0] == "warmup" and prefix is not None:
            self.status.run_label.setText(f"{prefix} {running[1]:.0f} s")
        elif running is not None and running[0] != "warmup" and running[1] >= SHOW_BUSY_AFTER_S:
            hint = " (Esc stops it)" if running[0] == "piece" else ""
            self.status.run_label.setText(f"computing the {running[0]}... {running[1]:.0f} s{hint}")
            self._busy_shown = True
        elif running is None and self._busy_shown:
            self._busy_shown = False
            if self.status.run_label.text().startswith("computing"):
                self.status.run_label.setText("ready")

    def _on_runner_idle(self) -> None:
        if self.status.run_label.text().startswith((PREPARING_TEXT, COMPILING_TEXT)):
            self.status.run_label.setText("ready: click two points on the line")

    def _on_loaded(self, job, data) -> None:
        if isinstance(job, tuple) and job[0] == "sample":
            self._samples[job[1]] = data
            self._apply_stretch()

    def _on_load_failed(self, job, message: str) -> None:
        if isinstance(job, tuple):
            report_exception(self, "Could not read the image", RuntimeError(message))
        else:
            self.status.showMessage(f"could not read a tile: {message}", 5000)

    def _show_bands(self, bands) -> None:
        if self.loader is None:
            return
        self.viewer.set_display(bands, None)
        self._apply_stretch() if bands in self._samples else self.loader.request_sample(bands)

    def _apply_stretch(self) -> None:
        bands = self.display_panel.selected_bands
        if bands in self._samples:
            self.viewer.set_display(bands, compute_stretch(self._samples[bands], *self.display_panel.percentiles,
                                                           per_band=self.display_panel.per_band))

    def recent_files(self) -> list[str]:
        """Recently opened image paths, newest first."""
        return self.recent.paths()

    # ------------------------------------------------------------ session
    def _schedule_autosave(self) -> None:
        if not self._autosave_timer.isActive():  # (restarted by every edit, a burst 0.1 s apart was never written)
            self._autosave_timer.start()

    def _snapshot(self) -> Snapshot:
        return Snapshot.of(self.tool, self.session.path, self.document.path if self.document is not None else None,
                           self.projects.session_context())

    def _autosave_in_background(self) -> None:
        """Write the session on the autosave worker (edits: the GUI thread only takes a snapshot)."""
        self.autosaver.request(self._snapshot())

    def autosave(self) -> None:
        """Write the session now (the image and every feature), on this thread."""
        try:
            self.autosaver.save_now(self._snapshot())
        except OSError as err:
            self.status.showMessage(f"autosave failed: {err}", 10000)

    def restore_session_if_any(self) -> bool:
        """Offer to restore an autosaved session with unsaved work; True when restored.

        A session that cannot be restored (its image was moved or is on a drive
        not mounted now, a damaged file) stays where it is, to be offered again
        at the next start, and this window autosaves to another file.
        """
        data = self.session.load()
        if not has_unsaved_work(data):
            return False
        if not dialogs.ask_restore_session(self, session_summary(data)):
            self.session.clear()
            return False
        try:
            state, outcomes = state_from_dict(data, ExtractionSettings.from_dict, str(self.session.path))
            if data.get("image"):
                self._replace_image(*self._open_document(data["image"]))
        except SessionError as err:  # damaged: set aside, never offered again
            moved = self.session.set_aside(str(err))
            report_exception(self, "Could not restore the session", err,
                             note=f"The damaged session was moved to {moved}." if moved else "")
            return False
        except Exception as err:  # the GUI edge: a dialog, and the session is kept
            kept = self.session.path
            self.session.release()
            self.session = SessionStore.claim(self.config_dir, adopt=False)
            report_exception(self, "Could not restore the session", err,
                             note=f"The session stays in {kept} and is offered again at the next start.")
            return False
        self.tool.restore(state, outcomes)
        self.projects.restore_context(data)
        self.autosave()  # at once: opening the image wrote an empty session over this one
        return True

    # ------------------------------------------------------------- closing
    def closeEvent(self, event) -> None:
        if not self.feature_io.confirm_discard("closing"):
            event.ignore()
            return
        self.shutdown()
        self.session.clear()
        self.session.release()
        event.accept()

    def shutdown(self) -> None:
        """Stop the workers and close the image (no worker outlives the window)."""
        self._autosave_timer.stop()
        for job in (self.feature_io.job, self.projects.reference_job, self.refine_job, self.overviews.job):
            if job is not None:  # each stops at its next line read, raster tile refined or overview level
                job.cancel()
                job.wait()
        self.autosaver.wait()  # a write in flight finishes before the session file may be removed
        self.runner.shutdown()
        for index in range(self.tabs.count()):  # panels with workers of their own (the knapsack panel)
            if callable(stop := getattr(self.tabs.widget(index), "shutdown", None)):
                stop()
        if self.loader is not None:
            self.loader.close()
        if self.document is not None:
            self.document.close()
