"""Lines cut into pieces between their vertices, on a graph of shared nodes.

Vertices at the same position (within NODE_TOLERANCE_PX) are one node, so
lines that met before refinement meet after it: each node gets one refined
position (core.batch.joints).  Long straight parts are cut into pieces of at
most ``max_piece_px``; parts shorter than ``min_piece_px`` are not extracted.
Given the imagery's ``bounds_px``, a straight part is cut only where it can
touch them: its stretches beyond are one piece each, which no raster holds
(a line 10^7 px long far off the image planned 10^5 pieces).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.batch.joints import SPREAD_PASSES

__all__ = ["MIN_PIECE_PX", "NODE_TOLERANCE_PX", "PiecePlan", "plan_pieces"]

#: Vertices closer than this (working px) share a node.
NODE_TOLERANCE_PX = 1e-3
#: The shortest piece (px) by default: shorter parts are kept as they are, not extracted.
MIN_PIECE_PX = 8.0
#: Cuts kept either side of a stretch not cut: a node's move spreads SPREAD_PASSES pieces, so every node it reaches
#: is where it was without the stretches, and moves as it did.
_KEPT_CUTS = SPREAD_PASSES + 1


@dataclass(eq=False)
class PiecePlan:
    """The pieces of a set of line parts.

    Attributes
    ----------
    nodes_px : (n, 2) float64 ndarray
        Node positions (working px).
    pieces : (p, 2) int64 ndarray
        Start and end node of each piece.
    extract : (p,) bool ndarray
        Whether a piece is long enough to be extracted.
    part_nodes : list of (k,) int64 ndarray
        Per part, its nodes in order (pieces between consecutive ones).
    part_pieces : list of (k - 1,) int64 ndarray
        Per part, its pieces in order.
    """

    nodes_px: np.ndarray
    pieces: np.ndarray
    extract: np.ndarray
    part_nodes: list
    part_pieces: list


def plan_pieces(parts_px, max_piece_px: float = 100.0, min_piece_px: float = MIN_PIECE_PX,
                bounds_px=None) -> PiecePlan:
    """Cut line parts into pieces between their (shared) vertices.

    Parameters
    ----------
    parts_px : sequence of (k, 2) float ndarray
        The parts' vertices in one pixel frame; repeated vertices are dropped.
    max_piece_px : float
        Longer straight parts are cut into equal pieces no longer than this.
    min_piece_px : float
        Pieces shorter than this are not extracted (their ends move with their neighbours).
    bounds_px : tuple of 4 float, optional
        ``(x0, y0, x1, y1)`` around everything that can be extracted (the rasters, with a margin).  A straight
        part is cut as without it where it comes within them; each stretch of it beyond them is one piece,
        extractable when its cuts would have been (so such a line's status is what it was).  None: cut everywhere.

    Returns
    -------
    PiecePlan
    """
    if not (max_piece_px > min_piece_px > 0):
        raise ValueError(f"max_piece_px ({max_piece_px:g}) must be more than min_piece_px ({min_piece_px:g}), the "
                         "shortest a piece may be, and that more than 0")
    nodes, index = [], {}
    pieces, part_nodes, part_pieces = [], [], []
    cut_lengths = {}  # piece -> the length of the cuts it stands for (a stretch beyond bounds_px)

    def node_of(xy, shared=True):
        key = tuple(np.round(np.asarray(xy) / NODE_TOLERANCE_PX).astype(np.int64)) if shared else None
        if key is not None and key in index:
            return index[key]
        nodes.append(np.asarray(xy, np.float64))
        if key is not None:
            index[key] = len(nodes) - 1
        return len(nodes) - 1

    for vertices in parts_px:
        chain = [node_of(v) for v in _distinct(np.asarray(vertices, np.float64))]
        ids, first = [chain[0]], len(pieces)
        for a, b in zip(chain[:-1], chain[1:]):
            cuts, stretches, cut_px = _subdivided(nodes, a, b, max_piece_px, node_of, bounds_px)
            cut_lengths.update((first + len(ids) - 1 + k, cut_px) for k in stretches)
            ids.extend(cuts)
        pieces.extend(zip(ids[:-1], ids[1:]))
        part_nodes.append(np.asarray(ids, np.int64))
        part_pieces.append(np.arange(first, len(pieces), dtype=np.int64))
    nodes_px = np.asarray(nodes, np.float64).reshape(-1, 2)
    pieces = np.asarray(pieces, np.int64).reshape(-1, 2)
    lengths = np.hypot(*(nodes_px[pieces[:, 1]] - nodes_px[pieces[:, 0]]).T) if len(pieces) else np.zeros(0)
    for piece, cut_px in cut_lengths.items():
        lengths[piece] = cut_px
    return PiecePlan(nodes_px, pieces, lengths >= min_piece_px, part_nodes, part_pieces)


def _distinct(vertices: np.ndarray) -> np.ndarray:
    """The vertices without consecutive repeats."""
    if len(vertices) < 2:
        return vertices
    keep = np.concatenate([[True], np.hypot(*np.diff(vertices, axis=0).T) > NODE_TOLERANCE_PX])
    return vertices[keep]


def _subdivided(nodes, a: int, b: int, max_piece_px: float, node_of, bounds_px) -> tuple[list[int], list[int], float]:
    """Nodes after ``a`` up to ``b``: ``b`` alone, or evenly spaced cut points (not shared) then ``b``.

    With ``bounds_px``, the cut points are made only where the link comes
    within them and next to its ends, :data:`_KEPT_CUTS` either side; returns
    the nodes, which of the pieces they make (0: from ``a`` to the first) are
    stretches standing for several cuts beyond the bounds, and the cuts' length.
    """
    length = float(np.hypot(*(nodes[b] - nodes[a])))
    count = max(1, math.ceil(length / max_piece_px))
    kept = range(1, count)
    if bounds_px is not None and count > 2 * _KEPT_CUTS:
        span = _inside_span(nodes[a], nodes[b], bounds_px)
        blocks = [(1, 0), (count, count - 1)]  # (first, last) cut of the stretches kept, before the margin
        if span is not None:
            blocks.append((math.floor(span[0] * count), math.ceil(span[1] * count)))
        kept = sorted({k for low, high in blocks
                       for k in range(max(1, low - _KEPT_CUTS), min(count - 1, high + _KEPT_CUTS) + 1)})
    cuts = [node_of(nodes[a] + (nodes[b] - nodes[a]) * k / count, shared=False) for k in kept]
    stretches = [j for j, (k0, k1) in enumerate(zip([0, *kept], [*kept, count])) if k1 - k0 > 1]
    return cuts + [b], stretches, length / count


def _inside_span(start: np.ndarray, end: np.ndarray, bounds_px) -> tuple[float, float] | None:
    """The fractions ``(t0, t1)`` of the link from ``start`` to ``end`` inside ``bounds_px`` (Liang-Barsky), or
    None when it misses them."""
    t0, t1 = 0.0, 1.0
    for axis in (0, 1):
        delta, low, high = end[axis] - start[axis], bounds_px[axis], bounds_px[axis + 2]
        if delta == 0.0:
            if not low <= start[axis] <= high:
                return None
            continue
        enter, leave = sorted(((low - start[axis]) / delta, (high - start[axis]) / delta))
        t0, t1 = max(t0, enter), min(t1, leave)
    return (t0, t1) if t0 <= t1 else None
