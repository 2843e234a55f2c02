"""Dask: lazy, chunked arrays, computed by Dask's scheduler (threads, or a distributed cluster).

Every op on a Dask-backed tensor adds to a Dask graph instead of computing, backward and
`autograd.grad` included (their rules are arraygrad ops), so a loss and its gradients are one
graph that `arraygrad.compute` runs at once. `xp` is array-api-compat's array API namespace
over `dask.array`; NumPy arrays join Dask ops as one-chunk Dask arrays.
"""
import types

import numpy as np
import dask
import dask.array as da
import array_api_compat.dask.array as dxp

from .numpy_backend import NumpyBackend, map_scalar


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


# array-api-compat's namespace over dask.array, plus what it lacks
xp = types.ModuleType("arraygrad.backends.dask_backend.xp")
xp.__dict__.update({k: v for k, v in vars(dxp).items() if not k.startswith("__")})
xp.take_along_axis = _take_along_axis


class DaskBackend:
    name = "dask"
    device = "cpu"
    xp = xp
    array_type = da.Array
    numpy_indexing = False
    lazy = True
    takes_numpy = True

    def owns(self, array):
        return isinstance(array, da.Array)

    def asarray(self, value, dtype=None):
        return da.asarray(np.asarray(value, dtype=dtype))

    def result(self, out):
        return out if isinstance(out, da.Array) else da.asarray(out)

    def to_numpy(self, array):
        return np.asarray(array.compute())

    def alias(self, array):
        return array

    def map_scalar(self, fn, array):
        """`fn` (a Python function of one number) on each element, chunk by chunk."""
        return array.map_blocks(lambda block: map_scalar(fn, block), dtype=array.dtype)

    def index_add(self, target, index, values):
        """target[index] += values, accumulating repeated indices. Dask has no scatter-add:
        one task computes it with NumPy (the index arrays are computed first), and the result
        takes the target's chunks again."""
        return self.index_reduce(target, index, values, "sum")

    def index_reduce(self, target, index, values, reduce):
        """target[index] = reduce(target[index], values) over repeated indices too (as
        NumpyBackend.index_reduce), in one task as index_add."""
        index = tuple(np.asarray(i.compute()) if isinstance(i, da.Array) else i for i in index)
        out = dask.delayed(_index_reduce)(target, index, values, reduce)
        whole = da.from_delayed(out, target.shape, dtype=target.dtype)
        return whole.rechunk(target.chunks)

    def random(self):
        raise NotImplementedError("arraygrad draws random numbers with NumPy; create the tensor "
                                  "with NumPy and wrap it with dask.array.from_array")


def _index_reduce(target, index, values, reduce):
    return _numpy.index_reduce(np.array(target), index, np.asarray(values), reduce)


_backend = DaskBackend()
_numpy = NumpyBackend()


def backend_for(array):
    return _backend
