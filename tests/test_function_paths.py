"""The plain-call path of custom Functions (NOTE [plain calls] in autograd/function.py) against
the general path: every Function here runs both ways, eagerly and under the transforms, and must
give the same values, gradients and graph nodes."""
import re
import warnings

import numpy as np
import pytest

import arraygrad as ag
from arraygrad.autograd import Function
from arraygrad.autograd import function as function_mod
from arraygrad.func import custom_function, grad, jvp, vmap
from arraygrad.utils._pytree import LEAF, TreeSpec
from function_db import DB, ExpSavesOutput


def _x(*shape, seed=0, requires_grad=True):
    a = np.random.default_rng(seed).uniform(0.5, 1.5, shape)
    return ag.tensor(a, dtype=ag.float64, requires_grad=requires_grad)


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * y


class Scale(Function):
    """setup_context style, two tensor inputs, a user attribute on the ctx."""
    generate_vmap_rule = True

    @staticmethod
    def forward(x, s):
        return x * s

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)
        ctx.note = "scale"

    @staticmethod
    def backward(ctx, g):
        x, s = ctx.saved_tensors
        return g * s, (g * x).sum().reshape(s.shape)


class Identity(Function):
    """Returns its input as is: an alias with the Function's node."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2


class ViewOut(Function):
    """Returns a view of a new tensor (an in-place write on it must raise)."""

    @staticmethod
    def forward(ctx, x):
        return (x * 3)[1:]

    @staticmethod
    def backward(ctx, g):
        return ag.cat([ag.zeros(1, dtype=g.dtype), g]) * 3


class Argmax(Function):
    """An integer output: never requires grad."""

    @staticmethod
    def forward(ctx, x):
        return x.argmax()

    @staticmethod
    def backward(ctx, g):
        return None


class NonDiff(Function):
    @staticmethod
    def forward(ctx, x):
        y = x * 2
        ctx.mark_non_differentiable(y)
        return y

    @staticmethod
    def backward(ctx, g):
        return g * 2


class KeepsInput(Function):
    """Keeps its input as a ctx attribute: the attribute lint must still see it."""

    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def _node_state(y):
    node = y.grad_fn
    if node is None:
        return None
    return (type(node).__name__, y._output_nr, node.n_outputs, node._f_in_meta,
            node._f_out_meta, list(node._f_out_leaves), node._f_out_spec, node.needs_input_grad,
            [(type(f).__name__, k) for f, k in node.next_functions])


def _run_eager(f, inputs):
    out = f(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    state = [(o.requires_grad, _node_state(o)) for o in outs if isinstance(o, ag.Tensor)]
    diff = [o for o in outs if isinstance(o, ag.Tensor) and o.requires_grad]
    grads = ag.autograd.grad([o.sum() for o in diff], inputs, allow_unused=True) if diff else ()
    return [o.detach() for o in outs if isinstance(o, ag.Tensor)], state, grads


def _run_transforms(f, inputs):
    xs = [x.detach() for x in inputs]

    def first(*a):
        out = f(*a)
        return out[0] if isinstance(out, (tuple, list)) else out
    g = grad(lambda *a: first(*a).sum(), argnums=tuple(range(len(xs))))(*xs)
    _, t = jvp(first, tuple(xs), tuple(ag.ones_like(x) for x in xs))
    v = vmap(first)(*[ag.stack([x, x * 2]) for x in xs])
    return list(g) + [t, v]


CASES = {"exp": (Exp.apply, lambda: (_x(4),)),
         "scale": (Scale.apply, lambda: (_x(3), _x(1, seed=1))),
         "identity": (Identity.apply, lambda: (_x(3) * 1,)),
         "view_output": (ViewOut.apply, lambda: (_x(4),)),
         "argmax": (Argmax.apply, lambda: (_x(4),)),
         "non_differentiable": (NonDiff.apply, lambda: (_x(3),))}
CASES.update(DB)
TRANSFORMABLE = sorted(DB) + ["scale"]


def _both(run, f, sample, monkeypatch):
    """`run` on the plain path, then with plain params that no rule recognises."""
    plain = run(f, sample())
    with monkeypatch.context() as m:
        def fresh(n):
            return {"spec": TreeSpec(tuple, None, [LEAF] * n), "kwargs": {}}
        m.setattr(function_mod, "plain_params", fresh)
        m.setattr(custom_function, "plain_params", fresh)
        general = run(f, sample())
    return plain, general


def _same(a, b, what):
    if isinstance(a, ag.Tensor):
        assert isinstance(b, ag.Tensor), what
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy(), err_msg=what)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), what
        for k, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{what}[{k}]")
    else:
        assert a == b, f"{what}: {a!r} != {b!r}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_plain_and_general_paths_agree_eagerly(name, monkeypatch):
    f, sample = CASES[name]
    plain, general = _both(_run_eager, f, sample, monkeypatch)
    _same(plain, general, name)


@pytest.mark.parametrize("name", TRANSFORMABLE)
def test_plain_and_general_paths_agree_under_transforms(name, monkeypatch):
    f, sample = CASES[name]
    plain, general = _both(_run_transforms, f, sample, monkeypatch)
    _same(plain, general, name)


def test_plain_call_edge_cases():
    """What the plain path hands to the general one: an input returned as is, a view, an
    integer output, a marked output, a ctx attribute."""
    x = _x(3)
    y = Identity.apply(x * 1)
    assert y.grad_fn is not None and type(y.grad_fn).__name__ == "IdentityBackward"
    v = ViewOut.apply(x)
    with pytest.raises(RuntimeError):
        v.mul_(2)
    a = Argmax.apply(x)
    assert not a.requires_grad and a.grad_fn is None
    n = NonDiff.apply(x)
    assert not n.requires_grad
    with pytest.warns(UserWarning, match=r"KeepsInput: ctx\.x holds an input or output"):
        KeepsInput.apply(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Exp.apply(x)        # the machinery's own ctx attributes are not linted


def test_saved_tensor_hooks_that_pack_non_tensors(torch):
    """Backward of a Function whose saved input was packed into a non-tensor (the version
    check of saved tensors skips what the hooks own), as torch."""
    results = []
    for lib in (torch, ag):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * x
        x = lib.tensor(np.linspace(-1, 1, 3), requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: ("packed", t), lambda p: p[1]):
            y = F.apply(x)
        y.sum().backward()
        results.append(x.grad.detach().numpy())
    np.testing.assert_allclose(results[1], results[0])


def test_attribute_lint_runs_only_for_user_attributes(monkeypatch):
    """A ctx holding only what the machinery put there is not walked (the lint is paid for
    only when used); one with a user attribute is."""
    from arraygrad.autograd import function_checks
    walked = []
    real = function_checks._lint_user_attrs
    monkeypatch.setattr(function_checks, "_lint_user_attrs",
                        lambda ctx, *a: walked.append(type(ctx).__name__) or real(ctx, *a))
    x = _x(3)
    Exp.apply(x).sum().backward()
    grad(lambda t: ExpSavesOutput.apply(t).sum())(x.detach())
    assert walked == []
    Scale.apply(x, _x(1, seed=1))
    with pytest.warns(UserWarning, match="KeepsInput"):
        KeepsInput.apply(x)
    assert walked == ["ScaleBackward", "KeepsInputBackward"]


def test_plain_path_is_taken(monkeypatch):
    """The comparisons above compare two paths: a single new output skips the output loop,
    unless the plain params are not recognised."""
    loops = []
    real = function_mod.wrap_outputs
    monkeypatch.setattr(function_mod, "wrap_outputs", lambda *a: loops.append(1) or real(*a))
    Exp.apply(_x(3))
    assert loops == []
    Identity.apply(_x(3) * 1)
    assert loops == [1]
    monkeypatch.setattr(function_mod, "plain_params",
                        lambda n: {"spec": TreeSpec(tuple, None, [LEAF] * n), "kwargs": {}})
    Exp.apply(_x(3))
    assert loops == [1, 1]


# ----------------------------------------------------------------- backward's return
def _returning(lib, make_grads):
    """forward(ctx, x, y) = x * y; backward returns `make_grads(g, lib)`."""
    class Ret(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return make_grads(g, lib)
    return Ret


RETURNS = {   # what backward returns -> what the gradients are checked and converted to
    "as_is": lambda g, lib: (g, g * 2),
    "none": lambda g, lib: (None, g),
    "extra_nones": lambda g, lib: (g, g, None, None),
    "to_sum": lambda g, lib: (g.expand(2, 3), g.expand(4, 3)),     # summed to (3,)
    "to_cast": lambda g, lib: (g.to(lib.float32), g),               # cast to float64
}


@pytest.mark.parametrize("case", sorted(RETURNS))
def test_backward_results_that_pass_or_are_converted(case, torch):
    """Gradients of the inputs' shape and dtype are taken as they are; others go through the
    full check, which sums or casts them, as torch."""
    grads = []
    for lib in (torch, ag):
        x = lib.tensor(np.linspace(-1, 1, 3), requires_grad=True)
        y = lib.tensor(np.linspace(1, 2, 3), requires_grad=True)
        out = _returning(lib, RETURNS[case]).apply(x, y)
        grads.append(lib.autograd.grad(out, (x, y), lib.ones_like(out), allow_unused=True))
    for t, a in zip(*grads):
        if t is None:
            assert a is None
        else:
            assert a.dtype == ag.float64 and tuple(a.shape) == tuple(t.shape)
            np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy())


@pytest.mark.parametrize("make, match", [
    (lambda g, lib: (g, g, g), r"function RetBackward returned an incorrect number of gradients "
                               r"\(expected 2, got 3\)"),
    (lambda g, lib: g, r"function RetBackward returned an incorrect number of gradients "
                       r"\(expected 2, got 1\)"),
    (lambda g, lib: (g, 1.0), r"expected Variable or None \(got float\)"),
    (lambda g, lib: (g, g[:2]), r"returned an invalid gradient at index 1 - got \[2\] but "
                                r"expected shape compatible with \[3\]"),
])
def test_backward_results_that_raise(make, match, torch):
    """The full check still sees what the common case hands over: a wrong count, a
    non-tensor, a shape that is no broadcast of the input's (torch raises on each)."""
    for lib in (torch, ag):
        x = lib.tensor(np.linspace(-1, 1, 3), requires_grad=True)
        out = _returning(lib, make).apply(x, x * 1)
        with pytest.raises(RuntimeError) as err:
            lib.autograd.grad(out, x, lib.ones_like(out))
        if lib is ag:
            assert re.search(match, str(err.value)), str(err.value)


def test_gradient_of_an_input_that_needs_none_is_dropped_unchecked():
    """As torch: backward's entry for an input that does not require grad is not looked at."""
    x = ag.tensor(np.linspace(-1, 1, 3), requires_grad=True)
    c = ag.tensor(np.ones(3))
    out = _returning(ag, lambda g, lib: (g * 3, g[:1])).apply(x, c)
    g, = ag.autograd.grad(out, x, ag.ones_like(out))
    np.testing.assert_array_equal(g.numpy(), np.full(3, 3.0))


# ----------------------------------------------------------------- footprint
class HalfCtx(Function):
    """Saves its output (ctx style)."""

    @staticmethod
    def forward(ctx, x):
        y = x * 0.5
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * 0.5


class HalfSetup(Function):
    """Saves its output (setup_context style)."""

    @staticmethod
    def forward(x):
        return x * 0.5

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * 0.5


@pytest.mark.parametrize("Fn", [HalfCtx, HalfSetup], ids=["ctx", "setup_context"])
def test_gc_tracked_objects_per_function_node(Fn):
    """A recorded Function call keeps its node, the tuple of its next nodes and its saved
    output (tuple, SavedTensor, weak reference) tracked by the cyclic collector; no
    attribute dict (NOTE [ctx slots]), and shapes and dtypes shared between nodes.
    Counted as the youngest generation's growth with the collector off, which also holds
    the needs_input_grad tuple (of bools: a collection untracks it); then backward must
    leave no garbage for the collector."""
    import gc
    x = _x(4)
    z = Fn.apply(x * 1)     # the one-off objects first
    gc.disable()
    try:
        gc.collect()
        counts = []
        for _ in range(2):      # the difference of two windows leaves one-off objects out
            for _ in range(100):
                z = Fn.apply(z)
            counts.append(len(gc.get_objects(0)))
        per_node = (counts[1] - counts[0]) / 100
        assert per_node <= 6, per_node
        z.sum().backward()
        del z
        assert gc.collect() == 0
    finally:
        gc.enable()
