"""The pieces of core.batch: WKB, the piece plan, the joints and the displacement, against plain references."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.batch.joints import joined_parts, node_positions
from core.batch.metrics import displacement_px, metres_per_px
from core.batch.plan import plan_pieces
from core.batch.sources import RasterSource
from core.batch.wkb import decode_lines, encode_lines


def test_wkb_round_trip_of_lines_and_multilines():
    one = [np.array([[0.0, 1.0], [2.5, -3.0], [4.0, 4.0]])]
    two = one + [np.array([[10.0, 10.0], [11.0, 12.0]])]
    for parts in (one, two):
        back = decode_lines(encode_lines(parts))
        assert len(back) == len(parts) and all(np.array_equal(a, b) for a, b in zip(back, parts))


def test_wkb_drops_z_and_names_other_types():
    line_z = struct.pack("<BII", 1, 1002, 2) + np.array([0, 0, 5, 1, 1, 6], "<f8").tobytes()
    assert decode_lines(line_z)[0].tolist() == [[0.0, 0.0], [1.0, 1.0]]
    big_endian = struct.pack(">BII", 0, 2, 2) + np.array([1, 2, 3, 4], ">f8").tobytes()
    assert decode_lines(big_endian)[0].tolist() == [[1.0, 2.0], [3.0, 4.0]]
    polygon = struct.pack("<BII", 1, 3, 0)
    assert decode_lines(polygon) == "Polygon"
    assert decode_lines(None) is None


def test_lines_sharing_a_vertex_share_a_node_and_long_parts_are_cut():
    a = np.array([[0.0, 0.0], [250.0, 0.0]])
    b = np.array([[250.0, 0.0], [250.0, 50.0], [250.0, 53.0]])
    plan = plan_pieces([a, b], max_piece_px=100.0, min_piece_px=8.0)
    assert len(plan.part_pieces[0]) == 3  # 250 px: three pieces of 83.3 px
    assert plan.part_nodes[0][-1] == plan.part_nodes[1][0]
    lengths = np.hypot(*(plan.nodes_px[plan.pieces[:, 1]] - plan.nodes_px[plan.pieces[:, 0]]).T)
    assert lengths.max() <= 100.0 and np.array_equal(plan.extract, lengths >= 8.0)
    assert not plan.extract[plan.part_pieces[1][-1]]  # the last 3 px


def _brute_node(proposals):
    """The least-squares crossing of the proposals' lines by a dense grid search (the reference)."""
    grid = np.stack(np.meshgrid(np.linspace(-30, 30, 1201), np.linspace(-30, 30, 1201)), -1).reshape(-1, 2)
    cost = sum(w * ((grid - q) @ n) ** 2 for q, n, w in proposals)
    coarse = grid[np.argmin(cost)]
    fine = coarse + np.stack(np.meshgrid(*[np.linspace(-0.05, 0.05, 101)] * 2), -1).reshape(-1, 2)
    return fine[np.argmin(sum(w * ((fine - q) @ n) ** 2 for q, n, w in proposals))]


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 4), st.integers(0, 2**31 - 1))
def test_node_positions_minimise_the_weighted_normal_distances(n_pieces, seed):
    rng = np.random.default_rng(seed)
    angles = rng.uniform(0, np.pi, n_pieces)
    ends = [30 * np.array([np.cos(t), np.sin(t)]) for t in angles]  # pieces from the node outwards
    parts = [np.array([[0.0, 0.0], e]) for e in ends]
    plan = plan_pieces(parts, max_piece_px=100.0, min_piece_px=1.0)
    refined, proposals = {}, []
    for k, (end, piece) in enumerate(zip(ends, range(n_pieces))):
        start = rng.uniform(-5, 5, 2)
        weight = float(rng.uniform(0.1, 1.0))
        refined[piece] = (np.array([start, end]), weight)
        chord = end - start
        proposals.append((start, np.array([-chord[1], chord[0]]) / np.hypot(*chord), weight))
    from core.batch.joints import WEAK_DIRECTION_SHARE

    got = node_positions(plan, refined)[plan.pieces[0, 0]]
    normals = sum(w * np.outer(n, n) for _, n, w in proposals)
    values, vectors = np.linalg.eigh(normals)
    if values[0] > WEAK_DIRECTION_SHARE * values.sum():  # the lines fix the point: their crossing
        expected = _brute_node(proposals)
        if np.all(np.abs(expected) < 29):
            assert np.allclose(got, expected, atol=0.01)
    else:  # along the weak direction: the proposals' weighted mean; across it: the lines
        weights = np.array([w for _, _, w in proposals])
        mean = sum(w * q for q, _, w in proposals) / weights.sum()
        assert abs((got - mean) @ vectors[:, 0]) < 1e-9
    cost = lambda p: sum(w * ((p - q) @ n) ** 2 for q, n, w in proposals)  # noqa: E731
    for step in (np.array([0.01, 0.0]), np.array([0.0, 0.01])):  # never worse than a nearby point across
        direction = step if values[0] > WEAK_DIRECTION_SHARE * values.sum() else vectors[:, 1] * 0.01
        assert cost(got) <= cost(got + direction) + 1e-9 and cost(got) <= cost(got - direction) + 1e-9


def test_a_corner_goes_to_the_crossing_of_its_pieces_and_parts_stay_joined():
    # Two pieces meeting at (10, 10); refined 3 px off along each one's normal: the crossing is (13, 13).
    parts = [np.array([[10.0, 10.0], [90.0, 10.0]]), np.array([[10.0, 10.0], [10.0, 90.0]])]
    plan = plan_pieces(parts, max_piece_px=100.0, min_piece_px=1.0)
    refined = {0: (np.array([[10.0, 13.0], [50.0, 13.5], [90.0, 13.0]]), 1.0),
               1: (np.array([[13.0, 10.0], [13.0, 90.0]]), 1.0)}
    nodes = node_positions(plan, refined)
    corner = nodes[plan.pieces[0, 0]]
    assert np.allclose(corner, [13.0, 13.0], atol=0.05)
    joined = joined_parts(plan, refined, nodes)
    assert np.array_equal(joined[0][0], joined[1][0])
    assert len(joined[0]) == 3 and abs(joined[0][1, 1] - 13.5) < 0.05


def test_a_node_without_evidence_moves_with_its_neighbours():
    parts = [np.array([[0.0, 0.0], [50.0, 0.0], [53.0, 0.0]])]
    plan = plan_pieces(parts, max_piece_px=100.0, min_piece_px=8.0)
    refined = {0: (np.array([[0.0, 2.0], [50.0, 2.0]]), 1.0)}
    nodes = node_positions(plan, refined)
    assert np.allclose(nodes[plan.part_nodes[0][-1]], [53.0, 2.0], atol=0.05)


def _dense_distance(points, vertices):
    t = np.linspace(0, 1, 2001)[:, None]
    dense = np.concatenate([a + t * (b - a) for a, b in zip(vertices[:-1], vertices[1:])])
    return np.min(np.hypot(*(points[:, None, :] - dense[None]).T), axis=0)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_displacement_matches_a_dense_sampling(seed):
    rng = np.random.default_rng(seed)
    before = np.cumsum(rng.uniform(-10, 10, (4, 2)), axis=0)
    after = before + rng.normal(0, 2, before.shape)
    mean, largest = displacement_px([before], [after])
    from core.batch.metrics import resample

    samples = resample(after)
    assert mean == pytest.approx(_dense_distance(samples, before).mean(), abs=0.02)
    both = max(_dense_distance(samples, before).max(), _dense_distance(resample(before), after).max())
    assert largest == pytest.approx(both, abs=0.02)
    assert displacement_px([before], [before]) == pytest.approx((0.0, 0.0), abs=1e-9)


def test_metres_per_pixel_on_utm_and_lonlat():
    utm = RasterSource("x", 10, 10, "EPSG:32618", (0.5, 0.0, 500000.0, 0.0, -0.5, 4500000.0))
    assert metres_per_px(utm, (5, 5)) == pytest.approx(0.5, rel=2e-3)  # UTM scale factor near the meridian
    degree = 1e-5
    lonlat = RasterSource("x", 10, 10, "EPSG:4326", (degree, 0.0, 0.0, 0.0, -degree, 0.0))
    assert metres_per_px(lonlat, (5, 5)) == pytest.approx((1.113195 + 1.105743) / 2, rel=1e-3)
    assert metres_per_px(RasterSource("x", 10, 10, None, (1, 0, 0, 0, 1, 0)), (1, 1)) is None


def _brute_distance_to_polyline(points, vertices):
    """Every point against every segment (the former method: n m)."""
    a, b = vertices[:-1], vertices[1:]
    ab = b - a
    t = np.clip(np.einsum("pij,ij->pi", points[:, None, :] - a, ab) / np.maximum((ab * ab).sum(1), 1e-300), 0, 1)
    return np.hypot(*np.moveaxis(a + t[..., None] * ab - points[:, None, :], -1, 0)).min(axis=1)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("tree", [False, True])
def test_distances_to_a_polyline_match_every_segment_checked(seed, tree, monkeypatch):
    from core.batch import metrics
    from core.batch.metrics import _distance_to_polyline

    monkeypatch.setattr(metrics, "TREE_PAIRS", 0 if tree else 10**12)  # the tree's way, or the direct one

    rng = np.random.default_rng(seed)
    vertices = np.cumsum(rng.normal(0, rng.choice([1.0, 30.0]), (int(rng.integers(2, 60)), 2)), axis=0)
    vertices[len(vertices) // 2] = vertices[len(vertices) // 2 - 1]  # a segment of no length
    points = rng.uniform(vertices.min() - 20, vertices.max() + 20, (300, 2))
    np.testing.assert_allclose(_distance_to_polyline(points, vertices), _brute_distance_to_polyline(points, vertices),
                               rtol=1e-9, atol=1e-9)
    single = vertices[:1]
    np.testing.assert_allclose(_distance_to_polyline(points, single), np.hypot(*(points - single[0]).T))


def _piece_ends(plan, part: int) -> list[tuple]:
    return [tuple(plan.nodes_px[plan.pieces[p]].ravel().tolist()) for p in plan.part_pieces[part]]


def test_stretches_beyond_the_imagery_are_one_piece_each_and_the_cuts_near_it_stay():
    # a line 10^7 px long far off the image was cut into 10^5 pieces (4.8 s) only to find each off the image
    far = np.array([[-2e7, -5e6], [-1e7, -5e6]])
    crossing = np.array([[150.0, 20.0], [150.0, 2e5], [3e5, 2e5]])  # over the image, then far off it
    bounds = (-5.0, -5.0, 245.0, 245.0)
    everywhere = plan_pieces([far, crossing], 100.0, 8.0)
    near = plan_pieces([far, crossing], 100.0, 8.0, bounds_px=bounds)
    assert len(near.part_pieces[0]) <= 11 and near.extract[near.part_pieces[0]].all()  # tried (off the image)
    assert len(near.part_pieces[1]) <= 40
    kept = set(_piece_ends(near, 1))
    touching = [ends for ends in _piece_ends(everywhere, 1) if min(ends[1], ends[3]) <= bounds[3]]
    assert touching and set(touching) <= kept  # the pieces that reach the image: the same, cut where they were
    assert near.nodes_px[near.part_nodes[1][-1]].tolist() == [3e5, 2e5]
    assert np.array_equal(near.extract[near.part_pieces[1]], np.ones(len(near.part_pieces[1]), bool))


def test_a_stretch_beyond_the_imagery_is_tried_only_when_its_cuts_would_have_been():
    # 25 px in pieces of at most 10: three of 8.3 px, each under min_piece_px 9: none tried, and so the stretch
    line = np.array([[1000.0, 1000.0], [1025.0, 1000.0]])
    for bounds in (None, (0.0, 0.0, 100.0, 100.0)):
        plan = plan_pieces([line], 10.0, 9.0, bounds_px=bounds)
        assert not plan.extract.any(), bounds
