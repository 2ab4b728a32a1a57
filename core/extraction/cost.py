"""What one extraction will cost, checked before any work starts.

:func:`extraction_cost` sizes an extraction from its settings and clicks alone
(no guide, window or table is built): the candidate links, the link samples
that scoring takes, the dynamic program's steps, the window it reads and the
memory it holds.  :func:`check_extraction_cost` refuses, at once and with what
to change, a request that exceeds the memory budget or would run for minutes.

The rates are measured (docs/notes/extraction-and-polyline.md, "Cost model"):
on the 2-core development VM (shared) scoring ran 1.2e7 to 5.3e7 link samples
per second, the ``window`` DP 0.9e7 to 2e7 states and ``mitm`` 7e8 to 8e8
steps per second; the estimate uses middle rates, so that it refuses only what
is clearly too long.  The window's bands count in its memory and in the
appearance model's time, up to core.extraction.spectral.MAX_MODEL_BANDS (more
are reduced to that many components; only their read grows with them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.extraction.settings import AUTO, ExtractionSettings
from core.extraction.spectral import MAX_MODEL_BANDS
from core.memory import check_allocation
from core.polyline.tables import preparation_bytes

__all__ = ["MAX_ESTIMATED_S", "MIN_GUIDE_SPACING_PX", "ExtractionCost", "appearance_s_per_px", "check_extraction_cost",
           "extraction_cost", "guides_too_close", "window_box", "window_bytes_per_px"]

#: Guides closer than this (px) along the span see the same pixels: more nodes add work, not detail.
MIN_GUIDE_SPACING_PX = 0.5
#: Requests estimated to run longer than this (s) are refused.
MAX_ESTIMATED_S = 60.0
#: Link samples scored per second (CPU); ribbon samples read two edges, RIBBON_SAMPLE_COST times an edge's.
CPU_SAMPLES_PER_S = 2e7
RIBBON_SAMPLE_COST = 1.5
#: DP states per second: ``window`` visits m d^2 states, ``mitm`` m d^3 (CPU).
CPU_WINDOW_STATES_PER_S = 2e7
CPU_MITM_STEPS_PER_S = 8e8
#: How much faster the GPU runs both (conservative: measured 10x to 3000x on an H100).
GPU_SPEEDUP = 20.0
#: Bytes per candidate link that scoring and the DP hold at once: the float32
#: score, the float64 DP value and the int64 backtracking index.
BYTES_PER_LINK = 4 + 8 + 8
#: Bytes per window pixel that the reads, appearance and gradient hold at their peak: a part for each band
#: read plus a part for the single-plane maps, per mode (auto reads a wider window and scores the course
#: too).  Fitted from the tracemalloc peaks of extractions on 391-1716 px windows of 1 and 3 bands
#: (docs/notes/extraction-and-polyline.md, "Cost model"): measured 26-28 B per band and 9 B besides.
WINDOW_BYTES_PER_BAND_PX = {"edge": 28, "ribbon": 28, AUTO: 30}
WINDOW_BYTES_PER_PX = {"edge": 10, "ribbon": 10, AUTO: 10}
#: Past MAX_MODEL_BANDS bands the model reads that many components (core.extraction.spectral), and the peak
#: per pixel is the read's where that is more: two float32 copies of every band (traced: 8 B per band).
READ_BYTES_PER_BAND_PX = 9
#: The appearance model's seconds per window pixel (every mode runs it): a part per pixel and a part per pair
#: of its features (two per modelled band), fitted on 1-8 band windows of 206 000 px (28-92 ms), 2-core VM;
#: and the read and the reduction of bands beyond MAX_MODEL_BANDS (224 bands: about 0.35 s for 206 000 px).
APPEARANCE_S_PER_PX = 1.3e-7
APPEARANCE_S_PER_FEATURE_PAIR_PX = 1.2e-9
REDUCTION_S_PER_BAND_PX = 8e-9
#: Pixels read around the guides for the estimate (pipeline._ESTIMATE_MARGIN_PX).
_WINDOW_MARGIN_PX = 40.0


@dataclass(frozen=True)
class ExtractionCost:
    """The size of one extraction.

    Attributes
    ----------
    span_px : float
        Distance between the clicks.
    guide_spacing_px : float
        ``span_px / (nodes - 1)``.
    links : int
        Candidate links scored.
    link_samples : float
        Gradient samples that scoring takes (ribbon samples weighted).
    dp_steps : float
        Inner steps of the chosen DP.
    window_px : tuple of int
        ``(width, height)`` of the window read.
    memory_bytes : int
        Peak of the link tables and the window's planes.
    estimated_s : float
        Running time at the measured rates of the backend (the appearance model's on the CPU).
    """

    span_px: float
    guide_spacing_px: float
    links: int
    link_samples: float
    dp_steps: float
    window_px: tuple
    memory_bytes: int
    estimated_s: float


def extraction_cost(settings: ExtractionSettings, start_xy, end_xy, band_count: int = 1,
                    backend: str = "cpu") -> ExtractionCost:
    """The :class:`ExtractionCost` of extracting between two clicks (pixel ``(x, y)``) with ``settings``.

    ``band_count`` is the number of bands read; ``backend`` the resolved one ("cpu" or "gpu").
    """
    a, b = np.asarray(start_xy, np.float64), np.asarray(end_xy, np.float64)
    span = float(np.hypot(*(b - a)))
    d, m = settings.points, settings.nodes - 2
    spacing = span / (settings.nodes - 1)
    n_end = d if settings.snap_endpoints else 1
    links = n_end * d + (m - 1) * d * d + d * n_end
    # A link joins offsets on neighbouring guides; |offset change| averages 2W/3 over all pairs.
    mean_length = math.hypot(spacing, 2.0 * settings.half_width_px / 3.0)
    samples = links * max(2.0, math.ceil(mean_length)) * (RIBBON_SAMPLE_COST if settings.mode != "edge" else 1.0)
    steps = float(m) * d ** (3 if settings.solver == "mitm" else 2)
    dp_rate = CPU_MITM_STEPS_PER_S if settings.solver == "mitm" else CPU_WINDOW_STATES_PER_S
    seconds = samples / CPU_SAMPLES_PER_S + steps / dp_rate
    if backend == "gpu":
        seconds /= GPU_SPEEDUP
    _, _, width, height = window_box(settings, a, b)
    seconds += width * height * appearance_s_per_px(band_count)  # on the CPU whatever the backend
    table_bytes = links * BYTES_PER_LINK + preparation_bytes((), d, n_end, m) + max(n_end, d) * max(d, n_end)
    window_bytes = width * height * window_bytes_per_px(settings.mode, band_count)
    return ExtractionCost(span, spacing, links, samples, steps, (width, height), table_bytes + window_bytes, seconds)


def window_bytes_per_px(mode: str, band_count: int) -> int:
    """Peak bytes per window pixel of an extraction in ``mode`` reading ``band_count`` bands."""
    per_band = WINDOW_BYTES_PER_BAND_PX[mode] * min(band_count, MAX_MODEL_BANDS)
    if band_count > MAX_MODEL_BANDS:
        per_band = max(per_band, READ_BYTES_PER_BAND_PX * band_count)
    return WINDOW_BYTES_PER_PX[mode] + per_band


def appearance_s_per_px(band_count: int) -> float:
    """Seconds per window pixel of the appearance model on ``band_count`` bands (the reduction of many included)."""
    features = 2 * min(band_count, MAX_MODEL_BANDS)
    reduced = band_count if band_count > MAX_MODEL_BANDS else 0
    return APPEARANCE_S_PER_PX + APPEARANCE_S_PER_FEATURE_PAIR_PX * features ** 2 + REDUCTION_S_PER_BAND_PX * reduced


def window_box(settings: ExtractionSettings, start_xy, end_xy) -> tuple[int, int, int, int]:
    """``(col_off, row_off, width, height)`` of the box the extraction reads (pixels): the guides plus
    margins, or the course's reach in auto mode."""
    a, b = np.asarray(start_xy, np.float64), np.asarray(end_xy, np.float64)
    if settings.mode == AUTO:
        from core.extraction.adaptive import adaptive_window_box

        return adaptive_window_box(a, b, settings.half_width_px)
    reach = settings.half_width_px + _WINDOW_MARGIN_PX + 4.0 * settings.sigma_px
    lo = np.floor(np.minimum(a, b) - reach)
    extent = np.abs(b - a) + 2.0 * reach
    return int(lo[0]), int(lo[1]), int(math.ceil(extent[0])), int(math.ceil(extent[1]))


def guides_too_close(nodes: int, span_px: float) -> bool:
    """Whether ``nodes`` split points put the guides of a ``span_px`` span closer than MIN_GUIDE_SPACING_PX
    (an extraction refuses that: :func:`check_extraction_cost`)."""
    return span_px / (nodes - 1) < MIN_GUIDE_SPACING_PX


def check_extraction_cost(settings: ExtractionSettings, start_xy, end_xy, band_count: int = 1,
                          backend: str = "cpu", budget_bytes: int | None = None) -> ExtractionCost:
    """The cost, or ValueError (core.memory.HostMemoryError for memory) saying what it needs and what to change."""
    cost = extraction_cost(settings, start_xy, end_xy, band_count, backend)
    if guides_too_close(settings.nodes, cost.span_px):
        most = int(cost.span_px / MIN_GUIDE_SPACING_PX) + 1
        if most < 3:  # (no setting helps: the clicks are closer than the fewest guides need)
            raise ValueError(f"the clicks are {cost.span_px:.2g} px apart, too close for any guides (3 nodes need "
                             f"them at least {2 * MIN_GUIDE_SPACING_PX:g} px apart): click farther apart")
        raise ValueError(f"nodes = {settings.nodes} puts guides {cost.guide_spacing_px:.2g} px apart on this "
                         f"{cost.span_px:.3g} px span; use at most {most} nodes (guides at least "
                         f"{MIN_GUIDE_SPACING_PX:g} px apart)")
    what = f"{cost.links:,} candidate links ({settings.nodes} nodes x {settings.points} points)"
    check_allocation(cost.memory_bytes, f"scoring and solving {what} on a window of {cost.window_px[0]} x "
                     f"{cost.window_px[1]} px", budget_bytes, advice="use fewer points per guide or fewer nodes, "
                     "or click points in between")
    if cost.estimated_s > MAX_ESTIMATED_S:
        raise ValueError(f"scoring and solving {what} would take about {_duration(cost.estimated_s)} on the "
                         f"{backend.upper()} (more than {MAX_ESTIMATED_S:.0f} s); use fewer points per guide, "
                         f"fewer nodes or a smaller half-width"
                         + (", or the window solver" if settings.solver == "mitm" else ""))
    return cost


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.0f} hours" if seconds < 1e7 else f"{seconds:.1e} s"
