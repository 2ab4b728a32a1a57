"""Windowed reads do not grow with the raster: 300 x 300 windows of small and 20000 x 20000 GeoTIFFs.

    python -m tests.benchmarks.bench_raster_read [--quick]

Times ``Raster.read_window`` (the intensity band, float32 with NaN masking) at
random positions of: the bundled 1500 x 1500 sample scene (3-band uint8,
tiled, DEFLATE), the 1300 x 1300 Vegas tile of ../shared/data (1 band uint16,
striped; skipped when absent) and a 20000 x 20000 GeoTIFF with the sample
scene's layout, tiled from its pixels (made once, cached in the temp folder).
Every read is at a new random position, as clicks are, so the small files
profit from GDAL's block cache more than the big one does.  Writes the
"raster-read" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from core.io.raster import open_raster
from tests.benchmarks.report import machine_description, markdown_table, write_section
from tests.shared_data import SHARED_DATA

SCENE = Path(__file__).resolve().parents[2] / "resources" / "sample_scene.tif"
CACHE = Path(tempfile.gettempdir()) / "linesnap-bench"
WINDOW_PX = 300


def big_geotiff(size_px: int) -> Path:
    """A size x size 3-band GeoTIFF tiled from the sample scene (made once, then cached)."""
    import rasterio
    from rasterio.windows import Window

    path = CACHE / f"sample_tiled_{size_px}.tif"
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    with rasterio.open(SCENE) as ds:
        scene, profile = ds.read(), ds.profile
    profile.update(width=size_px, height=size_px, BIGTIFF="IF_SAFER")
    partial = path.with_suffix(".partial.tif")
    band_rows = 2048
    with rasterio.open(partial, "w", **profile) as out:
        for row in range(0, size_px, band_rows):
            rows = min(band_rows, size_px - row)
            strip = scene[:, np.arange(row, row + rows) % scene.shape[1]][:, :, np.arange(size_px) % scene.shape[2]]
            out.write(strip, window=Window(0, row, size_px, rows))
    partial.rename(path)
    return path


def time_reads(path: Path, n_reads: int, seed: int = 0) -> dict:
    """Open time and per-read times (ms) of 300 x 300 windows at random positions."""
    open_raster(SCENE).close()  # GDAL's one-off start-up is not the file's open time
    t0 = time.perf_counter()
    raster = open_raster(path)
    open_ms = (time.perf_counter() - t0) * 1e3
    rng = np.random.default_rng(seed)
    corners = rng.integers(0, [raster.width - WINDOW_PX, raster.height - WINDOW_PX], size=(n_reads + 3, 2))
    for col, row in corners[:3]:  # warm-up: imports, first GDAL calls
        raster.read_window(int(col), int(row), WINDOW_PX, WINDOW_PX)
    times = []
    for col, row in corners[3:]:
        t0 = time.perf_counter()
        raster.read_window(int(col), int(row), WINDOW_PX, WINDOW_PX)
        times.append((time.perf_counter() - t0) * 1e3)
    size = f"{raster.width} x {raster.height}"
    raster.close()
    return {
        "size": size, "open_ms": open_ms, "median_ms": statistics.median(times),
        "p90_ms": float(np.percentile(times, 90)), "file_mb": path.stat().st_size / 2**20,
    }


def time_reads_in_child(path: Path, n_reads: int, cache: bool) -> dict:
    """:func:`time_reads` in a fresh process; ``cache=False`` turns GDAL's block cache off."""
    env = dict(os.environ)
    if not cache:
        env["GDAL_CACHEMAX"] = "0"  # read once at GDAL's start, hence the child process
    command = [sys.executable, "-m", "tests.benchmarks.bench_raster_read", "--worker", str(path), str(n_reads)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 6000 px big file and fewer reads")
    parser.add_argument("--worker", nargs=2, metavar=("PATH", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(time_reads(Path(args.worker[0]), int(args.worker[1]))))
        return 0
    big_px, n_reads = (6000, 15) if args.quick else (20000, 60)
    t0 = time.perf_counter()
    big = big_geotiff(big_px)
    make_s = time.perf_counter() - t0
    files = [("sample scene (3 x uint8, tiled, deflate)", SCENE)]
    vegas = SHARED_DATA / "vegas_pan_0.3m.tif"
    if vegas.exists():
        files.append(("Vegas tile (1 x uint16, striped)", vegas))
    files.append(("tiled from the sample scene (3 x uint8, tiled, deflate)", big))
    rows = []
    for label, path in files:
        cached, cold = (time_reads_in_child(path, n_reads, cache) for cache in (True, False))
        rows.append([label, cached["size"], f"{cached['file_mb']:.1f}", f"{cached['open_ms']:.2f}",
                     f"{cached['median_ms']:.2f}", f"{cached['p90_ms']:.2f}",
                     f"{cold['median_ms']:.2f}", f"{cold['p90_ms']:.2f}"])
    table = markdown_table(
        ["file", "pixels", "MiB", "open (ms)", "read median (ms)", "read p90 (ms)",
         "no block cache: median (ms)", "p90 (ms)"], rows
    )
    text = (
        "## Windowed raster reads (`python -m tests.benchmarks.bench_raster_read`)\n\n"
        f"{machine_description()}\n\n"
        f"`Raster.read_window` of {WINDOW_PX} x {WINDOW_PX} px (intensity, float32, NaN-masked) at "
        f"{n_reads} random positions per file, after 3 warm-up reads, each file in a fresh process; "
        "again with GDAL's block cache off (`GDAL_CACHEMAX=0`), so that every read decodes its tiles "
        f"or strips.{' Quick run.' if args.quick else ''}\n\n"
        f"{table}\n"
    )
    print(text)
    print(f"(big file ready in {make_s:.1f} s: {big})")
    write_section("raster-read", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
