"""What an extraction learnt about the object: its width, polarity and contrast, and a confidence.

All of it is read off the road-likeness map (core.extraction.appearance) and
the intensity across the polyline, at stations along its middle.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from core.extraction.appearance import LikelihoodWindow

__all__ = ["RoadEstimate", "edge_centres", "estimate_road", "likelihood_run_width", "path_support",
           "turn_at_clicks_deg"]

#: Cross-sections are taken every so many px along the middle of the polyline...
_STATION_STEP_PX = 8.0
#: ...between these fractions of its length.
_MIDDLE = (0.15, 0.85)
#: The object is the run of road-likeness at or above this level around the polyline.
_WIDTH_LEVEL = 0.5
#: Widths are measured up to this far (px) to either side.
_MAX_HALF_WIDTH_PX = 60.0
#: ... at these offsets (px) along the normal.
_TAUS = np.arange(-_MAX_HALF_WIDTH_PX, _MAX_HALF_WIDTH_PX + 1e-9, 0.5)
#: The polyline may miss the run by this much (px) at a station.
_RUN_TOLERANCE_PX = 3.0
#: Edges of the object are searched preferring those near the polyline: weight 1 / (1 + |offset| / this).
_EDGE_REACH_PX = 30.0
#: An edge pair counts when its weaker edge is this many times the profile's slope noise.
_EDGE_SIGNIFICANCE = 3.0
#: Offsets (samples of _TAUS) beyond an edge where the outside is read.
_EDGE_BEYOND = (4, 12)
#: A pair nested inside the stronger one, of the other polarity, is the object when its weaker edge is at
#: least this share of the stronger pair's (sidewalks or verges of the other polarity flank roads).
_NESTED_SHARE = 0.4
#: Below this contrast (inside minus outside over the window's spread) the polarity is "any".
_POLARITY_CONTRAST = 0.25


@dataclass(frozen=True)
class RoadEstimate:
    """The object as one extraction saw it.

    Attributes
    ----------
    width_px : float or None
        Full width (px) of the object around the polyline; None where no
        cross-section found it.
    polarity : {"bright", "dark", "any"}
        Whether the object is brighter or darker than its surroundings (or neither clearly).
    contrast : float
        Intensity difference between the object and its surroundings, in units
        of the window's intensity spread (>= 0).
    course : {"straight", "bent"}
        Whether the polyline follows a bend of the object away from the
        segment between the clicks, or the segment itself.
    confidence : float
        In ``[0, 1]``: how much more object-like the polyline's path is than
        the window around it (0: the image does not tell the object apart).
    """

    width_px: float | None
    polarity: str
    contrast: float
    course: str
    confidence: float

    def to_dict(self) -> dict:
        """The estimate as a JSON-ready dict."""
        return asdict(self)


def path_support(window: LikelihoodWindow, vertices) -> float:
    """Mean road-likeness along a polyline (samples 1 px apart; 0 outside the window)."""
    points = _resample(np.asarray(vertices, dtype=np.float64), 1.0)
    return float(_bilinear(window, points).mean())


def turn_at_clicks_deg(bands, col_off: int, row_off: int, start, end, sigma_px: float) -> float:
    """The larger angle (degrees, 0-90) between the segment and the object's direction at either click.

    The object's direction at a click is the least-varying direction of the
    image's structure tensor there: the gradients of every band (each over
    its spread in the neighbourhood, so that no band's units dominate; Di
    Zenzo's colour tensor), weighted by a Gaussian of ``sigma_px`` centred on
    the click.  On a straight object both clicks see it run along the
    segment; where it bends away between them, at least one sees it leave.
    A click whose neighbourhood is flat or outside the window counts 0.

    Parameters
    ----------
    bands : (H, W, k) float ndarray
        The window's bands (NaN: no data), its top-left pixel at ``(col_off, row_off)``.
    start, end : (2,) array_like
        The clicks ``(x, y)`` in raster pixels.
    sigma_px : float
    """
    start, end = np.asarray(start, np.float64), np.asarray(end, np.float64)
    axis = (end - start) / max(float(np.hypot(*(end - start))), 1e-12)
    height, width = bands.shape[:2]
    reach = int(np.ceil(4.0 * sigma_px)) + 1
    worst = 0.0
    for click in (start, end):
        x, y = float(click[0]) - col_off, float(click[1]) - row_off
        c0, c1 = max(int(round(x)) - reach, 0), min(int(round(x)) + reach + 1, width)
        r0, r1 = max(int(round(y)) - reach, 0), min(int(round(y)) + reach + 1, height)
        if c1 - c0 < 3 or r1 - r0 < 3:
            continue
        rows, cols = np.mgrid[r0:r1, c0:c1]
        weight = np.exp(-((cols - x) ** 2 + (rows - y) ** 2) / (2.0 * sigma_px**2))
        tensor = np.zeros(3)  # xx, xy, yy
        for b in range(bands.shape[2]):
            band = bands[r0:r1, c0:c1, b].astype(np.float64)
            finite = np.isfinite(band)
            if finite.sum() < 3:
                continue
            band = np.where(finite, band, band[finite].mean())
            spread = band.std()
            if spread == 0.0:
                continue
            gy, gx = np.gradient(band / spread)
            tensor += [np.sum(weight * gx * gx), np.sum(weight * gx * gy), np.sum(weight * gy * gy)]
        xx, xy, yy = tensor
        if xx + yy <= 0.0:
            continue
        across = 0.5 * np.arctan2(2.0 * xy, xx - yy)  # the dominant gradient's direction
        along = np.array([-np.sin(across), np.cos(across)])
        worst = max(worst, float(np.degrees(np.arccos(min(1.0, abs(float(along @ axis)))))))
    return worst


def estimate_road(window: LikelihoodWindow, intensity: np.ndarray, vertices, course: str) -> RoadEstimate:
    """Width, polarity, contrast and confidence of the object under a polyline.

    Parameters
    ----------
    window : LikelihoodWindow
        Road-likeness around the polyline.
    intensity : (H, W) float ndarray
        Intensity of the same window (NaN where there is no data).
    vertices : (k, 2) array_like
        The polyline ``(x, y)`` in raster pixels.
    course : {"straight", "bent"}

    Returns
    -------
    RoadEstimate
    """
    vertices = np.asarray(vertices, dtype=np.float64)
    grid = _sections(vertices)
    run_width = _median_run_width(window, grid)
    luminance = LikelihoodWindow(np.asarray(intensity, dtype=np.float32), window.col_off, window.row_off)
    profiles = _bilinear(luminance, grid.reshape(-1, 2), missing=np.nan).reshape(grid.shape[:2])
    edges = _edge_pair(profiles, _TAUS)
    width = edges[0] if edges is not None else run_width
    polarity, contrast = _polarity(profiles, luminance, _TAUS, width)
    return RoadEstimate(width, polarity, contrast, course, _confidence(window, vertices, width))


def likelihood_run_width(window: LikelihoodWindow, vertices) -> float | None:
    """Median width (px) of the run of road-likeness >= 0.5 across the middle of a polyline (the appearance
    model's own width of the object), or None where no cross-section has one within the sections' reach."""
    return _median_run_width(window, _sections(np.asarray(vertices, dtype=np.float64)))


def _sections(vertices):
    """Points (stations, len(_TAUS), 2) of the cross-sections at :func:`_stations`, at the offsets
    :data:`_TAUS` along the normal."""
    stations, normals = _stations(vertices)
    return stations[:, None, :] + _TAUS[None, :, None] * normals[:, None, :]


def _median_run_width(window, grid):
    """Median of :func:`_run_width` over the cross-sections ``grid`` of :func:`_sections`, or None."""
    likelihood = _bilinear(window, grid.reshape(-1, 2)).reshape(grid.shape[:2])
    widths = [w for w in (_run_width(row, _TAUS) for row in likelihood) if w is not None]
    return float(np.median(widths)) if widths else None


def edge_centres(intensity: LikelihoodWindow, start, end, significance: float):
    """Offsets (px, along the left normal) of the object's centre at the two clicks, from its edges, and
    the wider of the two edge pairs (px).

    The mean cross-profiles of the first and the last third of the segment each
    give an edge pair (:func:`_edge_pair`, at least ``significance`` times the
    slope noise); the midpoints of the pairs, extrapolated to the clicks, are the
    offsets.  None where either pair is unclear.
    """
    a, b = np.asarray(start, np.float64), np.asarray(end, np.float64)
    length = float(np.hypot(*(b - a)))
    axis = (b - a) / length
    normal = np.array([-axis[1], axis[0]])
    middles, widths = [], []
    for first, last in ((0.05, 0.35), (0.65, 0.95)):
        s = np.arange(first * length, last * length, _STATION_STEP_PX / 2)
        grid = (a + s[:, None] * axis)[:, None, :] + _TAUS[None, :, None] * normal
        profiles = _bilinear(intensity, grid.reshape(-1, 2), missing=np.nan).reshape(grid.shape[:2])
        pair = _edge_pair(profiles, _TAUS, significance)
        if pair is None:
            return None
        widths.append(pair[0])
        middles.append(pair[2])
    near, far = middles  # at 0.2 and 0.8 of the segment: extrapolated to 0 and 1
    return (near + (near - far) / 3, far + (far - near) / 3), max(widths)


def _stations(vertices):
    """Points every _STATION_STEP_PX along the middle of the polyline, and their unit normals."""
    segments = np.diff(vertices, axis=0)
    lengths = np.hypot(*segments.T)
    arc = np.concatenate(([0.0], np.cumsum(lengths)))
    total = arc[-1]
    s = np.arange(_MIDDLE[0] * total, _MIDDLE[1] * total + 1e-9, _STATION_STEP_PX) if total > 0 else np.zeros(1)
    s = s if s.size else np.array([total / 2])
    index = np.clip(np.searchsorted(arc, s, side="right") - 1, 0, len(segments) - 1)
    direction = segments[index] / np.maximum(lengths[index], 1e-12)[:, None]
    points = vertices[index] + (s - arc[index])[:, None] * direction
    return points, np.stack([-direction[:, 1], direction[:, 0]], axis=1)


def _run_width(row, taus):
    """Length (px) of the run of ``row >= _WIDTH_LEVEL`` that holds (or nearly holds) tau = 0."""
    above = row >= _WIDTH_LEVEL
    near = np.flatnonzero(above & (np.abs(taus) <= _RUN_TOLERANCE_PX))
    if near.size == 0:
        return None
    centre = near[np.argmin(np.abs(taus[near]))]
    lo = centre
    while lo > 0 and above[lo - 1]:
        lo -= 1
    hi = centre
    while hi < len(row) - 1 and above[hi + 1]:
        hi += 1
    if lo == 0 or hi == len(row) - 1:
        return None  # the run reaches the end of the cross-section: no width to tell
    step = taus[1] - taus[0]
    return float((hi - lo + 1) * step)


def _edge_pair(profiles, taus, significance=None):
    """``(width, sign, middle)`` of the object's two edges in the mean cross-profile (``middle``: the offset
    of the pair's midpoint), or None when they are unclear.

    For either polarity, the steepest rise on one side of the polyline and fall
    on the other, weighted to prefer edges near it (the clicks lie on the
    object); a pair counts when its weaker edge stands out of the profile's slope
    noise by _EDGE_SIGNIFICANCE and the profile between the edges lies on its side
    of the profile beyond them.  The pair whose weaker edge is stronger wins,
    unless the other lies inside it (:data:`_NESTED_SHARE`).
    """
    profile = _finite_mean(profiles, axis=0)
    # an offset seen by few stations (the image or the window ends there) gives a noisy mean: not read
    profile[np.isfinite(profiles).sum(axis=0) * 2 < len(profiles)] = np.nan
    finite = np.isfinite(profile)
    if not finite.all():  # the image ends within the cross-sections: keep the run of data around the polyline
        centre = len(taus) // 2
        if not finite[centre]:
            return None
        lo, hi = centre, centre
        while lo > 0 and finite[lo - 1]:
            lo -= 1
        while hi < len(taus) - 1 and finite[hi + 1]:
            hi += 1
        if hi - lo < 4:
            return None
        profiles, taus, profile = profiles[:, lo:hi + 1], taus[lo:hi + 1], profile[lo:hi + 1]
    slope = np.gradient(profile, taus)
    noise = 1.4826 * float(np.median(np.abs(slope - np.median(slope)))) + 1e-12
    weight = 1.0 / (1.0 + np.abs(taus) / _EDGE_REACH_PX)
    left, right = taus < 0, taus > 0
    if not left.any() or not right.any():  # the data ends at the polyline (along the image's border): no pair
        return None
    floor = (_EDGE_SIGNIFICANCE if significance is None else significance) * noise
    pairs = []
    for sign in (1.0, -1.0):
        rise = np.flatnonzero(left)[np.argmax((sign * slope * weight)[left])]
        fall = np.flatnonzero(right)[np.argmax((-sign * slope * weight)[right])]
        strength = min(sign * slope[rise], -sign * slope[fall])
        if strength >= floor and _inside_differs(profile, rise, fall, sign):
            pairs.append((strength, rise, fall, sign))
    if not pairs:
        return None
    pairs.sort(reverse=True)
    strength, rise, fall, sign = pairs[0]
    if len(pairs) == 2:  # a band of the other polarity inside the stronger pair, around the clicks, is the object
        inner = pairs[1]
        if rise < inner[1] and inner[2] < fall and inner[0] >= _NESTED_SHARE * strength:
            strength, rise, fall, sign = inner
    return float(taus[fall] - taus[rise]), sign, 0.5 * float(taus[fall] + taus[rise])


def _inside_differs(profile, rise, fall, sign):
    """Whether the middle half of the profile between a rise and a fall lies on the pair's side (``sign``)
    of the profile just beyond either edge (which must be seen): a pair enclosing the clicks' object, not a
    band around it nor an edge where the data ends."""
    quarter = max(1, (fall - rise) // 4)
    inside = np.median(profile[rise + quarter:fall - quarter + 1])  # (a run of data: no NaN)
    beyond = _EDGE_BEYOND
    outside = (profile[max(0, rise - beyond[1]):max(0, rise - beyond[0]) + 1],
               profile[fall + beyond[0]:fall + beyond[1] + 1])
    return all(side.size > beyond[0] and sign * (inside - np.median(side)) > 0 for side in outside)


def _polarity(values, luminance, taus, width):
    """("bright" | "dark" | "any", contrast) from the intensity inside and beside the object."""
    half = 0.5 * (width if width is not None else 8.0)
    inside = np.abs(taus) <= 0.8 * half
    outside = (np.abs(taus) >= 1.2 * half) & (np.abs(taus) <= 1.2 * half + max(4.0, half))
    valid = luminance.values[np.isfinite(luminance.values)]
    if not inside.any() or not outside.any() or valid.size < 2:
        return "any", 0.0
    spread = 1.4826 * float(np.median(np.abs(valid - np.median(valid)))) or float(valid.std(dtype=np.float64)) or 1.0
    # stations whose cross-section lies off the image give NaN
    differences = _finite_mean(values[:, inside], axis=1) - _finite_mean(values[:, outside], axis=1)
    differences = differences[np.isfinite(differences)]
    if differences.size == 0:
        return "any", 0.0
    difference = np.median(differences)
    contrast = abs(float(difference)) / spread
    if contrast < _POLARITY_CONTRAST:
        return "any", contrast
    return ("bright" if difference > 0 else "dark"), contrast


def _finite_mean(values, axis):
    """The mean of the finite values along ``axis`` (NaN where there are none), as np.nanmean but without its
    warning, whose filter (warnings.catch_warnings) is not thread-safe: extractions run in threads (refine
    --threads), where one thread's filter could hide or let through another's warnings."""
    finite = np.isfinite(values)
    count = finite.sum(axis=axis)
    total = np.where(finite, values, 0.0).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):  # (numpy's error state is per thread)
        return np.where(count > 0, total / count, np.nan)


def _confidence(window, vertices, width) -> float:
    """How far the road-likeness on the polyline's middle stands above that beside the object, in [0, 1].

    Beside the object: on both sides, from 3 px beyond its estimated edges
    (``width``; 8 px when unknown) over ``max(6, width / 2)`` px, where the
    image has data.  The middle (_MIDDLE of the length) leaves out the
    stretches near the clicks where the appearance was learnt.
    """
    stations, normals = _stations(vertices)
    support = float(_bilinear(window, stations).mean())
    half = 0.5 * (width if width else 8.0)
    taus = np.arange(half + 3.0, half + 3.0 + max(6.0, half) + 1e-9, 1.0)
    taus = np.concatenate([-taus, taus])
    flanks = (stations[:, None, :] + taus[None, :, None] * normals[:, None, :]).reshape(-1, 2)
    values = _bilinear(window, flanks)
    if window.valid is not None:
        valid = LikelihoodWindow(window.valid.astype(np.float32), window.col_off, window.row_off)
        values = values[_bilinear(valid, flanks) > 0.999]
    if values.size == 0:
        return 0.0
    beside = float(values.mean())
    if beside >= 1.0:
        return 0.0
    return float(np.clip((support - beside) / (1.0 - beside), 0.0, 1.0))


def _resample(vertices, step):
    """Points every ``step`` px along a polyline, the ends included."""
    segments = np.diff(vertices, axis=0)
    lengths = np.hypot(*segments.T)
    arc = np.concatenate(([0.0], np.cumsum(lengths)))
    s = np.linspace(0.0, arc[-1], max(2, int(np.ceil(arc[-1] / step)) + 1))
    return np.stack([np.interp(s, arc, vertices[:, 0]), np.interp(s, arc, vertices[:, 1])], axis=1)


def _bilinear(window, points, missing=0.0):
    """Bilinear values of a window at raster positions ``points`` (n, 2); ``missing`` outside it."""
    values = window.values
    height, width = values.shape
    u = points[:, 0] - window.col_off - 0.5
    v = points[:, 1] - window.row_off - 0.5
    j0, i0 = np.floor(u).astype(np.int64), np.floor(v).astype(np.int64)
    fu, fv = u - j0, v - i0
    inside = (i0 >= 0) & (j0 >= 0) & (i0 + 1 < height) & (j0 + 1 < width)
    i0c, j0c = np.clip(i0, 0, max(height - 2, 0)), np.clip(j0, 0, max(width - 2, 0))
    i1c, j1c = np.minimum(i0c + 1, height - 1), np.minimum(j0c + 1, width - 1)
    top = values[i0c, j0c] * (1 - fu) + values[i0c, j1c] * fu
    bottom = values[i1c, j0c] * (1 - fu) + values[i1c, j1c] * fu
    out = top * (1 - fv) + bottom * fv
    return np.where(inside, out, missing)
