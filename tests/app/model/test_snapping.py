"""Snapping (no window): the indexed search agrees with a brute-force scan of every line on random drawings."""

from __future__ import annotations

import numpy as np
import pytest

from app.model.feature_index import FeatureIndex
from app.model.snapping import ReferenceTargets, find_reference_snap, find_snap
from app.model.tool import ExtractionTool
from tests.app.model.test_feature_index import brute_distance, random_lines


def brute_snap(tool, xy, tolerance_px):
    """Nearest vertex within the tolerance over all lines, else the nearest segment (by dense sampling)."""
    x, y = xy
    vertex_hits, segment_hits = [], []
    for feature in tool.features:
        v = tool.feature_vertices(feature)
        d = np.hypot(v[:, 0] - x, v[:, 1] - y)
        k = int(np.argmin(d))
        if d[k] <= tolerance_px:
            vertex_hits.append((d[k], feature.id, k))
        if len(v) >= 2:
            segment_hits.append((brute_distance(v, x, y), feature.id))
    if vertex_hits:
        return "vertex", min(vertex_hits)
    near = [hit for hit in segment_hits if hit[0] <= tolerance_px]
    return ("segment", min(near)) if near else None


@pytest.mark.parametrize("seed", range(2))
def test_snap_agrees_with_a_scan_of_every_line(seed):
    rng = np.random.default_rng(seed)
    tool = ExtractionTool()
    tool.add_features(random_lines(rng, 60, size=600.0))
    index = FeatureIndex(tool, cell_px=64.0)
    index.sync()
    longest = max(np.hypot(*np.diff(tool.feature_vertices(f), axis=0).T).max() for f in tool.features)
    half_spacing = longest / 2000 / 2
    for _ in range(150):
        xy = tuple(rng.uniform(-20, 620, 2))
        tolerance = float(rng.choice([2.0, 8.0, 30.0]))
        found, expected = find_snap(index, xy, tolerance), brute_snap(tool, xy, tolerance)
        if expected is None:
            assert found is None
        elif expected[0] == "vertex":
            distance, _, _ = expected[1]
            assert found.kind in ("end", "vertex") and found.distance_px == pytest.approx(distance)
            vertices = index.entry(found.feature_id)[1]
            assert found.xy == tuple(vertices[found.index])
            assert (found.kind == "end") == (found.index in (0, len(vertices) - 1))
        else:
            distance, _ = expected[1]
            assert found.kind == "segment"
            # the samples lie at most half a sample spacing from the true nearest point
            assert distance - half_spacing <= found.distance_px <= distance + 1e-9
            assert found.distance_px == pytest.approx(np.hypot(found.xy[0] - xy[0], found.xy[1] - xy[1]))


def test_a_vertex_wins_over_a_nearer_segment_and_tolerance_zero_is_off():
    tool = ExtractionTool()
    tool.add_features([("a", np.array([[0.0, 0.0], [100.0, 0.0]]), {}),
                       ("b", np.array([[50.0, 1.0], [50.0, 50.0]]), {})])
    index = FeatureIndex(tool)
    index.sync()
    target = find_snap(index, (50.0, 3.0), 5.0)
    assert (target.kind, target.xy, target.feature_id) == ("end", (50.0, 1.0), tool.features[1].id)
    segment = find_snap(index, (30.0, 2.0), 5.0)
    assert (segment.kind, segment.xy, segment.index) == ("segment", (30.0, 0.0), 0)
    assert find_snap(index, (30.0, 2.0), 5.0, exclude={tool.features[0].id}) is None
    assert find_snap(index, (30.0, 2.0), 0.0) is None
    assert find_snap(index, (30.0, 2.0), 5.0, segments=False) is None


@pytest.mark.parametrize("seed", range(3))
def test_reference_snap_agrees_with_a_scan_of_every_reference_line(seed):
    rng = np.random.default_rng(seed)
    lines = [np.cumsum(rng.uniform(-30, 30, (int(rng.integers(2, 6)), 2)), axis=0) + rng.uniform(0, 300, 2)
             for _ in range(20)]
    vertices = np.concatenate(lines)
    segments = np.concatenate([np.stack([v[:-1], v[1:]], axis=1) for v in lines])
    trees = ReferenceTargets(vertices, segments)
    for xy in rng.uniform(0, 300, (200, 2)):
        tolerance = float(rng.uniform(0, 15))
        target = find_reference_snap(vertices, segments, xy, tolerance)
        assert find_reference_snap(vertices, segments, xy, tolerance, trees) == target  # only the nearby tested
        d_vertex = np.hypot(*(vertices - xy).T)
        d_segment = min(brute_distance(s, *xy) for s in segments)
        if d_vertex.min() <= tolerance:
            assert target.kind == "reference vertex" and target.distance_px == pytest.approx(d_vertex.min())
        elif d_segment <= tolerance - 1e-3:
            assert target.kind == "reference segment" and target.distance_px == pytest.approx(d_segment, abs=1e-2)
        elif d_segment > tolerance + 1e-3:
            assert target is None
    assert find_reference_snap(vertices, segments, vertices[0], 0.0) is None
    empty = np.empty((0, 2)), np.empty((0, 2, 2))
    assert find_reference_snap(*empty, (1.0, 2.0), 5.0, ReferenceTargets(*empty)) is None
