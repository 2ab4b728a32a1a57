"""The shift search of ``linesnap refine`` chosen leave-one-tile-out on bench_batch's displaced layers.

    python -m tests.benchmarks.bench_batch_align

Each candidate setting of core.batch.shift (the profile half-lengths compared)
refines every tile's displaced layer (bench_batch's, same seed); for each tile
the candidate with the best mean after/before ratio on the *other* tiles is
picked and its result on the held-out tile reported.  The last row is the
default that core.batch.refine.ALIGN ships, chosen on all tiles.
"""

from __future__ import annotations

import functools
import statistics
import tempfile
from pathlib import Path

import numpy as np

from tests.benchmarks import bench_batch as batch
from tests.benchmarks.report import machine_description, markdown_table, write_section

CANDIDATES = {"none": None, **{f"half {h}": {"half_px": [h], "search_px": 10} for h in (12, 16, 20)},
              "half 12+16+20": {"half_px": [12, 16, 20], "search_px": 10},
              "half 8+12+16+20": {"half_px": [8, 12, 16, 20], "search_px": 10}}


def tile_results(jobs, folder: Path, align) -> dict:
    """Per tile: (before, after) distances (px) of the lines refined with ``align``."""
    import core.batch.refine as refine
    from core.batch.runner import dask_client

    out = {}
    refine.ALIGN, default = align, refine.ALIGN
    try:
        for tile, (image, lines, truth) in zip(batch.TILES, jobs):
            path = folder / f"{len(out)}_{abs(hash(str(align)))}.gpkg"
            refine.refine_layer(lines, [image], path, align=align is not None,
                                client_factory=functools.partial(dask_client, workers=1, threads=True))
            before, _ = batch.line_distances(lines, image, truth)
            after, statuses = batch.line_distances(path, image, truth)
            kept = [k for k, s in enumerate(statuses) if s in ("refined", "partial")]
            out[tile] = ([before[k] for k in kept], [after[k] for k in kept])
    finally:
        refine.ALIGN = default
    return out


def ratio(pair) -> float:
    return statistics.median(pair[1]) / statistics.median(pair[0])


def main() -> int:
    from core.batch.refine import ALIGN

    rng = np.random.default_rng(batch.SEED)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        jobs = [batch.displaced_layer(tile, folder, rng) for tile in batch.TILES]
        results = {name: tile_results(jobs, folder, align) for name, align in CANDIDATES.items()}
    rows, held_before, held_after = [], [], []
    for tile in batch.TILES:
        others = [t for t in batch.TILES if t != tile]
        chosen = min(CANDIDATES, key=lambda n: np.mean([ratio(results[n][t]) for t in others]))
        before, after = results[chosen][tile]
        held_before += before
        held_after += after
        rows.append([f"shanghai_{tile}", chosen, f"{statistics.median(before):.2f}", f"{statistics.median(after):.2f}",
                     f"{ratio((before, after)):.2f}"])
    b, a = statistics.median(held_before), statistics.median(held_after)
    rows.append(["all (held out)", "", f"{b:.2f}", f"{a:.2f}", f"{a / b:.2f}"])
    grid = [[name] + [f"{ratio(results[name][t]):.2f}" for t in batch.TILES] for name in CANDIDATES]
    text = (
        "## Batch refinement: the shift search chosen leave-one-tile-out "
        "(`python -m tests.benchmarks.bench_batch_align`)"
        f"\n\n{machine_description()} Shared machine (only accuracy is reported here).\n\n"
        "bench_batch's displaced layers (same seed), refined on one local thread per candidate setting of "
        "core.batch.shift (profile half-lengths compared, px; `none`: no shift search, the extraction alone). "
        "After/before ratio of the median distance (px) to the true lines, per tile:\n\n"
        + markdown_table(["candidate"] + [f"shanghai_{t}" for t in batch.TILES], grid)
        + "\n\nEach tile with the candidate that has the best mean ratio on the other four tiles:\n\n"
        + markdown_table(["held-out tile", "chosen on the others", "before median px", "after median px",
                          "after/before"], rows)
        + f"\n\nShipped default (chosen on all five tiles): `{ALIGN}`.\n"
    )
    print(text)
    write_section("batch-align", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
