"""core.extraction.scores: the numba link scores against the loop reference and exact hand-made cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.extraction.gradient import GAUSSIAN_TRUNCATE, GradientWindow, gradient_window
from core.extraction.guides import build_guides
from core.extraction.options import ScoringOptions
from core.extraction.scores import link_score_tables, stage_scores
from tests import naive_scores


def _window(gx, gy, col_off=0, row_off=0, step_px=1.0):
    return GradientWindow(np.asarray(gx, np.float32), np.asarray(gy, np.float32), col_off, row_off, step_px)


def _constant_field(gx, gy, shape=(40, 40)):
    return _window(np.full(shape, gx), np.full(shape, gy))


def _one_link(gradient, p, q, **options):
    scores = stage_scores(gradient, np.array([[p]], float), np.array([[q]], float), ScoringOptions(**options))
    return float(scores[0, 0, 0])


def _naive_tables(gradient, guides, **options):
    return naive_scores.score_tables(
        gradient.gx, gradient.gy, gradient.col_off, gradient.row_off, guides.layer_points(), **options,
        step_px=gradient.step_px,
    )


@st.composite
def scenes(draw):
    height, width = draw(st.integers(3, 12)), draw(st.integers(3, 12))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    gradient = _window(
        rng.normal(0, 5, (height, width)),
        rng.normal(0, 5, (height, width)),
        draw(st.integers(-4, 4)),
        draw(st.integers(-4, 4)),
        draw(st.sampled_from([1.0, 0.5])),
    )
    coordinate = st.floats(-6.0, 18.0, allow_nan=False)
    start = (draw(coordinate), draw(coordinate))
    end = (draw(coordinate), draw(coordinate))
    if math.hypot(end[0] - start[0], end[1] - start[1]) < 0.5:
        end = (start[0] + 3.0, start[1] - 1.0)
    guides = build_guides(
        start, end,
        nodes=draw(st.integers(3, 5)),
        points=draw(st.integers(2, 4)),
        half_width_px=draw(st.floats(0.25, 6.0)),
        snap_endpoints=draw(st.booleans()),
    )
    mode = draw(st.sampled_from(["edge", "ribbon"]))
    options = dict(mode=mode, ribbon_width_px=draw(st.floats(0.0, 8.0)),
                   polarity=draw(st.sampled_from(["any", "bright", "dark"])),
                   ribbon_combine=draw(st.sampled_from(["mean", "geometric"])))
    return gradient, guides, options


@settings(max_examples=60, deadline=None)
@given(scenes())
def test_tables_match_the_loop_reference(scene):
    gradient, guides, options = scene
    first, links, last = link_score_tables(gradient, guides, ScoringOptions(**options))
    expected = _naive_tables(gradient, guides, **options)
    m, d = guides.n_guides, guides.offsets.size
    assert first.shape == (guides.start_offsets.size, d) and last.shape == (d, guides.end_offsets.size)
    assert links.shape == (m - 1, d, d)
    assert first.dtype == links.dtype == last.dtype == np.float32
    np.testing.assert_allclose(first, expected[0], rtol=1e-5, atol=1e-4)
    for t in range(m - 1):
        np.testing.assert_allclose(links[t], expected[t + 1], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(last, expected[-1], rtol=1e-5, atol=1e-4)


@settings(max_examples=25, deadline=None)
@given(scenes())
def test_ribbon_of_zero_width_is_the_edge_mode(scene):
    gradient, guides, _ = scene
    edge = link_score_tables(gradient, guides, ScoringOptions(mode="edge"))
    for combine in ("mean", "geometric"):
        for polarity in ("any", "bright", "dark"):  # one edge has no two sides to keep or multiply
            for width in (0.0, 5e-324):  # a subnormal width halves to a radius of 0 too (found by hypothesis)
                ribbon = link_score_tables(gradient, guides, ScoringOptions(
                    mode="ribbon", ribbon_width_px=width, polarity=polarity, ribbon_combine=combine))
                for a, b in zip(edge, ribbon):
                    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_constant_field_exact_scores():
    gradient = _constant_field(0.0, 2.0)
    # horizontal link: normal (0, 1), g . n = 2 along the whole 10 px
    assert _one_link(gradient, (5.0, 5.0), (15.0, 5.0)) == pytest.approx(20.0, abs=1e-5)
    # direction (3, 4) / 5, length 10: normal (-0.8, 0.6), |g . n| = 1.2
    assert _one_link(gradient, (5.0, 5.0), (11.0, 13.0)) == pytest.approx(12.0, abs=1e-5)
    # along the gradient: no edge crossing the link's normal
    assert _one_link(gradient, (5.0, 5.0), (5.0, 15.0)) == pytest.approx(0.0, abs=1e-6)
    # a short link still uses two samples and scores |g . n| * length
    assert _one_link(gradient, (5.0, 5.0), (5.3, 5.0)) == pytest.approx(0.6, abs=1e-6)


def test_links_outside_the_window_score_zero():
    gradient = _window(np.ones((10, 10)), np.ones((10, 10)), col_off=100, row_off=50)
    assert _one_link(gradient, (0.0, 0.0), (20.0, 5.0)) == 0.0
    assert _one_link(gradient, (100.5, 20.0), (109.5, 40.0)) == 0.0
    # inside the window the same field scores: sanity check of the offsets
    assert _one_link(gradient, (101.0, 55.5), (108.0, 55.5)) == pytest.approx(7.0, abs=1e-5)


def test_bilinear_weights_and_window_border():
    gy = np.zeros((6, 8))
    gy[2, :] = 4.0  # row 2 has its centres at y = 2.5
    gradient = _window(np.zeros((6, 8)), gy)
    assert _one_link(gradient, (1.5, 2.5), (6.5, 2.5)) == pytest.approx(20.0, abs=1e-5)
    assert _one_link(gradient, (1.5, 2.75), (6.5, 2.75)) == pytest.approx(15.0, abs=1e-5)  # 3/4 weight
    assert _one_link(gradient, (1.5, 3.5), (6.5, 3.5)) == pytest.approx(0.0, abs=1e-6)
    # centres of the last column are x = 7.5; beyond, the missing neighbour counts 0
    edge_gy = np.zeros((6, 8))
    edge_gy[:, 7] = 2.0
    border = _window(edge_gy, edge_gy)  # gx too, so a vertical link sees it
    assert _one_link(border, (7.5, 1.0), (7.5, 5.0)) == pytest.approx(8.0, abs=1e-5)
    assert _one_link(border, (8.0, 1.0), (8.0, 5.0)) == pytest.approx(4.0, abs=1e-5)


def test_half_pixel_grid_positions():
    # step 0.5: element [i, j] at (0.5 + j / 2, 0.5 + i / 2); row 4 lies on y = 2.5, row 5 on the boundary y = 3
    gy = np.zeros((11, 15))
    gy[5, :] = 4.0
    gradient = _window(np.zeros((11, 15)), gy, step_px=0.5)
    assert _one_link(gradient, (1.5, 3.0), (6.5, 3.0)) == pytest.approx(20.0, abs=1e-5)
    assert _one_link(gradient, (1.5, 3.125), (6.5, 3.125)) == pytest.approx(15.0, abs=1e-5)  # 3/4 weight
    assert _one_link(gradient, (1.5, 2.5), (6.5, 2.5)) == pytest.approx(0.0, abs=1e-6)
    # the same field on the pixel-centre grid would sit at y = 5.5
    assert _one_link(_window(np.zeros((11, 15)), gy), (1.5, 5.5), (6.5, 5.5)) == pytest.approx(20.0, abs=1e-5)
    # offsets still count in pixels: the last column (j = 14) sits at x = col_off + 7.5
    shifted = _window(gy.T.copy(), np.zeros((15, 11)), col_off=10, row_off=-4, step_px=0.5)
    assert _one_link(shifted, (13.0, -3.0), (13.0, 1.0)) == pytest.approx(16.0, abs=1e-5)


def _band_field():
    """gy = +1 on rows 4, 5 (y = 5 edge), -1 on rows 14, 15 (y = 15): a bright band 5 < y < 15."""
    gy = np.zeros((20, 40))
    gy[4:6] = 1.0
    gy[14:16] = -1.0
    return _window(np.zeros((20, 40)), gy)


@pytest.mark.parametrize("direction", [1, -1])
def test_ribbon_polarity_on_a_bright_band(direction):
    gradient = _band_field()
    p, q = (20.0 - 6.0 * direction, 10.0), (20.0 + 6.0 * direction, 10.0)
    ribbon = dict(mode="ribbon", ribbon_width_px=10.0)
    assert _one_link(gradient, p, q, polarity="bright", **ribbon) == pytest.approx(12.0, abs=1e-5)
    assert _one_link(gradient, p, q, polarity="any", **ribbon) == pytest.approx(12.0, abs=1e-5)
    assert _one_link(gradient, p, q, polarity="dark", **ribbon) == pytest.approx(0.0, abs=1e-6)
    assert _one_link(gradient, p, q, mode="edge") == pytest.approx(0.0, abs=1e-6)
    # 10 px further down only one ribbon side meets an edge (y = 15): half the score
    off_centre = (p[0], 20.0), (q[0], 20.0)
    assert _one_link(gradient, *off_centre, polarity="any", **ribbon) == pytest.approx(6.0, abs=1e-5)


def test_geometric_combination_needs_both_edges():
    gradient = _band_field()
    p, q = (14.0, 10.0), (26.0, 10.0)
    geometric = dict(mode="ribbon", ribbon_width_px=10.0, ribbon_combine="geometric")
    assert _one_link(gradient, p, q, polarity="bright", **geometric) == pytest.approx(12.0, abs=1e-5)
    # one edge only (10 px off centre): the mean keeps half the score, the geometric mean nothing
    off_centre = (p[0], 20.0), (q[0], 20.0)
    assert _one_link(gradient, *off_centre, polarity="any", **geometric) == 0.0
    # unequal edges: sqrt(1 * 4) = 2 per px where the mean would give 2.5
    uneven = _window(np.zeros((20, 40)), np.where(np.arange(20)[:, None] >= 14, 4.0, 1.0) * gradient.gy)
    assert _one_link(uneven, p, q, polarity="any", **geometric) == pytest.approx(24.0, abs=1e-4)
    assert _one_link(uneven, p, q, polarity="any", mode="ribbon", ribbon_width_px=10.0) == pytest.approx(30.0, abs=1e-4)


def test_dark_band_is_the_mirror_image():
    bright = _band_field()
    dark = _window(-bright.gx, -bright.gy)
    ribbon = dict(mode="ribbon", ribbon_width_px=10.0)
    assert _one_link(dark, (10.0, 10.0), (25.0, 10.0), polarity="dark", **ribbon) == pytest.approx(15.0, abs=1e-5)
    assert _one_link(dark, (10.0, 10.0), (25.0, 10.0), polarity="bright", **ribbon) == 0.0


def _discrete_gaussian(sigma):
    radius = int(GAUSSIAN_TRUNCATE * sigma + 0.5)
    x = np.arange(-radius, radius + 1)
    weights = np.exp(-0.5 * (x / sigma) ** 2)
    return weights / weights.sum(), radius


def test_horizontal_step_edge_gives_the_analytic_score():
    sigma, step = 1.5, 40.0
    image = np.zeros((30, 60), np.float32)
    image[15:] = step  # the edge runs along y = 15
    gradient = gradient_window(image, sigma, col_off=-7, row_off=3)
    # analytic: smoothed row r = step * sum of the kernel weights reaching rows >= 15;
    # the Sobel derivative is the central difference (rows are constant along x)
    weights, radius = _discrete_gaussian(sigma)
    smooth = np.array([step * weights[np.arange(-radius, radius + 1) + r >= 15].sum() for r in range(30)])
    gy = (smooth[16] - smooth[14]) / 2  # at row 15 (centre y = 15.5); row 14 has the same value
    y_edge = 3 + 15.0  # window row_off + edge line
    length = 20.0
    score = _one_link(gradient, (10.0, y_edge), (10.0 + length, y_edge))
    assert score == pytest.approx(length * gy, rel=1e-5)
    assert gy == pytest.approx(step * (weights[radius] + weights[radius + 1]) / 2, rel=1e-9)
    # the same edge crossed at right angles scores nothing
    assert _one_link(gradient, (10.0, y_edge - 5), (10.0, y_edge + 5)) == pytest.approx(0.0, abs=1e-4)


@pytest.mark.parametrize(
    "options, error, match",
    [
        (dict(mode="ridge"), ValueError, "mode"),
        (dict(polarity="light"), ValueError, "polarity"),
        (dict(mode="ribbon", ribbon_width_px=-1.0), ValueError, "ribbon_width_px"),
        (dict(mode="ribbon", ribbon_width_px=float("nan")), ValueError, "ribbon_width_px"),
        (dict(mode="ribbon", ribbon_width_px="5"), TypeError, "ribbon_width_px"),
        (dict(mode="ribbon", ribbon_combine="max"), ValueError, "ribbon_combine"),
    ],
)
def test_bad_options(options, error, match):
    guides = build_guides((1, 1), (8, 8), 3, 2, 1.0)
    with pytest.raises(error, match=match):
        link_score_tables(_constant_field(1.0, 1.0), guides, ScoringOptions(**options))


def test_m_equal_one_has_empty_links():
    guides = build_guides((2, 2), (20, 2), nodes=3, points=4, half_width_px=2.0)
    first, links, last = link_score_tables(_constant_field(0.0, 1.0), guides)
    assert first.shape == (1, 4) and links.shape == (0, 4, 4) and last.shape == (4, 1)
