"""Hypothesis on session files: any damage ends in SessionError at load or a session that restores."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings

from app.model.pieces import ToolState
from app.model.tool import ExtractionTool
from app.session import SessionError, SessionStore, state_from_dict
from core.extraction import ExtractionSettings
from tests.app.test_session_restore import session_with_one_line
from tests.core.test_fuzz_parsers import _mutants, json_values

VALID = session_with_one_line("/nowhere/scene.tif")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_mutants(VALID))
def test_a_damaged_session_is_set_aside_or_restores(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("config")
    store = SessionStore(folder)
    store.path.write_text(json.dumps(data, allow_nan=False), encoding="utf-8")
    loaded = store.load()
    if loaded is None:  # not a session at all, or damaged: set aside with a notice
        assert not isinstance(data, dict) or data.get("format") != "linesnap-session" or store.notices
        return
    try:
        state, outcomes = state_from_dict(loaded, ExtractionSettings.from_dict, str(store.path))
    except SessionError as err:
        assert str(store.path) in str(err)
        return
    assert isinstance(state, ToolState)
    tool = ExtractionTool(ExtractionSettings())
    tool.restore(state, outcomes)  # what the window does next must not fail either
    for feature in tool.features:
        assert tool.feature_vertices(feature).shape[1] == 2


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(json_values)
def test_any_json_in_the_session_file_is_ignored_or_set_aside(tmp_path_factory, data):
    store = SessionStore(tmp_path_factory.mktemp("config"))
    store.path.write_text(json.dumps(data, allow_nan=False), encoding="utf-8")
    assert store.load() is None or isinstance(store.load(), dict)
