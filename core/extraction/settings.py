"""The settings of one line extraction, validated on construction.

How the defaults were measured: docs/notes/extraction-and-polyline.md, "Default settings".
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from core import validation
from core.engine import BACKENDS
from core.extraction.options import MAX_LENGTH_PX, POLARITIES, ScoringOptions
from core.polyline import METHODS

__all__ = ["AUTO", "DEFAULT_RIBBON_WIDTH_PX", "EXTRACTION_MODES", "MAX_LENGTH_PX", "ExtractionSettings"]

#: The value of a setting that each extraction estimates from the image.
AUTO = "auto"
#: The modes of an extraction: the adaptive one, or one of the link-score objectives.
EXTRACTION_MODES = (AUTO, "ribbon", "edge")
#: The ribbon width (px) used when ``auto`` finds none (an image with no distinct object).
DEFAULT_RIBBON_WIDTH_PX = 24.0


@dataclass(frozen=True)
class ExtractionSettings:
    """Every knob of one extraction, validated on construction.

    Defaults suit asphalt roads on 0.3 m aerial imagery (measurements in
    docs/notes/extraction-and-polyline.md).

    Attributes
    ----------
    nodes : int
        Split points of the span including both endpoints (>= 3): ``nodes - 2`` guides.
    points : int
        Candidate points per guide (>= 2).
    half_width_px : float
        Guide half-width (px, > 0): how far the line may stray from the chord
        between the clicks.
    max_turn_deg : float
        Largest turn at a guide point (degrees, in (0, 180]).
    sigma_px : float
        Gaussian smoothing before the gradient (px, > 0); below
        ``core.extraction.FINE_GRID_BELOW_SIGMA_PX`` the gradient is computed
        on the half-pixel grid.
    mode : {"auto", "ribbon", "edge"}
        ``auto`` (core.extraction.adaptive): the object's course from its
        appearance at the clicks, straight or bent, refined by the exact DP;
        ``ribbon``: the centre line between two edges; ``edge``: one strong edge.
    ribbon_width_px : float or "auto"
        Full width (px, >= 0) of the ribbon in ``ribbon`` mode; ``auto`` uses
        the width each extraction estimates (ExtractionResult.estimate).
    polarity : {"auto", "any", "bright", "dark"}
        In ``ribbon`` mode, the edge pairs that count; ``auto`` uses the estimated polarity.
    ribbon_combine : {"mean", "geometric"}
        How a ribbon sample's two edge responses combine (``geometric`` needs both).
    snap_endpoints : bool
        Let the clicked endpoints move across the axis onto the object (off:
        the polyline starts and ends at the clicks).  In ``auto`` mode a
        straight course moves onto the centre between the object's edges when
        they are clear near both clicks.
    snap_half_width_px : float or None
        Half-width (px, > 0) of the endpoint guides; None for
        ``min(half_width_px, core.extraction.guides.DEFAULT_SNAP_HALF_WIDTH_PX)``.
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
    mode: str = AUTO
    ribbon_width_px: float | str = AUTO
    polarity: str = AUTO
    ribbon_combine: str = "geometric"
    snap_endpoints: bool = True
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
        validation.choice(self.mode, "mode", EXTRACTION_MODES)
        if isinstance(self.ribbon_width_px, str) and self.ribbon_width_px != AUTO:
            raise ValueError(f"ribbon_width_px must be 'auto' or a number of pixels; got {self.ribbon_width_px!r}")
        if self.ribbon_width_px != AUTO:
            _set(self, "ribbon_width_px", validation.real(self.ribbon_width_px, "ribbon_width_px", 0.0, MAX_LENGTH_PX,
                                                          unit="pixels"))
        if self.polarity != AUTO:
            validation.choice(self.polarity, "polarity", POLARITIES + (AUTO,))
        self.scoring_for(None)  # checks the combination (and every other option) once
        validation.choice(self.solver, "solver", METHODS)
        validation.choice(self.backend, "backend", BACKENDS)
        _set(self, "snap_endpoints", validation.flag(self.snap_endpoints, "snap_endpoints"))
        _set(self, "band", validation.integer(self.band, "band", 1, optional=True))

    @property
    def scoring(self) -> ScoringOptions:
        """The link-scoring options of explicit settings (ValueError where the mode uses a setting that is ``auto``)."""
        if self.mode == AUTO or (self.mode == "ribbon" and AUTO in (self.ribbon_width_px, self.polarity)):
            raise ValueError("the scoring options depend on the image where a setting is 'auto': use scoring_for")
        return self.scoring_for(None)

    def scoring_for(self, estimate) -> ScoringOptions:
        """The link-scoring options, ``auto`` settings taken from an estimate (core.extraction.estimate).

        ``estimate`` may be None: the width then falls back to
        :data:`DEFAULT_RIBBON_WIDTH_PX` and the polarity to ``any``.  The
        ``auto`` mode scores by appearance, not by these options; they describe
        the ribbon drawn along its result.
        """
        width = self.ribbon_width_px
        if width == AUTO:
            width = estimate.width_px if estimate is not None and estimate.width_px else DEFAULT_RIBBON_WIDTH_PX
        polarity = self.polarity
        if polarity == AUTO:
            polarity = estimate.polarity if estimate is not None else "any"
        mode = "ribbon" if self.mode == AUTO else self.mode
        return ScoringOptions(mode, width, polarity, self.ribbon_combine)

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

        Raises TypeError for a value that is not a dict, ValueError for unknown keys
        or values out of range.
        """
        if not isinstance(values, dict):
            raise TypeError(f"extraction settings must be a dict; got {type(values).__name__}")
        unknown = sorted(repr(k) for k in set(values) - {f.name for f in dataclasses.fields(cls)})
        if unknown:  # repr: a key may hold a newline or not be text at all
            raise ValueError(f"unknown extraction setting(s): {', '.join(unknown)}")
        return cls(**values)


def _set(settings, name, value):
    object.__setattr__(settings, name, value)  # normalising a frozen dataclass in __post_init__
