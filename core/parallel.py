"""One lock around numba ``parallel=True`` kernels.

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

PARALLEL_LOCK = threading.Lock()
