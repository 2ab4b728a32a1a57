"""Kernel launches that a plan repeats: packed once, replayed through ``cuda.core``.

numba packs every argument of every launch again (on the H100 host about
50 us for a launch with six array arguments, against 11 us for a replayed
one; BENCHMARKS.md, section gpu-polyline).  The DP plans launch the same
kernels with the same arrays each time, so :class:`LaunchList` packs them once
and replays them.  Where packing is not possible (the CUDA simulator, another
numba-cuda version) it keeps launching the ordinary way.
"""

from __future__ import annotations

__all__ = ["run_launches", "LaunchList"]


def run_launches(launches) -> None:
    """Launch each ``(kernel, launch configuration, arguments)`` in order.

    Plans keep the configuration apart from the kernel because the CUDA
    simulator's ``kernel[grid, block]`` configures the kernel object itself.
    """
    for kernel, launch, args in launches:
        kernel[launch](*args)


def _packed(kernel, launch, args):
    """One launch with numba's argument packing done once: ``(function, LaunchConfig, params)``.

    numba packs every argument of every launch again (about 10 us per array
    on the H100 host); a plan's arguments never change, so its launches are
    packed once, after a first ordinary launch compiled them, and replayed
    through ``cuda.core.launch``.  Returns None where that is not possible
    (the simulator, another numba-cuda version): the plan then keeps launching
    the ordinary way.
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


class LaunchList:
    """Fixed launches ``(kernel, launch configuration, arguments)``, replayed cheaply.

    The first :meth:`run` launches the ordinary way (compiling the kernels);
    later runs replay the launches packed once by :func:`_packed`, or keep
    launching the ordinary way when packing is not available.
    """

    def __init__(self, launches: list):
        self.launches = launches
        self.packed = None  # None: not yet tried; False: not available

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
        if self.packed is None:
            packed = [_packed(*entry) for entry in self.launches]
            self.packed = packed if all(entry is not None for entry in packed) else False
