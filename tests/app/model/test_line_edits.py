"""Geometry edits of finished lines (no window): each against plain numpy on random lines, undone exactly."""

from __future__ import annotations

import numpy as np
import pytest

from app.model import line_edits
from app.model.line_edits import LineEditError
from app.model.pieces import PieceOutcome
from app.model.tool import ExtractionTool
from app.session import state_from_dict, tool_to_dict


def vertices(tool, feature_id):
    return tool.feature_vertices(tool.feature(feature_id))


def drawn_tool(rng, pieces=3):
    """A tool with one finished line of ``pieces`` straight pieces and one imported line with attributes."""
    tool = ExtractionTool()
    points = rng.uniform(0, 500, (pieces + 1, 2))
    tool.click(points[0])
    for point in points[1:]:
        tool.click(point, straight=True)
    tool.finish()
    tool.add_features([("road", rng.uniform(0, 500, (4, 2)), {"lanes": 2, "surface": "gravel"})])
    return tool


def snapshot(tool):
    return [(f.id, f.name, vertices(tool, f.id).tolist()) for f in tool.features]


@pytest.mark.parametrize("seed", range(5))
def test_vertex_edits_match_numpy_and_undo_exactly(seed):
    rng = np.random.default_rng(seed)
    tool = drawn_tool(rng)
    for feature in list(tool.features):
        before, expected = snapshot(tool), vertices(tool, feature.id).copy()
        index = int(rng.integers(0, len(expected)))
        xy = tuple(rng.uniform(0, 500, 2))
        tool.apply_edit(line_edits.moved_vertex, feature.id, index, xy)
        expected[index] = xy
        np.testing.assert_array_equal(vertices(tool, feature.id), expected)
        segment = int(rng.integers(0, len(expected) - 1))
        tool.apply_edit(line_edits.inserted_vertex, feature.id, segment, (1.5, 2.5))
        expected = np.insert(expected, segment + 1, (1.5, 2.5), axis=0)
        np.testing.assert_array_equal(vertices(tool, feature.id), expected)
        gone = int(rng.integers(0, len(expected)))
        tool.apply_edit(line_edits.deleted_vertex, feature.id, gone)
        np.testing.assert_array_equal(vertices(tool, feature.id), np.delete(expected, gone, axis=0))
        assert [f.id for f in tool.features] == [entry[0] for entry in before]  # in its place
        for _ in range(3):
            tool.undo()
        assert snapshot(tool) == before


def test_edited_line_keeps_its_place_name_and_imported_attributes():
    tool = drawn_tool(np.random.default_rng(1))
    road = tool.features[1]
    tool.apply_edit(line_edits.moved_vertex, road.id, 1, (7.0, 8.0))
    edited = tool.features[1]
    assert (edited.id, edited.name) == (road.id, "road")
    assert [p.kind for p in edited.pieces] == ["edited"]
    assert tool.outcomes[edited.pieces[0].id].details["properties"] == {"lanes": 2, "surface": "gravel"}
    from app.io_actions import feature_properties
    assert feature_properties(tool, edited) == {"lanes": 2, "surface": "gravel"}


def test_refusals_leave_everything_as_it_was():
    tool = ExtractionTool()
    tool.click((0, 0))
    tool.click((10, 0), straight=True)
    tool.finish()
    line = tool.features[0]
    for edit, args, message in [(line_edits.deleted_vertex, (0,), "at least two vertices"),
                                (line_edits.moved_vertex, (2, (1, 1)), "vertex must be in 0..1"),
                                (line_edits.inserted_vertex, (1, (1, 1)), "segment must be in 0..0"),
                                (line_edits.split_line, (0,), "inner vertex"),
                                (line_edits.merged_lines, (line.id,), "two different lines")]:
        with pytest.raises(LineEditError, match=message):
            tool.apply_edit(edit, line.id, *args)
    assert tool.features == (line,) and not tool.can_redo
    tool.click((50, 50))
    tool.click((60, 60))  # an extraction, still pending
    tool.finish()
    with pytest.raises(LineEditError, match="still being extracted"):
        tool.apply_edit(line_edits.reversed_line, tool.features[1].id)


def scored_line(tool, points, scores):
    """A finished line whose pieces came from (fake) extractions with scores and confidences."""
    tool.click(points[0])
    for point in points[1:]:
        tool.click(point)
    piece_ids = [p.id for p in tool.current.pieces]
    for k, (piece_id, score) in enumerate(zip(piece_ids, scores)):
        bend = (points[k] + points[k + 1]) / 2 + (0.0, 3.0)
        tool.complete_piece(piece_id, PieceOutcome(np.array([points[k], bend, points[k + 1]]), score=score,
                                                   confidence=score / 10))
    return tool.finish()


def test_reverse_keeps_each_pieces_score_and_twice_is_the_identity():
    tool = ExtractionTool()
    line = scored_line(tool, np.array([[0.0, 0.0], [40.0, 0.0], [90.0, 20.0]]), [3.0, 5.0])
    original = vertices(tool, line.id).copy()
    tool.apply_edit(line_edits.reversed_line, line.id)
    reversed_line = tool.feature(line.id)
    np.testing.assert_array_equal(vertices(tool, line.id), original[::-1])
    assert [tool.outcomes[p.id].score for p in reversed_line.pieces] == [5.0, 3.0]
    assert tool.feature_score(reversed_line) == 8.0 and tool.feature_confidence(reversed_line) == 0.3
    tool.apply_edit(line_edits.reversed_line, line.id)
    np.testing.assert_array_equal(vertices(tool, line.id), original)


@pytest.mark.parametrize("seed", range(4))
def test_split_then_merge_gives_the_line_back(seed):
    rng = np.random.default_rng(seed)
    tool = drawn_tool(rng, pieces=4)
    line = tool.features[0]
    original = vertices(tool, line.id).copy()
    index = int(rng.integers(1, len(original) - 1))
    tool.apply_edit(line_edits.split_line, line.id, index)
    first, second = tool.features[0], tool.features[1]
    assert first.id == line.id and second.name == "Line 3" and len(tool.features) == 3
    np.testing.assert_array_equal(vertices(tool, first.id), original[:index + 1])
    np.testing.assert_array_equal(vertices(tool, second.id), original[index:])
    tool.apply_edit(line_edits.merged_lines, second.id, first.id)  # second's start meets first's end
    assert [f.id for f in tool.features] == [second.id, tool.features[1].id]
    np.testing.assert_array_equal(vertices(tool, second.id), original)
    tool.undo()
    tool.undo()
    assert tool.features[0] is line


def test_split_and_merge_keep_the_attribute_values():
    from app.model.attributes import FieldDef

    tool = drawn_tool(np.random.default_rng(3), pieces=4)
    tool.set_fields([FieldDef("surface", "text")])
    line = tool.features[0]
    tool.set_attributes(line.id, {"surface": "asphalt"})
    tool.apply_edit(line_edits.split_line, line.id, 2)
    first, second = tool.features[0], tool.features[1]
    assert dict(first.attributes) == dict(second.attributes) == {"surface": "asphalt"}
    tool.apply_edit(line_edits.merged_lines, first.id, second.id)
    assert dict(tool.feature(first.id).attributes) == {"surface": "asphalt"}


@pytest.mark.parametrize("flip_first, flip_second", [(False, False), (False, True), (True, False), (True, True)])
def test_merge_joins_the_shared_end_in_every_orientation(flip_first, flip_second):
    rng = np.random.default_rng(7)
    a, b = rng.uniform(0, 100, (3, 2)), rng.uniform(0, 100, (4, 2))
    b[0] = a[-1]  # a then b is the reference
    tool = ExtractionTool()
    tool.add_features([("a", a[::-1] if flip_first else a, {}), ("b", b[::-1] if flip_second else b, {})])
    first, second = tool.features
    tool.apply_edit(line_edits.merged_lines, first.id, second.id)
    merged = vertices(tool, first.id)
    reference = np.concatenate([a, b[1:]])
    expected = reference[::-1] if flip_first else reference  # the merged line runs the first line's way
    np.testing.assert_array_equal(merged, expected)
    assert [f.name for f in tool.features] == ["a"]


def test_merge_refuses_lines_that_only_cross():
    tool = ExtractionTool()
    tool.add_features([("a", np.array([[0.0, 0.0], [10.0, 10.0]]), {}),
                       ("b", np.array([[0.0, 10.0], [10.0, 0.0]]), {})])
    with pytest.raises(LineEditError, match="share no end"):
        tool.apply_edit(line_edits.merged_lines, *[f.id for f in tool.features])


def test_continue_from_the_start_chains_there_and_esc_puts_the_line_back():
    tool = ExtractionTool()
    tool.add_features([("a", np.array([[0.0, 0.0], [10.0, 0.0], [20.0, 5.0]]), {}),
                       ("b", np.array([[50.0, 50.0], [60.0, 60.0]]), {})])
    line = tool.features[0]
    tool.reopen(line.id, at_start=True)
    assert tool.anchor_start() == (0.0, 0.0)
    tool.cancel()
    assert tool.features[0] is line and tool.current is None
    tool.reopen(line.id, at_start=True)
    tool.click((-10.0, 0.0), straight=True)
    tool.finish()
    assert tool.features[0].id == line.id  # back in its place
    np.testing.assert_array_equal(vertices(tool, line.id), [[20, 5], [10, 0], [0, 0], [-10, 0]])


def test_edited_lines_survive_the_session_file():
    tool = drawn_tool(np.random.default_rng(3))
    road = tool.features[1]
    tool.apply_edit(line_edits.inserted_vertex, road.id, 0, (3.0, 4.0))
    tool.apply_edit(line_edits.reversed_line, tool.features[0].id)
    state, outcomes = state_from_dict(tool_to_dict(tool, "/tmp/image.tif"), lambda d: d)
    restored = ExtractionTool()
    restored.restore(state, outcomes)
    assert snapshot(restored) == snapshot(tool)
    assert restored.outcomes[restored.features[1].pieces[0].id].details["properties"]["lanes"] == 2
