"""Refined pieces joined again: one position per node, so that lines that met still meet.

Each refined piece proposes a position for its two end nodes, trusted across
the piece (along its normal) and not along it.  A node's position is the
weighted least-squares point of its proposals' lines: at a corner or a
junction the crossing of the pieces' lines.  Along a direction that the lines
hardly fix (a straight run, pieces within ~13 degrees of each other) it takes
the proposals' mean instead.  A node
with no proposal moves with its neighbours (the mean of their moves).
"""

from __future__ import annotations

import numpy as np

__all__ = ["SPREAD_PASSES", "WEAK_DIRECTION_SHARE", "joined_parts", "node_positions"]

#: A direction whose share of the proposals' normal weight is below this takes the proposals' mean.
WEAK_DIRECTION_SHARE = 0.05
#: Passes that spread moves to nodes without a proposal.
SPREAD_PASSES = 4


def node_positions(plan, refined: dict) -> np.ndarray:
    """(n, 2) refined node positions.

    Parameters
    ----------
    plan : core.batch.plan.PiecePlan
    refined : dict of int to (vertices_px, weight)
        Per refined piece: its (k, 2) vertices (working px, ends first and
        last) and the weight of its evidence (> 0).
    """
    n = len(plan.nodes_px)
    normal_sums = np.zeros((n, 2, 2))
    rhs = np.zeros((n, 2))
    point_sums = np.zeros((n, 2))
    weights = np.zeros(n)
    for piece, (vertices, weight) in refined.items():
        chord = vertices[-1] - vertices[0]
        length = float(np.hypot(*chord))
        if length == 0.0:
            continue
        normal = np.array([-chord[1], chord[0]]) / length
        outer = weight * np.outer(normal, normal)
        for node, end in zip(plan.pieces[piece], (vertices[0], vertices[-1])):
            normal_sums[node] += outer
            rhs[node] += outer @ end
            point_sums[node] += weight * end
            weights[node] += weight
    out = plan.nodes_px.copy()
    seen = weights > 0
    for node in np.flatnonzero(seen):
        out[node] = _least_squares_point(normal_sums[node], rhs[node], point_sums[node] / weights[node])
    return _spread(plan, out, seen)


def _least_squares_point(normals: np.ndarray, rhs: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """The point minimising the weighted squared normal distances, with weak directions set from ``mean``."""
    values, vectors = np.linalg.eigh(normals)
    strong = values > WEAK_DIRECTION_SHARE * values.sum()
    coefficients = np.where(strong, (vectors.T @ rhs) / np.where(strong, values, 1.0), vectors.T @ mean)
    return vectors @ coefficients


def _spread(plan, out: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """Nodes without a proposal take the mean move of their neighbours that have one."""
    moves = out - plan.nodes_px
    neighbours = [[] for _ in range(len(out))]
    for a, b in plan.pieces:
        neighbours[a].append(b)
        neighbours[b].append(a)
    known = seen.copy()
    for _ in range(SPREAD_PASSES):
        newly = [(node, np.mean([moves[m] for m in neighbours[node] if known[m]], axis=0))
                 for node in np.flatnonzero(~known) if any(known[m] for m in neighbours[node])]
        if not newly:
            break
        for node, move in newly:
            moves[node], known[node] = move, True
    return plan.nodes_px + moves


def joined_parts(plan, refined: dict, nodes_px: np.ndarray) -> list[np.ndarray]:
    """Per part, its refined vertices: each piece's inner vertices between the nodes' positions.

    A refined piece's inner vertices follow its ends to the nodes (moved by the
    blend of the two ends' moves, by arc length); any other piece is the
    straight link of its nodes.
    """
    parts = []
    for nodes, pieces in zip(plan.part_nodes, plan.part_pieces):
        chain = [nodes_px[nodes[0]]]
        for piece in pieces:
            a, b = plan.pieces[piece]
            if piece in refined:
                chain.extend(_moved_inner(refined[piece][0], nodes_px[a], nodes_px[b]))
            chain.append(nodes_px[b])
        parts.append(np.asarray(chain, np.float64))
    return parts


def _moved_inner(vertices: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The inner vertices of a piece, moved as its ends move to ``start`` and ``end``."""
    if len(vertices) <= 2:
        return np.zeros((0, 2))
    steps = np.hypot(*np.diff(vertices, axis=0).T)
    arc = np.concatenate([[0.0], np.cumsum(steps)])
    t = (arc / arc[-1] if arc[-1] > 0 else np.linspace(0, 1, len(vertices)))[1:-1, None]
    return vertices[1:-1] + (1 - t) * (start - vertices[0]) + t * (end - vertices[-1])
