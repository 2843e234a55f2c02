"""Numeric functions torch took from NumPy: nansum/nanmean, fmax/fmin, logaddexp2, signbit,
isposinf/isneginf/isreal, positive, frexp, isin, dist, gradient, trapezoid and cumulative_trapezoid,
cov/corrcoef, histogram, the bit shifts, and the window functions.

The differentiable ones are compositions of primitives (where, logaddexp, sums, products),
written so that their gradients are torch's formulas: fmax is `where(a >= b or b is nan, a,
b)`, which gives ties to the first argument as torch's derivative does; nansum masks nans to
zero; frexp's mantissa is x times a constant power of two.
"""
import builtins
import math
import warnings
from collections import namedtuple

from .. import dtypes as _dt
from .._tensor import Tensor, _wrap_dim
from ..core.grad_mode import no_grad
from ._checks import tensor_op, not_tensor, short_dtype_name
from ._rules import nondiff
from .creation import arange, linspace, tensor as _tensor, full
from .elementwise import (where, isnan, isinf, isfinite, logaddexp, log2, floor, exp2, abs,
                          sqrt, cos, clamp, convert, promote, _checked)
from .linalg import mm
from .reduce import sum, norm, cumsum, sort
from .shape import cat, diff, narrow, diag, select, full_beside
from .special import i0
from .stats import searchsorted, bincount
from .complex import conj

frexp_result = namedtuple("frexp", ["mantissa", "exponent"])
histogram_result = namedtuple("histogram", ["hist", "bin_edges"])


# ----------------------------------------------------------------- nan-aware reductions
@tensor_op
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum with nans counted as zero (their gradient is zero, as torch's)."""
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    x = where(isnan(input), 0, input) if input.dtype.is_floating_point else input
    return sum(x, dim, keepdim, dtype=dtype)


@tensor_op
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-nan entries (nan where there are none)."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {short_dtype_name(input.dtype)}")
    count = sum(~isnan(input), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


# ----------------------------------------------------------------- elementwise
def _fminmax(name, pick_first):
    @tensor_op(others=("other",))
    def op(input, other):
        if input.dtype.is_complex or other.dtype.is_complex:
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        a, b = promote(input, other, op=name)
        return where(pick_first(a, b) | isnan(b), a, b)
    op.__name__ = name
    op.__doc__ = (f"Elementwise {name[1:]}imum ignoring nans (nan only where both are); ties "
                  "take the first argument's gradient, as torch's.")
    return op


fmax = _fminmax("fmax", lambda a, b: a >= b)
fmin = _fminmax("fmin", lambda a, b: a <= b)


@tensor_op(others=("other",))
def logaddexp2(input, other):
    """log2(2**input + 2**other) without overflow."""
    res = _dt.result_type(input, other)
    if not (res.is_floating_point or res.is_complex):
        raise NotImplementedError(f'"logaddexp2_cpu" not implemented for '
                                  f"'{short_dtype_name(res)}'")
    x, y = convert(input, res), convert(other, res)
    return logaddexp(x * math.log(2), y * math.log(2)) / math.log(2)


_signbit = nondiff("signbit", lambda xp, x: xp.signbit(x))


@tensor_op
def signbit(input):
    """Whether the sign bit is set (True for -0.0)."""
    if input.dtype.is_complex:
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if not input.dtype.is_floating_point:
        return input < 0
    return _signbit(input)


def _inf_side(name, positive):
    @tensor_op
    def op(input):
        if input.dtype.is_complex:
            raise RuntimeError(f"{name} does not support complex inputs.")
        return isinf(input) & ((input > 0) if positive else (input < 0))
    op.__name__ = name
    return op


isposinf = _inf_side("isposinf", True)
isneginf = _inf_side("isneginf", False)


@tensor_op
def isreal(input):
    """True where the imaginary part is zero (everywhere for real dtypes)."""
    if input.dtype.is_complex:
        return input.imag == 0
    return full_beside(input, input.shape, True, _dt.bool)


@tensor_op
def positive(input):
    """`+input`: the tensor itself (torch refuses bool tensors)."""
    if input.dtype is _dt.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@tensor_op
def frexp(input):
    """(mantissa, exponent) with input = mantissa * 2**exponent, 0.5 <= |mantissa| < 1
    (0, inf, nan: themselves with exponent 0); the exponent is int32."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    with no_grad():
        plain = isfinite(input) & (input != 0)
        safe = where(plain, input, 1.0).detach()
        e = floor(log2(abs(safe))) + 1
        half = floor(e / 2)
        # two scalings: 2**-e alone overflows for the smallest subnormals
        m = safe * exp2(-half) * exp2(-(e - half))
        big, small = abs(m) >= 1, abs(m) < 0.5
        e = where(big, e + 1, where(small, e - 1, e))
        s1, s2 = exp2(-half).detach(), exp2(-(e - half)).detach()
        e = where(plain, e, 0)
    mantissa = where(plain, input * s1 * s2, input)
    return frexp_result(mantissa, convert(e, _dt.int32))


# ----------------------------------------------------------------- bit shifts
def _shift_impl(left):
    def impl(xp, x, y):
        info = xp.iinfo(x.dtype)
        bits = info.bits
        out_of_range = (y < 0) | (y >= bits)
        s = xp.where(out_of_range, xp.zeros_like(y), y)
        if left:
            shifted = xp.bitwise_left_shift(x, s)
            return xp.where(out_of_range, xp.zeros_like(shifted), shifted)
        shifted = xp.bitwise_right_shift(x, s)
        # out of range: the sign fills every bit (0 or -1; unsigned: 0)
        fill = xp.where(x < 0, xp.full_like(x, -1), xp.zeros_like(x)) if info.min < 0 else \
            xp.zeros_like(x)
        return xp.where(out_of_range, fill, shifted)
    return impl


_lshift = nondiff("bitwise_left_shift", _checked("bitwise_left_shift", _shift_impl(True),
                                                 quiet=False))
_rshift = nondiff("bitwise_right_shift", _checked("bitwise_right_shift", _shift_impl(False),
                                                  quiet=False))


def _shift(name, kernel, prim):
    def op(input, other):
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            raise not_tensor(name, "input", 1, input)
        x, y = promote(input, other, op=name)
        for v in (x, y):
            if isinstance(v, Tensor) and (v.dtype.is_floating_point or v.dtype.is_complex):
                raise NotImplementedError(f'"{kernel}_cpu" not implemented for '
                                          f"'{short_dtype_name(v.dtype)}'")
        if isinstance(x, Tensor) and x.dtype is _dt.bool:
            x = convert(x, _dt.uint8)
        x = x if isinstance(x, Tensor) else full_beside(y, (), x, y.dtype)
        y = y if isinstance(y, Tensor) else full_beside(x, (), y, x.dtype)
        return prim(x, convert(y, x.dtype))
    op.__name__ = name
    op.__doc__ = f"Elementwise {name[8:].replace('_', ' ')} of integers (`{'<<' if 'left' in name else '>>'}`)."
    return op


bitwise_left_shift = _shift("bitwise_left_shift", "lshift", _lshift)
bitwise_right_shift = _shift("bitwise_right_shift", "rshift", _rshift)


# ----------------------------------------------------------------- membership, distances
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each entry of `elements` occurs in `test_elements` (either may be a number):
    a sort and a binary search, not an all-pairs comparison."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - expected at "
                        "least one Tensor among 'elements' and 'test_elements'")
    like = elements if isinstance(elements, Tensor) else test_elements
    res = _dt.result_type(elements, test_elements)
    e = elements if isinstance(elements, Tensor) else full_beside(like, (), elements, res)
    s = test_elements if isinstance(test_elements, Tensor) else full_beside(
        like, (), test_elements, res)
    e, s = convert(e.detach(), res), convert(s.detach(), res)
    flat = sort(s.reshape(-1)).values
    if flat.shape[0] == 0:
        found = full_beside(e, e.shape, False, _dt.bool)
    else:
        pos = clamp(searchsorted(flat, e.reshape(-1)), max=flat.shape[0] - 1)
        found = (flat[pos] == e.reshape(-1)).reshape(e.shape)
    return ~found if invert else found


@tensor_op(others=("other",))
def dist(input, other, p=2):
    """The p-norm of input - other."""
    return norm(input - other, p)


# ----------------------------------------------------------------- integration
def _check_trapezoid(name, y, x, dx, dim):
    if not isinstance(y, Tensor):
        raise not_tensor(name, "y", 1, y)
    if x is not None and not isinstance(x, Tensor):
        raise not_tensor(name, "x", 2, x)
    if x is not None and dx is not None:
        raise TypeError(f"{name}(): pass either x or dx, not both")
    if y.dtype is _dt.bool or (x is not None and x.dtype is _dt.bool):
        raise RuntimeError(f"{name}: received a bool input for `{'y' if x is None else 'x` or `y'}"
                           "`, but bool is not supported")
    if not isinstance(dim, builtins.int) or isinstance(dim, builtins.bool):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    return _wrap_dim(dim, y.ndim)


def _x_spacing(name, y, x, d):
    """Differences of the sample points along `d`: a 1-D `x` runs along `d`, one with fewer
    dims than `y` gets leading ones (torch's broadcasting)."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        x = x.reshape(tuple(-1 if i == d else 1 for i in range(y.ndim)))
    elif x.ndim < y.ndim:
        x = x.reshape((1,) * (y.ndim - x.ndim) + tuple(x.shape))
    n = x.shape[d]
    return narrow(x, d, 1, builtins.max(n - 1, 0)) - narrow(x, d, 0, builtins.max(n - 1, 0))


def _pairs(y, d):
    """y's neighbouring samples summed along `d` (one fewer entry)."""
    n = builtins.max(y.shape[d] - 1, 0)
    return narrow(y, d, builtins.min(1, y.shape[d]), n) + narrow(y, d, 0, n)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along `dim`, with sample points `x` or a spacing `dx` (1)."""
    d = _check_trapezoid("trapezoid", y, x, dx, dim)
    if x is not None:
        return sum(_x_spacing("trapezoid", y, x, d) * _pairs(y, d), d) / 2
    if y.shape[d] == 0:
        return sum(y, d) * 0
    h = 1 if dx is None else dx
    return (sum(y, d) - (select(y, d, 0) + select(y, d, -1)) * 0.5) * h


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral along `dim` (one entry fewer than `y`)."""
    d = _check_trapezoid("cumulative_trapezoid", y, x, dx, dim)
    if x is not None:
        return cumsum(_x_spacing("cumulative_trapezoid", y, x, d) / 2.0 * _pairs(y, d), d)
    h = 1 if dx is None else dx
    return cumsum(h / 2.0 * _pairs(y, d), d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Central differences along each of `dim` (all dims by default), one-sided ones of
    order `edge_order` at the ends, as torch.gradient (NumPy's formulas): `spacing` is one
    number for every dim, one number per dim, or one tensor of coordinates per dim."""
    if not isinstance(input, Tensor):
        raise TypeError(f"gradient(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not isinstance(edge_order, builtins.int) or isinstance(edge_order, builtins.bool):
        raise TypeError(f"gradient(): argument 'edge_order' must be int, not "
                        f"{type(edge_order).__name__}")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")

    dims = list(range(input.ndim)) if dim is None else (
        [dim] if isinstance(dim, builtins.int) else list(dim))
    dims = [_wrap_dim(d, input.ndim) for d in dims]
    if isinstance(spacing, (builtins.int, builtins.float)) or (
            isinstance(spacing, Tensor) and spacing.ndim == 0):
        spacing = [spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        given = ("since dim argument was not given" if dim is None else
                 f"since dim argument was given as {dims}")
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a "
                           f"list of length equal to 'self.dim() = {input.ndim}', {given}, but "
                           f"got a list of length {len(spacing)}")
    for d, h in zip(dims, spacing):
        if isinstance(h, Tensor) and h.ndim != 1:
            raise RuntimeError("torch.gradient expected each element of spacing to have one "
                               f"dimension, but got an element with {h.ndim} dimensions!")
        if isinstance(h, Tensor) and h.shape[0] != input.shape[d]:
            raise RuntimeError(f"torch.gradient expected the coordinates along dim {d} to have "
                               f"{input.shape[d]} entries (the input's size there), but got "
                               f"{h.shape[0]}")
    if any(input.shape[d] < edge_order + 1 for d in dims):
        raise RuntimeError("torch.gradient expected each dimension size to be at least "
                           "edge_order+1")
    return tuple(_gradient_along(input, d, h, edge_order) for d, h in zip(dims, spacing))


def _gradient_along(f, d, h, edge_order):
    n = f.shape[d]
    at = lambda start, length: narrow(f, d, start, length)     # noqa: E731
    if isinstance(h, Tensor) and h.ndim == 1:       # coordinates: non-uniform spacing
        dx = diff(convert(h, f.dtype) if not h.dtype.is_floating_point else h)
        step = lambda start, length: narrow(dx, 0, start, length).reshape(   # noqa: E731
            tuple(length if i == d else 1 for i in range(f.ndim)))
        dx1, dx2 = step(0, n - 2), step(1, n - 2)
        interior = (-dx2 / (dx1 * (dx1 + dx2)) * at(0, n - 2) + (dx2 - dx1) / (dx1 * dx2) *
                    at(1, n - 2) + dx1 / (dx2 * (dx1 + dx2)) * at(2, n - 2))
        if edge_order == 1:
            first = (at(1, 1) - at(0, 1)) / step(0, 1)
            last = (at(n - 1, 1) - at(n - 2, 1)) / step(n - 2, 1)
        else:
            a, b = step(0, 1), step(1, 1)
            first = (-(2 * a + b) / (a * (a + b)) * at(0, 1) + (a + b) / (a * b) * at(1, 1) -
                     a / (b * (a + b)) * at(2, 1))
            a, b = step(n - 3, 1), step(n - 2, 1)
            last = (b / (a * (a + b)) * at(n - 3, 1) - (b + a) / (a * b) * at(n - 2, 1) +
                    (2 * b + a) / (b * (a + b)) * at(n - 1, 1))
    else:
        h = h.item() if isinstance(h, Tensor) else h
        interior = (at(2, n - 2) - at(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (at(1, 1) - at(0, 1)) / h
            last = (at(n - 1, 1) - at(n - 2, 1)) / h
        else:
            first = (-1.5 * at(0, 1) + 2 * at(1, 1) - 0.5 * at(2, 1)) / h
            last = (0.5 * at(n - 3, 1) - 2 * at(n - 2, 1) + 1.5 * at(n - 1, 1)) / h
    return cat([first, interior, last], d)


def deprecated_range(start, end, step=1, *, dtype=None, device=None, requires_grad=False):
    """Deprecated torch.range: `start` to `end` *inclusive* (the default dtype unless given)."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its "
                  "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
                  "which produces values in [start, end).", UserWarning, stacklevel=2)
    count = builtins.int(math.floor((end - start) / step)) + 1
    out = arange(count, dtype=_dt.float64, device=device) * step + start
    return convert(out, dtype or _dt.get_default_dtype()).requires_grad_(requires_grad)


# ----------------------------------------------------------------- statistics
def _nonnegative(name, w):
    """Weights are checked where they are plain values (inside a transform they may be
    batched, and a data-dependent check cannot run there)."""
    if w._lvl is None and w.numel() and bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def _no_freedom():
    warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than "
                  "the number of observations.", UserWarning, stacklevel=3)


@tensor_op(optional=("fweights", "aweights"))
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the rows (variables) over the columns (observations), with integer
    frequency weights and float observation weights, as torch's."""
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input.dtype is _dt.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = convert(x, _dt.get_default_dtype())
    n_obs = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.ndim > 1 or fweights.numel() != n_obs:
            raise RuntimeError(f"cov(): expected fweights to have one or fewer dimensions and "
                               f"the same number of elements as observations ({n_obs})")
        if fweights.dtype.is_floating_point or fweights.dtype.is_complex:
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got "
                               f"fweights with {short_dtype_name(fweights.dtype)} dtype")
        _nonnegative("fweights", fweights)
        w = fweights
    if aweights is not None:
        if aweights.ndim > 1 or aweights.numel() != n_obs:
            raise RuntimeError(f"cov(): expected aweights to have one or fewer dimensions and "
                               f"the same number of elements as observations ({n_obs})")
        if not aweights.dtype.is_floating_point:
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {short_dtype_name(aweights.dtype)} dtype")
        _nonnegative("aweights", aweights)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = n_obs
        avg = x.mean(1)
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if isinstance(norm_factor, Tensor):
        if norm_factor._lvl is None and bool(norm_factor <= 0):
            _no_freedom()
        norm_factor = where(norm_factor <= 0, 0, norm_factor)
    elif norm_factor <= 0:
        _no_freedom()
        norm_factor = 0
    xc = x - avg.unsqueeze(1)
    other = (xc if w is None else xc * w).mT
    c = mm(xc, conj(other) if other.dtype.is_complex else other)
    return (c / norm_factor).squeeze()


@tensor_op
def corrcoef(input):
    """Pearson correlation coefficients of the rows, clipped to [-1, 1] for real input."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = diag(c)
    std = sqrt(d.real if d.dtype.is_complex else d)
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    return c if c.dtype.is_complex else clamp(c, -1, 1)


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """Counts of `input` in `bins` equal bins over `range` (the data's min..max by default),
    or in the bins between the given edges; (hist, bin_edges)."""
    if not isinstance(input, Tensor):
        raise not_tensor("histogram", "input", 1, input)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"histogramdd" not implemented for '
                                  f"'{short_dtype_name(input.dtype)}'")
    x = input.detach().reshape(-1)
    if isinstance(bins, Tensor):
        if bins.ndim != 1 or bins.shape[0] < 1:
            raise RuntimeError("torch.histogram(): bins tensor should have one dimension and at "
                               "least 1 entry")
        if bins.dtype is not input.dtype:
            raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the "
                               f"same dtype, but got input {input.dtype} and bins {bins.dtype}")
        edges = bins.detach()
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins}")
        if range is not None:
            lo, hi = builtins.float(range[0]), builtins.float(range[1])
        elif x.numel():
            lo, hi = builtins.float(x.min()), builtins.float(x.max())
        else:
            lo, hi = 0.0, 0.0
        if lo > hi:
            raise RuntimeError(f"torch.histogram(): max must be larger than min, but got "
                               f"min {lo} max {hi}")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5     # as NumPy and torch
        edges = linspace(lo, hi, bins + 1, dtype=input.dtype)
    nb = edges.shape[0] - 1
    inside = (x >= edges[0]) & (x <= edges[-1])
    idx = clamp(searchsorted(edges, x, right=True) - 1, 0, builtins.max(nb - 1, 0))
    wts = where(inside, 1.0 if weight is None else weight.detach().reshape(-1), 0.0)
    idx = where(inside, idx, 0)
    hist = bincount(idx, wts.to(_dt.float64), minlength=nb)[:nb].to(input.dtype)
    if density:
        hist = hist / (hist.sum() * diff(edges))
    return histogram_result(hist, edges)


# ----------------------------------------------------------------- window functions
def _window(name, values):
    def fn(window_length, periodic=True, *args, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False, **params):
        d = _dt.get_default_dtype() if dtype is None else dtype
        if not d.is_floating_point:
            raise RuntimeError(f"{name} expects floating point dtypes, got: {d}")
        if not isinstance(window_length, builtins.int) or window_length < 0:
            raise RuntimeError(f"{name} requires non-negative window length, got "
                               f"window_length={window_length}")
        if window_length <= 1:
            out = full((window_length,), 1.0, dtype=d, device=device)
        else:
            n = window_length + 1 if periodic else window_length
            k = arange(window_length, dtype=_dt.float64, device=device)
            out = convert(values(k, n - 1, *args, **params), d)
        return out.requires_grad_(requires_grad)
    fn.__name__ = name
    fn.__doc__ = (f"torch's {name.replace('_', ' ')}: `periodic` (the default) drops the last "
                  "point of a window one longer, as for spectral analysis.")
    return fn


def _cosines(a):
    def values(k, m):
        return builtins.sum(((-1) ** i) * c * cos(2 * math.pi * i * k / m) for i, c in
                            enumerate(a))
    return values


hann_window = _window("hann_window", _cosines((0.5, 0.5)))
blackman_window = _window("blackman_window", _cosines((0.42, 0.5, 0.08)))
bartlett_window = _window("bartlett_window", lambda k, m: 1 - abs(2 * k / m - 1))
hamming_window = _window("hamming_window", lambda k, m, alpha=0.54, beta=0.46:
                         alpha - beta * cos(2 * math.pi * k / m))
kaiser_window = _window("kaiser_window", lambda k, m, beta=12.0:
                        i0(beta * sqrt(clamp(1 - (2 * k / m - 1) ** 2, min=0))) /
                        i0(_tensor(beta, dtype=_dt.float64)))
