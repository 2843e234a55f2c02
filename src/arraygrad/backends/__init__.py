"""The backend seam: the only place that knows which array library holds the data.

A backend gives `xp` (an array namespace close to the array API standard) and
the few operations that standard lacks. Everything outside `backends/` reaches
arrays only through `backend_of(array)`.
"""
from .numpy_backend import NumpyBackend

numpy_backend = NumpyBackend()
_BACKENDS = [numpy_backend]


def register(backend):
    """Make another array library usable (CuPy, Dask: see their modules)."""
    _BACKENDS.insert(0, backend)


def backend_of(array):
    if type(array) is numpy_backend.array_type:
        return numpy_backend
    for b in _BACKENDS:
        if b.owns(array):
            return b
    return numpy_backend


def default_backend():
    return numpy_backend


def silent(impl):
    """`impl` run without the array library's floating-point warnings (overflow, 0/0, log(0)):
    torch returns inf and nan silently, and so must every primitive."""
    def run(xp, *args, **params):
        errstate = getattr(xp, "errstate", None)
        if errstate is None:
            return impl(xp, *args, **params)
        with errstate(all="ignore"):
            return impl(xp, *args, **params)
    run.__name__ = getattr(impl, "__name__", "impl")
    return run
