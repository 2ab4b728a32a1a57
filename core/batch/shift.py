"""The shift that moves a group of displaced pieces onto their roads.

A misregistered layer is mostly displaced by one smooth shift, so the pieces of
one raster tile are moved together before they are extracted.  Each piece
gives the image's mean cross profile (intensity across the piece, averaged
along it); a road is a ribbon that is about symmetric around its centre line,
so the profile's symmetry as a function of the offset across the piece tells
where the centre lies, along the piece's normal only.  Pieces of several
directions fix the shift in 2-D: the shift maximises the summed symmetry of all
pieces (a small penalty on its length breaks the tie along parallel pieces).
"""

from __future__ import annotations

import numpy as np

__all__ = ["PROFILE_HALF_PX", "SEARCH_PX", "cross_profile", "estimate_shift", "symmetry_curve", "window_margin_px"]

#: Half-lengths (px) of the profile compared with its mirror image (their symmetries are summed).
PROFILE_HALF_PX = (16,)
#: Largest shift (px) searched in x and y.
SEARCH_PX = 10
#: Step (px) of the shift grid.
_GRID_STEP_PX = 0.5
#: Step (px) between cross profiles along a piece; ends closer than this to a piece's ends are skipped.
_ALONG_STEP_PX = 2.0
#: Penalty per px^2 of shift (in units of one piece's symmetry): the least shift among equals.
_LENGTH_PENALTY = 1e-4


def cross_profile(intensity: np.ndarray, start_xy, end_xy, reach_px: int) -> np.ndarray | None:
    """The mean intensity across a piece, at integer offsets along its left normal.

    Parameters
    ----------
    intensity : (H, W) float32 ndarray
        The image window (NaN where there is no data), pixel ``[r, c]`` centred at ``(c + 0.5, r + 0.5)``.
    start_xy, end_xy : (2,) float
        The piece's ends in the window's pixels.
    reach_px : int
        Offsets ``-reach_px .. reach_px``.

    Returns
    -------
    (2 reach_px + 1,) float64 ndarray, zero mean and unit variance, or None
        None when the piece is too short, runs off the data or crosses a flat image.
    """
    start, end = np.asarray(start_xy, np.float64), np.asarray(end_xy, np.float64)
    length_px = float(np.hypot(*(end - start)))
    along = np.arange(_ALONG_STEP_PX, length_px - _ALONG_STEP_PX + 1e-9, _ALONG_STEP_PX)
    if len(along) < 2:
        return None
    axis = (end - start) / length_px
    normal = np.array([-axis[1], axis[0]])
    offsets = np.arange(-reach_px, reach_px + 1, dtype=np.float64)
    points = start + along[:, None, None] * axis + offsets[None, :, None] * normal
    samples = _bilinear(intensity, points[..., 0] - 0.5, points[..., 1] - 0.5)
    rows = np.isfinite(samples).all(axis=1)
    if rows.sum() < 2:
        return None
    profile = samples[rows].mean(axis=0)
    spread = profile.std()
    return None if spread < 1e-6 else (profile - profile.mean()) / spread


def symmetry_curve(profile: np.ndarray, half_px: int) -> np.ndarray:
    """How mirror-symmetric a profile is around each candidate centre.

    Parameters
    ----------
    profile : (2 R + 1,) float ndarray
        Offsets ``-R .. R``; ``R > half_px``.
    half_px : int
        Half-length compared: ``profile[c + t]`` with ``profile[c - t]``, ``t = 1 .. half_px``.

    Returns
    -------
    (2 (R - half_px) + 1,) float64 ndarray
        At centre offsets ``-(R - half_px) .. R - half_px``: ``-mean((left - right)^2)`` (0 is a perfect mirror).
    """
    reach = (len(profile) - 1) // 2
    search = reach - half_px
    if search < 0:
        raise ValueError(f"half_px {half_px} exceeds the profile's reach {reach}")
    steps = np.arange(1, half_px + 1)
    centres = np.arange(-search, search + 1) + reach
    left, right = profile[centres[:, None] - steps], profile[centres[:, None] + steps]
    return -np.mean((left - right) ** 2, axis=1)


def estimate_shift(intensity: np.ndarray, pieces_xy, half_px: int = PROFILE_HALF_PX,
                   search_px: int = SEARCH_PX) -> tuple[np.ndarray, int]:
    """The common shift of a group of pieces onto their roads.

    Parameters
    ----------
    intensity : (H, W) float32 ndarray
        The image window holding every piece with ``half_px + search_px * sqrt(2)`` px to spare.
    pieces_xy : (k, 4) float ndarray
        Rows ``start_x, start_y, end_x, end_y`` in the window's pixels.
    half_px, search_px : int

    Returns
    -------
    shift_xy : (2,) float64 ndarray
        Zero when no piece gives a profile.
    used : int
        Pieces that gave a profile.
    """
    halves = np.atleast_1d(half_px).astype(int)
    search = int(np.ceil(search_px * np.sqrt(2.0)))
    reach = int(halves.max()) + search
    grid = np.arange(-search_px, search_px + 1e-9, _GRID_STEP_PX)
    shift_x, shift_y = np.meshgrid(grid, grid, indexing="xy")
    total = -_LENGTH_PENALTY * (shift_x ** 2 + shift_y ** 2)
    used = 0
    for row in np.asarray(pieces_xy, np.float64).reshape(-1, 4):
        profile = cross_profile(intensity, row[:2], row[2:], reach)
        if profile is None:
            continue
        curve = sum(symmetry_curve(profile[reach - h - search:reach + h + search + 1], h) for h in halves)
        axis = (row[2:] - row[:2]) / np.hypot(*(row[2:] - row[:2]))
        across = -axis[1] * shift_x + axis[0] * shift_y  # the shift along the piece's left normal
        centres = np.arange(len(curve)) - (len(curve) - 1) / 2
        total = total + np.interp(across, centres, curve)
        used += 1
    if not used:
        return np.zeros(2), 0
    best = np.unravel_index(np.argmax(total), total.shape)
    return np.array([shift_x[best], shift_y[best]]), used


def window_margin_px(half_px=PROFILE_HALF_PX, search_px: int = SEARCH_PX) -> float:
    """Room (px) that :func:`estimate_shift` needs around the pieces' ends."""
    return float(np.max(half_px)) + np.ceil(search_px * np.sqrt(2.0)) + 2.0


def _bilinear(image: np.ndarray, cols: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Bilinear samples at fractional array positions (NaN outside)."""
    height, width = image.shape
    c0, r0 = np.floor(cols).astype(np.int64), np.floor(rows).astype(np.int64)
    inside = (c0 >= 0) & (r0 >= 0) & (c0 + 1 < width) & (r0 + 1 < height)
    c0, r0 = np.where(inside, c0, 0), np.where(inside, r0, 0)
    fc, fr = cols - c0, rows - r0
    value = ((1 - fr) * ((1 - fc) * image[r0, c0] + fc * image[r0, c0 + 1])
             + fr * ((1 - fc) * image[r0 + 1, c0] + fc * image[r0 + 1, c0 + 1]))
    return np.where(inside, value, np.nan)
