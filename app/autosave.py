"""Autosave off the GUI thread, re-encoding only what changed.

With thousands of features the session file is megabytes and its write
fsyncs: done on the GUI thread after every edit it held input for a large
fraction of a second.  Here the GUI thread only takes a :class:`Snapshot` (the
tool's immutable state and a reference to its outcomes: no copy); a worker
thread encodes and writes it.  Features are immutable, so the encoder keeps
each feature's JSON text and encodes again only the features that are new or
whose outcomes changed; the file is the cached texts joined.

Writes never go backwards: every snapshot has a number, and a write of an
older snapshot than the one on disk is skipped, so a background write that
finishes late cannot replace the session an explicit :meth:`Autosaver.save_now`
wrote.  Requests that arrive while a write runs collapse into the newest.
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from app.model.attributes import fields_to_list
from app.session import SESSION_FORMAT, SESSION_VERSION, feature_to_dict
from core.io.geojson import atomic_write_text

__all__ = ["Autosaver", "Snapshot", "SessionEncoder"]

_numbers = itertools.count(1)


@dataclass(frozen=True)
class Snapshot:
    """What the session file will hold: taken on the GUI thread in O(1), encoded elsewhere.

    ``outcomes`` is the tool's own dict (read, never iterated, by the writer:
    entries are only ever added to it, and a restore replaces the whole dict).
    """

    path: object  # where to write (pathlib.Path)
    image: str | None
    dirty: bool
    features: tuple
    current: object
    outcomes: dict
    number: int
    #: More head entries: the open project and the reference layers (absolute paths).
    context: tuple = ()

    @classmethod
    def of(cls, tool, path, image: str | None, context: dict | None = None) -> Snapshot:
        """The session of ``tool`` on ``image``, to be written to ``path`` (``context``: more JSON entries)."""
        head = {"fields": fields_to_list(tool.fields), **(context or {})}  # the fields: a few entries, copied
        return cls(path, image, bool(tool.dirty), tool.features, tool.current, tool.outcomes, next(_numbers),
                   tuple(head.items()))


class SessionEncoder:
    """Session text of snapshots (as ``json.dumps(app.session.tool_to_dict(...))`` holds), feature by feature.

    Not thread-safe: one writer thread uses it.
    """

    def __init__(self):
        self._texts: dict[int, tuple] = {}  # feature id -> (feature, its outcomes, JSON text)
        self.encoded = 0  # features encoded so far (tests read it)

    def encode(self, snapshot: Snapshot) -> str:
        """The session file's text."""
        texts = {}
        for feature in snapshot.features:
            texts[feature.id] = self._text(feature, snapshot.outcomes)
        self._texts = texts  # forget the features that left
        head = json.dumps({"format": SESSION_FORMAT, "version": SESSION_VERSION, "image": snapshot.image,
                           "dirty": snapshot.dirty, **dict(snapshot.context)})
        current = "null" if snapshot.current is None else json.dumps(feature_to_dict(snapshot.current,
                                                                                     snapshot.outcomes))
        body = ", ".join(entry[2] for entry in texts.values())
        return f'{head[:-1]}, "features": [{body}], "current": {current}}}'

    def _text(self, feature, outcomes: dict) -> tuple:
        known = tuple(outcomes.get(p.id) for p in feature.pieces)
        cached = self._texts.get(feature.id)
        if cached is not None and cached[0] is feature and cached[1] == known:  # outcomes compare by identity
            return cached
        self.encoded += 1
        return (feature, known, json.dumps(feature_to_dict(feature, outcomes)))


class _Signals(QObject):
    failed = Signal(str)


class _Job(QRunnable):
    def __init__(self, autosaver):
        super().__init__()
        self.autosaver = autosaver

    def run(self) -> None:
        self.autosaver._drain()


class Autosaver(QObject):
    """Writes session snapshots on a worker thread; the newest request wins.

    Signals
    -------
    failed(message)
        A write failed (disk full, folder gone); the next request tries again.
    """

    failed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._signals = _Signals()
        self._signals.failed.connect(self.failed)
        self._lock = threading.Lock()  # guards _latest and _running
        self._write_lock = threading.Lock()  # one write at a time, in snapshot order
        self._latest: Snapshot | None = None
        self._running = False
        self._written = 0  # number of the newest snapshot on disk
        self._encoder = SessionEncoder()

    def request(self, snapshot: Snapshot) -> None:
        """Write ``snapshot`` soon on the worker (returns at once)."""
        with self._lock:
            self._latest = snapshot
            if self._running:
                return
            self._running = True
        self._pool.start(_Job(self))

    def save_now(self, snapshot: Snapshot) -> None:
        """Write ``snapshot`` on this thread, now (OSError when it fails)."""
        with self._lock:
            if self._latest is not None and self._latest.number < snapshot.number:
                self._latest = None  # older than this one: never written
        self._write(snapshot)

    def wait(self, timeout_ms: int = -1) -> bool:
        """Until the requested writes are done; False on timeout."""
        return self._pool.waitForDone(timeout_ms)

    def discard(self) -> None:
        """Drop a request not yet written and wait for a running write (before the session file is removed)."""
        with self._lock:
            self._latest = None
        self._pool.waitForDone()

    def _drain(self) -> None:
        while True:
            with self._lock:
                snapshot, self._latest = self._latest, None
                if snapshot is None:
                    self._running = False
                    return
            try:
                self._write(snapshot)
            except Exception as err:  # a worker's edge: told to the window, never lost in a thread
                self._signals.failed.emit(str(err) if isinstance(err, OSError) else f"{type(err).__name__}: {err}")

    def _write(self, snapshot: Snapshot) -> None:
        with self._write_lock:
            if snapshot.number <= self._written:
                return
            text = self._encoder.encode(snapshot)
            snapshot.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(snapshot.path, text)
            self._written = snapshot.number
