"""Where the real imagery and instances of ../shared/data live; tests skip when absent."""

from __future__ import annotations

from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


def shared_file(name: str) -> Path:
    """Path of one file (or folder) of ../shared/data; skips the calling test when absent."""
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"{path} is absent (../shared/data is not part of a fresh clone)")
    return path
