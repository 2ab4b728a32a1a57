"""How link scores are computed: :class:`ScoringOptions`, validated once, and their kernel codes; and whether the
adaptive gate's turn paths run (:func:`without_turn_paths`)."""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import NamedTuple

from core import validation

__all__ = ["COMBINES", "MAX_LENGTH_PX", "MODES", "POLARITIES", "KernelCodes", "ScoringOptions", "turn_paths",
           "without_turn_paths"]

#: Whether the adaptive gate may take a bent course on the direction of the image at the clicks (its turn
#: paths: a corner between two clicks).  Batch refinement turns them off for its pieces (:func:`without_turn_paths`).
_TURN_PATHS = contextvars.ContextVar("linesnap_turn_paths", default=True)


def turn_paths() -> bool:
    """Whether the adaptive gate's turn paths are on here (in this thread or task)."""
    return _TURN_PATHS.get()


@contextlib.contextmanager
def without_turn_paths():
    """Extractions inside the block skip the adaptive gate's turn paths: for segments known to be straight
    stretches of a line (a mapped line's pieces between its vertices), which end at crossings and stop lines
    often, where the image's direction at an end runs across the road on a road that does not turn."""
    token = _TURN_PATHS.set(False)
    try:
        yield
    finally:
        _TURN_PATHS.reset(token)

MODES = ("edge", "ribbon")
POLARITIES = ("any", "bright", "dark")
COMBINES = ("mean", "geometric")

#: The largest width or smoothing (px) a setting may take: far beyond any image, and small enough
#: that the window's bounds stay exact integers (wider requests are refused with their name).
MAX_LENGTH_PX = 1e9


class KernelCodes(NamedTuple):
    """The options as the scoring kernels (CPU and CUDA) read them.

    ``mode``, ``polarity`` and ``combine`` are indices in :data:`MODES`,
    :data:`POLARITIES` and :data:`COMBINES`; ``radius_px`` is the ribbon
    half-width ``r`` (px), and a radius of 0 always gives the edge mode.
    """

    mode: int
    radius_px: float
    polarity: int
    combine: int


@dataclass(frozen=True)
class ScoringOptions:
    """The objective of the link scores (validated on construction).

    Attributes
    ----------
    mode : {"edge", "ribbon"}
        ``edge`` rewards links along one strong edge; ``ribbon`` links midway
        between two edges ``ribbon_width_px`` apart.
    ribbon_width_px : float
        Full width ``2 r`` (px) of the ribbon, in ``[0, MAX_LENGTH_PX]``; 0 is the edge mode.
    polarity : {"any", "bright", "dark"}
        Which edge pairs count in ``ribbon`` mode: any, or those of a ribbon
        brighter (darker) than its surroundings.
    ribbon_combine : {"mean", "geometric"}
        How a ribbon sample's two edge responses combine; ``geometric`` needs both edges.
    """

    mode: str = "edge"
    ribbon_width_px: float = 0.0
    polarity: str = "any"
    ribbon_combine: str = "mean"

    def __post_init__(self):
        width = validation.real(self.ribbon_width_px, "ribbon_width_px", 0.0, MAX_LENGTH_PX)
        object.__setattr__(self, "ribbon_width_px", width)  # normalised (numpy numbers to float)
        validation.choice(self.mode, "mode", MODES)
        validation.choice(self.polarity, "polarity", POLARITIES)
        validation.choice(self.ribbon_combine, "ribbon_combine", COMBINES)

    def kernel_codes(self) -> KernelCodes:
        """The codes and the ribbon radius that the CPU and CUDA kernels take."""
        # DESIGN: "with r = 0 it is the edge mode", whatever the polarity and combination (which
        # would otherwise keep one side of a single edge, or multiply it by the zero of the other
        # side), decided on the radius the kernels get: half the smallest subnormal width is 0 too.
        radius = 0.5 * self.ribbon_width_px
        mode = MODES.index("edge" if self.mode == "edge" or radius == 0 else "ribbon")
        return KernelCodes(mode, radius, POLARITIES.index(self.polarity), COMBINES.index(self.ribbon_combine))
