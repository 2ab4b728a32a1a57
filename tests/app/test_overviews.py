"""File > Build Overviews...: offered for a large image without them, built with progress, then read through."""

from __future__ import annotations

import numpy as np
import pytest

rasterio = pytest.importorskip("rasterio")

from app.overviews import NO_OVERVIEWS_TEXT  # noqa: E402
from tests.app.conftest import click_image, wait_idle, wait_pieces  # noqa: E402
from tests.core.io.test_overviews import tiled_tif  # noqa: E402


@pytest.fixture
def large(tmp_path):
    """A 5000 x 600 GeoTIFF (longer than LARGE_SIDE_PX) with a bright road along y = 300."""
    data = np.full((1, 600, 5000), 60, np.uint8)
    data[0, 296:305] = 200
    return tiled_tif(tmp_path / "large.tif", data)


def test_a_large_image_is_offered_overviews_and_they_are_used_without_losing_work(qtbot, make_window, large,
                                                                                   shown_errors):
    window = make_window()
    assert window.open_image(str(large))
    wait_idle(qtbot, window)
    overviews = window.overviews
    assert overviews.button.isVisible() and overviews.action.isEnabled()
    assert window.status.currentMessage() == NO_OVERVIEWS_TEXT.format(name="large.tif")
    window.viewer.centre_on((2500, 300), scale=0.5)
    for x in (2300, 2700):
        click_image(qtbot, window, x, 300)
    wait_pieces(qtbot, window)
    window.tool.finish()
    features, view = window.tool.features, window.viewer.transform
    assert window.tool.can_undo
    overviews.build()
    qtbot.waitUntil(lambda: overviews.job is None, timeout=30_000)
    assert shown_errors == []
    assert (large.parent / "large.tif.ovr").is_file()
    assert not overviews.button.isVisible() and "overviews built" in window.status.currentMessage()
    assert window.tool.features == features and window.tool.can_undo and window.viewer.transform == view
    for raster in [window.document.raster] + window.loader._handles:  # every open handle reads through them
        assert raster._reader._ds.overviews(1) == [2, 4, 8, 16, 32]
    wait_idle(qtbot, window)  # the visible tiles are read again


def test_an_unwritable_folder_is_said_in_a_dialog_and_nothing_changes(qtbot, make_window, large, shown_errors,
                                                                       monkeypatch):
    import core.io.overviews as core_overviews

    window = make_window()
    assert window.open_image(str(large))
    wait_idle(qtbot, window)
    monkeypatch.setattr(core_overviews.os, "access", lambda path, mode: not core_overviews.os.path.isdir(path))
    window.overviews.build()
    qtbot.waitUntil(lambda: window.overviews.job is None, timeout=30_000)
    assert len(shown_errors) == 1 and "not writable" in shown_errors[0].message
    assert window.overviews.button.isVisible() and not (large.parent / "large.tif.ovr").exists()


def test_a_small_image_is_offered_nothing(qtbot, make_window):
    window = make_window()
    assert window.open_image(None)
    assert not window.overviews.button.isVisible() and window.overviews.action.isEnabled()


def test_a_damaged_ovr_is_said_on_opening_and_a_build_replaces_it(qtbot, make_window, large, shown_errors):
    (large.parent / "large.tif.ovr").write_bytes(b"II*\0" + bytes(100))  # (a build killed just after it began)
    window = make_window()
    assert window.open_image(str(large))
    wait_idle(qtbot, window)
    assert window.status.currentMessage().startswith("large.tif.ovr beside the image is damaged (")
    assert window.overviews.button.isVisible()
    window.overviews.build()
    qtbot.waitUntil(lambda: window.overviews.job is None, timeout=30_000)
    assert shown_errors == [] and window.document.raster.notices == []
    assert window.document.raster._reader._ds.overviews(1) == [2, 4, 8, 16, 32]
    wait_idle(qtbot, window)


def test_opening_an_image_removes_what_killed_builds_left_beside_it(qtbot, make_window, large):
    from core.processes import this_process
    from tests.core.io.test_overview_staging import gone_owner, left_folder

    dead, running = left_folder(large, "dead", gone_owner()), left_folder(large, "running", this_process())
    window = make_window()
    assert window.open_image(str(large))
    assert not dead.exists() and running.is_dir()  # (another LineSnap's build of the image goes on)
    assert window.overviews.button.isVisible()
    wait_idle(qtbot, window)
