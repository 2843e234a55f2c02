"""The backend seam: the only place that knows which array library holds the data.

A backend gives `xp`, an array namespace following the Python array API standard, and the
few operations that standard lacks (`index_add`, the random stream, conversion to NumPy).
Primitive impls compute with `xp` only, so one impl serves every backend; everything outside
`backends/` reaches arrays through `backend_of(array)`.

Backends for other libraries (`dask_backend`, `array_api_backend`, `cupy_backend`) are imported
the first time one of their arrays (or, for CuPy, the "cuda" device) is seen, so
`import arraygrad` never imports Dask or CuPy. Data moves between backends through `move`.
"""
import importlib

import numpy as np

from .numpy_backend import NumpyBackend

numpy_backend = NumpyBackend()
_BACKENDS = [numpy_backend]
_BY_TYPE = {numpy_backend.array_type: numpy_backend}
# top-level module of an array type -> the backend module that handles it
_MODULES = {"dask": "dask_backend", "array_api_strict": "array_api_backend",
            "cupy": "cupy_backend"}


def register(backend):
    """Make another array library usable: `backend` needs the attributes of NumpyBackend."""
    _BACKENDS.insert(0, backend)
    _BY_TYPE.clear()
    _BY_TYPE[numpy_backend.array_type] = numpy_backend


def backend_of(array):
    """The backend whose arrays `array` is (NumPy for numbers and other Python data). A
    library with several devices has one backend per device, found by its `of(array)`."""
    if type(array) is numpy_backend.array_type:
        return numpy_backend
    b = _BY_TYPE.get(type(array)) or _find(array)
    return b.of(array) if b.many_devices else b


def _find(array):
    for b in _BACKENDS:
        if b.owns(array):
            break
    else:
        module = _MODULES.get(type(array).__module__.partition(".")[0])
        if module is None:
            return numpy_backend            # not cached: Python data of any type
        b = importlib.import_module(f"{__name__}.{module}").backend_for(array)
        if b not in _BACKENDS:
            _BACKENDS.insert(0, b)
    _BY_TYPE[type(array)] = b
    return b


def array_dtype(xp, d):
    """The array dtype of namespace `xp` for arraygrad dtype `d` (NumPy's where `xp` has no
    name for it: bfloat16 from ml_dtypes)."""
    return getattr(xp, d.name, None) or d.np


def default_backend():
    return numpy_backend


def common_backend(first, a, b):
    """The backend of an op over array `a` (of backend `first`) and array `b` of another type.

    As in torch, where a 0-dim CPU tensor may join a CUDA op, a 0-dim array joins the other
    operand's backend; a backend that computes on NumPy arrays itself (Dask) takes NumPy
    arrays of any shape. Any other mix is torch's "same device" error."""
    second = backend_of(b)
    if second is first:
        return first
    for win, lose, loser in ((first, second, b), (second, first, a)):
        if lose is numpy_backend and win.takes_numpy or len(loser.shape) == 0 and not lose.lazy:
            return win
    if first.device != second.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {first.device} and {second.device}!")
    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                       f"devices, {first.name} and {second.name}! (arraygrad: their arrays belong "
                       "to different array libraries; convert one, e.g. with "
                       "arraygrad.tensor(t.numpy()))")


def adopt(backend, array):
    """`array` (of another backend, see common_backend) as an array of `backend`."""
    if backend_of(array) is backend:
        return array
    return backend.asarray(backend_of(array).to_numpy(array))


def move(array, target):
    """`array` as a new array of backend `target` (another library or device): the one way data
    crosses backends, as torch's `.to(device)` (never an alias). DLPack where both keep their
    arrays in the same kind of memory (`dlpack`: host, or GPU), else a copy through host memory.
    """
    source = backend_of(array)
    if source is target:
        return array
    if source.dlpack is not None and source.dlpack == target.dlpack:
        return target.from_dlpack(array)
    return target.asarray(source.to_numpy(array))


def chunkwise(impl):
    """An elementwise `impl` that reads values as it runs (it loops until every element has
    converged): on a lazy backend (Dask) it runs chunk by chunk on NumPy arrays, so each chunk
    loops for itself, its graph one task per chunk instead of a chain that grows with every
    iteration (and is computed at each convergence test)."""
    def run(xp, *arrays, **params):
        for a in arrays:
            be = backend_of(a)
            if be.lazy:
                return be.elementwise(lambda *blocks: impl(_np, *blocks, **params), *arrays)
        return impl(xp, *arrays, **params)
    run.__name__ = getattr(impl, "__name__", "impl")
    return run


def silent(impl):
    """`impl` run without the array library's floating-point warnings (overflow, 0/0, log(0)):
    torch returns inf and nan silently, and so must every primitive. For NumPy the error state
    is switched by setting its context variable to a prepared "ignore all" state (a third of
    what `errstate` costs per call, and this runs for most primitives); other namespaces get
    their `errstate`, built once per namespace. `run.plain` is the function it silences (or
    what that one names as its `plain`): level 0's one-frame ops call it on NumPy arrays with
    NumPy silenced by `QUIET_NUMPY` (autograd/eager.py NOTE [one-frame ops])."""
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
            # libraries without errstate compute eagerly with NumPy (array_api_strict) or
            # emit no warnings: NumPy's quiets the former and costs the latter nothing
            errstate = getattr(xp, "errstate", np.errstate)
            fn = quiet[xp] = errstate(all="ignore")(impl)
        return fn(xp, *args, **params)
    run.__name__ = getattr(impl, "__name__", "impl")
    run.plain = getattr(impl, "plain", impl)
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
QUIET_NUMPY = None       # (set, reset, state): NumPy's error state switched to "ignore all"
if _errstate_var is not None:
    _set_errstate, _reset_errstate = _errstate_var.set, _errstate_var.reset
    QUIET_NUMPY = (_set_errstate, _reset_errstate, _ignore_all)


def broadcast_view(xp, a, shape):
    """`xp.broadcast_to(a, shape)`. A C-contiguous NumPy array of a built-in dtype gets the same
    read-only view made directly: NumPy's function builds an iterator to find the strides,
    2 us of Python, which is most of the backward of a small sum."""
    if type(a) is not np.ndarray or len(shape) < a.ndim or not a.flags.c_contiguous or \
            a.dtype.isbuiltin != 1 or not a.size:
        return xp.broadcast_to(a, shape)        # (and NumPy's errors)
    have = a.shape
    lead = len(shape) - len(have)
    strides = [0] * lead        # as NumPy's: 0 along every dim of size 1 in `a`
    for i, s in enumerate(shape):
        if s <= 0:
            return xp.broadcast_to(a, shape)
        if i >= lead:
            h = have[i - lead]
            if h == s and h != 1:
                strides.append(a.strides[i - lead])
            elif h == 1:
                strides.append(0)
            else:
                return xp.broadcast_to(a, shape)
    view = np.ndarray(shape, a.dtype, a, 0, tuple(strides))
    view.flags.writeable = False
    return view
