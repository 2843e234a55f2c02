"""Special functions (torch.special and their torch.* names): gamma family, error-function
inverses, the normal distribution's functions, Bessel I0/I1.

NumPy has none of lgamma, digamma, polygamma, erfinv, ndtri or i1, so their impls are written
here on the backend's elementwise ops (vectorised; no loop over elements): Lanczos for lgamma,
recurrence plus asymptotic series for digamma and the Hurwitz zeta behind polygamma, a rational
start polished by Newton steps for erfinv, Cephes' Chebyshev expansions for I0/I1. Each is
accurate to a few ulp in float64 (tests compare with torch at 1e-12). The derivative rules are
the textbook ones, written with these same ops, so every order of derivative works.
"""
import math

from ..backends import silent, backend_of, chunkwise
from ._rules import elementwise
from .registry import primitive
from .._tensor import Tensor
from .elementwise import (_checked, unary, binary, exp, log, sign, abs, where, convert, promote,
                          _float_unary)
from ._checks import tensor_op, short_dtype_name, not_tensor, not_implemented

_HALF_LOG_2PI = 0.9189385332046727
_SQRT_HALF = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327


def _lgamma_scalar(v):
    """math.lgamma with torch's values at its poles and infinities (inf) instead of raising."""
    if math.isinf(v) or v <= 0 and v == math.floor(v):
        return math.inf
    return math.lgamma(v)


@silent
def _lgamma_impl(xp, x):
    # the C library's lgamma (what torch calls), elementwise
    return backend_of(x).map_scalar(_lgamma_scalar, x)


_DIGAMMA_ASYMPT = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


@silent
def _digamma_impl(xp, x):
    neg = x < 0.5
    y = xp.where(neg, 1 - x, x)
    acc = xp.zeros_like(y)
    for _ in range(10):                     # psi(y) = psi(y + 1) - 1 / y, up to y >= 10
        low = y < 10
        acc = acc - xp.where(low, 1 / xp.where(low, y, 1), 0)
        y = xp.where(low, y + 1, y)
    inv2 = 1 / (y * y)
    series = xp.zeros_like(y)
    for c in reversed(_DIGAMMA_ASYMPT):
        series = (series + c) * inv2
    psi = acc + xp.log(y) - 0.5 / y - series
    # reflection: psi(1 - x) - psi(x) = pi cot(pi x)
    psi = xp.where(neg, psi - math.pi / xp.tan(math.pi * x), psi)
    pole = (x <= 0) & (x == xp.floor(x))
    psi = xp.where(pole & (x == 0), -xp.inf, xp.where(pole, xp.nan, psi))  # torch: -inf at 0
    return xp.astype(psi, x.dtype, copy=False)


# Bernoulli numbers B_2k / (2k)! for the Euler-Maclaurin tail of the Hurwitz zeta
_ZETA_B = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160, -691 / 1307674368000,
           1 / 74724249600, -3617 / 10670622842880000, 43867 / 5109094217170944000)


@silent
def _zeta_impl(xp, s, q):
    """Hurwitz zeta(s, q) for s > 1 (Euler-Maclaurin after shifting q past 9)."""
    n = 9
    total = xp.zeros_like(q + s)
    for k in range(n):
        total = total + (q + k) ** -s
    a = q + n
    total = total + a ** (1 - s) / (s - 1) + 0.5 * a ** -s
    term = s * a ** (-s - 1)      # s (s+1) ... / a^(s + 2k - 1), built up pairwise
    fact = xp.ones_like(term)
    for j, b in enumerate(_ZETA_B):
        total = total + b * term * fact
        fact = fact * (s + 2 * j + 1) * (s + 2 * j + 2) / (a * a)
    out = xp.where(s == 1, xp.inf, total)
    out = xp.where((q <= 0) & (q == xp.floor(q)), xp.inf, out)
    return xp.astype(out, xp.result_type(s, q), copy=False)


def _polygamma_impl(xp, x, n):
    if n == 0:
        return _digamma_impl(xp, x)
    sign_ = -1.0 if n % 2 == 0 else 1.0
    zeta = _zeta_impl(xp, xp.asarray(n + 1.0, dtype=x.dtype), x)
    return xp.astype(sign_ * math.factorial(n) * zeta, x.dtype, copy=False)


lgamma = _float_unary(unary("lgamma", _lgamma_impl, lambda ctx: digamma(ctx.x)))
digamma = _float_unary(unary("digamma", _digamma_impl, lambda ctx: polygamma(1, ctx.x)))
_polygamma = primitive("polygamma", silent(_polygamma_impl), save=(0,),
                       vjp=(lambda ctx, g, n: g * polygamma(n + 1, ctx.x),),
                       jvp=(lambda ctx, t, n: t * polygamma(n + 1, ctx.x),),
                       batch=elementwise)


def polygamma(n, input):
    """The n-th derivative of digamma: `torch.polygamma(1, x)` is the trigamma function."""
    if not isinstance(input, Tensor):
        raise TypeError(f"polygamma(): argument 'input' (position 2) must be Tensor, not "
                        f"{type(input).__name__}")
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n (or a non-integer n), "
                           f"got {n!r}")
    if not input.dtype.is_differentiable:
        from .. import dtypes as _dt
        input = convert(input, _dt.get_default_dtype())
    return _polygamma(input, n=n)


# ----------------------------------------------------------------- regularized incomplete gamma
# NOTE [incomplete gamma]
# P(a, x) = igamma and Q(a, x) = 1 - P = igammac, as torch's (Cephes'): the power series of P
# for x below a, Legendre's continued fraction of Q above it, and the series of Q (DLMF 8.7.3)
# for x <= 1.1, each chosen where it does not cancel. Each runs in float64 on the whole array,
# elements that do not use it reading harmless stand-ins, until every element has converged
# (Cephes' asymptotic expansion for large a near x = a is not used: the series converge there
# too, in O(sqrt(a)) terms). torch differentiates only with respect to x.
_MACHEP = 1.11022302462515654042e-16
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360)


def _until_converged(xp, step, state, max_terms=100000):
    """Run `step(state) -> (state, done)` in blocks of 16 until every element is done."""
    for _ in range(0, max_terms, 16):
        for _ in range(16):
            state, done = step(state)
        if bool(xp.all(done)):
            break
    return state


def _igam_fac(xp, a, x):
    """x^a e^-x / Gamma(a); for a >= 15 Stirling's series takes the a log a terms out
    analytically, so that large a keep their digits."""
    big = a >= 15
    ab = xp.where(big, a, 15.0)
    d = (x - ab) / ab
    power = xp.where(xp.abs(d) < 0.5, xp.log1p(d), xp.log(x / ab)) - d
    inv, corr = 1 / ab, xp.zeros_like(ab)
    for c in reversed(_STIRLING):
        corr = corr * inv * inv + c
    big_log = ab * power + 0.5 * xp.log(ab) - _HALF_LOG_2PI - corr * inv
    small_log = a * xp.log(x) - x - _lgamma_impl(xp, xp.where(big, 1.0, a))
    return xp.exp(xp.where(big, big_log, small_log))


def _igam_series(xp, a, x):
    """P(a, x) by its power series (x not far above a)."""
    def step(s):
        r, c, total = s
        r = r + 1
        c = c * x / r
        return (r, c, total + c), c <= _MACHEP * total
    _, _, total = _until_converged(xp, step, (a, xp.ones_like(a), xp.ones_like(a)))
    return total * _igam_fac(xp, a, x) / a


def _igamc_fraction(xp, a, x):
    """Q(a, x) by its continued fraction (x > 1.1, x above a)."""
    big, biginv = 4.503599627370496e15, 2.22044604925031308085e-16

    def step(s):
        c, y, z, pkm2, pkm1, qkm2, qkm1, ans, done = s
        c, y, z = c + 1, y + 1, z + 2
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        r = pk / xp.where(qk != 0, qk, 1.0)
        t = xp.where(qk != 0, xp.abs((ans - r) / r), 1.0)
        ans = xp.where(done | (qk == 0), ans, r)
        done = done | (t <= _MACHEP)
        scale = 1 - xp.astype(xp.abs(pk) > big, pk.dtype) * (1 - biginv)
        return (c, y, z, pkm1 * scale, pk * scale, qkm1 * scale, qk * scale, ans, done), done
    y = 1 - a
    z = x + y + 1
    start = (xp.zeros_like(a), y, z, xp.ones_like(a), x + 1, x, z * x, (x + 1) / (z * x),
             xp.zeros(a.shape, dtype=xp.bool))
    ans = _until_converged(xp, step, start)[7]
    return ans * _igam_fac(xp, a, x)


def _igamc_series(xp, a, x):
    """Q(a, x) by DLMF 8.7.3 (x <= 1.1), free of the cancellation in 1 - P."""
    def step(s):
        n, fac, total = s
        n = n + 1
        fac = fac * -x / n
        term = fac / (a + n)
        return (n, fac, total + term), xp.abs(term) <= _MACHEP * xp.abs(total + term)
    zero = xp.zeros_like(a)
    _, _, total = _until_converged(xp, step, (zero, xp.ones_like(a), zero))
    logx = xp.log(x)
    return -xp.expm1(a * logx - _lgamma_impl(xp, a + 1)) - \
        xp.exp(a * logx - _lgamma_impl(xp, a)) * total


def _igamma_impl(xp, a, x, upper=False):
    dtype = xp.result_type(a, x)
    a, x = xp.broadcast_arrays(xp.astype(a, xp.float64), xp.astype(x, xp.float64))
    one = xp.ones_like(a)
    ok = (a > 0) & (x > 0) & ~xp.isinf(a) & ~xp.isinf(x)
    a_, x_ = xp.where(ok, a, one), xp.where(ok, x, one)
    # Cephes' choice: the continued fraction above x = max(a, 1.1), the series of Q at small x
    # unless a is large enough for 1 - P to keep the digits, the series of P elsewhere
    fraction = (x_ > 1.1) & (x_ >= a_)
    small_q = (x_ <= 1.1) & (x_ > 1.0) & (x_ > a_) if not upper else \
        (x_ <= 1.1) & xp.where(x_ <= 0.5, -0.4 / xp.log(x_) >= a_, x_ * 1.1 >= a_)
    series = ~fraction & ~small_q
    p = _igam_series(xp, xp.where(series, a_, 1.0), xp.where(series, x_, 0.5))
    q = _igamc_fraction(xp, xp.where(fraction, a_, 1.0), xp.where(fraction, x_, 2.0))
    qs = _igamc_series(xp, xp.where(small_q, a_, 1.0), xp.where(small_q, x_, 0.5))
    out_q = xp.where(fraction, q, xp.where(small_q, qs, 1 - p))
    out = out_q if upper else xp.where(series, p, 1 - out_q)
    # the edges, as torch's: P(0, x > 0) = 1, P(a, inf) = 1, P(a, 0) = 0, P(inf, x) = 0
    lower = xp.astype(xp.isinf(x) | (a == 0), xp.float64)
    out = xp.where(ok, out, 1 - lower if upper else lower)
    nan = (a < 0) | (x < 0) | xp.isnan(a) | xp.isnan(x) | ((a == 0) & (x == 0)) | \
        (xp.isinf(a) & xp.isinf(x))
    return xp.astype(xp.where(nan, xp.nan, out), dtype, copy=False)


def _igamma_dx(ctx, g, upper=False):
    # torch's formula: d P / dx = x^(a-1) e^-x / Gamma(a), and dQ/dx its negative
    d = exp((ctx.x - 1) * log(ctx.y) - ctx.y - lgamma(ctx.x))
    return -g * d if upper else g * d


def _igamma_da(ctx, g, upper=False):
    raise NotImplementedError(f"the derivative for '{'igammac' if upper else 'igamma'}: input' "
                              "is not implemented.")


_igamma = primitive("igamma", _checked("igamma", chunkwise(_igamma_impl)),
                    vjp=(_igamma_da, _igamma_dx),
                    jvp=(_igamma_da, _igamma_dx), batch=elementwise,
                    node_name=lambda node: "IgammacBackward0" if node.params["upper"]
                    else "IgammaBackward0")


def _incomplete_gamma(op, input, other, upper):
    for i, (arg, v) in enumerate((("input", input), ("other", other))):
        if not isinstance(v, Tensor):
            raise not_tensor(op, arg, i + 1, v)
    a, x = promote(input, other, op=op)
    if not a.dtype.is_floating_point:
        raise not_implemented(f"{'igammac' if upper else 'igamma'}_cpu", a.dtype)
    return _igamma(a, x, upper=upper)


def igamma(input, other):
    """The regularized lower incomplete gamma function P(a=input, x=other) (differentiable
    with respect to `other` only, as torch's).

    >>> igamma(tensor([1.0]), tensor([2.0]))     # 1 - exp(-2)
    tensor([0.8647])
    """
    return _incomplete_gamma("igamma", input, other, False)


def igammac(input, other):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _incomplete_gamma("igammac", input, other, True)


def gammainc(input, other):
    return _incomplete_gamma("special_gammainc", input, other, False)


def gammaincc(input, other):
    return _incomplete_gamma("special_gammaincc", input, other, True)


# ----------------------------------------------------------------- erfinv / erfc
# Giles' single-precision approximation as the start, then two Newton steps on erf
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(xp, coeffs, w):
    p = xp.full_like(w, coeffs[0])
    for c in coeffs[1:]:
        p = p * w + c
    return p


def _erfcinv(xp, q):
    """x >= 0 with erfc(x) = q, for q in (0, 1]: Giles' start (w = -log(q (2 - q)) formed from q,
    so a tiny q keeps its digits), the asymptotic x^2 = -log(q x sqrt(pi)) in the far tail, then
    Newton steps on log erfc (well scaled however small q is)."""
    w = -xp.log(q * (2 - q))
    central = _horner(xp, _ERFINV_CENTRAL, w - 2.5)
    tail = _horner(xp, _ERFINV_TAIL, xp.sqrt(xp.where(w >= 5, w, 5)) - 3)
    x = xp.where(w < 5, central, tail) * (1 - q)
    far = w > 16
    qf = xp.where(far, q, 1e-8)
    xf = xp.sqrt(-xp.log(qf))
    for _ in range(4):
        xf = xp.sqrt(-xp.log(qf * xf * 1.7724538509055159))
    x = xp.where(far, xf, x)
    for _ in range(3):      # d log erfc(x) / dx = -2/sqrt(pi) exp(-x^2) / erfc(x)
        c = _erfc_impl(xp, x)
        ok = (c > 0) & (x < 26)
        cs = xp.where(ok, c, 1.0)
        slope = 1.1283791670955126 * xp.exp(-xp.where(ok, x, 0) ** 2) / cs
        x = xp.where(ok, x + (xp.log(cs) - xp.log(xp.where(ok, q, 1.0))) / slope, x)
    return xp.where(q == 0, xp.inf, x)


@silent
def _erfinv_impl(xp, y):
    from .elementwise import _erf
    a = xp.abs(y)
    # |y| < 0.5: Giles' central start and Newton on erf (tiny y keep their digits);
    # otherwise erfinv(y) = erfcinv(1 - |y|), with 1 - |y| exact
    w = -xp.log((1 - a) * (1 + a))
    x = _horner(xp, _ERFINV_CENTRAL, w - 2.5) * a
    for _ in range(2):
        x = x - (_erf(xp, x) - a) / (1.1283791670955126 * xp.exp(-x * x))
    x = xp.where(a < 0.5, x, _erfcinv(xp, xp.where(a < 0.5, 0.5, 1 - a)))
    return xp.astype(xp.where(a > 1, xp.nan, x * xp.sign(y)), y.dtype, copy=False)


@silent
def _ndtri_impl(xp, p):
    # ndtri(p) = -sqrt(2) erfcinv(2p): no 2p - 1 that would lose the digits of a small p
    small = p < 0.5
    q = xp.where(small, 2 * p, 2 * (1 - p))
    x = xp.where(q >= 1, -_erfinv_impl(xp, 1 - xp.where(q >= 1, q, 1.0)),
                 _erfcinv(xp, xp.where(q >= 1, 0.5, q)))
    x = -x / _SQRT_HALF
    x = xp.where(small, x, -x)
    return xp.astype(xp.where((p < 0) | (p > 1), xp.nan, x), p.dtype, copy=False)


@silent
def _erfc_impl(xp, x):
    return backend_of(x).map_scalar(math.erfc, x)


erfinv = _float_unary(unary("erfinv", _erfinv_impl,
                            lambda ctx: 0.886226925452758 * exp(ctx.out * ctx.out),
                            save_input=False, save_output=True))
erfc = _float_unary(unary("erfc", _erfc_impl,
                          lambda ctx: -1.1283791670955126 * exp(-ctx.x * ctx.x)))


# ----------------------------------------------------------------- the normal distribution


@tensor_op
def ndtr(input):
    """The standard normal CDF, 0.5 * erfc(-x / sqrt(2)) (accurate in both tails)."""
    input = input if input.dtype.is_differentiable else _float_unary_input(input)
    return 0.5 * erfc(-input * _SQRT_HALF)


ndtri = _float_unary(unary("ndtri", _ndtri_impl,
                           lambda ctx: 2.5066282746310002 * exp(0.5 * ctx.out * ctx.out),
                           save_input=False, save_output=True, node_name="SpecialNdtriBackward0"))


@silent
def _log_ndtr_impl(xp, x):
    cdf = 0.5 * backend_of(x).map_scalar(math.erfc, -x * _SQRT_HALF)
    # far in the left tail: log Phi(x) ~ -x^2/2 - log(-x) - log sqrt(2 pi) + log(series)
    far = x < -20
    xs = xp.where(far, x, -20.0)
    inv2 = 1 / (xs * xs)
    series = 1 - inv2 * (1 - 3 * inv2 * (1 - 5 * inv2 * (1 - 7 * inv2)))
    tail = -0.5 * xs * xs - xp.log(-xs) - _HALF_LOG_2PI + xp.log(series)
    # right half: log(1 - upper tail) keeps the digits that log(cdf) near 1 would lose
    upper = 0.5 * backend_of(x).map_scalar(math.erfc, x * _SQRT_HALF)
    body = xp.where(x > 0, xp.log1p(-upper), xp.log(xp.where(far, 1.0, cdf)))
    return xp.astype(xp.where(far, tail, body), x.dtype, copy=False)


# d/dx log Phi(x) = phi(x) / Phi(x) = exp(-x^2/2 - log Phi(x)) / sqrt(2 pi): stable everywhere
log_ndtr = _float_unary(unary(
    "log_ndtr", _log_ndtr_impl,
    lambda ctx: _INV_SQRT_2PI * exp(-0.5 * ctx.x * ctx.x - ctx.out), save_output=True,
    node_name="SpecialLogNdtrBackward0"))


# ----------------------------------------------------------------- Bessel I0 and I1 (Cephes)
_I0_A = (-4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
         1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
         -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
         9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
         -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
         1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
         -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
         1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
         -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
         1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1)
_I0_B = (-7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
         3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
         1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
         -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
         7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
         -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
         3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
         2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
         8.04490411014108831608e-1)
_I1_A = (2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
         -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
         3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
         -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9,
         9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
         -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
         4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
         -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
         2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
         -1.76416518357834055153e-1, 2.52587186443633654823e-1)
_I1_B = (7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
         -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
         -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
         4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
         -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
         3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
         -3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
         -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
         7.78576235018280120474e-1)


def _chbevl(xp, x, coeffs):
    b0 = xp.full_like(x, coeffs[0])
    b1 = xp.zeros_like(x)
    b2 = b1
    for c in coeffs[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


@silent
def _i0e_impl(xp, x):
    a = xp.abs(x)
    small = _chbevl(xp, a / 2.0 - 2.0, _I0_A)
    large = _chbevl(xp, 32.0 / xp.where(a > 8, a, 8.0) - 2.0, _I0_B) / xp.sqrt(
        xp.where(a > 8, a, 8.0))
    return xp.astype(xp.where(a <= 8, small, large), x.dtype, copy=False)


@silent
def _i1e_impl(xp, x):
    a = xp.abs(x)
    small = _chbevl(xp, a / 2.0 - 2.0, _I1_A) * a
    large = _chbevl(xp, 32.0 / xp.where(a > 8, a, 8.0) - 2.0, _I1_B) / xp.sqrt(
        xp.where(a > 8, a, 8.0))
    return xp.astype(xp.where(a <= 8, small, large) * xp.sign(x), x.dtype, copy=False)


# I0e' = I1e - sign(x) I0e; I1e' = I0e - sign(x) I1e - I1e / x, whose last term tends to 1/2 at 0
i0e = _float_unary(unary("i0e", _i0e_impl, lambda ctx: i1e(ctx.x) - sign(ctx.x) * ctx.out,
                         save_output=True, node_name="SpecialI0EBackward0"))


def _i1e_deriv(ctx):
    x, out = ctx.x, ctx.out
    over_x = where(x == 0, 0.5, out / where(x == 0, 1.0, x))
    return i0e(x) - sign(x) * out - over_x


i1e = _float_unary(unary("i1e", _i1e_impl, _i1e_deriv, save_output=True,
                         node_name="SpecialI1EBackward0"))


@tensor_op
def i0(input):
    """Modified Bessel function of the first kind, order 0."""
    input = input if input.dtype.is_differentiable else _float_unary_input(input)
    return i0e(input) * exp(abs(input))


@tensor_op
def i1(input):
    """Modified Bessel function of the first kind, order 1."""
    input = input if input.dtype.is_differentiable else _float_unary_input(input)
    return i1e(input) * exp(abs(input))


# ----------------------------------------------------------------- small compositions
@tensor_op
def expit(input):
    from .elementwise import sigmoid
    return sigmoid(input)


def _entr_impl(xp, x):
    """-x log x: nan at nan, 0 at 0, -inf for x < 0 (torch's kernel)."""
    pos = xp.where(x > 0, x, xp.ones_like(x))
    rest = xp.where(x == 0, xp.zeros_like(x), xp.full_like(x, -math.inf))
    return xp.where(xp.isnan(x), x, xp.where(x > 0, -pos * xp.log(pos), rest))


# torch's rule, -(1 + log x): inf at 0, nan below (no derivative there), not 0
_entr = unary("entr", _entr_impl, lambda ctx: -(1 + log(ctx.x)),
              node_name="SpecialEntrBackward0")


@tensor_op
def entr(input):
    """-x log x elementwise: 0 at 0, -inf for x < 0 (as torch.special.entr)."""
    x = input if input.dtype.is_differentiable else _float_unary_input(input)
    return _entr(x)


def _float_unary_input(x):
    from .. import dtypes as _dt
    return convert(x, _dt.get_default_dtype())


def _xlog1py_impl(xp, x, y):
    return xp.where((x == 0) & ~xp.isnan(y), xp.zeros((), dtype=x.dtype), x * xp.log1p(y))


# torch's rules, as xlogy's: d/dx is log1p(y) at x = 0 too, 0 where x = 0 and y <= -1
_xlog1py = binary("xlog1py", _checked("xlog1py", _xlog1py_impl),
                  lambda ctx, g: where((ctx.x == 0) & (ctx.y <= -1), 0.0, xlog1py(g, ctx.y)),
                  lambda ctx, g: g * ctx.x / (1 + ctx.y), node_name="SpecialXlog1PyBackward0")
def xlog1py(input, other):
    """input * log1p(other), 0 where input is 0."""
    from .elementwise import _as_tensor
    x, y = promote(input, other, float_only=True, op="xlog1py")
    dtype = (x if isinstance(x, Tensor) else y).dtype
    x, y = (v if isinstance(v, Tensor) else _as_tensor(v).to(dtype) for v in (x, y))
    return _xlog1py(x, y)


@tensor_op
def sinc(input):
    """sin(pi x) / (pi x), 1 at 0."""
    from .elementwise import sin
    x = input if input.dtype.is_differentiable else _float_unary_input(input)
    px = math.pi * where(x == 0, 1.0, x)
    return where(x == 0, 1.0, sin(px) / px)


@tensor_op
def mvlgamma(input, p):
    """The log of the multivariate gamma function of dimension p (sum of p lgammas)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f'"mvlgamma" not implemented for \'{short_dtype_name(input.dtype)}\'')
    if input._lvl is None and input.numel() and not bool((input > (p - 1) / 2).all()):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    total = lgamma(input)
    for i in range(1, p):
        total = total + lgamma(input - i / 2)
    return total + p * (p - 1) * math.log(math.pi) / 4


multigammaln = mvlgamma


__all__ = ["lgamma", "digamma", "polygamma", "erfinv", "erfc", "ndtr", "ndtri", "log_ndtr",
           "i0", "i0e", "i1", "i1e", "expit", "entr", "xlog1py", "sinc", "multigammaln",
           "mvlgamma", "igamma", "igammac", "gammainc", "gammaincc"]

