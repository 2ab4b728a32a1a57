"""End-to-end CPU extraction time at the default settings, small vs huge GeoTIFF.

Run: ``python -m tests.benchmarks.bench_extract_cpu [--quick] [--repeat N] [--cache-dir DIR]``

One click pair 250 px apart on a road of the 1300 x 1300 Vegas tile
(../shared/data/vegas_pan_0.3m.tif), and the same pair on a 20000 x 20000
GeoTIFF made of that tile repeated (written once into the cache folder: tiled
512 x 512, DEFLATE).  Each extraction reads only the window of its guides, so
both should take the same time.  Timings are medians after warm-up of
``core.extract`` (read + gradient + scores + DP + backtrack), from a path (the
CLI's case: the file is opened each time) and from an open Raster (the GUI's
case), with the median of every stage.  First of all, the command line: the
wall time of ``linesnap extract`` on the Vegas tile, one process per run
(Python's start, imports, the extraction, the GeoJSON written).  Writes the
"extract-cpu" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tests.benchmarks.report import machine_description, markdown_table, write_section
from tests.shared_data import SHARED_DATA

VEGAS = SHARED_DATA / "vegas_pan_0.3m.tif"
#: A stretch of road 0 of vegas_roads.geojson (pixel x, y), 250 px apart.
CLICKS = ((1016.0, 723.0), (1266.0, 723.0))
STAGES = ("read", "appearance", "gradient", "scoring", "dp", "backtrack")
TILE = 1300


def make_big_geotiff(path: Path, size: int) -> Path:
    """A ``size`` x ``size`` uint16 GeoTIFF of the Vegas tile repeated (skipped when it exists)."""
    import rasterio
    from rasterio.windows import Window

    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with rasterio.open(VEGAS) as src:
        tile, profile = src.read(1), src.profile
    profile.update(width=size, height=size, tiled=True, blockxsize=512, blockysize=512,
                   compress="deflate", predictor=2, BIGTIFF="IF_SAFER")
    partial = path.with_suffix(".part.tif")
    reps = -(-size // TILE)
    strip = np.tile(tile, (1, reps))[:, :size]
    with rasterio.open(partial, "w", **profile) as dst:
        for row in range(0, size, TILE):
            rows = min(TILE, size - row)
            dst.write(strip[:rows], 1, window=Window(0, row, size, rows))
    partial.rename(path)
    return path


def click_shifts(size: int, count: int) -> list[float]:
    """``count`` shifts (multiples of the tile) that put the clicks on distinct copies of the scene."""
    copies = size // TILE
    if copies <= 1:
        return [0.0] * count
    cells = [(i, j) for i in range(copies) for j in range(copies)]
    order = np.random.default_rng(0).permutation(len(cells))
    return [(float(TILE * cells[k][0]), float(TILE * cells[k][1])) for k in order[:count]] * (count // len(cells) + 1)


#: Settings of the extra row: edge mode on thin lines, where the gradient is
#: computed on the half-pixel grid (sigma below core.extraction.FINE_GRID_BELOW_SIGMA_PX).
THIN_LINE_SETTINGS = {"mode": "edge", "sigma_px": 0.5}


def time_extractions(image, shifts, repeat: int, warmup: int = 3, **settings):
    """Median total and per-stage ms of ``repeat`` extractions (after ``warmup``), the i-th at ``shifts[i]``."""
    from core.extraction import extract

    def run(shift):
        dx, dy = shift if isinstance(shift, tuple) else (shift, shift)
        start, end = ((x + dx, y + dy) for x, y in CLICKS)
        t0 = time.perf_counter()
        result = extract(image, start, end, backend="cpu", **settings)
        return (time.perf_counter() - t0) * 1e3, result, np.array([dx, dy])

    for i in range(warmup):
        run(shifts[-1 - i])
    totals, stages, polylines = [], {s: [] for s in STAGES}, []
    for i in range(repeat):
        total, result, shift = run(shifts[i])
        totals.append(total)
        polylines.append(result.vertices_px - shift)
        for stage in STAGES:
            stages[stage].append(result.timings_ms[stage])
    return statistics.median(totals), {s: statistics.median(v) for s, v in stages.items()}, polylines


ROOT = Path(__file__).resolve().parents[2]
CLI = "import sys; from app.cli import main; sys.exit(main(sys.argv[1:]))"


def time_cli(repeat: int) -> float:
    """Median wall ms of ``linesnap extract`` on the Vegas tile at the clicks, one process each (after one)."""
    (x0, y0), (x1, y1) = CLICKS
    times = []
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-c", CLI, "extract", str(VEGAS), "--start", f"{x0},{y0}", "--end", f"{x1},{y1}",
                   "--backend", "cpu", "-o", str(Path(folder) / "line.geojson")]
        for i in range(repeat + 1):
            t0 = time.perf_counter()
            subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
            if i:
                times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 5200 px big raster and 5 repeats")
    parser.add_argument("--repeat", type=int, default=None, help="timed extractions per case (default 31)")
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/linesnap-bench"))
    args = parser.parse_args(argv)
    if not VEGAS.exists():
        print(f"{VEGAS} is absent: nothing to measure", file=sys.stderr)
        return 1
    from core.extraction import ExtractionSettings
    from core.io.raster import open_raster

    load_before = os.getloadavg()[0]
    size = 5200 if args.quick else 20000
    repeat = args.repeat or (5 if args.quick else 31)
    t0 = time.perf_counter()
    big = make_big_geotiff(args.cache_dir / f"vegas_tiled_{size}.tif", size)
    made_s = time.perf_counter() - t0
    small_tiled = make_big_geotiff(args.cache_dir / f"vegas_tiled_{TILE}.tif", TILE)
    cases = [("1300 x 1300 (Vegas tile, as shipped)", VEGAS, [0.0] * (repeat + 3), ("path", "open Raster")),
             ("1300 x 1300 (tiled like the big one)", small_tiled, [0.0] * (repeat + 3), ("path",)),
             (f"{size} x {size} (tile repeated)", big, click_shifts(size, repeat + 3), ("path", "open Raster"))]
    cli_ms = time_cli(3 if args.quick else 7)
    print(f"CLI: {cli_ms:.0f} ms", flush=True)
    rows, polylines = [], []
    for name, path, shifts, kinds in cases:
        for kind in kinds:
            if kind == "path":
                total, stages, found = time_extractions(str(path), shifts, repeat)
            else:
                with open_raster(path) as raster:
                    total, stages, found = time_extractions(raster, shifts, repeat)
            polylines += found
            rows.append([name, kind, "defaults", f"{total:.1f}"] + [f"{stages[s]:.2f}" for s in STAGES])
            print(" | ".join(rows[-1]), flush=True)
    same = all(np.allclose(p, polylines[0], atol=1e-6) for p in polylines)
    with open_raster(VEGAS) as raster:
        total, stages, _ = time_extractions(raster, [0.0] * (repeat + 3), repeat, **THIN_LINE_SETTINGS)
    thin = ", ".join(f"{k} {v}" for k, v in THIN_LINE_SETTINGS.items()) + " (half-pixel gradient grid)"
    rows.append([cases[0][0], "open Raster", thin, f"{total:.1f}"] + [f"{stages[s]:.2f}" for s in STAGES])
    print(" | ".join(rows[-1]), flush=True)
    settings = ExtractionSettings()
    header = ["raster", "input", "settings", "total ms (median)"] + [f"{s} ms" for s in STAGES]
    table = markdown_table(header, rows)
    text = "\n".join([
        "## End-to-end extraction on the CPU (`bench_extract_cpu`)",
        "",
        machine_description(),
        "",
        f"Default settings ({', '.join(f'{k}={v}' for k, v in settings.to_dict().items())}); "
        f"clicks {CLICKS[0]} -> {CLICKS[1]} (250 px) on a road of the Vegas tile, and the same "
        "clicks on the big raster (the tile repeated; tiled 512 x 512, DEFLATE), shifted onto a different "
        "copy of the tile for every extraction, so that no decoded tile is reused from GDAL's cache; "
        "the shipped tile is uncompressed in 3-row strips, so its reads decode nothing, and a copy "
        "tiled and compressed like the big raster shows what the format costs. "
        f"Median of {repeat} extractions after 3 warm-up runs; stage columns are medians of "
        "ExtractionResult.timings_ms ('read' includes opening the file for path inputs; the files "
        "were in the OS page cache). "
        "The last row changes the settings as shown (thin lines: the gradient grid has 4 times the "
        "points). "
        f"Same polyline on every raster (default settings): {'yes' if same else 'NO'}. 1-minute load "
        "average before / "
        f"after the run: {load_before:.1f} / {os.getloadavg()[0]:.1f} (other work on the machine slows "
        "the 2-thread parallel scoring most).",
        "",
        f"The command line, `linesnap extract` on the Vegas tile at these clicks (`--backend cpu`, GeoJSON to a "
        f"file), one process per run: median {cli_ms:.0f} ms of {3 if args.quick else 7} runs after one "
        "(Python's start and imports included; the extraction itself is the first row below).",
        "",
        table,
    ])
    print()
    print(table)
    if made_s > 1.0:
        print(f"(wrote {big} in {made_s:.0f} s)")
    if not args.quick:
        write_section("extract-cpu", text)
    return 0 if same else 2


if __name__ == "__main__":
    sys.exit(main())
