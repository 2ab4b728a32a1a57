"""The questions the window asks the user, one function each.

Kept apart so that tests replace them (``monkeypatch.setattr(app.dialogs, ...)``)
instead of clicking through modal dialogs.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox, QProgressDialog

from app.model.estimates import LOW_CONFIDENCE

__all__ = ["import_progress", "ask_open_image", "ask_import_path", "ask_export_path", "ask_skip_duplicates",
           "ask_unsaved", "ask_restore_session", "ask_snap_tolerance", "ask_undo_limit", "show_keys",
           "ask_project_path", "ask_reference_path"]

IMAGE_FILTER = "Images (*.tif *.tiff *.png *.jpg *.jpeg *.jp2 *.img *.vrt);;All files (*)"
GEOJSON_FILTER = "GeoJSON (*.geojson *.json);;All files (*)"
#: Import reads any vector format GDAL reads (through pyogrio).
VECTOR_FILTER = ("Vector files (*.geojson *.json *.gpkg *.shp *.fgb);;GeoJSON (*.geojson *.json);;"
                 "GeoPackage (*.gpkg);;Shapefile (*.shp);;FlatGeobuf (*.fgb);;All files (*)")
PROJECT_FILTER = "LineSnap projects (*.linesnap);;All files (*)"
EXPORT_FILTERS = {"GeoJSON (*.geojson)": "geojson", "GeoPackage (*.gpkg)": "gpkg", "Shapefile (*.shp)": "shp",
                  "FlatGeobuf (*.fgb)": "fgb"}

#: Help > Keys and Mouse, in groups of (keys, what they do); every shortcut of the menus is here.
HELP_GROUPS = (
    ("Drawing", (
        ("Click", "start a feature / add a piece to it (the optimal polyline)"),
        ("Shift + click", "add a straight piece"),
        ("Double-click, right-click, Enter", "finish the feature"),
        ("Esc", "cancel the piece in progress; again (or with none computing): drop the unfinished line"),
        ("Backspace", "drop the last piece"),
        ("Ctrl+Z / Ctrl+Shift+Z, Ctrl+Y", "undo / redo"))),
    ("Lines", (
        ("Ctrl + click", "select the feature under the cursor (on nothing: no selection)"),
        ("Delete", "delete the feature selected in the Features list"),
        ("Drag a vertex / a midpoint", "move it / add a vertex; right-click a vertex to delete it"),
        ("X", "split the selected line at the vertex under the cursor (Edit menu: reverse, merge, continue)"),
        ("S", "snapping: clicks within a few screen pixels of a line's vertex, end or segment land on it"))),
    ("View", (
        ("Drag, middle-drag, arrow keys", "pan"),
        ("Wheel, +/-, Ctrl++ or Ctrl+= / Ctrl+-", "zoom in / out"),
        ("F or Ctrl+0 / 1 or Ctrl+1", "fit the image / 1:1 pixels"),
        ("G", "show the guides and candidate points of the latest extraction"),
        ("R", "show the estimated ribbon (the road's width as each extraction saw it)"),
        ("Dashed line", f"a piece of low confidence (below {LOW_CONFIDENCE:g}): the image hardly shows the road"))),
    ("Files", (
        ("Ctrl+O / Ctrl+Shift+O", "open an image / a project"),
        ("Ctrl+S", "save the project"),
        ("Ctrl+I / Ctrl+E", "import / export lines"),
        ("Ctrl+Shift+R", "add a reference layer"),
        ("Ctrl+Q", "quit"))),
)


def help_html() -> str:
    """:data:`HELP_GROUPS` as a table, a heading per group (the plain lines ran together)."""
    rows = []
    for title, bindings in HELP_GROUPS:
        rows.append(f"<tr><td colspan=2><b>{html.escape(title)}</b></td></tr>")
        rows += [f"<tr><td style='padding-right:12px'>{html.escape(keys)}</td><td>{html.escape(what)}</td></tr>"
                 for keys, what in bindings]
    return "<table cellspacing=2>" + "".join(rows) + "</table>"


def ask_open_image(parent, folder: str = "") -> str | None:
    """An image file to open, or None."""
    path, _ = QFileDialog.getOpenFileName(parent, "Open image", folder, IMAGE_FILTER)
    return path or None


def ask_import_path(parent, folder: str = "") -> str | None:
    """A GeoJSON file of lines to import, or None."""
    path, _ = QFileDialog.getOpenFileName(parent, "Import lines", folder, VECTOR_FILTER)
    return path or None


def ask_project_path(parent, save: bool, suggestion: str = "") -> str | None:
    """A ``.linesnap`` project file to save to (``save``) or to open, or None."""
    if save:
        path, _ = QFileDialog.getSaveFileName(parent, "Save project", suggestion, PROJECT_FILTER)
        if path and not path.lower().endswith(".linesnap"):
            path += ".linesnap"
    else:
        path, _ = QFileDialog.getOpenFileName(parent, "Open project", suggestion, PROJECT_FILTER)
    return path or None


def ask_reference_path(parent, folder: str = "") -> str | None:
    """A vector file to show as a read-only reference layer, or None."""
    path, _ = QFileDialog.getOpenFileName(parent, "Add reference layer", folder, VECTOR_FILTER)
    return path or None


def ask_export_path(parent, suggestion: str = "") -> str | None:
    """Where to export the features as GeoJSON, or None.

    A name typed without a suffix gets ``.geojson`` from the dialog itself, so
    the dialog asks before it replaces an existing ``NAME.geojson`` (a suffix
    added after the dialog replaced such a file unasked).
    """
    folder = str(Path(suggestion).parent) if suggestion else ""
    dialog = QFileDialog(parent, "Export lines", folder, ";;".join(EXPORT_FILTERS))
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    suffix = Path(suggestion).suffix.lstrip(".").lower() if suggestion else "geojson"
    chosen = next((name for name, ext in EXPORT_FILTERS.items() if ext == suffix), next(iter(EXPORT_FILTERS)))
    dialog.selectNameFilter(chosen)
    dialog.setDefaultSuffix(EXPORT_FILTERS[chosen])
    dialog.filterSelected.connect(lambda name: dialog.setDefaultSuffix(EXPORT_FILTERS.get(name, "geojson")))
    if suggestion:
        dialog.selectFile(suggestion)
    if dialog.exec() != QFileDialog.DialogCode.Accepted or not dialog.selectedFiles():
        return None
    return dialog.selectedFiles()[0]


def ask_skip_duplicates(parent, duplicates: int, total: int) -> str:
    """Some imported lines are here already: ``"skip"`` them, ``"add"`` them again, or ``"cancel"`` the import."""
    buttons = QMessageBox.StandardButton
    box = QMessageBox(QMessageBox.Icon.Question, "Lines already here",
                      f"{duplicates} of the {total} lines in the file are already here (same vertices).\n"
                      "Skip them, or add them again?", buttons.Cancel, parent)
    skip = box.addButton("Skip duplicates", QMessageBox.ButtonRole.AcceptRole)
    add = box.addButton("Add all", QMessageBox.ButtonRole.DestructiveRole)
    box.setDefaultButton(skip)
    box.exec()
    return {id(skip): "skip", id(add): "add"}.get(id(box.clickedButton()), "cancel")


def ask_unsaved(parent, what: str, project: str | None = None) -> str:
    """Unsaved features are about to go: ``"save"``, ``"discard"`` or ``"cancel"`` (``project``: the name of the
    open project, which Save then writes, else Save exports)."""
    buttons = QMessageBox.StandardButton
    text = (f"The digitized features have not been saved to the project {project}.\nSave the project before {what}?"
            if project else f"The digitized features have not been exported.\nExport them before {what}?")
    answer = QMessageBox.warning(parent, "Unsaved features", text, buttons.Save | buttons.Discard | buttons.Cancel,
                                 buttons.Save)
    return {buttons.Save: "save", buttons.Discard: "discard"}.get(answer, "cancel")


def ask_restore_session(parent, summary: str) -> bool:
    """Offer to restore the autosaved session described by ``summary``."""
    buttons = QMessageBox.StandardButton
    answer = QMessageBox.question(
        parent, "Restore the last session?",
        f"LineSnap did not close normally last time.\n{summary}\nRestore that work?",
        buttons.Yes | buttons.No, buttons.Yes)
    return answer == buttons.Yes


def ask_snap_tolerance(parent, tolerance_px: int) -> int | None:
    """The snapping tolerance in screen pixels (1..50), or None when cancelled."""
    value, ok = QInputDialog.getInt(parent, "Snapping tolerance", "Snap within (screen pixels):", tolerance_px,
                                    1, 50)
    return value if ok else None


def ask_undo_limit(parent, steps: int, low: int, high: int) -> int | None:
    """How many undo steps to keep (``low``..``high``), or None when cancelled."""
    value, ok = QInputDialog.getInt(parent, "Undo history", "Undo steps kept (a lower number drops the oldest now):",
                                    steps, low, high)
    return value if ok else None


def show_keys(parent) -> None:
    """Help > Keys and Mouse: a short card of the mouse and key bindings."""
    box = QMessageBox(QMessageBox.Icon.Information, "LineSnap: keys and mouse", help_html(),
                      QMessageBox.StandardButton.Ok, parent)
    box.setTextFormat(Qt.TextFormat.RichText)
    box.exec()


def import_progress(parent, name: str) -> QProgressDialog:
    """The progress of a long job on ``name`` (its caller sets the title), with Cancel; window-modal, shown only
    if it takes over half a second."""
    progress = QProgressDialog(f"reading {name}...", "Cancel", 0, 0, parent)
    progress.setWindowModality(Qt.WindowModality.WindowModal)
    progress.setMinimumDuration(500)
    progress.setAutoClose(False)
    progress.setAutoReset(False)
    return progress
