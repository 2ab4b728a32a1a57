"""The device layer (gpu/device.py): workspace buffers, caches, budgets, out-of-memory errors.

Tests marked ``kernels`` allocate device arrays: on a GPU, or under the CUDA
simulator in the child pytest of :func:`test_kernels_under_cuda_simulator`.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from core.memory import resolve_budget
from gpu import device
from tests.gpu.conftest import ROOT, run_kernels_under_simulator

kernels = pytest.mark.kernels


@pytest.fixture(autouse=True)
def empty_workspace():
    device.release_workspace()
    yield
    device.release_workspace()


def test_importing_the_device_layer_loads_no_numba_cuda():
    code = "import sys, gpu.device; print(any(m.startswith('numba.cuda') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_an_explicit_budget_is_validated_and_kept(monkeypatch):
    monkeypatch.setattr(device, "free_bytes", lambda: 10_000)
    assert device.budget_bytes(1234, 0.5) == 1234
    with pytest.raises(ValueError, match="memory_budget_bytes"):
        device.budget_bytes(0, 0.5)


def test_the_default_budget_is_a_share_of_the_free_memory(monkeypatch):
    monkeypatch.setattr(device, "free_bytes", lambda: 10_000)
    assert device.budget_bytes(None, 0.7) == 7000
    monkeypatch.setattr(device, "free_bytes", lambda: None)  # unknown (the simulator): the host's default
    assert 0 < device.budget_bytes(None, 0.7) <= resolve_budget(None) * 1.01


def test_release_calls_every_registered_cache(monkeypatch):
    released = []
    monkeypatch.setattr(device, "_caches", [])
    device.register_cache(lambda: released.append("a"), lambda: 0)
    device.register_cache(lambda: released.append("b"))
    assert device.held_bytes() == 0
    device.release_workspace()
    assert released == ["a", "b"]


def test_cuda_out_of_memory_becomes_gpu_memory_error(monkeypatch):
    from numba.cuda.cudadrv.driver import CudaAPIError

    released = []
    monkeypatch.setattr(device, "release_workspace", lambda: released.append(True))
    with pytest.raises(device.GpuMemoryError, match="ran out of memory") as caught:
        with device.memory_errors():
            raise CudaAPIError(2, "CUDA_ERROR_OUT_OF_MEMORY")
    assert isinstance(caught.value, MemoryError) and released == [True]
    with pytest.raises(CudaAPIError):  # any other CUDA error passes unchanged
        with device.memory_errors():
            raise CudaAPIError(700, "CUDA_ERROR_ILLEGAL_ADDRESS")
    with pytest.raises(KeyError):
        with device.memory_errors():
            raise KeyError("x")
    assert released == [True]


def test_gpu_memory_error_is_re_exported_where_it_was():
    import gpu.knapsack
    import gpu.polyline
    from gpu.polyline.solve import GpuMemoryError

    assert gpu.polyline.GpuMemoryError is GpuMemoryError is device.GpuMemoryError is gpu.knapsack.GpuMemoryError


@kernels
def test_a_buffer_is_reused_for_the_same_name():
    first = device.buffer("test.a", (3, 4), np.float32)
    assert first.shape == (3, 4) and first.dtype == np.float32
    assert device.buffer("test.a", (3, 4), np.float32) is first  # no new view
    held = device.held_bytes()
    smaller = device.buffer("test.a", 5, np.int16)  # carved from the same bytes
    assert smaller.shape == (5,) and device.held_bytes() == held
    larger = device.buffer("test.a", 100, np.float64)  # grows
    assert larger.shape == (100,) and device.held_bytes() == held - 48 + 800
    larger.copy_to_device(np.arange(100, dtype=np.float64))
    assert device.buffer("test.a", 100, np.float64).copy_to_host()[99] == 99
    device.buffer("test.b", 10, np.uint8)
    assert device.held_bytes() == 810
    device.release_workspace()
    assert device.held_bytes() == 0


@kernels
def test_a_buffer_outside_the_workspace_is_not_kept():
    array = device.buffer("test.c", 16, np.int32, keep=False)
    assert array.shape == (16,) and device.held_bytes() == 0
    assert device.buffer("test.c", (0, 4), np.int32).shape == (0, 4)


@kernels
def test_every_thread_of_a_block_shares_its_static_shared_array(monkeypatch):
    """Under the simulator, threads that switch while the block's shared array is first made still share
    one (tests/gpu/conftest.py locks numba-cuda's unlocked allocation; without it, a reduction rarely read
    another array's garbage and the bent extraction scored 4.127 against the CPU's 4.674)."""
    import time

    from tests.gpu.conftest import SIMULATOR
    from tests.gpu.shared_array_kernel import THREADS, neighbours

    if SIMULATOR:  # a thread switch as each thread makes the array: the window of the race, made likely
        real_empty = np.empty

        def switching_empty(*args, **kwargs):
            time.sleep(0)
            return real_empty(*args, **kwargs)

        monkeypatch.setattr(np, "empty", switching_empty)
    out = np.zeros((2, THREADS))
    neighbours[2, THREADS](out)
    np.testing.assert_array_equal(out, np.tile((np.arange(THREADS) + 1) % THREADS + 1.0, (2, 1)))


def test_kernels_under_cuda_simulator():
    run_kernels_under_simulator(__file__)
