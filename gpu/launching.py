"""Kernel launches: plans replayed cheaply, and persistent grids whose blocks are all resident.

numba packs every argument of every launch again (docs/notes/gpu.md), so
:class:`LaunchList` packs a plan's launches once and replays them.
"""

from __future__ import annotations

from gpu.device import multiprocessor_count, simulator

__all__ = ["LaunchList", "launch_resident", "run_launches"]


def run_launches(launches) -> None:
    """Launch each ``(kernel, launch configuration, arguments)`` in order.

    The configuration is kept apart because the simulator's ``kernel[grid, block]``
    configures the kernel object itself.
    """
    for kernel, launch, args in launches:
        kernel[launch](*args)


def _packed(kernel, launch, args):
    """One launch packed once for ``cuda.core.launch``: ``(function, LaunchConfig, params)``.

    None where packing is not possible (the simulator, another numba-cuda version).
    """
    try:
        from cuda.core import LaunchConfig
        from numba.cuda.cudadrv import driver

        compiled = kernel.overloads[tuple(kernel.typeof_pyval(arg) for arg in args)]
        stream = driver._to_core_stream(0)
        params, writeback = [], []
        for arg_type, value in zip(compiled.argument_types, args):
            compiled._prepare_args(arg_type, value, stream, writeback, params)
        shared = launch[3] if len(launch) > 3 else 0
        config = LaunchConfig(grid=launch[0], block=launch[1], shmem_size=shared)
        return compiled._codelibrary.get_cufunc().kernel, config, params
    except Exception:  # noqa: BLE001 - any failure means: launch the ordinary way
        return None


#: Runs of a :class:`LaunchList` the ordinary way before it is packed: packing costs about what one ordinary
#: run does, so a plan run once (a new problem shape, as most clicks' are) is never packed.
PACK_AFTER_RUNS = 1


class LaunchList:
    """Fixed launches ``(kernel, launch configuration, arguments)``, replayed cheaply.

    The first :data:`PACK_AFTER_RUNS` + 1 runs launch the ordinary way (the
    first compiles the kernels) and the last of them packs the launches; later
    runs replay the packed launches where packing is available.
    """

    def __init__(self, launches: list):
        self.launches = launches
        self.packed = None  # None: not yet tried; False: not available
        self.runs = 0

    def run(self) -> None:
        """Launch them all, in order, on the default stream."""
        if self.packed:
            from cuda.core import launch
            from numba.cuda.cudadrv import driver

            stream = driver._to_core_stream(0)
            for function, launch_config, params in self.packed:
                launch(stream, launch_config, function, *params)
            return
        run_launches(self.launches)
        self.runs += 1
        if self.packed is None and self.runs > PACK_AFTER_RUNS:
            packed = [_packed(*entry) for entry in self.launches]
            self.packed = packed if all(entry is not None for entry in packed) else False


def launch_resident(dispatcher, args, threads: int, per_sm: int = 0) -> int:
    """Launch ``dispatcher(*args)`` on a grid whose blocks can all be resident; returns the block count.

    ``per_sm`` > 0 asks for that many blocks per multiprocessor (capped by the
    residency limit), 0 takes the limit; one block under the simulator.
    """
    if simulator():
        dispatcher[1, threads](*args)
        return 1
    kernel = dispatcher.specialize(*args)  # compiled for these argument types
    try:
        limit = int(next(iter(kernel.overloads.values())).max_cooperative_grid_blocks(threads))
    except Exception:  # no occupancy query here: two blocks per multiprocessor fit these kernels
        limit = 2 * multiprocessor_count()
    blocks = max(1, min(limit, per_sm * multiprocessor_count()) if per_sm > 0 else limit)
    kernel[blocks, threads](*args)
    return blocks
