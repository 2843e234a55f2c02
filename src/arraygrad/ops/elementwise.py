"""Elementwise primitives: arithmetic, math functions, comparisons, casts."""
import builtins
import cmath
import math
import operator

from .. import dtypes as _dt
from .. import _tensor as _t
from ..backends import silent, backend_of, array_dtype, numpy_backend
from ._checks import (tensor_op, not_tensor, not_implemented, same_dtype, number_arg,
                      short_dtype_name, type_name)
from ._rules import unary as _unary, binary, nondiff, elementwise, fresh, take
from .registry import primitive
from ..autograd.eager import unary_op, binary_op

Tensor = _t.Tensor
host_xp = numpy_backend.xp     # NOTE [fused functions]


# ----------------------------------------------------------------- promotion
def _dtype(v):
    return v.dtype if isinstance(v, Tensor) else None


# a Python scalar of these types joins a tensor of these kinds as is; a bool joins a number
# tensor as an int (the standard promotes bool scalars only with bool arrays)
_WEAK_OK = {builtins.float: "f", builtins.int: "fiu", builtins.bool: "b"}


def promote(*operands, float_only=False, op="op"):
    """Cast tensor operands to torch's result dtype; scalars stay weak. Operands that are
    neither tensors nor numbers are a TypeError naming `op`, as torch's."""
    if len(operands) == 2:
        # fast path: same dtype, or a Python scalar that cannot change the dtype (a tensor of
        # a transform level has the dtype of the array at its bottom); with float_only, a
        # floating dtype
        a, b = operands
        if isinstance(a, Tensor):
            da = a._data if a._lvl is None else _bottom(a)
            kinds = _WEAK_OK.get(type(b))
            if kinds is not None:
                kind = _dt.of_array(da.dtype).kind
                if kind in kinds and (not float_only or kind == "f"):
                    if type(b) is builtins.int and kind in "iu":
                        return a, _wrapped_int(b, a.dtype)
                    return operands
            elif isinstance(b, Tensor):
                db = b._data if b._lvl is None else _bottom(b)
                if type(da) is type(db) and da.dtype == db.dtype and (
                        not float_only or _dt.of_array(da.dtype).kind in "fc"):
                    return operands
        elif isinstance(b, Tensor):      # a scalar first (`1 - t`): as above
            kinds = _WEAK_OK.get(type(a))
            if kinds is not None:
                kind = _dt.of_array((b._data if b._lvl is None else _bottom(b)).dtype).kind
                if kind in kinds and (not float_only or kind == "f"):
                    if type(a) is builtins.int and kind in "iu":
                        return _wrapped_int(a, b.dtype), b
                    return operands
    res = _dt.result_type(*operands)
    if float_only and res._category < 2:
        res = _dt.get_default_dtype()
    out = []
    for i, v in enumerate(operands):
        if isinstance(v, Tensor):
            if v.dtype is not res:
                v = convert(v, res)
        elif type(v) is builtins.int and res is not None and res._category == 1:
            v = _wrapped_int(v, res)
        elif type(v) is builtins.bool and res is not None and res is not _dt.bool:
            v = builtins.int(v)
        elif type(v) not in (builtins.bool, builtins.int, builtins.float, builtins.complex):
            if getattr(getattr(v, "dtype", None), "kind", None) not in ("b", "i", "u", "f", "c"):
                raise not_tensor(op, ("input", "other")[builtins.min(i, 1)], i + 1, v)
            # NumPy scalars too (np.float64 is a float): as weak scalars they take the result
            # dtype, where NumPy would compute in their own
            v = _as_tensor(v)
            if v.dtype is not res:
                v = convert(v, res)
        out.append(v)
    return out


def _bottom(t):
    """The array at the bottom of a transform's tensor (whose dtype the tensor has)."""
    while t._lvl is not None:
        t = t._inner
    return t._data


def _wrapped_int(v, dtype):
    """A Python int taken modulo 2**bits of an integer dtype: torch wraps (int32 + 2**40),
    NumPy raises OverflowError."""
    bits = 8 * dtype.itemsize
    lo = -(1 << (bits - 1)) if dtype.is_signed else 0
    if lo <= v < lo + (1 << bits):
        return v
    return (v - lo) % (1 << bits) + lo


def _as_tensor(v):
    from .creation import tensor
    return tensor(v)


def _broadcast_error(name, shapes):
    a, b = shapes[0], shapes[1]
    for i in range(1, builtins.max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else 1
        db = b[-i] if i <= len(b) else 1
        if da != db and da != 1 and db != 1:
            return RuntimeError(f"The size of tensor a ({da}) must match the size of "
                                f"tensor b ({db}) at non-singleton dimension "
                                f"{builtins.max(len(a), len(b)) - i} (in {name}, shapes "
                                f"{list(a)} and {list(b)})")
    return RuntimeError(f"{name}: shapes {list(a)} and {list(b)} are not broadcastable")


def unary(name, impl, deriv, **kw):
    """An elementwise unary primitive whose impl is silent about inf/nan results."""
    return _unary(name, silent(impl), deriv, **kw)


def _checked(name, fn, quiet=True):
    """Binary impl: torch's broadcast error; without floating-point warnings when `quiet`
    (comparisons and logical ops cannot produce them, so they skip the cost)."""
    def impl(xp, x, y, **params):
        try:
            out = fn(xp, x, y, **params)
        except ValueError as e:
            sx, sy = x.shape if hasattr(x, "shape") else (), y.shape if hasattr(y, "shape") else ()
            try:
                xp.broadcast_shapes(sx, sy)
            except ValueError:
                raise _broadcast_error(name, (sx, sy)) from None
            raise RuntimeError(f"{name}: {e}") from None    # e.g. ints to negative int powers
        if (type(x) is builtins.float or type(y) is builtins.float) and \
                _dt.of_array(out.dtype) is _dt.float32:
            return _round_bfloat16(xp, x, y, out)
        return out
    impl.plain = fn     # float32/float64 arrays: the same values (NOTE [one-frame ops])
    return silent(impl) if quiet else impl


def _round_bfloat16(xp, x, y, out):
    """bfloat16 with a Python float computes in float32 (torch's op math, and ml_dtypes');
    the result is rounded back to bfloat16."""
    a = y if type(x) is builtins.float else x
    return xp.astype(out, a.dtype) if getattr(a, "dtype", None) is not None and \
        _dt.of_array(a.dtype) is _dt.bfloat16 else out


# ----------------------------------------------------------------- casts
@silent      # nan/inf cast to an integer type: torch gives some value, without a warning
def _convert_impl(xp, x, dtype):
    return xp.astype(x, array_dtype(xp, dtype))


def _to_dtype_of_input(ctx, g, dtype):
    d = ctx.dtypes[0]
    return (g.real if g.dtype.is_complex and not d.is_complex else g).to(d)


_convert = primitive("convert", _convert_impl, node_name="ToCopyBackward0", save=(),
                     vjp=(_to_dtype_of_input,), complex=True,
                     jvp=(lambda ctx, t, dtype: convert(t, dtype),), batch=elementwise)


def convert(x, dtype):
    if x.dtype is dtype:
        return x
    if x.dtype.is_complex and not dtype.is_complex:
        import warnings
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                      stacklevel=3)
        x = x.real
        if x.dtype is dtype:
            return x.clone()
    return _convert(x, dtype=dtype)


# ----------------------------------------------------------------- arithmetic
# alpha is a parameter of add and sub, as in torch, so that their jvp reads no primal (a
# tangent of `x.add(y, alpha=2)` requires grad only where y's does) and their node is torch's
def _scaled(y, alpha):
    return y if alpha == 1 else y * alpha


def _into(ufunc, *args, out=None):
    """`ufunc(*args)` written into `out` where that is an array of the result's shape and
    dtype (a spare buffer or a temporary of an array-level rule), else into a new one."""
    if type(out) is not host_xp.ndarray:
        return ufunc(*args)
    # the common case without NumPy's broadcast_shapes (1.5 us): arrays of out's dtype, one
    # of them of its shape, the others of its shape or 0-d; Python numbers (weak)
    shape, dtype, sized = out.shape, out.dtype, False
    for a in args:
        t = type(a)
        if t is host_xp.ndarray:
            if a.dtype != dtype or a.shape != shape and a.ndim:
                break
            sized = sized or a.shape == shape
        elif t is not builtins.float and t is not builtins.int:
            break
    else:
        if sized:
            return ufunc(*args, out=out)
    if out.shape == host_xp.broadcast_shapes(*(getattr(a, "shape", ()) for a in args)) \
            and out.dtype == host_xp.result_type(*args):
        return ufunc(*args, out=out)
    return ufunc(*args)


def _literals(*values):
    """The array-level rules' literal numbers as read-only 0-d arrays of each float dtype,
    by dtype. NumPy's ufuncs take a Python number by a slower path than a 0-d array (NEP 50's
    weak promotion: 250 ns more on 16 elements) and compute the same values, as they cast
    it to the array's dtype first."""
    tables = []
    for v in values:
        table = {}
        for dt in (host_xp.float32, host_xp.float64):
            a = host_xp.asarray(v, dtype=dt)
            a.flags.writeable = False
            table[a.dtype] = a
        tables.append(table)
    return tables


_ZERO, _ONE, _TWO, _MINUS_HALF, _TWO_OVER_SQRT_PI = _literals(
    0, 1, 2, -0.5, 1.1283791670955126)


_add = binary("add", _checked("add", lambda xp, x, y, alpha=1: xp.add(x, _scaled(y, alpha))),
              lambda ctx, g, alpha=1: g, lambda ctx, g, alpha=1: g if alpha == 1 else g * alpha,
              save=(), complex=True, float_op=operator.add,
              array_vjp=lambda xp, g, inputs, outs, needs, shapes, spare, alpha=1: (
                  g if needs[0] else None,
                  (g if alpha == 1 else g * alpha) if needs[1] else None))


def _subtract(xp, x, y, alpha=1):
    try:
        return xp.subtract(x, _scaled(y, alpha))
    except TypeError:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.") from None


_sub = binary("sub", _checked("sub", _subtract),
              lambda ctx, g, alpha=1: g, lambda ctx, g, alpha=1: -g if alpha == 1 else g * -alpha,
              save=(), complex=True, float_op=operator.sub,
              array_vjp=lambda xp, g, inputs, outs, needs, shapes, spare, alpha=1: (
                  g if needs[0] else None,
                  None if not needs[1] else g * -alpha if alpha != 1 else
                  _into(xp.negative, g, out=take(spare, g) if needs[0] else take(spare))))
_mul = binary("mul", _checked("mul", lambda xp, x, y: xp.multiply(x, y)),
              lambda ctx, g: g * ctx.y, lambda ctx, g: g * ctx.x, complex=True,
              save_when=((1,), (0,)), float_op=operator.mul,
              array_vjp=lambda xp, g, inputs, outs, needs, shapes, spare: _mul_array_vjp(
                  xp, g, inputs[0], inputs[1], needs, spare))


def _mul_array_vjp(xp, g, x, y, needs, spare):
    """mul's cotangents `g * y`, `g * x` on arrays, into spare buffers where there are (0-d
    float64 arrays and Python floats: as the forward computes them, NOTE [one-frame ops])."""
    gx = gy = None
    scalar = not g.ndim and g.dtype.char == "d"
    if needs[0]:
        if scalar and (type(y) is builtins.float or type(y) is xp.ndarray and not y.ndim):
            gx = host_xp.asarray(float(g) * float(y))
        else:
            buf = take(spare, g, x) if needs[1] else take(spare)
            gx = g * y if buf is None else xp.multiply(g, y, out=buf)
    if needs[1]:
        if scalar and (type(x) is builtins.float or type(x) is xp.ndarray and not x.ndim):
            gy = host_xp.asarray(float(g) * float(x))
        else:
            buf = take(spare)
            gy = g * x if buf is None else xp.multiply(g, x, out=buf)
    return gx, gy


_div = binary("div", _checked("div", lambda xp, x, y: xp.divide(x, y)),
              lambda ctx, g: g / ctx.y, lambda ctx, g: -g * ctx.x / (ctx.y * ctx.y),
              complex=True, save_when=((1,), (0, 1)), float_op=operator.truediv,
              array_vjp=lambda xp, g, inputs, outs, needs, shapes, spare: _div_array_vjp(
                  xp, g, inputs[0], inputs[1], needs, spare))


def _div_array_vjp(xp, g, x, y, needs, spare):
    """div's cotangents `g / y` and `-g * x / (y * y)` on arrays, step by step as the
    composite rule, into spare buffers where there are."""
    gx = gy = None
    if needs[0]:
        gx = _into(xp.divide, g, y, out=take(spare, g, x, y) if needs[1] else take(spare))
    if needs[1]:
        t = _into(xp.negative, g, out=take(spare, x, y))
        t = _into(xp.multiply, t, x, out=t)
        if type(y) is xp.ndarray:
            yy = _into(xp.multiply, y, y, out=take(spare, t) if fresh(xp, y, g) else None)
        else:
            yy = y * y
        gy = _into(xp.divide, t, yy, out=t)
    return gx, gy


def _negative(xp, x):
    try:
        return xp.negative(x)
    except TypeError:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.") from None


_neg = primitive("neg", silent(_negative), vjp=(lambda ctx, g: -g,), linear=True, save=(),
                 batch=elementwise,
                 array_vjp=lambda xp, g, inputs, outs, needs, shapes, spare: (
                     _into(xp.negative, g, out=take(spare)),))


# pow's rules are torch's formulas, products grouped as there: the same bits, the same zeros
# (where the exponent is 0, whatever g holds) and the same nans (the exponent's derivative at
# a negative real base, where there is none)
def _pow_dx(ctx, g):
    x, y = ctx.x, ctx.y
    if isinstance(y, Tensor):
        return where(y == 0, 0.0, g * (y * x ** (y - 1)))
    if y == 0:
        return g._zeros_like()
    if y == 2 and (x._lvl is not None or not x._requires_grad) and x.dtype.is_floating_point:
        # torch's 2 * x ** 1, whose power is x itself (the same bits), one primitive less at
        # every level below; on a plain tensor that requires grad torch's x ** 1 stays,
        # through which the next derivative is connected to x as torch's is (its zeros
        # require grad)
        return g * (y * x)
    return g * (y * x ** (y - 1))


def _real_nonnegative(y):
    """Where d(x ** y)/dy at x = 0 is 0 (torch's rule): y real and >= 0."""
    if isinstance(y, Tensor) and y.dtype.is_complex:
        return (y.imag == 0) & (y.real >= 0)
    return y >= 0


def _pow_dy(ctx, g):
    x, out = ctx.x, ctx.out
    if isinstance(x, Tensor):
        if out.dtype.is_complex and not x.dtype.is_complex:
            x = x.to(out.dtype)     # log of a negative real base, as a complex number
        return g * where((x == 0) & _real_nonnegative(ctx.y), 0.0, out * log(x))
    if out.dtype.is_complex:
        log_x = cmath.log(x) if x != 0 else None
    else:
        log_x = math.log(x) if x > 0 else math.nan if x < 0 else None
    if log_x is None:       # 0 ** y: 0 for a real y >= 0, else out * log(0)
        return g * where(_real_nonnegative(ctx.y), 0.0, out * -math.inf)
    return g * (out * log_x)


def _int_array(a):
    d = _dt.of_array(a.dtype)
    return not (d.is_floating_point or d.is_complex or d is _dt.bool)


def _pow_impl(xp, x, y):
    if not hasattr(x, "dtype") and hasattr(y, "dtype") and _int_array(y):
        x = xp.astype(xp.asarray(x), y.dtype)   # a number base of an integer power (`2 ** t`)
    if hasattr(y, "dtype") and hasattr(x, "dtype") and _int_array(x) and _int_array(y) and \
            bool(xp.any(y < 0)):
        # torch's integer power to a negative tensor exponent: 1 -> 1, -1 -> +-1 by parity,
        # anything else -> 0 (a Python int exponent below zero is refused, as NumPy does)
        neg = y < 0
        r = xp.pow(x, xp.where(neg, xp.zeros_like(y), y))
        odd = xp.remainder(y, 2) != 0
        one = xp.ones_like(r)
        small = xp.where(x == 1, one, xp.where(x == -1, xp.where(odd, -one, one), 0 * one))
        return xp.where(neg, small, r)
    if type(y) in (builtins.int, builtins.float) and y in _TORCH_POWERS and \
            hasattr(x, "dtype") and _dt.of_array(x.dtype) in (_dt.float32, _dt.float64):
        return _TORCH_POWERS[y](xp, x)
    return xp.pow(x, y)


# torch's kernels for these number exponents of float32/float64 (their bits, and their
# special values: 1 / sqrt(-0.0) is -inf where pow(-0.0, -0.5) is inf)
_TORCH_POWERS = {0.5: lambda xp, x: xp.sqrt(x), -0.5: lambda xp, x: 1.0 / xp.sqrt(x),
                 3: lambda xp, x: x * x * x, -2: lambda xp, x: 1.0 / (x * x)}


def _pow_array_vjp(xp, g, inputs, outs, needs, shapes, spare):
    """`_pow_dx` on arrays for a number exponent (`x ** 2`); None (the composite rule) for
    a tensor exponent."""
    x, y = inputs
    if type(y) not in (builtins.int, builtins.float) or type(x) is not xp.ndarray:
        return None
    if y == 0:
        return xp.zeros_like(g), None
    if y == 1:      # 1 * x ** 0 is 1
        return _into(xp.multiply, g, _ONE[g.dtype], out=take(spare)), None
    if y == 2:      # 2 * x ** 1
        p = _into(xp.multiply, x, _TWO[x.dtype], out=take(spare, g))
    else:
        p = _pow_impl(xp, x, y - 1) if y - 1 in _TORCH_POWERS else \
            _into(xp.pow, x, y - 1, out=take(spare, g))
        p = _into(xp.multiply, p, y, out=p)
    return _into(xp.multiply, g, p, out=p), None


_pow = binary("pow", _checked("pow", _pow_impl), _pow_dx, _pow_dy, array_vjp=_pow_array_vjp,
              save_output=True, number_edges=False, arg_names=("self", "exponent"), complex=True,
              node_name=lambda node: "PowBackward" + ("2" if node.shapes[0] is None else
                                                      "0" if node.shapes[1] is None else "1"))


def _binop(prim, float_only=False):
    def op(input, other):
        x, y = promote(input, other, float_only=float_only, op=prim.name)
        return prim(x, y)
    op.__name__ = prim.name
    return binary_op(prim, op)


def _is_bool(v):
    return getattr(v, "dtype", None) is _dt.bool or isinstance(v, builtins.bool)


def add(input, other, *, alpha=1):
    x, y = promote(input, other, op='add')
    return _add(x, y) if alpha == 1 else _add(x, y, alpha=alpha)


def sub(input, other, *, alpha=1):
    if _is_bool(input) or _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead." if _is_bool(input) and _is_bool(other) else
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    x, y = promote(input, other, op='sub')
    return _sub(x, y) if alpha == 1 else _sub(x, y, alpha=alpha)


mul = _binop(_mul)
multiply, subtract = mul, sub


def div(input, other, *, rounding_mode=None):
    if rounding_mode not in (None, "trunc", "floor"):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                           f"found '{rounding_mode}'")
    if rounding_mode is None:
        x, y = promote(input, other, float_only=True, op='div')
        return _div(x, y)
    x, y = promote(input, other, op='div')
    return (_div_floor if rounding_mode == "floor" else _div_trunc)(x, y)


true_divide = divide = div


def pow(input, exponent):
    if not isinstance(input, Tensor):
        x, y = promote(input, exponent, op='pow')
        return _pow(x if isinstance(x, Tensor) else x, y)
    if isinstance(exponent, Tensor):
        x, y = promote(input, exponent, op='pow')
        return _pow(x, y)
    if type(exponent) is builtins.complex:
        return _pow(convert(input, _dt.result_type(input, exponent)), exponent)
    if type(exponent) not in (builtins.int, builtins.float, builtins.bool):
        if getattr(getattr(exponent, "dtype", None), "kind", None) not in ("b", "i", "u", "f"):
            raise TypeError(f"pow() received an invalid combination of arguments - got (Tensor, "
                            f"{type_name(exponent)})")
        exponent = exponent.item()      # a NumPy scalar: weak, like a Python number
    if isinstance(exponent, builtins.float) and not input.dtype.is_differentiable:
        input = convert(input, _dt.get_default_dtype())
    elif type(exponent) is builtins.int and exponent < 0 and input.dtype._category < 2:
        raise RuntimeError("pow: Integers to negative integer powers are not allowed.")
    return _pow(input, exponent)


@tensor_op
def neg(input):
    return _neg(input)


negative = neg


def rsub(input, other, alpha=1):
    return sub(other, input, alpha=alpha)


def _int_divisor(xp, x, y):
    """Integer division by zero raises in torch (NumPy gives 0 and a warning)."""
    exact = ("integral", "bool")
    if xp.isdtype(xp.asarray(x).dtype, exact) and xp.isdtype(xp.asarray(y).dtype, exact) \
            and bool(xp.any(xp.asarray(y) == 0)):
        raise RuntimeError("ZeroDivisionError")


def _int_checked(name, fn):
    def impl(xp, x, y):
        for a in (x, y):
            if getattr(a, "dtype", None) is not None and _dt.of_array(a.dtype) is _dt.bfloat16:
                # ml_dtypes' bfloat16 has no division ufuncs: float32 math, rounded back (as
                # torch's op math)
                f32 = array_dtype(xp, _dt.float32)
                up = [xp.astype(v if hasattr(v, "dtype") else xp.asarray(v, dtype=a.dtype), f32)
                      for v in (x, y)]      # a Python number is rounded to bfloat16 first
                return xp.astype(fn(xp, *up), a.dtype)
        _int_divisor(xp, x, y)
        return fn(xp, x, y)
    return _checked(name, impl)


def _zero(ctx, g):
    return g._zeros_like()      # torch's new_zeros: no nan from g


_floor_impl = _int_checked("floor_divide", lambda xp, x, y: xp.floor_divide(x, y))
# div(rounding_mode=...) is piecewise constant in both inputs: zero gradients, as torch's;
# floor_divide (`//`) has no derivative in torch: it records a node whose backward raises
_div_floor = primitive("div_floor", _floor_impl, vjp=(_zero, _zero), jvp=(_zero, _zero), save=(),
                       batch=elementwise, node_name="DivBackward2")
_div_trunc = primitive("div_trunc", _int_checked(
    "trunc_divide", lambda xp, x, y: xp.astype(xp.trunc(xp.divide(x, y)), xp.result_type(x, y))),
    vjp=(_zero, _zero), jvp=(_zero, _zero), save=(), batch=elementwise, node_name="DivBackward2")
_floor_divide = primitive("floor_divide", _floor_impl, batch=elementwise)
_remainder = binary("remainder", _int_checked("remainder", lambda xp, x, y: xp.remainder(x, y)),
                    lambda ctx, g: g,
                    lambda ctx, g: -g * _div_floor(ctx.x, ctx.y), save=(0, 1),
                    number_edges=False, jvp_reads_primals=True)
remainder = _binop(_remainder)


def floor_divide(input, other):
    x, y = promote(input, other, op='floor_divide')
    return _floor_divide(x, y)


# ----------------------------------------------------------------- math
def _float_unary(prim):
    """Public form of a float-only op: integer inputs compute in the default dtype."""
    def op(input):
        if input.dtype._category < 2:       # bool, integers
            input = convert(input, _dt.get_default_dtype())
        return prim(input)
    op.__name__ = prim.name
    op.prim = prim
    return unary_op(prim, tensor_op(op))


def _tensor_unary(prim, bool_kernel=None):
    """Public form of a unary primitive: its argument must be a Tensor (not a bool one when
    torch's kernel, `bool_kernel`, has no bool version)."""
    def op(input):
        if bool_kernel is not None and input.dtype is _dt.bool:
            raise not_implemented(bool_kernel, input.dtype)
        return prim(input)
    op.__name__ = prim.name
    op.prim = prim
    return unary_op(prim, tensor_op(op))


def _float_op(name, impl, deriv, **kw):
    return _float_unary(unary(name, impl, deriv, **kw))


def _piecewise_constant(name, impl):
    """A step function (sign, floor...): zero derivative, as torch's; none for complex."""
    prim = primitive(name, silent(impl), zero_derivative=True, save=(), batch=elementwise)

    def op(input):
        if input.dtype.is_complex:
            raise NotImplementedError(
                "Unlike NumPy, torch.sign is not intended to support complex numbers. Please "
                "use torch.sgn instead." if name == "sign" else
                f"{name} is not supported for complex inputs")
        if input.dtype is _dt.bool:     # torch: sign of a bool is itself; the rest refuse it
            if name == "sign":
                return input.clone()
            raise not_implemented(f"{name}_vml_cpu", input.dtype)
        return prim(input)
    op.__name__ = name
    op.prim = prim
    return unary_op(prim, tensor_op(op))


def no_complex(op, *xs, kernel=None):
    """torch's refusal of an op without a complex kernel (named `kernel`, else op_cpu)."""
    for x in xs:
        if isinstance(x, Tensor) and x.dtype.is_complex:
            raise NotImplementedError(f'"{kernel or op + "_cpu"}" not implemented for '
                                      f"'{short_dtype_name(x.dtype)}'")


exp = _float_op("exp", lambda xp, x: xp.exp(x), lambda ctx: ctx.out, save_input=False,
                save_output=True, complex=True, array_deriv=lambda xp, x, out, spare: out)
log = _float_op("log", lambda xp, x: xp.log(x), lambda ctx: 1 / ctx.x, complex=True,
               array_deriv=lambda xp, x, out, spare: _into(xp.divide, _ONE[x.dtype], x,
                                                           out=take(spare)))
# torch's sqrt rules divide by 2 sqrt(x): at 0 that is a complex division by zero, inf in each
# part, where multiplying by 0.5 / sqrt(x) would give nan
sqrt = _float_unary(primitive(
    "sqrt", silent(lambda xp, x: xp.sqrt(x)), save=(), save_output=True, complex=True,
    vjp=(lambda ctx, g: g / (2 * ctx.out.conj()),), jvp=(lambda ctx, t: t / (2 * ctx.out),),
    batch=elementwise, array_vjp=lambda xp, g, inputs, outs, needs, shapes, spare: (
        _over_twice(xp, g, outs[0], spare),)))


def _over_twice(xp, g, out, spare):
    """sqrt's `g / (2 * out)` on arrays, in one buffer (out's own where it is spare)."""
    t = _into(xp.multiply, out, _TWO[out.dtype], out=take(spare, g) if spare else None)
    return _into(xp.divide, g, t, out=t)


rsqrt = _float_op("rsqrt", lambda xp, x: 1 / xp.sqrt(x), lambda ctx: -0.5 * ctx.out ** 3,
                  save_input=False, save_output=True, complex=True,
                  array_deriv=lambda xp, x, out, spare: _scaled_into(
                      xp, _cube(xp, out, take(spare)), _MINUS_HALF[out.dtype]))


def _cube(xp, x, buffer):
    """`x ** 3` as `_pow_impl` computes it (`x * x * x`), into `buffer` where there is one."""
    t = _into(xp.multiply, x, x, out=buffer)
    return _into(xp.multiply, t, x, out=t)


def _scaled_into(xp, t, c):
    """`t * c`, in t's buffer where it is an array (a temporary of an array-level rule)."""
    return _into(xp.multiply, t, c, out=t)


def _one_minus_square(xp, out, spare):
    """`1 - out * out` for tanh's array-level rule, in one buffer (`out`'s own where spare;
    NumPy's temporary elision where none is)."""
    buf = take(spare) if spare else None
    if buf is None:
        return _ONE[out.dtype] - out * out
    t = xp.multiply(out, out, out=buf)
    return xp.subtract(_ONE[t.dtype], t, out=t)


def _times_one_minus(xp, out, spare):
    """`out * (1 - out)` for sigmoid's array-level rule, in one buffer (NumPy's temporary
    elision where none is spare)."""
    buf = take(spare, out) if spare else None
    if buf is None:
        return out * (_ONE[out.dtype] - out)
    t = xp.subtract(_ONE[out.dtype], out, out=buf)
    return xp.multiply(out, t, out=t)


def _negated(xp, t):
    """`-t`, in t's buffer where it is an array (a temporary of an array-level rule)."""
    return xp.negative(t, out=t) if type(t) is xp.ndarray and t.ndim else -t


def _abs_jvp(ctx, t):
    s = ctx.x.sgn()
    return (t * s.conj()).real if s.dtype.is_complex else t * s


abs = _tensor_unary(primitive("abs", silent(lambda xp, x: xp.abs(x)), save=(0,),
                              vjp=(lambda ctx, g: g * ctx.x.sgn(),), jvp=(_abs_jvp,),
                              batch=elementwise, complex=True,
                              array_vjp=lambda xp, g, inputs, outs, needs, shapes, spare: (
                                  _times_sign(xp, g, inputs[0], spare),)),
                    bool_kernel="abs_cpu")


def _times_sign(xp, g, x, spare):
    """abs's `g * sign(x)` (sgn of a real x) on arrays, in one buffer other than x's (NumPy's
    sign is some 20 times slower written into its own input) and g's."""
    s = _into(xp.sign, x, out=take(spare, x, g))
    return _into(xp.multiply, g, s, out=s)
sign = _piecewise_constant("sign", lambda xp, x: xp.sign(x))
tanh = _float_op("tanh", lambda xp, x: xp.tanh(x), lambda ctx: 1 - ctx.out * ctx.out,
                 save_input=False, save_output=True, complex=True,
                 array_deriv=lambda xp, x, out, spare: _one_minus_square(xp, out, spare))
sigmoid = _float_op("sigmoid", lambda xp, x: _sigmoid_impl(xp, x),
                    lambda ctx: ctx.out * (1 - ctx.out), save_input=False, save_output=True,
                    complex=True,
                    array_deriv=lambda xp, x, out, spare: _times_one_minus(xp, out, spare))
relu = _tensor_unary(unary(
    "relu", lambda xp, x: xp.maximum(x, xp.zeros((), dtype=x.dtype)),
    # 1 where out > 0 and where out is NaN (a NaN input passes its gradient, as torch's
    # threshold_backward); sign keeps the mask attached to out with zero derivative, so
    # a create_graph gradient requires grad as torch's does
    lambda ctx: where(ctx.out != ctx.out, 1.0, sign(ctx.out)),
    save_input=False, save_output=True, array_deriv=lambda xp, x, out, spare: _relu_deriv(
        xp, out, spare)))


def _relu_deriv(xp, out, spare):
    """relu's `where(out != out, 1, sign(out))` on arrays, in one buffer (out's own where it
    is spare): out is > 0, 0, -0 or NaN, so that is ceil(fmin(out, 1)) + 0 (fmin: NaN to 1;
    + 0: NumPy's sign of -0 is 0). NumPy's sign itself is some 20 times slower in place."""
    d = _into(xp.fmin, out, _ONE[out.dtype], out=take(spare))
    if type(d) is not xp.ndarray:
        return xp.ceil(d) + 0
    xp.ceil(d, out=d)
    return xp.add(d, _ZERO[d.dtype], out=d)


def _no_complex_relu(op):
    def relu(input):
        if isinstance(input, Tensor) and input.dtype.is_complex:
            raise NotImplementedError("clamp is not supported for complex types")
        if isinstance(input, Tensor) and input.dtype is _dt.bool:
            raise RuntimeError("Boolean inputs not supported for relu")
        return op(input)
    relu.prim = op.prim
    return relu


relu = _no_complex_relu(relu)
sin = _float_op("sin", lambda xp, x: xp.sin(x), lambda ctx: cos(ctx.x), complex=True,
                array_deriv=lambda xp, x, out, spare: xp.cos(x, out=take(spare)))
cos = _float_op("cos", lambda xp, x: xp.cos(x), lambda ctx: -sin(ctx.x), complex=True,
                array_deriv=lambda xp, x, out, spare: _negated(
                    xp, xp.sin(x, out=take(spare))))
tan = _float_op("tan", lambda xp, x: xp.tan(x), lambda ctx: 1 + ctx.out * ctx.out,
                save_input=False, save_output=True, complex=True)
log1p = _float_op("log1p", lambda xp, x: xp.log1p(x), lambda ctx: 1 / (1 + ctx.x),
                  node_name="Log1PBackward0", complex=True,
                  array_deriv=lambda xp, x, out, spare: _reciprocal_into(
                      xp, _into(xp.add, x, _ONE[x.dtype], out=take(spare))))
expm1 = _float_op("expm1", lambda xp, x: xp.expm1(x), lambda ctx: ctx.out + 1,
                  save_input=False, save_output=True, complex=True,
                  array_deriv=lambda xp, x, out, spare: _into(xp.add, out, _ONE[out.dtype],
                                                                out=take(spare)))


def _reciprocal_into(xp, t):
    """`1 / t`, in t's buffer where it is an array (a temporary of an array-level rule)."""
    return _into(xp.divide, _ONE[t.dtype], t, out=t)



log2 = _float_op("log2", lambda xp, x: xp.log2(x), lambda ctx: 1 / (ctx.x * 0.6931471805599453), complex=True)
log10 = _float_op("log10", lambda xp, x: xp.log10(x),
                  lambda ctx: 1 / (ctx.x * 2.302585092994046), complex=True)
asin = _float_op("asin", lambda xp, x: xp.asin(x), lambda ctx: rsqrt(1 - ctx.x * ctx.x), complex=True)
acos = _float_op("acos", lambda xp, x: xp.acos(x), lambda ctx: -rsqrt(1 - ctx.x * ctx.x), complex=True)
atan = _float_op("atan", lambda xp, x: xp.atan(x), lambda ctx: 1 / (1 + ctx.x * ctx.x), complex=True)
sinh = _float_op("sinh", lambda xp, x: xp.sinh(x), lambda ctx: cosh(ctx.x), complex=True)
cosh = _float_op("cosh", lambda xp, x: xp.cosh(x), lambda ctx: sinh(ctx.x), complex=True)
asinh = _float_op("asinh", lambda xp, x: xp.asinh(x), lambda ctx: rsqrt(ctx.x * ctx.x + 1),
                  complex=True)
acosh = _float_op("acosh", lambda xp, x: xp.acosh(x), lambda ctx: rsqrt(ctx.x * ctx.x - 1))
atanh = _float_op("atanh", lambda xp, x: xp.atanh(x), lambda ctx: 1 / (1 - ctx.x * ctx.x),
                  complex=True)
exp2 = _float_op("exp2", lambda xp, x: xp.pow(xp.asarray(2, dtype=x.dtype), x),
                 lambda ctx: ctx.out * 0.6931471805599453, save_input=False, save_output=True)
_frac = unary("frac", lambda xp, x: x - xp.trunc(x), lambda ctx: 1, save_input=False)


@tensor_op(floating="frac_cpu")
def frac(input):
    return _frac(input)


frac.prim = _frac
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh
erf = _float_op("erf", lambda xp, x: _erf(xp, x),
                lambda ctx: 1.1283791670955126 * exp(-ctx.x * ctx.x),
                array_deriv=lambda xp, x, out, spare: _erf_deriv(xp, x, spare))


def _erf_deriv(xp, x, spare):
    """erf's `1.1283791670955126 * exp(-x * x)` on arrays, in one buffer other than x's."""
    t = _into(xp.negative, x, out=take(spare, x))
    t = _into(xp.multiply, t, x, out=t)
    return _scaled_into(xp, _into(xp.exp, t, out=t), _TWO_OVER_SQRT_PI[x.dtype])


def _sigmoid_impl(xp, x):
    if _dt.of_array(x.dtype).is_complex:
        return 1 / (1 + xp.exp(-x))
    # stable for large |x|: never exponentiates a positive number
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _erf(xp, x):
    import math
    return backend_of(x).map_scalar(math.erf, x)


@tensor_op
def square(input):
    if input.dtype is _dt.bool:
        input = convert(input, _dt.int64)       # torch squares bools as pow(x, 2): int64
    return input * input


@tensor_op
def reciprocal(input):
    return 1 / input


floor = _piecewise_constant("floor", lambda xp, x: xp.floor(x))
ceil = _piecewise_constant("ceil", lambda xp, x: xp.ceil(x))
trunc = _piecewise_constant("trunc", lambda xp, x: xp.trunc(x))
def _round_impl(xp, x, decimals):
    """Half to even at `decimals` places, scaled as torch (and NumPy) scale: multiply, round,
    divide (for negative decimals: divide, round, multiply)."""
    if not decimals:
        return xp.round(x)
    scale = 10.0 ** builtins.abs(decimals)
    if decimals > 0:
        return xp.round(x * scale) / scale
    return xp.round(x / scale) * scale


_round = primitive("round", _round_impl, zero_derivative=True, save=(), batch=elementwise)


@tensor_op
def round(input, *, decimals=0):
    if decimals and not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise not_implemented("round_cpu", input.dtype)
    if input.dtype is _dt.bool:
        raise not_implemented("round_vml_cpu", input.dtype)
    return _round(input, decimals=decimals)


# ----------------------------------------------------------------- clamp, max
def _clamp_mask(ctx, min, max):
    x = ctx.x
    m = None
    if min is not None:
        m = x >= min
    if max is not None:
        m = (x <= max) if m is None else (m & (x <= max))
    return convert(m, x.dtype)


def _clamp_impl(xp, x, min=None, max=None):
    if min is not None:
        x = xp.maximum(x, xp.asarray(min, dtype=x.dtype))
    if max is not None:
        x = xp.minimum(x, xp.asarray(max, dtype=x.dtype))
    return x


def _clamp_array_vjp(xp, g, inputs, outs, needs, shapes, spare, min, max):
    """`g * _clamp_mask` on arrays: g times the comparisons' booleans (as 1.0 and 0.0, the
    values the mask converts them to)."""
    x = inputs[0]
    m = None
    if min is not None:
        m = xp.greater_equal(x, min)
    if max is not None:
        m = xp.less_equal(x, max) if m is None else xp.logical_and(m, xp.less_equal(x, max))
    return (_into(xp.multiply, g, m, out=take(spare)),)


_clamp = primitive("clamp", _clamp_impl, node_name="ClampBackward1", save=(0,),
                   jvp_reads_primals=False, array_vjp=_clamp_array_vjp,
                   vjp=(lambda ctx, g, min, max: g * _clamp_mask(ctx, min, max),),
                   jvp=(lambda ctx, t, min, max: t * _clamp_mask(ctx, min, max),),
                   batch=elementwise)


@tensor_op
def clamp(input, min=None, max=None):
    if input.dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if min is None and max is None:
        raise RuntimeError("arraygrad.clamp: At least one of 'min' or 'max' must not be None")
    for v in (min, max):
        if v is not None and not isinstance(v, Tensor):
            number_arg("clamp", v, "min" if v is min else "max", 2)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        d = _dt.result_type(input, min, max)
        shapes = [tuple(v.shape) for v in (input, min, max) if isinstance(v, Tensor)]
        if d.is_floating_point and _broadcasts(shapes):
            lo, hi = (convert(_as_tensor(math.inf * sign if v is None else v), d)
                      if not isinstance(v, Tensor) else convert(v, d)
                      for v, sign in ((min, -1), (max, 1)))
            both = min is not None and max is not None
            return _clamp_tensor(convert(input, d), lo, hi, both=both)
        out = input
        if min is not None:
            out = maximum(out, min) if isinstance(min, Tensor) else clamp(out, min=min)
        if max is not None:
            out = minimum(out, max) if isinstance(max, Tensor) else clamp(out, max=max)
        return out
    d = _dt.result_type(input, min, max)      # bool with int bounds -> int64, int with float
    if d is not input.dtype:
        input = convert(input, d)
    return _clamp(input, min=min, max=max)


clip = clamp


def _broadcasts(shapes):
    try:
        host_xp.broadcast_shapes(*shapes)
        return True
    except ValueError:
        return False


def _clamp_tensor_mask(ctx, i, both):
    """Where input `i` takes the gradient, as torch's rules: x where lo <= x <= hi; with both
    bounds given, lo where x < lo < hi and hi where x > hi or hi < lo (none where nothing
    holds: nan, x < lo == hi), with one, the bound where x is beyond it. Ties go to x, not
    shared as maximum's and minimum's rules share them."""
    x, lo, hi = ctx.inputs
    if i == 0:
        return (x >= lo) & (x <= hi)
    if i == 1:
        return (x < lo) & (lo < hi) if both else x < lo
    return (x > hi) | (hi < lo) if both else x > hi


def _masked(i):
    return lambda ctx, g, both: _where(_clamp_tensor_mask(ctx, i, both), g, _zero_like(g))


# clamp by tensor bounds of a float dtype (a missing bound is an infinite one, `both` says
# whether one is missing): maximum then minimum, so nan spreads and zeros keep torch's signs
_clamp_tensor = primitive(
    "clamp_tensor", silent(lambda xp, x, lo, hi, both: xp.minimum(xp.maximum(x, lo), hi)),
    vjp=(_masked(0), _masked(1), _masked(2)), jvp=(_masked(0), _masked(1), _masked(2)),
    arg_names=("self", "min", "max"), batch=elementwise, node_name="ClampBackward0",
    jvp_reads_primals=False)


@tensor_op
def clamp_min(input, min):
    return clamp(input, min=min)


@tensor_op
def clamp_max(input, max):
    return clamp(input, max=max)


def _max_share(ctx, g, self_wins):
    x, y = ctx.x, ctx.y
    half = where(x == y, g / 2, g)
    lose = (x < y) if self_wins else (x > y)
    return where(lose, 0.0, half)


_maximum = binary("maximum", _checked("maximum", lambda xp, x, y: xp.maximum(x, y)),
                  lambda ctx, g: _max_share(ctx, g, True),
                  lambda ctx, g: _max_share(ctx, g, False), jvp_reads_primals=False)


def _min_share(ctx, g, first):
    x, y = ctx.x, ctx.y
    half = where(x == y, g / 2, g)
    lose = (x > y) if first else (x < y)
    return where(lose, 0.0, half)


_minimum = binary("minimum", _checked("minimum", lambda xp, x, y: xp.minimum(x, y)),
                  lambda ctx, g: _min_share(ctx, g, True),
                  lambda ctx, g: _min_share(ctx, g, False), jvp_reads_primals=False)


def _real_only(prim):
    def op(input, other):
        x, y = promote(input, other, op=prim.name)
        if any(isinstance(v, Tensor) and v.dtype.is_complex for v in (x, y)):
            raise RuntimeError(f"{prim.name} not implemented for complex tensors.")
        return prim(x, y)
    op.__name__ = prim.name
    return op


maximum = _real_only(_maximum)
minimum = _real_only(_minimum)


# ----------------------------------------------------------------- where
def _where_impl(xp, cond, x, y):
    try:
        out = xp.where(cond, x, y)
        if type(x) is builtins.float or type(y) is builtins.float:
            return _round_bfloat16(xp, x, y, out)
        return out
    except ValueError:
        shapes = [getattr(v, "shape", ()) for v in (x, y, cond)]
        for a, b in ((0, 1), (2, 0), (2, 1)):
            try:
                xp.broadcast_shapes(shapes[a], shapes[b])
            except ValueError:
                raise _broadcast_error("where", (shapes[a], shapes[b])) from None
        raise


def _where_array_vjp(xp, g, inputs, outs, needs, shapes, spare):
    """where's cotangents `where(c, g, 0)` and `where(c, 0, g)` on arrays (the second in g's
    own buffer where it is spare)."""
    c, zero = inputs[0], xp.zeros((), dtype=g.dtype)
    gx = xp.where(c, g, zero) if needs[1] else None
    gy = None
    if needs[2]:
        buf = take(spare)
        if buf is g:
            gy = xp.copyto(g, zero, where=c) or g
        else:
            gy = xp.where(c, zero, g)
    return None, gx, gy


_where = primitive(
    "where", _where_impl, save=(0,), nondiff_inputs=(0,), arg_names=("condition", "self", "other"),
    complex=True, jvp_reads_primals=False, array_vjp=_where_array_vjp,
    vjp=(lambda ctx, g: None,
         lambda ctx, g: _where(ctx.x, g, _zero_like(g)),
         lambda ctx, g: _where(ctx.x, _zero_like(g), g)),
    jvp=(lambda ctx, t: None,
         lambda ctx, t: _where(ctx.x, t, _zero_like(t)),
         lambda ctx, t: _where(ctx.x, _zero_like(t), t)),
    batch=elementwise)


def _zero_like(g):
    from .creation import zeros
    return zeros((), dtype=g.dtype)


def where(condition, input=None, other=None):
    if input is None and other is None:
        from .index import nonzero
        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor):
        raise not_tensor("where", "condition", 1, condition)
    if condition.dtype is not _dt.bool:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {short_dtype_name(condition.dtype)}")
    x, y = promote(input, other, op='where')
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        # two Python scalars: the result has their promoted dtype (float -> the default)
        from .creation import full
        x = full((), x, dtype=_dt.result_type(x, y))
    return _where(condition, x, y)


# ----------------------------------------------------------------- comparisons
def _cmp(name, fn):
    prim = nondiff(name, _checked(name, fn, quiet=False), complex=name in ("eq", "ne"))

    def op(input, other):
        x, y = promote(input, other, op=name)
        if name not in ("eq", "ne"):
            no_complex(name, x, y)
        return prim(x, y)
    op.__name__ = name
    return op


eq = _cmp("eq", lambda xp, x, y: xp.equal(x, y))
ne = _cmp("ne", lambda xp, x, y: xp.not_equal(x, y))
lt = _cmp("lt", lambda xp, x, y: xp.less(x, y))
le = _cmp("le", lambda xp, x, y: xp.less_equal(x, y))
gt = _cmp("gt", lambda xp, x, y: xp.greater(x, y))
ge = _cmp("ge", lambda xp, x, y: xp.greater_equal(x, y))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne

_logical_and = nondiff("logical_and", _checked("logical_and", lambda xp, x, y: xp.logical_and(x, y), quiet=False), complex=True)
_logical_or = nondiff("logical_or", _checked("logical_or", lambda xp, x, y: xp.logical_or(x, y), quiet=False), complex=True)
_logical_xor = nondiff("logical_xor", _checked("logical_xor", lambda xp, x, y: xp.logical_xor(x, y), quiet=False), complex=True)
_logical_not = nondiff("logical_not", lambda xp, x: xp.logical_not(x), complex=True)
_bitwise_and = nondiff("bitwise_and", _checked("bitwise_and", lambda xp, x, y: xp.bitwise_and(x, y), quiet=False))
_bitwise_or = nondiff("bitwise_or", _checked("bitwise_or", lambda xp, x, y: xp.bitwise_or(x, y), quiet=False))
_bitwise_xor = nondiff("bitwise_xor", _checked("bitwise_xor", lambda xp, x, y: xp.bitwise_xor(x, y), quiet=False))
_bitwise_not = nondiff("bitwise_not", lambda xp, x: xp.bitwise_invert(x))
_isnan = nondiff("isnan", lambda xp, x: xp.isnan(x), complex=True)
_isinf = nondiff("isinf", lambda xp, x: xp.isinf(x), complex=True)
_isfinite = nondiff("isfinite", lambda xp, x: xp.isfinite(x), complex=True)


def logical_and(a, b):
    return _logical_and(*promote(a, b, op='logical_and'))


def logical_or(a, b):
    return _logical_or(*promote(a, b, op='logical_or'))


def logical_xor(a, b):
    return _logical_xor(*promote(a, b, op='logical_xor'))


@tensor_op
def logical_not(input):
    return _logical_not(input)


def _integral(op, x):
    """Bitwise ops have no floating-point kernel (torch: NotImplementedError)."""
    if isinstance(x, Tensor) and x.dtype.is_floating_point:
        raise NotImplementedError(f'"{op}_cpu" not implemented for '
                                  f"'{short_dtype_name(x.dtype)}'")
    return x


def bitwise_and(a, b):
    x, y = promote(a, b, op='bitwise_and')
    return _bitwise_and(_integral("bitwise_and", x), _integral("bitwise_and", y))


def bitwise_or(a, b):
    x, y = promote(a, b, op='bitwise_or')
    return _bitwise_or(_integral("bitwise_or", x), _integral("bitwise_or", y))


def bitwise_xor(a, b):
    x, y = promote(a, b, op='bitwise_xor')
    return _bitwise_xor(_integral("bitwise_xor", x), _integral("bitwise_xor", y))


@tensor_op
def bitwise_not(input):
    if input.dtype.is_floating_point or input.dtype.is_complex:
        raise not_implemented("bitwise_not_cpu", input.dtype)
    return _bitwise_not(input)


@tensor_op
def isnan(input):
    return _isnan(input)


@tensor_op
def isinf(input):
    return _isinf(input)


@tensor_op
def isfinite(input):
    return _isfinite(input)


def equal(a, b):
    return a.shape == b.shape and builtins.bool(eq(a, b).all())


@tensor_op(others=("other",))
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


def _isclose_impl(xp, x, y, rtol, atol, equal_nan):
    # torch's formula: integers and bools compared in the default float dtype
    close = x == y
    d = _dt.of_array(x.dtype)
    inexact = d.is_floating_point or d.is_complex
    if equal_nan and inexact:
        close = close | (xp.isnan(x) & xp.isnan(y))
    if rtol == 0 and atol == 0:
        return close
    if not inexact:
        f = array_dtype(xp, _dt.get_default_dtype())
        x, y = xp.astype(x, f), xp.astype(y, f)
    actual = xp.abs(x - y)
    allowed = atol + xp.abs(rtol * y)
    return close | (xp.isfinite(actual) & (actual <= allowed))


_isclose = nondiff("isclose", _checked("isclose", _isclose_impl), complex=True)


@tensor_op(others=("other",))
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise |input - other| <= atol + rtol * |other|; both of one dtype, as torch."""
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{short_dtype_name(input.dtype)} did not match "
                           f"{short_dtype_name(other.dtype)}")
    if not rtol >= 0:       # NaN too
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if not atol >= 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return _isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


# ----------------------------------------------------------------- more math (mostly composites)
def _atan2_scale(ctx):
    return 1 / (ctx.x * ctx.x + ctx.y * ctx.y)


def _atan2_scale_masked(ctx):
    """torch's backward: the reciprocal is 0 where x and y are both 0 (its forward formula
    divides by 0 there: nan)."""
    denom = ctx.x * ctx.x + ctx.y * ctx.y
    return where(denom == 0, 0.0, 1 / denom)


_atan2 = binary("atan2", _checked("atan2", lambda xp, y, x: xp.atan2(y, x)),
                lambda ctx, g: g * ctx.y * _atan2_scale_masked(ctx),
                lambda ctx, g: -g * ctx.x * _atan2_scale_masked(ctx),
                jvp=(lambda ctx, t: t * ctx.y * _atan2_scale(ctx),
                     lambda ctx, t: -t * ctx.x * _atan2_scale(ctx)))
atan2 = arctan2 = _binop(_atan2, float_only=True)


# NOTE [fused functions]
# NumPy has fmod, heaviside and nan_to_num as one ufunc each; the standard composes them from
# several functions (several passes over the data). On NumPy arrays an impl calls NumPy's
# ufunc, elsewhere the standard composition (array_api_strict runs that one in CI). Another
# library's function of the same name is not used: its signature may differ (Dask's
# nan_to_num has no posinf=).
def _fmod_impl(xp, x, y):
    if xp is host_xp:
        return xp.fmod(x, y)
    y = xp.abs(y) if hasattr(y, "dtype") else builtins.abs(y)
    r = xp.remainder(xp.abs(x), y)              # exact: both operands non-negative
    if xp.isdtype(x.dtype, "real floating"):
        return xp.copysign(r, x)                # the sign of x, -0.0 included
    return xp.where(x < 0, -r, r)


_fmod = binary("fmod", _int_checked("fmod", _fmod_impl),
               lambda ctx, g: g, lambda ctx, g: -g * trunc(ctx.x / ctx.y), number_edges=False,
               jvp_reads_primals=True,
               node_name=lambda node: "FmodBackward" + ("0" if node.shapes[1] is None else "1"))
fmod = _binop(_fmod)


def logaddexp(input, other):
    """log(exp(input) + exp(other)) without overflow."""
    input, other = promote(input, other, float_only=True, op="logaddexp")
    m = maximum(input, other).detach()
    m = where(isfinite(m), m, 0.0)
    return m + log(exp(input - m) + exp(other - m))


def hypot(input, other):
    no_complex("hypot", input, other)
    return sqrt(input * input + other * other)


@tensor_op(others=("end",))
def lerp(input, end, weight):
    same_dtype("lerp: expected dtype {} for `end` but got dtype {}", input, end)
    if isinstance(weight, Tensor):
        same_dtype("lerp: expected dtype {} for `weight` but got dtype {}", input, weight)
    return input + weight * (end - input)


def addcmul(input, tensor1, tensor2, *, value=1):
    return input + value * tensor1 * tensor2


def addcdiv(input, tensor1, tensor2, *, value=1):
    return input + value * tensor1 / tensor2


def _xlogy_impl(xp, x, y):
    return xp.where((x == 0) & ~xp.isnan(y), xp.zeros((), dtype=x.dtype), x * xp.log(y))


# torch's rules: d/dx is log(y) at x = 0 too, and 0 only where x = 0 meets a y without a
# real log (xlogy(g, y) is itself 0 where g is)
_xlogy = binary("xlogy", _checked("xlogy", _xlogy_impl),
                lambda ctx, g: where((ctx.x == 0) & (ctx.y <= 0), 0.0, _xlogy(g, ctx.y)),
                lambda ctx, g: g * ctx.x / ctx.y)


def xlogy(input, other):
    """input * log(other), 0 where input is 0."""
    x, y = promote(input, other, float_only=True, op='xlogy')
    dtype = (x if isinstance(x, Tensor) else y).dtype
    x, y = (v if isinstance(v, Tensor) else _as_tensor(v).to(dtype) for v in (x, y))
    return _xlogy(x, y)


def _logit_dx(ctx, g, eps=None):
    """torch's kernel (its scalar path: its vector path, taken for tensors of 16 elements or
    more, gives -inf * g at x = -0.0 and 0 at nan with eps). Without eps: nan outside [0, 1]
    (where logit has no value), g * inf at 0 and 1, else g / (x (1 - x)): `+ 0.0` makes the
    product +0 at x = -0.0 as well; with eps: 0 outside [eps, 1 - eps]."""
    x = ctx.x
    inside = g / (x * (1 - x) + 0.0)
    if eps is not None:
        return where((x < eps) | (x > 1 - eps), 0.0, inside)
    return where((x < 0) | (x > 1), math.nan, inside)


def _logit_impl(xp, x, eps=None):
    z = x if eps is None else xp.clip(x, eps, 1 - eps)
    return xp.log(z / (1 - z))


_logit = primitive("logit", silent(_logit_impl), vjp=(_logit_dx,), jvp=(_logit_dx,), save=(0,),
                   batch=elementwise)


@tensor_op
def logit(input, eps=None):
    no_complex("logit", input)
    if not input.dtype.is_differentiable:
        input = convert(input, _dt.get_default_dtype())
    return _logit(input, eps=None if eps is None else float(eps))


@tensor_op
def deg2rad(input):
    if input.dtype.is_complex:
        raise RuntimeError("deg2rad is not supported for complex tensors.")
    return input * (math.pi / 180)


@tensor_op
def rad2deg(input):
    if input.dtype.is_complex:
        raise RuntimeError("rad2deg is not supported for complex tensors.")
    return input * (180 / math.pi)


def float_power(input, exponent):
    """pow in double precision (complex128 when either side is complex)."""
    wide = _dt.complex128 if any(
        (v.dtype.is_complex if isinstance(v, Tensor) else type(v) is builtins.complex)
        for v in (input, exponent)) else _dt.float64
    x = convert(input, wide) if isinstance(input, Tensor) else input
    y = convert(exponent, wide) if isinstance(exponent, Tensor) else exponent
    if not isinstance(x, Tensor):
        x = _as_tensor(x).to(wide)
    return pow(x, y)


def ldexp(input, other):
    """input * 2 ** other."""
    if isinstance(other, Tensor) and other.dtype is _dt.bool:
        raise not_implemented("ldexp_cpu_exp", other.dtype)
    x, y = promote(input, other, float_only=True, op='ldexp')
    return x * exp2(y)


def _gcd_impl(xp, a, b):
    """Euclid's algorithm on all pairs at once (as many steps as the slowest pair needs)."""
    a, b = xp.broadcast_arrays(xp.abs(a), xp.abs(b))
    while bool(xp.any(b != 0)):
        live = b != 0
        rest = a % xp.where(live, b, xp.ones_like(b))
        a, b = xp.where(live, b, a), xp.where(live, rest, b)
    return a


_gcd = nondiff("gcd", _checked("gcd", _gcd_impl))


def _integer_pair(op, x, y):
    for v in (x, y):
        if not isinstance(v, Tensor):
            raise TypeError(f"{op}(): argument 'other' must be Tensor, not {type_name(v)}")
    x, y = promote(x, y, op=op)
    d = x.dtype          # torch's kernel takes the promoted type: bool with an int is an int
    if d.is_floating_point or d.is_complex or d is _dt.bool:
        raise not_implemented(f"{op}_cpu", d)
    return x, y


@tensor_op
def gcd(input, other):
    """Greatest common divisor of integers (non-negative; gcd(0, 0) = 0)."""
    return _gcd(*_integer_pair("gcd", input, other))


@tensor_op
def lcm(input, other):
    """Least common multiple of integers (non-negative; 0 where either is 0)."""
    x, y = _integer_pair("lcm", input, other)
    g = _gcd(x, y)
    return abs(where(g == 0, 0, floor_divide(x, where(g == 0, 1, g)) * y))
