"""JSON and GeoJSON input and output that try to break the parsers: each ends in a documented error naming the place."""

from __future__ import annotations

import errno
import json
import os
import re
import time

import numpy as np
import pytest

from core.io.atomic import STALE_TEMPORARY_S
from core.io.geojson import GeoJSONError, LineFeature, read_geojson, write_geojson
from core.io.jsonfile import MAX_DEPTH, check_depth, load_json, parse_json
from core.vector import read_lines

LINE = np.array([[1.0, 2.0], [30.0, 40.0]])


def _collection(coordinates, pixel=True) -> str:
    feature = {"type": "Feature", "geometry": {"type": "LineString", "coordinates": coordinates}, "properties": {}}
    document = {"type": "FeatureCollection", "features": [feature]}
    if pixel:
        document["linesnap:coordinates"] = "pixel"
        feature["properties"]["pixel_coordinates"] = [[1, 2], [3, 4]]
    return json.dumps(document)


@pytest.mark.parametrize("text, words", [
    ("[" * 100_000 + "]" * 100_000, "nested deeper than"),
    ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "nested deeper than"),
    ("[1" + "0" * 400 + "]", "401 digits"),
    ("[1e400]", "beyond the range"),
    ("[NaN]", "NaN is not a JSON number"),
    ('{"a": 1,\n "b": }', ":2: invalid JSON (line 2, column"),
])
def test_parse_json_refuses_hostile_text_with_the_place(text, words):
    with pytest.raises(ValueError, match=f"^in.json.*{re.escape(words)}"):
        parse_json(text, "in.json")


def test_parse_json_keeps_ordinary_documents():
    assert parse_json('{"a": [1, 2.5, null, "x", {"b": -3}]}', "in.json") == {"a": [1, 2.5, None, "x", {"b": -3}]}


def test_check_depth_refuses_a_structure_that_contains_itself_and_accepts_shared_parts():
    loop: dict = {}
    loop["self"] = loop
    with pytest.raises(ValueError, match="self.self"):
        check_depth(loop, "properties")
    shared = [1, 2]
    check_depth({"a": shared, "b": [shared, shared]}, "properties")  # shared, not circular: fine


def test_load_json_refuses_a_file_over_the_size_limit_and_names_it(tmp_path):
    path = tmp_path / "big.json"
    path.write_text("[" + "1," * 100 + "1]")
    with pytest.raises(ValueError, match=r"big.json: the file has 203 bytes; at most 100"):
        load_json(path, max_bytes=100)


@pytest.mark.parametrize("coordinates, words", [
    ([["1", "2"], [3, 4]], "given as numbers"),
    ([[True, 2], [3, 4]], None),  # numpy makes booleans numbers: accepted as 1, a valid result
    ([[1e300, 2], [3, 4]], "x 1e+300 is out of range"),
    ([[1, 2]], "has 1 position(s)"),
    ([1, 2], "must be a list of positions"),
    ([[1, 2, 3, 4], [3, 4, 5, 6]], "must be a list of positions"),
])
def test_read_geojson_refuses_positions_that_are_not_numbers_in_range(tmp_path, coordinates, words):
    path = tmp_path / "lines.geojson"
    path.write_text(_collection(coordinates))
    if words is None:
        assert len(read_geojson(path)) == 1
        return
    with pytest.raises(GeoJSONError, match=r"lines.geojson: feature 0: coordinates.*" + re.escape(words)):
        read_geojson(path)


def test_read_geojson_refuses_huge_integers_and_deep_nesting(tmp_path):
    path = tmp_path / "lines.geojson"
    path.write_text(_collection([[int("1" + "0" * 400), 2], [3, 4]]))
    with pytest.raises(GeoJSONError, match="digits"):
        read_geojson(path)
    path.write_text('{"type": "FeatureCollection", "features": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(GeoJSONError, match="nested deeper"):
        read_geojson(path)


@pytest.mark.parametrize("where", ["features", "properties"])
def test_read_lines_refuses_deep_nesting_as_read_geojson_does(tmp_path, where):
    # File > Import reads through read_lines, which looks for a crs member before read_geojson parses
    deep = "[" * 100_000 + "]" * 100_000
    path = tmp_path / "lines.geojson"
    path.write_text(_collection([[1, 2], [3, 4]]).replace('"properties": {', '"properties": {"a": ' + deep + ", ")
                    if where == "properties" else '{"type": "FeatureCollection", "features": ' + deep + "}")
    with pytest.raises(GeoJSONError, match="lines.geojson: arrays or objects nested deeper"):
        read_lines(path)


def test_read_geojson_refuses_a_raster_that_is_not_a_raster(tmp_path):
    path = tmp_path / "lines.geojson"
    path.write_text(_collection([[1, 2], [3, 4]]))
    with pytest.raises(TypeError, match="raster must be an open core.io.raster.Raster"):
        read_geojson(path, raster="base.tif")
    with pytest.raises(TypeError, match="path must be a file path"):
        read_geojson(42)


@pytest.mark.parametrize("make", ["circular", "deep"])
def test_write_geojson_refuses_circular_or_very_deep_properties(tmp_path, make):
    properties: dict = {}
    if make == "circular":
        properties["self"] = properties
    else:
        node = properties
        for _ in range(100_000):
            node["a"] = {}
            node = node["a"]
    with pytest.raises(GeoJSONError, match=r"features\[0\].properties: nested deeper"):
        write_geojson(tmp_path / "out.geojson", [LineFeature(LINE, "x", properties)])
    assert list(tmp_path.iterdir()) == []


def test_write_geojson_onto_a_folder_or_into_a_missing_folder_is_an_os_error_naming_it(tmp_path):
    with pytest.raises(IsADirectoryError, match=str(tmp_path)):
        write_geojson(tmp_path, [LineFeature(LINE)])
    with pytest.raises(FileNotFoundError, match="missing"):
        write_geojson(tmp_path / "missing" / "out.geojson", [LineFeature(LINE)])


def test_a_full_disk_names_the_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match=r"No space left on device: '.*out.geojson'"):
        write_geojson(tmp_path / "out.geojson", [LineFeature(LINE)])
    assert list(tmp_path.iterdir()) == []


def test_the_next_write_removes_temporaries_that_a_killed_write_left(tmp_path):
    stale = tmp_path / ".out.geojson.abc123.tmp"
    fresh = tmp_path / ".out.geojson.def456.tmp"  # another writer's, still being written
    other = tmp_path / ".other.geojson.xyz.tmp"
    for path in (stale, fresh, other):
        path.write_text("partial")
    old = time.time() - 2 * STALE_TEMPORARY_S
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    write_geojson(tmp_path / "out.geojson", [LineFeature(LINE)])
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.geojson.xyz.tmp", fresh.name, "out.geojson"]
