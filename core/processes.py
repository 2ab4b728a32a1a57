"""Ending a child process (``multiprocessing.Process``) that a cancel or a shutdown no longer waits for."""

from __future__ import annotations

__all__ = ["STOP_TIMEOUT_S", "end_process"]

#: How long (s) a terminated child may take to go before it is killed.
STOP_TIMEOUT_S = 2.0


def end_process(process, timeout_s: float = STOP_TIMEOUT_S) -> None:
    """Terminate ``process`` if it still runs, kill it if it has not gone within ``timeout_s``, reap and close it."""
    if process.is_alive():
        process.terminate()
        process.join(timeout_s)
    if process.is_alive():
        process.kill()
    process.join()
    process.close()
