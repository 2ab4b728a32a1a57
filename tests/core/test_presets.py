"""Named presets: valid settings, recognised again, unknown names refused with the list."""

from __future__ import annotations

import pytest

from core.extraction import ExtractionSettings
from core.extraction.presets import PRESETS, matching_preset, preset, preset_names


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
