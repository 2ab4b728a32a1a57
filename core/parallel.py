"""One lock around numba ``parallel=True`` kernels, and their read of a cancel flag.

numba picks its threading layer at the first parallel launch: OpenMP where the
runtime is present (as on the machines we measured), else TBB, else its own
``workqueue`` layer.  The workqueue layer aborts the whole process when two
Python threads enter parallel kernels at once, and the GUI runs extractions on
worker threads, so every call of a ``parallel=True`` function from ``core``
happens under :data:`PARALLEL_LOCK`; the kernels themselves use all cores, so
serialising them costs nothing.  (OpenMP is also the faster layer on an idle
machine: the window DP at 8 nodes x 512 points took 3.5 ms with OpenMP and
7.2 ms with workqueue on the 2-core development machine.)
"""

import threading

from numba import types
from numba.extending import intrinsic

__all__ = ["PARALLEL_LOCK", "cancel_requested"]

PARALLEL_LOCK = threading.Lock()


@intrinsic
def cancel_requested(typingctx, flag):
    """``flag[0] != 0`` read afresh at every call: the kernels' poll of a core.cancel flag.

    A plain ``flag[0]`` in a loop that makes no call is loop-invariant to
    LLVM, which reads it once before the loop (measured: the scoring kernel
    never saw a flag set while it ran).  An atomic load (relaxed ordering, a
    plain ``mov`` on x86) must be done at every iteration.
    """
    if not (isinstance(flag, types.Array) and flag.dtype == types.uint8 and flag.ndim == 1):
        return None

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        value = builder.load_atomic(array.data, "monotonic", 1)
        return builder.icmp_unsigned("!=", value, value.type(0))

    return types.boolean(flag), codegen
