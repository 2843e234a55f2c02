"""arraygrad.distributions against torch.distributions (float64): densities, entropies,
moments, KL, validation errors; samplers by statistics; rsample gradients exactly where the
noise is recoverable from the sample; the Gamma and Dirichlet implicit gradients on torch's own
samples, and per-sample rsample gradients of Gamma, Dirichlet and Beta draws against torch's
formulas at the same draw."""
import random
import warnings

import numpy as np
import pytest

import arraygrad as ag
import arraygrad.distributions as D
from arraygrad.distributions.dirichlet import dirichlet_grad
from arraygrad.distributions.gamma import standard_gamma_grad

L1 = np.array([[1.5, 0, 0], [0.3, 0.8, 0], [-0.2, 0.4, 1.1]])
L2 = np.array([[1., 0, 0], [0.5, 2., 0], [0.1, -0.3, 0.7]])


def _t(mod, x, **kw):
    return mod.tensor(np.asarray(x, dtype=np.float64), **kw)


# name -> (build(mod, T) -> distribution, value to score)
CASES = {
    "Normal": (lambda M, T: M.distributions.Normal(T([0., 1.]), T([1., 2.])), [0.5, -0.3]),
    "Uniform": (lambda M, T: M.distributions.Uniform(T([0., -1.]), T([1., 2.])), [0.5, 1.9]),
    "Bernoulli_p": (lambda M, T: M.distributions.Bernoulli(probs=T([0.2, 0.9])), [1., 0.]),
    "Bernoulli_l": (lambda M, T: M.distributions.Bernoulli(logits=T([-1., 2.])), [1., 0.]),
    "Categorical_p": (lambda M, T: M.distributions.Categorical(
        probs=T([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])), [2, 0]),
    "Categorical_l": (lambda M, T: M.distributions.Categorical(
        logits=T([[1., 2., 3.], [0., -1., 4.]])), [1, 2]),
    "OneHotCategorical": (lambda M, T: M.distributions.OneHotCategorical(
        probs=T([[0.2, 0.3, 0.5]])), [[0., 1., 0.], [0., 0., 1.]]),
    "Exponential": (lambda M, T: M.distributions.Exponential(T([0.5, 3.])), [0.2, 2.]),
    "Laplace": (lambda M, T: M.distributions.Laplace(T([0., 1.]), T([1., 0.5])), [-0.5, 2.]),
    "LogNormal": (lambda M, T: M.distributions.LogNormal(T([0., 1.]), T([1., 0.5])), [0.5, 3.]),
    "Independent": (lambda M, T: M.distributions.Independent(
        M.distributions.Normal(T([[0., 1.], [2., 3.]]), T([[1., 2.], [0.5, 1.]])), 1),
        [[0.1, 0.2], [2.5, 3.5]]),
    "MVN_cov": (lambda M, T: M.distributions.MultivariateNormal(
        T([0.1, -0.2, 0.3]), covariance_matrix=T(L1 @ L1.T)), [[0.5, 0.1, -1.], [1., 2., 3.]]),
    "MVN_tril": (lambda M, T: M.distributions.MultivariateNormal(
        T([[0.1, -0.2, 0.3], [0., 0., 0.]]), scale_tril=T(L2)), [0.5, 0.1, -1.]),
    "MVN_prec": (lambda M, T: M.distributions.MultivariateNormal(
        T([0.1, -0.2, 0.3]), precision_matrix=T(np.linalg.inv(L1 @ L1.T))), [0.5, 0.1, -1.]),
    "Gamma": (lambda M, T: M.distributions.Gamma(T([0.5, 2., 7.]), T([1., 2., 0.5])),
              [0.3, 1., 9.]),
    "Beta": (lambda M, T: M.distributions.Beta(T([0.5, 2.]), T([3., 1.5])), [0.2, 0.9]),
    "Dirichlet": (lambda M, T: M.distributions.Dirichlet(T([[0.5, 2., 7.], [1., 1., 1.]])),
                  [0.2, 0.3, 0.5]),
    "Affine_Sigmoid": (lambda M, T: M.distributions.TransformedDistribution(
        M.distributions.Normal(T([0., 1.]), T([1., 2.])),
        [M.distributions.transforms.AffineTransform(1., 2.),
         M.distributions.transforms.SigmoidTransform()]), [0.3, 0.8]),
}


def _value(mod, name, v):
    if name.startswith("Categorical"):
        return mod.tensor(v)
    return _t(mod, v)


def _np(x):
    return np.asarray(x.detach().numpy())


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_torch(torch, name):
    build, v = CASES[name]
    ours = build(ag, lambda x: _t(ag, x))
    ref = build(torch, lambda x: _t(torch, x))
    assert tuple(ours.batch_shape) == tuple(ref.batch_shape)
    assert tuple(ours.event_shape) == tuple(ref.event_shape)
    np.testing.assert_allclose(_np(ours.log_prob(_value(ag, name, v))),
                               _np(ref.log_prob(_value(torch, name, v))), rtol=1e-10, atol=1e-12)
    for attr in ("mean", "variance", "stddev"):
        try:
            expected = _np(getattr(ref, attr))
        except NotImplementedError:
            continue
        np.testing.assert_allclose(_np(getattr(ours, attr)), expected, rtol=1e-10, atol=1e-12)
    try:
        expected = _np(ref.entropy())
    except NotImplementedError:
        return
    np.testing.assert_allclose(_np(ours.entropy()), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_sample_shapes_and_expand(torch, name):
    build, _ = CASES[name]
    ours = build(ag, lambda x: _t(ag, x))
    ref = build(torch, lambda x: _t(torch, x))
    assert tuple(ours.sample((4, 3)).shape) == tuple(ref.sample((4, 3)).shape)
    assert ours.sample().dtype == getattr(ag, str(ref.sample().dtype).split(".")[-1])
    shape = (5,) + tuple(ours.batch_shape)
    e, re = ours.expand(shape), ref.expand(shape)
    assert tuple(e.batch_shape) == tuple(re.batch_shape)
    assert tuple(e.sample((2,)).shape) == tuple(re.sample((2,)).shape)
    assert ours.has_rsample == ref.has_rsample


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Exponential", "Laplace", "LogNormal",
                                  "MVN_cov", "Gamma", "Beta", "Dirichlet", "Bernoulli_p",
                                  "Categorical_p", "OneHotCategorical"])
def test_sample_statistics(name):
    ag.manual_seed(0)
    d = CASES[name][0](ag, lambda x: _t(ag, x))
    s = _np(d.sample((40000,)))
    mean, var = _np(d.mean), _np(d.variance)
    if name.startswith("Categorical"):
        probs = _np(d.probs)
        freq = np.stack([(s == k).mean(0) for k in range(probs.shape[-1])], -1)
        np.testing.assert_allclose(freq, probs, atol=0.015)
        return
    np.testing.assert_allclose(s.mean(0), mean, rtol=0.05, atol=0.02)
    np.testing.assert_allclose(s.var(0), var, rtol=0.1, atol=0.02)
    assert bool(d.support.check(ag.tensor(s)).all())


def test_rsample_gradients_from_recovered_noise():
    # x = loc + scale * eps: d sum(x)/d loc = n, d sum(x)/d scale = sum(eps)
    loc = _t(ag, [0.5, -1.], requires_grad=True)
    scale = _t(ag, [2., 0.3], requires_grad=True)
    x = D.Normal(loc, scale).rsample((7,))
    x.sum().backward()
    np.testing.assert_allclose(_np(loc.grad), [7., 7.])
    np.testing.assert_allclose(_np(scale.grad), _np(((x - loc) / scale).sum(0)), rtol=1e-12)
    # Exponential: x = e / rate
    rate = _t(ag, [0.5, 3.], requires_grad=True)
    x = D.Exponential(rate).rsample((5,))
    (x ** 2).sum().backward()
    np.testing.assert_allclose(_np(rate.grad), _np((2 * x * (-x / rate)).sum(0)), rtol=1e-12)
    # Uniform: x = low + u (high - low)
    low, high = _t(ag, [0., 1.], requires_grad=True), _t(ag, [2., 4.], requires_grad=True)
    x = D.Uniform(low, high).rsample((6,))
    x.sum().backward()
    u = (x - low) / (high - low)
    np.testing.assert_allclose(_np(low.grad), _np((1 - u).sum(0)), rtol=1e-12)
    np.testing.assert_allclose(_np(high.grad), _np(u.sum(0)), rtol=1e-12)
    # MVN: x = loc + L eps, d sum(x)/d L_ij = sum_samples eps_j (all entries, as torch)
    tril = _t(ag, L1, requires_grad=True)
    mloc = _t(ag, [0., 1., 2.], requires_grad=True)
    x = D.MultivariateNormal(mloc, scale_tril=tril).rsample((4,))
    x.sum().backward()
    eps = np.linalg.solve(L1, (_np(x) - [0., 1., 2.]).T).T
    np.testing.assert_allclose(_np(mloc.grad), [4., 4., 4.])
    np.testing.assert_allclose(_np(tril.grad), np.ones((3, 1)) * eps.sum(0), atol=1e-10)


def test_log_prob_gradients_match_torch(torch):
    # MultivariateNormal (linalg.cholesky, solve_triangular) differentiates as torch's
    grads = []
    for mod in (ag, torch):
        cov = _t(mod, L1 @ L1.T, requires_grad=True)
        loc = _t(mod, [0.1, -0.2, 0.3], requires_grad=True)
        conc = _t(mod, [0.5, 2., 7.], requires_grad=True)
        lp = mod.distributions.MultivariateNormal(loc, covariance_matrix=cov).log_prob(
            _t(mod, [[0.5, 0.1, -1.], [1., 2., 3.]])).sum()
        lp = lp + mod.distributions.Dirichlet(conc).entropy() + mod.distributions.Gamma(
            conc, conc).log_prob(_t(mod, [0.2, 1., 3.])).sum()
        grads.append([_np(g) for g in mod.autograd.grad(lp, (cov, loc, conc))])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_standard_gamma_grad_on_torch_samples(torch):
    alpha = torch.tensor([0.05, 0.3, 0.5, 1., 2., 5., 7.9, 9., 20., 50., 3., 100., 500.],
                         dtype=torch.float64).repeat(300)
    torch.manual_seed(0)
    x = torch._standard_gamma(alpha)
    expected = torch._standard_gamma_grad(alpha, x).numpy()
    ours = _np(standard_gamma_grad(ag.tensor(alpha.numpy()), ag.tensor(x.numpy())))
    np.testing.assert_allclose(ours, expected, rtol=1e-10, atol=1e-300)


def test_gamma_rsample_gradient_is_implicit_reparameterisation():
    # the gradient of each draw is standard_gamma_grad at that draw (rate 1); with rate r,
    # x = g / r; and E[d x / d alpha] = d E[x] / d alpha = 1 / r
    ag.manual_seed(1)
    conc = _t(ag, [0.4, 3., 12.], requires_grad=True)
    rate = _t(ag, [1., 2., 0.5], requires_grad=True)
    x = D.Gamma(conc, rate).rsample((20000,))
    x.mean(0).sum().backward()
    np.testing.assert_allclose(_np(conc.grad), 1 / np.array([1., 2., 0.5]), rtol=0.03)
    np.testing.assert_allclose(_np(rate.grad), -_np(x.mean(0)) / [1., 2., 0.5], rtol=1e-10)
    y = D.Gamma(conc, 1.).rsample((3,))
    (g,) = ag.autograd.grad(y.sum(), conc)
    np.testing.assert_allclose(_np(g), _np(standard_gamma_grad(conc.detach(), y.detach()).sum(0)))


def test_dirichlet_grad_on_torch_samples(torch):
    # rows reach every regime: x near 0 or 1, both parameters large, the rational correction
    alpha = torch.tensor([[0.05, 0.3, 2.], [7., 9., 0.5], [1., 1., 1.], [20., 30., 50.],
                          [0.5, 12., 8.], [100., 0.2, 3.]], dtype=torch.float64).repeat(200, 1)
    torch.manual_seed(0)
    x = torch._sample_dirichlet(alpha)
    total = alpha.sum(-1, True).expand_as(alpha)
    expected = torch._dirichlet_grad(x, alpha, total).numpy()
    ours = _np(dirichlet_grad(*(ag.tensor(v.numpy()) for v in (x, alpha, total))))
    np.testing.assert_allclose(ours, expected, rtol=1e-10, atol=1e-300)


def test_per_sample_rsample_gradients_match_torch(torch):
    from torch.distributions.dirichlet import _Dirichlet_backward
    rng = np.random.default_rng(3)
    T = lambda v: torch.tensor(_np(v))                                      # noqa: E731
    ag.manual_seed(4)
    # Dirichlet: the gradient of <g, x> at our draw x is torch's backward at that x
    a = _t(ag, [[0.4, 2., 7.], [9., 11., 0.8]], requires_grad=True)
    x = D.Dirichlet(a).rsample((50,))
    g = rng.standard_normal(tuple(x.shape))
    (ga,) = ag.autograd.grad(x, a, _t(ag, g))
    want = _Dirichlet_backward(T(x), T(a).expand(tuple(x.shape)), torch.tensor(g)).sum(0)
    np.testing.assert_allclose(_np(ga), want.numpy(), rtol=1e-9)
    # Beta: torch's rsample is coordinate 0 of Dirichlet([c1, c0])
    c1, c0 = _t(ag, [0.5, 3.], requires_grad=True), _t(ag, [2., 8.], requires_grad=True)
    b = D.Beta(c1, c0).rsample((40,))
    g = rng.standard_normal(tuple(b.shape))
    g1, g0 = ag.autograd.grad(b, (c1, c0), _t(ag, g))
    xb = torch.stack([T(b), 1 - T(b)], -1)
    conc = torch.stack([T(c1), T(c0)], -1).expand(tuple(xb.shape))
    want = _Dirichlet_backward(xb, conc, torch.stack([torch.tensor(g), torch.zeros(b.shape,
                                                      dtype=torch.float64)], -1)).sum(0)
    np.testing.assert_allclose(_np(g1), want[..., 0].numpy(), rtol=1e-9)
    np.testing.assert_allclose(_np(g0), want[..., 1].numpy(), rtol=1e-9)
    # Gamma(conc, rate): x = s / rate with s standard, d x / d conc = standard_gamma_grad / rate
    conc, rate = _t(ag, [0.3, 4., 20.], requires_grad=True), _t(ag, [2., 0.5, 1.])
    y = D.Gamma(conc, rate).rsample((30,))
    g = rng.standard_normal(tuple(y.shape))
    (gc,) = ag.autograd.grad(y, conc, _t(ag, g))
    want = (torch._standard_gamma_grad(T(conc).expand(tuple(y.shape)), T(y) * T(rate))
            / T(rate) * torch.tensor(g)).sum(0)
    np.testing.assert_allclose(_np(gc), want.numpy(), rtol=1e-9)


def test_dirichlet_and_beta_rsample_gradients_are_unbiased():
    ag.manual_seed(2)
    a = _t(ag, [0.7, 2., 4.], requires_grad=True)
    x = D.Dirichlet(a).rsample((30000,))
    (g,) = ag.autograd.grad(x[:, 0].mean(), a)
    s = 6.7        # d E[x0] / d a = ((s - a0) / s^2, -a0 / s^2, -a0 / s^2)
    np.testing.assert_allclose(_np(g), [(s - 0.7) / s ** 2, -0.7 / s ** 2, -0.7 / s ** 2],
                               rtol=0.05, atol=0.002)
    c1, c0 = _t(ag, 2., requires_grad=True), _t(ag, 3., requires_grad=True)
    x = D.Beta(c1, c0).rsample((30000,))
    g1, g0 = ag.autograd.grad(x.mean(), (c1, c0))
    np.testing.assert_allclose([float(g1), float(g0)], [3 / 25, -2 / 25], rtol=0.05)


KL_PAIRS = {
    "Normal": lambda M, T: (M.distributions.Normal(T([0., 1.]), T([1., 2.])),
                            M.distributions.Normal(T([0.5, -1.]), T([0.7, 1.5]))),
    "Bernoulli": lambda M, T: (M.distributions.Bernoulli(T([0., 0.3, 1.])),
                               M.distributions.Bernoulli(T([0.2, 0.5, 0.9]))),
    "Categorical": lambda M, T: (M.distributions.Categorical(T([[0.2, 0.3, 0.5], [0., .5, .5]])),
                                 M.distributions.Categorical(T([[.1, .6, .3], [.2, .3, .5]]))),
    "OneHotCategorical": lambda M, T: (M.distributions.OneHotCategorical(T([0.2, 0.3, 0.5])),
                                       M.distributions.OneHotCategorical(T([0.1, 0.6, 0.3]))),
    "Beta": lambda M, T: (M.distributions.Beta(T([0.5, 2.]), T([3., 1.5])),
                          M.distributions.Beta(T([1., 4.]), T([2., 0.5]))),
    "Gamma": lambda M, T: (M.distributions.Gamma(T([0.5, 2.]), T([3., 1.5])),
                           M.distributions.Gamma(T([1., 4.]), T([2., 0.5]))),
    "Dirichlet": lambda M, T: (M.distributions.Dirichlet(T([0.5, 2., 3.])),
                               M.distributions.Dirichlet(T([1., 4., 0.3]))),
    "Exponential": lambda M, T: (M.distributions.Exponential(T([0.5, 2.])),
                                 M.distributions.Exponential(T([1., 4.]))),
    "Laplace": lambda M, T: (M.distributions.Laplace(T([0.5, 2.]), T([3., 1.5])),
                             M.distributions.Laplace(T([1., 4.]), T([2., 0.5]))),
    "Uniform": lambda M, T: (M.distributions.Uniform(T([0., 1.]), T([1., 2.])),
                             M.distributions.Uniform(T([-1., 1.5]), T([2., 3.]))),
    "MVN": lambda M, T: (M.distributions.MultivariateNormal(T([[0., 1., 2.]]), scale_tril=T(L1)),
                         M.distributions.MultivariateNormal(T([1., 0., 2.]),
                                                            covariance_matrix=T(L2 @ L2.T))),
    "Independent": lambda M, T: (
        M.distributions.Independent(M.distributions.Normal(T([[0., 1.]]), T([[1., 2.]])), 1),
        M.distributions.Independent(M.distributions.Normal(T([[.5, -1.]]), T([[.7, 1.5]])), 1)),
    "LogNormal": lambda M, T: (M.distributions.LogNormal(T([0., 1.]), T([1., 2.])),
                               M.distributions.LogNormal(T([0.5, -1.]), T([0.7, 1.5]))),
}


@pytest.mark.parametrize("name", sorted(KL_PAIRS))
def test_kl_matches_torch(torch, name):
    p, q = KL_PAIRS[name](ag, lambda x: _t(ag, x))
    rp, rq = KL_PAIRS[name](torch, lambda x: _t(torch, x))
    np.testing.assert_allclose(_np(D.kl_divergence(p, q)),
                               _np(torch.distributions.kl_divergence(rp, rq)), rtol=1e-10)


def test_kl_unregistered_pair_and_register_kl():
    p, q = D.Normal(0., 1.), D.Gamma(1., 1.)
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(p, q)

    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return p.loc * 0 + 42.0

    assert float(D.kl_divergence(MyNormal(0., 1.), D.Normal(0., 1.))) == 42.0
    assert float(D.kl_divergence(D.Normal(0., 1.), D.Normal(0., 1.))) == 0.0


def _msg(fn):
    with pytest.raises(ValueError) as info:
        fn()
    return str(info.value).replace("torch.", "").replace("arraygrad.", "").replace(
        "tensor(", "").replace(")", "")


@pytest.mark.parametrize("make", [
    lambda M: M.distributions.Normal(M.tensor([0., 1.]), M.tensor([1., -1.])),
    lambda M: M.distributions.Bernoulli(probs=M.tensor([1.5])),
    lambda M: M.distributions.Bernoulli(probs=M.tensor([0.5]), logits=M.tensor([0.])),
    lambda M: M.distributions.Categorical(probs=M.tensor(0.5)),
    lambda M: M.distributions.Uniform(M.tensor(1.), M.tensor(0.)),
    lambda M: M.distributions.Normal(M.tensor([0., 1.]), M.tensor([1., 1.])).log_prob(
        M.tensor([1., 2., 3.])),
    lambda M: M.distributions.Exponential(M.tensor([1.])).log_prob(M.tensor([-1.])),
    lambda M: M.distributions.Dirichlet(M.tensor([1., 1.])).log_prob(M.tensor([1., 2.])),
    lambda M: M.distributions.MultivariateNormal(M.tensor([0., 0.])),
    lambda M: M.distributions.MultivariateNormal(
        M.tensor([0., 0.]), covariance_matrix=M.tensor([[1., 2.], [2., 1.]])),
    lambda M: M.distributions.Independent(M.distributions.Normal(0., 1.), 1),
])
def test_validation_errors_match_torch(torch, make):
    assert _msg(lambda: make(ag)).split("\n")[0] == _msg(lambda: make(torch)).split("\n")[0]


def test_validate_args_false_skips_checks():
    d = D.Normal(ag.tensor(0.), ag.tensor(-1.), validate_args=False)
    assert float(d.scale) == -1.0
    assert D.Exponential(ag.tensor(1.), validate_args=False).log_prob(ag.tensor(-1.)) > 0


def test_constraints_and_enumerate_support(torch):
    assert _np(D.constraints.positive.check(ag.tensor([1., -1.]))).tolist() == [True, False]
    assert _np(D.constraints.simplex.check(ag.tensor([[0.5, 0.5], [0.5, 0.6]]))).tolist() == \
        [True, False]
    assert repr(D.constraints.interval(0., 1.)) == repr(torch.distributions.constraints.interval(
        0., 1.))
    b = D.Bernoulli(ag.tensor([0.1, 0.2]))
    rb = torch.distributions.Bernoulli(torch.tensor([0.1, 0.2]))
    assert _np(b.enumerate_support()).tolist() == rb.enumerate_support().tolist()
    o = D.OneHotCategorical(ag.tensor([0.2, 0.3, 0.5]))
    ro = torch.distributions.OneHotCategorical(torch.tensor([0.2, 0.3, 0.5]))
    assert _np(o.enumerate_support()).tolist() == ro.enumerate_support().tolist()


# ---------------------------------------------------------------- random distributions vs torch
def _build(lib, name, rng, shape):
    """A distribution of family `name` with random parameters of batch shape `shape`, and the
    parameter tensors (leaves) to differentiate with respect to."""
    D, T = lib.distributions, lib.distributions.transforms
    leaf = lambda a: lib.tensor(a, requires_grad=True)
    pos = lambda low=0.1, high=2.0: leaf(rng.uniform(low, high, shape))
    real = lambda *extra: leaf(rng.standard_normal(shape + extra))
    if name in ("Normal", "Laplace", "LogNormal"):
        ps = [real(), pos()]
        return getattr(D, name)(*ps), ps
    if name in ("Gamma", "Beta"):
        ps = [pos(0.5, 3), pos(0.5, 3)]
        return getattr(D, name)(*ps), ps
    if name == "Exponential":
        ps = [pos()]
        return D.Exponential(*ps), ps
    if name == "Uniform":
        lo = real()
        return D.Uniform(lo, lo.detach() + lib.tensor(rng.uniform(0.5, 2, shape))), [lo]
    if name == "Bernoulli":
        ps = [pos(0.05, 0.95)]
        return D.Bernoulli(probs=ps[0]), ps
    if name in ("Categorical", "OneHotCategorical"):
        ps = [real(4)]
        return getattr(D, name)(logits=ps[0]), ps
    if name == "Dirichlet":
        ps = [leaf(rng.uniform(0.5, 3, shape + (3,)))]
        return D.Dirichlet(ps[0]), ps
    if name == "MultivariateNormal":
        a = rng.standard_normal(shape + (3, 3))
        ps = [real(3), leaf(a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3))]
        return D.MultivariateNormal(ps[0], covariance_matrix=ps[1]), ps
    if name == "Independent":
        ps = [real(), pos()]
        return D.Independent(D.Normal(*ps), 1), ps
    ps = [real(), pos()]
    return D.TransformedDistribution(D.Normal(*ps), [T.AffineTransform(0.5, 2.0), T.TanhTransform()]), ps


_FAMILIES = ["Normal", "Laplace", "LogNormal", "Gamma", "Beta", "Exponential", "Uniform", "Bernoulli",
             "Categorical", "OneHotCategorical", "Dirichlet", "MultivariateNormal", "Independent",
             "Transformed"]


def _quantity(lib, seed, samples):
    """One quantity of one random distribution, and its gradient wrt the parameters. Points
    to evaluate at are torch's samples (the two libraries' random streams differ)."""
    r = random.Random(seed)
    name, shape = r.choice(_FAMILIES), r.choice([(), (2,), (2, 3)])
    d, ps = _build(lib, name, np.random.default_rng(seed), shape)
    what = r.choice(["log_prob", "cdf", "icdf", "entropy", "mean", "variance", "stddev", "kl"])
    if what in ("log_prob", "cdf"):
        if lib.__name__ == "torch":
            with lib.no_grad():
                samples[seed] = d.sample().numpy()
        out = getattr(d, what)(lib.tensor(samples[seed]))
    elif what == "icdf":
        u = np.random.default_rng(seed).uniform(0.1, 0.9, tuple(d.batch_shape + d.event_shape))
        out = d.icdf(lib.tensor(u))
    elif what == "kl":
        d2, ps2 = _build(lib, name, np.random.default_rng(seed + 7), shape)
        out, ps = lib.distributions.kl_divergence(d, d2), ps + ps2
    else:
        out = getattr(d, what)
        out = out() if callable(out) else out
    res = [out.detach().numpy()]
    if out.requires_grad:
        res += [None if g is None else g.numpy()
                for g in lib.autograd.grad(out.sum(), ps, allow_unused=True)]
    return res


def _outcome(lib, seed, samples):
    try:
        return "ok", _quantity(lib, seed, samples)
    except (NotImplementedError, ValueError, RuntimeError) as e:
        return "raises", type(e).__name__


def test_random_distributions_match_torch(torch):
    """log_prob, cdf, icdf, entropy, moments and KL of random members of every family, values
    and parameter gradients, or the same refusal."""
    samples = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # torch's own deprecation warnings
        for seed in range(300):
            (tk, tv), (ak, av) = _outcome(torch, seed, samples), _outcome(ag, seed, samples)
            assert ak == tk, f"seed {seed}: torch {tk} {tv}, arraygrad {ak} {av}"
            if tk == "ok":
                assert len(av) == len(tv), seed
                for a, t in zip(av, tv):
                    assert (a is None) == (t is None), seed
                    if t is not None:
                        np.testing.assert_allclose(a, t, rtol=1e-7, atol=1e-8, err_msg=f"seed {seed}")
            else:
                assert av == tv, seed


def test_affine_transforms_compare_by_value(torch):
    for lib in (torch, ag):
        T = lib.distributions.transforms
        assert T.AffineTransform(0.5, 2.0) == T.AffineTransform(0.5, 2.0)
        assert T.AffineTransform(lib.tensor([1., 2.]), 2.0) == T.AffineTransform(lib.tensor([1., 2.]), 2.0)
        assert T.AffineTransform(0.5, 2.0) != T.AffineTransform(0.5, 3.0)
        assert T.AffineTransform(0.5, 2.0) != T.ExpTransform()
