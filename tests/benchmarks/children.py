"""One call in a forked child process, abandoned past a wait: how the knapsack benchmarks time a solve.

A fork shares the parent's compiled solvers (nothing is compiled within the
timing), and a solve that runs too long, or a solver that ends the process
(combo on some failures), is cut off without harming the benchmark.
"""

from __future__ import annotations

import multiprocessing

__all__ = ["REPEAT", "REPEAT_BELOW_S", "in_forked_child", "least_of_repeats"]

#: A timed call is repeated up to REPEAT times while the calls so far took less than REPEAT_BELOW_S in all,
#: and the least time counts (:func:`least_of_repeats`): the first solves in a forked child pay page faults
#: for the memory it shares with the parent, which a long-lived process (the GUI) pays once, and one call of
#: a millisecond on the Intel Xeon VM varies by half.
REPEAT, REPEAT_BELOW_S = 5, 1.0


def in_forked_child(function, args: tuple, wait_s: float):
    """``function(*args)`` run in a forked child: its result, or None when it gave none within ``wait_s`` (the
    child is then killed) or the child ended without one."""
    context = multiprocessing.get_context("fork")
    parent, child = context.Pipe(duplex=False)
    process = context.Process(target=_send, args=(child, function, args))
    process.start()
    child.close()  # the parent's copy of the child's end: the child's exit then ends the wait
    try:
        out = parent.recv() if parent.poll(wait_s) else None
    except EOFError:
        out = None
    process.kill()
    process.join()
    return out


def _send(conn, function, args):
    conn.send(function(*args))


def least_of_repeats(once):
    """``(result, seconds)`` of ``once()`` (which returns both), called as :data:`REPEAT` says: the last
    result and the least of the times."""
    seconds = []
    while not seconds or (len(seconds) < REPEAT and sum(seconds) < REPEAT_BELOW_S):
        result, took = once()
        seconds.append(took)
    return result, min(seconds)
