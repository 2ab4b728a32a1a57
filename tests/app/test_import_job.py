"""GeoJSON import on a worker: progress, cancel, the same features as the direct import, one undo step."""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.model.document import sample_scene_path
from core.io.raster import open_raster
from tests.app.holding import hold_at_line


@pytest.fixture(scope="module")
def many_lines(tmp_path_factory):
    """1200 short RFC 7946 lon/lat lines on the sample scene, and 5 far away."""
    rng = np.random.default_rng(3)
    features = []
    with open_raster(str(sample_scene_path())) as raster:
        for k in range(1205):
            start = rng.uniform(50, 1450, 2) + (1e6 if k >= 1200 else 0.0)
            xy = start + np.cumsum(rng.normal(0, 6, (4, 2)), axis=0)
            lon, lat = raster.pixel_to_lonlat(xy[:, 0], xy[:, 1])
            features.append({"type": "Feature", "properties": {"osm_id": k},
                             "geometry": {"type": "LineString", "coordinates": np.column_stack([lon, lat]).tolist()}})
    path = tmp_path_factory.mktemp("import") / "lines.geojson"
    path.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    return path


def test_the_worker_import_adds_what_the_direct_import_adds_in_one_undo_step(qtbot, make_window, many_lines):
    window = make_window()
    window.open_image(None)
    seen = []
    job = window.feature_io.start_import(many_lines)
    job.progress.connect(lambda done, total, phase: seen.append((done, total, phase)))
    qtbot.waitUntil(lambda: window.feature_io.job is None, timeout=60_000)
    assert len(window.tool.features) == 1205
    assert "5 of them lie outside the image" in window.status.currentMessage()
    assert any(p[2].startswith("building") and p[1] == 1205 for p in seen)
    via_worker = [window.tool.feature_vertices(f) for f in window.tool.features]
    window.tool.undo()
    assert window.tool.features == ()
    window.feature_io.import_geojson(many_lines)  # the direct import, on this thread
    direct = [window.tool.feature_vertices(f) for f in window.tool.features]
    assert all(np.array_equal(a, b) for a, b in zip(via_worker, direct))
    assert [f.name for f in window.tool.features][:2] == ["Line 1", "Line 2"]


def test_cancel_stops_the_import_and_adds_nothing(qtbot, make_window, many_lines, monkeypatch):
    # Cancel pressed while the lines are placed: the worker waits at its 100th line until the test
    # holds the job and has cancelled it (a worker faster than the GUI thread would otherwise finish first).
    reached, cancelled_now, placed = hold_at_line(monkeypatch, "lonlat_to_pixel")
    window = make_window()
    window.open_image(None)
    job = window.feature_io.start_import(many_lines)
    assert reached.wait(60)
    with qtbot.waitSignal(job.cancelled, timeout=60_000):
        job.cancel()
        cancelled_now.set()
    qtbot.waitUntil(lambda: window.feature_io.job is None)
    assert window.tool.features == () and "cancelled" in window.status.currentMessage()
    assert max(placed) == 100  # the line being placed when Cancel came was the last, not the whole file


def test_closing_the_window_stops_a_running_import(qtbot, make_window, many_lines):
    window = make_window()
    window.open_image(None)
    job = window.feature_io.start_import(many_lines)
    window.shutdown()
    assert job.wait(0)


@pytest.mark.parametrize("suffix", [".geojson", ".gpkg", ".shp"])
def test_an_export_of_no_lines_imports_as_no_features_with_a_message(qtbot, make_window, tmp_path, suffix,
                                                                     shown_errors):
    # Export with no features writes an empty layer; importing it was an error dialog ("holds no features")
    window = make_window()
    window.open_image(None)
    path = tmp_path / f"none{suffix}"
    assert window.feature_io.export_geojson(path) == 0
    job = window.feature_io.start_import(path)
    assert job is not None
    qtbot.waitUntil(lambda: window.feature_io.job is None, timeout=60_000)
    assert window.tool.features == () and shown_errors == []
    assert window.status.currentMessage() == f"imported 0 features from none{suffix}: the file holds no lines"


def test_a_plain_images_geojson_export_keys_as_its_lines():
    """Re-import of a plain image's GeoJSON finds every line already here: the export rounds pixels to 7
    decimals, and the duplicate key must not round them again more coarsely (a value the export put on a
    half-step of 6 decimals then missed its original's key)."""
    from app.import_job import _export_keys
    from core.vector.export import ExportLine, geojson_text

    rng = np.random.default_rng(5)
    lines = [rng.uniform(0, 2000, (16, 2)) for _ in range(200)]
    written = json.loads(geojson_text([ExportLine(line) for line in lines], None))
    back = [np.array(f["geometry"]["coordinates"]) for f in written["features"]]
    assert _export_keys(back, None) == _export_keys(lines, None)


def test_the_import_message_says_what_was_left_out_or_split(qtbot, make_window, tmp_path):
    # points and null geometries were skipped, a MultiLineString became several features and heights were
    # dropped, all without a word
    with open_raster(str(sample_scene_path())) as raster:
        lon, lat = raster.pixel_to_lonlat(np.array([100.0, 300.0, 500.0]), np.array([100.0, 150.0, 120.0]))
    line = np.column_stack([lon, lat]).tolist()
    features = [{"type": "Feature", "properties": {}, "geometry": {"type": "LineString", "coordinates": line}},
                {"type": "Feature", "properties": {},
                 "geometry": {"type": "MultiLineString", "coordinates": [line, [p + [12.5] for p in line]]}},
                {"type": "Feature", "properties": {}, "geometry": {"type": "Point", "coordinates": line[0]}},
                {"type": "Feature", "properties": {}, "geometry": None}]
    path = tmp_path / "mixed.geojson"
    path.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    window = make_window()
    window.open_image(None)
    window.feature_io.start_import(path)
    qtbot.waitUntil(lambda: window.feature_io.job is None, timeout=60_000)
    assert len(window.tool.features) == 3
    assert window.status.currentMessage() == (
        "imported 3 features from mixed.geojson; 1 feature without a geometry and 1 point left out (not lines); "
        "1 multi-part line read as 2 lines, one per part; heights (Z) not kept")


def test_the_worker_runs_a_full_collection_only_after_a_large_import(qtbot, make_window, many_lines, monkeypatch):
    import gc

    from app import import_job

    collections = []
    monkeypatch.setattr(import_job.gc, "collect", lambda *args: collections.append(args) or 0)
    window = make_window()
    window.open_image(None)
    window.feature_io.start_import(many_lines)  # 1205 lines: no full pass (it would hold the GUI thread up)
    qtbot.waitUntil(lambda: window.feature_io.job is None, timeout=60_000)
    assert len(window.tool.features) == 1205 and collections == []
    assert gc.isenabled()  # (the pause while reading ended)
    monkeypatch.setattr(import_job, "COLLECT_AFTER_LINES", 1000)
    window.tool.undo()
    window.feature_io.start_import(many_lines)
    qtbot.waitUntil(lambda: window.feature_io.job is None, timeout=60_000)
    assert len(window.tool.features) == 1205 and len(collections) == 1
