"""Binary closing and the Euclidean distance transform of centre_map, without scipy.ndimage.

They give what ``scipy.ndimage.binary_closing(mask, disc, border_value=1)`` and
``scipy.ndimage.distance_transform_edt`` give (tests/core/extraction compare
them), without importing scipy.ndimage at every ``linesnap extract`` start
(core.extraction.appearance.gaussian_reflect says why).  The distance transform is Felzenszwalb and
Huttenlocher's (2012) lower envelope of parabolas, once down the columns and
once along the rows.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["closed", "distance_to_outside"]

#: Squared distance that stands for "no outside pixel on this line yet".
_FAR = 1e20


def closed(mask: np.ndarray, disc: np.ndarray) -> np.ndarray:
    """Binary closing (dilation then erosion) by a symmetric structuring element; outside the array counts as set.

    Parameters
    ----------
    mask : (H, W) bool ndarray
    disc : (2 r + 1, 2 r + 1) bool ndarray
        Symmetric about its centre.

    Returns
    -------
    (H, W) bool ndarray
    """
    return _eroded(_dilated(np.asarray(mask, bool), disc), disc)


def distance_to_outside(mask: np.ndarray) -> np.ndarray:
    """Euclidean distance (px) of every pixel to the nearest unset pixel (0 on unset ones).

    Parameters
    ----------
    mask : (H, W) bool ndarray

    Returns
    -------
    (H, W) float64 ndarray
        ``inf`` everywhere when no pixel is unset.
    """
    mask = np.asarray(mask, bool)
    if mask.all():
        return np.full(mask.shape, np.inf)
    squared = np.where(mask, _FAR, 0.0)
    _transform_columns(squared)
    rows = np.ascontiguousarray(squared.T)
    _transform_columns(rows)
    return np.sqrt(rows.T)


def _dilated(mask: np.ndarray, disc: np.ndarray) -> np.ndarray:
    reach = disc.shape[0] // 2
    padded = np.pad(mask, reach, constant_values=True)
    out = np.zeros_like(mask)
    for dy, dx in np.argwhere(disc):
        out |= padded[dy:dy + mask.shape[0], dx:dx + mask.shape[1]]
    return out


def _eroded(mask: np.ndarray, disc: np.ndarray) -> np.ndarray:
    reach = disc.shape[0] // 2
    padded = np.pad(mask, reach, constant_values=True)
    out = np.ones_like(mask)
    for dy, dx in np.argwhere(disc):
        out &= padded[dy:dy + mask.shape[0], dx:dx + mask.shape[1]]
    return out


@njit(cache=True, nogil=True)
def _transform_columns(squared):  # pragma: no cover - compiled
    """In place, per column: the 1-D squared distance transform of the column's values."""
    height, width = squared.shape
    f = np.empty(height)
    where = np.empty(height, np.int64)
    bounds = np.empty(height + 1)
    for col in range(width):
        for row in range(height):
            f[row] = squared[row, col]
        k = 0
        where[0], bounds[0], bounds[1] = 0, -np.inf, np.inf
        for q in range(1, height):
            s = ((f[q] + q * q) - (f[where[k]] + where[k] * where[k])) / (2.0 * (q - where[k]))
            while s <= bounds[k]:
                k -= 1
                s = ((f[q] + q * q) - (f[where[k]] + where[k] * where[k])) / (2.0 * (q - where[k]))
            k += 1
            where[k], bounds[k], bounds[k + 1] = q, s, np.inf
        k = 0
        for q in range(height):
            while bounds[k + 1] < q:
                k += 1
            squared[q, col] = (q - where[k]) ** 2 + f[where[k]]
