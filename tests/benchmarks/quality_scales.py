"""Extraction quality on coarser pixels: the SpaceNet tiles averaged 2x and 4x, and the appearance
model's constants, the gate's turn paths and the centring's width check (APPEARANCE_GRID, TURN_GRID,
SHARP_TURN_GRID, CENTRING_GRID) chosen leave-one-tile-out at two pixel sizes.

The constants of core.extraction.adaptive and .appearance are in pixels.  A
tile averaged ``f`` x (rasterio's average resampling: 0.6 m and 1.2 m pixels
from the 0.3 m tiles) gets cases placed as on the tile itself with every
length divided by ``f`` (clicks 200 / f px apart, a pair every 70 / f px,
clicks moved up to 6 / f px), so each case is the same piece of road seen
through coarser pixels, as an analyst working on 0.6 m imagery would click it.
Errors on such a tile are in its own pixels.

Used by bench_quality (its sections on coarser pixels) and by
tests/core/extraction/test_accuracy_tiles.py.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tests.benchmarks import bench_quality as bq

#: The coarser pixel sizes reported (factors of the tiles' 0.3 m).
FACTORS = (2, 4)
#: The pixel sizes the appearance constants are chosen on.
LOTO_FACTORS = (1, 2)
#: The candidates: every learning reach with every pair of smoothing scales (core.extraction.appearance).
APPEARANCE_GRID = {"SAMPLE_REACH_PX": (3.0, 4.5, 6.0, 12.0),
                   ("FEATURE_SIGMA_PX", "TEXTURE_SIGMA_PX"): ((0.75, 1.5), (1.5, 3.0))}
#: The gate's turn path (core.extraction.adaptive): the angle at the clicks, the gain and the chord's support...
TURN_GRID = {"TURN_DEG": (40.0, 50.0, 60.0), "TURN_GAIN": (0.2, 0.25), "TURN_SUPPORT": (0.5, 0.6)}
#: ... and the gate without it.
TURN_OFF = {"TURN_SUPPORT": -1.0}
#: The gate's sharp-turn path (core.extraction.adaptive): the angle at the clicks and the chord's support...
SHARP_TURN_GRID = {"SHARP_TURN_DEG": (50.0, 60.0, 70.0), "SHARP_TURN_SUPPORT": (0.6, 0.7)}
#: ... and the gate without it.
SHARP_TURN_OFF = {"SHARP_TURN_SUPPORT": -1.0}
#: The centring's check of the edge pair's width against the appearance's own width (core.extraction.adaptive)...
CENTRING_GRID = {"CENTRING_WIDTH_RATIO": (2.0, 2.5, 3.0)}
#: ... and the centring without it.
CENTRING_OFF = {"CENTRING_WIDTH_RATIO": float("inf")}
#: What bench_quality chooses leave-one-tile-out at LOTO_FACTORS: (module of core.extraction, grid, candidates
#: besides the grid's points).
LOTO_GRIDS = (("appearance", APPEARANCE_GRID, ()), ("adaptive", TURN_GRID, (TURN_OFF,)),
              ("adaptive", SHARP_TURN_GRID, (SHARP_TURN_OFF,)), ("adaptive", CENTRING_GRID, (CENTRING_OFF,)))


def coarser_tile(name: str, factor: int, folder) -> str:
    """Register the tile ``name`` averaged ``factor`` x in ``bq.TILES`` (its image written under ``folder``).

    Returns the new tile's name, ``"<name>@<pixel size>m"``.
    """
    base = bq.TILES[name]
    new = f"{name}@{bq.PIXEL_M * factor:g}m"
    if new in bq.TILES and bq.TILES[new].available:
        return new
    path = Path(folder) / f"{name}_x{factor}.tif"
    if not path.exists():
        _average(base.image, factor, path)
    bq.TILES[new] = dataclasses.replace(base, name=new, image=path, span_px=base.span_px / factor,
                                        step_px=base.step_px / factor,
                                        max_offset_px=base.max_offset_px / factor, factor=factor, issue=None)
    return new


def _average(source: Path, factor: int, path: Path) -> None:
    import rasterio
    from rasterio.enums import Resampling

    path.parent.mkdir(parents=True, exist_ok=True)
    with rasterio.open(source) as src:
        shape = (src.count, src.height // factor, src.width // factor)
        data = src.read(out_shape=shape, resampling=Resampling.average)
        profile = {"driver": "GTiff", "count": src.count, "dtype": data.dtype, "crs": src.crs,
                   "width": shape[2], "height": shape[1], "nodata": src.nodata,
                   "transform": src.transform * src.transform.scale(src.width / shape[2], src.height / shape[1])}
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data)


def _names(key) -> tuple:
    return key if isinstance(key, tuple) else (key,)


def grid_constants(grid) -> list:
    """The names of the constants a grid of LOTO_GRIDS varies."""
    return [name for key in grid for name in _names(key)]


def grid_candidates(grid, extra=()):
    """One bench_quality.AdaptiveVariant per point of ``grid`` (a key naming several constants takes tuples of
    their values), then one per dict of constants in ``extra``."""
    out = []
    for values in itertools.product(*grid.values()):
        constants = {}
        for key, value in zip(grid, values):
            constants.update(zip(_names(key), value if isinstance(key, tuple) else (value,)))
        out.append(bq.AdaptiveVariant(**constants))
    return out + [bq.AdaptiveVariant(**constants) for constants in extra]


def criterion(summaries) -> float:
    """bench_quality.criterion with every median in 0.3 m pixels: lower is better."""
    summaries = list(summaries)
    medians = [s.median_px * bq.TILES[s.tile].factor for s in summaries]
    return float(np.mean(medians) + bq.WORSE_PENALTY_PX * np.mean([s.worse_pct for s in summaries]))


def ranking(records, tiles) -> tuple:
    """The key candidates are chosen by, lowest first, on their ``records`` on ``tiles``: the criterion, its
    ties broken by the mean error in 0.3 m pixels (a change confined to bends moves no median, since most
    cases are straight, but it moves the mean)."""
    tiles = set(tiles)
    mine = [r for r in records if r.case.tile in tiles]
    mean = float(np.mean([r.error_px * bq.TILES[r.case.tile].factor for r in mine]))
    return round(criterion(bq.summarise(mine)), 9), mean


@dataclass(frozen=True)
class ScaledLotoRow:
    held_out: str
    chosen: str
    in_sample_criterion: float
    held_out_summaries: tuple  # one TileSummary per pixel size


def leave_one_tile_out(candidates, tiles, folder, factors=LOTO_FACTORS, records=None, progress=False):
    """Choose among ``candidates`` on all tiles but one, each at every pixel size of ``factors``; report on
    that one, at each pixel size; for each tile.

    Returns ``(rows, records)`` like bench_quality.leave_one_tile_out.
    """
    names = {t: [t if f == 1 else coarser_tile(t, f, folder) for f in factors] for t in tiles}
    records = bq.complete_records(candidates, [n for t in tiles for n in names[t]], records, progress)
    summaries = {m.name: {s.tile: s for s in bq.summarise(records[m.name])} for m in candidates}
    rows = []
    for held in tiles:
        others = [n for t in tiles if t != held for n in names[t]]
        best = min(candidates, key=lambda m: ranking(records[m.name], others)).name
        value = criterion(summaries[best][n] for n in others)
        rows.append(ScaledLotoRow(held, best, value, tuple(summaries[best][n] for n in names[held])))
    return rows, records


def format_loto(rows, factors=LOTO_FACTORS) -> str:
    """A markdown table of ScaledLotoRow rows."""
    header = ["held-out tile", "chosen on the other tiles", "in-sample criterion"]
    for f in factors:
        size = f"{bq.PIXEL_M * f:g} m"
        header += [f"held-out median px at {size} (straight)", f"worse % at {size}", f"better % at {size}"]
    out = []
    for r in rows:
        row = [r.held_out, r.chosen, bq._f(r.in_sample_criterion)]
        for s in r.held_out_summaries:
            row += [f"{bq._f(s.median_px)} ({bq._f(s.straight_median_px)})", f"{s.worse_pct:.0f}",
                    f"{s.better_pct:.0f}"]
        out.append(row)
    return bq.markdown_table(header, out)
