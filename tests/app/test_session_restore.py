"""Autosave slots: windows running at once keep apart, and a session that cannot be restored is kept."""

from __future__ import annotations

import shutil

from app import dialogs
from app.model.document import sample_scene_path
from app.model.tool import ExtractionTool
from app.session import SessionStore, tool_to_dict
from tests.app.conftest import wait_idle


def session_with_one_line(image_path) -> dict:
    """A session with one finished two-piece (straight) feature on ``image_path``, never exported."""
    from core.extraction import ExtractionSettings

    tool = ExtractionTool(ExtractionSettings())
    tool.click((100.0, 100.0))
    tool.click((300.0, 140.0), straight=True)
    tool.click((500.0, 120.0), straight=True)
    tool.finish()
    return tool_to_dict(tool, str(image_path))


def test_a_second_window_neither_offers_nor_overwrites_the_first_windows_session(qtbot, make_window, tmp_path):
    config = tmp_path / "config"
    first = make_window(config_dir=config)
    first.open_image(None)
    first.tool.click((100.0, 100.0))
    first.tool.click((300.0, 140.0), straight=True)
    first.tool.finish()
    first.autosave()
    # no_questions: asking to restore the first window's live session would fail the test
    second = make_window(config_dir=config)
    assert not second.restore_session_if_any()
    second.open_image(None)
    second.autosave()
    assert second.session.path != first.session.path
    assert len(SessionStore(config).load()["features"]) == 1  # the first window's work is still safe
    second.close()
    assert len(SessionStore(config).load()["features"]) == 1  # a normal exit removes only its own file


def test_a_session_whose_image_is_missing_is_kept_and_restored_once_the_image_is_back(
        qtbot, make_window, tmp_path, monkeypatch, shown_errors):
    config, image = tmp_path / "config", tmp_path / "moved" / "scene.tif"
    SessionStore(config).save(session_with_one_line(image))
    monkeypatch.setattr(dialogs, "ask_restore_session", lambda parent, summary: True)
    first = make_window(config_dir=config)
    assert not first.restore_session_if_any()
    assert len(shown_errors) == 1 and str(image) in shown_errors[0].message
    first.open_image(None)  # what the application does next: the sample scene
    wait_idle(qtbot, first)
    first.autosave()
    assert SessionStore(config).load()["features"], "the unrestorable session was overwritten"
    assert shown_errors[0].title == "Could not restore the session"
    assert "offered again at the next start" in shown_errors[0].message

    image.parent.mkdir()
    shutil.copy(sample_scene_path(), image)  # the drive is back
    second = make_window(config_dir=config)
    assert second.restore_session_if_any()
    assert second.document.path == str(image)
    assert [f.name for f in second.tool.features] == ["Line 1"]
    assert len(second.tool.feature_vertices(second.tool.features[0])) == 3
