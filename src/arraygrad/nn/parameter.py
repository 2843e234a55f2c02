"""Parameter: a leaf tensor that a Module registers when assigned to it.

# NOTE [Parameter is a Tensor]
The dispatcher's fast path tests `type(a) is Tensor`, so a subclass would be
slower everywhere and missed by exact type checks. A Parameter is therefore a
plain Tensor carrying the flag `_is_param`; `isinstance(t, Parameter)` reads
the flag (as torch's `_ParameterMeta` does for its own purposes). It shares
memory and the version counter with the tensor it was made from.
"""
from .. import _tensor as _t
from ..ops import creation, shape


class _ParameterMeta(type):
    def __instancecheck__(cls, obj):
        return type(obj) is _t.Tensor and "_is_param" in obj.__dict__


class Parameter(metaclass=_ParameterMeta):
    """A tensor that is a module parameter: `nn.Parameter(torch.randn(3, 4))`.

    Assigning it to a Module attribute registers it in `parameters()`.
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = creation.empty(0)
        if not isinstance(data, _t.Tensor):
            raise TypeError("Parameter(): expected a Tensor as data, but got "
                            f"{type(data).__name__}")
        if data._lvl is not None:
            raise RuntimeError("Parameter(): cannot make a parameter from a tensor inside a "
                               f"{data._lvl.kind} transform; create parameters outside transforms")
        p = shape.detach(data)
        p.requires_grad_(requires_grad)
        p._is_param = True
        return p
