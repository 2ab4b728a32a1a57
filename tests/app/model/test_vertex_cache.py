"""The tool's vertex cache: features kept many at once (an import) as one by one."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from app.model.pieces import Feature, PieceSpec, feature_vertices, straight_outcome
from app.model.vertex_cache import VertexCache


def _line(feature_id: int, y: float) -> tuple[Feature, dict]:
    piece = PieceSpec(100 + feature_id, (0.0, y), (10.0, y), "imported")
    outcome = straight_outcome((0.0, y), (10.0, y))
    return Feature(feature_id, f"Line {feature_id}", (0.0, y), (piece,)), {piece.id: outcome}


def test_features_kept_many_at_once_come_back_until_replaced_or_forgotten():
    lines = [_line(k, float(k)) for k in range(5)]
    features = [f for f, _ in lines]
    outcomes = {k: v for _, o in lines for k, v in o.items()}
    arrays = [feature_vertices(f, outcomes) for f in features]
    cache = VertexCache()
    cache.put_many(features, arrays, outcomes)
    assert all(cache.get(f, outcomes) is a for f, a in zip(features, arrays))  # kept, not computed again
    renamed = replace(features[1], name="renamed", attributes=(("kind", "road"),))  # the same line: kept
    assert cache.get(renamed, outcomes) is arrays[1]
    moved = replace(features[1], start_xy=(0.5, 1.0))  # another line (its start moved): computed for it
    assert cache.get(moved, outcomes) is not arrays[1]
    np.testing.assert_array_equal(cache.get(moved, outcomes), arrays[1])  # (its pieces' outcomes decide them)
    assert cache.get(features[1], outcomes) is not arrays[1]  # one entry an id: the old version's went
    cache.forget([features[2], features[3]], held={100 + 3})  # the history let go of them; piece 103 still held
    assert cache.get(features[2], outcomes) is not arrays[2] and cache.get(features[3], outcomes) is arrays[3]
    cache.clear()
    assert cache.get(features[0], outcomes) is not arrays[0]


def test_features_with_a_piece_still_pending_are_kept_with_their_outcomes():
    (done, outcomes), (waiting, _) = _line(1, 1.0), _line(2, 2.0)  # the second without its piece's outcome
    arrays = [feature_vertices(done, outcomes), feature_vertices(waiting, outcomes)]
    cache = VertexCache()
    cache.put_many([done, waiting], arrays, outcomes)
    assert cache.get(done, outcomes) is arrays[0] and cache.get(waiting, outcomes) is arrays[1]
    late = {**outcomes, 102: straight_outcome((0.0, 2.0), (5.0, 9.0))}  # its result came: other vertices
    np.testing.assert_array_equal(cache.get(waiting, late), [[0.0, 2.0], [5.0, 9.0]])
