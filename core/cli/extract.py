"""``linesnap extract``: one extraction from the command line, as RFC 7946 GeoJSON.

    linesnap extract IMAGE --start X,Y --end X,Y [options] [-o OUT]
    linesnap extract --demo [options] [-o OUT]

The FeatureCollection goes to stdout, or atomically to ``OUT``.  Its single
feature carries ``score``, ``pixel_coordinates``, the ``settings`` used,
``backend``, ``method`` and ``timings_ms``; coordinates are WGS84 lon/lat for
georeferenced rasters and pixel ``(x, y)`` otherwise (the collection's
``"linesnap:coordinates"`` member says which).  Options left out take the
defaults of :class:`core.extraction.ExtractionSettings`.  Any bad input ends
with exit status 1 (2 for a malformed command line), one line
``linesnap: error: ...`` on stderr, and nothing written.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from importlib.resources import files
from pathlib import Path

from core import validation
from core.extraction import ExtractionSettings, extract
from core.extraction.guides import DEFAULT_SNAP_HALF_WIDTH_PX
from core.extraction.settings import AUTO, EXTRACTION_MODES
from core.io.geojson import feature_from_result
from core.io.raster import open_raster

__all__ = ["build_parser", "demo_inputs", "extract_main"]

PROG = "linesnap extract"
_NEGATIVE_POINT = re.compile(r"^-[\d.]")

#: Options that map one to one onto ExtractionSettings fields (option dest = field name).
SETTING_OPTIONS = (
    "nodes", "points", "half_width_px", "max_turn_deg", "sigma_px", "mode", "ribbon_width_px",
    "polarity", "ribbon_combine", "snap_endpoints", "snap_half_width_px", "solver", "backend", "band",
)


class _CommandLineError(Exception):
    """A malformed command line (argparse's complaint, kept to one line)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _CommandLineError(message)


def extract_main(argv: list[str] | None = None) -> int:
    """Run ``linesnap extract`` with the arguments after ``extract``; returns the exit status.

    Parameters
    ----------
    argv : list of str, optional
        Default ``sys.argv[2:]``.

    Returns
    -------
    int
        0 on success, 1 for bad input or a failed extraction, 2 for a
        malformed command line.
    """
    argv = list(sys.argv[2:] if argv is None else argv)
    try:
        args = build_parser().parse_args(_attach_point_values(argv))
        return _run(args)
    except SystemExit as done:  # -h / --help
        return done.code if isinstance(done.code, int) else 0
    except _CommandLineError as err:
        return _fail(f"{err} (see '{PROG} -h')", status=2)
    except (ValueError, TypeError, OSError, RuntimeError, MemoryError) as err:
        return _fail(_message(err))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``linesnap extract`` (defaults left to ExtractionSettings)."""
    parser = _Parser(
        prog=PROG,
        description="Find the best angle-constrained polyline between two points of an image and "
        "print it as GeoJSON (lon/lat for georeferenced rasters, pixel x, y otherwise).",
        epilog="Coordinates X,Y are pixels: x = column, y = row, (0, 0) the top-left corner of the image. "
        "Options left out take the defaults of core.extraction.ExtractionSettings.",
    )
    parser.add_argument("image", nargs="?", metavar="IMAGE", help="GeoTIFF, PNG or JPEG")
    parser.add_argument("--start", type=_point, metavar="X,Y", help="first clicked point (pixels)")
    parser.add_argument("--end", type=_point, metavar="X,Y", help="second clicked point (pixels)")
    parser.add_argument("--pairs", type=Path, metavar="FILE", help="many extractions: a CSV (start_x, start_y, end_x, "
                        "end_y) or a vector file of two-point lines; one feature per pair")
    parser.add_argument("--crs", default="pixel", metavar="pixel|image|CRS",
                        help="what --start, --end and a CSV's coordinates are: pixel (default), image (the raster's "
                        "CRS) or a CRS such as EPSG:4326 (lon/lat)")
    parser.add_argument("--demo", action="store_true",
                        help="run on the bundled sample scene, between two points of one of its roads")
    _add_settings_options(parser.add_argument_group("extraction settings"))
    output = parser.add_argument_group("output")
    output.add_argument("-o", "--output", type=Path, metavar="OUT",
                        help="write here instead of stdout; the extension picks the format: .geojson or .json "
                             "(WGS84), .gpkg, .shp, .fgb (the image's CRS)")
    output.add_argument("--name", default="", help="name of the feature")
    return parser


def _add_settings_options(group):
    """One option per ExtractionSettings field; the help shows the field's default."""
    defaults = ExtractionSettings().to_dict()
    shown = {"band": "every band in auto mode, their intensity in the ribbon and edge modes",
             "snap_half_width_px": f"min(half-width, {DEFAULT_SNAP_HALF_WIDTH_PX:g})"}

    def option(flag, dest, text, **kwargs):
        default = shown.get(dest, defaults[dest]) if defaults[dest] is None else defaults[dest]
        group.add_argument(flag, dest=dest, help=f"{text} (default: {default})", **kwargs)
        if "_" in dest:  # (one-word fields read as the flag's word already)
            _FLAG_OF[dest] = flag

    option("--nodes", "nodes", "split points of the span, endpoints included (>= 3)", type=int, metavar="N")
    option("--points", "points", "candidate points per guide (>= 2)", type=int, metavar="D")
    option("--half-width", "half_width_px", "guide half-width in pixels (> 0)", type=_number, metavar="W")
    option("--max-turn", "max_turn_deg", "largest turning angle at a guide point, degrees in (0, 180] (ribbon and "
           "edge modes; auto mode sets its own)",
           type=_number, metavar="DEG")
    option("--sigma", "sigma_px", "Gaussian smoothing before the gradient, pixels (> 0; ribbon and edge modes)",
           type=_number, metavar="S")
    option("--mode", "mode", "auto: the object's course from its appearance, straight or bent; ribbon: the "
           "centre line between two edges; edge: one strong edge", choices=EXTRACTION_MODES)
    option("--ribbon-width", "ribbon_width_px", "full width of the ribbon (road) in pixels for the ribbon mode, "
           "or auto (estimated per extraction)", type=_number_or_auto, metavar="R")
    option("--polarity", "polarity", "ribbon brighter or darker than its surroundings, any, or auto (estimated; "
           "ribbon and edge modes: auto mode estimates it)",
           choices=("auto", "any", "bright", "dark"))
    option("--ribbon-combine", "ribbon_combine",
           "how a ribbon's two edges combine: their mean, or their geometric mean (needs both edges)",
           choices=("mean", "geometric"))
    option("--snap-endpoints", "snap_endpoints", "let the endpoints slide across the span onto the object",
           action=argparse.BooleanOptionalAction, default=None)
    option("--snap-half-width", "snap_half_width_px", "how far (pixels) the endpoints may slide",
           type=_number, metavar="W")
    option("--solver", "solver", "exact DP (all give the same optimum; in auto mode for a bent course, a straight "
           "one being the segment)", choices=("window", "mitm", "brute"))
    option("--backend", "backend", "auto uses an NVIDIA GPU when present", choices=("auto", "cpu", "gpu"))
    option("--band", "band", "1-based band to use", type=int, metavar="K")


def demo_inputs() -> tuple[Path, tuple[float, float], tuple[float, float], dict]:
    """The bundled sample scene, the demo's endpoints on one of its roads, and the demo's settings.

    Returns
    -------
    image : Path
        ``resources/sample_scene.tif``.
    start, end : (float, float)
        Pixel ``(x, y)`` points on the road's centre line (from the truth file).
    settings : dict
        ExtractionSettings fields for the demo (none: the defaults).
    """
    folder = Path(str(files("resources")))
    truth = json.loads((folder / "sample_scene.json").read_text(encoding="utf-8"))
    demo = truth["demo"]
    return folder / "sample_scene.tif", tuple(demo["start"]), tuple(demo["end"]), dict(demo["settings"])


def _run(args) -> int:
    image, start, end, settings = _inputs(args)
    settings = ExtractionSettings(**settings)
    if args.output is not None:
        _check_output(args.output, Path(image))
    with open_raster(image, band=settings.band) as raster:
        if args.pairs is not None:
            from core.cli.pairs import run_pairs

            return run_pairs(args, raster, settings)
        if args.crs != "pixel":
            from core.cli.pairs import to_pixels

            start, end = to_pixels([start, end], raster, args.crs)
        result = extract(raster, start, end, settings)
        name = args.name or ("demo" if args.demo else "")
        from core.cli.pairs import write_features

        write_features(args.output, [feature_from_result(result, name)], raster)
    if args.output is not None:
        how = f", coarse-to-fine x{result.coarse_factor}" if result.coarse_factor > 1 else ""
        print(f"linesnap: wrote {args.output}: {len(result.vertices_px)} vertices, score {result.score:.6g}, "
              f"{result.timings_ms['total']:.1f} ms ({result.backend}, {result.method}{how})", file=sys.stderr)
    return 0


def _inputs(args):
    """Image, endpoints and settings fields from the command line (and the demo's defaults)."""
    settings = {name: getattr(args, name) for name in SETTING_OPTIONS if getattr(args, name) is not None}
    image, start, end = args.image, args.start, args.end
    given = [flag for flag, value in (("--start", start), ("--end", end)) if value is not None]
    if args.pairs is not None and given:  # (in argparse's words for a conflict: the pairs would silently win)
        raise _CommandLineError(f"argument --pairs: not allowed with argument{'s' * (len(given) > 1)} "
                                f"{' and '.join(given)}")
    if args.demo:
        demo_image, demo_start, demo_end, demo_settings = demo_inputs()
        image, start, end = image or demo_image, start or demo_start, end or demo_end
        settings = {**demo_settings, **settings}
    needed = (("IMAGE", image),) if args.pairs is not None else (("IMAGE", image), ("--start", start), ("--end", end))
    missing = [label for label, value in needed if value is None]
    if missing:
        raise _CommandLineError(f"the following arguments are required: {', '.join(missing)} (or use --demo)")
    return image, start, end, settings


def _attach_point_values(argv):
    """``--start -3,5`` -> ``--start=-3,5``: argparse would take a leading minus for an option."""
    joined, k = [], 0
    while k < len(argv):
        if argv[k] in ("--start", "--end") and k + 1 < len(argv) and _NEGATIVE_POINT.match(argv[k + 1]):
            joined.append(f"{argv[k]}={argv[k + 1]}")
            k += 2
        else:
            joined.append(argv[k])
            k += 1
    return joined


def _check_output(path: Path, image: Path):
    """Refuse an output that can never be written, or that would replace the image, before the extraction runs."""
    if path.is_dir():
        raise ValueError(f"output {path} is a folder; give a file name such as {path / 'line.geojson'}")
    if not path.parent.is_dir():
        raise ValueError(f"output folder {path.parent} does not exist")
    if path.exists() and image.exists() and path.samefile(image):
        raise ValueError(f"output {path} is the input image, which the GeoJSON would replace; "
                         "give another file name")
    if path.suffix:  # an extension of no format written here (.kml, .csv) is refused, not filled with GeoJSON
        from core.batch.layers import driver_for

        driver_for(path)


def _point(text: str) -> tuple[float, float]:
    parts = text.split(",")
    try:
        x, y = (float(part) for part in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected X,Y (two numbers and a comma); got {text!r}") from None
    if not (math.isfinite(x) and math.isfinite(y)):
        raise argparse.ArgumentTypeError(f"expected finite coordinates; got {text!r}")
    return x, y


def _number_or_auto(text: str):
    return AUTO if text.strip().lower() == AUTO else _number(text)


def _number(text: str) -> float:
    """A finite number from the command line (argparse names the option in its message)."""
    try:
        return validation.real(float(text), "value")
    except ValueError:  # not a number, NaN or infinite
        raise argparse.ArgumentTypeError(f"expected a finite number; got {text!r}") from None


#: The command's flag of each settings field whose name is not a plain word (filled by the parser's build), for
#: the settings' errors, which name the Python field: "max_turn_deg must be ..." reads "--max-turn must be ...".
_FLAG_OF: dict[str, str] = {}


def _message(err: BaseException) -> str:
    """One line: the error's message (the settings' field names as the command's flags), or its class name
    when it has none."""
    text = " ".join(str(err).split())
    if _FLAG_OF:
        text = re.sub(r"\b(" + "|".join(map(re.escape, _FLAG_OF)) + r")\b", lambda m: _FLAG_OF[m.group(1)], text)
        text = text.replace(" (or None)", "")  # (the flag left out: its default)
    if isinstance(err, MemoryError):
        return f"out of memory: {text}" if text else "out of memory"
    return text or type(err).__name__


def _fail(message: str, status: int = 1) -> int:
    print(f"linesnap: error: {message}", file=sys.stderr)
    return status
