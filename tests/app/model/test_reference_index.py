"""The reference layers' grid index against a brute-force scan of every visible line (no Qt)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model.reference import ReferenceLayer, ReferenceLayers
from app.model.reference_index import ReferenceIndex


def _random_layer(rng, n: int, name: str) -> ReferenceLayer:
    lines = tuple(np.cumsum(rng.normal(0, 30, (int(rng.integers(2, 6)), 2)), axis=0) + rng.uniform(-100, 900, 2)
                  for _ in range(n))
    return ReferenceLayer(f"/{name}.gpkg", name, lines)


def _brute_query(layers: ReferenceLayers, rect) -> list[tuple[bytes, str]]:
    """(vertex bytes, colour) of every visible line whose box meets ``rect``, bottom layer first."""
    x0, y0, x1, y1 = rect
    found = []
    for layer in layers.layers:
        if not layer.visible:
            continue
        for line in layer.lines_px:
            (bx0, by0), (bx1, by1) = line.min(axis=0), line.max(axis=0)
            if bx1 >= x0 and bx0 <= x1 and by1 >= y0 and by0 <= y1:
                found.append((line.tobytes(), layer.colour))
    return found


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), hidden=st.integers(-1, 2), cell_px=st.sampled_from([37.0, 256.0]))
def test_queries_match_a_scan_of_the_visible_lines(seed, hidden, cell_px):
    rng = np.random.default_rng(seed)
    layers = ReferenceLayers()
    for k in range(3):
        layers.add(_random_layer(rng, int(rng.integers(0, 40)), f"l{k}"))
        layers.set_colour(k, ["#112233", "#445566", "#778899"][k])
    if hidden >= 0:
        layers.set_visible(hidden, False)
    index = ReferenceIndex(layers, cell_px)
    assert index.sync().everything
    for _ in range(5):
        x0, y0 = rng.uniform(-200, 900, 2)
        rect = (x0, y0, x0 + rng.uniform(0, 400), y0 + rng.uniform(0, 400))
        ids = index.query(rect)
        assert ids == sorted(ids)
        assert [(index.entry(i)[0].tobytes(), index.entry(i)[1]) for i in ids] == _brute_query(layers, rect)
        assert index.count(rect) >= len(ids)


def test_sync_reports_a_change_once_and_hidden_layers_leave_the_index():
    rng = np.random.default_rng(3)
    layers = ReferenceLayers()
    index = ReferenceIndex(layers)
    layers.add(_random_layer(rng, 10, "a"))
    assert index.sync().everything and len(index) == 10
    assert not index.sync()
    layers.set_visible(0, False)
    assert index.sync().everything and len(index) == 0
    assert index.query((-1e6, -1e6, 1e6, 1e6)) == []
    layers.set_visible(0, True)
    assert index.sync().everything and len(index) == 10
    grid = index._grid
    layers.set_colour(0, "#ABCDEF")
    assert index.sync().everything and {index.entry(i)[1] for i in range(len(index))} == {"#abcdef"}
    assert index._grid is grid  # a colour alone keeps the grid (rebuilt, it took 5 s with 50,000 lines)
    assert index.query((-1e6, -1e6, 1e6, 1e6)) == list(range(10))


@pytest.mark.parametrize("colour", ["red", "#12345", "#12345g", None])
def test_a_bad_colour_is_a_one_line_error(colour):
    layers = ReferenceLayers()
    layers.add(ReferenceLayer("/a.gpkg", "a", (np.array([[0.0, 0.0], [1.0, 1.0]]),)))
    with pytest.raises(ValueError, match="colour must be '#rrggbb'"):
        layers.set_colour(0, colour)
