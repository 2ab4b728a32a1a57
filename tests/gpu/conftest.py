"""GPU test setup: kernels run on a real GPU, or under the CUDA simulator in a subprocess.

``NUMBA_ENABLE_CUDASIM`` must be set before numba.cuda is first imported, and
setting it in this process would also turn on the "GPU" for every other test
(``core.engine.gpu_available()`` says True under the simulator).  So a plain
``pytest`` run leaves the environment alone: tests marked ``kernels`` are
skipped here and run in a child pytest with ``NUMBA_ENABLE_CUDASIM=1`` (see
``test_kernels_under_cuda_simulator`` in each GPU test module), where the
launch configuration of :mod:`gpu.config` is patched small so that launches
span several blocks and a partial last block.  On a machine with a GPU they
run here, on the GPU, at the default configuration.  Tests marked ``gpu``
need a real GPU (full sizes) and are skipped elsewhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
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


def run_kernels_under_simulator(test_file: str, timeout_s: float = 900) -> None:
    """Run the ``kernels`` tests of one module in a child pytest under the simulator.

    Skips when already under the simulator; fails with the child's output when
    any of its tests fails.
    """
    if SIMULATOR:
        pytest.skip("already under the CUDA simulator")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONUNBUFFERED="1")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "kernels", test_file]
    child = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s)
    assert child.returncode == 0, f"simulator run failed:\n{child.stdout[-12000:]}\n{child.stderr[-4000:]}"
    assert " passed" in child.stdout, child.stdout[-4000:]
