"""Any library that follows the Python array API standard, through its namespace alone.

`array_api_strict` (the standard's reference implementation, which refuses every call the
standard does not define) runs the op catalogue through this backend in the tests, so an impl
that calls something NumPy-only fails there. The operations the standard lacks go through
NumPy by DLPack (these arrays live in host memory).
"""
import numpy as np

from .. import dtypes as _dt
from .numpy_backend import NumpyBackend, map_scalar

_numpy = NumpyBackend()


class ArrayApiBackend:
    device = "cpu"
    numpy_indexing = False
    lazy = False
    takes_numpy = False

    def __init__(self, xp):
        self.xp = xp
        self.name = xp.__name__
        self.array_type = type(xp.asarray(0))
        for d in _dt._ALL:
            if hasattr(xp, d.name):
                _dt.register_array_dtype(getattr(xp, d.name), d)

    def owns(self, array):
        return isinstance(array, self.array_type)

    def asarray(self, value, dtype=None):
        a = np.asarray(value, dtype=dtype)
        if a.dtype not in _dt._FROM_NP:
            raise TypeError(f"{self.name} has no array dtype for {a.dtype}")
        return self.xp.asarray(a, dtype=getattr(self.xp, _dt._FROM_NP[a.dtype].name))

    def result(self, out):
        """An impl's result must be an array of this library: a NumPy array here means the
        impl computed with NumPy instead of its `xp`."""
        if isinstance(out, self.array_type):
            return out
        if isinstance(out, (bool, int, float)):
            return self.xp.asarray(out)
        raise TypeError(f"an impl returned a {type(out).__module__}.{type(out).__name__} for "
                        f"{self.name} arrays: impls must compute with their `xp` argument only")

    def to_numpy(self, array):
        return np.asarray(array)

    def alias(self, array):
        """The standard has no views: an op that aliases its input gives the input."""
        return array

    def map_scalar(self, fn, array):
        """`fn` (a Python function of one number) on each element, through NumPy."""
        return self.asarray(map_scalar(fn, self.to_numpy(array)))

    def index_add(self, target, index, values):
        """target[index] += values, accumulating repeated indices (the standard has no
        scatter-add)."""
        return self.index_reduce(target, index, values, "sum")

    def index_reduce(self, target, index, values, reduce):
        """target[index] = reduce(target[index], values) over repeated indices too, as
        NumpyBackend.index_reduce."""
        out = np.array(self.to_numpy(target))
        index = tuple(self.to_numpy(i) if isinstance(i, self.array_type) else i for i in index)
        return self.asarray(_numpy.index_reduce(out, index, self.to_numpy(values), reduce))

    def random(self):
        raise NotImplementedError(f"arraygrad draws random numbers with NumPy; create the tensor "
                                  f"with NumPy and convert it to {self.name}")


def backend_for(array):
    import array_api_strict
    return ArrayApiBackend(array_api_strict)
