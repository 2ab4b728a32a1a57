"""Slow, loop-based reference of the link score (no numba), written from the formula.

Shared by the CPU (core/extraction/scores.py) and GPU (gpu/) tests.  It follows the text of
/work/notes/interfaces.md literally, one sample and one neighbour at a time.
"""

from __future__ import annotations

import math


def gradient_at(gx, gy, col_off, row_off, x, y, step_px=1.0):
    """Bilinear ``(gx, gy)`` at pixel position ``(x, y)``; neighbours outside the window count 0.

    Element ``[i][j]`` of the grid sits at ``(col_off + 0.5 + j step_px, row_off + 0.5 + i step_px)``.
    """
    u = (x - col_off - 0.5) / step_px
    v = (y - row_off - 0.5) / step_px
    j0, i0 = math.floor(u), math.floor(v)
    fu, fv = u - j0, v - i0
    height, width = len(gx), len(gx[0])
    value_x = value_y = 0.0
    for i, wi in ((i0, 1.0 - fv), (i0 + 1, fv)):
        for j, wj in ((j0, 1.0 - fu), (j0 + 1, fu)):
            if 0 <= i < height and 0 <= j < width:
                value_x += wi * wj * float(gx[i][j])
                value_y += wi * wj * float(gy[i][j])
    return value_x, value_y


def link_score(gx, gy, col_off, row_off, p, q, mode="edge", ribbon_width_px=0.0, polarity="any", step_px=1.0,
               ribbon_combine="mean"):
    """Score of the link ``p -> q`` (pixel ``(x, y)`` pairs) as a Python float."""
    (px, py), (qx, qy) = p, q
    length = math.hypot(qx - px, qy - py)
    if length == 0.0:
        return 0.0
    n_samples = max(2, math.ceil(length))
    ex, ey = (qx - px) / length, (qy - py) / length
    nx, ny = -ey, ex
    r = ribbon_width_px / 2.0

    def along_normal(x, y):
        g = gradient_at(gx, gy, col_off, row_off, x, y, step_px)
        return g[0] * nx + g[1] * ny

    total = 0.0
    for k in range(n_samples):
        sx = px + (k + 0.5) / n_samples * (qx - px)
        sy = py + (k + 0.5) / n_samples * (qy - py)
        if mode == "edge" or r == 0:  # DESIGN: a ribbon of width 0 is the edge mode
            w = abs(along_normal(sx, sy))
        else:
            g_plus = along_normal(sx + r * nx, sy + r * ny)
            g_minus = along_normal(sx - r * nx, sy - r * ny)
            if polarity == "any":
                a, b = abs(g_plus), abs(g_minus)
            elif polarity == "bright":
                a, b = max(0.0, -g_plus), max(0.0, g_minus)
            else:
                a, b = max(0.0, g_plus), max(0.0, -g_minus)
            w = (a + b) / 2 if ribbon_combine == "mean" else math.sqrt(a * b)
        total += w * length / n_samples
    return total


def score_tables(gx, gy, col_off, row_off, layers, mode="edge", ribbon_width_px=0.0, polarity="any", step_px=1.0,
                 ribbon_combine="mean"):
    """All tables of a chain of layers: a list of ``len(layers) - 1`` nested lists [i][j]."""
    tables = []
    for sources, targets in zip(layers[:-1], layers[1:]):
        tables.append(
            [
                [link_score(gx, gy, col_off, row_off, p, q, mode, ribbon_width_px, polarity, step_px, ribbon_combine)
                 for q in targets]
                for p in sources
            ]
        )
    return tables
