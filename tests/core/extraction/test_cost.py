"""The extraction's cost model: sizes checked against the guides actually built, refusals before any work."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.extraction import ExtractionSettings, extract
from core.extraction.cost import MAX_ESTIMATED_S, check_extraction_cost, extraction_cost
from core.extraction.guides import build_guides
from core.memory import HostMemoryError

IMAGE = np.random.default_rng(0).normal(100, 10, (200, 200)).astype(np.float32)


@settings(max_examples=60, deadline=None)
@given(nodes=st.integers(3, 40), points=st.integers(2, 40), half_width=st.floats(0.5, 50),
       snap=st.booleans(), mode=st.sampled_from(["edge", "ribbon"]),
       a=st.tuples(st.floats(0, 500), st.floats(0, 500)), b=st.tuples(st.floats(0, 500), st.floats(0, 500)))
def test_links_and_window_match_the_guides_built(nodes, points, half_width, snap, mode, a, b):
    if np.hypot(a[0] - b[0], a[1] - b[1]) < 1.0:
        return
    options = ExtractionSettings(nodes=nodes, points=points, half_width_px=half_width, snap_endpoints=snap, mode=mode)
    cost = extraction_cost(options, a, b)
    guides = build_guides(a, b, nodes, points, half_width, snap_endpoints=snap)
    layers = [len(layer) for layer in guides.layer_points()]
    assert cost.links == sum(p * q for p, q in zip(layers[:-1], layers[1:]))  # counted from the real layers
    _, _, width, height = guides.bounds_px(40.0)  # the estimate's window, read around the guides
    assert cost.window_px[0] >= width - 2 and cost.window_px[1] >= height - 2
    assert cost.memory_bytes >= 20 * cost.links


def test_guides_closer_than_half_a_pixel_are_refused_at_once():
    begin = time.perf_counter()
    with pytest.raises(ValueError, match=r"nodes = 1000000 puts guides 0.00018 px apart on this 176 px span; "
                                         r"use at most 353 nodes"):
        extract(IMAGE, (10.0, 20.0), (186.0, 20.0), nodes=1_000_000, backend="cpu")
    assert time.perf_counter() - begin < 5.0
    with pytest.raises(ValueError, match=r"nodes = 8 puts guides 0.3 px apart on this 2.1 px span; use at most 5"):
        extract(IMAGE, (10.0, 20.0), (12.1, 20.0), nodes=8, backend="cpu")
    for nodes in (3, 8):  # where no nodes setting would do, it is not advised
        with pytest.raises(ValueError, match=r"the clicks are 0.4 px apart, too close for any guides .*click farther"):
            extract(IMAGE, (10.0, 20.0), (10.4, 20.0), nodes=nodes, backend="cpu")


def test_hours_of_work_are_refused_with_what_to_change():
    with pytest.raises(ValueError, match=r"would take about \d+ (s|minutes|hours) on the CPU .* use fewer points"):
        extract(IMAGE, (10.0, 20.0), (186.0, 20.0), nodes=300, points=1000, backend="cpu")
    cost = extraction_cost(ExtractionSettings(nodes=300, points=1000), (10.0, 20.0), (186.0, 20.0))
    assert cost.estimated_s > MAX_ESTIMATED_S
    mitm = ExtractionSettings(nodes=60, points=1000, solver="mitm", mode="edge")
    with pytest.raises(ValueError, match="or the window solver"):
        check_extraction_cost(mitm, (0.0, 0.0), (150.0, 0.0))


def test_memory_beyond_the_budget_says_what_it_needs():
    options = ExtractionSettings(nodes=40, points=200)
    with pytest.raises(HostMemoryError, match=r"would need [\d.]+ MiB .* budget of 1000 bytes; use fewer") as err:
        check_extraction_cost(options, (0.0, 0.0), (150.0, 0.0), budget_bytes=1000)
    assert err.value.needed_bytes == extraction_cost(options, (0.0, 0.0), (150.0, 0.0)).memory_bytes


def test_the_defaults_pass():
    cost = check_extraction_cost(ExtractionSettings(), (10.0, 20.0), (186.0, 20.0), band_count=3)
    assert cost.estimated_s < 1.0 and cost.guide_spacing_px == pytest.approx(176 / 7)


def test_many_bands_cost_what_their_components_do_plus_their_read():
    from core.extraction.cost import APPEARANCE_S_PER_FEATURE_PAIR_PX, appearance_s_per_px, window_bytes_per_px
    from core.extraction.spectral import MAX_MODEL_BANDS

    for mode, per_band in (("edge", 28), ("ribbon", 28), ("auto", 30)):
        for band_count in range(1, MAX_MODEL_BANDS + 1):  # as fitted before the reduction
            assert window_bytes_per_px(mode, band_count) == 10 + per_band * band_count
        assert window_bytes_per_px(mode, 9) == window_bytes_per_px(mode, MAX_MODEL_BANDS)
        assert window_bytes_per_px(mode, 224) == 10 + 9 * 224  # two float32 copies of the read, and a margin
    assert appearance_s_per_px(2) < appearance_s_per_px(MAX_MODEL_BANDS) < appearance_s_per_px(224)
    unreduced = APPEARANCE_S_PER_FEATURE_PAIR_PX * (2 * 224) ** 2  # the model on every band: (2 k)^2 per pixel
    assert appearance_s_per_px(224) < 0.05 * unreduced  # mostly the read of the 224 bands now
    settings, a, b = ExtractionSettings(), (300.0, 500.0), (500.0, 560.0)
    assert extraction_cost(settings, a, b, 224).estimated_s > extraction_cost(settings, a, b, 8).estimated_s


@pytest.mark.parametrize("mode", ["edge", "ribbon", "auto"])
@pytest.mark.parametrize("band_count", [1, 3, 24])
def test_memory_estimate_bounds_the_traced_peak(tmp_path, mode, band_count):
    """The estimate is at least the tracemalloc peak of the extraction, and at most twice it (window-bound cases)."""
    import tracemalloc

    import rasterio

    size = 260
    image = np.random.default_rng(1).normal(100, 10, (band_count, size, size)).astype(np.float32)
    diagonal = np.arange(size)
    for shift in range(-5, 6):
        image[:, np.clip(diagonal + shift, 0, size - 1), diagonal] += 60  # a bright road along the diagonal
    path = tmp_path / "road.tif"
    with rasterio.open(path, "w", driver="GTiff", width=size, height=size, count=band_count, dtype="float32") as ds:
        ds.write(image)
    a, b = (20.5, 20.5), (size - 20.5, size - 20.5)
    extract(path, a, b, mode=mode, backend="cpu")  # compiled and warm: the traced peak is the extraction's own
    tracemalloc.start()
    try:
        extract(path, a, b, mode=mode, backend="cpu")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    estimate = extraction_cost(ExtractionSettings(mode=mode), a, b, band_count).memory_bytes
    assert peak <= estimate <= 2 * peak, (peak, estimate)
