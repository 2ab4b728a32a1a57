"""WorkerJob: cancel answers at once, even while the work cannot look at its token."""

from __future__ import annotations

import threading

from app.worker_job import WorkerJob


def test_cancel_is_reported_at_once_and_the_late_result_is_dropped(qtbot):
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def work(token, report):  # a step that never looks at the token (like json.loads of a large file)
        started.set()
        release.wait(30)
        report(1, 1, "late")
        finished.set()
        return "result"

    job = WorkerJob(work, "failed")
    seen = []
    for name in ("progress", "done", "failed", "cancelled"):
        getattr(job, name).connect(lambda *args, name=name: seen.append(name))
    job.start()
    assert started.wait(30)
    job.cancel()
    assert seen == ["cancelled"] and job.token.cancelled  # before the work has returned
    release.set()
    assert job.wait(30_000) and finished.is_set()
    qtbot.wait(50)  # let the worker's queued signals arrive: they are dropped
    assert seen == ["cancelled"]


def test_a_job_that_ends_reports_once(qtbot):
    job = WorkerJob(lambda token, report: (report(1, 2, "half"), 42)[1], "failed")
    seen = []
    job.progress.connect(lambda *args: seen.append(("progress", args)))
    job.done.connect(lambda result: seen.append(("done", result)))
    with qtbot.waitSignal(job.done, timeout=30_000):
        job.start()
    job.cancel()  # after the end: nothing more
    assert seen == [("progress", (1, 2, "half")), ("done", 42)]


def test_a_failure_is_reported_once(qtbot):
    def work(token, report):
        raise ValueError("bad input")

    job = WorkerJob(work, "Could not do it")
    reports = []
    job.failed.connect(reports.append)
    with qtbot.waitSignal(job.failed, timeout=30_000):
        job.start()
    assert len(reports) == 1 and "bad input" in str(vars(reports[0]))
