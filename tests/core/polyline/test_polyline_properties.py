"""Property tests: brute, mitm and window agree on random angle-constrained problems.

Random d (1..7) and m (1..5), non-uniform offsets with repeats, offsets on a
grid of the spacing (turns exactly at 45 / 90 / ... degree limits), angle
limits from tiny to 180 degrees, integer scores from a tiny set (many ties),
snapping-shaped problems (several start and end candidates) and infeasible
problems.  Each returned polyline is checked from scratch with math.atan2, and
small problems also against a plain-Python enumeration written here.
"""

from __future__ import annotations

import contextlib
import itertools
import math

import numpy as np
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from core.polyline import METHODS, NoFeasiblePolylineError, PolylineProblem, solve
from core.polyline import window as polyline_window

SLACK_RAD = 1e-9


def sorted_offsets(draw, size, spacing):
    kind = draw(st.sampled_from(["grid", "float", "repeats"]))
    if kind == "grid":  # multiples of the spacing: link directions of exactly 0, 45, 63.4... degrees
        values = draw(st.lists(st.integers(-3, 3), min_size=size, max_size=size))
        return sorted(v * spacing for v in values)
    if kind == "repeats":
        pool = draw(st.lists(st.floats(-5, 5), min_size=1, max_size=3))
        return sorted(draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size)))
    return sorted(draw(st.lists(st.floats(-8, 8), min_size=size, max_size=size)))


def score_array(draw, shape):
    count = int(np.prod(shape))
    if draw(st.booleans()):  # a tiny set of integers: many ties
        values = draw(st.lists(st.integers(0, 2), min_size=count, max_size=count))
    else:
        values = draw(st.lists(st.floats(-10, 10, width=32), min_size=count, max_size=count))
    return np.array(values, dtype=np.float32).reshape(shape)


@st.composite
def problems(draw):
    d, m = draw(st.integers(1, 7)), draw(st.integers(1, 5))
    assume(d**m <= 20_000)
    spacing = draw(st.sampled_from([1.0, 2.0]) | st.floats(0.1, 10))
    snapping = draw(st.booleans())
    n0, n1 = (draw(st.integers(1, 3)), draw(st.integers(1, 3))) if snapping else (1, 1)
    max_turn_deg = draw(
        st.sampled_from([45.0, 90.0, 135.0, 180.0, 1e-6, math.degrees(math.atan(2))])
        | st.integers(1, 180).map(float)
        | st.floats(1e-3, 180)
    )
    offsets = sorted_offsets(draw, d, spacing)
    return PolylineProblem(
        start_scores=score_array(draw, (n0, d) if snapping else (d,)),
        link_scores=score_array(draw, (m - 1, d, d)),
        end_scores=score_array(draw, (d, n1) if snapping else (d,)),
        offsets=np.array(offsets),
        spacing=spacing,
        max_turn_deg=max_turn_deg,
        start_offsets=np.array(sorted_offsets(draw, n0, spacing)) if snapping else None,
        end_offsets=np.array(sorted_offsets(draw, n1, spacing)) if snapping else None,
    )


def layer_offsets(problem):
    start = [0.0] if problem.start_offsets is None else list(problem.start_offsets)
    end = [0.0] if problem.end_offsets is None else list(problem.end_offsets)
    m = problem.link_scores.shape[0] + 1
    return [start] + [list(problem.offsets)] * m + [end]


def is_feasible(problem, path):
    """Every turn of the path (layer indices L0..L(m+1)) from scratch with math.atan2."""
    points = [layer[i] for layer, i in zip(layer_offsets(problem), path)]
    angles = [math.atan2(b - a, problem.spacing) for a, b in zip(points, points[1:])]
    limit = math.radians(problem.max_turn_deg) + SLACK_RAD
    return all(abs(b - a) <= limit for a, b in zip(angles, angles[1:]))


def path_sum(problem, path):
    """float64 sum of the float32 tables along the path, in path order."""
    first = np.asarray(problem.start_scores, dtype=np.float32).reshape(len(layer_offsets(problem)[0]), -1)
    last = np.asarray(problem.end_scores, dtype=np.float32).reshape(first.shape[1], -1)
    total = float(first[path[0], path[1]])
    for t in range(1, len(path) - 2):
        total += float(problem.link_scores[t - 1, path[t], path[t + 1]])
    return total + float(last[path[-2], path[-1]])


def python_optimum(problem):
    """The best score of a plain enumeration, or None when nothing is feasible."""
    sizes = [len(layer) for layer in layer_offsets(problem)]
    scores = [path_sum(problem, path) for path in itertools.product(*map(range, sizes)) if is_feasible(problem, path)]
    return max(scores, default=None)


#: The stage kernels of ``window``; each is forced on every stage in turn.
FORCED_KERNELS = {
    "window (sliding)": "_window_stage",
    "window (previous-point sweeps)": "_few_previous_stage",
    "window (row sweeps)": "_few_next_stage",
}


@contextlib.contextmanager
def window_kernel_everywhere(name):
    """Make ``window`` run one stage kernel on every stage, whatever the layer sizes."""
    saved = polyline_window._window_kernel
    kernel = getattr(polyline_window, name)
    polyline_window._window_kernel = lambda n_prev, d, n_next: (kernel, n_prev * d * n_next)
    try:
        yield
    finally:
        polyline_window._window_kernel = saved


def outcome(problem, way):
    try:
        if way in FORCED_KERNELS:
            with window_kernel_everywhere(FORCED_KERNELS[way]):
                return solve(problem, method="window", backend="cpu")
        return solve(problem, method=way, backend="cpu")
    except NoFeasiblePolylineError:
        return None


ALL_WAYS = (*METHODS, *FORCED_KERNELS)


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(problem=problems())
def test_solvers_agree_and_return_feasible_optimal_polylines(problem):
    solutions = {method: outcome(problem, method) for method in ALL_WAYS}
    if solutions["brute"] is None:
        event("infeasible")
        assert all(sol is None for sol in solutions.values()), solutions
    else:
        event("feasible")
        for method, sol in solutions.items():
            assert sol is not None, method
            path = [sol.start_index, *sol.indices.tolist(), sol.end_index]
            assert is_feasible(problem, path), (method, path)
            assert sol.score == path_sum(problem, path), method
            assert close(sol.score, solutions["brute"].score), (method, sol.score, solutions["brute"].score)
    sizes = [len(layer) for layer in layer_offsets(problem)]
    if math.prod(sizes) <= 2_000:
        expected = python_optimum(problem)
        if expected is None:
            assert solutions["brute"] is None
        else:
            assert close(solutions["brute"].score, expected)


@settings(max_examples=40, deadline=None)
@given(
    offsets=st.lists(st.floats(0.5, 6), min_size=1, max_size=5).map(sorted),
    m=st.integers(1, 4),
    max_turn_deg=st.floats(0.01, 5),
    data=st.data(),
)
def test_problems_that_cannot_turn_back_to_the_axis_are_infeasible_everywhere(offsets, m, max_turn_deg, data):
    # Every guide point lies off the axis by at least 0.5 with spacing 1, so the first link
    # leaves at >= 26 degrees and the last returns at <= -26: somewhere the path turns by more
    # than the limit.  (With m = 1 the single guide sees the whole turn.)
    d = len(offsets)
    scores = data.draw(st.lists(st.floats(0, 1, width=32), min_size=2 * d + (m - 1) * d * d,
                                max_size=2 * d + (m - 1) * d * d))
    scores = np.array(scores, dtype=np.float32)
    problem = PolylineProblem(scores[:d], scores[2 * d:].reshape(m - 1, d, d), scores[d:2 * d],
                              np.array(offsets), 1.0, max_turn_deg)
    for method in ALL_WAYS:
        assert outcome(problem, method) is None, method


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    d=st.integers(8, 48),
    m=st.integers(1, 4),
    n_end=st.sampled_from([1, 1, 3, 20]),
    max_turn_deg=st.integers(1, 180).map(float) | st.floats(0.5, 180),
    seed=st.integers(0, 2**32 - 1),
)
def test_window_and_mitm_agree_on_larger_problems(d, m, n_end, max_turn_deg, seed):
    # Too big for brute; mitm checks every candidate, window slides (both ways).
    rng = np.random.default_rng(seed)
    offsets = np.sort(rng.choice(np.linspace(-8, 8, 2 * d), size=d))  # non-uniform, repeats possible
    end_offsets = np.sort(rng.uniform(-8, 8, n_end))
    scores = (rng.integers(0, 3, size=(m - 1, d, d)) if seed % 2 else rng.random((m - 1, d, d))).astype(np.float32)
    problem = PolylineProblem(rng.random(d, dtype=np.float32), scores, rng.random((d, n_end), dtype=np.float32),
                              offsets, float(rng.uniform(0.5, 6)), max_turn_deg, end_offsets=end_offsets)
    solutions = {way: outcome(problem, way) for way in ("mitm", "window", *FORCED_KERNELS)}
    if solutions["mitm"] is None:
        assert all(sol is None for sol in solutions.values())
        return
    for way, sol in solutions.items():
        path = [sol.start_index, *sol.indices.tolist(), sol.end_index]
        assert is_feasible(problem, path), way
        assert close(sol.score, solutions["mitm"].score), (way, sol.score, solutions["mitm"].score)
