"""The public click on the GPU: ``core.extract`` at the defaults, GPU against CPU on the same machine.

Run in two steps, because the GPU machine need not have rasterio or ../shared:

1. ``python -m tests.benchmarks.bench_extract_gpu --prepare CASES.npz`` where the
   imagery is (reads the tiles of ``bench_quality`` whose data is present and
   the bundled sample scene's main road; saves each image as an array with its
   click pairs);
2. ``python -m tests.benchmarks.bench_extract_gpu --cases CASES.npz [--out FILE]``
   on the GPU machine, then ``--apply FILE`` where BENCHMARKS.md lives.

Each case is a click pair of ``bench_quality.build_cases`` (the first
``--per-tile`` of each tile); the image is an in-memory array, so no file is
read.  Variants: the CPU (``backend="cpu"``), the GPU at the defaults
(``backend="gpu"``, what ``auto`` picks on a machine with a GPU), the GPU
without the padding of small problems to a few shapes
(``gpu.polyline.padding.MAX_POINTS = 0``), and the GPU as before 2026-12-05
(that, every launch list packed at its first run: ``gpu.launching.
PACK_AFTER_RUNS = 0``, and a device workspace of two problem shapes:
``gpu.polyline.dp.WORKSPACE_SHAPES = 2``).  Each variant
runs over a tile's cases in a block, so that the GPU meets each case's problem
shapes new, as on a user's click (they depend on the span and the corridor);
two rounds, the second in the reverse order.  Medians per tile after warm-up
of the whole call and of its stages; every variant's vertices are compared
with the CPU's.  Writes the "extract-gpu" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from tests.benchmarks.report import machine_description, markdown_table, save_device_report, write_section

TILES = ("shanghai_1196", "shanghai_144", "shanghai_1841", "shanghai_308", "shanghai_1887", "vegas", "sample_main")
STAGES = ("appearance", "scoring", "dp", "backtrack")
VARIANTS = ("cpu", "gpu", "gpu, not padded", "gpu, before")


def prepare_cases(path: Path) -> None:
    """Save every present tile's image (bands last) and click pairs into ``path``."""
    import rasterio

    from tests.benchmarks import bench_quality as bq

    arrays = {}
    for name in TILES:
        tile = bq.TILES[name]
        if not Path(tile.image).exists():
            print(f"{name}: absent, skipped", file=sys.stderr)
            continue
        with rasterio.open(tile.image) as dataset:
            image = np.moveaxis(dataset.read(), 0, -1)
        arrays[f"{name}.image"] = image[..., 0] if image.shape[-1] == 1 else image
        arrays[f"{name}.clicks"] = np.array([[case.start, case.end] for case in bq.build_cases(name)], float)
    np.savez_compressed(path, **arrays)


def _configure(variant: str, defaults: tuple) -> None:
    """Set the device workspace's shape count and the launch lists' packing as ``variant`` says."""
    from gpu import launching
    from gpu.polyline import dp, padding

    shapes, pack_after, max_points = defaults
    if variant == "gpu, before":
        shapes, pack_after, max_points = 2, 0, 0
    elif variant == "gpu, not padded":
        max_points = 0
    dp.WORKSPACE_SHAPES, launching.PACK_AFTER_RUNS, padding.MAX_POINTS = shapes, pack_after, max_points


def measure(image, clicks) -> dict:
    """Per variant: the click times (ms), the stage times, and how many GPU paths equal the CPU's.

    Each variant runs over all the cases in a block (so that every GPU variant meets each case's problem
    shapes new, as a user's click does); two rounds, the second in the reverse order of variants.
    """
    from core import extract
    from gpu import launching
    from gpu.polyline import dp, padding

    defaults = (dp.WORKSPACE_SHAPES, launching.PACK_AFTER_RUNS, padding.MAX_POINTS)
    times = {variant: [] for variant in VARIANTS}
    stages = {variant: {stage: [] for stage in STAGES} for variant in VARIANTS}
    vertices = {}
    for order in (VARIANTS, VARIANTS[::-1]):
        for variant in order:
            _configure(variant, defaults)
            backend = "cpu" if variant == "cpu" else "gpu"
            for start, end in clicks[-2:]:  # warm-up: compile, load, allocate
                extract(image, start, end, backend=backend)
            for index, (start, end) in enumerate(clicks):
                started = time.perf_counter()
                result = extract(image, start, end, backend=backend)
                times[variant].append((time.perf_counter() - started) * 1e3)
                for stage in STAGES:
                    stages[variant][stage].append(result.timings_ms.get(stage, 0.0))
                vertices.setdefault(index, {})[variant] = result.vertices_px
    _configure("gpu", defaults)
    same = sum(all(v.shape == found["cpu"].shape and np.array_equal(v, found["cpu"]) for v in found.values())
               for found in vertices.values())
    return {"times": times, "stages": stages, "same": same}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepare", type=Path, help="write the cases (arrays and clicks) into this .npz and stop")
    parser.add_argument("--cases", type=Path, help="the .npz that --prepare wrote")
    parser.add_argument("--per-tile", type=int, default=40, help="cases per tile (the first of build_cases)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--apply", type=Path, default=None, help="write this markdown file into BENCHMARKS.md")
    args = parser.parse_args(argv)
    if args.prepare:
        prepare_cases(args.prepare)
        return 0
    if args.apply:
        write_section("extract-gpu", args.apply.read_text(encoding="utf-8"))
        return 0
    if args.cases is None:
        parser.error("give --cases (from --prepare), --prepare or --apply")
    from core.engine import gpu_available

    if not gpu_available():
        print("no CUDA GPU", file=sys.stderr)
        return 1
    data = np.load(args.cases)
    rows, stage_rows = [], []
    for name in TILES:
        if f"{name}.image" not in data:
            continue
        clicks = data[f"{name}.clicks"][: args.per_tile]
        found = measure(data[f"{name}.image"], clicks)
        medians = {variant: statistics.median(found["times"][variant]) for variant in VARIANTS}
        rows.append([name, len(clicks), *(f"{medians[v]:.1f}" for v in VARIANTS),
                     f"{medians['gpu'] / medians['cpu']:.2f}", f"{found['same']} / {len(clicks)}"])
        for variant in VARIANTS:
            stage_rows.append([name, variant, *(f"{statistics.median(found['stages'][variant][s]):.2f}"
                                                for s in STAGES)])
        print(rows[-1], flush=True)
    text = "\n".join([
        "## The public click on the GPU (`python -m tests.benchmarks.bench_extract_gpu`)",
        "",
        machine_description(with_gpu=True),
        "",
        f"`core.extract(image, start, end, backend=...)` at the defaults on in-memory arrays of the quality tiles "
        f"(the first {args.per_tile} click pairs of each, `bench_quality.build_cases`); each variant over all the "
        "cases in a block, two rounds in opposite orders; medians after warm-up (ms). `auto` picks the GPU where "
        "there is one. `not padded`: small problems sent to the device at their own shape "
        "(`gpu.polyline.padding.MAX_POINTS = 0`); `before`: that, launch lists packed at their first run and a "
        "device workspace of 2 problem shapes, as before 2026-12-05. The last column: cases whose vertices are "
        "the same on every variant.",
        "",
        markdown_table(["tile", "cases", *(f"{v} (ms)" for v in VARIANTS), "gpu / cpu", "same vertices"], rows),
        "",
        "Stage medians (ms; `scoring` is the map scores, `dp` the DP with the GPU's uploads and launches):",
        "",
        markdown_table(["tile", "variant", *STAGES], stage_rows),
    ])
    print(text)
    save_device_report(text, args.out, "bench_extract_gpu.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
