"""GPU test setup: kernels run on a real GPU, or under the CUDA simulator in a subprocess.

``NUMBA_ENABLE_CUDASIM`` must be set before numba.cuda is first imported, and
setting it in this process would also turn on the "GPU" for every other test
(``core.engine.gpu_available()`` says True under the simulator).  So a plain
``pytest`` run leaves the environment alone: tests marked ``kernels`` are
skipped here and run in a child pytest with ``NUMBA_ENABLE_CUDASIM=1`` (see
``test_kernels_under_cuda_simulator`` in each GPU test module), where the
launch configuration of :mod:`gpu.config` is patched small so that launches
span several blocks and a partial last block.  In one process, all the
children of a run start as soon as collection ends and run beside the rest
of the suite (the simulator is single-threaded Python); each test then waits
for its own child.  Under pytest-xdist (``-n 2``, the README's command) each
runner test starts its child when it runs, beside the other worker.  On a machine with a GPU they
run here, on the GPU, at the default configuration.  Tests marked ``gpu``
need a real GPU (full sizes) and are skipped elsewhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

#: The launch configuration under the simulator: tiny blocks, several of them.
SIMULATOR_CONFIG = {
    "THREADS_PER_BLOCK": 8,
    "WINDOW_THREADS": 4,
    "MITM_THREADS_PER_STATE": 2,
    "MITM_BLOCK_THREADS": 4,
    "RMQ_BLOCK_BITS": 2,
    "MERGE_THREADS": 4,
    "MERGE_BLOCKS": 3,
}


def _real_gpu() -> bool:
    if SIMULATOR:
        return False
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:
        return False


REAL_GPU = _real_gpu()
KERNELS_RUN_HERE = SIMULATOR or REAL_GPU


def _lock_simulator_shared_arrays() -> None:
    """Give every thread of a simulated block the same static shared array.

    The simulator (numba-cuda 0.30.4, ``FakeCUDAShared.array``) makes a static
    ``cuda.shared.array`` on its first use in a launch without a lock: two
    threads of the first block that both find none make one each and keep it,
    so a reduction (kernels_dp.group_max_argmax) rarely reads ``np.empty``
    garbage and picks a worse path.  The same allocation, keyed by call site as
    there, under a lock.
    """
    import threading

    import numpy as np
    from numba.core import types
    from numba.cuda.simulator import kernelapi
    from numba.np import numpy_support

    real_array = kernelapi.FakeCUDAShared.array
    lock = threading.Lock()

    def array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:  # dynamic shared memory is one buffer for all
            return real_array(self, shape, dtype, alignment)
        caller = sys._getframe(1)
        key = (caller.f_code.co_filename, caller.f_lineno)
        with lock:
            found = self._allocations.get(key)
            if found is None:
                if isinstance(dtype, types.Type):
                    dtype = numpy_support.as_dtype(dtype)
                found = self._allocations[key] = np.empty(shape, dtype)
        return found

    kernelapi.FakeCUDAShared.array = array


def _yield_while_polling_simulated_threads() -> None:
    """Let the simulator's block loop give up the interpreter lock at each poll.

    The simulator (numba-cuda 0.30.4, ``BlockManager.run``) runs a block's
    threads as Python threads and polls them in a busy loop (``is_alive`` on
    each, about 33 million calls in one 28 s knapsack test) that holds the
    interpreter lock as long as the threads doing the work: yielding it at
    each poll (``time.sleep(0)``) runs the knapsack kernels' tests in 18 s
    instead of 98 s of wall time (6.7 s of CPU instead of 95 s), the polyline
    ones about four times faster.  The order of events the kernels see is the
    simulator's; only the idle spinning is cut.
    """
    from numba.cuda.simulator import kernel

    alive = kernel.BlockThread.is_alive

    def is_alive(self):
        time.sleep(0)
        return alive(self)

    kernel.BlockThread.is_alive = is_alive


if SIMULATOR:
    _lock_simulator_shared_arrays()
    _yield_while_polling_simulated_threads()

#: The name of the test in each GPU module that runs its ``kernels`` tests under the simulator.
RUNNER_TEST = "test_kernels_under_cuda_simulator"

#: Simulator children started at the end of collection: test file -> (process, output file, start time).
_children: dict = {}


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "kernels: runs numba.cuda kernels (on a GPU, or in the CUDA-simulator subprocess)",
    )


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE not in Path(item.path).resolve().parents:
            continue
        if item.get_closest_marker("gpu") and not REAL_GPU:
            item.add_marker(pytest.mark.skip(reason="needs a real CUDA GPU"))
        elif item.get_closest_marker("kernels") and not KERNELS_RUN_HERE:
            item.add_marker(pytest.mark.skip(
                reason="no GPU: runs under the CUDA simulator in test_kernels_under_cuda_simulator"
            ))


@pytest.fixture(autouse=True)
def small_launches(monkeypatch):
    """Under the simulator, patch the launch configuration small."""
    if SIMULATOR:
        from gpu import config

        for name, value in SIMULATOR_CONFIG.items():
            monkeypatch.setattr(config, name, value)
    yield


def pytest_collection_finish(session):
    """Start the simulator child of every selected runner test now, all at once.

    Not in pytest-xdist's workers (``-n``): each collects every test, so each
    would start every child; there a runner test starts its own when it runs.
    """
    if KERNELS_RUN_HERE or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    for item in session.items:
        if item.name == RUNNER_TEST and HERE in Path(item.path).resolve().parents:
            _start_child(str(Path(item.path).resolve()))


def pytest_unconfigure(config):
    """Stop the children whose tests never ran (a run stopped early, by -x or Ctrl+C)."""
    for process, output, _ in _children.values():
        if process.poll() is None:
            process.kill()
            process.wait()
        output.close()
    _children.clear()


def _start_child(test_file: str) -> None:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONUNBUFFERED="1")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "kernels", test_file]
    output = tempfile.TemporaryFile(mode="w+")  # not a pipe: a long output cannot block the child
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, text=True)
    _children[test_file] = (process, output, time.monotonic())


def run_kernels_under_simulator(test_file: str, timeout_s: float = 900) -> None:
    """Run the ``kernels`` tests of one module in a child pytest under the simulator.

    Waits for the child started at the end of collection (or starts one);
    skips when already under the simulator or on a real GPU (where the
    ``kernels`` tests ran here: a simulator child would repeat them for up
    to ``timeout_s``); fails with the child's output
    when any of its tests fails or it runs past ``timeout_s`` from its start.
    """
    if SIMULATOR:
        pytest.skip("already under the CUDA simulator")
    if REAL_GPU:
        pytest.skip("the kernels tests ran on this machine's GPU in this run")
    test_file = str(Path(test_file).resolve())
    if test_file not in _children:
        _start_child(test_file)
    process, output, started = _children.pop(test_file)
    try:
        process.wait(timeout=max(1.0, timeout_s - (time.monotonic() - started)))
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    output.seek(0)
    text = output.read()
    output.close()
    assert process.returncode == 0, f"simulator run failed (exit {process.returncode}):\n{text[-16000:]}"
    assert " passed" in text, text[-4000:]
