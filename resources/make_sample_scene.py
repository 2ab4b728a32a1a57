"""Deterministic generator of LineSnap's bundled sample scene (``sample_scene.tif`` + ``.json``).

There is no real imagery we may ship, so the sample is synthetic: a 1500 x 1500
aerial-like RGB scene at 0.5 m per pixel in UTM zone 33N (EPSG:32633) with
textured field parcels and their boundaries, three curved roads of 4, 8 and
14 px (dark asphalt and a bright gravel road), a meandering river with wooded
banks, trees with shadows, a few buildings, sensor noise and a mild optical
blur.  ``sample_scene.json`` holds the truth: every road's and the river's
centre line in pixel coordinates ``(x, y) = (col, row)``, its width and
polarity, and the endpoints that ``linesnap extract --demo`` uses.

The generator uses numpy only (the GeoTIFF is written through rasterio) and
only arithmetic that IEEE 754 rounds exactly (``+ - * /``, sqrt, floor,
comparisons; no transcendental ufuncs, no float reductions), fed by
``Generator.random`` with a fixed seed, so it reproduces the same pixels on
any machine.  Regenerate with ``python -m resources.make_sample_scene [OUT_DIR]``.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np

SEED = 20_160_905
SIZE_PX = 1500
PIXEL_SIZE_M = 0.5
EPSG = 32633
ORIGIN_M = (455_000.0, 5_300_000.0)  # map position of the top-left corner
TIF_NAME, TRUTH_NAME = "sample_scene.tif", "sample_scene.json"
OVERVIEW_FACTORS = (2, 4, 8)

# Land-cover classes: base RGB, texture ("stripes" period px or "noise" cell px) and its amplitude.
LAND_COVER = {
    "crop": ((120, 150, 70), "stripes", 7.0, 16.0),
    "meadow": ((105, 142, 78), "noise", 10.0, 18.0),
    "ploughed": ((150, 120, 92), "stripes", 12.0, 20.0),
    "stubble": ((186, 170, 128), "noise", 22.0, 14.0),
    "dry_grass": ((166, 160, 102), "noise", 6.0, 14.0),
}
ASPHALT, GRAVEL, DIRT = (62, 64, 68), (212, 202, 182), (88, 76, 62)
WATER, BANK_TREES, FIELD_EDGE = (38, 62, 72), (58, 84, 48), (96, 116, 66)
CANOPY, ROOFS = (46, 72, 38), ((172, 82, 62), (150, 150, 156), (120, 70, 58))

# Centre lines as Catmull-Rom control points (pixel x, y); ends lie outside the image.
ROADS = (
    # name, width px, polarity, colour, control points
    ("main_road", 14, "dark", ASPHALT,
     [(-60, 560), (160, 600), (420, 700), (700, 760), (960, 740), (1200, 820), (1400, 960), (1560, 1010)]),
    ("gravel_road", 8, "bright", GRAVEL,
     [(930, -60), (900, 160), (820, 380), (860, 600), (780, 860), (640, 1080), (600, 1300), (640, 1560)]),
    ("farm_track", 4, "dark", DIRT,
     [(500, 1000), (628, 1150), (820, 1180), (1010, 1260), (1180, 1230), (1340, 1330), (1560, 1420)]),
)
RIVER = ("river", 22, "dark", WATER,
         [(-60, 120), (150, 260), (300, 180), (480, 330), (560, 520), (430, 760), (330, 980),
          (420, 1180), (300, 1360), (380, 1560)])
RIVER_BANK_PX = 7  # wooded strip along both banks
DEMO = {"feature": "main_road", "start_at_px": 90.0, "length_px": 260.0}


def make_scene() -> tuple[np.ndarray, dict]:
    """Render the scene.

    Returns
    -------
    rgb : (3, 1500, 1500) uint8 ndarray
        Red, green and blue bands.
    truth : dict
        JSON-able description: size, CRS, transform and the centre lines of
        the roads and the river (pixel coordinates, widths, polarity).
    """
    rng = np.random.default_rng(SEED)
    xs = np.arange(SIZE_PX) + 0.5  # pixel centres
    canvas = _fields(rng, xs)
    lines = [_centre_line(spec) for spec in (RIVER,) + ROADS]
    distances = [_distance_to_polyline(line, xs, reach_px=spec[1] / 2 + 12)
                 for line, spec in zip(lines, (RIVER,) + ROADS)]
    river_distance = distances[0]
    _paint(canvas, _coverage(river_distance, RIVER[1] / 2 + RIVER_BANK_PX), BANK_TREES, rng, 14.0)
    _paint(canvas, _coverage(river_distance, RIVER[1] / 2), WATER, rng, 4.0)
    for spec, distance in zip(ROADS, distances[1:]):
        _paint(canvas, _coverage(distance, spec[1] / 2), spec[3], rng, 6.0)
    free = np.minimum.reduce([d - spec[1] / 2 for d, spec in zip(distances, (RIVER,) + ROADS)])
    _buildings(canvas, rng, xs, lines[1], free)
    _trees(canvas, rng, xs, free)
    canvas += (rng.random(canvas.shape) - 0.5) * 10.0  # sensor noise
    canvas = _box_blur(_box_blur(canvas))  # optics: about a Gaussian of sigma 1.15 px
    rgb = np.clip(np.floor(canvas + 0.5), 0, 255).astype(np.uint8)
    return rgb, _truth(lines)


def write_scene(out_dir) -> tuple[Path, Path]:
    """Write ``sample_scene.tif`` (3-band uint8 GeoTIFF, DEFLATE, tiled, overviews) and its truth JSON.

    Returns
    -------
    (Path, Path)
        The GeoTIFF and the JSON.
    """
    import rasterio
    from rasterio.enums import Resampling
    from rasterio.transform import Affine

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rgb, truth = make_scene()
    profile = dict(
        driver="GTiff", width=SIZE_PX, height=SIZE_PX, count=3, dtype="uint8", crs=f"EPSG:{EPSG}",
        transform=Affine(PIXEL_SIZE_M, 0.0, ORIGIN_M[0], 0.0, -PIXEL_SIZE_M, ORIGIN_M[1]),
        tiled=True, blockxsize=256, blockysize=256, compress="deflate", predictor=2, zlevel=9,
        photometric="RGB", interleave="pixel",
    )
    tif_path, truth_path = out_dir / TIF_NAME, out_dir / TRUTH_NAME
    with rasterio.open(tif_path, "w", **profile) as ds:
        ds.write(rgb)
        ds.build_overviews(list(OVERVIEW_FACTORS), Resampling.average)
        ds.update_tags(TIFFTAG_IMAGEDESCRIPTION="LineSnap synthetic sample scene (resources/make_sample_scene.py)")
    truth_path.write_text(_truth_json(truth), encoding="utf-8")
    return tif_path, truth_path


# --- fields -----------------------------------------------------------------------------------


def _fields(rng, xs):
    """(3, H, W) float64 canvas of textured Voronoi parcels with darker boundary strips."""
    cells = 5
    seeds = (np.arange(cells * cells)[:, None] % cells, np.arange(cells * cells)[:, None] // cells)
    seeds = (np.column_stack(seeds) + 0.15 + 0.7 * rng.random((cells * cells, 2))) * (SIZE_PX / cells)
    nearest, second = np.full((SIZE_PX, SIZE_PX), np.inf), np.full((SIZE_PX, SIZE_PX), np.inf)
    label = np.zeros((SIZE_PX, SIZE_PX), np.intp)
    for k, (sx, sy) in enumerate(seeds):
        d = np.sqrt((xs[None, :] - sx) ** 2 + (xs[:, None] - sy) ** 2)
        closer = d < nearest
        second = np.where(closer, nearest, np.minimum(second, d))
        label = np.where(closer, k, label)
        nearest = np.where(closer, d, nearest)
    canvas = np.zeros((3, SIZE_PX, SIZE_PX))
    classes = list(LAND_COVER.values())
    for k in range(len(seeds)):
        colour, texture, scale, amplitude = classes[int(rng.random() * len(classes))]
        colour = np.asarray(colour, float) + (rng.random(3) - 0.5) * 24.0
        pattern = _stripes(rng, xs, scale) if texture == "stripes" else _value_noise(rng, scale)
        inside = label == k
        canvas[:, inside] = colour[:, None] + amplitude * (pattern[inside] - 0.5)
    canvas += 14.0 * (_value_noise(rng, 90.0) - 0.5)  # soil moisture: slow brightness changes
    _paint(canvas, np.clip(2.0 - (second - nearest), 0.0, 1.0) * 0.6, FIELD_EDGE, rng, 10.0)
    return canvas


def _stripes(rng, xs, period_px):
    """(H, W) triangle wave in [0, 1] across a random direction (crop rows, furrows)."""
    direction = rng.random(2) - 0.5
    u, v = direction / np.sqrt(direction[0] ** 2 + direction[1] ** 2)
    phase = (xs[None, :] * u + xs[:, None] * v) / period_px
    return np.abs(2.0 * (phase - np.floor(phase)) - 1.0) * 0.7 + 0.3 * _value_noise(rng, 4.0)


def _value_noise(rng, cell_px):
    """(H, W) smooth noise in [0, 1]: random lattice values, smoothstep-interpolated."""
    n = int(SIZE_PX / cell_px) + 2
    lattice = rng.random((n, n))
    t = (np.arange(SIZE_PX) + 0.5) / cell_px
    i = np.floor(t).astype(np.intp)
    f = t - i
    f = f * f * (3.0 - 2.0 * f)
    rows = lattice[i] * (1.0 - f)[:, None] + lattice[i + 1] * f[:, None]
    return rows[:, i] * (1.0 - f)[None, :] + rows[:, i + 1] * f[None, :]


# --- lines ------------------------------------------------------------------------------------


def _centre_line(spec, step_px=1.5):
    """(k, 2) float64 dense Catmull-Rom polyline through the control points, rounded to 0.01 px."""
    points = np.asarray(spec[4], float)
    points = np.vstack([2 * points[0] - points[1], points, 2 * points[-1] - points[-2]])
    pieces = []
    for k in range(1, len(points) - 2):
        p0, p1, p2, p3 = points[k - 1 : k + 3]
        chord = p2 - p1
        n = int(np.ceil(np.sqrt(chord[0] ** 2 + chord[1] ** 2) / step_px))
        t = (np.arange(n) / n)[:, None]
        pieces.append(
            0.5 * (2 * p1 + (p2 - p0) * t + (2 * p0 - 5 * p1 + 4 * p2 - p3) * t**2 + (3 * p1 - p0 - 3 * p2 + p3) * t**3)
        )
    pieces.append(points[-2][None, :])
    return np.round(np.vstack(pieces), 2)


def _distance_to_polyline(line, xs, reach_px):
    """(H, W) distance (px) from pixel centres to the polyline; inf farther than ``reach_px``."""
    distance = np.full((SIZE_PX, SIZE_PX), np.inf)
    for (px, py), (qx, qy) in zip(line[:-1], line[1:]):
        c0, c1 = (int(np.clip(np.floor(v), 0, SIZE_PX)) for v in (min(px, qx) - reach_px, max(px, qx) + reach_px + 1))
        r0, r1 = (int(np.clip(np.floor(v), 0, SIZE_PX)) for v in (min(py, qy) - reach_px, max(py, qy) + reach_px + 1))
        if c0 >= c1 or r0 >= r1:
            continue
        dx, dy = qx - px, qy - py
        x, y = xs[None, c0:c1] - px, xs[r0:r1, None] - py
        t = np.clip((x * dx + y * dy) / (dx * dx + dy * dy), 0.0, 1.0)
        d = np.sqrt((x - t * dx) ** 2 + (y - t * dy) ** 2)
        np.minimum(distance[r0:r1, c0:c1], d, out=distance[r0:r1, c0:c1])
    return distance


def _coverage(distance, half_width_px):
    """(H, W) anti-aliased coverage in [0, 1] of a band of the given half-width."""
    return np.clip(half_width_px + 0.5 - distance, 0.0, 1.0)


def _paint(canvas, coverage, colour, rng, texture):
    """Blend ``colour`` (plus a little texture) into ``canvas`` with weights ``coverage``."""
    rows, cols = np.nonzero(coverage)
    if rows.size == 0:
        return
    r0, r1, c0, c1 = rows.min(), rows.max() + 1, cols.min(), cols.max() + 1
    weight = coverage[r0:r1, c0:c1]
    grain = texture * (rng.random((r1 - r0, c1 - c0)) - 0.5)
    for band in range(3):
        region = canvas[band, r0:r1, c0:c1]
        region += weight * (colour[band] + grain - region)


# --- objects ----------------------------------------------------------------------------------


def _trees(canvas, rng, xs, free):
    """Tree crowns with south-east shadows, where nothing else stands (``free`` > crown + 4 px)."""
    for _ in range(260):
        cx, cy, radius = rng.random() * SIZE_PX, rng.random() * SIZE_PX, 4.0 + 8.0 * rng.random()
        if free[int(cy), int(cx)] < radius + 4.0:
            continue
        _disc(canvas, xs, cx + 0.45 * radius, cy + 0.45 * radius, radius, None, 0.45)  # shadow
        shade = 18.0 * rng.random()
        _disc(canvas, xs, cx, cy, radius, np.asarray(CANOPY, float) + shade, 1.0)


def _disc(canvas, xs, cx, cy, radius, colour, strength):
    """Paint a soft disc: ``colour`` brightening towards the centre, or darken by ``strength``."""
    c0, c1 = max(int(cx - radius - 2), 0), min(int(cx + radius + 3), SIZE_PX)
    r0, r1 = max(int(cy - radius - 2), 0), min(int(cy + radius + 3), SIZE_PX)
    d = np.sqrt((xs[None, c0:c1] - cx) ** 2 + (xs[r0:r1, None] - cy) ** 2)
    weight = np.clip(radius + 0.5 - d, 0.0, 1.0) * strength
    for band in range(3):
        region = canvas[band, r0:r1, c0:c1]
        target = region * 0.0 if colour is None else colour[band] + 22.0 * (1.0 - d / radius)
        region += weight * (target - region)


def _buildings(canvas, rng, xs, main_road, free):
    """Rectangular roofs (with shadows) beside the main road, aligned with it."""
    for k in range(200, len(main_road) - 200, 90):
        tangent = main_road[k + 2] - main_road[k - 2]
        u, v = tangent / np.sqrt(tangent[0] ** 2 + tangent[1] ** 2)
        side = 1.0 if rng.random() < 0.5 else -1.0
        length, width = 16.0 + 14.0 * rng.random(), 10.0 + 8.0 * rng.random()
        setback = 7.0 + 14.0 + width / 2 + 10.0 * rng.random()
        cx, cy = main_road[k] + side * setback * np.array([-v, u])
        if free[int(np.clip(cy, 0, SIZE_PX - 1)), int(np.clip(cx, 0, SIZE_PX - 1))] < 30.0:
            continue
        _rectangle(canvas, xs, (cx + 4.0, cy + 4.0), (u, v), length, width, None)
        _rectangle(canvas, xs, (cx, cy), (u, v), length, width, ROOFS[int(rng.random() * len(ROOFS))])


def _rectangle(canvas, xs, centre, axis, length, width, colour):
    """Paint a rotated rectangle (``colour``), or darken one (None) for a shadow."""
    (cx, cy), (u, v) = centre, axis
    reach = int(length + width)
    c0, c1 = max(int(cx) - reach, 0), min(int(cx) + reach, SIZE_PX)
    r0, r1 = max(int(cy) - reach, 0), min(int(cy) + reach, SIZE_PX)
    x, y = xs[None, c0:c1] - cx, xs[r0:r1, None] - cy
    along, across = np.abs(x * u + y * v), np.abs(-x * v + y * u)
    weight = np.clip(length / 2 + 0.5 - along, 0, 1) * np.clip(width / 2 + 0.5 - across, 0, 1)
    for band in range(3):
        region = canvas[band, r0:r1, c0:c1]
        target = region * 0.5 if colour is None else colour[band] + 10.0 * (across < 0.8)  # ridge line
        region += weight * (target - region)


def _box_blur(canvas):
    """3 x 3 box filter of every band, edges replicated."""
    padded = np.pad(canvas, ((0, 0), (1, 1), (1, 1)), mode="edge")
    rows = (padded[:, :-2] + padded[:, 1:-1] + padded[:, 2:]) / 3.0
    return (rows[:, :, :-2] + rows[:, :, 1:-1] + rows[:, :, 2:]) / 3.0


# --- truth ------------------------------------------------------------------------------------


def _truth(lines):
    specs = (RIVER,) + ROADS
    features = []
    for spec, line in zip(specs, lines):
        inside = (line >= 0).all(axis=1) & (line <= SIZE_PX).all(axis=1)
        features.append({
            "name": spec[0], "kind": "river" if spec is RIVER else "road", "width_px": spec[1],
            "polarity": spec[2], "centerline_px": line[inside].tolist(),
        })
        if spec is RIVER:
            features[-1]["bank_px"] = RIVER_BANK_PX
    return {
        "description": "LineSnap synthetic sample scene; centre lines in pixel (x, y) = (col, row)",
        "generator": "resources/make_sample_scene.py", "seed": SEED,
        "width": SIZE_PX, "height": SIZE_PX, "crs": f"EPSG:{EPSG}", "pixel_size_m": PIXEL_SIZE_M,
        "transform": [PIXEL_SIZE_M, 0.0, ORIGIN_M[0], 0.0, -PIXEL_SIZE_M, ORIGIN_M[1]],
        "features": features, "demo": _demo(features),
    }


def _truth_json(truth):
    """Indented JSON with one ``[x, y]`` pair per line (readable, diffable and small)."""
    text = json.dumps(truth, indent=1)
    return re.sub(r"\[\s+(-?[\d.e+-]+),\s+(-?[\d.e+-]+)\s+\]", r"[\1, \2]", text) + "\n"


def _demo(features):
    """Endpoints of ``linesnap extract --demo``: two points on a road's centre line, at the default settings."""
    feature = next(f for f in features if f["name"] == DEMO["feature"])
    line = np.asarray(feature["centerline_px"])
    steps = np.sqrt(((line[1:] - line[:-1]) ** 2).sum(axis=1))
    arc = np.concatenate([[0.0], np.cumsum(steps)])
    start = int(np.searchsorted(arc, DEMO["start_at_px"]))
    end = int(np.searchsorted(arc, DEMO["start_at_px"] + DEMO["length_px"]))
    return {
        "feature": feature["name"], "start": line[start].tolist(), "end": line[end].tolist(),
        "settings": {},  # the defaults: the adaptive mode estimates the road's width and polarity itself
    }


def main(argv=None) -> int:
    """Command line: regenerate the scene into a folder (default: this package's folder)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", default=Path(__file__).resolve().parent)
    args = parser.parse_args(argv)
    for path in write_scene(args.out_dir):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
