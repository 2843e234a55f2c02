"""utils.checkpoint(use_reentrant=False) through saved-tensor hooks, and the reentrant variant's
refusal of autograd.grad, against torch."""
import tracemalloc

import numpy as np
import pytest

import arraygrad as ag
from arraygrad import nn
from arraygrad.utils.checkpoint import checkpoint, checkpoint_sequential, CheckpointError


def _nested_run(L, mode):
    """Nested checkpoints with kwargs and non-tensor outputs; gradients of x and w (a closure
    parameter) by `mode`: "backward", "grad" or "inputs" (backward(inputs=[w]))."""
    rng = np.random.default_rng(0)
    x = L.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    w = L.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    ck = L.utils.checkpoint.checkpoint

    def inner(t, scale=1.0):
        return (t @ w).tanh() * scale

    def block(t, *, scale):
        h = ck(inner, t, use_reentrant=False, scale=scale)
        return h.sin().exp(), "tag", h.shape[0]

    y, tag, n = ck(block, x, use_reentrant=False, scale=2.0)
    assert (tag, n) == ("tag", 4)
    loss = (y * y).sum()
    if mode == "grad":
        return [g.numpy() for g in L.autograd.grad(loss, (x, w))]
    if mode == "inputs":
        loss.backward(inputs=[w])
        assert x.grad is None
        return [w.grad.numpy()]
    loss.backward()
    return [x.grad.numpy(), w.grad.numpy()]


@pytest.mark.parametrize("mode", ["backward", "grad", "inputs"])
def test_non_reentrant_nested_kwargs_as_torch(torch, mode):
    for got, want in zip(_nested_run(ag, mode), _nested_run(torch, mode)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_non_reentrant_recomputes_once_per_backward():
    calls = []

    def f(t):
        calls.append(1)
        return t.sin().exp().sum()

    x = ag.randn(5, dtype=ag.float64, requires_grad=True)
    y = checkpoint(f, x, use_reentrant=False)
    assert len(calls) == 1
    y.backward(retain_graph=True)
    assert len(calls) == 2
    first = x.grad.clone()
    y.backward()                        # a retained graph recomputes again
    assert len(calls) == 3
    np.testing.assert_allclose(x.grad.numpy(), 2 * first.numpy())
    np.testing.assert_allclose(first.numpy(), (x.cos() * x.sin().exp()).detach().numpy())
    with ag.no_grad():                  # nothing is saved: no hooks, no recomputation
        checkpoint(f, x, use_reentrant=False)
    assert len(calls) == 4


@pytest.mark.parametrize("preserve", [True, False])
def test_non_reentrant_replays_the_random_state(preserve):
    ag.manual_seed(0)
    x = ag.randn(200, requires_grad=True, dtype=ag.float64)
    drop = nn.Dropout(0.5)
    y = checkpoint(lambda t: drop(t) * t, x, use_reentrant=False, preserve_rng_state=preserve)
    y.sum().backward()
    mask = (y != 0).double()
    # d/dx of dropout(x) * x = 2 * x * mask / (1 - p): the forward's mask, if replayed
    same = np.allclose(x.grad.numpy(), (4 * x * mask).detach().numpy())
    assert same == preserve


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_keeps_less_memory(use_reentrant):
    x = ag.randn(200_000, dtype=ag.float64, requires_grad=True)

    def deep(t):
        for _ in range(20):
            t = t.sin()
        return t

    def peak(use_ckpt):
        tracemalloc.start()
        y = checkpoint(deep, x, use_reentrant=use_reentrant) if use_ckpt else deep(x)
        held = tracemalloc.get_traced_memory()[0]
        y.sum().backward()
        tracemalloc.stop()
        grad, x.grad = x.grad, None
        return held, grad
    (plain, g0), (ckpt, g1) = peak(False), peak(True)
    assert ckpt < plain / 5, (plain, ckpt)     # 20 saved arrays of 1.6 MB vs the output alone
    np.testing.assert_allclose(g1.numpy(), g0.numpy())


def test_non_reentrant_sequential_and_contexts():
    ag.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(6)]).double()
    x = ag.randn(3, 4, dtype=ag.float64, requires_grad=True)
    model(x).sum().backward()
    expected = [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]
    model.zero_grad()
    x.grad = None
    checkpoint_sequential(model, 3, x, use_reentrant=False).sum().backward()
    for a, b in zip([p.grad for p in model.parameters()] + [x.grad], expected):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    entered = []

    class Note:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            entered.append(self.name)

        def __exit__(self, *exc):
            return False
    y = checkpoint(lambda t: t.exp(), x, use_reentrant=False,
                   context_fn=lambda: (Note("forward"), Note("recompute")))
    y.sum().backward()
    assert entered == ["forward", "recompute"]


def test_recomputation_that_differs_raises():
    state = {"n": 0}

    def moody(t):
        state["n"] += 1
        return t.sin().exp() if state["n"] % 2 else t.exp()

    x = ag.randn(3, requires_grad=True)
    with pytest.raises(CheckpointError, match="different number of tensors"):
        checkpoint(moody, x, use_reentrant=False).sum().backward()
    state["n"] = 1
    with pytest.raises(CheckpointError, match="more tensors during recomputation"):
        checkpoint(moody, x, use_reentrant=False).sum().backward()    # exp, then sin + exp

    def reshaped(t):
        state["n"] += 1
        return t.exp() if state["n"] % 2 else t[:2].exp()
    state["n"] = 0
    with pytest.raises(CheckpointError, match="different metadata"):
        checkpoint(reshaped, x, use_reentrant=False).sum().backward()


@pytest.mark.parametrize("how", ["grad", "inputs"])
def test_reentrant_refuses_grad_and_inputs_as_torch(torch, how):
    for L in (ag, torch):
        x = L.ones(3, requires_grad=True)
        w = L.ones(3, requires_grad=True)
        y = L.utils.checkpoint.checkpoint(lambda t: (t * w).sin(), x, use_reentrant=True).sum()
        with pytest.raises(RuntimeError, match=r"incompatible with \.grad\(\)"):
            if how == "grad":
                L.autograd.grad(y, x)
            else:
                y.backward(inputs=[x])
        assert w.grad is None              # nothing accumulated into the closure parameter


def test_argument_errors_as_torch(torch):
    for L in (ag, torch):
        ck = L.utils.checkpoint.checkpoint
        x = L.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match="Unexpected keyword arguments"):
            ck(lambda t, k: t * k, x, use_reentrant=True, k=2)
        with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
            ck(lambda t: t, x, use_reentrant=True, debug=True)
        assert ck(lambda t, k: t * k, x, use_reentrant=False, k=2).sum().item() == 4.0


def test_non_reentrant_recomputes_under_the_forward_autocast_state():
    pytest.importorskip("ml_dtypes")
    w = ag.randn(4, 4, requires_grad=True)
    x = ag.randn(3, 4, requires_grad=True)
    with ag.autocast("cpu"):
        y = checkpoint(lambda t: (t @ w).relu() @ w, x, use_reentrant=False)
        plain = ((x @ w).relu() @ w)
    assert y.dtype is ag.bfloat16
    # backward runs outside autocast: the recomputation must save bfloat16 tensors again
    gx, gw = ag.autograd.grad(y.float().sum(), (x, w))
    px, pw = ag.autograd.grad(plain.float().sum(), (x, w))
    assert ag.equal(gx, px) and ag.equal(gw, pw)
