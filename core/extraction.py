"""One line extraction end to end: window read, gradient, link scores, exact DP.

``extract(image, start, end)`` lays the guides between the two clicked points,
reads only the raster window that the guides (plus a smoothing margin) cover,
scores every candidate link there and solves the angle-constrained polyline
problem, on the GPU when the backend resolves to it.  The cost depends on the
guides, never on the raster's size.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import numbers
import time
from dataclasses import dataclass, field

import numpy as np

from core.engine import BACKENDS, resolve_backend
from core.gradient import GAUSSIAN_TRUNCATE, GradientWindow, gradient_window
from core.guides import Guides, build_guides
from core.polyline import METHODS
from core.scores import MODES, POLARITIES

__all__ = ["ExtractionSettings", "ExtractionResult", "extract", "window_margin_px", "gradient_step_px",
           "FINE_GRID_BELOW_SIGMA_PX"]

#: Below this smoothing (px) the gradient is computed on the half-pixel grid
#: (core.gradient): a thin line's flanks then peak on its boundaries, and edge
#: mode runs 0.5-1 px from a 1 px line instead of ~1 px (mean 0.75 px against
#: 1.05 px over 12 lines of tests/core/test_accuracy_synthetic.py).  Wider
#: smoothing spreads every edge over several pixels, where the pixel-centre
#: grid is as good (Vegas roads at sigma 4.5: 2.106 vs 2.119 px) at a quarter
#: of the gradient's cost.
FINE_GRID_BELOW_SIGMA_PX = 2.0

#: Bytes per candidate link that scoring and the DP hold at once: the float32
#: score, the float64 DP value and the int64 backtracking index.
_BYTES_PER_LINK = 4 + 8 + 8


@dataclass(frozen=True)
class ExtractionSettings:
    """Every knob of one extraction, validated on construction.

    The defaults were chosen by measurement for interactive digitising of
    asphalt roads on 0.3 m aerial imagery.  The figures below are the mean
    distance of the middle 70 % of the polyline to the annotated centre line
    over the 30 click pairs of ``tests/core/test_accuracy_vegas.py`` (clicks
    250 px apart, up to 6 px off the road; straight segments between the
    clicks: 2.40 px), with the defaults: 2.12 px, and with one setting changed
    as quoted.  End-to-end time: ``tests/benchmarks/bench_extract_cpu.py``.

    Attributes
    ----------
    nodes : int
        Split points of the span including both endpoints (>= 3); ``nodes - 2``
        guides.  8 gives ~36 px links over a 250 px span, short enough for
        gentle curves (5: 2.19 px, 10: 2.16 px).
    points : int
        Candidates per guide (>= 2).  33 over +-8 px puts them 0.5 px apart
        (65 points: 2.12 px too, at 4x the scoring work).
    half_width_px : float
        Guide half-width (px, > 0): how far the line may stray from the
        straight segment between the clicks.  A narrow corridor keeps it off
        parallel structures (verges, shadows, driveways): 12 px: 2.33 px,
        16 px: 2.44 px.  Widen it for curved objects or rough clicks.
    max_turn_deg : float
        Largest turn at a guide point (degrees, in (0, 180]); 30 leaves room
        for curves (10: 2.18 px on these straight streets).
    sigma_px : float
        Gaussian smoothing before the gradient (px, > 0).  Wide textured roads
        want strong smoothing (3: 2.24 px, 6: 2.08 px), but 6 px blurs away
        roads 4 px wide (the sample scene's farm track); use ~0.5-1.5 for thin lines.
    mode : {"edge", "ribbon"}
        ``edge`` follows one strong edge (field boundaries; on a thin line it
        runs along one flank, about 1 px from its centre); ``ribbon`` follows
        the centre line between two edges ``ribbon_width_px`` apart.
    ribbon_width_px : float
        Full width (px, >= 0) of the ribbon in ``ribbon`` mode.  The streets
        of the Vegas tile are 20-37 px wide (24: 2.32 px, 32: 2.83 px).
    polarity : {"any", "bright", "dark"}
        In ``ribbon`` mode, keep only edge pairs of a bright (dark) ribbon on
        darker (brighter) ground, or any.  Asphalt is darker than its verges
        (``any``: 2.22 px).
    snap_endpoints : bool
        Let the solver move the clicked endpoints across the axis onto the object.
    snap_half_width_px : float or None
        Half-width (px, > 0) of the endpoint guides; None for
        ``min(half_width_px, core.guides.DEFAULT_SNAP_HALF_WIDTH_PX)`` = 8 px
        (4 px: 2.12 px as well).
    solver : {"window", "mitm", "brute"}
        The exact DP (all give the same optimum; ``window`` is the fastest).
    backend : {"auto", "cpu", "gpu"}
    band : int or None
        1-based band of the image to use; None derives one intensity band.
    """

    nodes: int = 8
    points: int = 33
    half_width_px: float = 8.0
    max_turn_deg: float = 30.0
    sigma_px: float = 4.5
    mode: str = "ribbon"
    ribbon_width_px: float = 28.0
    polarity: str = "dark"
    snap_endpoints: bool = True
    snap_half_width_px: float | None = None
    solver: str = "window"
    backend: str = "auto"
    band: int | None = None

    def __post_init__(self):
        for name, minimum in (("nodes", 3), ("points", 2)):
            _set(self, name, _integer(getattr(self, name), name, minimum))
        for name in ("half_width_px", "sigma_px"):
            _set(self, name, _real(getattr(self, name), name, "> 0", lambda v: v > 0))
        _set(self, "ribbon_width_px", _real(self.ribbon_width_px, "ribbon_width_px", ">= 0", lambda v: v >= 0))
        _set(self, "max_turn_deg", _real(self.max_turn_deg, "max_turn_deg", "in (0, 180]", lambda v: 0 < v <= 180))
        if self.snap_half_width_px is not None:
            _set(self, "snap_half_width_px",
                 _real(self.snap_half_width_px, "snap_half_width_px", "> 0 (or None)", lambda v: v > 0))
        for name, allowed in (("mode", MODES), ("polarity", POLARITIES), ("solver", METHODS), ("backend", BACKENDS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {getattr(self, name)!r}")
        if not isinstance(self.snap_endpoints, (bool, np.bool_)):
            raise TypeError(f"snap_endpoints must be True or False; got {self.snap_endpoints!r}")
        _set(self, "snap_endpoints", bool(self.snap_endpoints))
        if self.band is not None:
            _set(self, "band", _integer(self.band, "band", 1))

    def replace(self, **changes) -> ExtractionSettings:
        """A copy with some fields changed (validated again)."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise TypeError(f"unknown extraction setting(s): {', '.join(unknown)}")
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """The settings as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> ExtractionSettings:
        """Settings from :meth:`to_dict` output (missing keys take the defaults).

        Raises
        ------
        ValueError
            For keys that are not settings, or values out of range.
        """
        if not isinstance(values, dict):
            raise TypeError(f"extraction settings must be a dict; got {type(values).__name__}")
        unknown = sorted(set(values) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise ValueError(f"unknown extraction setting(s): {', '.join(unknown)}")
        return cls(**values)


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
    guides : core.guides.Guides
        The candidate geometry (for overlays).
    indices : (m,) int64 ndarray
        Chosen candidate on each guide.
    start_index, end_index : int
        Chosen start and end candidates (0 without snapping).
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


def window_margin_px(settings: ExtractionSettings) -> float:
    """Pixels read around the guides: the Gaussian's reach, the ribbon half-width and 2 px."""
    ribbon = 0.5 * settings.ribbon_width_px if settings.mode == "ribbon" else 0.0
    return GAUSSIAN_TRUNCATE * settings.sigma_px + ribbon + 2.0


def gradient_step_px(settings: ExtractionSettings) -> float:
    """Grid step (px) of the gradient for these settings: 0.5 below ``FINE_GRID_BELOW_SIGMA_PX``, else 1.0."""
    return 0.5 if settings.sigma_px < FINE_GRID_BELOW_SIGMA_PX else 1.0


def extract(image, start, end, settings: ExtractionSettings | None = None, **overrides) -> ExtractionResult:
    """Find the best polyline between two points of an image.

    Parameters
    ----------
    image : str, os.PathLike, core.raster.Raster or ndarray
        A file (opened and closed here), an open Raster (the cheap way to
        extract repeatedly: it stays open and its band is used) or an (H, W)
        or (H, W, C) array.
    start, end : (2,) array_like of float
        The clicked points in pixel coordinates ``(x, y)``, inside the raster.
    settings : ExtractionSettings, optional
        Default ``ExtractionSettings()``.
    **overrides
        Fields of the settings to change for this call (e.g. ``nodes=6``).

    Returns
    -------
    ExtractionResult

    Raises
    ------
    ValueError
        For bad settings, endpoints outside the raster or equal, a window
        without valid pixels, problems larger than the machine's memory, or
        no feasible polyline (core.polyline.NoFeasiblePolylineError).
    core.raster.RasterError
        For unreadable images.
    core.engine.BackendUnavailableError
        For ``backend="gpu"`` without a usable GPU.
    """
    t_begin = time.perf_counter()
    settings = _settings(settings, overrides)
    backend = _backend(settings)
    with _opened(image, settings.band) as raster:
        guides = _guides_on_raster(raster, start, end, settings)
        _check_memory(guides)
        box, intensity = _read_window(raster, guides, settings)
    t_read = time.perf_counter()
    gradient = gradient_window(intensity, settings.sigma_px, box[0], box[1], step_px=gradient_step_px(settings))
    t_gradient = time.perf_counter()
    timings = {"read": (t_read - t_begin) * 1e3, "gradient": (t_gradient - t_read) * 1e3}
    if backend == "gpu":
        solution = _score_and_solve_gpu(gradient, guides, settings, timings)
    else:
        solution = _score_and_solve_cpu(gradient, guides, settings, timings)
    vertices = guides.vertices(solution.start_index, solution.indices, solution.end_index)
    timings["total"] = (time.perf_counter() - t_begin) * 1e3
    return ExtractionResult(
        vertices_px=vertices,
        score=float(solution.score),
        settings=settings,
        backend=solution.backend or backend,
        method=solution.method or settings.solver,
        timings_ms=timings,
        guides=guides,
        indices=np.asarray(solution.indices, dtype=np.int64),
        start_index=int(solution.start_index),
        end_index=int(solution.end_index),
    )


def _backend(settings: ExtractionSettings) -> str:
    """The backend that will run (``brute`` is CPU-only, so ``auto`` means the CPU for it)."""
    if settings.solver == "brute" and settings.backend == "auto":
        return "cpu"
    return resolve_backend(settings.backend)


def _read_window(raster, guides: Guides, settings: ExtractionSettings):
    """``(box, intensity)``: the guides' window plus the smoothing margin, which must hold valid pixels."""
    box = guides.bounds_px(window_margin_px(settings))
    intensity = raster.read_window(*box)
    if not np.isfinite(intensity).any():
        raise ValueError(
            f"the window {box[2]} x {box[3]} px at ({box[0]}, {box[1]}) around the endpoints has no valid "
            "pixel (all nodata)"
        )
    return box, intensity


def _score_and_solve_cpu(gradient: GradientWindow, guides: Guides, settings: ExtractionSettings, timings: dict):
    from core.polyline import PolylineProblem, prepare, solve_prepared
    from core.scores import link_score_tables

    t0 = time.perf_counter()
    first, links, last = link_score_tables(
        gradient, guides, settings.mode, settings.ribbon_width_px, settings.polarity
    )
    t1 = time.perf_counter()
    problem = PolylineProblem(
        first, links, last, guides.offsets, guides.spacing, settings.max_turn_deg,
        start_offsets=guides.start_offsets, end_offsets=guides.end_offsets,
    )
    solver_ms: dict = {}
    solution = solve_prepared(prepare(problem), settings.solver, "cpu", timings_ms=solver_ms)
    t2 = time.perf_counter()
    backtrack = solver_ms.get("backtrack", 0.0)
    timings.update(scoring=(t1 - t0) * 1e3, dp=(t2 - t1) * 1e3 - backtrack, backtrack=backtrack)
    return solution


def _score_and_solve_gpu(gradient: GradientWindow, guides: Guides, settings: ExtractionSettings, timings: dict):
    from gpu.polyline import score_and_solve

    solution, gpu_ms = score_and_solve(gradient, guides, settings)
    timings.update({key: float(gpu_ms.get(key, 0.0)) for key in ("scoring", "dp", "backtrack")})
    return solution


def _settings(settings, overrides) -> ExtractionSettings:
    if settings is None:
        settings = ExtractionSettings()
    elif not isinstance(settings, ExtractionSettings):
        raise TypeError(f"settings must be an ExtractionSettings; got {type(settings).__name__}")
    return settings.replace(**overrides) if overrides else settings


@contextlib.contextmanager
def _opened(image, band):
    """The image as an open Raster; files and arrays opened here are closed here."""
    from core.raster import Raster, open_raster

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


def _guides_on_raster(raster, start, end, settings: ExtractionSettings) -> Guides:
    for name, point in (("start", start), ("end", end)):
        xy = np.asarray(point, dtype=np.float64) if _is_pair(point) else None
        if xy is None:
            raise TypeError(f"{name} must be a pair of numbers (x, y); got {point!r}")
        if not (np.all(np.isfinite(xy)) and 0 <= xy[0] <= raster.width and 0 <= xy[1] <= raster.height):
            raise ValueError(
                f"{name} ({xy[0]:g}, {xy[1]:g}) lies outside the raster of {raster.width} x {raster.height} "
                f"pixels (x in [0, {raster.width}], y in [0, {raster.height}])"
            )
    return build_guides(
        start, end, settings.nodes, settings.points, settings.half_width_px,
        snap_endpoints=settings.snap_endpoints, snap_half_width_px=settings.snap_half_width_px,
    )


def _check_memory(guides: Guides) -> None:
    """Refuse, before allocating, problems whose tables exceed the machine's memory."""
    from core.polyline import check_memory

    d, m = guides.offsets.size, guides.n_guides
    n_links = guides.start_offsets.size * d + (m - 1) * d * d + d * guides.end_offsets.size
    check_memory(n_links * _BYTES_PER_LINK, f"scoring and solving {n_links} candidate links")


def _is_pair(point) -> bool:
    try:
        return np.shape(point) == (2,) and np.asarray(point).dtype.kind in "iuf"
    except (TypeError, ValueError):
        return False


def _set(settings, name, value):
    object.__setattr__(settings, name, value)  # normalising a frozen dataclass in __post_init__


def _integer(value, name: str, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}; got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value}")
    return int(value)


def _real(value, name: str, allowed: str, accept) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number {allowed}; got {value!r}")
    value = float(value)
    if not (math.isfinite(value) and accept(value)):
        raise ValueError(f"{name} must be a finite number {allowed}; got {value}")
    return value
