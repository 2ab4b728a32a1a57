"""``linesnap refine``: move every line of a layer onto imagery, on Dask.

    linesnap refine LINES IMAGE [IMAGE ...] -o OUT [--scheduler ADDRESS] [--workers N] [options]

Every feature of LINES is written to OUT with its properties and the
refinement's ``status``, ``confidence`` and displacement (``dmean_px``,
``dmax_px``, ``dmean_m``, ``dmax_m``).  Ctrl+C stops cleanly; the same command
again resumes.  Bad input ends with one line ``linesnap: error: ...`` and exit
status 1 (2 for a malformed command line, 130 when interrupted).
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from pathlib import Path

from core.batch.plan import MIN_PIECE_PX
from core.cli.extract import SETTING_OPTIONS, _add_settings_options, _CommandLineError, _fail, _message, _Parser

__all__ = ["build_parser", "refine_main"]

PROG = "linesnap refine"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``linesnap refine``."""
    parser = _Parser(prog=PROG, description="Move every line of a layer onto the imagery; write every feature back "
                     "with its properties and the refinement's status, confidence and displacement.")
    parser.add_argument("lines", metavar="LINES", help="vector file of LineStrings (any format and CRS GDAL reads)")
    parser.add_argument("images", nargs="+", metavar="IMAGE",
                        help="rasters, folders of rasters, VRT mosaics or http(s):// URLs of cloud-optimized GeoTIFFs")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="OUT",
                        help=".geojson (WGS84), .gpkg, .shp or .fgb (in the first image's CRS)")
    run = parser.add_argument_group("running")
    run.add_argument("--scheduler", metavar="ADDRESS", help="an existing dask.distributed scheduler, tcp://HOST:PORT "
                     "(default: a local cluster)")
    run.add_argument("--workers", type=_positive_int, metavar="N", help="local workers (default: one per core)")
    run.add_argument("--threads", action="store_true", help="local workers as threads of one process")
    run.add_argument("--max-piece", type=_max_piece, default=100.0, metavar="PX",
                     help="longest piece in pixels, more than 8 (the shortest a piece may be); longer straight "
                          "parts are cut (default: 100)")
    run.add_argument("--no-align", dest="align", action="store_false",
                     help="extract each piece between its own ends, without first moving each tile's pieces by "
                          "the shift that centres them on their roads")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_settings_options(parser.add_argument_group("extraction settings"))
    return parser


def refine_main(argv: list[str] | None = None) -> int:
    """Run ``linesnap refine`` with the arguments after ``refine``; returns the exit status."""
    argv = list(sys.argv[2:] if argv is None else argv)
    from core.batch.runner import Interrupted

    try:
        args = build_parser().parse_args(argv)
        return _run(args)
    except SystemExit as done:  # -h / --help
        return done.code if isinstance(done.code, int) else 0
    except _CommandLineError as err:
        return _fail(f"{err} (see '{PROG} -h')", status=2)
    except Interrupted as stop:
        print(f"\nlinesnap: interrupted: {stop.done} of {stop.total} tiles done and kept; "
              "run the same command again to resume", file=sys.stderr)
        return 130
    except (ValueError, TypeError, OSError, RuntimeError, MemoryError) as err:
        return _fail(_message(err))


def _max_piece(text: str) -> float:
    """``--max-piece``: a finite number of pixels above the shortest piece (core.batch.refine_layer's 8 px)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not MIN_PIECE_PX < value < math.inf:
        raise argparse.ArgumentTypeError(f"expected a number of pixels above {MIN_PIECE_PX:g} (the shortest a piece "
                                         f"may be); got {text!r}")
    return value


def _run(args) -> int:
    from core.batch.refine import refine_layer
    from core.batch.runner import dask_client
    from core.extraction import ExtractionSettings

    settings = ExtractionSettings(**{name: getattr(args, name) for name in SETTING_OPTIONS
                                     if getattr(args, name) is not None})
    factory = functools.partial(dask_client, args.scheduler, args.workers, args.threads)
    with _progress_bar(args.quiet) as progress:
        report = refine_layer(args.lines, args.images, args.output, settings, client_factory=factory,
                              progress=progress, max_piece_px=args.max_piece, align=args.align)
    counts = ", ".join(f"{count} {status}" for status, count in sorted(report.statuses.items()))
    rate = (report.pieces - report.pieces_resumed) / report.compute_s if report.compute_s > 0 else 0.0
    print(f"linesnap: wrote {args.output}: {report.features} features ({counts}); {report.pieces} pieces "
          f"({report.pieces_resumed} resumed), {rate:.1f} pieces/s, {report.total_s:.1f} s", file=sys.stderr)
    if report.assumed_image_crs:
        print(f"linesnap: warning: {args.lines} has no CRS: its coordinates were taken as in the image's CRS",
              file=sys.stderr)
    if report.dropped_z:
        print(f"linesnap: warning: {args.output}: the refined lines have no Z values ({args.lines} has them; the "
              "imagery gives none)", file=sys.stderr)
    if report.kept_fields:
        pairs = ", ".join(f"{old!r} as {new!r}" for old, new in report.kept_fields.items())
        print(f"linesnap: warning: {args.output}: kept the input's {pairs} (refine writes its results under "
              "those names)", file=sys.stderr)
    changes = report.renamed_fields.describe()
    if changes:  # (instead of GDAL's raw warnings)
        print(f"linesnap: warning: {args.output}: {changes}", file=sys.stderr)
    off = report.statuses.get("off_image", 0)
    if report.features and off == report.features:  # (written back unchanged, as every line is)
        print(f"linesnap: warning: none of the {off} lines lies on the imagery: check that {args.lines} and the "
              "images cover the same place (and the lines' CRS)", file=sys.stderr)
    return 0


class _progress_bar:
    """A rich progress bar on a terminal (nothing otherwise); called as ``progress(done, total)``."""

    def __init__(self, quiet: bool):
        self._bar = None
        if not quiet and sys.stderr.isatty():
            from rich.progress import Progress

            self._bar = Progress(transient=False)
            self._task = None

    def __enter__(self):
        if self._bar is None:
            return None
        self._bar.start()
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.stop()

    def __call__(self, done: int, total: int) -> None:
        if self._task is None:
            self._task = self._bar.add_task("refining pieces", total=total)
        self._bar.update(self._task, completed=done)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number; got {text!r}")
    return value
