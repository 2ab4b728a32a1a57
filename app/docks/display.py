"""Display options: which bands to show, the contrast stretch, the guides and estimated ribbon overlays."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox

from app.docks.wheel_guard import guard_wheel
from app.model.estimates import LOW_CONFIDENCE

__all__ = ["DisplayPanel", "band_choices"]


def band_choices(band_count: int) -> list[tuple[str, tuple[int, ...] | None]]:
    """(label, bands) pairs to offer: RGB (3+ bands), the intensity, and every single band."""
    choices = []
    if band_count >= 3:
        choices.append(("RGB (bands 1, 2, 3)", (1, 2, 3)))
    if band_count > 1:
        choices.append(("intensity", None))
    choices += [(f"band {band}", (band,)) for band in range(1, band_count + 1)]
    return choices


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
        self.bands = QComboBox(toolTip="Bands shown (display only; the extraction band is a setting).")
        self.bands.currentIndexChanged.connect(lambda _: self.bands_changed.emit(self.bands.currentData()))
        form.addRow("Bands", self.bands)
        self.low = QDoubleSpinBox(decimals=1, minimum=0.0, maximum=49.9, singleStep=0.5, value=1.0,
                                  suffix=" %", keyboardTracking=False,
                                  toolTip="Values below this percentile are black.")
        self.high = QDoubleSpinBox(decimals=1, minimum=50.0, maximum=100.0, singleStep=0.5, value=99.0,
                                   suffix=" %", keyboardTracking=False,
                                   toolTip="Values above this percentile are white.")
        for box in (self.low, self.high):
            box.valueChanged.connect(lambda _: self.stretch_changed.emit(self.low.value(), self.high.value()))
        form.addRow("Stretch low", self.low)
        form.addRow("Stretch high", self.high)
        self.guides = QCheckBox("Show guides and candidate points")
        self.guides.toggled.connect(self.show_guides_changed)
        form.addRow("", self.guides)
        self.ribbon = QCheckBox("Show estimated ribbon", toolTip=(
            "The road's width as each extraction estimated it: two edges along every piece.\n"
            f"Pieces of low confidence (below {LOW_CONFIDENCE:g}) are drawn dashed."))
        self.ribbon.toggled.connect(self.show_ribbon_changed)
        form.addRow("", self.ribbon)
        guard_wheel(self)

    def set_band_count(self, band_count: int) -> None:
        """Offer the choices of an image with ``band_count`` bands (the first is selected)."""
        self.bands.blockSignals(True)
        self.bands.clear()
        for label, bands in band_choices(band_count):
            self.bands.addItem(label, bands)
        self.bands.setCurrentIndex(0)
        self.bands.blockSignals(False)

    @property
    def selected_bands(self) -> tuple[int, ...] | None:
        """The bands chosen now."""
        return self.bands.currentData()

    @property
    def percentiles(self) -> tuple[float, float]:
        """(low, high) stretch percentiles."""
        return self.low.value(), self.high.value()
