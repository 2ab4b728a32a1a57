"""gpu.launching.LaunchList: a plan runs the ordinary way until it has run PACK_AFTER_RUNS times, then is packed."""

from __future__ import annotations

import pytest

from gpu import launching


class _Kernel:
    """Stands in for a numba dispatcher: ``kernel[config](*args)`` records the call."""

    def __init__(self, calls):
        self.calls = calls

    def __getitem__(self, config):
        return lambda *args: self.calls.append((config, args))


@pytest.mark.parametrize("pack_after", [0, 1, 3])
def test_a_plan_is_packed_only_after_it_has_run_pack_after_runs_times(monkeypatch, pack_after):
    calls, packed = [], []
    monkeypatch.setattr(launching, "PACK_AFTER_RUNS", pack_after)
    monkeypatch.setattr(launching, "_packed", lambda kernel, launch, args: packed.append(args))  # None: no packing
    plan = launching.LaunchList([(_Kernel(calls), (1, 32), ("a",)), (_Kernel(calls), (2, 32), ("b",))])
    for run in range(1, pack_after + 3):
        plan.run()
        assert len(calls) == 2 * run  # every run launched both, in order (packing is unavailable here)
        assert calls[-2:] == [((1, 32), ("a",)), ((2, 32), ("b",))]
        assert packed == ([("a",), ("b",)] if run > pack_after else [])  # tried once, after enough runs
    assert plan.packed is False
