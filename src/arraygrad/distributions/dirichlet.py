"""Dirichlet(concentration) on the simplex."""
from ..ops.elementwise import xlogy
from ..ops.special import digamma, lgamma
from . import constraints
from .distribution import Distribution
from .gamma import _clamp_tiny, standard_gamma

__all__ = ["Dirichlet"]


# NOTE [Dirichlet reparameterisation]: rsample normalises independent Gamma(alpha_i, 1) draws,
# each differentiable by the implicit Gamma gradient (torch's _standard_gamma_grad). That is an
# exact reparameterisation of the Dirichlet (unbiased gradients of any expectation), but not
# torch's: torch differentiates each coordinate through its marginal Beta CDF
# (_dirichlet_grad), so per-sample gradients differ from torch's while their expectations agree.
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
        shape = tuple(self._extended_shape(sample_shape))
        gammas = _clamp_tiny(standard_gamma(self.concentration.expand(shape)))
        return _clamp_tiny(gammas / gammas.sum(-1, keepdim=True))

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
