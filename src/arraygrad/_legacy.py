"""The legacy constructors old scripts still use: `torch.Tensor(2, 3)`, `torch.FloatTensor([1, 2])`,
`x.type(torch.DoubleTensor)`, `x.type()`, `x.new(...)` and `set_default_tensor_type`.

    torch.Tensor(2, 3)            # uninitialised (here: zeros), the default dtype
    torch.LongTensor([1.7, 2])    # from data, cast: tensor([1, 2])
    isinstance(x, torch.FloatTensor)   # True for a float32 tensor, as torch

`FloatTensor` and friends are not Tensor subclasses (nor are they in torch): they are
`tensortype` objects that build tensors of their dtype and answer `isinstance` by dtype.
`x.type()` answers torch's name ('torch.FloatTensor') so scripts comparing it still work.
"""
import warnings

import numpy as np

from . import _device
from . import _tensor as _t
from . import dtypes as _dt

# (legacy name, dtype): torch's names for the dtypes arraygrad has
_NAMES = (("FloatTensor", _dt.float32), ("DoubleTensor", _dt.float64),
          ("HalfTensor", _dt.float16), ("ByteTensor", _dt.uint8), ("CharTensor", _dt.int8),
          ("ShortTensor", _dt.int16), ("IntTensor", _dt.int32), ("LongTensor", _dt.int64),
          ("BoolTensor", _dt.bool), ("BFloat16Tensor", _dt.bfloat16))


class tensortype(type):
    """The type of `FloatTensor` & co: calling one builds a tensor of its dtype."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, _t.Tensor) and obj.dtype is cls.dtype

    def __call__(cls, *args, device=None):
        return new(cls.dtype, cls.__name__, args, device)

    def __repr__(cls):
        return f"<class 'arraygrad.{cls.__name__}'>"


_BY_DTYPE = {}
for _name, _dtype in _NAMES:
    _BY_DTYPE[_dtype] = tensortype(_name, (), {"dtype": _dtype, "__module__": "arraygrad"})
    globals()[_name] = _BY_DTYPE[_dtype]


def new(dtype, what, args, device=None, tensor_dtype_free=False):
    """A tensor from the legacy arguments: sizes (uninitialised, zeros here), a Size, data
    (a sequence or array, cast to `dtype`), a tensor (aliased), or nothing (empty).
    `tensor_dtype_free`: torch.Tensor(t) aliases a tensor of any dtype."""
    dev = _device.check(device)
    if dev.type != "cpu":
        return new(dtype, what, args, None, tensor_dtype_free).to(dev)
    if not args:
        return _t.make(np.zeros((0,), dtype.np))
    first = args[0]
    if len(args) == 1 and isinstance(first, _t.Tensor):
        if not tensor_dtype_free and first.dtype is not dtype:
            raise TypeError(f"{what}(): expected a tensor of dtype {dtype}, but got {first.dtype}")
        return first.detach()
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args) or \
            (len(args) == 1 and isinstance(first, _t.Size)):
        shape = tuple(first) if isinstance(first, _t.Size) else tuple(int(a) for a in args)
        for s in shape:
            if s < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                                   f"{list(shape)}")
        return _t.make(np.zeros(shape, dtype.np))
    if len(args) > 1:
        raise TypeError(f"{what}(): expected sizes (ints) or one sequence of data, got "
                        f"({', '.join(type(a).__name__ for a in args)})")
    return _t.make(_data_array(first, dtype, what))


def _data_array(data, dtype, what):
    if not isinstance(data, (list, tuple, np.ndarray)):
        raise TypeError(f"{what}(): data must be a sequence (got {type(data).__name__})")
    stack = [data]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, str):
            raise TypeError(f"{what}(): invalid data type 'str'")
    try:
        arr = np.asarray(data)
    except ValueError as e:     # ragged nesting
        raise ValueError(f"{what}(): the data is not a rectangular nesting of sequences "
                         f"({e})") from None
    if arr.dtype == object:
        raise TypeError(f"{what}(): could not convert the data to numbers (got {arr.dtype})")
    with np.errstate(invalid="ignore"):
        return arr.astype(dtype.np)


def tensor_new(cls, *args, device=None):
    """`torch.Tensor(...)`: the legacy constructor with the default dtype."""
    return new(_dt.get_default_dtype(), "Tensor", args, device, tensor_dtype_free=True)


def type_name(dtype):
    """torch's legacy name for `dtype`: 'torch.FloatTensor'."""
    return "torch." + _BY_DTYPE[dtype].__name__


def _type_of(spec):
    if isinstance(spec, _dt.dtype):
        return spec
    if isinstance(spec, tensortype):
        return spec.dtype
    if isinstance(spec, str):
        module, _, name = spec.rpartition(".")
        if module in ("torch.cuda", "arraygrad.cuda"):
            _device.check("cuda")
        for d, cls in _BY_DTYPE.items():
            if name == cls.__name__ and module in ("torch", "arraygrad"):
                return d
        raise ValueError(f"invalid type: '{spec}'")
    raise TypeError("dtype must be a type, str, or dtype object")


def set_default_tensor_type(t):
    """Deprecated: `set_default_tensor_type(torch.DoubleTensor)` = set_default_dtype(float64)."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    if isinstance(t, _dt.dtype):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    dtype = _type_of(t)
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dt.set_default_dtype(dtype)


def type_method(self, dtype=None, non_blocking=False, **kwargs):
    """`x.type()` -> 'torch.FloatTensor'; `x.type(torch.DoubleTensor)` (or a dtype, or a name)
    -> x converted, x itself when the dtype already matches."""
    if dtype is None:
        return type_name(self.dtype)
    return self.to(_type_of(dtype))


def new_method(self, *args, device=None):
    """`x.new(2, 3)` / `x.new([1, 2])`: the legacy constructor with x's dtype."""
    return new(self.dtype, "new", args, device)
