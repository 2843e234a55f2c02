"""In-place ops and __setitem__: values, rewritten history (CopySlices), version counters, errors."""
import numpy as np
import pytest

import arraygrad as ag
from conftest import assert_close, pair, reference_torch

torch = reference_torch()

INPLACE_MSG = ("one of the variables needed for gradient computation has been modified by an "
               "inplace operation")


def check(f, *arrays):
    """f(lib, *leaves) on both libraries: same values, same grads for every leaf."""
    a_in, t_in = zip(*(pair(torch, np.asarray(a, dtype=np.float64)) for a in arrays))
    a_out, t_out = f(ag, *a_in), f(torch, *t_in)
    assert_close(a_out, t_out)
    rng = np.random.default_rng(0)
    g = rng.standard_normal(tuple(t_out.shape))
    a_out.backward(ag.tensor(g))
    t_out.backward(torch.tensor(g))
    for i, (a, t) in enumerate(zip(a_in, t_in)):
        if t.grad is None:
            assert a.grad is None, f"leaf {i}"
        else:
            assert_close(a.grad, t.grad, what=f"grad of leaf {i}: ")


X = np.arange(12.0).reshape(3, 4) / 7 - 0.6
V = np.array([0.5, -1.5, 2.0, 0.25])


# ----------------------------------------------------------------- in-place on non-leaves
@pytest.mark.parametrize("op", [
    lambda y, v: y.add_(v), lambda y, v: y.sub_(v), lambda y, v: y.mul_(v),
    lambda y, v: y.div_(v + 3), lambda y, v: y.add_(v, alpha=2), lambda y, v: y.sub_(2.5),
    lambda y, v: y.mul_(3), lambda y, v: y.div_(-2), lambda y, v: y.clamp_(-0.3, 0.4),
    lambda y, v: y.clamp_(min=0.1), lambda y, v: y.zero_(), lambda y, v: y.fill_(1.5),
    lambda y, v: y.copy_(v), lambda y, v: y.pow_(2), lambda y, v: y.exp_(),
    lambda y, v: y.neg_(), lambda y, v: y.tanh_(), lambda y, v: y.sigmoid_(),
    lambda y, v: y.relu_(), lambda y, v: y.abs_(), lambda y, v: y.sin_(),
    lambda y, v: y.__iadd__(v), lambda y, v: y.__imul__(v), lambda y, v: y.__isub__(v),
    lambda y, v: y.__itruediv__(2.0), lambda y, v: y.fill_(v.sum()), lambda y, v: y.masked_fill_(y > 0, 0.5),
], ids=lambda op: "")
def test_inplace_on_non_leaf_matches_torch(op):
    def f(lib, x, v):
        y = x * 1.5
        r = op(y, v)
        assert r is y
        return y * x
    check(f, X, V)


def test_inplace_chain_and_reuse():
    def f(lib, x, v):
        y = x.sin()
        y.mul_(v).add_(x).clamp_(max=2.0)
        z = y * y
        z.sub_(v)
        return z.sum(0) + y[1]
    check(f, X, V)


def test_inplace_on_tensor_without_grad_with_operand_requiring_grad():
    def f(lib, x, v):
        a = lib.zeros(3, 4, dtype=lib.float64)
        a.add_(x)
        a.mul_(v)
        b = lib.ones(4, dtype=lib.float64)
        b.copy_(v)
        return a + b
    check(f, X, V)
    a = ag.zeros(3)
    a.add_(ag.tensor([1.0, 2.0, 3.0], requires_grad=True))
    assert a.requires_grad and a.grad_fn.name() == "AddBackward0" and not a.is_leaf


# ----------------------------------------------------------------- views and __setitem__ (CopySlices)
@pytest.mark.parametrize("write", [
    lambda y, v: y[0].mul_(2),
    lambda y, v: y[1].copy_(v),
    lambda y, v: y[:, 1].add_(v[:3]),
    lambda y, v: y[1:, ::2].mul_(v[:2]),
    lambda y, v: y.t()[2].add_(1.0),
    lambda y, v: y.view(-1)[2:6].mul_(v),
    lambda y, v: y[0][1:3].clamp_(-0.1, 0.1),
    lambda y, v: y.unsqueeze(0)[0, 2].zero_(),
    lambda y, v: y.transpose(0, 1)[1:3].fill_(0.5),
    lambda y, v: y.__setitem__(0, v),
    lambda y, v: y.__setitem__((slice(None), 2), v[:3] * v[1]),
    lambda y, v: y.__setitem__((1, 2), v[0]),
    lambda y, v: y.__setitem__((Ellipsis, slice(0, 2)), 7.0),
    lambda y, v: y.__setitem__(y > 0.3, v[0]),
    lambda y, v: y.__setitem__(y > 0.3, 0.0),
    lambda y, v: y.__setitem__(ag_or_torch_index(y), v[2]),
    lambda y, v: y.__setitem__((slice(None), ag_or_torch_index(y)), v[:3].unsqueeze(1)),
], ids=lambda w: "")
def test_write_into_view_of_non_leaf_matches_torch(write):
    def f(lib, x, v):
        y = x * 2
        w = y.exp()          # y saved by nothing that the write invalidates
        write(y, v)
        return y * x + w
    check(f, X, V)


def ag_or_torch_index(y):
    lib = torch if isinstance(y, torch.Tensor) else ag
    return lib.tensor([0, 2])


def test_view_of_written_base_sees_the_write():
    """The view's history is regenerated from the base after an in-place on either of them."""
    def f(lib, x, v):
        y = x * 2
        a = y[0]
        b = y[:, 1]
        a.mul_(v)               # write through one view
        return y.sum(1) * 2 + b * 3
    check(f, X, V)


def test_view_used_after_base_written_in_place():
    def f(lib, x, v):
        y = x * 2
        a = y[1]
        y.mul_(3)
        return a * v
    check(f, X, V)


def test_view_of_view_written_then_base_used():
    def f(lib, x, v):
        y = x + 0
        z = y[1:]
        z[0].mul_(v)
        z.add_(1)
        return y.sin()
    check(f, X, V)


def test_setitem_on_tensor_without_grad_with_value_requiring_grad():
    def f(lib, x, v):
        out = lib.zeros(3, 4, dtype=lib.float64)
        out[1] = v
        out[:, 0] = x[:, 0] * 2
        return out * 3
    check(f, X, V)


def test_setitem_values_and_broadcast():
    a, t = pair(torch, X, requires_grad=False)
    for idx, val in [(0, 1.0), ((slice(None), 1), [1.0, 2.0, 3.0]), ((1, 2), 5.0),
                     (slice(1, None), [9.0, 8.0, 7.0, 6.0])]:
        a[idx] = val
        t[idx] = torch.tensor(val, dtype=torch.float64) if isinstance(val, list) else val
    assert_close(a, t)


# ----------------------------------------------------------------- version counters and errors
def test_version_counter_shared_with_views():
    x = ag.tensor([1.0, 2.0, 3.0])
    v = x[1:]
    d = x.detach()
    assert x._version == 0
    x.add_(1)
    assert x._version == v._version == d._version == 1
    v.mul_(2)
    d[0] = 3.0
    assert x._version == 3
    assert x.tolist() == [3.0, 6.0, 8.0]


def test_modified_saved_input_raises_at_backward():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    c = ag.tensor([3.0, 4.0])
    y = x * c          # saves c
    c.add_(1)
    with pytest.raises(RuntimeError, match=INPLACE_MSG):
        y.sum().backward()


def test_modified_saved_output_raises_at_backward():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()        # saves its output
    y.add_(1)
    with pytest.raises(RuntimeError, match=INPLACE_MSG):
        y.sum().backward()
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match=INPLACE_MSG):
        y.sum().backward()


def test_modified_through_a_view_raises():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y * y          # saves y
    y[0] = 0.0
    with pytest.raises(RuntimeError, match=INPLACE_MSG):
        z.sum().backward()


def test_modified_through_detach_raises():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x.sin()        # saves x
    x.detach().zero_()
    with pytest.raises(RuntimeError, match=INPLACE_MSG):
        y.sum().backward()


def test_unsaved_input_may_be_modified():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    c = ag.tensor([3.0, 4.0])
    y = x + c           # add saves nothing
    c.add_(1)
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_inplace_on_leaf_requiring_grad_raises():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    msg = "a leaf Variable that requires grad is being used in an in-place operation."
    for op in (lambda: x.add_(1), lambda: x.mul_(2), lambda: x.zero_(), lambda: x.fill_(1.0),
               lambda: x.copy_(ag.tensor([3.0, 4.0])), lambda: x.clamp_(0, 1),
               lambda: x.__setitem__(0, 5.0)):
        with pytest.raises(RuntimeError, match=msg):
            op()
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being "
                                           "used in an in-place operation."):
        x[0].add_(1)
    assert x.tolist() == [1.0, 2.0]
    with ag.no_grad():
        x.add_(1)
        x[0] = 0.0
    assert x.tolist() == [0.0, 3.0] and x.is_leaf and x.requires_grad


def test_inplace_dtype_and_shape_errors():
    i = ag.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output "
                                           "type Long"):
        i.add_(0.5)
    i.add_(2)
    assert i.tolist() == [3, 4, 5] and i.dtype is ag.int64
    x = ag.zeros(3)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast "
                                           r"shape \[2, 3\]"):
        x.add_(ag.ones(2, 3))
    x.add_(ag.ones(1))
    assert x.tolist() == [1.0, 1.0, 1.0]
    f = ag.zeros(2, dtype=ag.float32)
    f.add_(ag.tensor([1.0, 2.0], dtype=ag.float64))
    assert f.dtype is ag.float32


def test_inplace_keeps_identity_and_grad_fn_names():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y2 = y
    y += 1
    assert y is y2 and y.grad_fn.name() == "AddBackward0"
    y.mul_(2)
    assert y.grad_fn.name() == "MulBackward0"


def test_fill_zero_copy_on_non_leaf_keep_history_with_zero_grad():
    for method, name in (("zero_", "ZeroBackward0"), ("fill_", "FillBackward0"),
                         ("copy_", "CopyBackwards")):
        x = ag.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        args = {"zero_": (), "fill_": (2.0,), "copy_": (ag.tensor([5.0, 6.0]),)}[method]
        getattr(y, method)(*args)
        assert y.requires_grad and y.grad_fn.name() == name
        (y * 2).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0]


def test_view_needs_viewable_data_and_reshape_copies():
    x = ag.tensor(X)
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size "
                                           "and stride"):
        x.t().view(-1)
    r = x.t().reshape(-1)
    r.add_(100)
    assert x.tolist() == X.tolist(), "a reshape that had to copy does not write back"
    v = x.view(-1)
    v.add_(1)
    assert np.allclose(x.numpy(), X + 1), "a view writes back"

    def f(lib, x, w):
        y = x * 2
        r = y.t().reshape(-1)
        r.mul_(w.sum())
        return y.sum() + r
    check(f, X, V)


def test_integer_index_is_a_view():
    y = ag.tensor(X) * 1
    e = y[1, 2]
    y.add_(1)
    assert e.item() == pytest.approx(X[1, 2] + 1)
    e.fill_(0.0)
    assert y[1, 2].item() == 0.0


def test_second_derivative_through_written_views():
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        v = lib.tensor(V, requires_grad=True)
        y = x.sin() * 1
        y[1] = v * v
        y[:, 2].mul_(y[0, 0].clone())
        loss = (y * y * x).sum()
        gx, gv = lib.autograd.grad(loss, [x, v], create_graph=True)
        return lib.autograd.grad((gx * gx).sum() + (gv ** 3).sum(), [x, v])
    for a, t in zip(run(ag), run(torch)):
        assert_close(a, t)


def test_old_view_of_constant_buffer_gains_history():
    def f(lib, x, v):
        buf = lib.zeros(3, 4, dtype=lib.float64)
        col = buf[:, 1]
        buf.add_(x * v.sum())        # the buffer gains history after the view was taken
        return col * 2 + buf[0, 0]
    check(f, X, V)


def test_stale_constant_view_next_to_a_tensor_with_grad():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    buf = ag.zeros(2)
    view = buf[:]
    buf.add_(1)                   # stays constant: no history to pick up
    y = x * view
    assert y.requires_grad and not view.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_mixed_setitem_program_matches_torch():
    def f(lib, x, v):
        y = x * 1
        y[y > 0.5] = v.sum() * 2
        y[0, [0, 0]] = v[:2]
        y[..., 1] += v[1]
        idx = lib.tensor([1, 0])
        y[idx] = y[idx] * 3
        return y * y
    check(f, X, V)


@pytest.mark.parametrize("prog", [
    lambda M, x: (x * 2).t_() * M.tensor([[1.0, 2], [3, 4], [5, 6]], dtype=M.float64),
    lambda M, x: (x * 1.0).unsqueeze_(0).transpose_(0, 2).squeeze_(1).sin(),
    lambda M, x: (x * 1.0).swapdims_(0, 1).as_strided_((2, 2), (1, 2)).exp(),
])
def test_inplace_view_ops_as_torch(torch, prog):
    """t_/transpose_/squeeze_/unsqueeze_/swapdims_/as_strided_: the tensor becomes the view,
    its version moves on, and gradients and tangents flow as torch's."""
    outs = []
    for M in (ag, torch):
        x = M.tensor([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], dtype=M.float64, requires_grad=True)
        y = prog(M, x)
        t = M.func.jvp(lambda a: prog(M, a), (x.detach(),), (M.ones_like(x) * 0.5,))[1]
        outs.append((y.detach().numpy(), M.autograd.grad(y.sum(), x)[0].numpy(),
                     t.detach().numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_inplace_view_op_on_a_view_writes_through_to_its_base(torch):
    for M in (ag, torch):
        x = M.tensor([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], dtype=M.float64, requires_grad=True)
        z = x * 1.0
        v = z[0]
        v.unsqueeze_(0)
        assert tuple(v.shape) == (1, 3) and v._base is z
        v.mul_(3)
        g, = M.autograd.grad((z * M.arange(6.0, dtype=M.float64).reshape(2, 3)).sum(), x)
        np.testing.assert_allclose(g.numpy(), [[0.0, 3, 6], [3, 4, 5]])
        leaf = M.ones(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable"):
            leaf.t_()


# ----------------------------------------------------------------- direct writes
DIRECT = [  # (in-place op, the same out of place)
    (lambda p, v: p.sub_(v * 0.1), lambda p, v: p - v * 0.1),
    (lambda p, v: p.add_(v, alpha=-0.3), lambda p, v: p.add(v, alpha=-0.3)),
    (lambda p, v: p.mul_(0.9), lambda p, v: p * 0.9),
    (lambda p, v: p.div_(v + 3), lambda p, v: p / (v + 3)),
    (lambda p, v: p.add_(2), lambda p, v: p + 2),
    (lambda p, v: p.sub_(v[1]), lambda p, v: p - v[1]),
    (lambda p, v: p.mul_(p), lambda p, v: p * p),   # the operand is the written array
    (lambda p, v: p.add_(p, alpha=2), lambda p, v: p.add(p, alpha=2))]


@pytest.mark.parametrize("ops", DIRECT)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_direct_writes_under_no_grad_keep_the_array_and_the_bits(ops, dtype):
    """An optimizer's `p -= lr * g` under no_grad writes into p's own array (NOTE [direct
    writes]): the same array, its version bumped, the bits of the out-of-place op."""
    inplace, outplace = ops
    p = ag.tensor(X.astype(dtype), requires_grad=True)
    v = ag.tensor(np.broadcast_to(V, X.shape).astype(dtype))
    want = outplace(p.detach(), v).numpy()
    plain = p.detach().clone()              # grad mode on, nothing requires grad: direct too
    array, version = p._data, p._version
    with ag.no_grad():
        assert inplace(p, v) is p
    assert p._data is array and p._version == version + 1
    np.testing.assert_array_equal(p.detach().numpy(), want)
    np.testing.assert_array_equal(inplace(plain, v).numpy(), want)
    if torch is not None:
        tp = torch.tensor(X.astype(dtype), requires_grad=True)
        with torch.no_grad():
            inplace(tp, torch.tensor(np.broadcast_to(V, X.shape).astype(dtype)))
        assert_close(p.detach(), tp.detach(), rtol=1e-6)


def test_direct_writes_reach_views_and_saved_values_notice():
    """A write into a view lands in its base; a value saved for backward that is overwritten
    under no_grad is refused by the backward, as torch's."""
    base = ag.tensor(X.copy())
    with ag.no_grad():
        base[1].mul_(2)
    np.testing.assert_array_equal(base.numpy()[1], X[1] * 2)
    x = ag.tensor(X.copy(), requires_grad=True)
    y = x.exp()
    with ag.no_grad():
        y.sub_(1.0)
    with pytest.raises(RuntimeError, match=INPLACE_MSG):
        y.sum().backward()


def test_direct_writes_are_quiet_and_general_cases_still_check():
    """Overflow gives inf without a warning; other dtypes and shapes take the general path
    with its errors, and so does a profiled run (the profiler sees the op)."""
    with ag.autograd.profiler.profile() as prof, ag.no_grad():
        ag.ones(3).add_(1)
    assert [e.name for e in prof.function_events] == ["add"]
    x = ag.tensor(np.array([3e38, 1.0], dtype=np.float32))
    with ag.no_grad():
        x.mul_(10.0)
    assert np.isinf(x.numpy()[0])
    y = ag.tensor(X.astype(np.float32))
    with ag.no_grad():
        y.add_(ag.tensor(V))                # float64 into float32: cast, as torch
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            ag.tensor(V).add_(ag.tensor(X))
        with pytest.raises(RuntimeError, match="can't be cast"):
            ag.tensor([1, 2]).add_(0.5)
    np.testing.assert_allclose(y.numpy(), (X + V).astype(np.float32), rtol=1e-6)


def test_direct_fills_keep_the_array():
    """zero_ and fill_ of a number write into the tensor's own array (zero_grad with
    set_to_none=False), version bumped; a leaf that requires grad is still refused."""
    g = ag.tensor(X.astype(np.float32))
    array, version = g._data, g._version
    g.zero_()
    assert g._data is array and g._version == version + 1 and not g.numpy().any()
    with ag.no_grad():
        g.fill_(0.1)
    np.testing.assert_array_equal(g.numpy(), np.full(X.shape, 0.1, dtype=np.float32))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        ag.tensor(X, requires_grad=True).zero_()


def test_accumulating_into_a_grad_of_another_shape_raises_torchs_error(torch):
    """`.data` replaced by one of another shape, then a backward into the old `.grad`."""
    messages = []
    for lib in (torch, ag):
        x = lib.ones(3, requires_grad=True)
        x.grad = lib.ones(3)
        x.data = lib.zeros(5)
        with pytest.raises(RuntimeError) as e:
            (x * 2).sum().backward()
        messages.append(str(e.value))
    assert messages[1].startswith(messages[0].split(" at ")[0])
