"""Dirichlet(concentration) on the simplex."""
from ..autograd.function import Function, once_differentiable
from ..core import grad_mode
from ..ops.elementwise import where, xlogy
from ..ops.special import digamma, lgamma
from . import constraints
from .distribution import Distribution
from .gamma import _clamp_tiny, _sample_standard_gamma

__all__ = ["Dirichlet"]


# NOTE [Dirichlet reparameterisation]: a draw normalises independent Gamma(alpha_i, 1) draws;
# its gradient is torch's implicit one: each coordinate x_i is held at its quantile of its
# marginal Beta(alpha_i, total - alpha_i), giving -(dF/dalpha_i) / pdf / (1 - x_i)
# (`dirichlet_grad`), and the simplex constraint gives the rest (`_Dirichlet.backward`). The
# same per-sample gradients as torch for the same draw, not only the same expectation.
def _nan_to_zero(v):
    return where(v == v, v, v * 0)


def _beta_grad_alpha_small(x, alpha, beta):
    """d x / d alpha of Beta(alpha, beta) near x = 0: Taylor series of the CDF."""
    factor = digamma(alpha) - digamma(alpha + beta) - x.log()
    numer = alpha * 0 + 1
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    return _nan_to_zero(x * (1 - x) ** -beta * series)


def _beta_grad_beta_small(x, alpha, beta):
    """d x / d beta of Beta(alpha, beta) near x = 0."""
    factor = digamma(alpha + beta) - digamma(beta)
    numer, betas, dbetas, series = alpha * 0 + 1, alpha * 0 + 1, alpha * 0, factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    return _nan_to_zero(-(1 - x) ** (1 - beta) * series)


def _beta_grad_alpha_mid(x, alpha, beta):
    """d x / d alpha for large alpha and beta: Rice saddle-point expansion (a polynomial
    within a tenth of a standard deviation of the mean, where the expansion is singular)."""
    total = alpha + beta
    mean = alpha / total
    std = (alpha * beta / (total + 1)).sqrt() / total
    near = (mean - 0.1 * std <= x) & (x <= mean + 0.1 * std)
    b2 = beta * beta
    poly = 47 * x * b2 * b2 + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * b2 * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * b2 + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                    8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * b2 * (1 + 12 * total)
    at_mean = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / (2 * alpha * beta / total).sqrt()
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * b2))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    axbx = alpha * (x - 1) + beta * x
    term1 = ((2 * alpha * alpha * (x - 1) + alpha * beta * (x - 1) - x * b2)
             / ((2 * alpha / beta).sqrt() * total ** 1.5 * axbx * axbx))
    term2 = 0.5 * (alpha / (total * x)).log()
    term3 = (8 * alpha * beta / total).sqrt() / axbx
    term4 = (beta * (beta / (total * (1 - x))).log()
             + alpha * (alpha / (total * x)).log()) ** -1.5
    away = stirling * prefactor * (term1 + term2 * (term3 + where(x < mean, term4, -term4)))
    return where(near, at_mean, away)


# Coefficients of torch's rational correction (ATen/native/Distributions.h, dirichlet_grad_one):
# [p or q][power of u][power of a] -> cubic in b
_RATIONAL = (
    (((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
      (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
      (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
     ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
      (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
      (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
     ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
      (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
      (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
    (((1, -0.02924021934, -0.04438342661, 0.007285809825),
      (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
      (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
     ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
      (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
      (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
     ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
      (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
      (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06))))


def _beta_grad_rational(x, alpha, total):
    """An analytic approximation with a rational correction in log x, log(alpha / x) and
    log(total) - log(alpha / x)."""
    u = x.log()
    a = alpha.log() - u
    b = total.log() - a
    pq = []
    for coef in _RATIONAL:
        acc = x * 0
        for i, pow_u in enumerate((1, u, u * u)):
            for j, pow_a in enumerate((1, a, a * a)):
                c0, c1, c2, c3 = coef[i][j]
                acc = acc + pow_u * pow_a * (c0 + b * (c1 + b * (c2 + b * c3)))
        pq.append(acc)
    return pq[0] / pq[1] * (x * (digamma(total) - digamma(alpha)) / (total - alpha))


def dirichlet_grad(x, alpha, total):
    """-(dF/dalpha) / pdf / (1 - x) for x ~ Beta(alpha, total - alpha): torch's
    `_dirichlet_grad`, its four regimes chosen elementwise as ATen's dirichlet_grad_one."""
    beta = total - alpha
    boundary = total * x * (1 - x)
    near_zero = (x <= 0.5) & (boundary < 2.5)
    near_one = (x >= 0.5) & (boundary < 0.75)
    large = (alpha > 6) & (beta > 6)
    one = x * 0 + 1
    # each regime on safe stand-ins where another is chosen, so no branch overflows
    xs = where(near_zero, x, one * 0.25)
    small = _beta_grad_alpha_small(xs, alpha, beta)
    xo = where(near_one & ~near_zero, 1 - x, one * 0.25)
    by_one = -_beta_grad_beta_small(xo, beta, alpha)
    mid_ok = large & ~near_zero & ~near_one
    am, bm = where(mid_ok, alpha, one * 7), where(mid_ok, beta, one * 7)
    mid = _beta_grad_alpha_mid(where(mid_ok, x, one * 0.3), am, bm)
    rest = ~(near_zero | near_one | large)
    rational = _beta_grad_rational(where(rest, x, one * 0.5), where(rest, alpha, one),
                                   where(rest, total, one * 2))
    return where(near_zero, small, where(near_one, by_one, where(large, mid, rational)))


def _sample_dirichlet(alpha):
    gammas = _clamp_tiny(_sample_standard_gamma(alpha))
    return _clamp_tiny(gammas / gammas.sum(-1, keepdim=True))


class _Dirichlet(Function):
    """x ~ Dirichlet(alpha) with torch's implicit gradient (NOTE [Dirichlet reparameterisation])."""

    @staticmethod
    def forward(alpha):
        return _sample_dirichlet(alpha)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output, inputs[0])

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, alpha = ctx.saved_tensors
        return dirichlet_backward(x, alpha, g)


def dirichlet_backward(x, alpha, g):
    """The cotangent of alpha for the draw x and its cotangent g (torch's _Dirichlet_backward)."""
    total = alpha.sum(-1, keepdim=True).expand_as(alpha)
    return dirichlet_grad(x, alpha, total) * (g - (x * g).sum(-1, keepdim=True))


class Dirichlet(Distribution):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        alpha = self.concentration.expand(tuple(self._extended_shape(sample_shape)))
        if not alpha.requires_grad or not grad_mode.is_grad_enabled():
            with grad_mode.no_grad():
                return _sample_dirichlet(alpha)
        return _Dirichlet.apply(alpha)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration - 1.0, value).sum(-1)
                + lgamma(self.concentration.sum(-1)) - lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        concm1 = (self.concentration - 1).clamp(min=0.0)
        return concm1 / concm1.sum(-1, keepdim=True)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.shape[-1]
        a0 = self.concentration.sum(-1)
        return (lgamma(self.concentration).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0)
                - ((self.concentration - 1.0) * digamma(self.concentration)).sum(-1))
