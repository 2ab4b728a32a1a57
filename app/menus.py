"""The main window's menus (File, Edit, View, Help) and its list of recently opened images."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, NamedTuple

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

from app import dialogs
from app.map.viewer import KEY_ZOOM
from app.model.history import DEFAULT_UNDO_LIMIT
from app.overviews import OverviewActions
from app.refine_job import refine_dialog
from app.startup_checks import clean_recent_paths, set_aside_value

__all__ = ["MAX_RECENT", "UNDO_LIMIT_KEY", "UNDO_LIMIT_RANGE", "Menus", "RecentFiles", "add_action", "build_menus",
           "stored_undo_limit"]

MAX_RECENT = 8
RECENT_KEY = "recent_files"
SNAP_TOLERANCE_KEY = "snap_tolerance_px"
UNDO_LIMIT_KEY = "undo_limit"
#: The undo steps the user may keep: a step costs what the edit changed (1-4 KiB at 100,000 lines, an import of
#: many lines their own size), so 10,000 steps are tens of MB; fewer than one would leave nothing to undo.
UNDO_LIMIT_RANGE = (1, 10_000)


class Menus(NamedTuple):
    """The actions and menus the window updates after :func:`build_menus`."""

    undo: QAction
    redo: QAction
    guides: QAction
    ribbon: QAction
    recent: QMenu


def add_action(window, menu: QMenu, text: str, slot: Callable, shortcut=None, viewer_only: bool = False,
               checkable: bool = False) -> QAction:
    """Add an action that calls ``slot()`` (``slot(checked)`` when ``checkable``) to ``menu``.

    Parameters
    ----------
    window : MainWindow
        The action's parent; ``window.viewer`` takes the ``viewer_only`` ones.
    shortcut : str, QKeySequence.StandardKey or list of them, optional
    viewer_only : bool
        The shortcut works only while the map has the focus (keys that text
        fields need too: Enter, Esc, Backspace, Delete, G, R).
    """
    action = QAction(text, window, checkable=checkable)
    action.triggered.connect(lambda checked=False: slot(checked) if checkable else slot())
    if shortcut is not None:
        shortcuts = shortcut if isinstance(shortcut, list) else [shortcut]
        keys = {QKeySequence(s).toString(): QKeySequence(s) for s in shortcuts}  # (a platform's standard key may
        action.setShortcuts([key for text, key in keys.items() if text])  # be empty, or the one given beside it)
    if viewer_only:
        action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        window.viewer.addAction(action)
    menu.addAction(action)
    return action


def build_menus(window) -> Menus:
    """Fill the menu bar of ``window`` (a :class:`app.main_window.MainWindow` with its panels built).

    Also gives the window its ``overviews`` (:class:`app.overviews.OverviewActions`, File > Build Overviews...).
    """
    bar, tool, viewer = window.menuBar(), window.tool, window.viewer
    file_menu = bar.addMenu("&File")
    add_action(window, file_menu, "&Open Image...", window.open_image_dialog, QKeySequence.StandardKey.Open)
    recent = file_menu.addMenu("Open &Recent")
    add_action(window, file_menu, "Open &Sample Scene", lambda: window.open_image(None))
    file_menu.addSeparator()
    projects = window.projects
    add_action(window, file_menu, "Open &Project...", projects.open_dialog, "Ctrl+Shift+O")
    projects.recent_menu = file_menu.addMenu("Open Recent Pro&ject")
    projects.update_recent_menu()
    projects.image_actions = [  # (disabled until an image is open: ProjectActions.enter_image)
        add_action(window, file_menu, "Sa&ve Project...", projects.save_dialog, QKeySequence.StandardKey.Save),
        add_action(window, file_menu, "Add Re&ference Layer...", projects.reference_dialog, "Ctrl+Shift+R")]
    file_menu.addSeparator()
    projects.image_actions += [
        add_action(window, file_menu, "&Import Lines...", window.feature_io.import_dialog, "Ctrl+I"),
        add_action(window, file_menu, "&Export Lines...", window.feature_io.export_dialog, "Ctrl+E"),
        add_action(window, file_menu, "Re&fine Lines onto Image...", lambda: refine_dialog(window))]
    for action in projects.image_actions:
        action.setEnabled(window.document is not None)
    file_menu.addSeparator()
    window.overviews = OverviewActions(window)
    window.overviews.action = add_action(window, file_menu, "Build &Overviews...", window.overviews.build)
    window.overviews.action.setEnabled(False)  # (until an image is open: OverviewActions.offer)
    file_menu.addSeparator()
    add_action(window, file_menu, "&Quit", window.close, [QKeySequence.StandardKey.Quit, "Ctrl+Q"])
    edit = bar.addMenu("&Edit")
    undo = add_action(window, edit, "&Undo", tool.undo, "Ctrl+Z")
    redo = add_action(window, edit, "&Redo", tool.redo, ["Ctrl+Shift+Z", "Ctrl+Y"])
    _add_undo_limit_action(window, edit)
    edit.addSeparator()
    add_action(window, edit, "&Finish Feature", tool.finish, ["Return", "Enter"], viewer_only=True)
    add_action(window, edit, "&Cancel Piece / Line", tool.cancel, "Esc", viewer_only=True)
    add_action(window, edit, "Drop &Last Piece", tool.drop_last_piece, "Backspace", viewer_only=True)
    add_action(window, edit, "&Delete Selected Feature", window.features_panel.delete_selected, "Delete",
               viewer_only=True)
    _add_line_edit_actions(window, edit.addMenu("&Lines and Snapping"))
    view = bar.addMenu("&View")
    # Plain keys (+, -, F, 1) also work while the map has the focus: RasterViewer.keyPressEvent.
    add_action(window, view, "Zoom &In", lambda: viewer.zoom_by(KEY_ZOOM), ["Ctrl++", "Ctrl+="])
    add_action(window, view, "Zoom &Out", lambda: viewer.zoom_by(1 / KEY_ZOOM), "Ctrl+-")
    add_action(window, view, "&Fit Image", viewer.fit, "Ctrl+0")
    add_action(window, view, "&1:1 Pixels", viewer.one_to_one, "Ctrl+1")
    guides = add_action(window, view, "Show &Guides", window.display_panel.guides.setChecked, "G",
                        viewer_only=True, checkable=True)
    ribbon = add_action(window, view, "Show Estimated &Ribbon", window.display_panel.ribbon.setChecked, "R",
                        viewer_only=True, checkable=True)
    view.addSeparator()
    view.addAction(window.settings_dock.toggleViewAction())
    view.addAction(window.features_dock.toggleViewAction())
    view.addAction(window.layers_dock.toggleViewAction())
    add_action(window, bar.addMenu("&Help"), "&Keys and Mouse", lambda: dialogs.show_keys(window),
               QKeySequence.StandardKey.HelpContents)
    return Menus(undo, redo, guides, ribbon, recent)


def _add_line_edit_actions(window, menu: QMenu) -> None:
    """Snapping and the edits of the selected line (:class:`app.map.line_editing.LineEditing`)."""
    editing = window.controller.editing
    editing.tolerance_px = _stored_tolerance(window.qsettings, editing.tolerance_px)
    snap = add_action(window, menu, "&Snap to Lines", lambda on: setattr(editing, "snapping", on), "S",
                      viewer_only=True, checkable=True)
    snap.setChecked(editing.snapping)

    def ask_tolerance():
        value = dialogs.ask_snap_tolerance(window, round(editing.tolerance_px))
        if value is not None:
            editing.tolerance_px = float(value)
            window.qsettings.setValue(SNAP_TOLERANCE_KEY, value)

    add_action(window, menu, "Snapping &Tolerance...", ask_tolerance)
    menu.addSeparator()
    add_action(window, menu, "&Reverse Line", editing.reverse_selected)
    add_action(window, menu, "Split Line at &Vertex", editing.split_at_cursor, "X", viewer_only=True)
    add_action(window, menu, "&Merge with Line Sharing an End", editing.merge_selected)
    add_action(window, menu, "Continue from &Start", lambda: editing.continue_selected(at_start=True))
    add_action(window, menu, "Continue from &End", lambda: editing.continue_selected(at_start=False))


def _add_undo_limit_action(window, menu: QMenu) -> None:
    """Edit > Undo History Size...: the steps the tool keeps, applied at once and kept between runs."""
    tool = window.tool
    tool.undo_limit = stored_undo_limit(window.qsettings)  # (no steps yet: the window's tool is new)

    def ask_undo_limit():
        value = dialogs.ask_undo_limit(window, tool.undo_limit, *UNDO_LIMIT_RANGE)
        if value is not None:
            tool.undo_limit = value  # a lower limit drops the oldest steps, the others stay
            window.qsettings.setValue(UNDO_LIMIT_KEY, value)
            window.update_edit_actions()  # (the steps left may all be redo steps)

    add_action(window, menu, "Undo &History Size...", ask_undo_limit)


def stored_undo_limit(qsettings: QSettings) -> int:
    """The saved number of undo steps to keep, or the default when none or not an integer in
    :data:`UNDO_LIMIT_RANGE`."""
    try:
        value = int(qsettings.value(UNDO_LIMIT_KEY, DEFAULT_UNDO_LIMIT))
    except (TypeError, ValueError):
        return DEFAULT_UNDO_LIMIT
    low, high = UNDO_LIMIT_RANGE
    return value if low <= value <= high else DEFAULT_UNDO_LIMIT


def _stored_tolerance(qsettings: QSettings, default: float) -> float:
    """The saved snapping tolerance (screen px), or ``default`` when none or not a number in 1..50."""
    try:
        value = float(qsettings.value(SNAP_TOLERANCE_KEY, default))
    except (TypeError, ValueError):
        return default
    return value if 1.0 <= value <= 50.0 else default


class RecentFiles:
    """Recently opened images, newest first: kept in the settings file, listed in a menu.

    Parameters
    ----------
    qsettings : QSettings
    menu : QMenu
        File > Open Recent; its actions call ``open_path(path)``.
    open_path : callable
    """

    def __init__(self, qsettings: QSettings, menu: QMenu, open_path: Callable[[str], object]):
        self._qsettings, self._menu, self._open = qsettings, menu, open_path
        #: Lines for the user about damaged entries set aside at start-up.
        self.notices: list[str] = []
        paths, dropped = clean_recent_paths(self._qsettings.value(RECENT_KEY), MAX_RECENT)
        if dropped:
            self.notices.append(set_aside_value(self._qsettings, RECENT_KEY, "entries that are not file paths"))
            self._qsettings.setValue(RECENT_KEY, paths)
        self._update_menu()

    def paths(self) -> list[str]:
        """Recently opened image paths, newest first."""
        return clean_recent_paths(self._qsettings.value(RECENT_KEY), MAX_RECENT)[0]

    def remember(self, path: str) -> None:
        """Put ``path`` first (at most :data:`MAX_RECENT` are kept)."""
        path = str(Path(path).resolve())
        recent = [path] + [p for p in self.paths() if p != path]
        self._qsettings.setValue(RECENT_KEY, recent[:MAX_RECENT])
        self._update_menu()

    def _update_menu(self) -> None:
        self._menu.clear()
        for path in self.paths():
            self._menu.addAction(Path(path).name, lambda p=path: self._open(p)).setToolTip(path)
        self._menu.setEnabled(bool(self.paths()))
