"""Complex logsumexp, cumprod and logcumsumexp against torch: values, gradients to second
order and jvp (zeros inside the cumulative product included); complex softmax refused with
torch's error."""
import numpy as np
import pytest

import arraygrad as ag


def _z(seed, zeros=()):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))
    for idx in zeros:
        z[idx] = 0
    return z


OPS = {
    "logsumexp": lambda L, x: L.logsumexp(x * 3, 1),
    "logsumexp_all_keepdim": lambda L, x: L.logsumexp(x, (0, 1), keepdim=True),
    "cumprod": lambda L, x: L.cumprod(x, 1),
    "logcumsumexp": lambda L, x: L.logcumsumexp(x * 3, 1),
}


def _arr(t):
    t = t.detach()
    return np.asarray(t.resolve_conj().numpy() if hasattr(t, "resolve_conj") else t.numpy())


@pytest.mark.parametrize("name", OPS)
def test_complex_values_gradients_and_jvp_match_torch(torch, name):
    f = OPS[name]
    z, w = _z(0, zeros=[(1, 2), (2, 1), (2, 3)]), _z(1)
    results = []
    for L in (torch, ag):
        x = L.tensor(z, requires_grad=True)
        out = f(L, x)
        g, = L.autograd.grad((out.real * 1.3 + out.imag * 0.7).sum(), x, create_graph=True)
        gg, = L.autograd.grad((g.real * g.imag).sum(), x)
        _, t = L.func.jvp(lambda v: f(L, v), (L.tensor(z),), (L.tensor(w),))
        results.append([_arr(a) for a in (out, g, gg, t)])
    for what, a, b in zip(("value", "gradient", "second derivative", "jvp"), *results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10, err_msg=f"{name}: {what}")


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, -1])
def test_softmax_refuses_complex_as_torch(torch, fn, dim):
    z = np.ones((2, 3)) + 1j
    with pytest.raises(NotImplementedError) as expected:
        getattr(torch, fn)(torch.tensor(z), dim)
    with pytest.raises(NotImplementedError) as got:
        getattr(ag, fn)(ag.tensor(z), dim)
    assert str(got.value) == str(expected.value)
