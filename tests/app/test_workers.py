"""The extraction runner: one worker, pieces in order, stale previews dropped, shared results, errors."""

from __future__ import annotations

import threading

import pytest

from app.workers import ExtractionRunner


class StubExtract:
    """Records calls; each call waits until released (or returns at once when ``auto``)."""

    def __init__(self, auto=True):
        self.calls = []
        self.auto = auto
        self.release = threading.Semaphore(0)

    def __call__(self, image, start, end, settings):
        self.calls.append((image, start, end, settings))
        if not self.auto:
            assert self.release.acquire(timeout=10)
        if settings == "boom":
            raise ValueError("no feasible polyline")
        return ("result", image, start, end, settings)


@pytest.fixture
def runner(qtbot):
    made = []

    def make(stub):
        r = ExtractionRunner(stub)
        r.set_image("img")
        made.append((r, stub))
        return r

    yield make
    for r, stub in made:
        for _ in range(20):
            stub.release.release()
        r.shutdown()
        assert r.wait(0)


def collect(runner):
    events = []
    runner.piece_done.connect(lambda pid, res: events.append(("piece", pid, res)))
    runner.piece_failed.connect(lambda pid, rep: events.append(("piece_failed", pid, rep)))
    runner.preview_done.connect(lambda seq, res: events.append(("preview", seq, res)))
    runner.preview_failed.connect(lambda seq, rep: events.append(("preview_failed", seq, rep)))
    return events


def test_pieces_run_in_order_and_resolve_their_start_at_dispatch(qtbot, runner):
    stub = StubExtract()
    r = runner(stub)
    events = collect(r)
    starts = {"next": (0.0, 0.0)}
    r.submit_piece(1, lambda: (0.0, 0.0), (10, 0), "S")
    r.submit_piece(2, lambda: starts["next"], (20, 0), "S")
    starts["next"] = (10.0, 1.0)  # known only once piece 1 is done
    qtbot.waitUntil(lambda: len(events) == 2, timeout=5000)
    assert [e[1] for e in events] == [1, 2]
    assert stub.calls[1][1] == (10.0, 1.0)
    assert stub.calls[0][0] == "img"


def test_stale_previews_are_dropped_and_the_latest_runs(qtbot, runner):
    stub = StubExtract(auto=False)
    r = runner(stub)
    events = collect(r)
    for seq in range(1, 6):
        r.submit_preview(seq, (0, 0), (seq, 0), "S")
    qtbot.waitUntil(lambda: len(stub.calls) == 1, timeout=5000)
    stub.release.release()
    qtbot.waitUntil(lambda: len(stub.calls) == 2, timeout=5000)
    stub.release.release()
    qtbot.waitUntil(lambda: len(events) == 2, timeout=5000)
    assert [e[1] for e in events] == [1, 5]  # 2, 3 and 4 never ran
    assert [c[2] for c in stub.calls] == [(1, 0), (5, 0)]
    qtbot.waitUntil(lambda: not r.busy, timeout=5000)


def test_a_piece_takes_the_result_of_an_equal_preview(qtbot, runner):
    stub = StubExtract(auto=False)
    r = runner(stub)
    events = collect(r)
    r.submit_preview(1, (0, 0), (5, 5), "S")
    qtbot.waitUntil(lambda: len(stub.calls) == 1, timeout=5000)
    r.submit_piece(7, lambda: (0, 0), (5, 5), "S")  # the click where the cursor rests
    stub.release.release()
    qtbot.waitUntil(lambda: len(events) == 2, timeout=5000)
    assert {e[0] for e in events} == {"preview", "piece"} and len(stub.calls) == 1
    r.submit_piece(8, lambda: (0, 0), (5, 5), "S")  # the preview's result is still at hand
    qtbot.waitUntil(lambda: len(events) == 3, timeout=5000)
    assert events[-1][:2] == ("piece", 8) and len(stub.calls) == 1
    r.submit_piece(9, lambda: (0, 0), (5, 5), "other settings")
    stub.release.release()
    qtbot.waitUntil(lambda: len(events) == 4, timeout=5000)
    assert len(stub.calls) == 2


def test_pieces_come_before_waiting_previews(qtbot, runner):
    stub = StubExtract(auto=False)
    r = runner(stub)
    events = collect(r)
    r.submit_preview(1, (0, 0), (1, 0), "S")
    qtbot.waitUntil(lambda: len(stub.calls) == 1, timeout=5000)
    r.submit_preview(2, (0, 0), (2, 0), "S")
    r.submit_piece(3, lambda: (0, 0), (3, 0), "S")
    for _ in range(3):
        stub.release.release()
    qtbot.waitUntil(lambda: len(events) == 3, timeout=5000)
    assert [(e[0], e[1]) for e in events] == [("preview", 1), ("piece", 3), ("preview", 2)]


def test_errors_come_back_as_reports(qtbot, runner):
    r = runner(StubExtract())
    events = collect(r)
    r.submit_piece(1, lambda: (0, 0), (3, 0), "boom")
    r.submit_preview(2, (0, 0), (4, 0), "boom")
    qtbot.waitUntil(lambda: len(events) == 2, timeout=5000)
    kinds = {e[0]: e[2] for e in events}
    report = kinds["piece_failed"]
    assert report.message == "no feasible polyline" and report.kind == "ValueError"
    assert "Traceback" in report.details and "preview_failed" in kinds


def test_results_for_a_previous_image_are_ignored(qtbot, runner):
    stub = StubExtract(auto=False)
    r = runner(stub)
    events = collect(r)
    idle = []
    r.idle.connect(lambda: idle.append(True))
    r.submit_piece(1, lambda: (0, 0), (3, 0), "S")
    qtbot.waitUntil(lambda: len(stub.calls) == 1, timeout=5000)
    r.submit_piece(2, lambda: (0, 0), (4, 0), "S")
    r.set_image("other")
    stub.release.release()
    qtbot.waitUntil(lambda: bool(idle), timeout=5000)
    assert events == [] and len(stub.calls) == 1
