"""Autosave on a worker: the same session as tool_to_dict, re-encoding only what changed, never going backwards."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

from app.autosave import Autosaver, SessionEncoder, Snapshot
from app.model.pieces import PieceOutcome
from app.model.tool import ExtractionTool
from app.session import tool_to_dict
from core.extraction import ExtractionSettings


def lines(n, offset=0.0):
    return [("", np.array([[offset + k, 0.0], [offset + k, 10.0], [offset + k + 3, 20.0]]), {"road": k})
            for k in range(n)]


def drawn_tool():
    tool = ExtractionTool(settings=ExtractionSettings())
    tool.add_features(lines(20))
    tool.click((5.0, 5.0))
    tool.click((50.0, 5.0))  # an extraction, its outcome to come
    return tool


def test_the_encoded_session_equals_tool_to_dict_through_edits(tmp_path):
    tool, encoder = drawn_tool(), SessionEncoder()

    def same():
        encoded = json.loads(encoder.encode(Snapshot.of(tool, tmp_path / "s.json", "image.tif")))
        assert encoded == json.loads(json.dumps(tool_to_dict(tool, "image.tif")))

    same()
    assert encoder.encoded == 20
    tool.complete_piece(tool.current.pieces[0].id, PieceOutcome(np.array([[5.0, 5.0], [50.0, 7.0]]), score=3.0))
    tool.finish()
    same()
    assert encoder.encoded == 21  # only the new feature
    tool.rename(tool.features[4].id, "Ditch")
    tool.delete(tool.features[7].id)
    same()
    assert encoder.encoded == 22  # only the renamed one
    tool.undo()
    tool.undo()
    same()
    assert encoder.encoded == 24  # the old features are objects it saw, but it forgot them when they left


def test_a_request_is_written_on_a_worker_thread_and_requests_collapse(qtbot, tmp_path, monkeypatch):
    import app.autosave as autosave

    threads, release = [], threading.Event()
    real_write = autosave.atomic_write_text

    def slow_write(path, text):
        threads.append(threading.current_thread())
        release.wait(5)
        real_write(path, text)

    monkeypatch.setattr(autosave, "atomic_write_text", slow_write)
    tool, saver = drawn_tool(), Autosaver()
    path = tmp_path / "session.json"
    saver.request(Snapshot.of(tool, path, None))
    qtbot.waitUntil(lambda: bool(threads))  # the first write runs (held by the event)
    for k in range(5):
        tool.add_features(lines(1, 100.0 + k))
        saver.request(Snapshot.of(tool, path, None))  # returns at once
    release.set()
    assert saver.wait(5000)
    assert len(threads) == 2 and threading.main_thread() not in threads  # the first and the newest
    assert json.loads(path.read_text()) == json.loads(json.dumps(tool_to_dict(tool, None)))


def test_an_older_snapshot_never_replaces_a_newer_one(tmp_path):
    tool, saver = drawn_tool(), Autosaver()
    path = tmp_path / "session.json"
    old = Snapshot.of(tool, path, None)
    tool.add_features(lines(3, 500.0))
    saver.save_now(Snapshot.of(tool, path, None))
    saver.save_now(old)  # a late write of an older state
    assert len(json.loads(path.read_text())["features"]) == 23


def test_a_failed_write_is_reported_and_the_next_succeeds(qtbot, tmp_path):
    tool, saver = drawn_tool(), Autosaver()
    blocked = tmp_path / "file"
    blocked.write_text("a file where the folder should be")
    with qtbot.waitSignal(saver.failed, timeout=5000) as failed:
        saver.request(Snapshot.of(tool, blocked / "session.json", None))
    assert "file" in failed.args[0]
    saver.request(Snapshot.of(tool, tmp_path / "session.json", None))
    assert saver.wait(5000) and (tmp_path / "session.json").exists()


@pytest.mark.parametrize("n", [3000])
def test_an_edit_with_thousands_of_features_encodes_one_feature(tmp_path, n):
    tool, encoder = ExtractionTool(settings=None), SessionEncoder()
    tool.add_features(lines(n))
    encoder.encode(Snapshot.of(tool, tmp_path / "s.json", None))
    tool.click((1.0, 1.0))
    tool.click((9.0, 9.0), straight=True)
    tool.finish()
    text = encoder.encode(Snapshot.of(tool, tmp_path / "s.json", None))
    assert encoder.encoded == n + 1 and len(json.loads(text)["features"]) == n + 1
