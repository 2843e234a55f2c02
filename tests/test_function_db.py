"""Every transform test over the Function catalogue (function_db.py): gradcheck (backward,
forward AD, batched), gradgradcheck, func.grad against eager backward, vmap against a loop,
jacfwd against jacrev."""
import numpy as np
import pytest

import arraygrad as ag
from arraygrad.autograd import gradcheck, gradgradcheck
from arraygrad.func import grad, vmap, jacfwd, jacrev
from function_db import DB


NAMES = sorted(DB)


@pytest.mark.parametrize("name", NAMES)
def test_gradcheck(name):
    f, sample = DB[name]
    assert gradcheck(f, sample(), check_forward_ad=True, check_batched_grad=True)


@pytest.mark.parametrize("name", NAMES)
def test_gradgradcheck(name):
    f, sample = DB[name]
    assert gradgradcheck(f, sample(), check_batched_grad=True)


@pytest.mark.parametrize("name", NAMES)
def test_func_grad_matches_eager_backward(name):
    f, sample = DB[name]
    inputs = sample()
    weights = [ag.randn(f(*inputs).shape, dtype=ag.float64)]
    (f(*inputs) * weights[0]).sum().backward()
    detached = [x.detach() for x in inputs]
    got = grad(lambda *xs: (f(*xs) * weights[0]).sum(), argnums=tuple(range(len(inputs))))(
        *detached)
    for g, x in zip(got, inputs):
        np.testing.assert_allclose(g.numpy(), x.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("name", NAMES)
def test_vmap_matches_loop(name):
    f, sample = DB[name]
    batch = [ag.stack([x.detach() * (1 + 0.1 * b) for b in range(3)]) for x in sample()]
    got = vmap(f)(*batch)
    expected = ag.stack([f(*[x[b] for x in batch]) for b in range(3)])
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-10)


@pytest.mark.parametrize("name", NAMES)
def test_jacfwd_matches_jacrev(name):
    f, sample = DB[name]
    inputs = [x.detach() for x in sample()]
    argnums = tuple(range(len(inputs)))
    for a, b in zip(jacfwd(f, argnums=argnums)(*inputs), jacrev(f, argnums=argnums)(*inputs)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
