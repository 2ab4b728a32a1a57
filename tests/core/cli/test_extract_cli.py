"""``linesnap extract``: GeoJSON output, options, the demo, exit codes and nothing written on errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import rasterio

from core.cli.extract import demo_inputs, extract_main
from core.engine import gpu_available
from core.extraction import ExtractionSettings, extract
from core.io.raster import open_raster
from tests.shared_data import PROJECT_ROOT

pytestmark = pytest.mark.filterwarnings("ignore::rasterio.errors.NotGeoreferencedWarning")


def run_cli(capsys, *args):
    """(exit status, stdout, stderr) of ``linesnap extract ARGS`` run in this process."""
    status = extract_main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def assert_failed_cleanly(status, out, err, *fragments):
    assert status != 0
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("linesnap: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture(scope="module")
def plain_png(tmp_path_factory):
    """A 400 x 300 crop of the sample scene around the demo road, as a plain (non-georeferenced) PNG."""
    image, _, _, _ = demo_inputs()
    with rasterio.open(image) as ds:
        crop = ds.read(window=((450, 750), (0, 400)))
    path = tmp_path_factory.mktemp("png") / "crop.png"
    with rasterio.open(path, "w", driver="PNG", width=400, height=300, count=3, dtype="uint8") as ds:
        ds.write(crop)
    return path


def distance_to_polyline(points, line):
    """(k,) distance of each point to the polyline ``line`` (n, 2)."""
    a, d = line[:-1], np.diff(line, axis=0)
    t = np.clip(((points[:, None] - a) * d).sum(-1) / (d * d).sum(-1), 0, 1)
    return np.hypot(*(a + t[..., None] * d - points[:, None]).transpose(2, 0, 1)).min(axis=1)


# --- success ----------------------------------------------------------------------------------


def test_demo_follows_the_sample_road_in_lonlat(capsys):
    status, out, err = run_cli(capsys, "--demo", "--backend", "cpu")
    assert status == 0 and err == ""
    collection = json.loads(out)
    assert collection["type"] == "FeatureCollection" and collection["linesnap:coordinates"] == "lonlat"
    assert "crs" not in collection and len(collection["features"]) == 1
    properties = collection["features"][0]["properties"]
    assert properties["backend"] == "cpu" and properties["method"] == "window"
    assert {"read", "gradient", "scoring", "dp", "backtrack", "total"} <= set(properties["timings_ms"])
    # the demo runs at the defaults (mode auto), which find the road's width (14 px) and polarity themselves
    assert properties["settings"]["mode"] == "auto" and properties["estimate"]["polarity"] == "dark"
    assert properties["estimate"]["width_px"] == pytest.approx(14.0, abs=1.0) and properties["score"] > 0
    pixels = np.array(properties["pixel_coordinates"])
    image, start, end, _ = demo_inputs()
    with open_raster(image) as raster:
        lon, lat = raster.pixel_to_lonlat(pixels[:, 0], pixels[:, 1])
    np.testing.assert_allclose(collection["features"][0]["geometry"]["coordinates"], np.column_stack([lon, lat]),
                               rtol=0, atol=1e-12)
    truth = json.loads(image.with_suffix(".json").read_text())
    road = np.array(next(f for f in truth["features"] if f["name"] == truth["demo"]["feature"])["centerline_px"])
    dense = np.concatenate([np.linspace(p, q, 40, endpoint=False) for p, q in zip(pixels[:-1], pixels[1:])])
    middle = dense[int(0.15 * len(dense)) : int(0.85 * len(dense))]
    assert distance_to_polyline(middle, road).mean() < 1.5


def test_plain_image_to_file_in_pixel_coordinates(capsys, tmp_path, plain_png):
    out_path = tmp_path / "line.geojson"
    args = [plain_png, "--start", "89.6,133.3", "--end", "334.7,219.2", "--backend", "cpu", "-o", out_path]
    status, out, err = run_cli(capsys, *args, "--name", "main road")
    assert status == 0 and out == ""
    assert err.startswith(f"linesnap: wrote {out_path}: ") and len(err.splitlines()) == 1
    collection = json.loads(out_path.read_text())
    assert collection["linesnap:coordinates"] == "pixel"
    feature = collection["features"][0]
    assert feature["geometry"]["coordinates"] == feature["properties"]["pixel_coordinates"]
    assert feature["properties"]["name"] == "main road"
    assert [p.name for p in tmp_path.iterdir()] == ["line.geojson"]  # no temporary file left


def test_options_reach_the_settings_and_match_core_extract(capsys, plain_png):
    options = ["--nodes", 6, "--points", 21, "--half-width", 10, "--max-turn", 45, "--sigma", 2.0,
               "--mode", "ribbon", "--ribbon-width", 12, "--polarity", "bright", "--ribbon-combine", "mean",
               "--no-snap-endpoints",
               "--solver", "mitm", "--backend", "cpu", "--band", 2]
    status, out, _ = run_cli(capsys, plain_png, "--start", "30,40", "--end", "250,90", *options)
    assert status == 0
    properties = json.loads(out)["features"][0]["properties"]
    expected = ExtractionSettings(nodes=6, points=21, half_width_px=10.0, max_turn_deg=45.0, sigma_px=2.0,
                                  mode="ribbon", ribbon_width_px=12.0, polarity="bright", ribbon_combine="mean",
                                  snap_endpoints=False,
                                  solver="mitm", backend="cpu", band=2)
    assert properties["settings"] == expected.to_dict() and properties["method"] == "mitm"
    reference = extract(plain_png, (30.0, 40.0), (250.0, 90.0), expected)
    np.testing.assert_array_equal(properties["pixel_coordinates"], reference.vertices_px)
    assert properties["score"] == pytest.approx(reference.score, rel=1e-12)


def test_left_out_options_take_the_extraction_defaults(capsys, plain_png):
    status, out, _ = run_cli(capsys, plain_png, "--start", "30,40", "--end", "250,90", "--backend", "cpu")
    assert status == 0
    # snapping is on by default, and the half-width it used is recorded (min(half-width, 8) px)
    defaults = dict(ExtractionSettings(backend="cpu").to_dict(), snap_half_width_px=8.0)
    assert json.loads(out)["features"][0]["properties"]["settings"] == defaults


def test_help(capsys):
    status, out, _ = run_cli(capsys, "-h")
    assert status == 0
    for option in ("--start", "--end", "--nodes", "--points", "--half-width", "--max-turn", "--sigma", "--mode",
                   "--ribbon-width", "--polarity", "--ribbon-combine", "--snap-endpoints", "--solver", "--backend",
                   "--band", "--demo", "-o"):
        assert option in out


# --- errors: one line, non-zero, nothing written ------------------------------------------------


@pytest.mark.parametrize(
    "args, status, fragments",
    [
        (["--start", "5,5", "--end", "50,50"], 2, ["required: IMAGE"]),
        (["IMG", "--start", "5", "--end", "50,50"], 2, ["--start", "X,Y"]),
        (["IMG", "--start", "a,b", "--end", "50,50"], 2, ["X,Y"]),
        (["IMG", "--start", "5,5", "--end", "50,50", "--mode", "snake"], 2, ["--mode", "invalid choice"]),
        (["IMG", "--start", "5,5", "--end", "50,50", "--nodes", "many"], 2, ["--nodes"]),
        (["IMG", "--start", "5,5", "--end", "50,50", "--sigma", "nan"], 2, ["finite"]),
        (["IMG", "--start", "5,5", "--end", "50,50", "--bogus"], 2, ["unrecognized arguments: --bogus"]),
        (["IMG", "--start", "5,5"], 2, ["required: --end"]),
        (["IMG", "--start", "-3,5", "--end", "50,50"], 1, ["start (-3, 5) lies outside the raster of 400 x 300"]),
        (["IMG", "--start", "5,5", "--end", "50,301"], 1, ["end (50, 301) lies outside"]),
        (["IMG", "--start", "5,5", "--end", "5,5"], 1, ["must differ"]),
        (["IMG", "--start", "5,5", "--end", "50,50", "--band", "4"], 1, ["band 4 is out of range"]),
    ],
)
def test_bad_command_lines(capsys, tmp_path, plain_png, args, status, fragments):
    out_path = tmp_path / "out.geojson"
    args = [plain_png if a == "IMG" else a for a in args] + ["--backend", "cpu", "-o", out_path]
    got = run_cli(capsys, *args)
    assert got[0] == status
    assert_failed_cleanly(*got, *fragments)
    assert not out_path.exists() and list(tmp_path.iterdir()) == []


def test_failure_keeps_an_earlier_output_file(capsys, tmp_path, plain_png):
    out_path = tmp_path / "out.geojson"
    out_path.write_text("earlier result")
    got = run_cli(capsys, plain_png, "--start", "5,5", "--end", "50,50", "--nodes", 2, "-o", out_path)
    assert_failed_cleanly(*got, "nodes must be an integer >= 3")
    assert out_path.read_text() == "earlier result" and len(list(tmp_path.iterdir())) == 1


def test_output_folder_must_exist(capsys, tmp_path, plain_png):
    got = run_cli(capsys, plain_png, "--start", "5,5", "--end", "50,50", "-o", tmp_path / "no" / "out.geojson")
    assert_failed_cleanly(*got, "does not exist")
    got = run_cli(capsys, plain_png, "--start", "5,5", "--end", "50,50", "-o", tmp_path)
    assert_failed_cleanly(*got, "is a folder")


def test_the_output_never_replaces_the_input_image(capsys, tmp_path, plain_png):
    image = tmp_path / "image.png"
    image.write_bytes(plain_png.read_bytes())
    (tmp_path / "link.png").symlink_to(image)
    for output in (image, tmp_path / "." / "image.png", tmp_path / "link.png"):
        got = run_cli(capsys, image, "--start", "5,5", "--end", "50,50", "-o", output)
        assert_failed_cleanly(*got, "is the input image")
    assert image.read_bytes() == plain_png.read_bytes()


@pytest.mark.parametrize("argv, message", [
    (("--max-turn", "200"), "--max-turn must be a finite number in (0, 180]; got 200.0"),
    (("--snap-half-width", "-1"), "--snap-half-width must be a finite number in (0, 1e+09]; got -1.0"),
])
def test_a_bad_setting_is_named_by_its_flag(capsys, plain_png, argv, message):
    got = run_cli(capsys, plain_png, "--start", "5,5", "--end", "50,50", *argv)
    assert_failed_cleanly(*got, message)


@pytest.mark.parametrize("name", ["out.kml", "out.csv", "out.tif"])
def test_an_output_of_no_format_written_is_refused_before_the_extraction(capsys, tmp_path, plain_png, name):
    got = run_cli(capsys, plain_png, "--start", "5,5", "--end", "50,50", "-o", tmp_path / name)
    assert_failed_cleanly(*got, "unknown format")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(gpu_available(), reason="a GPU (or the CUDA simulator) is present here")
def test_gpu_without_one(capsys, plain_png):
    got = run_cli(capsys, plain_png, "--start", "5,5", "--end", "50,50", "--backend", "gpu")
    assert_failed_cleanly(*got, "backend 'gpu' needs an NVIDIA GPU")


# --- the installed command --------------------------------------------------------------------


def test_linesnap_command_end_to_end(tmp_path):
    out_path = tmp_path / "demo.geojson"
    command = [sys.executable, "-m", "app.cli", "extract", "--demo", "--backend", "cpu", "-o", str(out_path)]
    done = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(out_path.read_text())["features"][0]["properties"]["backend"] == "cpu"
    command = [sys.executable, "-m", "app.cli", "extract", str(tmp_path / "missing.tif"), "--start", "1,1",
               "--end", "9,9"]
    done = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [f"linesnap: error: image file {tmp_path / 'missing.tif'} does not exist"]


@pytest.mark.parametrize("extension", [".gpkg", ".shp", ".fgb"])
def test_output_format_follows_the_extension_in_the_images_crs(capsys, tmp_path, extension, plain_png):
    import pyogrio

    out = tmp_path / f"demo{extension}"
    status, _, _ = run_cli(capsys, "--demo", "--backend", "cpu", "-o", out)
    assert status == 0
    info = pyogrio.read_info(out)
    assert info["crs"] == "EPSG:32633" and info["features"] == 1  # the sample scene's UTM zone
    assert {"name", "score", "confidence"} <= set(info["fields"])
    plain = tmp_path / f"plain{extension}"  # a plain image: pixels under a local CRS, never EPSG:4326
    status, _, _ = run_cli(capsys, plain_png, "--start", "20,150", "--end", "380,150", "--backend", "cpu", "-o", plain)
    assert status == 0 and pyogrio.read_info(plain)["crs"].startswith("LOCAL_CS")

