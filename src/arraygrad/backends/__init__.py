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
    torch returns inf and nan silently, and so must every primitive. For NumPy the error state
    is switched by setting its context variable to a prepared "ignore all" state (a third of
    what `errstate` costs per call, and this runs for most primitives); other namespaces get
    their `errstate`, built once per namespace."""
    quiet = {}

    def run(xp, *args, **params):
        if xp is _np and _ignore_all is not None:
            token = _set_errstate(_ignore_all)
            try:
                return impl(xp, *args, **params)
            finally:
                _reset_errstate(token)
        fn = quiet.get(xp)
        if fn is None:
            errstate = getattr(xp, "errstate", None)
            fn = quiet[xp] = impl if errstate is None else errstate(all="ignore")(impl)
        return fn(xp, *args, **params)
    run.__name__ = getattr(impl, "__name__", "impl")
    return run


def _numpy_ignore_all():
    """NumPy's error-state context variable and its value inside errstate(all="ignore"), or
    (None, None) where that private name is absent (then `silent` uses errstate itself)."""
    try:
        from numpy._core._ufunc_config import _extobj_contextvar as var
    except ImportError:
        return None, None
    with _np.errstate(all="ignore"):
        return var, var.get()


_np = numpy_backend.xp
_errstate_var, _ignore_all = _numpy_ignore_all()
if _errstate_var is not None:
    _set_errstate, _reset_errstate = _errstate_var.set, _errstate_var.reset
