"""Dask: lazy, chunked arrays, computed by Dask's scheduler (threads, or a distributed cluster).

Every op on a Dask-backed tensor adds to a Dask graph instead of computing, backward and
`autograd.grad` included (their rules are arraygrad ops), so a loss and its gradients are one
graph that `arraygrad.compute` runs at once. `xp` is array-api-compat's array API namespace
over `dask.array`; NumPy arrays join Dask ops as one-chunk Dask arrays.
"""
import functools
import math
import types
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import dask
import dask.array as da
import dask.threaded
import array_api_compat.dask.array as dxp

from .dask_scatter import scatter
from .numpy_backend import map_scalar, numpy_eig


def _take_along_axis(x, index, axis=-1):
    """The standard's take_along_axis, chunk by chunk: both arrays get one chunk along `axis`
    and the same chunks along the others (where their sizes agree)."""
    axis = axis % x.ndim
    x = x.rechunk({axis: -1})
    index = da.asarray(index).rechunk({axis: -1, **{d: x.chunks[d] for d in range(x.ndim)
                                                    if d != axis and index.shape[d] == x.shape[d]}})
    chunks = tuple((index.shape[axis],) if d == axis else
                   max(x.chunks[d], index.chunks[d], key=len) for d in range(x.ndim))
    return da.map_blocks(np.take_along_axis, x, index, axis=axis, dtype=x.dtype, chunks=chunks)


# NOTE [Dask linalg and fft]: dask.array's own linalg takes one 2-D matrix (tall-and-skinny
# chunks) and its fft needs one chunk along each transformed axis. arraygrad's impls work on
# stacks of small matrices, so here NumPy's routines run as generalised ufuncs: one task per
# chunk of the stack dims, each matrix (each transformed axis) gathered into one chunk.
def _stacked(fn, signature, nout=1, sizes=None):
    def run(*arrays, **kwargs):
        arrays = [da.asarray(a) for a in arrays]
        arrays = [a.rechunk({a.ndim - 2: -1, a.ndim - 1: -1}) for a in arrays]   # each matrix whole
        dtype = arrays[-1].dtype
        f = functools.partial(fn, **kwargs) if kwargs else fn
        if any(0 in a.shape for a in arrays):      # nothing to compute (Dask cannot chunk it)
            out = f(*[a.compute() for a in arrays])
            return tuple(map(da.asarray, out)) if nout > 1 else da.asarray(out)
        out = da.apply_gufunc(f, signature(*arrays, **kwargs) if callable(signature) else
                              signature, *arrays, output_dtypes=(dtype,) * nout if nout > 1
                              else dtype, output_sizes=sizes(*arrays) if sizes else None)
        return tuple(out) if nout > 1 else out
    return run


def _k(a):
    return {"k": min(a.shape[-2:])}


def _svd_signature(a, full_matrices=True):
    return "(m,n)->(m,m),(k),(n,n)" if full_matrices else "(m,n)->(m,k),(k),(k,n)"


def _qr_signature(a, mode="reduced"):
    return "(m,n)->(m,m),(m,n)" if mode == "complete" else "(m,n)->(m,k),(k,n)"


linalg = types.ModuleType("arraygrad.backends.dask_backend.xp.linalg")
linalg.__dict__.update({k: v for k, v in vars(dxp.linalg).items() if not k.startswith("__")})
linalg.__dict__.update(
    inv=_stacked(np.linalg.inv, "(n,n)->(n,n)"),
    det=_stacked(np.linalg.det, "(n,n)->()"),
    slogdet=_stacked(np.linalg.slogdet, "(n,n)->(),()", 2),
    cholesky=_stacked(np.linalg.cholesky, "(n,n)->(n,n)"),
    solve=_stacked(np.linalg.solve, "(n,n),(n,k)->(n,k)"),
    eigh=_stacked(np.linalg.eigh, "(n,n)->(n),(n,n)", 2),
    eigvalsh=_stacked(np.linalg.eigvalsh, "(n,n)->(n)"),
    svd=_stacked(np.linalg.svd, _svd_signature, 3, _k),
    svdvals=_stacked(np.linalg.svdvals, "(m,n)->(k)", sizes=_k),
    qr=_stacked(np.linalg.qr, _qr_signature, 2, _k))


def _whole_axes(fn, axes_arg):
    """A dask.array.fft function with each transformed axis in one chunk first."""
    def run(x, *args, **kwargs):
        axes = kwargs.get(axes_arg, -1 if axes_arg == "axis" else None)
        axes = range(x.ndim) if axes is None else [axes] if axes_arg == "axis" else axes
        return fn(x.rechunk({a % x.ndim: -1 for a in axes}), *args, **kwargs)
    return run


fft = types.ModuleType("arraygrad.backends.dask_backend.xp.fft")
fft.__dict__.update({k: v for k, v in vars(dxp.fft).items() if not k.startswith("__")})
fft.__dict__.update({name: _whole_axes(getattr(dxp.fft, name), axes)
                     for name, axes in (("fftn", "axes"), ("ifftn", "axes"), ("rfft", "axis"),
                                        ("irfft", "axis"))})

def _reshape(x, /, shape, **kwargs):
    """The standard's reshape for every shape. Dask reshapes only by merging whole dims or
    splitting one evenly (not 6 x 4 -> 3 x 8); such a reshape goes in two passes over the
    groups of input dims whose sizes multiply to a group of output dims: merge each group into
    one dim, then split it. So that neither pass cuts chunks smaller, a mixed group is first
    rechunked along its first dim only (the others whole) to chunks of about its old size
    that are whole rows of both sides (multiples of the sizes below the first dim, in and
    out); the dims outside such groups keep their chunks."""
    if x.size == 0:         # nothing to move: one (empty) block
        return dxp.reshape(x.rechunk(-1), shape, **kwargs)
    try:
        return dxp.reshape(x, shape, **kwargs)
    except NotImplementedError:
        pass
    shape = tuple(shape)
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        shape = tuple(x.size // known if s == -1 else s for s in shape)
    a = [d for d, s in enumerate(x.shape) if s != 1]
    b = [s for s in shape if s != 1]
    merged, spec, i, j = [], {}, 0, 0
    while i < len(a):
        ins, outs = [a[i]], [b[j]]
        pa, pb = x.shape[a[i]], b[j]
        i, j = i + 1, j + 1
        while pa != pb:
            if pa < pb:
                ins.append(a[i])
                pa, i = pa * x.shape[a[i]], i + 1
            else:
                outs.append(b[j])
                pb, j = pb * b[j], j + 1
        merged.append(pa)
        if len(ins) > 1 and len(outs) > 1:
            below = math.prod(x.shape[d] for d in ins[1:])
            row = math.lcm(below, math.prod(outs[1:]))
            old = math.prod(max(x.chunks[d]) for d in ins)
            spec[ins[0]] = row * max(1, round(old / row)) // below
            spec.update({d: -1 for d in ins[1:]})
    x = x.rechunk(spec)
    return dxp.reshape(dxp.reshape(x, tuple(merged), **kwargs), shape, **kwargs)


def _nonzero(x):
    """The standard's nonzero with known lengths: they depend on the values, so they are
    computed here (a sync point, as torch must know a result's size too); the indices stay
    lazy."""
    where = da.argwhere(x)
    with dask.config.set(pool=_quiet_pool()), np.errstate(all="ignore"):    # as `compute`
        where.compute_chunk_sizes()
    # without the empty chunks, which some Dask ops (take) fail on
    where = where.rechunk((tuple(c for c in where.chunks[0] if c) or (0,), where.chunks[1]))
    return tuple(where[:, d] for d in range(x.ndim))


def _searchsorted(x1, x2, /, **kwargs):
    """The standard's searchsorted, a 0-d `x2` searched as one element (Dask's fails)."""
    if x2.ndim:
        return dxp.searchsorted(x1, x2, **kwargs)
    return dxp.reshape(dxp.searchsorted(x1, dxp.reshape(x2, (1,)), **kwargs), ())


def _reduction(fn, empty):
    """A reduction that gives NumPy's result where the input is empty (its chunks would
    reduce nothing, and min/max have no identity): an error over an empty dim, else an
    empty array."""
    def run(x, /, **kwargs):
        if x.size == 0:
            return da.asarray(empty(np.empty(x.shape, x.dtype), **kwargs))
        return fn(x, **kwargs)
    return run


# array-api-compat's namespace over dask.array, plus what it lacks
xp = types.ModuleType("arraygrad.backends.dask_backend.xp")
xp.__dict__.update({k: v for k, v in vars(dxp).items() if not k.startswith("__")})
xp.take_along_axis = _take_along_axis
xp.reshape = _reshape
xp.nonzero = _nonzero
xp.searchsorted = _searchsorted
xp.min = _reduction(dxp.min, np.min)
xp.max = _reduction(dxp.max, np.max)
xp.linalg = linalg
xp.fft = fft


class DaskBackend:
    name = "dask"
    device = "cpu"
    xp = xp
    array_type = da.Array
    numpy_indexing = False
    lazy = True
    takes_numpy = True
    many_devices = False
    views = False           # graphs: a view is a new array, so writes to it cannot reach its base
    dlpack = None           # graphs, not memory: other libraries' arrays arrive through NumPy

    def owns(self, array):
        return isinstance(array, da.Array)

    def asarray(self, value, dtype=None):
        return da.asarray(np.asarray(value, dtype=dtype))

    def result(self, out):
        return out if isinstance(out, da.Array) else da.asarray(out)

    def to_numpy(self, array):
        return np.asarray(compute(array)[0])

    def alias(self, array):
        return array

    def map_scalar(self, fn, array):
        """`fn` (a Python function of one number) on each element, chunk by chunk."""
        return array.map_blocks(lambda block: map_scalar(fn, block), dtype=array.dtype)

    def elementwise(self, fn, *arrays):
        """`fn(*blocks)`, a NumPy function of broadcastable arrays, chunk by chunk (the arrays'
        chunks aligned); its dtype from a one-element call."""
        arrays = [da.asarray(a) for a in arrays]
        dtype = fn(*[np.ones((1,) * a.ndim, a.dtype) for a in arrays]).dtype
        return da.map_blocks(fn, *arrays, dtype=dtype)

    def eig(self, array):
        """NumpyBackend.eig per chunk of the stack, each matrix whole (NOTE [Dask linalg and
        fft])."""
        a = array.rechunk({array.ndim - 2: -1, array.ndim - 1: -1})
        if 0 in a.shape:
            return tuple(da.asarray(r) for r in numpy_eig(a.compute()))
        dtype = np.result_type(a.dtype, np.complex64)
        return tuple(da.apply_gufunc(numpy_eig, "(n,n)->(n),(n,n)", a,
                                     output_dtypes=(dtype, dtype)))

    def index_add(self, target, index, values):
        """target[index] += values, accumulating repeated indices: one task per chunk of the
        target that the index reaches (NOTE [Dask scatter]; Dask index arrays are computed
        first)."""
        return self.index_reduce(target, index, values, "sum")

    def index_reduce(self, target, index, values, reduce):
        """target[index] = reduce(target[index], values) over repeated indices too (as
        NumpyBackend.index_reduce), chunk by chunk as index_add."""
        index = index if isinstance(index, tuple) else (index,)
        index = tuple(np.asarray(compute(i)[0]) if isinstance(i, da.Array) else i for i in index)
        return scatter(target, index, values, reduce)

    def random(self):
        raise NotImplementedError("arraygrad draws random numbers with NumPy; create the tensor "
                                  "with NumPy and wrap it with dask.array.from_array")


def compute(*arrays, **kwargs):
    """`dask.compute(*arrays, **kwargs)` without NumPy's floating-point warnings, as torch's
    ops give inf and nan silently. NumPy's error state belongs to each thread, so it must be
    set where the chunks run: the local threaded scheduler gets a pool whose threads start
    quiet, and the synchronous one runs here, under errstate. (Workers of a `dask.distributed`
    cluster keep their own state: there warnings go to the workers' logs.)"""
    scheduler = dask.base.get_scheduler(scheduler=kwargs.get("scheduler"), collections=arrays)
    if scheduler is dask.threaded.get and "pool" not in kwargs and dask.config.get("pool", None) \
            is None:
        kwargs["pool"] = _quiet_pool()
    with np.errstate(all="ignore"):
        return dask.compute(*arrays, **kwargs)


_pool = []


def _quiet_pool():
    if not _pool:
        _pool.append(ThreadPoolExecutor(dask.system.CPU_COUNT, initializer=np.seterr,
                                        initargs=("ignore",)))
    return _pool[0]


_backend = DaskBackend()


def backend_for(array):
    return _backend
