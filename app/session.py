"""Autosave of the session (the image and every feature) so that a crash or a kill loses nothing.

One locked file per running window; docs/notes/gui.md, "Autosave".
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

import numpy as np
from PySide6.QtCore import QLockFile

from app.model.attributes import fields_from_list, fields_to_list
from app.model.estimates import confidence_value, estimate_from_dict
from app.model.pieces import Feature, PieceOutcome, PieceSpec, ToolState
from app.model.session_check import SessionError, check_session
from core.io.geojson import atomic_write_text
from core.io.jsonfile import load_json

__all__ = ["SessionError", "SessionStore", "tool_to_dict", "feature_to_dict", "state_from_dict", "has_unsaved_work",
           "fields_from_session",
           "SESSION_FORMAT"]

SESSION_FORMAT = "linesnap-session"
SESSION_VERSION = 1
#: Larger session files are damaged (a session of 50,000 lines takes about 100 MB).
MAX_SESSION_BYTES = 1024 * 2**20
#: Session files ``session.json``, ``session-2.json``, ...: one per window running at once.
MAX_SLOTS = 16
log = logging.getLogger("linesnap")


def _outcome_to_dict(outcome: PieceOutcome | None):
    if outcome is None:
        return None
    data = {"vertices_px": np.asarray(outcome.vertices_px, dtype=float).tolist(), "status": outcome.status,
            "score": outcome.score, "backend": outcome.backend, "method": outcome.method,
            "timings_ms": {k: float(v) for k, v in outcome.timings_ms.items()}, "error": outcome.error,
            "estimate": outcome.estimate.to_dict() if outcome.estimate is not None else None,
            "confidence": outcome.confidence}
    if "properties" in outcome.details:  # an imported line's attributes, exported with it
        data["properties"] = outcome.details["properties"]
    return data


def feature_to_dict(feature: Feature, outcomes: dict) -> dict:
    """One feature of the session, as a JSON-able dict (its pieces with their outcomes)."""
    pieces = [{"id": p.id, "kind": p.kind, "click_start": list(p.click_start), "click_end": list(p.click_end),
               "settings": p.settings.to_dict() if p.settings is not None else None,
               "outcome": _outcome_to_dict(outcomes.get(p.id))} for p in feature.pieces]
    data = {"id": feature.id, "name": feature.name, "start_xy": list(feature.start_xy), "pieces": pieces}
    if feature.attributes:  # the values of the layer's fields (app.model.attributes)
        data["attributes"] = dict(feature.attributes)
    return data


def tool_to_dict(tool, image_path: str | None) -> dict:
    """The session of an :class:`app.model.tool.ExtractionTool` on ``image_path`` as a JSON-able dict."""
    current = tool.current
    return {"format": SESSION_FORMAT, "version": SESSION_VERSION, "image": image_path, "dirty": bool(tool.dirty),
            "fields": fields_to_list(tool.fields),
            "features": [feature_to_dict(f, tool.outcomes) for f in tool.features],
            "current": feature_to_dict(current, tool.outcomes) if current is not None else None}


def _feature_from_dict(data: dict, settings_from_dict, outcomes: dict) -> Feature:
    pieces = []
    for p in data["pieces"]:
        settings = settings_from_dict(p["settings"]) if p.get("settings") is not None else None
        piece = PieceSpec(int(p["id"]), tuple(map(float, p["click_start"])), tuple(map(float, p["click_end"])),
                          str(p["kind"]), settings)
        if p.get("outcome") is not None:
            o = p["outcome"]
            details = {"properties": dict(o["properties"])} if o.get("properties") is not None else {}
            # estimate and confidence: absent from older sessions
            outcomes[piece.id] = PieceOutcome(np.asarray(o["vertices_px"], dtype=np.float64), o["status"], o["score"],
                                              o["backend"], o["method"], dict(o["timings_ms"]), o["error"], details,
                                              estimate_from_dict(o.get("estimate")),
                                              confidence_value(o.get("confidence")))
        pieces.append(piece)
    attributes = tuple(sorted((str(k), v) for k, v in (data.get("attributes") or {}).items() if v is not None))
    return Feature(int(data["id"]), str(data["name"]), tuple(map(float, data["start_xy"])), tuple(pieces),
                   attributes)


def state_from_dict(data: dict, settings_from_dict, where: str = "session") -> tuple[ToolState, dict]:
    """(state, outcomes) of a session dict for ``ExtractionTool.restore``.

    Raises SessionError (a ValueError) naming ``where`` and the place when it
    is not a well-formed session.
    """
    if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT:
        raise SessionError(f"{where}: not a LineSnap session file")
    check_session(data, where)
    outcomes: dict = {}
    try:
        features = tuple(_feature_from_dict(f, settings_from_dict, outcomes) for f in data["features"])
        current = data.get("current")
        current = _feature_from_dict(current, settings_from_dict, outcomes) if current else None
    except (KeyError, TypeError, ValueError) as err:
        raise SessionError(f"{where}: damaged LineSnap session: {type(err).__name__}: {err}") from err
    return ToolState(features, current), outcomes


def fields_from_session(data: dict, where: str = "session") -> tuple:
    """The layer's attribute fields a session or project entry names (SessionError when malformed)."""
    try:
        return fields_from_list(data.get("fields"), f"{where}: fields")
    except ValueError as err:
        raise SessionError(str(err)) from err


def has_unsaved_work(data: dict | None) -> bool:
    """Whether a session dict holds work that was never exported (worth offering back)."""
    return bool(data and data.get("dirty") and (data.get("features") or data.get("current")))


class SessionStore:
    """The autosave file of one window: ``session.json`` (slot 0) or ``session-<slot + 1>.json`` in ``folder``.

    Use :meth:`claim` to get a slot that no other running window writes to.
    """

    def __init__(self, folder, slot: int = 0):
        self.folder = Path(folder)
        self.slot = slot
        self.path = self.folder / ("session.json" if slot == 0 else f"session-{slot + 1}.json")
        self._lock: QLockFile | None = None
        #: One line per damaged session file set aside by :meth:`load` (for the user).
        self.notices: list[str] = []

    @classmethod
    def claim(cls, folder, adopt: bool = True) -> SessionStore:
        """The session slot of this window, locked until :meth:`release`.

        Slots of running windows are skipped; with ``adopt``, a free slot left with
        unsaved work is preferred, so that the work is offered back.
        """
        Path(folder).mkdir(parents=True, exist_ok=True)
        empty, notices = None, []
        for slot in range(MAX_SLOTS):
            store = cls(folder, slot)
            if not store._try_lock():
                continue
            unsaved = has_unsaved_work(store.load())
            notices += store.notices
            if unsaved:
                if adopt:
                    if empty is not None:
                        empty.release()
                    store.notices = notices
                    return store
                store.release()
            elif empty is None:
                empty = store
            else:
                store.release()
        # Every slot is taken: an unlocked file of this process's own still beats no autosave.
        chosen = empty if empty is not None else cls(folder, MAX_SLOTS + os.getpid())
        chosen.notices = notices
        return chosen

    def _try_lock(self) -> bool:
        lock = QLockFile(str(self.path) + ".lock")
        lock.setStaleLockTime(0)  # only a dead owner makes a lock stale, never its age
        if not lock.tryLock(0):
            return False
        self._lock = lock
        return True

    def release(self) -> None:
        """Give the slot up (the file stays; :meth:`clear` removes it)."""
        if self._lock is not None:
            self._lock.unlock()
            self._lock = None

    def save(self, data: dict) -> None:
        """Write the session atomically (an earlier file stays intact if writing fails)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.path, json.dumps(data))

    def load(self) -> dict | None:
        """The saved session, or None when there is none or it cannot be read.

        A damaged file (malformed, nested too deep, values out of range) is set
        aside (:meth:`set_aside`) so that it can neither stop the start nor be
        offered again.
        """
        if not self.path.exists():
            return None
        try:
            data = load_json(self.path, SessionError, max_bytes=MAX_SESSION_BYTES)
            if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT:
                return None
            check_session(data, str(self.path))
        except SessionError as err:
            self.set_aside(str(err))
            return None
        return data

    def set_aside(self, reason: str) -> Path | None:
        """Rename a damaged session file to ``<name>.damaged-<time>`` and note why; returns the new path."""
        target = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            os.replace(self.path, target)
        except OSError as err:
            log.warning("cannot set the damaged session %s aside: %s", self.path, err)
            target = None
        where = f"It was moved to {target}." if target else "It could not be moved and is ignored."
        self.notices.append(f"The autosaved session could not be used ({reason[:300]}). {where}")
        log.warning("%s", self.notices[-1])
        return target

    def clear(self) -> None:
        """Remove the session file (a normal exit)."""
        self.path.unlink(missing_ok=True)


def session_summary(data: dict) -> str:
    """One line about a saved session, for the restore question."""
    features = data.get("features")
    n = (len(features) if isinstance(features, list) else 0) + (1 if data.get("current") else 0)
    image = Path(data["image"]).name if isinstance(data.get("image"), str) and data["image"] else "an image"
    return f"It had {n} feature{'s' if n != 1 else ''} on {image}."
