"""The road's appearance, learnt at the clicks: a road-likeness map of a window, from every band.

Each pixel is described, per band, by its Gaussian-smoothed value and the
local standard deviation around it (texture).  The road's model is the mean
and covariance of those features on the segment near each click, where the
road is, and a pixel's road-likeness is ``exp(-d^2 / (2 D))`` for its
Mahalanobis distance ``d`` to the model over the ``D`` features.  Colour and
multispectral bands count as features of their own, so a road that differs
from its verges only in hue stands out.  Notes: docs/notes/extraction-and-polyline.md,
"Adaptive extraction".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from core.extraction.smoothing import gaussian_filter32
from core.polyline.stages import parallel_section, serial_twin, threaded_kernel

__all__ = ["LikelihoodWindow", "appearance_features", "road_likelihood", "road_samples"]

#: Smoothing (px) of the per-band values.
FEATURE_SIGMA_PX = 0.75
#: Reach (px, a Gaussian's sigma) of the local standard deviation.
TEXTURE_SIGMA_PX = 1.5
#: The model learns from points of the segment within this distance (px) of each click...
SAMPLE_REACH_PX = 4.5
#: ...every so many px, each with the pixels within this radius (px).
SAMPLE_STEP_PX = 2.0
SAMPLE_RADIUS_PX = 2.0
#: Ridge added to the model's covariance: this share of the window's mean feature variance, so
#: that a road of uniform colour does not make every other shade infinitely unlikely.
RIDGE_SHARE = 0.05
#: Squared distances are capped here (per feature) before the exponential.
_MAX_D2_PER_FEATURE = 25.0
#: The Gaussian filters are cut at this many sigmas.
_TRUNCATE = 3.0
#: The window's feature variance (for the ridge) is taken on every so many pixels.
_VARIANCE_STRIDE = 7


@dataclass(frozen=True, eq=False)
class LikelihoodWindow:
    """Road-likeness of a pixel window.

    Attributes
    ----------
    values : (H, W) float32 ndarray
        In ``[0, 1]``; 0 where there is no data.
    col_off, row_off : int
        Pixel position of ``values[0, 0]``, whose centre is ``(col_off + 0.5, row_off + 0.5)``.
    valid : (H, W) bool ndarray or None
        Where the image has data (None: everywhere).
    """

    values: np.ndarray
    col_off: int
    row_off: int
    valid: np.ndarray | None = None


def appearance_features(bands: np.ndarray) -> np.ndarray:
    """Per band, the smoothed value and the local standard deviation.

    Parameters
    ----------
    bands : (H, W, k) float ndarray
        NaN where there is no data (filled with the band's mean before smoothing).

    Returns
    -------
    (H, W, 2 k) float32 ndarray
    """
    bands = np.asarray(bands, dtype=np.float32)
    features = []
    for k in range(bands.shape[2]):
        band = bands[:, :, k]
        valid = np.isfinite(band)
        if not valid.all():
            band = np.where(valid, band, np.float32(band[valid].mean() if valid.any() else 0.0))
        mean = gaussian_filter32(band, TEXTURE_SIGMA_PX, _TRUNCATE)
        variance = gaussian_filter32(band * band, TEXTURE_SIGMA_PX, _TRUNCATE) - mean * mean
        smooth = gaussian_filter32(band, FEATURE_SIGMA_PX, _TRUNCATE)
        features += [smooth, np.sqrt(np.maximum(variance, 0.0))]
    return np.stack(features, axis=2)


def road_samples(start_xy, end_xy) -> np.ndarray:
    """(n, 2) points ``(x, y)`` of the segment within :data:`SAMPLE_REACH_PX` of each click."""
    a, b = np.asarray(start_xy, np.float64), np.asarray(end_xy, np.float64)
    length = float(np.hypot(*(b - a)))
    reach = min(SAMPLE_REACH_PX, length / 2)
    steps = np.arange(0.0, reach + 1e-9, SAMPLE_STEP_PX)
    axis = (b - a) / length
    return np.concatenate([a + steps[:, None] * axis, b - steps[:, None] * axis])


def road_likelihood(bands: np.ndarray, col_off: int, row_off: int, samples_xy) -> LikelihoodWindow:
    """Road-likeness of every pixel of a window, the model learnt at ``samples_xy``.

    Parameters
    ----------
    bands : (H, W, k) float ndarray
        The window's bands (:meth:`core.io.raster.Raster.read_bands`), NaN where there is no data.
    col_off, row_off : int
        Pixel position of ``bands[0, 0]``.
    samples_xy : (n, 2) array_like
        Raster pixel positions ``(x, y)`` on the road (:func:`road_samples`).

    Returns
    -------
    LikelihoodWindow

    Raises
    ------
    ValueError
        When no sample point has valid pixels in the window.
    """
    features = appearance_features(bands)
    height, width, n_features = features.shape
    valid = _valid_pixels(bands)
    samples = _sample_features(features, valid, col_off, row_off, samples_xy)
    if samples.shape[0] == 0:
        raise ValueError("no valid pixel near the clicks to learn the road's appearance from (all nodata)")
    flat = features.reshape(-1, n_features)
    ridge = RIDGE_SHARE * float(np.mean(np.var(flat[::_VARIANCE_STRIDE], axis=0, dtype=np.float64))) + 1e-12
    covariance = np.atleast_2d(np.cov(samples.T)) if samples.shape[0] > 1 else np.zeros((n_features, n_features))
    inverse = np.linalg.inv(covariance + ridge * np.eye(n_features)).astype(np.float32)
    values = np.empty((height, width), np.float32)
    with parallel_section() as threads:
        kernel = threaded_kernel(_likeness, _likeness_serial, values.size * n_features, threads)
        kernel(features, valid, samples.mean(axis=0).astype(np.float32), inverse, np.float32(-0.5 / n_features),
                  np.float32(_MAX_D2_PER_FEATURE * n_features), values)
    return LikelihoodWindow(values, int(col_off), int(row_off), valid)


def _valid_pixels(bands) -> np.ndarray:
    """(H, W) bool: where every band is finite (one test of the whole window first: usually all are)."""
    finite = np.isfinite(bands)
    return np.ones(bands.shape[:2], np.bool_) if finite.all() else finite.all(axis=2)


@njit(cache=True, nogil=True, parallel=True)
def _likeness(features, valid, mean, inverse, scale, cap, out):
    """``out = exp(scale * min(d2, cap))`` per pixel (0 where not valid), ``d2`` the Mahalanobis distance.

    One pass over the features in float32, row by row in parallel: the array
    expression it replaces made four (H W, D) temporaries.
    """
    height, width, n_features = features.shape
    for i in prange(height):
        for j in range(width):
            if not valid[i, j]:
                out[i, j] = 0.0
                continue
            d2 = np.float32(0.0)
            for k in range(n_features):
                projected = np.float32(0.0)
                for m in range(n_features):
                    projected += (features[i, j, m] - mean[m]) * inverse[m, k]
                d2 += projected * (features[i, j, k] - mean[k])
            out[i, j] = math.exp(scale * min(d2, cap))


_likeness_serial = serial_twin(_likeness)  # small windows: cheaper to compile, one thread


def _sample_features(features, valid, col_off, row_off, samples_xy) -> np.ndarray:
    """(n, D) features of the valid pixels within SAMPLE_RADIUS_PX of the sample points."""
    height, width = valid.shape
    radius = int(np.ceil(SAMPLE_RADIUS_PX))
    rows, cols = [], []
    for x, y in np.asarray(samples_xy, dtype=np.float64).reshape(-1, 2):
        cx, cy = x - col_off - 0.5, y - row_off - 0.5
        for i in range(int(np.floor(cy)) - radius, int(np.ceil(cy)) + radius + 1):
            for j in range(int(np.floor(cx)) - radius, int(np.ceil(cx)) + radius + 1):
                inside = 0 <= i < height and 0 <= j < width
                if inside and (i - cy) ** 2 + (j - cx) ** 2 <= SAMPLE_RADIUS_PX ** 2 and valid[i, j]:
                    rows.append(i)
                    cols.append(j)
    return features[np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)].astype(np.float64)
