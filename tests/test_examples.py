"""The Examples sections of the public entries' docstrings, run as doctests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = (
    "core.polyline.dispatch",  # core.polyline.solve
    "core.extraction.pipeline",  # core.extract
    "core.extraction.guides",  # build_guides
    "core.knapsack.dispatch",  # core.knapsack.solve
    "core.knapsack",
    "app.model.events",
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed (output above)"
