"""Named presets: valid settings, recognised again, unknown names refused; they set what moves the auto mode's line."""

from __future__ import annotations

import numpy as np
import pytest

import core
from core.extraction import ExtractionSettings
from core.extraction.presets import AUTO_MODE_SETTINGS, PRESETS, matching_preset, preset, preset_names


@pytest.mark.parametrize("name", preset_names())
def test_each_preset_is_valid_and_recognised(name):
    settings = preset(name, ExtractionSettings(backend="cpu", band=2, solver="mitm"))
    assert (settings.backend, settings.band, settings.solver) == ("cpu", 2, "mitm")
    for key, value in PRESETS[name].items():
        assert getattr(settings, key) == value
    assert matching_preset(settings, prefer=name) == name
    assert preset(matching_preset(settings), settings) == settings


def test_custom_settings_match_no_preset():
    assert matching_preset(ExtractionSettings(nodes=11)) is None
    assert matching_preset(ExtractionSettings(nodes=11), prefer="track") is None


def test_an_unknown_preset_names_the_known_ones():
    with pytest.raises(ValueError, match="'highway'"):
        preset("motorway")


def test_presets_set_only_settings_the_auto_mode_uses_and_differ_from_each_other():
    for name, changes in PRESETS.items():
        assert set(changes) <= set(AUTO_MODE_SETTINGS), name
        assert preset(name).mode == "auto"
    settings = [preset(name) for name in preset_names()]
    assert len({tuple(getattr(s, k) for k in AUTO_MODE_SETTINGS) for s in settings}) == len(settings)


BENT_ROAD = [[20, 100], [150, 50], [280, 110]]  # a 12 px road with a bend: the auto mode refines a course
CLICKS = [((20.0, 100.0), (280.0, 110.0)), ((22.0, 106.0), (150.0, 44.0))]


@pytest.fixture(scope="module")
def bent_road():
    from tests.core.extraction.test_adaptive import road_image

    return road_image(BENT_ROAD, 12, (200, 300))


@pytest.mark.parametrize("change", [{"sigma_px": 2.0}, {"max_turn_deg": 30.0}, {"ribbon_width_px": 6.0},
                                    {"polarity": "dark"}, {"ribbon_combine": "mean"}])
def test_the_settings_no_preset_sets_leave_the_auto_modes_line_alone(bent_road, change):
    base = ExtractionSettings(backend="cpu")
    for start, end in CLICKS:
        expected = core.extract(bent_road, start, end, base).vertices_px
        np.testing.assert_array_equal(core.extract(bent_road, start, end, base.replace(**change)).vertices_px,
                                      expected)


@pytest.mark.parametrize("change", [{"half_width_px": 3.0}, {"snap_half_width_px": 2.0}, {"points": 9},
                                    {"snap_endpoints": False}])
def test_the_settings_presets_set_move_the_auto_modes_line(bent_road, change):
    assert set(change) <= set(AUTO_MODE_SETTINGS)
    base = ExtractionSettings(backend="cpu")
    start, end = (20.0, 104.0), (280.0, 106.0)  # CLICKS[0] moved 4 px off the centre line: snapping moves them
    expected = core.extract(bent_road, start, end, base).vertices_px
    moved = core.extract(bent_road, start, end, base.replace(**change)).vertices_px
    assert moved.shape != expected.shape or np.abs(moved - expected).max() > 0.05
