"""The Layers dock: the reference layers, top first, each with a visibility box; Colour... and Remove.

Changes go straight to :class:`app.model.reference.ReferenceLayers` (no undo:
a layer is read-only data that File > Add Reference Layer brings back); the
project file and the crash autosave store each layer's colour and visibility.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QColorDialog,
    QDockWidget,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.refine_job import refine_path

__all__ = ["LayersPanel", "build_layers_dock", "show_layers_dock"]

ICON_PX = 14


def _swatch(colour: str) -> QIcon:
    pixmap = QPixmap(ICON_PX, ICON_PX)
    pixmap.fill(QColor(colour))
    return QIcon(pixmap)


class LayersPanel(QWidget):
    """Lists :class:`app.model.reference.ReferenceLayers`, the top layer first.

    Checking a row shows its layer, unchecking hides it (neither drawn nor
    snapped to); Colour... restyles the selected layer, Remove takes it away,
    Refine... moves a copy of its lines onto the image as editable features
    (``refine_requested(path)``, run by the window: :func:`app.refine_job.start_refine`).
    """

    refine_requested = Signal(str)

    def __init__(self, layers, parent=None):
        super().__init__(parent)
        self.layers = layers
        self._filling = False
        self.list = QListWidget()
        self.list.itemChanged.connect(self._on_item_changed)
        self.list.currentRowChanged.connect(self._update_buttons)
        self.colour_button = QPushButton("Colour...", clicked=self.choose_colour)
        self.remove_button = QPushButton("Remove", clicked=self.remove_selected)
        self.refine_button = QPushButton("Refine...", clicked=self.refine_selected)
        self.refine_button.setToolTip("Move a copy of this layer's lines onto the image, as editable lines")
        buttons = QHBoxLayout()
        buttons.addWidget(self.colour_button)
        buttons.addWidget(self.remove_button)
        buttons.addWidget(self.refine_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.list)
        layout.addLayout(buttons)
        layers.changed.connect(self.refill)
        self.refill()

    def layer_index(self, row: int) -> int:
        """The layer shown in ``row`` (rows are top first, layers bottom first)."""
        return len(self.layers.layers) - 1 - row

    def refill(self) -> None:
        """Rows from the layers (kept selected where they were)."""
        row = self.list.currentRow()
        self._filling = True
        try:
            self.list.clear()
            for layer in reversed(self.layers.layers):
                item = QListWidgetItem(_swatch(layer.colour), f"{layer.name} ({len(layer.lines_px):,} lines)")
                item.setToolTip(layer.path)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if layer.visible else Qt.CheckState.Unchecked)
                self.list.addItem(item)
        finally:
            self._filling = False
        self.list.setCurrentRow(min(row, self.list.count() - 1) if row >= 0 else -1)
        self._update_buttons()

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        if self._filling:
            return
        index = self.layer_index(self.list.row(item))
        visible = item.checkState() == Qt.CheckState.Checked
        if self.layers.layers[index].visible != visible:
            self.layers.set_visible(index, visible)

    def _update_buttons(self, *_) -> None:
        chosen = self.list.currentRow() >= 0
        self.colour_button.setEnabled(chosen)
        self.remove_button.setEnabled(chosen)
        self.refine_button.setEnabled(chosen)

    def choose_colour(self) -> None:
        """Ask for the selected layer's colour."""
        row = self.list.currentRow()
        if row < 0:
            return
        index = self.layer_index(row)
        colour = QColorDialog.getColor(QColor(self.layers.layers[index].colour), self, "Reference layer colour")
        if colour.isValid():
            self.layers.set_colour(index, colour.name())

    def remove_selected(self) -> None:
        """Remove the selected layer (from the map, the snapping and the project)."""
        row = self.list.currentRow()
        if row >= 0:
            self.layers.remove(self.layer_index(row))


    def refine_selected(self) -> None:
        """Ask the window to refine the selected layer's file onto the image."""
        row = self.list.currentRow()
        if row >= 0:
            self.refine_requested.emit(self.layers.layers[self.layer_index(row)].path)


def build_layers_dock(window, beside: QDockWidget) -> QDockWidget:
    """The Layers dock of ``window``'s reference layers, a tab beside ``beside``.

    Closed at first (View > Layers opens it): its tab bar would take height
    from the Settings dock, which at 1400 x 900 needs all it has.  Adding a
    reference layer opens it (:func:`show_layers_dock`).
    """
    dock = QDockWidget("Layers", window, objectName="layers_dock")
    panel = LayersPanel(window.projects.references)
    panel.refine_requested.connect(lambda path: refine_path(window, path))
    dock.setWidget(panel)
    window.tabifyDockWidget(beside, dock)
    dock.hide()
    beside.raise_()
    return dock


def show_layers_dock(window) -> None:
    """Open the Layers dock in front (a reference layer was added), unless another tab than the map's is on."""
    dock = getattr(window, "layers_dock", None)
    if dock is not None and window.tabs.currentWidget() is window.viewer:
        dock.show()
        dock.raise_()
