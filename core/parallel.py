"""One lock around numba ``parallel=True`` kernels, and their read of a cancel flag.

Why: docs/notes/extraction-and-polyline.md, "Threads and cancelling".
"""

import threading

from numba import types
from numba.extending import intrinsic

__all__ = ["PARALLEL_LOCK", "cancel_requested"]

PARALLEL_LOCK = threading.Lock()


@intrinsic
def cancel_requested(typingctx, flag):
    """``flag[0] != 0`` read afresh at every call (an atomic load LLVM cannot hoist out of a loop)."""
    if not (isinstance(flag, types.Array) and flag.dtype == types.uint8 and flag.ndim == 1):
        return None

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        value = builder.load_atomic(array.data, "monotonic", 1)
        return builder.icmp_unsigned("!=", value, value.type(0))

    return types.boolean(flag), codegen
