"""Discrete Fourier transforms (torch.fft) from three primitives: c2c over some dims, r2c
(rfft) and c2r (irfft) along one dim. Sizes `n`/`s` pad or trim the input first (with
differentiable ops); multi-dim real transforms are a c2c over the leading dims and an
r2c/c2r along the last one, as in pocketfft.

# NOTE [fft gradients]
The transforms are linear, so a jvp is the transform of the tangent. A vjp is the adjoint
(conjugate transpose, torch's complex convention): for c2c, the opposite-direction transform
with the dual norm ('backward' <-> 'forward'); for r2c, the c2c adjoint of the zero-padded
half spectrum, real part; for c2r, an r2c whose non-self-conjugate bins count twice (the
Hermitian doubling of torch's fft_c2r_backward).
"""
from .. import dtypes as _dt
from .. import _tensor as _t
from ._checks import tensor_op
from ._rules import to_front
from .registry import primitive
from .elementwise import convert
from .shape import cat, narrow, zeros_beside

Tensor = _t.Tensor
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _c_dtype(d):
    return _dt.complex128 if d in (_dt.float64, _dt.complex128) else _dt.complex64


def _shift_batch(prim, args, bdims, dims, **params):
    x = to_front(args[0], bdims[0])
    return prim(x, dims=tuple(d + 1 for d in dims), **params), 0


def _shift_batch_dim(prim, args, bdims, dim, **params):
    x = to_front(args[0], bdims[0])
    return prim(x, dim=dim + 1, **params), 0


# ----------------------------------------------------------------- primitives
def _c2c_impl(xp, x, dims, norm, forward):
    f = xp.fft.fftn if forward else xp.fft.ifftn
    return xp.astype(f(x, axes=dims, norm=norm), x.dtype, copy=False)


_c2c = primitive(
    "fft_c2c", _c2c_impl, save=(), batch=_shift_batch, complex=True, node_name="FftC2CBackward0",
    vjp=(lambda ctx, g, dims, norm, forward: _c2c(g, dims=dims, norm=_DUAL[norm],
                                                   forward=not forward),),
    jvp=(lambda ctx, t, dims, norm, forward: _c2c(t, dims=dims, norm=norm, forward=forward),))


def _r2c_impl(xp, x, dim, norm):
    c = xp.complex128 if x.dtype == xp.float64 else xp.complex64
    return xp.astype(xp.fft.rfft(x, axis=dim, norm=norm), c, copy=False)


def _r2c_vjp(ctx, g, dim, norm):
    n = ctx.shapes[0][dim]
    pad = n - g.shape[dim]
    if pad:
        shape = list(g.shape)
        shape[dim] = pad
        g = cat([g, zeros_beside(g, shape)], dim)
    return _c2c(g, dims=(dim,), norm=_DUAL[norm], forward=False).real


_r2c = primitive(
    "fft_r2c", _r2c_impl, save=(), batch=_shift_batch_dim, complex=True, vjp=(_r2c_vjp,),
    node_name="FftR2CBackward0",
    jvp=(lambda ctx, t, dim, norm: _r2c(t, dim=dim, norm=norm),))


def _c2r_impl(xp, x, dim, n, norm):
    r = xp.float64 if x.dtype == xp.complex128 else xp.float32
    return xp.astype(xp.fft.irfft(x, n=n, axis=dim, norm=norm), r, copy=False)


def _c2r_vjp(ctx, g, dim, n, norm):
    gi = _r2c(g, dim=dim, norm=_DUAL[norm])
    m = ctx.shapes[0][dim]
    double = n - m          # bins 1..n-m stand for themselves and their mirror images
    if double > 0:
        parts = [narrow(gi, dim, 0, 1), narrow(gi, dim, 1, double) * 2]
        if m - 1 - double:
            parts.append(narrow(gi, dim, 1 + double, m - 1 - double))
        gi = cat(parts, dim)
    return gi


_c2r = primitive(
    "fft_c2r", _c2r_impl, save=(), batch=_shift_batch_dim, complex=True, vjp=(_c2r_vjp,),
    node_name="FftC2RBackward0",
    jvp=(lambda ctx, t, dim, n, norm: _c2r(t, dim=dim, n=n, norm=norm),))


# ----------------------------------------------------------------- argument handling
def _norm(norm, op):
    if norm is None:
        return "backward"
    if norm not in _DUAL:
        raise ValueError(f"Invalid normalization mode: {norm}")
    return norm


def _resize(x, dim, n):
    """`x` zero-padded or trimmed to size `n` along `dim` (torch's n/s)."""
    have = x.shape[dim]
    if n == have:
        return x
    if n < have:
        return narrow(x, dim, 0, n)
    shape = list(x.shape)
    shape[dim] = n - have
    return cat([x, zeros_beside(x, shape)], dim)


def _dims_sizes(op, x, s, dim, default_all):
    """The (dims, sizes) of an n-dim transform from torch's s/dim arguments."""
    if dim is None:
        if s is None:
            dims = tuple(range(x.ndim)) if default_all else tuple(range(x.ndim))[-2:]
        else:
            dims = tuple(range(x.ndim - len(s), x.ndim))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(_t._wrap_dim(d, x.ndim) for d in dims)
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"{op}: dims must be unique")
    if s is None:
        sizes = [x.shape[d] for d in dims]
    else:
        if len(s) != len(dims):
            raise RuntimeError(f"{op}: When given, dim and shape arguments must have the same "
                               "length")
        sizes = list(s)
    for v in sizes:
        if v is not None and v != -1 and v < 1:
            raise RuntimeError(f"Invalid number of data points ({v}) specified")
    return dims, sizes


def _as_complex(x):
    if x.dtype._category < 2:
        x = convert(x, _dt.get_default_dtype())
    return x if x.dtype.is_complex else convert(x, _c_dtype(x.dtype))


def _as_real(x, op):
    if x.dtype.is_complex:
        raise RuntimeError(f"{op} expects a real input tensor, but got {x.dtype}")
    return x if x.dtype.is_floating_point else convert(x, _dt.get_default_dtype())


# ----------------------------------------------------------------- the torch.fft functions
def _cfft(op, forward, input, s, dim, norm, default_all):
    x = _as_complex(input)
    dims, sizes = _dims_sizes(op, x, s, dim, default_all)
    for d, n in zip(dims, sizes):
        x = _resize(x, d, x.shape[d] if n in (None, -1) else n)
    return _c2c(x, dims=dims, norm=_norm(norm, op), forward=forward)


def _rfftn(op, input, s, dim, norm, default_all):
    x = _as_real(input, op)
    dims, sizes = _dims_sizes(op, x, s, dim, default_all)
    for d, n in zip(dims, sizes):
        x = _resize(x, d, x.shape[d] if n in (None, -1) else n)
    norm = _norm(norm, op)
    out = _r2c(x, dim=dims[-1], norm=norm)
    return _c2c(out, dims=dims[:-1], norm=norm, forward=True) if len(dims) > 1 else out


def _irfftn(op, input, s, dim, norm, default_all):
    x = _as_complex(input)
    dims, sizes = _dims_sizes(op, x, s, dim, default_all)
    last = None if s is None else sizes[-1]       # default: 2 (m - 1) points
    n = 2 * (x.shape[dims[-1]] - 1) if last in (None, -1) else last
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    for d, m in zip(dims[:-1], sizes[:-1]):
        x = _resize(x, d, x.shape[d] if m in (None, -1) else m)
    x = _resize(x, dims[-1], n // 2 + 1)
    norm = _norm(norm, op)
    if len(dims) > 1:
        x = _c2c(x, dims=dims[:-1], norm=norm, forward=False)
    return _c2r(x, dim=dims[-1], n=n, norm=norm)


def _one(s):
    return None if s is None else (s,)


@tensor_op
def fft(input, n=None, dim=-1, norm=None):
    return _cfft("fft_fft", True, input, _one(n), dim, norm, True)


@tensor_op
def ifft(input, n=None, dim=-1, norm=None):
    return _cfft("fft_ifft", False, input, _one(n), dim, norm, True)


@tensor_op
def fft2(input, s=None, dim=(-2, -1), norm=None):
    return _cfft("fft_fft2", True, input, s, dim, norm, False)


@tensor_op
def ifft2(input, s=None, dim=(-2, -1), norm=None):
    return _cfft("fft_ifft2", False, input, s, dim, norm, False)


@tensor_op
def fftn(input, s=None, dim=None, norm=None):
    return _cfft("fft_fftn", True, input, s, dim, norm, True)


@tensor_op
def ifftn(input, s=None, dim=None, norm=None):
    return _cfft("fft_ifftn", False, input, s, dim, norm, True)


@tensor_op
def rfft(input, n=None, dim=-1, norm=None):
    return _rfftn("fft_rfft", input, _one(n), dim, norm, True)


@tensor_op
def irfft(input, n=None, dim=-1, norm=None):
    return _irfftn("fft_irfft", input, _one(n), dim, norm, True)


@tensor_op
def rfft2(input, s=None, dim=(-2, -1), norm=None):
    return _rfftn("fft_rfft2", input, s, dim, norm, False)


@tensor_op
def irfft2(input, s=None, dim=(-2, -1), norm=None):
    return _irfftn("fft_irfft2", input, s, dim, norm, False)


@tensor_op
def rfftn(input, s=None, dim=None, norm=None):
    return _rfftn("fft_rfftn", input, s, dim, norm, True)


@tensor_op
def irfftn(input, s=None, dim=None, norm=None):
    return _irfftn("fft_irfftn", input, s, dim, norm, True)


@tensor_op
def hfft(input, n=None, dim=-1, norm=None):
    """The FFT of a Hermitian-symmetric signal given by its first half: irfft of the
    conjugate with the dual norm."""
    return _irfftn("fft_hfft", _as_complex(input).conj(), _one(n), dim,
                   _DUAL[_norm(norm, "fft_hfft")], True)


@tensor_op
def ihfft(input, n=None, dim=-1, norm=None):
    """The inverse of hfft: conj of rfft with the dual norm."""
    return _rfftn("fft_ihfft", input, _one(n), dim, _DUAL[_norm(norm, "fft_ihfft")],
                  True).conj()


def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """Sample frequencies [0, 1, ..., -1] / (d n) of an n-point fft."""
    from .creation import arange
    k = arange(n, dtype=dtype or _dt.get_default_dtype(), device=device)
    out = (k - (k >= (n + 1) // 2) * n) / (d * n)
    return out.requires_grad_() if requires_grad else out


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """Sample frequencies [0, ..., n // 2] / (d n) of an n-point rfft."""
    from .creation import arange
    out = arange(n // 2 + 1, dtype=dtype or _dt.get_default_dtype(), device=device) / (d * n)
    return out.requires_grad_() if requires_grad else out


def _shift(input, dim, sign):
    dims = tuple(range(input.ndim)) if dim is None else \
        ((dim,) if isinstance(dim, int) else tuple(dim))
    shifts = tuple(sign * (input.shape[d] // 2) for d in dims)
    return input.roll(shifts, dims)


@tensor_op
def fftshift(input, dim=None):
    """Zero frequency moved to the centre: a roll by n // 2 along each dim."""
    return _shift(input, dim, 1)


@tensor_op
def ifftshift(input, dim=None):
    """The inverse of fftshift: a roll by -(n // 2)."""
    return _shift(input, dim, -1)

