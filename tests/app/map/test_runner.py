"""The extraction runner: one worker, pieces in order, stale previews dropped, shared results, errors."""

from __future__ import annotations

import threading
import time

import pytest

from app.map.runner import PREVIEW_PATIENCE_S, ExtractionRunner
from core.cancel import Cancelled


class StubExtract:
    """Records calls; each call waits until released (or returns at once when ``auto``)."""

    def __init__(self, auto=True):
        self.calls = []
        self.tokens = []
        self.auto = auto
        self.release = threading.Semaphore(0)

    def __call__(self, image, start, end, settings, cancel=None):
        self.calls.append((image, start, end, settings))
        self.tokens.append(cancel)
        if not self.auto:
            deadline = time.monotonic() + 10
            while not self.release.acquire(timeout=0.01):  # like core.extract: stops when cancelled
                if cancel is not None and cancel.cancelled:
                    raise Cancelled("the extraction was cancelled")
                assert time.monotonic() < deadline
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
    runner.piece_dropped.connect(lambda pid: events.append(("dropped", pid)))
    return events


def test_pieces_run_in_order_from_the_start_they_were_given(qtbot, runner):
    stub = StubExtract()
    r = runner(stub)
    events = collect(r)
    r.submit_piece(1, (0.0, 0.0), (10, 0), "S")
    r.submit_piece(2, (10.0, 1.0), (20, 0), "S")  # the tool asks once piece 1's snapped end is known
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
    r.submit_piece(7, (0, 0), (5, 5), "S")  # the click where the cursor rests
    stub.release.release()
    qtbot.waitUntil(lambda: len(events) == 2, timeout=5000)
    assert {e[0] for e in events} == {"preview", "piece"} and len(stub.calls) == 1
    r.submit_piece(8, (0, 0), (5, 5), "S")  # the preview's result is still at hand
    qtbot.waitUntil(lambda: len(events) == 3, timeout=5000)
    assert events[-1][:2] == ("piece", 8) and len(stub.calls) == 1
    r.submit_piece(9, (0, 0), (5, 5), "other settings")
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
    r.submit_piece(3, (0, 0), (3, 0), "S")
    for _ in range(3):
        stub.release.release()
    qtbot.waitUntil(lambda: len(events) == 3, timeout=5000)
    assert [(e[0], e[1]) for e in events] == [("preview", 1), ("piece", 3), ("preview", 2)]


def test_errors_come_back_as_reports(qtbot, runner):
    r = runner(StubExtract())
    events = collect(r)
    r.submit_piece(1, (0, 0), (3, 0), "boom")
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
    r.submit_piece(1, (0, 0), (3, 0), "S")
    qtbot.waitUntil(lambda: len(stub.calls) == 1, timeout=5000)
    r.submit_piece(2, (0, 0), (4, 0), "S")
    r.set_image("other")
    stub.release.release()
    qtbot.waitUntil(lambda: bool(idle), timeout=5000)
    assert events == [] and len(stub.calls) == 1


def holding_the_first_job(qtbot, runner, submit):
    """A runner whose stub holds the job that ``submit(runner)`` started: (runner, stub, events)."""
    stub = StubExtract(auto=False)
    r = runner(stub)
    events = collect(r)
    submit(r)
    qtbot.waitUntil(lambda: len(stub.calls) == 1, timeout=5000)
    return r, stub, events


def test_a_new_image_cancels_the_running_extraction(qtbot, runner):
    r, stub, events = holding_the_first_job(qtbot, runner, lambda r: r.submit_piece(1, (0, 0), (3, 0), "S"))
    r.set_image("other")
    assert stub.tokens[0].cancelled
    qtbot.waitUntil(lambda: not r.busy, timeout=5000)
    assert events == []  # a previous image's piece is neither done nor reported dropped


def test_shutdown_cancels_the_running_extraction(qtbot, runner):
    r, stub, _ = holding_the_first_job(qtbot, runner, lambda r: r.submit_preview(1, (0, 0), (3, 0), "S"))
    began = time.monotonic()
    r.shutdown()  # returns without anyone releasing the stub
    assert stub.tokens[0].cancelled and time.monotonic() - began < 5


def test_dropped_pieces_leave_the_queue_and_a_running_one_stops(qtbot, runner):
    stub = StubExtract(auto=False)
    r = runner(stub)
    events = collect(r)
    for piece_id in (1, 2, 3):
        r.submit_piece(piece_id, (0, 0), (piece_id, 0), "S")
    qtbot.waitUntil(lambda: len(stub.calls) == 1, timeout=5000)
    r.drop_pieces([1, 3])
    assert stub.tokens[0].cancelled
    qtbot.waitUntil(lambda: len(stub.calls) == 2, timeout=5000)  # 1 stopped without a release
    stub.release.release()
    qtbot.waitUntil(lambda: len(events) == 3, timeout=5000)
    piece_2 = ("piece", 2, ("result", "img", (0, 0), (2, 0), "S"))
    assert sorted(events, key=str) == [("dropped", 1), ("dropped", 3), piece_2]
    assert [c[2] for c in stub.calls] == [(1, 0), (2, 0)]  # 3 never ran
    r.drop_pieces([2])  # done already: nothing to report
    qtbot.wait(50)
    assert len(events) == 3


def test_a_running_preview_stops_when_no_preview_is_wanted_unless_it_serves_a_piece(qtbot, runner):
    r, stub, events = holding_the_first_job(qtbot, runner, lambda r: r.submit_preview(1, (0, 0), (5, 5), "S"))
    r.drop_preview()
    assert stub.tokens[0].cancelled
    qtbot.waitUntil(lambda: not r.busy, timeout=5000)
    r.submit_preview(2, (0, 0), (6, 6), "S")
    qtbot.waitUntil(lambda: len(stub.calls) == 2, timeout=5000)
    r.submit_piece(7, (0, 0), (6, 6), "S")  # the click where the cursor rests
    r.drop_preview()
    assert not stub.tokens[1].cancelled
    stub.release.release()
    qtbot.waitUntil(lambda: ("piece", 7) in [e[:2] for e in events], timeout=5000)
    assert [e[:2] for e in events] == [("preview", 2), ("piece", 7)]


def test_a_slow_preview_gives_way_to_a_newer_one_after_the_patience(qtbot, runner):
    r, stub, events = holding_the_first_job(qtbot, runner, lambda r: r.submit_preview(1, (0, 0), (1, 0), "S"))
    r.submit_preview(2, (0, 0), (2, 0), "S")
    assert not stub.tokens[0].cancelled  # a quick preview would come back before the patience ends
    qtbot.waitUntil(lambda: stub.tokens[0].cancelled, timeout=int(3000 * PREVIEW_PATIENCE_S + 1000))
    qtbot.waitUntil(lambda: len(stub.calls) == 2, timeout=5000)
    stub.release.release()
    qtbot.waitUntil(lambda: len(events) == 1, timeout=5000)
    assert events[0][:2] == ("preview", 2)


def test_a_preview_that_returns_within_the_patience_is_not_cancelled(qtbot, runner):
    r, stub, events = holding_the_first_job(qtbot, runner, lambda r: r.submit_preview(1, (0, 0), (1, 0), "S"))
    r.submit_preview(2, (0, 0), (2, 0), "S")
    stub.release.release()
    stub.release.release()
    qtbot.waitUntil(lambda: len(events) == 2, timeout=5000)
    qtbot.wait(int(1500 * PREVIEW_PATIENCE_S))
    assert [e[:2] for e in events] == [("preview", 1), ("preview", 2)]
    assert not any(token.cancelled for token in stub.tokens)


def test_the_warm_up_gives_way_to_real_work_at_once(qtbot, runner):
    r, stub, events = holding_the_first_job(qtbot, runner, lambda r: r.submit_warmup((0, 0), (1, 0), "S"))
    r.submit_piece(1, (0, 0), (2, 0), "S")
    assert stub.tokens[0].cancelled
    qtbot.waitUntil(lambda: len(stub.calls) == 2, timeout=5000)
    stub.release.release()
    qtbot.waitUntil(lambda: len(events) == 1, timeout=5000)
    assert events[0][:2] == ("piece", 1)
