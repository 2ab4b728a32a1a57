"""Project files, settings per image, presets and reference layers in the window (pytest-qt)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from app import dialogs
from app.model.document import sample_scene_path
from app.model.viewmath import ViewTransform
from core.extraction.presets import PRESETS, preset
from core.vector import ExportLine, write_lines
from tests.app.conftest import wait_idle


def _draw_two_lines(window) -> None:
    window.tool.click((100.0, 100.0))
    window.tool.click((300.0, 140.0), straight=True)
    window.tool.finish()
    window.tool.click((400.0, 400.0))
    window.tool.click((420.0, 600.0), straight=True)  # left unfinished: the project keeps it too


def _reference_file(tmp_path, window) -> tuple:
    line = np.array([[50.0, 60.0], [700.0, 820.5], [900.0, 100.25]])
    path = tmp_path / "refs" / "roads.gpkg"
    path.parent.mkdir()
    write_lines(path, [ExportLine(line, {"name": "r1"}, None)], window.document.raster)
    return path, line


def test_a_project_round_trip_keeps_work_settings_view_and_reference_layers(qtbot, make_window, tmp_path):
    first = make_window()
    first.open_image(None)
    wait_idle(qtbot, first)
    _draw_two_lines(first)
    highway = preset("highway", first.tool.settings)
    first.settings_panel.choose_preset("highway")
    assert first.tool.settings == highway
    view = ViewTransform(2.0, 30.5, 40.25)
    first.viewer.set_transform(view)
    reference, line = _reference_file(tmp_path, first)
    first.projects.add_reference(reference)
    target = tmp_path / "work" / "roads.linesnap"
    target.parent.mkdir()
    first.projects.save_project(target)
    saved = json.loads(target.read_text())
    assert saved["images"][0]["path"] == str(sample_scene_path().resolve())
    assert saved["images"][0]["references"][0]["path"] == str(reference.resolve())
    vertices = [first.tool.feature_vertices(f) for f in first.tool.features]

    second = make_window(config_dir=tmp_path / "other-config")
    assert second.projects.open_project(target)
    wait_idle(qtbot, second)
    assert second.tool.settings == highway
    assert second.settings_panel.preset_combo.currentText() == "highway"
    assert second.viewer.transform == view
    assert len(second.tool.features) == 1 and second.tool.current is not None
    np.testing.assert_allclose(second.tool.feature_vertices(second.tool.features[0]), vertices[0])
    layers = second.projects.references.layers
    assert len(layers) == 1 and second.layers_dock.isVisible()  # listed in the Layers dock
    np.testing.assert_allclose(layers[0].lines_px[0], line, atol=1e-6)
    assert second.projects.recent_projects() == [str(target.resolve())]


def test_a_project_moved_with_its_files_opens_from_its_new_folder(qtbot, make_window, tmp_path):
    # paths were only absolute: "image file .../old/scene.tif does not exist", the work out of reach
    old = tmp_path / "old"
    old.mkdir()
    image = old / "scene.tif"
    shutil.copy(sample_scene_path(), image)
    first = make_window()
    first.open_image(str(image))
    wait_idle(qtbot, first)
    _draw_two_lines(first)
    reference, line = _reference_file(old, first)
    first.projects.add_reference(reference)
    first.projects.save_project(old / "p.linesnap")
    saved = json.loads((old / "p.linesnap").read_text())["images"][0]
    assert saved["relative_path"] == "scene.tif"
    assert saved["references"][0]["relative_path"] == str(Path("refs", "roads.gpkg"))
    first.tool.mark_saved()
    first.close()
    new = tmp_path / "elsewhere" / "new"
    shutil.move(old, new)

    second = make_window(config_dir=tmp_path / "other-config")
    assert second.projects.open_project(new / "p.linesnap")
    wait_idle(qtbot, second)
    qtbot.waitUntil(lambda: len(second.projects.references.layers) == 1, timeout=60_000)
    assert second.document.path == str((new / "scene.tif").resolve())
    assert len(second.tool.features) == 1 and second.tool.current is not None
    (layer,) = second.projects.references.layers
    assert layer.path == str((new / "refs" / "roads.gpkg").resolve())
    np.testing.assert_allclose(layer.lines_px[0], line, atol=1e-6)
    second.projects.save_project(new / "p.linesnap")  # saved again: the new places
    saved = json.loads((new / "p.linesnap").read_text())
    assert saved["active"] == saved["images"][0]["path"] == str((new / "scene.tif").resolve())


def test_settings_belong_to_their_image_and_a_new_image_gets_the_defaults(qtbot, make_window, tmp_path):
    other = tmp_path / "other.tif"
    shutil.copy(sample_scene_path(), other)
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    window.settings_panel.choose_preset("river")
    river = window.tool.settings
    assert all(getattr(river, k) == v for k, v in PRESETS["river"].items())  # every setting, through the dock
    window.open_image(str(other))
    wait_idle(qtbot, window)
    assert window.tool.settings == type(river)(backend=river.backend, solver=river.solver)
    assert window.status.currentMessage().endswith(": the default settings (a new image)")
    window.settings_panel.choose_preset("track")
    window.open_image(None)
    wait_idle(qtbot, window)
    assert window.tool.settings == river
    window.open_image(str(other))
    wait_idle(qtbot, window)
    assert window.settings_panel.preset_combo.currentText() == "track"
    # a new window remembers them too (the settings file)
    again = make_window(config_dir=window.config_dir)
    again.open_image(None)
    wait_idle(qtbot, again)
    assert again.tool.settings == river


def test_switching_images_in_a_project_keeps_each_images_work(qtbot, make_window, tmp_path):
    other = tmp_path / "other.tif"
    shutil.copy(sample_scene_path(), other)
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    _draw_two_lines(window)
    window.tool.finish()
    target = tmp_path / "two.linesnap"
    window.projects.save_project(target)
    assert window.open_image(str(other))  # no question: the project keeps the work (no_questions)
    wait_idle(qtbot, window)
    assert window.tool.features == ()
    window.tool.click((10.0, 10.0))
    window.tool.click((60.0, 10.0), straight=True)
    window.tool.finish()
    window.open_image(None)
    wait_idle(qtbot, window)
    assert len(window.tool.features) == 2
    saved = json.loads(target.read_text())
    assert [len(entry["features"]) for entry in saved["images"]] == [2, 1]


def test_the_crash_autosave_names_the_project_and_layers_by_absolute_path(qtbot, make_window, tmp_path, monkeypatch):
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    reference, _ = _reference_file(tmp_path, window)
    monkeypatch.chdir(tmp_path)
    window.projects.add_reference("refs/roads.gpkg")  # typed relative
    window.projects.save_project("p.linesnap")
    _draw_two_lines(window)
    window.autosave()
    data = json.loads(window.session.path.read_text())
    assert data["project"] == str((tmp_path / "p.linesnap").resolve())
    assert data["references"][0]["path"] == str(reference.resolve())
    assert data["image"] == str(sample_scene_path().resolve())


def test_a_damaged_project_is_a_one_line_error(qtbot, make_window, tmp_path, monkeypatch, shown_errors):
    bad = tmp_path / "bad.linesnap"
    bad.write_text(json.dumps({"format": "linesnap-project", "version": 1, "images": [{"path": 3}]}))
    window = make_window()
    monkeypatch.setattr(dialogs, "ask_project_path", lambda parent, save, suggestion: str(bad))
    window.projects.open_dialog()
    assert len(shown_errors) == 1 and "needs a 'path'" in shown_errors[0].message
    with pytest.raises(ValueError, match="must end in .linesnap"):
        window.open_image(None) and window.projects.save_project(tmp_path / "x.json")


def test_a_project_whose_image_is_gone_leaves_the_work_unsaved(qtbot, make_window, tmp_path, monkeypatch,
                                                             shown_errors):
    moved = tmp_path / "moved.tif"
    shutil.copy(sample_scene_path(), moved)
    window = make_window()
    window.open_image(str(moved))
    wait_idle(qtbot, window)
    window.projects.save_project(tmp_path / "p.linesnap")
    window.open_image(None)
    wait_idle(qtbot, window)
    _draw_two_lines(window)
    moved.unlink()
    monkeypatch.setattr(dialogs, "ask_unsaved", lambda parent, action, project=None: "discard")
    assert not window.projects.open_project(tmp_path / "p.linesnap")  # its image is gone: an error dialog
    assert len(shown_errors) == 1 and len(window.tool.features) == 1
    assert window.tool.dirty  # (it was marked saved, and the next close discarded it without a question)


def test_clicks_snap_to_a_reference_layer_after_the_work_layer(qtbot, make_window, tmp_path):
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    path, line = _reference_file(tmp_path, window)
    window.projects.add_reference(path)
    editing = window.controller.editing
    window.viewer.set_transform(ViewTransform(1.0, 0.0, 0.0))
    x, y = line[1]
    assert editing.snapped(x + 4.0, y - 3.0) == pytest.approx(tuple(line[1]), abs=1e-6)
    assert editing.snap_target.kind == "reference vertex"
    middle = (line[0] + line[1]) / 2
    normal = np.array([-(line[1] - line[0])[1], (line[1] - line[0])[0]]) / np.hypot(*(line[1] - line[0]))
    snapped = np.array(editing.snapped(*(middle + 5.0 * normal)))
    assert editing.snap_target.kind == "reference segment" and np.allclose(snapped, middle, atol=1e-6)
    window.tool.click((x + 30.0, y))
    window.tool.click((x + 3.0, y + 2.0), straight=True)  # a work-layer end beside the reference vertex
    window.tool.finish()
    window.controller.editing.index.catch_up()
    assert editing.snapped(x + 3.5, y + 2.0) == pytest.approx((x + 3.0, y + 2.0))  # the work layer first
    assert editing.snapped(x + 60.0, y + 60.0) == (x + 60.0, y + 60.0)  # nothing near


def test_reference_layers_fields_and_a_stream_of_edits_reach_the_autosave(qtbot, make_window, tmp_path):
    # none of them asked for an autosave (a crash lost them), and a stream of edits 0.1 s apart was never written
    import time

    from app.model.attributes import FieldDef

    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    _draw_two_lines(window)
    window.autosave()

    def saved():
        return json.loads(window.session.path.read_text()) if window.session.path.exists() else {}

    reference, _ = _reference_file(tmp_path, window)
    window.projects.add_reference(str(reference))
    qtbot.waitUntil(lambda: len(saved().get("references", [])) == 1, timeout=5000)
    window.tool.set_fields((FieldDef("lanes", "integer"),))
    qtbot.waitUntil(lambda: [f["name"] for f in saved().get("fields", [])] == ["lanes"], timeout=5000)
    began = time.monotonic()
    for k in range(12):  # 1.2 s of edits 0.1 s apart: written while they go on
        window.tool.click((500.0 + 10 * k, 200.0), straight=True)
        qtbot.wait(100)
    assert time.monotonic() - began < 3.0
    written = saved()
    assert written != {} and str(500.0 + 10 * 8) in json.dumps(written)  # an edit of the stream's middle at least


def test_closing_in_a_project_saves_the_project(qtbot, make_window, tmp_path, monkeypatch):
    # "Save" exported GeoJSON and an export marked the work saved: the project file was left stale
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    target = tmp_path / "p.linesnap"
    window.projects.save_project(target)
    _draw_two_lines(window)
    window.tool.finish()
    asked = []
    monkeypatch.setattr(dialogs, "ask_export_path", lambda parent, suggestion: str(tmp_path / "x.geojson"))
    window.feature_io.export_dialog()  # an export beside the project: the project still has to be saved
    assert window.tool.dirty
    monkeypatch.setattr(dialogs, "ask_unsaved", lambda parent, what, project=None: asked.append(project) or "save")
    assert window.close()
    assert asked == ["p.linesnap"]
    assert [len(entry["features"]) for entry in json.loads(target.read_text())["images"]] == [2]


def test_another_linesnap_on_the_same_settings_keeps_its_images_settings(qtbot, make_window, tmp_path):
    import subprocess
    import sys

    from app.project_actions import IMAGE_SETTINGS_KEY

    config = tmp_path / "config"
    window = make_window(config_dir=config)
    window.open_image(None)
    wait_idle(qtbot, window)
    window.settings_panel.choose_preset("track")
    other = {"/data/other.tif": preset("river").to_dict()}  # what another process remembers meanwhile
    script = ("import json, sys; from PySide6.QtCore import QSettings; "
              "s = QSettings(sys.argv[1], QSettings.Format.IniFormat); "
              f"old = json.loads(s.value({IMAGE_SETTINGS_KEY!r})); old.update(json.loads(sys.argv[2])); "
              f"s.setValue({IMAGE_SETTINGS_KEY!r}, json.dumps(old)); s.sync()")
    window.qsettings.sync()
    subprocess.run([sys.executable, "-c", script, str(config / "linesnap.ini"), json.dumps(other)], check=True)
    window.settings_panel.choose_preset("highway")  # this process writes after it (from a stale copy, it was)
    stored = json.loads(window.qsettings.value(IMAGE_SETTINGS_KEY))
    assert "/data/other.tif" in stored and str(sample_scene_path().resolve()) in stored
