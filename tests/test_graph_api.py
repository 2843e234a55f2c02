"""Graph-node and engine API against torch: saved values, hooks on saved tensors, anomaly mode,
next_functions, multi-root backward, concurrent accumulation, std/var at zero spread."""
import threading

import numpy as np
import pytest

import arraygrad as ag
from conftest import assert_close


def _both(torch, fn):
    """fn(lib) run with arraygrad and with torch."""
    return fn(ag), fn(torch)


# ----------------------------------------------------------------- std / var at identical values
STD_X = [[1.0, 2.0], [1.0, 3.0]]     # column 0 has identical values: std 0


@pytest.mark.parametrize("name", ["std", "var"])
def test_std_var_grad_at_zero_spread_matches_torch(torch, name):
    def run(lib):
        x = lib.tensor(STD_X, dtype=lib.float64, requires_grad=True)
        y = getattr(x, name)(0)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x)
        jf = lib.func.jacfwd(lambda z: getattr(z, name)(0))(x.detach())
        t = lib.func.jvp(lambda z: getattr(z, name)(0), (x.detach(),), (lib.ones(2, 2, dtype=lib.float64),))[1]
        return y.grad_fn.name(), g, gg, jf, t
    a, t = _both(torch, run)
    assert a[0] == t[0] == ("StdBackward0" if name == "std" else "VarBackward0")
    for u, v in zip(a[1:], t[1:]):
        assert not np.isnan(u.detach().numpy()).any()
        assert_close(u, v)


def test_std_second_derivative_through_the_cotangent_is_finite():
    # torch gives nan here (0/0 inside its masked_fill); the first derivative is identically 0
    # in the zero-spread column whatever the cotangent, so its derivative is 0
    x = ag.tensor(STD_X, dtype=ag.float64, requires_grad=True)
    g_out = ag.tensor([0.7, -1.3], dtype=ag.float64, requires_grad=True)
    g, = ag.autograd.grad(x.std(0), x, g_out, create_graph=True)
    w = ag.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ag.float64)
    dgo, = ag.autograd.grad((g * w).sum(), g_out)
    eps = 1e-6
    fd = []
    for i in range(2):
        e = np.zeros(2)
        e[i] = eps
        hi, = ag.autograd.grad(x.std(0), x, ag.tensor(g_out.detach().numpy() + e), retain_graph=True)
        lo, = ag.autograd.grad(x.std(0), x, ag.tensor(g_out.detach().numpy() - e))
        fd.append(((hi - lo) * w).sum().item() / (2 * eps))
    np.testing.assert_allclose(dgo.numpy(), fd, atol=1e-6)
    assert dgo[0].item() == 0.0
