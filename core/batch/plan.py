"""Lines cut into pieces between their vertices, on a graph of shared nodes.

Vertices at the same position (within NODE_TOLERANCE_PX) are one node, so
lines that met before refinement meet after it: each node gets one refined
position (core.batch.joints).  Long straight parts are cut into pieces of at
most ``max_piece_px``; parts shorter than ``min_piece_px`` are not extracted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["MIN_PIECE_PX", "NODE_TOLERANCE_PX", "PiecePlan", "plan_pieces"]

#: Vertices closer than this (working px) share a node.
NODE_TOLERANCE_PX = 1e-3
#: The shortest piece (px) by default: shorter parts are kept as they are, not extracted.
MIN_PIECE_PX = 8.0


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


def plan_pieces(parts_px, max_piece_px: float = 100.0, min_piece_px: float = MIN_PIECE_PX) -> PiecePlan:
    """Cut line parts into pieces between their (shared) vertices.

    Parameters
    ----------
    parts_px : sequence of (k, 2) float ndarray
        The parts' vertices in one pixel frame; repeated vertices are dropped.
    max_piece_px : float
        Longer straight parts are cut into equal pieces no longer than this.
    min_piece_px : float
        Pieces shorter than this are not extracted (their ends move with their neighbours).

    Returns
    -------
    PiecePlan
    """
    if not (max_piece_px > min_piece_px > 0):
        raise ValueError(f"max_piece_px ({max_piece_px:g}) must be more than min_piece_px ({min_piece_px:g}), the "
                         "shortest a piece may be, and that more than 0")
    nodes, index = [], {}
    pieces, part_nodes, part_pieces = [], [], []

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
        ids = [chain[0]]
        for a, b in zip(chain[:-1], chain[1:]):
            ids.extend(_subdivided(nodes, a, b, max_piece_px, node_of))
        first = len(pieces)
        pieces.extend(zip(ids[:-1], ids[1:]))
        part_nodes.append(np.asarray(ids, np.int64))
        part_pieces.append(np.arange(first, len(pieces), dtype=np.int64))
    nodes_px = np.asarray(nodes, np.float64).reshape(-1, 2)
    pieces = np.asarray(pieces, np.int64).reshape(-1, 2)
    lengths = np.hypot(*(nodes_px[pieces[:, 1]] - nodes_px[pieces[:, 0]]).T) if len(pieces) else np.zeros(0)
    return PiecePlan(nodes_px, pieces, lengths >= min_piece_px, part_nodes, part_pieces)


def _distinct(vertices: np.ndarray) -> np.ndarray:
    """The vertices without consecutive repeats."""
    if len(vertices) < 2:
        return vertices
    keep = np.concatenate([[True], np.hypot(*np.diff(vertices, axis=0).T) > NODE_TOLERANCE_PX])
    return vertices[keep]


def _subdivided(nodes, a: int, b: int, max_piece_px: float, node_of) -> list[int]:
    """Nodes after ``a`` up to ``b``: ``b`` alone, or evenly spaced cut points (not shared) then ``b``."""
    length = float(np.hypot(*(nodes[b] - nodes[a])))
    count = max(1, math.ceil(length / max_piece_px))
    cuts = [node_of(nodes[a] + (nodes[b] - nodes[a]) * k / count, shared=False) for k in range(1, count)]
    return cuts + [b]
