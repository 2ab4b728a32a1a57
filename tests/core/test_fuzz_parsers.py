"""The project's own fuzzing: hypothesis drives every parser and the extraction settings.

Each input, valid or damaged, must end in a valid result or the parser's
documented error, never another exception.  Inputs are random JSON values and
valid documents with one part replaced by a random value.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.extraction import ExtractionSettings
from core.io.geojson import GeoJSONError, LineFeature, read_geojson, to_feature_collection
from core.knapsack import KP1, MCKP
from core.knapsack.io import KnapsackFormatError, instance_to_dict, read_instances

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats(allow_nan=False, allow_infinity=False)
           | st.text(max_size=8) | st.sampled_from([0, 1, -1, 1e300, 2**63, "1", "", "pixel", "lonlat"]))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)


def _paths(value, prefix=()):
    """Every place in a JSON value, as key tuples."""
    yield prefix
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        yield from _paths(child, prefix + (key,))


def _replaced(document, path, new):
    if not path:
        return new
    copy = json.loads(json.dumps(document))
    node = copy
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = new
    return copy


def _mutants(document):
    """A valid document with one place replaced by a random JSON value."""
    paths = list(_paths(document))
    return st.tuples(st.sampled_from(paths), json_values).map(lambda pair: _replaced(document, *pair))


def _write(text: str, suffix: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="linesnap-fuzz-"))
    path = folder / f"input{suffix}"
    path.write_text(text, encoding="utf-8")
    return path


OUR_GEOJSON = to_feature_collection([LineFeature(np.array([[1.0, 2.0], [30.0, 4.5], [60.0, 9.0]]), "a",
                                                 {"score": 1.5, "settings": {"nodes": 8}})])
OTHER_GEOJSON = {"type": "FeatureCollection", "features": [
    {"type": "Feature", "properties": {"name": "b"}, "geometry": {"type": "MultiLineString",
                                                                  "coordinates": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]}},
    {"type": "Feature", "properties": None, "geometry": {"type": "Point", "coordinates": [1, 2]}}],
    "linesnap:coordinates": "pixel"}


def _check_geojson(document) -> None:
    path = _write(json.dumps(document, allow_nan=False), ".geojson")
    try:
        lines = read_geojson(path)
    except GeoJSONError as err:
        assert str(path) in str(err) and "\n" not in str(err)
        return
    for line in lines:
        assert isinstance(line, LineFeature) and line.vertices_px.shape[1] == 2 and len(line.vertices_px) >= 2
        assert np.isfinite(line.vertices_px).all() and isinstance(line.name, str)


@FUZZ
@given(_mutants(OUR_GEOJSON) | _mutants(OTHER_GEOJSON) | json_values)
def test_read_geojson_gives_lines_or_a_geojson_error(document):
    _check_geojson(document)


OUR_KNAPSACK = {"format": "linesnap-knapsack", "version": 1, "instances": [
    instance_to_dict(KP1([3, 4, 5], [2, 3, 4], 5)),
    instance_to_dict(MCKP([([1, 2], [1, 2]), ([3], [1])], 3))]}


@FUZZ
@given(_mutants(OUR_KNAPSACK) | json_values)
def test_read_knapsack_json_gives_instances_or_a_format_error(document):
    path = _write(json.dumps(document, allow_nan=False), ".json")
    try:
        instances = read_instances(path)
    except KnapsackFormatError as err:
        assert str(path) in str(err) and "\n" not in str(err)
        return
    assert instances and all(i.problem is not None for i in instances)


@FUZZ
@given(st.text(alphabet="0123456789 -;,\n\t.ek", max_size=200), st.sampled_from(["", ".ins2D", ".csv", ".txt"]))
def test_read_knapsack_text_formats_give_instances_or_a_format_error(text, suffix):
    path = _write(text, suffix)
    try:
        instances = read_instances(path)
    except KnapsackFormatError as err:
        assert str(path) in str(err) and "\n" not in str(err)
        return
    assert instances


FIELDS = ["nodes", "points", "half_width_px", "max_turn_deg", "sigma_px", "mode", "ribbon_width_px", "polarity",
          "ribbon_combine", "snap_endpoints", "snap_half_width_px", "solver", "backend", "band", "unknown"]
setting_values = scalars | st.sampled_from(["auto", "ribbon", "edge", "window", "mitm", "cpu", "bright", "mean"])


@FUZZ
@given(st.dictionaries(st.sampled_from(FIELDS), setting_values, max_size=6) | json_values)
def test_extraction_settings_from_any_dict_are_valid_or_a_type_or_value_error(values):
    try:
        options = ExtractionSettings.from_dict(values)
    except (TypeError, ValueError) as err:
        assert str(err) and "\n" not in str(err)
        return
    assert ExtractionSettings.from_dict(options.to_dict()) == options  # a valid result round-trips
