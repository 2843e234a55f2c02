"""torch.autograd.Variable: the deprecated wrapper, today a tensor.

    Variable(x, requires_grad=True)     # x.detach().requires_grad_(True), as torch
    isinstance(t, Variable)             # True for every tensor
"""
import warnings

from .._tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """Returns a new leaf tensor sharing `data`'s memory (no history), as torch's Variable."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                          "instead.", UserWarning, stacklevel=2)
        if data is None:
            return Tensor()
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(bool(requires_grad))
