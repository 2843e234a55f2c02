"""autograd.Function beyond PyTorch: pytrees, strict mode, ctx lints, jvp derived from backward,
and transform compositions checked against plain math."""
import warnings

import numpy as np
import pytest

import arraygrad as ag
from arraygrad.autograd import Function, set_strict, is_strict
from arraygrad.autograd import forward_ad as fwAD
from arraygrad.func import grad, jvp, vmap, jacrev, jacfwd


def _x(*shape, seed=0, requires_grad=True):
    a = np.random.default_rng(seed).uniform(0.5, 1.5, shape)
    return ag.tensor(a, dtype=ag.float64, requires_grad=requires_grad)


def _np(t):
    return np.asarray(t.detach().numpy())


# ----------------------------------------------------------------- pytrees
class WeightedSum(Function):
    """out = sum_i w[i] * xs[i]; also returns {"sq": xs[0] ** 2}."""

    @staticmethod
    def forward(ctx, xs, weights):
        ctx.save_for_backward(*xs)
        ctx.weights = weights
        total = sum(w * x for w, x in zip(weights, xs))
        return [total, {"sq": xs[0] ** 2}]

    @staticmethod
    def backward(ctx, grads):
        g_total, g_dict = grads
        xs = ctx.saved_tensors
        gx = [w * g_total for w in ctx.weights]
        gx[0] = gx[0] + 2 * xs[0] * g_dict["sq"]
        return gx, None


def test_pytree_inputs_and_outputs_are_tracked():
    a, b = _x(3), _x(3, seed=1)
    total, d = WeightedSum.apply([a, b], (2.0, 3.0))
    assert total.requires_grad and d["sq"].requires_grad
    (total.sum() + d["sq"].sum()).backward()
    np.testing.assert_allclose(_np(a.grad), 2 + 2 * _np(a))
    np.testing.assert_allclose(_np(b.grad), np.full(3, 3.0))
    assert total.grad_fn.needs_input_grad == (True, False)
    assert len(total.grad_fn.next_functions) == 2


def test_pytree_grad_structure_is_checked():
    class Bad(Function):
        @staticmethod
        def forward(ctx, xs):
            return xs[0] + xs[1]

        @staticmethod
        def backward(ctx, g):
            return g          # should be a list [g, g]
    a, b = _x(2), _x(2, seed=1)
    with pytest.raises(RuntimeError, match="BadBackward returned a gradient of structure"):
        Bad.apply([a, b]).sum().backward()


class WeightedSum2(WeightedSum):
    """WeightedSum in the setup_context style, which transforms need."""

    @staticmethod
    def forward(xs, weights):
        total = sum(w * x for w, x in zip(weights, xs))
        return [total, {"sq": xs[0] ** 2}]

    @staticmethod
    def setup_context(ctx, inputs, output):
        xs, weights = inputs
        ctx.save_for_backward(*xs)
        ctx.weights = weights


def test_pytree_function_under_grad():
    def f(a, b):
        total, d = WeightedSum2.apply([a, b], (2.0, 3.0))
        return total.sum() + d["sq"].sum()
    a, b = _x(3, requires_grad=False), _x(3, seed=1, requires_grad=False)
    ga, gb = grad(f, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(_np(ga), 2 + 2 * _np(a))
    np.testing.assert_allclose(_np(gb), np.full(3, 3.0))


# ----------------------------------------------------------------- strict mode
class Broadcasting(Function):
    @staticmethod
    def forward(ctx, x, y):
        return x + y

    @staticmethod
    def backward(ctx, g):
        return g, g


class Upcasting(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return (g * 2).double()


def test_strict_mode_rejects_what_torch_fixes_silently():
    x, y = _x(3, 4), _x(3, 1, seed=1)
    Broadcasting.apply(x, y).sum().backward()          # torch's behaviour: summed to (3, 1)
    np.testing.assert_allclose(_np(y.grad), np.full((3, 1), 4.0))
    with set_strict(True):
        assert is_strict()
        with pytest.raises(RuntimeError, match=r"BroadcastingBackward returned a gradient of "
                                               r"shape \[3, 4\] for input 1 of shape \[3, 1\]"):
            Broadcasting.apply(x, y).sum().backward()
        with pytest.raises(RuntimeError, match="UpcastingBackward returned a gradient of dtype"):
            Upcasting.apply(ag.ones(2, requires_grad=True)).sum().backward()
    assert not is_strict()


# ----------------------------------------------------------------- ctx lints
class KeepsInput(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.x = x                       # the seed's "Don't"
        return x * x

    @staticmethod
    def backward(ctx, g):
        return 2 * ctx.x * g


class KeepsIntermediate(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.two_x = 2 * x               # no grad history: no warning here
        return x * x

    @staticmethod
    def backward(ctx, g):
        return ctx.two_x * g


def test_tensor_attribute_that_requires_grad_warns():
    with pytest.warns(UserWarning, match=r"KeepsInput: ctx\.x holds an input or output; save it "
                                         r"with ctx\.save_for_backward"):
        KeepsInput.apply(_x(3))
    with set_strict(True), pytest.raises(RuntimeError, match="ctx.x holds"):
        KeepsInput.apply(_x(3))


def test_tensor_attribute_lint_under_grad_transform():
    class KeepsInput2(Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.x = inputs[0]

        @staticmethod
        def backward(ctx, g):
            return 2 * ctx.x * g
    with pytest.warns(UserWarning, match=r"KeepsInput2: ctx\.x holds an input or output"):
        g = grad(lambda x: KeepsInput2.apply(x).sum())(_x(3, requires_grad=False))
    np.testing.assert_allclose(_np(g), 2 * _np(_x(3)))


def test_attribute_tensor_changed_before_backward_warns():
    x = _x(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = KeepsIntermediate.apply(x)
    y.grad_fn.two_x.mul_(10)            # torch would silently give a 10x gradient
    with pytest.warns(UserWarning, match=r"ctx\.two_x was modified in place after forward"):
        y.sum().backward()


def test_saved_tensor_changed_inside_backward_warns():
    class Mutates(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            r = 2 * x * g
            x.mul_(0)
            return r
    x = _x(3) * 1
    y = Mutates.apply(x)
    with pytest.warns(UserWarning, match="backward modified saved tensor 0 in place"):
        y.sum().backward(retain_graph=True)


def test_correct_function_gives_no_warning():
    class Clean(Function):
        @staticmethod
        def forward(ctx, x, n):
            ctx.save_for_backward(x)
            ctx.n = n
            ctx.shape = x.shape
            return x ** n

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return ctx.n * x ** (ctx.n - 1) * g, None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Clean.apply(_x(3), 3).sum().backward()


# ----------------------------------------------------------------- jvp from backward
class CubeNoJvp(Function):
    @staticmethod
    def forward(x, k):
        return x ** 3 * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.save_for_backward(x)
        ctx.k = k

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 3 * ctx.k * x ** 2 * g, None


def test_jvp_derived_from_backward():
    x, t = _x(4, requires_grad=False), _x(4, seed=3, requires_grad=False)
    out, tan = jvp(lambda x: CubeNoJvp.apply(x, 2.0), (x,), (t,))
    np.testing.assert_allclose(_np(out), 2 * _np(x) ** 3)
    np.testing.assert_allclose(_np(tan), 6 * _np(x) ** 2 * _np(t))
    h = jacfwd(jacrev(lambda x: CubeNoJvp.apply(x, 2.0).sum()))(x)
    np.testing.assert_allclose(_np(h), np.diag(12 * _np(x)))
    with fwAD.dual_level():
        y = CubeNoJvp.apply(fwAD.make_dual(x, t), 1.0)
        np.testing.assert_allclose(_np(fwAD.unpack_dual(y).tangent), 3 * _np(x) ** 2 * _np(t))


def test_jvp_from_backward_opt_out_and_once_differentiable():
    class OptOut(CubeNoJvp):
        jvp_from_backward = False

    class Once(CubeNoJvp):
        @staticmethod
        @ag.autograd.function.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * ctx.k * x ** 2 * g, None
    x = _x(3, requires_grad=False)
    for cls in (OptOut, Once):
        with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
            jvp(lambda x: cls.apply(x, 1.0), (x,), (x,))


def test_jvp_from_a_backward_that_is_not_transformable_names_the_fix():
    class NumpyBackward(CubeNoJvp):
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return ag.tensor(3 * x.numpy() ** 2 * g.numpy()), None
    x = _x(3, requires_grad=False)
    with pytest.raises(RuntimeError, match="NumpyBackward has no jvp staticmethod.*"
                                           "jvp_from_backward = False"):
        jvp(lambda x: NumpyBackward.apply(x, 1.0), (x,), (x,))


# ----------------------------------------------------------------- transforms
class MyExp(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * y

    @staticmethod
    def jvp(ctx, t):
        y, = ctx.saved_tensors
        return t * y


def test_compositions_of_transforms():
    x = _x(3, 2, requires_grad=False)
    e = np.exp(_np(x))
    np.testing.assert_allclose(_np(vmap(MyExp.apply)(x)), e)
    np.testing.assert_allclose(_np(vmap(grad(lambda r: MyExp.apply(r).sum()))(x)), e)
    np.testing.assert_allclose(_np(grad(lambda r: vmap(MyExp.apply)(r).sum())(x)), e)
    _, tan = jvp(vmap(MyExp.apply), (x,), (ag.ones_like(x),))
    np.testing.assert_allclose(_np(tan), e)
    np.testing.assert_allclose(_np(vmap(jacfwd(MyExp.apply))(x)),
                               np.stack([np.diag(r) for r in e]))
    gg = grad(lambda r: grad(lambda s: MyExp.apply(s).sum())(r).sum())(x)
    np.testing.assert_allclose(_np(gg), e)


def test_grad_level_mark_dirty_keeps_identity():
    class AddOne(Function):
        @staticmethod
        def forward(x):
            x.add_(1)
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_dirty(inputs[0])

        @staticmethod
        def backward(ctx, g):
            return g

    def f(x):
        y = x * 2
        z = AddOne.apply(y)
        assert z is y
        return (z * z).sum()
    x = _x(3, requires_grad=False)
    np.testing.assert_allclose(_np(grad(f)(x)), 4 * (2 * _np(x) + 1))


def test_outputs_and_nodes_are_freed_without_the_cycle_collector():
    import gc
    import weakref

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y, x)
            return y

        @staticmethod
        def backward(ctx, g):
            y, x = ctx.saved_tensors
            return g * y
    x = _x(3)
    was = gc.isenabled()
    gc.disable()
    try:
        for backward in (False, True):
            y = Exp.apply(x)
            refs = weakref.ref(y), weakref.ref(y.grad_fn)
            if backward:
                y.sum().backward()
            del y
            assert all(r() is None for r in refs)
    finally:
        if was:
            gc.enable()


class _Nest(Function):
    """`depth` Functions nested inside each other's forward; the gradient is 2 * 3**depth."""

    @staticmethod
    def forward(x, depth):
        return x * 2 if depth == 0 else _Nest.apply(x, depth - 1) * 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.depth = inputs[1]

    @staticmethod
    def backward(ctx, g):
        return g * (2 * 3.0 ** ctx.depth), None


def test_functions_nest_300_deep_forward_backward_and_under_grad():
    # torch reaches ~330 with the default recursion limit; a level costs three frames here
    # (apply, the level's rule, forward) and backward runs no recursion per node
    import sys
    assert sys.getrecursionlimit() <= 1000
    x = _x(2)
    y = _Nest.apply(x, 300)
    assert np.allclose(_np(y), _np(x) * 2 * 3.0 ** 300)
    y.sum().backward()
    assert np.allclose(_np(x.grad), 2 * 3.0 ** 300)
    g = grad(lambda t: _Nest.apply(t, 300).sum())(_x(2, requires_grad=False))
    assert np.allclose(_np(g), 2 * 3.0 ** 300)


def test_generated_vmap_rule_makes_its_function_class_once():
    from function_db import ExpSavesOutput

    def classes():
        return [c for c in Function.__subclasses__()
                if c.__name__ == "ExpSavesOutputGenerated"]
    x = _x(4, 3)
    for n in range(3):
        g = vmap(grad(lambda t: ExpSavesOutput.apply(t).sum()))(x)
        assert np.allclose(_np(g), np.exp(_np(x)))
        assert len(classes()) == 1
    y = _x(2, 3, 2)
    yy = vmap(vmap(ExpSavesOutput.apply))(y)       # the generated class's own generated rule
    assert np.allclose(_np(yy), np.exp(_np(y)))
    assert len(classes()) == 1
