"""Checks of a raster file before and after GDAL opens it: VRT loops, geotransforms, float64 ranges."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

__all__ = ["FLOAT32_MAX", "MAX_VRT_DEPTH", "RasterError", "check_transform", "check_vrt", "float64_scale",
           "sample_shape"]

FLOAT32_MAX = float(np.finfo(np.float32).max)
#: Float data whose largest magnitude passes this is scaled by a power of two (squares of larger
#: float32 values overflow in the appearance statistics)...
_SCALE_ABOVE = 1e18
#: ...so that its largest sampled magnitude becomes about 2**16, the range of 16-bit imagery.
_SCALED_EXPONENT = 16
#: Pixels per side of the sample that finds a float64 raster's range.
_SAMPLE_SIDE = 256
#: Pixels narrower than this fraction of the origin's coordinates are refused (float64 keeps about 1e-16 of it).
_MIN_RELATIVE_STEP = 1e-12
#: VRTs may reference VRTs this deep.
MAX_VRT_DEPTH = 16
#: Larger files are not VRT XML worth parsing here (GDAL decides).
_MAX_VRT_BYTES = 64 * 2**20


class RasterError(ValueError):
    """The raster cannot be used: missing, unreadable, corrupt, truncated or unsupported."""


def check_transform(transform, path) -> None:
    """RasterError for a geotransform that is not finite or has a zero pixel size (it cannot be inverted)."""
    coefficients = [transform.a, transform.b, transform.c, transform.d, transform.e, transform.f]
    if not all(math.isfinite(v) for v in coefficients):
        raise RasterError(f"{path} has a geotransform with non-finite values {tuple(coefficients)}")
    determinant = transform.a * transform.e - transform.b * transform.d
    if determinant == 0.0 or not math.isfinite(determinant) or not math.isfinite(1.0 / determinant):
        raise RasterError(f"{path} has a zero pixel size in its geotransform (x size {transform.a:g}, y size "
                          f"{transform.e:g}): positions on it cannot be mapped; repair its georeferencing")
    step = min(math.hypot(transform.a, transform.d), math.hypot(transform.b, transform.e))
    origin = max(1.0, abs(transform.c), abs(transform.f))
    if step < _MIN_RELATIVE_STEP * origin:  # the line's vertices would all be one point once mapped
        raise RasterError(f"{path} has pixels {step:g} map units wide at coordinates near {origin:g}: too small "
                          "for positions on it to be told apart; repair its georeferencing")


def check_vrt(path: Path) -> None:
    """RasterError when a VRT file references itself, directly or through other VRTs."""
    _check_vrt(Path(path), [])


def _check_vrt(path: Path, chain: list[Path]) -> None:
    resolved = _resolved(path)
    if resolved in chain:
        loop = " -> ".join(p.name for p in chain + [resolved])
        raise RasterError(f"{chain[0]} is a VRT that references itself ({loop}); GDAL would loop on it")
    if len(chain) >= MAX_VRT_DEPTH:
        raise RasterError(f"{chain[0]} nests VRT files more than {MAX_VRT_DEPTH} deep")
    for source in _vrt_sources(resolved):
        _check_vrt(source, chain + [resolved])


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def _vrt_sources(path: Path) -> list[Path]:
    """The files a VRT's sources name (empty for anything that is not a readable VRT)."""
    import xml.etree.ElementTree as ElementTree

    try:
        if path.stat().st_size > _MAX_VRT_BYTES:
            return []
        with open(path, "rb") as stream:
            if b"<VRTDataset" not in stream.read(1024):
                return []
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError, ValueError):
        return []  # GDAL reports what is wrong with it
    sources = []
    for element in root.iter("SourceFilename"):
        name = (element.text or "").strip()
        if name and not name.startswith("/vsi") and "://" not in name:
            relative = element.get("relativeToVRT", "0") == "1" or element.get("relativetoVRT", "0") == "1"
            sources.append(path.parent / name if relative else Path(name))
    return sources


def sample_shape(height: int, width: int, band_count: int) -> tuple[int, int, int]:
    """The (bands, rows, cols) of the decimated sample that :func:`float64_scale` looks at."""
    return band_count, min(height, _SAMPLE_SIDE), min(width, _SAMPLE_SIDE)


def float64_scale(sample: np.ndarray, nodata=None) -> float:
    """The power of two that brings float values into a range float32 arithmetic handles (1.0 when they fit).

    ``sample`` is a decimated read of every band (:func:`sample_shape`), taken
    once when the raster opens; a value beyond the sample's largest is later
    clipped to float32's range, never lost.
    """
    if sample.dtype.kind != "f":
        return 1.0
    valid = np.isfinite(sample)
    if nodata is not None:
        valid &= sample != nodata
    largest = float(np.abs(sample[valid]).max()) if valid.any() else 0.0
    if largest <= _SCALE_ABOVE:
        return 1.0
    return 2.0 ** (_SCALED_EXPONENT - math.ceil(math.log2(largest)))
