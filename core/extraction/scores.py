"""Link scores: how well each candidate link follows the object (CPU, numba).

For a link ``P -> Q`` of length ``l``, direction ``e`` and left normal ``n_e``,
the gradient ``g`` is sampled bilinearly at the midpoints of
``K = max(2, ceil(l))`` equal pieces and the score is ``sum_k w(s_k) l / K``:

- ``edge``: ``w(s) = |g(s) . n_e|``;
- ``ribbon`` of full width ``2 r``: the edge responses ``a``, ``b`` of
  ``g(s + r n_e) . n_e`` and ``g(s - r n_e) . n_e`` after the polarity, then
  ``w(s) = (a + b) / 2`` (``mean``) or ``sqrt(a b)`` (``geometric``).

A bilinear neighbour outside the window counts 0.  A link from or to an
excluded candidate (one off the raster) scores :func:`excluded_link_score`,
so that the DP takes it only where nothing else is feasible.  The CUDA twin is
``gpu.polyline.kernels_scores``; ``tests/naive_scores.py`` is the loop
reference of both.  Notes: docs/notes/extraction-and-polyline.md, "Link scores".
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from core.cancel import check, flag_of
from core.extraction.options import COMBINES, MODES, POLARITIES, ScoringOptions
from core.parallel import PARALLEL_LOCK, cancel_requested

__all__ = ["excluded_flags", "excluded_link_score", "link_score_tables", "split_tables", "stage_scores"]

#: float32's largest value: an excluded link's score stays a finite float32 in every table and sum.
_FLOAT32_MAX = float(np.finfo(np.float32).max)

_EDGE = MODES.index("edge")
_ANY, _BRIGHT = POLARITIES.index("any"), POLARITIES.index("bright")
_MEAN = COMBINES.index("mean")


# Reassociation lets LLVM vectorise the sample loops (2-3x faster); NaN/inf
# semantics stay IEEE (no 'nnan'/'ninf'), and the order of a float sum is all
# that changes, well within float32 tolerance of the loop reference.
_FASTMATH = {"reassoc", "contract", "arcp", "nsz"}


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _normal_gradient(gx, gy, col_off, row_off, inv_step, x, y, nx, ny):
    """Bilinearly interpolated ``g(x, y) . (nx, ny)``; outside neighbours count 0."""
    u = (x - col_off - 0.5) * inv_step
    v = (y - row_off - 0.5) * inv_step
    fj = math.floor(u)
    fi = math.floor(v)
    fu = u - fj
    fv = v - fi
    i0 = int(fi)
    j0 = int(fj)
    height, width = gx.shape
    if 0 <= i0 and i0 + 1 < height and 0 <= j0 and j0 + 1 < width:  # the common case
        top_left = gx[i0, j0] * nx + gy[i0, j0] * ny
        top_right = gx[i0, j0 + 1] * nx + gy[i0, j0 + 1] * ny
        bottom_left = gx[i0 + 1, j0] * nx + gy[i0 + 1, j0] * ny
        bottom_right = gx[i0 + 1, j0 + 1] * nx + gy[i0 + 1, j0 + 1] * ny
        top = (1.0 - fu) * top_left + fu * top_right
        return (1.0 - fv) * top + fv * ((1.0 - fu) * bottom_left + fu * bottom_right)
    total = 0.0
    for di in range(2):
        i = i0 + di
        if i < 0 or i >= height:
            continue
        wi = fv if di == 1 else 1.0 - fv
        for dj in range(2):
            j = j0 + dj
            if j < 0 or j >= width:
                continue
            wj = fu if dj == 1 else 1.0 - fu
            total += wi * wj * (gx[i, j] * nx + gy[i, j] * ny)
    return total


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _ribbon_weight(g_plus, g_minus, polarity, combine):
    """``w(s)`` of a ribbon sample from the normal gradients at its two edges."""
    if polarity == _ANY:
        a, b = abs(g_plus), abs(g_minus)
    elif polarity == _BRIGHT:
        a, b = max(0.0, -g_plus), max(0.0, g_minus)
    else:
        a, b = max(0.0, g_plus), max(0.0, -g_minus)
    if combine == _MEAN:
        return 0.5 * (a + b)
    return math.sqrt(a * b)


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _link_score(gx, gy, col_off, row_off, inv_step, px, py, qx, qy, mode, radius, polarity, combine):
    """Score of the link ``(px, py) -> (qx, qy)`` (float64)."""
    dx = qx - px
    dy = qy - py
    length = math.sqrt(dx * dx + dy * dy)
    if length == 0.0:
        return 0.0
    n_samples = max(2, int(math.ceil(length)))
    nx = -dy / length
    ny = dx / length
    total = 0.0
    for k in range(n_samples):
        t = (k + 0.5) / n_samples
        sx = px + t * dx
        sy = py + t * dy
        if mode == _EDGE:
            total += abs(_normal_gradient(gx, gy, col_off, row_off, inv_step, sx, sy, nx, ny))
            continue
        g_plus = _normal_gradient(gx, gy, col_off, row_off, inv_step, sx + radius * nx, sy + radius * ny, nx, ny)
        g_minus = _normal_gradient(gx, gy, col_off, row_off, inv_step, sx - radius * nx, sy - radius * ny, nx, ny)
        total += _ribbon_weight(g_plus, g_minus, polarity, combine)
    return total * length / n_samples


@njit(cache=True, nogil=True, parallel=True, fastmath=_FASTMATH)
def _score_pairs(gx, gy, col_off, row_off, inv_step, points, excluded, excluded_score, stages, mode, radius,
                 polarity, combine, out, cancel_flag):
    """Score every link of every stage in one parallel loop over all (source, target) pairs.

    ``stages[s] = (first source, n sources, first target, n targets)`` index
    ``points`` (P, 2) and ``excluded`` (P,) bool; stage ``s``'s scores follow
    those of the stages before it in ``out``, row-major, ``excluded_score`` for
    a link from or to an excluded point.  Once ``cancel_flag[0]`` is set the
    links left are skipped and ``out`` is garbage.
    """
    n_stages = stages.shape[0]
    ends = np.empty(n_stages, dtype=np.int64)
    total = 0
    for s in range(n_stages):
        total += stages[s, 1] * stages[s, 3]
        ends[s] = total
    for flat in prange(total):
        if cancel_requested(cancel_flag):  # one byte per link: nothing beside the link's samples
            continue
        s = np.searchsorted(ends, flat, side="right")
        n_to = stages[s, 3]
        rest = flat - (ends[s] - stages[s, 1] * n_to)
        i = stages[s, 0] + rest // n_to
        j = stages[s, 2] + rest % n_to
        if excluded[i] or excluded[j]:
            out[flat] = excluded_score
            continue
        out[flat] = _link_score(
            gx, gy, col_off, row_off, inv_step, points[i, 0], points[i, 1], points[j, 0], points[j, 1],
            mode, radius, polarity, combine,
        )


def _score(gradient, points, stages, options: ScoringOptions, cancel=None, excluded=None,
           excluded_score=0.0) -> np.ndarray:
    """Flat float32 scores of ``stages`` over ``points`` (see :func:`_score_pairs`); ``excluded`` (P,) or None."""
    if not isinstance(options, ScoringOptions):
        raise TypeError(f"options must be a core.extraction.options.ScoringOptions; got {type(options).__name__}")
    codes = options.kernel_codes()
    out = np.empty(int((stages[:, 1] * stages[:, 3]).sum()), dtype=np.float32)
    gx = np.ascontiguousarray(gradient.gx, dtype=np.float32)
    gy = np.ascontiguousarray(gradient.gy, dtype=np.float32)
    excluded = np.zeros(len(points), np.bool_) if excluded is None else excluded_flags(excluded, len(points))
    with PARALLEL_LOCK:
        _score_pairs(
            gx, gy, float(gradient.col_off), float(gradient.row_off), 1.0 / float(gradient.step_px),
            np.ascontiguousarray(points, dtype=np.float64), excluded, float(excluded_score), stages, codes.mode,
            codes.radius_px, codes.polarity, codes.combine, out, flag_of(cancel),
        )
    check(cancel)
    return out


def stage_scores(gradient, sources, targets, options: ScoringOptions = ScoringOptions()) -> np.ndarray:
    """Scores of every link of ``S`` independent stages.

    Parameters
    ----------
    gradient : core.extraction.gradient.GradientWindow
    sources : (S, n_from, 2) float ndarray
        ``(x, y)`` pixel positions of the link start points of ``S`` stages.
    targets : (S, n_to, 2) float ndarray
        ``(x, y)`` of the link end points of the same stages.
    options : ScoringOptions
        Default: the edge mode.

    Returns
    -------
    (S, n_from, n_to) float32 ndarray
        ``scores[s, i, j]`` scores the link ``sources[s, i] -> targets[s, j]``.
    """
    sources, targets = np.asarray(sources, dtype=np.float64), np.asarray(targets, dtype=np.float64)
    if sources.ndim != 3 or targets.ndim != 3 or sources.shape[2] != 2 or targets.shape[2] != 2:
        raise ValueError(f"sources and targets must be (S, n, 2); got {sources.shape} and {targets.shape}")
    if sources.shape[0] != targets.shape[0]:
        raise ValueError("sources and targets must have the same number of stages; "
                         f"got {sources.shape} and {targets.shape}")
    n_stages, n_from, n_to = sources.shape[0], sources.shape[1], targets.shape[1]
    s = np.arange(n_stages, dtype=np.int64)
    stages = np.stack([s * n_from, np.full_like(s, n_from), n_stages * n_from + s * n_to, np.full_like(s, n_to)], 1)
    points = np.concatenate([sources.reshape(-1, 2), targets.reshape(-1, 2)])
    return _score(gradient, points, stages, options).reshape(n_stages, n_from, n_to)


def link_score_tables(gradient, guides, options: ScoringOptions = ScoringOptions(), cancel=None, excluded=None):
    """Score tables of every link between the layers of the guides.

    Parameters
    ----------
    gradient : core.extraction.gradient.GradientWindow
        Gradient around the guides.
    guides : core.extraction.guides.Guides
    options : ScoringOptions
        Default: the edge mode.
    cancel : core.cancel.CancelToken, optional
        Stops the scoring early (raising core.cancel.Cancelled).
    excluded : (n_points,) bool array_like, optional
        One flag per candidate point, layer after layer (``guides.layer_points()``
        concatenated, e.g. ``guides.off_raster(size)``): links from or to a
        flagged point score :func:`excluded_link_score` and are not sampled.

    Returns
    -------
    first : (n0, d) float32 ndarray
        Links from the start layer to guide 1.
    links : (m - 1, d, d) float32 ndarray
        ``links[t, p, q]``: point ``p`` of guide ``t + 1`` to point ``q`` of guide ``t + 2``.
    last : (d, n1) float32 ndarray
        Links from guide ``m`` to the end layer.
    """
    layers = guides.layer_points()
    sizes = np.array([len(layer) for layer in layers], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    stages = np.stack([starts[:-1], sizes[:-1], starts[1:], sizes[1:]], axis=1)
    excluded_score = 0.0 if excluded is None else excluded_link_score(gradient, guides)
    flat = _score(gradient, np.concatenate(layers), stages, options, cancel, excluded, excluded_score)
    return split_tables(flat, sizes, guides.n_guides)


def excluded_link_score(gradient, guides) -> float:
    """The score of a link from or to an excluded candidate: below minus any polyline's score without one.

    Every other link scores in ``[0, max |g| * length]``, so a polyline that
    avoids the excluded points scores ``>= 0`` and one that touches them
    ``< 0``: the DP takes them only where nothing else is feasible.

    Parameters
    ----------
    gradient : core.extraction.gradient.GradientWindow
    guides : core.extraction.guides.Guides

    Returns
    -------
    float
        Negative, finite in float32 even summed over the polyline's links.
    """
    largest = max(np.abs(offsets).max() for offsets in (guides.start_offsets, guides.offsets, guides.end_offsets))
    longest_link_px = float(np.hypot(guides.spacing, 2.0 * largest))
    g_max = float(np.sqrt(np.max(np.square(gradient.gx, dtype=np.float64) + np.square(gradient.gy, dtype=np.float64))))
    links = guides.n_guides + 1
    bound = g_max * longest_link_px * links
    return -min(4.0 * bound + 1.0, _FLOAT32_MAX / (4.0 * links))


def excluded_flags(excluded, n_points: int) -> np.ndarray:
    """``excluded`` as a contiguous (n_points,) bool array, checked."""
    flags = np.ascontiguousarray(excluded, dtype=np.bool_).reshape(-1)
    if flags.shape != (n_points,):
        raise ValueError(f"excluded must have one flag per candidate point ({n_points}); got {flags.shape}")
    return flags


def split_tables(flat, sizes, m):
    """``(first, links, last)`` views of the flat scores of the chain of layers."""
    n0, d, n1 = sizes[0], sizes[1], sizes[-1]
    first = flat[: n0 * d].reshape(n0, d)
    links = flat[n0 * d : n0 * d + (m - 1) * d * d].reshape(m - 1, d, d)
    last = flat[n0 * d + (m - 1) * d * d :].reshape(d, n1)
    return first, links, last
