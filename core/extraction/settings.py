"""The settings of one line extraction (validated on construction).

Kept apart from core.extraction (which re-exports :class:`ExtractionSettings`)
so that each module stays short; the defaults' measurements are in the class
docstring.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from core import validation
from core.engine import BACKENDS
from core.extraction.options import MAX_LENGTH_PX, ScoringOptions
from core.polyline import METHODS

__all__ = ["MAX_LENGTH_PX", "ExtractionSettings"]


@dataclass(frozen=True)
class ExtractionSettings:
    """Every knob of one extraction, validated on construction.

    The defaults were chosen by measurement for interactive digitising of
    asphalt roads on 0.3 m aerial imagery.  The figures below are the mean
    distance of the middle 70 % of the polyline to the annotated centre line
    over the 30 click pairs of ``tests/core/extraction/test_accuracy_vegas.py`` (clicks
    250 px apart, up to 6 px off the road; straight segments between the
    clicks: 2.40 px): 1.86 px with the defaults, and with one setting changed
    as quoted.  On 60 further pairs of each of two other seed sets, never used
    to choose: 2.12 and 2.10 px (the previous defaults, width 28, polarity
    dark, mean of the edges, max turn 30: 2.12, 2.58 and 2.62 px).  The
    annotation itself lies 2.5-4.5 px off the visible asphalt centre on two of
    the five roads, so these figures are not a pure measure of accuracy; the
    choices below are also checked on synthetic roads whose centre is exact
    (``tests/core/extraction/test_accuracy_synthetic.py``).  End-to-end time:
    ``tests/benchmarks/bench_extract_cpu.py``.

    Attributes
    ----------
    nodes : int
        Split points of the span including both endpoints (>= 3); ``nodes - 2``
        guides.  8 gives ~36 px links over a 250 px span, short enough for
        gentle curves (6: 1.85 px, 10: 1.94 px).
    points : int
        Candidates per guide (>= 2).  33 over +-8 px puts them 0.5 px apart
        (65 points: 1.87 px, at 4x the scoring work).
    half_width_px : float
        Guide half-width (px, > 0): how far the line may stray from the
        straight segment between the clicks.  A narrow corridor keeps it off
        parallel structures (verges, shadows, driveways): 6 px: 1.64 px,
        12 px: 1.98 px; but roads that bow away from the chord between the
        clicks need room: on the sample scene's roads (7-8 px bows) 6 px gives
        0.33-0.86 px, 8 px 0.09-0.67 px.  Widen it for curved objects or
        rough clicks.
    max_turn_deg : float
        Largest turn at a guide point (degrees, in (0, 180]).  10 keeps the
        polyline from zigzagging after cars and shadows on straight roads
        (5: 1.83 px, 20: 2.07 px, 30: 2.10 px) and still follows gentle
        curves (~200 px turning radius with 36 px links); put a click at
        every sharp bend, or raise it.
    sigma_px : float
        Gaussian smoothing before the gradient (px, > 0).  Wide textured roads
        want strong smoothing (3: 2.18 px, 6: 1.89 px), but 6 px blurs away
        roads 4 px wide (the sample scene's farm track); use ~0.3-1 for thin
        lines.  Below ``core.extraction.FINE_GRID_BELOW_SIGMA_PX`` the gradient is computed on
        the half-pixel grid.
    mode : {"edge", "ribbon"}
        ``edge`` follows one strong edge (field boundaries; on a 1 px line it
        runs along one flank, 0.5-1 px from its centre); ``ribbon`` follows
        the centre line between two edges ``ribbon_width_px`` apart.
    ribbon_width_px : float
        Full width (px, >= 0) of the ribbon in ``ribbon`` mode.  The streets
        of the Vegas tile are 21-37 px wide (20: 2.76 px, 28: 2.20 px, 32:
        3.00 px); set the width of the road at hand when it is known.
    polarity : {"any", "bright", "dark"}
        In ``ribbon`` mode, keep only edge pairs of a bright (dark) ribbon on
        darker (brighter) ground, or any (dark: 2.04 px: light gutters and
        dark curb shadows flip the sign of one edge here and there).
    ribbon_combine : {"mean", "geometric"}
        How the two edge responses of a ribbon sample combine
        (core.extraction.options.ScoringOptions): ``geometric`` needs both edges, so a single strong
        edge (a verge, a shadow) cannot pull the line off the road.  On
        synthetic 24 px streets with a gutter, shadows and cars and a ribbon
        30 px wide, it stays 1.5-2.5 px from the centre line where the mean
        slides 3 px onto one edge (with the right width both are within
        0.7 px); mean: 2.26 px here.
    snap_endpoints : bool
        Let the solver move the clicked endpoints across the axis onto the
        object.  Off by default, so the polyline starts and ends exactly at
        the given points (DESIGN.md's fixed-endpoint contract); turn it on
        for approximate clicks (Vegas test pairs: 1.86 px with it, 1.91 px
        without).
    snap_half_width_px : float or None
        Half-width (px, > 0) of the endpoint guides; None for
        ``min(half_width_px, core.extraction.guides.DEFAULT_SNAP_HALF_WIDTH_PX)`` = 8 px
        (4 px: 1.88 px).
    solver : {"window", "mitm", "brute"}
        The exact DP (all give the same optimum; ``window`` is the fastest).
    backend : {"auto", "cpu", "gpu"}
    band : int or None
        1-based band of the image to use; None derives one intensity band.
    """

    nodes: int = 8
    points: int = 33
    half_width_px: float = 8.0
    max_turn_deg: float = 10.0
    sigma_px: float = 4.5
    mode: str = "ribbon"
    ribbon_width_px: float = 24.0
    polarity: str = "any"
    ribbon_combine: str = "geometric"
    snap_endpoints: bool = False
    snap_half_width_px: float | None = None
    solver: str = "window"
    backend: str = "auto"
    band: int | None = None

    def __post_init__(self):
        _set(self, "nodes", validation.integer(self.nodes, "nodes", 3))
        _set(self, "points", validation.integer(self.points, "points", 2))
        for name in ("half_width_px", "sigma_px"):
            _set(self, name, validation.real(getattr(self, name), name, 0.0, MAX_LENGTH_PX, low_open=True))
        _set(self, "max_turn_deg", validation.real(self.max_turn_deg, "max_turn_deg", 0.0, 180.0, low_open=True))
        _set(self, "snap_half_width_px", validation.real(self.snap_half_width_px, "snap_half_width_px", 0.0,
                                                         MAX_LENGTH_PX, low_open=True, optional=True))
        scoring = ScoringOptions(self.mode, self.ribbon_width_px, self.polarity, self.ribbon_combine)
        _set(self, "ribbon_width_px", scoring.ribbon_width_px)
        _set(self, "_scoring", scoring)  # not a field: to_dict, equality and replace ignore it
        validation.choice(self.solver, "solver", METHODS)
        validation.choice(self.backend, "backend", BACKENDS)
        _set(self, "snap_endpoints", validation.flag(self.snap_endpoints, "snap_endpoints"))
        _set(self, "band", validation.integer(self.band, "band", 1, optional=True))

    @property
    def scoring(self) -> ScoringOptions:
        """The link-scoring options (mode, ribbon width, polarity, combination), validated with the settings."""
        return self._scoring

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


def _set(settings, name, value):
    object.__setattr__(settings, name, value)  # normalising a frozen dataclass in __post_init__

