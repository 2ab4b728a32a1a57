"""Beams of the KP1 state lists on a second core: incumbents for the exact lists while they run.

A beam is :func:`core.knapsack.states.expand_core` keeping only the states of
highest Dantzig bound after each step (a heuristic: it finds good solutions
fast but proves nothing).  :class:`Beams` runs beams of doubling width in a
thread beside the exact lists; both are compiled without the GIL, so on two
cores the beams cost the lists no time.  Each better value a beam finds goes
into a shared cell that the exact lists read before every step and prune
against.  When the lists end, the beams stop, and the better of the two
solutions is the answer: the lists proved that nothing beats the best value
they saw, theirs or the beams'.  Notes: docs/notes/knapsack.md, "Beams on the
second core".
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from core.knapsack.states import StateRun, backtrack, expand_core

__all__ = ["BUDGET_SHARE", "FIRST_WIDTH", "LAST_WIDTH", "NO_BEAMS", "START_DELAY_S", "Beams", "beam_states", "cores"]

#: The first and the widest beam (states kept per step); each beam after the first is twice as wide.
FIRST_WIDTH, LAST_WIDTH = 2**12, 2**20
#: Share of the state budget (``max_states``) the beams may hold; the exact lists keep the rest.
BUDGET_SHARE = 8
#: Seconds the thread waits before its first beam: exact runs shorter than this (most of Pisinger's hard
#: instances) would pay the beams' start, about 1 ms, for incumbents that come too late to help them.
START_DELAY_S = 0.02


def cores() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not Linux)
        return os.cpu_count() or 1


def beam_states(width: int, steps: int) -> int:
    """Most states a beam of ``width`` holds over ``steps`` core steps, as expand_core counts them
    (a snapshot of at most ``width`` states every 64 steps; two lists and two merge targets of up to
    ``4 width + 2`` states each, as their buffers grow by doubling)."""
    return width * (steps // 64 + 1) + 4 * (4 * width + 2)


#: Most threads the beams keep (one per solve running at once; a solve beyond them waits for one).
MAX_THREADS = 32
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _threads() -> ThreadPoolExecutor:
    """The beams' threads, started on first use and kept: a thread of its own cost each long run about
    0.15 ms to start and join (a third of an uncorrelated n = 10000 solve that ends long before its beams
    would begin)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="kp1-beams")
        return _pool


def _forget_threads() -> None:
    """In a forked child: the parent's threads did not come along, so the child starts its own."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_threads)


class Beams:
    """Beams of doubling width in a thread, from :data:`FIRST_WIDTH` while the budget allows (at most
    :data:`LAST_WIDTH`), until :meth:`stop`.

    ``shared`` is the (1,) int64 cell the exact lists read (``expand_core``'s ``shared``); it starts
    at ``incumbent``.  Use as a context manager around the exact run: entering hands the beams to one
    of the kept threads (:func:`_threads`), leaving stops them (within one merge of 65536 states, or at
    once while they still wait :data:`START_DELAY_S`) and re-raises anything they raised.  With one
    CPU, or a budget too small for the first beam, no beam runs.
    """

    def __init__(self, profits, weights, capacity, efficiency, removable, addable, break_item, incumbent,
                 upper_bound, max_states):
        self.shared = np.array([incumbent, incumbent, 0], np.int64)  # (the exact lists' progress in [1:3])
        self.value, self.taken = int(incumbent), None
        self.widths = []  # the beams run, in order: (width, best value found or None)
        self._stop = np.zeros(1, np.uint8)
        self._stopped = threading.Event()  # set with _stop: ends the thread's wait before its first beam
        self._error = None
        self._args = (profits, weights, np.int64(capacity), efficiency, removable, addable, break_item,
                      np.int64(weights[:break_item].sum()), np.int64(profits[:break_item].sum()),
                      np.int64(upper_bound), int(max_states))
        steps = len(removable) + len(addable)
        self.running = cores() >= 2 and beam_states(FIRST_WIDTH, steps) <= max_states
        # "waiting" (queued, or in the wait before the first beam: stop() need not wait), "running"
        # (stop() waits for _finished), "over"; changed under _phase_lock
        self._phase = "waiting" if self.running else "over"
        self._phase_lock = threading.Lock()
        self._finished = threading.Event()

    def __enter__(self):
        if self.running:
            _threads().submit(self._run)
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def stop(self):
        """Stop the beams and wait for the thread; raises what the thread raised."""
        self._stop[0] = 1
        self._stopped.set()
        with self._phase_lock:
            running, self._phase = self._phase == "running", "over"
        if running:
            self._finished.wait()
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _run(self):
        if self._stopped.wait(START_DELAY_S):
            return
        with self._phase_lock:
            if self._phase != "waiting":
                return
            self._phase = "running"
        try:
            self._beams()
        except BaseException as error:  # handed to the caller by stop()
            self._error = error
        finally:
            self._finished.set()

    def _beams(self):
        (profits, weights, capacity, efficiency, removable, addable, b, break_weight, break_profit, upper_bound,
         max_states) = self._args
        steps = len(removable) + len(addable)
        width = FIRST_WIDTH
        while not self._stop[0] and width <= LAST_WIDTH and beam_states(width, steps) <= max_states:
            if self.value >= upper_bound:
                return
            run = StateRun(expand_core(
                profits, weights, capacity, efficiency, removable, addable, break_weight, break_profit,
                float(efficiency[b]), np.int64(self.value), upper_bound, np.int64(2**62),
                np.int64(2**62), np.int64(max_states), False, self._stop, np.int64(width), self.shared))
            found = None
            if run.best_step >= 0 and run.best > self.value:
                self.taken = backtrack(run, profits, weights, b)
                self.value = found = int(profits[self.taken].sum())
            self.widths.append((width, found))
            width *= 2

    def better(self, taken: np.ndarray) -> np.ndarray:
        """``taken`` or the beams' solution (bool masks over the efficiency order), whichever is worth more."""
        profits = self._args[0]
        if self.taken is None or self.value <= int(profits[taken].sum()):
            return taken
        return self.taken


class _NoBeams:
    """Stands in for :class:`Beams` where none can run (a run with nothing to gain, or no budget for them):
    building a Beams, with its events and lock, cost a quick run a tenth of an easy instance's solve."""

    running = False
    widths = ()

    @staticmethod
    def better(taken: np.ndarray) -> np.ndarray:
        return taken

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


NO_BEAMS = _NoBeams()
