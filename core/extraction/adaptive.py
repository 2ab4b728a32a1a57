"""The adaptive extraction (mode ``auto``): the object's course from its appearance, then the exact DP along it.

1. The object's appearance is learnt at the clicks (core.extraction.appearance)
   over a window that reaches :data:`COURSE_REACH_SHARE` of the span to either
   side of the segment between them.
2. Its course: the exact DP over coarse guides across that whole corridor, on
   the road-likeness map.  A link scores the map minus :data:`MAP_BASE` along
   it, minus :data:`LATERAL_PENALTY` per pixel it moves sideways, and the turn
   is limited to :data:`COURSE_MAX_TURN_DEG` only, so corners can be followed.
3. The course is kept only where the object clearly leaves the segment: the
   segment's mean road-likeness is below :data:`GATE_SUPPORT` and the course's
   exceeds it by :data:`GATE_GAIN`; or, less clearly (:data:`TURN_SUPPORT`,
   :data:`TURN_GAIN`), where the image at a click shows the object running at
   :data:`TURN_DEG` or more to the segment (a corner between the clicks), or
   :data:`SHARP_TURN_DEG` or more where the segment looks more like road
   (:data:`SHARP_TURN_SUPPORT`).
   Or where the refined course (4.) is a mild bend: it bows MILD_BEND_MIN_BOW_PX or more, smoothly
   (MILD_BEND_MAX_WIGGLE_PX), along a band of steady width (MILD_BEND_MAX_WIDTH_CV), from ends that
   are not held at the limits of their snapping range (the object is at the clicks).
   Otherwise the object runs straight between the clicks, which set its
   position: the polyline is the segment.
4. A bent course is refined by the exact DP on finer guides (the settings'
   candidate spacing, at least one guide every :data:`FINE_SPACING_PX`) within
   ``half_width_px`` of the course.

Measurements behind the constants: docs/notes/extraction-and-polyline.md, "Adaptive extraction".
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from core import engine
from core.cancel import check
from core.extraction.appearance import LikelihoodWindow, road_likelihood, road_samples
from core.extraction.centre import bend_shape, centre_map
from core.extraction.estimate import edge_centres, likelihood_run_width, path_support, turn_at_clicks_deg
from core.extraction.guides import DEFAULT_SNAP_HALF_WIDTH_PX, Guides, guides_with_offsets, offset_range_on_raster
from core.extraction.map_scores import EXCLUDED_SCORE, corner_path_means, map_link_tables
from core.extraction.options import turn_paths
from core.polyline import cpu as polyline_cpu
from core.polyline.brute import MAX_BRUTE_PATHS
from core.polyline.prepare import prepare
from core.polyline.problem import PolylineProblem, PolylineSolution

__all__ = ["AdaptiveOutcome", "adaptive_window_box", "extract_adaptive"]

#: The course may stray this share of the span to either side of the segment...
COURSE_REACH_SHARE = 0.5
#: ...but no farther than this (px): click in between for longer detours.
COURSE_MAX_REACH_PX = 160.0
#: One course guide every so many px of span (between COURSE_NODES_RANGE nodes), candidates this far apart (px).
COURSE_SPACING_PX = 22.0
COURSE_NODES_RANGE = (6, 24)
COURSE_STEP_PX = 3.0
#: The course's ends may slide this far (px) across the segment, in steps of COURSE_END_STEP_PX.
COURSE_END_PX = 6.0
COURSE_END_STEP_PX = 2.0
COURSE_MAX_TURN_DEG = 90.0
#: The course's links are sampled this far apart (px): it is coarse, and its scoring is most of the work.
COURSE_SAMPLE_STEP_PX = 2.0
#: Map value that a link's samples must exceed to gain; and the score lost per px of sideways move.
MAP_BASE = 0.5
LATERAL_PENALTY = 0.5
#: The course replaces the segment only when the segment's mean road-likeness is below GATE_SUPPORT
#: and the course's is above it by GATE_GAIN.
GATE_SUPPORT = 0.4
GATE_GAIN = 0.3
#: ... or when the segment's is below TURN_SUPPORT, the course's is above it by TURN_GAIN, and at one click at
#: least the image's direction (structure tensor, Gaussian of TURN_SIGMA_PX) is TURN_DEG or more off the segment.
TURN_SUPPORT = 0.5
TURN_GAIN = 0.25
TURN_DEG = 40.0
TURN_SIGMA_PX = 8.0
#: ... or, the same gain given, when the segment's is below SHARP_TURN_SUPPORT and the image runs SHARP_TURN_DEG
#: or more off it: a sharp corner whose chord crosses other pavement (plazas, car parks, a junction's apron).
SHARP_TURN_SUPPORT = 0.7
SHARP_TURN_DEG = 60.0
#: ... or when the course refined (on the centre map) is a mild bend: a cubic fit of its offsets across the
#: segment bows MILD_BEND_MIN_BOW_PX or more from a straight fit, leaving residuals of at most
#: MILD_BEND_MAX_WIGGLE_PX rms, and the centre map along it varies by at most MILD_BEND_MAX_WIDTH_CV of its mean
#: (core.extraction.centre.bend_shape): a road bowing a few px, whose chord stays on it.  Neither end may be
#: held at the limit of its snapping range (a course that wants to go farther follows a band beside the clicks).
MILD_BEND_MIN_BOW_PX = 4.25
MILD_BEND_MAX_WIGGLE_PX = 0.7
MILD_BEND_MAX_WIDTH_CV = 0.2
#: With snapping, a straight course moves onto the object's centre between its edges near both clicks when
#: both edge pairs stand CENTRING_SIGNIFICANCE times above the profiles' slope noise and the move is at
#: least CENTRING_DEADBAND_PX (core.extraction.estimate.edge_centres).
CENTRING_SIGNIFICANCE = 6.0
CENTRING_DEADBAND_PX = 1.5
#: ... unless the wider edge pair spans more than CENTRING_WIDTH_RATIO times, and CENTRING_WIDTH_EXCESS_PX more
#: than, the run of road-likeness around the segment (the width of what looks like the surface at the clicks):
#: such a pair is not the object's own edges but, say, kerbs or walls beyond its verges
#: (core.extraction.estimate.likelihood_run_width).  The excess spares narrow roads clicked near an edge, whose
#: appearance, learnt partly off the road, leaves a run of a few px.
CENTRING_WIDTH_RATIO = 2.5
CENTRING_WIDTH_EXCESS_PX = 10.0
#: The refinement scores closeness to the centre line (core.extraction.centre.centre_map) above CENTRE_BASE,
#: with a small sideways penalty (the corridor already keeps it on the course).
CENTRE_BASE = 0.5
CENTRE_LATERAL_PENALTY = 0.5
#: Corners of two-segment courses are tried on a grid of this step (px) over the corridor, then a quarter
#: of it around the best.
CORNER_STEP_PX = 8.0
#: A bent course is refined with one guide at least every so many px.
FINE_SPACING_PX = 15.0
#: Pixels read beyond the farthest candidate (the appearance filters' reach).
_MARGIN_PX = 10.0


@dataclass(frozen=True, eq=False)
class AdaptiveOutcome:
    """One adaptive extraction.

    Attributes
    ----------
    solution : core.polyline.PolylineSolution
        The polyline on ``guides`` (for a straight course, the candidates nearest the segment).
    vertices_px : (k, 2) float64 ndarray
        The polyline, ends included.
    guides : Guides
    window : LikelihoodWindow
        The road-likeness map the course was found on.
    bent : bool
        Whether the polyline follows a bent course rather than the segment.
    timings_ms : dict
        ``appearance``, ``scoring``, ``dp`` and ``backtrack``.
    """

    solution: PolylineSolution
    vertices_px: np.ndarray
    guides: Guides
    window: LikelihoodWindow
    bent: bool
    timings_ms: dict


def course_reach_px(start, end) -> float:
    """How far (px) the course may stray from the segment between two clicks."""
    length = float(np.hypot(*(np.asarray(end, float) - np.asarray(start, float))))
    return min(COURSE_REACH_SHARE * length, COURSE_MAX_REACH_PX)


def adaptive_window_box(start, end, half_width_px: float) -> tuple[int, int, int, int]:
    """``(col_off, row_off, width, height)`` of the pixels the adaptive extraction reads."""
    a, b = np.asarray(start, float), np.asarray(end, float)
    reach = course_reach_px(a, b) + half_width_px + _MARGIN_PX
    lo = np.floor(np.minimum(a, b) - reach).astype(np.int64)
    hi = np.ceil(np.maximum(a, b) + reach).astype(np.int64)
    return int(lo[0]), int(lo[1]), int(hi[0] - lo[0]), int(hi[1] - lo[1])


def extract_adaptive(bands, intensity, box, start, end, settings, backend: str, cancel=None,
                     size=None) -> AdaptiveOutcome:
    """The adaptive extraction between two clicks, on a window's bands.

    Parameters
    ----------
    bands : (H, W, k) float32 ndarray
        The window :func:`adaptive_window_box` gives, every band (NaN: no data).
    intensity : (H, W) float32 ndarray
        Its intensity (core.io.raster.Raster.intensity_of).
    box : tuple of int
        ``(col_off, row_off, width, height)`` of that window.
    start, end : (2,) float arrays
        The clicks ``(x, y)`` in raster pixels.
    settings : core.extraction.ExtractionSettings
        Uses ``nodes``, ``points``, ``half_width_px``, ``snap_endpoints``,
        ``snap_half_width_px``, ``solver`` and ``max_turn_deg`` (for the
        straight course only; a bent one may turn up to COURSE_MAX_TURN_DEG).
    backend : {"cpu", "gpu"}
        The resolved backend of the link scores and the DP.
    cancel : core.cancel.CancelToken, optional
    size : (width, height), optional
        The raster's: the ends neither slide nor move off it (:func:`core.extraction.guides.offsets_on_raster`).

    Returns
    -------
    AdaptiveOutcome
    """
    started = time.perf_counter()
    window = road_likelihood(bands, box[0], box[1], road_samples(start, end))
    intensity = LikelihoodWindow(np.asarray(intensity, np.float32), box[0], box[1])
    timings = {"appearance": (time.perf_counter() - started) * 1e3, "scoring": 0.0, "dp": 0.0, "backtrack": 0.0}
    check(cancel)
    course = _course(window, start, end, settings.solver, backend, cancel, timings, size)
    corner, corner_support = _corner(window, start, end, backend)
    course_support = path_support(window, course)
    if corner_support > course_support:
        course, course_support = corner, path_support(window, corner)
    chord_support = path_support(window, np.stack([start, end]))
    gain = course_support - chord_support
    bent = chord_support < GATE_SUPPORT and gain > GATE_GAIN
    if not bent and chord_support < max(TURN_SUPPORT, SHARP_TURN_SUPPORT) and gain > TURN_GAIN and turn_paths():
        least = TURN_DEG if chord_support < TURN_SUPPORT else SHARP_TURN_DEG
        bent = turn_at_clicks_deg(bands, box[0], box[1], start, end, TURN_SIGMA_PX) >= least
    refined = _refine(window, start, end, course, settings, backend, cancel, timings, size) if bent \
        else _mild_bend(window, start, end, course, settings, backend, cancel, timings, size)
    if refined is not None:
        guides, solution, _ = refined
        vertices = guides.vertices(solution.start_index, solution.indices, solution.end_index)
        bent = True
    else:
        guides, solution = _segment(window, start, end, settings, backend, cancel, timings, size)
        vertices = _chord_points(start, end, settings.nodes)
        centred = _centred(vertices, intensity, window, start, end, _end_offsets(settings)[-1], size) \
            if settings.snap_endpoints else vertices
        if centred is not vertices:  # the clicks were off the object: learn its appearance where it is
            vertices = centred
            window = road_likelihood(bands, box[0], box[1], road_samples(vertices[0], vertices[-1]))
    return AdaptiveOutcome(solution, vertices, guides, window, bent, timings)


def _centred(vertices, intensity, window, start, end, reach_px, size=None):
    """The segment moved onto the object's edge-pair centre at its ends, where both pairs are clear.

    Moves of less than CENTRING_DEADBAND_PX, or past ``reach_px`` (the snapping
    half-width), leave it where it is, as do pairs much wider than the run of
    road-likeness in ``window`` around the segment (CENTRING_WIDTH_RATIO and _EXCESS_PX).  An end is not
    moved off the raster (``size``: its width and height).
    """
    found = edge_centres(intensity, start, end, CENTRING_SIGNIFICANCE)
    if found is None:
        return vertices
    offsets, pair_width = found
    if not CENTRING_DEADBAND_PX <= max(map(abs, offsets)) <= reach_px:
        return vertices
    run_width = likelihood_run_width(window, np.stack([start, end]))
    if run_width is not None and pair_width > max(CENTRING_WIDTH_RATIO * run_width,
                                                  run_width + CENTRING_WIDTH_EXCESS_PX):
        return vertices
    axis = (end - start) / float(np.hypot(*(end - start)))
    if size is not None:
        normal = np.array([-axis[1], axis[0]])
        offsets = [float(np.clip(offset, *offset_range_on_raster(xy, normal, size)))
                   for offset, xy in zip(offsets, (start, end))]
    fraction = np.linspace(0.0, 1.0, len(vertices))[:, None]
    across = (1 - fraction) * offsets[0] + fraction * offsets[1]
    return vertices + across * np.array([-axis[1], axis[0]])


def _course(window, start, end, solver, backend, cancel, timings, size=None) -> np.ndarray:
    """The course's vertices: the exact DP over coarse guides across the whole corridor."""
    length = float(np.hypot(*(end - start)))
    nodes = int(np.clip(round(length / COURSE_SPACING_PX) + 1, *COURSE_NODES_RANGE))
    reach = course_reach_px(start, end)
    offsets = np.arange(-reach, reach + 1e-9, COURSE_STEP_PX)
    offsets -= offsets[np.argmin(np.abs(offsets))]  # the segment itself is a candidate
    ends = np.arange(-COURSE_END_PX, COURSE_END_PX + 1e-9, COURSE_END_STEP_PX)
    guides = guides_with_offsets(start, end, nodes, offsets, ends, size)
    solution = _solve(window, guides, None, COURSE_MAX_TURN_DEG, "mitm" if solver == "mitm" else "window",
                      backend, cancel, timings, step=COURSE_SAMPLE_STEP_PX)
    return guides.vertices(solution.start_index, solution.indices, solution.end_index)


def _corner(window, start, end, backend):
    """The best two-segment course ``start -> X -> end`` and its mean road-likeness: a corner of any angle,
    which the course DP's sideways penalty would refuse.

    X is searched on a CORNER_STEP_PX grid over the corridor, then on a grid a
    quarter as fine around the best point.
    """
    length = float(np.hypot(*(end - start)))
    axis = (end - start) / length
    normal = np.array([-axis[1], axis[0]])
    reach = course_reach_px(start, end)
    along = np.arange(CORNER_STEP_PX, length - CORNER_STEP_PX / 2, CORNER_STEP_PX)
    across = np.arange(-reach, reach + 1e-9, CORNER_STEP_PX)
    if along.size == 0:
        return np.stack([start, end]), 0.0
    best, mean = _best_corner(window, start, end, along, across, axis, normal, backend)
    fine = np.arange(-CORNER_STEP_PX, CORNER_STEP_PX + 1e-9, CORNER_STEP_PX / 4)
    along = np.clip(best[0] + fine, 1.0, length - 1.0)
    across = np.clip(best[1] + fine, -reach, reach)
    best, mean = _best_corner(window, start, end, along, across, axis, normal, backend)
    return np.stack([start, start + best[0] * axis + best[1] * normal, end]), mean


def _best_corner(window, start, end, along, across, axis, normal, backend):
    """``((along, across) of the best corner, its path's mean road-likeness)`` over a grid of corners."""
    grid = np.stack(np.meshgrid(along, across, indexing="ij"), axis=-1).reshape(-1, 2)
    corners = start + grid[:, :1] * axis + grid[:, 1:] * normal
    means = engine.run_with_cpu_fallback(
        backend,
        lambda: engine.gpu_package("polyline").corner_path_means(window, start, end, corners),
        lambda: corner_path_means(window, start, end, corners),
    )
    best = int(np.argmax(means))
    return grid[best], float(means[best])


def _refine(window, start, end, course, settings, backend, cancel, timings, size=None):
    """The exact DP on fine guides within ``half_width_px`` of the course: ``(guides, solution, centre map)``."""
    length = float(np.hypot(*(end - start)))
    nodes = max(settings.nodes, int(math.ceil(length / FINE_SPACING_PX)) + 1)
    step = 2 * settings.half_width_px / (settings.points - 1)
    axis = (end - start) / length
    normal = np.array([-axis[1], axis[0]])
    along, across = (course - start) @ axis, (course - start) @ normal
    reference = np.interp(np.arange(1, nodes - 1) * length / (nodes - 1), along, across)
    lo = math.floor((reference.min() - settings.half_width_px) / step)
    hi = math.ceil((reference.max() + settings.half_width_px) / step)
    offsets = np.arange(lo, hi + 1) * step
    guides = guides_with_offsets(start, end, nodes, offsets, _end_offsets(settings), size)
    paths = guides.start_offsets.size * offsets.size ** guides.n_guides * guides.end_offsets.size
    if settings.solver == "brute" and paths > MAX_BRUTE_PATHS:  # (the settings' nodes and points allow fewer)
        raise ValueError(f"auto mode follows this bend on guides of its own ({nodes} nodes, {offsets.size} points "
                         f"across), {paths:.1e} polylines: too many for solver 'brute' (a reference for at most "
                         f"{MAX_BRUTE_PATHS:,}); use solver 'window' or 'mitm', or mode 'ribbon' or 'edge'")
    far = np.abs(offsets[None, :] - reference[:, None]) > settings.half_width_px + 1e-9
    excluded = np.concatenate([np.zeros(guides.start_offsets.size, bool), far.ravel(),
                               np.zeros(guides.end_offsets.size, bool)])
    sampled = np.concatenate(guides.layer_points())[~excluded]  # links from excluded points are not sampled
    centre = centre_map(window, course, settings.half_width_px, sampled)
    solution = _solve(centre, guides, excluded, COURSE_MAX_TURN_DEG, settings.solver, backend, cancel, timings,
                      base=CENTRE_BASE, lateral=CENTRE_LATERAL_PENALTY)
    return guides, solution, centre


def _mild_bend(window, start, end, course, settings, backend, cancel, timings, size=None):
    """:func:`_refine`'s result where the refined course is a mild bend (MILD_BEND_*), else None (also where
    the refinement is not possible: the segment stands)."""
    try:
        guides, solution, centre = _refine(window, start, end, course, settings, backend, cancel, timings, size)
    except ValueError:  # too many polylines for solver 'brute', or none within the corridor
        return None
    if _pinned(solution.start_index, guides.start_offsets) or _pinned(solution.end_index, guides.end_offsets):
        return None  # an end held at the limit of its snapping range: the course follows something beside the clicks
    vertices = guides.vertices(solution.start_index, solution.indices, solution.end_index)
    bow, wiggle, width_cv = bend_shape(centre, vertices, start, end)
    if bow >= MILD_BEND_MIN_BOW_PX and wiggle <= MILD_BEND_MAX_WIGGLE_PX and width_cv <= MILD_BEND_MAX_WIDTH_CV:
        return guides, solution, centre
    return None


def _pinned(index: int, offsets) -> bool:
    """Whether an end's chosen candidate is the first or last of several (the end wanted to go farther)."""
    return len(offsets) > 1 and index in (0, len(offsets) - 1)


def _segment(window, start, end, settings, backend, cancel, timings, size=None):
    """The straight course: the segment's own score, on the settings' guides (for overlays)."""
    guides = guides_with_offsets(start, end, settings.nodes, np.zeros(1), np.zeros(1))
    solution = _solve(window, guides, None, settings.max_turn_deg, "window", backend, cancel, timings)
    shown = guides_with_offsets(start, end, settings.nodes,
                                np.linspace(-settings.half_width_px, settings.half_width_px, settings.points),
                                _end_offsets(settings), size)
    centre, start_centre, end_centre = (int(np.argmin(np.abs(offsets)))
                                        for offsets in (shown.offsets, shown.start_offsets, shown.end_offsets))
    indices = np.full(shown.n_guides, centre, dtype=np.int64)
    return shown, PolylineSolution(solution.score, indices, start_centre, end_centre, solution.method,
                                   solution.backend, solution.timings_ms)


def _solve(window, guides, excluded, max_turn_deg, method, backend, cancel, timings, base=MAP_BASE,
           lateral=LATERAL_PENALTY, step=1.0) -> PolylineSolution:
    """Score the guides' links on the map (CPU or GPU), samples ``step`` px apart, and solve the exact DP there."""
    started = time.perf_counter()
    first, links, last = engine.run_with_cpu_fallback(
        backend,
        lambda: engine.gpu_package("polyline").map_link_tables(window, guides, base, lateral, excluded, cancel,
                                                               step),
        lambda: map_link_tables(window, guides, base, lateral, excluded, cancel, step),
    )
    scored = time.perf_counter()
    problem = PolylineProblem(first, links, last, guides.offsets, guides.spacing, max_turn_deg,
                              start_offsets=guides.start_offsets, end_offsets=guides.end_offsets)
    prepared = prepare(problem)
    solution = engine.run_with_cpu_fallback(
        backend,
        lambda: engine.gpu_package("polyline").solve_prepared(prepared, method, cancel),
        lambda: polyline_cpu.solve_prepared(prepared, method, cancel),
    )
    timings["scoring"] += (scored - started) * 1e3
    timings["dp"] += solution.timings_ms.get("dp", 0.0)
    timings["backtrack"] += solution.timings_ms.get("backtrack", 0.0)
    if solution.score <= EXCLUDED_SCORE / 2:
        raise ValueError("the adaptive extraction found no polyline within the corridor of its course")
    return solution


def _end_offsets(settings) -> np.ndarray:
    """The candidates of the start and end: the clicks, or the snapping guides."""
    if not settings.snap_endpoints:
        return np.zeros(1)
    half = settings.snap_half_width_px
    if half is None:
        half = min(settings.half_width_px, DEFAULT_SNAP_HALF_WIDTH_PX)
    return np.linspace(-half, half, settings.points)


def _chord_points(start, end, nodes) -> np.ndarray:
    """``nodes`` points evenly spaced on the segment, the clicks included."""
    return start + np.linspace(0.0, 1.0, nodes)[:, None] * (end - start)
