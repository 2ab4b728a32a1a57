"""The unit of batch work: the pieces of one raster tile, extracted with the raster opened once.

Tasks and results are plain JSON-able dicts, so that a Dask worker on another
machine can run them and a result can be kept on disk for a resumed run.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PIECE_STATUSES", "refine_tile"]

#: What became of a piece: extracted, or why not.
PIECE_STATUSES = ("refined", "no_data", "infeasible", "failed")


def refine_tile(task: dict) -> list[dict]:
    """Extract the pieces of one tile.

    Parameters
    ----------
    task : dict
        ``source`` (the path GDAL opens), ``settings`` (ExtractionSettings
        fields) and ``pieces``: rows ``[piece, start_x, start_y, end_x, end_y]``
        in the source's pixels.

    Returns
    -------
    list of dict
        Per piece: ``piece``, ``status`` (one of PIECE_STATUSES), ``vertices``
        (source pixels; refined pieces only), ``confidence`` and ``message``.
    """
    import rasterio

    from core.batch.sources import remote_options
    from core.extraction import ExtractionSettings
    from core.extraction.options import without_turn_paths
    from core.io.raster import open_raster

    settings = ExtractionSettings(**task["settings"])
    with rasterio.Env(**remote_options(task["source"])), open_raster(task["source"], band=settings.band) as raster:
        rows = task["pieces"]
        if task.get("align") is not None:
            rows = _aligned(raster, rows, task["align"])
        with without_turn_paths():  # a piece is a straight stretch between two of its line's vertices
            return [_refine_piece(raster, row, settings) for row in rows]


def _aligned(raster, rows, align: dict) -> list:
    """The rows with every piece moved by the group's shift onto the roads (core.batch.shift), kept on the raster."""
    from core.batch.shift import estimate_shift, window_margin_px

    ends = np.asarray([row[1:5] for row in rows], np.float64).reshape(-1, 4)
    margin = window_margin_px(**align)
    col_off, row_off = (int(np.floor(ends[:, k::2].min() - margin)) for k in (0, 1))
    width, height = (int(np.ceil(ends[:, k::2].max() + margin)) - off for k, off in ((0, col_off), (1, row_off)))
    intensity = raster.read_window(col_off, row_off, width, height)
    origin = np.array([col_off, row_off] * 2, np.float64)
    shift_xy, _ = estimate_shift(intensity, ends - origin, **align)
    # Lines often run to the image's edge: a shift must not push their ends off it.
    moved = np.clip(ends + np.tile(shift_xy, 2), 0.0, [raster.width, raster.height] * 2)
    return [[row[0], *moved[k].tolist()] for k, row in enumerate(rows)]


def _refine_piece(raster, row, settings) -> dict:
    from core.extraction import extract
    from core.polyline import NoFeasiblePolylineError

    piece, start, end = int(row[0]), (row[1], row[2]), (row[3], row[4])
    try:
        result = extract(raster, start, end, settings)
    except NoFeasiblePolylineError as err:
        return _failed(piece, "infeasible", err)
    except ValueError as err:  # RasterError included
        return _failed(piece, "no_data" if "no valid pixel" in str(err) else "failed", err)
    vertices = np.asarray(result.vertices_px, np.float64)
    return {"piece": piece, "status": "refined", "vertices": vertices.tolist(),
            "confidence": None if result.confidence is None else float(result.confidence), "message": ""}


def _failed(piece: int, status: str, err: BaseException) -> dict:
    return {"piece": piece, "status": status, "vertices": None, "confidence": None,
            "message": " ".join(str(err).split())[:300]}
