"""autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp) against torch's."""
import itertools

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


# ---------------------------------------------------------------- every API, flag and kind of
# function against torch: values, and strict mode's refusals word for word
def _functions(lib):
    return {
        "tanh2": (lambda x: (lib.tanh(x) ** 2).sum(), 1),
        "sincos": (lambda x, y: (x.sin() * y.cos()).sum(), 2),
        "two_outputs": (lambda x: lib.stack([x.exp().sum(), (x ** 3).sum()]), 1),
        "tuple_out": (lambda x, y: (x @ y.t(), x.sum()), 2),
        "cumsum": (lambda x: x.reshape(-1).cumsum(0), 1),
        "softmax": (lambda x, y: lib.softmax(x * y, dim=-1), 2),
        "unused_input": (lambda x, y: (x ** 2).sum(), 2),
        "linear": (lambda x: (x * 2).sum(), 1),
        "detached": (lambda x: x.detach().sum(), 1),
        "linear_pair": (lambda x, y: x * 2 + y.sum(), 2),
        "bilinear": (lambda x, y: (x * y).sum(), 2),
    }


def _call_functional(lib, api, fn, args, create_graph, strict, vectorize):
    F = lib.autograd.functional
    inp = args if len(args) > 1 else args[0]
    kw = dict(create_graph=create_graph, strict=strict)
    if api in ("jacobian", "hessian"):
        return getattr(F, api)(fn, inp, vectorize=vectorize, **kw)
    if api == "vjp":
        out = fn(*args)
        v = tuple(lib.ones_like(o) for o in out) if isinstance(out, tuple) else lib.ones_like(out)
        return F.vjp(fn, inp, v, **kw)
    v = tuple(lib.ones_like(a) for a in args) if len(args) > 1 else lib.ones_like(args[0])
    return getattr(F, api)(fn, inp, v, **kw)


def _outcome(lib, *call):
    try:
        return "ok", _call_functional(lib, *call)
    except RuntimeError as e:
        return "raises", str(e)


def _flat(r):
    if isinstance(r, (tuple, list)):
        return [a for x in r for a in _flat(x)]
    return [r.detach().numpy()]


@pytest.mark.parametrize("api", ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"])
def test_every_flag_matches_torch(torch, api):
    rng = np.random.default_rng(0)
    fa, ft = _functions(ag), _functions(torch)
    for name, (f, k) in fa.items():
        for create_graph, strict, vectorize in itertools.product([False, True], repeat=3):
            if vectorize and api not in ("jacobian", "hessian"):
                continue
            xs = [rng.standard_normal((2, 3)) for _ in range(k)]
            flags = (create_graph, strict, vectorize)
            (tk, tv) = _outcome(torch, api, ft[name][0], tuple(map(torch.tensor, xs)), *flags)
            (ak, av) = _outcome(ag, api, f, tuple(map(ag.tensor, xs)), *flags)
            where = f"{api} of {name} with create_graph, strict, vectorize = {flags}"
            assert ak == tk, f"{where}: torch {tk} {tv}, arraygrad {ak} {av}"
            if tk == "raises":
                assert av == tv, where
                continue
            a, t = _flat(av), _flat(tv)
            assert [x.shape for x in a] == [x.shape for x in t], where
            for x, y in zip(a, t):
                np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12, err_msg=where)
