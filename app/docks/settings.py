"""The extraction settings panel: every ExtractionSettings field, validated, persisted.

Edits are collected for a short moment (spin boxes change at every arrow
press), validated by ``ExtractionSettings`` itself, and announced once through
``settings_changed``; an invalid combination shows its message in the panel
instead.  The panel stores the settings in QSettings so that they survive a
restart.  Settings the chosen mode does not use are greyed out, their tooltip
saying why (:data:`MODE_USES`).
"""

from __future__ import annotations

import json

from PySide6.QtCore import QEvent, QKeyCombination, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from app.docks.wheel_guard import guard_wheel
from app.startup_checks import set_aside_value
from core.engine import BackendUnavailableError, gpu_available, resolve_backend
from core.extraction import ExtractionSettings
from core.extraction.adaptive import COURSE_MAX_TURN_DEG
from core.extraction.options import COMBINES, POLARITIES
from core.extraction.presets import matching_preset, preset, preset_names
from core.extraction.settings import AUTO, EXTRACTION_MODES
from core.io.jsonfile import parse_json

__all__ = ["SettingsPanel", "SETTINGS_KEY", "MODE_USES", "backend_description", "unused_reason"]

SETTINGS_KEY = "extraction/settings"
DEBOUNCE_MS = 200

# (field, label, minimum, maximum, step, decimals, tooltip); decimals None = integer
_NUMBERS = (
    ("nodes", "Nodes", 3, 200, 1, None,
     "Split points of the span, both clicks included; nodes - 2 guides cross it."),
    ("points", "Points per guide", 2, 4096, 8, None, "Candidate points on each guide."),
    ("half_width_px", "Guide half-width (px)", 0.5, 2000.0, 1.0, 1,
     "How far the line may stray from the straight segment between the clicks."),
    ("max_turn_deg", "Max turn (°)", 0.1, 180.0, 5.0, 1, "Largest turning angle at a guide point."),
    ("sigma_px", "Smoothing sigma (px)", 0.1, 50.0, 0.25, 2, "Gaussian smoothing before the gradient."),
    ("ribbon_width_px", "Ribbon width (px)", 0.0, 1000.0, 1.0, 1,
     "Full width of the road in ribbon mode ('auto': the width each extraction estimates)."),
    ("snap_half_width_px", "Snap half-width (px)", 0.0, 1000.0, 1.0, 1,
     "How far a clicked endpoint may move across the line ('auto': the default)."),
)
_MODE = ("mode", "Mode", EXTRACTION_MODES,
         "auto: learn the road's look at the clicks and follow it, straight or bent;\n"
         "ribbon: the centre line between two edges; edge: follow one strong edge.")
_CHOICES = (
    ("polarity", "Polarity", (AUTO,) + POLARITIES,
     "Ribbon mode: a bright road, a dark road, or either ('auto': the polarity each extraction estimates)."),
    ("ribbon_combine", "Edge combination", COMBINES,
     "Ribbon mode: score the mean of the two edges, or their geometric mean (both edges needed)."),
    ("solver", "Solver", ("window", "mitm", "brute"), "All exact; window is the fastest, brute the reference."),
    ("backend", "Backend", ("auto", "cpu", "gpu"), "auto: the GPU when one is present, else the CPU."),
)

#: The mode-specific settings each mode uses; the others are greyed out in that mode.
MODE_USES = {
    AUTO: frozenset(),
    "ribbon": frozenset({"max_turn_deg", "sigma_px", "ribbon_width_px", "polarity", "ribbon_combine"}),
    "edge": frozenset({"max_turn_deg", "sigma_px"}),
}
_MODE_SPECIFIC = frozenset().union(*MODE_USES.values())
_UNUSED_BECAUSE = {
    AUTO: "auto mode learns the road's appearance at the clicks and estimates its width and polarity; "
          f"its course is straight, or bends where the road does (up to {COURSE_MAX_TURN_DEG:g}° at a guide)",
    "edge": "edge mode follows one edge, not a ribbon",
}


def unused_reason(name: str, mode: str) -> str | None:
    """Why setting ``name`` does nothing in ``mode`` (None when it is used)."""
    if name not in _MODE_SPECIFIC or name in MODE_USES[mode]:
        return None
    return f"Not used: {_UNUSED_BECAUSE[mode]}."


def backend_description(backend: str) -> str:
    """Which backend a setting runs on here, e.g. ``"runs on: CPU"``."""
    try:
        return f"runs on: {resolve_backend(backend).upper()}"
    except BackendUnavailableError:
        return "runs on: nothing (no GPU here)"


class SettingsPanel(QGroupBox):
    """Widgets for all extraction settings.

    Signals
    -------
    settings_changed(settings)
        A valid ``core.extraction.ExtractionSettings`` after the user's edits.
    """

    settings_changed = Signal(object)

    def __init__(self, qsettings=None, parent=None):
        super().__init__("Extraction", parent)
        self._cls = ExtractionSettings
        self._qsettings = qsettings
        self._widgets: dict = {}
        self._loading = False
        self._timer = QTimer(self, singleShot=True, interval=DEBOUNCE_MS, timeout=self.apply_now)
        self._undo_keys = _PassUndoKeys(self)
        #: Lines for the user about stored settings that were set aside at start-up.
        self.notices: list[str] = []
        self._build()
        guard_wheel(self)
        self.settings = self._restored()
        self.show_settings(self.settings)

    # ------------------------------------------------------------ building
    def _build(self) -> None:
        form = self._form = QFormLayout()
        self.preset_combo = QComboBox(toolTip="Named settings measured on roads, tracks and rivers "
                                              "(BENCHMARKS.md, presets); 'custom': settings of your own.")
        self.preset_combo.addItems(["custom", *preset_names()])
        self.preset_combo.textActivated.connect(self.choose_preset)
        self._add_combo(form, *_MODE)
        for name, label, low, high, step, decimals, tip in _NUMBERS:
            box = QSpinBox() if decimals is None else QDoubleSpinBox(decimals=decimals)
            box.setRange(low, high)
            box.setSingleStep(step)
            box.setKeyboardTracking(False)
            box.setToolTip(tip)
            box.valueChanged.connect(self._edited)
            for target in (box, box.lineEdit()):  # the focus widget, and its text field that gets the keys
                target.installEventFilter(self._undo_keys)
            self._widgets[name] = box
            form.addRow(label, box)
        # "auto" at the minimum: a ribbon 0 px wide has no use, so 0 stands for "estimate it"
        self._widgets["ribbon_width_px"].setSpecialValueText(AUTO)
        self._widgets["snap_half_width_px"].setSpecialValueText(AUTO)
        self._widgets["snap_endpoints"] = QCheckBox("Snap endpoints onto the line")
        self._widgets["snap_endpoints"].toggled.connect(self._edited)
        form.insertRow(form.rowCount() - 1, "", self._widgets["snap_endpoints"])
        for choice in _CHOICES:
            self._add_combo(form, *choice)
        if not gpu_available():  # as in the knapsack panel: offered only where it can run
            gpu_item = self._widgets["backend"].model().item(self._widgets["backend"].findText("gpu"))
            gpu_item.setEnabled(False)
            gpu_item.setToolTip("No usable CUDA GPU here.")
        self.backend_label = QLabel(wordWrap=True)
        form.addRow("", self.backend_label)
        self._widgets["band"] = QComboBox(toolTip="The band the extraction reads. All bands: auto mode learns the "
                                                  "road's appearance from every band; ribbon and edge read one band "
                                                  "as is, two averaged, or the luminance of the first three.")
        self._widgets["band"].currentIndexChanged.connect(self._edited)
        form.addRow("Band", self._widgets["band"])
        self.set_band_count(1)
        self.error_label = QLabel(wordWrap=True, styleSheet="color: #d33;")
        self.error_label.hide()
        reset = QPushButton("Reset to defaults", clicked=lambda: self.show_settings(self._cls(), announce=True))
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        row = QHBoxLayout()  # the presets beside Reset: no row of their own (the dock fits at 1400 x 900)
        row.addWidget(QLabel("Preset"))
        row.addWidget(self.preset_combo, 1)
        row.addWidget(reset)
        layout.addLayout(row)
        self._tips = {name: widget.toolTip() for name, widget in self._widgets.items()}

    def _add_combo(self, form: QFormLayout, name: str, label: str, values, tip: str) -> None:
        combo = QComboBox()
        combo.addItems(list(values))
        combo.setToolTip(tip)
        combo.currentTextChanged.connect(self._edited)
        self._widgets[name] = combo
        form.addRow(label, combo)

    def set_band_count(self, band_count: int) -> None:
        """Offer the bands of the open image (1-based)."""
        combo = self._widgets["band"]
        current = combo.currentData()
        self._loading = True
        combo.clear()
        combo.addItem("all bands", None)  # (the default, as the README names it; "intensity" was wrong in auto mode)
        for band in range(1, band_count + 1):
            combo.addItem(f"band {band}", band)
        index = combo.findData(current) if current is not None else 0
        combo.setCurrentIndex(max(index, 0))
        self._loading = False
        if current is not None and index < 0:
            self.apply_now()

    # ------------------------------------------------------------- values
    def choose_preset(self, name: str) -> None:
        """Show and announce the settings of preset ``name`` (band, backend and solver kept)."""
        if name != "custom":
            self.show_settings(preset(name, self.settings), announce=True)

    def _show_preset(self) -> None:
        # presets with equal values (as measured): the one chosen stays shown
        self.preset_combo.setCurrentText(matching_preset(self.settings, self.preset_combo.currentText()) or "custom")

    def show_settings(self, settings, announce: bool = False) -> None:
        """Put ``settings`` into the widgets (announced only when ``announce``)."""
        self._loading = True
        values = settings.to_dict()
        for name, widget in self._widgets.items():
            value = values[name]
            if isinstance(widget, QCheckBox):
                widget.setChecked(bool(value))
            elif name == "band":
                widget.setCurrentIndex(max(widget.findData(value), 0))
            elif isinstance(widget, QComboBox):
                widget.setCurrentText(str(value))
            else:  # None and "auto" are the spin box's minimum, shown as "auto"
                widget.setValue(widget.minimum() if value is None or value == AUTO else value)
        self._loading = False
        self._update_state()
        if announce:
            self.apply_now()
        else:
            self.settings = settings
        self._show_preset()

    def current_values(self) -> dict:
        """The widgets' values as ExtractionSettings fields."""
        values = {}
        for name, widget in self._widgets.items():
            if isinstance(widget, QCheckBox):
                values[name] = widget.isChecked()
            elif name == "band":
                values[name] = widget.currentData()
            elif isinstance(widget, QComboBox):
                values[name] = widget.currentText()
            else:
                values[name] = widget.value()
        values["snap_half_width_px"] = values["snap_half_width_px"] or None
        values["ribbon_width_px"] = values["ribbon_width_px"] or AUTO
        return values

    def _edited(self, *_args) -> None:
        if not self._loading:
            self._update_state()
            self._timer.start()

    def _update_state(self) -> None:
        """Grey out what the chosen mode does not use (the tooltip says why)."""
        w, mode = self._widgets, self._widgets["mode"].currentText()
        for name in _MODE_SPECIFIC:
            reason = unused_reason(name, mode)
            self._set_used(name, reason is None, self._tips[name] + ("" if reason is None else "\n" + reason))
        self._set_used("snap_half_width_px", w["snap_endpoints"].isChecked(), self._tips["snap_half_width_px"])
        self.backend_label.setText(backend_description(w["backend"].currentText()))

    def _set_used(self, name: str, used: bool, tip: str) -> None:
        widget = self._widgets[name]
        widget.setEnabled(used)
        widget.setToolTip(tip)
        label = self._form.labelForField(widget)
        if label is not None:
            label.setEnabled(used)
            label.setToolTip(tip)

    def apply_now(self) -> bool:
        """Validate the widgets' values and announce them; False (message shown) when invalid."""
        self._timer.stop()
        try:
            settings = self._cls(**self.current_values())
        except (TypeError, ValueError) as err:
            self.error_label.setText(str(err))
            self.error_label.show()
            return False
        self.error_label.hide()
        if settings != self.settings:
            self.settings = settings
            self._store(settings)
            self.settings_changed.emit(settings)
        self._show_preset()
        return True

    # --------------------------------------------------------- persistence
    def _store(self, settings) -> None:
        if self._qsettings is not None:
            self._qsettings.setValue(SETTINGS_KEY, json.dumps(settings.to_dict()))

    def _restored(self):
        """The stored settings, or the defaults when there are none or they no longer validate.

        Stored settings that cannot be used are set aside (app.startup_checks),
        with a line in :attr:`notices`.
        """
        text = self._qsettings.value(SETTINGS_KEY) if self._qsettings is not None else None
        if text:
            try:
                if not isinstance(text, str):
                    raise TypeError(f"expected JSON text, got {type(text).__name__}")
                values = parse_json(text, SETTINGS_KEY)
                values["band"] = None  # bands belong to one image
                return self._cls.from_dict(values)
            except (TypeError, ValueError) as err:
                self.notices.append(set_aside_value(self._qsettings, SETTINGS_KEY, str(err)))
        return self._cls()


class _PassUndoKeys(QObject):
    """Leaves Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y to the window while a spin box has the focus.

    A spin box's text field claims them for its own text undo, so right after
    typing a value (which re-runs the current piece) the window's Undo, which
    takes that re-run and the value back together, did nothing.  The typed
    value is applied at once, so the text undo has nothing of its own to do.
    """

    KEYS = (QKeySequence.StandardKey.Undo, QKeySequence.StandardKey.Redo)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and (
                any(event.matches(key) for key in self.KEYS)
                or event.keyCombination() == QKeyCombination(Qt.KeyboardModifier.ControlModifier, Qt.Key.Key_Y)):
            event.ignore()
            return True
        return False
