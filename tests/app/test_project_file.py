"""The .linesnap file without a window: round trip of entries, absolute paths, clear errors."""

from __future__ import annotations

import json

import pytest

from app.model.tool import ExtractionTool
from app.project import ImageEntry, Project, ProjectError, load_project, work_of
from core.extraction import ExtractionSettings


def _tool_with_a_line() -> ExtractionTool:
    tool = ExtractionTool(ExtractionSettings())
    tool.click((10.0, 20.0))
    tool.click((50.0, 25.0), straight=True)
    tool.finish()
    return tool


def test_entries_round_trip(tmp_path):
    tool = _tool_with_a_line()
    settings = ExtractionSettings(half_width_px=14.0, band=2)
    project = Project()
    project.put(ImageEntry(str(tmp_path / "a.tif"), settings, {"scale": 2.0, "origin_x": 1.0, "origin_y": -3.5},
                           work_of(tool), [{"path": str(tmp_path / "r.gpkg"), "colour": "#ffffff", "visible": False}]))
    project.active = str(tmp_path / "a.tif")
    project.save(tmp_path / "p.linesnap")
    loaded = load_project(tmp_path / "p.linesnap")
    entry = loaded.entry(str(tmp_path / "a.tif"))
    assert entry.settings == settings and entry.view == {"scale": 2.0, "origin_x": 1.0, "origin_y": -3.5}
    assert entry.references[0]["visible"] is False and loaded.active == str(tmp_path / "a.tif")
    state, outcomes = entry.tool_state("test")
    restored = ExtractionTool(ExtractionSettings())
    restored.restore(state, outcomes)
    assert restored.feature_vertices(restored.features[0]).tolist() == tool.feature_vertices(tool.features[0]).tolist()


def test_relative_paths_of_a_hand_edited_project_are_read_from_its_folder(tmp_path):
    (tmp_path / "sub").mkdir()
    path = tmp_path / "sub" / "p.linesnap"
    path.write_text(json.dumps({"format": "linesnap-project", "version": 1, "active": "img.tif",
                                "images": [{"path": "img.tif", "references": [{"path": "../roads.shp"}]}]}))
    project = load_project(path)
    entry = project.entry(str(tmp_path / "sub" / "img.tif"))
    assert entry is not None and project.active == entry.path
    assert entry.references[0]["path"] == str(tmp_path / "roads.shp")
    assert entry.settings == ExtractionSettings()


@pytest.mark.parametrize("content, message", [
    ("{", "p.linesnap"),
    (json.dumps({"format": "something"}), "not a LineSnap project"),
    (json.dumps({"format": "linesnap-project", "version": 9, "images": []}), "version 9"),
    (json.dumps({"format": "linesnap-project", "version": 1, "images": {}}), "'images' must be a list"),
    (json.dumps({"format": "linesnap-project", "version": 1, "images": [{"path": "a", "settings": {"nodes": 1}}]}),
     "nodes"),
    (json.dumps({"format": "linesnap-project", "version": 1, "images": [{"path": "a", "view": {"scale": "x"}}]}),
     "'view'"),
    (json.dumps({"format": "linesnap-project", "version": 1, "images": [{"path": "a", "features": [{"id": 1}]}]}),
     "features"),
])
def test_damaged_projects_are_one_line_errors(tmp_path, content, message):
    path = tmp_path / "p.linesnap"
    path.write_text(content)
    with pytest.raises(ProjectError, match=message) as caught:
        load_project(path)
    assert "\n" not in str(caught.value)


def test_a_missing_project_and_a_wrong_suffix_are_refused(tmp_path):
    with pytest.raises(ProjectError, match="no such project file"):
        load_project(tmp_path / "none.linesnap")
    with pytest.raises(ProjectError, match="must end in .linesnap"):
        Project().save(tmp_path / "p.json")
