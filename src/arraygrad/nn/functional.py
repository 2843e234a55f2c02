"""torch.nn.functional: activations and losses built from arraygrad ops.

Every function here is a composition of primitives, so gradients, double
gradients and the func transforms work through it with no extra rules.

    import arraygrad.nn.functional as F
    loss = F.cross_entropy(logits, target)      # logits (N, C), target (N,) int64
"""
import warnings

from .. import dtypes as _dt
from ..ops import creation, elementwise as ew, linalg as la, reduce as rd
from ..ops.inplace import apply as _inplace
from .modules.module import _size
from ..ops.conv import (conv1d, conv2d, conv3d, conv_transpose1d,  # noqa: F401
                        conv_transpose2d, conv_transpose3d, unfold, fold)
from ..ops.pool import (max_pool1d, max_pool2d, max_pool3d, avg_pool1d,  # noqa: F401
                        avg_pool2d, avg_pool3d, adaptive_avg_pool1d, adaptive_avg_pool2d,
                        adaptive_avg_pool3d, adaptive_max_pool1d, adaptive_max_pool2d,
                        adaptive_max_pool3d)
from ..ops.resample import (pad, interpolate, upsample, pixel_shuffle,  # noqa: F401
                            pixel_unshuffle)


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


def linear(input, weight, bias=None):
    """input @ weight.T + bias, weight of shape (out_features, in_features)."""
    out = la.matmul(input, weight.t() if weight.ndim == 2 else weight)
    return out if bias is None else out + bias


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


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _reduction(size_average, reduce, reduction)
    _check_sizes(input, target)
    d = input - target
    return _weighted(d * d, weight, input, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _reduction(size_average, reduce, reduction)
    _check_sizes(input, target)
    return _weighted(ew.abs(input - target), weight, input, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Huber-like loss: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta."""
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_sizes(input, target)
    d = input - target
    a = ew.abs(d)
    if beta == 0:
        return _reduce(a, reduction)
    loss = ew.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta)
    return _reduce(loss, reduction)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood of class indices: input (N, C, ...) of log-probabilities."""
    reduction = _reduction(size_average, reduce, reduction)
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if target.dtype is not _dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {_long_name(target.dtype)}")
    unbatched = input.ndim == 1
    if unbatched:
        if target.ndim != 0:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    n, c = input.shape[0], input.shape[1]
    if target.shape[0] != n:
        raise ValueError(f"Expected input batch_size ({n}) to match target batch_size "
                         f"({target.shape[0]}).")
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
def _target_hits(input, target, ignore_index, cdim):
    """(hit, valid): hit marks input[n, target[n]] along `cdim`, for targets not ignored."""
    c = input.shape[cdim]
    valid = target != ignore_index
    if target._lvl is None and target.numel():
        bad = valid & ((target < 0) | (target >= c))
        if bool(bad.any()):
            raise IndexError(f"Target {int(target[bad].flatten()[0])} is out of bounds.")
    classes = creation.arange(c).reshape([c] + [1] * (input.ndim - cdim - 1))
    valid_c = valid.unsqueeze(cdim)
    return ew.logical_and(ew.eq(target.unsqueeze(cdim), classes), valid_c), valid


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """log_softmax over the class dim (1, or 0 for unbatched input) + nll_loss.

    `target` holds class indices (int64) or class probabilities (floating, input's shape).
    """
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
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


def _long_name(dtype):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int32": "Int",
            "bool": "Bool", "int16": "Short", "int8": "Char", "uint8": "Byte"}.get(dtype.name,
                                                                                  dtype.name)
