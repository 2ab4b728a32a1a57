"""Typed attribute fields (``write_lines(field_types=...)``): every format keeps each field's type and its nulls."""

from __future__ import annotations

import numpy as np
import pyogrio
import pytest

from core.vector import ExportLine, read_lines, write_lines

TYPES = {"lanes": "integer", "width_m": "real", "surface": "text", "road_class": "text"}
VALUES = [{"lanes": 2, "width_m": 6.5, "surface": "asphalt", "road_class": "primary"},
          {"lanes": None, "width_m": None, "surface": None, "road_class": "track"},
          {"lanes": 1, "width_m": 3.0, "surface": "gravel", "road_class": None}]
#: What pyogrio reports for each field type, per format (GDAL's own type names).
EXPECTED = {"lanes": "int64", "width_m": "float64", "surface": "object", "road_class": "object"}


def lines():
    return [ExportLine(np.array([[k, 0.0], [k + 5.0, 9.0]]), {"name": f"Line {k}", **values}, None)
            for k, values in enumerate(VALUES)]


@pytest.mark.parametrize("suffix", [".gpkg", ".shp", ".fgb", ".geojson"])
def test_fields_come_back_with_their_types_and_nulls(tmp_path, suffix):
    path = tmp_path / f"roads{suffix}"
    write_lines(path, lines(), None, field_types=TYPES)
    info = pyogrio.read_info(path)
    types = dict(zip(info["fields"], info["dtypes"]))
    if suffix == ".geojson":  # GeoJSON: plain JSON values, typed by GDAL from what it sees
        assert types["lanes"] in ("int32", "int64") and types["width_m"] == "float64"
    else:
        assert {name: types[name] for name in TYPES} == EXPECTED
    read = {f.name: f.properties for f in read_lines(path)}
    for k, values in enumerate(VALUES):
        got = read[f"Line {k}"]
        for name, value in values.items():
            if value is None:
                assert got.get(name) is None, (name, got)
            else:
                # an integer column with nulls stays integers (pyogrio's raw reader gives it as reals)
                assert got[name] == value and type(got[name]) is type(value)


def test_an_integer_field_with_only_nulls_is_still_an_integer_field(tmp_path):
    path = tmp_path / "empty.gpkg"
    write_lines(path, [ExportLine(np.array([[0.0, 0.0], [1.0, 1.0]]), {"lanes": None})], None,
                field_types={"lanes": "integer"})
    assert dict(zip(*[pyogrio.read_info(path)[k] for k in ("fields", "dtypes")]))["lanes"] == "int64"


def test_an_unknown_field_type_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"field_types\['lanes'\] must be text, integer, real, date or datetime"):
        write_lines(tmp_path / "x.gpkg", lines(), None, field_types={"lanes": "money"})
