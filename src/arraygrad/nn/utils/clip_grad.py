"""Gradient clipping (torch.nn.utils.clip_grad): rescale or clamp `.grad` in place."""
import math

from ... import _tensor as _t
from ...core.grad_mode import no_grad
from ...ops import creation, shape
from ...ops.norms import vector_norm

Tensor = _t.Tensor


def _grads(parameters):
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return params, [p.grad for p in params if p.grad is not None]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the per-tensor norms (the norm of all elements taken together)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return creation.tensor(0.0)
    with no_grad():
        total = vector_norm(shape.stack([vector_norm(g, norm_type) for g in tensors]),
                             norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable this "
                           "error and scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients by max_norm / (total_norm + 1e-6) when that is below 1."""
    _, grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Rescale all gradients together so that their total norm is at most `max_norm`;
    returns the total norm before clipping.

        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        opt.step()
    """
    params, grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    _, grads = _grads(parameters)
    with no_grad():
        for g in grads:
            g.clamp_(-clip_value, clip_value)


clip_grad_norm = clip_grad_norm_     # the deprecated name
