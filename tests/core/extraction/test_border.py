"""Clicks on the raster's border: every vertex of every mode lies on the raster ``[0, W] x [0, H]``.

Guides laid across a click on the border reach past it; in the gradient modes
a ribbon whose outer edge the border cuts off scores best with its centre line
beyond the border, so the candidates off the raster are excluded from the DP
(core.extraction.solving.solve_on_raster).
"""

from __future__ import annotations

import numpy as np
import pytest

import core
from core.extraction.gradient import GradientWindow
from core.extraction.guides import build_guides
from core.extraction.options import ScoringOptions
from core.extraction.scores import excluded_link_score, link_score_tables
from core.extraction.solving import score_and_solve_on, solve_on_raster

HEIGHT, WIDTH = 80, 120
MODES = ("auto", "ribbon", "edge")


def road_along(side: str, visible_px: int, seed: int = 0) -> np.ndarray:
    """A bright road cut by the raster's ``side``: ``visible_px`` of it on the raster, in noise."""
    image = np.zeros((HEIGHT, WIDTH), np.float32)
    everything, first, last = slice(None), slice(0, visible_px), slice(-visible_px, None)
    rows_and_cols = {"left": (everything, first), "right": (everything, last),
                     "top": (first, everything), "bottom": (last, everything)}
    image[rows_and_cols[side]] = 1.0
    return image + np.random.default_rng(seed).normal(0, 0.1, image.shape).astype(np.float32)


#: Clicks on (or a fraction of a pixel inside) each border, along it.
CLICKS = {
    "left": [((0.0, 5.0), (0.0, 75.0)), ((0.3, 6.0), (0.1, 74.0))],
    "right": [((WIDTH, 5.0), (WIDTH, 75.0)), ((WIDTH - 0.2, 4.0), (WIDTH - 0.7, 76.0))],
    "top": [((5.0, 0.0), (115.0, 0.0)), ((8.7, 0.8), (115.0, 1.3))],
    "bottom": [((5.0, HEIGHT), (115.0, HEIGHT)), ((6.0, HEIGHT - 0.4), (114.0, HEIGHT - 1.1))],
}


def chosen_points(result) -> np.ndarray:
    """The flat indices (into ``guides.layer_points()`` concatenated) of the candidates the result chose."""
    sizes = [len(layer) for layer in result.guides.layer_points()]
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    return starts + np.concatenate(([result.start_index], result.indices, [result.end_index]))


def assert_on_raster(vertices):
    x, y = vertices[:, 0], vertices[:, 1]
    off = (x < 0) | (x > WIDTH) | (y < 0) | (y > HEIGHT)
    assert not off.any(), f"vertices off the {WIDTH} x {HEIGHT} raster: {vertices[off].tolist()}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("side", sorted(CLICKS))
@pytest.mark.parametrize("snap", [False, True])
def test_every_vertex_lies_on_the_raster_with_clicks_on_its_border(mode, side, snap):
    for visible_px, sigma_px in ((3, 1.0), (6, 2.0)):
        image = road_along(side, visible_px)
        for start, end in CLICKS[side]:
            result = core.extract(image, start, end, mode=mode, snap_endpoints=snap, sigma_px=sigma_px,
                                  backend="cpu")
            assert_on_raster(result.vertices_px)
            if mode != "auto":  # the vertices are the guides' candidates the DP chose
                np.testing.assert_allclose(result.vertices_px, result.guides.vertices(
                    result.start_index, result.indices, result.end_index))


#: Ribbons that went off the raster before the candidates off it were excluded (by 5.5, 0.5 and 4.5 px):
#: (side, visible px, sigma px, snapping, polarity, noise seed).
WENT_OFF = [("left", 4, 1.0, True, "auto", 0), ("right", 5, 1.0, False, "bright", 1),
            ("right", 8, 2.0, True, "bright", 1)]


@pytest.mark.parametrize("side, visible_px, sigma_px, snap, polarity, seed", WENT_OFF)
def test_a_ribbon_cut_off_by_the_border_keeps_to_the_raster(side, visible_px, sigma_px, snap, polarity, seed):
    image = road_along(side, visible_px, seed)
    start, end = CLICKS[side][0]
    result = core.extract(image, start, end, mode="ribbon", polarity=polarity, snap_endpoints=snap,
                          sigma_px=sigma_px, backend="cpu")
    assert_on_raster(result.vertices_px)
    # the DP's own candidates on the raster, not the fallback's clipped ones
    assert not result.guides.off_raster((WIDTH, HEIGHT))[chosen_points(result)].any()


def test_links_from_excluded_points_score_below_any_polyline_without_them():
    rng = np.random.default_rng(3)
    gradient = GradientWindow(*(rng.normal(0, 50, (40, 60)).astype(np.float32) for _ in range(2)), -5, -5)
    guides = build_guides((1.0, 2.0), (50.0, 3.0), nodes=6, points=9, half_width_px=4.0, snap_endpoints=True)
    excluded = guides.off_raster((WIDTH, HEIGHT))
    assert excluded.any() and not excluded.all()
    options = ScoringOptions("ribbon", 5.0, "any")
    plain = link_score_tables(gradient, guides, options)
    flagged = link_score_tables(gradient, guides, options, excluded=excluded)
    sizes = np.cumsum([len(layer) for layer in guides.layer_points()])[:-1]
    layer_flags = np.split(excluded, sizes)
    low = np.float32(excluded_link_score(gradient, guides))
    for k, (got, expected) in enumerate(zip(
            [flagged[0], *flagged[1], flagged[2]], [plain[0], *plain[1], plain[2]])):
        touching = layer_flags[k][:, None] | layer_flags[k + 1][None, :]
        np.testing.assert_array_equal(got[touching], low)
        np.testing.assert_array_equal(got[~touching], expected[~touching])
    best_sum = sum(float(t.max()) for t in [plain[0], *plain[1], plain[2]])
    assert low < -best_sum < 0.0


def test_a_raster_narrower_than_the_candidates_gives_the_optimum_clipped_onto_it():
    """No candidate but the clicks lies on a raster 5 px wide: the optimum over all, clipped onto the raster."""
    image = np.random.default_rng(4).normal(0, 1, (60, 5)).astype(np.float32)
    for mode in ("ribbon", "edge"):
        result = core.extract(image, (2.5, 3.0), (2.5, 57.0), mode=mode, points=2, half_width_px=8.0, max_turn_deg=180,
                              backend="cpu")
        assert np.all((result.vertices_px[:, 0] >= 0.0) & (result.vertices_px[:, 0] <= 5.0))
        assert np.all(np.isin(result.vertices_px[1:-1, 0], [0.0, 5.0]))


def test_a_flat_image_gives_the_straight_polyline_on_the_raster_side():
    """Every polyline scores 0: the straight one nearest the clicks whose candidates lie on the raster."""
    image = np.full((HEIGHT, WIDTH), 7.0, np.float32)
    result = core.extract(image, (0.0, 5.0), (0.0, 75.0), mode="edge", points=20, half_width_px=8.0,
                          backend="cpu")
    inner_x = result.vertices_px[1:-1, 0]
    assert np.all(inner_x == inner_x[0]) and 0.0 < inner_x[0] < 1.0  # offset 8/19 px, inside
    np.testing.assert_allclose(result.vertices_px, result.guides.vertices(
        result.start_index, result.indices, result.end_index))


def test_guides_inside_the_raster_are_solved_as_before():
    rng = np.random.default_rng(5)
    gradient = GradientWindow(*(rng.normal(size=(60, 60)).astype(np.float32) for _ in range(2)), 0, 0)
    guides = build_guides((15.0, 20.0), (45.0, 35.0), nodes=6, points=9, half_width_px=4.0)
    assert not guides.off_raster((60, 60)).any()
    options = ScoringOptions("edge")
    expected = score_and_solve_on("cpu", gradient, guides, options, "window", 20.0)
    got = solve_on_raster("cpu", gradient, guides, options, "window", 20.0, (60, 60))
    assert got.score == expected.score and np.array_equal(got.indices, expected.indices)
