"""The defaults on real imagery: the six SpaceNet tiles of ../shared/data and the sample scene's curved road.

The cases are those of tests/benchmarks/bench_quality.py (click pairs 200 px
apart along each annotated centre line, both clicks moved up to 6 px across it,
a fixed seed): the mean distance of the middle 70 % of the polyline to the
true line, against the straight segment between the same clicks.  The tiles
skip when ../shared/data is absent.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.benchmarks import bench_quality as bq
from tests.benchmarks import quality_renderings as qr
from tests.benchmarks import quality_scales as qs
from tests.core.extraction.test_accuracy_synthetic import distance_to_polyline, middle_samples

#: The issue's target on every tile: median error at most 1.5 px (not met on these tiles: see the xfail).
TARGET_MEDIAN_PX = 1.5
#: ... and worse than the straight segment (by more than 0.5 px) in at most 10 % of the cases.
TARGET_WORSE_PCT = 10.0


@pytest.fixture(scope="module")
def records():
    available = bq.available_tiles(bq.SPACENET_TILES + ("sample_gravel", "sample_main", "sample_main_on_line"))
    if not available:
        pytest.skip("../shared/data is absent (it is not part of a fresh clone)")
    found = bq.evaluate(bq.linesnap(backend="cpu"), available)
    return {tile: [r for r in found if r.case.tile == tile] for tile in available}


def _records_on_derived_tiles(tmp_path_factory, prefix, derive):
    """The defaults on tiles derived from each SpaceNet tile present: ``derive(tile, folder)`` registers them
    and gives ``{key: derived tile's name}``; returns ``{key: its records}``."""
    available = bq.available_tiles(bq.SPACENET_TILES)
    if not available:
        pytest.skip("../shared/data is absent (it is not part of a fresh clone)")
    folder = tmp_path_factory.mktemp(prefix)
    names = {key: name for tile in available for key, name in derive(tile, folder).items()}
    found = bq.evaluate(bq.linesnap(backend="cpu"), list(names.values()))
    return {key: [r for r in found if r.case.tile == name] for key, name in names.items()}


@pytest.fixture(scope="module")
def coarse_records(tmp_path_factory):
    # the tiles averaged 2x (0.6 m pixels), the cases scaled alike (tests.benchmarks.quality_scales), by tile
    return _records_on_derived_tiles(tmp_path_factory, "coarse",
                                     lambda tile, folder: {tile: qs.coarser_tile(tile, 2, folder)})


@pytest.fixture(scope="module")
def rendered_records(tmp_path_factory):
    # the tiles as 8-bit JPEG, and Shanghai 1196 in colour (tests.benchmarks.quality_renderings), by name
    def derive(tile, folder):
        names = [qr.rendered_tile(tile, rendering, folder) for rendering in qr.available_renderings(tile)]
        return {name: name for name in names}

    return _records_on_derived_tiles(tmp_path_factory, "rendered", derive)


def _tile(records, tile):
    if tile not in records:
        pytest.skip(f"{tile} is absent")
    rs = records[tile]
    errors = np.array([r.error_px for r in rs])
    straight = np.array([r.case.straight_error_px for r in rs])
    return errors, straight, 100.0 * np.mean(errors > straight + 0.5)


@pytest.mark.parametrize("tile", bq.SPACENET_TILES)
def test_the_defaults_are_rarely_worse_than_the_straight_segment(records, tile):
    errors, straight, worse_pct = _tile(records, tile)
    assert worse_pct <= TARGET_WORSE_PCT, f"worse than straight in {worse_pct:.0f} % of {len(errors)} cases"
    # and the median error is no worse than the straight segment's (within a tenth of a pixel)
    assert np.median(errors) <= np.median(straight) + 0.1, (np.median(errors), np.median(straight))


@pytest.mark.parametrize("tile", ("shanghai_1196", "shanghai_308", "shanghai_1887"))
def test_the_defaults_follow_bends_that_the_straight_segment_cuts(records, tile):
    # the tiles with curved service roads and corners: where the true line bows more than 10 px
    # from the chord, the median error falls well below the straight segment's
    rs = records.get(tile) or pytest.skip(f"{tile} is absent")
    bent = [r for r in rs if r.case.sagitta_px > 10]
    errors = np.array([r.error_px for r in bent])
    straight = np.array([r.case.straight_error_px for r in bent])
    assert len(bent) >= 10 and np.mean(errors < straight - 0.5) >= 0.2, (len(bent), np.mean(errors < straight - 0.5))


def _share_better_on_bends(records, tiles, min_sagitta_px):
    bent = [r for t in tiles for r in records.get(t, ()) if r.case.sagitta_px > min_sagitta_px]
    if len(bent) < 30:
        pytest.skip("the tiles with corners are absent")
    return float(np.mean([r.better for r in bent])), len(bent)


BENDY_TILES = ("shanghai_1196", "shanghai_308", "shanghai_1887")


def test_corners_are_followed_where_the_image_turns_at_the_clicks(records, coarse_records):
    # on the cases bowing more than 10 px (0.3 m) from the chord, pooled over the three tiles with corners:
    # the gate's first path alone (the chord's road-likeness below 0.4, the course's 0.3 above) left many
    # corners whose chord crosses other pavement; its turn path (the image runs 40 degrees or more off the
    # segment at a click) takes them: better than straight in 45 % of them before, 62 % with it (33 and 48 %
    # at 0.6 m); its sharp-turn path (60 degrees or more, the chord's support up to 0.7: corners whose chord
    # crosses a plaza) 70 % (55 % at 0.6 m)
    share, count = _share_better_on_bends(records, BENDY_TILES, 10.0)
    assert share >= 0.65, (share, count)
    share, count = _share_better_on_bends(coarse_records, BENDY_TILES, 5.0)
    assert share >= 0.50, (share, count)


@pytest.mark.parametrize("tile", bq.SPACENET_TILES)
def test_on_coarser_pixels_the_median_is_no_worse_than_the_straight_segment(coarse_records, tile):
    errors, straight, worse_pct = _tile(coarse_records, tile)
    assert np.median(errors) <= np.median(straight) + 0.1, (np.median(errors), np.median(straight))
    # the centring's width check (edge pairs much wider than the surface at the clicks are not the road's
    # edges) took the share worse than straight at 0.6 m from 0-10 % to 0-4 %
    assert worse_pct <= 6.0, f"worse than straight in {worse_pct:.0f} % of {len(errors)} cases"


@pytest.mark.parametrize("tile", ("shanghai_1196", "shanghai_308", "shanghai_1887"))
def test_on_coarser_pixels_the_defaults_follow_bends(coarse_records, tile):
    # at 0.6 m the constants in pixels see twice the ground: the model learnt 12 px along the segment from
    # each click used to leave the road before a bend, and bends went unfollowed (better than straight in
    # 5, 18 and 6 % of these cases on the three tiles); where the true line bows more than 5 px (10 px at
    # 0.3 m) from the chord, a fifth of the cases must now be clearly better than the straight segment
    rs = coarse_records.get(tile) or pytest.skip(f"{tile} is absent")
    bent = [r for r in rs if r.case.sagitta_px > 5]
    better = np.mean([r.error_px < r.case.straight_error_px - 0.5 for r in bent])
    assert len(bent) >= 10 and better >= 0.2, (len(bent), better)


@pytest.mark.parametrize("tile", [f"{t}+jpeg" for t in bq.SPACENET_TILES] + ["shanghai_1196+colour"])
def test_on_8_bit_jpeg_and_in_colour_the_defaults_hold(rendered_records, tile):
    # the same ground stretched to 8 bits and JPEG-compressed, or pan-sharpened colour: the clipped
    # highlights, the JPEG blocks and the three bands must not make the line leave straight roads
    errors, straight, worse_pct = _tile(rendered_records, tile)
    assert worse_pct <= TARGET_WORSE_PCT, f"worse than straight in {worse_pct:.0f} % of {len(errors)} cases"
    assert np.median(errors) <= np.median(straight) + 0.2, (np.median(errors), np.median(straight))


def test_the_sample_scenes_curved_road_is_followed_within_two_pixels(records):
    # the gravel road bows 9.5-41 px away from chords 300 px long (the guide corridor is 8 px)
    errors, straight, _ = _tile(records, "sample_gravel")
    assert np.median(errors) <= 2.0 and np.median(straight) > 10.0, (np.median(errors), np.median(straight))


@pytest.mark.parametrize("tile", ["sample_main", "sample_main_on_line"])
def test_the_sample_scenes_winding_road_is_followed_mild_bends_included(records, tile):
    # spans bowing 6-23 px off their chords, the mildest (6-7 px, an S) with the chord on the asphalt for
    # most of its length, which the gate's road-likeness tests pass as straight: its mild-bend path takes them
    rs = records[tile]
    worst = [distance_to_polyline(middle_samples(r.vertices), r.case.line).max() for r in rs]
    assert len(rs) == 9 and max(worst) <= 2.0, worst


@pytest.mark.xfail(strict=True, reason=(
    "the issue's target (median <= 1.5 px on every tile) is not met: at the defaults the medians are 2.32, "
    "2.35, 2.14, 1.84, 2.84 and 2.55 px on Shanghai 1196, 144, 1841, 308, 1887 and Vegas (the straight "
    "segment: 2.75, 2.43, 2.26, 3.05, 4.38, 2.46).  On straight roads no image-based centre beat the clicks "
    "against these annotations: the visible centre lies 2-4 px off them on several roads (Vegas: a shift of "
    "about (-1.7, +2.2) px over the tile), and straight lines between the true centre at the clicks would "
    "score 0.0-0.2 px; see BENCHMARKS.md, section quality"))
@pytest.mark.parametrize("tile", bq.SPACENET_TILES)
def test_issue_target_median_one_and_a_half_pixels(records, tile):
    errors, _, _ = _tile(records, tile)
    assert np.median(errors) <= TARGET_MEDIAN_PX


def test_a_straight_road_beside_a_parallel_band_is_not_taken_for_a_mild_bend():
    # clicks along Shanghai 1887's annotations moved by the tile's one shift (about (-0.3, -3.5) px:
    # bench_quality.annotation_offsets): the course refined along the road's parallel neighbour bows smoothly
    # at a steady width, but with both ends held at the limit of their snapping range, 8 px off the clicks;
    # the gate's mild-bend path refuses it (taken, the line ran 14.9 px off; the straight segment 3.1 px)
    tile = "shanghai_1887"
    if tile not in bq.available_tiles(bq.SPACENET_TILES):
        pytest.skip(f"{tile} is absent")
    case = next(c for c in bq.build_cases(bq.registered_tile(tile, (-0.3, -3.5))) if c.index == 78)
    record, = bq.evaluate(bq.linesnap(backend="cpu"), cases=[case])
    assert record.error_px <= case.straight_error_px + 0.5, (record.error_px, case.straight_error_px)
