"""core.warmup: the background compiler of the first start."""

from __future__ import annotations

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
