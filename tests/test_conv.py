"""Convolution, pooling, padding, interpolation: what the op catalogue does not reach.

The catalogue (op_db's conv/pool block) checks values, gradients, second
derivatives, jvp and vmap-vs-loop of every functional op. Here: per-sample
gradients of a CNN as one batched conv, batching rules equal to the batched call
bit for bit, vmap against torch.func.vmap, jvp against finite differences, the
nn modules (init, parameter names, repr, padding modes), a training run against
torch, and the errors.
"""
import math
import warnings

import numpy as np
import pytest

import arraygrad as ag
import arraygrad.nn.functional as F
from arraygrad.func import grad, jvp, vmap
from arraygrad.ops import conv as conv_ops
from conftest import assert_close


def _rng(seed=0):
    return np.random.default_rng(seed)


def _both(torch, *arrays, requires_grad=False):
    return ([ag.tensor(a, requires_grad=requires_grad) for a in arrays],
            [torch.tensor(a, requires_grad=requires_grad) for a in arrays])


# ----------------------------------------------------------------- per-sample gradients
def _cnn_loss(lib, params, x, y):
    Fn = lib.nn.functional
    h = Fn.relu(Fn.conv2d(x.unsqueeze(0), params["w1"], params["b1"], padding=1))
    h = Fn.max_pool2d(h, 2)
    h = Fn.conv2d(h, params["w2"], params["b2"], stride=2, groups=2)
    h = Fn.adaptive_avg_pool2d(lib.tanh(h), 1).flatten(1)
    return Fn.cross_entropy(Fn.linear(h, params["w3"]), y.unsqueeze(0))


def _cnn_params(rng):
    return {"w1": rng.standard_normal((4, 3, 3, 3)) * 0.3, "b1": rng.standard_normal(4) * 0.1,
            "w2": rng.standard_normal((6, 2, 2, 2)) * 0.3, "b2": rng.standard_normal(6) * 0.1,
            "w3": rng.standard_normal((5, 6)) * 0.3}


def test_vmap_grad_of_a_cnn_matches_loop_and_torch_func_and_is_one_conv(torch, monkeypatch):
    rng = _rng(1)
    params = _cnn_params(rng)
    x = rng.standard_normal((6, 3, 8, 8))
    y = np.array([0, 4, 2, 1, 3, 2])
    p = {k: ag.tensor(v) for k, v in params.items()}
    tp = {k: torch.tensor(v) for k, v in params.items()}

    calls = []
    impl = conv_ops._im2col.impl
    monkeypatch.setattr(conv_ops._im2col, "impl", lambda *a, **k: calls.append(1) or impl(*a, **k))
    per_example = vmap(grad(lambda p, x, y: _cnn_loss(ag, p, x, y)), in_dims=(None, 0, 0))(
        p, ag.tensor(x), ag.tensor(y))
    batched_calls = len(calls)
    calls.clear()
    grad(lambda p, x, y: _cnn_loss(ag, p, x, y))(p, ag.tensor(x[0]), ag.tensor(y[0]))
    # one example and the whole batch run the same number of im2col/GEMM calls
    assert batched_calls == len(calls) > 0

    want = torch.func.vmap(torch.func.grad(lambda p, x, y: _cnn_loss(torch, p, x, y)),
                           in_dims=(None, 0, 0))(tp, torch.tensor(x), torch.tensor(y))
    loop = [grad(lambda p: _cnn_loss(ag, p, ag.tensor(x[i]), ag.tensor(y[i])))(p)
            for i in range(len(x))]
    for k in params:
        assert_close(per_example[k], want[k], 1e-10, 1e-12, what=k)
        np.testing.assert_allclose(per_example[k].numpy(), np.stack([g[k].numpy() for g in loop]),
                                   rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------- batching = the batched op
def _f32(rng, *shape):
    return ag.tensor(rng.standard_normal(shape).astype(np.float32))


def test_batching_rules_equal_the_batched_call_bit_for_bit():
    rng = _rng(2)
    x, w, b = _f32(rng, 64, 300), _f32(rng, 200, 300), _f32(rng, 200)
    assert np.array_equal(vmap(F.linear, (0, None, None))(x, w, b).numpy(),
                          F.linear(x, w, b).numpy())
    xs = _f32(rng, 6, 50, 300)          # per-example matrices: the batched call is a stack
    assert np.array_equal(vmap(F.linear, (0, None, None))(xs, w, b).numpy(),
                          F.linear(xs, w, b).numpy())
    assert np.array_equal(vmap(lambda v: w @ v, in_dims=1, out_dims=1)(x.t()).numpy(),
                          (w @ x.t()).numpy())
    a, m = _f32(rng, 8, 5, 30, 40), _f32(rng, 8, 5, 40, 20)
    assert np.array_equal(vmap(ag.bmm)(a, m).numpy(),
                          ag.bmm(a.reshape(40, 30, 40), m.reshape(40, 40, 20)).reshape(
                              8, 5, 30, 20).numpy())
    assert np.array_equal(vmap(lambda u: ag.einsum("ij,jk->ik", u, m[0, 0]))(a[0]).numpy(),
                          ag.einsum("bij,jk->bik", a[0], m[0, 0]).numpy())
    imgs = _f32(rng, 6, 4, 6, 9, 8)
    for wt, kw in [((5, 6, 3, 3), {"padding": 1}), ((6, 2, 3, 2), {"groups": 3, "stride": 2})]:
        wc = _f32(rng, *wt)
        got = vmap(lambda u: F.conv2d(u, wc, **kw))(imgs)
        want = F.conv2d(imgs.reshape(24, 6, 9, 8), wc, **kw)
        assert np.array_equal(got.numpy(), want.reshape(got.shape).numpy())
    wt = _f32(rng, 6, 2, 3, 3)
    got = vmap(lambda u: F.conv_transpose2d(u, wt, stride=2))(imgs)
    want = F.conv_transpose2d(imgs.reshape(24, 6, 9, 8), wt, stride=2)
    assert np.array_equal(got.numpy(), want.reshape(got.shape).numpy())
    sig = _f32(rng, 5, 2, 3, 11)
    w1 = _f32(rng, 4, 3, 3)
    assert np.array_equal(vmap(lambda u: F.conv1d(u, w1))(sig).numpy(),
                          F.conv1d(sig.reshape(10, 3, 11), w1).reshape(5, 2, 4, 9).numpy())


# ----------------------------------------------------------------- vmap vs torch.func.vmap
VMAP_CASES = [
    ("conv2d per-example weights", lambda F_, x, w: F_.conv2d(x, w, padding=1, groups=2),
     [(3, 2, 4, 5, 5), (3, 6, 2, 3, 3)], (0, 0)),
    ("conv2d batched on dim 1", lambda F_, x, w: F_.conv2d(x, w, stride=2),
     [(2, 4, 3, 6, 5), (5, 3, 2, 2)], (1, None)),
    ("conv_transpose2d weights only", lambda F_, x, w: F_.conv_transpose2d(x, w, stride=2),
     [(2, 3, 4, 4), (4, 3, 2, 3, 3)], (None, 0)),
    ("max_pool2d with indices", lambda F_, x: F_.max_pool2d(x, 3, 2, 1, return_indices=True),
     [(3, 2, 2, 7, 6)], (0,)),
    ("avg_pool1d", lambda F_, x: F_.avg_pool1d(x, 3, 2, 1, count_include_pad=False),
     [(2, 3, 9, 4)], (-1,)),
    ("adaptive_max_pool2d", lambda F_, x: F_.adaptive_max_pool2d(x, (3, 2), True),
     [(3, 2, 7, 5)], (0,)),
    ("interpolate bilinear", lambda F_, x: F_.interpolate(x, scale_factor=1.5, mode="bilinear"),
     [(2, 1, 3, 4, 5)], (0,)),
    ("pad reflect", lambda F_, x: F_.pad(x, (2, 1, 1, 2), mode="reflect"), [(2, 3, 4, 5)], (1,)),
    ("unfold", lambda F_, x: F_.unfold(x, 2, stride=2), [(3, 2, 2, 4, 6)], (0,)),
]


@pytest.mark.parametrize("name,fn,shapes,in_dims", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_matches_torch_vmap(torch, name, fn, shapes, in_dims):
    rng = _rng(3)
    arrays = [rng.standard_normal(s) for s in shapes]
    a_in, t_in = _both(torch, *arrays)
    got = vmap(lambda *a: fn(F, *a), in_dims=in_dims)(*a_in)
    want = torch.func.vmap(lambda *a: fn(torch.nn.functional, *a), in_dims=in_dims)(*t_in)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert_close(g, w, 1e-10, 1e-12, what=name)


# ----------------------------------------------------------------- jvp vs finite differences
FD_CASES = [
    ("conv2d", lambda x, w: F.conv2d(x, w, stride=(2, 1), padding="valid", dilation=(1, 2)),
     [(2, 3, 6, 7), (4, 3, 2, 3)]),
    ("conv_transpose1d", lambda x, w: F.conv_transpose1d(x, w, stride=3, output_padding=1),
     [(2, 4, 5), (4, 3, 3)]),
    ("conv3d", lambda x, w: F.conv3d(x, w, padding="same"), [(1, 2, 3, 4, 3), (2, 2, 2, 3, 2)]),
    ("max_pool2d", lambda x: F.max_pool2d(x, 2, ceil_mode=True), [(2, 2, 5, 5)]),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), [(2, 2, 6, 5)]),
    ("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (3, 4)), [(1, 2, 7, 6)]),
    ("interpolate", lambda x: F.interpolate(x, size=(5, 3), mode="bilinear", align_corners=True),
     [(1, 2, 3, 4)]),
    ("pad circular", lambda x: F.pad(x, (2, 1, 1, 0), mode="circular"), [(1, 2, 3, 4)]),
    ("fold", lambda x: F.fold(x, (4, 5), 2, padding=1), [(2, 8, 30)]),
    ("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), [(1, 8, 2, 3)]),
]


@pytest.mark.parametrize("name,fn,shapes", FD_CASES, ids=[c[0] for c in FD_CASES])
def test_jvp_matches_finite_differences(name, fn, shapes):
    rng = _rng(4)
    # distinct, well separated values keep the max of every window away from a tie
    primals = [ag.tensor(rng.permutation(math.prod(s)).reshape(s) / math.prod(s)
                         + rng.uniform(0, 1e-3, s)) for s in shapes]
    tangents = [ag.tensor(rng.standard_normal(s)) for s in shapes]
    _, tan = jvp(fn, tuple(primals), tuple(tangents))
    eps = 1e-6
    plus = fn(*(p + eps * t for p, t in zip(primals, tangents)))
    minus = fn(*(p - eps * t for p, t in zip(primals, tangents)))
    np.testing.assert_allclose(tan.numpy(), ((plus - minus) / (2 * eps)).numpy(), rtol=1e-6,
                               atol=1e-7)


def test_hessian_vector_product_of_a_conv_net_matches_torch(torch):
    rng = _rng(5)
    x, w1, w2 = (rng.standard_normal(s) for s in [(2, 2, 6, 6), (3, 2, 3, 3), (3, 2, 2, 2)])
    v1, v2 = rng.standard_normal(w1.shape), rng.standard_normal(w2.shape)

    def loss(lib, w1, w2, x):
        h = lib.tanh(lib.nn.functional.conv2d(x, w1, padding=1))
        h = lib.nn.functional.avg_pool2d(h, 2)
        return (lib.nn.functional.conv_transpose2d(h, w2, stride=2) ** 2).sum()

    # forward-over-reverse here, reverse-over-reverse in torch
    g = ag.func.grad(lambda a, b: loss(ag, a, b, ag.tensor(x)), argnums=(0, 1))
    got = jvp(g, (ag.tensor(w1), ag.tensor(w2)), (ag.tensor(v1), ag.tensor(v2)))[1]
    _, (tw1, tw2) = _both(torch, w1, w2, requires_grad=True)
    tg = torch.autograd.grad(loss(torch, tw1, tw2, torch.tensor(x)), (tw1, tw2), create_graph=True)
    want = torch.autograd.grad((tg[0] * torch.tensor(v1)).sum() + (tg[1] * torch.tensor(v2)).sum(),
                               (tw1, tw2))
    for a, t in zip(got, want):
        assert_close(a, t, 1e-9, 1e-10)


THREE_D = [
    ("conv_transpose3d", lambda F_, x, w: F_.conv_transpose3d(x, w, stride=(2, 1, 2), padding=1,
                                                              output_padding=(1, 0, 0), groups=2),
     [(1, 4, 3, 2, 3), (4, 1, 2, 3, 2)]),
    ("max_pool3d", lambda F_, x: F_.max_pool3d(x, 2, padding=1, ceil_mode=True,
                                               return_indices=True), [(1, 2, 3, 4, 5)]),
    ("avg_pool3d", lambda F_, x: F_.avg_pool3d(x, (2, 3, 2), stride=2, padding=1,
                                               count_include_pad=False), [(2, 3, 4, 5)]),
    ("adaptive_avg_pool3d", lambda F_, x: F_.adaptive_avg_pool3d(x, (2, 3, 2)), [(1, 2, 3, 5, 4)]),
    ("adaptive_max_pool3d", lambda F_, x: F_.adaptive_max_pool3d(x, (2, 3, 2), True),
     [(1, 2, 3, 5, 4)]),
    ("adaptive_max_pool1d", lambda F_, x: F_.adaptive_max_pool1d(x, 3, True), [(2, 3, 7)]),
    ("pixel_unshuffle", lambda F_, x: F_.pixel_unshuffle(x, 2), [(1, 2, 4, 6)]),
    ("interpolate trilinear", lambda F_, x: F_.interpolate(x, size=(3, 4, 2), mode="trilinear"),
     [(1, 2, 2, 3, 4)]),
    ("interpolate area", lambda F_, x: F_.interpolate(x, size=(3, 2), mode="area"),
     [(1, 2, 5, 4)]),
    ("interpolate nearest-exact", lambda F_, x: F_.interpolate(x, scale_factor=1.6,
                                                               mode="nearest-exact"),
     [(1, 2, 5)]),
]


@pytest.mark.parametrize("name,fn,shapes", THREE_D, ids=[c[0] for c in THREE_D])
def test_ops_outside_the_catalogue_match_torch(torch, name, fn, shapes):
    """Values and gradients of the 3-d variants and extra modes (the catalogue has the 2-d ones)."""
    rng = _rng(10)
    arrays = [rng.permutation(math.prod(s)).reshape(s) / math.prod(s) for s in shapes]
    a_in, t_in = _both(torch, *arrays, requires_grad=True)
    got, want = fn(F, *a_in), fn(torch.nn.functional, *t_in)
    if isinstance(want, tuple):
        assert_close(got[1], want[1])
        got, want = got[0], want[0]
    assert_close(got, want)
    g = rng.standard_normal(tuple(want.shape))
    for a, t in zip(ag.autograd.grad(got, a_in, ag.tensor(g)),
                    torch.autograd.grad(want, t_in, torch.tensor(g))):
        assert_close(a, t)


MAX_POOL_TIES = [
    ("tiles", dict(kernel_size=2)),                       # windows as a reshape view
    ("tiles, odd size", dict(kernel_size=2)),             # the last row/column dropped
    ("overlapping, padded", dict(kernel_size=3, stride=2, padding=1)),
    ("1-element windows", dict(kernel_size=1)),
]


@pytest.mark.parametrize("name,kw", MAX_POOL_TIES, ids=[c[0] for c in MAX_POOL_TIES])
def test_max_pool_ties_nans_and_infinite_cotangents_follow_torch(torch, name, kw):
    """Ties (zeros after a ReLU) give the whole gradient to the first maximum, a NaN wins over
    numbers (the last NaN), and a non-finite cotangent reaches only the chosen positions."""
    rng = _rng(11)
    size = 7 if "odd" in name else 6
    x = np.maximum(rng.standard_normal((2, 3, size, size)), 0)
    x[0, 0, :2, :2] = np.nan
    x[0, 1, 0, 0] = np.nan
    (a_x,), (t_x,) = _both(torch, x, requires_grad=True)
    got, gi = F.max_pool2d(a_x, return_indices=True, **kw)
    want, ti = torch.nn.functional.max_pool2d(t_x, return_indices=True, **kw)
    assert_close(got, want)
    np.testing.assert_array_equal(gi.numpy(), ti.numpy())
    g = rng.standard_normal(tuple(want.shape))
    g[1, 2, 0, 0], g[1, 2, 0, -1] = np.inf, np.nan
    assert_close(ag.autograd.grad(got, a_x, ag.tensor(g))[0],
                 torch.autograd.grad(want, t_x, torch.tensor(g))[0])


def test_max_pool_backward_runs_no_scatter_and_no_argmax(monkeypatch):
    """The cotangent of max pooling is a masked product per window offset: NumPy's scatter-add
    (ufunc.at) and argmax along a short strided axis were most of a small CNN's pooling time."""
    from arraygrad.backends import numpy_backend

    def refuse(*args, **kwargs):
        raise AssertionError("max pooling called a scatter-add")
    monkeypatch.setattr(numpy_backend, "index_add", refuse)
    calls = []
    argmax = np.argmax
    monkeypatch.setattr(np, "argmax", lambda *a, **k: calls.append(1) or argmax(*a, **k))
    for size in (8, 7):
        x = ag.tensor(_rng(12).standard_normal((2, 3, 8, size)), requires_grad=True)
        for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1)):
            ag.autograd.grad(F.max_pool2d(x, **kw).sum(), x)
    assert not calls


def test_same_padding_with_even_kernels_pads_more_on_the_right(torch):
    """torch's 'same': total d*(k-1), left total//2, the rest right (asymmetric for even k)."""
    rng = _rng(9)
    (x, w), (tx, tw) = _both(torch, rng.standard_normal((2, 3, 5, 6)),
                             rng.standard_normal((4, 3, 2, 4)), requires_grad=True)
    got = F.conv2d(x, w, padding="same", dilation=(1, 3))
    with warnings.catch_warnings():     # torch's note that it copies the input to pad it
        warnings.simplefilter("ignore")
        want = torch.nn.functional.conv2d(tx, tw, padding="same", dilation=(1, 3))
    assert_close(got, want)
    g = rng.standard_normal(tuple(want.shape))
    for a, t in zip(ag.autograd.grad(got, (x, w), ag.tensor(g)),
                    torch.autograd.grad(want, (tx, tw), torch.tensor(g))):
        assert_close(a, t)


# ----------------------------------------------------------------- nn modules
MODULES = [
    "Conv1d(2, 4, 3, padding='same', padding_mode='reflect')", "Conv2d(3, 4, 3)",
    "Conv2d(4, 6, (2, 3), stride=2, padding=1, dilation=(1, 2), groups=2, bias=False)",
    "Conv3d(2, 4, (1, 2, 3), groups=2, dilation=2)",
    "ConvTranspose1d(4, 2, 3, groups=2)",
    "ConvTranspose2d(3, 4, 3, stride=2, output_padding=1, bias=False)",
    "MaxPool1d(3, return_indices=True)", "MaxPool2d(2)", "MaxPool2d(3, 2, 1, ceil_mode=True)",
    "AvgPool1d(3)", "AvgPool2d(3, 1, 1)", "AvgPool2d(2, ceil_mode=True, count_include_pad=False)",
    "AdaptiveAvgPool1d(2)", "AdaptiveAvgPool2d((3, None))", "AdaptiveMaxPool2d(3)",
    "Fold(4, 2)", "Unfold(2)", "PixelShuffle(2)", "PixelUnshuffle(2)",
    "Upsample(scale_factor=2, mode='bilinear')", "Upsample(size=3)",
    "UpsamplingBilinear2d(scale_factor=2)", "UpsamplingNearest2d(size=(3, 4))",
    "ZeroPad2d(2)", "ConstantPad1d(2, 3.5)", "ConstantPad3d((1, 0, 2, 1, 0, 1), -1.0)",
    "ReflectionPad2d((1, 2, 3, 0))", "ReplicationPad1d(3)", "CircularPad2d(1)",
]

MODULE_INPUTS = {"Conv1d": (2, 2, 7), "Conv3d": (1, 2, 5, 5, 8), "ConvTranspose1d": (2, 4, 5),
                 "MaxPool1d": (2, 3, 8), "AvgPool1d": (3, 8), "AdaptiveAvgPool1d": (2, 3, 7),
                 "Fold": (2, 8, 9), "ConstantPad1d": (2, 3), "ReplicationPad1d": (2, 3, 4),
                 "ConstantPad3d": (1, 2, 3, 2, 2), "PixelShuffle": (2, 8, 3, 3)}


@pytest.mark.parametrize("spec", MODULES)
def test_module_matches_torch(torch, spec):
    """repr, parameter names and shapes, and the forward/backward with the same parameters."""
    a, t = eval("ag.nn." + spec).double(), eval("torch.nn." + spec).double()
    assert repr(a) == repr(t)
    assert [(n, tuple(p.shape)) for n, p in a.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    with torch.no_grad():
        for (_, pa), (_, pt) in zip(a.named_parameters(), t.named_parameters()):
            pt.copy_(torch.tensor(pa.detach().numpy()))
    shape = MODULE_INPUTS.get(spec.split("(")[0], (2, 4, 6, 6) if "(4," in spec else (2, 3, 6, 6))
    (xa,), (xt,) = _both(torch, _rng(6).standard_normal(shape), requires_grad=True)
    ya, yt = a(xa), t(xt)
    ya, yt = (ya[0], yt[0]) if isinstance(yt, tuple) else (ya, yt)
    assert_close(ya, yt, 1e-10, 1e-12)
    ya.sum().backward()
    yt.sum().backward()
    assert_close(xa.grad, xt.grad, 1e-10, 1e-12)
    for (n, pa), (_, pt) in zip(a.named_parameters(), t.named_parameters()):
        assert_close(pa.grad, pt.grad, 1e-10, 1e-12, what=n)


def test_conv_default_init_has_torchs_bounds():
    """kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)), the bias too."""
    ag.manual_seed(0)
    for m, fan_in in [(ag.nn.Conv2d(16, 32, 3), 16 * 9), (ag.nn.Conv1d(6, 4, 5, groups=2), 15),
                      (ag.nn.ConvTranspose2d(16, 8, 3), 8 * 9)]:
        bound = 1 / math.sqrt(fan_in)
        for p in (m.weight, m.bias):
            assert np.abs(p.detach().numpy()).max() <= bound + 1e-7
        # spread over the interval (uniform: std = bound / sqrt(3)), not a constant
        assert m.weight.detach().numpy().std() > 0.4 * bound
        assert m.weight.dtype == ag.float32 and m.weight.requires_grad and m.weight.is_leaf
    assert ag.nn.Conv2d(2, 2, 1, dtype=ag.float64).weight.dtype == ag.float64


def test_conv_transpose_output_size(torch):
    a, t = ag.nn.ConvTranspose2d(3, 2, 3, stride=2), torch.nn.ConvTranspose2d(3, 2, 3, stride=2)
    with torch.no_grad():
        t.weight.copy_(torch.tensor(a.weight.detach().numpy()))
        t.bias.copy_(torch.tensor(a.bias.detach().numpy()))
    (xa,), (xt,) = _both(torch, _rng(7).standard_normal((1, 3, 4, 4)).astype(np.float32))
    for size in [(9, 9), (10, 10), [1, 2, 10, 9]]:
        assert_close(a(xa, output_size=size), t(xt, output_size=size), 1e-6, 1e-6)
    with pytest.raises(ValueError):
        a(xa, output_size=(12, 12))
    with pytest.raises(ValueError):
        t(xt, output_size=(12, 12))


def test_small_cnn_trains_like_torch(torch):
    def net(nn):
        return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(4, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                             nn.Flatten(), nn.Linear(8, 3))
    a, t = net(ag.nn), net(torch.nn)
    a = a.double()
    t = t.double()
    with torch.no_grad():
        for (_, pa), (_, pt) in zip(a.named_parameters(), t.named_parameters()):
            pt.copy_(torch.tensor(pa.detach().numpy()))
    rng = _rng(8)
    x, y = rng.standard_normal((8, 3, 8, 8)), rng.integers(0, 3, 8)
    oa, ot = ag.optim.SGD(a.parameters(), lr=0.1, momentum=0.9), \
        torch.optim.SGD(t.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(5):
        la = F.cross_entropy(a(ag.tensor(x)), ag.tensor(y))
        lt = torch.nn.functional.cross_entropy(t(torch.tensor(x)), torch.tensor(y))
        for o, loss in ((oa, la), (ot, lt)):
            o.zero_grad()
            loss.backward()
            o.step()
        losses.append((la.item(), lt.item()))
    np.testing.assert_allclose(*zip(*losses), rtol=1e-10)
    assert losses[-1][0] < losses[0][0]


# ----------------------------------------------------------------- errors
ERROR_CASES = [
    ("channels", lambda L, x: L.nn.functional.conv2d(x, L.zeros(2, 4, 3, 3, dtype=L.float64))),
    ("groups", lambda L, x: L.nn.functional.conv2d(x, L.zeros(3, 1, 1, 1, dtype=L.float64),
                                                   groups=2)),
    ("kernel too big", lambda L, x: L.nn.functional.conv2d(x, L.zeros(1, 3, 7, 1,
                                                                      dtype=L.float64))),
    ("same strided", lambda L, x: L.nn.functional.conv2d(x, L.zeros(1, 3, 3, 3, dtype=L.float64),
                                                         stride=2, padding="same")),
    ("bad padding string", lambda L, x: L.nn.functional.conv2d(
        x, L.zeros(1, 3, 3, 3, dtype=L.float64), padding="full")),
    ("weight rank", lambda L, x: L.nn.functional.conv2d(x, L.zeros(1, 3, 3, dtype=L.float64))),
    ("input rank", lambda L, x: L.nn.functional.conv2d(x[0, 0], L.zeros(1, 3, 3, 3,
                                                                         dtype=L.float64))),
    ("weight dtype", lambda L, x: L.nn.functional.conv2d(x, L.zeros(1, 3, 3, 3))),
    ("bias shape", lambda L, x: L.nn.functional.conv2d(x, L.zeros(2, 3, 3, 3, dtype=L.float64),
                                                       L.zeros(3, dtype=L.float64))),
    ("output padding", lambda L, x: L.nn.functional.conv_transpose2d(
        x, L.zeros(3, 1, 3, 3, dtype=L.float64), stride=2, output_padding=2)),
    ("pool pad", lambda L, x: L.nn.functional.max_pool2d(x, 3, padding=2)),
    ("avg pool pad", lambda L, x: L.nn.functional.avg_pool2d(x, 2, padding=2)),
    ("pool too small", lambda L, x: L.nn.functional.max_pool2d(x, 6)),
    ("pad odd", lambda L, x: L.nn.functional.pad(x, (1, 1, 1))),
    ("reflect too wide", lambda L, x: L.nn.functional.pad(x, (5, 5), mode="reflect")),
    ("reflect rank", lambda L, x: L.nn.functional.pad(x, (1, 1), mode="reflect")),
    ("reflect value", lambda L, x: L.nn.functional.pad(x, (1, 1, 1, 1), mode="reflect",
                                                       value=1.0)),
    ("size and scale", lambda L, x: L.nn.functional.interpolate(x, size=3, scale_factor=2)),
    ("neither size nor scale", lambda L, x: L.nn.functional.interpolate(x)),
    ("align nearest", lambda L, x: L.nn.functional.interpolate(x, scale_factor=2,
                                                               align_corners=True)),
    ("bilinear rank", lambda L, x: L.nn.functional.interpolate(x[0], scale_factor=2,
                                                               mode="bilinear")),
    ("pixel_shuffle channels", lambda L, x: L.nn.functional.pixel_shuffle(x, 2)),
    ("pixel_shuffle rank", lambda L, x: L.nn.functional.pixel_shuffle(x[0, 0], 2)),
    ("unfold rank", lambda L, x: L.nn.functional.unfold(x[0, 0], 2)),
    ("fold blocks", lambda L, x: L.nn.functional.fold(x.reshape(2, 12, 5), (4, 4), 2)),
    ("module groups", lambda L, x: L.nn.Conv2d(3, 4, 3, groups=2)),
    ("module padding mode", lambda L, x: L.nn.Conv2d(3, 4, 3, padding_mode="mirror")),
    ("module same strided", lambda L, x: L.nn.Conv2d(3, 4, 3, stride=2, padding="same")),
]


@pytest.mark.parametrize("name,fn", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_have_torchs_types(torch, name, fn):
    x = np.zeros((2, 3, 5, 4))
    with pytest.raises(Exception) as want:
        fn(torch, torch.tensor(x))
    with pytest.raises(want.type) as got:
        fn(ag, ag.tensor(x))
    assert str(got.value)
