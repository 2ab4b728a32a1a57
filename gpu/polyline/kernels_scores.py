"""CUDA twin of core/extraction/scores.py: the link score tables, one thread per link.

The objectives are :mod:`core.extraction.scores`': :func:`link_scores` for
the gradient modes, :func:`map_link_scores` for the adaptive mode's map.
Float precision and the complex64 gradient: docs/notes/extraction-and-polyline.md,
"Link scores".
"""

from __future__ import annotations

import math

from numba import cuda, float32

from core.extraction.map_scores import EXCLUDED_SCORE
from core.extraction.options import COMBINES, MODES, POLARITIES

#: Mode, polarity and combination codes: those of core.extraction.options.ScoringOptions.kernel_codes.
EDGE, RIBBON = (MODES.index(name) for name in ("edge", "ribbon"))
ANY, BRIGHT, DARK = (POLARITIES.index(name) for name in ("any", "bright", "dark"))
MEAN, GEOMETRIC = (COMBINES.index(name) for name in ("mean", "geometric"))


_ZERO = float32(0.0)
_ONE = float32(1.0)
_HALF = float32(0.5)


@cuda.jit(device=True)
def _corner(grad, i, j, nx, ny):
    """``g[i, j] . n`` (float32) for one bilinear corner; 0 outside the window."""
    if i < 0 or j < 0 or i >= grad.shape[0] or j >= grad.shape[1]:
        return _ZERO
    g = grad[i, j]
    return g.real * nx + g.imag * ny


@cuda.jit(device=True)
def _normal_gradient(grad, u, v, nx, ny):
    """Bilinear ``g . n`` at grid coordinates ``(u, v)`` (float64); weights in float32, 0 outside the window."""
    fj = math.floor(u)
    fi = math.floor(v)
    fu = float32(u - fj)
    fv = float32(v - fi)
    i0 = int(fi)
    j0 = int(fj)
    if 0 <= i0 and i0 + 1 < grad.shape[0] and 0 <= j0 and j0 + 1 < grad.shape[1]:  # the common case
        g = grad[i0, j0]
        top_left = g.real * nx + g.imag * ny
        g = grad[i0, j0 + 1]
        top_right = g.real * nx + g.imag * ny
        g = grad[i0 + 1, j0]
        bottom_left = g.real * nx + g.imag * ny
        g = grad[i0 + 1, j0 + 1]
        bottom_right = g.real * nx + g.imag * ny
    else:
        top_left = _corner(grad, i0, j0, nx, ny)
        top_right = _corner(grad, i0, j0 + 1, nx, ny)
        bottom_left = _corner(grad, i0 + 1, j0, nx, ny)
        bottom_right = _corner(grad, i0 + 1, j0 + 1, nx, ny)
    top = (_ONE - fu) * top_left + fu * top_right
    bottom = (_ONE - fu) * bottom_left + fu * bottom_right
    return (_ONE - fv) * top + fv * bottom


@cuda.jit(device=True)
def _sample_weight(grad, u, v, du, dv, nx, ny, mode, polarity, combine):
    """``w(s)`` of one sample at window coordinates (u, v); ``(du, dv) = r n_e`` (float64)."""
    if mode == EDGE:
        return abs(_normal_gradient(grad, u, v, nx, ny))
    g_plus = _normal_gradient(grad, u + du, v + dv, nx, ny)
    g_minus = _normal_gradient(grad, u - du, v - dv, nx, ny)
    if polarity == ANY:
        a, b = abs(g_plus), abs(g_minus)
    elif polarity == BRIGHT:
        a, b = max(_ZERO, -g_plus), max(_ZERO, g_minus)
    else:
        a, b = max(_ZERO, g_plus), max(_ZERO, -g_minus)
    if combine == MEAN:
        return _HALF * (a + b)
    return math.sqrt(a * b)


@cuda.jit(device=True)
def _link_score(grad, col_off, row_off, inv_step, px, py, qx, qy, mode, radius, polarity, combine):
    """Score of the link ``(px, py) -> (qx, qy)``, summed in float64; ``inv_step = 1 / step_px``."""
    dx = qx - px
    dy = qy - py
    length = math.sqrt(dx * dx + dy * dy)
    if length == 0.0:
        return 0.0
    n_samples = max(2, int(math.ceil(length)))
    nx = -dy / length
    ny = dx / length
    nx32 = float32(nx)
    ny32 = float32(ny)
    u0 = (px - col_off - 0.5) * inv_step
    v0 = (py - row_off - 0.5) * inv_step
    du = dx * inv_step
    dv = dy * inv_step
    inverse = 1.0 / n_samples  # one division per link, not per sample
    total = 0.0
    for k in range(n_samples):
        t = (k + 0.5) * inverse
        total += _sample_weight(
            grad, u0 + t * du, v0 + t * dv, radius * nx * inv_step, radius * ny * inv_step, nx32, ny32,
            mode, polarity, combine,
        )
    return total * length * inverse


@cuda.jit(cache=True)
def link_scores(
    grad, col_off, row_off, inv_step, points, excluded, excluded_score, n0, n1, mode, radius, polarity, combine,
    first, first_t, links, last
):
    """Score every link of every stage; grid-stride over all of them.

    Parameters
    ----------
    grad : (Hg, Wg) complex64
        ``gx + i gy``; element ``[i, j]`` sits at
        ``(col_off + 0.5 + j * step_px, row_off + 0.5 + i * step_px)``.
    col_off, row_off : float
    inv_step : float
        ``1 / step_px``.
    points : (m + 2, n_max, 2) float64
        ``(x, y)`` of the points of layer k in ``points[k, :n_k]``.
    excluded : (m + 2, n_max) uint8
        Nonzero: links from or to that point score ``excluded_score``.
    excluded_score : float
        core.extraction.scores.excluded_link_score.
    n0, n1 : int
        Points of the start and end layers.
    mode, radius, polarity, combine : int, float, int, int
        The kernel codes of core.extraction.options.ScoringOptions.
    first : (n0, d) float32
        Receives T0, and ``first_t`` (d, n0) its transpose.
    links : (>= m - 1, d, d) float32
        Receives T1..T(m-1) in ``links[:m - 1]``.
    last : (d, n1) float32
        Receives Tm.
    """
    m = points.shape[0] - 2
    d = first.shape[1]
    n_first = n0 * d
    n_inner = (m - 1) * d * d
    total = n_first + n_inner + d * n1
    for flat in range(cuda.grid(1), total, cuda.gridsize(1)):
        if flat < n_first:
            stage = 0
            i = flat // d
            j = flat - i * d
        elif flat < n_first + n_inner:
            rest = flat - n_first
            stage = 1 + rest // (d * d)
            rest -= (stage - 1) * d * d
            i = rest // d
            j = rest - i * d
        else:
            rest = flat - n_first - n_inner
            stage = m
            i = rest // n1
            j = rest - i * n1
        if excluded[stage, i] != 0 or excluded[stage + 1, j] != 0:
            score = excluded_score
        else:
            score = _link_score(
                grad, col_off, row_off, inv_step, points[stage, i, 0], points[stage, i, 1],
                points[stage + 1, j, 0], points[stage + 1, j, 1], mode, radius, polarity, combine,
            )
        if stage == 0:
            first[i, j] = score
            first_t[j, i] = score
        elif stage == m:
            last[i, j] = score
        else:
            links[stage - 1, i, j] = score


# --- The adaptive mode's map scores (core.extraction.scores.map_link_tables) ---------


@cuda.jit(device=True)
def _map_corner(values, i, j):
    """``values[i, j]``, 0 outside the map."""
    if i < 0 or j < 0 or i >= values.shape[0] or j >= values.shape[1]:
        return 0.0
    return values[i, j]


@cuda.jit(device=True)
def _map_value(values, col_off, row_off, x, y):
    """Bilinear ``values`` at pixel position ``(x, y)`` in float64; outside neighbours count 0."""
    u = x - col_off - 0.5
    v = y - row_off - 0.5
    fj = math.floor(u)
    fi = math.floor(v)
    fu = u - fj
    fv = v - fi
    i0 = int(fi)
    j0 = int(fj)
    if 0 <= i0 and i0 + 1 < values.shape[0] and 0 <= j0 and j0 + 1 < values.shape[1]:  # the common case
        top_left, top_right = values[i0, j0], values[i0, j0 + 1]
        bottom_left, bottom_right = values[i0 + 1, j0], values[i0 + 1, j0 + 1]
    else:
        top_left, top_right = _map_corner(values, i0, j0), _map_corner(values, i0, j0 + 1)
        bottom_left, bottom_right = _map_corner(values, i0 + 1, j0), _map_corner(values, i0 + 1, j0 + 1)
    top = (1.0 - fu) * top_left + fu * top_right
    return (1.0 - fv) * top + fv * ((1.0 - fu) * bottom_left + fu * bottom_right)


@cuda.jit(device=True)
def _map_link_score(values, col_off, row_off, px, py, qx, qy, base, nx, ny, lateral_penalty, sample_step):
    """``integral (map - base)`` along the link minus ``lateral_penalty`` per px it moves along ``(nx, ny)``."""
    dx = qx - px
    dy = qy - py
    length = math.sqrt(dx * dx + dy * dy)
    if length == 0.0:
        return 0.0
    n_samples = max(2, int(math.ceil(length / sample_step)))
    inverse = 1.0 / n_samples  # one division per link, not per sample
    total = 0.0
    for k in range(n_samples):
        t = (k + 0.5) * inverse
        total += _map_value(values, col_off, row_off, px + t * dx, py + t * dy) - base
    return total * length * inverse - lateral_penalty * abs(dx * nx + dy * ny)


@cuda.jit(cache=True)
def map_link_scores(values, col_off, row_off, points, excluded, m, n0, n1, base, nx, ny, lateral_penalty,
                    sample_step, out):
    """Score every link of the chain of layers over a map; grid-stride over all of them.

    Parameters
    ----------
    values : (H, W) float32
        The map; element ``[i, j]`` sits at ``(col_off + 0.5 + j, row_off + 0.5 + i)``.
    col_off, row_off : float
    points : (n0 + m d + n1, 2) float64
        ``(x, y)`` of the start layer, the m guides of d points, the end layer.
    excluded : (n0 + m d + n1,) uint8
        Nonzero: links from or to that point score EXCLUDED_SCORE.
    m, n0, n1 : int
        Guides, points of the start and end layers.
    base, nx, ny, lateral_penalty, sample_step : float
        As core.extraction.map_scores.map_link_tables; ``(nx, ny)`` is the guides' normal.
    out : (n0 d + (m - 1) d d + d n1,) float32
        Receives the tables T0, T1..T(m-1), Tm flattened row-major, one after the other.
    """
    d = (points.shape[0] - n0 - n1) // m
    n_first = n0 * d
    n_inner = (m - 1) * d * d
    for flat in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        if flat < n_first:  # start layer -> guide 1
            i = flat // d
            source = i
            target = n0 + flat - i * d
        elif flat < n_first + n_inner:  # guide t + 1 -> guide t + 2
            rest = flat - n_first
            t = rest // (d * d)
            rest -= t * d * d
            i = rest // d
            source = n0 + t * d + i
            target = n0 + (t + 1) * d + rest - i * d
        else:  # guide m -> end layer
            rest = flat - n_first - n_inner
            i = rest // n1
            source = n0 + (m - 1) * d + i
            target = n0 + m * d + rest - i * n1
        if excluded[source] != 0 or excluded[target] != 0:
            out[flat] = EXCLUDED_SCORE
        else:
            out[flat] = _map_link_score(values, col_off, row_off, points[source, 0], points[source, 1],
                                        points[target, 0], points[target, 1], base, nx, ny, lateral_penalty,
                                        sample_step)


@cuda.jit(device=True)
def _map_sum(values, col_off, row_off, px, py, qx, qy):
    """``(sum of map samples, count)`` along a segment, one sample per pixel of length (at least 2)."""
    dx = qx - px
    dy = qy - py
    n_samples = max(2, int(math.ceil(math.sqrt(dx * dx + dy * dy))))
    total = 0.0
    for k in range(n_samples):
        t = (k + 0.5) / n_samples
        total += _map_value(values, col_off, row_off, px + t * dx, py + t * dy)
    return total, n_samples


@cuda.jit(cache=True)
def corner_means(values, col_off, row_off, ax, ay, bx, by, corners, out):
    """Mean map value along ``a -> corner -> b`` for every corner (twin of core.extraction.scores); grid-stride."""
    start = cuda.grid(1)
    for i in range(start, corners.shape[0], cuda.gridsize(1)):
        first, n_first = _map_sum(values, col_off, row_off, ax, ay, corners[i, 0], corners[i, 1])
        second, n_second = _map_sum(values, col_off, row_off, corners[i, 0], corners[i, 1], bx, by)
        out[i] = (first + second) / (n_first + n_second)
