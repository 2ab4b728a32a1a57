"""Accuracy on real imagery: SpaceNet's Las Vegas tile and its road centre lines.

Clicks 250 px apart on a road, each moved up to 6 px off it (across the road,
random sign), extracted in the ribbon mode (the former defaults, with endpoint
snapping; the defaults' accuracy on every tile is in test_accuracy_tiles.py).
The middle 70 % of each polyline is compared with the annotated centre line,
and so is the straight segment between the same clicks.
Skipped when ../shared/data is absent.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.extraction import ExtractionSettings, extract
from core.io.raster import open_raster
from tests.core.extraction.test_accuracy_synthetic import distance_to_polyline, middle_samples
from tests.shared_data import shared_file

#: The ribbon mode as the defaults were before the adaptive mode, with endpoint snapping.
RIBBON = dict(mode="ribbon", ribbon_width_px=24.0, polarity="any", snap_endpoints=True)
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
            result = extract(raster, start, end, backend="cpu", **RIBBON)
            errors.append(distance_to_polyline(middle_samples(result.vertices_px), lines[k]).mean())
            baselines.append(distance_to_polyline(middle_samples(np.stack([start, end])), lines[k]).mean())
    return dict(pairs=pairs, errors=np.array(errors), baselines=np.array(baselines))


def test_the_cases_cover_several_roads_and_seeds(vegas):
    roads = {k for k, _, _ in vegas["pairs"]}
    assert len(vegas["pairs"]) >= 25 and len(roads) >= 4


def test_the_settings_of_this_test_are_the_ribbon_modes_former_defaults():
    # before the adaptive mode the defaults were this ribbon; the test keeps measuring it, with snapping
    settings = ExtractionSettings(**RIBBON)
    assert (settings.ribbon_width_px, settings.polarity, settings.ribbon_combine) == (24.0, "any", "geometric")


def test_straight_segment_baseline(vegas):
    # the clicks' own error: a straight segment between them is ~2.2-2.4 px off
    assert 1.8 <= vegas["baselines"].mean() <= 3.0


def test_extraction_beats_the_straight_segment(vegas):
    errors, baselines = vegas["errors"], vegas["baselines"]
    # measured 1.86 px (default settings) vs 2.40 px for the straight segments
    assert errors.mean() <= 2.0, f"mean {errors.mean():.2f} px"
    assert errors.mean() <= baselines.mean() - 0.4
    # the clicks' offsets are undone: large click errors shrink
    far = baselines > 3.0
    assert errors[far].mean() < baselines[far].mean() - 1.0


def asphalt_centre_offsets(raster, line, step_px=20.0, along_px=15.0):
    """Offsets (px, along the line's left normal) of the dark band's centre from an annotated line.

    At every ``step_px`` of the line, the median intensity profile across it
    over ``+-along_px`` is smoothed (1.5 px) and differentiated; the band runs
    from the steepest fall at or before the line to the steepest rise at or
    after it.  A rough, independent look at the image, for the annotation.
    """
    from scipy.ndimage import gaussian_filter1d, map_coordinates

    image = raster.read_window(0, 0, raster.width, raster.height)
    image = np.where(np.isfinite(image), image, np.nanmedian(image))
    across = np.arange(-30.0, 30.01, 0.5)
    length = np.hypot(*np.diff(line, axis=0).T).sum()
    offsets = []
    for s in np.arange(2 * along_px, length - 2 * along_px, step_px):
        profiles = []
        for t in np.arange(s - along_px, s + along_px + 1):
            point, u = _point_and_direction(line, t)
            xy = point + across[:, None] * np.array([-u[1], u[0]])
            profiles.append(map_coordinates(image, [xy[:, 1] - 0.5, xy[:, 0] - 0.5], order=1))
        slope = gaussian_filter1d(np.median(profiles, axis=0), 3.0, order=1)
        before, after = across <= 0, across >= 0
        offsets.append((across[before][np.argmin(slope[before])] + across[after][np.argmax(slope[after])]) / 2)
    return np.array(offsets)


def test_the_annotation_sits_off_the_asphalt_centre_on_two_roads():
    # SpaceNet's centre lines are hand-drawn: on road 1 (the 38 px avenue) and road 8 the dark
    # asphalt's centre lies 2.5 and 4 px (medians) to one side of them, while on road 7 the two agree
    # to 1 px.  An extraction that finds the asphalt's centre is that far off the "truth" there.
    with open_raster(shared_file("vegas_pan_0.3m.tif")) as raster:
        lines = road_lines_px(raster, shared_file("vegas_roads.geojson"))
        medians = {k: float(np.median(asphalt_centre_offsets(raster, lines[k]))) for k in (1, 7, 8)}
    assert medians[1] >= 2.0 and medians[8] >= 3.0 and abs(medians[7]) <= 1.5, medians


@pytest.mark.xfail(strict=True, reason=(
    "issue 2's target (1.5 px) is not met: measured 1.86 px with these ribbon settings (per road 1.78, 1.14, 1.78, "
    "0.52, 4.07 px on roads 0, 1, 2, 7, 8), 2.12 and 2.10 px on 120 pairs of other seeds. The annotated "
    "centre lines sit off the visible asphalt centre (road 8: 4 px, road 1: 2.5 px, see "
    "test_the_annotation_sits_off_the_asphalt_centre_on_two_roads): ribbons of each road's own width (or "
    "estimated per extraction) find the asphalt centre and score worse (2.2-2.8 px), and settings tuned on "
    "four roads did worse on the fifth than the previous defaults (2.83 vs 2.42 px, leave-one-road-out)"))
def test_issue_target_one_and_a_half_pixels(vegas):
    assert vegas["errors"].mean() <= 1.5
