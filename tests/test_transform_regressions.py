"""Issue 7: transforms, levels and in-place writes, each case run by arraygrad and torch.

Each program takes the module (`arraygrad` or `torch`) and returns tensors;
`_same` runs it with both and compares in float64.
"""
import math

import numpy as np
import pytest

import arraygrad as ag
from conftest import assert_close


def _f64(M, v):
    return M.tensor(v, dtype=M.float64)


def _flat(r):
    if isinstance(r, (tuple, list)):
        return [x for v in r for x in _flat(v)]
    return [r]


def _same(torch, prog, *args):
    """prog gives the same results with both modules, or raises the same exception type."""
    try:
        theirs = _flat(prog(torch, *args))
    except Exception as e:     # noqa: BLE001 - whatever torch raises, we must raise too
        with pytest.raises(type(e)):
            prog(ag, *args)
        return
    ours = _flat(prog(ag, *args))
    assert len(ours) == len(theirs)
    for i, (a, e) in enumerate(zip(ours, theirs)):
        if isinstance(e, torch.Tensor):
            assert_close(a, e, what=f"result {i}: ")
        else:
            assert a == e, f"result {i}: {a!r} != torch's {e!r}"


# ----------------------------------------------------------------- no_grad at every level
def test_no_grad_inside_nested_grads(torch):
    """Item 4: a value computed under no_grad() is constant to every reverse level."""
    def prog(M):
        def f(x):
            with M.no_grad():
                c = x.sin()
            return (x * c).sum()
        x = _f64(M, [0.5, -1.0])
        g2 = M.func.grad(lambda z: M.func.grad(f)(z).sum())(x)
        g3 = M.func.grad(lambda z: M.func.grad(lambda w: M.func.grad(f)(w).pow(2).sum())(z).sum())(x)
        h = M.func.hessian(f)(x)
        return g2, g3, h
    _same(torch, prog)


# ----------------------------------------------------------------- version counter, *_like
def test_version_is_an_int_shared_with_views(torch):
    def prog(M):
        x = _f64(M, [1.0, 2.0, 3.0])
        v = x[1:]
        v.mul_(2)
        x.add_(1)
        return [type(x._version).__name__, x._version, v._version, x.detach()._version]
    _same(torch, prog)


@pytest.mark.parametrize("transform", ["vmap", "grad", "jvp", "vmap_grad"])
def test_like_inside_transforms_is_a_real_fill(torch, transform):
    """zeros_like/ones_like/full_like inside transforms: exact fills (no NaN from inf inputs),
    batched like their input, so they can be written in place per example."""
    def prog(M):
        x = _f64(M, [[math.inf, 1.0, -2.0], [0.5, -math.inf, math.nan]])

        def f(z):
            a = M.zeros_like(z)
            a.copy_(z.exp() * 0.5)          # per-example write into the fill
            b = M.ones_like(z) * 2 + M.full_like(z, 3.0)
            return a + b + M.zeros_like(z, dtype=M.float32).double()

        finite = M.where(x.isfinite(), x, M.zeros_like(x))
        if transform == "vmap":
            return M.func.vmap(f)(x)
        if transform == "grad":
            return M.func.grad(lambda z: f(z).sum())(finite)
        if transform == "jvp":
            return M.func.jvp(f, (finite,), (M.ones_like(finite),))
        return M.func.vmap(M.func.grad(lambda z: f(z).sum()))(finite)
    _same(torch, prog)


# ----------------------------------------------------------------- in-place under grad levels
def _inplace_programs(M):
    """In-place writes on intermediates, clones and views, as functions of (x, y)."""
    def through_select(x, y):           # item 2
        t = x * 1.0
        t[0].mul_(y[0])
        return (t * x).sum()

    def through_transpose(x, y):        # item 2, a transposed view written twice
        t = (x * 1.0).reshape(1, 2)
        v = t.t()
        v[1].mul_(y[1])
        v.add_(y.reshape(2, 1))
        return (t * t).sum()

    def on_intermediate(x, y):          # item 3
        t = x * 1.0
        t.mul_(x)
        return t.sum() + (t * y).sum()

    def on_clone(x, y):                 # item 7: mul_ must not save the value it overwrites
        t = x.clone()
        t.mul_(y)
        return (t * t).sum()

    def setitem(x, y):
        t = x * y
        t[1] = x[0] * 3
        return (t * t.sin()).sum()

    def fill_view(x, y):
        t = x * 2
        t[0].fill_(3.0)
        return (t * t * y).sum()

    def sibling_views(x, y):            # a write through one view is seen through another
        t = (x * y).reshape(2, 1)
        a, b = t[0], t[:, 0]
        a.mul_(x[1])
        return (b * b).sum() + t.sum()

    def sin_chain(x, y):
        t = x.sin()
        t.sub_(y).div_(x * x + 1)
        t[0].tanh_()
        return (t * y).sum()

    def saved_output_overwritten(x, y):     # exp saves its result: torch refuses, so must we
        t = x.exp()
        t.sub_(y)
        return (t * y).sum()
    return [through_select, through_transpose, on_intermediate, on_clone, setitem, fill_view,
            sibling_views, sin_chain, saved_output_overwritten]


_PROGRAMS = [f.__name__ for f in _inplace_programs(ag)]


def _under(M, transform, f, x, y):
    fn = M.func
    if transform == "grad":
        return fn.grad(f, argnums=(0, 1))(x, y)
    if transform == "vjp":
        out, vjp_fn = fn.vjp(lambda a, b: f(a, b) * a, x, y)
        return out, vjp_fn(M.ones_like(out) * 0.5)
    if transform == "hessian":
        return fn.hessian(f, argnums=(0, 1))(x, y)
    if transform == "jacrev_jacrev":
        return fn.jacrev(fn.jacrev(f))(x, y)
    if transform == "vmap_grad":
        xs, ys = M.stack([x, x * 2, -x]), M.stack([y, y + 1, y * y])
        return fn.vmap(fn.grad(f, argnums=(0, 1)))(xs, ys)
    if transform == "grad_vmap":
        xs = M.stack([x, x * 2, -x])
        return fn.grad(lambda a: fn.vmap(f, in_dims=(0, None))(a, y).sum())(xs)
    if transform == "jvp_grad":
        return fn.jvp(fn.grad(f), (x, y), (y * 0.5, x - 1))
    if transform == "grad_jvp":
        if M is not ag:
            # torch's forward AD refuses some writes through views here (a version-counter
            # artifact); reverse over reverse computes the same derivative
            def jvp_of(a):
                ga, gy = fn.grad(f, argnums=(0, 1))(a, y)
                return ga.sum() + (gy * a).sum()
            return fn.grad(jvp_of)(x)
        return fn.grad(lambda a: fn.jvp(f, (a, y), (M.ones_like(a), a))[1])(x)
    raise AssertionError(transform)


@pytest.mark.parametrize("transform", ["grad", "vjp", "hessian", "jacrev_jacrev", "vmap_grad",
                                       "grad_vmap", "jvp_grad", "grad_jvp"])
@pytest.mark.parametrize("prog", _PROGRAMS)
def test_inplace_under_transforms(torch, transform, prog):
    """Items 2, 3, 7: in-place through views, on intermediates and on clones, under reverse
    transforms and their compositions, as torch.func computes them."""
    def run(M):
        f = dict(zip(_PROGRAMS, _inplace_programs(M)))[prog]
        x, y = _f64(M, [0.5, -1.0]), _f64(M, [2.0, 3.0])
        return _under(M, transform, f, x, y)
    _same(torch, run)


def test_inplace_on_grad_inputs_is_refused_as_torch(torch):
    for M in (ag, torch):
        x = _f64(M, [0.5, -1.0])
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            M.func.grad(lambda z: z.mul_(2).sum())(x)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            M.func.grad(lambda z: z[0].mul_(2).sum())(x)


# ----------------------------------------------------------------- writes into tensors made inside
def _made_inside_programs(M, x):
    """f(y) writing values of the transform into tensors created inside it from the untracked
    outer tensor `x` (item 8), by in-place ops, views, __setitem__ and factories."""
    def clone_mul(y):
        return x.clone().mul_(y)

    def zeros_copy(y):
        return M.zeros(2, dtype=M.float64).copy_(y) * y

    def setitem(y):
        t = x.clone()
        t[0] = y[1] * y[0]
        return t * t

    def zeros_like_setitem(y):
        t = M.zeros_like(x)
        t[1:] = y[:1].exp()
        return t + y

    def view_of_clone(y):
        t = x.clone()
        t[0].mul_(y[1])
        return t * y

    def view_made_before(y):             # a view taken before its base joined the level
        t = x * 2
        v = t[1:]
        t.add_(y)
        return v * y + t

    def tensor_factory(y):
        t = M.tensor([1.0, 2.0], dtype=M.float64)
        t.mul_(y).add_(x)
        return t.sin()
    return [clone_mul, zeros_copy, setitem, zeros_like_setitem, view_of_clone,
            view_made_before, tensor_factory]


_MADE_INSIDE = [f.__name__ for f in _made_inside_programs(ag, None)]


@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
                                       "dual", "vmap_grad"])
@pytest.mark.parametrize("prog", _MADE_INSIDE)
def test_inplace_into_tensors_made_inside(torch, transform, prog):
    def run(M):
        x, y = _f64(M, [0.5, -1.0]), _f64(M, [2.0, 3.0])
        f = dict(zip(_MADE_INSIDE, _made_inside_programs(M, x)))[prog]
        fn = M.func
        if transform == "grad":
            return fn.grad(lambda a: f(a).sum())(y)
        if transform == "vjp":
            out, vjp_fn = fn.vjp(f, y)
            return out, vjp_fn(y * 0.5)
        if transform == "jvp":
            return fn.jvp(f, (y,), (x + 2,))
        if transform == "jacrev":
            return fn.jacrev(f)(y)
        if transform == "jacfwd":
            return fn.jacfwd(f)(y)
        if transform == "hessian":
            return fn.hessian(lambda a: f(a).sum())(y)
        if transform == "dual":
            fwAD = M.autograd.forward_ad
            with fwAD.dual_level():
                p, t = fwAD.unpack_dual(f(fwAD.make_dual(y, x + 2)))
                return p, t
        return fn.vmap(fn.grad(lambda a: f(a).sum()))(M.stack([y, y * 2]))
    _same(torch, run)


def test_inplace_into_captured_tensors_is_refused(torch):
    """As torch: a transform may not write into tensors it captured from outside."""
    for M in (ag, torch):
        x, y = _f64(M, [0.5, -1.0]), _f64(M, [2.0, 3.0])
        for f in (lambda a: x.mul_(a), lambda a: x[0].mul_(a[0]),
                  lambda a: x.__setitem__(0, a[0])):
            with pytest.raises(RuntimeError, match="captured Tensor"):
                M.func.grad(lambda a: (f(a), a.sum())[1])(y)
            with pytest.raises(RuntimeError, match="captured Tensor"):
                M.func.jvp(lambda a: (f(a), a * 1)[1], (y,), (y,))
        with pytest.raises(RuntimeError, match="vmap"):
            M.func.vmap(lambda a: x.clone().mul_(a))(M.stack([y, y]))
        assert x.tolist() == [0.5, -1.0]
