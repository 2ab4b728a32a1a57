"""Staging folders of overview builds: removed as soon as their process is gone, kept while it runs."""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import sys
import time

import numpy as np
import pytest

rasterio = pytest.importorskip("rasterio")

from core import processes  # noqa: E402
from core.io.overview_build import STALE_STAGING_S, remove_abandoned_staging, staging  # noqa: E402
from core.io.overviews import build_overviews, overview_path  # noqa: E402
from core.processes import end_process, process_runs, this_process  # noqa: E402
from tests.core.io import overview_children  # noqa: E402
from tests.core.io.test_overviews import staged, tiled_tif  # noqa: E402

LINUX = sys.platform.startswith("linux")


@pytest.fixture
def image(tmp_path):
    rows, cols = np.mgrid[0:400, 0:600]
    return tiled_tif(tmp_path / "big.tif", ((rows + cols) % 250 + 1).astype(np.uint8)[None])


@pytest.fixture
def holder(image):
    """Another process building ``image`` (its staging folder made, GDAL not started): ``(process, folder)``."""
    ready = image.parent / "ready"
    process = multiprocessing.get_context("spawn").Process(target=overview_children.hold_staging,
                                                           args=(str(image), str(ready)))
    process.start()
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and process.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        [folder] = staged(image)
        yield process, folder
    finally:
        end_process(process)


def left_folder(image, name, owner=None, age_s=0.0):
    """A staging folder of ``image`` with a half written .ovr, ``owner`` recorded (none: no record), ``age_s`` old."""
    folder = image.parent / f".{image.name}.ovr-{name}.tmp"
    folder.mkdir()
    (folder / f"{image.name}.ovr").write_bytes(b"II*\0 half written")
    if owner is not None:
        (folder / f"{image.name}.owner").write_text(json.dumps(owner))
    stamp = time.time() - age_s
    os.utime(folder, (stamp, stamp))
    return folder


def gone_owner():
    """The record of a process that has ended (a child spawned, reaped)."""
    process = multiprocessing.get_context("spawn").Process(target=os.getpid)
    process.start()
    process.join()
    owner = dict(this_process(), pid=process.pid)
    process.close()
    return owner


def test_the_folder_of_a_killed_build_goes_at_once_and_not_before(image, holder):
    process, folder = holder
    owner = json.loads((folder / "big.tif.owner").read_text())
    assert owner["pid"] == process.pid and process_runs(owner) is True
    remove_abandoned_staging(image)
    assert staged(image) == [folder]  # (its build runs)
    process.kill()  # (SIGKILL: nothing of it runs any more, its folder stays)
    process.join()
    assert staged(image) == [folder] and time.time() - folder.stat().st_mtime < STALE_STAGING_S
    assert process_runs(owner) is False
    remove_abandoned_staging(image)
    assert staged(image) == []


def test_a_build_keeps_the_folder_of_another_running_build_of_the_image(image, holder):
    _, folder = holder
    assert build_overviews(image) == [2, 4]
    assert staged(image) == [folder] and overview_path(image).is_file()


def test_a_build_removes_the_folder_of_a_dead_one(image):
    folder = left_folder(image, "dead", gone_owner())
    assert build_overviews(image) == [2, 4]
    assert not folder.exists() and staged(image) == []


def test_this_process_keeps_its_own_folder(image):
    with staging(image) as link:
        remove_abandoned_staging(image)
        assert link.is_file() and len(staged(image)) == 1
    assert staged(image) == []


@pytest.mark.skipif(not LINUX, reason="start times are read in /proc")
def test_a_pid_taken_again_is_not_the_owner(image):
    folder = left_folder(image, "reused", dict(this_process(), started=this_process()["started"] + "0"))
    remove_abandoned_staging(image)
    assert not folder.exists()


@pytest.mark.parametrize("kind", ["no record", "another machine", "not a record", "half a record"])
def test_folders_whose_owner_cannot_be_told_follow_the_age_rule(image, kind):
    owner = {"no record": None, "another machine": dict(gone_owner(), host=socket.gethostname() + "-other"),
             "not a record": [1, 2], "half a record": {"host": socket.gethostname()}}[kind]
    old = left_folder(image, "old", owner, age_s=STALE_STAGING_S + 60)
    recent = left_folder(image, "recent", owner, age_s=STALE_STAGING_S - 60)
    remove_abandoned_staging(image)
    assert staged(image) == [recent] and not old.exists()


def test_outside_linux_a_pid_tells_what_it_can(image, monkeypatch):
    monkeypatch.setattr(processes, "_LINUX", False)
    dead = left_folder(image, "dead", gone_owner())
    alive_old = left_folder(image, "alive-old", this_process(), age_s=STALE_STAGING_S + 60)
    alive_recent = left_folder(image, "alive-recent", this_process())
    remove_abandoned_staging(image)
    # (a pid that runs may have been taken again: the age rule)
    assert not dead.exists() and not alive_old.exists() and staged(image) == [alive_recent]


def test_a_folder_that_cannot_be_listed_is_passed_over(tmp_path):
    remove_abandoned_staging(tmp_path / "missing" / "big.tif")
