"""A small generated corpus of corrupt and odd rasters: each case ends in a clear error or a valid result.

Cut and bit-flipped GeoTIFFs (seeded), odd transforms and dtypes, VRTs that
reference themselves, float64 data beyond float32's range, a geographic
raster whose columns pass longitude 180.  GDAL's own messages must never
reach stderr raw.
"""

from __future__ import annotations

import numpy as np
import pytest
import rasterio
from rasterio.transform import Affine

from core.cli.extract import extract_main
from core.extraction import extract
from core.io.geojson import feature_from_result, read_geojson, write_geojson
from core.io.raster import RasterError, open_raster, wrap_longitude

pytestmark = pytest.mark.filterwarnings("ignore::rasterio.errors.NotGeoreferencedWarning")

SIZE = 96
CLICKS = ((10.0, 12.0), (80.0, 70.0))
FAST = dict(nodes=5, points=9, mode="edge", sigma_px=1.5, backend="cpu")


def _write(path, data, transform=Affine(0.5, 0, 455000, 0, -0.5, 5300000), crs="EPSG:32633", **profile):
    options = dict(driver="GTiff", width=data.shape[2], height=data.shape[1], count=data.shape[0], dtype=data.dtype,
                   crs=crs, transform=transform, tiled=True, blockxsize=32, blockysize=32, compress="deflate")
    with rasterio.open(path, "w", **{**options, **profile}) as ds:
        ds.write(data)
    return path


def _road(dtype=np.uint8, scale=1.0, bands=3):
    rng = np.random.default_rng(0)
    image = rng.normal(60, 10, (bands, SIZE, SIZE))
    rows, cols = np.mgrid[:SIZE, :SIZE]
    image[:, np.abs(rows - 12 - (cols - 10) * 58 / 70) < 3] = 200
    return (np.clip(image, 1, 254) * scale).astype(dtype)


def _corpus(folder):
    """(name, path) of the corrupt files, made from one good GeoTIFF with a fixed seed."""
    good = _write(folder / "good.tif", _road())
    raw = good.read_bytes()
    rng = np.random.default_rng(16)
    cases = []
    for k, keep in enumerate((0.02, 0.3, 0.7, 0.97)):
        cases.append((f"cut{k}", raw[: int(len(raw) * keep)]))
    for k in range(8):
        flipped = bytearray(raw)
        region = 512 if k < 5 else len(raw)  # the header and directory, then anywhere
        for at in rng.integers(0, region, 3 if k < 5 else 40):
            flipped[at] ^= int(rng.integers(1, 256))
        cases.append((f"flip{k}", bytes(flipped)))
    paths = []
    for name, data in cases:
        path = folder / f"{name}.tif"
        path.write_bytes(data)
        paths.append((name, path))
    return paths


def test_corrupt_geotiffs_end_in_a_raster_error_or_a_result_and_gdal_stays_off_stderr(tmp_path, capfd):
    outcomes = {}
    for name, path in _corpus(tmp_path):
        try:
            result = extract(path, *CLICKS, **FAST)
        except RasterError as err:
            assert "\n" not in str(err) and str(path) in str(err)
            outcomes[name] = "error"
        else:
            assert np.isfinite(result.vertices_px).all() and result.vertices_px.shape == (5, 2)
            outcomes[name] = "result"
        status = extract_main([str(path), "--start", "10,12", "--end", "80,70", "--nodes", "5", "--points", "9",
                               "--mode", "edge", "--backend", "cpu", "-o", str(tmp_path / "out.geojson")])
        out, err = capfd.readouterr()
        assert status == (1 if outcomes[name] == "error" else 0), (name, err)
        lines = err.splitlines()
        assert all(line.startswith("linesnap: ") for line in lines), (name, err)
        assert len(lines) == 1, (name, err)
    assert "error" in outcomes.values()  # the corpus does hold files GDAL cannot read


def test_a_zero_pixel_size_is_refused_by_name(tmp_path):
    _write(tmp_path / "plain.tif", _road(bands=1), crs=None, transform=Affine.identity())
    vrt = tmp_path / "zero.vrt"
    vrt.write_text(f"""<VRTDataset rasterXSize="{SIZE}" rasterYSize="{SIZE}"><SRS>EPSG:4326</SRS>
<GeoTransform>10, 0, 0, 50, 0, -0.1</GeoTransform><VRTRasterBand dataType="Byte" band="1"><SimpleSource>
<SourceFilename relativeToVRT="1">plain.tif</SourceFilename><SourceBand>1</SourceBand></SimpleSource>
</VRTRasterBand></VRTDataset>""")
    with pytest.raises(RasterError, match="zero pixel size"):
        open_raster(vrt)


@pytest.mark.parametrize("pixel_m, refused", [(1e-12, True), (1e-3, False)])
def test_pixels_too_small_for_their_coordinates_are_refused(tmp_path, pixel_m, refused):
    # 1e-12 m at northing 5,000,000: every vertex of a line was exported as one point
    _write(tmp_path / "plain.tif", _road(bands=1), crs=None, transform=Affine.identity())
    vrt = tmp_path / "tiny.vrt"
    vrt.write_text(f"""<VRTDataset rasterXSize="{SIZE}" rasterYSize="{SIZE}"><SRS>EPSG:32633</SRS>
<GeoTransform>500000, {pixel_m}, 0, 5000000, 0, -{pixel_m}</GeoTransform><VRTRasterBand dataType="Byte" band="1">
<SimpleSource><SourceFilename relativeToVRT="1">plain.tif</SourceFilename><SourceBand>1</SourceBand></SimpleSource>
</VRTRasterBand></VRTDataset>""")
    if refused:
        with pytest.raises(RasterError, match="tiny.vrt has pixels 1e-12 map units wide .* too small"):
            open_raster(vrt)
    else:
        with open_raster(vrt) as raster:
            assert raster.georeferenced


def _vrt(path, source):
    path.write_text(f"""<VRTDataset rasterXSize="{SIZE}" rasterYSize="{SIZE}"><VRTRasterBand dataType="Byte" band="1">
<SimpleSource><SourceFilename relativeToVRT="1">{source}</SourceFilename><SourceBand>1</SourceBand></SimpleSource>
</VRTRasterBand></VRTDataset>""")
    return path


def test_vrts_that_reference_themselves_are_refused(tmp_path):
    with pytest.raises(RasterError, match=r"references itself \(self.vrt -> self.vrt\)"):
        open_raster(_vrt(tmp_path / "self.vrt", "self.vrt"))
    _vrt(tmp_path / "a.vrt", "b.vrt")
    _vrt(tmp_path / "b.vrt", "a.vrt")
    with pytest.raises(RasterError, match=r"a.vrt -> b.vrt -> a.vrt"):
        open_raster(tmp_path / "a.vrt")
    _write(tmp_path / "plain.tif", _road(bands=1), crs=None, transform=Affine.identity())
    with open_raster(_vrt(tmp_path / "fine.vrt", "plain.tif")) as raster:  # an ordinary VRT still opens
        assert raster.width == SIZE


def test_a_very_long_file_name_is_a_raster_error():
    with pytest.raises(RasterError, match="5004 characters"):
        open_raster("x" * 5000 + ".tif")


@pytest.mark.parametrize("source", ["file", "array"])
def test_float64_beyond_float32_is_rescaled_not_lost(tmp_path, source):
    road = _road(np.float64, bands=1)
    huge = road * 1e300
    image = _write(tmp_path / "huge.tif", huge) if source == "file" else huge[0]
    plain = _write(tmp_path / "plain.tif", road) if source == "file" else road[0]
    with open_raster(image) as raster:
        window = raster.read_window(0, 0, SIZE, SIZE)
    assert np.isfinite(window).all()
    with open_raster(plain) as raster:
        reference = raster.read_window(0, 0, SIZE, SIZE)
    ratio = window / reference  # one power of two everywhere: relative values kept
    assert np.allclose(ratio, ratio.flat[0], rtol=1e-6)
    assert np.allclose(extract(image, *CLICKS, **FAST).vertices_px, extract(plain, *CLICKS, **FAST).vertices_px)


def test_wrap_longitude():
    lons = np.array([-540.0, -180.0, -179.5, 0.0, 179.5, 180.0, 186.0, 386.0, 540.0])
    assert wrap_longitude(lons).tolist() == [-180.0, -180.0, -179.5, 0.0, 179.5, 180.0, -174.0, 26.0, 180.0]


def test_a_line_across_the_antimeridian_writes_valid_longitudes_and_reads_back(tmp_path):
    # columns from longitude 175 to 184.6 (0.1 degree pixels): the line crosses 180 at x = 50
    path = _write(tmp_path / "pacific.tif", _road(bands=1), transform=Affine(0.1, 0, 175.0, 0, -0.1, -10.0),
                  crs="EPSG:4326")
    with open_raster(path) as raster:
        result = extract(raster, *CLICKS, **FAST)
        out = tmp_path / "line.geojson"
        write_geojson(out, [feature_from_result(result, "across")], raster)
        document = __import__("json").loads(out.read_text())
        geometry = document["features"][0]["geometry"]
        assert geometry["type"] == "MultiLineString" and len(geometry["coordinates"]) == 2
        lons = [p[0] for part in geometry["coordinates"] for p in part]
        assert all(-180 <= lon <= 180 for lon in lons)
        assert geometry["coordinates"][0][-1][0] == 180.0 and geometry["coordinates"][1][0][0] == -180.0
        (line,) = read_geojson(out, raster)
        np.testing.assert_array_equal(line.vertices_px, result.vertices_px)
        # another program's file with the wrapped longitudes lands on the same pixels
        assert np.abs(np.array(raster.lonlat_to_pixel(*np.array(lons[:2]).reshape(2, 1)))).max() < 1e6


def test_file_export_lines_cuts_at_the_antimeridian_and_import_joins_the_parts(tmp_path):
    # File > Export Lines wrote [[179.95, ...], [-179.95, ...]]: a line round the world the other way; and a line
    # cut so (the export now, other tools too) came back as two
    from core.io.antimeridian import cut_at_antimeridian
    from core.vector import ExportLine, read_lines
    from core.vector.export import geojson_text

    path = _write(tmp_path / "pacific.tif", _road(bands=1), transform=Affine(0.1, 0, 175.0, 0, -0.1, -10.0),
                  crs="EPSG:4326")
    with open_raster(path) as raster:
        line = np.array([[20.0, 30.0], [50.0, 31.0], [80.0, 30.0]])  # the middle vertex on 180 exactly
        text = geojson_text([ExportLine(line, {"name": "across"})], raster)
        geometry = __import__("json").loads(text)["features"][0]["geometry"]
        assert geometry["type"] == "MultiLineString"
        first, second = geometry["coordinates"]
        assert first[-1][0] == 180.0 and second[0][0] == -180.0  # (the vertex on 180, then the cut: a repeat)
        out = tmp_path / "lines.geojson"
        out.write_text(text)
        (back,) = read_lines(out, raster)
        assert back.name == "across" and np.abs(back.vertices_px - line).max() < 1e-3
    assert len(cut_at_antimeridian(np.array([[10.0, 1.0], [12.0, 2.0]]))) == 1  # a line that does not cross
