"""Order statistics, counting and the float-bit ops (ops/stats.py, ops/bits.py) beyond the op
catalogue: NaN handling, data-dependent shapes, q gradients, dtypes and torch's errors."""
import numpy as np
import pytest

import arraygrad as ag

NAN = float("nan")


def _same(a, t):
    assert tuple(a.shape) == tuple(t.shape)
    assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), rtol=1e-12, equal_nan=True)


def _both(torch, fn, *arrays, **kw):
    a = fn(ag, *(ag.tensor(x) for x in arrays), **kw)
    t = fn(torch, *(torch.tensor(x) for x in arrays), **kw)
    a, t = (a, t) if isinstance(a, tuple) else ((a,), (t,))
    assert len(a) == len(t)
    for x, y in zip(a, t):
        _same(x, y)


@pytest.mark.parametrize("kw", [dict(), dict(return_inverse=True, return_counts=True),
                                dict(return_counts=True, sorted=True)])
def test_unique_floats_with_nan(torch, kw):
    _both(torch, lambda L, x: L.unique(x, **kw), np.array([3.0, NAN, 1.0, 1.0, NAN, -0.5]))


def test_unique_consecutive_floats(torch):
    _both(torch, lambda L, x: L.unique_consecutive(x, return_inverse=True, return_counts=True),
          np.array([[1.5, 1.5], [2.0, 1.5]]))


def test_bincount_weights_dtypes(torch):
    x = np.array([0, 3, 3, 1])
    for w in (np.array([1.0, 2, 3, 4], np.float32), np.array([1.0, 2, 3, 4]), np.array([1, 2, 3, 4])):
        _both(torch, lambda L, i, v: L.bincount(i, v, minlength=6), x, w)


def test_histc_data_range(torch):
    rng = np.random.default_rng(0)
    _both(torch, lambda L, x: L.histc(x, bins=13), rng.standard_normal(200))
    _both(torch, lambda L, x: L.histc(x, bins=3), np.array([1.0, 1.0, 1.0], np.float32))
    _both(torch, lambda L, x: L.histc(x, bins=4), np.zeros(0))


def test_median_of_empty_is_nan(torch):
    _both(torch, lambda L, x: L.median(x), np.zeros(0))
    _both(torch, lambda L, x: L.nanmedian(x), np.array([NAN, NAN]))


def test_median_shares_gradient_among_ties(torch):
    x = np.array([1.0, 2.0, 5.0, 2.0, 9.0])
    grads = []
    for L in (ag, torch):
        t = L.tensor(x, requires_grad=True)
        L.median(t).backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])
    np.testing.assert_allclose(grads[0], [0, 0.5, 0, 0.5, 0])


@pytest.mark.parametrize("interpolation", ["linear", "midpoint", "nearest", "lower"])
def test_quantile_gradient_in_q(torch, interpolation):
    x = np.random.default_rng(1).standard_normal((3, 6))
    grads = []
    for L in (ag, torch):
        xt = L.tensor(x, requires_grad=True)
        q = L.tensor([0.15, 0.55, 0.9], dtype=L.float64, requires_grad=True)
        L.quantile(xt, q, dim=1, interpolation=interpolation).sum().backward()
        grads.append((xt.grad.numpy(), np.zeros(3) if q.grad is None else q.grad.numpy()))
    for a, t in zip(*grads):
        np.testing.assert_allclose(a, t, rtol=1e-12, atol=1e-12)


def test_cummax_ties_take_the_latest_index(torch):
    _both(torch, lambda L, x: L.cummax(x, 0), np.array([1.0, 3, 3, 1, 3, NAN, 2, NAN, 9]))
    _both(torch, lambda L, x: L.cummin(x, 0), np.array([2, 1, 1, 5, 1]))


def test_logcumsumexp_tails():
    # out_0 = x_0 exactly, so its tangent and gradient are 1 however small x_0 is
    x = ag.tensor([-1000.0, 0.0, -float("inf"), 3.0], dtype=ag.float64, requires_grad=True)
    y = ag.logcumsumexp(x, 0)
    np.testing.assert_allclose(y.detach().numpy()[:2], [-1000.0, 0.0])
    (g,) = ag.autograd.grad(y[0], x)
    np.testing.assert_allclose(g.numpy(), [1.0, 0.0, 0.0, 0.0])
    _, t = ag.func.jvp(lambda v: ag.logcumsumexp(v, 0), (x.detach(),),
                       (ag.tensor([1.0, 0, 0, 0], dtype=ag.float64),))
    assert t[0].item() == 1.0 and abs(t[1].item()) < 1e-300


@pytest.mark.parametrize("call", [
    lambda L: L.kthvalue(L.tensor([1.0, 2.0]), 3),
    lambda L: L.kthvalue(L.tensor([1.0, 2.0]), 0),
    lambda L: L.median(L.zeros(2, 0), 1),
    lambda L: L.mode(L.zeros(2, 0), 1),
    lambda L: L.quantile(L.tensor([1.0, 2.0]), 1.5),
    lambda L: L.quantile(L.tensor([1.0, 2.0]), L.tensor([0.5, 2.0])),
    lambda L: L.quantile(L.tensor([1, 2]), 0.5),
    lambda L: L.quantile(L.tensor([]), 0.5),
    lambda L: L.quantile(L.tensor([1.0, 2.0]), L.tensor([0.5], dtype=L.float64)),
    lambda L: L.quantile(L.tensor([1.0, 2.0]), 0.5, interpolation="cubic"),
    lambda L: L.logcumsumexp(L.tensor([1, 2]), 0),
    lambda L: L.bincount(L.tensor([0, -1])),
    lambda L: L.bincount(L.tensor([0.0, 1.0])),
    lambda L: L.bincount(L.tensor([[0]])),
    lambda L: L.bincount(L.tensor([0, 1]), L.tensor([1.0])),
    lambda L: L.histc(L.tensor([1, 2])),
    lambda L: L.histc(L.tensor([1.0]), bins=0),
    lambda L: L.histc(L.tensor([1.0]), min=2, max=1),
    lambda L: L.bucketize(L.tensor([1]), L.tensor([[1, 2]])),
    lambda L: L.searchsorted(L.tensor([[1, 2], [3, 4]]), L.tensor([[1, 2]])),
    lambda L: L.searchsorted(L.tensor([1, 2]), L.tensor([1]), side="middle"),
    lambda L: L.searchsorted(L.tensor([1, 2]), L.tensor([1]), side="left", right=True),
    lambda L: L.heaviside(L.tensor([1.0]), L.tensor([1])),
])
def test_errors_as_torch(torch, call):
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(type(expected.value)) as got:
        call(ag)
    assert str(got.value).split(" (")[0] == str(expected.value).split(" (")[0]


def test_nan_to_num_defaults_per_dtype(torch):
    x = np.array([NAN, np.inf, -np.inf, 1.5])
    for dt in (np.float32, np.float64):
        _both(torch, lambda L, v: L.nan_to_num(v), x.astype(dt))
    _both(torch, lambda L, v: v.nan_to_num(), np.array([1, 2]))


def test_copysign_of_integers_and_signed_zero(torch):
    _both(torch, lambda L, a, b: L.copysign(a, b), np.array([1, 0, -1]), np.array([-0.0, 0.0, -2.0]))


@pytest.mark.filterwarnings("ignore:torch.searchsorted.*non-contiguous")    # torch's own
@pytest.mark.parametrize("rows", [False, True], ids=["1d_sequence", "row_per_value_row"])
@pytest.mark.parametrize("in_dims", [(None, 0), (0, None), (0, 0), (1, 0), (0, 1)])
@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_under_vmap_as_torch(torch, rows, in_dims, right):
    rng = np.random.default_rng(3)
    base = np.sort(rng.uniform(-2, 2, (3, 5) if rows else (5,)), -1)
    if not rows and in_dims[0] == 1:
        pytest.skip("a 1-d sequence has no dim 1 to batch")
    seq = base if in_dims[0] is None else np.stack(
        [np.sort(base + rng.uniform(-0.1, 0.1, base.shape), -1) for _ in range(4)], in_dims[0])
    vals = rng.uniform(-2, 2, (3, 2))
    vals = vals if in_dims[1] is None else np.stack(
        [vals + rng.uniform(-0.5, 0.5, vals.shape) for _ in range(4)], in_dims[1])
    res = [M.func.vmap(lambda s, v: M.searchsorted(s, v, right=right), in_dims=in_dims)(
        M.tensor(seq), M.tensor(vals)).numpy() for M in (ag, torch)]
    np.testing.assert_array_equal(*res)


@pytest.mark.filterwarnings("ignore:There is a performance drop")    # torch's loop fallback
@pytest.mark.parametrize("case", ["counts", "weights", "shared_values", "minlength", "empty"])
def test_bincount_under_vmap_as_torch(torch, case):
    x = np.array([[0, 1, 1, 3], [2, 2, 0, 3]])
    w = np.array([[0.5, 1, 2, 3], [1, 1, 1, 1.0]])
    run = {"counts": lambda M: M.func.vmap(M.bincount)(M.tensor(x)),
           "weights": lambda M: M.func.vmap(M.bincount)(M.tensor(x), M.tensor(w)),
           "shared_values": lambda M: M.func.vmap(M.bincount, in_dims=(None, 0))(
               M.tensor(x[0]), M.tensor(w)),
           "minlength": lambda M: M.func.vmap(lambda a: M.bincount(a, minlength=7))(
               M.tensor(x.T.copy()) * 2),
           "empty": lambda M: M.func.vmap(M.bincount)(M.tensor(np.zeros((2, 0), np.int64)))}[case]
    np.testing.assert_array_equal(run(ag).numpy(), run(torch).numpy())


def test_bincount_under_vmap_refuses_unequal_lengths_and_negatives():
    with pytest.raises(RuntimeError, match="minlength of at least 6"):
        ag.func.vmap(ag.bincount)(ag.tensor([[0, 1], [0, 5]]))
    with pytest.raises(RuntimeError, match="non-negative"):
        ag.func.vmap(ag.bincount)(ag.tensor([[0, 1], [0, -5]]))
