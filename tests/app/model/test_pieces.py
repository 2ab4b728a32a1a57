"""The passes over the pieces of many features made in C (``piece_ids``, ``unsettled_places``)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model.pieces import Feature, PieceSpec, piece_ids, straight_outcome, unsettled_places


def _features(pieces_per_feature: list[int]) -> list[Feature]:
    ids = iter(range(100, 100 + sum(pieces_per_feature)))
    return [Feature(k, f"Line {k}", (0.0, 0.0),
                    tuple(PieceSpec(next(ids), (0.0, 0.0), (1.0, 1.0)) for _ in range(count)))
            for k, count in enumerate(pieces_per_feature)]


def test_unsettled_places_of_a_hand_made_drawing():
    features = _features([1, 0, 2, 3])  # pieces 100 | - | 101 102 | 103 104 105
    outcome = straight_outcome((0.0, 0.0), (1.0, 1.0))
    assert list(piece_ids(features)) == [100, 101, 102, 103, 104, 105]
    assert unsettled_places(features, {}) == [0, 2, 3]  # a feature without pieces waits for nothing
    assert unsettled_places(features, dict.fromkeys([100, 101, 103, 104, 105], outcome)) == [2]
    assert unsettled_places(features, dict.fromkeys(range(100, 106), outcome)) == []
    assert unsettled_places((), {}) == []


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=30), st.integers(0, 2**32 - 1))
def test_unsettled_places_are_those_a_walk_finds(pieces_per_feature, seed):
    features = _features(pieces_per_feature)
    rng = np.random.default_rng(seed)
    outcome = straight_outcome((0.0, 0.0), (1.0, 1.0))
    outcomes = {piece_id: outcome for piece_id in piece_ids(features) if rng.random() < 0.8}
    walked = [k for k, f in enumerate(features) if any(p.id not in outcomes for p in f.pieces)]
    assert unsettled_places(tuple(features), outcomes) == walked
