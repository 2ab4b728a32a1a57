"""Raster.read_reduced in strips: the same values as one read, and a cancel stops it between strips."""

from __future__ import annotations

import threading

import numpy as np
import pytest

rasterio = pytest.importorskip("rasterio")

from core.cancel import Cancelled, CancelToken  # noqa: E402
from core.io import raster as raster_module  # noqa: E402
from core.io.raster import open_raster  # noqa: E402
from tests.core.io.test_raster import write_tif  # noqa: E402

TILED = dict(tiled=True, blockxsize=256, blockysize=256, compress="deflate")
ONE_READ = 2**62  # REDUCED_STRIP_PIXELS that makes every reduced read one strip: the read as it was


@pytest.fixture
def image(tmp_path):
    rng = np.random.default_rng(5)
    data = rng.integers(0, 256, (3, 768, 1024), dtype=np.uint8)
    data[:, 100:180, 200:420] = 0  # no data
    return write_tif(tmp_path / "r.tif", data, nodata=0, **TILED)


def reduced(raster, monkeypatch, strip_pixels, *args, **kwargs):
    monkeypatch.setattr(raster_module, "REDUCED_STRIP_PIXELS", strip_pixels)
    return raster.read_reduced(*args, **kwargs)


@pytest.mark.parametrize("box", [(0, 0, 1024, 768), (64, 32, 512, 640), (-64, -32, 512, 400), (256, 128, 768, 640)])
@pytest.mark.parametrize("factor", [1, 2, 4, 8])
@pytest.mark.parametrize("overviews", [False, True])
def test_strips_give_what_one_read_gave(image, monkeypatch, box, factor, overviews):
    if overviews:
        with rasterio.open(image, "r+") as ds:
            ds.build_overviews([2, 4], rasterio.enums.Resampling.average)
    raster = open_raster(image)
    whole = reduced(raster, monkeypatch, ONE_READ, *box, factor)
    for strip_pixels in (1, 3 * factor * factor * 64, 2**16):
        np.testing.assert_array_equal(reduced(raster, monkeypatch, strip_pixels, *box, factor), whole)


def test_an_array_in_strips_gives_what_one_read_gave(monkeypatch):
    data = np.random.default_rng(2).random((300, 200, 2)).astype(np.float32)
    data[10:40, 5:60, 0] = np.nan
    raster = open_raster(data)
    whole = reduced(raster, monkeypatch, ONE_READ, -6, 4, 180, 290, 3)
    np.testing.assert_array_equal(reduced(raster, monkeypatch, 1, -6, 4, 180, 290, 3), whole)


def counting_reads(raster, monkeypatch, on_read):
    """Count the reader's reads; ``on_read(n)`` runs during the n-th."""
    reads = []
    real = raster._reader.read

    def read(*args, **kwargs):
        reads.append(1)
        on_read(len(reads))
        return real(*args, **kwargs)

    monkeypatch.setattr(raster._reader, "read", read)
    return reads


def test_a_cancel_from_another_thread_stops_it_after_the_strip_in_progress(image, monkeypatch):
    raster, token = open_raster(image), CancelToken()

    def cancel_elsewhere(n):
        if n == 1:
            other = threading.Thread(target=token.cancel)
            other.start()
            other.join()

    reads = counting_reads(raster, monkeypatch, cancel_elsewhere)
    monkeypatch.setattr(raster_module, "REDUCED_STRIP_PIXELS", 2**14)  # 16 strips of 4 x 4 cells
    with pytest.raises(Cancelled):
        raster.read_reduced(0, 0, 1024, 768, 4, cancel=token)
    assert len(reads) == 1


def test_an_uncancelled_token_reads_it_all(image, monkeypatch):
    raster = open_raster(image)
    whole = reduced(raster, monkeypatch, ONE_READ, 0, 0, 1024, 768, 4)
    reads = counting_reads(raster, monkeypatch, lambda n: None)
    np.testing.assert_array_equal(reduced(raster, monkeypatch, 2**14, 0, 0, 1024, 768, 4, cancel=CancelToken()),
                                  whole)
    assert len(reads) > 1


def test_a_cancelled_token_reads_nothing_and_a_bad_one_is_refused(image):
    raster, token = open_raster(image), CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        raster.read_reduced(0, 0, 1024, 768, 4, cancel=token)
    with pytest.raises(TypeError, match="cancel"):
        raster.read_reduced(0, 0, 1024, 768, 4, cancel=True)
