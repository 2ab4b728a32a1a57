"""One lock around numba ``parallel=True`` kernels.

numba's default threading layer (workqueue) aborts the whole process when two
Python threads enter parallel kernels at once, and the GUI runs extractions on
worker threads.  Every call of a ``parallel=True`` function from ``core``
therefore happens under :data:`PARALLEL_LOCK`; the kernels themselves use all
cores, so serialising them costs nothing.
"""

import threading

PARALLEL_LOCK = threading.Lock()
