"""Accuracy on real imagery: SpaceNet's Las Vegas tile and its road centre lines.

Clicks 250 px apart on a road, each moved up to 6 px off it (across the road,
random sign), extracted with the default settings (ribbon mode, endpoint
snapping); the middle 70 % of each polyline is compared with the annotated
centre line, and so is the straight segment between the same clicks.
Skipped when ../shared/data is absent.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.extraction import ExtractionSettings, extract
from core.raster import open_raster
from tests.core.test_accuracy_synthetic import distance_to_polyline, middle_samples
from tests.shared_data import shared_file

SPAN_PX = 250.0
MAX_CLICK_OFFSET_PX = 6.0
SEEDS = (0, 1, 2)
PAIRS_PER_SEED = 2
#: A pair is used only where the road between the clicks is straight to within
#: this (px): the guides follow the chord, and a corner inside the span is a
#: case for two clicks, not one.
MAX_ROAD_SAGITTA_PX = 5.0


def road_lines_px(raster, path):
    """Centre lines of vegas_roads.geojson as (k, 2) pixel polylines (the raster's CRS is lon/lat)."""
    lines = []
    for feature in json.loads(path.read_text())["features"]:
        lonlat = np.asarray(feature["geometry"]["coordinates"], dtype=np.float64)
        xs, ys = raster.map_to_pixel(lonlat[:, 0], lonlat[:, 1])
        lines.append(np.stack([xs, ys], axis=1))
    return lines


def _point_and_direction(line, s):
    segments = np.diff(line, axis=0)
    lengths = np.hypot(*segments.T)
    arc = np.concatenate(([0.0], np.cumsum(lengths)))
    i = min(int(np.searchsorted(arc, s, side="right")) - 1, len(segments) - 1)
    return line[i] + (s - arc[i]) / lengths[i] * segments[i], segments[i] / lengths[i]


def click_pairs(raster, lines):
    """(road index, start, end) for every road, seed and pair position (deterministic)."""
    pairs = []
    for k, line in enumerate(lines):
        length = np.hypot(*np.diff(line, axis=0).T).sum()
        if length < SPAN_PX + 40:
            continue
        for seed in SEEDS:
            rng = np.random.default_rng(1000 * k + seed)
            for _ in range(PAIRS_PER_SEED):
                s0 = rng.uniform(20, length - SPAN_PX - 20)
                (a, ua), (b, ub) = (_point_and_direction(line, s) for s in (s0, s0 + SPAN_PX))
                between = np.array([_point_and_direction(line, s)[0] for s in np.linspace(s0, s0 + SPAN_PX, 50)])
                if distance_to_polyline(between, np.stack([a, b])).max() > MAX_ROAD_SAGITTA_PX:
                    continue
                clicks = [p + rng.choice([-1, 1]) * rng.uniform(0, MAX_CLICK_OFFSET_PX) * np.array([-u[1], u[0]])
                          for p, u in ((a, ua), (b, ub))]
                if all(0 <= c[0] <= raster.width and 0 <= c[1] <= raster.height for c in clicks):
                    pairs.append((k, clicks[0], clicks[1]))
    return pairs


@pytest.fixture(scope="module")
def vegas():
    path = shared_file("vegas_pan_0.3m.tif")
    roads = shared_file("vegas_roads.geojson")
    with open_raster(path) as raster:
        lines = road_lines_px(raster, roads)
        pairs = click_pairs(raster, lines)
        errors, baselines = [], []
        for k, start, end in pairs:
            result = extract(raster, start, end, backend="cpu")
            errors.append(distance_to_polyline(middle_samples(result.vertices_px), lines[k]).mean())
            baselines.append(distance_to_polyline(middle_samples(np.stack([start, end])), lines[k]).mean())
    return dict(pairs=pairs, errors=np.array(errors), baselines=np.array(baselines))


def test_the_cases_cover_several_roads_and_seeds(vegas):
    roads = {k for k, _, _ in vegas["pairs"]}
    assert len(vegas["pairs"]) >= 25 and len(roads) >= 4


def test_the_defaults_are_the_settings_of_this_test():
    settings = ExtractionSettings()
    assert settings.mode == "ribbon" and settings.snap_endpoints


def test_straight_segment_baseline(vegas):
    # the clicks' own error: a straight segment between them is ~2.2-2.4 px off
    assert 1.8 <= vegas["baselines"].mean() <= 3.0


def test_extraction_beats_the_straight_segment(vegas):
    errors, baselines = vegas["errors"], vegas["baselines"]
    # measured 2.12 px (default settings) vs 2.40 px for the straight segments
    assert errors.mean() <= 2.2, f"mean {errors.mean():.2f} px"
    assert errors.mean() <= baselines.mean() - 0.2
    # the clicks' offsets are undone: large click errors shrink
    far = baselines > 3.0
    assert errors[far].mean() < baselines[far].mean() - 1.0


@pytest.mark.xfail(strict=True, reason=(
    "issue 2's target (1.5 px) is not met: measured 2.12 px with the defaults (2.08 px with sigma 6). The annotated centre lines sit "
    "1-3 px off the visual road centre on several roads (road 0: +2.2 px, road 8: +3.4 px in y, "
    "with tree shadows over half the road), which no setting tried removed"))
def test_issue_target_one_and_a_half_pixels(vegas):
    assert vegas["errors"].mean() <= 1.5
