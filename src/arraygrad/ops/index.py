"""Indexing: __getitem__, index_put (__setitem__), gather, index_select, masked_fill.

# NOTE [index params]
Index tensors are not differentiable, so an index travels as a parameter of
the primitive (raw arrays inside), not as an input. Basic indices (ints,
slices, None, Ellipsis) give views, as torch.
"""
import builtins
import math
import warnings

from .. import dtypes as _dt
from .. import _tensor as _t
from ..backends import backend_of, default_backend, numpy_backend
from . import _indexing
from ._checks import tensor_op, same_dtype, short_dtype_name, c_dtype_name, bool_args, not_tensor
from ._rules import all_front, batch_size, same_bdim, to_front
from .registry import primitive
from ..autograd.eager import select_op

Tensor = _t.Tensor
_ndarray = numpy_backend.array_type


def _index_value(i):
    """An index tensor seen below grad and jvp levels: an index has no gradient or tangent."""
    while i._lvl is not None and not i._lvl.batched:
        i = i._inner
    return i


def _raw_index(idx):
    """Turn an index with tensors into one of raw arrays; tell if it is basic."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    out, basic = [], True
    for i in idx:
        if isinstance(i, Tensor):
            i = _index_value(i)
            if i._lvl is not None:
                raise NotImplementedError(
                    "indexing with a tensor that is being transformed (vmap/grad) is not "
                    "supported; index with a tensor created outside the transform")
            if i.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            a = i._data
            scalar = a.ndim == 0 and i.dtype.kind in "iu"
            # a 0-d integer index selects, as an int (torch reads it too: a sync on Dask)
            out.append(builtins.int(a) if scalar else a)
            basic = basic and scalar
        elif isinstance(i, list):
            out.append(default_backend().asarray(i))
            basic = False
        elif isinstance(i, slice) and i.step is not None and i.step <= 0:
            raise ValueError("step must be greater than zero")
        elif isinstance(i, (str, bytes)):
            raise TypeError(f"invalid index of type {type(i).__name__}: only integers, slices, "
                            "ellipsis, None and integer or boolean tensors are valid indices")
        elif i is None or i is Ellipsis or isinstance(i, (builtins.int, slice)) or \
                hasattr(i, "__index__") and getattr(i, "ndim", 0) == 0 and not _is_mask(i):
            out.append(i if not isinstance(i, builtins.bool) else i)
            if isinstance(i, builtins.bool):
                basic = False
        else:
            out.append(i)
            basic = basic and not hasattr(i, "shape")
    return tuple(out), basic


def _is_mask(i):
    """Whether index item `i` is a boolean array (of any library)."""
    return hasattr(i, "dtype") and _dt.of_array(i.dtype) is _dt.bool


def _check_bounds(shape, idx):
    """torch raises IndexError for out-of-range ints; NumPy does too, with another text."""
    d = 0
    for i in idx:
        if i is None:
            continue
        if i is Ellipsis:
            d = len(shape) - builtins.sum(1 for j in idx[idx.index(Ellipsis) + 1:]
                                          if j is not None)
            continue
        if isinstance(i, builtins.int) and not isinstance(i, builtins.bool):
            if d >= len(shape):
                raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
            if not -shape[d] <= i < shape[d]:
                raise IndexError(f"index {i} is out of bounds for dimension {d} with size "
                                 f"{shape[d]}")
        d += i.ndim if _is_mask(i) else 1


def _getitem_vjp(ctx, g, index):
    if _keeps_all(index):
        return g.reshape(ctx.shapes[0])
    return index_add_zeros(g, ctx.shapes[0], index)


def _keeps_all(index):
    """Whether basic `index` views every element (new axes, full slices, Ellipsis): its
    transpose is the cotangent reshaped, as torch's UnsqueezeBackward0 and AliasBackward0
    (no zeros to add into, so a -0.0 stays one)."""
    for i in index:
        if not (i is None or i is Ellipsis or type(i) is slice and i == _ALL):
            return False
    return True


_ALL = slice(None)


def _view_node_name(node):
    """torch names a basic index by its last step: select, slice, unsqueeze or alias."""
    for i in reversed(node.params["index"]):
        if i is None:
            return "UnsqueezeBackward0"
        if isinstance(i, slice):
            if i != slice(None):
                return "SliceBackward0"
        elif i is not Ellipsis:
            return "SelectBackward0"
    return "AliasBackward0"


def _basic_index(xp, x, index):
    if type(x) is not _ndarray:
        index = _indexing.bounded(x.shape, index)
    # a trailing Ellipsis keeps a full integer index a 0-d view, not a NumPy scalar copy
    if builtins.any(i is Ellipsis for i in index):
        return x[index]
    return x[index + (Ellipsis,)]




# NOTE [batched indexing]
# Inside vmap the value has one more dim, so a rule prepends `slice(None)` to
# the index (batch dim first). NumPy then puts the batch dim first too, except
# when advanced indices are not next to each other: their broadcast dims come
# first, and the batch dim after them.
def _index_layout(index, ndim):
    """(where x[index] has the batch dim once `slice(None)` is prepended, rank of x[index])."""
    adv, consumed, added, positions = 0, 0, 0, []
    arrays = builtins.any(hasattr(i, "ndim") and (i.ndim or _is_mask(i)) for i in index)
    for pos, i in enumerate(index):
        if i is None:
            added += 1
        elif i is Ellipsis or isinstance(i, slice):
            continue
        elif isinstance(i, builtins.bool) or _is_mask(i):
            adv = builtins.max(adv, 1)
            consumed += getattr(i, "ndim", 0)
            positions.append(pos)
        elif hasattr(i, "ndim") and i.ndim:
            adv = builtins.max(adv, i.ndim)
            consumed += 1
            positions.append(pos)
        else:
            consumed += 1
            if arrays:
                positions.append(pos)
    rank = ndim - consumed + added + adv
    split = bool(positions) and positions[-1] - positions[0] + 1 != len(positions)
    return (adv if split else 0), rank


def _getitem_batch(prim, args, bdims, index):
    x = to_front(args[0], bdims[0])
    out_bdim, _ = _index_layout(index, x.ndim - 1)
    return prim(x, index=(slice(None),) + index), out_bdim


def _basic_index_array_vjp(xp, g, inputs, outs, needs, shapes, spare, index):
    """`_getitem_vjp` of a basic index on arrays: zeros with g added in the region the index
    views (no position repeats, so the scatter-add is one in-place add: the same 0 + g)."""
    if _keeps_all(index):
        return (xp.reshape(g, shapes[0]),)
    out = xp.zeros(shapes[0], dtype=g.dtype)
    region = _basic_index(xp, out, index)
    xp.add(region, g, out=region)
    return (out,)


_getitem_view = primitive("getitem", _basic_index, save=(), is_view=True,
                          node_name=_view_node_name, vjp=(_getitem_vjp,), linear=True,
                          batch=_getitem_batch, array_vjp=_basic_index_array_vjp)
_getitem_copy = primitive("index", _indexing.getitem, save=(),
                          node_name="IndexBackward0", vjp=(_getitem_vjp,), linear=True,
                          batch=_getitem_batch)


def _getitem(x, idx):
    if x._lvl is None and not x.shape and isinstance(idx, builtins.int):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    if _has_batched_tensor(idx):
        return _getitem_batched_index(x, idx)
    index, basic = _raw_index(idx)
    if basic:
        _check_bounds(x.shape, index)
        return _getitem_view(x, index=index)
    _check_masks(tuple(x.shape), index)
    if builtins.any(type(i) is builtins.int for i in index):
        return _ints_first(x, index)
    try:
        return _getitem_copy(x, index=index)
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None


getitem = select_op(_getitem_view, _getitem)


def _check_masks(shape, index):
    """torch's check that a boolean mask has the shape of the dims it indexes (NumPy lets an
    empty mask through)."""
    used = builtins.sum(0 if i is None or i is Ellipsis or isinstance(i, builtins.bool)
                        else i.ndim if _is_mask(i) else 1 for i in index)
    k = 0
    for i in index:
        if i is Ellipsis:
            k += len(shape) - used
        elif _is_mask(i):
            for j, s in enumerate(i.shape):
                if k + j < len(shape) and s != shape[k + j]:
                    raise IndexError(f"The shape of the mask {list(i.shape)} at index {j} does "
                                     f"not match the shape of the indexed tensor "
                                     f"{list(shape)} at index {k + j}")
            k += i.ndim
        elif i is not None and not isinstance(i, builtins.bool):
            k += 1


def _split_ints_first(index):
    """torch applies integer indices as selects before the advanced (array) ones; NumPy
    counts them as advanced, which places the result dims differently (x[1, :, idx]).
    Returns (the basic index with the integers, to apply first; the rest, to apply after)."""
    first, rest = [], []
    for i in index:
        if type(i) is builtins.int:
            first.append(i)
        elif i is None or isinstance(i, slice):
            first.append(i)
            rest.append(slice(None))
        elif i is Ellipsis:
            first.append(i)
            rest.append(i)
        elif isinstance(i, builtins.bool):
            rest.append(i)
        else:       # an array (or a batched index's slot): its dims stay for `rest`
            first.extend([slice(None)] * (i.ndim if _is_mask(i) else 1))
            rest.append(i)
    return tuple(first), tuple(rest)


def _ints_first(x, index):
    first, rest = _split_ints_first(index)
    return getitem(getitem(x, first), rest)


def _scatter_impl(xp, g, shape, index):
    out = xp.zeros(shape, dtype=g.dtype)
    try:
        return backend_of(out).index_add(out, index, g)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(g.shape)} cannot be "
                           f"broadcast to indexing result of shape "
                           f"{list(_indexing.getitem(xp, out, index).shape)}") from None


def _index_add_zeros_batch(prim, args, bdims, shape, index):
    g_bdim, _ = _index_layout(index, len(shape))
    g = args[0] if bdims[0] == g_bdim else args[0].movedim(bdims[0], g_bdim)
    return prim(g, shape=(g.shape[g_bdim],) + tuple(shape), index=(slice(None),) + index), 0


_index_add_zeros = primitive(
    "index_add_zeros", _scatter_impl, save=(),
    vjp=(lambda ctx, g, shape, index: _getitem_copy(g, index=index),), linear=True,
    batch=_index_add_zeros_batch)


def index_add_zeros(g, shape, index):
    """zeros(shape) with g added at `index` (the transpose of indexing)."""
    return _index_add_zeros(g, shape=tuple(shape), index=index)


def _index_put_impl(xp, x, v, index, accumulate):
    try:
        if accumulate:
            return backend_of(x).index_add(xp.asarray(x, copy=True), index, v)
        return _indexing.setitem(xp, x, index, v)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(v.shape)} cannot be "
                           f"broadcast to indexing result of shape "
                           f"{list(_indexing.getitem(xp, x, index).shape)}") from None


def _index_put_vjp_x(ctx, g, index, accumulate):
    if accumulate:
        return g
    return _index_put(g, _zeros_scalar(g), index=index, accumulate=False)


def _index_put_vjp_v(ctx, g, index, accumulate):
    return _getitem_copy(g, index=index)


def _zeros_scalar(g):
    from .creation import zeros
    return zeros((), dtype=g.dtype)


def _index_put_batch(prim, args, bdims, index, accumulate):
    (x, v), (xd, vd) = args, bdims
    n = batch_size(args, bdims)
    x = to_front(x, xd) if xd is not None else x.expand((n,) + tuple(x.shape))
    v_bdim, rank = _index_layout(index, x.ndim - 1)
    # values broadcast against x[index]: full rank, with a batch dim (size 1 if unbatched)
    v = to_front(v, vd) if vd is not None else v.unsqueeze(0)
    v = v.reshape((v.shape[0],) + (1,) * (rank - v.ndim + 1) + tuple(v.shape[1:]))
    v = v.movedim(0, v_bdim) if v_bdim else v
    return prim(x, v, index=(slice(None),) + index, accumulate=accumulate), 0


_index_put = primitive("index_put", _index_put_impl, save=(),
                       vjp=(_index_put_vjp_x, _index_put_vjp_v), linear=True,
                       batch=_index_put_batch)


def index_put(x, idx, values, accumulate=False):
    if not isinstance(values, Tensor):
        from .creation import tensor
        values = tensor(values, dtype=x.dtype)
    elif values.dtype is not x.dtype:
        values = values.to(x.dtype)
    if _has_batched_tensor(idx):
        spec, tensors = _split_index(idx)
        return _index_put_t(x, values, *tensors, spec=spec, accumulate=accumulate)
    index, basic = _raw_index(idx)
    if not basic and builtins.any(type(i) is builtins.int for i in index):
        # the integers select first, as getitem's (_split_ints_first): `values` go into that
        # selection, which then goes back in place of it (NumPy's order would put them
        # elsewhere: x[1, :, idx] = v)
        first, rest = _split_ints_first(index)
        part = index_put(getitem(x, first), rest, values, accumulate)
        return _index_put(x, part, index=first, accumulate=False)
    return _index_put(x, values, index=index, accumulate=accumulate)


def index_put_op(input, indices, values, accumulate=False):
    """torch.index_put and Tensor.index_put(_): index_put with torch's argument checks (values
    a tensor of input's dtype; setitem and the rules call index_put, which converts)."""
    if not isinstance(values, Tensor):
        raise not_tensor("index_put", "values", 2, values)
    bool_args("index_put", accumulate=accumulate)
    if values.dtype is not input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{short_dtype_name(input.dtype)} for the destination and "
                           f"{short_dtype_name(values.dtype)} for the source.")
    return index_put(input, tuple(indices), values, accumulate)


# ----------------------------------------------------------------- gather / scatter
def _gather_impl(xp, x, dim, index):
    return xp.take_along_axis(x, index, axis=dim)


def _gather_vjp(ctx, g, dim, index):
    return scatter_into(g, _t.make(index), dim, ctx.shapes[0])





def _batched_index(index, n):
    """A raw index param repeated over a batch of `n` in front (a broadcast view)."""
    return backend_of(index).xp.broadcast_to(index[None], (n,) + index.shape)


def _gather_batch(prim, args, bdims, dim, index):
    x = to_front(args[0], bdims[0])
    return prim(x, dim=dim + 1, index=_batched_index(index, x.shape[0])), 0


_gather = primitive("gather", _gather_impl, save=(), vjp=(_gather_vjp,), linear=True,
                    batch=_gather_batch)


def _check_dim_index(op, input, d, index, src=None, name="input"):
    """gather/scatter's index: same rank as the input, within its sizes, values in range."""
    if index.ndim != builtins.max(input.ndim, 1) and not (index.ndim == 0 and input.ndim == 0):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {name} "
                           "tensor")
    for i, (a, b) in enumerate(zip(index.shape, input.shape)):
        if i != d and a > b:
            raise RuntimeError(f"Size does not match at dimension {i} expected index "
                               f"{list(index.shape)} to be no larger than self "
                               f"{list(input.shape)} apart from dimension {d}")
    if src is not None and builtins.max(src.ndim, 1) != builtins.max(index.ndim, 1):
        n = builtins.max(src.ndim, 1)
        if n < index.ndim:      # torch reads src.size(k) for each of index's dims first
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {n})")
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if src is not None and builtins.any(a > b for a, b in zip(index.shape,
                                                              tuple(src.shape) or (1,))):
        raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                           f"{list(input.shape)} apart from dimension {d} and to be no larger "
                           f"size than src {list(src.shape)}")
    _check_range(index, input.shape[d] if input.ndim else 1, d)


def _check_range(index, size, d):
    """torch refuses out-of-range (and negative) indices of gather/scatter/index_add."""
    if index._lvl is not None or index.numel() == 0:
        return
    a = index._data
    xp = backend_of(a).xp
    bad = (a < 0) | (a >= size)
    if builtins.bool(xp.any(bad)):
        raise RuntimeError(f"index {_first(xp, a, bad)} is out of bounds for dimension {d} with "
                           f"size {size}")


def _check_wrapped_range(index, size, d):
    """torch's range check of an op that takes negative indices too (index_fill); an index
    into an empty dim is its storage error (RuntimeError)."""
    if index._lvl is not None or index.numel() == 0:
        return
    a = index._data
    xp = backend_of(a).xp
    bad = (a < -size) | (a >= size)
    if builtins.bool(xp.any(bad)):
        if size == 0:
            raise RuntimeError(f"index_fill_(): index {_first(xp, a, bad)} into dimension {d} "
                               "of size 0")
        raise IndexError(f"index {_first(xp, a, bad)} is out of bounds for dimension {d} with "
                         f"size {size}")


def _first(xp, a, bad):
    """The first value of `a` where `bad` holds, for an error message."""
    return builtins.int(xp.reshape(a, (-1,))[xp.reshape(bad, (-1,))][0])


def _integer_index(op, index):
    if index.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError(f"{op}(): Expected dtype int32 or int64 for index")
    return index if index.dtype is _dt.int64 else index.to(_dt.int64)


@tensor_op(others=('index',))
def gather(input, dim, index):
    if index.dtype is not _dt.int64:
        if index.dtype is not _dt.int32:
            raise RuntimeError("gather(): Expected dtype int32/int64 for index")
        index = index.to(_dt.int64)
    d = _t._wrap_dim(dim, input.ndim)
    index = _index_value(index)
    if index._lvl is not None and _t._batched(index):
        return _gather_batched_index(input, d, index)
    _check_dim_index("gather", input, d, index)
    idx = index._data
    if idx.shape != input.shape:
        # torch gathers from the leading block of input when index is smaller
        sl = tuple(slice(0, s) if i != d else slice(None) for i, s in enumerate(idx.shape))
        input = input[sl]
    return _gather(input, dim=d, index=idx)


def _scatter_add_impl(xp, g, dim, index, shape):
    out = xp.zeros(shape, dtype=g.dtype)
    return backend_of(out).index_add(out, _along(xp, index, dim), g)


def _scatter_add_batch(prim, args, bdims, dim, index, shape):
    g = to_front(args[0], bdims[0])
    n = g.shape[0]
    return prim(g, dim=dim + 1, index=_batched_index(index, n), shape=(n,) + tuple(shape)), 0


_scatter_add_zeros = primitive(
    "scatter_add", _scatter_add_impl, save=(),
    vjp=(lambda ctx, g, dim, index, shape: _gather(g, dim=dim, index=index),), linear=True,
    batch=_scatter_add_batch)


def scatter_into(g, index, dim, shape):
    """zeros(shape) with g added at `index` along `dim` (the transpose of gather)."""
    if isinstance(index, Tensor) and index._lvl is not None and _t._batched(index):
        if tuple(g.shape) != tuple(index.shape):
            g = g[tuple(slice(0, s) for s in index.shape)]
        return _index_put_t(_zeros_of(tuple(shape), g.dtype), g, index,
                            spec=_along_dim_spec(index, dim), accumulate=True)
    idx = _index_value(index)._data if isinstance(index, Tensor) else index
    return _scatter_add_zeros(g, dim=dim, index=idx, shape=tuple(shape))


@tensor_op(others=('index', 'src'))
def scatter_add(input, dim, index, src):
    d = _t._wrap_dim(dim, input.ndim)
    if index.dtype is not _dt.int64:
        raise RuntimeError("scatter(): Expected dtype int64 for index")
    same_dtype("scatter_add(): Expected self.dtype to be equal to src.dtype", input, src)
    if _index_value(index)._lvl is None:
        _check_dim_index("scatter_add", input, d, index, src)
    if tuple(src.shape) != tuple(index.shape):      # only src's part under index is read
        src = src[tuple(slice(0, s) for s in index.shape)]
    return input + scatter_into(src, index, d, input.shape)


@tensor_op(others=('index',))
def index_select(input, dim, index):
    d = _t._wrap_dim(dim, input.ndim)
    index = _integer_index("index_select", index)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.ndim == 0 and input.ndim:
        index = index.reshape(1)        # torch reads a 0-d index as a vector of one
    size = input.shape[d] if input.ndim else 1
    if size == 0 and index.numel():
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    try:
        _check_range(_index_value(index), size, d)
    except RuntimeError:
        # torch's kernel for dim 1 (contiguous input) says so with a RuntimeError of its own
        if d == 1:
            raise RuntimeError(f"index_select(): INDICES element is out of DATA bounds "
                               f"(axis_dim={size})") from None
        raise IndexError("index out of range in self") from None
    return input[(slice(None),) * d + (index,)]


@tensor_op(others=('mask',))
def masked_fill(input, mask, value):
    from .elementwise import where
    if mask.dtype is not _dt.bool:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{c_dtype_name(mask.dtype)}")
    value = value.to(input.dtype) if isinstance(value, Tensor) else _dt.cast_scalar(value, input.dtype)
    return where(mask, value, input)


@tensor_op(others=('mask',))
def masked_select(input, mask):
    from .shape import broadcast_tensors
    if mask.dtype is not _dt.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    x, m = broadcast_tensors(input, mask)
    return x[m]


@tensor_op
def nonzero(input, *, as_tuple=False):
    if input._lvl is not None and _t._batched(input):
        raise RuntimeError("vmap: We do not support batching operators that can output dynamic "
                           "shape. Attempted to vmap over aten::nonzero.")
    a = input._base_array()
    xp = backend_of(a).xp
    # a 0-d tensor is one element: as a 1-d one in the tuple form, at no coordinates otherwise
    nz = [xp.astype(i, xp.int64) for i in xp.nonzero(xp.reshape(a, (1,)) if a.ndim == 0 else a)]
    if as_tuple:
        return tuple(_t.make(i) for i in nz)
    return _t.make(xp.stack(nz, axis=1)[:, :a.ndim])


@tensor_op(others=('indices',))
def take_along_dim(input, indices, dim):
    return gather(input, dim, indices)


@tensor_op(others=('index',))
def take(input, index):
    if index.dtype is not _dt.int64:
        raise RuntimeError("take(): Expected a long tensor for index, but got "
                           f"{short_dtype_name(index.dtype)}")
    _flat_index("take", input, index)
    return input.reshape(-1)[index]


# ----------------------------------------------------------------- index tensors batched by vmap
# NOTE [batched index tensors]
# An index tensor that vmap batches differs per example, so it cannot travel as
# a raw param. getitem/index_put/gather with such an index use `index_t` and
# `index_put_t`, which take those index tensors as (non-differentiable) inputs;
# `spec` is the rest of the index (raw), with _SLOT where each input goes. The
# batching rule prepends an arange over the batch as one more advanced index.
class _Slot:
    def __repr__(self):
        return "<index tensor>"


_SLOT = _Slot()


def _has_batched_tensor(idx):
    items = idx if isinstance(idx, tuple) else (idx,)
    return builtins.any(isinstance(i, Tensor) and i._lvl is not None and _t._batched(i)
                        for i in items)


def _split_index(idx):
    """(spec, tensors): the raw index with _SLOT for each vmap-batched index tensor."""
    items = idx if isinstance(idx, tuple) else (idx,)
    spec, tensors = [], []
    for i in items:
        if isinstance(i, Tensor) and i._lvl is not None and _t._batched(i):
            if i.dtype is _dt.bool:
                raise RuntimeError("vmap: We do not support batching operators that can output "
                                   "dynamic shape (indexing with a batched boolean mask); use "
                                   "torch.where instead")
            if i.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            spec.append(_SLOT)
            tensors.append(i)
        else:
            spec.append(i)
    raw, _ = _raw_index(tuple(spec))
    return raw, tensors


def _fill(spec, arrays):
    it = iter(arrays)
    return tuple(next(it) if i is _SLOT else i for i in spec)


def _getitem_batched_index(x, idx):
    spec, tensors = _split_index(idx)
    if builtins.any(type(i) is builtins.int for i in spec):
        first, rest = _split_ints_first(spec)
        return _index_t(getitem(x, first), *tensors, spec=rest)
    return _index_t(x, *tensors, spec=spec)


def _along_dim_spec(index, d):
    """gather/scatter as advanced indexing: aranges along the other dims, `index` along `d`."""
    xp = default_backend().xp
    n = index.ndim
    return tuple(_SLOT if j == d else xp.arange(s).reshape([s if k == j else 1 for k in range(n)])
                 for j, s in enumerate(index.shape))


def _gather_batched_index(x, d, index):
    return _index_t(x, index, spec=_along_dim_spec(index, d))


def _index_t_impl(xp, x, *idx, spec):
    return _indexing.getitem(xp, x, _fill(spec, idx))


def _index_put_t_impl(xp, x, v, *idx, spec, accumulate):
    return _index_put_impl(xp, x, v, _fill(spec, idx), accumulate)


def _saved_from(ctx, start):
    """The saved index tensors of a rule's ctx (inputs `start` on)."""
    return [ctx.inputs[k] for k in range(start, len(ctx.shapes))]


def _zeros_of(shape, dtype):
    from .creation import zeros
    return zeros(shape, dtype=dtype)


def _adv_layout(spec, ndim, slot_ndims):
    """x[spec] by NumPy's rules, x with `ndim` dims: (rank of the advanced block, result dims
    from basic indices before it, whether that block stays in place, result rank)."""
    slots = iter(slot_ndims)
    consumed = builtins.sum(0 if i is None or i is Ellipsis or isinstance(i, builtins.bool)
                            else i.ndim if _is_mask(i) else 1
                            for i in spec)
    adv, before, positions, rank, pos = 0, 0, [], 0, 0
    for i in spec:
        if i is None or isinstance(i, slice) or i is Ellipsis:
            n = ndim - consumed if i is Ellipsis else 1
            rank += n
            if not positions:
                before += n
        else:
            if i is _SLOT:
                adv = builtins.max(adv, next(slots))
            elif _is_mask(i) or isinstance(i, builtins.bool):
                adv = builtins.max(adv, 1)
            elif hasattr(i, "ndim"):
                adv = builtins.max(adv, i.ndim)
            positions.append(pos)
        pos += 1
    if not builtins.any(i is Ellipsis for i in spec):
        rank += ndim - consumed     # dims after the last index are kept
    in_place = positions[-1] - positions[0] + 1 == len(positions)
    return adv, before, in_place, rank + adv


def _physical_index(spec, tensors, bdims, n, adv):
    """The index with the batch dim first: an arange over the batch, then the index tensors with
    their batch dims first (size 1 when unbatched), all of rank adv + 1."""
    moved = []
    for t, d in zip(tensors, bdims):
        t = to_front(t, d) if d is not None else t.unsqueeze(0)
        missing = adv - (t.ndim - 1)
        if missing:
            t = t.reshape((t.shape[0],) + (1,) * missing + tuple(t.shape[1:]))
        moved.append(t)
    ar = default_backend().xp.arange(n).reshape((n,) + (1,) * adv)
    return (ar,) + spec, moved


def _block_perm(rank, adv, before, to_logical):
    """Permutation between (B, adv, before, after) and (B, before, adv, after)."""
    if to_logical:
        order = list(range(1 + adv, 1 + adv + before)) + list(range(1, 1 + adv))
    else:
        order = list(range(1 + before, 1 + before + adv)) + list(range(1, 1 + before))
    return (0,) + tuple(order) + tuple(range(1 + adv + before, rank + 1))


def _index_t_batch(prim, args, bdims, spec):
    (x, *tensors), (xd, *tds) = args, bdims
    n = batch_size(args, bdims)
    x = to_front(x, xd) if xd is not None else x.expand((n,) + tuple(x.shape))
    slot_ndims = [t.ndim - (d is not None) for t, d in zip(tensors, tds)]
    adv, before, in_place, rank = _adv_layout(spec, x.ndim - 1, slot_ndims)
    pspec, moved = _physical_index(spec, tensors, tds, n, adv)
    out = prim(x, *moved, spec=pspec)
    # NumPy puts the (batch + advanced) block first; move it back where x[spec] has it
    if in_place and before:
        out = out.permute(_block_perm(rank, adv, before, True))
    return out, 0


def _index_put_t_batch(prim, args, bdims, spec, accumulate):
    (x, v, *tensors), (xd, vd, *tds) = args, bdims
    n = batch_size(args, bdims)
    x = to_front(x, xd) if xd is not None else x.expand((n,) + tuple(x.shape))
    slot_ndims = [t.ndim - (d is not None) for t, d in zip(tensors, tds)]
    adv, before, in_place, rank = _adv_layout(spec, x.ndim - 1, slot_ndims)
    pspec, moved = _physical_index(spec, tensors, tds, n, adv)
    v = to_front(v, vd) if vd is not None else v.unsqueeze(0)
    v = v.reshape((v.shape[0],) + (1,) * (rank - v.ndim + 1) + tuple(v.shape[1:]))
    if in_place and before:
        v = v.permute(_block_perm(rank, adv, before, False))
    return prim(x, v, *moved, spec=pspec, accumulate=accumulate), 0


_index_t = primitive(
    "index_tensors", _index_t_impl, node_name="IndexBackward0", complex=True,
    vjp=lambda ctx, g, spec: [_index_put_t(_zeros_of(ctx.shapes[0], g.dtype), g,
                                           *_saved_from(ctx, 1), spec=spec, accumulate=True)]
    + [None] * (len(ctx.shapes) - 1),
    jvp=lambda ctx, t, *_, spec: _index_t(t, *_saved_from(ctx, 1), spec=spec),
    batch=_index_t_batch)
_index_put_t = primitive(
    "index_put_tensors", _index_put_t_impl, save=None, complex=True,
    node_name="IndexPutBackward0",
    vjp=lambda ctx, g, spec, accumulate: [
        g if accumulate else _index_put_t(g, _zeros_scalar(g), *_saved_from(ctx, 2), spec=spec,
                                          accumulate=False),
        _index_t(g, *_saved_from(ctx, 2), spec=spec)] + [None] * (len(ctx.shapes) - 2),
    jvp=lambda ctx, tx, tv, *_, spec, accumulate: _index_put_t(
        tx, tv, *_saved_from(ctx, 2), spec=spec, accumulate=accumulate),
    batch=_index_put_t_batch)


# ----------------------------------------------------------------- scatter, index_add, index_fill
def _dim_index(dim, index):
    """A raw index selecting `index` (1-D) along `dim`."""
    if index.ndim > 1:
        raise IndexError("index_add_(): Index is supposed to be a vector")
    return (slice(None),) * dim + (index._data,)


@tensor_op(others=("index",))
def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """input with src (or value) written at `index` along `dim` (unique indices for src)."""
    from .elementwise import where
    from .creation import ones_like
    if src is None:
        src = value
    if reduce is not None:
        return _scatter_with_reduce(input, dim, index, src, reduce)
    d = _t._wrap_dim(dim, input.ndim)
    if index.dtype is not _dt.int64:
        raise RuntimeError("scatter(): Expected dtype int64 for index")
    if _index_value(index)._lvl is None:
        _check_dim_index("scatter", input, d, index, src if isinstance(src, Tensor) else None)
    hit = scatter_into(ones_like(index, dtype=input.dtype), index, d, input.shape) != 0
    if not isinstance(src, Tensor):
        return where(hit, _dt.cast_scalar(src, input.dtype), input)
    same_dtype("scatter(): Expected self.dtype to be equal to src.dtype", input, src)
    src = src[tuple(slice(0, s) for s in index.shape)].to(input.dtype)
    src = where(_last_writes(input, tuple(input.shape), d, index), src, 0)
    return where(hit, scatter_into(src, index, d, input.shape), input)


def _last_writes(like, shape, dim, index):
    """Where `index` (into a tensor of `shape`, along `dim`) holds the last write to its
    target: of several values written to one place the last in index order stays, as torch's
    CPU kernels leave it (the others get no gradient: they do not reach the result)."""
    from .creation import arange, full, in_library_of
    order = in_library_of(index, arange(index.numel())).reshape(index.shape)
    last = scatter_reduce(in_library_of(like, full(shape, -1, dtype=_dt.int64)), dim, index,
                          order, "amax")
    return gather(last, dim, index) == order


def _scatter_with_reduce(input, dim, index, src, reduce):
    """scatter(reduce='add' | 'multiply'): scatter_reduce's sum or prod, input included."""
    from .creation import full_like
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if isinstance(src, Tensor):
        warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and "
                      "will be removed in a future PyTorch release. Use torch.scatter_reduce "
                      "instead for more reduction options.", UserWarning, stacklevel=3)
    else:
        src = full_like(index, src, dtype=input.dtype)
    return scatter_reduce(input, dim, index, src, "sum" if reduce == "add" else "prod")


@tensor_op(others=('index', 'source'))
def index_add(input, dim, index, source, *, alpha=1):
    d = _t._wrap_dim(dim, input.ndim)
    index = _integer_index("index_add_", index)
    _check_range(_index_value(index), input.shape[d] if input.ndim else 1, d)
    same_dtype("index_add_(): self ({}) and source ({}) must have the same scalar type", input,
               source)
    if source.ndim != input.ndim or builtins.any(
            s != i for k, (s, i) in enumerate(zip(source.shape, input.shape)) if k != d):
        raise RuntimeError("index_add_(): source tensor shape must match self tensor shape, "
                           f"excluding the specified dimension. Got self.shape = "
                           f"{list(input.shape)} source.shape = {list(source.shape)}")
    count = index.numel()
    if index.ndim <= 1 and count != (source.shape[d] if source.ndim else 1):
        raise RuntimeError(f"index_add_(): Number of indices ({count}) should be equal to "
                           f"source.size(dim): ({source.shape[d] if source.ndim else 1}), "
                           f"for dim: {d}")
    if alpha != 1:
        source = source * alpha
    return input + index_add_zeros(source.to(input.dtype), input.shape,
                                   _dim_index(d, index))


@tensor_op(others=('index',))
def index_fill(input, dim, index, value):
    from .elementwise import where
    from .creation import ones, in_library_of
    d = _t._wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if index.dtype is not _dt.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    if input.ndim == 0:
        return index_fill(input.reshape(1), 0, index, value).reshape(())
    _check_wrapped_range(_index_value(index), input.shape[d], d)
    picked = input.shape[:d] + tuple(index.shape) + input.shape[d + 1:]    # input[..., index, ...]
    hit = index_add_zeros(in_library_of(input, ones(picked, dtype=input.dtype)), input.shape,
                          _dim_index(d, index))
    if not isinstance(value, Tensor):
        value = _dt.cast_scalar(value, input.dtype)
    return where(hit != 0, value, input)


@tensor_op(others=('index', 'source'))
def index_copy(input, dim, index, source):
    """input with the slices of `source` copied in at `index` along `dim`."""
    from .elementwise import where
    from .creation import ones_like
    d = _t._wrap_dim(dim, input.ndim)
    _check_index_copy(input, d, index, source)
    index = _integer_index("index_copy_", index)
    _check_range(_index_value(index), input.shape[d] if input.ndim else 1, d)
    at = _dim_index(d, index)
    hit = index_add_zeros(ones_like(source, dtype=input.dtype), input.shape, at) != 0
    if index.ndim and input.ndim:
        keep = _last_writes(input, (input.shape[d],), 0, index)
        source = where(keep.reshape([-1 if k == d else 1 for k in range(source.ndim)]), source, 0)
    return where(hit, index_add_zeros(source.to(input.dtype), input.shape, at), input)


def _check_index_copy(input, d, index, source):
    """torch's checks of index_copy, in its order, before any array work."""
    op = "index_copy_()"
    if index.ndim > 1:
        raise IndexError(f"{op}: Index should have dimension 1 or 0 (got {index.ndim})")
    n = index.numel()
    if source.ndim == 0 and n != 1:
        raise IndexError(f"{op}: When source is scalar, index should have one element (got {n})")
    if source.ndim != input.ndim and source.ndim and input.ndim:
        raise IndexError(f"{op}: When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({input.ndim})")
    if index.dtype is not _dt.int64:
        raise RuntimeError(f"{op}: Expected a long tensor for index, but got "
                           f"{short_dtype_name(index.dtype)}")
    same_dtype(op + ": self and source expected to have the same dtype, but got (self) {} and "
               "(source) {}", input, source)
    dest = [s for k, s in enumerate(input.shape) if k != d]
    src = [s for k, s in enumerate(source.shape) if k != d]
    if dest != src:
        raise RuntimeError(f"{op}: Source/destination tensor must have same slice shapes. "
                           f"Destination slice shape: {', '.join(map(str, dest))} at dimension "
                           f"{d} and source slice shape: {', '.join(map(str, src))} at dimension 0.")
    if source.ndim and n != source.shape[d]:
        raise IndexError(f"{op}: Number of indices ({n}) should be equal to source.size(dim) "
                         f"({source.shape[d]})")


# ----------------------------------------------------------------- scatter_reduce, index_reduce
# NOTE [scatter_reduce]
# One primitive reduces `src` into `input` along `dim` at `index` (a raw param of src's shape):
# sum, prod, mean, amax or amin, with or without input's own values (include_self).
# index_reduce is the same computation with its 1-D index spread over source's shape. The
# gradients are torch's (scatter_reduce_backward): ties of amax/amin share the gradient
# evenly; with include_self=False an excluded input value never takes a share (torch counts
# it when it equals the result and so loses part of src's gradient). The jvp is the vjp's
# per-position weights (each output position depends only on its own group) times the tangents.
_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _along(xp, index, dim):
    """The advanced index that puts src[i...] at out[..., index[i...], ...] (index at `dim`):
    aranges over index's other dims, shaped to broadcast against it."""
    n = index.ndim
    return tuple(index if j == dim else
                 xp.reshape(xp.arange(s, dtype=xp.int64), tuple(s if k == j else 1
                                                                for k in range(n)))
                 for j, s in enumerate(index.shape))


def _reduce_identity(xp, reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    d = _dt.of_array(dtype)
    if d is _dt.bool:
        return reduce == "amin"
    if not d.is_floating_point:
        info = xp.iinfo(dtype)
        return info.min if reduce == "amax" else info.max
    return -math.inf if reduce == "amax" else math.inf


def _scatter_reduce_impl(xp, x, src, index, dim, reduce, include_self):
    be = backend_of(x)
    where = _along(xp, index, dim)
    if include_self:
        out = xp.asarray(x, copy=True)
    else:
        out = _indexing.setitem(xp, x, where, _reduce_identity(xp, reduce, x.dtype))
    out = be.index_reduce(out, where, src, "sum" if reduce == "mean" else reduce)
    if reduce != "mean":
        return out
    count = xp.full(x.shape, 1 if include_self else 0, dtype=xp.int64)
    count = be.index_add(count, where, xp.ones(index.shape, dtype=xp.int64))
    count = xp.maximum(count, 1)
    if not _dt.of_array(x.dtype).is_floating_point:
        return xp.astype(out // count, x.dtype)     # torch floors an integer mean
    return out / xp.astype(count, x.dtype)


def _reduce_helpers(g, dim, index, shape):
    """gather and scatter-add along `dim` at the index tensor (batched by vmap or not), and how
    many src values land on each position."""
    from .creation import ones_like

    def along(t):
        return gather(t, dim, index)

    def scatter(t):
        return scatter_into(t, index, dim, tuple(shape))
    return along, scatter, scatter(ones_like(index, dtype=g.dtype))


def _scatter_reduce_vjp(ctx, g, dim, reduce, include_self):
    from .elementwise import where
    x, src, index = ctx.inputs[0], ctx.inputs[1], ctx.inputs[2]
    gather, scatter, count = _reduce_helpers(g, dim, index, ctx.shapes[0])
    hit = count != 0                            # positions some src value reaches
    params = dict(dim=dim, reduce=reduce, include_self=include_self)
    if reduce == "sum":
        gx, gs = g, gather(g)
    elif reduce == "mean":
        g = g / (count + (1 if include_self else 0)).clamp_min(1)
        gx, gs = g, gather(g)
    elif reduce == "prod":
        r = ctx.out
        x1 = where(x == 0, 1.0, x)
        gx = g * _scatter_reduce(x1, src, index, **params) / x1
        zero = src == 0
        zeros = gather(scatter(zero.to(g.dtype)))
        single = zero & (zeros == 1)
        r1 = _scatter_reduce(x, where(single, 1.0, src), index, **params)
        gs = where(single, gather(g * r1), gather(g * r) / where(zero, 1.0, src))
        if _t._batched(zeros) or builtins.bool((zeros > 1).any()):
            # two zeros in one product: this gradient is right, its derivative is not
            gs = _once_differentiable(gs, msg="scatter_reduce(): Double backward is "
                                      "unsupported for src when >1 zeros in src are scattered "
                                      "to the same position in self")
    else:
        r = ctx.out
        x_is = (x == r).to(g.dtype)
        if not include_self:
            x_is = where(hit, 0.0, x_is)
        s_is = (src == gather(r)).to(g.dtype)
        g = g / (x_is + scatter(s_is))
        gx, gs = x_is * g, s_is * gather(g)
    if not include_self:
        gx = where(hit, 0.0, gx)
    return gx, gs, None


def _raise(msg):
    raise RuntimeError(msg)


# an identity whose derivative raises (torch's DelayedError)
_once_differentiable = primitive(
    "once_differentiable", lambda xp, x, msg: x.copy(), save=(), node_name="DelayedError",
    vjp=lambda ctx, g, msg: _raise(msg), jvp=lambda ctx, t, msg: _raise(msg), complex=True,
    batch=same_bdim)


def _scatter_reduce_jvp(ctx, tx, ts, ti, dim, reduce, include_self):
    from .creation import ones_like
    wx, ws, _ = _scatter_reduce_vjp(ctx, ones_like(ctx.out), dim, reduce, include_self)
    _, scatter, _ = _reduce_helpers(tx, dim, ctx.inputs[2], ctx.shapes[0])
    return wx * tx + scatter(ws * ts)


def _scatter_reduce_batch(prim, args, bdims, dim, reduce, include_self):
    # the index is an input too: vmap may batch it (one index per example)
    x, src, index = all_front(args, bdims)
    return prim(x, src, index, dim=dim + 1, reduce=reduce, include_self=include_self), 0


def _reduce_prim(name, **kw):
    return primitive(name, _scatter_reduce_impl, vjp=_scatter_reduce_vjp,
                     jvp=_scatter_reduce_jvp, batch=_scatter_reduce_batch, save_output=True,
                     nondiff_inputs=(2,), arg_names=("self", "src", "index"), **kw)


# torch's scatter_reduce tangent has no history from the primals (its weights are masks)
_scatter_reduce = _reduce_prim("scatter_reduce", jvp_reads_primals=False)
_index_reduce = _reduce_prim("index_reduce")    # the same computation under torch's node name


def _reduce_into(prim, input, src, d, index, reduce, include_self):
    """`prim` on input, the leading index-shaped block of src (as torch reads it), index."""
    if input.ndim == 0:
        return _reduce_into(prim, input.reshape(1), src.reshape(-1), 0, index.reshape(-1),
                            reduce, include_self).reshape(())
    if tuple(src.shape) != tuple(index.shape):
        src = src[tuple(slice(0, s) for s in index.shape)]
    return prim(input, src, _index_value(index).to(_dt.int64), dim=d, reduce=reduce,
                include_self=include_self)


@tensor_op(others=("index", "src"))
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """input with src reduced into it at `index` along `dim`: reduce is 'sum', 'prod', 'mean',
    'amax' or 'amin'; include_self=False leaves input's values out where src lands.

        >>> x = arraygrad.zeros(3)
        >>> x.scatter_reduce(0, arraygrad.tensor([0, 0, 2]), arraygrad.tensor([1., 2., 5.]), "amax")
        tensor([2., 0., 5.])
    """
    bool_args("scatter_reduce", include_self=include_self)
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)     # torch's older names
    if reduce not in _REDUCES:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if index.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = _t._wrap_dim(dim, input.ndim)
    _check_dim_index("scatter_reduce", input, d, _index_value(index), src, "self")
    return _reduce_into(_scatter_reduce, input, src, d, index, reduce, include_self)


@tensor_op(others=("index", "source"))
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """input with source's slices along `dim` reduced into the slices `index` names: reduce is
    'prod', 'mean', 'amax' or 'amin'."""
    bool_args("index_reduce", include_self=include_self)
    if reduce not in _REDUCES[1:]:
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if index.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError("index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{short_dtype_name(index.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_reduce_(): self ({short_dtype_name(input.dtype)}) and source "
                           f"({short_dtype_name(source.dtype)}) must have the same scalar type")
    if index.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {short_dtype_name(index.dtype)} and size: "
                         f"{list(index.shape)}")
    d = _t._wrap_dim(dim, builtins.max(input.ndim, 1))
    n = index.numel()
    if (source.shape[d] if source.ndim else 1) != n:
        raise RuntimeError(f"index_reduce_(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({source.shape[d] if source.ndim else 1}), for "
                           f"dim: {dim}")
    if input.ndim != source.ndim or builtins.any(
            a != b for k, (a, b) in enumerate(zip(input.shape, source.shape)) if k != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(input.shape)} "
                           f"source.shape = {list(source.shape)}")
    try:
        _check_range(_index_value(index), input.shape[d] if input.ndim else 1, d)
    except RuntimeError:
        raise IndexError("index out of range in self") from None
    if input.ndim:      # the index of every element of source: index[i] along d
        index = index.reshape([-1 if k == d else 1 for k in range(input.ndim)]).expand(
            tuple(source.shape))
    return _reduce_into(_index_reduce, input, source, d, index, reduce, include_self)


# ----------------------------------------------------------------- masked_scatter, put
@tensor_op(others=("mask", "source"))
def masked_scatter(input, mask, source):
    """input with source's leading entries, in order, written where `mask` is True.

    A composition: the k-th True position takes source.flatten()[k], k counted by a cumsum of
    the mask; so gradients, jvp and vmap (a batched mask included) come from take and where."""
    from .elementwise import where
    from .shape import broadcast_tensors
    if mask.dtype is not _dt.bool:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{short_dtype_name(mask.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but got"
                           f"{short_dtype_name(input.dtype)} and {short_dtype_name(source.dtype)}")
    x, m = broadcast_tensors(input, mask)
    if not _t._batched(m) and builtins.int(m.sum()) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if source.numel() == 0:
        return where(m, x, x)
    flat = m.reshape(-1)
    k = (flat.cumsum(0) - 1).clamp_min(0)
    return where(m, source.reshape(-1)[k].reshape(tuple(m.shape)), x)


def _flat_index(op, input, index):
    """put/take's index, checked against input's number of elements (negatives count back)."""
    n, raw = input.numel(), _index_value(index)
    if raw._lvl is None and raw.numel():
        a = raw._data
        xp = backend_of(a).xp
        bad = (a < -n) | (a >= n)
        if builtins.bool(xp.any(bad)):
            raise IndexError(f"out of range: tried to access index {_first(xp, a, bad)} on a "
                             f"tensor of {n} elements.")
    return index.reshape(-1)


@tensor_op(others=("index", "source"))
def put(input, index, source, accumulate=False):
    """input with source written (or added, accumulate=True) at the flat positions `index`."""
    bool_args("put", accumulate=accumulate)
    if index.dtype is not _dt.int64:
        raise RuntimeError("put_(): Expected a long tensor for index, but got "
                           f"{short_dtype_name(index.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {short_dtype_name(input.dtype)} and source.dtype = "
                           f"{short_dtype_name(source.dtype)}")
    if source.numel() != index.numel():
        raise IndexError("put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, index.numel() = "
                         f"{index.numel()}")
    flat = _flat_index("put_", input, index)
    return index_put(input.reshape(-1), (flat,), source.reshape(-1),
                     accumulate).reshape(tuple(input.shape))
