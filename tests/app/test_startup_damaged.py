"""Start-up never dies on what it finds on disk: damaged autosaves, settings and recent files are set aside."""

from __future__ import annotations

import json

import pytest

from app import dialogs
from app.docks.settings import SETTINGS_KEY
from app.menus import RECENT_KEY
from app.session import SessionStore
from tests.app.conftest import config_with
from tests.app.test_session_restore import session_with_one_line


def _deep(depth: int) -> str:
    return '{"format": "linesnap-session", "dirty": true, "features": ' + "[" * depth + "]" * depth + "}"


def _session(**changes) -> dict:
    data = session_with_one_line("/nowhere/scene.tif")
    data.update(changes)
    return data


def _outcome(data: dict, **changes) -> dict:
    data["features"][0]["pieces"][0]["outcome"] = {"vertices_px": [[0, 0], [1, 1]], "status": "done", **changes}
    return data


#: name -> (file text, words the notice must hold)
DAMAGED = {
    "nested 100,000 deep": (_deep(100_000), "nested deeper"),
    "features is a number": (json.dumps(_session(features=5)), "features"),
    "image is a number": (json.dumps(_session(image=42)), "image"),
    "empty vertex list": (json.dumps(_outcome(_session(), vertices_px=[])), "vertices_px"),
    "1-D vertex list": (json.dumps(_outcome(_session(), vertices_px=[1.0, 2.0])), "vertices_px"),
    "vertices at 1e300": (json.dumps(_outcome(_session(), vertices_px=[[0, 0], [1e300, 1]])), "out of range"),
    "huge id": (json.dumps(_session()).replace('"id": 1,', '"id": ' + "9" * 30 + ","), "id"),
    "400-digit id": (json.dumps(_session()).replace('"id": 1,', '"id": ' + "9" * 400 + ","), "digits"),
    "NaN click": (json.dumps(_session()).replace('"click_end": [300.0', '"click_end": [NaN'), "NaN"),
    "truncated": (json.dumps(_session())[:200], "invalid JSON"),
    "binary": ('{"format": "linesnap-session", \x00\x01\x02', "invalid JSON"),
}


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_damaged_autosave_is_set_aside_and_the_window_opens(case, make_window, tmp_path, shown_errors):
    text, words = DAMAGED[case]
    config = tmp_path / "config"
    config.mkdir()
    (config / "session.json").write_text(text, encoding="utf-8")
    window = make_window(config_dir=config)
    assert not window.restore_session_if_any()
    assert not (config / "session.json").exists() or window.session.path != config / "session.json"
    aside = list(config.glob("session.json.damaged-*"))
    assert len(aside) == 1 and aside[0].read_text(encoding="utf-8") == text
    assert [r.title for r in shown_errors] == ["Damaged files were set aside"]
    assert words in shown_errors[0].message and str(aside[0]) in shown_errors[0].message
    window2 = make_window(config_dir=config)  # the next start is quiet
    assert not window2.restore_session_if_any() and len(shown_errors) == 1


def test_settings_that_fail_after_the_restore_question_set_the_session_aside(make_window, tmp_path, monkeypatch,
                                                                             shown_errors):
    config = tmp_path / "config"
    data = _session()
    data["features"][0]["pieces"][0]["settings"] = {"nodes": -1}
    SessionStore(config).save(data)
    monkeypatch.setattr(dialogs, "ask_restore_session", lambda parent, summary: True)
    window = make_window(config_dir=config)
    assert not window.restore_session_if_any()
    assert shown_errors[-1].title == "Could not restore the session"
    assert "nodes" in shown_errors[-1].message and "moved to" in shown_errors[-1].message
    assert list(config.glob("session.json.damaged-*")) and not (config / "session.json").exists()


@pytest.mark.parametrize("stored", ['{"nodes": ' + "[" * 5000 + "]" * 5000 + "}", "[1, 2]", '{"nodes": -3}',
                                    "not json", '{"unknown_knob": 1}'])
def test_damaged_stored_settings_reset_to_the_defaults_with_a_notice(stored, make_window, tmp_path, shown_errors):
    config = config_with(tmp_path, SETTINGS_KEY, stored)
    window = make_window(config_dir=config)
    assert window.settings_panel.settings == type(window.settings_panel.settings)()
    assert [r.title for r in shown_errors] == ["Damaged files were set aside"]
    assert SETTINGS_KEY in shown_errors[0].message
    assert list(config.glob("linesnap.ini.damaged-*"))


def test_damaged_recent_files_are_dropped_with_a_notice(make_window, tmp_path, shown_errors):
    config = config_with(tmp_path, RECENT_KEY, ["/data/a.tif", "x" * 10_000, "", "/data/b.tif"])
    window = make_window(config_dir=config)
    assert window.recent_files() == ["/data/a.tif", "/data/b.tif"]
    assert [r.title for r in shown_errors] == ["Damaged files were set aside"]
    assert RECENT_KEY in shown_errors[0].message
