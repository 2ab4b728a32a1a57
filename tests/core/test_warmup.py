"""core.warmup: the background compiler of the first start."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from core import warmup

ROOT = Path(__file__).resolve().parents[2]


def test_compile_kernels_runs_every_scoring_mode_and_the_dp_and_fills_the_cache():
    warmup.compile_kernels()  # tiny inputs: raises if any kernel fails on them
    assert not warmup.cache_is_cold()


def test_an_empty_cache_is_cold(tmp_path):
    code = "from core import warmup; print(warmup.cache_is_cold())"
    env = {"NUMBA_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    cold = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert cold.stdout.strip() == "True", cold.stderr


def test_the_background_compiler_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("LINESNAP_PRECOMPILE", "0")
    monkeypatch.setattr(warmup, "cache_is_cold", lambda: True)
    assert warmup.start_in_background() is None


_NEW_SIGNATURES_OF_THE_DEMO_CLICK = """
import gc, json, sys
from numba.core.dispatcher import Dispatcher
from core import warmup
from core.extraction import ExtractionSettings, extract
from core.io.raster import open_raster

def signatures():
    return {(d.py_func.__module__, d.py_func.__qualname__, str(sig))
            for d in gc.get_objects() if isinstance(d, Dispatcher) for sig in d.signatures}

warmup.compile_kernels()
before = signatures()
demo = json.load(open(sys.argv[2]))["demo"]
with open_raster(sys.argv[1]) as raster:
    extract(raster, tuple(demo["start"]), tuple(demo["end"]), ExtractionSettings(**demo["settings"]))
print(json.dumps(sorted(signatures() - before)))
"""


def test_the_background_compiler_compiles_every_kernel_of_the_sample_scenes_first_click():
    # serial twins for small stages, parallel kernels for large ones: both kinds must be there
    from tests.core.extraction.test_sample_scene import SCENE, TRUTH

    run = subprocess.run([sys.executable, "-c", _NEW_SIGNATURES_OF_THE_DEMO_CLICK, str(SCENE), str(TRUTH)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.strip().splitlines()[-1]) == []


def test_the_knapsack_cache_is_cold_where_empty_and_warm_after_a_solve(tmp_path):
    from core.knapsack import KP1, solve

    code = "from core import warmup; print(warmup.knapsack_cache_is_cold())"
    env = {"NUMBA_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    cold = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert cold.stdout.strip() == "True", cold.stderr
    solve(KP1([60, 100, 120], [10, 20, 30], 50), backend="cpu")  # through the first pass: cached here
    assert not warmup.knapsack_cache_is_cold()
