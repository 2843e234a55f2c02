"""Array-level backward rules (`Primitive.array_vjp`) against the composite rules.

Without create_graph the engine runs a primitive's array-level vjp; with it, the composite
rule made of arraygrad ops. Both must give the same bits, for every primitive that has one,
over dtypes, broadcasting, non-contiguous inputs, inf/nan and the spare buffers the engine
lends (graph.py NOTE [spare buffers]).
"""
import numpy as np
import pytest

import arraygrad as ag
from arraygrad.autograd import graph

F = ag.nn.functional

# (name, function of (a, b, c): a and b require grad, c is a constant; the primitives whose
# array-level rule the case must reach)
CASES = [
    ("sub", lambda a, b, c: a - b, {"sub"}),
    ("sub_alpha", lambda a, b, c: ag.sub(a, b[0], alpha=2), {"sub"}),
    ("sub_const", lambda a, b, c: a - c, {"sub"}),
    ("rsub_number", lambda a, b, c: 0.5 - a, {"sub"}),
    ("neg", lambda a, b, c: -a * b, {"neg"}),
    ("abs", lambda a, b, c: a.abs() * b, {"abs"}),
    ("div", lambda a, b, c: a / b, {"div"}),
    ("div_broadcast", lambda a, b, c: a / b[:1], {"div"}),
    ("div_const", lambda a, b, c: c / a + a / c, {"div"}),
    ("div_number", lambda a, b, c: 1.5 / a + a / 3.0, {"div"}),
    ("div_self", lambda a, b, c: a / a, {"div"}),
    ("mul_const", lambda a, b, c: a * c * 2.0, {"mul"}),
    ("pow_square", lambda a, b, c: a ** 2, {"pow"}),
    ("pow_float", lambda a, b, c: a.abs() ** 1.5 + a ** -1, {"pow"}),
    ("pow_zero", lambda a, b, c: a ** 0, {"pow"}),
    ("pow_one_two", lambda a, b, c: a ** 1 + b ** 1.0 + a ** 2.0 + b ** 3, {"pow"}),
    ("pow_tensor", lambda a, b, c: a.abs() ** b, set()),     # declines: composite
    ("log", lambda a, b, c: ag.log(a), {"log"}),
    ("sqrt", lambda a, b, c: a.sqrt() + b.abs().sqrt(), {"sqrt"}),
    ("rsqrt", lambda a, b, c: a.rsqrt() + b.abs().rsqrt(), {"rsqrt"}),
    ("log1p", lambda a, b, c: a.log1p() + b.abs().log1p(), {"log1p"}),
    ("expm1", lambda a, b, c: a.expm1(), {"expm1"}),
    ("erf", lambda a, b, c: ag.erf(a) + ag.erf(b * 0.5), {"erf"}),
    ("tanh", lambda a, b, c: a.tanh() * 2.0 + b.tanh(), {"tanh"}),
    ("sigmoid", lambda a, b, c: a.sigmoid() * 2.0 + b.sigmoid(), {"sigmoid"}),
    ("sin_cos_exp", lambda a, b, c: a.sin() + b.cos() + a.exp(), {"sin", "cos", "exp"}),
    # 0-d values: NumPy gives scalars, not arrays, for their products
    ("zero_dim", lambda a, b, c: a[0, 1].tanh() + a[1, 0].sigmoid() + b[0, 2].sqrt()
     + b[2, 2].abs().log() + F.relu(a[2, 3]) + b[1, 1].rsqrt() + a[0, 0].erf() + b[2, 0] ** 2,
     {"tanh", "sigmoid", "sqrt", "log", "relu", "rsqrt", "erf", "pow"}),
    ("clamp", lambda a, b, c: a.clamp(-0.5, 0.5) + b.clamp(min=0) + b.clamp(max=c[0, 0].item()),
     {"clamp"}),
    ("relu", lambda a, b, c: F.relu(a) + ag.relu(b.T.T), {"relu"}),
    ("where", lambda a, b, c: ag.where(c.real > 0, a, b), {"where"}),
    ("where_broadcast", lambda a, b, c: ag.where(c[:1].real > 0, a, b[0]), {"where"}),
    ("where_number", lambda a, b, c: ag.where(a.real > 0, a, 0.0), {"where"}),
    ("mean", lambda a, b, c: a.mean() * b + b.mean(1, keepdim=True) + b.mean(0), {"mean"}),
    ("log_softmax", lambda a, b, c: F.log_softmax(a, 1) + b.log_softmax(0), {"log_softmax"}),
    ("softmax", lambda a, b, c: F.softmax(a, 1) + b.softmax(0), {"softmax"}),
    ("reshape", lambda a, b, c: a.reshape(4, 3).view(2, 6).flatten() * c.reshape(-1),
     {"reshape"}),
    ("unsqueeze", lambda a, b, c: a.unsqueeze(1).squeeze(1) + b.unsqueeze(0).squeeze(),
     {"unsqueeze", "squeeze"}),
    ("transpose", lambda a, b, c: (a.T @ b).sum() * a.transpose(0, 1).permute(1, 0) + b.T.T,
     {"transpose", "permute"}),
    ("expand", lambda a, b, c: a[:1].expand(5, 3, 4) * b[0].expand(3, 4), {"expand"}),
    ("getitem", lambda a, b, c: a[1] * b[:, 1:3].sum() + a[None, ..., ::2].sum() + b[0, 0],
     {"getitem"}),
    ("getitem_all", lambda a, b, c: a[None].sum(0) * b[:, None].sum(1) + a[...]
     + b[None, :, None].sum((0, 2)), {"getitem"}),
    ("mv", lambda a, b, c: a @ b[0] + c @ b[1] + a.T[:3] @ c[:, 0], {"mv"}),
]


def _inputs(rng, dtype, layout):
    vals = rng.standard_normal((3, 3, 4))
    vals[0, 0, :2] = (0.0, -0.0)
    if dtype.is_floating_point:
        vals[1, 2, 3] = np.nan
        vals[2, 1, 0] = np.inf
    if layout == "transposed":      # non-contiguous arrays, same values
        arrays = [np.ascontiguousarray(v.T).T for v in vals]
    else:
        arrays = list(vals)
    if dtype.is_complex:
        arrays = [v + 0.5j * v[::-1] for v in arrays]
    return [ag.tensor(v, dtype=dtype) for v in arrays]


def _grads(fn, tensors, create_graph, temporaries):
    a, b, c = (t.detach() for t in tensors)
    a.requires_grad_(True)
    b.requires_grad_(True)
    # temporaries: the inputs are intermediates the graph alone holds (spare buffers)
    out = fn(a * 1.0, b * 1.0, c * 1.0) if temporaries else fn(a, b, c)
    gout = ag.tensor(np.random.default_rng(1).standard_normal(out.shape), dtype=out.dtype)
    return [None if g is None else g.detach().numpy().copy() for g in ag.autograd.grad(
        out, (a, b), gout, allow_unused=True, create_graph=create_graph)]


def _func_grads(fn, tensors):
    """The case's gradients by func.grad: a grad level over plain tensors (NOTE [untracked
    rules]); a is given as itself and as a temporary, the constant c as an intermediate."""
    a, b, c = (t.detach() for t in tensors)
    gout = None

    def loss(a, b):
        nonlocal gout
        out = fn(a * 1.0, b, c * 1.0)
        if gout is None:
            gout = ag.tensor(np.random.default_rng(1).standard_normal(out.shape),
                             dtype=out.dtype)
        return (out * gout).sum()
    return [g.numpy().copy() for g in ag.func.grad(loss, argnums=(0, 1))(a, b)]


def _composite_only(m):
    """Make every node take its composite rule (`m`: a monkeypatch context)."""
    m.setattr(graph, "_array_apply", lambda node, grads: None)


def _used(monkeypatch):
    """The primitives whose array-level rule gave the gradients (a set filled as they run)."""
    used, previous = set(), graph._array_apply

    def counting(node, grads):
        res = previous(node, grads)
        if res is not None:
            used.add(node.prim.name)
        return res
    monkeypatch.setattr(graph, "_array_apply", counting)
    return used


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex128"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "temporaries"])
@pytest.mark.parametrize("spare_min", [0, None])
def test_array_rules_give_the_composite_rules_bits(dtype, layout, spare_min, monkeypatch):
    """Every case, differentiated with the array-level rules (spare buffers at every size, or
    at the engine's threshold) and with the composite ones, gives equal bits; real float32
    and float64 go through the array-level rule of each primitive the case names."""
    if spare_min is not None:
        monkeypatch.setattr(graph, "SPARE_MIN", spare_min)
    dtype = getattr(ag, dtype)
    real = dtype in (ag.float32, ag.float64)
    rng = np.random.default_rng(0)
    tensors = _inputs(rng, dtype, layout)
    temporaries = layout == "temporaries"
    for name, fn, prims in CASES:
        if dtype.is_complex and name in ("relu", "log_softmax", "softmax", "mean", "erf",
                                         "clamp", "zero_dim"):
            continue        # (no complex kernel in torch, or values that differ in meaning)
        with monkeypatch.context() as m:
            _composite_only(m)
            ref = _grads(fn, tensors, True, temporaries)
        with monkeypatch.context() as m:
            used = _used(m)
            got = _grads(fn, tensors, False, temporaries)
        for r, g in zip(ref, got):
            assert (r is None) == (g is None), name
            if r is not None:
                assert r.dtype == g.dtype == dtype.np, name
                np.testing.assert_array_equal(g, r, err_msg=f"{name} {dtype} {layout}")
        if real:
            assert prims <= used, (name, used)
        elif dtype is ag.float16:
            assert not used, (name, used)       # other dtypes take the composite rules


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_untracked_rules_give_the_composite_rules_bits(dtype, layout, monkeypatch):
    """func.grad of every case over plain tensors runs the array-level rules of the
    primitives the case names (real float32 and float64; others take the composite rules),
    with the bits of the composite rules; under an outer transform (vmap) or an input that
    requires grad, the composite rules run, as lower levels must see them."""
    dtype = getattr(ag, dtype)
    real = dtype in (ag.float32, ag.float64)
    tensors = _inputs(np.random.default_rng(0), dtype, layout)
    for name, fn, prims in CASES:
        with monkeypatch.context() as m:
            _composite_only(m)
            ref = _func_grads(fn, tensors)
        with monkeypatch.context() as m:
            used = _used(m)
            got = _func_grads(fn, tensors)
        for r, g in zip(ref, got):
            assert r.dtype == g.dtype == dtype.np, name
            np.testing.assert_array_equal(g, r, err_msg=f"{name} {dtype} {layout}")
        if real:
            assert prims <= used, (name, used)
        else:
            assert not used, (name, used)
    a, b, c = (t.detach() for t in tensors)
    with monkeypatch.context() as m:
        used = _used(m)
        ag.func.vmap(ag.func.grad(lambda a, b: (a - b).sum()))(a, b)
        assert not used
        a.requires_grad_(True)
        g = ag.func.grad(lambda b: ((a - b) * a).sum())(b)
    # the sum's node reads nothing and gets a plain one: its rule records nothing either way
    assert used == ({"sum"} if real else set())
    assert g.requires_grad      # (eager autograd recorded the composite rules' ops)


OPS = [lambda a, b: a - b, lambda a, b: -a, lambda a, b: (a * 1.5) / (b.abs() + 1),
       lambda a, b: (a * 0.5) ** 2, lambda a, b: (a.abs() + 0.5).log(), lambda a, b: a.relu(),
       lambda a, b: ag.where(b > 0, a, b), lambda a, b: a.mean(0, keepdim=True) * b,
       lambda a, b: a.log_softmax(1), lambda a, b: a.T.reshape(4, 6).T.reshape(6, 4),
       lambda a, b: a[1:2].expand(6, 4) * b, lambda a, b: a.tanh() * b[2:3],
       lambda a, b: a * b, lambda a, b: a + b, lambda a, b: a.sin(), lambda a, b: a.sigmoid()]


@pytest.mark.parametrize("seed", range(20))
def test_spare_buffers_change_no_value(seed, monkeypatch):
    """Random graphs of these ops with values reused, kept by the caller and hooked, with
    spare buffers at every size: the array-level rules give the composite rules' bits, and
    every tensor the caller holds keeps its value."""
    monkeypatch.setattr(graph, "SPARE_MIN", 0)
    rng = np.random.default_rng(seed)
    plan = [(rng.integers(len(OPS)), rng.integers(0, i + 2, 2), rng.random() < 0.2)
            for i in range(30)]
    hook_at = rng.integers(30)
    x0, c0 = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))

    def run(create_graph):
        x = ag.tensor(x0, dtype=ag.float32, requires_grad=True)
        c = ag.tensor(c0, dtype=ag.float32)
        vals, kept = [x, c], []
        for i, (k, (p, q), keep) in enumerate(plan):
            v = OPS[k](vals[p], vals[q])
            if i == hook_at and v.requires_grad:
                v.register_hook(lambda g: g * 1.0)
            vals.append(v)
            if keep:
                kept.append((v, v.detach().numpy().copy()))
        loss = sum(v.sum() for v in (vals[-1], vals[len(vals) // 2]) if v.requires_grad)
        vals = v = None         # the graph alone holds the values not kept: spare buffers
        if not isinstance(loss, ag.Tensor):
            return None
        g, = ag.autograd.grad(loss, x, allow_unused=True, materialize_grads=True,
                              create_graph=create_graph)
        assert np.array_equal(c.numpy(), c0.astype(np.float32))
        for v, value in kept:
            np.testing.assert_array_equal(v.detach().numpy(), value)
        return g.detach().numpy()
    ref, got = run(True), run(False)
    assert (ref is None) == (got is None)
    if ref is not None:
        np.testing.assert_array_equal(got, ref)


def test_mul_keeps_only_what_its_rules_read(torch):
    """`x * c` with a constant c saves c alone (as torch), so a chain of such products keeps
    no intermediate alive; `_saved_self` is None as torch's."""
    for lib in (ag, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        c = lib.tensor([3.0, 4.0])
        for y, unsaved in ((x * c, "_saved_self"), (c * x, "_saved_other"),
                           (x / c, "_saved_self")):
            assert getattr(y.grad_fn, unsaved) is None, (lib.__name__, unsaved)
    import weakref
    x = ag.tensor(np.ones(3), requires_grad=True)
    c = ag.tensor(np.full(3, 2.0))
    y = x * c
    ref = weakref.ref(y._data)
    z = y * c
    del y
    assert ref() is None        # not kept by z's node
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 4.0))


def test_hot_paths_run_no_composite_rule(monkeypatch):
    """The backward of an MLP step (linear, relu, cross-entropy) and of the benchmark's chain
    (mul, add, tanh, sin) dispatches no primitive: every node runs its array-level rule."""
    from arraygrad.core import dispatch
    rng = np.random.default_rng(0)
    x = ag.tensor(rng.standard_normal((8, 6)), dtype=ag.float32)
    w1 = ag.tensor(rng.standard_normal((5, 6)), dtype=ag.float32, requires_grad=True)
    w2 = ag.tensor(rng.standard_normal((3, 5)), dtype=ag.float32, requires_grad=True)
    b = ag.tensor(rng.standard_normal(3), dtype=ag.float32, requires_grad=True)
    y = ag.tensor(rng.integers(0, 3, 8))
    loss = F.cross_entropy(F.linear(F.relu(F.linear(x, w1)), w2, b), y)
    a, c = ag.tensor(rng.uniform(0.9, 1.1, 4)), ag.tensor(rng.uniform(-0.1, 0.1, 4))
    z = v = ag.tensor(rng.standard_normal(4), requires_grad=True)
    for _ in range(5):
        z = ((z * a + c).tanh()).sin()
    calls, call = [], dispatch.Primitive.__call__

    def counted(prim, *args, **params):
        calls.append(prim.name)
        return call(prim, *args, **params)
    monkeypatch.setattr(dispatch.Primitive, "__call__", counted)
    loss.backward()
    z.backward(ag.ones_like(z))
    assert calls == []
    assert w1.grad is not None and v.grad is not None


def test_views_of_every_element_pass_the_cotangent_on_as_torch(torch, monkeypatch):
    """x[None], x[:, None], x[...]: the gradient is the cotangent reshaped (torch's
    UnsqueezeBackward0, AliasBackward0), so a -0.0 stays one, by the array-level and the
    composite rule alike (a scatter into zeros would give 0.0)."""
    g0 = np.array([-0.0, 1.0, 0.0, -0.0])
    for index in [(None,), (slice(None), None), (Ellipsis,), (None, Ellipsis, None)]:
        got = []
        for lib in (ag, torch):
            x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
            y = x[index]
            got.append(lib.autograd.grad(y, x, lib.tensor(g0).reshape(y.shape))[0])
        with monkeypatch.context() as m:
            _composite_only(m)
            x = ag.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
            y = x[index]
            got.append(ag.autograd.grad(y, x, ag.tensor(g0).reshape(y.shape))[0])
        for g in got:
            np.testing.assert_array_equal(np.signbit(g.numpy()), np.signbit(g0.reshape(2, 2)))


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 1.0, 2.0, 0.5, -1])
def test_pow_derivatives_match_torch_at_special_values(exponent, torch):
    """`x ** n` to the third derivative, on both paths (array-level and composite rules),
    gives torch's bits at zeros of both signs, inf, nan and ordinary values (the array-level
    rule's shortcuts for n = 1 and 2 change none), and each derivative is connected to `x`
    as far as torch's is (the composite rule keeps `x ** 0` and `x ** 1`, as torch does)."""
    vals = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 3.0])
    got, want = [], []
    for lib, out in ((ag, got), (torch, want)):
        x = lib.tensor(vals, dtype=lib.float64, requires_grad=True)
        g = lib.tensor(np.linspace(-1, 1, len(vals)), dtype=lib.float64)
        y = x ** exponent
        out.append(lib.autograd.grad(y, x, g, retain_graph=True)[0].detach().numpy().copy())
        for _ in range(3):
            d, = lib.autograd.grad(y, x, g, create_graph=True)
            if not d.requires_grad:
                break
            out.append(d.detach().numpy().copy())
            y = d
    assert len(got) == len(want)
    for r, w in zip(got, want):
        np.testing.assert_array_equal(r, w)


def test_square_inside_transforms_takes_no_first_power_and_gives_torchs_bits(torch, monkeypatch):
    """Inside a transform, `x ** 2`'s rules take 2 * x for torch's 2 * x ** 1 (the same
    bits): hessian, jacfwd of jacrev and jvp of grad at signed zeros, inf, nan and ordinary
    values give torch's values, and no `x ** 1` is computed (torch's form stays only on a
    plain tensor that requires grad: `test_pow_derivatives_match_torch_at_special_values`)."""
    from arraygrad.core import dispatch
    vals = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 3.0])
    w0 = np.linspace(-1, 1, len(vals))
    powers, call = [], dispatch.Primitive.__call__

    def counted(prim, *args, **params):
        if prim.name == "pow":
            powers.append(args[1])
        return call(prim, *args, **params)
    monkeypatch.setattr(dispatch.Primitive, "__call__", counted)
    got, want = [], []
    for lib, out in ((ag, got), (torch, want)):
        x, w = lib.tensor(vals), lib.tensor(w0)
        f = lambda x: (x ** 2 * w).sum()
        out.append(lib.func.hessian(f)(x))
        out.append(lib.func.jacfwd(lib.func.jacrev(lambda x: x ** 2 * w))(x))
        out.append(lib.func.jvp(lib.func.grad(f), (x,), (lib.tensor(w0[::-1].copy()),))[1])
    for r, e in zip(got, want):
        np.testing.assert_array_equal(r.numpy(), e.numpy())
    assert 2 in powers and 1 not in powers, powers


def test_pow_gradients_match_torch_where_the_exponent_is_zero_or_the_base_negative(torch):
    """Both gradients of `x ** y` (tensor, tensor) and of `b ** y` (number base) at zeros,
    negative bases, inf and nan, with non-finite incoming gradients: torch's values (0 where
    the exponent is 0 whatever g holds; nan for the exponent's gradient at a negative base;
    -inf at 0 ** y, y < 0), zeros of the same sign."""
    import itertools
    pairs = list(itertools.product([0.0, -0.0, 2.0, -2.0, np.inf, np.nan],
                                   [0.0, 1.0, -1.0, 0.5, 2.0, -0.5, 3.0]))
    g0 = np.resize([1.0, np.inf, -2.0, np.nan, 0.5], len(pairs))
    got, want = [], []
    for lib, out in ((ag, got), (torch, want)):
        x = lib.tensor([p[0] for p in pairs], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([p[1] for p in pairs], dtype=lib.float64, requires_grad=True)
        g = lib.tensor(g0, dtype=lib.float64)
        out.extend(t.numpy() for t in lib.autograd.grad(x ** y, (x, y), g))
        for base in (0.0, -2.0, 2.0, 0.5):
            out.append(lib.autograd.grad(base ** y, y, g)[0].numpy())
        x0 = lib.tensor([p[0] for p in pairs], dtype=lib.float64, requires_grad=True)
        out.append(lib.autograd.grad(x0 ** 0, x0, g)[0].numpy())
    for r, w in zip(got, want):     # finite values to the last bits of torch's own pow
        np.testing.assert_allclose(r, w, rtol=1e-15, atol=0)
        np.testing.assert_array_equal(np.signbit(r[r == 0]), np.signbit(w[r == 0]))
