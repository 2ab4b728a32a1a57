"""core.batch.layers: field names and values each format holds, without GDAL's raw warnings; safe writes."""

from __future__ import annotations

import errno
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pyogrio.raw
import pytest

from core.batch.layers import check_writable, driver_for, read_line_layer, shapefile_field_names, write_line_layer
from core.batch.wkb import encode_lines

LINE = [[np.array([[0.0, 0.0], [1.0, 1.0]])]]
#: Field names and the names a Shapefile holds them under: 10 bytes at most, unique ignoring ASCII case,
#: ``:`` as ``_``, no trailing space; the 8-byte start and ``_1`` for a name taken (GDAL's rules).
NAMES = {"lane_numbe": "lane_numbe", "lane_number": "lane_num_1", "Name": "Name", "NAME": "NAME_1",
         "a:b": "a_b", "x ": "x", "status": "status", "ééééé1": "ééééé", "éééééé": "éééé_1",
         "abcdefgé_xx": "abcdefgé_", "abcdefgé_xy": "abcdefg_1"}  # (GDAL: b"abcdefg\xc3_1", unreadable)


def test_a_shapefile_gets_gdals_field_names_without_its_warnings(tmp_path):
    path = tmp_path / "out.shp"
    fields = {name: np.array([k]) for k, name in enumerate(NAMES)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        renamed = write_line_layer(path, LINE, fields, "EPSG:4326")
    assert [str(w.message) for w in caught] == []
    meta, _, _, values = pyogrio.raw.read(str(path))
    assert list(meta["fields"]) == list(NAMES.values())
    assert [int(v[0]) for v in values] == list(range(len(NAMES)))
    assert renamed == {name: written for name, written in NAMES.items() if name != written}
    assert write_line_layer(tmp_path / "out.fgb", LINE, fields, "EPSG:4326") == {}  # (other formats: as they are)
    assert list(pyogrio.raw.read(str(tmp_path / "out.fgb"))[0]["fields"]) == list(NAMES)


def test_a_hundred_names_alike_fit_and_the_next_is_refused():
    names = [f"long_name_{k:03d}" for k in range(101)]
    written = shapefile_field_names(names[:100])
    assert written[:3] == ["long_name_", "long_nam_1", "long_nam_2"] and written[-1] == "long_nam99"
    assert len({name.upper() for name in written}) == 100
    with pytest.raises(OSError, match="too many fields named like 'long_name_100' once cut to 10 characters"):
        shapefile_field_names(names, "roads.shp")


def test_a_name_that_fits_keeps_it_and_a_cut_name_avoids_every_name_taken(tmp_path):
    # 'lane_number' cut to 10 bytes is the next field's exact name: it must not take it (values were swapped)
    for order in (("lane_number", "lane_numbe"), ("lane_numbe", "lane_number")):
        fields = {name: np.array(["LN" if name == "lane_number" else "SHORT"], dtype=object) for name in order}
        renamed = write_line_layer(tmp_path / "lanes.shp", LINE, fields, "EPSG:4326")
        assert dict(renamed) == {"lane_number": "lane_num_1"}
        assert read_line_layer(tmp_path / "lanes.shp").fields == {"lane_numbe": ["SHORT"], "lane_num_1": ["LN"]}
    assert shapefile_field_names(["long_name_1", "long_name_", "long_nam_1"]) == ["long_nam_2", "long_name_",
                                                                                  "long_nam_1"]


def test_a_geopackage_keeps_its_other_layers_and_replaces_the_layer_of_its_name(tmp_path):
    path = tmp_path / "multi.gpkg"
    buildings = np.array([encode_lines([np.array([[5.0, 5.0], [6.0, 6.0]])])] * 3, dtype=object)
    pyogrio.raw.write(str(path), buildings, [np.array([1, 2, 3])], ["height"], layer="buildings", driver="GPKG",
                      crs="EPSG:4326", geometry_type="LineString")
    write_line_layer(path, LINE * 2, {"kind": np.array(["old", "old"], dtype=object)}, "EPSG:4326")
    write_line_layer(path, LINE, {"ref": np.array(["new"], dtype=object)}, "EPSG:4326")  # replaces 'multi' only
    assert sorted(pyogrio.list_layers(path)[:, 0]) == ["buildings", "multi"]
    meta, _, _, values = pyogrio.raw.read(str(path), layer="buildings")
    assert list(meta["fields"]) == ["height"] and list(values[0]) == [1, 2, 3]
    layer = read_line_layer(path)  # the layer named like the file, not GDAL's first
    assert len(layer) == 1 and list(layer.fields) == ["ref"] and list(layer.fields["ref"]) == ["new"]
    assert [p.name for p in tmp_path.iterdir()] == ["multi.gpkg"]


def test_a_failed_write_leaves_the_geopackage_as_it_was(tmp_path, monkeypatch):
    path = tmp_path / "multi.gpkg"
    write_line_layer(path, LINE, {"ref": np.array(["kept"], dtype=object)}, "EPSG:4326")
    before = path.read_bytes()

    def fail(*args, **kwargs):
        raise RuntimeError("disk I/O error")

    monkeypatch.setattr(pyogrio.raw, "write", fail)
    with pytest.raises(OSError, match=f"cannot write {path}: disk I/O error"):
        write_line_layer(path, LINE, {"ref": np.array(["lost"], dtype=object)}, "EPSG:4326")
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["multi.gpkg"]


def test_geopackage_names_alike_ignoring_case_and_fid_or_geom_get_a_suffix_and_keep_their_values(tmp_path):
    fields = {"name": np.array(["a", "b"], dtype=object), "NAME": np.array(["A", "B"], dtype=object),
              "fid": np.array([7, 7]), "FID_1": np.array(["x", "y"], dtype=object),
              "Geom": np.array([1.5, 2.5])}
    changes = write_line_layer(tmp_path / "names.gpkg", LINE * 2, fields, "EPSG:4326")
    assert dict(changes) == {"NAME": "NAME_1", "fid": "fid_2", "Geom": "Geom_1"}
    assert changes.describe().startswith("renamed fields 'NAME' to 'NAME_1', 'fid' to 'fid_2', 'Geom' to 'Geom_1' "
                                         "(a GeoPackage's field names differ ignoring case")
    back = read_line_layer(tmp_path / "names.gpkg").fields
    assert {name: list(values) for name, values in back.items()} == {
        "name": ["a", "b"], "NAME_1": ["A", "B"], "fid_2": [7, 7], "FID_1": ["x", "y"], "Geom_1": [1.5, 2.5]}
    unique = write_line_layer(tmp_path / "ids.gpkg", LINE * 2, {"fid": np.array([10, 20])}, "EPSG:4326")
    assert dict(unique) == {"fid": "fid_1"}  # (not the GeoPackage's own id, which a reader drops)
    assert list(read_line_layer(tmp_path / "ids.gpkg").fields["fid_1"]) == [10, 20]


@pytest.mark.parametrize("extension", [".SHP", ".GPKG", ".FGB", ".GEOJSON", ".Gpkg"])
def test_an_upper_case_extension_is_written_under_the_name_given(tmp_path, extension):
    path = tmp_path / f"UP{extension}"
    write_line_layer(path, LINE, {"ref": np.array(["A1"], dtype=object)}, "EPSG:4326")
    assert path.name in [p.name for p in tmp_path.iterdir()]
    layer = read_line_layer(path)
    assert len(layer) == 1 and list(layer.fields["ref"]) == ["A1"] and layer.crs == "EPSG:4326"
    if extension == ".SHP":  # all its files alike (a reader finds .SHX, .DBF beside .SHP)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["UP.CPG", "UP.DBF", "UP.PRJ", "UP.SHP", "UP.SHX"]


def test_a_shapefile_extension_of_mixed_case_is_refused_before_the_work():
    with pytest.raises(ValueError, match=r"output UP.Shp: write a Shapefile as .shp or .SHP \(GDAL opens no other"):
        driver_for("UP.Shp")


@pytest.mark.parametrize("extension", [".gpkg", ".shp", ".fgb", ".geojson"])
def test_integer_and_boolean_fields_with_nulls_come_back_as_masked_integers_and_booleans(tmp_path, extension):
    fields = {"road_id": np.ma.masked_array([230, 0, 17005], mask=[False, True, False]),
              "oneway": np.ma.masked_array([True, False, False], mask=[False, False, True])}
    path = tmp_path / f"roads{extension}"
    write_line_layer(path, LINE * 3, fields, "EPSG:4326")
    again = tmp_path / f"again{extension}"
    write_line_layer(again, LINE * 3, read_line_layer(path).fields, "EPSG:4326")  # a refine or import -> export
    back = read_line_layer(again).fields
    assert back["road_id"].dtype.kind == "i" and back["road_id"].tolist() == [230, None, 17005]
    assert back["oneway"].dtype == bool and back["oneway"].tolist() == [True, False, None]
    assert pyogrio.read_info(again)["dtypes"][0].startswith("int")


@pytest.mark.parametrize("extension", [".gpkg", ".fgb", ".geojson"])
def test_64_bit_integers_with_nulls_come_back_exact(tmp_path, extension):
    # pyogrio reads an integer field with nulls as float64, which rounded 2^60 + 7 and 2^60 + 9 both to 2^60
    big = 2**60 + 7
    ids = np.ma.masked_array(np.array([big, 0, big + 2, -3], np.int64), mask=[False, True, False, False])
    path = tmp_path / f"ids{extension}"
    write_line_layer(path, LINE * 4, {"osm_id": ids, "small": np.ma.masked_array([1, 2, 3, 4], mask=[1, 0, 0, 0])},
                     "EPSG:4326")
    back = read_line_layer(path).fields
    assert back["osm_id"].dtype == np.int64 and back["osm_id"].tolist() == [big, None, big + 2, -3]
    assert back["small"].tolist() == [None, 2, 3, 4]


def test_an_unwritable_folder_is_named_with_the_output_not_a_hidden_file(tmp_path, monkeypatch):
    import tempfile

    def read_only(*args, dir=None, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", f"{dir}/.r.gpkg.3v64b9jx")

    monkeypatch.setattr(tempfile, "mkdtemp", read_only)
    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    expected = f"cannot write {tmp_path / 'r.gpkg'}: folder {tmp_path} cannot be written (Read-only file system)$"
    with pytest.raises(OSError, match=re.escape(expected[:-1]) + "$"):
        write_line_layer(tmp_path / "r.gpkg", LINE, {}, "EPSG:4326")
    with pytest.raises(OSError, match=re.escape(expected[:-1]) + "$"):
        check_writable(tmp_path / "r.gpkg")
    with pytest.raises(OSError, match=f"cannot write .*x.gpkg: folder {re.escape(str(tmp_path / 'gone'))} does not"):
        check_writable(tmp_path / "gone" / "x.gpkg")


def test_check_writable_leaves_nothing_and_refuses_a_folder_no_one_writes(tmp_path):
    check_writable(tmp_path / "out.gpkg")
    assert list(tmp_path.iterdir()) == []
    if Path("/sys/kernel").is_dir():  # sysfs: no file can be made there, even by root
        with pytest.raises(OSError, match=r"cannot write /sys/out.gpkg: folder /sys cannot be written \("):
            check_writable("/sys/out.gpkg")


def test_shapefile_text_is_cut_at_254_bytes_and_json_too_long_left_out_without_gdals_warning(tmp_path):
    details = json.dumps({"settings": {"note": "x" * 300}})
    fields = {"note": np.array(["é" * 200, "short", None], dtype=object),
              "linesnap": np.array([details, "{}", None], dtype=object),
              "memo": np.array(["[not json" + "y" * 300, "", None], dtype=object)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        changes = write_line_layer(tmp_path / "long.shp", LINE * 3, fields, "EPSG:4326")
    assert [str(w.message) for w in caught] == []
    assert dict(changes) == {} and changes.cut == {"note": 1, "memo": 1} and changes.left_out == ["linesnap"]
    assert changes.describe() == (
        "cut 1 value of 'note', 1 value of 'memo' to 254 bytes (a Shapefile's text holds no more; .gpkg or .fgb "
        "keep it whole); left out field 'linesnap' (JSON text longer than a Shapefile's 254 bytes, invalid once "
        "cut; .gpkg or .fgb keep it)")
    back = read_line_layer(tmp_path / "long.shp").fields
    assert list(back) == ["note", "memo"]
    assert back["note"].tolist() == ["é" * 127, "short", None] and len(back["memo"][0]) == 254
    short = write_line_layer(tmp_path / "short.shp", LINE, {"linesnap": np.array(["{}"], dtype=object)},
                             "EPSG:4326")
    assert not short.describe() and read_line_layer(tmp_path / "short.shp").fields["linesnap"].tolist() == ["{}"]


def test_a_shapefile_holds_dates_as_dates_and_date_times_as_iso_text_without_gdals_warning(tmp_path):
    # GDAL wrote a DateTime field as "2024/05/01 10:20:30" text, with a RuntimeWarning of its own
    fields = {"when": np.array(["2024-05-01T10:20:30", "NaT", "2024-06-02T01:02:03"], dtype="datetime64[s]"),
              "day": np.array(["2024-05-01T00:00", "2024-05-02T00:00", "NaT"], dtype="datetime64[m]")}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        changes = write_line_layer(tmp_path / "dates.shp", LINE * 3, fields, "EPSG:4326")
    assert [str(w.message) for w in caught] == []
    assert changes.as_text == ["when"] and changes.describe() == (
        "wrote date-and-time field 'when' as ISO text (a Shapefile holds dates without times or time zones; "
        ".gpkg or .fgb keep the type)")
    back = read_line_layer(tmp_path / "dates.shp").fields
    assert back["when"].tolist() == ["2024-05-01T10:20:30", None, "2024-06-02T01:02:03"]
    assert back["day"].dtype == np.dtype("datetime64[D]") and str(back["day"][1]) == "2024-05-02"
    assert np.isnat(back["day"][2])
    kept = write_line_layer(tmp_path / "dates.gpkg", LINE * 3, fields, "EPSG:4326")
    assert not kept.describe() and read_line_layer(tmp_path / "dates.gpkg").fields["when"].dtype.kind == "M"


def test_list_fields_are_read_as_json_text_and_written_back(tmp_path):
    # an OpenStreetMap export's "refs": [1, 2, 3] stopped refine, --pairs and File > Import ("data type
    # 'list(int32)' not understood")
    path = tmp_path / "osm.geojson"
    path.write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"refs": refs, "names": names, "ways": ways},
         "geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}}
        for refs, names, ways in [([1, 2, 3], ["A1", "B2"], [1.5, 2.0]), ([4], ["C"], [0.25])]]}))
    layer = read_line_layer(path)
    assert layer.fields["refs"].tolist() == ["[1, 2, 3]", "[4]"]
    assert layer.fields["names"].tolist() == ['["A1", "B2"]', '["C"]']
    assert layer.fields["ways"].tolist() == ["[1.5, 2.0]", "[0.25]"]
    out = tmp_path / "out.gpkg"
    write_line_layer(out, LINE * 2, layer.fields, "EPSG:4326")
    assert read_line_layer(out).fields["refs"].tolist() == ["[1, 2, 3]", "[4]"]


def test_a_shapefile_replaced_by_one_without_a_crs_loses_the_old_side_files(tmp_path):
    # the old .prj stayed beside the new file, which then read as EPSG:4326; an old spatial index too
    import pyogrio

    path = tmp_path / "out.shp"
    write_line_layer(path, LINE, {"k": np.array([1])}, "EPSG:4326")
    path.with_suffix(".qix").write_bytes(b"stale index")
    keep = tmp_path / "out.qml"  # a style the user made: not GDAL's
    keep.write_text("<qgis/>")
    assert path.with_suffix(".prj").exists()
    write_line_layer(path, LINE, {"k": np.array([2])}, None)
    assert pyogrio.read_info(str(path))["crs"] is None
    assert not path.with_suffix(".prj").exists() and not path.with_suffix(".qix").exists() and keep.exists()
    assert read_line_layer(path).fields["k"].tolist() == [2]


def test_of_a_geopackage_of_several_layers_the_first_of_lines_is_read(tmp_path):
    # a points layer listed first was read, and the file refused: "holds no LineString (found Point)"
    import shapely

    path = tmp_path / "several.gpkg"
    pyogrio.raw.write(str(path), np.array([shapely.to_wkb(shapely.Point(0, 0))], object), [np.array(["p"], object)],
                      ["name"], layer="pois", crs="EPSG:4326", geometry_type="Point")
    write_line_layer(path.with_name("roads.gpkg"), LINE, {"name": np.array(["r"], object)}, "EPSG:4326")
    pyogrio.raw.write(str(path), *pyogrio.raw.read(str(path.with_name("roads.gpkg")))[2:3],
                      [np.array(["r"], object)], ["name"], layer="roads", crs="EPSG:4326", geometry_type="LineString",
                      append=False)
    assert read_line_layer(path).fields["name"].tolist() == ["r"]
