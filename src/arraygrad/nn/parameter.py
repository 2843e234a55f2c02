"""Parameter: a leaf tensor that a Module registers when assigned to it.

# NOTE [Parameter is a Tensor]
A Parameter is a Tensor subclass, as torch's. Ops on it return plain Tensors
(their results are made by `_tensor.make`), and nothing in the dispatcher's fast
path depends on the exact type of a leaf. It shares memory and the version
counter with the tensor it was made from.
"""
from .. import _tensor as _t
from ..ops import creation, shape


class Parameter(_t.Tensor):
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
        src = shape.detach(data)
        p = object.__new__(cls)
        p._data, p._vc = src._data, src._vc
        p._lvl, p._requires_grad, p.grad_fn, p._output_nr = None, False, None, 0
        p.requires_grad_(requires_grad)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass    # built by __new__ (Tensor.__init__ refuses direct construction)

    def __repr__(self):
        return "Parameter containing:\n" + _t.Tensor.__repr__(self)

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self.detach().numpy(), self._requires_grad))

    def __deepcopy__(self, memo):
        # as torch: the copy is a Parameter without the gradient
        out = Parameter(self.detach().clone(), self._requires_grad)
        memo[id(self)] = out
        return out


def _rebuild_parameter(array, requires_grad):
    return Parameter(_t.make(array.copy()), requires_grad)
