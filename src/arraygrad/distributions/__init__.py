"""torch.distributions: probability distributions with sampling, reparameterised sampling,
log densities, entropies and KL divergences.

    import arraygrad as torch
    d = torch.distributions.Normal(torch.tensor(0.), torch.tensor(1.))
    d.log_prob(torch.tensor(0.5))    # tensor(-1.0439)
"""
from . import constraints  # noqa: F401
from .distribution import Distribution  # noqa: F401
from .normal import Normal  # noqa: F401
from .uniform import Uniform  # noqa: F401
from .bernoulli import Bernoulli  # noqa: F401
from .categorical import Categorical  # noqa: F401
from .exponential import Exponential  # noqa: F401
from .laplace import Laplace  # noqa: F401
from .transforms import (Transform, ComposeTransform, ExpTransform, AffineTransform,  # noqa: F401
                         SigmoidTransform, TanhTransform, PowerTransform)
from .independent import Independent  # noqa: F401
from .transformed_distribution import TransformedDistribution  # noqa: F401
from .log_normal import LogNormal  # noqa: F401
from .multivariate_normal import MultivariateNormal  # noqa: F401
from .one_hot_categorical import OneHotCategorical  # noqa: F401
from .gamma import Gamma  # noqa: F401
from .dirichlet import Dirichlet  # noqa: F401
from .beta import Beta  # noqa: F401
from .kl import kl_divergence, register_kl  # noqa: F401
from . import kl, transforms  # noqa: F401
