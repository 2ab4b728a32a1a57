"""What reading a layer into lines left out or changed: counted per feature, in both readers, and said."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.io.line_report import LinesRead
from core.vector import read_lines


def _features():
    """A mixed layer: 2 lines (one with heights), a 3-part multi-line, 2 points, a polygon, a null geometry."""
    line = [[10.0, 10.0], [20.0, 15.0], [30.0, 12.0]]
    return [
        {"type": "Feature", "properties": {"name": "a"}, "geometry": {"type": "LineString", "coordinates": line}},
        {"type": "Feature", "properties": {"name": "z"},
         "geometry": {"type": "LineString", "coordinates": [p + [5.0] for p in line]}},
        {"type": "Feature", "properties": {"name": "m"},
         "geometry": {"type": "MultiLineString", "coordinates": [line, [[40, 40], [50, 50]], [[60, 5], [70, 9]]]}},
        {"type": "Feature", "properties": {}, "geometry": {"type": "Point", "coordinates": [1.0, 2.0]}},
        {"type": "Feature", "properties": {}, "geometry": {"type": "Point", "coordinates": [3.0, 4.0]}},
        {"type": "Feature", "properties": {},
         "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [5, 0], [5, 5], [0, 0]]]}},
        {"type": "Feature", "properties": {}, "geometry": None},
    ]


PIXEL_CRS = {"type": "name", "properties": {"name": None}}


@pytest.mark.parametrize("reader", ["rfc7946", "gdal"])
def test_every_feature_is_counted_and_what_was_left_out_is_said(tmp_path, reader):
    from core.io.geojson import PIXEL_CRS_WKT

    document = {"type": "FeatureCollection", "features": _features()}
    if reader == "gdal":  # a legacy crs member: read through GDAL (pyogrio) as other formats are
        document["crs"] = {"type": "name", "properties": {"name": "EPSG:32633"}}
    else:
        document["crs"] = {"type": "name", "properties": {"name": PIXEL_CRS_WKT}}
    path = tmp_path / "mixed.geojson"
    path.write_text(json.dumps(document))
    report = LinesRead()
    raster = _utm_raster(tmp_path) if reader == "gdal" else None
    lines = read_lines(path, raster, report)
    assert len(lines) == 2 + 3
    assert report.features == 7 and report.split == 1 and report.parts == 3 and report.heights
    assert report.left_out == {"Point": 2, "Polygon": 1, None: 1}
    assert report.text() == ("2 points, 1 feature without a geometry and 1 polygon left out (not lines); "
                             "1 multi-part line read as 3 lines, one per part; heights (Z) not kept")


def _utm_raster(tmp_path):
    import rasterio
    from rasterio.transform import Affine

    from core.io.raster import open_raster

    path = tmp_path / "utm.tif"
    with rasterio.open(path, "w", driver="GTiff", width=100, height=100, count=1, dtype="uint8", crs="EPSG:32633",
                       transform=Affine(1.0, 0, 0.0, 0, -1.0, 100.0)) as ds:
        ds.write(np.zeros((1, 100, 100), np.uint8))
    return open_raster(path)


def test_a_file_of_plain_lines_says_nothing():
    report = LinesRead()
    report.feature("LineString", 1)
    report.feature("MultiLineString", 1)
    assert report.text() == "" and report.features == 2


def test_empty_lines_and_other_kinds_are_named():
    report = LinesRead()
    for kind in ("LineString", "MultiPolygon", "MultiPolygon", "CircularString", "empty LineString"):
        report.feature(kind, 0)
    assert report.text() == "2 empty lines, 2 multipolygons and 1 CircularString feature left out (not lines)"


def test_the_split_features_ids_go_to_a_name_the_layer_does_not_use_ignoring_case():
    from core.io.line_report import source_fid_name

    assert source_fid_name(["name", "fid"]) == "source_fid"
    assert source_fid_name(["name", "Source_FID"]) == "source_fid_2"  # (GeoPackage field names ignore case)
    assert source_fid_name(["source_fid", "SOURCE_FID_2", "source_fid_4"]) == "source_fid_3"
