"""numba.cuda kernels and their host wrappers.

Importing this package never fails: without a usable CUDA GPU the public
functions are stubs that raise :class:`core.engine.BackendUnavailableError`.
"""
