"""Gamma(concentration, rate), with the standard-gamma sampler and its implicit gradient."""

from ..autograd.function import Function
from ..core import grad_mode
from ..ops.creation import rand, randn
from ..ops.elementwise import where, xlogy
from ..ops.special import digamma, lgamma
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, finfo_tiny

__all__ = ["Gamma"]


def _sample_standard_gamma(alpha):
    """Gamma(alpha, 1) draws by Marsaglia & Tsang's rejection method (alpha < 1 boosted by
    alpha + 1 and u ** (1 / alpha)), written with arraygrad's rand/randn."""
    shape, dtype = tuple(alpha.shape), alpha.dtype
    boosted = alpha + (alpha < 1).to(dtype)
    d = boosted - 1.0 / 3.0
    c = 1.0 / (9.0 * d).sqrt()
    result = alpha * 0
    todo = alpha == alpha         # all True (NaN alpha: rejected, result stays 0)
    while bool(todo.any()):
        x = randn(*shape, dtype=dtype)
        v = (1 + c * x) ** 3
        u = rand(*shape, dtype=dtype)
        safe_v = where(v > 0, v, v * 0 + 1)
        accept = todo & (v > 0) & (u.log() < 0.5 * x * x + d - d * safe_v + d * safe_v.log())
        result = where(accept, d * safe_v, result)
        todo = todo & ~accept
    small = alpha < 1
    u = rand(*shape, dtype=dtype)
    safe_alpha = where(small, alpha, alpha * 0 + 1)
    return where(small, result * u ** (1 / safe_alpha), result)


# Coefficients of torch's bivariate rational approximation (ATen/native/Distributions.h)
_COEF_UV = ((0.16009398, -0.094634809, 0.025146376, -0.0030648343,
             1, 0.32668115, 0.10406089, 0.0014179084),
            (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
             0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
            (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
             0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07))


def standard_gamma_grad(alpha, x):
    """d x / d alpha for x ~ Gamma(alpha, 1) held at its quantile (implicit
    reparameterisation, -dF/dalpha / pdf): torch's `_standard_gamma_grad`, three regimes
    chosen elementwise as in ATen's standard_gamma_grad_one."""
    one = alpha * 0 + 1
    # small x: Taylor series of the regularised incomplete gamma function
    xs = where(x < 0.8, x, one * 0.5)
    numer, denom = one, alpha
    series1, series2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-xs / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = xs ** alpha
    gamma_pdf = xs ** (alpha - 1) * (-xs).exp()
    gamma_cdf = pow_x_alpha * series1
    gamma_cdf_alpha = (xs.log() - digamma(alpha)) * gamma_cdf - pow_x_alpha * series2
    small = -gamma_cdf_alpha / gamma_pdf
    small = where(small == small, small, one * 0)
    # large alpha: Rice saddle-point expansion (a separate formula near the mode)
    a = where(alpha > 8, alpha, one * 9)
    xr = where(alpha > 8, x, one * 9)
    near = (0.9 * a <= xr) & (xr <= 1.1 * a)
    numer_1 = 1 + 24 * a * (1 + 12 * a)
    numer_2 = (1440 * (a * a) + 6 * xr * (53 - 120 * xr) - 65 * xr * xr / a
               + a * (107 + 3600 * xr))
    rice_near = numer_1 * numer_2 / (1244160 * (a * a) * (a * a))
    xf = where(near, a * 0.5, xr)             # keeps the far formula finite where unused
    rdenom = (8 * a).sqrt()
    term2 = rdenom / (a - xf)
    term3 = (xf - a - a * (xf / a).log()) ** -1.5
    term23 = where(xf < a, term2 - term3, term2 + term3)
    term1 = (xf / a).log() * term23 - (2 / a).sqrt() * (a + xf) / ((a - xf) * (a - xf))
    stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
    rice_far = -stirling * (xf * term1) / rdenom
    rice = where(near, rice_near, rice_far)
    # otherwise: bivariate rational approximation in u = log(x / alpha), v = log(alpha)
    xm = where(x > 0, x, one)
    u, v = (xm / alpha).log(), alpha.log()
    cv = [c0 + u * (c1 + u * c2) for c0, c1, c2 in zip(*_COEF_UV)]
    p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]))
    q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]))
    rational = (p / q).exp()
    return where(x < 0.8, small, where(alpha > 8, rice, rational))


class _StandardGamma(Function):
    """x ~ Gamma(alpha, 1) whose gradient to alpha is the implicit reparameterisation."""

    @staticmethod
    def forward(alpha):
        return _sample_standard_gamma(alpha)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], output)

    @staticmethod
    def backward(ctx, g):
        alpha, x = ctx.saved_tensors
        return g * standard_gamma_grad(alpha, x)


def standard_gamma(alpha):
    """Gamma(alpha, 1) draws shaped like `alpha`, differentiable to alpha."""
    if not alpha.requires_grad or not grad_mode.is_grad_enabled():
        with grad_mode.no_grad():
            return _sample_standard_gamma(alpha)
    return _StandardGamma.apply(alpha)


def _clamp_tiny(x):
    """x clamped below at the smallest normal number, keeping x's gradient (as torch's
    in-place clamp of the detached value)."""
    return x + (x.detach().clamp(min=finfo_tiny(x.dtype)) - x.detach())


class Gamma(Distribution):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, _instance, "concentration", "rate")

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return _clamp_tiny(value)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value)
                - self.rate * value - lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - self.rate.log() + lgamma(self.concentration)
                + (1.0 - self.concentration) * digamma(self.concentration))
