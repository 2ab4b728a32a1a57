"""A small georeferenced scene for the batch tests: two bright roads that cross, in UTM metres."""

from __future__ import annotations

import numpy as np

#: Rows of the horizontal road's centre and columns of the vertical road's centre (px).
ROAD_Y_PX, ROAD_X_PX = 100.0, 150.0
ROAD_WIDTH_PX = 10
SIZE_PX = 240
PIXEL_M = 0.5
ORIGIN = (500000.0, 4500000.0)
CRS = "EPSG:32618"


def write_scene(path, tiled: bool = False) -> str:
    """A (SIZE_PX, SIZE_PX) uint8 GeoTIFF: dark ground with noise, the two roads bright."""
    import rasterio
    from rasterio.transform import from_origin

    rng = np.random.default_rng(7)
    image = rng.normal(60, 6, (SIZE_PX, SIZE_PX))
    half = ROAD_WIDTH_PX // 2
    image[int(ROAD_Y_PX) - half:int(ROAD_Y_PX) + half, :] += 120
    image[:, int(ROAD_X_PX) - half:int(ROAD_X_PX) + half] += 120
    profile = dict(driver="GTiff", width=SIZE_PX, height=SIZE_PX, count=1, dtype="uint8", crs=CRS,
                   transform=from_origin(*ORIGIN, PIXEL_M, PIXEL_M))
    if tiled:
        profile.update(tiled=True, blockxsize=64, blockysize=64)
    with rasterio.open(path, "w", **profile) as ds:
        ds.write(np.clip(image, 0, 255).astype(np.uint8), 1)
    return str(path)


def px_to_map(xy_px) -> np.ndarray:
    """Map coordinates (UTM metres) of pixel positions of the scene."""
    xy = np.asarray(xy_px, np.float64)
    return np.column_stack([ORIGIN[0] + PIXEL_M * xy[:, 0], ORIGIN[1] - PIXEL_M * xy[:, 1]])


def map_to_px(xy_map) -> np.ndarray:
    xy = np.asarray(xy_map, np.float64)
    return np.column_stack([(xy[:, 0] - ORIGIN[0]) / PIXEL_M, (ORIGIN[1] - xy[:, 1]) / PIXEL_M])


def write_lines(path, lines_px, properties: dict, crs: str = CRS, driver: str | None = None) -> str:
    """A layer of LineStrings given in scene pixels (written in ``crs``), with property columns."""
    import pyogrio.raw

    from core.batch.frames import transform_xy
    from core.batch.wkb import encode_lines

    geometry = np.array([encode_lines([transform_xy(px_to_map(line), CRS, crs)]) for line in lines_px], dtype=object)
    names = list(properties)
    pyogrio.raw.write(str(path), geometry, [np.asarray(v) for v in properties.values()], names, crs=crs,
                      geometry_type="LineString", driver=driver)
    return str(path)
