"""Named extraction presets: the defaults with the guide half-width measured for one kind of line.

Each preset's ``half_width_px`` is the candidate of least median error on lines
of its kind (``tests/benchmarks/bench_presets.py``; BENCHMARKS.md, "presets"):
SpaceNet roads of 1-2 lanes (residential street) and of 3 or more (highway) in
../shared/data, the sample scene's farm track (track) and river (river).  All
presets use the adaptive mode, which estimates width and polarity per piece.
Measured, the half-width matters little in that mode (median errors within
0.03 px on 349 residential cases, equal on 31 highway cases, where the mean
decided); river and residential street came out equal (8 px).
"""

from __future__ import annotations

from core.extraction.settings import ExtractionSettings

__all__ = ["PRESETS", "preset", "preset_names", "matching_preset"]

#: Preset name -> the settings it changes from the defaults.
PRESETS: dict[str, dict] = {
    "residential street": {"half_width_px": 8.0},
    "highway": {"half_width_px": 12.0},
    "track": {"half_width_px": 4.0},
    "river": {"half_width_px": 8.0},
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
