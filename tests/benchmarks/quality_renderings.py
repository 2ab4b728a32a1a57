"""Extraction quality on other renderings of the SpaceNet tiles: 8-bit JPEG, and colour.

The tiles of bench_quality are 16-bit panchromatic GeoTIFFs.  Analysts also
digitize on 8-bit colour imagery, often JPEG-compressed (web map tiles,
orthophoto mosaics).  Two renderings of the same ground, with the cases placed
exactly as on the tile itself (same pixels, same true lines):

- ``jpeg``: the tile stretched to 8 bits (its 2nd to 98th percentile) and
  written JPEG-compressed (quality 75, 256 px blocks);
- ``colour``: where the tile has a multispectral image (Shanghai 1196's
  8-band image, 1.2 m), its red, green and blue bands (5, 3, 2 of WorldView's
  eight) resampled bilinearly to the pan grid with rasterio and sharpened by
  the pan (Brovey: each band times pan over the bands' mean), then stretched
  and written as the ``jpeg`` rendering is (YCbCr JPEG).

Used by bench_quality (its section on renderings) and by
tests/core/extraction/test_accuracy_tiles.py.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from tests.benchmarks import bench_quality as bq

#: The tiles with a multispectral image of the same ground.
MULTISPECTRAL = {"shanghai_1196": bq.SHARED_DATA / "roads" / "shanghai_img1196_mul8.tif"}
#: The red, green and blue bands of the 8-band images (1-based, WorldView-2/3 order).
RGB_BANDS = (5, 3, 2)
#: The percentiles stretched to 0 and 255.
STRETCH_PERCENTILES = (2.0, 98.0)
JPEG_QUALITY = 75


def available_renderings(tile: str) -> tuple[str, ...]:
    """The renderings ``rendered_tile`` can make of ``tile`` with the data present."""
    if not bq.TILES[tile].available:
        return ()
    source = MULTISPECTRAL.get(tile)
    return ("jpeg", "colour") if source is not None and source.exists() else ("jpeg",)


def rendered_tile(name: str, rendering: str, folder) -> str:
    """Register the tile ``name`` rendered as ``rendering`` in ``bq.TILES`` (its image under ``folder``).

    Returns the new tile's name, ``"<name>+<rendering>"``.
    """
    if rendering not in available_renderings(name):
        raise ValueError(f"no {rendering!r} rendering of {name} (available: {available_renderings(name)})")
    new = f"{name}+{rendering}"
    if new in bq.TILES and bq.TILES[new].available:
        return new
    base = bq.TILES[name]
    path = Path(folder) / f"{name}_{rendering}.tif"
    if not path.exists():
        import rasterio

        with rasterio.open(base.image) as src:
            pan = src.read(1).astype(np.float64)
            profile = {"driver": "GTiff", "width": src.width, "height": src.height, "crs": src.crs,
                       "transform": src.transform}
        bands = _sharpened_rgb(MULTISPECTRAL[name], pan, profile) if rendering == "colour" else pan[None]
        _write_jpeg(np.stack([_stretch(b) for b in bands]), profile, path)
    bq.TILES[new] = dataclasses.replace(base, name=new, image=path, issue=None)
    return new


def _sharpened_rgb(source: Path, pan: np.ndarray, profile: dict) -> np.ndarray:
    import rasterio
    from rasterio.warp import Resampling, reproject

    rgb = np.zeros((len(RGB_BANDS),) + pan.shape)
    with rasterio.open(source) as src:
        for out, band in zip(rgb, RGB_BANDS):
            reproject(rasterio.band(src, band), out, dst_transform=profile["transform"], dst_crs=profile["crs"],
                      resampling=Resampling.bilinear)
    mean = rgb.mean(axis=0)
    return rgb * pan / np.where(mean > 0, mean, 1.0)


def _stretch(band: np.ndarray) -> np.ndarray:
    lo, hi = np.percentile(band, STRETCH_PERCENTILES)
    return np.clip((band - lo) / max(hi - lo, 1e-9) * 255.0 + 0.5, 0, 255).astype(np.uint8)


def _write_jpeg(data: np.ndarray, profile: dict, path: Path) -> None:
    import rasterio

    path.parent.mkdir(parents=True, exist_ok=True)
    colour = data.shape[0] == 3
    options = {"compress": "jpeg", "jpeg_quality": JPEG_QUALITY, "tiled": True, "blockxsize": 256,
               "blockysize": 256, "interleave": "pixel"}
    if colour:
        options["photometric"] = "ycbcr"
    with rasterio.open(path, "w", count=data.shape[0], dtype="uint8", **profile, **options) as dst:
        dst.write(data)
