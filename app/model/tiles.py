"""Tile pyramid arithmetic, a byte-bounded LRU cache and the contrast stretch (no Qt).

At level ``L`` a tile of :data:`TILE_PX` output pixels covers
``TILE_PX * 2**L`` raster pixels a side and is one decimated read, so memory
and read cost depend on the view's size, never on the raster's.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

__all__ = [
    "TILE_PX",
    "TileKey",
    "Stretch",
    "TileCache",
    "level_for_scale",
    "max_level",
    "tile_window",
    "visible_tiles",
    "compute_stretch",
    "stretch_to_rgba",
]

TILE_PX = 256


@dataclass(frozen=True)
class TileKey:
    """One tile: pyramid ``level``, tile ``row`` and ``col``, and the display ``bands``.

    ``bands`` is None for the intensity band or a tuple of 1-based bands (one
    for a grey band, three for RGB).
    """

    level: int
    row: int
    col: int
    bands: tuple[int, ...] | None = None


def max_level(width: int, height: int) -> int:
    """The coarsest useful level: the whole raster fits in one tile."""
    return max(0, math.ceil(math.log2(max(width, height) / TILE_PX))) if max(width, height) > TILE_PX else 0


def level_for_scale(scale: float, top_level: int) -> int:
    """The largest level ``L <= top_level`` with ``2**L <= 1 / scale`` (view pixels per raster pixel)."""
    if scale <= 0 or not math.isfinite(scale):
        raise ValueError(f"scale must be a positive finite number; got {scale}")
    if scale >= 1.0:
        return 0
    return int(min(top_level, math.floor(math.log2(1.0 / scale) + 1e-9)))


def tile_window(key: TileKey, width: int, height: int) -> tuple[int, int, int, int, int, int]:
    """The raster window and output size of a tile, clipped, as ``Raster.read_decimated`` takes them.

    Returns ``(col_off, row_off, win_width, win_height, out_width, out_height)``.
    """
    factor = 2**key.level
    span = TILE_PX * factor
    col_off, row_off = key.col * span, key.row * span
    if not (0 <= col_off < width and 0 <= row_off < height):
        raise ValueError(f"tile {key} lies outside the raster of {width} x {height} pixels")
    win_w, win_h = min(span, width - col_off), min(span, height - row_off)
    return col_off, row_off, win_w, win_h, max(1, math.ceil(win_w / factor)), max(1, math.ceil(win_h / factor))


def visible_tiles(level: int, rect: tuple[float, float, float, float], width: int,
                  height: int) -> list[tuple[int, int]]:
    """Tiles (row, col) of ``level`` that meet ``rect`` = (x0, y0, x1, y1) in raster pixels.

    Ordered from the rectangle's centre outwards, the order in which they
    should be read.
    """
    span = TILE_PX * 2**level
    x0, y0, x1, y1 = rect
    c0, c1 = max(0, math.floor(x0 / span)), min(math.ceil(width / span), math.ceil(x1 / span))
    r0, r1 = max(0, math.floor(y0 / span)), min(math.ceil(height / span), math.ceil(y1 / span))
    cx, cy = (x0 + x1) / 2 / span - 0.5, (y0 + y1) / 2 / span - 0.5
    tiles = [(r, c) for r in range(r0, r1) for c in range(c0, c1)]
    return sorted(tiles, key=lambda rc: (rc[0] - cy) ** 2 + (rc[1] - cx) ** 2)


@dataclass(frozen=True)
class Stretch:
    """A linear contrast stretch: ``low`` maps to black, ``high`` to white (raster units).

    Floats: one stretch for every band; tuples: one pair per band of a composite.
    """

    low: float | tuple[float, ...]
    high: float | tuple[float, ...]

    def __post_init__(self):
        low, high = np.atleast_1d(np.asarray(self.low, np.float64)), np.atleast_1d(np.asarray(self.high, np.float64))
        if low.shape != high.shape or not (np.isfinite(low).all() and np.isfinite(high).all()):
            raise ValueError(f"stretch limits must be finite and as many low as high; got {self.low}, {self.high}")
        high = np.where(high <= low, low + 1.0, high)
        object.__setattr__(self, "high", float(high[0]) if np.ndim(self.high) == 0 else tuple(high.tolist()))


def compute_stretch(sample: np.ndarray, low_percent: float = 1.0, high_percent: float = 99.0,
                    per_band: bool = False) -> Stretch:
    """Percentile stretch of an (h, w) or (h, w, k) sample (NaN = no data).

    One stretch for all bands keeps the colour balance of RGB photographs;
    ``per_band`` stretches each band of an (h, w, k) sample to its own
    percentiles (multispectral bands, whose ranges differ: a shared stretch
    casts the composite in the widest band's colour).
    """
    if not (0.0 <= low_percent < high_percent <= 100.0):
        raise ValueError(
            f"percentiles must satisfy 0 <= low_percent < high_percent <= 100; got {low_percent}, {high_percent}")
    sample = np.asarray(sample, dtype=np.float64)
    if per_band and sample.ndim == 3 and sample.shape[2] > 1:
        pairs = [compute_stretch(sample[:, :, k], low_percent, high_percent) for k in range(sample.shape[2])]
        return Stretch(tuple(p.low for p in pairs), tuple(p.high for p in pairs))
    values = sample.ravel()
    values = values[np.isfinite(values)]
    if values.size == 0:
        return Stretch(0.0, 1.0)
    low, high = np.percentile(values, [low_percent, high_percent])
    return Stretch(float(low), float(high))


def stretch_to_rgba(data: np.ndarray, stretch: Stretch) -> np.ndarray:
    """(h, w, 4) uint8 B, G, R, A display pixels of (h, w[, k]) data: a little-endian ARGB32_Premultiplied QImage.

    Alpha is 0 where there is no data, 255 elsewhere.
    """
    if data.ndim == 2:
        data = data[:, :, None]
    if data.ndim != 3 or data.shape[2] not in (1, 3):
        raise ValueError(f"data must be (h, w), (h, w, 1) or (h, w, 3); got shape {data.shape}")
    low, high = np.asarray(stretch.low, np.float32), np.asarray(stretch.high, np.float32)  # (per band: (k,))
    if low.ndim and low.shape[0] != data.shape[2]:
        raise ValueError(f"a stretch of {low.shape[0]} bands for data of {data.shape[2]}")
    scaled = (data.astype(np.float32, copy=False) - low) * (np.float32(255.0) / (high - low))
    valid = np.all(np.isfinite(scaled), axis=2)
    grey = np.clip(np.nan_to_num(scaled, nan=0.0), 0.0, 255.0).astype(np.uint8)
    out = np.zeros(data.shape[:2] + (4,), dtype=np.uint8)
    out[:, :, :3] = grey[:, :, ::-1] if grey.shape[2] == 3 else grey
    out[:, :, 3] = np.where(valid, 255, 0)
    out[~valid, :3] = 0  # premultiplied: transparent pixels are all zero
    return out


class TileCache:
    """Thread-safe least-recently-used mapping whose total size stays within ``max_bytes``."""

    def __init__(self, max_bytes: int):
        if max_bytes <= 0:
            raise ValueError(f"max_bytes must be > 0; got {max_bytes}")
        self.max_bytes = int(max_bytes)
        self.total_bytes = 0
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key) -> bool:
        return key in self._entries

    def get(self, key, default=None):
        """The value for ``key`` (and mark it recently used), or ``default``."""
        with self._lock:
            if key not in self._entries:
                return default
            self._entries.move_to_end(key)
            return self._entries[key][0]

    def put(self, key, value, nbytes: int) -> None:
        """Store ``value`` counted as ``nbytes`` bytes, evicting old entries if needed."""
        with self._lock:
            if key in self._entries:
                self.total_bytes -= self._entries.pop(key)[1]
            self._entries[key] = (value, int(nbytes))
            self.total_bytes += int(nbytes)
            while self.total_bytes > self.max_bytes and len(self._entries) > 1:
                _, (_, size) = self._entries.popitem(last=False)
                self.total_bytes -= size

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._entries.clear()
            self.total_bytes = 0
