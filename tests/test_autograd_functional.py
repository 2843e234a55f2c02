"""autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp) against torch's."""
import numpy as np
import pytest

import arraygrad as ag
from conftest import assert_close

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")

X = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]])
Y = np.array([0.9, -0.2, 1.5])
V_OUT = np.array([0.5, -1.0, 2.0])


def single(L, x):
    return (x.tanh() * x.sin()).sum(0)                  # (2, 3) -> (3,)


def two_in(L, x, y):
    return x.exp() @ y.tanh() + (x * y).sum()            # (2, 3), (3,) -> (2,)


def two_out(L, x, y):
    return (x * y).sum(1), (y ** 2).cumsum(0), L.ones(2, dtype=L.float64)   # last: independent


def scalar(L, x, y):
    return (x.sin() * y).sum() + (y ** 3).sum() * x.pow(2).mean()


def _t(L, *arrays):
    return tuple(L.tensor(a) for a in arrays)


def _compare(a, t):
    if isinstance(t, (tuple, list)):
        assert type(a) is type(t) and len(a) == len(t)
        for u, w in zip(a, t):
            _compare(u, w)
    else:
        assert_close(a, t)
        assert a.requires_grad == t.requires_grad


CASES = [("single", single, (X,)), ("two_in", two_in, (X, Y)), ("two_out", two_out, (X, Y))]


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("opts", [{}, {"vectorize": True},
                                  {"vectorize": True, "strategy": "forward-mode"}],
                         ids=["rows", "vectorized", "forward"])
def test_jacobian(torch, name, fn, arrays, opts):
    res = []
    for L in (ag, torch):
        ins = _t(L, *arrays)
        inputs = ins[0] if len(ins) == 1 else ins
        res.append(L.autograd.functional.jacobian(lambda *a: fn(L, *a), inputs, **opts))
    _compare(*res)


@pytest.mark.parametrize("opts", [
    {}, {"vectorize": True},
    {"vectorize": True, "outer_jacobian_strategy": "forward-mode"}],
    ids=["rows", "vectorized", "forward_over_reverse"])
@pytest.mark.parametrize("tupled", [False, True])
def test_hessian(torch, opts, tupled):
    res = []
    for L in (ag, torch):
        x, y = _t(L, X, Y)
        if tupled:
            res.append(L.autograd.functional.hessian(lambda a, b: scalar(L, a, b), (x, y), **opts))
        else:
            res.append(L.autograd.functional.hessian(lambda a: scalar(L, a, y), x, **opts))
    _compare(*res)


def test_products(torch):
    res = []
    for L in (ag, torch):
        F = L.autograd.functional
        x, y = _t(L, X, Y)
        out = [F.vjp(lambda a: single(L, a), x, L.tensor(V_OUT)),
               F.jvp(lambda a: single(L, a), x, L.tensor(X[::-1].copy())),
               F.vjp(lambda a, b: two_out(L, a, b)[:2], (x, y),
                     (L.tensor(V_OUT[:2]), L.tensor(V_OUT))),
               F.jvp(lambda a, b: two_out(L, a, b), (x, y), (L.tensor(X), L.tensor(Y))),
               F.vhp(lambda a, b: scalar(L, a, b), (x, y), (L.tensor(X), L.tensor(Y))),
               F.hvp(lambda a, b: scalar(L, a, b), (x, y), (L.tensor(X), L.tensor(Y))),
               F.vjp(lambda a: (a ** 2).sum(), x),
               F.hvp(lambda a: (a ** 3).sum(), L.tensor(2.0, dtype=L.float64))]
        res.append(tuple(out))
    _compare(*res)


def test_create_graph_keeps_history(torch):
    grads = []
    for L in (ag, torch):
        F = L.autograd.functional
        x = L.tensor(X, requires_grad=True)
        jac = F.jacobian(lambda a: single(L, a), x, create_graph=True)
        _, hv = F.hvp(lambda a: (a.sin() ** 2).sum(), x, L.ones_like(x), create_graph=True)
        assert jac.requires_grad and hv.requires_grad
        grads.append(L.autograd.grad(jac.sum() + hv.sum(), x)[0])
        plain = F.jacobian(lambda a: single(L, a), x)
        assert not plain.requires_grad
    _compare(*grads)


def test_errors_as_torch(torch):
    for L in (ag, torch):
        F = L.autograd.functional
        x = L.tensor(X)
        with pytest.raises(RuntimeError, match="v can only be None"):
            F.vjp(lambda a: a * 2, x)
        with pytest.raises(RuntimeError, match="v has invalid size"):
            F.vjp(lambda a: a * 2, x, L.ones(3, dtype=L.float64))
        with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
            F.jacobian(lambda a: a, [x])
        with pytest.raises(TypeError, match="outputs of the user-provided function"):
            F.jacobian(lambda a: 3, x)
        with pytest.raises(RuntimeError, match="should return a single Tensor"):
            F.hessian(lambda a: (a.sum(), a.sum()), x)
        with pytest.raises(RuntimeError, match="should contain a single element"):
            F.hessian(lambda a: a * 2, x)
        with pytest.raises(RuntimeError, match="does not require gradients"):
            F.jacobian(lambda a: L.ones(2), x, strict=True)
        with pytest.raises(RuntimeError, match="independent of input 1"):
            F.jacobian(lambda a, b: a * 2, (x, L.tensor(Y)), strict=True)
        with pytest.raises(NotImplementedError, match="vectorize=True"):
            F.jacobian(lambda a: a * 2, x, strategy="forward-mode")
        with pytest.raises(RuntimeError, match="not supported together"):
            F.jacobian(lambda a: a * 2, x, vectorize=True, strict=True)
