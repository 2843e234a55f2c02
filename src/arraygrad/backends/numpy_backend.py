"""NumPy, the default backend."""
import numpy as np


class NumpyBackend:
    name = "numpy"
    device = "cpu"
    xp = np
    array_type = np.ndarray
    lazy = False            # arrays hold values (Dask's hold a graph to compute)
    takes_numpy = False     # see backends.common_backend

    def owns(self, array):
        return isinstance(array, (np.ndarray, np.generic))

    def asarray(self, value, dtype=None):
        a = np.asarray(value, dtype=dtype)
        return a

    def result(self, out):
        """NumPy gives scalars for 0-d results; tensors always hold arrays."""
        return out if type(out) is np.ndarray else np.asarray(out)

    def to_numpy(self, array):
        return array

    def alias(self, array):
        """A new array object over the same memory (a view: tensors' views share storage)."""
        return array.view()

    def map_scalar(self, fn, array):
        """`fn`, a Python function of one number, applied to each element: for the functions
        the array API standard lacks (erf, lgamma)."""
        return map_scalar(fn, array)

    def index_add(self, target, index, values):
        """target[index] += values, accumulating repeated indices (scatter-add)."""
        np.add.at(target, index, values)
        return target

    def random(self):
        """The global stream: one object for the process, reseeded in place by
        arraygrad.default_generator."""
        return _rng


def map_scalar(fn, array):
    if not array.size:
        return array.copy()
    return np.vectorize(fn, otypes=[array.dtype])(array)


_rng = np.random.default_rng()
