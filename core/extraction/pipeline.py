"""One line extraction end to end: window read, gradient, link scores, exact DP.

Only the raster window under the guides (plus a smoothing margin) is read, so
the cost depends on the guides, never on the raster's size.
"""

from __future__ import annotations

import contextlib
import numbers
import time
from dataclasses import dataclass, field

import numpy as np

from core import engine
from core.cancel import check, flag_of
from core.extraction.adaptive import adaptive_window_box, extract_adaptive
from core.extraction.appearance import road_likelihood, road_samples
from core.extraction.coarse import coarse_box, coarse_factor, combined_estimate, piece_ends
from core.extraction.cost import check_extraction_cost
from core.extraction.estimate import RoadEstimate, estimate_road
from core.extraction.gradient import GAUSSIAN_TRUNCATE, gradient_window
from core.extraction.guides import Guides, build_guides, clipped_to_raster
from core.extraction.options import ScoringOptions
from core.extraction.settings import AUTO, ExtractionSettings
from core.extraction.solving import solve_on_raster, straight_among_ties
from core.extraction.spectral import model_bands
from core.io.raster import Raster, open_raster

__all__ = ["ExtractionSettings", "ExtractionResult", "extract", "window_margin_px", "gradient_step_px",
           "FINE_GRID_BELOW_SIGMA_PX"]

#: Below this smoothing (px) the gradient is computed on the half-pixel grid
#: (docs/notes/extraction-and-polyline.md, "Gradient grid step").
FINE_GRID_BELOW_SIGMA_PX = 2.0

#: Pixels around the guides whose appearance the estimate (width, polarity, confidence) reads.
_ESTIMATE_MARGIN_PX = 40.0


@dataclass(frozen=True, eq=False)
class ExtractionResult:
    """The optimal polyline of one extraction.

    Attributes
    ----------
    vertices_px : (m + 2, 2) float64 ndarray
        ``(x, y)`` pixel vertices from start to end, the endpoints included
        (the snapped ones when snapping).
    score : float
        Sum of the link scores along the polyline.
    settings : ExtractionSettings
    backend : {"cpu", "gpu"}
        The backend that ran.
    method : str
        The solver that ran.
    timings_ms : dict of str to float
        Milliseconds of ``read``, ``gradient``, ``scoring``, ``dp``,
        ``backtrack`` and ``total``.
    guides : core.extraction.guides.Guides
        The candidate geometry (for overlays).
    indices : (m,) int64 ndarray
        Chosen candidate on each guide.
    start_index, end_index : int
        Chosen start and end candidates (0 without snapping).
    estimate : core.extraction.estimate.RoadEstimate or None
        The object's width, polarity and contrast as this extraction saw it,
        its course (straight or bent) and the confidence in ``[0, 1]``.
    coarse_factor : int
        1 for a direct extraction; for a coarse-to-fine one (a span whose
        window exceeds core.extraction.coarse.DIRECT_LIMIT_BYTES), the
        reduction of the coarse stage (then ``guides`` and ``indices`` are
        None and ``timings_ms`` adds ``coarse`` and ``refine``).
    pieces : int
        Full-resolution pieces chained (1 for a direct extraction).
    """

    vertices_px: np.ndarray
    score: float
    settings: ExtractionSettings
    backend: str
    method: str
    timings_ms: dict = field(default_factory=dict)
    guides: Guides | None = None
    indices: np.ndarray | None = None
    start_index: int = 0
    end_index: int = 0
    estimate: RoadEstimate | None = None
    coarse_factor: int = 1
    pieces: int = 1

    @property
    def strategy(self) -> str:
        """``"direct"``, or ``"coarse-to-fine"`` for a long span run in two stages."""
        return "direct" if self.coarse_factor == 1 else "coarse-to-fine"

    @property
    def confidence(self) -> float | None:
        """How clearly the image shows the object under the polyline, in ``[0, 1]`` (None without an estimate)."""
        return None if self.estimate is None else self.estimate.confidence


def window_margin_px(settings: ExtractionSettings, options: ScoringOptions | None = None) -> float:
    """Pixels read around the guides: the Gaussian's reach, the ribbon half-width and 2 px.

    ``options`` are the resolved scoring options (default: the settings' own,
    ``auto`` values taken as without an estimate).
    """
    options = settings.scoring_for(None) if options is None else options
    ribbon = 0.5 * options.ribbon_width_px if settings.mode == "ribbon" else 0.0
    return GAUSSIAN_TRUNCATE * settings.sigma_px + ribbon + 2.0


def gradient_step_px(settings: ExtractionSettings) -> float:
    """Grid step (px) of the gradient for these settings: 0.5 below ``FINE_GRID_BELOW_SIGMA_PX``, else 1.0."""
    return 0.5 if settings.sigma_px < FINE_GRID_BELOW_SIGMA_PX else 1.0


def extract(image, start, end, settings: ExtractionSettings | None = None, *, cancel=None,
            memory_budget_bytes: int | None = None, **overrides) -> ExtractionResult:
    """Find the best polyline between two points of an image.

    Parameters
    ----------
    image : str, os.PathLike, core.io.raster.Raster or ndarray
        A file (opened and closed here), an open Raster (cheaper for repeated
        extractions) or an (H, W) or (H, W, C) array.
    start, end : (2,) array_like of float
        The clicked points in pixel coordinates ``(x, y)``, inside the raster.
    settings : ExtractionSettings, optional
        Default ``ExtractionSettings()``.
    cancel : core.cancel.CancelToken, optional
        Lets another thread stop the extraction (checked between the steps and
        polled by the long CPU kernels).
    memory_budget_bytes : int, optional
        Host memory the extraction may take (default: core.memory's share of
        what is available).  A span whose full-resolution window needs more
        (or more than core.extraction.coarse.DIRECT_LIMIT_BYTES) runs
        coarse-to-fine (``result.strategy``).
    **overrides
        Fields of the settings to change for this call (e.g. ``nodes=6``).

    Returns
    -------
    ExtractionResult

    Raises
    ------
    ValueError
        For bad settings, endpoints outside the raster or equal, a window
        without valid pixels, the host-memory budget exceeded
        (core.memory.HostMemoryError), or no feasible polyline
        (core.polyline.NoFeasiblePolylineError).
    core.io.raster.RasterError
        For unreadable images.
    core.engine.BackendUnavailableError
        For ``backend="gpu"`` without a usable GPU.
    core.cancel.Cancelled
        When ``cancel`` was cancelled before the result was complete.

    Examples
    --------
    A bright road 10 px wide (rows 25-34, centre line y = 30) in noise.  At
    the defaults (mode ``auto``) a straight road gives the segment between
    the clicks, with what the extraction saw of the road:

    >>> import numpy as np
    >>> import core
    >>> image = np.zeros((60, 120), np.float32)
    >>> image[25:35, :] = 1.0
    >>> image += np.random.default_rng(0).normal(0, 0.1, image.shape).astype(np.float32)
    >>> result = core.extract(image, (10, 30), (110, 30), nodes=5, backend="cpu")
    >>> result.vertices_px.tolist()
    [[10.0, 30.0], [35.0, 30.0], [60.0, 30.0], [85.0, 30.0], [110.0, 30.0]]
    >>> e = result.estimate
    >>> e.course, e.width_px, e.polarity, round(e.confidence, 1)
    ('straight', 10.0, 'bright', 0.8)

    The ``ribbon`` mode with snapping moves clicks 2 px above the centre of a
    5 px road onto it:

    >>> image = np.zeros((40, 80), np.float32)
    >>> image[20:25, :] = 1.0
    >>> result = core.extract(image, (5, 20.5), (75, 20.5), nodes=5, points=9, half_width_px=4,
    ...                       sigma_px=1, mode="ribbon", ribbon_width_px=5, snap_endpoints=True, backend="cpu")
    >>> result.vertices_px.tolist()
    [[5.0, 22.5], [22.5, 22.5], [40.0, 22.5], [57.5, 22.5], [75.0, 22.5]]
    >>> result.backend, result.method
    ('cpu', 'window')
    """
    t_begin = time.perf_counter()
    flag_of(cancel)  # a wrong type fails here, before any work
    settings = _settings(settings, overrides)
    backend = _backend(settings)
    with _opened(image, settings.band) as raster:
        start_xy, end_xy = _clicks_on_raster(raster, start, end)
        band_count = 1 if settings.band else raster.band_count
        factor = coarse_factor(settings, start_xy, end_xy, band_count, backend, memory_budget_bytes)
        if factor > 1:
            return _extract_coarse_to_fine(raster, start_xy, end_xy, settings, factor, memory_budget_bytes, cancel,
                                           t_begin)
        # before the guides: their points alone can be more than the memory
        check_extraction_cost(settings, start_xy, end_xy, band_count, backend, memory_budget_bytes)
        if settings.mode == AUTO:
            return _extract_adaptive(raster, start_xy, end_xy, settings, backend, cancel, t_begin)
        return _extract_scored(raster, start_xy, end_xy, settings, backend, cancel, t_begin)


def _extract_adaptive(raster, start_xy, end_xy, settings, backend, cancel, t_begin) -> ExtractionResult:
    """Mode ``auto``: core.extraction.adaptive on a window of every band."""
    box = adaptive_window_box(start_xy, end_xy, settings.half_width_px)
    bands, intensity = _read_bands(raster, box)
    t_read = time.perf_counter()
    check(cancel)
    size = (raster.width, raster.height)
    outcome = extract_adaptive(bands, intensity, box, start_xy, end_xy, settings, backend, cancel, size)
    vertices = clipped_to_raster(outcome.vertices_px, size)  # (a guard: its corridors' candidates may reach off)
    estimate = estimate_road(outcome.window, intensity, vertices, "bent" if outcome.bent else "straight")
    solution = outcome.solution
    timings = {"read": (t_read - t_begin) * 1e3, "gradient": 0.0, **outcome.timings_ms}
    timings["total"] = (time.perf_counter() - t_begin) * 1e3
    return ExtractionResult(vertices, float(solution.score), settings, solution.backend, solution.method,
                            timings, outcome.guides, np.asarray(solution.indices, dtype=np.int64),
                            int(solution.start_index), int(solution.end_index), estimate)


def _extract_scored(raster, start_xy, end_xy, settings, backend, cancel, t_begin) -> ExtractionResult:
    """Modes ``ribbon`` and ``edge``: gradient link scores on the settings' guides."""
    size = (raster.width, raster.height)
    guides = _guides(start_xy, end_xy, settings, size)
    box = guides.bounds_px(_ESTIMATE_MARGIN_PX)
    bands, intensity = _read_bands(raster, box)
    t_bands = time.perf_counter()
    likelihood = road_likelihood(bands, box[0], box[1], road_samples(start_xy, end_xy))
    options = settings.scoring_for(estimate_road(likelihood, intensity, np.stack([start_xy, end_xy]), "straight"))
    t_appearance = time.perf_counter()
    box, window = _read_window(raster, guides, window_margin_px(settings, options))
    t_read = time.perf_counter()
    check(cancel)
    gradient = gradient_window(window, settings.sigma_px, box[0], box[1], step_px=gradient_step_px(settings))
    t_gradient = time.perf_counter()
    check(cancel)
    solution = solve_on_raster(backend, gradient, guides, options, settings.solver, settings.max_turn_deg, size, cancel)
    if solution.score == 0.0 or _flat(window):  # (a flat window's gradient is float32 rounding, not zero)
        solution = straight_among_ties(solution, guides, settings.max_turn_deg, guides.off_raster(size))
    vertices = clipped_to_raster(guides.vertices(solution.start_index, solution.indices, solution.end_index), size)
    estimate = estimate_road(likelihood, intensity, vertices, "straight")
    timings = {"read": (t_bands - t_begin + t_read - t_appearance) * 1e3,
               "appearance": (t_appearance - t_bands) * 1e3, "gradient": (t_gradient - t_read) * 1e3,
               **{phase: solution.timings_ms[phase] for phase in ("scoring", "dp", "backtrack")},
               "total": (time.perf_counter() - t_begin) * 1e3}
    return ExtractionResult(vertices, float(solution.score), settings, solution.backend, solution.method, timings,
                            guides, np.asarray(solution.indices, dtype=np.int64), int(solution.start_index),
                            int(solution.end_index), estimate)


def _extract_coarse_to_fine(raster, start_xy, end_xy, settings, factor, budget, cancel, t_begin):
    """A long span: the extraction on the window reduced ``factor`` times, then full-resolution pieces along it."""
    box = coarse_box(settings, start_xy, end_xy, factor, (raster.width, raster.height))
    reduced = raster.read_reduced(*box, factor, cancel=cancel)
    origin = np.asarray(box[:2], np.float64)
    t_read = time.perf_counter()
    coarse = extract(reduced, (start_xy - origin) / factor, (end_xy - origin) / factor, settings.replace(band=None),
                     cancel=cancel, memory_budget_bytes=budget)
    del reduced
    t_coarse = time.perf_counter()
    course = origin + coarse.vertices_px * factor
    course[0], course[-1] = start_xy, end_xy  # the pieces snap the clicks themselves, at full resolution
    pieces, here, size = [], start_xy, np.array([raster.width, raster.height], np.float64)
    for target in piece_ends(course):
        check(cancel)
        pieces.append(extract(raster, here, target, settings, cancel=cancel, memory_budget_bytes=budget))
        here = np.clip(pieces[-1].vertices_px[-1], 0.0, size)
    # each piece goes on from where the previous one ended: its own start, which snapping may have moved a few
    # pixels across its direction, would put a jog out and back into the line at every joint
    vertices = [pieces[0].vertices_px] + [p.vertices_px[1:] for p in pieces[1:]]
    timings = {key: sum(r.timings_ms.get(key, 0.0) for r in [coarse, *pieces])
               for key in ("appearance", "gradient", "scoring", "dp", "backtrack")}
    timings.update(read=(t_read - t_begin) * 1e3 + sum(r.timings_ms["read"] for r in [coarse, *pieces]),
                   coarse=(t_coarse - t_begin) * 1e3, refine=(time.perf_counter() - t_coarse) * 1e3,
                   total=(time.perf_counter() - t_begin) * 1e3)
    return ExtractionResult(np.concatenate(vertices), float(sum(p.score for p in pieces)), settings,
                            pieces[0].backend, pieces[0].method, timings,
                            estimate=combined_estimate(coarse.estimate, [p.estimate for p in pieces]),
                            coarse_factor=factor, pieces=len(pieces))


def _flat(window) -> bool:
    """Whether the window's valid pixels (it holds some: :func:`_check_valid`) all hold one value."""
    return bool(np.nanmin(window) == np.nanmax(window))


def _backend(settings: ExtractionSettings) -> str:
    """The backend that will run (``brute`` is CPU-only, so ``auto`` means the CPU for it)."""
    if settings.solver == "brute" and settings.backend == "auto":
        return "cpu"
    return engine.resolve_backend(settings.backend)


def _read_window(raster, guides: Guides, margin_px: float):
    """``(box, intensity)``: the guides' window plus a margin, which must hold valid pixels."""
    box = guides.bounds_px(margin_px)
    intensity = raster.read_window(*box)
    _check_valid(intensity, box)
    return box, intensity


def _read_bands(raster, box):
    """``(bands, intensity)`` of a window, which must hold valid pixels; many bands as a few (spectral.model_bands)."""
    bands = raster.read_bands(*box)
    intensity = raster.intensity_of(bands)
    _check_valid(intensity, box)
    return model_bands(bands), intensity


def _check_valid(intensity, box) -> None:
    if not np.isfinite(intensity).any():
        raise ValueError(
            f"the window {box[2]} x {box[3]} px at ({box[0]}, {box[1]}) around the endpoints has no valid "
            "pixel (all nodata)"
        )


def _settings(settings, overrides) -> ExtractionSettings:
    if settings is None:
        settings = ExtractionSettings()
    elif not isinstance(settings, ExtractionSettings):
        raise TypeError(f"settings must be an ExtractionSettings; got {type(settings).__name__}")
    return settings.replace(**overrides) if overrides else settings


@contextlib.contextmanager
def _opened(image, band):
    """The image as an open Raster; files and arrays opened here are closed here."""
    if isinstance(image, Raster):
        if band is not None and image.band != band:
            raise ValueError(
                f"settings.band = {band} but the open raster reads band {image.band}; "
                "open it with that band or leave settings.band None"
            )
        yield image
        return
    raster = open_raster(image, band=band)
    try:
        yield raster
    finally:
        raster.close()


def _clicks_on_raster(raster, start, end):
    """The clicks as (2,) float64 arrays, checked to lie on the raster."""
    clicks = []
    for name, point in (("start", start), ("end", end)):
        xy = np.asarray(point, dtype=np.float64) if _is_pair(point) else None
        if xy is None:
            raise TypeError(f"{name} must be a pair of numbers (x, y); got {point!r}")
        if not (np.all(np.isfinite(xy)) and 0 <= xy[0] <= raster.width and 0 <= xy[1] <= raster.height):
            raise ValueError(
                f"{name} ({xy[0]:g}, {xy[1]:g}) lies outside the raster of {raster.width} x {raster.height} "
                f"pixels (x in [0, {raster.width}], y in [0, {raster.height}])"
            )
        clicks.append(xy)
    if np.array_equal(clicks[0], clicks[1]):
        raise ValueError(f"start and end must differ; both are ({clicks[0][0]:g}, {clicks[0][1]:g})")
    return clicks


def _guides(start_xy, end_xy, settings: ExtractionSettings, size=None) -> Guides:
    return build_guides(
        start_xy, end_xy, settings.nodes, settings.points, settings.half_width_px,
        snap_endpoints=settings.snap_endpoints, snap_half_width_px=settings.snap_half_width_px, size=size,
    )


def _is_pair(point) -> bool:
    """Two real numbers, each of them (a bool is no coordinate, even beside a number)."""
    try:
        return np.shape(point) == (2,) and all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
                                               for v in (point[0], point[1]))
    except (TypeError, ValueError, IndexError, KeyError):
        return False
