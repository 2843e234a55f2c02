"""Tensor creation: from data, filled, ranges, random. Nothing here records history."""
import builtins
import math

from .. import _device
from .. import dtypes as _dt
from .. import _tensor as _t
from ..backends import default_backend, backend_of, array_dtype, numpy_backend, adopt
from ._checks import (tensor_op, size_arg, dtype_arg, number_arg, type_name, short_dtype_name,
                      c_dtype_name)
from .._generator import default_generator, stream
from ..core.grad_mode import no_grad
from ..autograd import inplace
from .shape import broadcast_shapes

Tensor = _t.Tensor
_host_xp = numpy_backend.xp


def _dtype_in(xp, dtype):
    """The array dtype of `xp` for arraygrad's `dtype` (NumPy's without a lookup)."""
    return dtype.np if xp is _host_xp else array_dtype(xp, dtype)


def _infer_dtype(data):
    """torch's dtype for Python data: bool, int64, or the default float."""
    flat = data
    while isinstance(flat, (list, tuple)) and flat:
        flat = flat[0]
    a = numpy_backend.asarray(data)
    if a.dtype.kind == "b":
        return _dt.bool
    if a.dtype.kind in "iu":
        return _dt.int64
    python_data = not numpy_backend.owns(data)
    if a.dtype.kind == "f" and a.dtype.itemsize == 8 and python_data:
        return _dt.get_default_dtype()
    if a.dtype.kind == "c" and python_data:
        return _dt.get_default_complex_dtype()
    return _dt.from_numpy_dtype(a.dtype)


def _array_dtype(a):
    """torch's refusal of a NumPy array whose dtype it has no tensor type for."""
    if a.dtype not in _dt._FROM_NP:
        raise TypeError(f"can't convert np.ndarray of type numpy.{a.dtype.type.__name__}. The "
                        "only supported types are: float64, float32, float16, complex64, "
                        "complex128, int64, int32, int16, int8, uint8, and bool.")


def _check_data(data):
    """Python data must be numbers (or tensors, arrays) nested in lists and tuples."""
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    for v in _flatten(data):
        if isinstance(v, (builtins.bool, builtins.int, builtins.float, builtins.complex, Tensor)) \
                or getattr(getattr(v, "dtype", None), "kind", None) in ("b", "i", "u", "f", "c"):
            continue
        raise RuntimeError(f"Could not infer dtype of {type_name(v)}")


def _ragged(data):
    """torch's error for nested sequences of unequal lengths."""
    level, dim = [data], 0
    while True:
        seqs = [v for v in level if isinstance(v, (list, tuple))]
        if not seqs:
            return ValueError(f"could not build a tensor from {type_name(data)} {data!r}"[:200])
        n = len(seqs[0])
        for v in level:
            if not isinstance(v, (list, tuple)) or len(v) != n:
                got = len(v) if isinstance(v, (list, tuple)) else type_name(v)
                return ValueError(f"expected sequence of length {n} at dim {dim} (got {got})")
        level, dim = [x for v in seqs for x in v], dim + 1


def _from_data(data, dtype, copy):
    if isinstance(data, Tensor):
        arr = data.detach()._base_array()
        be = backend_of(arr)
        xp = be.xp
        if dtype is not None and arr.dtype != _dtype_in(xp, dtype):
            return xp.astype(arr, _dtype_in(xp, dtype), copy=copy)
        return xp.asarray(arr, copy=True) if copy and not be.lazy else arr
    be = backend_of(data)
    if be is not default_backend() and hasattr(data, "shape"):
        try:
            _dt.of_array(data.dtype)
        except KeyError:
            raise TypeError(f"can't convert {be.name} array of dtype {data.dtype}: arraygrad "
                            "has no tensor type for it") from None
        xp = be.xp
        if dtype is not None:
            return xp.astype(data, _dtype_in(xp, dtype), copy=copy)
        return xp.asarray(data, copy=True) if copy and not be.lazy else data
    if numpy_backend.owns(data):
        _array_dtype(data)
        d = dtype.np if dtype is not None else None
        return numpy_backend.xp.asarray(data, dtype=d, copy=True if copy else None)
    _check_data(data)
    if isinstance(data, (list, tuple)) and any(isinstance(v, Tensor) for v in _flatten(data)):
        data = _nested_tolist(data)
    try:
        target = dtype if dtype is not None else _infer_dtype(data)
        return numpy_backend.xp.asarray(data, dtype=target.np)
    except ValueError:      # ragged nesting
        raise _ragged(data) from None
    except OverflowError:
        return _narrowed(data, target)


def _narrowed(data, dtype):
    """Python numbers outside an integer dtype's range, as torch converts them: beyond int64 a
    ValueError; an unsigned type takes negatives above -2**bits, wrapping around; other values
    out of range are refused."""
    xp = numpy_backend.xp
    try:
        wide = xp.asarray(data)
        if wide.dtype == xp.uint64:         # NumPy's type for ints in [2**63, 2**64)
            raise OverflowError
        wide = xp.astype(wide, xp.int64)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    bits = 8 * dtype.itemsize
    lo = -(2 ** (bits - 1)) if dtype.is_signed else 1 - 2 ** bits
    hi = 2 ** (bits - 1) - 1 if dtype.is_signed else 2 ** bits - 1
    if bool(xp.any(wide < lo)) or bool(xp.any(wide > hi)):
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")
    return xp.astype(wide, dtype.np)


def _flatten(data):
    stack = [data]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        else:
            yield v


def _nested_tolist(data):
    if isinstance(data, Tensor):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_nested_tolist(v) for v in data]
    return data


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor copying `data` (nested lists, numbers, arrays, tensors)."""
    dtype_arg("tensor", dtype)
    dev = _device.check(device)
    if isinstance(data, Tensor) and data._lvl is not None and _t._batched(data):
        return _per_example_copy(data, dtype)
    t = born_here(_t.make(_placed(_from_data(data, dtype, copy=True), device, dev)))
    if requires_grad:
        t.requires_grad_(True)
    return t


def as_tensor(data, dtype=None, device=None):
    dtype_arg("as_tensor", dtype)
    dev = _device.check(device)
    if isinstance(data, Tensor) and (dtype is None or data.dtype is dtype):
        return data if device is None else data.to(dev)
    if isinstance(data, Tensor) and data._lvl is not None and _t._batched(data):
        return _per_example_copy(data, dtype)
    return _t.make(_placed(_from_data(data, dtype, copy=False), device, dev))


def _placed(array, device, dev):
    """`array` (from data) on the checked device `dev`: an array of another library or device
    stays where it is unless `device=` was given, as torch.tensor(cuda_tensor) stays on the GPU."""
    if device is None and backend_of(array) is not default_backend():
        return array
    return _device.place(array, dev)


def _per_example_copy(data, dtype):
    """tensor(x) inside vmap: a copy of each example (torch cannot read a batched tensor)."""
    from .shape import clone
    out = clone(data.detach())
    return out if dtype is None else out.to(dtype)


asarray = as_tensor


def from_numpy(array):
    """A tensor sharing memory with the NumPy `array`."""
    if type(array) is not numpy_backend.array_type:
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _array_dtype(array)
    return _t.make(array)


def _fits(fill, dtype):
    """A complex fill of a real dtype (but bool) is refused, as torch (NumPy would drop its
    imaginary part)."""
    if type(fill) is builtins.complex and not dtype.is_complex and dtype is not _dt.bool:
        raise RuntimeError(f"value cannot be converted to type {_dt.c_name(dtype)} without "
                           "overflow")


def _filled(op, fill, size, dtype, device, requires_grad):
    dtype = dtype_arg(op, dtype) or _dt.get_default_dtype()
    _fits(fill, dtype)
    dev = _device.check(device)
    if dev.type == "cpu":
        arr = default_backend().xp.full(size_arg(op, size), fill, dtype=dtype.np)
    else:
        xp = _device.backend(dev).xp
        arr = xp.full(size_arg(op, size), fill, dtype=array_dtype(xp, dtype))
    t = born_here(_t.make(arr))
    if requires_grad:
        t.requires_grad_(True)
    return t


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None):
    return _filled("zeros", 0, size, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return _filled("ones", 1, size, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    return _filled("empty", 0, size, dtype, device, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    fill_value = fill_number("full", fill_value)
    if dtype is None:
        dtype = _dt.result_type(fill_value)
    return _filled("full", fill_value, (size,), dtype, device, requires_grad)


def fill_number(op, value):
    if isinstance(value, Tensor) and value.numel() == 1:
        return value.item()
    if isinstance(value, builtins.complex) or getattr(getattr(value, "dtype", None), "kind",
                                                      None) == "c":
        return builtins.complex(value)      # a complex fill (complex64 by default, as torch)
    return number_arg(op, value, "fill_value", 2)


def in_library_of(like, t):
    """`t`, a constant made by a creation function (in the default library, NumPy), as an
    array of the library that holds `like` (as torch makes such constants with
    `device=like.device`). Free when both are NumPy's."""
    be = backend_of(_base(like)._data)
    if be is numpy_backend:
        return t
    return _t.make(be.asarray(t._data))


def _base(t):
    """The plain tensor under `t`'s transform levels (whose array holds its library)."""
    inner = _t.lower(t)
    while inner._lvl is not None:
        inner = _t.lower(inner._inner)
    return inner


def new_filled(like, op, fill, size, dtype, device, requires_grad):
    """`like.new_zeros(size)` and its kin: `like`'s dtype, array library and device unless
    given (torch keeps the device; the library stays too, as for `zeros_like`)."""
    size = size_arg(op, size)
    dtype = dtype_arg(op, dtype) or like.dtype
    _fits(fill, dtype)
    dev = None if device is None else _device.check(device)
    xp = backend_of(_base(like)._data).xp
    arr = xp.full(size, fill, dtype=_dtype_in(xp, dtype))
    t = born_here(_t.make(arr if dev is None else _device.place(arr, dev)))
    if requires_grad:
        t.requires_grad_(True)
    return t


def new_tensor(like, data, dtype, device, requires_grad):
    """`like.new_tensor(data)`: a copy of `data` with `like`'s dtype, device and array library
    unless given."""
    t = tensor(data, dtype=dtype or like.dtype, device=like.device if device is None else device)
    if device is None:
        be = backend_of(_base(like)._data)
        if backend_of(t._data) is not be:
            t = born_here(_t.make(adopt(be, t._data)))
    return t.requires_grad_() if requires_grad else t


def _like(fill, input, dtype, requires_grad, device):
    dtype = dtype or input.dtype
    _fits(fill, dtype)
    dev = None if device is None else _device.check(device)
    # inside a transform: a new array wrapped as `input` is (same levels and batch dims,
    # no derivative), so it is batched where input is and can be written per example
    chain = []
    inner = _t.lower(input)
    while inner._lvl is not None:
        chain.append(inner)
        inner = _t.lower(inner._inner)
    xp = backend_of(inner._data).xp
    arr = xp.full(inner._data.shape, fill, dtype=_dtype_in(xp, dtype))
    t = born_here(_t.make(arr if dev is None else _device.place(arr, dev)))
    for w in reversed(chain):
        t = w._lvl.constant_like(w, t)
    if chain:
        return t
    if requires_grad:
        t.requires_grad_(True)
    return t


@tensor_op
def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(0, input, dtype, requires_grad, device)


@tensor_op
def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(1, input, dtype, requires_grad, device)


@tensor_op
def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(0, input, dtype, requires_grad, device)


@tensor_op
def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    return _like(fill_number("full_like", fill_value), input, dtype, requires_grad, device)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    dev = _device.check(device)
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    for i, v in enumerate(vals):
        number_arg("arange", v, ("start", "end", "step")[i], i + 1)
    if vals[2] == 0:
        raise RuntimeError("step must be nonzero")
    if not all(math.isfinite(v) for v in vals[:2]):
        raise RuntimeError(f"unsupported range: {vals[0]} -> {vals[1]}")
    if (vals[1] - vals[0]) * vals[2] < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    dtype_arg("arange", dtype)
    if dtype is None:
        dtype = _dt.int64 if all(hasattr(v, "__index__") and not isinstance(v, builtins.bool)
                                 for v in vals) else _dt.get_default_dtype()
    xp = default_backend().xp
    # floats are stepped in float64 and rounded once, as torch's values are
    t = _t.make(_device.place(xp.astype(xp.arange(*vals, dtype=xp.float64), _dtype_in(xp, dtype))
                              if dtype.is_floating_point else
                              xp.arange(*vals, dtype=_dtype_in(xp, dtype)), dev))
    return t.requires_grad_(True) if requires_grad else t


def _steps(op, steps):
    if isinstance(steps, builtins.bool) or not hasattr(steps, "__index__"):
        raise TypeError(f"{op}(): argument 'steps' (position 3) must be int, not "
                        f"{type_name(steps)}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return steps.__index__()


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    dev = _device.check(device)
    steps = _steps("linspace", steps)
    dtype = dtype_arg("linspace", dtype) or _dt.get_default_dtype()
    xp = default_backend().xp
    t = _t.make(_device.place(xp.astype(xp.linspace(start, end, steps), _dtype_in(xp, dtype)),
                              dev))
    return t.requires_grad_(True) if requires_grad else t


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    dev = _device.check(device)
    steps = _steps("logspace", steps)
    dtype = dtype_arg("logspace", dtype) or _dt.get_default_dtype()
    xp = default_backend().xp
    t = _t.make(_device.place(
        xp.astype(base ** xp.linspace(start, end, steps), _dtype_in(xp, dtype)), dev))
    return t.requires_grad_(True) if requires_grad else t


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    dev = _device.check(device)
    for name, v in (("n", n), ("m", m)):
        if v is None:
            continue
        if isinstance(v, builtins.bool) or not hasattr(v, "__index__"):
            raise TypeError(f"eye(): argument '{name}' (position {1 if name == 'n' else 2}) "
                            f"must be int, not {type_name(v)}")
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    dtype = dtype_arg("eye", dtype) or _dt.get_default_dtype()
    xp = default_backend().xp
    t = _t.make(_device.place(xp.eye(n, m, dtype=_dtype_in(xp, dtype)), dev))
    return t.requires_grad_(True) if requires_grad else t


def _tri_indices(op, lower, row, col, offset, dtype, device):
    dev = _device.check(device)
    for i, (name, v) in enumerate((("row", row), ("col", col), ("offset", offset))):
        if isinstance(v, builtins.bool) or not hasattr(v, "__index__"):
            raise TypeError(f"{op}(): argument '{name}' (position {i + 1}) must be int, not "
                            f"{type_name(v)}")
    dtype = dtype_arg(op, dtype) or _dt.int64
    if dtype.is_floating_point or dtype is _dt.bool:
        raise NotImplementedError(f"\"{op}\" not implemented for '{short_dtype_name(dtype)}'")
    for name, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{name} must be non-negative, got{v}")
    xp = default_backend().xp
    r = xp.reshape(xp.arange(row, dtype=xp.int64), (-1, 1))
    c = xp.reshape(xp.arange(col, dtype=xp.int64), (1, -1))
    keep = xp.reshape(c - r <= offset if lower else c - r >= offset, (-1,))
    rows, cols = xp.reshape(r + 0 * c, (-1,))[keep], xp.reshape(c + 0 * r, (-1,))[keep]
    return _t.make(_device.place(xp.astype(xp.stack([rows, cols]), _dtype_in(xp, dtype)), dev))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """Indices (2 x N, row-major order) of the lower triangle of a row x col matrix, the
    diagonals up to `offset` included: `x[tuple(tril_indices(3, 3))]` are x.tril()'s entries."""
    return _tri_indices("tril_indices", True, row, col, offset, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """Indices (2 x N, row-major order) of the upper triangle from diagonal `offset` on."""
    return _tri_indices("triu_indices", False, row, col, offset, dtype, device)


# ----------------------------------------------------------------- random
def manual_seed(seed):
    """Seed the global stream; returns `default_generator`, as torch."""
    return default_generator.manual_seed(seed)


def initial_seed():
    return default_generator.initial_seed()


def seed():
    """Reseed the global stream from OS entropy; returns the seed."""
    return default_generator.seed()


def get_rng_state():
    """The global random stream's state as a uint8 tensor (for `set_rng_state`)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator._restore(new_state, "set_rng_state", "get_rng_state()")


def _check_random(what):
    """The vmap levels that give a random op its own batch dim: [(level, batch size)].

    Each level's `check_random` raises (randomness='error'), returns None ('same':
    one draw shared by the batch) or its batch size ('different')."""
    from ..core.dispatch import current_interpreters
    levels = []
    for interp in current_interpreters():
        check = getattr(interp, "check_random", None)
        if check is not None:
            size = check(what)
            if size is not None:
                levels.append((interp, size))
    return levels


def _random(op, sample, size, dtype, device, requires_grad, generator, floating=True):
    """`sample(rng, shape)` as a tensor; inside vmap with randomness='different', one draw
    per example."""
    dtype = dtype_arg(op, dtype) or (_dt.get_default_dtype() if floating else _dt.int64)
    dev = _device.check(device)
    if floating and not dtype.is_floating_point:
        raise NotImplementedError(f"{op}(): not implemented for '{short_dtype_name(dtype)}' "
                                  "(a floating-point dtype is required)")
    shape = size_arg(op, size)
    rng = stream(generator, op)
    levels = _check_random(op)
    if levels:
        # one draw per example: the lowest level's batch dim first, each level wraps one
        t = _t.make(_device.place(_drawn(sample(rng, tuple(s for _, s in levels) + shape),
                                                  dtype), dev))
        for interp, _ in levels:
            t = interp.wrap(t, 0)
        return t
    t = _t.make(_device.place(_drawn(sample(rng, shape), dtype), dev))
    return t.requires_grad_(True) if requires_grad else t


def _drawn(draws, dtype):
    """The random stream's draws (an array or a number) as an array of `dtype`."""
    be = default_backend()
    return be.xp.astype(be.asarray(draws), _dtype_in(be.xp, dtype))


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None):
    return _random("rand", lambda rng, s: rng.random(s), size, dtype, device, requires_grad,
                   generator)


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None):
    return _random("randn", lambda rng, s: rng.standard_normal(s), size, dtype, device,
                   requires_grad, generator)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False):
    _device.check(device)
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high          # randint(high, size)
    elif high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    for name, v in (("low", low), ("high", high)):
        if isinstance(v, builtins.bool) or not hasattr(v, "__index__"):
            raise TypeError(f"randint(): argument '{name}' must be int, not {type_name(v)}")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    return _random("randint", lambda rng, s: rng.integers(low, high, s), (size,), dtype, device,
                   False, generator, floating=False)


def randperm(n, *, dtype=None, device=None, requires_grad=False, generator=None):
    # the order of iid uniform keys: a uniform permutation, one per example inside vmap
    return _random("randperm", lambda rng, s: default_backend().xp.argsort(rng.random(s), axis=-1), (n,), dtype,
                   device, False, generator, floating=False)


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):
    return rand(*input.shape, generator=generator, dtype=dtype or input.dtype,
                device=input.device if device is None else device, requires_grad=requires_grad)


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):
    return randn(*input.shape, generator=generator, dtype=dtype or input.dtype,
                 device=input.device if device is None else device, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False):
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), generator=generator,
                   dtype=dtype or input.dtype, device=input.device if device is None else device)


def normal(mean, std, size=None, *, generator=None):
    """mean + std * N(0, 1), differentiable in a tensor mean and std (as torch)."""
    if size is not None:
        shape = size_arg("normal", size)
    else:
        shapes = [tuple(v.shape) for v in (mean, std) if isinstance(v, Tensor)]
        if not shapes:
            raise TypeError("normal(): with a float mean and std, give the output's size: "
                            "normal(mean, std, size)")
        shape = broadcast_shapes(*shapes)
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    return randn(*shape, generator=generator, dtype=tensors[0].dtype if tensors else None,
                 device=tensors[0].device if tensors else None) * std + mean


def bernoulli(input, p=None, *, generator=None):
    """0/1 draws (input's dtype) that are 1 with probability `input` (or the number `p`);
    drawn per example inside vmap(randomness='different'), as rand_like is."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"bernoulli\" not implemented for '{input.dtype}': expected "
                                  "a floating-point probability tensor")
    probs = input.detach() if p is None else p
    if p is None and input._lvl is None and input.numel() and \
            not bool(((probs >= 0) & (probs <= 1)).all()):
        raise RuntimeError("bernoulli: expected probabilities 0 <= p <= 1")
    if p is not None and not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli: expected 0 <= p <= 1, got p={p}")
    draws = rand_like(input, generator=generator, dtype=_dt.float64)
    return (draws < probs).to(input.dtype)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Category indices (int64) drawn with the weights in `input`'s last dim (1-d or 2-d).

    With replacement: inverse-CDF sampling. Without: the `num_samples` smallest of
    Exp(1)/weight (an exponential race), which draws successively without replacement."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{input.dtype}")
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    k = input.shape[-1]
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > k:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    w = input.detach().to(_dt.float64)
    if input._lvl is None:
        if not bool(((w >= 0) & (w < float("inf"))).all()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if not bool((w.sum(-1) > 0).all()):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rows = input.shape[:-1]
    if replacement:
        cdf = w.cumsum(-1)
        u = rand(*rows, num_samples, generator=generator, dtype=_dt.float64) * cdf[..., -1:]
        idx = (cdf.unsqueeze(-2) <= u.unsqueeze(-1)).sum(-1)
        return idx.clamp_max(k - 1).to(_dt.int64)
    race = -(-rand(*rows, k, generator=generator, dtype=_dt.float64)).log1p() / w
    return race.argsort(-1)[..., :num_samples].to(_dt.int64)


@tensor_op
def poisson(input, generator=None):
    """Poisson draws with the rates in `input` (of input's dtype). Their gradient is zero; a
    rate that requires grad is joined to the draws by `+ 0 * input`, so that they have history
    as torch's do."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for "
                                  f"'{short_dtype_name(input.dtype)}'")
    rng = stream(generator, "poisson")
    _check_random("poisson")
    if input._lvl is not None:
        raise NotImplementedError("poisson inside a transform is not supported yet: draw the "
                                  "values outside the transformed function")
    rates = input._data
    if input.numel() and not builtins.bool(((input >= 0) & (input < math.inf)).all()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative and finite")
    draws = _t.make(_drawn(rng.poisson(rates), input.dtype))
    return draws + input * 0 if input.requires_grad else draws


# ----------------------------------------------------------------- random fills (Tensor.x_)
# NOTE [random fills]
# `t.exponential_()` and its kin draw a fresh tensor like `t` (through `_random`, so vmap's
# randomness= and `generator=` apply as for rand) and write it into `t` in place. The write
# gives a tensor with history a node of torch's name whose gradient is zero.
def _fill_random(self, op, sample, generator, node, floating=True):
    if floating and not self.dtype.is_floating_point:
        raise RuntimeError(f"{op} is a continuous probability distribution: the tensor's dtype "
                           f"must be a floating point but it is {short_dtype_name(self.dtype)}")
    with no_grad():
        draw = _random(op, sample, tuple(self.shape), self.dtype, None, False, generator,
                       floating=False)
    return inplace.apply(self, draw, node)


def _positive(op, name, value):
    if not value > 0:
        raise RuntimeError(f"{op} expects {name} > 0.0, but found {name}={value}")


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with Exp(lambd) draws (rate `lambd`)."""
    _positive("exponential_", "lambda", lambd)
    return _fill_random(self, "exponential_", lambda rng, s: rng.exponential(1.0 / lambd, s),
                        generator, "ExponentialBackward0")


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy(median, sigma) draws."""
    _positive("cauchy_", "sigma", sigma)
    return _fill_random(self, "cauchy_",
                        lambda rng, s: median + sigma * rng.standard_cauchy(s),
                        generator, "CauchyBackward0")


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with exp(N(mean, std)) draws."""
    _positive("log_normal_", "std", std)
    return _fill_random(self, "log_normal_", lambda rng, s: rng.lognormal(mean, std, s),
                        generator, "LogNormalBackward0")


def geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return _fill_random(self, "geometric_", lambda rng, s: rng.geometric(p, s), generator,
                        "GeometricBackward0", floating=False)


_MANTISSA_BITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _random_limit(dtype):
    """The largest value random_ draws by default: every integer below it is exact."""
    if dtype is _dt.bool:
        return 1
    if dtype.is_floating_point:
        return 2 ** _MANTISSA_BITS[dtype.name]
    return int(default_backend().xp.iinfo(dtype.np).max)


def random_(self, *args, generator=None):
    """Fill with integers uniform in [from, to): `random_()` over [0, 2**mantissa] (floats) or
    [0, max] (integers), `random_(to)`, `random_(from, to)` (`to=None`: up to that limit)."""
    if len(args) > 2 or (len(args) == 1 and args[0] is None) or not builtins.all(
            a is None or (hasattr(a, "__index__") and not isinstance(a, builtins.bool))
            for a in args):
        raise TypeError("random_() received an invalid combination of arguments - got "
                        f"({', '.join(type_name(a) for a in args)}), expected (), (int to) or "
                        "(int from, int to), each with an optional generator")
    limit = _random_limit(self.dtype)
    if not args:
        low, high, node = 0, limit, "RandomBackward2"
    elif len(args) == 1:
        low, high, node = 0, args[0].__index__() - 1, "RandomBackward1"
    else:
        low = args[0].__index__()
        high = limit if args[1] is None else args[1].__index__() - 1
        node = "RandomBackward0"
        if args[1] is not None and low > high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={low} >= to={high + 1}")
    if not self.dtype.is_floating_point and self.dtype is not _dt.bool:
        info = default_backend().xp.iinfo(self.dtype.np)
        if not info.min <= low <= info.max:
            raise RuntimeError(f"from is out of bounds for {c_dtype_name(self.dtype)}")
        if not info.min <= high <= info.max:
            raise RuntimeError(f"to - 1 is out of bounds for {c_dtype_name(self.dtype)}")
    if high < low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high + 1}")
    return _fill_random(self, "random_",
                        lambda rng, s: rng.integers(low, high, s, endpoint=True),
                        generator, node, floating=False)


from ..core.dispatch import born_here  # noqa: E402  (dispatch reaches back to creation)
