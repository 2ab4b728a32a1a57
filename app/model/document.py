"""The open image: its raster handles and what the window needs to know about it.

One Raster serves the extractions and coordinate read-outs; an extraction
with a chosen band gets a handle opened on that band.  Tiles have their own
handles (:class:`app.map.tile_loader.TileLoader`).
"""

from __future__ import annotations

import importlib.resources
import json
import os
import threading
from pathlib import Path

from core.extraction import extract
from core.io.raster import open_raster

__all__ = ["ImageDocument", "absolute_path", "sample_scene_path", "sample_demo"]


def absolute_path(path: str | None) -> str | None:
    """A local file's path made absolute (the session must open it from any folder); URLs and None unchanged."""
    if path is None or "://" in path or path.startswith("/vsi"):
        return path
    return os.path.abspath(path)


def sample_scene_path() -> Path:
    """The bundled sample scene (resources/sample_scene.tif)."""
    return Path(str(importlib.resources.files("resources").joinpath("sample_scene.tif")))


def sample_demo() -> dict | None:
    """The sample scene's demo clicks ``{"start", "end", "settings"}`` from its truth file, or None."""
    truth = Path(str(importlib.resources.files("resources").joinpath("sample_scene.json")))
    try:
        return json.loads(truth.read_text(encoding="utf-8")).get("demo")
    except (OSError, ValueError):
        return None


class ImageDocument:
    """An open image (``source`` as for ``core.io.raster.open_raster``); ``raster`` reads the derived intensity."""

    def __init__(self, source):
        self.source = str(source) if isinstance(source, Path) else source
        self.raster = open_raster(self.source)
        self.path = absolute_path(self.raster.path)
        self.title = Path(self.path).name if self.path else "array"
        self._by_band = {None: self.raster}
        self._lock = threading.Lock()

    @property
    def width(self) -> int:
        return self.raster.width

    @property
    def height(self) -> int:
        return self.raster.height

    def raster_for_band(self, band: int | None):
        """The Raster that reads ``band`` (None: the derived intensity), opened on first use."""
        with self._lock:
            if band not in self._by_band:
                self._by_band[band] = open_raster(self.source, band)
            return self._by_band[band]

    def extract(self, start_xy, end_xy, settings, cancel=None):
        """``core.extract`` from ``start_xy`` to ``end_xy`` (px) on the handle of ``settings.band``."""
        return extract(self.raster_for_band(settings.band), start_xy, end_xy, settings, cancel=cancel)

    def reopen(self) -> None:
        """Open every handle's file again, so that reads see overviews built since (extractions may go on)."""
        with self._lock:
            rasters = list(self._by_band.values())
        for raster in rasters:
            raster.reopen()

    def close(self) -> None:
        """Close every handle (after the workers that use them have finished)."""
        with self._lock:
            for raster in self._by_band.values():
                raster.close()
            self._by_band.clear()
