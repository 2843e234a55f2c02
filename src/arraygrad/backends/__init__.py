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
    torch returns inf and nan silently, and so must every primitive. The quiet version is
    built once per array namespace (NumPy's errstate as a decorator is its cheap form)."""
    quiet = {}

    def run(xp, *args, **params):
        fn = quiet.get(xp)
        if fn is None:
            errstate = getattr(xp, "errstate", None)
            fn = quiet[xp] = impl if errstate is None else errstate(all="ignore")(impl)
        return fn(xp, *args, **params)
    run.__name__ = getattr(impl, "__name__", "impl")
    return run
