"""The rasters a batch reads: files, folders, VRT mosaics and cloud-optimized GeoTIFFs over HTTP.

An ``http(s)://`` URL is read through GDAL's ``/vsicurl/``: windowed reads
become range requests, so only the blocks under a piece travel.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["RASTER_SUFFIXES", "RasterSource", "gdal_path", "list_sources", "remote_options"]

#: Files of a folder that count as rasters.
RASTER_SUFFIXES = (".tif", ".tiff", ".vrt", ".jp2", ".img")


@dataclass(frozen=True)
class RasterSource:
    """One raster's name and georeference (read once, so that workers need not open it to plan).

    Attributes
    ----------
    path : str
        The path GDAL opens (``/vsicurl/...`` for URLs).
    width, height : int
    crs : str or None
        WKT, None for a plain image.
    transform : tuple of 6 float
        The affine ``(a, b, c, d, e, f)`` of pixel ``(x, y)`` to map coordinates.
    """

    path: str
    width: int
    height: int
    crs: str | None
    transform: tuple

    def map_to_pixel(self, xy: np.ndarray) -> np.ndarray:
        """(n, 2) pixel ``(x, y)`` of (n, 2) map coordinates in this raster's CRS."""
        a, b, c, d, e, f = self.transform
        det = a * e - b * d
        x, y = xy[:, 0] - c, xy[:, 1] - f
        return np.column_stack([(e * x - b * y) / det, (a * y - d * x) / det])

    def pixel_to_map(self, xy: np.ndarray) -> np.ndarray:
        """(n, 2) map coordinates of (n, 2) pixel ``(x, y)``."""
        a, b, c, d, e, f = self.transform
        return np.column_stack([a * xy[:, 0] + b * xy[:, 1] + c, d * xy[:, 0] + e * xy[:, 1] + f])

    def inside(self, xy_px: np.ndarray, margin_px: float = 0.0) -> np.ndarray:
        """(n,) bool: which pixel positions lie on the raster, ``margin_px`` from its border."""
        return ((xy_px[:, 0] >= margin_px) & (xy_px[:, 0] <= self.width - margin_px)
                & (xy_px[:, 1] >= margin_px) & (xy_px[:, 1] <= self.height - margin_px))


def gdal_path(name: str) -> str:
    """The path GDAL opens for an image argument: URLs go through ``/vsicurl/``."""
    text = str(name)
    return f"/vsicurl/{text}" if text.startswith(("http://", "https://")) else text


def remote_options(path: str) -> dict:
    """GDAL options for a path: no listing of a remote folder for sidecar files (one request saved)."""
    return {"GDAL_DISABLE_READDIR_ON_OPEN": "EMPTY_DIR"} if str(path).startswith("/vsicurl/") else {}


def list_sources(images) -> list[RasterSource]:
    """The rasters of the IMAGE arguments: files, VRTs, URLs, and the rasters of folders (sorted).

    Raises
    ------
    ValueError
        No image given, a missing file, a folder without rasters, or an unreadable raster.
    """
    names = []
    for image in images:
        text = str(image)
        if text.startswith(("http://", "https://", "/vsi")):
            names.append(gdal_path(text))
        elif Path(text).is_dir():
            found = sorted(str(p) for p in Path(text).iterdir() if p.suffix.lower() in RASTER_SUFFIXES)
            if not found:
                raise ValueError(f"folder {text} holds no raster ({', '.join(RASTER_SUFFIXES)})")
            names.extend(found)
        elif not Path(text).is_file():
            raise ValueError(f"image file {text} does not exist")
        else:
            names.append(text)
    if not names:
        raise ValueError("no image given")
    return [_describe(name) for name in names]


def _describe(path: str) -> RasterSource:
    import rasterio

    try:
        with rasterio.Env(**remote_options(path)), warnings.catch_warnings():
            warnings.simplefilter("ignore", rasterio.errors.NotGeoreferencedWarning)  # (its lack is said later)
            with rasterio.open(path) as ds:
                crs = ds.crs.to_wkt() if ds.crs is not None else None
                return RasterSource(path, ds.width, ds.height, crs, tuple(ds.transform)[:6])
    except rasterio.errors.RasterioError as err:
        raise ValueError(f"cannot open raster {path}: {str(err).splitlines()[0][:200]}") from err
