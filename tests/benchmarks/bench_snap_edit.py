"""Snapping and line edits with many lines on the map (Qt-free model: what a hover or a drag costs).

    python -m tests.benchmarks.bench_snap_edit [--quick]

With N short random lines (10 links of ~5 px, as bench_gui_features) on a
1500 x 1500 image, in the feature index the map uses:

- snap: one :func:`app.model.snapping.find_snap` per cursor position (as on
  every hover), at random positions, with the 10 screen px tolerance at fit
  zoom (0.6: 17 raster px) and at 1:1 (10 px); median and 99th percentile;
- edit: one undoable vertex move of a random line
  (``tool.apply_edit(moved_vertex)``) followed by the index update the feature
  tiles get (``FeatureIndex.sync``); median and worst.

Writes the "snap-edit" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tests.benchmarks.bench_gui_features import random_lines_px
from tests.benchmarks.report import machine_description, markdown_table, write_section

SIZE_PX = 1500.0
TOLERANCES_PX = {"fit (17 px)": 10.0 / 0.6, "1:1 (10 px)": 10.0}


def _tool_with_lines(n: int):
    from app.model.feature_index import FeatureIndex
    from app.model.tool import ExtractionTool

    tool = ExtractionTool()
    tool.add_features([("", line, {}) for line in random_lines_px(n, SIZE_PX, seed=1)])
    index = FeatureIndex(tool)
    index.sync()
    return tool, index


def _snap_times_us(index, tolerance_px: float, queries: int) -> tuple[float, float, float]:
    from app.model.snapping import find_snap

    rng = np.random.default_rng(2)
    times, hits = [], 0
    for xy in rng.uniform(0, SIZE_PX, (queries, 2)).tolist():
        start = time.perf_counter()
        target = find_snap(index, xy, tolerance_px)
        times.append((time.perf_counter() - start) * 1e6)
        hits += target is not None
    return float(np.median(times)), float(np.percentile(times, 99)), hits / queries


def _edit_times_ms(tool, index, edits: int) -> tuple[float, float]:
    from app.model import line_edits

    rng = np.random.default_rng(3)
    times = []
    for _ in range(edits):
        feature = tool.features[int(rng.integers(len(tool.features)))]
        start = time.perf_counter()
        tool.apply_edit(line_edits.moved_vertex, feature.id, 1, tuple(rng.uniform(0, SIZE_PX, 2)))
        index.sync()
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times)), float(np.max(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer lines and repeats")
    args = parser.parse_args()
    counts = [1_000, 10_000] if args.quick else [1_000, 10_000, 50_000]
    queries, edits = (300, 20) if args.quick else (2000, 50)
    rows = []
    for n in counts:
        tool, index = _tool_with_lines(n)
        for label, tolerance in TOLERANCES_PX.items():
            median_us, p99_us, hit_rate = _snap_times_us(index, tolerance, queries)
            rows.append([f"{n:,}", f"snap at {label}", f"{median_us:.0f} µs", f"{p99_us:.0f} µs",
                         f"{100 * hit_rate:.0f} % of cursors snap"])
        median_ms, worst_ms = _edit_times_ms(tool, index, edits)
        rows.append([f"{n:,}", "move a vertex + index update", f"{median_ms:.2f} ms", f"{worst_ms:.2f} ms (worst)",
                     ""])
    table = markdown_table(["lines", "operation", "median", "p99 / worst", "note"], rows)
    text = "\n\n".join([
        "### Snapping and line edits (Qt-free model)",
        machine_description() + " The machine was shared with other work while it ran.",
        f"{queries} random cursor positions per row, {edits} vertex moves per line count.",
        table])
    print(text)
    write_section("snap-edit", text)


if __name__ == "__main__":
    main()
