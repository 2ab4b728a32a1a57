"""File > Add Reference Layer on a worker: the window keeps processing events, progress, cancel, errors."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PySide6.QtCore import QTimer

from app import dialogs
from app.model.document import sample_scene_path
from app.model.reference import load_reference_layer
from core.io.raster import open_raster
from core.vector import ExportLine, write_lines
from tests.app.holding import hold_at_line

LINES = 1200


@pytest.fixture(scope="module")
def layer_path(tmp_path_factory):
    """1200 short lines on the sample scene, in a GeoPackage in the image's CRS (UTM 33N)."""
    rng = np.random.default_rng(11)
    lines = [ExportLine(rng.uniform(50, 1450, 2) + np.cumsum(rng.normal(0, 6, (4, 2)), axis=0), {"k": k})
             for k in range(LINES)]
    path = tmp_path_factory.mktemp("reference") / "roads.gpkg"
    with open_raster(str(sample_scene_path())) as raster:
        write_lines(path, lines, raster)
    return path


@pytest.fixture
def held_at_line(monkeypatch):
    """The worker waits at its 100th placed line until the test releases it: (reached, release, placed)."""
    reached, release, placed = hold_at_line(monkeypatch, "map_to_pixel")
    yield reached, release, placed
    release.set()


def test_the_layer_is_read_on_a_worker_while_the_window_processes_events(qtbot, make_window, layer_path,
                                                                         held_at_line, monkeypatch):
    reached, release, _ = held_at_line
    window = make_window()
    window.open_image(None)
    monkeypatch.setattr(dialogs, "ask_reference_path", lambda parent, folder: str(layer_path))
    window.projects.reference_dialog()  # File > Add Reference Layer...
    job = window.projects.reference_job
    seen = []
    job.progress.connect(lambda done, total, phase: seen.append((done, total, phase)))
    assert reached.wait(60)  # the worker is in the middle of the layer...
    ticks = []
    timer = QTimer(window)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(5)
    qtbot.waitUntil(lambda: len(ticks) >= 5 and bool(seen), timeout=10_000)  # ...and the GUI thread runs meanwhile
    assert window.projects.references.layers == ()  # nothing shown before the whole layer is read
    release.set()
    qtbot.waitUntil(lambda: window.projects.reference_job is None, timeout=60_000)
    timer.stop()
    (layer,) = window.projects.references.layers
    direct = load_reference_layer(layer_path, window.document.raster)  # the same reading on this thread
    assert len(layer.lines_px) == LINES
    assert all(np.array_equal(a, b) for a, b in zip(layer.lines_px, direct.lines_px))
    assert any(phase.startswith("placing") for _, _, phase in seen)
    assert f"{LINES} lines" in window.status.currentMessage()


def test_cancel_adds_nothing(qtbot, make_window, layer_path, held_at_line):
    reached, release, placed = held_at_line
    window = make_window()
    window.open_image(None)
    job = window.projects.start_reference(layer_path)
    assert reached.wait(60)
    with qtbot.waitSignal(job.cancelled, timeout=60_000):
        job.cancel()
        release.set()
    qtbot.waitUntil(lambda: window.projects.reference_job is None)
    assert window.projects.references.layers == () and "cancelled" in window.status.currentMessage()
    assert max(placed) == 100  # stopped at the line being placed, not at the end of the file


def test_a_file_that_cannot_be_read_is_one_error_dialog_and_no_layer(qtbot, make_window, tmp_path, shown_errors):
    bad = tmp_path / "broken.gpkg"
    bad.write_bytes(b"not a geopackage at all")
    window = make_window()
    window.open_image(None)
    window.projects.start_reference(bad)
    qtbot.waitUntil(lambda: window.projects.reference_job is None, timeout=30_000)
    assert window.projects.references.layers == ()
    assert len(shown_errors) == 1 and shown_errors[0].title == "Could not add the reference layer"
    assert "broken.gpkg" in shown_errors[0].message


def test_an_empty_layer_is_added_as_a_layer_of_no_lines(qtbot, make_window, tmp_path, shown_errors):
    empty = tmp_path / "planned.gpkg"
    with open_raster(str(sample_scene_path())) as raster:
        write_lines(empty, [], raster)
    window = make_window()
    window.open_image(None)
    window.projects.start_reference(empty)
    qtbot.waitUntil(lambda: window.projects.reference_job is None, timeout=30_000)
    (layer,) = window.projects.references.layers
    assert len(layer.lines_px) == 0 and shown_errors == []
    assert "reference layer planned: 0 lines" in window.status.currentMessage()
    assert not window.viewer.grab().toImage().isNull()  # drawn (no lines) without an error


def test_closing_the_window_stops_a_running_reading(qtbot, make_window, layer_path, held_at_line):
    reached, release, placed = held_at_line
    window = make_window()
    window.open_image(None)
    job = window.projects.start_reference(layer_path)
    assert reached.wait(60)
    threading.Timer(0.2, release.set).start()  # the worker goes on while shutdown waits for it
    window.shutdown()
    assert job.wait(0) and job.token.cancelled
    assert max(placed) == 100


@pytest.fixture(scope="module")
def geojson_path(tmp_path_factory):
    """300 short lines on the sample scene in an RFC 7946 GeoJSON file (lon/lat)."""
    rng = np.random.default_rng(12)
    lines = [ExportLine(rng.uniform(50, 1450, 2) + np.cumsum(rng.normal(0, 6, (4, 2)), axis=0), {"k": k})
             for k in range(300)]
    path = tmp_path_factory.mktemp("reference") / "tracks.geojson"
    with open_raster(str(sample_scene_path())) as raster:
        write_lines(path, lines, raster)
    return path


def test_a_project_opens_at_once_and_its_layers_follow_in_order_with_their_styles(
        qtbot, make_window, layer_path, geojson_path, held_at_line, tmp_path):
    reached, release, _ = held_at_line
    first = make_window()
    first.open_image(None)
    first.projects.add_reference(layer_path)
    first.projects.add_reference(geojson_path)
    first.projects.references.set_colour(0, "#123456")
    first.projects.references.set_visible(1, False)
    project = tmp_path / "p.linesnap"
    first.projects.save_project(project)
    expected = first.projects.references.layers
    second = make_window(config_dir=tmp_path / "other")
    assert second.projects.open_project(project)  # returns while the first layer is being read
    assert reached.wait(60)
    ticks = []
    timer = QTimer(second)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(5)
    qtbot.waitUntil(lambda: len(ticks) >= 5, timeout=10_000)  # the GUI thread runs meanwhile
    assert second.projects.references.layers == ()
    release.set()
    qtbot.waitUntil(lambda: len(second.projects.references.layers) == 2, timeout=60_000)
    timer.stop()
    qtbot.waitUntil(lambda: second.projects.reference_job is None)
    got = second.projects.references.layers
    assert [(x.path, x.colour, x.visible) for x in got] == [(x.path, x.colour, x.visible) for x in expected]
    for a, b in zip(got, expected):
        assert len(a.lines_px) == len(b.lines_px)
        assert all(np.allclose(p, q, atol=1e-6) for p, q in zip(a.lines_px, b.lines_px))


def test_a_crash_recovery_reads_its_layers_on_the_worker(qtbot, make_window, geojson_path, shown_errors, tmp_path):
    window = make_window()
    window.open_image(None)
    missing = tmp_path / "gone.geojson"
    window.projects.restore_context({"references": [{"path": str(missing)}, {"path": str(geojson_path),
                                                                             "colour": "#00ff00"}]})
    assert window.projects.reference_job is not None  # not read on this thread
    qtbot.waitUntil(lambda: window.projects.reference_job is None and not window.projects.queued_references,
                    timeout=60_000)
    (layer,) = window.projects.references.layers
    assert layer.colour == "#00ff00" and len(layer.lines_px) == 300
    assert len(shown_errors) == 1 and "gone.geojson" in shown_errors[0].message


def test_saving_while_the_layers_load_or_with_one_missing_keeps_them_all_in_the_project(
        qtbot, make_window, layer_path, geojson_path, held_at_line, tmp_path, shown_errors):
    # the project kept only the layers read so far: saved at once, it lost every one for good
    import json

    reached, release, _ = held_at_line
    first = make_window()
    first.open_image(None)
    first.projects.add_reference(layer_path)
    first.projects.add_reference(geojson_path)
    first.projects.references.set_colour(1, "#00ff00")
    missing = tmp_path / "gone.geojson"
    missing.write_text(geojson_path.read_text())
    first.projects.add_reference(missing)
    project = tmp_path / "p.linesnap"
    first.projects.save_project(project)
    entries = json.loads(project.read_text())["images"][0]["references"]
    assert [e["path"] for e in entries] == [str(layer_path), str(geojson_path), str(missing)]
    missing.unlink()  # a file away for now (a drive not mounted)

    second = make_window(config_dir=tmp_path / "other")
    assert second.projects.open_project(project)
    assert reached.wait(60)  # the first layer is being read, the others wait their turn
    second.projects.save_project(project)
    assert json.loads(project.read_text())["images"][0]["references"] == entries
    release.set()
    qtbot.waitUntil(lambda: second.projects.reference_job is None and not second.projects.queued_references,
                    timeout=60_000)
    assert len(second.projects.references.layers) == 2 and len(shown_errors) == 1
    second.projects.save_project(project)  # the missing one is kept, at the end
    assert json.loads(project.read_text())["images"][0]["references"] == entries
    assert second.projects.session_context()["references"] == [
        {k: v for k, v in e.items() if k != "relative_path"} for e in entries]
