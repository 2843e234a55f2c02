"""The one-frame forms of the elementwise ops (autograd/eager.py NOTE [one-frame ops]) give the
same values, nodes and gradients as the general path (public op, dispatcher, process,
record_eager), which they hand every case they do not take."""
import numpy as np
import pytest

import arraygrad as ag
from arraygrad.autograd import eager, graph
from arraygrad.core import dispatch


def _general(fn, *args):
    """`fn(*args)` through the general path: the fast forms defer while level 0's entry
    point is not `process` itself (as under the profiler)."""
    prev = dispatch.swap_eager(lambda prim, a, params: eager.process(prim, a, params))
    try:
        return fn(*args)
    finally:
        dispatch.swap_eager(prev)


def _saved(node, v, args, out):
    """A saved value of `node`, comparable between two recordings of one op: arrays and
    version counters by whose they are."""
    if type(v) is tuple and v and v[0] is graph._COMPACT:
        _, data, version, hist, k = v
        tensors = [a for a in args if isinstance(a, ag.Tensor)] + [out]
        vc = graph._vc_of(node, k)
        return ("compact", [i for i, a in enumerate(tensors) if a._data is data],
                [i for i, a in enumerate(tensors) if a._vc is vc], version, hist)
    if type(v) is graph.SavedTensor:
        return ("saved", type(v.value), v.version, v.ref is None)
    return v if v is not graph._NOT_SAVED else "not saved"


def _state(t, args):
    """Everything the node of `t` holds, with arrays and next nodes by what they are."""
    node = t.grad_fn
    if node is None:
        return (t._requires_grad, t.dtype, t.shape)
    return (type(node), node.prim, node.params, node.needs_input_grad, node._nrs, node.shapes,
            node.dtypes, [_saved(node, v, args, t) for v in node._saved],
            None if node._saved_outs is None else
            [_saved(node, v, args, t) for v in node._saved_outs],
            [None if f is None else type(f) for f, _ in node.next_functions], node.name(),
            t._requires_grad, t._output_nr, t.dtype, t.shape)


def _operands(dtype):
    """Leaves, intermediates and constants of `dtype`, and Python numbers."""
    rng = np.random.default_rng(0)
    leaf = ag.tensor(rng.uniform(0.5, 1.5, (2, 3)), dtype=dtype, requires_grad=True)
    mid = leaf * 1.0
    const = ag.tensor(rng.uniform(0.5, 1.5, 3), dtype=dtype)
    return {"leaf": leaf, "mid": mid, "const": const, "float": 0.75, "int": 3}


UNARY = ["tanh", "sin", "exp", "sqrt", "relu", "sigmoid", "floor", "abs", "__neg__", "log"]
BINARY = ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
          "__rtruediv__"]


def _check_same(fn, args):
    fast, slow = fn(*args), _general(fn, *args)
    np.testing.assert_array_equal(fast.detach().numpy(), slow.detach().numpy())
    assert _state(fast, args) == _state(slow, args)
    tensors = [a for a in args if isinstance(a, ag.Tensor) and a.requires_grad]
    if tensors and fast.requires_grad:
        gf = ag.autograd.grad(fast, tensors, ag.ones_like(fast), retain_graph=True)
        gs = ag.autograd.grad(slow, tensors, ag.ones_like(slow), retain_graph=True)
        for a, b in zip(gf, gs):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("dtype", [ag.float32, ag.float64])
def test_unary_ops_build_the_general_paths_node(dtype):
    ops = _operands(dtype)
    for name in UNARY:
        for which in ("leaf", "mid", "const"):
            x = ops[which]
            _check_same(lambda x: getattr(x, name)(), (x,))
            if hasattr(ag, name):
                _check_same(getattr(ag, name), (x,))


@pytest.mark.parametrize("dtype", [ag.float32, ag.float64])
def test_binary_ops_build_the_general_paths_node(dtype):
    ops = _operands(dtype)
    for name in BINARY:
        for a in ops:
            for b in ops:
                if a in ("float", "int") and b in ("float", "int"):
                    continue
                x, y = ops[a], ops[b]
                if not isinstance(x, ag.Tensor):
                    continue        # a number's operator is Python's (the reflected one runs)
                _check_same(lambda x, y: getattr(x, name)(y), (x, y))
    for fn in (ag.mul, ag.atan2):
        _check_same(fn, (ops["mid"], ops["const"]))
        _check_same(fn, (0.5, ops["mid"]))


def test_the_common_case_takes_one_frame(monkeypatch):
    calls = []
    monkeypatch.setattr(eager, "record_eager", lambda *a: calls.append(a[0].name))
    ops = _operands(ag.float64)
    x, c = ops["mid"], ops["const"]
    for z in (x * c, c * x, 2 * x, x / 3.0, -x, x.tanh(), ag.sin(x), ag.mul(x, c)):
        assert z.grad_fn is not None
    assert calls == []
    x * ag.tensor([1, 2, 3])
    assert calls == ["mul"]


def _bits(a):
    """An array's float64 bits, NaN as one value (IEEE leaves the payload of a result open)."""
    a = np.asarray(a, dtype=np.float64)
    return np.where(np.isnan(a), -1, a.view(np.int64))


SPECIAL = [0.0, -0.0, 1.5, -3.0, np.inf, -np.inf, np.nan, 5e-324, 1e-310, 1e308, -1e308, 0.1]


def test_scalars_and_python_floats_give_numpys_bits():
    """0-d float64 tensors and Python floats (computed as Python floats, NOTE [one-frame
    ops]): the values and gradients (array-level rules) of the general path and the composite
    rules on NumPy, bit for bit, signed zeros, infinities, subnormals, overflow and division
    by zero included."""
    f64 = ag.float64
    for name in BINARY:
        for v in SPECIAL:
            for c in SPECIAL:
                lx = ag.tensor(v, dtype=f64, requires_grad=True)
                ly = ag.tensor(c, dtype=f64, requires_grad=True)
                # (operand, the leaf it comes from)
                for x, xl in ((lx, lx), (lx * 1.0, lx), (ag.tensor(v, dtype=f64), None)):
                    for y, yl in ((c, None), (ag.tensor(c, dtype=f64), None), (ly, ly),
                                  (ly * 1.0, ly)):
                        fast = getattr(x, name)(y)
                        slow = _general(lambda x, y: getattr(x, name)(y), x, y)
                        assert _bits(fast.detach().numpy()) == _bits(slow.detach().numpy()), \
                            (name, v, c)
                        assert _state(fast, (x, y)) == _state(slow, (x, y))
                        leaves = [t for t in (xl, yl) if t is not None]
                        if not leaves:
                            continue
                        for g in (1.0, -0.0, np.inf):
                            gt = ag.tensor(g, dtype=f64)
                            gf = ag.autograd.grad(fast, leaves, gt, retain_graph=True)
                            # the composite rules through the general path: NumPy's bits
                            gs = _general(lambda: ag.autograd.grad(
                                slow, leaves, gt, retain_graph=True, create_graph=True))
                            for a, b in zip(gf, gs):
                                assert _bits(a.numpy()) == _bits(b.detach().numpy()), \
                                    (name, v, c, g)
                                assert type(a._data) is np.ndarray


def test_other_cases_take_the_general_path():
    """Mixed dtypes, ints, views, subclasses, grad mode off, saved-tensor hooks, anomaly mode
    and a 0-d result (NumPy's scalar) give what the general path gives."""
    x = ag.tensor([0.5, 1.5, 2.5], requires_grad=True)
    y = x * 2
    cases = [(lambda a, b: a * b, (y, ag.tensor([1, 2, 3]))),
             (lambda a, b: a * b, (y, ag.tensor([1., 2., 3.], dtype=ag.float32))),
             (lambda a, b: a + b, (y[1:], 2.0)),
             (lambda a, b: a + b, (ag.nn.Parameter(ag.tensor([1., 2.])), 1)),
             (lambda a, b: a * b, (y, True)),
             (lambda a, b: a * b, (y, 1j)),
             (lambda a, b: a / b, (y.sum(), 3)),
             (lambda a: a.tanh(), (y[0],)),
             (lambda a: a.tanh(), (ag.tensor([1, 2]),))]
    for fn, args in cases:
        _check_same(fn, args)
    with ag.no_grad():
        _check_same(lambda a, b: a * b, (y, y))
    unpacked = []
    with ag.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: unpacked.append(1) or t):
        z = (y * y).sin()
    z.sum().backward()
    assert unpacked and z.grad_fn.hooked
    with ag.autograd.set_detect_anomaly(True):
        assert "traceback_" in (y * y).grad_fn.metadata


def test_errors_are_the_general_paths():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="must match the size"):
        x * ag.tensor([1.0, 2.0, 3.0])
    with pytest.raises(TypeError):
        x + "a"


def test_transforms_and_profiler_see_the_ops():
    x = ag.tensor([0.5, 1.5], dtype=ag.float64)
    g = ag.func.grad(lambda x: (x * x + 1.0).tanh().sum())(x)
    np.testing.assert_allclose(g.numpy(), 2 * x.numpy() / np.cosh(x.numpy() ** 2 + 1) ** 2)
    with ag.autograd.profiler.profile() as prof:
        (x * 2.0).sin()
    names = {e.name for e in prof.function_events}
    assert {"mul", "sin"} <= names, names


def test_plain_tensors_inside_transforms_take_one_frame(torch, monkeypatch):
    """Inside a transform the one-frame forms take plain tensors (a view of one too) where
    nothing is recorded, and mark what they make as born there: a transform's value may be
    written into it in place, not into a captured tensor, as torch; where eager autograd
    records below the transform, the general path's node is built (second derivatives as
    torch's)."""
    calls, call = [], dispatch.Primitive.__call__

    def counted(prim, *args, **params):
        calls.append(prim.name)
        return call(prim, *args, **params)
    got = {}
    for lib in (ag, torch):
        c0 = lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64)
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64)

        def f(x):
            a, b = c0[1:], c0[:3]
            if lib is ag:
                with monkeypatch.context() as m:
                    m.setattr(dispatch.Primitive, "__call__", counted)
                    c = (a * 2.0 + b).tanh()
                assert calls == [], calls
            else:
                c = (a * 2.0 + b).tanh()
            c.mul_(x)       # born inside: torch lets the transform write into it
            return (c * c).sum()
        got[lib] = [lib.func.grad(f)(x)]
        with pytest.raises(RuntimeError, match="in-place"):
            lib.func.grad(lambda x: (c0[:3].mul_(x)).sum())(x)     # captured
        w = lib.tensor([1.5, -0.5, 0.25], dtype=lib.float64, requires_grad=True)
        g = lib.func.grad(lambda x: (x * (w * 2.0).sin()).sum())(x)
        got[lib] += [g, lib.autograd.grad((g * g).sum(), w)[0]]
    for a, t in zip(got[ag], got[torch]):
        np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), rtol=1e-13)


def test_sqrt_of_a_negative_number_is_nan_without_a_warning():
    """As torch (the suite turns NumPy's RuntimeWarning into an error)."""
    for x in (ag.tensor([-1.0, 4.0]), ag.tensor([-1.0, 4.0], dtype=ag.float32)[:1],
              ag.tensor([-1, 4])):
        y = ag.sqrt(x)
        assert np.isnan(y.numpy()[0])


def _matrix_operands(dtype):
    """Matrices and vectors: leaves, intermediates, constants and views that need no grad."""
    rng = np.random.default_rng(1)
    w = ag.tensor(rng.standard_normal((3, 4)), dtype=dtype, requires_grad=True)
    data = ag.tensor(rng.standard_normal((5, 4)), dtype=dtype)
    return {"w": w, "mid": w * 2.0, "const": ag.tensor(rng.standard_normal((4, 2)), dtype=dtype),
            "vec": ag.tensor(rng.standard_normal(4), dtype=dtype, requires_grad=True),
            "row": data[2], "cols": data.T[:, :3], "w.T": w.T}


@pytest.mark.parametrize("dtype", [ag.float32, ag.float64])
def test_products_and_full_reductions_build_the_general_paths_node(dtype):
    m = _matrix_operands(dtype)
    for a, b in [("w", "vec"), ("w", "row"), ("mid", "row"), ("w", "const"), ("mid", "const"),
                 ("w", "cols"), ("cols", "w"), ("w.T", "w"), ("const", "const")]:
        x, y = m[a], m[b]
        if x.shape[-1] == y.shape[0]:
            _check_same(lambda x, y: x @ y, (x, y))
            _check_same(ag.matmul, (x, y))
    for name in ("w", "mid", "const", "vec", "row", "cols"):
        _check_same(lambda x: x.sum(), (m[name],))
        _check_same(lambda x: x.mean(), (m[name],))
        _check_same(ag.sum, (m[name],))


def test_products_and_reductions_take_one_frame(monkeypatch):
    m = _matrix_operands(ag.float64)
    calls = []
    monkeypatch.setattr(eager, "record_eager", lambda *a: calls.append(a[0].name))
    for z in (m["w"] @ m["vec"], m["mid"] @ m["row"], m["w"] @ m["const"], m["mid"].sum(),
              ag.mean(m["w"]), m["w"] @ m["cols"]):
        assert z.grad_fn is not None
    assert calls == []
    m["w"].sum(0)
    assert calls == ["sum"]


def _outcome(fn):
    try:
        out = fn()
    except Exception as e:      # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e)
    return "ok", (str(out.dtype).split(".")[-1], tuple(out.shape))


def test_products_reductions_and_int_indexing_refuse_as_torch(torch):
    """Bad operands of the one-frame ops' public forms: torch's exception types and texts
    (a shape or dtype mismatch of each product kind, bool operands, a number for a tensor,
    integer means, out-of-range and 0-d indices), and torch's result dtypes where it accepts."""
    def cases(lib):
        f32, f64 = lib.float32, lib.float64
        m, v = lib.ones(3, 4, dtype=f64), lib.ones(4, dtype=f64)
        return [lambda: m @ lib.ones(2, dtype=f64), lambda: m @ lib.ones(4, dtype=f32),
                lambda: m @ lib.ones(5, dtype=f32), lambda: lib.ones(3, 4) @ v,
                lambda: v @ lib.ones(5, dtype=f64), lambda: v @ lib.ones(4, dtype=f32),
                lambda: m @ lib.ones(2, 2, dtype=f64), lambda: m @ lib.ones(4, 2),
                lambda: lib.ones(4, dtype=lib.bool) @ lib.ones(4, dtype=lib.bool),
                lambda: lib.ones(3, 4, dtype=lib.bool) @ lib.ones(4, dtype=lib.bool),
                lambda: lib.ones(3, 4, dtype=lib.int64) @ lib.ones(4, dtype=lib.int64),
                lambda: lib.matmul(m, 2.0), lambda: lib.sum([1.0, 2.0]),
                lambda: lib.tensor([1, 2]).mean(), lambda: lib.tensor([[1, 2], [3, 4]]).sum(),
                lambda: lib.tensor([True, True]).sum(), lambda: m[3], lambda: m[-4],
                lambda: lib.tensor(1.0)[0]]
    for ours, theirs in zip(cases(ag), cases(torch)):
        assert _outcome(ours) == _outcome(theirs)
    with ag.autocast("cpu", dtype=ag.bfloat16):
        z = ag.ones(3, 4) @ ag.ones(4)
    assert z.dtype is ag.bfloat16


def test_int_index_view_is_the_general_paths_view():
    """`x[i]` of a tensor that records nothing: the same view (memory, version counter, base,
    how it is redone) as the general path's, and the same errors."""
    base = ag.tensor(np.arange(12.0).reshape(3, 4))
    for i in (0, 2, -1, -3):
        fast, slow = base[i], _general(lambda: base[i])
        np.testing.assert_array_equal(fast.numpy(), slow.numpy())
        assert fast._vc is slow._vc is base._vc and fast._base is slow._base is base
        assert fast._view_version == slow._view_version
        np.testing.assert_array_equal(fast._view_fn(base).numpy(), slow._view_fn(base).numpy())
        assert np.shares_memory(fast.numpy(), base.numpy())
    v = ag.tensor([1.0, 2.0, 3.0])[1]
    assert v.shape == () and v.item() == 2.0
    row = base[1]
    row.mul_(2)
    assert base[1, 0].item() == 8.0 and base._version == 1
    for bad, msg in ((3, "index 3 is out of bounds for dimension 0 with size 3"),
                     (-4, "index -4 is out of bounds")):
        with pytest.raises(IndexError, match=msg):
            base[bad]
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        ag.tensor(1.0)[0]


def test_a_view_whose_base_was_written_takes_the_general_path():
    """A view that needs no grad goes the one-frame way only while its base is as it was
    when the view was made: after an in-place write that gave the base a history, the view
    gets its history from the general path (torch regenerates it the same way)."""
    x = ag.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = ag.zeros(4, dtype=ag.float64)
    v = base[1:]
    row = ag.zeros(2, 3, dtype=ag.float64)
    r = row[0]
    base[1:].add_(x)
    row.mul_(x)
    y = v * 2.0 + (r * v).tanh() + v.sin()
    assert y.grad_fn is not None
    g, = ag.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(g.numpy(), 2.0 + np.cos(x.detach().numpy()))


def test_broadcast_view_is_numpys_broadcast_to():
    """The view `backends.broadcast_view` makes directly (expand's impl, a sum's gradient) is
    NumPy's `broadcast_to`: shape, strides, dtype, values, shared memory, read-only, and the
    same errors, over random shapes, dtypes and layouts."""
    from arraygrad.backends import broadcast_view
    rng = np.random.default_rng(0)
    taken = 0
    for _ in range(3000):
        have = tuple(int(rng.choice([0, 1, 1, 2, 3])) for _ in range(rng.integers(0, 4)))
        shape = tuple(int(rng.choice([0, 1, 2, 4, -1])) for _ in range(rng.integers(0, 3))) + \
            tuple(h if rng.random() < 0.6 else int(rng.choice([0, 1, 2, 5, -1])) for h in have)
        if rng.random() < 0.1:
            shape = shape[1:]
        dt = rng.choice([np.float64, np.float32, np.int64, np.bool_, np.complex128, ">f8"])
        a = np.arange(int(np.prod(have))).astype(dt).reshape(have)
        if a.ndim >= 2 and rng.random() < 0.2:
            a = a.swapaxes(0, 1)
        try:
            want = np.broadcast_to(a, shape)
        except ValueError:
            with pytest.raises(ValueError):
                broadcast_view(np, a, shape)
            continue
        got = broadcast_view(np, a, shape)
        assert (got.shape, got.strides, got.dtype) == (want.shape, want.strides, want.dtype)
        np.testing.assert_array_equal(got, want)
        assert not got.flags.writeable and np.shares_memory(got, a) == np.shares_memory(want, a)
        taken += a.flags.c_contiguous and a.dtype.isbuiltin == 1 and a.size > 0 and \
            min(shape, default=1) > 0      # (the cases made directly)
    assert taken > 500
