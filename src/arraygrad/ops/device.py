"""Moving a tensor to another device (torch's `_to_copy`): a differentiable copy.

The copy's gradient goes back to the source device, as torch's `ToCopyBackward0`; its tangent
and its batched value move along with it. It is a custom Function rather than a primitive
because its result lives on another backend than its input, and a primitive's impl computes
within its inputs' backend.
"""
from .. import _device
from .. import _tensor as _t
from ..autograd.function import Function
from ..backends import move


class ToCopy(Function):
    @staticmethod
    def forward(x, dev):
        return _t.make(move(x._data, _device.backend(dev)))

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ctx.dev = inputs
        ctx.source = x.device

    @staticmethod
    def backward(ctx, g):
        return ToCopy.apply(g, ctx.source), None

    @staticmethod
    def jvp(ctx, t, _):
        return ToCopy.apply(t, ctx.dev)

    @staticmethod
    def vmap(info, in_dims, x, dev):
        return ToCopy.apply(x, dev), in_dims[0]


def to_device(x, dev):
    """`x` on the checked device `dev`: `x` itself where it is there already (a Dask or other
    cpu library's tensor stays on its library), else a copy that gradients flow back through."""
    if x.device == dev or dev.type == "cpu" and x.device.type == "cpu":
        return x
    return ToCopy.apply(x, dev)
