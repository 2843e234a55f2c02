"""Graph-node and engine API against torch: saved values, hooks on saved tensors, anomaly mode,
next_functions, multi-root backward, concurrent accumulation, std/var at zero spread."""
import threading

import numpy as np
import pytest

import arraygrad as ag
from conftest import assert_close


def _both(torch, fn):
    """fn(lib) run with arraygrad and with torch."""
    return fn(ag), fn(torch)


# ----------------------------------------------------------------- std / var at identical values
STD_X = [[1.0, 2.0], [1.0, 3.0]]     # column 0 has identical values: std 0


@pytest.mark.parametrize("name", ["std", "var"])
def test_std_var_grad_at_zero_spread_matches_torch(torch, name):
    def run(lib):
        x = lib.tensor(STD_X, dtype=lib.float64, requires_grad=True)
        y = getattr(x, name)(0)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x)
        jf = lib.func.jacfwd(lambda z: getattr(z, name)(0))(x.detach())
        t = lib.func.jvp(lambda z: getattr(z, name)(0), (x.detach(),), (lib.ones(2, 2, dtype=lib.float64),))[1]
        return y.grad_fn.name(), g, gg, jf, t
    a, t = _both(torch, run)
    assert a[0] == t[0] == ("StdBackward0" if name == "std" else "VarBackward0")
    for u, v in zip(a[1:], t[1:]):
        assert not np.isnan(u.detach().numpy()).any()
        assert_close(u, v)


def test_std_second_derivative_through_the_cotangent_is_finite():
    # torch gives nan here (0/0 inside its masked_fill); the first derivative is identically 0
    # in the zero-spread column whatever the cotangent, so its derivative is 0
    x = ag.tensor(STD_X, dtype=ag.float64, requires_grad=True)
    g_out = ag.tensor([0.7, -1.3], dtype=ag.float64, requires_grad=True)
    g, = ag.autograd.grad(x.std(0), x, g_out, create_graph=True)
    w = ag.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ag.float64)
    dgo, = ag.autograd.grad((g * w).sum(), g_out)
    eps = 1e-6
    fd = []
    for i in range(2):
        e = np.zeros(2)
        e[i] = eps
        hi, = ag.autograd.grad(x.std(0), x, ag.tensor(g_out.detach().numpy() + e), retain_graph=True)
        lo, = ag.autograd.grad(x.std(0), x, ag.tensor(g_out.detach().numpy() - e))
        fd.append(((hi - lo) * w).sum().item() / (2 * eps))
    np.testing.assert_allclose(dgo.numpy(), fd, atol=1e-6)
    assert dgo[0].item() == 0.0


# ----------------------------------------------------------------- next_functions as torch's
def _edge_names(fn):
    return [None if n is None else n.name().split("::")[-1] for n, _ in fn.next_functions]


@pytest.mark.parametrize("make", [
    lambda lib, x, m: x ** 2, lambda lib, x, m: 2 ** x, lambda lib, x, m: x ** x,
    lambda lib, x, m: lib.fmod(x, 2), lambda lib, x, m: x % 2, lambda lib, x, m: x * 2,
    lambda lib, x, m: x + lib.tensor([1, 2]), lambda lib, x, m: lib.where(m, x, x * 2),
    lambda lib, x, m: lib.where(m, 0.0, x), lambda lib, x, m: lib.where(m, x, 1.0),
], ids=["pow_scalar", "rpow", "pow_tensor", "fmod_scalar", "remainder_scalar", "mul_scalar",
        "add_int_tensor", "where", "where_scalar_self", "where_scalar_other"])
def test_next_functions_match_torch(torch, make):
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = make(lib, x, lib.tensor([True, False]))
        g, = lib.autograd.grad(y.sum(), x)
        return y.grad_fn, g
    (a, ag_g), (t, t_g) = _both(torch, run)
    assert a.name() == t.name()
    assert _edge_names(a) == _edge_names(t)
    assert_close(ag_g, t_g)


def test_primitive_without_vjp_names_itself():
    from arraygrad.core.dispatch import Primitive
    twice = Primitive("twice", lambda xp, x: x * 2)
    scaled = Primitive("scaled", lambda xp, x, y: x * y, vjp=(lambda ctx, g: g * ctx.y, None))
    x = ag.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for 'twice' is not implemented.*no vjp"):
        twice(x).sum().backward()
    with pytest.raises(RuntimeError, match="'scaled' has no vjp rule for input 1"):
        scaled(x, x).sum().backward()
    scaled(x, ag.ones(2)).sum().backward()     # the missing rule is not needed here
    assert x.grad.tolist() == [1.0, 1.0]


# ----------------------------------------------------------------- multi-root backward API
@pytest.mark.parametrize("call", [
    lambda lib, x: lib.autograd.grad(None, [x], allow_unused=True),
    lambda lib, x: lib.autograd.backward(None),
    lambda lib, x: lib.autograd.grad((x * 2).sum(), None),
])
def test_none_outputs_or_inputs_raise_type_error(torch, call):
    for lib in (ag, torch):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(TypeError):
            call(lib, x)


def test_zero_element_output_needs_a_gradient(torch):
    for lib in (ag, torch):
        with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
            (lib.zeros(0, requires_grad=True) * 2).backward()


def test_grad_of_an_output_wrt_itself_returns_the_given_gradient(torch):
    for lib in (ag, torch):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        go = lib.ones(2, requires_grad=True) * 3
        r, = lib.autograd.grad(y, y, go)
        assert r is go and r.requires_grad
        r, = lib.autograd.grad(x, x, go)
        assert r is go


def test_hook_order_across_independent_branches_matches_torch(torch):
    def run(lib):
        x = lib.ones(2, requires_grad=True)
        order = []
        a, b, c = x * 2, x * 3, x * 4
        for name, t in zip("abc", (a, b, c)):
            t.register_hook(lambda g, name=name: order.append(name))
        (a + b + c).sum().backward()
        return order
    a, t = _both(torch, run)
    assert a == t == ["c", "b", "a"]


def test_the_same_root_twice_accumulates(torch):
    def run(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        lib.autograd.backward([y, y], [lib.ones(2), 3 * lib.ones(2)])
        return x.grad
    a, t = _both(torch, run)
    assert_close(a, t)
    assert a.tolist() == [8.0, 8.0]


def test_backward_inputs_restricts_accumulation(torch):
    def run(lib):
        x = lib.ones(2, requires_grad=True)
        w = lib.ones(2, requires_grad=True)
        lib.autograd.backward([x, (w * 2).sum()], [lib.ones(2), None], inputs=[w])
        return x.grad, w.grad
    (ax, aw), (tx, tw) = _both(torch, run)
    assert ax is None and tx is None
    assert_close(aw, tw)


@pytest.mark.parametrize("call,torch_raises", [
    (lambda lib, x: lib.autograd.backward([x * 2, x * 3], [lib.ones(2)]), True),
    # torch ignores the extra gradient here; arraygrad refuses it rather than guess
    (lambda lib, x: lib.autograd.backward([x * 2], [lib.ones(2)] * 2), False),
    (lambda lib, x: lib.autograd.grad([x * 2, x * 3], [x], [lib.ones(2)]), True),
])
def test_mismatched_gradient_counts_raise(torch, call, torch_raises):
    for lib in (ag, torch) if torch_raises else (ag,):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match=r"got \d tensors and \d gradients"):
            call(lib, x)
        assert x.grad is None


def test_view_of_a_non_leaf_written_in_place_before_the_view(torch):
    def run(lib):
        x = lib.ones(2, requires_grad=True)
        fired = []
        b = x * 1
        b.add_(1)
        v = b[:1]
        v.retain_grad()
        v.register_hook(fired.append)
        (v * 2).sum().backward()
        return v.grad, fired, x.grad
    (av, af, ax), (tv, tf, tx) = _both(torch, run)
    assert_close(av, tv)
    assert len(af) == len(tf) == 1
    assert_close(af[0], tf[0])
    assert_close(ax, tx)


# ----------------------------------------------------------------- concurrent backward
@pytest.mark.parametrize("retained", [False, True], ids=["leaf", "retain_grad"])
def test_concurrent_backward_into_one_leaf_is_exact(retained):
    x = ag.zeros(10 ** 6, requires_grad=True)
    target = x * 1 if retained else x
    if retained:
        target.retain_grad()
    errors = []

    def work():
        try:
            for _ in range(40):
                (target * 1).sum().backward(retain_graph=True)
        except Exception as e:     # surfaced below: a thread's exception would be lost
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    g = target.grad.numpy()
    assert g.min() == g.max() == 160.0


# ----------------------------------------------------------------- Function.boxed_grads_call
def _boxed_function(lib, setup_context):
    seen = []

    def backward(ctx, grads):
        seen.append(type(grads))
        ga, gb = grads
        grads.clear()           # what boxing is for: free the grads early
        x, y = ctx.saved_tensors
        return ga * y + gb, ga * x + gb

    if setup_context:
        class F(lib.autograd.Function):
            boxed_grads_call = True
            generate_vmap_rule = True

            @staticmethod
            def forward(x, y):
                return x * y, x + y

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(*inputs)
    else:
        class F(lib.autograd.Function):
            boxed_grads_call = True

            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(x, y)
                return x * y, x + y
    F.backward = staticmethod(backward)
    return F, seen


def test_boxed_grads_call_passes_one_list(torch):
    def run(lib):
        F, seen = _boxed_function(lib, setup_context=False)
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
        a, b = F.apply(x, y)
        gx, gy = lib.autograd.grad((a * 2 + b).sum(), (x, y), create_graph=True)
        ggx, = lib.autograd.grad((gx * gy).sum(), x)
        return gx, gy, ggx, seen
    a, t = _both(torch, run)
    assert ag.autograd.Function.boxed_grads_call is torch.autograd.Function.boxed_grads_call is False
    for u, v in zip(a[:3], t[:3]):
        assert_close(u, v)
    assert a[3] == [list]


def test_boxed_grads_call_under_transforms():
    F, seen = _boxed_function(ag, setup_context=True)
    x = ag.tensor([1.0, 2.0], dtype=ag.float64)
    y = ag.tensor([3.0, 4.0], dtype=ag.float64)

    def f(x, y):
        a, b = F.apply(x, y)
        return (a * 2 + b).sum()
    gx, gy = ag.func.grad(f, argnums=(0, 1))(x, y)
    assert gx.tolist() == [7.0, 9.0] and gy.tolist() == [3.0, 5.0]
    # jvp derived from the (boxed) backward
    _, (ta, tb) = ag.func.jvp(F.apply, (x, y), (ag.ones(2, dtype=ag.float64),) * 2)
    assert ta.tolist() == [4.0, 6.0] and tb.tolist() == [2.0, 2.0]
    # the generated vmap rule's backward
    xs, ys = ag.stack([x, x * 2]), ag.stack([y, y])
    gxs = ag.func.vmap(ag.func.grad(f), in_dims=(0, 0))(xs, ys)
    assert gxs.tolist() == [[7.0, 9.0], [7.0, 9.0]]
    assert set(seen) == {list}


# ----------------------------------------------------------------- saved values on nodes
SAVED_CASES = [
    (lambda lib, x, y, m: x * y, ["_saved_self", "_saved_other"]),
    (lambda lib, x, y, m: x / y, ["_saved_self", "_saved_other"]),
    (lambda lib, x, y, m: x ** 2, ["_saved_self", "_saved_exponent"]),
    (lambda lib, x, y, m: x ** y, ["_saved_self", "_saved_exponent", "_saved_result"]),
    (lambda lib, x, y, m: x.sin(), ["_saved_self"]),
    (lambda lib, x, y, m: x.exp(), ["_saved_result"]),
    (lambda lib, x, y, m: x.tanh(), ["_saved_result"]),
    (lambda lib, x, y, m: m.std(0), ["_saved_self", "_saved_result", "_saved_dim",
                                     "_saved_correction", "_saved_keepdim"]),
    (lambda lib, x, y, m: m.sum(0), ["_saved_dim", "_saved_keepdim", "_saved_self_sym_sizes"]),
    (lambda lib, x, y, m: lib.where(x > 1, x, y), ["_saved_condition"]),
    (lambda lib, x, y, m: m.softmax(0), ["_saved_result", "_saved_dim"]),
    (lambda lib, x, y, m: m @ m.t(), ["_saved_self", "_saved_mat2", "_saved_self_sym_sizes"]),
    (lambda lib, x, y, m: m.logsumexp(0), ["_saved_self", "_saved_result", "_saved_dim",
                                           "_saved_keepdim"]),
    (lambda lib, x, y, m: lib.maximum(x, y), ["_saved_self", "_saved_other"]),
    (lambda lib, x, y, m: m.permute(1, 0), ["_saved_dims"]),
    (lambda lib, x, y, m: x.unsqueeze(0), ["_saved_dim"]),
]


@pytest.mark.parametrize("case", range(len(SAVED_CASES)))
def test_saved_values_named_as_torch(torch, case):
    make, names = SAVED_CASES[case]

    def run(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
        m = lib.tensor([[1.0, 2.0], [1.0, 3.0]], dtype=lib.float64, requires_grad=True)
        fn = make(lib, x, y, m).grad_fn
        return fn, [getattr(fn, n) for n in names]
    (afn, a), (tfn, t) = _both(torch, run)
    for n, u, v in zip(names, a, t):
        if isinstance(v, torch.Tensor):
            assert_close(u, v, what=n)
        else:
            assert u == v, n
    for n in names:
        raw = n.replace("_saved_", "_raw_saved_")
        if isinstance(getattr(tfn, n), torch.Tensor):
            assert type(getattr(afn, raw)).__name__ == "SavedTensor"
    with pytest.raises(AttributeError):
        afn._saved_no_such_thing


def test_saved_values_after_backward_are_freed(torch):
    for lib in (ag, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.sin()
        assert y.grad_fn._saved_self is x
        y.sum().backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.grad_fn._saved_self


# ----------------------------------------------------------------- saved-tensor hooks
def _hook_program(lib, log):
    def pack(t):
        log.append("pack")
        return t * 2        # a visible change: the gradient shows which value backward used

    def unpack(t):
        log.append("unpack")
        return t

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x.sin() + x.tanh() + Cube.apply(x)
        with lib.no_grad():
            x.cos()             # records nothing, packs nothing
    packs = list(log)
    g1, = lib.autograd.grad(y.sum(), x, retain_graph=True)
    g2, = lib.autograd.grad(y.sum(), x)
    return packs, list(log), g1, g2


def test_saved_tensors_hooks_pack_on_save_unpack_on_use(torch):
    (ap, al, a1, a2), (tp, tl, t1, t2) = (_hook_program(ag, []), _hook_program(torch, []))
    assert ap == tp == ["pack"] * 3
    assert al.count("unpack") == tl.count("unpack") == 6      # once per backward each
    assert_close(a1, t1)
    assert_close(a2, t2)


def test_saved_tensors_hooks_nest_and_skip_the_version_check(torch):
    def run(lib):
        seen = []
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: ("outer", t), lambda p: p[1]):
            with lib.autograd.graph.saved_tensors_hooks(
                    lambda t: ("inner", t), lambda p: (seen.append(p[0]), p[1])[1]):
                a = x * 1
                b = a.sin()
        a.add_(1)       # torch does not check versions of hooked saved tensors
        g, = lib.autograd.grad(b.sum(), x)
        return seen, g
    (aseen, ag_), (tseen, tg) = _both(torch, run)
    assert aseen == tseen == ["inner"]
    assert_close(ag_, tg)


def test_save_on_cpu_and_disable(torch):
    def run(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.save_on_cpu():
            y = x.sin() * x
        g, = lib.autograd.grad(y.sum(), x)
        with lib.autograd.graph.disable_saved_tensors_hooks("not with hooks"):
            with pytest.raises(RuntimeError, match="not with hooks"):
                with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            with pytest.raises(RuntimeError, match="not with hooks"):
                with lib.autograd.graph.disable_saved_tensors_hooks("not with hooks"):
                    pass
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
            y = x.sin()
        with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor"):
            lib.autograd.grad(y.sum(), x)
        return g
    a, t = _both(torch, run)
    assert_close(a, t)


def test_raw_saved_tensor_register_hooks(torch):
    def run(lib):
        log = []
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = x.sin()
        y.grad_fn._raw_saved_self.register_hooks(
            lambda t: (log.append(t.requires_grad), t * 2)[1], lambda t: t)
        g, = lib.autograd.grad(y.sum(), x)
        return log, g
    (al, a), (tl, t) = _both(torch, run)
    assert al == tl == [False]
    assert_close(a, t)


# ----------------------------------------------------------------- anomaly mode
def _nan_function(lib):
    class NanGrad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")
    return NanGrad


def test_detect_anomaly_names_the_node_and_shows_the_forward_line(torch):
    for lib in (ag, torch):
        NanGrad = _nan_function(lib)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.warns(UserWarning) as record:
            with lib.autograd.detect_anomaly():
                y = NanGrad.apply(x).exp()   # THE_FORWARD_LINE
                with pytest.raises(RuntimeError, match=r"Function 'NanGradBackward' returned nan "
                                                       r"values in its 0th output\."):
                    y.sum().backward()
        msgs = [str(w.message) for w in record]
        assert msgs[0].startswith("Anomaly Detection has been enabled")
        err = [m for m in msgs if m.startswith("Error detected in NanGradBackward")]
        assert len(err) == 1 and "THE_FORWARD_LINE" in err[0]
        assert "traceback_" in y.grad_fn.metadata
        assert not lib.is_anomaly_enabled()


def test_anomaly_without_check_nan_lets_nan_through_but_reports_errors(torch):
    for lib in (ag, torch):
        NanGrad = _nan_function(lib)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
            NanGrad.apply(x).sum().backward()
            assert np.isnan(x.grad.numpy()).all()

            class Boom(lib.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x * 1

                @staticmethod
                def backward(ctx, g):
                    raise ValueError("boom")
            y = Boom.apply(x)      # BOOM_LINE
            with pytest.warns(UserWarning, match="Error detected in BoomBackward(.|\\n)*BOOM_LINE"):
                with pytest.raises(ValueError, match="boom"):
                    y.sum().backward()
        assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
        lib.autograd.set_detect_anomaly(True)
        assert lib.is_anomaly_enabled()
        lib.autograd.set_detect_anomaly(False)
        assert not lib.is_anomaly_enabled()
        assert "traceback_" not in (x * 2).grad_fn.metadata


# ----------------------------------------------------------------- gradgradcheck fwd-over-rev
def _sin_with_cos_jvp(sign):
    """sin whose backward uses a cos primitive with a correct vjp and a jvp of sign `sign`."""
    from arraygrad.core.dispatch import Primitive
    cos = Primitive("cos_probe", lambda xp, x: xp.cos(x),
                    vjp=(lambda ctx, g: -g * ctx.x.sin(),),
                    jvp=(lambda ctx, t: -sign * t * ctx.x.sin(),))
    return Primitive("sin_probe", lambda xp, x: xp.sin(x),
                     vjp=(lambda ctx, g: g * cos(ctx.x),), jvp=(lambda ctx, t: t * cos(ctx.x),))


def test_gradgradcheck_fwd_over_rev_matches_torch(torch):
    def f(lib):
        return lambda x, y: (x.sin() * y, (x * y).exp(), x.std(0))
    for lib in (ag, torch):
        x = lib.tensor([0.5, 1.2, -0.3], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([0.3, -1.2, 0.7], dtype=lib.float64, requires_grad=True)
        assert lib.autograd.gradgradcheck(f(lib), (x, y), check_fwd_over_rev=True)
        assert lib.autograd.gradgradcheck(f(lib), (x, y), check_fwd_over_rev=True,
                                          check_rev_over_rev=False, check_undefined_grad=False)
        with pytest.raises(AssertionError, match="requires check_rev_over_rev"):
            lib.autograd.gradgradcheck(f(lib), (x, y), check_fwd_over_rev=True,
                                       check_rev_over_rev=False, check_undefined_grad=True)
        with pytest.raises(AssertionError, match="Expected at least one"):
            lib.autograd.gradgradcheck(f(lib), (x, y), check_rev_over_rev=False,
                                       check_undefined_grad=False)


def test_gradgradcheck_fwd_over_rev_catches_a_wrong_jvp_in_a_backward():
    x = ag.tensor([0.5, 1.2], dtype=ag.float64, requires_grad=True)
    good, bad = _sin_with_cos_jvp(1), _sin_with_cos_jvp(-1)
    assert ag.autograd.gradgradcheck(good, (x,), check_fwd_over_rev=True)
    assert ag.autograd.gradgradcheck(bad, (x,))          # reverse-over-reverse cannot see it
    with pytest.raises(ag.autograd.GradcheckError, match="forward AD"):
        ag.autograd.gradgradcheck(bad, (x,), check_fwd_over_rev=True)
    assert not ag.autograd.gradgradcheck(bad, (x,), check_fwd_over_rev=True,
                                         raise_exception=False)


@pytest.mark.parametrize("register", [False, True], ids=["context", "register_hooks"])
def test_hooked_saved_tensors_keep_their_history_for_double_backward(torch, register):
    def run(lib):
        pack, unpack = (lambda t: t.detach().numpy().copy()), lib.from_numpy
        x = lib.tensor([0.5, 1.2], dtype=lib.float64, requires_grad=True)
        if register:
            y = x.sin()
            y.grad_fn._raw_saved_self.register_hooks(pack, unpack)
            z = x.exp()
            z.grad_fn._raw_saved_result.register_hooks(pack, unpack)
        else:
            with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
                y = (x * x).sin()     # a saved non-leaf input, a saved leaf
                z = x.exp()           # a saved output
        g, = lib.autograd.grad(y.sum() + z.sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        return g, gg
    a, t = _both(torch, run)
    assert_close(a[0], t[0])
    assert_close(a[1], t[1])


def test_detect_anomaly_warns_when_made_and_set_anomaly_enabled(torch):
    for lib in (ag, torch):
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
            mode = lib.autograd.detect_anomaly(check_nan=False)
        assert not lib.is_anomaly_enabled()
        with mode:
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
        assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
        lib.set_anomaly_enabled(True, check_nan=False)
        assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
        lib.set_anomaly_enabled(False)
        assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()


def test_gradgradcheck_fwd_over_rev_says_why_it_cannot_run():
    class OldStyle(ag.autograd.Function):      # forward(ctx, ...): refused by func transforms
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.cos()
    from arraygrad.autograd.gradcheck import _fwd_over_rev_supported
    x = ag.tensor([0.5, 1.2], dtype=ag.float64, requires_grad=True)
    assert ag.autograd.gradgradcheck(OldStyle.apply, (x,))
    if _fwd_over_rev_supported():
        assert ag.autograd.gradgradcheck(OldStyle.apply, (x,), check_fwd_over_rev=True)
    else:
        with pytest.raises(RuntimeError, match="check_fwd_over_rev=True.*setup_context"):
            ag.autograd.gradgradcheck(OldStyle.apply, (x,), check_fwd_over_rev=True)
