"""core.batch.layers: Shapefile field names chosen as GDAL would, without GDAL's raw warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pyogrio.raw
import pytest

from core.batch.layers import shapefile_field_names, write_line_layer

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
