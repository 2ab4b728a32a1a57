"""core.gc_pause: the collector paused inside, as it was after; nested and overlapping pauses."""

from __future__ import annotations

import gc
import threading

import pytest

from core.gc_pause import paused_collection


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()  # as before the test, whatever the test left (one disables it)


def test_the_collector_is_paused_inside_and_runs_again_after(collector_on):
    with paused_collection():
        assert not gc.isenabled()
        with paused_collection():
            assert not gc.isenabled()
        assert not gc.isenabled()  # (the outer pause still holds)
    assert gc.isenabled()


def test_an_error_inside_lets_the_collector_run_again(collector_on):
    with pytest.raises(KeyError), paused_collection():
        raise KeyError("x")
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled(collector_on):
    gc.disable()
    with paused_collection():
        pass
    assert not gc.isenabled()


def test_pauses_of_two_threads_that_overlap(collector_on):
    inside, leave = threading.Event(), threading.Event()

    def other():
        with paused_collection():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    with paused_collection():
        thread.start()
        inside.wait(10)
    assert not gc.isenabled()  # the other thread's pause goes on
    leave.set()
    thread.join(10)
    assert gc.isenabled()
