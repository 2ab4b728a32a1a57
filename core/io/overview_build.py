"""GDAL's overview builder run in a child process beside a hidden copy of the image's name.

rasterio's ``build_overviews`` has no progress callback and holds the GIL for the whole GDAL call: during the
6 s level 1:2 of a 20000 x 20000 RGB image (benchmark VM) every other thread of the process stood still, the
GUI's included, and a cancel waited for the call's end.  So the calls run in a spawned process that reports
each level through a pipe and that a cancel terminates.  They write into a hidden folder beside the image,
through a link to it under its own name (GDAL names the external overviews after the path it opened), and the
finished ``.ovr`` is moved beside the image in one rename: a cancelled, failed or killed build leaves no
``IMAGE.ovr`` to be read half written.  The child ends with its parent, even in the middle of a GDAL call on
Linux (:func:`_end_with_parent`).  Each folder names the process that builds there
(:func:`core.processes.this_process`): the folder of a build killed with its parent (SIGKILL, a power cut),
which may hold gigabytes of a half written ``.ovr``, is removed by the next build of the image, or by the
window when it offers one (:func:`remove_abandoned_staging`), as soon as that process is gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import json
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

from core.cancel import check
from core.io.checks import RasterError
from core.processes import STOP_TIMEOUT_S, end_process, process_runs, this_process

__all__ = ["POLL_S", "STALE_STAGING_S", "STOP_TIMEOUT_S", "remove_abandoned_staging", "run_in_child", "staging"]

#: How often (s) the parent looks at the cancel token while the child builds.
POLL_S = 0.02
#: A staging folder this old (s) belongs to no running build, where whether its process runs cannot be told
#: (another machine's, one of an older LineSnap, or outside Linux a pid taken again).
STALE_STAGING_S = 3600.0


class OverviewError(RasterError):
    """Overviews cannot be built (the folder is not writable, the format cannot take them, GDAL failed)."""


@contextlib.contextmanager
def staging(path: Path):
    """A hidden folder beside ``path`` holding a link to it under its own name; yields the link.

    Yields None where the file system takes neither hard nor symbolic links (FAT, some network shares): the
    caller then builds beside the image itself.  The folder and everything in it go on leaving; the folder
    names this process as its owner, for :func:`remove_abandoned_staging` should it be killed first.
    """
    remove_abandoned_staging(path)
    folder = Path(tempfile.mkdtemp(prefix=f".{path.name}.ovr-", suffix=".tmp", dir=path.parent))
    try:
        _owner_record(folder, path.name).write_text(json.dumps(this_process()))
        link = folder / path.name
        yield link if _link(path, link) else None
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # (unlinks the link; never follows it)


def _link(path: Path, link: Path) -> bool:
    for make in (os.link, lambda source, name: os.symlink(source.resolve(), name)):
        try:
            make(path, link)
            return True
        except OSError:
            continue
    return False


def _owner_record(folder: Path, name: str) -> Path:
    """The file in ``folder`` (staging the image called ``name``) that describes the process building there
    (named apart from the image's link and from what GDAL writes beside it)."""
    return folder / f"{name}.owner"


def remove_abandoned_staging(path) -> None:
    """Remove the staging folders beside the image ``path`` that no running build uses.

    A folder goes as soon as the process it names is gone (:func:`core.processes.process_runs`); where that
    cannot be told (no record of it, another machine's, a pid taken again outside Linux), once it is
    :data:`STALE_STAGING_S` old.  A folder of a running process (another LineSnap building the same image)
    is kept.  Errors (a folder that cannot be listed or removed) are passed over.
    """
    path, now = Path(path), time.time()
    with contextlib.suppress(OSError):
        for folder in path.parent.glob(f".{glob.escape(path.name)}.ovr-*.tmp"):
            with contextlib.suppress(OSError):
                if folder.is_dir() and _abandoned(folder, path.name, now):
                    shutil.rmtree(folder, ignore_errors=True)


def _abandoned(folder: Path, name: str, now: float) -> bool:
    """Whether staging ``folder`` belongs to no running build (OSError where it cannot be looked at)."""
    try:
        owner = json.loads(_owner_record(folder, name).read_text())
    except (OSError, ValueError):  # (none: made by an older LineSnap, or its process killed before writing it)
        owner = None
    runs = process_runs(owner)
    return runs is False or (runs is None and now - folder.stat().st_mtime > STALE_STAGING_S)


def run_in_child(image: Path, factors: list[int], resampling: str, cancel, report) -> None:
    """Build ``image``'s overviews at ``factors`` into ``image.ovr`` in a child process.

    ``resampling`` names a :class:`rasterio.enums.Resampling`.  ``report(done, total, phase)`` is called when
    level 1:``factors[0]`` is done.  A cancel (:class:`core.cancel.Cancelled`) ends the child within about
    :data:`POLL_S`; a failure or the child's death raises :class:`OverviewError`.  No child outlives the call,
    nor the death of this process (:func:`_end_with_parent`).
    """
    context = multiprocessing.get_context("spawn")  # (a fork would copy the GUI's threads and GDAL's locks)
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child_main, args=(sender, str(image), factors, resampling), daemon=True,
                              name="linesnap-overviews")
    process.start()
    sender.close()  # (so that the child's death reads as the end of the pipe)
    try:
        _follow(process, receiver, image.name, factors, cancel, report)
    finally:
        receiver.close()
        end_process(process)


def _follow(process, receiver, name: str, factors: list[int], cancel, report) -> None:
    while True:
        check(cancel)
        if not receiver.poll(POLL_S):
            continue
        try:
            kind, *details = receiver.recv()
        except EOFError:  # killed, out of memory, or GDAL crashed
            process.join(STOP_TIMEOUT_S)
            raise OverviewError(f"cannot build overviews of {name}: GDAL's overview builder stopped unexpectedly "
                                f"(exit code {process.exitcode})") from None
        if kind == "failed":
            raise OverviewError(details[0])
        if kind == "done":
            return
        report(1, len(factors), f"building levels 1:{factors[1]} to 1:{factors[-1]}")


def _child_main(conn, image: str, factors: list[int], resampling: str) -> None:
    """The child: level 1:``factors[0]`` from the image, then the coarser ones as that level's own overviews.

    Each call that adds a level to an existing ``.ovr`` would read the whole image again (81 s for the 7
    levels of a 20000 x 20000 image, against 14 s in one call); GDAL reads the ``.ovr``'s internal overviews
    as the image's further levels.
    """
    _end_with_parent()
    import rasterio
    from rasterio.enums import Resampling

    image, ovr, method = Path(image), Path(f"{image}.ovr"), Resampling[resampling]
    try:
        # DEFLATE: uncompressed, the levels of a 20000 x 20000 RGB image would take 400 MB beside it.
        with rasterio.Env(TIFF_USE_OVR=True, COMPRESS_OVERVIEW="DEFLATE"):
            _build_levels(image, image, factors[:1], method)
        if len(factors) > 1:
            conn.send(("level", 1))
            with rasterio.Env(COMPRESS_OVERVIEW="DEFLATE"):
                _build_levels(image, ovr, [f // factors[0] for f in factors[1:]], method)
    except Exception as err:
        message = str(err) if isinstance(err, OverviewError) else f"cannot build overviews of {image.name}: {err!r}"
        conn.send(("failed", message))
    else:
        conn.send(("done",))
    conn.close()


def _end_with_parent() -> None:
    """End this child as soon as its parent dies (killed, crashed), even in the middle of a GDAL call.

    GDAL's builder holds the GIL for the whole call, so no thread of the child can act during it: on Linux the
    kernel kills the child when the thread that started it ends (that thread waits in :func:`run_in_child`
    until the child is gone, so only the death of its process ends it first).  Elsewhere, or where the parent
    died before the kernel was asked, a thread waiting on the parent ends the child once the GIL is free: at
    once, or when the current GDAL call returns.
    """
    parent = multiprocessing.parent_process()
    if parent is None:  # (not started by multiprocessing)
        return
    if _killed_with_parent() and parent.is_alive():
        return

    def watch():
        parent.join()
        os._exit(1)

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()


#: prctl's option that has the kernel signal a process when the thread that started it ends (linux/prctl.h).
_PR_SET_PDEATHSIG = 1


def _killed_with_parent() -> bool:
    """Ask the kernel to SIGKILL this process when its parent's thread that started it ends; whether it will."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):  # (no C library to load, or one without prctl)
        return False


def _build_levels(image: Path, target: Path, factors: list[int], resampling) -> None:
    """GDAL's overviews of ``target`` (the image, or its ``.ovr``) at ``factors``; its errors as OverviewError."""
    import rasterio
    from rasterio.errors import NotGeoreferencedWarning

    try:
        # 'r+' is rasterio's only way to GDAL's builder; with TIFF_USE_OVR nothing is written to the image.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotGeoreferencedWarning)  # (an .ovr has no georeference of its own)
            with rasterio.open(target, "r+") as ds:
                ds.build_overviews(factors, resampling)
    except Exception as err:  # rasterio raises several unrelated classes
        if not type(err).__module__.startswith("rasterio"):
            raise
        reason = str(err).splitlines()[0][:300] if str(err) else type(err).__name__
        raise OverviewError(f"cannot build overviews of {image.name}: {reason}") from err
