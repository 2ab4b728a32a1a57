"""Small ``window`` problems padded to a few shapes, so that the device workspace knows the next one.

A click's DPs are small and their shapes follow the span and the corridor
(the refinement's points per guide ran from 35 to 105 over 90 clicks), so
nearly every solve met a new shape: new device arrays, new launch plans,
launches not yet packed (BENCHMARKS.md, "The public click on the GPU").
Rounded up to a multiple of :data:`POINTS_STEP` points per guide and
:data:`ENDS_STEP` start and end candidates, they share a few shapes.

The padding changes nothing: a padded point's links have empty turn ranges
(``lo > hi``) as their next point and lie outside every real link's range as
their previous point, so no path reaches or leaves one; the real points keep
their indices, the range-maximum blocks start at index 0 whatever the length,
and the merge breaks ties by ``q * n_end + r``, the same order of real links.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from gpu.polyline.kernels_window import shared_bytes

__all__ = ["padded", "POINTS_STEP", "ENDS_STEP", "MAX_POINTS"]

#: Points per guide are rounded up to a multiple of this.
POINTS_STEP = 16
#: Start and end candidates are rounded up to a multiple of this.
ENDS_STEP = 8
#: Problems with more points per guide keep their shape (each is costly enough to pay for its own plan, and
#: the host computes the padded problem's turn ranges).
MAX_POINTS = 128


def _round_up(n: int, step: int) -> int:
    return -(-n // step) * step


def _empty_ranges(rows: int, cols: int) -> np.ndarray:
    """(2, rows, cols) int32 pairs ``lo = 1 > hi = 0``: no previous point."""
    pair = np.zeros((2, rows, cols), np.int32)
    pair[0] = 1
    return pair


def padded(prepared, shared_limit: int, bits: int):
    """``prepared`` with its layers padded (a PreparedProblem whose turn ranges are set), or itself.

    ``shared_limit`` and ``bits`` are the ``window`` kernel's shared-memory bound and block bits: a padding
    that would not fit is not made.  The tables' padded entries are 0, so the device's check for inf and NaN
    reads the same.  The host computes the turn ranges here if it had not.
    """
    m, d = prepared.n_guides, prepared.n_points
    n0, n1 = prepared.first.shape[0], prepared.last.shape[1]
    size, n0_pad, n1_pad = _round_up(d, POINTS_STEP), _round_up(n0, ENDS_STEP), _round_up(n1, ENDS_STEP)
    if (size, n0_pad, n1_pad) == (d, n0, n1) or d > MAX_POINTS \
            or shared_bytes(max(size, n0_pad), bits) > shared_limit:
        return prepared
    first = np.zeros((n0_pad, size), np.float32)
    first[:n0, :d] = prepared.first
    links = np.zeros((m - 1, size, size), np.float32)
    links[:, :d, :d] = prepared.links
    last = np.zeros((size, n1_pad), np.float32)
    last[:d, :n1] = prepared.last
    ranges, done = [], {}
    for k, (lo, hi) in enumerate(prepared.ranges32, start=1):
        key = (id(lo), k == m)
        if key not in done:  # the inner layers share one pair
            pair = _empty_ranges(size, n1_pad if k == m else size)
            pair[0, :d, : lo.shape[1]] = lo
            pair[1, :d, : hi.shape[1]] = hi
            done[key] = (pair[0], pair[1])
        ranges.append(done[key])
    step = prepared.spacing
    grown = dataclasses.replace(
        prepared, first=first, links=links, last=last,
        offsets=_grown(prepared.offsets, size, step), start_offsets=_grown(prepared.start_offsets, n0_pad, step),
        end_offsets=_grown(prepared.end_offsets, n1_pad, step),
    )
    vars(grown)["ranges32"] = tuple(ranges)  # the cached property, set: the device must not compute its own
    return grown


def _grown(offsets: np.ndarray, size: int, step: float) -> np.ndarray:
    """``offsets`` continued to ``size`` entries past its last (non-decreasing, as a layer's must be)."""
    extra = offsets[-1] + step * np.arange(1, size - offsets.shape[0] + 1)
    return np.concatenate((offsets, extra))
