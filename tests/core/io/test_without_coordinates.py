"""core.io.jsonfile.without_coordinates: GeoJSON parsed without its positions, everything else the same."""

from __future__ import annotations

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.io.jsonfile import without_coordinates

numbers = st.one_of(st.integers(-10**6, 10**6), st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False))
positions = st.lists(st.lists(numbers, min_size=2, max_size=3), max_size=5)
odd_arrays = st.lists(st.one_of(numbers, st.none(), st.text(max_size=3)), max_size=4)  # (not only numbers)
texts = st.text(alphabet='ab "[]:,{}\\coordinates0123', max_size=30)
properties = st.dictionaries(st.sampled_from(["name", "id", "coordinates", "lanes", "note"]),
                             st.one_of(texts, numbers, positions, odd_arrays, st.none()), max_size=4)
geometries = st.one_of(
    st.none(),
    st.builds(lambda c: {"type": "LineString", "coordinates": c}, positions),
    st.builds(lambda c: {"type": "MultiLineString", "coordinates": c}, st.lists(positions, max_size=3)),
    st.builds(lambda c: {"type": "LineString", "coordinates": c}, odd_arrays),
)
features = st.builds(lambda i, p, g: {"type": "Feature", "id": i, "properties": p, "geometry": g},
                     st.one_of(st.integers(0, 99), texts, st.none()), properties, geometries)
collections = st.builds(lambda fs, crs: {"type": "FeatureCollection", **crs, "features": fs},
                        st.lists(features, max_size=6),
                        st.sampled_from([{}, {"crs": {"type": "name", "properties": {"name": "EPSG:32611"}}}]))


def _emptied(value):
    """``value`` with every ``coordinates`` member whose value is a (nested) array of numbers made ``[]``."""
    if isinstance(value, dict):
        return {k: [] if k == "coordinates" and isinstance(v, list) and _numbers_only(v) else _emptied(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_emptied(v) for v in value]
    return value


def _numbers_only(value) -> bool:
    if isinstance(value, list):
        return all(_numbers_only(v) for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@settings(max_examples=150, deadline=None)
@given(collections, st.sampled_from([None, 2]))
@example({"type": "FeatureCollection", "features": [
    {"type": "Feature", "id": 7, "properties": {"note": 'he said "coordinates": [1, 2]'},
     "geometry": {"type": "LineString", "coordinates": [[1, 2], [None, 3]]}},
    {"type": "Feature", "id": "r-2", "properties": {"coordinates": [[0.5, -1e-7]]},
     "geometry": {"type": "LineString", "coordinates": [[1.5, 2e10], [3, 4]]}}]}, None)
def test_everything_but_the_arrays_of_numbers_parses_the_same(document, indent):
    data = json.dumps(document, indent=indent).encode("utf-8")
    assert json.loads(without_coordinates(data)) == _emptied(json.loads(data))
