"""core.polyline.ranges (no table of link directions) against the table-based reference of core.polyline.turns."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.polyline import PolylineProblem, prepare, solve, solve_prepared
from core.polyline.ranges import cached_turn_ranges, turn_ranges
from core.polyline.tables import all_finite
from core.polyline.turns import feasible_ranges, link_angles


def reference(prev_offsets, offsets, next_offsets, spacing, max_turn_deg):
    return feasible_ranges(link_angles(prev_offsets, offsets, spacing), link_angles(offsets, next_offsets, spacing),
                           max_turn_deg)


def assert_same_as_reference(prev_offsets, offsets, next_offsets, spacing, max_turn_deg):
    expected = reference(prev_offsets, offsets, next_offsets, spacing, max_turn_deg)
    for doubt_rel in (1e-12, np.inf):  # the closed form with its doubtful cases, and the arctangent alone
        lo, hi = turn_ranges(prev_offsets, offsets, next_offsets, spacing, max_turn_deg, doubt_rel)
        assert lo.dtype == hi.dtype == np.int32
        np.testing.assert_array_equal(lo, expected[0])
        np.testing.assert_array_equal(hi, expected[1])


offsets_strategy = st.lists(
    st.one_of(st.integers(-4, 4).map(float), st.floats(-6, 6, allow_nan=False)), min_size=1, max_size=9
).map(sorted)


@settings(max_examples=300, deadline=None)
@given(
    prev_offsets=offsets_strategy,
    offsets=offsets_strategy,
    next_offsets=offsets_strategy,
    spacing=st.sampled_from([1.0, 2.0, 0.5]) | st.floats(0.05, 20),
    max_turn_deg=st.sampled_from([45.0, 90.0, 135.0, 179.9999, 180.0, 1e-6]) | st.floats(0.01, 180),
)
def test_turn_ranges_equal_the_table_based_reference(prev_offsets, offsets, next_offsets, spacing, max_turn_deg):
    assert_same_as_reference(np.array(prev_offsets), np.array(offsets), np.array(next_offsets), spacing,
                             max_turn_deg)


@pytest.mark.parametrize("n_prev", [1, 3, 64])  # 1 and 3 take the reversed pass (few previous points)
def test_turn_ranges_at_guide_sizes(n_prev):
    rng = np.random.default_rng(n_prev)
    offsets = np.linspace(-25, 25, 64)
    prev = offsets if n_prev == 64 else np.sort(rng.uniform(-3, 3, n_prev))
    for spacing, max_turn_deg in ((250 / 7, 30.0), (3.0, 10.0), (0.2, 150.0)):
        assert_same_as_reference(prev, offsets, offsets, spacing, max_turn_deg)
        assert_same_as_reference(offsets, offsets, prev, spacing, max_turn_deg)


@pytest.mark.parametrize("layout", ["even", "clustered", "one offset"])
def test_turn_ranges_of_large_layers(layout):
    # evenly spaced offsets take the diagonals, clustered ones the guessed index (a poor guess, so the
    # pointers), offsets all at one place the general pass with a guess of 0
    rng = np.random.default_rng(5)
    offsets = {"even": np.linspace(-25, 25, 300),
               "clustered": np.sort(np.concatenate([rng.normal(-9, 0.3, 150), rng.normal(7, 2.0, 150)])),
               "one offset": np.full(300, 1.5)}[layout]
    for spacing, max_turn_deg in ((250 / 7, 30.0), (2.0, 10.0), (0.3, 170.0)):
        assert_same_as_reference(offsets, offsets, offsets, spacing, max_turn_deg)


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(2, 40),
    low=st.sampled_from([-25.0, -8.0, 0.0, -3.3]) | st.floats(-50, 50),
    step=st.sampled_from([0.5, 1.0, 1 / 3]) | st.floats(0.01, 5),
    spacing=st.sampled_from([1.0, 2.0, 0.5, 250 / 7]) | st.floats(0.05, 40),
    max_turn_deg=st.sampled_from([45.0, 90.0, 26.565051177077994, 30.0, 1e-6]) | st.floats(0.01, 179.99),
    jitter=st.sampled_from([0.0, 1e-13, 1e-11]),
)
def test_evenly_spaced_guides_by_diagonals(n, low, step, spacing, max_turn_deg, jitter):
    # grid points at whole steps make turns land exactly on the limit (45 degrees with step = spacing,
    # atan(1/2)); the jitter moves offsets off the even grid by less than the template's tolerance
    offsets = low + step * np.arange(n)
    offsets = offsets + jitter * step * np.random.default_rng(n).uniform(-1, 1, n)
    offsets = np.maximum.accumulate(offsets)
    assert_same_as_reference(offsets, offsets, offsets, spacing, max_turn_deg)


@pytest.mark.parametrize("jitter", [4e-10, 1e-10, 1e-12])
def test_evenly_spaced_guides_near_a_tie_decide_as_the_reference(jitter):
    # turns of 45 degrees (whole steps, step = spacing) against limits a hair from them: the even grid
    # decides nothing here, the offsets' jitter decides, so the template must hand these diagonals back
    offsets = np.linspace(-6, 6, 25) + jitter * np.random.default_rng(1).uniform(-1, 1, 25)
    for hair_rad in (-3e-10, -3e-11, -1e-12, 1e-13, 1e-12, 3e-11, 1e-10, 3e-10):
        max_turn_deg = math.degrees(math.pi / 4 - 1e-9 + hair_rad)
        assert_same_as_reference(offsets, offsets, offsets, 0.5, max_turn_deg)


def test_turns_at_the_limit_to_the_last_bit_are_decided_as_the_reference_decides():
    # A limit equal (after the slack) to turns that occur: the closed form cannot tell, the arctangent decides.
    offsets = np.linspace(-5, 5, 21)
    spacing = 1.7
    angles = link_angles(offsets, offsets, spacing)
    for q, r, p in ((10, 14, 3), (7, 20, 12), (0, 5, 9)):
        turn = abs(angles[q, r] - angles[p, q])
        for limit_deg in np.nextafter(math.degrees(turn - 1e-9), [-np.inf, np.inf]):
            assert_same_as_reference(offsets, offsets, offsets, spacing, float(limit_deg))


def test_cached_ranges_are_kept_per_geometry():
    offsets = np.linspace(-4, 4, 17)
    first = cached_turn_ranges(offsets, offsets, offsets, 2.0, 20.0)
    assert cached_turn_ranges(offsets, offsets, offsets.copy(), 2.0, 20.0) is first
    other = cached_turn_ranges(offsets, offsets, offsets, 2.5, 20.0)
    assert other is not first
    np.testing.assert_array_equal(other[0], reference(offsets, offsets, offsets, 2.5, 20.0)[0])


def test_prepare_leaves_the_ranges_to_the_first_solve():
    d = 5
    problem = PolylineProblem(np.ones(d), np.ones((2, d, d)), np.ones(d), np.linspace(-1, 1, d), 1.0, 15.0)
    prepared = prepare(problem)
    assert not prepared.ranges_computed
    assert solve(problem, "window", "cpu").score == pytest.approx(4.0)
    assert len(prepared.ranges32) == 3 and prepared.ranges_computed


def test_all_finite_checks_every_piece():
    table = np.zeros((3, 300, 300), np.float32)
    assert all_finite(table)
    for bad in (np.inf, -np.inf, np.nan):
        spoilt = table.copy()
        spoilt[2, 299, 299] = bad
        assert not all_finite(spoilt)
    assert all_finite(np.zeros((0, 4, 4), np.float32))


@pytest.mark.parametrize("n0", [1, 3])
def test_start_reach_is_the_first_pair_seen_from_the_other_end(n0):
    rng = np.random.default_rng(n0)
    d = 40
    start = np.sort(rng.uniform(-2, 2, n0))
    problem = PolylineProblem(np.ones((n0, d)), np.ones((2, d, d)), np.ones(d), np.linspace(-6, 6, d), 2.0, 25.0,
                              start_offsets=start)
    prepared = prepare(problem)
    rlo, rhi = prepared.start_reach
    lo, hi = prepared.ranges32[0]
    p, q, r = np.meshgrid(np.arange(n0), np.arange(d), np.arange(d), indexing="ij")
    np.testing.assert_array_equal((lo[q, r] <= p) & (p <= hi[q, r]), (rlo[q, p] <= r) & (r <= rhi[q, p]))


def test_the_window_solver_needs_no_first_pair():
    d = 30
    problem = PolylineProblem(np.ones(d), np.ones((3, d, d)), np.ones(d), np.linspace(-3, 3, d), 2.0, 20.0)
    prepared = prepare(problem)
    assert solve_prepared(prepared, "window", "cpu").score == pytest.approx(5.0)
    assert not prepared.ranges_computed  # the start's reach and the inner pairs only


def test_finiteness_left_to_the_backend_is_checked_before_the_cpu_solves():
    d = 4
    links = np.ones((2, d, d))
    links[1, 2, 3] = np.inf
    problem = PolylineProblem(np.ones(d), links, np.ones(d), np.linspace(-1, 1, d), 1.0, 45.0)
    prepared = prepare(problem, check_finite=False)
    assert not prepared.finite_checked
    for method in ("window", "mitm", "brute"):
        with pytest.raises(ValueError, match="link_scores must be finite"):
            solve_prepared(prepared, method, "cpu")
    with pytest.raises(ValueError, match="link_scores must be finite"):
        prepare(problem)
