"""Time limits and a-priori state bounds of the knapsack state-list solvers (issue 16).

The state lists (KP1, subset sum and MCKP with ``method="auto"`` or ``"states"``)
cost what the instance's structure makes them cost, so no formula in ``n`` and
``C`` predicts their running time.  Three guards bound them instead:

- **Before any allocation**: :func:`check_first_stages` refuses a budget that
  cannot hold the lists' first buffers (as the running guard counts them) when
  no capacity DP can take over, and
  :func:`kp1_state_bound` / :func:`mckp_state_bound` give the most states the
  lists could ever hold (``min(2^core, weight span + 1, profit span + 1)``),
  quoted in the errors.
- **Memory while running**: the solvers already stop at ``budget // STATE_BYTES``
  states (``max_states``) and raise :class:`~core.knapsack.problems.MemoryBudgetError`.
- **Time while running**: :func:`time_limit` sets a deadline, and the first
  :func:`stop_flag` under it arms a stop flag that one watchdog thread, shared
  by every limit, raises at the deadline (a compiled call known to end well
  within the time left takes :func:`stop_flag_within` and arms none); the compiled loops poll it between stages (one
  byte read per stage and every 65536 states of a merge, numba-friendly: numba
  has no clock; MCKP's and KP2's numpy stages are estimated first, the KP2
  capacity DPs poll it once per item) and the solver raises
  :class:`~core.knapsack.problems.TimeLimitError` with what it reached.  The
  capacity DPs are refused at once by :func:`check_dp` when their estimated
  time exceeds what is left.  The GPU solvers wait for the device every
  ``gpu.config.KNAPSACK_POLL_LAUNCHES`` launches to check it (only under a
  limit), and estimate their one-launch DPs (:data:`GPU_DP_CELLS_PER_S`).

Limits nest (the inner one never extends the outer one) and live in a context
variable like :mod:`core.knapsack.progress`, so the solvers' twin signatures
``(problem, memory_budget_bytes)`` stay as they are.
"""

from __future__ import annotations

import math
import os
import threading
import time
from contextvars import ContextVar

import numpy as np

from core.knapsack.problems import MemoryBudgetError, TimeLimitError

__all__ = ["DP_CELLS_PER_S", "GPU_DP_CELLS_PER_S", "armed", "check", "check_dp", "check_first_stages", "check_stage",
           "count_text", "expired", "interrupt", "interrupted", "kp1_state_bound", "mckp_state_bound", "remaining_s",
           "resolve_time_limit", "stop_flag", "stop_flag_within", "time_limit"]

#: Capacity-DP cells filled per second assumed by :func:`check_dp`: a third of the ~3e9 measured
#: (docs/notes/knapsack.md, "Cost model"), so that only clearly hopeless DPs are refused.
DP_CELLS_PER_S = 1e9
#: The same for the GPU's one-launch DPs (wavefront KP1, persistent subset sum): a fifth of the
#: 5e10 cells per second the KP1 wavefront filled on the H100 (BENCHMARKS.md, knapsack-gpu).
GPU_DP_CELLS_PER_S = 1e10
#: The flag of "no limit": never set (writable, so the kernels compile one specialisation).
_NEVER = np.zeros(1, np.uint8)
_active: ContextVar = ContextVar("knapsack_time_limit", default=None)


class _Limit:
    """A time limit in force: its length, deadline (``time.monotonic``) and stop flag (None until
    :func:`stop_flag` first hands it to a compiled loop and arms the watchdog for it)."""

    __slots__ = ("deadline", "flag", "limit_s")

    def __init__(self, limit_s: float, deadline: float):
        self.limit_s, self.deadline, self.flag = limit_s, deadline, None


def resolve_time_limit(time_limit_s) -> float | None:
    """A positive finite number of seconds, or None (no limit); ValueError naming ``time_limit_s`` otherwise."""
    if time_limit_s is None:
        return None
    if type(time_limit_s) is float and 0.0 < time_limit_s < math.inf:  # (already resolved: no more checks)
        return time_limit_s
    try:
        value = float(time_limit_s)
    except (TypeError, ValueError):
        value = float("nan")
    if isinstance(time_limit_s, (bool, str, bytes)) or not (0 < value < float("inf")):  # ("5" is text)
        raise ValueError(f"time_limit_s must be a positive number of seconds or None; got {time_limit_s!r}")
    return value


class _Watchdog:
    """One daemon thread that raises the flag of every armed limit at its deadline.

    A ``threading.Timer`` per limit cost 0.1-0.2 ms to start and join (measured
    around a time-limited ``solve`` of an easy KP1, 0.4 ms in all, on a 2-core
    VM), so the thread is started once and woken only when a limit arms with an
    earlier deadline than the one it sleeps until.  A forked child starts its
    own on its first limit (threads do not survive ``fork``).
    """

    def __init__(self):
        self._reset()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._reset)

    def _reset(self):
        self._lock = threading.Lock()  # (held directly where nothing waits: Condition's own with-block is a
        self._wake = threading.Condition(self._lock)  # Python frame, a microsecond a time-limited solve)
        self._armed: list[_Limit] = []
        self._sleeps_until = math.inf
        self.interrupted = False  # (interrupt(): every limit ends now)
        self._thread: threading.Thread | None = None

    def arm(self, limit: _Limit) -> np.ndarray:
        """The stop flag of ``limit``, made and watched on the first call (raised at once where the deadline
        has passed)."""
        with self._lock:
            if limit.flag is not None:  # (armed meanwhile by another thread under the same context)
                return limit.flag
            limit.flag = np.zeros(1, np.uint8)
            if limit.deadline <= time.monotonic() or self.interrupted:
                limit.flag[0] = 1
            self._armed.append(limit)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="knapsack time limits", daemon=True)
                self._thread.start()
            elif limit.deadline < self._sleeps_until:
                self._wake.notify()
            return limit.flag

    def interrupt(self) -> None:
        """Raise every armed flag now, and every flag armed from now on."""
        with self._lock:
            self.interrupted = True
            for limit in self._armed:
                limit.flag[0] = 1

    def disarm(self, limit: _Limit) -> None:
        """Forget ``limit`` where it was armed: its flag is not raised after this returns (the thread raises
        flags under the lock)."""
        with self._lock:
            if limit.flag is not None:
                self._armed.remove(limit)  # (by identity: _Limit has no __eq__)

    def _run(self) -> None:
        with self._wake:
            while True:
                now = time.monotonic()
                pending = math.inf
                for limit in self._armed:
                    if limit.deadline <= now:
                        limit.flag[0] = 1
                    else:
                        pending = min(pending, limit.deadline)
                self._sleeps_until = pending
                self._wake.wait(None if pending == math.inf else pending - now)


_watchdog = _Watchdog()


class time_limit:  # noqa: N801 (used as a function: ``with time_limit(s):``)
    """Run the block under a time limit (None: the enclosing one, if any); the stop flag is raised at the deadline.

    A class rather than a generator context manager: that one's frames cost a time-limited solve of an easy
    instance 2 us of its 0.2 ms.
    """

    __slots__ = ("_limit", "_time_limit_s", "_token")

    def __init__(self, time_limit_s: float | None):
        self._time_limit_s = time_limit_s
        self._limit = self._token = None

    def __enter__(self) -> None:
        limit_s = resolve_time_limit(self._time_limit_s)
        outer = _active.get()
        now = time.monotonic()
        if limit_s is None or (outer is not None and outer.deadline <= now + limit_s):
            return
        self._limit = _Limit(limit_s, now + limit_s)  # (the watchdog is armed by the first stop_flag())
        self._token = _active.set(self._limit)

    def __exit__(self, *exc) -> bool:
        if self._limit is not None:
            _active.reset(self._token)
            if self._limit.flag is not None:
                _watchdog.disarm(self._limit)
        return False


def armed() -> bool:
    """Whether a time limit is in force (the GPU solvers synchronise to poll it only then)."""
    return _active.get() is not None


def stop_flag() -> np.ndarray:
    """The (1,) uint8 flag the compiled state loops poll: nonzero once the time limit has passed (the watchdog
    watches a limit from its first call of this on)."""
    limit = _active.get()
    if limit is None:
        return _NEVER
    return _watchdog.arm(limit) if limit.flag is None else limit.flag


def stop_flag_within(seconds: float) -> np.ndarray:
    """:func:`stop_flag` for a compiled call known to end within ``seconds``: the never-raised flag where more
    than that is left, so that a solve it settles arms no watchdog (a time-limited KP1 solve of 0.1 ms spent
    6-12 us arming and disarming it on the benchmark VM)."""
    limit = _active.get()
    if limit is None or (limit.flag is None and limit.deadline - time.monotonic() > seconds):
        return _NEVER
    return stop_flag()


def remaining_s() -> float:
    """Seconds left under the time limit (infinite without one)."""
    limit = _active.get()
    return float("inf") if limit is None else limit.deadline - time.monotonic()


def expired() -> bool:
    """Whether the time limit (if any) has passed, or the solve was interrupted (:func:`interrupt`)."""
    limit = _active.get()
    if limit is None:
        return False
    return (time.monotonic() >= limit.deadline or (limit.flag is not None and bool(limit.flag[0]))
            or _watchdog.interrupted)


def interrupt() -> None:
    """End every solve under a time limit now, as its deadline would, and every one started after
    (the command line's Ctrl+C: the compiled loops poll the limits' flags, not Python's signals)."""
    _watchdog.interrupt()


def interrupted() -> bool:
    """Whether :func:`interrupt` was called (in this process)."""
    return _watchdog.interrupted


def check(what: str, reached: str = "") -> None:
    """Raise :class:`TimeLimitError` when the time limit has passed (a stage boundary in Python)."""
    if expired():
        raise TimeLimitError(what, _active.get().limit_s, reached)


def check_stage(estimated_s: float, what: str, reached: str = "") -> None:
    """Raise :class:`TimeLimitError` when the limit has passed or a stage estimated at ``estimated_s`` would pass it.

    For stages that cannot poll the stop flag (one numpy sort of millions of states).
    """
    check(what, reached)
    left_s = remaining_s()
    if estimated_s > left_s:
        raise TimeLimitError(what, _active.get().limit_s,
                             f"{reached}; the next stage would take about {estimated_s:.1f} s, more than the "
                             f"{max(left_s, 0.0):.1f} s left (refused before starting)")


def check_dp(cells: float, what: str, cells_per_s: float | None = None) -> None:
    """Refuse at once a capacity DP of ``cells`` cells that would not finish within the time left.

    ``cells_per_s``: the rate assumed (default :data:`DP_CELLS_PER_S`, the CPU's; :data:`GPU_DP_CELLS_PER_S`).
    """
    check(what)
    estimated_s = float(cells) / (DP_CELLS_PER_S if cells_per_s is None else cells_per_s)
    if estimated_s > remaining_s():
        limit = _active.get()
        raise TimeLimitError(what, limit.limit_s,
                             f"estimating {cells:.1e} DP cells, about {estimated_s:.0f} s, more than the "
                             f"{max(remaining_s(), 0.0):.1f} s left (refused before starting)")


def kp1_state_bound(profits, weights, free) -> int:
    """Most states a KP1 state list over the ``free`` items can ever hold (a Python int).

    The list keeps undominated ``(weight, profit)`` pairs, strictly increasing in
    both, each the break solution changed by a subset of the free items; so at
    most ``2^core`` of them, at most one per weight and one per profit in the
    spans that those subsets reach.
    """
    free = np.asarray(free)
    core = len(free)
    weight_span = int(weights[free].sum(dtype=object)) if core else 0
    profit_span = int(profits[free].sum(dtype=object)) if core else 0
    return min(2**min(core, 4096), weight_span + 1, profit_span + 1)


def mckp_state_bound(class_profits, class_weights, capacity: int) -> int:
    """Most states an MCKP state list over these classes (each shifted to weight and profit 0) can hold.

    The product of the class sizes, at most one per weight ``0..capacity`` and one per profit.
    """
    product, profit_span = 1, 0
    for p, w in zip(class_profits, class_weights):
        product = min(product * len(w), 2**4096)
        profit_span += int(np.max(p)) if len(p) else 0
    return min(product, int(capacity) + 1, profit_span + 1)


def count_text(count: int) -> str:
    """A count for a message: ``1,234,567``, or ``about 2^4096`` when it is astronomically large."""
    return f"{count:,}" if count < 10**15 else f"about 2^{count.bit_length() - 1}"


def check_first_stages(needed_bytes: int, budget_bytes: int, what: str) -> None:
    """Refuse at once (MemoryBudgetError) a state-list solve whose first state buffers exceed the budget."""
    if needed_bytes > budget_bytes:
        raise MemoryBudgetError(f"{what} (its first state buffers)", needed_bytes, budget_bytes)
