"""Display options: which bands to show, the contrast stretch, the guides and estimated ribbon overlays."""

from __future__ import annotations

import re

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMessageBox,
)

from app.docks.wheel_guard import guard_wheel
from app.model.estimates import LOW_CONFIDENCE

__all__ = ["DisplayPanel", "band_choices", "parse_composite"]

#: The band list's last choice for an image of three bands or more: a composite the user names.
CUSTOM = "custom"


def band_choices(band_count: int) -> list[tuple[str, tuple[int, ...] | str | None]]:
    """(label, bands) pairs to offer: RGB (3+ bands), the intensity, every single band, and (3+ bands) a
    composite of the user's choice (bands :data:`CUSTOM`)."""
    choices = []
    if band_count >= 3:
        choices.append((_composite_label((1, 2, 3)), (1, 2, 3)))
    if band_count > 1:
        choices.append(("intensity", None))
    choices += [(f"band {band}", (band,)) for band in range(1, band_count + 1)]
    if band_count >= 3:
        choices.append(("other composite...", CUSTOM))
    return choices


def parse_composite(text: str, band_count: int) -> tuple[int, int, int]:
    """The bands shown as red, green and blue, from text such as ``5, 3, 2`` or ``5 3 2``.

    Raises ValueError saying what is wrong.
    """
    parts = [p for p in re.split(r"[\s,;]+", text.strip()) if p]
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"give three band numbers for red, green and blue, such as 5, 3, 2; got {text!r}")
    bands = tuple(int(p) for p in parts)
    if not all(1 <= b <= band_count for b in bands):
        raise ValueError(f"the image has bands 1 to {band_count}; got {', '.join(parts)}")
    return bands


def _composite_label(bands) -> str:
    return f"RGB (bands {', '.join(map(str, bands))})"


class DisplayPanel(QGroupBox):
    """Band choice, percentile stretch and the guides and ribbon switches.

    Signals
    -------
    bands_changed(bands)
        ``bands`` is None (intensity) or a tuple of 1-based bands.
    stretch_changed(low_percent, high_percent)
    show_guides_changed(bool)
    show_ribbon_changed(bool)
    """

    bands_changed = Signal(object)
    stretch_changed = Signal(float, float)
    show_guides_changed = Signal(bool)
    show_ribbon_changed = Signal(bool)

    def __init__(self, parent=None):
        super().__init__("Display", parent)
        form = QFormLayout(self)
        self.bands = QComboBox(toolTip="Bands shown (display only; the extraction band is a setting). "
                                       "'other composite...' shows any three bands as red, green and blue.")
        self._shown_index, self._band_count = 0, 1
        self.bands.currentIndexChanged.connect(self._on_bands)
        form.addRow("Bands", self.bands)
        self.low = QDoubleSpinBox(decimals=1, minimum=0.0, maximum=49.9, singleStep=0.5, value=1.0,
                                  suffix=" %", keyboardTracking=False,
                                  toolTip="Values below this percentile are black.")
        self.high = QDoubleSpinBox(decimals=1, minimum=50.0, maximum=100.0, singleStep=0.5, value=99.0,
                                   suffix=" %", keyboardTracking=False,
                                   toolTip="Values above this percentile are white.")
        for box in (self.low, self.high):
            box.valueChanged.connect(lambda _: self.stretch_changed.emit(self.low.value(), self.high.value()))
        limits = QHBoxLayout()  # one row: the settings dock fits a 900 px screen without scrolling
        limits.addWidget(self.low)
        limits.addWidget(QLabel("to"))
        limits.addWidget(self.high)
        form.addRow("Stretch", limits)
        self.each_band = QCheckBox("Stretch each band", toolTip=(
            "Each band of a composite to its own percentiles (multispectral bands, whose ranges differ);\n"
            "off: one stretch for all three, which keeps a photograph's colour balance."))
        self.each_band.toggled.connect(lambda _: self.stretch_changed.emit(self.low.value(), self.high.value()))
        form.addRow("", self.each_band)
        self.guides = QCheckBox("Show guides and candidate points")
        self.guides.toggled.connect(self.show_guides_changed)
        form.addRow("", self.guides)
        self.ribbon = QCheckBox("Show estimated ribbon", toolTip=(
            "The road's width as each extraction estimated it: two edges along every piece.\n"
            f"Pieces of low confidence (below {LOW_CONFIDENCE:g}) are drawn dashed."))
        self.ribbon.toggled.connect(self.show_ribbon_changed)
        form.addRow("", self.ribbon)
        guard_wheel(self)

    def set_band_count(self, band_count: int, photograph: bool = True) -> None:
        """Offer the choices of an image with ``band_count`` bands (the first is selected); a composite is
        stretched band by band unless the image is a ``photograph`` (8-bit, at most 3 bands)."""
        for widget in (self.bands, self.each_band):
            widget.blockSignals(True)
        self.bands.clear()
        for label, bands in band_choices(band_count):
            self.bands.addItem(label, bands)
        self.bands.setCurrentIndex(0)
        self._shown_index, self._band_count = 0, band_count
        self.each_band.setChecked(not (photograph and band_count <= 3))
        self.each_band.setEnabled(band_count >= 3)
        for widget in (self.bands, self.each_band):
            widget.blockSignals(False)

    def _on_bands(self, index: int) -> None:
        if self.bands.itemData(index) != CUSTOM:
            self._shown_index = index
            self.bands_changed.emit(self.bands.itemData(index))
            return
        self.bands.blockSignals(True)  # back to what is shown, until a composite is chosen
        self.bands.setCurrentIndex(self._shown_index)
        self.bands.blockSignals(False)
        bands = self._ask_composite()
        if bands is not None:
            found = self.bands.findData(bands)
            if found < 0:
                found = self.bands.count() - 1  # before the 'other composite...' choice
                self.bands.insertItem(found, _composite_label(bands), bands)
            self.bands.setCurrentIndex(found)

    def _ask_composite(self) -> tuple[int, int, int] | None:
        """The bands the user names for red, green and blue, or None when cancelled."""
        shown = self.selected_bands
        text = ", ".join(map(str, shown if shown is not None and len(shown) == 3 else (1, 2, 3)))
        while True:
            text, ok = QInputDialog.getText(self, "Band composite", f"Bands shown as red, green and blue (1 to "
                                            f"{self._band_count}):\n(5, 3, 2 is natural colour of an 8-band "
                                            "WorldView image)", text=text)
            if not ok:
                return None
            try:
                return parse_composite(text, self._band_count)
            except ValueError as err:
                QMessageBox.warning(self, "Band composite", str(err).capitalize())

    @property
    def selected_bands(self) -> tuple[int, ...] | None:
        """The bands chosen now."""
        return self.bands.currentData()

    @property
    def per_band(self) -> bool:
        """Whether a composite is stretched band by band."""
        return self.each_band.isChecked()

    @property
    def percentiles(self) -> tuple[float, float]:
        """(low, high) stretch percentiles."""
        return self.low.value(), self.high.value()
