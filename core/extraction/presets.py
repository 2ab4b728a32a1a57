"""Named extraction presets: the defaults with the auto mode's settings measured for one kind of line.

The auto mode (the default) uses four settings only (:data:`AUTO_MODE_SETTINGS`;
``tests/core/test_presets.py`` checks that the others leave its line alone):
``half_width_px`` (how far a bent line may stray from the course found),
``snap_half_width_px`` (how far a click may lie from the object's centre),
``points`` (the candidates' spacing, ``2 half_width_px / (points - 1)``) and
``snap_endpoints``; ``nodes`` sets only how many vertices a straight line gets.
It estimates width, polarity and contrast per piece, and its course may turn by
up to ``core.extraction.adaptive.COURSE_MAX_TURN_DEG`` (a constant): the
settings of the ribbon and edge modes (``max_turn_deg``, ``sigma_px``,
``ribbon_width_px``, ``polarity``, ``ribbon_combine``) have no effect in it, so
no preset sets them, and there is no setting for an expected width range or a
curvature limit of the auto mode.

Each preset is the candidate of least median error on lines of its kind
(``tests/benchmarks/bench_presets.py``; BENCHMARKS.md, "presets"): SpaceNet
roads of 1-2 lanes (residential street: the defaults) and of 3 or more
(highway) in ../shared/data, the sample scene's farm track (track) and river
(river).  A wider snapping reach made both kinds of road worse (clicks there
lie 0-6 px off the centre line); the river gained from a wider corridor and
snapping reach, the track from a slightly wider corridor with a short reach.
The differences are small (0.03-0.15 px of median error; 0.35 px for highway).
"""

from __future__ import annotations

from core.extraction.settings import ExtractionSettings

__all__ = ["AUTO_MODE_SETTINGS", "PRESETS", "preset", "preset_names", "matching_preset"]

#: The settings that move the auto mode's line (the only ones a preset sets).
AUTO_MODE_SETTINGS = ("half_width_px", "snap_half_width_px", "points", "snap_endpoints")

#: Preset name -> the settings it changes from the defaults.
PRESETS: dict[str, dict] = {
    "residential street": {"half_width_px": 8.0},
    "highway": {"half_width_px": 12.0},
    "track": {"half_width_px": 6.0, "snap_half_width_px": 4.0, "points": 25},
    "river": {"half_width_px": 16.0, "snap_half_width_px": 12.0, "points": 65},
}


def preset_names() -> tuple[str, ...]:
    """The presets' names, in menu order."""
    return tuple(PRESETS)


def preset(name: str, base: ExtractionSettings | None = None) -> ExtractionSettings:
    """The settings of preset ``name``, on ``base`` (default: the defaults; its band and backend kept).

    Raises ValueError naming the presets when ``name`` is not one of them.
    """
    if name not in PRESETS:
        raise ValueError(f"preset must be one of {', '.join(map(repr, PRESETS))}; got {name!r}")
    defaults = ExtractionSettings()
    if base is not None:
        defaults = defaults.replace(band=base.band, backend=base.backend, solver=base.solver)
    return defaults.replace(**PRESETS[name])


def matching_preset(settings: ExtractionSettings, prefer: str | None = None) -> str | None:
    """The name of a preset ``settings`` equal (band, backend and solver aside), ``prefer`` first; else None."""
    for name in ([prefer] if prefer in PRESETS else []) + list(PRESETS):
        if preset(name, settings) == settings:
            return name
    return None
