"""Reductions: sum, mean, max/min (with indices), amax/amin, logsumexp, softmax."""
import builtins
import warnings
from collections import namedtuple

from .. import dtypes as _dt
from .. import _tensor as _t
from ..core.autocast_mode import autocast_op, FP32
from ..backends import numpy_backend, silent, broadcast_view
from ..autograd.eager import unary_op
from ._checks import tensor_op, short_dtype_name, bool_args, type_name
from ._rules import adjoint, along_dim, reduction, fresh, take
from .registry import primitive
from .elementwise import convert, exp, where, log
from .shape import eye_beside, full_beside, _expand

Tensor = _t.Tensor
_host = numpy_backend.xp


# NOTE [accumulation]
# torch accumulates float16 and bfloat16 reductions and softmax in float32 and cumulative sums in
# double on CPU; NumPy would accumulate in the input's own type (1% off for a float32
# cumsum of 10^6 terms, overflow in float16). Impls pass these wider dtypes.
def _acc(xp, x):
    """Accumulation dtype of a sum over `x` (None: its own)."""
    return xp.float32 if _dt.of_array(x.dtype) in (_dt.float16, _dt.bfloat16) else None


def _wide(xp, x):
    """`x` in its accumulation dtype."""
    return xp.astype(x, _acc(xp, x) or x.dtype, copy=False)


def _cum_acc(xp, x):
    return xp.float64 if _dt.of_array(x.dtype).is_floating_point else None


def _dims(dim, ndim):
    """Normalize `dim` (None, int or sequence) to a sorted tuple of non-negative dims."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (builtins.int,)) or hasattr(dim, "__index__") and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    out = []
    for d in dim:
        d = _t._wrap_dim(d, ndim)
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(sorted(out)) if ndim else ()   # a 0-d tensor accepts dim 0/-1: nothing to reduce


def _unreduce(g, shape, dims, keepdim):
    """Broadcast a reduced cotangent back to `shape` (leading dims need no reshape first:
    broadcasting puts them back, as torch's full reduction does)."""
    if not keepdim and dims and tuple(dims) != tuple(range(len(dims))):
        g = g.reshape(tuple(1 if i in dims else s for i, s in enumerate(shape)))
    return _expand(g, shape=tuple(shape))   # (the input's shape: `expand`'s checks hold)


# ----------------------------------------------------------------- sum / mean
def _overload_name(base):
    """torch names a full reduction ...Backward0 and one over given dims ...Backward1."""
    def name(node):
        full = len(node.params["dims"]) == len(node.shapes[0]) and not node.params["keepdim"]
        return base + ("Backward0" if full else "Backward1")
    return name


def _sum_impl(xp, x, dims, keepdim):
    if xp is _host and x.dtype.char in "fd":    # float32/64 on NumPy: its sum, unwrapped
        return _host.add.reduce(x, axis=dims, keepdims=keepdim)
    return xp.astype(xp.sum(x, axis=dims, keepdims=keepdim, dtype=_acc(xp, x)), x.dtype, copy=False)


def _unreduce_array(xp, g, shape, dims, keepdim):
    """`_unreduce` on arrays (sum's array-level vjp): the same reshape and broadcast."""
    if not keepdim and dims and tuple(dims) != tuple(range(len(dims))):
        g = xp.reshape(g, tuple(1 if i in dims else s for i, s in enumerate(shape)))
    return broadcast_view(xp, g, shape)


_sum = primitive(
    "sum", silent(_sum_impl), save=(),
    node_name=_overload_name("Sum"),
    vjp=(lambda ctx, g, dims, keepdim: _unreduce(g, ctx.shapes[0], dims, keepdim),),
    array_vjp=lambda xp, g, inputs, outs, needs, shapes, spare, dims, keepdim: (
        _unreduce_array(xp, g, shapes[0], dims, keepdim),),
    linear=True, batch=reduction)


@tensor_op(name="sum")
def _sum_op(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = convert(input, dtype)
    elif input.dtype._category < 2:
        input = convert(input, _dt.int64)
    return _sum(input, dims=_dims(dim, input.ndim), keepdim=keepdim)


_FULL = {}      # ndim -> the params of a full reduction, shared (NOTE [one-frame ops])


def _full(x):
    params = _FULL.get(x.ndim)
    if params is None:
        params = _FULL[x.ndim] = {"dims": tuple(range(x.ndim)), "keepdim": False}
    return params


_sum_all = unary_op(_sum, _sum_op, _full)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum over `dim` (all dims when None); integers and bools sum as int64."""
    if dim is None and keepdim is False and dtype is None:
        return _sum_all(input)
    return _sum_op(input, dim, keepdim, dtype=dtype)


def _count(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _mean_impl(xp, x, dims, keepdim):
    # sum / count: the mean of nothing is nan, as torch, without NumPy's "empty slice" warning
    if xp is _host and x.dtype.char in "fd":    # as _sum_impl (the quotient keeps the dtype)
        return _sum_impl(xp, x, dims, keepdim) / _count(x.shape, dims)
    s = xp.sum(x, axis=dims, keepdims=keepdim, dtype=_acc(xp, x))
    return xp.astype(s / _count(x.shape, dims), x.dtype, copy=False)


_mean = primitive(
    "mean", silent(_mean_impl), save=(),
    node_name=_overload_name("Mean"),
    vjp=(lambda ctx, g, dims, keepdim:
         _unreduce(g, ctx.shapes[0], dims, keepdim) / _count(ctx.shapes[0], dims),),
    array_vjp=lambda xp, g, inputs, outs, needs, shapes, spare, dims, keepdim: (
        xp.divide(_unreduce_array(xp, g, shapes[0], dims, keepdim), _count(shapes[0], dims)),),
    linear=True, batch=reduction)


@tensor_op(name="mean")
def _mean_op(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = convert(input, dtype)
    if not input.dtype.is_differentiable:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {short_dtype_name(input.dtype)}")
    return _mean(input, dims=_dims(dim, input.ndim), keepdim=keepdim)


_mean_all = unary_op(_mean, _mean_op, _full)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean over `dim` (all dims when None) of a floating or complex tensor."""
    if dim is None and keepdim is False and dtype is None:
        return _mean_all(input)
    return _mean_op(input, dim, keepdim, dtype=dtype)


@autocast_op(FP32)
@tensor_op
def prod(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = convert(input, dtype)
    elif input.dtype._category < 2:
        input = convert(input, _dt.int64)     # torch's integer products are int64, as sums
    return _prod(input, dims=_dims(dim, input.ndim), keepdim=keepdim)


# NOTE [prod gradient]
# d prod / d x_i is the product of the other entries. For small reductions it is
# computed as exactly that (an n x n masked product per slice), which stays right at
# zeros to every order. For large ones (numel * n over the budget) it is out / x, with
# the one-zero case patched in: first derivatives exact, higher ones at zeros not.
_EXACT_PROD_BUDGET = 1 << 20


def _prod_others(x, dims):
    k = len(dims)
    rest = [s for i, s in enumerate(x.shape) if i not in dims]
    moved = x.movedim(dims, tuple(range(x.ndim - k, x.ndim)))
    flat = moved.reshape(tuple(rest) + (-1,))
    n = flat.shape[-1]
    square = flat.unsqueeze(-2).expand(tuple(rest) + (n, n))
    others = _prod(where(eye_beside(x, n, dtype=_dt.bool), 1.0, square), dims=(len(rest) + 1,),
                   keepdim=False)
    return others.reshape(moved.shape).movedim(tuple(range(x.ndim - k, x.ndim)), dims)


def _prod_grad(ctx, g, dims, keepdim):
    x = ctx.x
    gg = _unreduce(g, ctx.shapes[0], dims, keepdim)
    n = _count(ctx.shapes[0], dims)
    if dims and 0 < n * _count(ctx.shapes[0], range(len(ctx.shapes[0]))) <= _EXACT_PROD_BUDGET:
        return gg * _prod_others(x, dims)
    out = _unreduce(ctx.out, ctx.shapes[0], dims, keepdim)
    safe = where(x == 0, 1.0, x)
    nz = _sum(convert(x == 0, x.dtype), dims=dims, keepdim=True)
    others = _prod(safe, dims=dims, keepdim=True).expand(x.shape)
    return gg * where(nz == 0, out / safe, where((nz == 1) & (x == 0), others, 0.0))


def _prod_jvp(ctx, t, dims, keepdim):
    d = _prod_grad(ctx, full_beside(ctx.out, ctx.out.shape, 1), dims, keepdim)
    return _sum(d * t, dims=dims, keepdim=keepdim)


_prod = primitive("prod", silent(lambda xp, x, dims, keepdim: xp.prod(x, axis=dims, keepdims=keepdim)),
                  save_output=True, vjp=(adjoint(_prod_grad),), complex=True,
                  node_name=_overload_name("Prod"),
                  jvp=(_prod_jvp,), batch=reduction)


# ----------------------------------------------------------------- amax / amin / max / min
def _share(x, out, g, dims, keepdim):
    """Cotangent of an extremum `out` of `x`: shared evenly among the tied extremal entries."""
    shape = x.shape
    mask = convert(x == _unreduce(out, shape, dims, keepdim), g.dtype)
    return _unreduce(g, shape, dims, keepdim) * mask / _sum(mask, dims=dims, keepdim=True)


def _share_jvp(x, out, t, dims, keepdim):
    mask = convert(x == _unreduce(out, x.shape, dims, keepdim), t.dtype)
    return _sum(t * mask, dims=dims, keepdim=keepdim) / _sum(mask, dims=dims, keepdim=keepdim)


def _even_share(ctx, g, dims, keepdim):
    return _share(ctx.x, ctx.out, g, dims, keepdim)


def _even_share_jvp(ctx, t, dims, keepdim):
    return _share_jvp(ctx.x, ctx.out, t, dims, keepdim)


def _reduction(name, fn, node_name):
    return primitive(name, silent(fn), save_output=True, vjp=(_even_share,),
                     jvp=(_even_share_jvp,), node_name=node_name, batch=reduction,
                     jvp_reads_primals=False)


def _check_nonempty(name, x, dims, error=RuntimeError):
    if x.numel() == 0 and (not dims or builtins.any(x.shape[d] == 0 for d in dims)):
        if not dims:
            raise error(f"{name}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        raise IndexError(f"{name}(): Expected reduction dim {dims[0]} to have non-zero size.")


_amax = _reduction("amax", lambda xp, x, dims, keepdim: xp.max(x, axis=dims, keepdims=keepdim),
                   "AmaxBackward0")
_amin = _reduction("amin", lambda xp, x, dims, keepdim: xp.min(x, axis=dims, keepdims=keepdim),
                   "AminBackward0")
_max_all = _reduction("max", lambda xp, x, dims, keepdim: xp.max(x, axis=dims, keepdims=keepdim),
                      "MaxBackward1")
_min_all = _reduction("min", lambda xp, x, dims, keepdim: xp.min(x, axis=dims, keepdims=keepdim),
                      "MinBackward1")


@tensor_op
def amax(input, dim=(), keepdim=False):
    _no_complex("max_values", input)
    dims = _dims(dim if dim != () else None, input.ndim)
    _check_nonempty("amax", input, dims if dim != () else ())
    return _amax(input, dims=dims, keepdim=keepdim)


@tensor_op
def amin(input, dim=(), keepdim=False):
    _no_complex("min_values", input)
    dims = _dims(dim if dim != () else None, input.ndim)
    _check_nonempty("amin", input, dims if dim != () else ())
    return _amin(input, dims=dims, keepdim=keepdim)


# two floating outputs from one node (output_nr 0 and 1), as torch's AminmaxBackward0
_aminmax = primitive(
    "aminmax", lambda xp, x, dims, keepdim: (xp.min(x, axis=dims, keepdims=keepdim),
                                            xp.max(x, axis=dims, keepdims=keepdim)),
    multiple_results=True, save_output=True, node_name="AminmaxBackward0", jvp_reads_primals=False,
    vjp=(lambda ctx, gmin, gmax, dims, keepdim: _share(ctx.x, ctx.outs[0], gmin, dims, keepdim)
         + _share(ctx.x, ctx.outs[1], gmax, dims, keepdim),),
    jvp=(lambda ctx, t, dims, keepdim: (_share_jvp(ctx.x, ctx.outs[0], t, dims, keepdim),
                                        _share_jvp(ctx.x, ctx.outs[1], t, dims, keepdim)),),
    batch=reduction)
min_max = namedtuple("aminmax", ["min", "max"])


@tensor_op
def aminmax(input, *, dim=None, keepdim=False):
    """Minimum and maximum in one pass: `lo, hi = torch.aminmax(x, dim=1)`."""
    dims = _dims(dim, input.ndim)
    if input.numel() == 0 and (dim is None or input.ndim == 0):
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    if builtins.any(input.shape[d] == 0 for d in dims):
        raise IndexError(f"aminmax: Expected reduction dim {dims[0]} to have non-zero size.")
    return min_max(*_aminmax(input, dims=dims, keepdim=keepdim))


values_indices = namedtuple("values_indices", ["values", "indices"])


def _select_impl(argfn):
    def impl(xp, x, dims, keepdim):
        d = dims[0]
        idx = argfn(xp, x, axis=d, keepdims=True)
        vals = xp.take_along_axis(x, idx, axis=d)
        if not keepdim:
            vals, idx = xp.squeeze(vals, d), xp.squeeze(idx, d)
        return vals, idx
    return impl


def _select_vjp(ctx, g, gi, dims, keepdim):
    from .index import scatter_into
    idx = ctx.outs[1]
    d = dims[0]
    if not keepdim:
        g, idx = g.unsqueeze(d), idx.unsqueeze(d)
    return scatter_into(g, idx, d, ctx.shapes[0])


def _select_jvp(ctx, t, dims, keepdim):
    from .index import gather
    idx = ctx.outs[1]
    d = dims[0]
    if not keepdim:
        idx = idx.unsqueeze(d)
    v = gather(t, d, idx)
    return (v if keepdim else v.squeeze(d)), None


def _no_complex(op, x):
    if x.dtype.is_complex:
        raise NotImplementedError(f'"{op}" not implemented for \'{short_dtype_name(x.dtype)}\'')


def _argsel(name):
    def f(xp, x, axis, keepdims):
        return getattr(xp, name)(x, axis=axis, keepdims=keepdims)
    return f


_max_dim = primitive("max_dim", _select_impl(_argsel("argmax")), multiple_results=True,
                     save=(), save_output=True, nondiff_outputs=(1,), node_name="MaxBackward0",
                     vjp=(_select_vjp,), jvp=(_select_jvp,), batch=reduction,
                     jvp_reads_primals=False)
_min_dim = primitive("min_dim", _select_impl(_argsel("argmin")), multiple_results=True,
                     save=(), save_output=True, nondiff_outputs=(1,), node_name="MinBackward0",
                     vjp=(_select_vjp,), jvp=(_select_jvp,), batch=reduction,
                     jvp_reads_primals=False)


_WHOLE = object()      # max(x): no dim given (an explicit None is torch's TypeError)


def _minmax(name, all_prim, dim_prim, binary):
    def op(input, dim=_WHOLE, keepdim=False):
        if isinstance(dim, Tensor):
            return binary(input, dim)
        if dim is not _WHOLE and not hasattr(dim, "__index__"):
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"(Tensor, {type_name(dim)}): expected (Tensor input), (Tensor input, "
                            "Tensor other) or (Tensor input, int dim, bool keepdim)")
        bool_args(name, keepdim=keepdim)
        _no_complex(name + "_all", input)
        if dim is _WHOLE:
            _check_nonempty(name, input, ())
            return all_prim(input, dims=tuple(range(input.ndim)), keepdim=False)
        dims = _dims(dim, input.ndim)
        _check_nonempty(name, input, dims)
        if input.ndim == 0:
            return values_indices(*dim_prim(input.reshape(1), dims=(0,), keepdim=False))
        return values_indices(*dim_prim(input, dims=dims, keepdim=keepdim))
    op.__name__ = name
    return tensor_op(op)


def _max_binary(a, b):
    from .elementwise import maximum
    return maximum(a, b)


def _min_binary(a, b):
    from .elementwise import minimum
    return minimum(a, b)


max = _minmax("max", _max_all, _max_dim, _max_binary)
min = _minmax("min", _min_all, _min_dim, _min_binary)


def _arg_select(name, prim):
    def op(input, dim=None, keepdim=False):
        if input.dtype.is_complex:
            raise RuntimeError(f"{name}(): does not support complex input")
        if input.dtype is _dt.bool:
            raise RuntimeError(f"{name}(): does not support bool input")
        if dim is None:
            _check_nonempty(name, input, (), IndexError)     # torch's type for arg* here
            return prim(input.reshape(-1), dims=(0,), keepdim=False)[1]
        dims = _dims(dim, input.ndim)
        _check_nonempty(name, input, dims)
        if input.ndim == 0:
            return prim(input.reshape(1), dims=(0,), keepdim=False)[1]
        return prim(input, dims=dims, keepdim=keepdim)[1]
    op.__name__ = name
    return tensor_op(op)


argmax = _arg_select("argmax", _max_dim)
argmin = _arg_select("argmin", _min_dim)


# ----------------------------------------------------------------- logsumexp / softmax
@silent
def _logsumexp_impl(xp, x, dims, keepdim):
    dtype, x = x.dtype, _wide(xp, x)
    # complex x: shifted by the largest real part (as torch), exp(x - m) is then at most 1 in size
    r = xp.real(x) if xp.isdtype(x.dtype, "complex floating") else x
    m = xp.max(r, axis=dims, keepdims=True) if x.size else xp.zeros((1,) * x.ndim, dtype=r.dtype)
    m = xp.where(xp.isfinite(m), m, xp.zeros((), dtype=r.dtype))
    out = xp.log(xp.sum(xp.exp(x - m), axis=dims, keepdims=True)) + m
    return xp.astype(out if keepdim else xp.squeeze(out, axis=dims), dtype, copy=False)


def _lse_weights(ctx, dims, keepdim):
    return exp(ctx.x - _unreduce(ctx.out, ctx.shapes[0], dims, keepdim))


_logsumexp = primitive(
    "logsumexp", _logsumexp_impl, save_output=True, complex=True,
    vjp=(lambda ctx, g, dims, keepdim:
         _unreduce(g, ctx.shapes[0], dims, keepdim) * _lse_weights(ctx, dims, keepdim).conj(),),
    jvp=(lambda ctx, t, dims, keepdim:
         _sum(t * _lse_weights(ctx, dims, keepdim), dims=dims, keepdim=keepdim),),
    batch=reduction)


@tensor_op
def logsumexp(input, dim, keepdim=False):
    if not input.dtype.is_differentiable:
        input = convert(input, _dt.get_default_dtype())
    return _logsumexp(input, dims=_dims(dim, input.ndim), keepdim=keepdim)


@silent
def _softmax_impl(xp, x, dim):
    if not x.size:
        return xp.asarray(x, copy=True)
    y = _wide(xp, x)
    e = xp.exp(y - xp.max(y, axis=dim, keepdims=True))
    return xp.astype(e / xp.sum(e, axis=dim, keepdims=True), x.dtype, copy=False)


@silent
def _log_softmax_impl(xp, x, dim):
    if not x.size:
        return xp.asarray(x, copy=True)
    y = _wide(xp, x)
    s = y - xp.max(y, axis=dim, keepdims=True)
    return xp.astype(s - xp.log(xp.sum(xp.exp(s), axis=dim, keepdims=True)), x.dtype, copy=False)


def _softmax_vjp(ctx, g, dim):
    y = ctx.out
    return y * (g - _sum(g * y, dims=(dim,), keepdim=True))


def _softmax_array_vjp(xp, g, inputs, outs, needs, shapes, spare, dim):
    """`_softmax_vjp` on arrays, in one buffer other than g's and the output's."""
    y = outs[0]
    t = xp.multiply(g, y, out=take(spare, g, y))
    s = _sum_impl(xp, t, (dim,), True)
    if not fresh(xp, t, g):
        return (y * (g - s),)
    xp.subtract(g, s, out=t)
    return (xp.multiply(y, t, out=t),)


def _log_softmax_vjp(ctx, g, dim):
    return g - exp(ctx.out) * _sum(g, dims=(dim,), keepdim=True)


def _log_softmax_array_vjp(xp, g, inputs, outs, needs, shapes, spare, dim):
    """`_log_softmax_vjp` on arrays, in one buffer (the output's own where it is spare)."""
    e = xp.exp(outs[0], out=take(spare, g))
    if not fresh(xp, e, g):
        return (g - e * _sum_impl(xp, g, (dim,), True),)
    xp.multiply(e, _sum_impl(xp, g, (dim,), True), out=e)
    return (xp.subtract(g, e, out=e),)


_softmax = primitive("softmax", _softmax_impl, save=(), save_output=True,
                     vjp=(_softmax_vjp,), jvp=(_softmax_vjp,), batch=along_dim,
                     array_vjp=_softmax_array_vjp)
_log_softmax = primitive(
    "log_softmax", _log_softmax_impl, save=(), save_output=True, vjp=(_log_softmax_vjp,),
    array_vjp=_log_softmax_array_vjp,
    jvp=(lambda ctx, t, dim: t - _sum(exp(ctx.out) * t, dims=(dim,), keepdim=True),),
    batch=along_dim)


def _floating(op, input, d):
    """torch's refusal of complex and integer softmax, naming the kernel it dispatches to."""
    if not input.dtype.is_floating_point:
        kernel = "lastdim_kernel_impl" if d >= input.ndim - 1 else "kernel_impl"
        raise NotImplementedError(f'"{op}_{kernel}" not implemented for '
                                  f"'{short_dtype_name(input.dtype)}'")


@tensor_op
def softmax(input, dim=None, dtype=None):
    if dtype is not None:
        input = convert(input, dtype)
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1
    d = _t._wrap_dim(dim, input.ndim)
    _floating("softmax", input, d)
    if input.ndim == 0:
        return _softmax(input.reshape(1), dim=0).reshape(())
    return _softmax(input, dim=d)


@tensor_op
def log_softmax(input, dim=None, dtype=None):
    if dtype is not None:
        input = convert(input, dtype)
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1
    d = _t._wrap_dim(dim, input.ndim)
    _floating("log_softmax", input, d)
    if input.ndim == 0:
        return _log_softmax(input.reshape(1), dim=0).reshape(())
    return _log_softmax(input, dim=d)


# ----------------------------------------------------------------- composites
# NOTE [std/var]
# Primitives (not composites) so that their nodes are VarBackward0/StdBackward0 and std's
# rules use torch's formula: the cotangent/tangent is 0 where the result is 0 (identical
# values), not the 0/0 that differentiating sqrt(var) gives.
@silent
def _var_impl(xp, x, dims, keepdim, correction):
    n = _count(x.shape, dims)
    d = x - xp.sum(x, axis=dims, keepdims=True) / n
    return xp.sum(d * d, axis=dims, keepdims=keepdim) / builtins.max(n - correction, 0)


def _var_scale(ctx, dims, correction):
    """2 / (n - correction) as torch computes it (inf when no degree of freedom is left)."""
    denom = builtins.max(_count(ctx.shapes[0], dims) - correction, 0)
    return 2.0 / denom if denom else float("inf")


def _var_vjp(ctx, g, dims, keepdim, correction):
    x = ctx.x
    return (_unreduce(g, ctx.shapes[0], dims, keepdim) * (x - _mean(x, dims=dims, keepdim=True))
            * _var_scale(ctx, dims, correction))


def _var_jvp(ctx, t, dims, keepdim, correction):
    x = ctx.x
    return (_sum(t * (x - _mean(x, dims=dims, keepdim=True)), dims=dims, keepdim=keepdim)
            * _var_scale(ctx, dims, correction))


def _nonzero_only(out, num):
    """num / (2 * out), and 0 where out == 0 (no NaN in either branch, for double backward)."""
    zero = out == 0
    return where(zero, 0.0, num / where(zero, 1.0, out * 2))


_var = primitive(
    "var", _var_impl, save=(0,), vjp=(_var_vjp,), jvp=(_var_jvp,),
    batch=reduction)
_std = primitive(
    "std", lambda xp, x, **params: xp.sqrt(_var_impl(xp, x, **params)), save=(0,),
    save_output=True,
    vjp=(lambda ctx, g, **params: _var_vjp(ctx, _nonzero_only(ctx.out, g), **params),),
    jvp=(lambda ctx, t, **params: _nonzero_only(ctx.out, _var_jvp(ctx, t, **params)),),
    batch=reduction)


def _var_args(name, input, dim, correction, unbiased):
    if not input.dtype.is_differentiable:
        raise RuntimeError(f"{name}(): std and var only support floating point and complex "
                           f"dtypes, got {input.dtype}")
    if unbiased is not None:
        correction = 1 if unbiased else 0
    dims = _dims(dim, input.ndim)
    if _count(input.shape, dims) - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=4)
    return dict(dims=dims, correction=correction)


def _variance(input, args, keepdim):
    if input.dtype.is_complex:      # E|z - Ez|^2: the real parts' variance plus the imaginary's
        return _var(input.real, keepdim=keepdim, **args) + _var(input.imag, keepdim=keepdim,
                                                                **args)
    return _var(input, keepdim=keepdim, **args)


def variance(input, dim, *, correction, keepdim):
    """var without the public op's checks and degrees-of-freedom warning: the normalisations'
    statistics (torch's native norms do not warn on an empty group)."""
    return _variance(input, dict(dims=_dims(dim, input.ndim), correction=correction), keepdim)


def _deviation(input, args, keepdim):
    if input.dtype.is_complex:
        return _variance(input, args, keepdim).sqrt()
    return _std(input, keepdim=keepdim, **args)


@tensor_op
def var(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    return _variance(input, _var_args("var", input, dim, correction, unbiased), keepdim)


@tensor_op
def std(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    return _deviation(input, _var_args("std", input, dim, correction, unbiased), keepdim)


def _norm2_scale(ctx, dims, keepdim):
    # x / |x|, with 0 where the norm is 0 (as torch: a subgradient, not nan)
    out = _unreduce(ctx.out, ctx.shapes[0], dims, keepdim)
    return ctx.x / where(out == 0, 1.0, out)


_norm2 = primitive(
    "norm2", silent(lambda xp, x, dims, keepdim: xp.astype(xp.sqrt(
        xp.sum(xp.square(_wide(xp, x)), axis=dims, keepdims=keepdim)), x.dtype, copy=False)),
    save_output=True, node_name="LinalgVectorNormBackward0",
    vjp=(lambda ctx, g, dims, keepdim:
         _unreduce(g, ctx.shapes[0], dims, keepdim) * _norm2_scale(ctx, dims, keepdim),),
    jvp=(lambda ctx, t, dims, keepdim:
         _sum(t * _norm2_scale(ctx, dims, keepdim), dims=dims, keepdim=keepdim),),
    batch=reduction)


@tensor_op
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm: linalg.vector_norm for a number p (and 'fro' over at most two dims),
    linalg.matrix_norm otherwise, as torch's."""
    from . import norms     # norms builds on this module's reductions
    dims = [dim] if isinstance(dim, builtins.int) else dim
    if isinstance(p, str):
        if p == "fro" and (dims is None or len(dims) <= 2):
            return norms.vector_norm(input, 2, dims, keepdim, dtype=dtype)
        return norms.matrix_norm(input, p, list(range(input.ndim)) if dims is None else dims,
                                 keepdim, dtype=dtype)
    return norms.vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype)


_all = primitive("all", lambda xp, x, dims, keepdim: xp.all(x, axis=dims, keepdims=keepdim),
                 differentiable=False, batch=reduction, complex=True)
_any = primitive("any", lambda xp, x, dims, keepdim: xp.any(x, axis=dims, keepdims=keepdim),
                 differentiable=False, batch=reduction, complex=True)


@tensor_op
def all(input, dim=None, keepdim=False):
    return _uint8_stays(input, _all(input, dims=_dims(dim, input.ndim), keepdim=keepdim))


@tensor_op
def any(input, dim=None, keepdim=False):
    return _uint8_stays(input, _any(input, dims=_dims(dim, input.ndim), keepdim=keepdim))


def _uint8_stays(input, out):
    """torch's all/any of a uint8 tensor are uint8 (0 or 1), of anything else bool."""
    return convert(out, _dt.uint8) if input.dtype is _dt.uint8 else out


@tensor_op
def cumsum(input, dim, *, dtype=None):
    if dtype is None and not input.dtype.is_differentiable and input.dtype is not _dt.int64:
        dtype = _dt.int64       # torch sums bools and integers as int64
    if dtype is not None:
        input = convert(input, dtype)
    d = _t._wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return _cumsum(input.reshape(1), dim=0).reshape(())
    return _cumsum(input, dim=d)


def _cumsum_vjp(ctx, g, dim):
    return _cumsum(g.flip(dim), dim=dim).flip(dim)


_cumsum = primitive("cumsum", silent(lambda xp, x, dim: xp.astype(
    xp.cumulative_sum(x, axis=dim, dtype=_cum_acc(xp, x)), x.dtype, copy=False)), save=(),
                    vjp=(_cumsum_vjp,), linear=True, batch=along_dim)


# ----------------------------------------------------------------- sorting
def _argsort_impl(xp, x, dim, descending):
    if not descending:
        return xp.argsort(x, axis=dim, stable=True)
    # descending and stable (ties keep their order): sort the reversed axis
    idx = xp.flip(xp.argsort(xp.flip(x, axis=dim), axis=dim, stable=True), axis=dim)
    return x.shape[dim] - 1 - idx


_argsort = primitive("argsort", _argsort_impl, differentiable=False, batch=along_dim)
sort_result = namedtuple("sort", ["values", "indices"])
topk_result = namedtuple("topk", ["values", "indices"])


@tensor_op
def argsort(input, dim=-1, descending=False, stable=False):
    bool_args("argsort", descending=descending, stable=stable)
    if input.dtype.is_complex:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    d = _t._wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return _argsort(input.reshape(1), dim=0, descending=descending).reshape(())
    return _argsort(input, dim=d, descending=descending)


@tensor_op
def sort(input, dim=-1, descending=False, stable=False):
    """Values and indices along `dim`; the gradient flows to the values' origins."""
    from .index import gather
    idx = argsort(input, dim, descending)
    if input.ndim == 0:
        return sort_result(input.reshape(1).reshape(()), idx)
    return sort_result(gather(input, dim, idx), idx)


@tensor_op
def topk(input, k, dim=-1, largest=True, sorted=True):
    if input.dtype is _dt.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    d = _t._wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    values, indices = sort(input, d, descending=largest)
    if input.ndim == 0:
        return topk_result(values, indices)
    return topk_result(values.narrow(d, 0, k), indices.narrow(d, 0, k))


# ----------------------------------------------------------------- more composites
@tensor_op
def var_mean(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    args = _var_args("var_mean", input, dim, correction, unbiased)
    return _variance(input, args, keepdim), mean(input, dim, keepdim=keepdim)


@tensor_op
def std_mean(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    args = _var_args("std_mean", input, dim, correction, unbiased)
    return _deviation(input, args, keepdim), mean(input, dim, keepdim=keepdim)


@tensor_op
def count_nonzero(input, dim=None):
    return sum(input != 0, dim)


# ----------------------------------------------------------------- cumprod
# NOTE [cumprod gradient]
# d out_i / d x_k = prod_{j <= i, j != k} x_j. Before the first zero of a slice this is
# out_i / x_k; at the first zero z it is prod_{j < z} x_j * prod_{z < j <= i} x_j; after
# it, 0 -- but only in value: it is x_z * prod_{j < z} x_j * (the same gradient for the
# tail after z), and keeping that factor makes second derivatives at zeros exact too.
# Both rules are written with masks (torch's cumprod_backward does the same).
def _cumprod_parts(x, dim):
    zero = x == 0
    seen = _cumsum(convert(zero, _dt.int64), dim=dim)   # zeros at or before each position
    before = seen == 0
    first = (seen == 1) & zero
    safe = where(before, x, 1.0)
    head = _prod(safe, dims=(dim,), keepdim=True)       # product before the first zero
    tail = where(before | first, 1.0, x)
    after = _cumprod(tail, dim=dim)                     # prod_{z < j <= i} x_j
    return before, first, safe, head, tail, after, seen >= 1


def _cumprod_grad(x, out, g, dim, depth):
    before, first, safe, head, tail, after, from_z = _cumprod_parts(x, dim)
    rev = _cumsum((g * out).flip(dim), dim=dim).flip(dim)
    at_z = head * _sum(where(from_z, g * after, 0.0), dims=(dim,), keepdim=True)
    grad = where(before, rev / safe, where(first, at_z, 0.0))
    if depth:
        x_z = _sum(where(first, x, 0.0), dims=(dim,), keepdim=True)    # 0, with a derivative
        rest = _cumprod_grad(tail, after, where(from_z, g, 0.0), dim, depth - 1)
        grad = grad + where(from_z & ~first, head * x_z * rest, 0.0)
    return grad


def _cumprod_vjp(ctx, g, dim):
    return _cumprod_grad(ctx.x, ctx.out, g, dim, 1)


def _cumprod_jvp(ctx, t, dim):
    x, out = ctx.x, ctx.out
    before, first, safe, head, _, after, from_z = _cumprod_parts(x, dim)
    t_z = _sum(where(first, t, 0.0), dims=(dim,), keepdim=True)
    return out * _cumsum(where(before, t / safe, 0.0), dim=dim) + \
        where(from_z, t_z * head * after, 0.0)


_cumprod = primitive("cumprod", silent(lambda xp, x, dim: xp.cumulative_prod(x, axis=dim)),
                     save_output=True, vjp=(adjoint(_cumprod_vjp),), jvp=(_cumprod_jvp,),
                     complex=True, batch=along_dim)


@tensor_op
def cumprod(input, dim, *, dtype=None):
    if dtype is not None:
        input = convert(input, dtype)
    elif input.dtype._category < 2:
        input = convert(input, _dt.int64)
    d = _t._wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return _cumprod(input.reshape(1), dim=0).reshape(())
    return _cumprod(input, dim=d)
