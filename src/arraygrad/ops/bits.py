"""Elementwise ops on the bits of floats: nan_to_num, copysign, heaviside, nextafter.

copysign's gradient is torch's: out / x where x != 0 (0 at x == 0), none to `other`;
nextafter's is the identity to `input` (torch's); heaviside has no derivative in torch, so its
backward raises.
"""
import math

from ._rules import binary, elementwise
from .registry import primitive
from ._checks import tensor_op
from .creation import zeros_like
from .elementwise import where, isfinite, _binop, _checked, host_xp


_copysign = binary("copysign", _checked("copysign", lambda xp, x, y: xp.copysign(x, y)),
                   lambda ctx, g: g * where(ctx.x == 0, 0.0, ctx.out / ctx.x),
                   lambda ctx, g: zeros_like(g), 
                   save=(0,), save_output=True, number_edges=False,
                   node_name=lambda node: "CopysignBackward" + ("1" if node.shapes[1] is None
                                                                else "0"))
copysign = _binop(_copysign, float_only=True)
nextafter = _binop(binary("nextafter", _checked("nextafter", lambda xp, x, y: xp.nextafter(x, y)),
                          lambda ctx, g: g, lambda ctx, g: g * 0, save=()))

def _heaviside_impl(xp, x, v):
    if xp is host_xp:      # NOTE [fused functions]
        return xp.astype(xp.heaviside(x, v), x.dtype, copy=False)
    out = xp.where(x == 0, v, xp.astype(x > 0, x.dtype))
    if xp.isdtype(x.dtype, "real floating"):
        out = xp.where(xp.isnan(x), x, out)
    return out


# no derivative in torch: a node whose backward raises
_heaviside = primitive("heaviside", _checked("heaviside", _heaviside_impl), batch=elementwise)


@tensor_op(others=("values",))
def heaviside(input, values):
    """0 where input < 0, 1 where input > 0, `values` where input == 0."""
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return _heaviside(input, values)


def _nan_to_num_vjp(ctx, g, **params):
    return where(isfinite(ctx.x), g, 0.0)


def _nan_to_num_impl(xp, x, nan, posinf, neginf):
    if xp is host_xp:      # NOTE [fused functions]
        return xp.astype(xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf), x.dtype,
                         copy=False)
    info = xp.finfo(x.dtype)
    big = info.max if posinf is None else posinf
    low = info.min if neginf is None else neginf
    out = xp.where(xp.isnan(x), xp.asarray(nan, dtype=x.dtype), x)
    out = xp.where(x == math.inf, xp.asarray(big, dtype=x.dtype), out)
    return xp.where(x == -math.inf, xp.asarray(low, dtype=x.dtype), out)


_nan_to_num = primitive(
    "nan_to_num", _nan_to_num_impl,
    vjp=(_nan_to_num_vjp,), jvp=(_nan_to_num_vjp,), save=(0,), jvp_reads_primals=False,
    batch=elementwise)


@tensor_op
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN -> `nan`, +inf -> `posinf`, -inf -> `neginf` (defaults: the dtype's largest and
    lowest); the gradient passes where the input is finite, as torch's."""
    if not input.dtype.is_differentiable:
        return input.clone()
    return _nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf)


__all__ = ["copysign", "nextafter", "heaviside", "nan_to_num"]
