"""Shared test setup: offscreen Qt, hypothesis profiles and the ../shared/data folder.

Hypothesis runs the same examples on every run by default (profile ``repeatable``),
so that a suite that passed once passes again; ``HYPOTHESIS_PROFILE=explore``
draws new examples each run to look for new failures.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
from hypothesis import settings

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

from tests.shared_data import SHARED_DATA  # noqa: E402


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The ../shared/data folder; skips the test when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data folder {SHARED_DATA} is absent (it is not part of a fresh clone)")
    return SHARED_DATA


@pytest.fixture(autouse=True, scope="module")
def collector_left_on():
    """Fails a module that leaves Python's garbage collector off: the rest of the suite ran without it once
    (a fixture of tests/core/test_gc_pause.py), which hides what the product's own pauses leave behind."""
    yield
    assert gc.isenabled(), "a test of this module left Python's garbage collector off (core.gc_pause, gc.disable)"

