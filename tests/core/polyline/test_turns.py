"""core.polyline.turns against a direct predicate: link directions, the turn test, the index ranges."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.polyline import TURN_SLACK_RAD
from core.polyline.turns import feasible_ranges, link_angles, turn_is_feasible, turn_limit_rad


def direct_feasible(offset_p, offset_q, offset_r, spacing, max_turn_deg):
    """The turn at q of p -> q -> r, computed from scratch with math.atan2."""
    angle_in = math.atan2(offset_q - offset_p, spacing)
    angle_out = math.atan2(offset_r - offset_q, spacing)
    return abs(angle_out - angle_in) <= math.radians(max_turn_deg) + TURN_SLACK_RAD


def test_link_angles_are_atan2_of_offset_change_over_spacing():
    from_offsets, to_offsets = np.array([-1.0, 0.5]), np.array([0.0, 2.0, 3.0])
    angles = link_angles(from_offsets, to_offsets, 2.0)
    assert angles.shape == (2, 3)
    for i, a in enumerate(from_offsets):
        for j, b in enumerate(to_offsets):
            assert angles[i, j] == pytest.approx(math.atan2(b - a, 2.0), abs=1e-15)


def test_turn_limit_includes_the_slack():
    assert turn_limit_rad(90.0) == pytest.approx(math.pi / 2 + 1e-9, abs=1e-15)


@pytest.mark.parametrize(
    ("angle_in", "angle_out", "limit", "expected"),
    [
        (0.0, math.pi / 4, math.pi / 4, True),  # exactly at the limit
        (-math.pi / 4, math.pi / 4, math.pi / 2, True),
        (0.0, 0.5, 0.5 - 1e-6, False),
        (0.3, 0.3, 1e-12, True),  # no turn passes any limit
        (0.2, -0.2, 0.4, True),  # the sign of the turn does not matter
    ],
)
def test_turn_is_feasible_hand_cases(angle_in, angle_out, limit, expected):
    assert turn_is_feasible(angle_in, angle_out, limit) is expected


def test_feasible_ranges_hand_case():
    # offsets -1, 0, 1 with spacing 1: link directions of -45, 0 or +45 degrees (or +-63.4
    # from -1 to +1); 45 degrees of turn allowed.
    offsets = np.array([-1.0, 0.0, 1.0])
    lo, hi = feasible_ranges(link_angles(offsets, offsets, 1.0), link_angles(offsets, offsets, 1.0), 45.0)
    # q = 0 (offset 0): into it at 45, 0, -45 degrees; out of it at -45, 0, 45.
    np.testing.assert_array_equal(lo[1], [1, 0, 0])
    np.testing.assert_array_equal(hi[1], [2, 2, 1])
    # q = -1: only p = -1, 0 straight on (r = -1); p = -1 towards 0 (45 degrees); nothing towards +1.
    assert (lo[0, 0], hi[0, 0]) == (0, 1)
    assert (lo[0, 1], hi[0, 1]) == (0, 0)
    assert hi[0, 2] < lo[0, 2]


def assert_ranges_match_direct_test(prev_offsets, offsets, next_offsets, spacing, max_turn_deg):
    lo, hi = feasible_ranges(
        link_angles(prev_offsets, offsets, spacing), link_angles(offsets, next_offsets, spacing), max_turn_deg
    )
    assert lo.shape == hi.shape == (len(offsets), len(next_offsets))
    assert lo.dtype == hi.dtype == np.int64
    for q, offset_q in enumerate(offsets):
        for r, offset_r in enumerate(next_offsets):
            feasible = [
                p for p, offset_p in enumerate(prev_offsets)
                if direct_feasible(offset_p, offset_q, offset_r, spacing, max_turn_deg)
            ]
            if feasible:
                assert (lo[q, r], hi[q, r]) == (feasible[0], feasible[-1])
                assert feasible == list(range(feasible[0], feasible[-1] + 1)), "not one interval"
            else:
                assert hi[q, r] < lo[q, r]
        # both ends never increase with r (what the window solver relies on)
        assert np.all(np.diff(lo[q]) <= 0) and np.all(np.diff(hi[q]) <= 0)


offsets_strategy = st.lists(
    st.one_of(st.integers(-4, 4).map(float), st.floats(-6, 6, allow_nan=False)), min_size=1, max_size=8
).map(sorted)


@settings(max_examples=150, deadline=None)
@given(
    prev_offsets=offsets_strategy,
    offsets=offsets_strategy,
    next_offsets=offsets_strategy,
    spacing=st.sampled_from([1.0, 2.0, 0.5]) | st.floats(0.05, 20),
    max_turn_deg=st.sampled_from([45.0, 90.0, 135.0, 180.0, 1e-6]) | st.floats(0.01, 180),
)
def test_feasible_ranges_match_the_direct_turn_test(prev_offsets, offsets, next_offsets, spacing, max_turn_deg):
    assert_ranges_match_direct_test(
        np.array(prev_offsets), np.array(offsets), np.array(next_offsets), spacing, max_turn_deg
    )


def test_feasible_ranges_at_180_degrees_allow_everything():
    offsets = np.linspace(-10, 10, 9)
    lo, hi = feasible_ranges(link_angles(offsets, offsets, 0.1), link_angles(offsets, offsets, 0.1), 180.0)
    assert np.all(lo == 0) and np.all(hi == len(offsets) - 1)
