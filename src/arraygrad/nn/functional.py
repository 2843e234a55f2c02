"""torch.nn.functional: activations, losses, normalisation, dropout, embeddings,
distances and attention built from arraygrad ops.

Every function here is a composition of primitives, so gradients, double
gradients and the func transforms work through it with no extra rules; the
exceptions are linear and the common case of cross_entropy, primitives of their
own (NOTE [linear], NOTE [fused cross-entropy]), and the padded embedding
lookup, a custom Function (NOTE [padding rows]).

    import arraygrad.nn.functional as F
    loss = F.cross_entropy(logits, target)      # logits (N, C), target (N,) int64
"""
import math
import warnings

from .. import dtypes as _dt
from .. import _tensor as _t
from ..autograd.function import Function
from ..core.autocast_mode import autocast_op, LOWER_PRECISION, FP32
from ..core.grad_mode import no_grad
from ..ops import creation, elementwise as ew, index as ix, linalg as la, reduce as rd, shape as sh
from ..autograd.inplace import apply as _inplace
from ..ops._checks import same_dtype, short_dtype_name, tensor_op
from ..ops._checks import (bool_args as _bool_args, c_dtype_name as _c_dtype_name,
                           int_arg as _int_arg, not_implemented as _not_implemented)
from ..ops._rules import batch_size as _batch_size, to_front as _to_front
from ..ops.registry import primitive as _primitive
from ..backends import silent as _silent
from ..ops.conv import beside as _beside
from .modules.module import _size
from ..ops.conv import (conv1d, conv2d, conv3d, conv_transpose1d,  # noqa: F401
                        conv_transpose2d, conv_transpose3d, unfold, fold)
from ..ops.pool import (max_pool1d, max_pool2d, max_pool3d, avg_pool1d,  # noqa: F401
                        avg_pool2d, avg_pool3d, adaptive_avg_pool1d, adaptive_avg_pool2d,
                        adaptive_avg_pool3d, adaptive_max_pool1d, adaptive_max_pool2d,
                        adaptive_max_pool3d, lp_pool1d, lp_pool2d, lp_pool3d,
                        max_unpool1d, max_unpool2d, max_unpool3d)
from ..ops.resample import pad, interpolate, pixel_shuffle, pixel_unshuffle  # noqa: F401


# ----------------------------------------------------------------- activations
def relu(input, inplace=False):
    out = ew.relu(input)
    return _inplace(input, out) if inplace else out


def tanh(input):
    return ew.tanh(input)


def sigmoid(input):
    return ew.sigmoid(input)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        _implicit_dim("softmax", _stacklevel)
    return rd.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        _implicit_dim("log_softmax", _stacklevel)
    return rd.log_softmax(input, dim, dtype=dtype)


def _implicit_dim(name, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=stacklevel)


def _maybe_inplace(input, out, inplace):
    return _inplace(input, out) if inplace else out


# NOTE [kinks and overflow]: each activation below picks its branch with `where` on the
# comparisons torch's backward uses, so the derivative at a kink is torch's; a branch that
# is not selected still gets evaluated, so its input is clamped to the branch's own side
# (no overflow, no nan from 0 * inf in the backward).
def _in_float32(fn):
    """Run a composite activation on float16/bfloat16 input in float32 and round the result
    once, as torch's kernels compute half types (rounding every step is a bfloat16 step off)."""
    def run(input, *args, **kwargs):
        d = getattr(input, "dtype", None)
        if d is None or d.itemsize != 2 or not d.is_floating_point:
            return fn(input, *args, **kwargs)
        return ew.convert(fn(ew.convert(input, _dt.float32), *args, **kwargs), d)
    run.__name__, run.__doc__ = fn.__name__, fn.__doc__
    return run


def _no_complex_error(message, *xs):
    """torch's RuntimeError for the ops that check for complex before any kernel; `message`
    has a {} for the complex dtype's name."""
    for x in xs:
        if x.dtype.is_complex:
            raise RuntimeError(message.format(short_dtype_name(x.dtype)))


@tensor_op(floating='GeluKernelImpl')
@_in_float32
def gelu(input, approximate="none"):
    """x * Phi(x); approximate='tanh' uses torch's tanh formula."""
    ew.no_complex("gelu", input, kernel="GeluKernelImpl")
    if approximate == "none":
        return input * 0.5 * (1 + ew.erf(input * 0.7071067811865476))
    if approximate == "tanh":
        inner = 0.7978845608028654 * (input + 0.044715 * input * input * input)
        return 0.5 * input * (1 + ew.tanh(inner))
    raise RuntimeError(f"gelu: approximate argument must be either none or tanh, got "
                       f"'{approximate}'")


@tensor_op(floating='silu_cpu')
def silu(input, inplace=False):
    return _maybe_inplace(input, _in_float32(lambda x: x * ew.sigmoid(x))(input), inplace)


@tensor_op(floating='mish_cpu')
def mish(input, inplace=False):
    return _maybe_inplace(input, _in_float32(lambda x: x * ew.tanh(softplus(x)))(input), inplace)


@_in_float32
def _elu(input, alpha, scale, input_scale):
    neg = alpha * ew.expm1(ew.clamp_max(input, 0) * input_scale)
    return ew.where(input > 0, input * scale if scale != 1 else input, neg * scale)


@tensor_op(floating='elu_cpu')
def elu(input, alpha=1.0, inplace=False):
    return _maybe_inplace(input, _elu(input, alpha, 1.0, 1.0), inplace)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@tensor_op(floating='elu_cpu')
def selu(input, inplace=False):
    return _maybe_inplace(input, _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0), inplace)


@tensor_op(floating='elu_cpu')
def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError("celu: ZeroDivisionError, alpha must not be 0")
    return _maybe_inplace(input, _elu(input, alpha, 1.0, 1.0 / alpha), inplace)


@tensor_op(floating='leaky_relu_cpu')
def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _maybe_inplace(input, ew.where(input > 0, input, input * negative_slope), inplace)


@tensor_op(others=('weight',))
@autocast_op(LOWER_PRECISION)
def prelu(input, weight):
    """leaky_relu with a learned slope: one, or one per channel (dim 1)."""
    same_dtype("prelu: Type promoting not supported. Got {} and {}", input, weight)
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: weight must be 0-d or 1-d, got {weight.ndim}-d")
    c = weight.numel()
    if c != 1:
        channels = input.shape[1] if input.ndim >= 2 else 1
        if channels != c:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {c} and channel size = {channels}.")
        weight = weight.reshape([c] + [1] * (input.ndim - 2))
    elif weight.ndim == 1 and input.ndim == 0:
        weight = weight.reshape(())
    return ew.where(input > 0, input, weight * input)


@tensor_op(floating='leaky_relu_cpu')
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """leaky_relu with slope (lower+upper)/2 in eval, a uniform random slope per element in
    training (drawn per example under vmap(randomness='different'))."""
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    slope = creation.rand_like(input) * (upper - lower) + lower
    return _maybe_inplace(input, ew.where(input >= 0, input, input * slope), inplace)


@tensor_op
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """clamp to [min_val, max_val]; the gradient is 0 at the bounds (torch's hardtanh)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype is _dt.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    min_val, max_val = _dt.cast_scalar(min_val, input.dtype), _dt.cast_scalar(max_val, input.dtype)
    out = ew.where(input <= min_val, min_val, ew.where(input >= max_val, max_val, input))
    return _maybe_inplace(input, out, inplace)


@tensor_op
def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


@tensor_op(floating='hardswish_cpu')
def hardswish(input, inplace=False):
    mid = input * (input + 3) / 6
    out = ew.where(input <= -3, 0.0 * input, ew.where(input < 3, mid, input))
    return _maybe_inplace(input, out, inplace)


@tensor_op(floating='hardsigmoid_cpu')
def hardsigmoid(input, inplace=False):
    out = ew.where(input <= -3, 0.0, ew.where(input >= 3, 1.0, input / 6 + 0.5))
    return _maybe_inplace(input, out, inplace)


@tensor_op(floating='softplus_cpu')
def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, linear where beta x > threshold."""
    bx = input * beta
    soft = ew.log1p(ew.exp(ew.clamp_max(bx, threshold)))
    return ew.where(bx > threshold, input, soft / beta if beta != 1 else soft)


@tensor_op
def softsign(input):
    return input / (1 + ew.abs(input))


@tensor_op
def tanhshrink(input):
    return input - ew.tanh(input)


@tensor_op(floating='hardshrink_cpu')
def hardshrink(input, lambd=0.5):
    return ew.where((input > lambd) | (input < -lambd), input, 0.0)


@tensor_op(floating='softshrink_check')
def softshrink(input, lambd=0.5):
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return ew.where(input > lambd, input - lambd, ew.where(input < -lambd, input + lambd, 0.0))


@tensor_op
def threshold(input, threshold, value, inplace=False):
    if input.dtype is _dt.bool:
        raise NotImplementedError('"threshold_cpu" not implemented for \'Bool\'')
    value = _dt.cast_scalar(value, input.dtype)
    return _maybe_inplace(input, ew.where(input > threshold, input, value), inplace)


@tensor_op(floating='glu_cpu')
def glu(input, dim=-1):
    """a * sigmoid(b) for the two halves a, b of `input` along `dim`."""
    ew.no_complex("glu", input)
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension "
                           f"{dim % input.ndim} is size {n}")
    a, b = input.narrow(dim, 0, n // 2), input.narrow(dim, n // 2, n // 2)
    return a * ew.sigmoid(b)


@tensor_op(floating='log_sigmoid_cpu')
def logsigmoid(input):
    """log(sigmoid(x)), each branch evaluated on its own side of 0 (stable, exact slope 1/2
    at 0)."""
    neg = ew.clamp_max(input, 0)
    pos = ew.clamp_min(input, 0)
    return ew.where(input < 0, neg - ew.log1p(ew.exp(neg)), -ew.log1p(ew.exp(-pos)))


@tensor_op
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        _implicit_dim("softmin", _stacklevel)
    return rd.softmax(-input, dim, dtype=dtype)


# NOTE [linear]
# linear is one primitive where the operands are the common case (a 2-d weight, one real
# float dtype, a bias of shape (out_features,) or none) rather than matmul(input, weight.t())
# + bias: the bias goes into the product's fresh buffer in place, and the weight's gradient
# is computed as g^T x, already in the weight's (out, in) layout, where the composite's is a
# transposed view of x^T g that becomes `.grad` only through a transposing copy. A training
# step then allocates two buffers fewer per layer. Other operands take the composite.
@_silent
def _linear_impl(xp, x, w, *b):
    out = xp.matmul(x, xp.matrix_transpose(w))
    if b:
        out += b[0]     # out is the product's own new buffer
    return out


def _flat(t):
    """`t` as a matrix of its rows: the leading dims folded into one."""
    return t.reshape(math.prod(t.shape[:-1]), t.shape[-1])


def _linear_vjp(ctx, g):
    needs = ctx.needs_input_grad
    x, w = ctx.inputs[0], ctx.inputs[1]
    g2 = _flat(g) if True in needs[1:] else None
    return (g @ w if needs[0] else None,
            g2.transpose(0, 1) @ _flat(x) if needs[1] else None,
            g2.sum(0) if len(needs) > 2 and needs[2] else None)[:len(needs)]


def _linear_array_vjp(xp, g, inputs, outs, needs, shapes=None, spare=()):
    # _linear_vjp's operations on the arrays, in its order (the same bits); its products are
    # new arrays (the weight's becomes `.grad`), so it takes no spare buffers
    x, w = inputs[0], inputs[1]
    g2 = g.reshape(math.prod(g.shape[:-1]), g.shape[-1])
    return (xp.matmul(g, w) if needs[0] else None,
            xp.matmul(g2.T, x.reshape(math.prod(x.shape[:-1]), x.shape[-1]))
            if needs[1] else None,
            xp.sum(g2, axis=0) if len(needs) > 2 and needs[2] else None)[:len(needs)]


def _linear_batch(prim, args, bdims):
    x, w = args[0], args[1]
    dx, dw = bdims[0], bdims[1]
    db = bdims[2] if len(args) > 2 else None
    if dw is None and db is None:   # the examples are more rows of one product
        return prim(_to_front(x, dx), *args[1:]), 0
    # a batched weight or bias: one batched product of the examples' rows
    size = _batch_size(args, bdims)
    if dx is None:
        lead, rows = tuple(x.shape[:-1]), x.reshape(1, math.prod(x.shape[:-1]), x.shape[-1])
    else:
        x = _to_front(x, dx)
        lead, rows = tuple(x.shape[1:-1]), x.reshape(size, math.prod(x.shape[1:-1]), x.shape[-1])
    out = rows @ (w if dw is None else _to_front(w, dw)).transpose(-1, -2)
    if len(args) > 2:
        b = args[2]
        out = out + (b if db is None else _to_front(b, db).unsqueeze(1))
    return out.reshape((size,) + lead + (out.shape[-1],)), 0


def _linear_name(node):
    """torch's node: addmm/mm for a matrix input, a view (or squeeze) of one otherwise."""
    bias, nd = len(node.shapes) == 3, len(node.shapes[0])
    if nd == 2:
        return "AddmmBackward0" if bias else "MmBackward0"
    return "ViewBackward0" if bias else "SqueezeBackward4" if nd == 1 else "UnsafeViewBackward0"


_linear = _primitive(
    "linear", _linear_impl, vjp=_linear_vjp, save=(0, 1), node_name=_linear_name,
    arg_names=("input", "weight", "bias"),
    jvp=(lambda ctx, t: _linear(t, ctx.inputs[1]), lambda ctx, t: _linear(ctx.inputs[0], t),
         lambda ctx, t: t),
    batch=_linear_batch, array_vjp=_linear_array_vjp,
    jvp_reads_primals=True)     # torch's formula (addmm's) reads them for the bias's term too


@tensor_op(others=('weight',), optional=('bias',))
@autocast_op(LOWER_PRECISION)
def linear(input, weight, bias=None):
    """input @ weight.T + bias, weight of shape (out_features, in_features)."""
    if input.dtype is not weight.dtype and input.ndim > 2:
        # torch flattens the batch into one matrix product, whose dtype check comes first
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{short_dtype_name(input.dtype)} and {short_dtype_name(weight.dtype)}")
    d = input.dtype
    if weight.ndim == 2 and input.ndim >= 1 and input.shape[-1] == weight.shape[1] and \
            (d is _dt.float32 or d is _dt.float64) and weight.dtype is d and \
            not (input.is_sparse or weight.is_sparse) and (bias is None or (
                bias.dtype is d and tuple(bias.shape) == (weight.shape[0],))):
        return _linear(input, weight) if bias is None else _linear(input, weight, bias)
    out = la.matmul(input, weight.t() if weight.ndim == 2 else weight)
    if bias is None:
        return out
    if bias.dtype is not weight.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_c_dtype_name(bias.dtype)} and {_c_dtype_name(weight.dtype)}")
    if bias.ndim > out.ndim or any(b not in (1, o) for b, o in zip(reversed(bias.shape),
                                                                  reversed(out.shape))):
        raise RuntimeError(f"linear: the bias of shape {list(bias.shape)} does not broadcast "
                           f"to the output's shape {list(out.shape)}")
    return out + bias


def one_hot(tensor, num_classes=-1):
    """Integer class indices (int64) -> int64 tensor with a trailing one-hot dim."""
    if tensor.dtype is not _dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor._lvl is None and tensor.numel():
        lo, hi = int(tensor.min()), int(tensor.max())
        if lo < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = hi + 1
        elif hi >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes == -1:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    classes = creation.arange(num_classes)
    return ew.eq(tensor.unsqueeze(-1), classes).long()


# ----------------------------------------------------------------- losses
def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _weighted(loss, weight, input, reduction):
    """Reduce elementwise `loss`; with a weight (input's shape) the mean is sum(w*l)/sum(w)."""
    if weight is None:
        return _reduce(loss, reduction)
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    return loss.sum() / weight.sum() if reduction == "mean" else _reduce(loss, reduction)


def _difference(input, target):
    """input - target in their promoted dtype: torch's loss kernels read a bool as 0 or 1."""
    if input.dtype is _dt.bool or target.dtype is _dt.bool:
        d = _dt.promote_types(input.dtype, target.dtype)
        if d is not _dt.bool:
            input, target = input.to(d), target.to(d)
    return input - target


def _check_sizes(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({_size(target.shape)}) that is different to the "
                      f"input size ({_size(input.shape)}). This will likely lead to incorrect "
                      "results due to broadcasting. Please ensure they have the same size.",
                      stacklevel=3)


def _reduction(size_average, reduce, reduction):
    """torch's legacy size_average/reduce flags folded into `reduction`."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


@tensor_op(others=('target',), optional=('weight',))
@autocast_op(FP32)
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _reduction(size_average, reduce, reduction)
    _check_sizes(input, target)
    d = input - target
    return _weighted(d * d, weight, input, reduction)


@tensor_op(others=('target',), optional=('weight',))
@autocast_op(FP32)
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _reduction(size_average, reduce, reduction)
    _check_sizes(input, target)
    return _weighted(ew.abs(input - target), weight, input, reduction)


@tensor_op(others=('target',))
@autocast_op(FP32)
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Huber-like loss: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta."""
    ew.no_complex("smooth_l1", input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_sizes(input, target)
    d = _difference(input, target)
    a = ew.abs(d)
    if beta == 0:
        return _reduce(a, reduction)
    loss = ew.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta)
    return _reduce(loss, reduction)


def _check_batch(input, target):
    """torch's first check of class-index targets: one per example (ValueError)."""
    if input.ndim >= 2:
        n = target.shape[0] if target.ndim else 0
        if n != input.shape[0]:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                             f"batch_size ({n}).")


@tensor_op(others=('target',), optional=('weight',))
@autocast_op(FP32)
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood of class indices: input (N, C, ...) of log-probabilities."""
    reduction = _reduction(size_average, reduce, reduction)
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if target.dtype is not _dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {short_dtype_name(target.dtype)}")
    unbatched = input.ndim == 1
    if unbatched:
        if target.ndim != 0:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    n, c = input.shape[0], input.shape[1]
    _check_batch(input, target)
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {[n] + list(input.shape[2:])}, got "
                           f"{list(target.shape)}")
    hit, valid = _target_hits(input, target, ignore_index, 1)
    wb = None if weight is None else weight.reshape([c] + [1] * (input.ndim - 2))
    loss = -ew.where(hit, input if wb is None else input * wb, 0).sum(1)
    if unbatched and reduction == "none":
        return loss.squeeze(0)
    if reduction == "mean":
        return loss.sum() / (valid.sum() if wb is None else ew.where(hit, wb, 0).sum())
    return _reduce(loss, reduction)


# NOTE [nll without gather]: comparing the target with arange(C) picks the targets'
# entries with elementwise ops only, so a target batched by vmap (per-example
# losses) works like any other tensor; the cost is O(N*C), as log_softmax's.
def _target_hits(input, target, ignore_index, cdim, check=True):
    """(hit, valid): hit marks input[n, target[n]] along `cdim`, for targets not ignored;
    `check`: torch's error for a target out of range."""
    c = input.shape[cdim]
    valid = target != ignore_index
    if check and target._lvl is None and target.numel():
        bad = valid & ((target < 0) | (target >= c))
        if bool(bad.any()):
            raise IndexError(f"Target {int(target[bad].flatten()[0])} is out of bounds.")
    classes = creation.in_library_of(input, creation.arange(c)).reshape(
        [c] + [1] * (input.ndim - cdim - 1))
    hit = ew.eq(target.unsqueeze(cdim), classes)
    if 0 <= ignore_index < c:   # else an ignored target equals no class: no hit already
        hit = ew.logical_and(hit, valid.unsqueeze(cdim))
    return hit, valid


# NOTE [fused cross-entropy]
# cross_entropy of an (N, C) float input and (N,) class indices, without class weights or
# label smoothing (a training step's loss), is one primitive rather than log_softmax + nll's
# dozen: one dispatch forward and one node backward. Its gradient,
# (softmax(x) - onehot) * (the row's cotangent, 0 for ignored rows), is one primitive too
# (`cross_entropy_backward`, with its own rules for second derivatives and vmap), so a
# transform (per-example gradients, Hessians) dispatches one op for it rather than a dozen,
# and level 0's array-level rule is that primitive's impl. The forward computes what the
# composite does, operation for operation (the same bits); the gradient is the composite's
# up to rounding, as torch's fused kernel's. Other operands take the composite below.
@_silent
def _cross_entropy_impl(xp, x, t, reduction, ignore_index):
    valid = t != ignore_index
    c = x.shape[1]
    outside = (t < 0) | (t >= c)
    if bool(xp.any(outside)) and bool(xp.any(outside & valid)):     # (an ignored one may be)
        raise IndexError(f"Target {int(xp.reshape(t[outside & valid], (-1,))[0])} is out of "
                         "bounds.")
    s = x - xp.max(x, axis=1, keepdims=True)    # log_softmax(x, 1), as its impl computes it
    logp = s - xp.log(xp.sum(xp.exp(s), axis=1, keepdims=True))
    rows = -xp.sum(xp.where(_class_hits(xp, t, c, ignore_index, valid), logp, 0), axis=1)
    if reduction == "none":
        return rows
    total = xp.sum(rows)
    return total if reduction == "sum" else \
        total / xp.astype(xp.sum(xp.astype(valid, xp.int64)), x.dtype)


def _class_hits(xp, t, c, ignore_index, valid):
    """(N, C) bool: row n marks class t[n] unless that target is ignored."""
    hit = xp.reshape(t, (-1, 1)) == xp.arange(c, dtype=t.dtype)
    return hit & xp.reshape(valid, (-1, 1)) if 0 <= ignore_index < c else hit


def _row_weights(g, valid, reduction, dtype):
    """Each row's share of cotangent `g`, as (N, 1): 0 for ignored rows, g / (rows counted)
    for a mean."""
    if reduction == "mean":
        g = g / valid.sum().to(dtype)
    return ew.where(valid, g, 0).unsqueeze(1)


def _cross_entropy_parts(x, t, ignore_index):
    """(softmax(x) - onehot, valid) on tensors."""
    hit, valid = _target_hits(x, t, ignore_index, 1, check=False)
    return rd.softmax(x, 1) - hit.to(x.dtype), valid


def _cross_entropy_vjp(ctx, g, reduction, ignore_index):
    x, t = ctx.inputs
    return _cross_entropy_grad(x, t, g, reduction=reduction, ignore_index=ignore_index), None


@_silent
def _cross_entropy_grad_impl(xp, x, t, g, reduction, ignore_index):
    """cross_entropy's gradient on arrays: softmax(x, 1) as its impl computes it, less the
    targets' one-hot rows, times the rows' shares of `g`."""
    valid = t != ignore_index
    e = xp.exp(x - xp.max(x, axis=1, keepdims=True))
    d = e / xp.sum(e, axis=1, keepdims=True) - \
        xp.astype(_class_hits(xp, t, x.shape[1], ignore_index, valid), x.dtype)
    if reduction == "mean":
        g = g / xp.astype(xp.sum(xp.astype(valid, xp.int64)), g.dtype)
    return d * xp.where(valid, g, xp.zeros((), dtype=g.dtype))[:, None]


def _cross_entropy_grad_vjp(ctx, ct, reduction, ignore_index):
    """Second derivatives: x's through the softmax (its vjp, on ct times the rows' shares),
    g's the rows' dot products of ct with softmax(x) - onehot, reduced as the loss."""
    x, t, g = ctx.inputs
    needs = ctx.needs_input_grad
    gx = gg = None
    if needs[0]:
        s = rd.softmax(x, 1)
        u = ct * _row_weights(g, t != ignore_index, reduction, x.dtype)
        gx = s * (u - (u * s).sum(1, keepdim=True))
    if needs[2]:
        d, valid = _cross_entropy_parts(x, t, ignore_index)
        rows = ew.where(valid, (ct * d).sum(1), 0)
        gg = rows if reduction == "none" else rows.sum() if reduction == "sum" else \
            rows.sum() / valid.sum().to(x.dtype)
    return gx, None, gg


def _cross_entropy_grad_jvp_x(ctx, tx, reduction, ignore_index):
    x, t, g = ctx.inputs
    s = rd.softmax(x, 1)
    return s * (tx - (tx * s).sum(1, keepdim=True)) * \
        _row_weights(g, t != ignore_index, reduction, x.dtype)


def _cross_entropy_grad_jvp_g(ctx, tg, reduction, ignore_index):
    x, t, g = ctx.inputs
    d, valid = _cross_entropy_parts(x, t, ignore_index)
    return d * _row_weights(tg, valid, reduction, x.dtype)


def _cross_entropy_grad_batch(prim, args, bdims, reduction, ignore_index):
    # the examples' rows are more rows of one gradient with reduction="none", each row's
    # share of its example's cotangent computed as the unbatched rule computes it
    size = _batch_size(args, bdims)
    x, t, g = [_to_front(a, d) if d is not None else a.expand((size,) + tuple(a.shape))
               for a, d in zip(args, bdims)]
    n, c = x.shape[1], x.shape[2]
    if reduction != "none":
        if reduction == "mean":
            g = g / (t != ignore_index).sum(1).to(g.dtype)
        g = g.unsqueeze(1).expand(size, n)
    out = prim(x.reshape(size * n, c), t.reshape(size * n), g.reshape(size * n),
               reduction="none", ignore_index=ignore_index)
    return out.reshape(size, n, c), 0


_cross_entropy_grad = _primitive(
    "cross_entropy_backward", _cross_entropy_grad_impl, node_name="LogSoftmaxBackwardDataBackward0",
    arg_names=("self", "target", "grad_output"), nondiff_inputs=(1,),
    vjp=_cross_entropy_grad_vjp, jvp=(_cross_entropy_grad_jvp_x, None, _cross_entropy_grad_jvp_g),
    batch=_cross_entropy_grad_batch)


def _cross_entropy_jvp(ctx, tx, reduction, ignore_index):
    x, t = ctx.inputs
    d, valid = _cross_entropy_parts(x, t, ignore_index)
    rows = ew.where(valid, (d * tx).sum(1), 0)
    if reduction == "none":
        return rows
    total = rows.sum()
    return total if reduction == "sum" else total / valid.sum().to(x.dtype)


def _cross_entropy_batch(prim, args, bdims, reduction, ignore_index):
    # the examples' rows are more rows of one loss with reduction="none"
    size = _batch_size(args, bdims)
    x, t = [_to_front(a, d) if d is not None else a.expand((size,) + tuple(a.shape))
            for a, d in zip(args, bdims)]
    n, c = x.shape[1], x.shape[2]
    rows = prim(x.reshape(size * n, c), t.reshape(size * n), reduction="none",
                ignore_index=ignore_index).reshape(size, n)
    if reduction == "none":
        return rows, 0
    total = rows.sum(1)
    return (total if reduction == "sum" else
            total / (t != ignore_index).sum(1).to(x.dtype)), 0


_cross_entropy = _primitive(
    "cross_entropy", _cross_entropy_impl, save=(0, 1), node_name="NllLossBackward0",
    arg_names=("self", "target"), nondiff_inputs=(1,), vjp=_cross_entropy_vjp,
    array_vjp=lambda xp, g, inputs, outs, needs, shapes, spare, reduction, ignore_index: (
        _cross_entropy_grad_impl.plain(xp, inputs[0], inputs[1], g, reduction, ignore_index)
        if needs[0] else None, None), jvp=(_cross_entropy_jvp, None),
    batch=_cross_entropy_batch)


@tensor_op(others=('target',), optional=('weight',))
@autocast_op(FP32)
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """log_softmax over the class dim (1, or 0 for unbatched input) + nll_loss.

    `target` holds class indices (int64) or class probabilities (floating, input's shape).
    """
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if target.shape != input.shape:         # class indices, as torch decides: check them first
        _check_batch(input, target)
        if target.dtype.is_floating_point and target.ndim == input.ndim == 2:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if weight is None and label_smoothing == 0 and input.ndim == 2 and target.ndim == 1 and \
            target.dtype is _dt.int64 and input.dtype in (_dt.float32, _dt.float64) and \
            input.numel():
        return _cross_entropy(input, target, reduction=reduction, ignore_index=ignore_index)
    cdim = 0 if input.ndim == 1 else 1
    logp = rd.log_softmax(input, cdim)
    c = input.shape[cdim]
    wshape = [1] * input.ndim
    wshape[cdim] = c
    w = None if weight is None else weight.reshape(wshape)
    if target.dtype.is_floating_point:
        if target.shape != input.shape:
            raise RuntimeError(f"Expected target size {list(input.shape)}, got {list(target.shape)}"
                               if target.ndim == input.ndim else
                               "0D or 1D target tensor expected, multi-target not supported")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        terms = logp * target if w is None else logp * target * w
        if reduction == "none":
            return -terms.sum(cdim)
        total = -terms.sum()
        return total / (input.numel() / c) if reduction == "mean" else total
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing == 0:
        return nll
    hit, valid = _target_hits(input, target, ignore_index, cdim)
    smooth = ew.where(valid, -(logp if w is None else logp * w).sum(cdim), 0)
    if reduction == "mean":
        denom = valid.sum() if w is None else ew.where(hit, w, 0).sum()
        smooth = smooth.sum() / denom
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / c)


def _float_result_into(out, other):
    """torch computes these losses into `out`'s dtype: an integer or bool one cannot hold the
    float result."""
    if not out.dtype.is_floating_point and not out.dtype.is_complex and \
            (other.dtype.is_floating_point or other.dtype.is_complex):
        raise RuntimeError(f"result type {short_dtype_name(other.dtype)} can't be cast to the "
                           f"desired output type {short_dtype_name(out.dtype)}")


@tensor_op(others=('target',), optional=('weight',))
@autocast_op(FP32)
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    ew.no_complex("huber", input, target)
    _float_result_into(input, target)
    reduction = _reduction(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _check_sizes(input, target)
    d = _difference(input, target)
    a = ew.abs(d)
    loss = ew.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))
    if weight is not None:
        # unlike mse/l1, torch's weighted huber mean is a plain mean of the weighted terms
        if weight.shape != input.shape:
            raise ValueError("Weights and input must have the same size.")
        loss = loss * weight
    if input.dtype.is_floating_point and loss.dtype is not input.dtype:
        loss = loss.to(input.dtype)         # torch's kernel writes in the input's dtype
    return _reduce(loss, reduction)


def _check_bce_sizes(input, target):
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({_size(target.shape)}) that is different to the "
                         f"input size ({_size(input.shape)}) is deprecated. Please ensure they "
                         "have the same size.")


@tensor_op(others=('target',), optional=('weight',))
@autocast_op(FP32)
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as torch."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_bce_sizes(input, target)
    same_dtype("binary_cross_entropy: found dtype {1} but expected {0} (the input's)", input,
               target)
    if input._lvl is None and input.numel() and bool(((input < 0) | (input > 1)).any()):
        raise RuntimeError("binary_cross_entropy: all elements of input should be between 0 "
                           "and 1")
    tiny = math.exp(-100)
    log_x = ew.log(ew.clamp_min(input, tiny))
    log_1mx = ew.log(ew.clamp_min(1 - input, tiny))
    loss = -(target * log_x + (1 - target) * log_1mx)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@tensor_op(floating='log_sigmoid_cpu', others=('target',), optional=('weight', 'pos_weight'))
@autocast_op(FP32)
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """BCE of sigmoid(input), computed from the logits (stable for large |input|)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_bce_sizes(input, target)
    _float_result_into(target, input)
    neg_log_sig = -logsigmoid(input)
    if pos_weight is not None:
        neg_log_sig = neg_log_sig * ((pos_weight - 1) * target + 1)
    loss = (1 - target) * input + neg_log_sig
    if target.dtype.is_floating_point and loss.dtype is not target.dtype:
        loss = loss.to(target.dtype)        # torch computes in place into (1 - target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@tensor_op(others=('target',))
@autocast_op(FP32)
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL(target || exp(input)) pointwise: target (log target) * (log target - input)."""
    _no_complex_error("kl_div: Complex inputs not supported.", input, target)
    if not input.dtype.is_differentiable or not target.dtype.is_differentiable:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, "mean")
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    elif reduction not in ("batchmean", "none", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = ew.exp(target) * (target - input)
    else:
        loss = ew.xlogy(target, target) - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.ndim else total
    return _reduce(loss, reduction)


@tensor_op(others=('target',))
@autocast_op(FP32)
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    _bool_args("poisson_nll_loss", log_input=log_input, full=full)
    if full and target.dtype is _dt.bool:
        raise RuntimeError("poisson_nll_loss: Subtraction, the `-` operator, with a bool tensor "
                           "is not supported (full=True subtracts the target)")
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = ew.exp(input) - target * input
    else:
        loss = input - target * ew.log(input + eps)
    if full:
        # Stirling's term target*log(target) - target + 0.5*log(2*pi*target), for target > 1
        big = target > 1
        t = ew.where(big, target, 2.0)
        stirling = t * ew.log(t) - t + 0.5 * ew.log(2 * math.pi * t)
        loss = loss + ew.where(big, stirling, 0.0)
    return _reduce(loss, reduction)


def _clamped_keep_grad(x, lo):
    """clamp_min(x, lo) in value with the identity's gradient (torch clamps under no_grad)."""
    return ew.clamp_min(x, lo).detach() + (x - x.detach())


@tensor_op(others=('target',))
def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log var + (input - target)^2 / var), var clamped at eps (gradient passes)."""
    if not isinstance(var, _t.Tensor):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = creation.full_like(input, float(var))
    elif not var.dtype.is_floating_point:
        raise RuntimeError(f"gaussian_nll_loss: result type Float can't be cast to the desired "
                           f"output type {short_dtype_name(var.dtype)} (var is clamped in place)")
    elif var._lvl is None and bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and
                  sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = _clamped_keep_grad(var, eps)
    d = input - target
    loss = 0.5 * (ew.log(var) + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


@tensor_op(others=('input2', 'target'))
@autocast_op(FP32)
def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {_size(input1.shape)}, input2: "
                           f"{_size(input2.shape)}, target: {_size(target.shape)} ")
    return _reduce(ew.clamp_min(-target * (input1 - input2) + margin, 0), reduction)


@tensor_op(others=('target',))
@autocast_op(FP32)
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """input where target is 1, max(0, margin - input) where target is -1."""
    reduction = _reduction(size_average, reduce, reduction)
    margin, zero = _dt.cast_scalar(margin, input.dtype), _dt.cast_scalar(0, input.dtype)
    margin_part = ew.where(target != 1, ew.clamp_min(margin - input, 0), zero)
    self_part = ew.where(target != -1, input, zero)
    return _reduce(margin_part + self_part, reduction)


@tensor_op(others=('target',))
@autocast_op(FP32)
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    if not input.dtype.is_floating_point:   # torch writes its float result into input's dtype
        raise RuntimeError(f"soft_margin_loss: result type Float can't be cast to the desired "
                           f"output type {short_dtype_name(input.dtype)}")
    shape = sh.broadcast_shapes(input.shape, target.shape)
    if tuple(shape) != tuple(input.shape):
        raise RuntimeError(f"soft_margin_loss: output with shape {list(input.shape)} doesn't "
                           f"match the broadcast shape {list(shape)}")
    return _reduce(-logsigmoid(target * input), reduction)


@tensor_op(others=('input2', 'target'))
@autocast_op(FP32)
def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos - margin) where target is -1."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim not in (1, 2):
        raise RuntimeError(f"cosine_embedding_loss: 1D or 2D inputs of equal dims expected, got "
                           f"{input1.ndim}D and {input2.ndim}D")
    if target.ndim != input1.ndim - 1:
        raise RuntimeError(f"cosine_embedding_loss: expected {input1.ndim - 1}D target tensor "
                           f"for {input1.ndim}D inputs, got {target.ndim}D target")
    dim = input1.ndim - 1
    eps = 1e-12
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = prod / ew.sqrt(mag1 * mag2)
    pos = ew.where(target == 1, 1 - cos, 0.0)
    neg = ew.where(target == -1, ew.clamp_min(cos - margin, 0), 0.0)
    return _reduce(pos + neg, reduction)


@tensor_op(others=('positive', 'negative'))
@autocast_op(FP32)
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    _bool_args("triplet_margin_loss", swap=swap)
    reduction = _reduction(size_average, reduce, reduction)
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1 or dims[0] not in (1, 2):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions (1 or 2), but got: anchor {dims[0]}D, "
                           f"positive {dims[1]}D, and negative {dims[2]}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = ew.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(ew.clamp_min(margin + d_pos - d_neg, 0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    reduction = _reduction(None, None, reduction)
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, "
                         f"got {margin} instead")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = ew.minimum(d_neg, dist(positive, negative))
    return _reduce(ew.clamp_min(margin + d_pos - d_neg, 0), reduction)


@tensor_op(floating='multi_margin_loss_cpu_kernel', others=('target',), optional=('weight',))
@autocast_op(FP32)
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """sum over i != y of max(0, margin - x[y] + x[i])^p / C (weighted by weight[y])."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if input.ndim > 2 or input.ndim and input.shape[-1] == 0:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")
    if target.dtype is not _dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {short_dtype_name(target.dtype)}")
    unbatched = input.ndim <= 1
    n = 1 if unbatched else input.shape[0]
    if target.numel() != n or not unbatched and target.ndim != 1:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{n}], but got {list(target.shape)}.")
    x = input.reshape(1, -1) if unbatched else input
    t = target.reshape(1) if unbatched else target
    hit, _ = _target_hits(x, t, -100, 1)
    x_y = ew.where(hit, x, 0).sum(1, keepdim=True)
    z = ew.where(hit, 0.0, ew.clamp_min(margin - x_y + x, 0))
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * ew.where(hit, weight, 0).sum(1, keepdim=True)
    loss = z.sum(1) / x.shape[1]
    if unbatched:
        loss = loss.reshape(target.shape)
    return _reduce(loss, reduction)



@tensor_op(floating='multilabel_margin_loss_forward_out_frame', others=('target',))
@autocast_op(FP32)
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over target classes j and non-target classes i of max(0, 1 - x[j] + x[i]) / C;
    each row of `target` lists its classes, ended by the first -1."""
    reduction = _reduction(size_average, reduce, reduction)
    unbatched = input.ndim <= 1
    x = input.reshape(1, -1) if unbatched else input
    t = target.reshape(1, -1) if unbatched else target
    if t.shape != x.shape:
        raise RuntimeError(f"multilabel_margin_loss: inconsistent target size: "
                           f"{_size(target.shape)} for input of size: {_size(input.shape)}")
    valid = rd.cumprod((t != -1).to(_dt.int64), 1) > 0              # (N, J) before the first -1
    classes = creation.in_library_of(x, creation.arange(x.shape[1]))
    member = (ew.eq(t.unsqueeze(2), classes) & valid.unsqueeze(2)).any(1)      # (N, C)
    x_j = x.gather(1, ew.where(valid, t, 0)).unsqueeze(2)                      # (N, J, 1)
    hinge = ew.clamp_min(1 - x_j + x.unsqueeze(1), 0)                          # (N, J, C)
    keep = valid.unsqueeze(2) & ~member.unsqueeze(1)
    loss = ew.where(keep, hinge, 0.0).sum((1, 2)) / x.shape[1]
    if unbatched:
        loss = loss.reshape(())
    return _reduce(loss, reduction)

@tensor_op(floating='log_sigmoid_cpu', others=('target',), optional=('weight',))
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    # torch sums the loss along input's class dim counted from the front: a target with more
    # dims broadcasts the loss and moves that dim
    loss = loss.sum(input.ndim - 1) / input.shape[-1] if input.ndim else loss
    return _reduce(loss, reduction)


# ----------------------------------------------------------------- distances
def _pnorm(d, p, dim, keepdim=False):
    """p-norm along `dim` whose gradient at a zero vector is 0, as torch's distances
    (sum |d|^p is replaced by 1 there before the root, so no inf * 0)."""
    if p in (1, 2, math.inf):
        return rd.norm(d, p, dim, keepdim)
    total = (ew.abs(d) ** p).sum(dim, keepdim)
    zero = total == 0
    return ew.where(zero, 0.0, ew.where(zero, 1.0, total) ** (1.0 / p))


@tensor_op(others=('x2',))
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """p-norm of x1 - x2 + eps along the last dim."""
    d = x1 - x2 + eps
    return _pnorm(d, p, -1 if d.ndim else None, keepdim)



@tensor_op
def pdist(input, p=2):
    """Distances between the rows of a 2-d input, the upper triangle of cdist, row-major."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    _no_complex_error("pdist only supports floating-point dtypes", input)
    if not input.dtype.is_differentiable:
        raise RuntimeError("pdist only supports floating-point dtypes")
    rows = creation.arange(input.shape[0])
    i, j = (rows.unsqueeze(1) < rows).nonzero(as_tuple=True)
    return _pnorm(input[i] - input[j], p, -1)

@tensor_op(others=('x2',))
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1/|x1| * x2/|x2|) along `dim`; the norms are clamped at eps (gradient passes)."""
    _no_complex_error("expected common dtype to be floating point, yet common dtype is {}", x1,
                      x2)
    d = _dt.promote_types(x1.dtype, x2.dtype)
    if not d.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{short_dtype_name(d)}")
    x1, x2 = sh.broadcast_tensors(x1.to(d), x2.to(d))
    n1 = _clamped_keep_grad(rd.norm(x1, 2, dim, True), eps)
    n2 = _clamped_keep_grad(rd.norm(x2, 2, dim, True), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


@tensor_op(optional=('out',))
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(|input|_p, eps) along `dim`."""
    if out is not None:
        raise TypeError("normalize: the out= argument is not supported")
    return input / ew.clamp_min(rd.norm(input, p, dim, True), eps)


@tensor_op(others=('x2',))
@autocast_op(FP32)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between the rows of x1 (.., P, M) and x2 (.., R, M): (.., P, R)."""
    _no_complex_error("cdist only supports floating-point dtypes, X1 got: {}", x1)
    _no_complex_error("cdist only supports floating-point dtypes, X2 got: {}", x2)
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_differentiable:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{short_dtype_name(x.dtype)}")
    same_dtype("cdist: expected scalar type {} but found {}", x1, x2)
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if not p >= 0:          # NaN too
        raise RuntimeError("cdist only supports non-negative p values")
    d = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 0:
        return (d != 0).sum(-1).to(x1.dtype)
    return _pnorm(d, p, -1)


# ----------------------------------------------------------------- normalisation
def _check_affine(name, param, c, what):
    if param is not None and param.numel() != c:
        raise RuntimeError(f"{name}: expected {what} of {c} elements, got "
                           f"{_size(param.shape)}")


def _channel(param, ndim):
    """A per-channel (C,) parameter shaped to broadcast over (N, C, *)."""
    return param.reshape([-1] + [1] * (ndim - 2))


def _update_running(running, value, momentum):
    """running = (1 - momentum) running + momentum value, in place. Statistics carry no
    derivative: like torch, the update sees `value` below any grad or jvp transform (under
    vmap a batched value cannot go into an unbatched buffer, and the batch level says so)."""
    while value._lvl is not None and value._lvl.kind != "batch":
        value = value._inner
    with no_grad():
        running.mul_(1 - momentum).add_(value.detach() * momentum)


def _param_dtypes(input, *params):
    """torch's norm kernels take parameters of the input's dtype (float32 ones also for a
    float16/bfloat16 input: mixed precision); they do not promote."""
    d = input.dtype
    for p in params:
        if p is not None and p.dtype is not d and not (
                p.dtype is _dt.float32 and d.is_floating_point and d.itemsize == 2):
            raise RuntimeError(f"expected scalar type {short_dtype_name(d)} but found "
                               f"{short_dtype_name(p.dtype)}: the parameters and running "
                               "statistics of a norm have the input's dtype")


@tensor_op(floating='batch_norm', optional=('running_mean', 'running_var', 'weight', 'bias'))
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise over every dim but the channels (dim 1). In training the batch statistics
    are used and the running ones updated in place (unbiased variance); in eval the running
    ones are used."""
    ew.no_complex("batch_norm", input, kernel="batch_norm")
    _param_dtypes(input, running_mean, running_var, weight, bias)
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected 2D or higher input (got {input.ndim}D input)")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_affine("batch_norm", t, c, name)
    dims = (0,) + tuple(range(2, input.ndim))
    if training:
        n = input.numel() // c if c else 0
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {_size(input.shape)}")
        mean = rd.mean(input, dims, keepdim=True)
        var = rd.variance(input, dims, correction=0, keepdim=True)
        if running_mean is not None:
            _update_running(running_mean, mean.reshape(c), momentum)
        if running_var is not None:
            _update_running(running_var, var.reshape(c) * (n / (n - 1)), momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("batch_norm: running_mean and running_var must be defined in "
                               "evaluation mode")
        mean, var = _channel(running_mean, input.ndim), _channel(running_var, input.ndim)
    out = (input - mean) * ew.rsqrt(var + eps)
    if weight is not None:
        out = out * _channel(weight, input.ndim)
    if bias is not None:
        out = out + _channel(bias, input.ndim)
    return out


@tensor_op(floating='batch_norm', optional=('running_mean', 'running_var', 'weight', 'bias'))
def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalise each (example, channel) over its spatial dims."""
    ew.no_complex("batch_norm", input, kernel="batch_norm")
    _param_dtypes(input, running_mean, running_var, weight, bias)
    if input.ndim < 3:
        raise ValueError(f"instance_norm: expected 3D or higher input (got {input.ndim}D input)")
    c = input.shape[1]
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and p.numel() != c:     # torch repeats them over the batch first
            raise RuntimeError(f"{name} should contain {input.shape[0] * c} elements not "
                               f"{input.shape[0] * p.numel()}")
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    dims = tuple(range(2, input.ndim))
    n = 1
    for d in dims:
        n *= input.shape[d]
    if n <= 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{_size(input.shape)}")
    mean = rd.mean(input, dims, keepdim=True)
    var = rd.variance(input, dims, correction=0, keepdim=True)
    if running_mean is not None:
        _update_running(running_mean, mean.reshape(-1, c).mean(0), momentum)
    if running_var is not None:
        _update_running(running_var, var.reshape(-1, c).mean(0) * (n / (n - 1)), momentum)
    out = (input - mean) * ew.rsqrt(var + eps)
    if weight is not None:
        out = out * _channel(weight, input.ndim)
    if bias is not None:
        out = out + _channel(bias, input.ndim)
    return out


@tensor_op(optional=('weight', 'bias'))
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the trailing `normalized_shape` dims."""
    ew.no_complex("layer_norm", input, kernel="LayerNormKernelImpl")
    _param_dtypes(input, weight, bias)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or tuple(input.shape[input.ndim - k:]) != shape or input.ndim < k:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{_size(input.shape)}")
    _param_shapes(shape, weight=weight, bias=bias)
    dims = tuple(range(input.ndim - k, input.ndim))
    mean = rd.mean(input, dims, keepdim=True)
    var = rd.variance(input, dims, correction=0, keepdim=True)
    out = (input - mean) * ew.rsqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


_EPS = {"float16": 0.0009765625, "bfloat16": 0.0078125, "float32": 1.1920928955078125e-07,
        "float64": 2.220446049250313e-16}     # torch.finfo(dtype).eps


def _param_shapes(shape, **params):
    """torch's check that layer_norm's and rms_norm's weight and bias have normalized_shape."""
    for name, p in params.items():
        if p is not None and tuple(p.shape) != tuple(shape):
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {list(p.shape)} and normalized_shape = "
                               f"{list(shape)}")


def _channel_params(input, **params):
    """torch's check that group_norm's weight and bias hold one value per channel."""
    for name, p in params.items():
        if p is not None and (p.ndim != 1 or p.shape[0] != input.shape[1]):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(p.shape)} and "
                               f"input of shape {list(input.shape)}")


@tensor_op(floating='rms_norm', optional=('weight',))
def rms_norm(input, normalized_shape, weight=None, eps=None):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    _param_shapes(shape, weight=weight)
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    if eps is None:
        eps = _EPS[input.dtype.name]
    out = input * ew.rsqrt(rd.mean(input * input, dims, keepdim=True) + eps)
    out = out if weight is None else out * weight
    return out.to(input.dtype) if out.dtype is not input.dtype else out     # as torch's kernel


@tensor_op(optional=('weight', 'bias'))
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each example over groups of channels (and the spatial dims)."""
    ew.no_complex("group_norm", input, kernel="GroupNormKernelImpl")
    _param_dtypes(input, weight, bias)
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[0], input.shape[1]
    _channel_params(input, weight=weight, bias=bias)
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {_size(input.shape)} and "
                           f"num_groups={num_groups}")
    g = input.reshape(n, num_groups, -1)
    mean = rd.mean(g, 2, keepdim=True)
    var = rd.variance(g, 2, correction=0, keepdim=True)
    out = ((g - mean) * ew.rsqrt(var + eps)).reshape(input.shape)
    if weight is not None:
        out = out * _channel(weight, input.ndim)
    if bias is not None:
        out = out + _channel(bias, input.ndim)
    return out


@tensor_op
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + alpha * mean of input^2 over `size` neighbouring channels)^beta."""
    kernel = "avg_pool2d" if input.ndim == 3 else "avg_pool3d_out_frame"
    ew.no_complex("avg_pool", input, kernel=kernel)
    if input.dtype is _dt.bool:
        raise _not_implemented(kernel, input.dtype)
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    c = input.shape[1]
    before, after = size // 2, (size - 1) // 2
    pad_shape = list(sq.shape)
    parts = []
    if before:
        pad_shape[1] = before
        parts.append(_beside(sq, creation.zeros(*pad_shape, dtype=sq.dtype)))
    parts.append(sq)
    if after:
        pad_shape[1] = after
        parts.append(_beside(sq, creation.zeros(*pad_shape, dtype=sq.dtype)))
    padded = sh.cat(parts, 1) if len(parts) > 1 else sq
    # a window of `size` channels: a sum of `size` shifted slices (a loop over the window)
    window = padded.narrow(1, 0, c)
    for i in range(1, size):
        window = window + padded.narrow(1, i, c)
    div = (window / size * alpha + k) ** beta
    return input / div


# ----------------------------------------------------------------- dropout
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(input, p, feature_dims):
    """Bernoulli(1 - p) keep mask like `input`, shared over `feature_dims` trailing dims
    (one draw per example under vmap(randomness='different'))."""
    shape = list(input.shape)
    for i in range(1, feature_dims + 1):
        shape[-i] = 1
    return creation.rand(*shape, dtype=input.dtype, device=input.device) < (1 - p)


def _dropout(input, p, training, inplace, feature_dims):
    _check_p(p)
    if not training or p == 0:
        return input
    if p == 1:
        out = input * 0
    else:
        out = input * ew.where(_keep_mask(input, p, feature_dims), 1 / (1 - p), 0.0)
    return _maybe_inplace(input, out, inplace)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1 / (1 - p)."""
    return _dropout(input, p, training, inplace, 0)


def _feature_dropout(name, input, p, training, inplace, spatial):
    """dropout1d/2d/3d: whole channels dropped; input (N, C, *spatial) or unbatched."""
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}: Expected {spatial + 1}D or {spatial + 2}D input, but "
                           f"received a {input.ndim}D input. Note that {name} exists to provide "
                           f"channel-wise dropout on inputs with {spatial} spatial dimension(s), "
                           "a channel dimension, and an optional batch dimension (i.e. "
                           f"{spatial + 1}D or {spatial + 2}D inputs).")
    return _dropout(input, p, training, inplace, spatial)


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout("dropout1d", input, p, training, inplace, 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. Note "
                      "that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape "
                      "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch "
                      "to using dropout1d instead.", stacklevel=2)
        return _dropout(input, p, training, inplace, 1)
    return _dropout(input, p, training, inplace, max(input.ndim - 2, 0))


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout("dropout3d", input, p, training, inplace, 3)


_ALPHA_DROP = 1.7580993408473766     # -SELU scale * SELU alpha: SELU's negative saturation


def _alpha_dropout(input, p, training, inplace, feature_dims):
    _check_p(p)
    if not training or p == 0:
        return input
    if p == 1:
        return _maybe_inplace(input, input * 0, inplace)
    keep = _keep_mask(input, p, feature_dims).to(input.dtype)
    a = 1.0 / math.sqrt((_ALPHA_DROP ** 2 * p + 1) * (1 - p))
    b = (keep - 1) * (_ALPHA_DROP * a) + _ALPHA_DROP * a * p
    return _maybe_inplace(input, input * (keep * a) + b, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's self-normalising mean and variance."""
    return _alpha_dropout(input, p, training, inplace, 0)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_dropout(input, p, training, inplace, max(input.ndim - 2, 0))


# ----------------------------------------------------------------- embeddings
def _scale_grad(x, scale):
    """x in value (exactly); its gradient multiplied by `scale`."""
    return x.detach() + (x - x.detach()) * scale


def _check_index(name, input):
    if input.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {input.dtype} instead "
                           f"(while checking arguments for {name})")


def _padding_idx(padding_idx, num):
    if padding_idx is None:
        return None
    padding_idx = _int_arg("embedding", "padding_idx", padding_idx)
    if not -num <= padding_idx < num:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx + num if padding_idx < 0 else padding_idx


def _renorm_rows(weight, input, max_norm, norm_type):
    """torch.embedding_renorm_: rows of `weight` used by `input` with a norm above max_norm
    are scaled down to it, in place and outside autograd."""
    with no_grad():
        idx = input.reshape(-1)
        rows = weight[idx]
        norms = rd.norm(rows, norm_type, 1, True)
        scale = ew.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[idx] = rows * scale


def _row_counts(input, num):
    """How often each of the `num` rows is indexed by `input` (for scale_grad_by_freq)."""
    return ew.eq(input.reshape(-1).unsqueeze(1), _beside(input, creation.arange(num))).sum(0)


# NOTE [padding rows]: torch's embedding backward gives the padding row no gradient, while its
# forward AD (and finite differences) see the true derivative, which includes that row. No
# composition has a reverse rule that differs from its forward rule, so the padded lookup is a
# custom Function: a primitive whose backward masks and whose jvp does not.
class _PaddedLookup(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(weight, input, padding_idx):
        return weight[input]

    @staticmethod
    def setup_context(ctx, inputs, output):
        weight, input, ctx.padding_idx = inputs
        ctx.rows = weight.shape[0]
        ctx.save_for_backward(input)
        ctx.save_for_forward(input)

    @staticmethod
    def backward(ctx, g):
        input, = ctx.saved_tensors
        g = ew.where((input == ctx.padding_idx).unsqueeze(-1), 0.0, g)
        grad = _beside(g, creation.zeros(ctx.rows, g.shape[-1], dtype=g.dtype))
        return ix.index_put(grad, (input,), g, accumulate=True), None, None

    @staticmethod
    def jvp(ctx, weight_t, input_t, padding_t):
        input, = ctx.saved_tensors
        return weight_t[input]


@tensor_op(others=('weight',))
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` picked by the integer `input`: out[..., :] = weight[input[...]]."""
    _check_index("embedding", input)
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if sparse:
        raise RuntimeError("embedding: sparse=True gradients are not supported by arraygrad; "
                           "use sparse=False (a dense gradient)")
    num = weight.shape[0]
    padding_idx = _padding_idx(padding_idx, num)
    if input._lvl is None and input.numel():
        lo, hi = int(input.min()), int(input.max())
        if lo < 0 or hi >= num:
            raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    out = weight[input] if padding_idx is None else _PaddedLookup.apply(weight, input,
                                                                        padding_idx)
    if scale_grad_by_freq:
        freq = _row_counts(input, num)[input].to(weight.dtype)
        out = _scale_grad(out, (1.0 / freq).unsqueeze(-1))
    return out


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embeddings: bags are the rows of a 2-d `input`, or
    the runs of a 1-d `input` starting at `offsets`. Empty bags give zeros."""
    _no_complex_error("Expected tensor for argument #1 'weight' to have one of the following "
                      "scalar types: Half, BFloat16, Float, Double; but got CPU{}Type instead "
                      "(while checking arguments for embedding_bag)", weight)
    _check_index("embedding_bag", input)
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                      f"per_sample_weights is only supported for mode='sum' "
                                      f"(got mode='{mode}'). Please open a feature request on "
                                      f"GitHub.")
        if per_sample_weights.shape != input.shape:
            raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape})"
                             f" is not None, then it must have the same shape as the input "
                             f"({input.shape})")
    if scale_grad_by_freq and mode == "max":
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if sparse:
        raise RuntimeError("embedding_bag: sparse=True gradients are not supported by "
                           "arraygrad; use sparse=False (a dense gradient)")
    num = weight.shape[0]
    padding_idx = _padding_idx(padding_idx, num)
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        idx = input
        valid = _beside(input, creation.ones(*input.shape, dtype=_dt.bool))
        psw = per_sample_weights
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        idx, valid, psw = _bags_from_offsets(input, offsets.to(_dt.int64), include_last_offset,
                                             per_sample_weights)
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    if padding_idx is not None:
        valid = valid & (idx != padding_idx)
    rows = weight[idx]
    if scale_grad_by_freq:
        freq = _row_counts(input, num)[idx].to(weight.dtype)
        rows = _scale_grad(rows, (1.0 / freq).unsqueeze(-1))
    mask = valid.unsqueeze(-1)
    if mode == "max":
        best = ew.where(mask, rows, -math.inf).amax(1)
        return ew.where(valid.any(1, keepdim=True), best, 0.0)
    if psw is not None:
        rows = rows * psw.unsqueeze(-1)
    total = ew.where(mask, rows, 0.0).sum(1)
    if mode == "sum":
        return total
    count = valid.sum(1, keepdim=True).clamp_min(1).to(weight.dtype)
    return total / count


def _bags_from_offsets(input, offsets, include_last_offset, per_sample_weights):
    """A 1-d input cut at `offsets` -> (index (B, L), valid mask (B, L), weights (B, L)),
    L the longest bag: the padded layout lets every mode reduce along dim 1."""
    n = input.shape[0]
    if offsets.numel() and int(offsets[0]) != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                         f"has to start from position 0. However, got {int(offsets[0])}")
    ends = _beside(input, creation.tensor([n], dtype=_dt.int64))
    if include_last_offset:
        starts, ends = offsets[:-1], offsets[1:]
    else:
        starts = offsets
        ends = sh.cat([offsets[1:], ends]) if offsets.numel() else ends[:0]
    if starts.numel() and int(offsets[-1]) > n:
        raise ValueError(f"offsets[-1] can not be greater than input's length ({n}), but got "
                         f"offsets[-1] of {int(offsets[-1])}")
    lengths = ew.clamp_min(ends - starts, 0)
    width = int(lengths.max()) if lengths.numel() else 0
    steps = _beside(input, creation.arange(width))
    pos = starts.unsqueeze(1) + steps
    valid = steps < lengths.unsqueeze(1)
    # a position past a bag's end reads entry 0: masked out by `valid` in every mode
    safe = ew.where(valid, pos, 0)
    idx = input[safe]
    psw = None if per_sample_weights is None else per_sample_weights[safe]
    return idx, valid, psw


@tensor_op(others=('input2', 'weight'), optional=('bias',))
def bilinear(input1, input2, weight, bias=None):
    """out[..., o] = input1 @ weight[o] @ input2 + bias[o]."""
    same_dtype("bilinear: all tensors must have the same dtype, got input1: {}, input2: {}, "
               "weight: {}", input1, input2, weight, bias)
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{_size(input1.shape[:-1])} and {_size(input2.shape[:-1])}")
    if weight.ndim < 3:     # torch reads weight.size(2) first
        raise IndexError(f"Dimension out of range (expected to be in range of [{-weight.ndim}, "
                         f"{weight.ndim - 1}], but got 2) (bilinear: weight of shape "
                         f"{list(weight.shape)})")
    if bias is not None and bias.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions (bilinear: a "
                         "0-d bias)")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {weight.shape[0]}")
    if weight.ndim != 3 or weight.shape[1] != input1.shape[-1] or \
            weight.shape[2] != input2.shape[-1]:
        raise RuntimeError(f"bilinear(): weight of shape {_size(weight.shape)} does not match "
                           f"inputs of sizes {input1.shape[-1]} and {input2.shape[-1]}")
    out = la.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


# ----------------------------------------------------------------- attention
def _safe_softmax(scores):
    """softmax over the last dim; a row masked entirely (all -inf) gives zeros, as torch."""
    dead = (scores == -math.inf).all(-1, keepdim=True)
    return ew.where(dead, 0.0, rd.softmax(ew.where(dead, 0.0, scores), -1))


@tensor_op(others=('key', 'value'), optional=('attn_mask',))
@autocast_op(LOWER_PRECISION)
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(q k^T * scale + mask) v over the last two dims; a bool mask marks the
    positions that take part, a float mask is added; is_causal masks the future."""
    _bool_args("scaled_dot_product_attention", is_causal=is_causal, enable_gqa=enable_gqa)
    if query.dtype is not key.dtype or key.dtype is not value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {_c_dtype_name(query.dtype)} key.dtype: "
                           f"{_c_dtype_name(key.dtype)} and value.dtype: "
                           f"{_c_dtype_name(value.dtype)} instead.")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must have at "
                           "least 2 dims")
    l, s = query.shape[-2], key.shape[-2]
    if scale is None:       # an empty head dim gives zero scores, whatever the scale
        scale = 1 / math.sqrt(query.shape[-1]) if query.shape[-1] else 1.0
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = key.unsqueeze(-3).expand(*key.shape[:-2], rep, *key.shape[-2:]) \
            .reshape(*key.shape[:-3], -1, *key.shape[-2:])
        value = value.unsqueeze(-3).expand(*value.shape[:-2], rep, *value.shape[-2:]) \
            .reshape(*value.shape[:-3], -1, *value.shape[-2:])
    scores = la.matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        attn_mask = _beside(query, creation.arange(l).unsqueeze(1) >= creation.arange(s))
    if attn_mask is not None:
        if attn_mask.dtype is _dt.bool:
            scores = ix.masked_fill(scores, attn_mask.logical_not(), -math.inf)
        else:
            scores = scores + attn_mask
    weights = _safe_softmax(scores)
    if dropout_p > 0:
        weights = dropout(weights, dropout_p, True)
    return la.matmul(weights, value)


def _float_mask(mask, dtype, name):
    """A bool mask (True = masked out) as an additive float mask; a float mask stays."""
    if mask is None:
        return None
    if mask.dtype is _dt.bool:
        return ew.where(mask, -math.inf, 0.0).to(dtype)
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _pad_last(mask):
    """`mask` with one more (unmasked) column: the extra key of bias_k or add_zero_attn."""
    return None if mask is None else sh.cat(
        [mask, creation.zeros(*mask.shape[:-1], 1, dtype=mask.dtype)], -1)


@tensor_op(others=('key', 'value'), optional=(
    'in_proj_weight', 'in_proj_bias', 'bias_k', 'bias_v', 'out_proj_bias', 'key_padding_mask',
    'attn_mask', 'q_proj_weight', 'k_proj_weight', 'v_proj_weight', 'static_k', 'static_v'))
def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """torch's multi-head attention: (L, N, E) or unbatched (L, E) inputs -> (output, weights
    averaged over heads or per head, or None without need_weights)."""
    batched = query.ndim == 3
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.ndim}-D query tensor")
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    key_padding_mask = _float_mask(key_padding_mask, query.dtype, "key_padding_mask")
    attn_mask = _float_mask(attn_mask, query.dtype, "attn_mask")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = sh.chunk(in_proj_bias, 3)
    if use_separate_proj_weight:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        w_q, w_k, w_v = sh.chunk(in_proj_weight, 3)
    q = linear(query, w_q, b_q)
    k = linear(key, w_k, b_k)
    v = linear(value, w_v, b_v)
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, key.shape[0]):
                raise RuntimeError(f"The shape of the 2D attn_mask is {_size(attn_mask.shape)}, "
                                   f"but should be {(tgt_len, key.shape[0])}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, key.shape[0]):
            raise RuntimeError(f"The shape of the 3D attn_mask is {_size(attn_mask.shape)}, but "
                               f"should be {(bsz * num_heads, tgt_len, key.shape[0])}.")
    if bias_k is not None and bias_v is not None:
        k = sh.cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = sh.cat([v, bias_v.expand(1, bsz, embed_dim)])
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    # heads folded into the batch: (N * heads, length, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
         if static_k is None else static_k)
    v = (v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
         if static_v is None else static_v)
    if add_zero_attn:
        k = sh.cat([k, creation.zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype)], 1)
        v = sh.cat([v, creation.zeros(bsz * num_heads, 1, head_dim, dtype=v.dtype)], 1)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    scores = la.matmul(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = rd.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    out = la.matmul(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(1)
    return out, (weights.squeeze(0) if not batched else weights)


# NOTE [ctc in log space]: the forward (alpha) recursion runs over time (a loop over T, the
# recursion's own order) and is vectorised over the batch and the extended label positions.
# Impossible states hold a large finite negative number instead of -inf, so that logsumexp's
# gradient stays finite (exp(-1e30 - x) is exactly 0); a loss that no alignment reaches is
# then mapped back to inf, as torch's.
_CTC_NEG = -1e30


def _as_lengths(lengths, n, name):
    if not isinstance(lengths, _t.Tensor):
        lengths = creation.tensor(list(lengths), dtype=_dt.int64)
    if lengths.ndim != 1 or lengths.shape[0] != n:
        raise RuntimeError(f"ctc_loss: {name} must be of size batch_size ({n}), got "
                           f"{_size(lengths.shape)}")
    return lengths.to(_dt.int64)


@tensor_op(others=('targets',))
@autocast_op(FP32)
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification loss of log_probs (T, N, C) (or (T, C)) against
    padded (N, S) or concatenated targets."""
    reduction = _reduction(None, None, reduction)
    blank = _int_arg("ctc_loss", "blank", blank)
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.ndim == 1 else targets
        input_lengths = [int(input_lengths)] if not isinstance(input_lengths, _t.Tensor) \
            else input_lengths.reshape(1)
        target_lengths = [int(target_lengths)] if not isinstance(target_lengths, _t.Tensor) \
            else target_lengths.reshape(1)
    if log_probs.ndim != 3:
        raise RuntimeError(f"ctc_loss: log_probs must be 2-d or 3-d, got {log_probs.ndim}-d")
    t_max, n, c = log_probs.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    def here(t):        # a constant in log_probs' array library
        return creation.in_library_of(log_probs, t)
    in_len = here(_as_lengths(input_lengths, n, "input_lengths"))
    tg_len = here(_as_lengths(target_lengths, n, "target_lengths"))
    if in_len.numel() and int(in_len.max()) > t_max:
        raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got "
                           f"value {int(in_len.max())} (while checking arguments for ctc_loss_cpu)")
    s_max = int(tg_len.max()) if n else 0
    if targets.ndim == 2:
        if targets.shape[1] < s_max:
            raise RuntimeError(f"Expected tensor to have size at least {s_max} at dimension 1, "
                               f"but got size {targets.shape[1]} for argument #2 'targets' (while "
                               "checking arguments for ctc_loss_cpu)")
        labels = targets[:, :s_max].to(_dt.int64)
    else:
        ends = rd.cumsum(tg_len, 0)
        slots = here(creation.arange(s_max))
        pos = (ends - tg_len).unsqueeze(1) + slots
        labels = targets.to(_dt.int64)[ew.where(slots < tg_len.unsqueeze(1), pos, 0)] \
            if targets.numel() else here(creation.zeros(n, s_max, dtype=_dt.int64))
    width = 2 * s_max + 1
    # extended labels: blank, l1, blank, l2, ..., blank
    ext = here(creation.full((n, width), blank, dtype=_dt.int64))
    if s_max:
        ext[:, 1::2] = labels
    s_idx = here(creation.arange(width))
    live = s_idx < (2 * tg_len + 1).unsqueeze(1)                      # (N, W)
    skip = here(creation.zeros(n, width, dtype=_dt.bool)) if width < 3 else sh.cat(
        [here(creation.zeros(n, 2, dtype=_dt.bool)),
         (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])], 1)
    lp = log_probs.gather(2, ext.unsqueeze(0).expand(t_max, n, width))  # (T, N, W)
    neg = here(creation.full((n, 1), _CTC_NEG, dtype=log_probs.dtype))
    alpha = ew.where((s_idx < 2).unsqueeze(0) & live, lp[0], _CTC_NEG) if t_max else None
    for t in range(1, t_max):
        prev1 = sh.cat([neg, alpha[:, :-1]], 1)
        prev2 = ew.where(skip, sh.cat([neg, neg, alpha[:, :-2]], 1)[:, :width], _CTC_NEG)
        new = rd.logsumexp(sh.stack([alpha, prev1, prev2]), 0) + lp[t]
        new = ew.where(live, new, _CTC_NEG)
        alpha = ew.where((in_len > t).unsqueeze(1), new, alpha)
    last = 2 * tg_len
    ends_at = (s_idx == last.unsqueeze(1)) | ((s_idx == (last - 1).unsqueeze(1)) &
                                              (tg_len > 0).unsqueeze(1))
    if alpha is None:
        loss = here(creation.full((n,), math.inf, dtype=log_probs.dtype))
    else:
        loss = -rd.logsumexp(ew.where(ends_at, alpha, _CTC_NEG), 1)
        loss = ew.where(loss > -_CTC_NEG / 2, math.inf, loss)
        if t_max and bool((in_len == 0).any()):
            loss = ew.where(in_len == 0, ew.where(tg_len == 0, 0.0, math.inf), loss)
    if zero_infinity:
        loss = ew.where(ew.isinf(loss), 0.0, loss)
    if reduction == "mean":
        return (loss / ew.clamp_min(tg_len, 1).to(loss.dtype)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss


# ----------------------------------------------------------------- aliases torch keeps
# The in-place activations of torch.nn.functional (`F.relu_(x)` is `F.relu(x, inplace=True)`)
def relu_(input):
    return relu(input, inplace=True)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu_(input):
    return selu(input, inplace=True)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


_threshold = threshold      # (threshold_'s argument of that name hides the function)


def threshold_(input, threshold, value):
    return _threshold(input, threshold, value, inplace=True)


# the pools' `*_with_indices` forms: (output, indices) always
def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode,
                      return_indices=True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode,
                      return_indices=True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode,
                      return_indices=True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool1d(input, output_size, return_indices=True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool2d(input, output_size, return_indices=True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool3d(input, output_size, return_indices=True)


# deprecated spellings of interpolate, with torch's warnings
def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
