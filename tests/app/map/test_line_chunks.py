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
    image = settled(viewer, overlay)
    pixels = _pixels(image)
    colours, counts = np.unique(pixels.reshape(-1, 4), axis=0, return_counts=True)
    background = colours[np.argmax(counts)]
    assert (pixels != background).any(axis=2).sum() > 500  # the line is in view
    return image


def _same_picture(a, b):
    """The pictures alike but for antialiasing's rounding: Qt's rasteriser shades a few pixels of a part one or
    two levels apart from the same pixels of the whole polyline (11 of 200,000 at 1:1)."""
    a, b = _pixels(a).astype(int), _pixels(b).astype(int)
    assert np.abs(a - b).max() <= 4 and (a != b).any(axis=2).sum() <= 100


def _pixels(image):
    """(h, w, 4) uint8 of a 32-bit QImage."""
    image = image.convertToFormat(image.Format.Format_ARGB32)
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.width(), 4).copy()


TRANSFORMS = [ViewTransform(1.0, 1200.0, 1200.0), ViewTransform(0.25, 300.0, 300.0), ViewTransform(0.09, 0.0, 0.0)]


def _by_runs_and_whole(qtbot, monkeypatch, make_overlay, light=False):
    """The pictures at :data:`TRANSFORMS` (and, with ``light``, one in the light look) drawn by runs, then with
    every line stroked whole."""
    pictures = []
    for long_lines in (True, False):
        monkeypatch.setattr(line_chunks, "is_long", lambda v, long_lines=long_lines: long_lines and len(v) > 512)
        viewer = RasterViewer()
        viewer.resize(500, 400)
        qtbot.addWidget(viewer)
        overlay = make_overlay()
        viewer.overlay_painters.append(overlay)
        pictures.append([_picture(viewer, overlay, t) for t in TRANSFORMS])
        if light:
            monkeypatch.setattr("app.map.line_tiles.LIGHT_STYLE_FEATURES", 0)
            pictures[-1].append(_picture(viewer, overlay, ViewTransform(0.5, -100.0, -100.0)))
            monkeypatch.setattr("app.map.line_tiles.LIGHT_STYLE_FEATURES", 2500)
    return pictures


def test_a_long_reference_line_looks_the_same_drawn_by_runs(qtbot, monkeypatch):
    layers = ReferenceLayers()
    layers.add(ReferenceLayer("/a.gpkg", "a", (_track(20_000), _track(40, seed=2) * 0.3 + 400), "#ff00ff"))
    for by_runs, whole in zip(*_by_runs_and_whole(qtbot, monkeypatch, lambda: ReferenceOverlay(layers))):
        _same_picture(by_runs, whole)


def test_a_long_feature_looks_the_same_drawn_by_runs_and_light(qtbot, monkeypatch):
    tool = ExtractionTool(settings=None)
    features, outcomes = editing.imported_features(tool.state, [("track", _track(20_000), {}),
                                                                ("short", _track(30) * 0.2, {})], tool.new_ids(4))
    tool.add_built_features(features, outcomes)
    for by_runs, whole in zip(*_by_runs_and_whole(qtbot, monkeypatch, lambda: ToolOverlay(tool), light=True)):
        _same_picture(by_runs, whole)


def test_thinning_keeps_the_ends_and_moves_no_point_past_a_cell():
    from app.map.overlays import THIN_CELL_PX, _thinned

    points = np.cumsum(np.random.default_rng(5).normal(0, 0.1, (5000, 2)), axis=0)
    kept = _thinned(points)
    assert len(kept) < len(points) // 2
    cell = [tuple(c) for c in np.floor(points / THIN_CELL_PX).tolist()]
    expected, last = [0], 0  # a loop: each point kept when it leaves the cell of the last point kept
    for i in range(1, len(points)):
        if cell[i] != cell[last]:
            expected.append(i)
            last = i
    if expected[-1] != len(points) - 1:
        expected.append(len(points) - 1)
    np.testing.assert_array_equal(kept, points[expected])


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_a_selected_long_feature_is_drawn_in_view(qtbot, transform):
    from app.map.overlays import SELECTED
    from tests.app.map.test_overlays import near

    tool = ExtractionTool(settings=None)
    track = _track(20_000)
    features, outcomes = editing.imported_features(tool.state, [("track", track, {})], tool.new_ids(2))
    tool.add_built_features(features, outcomes)
    tool.select(features[0].id)
    viewer = RasterViewer()
    viewer.resize(500, 400)
    qtbot.addWidget(viewer)
    overlay = ToolOverlay(tool)
    viewer.overlay_painters.append(overlay)
    image = _picture(viewer, overlay, transform)
    view = (track - (transform.origin_x, transform.origin_y)) * transform.scale
    inside = np.flatnonzero((view[:, 0] > 5) & (view[:, 0] < 495) & (view[:, 1] > 5) & (view[:, 1] < 395))
    assert len(inside) > 50
    picked = inside[:: max(1, len(inside) // 40)]
    assert all(near(image.pixelColor(int(round(x)), int(round(y))), SELECTED, 60) for x, y in view[picked])


@pytest.mark.parametrize("n", [2, 7, 8, 9, 1000])
def test_polygons_and_paths_hold_the_vertices_exactly(n):
    from app.map import style

    vertices = np.random.default_rng(n).normal(0, 1e3, (n, 2))
    polygon = style.polygon_of(vertices)
    assert [(p.x(), p.y()) for p in polygon] == [tuple(v) for v in vertices.tolist()]
    path = style.path_of(vertices[:, 0], vertices[:, 1])
    elements = [path.elementAt(k) for k in range(path.elementCount())]
    assert elements[0].isMoveTo() and all(e.isLineTo() for e in elements[1:])  # one open subpath
    assert [(e.x, e.y) for e in elements] == [tuple(v) for v in vertices.tolist()]
