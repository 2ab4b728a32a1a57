"""Gradient of the Gaussian-smoothed intensity of an image window.

Masked pixels (NaN) must not create edges, so the smoothing is a normalized
convolution ``G * (I M) / G * M`` with ``M`` the validity mask, and the
gradient is 0 wherever its 3 x 3 stencil touches a masked pixel.  Grid step:
docs/notes/extraction-and-polyline.md, "Gradient grid step".
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from core import validation

__all__ = ["GradientWindow", "gradient_window", "GAUSSIAN_TRUNCATE", "GRID_STEPS_PX"]

#: The Gaussian kernel is cut at this many sigmas; the extraction window's
#: smoothing margin (core.extraction) is derived from it.
GAUSSIAN_TRUNCATE = 3.0

#: The grid steps (px) :func:`gradient_window` computes on: pixel centres only,
#: or pixel centres and boundaries.
GRID_STEPS_PX = (1.0, 0.5)

# Normalized-convolution weights below this are treated as "no valid pixel in reach".
_MIN_WEIGHT = 1e-6


@dataclass(frozen=True, eq=False)
class GradientWindow:
    """Gradient of the smoothed intensity on a window of the raster.

    Attributes
    ----------
    gx, gy : (Hg, Wg) float32 ndarray
        ``dI/dx`` and ``dI/dy`` (x = column, y = row) of the smoothed
        intensity, in intensity units per pixel; 0 where a masked pixel is
        within one pixel.
    col_off, row_off : int
        Position of the window: element ``[i, j]`` sits at
        ``(col_off + 0.5 + j * step_px, row_off + 0.5 + i * step_px)``.
    step_px : float
        Grid step in pixels: 1.0 (pixel centres; ``(Hg, Wg) = (H, W)``) or
        0.5 (pixel centres and boundaries; ``(Hg, Wg) = (2H - 1, 2W - 1)``).
    """

    gx: np.ndarray
    gy: np.ndarray
    col_off: int
    row_off: int
    step_px: float = 1.0

    @property
    def shape(self) -> tuple[int, int]:
        """``(Hg, Wg)`` of the gradient grid."""
        return self.gx.shape


def gradient_window(
    intensity, sigma_px: float, col_off: int = 0, row_off: int = 0, step_px: float = 1.0
) -> GradientWindow:
    """Smooth a window with a Gaussian and take its gradient.

    Parameters
    ----------
    intensity : (H, W) float ndarray
        Intensity of the window, NaN where masked.  Not modified.
    sigma_px : float
        Standard deviation of the Gaussian in pixels (> 0).
    col_off, row_off : int
        Pixel position of ``intensity[0, 0]`` in the raster.
    step_px : {1.0, 0.5}
        Grid step of the gradient: pixel centres, or centres and boundaries.

    Returns
    -------
    GradientWindow
        float32 ``gx``, ``gy`` of shape (H, W) for step 1, (2H - 1, 2W - 1) for step 0.5.

    Raises
    ------
    ValueError, TypeError
        For a window that is not 2-D, is empty or has no valid pixel, and for
        ``sigma_px`` or ``step_px`` out of range.
    """
    image = _validated_window(intensity)
    sigma_px = validation.real(sigma_px, "sigma_px", 0.0, low_open=True, unit="pixels")
    if isinstance(step_px, bool) or not isinstance(step_px, numbers.Real) or float(step_px) not in GRID_STEPS_PX:
        raise ValueError(f"step_px must be one of {', '.join(map(str, GRID_STEPS_PX))} (pixels); got {step_px!r}")
    valid = np.isfinite(image)
    if not valid.any():
        raise ValueError(f"intensity window of shape {image.shape} has no valid pixel (all NaN / nodata)")
    if valid.all():
        smooth, unusable = _gaussian(image, sigma_px), None
    else:
        smooth, unusable = _normalized_gaussian(image, valid, float(sigma_px))
    step_px = float(step_px)
    if step_px != 1.0:
        smooth = _refined(smooth)
        unusable = None if unusable is None else _refined_mask(unusable)
    gx, gy = _derivatives(smooth, step_px)
    if unusable is not None:
        gx[unusable] = 0.0
        gy[unusable] = 0.0
    return GradientWindow(gx=gx, gy=gy, col_off=int(col_off), row_off=int(row_off), step_px=step_px)


def _validated_window(intensity) -> np.ndarray:
    image = np.asarray(intensity)
    if image.ndim != 2:
        raise ValueError(f"intensity must be a 2-D (H, W) array; got shape {image.shape}")
    if image.size == 0:
        raise ValueError(f"intensity window is empty (shape {image.shape})")
    if not (np.issubdtype(image.dtype, np.floating) or np.issubdtype(image.dtype, np.integer)):
        raise TypeError(f"intensity must be a real numeric array; got dtype {image.dtype}")
    return image.astype(np.float32)  # a copy: the caller's array is never modified


def _gaussian(image: np.ndarray, sigma_px: float) -> np.ndarray:
    from skimage.filters import gaussian  # imported when used: scipy.ndimage slows every start (appearance.py)

    return gaussian(image, sigma=sigma_px, mode="nearest", truncate=GAUSSIAN_TRUNCATE, preserve_range=True)


def _normalized_gaussian(image: np.ndarray, valid: np.ndarray, sigma_px: float):
    """Gaussian-weighted mean of the valid pixels, and the pixels whose gradient is unusable."""
    weight = _gaussian(valid.astype(np.float32), sigma_px)
    total = _gaussian(np.where(valid, image, np.float32(0.0)), sigma_px)
    reached = weight > _MIN_WEIGHT
    smooth = np.zeros_like(image)
    np.divide(total, weight, out=smooth, where=reached)
    # The derivative stencil is 3 x 3: next to a masked pixel it would read the
    # extrapolated (or, when unreached, zero) smooth value there, so those
    # gradients are dropped too.
    from scipy.ndimage import binary_dilation

    unusable = binary_dilation(~(valid & reached), structure=np.ones((3, 3), dtype=bool))
    return smooth, unusable


def _refined(smooth: np.ndarray) -> np.ndarray:
    """(2H - 1, 2W - 1) linear interpolation of (H, W) onto the centres and boundaries of its pixels."""
    return _halves(_halves(smooth, 0), 1)


def _halves(values: np.ndarray, axis: int) -> np.ndarray:
    values = np.moveaxis(values, axis, 0)
    fine = np.empty((2 * values.shape[0] - 1,) + values.shape[1:], dtype=values.dtype)
    fine[::2] = values
    fine[1::2] = np.float32(0.5) * (values[:-1] + values[1:])
    return np.moveaxis(fine, 0, axis)


def _refined_mask(unusable: np.ndarray) -> np.ndarray:
    """The fine-grid nodes that interpolate (or are) an unusable pixel centre."""
    fine = _halves(unusable.astype(np.float32), 0)
    return _halves(fine, 1) > 0


def _derivatives(smooth: np.ndarray, step_px: float = 1.0):
    """Sobel derivatives scaled to intensity units per pixel (exact on linear ramps)."""
    # skimage's Sobel kernels are normalised to a central difference over two
    # grid steps.
    from skimage.filters import sobel_h, sobel_v

    scale = np.float32(0.5 / step_px)
    gx = (sobel_v(smooth) * scale).astype(np.float32, copy=False)
    gy = (sobel_h(smooth) * scale).astype(np.float32, copy=False)
    return gx, gy
