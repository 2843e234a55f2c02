"""nn.functional beyond the op catalogue (tests/op_db.py covers values, gradients, jvp and vmap
of every op): randomness (dropout under vmap), running statistics, in-place forms, extreme
values without NumPy warnings, errors as torch's, and second derivatives torch lacks checked
against finite differences."""
import tracemalloc
import warnings

import numpy as np
import pytest

import arraygrad as ag
import arraygrad.nn.functional as F
from arraygrad.autograd import gradgradcheck
from arraygrad.func import jvp, vmap
from conftest import assert_close

R = np.random.default_rng(7)


def _t(*shape, low=-2.0, high=2.0, grad=True):
    return ag.tensor(R.uniform(low, high, shape), requires_grad=grad)


# ----------------------------------------------------------------- dropout and randomness
def test_dropout_scales_kept_entries_and_drops_with_probability_p():
    ag.manual_seed(0)
    x = ag.ones(10000, dtype=ag.float64)
    y = F.dropout(x, 0.3).numpy()
    assert np.allclose(np.unique(y), [0.0, 1 / 0.7])
    assert abs((y == 0).mean() - 0.3) < 0.02
    assert F.dropout(x, 0.3, training=False) is x and F.dropout(x, 0.0) is x
    assert not F.dropout(x, 1.0).numpy().any()
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got"):
        F.dropout(x, -0.1)


def test_dropout_gradient_is_the_mask():
    x = _t(200)
    y = F.dropout(x, 0.5)
    g, = ag.autograd.grad(y.sum(), x)
    assert np.array_equal(g.numpy(), (y.detach().numpy() != 0) * 2.0)


def test_feature_dropout_drops_whole_channels():
    y = F.dropout2d(ag.ones(64, 4, 3, 3), 0.5).numpy().reshape(256, 9)
    assert (y.std(1) == 0).all() and 0 < (y[:, 0] == 0).mean() < 1
    y = F.dropout1d(ag.ones(64, 4, 5), 0.5).numpy().reshape(256, 5)
    assert (y.std(1) == 0).all()
    y = F.dropout3d(ag.ones(4, 2, 2, 2), 0.5).numpy().reshape(4, 8)     # unbatched (C, D, H, W)
    assert (y.std(1) == 0).all()
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(ag.ones(2, 3, 4, 5))


def test_dropout2d_3d_input_warns_like_torch(torch):
    with pytest.warns(UserWarning) as a:
        F.dropout2d(ag.ones(2, 3, 4))
    with pytest.warns(UserWarning) as t:
        torch.nn.functional.dropout2d(torch.ones(2, 3, 4))
    assert str(a[0].message) == str(t[0].message)


def test_alpha_dropout_keeps_zero_mean_unit_variance():
    ag.manual_seed(1)
    x = ag.randn(200000, dtype=ag.float64)
    y = F.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(y.mean()) < 0.01 and abs(y.std() - 1) < 0.01
    assert F.alpha_dropout(x, 0.2) is x                 # training=False by default, as torch
    y = F.feature_alpha_dropout(ag.randn(500, 8, 16), 0.3, training=True).numpy()
    low = y.reshape(4000, 16)
    kept = ~np.isclose(low, low[:, :1]).all(1)          # a dropped channel is one constant
    assert 0.6 < kept.mean() < 0.8


def test_dropout_under_vmap_honours_randomness():
    x = ag.ones(5, 1000)
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(lambda v: F.dropout(v, 0.5))(x)
    diff = vmap(lambda v: F.dropout(v, 0.5), randomness="different")(x).numpy()
    assert not (diff[0] == diff[1]).all()
    same = vmap(lambda v: F.dropout(v, 0.5), randomness="same")(x).numpy()
    assert (same == same[0]).all()
    chans = vmap(lambda v: F.dropout2d(v, 0.5), randomness="different")(ag.ones(3, 8, 4, 2, 2))
    assert (chans.numpy().reshape(96, 4).std(1) == 0).all()


def test_rrelu_training_slopes_are_uniform_in_bounds():
    x = -ag.ones(20000, dtype=ag.float64)
    y = -F.rrelu(x, 0.1, 0.3, training=True).numpy()
    assert 0.1 <= y.min() and y.max() <= 0.3 and abs(y.mean() - 0.2) < 0.005
    assert np.allclose(F.rrelu(x, 0.1, 0.3).numpy(), -0.2)


def test_sdpa_dropout_averages_to_the_undropped_attention():
    ag.manual_seed(2)
    q, k, v = (ag.tensor(R.standard_normal(s)) for s in ((3, 4), (5, 4), (5, 2)))
    n = 4000
    expand = [t.expand(n, *t.shape) for t in (q, k, v)]
    dropped = F.scaled_dot_product_attention(*expand, dropout_p=0.4).numpy()
    full = F.scaled_dot_product_attention(q, k, v).numpy()
    assert not np.allclose(dropped[0], full)
    np.testing.assert_allclose(dropped.mean(0), full, atol=0.08)


# ----------------------------------------------------------------- state and in-place forms
def test_batch_norm_updates_running_stats_like_torch(torch):
    x = R.standard_normal((6, 3, 4)) * 2 + 1
    stats = []
    for lib in (ag, torch):
        rm, rv = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        out = lib.nn.functional.batch_norm(lib.tensor(x), rm, rv, training=True, momentum=0.2)
        lib.nn.functional.instance_norm(lib.tensor(x), rm, rv, momentum=0.5)
        stats.append((out, rm, rv))
    for a, t in zip(*stats):
        assert_close(a, t)
    with pytest.raises(RuntimeError, match="running_mean"):
        F.batch_norm(ag.tensor(x), None, None, training=False)


def test_inplace_activations_modify_their_input(torch):
    for name, args in [("relu6", ()), ("elu", (0.5,)), ("leaky_relu", (0.1,)),
                       ("hardtanh", (-0.5, 0.5)), ("silu", ()), ("threshold", (0.2, -1.0)),
                       ("hardswish", ())]:
        x = R.uniform(-4, 4, (3, 4))
        a, t = ag.tensor(x), torch.tensor(x)
        out = getattr(F, name)(a, *args, inplace=True)
        getattr(torch.nn.functional, name)(t, *args, inplace=True)
        assert out is a
        assert_close(a, t, what=name)


def test_embedding_max_norm_renormalises_used_rows_in_place(torch):
    w = R.standard_normal((6, 3)) * 2
    idx = np.array([[0, 4], [4, 1]])
    res = []
    for lib in (ag, torch):
        weight = lib.tensor(w.copy(), requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor(idx), weight, max_norm=1.5, norm_type=1.0)
        g, = lib.autograd.grad(out.sum(), weight)
        res.append((out, weight, g))
    for a, t in zip(*res):
        assert_close(a, t)


def test_embedding_scale_grad_by_freq_matches_torch(torch):
    w, idx = R.standard_normal((5, 2)), np.array([[0, 3, 3], [3, 1, 0]])
    grads = []
    for lib in (ag, torch):
        weight = lib.tensor(w, requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor(idx), weight, scale_grad_by_freq=True)
        grads.append(lib.autograd.grad((out * lib.tensor(np.arange(12.0).reshape(2, 3, 2))).sum(),
                                       weight)[0])
    assert_close(*grads)


def test_linear_adds_the_bias_in_place_and_gives_the_weight_grad_in_its_layout():
    """NOTE [linear]: the forward allocates only the output (the bias goes into the product),
    and the weight's gradient is computed in the weight's (out, in) layout: its own C-ordered
    array, not a transposed view that `.grad` would copy."""
    x = _t(1024, 64, grad=False)
    w, b = _t(128, 64), _t(128)
    tracemalloc.start()
    y = F.linear(x, w, b)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1.5 * y.numel() * 8    # (and NumPy's 64 KiB broadcasting buffer)
    for create_graph in (False, True):      # the array-level rule and the composite one
        gw, gb = ag.autograd.grad(y, (w, b), ag.ones_like(y), retain_graph=True,
                                  create_graph=create_graph)
        a = gw.detach().numpy()
        assert a.flags.c_contiguous and gw.shape == w.shape
        assert_close(gw, ag.ones(1024, 128, dtype=ag.float64).T @ x)
        assert_close(gb, ag.full((128,), 1024.0, dtype=ag.float64))


# ----------------------------------------------------------------- extreme values
def test_extreme_inputs_give_torch_values_without_numpy_warnings(torch):
    x = np.array([-1000.0, -50.0, -1.0, 0.0, 1.0, 50.0, 1000.0])
    p = np.array([0.0, 1e-300, 0.5, 1.0 - 1e-16, 1.0, 0.3, 0.7])
    cases = [("softplus", lambda F_, v: F_.softplus(v)),
             ("logsigmoid", lambda F_, v: F_.logsigmoid(v)),
             ("elu", lambda F_, v: F_.elu(v)), ("selu", lambda F_, v: F_.selu(v)),
             ("celu", lambda F_, v: F_.celu(v, 0.5)), ("mish", lambda F_, v: F_.mish(v)),
             ("silu", lambda F_, v: F_.silu(v)), ("gelu", lambda F_, v: F_.gelu(v)),
             ("bce_logits", lambda F_, v: F_.binary_cross_entropy_with_logits(
                 v, v.new_tensor([0.0, 1.0, 0.5, 0.0, 1.0, 0.2, 0.0]), reduction="none"))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name, fn in cases:
            a, t = ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
            ya, yt = fn(F, a), fn(torch.nn.functional, t)
            assert_close(ya, yt, what=name)
            assert_close(ag.autograd.grad(ya.sum(), a)[0], torch.autograd.grad(yt.sum(), t)[0],
                         what=f"{name} grad")
        a, t = ag.tensor(p), torch.tensor(p)
        tgt = np.array([1.0, 0.0, 0.5, 1.0, 0.0, 1.0, 0.0])
        assert_close(F.binary_cross_entropy(a, ag.tensor(tgt), reduction="none"),
                     torch.nn.functional.binary_cross_entropy(t, torch.tensor(tgt),
                                                              reduction="none"))
        # torch's soft_margin_loss overflows to inf at -1000; log(1 + e^1000) is 1000
        assert F.soft_margin_loss(ag.tensor(x), ag.ones(7), reduction="none")[0].item() == 1000
        q = ag.zeros(2, 3, 4)
        out = F.scaled_dot_product_attention(q, q, q, attn_mask=ag.zeros(3, 3, dtype=ag.bool))
        assert not out.numpy().any()                    # a fully masked row gives zeros


# ----------------------------------------------------------------- second derivatives
def test_second_derivatives_torch_lacks_vs_finite_differences():
    idx, off = ag.tensor([1, 2, 4, 5, 4, 3, 2, 0]), ag.tensor([0, 2, 2, 5])
    cases = [
        (lambda a, b: ag.cdist(a, b), (_t(4, 3), _t(5, 3))),
        (lambda a, b: ag.cdist(a, b, p=3.0), (_t(4, 3), _t(5, 3))),
        (lambda w: F.embedding_bag(idx, w, off, mode="mean"), (_t(6, 3),)),
        (lambda w, p: F.embedding_bag(idx, w, off, mode="sum", per_sample_weights=p),
         (_t(6, 3), _t(8))),
        (lambda x: F.multi_margin_loss(x, ag.tensor([0, 2, 1]), p=2, margin=3.0), (_t(3, 4),)),
        (lambda x: F.multilabel_margin_loss(x, ag.tensor([[2, 0, -1], [1, 2, 0]])), (_t(2, 3),)),
        (lambda x: F.pdist(x, 3.0), (_t(4, 3),)),
    ]
    for fn, inputs in cases:
        assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("name", ["layer_norm", "batch_norm", "instance_norm", "group_norm"])
def test_norm_forward_over_forward_vs_finite_differences(name):
    """torch's jvp-of-jvp through its fused norm kernels is wrong; ours matches differences."""
    x = R.standard_normal((3, 4, 5))
    t = R.standard_normal((3, 4, 5))
    fn = {"layer_norm": lambda v: F.layer_norm(v, (5,)),
          "batch_norm": lambda v: F.batch_norm(v, None, None, training=True),
          "instance_norm": lambda v: F.instance_norm(v),
          "group_norm": lambda v: F.group_norm(v, 2)}[name]

    def first(v):
        return jvp(fn, (v,), (ag.tensor(t),))[1]
    second = jvp(first, (ag.tensor(x),), (ag.tensor(t),))[1].numpy()
    eps = 1e-5
    fd = (first(ag.tensor(x + eps * t)).numpy() - first(ag.tensor(x - eps * t)).numpy()) / (2 * eps)
    np.testing.assert_allclose(second, fd, rtol=1e-5, atol=1e-6)


def test_per_example_gradients_through_norm_and_losses(torch):
    """vmap(grad) of a small model with layer_norm, gelu, dropout-free attention and a loss."""
    w = R.standard_normal((4, 3))
    xs, ys = R.standard_normal((6, 5, 4)), R.integers(0, 3, (6, 5))

    def loss(lib, w, x, y):
        F_ = lib.nn.functional
        h = F_.layer_norm(x, (4,))
        h = F_.scaled_dot_product_attention(h, h, h, is_causal=True)
        return F_.cross_entropy(F_.gelu(h @ w), y, label_smoothing=0.1)
    a = vmap(ag.func.grad(lambda w, x, y: loss(ag, w, x, y)), in_dims=(None, 0, 0))(
        ag.tensor(w), ag.tensor(xs), ag.tensor(ys))
    t = torch.func.vmap(torch.func.grad(lambda w, x, y: loss(torch, w, x, y)),
                        in_dims=(None, 0, 0))(torch.tensor(w), torch.tensor(xs), torch.tensor(ys))
    assert_close(a, t)


# ----------------------------------------------------------------- errors as torch's
def _same_error(torch, fn, *arrays):
    with pytest.raises(Exception) as ea:
        fn(ag, *(ag.tensor(a) for a in arrays))
    with pytest.raises(Exception) as et:
        fn(torch, *(torch.tensor(a) for a in arrays))
    assert type(ea.value) is type(et.value), (ea.value, et.value)
    return str(ea.value), str(et.value)


ERRORS = [
    ("gelu_approx", lambda L, x: L.nn.functional.gelu(x, approximate="fast"), [np.zeros(3)]),
    ("glu_odd", lambda L, x: L.nn.functional.glu(x, 1), [np.zeros((2, 3))]),
    ("bce_range", lambda L, x: L.nn.functional.binary_cross_entropy(x, x * 0),
     [np.array([0.5, 1.5])]),
    ("bce_size", lambda L, x, y: L.nn.functional.binary_cross_entropy(x, y),
     [np.full((2, 3), 0.5), np.full((3,), 0.5)]),
    ("kl_reduction", lambda L, x: L.nn.functional.kl_div(x, x, reduction="avg"), [np.zeros(3)]),
    ("gauss_neg_var", lambda L, x: L.nn.functional.gaussian_nll_loss(x, x, -x - 1),
     [np.zeros(3)]),
    ("gauss_var_size", lambda L, x, v: L.nn.functional.gaussian_nll_loss(x, x, v),
     [np.zeros((2, 3)), np.ones((3, 2))]),
    ("layer_norm_shape", lambda L, x: L.nn.functional.layer_norm(x, (4,)),
     [np.zeros((2, 3))]),
    ("group_norm_groups", lambda L, x: L.nn.functional.group_norm(x, 2), [np.zeros((2, 3, 4))]),
    ("bn_one_value", lambda L, x: L.nn.functional.batch_norm(x, None, None, training=True),
     [np.zeros((1, 3))]),
    ("embedding_range", lambda L, w, i: L.nn.functional.embedding(i, w),
     [np.zeros((3, 2)), np.array([0, 3])]),
    ("embedding_float_index", lambda L, w, i: L.nn.functional.embedding(i, w),
     [np.zeros((3, 2)), np.array([0.0, 1.0])]),
    ("bag_offsets0", lambda L, w, i, o: L.nn.functional.embedding_bag(i, w, o),
     [np.zeros((3, 2)), np.array([0, 1, 2]), np.array([1, 2])]),
    ("bag_psw_mode", lambda L, w, i, p: L.nn.functional.embedding_bag(
        i, w, mode="mean", per_sample_weights=p), [np.zeros((3, 2)), np.array([[0, 1]]),
                                                   np.ones((1, 2))]),
    ("bag_max_freq", lambda L, w, i: L.nn.functional.embedding_bag(
        i, w, mode="max", scale_grad_by_freq=True), [np.zeros((3, 2)), np.array([[0, 1]])]),
    ("sdpa_causal_mask", lambda L, q, m: L.nn.functional.scaled_dot_product_attention(
        q, q, q, attn_mask=m, is_causal=True), [np.zeros((2, 3)), np.ones((2, 2), bool)]),
    ("cdist_cols", lambda L, a, b: L.cdist(a, b), [np.zeros((2, 3)), np.zeros((2, 4))]),
    ("prelu_channels", lambda L, x, w: L.nn.functional.prelu(x, w),
     [np.zeros((2, 3)), np.ones(4)]),
    ("margin_dims", lambda L, a, b: L.nn.functional.margin_ranking_loss(a, b, b),
     [np.zeros(3), np.zeros((1, 3))]),
    ("softshrink_neg", lambda L, x: L.nn.functional.softshrink(x, -1.0), [np.zeros(3)]),
    ("dropout_p", lambda L, x: L.nn.functional.dropout(x, 2.0), [np.zeros(3)]),
]


@pytest.mark.parametrize("name,fn,arrays", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_have_torchs_type(torch, name, fn, arrays):
    _same_error(torch, fn, *arrays)


def test_kl_div_mean_warns_like_torch(torch):
    with pytest.warns(UserWarning) as a:
        F.kl_div(ag.zeros(2), ag.zeros(2))
    with pytest.warns(UserWarning) as t:
        torch.nn.functional.kl_div(torch.zeros(2), torch.zeros(2))
    assert str(a[0].message) == str(t[0].message)


def test_top_level_names():
    for name in ("cdist", "pdist", "pairwise_distance", "cosine_similarity", "bilinear", "selu",
                 "celu", "rrelu", "prelu", "hardshrink"):
        assert getattr(ag, name) is getattr(F, name)


def test_running_stats_update_inside_grad_transforms(torch):
    """torch updates batch_norm's buffers with the unwrapped statistics inside func.grad and
    jacrev; under vmap an unbatched buffer cannot take batched statistics."""
    x, w = R.standard_normal((8, 3, 4)), R.standard_normal(3)
    res = []
    for lib in (ag, torch):
        rm, rv = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)

        def f(w, x, lib=lib, rm=rm, rv=rv):
            return lib.nn.functional.batch_norm(x, rm, rv, w, None, True, 0.3).pow(3).sum()
        g = lib.func.grad(f)(lib.tensor(w), lib.tensor(x))
        h = lib.func.jacrev(lib.func.grad(f))(lib.tensor(w), lib.tensor(x))
        res.append((g, h, rm, rv))
    for a, t in zip(*res):
        assert_close(a, t)
    with pytest.raises(RuntimeError, match="vmap"):
        vmap(lambda v: F.batch_norm(v, ag.zeros(3), ag.ones(3), training=True))(ag.ones(2, 4, 3))


# ----------------------------------------------------------------- ctc
def _ctc(lib, lp, targets, il, tl, **kw):
    x = lib.tensor(lp, requires_grad=True)
    conv = (lambda v: lib.tensor(v) if isinstance(v, np.ndarray) else v)
    loss = lib.nn.functional.ctc_loss(x.log_softmax(-1), conv(targets), conv(il), conv(tl), **kw)
    cot = lib.tensor(np.linspace(0.5, 1.5, loss.numel()).reshape(tuple(loss.shape)))
    return loss, lib.autograd.grad(loss, x, cot)[0]


def test_ctc_loss_matches_torch(torch):
    lp = R.standard_normal((7, 4, 5))
    tg = np.array([[1, 2, 2], [3, 3, 1], [4, 1, 2], [1, 1, 1]])
    il, tl = np.array([7, 6, 5, 7]), np.array([3, 2, 3, 0])
    flat = np.concatenate([tg[i, :tl[i]] for i in range(4)])
    cases = [(tg, il, tl, {}), (tg, il, tl, {"reduction": "sum"}),
             (np.where(tg == 2, 0, tg), il, tl, {"blank": 2, "reduction": "none"}),
             (flat, il, tl, {}), (tg, tuple(il), tuple(tl), {}),
             (tg, np.array([2, 6, 5, 7]), tl, {"reduction": "none", "zero_infinity": True})]
    for targets, i, t, kw in cases:
        (la, ga), (lt, gt) = _ctc(ag, lp, targets, i, t, **kw), _ctc(torch, lp, targets, i, t, **kw)
        assert_close(la, lt, what=f"{kw} loss: ")
        assert_close(ga, gt, what=f"{kw} grad: ")
    la, _ = _ctc(ag, lp, tg, np.array([2, 6, 5, 7]), tl, reduction="none")
    assert np.isinf(la.detach().numpy()[0])             # no alignment fits: inf, as torch
    (la, ga), (lt, gt) = (_ctc(lib, lp[:, 0], tg[0], np.array(7), np.array(3))
                          for lib in (ag, torch))        # unbatched
    assert_close(la, lt)
    assert_close(ga, gt)


def test_ctc_second_derivative_and_module():
    lp = _t(4, 2, 3)
    tg, il, tl = ag.tensor([[1, 2], [2, 0]]), ag.tensor([4, 3]), ag.tensor([2, 1])
    assert gradgradcheck(lambda x: F.ctc_loss(x.log_softmax(-1), tg, il, tl), (lp,))
    mod = ag.nn.CTCLoss(blank=0, reduction="sum")
    assert np.isclose(mod(lp.log_softmax(-1), tg, il, tl).item(),
                      F.ctc_loss(lp.log_softmax(-1), tg, il, tl, reduction="sum").item())


def test_padded_embedding_under_transforms(torch):
    """The padded lookup is a custom Function: per-example gradients, second derivatives and
    forward-over-reverse as torch's (the padding row gets no gradient)."""
    w, idx = R.standard_normal((6, 3)), np.array([[0, 2, 5], [2, 2, 1], [1, 4, 4]])
    res = []
    for lib in (ag, torch):
        def f(w, i, lib=lib):
            return (lib.nn.functional.embedding(i, w, padding_idx=2) ** 2).sum()
        g = lib.func.vmap(lib.func.grad(f), in_dims=(None, 0))(lib.tensor(w), lib.tensor(idx))
        h = lib.func.jacrev(lib.func.grad(f))(lib.tensor(w), lib.tensor(idx[0]))
        with warnings.catch_warnings():     # torch's forward-over-reverse here uses torch.jit
            warnings.simplefilter("ignore", DeprecationWarning)
            j = lib.func.jvp(lambda v, lib=lib, f=f: lib.func.grad(f)(v, lib.tensor(idx[1])),
                             (lib.tensor(w),), (lib.tensor(np.ones_like(w)),))[1]
        res.append((g, h, j))
    for a, t in zip(*res):
        assert_close(a, t)
    assert not res[0][0].numpy()[:, 2].any()


# ----------------------------------------------------------------- losses
@pytest.mark.parametrize("ignore_index", [-100, 2, 7])
def test_cross_entropy_ignores_targets_equal_to_ignore_index(torch, ignore_index):
    """Ignored targets, inside the class range or not, add nothing and do not count in the mean
    (values and gradients as torch's), per-sample under vmap(grad) as well."""
    x0 = R.standard_normal((6, 4))
    t0 = np.array([0, 2, 3, ignore_index, 1, ignore_index])
    x, t = ag.tensor(x0, requires_grad=True), ag.tensor(t0)
    tx, tt = torch.tensor(x0, requires_grad=True), torch.tensor(t0)
    for reduction in ("mean", "sum", "none"):
        ours = F.cross_entropy(x, t, ignore_index=ignore_index, reduction=reduction)
        ref = torch.nn.functional.cross_entropy(tx, tt, ignore_index=ignore_index,
                                                reduction=reduction)
        assert_close(ours, ref)
        g, = ag.autograd.grad(ours.sum(), x)
        assert_close(g, torch.autograd.grad(ref.sum(), tx)[0])
    keep = t0 != ignore_index
    per_sample = vmap(ag.func.grad(lambda xi, ti: F.cross_entropy(
        xi.unsqueeze(0), ti.unsqueeze(0), ignore_index=ignore_index)))(x.detach()[keep], t[keep])
    ref = torch.func.vmap(torch.func.grad(lambda xi, ti: torch.nn.functional.cross_entropy(
        xi.unsqueeze(0), ti.unsqueeze(0), ignore_index=ignore_index)))(tx.detach()[keep], tt[keep])
    assert_close(per_sample, ref)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("ignore_index", [-100, 1])
def test_fused_cross_entropy_is_the_composite_in_one_node(dtype, ignore_index):
    """cross_entropy of (N, C) and class indices is one node (NOTE [fused cross-entropy]):
    the composite's loss bit for bit, the same gradient with and without a graph being built,
    and torch's error for a target out of range."""
    x0 = R.standard_normal((7, 5)).astype(dtype)
    t = ag.tensor(np.array([0, 4, 1, 1, 3, 2, 0]))
    for reduction in ("mean", "sum", "none"):
        x = ag.tensor(x0, requires_grad=True)
        loss = F.cross_entropy(x, t, reduction=reduction, ignore_index=ignore_index)
        assert loss.grad_fn.name() == "NllLossBackward0"
        assert loss.grad_fn.next_functions[0][0] is x.grad_fn or \
            loss.grad_fn.next_functions[0][0].variable is x
        composite = F.nll_loss(F.log_softmax(x, 1), t, reduction=reduction,
                               ignore_index=ignore_index)
        np.testing.assert_array_equal(loss.detach().numpy(), composite.detach().numpy())
        g = ag.tensor(R.standard_normal(tuple(loss.shape)).astype(dtype))
        on_arrays, = ag.autograd.grad(loss, x, g, retain_graph=True)
        with_graph, = ag.autograd.grad(loss, x, g, create_graph=True)
        np.testing.assert_array_equal(on_arrays.numpy(), with_graph.detach().numpy())
        assert_close(on_arrays, ag.autograd.grad(composite, x, g)[0],
                     rtol=1e-5 if dtype == "float32" else 1e-12)
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        F.cross_entropy(x, ag.tensor(np.array([0, 5, 1, 1, 3, 2, 0])))


@pytest.mark.parametrize("ignore_index", [-100, 1])
def test_cross_entropy_second_derivatives_match_torch(torch, ignore_index):
    """The fused gradient's own rules (NOTE [fused cross-entropy]): double backward into the
    input and the cotangent, Hessians (forward over reverse), jvp of the gradient, jacrev of
    per-row losses (a batched cotangent) and per-example Hessians under vmap, as torch's."""
    tf, tfunc = torch.nn.functional, torch.func
    x0, v0 = R.standard_normal((6, 4)), R.standard_normal((6, 4))
    t0 = np.array([0, 2, 3, ignore_index if ignore_index < 0 else 1, 1, 2])   # ignored rows
    t, tt = ag.tensor(t0), torch.tensor(t0)
    for reduction in ("mean", "sum", "none"):
        def ours(x):
            return F.cross_entropy(x, t, reduction=reduction, ignore_index=ignore_index)

        def ref(x):
            return tf.cross_entropy(x, tt, reduction=reduction, ignore_index=ignore_index)
        x = ag.tensor(x0, requires_grad=True)
        tx = torch.tensor(x0, requires_grad=True)
        shape = (6,) if reduction == "none" else ()
        g0 = R.standard_normal(shape)
        g, tg = ag.tensor(g0, requires_grad=True), torch.tensor(g0, requires_grad=True)
        gx, = ag.autograd.grad(ours(x), x, g, create_graph=True)
        tgx, = torch.autograd.grad(ref(tx), tx, tg, create_graph=True)
        assert gx.grad_fn.name() == tgx.grad_fn.name()
        assert_close(gx, tgx)
        v = ag.tensor(v0)
        for a, b in zip(ag.autograd.grad((gx * v).sum(), (x, g)),
                        torch.autograd.grad((tgx * torch.tensor(v0)).sum(), (tx, tg))):
            assert_close(a, b)
        xd, txd = ag.tensor(x0), torch.tensor(x0)
        if reduction == "none":
            assert_close(ag.func.jacrev(ours)(xd), tfunc.jacrev(ref)(txd))
            continue
        assert_close(ag.func.hessian(ours)(xd), tfunc.hessian(ref)(txd))
        assert_close(ag.func.jvp(ag.func.grad(ours), (xd,), (v,))[1],
                     tfunc.jvp(tfunc.grad(ref), (txd,), (torch.tensor(v0),))[1])
        xs = ag.tensor(R.standard_normal((3, 6, 4)))
        assert_close(vmap(ag.func.hessian(ours))(xs),
                     tfunc.vmap(tfunc.hessian(ref))(torch.tensor(xs.numpy())))


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("p", [1, 2, 3, 1.5, float("inf"), -float("inf")])
def test_lp_pool_matches_torch(torch, nd, p):
    """Power-average pooling and its module, values and gradients (nan where torch has nan:
    a fractional power of a negative input)."""
    x0 = np.random.default_rng(nd).standard_normal((2, 3) + (7, 6, 5)[:nd])
    kernel, stride = (2 if nd == 1 else (2, 3, 2)[:nd]), 2     # torch takes an int in 1-d
    results = []
    for lib in (torch, ag):
        x = lib.tensor(x0, requires_grad=True)
        pool = getattr(lib.nn, f"LPPool{nd}d")(p, kernel, stride=stride, ceil_mode=nd == 2)
        y = pool(x)
        y.backward(lib.ones_like(y))
        f = getattr(lib.nn.functional, f"lp_pool{nd}d")(x.detach(), p, kernel)
        results.append((y.detach().numpy(), x.grad.numpy(), f.numpy(), repr(pool)))
    (ty, tg, tf, tr), (ay, agr, af, ar) = results
    np.testing.assert_allclose(ay, ty, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(agr, tg, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(af, tf, rtol=1e-12, atol=1e-12)
    assert ar == tr


def test_torch_aliases_match(torch):
    """F's in-place activations, the pools' *_with_indices forms, the deprecated upsample
    spellings (with torch's warning) and nn.Unflatten."""
    x0 = np.random.default_rng(0).standard_normal((2, 3, 4, 4))
    results = []
    for lib in (torch, ag):
        F = lib.nn.functional
        x = lib.tensor(x0)
        out = []
        for name, args in [("relu_", ()), ("elu_", (0.5,)), ("selu_", ()), ("celu_", (2.0,)),
                           ("leaky_relu_", (0.2,)), ("hardtanh_", (-0.5, 0.5)),
                           ("threshold_", (0.1, 20.0))]:
            y = x.clone()
            assert getattr(F, name)(y, *args) is y
            out.append(y.numpy())
        out += [t.numpy() for t in F.max_pool2d_with_indices(x, 2)]
        out += [t.numpy() for t in F.adaptive_max_pool2d_with_indices(x, 3)]
        for name, kw in [("upsample", dict(scale_factor=2, mode="bilinear")),
                         ("upsample_nearest", dict(scale_factor=2)),
                         ("upsample_bilinear", dict(scale_factor=2))]:
            with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated"):
                out.append(getattr(F, name)(x, **kw).numpy())
        m = lib.nn.Unflatten(1, (3, 1))
        out.append(m(x).numpy())
        results.append((out, repr(m)))
    (t_out, t_repr), (a_out, a_repr) = results
    assert a_repr == t_repr
    for a, t in zip(a_out, t_out):
        np.testing.assert_allclose(a, t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_matches_torch(torch, nd):
    """MaxUnpool after MaxPool (with output_size), values and gradients, and torch's refusals."""
    x0 = np.random.default_rng(nd).standard_normal((2, 3) + (5, 4, 4)[:nd])
    results = []
    for lib in (torch, ag):
        x = lib.tensor(x0, requires_grad=True)
        pool = getattr(lib.nn, f"MaxPool{nd}d")(2, stride=2, return_indices=True)
        unpool = getattr(lib.nn, f"MaxUnpool{nd}d")(2, stride=2)
        out, idx = pool(x)
        u = unpool(out, idx, output_size=x.size())
        (u * lib.arange(u.numel(), dtype=lib.float64).reshape(u.shape)).sum().backward()
        errors = []
        for bad in (lambda: unpool(out, idx, output_size=(9,) * nd), lambda: unpool(out, idx.int()),
                    lambda: unpool(out, idx[..., :1])):
            with pytest.raises((ValueError, RuntimeError)) as e:
                bad()
            errors.append((e.type, str(e.value).split(" but got")[0].split(" (")[0]))
        results.append((u.detach().numpy(), x.grad.numpy(), repr(unpool), errors))
    (tu, tg, tr, te), (au, agr, ar, ae) = results
    np.testing.assert_array_equal(au, tu)
    np.testing.assert_array_equal(agr, tg)
    assert (ar, ae) == (tr, te)
