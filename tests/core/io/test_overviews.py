"""Overviews built beside an image (.ovr): levels, reads through them, cancel and unwritable folders."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

rasterio = pytest.importorskip("rasterio")

from core.cancel import Cancelled, CancelToken  # noqa: E402
from core.io import overview_build, overviews  # noqa: E402
from core.io.overviews import OverviewError, build_overviews, needs_overviews, overview_factors  # noqa: E402
from core.io.raster import open_raster  # noqa: E402
from core.processes import end_process  # noqa: E402
from tests.core.io import overview_children  # noqa: E402
from tests.core.io.test_raster import TRANSFORM, UTM33, write_tif  # noqa: E402
from tests.core.io.test_reduced_read import TILED  # noqa: E402


def tiled_tif(path, data, **profile):
    """A GeoTIFF of ``data`` (k, rows, cols) in 256 px DEFLATE tiles."""
    return write_tif(path, data, **TILED, **profile)


@pytest.fixture
def image(tmp_path):
    rows, cols = np.mgrid[0:2000, 0:3000]
    data = np.stack([(rows // 3 + cols // 7) % 251, (rows * cols // 1000) % 256]).astype(np.uint8)
    return tiled_tif(tmp_path / "big.tif", data, nodata=0)


def whole_view(raster):
    """The whole image at 1:8, as the fit view reads it (through overviews where there are any)."""
    return raster.read_decimated(0, 0, raster.width, raster.height, raster.width // 8, raster.height // 8)


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("size, expected", [((3000, 2000), [2, 4, 8, 16]), ((256, 100), []), ((257, 1), [2]),
                                            ((20000, 20000), [2, 4, 8, 16, 32, 64, 128]), ((1, 600), [2, 4])])
def test_overview_factors(size, expected):
    assert overview_factors(*size) == expected


def test_overview_factors_refuses_bad_sizes():
    with pytest.raises(ValueError, match="width"):
        overview_factors(0, 10)
    with pytest.raises(ValueError, match="smallest_px"):
        overview_factors(10, 10, smallest_px=1.5)


def test_build_gives_the_levels_and_reads_go_through_them(image):
    before = digest(image)
    raster = open_raster(image)
    steps = []
    assert build_overviews(image, report=lambda *step: steps.append(step)) == [2, 4, 8, 16]
    assert [s[:2] for s in steps] == [(0, 4), (1, 4), (4, 4)]
    assert digest(image) == before  # the image itself is not written
    assert (image.parent / "big.tif.ovr").is_file()
    with rasterio.open(image) as ds:
        assert ds.overviews(1) == ds.overviews(2) == [2, 4, 8, 16]
    # Make the full resolution differ from the overviews, so we can tell which one a read used.
    with rasterio.open(image, "r+") as ds:
        ds.write(np.full((2, 2000, 3000), 255, np.uint8))  # (the first band never reaches 255)
    raster.reopen()  # (opened before the build, it would not see them)
    assert not np.any(raster.read_decimated(0, 0, 3000, 2000, 375, 250) == np.float32(255))
    assert np.all(raster.read_window(0, 0, 300, 200) == np.float32(255))


def test_levels_match_gdals_one_call_build(image, tmp_path):
    reference = tmp_path / "reference.tif"
    reference.write_bytes(image.read_bytes())
    with rasterio.Env(TIFF_USE_OVR=True), rasterio.open(reference, "r+") as ds:
        ds.build_overviews([2, 4, 8, 16], rasterio.enums.Resampling.average)
    build_overviews(image)
    with rasterio.open(image) as built, rasterio.open(reference) as expected:
        for factor in (2, 4, 8, 16):
            shape = (2, -(-2000 // factor), -(-3000 // factor))
            got, want = built.read(out_shape=shape).astype(int), expected.read(out_shape=shape).astype(int)
            assert np.abs(got - want).max() <= 1, factor  # (averages of averages: uint8 rounding at most)


def staged(image):
    """The staging folders of a build of ``image`` (hidden, beside it)."""
    return list(image.parent.glob(f".{image.name}.ovr-*.tmp"))


def test_cancel_leaves_no_ovr(image):
    token = CancelToken()

    def report(done, total, phase):
        if done == 1:  # level 1:2 is written, in the staging folder only
            assert not (image.parent / "big.tif.ovr").exists()
            names = sorted(p.name for folder in staged(image) for p in folder.iterdir())
            assert names == ["big.tif", "big.tif.ovr", "big.tif.owner"]  # (the owner: the build's process)
            token.cancel()

    with pytest.raises(Cancelled):
        build_overviews(image, cancel=token, report=report)
    assert not (image.parent / "big.tif.ovr").exists() and staged(image) == []
    with rasterio.open(image) as ds:
        assert ds.overviews(1) == []


def test_a_cancel_ends_a_gdal_call_at_once(image, monkeypatch):
    # GDAL's builder cannot look at a cancel (and holds the GIL): its process is ended instead.
    monkeypatch.setattr(overview_build, "_child_main", overview_children.stuck_child)
    token = CancelToken()
    cancelled_at = []

    def cancel_soon():
        time.sleep(0.3)
        cancelled_at.append(time.perf_counter())
        token.cancel()

    thread = threading.Thread(target=cancel_soon)
    thread.start()
    with pytest.raises(Cancelled):
        build_overviews(image, cancel=token)
    stopped_s = time.perf_counter() - cancelled_at[0]
    thread.join()
    assert stopped_s < 0.5
    assert [p for p in multiprocessing.active_children() if p.name == "linesnap-overviews"] == []
    assert not (image.parent / "big.tif.ovr").exists() and staged(image) == []


LINUX = sys.platform.startswith("linux")


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (an orphan may wait for a lazy reaper)."""
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def child_left_by_killed_parent(image, child_main=None) -> float:
    """Seconds that the child of a build of ``image`` ran on once its parent was killed (SIGKILL) in the middle
    of level 1:2 (:func:`overview_children.build_and_tell`); one at most: a child still running is killed."""
    pid_file, child = image.parent / "pid", None
    parent = multiprocessing.get_context("spawn").Process(target=overview_children.build_and_tell,
                                                          args=(str(image), str(pid_file), child_main))
    parent.start()
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() and parent.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        child = int(pid_file.read_text())
        parent.kill()  # (SIGKILL: nothing of the parent runs any more)
        parent.join()
        killed_at = time.monotonic()
        while running(child) and time.monotonic() < killed_at + 1.0:
            time.sleep(0.005)
        return time.monotonic() - killed_at
    finally:
        if child is not None and running(child):
            os.kill(child, signal.SIGKILL)
        end_process(parent)


@pytest.mark.skipif(not LINUX, reason="elsewhere the child ends when GDAL's call does")
def test_a_build_ends_in_the_middle_of_a_gdal_call_when_its_parent_is_killed(tmp_path):
    # 20000 x 20000 RGB of blocks never written: made at once, and GDAL's level 1:2 takes seconds (one call).
    image = tmp_path / "huge.tif"
    with rasterio.open(image, "w", driver="GTiff", width=20000, height=20000, count=3, dtype="uint8", tiled=True,
                       blockxsize=256, blockysize=256, SPARSE_OK=True, crs=UTM33, transform=TRANSFORM):
        pass
    assert child_left_by_killed_parent(image) < 0.5, "the build's child ran on after its parent was killed"
    # No IMAGE.ovr; only the staging folder, which the next look at it removes (its process is gone).
    assert not overviews.overview_path(image).exists() and len(staged(image)) == 1
    overviews.remove_abandoned_staging(image)
    assert staged(image) == []


@pytest.mark.skipif(not LINUX, reason="processes are looked at in /proc")
def test_without_the_kernels_help_a_thread_ends_the_child_with_its_parent(image):
    assert child_left_by_killed_parent(image, "unwatched_child") < 0.5
    assert not overviews.overview_path(image).exists() and len(staged(image)) == 1
    overviews.remove_abandoned_staging(image)
    assert staged(image) == []


def test_a_build_that_dies_midway_leaves_no_ovr(image, monkeypatch):
    """A crash in the middle of GDAL's writing (the child killed after level 1:2): no IMAGE.ovr to read."""
    expected = whole_view(open_raster(image))
    monkeypatch.setattr(overview_build, "_child_main", overview_children.dying_child)
    with pytest.raises(OverviewError, match=r"big\.tif: GDAL's overview builder stopped unexpectedly \(exit code 9"):
        build_overviews(image)
    assert not (image.parent / "big.tif.ovr").exists() and staged(image) == []
    raster = open_raster(image)
    assert raster._reader._ds.overviews(1) == []
    np.testing.assert_array_equal(whole_view(raster), expected)


def test_a_failure_leaves_no_ovr(image, monkeypatch):
    monkeypatch.setattr(overview_build, "_child_main", overview_children.failing_child)
    with pytest.raises(OverviewError, match="big.tif: OSError.*No space left on device"):
        build_overviews(image)
    assert not (image.parent / "big.tif.ovr").exists() and staged(image) == []


def test_a_folder_without_links_builds_beside_the_image(image, monkeypatch):
    def refuse(*args):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(overview_build.os, "link", refuse)
    monkeypatch.setattr(overview_build.os, "symlink", refuse)
    assert build_overviews(image) == [2, 4, 8, 16]
    assert (image.parent / "big.tif.ovr").is_file() and staged(image) == []
    with rasterio.open(image) as ds:
        assert ds.overviews(1) == [2, 4, 8, 16]


def test_staging_folders_of_killed_builds_are_removed_when_stale(image):
    old, recent = image.parent / ".big.tif.ovr-old.tmp", image.parent / ".big.tif.ovr-recent.tmp"
    for folder in (old, recent):
        folder.mkdir()
        (folder / "big.tif.ovr").write_bytes(b"II*\0 half written")
    stale = time.time() - overview_build.STALE_STAGING_S - 60
    os.utime(old, (stale, stale))
    build_overviews(image)
    assert staged(image) == [recent]  # (a build of another process may be using it)


def test_an_unwritable_folder_is_said_clearly(image, monkeypatch):
    real = os.access
    monkeypatch.setattr(overviews.os, "access", lambda p, mode: False if os.path.isdir(p) else real(p, mode))
    with pytest.raises(OverviewError, match=rf"folder {image.parent} is not writable.*big\.tif\.ovr"):
        build_overviews(image)
    assert not (image.parent / "big.tif.ovr").exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes to read-only folders")
def test_a_read_only_folder_really_is_refused(image):
    image.parent.chmod(0o555)
    try:
        with pytest.raises(OverviewError, match="not writable"):
            build_overviews(image)
    finally:
        image.parent.chmod(0o755)


def test_existing_overviews_are_not_built_again(image):
    build_overviews(image)
    with pytest.raises(OverviewError, match="exists already"):
        build_overviews(image)


def test_small_images_and_arrays_need_none(tmp_path):
    small = tiled_tif(tmp_path / "small.tif", np.ones((1, 512, 512), np.uint8))
    assert not needs_overviews(open_raster(small))
    assert not needs_overviews(open_raster(np.zeros((5000, 5000), np.uint8)))
    long = tiled_tif(tmp_path / "long.tif", np.ones((1, 256, 5000), np.uint8))
    assert needs_overviews(open_raster(long))
    build_overviews(long)
    assert not needs_overviews(open_raster(long))


def test_other_formats_are_refused_and_left_untouched(tmp_path):
    # an ERDAS image opened for update would get its overviews written inside it
    path = tmp_path / "big.img"
    data = (np.arange(2000 * 3000).reshape(1, 2000, 3000) % 251).astype(np.uint8)
    with rasterio.open(path, "w", driver="HFA", width=3000, height=2000, count=1, dtype="uint8") as ds:
        ds.write(data)
    before = digest(path)
    assert not needs_overviews(open_raster(path))  # (not offered)
    with pytest.raises(OverviewError, match=r"only GeoTIFF images .*HFA.*gdaladdo -ro"):
        build_overviews(path)
    assert digest(path) == before and not overviews.overview_path(path).exists()


def test_reads_from_other_threads_go_on_while_the_raster_is_reopened(image):
    import threading

    raster = open_raster(image)
    expected = raster.read_bands(100, 100, 64, 64)
    errors, stop = [], threading.Event()

    def read():
        while not stop.is_set():
            try:
                np.testing.assert_array_equal(raster.read_bands(100, 100, 64, 64), expected)
            except Exception as err:  # (a closed handle's error, before the bands were kept)
                errors.append(err)
                return

    threads = [threading.Thread(target=read) for _ in range(2)]
    for thread in threads:
        thread.start()
    for _ in range(60):
        raster.reopen()
    stop.set()
    for thread in threads:
        thread.join()
    raster.close()
    assert errors == []
