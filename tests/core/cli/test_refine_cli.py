"""``linesnap refine`` and ``linesnap extract --pairs / --crs``: round trips, a COG over HTTP, bad inputs."""

from __future__ import annotations

import functools
import http.server
import json
import threading
import warnings
from pathlib import Path

import numpy as np
import pyogrio.raw
import pytest

from core.batch.wkb import decode_lines, encode_lines
from core.cli.extract import extract_main
from core.cli.refine import refine_main
from tests.core.batch.scene import CRS, ROAD_X_PX, ROAD_Y_PX, map_to_px, px_to_map, write_lines, write_scene

LINES = [[(20.0, 104.0), (154.0, 104.0)], [(154.0, 104.0), (154.0, 230.0)]]
FAST = ["--threads", "--workers", "2", "--quiet"]


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    image = write_scene(folder / "scene.tif", tiled=True)
    lines = write_lines(folder / "lines.geojson", LINES, {"ref": np.array(["A1", "B2"], dtype=object)},
                        crs="EPSG:4326", driver="GeoJSON")
    return folder, image, lines


def run(main, capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def assert_one_error_line(status, err, *fragments):
    lines = err.strip().splitlines()
    assert status == 1 and len(lines) == 1 and lines[0].startswith("linesnap: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def _read(path):
    meta, _, geometry, fields = pyogrio.raw.read(str(path))
    return meta, [decode_lines(g) for g in geometry], dict(zip(meta["fields"], fields))


def test_refine_writes_every_line_with_its_properties_in_the_images_crs(scene, capsys):
    folder, image, lines = scene  # the lines in EPSG:4326, the image in UTM
    out = folder / "refined.fgb"
    status, _, err = run(refine_main, capsys, lines, image, "-o", out, *FAST)
    assert status == 0 and "2 refined" in err
    meta, parts, fields = _read(out)
    assert meta["crs"] == CRS and fields["ref"].tolist() == ["A1", "B2"]
    corner = map_to_px(parts[0][0][-1:])[0]
    assert np.allclose(corner, (ROAD_X_PX, ROAD_Y_PX), atol=1.0)
    assert np.array_equal(parts[0][0][-1], parts[1][0][0])


def test_a_layer_wholly_off_the_imagery_is_written_back_with_a_warning(scene, capsys):
    folder, image, _ = scene
    far = [[(x + 5000.0, y + 5000.0) for x, y in line] for line in LINES]
    lines = write_lines(folder / "far.geojson", far, {"ref": np.array(["A1", "B2"], dtype=object)},
                        crs="EPSG:4326", driver="GeoJSON")
    status, _, err = run(refine_main, capsys, lines, image, "-o", folder / "far_out.geojson", *FAST)
    assert status == 0 and "2 off_image" in err
    assert "warning: none of the 2 lines lies on the imagery" in err


def test_no_align_leaves_a_shifted_layer_where_it_was(scene, capsys):
    folder, image, _ = scene
    shifted = write_lines(folder / "shifted.gpkg", [[(20.0, 106.0), (100.0, 106.0)]],
                          {"ref": np.array(["h"], dtype=object)})
    rows = {}
    for flag in ([], ["--no-align"]):
        out = folder / f"shifted{len(flag)}.gpkg"
        status, _, _ = run(refine_main, capsys, shifted, image, "-o", out, *FAST, *flag)
        assert status == 0
        rows[bool(flag)] = np.concatenate([map_to_px(p)[:, 1] for p in _read(out)[1][0]])
    assert np.abs(rows[False] - ROAD_Y_PX).max() <= 1.5 < np.abs(rows[True] - ROAD_Y_PX).max()


class _RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Serves byte ranges (GDAL's /vsicurl/ asks for them); counts the requests and bytes sent."""

    log = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        wanted = self.headers.get("Range")
        path = Path(self.translate_path(self.path))
        if not wanted or not path.is_file():
            return super().do_GET()
        data = path.read_bytes()
        first, last = wanted.removeprefix("bytes=").split("-")
        first, last = int(first), min(int(last or len(data) - 1), len(data) - 1)
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {first}-{last}/{len(data)}")
        self.send_header("Content-Length", str(last - first + 1))
        self.end_headers()
        self.wfile.write(data[first:last + 1])
        type(self).log.append(last - first + 1)


@pytest.fixture
def http_folder(scene):
    folder = scene[0]
    handler = functools.partial(_RangeHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _RangeHandler.log.clear()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_cloud_optimized_geotiff_over_http_gives_the_local_result(scene, http_folder, tmp_path, capsys):
    import rasterio.shutil

    folder, image, lines = scene
    cog = folder / "scene_cog.tif"
    rasterio.shutil.copy(image, cog, driver="COG", blocksize=64)
    local, remote = tmp_path / "local.gpkg", tmp_path / "remote.gpkg"
    assert run(refine_main, capsys, lines, cog, "-o", local, *FAST)[0] == 0
    status, _, err = run(refine_main, capsys, lines, f"{http_folder}/scene_cog.tif", "-o", remote, *FAST)
    assert status == 0, err
    assert _RangeHandler.log, "no range request reached the server"
    assert all(a[0].tolist() == b[0].tolist() for a, b in zip(_read(local)[1], _read(remote)[1]))


def test_extract_pairs_from_csv_and_geojson_in_pixels_image_and_lonlat(scene, capsys):
    folder, image, _ = scene
    csv = folder / "pairs.csv"
    csv.write_text("name,start_x,start_y,end_x,end_y\nh,20,104,140,104\nv,154,10,154,90\n", encoding="utf-8")
    status, out, _ = run(extract_main, capsys, image, "--pairs", csv)
    features = json.loads(out)["features"]
    assert status == 0 and [f["properties"]["name"] for f in features] == ["h", "v"]
    ends = [np.array(f["properties"]["pixel_coordinates"])[[0, -1]] for f in features]
    assert np.allclose(ends[0][:, 1], ROAD_Y_PX) and np.allclose(ends[1][:, 0], ROAD_X_PX)
    mapped = px_to_map([(20, 104), (140, 104)])
    status, out, _ = run(extract_main, capsys, image, "--start", ",".join(map(str, mapped[0])),
                         "--end", ",".join(map(str, mapped[1])), "--crs", "image")
    assert status == 0
    assert np.allclose(np.array(json.loads(out)["features"][0]["properties"]["pixel_coordinates"])[[0, -1]], ends[0],
                       atol=1e-6)
    from core.batch.frames import transform_xy

    lonlat = transform_xy(mapped, CRS, "EPSG:4326")
    pairs = folder / "pairs.geojson"
    pyogrio.raw.write(str(pairs), np.array([encode_lines([lonlat])], dtype=object), [np.array(["h"], dtype=object)],
                      ["name"], crs="EPSG:4326", geometry_type="LineString", driver="GeoJSON")
    status, out, _ = run(extract_main, capsys, image, "--pairs", pairs)
    assert status == 0
    assert np.allclose(np.array(json.loads(out)["features"][0]["properties"]["pixel_coordinates"])[[0, -1]], ends[0],
                       atol=1e-4)
    # a latitude PROJ refuses for the image's UTM zone: one line, not its CPLE error's traceback
    status, out, err = run(extract_main, capsys, image, "--start", "0,95", "--end", "1,1", "--crs", "EPSG:4326")
    assert_one_error_line(status, err, "cannot convert positions from EPSG:4326 to", "Invalid latitude")


@pytest.mark.parametrize("points", [["--start", "20,104"], ["--end", "140,104"],
                                    ["--start", "20,104", "--end", "140,104"]])
def test_pairs_with_start_or_end_is_a_usage_error(scene, tmp_path, capsys, points):
    _, image, _ = scene
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("start_x,start_y,end_x,end_y\n154,10,154,90\n", encoding="utf-8")
    out = tmp_path / "out.geojson"
    status, stdout, err = run(extract_main, capsys, image, "--pairs", pairs, *points, "-o", out)
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1, err  # (the pairs silently won)
    assert lines[0].startswith("linesnap: error: argument --pairs: not allowed with argument"), lines[0]
    assert all(flag in lines[0] for flag in points if flag.startswith("--")), lines[0]
    assert stdout == "" and not out.exists()


def test_blank_rows_of_a_pairs_csv_are_skipped(scene, tmp_path, capsys):
    _, image, _ = scene
    pairs = tmp_path / "pairs.csv"
    for text, names in [("name,start_x,start_y,end_x,end_y\n\nh,20,104,140,104\n   \n,,,,\nv,154,10,154,90\n , ,\n",
                         ["h", "v"]),
                        ("\nstart, end\n20 104,140 104\n\n154 10,154 90\n,\n", ["1", "2"])]:
        pairs.write_text(text, encoding="utf-8")
        status, out, err = run(extract_main, capsys, image, "--pairs", pairs)
        assert status == 0 and err == "", err
        assert [f["properties"]["name"] for f in json.loads(out)["features"]] == names


def test_pairs_that_all_fail_write_nothing_and_keep_an_earlier_output(scene, tmp_path, capsys):
    _, image, _ = scene
    out = tmp_path / "out.geojson"
    out.write_text("kept", encoding="utf-8")
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("start_x,start_y,end_x,end_y\n100,100,100,100\n5000,1,2,2\n", encoding="utf-8")
    for output in ((), ("-o", out)):
        status, stdout, err = run(extract_main, capsys, image, "--pairs", pairs, *output)
        assert status == 1 and stdout == "" and "none of the 2 pairs could be extracted; nothing written" in err
    assert out.read_text(encoding="utf-8") == "kept"  # (it became an empty collection)


@pytest.mark.parametrize("row, reason", [("20,104,x,104", "end_x is not a number: 'x'"),
                                         ("20,104,140", "no value for end_y"),
                                         ("20, ,140,104", "no value for start_y"),
                                         ("20,nan,140,104", "start_y is not a number: 'nan'"),
                                         ("20,104,inf,104", "end_x is not a number: 'inf'")])
def test_a_malformed_pairs_row_is_named_by_its_file_and_line(scene, tmp_path, capsys, row, reason):
    _, image, _ = scene
    pairs = tmp_path / "pairs.csv"
    pairs.write_text(f"start_x,start_y,end_x,end_y\n\n154,10,154,90\n\n{row}\n", encoding="utf-8")
    out = tmp_path / "out.geojson"
    status, stdout, err = run(extract_main, capsys, image, "--pairs", pairs, "-o", out)
    assert_one_error_line(status, err, f"pairs file {pairs}, line 5: not a pair of points ({reason})")
    assert stdout == "" and not out.exists()


def test_a_shapefile_output_says_in_one_line_which_fields_it_renamed(scene, tmp_path, capsys):
    _, image, _ = scene
    lanes = np.array(["2", "4"], dtype=object)
    lines = write_lines(tmp_path / "long_names.geojson", LINES, {"ref": np.array(["A1", "B2"], dtype=object),
                        "lane_numbe": lanes, "lane_number": lanes[::-1]}, crs="EPSG:4326", driver="GeoJSON")
    out = tmp_path / "refined.shp"
    with warnings.catch_warnings(record=True) as caught:  # (GDAL's warnings come through pyogrio as these)
        warnings.simplefilter("always")
        status, _, err = run(refine_main, capsys, lines, image, "-o", out, "--threads", "--workers", "1", "--quiet")
    assert status == 0 and [str(w.message) for w in caught if "field" in str(w.message)] == []
    wrote, renamed = err.strip().splitlines()
    assert wrote.startswith(f"linesnap: wrote {out}: 2 features")
    assert renamed.startswith(f"linesnap: warning: {out}: renamed field 'lane_number' to 'lane_num_1' (a Shapefile")
    fields = _read(out)[2]
    assert list(fields)[:4] == ["ref", "lane_numbe", "lane_num_1", "status"]
    assert fields["lane_numbe"].tolist() == ["2", "4"] and fields["lane_num_1"].tolist() == ["4", "2"]


def test_input_fields_named_like_the_results_are_kept_under_another_name(scene, tmp_path, capsys):
    _, image, _ = scene
    lines = write_lines(tmp_path / "planned.geojson", LINES, {"status": np.array(["planned", "built"], dtype=object),
                        "Confidence": np.array(["high", "low"], dtype=object)}, crs="EPSG:4326", driver="GeoJSON")
    out = tmp_path / "refined.gpkg"
    status, _, err = run(refine_main, capsys, lines, image, "-o", out, "--threads", "--workers", "1", "--quiet")
    assert status == 0
    kept = err.strip().splitlines()[1]
    assert kept == (f"linesnap: warning: {out}: kept the input's 'status' as 'input_status', 'Confidence' as "
                    "'input_Confidence' (refine writes its results under those names)")
    fields = _read(out)[2]
    assert fields["input_status"].tolist() == ["planned", "built"]
    assert fields["input_Confidence"].tolist() == ["high", "low"]
    assert set(fields["status"]) <= {"refined", "partial"} and fields["confidence"].dtype.kind == "f"


def test_a_layer_without_a_crs_is_taken_in_the_images_crs(scene, tmp_path, capsys):
    # as File > Import Lines takes it (the command refused it: "cannot relate coordinates ...")
    _, image, _ = scene
    lines = tmp_path / "no_crs.gpkg"
    geometry = np.array([encode_lines([px_to_map(line)]) for line in LINES], dtype=object)
    pyogrio.raw.write(str(lines), geometry, [np.array(["A1", "B2"], dtype=object)], ["ref"], crs=None,
                      geometry_type="LineString", driver="GPKG")
    out = tmp_path / "refined.gpkg"
    status, _, err = run(refine_main, capsys, lines, image, "-o", out, *FAST)
    assert status == 0 and "2 refined" in err
    assert f"linesnap: warning: {lines} has no CRS: its coordinates were taken as in the image's CRS" in err
    meta, parts, _ = _read(out)
    assert meta["crs"] is None
    assert np.allclose(map_to_px(parts[0][0][-1:])[0], (ROAD_X_PX, ROAD_Y_PX), atol=1.0)
    # as GeoJSON: in WGS84 (it held empty geometries: GDAL clipped the UTM metres to longitudes and latitudes)
    out = tmp_path / "refined.geojson"
    status, _, err = run(refine_main, capsys, lines, image, "-o", out, *FAST)
    meta, parts, _ = _read(out)
    assert status == 0 and "2 refined" in err and meta["crs"] in ("EPSG:4326", "OGC:CRS84")
    from core.batch.frames import transform_xy

    corner = map_to_px(transform_xy(parts[0][0][-1:], "EPSG:4326", CRS))[0]
    assert np.allclose(corner, (ROAD_X_PX, ROAD_Y_PX), atol=1.0)


def _plain_image(tmp_path):
    """A plain image (no CRS, no georeferencing) of a bright road along y = 120 (past latitude 90)."""
    import rasterio

    image = tmp_path / "plain.tif"
    data = np.full((160, 200), 40, np.uint8)
    data[118:123, :] = 220
    with rasterio.open(image, "w", driver="GTiff", width=200, height=160, count=1, dtype="uint8") as dst:
        dst.write(data, 1)
    return image


def test_linesnaps_own_lines_of_a_plain_image_are_refined_and_read_as_pairs(tmp_path, capsys):
    # they are in its local pixel CRS: refine said "cannot relate coordinates with a CRS to coordinates without
    # one", --pairs "--crs LOCAL_CS[...] needs a georeferenced image"
    from core.io.raster import open_raster
    from core.vector import ExportLine, read_lines
    from core.vector import write_lines as export_lines

    image = _plain_image(tmp_path)
    lines = tmp_path / "exported.gpkg"
    with open_raster(str(image)) as raster:
        export_lines(lines, [ExportLine(np.array([[20.0, 124.0], [180.0, 124.0]]), {"name": "a"})], raster)
    for suffix in (".gpkg", ".geojson"):
        out = tmp_path / f"refined{suffix}"
        status, _, err = run(refine_main, capsys, lines, image, "-o", out, *FAST)
        assert status == 0 and "1 refined" in err, err
        with open_raster(str(image)) as raster:  # read back as pixels (a GeoJSON says so in its members)
            (line,) = read_lines(out, raster)
        assert np.abs(line.vertices_px[:, 1] - 120.0).max() < 1.5 and line.vertices_px[0, 0] == pytest.approx(20)
    status, _, err = run(extract_main, capsys, image, "--pairs", tmp_path / "refined.geojson", "-o",
                         tmp_path / "again.gpkg")
    assert status == 0 and "1 of 1 pairs" in err, err


def test_a_plain_images_lines_without_a_crs_come_back_as_pixels_in_geojson(tmp_path, capsys):
    image = _plain_image(tmp_path)
    lines = tmp_path / "plain.gpkg"
    pyogrio.raw.write(str(lines), np.array([encode_lines([np.array([[20.0, 124.0], [180.0, 124.0]])])], object),
                      [np.array(["a"], object)], ["ref"], crs=None, geometry_type="LineString", driver="GPKG")
    out = tmp_path / "plain.geojson"
    capsys.readouterr()  # (the setup's own warnings, where pytest's warning capture is off)
    status, _, err = run(refine_main, capsys, lines, image, "-o", out, *FAST)
    assert status == 0 and "1 refined" in err and "Warning" not in err, err
    _, parts, _ = _read(out)
    assert parts[0][0].shape[0] >= 2 and np.abs(parts[0][0][:, 1] - 120.0).max() < 1.5  # (it was empty)


def test_a_layer_with_z_values_says_the_refined_lines_have_none(scene, tmp_path, capsys):
    import struct

    _, image, _ = scene

    def line_z(points):  # ISO WKB LineString Z
        xyz = [(x, y, 100.0) for x, y in px_to_map(points)]
        return struct.pack("<BII", 1, 1002, len(xyz)) + np.array(xyz, "<f8").tobytes()

    lines = tmp_path / "heights.gpkg"
    pyogrio.raw.write(str(lines), np.array([line_z(line) for line in LINES], dtype=object),
                      [np.array(["A1", "B2"], dtype=object)], ["ref"], crs=CRS, geometry_type="LineString Z",
                      driver="GPKG")
    out = tmp_path / "refined.gpkg"
    status, _, err = run(refine_main, capsys, lines, image, "-o", out, *FAST)
    assert status == 0 and "2 refined" in err
    assert f"linesnap: warning: {out}: the refined lines have no Z values ({lines} has them" in err


def _write_layer(path, wkbs, geometry_type):
    pyogrio.raw.write(str(path), np.array(wkbs, dtype=object), [np.arange(len(wkbs))], ["id"], crs=CRS,
                      geometry_type=geometry_type, driver="GPKG")
    return path


def test_bad_inputs_end_in_one_clear_line_and_write_nothing(scene, tmp_path, capsys):
    import struct

    _, image, lines = scene
    out = tmp_path / "out.gpkg"
    empty = _write_layer(tmp_path / "empty.gpkg", [], "LineString")
    square = struct.pack("<BIII", 1, 3, 1, 5) + np.array([0, 0, 1, 0, 1, 1, 0, 1, 0, 0], "<f8").tobytes()
    polygons = _write_layer(tmp_path / "polygons.gpkg", [square], "Polygon")
    cases = [
        ((refine_main, empty, image, "-o", out), ("holds no features",)),
        ((refine_main, polygons, image, "-o", out), ("no LineString or MultiLineString", "Polygon")),
        ((refine_main, lines, tmp_path / "missing.tif", "-o", out), ("missing.tif", "does not exist")),
        ((refine_main, lines, image, "-o", tmp_path / "out.xyz"), ("unknown format", ".xyz")),
        ((refine_main, lines, image, "-o", lines), ("is the input layer",)),
        ((extract_main, image, "--start", "1,2", "--end", "30,4", "--crs", "EPSG:99999"), ("unknown CRS",)),
        ((extract_main, image, "--pairs", tmp_path / "none.csv"), ("none.csv", "does not exist")),
    ]
    for (main, *args), fragments in cases:
        status, stdout, err = run(main, capsys, *args, *(FAST if main is refine_main else ()))
        assert_one_error_line(status, err, *fragments)
        assert stdout == "" and not out.exists()
    status, _, err = run(refine_main, capsys, lines, image, "-o", out, *FAST, "--max-piece", "5")
    assert status == 2 and err.count("\n") == 1 and "--max-piece" in err and "above 8" in err  # (a usage error)
    from core.engine import gpu_available

    if not gpu_available():  # refused before a cluster starts (its workers each printed the refusal)
        status, stdout, err = run(refine_main, capsys, lines, image, "-o", out, *FAST, "--backend", "gpu")
        assert_one_error_line(status, err, "backend 'gpu' needs an NVIDIA GPU")
        assert not out.exists()


def test_a_plain_image_is_one_error_line_without_rasterios_warning(scene, tmp_path, capsys):
    import rasterio

    _, _, lines = scene
    plain = tmp_path / "plain.png"
    # Writing the image without a geotransform warns too; that warning is this test's own, and without
    # pytest's warnings plugin (-p no:warnings) it would be printed into the captured stderr.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rasterio.errors.NotGeoreferencedWarning)
        with rasterio.open(plain, "w", driver="PNG", width=64, height=64, count=1, dtype="uint8") as ds:
            ds.write(np.zeros((64, 64), np.uint8), 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status, _, err = run(refine_main, capsys, lines, plain, "-o", tmp_path / "out.gpkg", *FAST)
    assert_one_error_line(status, err, "cannot place the lines on", "the image has none")
    assert [w for w in caught if "georeference" in str(w.message).lower() or "geotransform" in str(w.message)] == []
