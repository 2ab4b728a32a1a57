"""Feature lengths (geodesic metres, pixels) and the status bar's position read-outs."""

from __future__ import annotations

import numpy as np
import pytest

from app.model.measure import feature_length, feature_lengths, geodesic_distances_m
from app.status import describe_position, describe_run
from tests.shared_data import shared_file


def _dms(d, m, s):
    return d + m / 60 + s / 3600


def test_vincenty_on_the_classic_geodesy_example():
    # Flinders Peak -> Buninyong (Vincenty 1975): 54 972.271 m on the ellipsoid.
    distance = geodesic_distances_m(_dms(144, 25, 29.52440), -_dms(37, 57, 3.72030),
                                    _dms(143, 55, 35.38390), -_dms(37, 39, 10.15610))
    assert distance[0] == pytest.approx(54972.271, abs=1e-3)


def test_geodesic_basics():
    one_degree_equator = geodesic_distances_m([0.0], [0.0], [1.0], [0.0])[0]
    assert one_degree_equator == pytest.approx(2 * np.pi * 6378137.0 / 360, rel=1e-9)
    assert geodesic_distances_m([5.0], [5.0], [5.0], [5.0])[0] == 0.0
    meridian_degree = geodesic_distances_m([0.0], [0.0], [0.0], [1.0])[0]
    assert meridian_degree == pytest.approx(110574.4, abs=1.0)  # 1 degree of latitude at the equator
    antipodal = geodesic_distances_m([0.0], [0.0], [179.7], [0.2])[0]  # falls back, still finite
    assert 1.99e7 < antipodal < 2.01e7


def test_plain_image_lengths_are_pixels():
    length = feature_length(np.array([[0, 0], [3, 4], [3, 10]], float))
    assert (length.value, length.unit) == (11.0, "px") and length.text() == "11 px"


def test_georeferenced_length_matches_pixel_size():
    from core.io.raster import open_raster

    with open_raster(shared_file("landsat_rgb_300m.tif")) as raster:  # UTM, 300 m pixels
        length = feature_length(np.array([[100.0, 100.0], [110.0, 100.0]]), raster)
        assert length.unit == "m" and "geodesic" in length.method
        # 10 pixels in UTM: the grid length divided by the UTM point scale factor
        # k = k0 (1 + x^2 / 2R^2), x the distance from the central meridian.
        grid_m = 10 * raster.transform.a
        mx, _ = raster.pixel_to_map([105.0], [100.0])
        k = 0.9996 * (1 + (mx[0] - 500_000.0) ** 2 / (2 * 6_371_000.0**2))
        assert length.value == pytest.approx(grid_m / k, rel=2e-5)
        assert length.text() == f"{length.value:.1f} m"
        text = describe_position(raster, 100.5, 50.25)
        assert text.pixel.startswith("x 100.5  y 50.2") and "EPSG:32618" in text.map and "lat" in text.lonlat
        assert describe_position(raster, -1, 5).pixel == ""


def test_describe_run():
    class Result:
        timings_ms = {"total": 12.345}
        backend, method = "cpu", "window"

    assert describe_run(Result()) == "last run 12.3 ms on CPU (window)"


@pytest.mark.parametrize("georeferenced", [False, True])
def test_many_lengths_at_once_equal_each_measured_alone(georeferenced):
    from core.io.raster import open_raster

    rng = np.random.default_rng(8)
    lines = [np.cumsum(rng.normal(0, 20, (int(k), 2)), axis=0) + 500 for k in rng.integers(0, 12, 300)]
    lines[0], lines[5] = np.zeros((1, 2)), np.zeros((0, 2))  # no length
    raster = open_raster(shared_file("landsat_rgb_300m.tif")) if georeferenced else None
    try:
        together = feature_lengths(lines, raster)
        alone = [feature_length(line, raster) for line in lines]
    finally:
        if raster is not None:
            raster.close()
    assert [(a.unit, a.method) for a in together] == [(b.unit, b.method) for b in alone]
    # (Vincenty iterates until every link converged: a few more rounds for some, 5e-12 apart)
    np.testing.assert_allclose([a.value for a in together], [b.value for b in alone], rtol=1e-9, atol=1e-9)
    assert feature_lengths([], raster) == []
