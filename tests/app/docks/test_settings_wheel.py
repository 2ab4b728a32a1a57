"""The mouse wheel over the Settings dock scrolls it; it changes a setting only in the box that has the focus."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication


def wheel_down(widget, notches: int = 3) -> None:
    """Turn the wheel ``notches`` notches towards the user over the middle of ``widget``."""
    for _ in range(notches):
        position = QPointF(widget.rect().center())
        event = QWheelEvent(position, QPointF(widget.mapToGlobal(position.toPoint())), QPoint(0, 0),
                            QPoint(0, -120), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                            Qt.ScrollPhase.NoScrollPhase, False)
        QApplication.sendEvent(widget, event)


def test_scrolling_the_settings_dock_over_its_fields_changes_no_setting(qtbot, make_window):
    window = make_window()
    window.resize(1280, 800)  # the dock scrolls: the Display panel is below the fold
    window.open_image(None)
    scroll_bar = window.settings_dock.widget().verticalScrollBar()
    qtbot.waitUntil(lambda: scroll_bar.maximum() > 0)
    panel = window.settings_panel
    before = panel.settings
    for name in ("max_turn_deg", "nodes", "mode"):
        wheel_down(panel._widgets[name])
    wheel_down(window.display_panel.bands)
    qtbot.wait(300)  # longer than the settings' debounce
    assert panel.settings == before and panel._widgets["max_turn_deg"].value() == before.max_turn_deg
    assert window.display_panel.bands.currentIndex() == 0
    assert scroll_bar.value() > 0  # the dock scrolled instead


def test_the_wheel_still_steps_the_field_that_has_the_focus(qtbot, make_window):
    window = make_window()
    window.activateWindow()
    box = window.settings_panel._widgets["half_width_px"]  # a field every mode uses (enabled)
    box.setFocus()
    qtbot.waitUntil(box.hasFocus)
    wheel_down(box, 1)
    assert box.value() == 8.0 - box.singleStep()
