"""The viewer: tiled reads that never load a big raster whole, pan/zoom, clicks versus drags, bands, stretch."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt

from app.map.tile_loader import TileLoader
from app.map.viewer import RAW_CACHE_BYTES, RasterViewer
from app.model.tiles import TILE_PX, compute_stretch
from tests.app.conftest import wait_idle
from tests.shared_data import shared_file


@pytest.fixture
def viewer(qtbot):
    view = RasterViewer()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    yield view
    if view._loader is not None:
        view._loader.close()


def test_huge_raster_is_read_tile_by_tile(qtbot, viewer, monkeypatch):
    from core.io.raster import Raster

    reads = []
    original = Raster.read_decimated

    def recording(self, col_off, row_off, width, height, out_width, out_height, bands=None):
        reads.append((width, height, out_width, out_height))
        return original(self, col_off, row_off, width, height, out_width, out_height, bands)

    samples = []
    sample = Raster.read_sample

    def recording_sample(self, side, bands=None):
        samples.append(out := sample(self, side, bands))
        return out

    monkeypatch.setattr(Raster, "read_decimated", recording)
    monkeypatch.setattr(Raster, "read_sample", recording_sample)
    # 20000 x 20000 without the memory: a broadcast view (every row the same ramp).
    huge = np.broadcast_to(np.arange(20000, dtype=np.uint16) % 4096, (20000, 20000))
    loader = TileLoader(huge)
    viewer.set_loader(loader)
    loader.request_sample(None)
    qtbot.waitUntil(lambda: loader.pending() == 0 and bool(samples), timeout=20_000)
    viewer.set_display(None, compute_stretch(np.arange(4096.0)))
    for _ in range(6):  # zoom in step by step towards the centre, then pan around at 1:1
        viewer.zoom_by(2.5)
        viewer.repaint()
        qtbot.waitUntil(lambda: loader.pending() == 0, timeout=20_000)
    viewer.one_to_one()
    for dx, dy in ((400, 0), (0, 300), (-900, -200)):
        viewer.pan_by(dx, dy)
        viewer.repaint()
        qtbot.waitUntil(lambda: loader.pending() == 0, timeout=20_000)
    viewer.repaint()
    assert samples[0].shape == (512, 512)  # the stretch sample is decimated
    assert all(out_w <= TILE_PX and out_h <= TILE_PX for _, _, out_w, out_h in reads)
    assert len(reads) < 200
    assert viewer._raw.total_bytes <= RAW_CACHE_BYTES
    centre = viewer.grab().toImage().pixelColor(400, 300)
    assert centre.red() == centre.green() == centre.blue()  # a grey tile, not the (40, 40, 44) background


def test_zoom_keeps_the_point_under_the_cursor_and_pan_moves_content(qtbot, viewer):
    huge = np.zeros((5000, 7000), np.uint8)
    loader = TileLoader(huge)
    viewer.set_loader(loader)
    anchor = QPointF(300, 200)
    before = viewer.view_to_image(anchor)
    viewer.zoom_by(3.0, anchor)
    assert viewer.view_to_image(anchor) == pytest.approx(before)
    scale = viewer.transform.scale
    qtbot.mousePress(viewer, Qt.MouseButton.MiddleButton, pos=QPoint(100, 100))
    qtbot.mouseMove(viewer, QPoint(160, 130))
    qtbot.mouseRelease(viewer, Qt.MouseButton.MiddleButton, pos=QPoint(160, 130))
    assert viewer.view_to_image(QPointF(160, 130)) == pytest.approx(viewer.transform.view_to_image(160, 130))
    assert viewer.image_to_view(*before).x() == pytest.approx(anchor.x() + 60)
    assert viewer.transform.scale == scale
    viewer.fit()
    assert viewer.image_to_view(3500, 2500).x() == pytest.approx(400, abs=1)
    viewer.one_to_one()
    assert viewer.transform.scale == pytest.approx(1.0)


def test_left_click_is_a_click_but_a_left_drag_pans(qtbot, viewer):
    viewer.set_loader(TileLoader(np.zeros((1000, 1000), np.uint8)))
    clicks = []
    viewer.clicked.connect(lambda x, y, straight: clicks.append((x, y, straight)))
    qtbot.mouseClick(viewer, Qt.MouseButton.LeftButton, pos=QPoint(200, 150))
    assert len(clicks) == 1 and clicks[0][:2] == pytest.approx(viewer.view_to_image(QPointF(200, 150)))
    origin = viewer.transform.origin_x
    qtbot.mousePress(viewer, Qt.MouseButton.LeftButton, pos=QPoint(200, 150))
    qtbot.mouseMove(viewer, QPoint(260, 150))
    qtbot.mouseRelease(viewer, Qt.MouseButton.LeftButton, pos=QPoint(260, 150))
    assert len(clicks) == 1 and viewer.transform.origin_x < origin
    qtbot.mouseClick(viewer, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, QPoint(10, 10))
    assert clicks[-1][2] is True


def test_wheel_zooms(qtbot, viewer):
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    viewer.set_loader(TileLoader(np.zeros((1000, 1000), np.uint8)))
    scale = viewer.transform.scale
    event = QWheelEvent(QPointF(400, 300), viewer.mapToGlobal(QPointF(400, 300)), QPoint(0, 0), QPoint(0, 120),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(viewer, event)
    assert viewer.transform.scale > scale


def test_band_choice_and_16_bit_stretch(qtbot, make_window):
    window = make_window()
    window.open_image(str(shared_file("landsat_rgb_300m.tif")))
    wait_idle(qtbot, window)
    combo = window.display_panel.bands
    assert [combo.itemText(i) for i in range(combo.count())] == [
        "RGB (bands 1, 2, 3)", "intensity", "band 1", "band 2", "band 3", "other composite..."]
    assert window.viewer._bands == (1, 2, 3)
    assert not window.display_panel.per_band and np.ndim(window.viewer._stretch.low) == 0  # an 8-bit photograph
    combo.setCurrentIndex(3)  # band 2
    wait_idle(qtbot, window)
    assert window.viewer._bands == (2,)
    extraction_bands = window.settings_panel._widgets["band"]
    assert [extraction_bands.itemText(i) for i in range(4)] == ["all bands", "band 1", "band 2", "band 3"]
    assert extraction_bands.itemData(0) is None  # the settings' default (auto mode learns from every band)
    window.open_image(str(shared_file("vegas_pan_0.3m.tif")))
    wait_idle(qtbot, window)
    assert window.display_panel.selected_bands == (1,)
    sample = window._samples[(1,)]
    assert window.viewer._stretch == compute_stretch(sample, 1.0, 99.0)
    assert window.viewer._stretch.high < 2047  # 16-bit data stretched to its own range
    window.display_panel.low.setValue(5.0)
    window.display_panel.high.setValue(95.0)
    assert window.viewer._stretch == compute_stretch(sample, 5.0, 95.0)


def test_a_multispectral_image_shows_any_composite_each_band_stretched(qtbot, make_window, monkeypatch):
    from PySide6.QtWidgets import QInputDialog, QMessageBox

    window = make_window()
    window.open_image(str(shared_file("roads/shanghai_img1196_mul8.tif")))  # WorldView-3, 8 bands of uint16
    wait_idle(qtbot, window)
    panel, combo = window.display_panel, window.display_panel.bands
    assert panel.per_band and window.viewer._bands == (1, 2, 3)
    sample = window._samples[(1, 2, 3)]
    assert window.viewer._stretch == compute_stretch(sample, 1.0, 99.0, per_band=True)
    assert len(set(window.viewer._stretch.high)) == 3  # each band's own range
    answers, warnings = iter([("5, 3", True), ("5, 3, 9", True), ("5 3 2", True), ("", False)]), []
    monkeypatch.setattr(QInputDialog, "getText", lambda *args, **kwargs: next(answers))
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text: warnings.append(text))
    combo.setCurrentIndex(combo.findData("custom"))  # two mistakes, each said, then natural colour
    wait_idle(qtbot, window)
    assert warnings == ["Give three band numbers for red, green and blue, such as 5, 3, 2; got '5, 3'",
                        "The image has bands 1 to 8; got 5, 3, 9"]
    assert combo.currentText() == "RGB (bands 5, 3, 2)" and window.viewer._bands == (5, 3, 2)
    assert window.viewer._stretch == compute_stretch(window._samples[(5, 3, 2)], 1.0, 99.0, per_band=True)
    combo.setCurrentIndex(combo.findData("custom"))  # cancelled: the composite stays
    assert combo.currentText() == "RGB (bands 5, 3, 2)" and window.viewer._bands == (5, 3, 2)
    panel.each_band.setChecked(False)  # one stretch for the three bands
    assert window.viewer._stretch == compute_stretch(window._samples[(5, 3, 2)], 1.0, 99.0)


def test_keys_zoom_fit_and_pan(qtbot, viewer):
    viewer.set_loader(TileLoader(np.zeros((1000, 2000), np.uint8)))
    fit = viewer.transform.scale
    qtbot.keyClick(viewer, Qt.Key.Key_Plus, Qt.KeyboardModifier.ShiftModifier)
    assert viewer.transform.scale == pytest.approx(fit * 1.25)
    qtbot.keyClick(viewer, Qt.Key.Key_Minus)
    assert viewer.transform.scale == pytest.approx(fit)
    qtbot.keyClick(viewer, Qt.Key.Key_1)
    assert viewer.transform.scale == pytest.approx(1.0)
    origin = viewer.transform.origin_x
    qtbot.keyClick(viewer, Qt.Key.Key_Right)
    assert viewer.transform.origin_x > origin  # the view moves right over the image
    qtbot.keyClick(viewer, Qt.Key.Key_F)
    assert viewer.transform.scale == pytest.approx(fit)
