"""Tensors over Dask arrays: build lazily, compute together.

    import dask.array as da
    import arraygrad as torch

    X = torch.from_dask(da.random.random((10**6, 20), chunks=(10**5, 20)))
    w = torch.zeros(20, dtype=torch.float64, requires_grad=True)
    loss = (X @ w).sigmoid().mean()
    loss.backward()                           # w.grad is a lazy tensor too
    value, grad = torch.compute(loss, w.grad)  # one Dask computation for both

Ops on a Dask-backed tensor build a Dask graph and keep its chunks (reductions reduce per
chunk); nothing runs until `compute`, `.numpy()`, `.item()` or printing values. Code that
needs NumPy arrays runs per chunk through `map_blocks`. Dask is imported only when used
(`pip install 'arraygrad[dask]'`).
"""
import numpy as np

from . import _tensor as _t
from .backends import backend_of
from .ops.creation import tensor

Tensor = _t.Tensor


def from_dask(array, *, requires_grad=False):
    """A tensor over the Dask array `array`, kept lazy (same as `tensor(array)`)."""
    import dask.array as da     # optional dependency
    if not isinstance(array, da.Array):
        raise TypeError(f"from_dask(): expected a dask.array.Array, got {type(array).__name__}")
    return tensor(array, requires_grad=requires_grad)


def compute(*tensors, **kwargs):
    """The values of `tensors` as NumPy-backed tensors, computed in one Dask computation
    (work they share, such as the forward pass under a loss and its gradients, runs once).
    Keyword arguments go to `dask.compute` (e.g. `scheduler=`). Tensors that are not lazy
    pass through; the results have no history."""
    arrays = []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"compute(): argument {i} must be a Tensor, not {type(t).__name__}")
        if t._lvl is not None:
            raise RuntimeError("compute() is not available on a tensor inside a transform; "
                               "compute the transform's results instead")
        arrays.append(t._data)
    lazy = [a for a in arrays if backend_of(a).lazy]
    if lazy:
        from .backends.dask_backend import compute as quiet     # optional dependency
        values = iter(quiet(*lazy, **kwargs))
        arrays = [next(values) if backend_of(a).lazy else a for a in arrays]
    return tuple(_t.make(np.asarray(a)) for a in arrays)


def _compute_one(self, **kwargs):
    """This tensor's value as a NumPy-backed tensor without history (see arraygrad.compute)."""
    return compute(self, **kwargs)[0]


Tensor.compute = _compute_one


def map_blocks(fn, *tensors, dtype=None, **kwargs):
    """`fn` (a function of NumPy arrays, same shape in and out) applied chunk by chunk.

    For code that needs NumPy itself, such as a custom `autograd.Function` whose forward calls
    a NumPy routine: on Dask-backed tensors `fn` runs on each chunk (`dask.array.map_blocks`,
    lazily; keyword arguments go there), on NumPy-backed ones on the whole array. The result
    has no history: differentiate through it with the Function's backward.

        class Clip(arraygrad.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return arraygrad.map_blocks(np.clip, x, a_min=-1, a_max=1)
    """
    arrays = [t.detach()._data if isinstance(t, Tensor) else t for t in tensors]
    lazy = [a for a in arrays if hasattr(a, "shape") and backend_of(a).lazy]
    if lazy:
        import dask.array as da     # optional dependency
        np_dtype = None if dtype is None else dtype.np
        return tensor(da.map_blocks(fn, *arrays, dtype=np_dtype or lazy[0].dtype, **kwargs))
    out = np.asarray(fn(*[backend_of(a).to_numpy(a) if hasattr(a, "shape") else a
                          for a in arrays], **kwargs))
    return tensor(out if dtype is None else out.astype(dtype.np))
