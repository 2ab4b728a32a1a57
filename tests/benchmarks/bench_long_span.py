"""A long span on the command line: corner to corner of a 20000 x 20000 GeoTIFF, coarse-to-fine.

Run: ``python -m tests.benchmarks.bench_long_span [--cache-dir DIR]``

One ``linesnap extract`` process per raster under ``/usr/bin/time -v``: from
pixel (0.5, 0.5) to (19999.5, 19999.5), default settings, CPU.  The rasters:
the repeated Vegas tile of bench_extract_cpu (one uint16 band, no overviews:
the reduced read decodes every block) and, when the cache folder holds it, the
three-band sample scene with overviews.  Reports the wall time, the peak
resident memory, the reduction and the pieces; writes the "long-span" section
of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.benchmarks.bench_extract_cpu import make_big_geotiff
from tests.benchmarks.report import machine_description, markdown_table, write_section

SIZE = 20000
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def run_once(raster: Path) -> list:
    """``[raster, wall s, peak RSS MiB, factor, pieces, stage ms]`` of one corner-to-corner CLI run."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "line.geojson"
        command = ["/usr/bin/time", "-v", sys.executable, "-m", "app.cli", "extract", str(raster),
                   "--start", "0.5,0.5", "--end", f"{SIZE - 0.5},{SIZE - 0.5}", "--backend", "cpu", "-o", str(out)]
        done = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, check=True)
        properties = json.loads(out.read_text())["features"][0]["properties"]
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", done.stderr).groups()
    seconds = int(wall[0] or 0) * 3600 + int(wall[1]) * 60 + float(wall[2])
    rss_mib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1)) / 1024
    c2f = properties.get("coarse_to_fine", {"factor": 1, "pieces": 1})
    timings = properties["timings_ms"]
    stages = ", ".join(f"{key} {timings[key] / 1e3:.1f}" for key in ("read", "coarse", "refine") if key in timings)
    return [raster.name, f"{seconds:.1f}", f"{rss_mib:.0f}", c2f["factor"], c2f["pieces"], stages]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/linesnap-bench"))
    args = parser.parse_args(argv)
    rasters = [make_big_geotiff(args.cache_dir / f"vegas_tiled_{SIZE}.tif", SIZE)]
    with_overviews = args.cache_dir / f"sample_tiled_{SIZE}_overviews.tif"
    if with_overviews.exists():
        rasters.append(with_overviews)
    rows = [run_once(raster) for raster in rasters]
    table = markdown_table(["raster", "wall s", "peak RSS MiB", "reduction", "pieces", "stages (s)"], rows)
    print(table)
    write_section("long-span", "## Long spans coarse-to-fine (`python -m tests.benchmarks.bench_long_span`)\n\n"
                  f"{machine_description()}; one run each (the machine was shared with other work).  "
                  "`linesnap extract` corner to corner of a 20000 x 20000 GeoTIFF at the default settings "
                  "on the CPU, under `/usr/bin/time -v` (process start and imports included).\n\n" + table)


if __name__ == "__main__":
    main()
