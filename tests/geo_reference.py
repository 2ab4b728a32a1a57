"""Independent georeferencing for tests: raster pixels to positions in a CRS through rasterio alone."""

from __future__ import annotations

import numpy as np


def pixels_in_crs(crs: str, raster, pixels: np.ndarray) -> np.ndarray:
    """``pixels`` (k, 2) of ``raster`` as positions in ``crs``, through rasterio directly (not LineSnap's code)."""
    from rasterio.warp import transform

    t = raster.transform
    mx = t.a * pixels[:, 0] + t.b * pixels[:, 1] + t.c
    my = t.d * pixels[:, 0] + t.e * pixels[:, 1] + t.f
    xs, ys = transform(raster.crs, crs, mx.tolist(), my.tolist())
    return np.column_stack([xs, ys])
