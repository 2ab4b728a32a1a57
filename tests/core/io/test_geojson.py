"""core.io.geojson: RFC 7946 export checked against independent projections, import, atomic writes."""

from __future__ import annotations

import json
import math
import os
from types import SimpleNamespace

import numpy as np
import pyogrio
import pytest
import rasterio
from hypothesis import given, settings
from hypothesis import strategies as st
from rasterio.crs import CRS
from rasterio.transform import Affine

from core.io.geojson import (
    COORDINATES_MEMBER,
    PIXEL_CRS_WKT,
    GeoJSONError,
    LineFeature,
    feature_from_result,
    format_geojson,
    read_geojson,
    to_feature_collection,
    write_geojson,
)
from core.io.raster import open_raster
from tests.shared_data import shared_file

pytestmark = pytest.mark.filterwarnings("ignore::rasterio.errors.NotGeoreferencedWarning")

TOLERANCE_DEG = 1e-9

# --- independent projections (no PROJ): WGS84 constants and textbook formulas ----------------

WGS84_A, WGS84_F = 6378137.0, 1 / 298.257223563


def affine_apply(t: Affine, xs, ys):
    """transform * (x, y), written out."""
    return t.a * xs + t.b * ys + t.c, t.d * xs + t.e * ys + t.f


def utm_inverse(easting, northing, zone, south=False):
    """UTM -> WGS84 lon/lat (deg) by Krueger's series to order n^6 (Karney 2011, eqs. 11, 15, 36)."""
    n = WGS84_F / (2 - WGS84_F)
    e = math.sqrt(WGS84_F * (2 - WGS84_F))
    big_a = WGS84_A / (1 + n) * (1 + n**2 / 4 + n**4 / 64 + n**6 / 256)
    beta = [
        n / 2 - 2 * n**2 / 3 + 37 * n**3 / 96 - n**4 / 360 - 81 * n**5 / 512 + 96199 * n**6 / 604800,
        n**2 / 48 + n**3 / 15 - 437 * n**4 / 1440 + 46 * n**5 / 105 - 1118711 * n**6 / 3870720,
        17 * n**3 / 480 - 37 * n**4 / 840 - 209 * n**5 / 4480 + 5569 * n**6 / 90720,
        4397 * n**4 / 161280 - 11 * n**5 / 504 - 830251 * n**6 / 7257600,
        4583 * n**5 / 161280 - 108847 * n**6 / 3991680,
        20648693 * n**6 / 638668800,
    ]
    k0 = 0.9996
    xi = (np.asarray(northing) - (10_000_000.0 if south else 0.0)) / (k0 * big_a)
    eta = (np.asarray(easting) - 500_000.0) / (k0 * big_a)
    xi_p, eta_p = xi.copy(), eta.copy()
    for j, b in enumerate(beta, start=1):
        xi_p -= b * np.sin(2 * j * xi) * np.cosh(2 * j * eta)
        eta_p -= b * np.cos(2 * j * xi) * np.sinh(2 * j * eta)
    tau_p = np.sin(xi_p) / np.hypot(np.sinh(eta_p), np.cos(xi_p))  # tan of the conformal latitude
    tau = tau_p.copy()
    for _ in range(6):  # Newton on tau' (tau) = tau'  (Karney eqs. 7, 19)
        sigma = np.sinh(e * np.arctanh(e * tau / np.sqrt(1 + tau**2)))
        f_tau = tau * np.sqrt(1 + sigma**2) - sigma * np.sqrt(1 + tau**2)
        slope = (1 - e**2) * np.sqrt(1 + f_tau**2) * np.sqrt(1 + tau**2) / (1 + (1 - e**2) * tau**2)
        tau = tau + (tau_p - f_tau) / slope
    central = math.radians(6 * zone - 183)
    lon = np.degrees(central + np.arctan2(np.sinh(eta_p), np.cos(xi_p)))
    return lon, np.degrees(np.arctan(tau))


def web_mercator_inverse(mx, my):
    """EPSG:3857 -> lon/lat (deg): the spherical Mercator inverse."""
    return np.degrees(mx / WGS84_A), np.degrees(np.arctan(np.sinh(my / WGS84_A)))


# --- helpers ----------------------------------------------------------------------------------


def random_features(raster, count=4, seed=0):
    rng = np.random.default_rng(seed)
    corners = np.array([[0.0, 0.0], [raster.width, raster.height], [raster.width, 0.0], [0.0, raster.height]])
    features = [LineFeature(corners, "corners", {"score": 1.5})]
    for k in range(count):
        vertices = rng.random((rng.integers(2, 9), 2)) * [raster.width, raster.height]
        features.append(LineFeature(vertices, f"line {k}", {"score": float(k)}))
    return features


def assert_rfc7946(collection, lonlat=True):
    """The structure RFC 7946 asks of a FeatureCollection of LineStrings."""
    text = json.dumps(collection, allow_nan=False)
    if lonlat:
        assert '"crs"' not in text
    else:  # pixel positions: a local CRS that GDAL reads as such, never as EPSG:4326 (issue 13)
        assert collection["crs"] == {"type": "name", "properties": {"name": PIXEL_CRS_WKT}}
    assert collection["type"] == "FeatureCollection" and isinstance(collection["features"], list)
    for feature in collection["features"]:
        assert feature["type"] == "Feature" and isinstance(feature["properties"], dict)
        geometry = feature["geometry"]
        assert geometry["type"] == "LineString" and len(geometry["coordinates"]) >= 2
        for position in geometry["coordinates"]:
            assert len(position) == 2 and all(isinstance(v, float) for v in position)
            if lonlat:
                assert -180 <= position[0] <= 180 and -90 <= position[1] <= 90


def exported_positions(collection):
    return [np.array(f["geometry"]["coordinates"]) for f in collection["features"]]


def write_tif(path, crs, transform, shape=(50, 60)):
    data = np.random.default_rng(1).integers(1, 255, shape, dtype=np.uint8)
    with rasterio.open(path, "w", driver="GTiff", width=shape[1], height=shape[0], count=1,
                       dtype="uint8", crs=crs, transform=transform) as ds:
        ds.write(data, 1)
    return path


# --- lon/lat export ---------------------------------------------------------------------------


def test_landsat_vertices_match_independent_utm_inverse():
    with open_raster(shared_file("landsat_rgb_300m.tif")) as raster:
        features = random_features(raster)
        collection = to_feature_collection(features, raster)
    assert_rfc7946(collection)
    assert collection[COORDINATES_MEMBER] == "lonlat"
    for feature, positions in zip(features, exported_positions(collection)):
        mx, my = affine_apply(raster.transform, feature.vertices_px[:, 0], feature.vertices_px[:, 1])
        lon, lat = utm_inverse(mx, my, zone=18)
        np.testing.assert_allclose(positions[:, 0], lon, rtol=0, atol=TOLERANCE_DEG)
        np.testing.assert_allclose(positions[:, 1], lat, rtol=0, atol=TOLERANCE_DEG)


@pytest.mark.parametrize(
    "epsg, transform, inverse",
    [
        # Web Mercator with a rotated and sheared pixel grid.
        (3857, Affine(2.0, 0.7, 1_650_000.0, 0.4, -1.8, 6_000_000.0), web_mercator_inverse),
        # Southern-hemisphere UTM (false northing), rotated by 30 degrees.
        (32755, Affine.translation(350_000.0, 6_200_000.0) @ Affine.rotation(30) @ Affine.scale(10.0, -10.0),
         lambda mx, my: utm_inverse(mx, my, zone=55, south=True)),
        # A geographic CRS: map coordinates are already lon/lat.
        (4326, Affine(0.001, 0.0002, -115.2, 0.0, -0.001, 36.1), lambda mx, my: (mx, my)),
    ],
)
def test_own_geotiffs_match_independent_transforms(tmp_path, epsg, transform, inverse):
    path = write_tif(tmp_path / f"epsg{epsg}.tif", CRS.from_epsg(epsg), transform)
    with open_raster(path) as raster:
        features = random_features(raster, seed=epsg)
        collection = to_feature_collection(features, raster)
    assert_rfc7946(collection)
    assert collection["linesnap:source_crs"] == f"EPSG:{epsg}"
    for feature, positions in zip(features, exported_positions(collection)):
        lon, lat = inverse(*affine_apply(transform, feature.vertices_px[:, 0], feature.vertices_px[:, 1]))
        np.testing.assert_allclose(positions, np.column_stack([lon, lat]), rtol=0, atol=TOLERANCE_DEG)


def test_pixel_coordinates_travel_in_the_properties():
    with open_raster(shared_file("landsat_rgb_300m.tif")) as raster:
        features = random_features(raster)
        collection = to_feature_collection(features, raster)
    for feature, exported in zip(features, collection["features"]):
        assert exported["properties"]["pixel_coordinates"] == feature.vertices_px.tolist()
        assert exported["properties"]["name"] == feature.name
        assert exported["properties"]["score"] == feature.properties["score"]


# --- plain images -----------------------------------------------------------------------------


def test_plain_png_keeps_pixel_coordinates_and_says_so(tmp_path):
    path = tmp_path / "plain.png"
    with rasterio.open(path, "w", driver="PNG", width=40, height=30, count=1, dtype="uint8") as ds:
        ds.write(np.zeros((30, 40), np.uint8), 1)
    with open_raster(path) as raster:
        features = random_features(raster)
        for source in (raster, None):
            collection = to_feature_collection(features, source)
            assert collection[COORDINATES_MEMBER] == "pixel"
            assert_rfc7946(collection, lonlat=False)
            for feature, positions in zip(features, exported_positions(collection)):
                np.testing.assert_array_equal(positions, feature.vertices_px)
        write_geojson(tmp_path / "plain.geojson", features, raster)
        assert pyogrio.read_info(tmp_path / "plain.geojson")["crs"].startswith("LOCAL_CS")


# --- round trip and atomic writes -------------------------------------------------------------


@pytest.mark.parametrize("georeferenced", [True, False])
def test_export_import_round_trip(tmp_path, georeferenced):
    transform = Affine(0.5, 0.0, 455000.0, 0.0, -0.5, 5300000.0)
    raster = open_raster(write_tif(tmp_path / "r.tif", CRS.from_epsg(32633) if georeferenced else None, transform))
    features = random_features(raster)
    features[1].properties.update(
        settings={"nodes": np.int64(7), "mode": "ribbon", "snap": True}, timings_ms={"dp": np.float32(1.25)},
        flags=np.array([1, 2]), missing=float("nan"),
    )
    write_geojson(tmp_path / "lines.geojson", features, raster)
    back = read_geojson(tmp_path / "lines.geojson")
    assert len(back) == len(features)
    for original, restored in zip(features, back):
        np.testing.assert_array_equal(restored.vertices_px, original.vertices_px)
        assert restored.name == original.name
    assert back[1].properties == {
        "score": 0.0, "settings": {"nodes": 7, "mode": "ribbon", "snap": True},
        "timings_ms": {"dp": 1.25}, "flags": [1, 2], "missing": None,
    }
    assert not features[1].properties["flags"].dtype == object  # the input was not modified


UTM33 = Affine(0.5, 0.0, 455000.0, 0.0, -0.5, 5300000.0)


def test_import_places_lines_by_their_geometry_so_edits_elsewhere_count(tmp_path):
    raster = open_raster(write_tif(tmp_path / "r.tif", CRS.from_epsg(32633), UTM33))
    features = random_features(raster)
    write_geojson(tmp_path / "lines.geojson", features, raster)
    # unedited: the saved pixel coordinates come back exactly
    for original, restored in zip(features, read_geojson(tmp_path / "lines.geojson", raster)):
        np.testing.assert_array_equal(restored.vertices_px, original.vertices_px)
    # edited in another program: line 1 moved 5 m north (10 px up on this 0.5 m grid), one vertex dropped
    collection = json.loads((tmp_path / "lines.geojson").read_text())
    edited = collection["features"][1]["geometry"]
    mx, my = affine_apply(UTM33, features[1].vertices_px[1:, 0], features[1].vertices_px[1:, 1])
    edited["coordinates"] = np.column_stack(utm_inverse(mx, my + 5.0, zone=33)).tolist()
    (tmp_path / "edited.geojson").write_text(json.dumps(collection))
    back = read_geojson(tmp_path / "edited.geojson", raster)
    np.testing.assert_allclose(back[1].vertices_px, features[1].vertices_px[1:] - [0.0, 10.0], atol=1e-5)
    np.testing.assert_array_equal(back[2].vertices_px, features[2].vertices_px)
    # without a raster the saved pixel coordinates are all there is
    np.testing.assert_array_equal(read_geojson(tmp_path / "edited.geojson")[1].vertices_px, features[1].vertices_px)


def test_import_onto_another_image_of_the_same_ground(tmp_path):
    first = open_raster(write_tif(tmp_path / "a.tif", CRS.from_epsg(32633), UTM33))
    # the same area at 2 m pixels in Web Mercator
    second = open_raster(write_tif(tmp_path / "b.tif", CRS.from_epsg(3857),
                                   Affine(2.0, 0.0, 1_510_000.0, 0.0, -2.0, 6_110_000.0), shape=(400, 400)))
    features = random_features(first)
    write_geojson(tmp_path / "lines.geojson", features, first)
    for original, moved in zip(features, read_geojson(tmp_path / "lines.geojson", second)):
        lon, lat = utm_inverse(*affine_apply(UTM33, original.vertices_px[:, 0], original.vertices_px[:, 1]), zone=33)
        np.testing.assert_allclose(
            np.column_stack(web_mercator_inverse(*affine_apply(second.transform, *moved.vertices_px.T))),
            np.column_stack([lon, lat]), rtol=0, atol=TOLERANCE_DEG)


def test_import_of_plain_rfc7946_lines_from_other_tools(tmp_path):
    raster = open_raster(write_tif(tmp_path / "r.tif", CRS.from_epsg(32633), UTM33))
    px = np.array([[3.0, 4.0], [20.5, 30.25], [50.0, 10.0]])
    lon, lat = utm_inverse(*affine_apply(UTM33, px[:, 0], px[:, 1]), zone=33)
    lonlat = np.column_stack([lon, lat])
    collection = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": lonlat[0].tolist()}, "properties": {}},
        {"type": "Feature", "geometry": None, "properties": {"name": "no geometry"}},
        {"type": "Feature", "properties": {"name": "road", "highway": "residential"},
         "geometry": {"type": "LineString", "coordinates": [[*p, 612.0] for p in lonlat.tolist()]}},
        {"type": "Feature", "properties": None,
         "geometry": {"type": "MultiLineString", "coordinates": [lonlat[:2].tolist(), lonlat[1:].tolist()]}},
    ]}
    path = tmp_path / "qgis.geojson"
    path.write_text(json.dumps(collection))
    write_geojson(tmp_path / "ours.geojson", [LineFeature(px, "ours")], raster)
    back = read_geojson(path, raster)
    assert [f.name for f in back] == ["road", "", ""]
    # a LineSnap line that another program saved without LineSnap's members, its pixel coordinates
    # turned into text: the geometry still places it
    collection["features"][2]["properties"]["pixel_coordinates"] = json.dumps(px.tolist())
    path.write_text(json.dumps(collection))
    back = read_geojson(path, raster)
    assert back[0].properties == {"highway": "residential"}
    for feature, expected in zip(back, (px, px[:2], px[1:])):
        np.testing.assert_allclose(feature.vertices_px, expected, atol=1e-6)
    with pytest.raises(GeoJSONError, match="open a georeferenced image"):
        read_geojson(path)
    plain = tmp_path / "plain.png"
    with rasterio.open(plain, "w", driver="PNG", width=40, height=30, count=1, dtype="uint8") as ds:
        ds.write(np.zeros((30, 40), np.uint8), 1)
    with open_raster(plain) as image:
        for lonlat_file in (path, tmp_path / "ours.geojson"):  # LineSnap's own lon/lat lines too
            with pytest.raises(GeoJSONError, match="open a georeferenced image"):
                read_geojson(lonlat_file, image)
    # a single Feature, or a bare geometry, is a file of one line (RFC 7946 allows either at the top level)
    single, bare = tmp_path / "single.geojson", tmp_path / "bare.geojson"
    single.write_text(json.dumps(collection["features"][2]))
    bare.write_text(json.dumps(collection["features"][3]["geometry"]))
    (one,) = read_geojson(single, raster)
    assert one.name == "road" and np.abs(one.vertices_px - px).max() < 1e-6
    assert [len(f.vertices_px) for f in read_geojson(bare, raster)] == [2, 2]
    points_only = tmp_path / "points.geojson"
    points_only.write_text(json.dumps({"type": "FeatureCollection", "features": collection["features"][:2]}))
    with pytest.raises(GeoJSONError, match="no LineString or MultiLineString"):
        read_geojson(points_only, raster)


def test_import_of_the_vegas_road_centre_lines():
    roads = shared_file("vegas_roads.geojson")
    with open_raster(shared_file("vegas_pan_0.3m.tif")) as raster:
        back = read_geojson(roads, raster)
        lines = json.loads(roads.read_text())["features"]
        assert len(back) == len(lines) == 9
        for feature, line in zip(back, lines):
            lonlat = np.array(line["geometry"]["coordinates"])
            # the raster's CRS is lon/lat itself: the inverse affine transform is the whole mapping
            inverse = ~raster.transform
            np.testing.assert_allclose(feature.vertices_px, np.column_stack(affine_apply(inverse, *lonlat.T)),
                                       rtol=0, atol=1e-6)
            assert (feature.vertices_px >= -1).all() and (feature.vertices_px <= 1301).all()


def test_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "lines.geojson"
    features = [LineFeature([[0, 0], [5, 5]], "first")]
    write_geojson(target, features)
    before = target.read_bytes()

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="No space left"):
        write_geojson(target, [LineFeature([[1, 1], [9, 9]], "second")])
    monkeypatch.undo()
    with pytest.raises(GeoJSONError, match="set"):  # not JSON-able: fails before touching the disk
        write_geojson(target, [LineFeature([[1, 1], [9, 9]], "third", {"bad": {1, 2}})])
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lines.geojson"]
    assert read_geojson(target)[0].name == "first"


def test_a_write_into_a_missing_folder_names_the_file_not_the_temporary(tmp_path):
    target = tmp_path / "missing" / "lines.geojson"
    with pytest.raises(FileNotFoundError) as raised:
        write_geojson(target, [LineFeature([[0, 0], [1, 1]])])
    assert raised.value.filename == str(target) and ".tmp" not in str(raised.value)


def test_a_write_onto_a_folder_names_the_folder_and_leaves_nothing_behind(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    with pytest.raises(IsADirectoryError) as raised:
        write_geojson(target, [LineFeature([[0, 0], [1, 1]])])
    assert raised.value.filename == str(target) and ".tmp" not in str(raised.value)
    assert [p.name for p in tmp_path.iterdir()] == ["out"] and not any(target.iterdir())


def test_replacing_keeps_permissions(tmp_path):
    target = tmp_path / "lines.geojson"
    write_geojson(target, [LineFeature([[0, 0], [1, 1]])])
    os.chmod(target, 0o640)
    write_geojson(target, [LineFeature([[0, 0], [2, 2]])])
    assert os.stat(target).st_mode & 0o777 == 0o640


# --- results and validation -------------------------------------------------------------------


def test_feature_from_result_carries_score_settings_backend_timings():
    settings = SimpleNamespace(to_dict=lambda: {"nodes": 7, "points": 128})
    result = SimpleNamespace(
        vertices_px=np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]]), score=np.float32(12.5), settings=settings,
        backend="cpu", method="window", timings_ms={"read": 1.0, "total": np.float64(3.5)},
    )
    feature = feature_from_result(result, name="road")
    assert feature.name == "road"
    np.testing.assert_array_equal(feature.vertices_px, result.vertices_px)
    assert feature.properties == {
        "score": 12.5, "settings": {"nodes": 7, "points": 128}, "backend": "cpu", "method": "window",
        "timings_ms": {"read": 1.0, "total": 3.5},
    }


def test_feature_from_result_records_the_snapping_half_width_used():
    from core.extraction import extract

    image = np.random.default_rng(3).random((60, 80)).astype(np.float32)
    for half_width, expected in ((8.0, 8.0), (5.0, 5.0), (20.0, 8.0)):  # the default: min(half-width, 8)
        result = extract(image, (10, 30), (70, 30), nodes=4, points=9, half_width_px=half_width,
                         snap_endpoints=True, backend="cpu")
        assert result.settings.snap_half_width_px is None
        assert feature_from_result(result).properties["settings"]["snap_half_width_px"] == expected
    unsnapped = extract(image, (10, 30), (70, 30), nodes=4, points=9, snap_endpoints=False, backend="cpu")
    assert feature_from_result(unsnapped).properties["settings"]["snap_half_width_px"] is None


def test_line_feature_validation():
    with pytest.raises(ValueError, match=r"shape \(k, 2\) with k >= 2"):
        LineFeature([[0.0, 1.0]])
    with pytest.raises(ValueError, match="finite"):
        LineFeature([[0.0, 1.0], [np.nan, 2.0]])
    with pytest.raises(TypeError, match="name must be a str"):
        LineFeature([[0, 0], [1, 1]], name=3)
    with pytest.raises(TypeError, match=r"features\[0\] must be a LineFeature"):
        to_feature_collection([[[0, 0], [1, 1]]])


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not valid JSON"),
        ('{"type": "Topology", "objects": {}}', "not a GeoJSON FeatureCollection, Feature or geometry"),
        ('{"type": "FeatureCollection", "features": []}', "open a georeferenced image"),
        ('{"type": "FeatureCollection", "linesnap:coordinates": "pixel", "features": [{"type": "Feature", '
         '"geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}, '
         '"properties": {"pixel_coordinates": [[0, 0], [1, 1]]}}], "crs": {"type": "name", '
         '"properties": {"name": "urn:ogc:def:crs:EPSG::3857"}}}', "EPSG::3857"),
        ('{"type": "FeatureCollection", "features": [], "crs": {"type": "name", "properties": "EPSG:3857"}}',
         "EPSG:3857"),
        ('{"type": "FeatureCollection", "linesnap:coordinates": "pixel", "features": [{"type": "Feature", '
         '"geometry": {"type": "Point", "coordinates": [0, 0]}, "properties": {}}]}', "feature 0 is not a LineString"),
        ('{"type": "FeatureCollection", "linesnap:coordinates": "pixel", "features": [{"type": "Feature", '
         '"geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}, "properties": {}}]}',
         "no 'pixel_coordinates'"),
        ('{"type": "FeatureCollection", "linesnap:coordinates": "pixel", "features": [{"type": "Feature", '
         '"geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}, '
         '"properties": {"pixel_coordinates": [[0, 0]]}}]}', "k >= 2"),
    ],
)
def test_read_geojson_rejects_other_and_broken_files(tmp_path, content, message):
    path = tmp_path / "other.geojson"
    path.write_text(content)
    with pytest.raises(GeoJSONError, match=message):
        read_geojson(path)


def test_read_geojson_missing_file(tmp_path):
    with pytest.raises(GeoJSONError, match="cannot read .*missing.geojson"):
        read_geojson(tmp_path / "missing.geojson")


def test_format_geojson_puts_positions_on_one_line_and_leaves_strings_alone():
    tricky = "[\n 1,\n 2\n] and [ 3, 4 ]"
    collection = to_feature_collection([LineFeature([[1.5, -2e-07], [3, 4]], tricky, {"note": tricky})])
    text = format_geojson(collection)
    assert json.loads(text) == collection
    assert "[1.5, -2e-07]," in text and "[3.0, 4.0]\n" in text and text.endswith("\n")
    with pytest.raises(ValueError):
        format_geojson({"type": "FeatureCollection", "bad": float("nan")})


coordinate = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=30, deadline=None)
@given(
    lines=st.lists(
        st.tuples(st.lists(st.tuples(coordinate, coordinate), min_size=2, max_size=12), st.text(max_size=20)),
        min_size=0, max_size=4,
    )
)
def test_round_trip_of_random_features(tmp_path_factory, lines):
    features = [LineFeature(vertices, name, {"score": float(k)}) for k, (vertices, name) in enumerate(lines)]
    path = tmp_path_factory.mktemp("rt") / "random.geojson"
    write_geojson(path, features)
    back = read_geojson(path)
    assert [f.name for f in back] == [f.name for f in features]
    for original, restored in zip(features, back):
        np.testing.assert_array_equal(restored.vertices_px, original.vertices_px)  # exact: repr round-trips
        assert restored.properties == original.properties


def test_a_name_field_of_any_case_names_the_lines(tmp_path):
    # a Shapefile's NAME was left as an attribute and the lines got "Line 1", ...; on export it became NAME_1
    import pyogrio.raw
    import shapely

    from core.cli.pairs import read_pairs
    from core.vector import read_lines

    raster = open_raster(write_tif(tmp_path / "r.tif", CRS.from_epsg(32633), UTM33))
    positions = np.array(affine_apply(UTM33, np.array([3.0, 50.0]), np.array([4.0, 10.0]))).T
    path = tmp_path / "roads.shp"
    pyogrio.raw.write(str(path), np.array([shapely.to_wkb(shapely.LineString(positions))], object),
                      [np.array(["Main St"], object), np.array([2], np.int32)], ["NAME", "LANES"], crs="EPSG:32633",
                      geometry_type="LineString")
    (line,) = read_lines(path, raster)
    assert line.name == "Main St" and line.properties == {"LANES": 2}
    ((name, _, _),) = read_pairs(path, raster)
    assert name == "Main St"
    both = tmp_path / "both.geojson"  # "name" itself wins over a "Name"
    lonlat = np.column_stack(utm_inverse(*positions.T, zone=33)).tolist()
    both.write_text(json.dumps({"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {
        "Name": "other", "name": "road"}, "geometry": {"type": "LineString", "coordinates": lonlat}}]}))
    (line,) = read_geojson(both, raster)
    assert line.name == "road" and line.properties == {"Name": "other"}
