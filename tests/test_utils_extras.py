"""utils.checkpoint, utils.benchmark and the global random state, against torch."""

import numpy as np
import pytest

import arraygrad as ag
from arraygrad import nn
from arraygrad.utils.benchmark import Timer
from arraygrad.utils.checkpoint import checkpoint, checkpoint_sequential
from conftest import assert_close


def _block(L, w):
    def f(x):
        return (x @ w).tanh().sin() * 2
    return f


def test_checkpoint_gradients_match_plain_backward_and_torch(torch):
    rng = np.random.default_rng(0)
    X, W = rng.standard_normal((4, 3)), rng.standard_normal((3, 3))
    grads = []
    for L in (ag, torch):
        for use_ckpt in (False, True):
            x = L.tensor(X, requires_grad=True)
            w = L.tensor(W, requires_grad=True)       # reached through the closure only
            f = _block(L, w)
            y = L.utils.checkpoint.checkpoint(f, x, use_reentrant=True) if use_ckpt else f(x)
            (y * y).sum().backward()
            grads.append((x.grad, w.grad))
    # ours with and without checkpoint, then torch's with checkpoint
    assert_close(grads[1][0], grads[0][0])
    assert_close(grads[1][1], grads[0][1])
    assert_close(grads[1][0], grads[3][0])
    assert_close(grads[1][1], grads[3][1])


def test_checkpoint_replays_the_random_state():
    ag.manual_seed(0)
    x = ag.randn(200, requires_grad=True, dtype=ag.float64)
    drop = nn.Dropout(0.5)
    ag.manual_seed(1)
    y = checkpoint(lambda t: drop(t) * t, x, use_reentrant=True)
    y.sum().backward()
    mask = (y != 0).double()
    # d/dx of dropout(x) * x = 2 * x * mask / (1 - p): the same mask as the forward
    np.testing.assert_allclose(x.grad.numpy(), (4 * x * mask).detach().numpy())


def test_checkpoint_sequential_and_errors():
    ag.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(6)]).double()
    x = ag.randn(3, 4, dtype=ag.float64, requires_grad=True)
    model(x).sum().backward()
    expected = [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]
    model.zero_grad()
    x.grad = None
    checkpoint_sequential(model, 3, x, use_reentrant=True).sum().backward()
    for a, b in zip([p.grad for p in model.parameters()] + [x.grad], expected):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    with pytest.warns(UserWarning, match="use_reentrant"):
        checkpoint(lambda t: t * 2, x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments"):
        checkpoint(lambda t: t * 2, x, use_reentrant=True, bogus=1)


def test_rng_state_round_trip_and_errors():
    state = ag.get_rng_state()
    a = ag.rand(5)
    ag.set_rng_state(state)
    assert ag.equal(ag.rand(5), a)
    with pytest.raises(TypeError, match="ByteTensor"):
        ag.set_rng_state(ag.zeros(3))
    with pytest.raises(RuntimeError, match="get_rng_state"):
        ag.set_rng_state(ag.tensor([1, 2, 3], dtype=ag.uint8))


def test_benchmark_timer_measures():
    t = Timer("x * y", setup="y = x + 1", globals={"x": ag.ones(3)}, label="mul")
    m = t.blocked_autorange(min_run_time=0.02)
    assert len(m.times) >= 3 and m.number_per_run >= 1
    assert 0 < m.median < 0.01 and m.mean > 0 and m.iqr >= 0
    assert "mul" in repr(m) and "x * y" in repr(m)
    one = t.timeit(100)
    assert one.number_per_run == 100 and len(one.times) == 1
    m = t.adaptive_autorange(min_run_time=0.01, max_run_time=0.2)
    assert m.median > 0
    with pytest.raises(ValueError, match="strings"):
        Timer(lambda: 1)
