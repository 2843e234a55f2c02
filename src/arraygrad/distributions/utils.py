"""Helpers shared by the distributions (torch.distributions.utils)."""
import functools
import numbers

from .. import dtypes as _dt
from .._tensor import Tensor
from ..core import grad_mode
from ..ops.creation import tensor as _tensor
from ..ops.shape import broadcast_tensors
from ..ops.reduce import softmax

euler_constant = 0.57721566490153286060

# (eps, tiny, max) per floating dtype: what torch.finfo gives (arraygrad has no finfo yet)
_FINFO = {"float16": (0.0009765625, 6.103515625e-05, 65504.0),
          "bfloat16": (0.0078125, 1.1754943508222875e-38, 3.3895313892515355e+38),
          "float32": (1.1920928955078125e-07, 1.1754943508222875e-38, 3.4028234663852886e+38),
          "float64": (2.220446049250313e-16, 2.2250738585072014e-308, 1.7976931348623157e+308)}


def _finfo(dtype):
    return _FINFO[str(dtype).rsplit(".", 1)[-1]]


def finfo_eps(dtype):
    return _finfo(dtype)[0]


def finfo_tiny(dtype):
    return _finfo(dtype)[1]


def finfo_max(dtype):
    return _finfo(dtype)[2]


def broadcast_all(*values):
    """Broadcast tensors and numbers together; numbers take the first tensor's dtype."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    dtype = next((v.dtype for v in values if isinstance(v, Tensor)), _dt.get_default_dtype())
    return broadcast_tensors(*[v if isinstance(v, Tensor) else _tensor(v, dtype=dtype)
                               for v in values])


def _sum_rightmost(value, dim):
    """Sum out the `dim` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    return logits.sigmoid() if is_binary else softmax(logits, dim=-1)


def clamp_probs(probs):
    eps = finfo_eps(probs.dtype)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps = clamp_probs(probs)
    return ps.log() - (-ps).log1p() if is_binary else ps.log()


class lazy_property:
    """Compute an attribute on first access (with grad enabled), then cache it on the instance:
    so `Categorical(logits=...)` computes `probs` only when asked."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with grad_mode.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
