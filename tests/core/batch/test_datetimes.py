"""Date-and-time fields keep their UTC offsets through ``refine`` (pyogrio's datetime64 drops them)."""

from __future__ import annotations

import functools
import json
import warnings

import numpy as np
import pyogrio.raw
import pytest

from core.batch import refine_layer
from core.batch.datetimes import iso_texts, split_iso_datetimes
from core.batch.layers import read_line_layer
from core.batch.runner import dask_client
from core.batch.wkb import encode_lines
from core.io.raster import open_raster
from core.vector import read_lines
from tests.core.batch.scene import CRS, px_to_map, write_scene

THREADS = functools.partial(dask_client, workers=1, threads=True)
LINES = [[(20.0, 104.0), (90.0, 104.0), (154.0, 104.0)], [(154.0, 104.0), (154.0, 230.0)],
         [(1000.0, 1000.0), (1100.0, 1000.0)]]
SEEN = ["2024-05-01T10:20:30.500+02:00", "2023-01-02T03:04:05Z", None]


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    return write_scene(tmp_path_factory.mktemp("datetimes") / "scene.tif")


def test_iso_texts_split_into_wall_clock_times_and_gdals_time_zone_flags():
    values, flags = split_iso_datetimes(["2024-05-01T10:20:30.500+02:00", "2024-05-01T10:20:30-05:45",
                                         "2023-01-02T03:04:05Z", "2023-01-02T03:04:05", None])
    assert [str(v) for v in values] == ["2024-05-01T10:20:30.500", "2024-05-01T10:20:30.000",
                                        "2023-01-02T03:04:05.000", "2023-01-02T03:04:05.000", "NaT"]
    assert flags.tolist() == [108, 77, 100, 0, 0]  # GDAL's: 100 UTC, each step a quarter hour
    assert iso_texts(values, flags) == ["2024-05-01T10:20:30.500+02:00", "2024-05-01T10:20:30.000-05:45",
                                        "2023-01-02T03:04:05.000Z", "2023-01-02T03:04:05.000", None]
    assert split_iso_datetimes(["2023-01-02T03:04:05", None])[1] is None  # no offsets: no flags
    assert iso_texts(np.array(["2023-01-02T03:04:05", "NaT"], "datetime64[ms]")) == ["2023-01-02T03:04:05", None]
    with pytest.raises(ValueError, match="quarter hours"):
        split_iso_datetimes(["2024-05-01T10:20:30+02:07"])


def _geojson(path):
    """LINES with a DateTime property ``seen`` (GDAL detects its type), in the scene's CRS."""
    features = [{"type": "Feature", "properties": {"name": name, "seen": seen},
                 "geometry": {"type": "LineString", "coordinates": px_to_map(np.array(line)).tolist()}}
                for name, seen, line in zip("abc", SEEN, LINES)]
    crs = {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::32618"}}
    path.write_text(json.dumps({"type": "FeatureCollection", "features": features, "crs": crs}))
    return path


def _seen(path) -> dict:
    """Per feature name its ``seen`` as GDAL's ISO text, and the field's OGR type."""
    meta, _, _, values = pyogrio.raw.read(str(path), datetime_as_string=True)
    values = dict(zip(meta["fields"], values))
    types = dict(zip(meta["fields"], pyogrio.read_info(str(path))["ogr_types"]))
    return {str(n): v for n, v in zip(values["name"], values["seen"])}, types["seen"]


def test_a_layers_utc_offsets_are_read(tmp_path):
    layer = read_line_layer(_geojson(tmp_path / "roads.geojson"))
    assert [str(v) for v in layer.fields["seen"]] == ["2024-05-01T10:20:30.500", "2023-01-02T03:04:05.000", "NaT"]
    assert layer.tz_flags["seen"].tolist() == [108, 100, 0]


def _gpkg_with_offsets(path):
    """LINES with ``seen`` written by GDAL with UTC offsets (+02:00, -05:45, Z, null) into a GeoPackage, as other
    tools write them (its standard holds UTC only: GDAL warns "non-conformant content" reading them)."""
    geometry = np.array([encode_lines([px_to_map(np.array(line))]) for line in [*LINES, LINES[0]]], dtype=object)
    seen = np.array(["2024-05-01T10:20:30.500", "2024-05-01T10:20:30", "2023-01-02T03:04:05", "NaT"],
                    dtype="datetime64[ms]")
    pyogrio.raw.write(str(path), geometry, [seen, np.array(list("abcd"), object)], ["seen", "name"], crs=CRS,
                      geometry_type="LineString", driver="GPKG",
                      gdal_tz_offsets={"seen": np.array([108, 77, 100, 0], np.int16)})
    return path


def test_a_geopackage_of_another_tools_utc_offsets_is_read_with_them_and_without_gdals_warning(image, tmp_path):
    # every read (File > Import, refine) warned "Non-conformant content for record 1 in column seen, ..."
    path = _gpkg_with_offsets(tmp_path / "roads.gpkg")
    with pytest.warns(RuntimeWarning, match="Non-conformant content"):  # (the file is one that makes GDAL warn)
        pyogrio.raw.read(str(path), datetime_as_string=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # (pyogrio's category for GDAL's warnings)
        layer = read_line_layer(path)
        with open_raster(image) as raster:
            imported = {f.name: f.properties["seen"] for f in read_lines(path, raster)}
    assert [str(v) for v in layer.fields["seen"]] == ["2024-05-01T10:20:30.500", "2024-05-01T10:20:30.000",
                                                      "2023-01-02T03:04:05.000", "NaT"]
    assert layer.tz_flags["seen"].tolist() == [108, 77, 100, 0]  # the same instants: the offsets kept
    assert imported == {"a": "2024-05-01T10:20:30.500+02:00", "b": "2024-05-01T10:20:30.000-05:45",
                        "c": "2023-01-02T03:04:05.000Z", "d": None}


@pytest.mark.parametrize("suffix", [".geojson", ".fgb", ".gpkg", ".shp"])
def test_refine_keeps_a_datetimes_utc_offset(image, tmp_path, suffix):
    # they came back as 10:20:30 and 03:04:05 without an offset: 2 hours off for whoever takes them as UTC
    out = tmp_path / f"refined{suffix}"
    report = refine_layer(_geojson(tmp_path / "roads.geojson"), [image], out, client_factory=THREADS, tile_px=64)
    seen, kind = _seen(out)
    if suffix == ".gpkg":  # the same instants in UTC, as the GeoPackage standard has them, and said so
        assert kind == "OFTDateTime" and seen == {"a": "2024-05-01T08:20:30.500Z", "b": "2023-01-02T03:04:05Z",
                                                  "c": None}
        assert report.renamed_fields.in_utc == ["seen"] and "in UTC" in report.renamed_fields.describe()
    elif suffix == ".shp":  # ISO text with the offsets, and said so
        assert kind == "OFTString" and seen == {"a": SEEN[0], "b": "2023-01-02T03:04:05.000Z", "c": None}
        assert "time zones" in report.renamed_fields.describe()
    else:
        assert kind == "OFTDateTime" and seen == {"a": SEEN[0], "b": SEEN[1], "c": None}
        assert not report.renamed_fields.describe()
