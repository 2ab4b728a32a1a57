"""The bundled sample scene: reproducible from its generator, well-formed, and true to its truth file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import rasterio

from core.io.raster import open_raster
from resources import make_sample_scene

RESOURCES = Path(make_sample_scene.__file__).resolve().parent
SCENE, TRUTH = RESOURCES / make_sample_scene.TIF_NAME, RESOURCES / make_sample_scene.TRUTH_NAME


@pytest.fixture(scope="module")
def truth():
    return json.loads(TRUTH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def intensity():
    with open_raster(SCENE) as raster:
        return raster.read_window(0, 0, raster.width, raster.height)


def test_generator_reproduces_the_committed_files(tmp_path):
    tif, truth_json = make_sample_scene.write_scene(tmp_path)
    with rasterio.open(tif) as fresh, rasterio.open(SCENE) as committed:
        np.testing.assert_array_equal(fresh.read(), committed.read())
    assert truth_json.read_text(encoding="utf-8") == TRUTH.read_text(encoding="utf-8")


def test_scene_is_a_small_tiled_georeferenced_rgb_geotiff():
    assert SCENE.stat().st_size < 4 * 2**20
    with rasterio.open(SCENE) as ds:
        assert (ds.count, ds.width, ds.height, ds.dtypes) == (3, 1500, 1500, ("uint8",) * 3)
        assert ds.crs.to_epsg() == 32633 and ds.res == (0.5, 0.5)
        assert ds.profile["tiled"] and ds.compression.name == "deflate"
        assert ds.overviews(1) == [2, 4, 8]
    with open_raster(SCENE) as raster:
        lon, lat = raster.pixel_to_lonlat([750.0], [750.0])
    assert 14 < lon[0] < 15 and 47 < lat[0] < 48  # farmland of Upper Austria


def test_truth_describes_roads_of_several_widths_and_a_river(truth):
    features = {f["name"]: f for f in truth["features"]}
    assert sorted(f["width_px"] for f in features.values() if f["kind"] == "road") == [4, 8, 14]
    assert {f["polarity"] for f in features.values() if f["kind"] == "road"} == {"dark", "bright"}
    assert [f["kind"] for f in features.values()].count("river") == 1
    for feature in features.values():
        line = np.array(feature["centerline_px"])
        steps = np.hypot(*np.diff(line, axis=0).T)
        assert line.shape[0] > 500 and steps.max() < 2.5  # dense polylines
        assert np.all((line >= 0) & (line <= 1500))
    demo = truth["demo"]
    assert demo["feature"] in features and np.hypot(*np.subtract(demo["end"], demo["start"])) > 200


def _clear_samples(truth, name, every=10, clearance_px=40.0):
    """(k, 2) points of a centre line far from every other feature, and their unit normals."""
    lines = {f["name"]: np.array(f["centerline_px"]) for f in truth["features"]}
    line = lines[name]
    tangent = np.gradient(line, axis=0)
    normal = np.column_stack([-tangent[:, 1], tangent[:, 0]]) / np.hypot(*tangent.T)[:, None]
    keep = np.ones(len(line), bool)
    for other, points in lines.items():
        if other != name:
            gaps = np.hypot(line[:, None, 0] - points[None, ::4, 0], line[:, None, 1] - points[None, ::4, 1])
            keep &= gaps.min(axis=1) > clearance_px
    keep &= np.all((line > 30) & (line < 1470), axis=1)
    return line[keep][::every], normal[keep][::every]


def _sample(image, points):
    cols, rows = np.floor(points).astype(int).T
    return image[rows, cols]


@pytest.mark.parametrize("name", ["main_road", "gravel_road", "farm_track", "river"])
def test_pixels_follow_the_truth(truth, intensity, name):
    feature = next(f for f in truth["features"] if f["name"] == name)
    half = feature["width_px"] / 2
    points, normals = _clear_samples(truth, name)
    assert len(points) > 20
    centre = _sample(intensity, points)
    inside = [_sample(intensity, points + s * (half - 1.0) * normals) for s in (-1, 1)]
    beyond = half + feature.get("bank_px", 0) + 4.0  # the river's wooded banks are dark too
    outside = [_sample(intensity, points + s * beyond * normals) for s in (-1, 1)]
    sign = 1.0 if feature["polarity"] == "bright" else -1.0
    for side in (0, 1):
        contrast = sign * (centre - outside[side])
        assert np.median(contrast) > 25.0, (name, side)  # the object stands out from its surroundings
        assert np.median(np.abs(inside[side] - centre)) < 0.25 * np.median(contrast), (name, side)  # ...over its width


def _straightish_span(truth, name, span_px, max_bow_px):
    """Two centre-line points ``span_px`` apart where the line between them stays within
    ``max_bow_px`` of their chord and clear of other features (where a user would click)."""
    line = np.array(next(f for f in truth["features"] if f["name"] == name)["centerline_px"])
    clear_points, _ = _clear_samples(truth, name, every=1, clearance_px=30.0)
    clear = (np.abs(line[:, None, :] - clear_points[None]).sum(-1) == 0).any(axis=1)
    for i in range(0, len(line), 5):
        far = np.nonzero(np.hypot(*(line[i:] - line[i]).T) >= span_px)[0]
        if far.size == 0:
            break
        j = i + far[0]
        chord = (line[j] - line[i]) / np.hypot(*(line[j] - line[i]))
        bow = np.abs((line[i:j + 1] - line[i]) @ np.array([-chord[1], chord[0]]))
        if clear[i:j + 1].all() and bow.max() <= max_bow_px:
            return line[i], line[j]
    pytest.fail(f"no straight-ish span of {span_px} px on {name}")


def _distance_to_polyline(points, line):
    a, d = line[:-1], np.diff(line, axis=0)
    t = np.clip(((points[:, None] - a) * d).sum(-1) / (d * d).sum(-1), 0, 1)
    return np.hypot(*(a + t[..., None] * d - points[:, None]).transpose(2, 0, 1)).min(axis=1)


@pytest.mark.parametrize("name, span_px",
                         [("main_road", 250), ("gravel_road", 250), ("farm_track", 250), ("river", 150)])
def test_extraction_follows_each_centre_line(truth, name, span_px):
    # The scene is a usable test bed: clicks 250 px apart (150 on the meandering river), ribbon mode with
    # the object's width and polarity, give a polyline within 1.5 px of the truth.
    from core.extraction import extract

    feature = next(f for f in truth["features"] if f["name"] == name)
    line = np.array(feature["centerline_px"])
    start, end = _straightish_span(truth, name, span_px=float(span_px), max_bow_px=8.0)
    corridor_px = feature["width_px"] + 2 * feature.get("bank_px", 0)  # the river's banks are dark too
    result = extract(SCENE, start, end, backend="cpu", mode="ribbon", ribbon_width_px=float(corridor_px),
                     polarity=feature["polarity"])
    v = result.vertices_px
    dense = np.concatenate([np.linspace(p, q, 40, endpoint=False) for p, q in zip(v[:-1], v[1:])])
    middle = dense[int(0.15 * len(dense)) : int(0.85 * len(dense))]
    assert _distance_to_polyline(middle, line).mean() < 1.5
    straight = np.linspace(start, end, 200)[30:170]  # the clicks' chord is a worse answer
    assert _distance_to_polyline(straight, line).mean() > 3.0
