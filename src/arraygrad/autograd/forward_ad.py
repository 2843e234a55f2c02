"""torch.autograd.forward_ad: dual tensors for forward-mode AD.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y, jvp = forward_ad.unpack_dual(f(x))

Each dual level is a jvp level (see NOTE [jvp level]). Beyond PyTorch, dual
levels nest: each is its own level, so a dual tensor of an inner level may
hold dual tensors of an outer one, and derivatives of any order follow.
"""
import functools
import threading
from typing import NamedTuple, Optional

from .. import _tensor as _t
from ..func.jvp_level import JvpInterpreter
from ..ops.creation import zeros

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]


class _Levels(threading.local):
    def __init__(self):
        self.stack = []     # the JvpInterpreters of the open dual levels, outermost first


_levels = _Levels()


def enter_dual_level():
    """Enter a new forward grad level; returns its number (0 for the outermost)."""
    lvl = JvpInterpreter(dual=True)
    lvl.__enter__()
    _levels.stack.append(lvl)
    return len(_levels.stack) - 1


def exit_dual_level(*, level=None):
    """Exit the innermost forward grad level: its dual tensors lose their tangents."""
    stack = _levels.stack
    if level is None:
        level = len(stack) - 1
    if level < 0 or level != len(stack) - 1:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was "
                           "created. This is not supported.")
    stack[-1].__exit__(None, None, None)
    stack.pop()


def _interpreter(level):
    stack = _levels.stack
    if level is None:
        level = len(stack) - 1
    if not 0 <= level < len(stack):
        return None
    return stack[level]


def make_dual(tensor, tangent, *, level=None):
    """A dual tensor with value `tensor` and tangent `tangent` at the current (or given) level."""
    lvl = _interpreter(level)
    if lvl is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not tensor.dtype.is_differentiable:
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not tangent.dtype.is_differentiable:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that "
                           f"of the original Tensor, this is not supported. Tensor is of size "
                           f"{list(tensor.shape)} while the given forward gradient is of size "
                           f"{list(tangent.shape)}.")
    tensor, tangent = _t.lower(tensor), _t.lower(tangent)
    if tangent.dtype is not tensor.dtype:
        tangent = tangent.to(tensor.dtype)
    if getattr(tensor, "_lvl", None) is lvl:
        n = len(_levels.stack) - 1 if level is None else level
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {n} is not supported.")
    return _make_dual_below(lvl, tensor, tangent)


def _make_dual_below(lvl, tensor, tangent):
    """The dual of jvp level `lvl`, made under the vmap levels entered inside it (the dual of
    each example's values, batched as they are), where torch has no batching rule."""
    above = [x._lvl for x in (tensor, tangent)
             if getattr(x, "_lvl", None) is not None and x._lvl.level > lvl.level]
    if not above:
        # as torch, the dual is a view of `tensor`: eager autograd state set on it
        # (requires_grad_) stays its own, and gradients reach `tensor` through the view
        return lvl.wrap(tensor.view_as(tensor), tangent)
    top = max(above, key=lambda i: i.level)
    if not top.batched:
        raise RuntimeError(f"make_dual: the primal or tangent belongs to a transform ({top.kind})"
                           " entered inside this dual level; make the dual tensor inside it "
                           "with its own dual_level(), or pass tensors created outside")
    (p, pd), (t, td) = top.unwrap(tensor), top.unwrap(tangent)
    if pd is None:
        p, pd = _batched_copy(p, top.batch_size), 0
    t = _batched_copy(t, top.batch_size) if td is None else t.movedim(td, pd)
    return top.wrap(_make_dual_below(lvl, p, t), pd)


def _batched_copy(x, n):
    """`x` repeated along a new leading dim of size `n` (the same for every example)."""
    return x.unsqueeze(0).expand((n,) + tuple(x.shape))


class UnpackedDualTensor(NamedTuple):
    """Namedtuple returned by `unpack_dual`: the primal and tangent of a dual tensor."""
    primal: "_t.Tensor"
    tangent: Optional["_t.Tensor"]


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of `tensor` at the current (or given) level; tangent None if not dual."""
    lvl = _interpreter(level)
    tensor = _t.lower(tensor)
    if lvl is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(*_split(tensor, lvl))


def _split(x, lvl):
    """(primal, tangent) of `x` for jvp level `lvl`, looking through jvp levels above it.

    A dual of an inner level holds a value and a tangent that may both be
    duals of `lvl`; splitting each gives the inner-level primal and tangent.
    """
    inner = getattr(x, "_lvl", None)
    if inner is None or inner.level < lvl.level:
        return x, None
    if inner is lvl:
        return lvl.unwrap(x)
    if inner.batched:       # split each example's dual, keeping the batch dim
        v, d = inner.unwrap(x)
        p, t = _split(v, lvl)
        return inner.wrap(p, d), None if t is None else inner.wrap(t, d)
    if not isinstance(inner, JvpInterpreter):
        raise RuntimeError(f"unpack_dual: the tensor belongs to a {inner.kind} transform entered "
                           "inside this dual level; unpack it there")
    primal, tangent = inner.unwrap(x)
    p, pt = _split(primal, lvl)
    t, tt = _split(tangent, lvl) if tangent is not None else (None, None)
    if pt is None and tt is None:
        return x, None
    if pt is None:
        pt = zeros(tuple(p.shape), dtype=p.dtype)
    return inner.wrap(p, t), inner.wrap(pt, tt)


class dual_level:
    """Context manager (or decorator) for a forward AD level; `__enter__` gives its number.

        >>> with dual_level():
        ...     y = make_dual(x, v) * 2
        ...     unpack_dual(y).tangent      # 2 * v
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper
