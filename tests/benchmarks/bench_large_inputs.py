"""What users can make large: a raster without overviews, a line of 10^5 vertices, 10^5 features.

    python -m tests.benchmarks.bench_large_inputs [--quick]

Each row is the public call or the event a user makes, timed in this run, with
what it replaced measured beside it where that still runs:

- a 20000 x 20000 RGB GeoTIFF (256 px tiles, deflate, no overviews; made once
  in the temp folder, about 0.5 GB): ``Raster.read_sample`` (the display's
  stretch sample) against the decimated read of the whole raster it replaced;
  ``core.io.overviews.build_overviews``, and how long it takes to stop when
  cancelled at 10, 40 and 70 % of its time (from the wanted cancel: the thread
  that cancels wakes late while GDAL holds the GIL); the viewer's fit view (1400 x 900)
  filled, every visible tile read and drawn, without and with the overviews;
- a 100,000-vertex track over 20000 px (a reference layer, offscreen viewer
  1200 x 800): every tile of the view drawn at 1:4 and 1:20, by runs
  (``app.map.line_chunks``) and, as before them, the whole line into each tile;
  the repaint with the track selected as a feature;
- 10,000 and 100,000 short features (``app.model.tool.ExtractionTool``, no
  window): a click (median of 40, a request out), finish, undo; the memory an
  edit keeps for undo (tracemalloc over 200 renames);
- the Features table with those features (offscreen window on the sample
  scene): the first sort by length (lengths measured) and a sort by name.

``--quick``: a 8000 x 8000 raster, 20,000 vertices, 10,000 features only.
Writes the "large-inputs" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

from tests.benchmarks.report import machine_description, markdown_table, publish  # noqa: E402


def _seconds(fn, repeat: int = 1) -> float:
    """The least wall time of ``repeat`` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _big_raster(side: int) -> Path:
    """A side x side RGB tiled GeoTIFF without overviews in the temp folder (made once)."""
    import rasterio
    from rasterio.transform import from_origin
    from rasterio.windows import Window

    path = Path(tempfile.gettempdir()) / f"linesnap_bench_large_{side}.tif"
    if path.exists() and not Path(str(path) + ".ovr").exists():
        return path
    for stale in (path, Path(str(path) + ".ovr")):
        stale.unlink(missing_ok=True)
    rng = np.random.default_rng(0)
    profile = dict(driver="GTiff", width=side, height=side, count=3, dtype="uint8", crs="EPSG:32651",
                   transform=from_origin(300000, 3500000, 0.3, 0.3), compress="deflate", tiled=True,
                   blockxsize=256, blockysize=256)
    with rasterio.open(path, "w", **profile) as ds:
        for row in range(0, side, 1000):
            rows = min(1000, side - row)
            ramp = np.uint8(row * 200 // side)
            ds.write(rng.integers(0, 40, (3, rows, side), dtype=np.uint8) + ramp, window=Window(0, row, side, rows))
    return path


def _fit_view_filled(path) -> float:
    """Seconds from showing ``path`` at fit zoom in a 1400 x 900 viewer to every visible tile read and drawn."""
    from PySide6.QtWidgets import QApplication

    from app.map.tile_loader import TileLoader
    from app.map.viewer import RasterViewer
    from app.model.tiles import compute_stretch

    app = QApplication.instance() or QApplication([])
    viewer = RasterViewer()
    viewer.resize(1400, 900)
    viewer.show()
    loader = TileLoader(str(path))
    loaded = []
    loader.loaded.connect(lambda job, data: loaded.append(job))
    try:
        start = time.perf_counter()
        viewer.set_loader(loader)
        viewer.set_display((1, 2, 3), compute_stretch(np.arange(256.0)))
        idle = 0
        while idle < 3:  # tiles came, then three repaints in a row with nothing left to read
            viewer.repaint()
            app.processEvents()
            idle = idle + 1 if loaded and loader.pending() == 0 else 0
            time.sleep(0.002)
        return time.perf_counter() - start
    finally:
        loader.close()


def _cancel_stop_s(path: Path, delay_s: float) -> float:
    """Seconds from the moment a cancel is wanted, ``delay_s`` into a build of overviews, to the build's end."""
    import threading

    from core.cancel import Cancelled, CancelToken
    from core.io.overviews import build_overviews, overview_path

    token, ended = CancelToken(), []

    def build():
        try:
            build_overviews(path, cancel=token)
        except Cancelled:
            pass
        ended.append(time.perf_counter())

    thread = threading.Thread(target=build)
    wanted = time.perf_counter() + delay_s
    thread.start()
    time.sleep(delay_s)  # (this thread wakes late while another holds the GIL: the wanted time counts)
    token.cancel()
    thread.join()
    overview_path(path).unlink(missing_ok=True)  # (a build that ended before the cancel)
    return ended[0] - wanted


def _stop_text(stop_s: float) -> str:
    """A cancel's stop as the table gives it; a build that ended before the cancel was wanted (faster than the timed
    build whose share set the moment) stopped nothing, and is said so instead of as a negative time."""
    return f"{stop_s * 1e3:.0f} ms" if stop_s >= 0 else f"(ended {-stop_s:.1f} s before the cancel)"


def raster_rows(side: int) -> list[list[object]]:
    from core.io.overviews import build_overviews, overview_path
    from core.io.raster import open_raster

    path = _big_raster(side)
    rows = []
    with open_raster(path) as raster:
        sample = _seconds(lambda: raster.read_sample(512, bands=[1, 2, 3]), 3)
        whole = _seconds(lambda: raster.read_decimated(0, 0, side, side, 512, 512, bands=[1, 2, 3]))
    rows.append(["stretch sample (Raster.read_sample, 512 px)", f"{sample:.3f}", f"{whole:.2f} (decimated read)"])
    without = _fit_view_filled(path)
    try:
        built = _seconds(lambda: build_overviews(path))
        with_them = _fit_view_filled(path)
    finally:
        overview_path(path).unlink(missing_ok=True)
    rows.append(["build_overviews (GDAL, average)", f"{built:.1f}", ""])
    stops = [_cancel_stop_s(path, built * fraction) for fraction in (0.1, 0.4, 0.7)]
    rows.append(["build_overviews cancelled at 10 / 40 / 70 % of its time: stopped after",
                 " / ".join(map(_stop_text, stops)), ""])
    rows.append(["fit view of 1400 x 900 filled (tiles read and drawn), with the overviews", f"{with_them:.2f}",
                 f"{without:.2f} (without)"])
    return rows


def _track(n: int) -> np.ndarray:
    rng = np.random.default_rng(1)
    t = np.linspace(0.0, 1.0, n)
    return np.column_stack([10000 + 9000 * np.sin(6.3 * t) + np.cumsum(rng.normal(0, 2, n)),
                            10000 + 9000 * np.sin(11.1 * t + 1) + np.cumsum(rng.normal(0, 2, n))])


def line_rows(n: int) -> list[list[object]]:
    from PySide6.QtWidgets import QApplication

    from app.map import line_chunks
    from app.map.overlays import ToolOverlay
    from app.map.reference_overlay import ReferenceOverlay
    from app.map.viewer import RasterViewer
    from app.model import editing
    from app.model.reference import ReferenceLayer, ReferenceLayers
    from app.model.tool import ExtractionTool
    from app.model.viewmath import ViewTransform

    QApplication.instance() or QApplication([])
    track = _track(n)
    x, y = track[n // 3]

    def view(scale):
        return ViewTransform(scale, x - 600 / scale, y - 400 / scale)

    def fill(overlay_of, scale, by_runs=True) -> float:
        original = line_chunks.is_long
        line_chunks.is_long = original if by_runs else (lambda vertices: False)
        try:
            viewer = RasterViewer()
            viewer.resize(1200, 800)
            overlay = overlay_of()
            viewer.overlay_painters.append(overlay)
            viewer.set_transform(view(scale))
            start = time.perf_counter()
            for _ in range(2000):
                viewer.grab()
                if overlay.tiles.complete:
                    return time.perf_counter() - start
            raise RuntimeError("the tiles never completed")
        finally:
            line_chunks.is_long = original

    layers = ReferenceLayers()
    layers.add(ReferenceLayer("/track.gpkg", "track", (track,), "#ff00ff"))
    rows = []
    for scale in (0.25, 0.05):
        runs = fill(lambda: ReferenceOverlay(layers), scale)
        whole = fill(lambda: ReferenceOverlay(layers), scale, by_runs=False)
        rows.append([f"view filled at 1:{round(1 / scale)} (reference layer)", f"{runs:.2f}",
                     f"{whole:.2f} (whole line)"])
    tool = ExtractionTool(settings=None)
    features, outcomes = editing.imported_features(tool.state, [("track", track, {})], tool.new_ids(2))
    tool.add_built_features(features, outcomes)
    tool.select(features[0].id)
    viewer = RasterViewer()
    viewer.resize(1200, 800)
    overlay = ToolOverlay(tool)
    viewer.overlay_painters.append(overlay)
    for scale in (1.0, 0.05):
        viewer.set_transform(view(scale))
        for _ in range(2000):
            viewer.grab()
            if overlay.tiles.complete:
                break
        repaint = _seconds(viewer.grab, 5)
        rows.append([f"repaint with the track selected, 1:{round(1 / scale)}", f"{repaint * 1e3:.0f} ms", ""])
    return rows


def _short_lines(n: int, extent: float, seed: int = 0) -> list[tuple]:
    rng = np.random.default_rng(seed)
    return [("", np.cumsum(rng.normal(0, 5, (6, 2)), axis=0) + rng.uniform(0, extent, 2), {}) for _ in range(n)]


def tool_rows(n: int) -> list[list[object]]:
    from app.model import editing
    from app.model.tool import ExtractionTool
    from core.extraction.settings import ExtractionSettings

    tool = ExtractionTool(settings=ExtractionSettings())
    features, outcomes = editing.imported_features(tool.state, _short_lines(n, 20000), tool.new_ids(2 * n))
    tool.add_built_features(features, outcomes)
    clicks = []
    for k in range(40):
        start = time.perf_counter()
        tool.click((100.0 + 37 * k, 200.0 + 11 * (k % 3)))
        clicks.append(time.perf_counter() - start)
    finish = _seconds(tool.finish)
    undo = _seconds(tool.undo)
    tool.redo()
    ids = [f.id for f in tool.features[:203]]
    tracemalloc.start()  # (after three traced edits: the structures each edit replaces, the features' tuples of
    for feature_id in ids[200:]:  # the state and of its last edit and their ids' lookup, are then traced before
        tool.rename(feature_id, "renamed")  # and after alike, and what the 200 edits keep is theirs)
    ids = ids[:200]
    before = tracemalloc.get_traced_memory()[0]
    for k, feature_id in enumerate(ids):
        tool.rename(feature_id, f"renamed {k}")
    kept = (tracemalloc.get_traced_memory()[0] - before) / len(ids)
    tracemalloc.stop()
    return [[f"{n:,} features: a click", f"{statistics.median(clicks) * 1e3:.2f} ms", ""],
            [f"{n:,} features: finish / undo", f"{finish * 1e3:.0f} / {undo * 1e3:.0f} ms", ""],
            [f"{n:,} features: memory an edit keeps for undo", f"{kept / 1024:.1f} KiB", ""]]


def table_rows(n: int) -> list[list[object]]:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow
    from app.model import editing
    from app.model.document import sample_scene_path

    app = QApplication.instance() or QApplication([])
    window = MainWindow(config_dir=tempfile.mkdtemp())
    window.resize(1400, 900)
    window.show()
    window.open_image(str(sample_scene_path()))
    tool = window.tool
    features, outcomes = editing.imported_features(tool.state, _short_lines(n, 1500), tool.new_ids(2 * n))
    tool.add_built_features(features, outcomes)
    for _ in range(20):
        app.processEvents()
    table = window.features_panel.table

    def sort(column, order):
        table.sortByColumn(column, order)
        app.processEvents()

    by_length = _seconds(lambda: sort(1, Qt.SortOrder.AscendingOrder))
    by_name = _seconds(lambda: sort(0, Qt.SortOrder.DescendingOrder), 3)
    window.shutdown()  # (not close(): it would ask about the unsaved lines)
    window.hide()
    return [[f"{n:,} features: first sort by length (lengths measured)", f"{by_length:.2f}", ""],
            [f"{n:,} features: sort by name", f"{by_name * 1e3:.0f} ms", ""]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller raster, line and layers")
    args = parser.parse_args()
    side, vertices, counts = (8000, 20_000, (10_000,)) if args.quick else (20000, 100_000, (10_000, 100_000))
    rows = raster_rows(side)
    rows += line_rows(vertices)
    for n in counts:
        rows += tool_rows(n)
    for n in counts:
        rows += table_rows(n)
    header = ["what", "now (s unless said)", "what it replaced, same run (s)"]
    publish("large-inputs", [
        "## Large inputs (`python -m tests.benchmarks.bench_large_inputs`)",
        machine_description(),
        f"A {side:,} x {side:,} RGB GeoTIFF of 256 px tiles without overviews; a {vertices:,}-vertex track over "
        "20,000 px in a 1200 x 800 viewer; layers of short features on the sample scene (1400 x 900 window).  "
        "Least of a few calls unless said; medians for clicks.",
        markdown_table(header, rows),
    ])


if __name__ == "__main__":
    main()
