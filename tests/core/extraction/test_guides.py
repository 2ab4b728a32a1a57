"""core.extraction.guides: the layout of the candidate points."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.extraction.guides import DEFAULT_SNAP_HALF_WIDTH_PX, build_guides, offsets_on_raster


def test_horizontal_layout_exact():
    guides = build_guides((10.0, 20.0), (30.0, 20.0), nodes=5, points=3, half_width_px=2.0)
    assert guides.n_guides == 3
    assert guides.spacing == 5.0
    np.testing.assert_array_equal(guides.axis, [1.0, 0.0])
    np.testing.assert_array_equal(guides.normal, [0.0, 1.0])
    np.testing.assert_array_equal(guides.offsets, [-2.0, 0.0, 2.0])
    layers = guides.layer_points()
    assert [layer.shape for layer in layers] == [(1, 2), (3, 2), (3, 2), (3, 2), (1, 2)]
    np.testing.assert_array_equal(layers[0], [[10.0, 20.0]])
    np.testing.assert_array_equal(layers[2], [[20.0, 18.0], [20.0, 20.0], [20.0, 22.0]])
    np.testing.assert_array_equal(layers[4], [[30.0, 20.0]])
    assert not guides.snapped


def test_points_follow_the_formula_on_a_slanted_axis():
    a, b = np.array([3.5, -1.0]), np.array([40.0, 27.25])
    guides = build_guides(a, b, nodes=7, points=5, half_width_px=4.0)
    u = (b - a) / np.hypot(*(b - a))
    n = np.array([-u[1], u[0]])
    h = np.hypot(*(b - a)) / 6
    layers = guides.layer_points()
    for t in range(1, 6):
        for p in range(5):
            expected = a + t * h * u + (-4.0 + p * 2.0) * n
            np.testing.assert_allclose(layers[t][p], expected, atol=1e-12)
    np.testing.assert_allclose(layers[-1][0], b, atol=1e-12)
    assert np.linalg.det(np.stack([guides.axis, guides.normal])) > 0  # n is the left normal


def test_vertices_pick_one_point_per_layer():
    guides = build_guides((0, 0), (0, 12), nodes=4, points=3, half_width_px=1.0, snap_endpoints=True,
                          snap_half_width_px=0.5)
    vertices = guides.vertices(0, [2, 1], 1)
    # axis (0, 1), normal (-1, 0): offsets move along -x
    np.testing.assert_allclose(vertices, [[0.5, 0.0], [-1.0, 4.0], [0.0, 8.0], [0.0, 12.0]], atol=1e-12)
    layers = guides.layer_points()
    np.testing.assert_array_equal(vertices[1], layers[1][2])


def test_snapping_gives_the_endpoints_guides_of_their_own():
    guides = build_guides((0, 0), (100, 0), nodes=6, points=9, half_width_px=20.0, snap_endpoints=True)
    w = min(20.0, DEFAULT_SNAP_HALF_WIDTH_PX)
    np.testing.assert_allclose(guides.start_offsets, np.linspace(-w, w, 9))
    np.testing.assert_allclose(guides.end_offsets, np.linspace(-w, w, 9))
    layers = guides.layer_points()
    assert layers[0].shape == layers[-1].shape == (9, 2)
    np.testing.assert_allclose(layers[0][:, 0], 0.0)
    np.testing.assert_allclose(layers[-1][:, 0], 100.0)
    assert guides.snapped
    narrow = build_guides((0, 0), (100, 0), nodes=6, points=9, half_width_px=3.0, snap_endpoints=True)
    assert narrow.start_offsets[-1] == 3.0  # default capped at the guide half-width
    explicit = build_guides((0, 0), (100, 0), 6, 9, 20.0, snap_endpoints=True, snap_half_width_px=2.0)
    assert explicit.end_offsets[0] == -2.0


def test_an_ends_candidates_off_the_raster_are_left_out():
    guides = build_guides((0, 3), (100, 48), nodes=6, points=9, half_width_px=8.0, snap_endpoints=True,
                          size=(100, 50))
    for layer in (guides.layer_points()[0], guides.layer_points()[-1]):
        assert (layer >= -1e-9).all() and (layer <= [100 + 1e-9, 50 + 1e-9]).all()
    full = np.linspace(-8.0, 8.0, 9)  # the normal (-0.41, 0.91): the start keeps t in [-3.3, 0], the end [0, 2.2]
    np.testing.assert_array_equal(guides.start_offsets, [-2.0, 0.0])
    np.testing.assert_array_equal(guides.end_offsets, [0.0, 2.0])
    free = build_guides((0, 3), (100, 48), nodes=6, points=9, half_width_px=8.0, snap_endpoints=True)
    np.testing.assert_array_equal(free.start_offsets, full)  # without the size: all of them
    corner = offsets_on_raster(np.array([-2.0, -1.0, 1.0, 2.0]), np.array([0.0, 0.0]), np.array([-0.6, 0.8]),
                               (100, 50))
    np.testing.assert_array_equal(corner, [0.0])  # every candidate off the raster: the click


def test_bounds_cover_every_point_plus_margin():
    guides = build_guides((10.2, 50.7), (90.9, 12.1), nodes=6, points=11, half_width_px=7.0, snap_endpoints=True)
    col_off, row_off, width, height = guides.bounds_px(3.0)
    points = np.concatenate(guides.layer_points())
    assert points[:, 0].min() - 3.0 >= col_off and points[:, 0].max() + 3.0 <= col_off + width
    assert points[:, 1].min() - 3.0 >= row_off and points[:, 1].max() + 3.0 <= row_off + height
    assert width <= math.ceil(np.ptp(points[:, 0]) + 6.0) + 1
    assert all(isinstance(v, int) for v in (col_off, row_off, width, height))


def test_arrays_are_read_only():
    guides = build_guides((0, 0), (10, 0), 3, 2, 1.0)
    with pytest.raises(ValueError):
        guides.offsets[0] = 5.0


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(start_xy=(1, 1), end_xy=(1, 1)), ValueError, "must differ"),
        (dict(start_xy=(1, 1, 1)), ValueError, "start_xy"),
        (dict(end_xy=(np.nan, 1)), ValueError, "end_xy must be finite"),
        (dict(start_xy="ab"), TypeError, "start_xy"),
        (dict(nodes=2), ValueError, "nodes must be an integer >= 3"),
        (dict(nodes=4.0), TypeError, "nodes"),
        (dict(points=1), ValueError, "points must be an integer >= 2"),
        (dict(half_width_px=0.0), ValueError, "half_width_px"),
        (dict(half_width_px=np.inf), ValueError, "half_width_px"),
        (dict(snap_endpoints=True, snap_half_width_px=-1.0), ValueError, "snap_half_width_px"),
    ],
)
def test_validation_names_the_argument(kwargs, error, match):
    args = dict(start_xy=(0, 0), end_xy=(10, 5), nodes=4, points=5, half_width_px=3.0)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        build_guides(**args)
