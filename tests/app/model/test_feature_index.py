"""The spatial index agrees with a brute-force scan through random edits; hit tests find the nearest line."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import line_edits
from app.model.feature_index import FeatureIndex, distance_to_polyline
from app.model.pieces import PieceOutcome, ToolState
from app.model.tool import ExtractionTool
from tests.app.model.test_edit_shortcuts import ACTIONS, _act


def random_lines(rng, n, size=2000.0):
    lines = []
    for _ in range(n):
        start = rng.uniform(-50, size, 2)
        steps = rng.normal(0, rng.choice([3.0, 40.0, 400.0]), (int(rng.integers(1, 6)), 2))
        lines.append(("", np.vstack([start, start + np.cumsum(steps, axis=0)]), {}))
    return lines


def brute_query(tool, rect):
    x0, y0, x1, y1 = rect
    hits = []
    for feature in tool.features:
        v = tool.feature_vertices(feature)
        if v[:, 0].max() >= x0 and v[:, 0].min() <= x1 and v[:, 1].max() >= y0 and v[:, 1].min() <= y1:
            hits.append(feature.id)
    return hits


def brute_distance(vertices, x, y, samples=2001):
    """Distance to a polyline by dense sampling of every segment (an independent reference)."""
    points = _dense(vertices, samples)
    return float(np.min(np.hypot(points[:, 0] - x, points[:, 1] - y)))


def _dense(vertices, samples=2001) -> np.ndarray:
    t = np.linspace(0.0, 1.0, samples)[:, None]
    return np.concatenate([a + t * (b - a) for a, b in zip(vertices[:-1], vertices[1:])])


def random_edit(tool, rng):
    action = rng.choice(["add", "draw", "undo", "redo", "delete", "rename", "reopen"])
    if action == "add":
        tool.add_features(random_lines(rng, int(rng.integers(1, 30))))
    elif action == "draw":
        tool.click(tuple(rng.uniform(0, 2000, 2)))
        tool.click(tuple(rng.uniform(0, 2000, 2)), straight=True)
        tool.finish()
    elif action == "undo":
        tool.undo()
    elif action == "redo":
        tool.redo()
    elif tool.features:
        feature = tool.features[int(rng.integers(len(tool.features)))]
        if action == "delete":
            tool.delete(feature.id)
        elif action == "rename":
            tool.rename(feature.id, f"renamed {rng.integers(1000)}")
        else:
            tool.reopen(feature.id)
            tool.click(tuple(rng.uniform(0, 2000, 2)), straight=True)
            tool.finish()


@pytest.mark.parametrize("seed", range(6))
def test_queries_match_a_brute_force_scan_through_random_edits(seed):
    rng = np.random.default_rng(seed)
    tool = ExtractionTool(settings=None)
    index = FeatureIndex(tool, cell_px=float(rng.choice([16.0, 100.0, 256.0])))
    for _ in range(40):
        random_edit(tool, rng)
        if rng.random() < 0.7:
            index.sync()
    index.sync()
    assert len(index) == len(tool.features)
    for _ in range(30):
        x, y = rng.uniform(-100, 2100, 2)
        w, h = rng.uniform(0, 600, 2)
        rect = (x, y, x + w, y + h)
        assert index.query(rect) == brute_query(tool, rect)
        assert index.count(rect) >= len(index.query(rect))


def test_sync_reports_appended_and_dropped_features_and_late_results():
    tool = ExtractionTool(settings=None)
    index = FeatureIndex(tool)
    tool.add_features([("a", np.array([[0.0, 0.0], [10.0, 0.0]]), {})])
    change = index.sync()
    assert change.added == [tool.features[0].id] and change.removed == []
    assert not index.sync()  # nothing new
    tool.click((100.0, 100.0))
    tool.click((200.0, 100.0))  # an extraction: pending
    tool.finish()
    piece = tool.features[-1].pieces[0]
    assert index.sync().added == [tool.features[-1].id]
    tool.complete_piece(piece.id, PieceOutcome(np.array([[100.0, 100.0], [150.0, 300.0], [200.0, 100.0]])))
    change = index.sync()  # the late result moved the line
    assert change.added == [tool.features[-1].id]
    assert change.removed == [(tool.features[-1].id, (100.0, 100.0, 200.0, 100.0))]
    assert index.bbox(tool.features[-1].id) == (100.0, 100.0, 200.0, 300.0)
    finished_id = tool.features[-1].id
    tool.undo()  # back in progress: no longer a finished feature
    assert [i for i, _ in index.sync().removed] == [finished_id] and tool.current.id == finished_id


def test_nearest_finds_the_closest_line_within_the_radius():
    rng = np.random.default_rng(7)
    tool = ExtractionTool(settings=None)
    tool.add_features(random_lines(rng, 300, size=500.0))
    index = FeatureIndex(tool, cell_px=32.0)
    index.sync()
    # every line densely sampled once (brute_distance's samples), the samples of all lines in one array
    samples = [_dense(tool.feature_vertices(f)) for f in tool.features]
    starts, every = np.cumsum([0] + [len(p) for p in samples[:-1]]), np.concatenate(samples)
    for _ in range(40):
        x, y = rng.uniform(0, 500, 2)
        radius = float(rng.choice([2.0, 8.0, 30.0]))
        distances = np.minimum.reduceat(np.hypot(every[:, 0] - x, every[:, 1] - y), starts)
        found = index.nearest((x, y), radius)
        if min(distances) > radius + 1e-3:
            assert found is None
        else:
            position = [f.id for f in tool.features].index(found)
            assert distances[position] <= min(distances) + 1e-3


def test_distance_to_polyline_handles_points_and_zero_length_links():
    assert distance_to_polyline(np.array([[3.0, 4.0]]), 0.0, 0.0) == pytest.approx(5.0)
    assert distance_to_polyline(np.array([[0.0, 0.0], [0.0, 0.0], [10.0, 0.0]]), 5.0, 2.0) == pytest.approx(2.0)
    assert distance_to_polyline(np.array([[0.0, 0.0], [10.0, 0.0]]), 13.0, 4.0) == pytest.approx(5.0)


@pytest.mark.parametrize("seed", range(4))
def test_changes_found_by_catch_up_still_reach_the_next_sync(seed):
    """The tiles learn every change from sync() even when a hit test or a snap caught up in between."""
    from app.model import line_edits

    rng = np.random.default_rng(seed)
    tool = ExtractionTool(settings=None)
    index = FeatureIndex(tool, cell_px=100.0)
    drawn: dict[int, tuple] = {}  # what a tile cache would show: id -> box

    def follow(change):
        for feature_id, _ in change.removed:
            drawn.pop(feature_id, None)
        for feature_id in change.added:
            drawn[feature_id] = index.bbox(feature_id)

    for _ in range(40):
        random_edit(tool, rng)
        if tool.features and rng.random() < 0.4:
            feature = tool.features[int(rng.integers(len(tool.features)))]
            if not any(tool.is_pending(p) for p in feature.pieces):
                tool.apply_edit(line_edits.moved_vertex, feature.id, 0, tuple(rng.uniform(0, 2000, 2)))
        if rng.random() < 0.5:
            index.catch_up()
        if rng.random() < 0.3:
            follow(index.sync())
    follow(index.sync())
    expected = {}
    for feature in tool.features:
        v = tool.feature_vertices(feature)
        expected[feature.id] = (*v.min(axis=0).tolist(), *v.max(axis=0).tolist())
    assert drawn == expected


def _boxes_and_order(index, tool) -> tuple[dict, list]:
    rects = [(x, y, x + 40.0, y + 40.0) for x in range(-10, 60, 20) for y in range(-10, 30, 20)]
    return {f.id: index.bbox(f.id) for f in tool.features}, [index.query(rect) for rect in rects]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(ACTIONS + ["sync", "sync", "catch_up"]), st.integers(0, 50),
                          st.integers(0, 50)), max_size=50))
def test_an_index_that_followed_the_edits_equals_one_built_afresh(actions):
    """Deletes, reopens, splits, merges and their undo followed through the step's difference (a walk over every id
    before), with syncs and hit tests in between: the boxes, the drawing order and what the tiles were told."""
    tool = ExtractionTool(settings="S1")
    index, drawn = FeatureIndex(tool, cell_px=16.0), {}

    def follow(change):
        for feature_id, _ in change.removed:
            drawn.pop(feature_id, None)
        for feature_id in change.added:
            drawn[feature_id] = index.bbox(feature_id)

    for action, a, b in actions:
        if action == "sync":
            follow(index.sync())
        elif action == "catch_up":
            index.catch_up()
        else:
            _act(tool, action, a, b)
    follow(index.sync())
    fresh = FeatureIndex(tool, cell_px=16.0)
    fresh.sync()
    assert _boxes_and_order(index, tool) == _boxes_and_order(fresh, tool)
    assert drawn == _boxes_and_order(fresh, tool)[0] and len(index) == len(tool.features)


def test_lines_split_again_and_again_in_one_place_keep_the_drawing_order(monkeypatch):
    """Each split puts two lines where one was: the keys between two neighbours run out and are numbered again."""
    renumbered, renumber = [], FeatureIndex._renumber
    monkeypatch.setattr(FeatureIndex, "_renumber", lambda self, features: renumbered.append(renumber(self, features)))
    tool = ExtractionTool(settings=None)
    tool.add_features([("", np.array([[0.0, 0.0], [5.0, 0.0]]), {}),
                       ("", np.column_stack([np.arange(200.0), np.zeros(200)]), {}),
                       ("", np.array([[0.0, 1.0], [5.0, 1.0]]), {})])
    index = FeatureIndex(tool, cell_px=16.0)
    index.sync()
    for k in range(1, 150):
        tool.apply_edit(line_edits.split_line, tool.features[k].id, 1)  # the second part, after the first
        index.sync()
    assert index.query((-1.0, -1.0, 300.0, 2.0)) == [f.id for f in tool.features]
    assert 1 <= len(renumbered) <= 3  # (each key takes two thirds of the room left: some 80 splits in a row)


def test_after_a_restore_the_index_does_not_follow_the_change_before_it():
    tool = ExtractionTool(settings=None)
    tool.add_features(random_lines(np.random.default_rng(3), 5, size=50.0))
    index = FeatureIndex(tool, cell_px=16.0)
    index.sync()
    before = tool.features
    tool.delete(before[2].id)
    tool.restore(ToolState(before[:1] + before[3:]), dict(tool.outcomes))  # (a project opened instead)
    index.sync()
    fresh = FeatureIndex(tool, cell_px=16.0)
    fresh.sync()
    assert _boxes_and_order(index, tool) == _boxes_and_order(fresh, tool) and len(index) == len(tool.features)


@pytest.mark.parametrize("seed", range(3))
def test_many_lines_filed_together_as_one_by_one(seed, monkeypatch):
    """An import (over 64 lines at once), its undo and redo file and take out the lines' grid cells together:
    every sync tells the same changes, and the candidates, hits and boxes are those of lines filed one by one."""
    from app.model import feature_index

    def history(many: int) -> list:
        monkeypatch.setattr(feature_index, "_MANY", many)
        rng = np.random.default_rng(seed)
        tool = ExtractionTool(settings=None)
        index, seen = FeatureIndex(tool, cell_px=16.0), []
        far = [("far", np.array([[1e18, 5.0], [1e18 + 4e3, 9.0]]), {}),  # cells past an int64's exact range
               ("long", np.array([[-5e4, 0.0], [5e4, 30.0]]), {})]  # past LARGE_CELLS
        for step in ["add", "import", "undo", "redo", "delete", "undo"]:
            if step == "add":
                tool.add_features(random_lines(rng, 10, size=60.0))
            elif step == "import":
                tool.add_features(random_lines(rng, 200, size=60.0) + far)
            elif step == "delete":
                tool.delete(tool.features[50].id)
            else:
                getattr(tool, step)()
            change = index.sync()
            rects = [(x, y, x + 40.0, y + 40.0) for x in range(-10, 60, 20) for y in range(-10, 30, 20)]
            seen.append((change.added, change.removed, [index.count(r) for r in rects],
                         [index.query(r) for r in rects + [(0.0, 0.0, 2e18, 10.0)]],
                         {f.id: index.bbox(f.id) for f in tool.features}))
        return seen

    assert history(64) == history(10**9)
