"""Decimated raster reads for the viewer, on worker threads.

The viewer says which tiles it wants now (:meth:`TileLoader.request`, nearest
first); a few workers of the loader's own ``QThreadPool`` take them one at a
time, so a tile that scrolled out of view before a worker reached it is never
read.  Each worker reads through its own :class:`core.io.raster.Raster` handle
(rasterio datasets are not thread-safe, and sharing the extraction's handle
would make a click wait behind tile reads).
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from app.model.tiles import TileKey, tile_window
from core.io.raster import open_raster

__all__ = ["TileLoader", "SAMPLE_PX"]

#: Longest side (px) of the whole-raster sample used for the contrast stretch (``Raster.read_sample``).
SAMPLE_PX = 512


class _Worker(QRunnable):
    def __init__(self, loader: TileLoader):
        super().__init__()
        self._loader = loader

    def run(self):
        loader = self._loader
        while (job := loader._take()) is not None:
            try:
                data = loader._read(job)
            except Exception as err:  # reported to the GUI, never raised in a worker
                loader.failed.emit(job, f"{type(err).__name__}: {err}")
            else:
                loader.loaded.emit(job, data)


class TileLoader(QObject):
    """Reads tiles and the stretch sample of one raster off the GUI thread.

    Parameters
    ----------
    source : str or ndarray
        What ``core.io.raster.open_raster`` opens (a path or an array).
    band : int or None
        Passed to ``open_raster``: the intensity band.
    max_threads : int
        Concurrent reads.

    Signals
    -------
    loaded(job, data)
        ``job`` is a :class:`app.model.tiles.TileKey` or ``("sample", bands)``;
        ``data`` a float32 array (h, w) or (h, w, k), NaN where there is no data.
    failed(job, message)
    """

    loaded = Signal(object, object)
    failed = Signal(object, str)

    def __init__(self, source, band=None, max_threads: int = 2, parent=None):
        super().__init__(parent)
        self._open = lambda: open_raster(source, band)
        first = self._open()
        self.width, self.height, self.band_count = first.width, first.height, first.band_count
        self._free = [first]
        self._handles = [first]
        self._lock = threading.Lock()
        self._wanted: list = []
        self._in_flight: set = set()
        self._workers = 0
        self._closed = False
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(max_threads)

    def request(self, jobs: list) -> None:
        """Read these jobs, first first; replaces the earlier wish list (stale jobs are dropped)."""
        with self._lock:
            if self._closed:
                return
            self._wanted = [job for job in jobs if job not in self._in_flight]
            n_new = min(len(self._wanted), self._pool.maxThreadCount()) - self._workers
            self._workers += max(0, n_new)
        for _ in range(n_new):
            self._pool.start(_Worker(self))

    def request_sample(self, bands: tuple[int, ...] | None) -> None:
        """Read a decimated sample of the whole raster (for the contrast stretch), before any tile."""
        with self._lock:
            pending = list(self._wanted)
        self.request([("sample", bands)] + pending)

    def pending(self) -> int:
        """Jobs wanted or being read."""
        with self._lock:
            return len(self._wanted) + len(self._in_flight)

    def wait(self, timeout_ms: int = -1) -> bool:
        """Block until every worker has finished (True) or the timeout ran out."""
        return self._pool.waitForDone(timeout_ms)

    def reopen(self) -> None:
        """Open the raster handles again, so that later reads see overviews built since (reads may go on)."""
        with self._lock:
            handles = list(self._handles)
        for handle in handles:
            handle.reopen()

    def close(self) -> None:
        """Drop the wish list, wait for running reads and close the raster handles."""
        with self._lock:
            self._closed = True
            self._wanted = []
        self._pool.waitForDone()
        for handle in self._handles:
            handle.close()
        self._handles.clear()
        self._free.clear()

    # -- worker side ------------------------------------------------------
    def _take(self):
        """The next job, or None; a worker that gets None stops (counted down here, atomically)."""
        with self._lock:
            if self._closed or not self._wanted:
                self._workers -= 1
                return None
            job = self._wanted.pop(0)
            self._in_flight.add(job)
            return job

    def _read(self, job):
        with self._lock:
            handle = self._free.pop() if self._free else None
        if handle is None:
            handle = self._open()
            with self._lock:
                self._handles.append(handle)
        try:
            return self._read_with(handle, job)
        finally:
            with self._lock:
                self._free.append(handle)
                self._in_flight.discard(job)

    def _read_with(self, raster, job):
        if isinstance(job, TileKey):
            col_off, row_off, win_w, win_h, out_w, out_h = tile_window(job, self.width, self.height)
            bands = list(job.bands) if job.bands is not None else None
            return raster.read_decimated(col_off, row_off, win_w, win_h, out_w, out_h, bands=bands)
        _, bands = job
        return raster.read_sample(SAMPLE_PX, bands=list(bands) if bands is not None else None)

