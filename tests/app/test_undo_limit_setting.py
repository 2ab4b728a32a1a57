"""Edit > Undo History Size...: the steps the undo history keeps, applied to the running tool and kept between runs."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QSettings

from app import dialogs
from app.menus import UNDO_LIMIT_KEY, UNDO_LIMIT_RANGE
from app.model.history import DEFAULT_UNDO_LIMIT
from tests.app.conftest import config_with


def _edit_menu_action(window, text: str):
    edit = window.menuBar().actions()[1].menu()
    return next(action for action in edit.actions() if action.text().replace("&", "") == text)


def _add_lines(tool, count: int) -> list:
    """``count`` undoable steps, one imported line each; the features' tuple after each step."""
    states = []
    for k in range(count):
        tool.add_features([(f"line {k}", np.array([[10.0 * k, 0.0], [10.0 * k, 50.0]]), {})])
        states.append(tool.features)
    return states


def _choose_undo_limit(window, monkeypatch, value):
    asked = []
    monkeypatch.setattr(dialogs, "ask_undo_limit",
                        lambda parent, steps, low, high: asked.append((steps, low, high)) or value)
    _edit_menu_action(window, "Undo History Size...").trigger()
    return asked


def test_the_undo_limit_is_chosen_in_the_edit_menu_applied_at_once_and_kept_between_runs(make_window, tmp_path,
                                                                                         monkeypatch):
    config = tmp_path / "config"
    window = make_window(config_dir=config)
    tool = window.tool
    assert tool.undo_limit == DEFAULT_UNDO_LIMIT
    states = _add_lines(tool, 5)
    tool.undo()  # four steps to undo, one to redo
    assert _choose_undo_limit(window, monkeypatch, 3) == [(DEFAULT_UNDO_LIMIT, *UNDO_LIMIT_RANGE)]
    assert tool.undo_limit == 3
    # the two oldest steps went; the drawing and the three newest steps (one of them redo) stay
    assert tool.features == states[3]
    assert tool.redo() and tool.features == states[4]
    assert tool.undo() and tool.undo() and tool.undo() and tool.features == states[1]
    assert not tool.undo() and not window.undo_action.isEnabled()
    assert _choose_undo_limit(window, monkeypatch, 50) == [(3, *UNDO_LIMIT_RANGE)]  # higher: every step stays
    assert tool.redo() and tool.redo() and tool.redo() and tool.features == states[4]
    assert _choose_undo_limit(window, monkeypatch, None) == [(50, *UNDO_LIMIT_RANGE)]  # cancelled: unchanged
    assert tool.undo_limit == 50
    window.tool.mark_saved()
    window.close()
    assert QSettings(str(config / "linesnap.ini"), QSettings.Format.IniFormat).value(UNDO_LIMIT_KEY) in (50, "50")
    again = make_window(config_dir=config)
    assert again.tool.undo_limit == 50


def test_lowering_the_limit_to_one_step_left_for_redo_disables_undo(make_window, monkeypatch):
    window = make_window()
    _add_lines(window.tool, 3)
    window.tool.undo()
    assert window.undo_action.isEnabled() and window.redo_action.isEnabled()
    _choose_undo_limit(window, monkeypatch, 1)
    assert not window.tool.can_undo and not window.undo_action.isEnabled()  # the menu follows the history
    assert window.tool.can_redo and window.redo_action.isEnabled()


@pytest.mark.parametrize("stored, expected", [("7", 7), ("10000", 10_000), ("0", DEFAULT_UNDO_LIMIT),
                                              ("-4", DEFAULT_UNDO_LIMIT), ("10001", DEFAULT_UNDO_LIMIT),
                                              ("2.5", DEFAULT_UNDO_LIMIT), ("many", DEFAULT_UNDO_LIMIT),
                                              ("", DEFAULT_UNDO_LIMIT)])
def test_a_stored_limit_is_used_where_it_is_in_the_range_else_the_default(stored, expected, make_window, tmp_path,
                                                                           shown_errors):
    config = config_with(tmp_path, UNDO_LIMIT_KEY, stored)
    window = make_window(config_dir=config)
    assert window.tool.undo_limit == expected
    assert not shown_errors
