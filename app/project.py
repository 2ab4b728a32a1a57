"""Project files (``.linesnap``): images by absolute path, each with its work layer, settings, view and references.

A project is JSON::

    {"format": "linesnap-project", "version": 1, "active": "/abs/image.tif",
     "images": [{"path": "/abs/image.tif", "relative_path": "image.tif",
                 "settings": {...ExtractionSettings...},
                 "view": {"scale": 1.0, "origin_x": 0.0, "origin_y": 0.0} or null,
                 "features": [...as in the session...], "current": null,
                 "references": [{"path": "/abs/roads.gpkg", "relative_path": "roads.gpkg",
                                 "colour": "#8fb8ff", "visible": true}],
                 "fields": [{"name": "lanes", "kind": "integer"}, ...]}]}

Paths are written absolute, and relative to the project file's folder too: a
file that is no longer at its absolute path but is at its relative one (the
project's folder moved or copied with its files, to another machine) is found
there.  A relative ``path`` (a project edited by hand) is read relative to the
project file's folder.  Features use the session's encoding
(:mod:`app.session`), so a project restores editable pieces as a crash
recovery does.  This module knows nothing of Qt widgets.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from app.model.attributes import fields_from_list, fields_to_list
from app.model.session_check import SessionError, check_session
from app.session import SESSION_FORMAT, feature_to_dict, state_from_dict
from core.extraction import ExtractionSettings
from core.io.geojson import atomic_write_text
from core.io.jsonfile import load_json

__all__ = ["PROJECT_FORMAT", "PROJECT_SUFFIX", "ImageEntry", "Project", "ProjectError", "load_project"]

PROJECT_FORMAT = "linesnap-project"
PROJECT_VERSION = 1
PROJECT_SUFFIX = ".linesnap"
MAX_PROJECT_BYTES = 1024 * 2**20


class ProjectError(ValueError):
    """A project file that cannot be read (the message names the file and what is wrong)."""


@dataclass
class ImageEntry:
    """One image of a project: what the window shows again when the image is opened.

    ``work`` holds the work layer as a session dict (``features``, ``current``);
    ``view`` the viewer's ``scale``, ``origin_x``, ``origin_y``, or None to fit.
    """

    path: str
    settings: ExtractionSettings = field(default_factory=ExtractionSettings)
    view: dict | None = None
    work: dict = field(default_factory=lambda: {"features": [], "current": None})
    references: list = field(default_factory=list)
    #: The work layer's attribute fields (:class:`app.model.attributes.FieldDef`).
    fields: tuple = ()

    def to_dict(self, folder: Path | None = None) -> dict:
        """The entry as JSON; with the project file's ``folder``, each path also relative to it
        (``relative_path``), which finds the files again when the folder moves with them."""
        return {"path": self.path, **_relative(self.path, folder), "settings": self.settings.to_dict(),
                "view": self.view, "features": self.work.get("features", []), "current": self.work.get("current"),
                "references": [{**r, **_relative(r["path"], folder)} for r in self.references],
                "fields": fields_to_list(self.fields)}

    def tool_state(self, where: str):
        """(state, outcomes) of the work layer for ``ExtractionTool.restore`` (ProjectError when damaged)."""
        session = {"format": SESSION_FORMAT, "features": self.work.get("features", []),
                   "current": self.work.get("current")}
        try:
            return state_from_dict(session, ExtractionSettings.from_dict, where)
        except SessionError as err:
            raise ProjectError(str(err)) from err


def work_of(tool) -> dict:
    """The work layer of an ``ExtractionTool`` as a project's ``features`` and ``current``."""
    current = tool.current
    return {"features": [feature_to_dict(f, tool.outcomes) for f in tool.features],
            "current": feature_to_dict(current, tool.outcomes) if current is not None else None}


class Project:
    """The images of a project, in the order they were added, and the active one.

    Parameters
    ----------
    path : str or None
        The project file (None until saved).
    """

    def __init__(self, path: str | None = None):
        self.path = str(Path(path).resolve()) if path else None
        self.images: dict[str, ImageEntry] = {}
        self.active: str | None = None

    def entry(self, image_path: str) -> ImageEntry | None:
        """The entry of an image (by absolute path), None when the project does not hold it."""
        return self.images.get(str(Path(image_path).resolve()))

    def put(self, entry: ImageEntry) -> None:
        """Add or replace the entry of ``entry.path`` (made absolute)."""
        entry.path = str(Path(entry.path).resolve())
        self.images[entry.path] = entry

    def to_dict(self, folder: Path | None = None) -> dict:
        return {"format": PROJECT_FORMAT, "version": PROJECT_VERSION, "active": self.active,
                "images": [entry.to_dict(folder) for entry in self.images.values()]}

    def save(self, path) -> None:
        """Write the project atomically to ``path`` (which becomes its path)."""
        path = Path(path).resolve()
        if path.suffix.lower() != PROJECT_SUFFIX:
            raise ProjectError(f"a project file's name must end in {PROJECT_SUFFIX}; got {path.name}")
        atomic_write_text(path, json.dumps(self.to_dict(path.parent)))
        self.path = str(path)


def load_project(path) -> Project:
    """Read a ``.linesnap`` file (ProjectError naming the file and the problem when it is not a valid project)."""
    path = Path(path).resolve()
    where = str(path)
    if not path.is_file():
        raise ProjectError(f"{where}: no such project file")
    try:
        data = load_json(path, ProjectError, max_bytes=MAX_PROJECT_BYTES)
    except OSError as err:
        raise ProjectError(f"{where}: {err}") from err
    if not isinstance(data, dict) or data.get("format") != PROJECT_FORMAT:
        raise ProjectError(f"{where}: not a LineSnap project file")
    if data.get("version") != PROJECT_VERSION:
        raise ProjectError(f"{where}: project version {data.get('version')!r} is not supported (expected 1)")
    images = data.get("images")
    if not isinstance(images, list):
        raise ProjectError(f"{where}: 'images' must be a list")
    project, moved = Project(path), {}
    for index, item in enumerate(images):
        entry = _entry_from_dict(item, path.parent, f"{where}: images[{index}]")
        project.put(entry)
        moved[_absolute(item["path"], path.parent)] = entry.path
    active = data.get("active")
    if active is not None:
        if not isinstance(active, str):
            raise ProjectError(f"{where}: 'active' must be an image path or null")
        active = _absolute(active, path.parent)
        project.active = moved.get(active, active)
    return project


def _absolute(value: str, folder: Path) -> str:
    return str((folder / value).resolve()) if not Path(value).is_absolute() else str(Path(value))


def _relative(path: str, folder: Path | None) -> dict:
    """``{"relative_path": path relative to folder}``, or nothing (no folder, another drive)."""
    if folder is None:
        return {}
    try:
        return {"relative_path": os.path.relpath(path, folder)}
    except ValueError:  # (Windows: another drive)
        return {}


def _located(item: dict, folder: Path) -> str:
    """The absolute path of an entry's file: its ``path``, or where its ``relative_path`` leads from the project's
    folder when the file is not at ``path`` but is there (the project moved with its files)."""
    path = _absolute(item["path"], folder)
    relative = item.get("relative_path")
    if not Path(path).exists() and isinstance(relative, str) and relative:
        beside = _absolute(relative, folder)
        if Path(beside).exists():
            return beside
    return path


def _entry_from_dict(item, folder: Path, where: str) -> ImageEntry:
    if not isinstance(item, dict) or not isinstance(item.get("path"), str) or not item["path"]:
        raise ProjectError(f"{where}: an image entry needs a 'path'")
    try:
        settings = ExtractionSettings.from_dict(item.get("settings") or {})
    except (TypeError, ValueError) as err:
        raise ProjectError(f"{where}: settings: {err}") from err
    view = item.get("view")
    if view is not None and not (isinstance(view, dict) and all(
            isinstance(view.get(k), (int, float)) for k in ("scale", "origin_x", "origin_y"))):
        raise ProjectError(f"{where}: 'view' must hold numbers scale, origin_x, origin_y")
    session = {"format": SESSION_FORMAT, "features": item.get("features", []), "current": item.get("current")}
    try:
        check_session(session, where)
    except SessionError as err:
        raise ProjectError(str(err)) from err
    references = item.get("references", [])
    if not isinstance(references, list) or not all(isinstance(r, dict) and isinstance(r.get("path"), str)
                                                   for r in references):
        raise ProjectError(f"{where}: 'references' must be a list of {{'path': ...}} entries")
    references = [{**{k: v for k, v in r.items() if k != "relative_path"}, "path": _located(r, folder)}
                  for r in references]
    try:
        fields = fields_from_list(item.get("fields"), f"{where}: fields")
    except ValueError as err:
        raise ProjectError(str(err)) from err
    return ImageEntry(_located(item, folder), settings, view,
                      {"features": session["features"], "current": session["current"]}, references, fields)
