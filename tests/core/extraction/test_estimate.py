"""The object's width and polarity read across a polyline (core.extraction.estimate), on roads whose
edges are known, with the structures beside roads that mislead an edge search."""

from __future__ import annotations

import numpy as np
import pytest

from core.extraction.appearance import LikelihoodWindow
from core.extraction.estimate import estimate_road
from tests.core.extraction.test_adaptive import road_image


def _estimate(image, vertices, col_off=0, row_off=0):
    blank = LikelihoodWindow(np.zeros_like(image), col_off, row_off)  # no appearance run: the edges decide
    return estimate_road(blank, image, np.asarray(vertices, float), "straight")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_dark_road_between_bright_sidewalks_is_dark_and_as_wide_as_the_road(seed):
    # a 20 px dark road; 12 px bright sidewalks on both sides; dark verges (trees, shadow) beyond them, so
    # the sidewalks' outer edges are steeper than the road's own: their pair encloses the road, bright
    centre_y = 150.5
    truth = np.array([[0.0, centre_y], [400.0, centre_y]])
    image = road_image(truth, 44, (300, 400), inside=0.9, outside=0.0, noise=0.05, seed=seed)
    image[np.abs(np.arange(300) + 0.5 - centre_y) <= 10] = 0.45
    image += np.random.default_rng(seed).normal(0, 0.05, image.shape).astype(np.float32)
    estimate = _estimate(image, [[40.0, centre_y + 2], [360.0, centre_y - 1]])
    assert estimate.polarity == "dark"
    assert estimate.width_px == pytest.approx(20.0, abs=2.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_where_the_window_ends_inside_the_cross_sections_the_road_keeps_its_width(seed):
    # a diagonal 16 px dark road in a window that ends 25 px beyond the clicks' box, as the pipeline reads
    # it: far offsets are seen by a few stations only, whose mean is noise, not an edge
    start, end = np.array([30.0, 30.0]), np.array([200.0, 170.0])
    image = road_image(np.stack([start, end]), 16, (200, 230), inside=0.2, outside=0.8, noise=0.15, seed=seed)
    image[:, 215:] = 0.2 + np.random.default_rng(seed).normal(0, 0.15, (200, 15)).astype(np.float32)
    col_off, row_off = 5, 5
    window = image[row_off:195, col_off:225]
    estimate = _estimate(window, [start, end], col_off, row_off)
    assert estimate.polarity == "dark"
    assert estimate.width_px == pytest.approx(16.0, abs=2.0)

