"""Tensor methods and operators: thin calls into the op families and into autograd (one
place). Tensor itself (`_tensor.py`) holds data and metadata only."""
from numbers import Number
from types import FunctionType

from . import _device, _legacy
from . import dtypes as _dt
from ._tensor import Tensor, _wrap_dim
from .autograd import engine, graph, inplace
from .autograd.eager import unary_op, binary_op
from .core import grad_mode as _grad_mode
from .core.grad_mode import no_grad as _no_grad
from .ops import creation, elementwise as ew, reduce as rd, shape as sh, index as ix, linalg as la
from .ops import special as sp
from .ops import bits, norms, stats, solve, spectral
from .ops import complex as cx
from .ops._checks import check_tensor
from .ops.device import to_device
from .backends import backend_of


def _m(fn):
    """`fn(self, ...)` as a method: a Python function is one already (no extra frame per call);
    other callables are wrapped."""
    if isinstance(fn, FunctionType):
        return fn
    return lambda self, *a, **k: fn(self, *a, **k)


def _r(fn):
    return lambda self, other: fn(other, self)


_METHODS = {
    "add": ew.add, "sub": ew.sub, "mul": ew.mul, "div": ew.div, "pow": ew.pow,
    "neg": ew.neg, "negative": ew.neg, "exp": ew.exp, "log": ew.log, "sqrt": ew.sqrt,
    "rsqrt": ew.rsqrt, "abs": ew.abs, "sign": ew.sign, "tanh": ew.tanh, "sigmoid": ew.sigmoid,
    "relu": ew.relu, "sin": ew.sin, "cos": ew.cos, "tan": ew.tan, "log1p": ew.log1p,
    "expm1": ew.expm1, "log2": ew.log2, "log10": ew.log10, "asin": ew.asin, "acos": ew.acos,
    "atan": ew.atan, "sinh": ew.sinh, "cosh": ew.cosh, "erf": ew.erf, "square": ew.square,
    "reciprocal": ew.reciprocal, "floor": ew.floor, "ceil": ew.ceil, "round": ew.round,
    "trunc": ew.trunc, "clamp": ew.clamp, "clip": ew.clamp, "clamp_min": ew.clamp_min,
    "clamp_max": ew.clamp_max, "maximum": ew.maximum, "minimum": ew.minimum,
    "eq": ew.eq, "ne": ew.ne, "lt": ew.lt, "le": ew.le, "gt": ew.gt, "ge": ew.ge,
    "logical_and": ew.logical_and, "logical_or": ew.logical_or, "logical_not": ew.logical_not,
    "logical_xor": ew.logical_xor, "isnan": ew.isnan, "isinf": ew.isinf,
    "isfinite": ew.isfinite, "allclose": ew.allclose, "isclose": ew.isclose, "equal": ew.equal,
    "remainder": ew.remainder, "floor_divide": ew.floor_divide, "where": lambda self, c, o: ew.where(c, self, o),
    "sum": rd.sum, "mean": rd.mean, "prod": rd.prod, "max": rd.max, "min": rd.min,
    "amax": rd.amax, "amin": rd.amin, "aminmax": rd.aminmax, "argmax": rd.argmax, "argmin": rd.argmin,
    "logsumexp": rd.logsumexp, "softmax": rd.softmax, "log_softmax": rd.log_softmax,
    "var": rd.var, "std": rd.std, "norm": rd.norm, "all": rd.all, "any": rd.any,
    "cumsum": rd.cumsum,
    "reshape": sh.reshape, "view": sh.view, "flatten": sh.flatten, "unflatten": sh.unflatten,
    "transpose": sh.transpose, "swapaxes": sh.transpose, "t": sh.t, "permute": sh.permute,
    "movedim": sh.movedim, "moveaxis": sh.movedim, "unsqueeze": sh.unsqueeze,
    "squeeze": sh.squeeze, "expand": sh.expand, "expand_as": sh.expand_as,
    "broadcast_to": sh.broadcast_to, "clone": sh.clone, "contiguous": sh.contiguous,
    "flip": sh.flip, "roll": sh.roll, "narrow": sh.narrow, "split": sh.split,
    "chunk": sh.chunk, "unbind": sh.unbind, "select": sh.select, "repeat": sh.repeat,
    "tile": sh.tile, "diagonal": sh.diagonal, "trace": sh.trace, "diag": sh.diag,
    "gather": ix.gather, "index_select": ix.index_select, "masked_fill": ix.masked_fill,
    "masked_select": ix.masked_select, "nonzero": ix.nonzero, "take": ix.take,
    "scatter_add": ix.scatter_add,
    "matmul": la.matmul, "mm": la.mm, "bmm": la.bmm, "mv": la.mv, "dot": la.dot, "inner": la.inner,
    "outer": la.outer, "addmm": la.addmm, "baddbmm": la.baddbmm, "addbmm": la.addbmm,
    "atan2": ew.atan2, "arctan2": ew.atan2, "logaddexp": ew.logaddexp, "hypot": ew.hypot,
    "lerp": ew.lerp, "addcmul": ew.addcmul, "addcdiv": ew.addcdiv, "xlogy": ew.xlogy,
    "logit": ew.logit, "tril": sh.tril, "triu": sh.triu, "ravel": sh.ravel,
    "sum_to_size": sh.sum_to_size, "argsort": rd.argsort, "sort": rd.sort, "topk": rd.topk,
    "count_nonzero": rd.count_nonzero, "scatter": ix.scatter, "index_add": ix.index_add,
    "index_fill": ix.index_fill, "fmod": ew.fmod, "diff": sh.diff, "kron": la.kron,
    "cross": la.cross, "cumprod": rd.cumprod,
    "conj": cx.conj, "conj_physical": cx.conj_physical, "resolve_conj": cx.resolve_conj,
    "is_conj": cx.is_conj, "sgn": cx.sgn, "angle": cx.angle, "vdot": la.vdot,
    "asinh": ew.asinh, "acosh": ew.acosh, "atanh": ew.atanh, "arcsin": ew.asin,
    "arccos": ew.acos, "arctan": ew.atan, "arcsinh": ew.asinh, "arccosh": ew.acosh,
    "arctanh": ew.atanh, "exp2": ew.exp2, "frac": ew.frac, "deg2rad": ew.deg2rad,
    "rad2deg": ew.rad2deg, "float_power": ew.float_power, "ldexp": ew.ldexp, "gcd": ew.gcd,
    "lcm": ew.lcm, "absolute": ew.abs, "fix": ew.trunc, "multiply": ew.mul, "subtract": ew.sub,
    "divide": ew.div, "true_divide": ew.div, "greater": ew.gt, "greater_equal": ew.ge,
    "less": ew.lt, "less_equal": ew.le, "not_equal": ew.ne, "bitwise_and": ew.bitwise_and,
    "bitwise_or": ew.bitwise_or, "bitwise_xor": ew.bitwise_xor, "bitwise_not": ew.bitwise_not,
    "addmv": la.addmv, "addr": la.addr, "index_copy": ix.index_copy, "renorm": norms.renorm,
    "mvlgamma": sp.mvlgamma,
}
_METHODS.update({"lgamma": sp.lgamma, "digamma": sp.digamma, "erfinv": sp.erfinv,
                 "erfc": sp.erfc, "i0": sp.i0, "sinc": sp.sinc, "igamma": sp.igamma,
                 "igammac": sp.igammac,
                 "polygamma": lambda self, n: sp.polygamma(n, self)})
# elementwise/reductions (elem14)
_METHODS.update({"copysign": bits.copysign, "nextafter": bits.nextafter,
                 "heaviside": bits.heaviside, "nan_to_num": bits.nan_to_num,
                 "median": stats.median, "nanmedian": stats.nanmedian, "kthvalue": stats.kthvalue,
                 "mode": stats.mode, "cummax": stats.cummax, "cummin": stats.cummin,
                 "logcumsumexp": stats.logcumsumexp, "quantile": stats.quantile,
                 "nanquantile": stats.nanquantile, "unique": stats.unique,
                 "unique_consecutive": stats.unique_consecutive, "bincount": stats.bincount,
                 "histc": stats.histc})
_METHODS.update({"inverse": solve.inv, "det": solve.det, "logdet": solve.logdet,
                 "slogdet": solve.slogdet, "cholesky": solve.cholesky,
                 "cholesky_solve": solve.cholesky_solve, "cholesky_inverse": solve.cholesky_inverse,
                 "triangular_solve": solve.triangular_solve, "lu": solve.legacy_lu,
                 "lu_solve": solve.legacy_lu_solve, "matrix_power": solve.matrix_power,
                 "matrix_exp": solve.matrix_exp})
_METHODS.update({"qr": spectral.qr, "svd": spectral.svd, "pinverse": spectral.pinverse,
                 "symeig": spectral.symeig, "orgqr": spectral.orgqr})
for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _m(_fn))


def _to(self, *args, dtype=None, device=None, non_blocking=False, copy=False,
        memory_format=None):
    """`to(dtype)`, `to(device)`, `to(device, dtype)`, `to(other)`: a device this installation
    cannot place data on raises (never silently stays on the cpu)."""
    for a in args:
        if isinstance(a, _dt.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (str, _device.device)):
            device = a
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"{type(a).__name__}; expected a dtype, a device or a Tensor")
    out = self if device is None else to_device(self, _device.check(device))
    if dtype is not None and dtype is not out.dtype:
        return ew.convert(out, dtype)
    return out.clone() if copy and out is self else out


def _cuda(self, device=None, non_blocking=False, memory_format=None):
    """This tensor on GPU `device` (an index, "cuda:N", or the current GPU)."""
    dev = _device.check("cuda" if device is None else
                        f"cuda:{device}" if isinstance(device, int) else device)
    if dev.type != "cuda":
        raise RuntimeError(f"Invalid device, must be cuda device (got {dev})")
    return to_device(self, dev)


def _cpu(self, memory_format=None):
    return to_device(self, _device.CPU)


Tensor.to = _to
Tensor.type = _legacy.type_method
Tensor.new = _legacy.new_method
Tensor.cpu = _cpu
Tensor.cuda = _cuda
Tensor.float = lambda self: _to(self, _dt.float32)
Tensor.double = lambda self: _to(self, _dt.float64)
Tensor.half = lambda self: _to(self, _dt.float16)
Tensor.bfloat16 = lambda self: _to(self, _dt.bfloat16)
Tensor.long = lambda self: _to(self, _dt.int64)
Tensor.int = lambda self: _to(self, _dt.int32)
Tensor.bool = lambda self: _to(self, _dt.bool)


def _as_other(op):
    """Tensor.<op>_as(other): `other` must be a Tensor (torch's TypeError otherwise)."""
    def method(self, other):
        check_tensor(op, other, "other", 1)
        return _AS[op](self, other)
    method.__name__ = op
    return method


_AS = {"type_as": lambda self, other: _to(self, other.dtype),
       "view_as": lambda self, other: sh.view(self, other.shape),
       "reshape_as": lambda self, other: sh.reshape(self, other.shape)}
for _name in _AS:
    setattr(Tensor, _name, _as_other(_name))

Tensor.T = property(lambda self: sh.permute(self, tuple(range(self.ndim))[::-1]))
def _mT(self):
    if self.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got "
                           f"{self.ndim}-D tensor.")
    return sh.transpose(self, -2, -1)


Tensor.mT = property(_mT)
# new_*: the tensor's dtype, device and array library unless given
Tensor.new_zeros = lambda self, *s, dtype=None, device=None, requires_grad=False, **k: (
    creation.new_filled(self, "new_zeros", 0, s, dtype, device, requires_grad))
Tensor.new_ones = lambda self, *s, dtype=None, device=None, requires_grad=False, **k: (
    creation.new_filled(self, "new_ones", 1, s, dtype, device, requires_grad))
Tensor.new_full = lambda self, s, v, dtype=None, device=None, requires_grad=False, **k: (
    creation.new_filled(self, "new_full", creation.fill_number("new_full", v), (s,), dtype,
                        device, requires_grad))
Tensor.new_empty = lambda self, *s, dtype=None, device=None, requires_grad=False, **k: (
    creation.new_filled(self, "new_empty", 0, s, dtype, device, requires_grad))
Tensor.new_tensor = lambda self, data, dtype=None, device=None, requires_grad=False, **k: (
    creation.new_tensor(self, data, dtype, device, requires_grad))
# the creation ops autograd's machinery reaches through Tensor (it sits below ops/)
Tensor._zeros_like = creation.zeros_like
Tensor._ones_like = creation.ones_like


# ----------------------------------------------------------------- autograd
def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    engine.backward((self,), None if gradient is None else (gradient,),
                    retain_graph, create_graph, inputs=inputs)


def _register_hook(self, hook):
    """Call `hook(grad)` when this tensor's gradient is computed; it may return a new grad."""
    return graph.register_tensor_hook(self, hook)


def _register_post_accumulate_grad_hook(self, hook):
    """Call `hook(tensor)` after backward has accumulated into this leaf's `.grad`."""
    return graph.register_post_accumulate_hook(self, hook)


def _retain_grad(self):
    if not self._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is not None and not self._retains_grad:
        self._retains_grad = True
        graph.retain_grad_hook(self)


Tensor.backward = _backward
Tensor.register_hook = _register_hook
Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook
Tensor.retain_grad = _retain_grad
Tensor.detach = _m(sh.detach)

# ----------------------------------------------------------------- operators
# the arithmetic operators take level 0's common case in one frame (NOTE [one-frame ops])
Tensor.__add__ = binary_op(ew._add, ew.add)
Tensor.__radd__ = binary_op(ew._add, ew.add, reflected=True)
Tensor.__sub__ = binary_op(ew._sub, ew.sub)
Tensor.__rsub__ = binary_op(ew._sub, ew.sub, reflected=True)
Tensor.__mul__ = ew.mul
Tensor.__rmul__ = binary_op(ew._mul, ew.mul, reflected=True)
Tensor.__truediv__ = binary_op(ew._div, ew.div)
Tensor.__rtruediv__ = binary_op(ew._div, ew.div, reflected=True)
Tensor.__floordiv__ = lambda self, other: ew.floor_divide(self, other)
Tensor.__rfloordiv__ = lambda self, other: ew.floor_divide(other, self)
Tensor.__mod__ = lambda self, other: ew.remainder(self, other)
Tensor.__rmod__ = lambda self, other: ew.remainder(other, self)
Tensor.__pow__ = _m(ew.pow)
Tensor.__rpow__ = lambda self, other: ew.pow(other, self)
Tensor.__matmul__ = _m(la.matmul)
Tensor.__rmatmul__ = lambda self, other: la.matmul(other, self)
Tensor.__neg__ = unary_op(ew._neg, ew.neg)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = _m(ew.abs)
Tensor.__invert__ = lambda self: ew.bitwise_not(self) if self.dtype is not _dt.bool else ew.logical_not(self)
Tensor.__and__ = lambda self, other: ew.bitwise_and(self, other)
Tensor.__rand__ = lambda self, other: ew.bitwise_and(other, self)
Tensor.__or__ = lambda self, other: ew.bitwise_or(self, other)
Tensor.__ror__ = lambda self, other: ew.bitwise_or(other, self)
Tensor.__xor__ = lambda self, other: ew.bitwise_xor(self, other)
Tensor.__rxor__ = lambda self, other: ew.bitwise_xor(other, self)


def _comparable(other):
    """What `==` compares elementwise; for anything else (a string, a list, None) Python's
    identity comparison answers, as torch's `__eq__` gives NotImplemented there."""
    return isinstance(other, (Tensor, Number)) or hasattr(other, "__array__")


Tensor.__eq__ = lambda self, other: ew.eq(self, other) if _comparable(other) else NotImplemented
Tensor.__ne__ = lambda self, other: ew.ne(self, other) if _comparable(other) else NotImplemented
Tensor.__lt__ = _m(ew.lt)
Tensor.__le__ = _m(ew.le)
Tensor.__gt__ = _m(ew.gt)
Tensor.__ge__ = _m(ew.ge)
Tensor.__getitem__ = ix.getitem


def _setitem(self, idx, value):
    inplace.apply(self, ix.index_put(self, idx, value))


Tensor.__setitem__ = _setitem
Tensor.real = property(cx.real)
Tensor.imag = property(cx.imag)


# ----------------------------------------------------------------- in-place forms
def _inplace(fn):
    def method(self, *args, **kwargs):
        return inplace.apply(self, fn(inplace.source(self, args), *args, **kwargs))
    return method


for _name in ("add", "sub", "mul", "div", "pow", "neg", "exp", "log", "sqrt", "abs", "tanh",
              "sigmoid", "relu", "clamp", "clamp_min", "clamp_max", "sin", "cos", "floor",
              "ceil", "round", "trunc", "sign", "masked_fill", "reciprocal", "square",
              "remainder", "rsqrt", "log1p", "expm1", "atan2", "lerp", "addcmul", "addcdiv",
              "tril", "triu", "scatter", "index_add", "index_fill", "xlogy", "logit", "fmod",
              "acos", "asin", "atan", "cosh", "sinh", "tan", "erf", "erfc", "erfinv", "digamma",
              "lgamma", "polygamma", "i0", "sinc", "log2", "log10", "sgn", "negative",
              "conj_physical", "copysign", "hypot", "nextafter", "heaviside", "arctan2",
              "floor_divide", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
              "logical_xor", "logical_not", "nan_to_num", "cumsum", "cumprod", "scatter_add",
              "addmm", "addbmm", "baddbmm", "asinh", "acosh", "atanh", "arcsin", "arccos",
              "arctan", "arcsinh", "arccosh", "arctanh", "exp2", "frac", "deg2rad", "rad2deg",
              "ldexp", "gcd", "lcm", "absolute", "fix", "multiply", "subtract", "divide",
              "true_divide", "greater", "greater_equal", "less", "less_equal", "not_equal",
              "bitwise_not", "addmv", "addr",
              "index_copy", "renorm", "mvlgamma", "igamma", "igammac"):
    setattr(Tensor, _name + "_", _inplace(_METHODS[_name]))


def _bitwise_inplace(fn):
    """`x &= y` and kin: torch refuses a result type x cannot hold before the kernel runs
    (a float operand: the cast error, not the float kernel's)."""
    def method(self, other):
        inplace.check_cast(_dt.result_type(self, other), self)
        return inplace.apply(self, fn(inplace.source(self, (other,)), other))
    return method


for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    setattr(Tensor, _name + "_", _bitwise_inplace(_METHODS[_name]))


def _arith_inplace(fn, ufunc):
    """add_, sub_, mul_, div_: written straight into the tensor's array where nothing else is
    needed (NOTE [direct writes] in autograd/inplace.py), else as every in-place form."""
    def method(self, other, *args, **kwargs):
        if not args and (not kwargs or len(kwargs) == 1 and "alpha" in kwargs) and \
                inplace.direct(self, ufunc, other, kwargs.get("alpha", 1)):
            return self
        return inplace.apply(self, fn(inplace.source(self, (other,) + args), other, *args,
                                      **kwargs))
    return method


for _name, _ufunc in inplace.DIRECT.items():
    setattr(Tensor, _name + "_", _arith_inplace(_METHODS[_name], _ufunc))
Tensor.clip_ = Tensor.clamp_
Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_
Tensor.__ipow__ = Tensor.pow_
Tensor.__ifloordiv__ = Tensor.floor_divide_
Tensor.__imod__ = Tensor.remainder_
Tensor.__iand__ = Tensor.bitwise_and_
Tensor.__ior__ = Tensor.bitwise_or_
Tensor.__ixor__ = Tensor.bitwise_xor_


def _contains(self, element):
    """`element in t`: whether any entry equals it (a number or a tensor), as torch's."""
    if not isinstance(element, (Tensor, Number)):
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed "
                           f"in a {type(element)}.")
    return bool((self == element).any())


Tensor.__contains__ = _contains
Tensor.__reversed__ = lambda self: self.flip(0) if self.ndim else self


def _fill_(self, value, name="FillBackward0"):
    if isinstance(value, Tensor):
        return inplace.apply(self, value.to(self.dtype).expand(self.shape), name)
    if inplace.direct_fill(self, value):
        return self
    return inplace.apply(self, creation.full(self.shape, value, dtype=self.dtype), name)


def _resize_(self, *sizes):
    """New shape, the first elements kept in order and new ones zero (torch leaves those
    uninitialised); the memory is new, so views of the old one no longer see this tensor."""
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if self._lvl is not None:
        raise RuntimeError("resize_: cannot resize a tensor inside a transform")
    shape = sh._shape_args(sizes, "resize_", "size")
    n = 1
    for d in shape:
        n *= d
    xp = backend_of(self._data).xp
    flat = xp.reshape(self._data, (-1,))
    if n > flat.shape[0]:
        flat = xp.concat([flat, xp.zeros((n - flat.shape[0],), dtype=flat.dtype)])
    self._data = xp.reshape(xp.asarray(flat[:n], copy=True), shape)
    self._base = self._view_fn = None
    self._vc = {0: self._vc[0] + 1}
    return self


def _python_elementwise(self, name, fn, others=()):
    """`x.apply_(fn)` and `x.map_(y, fn)`: a Python callable on each element (numbers in,
    a number out, cast to x's dtype), written into x: torch's slow, CPU-only escape hatch."""
    if self._requires_grad or any(o._requires_grad for o in others):
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")
    data = self._data
    if self._lvl is not None or not hasattr(data, "flags"):
        raise RuntimeError(f"{name}() is only implemented on CPU tensors outside transforms")
    args = [o.expand(self.shape)._data for o in others]
    cast = complex if self.dtype.is_complex else float if self.dtype.is_floating_point else (
        bool if self.dtype is _dt.bool else int)

    def call(*vs):
        v = fn(*vs)
        if not isinstance(v, Number):
            raise TypeError(f"must be real number, not {type(v).__name__}")
        return cast(v)
    values = [call(*vs) for vs in zip(data.ravel().tolist(), *(a.ravel().tolist() for a in args))]
    data[...] = backend_of(data).xp.asarray(values, dtype=data.dtype).reshape(data.shape)
    self._vc[0] += 1
    return self


Tensor.apply_ = lambda self, callable: _python_elementwise(self, "apply_", callable)
Tensor.map_ = lambda self, tensor, callable: _python_elementwise(self, "map_", callable, (tensor,))


def _zero_(self):
    return _fill_(self, 0, "ZeroBackward0")


def _copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        src = creation.tensor(src)
    return inplace.apply(self, sh.expand(src.to(self.dtype), self.shape), "CopyBackwards")


# random fills write a constant draw: the written tensor's history gets zero gradient
# under torch's node name, and a leaf that requires grad is refused (NOTE [random fills])
def _uniform_(self, a=0.0, b=1.0, generator=None):
    with _no_grad():
        draw = creation.rand(*self.shape, generator=generator, dtype=self.dtype) * (b - a) + a
    return inplace.apply(self, draw, "UniformBackward0")


def _normal_(self, mean=0.0, std=1.0, generator=None):
    with _no_grad():
        draw = creation.randn(*self.shape, generator=generator, dtype=self.dtype) * std + mean
    return inplace.apply(self, draw, "NormalBackward0")


def _bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 0/1 draws, 1 with probability `p` (a number or a tensor)."""
    with _no_grad():
        probs = p if isinstance(p, Tensor) else creation.full_like(self, p, dtype=_dt.float64)
        draw = creation.bernoulli(probs.to(_dt.float64), generator=generator).to(self.dtype)
    return inplace.apply(self, draw, "BernoulliBackward2")


# NOTE [in-place views]
# `x.t_()` and its kin change x's geometry in place. A leaf (no history, no transform level, no
# base) just takes the new geometry: it stays the leaf its gradient is accumulated into. Any
# other tensor becomes the view `view(x, ...)` of its former self, a new object holding x's
# old state, which then is x's base at every level (a transform level reads a view's tangent
# or batch dim off its base). Views of x made before keep x as their base; since their way of
# redoing themselves assumes x's old geometry, they are redone from x's former self
# (views.base_of), and after a leaf's reshape, from which there is no former self, they
# refuse to be redone (the recorded version tells them apart). With grad mode off, a tensor
# with a history (or a view that requires grad) refuses: torch keeps the old history, of the
# old shape, which a backward through it then meets with a gradient of the new shape.
def _inplace_view(view):
    """`x.t_()` and its kin (NOTE [in-place views]): x takes the geometry of `view(x, ...)`
    and its version moves on, as torch's in-place view ops."""
    def method(self, *args, **kwargs):
        inplace.check(self, view.__name__ + "_")
        eager = self._lvl is None
        if eager and self._requires_grad and not _grad_mode.state.grad_enabled and (
                self.grad_fn is not None or self._base is not None):
            raise RuntimeError(
                f"{view.__name__}_(): an in-place view op with grad mode off on a tensor with a "
                "history (or a view that requires grad) would leave it a history of the old "
                "shape; call it with grad mode on, or on a detached tensor")
        if eager and self._base is None and self.grad_fn is None:
            with _no_grad():
                self._data = view(self, *args, **kwargs)._data
            self._vc[0] += 1
            self._reshaped_at = self._vc[0]
            return self
        former = _become(object.__new__(Tensor), self)
        _become(self, view(former, *args, **kwargs))
        self._vc[0] += 1
        return self
    return method


def _become(t, other):
    """`t` with `other`'s whole state (data, level, history, view relation); returns t."""
    for name in Tensor.__slots__[:-2]:
        setattr(t, name, getattr(other, name))
    t.__dict__.clear()
    t.__dict__.update(other.__dict__)
    return t


for _name in ("t", "transpose", "swapdims", "swapaxes", "squeeze", "unsqueeze", "as_strided"):
    setattr(Tensor, _name + "_", _inplace_view(getattr(sh, _name)))
Tensor.fill_ = _fill_
Tensor.resize_ = _resize_
Tensor.resize_as_ = lambda self, other: _resize_(self, tuple(other.shape))
Tensor.zero_ = _zero_
Tensor.copy_ = _copy_
Tensor.uniform_ = _uniform_
Tensor.normal_ = _normal_
Tensor.bernoulli_ = _bernoulli_
Tensor.bernoulli = creation.bernoulli
Tensor.multinomial = creation.multinomial
# random fills (see NOTE [random fills])
Tensor.exponential_ = creation.exponential_
Tensor.cauchy_ = creation.cauchy_
Tensor.log_normal_ = creation.log_normal_
Tensor.geometric_ = creation.geometric_
Tensor.random_ = creation.random_
# reductions into indices, with their in-place forms
for _name, _fn in (("scatter_reduce", ix.scatter_reduce), ("index_reduce", ix.index_reduce),
                   ("masked_scatter", ix.masked_scatter), ("put", ix.put)):
    setattr(Tensor, _name, _m(_fn))
    setattr(Tensor, _name + "_", _inplace(_fn))
Tensor.index_put_ = lambda self, indices, values, accumulate=False: inplace.apply(
    self, ix.index_put_op(self, indices, values, accumulate))
Tensor.index_put = ix.index_put_op


def _is_contiguous(self, memory_format=None):
    """Row-major strides (size-1 dims' strides do not matter), as torch's; per example inside
    vmap, as stride() is."""
    if self.numel() == 0:
        return True
    expected = 1
    for n, s in zip(reversed(self.shape), reversed(sh.strides_and_offset(self)[0])):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def _stride(self, dim=None):
    s = sh.strides_and_offset(self)[0]
    return s if dim is None else s[_wrap_dim(dim, len(s))]


Tensor.is_contiguous = _is_contiguous
Tensor.stride = _stride
Tensor.storage_offset = lambda self: sh.strides_and_offset(self)[1]
Tensor.as_strided = sh.as_strided
Tensor.unfold = sh.unfold
Tensor.nbytes = property(lambda self: self.numel() * self.element_size())
Tensor.itemsize = property(lambda self: self.element_size())


def _format(self, spec):
    # as torch: a 0-d tensor formats as its number; others only with an empty spec
    if self.dim() == 0 and self._lvl is None:
        return format(self.item(), spec)
    return object.__format__(self, spec)


Tensor.__format__ = _format


# ----------------------------------------------------------------- NumPy-style array functions,
# casts and queries (ops/arrays.py, ops/numerics.py)
from .ops import arrays, numerics  # noqa: E402

for _name in ("tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes", "unsafe_split",
              "unsafe_chunk", "unsafe_split_with_sizes", "fliplr", "flipud", "rot90",
              "diag_embed", "diagflat", "diagonal_scatter", "select_scatter", "slice_scatter",
              "repeat_interleave", "argwhere", "msort", "adjoint", "resolve_neg", "is_neg"):
    setattr(Tensor, _name, _m(getattr(arrays, _name)))
Tensor.narrow_copy = arrays.COPIES["narrow_copy"]
for _name in ("nansum", "nanmean", "fmax", "fmin", "logaddexp2", "signbit", "isposinf",
              "isneginf", "isreal", "positive", "frexp", "bitwise_left_shift",
              "bitwise_right_shift", "dist", "cov", "corrcoef", "histogram"):
    setattr(Tensor, _name, _m(getattr(numerics, _name)))
Tensor.ger = la.outer
Tensor.swapdims = _m(sh.transpose)
Tensor.take_along_dim = _m(ix.take_along_dim)
Tensor.float_power_ = _inplace(ew.float_power)
Tensor.bitwise_left_shift_ = _inplace(numerics.bitwise_left_shift)
Tensor.bitwise_right_shift_ = _inplace(numerics.bitwise_right_shift)
Tensor.__lshift__ = _m(numerics.bitwise_left_shift)
Tensor.__rlshift__ = lambda self, other: numerics.bitwise_left_shift(other, self)
Tensor.__rshift__ = _m(numerics.bitwise_right_shift)
Tensor.__rrshift__ = lambda self, other: numerics.bitwise_right_shift(other, self)
Tensor.__ilshift__ = Tensor.bitwise_left_shift_
Tensor.__irshift__ = Tensor.bitwise_right_shift_
Tensor.byte = lambda self: _to(self, _dt.uint8)
Tensor.char = lambda self: _to(self, _dt.int8)
Tensor.short = lambda self: _to(self, _dt.int16)
Tensor.cfloat = lambda self: _to(self, _dt.complex64)
Tensor.cdouble = lambda self: _to(self, _dt.complex128)


def _H(self):
    if self.ndim != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor." + (" For batches of matrices, consider using "
                                                      "tensor.mH" if self.ndim > 2 else ""))
    return arrays.adjoint(self)


def _mH(self):
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {self.ndim}-D tensor.")
    return arrays.adjoint(self)


def _is_nonzero(self):
    n = self.numel()
    if n != 1:
        raise RuntimeError("Boolean value of Tensor with " + ("no values" if n == 0 else
                           "more than one value") + " is ambiguous")
    return bool(self.detach().reshape(()).item() != 0)


def _data_ptr(self):
    """The address of the first element (NumPy arrays; other libraries' where they say)."""
    a = self._base_array() if self._lvl is not None else self._data
    interface = getattr(a, "__array_interface__", None)
    if interface is None:
        raise RuntimeError(f"data_ptr: the {type(a).__name__} array library gives no address")
    return interface["data"][0]


Tensor.H = property(_H)
Tensor.mH = property(_mH)
Tensor.is_cpu = property(lambda self: self.device.type == "cpu")
Tensor.ndimension = lambda self: self.ndim
Tensor.is_signed = lambda self: self.dtype.is_signed
Tensor.is_nonzero = _is_nonzero
Tensor.is_same_size = lambda self, other: tuple(self.shape) == tuple(other.shape)
Tensor.get_device = lambda self: -1 if self.device.type == "cpu" else (self.device.index or 0)
Tensor.data_ptr = _data_ptr
Tensor.const_data_ptr = _data_ptr
Tensor.is_inference = lambda self: False
Tensor.__dlpack__ = lambda self, **kwargs: self.detach()._data.__dlpack__(**kwargs)
Tensor.__dlpack_device__ = lambda self: self._data.__dlpack_device__()
Tensor.fill_diagonal_ = arrays.fill_diagonal_
