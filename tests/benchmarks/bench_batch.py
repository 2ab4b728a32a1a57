"""Batch refinement: displaced true road lines refined onto their tiles; accuracy, throughput, start-up.

    python -m tests.benchmarks.bench_batch [--quick]

On the SpaceNet tiles of ../shared/data/roads, every tile's true centre lines
are displaced as a misregistered layer would be (one shift of 4-8 px in a
random direction per tile, every distinct vertex jittered by up to 1 px, so
lines that met still meet), refined with ``linesnap refine``'s defaults, and
compared with the truth: the mean distance of each line to its true line
(median over lines) before and after.  Throughput on a local Dask cluster of 1
and 2 single-threaded worker processes; per-process start-up of one
``linesnap extract`` on the Vegas tile; and an estimate, from the measured
per-piece cost, of a 100,000-piece city on 16 workers.
"""

from __future__ import annotations

import argparse
import functools
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

ROADS = SHARED_DATA / "roads"
TILES = ("1196", "144", "1841", "308", "1887")
SEED = 20260514
CITY_PIECES, CITY_WORKERS = 100_000, 16


def displaced_layer(tile: str, folder: Path, rng) -> tuple[Path, Path, list]:
    """(image, displaced lines file, true lines in px) of one tile."""
    import pyogrio.raw

    from core.batch.layers import read_line_layer
    from core.batch.sources import list_sources
    from core.batch.wkb import encode_lines

    image = ROADS / f"shanghai_img{tile}_pan.tif"
    layer = read_line_layer(ROADS / f"shanghai_img{tile}_roads.geojson")
    source = list_sources([image])[0]
    from core.batch.frames import transform_xy

    truth = [[source.map_to_pixel(transform_xy(p, layer.crs, source.crs)) for p in layer.parts[k]]
             for k in layer.line_indices()]
    angle, size = rng.uniform(0, 2 * np.pi), rng.uniform(4.0, 8.0)
    shift = size * np.array([np.cos(angle), np.sin(angle)])
    jitter = {}

    def moved(xy):
        key = tuple(np.round(xy, 6))
        jitter.setdefault(key, rng.uniform(-1.0, 1.0, 2))
        return xy + shift + jitter[key]

    geometry = [encode_lines([transform_xy(source.pixel_to_map(np.array([moved(v) for v in part])), source.crs,
                                           layer.crs) for part in parts]) for parts in truth]
    path = folder / f"displaced_{tile}.gpkg"
    fields = {name: values[layer.line_indices()] for name, values in layer.fields.items()}
    pyogrio.raw.write(str(path), np.array(geometry, dtype=object), list(fields.values()), list(fields), crs=layer.crs,
                      geometry_type="MultiLineString", driver="GPKG")
    return image, path, truth


def line_distances(path: Path, image: Path, truth: list) -> tuple[list, list]:
    """Per line: mean distance (px) to its true line, and its status (from a refined file) or None."""
    import pyogrio.raw

    from core.batch.frames import transform_xy
    from core.batch.metrics import _distance_to_polyline, resample
    from core.batch.sources import list_sources
    from core.batch.wkb import decode_lines

    source = list_sources([image])[0]
    meta, _, geometry, fields = pyogrio.raw.read(str(path))
    statuses = dict(zip(meta["fields"], fields)).get("status")
    out = []
    for k, (wkb, true_parts) in enumerate(zip(geometry, truth)):
        parts = [source.map_to_pixel(transform_xy(p, meta["crs"], source.crs)) for p in decode_lines(wkb)]
        points = np.concatenate([resample(p) for p in parts])
        out.append(float(np.min([_distance_to_polyline(points, t) for t in true_parts], axis=0).mean()))
    return out, (list(statuses) if statuses is not None else [None] * len(out))


def refine_all(jobs, folder: Path, workers: int, tag: str):
    """Refine every tile's layer on one local cluster of ``workers`` processes; (reports, outputs)."""
    from core.batch import refine_layer
    from core.batch.runner import dask_client

    reports, outputs = [], []
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.run(_warm_up)  # compile or load the kernels before timing
        factory = functools.partial(dask_client, cluster.scheduler_address)
        for image, lines, _ in jobs:
            out = folder / f"{tag}_{lines.stem}.gpkg"
            reports.append(refine_layer(lines, [image], out, client_factory=factory))
            outputs.append(out)
    return reports, outputs


def _warm_up():
    import numpy as np

    import core

    image = np.zeros((80, 120), np.float32)
    image[35:45] = 1.0
    core.extract(image, (10, 40), (110, 41), backend="cpu")


def startup_s(repeat: int = 5) -> list[float]:
    """Wall seconds of ``linesnap extract`` on the Vegas tile, one fresh process each (after one warm-up)."""
    vegas = SHARED_DATA / "vegas_pan_0.3m.tif"
    command = [sys.executable, "-m", "app.cli", "extract", str(vegas), "--start", "1016,723", "--end", "1266,723",
               "-o", os.devnull]
    times = []
    for k in range(repeat + 1):
        began = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, cwd=Path(__file__).resolve().parents[2])
        if k:
            times.append(time.perf_counter() - began)
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two tiles")
    args = parser.parse_args(argv)
    tiles = TILES[:2] if args.quick else TILES
    rng = np.random.default_rng(SEED)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        jobs = [displaced_layer(tile, folder, rng) for tile in tiles]
        runs = {w: refine_all(jobs, folder, w, f"w{w}") for w in (1, 2)}
        rows, before_all, after_all, statuses_all = [], [], [], []
        for tile, (image, lines, truth), report, out in zip(tiles, jobs, runs[2][0], runs[2][1]):
            before, _ = line_distances(lines, image, truth)
            after, statuses = line_distances(out, image, truth)
            kept = [k for k, s in enumerate(statuses) if s in ("refined", "partial")]
            b, a = [before[k] for k in kept], [after[k] for k in kept]
            before_all += b
            after_all += a
            statuses_all += statuses
            rows.append([f"shanghai_{tile}", len(truth), len(kept), report.pieces, f"{statistics.median(b):.2f}",
                         f"{statistics.median(a):.2f}", f"{statistics.median(a) / statistics.median(b):.2f}"])
        b, a = statistics.median(before_all), statistics.median(after_all)
        rows.append(["all", len(statuses_all), len(before_all), sum(r.pieces for r in runs[2][0]), f"{b:.2f}",
                     f"{a:.2f}", f"{a / b:.2f}"])
    speed = []
    for w, (reports, _) in runs.items():
        pieces, seconds = sum(r.pieces for r in reports), sum(r.compute_s for r in reports)
        speed.append([w, pieces, f"{seconds:.1f}", f"{pieces / seconds:.1f}", f"{pieces / seconds / w:.1f}"])
    per_piece_s = sum(r.compute_s for r in runs[2][0]) * 2 / sum(r.pieces for r in runs[2][0])
    starts = startup_s()
    city_min = CITY_PIECES * per_piece_s / CITY_WORKERS / 60
    counts = {s: statuses_all.count(s) for s in sorted(set(map(str, statuses_all)))}
    text = (
        "## Batch refinement (`python -m tests.benchmarks.bench_batch`)\n\n"
        f"{machine_description()} The machine was shared with other work (1-minute load average {load:.1f} "
        "at the start), so the rates are lower bounds.\n\n"
        f"Tiles {', '.join(tiles)} of ../shared/data/roads; per tile one shift of 4-8 px in a random direction and "
        f"every distinct vertex jittered by up to 1 px (seed {SEED}); `refine_layer` at the defaults "
        "(ExtractionSettings(), pieces of at most 100 px), on a local Dask cluster of single-threaded worker "
        "processes (kernels loaded before timing). Distance: mean distance (px) of a line's points, every pixel, to "
        "its true line; medians over the lines refined (status refined or partial). Feature statuses: "
        f"{counts}. Targets: after <= 0.6 x before and <= 2 px; >= 20 pieces/s per core.\n\n"
        + markdown_table(["tile", "lines", "refined", "pieces", "before median px", "after median px", "after/before"],
                         rows)
        + "\n\n"
        + markdown_table(["workers", "pieces", "compute s", "pieces/s", "pieces/s per worker"], speed)
        + f"\n\nStart-up: one `linesnap extract` on the Vegas tile (default settings, 250 px, a fresh process): "
        f"median {statistics.median(starts):.2f} s wall over {len(starts)} runs (min {min(starts):.2f}, "
        f"max {max(starts):.2f}); target <= 1.0 s.\n\n"
        f"City estimate: {per_piece_s * 1e3:.0f} ms of one worker per piece (2-worker run), so "
        f"{CITY_PIECES:,} pieces on {CITY_WORKERS} such workers take about {city_min:.1f} min of extraction, plus the "
        "cluster's start and the reading and writing of the layer (not measured at that size).\n"
    )
    print(text)
    write_section("batch", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
