"""Array manipulation torch took from NumPy: atleast_nd, the stacks and splits, flips and
rot90, diag_embed/diagflat, the *_scatter functions, repeat_interleave, vander, argwhere,
unravel_index, msort and the `*_copy` forms of the views.

All are compositions of primitives (views, cat, index_put, where, gather), so their
gradients, jvps and batching rules are those primitives' and need no rules of their own.
"""
import builtins

from .. import _tensor as _t
from .. import dtypes as _dt
from .._tensor import Tensor
from ..autograd import inplace
from ._checks import bool_args, tensor_op, tensor_list
from .creation import arange, zeros, in_library_of
from .elementwise import where, convert
from .index import index_put, index_select, nonzero, gather
from .reduce import cumsum, cumprod, sort
from .shape import (cat, hstack, vstack, flip, transpose, narrow, split, chunk, select,
                    diagonal, diag, clone, expand, permute, squeeze, unsqueeze, t, view,
                    unbind, unfold, as_strided, detach, flatten, zeros_beside, full_beside,
                    _diag_scatter)
from .complex import view_as_real, view_as_complex, conj
from .stats import searchsorted

_wrap_dim = _t._wrap_dim


def _int_dim(op, dim):
    if not isinstance(dim, builtins.int) or isinstance(dim, builtins.bool):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
    return dim


# ----------------------------------------------------------------- at least n dims, stacks
def _atleast(n, shapes):
    def fn(*tensors):
        many = len(tensors) != 1 or isinstance(tensors[0], (list, tuple))
        xs = tensors[0] if len(tensors) == 1 and many else tensors
        out = []
        for x in xs:
            if not isinstance(x, Tensor):
                raise TypeError(f"atleast_{n}d(): expected Tensor as element {len(out)} in "
                                f"argument 0, but got {type(x).__name__}")
            out.append(x.reshape(shapes(tuple(x.shape))) if x.ndim < n else x)
        return tuple(out) if many else out[0]
    fn.__name__ = f"atleast_{n}d"
    fn.__doc__ = f"Each tensor viewed with at least {n} dims (a tuple for several)."
    return fn


atleast_1d = _atleast(1, lambda s: (1,))
atleast_2d = _atleast(2, lambda s: (1,) + (s or (1,)))
atleast_3d = _atleast(3, lambda s: (1, 1, 1) if not s else (1,) + s + (1,) if len(s) == 1
                      else s + (1,))


def column_stack(tensors):
    """1-D (and 0-d) tensors become columns; the rest are stacked along dim 1."""
    tensor_list("column_stack", tensors)
    return hstack([x.reshape(-1, 1) if x.ndim <= 1 else x for x in tensors])


def dstack(tensors):
    tensor_list("dstack", tensors)
    return cat(atleast_3d(list(tensors)), 2)


row_stack = vstack


# ----------------------------------------------------------------- splits
def _sections(op, indices_or_sections):
    """An int, a sequence of ints, or a 0-d/1-d integer tensor (torch's overloads)."""
    v = indices_or_sections
    if isinstance(v, Tensor):
        if v.dtype.is_floating_point or v.dtype.is_complex or v.dtype is _dt.bool or v.ndim > 1:
            raise RuntimeError(f"{op} expected tensor_indices_or_sections to have a 0-dim or "
                               f"1-dim integer dtype, but got {v.dtype} with {v.ndim} dims")
        return int(v.item()) if v.ndim == 0 else [int(i) for i in v.tolist()]
    return v if isinstance(v, builtins.int) else [builtins.int(i) for i in v]


@tensor_op
def tensor_split(input, indices_or_sections, dim=0):
    """Views: `n` nearly equal pieces (the first n % size one longer), or pieces between
    the given indices (clamped to the dim, as slicing)."""
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = _wrap_dim(_int_dim("tensor_split", dim), input.ndim)
    size = input.shape[d]
    v = _sections("tensor_split", indices_or_sections)
    if isinstance(v, builtins.int):
        if v <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {v}")
        small, extra = divmod(size, v)
        lengths = [small + (i < extra) for i in range(v)]
        starts = [builtins.sum(lengths[:i]) for i in range(v)]
    else:
        bounds = [builtins.min(builtins.max(i + size if i < 0 else i, 0), size) for i in v]
        edges = [0] + bounds + [size]
        starts, lengths = [], []
        for a, b in zip(edges[:-1], edges[1:]):
            starts.append(a)
            lengths.append(builtins.max(b - a, 0))
    return tuple(narrow(input, d, s, n) for s, n in zip(starts, lengths))


def _split_dir(op, dim, min_dims):
    def fn(input, indices_or_sections):
        if not isinstance(input, Tensor):
            raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        if input.ndim < min_dims:
            raise RuntimeError(f"torch.{op} requires a tensor with at least {min_dims} dimension"
                               f"{'s' if min_dims > 1 else ''}, but got a tensor with "
                               f"{input.ndim} dimensions!")
        d = dim if input.ndim > 1 or op != "hsplit" else 0
        v = _sections(op, indices_or_sections)
        if isinstance(v, builtins.int) and v and input.shape[d] % v:
            raise RuntimeError(f"torch.{op} attempted to split along dimension {d}, but the "
                               f"size of the dimension {input.shape[d]} is not divisible by the "
                               f"split_size {v}!")
        return tensor_split(input, v, d)
    fn.__name__ = op
    return fn


hsplit = _split_dir("hsplit", 1, 1)
vsplit = _split_dir("vsplit", 0, 2)
dsplit = _split_dir("dsplit", 2, 3)


@tensor_op
def split_with_sizes(input, split_sizes, dim=0):
    return split(input, list(split_sizes), dim)


unsafe_split, unsafe_chunk = split, chunk     # torch's skip version checks; values are the same


@tensor_op
def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return split(input, list(split_sizes), dim)


# ----------------------------------------------------------------- flips and rotations
@tensor_op
def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


@tensor_op
def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


@tensor_op
def rot90(input, k=1, dims=(0, 1)):
    """Rotation by k * 90 degrees in the plane `dims`, from the first towards the second."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = _wrap_dim(dims[0], input.ndim), _wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:
        return transpose(flip(input, d1), d0, d1)
    if k == 2:
        return flip(input, d0, d1)
    if k == 3:
        return transpose(flip(input, d0), d0, d1)
    return clone(input)


# ----------------------------------------------------------------- diagonals
@tensor_op
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """The last dim of `input` on the `offset` diagonal of the planes (dim1, dim2) of a new
    tensor, zeros elsewhere."""
    nd = input.ndim + 1
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] + builtins.abs(offset) if input.ndim else 1 + builtins.abs(offset)
    x = input if input.ndim else input.reshape(1)
    shape = list(x.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    return _diag_scatter(zeros_beside(x, shape), x, offset=offset, dim1=d1, dim2=d2)


@tensor_op
def diagflat(input, offset=0):
    return diag(input.reshape(-1), offset)


def _check_src(op, src, expected):
    if tuple(src.shape) != tuple(expected):
        raise RuntimeError(f"{op}: expected src to have a size equal to the slice of self. src "
                           f"size = {list(src.shape)}, slice size = {list(expected)}")


@tensor_op(others=("src",))
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """`input` with its `offset` diagonal over (dim1, dim2) replaced by `src`."""
    d1, d2 = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    _check_src("diagonal_scatter", src, diagonal(input, offset, d1, d2).shape)
    src = convert(src, input.dtype)
    on = _diag_scatter(full_beside(input, input.shape, False, _dt.bool),
                       full_beside(src, src.shape, True, _dt.bool), offset=offset, dim1=d1, dim2=d2)
    return where(on, _diag_scatter(zeros_beside(input, input.shape), src, offset=offset, dim1=d1,
                                   dim2=d2), input)


@tensor_op(others=("src",))
def select_scatter(input, src, dim, index):
    """`input` with the slice `select(dim, index)` replaced by `src`."""
    d = _wrap_dim(dim, input.ndim)
    _check_src("select_scatter", src, select(input, d, index).shape)
    return index_put(input, (slice(None),) * d + (index,), convert(src, input.dtype))


@tensor_op(others=("src",))
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """`input` with the slice `start:end:step` of `dim` replaced by `src`."""
    d = _wrap_dim(_int_dim("slice_scatter", dim), input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    idx = (slice(None),) * d + (slice(start, end, step),)
    _check_src("slice_scatter", src, input[idx].shape)
    return index_put(input, idx, convert(src, input.dtype))


# ----------------------------------------------------------------- repeats and indices
def _repeat_counts(repeats):
    """repeat_interleave(repeats): each index i repeated repeats[i] times."""
    if repeats.ndim > 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (_dt.int32, _dt.int64):
        raise RuntimeError("repeats has to be Long or Int tensor")
    r = repeats.reshape(-1).long()
    if r.numel() and bool((r < 0).any()):
        raise RuntimeError("repeats can not be negative")
    total = int(r.sum().item()) if r.numel() else 0
    ends = cumsum(r, 0)
    return searchsorted(ends, in_library_of(r, arange(total)), right=True)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (or slice along `dim`) repeated `repeats` times (an int or a tensor of
    counts); `repeat_interleave(counts)` alone gives the indices repeated by the counts."""
    if not isinstance(input, Tensor):
        raise TypeError(f"repeat_interleave(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    if repeats is None:
        return _repeat_counts(input)
    x = input
    if dim is None:
        x, d = x.reshape(-1), 0
    else:
        d = _wrap_dim(_int_dim("repeat_interleave", dim), builtins.max(x.ndim, 1))
        if x.ndim == 0:
            x = x.reshape(1)
    if isinstance(repeats, Tensor) and repeats.ndim == 0:
        repeats = int(repeats.item())
    if isinstance(repeats, builtins.int):
        if repeats < 0:
            raise RuntimeError("repeats can not be negative")
        shape = list(x.shape)
        shape.insert(d + 1, repeats)
        out = flatten(expand(unsqueeze(x, d + 1), shape), d, d + 1)
    else:
        if not isinstance(repeats, Tensor):
            raise TypeError(f"repeat_interleave(): argument 'repeats' must be Tensor or int, not "
                            f"{type(repeats).__name__}")
        if repeats.ndim == 1 and repeats.shape[0] != x.shape[d]:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats.shape[0]} and input.size({d}) = "
                               f"{x.shape[d]}")
        out = index_select(x, d, _repeat_counts(repeats))
    if output_size is not None and out.shape[d] != output_size:
        raise RuntimeError(f"repeat_interleave: allocated size does not match required size "
                           f"({output_size} vs {out.shape[d]})")
    return out


@tensor_op
def argwhere(input):
    """The indices of the nonzero entries, one row each (nonzero's result)."""
    return nonzero(input)


def unravel_index(indices, shape):
    """The coordinates in `shape` of flat indices (negative ones count from the end)."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"unravel_index(): argument 'indices' must be Tensor, not "
                        f"{type(indices).__name__}")
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype is _dt.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, builtins.int) else tuple(builtins.int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    n = 1
    for s in shape:
        n *= s
    idx = indices.long()
    if idx.numel() and bool(((idx < -n) | (idx >= n)).any()):
        raise RuntimeError(f"unravel_index: an index is out of bounds for shape {shape} with "
                           f"{n} elements (expected -{n} <= index < {n})")
    idx = where(idx < 0, idx + n, idx)
    out, stride = [], n
    for s in shape:
        stride //= builtins.max(s, 1)
        out.append((idx // builtins.max(stride, 1)) % builtins.max(s, 1))
    return tuple(out)


@tensor_op
def vander(x, N=None, increasing=False):
    """Columns x**0 ... x**(N-1) (decreasing unless `increasing`), as torch: a cumulative
    product, so the gradient at x = 0 is finite."""
    bool_args("vander", increasing=increasing)
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if x.dtype is _dt.bool or not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = convert(x, _dt.int64)
    if n == 0:
        return zeros_beside(x, (x.shape[0], 0))
    ones = full_beside(x, (x.shape[0], 1), 1)
    cols = cat([ones, expand(unsqueeze(x, 1), (x.shape[0], n - 1))], 1) if n > 1 else ones
    out = cumprod(cols, 1)
    return out if increasing else flip(out, 1)


@tensor_op
def msort(input):
    return sort(input, 0).values


def fill_diagonal_(input, fill_value, wrap=False):
    """Writes `fill_value` on the main diagonal in place (all dims equal, or a matrix; `wrap`
    continues a tall matrix's diagonal every ncols + 1 rows, as torch and NumPy)."""
    if input.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if input.ndim > 2 and len(set(input.shape)) > 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    n, m = input.shape[0], input.shape[-1]
    if input.ndim == 2:
        step = m + 1
        limit = input.numel() if wrap else builtins.min(n, m) * m
    else:
        step = builtins.sum(n ** k for k in range(input.ndim))
        limit = input.numel()
    flat = arange(input.numel(), device=input.device).reshape(input.shape)
    on = ((flat % step) == 0) & (flat < limit)
    return inplace.apply(input, where(on, full_beside(input, (), fill_value), input),
                         "FillBackward0")


# ----------------------------------------------------------------- adjoint, negation bit
@tensor_op
def adjoint(input):
    if input.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor.")
    x = transpose(input, -2, -1)
    return conj(x) if x.dtype.is_complex else x


@tensor_op
def resolve_neg(input):
    """Itself: arraygrad has no lazy negation bit."""
    return input


@tensor_op
def is_neg(input):
    return False


# ----------------------------------------------------------------- *_copy: views as copies
def _copying(view, name):
    def fn(input, *args, **kwargs):
        out = view(input, *args, **kwargs)
        return tuple(clone(o) for o in out) if isinstance(out, tuple) else clone(out)
    fn.__name__ = name
    fn.__doc__ = f"A copy of `{view.__name__}`'s result (no view)."
    return fn


def _narrow_checked(input, dim, start, length):
    """narrow, with torch's narrow_copy error for a dim out of range (a RuntimeError)."""
    if not -builtins.max(input.ndim, 1) <= dim < builtins.max(input.ndim, 1):
        raise RuntimeError(f"narrow_copy(): dim {dim} is out of range for a tensor with "
                           f"{input.ndim} dims")
    return narrow(input, dim, start, length)


_COPIES = {"expand_copy": expand, "permute_copy": permute, "select_copy": select,
           "squeeze_copy": squeeze, "unsqueeze_copy": unsqueeze, "t_copy": t,
           "transpose_copy": transpose, "view_copy": view, "diagonal_copy": diagonal,
           "detach_copy": detach, "unbind_copy": unbind, "split_copy": split,
           "split_with_sizes_copy": split_with_sizes, "unfold_copy": unfold,
           "as_strided_copy": as_strided, "narrow_copy": _narrow_checked,
           "alias_copy": lambda x: x,
           "view_as_real_copy": view_as_real, "view_as_complex_copy": view_as_complex,
           "slice_copy": lambda x, dim=0, start=None, end=None, step=1:
               x[(slice(None),) * _wrap_dim(dim, x.ndim) + (slice(start, end, step),)]}
COPIES = {name: tensor_op(_copying(view, name)) for name, view in _COPIES.items()}
