"""The work the transforms do, counted: primitives dispatched per level for the benchmark's
transform rows (bench/run.py: hessian, per_sample, function_grad), so that a change adding
dispatches under a transform shows here rather than only in timings. The bounds are today's
counts with a little room."""
import collections

import numpy as np
import pytest

import arraygrad as ag
import arraygrad.nn.functional as F
from arraygrad.core import dispatch
from arraygrad.func.batch_level import BatchInterpreter
from arraygrad.func.grad_level import GradInterpreter
from arraygrad.func.jvp_level import JvpInterpreter
from arraygrad.ops.linalg import _matmul_arrays
from function_db import ExpSavesOutput


@pytest.fixture
def dispatches(monkeypatch):
    """Counts of primitives processed per level kind ('eager', 'grad', 'jvp', 'batch')."""
    counts = collections.Counter()
    for cls in (GradInterpreter, JvpInterpreter, BatchInterpreter):
        def process(self, prim, args, params, _orig=cls.process):
            counts[self.kind] += 1
            return _orig(self, prim, args, params)
        monkeypatch.setattr(cls, "process", process)
    eager = dispatch._eager

    def counted(prim, args, params):
        counts["eager"] += 1
        return eager(prim, args, params)
    dispatch.swap_eager(counted)
    yield counts
    dispatch.swap_eager(eager)


def _within(counts, bounds):
    for kind, most in bounds.items():
        assert counts[kind] <= most, (kind, dict(counts))


def test_hessian_dispatches(dispatches):
    rng = np.random.default_rng(0)
    a, x = ag.tensor(rng.standard_normal((6, 6))), ag.tensor(rng.standard_normal(6))
    h = ag.func.hessian(lambda x: (ag.tanh(a @ x) ** 2).sum())(x)
    t = np.tanh(a.numpy() @ x.numpy())
    s = 1 - t * t
    want = a.numpy().T @ ((2 * s * s - 4 * t * t * s)[:, None] * a.numpy())
    np.testing.assert_allclose(h.numpy(), want, rtol=1e-10, atol=1e-12)
    _within(dispatches, {"eager": 64, "batch": 27, "jvp": 17, "grad": 6})


def test_per_sample_grad_dispatches(dispatches):
    rng = np.random.default_rng(0)
    w, x = ag.tensor(rng.standard_normal((3, 5))), ag.tensor(rng.standard_normal((4, 5)))
    t = ag.tensor(rng.integers(0, 3, 4))

    def loss(w, xi, ti):
        return F.cross_entropy((xi @ w.T).unsqueeze(0), ti.unsqueeze(0))
    g = ag.func.vmap(ag.func.grad(loss), in_dims=(None, 0, 0))(w, x, t)
    z = x.numpy() @ w.numpy().T
    p = np.exp(z - z.max(1, keepdims=True))
    d = p / p.sum(1, keepdims=True) - np.eye(3)[t.numpy()]
    np.testing.assert_allclose(g.numpy(), d[:, :, None] * x.numpy()[:, None, :], rtol=1e-12)
    _within(dispatches, {"eager": 40, "batch": 35, "grad": 10})


def test_function_under_grad_dispatches(dispatches):
    x = ag.tensor(np.linspace(-1, 1, 5))
    g = ag.func.grad(lambda x: ExpSavesOutput.apply(x).sum())(x)
    np.testing.assert_allclose(g.numpy(), np.exp(x.numpy()), rtol=1e-15)
    # exp, sum (one level down), then backward: sum's expand and the Function's product
    _within(dispatches, {"eager": 4, "grad": 1})


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_stacked_outer_products_are_matmuls_bits(dtype):
    """NOTE [stacked outer products]: the einsum path gives matmul's bits, signed zeros
    (0 + x*y), inf and nan included, in matmul's contiguous layout."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((9, 30, 1)).astype(dtype)
    y = rng.standard_normal((9, 1, 20)).astype(dtype)
    x[0, 0, 0], x[1, 1, 0], y[2, 0, 3], x[3, 2, 0] = -0.0, np.inf, np.nan, 1e-30
    with np.errstate(all="ignore"):     # inf * 0 in complex products (impls run silent)
        got = _matmul_arrays(np, x, y)
        want = np.stack([np.matmul(a, b) for a, b in zip(x, y)])
    assert got.dtype == want.dtype and got.flags.c_contiguous
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
