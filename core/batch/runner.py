"""Batch tasks on Dask: a local cluster by default or an existing one, resumable, stoppable with Ctrl+C.

Each finished task's result is written at once (atomically) to a resume folder
under a name that hashes the task, so a rerun of the same work skips what is
done, while a changed input or setting is computed afresh.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import shutil
import signal
import threading
from pathlib import Path

__all__ = ["Interrupted", "dask_client", "discard", "run_tasks", "task_key"]


class Interrupted(KeyboardInterrupt):
    """Ctrl+C during a batch: the finished tasks are kept for a rerun."""

    def __init__(self, done: int, total: int):
        super().__init__(f"interrupted after {done} of {total} tasks")
        self.done, self.total = done, total


def task_key(task: dict) -> str:
    """A name for a task that changes with any of its inputs."""
    text = json.dumps(task, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None, threads: bool = False):
    """A dask.distributed Client: on ``scheduler`` (``tcp://host:port``) or on a new local cluster.

    The local cluster runs ``workers`` single-threaded processes (default: one
    per core), or with ``threads`` one process with ``workers`` threads.
    """
    from dask.distributed import Client, LocalCluster

    if scheduler:
        try:
            client = Client(scheduler, timeout="15s")
        except (OSError, TimeoutError) as err:
            raise ValueError(f"cannot reach the Dask scheduler at {scheduler}: {' '.join(str(err).split())}") \
                from None
        with client:
            yield client
        return
    count = workers or os.cpu_count() or 1
    shape = dict(n_workers=1, threads_per_worker=count) if threads else dict(n_workers=count, threads_per_worker=1)
    with _environment_kept(), _workers_leave_ctrl_c_to_us():
        cluster = LocalCluster(processes=not threads, dashboard_address=None, silence_logs=logging.CRITICAL, **shape)
    with _environment_kept(), cluster, Client(cluster) as client:  # (a worker restarted sets them again)
        yield client


@contextlib.contextmanager
def _environment_kept():
    """Put back the environment variables the block changes: dask's nanny sets its workers' (OMP_NUM_THREADS=1,
    MKL_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1, MALLOC_TRIM_THRESHOLD_, PYTHONHASHSEED, ...) in this process's own
    ``os.environ`` before spawning each one and leaves them there, so every process started after a batch
    inherited single-threaded maths libraries and a fixed hash seed (distributed 2025, ``WorkerProcess.start``).
    The workers already have them when it returns."""
    before = dict(os.environ)
    try:
        yield
    finally:
        for key in [k for k in os.environ if k not in before]:
            del os.environ[key]
        os.environ.update({k: v for k, v in before.items() if os.environ.get(k) != v})


@contextlib.contextmanager
def _workers_leave_ctrl_c_to_us():
    """Start the local cluster's processes with SIGINT ignored (they inherit it; Python then installs no
    KeyboardInterrupt handler in them), so that Ctrl+C in a terminal, which reaches the whole process group,
    stops this process alone, which then closes the cluster: each worker printed its own traceback, and one
    pressed while the cluster started broke its shutdown.  In the main thread only (elsewhere signals cannot
    be set, and no terminal's Ctrl+C is ours to handle); a Ctrl+C during the start is ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run_tasks(function, tasks: dict, resume_dir: Path | None = None, *, client_factory=dask_client,
              progress=None, weights: dict | None = None) -> tuple[dict, int]:
    """Run ``function(task)`` for every task, keeping each result in ``resume_dir`` as it arrives.

    Parameters
    ----------
    function : callable
        Importable by the workers; takes a task, returns a JSON-able result.
    tasks : dict of str to dict
        Tasks by :func:`task_key`.
    resume_dir : pathlib.Path, optional
        Where results are kept; results found there are not computed again.
        Once a result cannot be written there (a full disk, a read-only
        folder), the run goes on without keeping the rest.
    client_factory : callable
        A context manager giving a dask.distributed Client (default: :func:`dask_client`).
    progress : callable, optional
        ``progress(done_weight, total_weight)`` after each task.
    weights : dict of str to int, optional
        Each task's weight for ``progress`` (default 1).

    Returns
    -------
    results : dict of str to object
    resumed : int
        How many results came from ``resume_dir``.

    Raises
    ------
    Interrupted
        On Ctrl+C; the results so far stay in ``resume_dir``.
    """
    weights = weights or {}
    total = sum(weights.get(key, 1) for key in tasks)
    results = _load(resume_dir, tasks)
    resumed = len(results)
    done = sum(weights.get(key, 1) for key in results)
    if progress:
        progress(done, total)
    todo = [key for key in tasks if key not in results]
    if not todo:
        return results, resumed
    with client_factory() as client:
        futures = client.map(functools.partial(_unchained, function), [tasks[key] for key in todo],
                             key=[f"linesnap-{key}" for key in todo])
        keys = {future.key: key for future, key in zip(futures, todo)}
        try:
            _collect(futures, keys, results, resume_dir, progress, weights, done, total)
        except KeyboardInterrupt:
            client.cancel(futures)
            raise Interrupted(len(results), len(tasks)) from None
    return results, resumed


def _unchained(function, task):
    """``function(task)``, its error raised without the errors it came from: distributed pickles a worker's error
    with its chain, and where a link does not pickle (rasterio's CPLE errors) the client got a bare Exception
    holding the text, which no ``except`` for the real class catches (the command line printed a traceback)."""
    try:
        return function(task)
    except Exception as err:
        err.__cause__ = err.__context__ = None
        raise


def _collect(futures, keys, results, resume_dir, progress, weights, done, total):
    from dask.distributed import as_completed

    for future in as_completed(futures):
        key = keys[future.key]
        results[key] = future.result()
        try:
            _save(resume_dir, key, results[key])
        except OSError:  # a full disk or a read-only folder: the run goes on without keeping its results
            resume_dir = None  # (the output's own write then names the output if it fails too)
        done += weights.get(key, 1)
        if progress:
            progress(done, total)


def _load(resume_dir: Path | None, tasks: dict) -> dict:
    results = {}
    if resume_dir is None or not resume_dir.is_dir():
        return results
    for key in tasks:
        path = resume_dir / f"{key}.json"
        with contextlib.suppress(OSError, ValueError):  # a missing or damaged file: compute again
            results[key] = json.loads(path.read_text(encoding="utf-8"))
    return results


def _save(resume_dir: Path | None, key: str, result) -> None:
    if resume_dir is None:
        return
    from core.io.geojson import atomic_write_text

    resume_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(resume_dir / f"{key}.json", json.dumps(result, separators=(",", ":")))


def discard(resume_dir: Path | None) -> None:
    """Remove a resume folder once its results are written out."""
    if resume_dir is not None:
        shutil.rmtree(resume_dir, ignore_errors=True)
