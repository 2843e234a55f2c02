"""Argument checks shared by the public ops: torch's exception types and wording.

torch's argument parser rejects a list, None or a string where a Tensor is expected with a
TypeError naming the op, the argument and its position; arraygrad does the same instead of
failing later with an AttributeError deep inside an op.
"""
import builtins
import functools
import inspect

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


def tensor_op(fn=None, *, others=(), optional=(), floating=None, name=None):
    """Decorator of a public op whose first argument must be a Tensor. `others` names further
    parameters that must be Tensors when given (None passes by keyword, as an omitted default);
    `optional` names parameters that may be a Tensor or None (torch's `Tensor?`). `floating`
    names torch's kernel of an op with floating (and complex) kernels only: an integer or bool
    first argument gets torch's NotImplementedError naming it. `name`: the op's name in
    errors, where it is not the function's (the general path behind a one-frame op)."""
    if fn is None:
        return functools.partial(tensor_op, others=others, optional=optional, floating=floating,
                                 name=name)
    name = name or fn.__name__
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.kind is not p.VAR_POSITIONAL and p.kind is not p.VAR_KEYWORD]
    first = params[0].name
    names = [p.name for p in params]

    def place(p):           # (index in args, a huge one for keyword-only; name; position)
        i = names.index(p)
        return (i if params[i].kind is not params[i].KEYWORD_ONLY else 1 << 30), p, i + 1
    checked = tuple(place(p) for p in others)
    maybe = tuple(place(p) for p in optional)

    @functools.wraps(fn)
    def op(*args, **kwargs):
        x = args[0] if args else kwargs.get(first)
        if not isinstance(x, Tensor):
            raise not_tensor(name, first, 1, x)
        if floating is not None and not x.dtype.is_differentiable:
            raise not_implemented(floating, x.dtype)
        for i, p, pos in checked:
            v = args[i] if i < len(args) else kwargs.get(p)
            if not isinstance(v, Tensor) and (v is not None or i < len(args)):
                raise not_tensor(name, p, pos, v)
        for i, p, pos in maybe:
            v = args[i] if i < len(args) else kwargs.get(p)
            if v is not None and not isinstance(v, Tensor):
                raise not_tensor(name, p, pos, v)
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


def bool_args(op, **flags):
    """torch's parser takes only a bool for a bool argument: None, 0 or a string is a
    TypeError naming the op and the argument (never read as False)."""
    for name, value in flags.items():
        if type(value) is not builtins.bool:
            raise TypeError(f"{op}(): argument '{name}' must be bool, not {type_name(value)}")


def int_arg(op, name, value):
    """An int argument as torch's parser takes it (anything with __index__ but a bool): a float
    or a string is a TypeError naming the op and the argument."""
    if isinstance(value, builtins.bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{op}(): argument '{name}' must be int, not {type_name(value)}")
    return value.__index__()


def dtype_arg(op, dtype):
    if dtype is not None and not isinstance(dtype, _dt.dtype):
        raise TypeError(f"{op}(): argument 'dtype' must be arraygrad.dtype, not {type_name(dtype)}")
    return dtype


def number_arg(op, value, arg, pos):
    if isinstance(value, Tensor) or not is_number(value):
        raise TypeError(f"{op}(): argument '{arg}' (position {pos}) must be Number, not "
                        f"{type_name(value)}")
    return value


def is_number(v):
    if isinstance(v, (builtins.bool, builtins.int, builtins.float)):
        return True
    kind = getattr(getattr(v, "dtype", None), "kind", None)    # NumPy scalars
    return kind in ("b", "i", "u", "f") and getattr(v, "ndim", 1) == 0


short_dtype_name = _dt.short_name
c_dtype_name = _dt.c_name


def same_dtype(message, *tensors):
    """torch's refusal to promote in ops whose kernels take one dtype: RuntimeError `message`,
    formatted with the short names of the dtypes (None entries skipped), when they differ."""
    ds = [t.dtype for t in tensors if t is not None]
    if any(d is not ds[0] for d in ds):
        raise RuntimeError(message.format(*(short_dtype_name(d) for d in ds)))


def not_implemented(kernel, dtype):
    """torch's answer when its kernel has no version for `dtype` (integer input to a float-only
    op): NotImplementedError '"elu_cpu" not implemented for 'Long''."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{short_dtype_name(dtype)}\'')


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a matrix the op cannot handle (singular, not positive-definite).
    A RuntimeError, as torch's, so `except RuntimeError` catches it too."""

    __module__ = "arraygrad.linalg"
