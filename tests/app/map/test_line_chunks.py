"""Long lines drawn into each tile only where they meet it: the same picture as the whole line stroked."""

from __future__ import annotations

import numpy as np
import pytest

from app.map import line_chunks
from app.map.line_chunks import CHUNK_VERTICES, ChunkCache, LineChunks, is_long
from app.map.overlays import ToolOverlay
from app.map.reference_overlay import ReferenceOverlay
from app.map.viewer import RasterViewer
from app.model import editing
from app.model.reference import ReferenceLayer, ReferenceLayers
from app.model.tool import ExtractionTool
from app.model.viewmath import ViewTransform
from tests.app.map.test_overlays import settled


def _track(n, seed=1):
    """A meandering track of ``n`` vertices over about 3000 x 3000 px."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, n)
    return np.column_stack([1500 + 1200 * np.sin(6.3 * t) + np.cumsum(rng.normal(0, 1.5, n)),
                            1500 + 1200 * np.sin(11.1 * t + 1) + np.cumsum(rng.normal(0, 1.5, n))])


def _segments_meet(vertices, rect):
    """Per segment, whether its box meets ``rect`` (the reference: no runs)."""
    x0, y0, x1, y1 = rect
    a, b = vertices[:-1], vertices[1:]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    return (hi[:, 0] >= x0) & (lo[:, 0] <= x1) & (hi[:, 1] >= y0) & (lo[:, 1] <= y1)


@pytest.mark.parametrize("n", [2 * CHUNK_VERTICES + 1, 3000, 5 * CHUNK_VERTICES + 1])
def test_the_runs_hold_every_segment_that_meets_the_rectangle_in_order(n):
    vertices = _track(n)
    chunks = LineChunks(vertices)
    rng = np.random.default_rng(n)
    for _ in range(200):
        x0, y0 = rng.uniform(-100, 3000, 2)
        rect = (x0, y0, x0 + rng.uniform(1, 600), y0 + rng.uniform(1, 600))
        parts = chunks.runs(vertices, rect)
        covered = np.zeros(n - 1, bool)
        for part in parts:
            assert np.shares_memory(part, vertices) and len(part) >= 2
            start = int(np.flatnonzero((vertices == part[0]).all(axis=1))[0])
            np.testing.assert_array_equal(part, vertices[start : start + len(part)])
            covered[start : start + len(part) - 1] = True
        assert not (_segments_meet(vertices, rect) & ~covered).any()  # nothing that meets it is left out
        starts = [int(np.flatnonzero((vertices == p[0]).all(axis=1))[0]) for p in parts]
        assert starts == sorted(starts)
        assert covered.sum() <= _segments_meet(vertices, rect).sum() + 4 * CHUNK_VERTICES * max(1, len(parts))


def test_short_lines_are_drawn_whole_and_runs_go_with_their_vertices():
    cache = ChunkCache()
    short = _track(2 * CHUNK_VERTICES)
    assert not is_long(short) and cache.parts(short, (0, 0, 1, 1))[0] is short and len(cache) == 0
    long = _track(2 * CHUNK_VERTICES + 1)
    assert is_long(long)
    cache.parts(long, (0, 0, 3000, 3000))
    assert len(cache) == 1
    del long
    assert len(cache) == 0  # no line kept alive by the cache


def _picture(viewer, overlay, transform):
    viewer.set_transform(transform)
    return settled(viewer, overlay)


TRANSFORMS = [ViewTransform(1.0, -900.0, -700.0), ViewTransform(0.25, 50.0, 20.0), ViewTransform(0.09, 10.0, 5.0)]


def test_a_long_reference_line_looks_the_same_drawn_by_runs(qtbot, monkeypatch):
    layers = ReferenceLayers()
    layers.add(ReferenceLayer("/a.gpkg", "a", (_track(20_000), _track(40, seed=2) * 0.3 + 400), "#ff00ff"))
    pictures = []
    for long_lines in (True, False):
        monkeypatch.setattr(line_chunks, "is_long", lambda v, long_lines=long_lines: long_lines and len(v) > 512)
        viewer = RasterViewer()
        viewer.resize(500, 400)
        qtbot.addWidget(viewer)
        overlay = ReferenceOverlay(layers)
        viewer.overlay_painters.append(overlay)
        pictures.append([_picture(viewer, overlay, t) for t in TRANSFORMS])
    for by_runs, whole in zip(*pictures):
        assert by_runs == whole


def test_a_long_feature_looks_the_same_drawn_by_runs_and_light(qtbot, monkeypatch):
    tool = ExtractionTool(settings=None)
    features, outcomes = editing.imported_features(tool.state, [("track", _track(20_000), {}),
                                                                ("short", _track(30) * 0.2, {})], tool.new_ids(4))
    tool.add_built_features(features, outcomes)
    pictures = []
    for long_lines in (True, False):
        monkeypatch.setattr(line_chunks, "is_long", lambda v, long_lines=long_lines: long_lines and len(v) > 512)
        viewer = RasterViewer()
        viewer.resize(500, 400)
        qtbot.addWidget(viewer)
        overlay = ToolOverlay(tool)
        viewer.overlay_painters.append(overlay)
        pictures.append([_picture(viewer, overlay, t) for t in TRANSFORMS])
        monkeypatch.setattr("app.map.line_tiles.LIGHT_STYLE_FEATURES", 0)
        pictures[-1].append(_picture(viewer, overlay, ViewTransform(0.5, -100.0, -100.0)))  # the light look
        monkeypatch.setattr("app.map.line_tiles.LIGHT_STYLE_FEATURES", 2500)
    for by_runs, whole in zip(*pictures):
        assert by_runs == whole
