"""Shared rule builders: most primitives are made from one of these.

An elementwise op needs only its derivative; vjp, jvp and the batching rule
follow. Rules are written with arraygrad ops, never with the backend.
"""
from ..core.dispatch import Primitive
from .. import _tensor as _t


def elementwise_batch(prim):
    """Batching rule shared by elementwise ops: line batch dims up in front."""
    def rule(args, bdims, **params):
        rank = max((_logical_ndim(a, d) for a, d in zip(args, bdims)
                    if isinstance(a, _t.Tensor)), default=0)
        moved = []
        for a, d in zip(args, bdims):
            if d is None:
                moved.append(a)
            else:
                a = a.movedim(d, 0)
                missing = rank - (a.ndim - 1)
                if missing:
                    a = a.reshape((a.shape[0],) + (1,) * missing + tuple(a.shape[1:]))
                moved.append(a)
        out = prim(*moved, **params)
        if prim.multiple_results:
            return out, (0,) * len(out)
        return out, 0
    return rule


def _logical_ndim(a, d):
    return a.ndim - (d is not None)


def unary(name, impl, deriv, *, save_input=True, save_output=False, **kw):
    """Elementwise f(x) with derivative `deriv(ctx)` (reads ctx.x and/or ctx.out)."""
    prim = Primitive(
        name, impl,
        vjp=(lambda ctx, g: g * deriv(ctx),),
        jvp=(lambda ctx, t: t * deriv(ctx),),
        save=(0,) if save_input else (), save_output=save_output, **kw)
    prim.batch = elementwise_batch(prim)
    return prim


def linear_unary(name, impl, **kw):
    """An op linear in its only tensor input: its vjp/jvp apply a linear map."""
    return Primitive(name, impl, **kw)


def binary(name, impl, dx, dy, *, save=(0, 1), save_output=False, **kw):
    """Elementwise f(x, y); dx/dy map (ctx, g) to the cotangent, also used as jvp."""
    prim = Primitive(name, impl, vjp=(dx, dy), jvp=(dx, dy), save=save,
                     save_output=save_output, **kw)
    prim.batch = elementwise_batch(prim)
    return prim


def nondiff(name, impl, elementwise=True, **kw):
    prim = Primitive(name, impl, differentiable=False, **kw)
    if elementwise:
        prim.batch = elementwise_batch(prim)
    return prim
