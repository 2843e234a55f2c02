"""The eager backward engine: graph shape, dependency counting, hooks, retain_graph, grad()."""
import os

import numpy as np
import pytest

import arraygrad as ag
from arraygrad.autograd import engine, graph
from arraygrad.autograd.graph import Node, AccumulateGrad
from conftest import assert_close, pair, reference_torch

torch = reference_torch()


def _names(fn, depth=6):
    """The node tree below `fn` as nested (name, children) tuples."""
    if fn is None:
        return None
    name = fn.name().split("::")[-1]     # torch says torch::autograd::AccumulateGrad
    if depth == 0:
        return name
    return (name, tuple(_names(n, depth - 1) for n, _ in fn.next_functions))


# ----------------------------------------------------------------- graph structure
def test_node_names_and_next_functions_match_torch():
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((2, 3))
    ys = rng.uniform(0.5, 1, (3,))
    a_x, t_x = pair(torch, xs)
    a_y, t_y = pair(torch, ys, requires_grad=False)

    def f(lib, x, y):
        z = (x * y + x.exp() / 2 - x.sigmoid()) * x.abs()
        return (z.sum().tanh() - z.mean().sqrt().neg()) * (x[0:1].relu() @ y.log1p().unsqueeze(1)).sum()

    assert _names(f(ag, a_x, a_y).grad_fn) == _names(f(torch, t_x, t_y).grad_fn)


def test_next_functions_leaf_and_constant_edges():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    c = ag.tensor([3.0, 4.0])
    y = x * c
    (acc, nr), (none, nr2) = y.grad_fn.next_functions
    assert isinstance(acc, AccumulateGrad) and acc.variable is x and nr == 0
    assert none is None and nr2 == 0
    assert acc.name() == "AccumulateGrad"
    assert (x * 2).grad_fn.next_functions[0][0] is acc, "a leaf has one AccumulateGrad node"
    assert repr(y.grad_fn).startswith("<MulBackward0 object at 0x")


def test_multi_output_node_output_nr():
    x = ag.tensor([[1.0, 5.0], [7.0, 2.0]], requires_grad=True)
    v, i = x.max(1)
    assert v.grad_fn.name() == "MaxBackward0" and i.grad_fn is None and not i.requires_grad
    a, b = x.unbind(0)
    (a * 2 + b * 3).sum().backward()
    assert x.grad.tolist() == [[2.0, 2.0], [3.0, 3.0]]


# ----------------------------------------------------------------- engine
def test_long_chain_of_real_ops_is_iterative():
    """Deeper than Python's recursion limit, forward, backward and teardown."""
    x = ag.tensor(1.5, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y.neg()
    y.backward()
    assert x.grad.item() == 1.0
    del y


def test_million_node_chain():
    """The engine itself on a chain of 10^6 nodes (lightweight nodes: no array work)."""
    class Pass(Node):
        calls = 0

        def apply(self, grads):
            Pass.calls += 1
            return grads

    x = ag.tensor(2.0, requires_grad=True)
    node = Node.__new__(Pass)
    Node.__init__(node, ((engine.gradient_edge(x)[0], 0),))
    for _ in range(10**6 - 1):
        nxt = Pass.__new__(Pass)
        Node.__init__(nxt, ((node, 0),))
        node = nxt
    engine.run([(node, 0)], [ag.tensor(3.0)], False, False)
    assert Pass.calls == 10**6
    assert x.grad.item() == 3.0


def _chain(x, n):
    y = x
    for _ in range(n):
        y = (y * 2.0).sin()
    return y


def test_no_reference_cycles_after_backward():
    """A graph and its tensors are freed by reference counting alone, during and after
    backward: nothing is left for the cyclic collector (deep graphs never wait for it)."""
    import gc
    x = ag.tensor(np.linspace(0, 1, 4), requires_grad=True)
    gc.collect()
    gc.disable()
    try:
        y = _chain(x, 50)
        y.backward(ag.ones_like(y))
        z = _chain(x, 50)       # a graph dropped without backward
        del y, z
        assert gc.collect() == 0
    finally:
        gc.enable()
    assert x.grad is not None


# GC-tracked objects a recorded op keeps alive (graph.py NOTE [node footprint]): the node,
# and its tuple of next nodes where it has two edges to nodes (here: the second product of
# "binary"); every one of them adds to what each collection of the oldest generation scans.
# Saved values are tuples of arrays and numbers, which a collection untracks (nested ones
# from the inside out, one level per collection: hence two).
TRACKED_PER_NODE = {"sin": 1, "tanh": 1, "binary": 1.5}


def _tracked():
    import gc
    gc.collect()
    gc.collect()
    return len(gc.get_objects())


@pytest.mark.parametrize("kind", ["sin", "tanh", "binary"])
def test_gc_tracked_objects_per_recorded_node(kind):
    """Saved inputs (intermediates and constants), saved outputs, numbers."""
    c = ag.tensor(np.full(4, 0.5))
    step = {"sin": lambda y: (y * 2.0).sin(), "tanh": lambda y: (y + c).tanh(),
            "binary": lambda y: (y * c) * y}[kind]
    x = ag.tensor(np.linspace(0, 1, 4), requires_grad=True)
    y = x
    for _ in range(250):
        y = step(y)
    before = _tracked()
    z = y
    for _ in range(250):      # 500 more nodes (the difference leaves one-off objects out)
        z = step(z)
    per_node = (_tracked() - before - 1) / 500     # less z itself
    assert per_node <= TRACKED_PER_NODE[kind], per_node
    assert z.grad_fn is not None


@pytest.mark.parametrize("dtype", [ag.float32, ag.float64])
def test_array_level_rules_match_the_composite_rules_bit_for_bit(dtype):
    """Without create_graph the engine uses the primitives' array-level vjps; with it, their
    composite rules (which build a graph): both give the same bits, broadcasting and
    inf/nan (without warnings) included."""
    rng = np.random.default_rng(0)
    x0 = np.append(rng.standard_normal(11), [np.inf]).reshape(3, 4)
    w = ag.tensor(rng.standard_normal(4), dtype=dtype)

    m = ag.tensor(rng.standard_normal((2, 4, 5)), dtype=dtype)

    def f(x):
        y = (ag.tanh(x * w) * 1.5).sin().cos().exp().sigmoid() * x * 2
        return y.sum() + (y @ m).sum(dim=(0, 2)).sum() + (x[0] @ m[0]).sum() + \
            (m[1].T @ x.T).sum(dim=1, keepdim=True).sum()
    grads = []
    for create_graph in (False, True):
        x = ag.tensor(x0, dtype=dtype, requires_grad=True)
        g, = ag.autograd.grad(f(x), x, create_graph=create_graph)
        grads.append(g.detach().numpy())
    assert grads[0].dtype == grads[1].dtype == dtype.np
    np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.parametrize("seed", range(30))
def test_spare_buffers_change_no_value(seed, monkeypatch):
    """Without retain_graph, array-level rules write into buffers no one else holds (graph.py
    NOTE [spare buffers]; here at every size): random graphs of those ops, with values reused,
    kept by the caller, broadcast and hooked, give the bits of the composite rules, and every
    tensor the caller holds keeps its value."""
    monkeypatch.setattr(graph, "SPARE_MIN", 0)
    rng = np.random.default_rng(seed)
    ops = [lambda a, b: a * b, lambda a, b: a + b, lambda a, b: a.tanh(), lambda a, b: a.sin(),
           lambda a, b: a.cos(), lambda a, b: a.exp() * 0.1, lambda a, b: a.sigmoid(),
           lambda a, b: a * b[:1], lambda a, b: a * 0.5, lambda a, b: ag.add(a, b, alpha=0.5),
           lambda a, b: a.sum() * b]
    plan = [(rng.integers(len(ops)), rng.integers(0, i + 2, 2), rng.random() < 0.2)
            for i in range(40)]
    hook_at = rng.integers(40)
    x0, c0 = rng.standard_normal(6), rng.standard_normal(6)

    def run(mode):
        x = ag.tensor(x0, requires_grad=True)
        c = ag.tensor(c0)           # a constant the caller keeps
        vals, kept = [x, c], []
        for i, (k, (p, q), keep) in enumerate(plan):
            v = ops[k](vals[p], vals[q])
            if i == hook_at and v.requires_grad:
                v.register_hook(lambda g: g * 1.0)
            vals.append(v)
            if keep:
                kept.append((v, v.detach().numpy().copy()))
        vals = vals[2:]             # the caller drops the rest
        loss = sum(v.sum() for v in (vals[-1], vals[len(vals) // 2]) if v.requires_grad)
        if not isinstance(loss, ag.Tensor):
            return None, []
        g, = ag.autograd.grad(loss, x, allow_unused=True, materialize_grads=True,
                              create_graph=mode == "graph", retain_graph=mode == "retain")
        assert np.array_equal(c.numpy(), c0)
        for v, value in kept:
            assert np.array_equal(v.detach().numpy(), value)
        return g.detach().numpy(), kept
    ref, _ = run("graph")
    for mode in ("retain", "free"):
        got, _ = run(mode)
        assert (got is None) == (ref is None)
        if ref is not None:
            np.testing.assert_array_equal(got, ref)


def test_spare_buffers_are_used_only_without_retain_graph(monkeypatch):
    from arraygrad.ops import _rules, elementwise
    taken, original = [], _rules.take

    def take(spare, *avoid):
        buf = original(spare, *avoid)
        taken.append(buf is not None)
        return buf
    monkeypatch.setattr(_rules, "take", take)
    monkeypatch.setattr(elementwise, "take", take)
    c = ag.tensor(np.full(1 << 14, 0.5))
    for retain in (True, False):
        taken.clear()
        x = ag.tensor(np.linspace(0, 1, 1 << 14), requires_grad=True)
        y = x
        for _ in range(10):
            y = (y * c).tanh().sin()
        y.backward(ag.ones_like(y), retain_graph=retain)
        assert any(taken) != retain


def test_engine_sums_raise_no_numpy_warning(torch):
    """A third gradient added into the engine's own sum in place: inf - inf is nan without
    NumPy's "invalid value" warning (which the suite turns into an error), as torch."""
    def f(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        c = (x * float("-inf")).sum()       # recorded first: its gradient arrives last
        (c + (x * 1e308).sum() + (x * 1e308).sum()).backward()
        return x.grad
    assert_close(f(ag), f(torch))


def test_leaf_takes_a_gradient_only_no_one_else_holds():
    """engine.py NOTE [lean engine]: a leaf's first .grad is the engine's own array only where
    nothing else holds it; gradients never alias each other, a gradient the caller passed or
    one a hook kept."""
    a = ag.tensor([1.0, 2.0], requires_grad=True)
    b = ag.tensor([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()        # add hands one array to both leaves
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
    go = ag.tensor([1.0, 1.0])
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    (x + 0.0).backward(go)          # add hands the caller's array on
    x.backward(go)                  # a leaf as the root
    assert go.tolist() == [1.0, 1.0] and x.grad.tolist() == [2.0, 2.0]
    kept = []
    z = ag.tensor([1.0, 2.0], requires_grad=True)
    z.register_hook(kept.append)
    (z * 2).sum().backward()
    (z * 2).sum().backward()
    assert kept[0].tolist() == [2.0, 2.0] and z.grad.tolist() == [4.0, 4.0]
    w = ag.tensor([1.0, 2.0], requires_grad=True)
    y = w * 3
    y.backward(ag.ones(2))
    first = w.grad
    y2 = w * 3
    y2.backward(ag.ones(2))
    assert w.grad is first and first.tolist() == [6.0, 6.0]      # later ones in place


def test_lean_backward_makes_tensors_only_where_seen(monkeypatch):
    """Without a graph being built, gradients stay arrays between nodes with array-level
    rules (NOTE [lean engine]): one tensor for the leaf's .grad or the captured gradient,
    one more per hook that sees an intermediate gradient."""
    from arraygrad import _tensor
    made, make = [], _tensor.make

    def counted(*args, **kwargs):
        made.append(1)
        return make(*args, **kwargs)
    x = ag.tensor(np.linspace(0, 1, 4), requires_grad=True)

    def count(hook, run):
        y = x
        for i in range(40):
            y = (y * 0.5 + 1.0).tanh()
            if hook and i == 20:
                y.register_hook(lambda g: g * 1.0)      # a composite mul makes one more
        made.clear()
        with monkeypatch.context() as m:
            m.setattr(_tensor, "make", counted)
            run(y.sum())
        return len(made)
    assert count(False, lambda loss: loss.backward()) == 1
    assert count(False, lambda loss: ag.autograd.grad(loss, x)) == 1
    assert count(True, lambda loss: loss.backward()) <= 3


def test_each_node_runs_once_after_all_its_inputs():
    """Dependency counting: a node shared by many paths runs once, with the summed grad."""
    calls = []
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.grad_fn.register_hook(lambda gi, go: calls.append(go[0].tolist()))
    z = y * y + y.exp() + (y + 1).sin() * y
    w = z.sum() + y.sum()
    w.backward()
    assert len(calls) == 1
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    ty = tx * 3
    ((ty * ty + ty.exp() + (ty + 1).sin() * ty).sum() + ty.sum()).backward()
    assert_close(x.grad, tx.grad, check_dtype=False, rtol=1e-6)


def test_diamond_and_reuse_grads_match_torch():
    def f(lib, x):
        a = x.exp()
        b = a * x
        c = a + b
        return (c * a - b.tanh()).sum() + (c @ x)

    rng = np.random.default_rng(1)
    a_x, t_x = pair(torch, rng.standard_normal(4))
    f(ag, a_x).backward()
    f(torch, t_x).backward()
    assert_close(a_x.grad, t_x.grad)


def test_leaves_accumulate_and_non_leaves_do_not_keep_grad():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 8.0]
    with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf "
                                         "Tensor is being accessed"):
        assert y.grad is None
    assert not y.retains_grad
    g = x.grad
    (x * 3).sum().backward()
    assert x.grad is g, "accumulation is in place into the existing .grad"
    assert x.grad.tolist() == [7.0, 11.0]


def test_grad_is_independent_of_the_cotangent():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    g = ag.tensor([1.0, 1.0])
    (x + 0).backward(g)
    x.grad.add_(10)
    assert g.tolist() == [1.0, 1.0]


def test_retain_grad():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, 8.0]
    x.retain_grad()   # no-op on a leaf
    assert not x.retains_grad


def test_retain_graph_and_the_second_backward_error():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    # an op whose backward saves nothing can run again, as in torch
    z = (x + 1).sum()
    z.backward()
    z.backward()
    assert x.grad.tolist() == [6.0, 10.0]


def test_saved_tensor_access_after_free_raises():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()


# ----------------------------------------------------------------- hooks
def test_tensor_hooks_on_leaf_and_non_leaf():
    seen = []
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    h = x.register_hook(lambda g: seen.append(("x", g.tolist())))
    y = x * 3
    y.register_hook(lambda g: g * 10)          # replaces the gradient flowing on
    y.register_hook(lambda g: seen.append(("y", g.tolist())))
    y.sum().backward()
    assert seen == [("y", [10.0, 10.0]), ("x", [30.0, 30.0])]
    assert x.grad.tolist() == [30.0, 30.0]
    h.remove()
    seen.clear()
    x.grad = None
    (x * 1).sum().backward()
    assert seen == [] and x.grad.tolist() == [1.0, 1.0]


def test_hook_result_matches_torch():
    def run(lib):
        x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = x.exp()
        y.register_hook(lambda g: g * y.detach())
        z = y * x
        z.retain_grad()
        z.register_hook(lambda g: g + 1)
        z.sum().backward()
        return x.grad, z.grad
    for a, t in zip(run(ag), run(torch)):
        assert_close(a, t)


def test_hook_on_tensor_that_does_not_require_grad():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                           "require gradient"):
        ag.tensor([1.0]).register_hook(lambda g: g)


def test_node_hooks_and_prehooks():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    seen = []
    y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
    h = y.grad_fn.register_hook(lambda gi, go: seen.append((gi[0].tolist(), go[0].tolist())))
    y.sum().backward(retain_graph=True)
    assert seen == [([2.0, 4.0], [2.0, 2.0])]     # gi[0] = go * x, one of two paths into x
    assert x.grad.tolist() == [4.0, 8.0]
    h.remove()
    y.sum().backward()
    assert len(seen) == 1


def test_node_post_hook_can_replace_grad_inputs():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0 + 7, gi[1]))
    y.sum().backward()
    assert x.grad.tolist() == [7.0, 7.0]


# ----------------------------------------------------------------- autograd.grad
def test_grad_basic_and_not_accumulated():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = (x ** 3).sum()
    g, = ag.autograd.grad(y, x)
    assert g.tolist() == [3.0, 12.0]
    assert x.grad is None
    assert not g.requires_grad


def test_grad_with_grad_outputs_matches_torch():
    rng = np.random.default_rng(2)
    xs, gs = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    a_x, t_x = pair(torch, xs)
    a_out = ag.autograd.grad(a_x.sin() * a_x, a_x, grad_outputs=ag.tensor(gs))
    t_out = torch.autograd.grad(t_x.sin() * t_x, t_x, grad_outputs=torch.tensor(gs))
    assert_close(a_out[0], t_out[0])
    a_out = ag.autograd.grad([a_x.sin(), a_x * 2], [a_x], [ag.tensor(gs), ag.tensor(gs)])
    t_out = torch.autograd.grad([t_x.sin(), t_x * 2], [t_x], [torch.tensor(gs), torch.tensor(gs)])
    assert_close(a_out[0], t_out[0])


def test_grad_allow_unused():
    x = ag.tensor([1.0], requires_grad=True)
    z = ag.tensor([2.0], requires_grad=True)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to not have "
                                           "been used in the graph. Set allow_unused=True"):
        ag.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = ag.autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
    assert gx.tolist() == [2.0] and gz is None
    gx, gz = ag.autograd.grad(y, [x, z], materialize_grads=True)
    assert gz.tolist() == [0.0]


def test_grad_create_graph_higher_order_matches_torch():
    def third(lib, x):
        y = (x.sin() * x ** 2).sum()
        g, = lib.autograd.grad(y, x, create_graph=True)
        assert g.requires_grad
        gg, = lib.autograd.grad(g.sum(), x, create_graph=True)
        ggg, = lib.autograd.grad(gg.sum(), x)
        return g, gg, ggg
    rng = np.random.default_rng(3)
    a_x, t_x = pair(torch, rng.standard_normal(5))
    for a, t in zip(third(ag, a_x), third(torch, t_x)):
        assert_close(a, t)


def test_backward_create_graph_gives_differentiable_grad():
    a_x, t_x = pair(torch, np.array([0.5, 1.5]))
    for lib, x in ((ag, a_x), (torch, t_x)):
        (x ** 3).sum().backward(create_graph=True)
        assert x.grad.requires_grad
        g = x.grad
        x.grad = None
        g.sum().backward()
    assert_close(a_x.grad, t_x.grad)


def test_grad_of_non_leaf_input():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = (y * y).sum()
    gy, gx = ag.autograd.grad(z, [y, x])
    assert gy.tolist() == [4.0, 8.0] and gx.tolist() == [8.0, 16.0]


def test_grad_input_does_not_require_grad():
    x = ag.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        ag.autograd.grad((x * 2).sum(), ag.tensor([1.0]))


# ----------------------------------------------------------------- backward(inputs=...)
def test_backward_inputs_restricts_accumulation():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    w = ag.tensor([3.0, 4.0], requires_grad=True)
    y = (x * w).sum()
    y.backward(inputs=[w], retain_graph=True)
    assert x.grad is None and w.grad.tolist() == [1.0, 2.0]
    y.backward(inputs=x)
    assert x.grad.tolist() == [3.0, 4.0] and w.grad.tolist() == [1.0, 2.0]


def test_backward_inputs_non_leaf_matches_torch():
    res = []
    for lib in (ag, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x.exp()
        (h * h).sum().backward(inputs=[h])
        res.append((h.grad, x.grad))
    assert_close(res[0][0], res[1][0], check_dtype=False, rtol=1e-6)
    assert res[0][1] is None and res[1][1] is None


def test_backward_empty_inputs_error():
    x = ag.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="'inputs' argument to backward\\(\\) cannot be empty."):
        (x * 2).sum().backward(inputs=[])


def test_autograd_backward_function_with_several_roots():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    ag.autograd.backward([(x * 2).sum(), x * x], [None, ag.tensor([1.0, 1.0])])
    assert x.grad.tolist() == [4.0, 6.0]


# ----------------------------------------------------------------- errors (issue 2)
def test_backward_non_scalar_needs_gradient():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar outputs$"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        ag.autograd.grad(x * 2, x)


def test_backward_on_tensor_without_grad():
    msg = "^element 0 of tensors does not require grad and does not have a grad_fn$"
    with pytest.raises(RuntimeError, match=msg):
        ag.tensor(1.0).backward()
    x = ag.tensor([1.0], requires_grad=True)
    with ag.no_grad():
        y = (x * 2).sum()
    with pytest.raises(RuntimeError, match=msg):
        y.backward()


def test_gradient_shape_mismatch():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of "
                                           r"arraygrad.Size\(\[3\]\) and output\[0\] has a shape of "
                                           r"arraygrad.Size\(\[2\]\)"):
        (x * 2).backward(ag.tensor([1.0, 1.0, 1.0]))


def test_backward_of_integer_output_error():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x.argmax()
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()


def test_saved_values_are_freed_after_backward():
    import gc
    import weakref
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    z = y.sin()          # SinBackward0 saves y's values
    ref = weakref.ref(y._data)
    del y
    gc.collect()
    assert ref() is not None, "the graph keeps the saved input's values alive"
    z.sum().backward()
    gc.collect()
    assert ref() is None, "backward without retain_graph frees it"


def test_retain_graph_keeps_saved_values():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    z = x.exp().sin().sum()
    z.backward(retain_graph=True)
    first = x.grad.clone()
    x.grad = None
    z.backward()
    assert x.grad.tolist() == first.tolist()


def test_hooks_and_captured_grads_in_autograd_grad_match_torch():
    res = []
    for lib in (ag, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        x.register_hook(lambda g: g * 10)
        y = x * 3
        y.register_hook(lambda g: g + 1)
        z = (y * y).sum()
        res.append(lib.autograd.grad(z, [x, y]))
    for a, t in zip(*res):
        assert_close(a, t)


def test_accumulating_into_a_grad_with_history():
    res = []
    for lib in (ag, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
        g1 = x.grad
        assert g1.requires_grad
        (x * 2).sum().backward()          # in place, as torch
        assert x.grad is g1
        (x * x).sum().backward(create_graph=True)    # out of place
        assert x.grad is not g1
        res.append((g1, x.grad, lib.autograd.grad(x.grad.sum(), x)[0]))
    for a, t in zip(*res):
        assert_close(a, t)


def test_post_accumulate_grad_hook():
    seen = []
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    h = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    ag.autograd.grad((x * 4).sum(), x)       # grad() accumulates nothing: no call
    assert seen == [[2.0, 2.0], [5.0, 5.0]]
    h.remove()
    (x * 2).sum().backward()
    assert len(seen) == 2
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on "
                                           "non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


def test_grad_of_later_output_descending_from_earlier_output(torch):
    # issue 7.1: b's path to the input runs through a's node; a is also a root
    for T in (ag, torch):
        xr = T.tensor([0.3, -1.2], requires_grad=True, dtype=T.float64)
        a = xr.tanh()
        b = 1 - a * a
        g, = T.autograd.grad((a, b), xr, grad_outputs=(T.zeros(2, dtype=T.float64),
                                                       T.ones(2, dtype=T.float64)))
        if T is ag:
            mine = g
        else:
            assert_close(mine, g)


def test_two_floating_outputs_of_one_node_keep_their_output_nr(torch):
    # aminmax: min is output 0, max is output 1 of one AminmaxBackward0 node
    for T in (ag, torch):
        x = T.tensor([[1.0, 3.0, 2.0], [0.5, -1.0, 4.0]], dtype=T.float64, requires_grad=True)
        lo, hi = T.aminmax(x, dim=1)
        assert lo.grad_fn is hi.grad_fn and lo.grad_fn.name() == "AminmaxBackward0"
        assert (lo.output_nr, hi.output_nr) == (0, 1)
        g_hi, = T.autograd.grad(hi.sum(), x, retain_graph=True)
        g_lo, = T.autograd.grad(lo.sum(), x)
        if T is ag:
            mine = g_lo, g_hi
        else:
            assert_close(mine[0], g_lo)
            assert_close(mine[1], g_hi)


@pytest.mark.parametrize("dtype", [ag.float32, ag.float64])
def test_many_gradients_into_one_input_are_summed_in_place_bit_for_bit(dtype):
    """A tensor used by many ops gets its gradients summed in the engine's own buffer after
    the first sum: the same additions in the same order as the out-of-place sums of a
    create_graph backward, so the same bits; the gradients handed out stay untouched."""
    rng = np.random.default_rng(3)
    x = ag.tensor(rng.standard_normal(1000), dtype=dtype, requires_grad=True)
    h = x.exp()
    y = sum((h * float(k)).sin() for k in range(1, 40))
    g_plain, = ag.autograd.grad(y, x, ag.ones_like(y), retain_graph=True)
    g_graph, = ag.autograd.grad(y, x, ag.ones_like(y), create_graph=True)
    assert g_plain.dtype == dtype and np.array_equal(g_plain.numpy(), g_graph.detach().numpy())

    # what the engine hands out or was given is never summed into
    t = x[:5] * 1.0
    t.retain_grad()
    (t * 2.0 + t * 3.0 + t * 4.0).sum().backward()
    assert t.grad.tolist() == [9.0] * 5
    gs = [ag.ones_like(y) * k for k in (1.0, 2.0, 3.0)]
    ag.autograd.grad([y, y, y], x, gs)
    assert [g[0].item() for g in gs] == [1.0, 2.0, 3.0]


def _hooked_captures(lib):
    x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g * 2)
    w = y * 1
    only = lib.autograd.grad(w.sum(), [y], retain_graph=True)      # y's node runs no further
    both = lib.autograd.grad(w.sum(), [y, x])                      # it runs on to x
    return only + both


def test_captured_input_grad_sees_its_hooks_as_torch(torch):
    """torch 2: an autograd.grad input's gradient is taken after its tensor hooks when its
    node runs no further, before them when the run goes on through it (engine fuzz case 98)."""
    for a, t in zip(_hooked_captures(ag), _hooked_captures(torch)):
        assert_close(a, t)


def _retained_then_written(lib):
    x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    seen = []
    z = x * 2
    z.retain_grad()
    z[0].mul_(5)                    # through a view: the base's history changes too
    z.register_hook(lambda g: seen.append(g))
    ((y * y).sum() + (z * z).sum()).backward()
    u = x * 2
    u.retain_grad()
    u.add_(1)
    return y.grad, z.grad, seen[0], lib.autograd.grad(u.sum(), [u])[0], u.grad


def test_retained_grad_follows_in_place_writes_as_torch(torch):
    """`retain_grad()` then an in-place write: `.grad` is the gradient of the new value (was
    the old one's: 3x too large after `mul_(3)`, engine fuzz case 1342)."""
    for a, t in zip(_retained_then_written(ag), _retained_then_written(torch)):
        assert_close(a, t)


def _inputs_node_hooks(lib):
    seen = []
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    v = x.exp()
    v.grad_fn.register_prehook(lambda go: seen.append(("pre", go[0].sum().item())))
    v.grad_fn.register_hook(lambda gi, go: seen.append(("post", go[0].sum().item())))
    (v * 3).sum().backward(inputs=[v])
    try:
        (v * 3).sum().backward(inputs=[v])
    except RuntimeError as e:
        seen.append(str(e)[:40])
    return seen, v.grad, x.grad


def test_backward_inputs_runs_a_nonleaf_inputs_node_hooks_as_torch(torch):
    """backward(inputs=[v]) for non-leaf v: torch runs v's node and drops what it computed,
    so its hooks run (engine fuzz case 171) and a freed graph is refused (case 1223)."""
    (sa, va, xa), (st, vt, xt) = _inputs_node_hooks(ag), _inputs_node_hooks(torch)
    assert sa == st and xa is None and xt is None
    assert_close(va, vt)


def test_engine_fuzz_cases(torch):
    import engine_fuzz as ef
    n = int(os.environ.get("ARRAYGRAD_ENGINE_FUZZ_CASES", "300"))
    bad = [r for r in (ef.check(ef.generate(i), ag, torch) for i in range(n)) if r]
    assert not bad, f"{len(bad)} of {n} engine fuzz cases differ from torch:\n" + bad[0]


def test_grad_computes_only_the_inputs_asked_for(torch):
    """torch's nodes compute only the input gradients that lead to a requested input: asking
    for igamma's gradient in x alone works although it has none in a (and no work is done
    for a); asking for a raises torch's NotImplementedError."""
    def run(M):
        a = M.tensor([1.5, 2.0], dtype=M.float64, requires_grad=True)
        x = M.tensor([0.5, 3.0], dtype=M.float64, requires_grad=True)
        y = M.igamma(a, x).sum()
        g = M.autograd.grad(y, x, retain_graph=True)[0]
        y.backward(inputs=[x], retain_graph=True)
        with pytest.raises(NotImplementedError):
            M.autograd.grad(y, a)
        return g, x.grad
    for ours, theirs in zip(run(ag), run(torch)):
        assert_close(ours, theirs)


def test_hooks_and_leaves_see_numpys_own_error_state():
    """The lean engine silences NumPy once for a run of array-level rules; a hook, a custom
    Function's backward or a post-accumulate hook between them runs with the caller's error
    state (here: warnings are errors, so a division by zero raises in them)."""
    class Cube(ag.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            np.float64(1.0) / np.float64(0.0)       # must warn
            return g

    seen = []

    def probe(g):
        with np.errstate(divide="warn"):
            with pytest.warns(RuntimeWarning):
                np.float64(1.0) / np.float64(0.0)
        seen.append(np.geterr()["divide"])
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).tanh() * 3
    y.register_hook(probe)
    x.register_post_accumulate_grad_hook(lambda t: seen.append(np.geterr()["divide"]))
    y.sum().backward()
    assert seen == [np.geterr()["divide"]] * 2
    z = Cube.apply(x.sin() * 2).tanh()
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            z.sum().backward()


@pytest.mark.parametrize("op", ["stack", "cat"])
@pytest.mark.parametrize("at", [0, 5, 19])
def test_nodes_of_many_inputs_with_one_edge_keep_torchs_next_functions(torch, op, at):
    """A node whose only edge to a node is its first keeps that node itself (NOTE [node
    footprint]): its next_functions still list every input, and backward and grad run
    through it, for any number of inputs."""
    got = []
    for lib in (ag, torch):
        x = lib.ones(3, dtype=lib.float64, requires_grad=True)
        ins = [lib.ones(3, dtype=lib.float64) * i for i in range(20)]
        ins[at] = x * 2
        y = getattr(lib, op)(ins)
        edges = [f is None for f, _ in y.grad_fn.next_functions]
        g, = lib.autograd.grad((y * y).sum(), x, retain_graph=True)
        (y * y).sum().backward()
        got.append((edges, g.tolist(), x.grad.tolist()))
    assert got[0] == got[1]
