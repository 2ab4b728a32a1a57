"""The Settings dock and the adaptive mode: auto values, greyed-out settings, persistence, undo."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QComboBox

from app.docks.settings import SETTINGS_KEY, SettingsPanel, unused_reason
from core.extraction import ExtractionSettings
from core.extraction.settings import AUTO
from tests.app.conftest import click_image, wait_idle, wait_pieces

MODE_SPECIFIC = ("max_turn_deg", "sigma_px", "ribbon_width_px", "polarity", "ribbon_combine")


@pytest.fixture
def qsettings(tmp_path):
    return QSettings(str(tmp_path / "linesnap.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def panel(qtbot, qsettings):
    panel = SettingsPanel(qsettings)
    qtbot.addWidget(panel)
    return panel


def combo_items(combo: QComboBox) -> list[str]:
    return [combo.itemText(i) for i in range(combo.count())]


def test_the_defaults_are_auto_and_shown_as_auto(panel):
    widgets = panel._widgets
    assert combo_items(widgets["mode"]) == ["auto", "ribbon", "edge"]
    assert combo_items(widgets["polarity"]) == ["auto", "any", "bright", "dark"]
    assert widgets["mode"].currentText() == AUTO and widgets["polarity"].currentText() == AUTO
    assert widgets["ribbon_width_px"].text() == "auto"
    assert panel.settings == ExtractionSettings()
    assert panel.current_values() == ExtractionSettings().to_dict()


def test_a_ribbon_width_is_a_number_or_auto(panel, qtbot):
    panel._widgets["mode"].setCurrentText("ribbon")
    width = panel._widgets["ribbon_width_px"]
    width.setValue(18.0)
    with qtbot.waitSignal(panel.settings_changed) as changed:
        assert panel.apply_now()
    assert changed.args[0].ribbon_width_px == 18.0 and changed.args[0].mode == "ribbon"
    width.setValue(width.minimum())
    assert width.text() == "auto"
    assert panel.apply_now() and panel.settings.ribbon_width_px == AUTO


@pytest.mark.parametrize("mode, used", [
    ("auto", ()),
    ("ribbon", MODE_SPECIFIC),
    ("edge", ("max_turn_deg", "sigma_px")),
])
def test_settings_the_mode_does_not_use_are_greyed_out_with_the_reason(panel, mode, used):
    panel._widgets["mode"].setCurrentText(mode)
    for name in MODE_SPECIFIC:
        widget = panel._widgets[name]
        label = panel._form.labelForField(widget)
        assert widget.isEnabled() == (name in used) == label.isEnabled(), name
        assert ("Not used" in widget.toolTip()) == (name not in used), name
    for name in ("nodes", "points", "half_width_px", "snap_endpoints", "solver", "backend"):
        assert panel._widgets[name].isEnabled(), name
    # auto mode: straight, or bending with the road (a corner turns up to 90 degrees at a guide)
    assert ("bends where the road does" in panel._widgets["max_turn_deg"].toolTip()) == (mode == "auto")


def test_unused_reason_names_the_mode():
    assert "auto mode" in unused_reason("sigma_px", "auto")
    assert "edge mode" in unused_reason("polarity", "edge")
    assert unused_reason("sigma_px", "edge") is None and unused_reason("nodes", "auto") is None


def test_auto_settings_persist(qtbot, panel, qsettings):
    panel._widgets["nodes"].setValue(6)
    assert panel.apply_now()
    stored = json.loads(qsettings.value(SETTINGS_KEY))
    assert stored["mode"] == stored["ribbon_width_px"] == stored["polarity"] == AUTO
    again = SettingsPanel(qsettings)
    qtbot.addWidget(again)
    assert again.settings == panel.settings and again._widgets["ribbon_width_px"].text() == "auto"


def test_settings_stored_by_an_older_version_still_load(qtbot, qsettings):
    old = {"nodes": 8, "points": 33, "half_width_px": 8.0, "max_turn_deg": 10.0, "sigma_px": 4.5, "mode": "ribbon",
           "ribbon_width_px": 24.0, "polarity": "any", "ribbon_combine": "geometric", "snap_endpoints": False,
           "snap_half_width_px": None, "solver": "window", "backend": "auto", "band": None}
    qsettings.setValue(SETTINGS_KEY, json.dumps(old))
    panel = SettingsPanel(qsettings)
    qtbot.addWidget(panel)
    assert panel.settings == ExtractionSettings(mode="ribbon", ribbon_width_px=24.0, polarity="any",
                                                snap_endpoints=False)
    assert panel._widgets["mode"].currentText() == "ribbon" and panel._widgets["ribbon_width_px"].value() == 24.0
    assert panel._widgets["ribbon_width_px"].isEnabled() and panel._widgets["polarity"].currentText() == "any"
    assert panel.current_values() == old


def test_undo_brings_back_an_auto_width(qtbot, make_window):
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    click_image(qtbot, window, 600, 740)
    click_image(qtbot, window, 800, 748)
    wait_pieces(qtbot, window)
    panel = window.settings_panel
    panel._widgets["mode"].setCurrentText("ribbon")
    panel._widgets["ribbon_width_px"].setValue(14.0)
    assert panel.apply_now()
    assert window.tool.current.pieces[0].settings.ribbon_width_px == 14.0
    window.tool.undo()
    assert window.tool.current.pieces[0].settings == ExtractionSettings()
    assert panel._widgets["mode"].currentText() == AUTO and panel._widgets["ribbon_width_px"].text() == "auto"
    assert not panel._widgets["ribbon_width_px"].isEnabled()
    window.tool.redo()
    assert panel._widgets["ribbon_width_px"].value() == 14.0 and panel._widgets["ribbon_width_px"].isEnabled()
    wait_pieces(qtbot, window)
