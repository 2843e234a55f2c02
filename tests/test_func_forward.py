"""func.jvp, linearize, jacfwd, hessian and their compositions, against torch.func."""
import numpy as np
import pytest

import arraygrad as ag
from arraygrad import func

from conftest import reference_torch

torch = reference_torch()

pytestmark = [pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated"),
              pytest.mark.filterwarnings("ignore:Attempted to insert a get_attr Node")]


def _np(t):
    return np.array(t.detach().numpy())


def _close(a, e, rtol=1e-9, atol=1e-11):
    """Compare pytrees of arraygrad and torch tensors."""
    if isinstance(e, (tuple, list)):
        assert isinstance(a, type(e)) and len(a) == len(e), f"{type(a)} vs {type(e)}"
        for x, y in zip(a, e):
            _close(x, y, rtol, atol)
    elif isinstance(e, dict):
        assert isinstance(a, dict) and list(a) == list(e)
        for k in e:
            _close(a[k], e[k], rtol, atol)
    else:
        assert tuple(a.shape) == tuple(e.shape), f"shape {tuple(a.shape)} != {tuple(e.shape)}"
        assert str(a.dtype).split(".")[-1] == str(e.dtype).split(".")[-1]
        np.testing.assert_allclose(_np(a), _np(e), rtol=rtol, atol=atol)


def _both(*arrays):
    """The same float64 values as arraygrad and torch tensors."""
    return [ag.tensor(np.asarray(a, dtype=np.float64)) for a in arrays], \
           [torch.tensor(np.asarray(a, dtype=np.float64)) for a in arrays]


R = np.random.default_rng(0)
X3 = R.standard_normal(3)
Y3 = R.standard_normal(3)
M23 = R.standard_normal((2, 3))


def f_mixed(L, x, y):
    return L.sin(x) * y + (x @ y) * x


def f_scalar(L, x):
    return (L.exp(x) * x ** 2).sum() + L.logsumexp(x, 0)


# ----------------------------------------------------------------- jvp
def test_jvp_two_args():
    (x, y, tx, ty), (X, Y, TX, TY) = _both(X3, Y3, Y3, X3)
    _close(func.jvp(lambda a, b: f_mixed(ag, a, b), (x, y), (tx, ty)),
           torch.func.jvp(lambda a, b: f_mixed(torch, a, b), (X, Y), (TX, TY)))


def test_jvp_pytrees_in_and_out_with_aux():
    (x, m, tx, tm), (X, M, TX, TM) = _both(X3, M23, Y3, M23 * 2)

    def f(L, d, xs):
        a = d["w"] @ xs[0]
        return {"a": a, "b": (L.tanh(a), d["w"].sum())}, {"aux": xs[0] * 2}
    out = func.jvp(lambda d, xs: f(ag, d, xs), ({"w": m}, [x]), ({"w": tm}, [tx]), has_aux=True)
    exp = torch.func.jvp(lambda d, xs: f(torch, d, xs), ({"w": M}, [X]), ({"w": TM}, [TX]),
                         has_aux=True)
    _close(out[:2], exp[:2])
    _close(out[2], exp[2])


def test_jvp_output_independent_of_input():
    (x, t), (X, T) = _both(X3, Y3)
    c = ag.tensor([1.0, 2.0], dtype=ag.float64)
    p, tan = func.jvp(lambda a: c * 2, (x,), (t,))
    np.testing.assert_allclose(_np(tan), [0.0, 0.0])
    with pytest.raises(RuntimeError, match="independent of the inputs"):
        func.jvp(lambda a: c * 2, (x,), (t,), strict=True)


def test_jvp_errors_like_torch():
    x = ag.ones(3)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        func.jvp(ag.sin, x, (x,))
    with pytest.raises(RuntimeError, match="same python structure"):
        func.jvp(lambda a, b: a, (x, x), (x,))
    with pytest.raises(RuntimeError, match="doesn't match the shape"):
        func.jvp(ag.sin, (x,), (ag.ones(2),))
    with pytest.raises(RuntimeError, match=r"should be a tuple: \(output, aux\)"):
        func.jvp(ag.sin, (x,), (x,), has_aux=True)
    with pytest.raises(RuntimeError, match="at least one Tensor"):
        func.jvp(ag.sin, (), ())
    with pytest.raises(RuntimeError, match="return only tensors, got unsupported type"):
        func.jvp(lambda a: (a, 1.0), (x,), (x,))
    with pytest.raises(RuntimeError, match="non-empty output"):
        func.jvp(lambda a: (), (x,), (x,))


def test_jvp_tangent_is_cast_to_primal_dtype():
    x = ag.tensor([1.0, 2.0], dtype=ag.float64)
    _, t = func.jvp(ag.sin, (x,), (ag.ones(2, dtype=ag.float32),))
    assert t.dtype == ag.float64


# ----------------------------------------------------------------- linearize
def test_linearize_matches_torch():
    (x, y, t1, t2), (X, Y, T1, T2) = _both(X3, Y3, Y3, M23[0])
    out, jfn = func.linearize(lambda a, b: f_mixed(ag, a, b), x, y)
    tout, tjfn = torch.func.linearize(lambda a, b: f_mixed(torch, a, b), X, Y)
    _close(out, tout)
    _close(jfn(t1, t2), tjfn(T1, T2))
    _close(jfn(t2, t1), tjfn(T2, T1))
    with pytest.raises(RuntimeError, match="same argspec"):
        jfn(t1)


# ----------------------------------------------------------------- jacfwd
@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1,)])
def test_jacfwd_argnums(argnums):
    (x, y), (X, Y) = _both(X3, Y3)
    _close(func.jacfwd(lambda a, b: f_mixed(ag, a, b), argnums)(x, y),
           torch.func.jacfwd(lambda a, b: f_mixed(torch, a, b), argnums)(X, Y))


def test_jacfwd_pytree_inputs_and_outputs_with_aux():
    (x, m), (X, M) = _both(X3, M23)

    def f(L, d):
        h = d["w"] @ d["x"]
        return (h, L.sin(d["x"]).sum()), L.cos(h)
    got = func.jacfwd(lambda d: f(ag, d), has_aux=True)({"w": m, "x": x})
    exp = torch.func.jacfwd(lambda d: f(torch, d), has_aux=True)({"w": M, "x": X})
    _close(got, exp)


def test_jacfwd_scalar_and_matrix_shapes():
    (s, m), (S, M) = _both(np.float64(0.7), M23)
    _close(func.jacfwd(lambda a: a * ag.tensor([1.0, 2.0], dtype=ag.float64))(s),
           torch.func.jacfwd(lambda a: a * torch.tensor([1.0, 2.0], dtype=torch.float64))(S))
    _close(func.jacfwd(lambda a: (a.T @ a).sum(0))(m),
           torch.func.jacfwd(lambda a: (a.T @ a).sum(0))(M))


def test_jacfwd_randomness():
    x = ag.ones(3)
    with pytest.raises(RuntimeError, match="randomness"):
        func.jacfwd(lambda a: a * ag.rand(3))(x)
    j_same = func.jacfwd(lambda a: a * ag.rand(()), randomness="same")(x)
    d = np.diag(_np(j_same))
    assert np.all(d == d[0]) and np.all(_np(j_same) - np.diag(d) == 0)
    j_diff = func.jacfwd(lambda a: a * ag.rand(()), randomness="different")(x)
    assert len(set(np.diag(_np(j_diff)).tolist())) == 3
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        func.jacfwd(ag.sin, randomness="sometimes")


# ----------------------------------------------------------------- hessian
@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_hessian_matches_torch(argnums):
    (x, y), (X, Y) = _both(X3, Y3)

    def f(L, a, b):
        return (L.tanh(a) * b).sum() + (a * a * b).sum() ** 2
    _close(func.hessian(lambda a, b: f(ag, a, b), argnums)(x, y),
           torch.func.hessian(lambda a, b: f(torch, a, b), argnums)(X, Y))


# ----------------------------------------------------------------- compositions
def test_jvp_of_grad():
    (x, t), (X, T) = _both(X3, Y3)
    _close(func.jvp(func.grad(lambda a: f_scalar(ag, a)), (x,), (t,)),
           torch.func.jvp(torch.func.grad(lambda a: f_scalar(torch, a)), (X,), (T,)))


def test_grad_of_function_using_jvp():
    (x, t), (X, T) = _both(X3, Y3)

    def g(L, F, a, v):
        return F.jvp(lambda z: f_scalar(L, z), (a,), (v,))[1]
    _close(func.grad(lambda a, v: g(ag, func, a, v), (0, 1))(x, t),
           torch.func.grad(lambda a, v: g(torch, torch.func, a, v), (0, 1))(X, T))


def test_jacfwd_of_jacrev_and_jacrev_of_jacfwd():
    (x,), (X,) = _both(X3)

    def f(L, a):
        return L.sin(a) * a.sum() + L.softmax(a, 0)
    _close(func.jacfwd(func.jacrev(lambda a: f(ag, a)))(x),
           torch.func.jacfwd(torch.func.jacrev(lambda a: f(torch, a)))(X))
    _close(func.jacrev(func.jacfwd(lambda a: f(ag, a)))(x),
           torch.func.jacrev(torch.func.jacfwd(lambda a: f(torch, a)))(X))


def test_jacfwd_of_jacfwd():
    (x,), (X,) = _both(X3)
    _close(func.jacfwd(func.jacfwd(lambda a: f_scalar(ag, a)))(x),
           torch.func.jacfwd(torch.func.jacfwd(lambda a: f_scalar(torch, a)))(X))


def test_vmap_of_jvp_and_jvp_of_vmap():
    (m, tm), (M, TM) = _both(M23, M23[::-1].copy())

    def one(L, F, a, t):
        return F.jvp(lambda z: L.sin(z) * z.sum(), (a,), (t,))
    _close(func.vmap(lambda a, t: one(ag, func, a, t))(m, tm),
           torch.func.vmap(lambda a, t: one(torch, torch.func, a, t))(M, TM))
    _close(func.jvp(func.vmap(lambda a: ag.sin(a) * a.sum()), (m,), (tm,)),
           torch.func.jvp(torch.func.vmap(lambda a: torch.sin(a) * a.sum()), (M,), (TM,)))


def test_jvp_then_eager_backward():
    """func.jvp inside a region where inputs require grad, then .backward() outside."""
    grads = []
    for L, F in ((ag, func), (torch, torch.func)):
        x = L.tensor(X3, requires_grad=True)
        _, t = F.jvp(lambda a: L.sin(a) * a, (x,), (L.ones(3, dtype=L.float64),))
        (t * t).sum().backward()
        grads.append(x.grad)
    _close(grads[0], grads[1])


def test_no_perturbation_confusion():
    """d/dx [x * d/dy (x + y)] = 1: the inner jvp must not see the outer tangent on x."""
    x = ag.tensor(2.0, dtype=ag.float64)
    one = ag.tensor(1.0, dtype=ag.float64)

    def f(a):
        return a * func.jvp(lambda y: a + y, (one,), (one,))[1]
    _, d = func.jvp(f, (x,), (one,))
    assert d.item() == 1.0
    assert func.jacfwd(f)(x).item() == 1.0
    # the same closure under nested jvp with the tangent on the closed-over variable
    _, d2 = func.jvp(lambda a: func.jvp(lambda y: a * y * y, (one,), (one,))[1], (x,), (one,))
    assert d2.item() == 2.0


def _square_function():
    class Square(ag.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, = inputs
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

        @staticmethod
        def jvp(ctx, t):
            x, = ctx.saved_tensors
            return 2 * x * t
    return Square


def test_nested_jacfwd_through_function_with_jvp():
    """Issue 4: torch 2.13 gives 108, 0, 0; the right values are 108, 108, 72."""
    Square = _square_function()

    def f(x):
        return Square.apply(Square.apply(x)).sum()
    x = ag.tensor(3.0, dtype=ag.float64)
    d1 = func.jacfwd(f)(x)
    d2 = func.jacfwd(func.jacfwd(f))(x)
    d3 = func.jacfwd(func.jacfwd(func.jacfwd(f)))(x)
    assert (d1.item(), d2.item(), d3.item()) == (108.0, 108.0, 72.0)


def test_control_flow_and_item_on_primal_values():
    (x, t), (X, T) = _both(X3, Y3)

    def f(L, a):
        s = a.sum()
        return (L.sin(a) if s > 0 else L.cos(a)) * s.item()
    _close(func.jvp(lambda a: f(ag, a), (x,), (t,)),
           torch.func.jvp(lambda a: f(torch, a), (X,), (T,)))
    _close(func.jvp(lambda a: f(ag, a), (-x,), (t,)),
           torch.func.jvp(lambda a: f(torch, a), (-X,), (T,)))


def test_jvp_wrt_module_parameters_with_functional_call():
    """Forward-mode directional derivative of a model's output along a parameter direction."""
    ag.manual_seed(0)
    model = ag.nn.Sequential(ag.nn.Linear(3, 4), ag.nn.Tanh(), ag.nn.Linear(4, 2)).double()
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(),
                                 torch.nn.Linear(4, 2)).double()
    r = np.random.default_rng(1)
    params = {k: r.standard_normal(tuple(p.shape)) for k, p in model.named_parameters()}
    dirs = {k: r.standard_normal(p.shape) for k, p in params.items()}
    x = r.standard_normal((5, 3))
    res = []
    for L, F, m in ((ag, func, model), (torch, torch.func, tmodel)):
        p = {k: L.tensor(a) for k, a in params.items()}
        d = {k: L.tensor(a) for k, a in dirs.items()}
        res.append(F.jvp(lambda q: F.functional_call(m, q, (L.tensor(x),)), (p,), (d,)))
    _close(res[0], res[1])


def test_hessian_of_dict_input_and_jacfwd_multiple_outputs():
    (x, m), (X, M) = _both(X3, M23)

    def f(L, d):
        return (L.tanh(d["w"] @ d["x"]) ** 2).sum()

    def g(L, d, s):
        return d["w"] @ L.sin(d["x"]) * s.sum(), (d["x"] * s).sum()
    _close(func.hessian(lambda d: f(ag, d))({"w": m, "x": x}),
           torch.func.hessian(lambda d: f(torch, d))({"w": M, "x": X}))
    _close(func.jacfwd(lambda d, s: g(ag, d, s), (0, 1))({"w": m, "x": x}, x),
           torch.func.jacfwd(lambda d, s: g(torch, d, s), (0, 1))({"w": M, "x": X}, X))


def test_nested_dual_levels_through_function_with_jvp():
    """Beyond PyTorch: nested dual levels through a Function's jvp staticmethod."""
    from arraygrad.autograd import forward_ad as fwAD
    Square = _square_function()
    x, one = ag.tensor(3.0, dtype=ag.float64), ag.tensor(1.0, dtype=ag.float64)
    with fwAD.dual_level():
        a = fwAD.make_dual(x, one)
        with fwAD.dual_level():
            _, t = fwAD.unpack_dual(Square.apply(Square.apply(fwAD.make_dual(a, one))))
        d1, d2 = fwAD.unpack_dual(t)
    assert (d1.item(), d2.item()) == (108.0, 108.0)


def _g(L):
    return lambda x: L.sin(x) * x.sum() + x ** 2


COMPOSITIONS = {
    "vmap(jacfwd)": lambda F, L: F.vmap(F.jacfwd(_g(L))),
    "jacfwd(vmap)": lambda F, L: F.jacfwd(F.vmap(_g(L))),
    "grad(jacfwd)": lambda F, L: F.grad(lambda x: F.jacfwd(_g(L))(x).sum()),
    "vmap(hessian)": lambda F, L: F.vmap(F.hessian(lambda x: (L.tanh(x) ** 3).sum())),
    "jacrev(jacfwd(vmap))": lambda F, L: F.jacrev(F.jacfwd(F.vmap(lambda x: L.exp(x).sum()))),
}


@pytest.mark.parametrize("name", COMPOSITIONS)
def test_compositions_with_vmap_and_grad(name):
    (m,), (M,) = _both(np.random.default_rng(3).standard_normal((4, 3)))
    _close(COMPOSITIONS[name](func, ag)(m), COMPOSITIONS[name](torch.func, torch)(M))


def test_forward_mode_example_runs(capsys):
    import pathlib
    import runpy
    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "forward_mode.py"
    runpy.run_path(str(path), run_name="__main__")
    assert "[108.0, 108.0, 72.0]" in capsys.readouterr().out


def test_jvp_of_function_without_materialized_grads_gets_none_for_missing_tangent(torch):
    # setup_context turns materialization off: the jvp rule sees None for an input with no
    # tangent (y is captured, not a primal of func.jvp), as torch
    seen = {}
    for T in (ag, torch):
        class Mul(T.autograd.Function):
            @staticmethod
            def forward(x, y):
                return x * y

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.set_materialize_grads(False)
                ctx.save_for_forward(*inputs)

            @staticmethod
            def backward(ctx, g):
                return g, g

            @staticmethod
            def jvp(ctx, tx, ty):
                seen[T.__name__] = (tx is None, ty is None)
                x, y = ctx.saved_tensors
                return tx * y if ty is None else tx * y + ty * x

        x = T.tensor([1.0, 2.0], dtype=T.float64)
        y = T.tensor([3.0, 4.0], dtype=T.float64)
        out, tan = T.func.jvp(lambda a: Mul.apply(a, y), (x,), (T.ones(2, dtype=T.float64),))
        assert tan.tolist() == [3.0, 4.0]
    assert seen["arraygrad"] == seen["torch"] == (False, True)
