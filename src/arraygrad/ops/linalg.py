"""Matrix products. One primitive, `matmul` on >=2-d operands; vectors are reshaped."""
from .. import _tensor as _t
from .. import dtypes as _dt
from ..core.autocast_mode import autocast_op, LOWER_PRECISION, state as _autocast
from ..autograd.eager import binary_op
from ..backends import numpy_backend, silent
from ._checks import (tensor_op, tensor_list, short_dtype_name, type_name, c_dtype_name,
                      same_dtype, not_implemented)
from ._rules import to_front
from .shape import _swapped
from .registry import primitive

Tensor = _t.Tensor
host_xp = numpy_backend.xp     # NOTE [stacked outer products]
_ndarray = host_xp.ndarray


def _mT(x):
    return x.transpose(-1, -2)


# NOTE [stacked outer products]
# A stack of products with inner size 1 (vmap of a gradient `x^T g` per example) is where
# NumPy's matmul is slowest: one GEMM call per matrix. einsum's loop computes each entry as
# matmul does (0 + x*y: the same bits, signed zeros, inf and nan included) in about half the
# time, and returns the same contiguous layout. NumPy only (einsum is not in the standard),
# and not for tiny stacks, where its call costs more than the loop saves.
def _matmul_arrays(xp, x, y):
    if xp is host_xp and x.ndim >= 3 and x.shape[-1] == 1 == y.shape[-2] and y.ndim == x.ndim and \
            x.dtype == y.dtype and x.dtype.char in "fdFD" and x.size * y.shape[-1] >= 256:
        return xp.einsum("...ik,...kj->...ij", x, y)
    # bfloat16 (ml_dtypes) multiplies into float32, as torch accumulates; round back as torch
    if xp is host_xp:       # as `_reshape`
        out = host_xp.matmul(x, y)
        return out if out.dtype == x.dtype else out.astype(x.dtype)
    return xp.astype(xp.matmul(x, y), x.dtype, copy=False)


_matmul_impl = silent(_matmul_arrays)


def _reshape(xp, a, shape):
    """NumPy's method where it is NumPy: its function's wrappers cost more than small products."""
    return a.reshape(shape) if xp is host_xp else xp.reshape(a, shape)


def _mT_array(xp, a):
    if xp is host_xp:       # as `_reshape`
        return a.swapaxes(-1, -2)
    return xp.permute_dims(a, _swapped(a.ndim, a.ndim - 1, a.ndim - 2))


# NOTE [column-major operands]
# torch's mm backward gives a column-major operand (a transposed matrix: `w.T` in `x @ w.T`)
# its gradient in that layout, as the transpose of the product taken the other way round:
# `(g^T x)^T` for mat2 rather than `x^T g`, `(y g^T)^T` for mat1 rather than `g y^T`. The
# gradients then have torch's strides, and a stack of per-example outer products (vmap of a
# linear layer's gradient) is taken in the orientation that NOTE [stacked outer products]
# computes twice as fast. As torch, for two matrices only (not batched products), and by the
# strides the operand had, whether or not its values are read.
def _mm(shapes):
    """Whether matmul's operands (`shapes`) are two matrices: torch's mm, whose backward keeps
    a column-major operand's layout (NOTE [column-major operands])."""
    return len(shapes[0]) == 2 == len(shapes[1])


def _column_major(strides, rows):
    """Whether a matrix of `rows` rows with `strides` (in elements; None: not known) is
    column-major, as torch's mm backward tests it."""
    return strides is not None and strides[0] == 1 and strides[1] == rows


def _column_major_array(a):
    return a.strides == (a.itemsize, a.itemsize * a.shape[0])


def _matmul_array_vjp(xp, g, inputs, outs, needs, shapes, spare):
    """matmul's vjp on arrays: the same products of the same transposed views."""
    x, y = inputs
    mm = _mm(shapes)
    gx = gy = None
    if needs[0]:
        gx = _mT_array(xp, _matmul_arrays(xp, y, _mT_array(xp, g))) \
            if mm and _column_major_array(x) else _matmul_arrays(xp, g, _mT_array(xp, y))
    if needs[1]:
        gy = _mT_array(xp, _matmul_arrays(xp, _mT_array(xp, g), x)) \
            if mm and _column_major_array(y) else _matmul_arrays(xp, _mT_array(xp, x), g)
    return gx, gy


def _matmul_dx(ctx, g):
    s = ctx.shapes
    if _mm(s) and _column_major(ctx.saved_strides(0), s[0][0]):
        return _mT(ctx.y.conj() @ _mT(g))
    return g @ _mT(ctx.y).conj()


def _matmul_dy(ctx, g):
    s = ctx.shapes
    if _mm(s) and _column_major(ctx.saved_strides(1), s[1][0]):
        return _mT(_mT(g) @ ctx.x.conj())
    return _mT(ctx.x).conj() @ g


# NOTE [matmul batching]: a batched plain matrix against an unbatched operand folds the
# vmap dim into its rows (x) or columns (y): vmap(F.linear) over vectors then runs the one
# GEMM that the batched call runs, and equals it bit for bit (a stack of per-example GEMVs
# rounds differently). A batched stack of matrices (conv's per-image columns, bmm) keeps
# the vmap dim as one more stack dim in front, which again is what the batched call runs.
def _matmul_batch(prim, args, bdims):
    (x, y), (dx, dy) = args, bdims
    if dy is None and x.ndim == 3:
        x = to_front(x, dx)
        b, m, k = x.shape
        out = prim(x.reshape(b * m, k), y)
        return out.reshape(tuple(out.shape[:-2]) + (b, m, out.shape[-1])), out.ndim - 2
    if dx is None and y.ndim == 3:
        y = y if dy == 1 else y.movedim(dy, 1)
        k, b, n = y.shape
        out = prim(x, y.reshape(k, b * n))
        return out.reshape(tuple(out.shape[:-1]) + (b, n)), out.ndim - 1
    rank = max(a.ndim - (d is not None) for a, d in zip(args, bdims))
    out = []
    for a, d in zip(args, bdims):
        a = to_front(a, d) if d is not None else a.unsqueeze(0)
        missing = rank - (a.ndim - 1)
        if missing:
            a = a.reshape((a.shape[0],) + (1,) * missing + tuple(a.shape[1:]))
        out.append(a)
    return prim(*out), 0


_matmul = primitive(
    "matmul", _matmul_impl, node_name="MmBackward0", arg_names=("self", "mat2"),
    vjp=(_matmul_dx, _matmul_dy), array_vjp=_matmul_array_vjp, complex=True,
    jvp=(lambda ctx, t: _matmul(t, ctx.y), lambda ctx, t: _matmul(ctx.x, t)),
    batch=_matmul_batch)


# NOTE [matrix-vector products]
# `A @ v` (2-d by 1-d, torch's `mv`) is one primitive and one node (torch's MvBackward0), not
# a matmul of `v` as a column between an unsqueeze and a squeeze; it computes the same
# products as that composition did (the column product, then its column), so values and
# gradients keep their bits, and a batch of vectors is one GEMM as before.
def _mv_arrays(xp, x, y):
    out = _matmul_arrays(xp, x, _reshape(xp, y, (y.shape[0], 1)))
    return _reshape(xp, out, out.shape[:-1])


def _mv_array_vjp(xp, g, inputs, outs, needs, shapes, spare):
    x, y = inputs
    gc = _reshape(xp, g, (g.shape[0], 1))
    return (_matmul_arrays(xp, gc, _reshape(xp, y, (1, y.shape[0]))) if needs[0] else None,
            _reshape(xp, _matmul_arrays(xp, _mT_array(xp, x), gc), shapes[1]) if needs[1] else None)


def _mv_batch(prim, args, bdims):
    (x, y), (dx, dy) = args, bdims
    if dx is None:          # a batch of vectors: one GEMM, the batch along the columns
        return _matmul(x, _mT(to_front(y, dy))), 1
    out = _matmul(to_front(x, dx), (y if dy is None else to_front(y, dy)).unsqueeze(-1))
    return out.squeeze(-1), 0


_mv = primitive(
    "mv", silent(_mv_arrays), node_name="MvBackward0", arg_names=("self", "vec"),
    vjp=(lambda ctx, g: _matmul(g.unsqueeze(-1), ctx.y.conj().unsqueeze(0)),
         lambda ctx, g: _mv(_mT(ctx.x).conj(), g)),    # (the column product, as before)
    array_vjp=_mv_array_vjp, complex=True, save_when=((1,), (0,)),
    jvp=(lambda ctx, t: _mv(t, ctx.y), lambda ctx, t: _mv(ctx.x, t)),
    batch=_mv_batch)


def _shape_error(x, y):
    a, b = x.shape, y.shape
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                        f"({a[-2] if len(a) > 1 else 1}x{a[-1]} and {b[-2] if len(b) > 1 else b[0]}x"
                        f"{b[-1] if len(b) > 1 else 1})")


def _same_dtype(x, y):
    if x.dtype is not y.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{c_dtype_name(x.dtype)} != {c_dtype_name(y.dtype)}")


def _vector_product_checks(x, y):
    """torch's checks of a vector by a vector (its dot kernel) or a matrix by a vector (addmv),
    in their order and words."""
    xs, n = x.shape, y.shape[0]
    a, b = short_dtype_name(x.dtype), short_dtype_name(y.dtype)
    if len(xs) == 1:
        if x.dtype is not y.dtype:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {a} "
                               f"and {b}")
        if xs[0] != n:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{xs[0]}] and src "
                               f"[{n}] to have the same number of elements, but got {xs[0]} "
                               f"and {n} elements respectively")
        kernel = "dot"
    else:
        if xs[1] != n:
            raise RuntimeError(f"size mismatch, got input ({xs[0]}), mat ({xs[0]}x{xs[1]}), "
                               f"vec ({n})")
        if x.dtype is not y.dtype:
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {b}, {a}, "
                               f"and {b}")
        kernel = "addmv_impl_cpu"
    if x.dtype is _dt.bool:
        raise not_implemented(kernel, x.dtype)


@autocast_op(LOWER_PRECISION)
@tensor_op(others=('other',), name="matmul")
def _matmul_op(input, other):
    if input.is_sparse or other.is_sparse:     # sparse COO operands: their own matmul
        return input.matmul(other) if input.is_sparse else other.__rmatmul__(input)
    x, y = input, other
    if y.ndim == 1 and x.ndim in (1, 2):
        _vector_product_checks(x, y)
    if x.dtype is _dt.bool and (y.dtype is _dt.bool or max(x.ndim, y.ndim) > 2):
        # torch's kernels have no bool version; its batched one says so before the dtype check
        raise not_implemented("bmm" if max(x.ndim, y.ndim) > 2 else "addmm_impl_cpu_", x.dtype)
    _same_dtype(x, y)
    xs, ys = x.shape, y.shape
    nx, ny = len(xs), len(ys)
    if nx == 0 or ny == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{nx}D and {ny}D")
    if xs[-1] != (ys[0] if ny == 1 else ys[-2]):
        raise _shape_error(x, y)
    xv, yv = nx == 1, ny == 1
    if yv and nx == 2:
        return _mv(x, y)      # NOTE [matrix-vector products]
    if xv:
        x = x.unsqueeze(0)
    if yv:
        y = y.unsqueeze(-1)
    out = _matmul(x, y)
    if yv:
        out = out.squeeze(-1)
    if xv:
        out = out.squeeze(-1 if yv else -2)
    return out


# matrix by vector and matrix by matrix, the common products, in one frame at level 0
# (NOTE [one-frame ops]): there `_matmul_op` passes its operands unchanged to `mv` or
# `matmul`, and any operands its checks refuse (other dtypes, mismatched shapes) leave the
# one-frame path for it
_mv_op, _mm_op = binary_op(_mv, _matmul_op), binary_op(_matmul, _matmul_op)


def matmul(input, other):
    """The matrix product of two tensors, with torch's rules for 1-d and batched operands."""
    if type(input) is Tensor and type(other) is Tensor and not _autocast.enabled:
        x, y = input._data, other._data
        if type(x) is _ndarray and type(y) is _ndarray and x.ndim == 2:
            if y.ndim == 1:
                return _mv_op(input, other)
            if y.ndim == 2:
                return _mm_op(input, other)
    return _matmul_op(input, other)


@autocast_op(LOWER_PRECISION)
@tensor_op(others=('mat2',))
def mm(input, mat2):
    for name, m in (("self", input), ("mat2", mat2)):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix")
    return matmul(input, mat2)


@autocast_op(LOWER_PRECISION)
@tensor_op(others=('mat2',))
def bmm(input, mat2):
    for name, m in (("batch1", input), ("batch2", mat2)):
        if m.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    b, _, k = input.shape
    if tuple(mat2.shape[:2]) != (b, k):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {k}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    return matmul(input, mat2)


@tensor_op(others=('vec',))
def mv(input, vec):
    if input.ndim != 2 or vec.ndim != 1 or input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.ndim else 1}), "
                           f"mat ({'x'.join(map(str, input.shape))}), vec "
                           f"({'x'.join(map(str, vec.shape))})")
    return matmul(input, vec)


@tensor_op(others=('tensor',))
def dot(input, tensor):
    other = tensor
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{short_dtype_name(input.dtype)} and {short_dtype_name(other.dtype)}")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                           f"[{other.shape[0]}] to have the same number of elements, but got "
                           f"{input.shape[0]} and {other.shape[0]} elements respectively")
    return matmul(input, other)


@tensor_op(others=('other',))
def inner(input, other):
    """Sum of products over the last dims (a product with a 0-d tensor)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError("inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(input.shape)} and {list(other.shape)}")
    if input.dtype is not other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    return tensordot(input, other, dims=([-1], [-1]))


@tensor_op(others=('other',))
def vdot(input, other):
    """dot with the first vector conjugated (sum(conj(input) * other))."""
    return dot(input.conj(), other)


@tensor_op(others=('vec2',))
def outer(input, vec2):
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return input.unsqueeze(-1) * vec2


ger = outer


@autocast_op(LOWER_PRECISION)
@tensor_op(others=('mat1', 'mat2'))
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    same_dtype("addmm: self and mat2 must have the same dtype, but got {} and {}", input, mat2)
    return _scaled_sum(input, mm(mat1, mat2), beta, alpha)


@autocast_op(LOWER_PRECISION)
@tensor_op(others=('mat', 'vec'))
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec)."""
    same_dtype("addmv input tensors must have the same dtype, but got {}, {}, and {}", input, mat,
               vec)
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    if mat.shape[1] != vec.shape[0] or input.numel() not in (1, mat.shape[0]):
        if input.ndim == 0:     # torch's message reads input.size(0), which fails first
            raise IndexError("Dimension specified as 0 but tensor has no dimensions (addmv: "
                             f"size mismatch, mat ({mat.shape[0]}x{mat.shape[1]}), vec "
                             f"({vec.shape[0]}))")
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat "
                           f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    return _scaled_sum(input, mv(mat, vec), beta, alpha)


@tensor_op(others=('vec1', 'vec2'))
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2)."""
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D"
                           if vec1.ndim != 1 else
                           f"addr: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    shape = (vec1.shape[0], vec2.shape[0])
    if input.ndim > 2 or any(s not in (1, t) for s, t in zip(input.shape[::-1], shape[::-1])):
        raise RuntimeError(f"addr: input of shape {list(input.shape)} cannot be expanded to the "
                           f"outer product's shape {list(shape)}")
    return _scaled_sum(input, outer(vec1, vec2), beta, alpha)


def _scaled_sum(input, product, beta, alpha):
    """beta * input + alpha * product; beta=0 ignores input (its nan/inf too), as torch."""
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    return product + (input if beta == 1 else input * beta)


@autocast_op(LOWER_PRECISION)
@tensor_op(others=('batch1', 'batch2'))
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2), matrix by matrix."""
    return _scaled_sum(input, bmm(batch1, batch2), beta, alpha)


@autocast_op(LOWER_PRECISION)
@tensor_op(others=('batch1', 'batch2'))
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * the sum over the batch of batch1[i] @ batch2[i]."""
    return _scaled_sum(input, bmm(batch1, batch2).sum(0), beta, alpha)


def _expand_ellipsis(terms, rhs, operands):
    """Spell each '...' as letters no term uses; fewer dims take the last of them
    (broadcasting is right-aligned)."""
    used = set("".join(terms) + (rhs or ""))
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    sizes = [x.ndim - (len(t) - 3) if "..." in t else 0 for t, x in zip(terms, operands)]
    n = max(sizes, default=0)
    ell = "".join(free[:n])
    out = [t.replace("...", ell[n - k:] if k else "") for t, k in zip(terms, sizes)]
    return out, None if rhs is None else rhs.replace("...", ell), ell


def einsum(equation, *operands):
    """Einsum by reduction to broadcasting multiply and sum (differentiable, transformable)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    for i, c in enumerate(equation):
        if not (c.isascii() and c.isalpha()) and c not in " ,.->":
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation "
                               "string, subscripts must be in [a-zA-Z]")
    for i, x in enumerate(operands):
        if not isinstance(x, Tensor):
            raise TypeError(f"einsum(): argument 'operands' must be tuple of Tensors, but found "
                            f"element of type {type_name(x)} at pos {i}")
    if len(operands) > 1 and operands[0].dtype is _dt.bool:
        raise not_implemented("bmm", operands[0].dtype)     # torch's contraction kernel
    same_dtype("einsum(): expected scalar type {} but found {}", *operands)
    lhs, _, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError(f"einsum(): more operands were provided than specified in the equation"
                           if len(operands) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    ell = ""
    if "..." in eq:
        terms, rhs, ell = _expand_ellipsis(terms, rhs if _ else None, operands)
    if not _:
        counts = {}
        for t in terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        rhs = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    letters = []
    for t in terms:
        for c in t:
            if c not in letters:
                letters.append(c)
    aligned = []
    for t, x in zip(terms, operands):
        if len(t) != x.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(t)}) does "
                               f"not match the number of dimensions ({x.ndim}) for operand")
        # repeated letters in one term take the diagonal
        while len(set(t)) != len(t):
            c = next(c for c in t if t.count(c) > 1)
            i = t.index(c)
            j = t.index(c, i + 1)
            x = x.diagonal(0, i, j)
            t = t[:i] + t[i + 1:j] + t[j + 1:] + c
        order = [t.index(c) for c in letters if c in t]
        x = x.permute(order)
        present = [c for c in letters if c in t]
        shape = [x.shape[present.index(c)] if c in present else 1 for c in letters]
        aligned.append(x.reshape(shape))
    out = aligned[0]
    for x in aligned[1:]:
        out = out * x
    drop = tuple(i for i, c in enumerate(letters) if c not in rhs)
    if drop:
        out = out.sum(drop)
    kept = [c for c in letters if c in rhs]
    return out.permute([kept.index(c) for c in rhs]) if kept else out


@tensor_op(others=('b',))
def tensordot(a, b, dims=2):
    """Sum over `dims` of a (its last ones, or the listed ones) against b's first/listed ones."""
    if isinstance(dims, int):
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    da = [d % a.ndim for d in da]
    db = [d % b.ndim for d in db]
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    free_a = [d for d in range(a.ndim) if d not in da]
    free_b = [d for d in range(b.ndim) if d not in db]
    k = 1
    for d in da:
        k *= a.shape[d]
    x = a.permute(free_a + da).reshape(-1, k)
    y = b.permute(db + free_b).reshape(k, -1)
    return (x @ y).reshape([a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])


@tensor_op(others=('other',))
def kron(input, other):
    n = max(input.ndim, other.ndim)
    a = input.reshape((1,) * (n - input.ndim) + tuple(input.shape))
    b = other.reshape((1,) * (n - other.ndim) + tuple(other.shape))
    inter_a = [s for d in a.shape for s in (d, 1)]
    inter_b = [s for d in b.shape for s in (1, d)]
    return (a.reshape(inter_a) * b.reshape(inter_b)).reshape(
        [p * q for p, q in zip(a.shape, b.shape)])


@tensor_op(others=('other',))
def cross(input, other, dim=None):
    if input.dtype is _dt.bool:
        raise not_implemented("cross", input.dtype)
    same_dtype("linalg.cross: expected scalar type {} but found {}", input, other)
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    from .shape import broadcast_tensors, stack
    x, y = broadcast_tensors(input, other)
    if dim is None:
        dim = next((d for d, s in enumerate(x.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    d = dim % x.ndim
    if x.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{x.shape[d]} and {y.shape[d]}")
    x0, x1, x2 = x.unbind(d)
    y0, y1, y2 = y.unbind(d)
    return stack([x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0], d)


@tensor_op(others=('other',))
def linalg_cross(input, other, *, dim=-1):
    """torch.linalg.cross: broadcasts, and `dim` (default -1) must have size 3 in both."""
    if input.dtype is _dt.bool:
        raise not_implemented("cross", input.dtype)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {short_dtype_name(input.dtype)} but found "
                           f"{short_dtype_name(other.dtype)}")
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    for x in (input, other):
        if not -x.ndim <= dim < max(x.ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(x.ndim, 1)}, {max(x.ndim, 1) - 1}], but got {dim})")
    a, b = input.shape[dim], other.shape[dim]
    if a != 3 or b != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a} "
                           f"and {b}")
    return cross(input, other, dim)


@tensor_op(others=('y',))
def vecdot(x, y, *, dim=-1):
    """Dot products of the vectors along `dim`, broadcast: sum(conj(x) * y, dim)."""
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x "
                           f"of type {short_dtype_name(x.dtype)} and y of type "
                           f"{short_dtype_name(y.dtype)} instead")
    if x.ndim == 1 and y.ndim == 1 and x.shape[0] != y.shape[0]:     # torch's dot message
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{x.shape[dim]}] and src "
                           f"[{y.shape[dim]}] to have the same number of elements, but got "
                           f"{x.shape[dim]} and {y.shape[dim]} elements respectively")
    return (x.conj() * y).sum(dim)


def _chain_order(dims):
    """The classic matrix-chain dynamic programme: split[i][j] is where the product of
    matrices i..j is best split (fewest multiplications), as torch's multi_dot orders it."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(tensors):
    """A chain of matrix products in the cheapest order; the first and last may be vectors."""
    tensors = tensor_list("linalg.multi_dot", tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    for i, (t, where_) in enumerate(((first, "first"), (last, "last"))):
        if t.ndim not in (1, 2):
            raise RuntimeError(f"multi_dot(): the {where_} tensor must be 1D or 2D but got "
                               f"{t.ndim}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype is not first.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {c_dtype_name(first.dtype)} and tensor {i} "
                               f"{c_dtype_name(t.dtype)}")
    mats = [first.unsqueeze(0) if first.ndim == 1 else first] + list(tensors[1:-1]) + \
        [last.unsqueeze(-1) if last.ndim == 1 else last]
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(mats[i].shape)} and {list(mats[i + 1].shape)} cannot "
                               "be multiplied")
    split = _chain_order([m.shape[0] for m in mats] + [mats[-1].shape[1]])

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return matmul(product(i, k), product(k + 1, j))

    out = product(0, n - 1)
    if first.ndim == 1:
        out = out.squeeze(0)
    if last.ndim == 1:
        out = out.squeeze(-1)
    return out
