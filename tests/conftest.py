"""Shared test setup: offscreen Qt and the ../shared/data folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from tests.shared_data import SHARED_DATA  # noqa: E402


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The ../shared/data folder; skips the test when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data folder {SHARED_DATA} is absent (it is not part of a fresh clone)")
    return SHARED_DATA
