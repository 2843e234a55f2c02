"""Dask-backed tensors: ops, backward and the func transforms build lazy graphs that keep the
data's chunks; compute() materialises them, values equal to NumPy's."""
import sys
from pathlib import Path

import numpy as np
import pytest

import arraygrad as ag

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def _data(rng, shape, chunks):
    a = rng.standard_normal(shape)
    return a, ag.from_dask(da.from_array(a, chunks=chunks))



def _count_computations():
    from dask.callbacks import Callback

    class Count(Callback):
        n = 0

        def _start(self, dsk):
            Count.n += 1
    return Count


def test_ops_and_backward_stay_lazy_and_keep_chunks():
    rng = np.random.default_rng(0)
    xn, x = _data(rng, (40, 3), (10, 3))
    wn = rng.standard_normal(3)
    w = ag.tensor(wn, requires_grad=True)
    Count = _count_computations()
    with Count():
        z = (x @ w).tanh()
        assert z._data.chunks == ((10, 10, 10, 10),)      # no rechunk to one block
        loss = (z * z).mean() + x.exp().sum(0).log().sum()
        loss.backward()
        assert isinstance(w.grad._data, da.Array)
        assert Count.n == 0, "building the graphs computed something"
        value, grad = ag.compute(loss, w.grad)
        assert Count.n == 1, "loss and gradient were computed separately"
    wt = ag.tensor(wn, requires_grad=True)
    zt = (ag.tensor(xn) @ wt).tanh()
    ((zt * zt).mean() + ag.tensor(xn).exp().sum(0).log().sum()).backward()
    np.testing.assert_allclose(value.numpy(), ((zt * zt).mean() + ag.tensor(xn).exp().sum(0).log().sum()).item(), rtol=1e-13)
    np.testing.assert_allclose(grad.numpy(), wt.grad.numpy(), rtol=1e-12)
    assert "dask.array" in repr(loss)        # printing does not compute


def test_reductions_reduce_per_chunk():
    rng = np.random.default_rng(1)
    xn, x = _data(rng, (40, 6), (10, 3))
    s = x.sum(0)
    # one partial sum per input chunk before the aggregate: the graph grows with the chunks
    assert len(s._data.__dask_graph__()) > x._data.npartitions
    np.testing.assert_allclose(s.numpy(), xn.sum(0), rtol=1e-13)
    assert x.numpy().shape == (40, 6)


def test_computing_gives_inf_and_nan_without_warnings():
    # NumPy's error state is per thread: the chunks run in Dask's worker threads, where
    # arraygrad's compute sets it (the suite turns warnings into errors)
    x = ag.from_dask(da.from_array(np.array([-1.0, 0.0, 1.0, 4.0]), chunks=2))
    root, log, inv = ag.compute(x.sqrt(), x.log(), 1 / x)
    assert np.isnan(root[0].item()) and log[1].item() == -np.inf and inv[1].item() == np.inf
    assert np.isnan(x.sqrt().numpy()[0]) and np.isnan(x.log().sum().item())
    assert ag.compute(x.log(), scheduler="sync")[0][1].item() == -np.inf


def _scatter_tasks(array):
    from arraygrad.backends import dask_scatter
    return [v for v in dict(array.__dask_graph__()).values()
            if isinstance(v, tuple) and v and v[0] is dask_scatter._apply]


def test_scatter_add_runs_per_chunk():
    rng = np.random.default_rng(7)
    wn = rng.standard_normal((12, 3))
    w = ag.from_dask(da.from_array(wn, chunks=(4, 3))).requires_grad_()
    index = np.array([1, 11, 1, 0, 11])
    cot = rng.standard_normal((5, 3))
    g, = ag.autograd.grad(w[ag.tensor(index)], w, ag.from_dask(da.from_array(cot, chunks=(3, 3))))
    expected = np.zeros_like(wn)
    np.add.at(expected, index, cot)
    assert isinstance(g._data, da.Array)
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-14)
    target = ag.from_dask(da.zeros((12, 3), chunks=(4, 3)))
    out = target.index_put((ag.tensor(index),), ag.tensor(cot), accumulate=True)
    # one task per chunk of rows that an index reaches (rows 0-3 and 8-11, not 4-7)
    assert len(_scatter_tasks(out._data)) == 2 and out._data.chunks == ((4, 4, 4), (3,))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-14)


_INDEXES = [
    lambda r: (r.integers(-5, 5, 7),), lambda r: (slice(None), r.integers(0, 4, 7)),
    lambda r: (r.integers(0, 5, 7), slice(1, None, 2), r.integers(0, 6, 7)),   # apart: B first
    lambda r: (slice(None, None, -1), r.integers(0, 4, (3, 1)), r.integers(0, 6, (1, 2))),
    lambda r: (None, r.integers(0, 5, 3), None, 2), lambda r: (r.random((5, 4)) > 0.5,),
    lambda r: (Ellipsis, -1), lambda r: (slice(4, 0, -2), 1), lambda r: (True, 2),
    lambda r: (np.array(2), slice(None), [0, 0, 5])]


@pytest.mark.parametrize("reduce,ufunc", [("sum", np.add), ("amax", np.maximum),
                                          ("prod", np.multiply)])
def test_scatter_reads_the_index_as_numpy_does(reduce, ufunc):
    """ints, slices (negative steps), None, Ellipsis, masks and index arrays, apart or side
    by side, repeated: NumPy's ufunc.at over any chunks of target and values."""
    from arraygrad.backends.dask_scatter import scatter
    rng = np.random.default_rng(9)
    for make in _INDEXES:
        index = make(rng)
        for chunks in ((2, 3, 4), (1, 4, 6)):
            t = rng.standard_normal((5, 4, 6))
            expected = t.copy()
            v = rng.standard_normal(expected[index].shape)
            ufunc.at(expected, index, v)
            values = da.from_array(v, chunks=tuple(max(1, s // 2) for s in v.shape))
            out = scatter(da.from_array(t, chunks=chunks), index, values, reduce)
            assert out.chunks == da.from_array(t, chunks=chunks).chunks
            np.testing.assert_allclose(out.compute(), expected, rtol=1e-13, err_msg=str(index))
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 4"):
        scatter(da.zeros((5, 4, 6), chunks=2), (slice(None), np.array([4])), 1.0, reduce)
    with pytest.raises(ValueError, match="shape mismatch"):
        scatter(da.zeros((5, 4, 6), chunks=2), (np.array([0, 1]),), np.ones(3), reduce)


def test_scatter_from_many_chunks_holds_few_at_a_time():
    """Many values chunks landing in one target chunk: a sum runs as a tree of partial sums,
    other reductions as a chain; no task takes more than _FAN pieces of values."""
    from arraygrad.backends import dask_scatter
    rng = np.random.default_rng(10)
    index, v = rng.integers(0, 3, 200), rng.standard_normal((200, 2))
    values = da.from_array(v, chunks=(5, 1))                     # 80 chunks
    for reduce, ufunc in (("sum", np.add), ("amin", np.minimum)):
        out = dask_scatter.scatter(da.zeros((3, 2), chunks=(3, 2)), (index,), values, reduce)
        expected = np.zeros((3, 2))
        ufunc.at(expected, index, v)
        tasks = _scatter_tasks(out)
        assert len(tasks) == 80 // dask_scatter._FAN
        assert max(len(t) - 5 for t in tasks) == dask_scatter._FAN       # pieces per task
        np.testing.assert_allclose(out.compute(), expected, rtol=1e-13)


def test_autograd_grad_second_order():
    rng = np.random.default_rng(2)
    xn, x = _data(rng, (12,), (4,))
    x.requires_grad_()
    g, = ag.autograd.grad((x ** 3).sum(), x, create_graph=True)
    h, = ag.autograd.grad(g.sum(), x)
    assert isinstance(h._data, da.Array)
    np.testing.assert_allclose(h.compute().numpy(), 6 * xn, rtol=1e-13)


class _Cube(ag.autograd.Function):
    @staticmethod
    def forward(x):
        return x * x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 3 * g * x * x


class _NumpyTanh(ag.autograd.Function):
    """A Function whose forward needs NumPy: it runs chunk by chunk through map_blocks."""

    @staticmethod
    def forward(ctx, x):
        y = ag.map_blocks(np.tanh, x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * (1 - y * y)


def test_custom_functions():
    rng = np.random.default_rng(3)
    xn, x = _data(rng, (20,), (5,))
    x.requires_grad_()
    y = _Cube.apply(x) + _NumpyTanh.apply(x)
    assert isinstance(y._data, da.Array) and y._data.chunks == ((5,) * 4,)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * xn ** 2 + 1 - np.tanh(xn) ** 2, rtol=1e-12)


def test_map_blocks_and_conversions():
    rng = np.random.default_rng(6)
    xn, x = _data(rng, (8, 2), (4, 2))
    lazy = ag.map_blocks(np.tanh, x)
    assert isinstance(lazy._data, da.Array) and lazy._data.chunks == ((4, 4), (2,))
    eager = ag.map_blocks(np.tanh, ag.tensor(xn))
    np.testing.assert_allclose(lazy.numpy(), eager.numpy(), rtol=1e-15)
    f32 = ag.tensor(da.from_array(xn, chunks=(4, 2)), dtype=ag.float32)
    assert isinstance(f32._data, da.Array) and f32.dtype is ag.float32
    assert f32.sum().item() == pytest.approx(xn.sum(), rel=1e-6)
    with pytest.raises(TypeError, match="must be a Tensor"):
        ag.compute(x, xn)


def test_func_transforms():
    rng = np.random.default_rng(4)
    xn, x = _data(rng, (3, 8), (3, 4))      # vmap over the unchunked first dim
    g = ag.func.grad(lambda v: (v.sin() * v).sum())(x)
    assert isinstance(g._data, da.Array)
    np.testing.assert_allclose(g.numpy(), np.sin(xn) + xn * np.cos(xn), rtol=1e-13)
    out, vjp_fn = ag.func.vjp(lambda v: v.exp(), x)
    np.testing.assert_allclose(vjp_fn(ag.ones_like(out))[0].numpy(), np.exp(xn), rtol=1e-13)
    _, t = ag.func.jvp(lambda v: v.exp(), (x,), (ag.ones_like(x),))
    np.testing.assert_allclose(t.numpy(), np.exp(xn), rtol=1e-13)
    rows = ag.vmap(lambda r: (r * r).sum())(x)
    assert isinstance(rows._data, da.Array)
    np.testing.assert_allclose(rows.numpy(), (xn * xn).sum(1), rtol=1e-13)


def test_numpy_tensors_join_and_other_libraries_refuse():
    rng = np.random.default_rng(5)
    xn, x = _data(rng, (6,), (3,))
    both = x + ag.tensor(np.ones(6))       # NumPy data joins the Dask graph
    assert isinstance(both._data, da.Array)
    xp = pytest.importorskip("array_api_strict")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ag.tensor(xp.asarray(np.ones(6))) + x
    with pytest.raises(TypeError, match="from_dask"):
        ag.from_dask(xn)


def test_logistic_regression_on_a_local_cluster():
    """examples/dask_logistic.py, small, on two worker processes over loopback."""
    pytest.importorskip("dask.distributed")
    sys.path.insert(0, str(Path(__file__).parent.parent / "examples"))
    try:
        import dask_logistic
    finally:
        sys.path.pop(0)
    res = dask_logistic.main(["--rows", "60000", "--chunk-rows", "6000", "--features", "8",
                              "--steps", "2", "--check-rows", "3000",
                              "--memory-limit", "300MiB"])
    assert res["grad_error"] < 1e-10
    assert res["losses"][-1] < res["losses"][0]
    assert res["peak_worker_bytes"] < res["memory_limit"]


def test_reshape_masks_and_searches_without_numpy_fallbacks():
    rng = np.random.default_rng(8)
    xn, x = _data(rng, (5, 4, 6), (5, 3, 4))
    y = x.reshape(5, 3, 8)                       # 4 x 6 -> 3 x 8: Dask's reshape refuses it
    assert y._data.chunks[0] == (5,)             # the dims not involved keep their chunks
    np.testing.assert_array_equal(y.numpy(), xn.reshape(5, 3, 8))
    np.testing.assert_array_equal(x.reshape(2, 60).reshape(30, 4).numpy(), xn.reshape(30, 4))
    picked = x[x > 0.5]                          # a data-dependent size, computed at the call
    assert not np.isnan(picked._data.shape[0])
    np.testing.assert_array_equal(picked.numpy(), xn[xn > 0.5])
    seq = ag.from_dask(da.from_array(np.array([1.0, 3.0, 5.0]), chunks=2))
    assert ag.searchsorted(seq, ag.from_dask(da.from_array(np.array(4.0)))).item() == 2



@pytest.mark.parametrize("shape,chunks,new,expected", [
    ((8_000_000, 32), (250_000, 32), (-1,), ((8_000_000,) * 32,)),
    ((8_000_000 * 32,), (8_000_000,), (-1, 32), ((250_000,) * 32, (32,))),
    ((10_000, 784), (1000, 392), (-1, 28, 28), ((1000,) * 10, (14, 14), (28,))),
    ((10_000, 28, 28), (1000, 14, 28), (-1, 784), ((1000,) * 10, (392, 392))),
    # Dask refuses 6 x 4 -> 3 x 8: merged then split, in chunks of whole rows of both sides
    ((4000, 6, 4), (1000, 3, 2), (4000, 3, 8), ((1000,) * 4, (1, 1, 1), (8,))),
    ((8_000_000, 32), (250_000, 16), (4_000_000, 64), ((62_500,) * 64, (64,))),
    ((12, 10), (5, 3), (8, 15), ((2, 2, 2, 2), (15,)))])
def test_reshape_keeps_chunks_of_about_the_same_size(shape, chunks, new, expected):
    x = ag.from_dask(da.zeros(shape, chunks=chunks))          # lazy: nothing is allocated
    y = x.reshape(*new)
    assert y._data.chunks == expected
    before = max(np.prod([max(c) for c in x._data.chunks]), 1)
    after = np.prod([min(c) for c in y._data.chunks])
    assert before / 8 <= after and y._data.npartitions <= x._data.npartitions


def test_iterations_until_convergence_run_per_chunk():
    """igamma loops until every element has converged: on Dask each chunk loops for itself
    (one task per chunk), not a graph growing with each iteration."""
    rng = np.random.default_rng(11)
    an, xn = rng.uniform(0.1, 30, 12), rng.uniform(0.1, 40, 12)
    a, x = (ag.from_dask(da.from_array(v, chunks=4)) for v in (an, xn))
    p = ag.igamma(a, x)
    assert p._data.chunks == ((4, 4, 4),) and len(dict(p._data.__dask_graph__())) <= 12
    np.testing.assert_allclose(p.numpy(), ag.igamma(ag.tensor(an), ag.tensor(xn)).numpy(),
                               rtol=1e-14)
