"""Feature lengths (geodesic metres, pixels) and the status bar's position read-outs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.model.measure import WGS84_A_M, WGS84_F, feature_length, feature_lengths, geodesic_distances_m
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


_B_M = WGS84_A_M * (1.0 - WGS84_F)
longitudes, latitudes = st.floats(-180, 180), st.floats(-89.9, 89.9)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(longitudes, latitudes, st.floats(-0.01, 0.01), st.floats(-0.01, 0.01)), min_size=1,
                max_size=20), st.lists(st.tuples(longitudes, latitudes, longitudes, latitudes), max_size=5))
@example([(0.0, 0.0, 0.0, 0.0), (10.0, 0.0, 0.005, 0.0), (-75.0, 40.6, 0.0, 0.001)], [(0.0, 0.0, 179.7, 0.2)])
@example([(0.0, 0.0, 0.0078125, 0.0)], [(0.0, 0.0, 180.0, 0.0625)])
def test_the_compiled_distances_equal_the_numpy_formulation(near, far):
    """Links of digitized lines (points a few hundred metres apart) and far pairs, antipodal ones included."""
    pairs = np.array([(lon, lat, lon + dx, lat + dy) for lon, lat, dx, dy in near] + far, np.float64)
    got = geodesic_distances_m(*pairs.T)
    expected, converged = _numpy_vincenty(*pairs.T)
    # (both stop a pair's iteration at a step under 1e-12 rad, about 6 um on the ellipsoid; numpy's went on
    # with every pair until the slowest converged, so its results can be that much nearer the limit)
    np.testing.assert_allclose(got[converged], expected[converged], rtol=1e-12, atol=1e-5)
    # Nearly antipodal pairs: the iteration wanders there, and the last bit of numpy's vectorised sine against
    # the scalar one decides whether it settles (0, 0 to 180, 0.0625: the compiled one reached 19,997,020.6 m,
    # the geodesic over the pole; numpy's gave up, 20,008,164.7 m on the great circle).  Either answer is
    # within the great circle's error on the ellipsoid (its flattening, 0.34 %) of the great circle.
    great_circle = _numpy_great_circle_m(*pairs.T)
    assert np.all(np.abs(got[~converged] - great_circle[~converged]) <= 0.004 * great_circle[~converged])


def _numpy_vincenty(lon1, lat1, lon2, lat2) -> np.ndarray:
    """The numpy formulation LineSnap used before core.geodesy (all pairs iterated together): the reference."""
    lon1, lat1, lon2, lat2 = (np.atleast_1d(np.asarray(v, dtype=np.float64)) for v in (lon1, lat1, lon2, lat2))
    big_l = np.radians(lon2 - lon1)
    u1, u2 = (np.arctan((1.0 - WGS84_F) * np.tan(np.radians(lat))) for lat in (lat1, lat2))
    sin_u1, cos_u1, sin_u2, cos_u2 = np.sin(u1), np.cos(u1), np.sin(u2), np.cos(u2)
    lam = big_l.copy()
    converged = np.zeros(lam.shape, dtype=bool)
    for _ in range(200):
        sin_lam, cos_lam = np.sin(lam), np.cos(lam)
        sin_sigma = np.hypot(cos_u2 * sin_lam, cos_u1 * sin_u2 - sin_u1 * cos_u2 * cos_lam)
        cos_sigma = sin_u1 * sin_u2 + cos_u1 * cos_u2 * cos_lam
        sigma = np.arctan2(sin_sigma, cos_sigma)
        sin_alpha = cos_u1 * cos_u2 * sin_lam / np.where(sin_sigma == 0, 1.0, sin_sigma)
        cos2_alpha = 1.0 - sin_alpha**2
        cos_2sm = np.where(cos2_alpha != 0,
                           cos_sigma - 2 * sin_u1 * sin_u2 / np.where(cos2_alpha == 0, 1, cos2_alpha), 0)
        c = WGS84_F / 16 * cos2_alpha * (4 + WGS84_F * (4 - 3 * cos2_alpha))
        lam_next = big_l + (1 - c) * WGS84_F * sin_alpha * (
            sigma + c * sin_sigma * (cos_2sm + c * cos_sigma * (-1 + 2 * cos_2sm**2)))
        converged = np.abs(lam_next - lam) < 1e-12
        lam = lam_next
        if converged.all():
            break
    u_sq = cos2_alpha * (WGS84_A_M**2 - _B_M**2) / _B_M**2
    big_a = 1 + u_sq / 16384 * (4096 + u_sq * (-768 + u_sq * (320 - 175 * u_sq)))
    big_b = u_sq / 1024 * (256 + u_sq * (-128 + u_sq * (74 - 47 * u_sq)))
    delta_sigma = big_b * sin_sigma * (cos_2sm + big_b / 4 * (
        cos_sigma * (-1 + 2 * cos_2sm**2) - big_b / 6 * cos_2sm * (-3 + 4 * sin_sigma**2) * (-3 + 4 * cos_2sm**2)))
    distances = _B_M * big_a * (sigma - delta_sigma)
    distances = np.where(sin_sigma == 0, 0.0, distances)
    return np.where(converged, distances, _numpy_great_circle_m(lon1, lat1, lon2, lat2)), converged


def _numpy_great_circle_m(lon1, lat1, lon2, lat2):
    radius = (2 * WGS84_A_M + _B_M) / 3
    phi1, phi2 = np.radians(lat1), np.radians(lat2)
    h = np.sin((phi2 - phi1) / 2) ** 2 + np.cos(phi1) * np.cos(phi2) * np.sin(np.radians(lon2 - lon1) / 2) ** 2
    return 2 * radius * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))

