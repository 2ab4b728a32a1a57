"""bench_quality on imagery of one's own (``add_tile``, ``--add-tile``): a raster and its centre lines in any
vector format and CRS give the same cases as the built-in tile they copy."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.benchmarks import bench_quality as bq
from tests.shared_data import shared_file


@pytest.fixture
def added():
    """Names a test adds to bq.TILES (module state other tests share), removed after it."""
    names = []
    yield names
    for name in names:
        bq.TILES.pop(name, None)
        bq.true_lines.cache_clear()
        bq.build_cases.cache_clear()


def _write_utm_geopackage(geojson, path):
    """The lines of a lon/lat GeoJSON as a GeoPackage in UTM zone 11N (metres), ``lane_number`` kept."""
    from pyogrio.raw import write
    from rasterio.warp import transform_geom

    from core.batch.wkb import encode_lines

    features = json.loads(geojson.read_text())["features"]
    geometry = np.array([encode_lines([np.asarray(transform_geom("EPSG:4326", "EPSG:32611", f["geometry"])
                                                  ["coordinates"])]) for f in features], dtype=object)
    lanes = np.array([int(f["properties"]["lane_number"]) for f in features], dtype=np.int64)
    write(str(path), geometry, [lanes], ["lane_number"], driver="GPKG", geometry_type="LineString",
          crs="EPSG:32611")


def test_a_tile_added_from_a_reprojected_geopackage_gives_the_builtin_tiles_cases(tmp_path, added):
    image, truth = shared_file("vegas_pan_0.3m.tif"), shared_file("vegas_roads.geojson")
    lines = tmp_path / "vegas_utm.gpkg"
    _write_utm_geopackage(truth, lines)
    bq.add_tile("vegas_utm", image, lines)
    added.append("vegas_utm")
    ours, builtin = bq.build_cases("vegas_utm"), bq.build_cases("vegas")
    assert len(ours) == len(builtin) > 20
    assert [c.lane_number for c in ours] == [c.lane_number for c in builtin]
    for a, b in zip(ours, builtin):  # the same clicks and true lines to within the reprojection's rounding
        np.testing.assert_allclose(np.stack([a.start, a.end]), np.stack([b.start, b.end]), atol=1e-3)
        np.testing.assert_allclose(a.line, b.line, atol=1e-3)
    records = bq.evaluate(bq.straight, "vegas_utm")
    assert [r.case.tile for r in records] == ["vegas_utm"] * len(ours)
    np.testing.assert_allclose([r.error_px for r in records], [c.straight_error_px for c in builtin], atol=1e-3)


def test_adding_a_tile_refuses_a_taken_name_and_missing_files(tmp_path):
    image = shared_file("vegas_pan_0.3m.tif")
    with pytest.raises(ValueError, match="taken"):
        bq.add_tile("vegas", image, image)
    with pytest.raises(ValueError, match="lines .* is not a file"):
        bq.add_tile("mine", image, tmp_path / "absent.gpkg")
    assert "mine" not in bq.TILES


def test_the_command_line_runs_an_added_tile(tmp_path, added, capsys):
    image, truth = shared_file("vegas_pan_0.3m.tif"), shared_file("vegas_roads.geojson")
    added.append("mine")
    status = bq.main(["--add-tile", "mine", str(image), str(truth), "--tiles", "mine", "--no-write", "--no-opencv",
                      "--no-loto"])
    assert status == 0
    out = capsys.readouterr().out
    assert "| mine | defaults |" in out and "| mine | straight segment |" in out


def test_a_registered_tile_moves_the_lines_and_places_its_clicks_about_them(added):
    shared_file("vegas_pan_0.3m.tif")
    name = bq.registered_tile("vegas", (-2.5, 1.5))
    added.append(name)
    moved, builtin = bq.true_lines(name), bq.true_lines("vegas")
    for a, b in zip(moved, builtin):
        np.testing.assert_allclose(a.points, b.points + [-2.5, 1.5])
    ours, theirs = bq.build_cases(name), bq.build_cases("vegas")
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):  # the same offsets across the moved lines: the whole case moves
        np.testing.assert_allclose(a.start, b.start + [-2.5, 1.5], atol=1e-9)
        assert a.straight_error_px == pytest.approx(b.straight_error_px, abs=1e-9)
