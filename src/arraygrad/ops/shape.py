"""Shape and view primitives: reshape, transpose, permute, expand, cat, stack, ..."""
import builtins
import functools

from .. import _tensor as _t
from .. import dtypes as _dt
from ..core.autocast_mode import autocast_op, FP32
from ..core.shapes import broadcast_dims, broadcasts_to, sum_to as _sum_to
from ..backends import adopt, array_dtype, backend_of, default_backend, broadcast_view
from ._checks import tensor_op, tensor_list, type_name, same_dtype, not_implemented
from ._rules import all_front, same_bdim, shifted_dims, to_front
from .registry import primitive

Tensor = _t.Tensor
_wrap_dim = _t._wrap_dim


def _view_prim(name, impl, vjp, array_vjp=None, **kw):
    """A view op is linear: its jvp is the op itself applied to the tangent. `array_vjp(xp,
    g, in_shape, **params)` is its vjp on an array (`in_shape`: the input's shape)."""
    return primitive(name, impl, vjp=(vjp,), linear=True, save=(), is_view=True,
                     array_vjp=None if array_vjp is None else
                     lambda xp, g, inputs, outs, needs, shapes, spare, **params: (
                         array_vjp(xp, g, shapes[0], **params),), **kw)


def _reshaped(xp, g, in_shape, **params):
    """The vjp of reshape, view, (un)squeeze on an array: g in the input's shape."""
    return xp.reshape(g, in_shape)


# ----------------------------------------------------------------- reshape
def _infer_shape(shape, numel):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s} at index {shape.index(s)} of "
                                   f"shape {shape}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _reshape_batch(prim, args, bdims, shape):
    x = to_front(args[0], bdims[0])
    return prim(x, shape=(x.shape[0],) + tuple(shape)), 0


_reshape = _view_prim("reshape", lambda xp, x, shape: xp.reshape(x, shape),
                      lambda ctx, g, shape: _reshape(g, shape=ctx.shapes[0]), _reshaped,
                      node_name="ViewBackward0", batch=_reshape_batch)


def _shape_args(shape, op="reshape", arg="shape"):
    """Ints given one by one or as one sequence (torch: TypeError for anything else)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    for i, s in enumerate(shape):
        if isinstance(s, builtins.bool) or not hasattr(s, "__index__") or (
                isinstance(s, Tensor) and s.dtype.is_floating_point):
            raise TypeError(f"{op}(): argument '{arg}' (position 1) must be tuple of ints, but "
                            f"found element of type {type_name(s)} at pos {i}")
    return tuple(s.__index__() for s in shape)


@tensor_op
def reshape(input, *shape):
    shape = _infer_shape(_shape_args(shape), input.numel())
    if shape == input.shape:
        return _reshape(input, shape=shape) if input._requires_grad else _alias(input)
    out = _reshape(input, shape=shape)
    if _copied(input, out):
        # the data could not be viewed in the new shape: a copy, as torch's reshape gives,
        # with its own version counter (writes to it do not reach `input`)
        out._vc = {0: 0}
        out._base = out._view_fn = None
    return out


@tensor_op
def view(input, *shape):
    if len(shape) == 1 and isinstance(shape[0], _dt.dtype):
        return _view_dtype(input, shape[0])
    shape = _infer_shape(_shape_args(shape, "view", "size"), input.numel())
    out = _reshape(input, shape=shape)
    if _copied(input, out):
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    return out


def _copied(x, out):
    """Whether reshape had to copy at some level (autograd.views.viewed)."""
    return out._vc is not x._vc


def _alias(x):
    return _alias_prim(x)


_alias_prim = _view_prim("alias", lambda xp, x: backend_of(x).alias(x), lambda ctx, g: g,
                         lambda xp, g, in_shape: g,
                         node_name="AliasBackward0", batch=same_bdim)


@tensor_op
def flatten(input, start_dim=0, end_dim=-1):
    if input.ndim == 0:
        return reshape(input, 1)
    s = _wrap_dim(start_dim, input.ndim)
    e = _wrap_dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = input.shape
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(input, tuple(shape[:s]) + (n,) + tuple(shape[e + 1:]))


@tensor_op
def unflatten(input, dim, sizes):
    d = _wrap_dim(dim, input.ndim)
    shape = input.shape
    try:
        sizes = _infer_shape(sizes, shape[d])
    except RuntimeError:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size "
                           f"of dim {dim} ({shape[d]}) in the input tensor") from None
    return reshape(input, tuple(shape[:d]) + tuple(sizes) + tuple(shape[d + 1:]))


# ----------------------------------------------------------------- permutations
def _swapped(ndim, d0, d1):
    perm = list(range(ndim))
    if d0 != d1:      # (both 0 for a 0-d tensor; shifted past it under vmap)
        perm[d0], perm[d1] = perm[d1], perm[d0]
    return perm


_transpose = _view_prim("transpose",
                        lambda xp, x, d0, d1: xp.permute_dims(x, _swapped(x.ndim, d0, d1)),
                        lambda ctx, g, d0, d1: _transpose(g, d0=d0, d1=d1),
                        lambda xp, g, in_shape, d0, d1:
                            xp.permute_dims(g, _swapped(g.ndim, d0, d1)),
                        batch=shifted_dims("d0", "d1"))


@tensor_op
def transpose(input, dim0, dim1):
    n = input.ndim
    return _transpose(input, d0=_wrap_dim(dim0, n), d1=_wrap_dim(dim1, n))


swapaxes = swapdims = transpose


@tensor_op
def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return _alias(input) if input.ndim < 2 else transpose(input, 0, 1)


def _inverse_perm(dims):
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return tuple(inv)


def _permute_batch(prim, args, bdims, dims):
    return prim(to_front(args[0], bdims[0]), dims=(0,) + tuple(d + 1 for d in dims)), 0


_permute = _view_prim("permute", lambda xp, x, dims: xp.permute_dims(x, dims),
                      lambda ctx, g, dims: _permute(g, dims=_inverse_perm(dims)),
                      lambda xp, g, in_shape, dims: xp.permute_dims(g, _inverse_perm(dims)),
                      batch=_permute_batch)


@tensor_op
def permute(input, *dims):
    dims = _shape_args(dims, "permute", "dims")
    n = input.ndim
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not "
                           f"match the length of the desired ordering of dimensions i.e. input.dim() "
                           f"= {n} is not equal to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(d, n) for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _permute(input, dims=dims)


@tensor_op
def movedim(input, source, destination):
    n = input.ndim
    src = (source,) if isinstance(source, builtins.int) else tuple(source)
    dst = (destination,) if isinstance(destination, builtins.int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError("movedim: Invalid source or destination dims")
    src = [_wrap_dim(d, n) for d in src]
    dst = [_wrap_dim(d, n) for d in dst]
    for what, ds in (("source", src), ("destination", dst)):
        if len(set(ds)) != len(ds):
            raise RuntimeError(f"movedim: repeated dim in `{what}` ({ds})")
    if n == 0:
        return _alias(input)
    order = [d for d in range(n) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _permute(input, dims=tuple(order))


moveaxis = movedim


# ----------------------------------------------------------------- (un)squeeze, expand
_unsqueeze = _view_prim("unsqueeze", lambda xp, x, dim: xp.expand_dims(x, dim),
                        lambda ctx, g, dim: _reshape(g, shape=ctx.shapes[0]), _reshaped,
                        batch=shifted_dims("dim"))


@tensor_op
def unsqueeze(input, dim):
    return _unsqueeze(input, dim=_wrap_dim(dim, input.ndim + 1))


_squeeze = _view_prim("squeeze", lambda xp, x, dims: xp.squeeze(x, axis=dims),
                      lambda ctx, g, dims: _reshape(g, shape=ctx.shapes[0]), _reshaped,
                      batch=shifted_dims("dims"))


@tensor_op
def squeeze(input, dim=None):
    shape = input.shape
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        ds = (dim,) if isinstance(dim, builtins.int) else tuple(dim)
        dims = tuple(d for d in (_wrap_dim(d, input.ndim) for d in ds) if input.ndim and shape[d] == 1)
    if not dims:
        return _alias(input)
    return _squeeze(input, dims=dims)


def _expand_batch(prim, args, bdims, shape):
    x = to_front(args[0], bdims[0])
    missing = len(shape) - (x.ndim - 1)
    if missing:
        x = _reshape(x, shape=(x.shape[0],) + (1,) * missing + tuple(x.shape[1:]))
    return prim(x, shape=(x.shape[0],) + tuple(shape)), 0


def _summed_to(xp, g, in_shape, **params):
    """`sum_to` on an array (expand's array-level vjp): the same sum over the same dims."""
    dims = broadcast_dims(g.shape, in_shape)
    if dims:
        g = xp.sum(g, axis=dims, keepdims=True)
    return xp.reshape(g, in_shape) if g.ndim != len(in_shape) else g


_expand = _view_prim("expand", lambda xp, x, shape: broadcast_view(xp, x, shape),
                     lambda ctx, g, shape: _sum_to(g, ctx.shapes[0]),
                     _summed_to, batch=_expand_batch)


@tensor_op
def expand(input, *sizes):
    sizes = _shape_args(sizes, "expand", "size")
    shape = input.shape
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater "
                           f"or equal to the number of dimensions in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    out = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"expand: -1 is not allowed in a leading, non-existing dimension")
            out.append(s)
            continue
        have = shape[i - lead]
        if s == -1:
            s = have
        if have != s and have != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size "
                               f"({have}) at non-singleton dimension {i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(shape)}")
        out.append(s)
    out = tuple(out)
    if out == shape:
        return _alias(input)
    return _expand(input, shape=out)


@tensor_op(others=('other',))
def expand_as(input, other):
    return expand(input, other.shape)


@tensor_op
def broadcast_to(input, shape):
    return expand(input, shape)


def broadcast_shapes(*shapes):
    """The shape all `shapes` broadcast to (torch's RuntimeError when they do not)."""
    shapes = [(s,) if isinstance(s, builtins.int) else tuple(s) for s in shapes]
    out = []
    for i in range(1, builtins.max((len(s) for s in shapes), default=0) + 1):
        size = 1
        for s in shapes:
            d = s[-i] if i <= len(s) else 1
            if d != 1:
                if size != 1 and d != size:
                    raise RuntimeError(f"The size of tensor a ({size}) must match the size of "
                                       f"tensor b ({d}) at non-singleton dimension "
                                       f"{builtins.max(len(s) for s in shapes) - i}")
                size = d
        out.append(size)
    return _t.Size(reversed(out))


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    tensors = tensor_list("broadcast_tensors", tensors)
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


# ----------------------------------------------------------------- copies
# a fresh row-major copy (asarray(copy=True) keeps NumPy's layout): under vmap each example of a
# clone is then laid out as a clone made in a loop, which as_strided reads
# linear: the tangent is a clone too (a Function's jvp may write its tangent in place, as
# mark_dirty asks, which must not reach the tangent of the tensor cloned)
_clone = primitive("clone", lambda xp, x: xp.reshape(x, x.shape, copy=True), save=(),
                   vjp=(lambda ctx, g: g,), linear=True, batch=same_bdim, complex=True)


@tensor_op
def clone(input, *, memory_format=None):
    return _clone(input)


@tensor_op
def contiguous(input, memory_format=None):
    """`input` itself when its memory is in row-major order, else a copy (as torch)."""
    flags = getattr(input._base_array(), "flags", None)
    if flags is None or flags.c_contiguous:
        return input
    return _clone(input)


_detach = primitive("detach", lambda xp, x: backend_of(x).alias(x), differentiable=False,
                    is_view=True, node_name="DetachBackward0", batch=same_bdim)


@tensor_op
def detach(input):
    return _detach(input)


_flip = primitive("flip", lambda xp, x, dims: xp.asarray(xp.flip(x, axis=dims), copy=True),
                  save=(),  # torch copies
                  vjp=(lambda ctx, g, dims: _flip(g, dims=dims),), linear=True,
                  batch=shifted_dims("dims"))


@tensor_op
def flip(input, *dims):
    dims = tuple(_wrap_dim(d, input.ndim) for d in _shape_args(dims, "flip", "dims"))
    if len(set(dims)) != len(dims):
        d = next(d for d in dims if dims.count(d) > 1)
        raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if input.ndim == 0:
        return _clone(input)        # nothing to reverse; still a copy, as torch
    return _flip(input, dims=dims)


@tensor_op
def roll(input, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, builtins.int) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return roll(input.flatten(), shifts, 0).reshape(input.shape)
    dims = (dims,) if isinstance(dims, builtins.int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    dims = tuple(_wrap_dim(d, input.ndim) for d in dims)
    return _roll(input, shifts=shifts, dims=dims)


_roll = primitive("roll", lambda xp, x, shifts, dims: xp.roll(x, shifts, axis=dims), save=(),
                  vjp=(lambda ctx, g, shifts, dims: _roll(g, shifts=_neg_shift(shifts), dims=dims),),
                  linear=True, batch=shifted_dims("dims"))


def _neg_shift(s):
    return tuple(-v for v in s)


# ----------------------------------------------------------------- cat / stack / split
def _cat_impl(xp, *xs, dim):
    return xp.concat(xs, axis=dim)


def _cat_vjp(ctx, g, dim):
    out, start = [], 0
    for shape, need in zip(ctx.shapes, ctx.needs_input_grad):
        n = shape[dim]
        out.append(narrow(g, dim, start, n) if need else None)
        start += n
    return out


def _cat_batch(prim, args, bdims, dim):
    return prim(*all_front(args, bdims), dim=dim + 1), 0


_cat = primitive("cat", _cat_impl, save=(), vjp=_cat_vjp, linear=True, batch=_cat_batch)


def cat(tensors, dim=0):
    tensors = tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("arraygrad.cat(): expected a non-empty list of Tensors")
    for i, x in enumerate(tensors):
        if x.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    from .elementwise import promote
    tensors = [x for x in tensors if not (x.ndim == 1 and x.shape[0] == 0)] or tensors[:1]
    ref = tensors[0]
    d = _wrap_dim(dim, ref.ndim)
    for i, x in enumerate(tensors):
        if x.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and "
                               f"{x.ndim}")
        for j in range(ref.ndim):
            if j != d and x.shape[j] != ref.shape[j]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected "
                                   f"size {ref.shape[j]} but got size {x.shape[j]} for tensor "
                                   f"number {i} in the list.")
    tensors = promote(*tensors, op="cat")
    return _cat(*tensors, dim=d)


concat = concatenate = cat


def stack(tensors, dim=0):
    tensors = tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0].shape
    for i, x in enumerate(tensors):
        if x.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} "
                               f"at entry 0 and {list(x.shape)} at entry {i}")
    d = _wrap_dim(dim, len(shape) + 1)
    return cat([unsqueeze(x, d) for x in tensors], d)


def hstack(tensors):
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    return cat([x if x.ndim > 1 else x.reshape(1, -1) for x in tensors], 0)


@tensor_op
def narrow(input, dim, start, length):
    d = _wrap_dim(dim, input.ndim)
    size = input.shape[d]
    start = start.__index__()
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but "
                         f"got {start})")
    start %= builtins.max(size, 1)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    idx = (slice(None),) * d + (slice(start, start + length),)
    return input[idx]


@tensor_op
def split(tensor, split_size_or_sections, dim=0):
    d = _wrap_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, builtins.int):
        s = split_size_or_sections
        if s < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={s}")
        if s == 0 and n:
            raise RuntimeError("split_size can only be 0 if dimension size is 0, but got dimension "
                               f"size of {n}")
        sizes = [builtins.min(s, n - i) for i in range(0, n, s)] or [0]
    else:
        sizes = list(split_size_or_sections)
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got split_sizes="
                               f"{sizes}")
    out, start = [], 0
    for s in sizes:
        out.append(narrow(tensor, d, start, s))
        start += s
    return tuple(out)


@tensor_op
def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input.shape[_wrap_dim(dim, input.ndim)]
    size = -(-n // chunks)
    return split(input, builtins.max(size, 1), dim)


@tensor_op
def unbind(input, dim=0):
    d = _wrap_dim(dim, input.ndim)
    return tuple(select(input, d, i) for i in range(input.shape[d]))


@tensor_op
def select(input, dim, index):
    d = _wrap_dim(dim, input.ndim)
    if isinstance(index, builtins.int) and not -input.shape[d] <= index < input.shape[d]:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    return input[(slice(None),) * d + (index,)]


@tensor_op
def repeat(input, *sizes):
    sizes = _shape_args(sizes, "repeat", "repeats")
    x = input
    lead = len(sizes) - x.ndim
    if lead < 0:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    x = x.reshape((1,) * lead + tuple(x.shape))
    # repeat = expand over interleaved new dims, then merge
    shape = x.shape
    inter = []
    for r, s in zip(sizes, shape):
        inter += [1, s]
    x = x.reshape(inter)
    target = []
    for r, s in zip(sizes, shape):
        target += [r, s]
    # a copy, as torch's (a reshape of the expanded view could alias the input)
    x = _clone(expand(x, target))
    return x.reshape(tuple(r * s for r, s in zip(sizes, shape)))


@tensor_op
def tile(input, dims):
    dims = (1,) * (input.ndim - len(dims)) + tuple(dims)     # torch pads the repeats with 1s
    return repeat(input, *dims)


@tensor_op
def diagonal(input, offset=0, dim1=0, dim2=1):
    d1, d2 = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _diagonal(input, offset=offset, dim1=d1, dim2=d2)


def _diag_embed_like(g, shape, offset, dim1, dim2):
    return _diag_scatter(zeros_beside(g, shape), g, offset=offset, dim1=dim1, dim2=dim2)


def _to_last_two(xp, x, dim1, dim2):
    """`x` with dims dim1, dim2 moved last (the others keep their order), and the order
    that moves them back."""
    n = x.ndim
    if (dim1, dim2) == (n - 2, n - 1):
        return x, None
    order = [d for d in range(n) if d not in (dim1, dim2)] + [dim1, dim2]
    return xp.permute_dims(x, tuple(order)), tuple(order.index(d) for d in range(n))


def _diag_scatter_impl(xp, z, g, offset, dim1, dim2):
    """z with its `offset` diagonal over (dim1, dim2) replaced by g (whose last dim runs
    along that diagonal): a `where` over the plane, g gathered by each cell's place on it;
    strided libraries (NumPy) write a copy through its diagonal view instead, in a third of the
    time."""
    if hasattr(z, "strides"):
        out = xp.asarray(z, copy=True)
        d = xp.diagonal(out, offset, dim1, dim2)
        if hasattr(d, "setflags"):
            d.setflags(write=True)      # NumPy's diagonal view is read-only
        d[...] = g
        return out
    z, back = _to_last_two(xp, z, dim1, dim2)
    rows, cols, size = z.shape[-2], z.shape[-1], g.shape[-1]
    i = xp.reshape(xp.arange(rows), (rows, 1))
    j = xp.reshape(xp.arange(cols), (1, cols))
    if size:
        along = xp.reshape(xp.minimum(xp.minimum(i, j), size - 1), (-1,))
        values = xp.reshape(xp.take(g, along, axis=-1), g.shape[:-1] + (rows, cols))
        out = xp.where((j - i) == offset, values, z)
    else:
        out = xp.asarray(z, copy=True)
    return out if back is None else xp.permute_dims(out, back)


def _diag_scatter_batch(prim, args, bdims, offset, dim1, dim2):
    return prim(*all_front(args, bdims), offset=offset, dim1=dim1 + 1, dim2=dim2 + 1), 0


_diag_scatter = primitive("diagonal_scatter", _diag_scatter_impl, save=(),
                          vjp=(lambda ctx, g, **p: None,
                               lambda ctx, g, offset, dim1, dim2: _diagonal(g, offset=offset, dim1=dim1, dim2=dim2)),
                          linear=True, batch=_diag_scatter_batch)
def _diagonal_impl(xp, x, offset, dim1, dim2):
    d = xp.linalg.diagonal(_to_last_two(xp, x, dim1, dim2)[0], offset=offset)
    flags = getattr(d, "flags", None)
    if flags is not None and not flags.writeable and x.flags.writeable:
        d.setflags(write=True)  # NumPy's diagonal view is read-only; torch's can be written
    return d


_diagonal = _view_prim("diagonal", _diagonal_impl,
                       lambda ctx, g, offset, dim1, dim2:
                       _diag_embed_like(g, ctx.shapes[0], offset, dim1, dim2),
                       batch=shifted_dims("dim1", "dim2"))


@autocast_op(FP32)
@tensor_op
def trace(input):
    if input.dtype is _dt.bool:
        raise not_implemented("trace", input.dtype)
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return diagonal(input).sum()


@tensor_op
def diag(input, diagonal_=0):
    if input.ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    if input.ndim == 1:
        n = input.shape[0] + builtins.abs(diagonal_)
        return _diag_scatter(zeros_beside(input, (n, n)), input, offset=diagonal_, dim1=0, dim2=1)
    return _clone(diagonal(input, diagonal_))     # torch.diag copies


# ----------------------------------------------------------------- constants beside a tensor
# NOTE [constants in x's library]: a composition or rule that pads or masks `x` needs its
# constants in x's array library (creation functions give NumPy arrays, which other libraries
# refuse to mix with). These are plain tensors: constants at every level, never batched.
def full_beside(x, shape, fill, dtype=None):
    """`fill` in `shape` (and x's dtype unless given) in the array library of `x`."""
    xp = backend_of(x._base_array()).xp
    return _t.make(xp.full(tuple(shape), fill, dtype=array_dtype(xp, dtype or x.dtype)))


def zeros_beside(x, shape, dtype=None):
    return full_beside(x, shape, 0, dtype)


def eye_beside(x, n, m=None, dtype=None):
    """The n x m identity (x's dtype unless given) in the array library of `x`."""
    xp = backend_of(x._base_array()).xp
    return _t.make(xp.eye(n, m, dtype=array_dtype(xp, dtype or x.dtype)))


# ----------------------------------------------------------------- triangles, grids
def _triangle_batch(prim, args, bdims, diagonal):
    return prim(to_front(args[0], bdims[0]), diagonal=diagonal), 0


_tril = primitive("tril", lambda xp, x, diagonal: xp.tril(x, k=diagonal), linear=True, save=(),
                  vjp=(lambda ctx, g, diagonal: _tril(g, diagonal=diagonal),),
                  node_name="TrilBackward0", batch=_triangle_batch)
_triu = primitive("triu", lambda xp, x, diagonal: xp.triu(x, k=diagonal), linear=True, save=(),
                  vjp=(lambda ctx, g, diagonal: _triu(g, diagonal=diagonal),),
                  node_name="TriuBackward0", batch=_triangle_batch)


def _triangle(prim, op, input, diagonal):
    if input.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")
    return prim(input, diagonal=diagonal)


@tensor_op
def tril(input, diagonal=0):
    """The lower triangle (on and below the `diagonal`-th diagonal) of the last two dims."""
    return _triangle(_tril, "tril", input, diagonal)


@tensor_op
def triu(input, diagonal=0):
    """The upper triangle (on and above the `diagonal`-th diagonal) of the last two dims."""
    return _triangle(_triu, "triu", input, diagonal)


def meshgrid(*tensors, indexing="ij"):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    tensor_list("meshgrid", tensors)
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got a tensor of shape {list(t.shape)}")
    same_dtype("meshgrid expects all tensors to have the same dtype", *tensors)
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"arraygrad.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    swap = indexing == "xy" and len(tensors) >= 2
    ts = list(tensors)
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    out = [expand(t.reshape(tuple(-1 if j == i else 1 for j in range(len(ts)))), shape)
           for i, t in enumerate(ts)]
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def _vector(t):
    if t.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")


def cartesian_prod(*tensors):
    """Rows of every combination of one entry from each 1-D tensor (itertools.product order)."""
    tensors = tensor_list("cartesian_prod", tensors)
    for t in tensors:
        _vector(t)
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)


@tensor_op
def combinations(input, r=2, with_replacement=False):
    """Rows of the length-`r` combinations of input's entries (itertools.combinations order;
    with_replacement: combinations_with_replacement). Built as torch does: the grid of all
    r-tuples of positions, kept where the positions increase."""
    _vector(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        from .creation import empty, in_library_of
        return in_library_of(input, empty(0, dtype=input.dtype))
    xp = default_backend().xp
    grids = xp.meshgrid(*[xp.arange(input.shape[0])] * r, indexing="ij")
    keep = xp.ones(grids[0].shape, dtype=bool)
    for a, b in zip(grids, grids[1:]):
        keep &= (a <= b) if with_replacement else (a < b)
    return stack([input[_t.make(g[keep])] for g in grids], 1)


def block_diag(*tensors):
    """The tensors (0-d, 1-d as a row, 2-d) placed along the diagonal of a zero matrix."""
    from .creation import zeros
    tensors = tensor_list("block_diag", tensors)
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.ndim} dimensions")
    dtype = functools.reduce(_dt.promote_types, (t.dtype for t in tensors),
                             tensors[0].dtype) if tensors else _dt.get_default_dtype()
    blocks = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    width = builtins.sum(b.shape[1] for b in blocks)
    if not blocks:
        return zeros(1, 0, dtype=dtype)
    rows, left = [], 0
    for b in blocks:
        n, m = b.shape
        rows.append(cat([zeros_beside(b, (n, left), dtype), b.to(dtype),
                         zeros_beside(b, (n, width - left - m), dtype)], 1))
        left += m
    return cat(rows, 0)


@tensor_op
def ravel(input):
    return reshape(input, -1)


@tensor_op
def sum_to_size(input, *size):
    size = _shape_args(size, "sum_to_size", "size")
    if not broadcasts_to(size, input.shape):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size "
                           f"{{{list(input.shape)}}}.")
    return _sum_to(input, size)


@tensor_op
def diff(input, n=1, dim=-1, prepend=None, append=None):
    d = _wrap_dim(dim, input.ndim)
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        m = x.shape[d]
        if m:       # bools differ by xor, as torch's diff
            a, b = narrow(x, d, 1, m - 1), narrow(x, d, 0, m - 1)
            x = a != b if x.dtype is _dt.bool else a - b
    return x


# ----------------------------------------------------------------- memory layout and strided views
# NOTE [memory layout]
# stride() and storage_offset() read the backend array (its memory block comes from the
# backend's `storage`); inside vmap a tensor answers for one example, the batch dim's entry
# left out, as its shape does. as_strided reads that memory block directly, so a view made
# with it writes through to its base, as torch's.
def strides_and_offset(t):
    """(strides in elements, storage offset) of `t`, as torch reports them."""
    t = _t.lower(t)
    if t._lvl is None:
        a = t._data
        be = backend_of(a)
        # NumPy's strides of an empty array are arbitrary, torch's contiguous; a library
        # without views (no `storage`) holds every array contiguous, on its own
        if not hasattr(be, "storage") or a.size == 0:
            return _contiguous_strides(a.shape), 0
        _, offset = be.storage(a)
        return tuple(s // a.itemsize for s in a.strides), offset
    strides, offset = strides_and_offset(t._inner)
    if t._lvl.batched:
        d = t._aux
        strides = strides[:d] + strides[d + 1:]
    return strides, offset


def _view_dtype(input, dtype):
    """`x.view(dtype)`: x's memory read as `dtype` (the last dim rescaled where the element
    sizes differ), torch's checks first; not differentiable, as torch's."""
    old, new = _dt.short_name(input.dtype), _dt.short_name(dtype)
    if input._lvl is not None:
        raise RuntimeError(f"view(dtype): viewing {old} as {new} inside a transform is not "
                           "supported")
    be = backend_of(input._data)
    if not hasattr(be, "storage"):
        raise NotImplementedError(f"view(dtype): {be.name} arrays share no memory to read as "
                                  f"another dtype; use .to({dtype}) for a converted copy")
    a_size, b_size = input.dtype.itemsize, dtype.itemsize
    if a_size != b_size:
        what = f"to view {old} as {new} (different element sizes)"
        if input.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        strides, offset = strides_and_offset(input)
        if strides[-1] != 1 and input.shape[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
        if b_size > a_size:
            ratio = b_size // a_size
            for got, text in [(input.shape[-1], "self.size(-1)"), (offset, "self.storage_offset()")] + [
                    (st, f"self.stride({i})") for i, st in enumerate(strides[:-1])]:
                if got % ratio:
                    raise RuntimeError(f"{text} must be divisible by {ratio} {what}, but got {got}")
    out = _t.make(input._data.view(dtype.np))
    out._vc = input._vc     # one memory: writes through either bump one version
    return out


def _contiguous_strides(shape):
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= builtins.max(n, 1)
    return tuple(reversed(out))


def _positions(xp, size, stride, offset):
    """The storage position of every element of a (size, stride, offset) view."""
    pos = xp.full(size, offset, dtype=xp.int64)
    for k, (n, s) in enumerate(zip(size, stride)):
        pos = pos + (xp.arange(n, dtype=xp.int64) * s).reshape(
            [n if j == k else 1 for j in range(len(size))])
    return pos


def _reach(size, stride):
    """One past the farthest element of a view from its first (0 when it is empty)."""
    if builtins.any(n == 0 for n in size):
        return 0
    return 1 + builtins.sum((n - 1) * s for n, s in zip(size, stride))


def _strided(xp, flat, size, stride, offset):
    """A view of the memory block `flat` (so that it stays its base: storage_offset() and
    further views see the same block); read-only where elements overlap, so that in-place
    writes into it raise, as torch's do."""
    pos = _positions(xp, size, stride, 0)
    out = xp.ndarray(size, dtype=flat.dtype, buffer=flat, offset=offset * flat.itemsize,
                     strides=[s * flat.itemsize for s in stride])
    if not flat.flags.writeable or pos.size != xp.unique(pos).size:
        out.flags.writeable = False
    return out


def _as_strided_impl(xp, x, size, stride, offset, geometry):
    be = backend_of(x)
    in_stride, in_offset = geometry
    if not hasattr(be, "storage"):      # a library without views: the values, read
        return _read_through(xp, x, size, stride, offset, in_stride, in_offset)
    flat, x_offset = be.storage(x)
    actual = tuple(s // x.itemsize for s in x.strides)
    same = flat is not None and x_offset == in_offset and builtins.all(
        a == b for n, a, b in zip(x.shape, actual, in_stride) if n > 1)
    if same or x.size == 0:
        if flat is None or offset + _reach(size, stride) > flat.size:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{offset}, and itemsize {x.itemsize} requiring a storage size of "
                f"{(offset + _reach(size, stride)) * x.itemsize} are out of bounds for storage of "
                f"size {0 if flat is None else flat.size * x.itemsize}")
        return _strided(xp, flat, size, stride, offset)
    # `x` holds the values of the tensor the view was recorded on, laid out differently (a
    # gradient, a tangent, a copy): read them through the recorded layout
    return _read_through(xp, x, size, stride, offset, in_stride, in_offset)


def _read_through(xp, x, size, stride, offset, in_stride, in_offset):
    """The (size, stride, offset) view of the memory that `x`'s values occupy when laid out
    with (in_stride, in_offset), gathered from them. The positions are index arithmetic,
    done on the host (the default backend)."""
    host = default_backend().xp
    p_in = _positions(host, x.shape, in_stride, in_offset).reshape(-1)
    p_out = _positions(host, size, stride, offset)
    lookup = host.full(builtins.max(int(p_in.max(initial=0)), int(p_out.max(initial=0))) + 1,
                       -1, dtype=host.int64)
    lookup[p_in] = host.arange(p_in.size)
    idx = lookup[p_out]
    if (idx < 0).any():
        raise RuntimeError("as_strided: the view reads memory outside the elements of its input, "
                           "which a tensor not laid out as that input (a gradient or tangent) "
                           "does not hold; make the view from the base tensor instead")
    be = backend_of(x)
    flat = xp.take(xp.reshape(x, (-1,)), adopt(be, idx.reshape(-1)))
    return xp.reshape(flat, tuple(size))


def _as_strided_vjp(ctx, g, size, stride, offset, geometry):
    """torch's AsStridedBackward: the gradient summed into the memory block, read back through
    the input's layout (averaged where the input's own elements overlap)."""
    from .creation import zeros, in_library_of
    from .index import index_add_zeros
    xp = default_backend().xp
    in_size = ctx.shapes[0]
    in_stride, in_offset = geometry
    if g.numel() == 0 or builtins.any(n == 0 for n in in_size):
        return in_library_of(g, zeros(tuple(in_size), dtype=g.dtype))
    p_in = _positions(xp, in_size, in_stride, in_offset)
    p_out = _positions(xp, size, stride, offset)
    lo = builtins.min(int(p_in.min()), int(p_out.min()))
    n = builtins.max(int(p_in.max()), int(p_out.max())) + 1 - lo
    buf = index_add_zeros(g.reshape(-1), (n,), (p_out.reshape(-1) - lo,))
    out = buf[_t.make(p_in - lo)]
    count = xp.bincount((p_in - lo).reshape(-1), minlength=n)[p_in - lo]
    if (count > 1).any():
        out = out / in_library_of(g, _t.make(count.astype(g.dtype.np)))
    return out


def _as_strided_batch(prim, args, bdims, size, stride, offset, geometry):
    """Each example's view is taken at its own place in the shared memory block: example i's
    storage offset is offset + i * (the batch dim's stride), as torch's batching rule does
    (so vmap gives what a loop over the examples, each a view of the batch, gives)."""
    x, d = args[0], bdims[0]
    in_stride, in_offset = geometry
    bs = strides_and_offset(x)[0][d]
    return prim(to_front(x, d), size=(x.shape[d],) + tuple(size),
                       stride=(bs,) + tuple(stride), offset=offset,
                       geometry=((bs,) + tuple(in_stride), in_offset)), 0


_as_strided = primitive(
    "as_strided", _as_strided_impl, vjp=(_as_strided_vjp,), save=(), is_view=True,
    linear=True, batch=_as_strided_batch)


@tensor_op
def as_strided(input, size, stride, storage_offset=None):
    """A view of input's memory with the given sizes, strides and storage offset (in elements;
    the offset defaults to input's own). It shares memory with input: writes go through.

        >>> x = arraygrad.arange(6.)
        >>> x.as_strided((2, 2), (1, 2), 1)
        tensor([[1., 3.],
                [2., 4.]])
    """
    size = _shape_args((size,), "as_strided", "size")
    stride = _shape_args((stride,), "as_strided", "stride")
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if builtins.any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    strides, own = strides_and_offset(input)
    offset = own if storage_offset is None else storage_offset.__index__()
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    base = input._base
    if base is not None and not _within(size, stride, offset, input.shape, strides, own):
        # the view reaches memory of the base outside `input`: made from the base, its
        # gradient reaches those elements too (torch's loses it unless written in place)
        input = base
        strides, own = strides_and_offset(base)
    return _as_strided(input, size=size, stride=stride, offset=offset, geometry=(strides, own))


def _within(size, stride, offset, in_size, in_stride, in_offset):
    """Whether every element of the view (size, stride, offset) is an element of the input."""
    xp = default_backend().xp
    p_out = _positions(xp, size, stride, offset).reshape(-1)
    p_in = _positions(xp, tuple(in_size), in_stride, in_offset).reshape(-1)
    return builtins.bool(xp.isin(p_out, p_in).all())


def _unfold_impl(xp, x, dim, size, step):
    n = (x.shape[dim] - size) // step + 1
    shape = x.shape[:dim] + (n,) + x.shape[dim + 1:] + (size,)
    if not hasattr(backend_of(x), "storage"):   # a library without views: the windows, taken
        windows = xp.reshape(xp.arange(n, dtype=xp.int64), (-1, 1)) * step + \
            xp.arange(size, dtype=xp.int64)
        out = xp.take(x, xp.reshape(windows, (-1,)), axis=dim)
        out = xp.reshape(out, x.shape[:dim] + (n, size) + x.shape[dim + 1:])
        return xp.moveaxis(out, dim + 1, -1)
    st = [s // x.itemsize for s in x.strides]
    strides = st[:dim] + [st[dim] * step] + st[dim + 1:] + [st[dim]]
    flat, offset = backend_of(x).storage(x)
    if flat is None:        # not one dense block: a view relative to x itself
        return xp.lib.stride_tricks.as_strided(x, shape, [s * x.itemsize for s in strides],
                                               writeable=False)
    return _strided(xp, flat, shape, strides, offset)


def _unfold_vjp(ctx, g, dim, size, step):
    """Each window's gradient added back at the positions it was cut from."""
    from .index import index_add_zeros
    xp = default_backend().xp
    n = g.shape[dim]
    windows = xp.arange(n)[:, None] * step + xp.arange(size)[None, :]
    return index_add_zeros(g.movedim(-1, dim + 1), ctx.shapes[0], (slice(None),) * dim + (windows,))


def _unfold_batch(prim, args, bdims, dim, size, step):
    return prim(to_front(args[0], bdims[0]), dim=dim + 1, size=size, step=step), 0


_unfold = primitive("unfold", _unfold_impl, vjp=(_unfold_vjp,), save=(), is_view=True,
                    linear=True, batch=_unfold_batch)


@tensor_op
def unfold(input, dimension, size, step):
    """A view of every length-`size` window of `dimension`, `step` apart, in a new last dim."""
    if input.ndim == 0:
        return unfold(input.reshape(1), 0, size, step).reshape(size)
    d = _wrap_dim(dimension, input.ndim)
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > input.shape[d]:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {input.shape[d]} but "
                           f"size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return _unfold(input, dim=d, size=size, step=step)
