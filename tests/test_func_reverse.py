"""Reverse-mode transforms (grad, grad_and_value, vjp, jacrev) and their compositions with
vmap, each against torch.func (float64)."""
import numpy as np
import pytest

import arraygrad as ag
from conftest import assert_close, reference_torch

torch = reference_torch()

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3,))
M = RNG.normal(size=(2, 3))
W = RNG.normal(size=(3, 4))


def _t(lib, a):
    return lib.tensor(np.asarray(a, dtype=np.float64))


def _same(a, t):
    """Compare pytrees of results leaf by leaf."""
    if isinstance(t, dict):
        assert isinstance(a, dict) and set(a) == set(t)
        for k in t:
            _same(a[k], t[k])
    elif isinstance(t, (tuple, list)):
        assert type(a) is type(t) and len(a) == len(t), f"{type(a)} vs {type(t)}"
        for u, v in zip(a, t):
            _same(u, v)
    elif isinstance(t, torch.Tensor):
        assert_close(a, t)
    else:
        assert a == t


def _both(run):
    _same(run(ag), run(torch))


# ----------------------------------------------------------------- grad / grad_and_value
FUNCS = {
    "poly": lambda lib, x: (x ** 3 - 2 * x).sum(),
    "trig": lambda lib, x: (lib.sin(x) * lib.cos(x[0])).sum(),
    "matrix": lambda lib, x: (lib.tanh(x @ _t(lib, W)) ** 2).mean(),
    "softmax": lambda lib, x: lib.log_softmax(x * 2, 0)[1],
    "index": lambda lib, x: (x[[0, 2, 2]] * x[1:].sum()).sum(),
}


@pytest.mark.parametrize("name", list(FUNCS))
def test_grad(name):
    f = FUNCS[name]
    _both(lambda lib: lib.func.grad(lambda x: f(lib, x))(_t(lib, X)))


@pytest.mark.parametrize("name", list(FUNCS))
def test_grad_of_grad_and_jacrev_of_grad(name):
    f = FUNCS[name]
    _both(lambda lib: lib.func.grad(lambda x: lib.func.grad(lambda y: f(lib, y))(x).sum())(
        _t(lib, X)))
    _both(lambda lib: lib.func.jacrev(lib.func.grad(lambda y: f(lib, y)))(_t(lib, X)))


def test_grad_argnums_has_aux_and_value():
    def f(lib, x, y):
        out = (x * y.sum()).sum() + (y ** 2).sum()
        return out, {"aux": x * 2}
    _both(lambda lib: lib.func.grad(lambda x, y: f(lib, x, y), argnums=(0, 1), has_aux=True)(
        _t(lib, X), _t(lib, M)))
    _both(lambda lib: lib.func.grad(lambda x, y: f(lib, x, y)[0], argnums=1)(
        _t(lib, X), _t(lib, M)))
    _both(lambda lib: lib.func.grad_and_value(lambda x, y: f(lib, x, y), argnums=-1, has_aux=True)(
        _t(lib, X), _t(lib, M)))


def test_grad_pytree_input():
    def f(lib, p):
        return (p["w"] @ p["b"][0]).sum() * p["b"][1]
    _both(lambda lib: lib.func.grad(lambda p: f(lib, p))(
        {"w": _t(lib, M), "b": (_t(lib, X), _t(lib, 2.0))}))


def test_grad_errors_like_torch():
    for lib in (ag, torch):
        with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
            lib.func.grad(lambda x: x * 2)(_t(lib, X))
        with pytest.raises(RuntimeError, match="only 1 positional inputs"):
            lib.func.grad(lambda x: x.sum(), argnums=2)(_t(lib, X))


# ----------------------------------------------------------------- vjp
def test_vjp_pytree_outputs_and_aux():
    def run(lib):
        f = lambda x, y: ({"a": x * y[0], "b": (x @ y.T).sum()}, y.exp())  # noqa: E731
        out, vjp_fn, aux = lib.func.vjp(lambda x, y: (f(x, y)[0], f(x, y)[1]), _t(lib, X),
                                        _t(lib, M), has_aux=True)
        cts = {"a": _t(lib, [1.0, -2.0, 0.5]), "b": _t(lib, 3.0)}
        return out, vjp_fn(cts), aux
    _both(run)


def test_vjp_fn_called_twice_and_under_vmap():
    def run(lib):
        _, vjp_fn = lib.func.vjp(lambda x: lib.sin(x) * x.sum(), _t(lib, X))
        a = vjp_fn(_t(lib, [1.0, 0.0, 0.0]))
        b = vjp_fn(_t(lib, [0.0, 1.0, 2.0]))
        c = lib.func.vmap(vjp_fn)(_t(lib, np.eye(3)))
        return a, b, c
    _both(run)


# ----------------------------------------------------------------- jacrev
def test_jacrev_vector_and_matrix():
    _both(lambda lib: lib.func.jacrev(lambda x: lib.sin(x) * x.sum())(_t(lib, X)))
    # matrix in, matrix out: jacobian of shape out.shape + in.shape
    _both(lambda lib: lib.func.jacrev(lambda m: lib.tanh(m @ _t(lib, W)))(_t(lib, M)))
    _both(lambda lib: lib.func.jacrev(lambda m: m.sum())(_t(lib, M)))


def test_jacrev_argnums_aux_pytrees_chunks():
    def f(lib, x, m):
        return (m @ x, (x ** 2).sum()), x.detach() * 0 + 1
    _both(lambda lib: lib.func.jacrev(lambda x, m: f(lib, x, m), argnums=(0, 1), has_aux=True)(
        _t(lib, X), _t(lib, M)))
    _both(lambda lib: lib.func.jacrev(lambda x, m: f(lib, x, m)[0], argnums=1, chunk_size=2)(
        _t(lib, X), _t(lib, M)))
    _both(lambda lib: lib.func.jacrev(lambda p: {"y": p["x"] * p["s"]})(
        {"x": _t(lib, X), "s": _t(lib, 2.0)}))
    with pytest.raises(ValueError, match="`chunk_size` should be greater than 0"):
        ag.func.jacrev(ag.sin, chunk_size=0)


def test_hessian_by_jacrev_jacrev():
    _both(lambda lib: lib.func.jacrev(lib.func.jacrev(lambda x: (x ** 3).sum() * x[0]))(_t(lib, X)))


# ----------------------------------------------------------------- compositions with vmap
def _model_pair():
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    am = ag.nn.Sequential(ag.nn.Linear(3, 4), ag.nn.Tanh(), ag.nn.Linear(4, 2)).double()
    with torch.no_grad(), ag.no_grad():
        for (_, tp), (_, ap) in zip(tm.named_parameters(), am.named_parameters()):
            ap.copy_(ag.tensor(tp.detach().numpy()))
    return am, tm


def test_per_sample_gradients_with_functional_call():
    am, tm = _model_pair()
    data = RNG.normal(size=(6, 3))
    targets = RNG.normal(size=(6, 2))

    def run(lib, model):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x, y):
            out = lib.func.functional_call(model, p, (x.unsqueeze(0),))
            return ((out - y.unsqueeze(0)) ** 2).mean()
        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
            params, _t(lib, data), _t(lib, targets))
    _same(run(ag, am), run(torch, tm))
    # the model's own parameters are back in place
    assert all(isinstance(p, ag.nn.Parameter) for p in am.parameters())


def test_grad_of_vmap_and_vmap_of_vmap():
    data, batches = RNG.normal(size=(4, 3)), RNG.normal(size=(2, 4, 3))
    _both(lambda lib: lib.func.grad(lambda w: lib.func.vmap(lambda r: (r * w).sum().sin())(
        _t(lib, data)).sum())(_t(lib, X)))
    _both(lambda lib: lib.func.vmap(lib.func.vmap(lambda a, b: (a * b).sum()), in_dims=(None, 0))(
        _t(lib, data), _t(lib, batches)))
    _both(lambda lib: lib.func.vmap(lib.func.jacrev(lambda r: lib.sin(r) * r.sum()))(
        _t(lib, data)))


def test_no_perturbation_confusion():
    # d/dx [x * d/dy (x * y)] = d/dx [x * x] = 2x: the inner grad must treat x as a constant
    _both(lambda lib: lib.func.grad(lambda x: (x * lib.func.grad(lambda y: (x * y).sum())(
        _t(lib, X))).sum())(_t(lib, X)))
    # inner vmap closing over a tensor the outer grad differentiates
    _both(lambda lib: lib.func.grad(lambda w: lib.func.vmap(lambda r: lib.func.grad(
        lambda v: (v * w).sum() ** 2)(r))(_t(lib, M)).sum())(_t(lib, X)))


def test_func_grad_then_backward_outside():
    def run(lib):
        x = _t(lib, X).requires_grad_()
        g = lib.func.grad(lambda v: (v ** 3).sum() * v[0])(x)
        g.sum().backward()
        return g.detach(), x.grad
    _both(run)


def test_vmap_with_eager_leaves_then_backward():
    def run(lib):
        w = _t(lib, W).requires_grad_()
        out = lib.func.vmap(lambda r: lib.tanh(r @ w).sum())(_t(lib, M))
        out.sum().backward()
        return out.detach(), w.grad
    _both(run)


def test_ensemble_with_stack_module_state():
    data = RNG.normal(size=(5, 3))
    pairs = [_model_pair() for _ in range(3)]

    def run(lib, models):
        params, buffers = lib.func.stack_module_state(models)
        assert all(p.is_leaf and p.requires_grad for p in params.values())
        out = lib.func.vmap(lambda p, b, x: lib.func.functional_call(models[0], (p, b), (x,)),
                            in_dims=(0, 0, None))(params, buffers, _t(lib, data))
        return out.detach()
    _same(run(ag, [a for a, _ in pairs]), run(torch, [t for _, t in pairs]))


def test_functional_call_args_and_errors():
    am, tm = _model_pair()
    x = RNG.normal(size=(3,))
    # a single non-tuple argument; the module keeps its own parameters afterwards
    w = RNG.normal(size=(4, 3))
    _same(ag.func.functional_call(am, {"0.weight": _t(ag, w)}, _t(ag, x)).detach(),
          torch.func.functional_call(tm, {"0.weight": _t(torch, w)}, _t(torch, x)).detach())
    assert isinstance(am[0].weight, ag.nn.Parameter)
    for lib, m in ((ag, am), (torch, tm)):
        with pytest.raises(RuntimeError, match=r"Unexpected key\(s\): 'foo'\.\n\tMissing key"):
            lib.func.functional_call(m, {"0.weight": _t(lib, w), "foo": _t(lib, 1.0)},
                                     (_t(lib, x),), strict=True)
        with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
            lib.func.functional_call(m, ({"0.weight": _t(lib, w)}, {"0.weight": _t(lib, w)}),
                                     (_t(lib, x),))


def _raised(fn):
    try:
        fn()
    except Exception as e:      # noqa: BLE001 (the type is what is compared)
        return type(e)
    return None


def test_transform_api_refuses_bad_inputs_as_torch(torch):
    """Non-tensor primals, non-tensor and missing cotangents, integer primals and tangents:
    torch's exception types (ValueError, TypeError, RuntimeError), and a None cotangent of a
    one-element output is ones, as torch's."""
    x0 = np.array([0.5, -1.0, 2.0])
    for lib in (ag, torch):
        x = lib.tensor(x0)
        xi = lib.tensor([1, 2, 3])
        cases = {
            "vjp None primal": lambda: lib.func.vjp(lib.sin, None),
            "vjp str primal": lambda: lib.func.vjp(lib.sin, "ab"),
            "vjp_fn None of a vector": lambda: lib.func.vjp(lib.sin, x)[1](None),
            "vjp_fn str": lambda: lib.func.vjp(lambda u: (u * u).sum(), x)[1]("ab"),
            "jvp int primal": lambda: lib.func.jvp(lib.sin, (xi,), (x,)),
            "jvp int tangent": lambda: lib.func.jvp(lib.sin, (x,), (xi,)),
        }
        got = {k: _raised(f) for k, f in cases.items()}
        if lib is ag:
            ours = got
        else:
            assert {k: v.__name__ for k, v in ours.items()} == \
                {k: v.__name__ for k, v in got.items()}
    g, = ag.func.vjp(lambda u: (u * u).sum(), ag.tensor(x0))[1](None)
    tg, = torch.func.vjp(lambda u: (u * u).sum(), torch.tensor(x0))[1](None)
    assert_close(g, tg)
