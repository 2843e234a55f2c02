"""Pooling: max/avg pooling over windows, adaptive pooling by windows of varying size.

Fixed windows are a view (`reshape`, when the windows tile the input: stride == kernel, no
padding or dilation) or the columns of `conv.im2col`. Max pooling reduces them with one
primitive, `window_max` (NOTE [window max]); average pooling sums them. Adaptive windows come
from `index_select` with clamped window indices (max) or a matmul with an averaging matrix
per spatial dim (mean). Nothing loops over output positions.
"""
import itertools
import math

from .. import dtypes as _dt
from ..backends import backend_of
from ..core.autocast_mode import autocast_op, FP32
from . import creation, elementwise as ew
from ._checks import short_dtype_name, tensor_op, not_implemented, bool_args
from ._rules import all_front, to_front
from .conv import beside, im2col, ntuple
from .index import index_select, scatter
from .linalg import matmul
from .registry import primitive


# ----------------------------------------------------------------- window_max
# NOTE [window max]: the max over window dims `dims` and the flat (row-major) position of the
# max inside the window, chosen as torch's kernels do: the first maximum, but a NaN wins (the
# last NaN). The cotangent goes to the chosen position only (a tie of zeros after a ReLU
# gives all of it to the first), the tangent comes from it: `window_put` and `window_take`,
# linear in their second input and each other's transpose, carry that. All three impls scan
# the window positions (one array op per kernel offset, never a loop over pixels), which
# spares a scatter and an argmax along a short strided axis. They select without `where`
# where they can: NumPy's `where` branches per element, ~10x slower than arithmetic on the
# unpredictable masks of pooling; `maximum` keeps the running max (and its NaN), and a mask
# times finite values is exact (non-finite values take `where`).
def _window_index(ndim, dims, pos):
    index = [slice(None)] * ndim
    for d, p in zip(dims, pos):
        index[d] = p
    return tuple(index)


def _positions(shape, dims):
    return enumerate(itertools.product(*(range(shape[d]) for d in dims)))


def _windows_first(xp, x, dims):
    """(K, *rest): each window position's values, contiguous (strided reads are slow)."""
    return xp.stack([x[_window_index(x.ndim, dims, pos)] for _, pos in _positions(x.shape, dims)])


def _window_max_impl(xp, x, dims):
    w = _windows_first(xp, x, dims)
    # positions are kept in the smallest integer type that holds them: less memory traffic
    # per step of the scan and in window_put/window_take, which compare against them, and
    # less memory held for the backward (max_pool's return_indices widens them to int64)
    small = xp.int8 if w.shape[0] <= 127 else xp.int16 if w.shape[0] <= 32767 else xp.int64
    best, arg = w[0, ...], xp.zeros(w.shape[1:], dtype=small)
    for flat in range(1, w.shape[0]):
        v = w[flat, ...]
        # positions come in increasing order, so the maximum of the indices is the last taken
        arg = xp.maximum(arg, xp.astype((v > best) | xp.isnan(v), small) * flat)
        best = xp.maximum(best, v)
    return xp.asarray(best, copy=True) if w.shape[0] == 1 else best, arg


def _window_take_impl(xp, arg, x, dims):
    """x at each window's position `arg`."""
    w = _windows_first(xp, x, dims)
    out = xp.asarray(w[0, ...], copy=True)
    for flat in range(1, w.shape[0]):
        out = xp.where(arg == flat, w[flat, ...], out)
    return out


def _window_put_impl(xp, arg, g, dims, shape):
    """Zeros of `shape` with g at each window's position `arg`."""
    flags = getattr(g, "flags", None)
    if flags is not None and not flags.c_contiguous:
        # a strided view (col2im's crop of its padded image): read once into a copy, not once
        # per window position with a short inner loop (5x slower each)
        g = xp.asarray(g, copy=True)
    out = xp.empty(shape, dtype=g.dtype)    # every window position is written below
    finite = not backend_of(g).lazy and bool(xp.all(xp.isfinite(g)))
    zero = xp.zeros((), dtype=g.dtype)
    for flat, pos in _positions(shape, dims):
        chosen = arg == flat
        out[_window_index(len(shape), dims, pos)] = \
            g * xp.astype(chosen, g.dtype) if finite else xp.where(chosen, g, zero)
    return out


def _window_batch(prim, args, bdims, dims, **params):
    arg, v = all_front(args, bdims)
    if "shape" in params:
        params = {"shape": (arg.shape[0],) + tuple(params["shape"])}
    return prim(arg, v, dims=tuple(d + 1 for d in dims), **params), 0


_window_take = primitive(
    "window_take", _window_take_impl, save=(0,), nondiff_inputs=(0,),
    vjp=(lambda ctx, g, dims: None,
         lambda ctx, g, dims: _window_put(ctx.x, g, dims=dims, shape=ctx.shapes[1])),
    jvp=(lambda ctx, t, dims: None, lambda ctx, t, dims: _window_take(ctx.x, t, dims=dims)),
    batch=_window_batch)
_window_put = primitive(
    "window_put", _window_put_impl, save=(0,), nondiff_inputs=(0,),
    vjp=(lambda ctx, g, dims, shape: None,
         lambda ctx, g, dims, shape: _window_take(ctx.x, g, dims=dims)),
    jvp=(lambda ctx, t, dims, shape: None,
         lambda ctx, t, dims, shape: _window_put(ctx.x, t, dims=dims, shape=shape)),
    batch=_window_batch)


def _window_max_batch(prim, args, bdims, dims):
    return prim(to_front(args[0], bdims[0]), dims=tuple(d + 1 for d in dims)), (0, 0)


_window_max = primitive(
    "window_max", _window_max_impl, multiple_results=True, save=(), save_output=True,
    nondiff_outputs=(1,), jvp_reads_primals=False,
    vjp=(lambda ctx, g, g_arg, dims: _window_put(ctx.outs[1], g, dims=dims,
                                                 shape=ctx.shapes[0]),),
    jvp=(lambda ctx, t, dims: (_window_take(ctx.outs[1], t, dims=dims), None),),
    batch=_window_max_batch)


def _batched(input, nd, op):
    """(input with a batch dim, whether one was added): pools take (C, *s) or (N, C, *s)."""
    if input.ndim == nd + 1:
        x, unbatched = input.unsqueeze(0), True
    elif input.ndim == nd + 2:
        x, unbatched = input, False
    else:
        raise RuntimeError(f"{op}: Expected {nd + 1}D or {nd + 2}D (batch mode) tensor for input, "
                           f"but got input of size {list(input.shape)}")
    if input.dtype.is_complex:
        raise NotImplementedError(f'"{op}" not implemented for '
                                  f"'{short_dtype_name(input.dtype)}'")
    if not input.dtype.is_floating_point and (input.dtype.kind == "b" or op.startswith("adapt")):
        # torch has no bool pooling, nor integer adaptive pooling (its 1-d pools run 2-d kernels)
        raise not_implemented(op.replace("1d", "2d"), input.dtype)
    if not input.dtype.is_floating_point and op.startswith("avg") and \
            input.dtype is not _dt.int64:
        raise not_implemented("avg_pool2d", input.dtype)     # torch averages int64 only
    if any(s == 0 for s in x.shape[1:]):
        raise RuntimeError(f"{op}: Expected input's non-batch dimensions to have positive length,"
                           f" but input has a shape of {list(input.shape)}")
    return x, unbatched


def _geometry(x, kernel, stride, padding, dilation, ceil_mode, op):
    """((lo, hi) padding per dim, output sizes): hi also covers ceil_mode's partial windows."""
    pads, out = [], []
    for size, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation):
        span = d * (k - 1) + 1
        n = (size + 2 * p - span + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (n - 1) * s >= size + p:
            n -= 1
        out.append(n)
        pads.append((p, p + max(0, (n - 1) * s + span - (size + 2 * p))))
    if any(n < 1 for n in out):
        sizes = "x".join(str(v) for v in x.shape[1:])
        outs = "x".join(str(v) for v in [x.shape[1]] + out)
        raise RuntimeError(f"{op}: Given input size: ({sizes}). Calculated output size: ({outs}). "
                           "Output size is too small")
    return tuple(pads), tuple(out)


def _pool_args(kernel_size, stride, padding, dilation, nd, op):
    kernel = ntuple(kernel_size, nd, "kernel_size", op)
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else ntuple(stride, nd, "stride", op)
    padding = ntuple(padding, nd, "padding", op)
    dilation = ntuple(dilation, nd, "dilation", op)
    if any(v <= 0 for v in kernel + stride + dilation):
        raise RuntimeError(f"{op}: kernel_size, stride and dilation must be greater than zero, but"
                           f" got kernel_size={list(kernel)}, stride={list(stride)}, "
                           f"dilation={list(dilation)}")
    return kernel, stride, padding, dilation


def _windows(x, kernel, pads, stride, dilation, fill):
    """(N, C, K, *out): every window of x flattened along dim 2."""
    cols = im2col(x, kernel, dilation, pads, stride, fill=fill)
    return cols.reshape((x.shape[0], x.shape[1], math.prod(kernel))
                        + tuple(cols.shape[2 + len(kernel):]))


def _tiles(x, kernel, out):
    """(N, C, o1, k1, o2, k2, ...): the windows as a view of x, which they tile exactly."""
    return x.reshape(tuple(x.shape[:2]) + tuple(v for o, k in zip(out, kernel) for v in (o, k)))


def _lowest(dtype):
    """The padding that never wins a max: -inf, or an integer dtype's least value."""
    if dtype.is_floating_point:
        return float("-inf")
    return -(1 << (8 * dtype.itemsize - 1)) if dtype.is_signed else 0


def max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd, op):
    x, unbatched = _batched(input, nd, op)
    kernel, stride, padding, dilation = _pool_args(kernel_size, stride, padding, dilation, nd, op)
    for k, p, d in zip(kernel, padding, dilation):
        if p < 0 or 2 * p > d * (k - 1) + 1:
            raise RuntimeError(f"{op}: pad should be at most half of effective kernel size, but "
                               f"got pad={p}, kernel_size={k} and dilation={d}")
    pads, out = _geometry(x, kernel, stride, padding, dilation, ceil_mode, op)
    if stride == kernel and all(p == (0, 0) for p in pads) and all(d == 1 for d in dilation) \
            and all(s == o * k for s, o, k in zip(x.shape[2:], out, kernel)):
        y, arg = _window_max(_tiles(x, kernel, out), dims=tuple(3 + 2 * j for j in range(nd)))
    else:
        cols = im2col(x, kernel, dilation, pads, stride, fill=_lowest(x.dtype))
        y, arg = _window_max(cols, dims=tuple(range(2, 2 + nd)))
    if unbatched:
        y = y.squeeze(0)
    if not return_indices:
        return y
    # the flat input position (per channel) of each window's maximum
    flat = None
    rem = ew.convert(arg, _dt.int64)     # (window_max keeps positions in a small type)
    offsets = []
    for k in reversed(kernel):
        offsets.append(ew.remainder(rem, k))
        rem = ew.floor_divide(rem, k)
    offsets.reverse()
    for j, (size, o, s, p, d, off) in enumerate(zip(x.shape[2:], out, stride, padding, dilation,
                                                    offsets)):
        shape = [1] * (nd + 2)
        shape[2 + j] = o
        pos = beside(x, creation.arange(o).reshape(shape)) * s - p + off * d
        flat = pos if flat is None else flat * size + pos
    return y, (flat.squeeze(0) if unbatched else flat)


@tensor_op
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    bool_args("max_pool1d", ceil_mode=ceil_mode)
    if not input.dtype.is_floating_point and not input.dtype.is_complex and not return_indices:
        raise not_implemented("max_pool1d_impl", input.dtype)    # torch's kernel without indices
    return max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1,
                    "max_pool1d")


@tensor_op
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over windows of (N, C, H, W); with return_indices also each max's flat h*W+w."""
    bool_args("max_pool2d", ceil_mode=ceil_mode)
    return max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2,
                    "max_pool2d")


@tensor_op
@autocast_op(FP32)
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3,
                    "max_pool3d")


def avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
             nd, op):
    x, unbatched = _batched(input, nd, op)
    kernel, stride, padding, dilation = _pool_args(kernel_size, stride, padding, 1, nd, op)
    for k, p in zip(kernel, padding):
        if p < 0 or 2 * p > k:
            raise RuntimeError(f"{op}: pad should be at most half of kernel size, but got "
                               f"pad={p} and kernel_size={k}")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(f"{op}: divisor must be not zero")
    pads, out = _geometry(x, kernel, stride, padding, dilation, ceil_mode, op)
    total = _windows(x, kernel, pads, stride, dilation, 0.0).sum(2)
    if not x.dtype.is_floating_point:      # torch's integer average truncates
        divide = lambda t, d: ew.div(t, d, rounding_mode="trunc")     # noqa: E731
    else:
        divide = ew.div
    if divisor_override is not None:
        y = divide(total, divisor_override)
    else:
        # NOTE [avg_pool divisor]: as torch, a window counts the padding inside [-p, size+p)
        # (with count_include_pad) or only the input, never ceil_mode's overhang past it
        spatial = tuple(x.shape[2:])
        if count_include_pad:
            ones = creation.ones((1, 1) + tuple(s + 2 * p for s, p in zip(spatial, padding)),
                                 dtype=x.dtype)
            cpads = tuple((0, hi - p) for (lo, hi), p in zip(pads, padding))
        else:
            ones = creation.ones((1, 1) + spatial, dtype=x.dtype)
            cpads = pads
        y = divide(total, beside(x, _windows(ones, kernel, cpads, stride, dilation, 0.0).sum(2)))
    return y.squeeze(0) if unbatched else y


@tensor_op
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    bool_args("avg_pool1d", ceil_mode=ceil_mode, count_include_pad=count_include_pad)
    return avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1,
                    "avg_pool1d")


@tensor_op
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Mean over windows of (N, C, H, W) (zero padding counted when count_include_pad)."""
    bool_args("avg_pool2d", ceil_mode=ceil_mode, count_include_pad=count_include_pad)
    return avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                    divisor_override, 2, "avg_pool2d")


@tensor_op
@autocast_op(FP32)
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                    divisor_override, 3, "avg_pool3d")


# ----------------------------------------------------------------- power-average pooling
def lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd):
    """(sum over each window of x^p)^(1/p), torch's composite: the window mean of x^p times
    the window size, negative means (odd p) clipped to zero; p = +-inf pools |x| by max."""
    kernel = ntuple(kernel_size, nd, "kernel_size", f"lp_pool{nd}d")
    max_pool_nd = (max_pool1d, max_pool2d, max_pool3d)[nd - 1]
    if norm_type == math.inf:
        return max_pool_nd(ew.abs(input), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return ew.neg(max_pool_nd(ew.neg(ew.abs(input)), kernel_size, stride, 0, 1, ceil_mode))
    avg = (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1]
    out = avg(ew.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    return ew.pow(ew.mul(ew.mul(ew.sign(out), ew.relu(ew.abs(out))), math.prod(kernel)),
                  1.0 / norm_type)


@tensor_op
def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


@tensor_op
def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


@tensor_op
def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


# ----------------------------------------------------------------- max unpooling
def _unpool_size(input, kernel, stride, padding, output_size, nd):
    """torch's output size of max_unpool: (in - 1) * stride + kernel - 2 * padding per dim, or
    `output_size` (its last nd entries) where it lies within a stride of that."""
    default = [(input.shape[-nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(nd)]
    if output_size is None:
        return default
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(nd):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f"{low} and {high})")
    return list(output_size)


def max_unpool(input, indices, kernel_size, stride, padding, output_size, nd):
    """Each value put at its flat index (as max_pool returned it) in a zero plane of the
    output size: a partial inverse of max_pool, differentiable in `input` (a scatter)."""
    op = f"max_unpool{nd}d"
    kernel = ntuple(kernel_size, nd, "kernel_size", op)
    stride = kernel if stride is None else ntuple(stride, nd, "stride", op)
    padding = ntuple(padding, nd, "padding", op)
    if not input.dtype.is_floating_point:
        raise not_implemented(op, input.dtype)
    if indices.dtype is not _dt.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{short_dtype_name(indices.dtype)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    size = _unpool_size(input, kernel, stride, padding, output_size, nd)
    lead = tuple(input.shape[:-nd])
    flat = input.reshape(lead + (-1,))
    n = math.prod(size)
    if indices._lvl is None and indices.numel() and (bool((indices < 0).any()) or
                                                     bool((indices >= n).any())):
        raise RuntimeError(f"Found an invalid max index: {int(indices.max())} (output volumes "
                           f"are of size {'x'.join(map(str, size))}")
    out = input.new_zeros(lead + (n,))      # (in input's array library)
    return scatter(out, -1, indices.reshape(lead + (-1,)), flat).reshape(lead + tuple(size))


@tensor_op
def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


@tensor_op
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


@tensor_op
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


# ----------------------------------------------------------------- adaptive pooling
def _adaptive_sizes(x, output_size, nd, op):
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * nd
    output_size = tuple(output_size)
    if len(output_size) == 1:
        output_size *= nd
    if len(output_size) != nd:
        raise ValueError(f"{op}: output_size must be an int or {nd} ints, got {list(output_size)}")
    out = tuple(s if o is None else o for s, o in zip(x.shape[2:], output_size))
    if any(o < 0 for o in out):
        raise RuntimeError(f"{op}: elements of output_size must be greater than or equal to 0 but"
                           f" received {list(out)}")
    return out


def _window_bounds(size, out):
    """start, end (int64, shape (out,)) of torch's adaptive windows: floor(i*size/out),
    ceil((i+1)*size/out)."""
    i = creation.arange(out)
    return ew.floor_divide(i * size, out), ew.floor_divide((i + 1) * size + out - 1, out)


def _averaging_matrix(size, out, dtype):
    """(out, size): row i averages input window i."""
    start, end = _window_bounds(size, out)
    j = creation.arange(size)
    inside = ew.logical_and(j >= start.unsqueeze(1), j < end.unsqueeze(1))
    return inside.to(dtype) / (end - start).unsqueeze(1).to(dtype)


def along(x, dim, matrix):
    """Apply the (out, size) `matrix` to dim `dim` of x (a linear map along one dim)."""
    if dim == x.ndim - 1:
        return matmul(x, matrix.t())
    return matmul(x.movedim(dim, -1), matrix.t()).movedim(-1, dim)


def adaptive_avg_pool(input, output_size, nd, op):
    x, unbatched = _batched(input, nd, op)
    out = _adaptive_sizes(x, output_size, nd, op)
    y = x
    for j, o in enumerate(out):
        y = along(y, 2 + j, beside(x, _averaging_matrix(x.shape[2 + j], o, x.dtype)))
    return y.squeeze(0) if unbatched else y


@tensor_op
def adaptive_avg_pool1d(input, output_size):
    return adaptive_avg_pool(input, output_size, 1, "adaptive_avg_pool1d")


def _sizes_need_batch(input, output_size):
    """torch's Python wrapper reads a tuple output_size against the input's last dims."""
    if isinstance(output_size, (tuple, list)) and input.ndim < 3:
        raise ValueError("Input dimension should be at least 3")


@tensor_op
def adaptive_avg_pool2d(input, output_size):
    """Average of input windows chosen so that the output has `output_size` (H_out, W_out)."""
    _sizes_need_batch(input, output_size)
    return adaptive_avg_pool(input, output_size, 2, "adaptive_avg_pool2d")


@tensor_op
@autocast_op(FP32)
def adaptive_avg_pool3d(input, output_size):
    return adaptive_avg_pool(input, output_size, 3, "adaptive_avg_pool3d")


def adaptive_max_pool(input, output_size, return_indices, nd, op):
    x, unbatched = _batched(input, nd, op)
    out = _adaptive_sizes(x, output_size, nd, op)
    # NOTE [adaptive windows]: every window gets the same length k (the longest); shorter
    # ones repeat their last index, which changes neither the max nor the first argmax
    y = x
    starts, ends, lengths = [], [], []
    for j, o in enumerate(out):
        size = x.shape[2 + j]
        k = -(-size // o) + (1 if size % o else 0) if o else 1
        start, end = _window_bounds(size, o)
        idx = ew.minimum(start.unsqueeze(1) + creation.arange(k), (end - 1).unsqueeze(1))
        y = index_select(y, 2 + j, beside(x, idx.reshape(-1)))
        starts.append(start)
        ends.append(end)
        lengths.append(k)
    n, c = x.shape[0], x.shape[1]
    y = y.reshape((n, c) + tuple(v for o, k in zip(out, lengths) for v in (o, k)))
    values, arg = _window_max(y, dims=tuple(3 + 2 * j for j in range(nd)))
    if unbatched:
        values = values.squeeze(0)
    if not return_indices:
        return values
    flat, rem, offsets = None, ew.convert(arg, _dt.int64), []
    for k in reversed(lengths):
        offsets.append(ew.remainder(rem, k))
        rem = ew.floor_divide(rem, k)
    offsets.reverse()
    for j, (start, end, off) in enumerate(zip(starts, ends, offsets)):
        shape = [1] * nd
        shape[j] = out[j]
        pos = ew.minimum(beside(x, start.reshape(shape)) + off, beside(x, (end - 1).reshape(shape)))
        flat = pos if flat is None else flat * x.shape[2 + j] + pos
    return values, (flat.squeeze(0) if unbatched else flat)


@tensor_op
def adaptive_max_pool1d(input, output_size, return_indices=False):
    return adaptive_max_pool(input, output_size, return_indices, 1, "adaptive_max_pool1d")


@tensor_op
def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max over adaptive windows; with return_indices also each max's flat h*W+w."""
    _sizes_need_batch(input, output_size)
    return adaptive_max_pool(input, output_size, return_indices, 2, "adaptive_max_pool2d")


@tensor_op
@autocast_op(FP32)
def adaptive_max_pool3d(input, output_size, return_indices=False):
    return adaptive_max_pool(input, output_size, return_indices, 3, "adaptive_max_pool3d")

