"""Views and copies (issue 9): a result shares memory with its input exactly where torch's does.

Every case runs in both libraries on the same input; where the result shares memory, a write
through it must reach the input (and bump the shared version counter), as in torch.
"""
import numpy as np
import pytest

import arraygrad as ag


def base(lib, shape=(2, 3, 4)):
    return lib.arange(float(np.prod(shape))).reshape(shape)


CASES = [
 ("reshape", lambda L, x: x.reshape(6, 4)),
 ("reshape_nc", lambda L, x: x.transpose(0, 1).reshape(-1)),
 ("view", lambda L, x: x.view(6, 4)),
 ("flatten", lambda L, x: x.flatten()),
 ("flatten1d", lambda L, x: x.reshape(-1).flatten()),
 ("unflatten", lambda L, x: x.unflatten(2, (2, 2))),
 ("transpose", lambda L, x: x.transpose(0, 1)),
 ("permute", lambda L, x: x.permute(2, 0, 1)),
 ("movedim", lambda L, x: x.movedim(0, 2)),
 ("unsqueeze", lambda L, x: x.unsqueeze(1)),
 ("squeeze_noop", lambda L, x: x.squeeze()),
 ("squeeze", lambda L, x: x.unsqueeze(0).squeeze(0)),
 ("expand", lambda L, x: x.unsqueeze(0).expand(3, 2, 3, 4)),
 ("expand_same", lambda L, x: x.expand(2, 3, 4)),
 ("broadcast_to", lambda L, x: L.broadcast_to(x, (5, 2, 3, 4))),
 ("clone", lambda L, x: x.clone()),
 ("contiguous", lambda L, x: x.contiguous()),
 ("contiguous_nc", lambda L, x: x.transpose(0, 2).contiguous()),
 ("detach", lambda L, x: x.detach()),
 ("data", lambda L, x: x.data),
 ("flip", lambda L, x: x.flip(0)),
 ("flip2", lambda L, x: x.flip(0, 1)),
 ("fliplr_all", lambda L, x: x.flip(0, 1, 2)),
 ("roll", lambda L, x: x.roll(1, 0)),
 ("roll0", lambda L, x: x.roll(0, 0)),
 ("narrow", lambda L, x: x.narrow(1, 1, 2)),
 ("split", lambda L, x: x.split(1, 1)[1]),
 ("chunk", lambda L, x: x.chunk(2, 2)[1]),
 ("unbind", lambda L, x: x.unbind(1)[1]),
 ("select", lambda L, x: x.select(2, 1)),
 ("repeat1", lambda L, x: x.repeat(1, 1, 1)),
 ("repeat2", lambda L, x: x.repeat(2, 1, 1)),
 ("tile1", lambda L, x: x.tile((1, 1, 1))),
 ("diagonal", lambda L, x: x.diagonal(0, 1, 2)),
 ("diag2d", lambda L, x: L.diag(x[0])),
 ("trace_no", lambda L, x: x[0].trace()),
 ("T", lambda L, x: x[0].T),
 ("mT", lambda L, x: x.mT),
 ("t", lambda L, x: x[0].t()),
 ("view_as", lambda L, x: x.view_as(L.zeros(6, 4))),
 ("reshape_as", lambda L, x: x.reshape_as(L.zeros(6, 4))),
 ("ravel", lambda L, x: x.ravel()),
 ("ravel_nc", lambda L, x: x.transpose(0, 1).ravel()),
 ("getitem_int", lambda L, x: x[1]),
 ("getitem_slice", lambda L, x: x[:, 1:]),
 ("getitem_step", lambda L, x: x[:, ::2]),
 ("getitem_none", lambda L, x: x[None]),
 ("getitem_ell", lambda L, x: x[..., 0]),
 ("getitem_list", lambda L, x: x[[0, 1]]),
 ("getitem_tensor", lambda L, x: x[L.tensor([1, 0])]),
 ("getitem_0dtensor", lambda L, x: x[L.tensor(1)]),
 ("getitem_mask", lambda L, x: x[x > 3]),
 ("index_select", lambda L, x: x.index_select(1, L.tensor([0, 1]))),
 ("gather", lambda L, x: x.gather(0, L.zeros(2, 3, 4, dtype=L.long))),
 ("masked_select", lambda L, x: x.masked_select(x > 2)),
 ("take", lambda L, x: x.take(L.tensor([0, 1]))),
 ("to_same", lambda L, x: x.to(L.float32)),
 ("to_other", lambda L, x: x.to(L.float64)),
 ("float", lambda L, x: x.float()),
 ("type_as", lambda L, x: x.type_as(x)),
 ("add0", lambda L, x: x + 0),
 ("mul1", lambda L, x: x * 1),
 ("pos", lambda L, x: +x),
 ("abs", lambda L, x: x.abs()),
 ("clamp", lambda L, x: x.clamp(0, 100)),
 ("where", lambda L, x: L.where(x > -1, x, 0.)),
 ("tril", lambda L, x: x.tril()),
 ("triu", lambda L, x: x.triu()),
 ("sum0", lambda L, x: x.sum(0)),
 ("cumsum", lambda L, x: x.cumsum(0)),
 ("sort", lambda L, x: x.sort(0).values),
 ("topk", lambda L, x: x.topk(1, 0).values),
 ("max_dim", lambda L, x: x.max(0).values),
 ("amax", lambda L, x: x.amax(0)),
 ("cat1", lambda L, x: L.cat([x])),
 ("stack1", lambda L, x: L.stack([x])),
 ("hstack", lambda L, x: L.hstack([x])),
 ("meshgrid", lambda L, x: L.meshgrid(x[0, 0], x[0, 1], indexing="ij")[0]),
 ("broadcast_tensors", lambda L, x: L.broadcast_tensors(x, L.zeros(2, 1, 1))[0]),
 ("as_tensor", lambda L, x: L.as_tensor(x)),
 ("tensor", lambda L, x: L.tensor(x.tolist())),
 ("einsum_diag", lambda L, x: L.einsum("ii->i", x[0, :, :3])),
 ("einsum_T", lambda L, x: L.einsum("ij->ji", x[0])),
 ("einsum_id", lambda L, x: L.einsum("ijk", x)),
 ("einsum_sum", lambda L, x: L.einsum("ijk->ij", x)),
 ("matmul", lambda L, x: x @ L.ones(4, 1)),
 ("diff", lambda L, x: x.diff()),
 ("softmax", lambda L, x: x.softmax(0)),
 ("swapaxes", lambda L, x: x.swapaxes(0, 1)),
 ("expand_as", lambda L, x: x[:1].expand_as(x)),
 ("squeeze_dim_noop", lambda L, x: x.squeeze(0)),
 ("unsqueeze_neg", lambda L, x: x.unsqueeze(-1)),
 ("new_view_chain", lambda L, x: x[1].transpose(0, 1)[2]),
 ("masked_fill", lambda L, x: x.masked_fill(x > 100, 0.)),
 ("nonzero", lambda L, x: x.nonzero()),
 ("split_sizes", lambda L, x: x.split([1, 2], 1)[1]),
 ("argsort", lambda L, x: x.argsort(0)),
 ("index_put", lambda L, x: x.index_put((L.tensor([0]),), L.tensor(5.))),
 ("scatter_add", lambda L, x: x.scatter_add(0, L.zeros(1, 3, 4, dtype=L.long), L.ones(1, 3, 4))),
 ("real_linear_flatten_nc", lambda L, x: x.transpose(0, 1).flatten()),
 ("narrow_full", lambda L, x: x.narrow(0, 0, 2)),
 ("select_neg", lambda L, x: x.select(0, -1)),
 ("roll_nodim", lambda L, x: x.roll(1)),
 ("squeeze_tuple", lambda L, x: x.unsqueeze(0).unsqueeze(2).squeeze((0, 2))),
]



def _shares(lib, out, x):
    if lib is ag:
        return bool(np.shares_memory(out._base_array(), x._base_array()))
    return out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def _version(t):
    return t._version


@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_view_or_copy_as_torch(torch, name, fn):
    xt, xa = base(torch), base(ag)
    ot, oa = fn(torch, xt), fn(ag, xa)
    shared = _shares(torch, ot, xt)
    assert _shares(ag, oa, xa) == shared, \
        f"{name}: torch's result {'is' if shared else 'is not'} a view of its input"
    if shared and oa.dtype.is_floating_point and oa.numel():
        # a write through the view reaches the input, and its version counter as in torch
        # (`.data` has a counter of its own)
        v0, vt0 = _version(xa), xt._version
        try:
            with torch.no_grad():
                ot.add_(100)
        except RuntimeError:        # an expanded view: several elements share one location
            with pytest.raises(RuntimeError, match="more than one element"):
                oa.add_(100)
            return
        oa.add_(100)
        np.testing.assert_array_equal(xa.numpy(), xt.numpy())
        assert (_version(xa) > v0) == (xt._version > vt0)


def test_flip_is_a_copy_for_autograd(torch):
    def run(lib):
        x = lib.tensor([1., 2., 3.], requires_grad=True)
        h = x * 1
        w = h * h
        h.flip(0).add_(1)
        w.sum().backward()
        return x.grad
    np.testing.assert_array_equal(run(ag).numpy(), run(torch).numpy())
    a = ag.tensor([1., 2., 3.])
    b = a.flip(0)
    b[0] = 100.
    assert a.tolist() == [1., 2., 3.]


@pytest.mark.parametrize("make", [lambda L, x: x.repeat(1, 1), lambda L, x: x.tile((1, 1)),
                                  lambda L, x: x.t().contiguous(), lambda L, x: x.flip(0, 1),
                                  lambda L, x: x[:1].repeat(3, 1)])
def test_copies_do_not_write_back(make):
    x = ag.arange(6.).reshape(2, 3)
    out = make(ag, x)
    out.fill_(-1.)
    assert x.tolist() == [[0., 1., 2.], [3., 4., 5.]]


def test_write_into_diagonal(torch):
    for lib in (ag, torch):
        z = lib.zeros(2, 2)
        z.diagonal().fill_(1)
        assert z.tolist() == [[1., 0.], [0., 1.]]
        e = lib.zeros(3, 3)
        lib.einsum("ii->i", e).add_(2)
        assert e.tolist() == [[2., 0., 0.], [0., 2., 0.], [0., 0., 2.]]


def test_inplace_through_diagonal_gradient(torch):
    def run(lib):
        x = lib.tensor([[1., 2.], [3., 4.]], dtype=lib.float64, requires_grad=True)
        h = x * 1
        h.diagonal().mul_(3)
        (h * h).sum().backward()
        return x.grad
    np.testing.assert_allclose(run(ag).numpy(), run(torch).numpy())


@pytest.mark.parametrize("case", [
    "lib.tensor([1.0, 2.0], dtype=lib.float64).view(lib.int64)",
    "lib.tensor([1.0, 2.0], dtype=lib.float64).view(lib.float32)",
    "lib.tensor([1+2j, 3-1j], dtype=lib.complex128).view(lib.float64)",
    "lib.tensor([1.0, 2.0, 3.0, 4.0]).view(lib.float64)",
    "lib.arange(6.0)[2:].view(lib.float64)",
    "lib.arange(6.0)[1:5].view(lib.float64)",
    "lib.arange(4.0).reshape(2, 2).t().view(lib.float16)",
    "lib.arange(4.0).reshape(2, 2).t().view(lib.int32)",
    "lib.arange(8.0).reshape(2, 4)[:, ::2].view(lib.float64)",
    "lib.tensor(1.0).view(lib.int8)",
    "lib.tensor(1.0).view(lib.int32)",
    "lib.arange(3.0).view(lib.float64)",
    "lib.tensor([True, False]).view(lib.uint8)",
])
def test_view_as_dtype_matches_torch(torch, case):
    """`x.view(dtype)`: the same memory read as another dtype, torch's checks and messages."""
    results = []
    for lib in (torch, ag):
        try:
            out = eval(case, {"lib": lib})
            results.append((out.tolist(), tuple(out.shape), out.stride(), out.requires_grad))
        except RuntimeError as e:
            results.append(str(e))
    assert results[1] == results[0]


def test_view_as_dtype_shares_memory_and_version(torch):
    for lib in (torch, ag):
        a = lib.zeros(3, requires_grad=True)
        b = a.detach().view(lib.int32)
        b[0] = 1065353216       # the bits of 1.0f
        assert a.tolist() == [1.0, 0.0, 0.0] and a._version == 1
        assert not a.view(lib.int32).requires_grad
