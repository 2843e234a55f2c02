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
    ours, theirs = _flat(prog(ag, *args)), _flat(prog(torch, *args))
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
