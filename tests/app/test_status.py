"""The status bar's position read-outs on rasters whose CRS has no authority code."""

from __future__ import annotations

import numpy as np
import pytest

from app.status import describe_position
from tests.app.conftest import process_events_for

rasterio = pytest.importorskip("rasterio")

#: A transverse Mercator on Bessel with a datum shift and no EPSG code, as some tools write national grids.
CUSTOM_PROJ = ("+proj=tmerc +lat_0=0 +lon_0=15.5 +k=0.9999 +x_0=300000 +y_0=-5000000 +ellps=bessel "
               "+towgs84=577.326,90.129,463.919,5.137,1.474,5.297,2.4232 +units=m +no_defs")


def write_raster(path, crs):
    from rasterio.transform import Affine

    data = np.random.default_rng(0).integers(0, 255, (1, 128, 128), dtype=np.uint8)
    with rasterio.open(path, "w", driver="GTiff", width=128, height=128, count=1, dtype="uint8", crs=crs,
                       transform=Affine(0.5, 0.0, 455000.0, 0.0, -0.5, 5300000.0)) as dst:
        dst.write(data)
    return path


@pytest.mark.parametrize("crs, expected", [
    (CUSTOM_PROJ, "custom CRS"),
    ('PROJCS["Bessel TM 15.5 with a local datum shift used by the county survey office",'
     + rasterio.crs.CRS.from_proj4(CUSTOM_PROJ).to_wkt().split(",", 1)[1], None),
    ("EPSG:32633", "EPSG:32633"),
])
def test_the_map_read_out_names_the_crs_in_a_few_words(tmp_path, crs, expected):
    from core.io.raster import open_raster

    with open_raster(write_raster(tmp_path / "image.tif", crs)) as raster:
        text = describe_position(raster, 10.5, 20.5).map
    assert text.startswith("E 455005.25  N 5299989.75  (")
    name = text.split("(", 1)[1].rstrip(")")
    assert len(name) <= 40  # a status bar label never shrinks: a long one widens the window
    if expected is not None:
        assert name == expected
    else:
        assert name.startswith("Bessel TM 15.5") and name.endswith("…")


def test_hovering_an_image_with_a_custom_crs_keeps_the_window_within_a_1280_px_screen(qtbot, make_window,
                                                                                      tmp_path):
    window = make_window()
    window.resize(1280, 800)
    assert window.open_image(write_raster(tmp_path / "image.tif", CUSTOM_PROJ))
    window.viewer.hovered.emit(10.5, 20.5, False)
    process_events_for(0.1)
    assert window.minimumSizeHint().width() <= 1280 and window.width() <= 1280
    assert window.status.map_label.text().endswith("(custom CRS)")


class Result:
    """What the status bar reads of an ExtractionResult."""

    def __init__(self, mode="auto", estimate=None):
        from core.extraction import ExtractionSettings

        self.settings = ExtractionSettings(mode=mode)
        self.timings_ms, self.backend, self.method = {"total": 12.3}, "cpu", "window"
        self.estimate = estimate


def test_describe_estimate():
    from app.status import describe_estimate
    from core.extraction.estimate import RoadEstimate

    bent = RoadEstimate(14.2, "bright", 1.1, "bent", 0.82)
    assert describe_estimate(Result("auto", bent)) == "auto · bent course · width 14 px · bright · confidence 0.82"
    weak = RoadEstimate(None, "any", 0.1, "straight", 0.31)
    assert describe_estimate(Result("ribbon", weak)) == (
        "ribbon · width unknown · no clear polarity · confidence 0.31 (low: dashed)")
    assert describe_estimate(Result()) == ""


def test_the_estimate_shows_beside_the_run_and_keeps_the_window_within_a_1280_px_screen(qtbot, make_window,
                                                                                        tmp_path):
    from core.extraction.estimate import RoadEstimate

    window = make_window()
    window.resize(1280, 800)
    assert window.open_image(write_raster(tmp_path / "image.tif", CUSTOM_PROJ))
    window.viewer.hovered.emit(10.5, 20.5, False)
    weak = RoadEstimate(144.0, "bright", 1.0, "straight", 0.31)  # the longest line there is
    window.status.show_run(Result("auto", weak))
    process_events_for(0.1)
    label = window.status.estimate_label
    message = window.status.currentMessage()  # the settings the new image got: the estimate gives way to it
    assert message and window.status.message_room_px() >= window.status.fontMetrics().horizontalAdvance(message)
    window.status.clearMessage()
    assert label.isVisible() and label.text().startswith("auto · straight course · width 144 px")
    assert label.text() in label.toolTip() and "contrast 1.00" in label.toolTip() and "dashed" in label.toolTip()
    assert window.minimumSizeHint().width() <= 1280 and window.width() <= 1280  # the text is cut instead
    window.open_image(None)  # another image: the estimate no longer applies
    assert not label.isVisible()
