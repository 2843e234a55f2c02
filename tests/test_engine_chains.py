"""The engine's chain path (engine.py NOTE [chains]): random chains give torch's gradients and
the graph engine's bits, and every way out of the path (hooks, captures on the way, a rule
that declines, freed or modified saved values) behaves as the graph engine does."""
import numpy as np
import pytest

import arraygrad as ag
from arraygrad.autograd import engine
from conftest import assert_close, reference_torch

torch = reference_torch()

# (name, arraygrad/torch step): each keeps one edge leading on; constants broadcast
STEPS = [
    ("mul", lambda lib, y, c: y * c), ("add", lambda lib, y, c: y + c),
    ("rsub", lambda lib, y, c: 1.5 - y), ("div", lambda lib, y, c: y / (c * c + 1)),
    ("tanh", lambda lib, y, c: lib.tanh(y)), ("sin", lambda lib, y, c: lib.sin(y)),
    ("exp", lambda lib, y, c: lib.exp(y * 0.1)), ("scalar", lambda lib, y, c: y * 0.999 + 0.001),
    ("sum0", lambda lib, y, c: y.sum(0, keepdim=True) if y.ndim > 1 else y),
    ("matvec", lambda lib, y, c: (c @ y.reshape(-1, 1)).reshape(-1)[:y.numel()].reshape(y.shape)
     if y.ndim == 1 else y),
    ("relu", lambda lib, y, c: lib.relu(y)), ("sq", lambda lib, y, c: y ** 2),
]


def _program(seed):
    rng = np.random.default_rng(seed)
    shape = [(), (5,), (3, 4)][seed % 3]
    x = rng.standard_normal(shape)
    steps = [STEPS[i] for i in rng.integers(0, len(STEPS), rng.integers(1, 12))]
    consts = []
    for name, _ in steps:
        if name == "matvec":
            n = int(np.prod(shape)) if shape else 1
            consts.append(rng.standard_normal((n, n)))
        else:   # a constant of the tensor's shape, or one that broadcasts to it
            consts.append(rng.standard_normal(shape[1:] if shape and rng.random() < 0.3
                                              else shape))
    return x, steps, consts


def _run(lib, x0, steps, consts, how, fork=None):
    """The program's loss differentiated by `how`; `fork(lib, y)`: a first step of its own.
    "create_graph": the gradient and the gradient of its square's sum; "func_grad": by the
    transform."""
    def loss_of(x):
        y = x if fork is None else fork(lib, x * 1.0)
        for (_, f), c in zip(steps, consts):
            y = f(lib, y, lib.tensor(c))
        return y.sum()
    if how == "func_grad":
        return lib.func.grad(loss_of)(lib.tensor(x0))
    x = lib.tensor(x0, requires_grad=True)
    loss = loss_of(x)
    if how == "create_graph":
        g, = lib.autograd.grad(loss, x, create_graph=True)
        h = lib.autograd.grad((g * g).sum(), x, allow_unused=True)[0] if g.requires_grad \
            else None     # (a linear program)
        return lib.cat([g.reshape(-1), (lib.zeros_like(x) if h is None else h).reshape(-1)]
                       ).detach()
    if how == "grad":
        return lib.autograd.grad(loss, x)[0]
    loss.backward()
    return x.grad


def _graph_engine_only(m):
    """Have the graph engine run what the chain paths would (`m`: a monkeypatch context)."""
    m.setattr(engine, "_run_chain", lambda node, g, keep_graph, capture: engine._run_graph(
        [(node, 0)], [engine._tensor(g)], keep_graph, False, capture, None))
    m.setattr(engine, "_run_tensor_chain", lambda node, g, keep_graph, create_graph, capture:
              engine._run_graph([(node, 0)], [engine._tensor(g)], keep_graph, create_graph,
                                capture, None))


@pytest.mark.parametrize("how", ["backward", "grad", "create_graph", "func_grad"])
def test_random_chains_match_torch_and_the_graph_engine(how, monkeypatch):
    for seed in range(150):
        x0, steps, consts = _program(seed)
        got = _run(ag, x0, steps, consts, how)
        assert_close(got, _run(torch, x0, steps, consts, how), what=f"seed {seed}: ")
        with monkeypatch.context() as m:
            _graph_engine_only(m)
            general = _run(ag, x0, steps, consts, how)
        assert np.array_equal(got.numpy(), general.numpy()), f"seed {seed}: not bit for bit"


def test_chains_are_taken_and_left_where_they_should_be(monkeypatch):
    """Which graphs the chain path runs to their end: a chain to the one leaf wanted; not a
    graph with a shared node, a hook, a retained or captured intermediate, or another leaf
    wanted (the graph engine runs them, from the first node that is no chain's on)."""
    taken = []
    run_chain, run_graph = engine._run_chain, engine._run_graph
    monkeypatch.setattr(engine, "_run_chain", lambda *a: taken.append(1) or run_chain(*a))
    monkeypatch.setattr(engine, "_run_graph", lambda *a: taken.append(0) or run_graph(*a))
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    w = ag.tensor([0.5, 3.0], requires_grad=True)

    def takes(run):
        taken.clear()
        run()
        return taken == [1]
    assert takes(lambda: (x * 2).tanh().sum().backward())
    assert takes(lambda: ag.autograd.grad((x * 2).sin().sum(), x))
    assert not takes(lambda: ((x * 2) * (x * 3)).sum().backward())     # two paths to x
    assert not takes(lambda: (x * w).sum().backward())                  # two leaves
    assert not takes(lambda: ag.autograd.grad((x * 2).sum(), w, allow_unused=True))
    y = x * 2
    y.retain_grad()
    assert not takes(lambda: y.sin().sum().backward())
    assert y.grad.tolist() == pytest.approx(np.cos([2.0, 4.0]).tolist())
    y = x * 2
    assert not takes(lambda: ag.autograd.grad(y.exp().sum(), y))
    y = x * 2
    y.register_hook(lambda g: g * 10)
    assert not takes(lambda: y.sum().backward())
    with ag.autograd.set_detect_anomaly(True):
        assert not takes(lambda: (x * 2).sum().backward())
    assert not takes(lambda: ag.autograd.grad((x * 2).sum(), x, create_graph=True))


def test_chains_that_build_a_graph_take_the_tensor_chain_path(monkeypatch):
    """create_graph and a transform's backward run a chain by `_run_tensor_chain` (composite
    rules, tensor gradients) to its end; a graph with two paths to the input goes to the
    graph engine, from the first node that is no chain's on."""
    taken = []
    run_chain, run_graph = engine._run_tensor_chain, engine._run_graph
    monkeypatch.setattr(engine, "_run_tensor_chain", lambda *a: taken.append(1) or run_chain(*a))
    monkeypatch.setattr(engine, "_run_graph", lambda *a: taken.append(0) or run_graph(*a))
    x = ag.tensor([1.0, 2.0], requires_grad=True)

    def takes(run):
        taken.clear()
        run()
        return taken
    assert takes(lambda: ag.autograd.grad((x * 2).tanh().sum(), x, create_graph=True)) == [1]
    assert takes(lambda: ag.func.grad(lambda x: x.sin().exp().sum())(x.detach())) == [1]
    assert takes(lambda: ag.func.grad(lambda x: (x.sin() * x).sum())(x.detach())) == [0]
    assert takes(lambda: ag.autograd.grad((x.sin() * x).sum().tanh() * 2, x,
                                          create_graph=True)) == [0]
    assert takes(lambda: (x.sin() * x).sum().tanh().backward(create_graph=True)) == [1, 0]
    with ag.autograd.set_detect_anomaly(True), \
            pytest.warns(UserWarning, match="Error detected in SqrtBackward0"):
        with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
            ag.func.grad(lambda x: x.sqrt().sum())(ag.tensor([-1.0, 4.0]))


def test_a_leaf_hook_sees_the_captured_gradient():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()) or g * 2)
    g, = ag.autograd.grad((x * 3).sum(), x)
    assert seen == [[3.0, 3.0]] and g.tolist() == [6.0, 6.0]
    (x * 3).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


def test_freed_modified_and_retained_chains_behave_as_the_graph_engine():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * 2).tanh().sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
    x.grad = None
    loss = (x * 2).tanh().sum()
    loss.backward(retain_graph=True)
    loss.backward()
    want = 2 * 2 * (1 - np.tanh([2.0, 4.0]) ** 2)
    assert np.allclose(x.grad.numpy(), want, rtol=1e-4, atol=0)   # (float32)
    y = x * 2
    z = y.sin()
    y.mul_(3)       # sin's saved input changed: the rule declines, the graph engine raises
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_a_chain_keeps_the_callers_gradient_and_the_error_state():
    go = ag.tensor([1.0, 1.0])
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    (x * 2 + 1).backward(go)
    assert go.tolist() == [1.0, 1.0] and x.grad.tolist() == [2.0, 2.0]
    before = np.geterr()
    with np.errstate(all="raise"):      # the backward's cos(inf) is NumPy's invalid operation
        inf = ag.tensor([np.inf], requires_grad=True)
        g, = ag.autograd.grad(inf.sin().sum(), inf)
        assert np.geterr()["invalid"] == "raise"
    assert np.geterr() == before
    t = torch.tensor([np.inf], requires_grad=True)
    assert_close(g, torch.autograd.grad(t.sin().sum(), t)[0])     # nan, as torch


def test_a_custom_function_in_a_chain_runs_as_the_graph_engine_runs_it(monkeypatch):
    """A Function's node on a chain runs by `_run_node`: its backward sees grad mode off and
    torch's checkpoint validity (True under backward, False under grad), and the gradients
    are torch's."""
    seen = {ag: [], torch: []}
    chained = []
    chain_node = engine._chain_node
    monkeypatch.setattr(engine, "_chain_node",
                        lambda node, *lean: chained.append(type(node).__name__) or
                        chain_node(node, *lean))
    monkeypatch.setattr(engine, "_run_graph", None)     # the chain path runs every node

    def make(lib):
        valid = engine.is_checkpoint_valid if lib is ag else torch.autograd._is_checkpoint_valid

        class XExp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x.exp()

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                seen[lib].append((lib.is_grad_enabled(), valid()))
                return g * (1 + x) * x.exp()
        return XExp
    x0 = np.array([0.5, -1.0, 2.0])
    for how in ("backward", "grad"):
        got = {}
        for lib in (ag, torch):
            f = make(lib)
            x = lib.tensor(x0, requires_grad=True)
            loss = lib.sin(f.apply(x * 2.0) * 0.5).sum()
            got[lib] = lib.autograd.grad(loss, x)[0] if how == "grad" else \
                (loss.backward(), x.grad)[1]
        assert_close(got[ag], got[torch])
    assert seen[ag] == seen[torch] == [(False, True), (False, False)]
    assert chained.count("XExpBackward") == 3       # backward's loop; grad's check, then loop


FORKS = [
    ("two paths", lambda lib, y: (y * 2) * y.sin()),
    ("hooked", lambda lib, y: _hooked(y * 3)),
    ("two outputs", lambda lib, y: sum(lib.split(y.reshape(-1), 1)).sum() + y if y.numel() > 1
     else y * 4),
    ("view", lambda lib, y: y.reshape(-1)[:].reshape(y.shape) * 1.5),
]


def _hooked(y):
    y.register_hook(lambda g: g * 0.5)
    return y


@pytest.mark.parametrize("how", ["backward", "grad", "create_graph", "func_grad"])
def test_a_chain_into_a_graph_hands_the_rest_on_as_the_graph_engine_runs_it(how, monkeypatch):
    """Chain steps from the root down to a node that is no chain's (two edges on, a hook, two
    outputs): the chain path runs the steps and the graph engine the rest, with the graph
    engine's bits and torch's gradients."""
    for seed in range(60):
        x0, steps, consts = _program(seed)
        fork = FORKS[seed % len(FORKS)][1]
        got = _run(ag, x0, steps, consts, how, fork)
        assert_close(got, _run(torch, x0, steps, consts, how, fork), what=f"seed {seed}: ")
        with monkeypatch.context() as m:
            _graph_engine_only(m)
            general = _run(ag, x0, steps, consts, how, fork)
        assert np.array_equal(got.numpy(), general.numpy()), f"seed {seed}: not bit for bit"


def test_no_gradient_on_a_chain_releases_the_rest_of_the_graph():
    """A Function returning no gradient on a chain: the nodes below it get none and are freed
    (a second backward raises, as torch's), the leaf's grad stays None."""
    def make(lib):
        class Stop(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return None
        return Stop
    for lib in (ag, torch):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        y = x.sin() * x.exp()
        loss = make(lib).apply(y.tanh()).sum()
        loss.backward()
        assert x.grad is None
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.sum().backward()
