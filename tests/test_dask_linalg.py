"""Linear algebra and FFTs on Dask stacks: NumPy's routines run per chunk of the stack dims
(each matrix, each transformed axis gathered into one chunk), the graphs stay lazy and keep
the stack's chunks, and values and gradients equal NumPy's."""
import numpy as np
import pytest

import arraygrad as ag

da = pytest.importorskip("dask.array")


class _Count:
    """How many Dask computations ran inside the block."""

    def __enter__(self):
        from dask.callbacks import Callback
        counter = self
        self.n = 0

        class Count(Callback):
            def _start(self, dsk):
                counter.n += 1
        self._cb = Count()
        self._cb.__enter__()
        return self

    def __exit__(self, *exc):
        self._cb.__exit__(*exc)


def _loss(lib_tensor, a, rhs):
    A = lib_tensor(a)
    S = A @ A.mT + 4 * ag.eye(4, dtype=ag.float64)
    L, V = ag.linalg.eigh(S)
    U, s, Vh = ag.linalg.svd(A)
    X = ag.linalg.solve(S, lib_tensor(rhs))
    loss = (L.sin().sum() + (V * V).sum() + s.sum() + ag.linalg.det(S).log().sum()
            + ag.linalg.inv(S).sum() + X.sum() + ag.linalg.cholesky(S).sum()
            + ag.fft.fft(A, dim=-1).abs().sum())
    return A, loss


def test_stack_linalg_and_fft_stay_lazy_per_chunk_and_equal_numpy():
    rng = np.random.default_rng(0)
    a, rhs = rng.standard_normal((6, 4, 4)), rng.standard_normal((6, 4, 2))
    with _Count() as count:
        A, loss = _loss(lambda v: ag.tensor(da.from_array(v, chunks=(2, 3, 3)),
                                            requires_grad=True), a, rhs)
        grad, = ag.autograd.grad(loss, A)
    assert count.n == 0, "building the graphs computed something"
    assert isinstance(grad._data, da.Array) and grad._data.chunks[0] == (2, 2, 2)
    value, grad = ag.compute(loss, grad)
    An, loss_n = _loss(lambda v: ag.tensor(v, requires_grad=True), a, rhs)
    grad_n, = ag.autograd.grad(loss_n, An)
    np.testing.assert_allclose(value.numpy(), loss_n.item(), rtol=1e-12)
    np.testing.assert_allclose(grad.numpy(), grad_n.numpy(), rtol=1e-10, atol=1e-12)
