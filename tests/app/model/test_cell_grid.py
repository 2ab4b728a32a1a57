"""The spatial indices' grid against a scan of every box, with boxes and queries of every size (no Qt)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model.cell_grid import LARGE_CELLS, CellGrid, meets
from app.model.feature_index import CELL_PX
from app.model.reference import ReferenceLayer, ReferenceLayers
from app.model.reference_index import ReferenceIndex


def _box(rng, reach: float) -> tuple:
    x0, y0 = rng.uniform(-2000, 2000, 2)
    return (x0, y0, x0 + rng.uniform(0, reach), y0 + rng.uniform(0, reach))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), cell_px=st.sampled_from([7.0, 64.0, 256.0]))
def test_candidates_hold_every_box_meeting_the_query_after_adds_and_removes(seed, cell_px):
    rng = np.random.default_rng(seed)
    grid, boxes = CellGrid(cell_px), {}
    for item_id in range(int(rng.integers(0, 60))):
        boxes[item_id] = _box(rng, float(rng.choice([10.0, 300.0, 1e5])))  # small, a few cells, past LARGE_CELLS
        grid.add(item_id, boxes[item_id])
    whole = CellGrid(cell_px)  # the same boxes filed at once
    whole.add_many(np.array(list(boxes.values())).reshape(-1, 4))
    for rect in [_box(rng, 50.0), _box(rng, 1e6)]:
        assert whole.candidates(rect) == grid.candidates(rect)
    for item_id in [i for i in boxes if rng.random() < 0.3]:
        grid.remove(item_id, boxes.pop(item_id))
    for _ in range(8):
        rect = _box(rng, float(rng.choice([0.0, 50.0, 1e3, 1e6])))  # a point, a tile, a view, far out
        found = grid.candidates(rect)
        assert found <= set(boxes)  # nothing removed comes back
        assert {i for i, b in boxes.items() if meets(b, *rect)} <= found
        # a box kept apart for its size is a candidate only where it meets the query
        assert all(meets(boxes[i], *rect) for i in found if _cells(boxes[i], cell_px) > LARGE_CELLS)


def _cells(box, cell_px: float) -> int:
    c0, r0, c1, r1 = (int(np.floor(v / cell_px)) for v in box)
    return (c1 - c0 + 1) * (r1 - r0 + 1)


def test_a_query_around_everything_and_a_line_across_a_country_are_cheap():
    """A river of a reference layer 10^7 px long, and a query of 10^9 px around: each spans 10^10 cells or more,
    which a grid that visited every cell it spans would take hours over (a query around everything took 27 s)."""
    layers = ReferenceLayers()
    river = np.array([[-5e6, -5e6], [5e6, 5e6]])
    road = np.array([[10.0, 10.0], [90.0, 40.0]])
    layers.add(ReferenceLayer("/a.gpkg", "a", (river,)))
    layers.add(ReferenceLayer("/b.gpkg", "b", (road,)))
    index = ReferenceIndex(layers, CELL_PX)
    assert index.sync().everything and len(index) == 2
    assert index.query((-1e9, -1e9, 1e9, 1e9)) == [0, 1]
    assert index.query((0.0, 0.0, 100.0, 100.0)) == [0, 1]
    assert index.query((-1e9, 5e8, -5e8, 1e9)) == []
    layers.set_visible(0, False)
    index.sync()
    assert index.query((-1e9, -1e9, 1e9, 1e9)) == [0]


def test_boxes_past_int64_cells_are_large_and_filed_at_once():
    # a box of 1e12 px a side spans 1.5e19 cells: an int64 count overflowed to a negative "small" box, and
    # the build then visited every cell (a hang on the first paint)
    boxes = np.array([[0.0, 0.0, 1e12, 1e12], [-3e15, 5.0, 3e15, 6.0], [10.0, 10.0, 20.0, 20.0]])
    grid = CellGrid(CELL_PX)
    grid.add_many(boxes)
    assert grid.candidates((15.0, 5.5, 16.0, 16.0)) == {0, 1, 2}
    assert grid.candidates((-1e20, -1e20, 1e20, 1e20)) == {0, 1, 2}
    assert grid.candidates((-1e14, 100.0, -1e13, 200.0)) == set()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), cell_px=st.sampled_from([7.0, 64.0, 256.0]))
def test_boxes_taken_out_together_as_one_by_one(seed, cell_px):
    rng = np.random.default_rng(seed)
    ids = rng.choice(10**6, size=int(rng.integers(0, 80)), replace=False).tolist()
    boxes = {i: _box(rng, float(rng.choice([10.0, 300.0, 1e5]))) for i in ids}
    one, many = CellGrid(cell_px), CellGrid(cell_px)
    for item_id, box in boxes.items():
        one.add(item_id, box)
    many.add_many(np.array(list(boxes.values())).reshape(-1, 4), ids)
    gone = [i for i in ids if rng.random() < 0.6]
    for item_id in gone:
        one.remove(item_id, boxes[item_id])
    many.remove_many(np.array([boxes[i] for i in gone]).reshape(-1, 4), gone)
    for rect in [_box(rng, 0.0), _box(rng, 50.0), _box(rng, 1e3), _box(rng, 1e6)]:
        assert many.candidates(rect) == one.candidates(rect)
