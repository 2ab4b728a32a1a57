"""Estimates in the Qt-free model: confidences, low-confidence runs, ribbon edges, estimates read back."""

from __future__ import annotations

import numpy as np
import pytest

from app.model.estimates import (
    LOW_CONFIDENCE,
    MAX_MITER,
    confidence_value,
    estimate_from_dict,
    is_low,
    ribbon_edges,
)
from app.model.pieces import (
    Feature,
    PieceOutcome,
    PieceSpec,
    confidence_runs,
    feature_confidence,
    feature_vertices,
    imported_feature,
)
from core.extraction.estimate import RoadEstimate

ESTIMATE = RoadEstimate(14.0, "bright", 1.3, "bent", 0.82)


def segment_distance(points, a, b):
    """Distance of each point to the segment a-b."""
    a, b, points = np.asarray(a, float), np.asarray(b, float), np.asarray(points, float)
    t = np.clip((points - a) @ (b - a) / ((b - a) @ (b - a)), 0, 1)
    return np.hypot(*(points - (a + t[:, None] * (b - a))).T)


def test_ribbon_edges_of_a_corner_keep_half_the_width_from_both_legs():
    first, second = ribbon_edges([(0, 0), (10, 0), (10, 10)], 4.0)
    np.testing.assert_allclose(first, [[0, 2], [8, 2], [8, 10]])  # the inner side of the corner
    np.testing.assert_allclose(second, [[0, -2], [12, -2], [12, 10]])  # mitred: 2 px from both legs' lines
    first, _ = ribbon_edges([(0, 0), (10, 0), (20, 10)], 4.0)
    assert segment_distance(first[1:2], (0, 0), (10, 0))[0] == pytest.approx(2.0)
    assert segment_distance(first[1:2], (10, 0), (20, 10))[0] == pytest.approx(2.0)


def test_ribbon_edges_drop_repeated_vertices_and_cap_hairpins():
    first, second = ribbon_edges([(0, 0), (0, 0), (10, 0), (10, 0)], 2.0)
    np.testing.assert_allclose(first, [[0, 1], [10, 1]])
    assert ribbon_edges([(3, 3), (3, 3)], 5.0)[0].shape == (0, 2)
    first, _ = ribbon_edges([(0, 0), (10, 0), (0, 0.01)], 2.0)  # turns back on itself
    assert np.all(np.hypot(*(first - [[0, 0], [10, 0], [0, 0.01]]).T) <= MAX_MITER * 1.0 + 1e-9)


def test_confidence_values_and_estimates_read_back_from_files():
    assert confidence_value(0.25) == 0.25 and confidence_value(1) == 1.0
    assert confidence_value(None) is confidence_value(1.5) is confidence_value("0.3") is confidence_value(True) is None
    assert estimate_from_dict(ESTIMATE.to_dict()) == ESTIMATE
    assert estimate_from_dict({**ESTIMATE.to_dict(), "width_px": None}).width_px is None
    assert estimate_from_dict({**ESTIMATE.to_dict(), "added_later": 3}) == ESTIMATE
    for damaged in (None, [], {"width_px": 3.0}, {**ESTIMATE.to_dict(), "confidence": 7},
                    {**ESTIMATE.to_dict(), "width_px": "wide"}, {**ESTIMATE.to_dict(), "contrast": float("nan")}):
        assert estimate_from_dict(damaged) is None
    assert is_low(LOW_CONFIDENCE - 0.01) and not is_low(LOW_CONFIDENCE) and not is_low(None)


def chain(confidences):
    """A feature along y = 0 with one 10 px piece per confidence, and its outcomes."""
    pieces, outcomes = [], {}
    for k, confidence in enumerate(confidences):
        piece = PieceSpec(k + 1, (10.0 * k, 0.0), (10.0 * (k + 1), 0.0))
        pieces.append(piece)
        outcomes[piece.id] = PieceOutcome(np.array([piece.click_start, (10.0 * k + 5, 1.0), piece.click_end]),
                                          confidence=confidence)
    return Feature(1, "a", (0.0, 0.0), tuple(pieces)), outcomes


def test_a_feature_has_the_confidence_of_its_weakest_piece():
    feature, outcomes = chain([0.9, 0.3, None, 0.7])
    assert feature_confidence(feature, outcomes) == 0.3
    assert feature_confidence(*chain([None])) is None
    del outcomes[2]  # still being computed
    assert feature_confidence(feature, outcomes) == 0.7


def test_confidence_runs_split_the_feature_where_the_confidence_falls_below_the_threshold():
    feature, outcomes = chain([0.9, None, 0.3, 0.2, 0.8])
    runs = confidence_runs(feature, outcomes)
    assert [low for _, low in runs] == [False, True, False]
    assert [run[0, 0] for run, _ in runs] == [0.0, 20.0, 40.0]  # each run starts where the last ended
    np.testing.assert_array_equal(np.concatenate([runs[0][0]] + [run[1:] for run, _ in runs[1:]]),
                                  feature_vertices(feature, outcomes))
    assert len(confidence_runs(*chain([0.9, 0.8]))) == 1


def test_an_imported_linesnap_line_brings_its_confidence_and_estimate_back():
    vertices = [[0.0, 0.0], [5.0, 1.0], [10.0, 0.0]]
    properties = {"confidence": 0.82, "estimate": ESTIMATE.to_dict(), "pieces": [{"kind": "extract"}]}
    _, outcome = imported_feature(1, 1, "a", vertices, properties)
    assert outcome.confidence == 0.82 and outcome.estimate == ESTIMATE
    # several pieces: the weakest one's estimate is not the whole line's, so only the confidence comes back
    _, outcome = imported_feature(1, 1, "a", vertices, {**properties, "pieces": [{}, {}]})
    assert outcome.confidence == 0.82 and outcome.estimate is None
    _, outcome = imported_feature(1, 1, "a", vertices, {"road_id": 3})
    assert outcome.confidence is None and outcome.estimate is None
