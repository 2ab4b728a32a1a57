"""Export / import GeoJSON, autosave and restore, the question before closing, the screenshot command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from app import dialogs
from app.model.tool import ExtractionTool
from app.session import SessionStore, state_from_dict, tool_to_dict
from tests.app.conftest import click_image, wait_idle, wait_pieces

ROOT = Path(__file__).resolve().parents[2]


def digitize(qtbot, window, clicks, finish=True):
    for x, y in clicks:
        click_image(qtbot, window, x, y)
    wait_pieces(qtbot, window)
    if finish:
        window.tool.finish()


def is_flat(value) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def test_export_then_import_gives_the_same_editable_features(qtbot, make_window, tmp_path):
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    digitize(qtbot, window, [(600, 740), (700, 745), (800, 748)])
    digitize(qtbot, window, [(300, 300), (420, 330)])
    window.tool.rename(window.tool.features[0].id, "Main road")
    before = [window.tool.feature_vertices(f) for f in window.tool.features]
    out = tmp_path / "lines.geojson"
    assert window.feature_io.export_geojson(out) == 2
    assert not window.tool.dirty
    collection = json.loads(out.read_text())
    # RFC 7946 flat form, as the command line writes it: no foreign members, ids, flat properties.
    assert set(collection) == {"type", "features"} and collection["type"] == "FeatureCollection"
    assert [f["id"] for f in collection["features"]] == [1, 2]
    first = collection["features"][0]
    assert all(is_flat(v) for f in collection["features"] for v in f["properties"].values())
    assert first["properties"]["name"] == "Main road" and "pixel_coordinates" not in first["properties"]
    assert first["properties"]["score"] == pytest.approx(window.tool.feature_score(window.tool.features[0]))
    details = json.loads(first["properties"]["linesnap"])
    assert len(details["pieces"]) == 2 and details["settings"]["nodes"] >= 3
    # WGS84 lon/lat with 7 decimals: the vertices digitized, rounded.
    raster = window.document.raster
    for feature, vertices in zip(collection["features"], before):
        exported = np.array(feature["geometry"]["coordinates"])
        assert feature["geometry"]["type"] == "LineString"
        np.testing.assert_array_equal(exported, np.round(np.column_stack(raster.pixel_to_lonlat(*vertices.T)), 7))
        assert all(len(repr(float(c)).split(".")[-1]) <= 7 for c in exported.ravel())  # as written in the file
    # Import into a fresh window: the lines placed by those positions, names, scores; the features stay editable.
    other = make_window(config_dir=tmp_path / "other")
    other.open_image(None)
    added = other.feature_io.import_geojson(out)
    assert [f.name for f in added] == ["Main road", "Line 2"]
    for feature, item in zip(other.tool.features, collection["features"]):
        lonlat = np.array(item["geometry"]["coordinates"])
        np.testing.assert_allclose(other.tool.feature_vertices(feature),
                                   np.column_stack(raster.lonlat_to_pixel(*lonlat.T)), atol=1e-9)
    assert other.tool.feature_score(other.tool.features[0]) == pytest.approx(
        window.tool.feature_score(window.tool.features[0]))
    assert other.tool.outcomes[added[0].pieces[0].id].details["properties"]["pieces"] == details["pieces"]
    other.tool.rename(added[1].id, "Track")
    other.tool.reopen(added[0].id)
    digitize(qtbot, other, [(900, 760)], finish=True)
    assert len(other.tool.feature(added[0].id).pieces) == 2 and other.tool.features[0].id == added[0].id
    # Re-exporting an untouched imported feature keeps its properties (details text included) and positions.
    again = tmp_path / "again.geojson"
    other.feature_io.export_geojson(again)
    track = [f for f in json.loads(again.read_text())["features"] if f["properties"]["name"] == "Track"][0]
    original = collection["features"][1]
    assert {k: v for k, v in track["properties"].items() if k != "name"} == \
        {k: v for k, v in original["properties"].items() if k != "name"}
    assert track["geometry"] == original["geometry"]


def test_import_places_lines_by_ground_position_and_refuses_lines_off_the_image(qtbot, make_window, tmp_path,
                                                                                shown_errors, monkeypatch):
    from tests.shared_data import shared_file

    roads = shared_file("vegas_roads.geojson")
    window = make_window()
    window.open_image(str(shared_file("vegas_pan_0.3m.tif")))
    wait_idle(qtbot, window)
    added = window.feature_io.import_geojson(roads)  # SpaceNet's centre lines: plain RFC 7946 lon/lat
    assert len(added) == 9
    raster = window.document.raster
    first = json.loads(roads.read_text())["features"][0]["geometry"]["coordinates"]
    expected = np.column_stack(raster.map_to_pixel(*np.array(first).T))  # the tile's CRS is lon/lat
    np.testing.assert_allclose(window.tool.feature_vertices(added[0]), expected, atol=1e-6)
    monkeypatch.setattr(dialogs, "ask_skip_duplicates", lambda parent, n, total: "add")
    window.feature_io.import_geojson(roads)  # twice, and added again: the status bar says so
    assert len(window.tool.features) == 18
    assert "9 of them were already here" in window.status.currentMessage()
    window.tool.undo()
    out = tmp_path / "vegas.geojson"
    window.feature_io.export_geojson(out)
    # Onto the sample scene (another place): nothing is added, and the dialog says why.
    other = make_window(config_dir=tmp_path / "other")
    other.open_image(None)
    monkeypatch.setattr(dialogs, "ask_import_path", lambda parent, folder: str(out))
    other.feature_io.import_dialog()  # on a worker
    qtbot.waitUntil(lambda: other.feature_io.job is None)
    assert other.tool.features == ()
    assert len(shown_errors) == 1 and "none of the 9 lines" in shown_errors[0].message


def test_export_and_import_through_the_menu_dialogs(qtbot, make_window, tmp_path, monkeypatch, shown_errors):
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    digitize(qtbot, window, [(600, 740), (800, 748)], finish=False)  # export finishes it
    out = tmp_path / "menu"
    monkeypatch.setattr(dialogs, "ask_export_path", lambda parent, suggestion: str(out) + ".geojson")
    window.feature_io.export_dialog()
    assert (tmp_path / "menu.geojson").exists() and window.tool.current is None
    bad = tmp_path / "points.geojson"
    bad.write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": [15.0, 47.0]}, "properties": {}}]}))
    monkeypatch.setattr(dialogs, "ask_import_path", lambda parent, folder: str(bad))
    window.feature_io.import_dialog()
    qtbot.waitUntil(lambda: window.feature_io.job is None)
    assert len(shown_errors) == 1 and "no LineString" in shown_errors[0].message


def test_the_import_dialog_opens_in_home_for_the_sample_then_where_the_last_export_went(make_window, tmp_path,
                                                                                  monkeypatch):
    window = make_window()
    window.open_image(None)
    folders = []
    monkeypatch.setattr(dialogs, "ask_import_path", lambda parent, folder: folders.append(folder))
    window.feature_io.import_dialog()
    window.feature_io.export_geojson(tmp_path / "lines.geojson")
    window.feature_io.import_dialog()
    assert [Path(f) for f in folders] == [Path.home(), tmp_path]  # the sample's folder is the package's


def test_session_dict_round_trip_keeps_pieces_and_outcomes():
    from core.extraction import ExtractionSettings

    tool = ExtractionTool(ExtractionSettings())
    requests = []
    tool.piece_requested.connect(lambda piece, start: requests.append(piece))
    tool.click((1, 2))
    tool.click((30, 4))
    tool.click((60, 9), straight=True)
    tool.finish()
    tool.click((5, 5))
    tool.click((40, 5))  # pending at save time
    data = json.loads(json.dumps(tool_to_dict(tool, "/some/image.tif")))
    state, outcomes = state_from_dict(data, ExtractionSettings.from_dict)
    restored = ExtractionTool(ExtractionSettings())
    again = []
    restored.piece_requested.connect(lambda piece, start: again.append(piece))
    restored.restore(state, outcomes)
    assert restored.state == tool.state
    assert sorted(p.id for p in again) == sorted(p.id for p in requests)  # nothing had come back: all re-run
    np.testing.assert_array_equal(restored.outcomes[state.features[0].pieces[1].id].vertices_px, [[30, 4], [60, 9]])
    with pytest.raises(ValueError, match="session"):
        state_from_dict({"format": "other"}, ExtractionSettings.from_dict)


def test_an_imported_line_keeps_its_attributes_when_extended_and_through_an_autosave():
    from app.io_actions import feature_properties
    from core.extraction import ExtractionSettings

    tool = ExtractionTool(ExtractionSettings())
    attributes = {"road_id": 22455, "lane_number": "2", "paved": "1"}
    (road,) = tool.add_features([("Main St", np.array([[10.0, 10.0], [10.0, 90.0]]), attributes)])
    tool.reopen(road.id)
    tool.click((14.0, 140.0), straight=True)  # the road goes on
    tool.finish()
    exported = feature_properties(tool, tool.features[0])
    assert {k: exported[k] for k in attributes} == attributes
    assert [p["kind"] for p in exported["pieces"]] == ["imported", "straight"]
    # a crash and a restore later, the export is the same
    data = json.loads(json.dumps(tool_to_dict(tool, "/some/image.tif")))
    restored = ExtractionTool(ExtractionSettings())
    restored.restore(*state_from_dict(data, ExtractionSettings.from_dict))
    assert feature_properties(restored, restored.features[0]) == exported


def test_autosave_survives_a_kill_and_is_restored(qtbot, make_window, tmp_path, monkeypatch):
    config = tmp_path / "config"
    window = make_window(config_dir=config)
    window.open_image(None)
    wait_idle(qtbot, window)
    digitize(qtbot, window, [(600, 740), (800, 748)])
    digitize(qtbot, window, [(300, 300), (420, 330)], finish=False)
    qtbot.waitUntil(lambda: SessionStore(config).load() is not None
                    and len(SessionStore(config).load()["features"]) == 1
                    and SessionStore(config).load()["current"] is not None, timeout=5000)
    expected = [window.tool.feature_vertices(f) for f in window.tool.features]
    # A kill: the process ends without closeEvent.  Simulate it by copying the autosave aside.
    saved = (config / "session.json").read_text()
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    (crashed / "session.json").write_text(saved)
    asked = []
    monkeypatch.setattr(dialogs, "ask_restore_session", lambda parent, summary: asked.append(summary) or True)
    second = make_window(config_dir=crashed)
    assert second.restore_session_if_any()
    assert asked and "2 features" in asked[0]
    assert second.document.path == window.document.path
    np.testing.assert_allclose(second.tool.feature_vertices(second.tool.features[0]), expected[0])
    assert second.tool.current is not None and len(second.tool.current.pieces) == 1
    assert second.tool.dirty


KILLED_SESSION = """
import os, signal, sys, time
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.main_window import MainWindow
window = MainWindow(config_dir=sys.argv[1])
window.show()
window.open_image(None)
def spin(condition):
    end = time.monotonic() + 120
    while not condition() and time.monotonic() < end:
        app.processEvents()
        time.sleep(0.005)
spin(lambda: not window.runner.busy)
window.tool.click((600.0, 740.0))
window.tool.click((800.0, 748.0))
spin(lambda: not window.tool.is_pending(window.tool.current.pieces[0]))
window.tool.finish()
window.tool.click((300.0, 300.0))
end = time.monotonic() + 1.0  # longer than the autosave delay
spin(lambda: time.monotonic() > end)
print(window.tool.feature_vertices(window.tool.features[0]).tolist(), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_work_survives_a_real_kill(qtbot, make_window, tmp_path, monkeypatch):
    config = tmp_path / "killed"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-c", KILLED_SESSION, str(config)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == -9, done.stderr
    vertices = json.loads(done.stdout.strip().splitlines()[-1])
    monkeypatch.setattr(dialogs, "ask_restore_session", lambda parent, summary: True)
    window = make_window(config_dir=config)
    assert window.restore_session_if_any()
    np.testing.assert_allclose(window.tool.feature_vertices(window.tool.features[0]), vertices)
    assert window.tool.current is not None and window.tool.current.start_xy == (300.0, 300.0)


def test_declined_restore_removes_the_session(make_window, tmp_path, monkeypatch):
    config = tmp_path / "config"
    store = SessionStore(config)
    store.save({"format": "linesnap-session", "version": 1, "image": None, "dirty": True,
                "features": [{"id": 1, "name": "a", "start_xy": [0, 0], "pieces": []}], "current": None})
    monkeypatch.setattr(dialogs, "ask_restore_session", lambda parent, summary: False)
    window = make_window(config_dir=config)
    assert not window.restore_session_if_any()
    assert store.load() is None


def test_closing_with_unsaved_work_asks(qtbot, make_window, tmp_path, monkeypatch):
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    digitize(qtbot, window, [(600, 740), (800, 748)])
    answers = ["cancel"]
    monkeypatch.setattr(dialogs, "ask_unsaved", lambda parent, what: answers.pop(0))
    assert not window.close()
    assert window.isVisible() and window.session.load() is not None
    out = tmp_path / "saved.geojson"
    answers.append("save")
    monkeypatch.setattr(dialogs, "ask_export_path", lambda parent, suggestion: str(out))
    assert window.close()
    assert out.exists() and window.session.load() is None  # a normal exit leaves no session behind


def test_opening_another_image_asks_about_unsaved_work(qtbot, make_window, monkeypatch):
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    digitize(qtbot, window, [(600, 740), (800, 748)])
    monkeypatch.setattr(dialogs, "ask_unsaved", lambda parent, what: "discard")
    assert window.open_image(None)
    assert window.tool.features == () and not window.tool.dirty


def test_recent_files_are_remembered(qtbot, make_window, tmp_path):
    window = make_window()
    window.open_image(None)
    assert window.recent_files()[0].endswith("sample_scene.tif")
    assert window.recent_menu.actions()[0].text() == "sample_scene.tif"


@pytest.mark.slow
def test_screenshot_command_writes_a_picture(tmp_path):
    out = tmp_path / "shot.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", LINESNAP_CONFIG_DIR=str(tmp_path / "config"))
    done = subprocess.run([sys.executable, "-m", "app", "--screenshot", str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    from PySide6.QtGui import QImage

    image = QImage(str(out))
    assert image.width() >= 800 and image.height() >= 600
    assert not (tmp_path / "config" / "session.json").exists()


def test_an_export_refuses_while_a_piece_outlasts_the_wait(qtbot, make_window, tmp_path, shown_errors, monkeypatch):
    # it wrote the piece's straight stand-in and marked the work saved; the line that came later was then lost
    import time

    from app import io_actions
    from core.extraction import extract

    def slow(document, start, end, settings, cancel=None):
        time.sleep(1.5)
        return extract(document.path, start, end, settings)

    window = make_window(extract_fn=slow)
    window.open_image(None)
    wait_idle(qtbot, window)
    monkeypatch.setattr(io_actions, "PENDING_WAIT_S", 0.2)
    window.tool.click((600.0, 740.0))
    window.tool.click((800.0, 748.0))
    out = tmp_path / "lines.geojson"
    monkeypatch.setattr(dialogs, "ask_export_path", lambda parent, suggestion: str(out))
    window.feature_io.export_dialog()
    assert not out.exists() and window.tool.dirty
    assert len(shown_errors) == 1 and "still being extracted" in shown_errors[0].message
    wait_pieces(qtbot, window)
    assert window.feature_io.export_geojson(out) == 1  # once it is done: the extracted line
    assert len(json.loads(out.read_text())["features"][0]["geometry"]["coordinates"]) > 2
