"""Argument checks shared by the public ops: torch's exception types and wording.

torch's argument parser rejects a list, None or a string where a Tensor is expected with a
TypeError naming the op, the argument and its position; arraygrad does the same instead of
failing later with an AttributeError deep inside an op.
"""
import builtins
import functools

from .. import _tensor as _t
from .. import dtypes as _dt

Tensor = _t.Tensor


def type_name(value):
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def not_tensor(op, arg, pos, value):
    return TypeError(f"{op}(): argument '{arg}' (position {pos}) must be Tensor, not "
                     f"{type_name(value)}")


def check_tensor(op, value, arg="input", pos=1):
    if not isinstance(value, Tensor):
        raise not_tensor(op, arg, pos, value)


def tensor_op(fn=None, *, others=()):
    """Decorator of a public op whose first argument must be a Tensor; `others` names further
    parameters that must be Tensors when given (as torch's parser checks them)."""
    if fn is None:
        return functools.partial(tensor_op, others=others)
    name = fn.__name__
    params = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    first = params[0]
    checked = tuple((params.index(p), p) for p in others)

    @functools.wraps(fn)
    def op(*args, **kwargs):
        x = args[0] if args else kwargs.get(first)
        if not isinstance(x, Tensor):
            raise not_tensor(name, first, 1, x)
        for i, p in checked:
            v = args[i] if i < len(args) else kwargs.get(p)
            if not isinstance(v, Tensor) and (v is not None or i < len(args)):
                raise not_tensor(name, p, i + 1, v)
        return fn(*args, **kwargs)
    return op


def tensor_list(op, tensors, arg="tensors"):
    """The list of tensors of cat/stack-like ops, checked as torch."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument '{arg}' (position 1) must be tuple of Tensors, not "
                        f"{type_name(tensors)}")
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type_name(x)}")
    return list(tensors)


def size_arg(op, size):
    """A size given as ints or one sequence of ints (torch: TypeError for floats and strings,
    RuntimeError for negative sizes)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list, _t.Size)):
        size = size[0]
    out = []
    for i, s in enumerate(size):
        if isinstance(s, Tensor) and s.numel() == 1 and not s.dtype.is_floating_point:
            s = s.item()
        if isinstance(s, builtins.bool) or not hasattr(s, "__index__"):
            if len(out) == 0 and len(size) == 1:
                raise TypeError(f"{op}(): argument 'size' (position 1) must be tuple of ints, "
                                f"not {type_name(s)}")
            raise TypeError(f"{op}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"{type_name(s)}\"")
        out.append(s.__index__())
    for s in out:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {out}")
    return tuple(out)


def dtype_arg(op, dtype):
    if dtype is not None and not isinstance(dtype, _dt.dtype):
        raise TypeError(f"{op}(): argument 'dtype' must be arraygrad.dtype, not {type_name(dtype)}")
    return dtype


def number_arg(op, value, arg, pos):
    if isinstance(value, Tensor) or not _is_number(value):
        raise TypeError(f"{op}(): argument '{arg}' (position {pos}) must be Number, not "
                        f"{type_name(value)}")
    return value


def _is_number(v):
    if isinstance(v, (builtins.bool, builtins.int, builtins.float)):
        return True
    kind = getattr(getattr(v, "dtype", None), "kind", None)    # NumPy scalars
    return kind in ("b", "i", "u", "f") and getattr(v, "ndim", 1) == 0


short_dtype_name = _dt.short_name
c_dtype_name = _dt.c_name


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a matrix the op cannot handle (singular, not positive-definite).
    A RuntimeError, as torch's, so `except RuntimeError` catches it too."""

    __module__ = "arraygrad.linalg"
