"""Shared rule builders: most primitives are made from one of these.

An elementwise op needs only its derivative; vjp, jvp and the batching rule
follow. Rules are written with arraygrad ops, never with the backend. Batching
rules take the primitive first (`batch=elementwise` in a declaration).
"""
from .. import _tensor as _t
from ..autograd.graph import SPARE_MIN
from .registry import primitive


# ----------------------------------------------------------------- batching helpers
def to_front(x, bdim):
    """`x` with its batch dim first (no op when it already is)."""
    return x if bdim == 0 else x.movedim(bdim, 0)


def batch_size(args, bdims):
    """Size of the batch dim of the batched arguments of a rule."""
    for a, d in zip(args, bdims):
        if d is not None:
            return a.shape[d]
    raise AssertionError("a batching rule ran with no batched argument")


def all_front(args, bdims):
    """Every tensor argument with the batch dim first; unbatched ones expanded to the batch."""
    n = batch_size(args, bdims)
    return [to_front(a, d) if d is not None else a.expand((n,) + tuple(a.shape))
            for a, d in zip(args, bdims)]


def elementwise(prim, args, bdims, **params):
    """Batching rule shared by elementwise ops: line batch dims up in front."""
    ranks = [((a._data.ndim if a._lvl is None else a.ndim) - (d is not None))
             if isinstance(a, _t.Tensor) else 0 for a, d in zip(args, bdims)]
    rank = max(ranks, default=0)
    moved = []
    for a, d, r in zip(args, bdims, ranks):
        if d is not None:
            if d:
                a = a.movedim(d, 0)
            if r < rank:
                a = a.reshape((a.shape[0],) + (1,) * (rank - r) + tuple(a.shape[1:]))
        moved.append(a)
    out = prim(*moved, **params)
    if prim.multiple_results:
        return out, (0,) * len(out)
    return out, 0


def _shift(d):
    if isinstance(d, tuple):
        return tuple(_shift(v) for v in d)
    return d + 1 if d >= 0 else d


def shifted_dims(*names):
    """Batching rule of a one-input op whose params `names` are dims (int or tuple; negative
    ones count from the end and stay): batch dim first, dims moved by one."""
    def shifted_dims(prim, args, bdims, **params):    # named as its builder, for docs/coverage.md
        x = to_front(args[0], bdims[0])
        for name in names:
            params[name] = _shift(params[name])
        out = prim(x, **params)
        return out, ((0,) * len(out) if prim.multiple_results else 0)
    return shifted_dims


def same_bdim(prim, args, bdims, **params):
    """Batching rule of a one-input op that keeps every dim where it is (clone, alias, detach)."""
    return prim(args[0], **params), bdims[0]


def reduction(prim, args, bdims, dims, keepdim, **params):
    """Batching rule of a reduction over `dims`: batch dim first, dims moved by one."""
    x = to_front(args[0], bdims[0])
    if x.ndim == 1 and dims:
        # a 0-d example reduced over "dim 0": a size-1 dim, the result is 0-d again
        out = prim(x.unsqueeze(1), dims=(1,), keepdim=False, **params)
    else:
        out = prim(x, dims=tuple(d + 1 for d in dims), keepdim=keepdim, **params)
    if prim.multiple_results:
        return out, (0,) * len(out)
    return out, 0


def along_dim(prim, args, bdims, dim, **params):
    """Batching rule of an op along one `dim` (softmax, cumsum, argsort)."""
    x = to_front(args[0], bdims[0])
    if x.ndim == 1:     # a 0-d example: along a size-1 dim
        return prim(x.unsqueeze(1), dim=1, **params).squeeze(1), 0
    return prim(x, dim=dim + 1, **params), 0


def unary(name, impl, deriv, *, save_input=True, save_output=False, array_deriv=None, **kw):
    """Elementwise f(x) with derivative `deriv(ctx)` (reads ctx.x and/or ctx.out); with
    complex=True f is holomorphic and the vjp takes the conjugate derivative.
    `array_deriv(xp, x, out, spare)`, the same formula on arrays (which may write into a
    buffer taken from `spare`, see `take`), gives the array-level vjp (used for real float
    arrays when no graph is built)."""
    vjp = (lambda ctx, g: g * deriv(ctx).conj()) if kw.get("complex") else \
        (lambda ctx, g: g * deriv(ctx))
    array_vjp = None
    if array_deriv is not None:
        def array_vjp(xp, g, inputs, outs, needs, shapes, spare):
            x, out = inputs[0], outs[0] if outs else None
            if not spare and g.size < SPARE_MIN:    # small: new arrays cost NumPy nothing
                return (g * array_deriv(xp, x, out, spare),)
            d = array_deriv(xp, x, out, [a for a in spare if a is not g])     # g: read below
            if fresh(xp, d, g) and d is not x and d is not out:
                return (xp.multiply(g, d, out=d),)     # the same product, one buffer less
            buf = take(spare)
            return (g * d if buf is None else xp.multiply(g, d, out=buf),)
    return primitive(name, impl, vjp=(vjp,),
                     jvp=(lambda ctx, t: t * deriv(ctx),), batch=elementwise,
                     save=(0,) if save_input else (), save_output=save_output,
                     array_vjp=array_vjp, **kw)


def fresh(xp, d, like):
    """Whether `d`, a temporary of an array-level rule (which runs on NumPy), can take a
    result shaped as array `like` in place (0-d operations give NumPy scalars, not arrays)."""
    return type(d) is type(like) is xp.ndarray and d.shape == like.shape \
        and d.dtype == like.dtype


def take(spare, *avoid):
    """A buffer from `spare` (arrays shaped and typed as the gradient that an array-level
    rule may overwrite: the engine's NOTE [spare buffers]) other than the arrays in `avoid`,
    which the rule still reads; None where there is none."""
    for i, a in enumerate(spare):
        if not any(a is b for b in avoid):
            return spare.pop(i)
    return None


def binary(name, impl, dx, dy, *, save=(0, 1), save_output=False, **kw):
    """Elementwise f(x, y); dx/dy map (ctx, g) to the cotangent, also used as jvp. With
    complex=True f is holomorphic: its vjp is conj(dx(conj(g))), the conjugate derivative
    (conj returns a real tensor itself)."""
    vjp = (adjoint(dx), adjoint(dy)) if kw.get("complex") else (dx, dy)
    jvp = kw.pop("jvp", (dx, dy))       # where torch's forward formula differs from its backward
    return primitive(name, impl, vjp=vjp, jvp=jvp, batch=elementwise, save=save,
                     save_output=save_output, **kw)


def adjoint(rule):
    """The vjp, under torch's complex convention, of a holomorphic op whose `rule(ctx, g)`
    multiplies by the derivative (its transpose): conj(rule(ctx, conj(g)))."""
    def vjp(ctx, g, **params):
        r = rule(ctx, g.conj(), **params)
        return None if r is None else r.conj()
    return vjp


def nondiff(name, impl, **kw):
    """An elementwise primitive without derivatives (comparisons, integer and bit ops)."""
    return primitive(name, impl, differentiable=False, batch=elementwise, **kw)
