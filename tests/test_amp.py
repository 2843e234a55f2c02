"""amp.GradScaler against torch's: the same scales, skipped steps and parameters, step for step."""
import math
import warnings

import numpy as np
import pytest

import arraygrad as ag


def _run(L, steps, bad_steps, **scaler_kw):
    """A small float32 regression trained with a GradScaler; on `bad_steps` the loss is
    multiplied by inf so its gradients overflow. Returns (scales, trackers, weights)."""
    rng = np.random.default_rng(0)
    w0, x, y = rng.standard_normal(3), rng.standard_normal((8, 3)), rng.standard_normal(8)
    w = L.nn.Parameter(L.tensor(w0, dtype=L.float32))
    opt = L.optim.SGD([w], lr=0.05, momentum=0.9)
    scaler = L.amp.GradScaler("cpu", **scaler_kw)
    xs, ys = L.tensor(x, dtype=L.float32), L.tensor(y, dtype=L.float32)
    scales, trackers = [], []
    for i in range(steps):
        opt.zero_grad()
        loss = ((xs @ w - ys) ** 2).mean()
        if i in bad_steps:
            loss = loss * math.inf
        scaler.scale(loss).backward()
        if i % 3 == 0:
            scaler.unscale_(opt)            # e.g. to clip: then step() must not unscale again
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        trackers.append(scaler.state_dict()["_growth_tracker"])
    return scales, trackers, w.detach().numpy().copy()


@pytest.mark.parametrize("kw", [dict(init_scale=8.0, growth_interval=3),
                                dict(init_scale=2.0 ** 16, growth_factor=4.0, backoff_factor=0.25,
                                     growth_interval=2)])
def test_training_loop_matches_torch(torch, kw):
    bad = {2, 3, 9}
    got = _run(ag, 14, bad, **kw)
    want = _run(torch, 14, bad, **kw)
    assert got[0] == want[0] and got[1] == want[1]
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-6)   # float32 sums
    assert len(set(got[0])) > 2                 # the scale both grew and backed off


def test_scale_unscale_and_state_dict_match_torch(torch):
    for L in (ag, torch):
        s = L.amp.GradScaler("cpu", init_scale=4.0)
        p = L.nn.Parameter(L.ones(2))
        opt = L.optim.SGD([p], lr=0.1)
        out = s.scale((p * 3).sum())
        assert out.item() == 24.0 and out.dtype is L.float32
        nested = s.scale([L.ones(1), (L.ones(1) * 2,)])
        assert isinstance(nested, list) and isinstance(nested[1], tuple)
        assert [nested[0].item(), nested[1][0].item()] == [4.0, 8.0]
        out.backward()
        s.unscale_(opt)
        assert p.grad.tolist() == [3.0, 3.0]
        s.step(opt)
        assert np.allclose(p.detach().numpy(), [0.7, 0.7])
        s.update()
        assert s.state_dict() == {"scale": 4.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                  "growth_interval": 2000, "_growth_tracker": 1}
        s.update(new_scale=2.0)
        assert s.get_scale() == 2.0
        s.update(new_scale=L.tensor(8.0))
        assert s.get_scale() == 8.0
        t = L.amp.GradScaler("cpu")
        t.load_state_dict(s.state_dict())
        assert t.get_scale() == 8.0 and t.state_dict()["_growth_tracker"] == 1


def _fresh(L):
    s = L.amp.GradScaler("cpu")
    p = L.nn.Parameter(L.ones(2))
    return s, L.optim.SGD([p], lr=0.1), p


def _unscale_twice(L):
    s, opt, p = _fresh(L)
    s.scale(p.sum()).backward()
    s.unscale_(opt)
    s.unscale_(opt)


def _unscale_after_step(L):
    s, opt, p = _fresh(L)
    s.scale(p.sum()).backward()
    s.step(opt)
    s.unscale_(opt)


def _step_twice(L):
    s, opt, p = _fresh(L)
    s.scale(p.sum()).backward()
    s.step(opt)
    s.step(opt)


ERRORS = [
    ("unscale_before_scale", lambda L: _fresh(L)[0].unscale_(_fresh(L)[1]), AssertionError,
     "did not use scaler.scale"),
    ("update_before_scale", lambda L: _fresh(L)[0].update(), AssertionError, "_scale is None"),
    ("unscale_twice", _unscale_twice, RuntimeError, "already been called"),
    ("unscale_after_step", _unscale_after_step, RuntimeError, "after step"),
    ("step_twice", _step_twice, RuntimeError, "already been called"),
    ("closure", lambda L: (lambda s: (s.scale(L.ones(1)), s.step(_fresh(L)[1], closure=None)))(
        _fresh(L)[0]), RuntimeError, "Closure"),
    ("scale_a_float", lambda L: _fresh(L)[0].scale(3.0), ValueError, "Tensor or an iterable"),
    ("empty_state", lambda L: _fresh(L)[0].load_state_dict({}), RuntimeError, "empty"),
    ("fp16_grads", lambda L: (lambda s, p: (s.scale(L.ones(1)), setattr(
        p, "grad", L.ones(2, dtype=L.float16)), s.unscale_(L.optim.SGD([p], lr=0.1))))(
        _fresh(L)[0], L.nn.Parameter(L.ones(2, dtype=L.float16))), ValueError, "FP16"),
]


@pytest.mark.parametrize("name,call,exc,match", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_as_torch(torch, name, call, exc, match):
    for L in (ag, torch):
        with pytest.raises(exc, match=match):
            call(L)


def test_disabled_scaler_passes_through(torch):
    for L in (ag, torch):
        with pytest.warns(UserWarning, match="CUDA is not available"):
            s = L.amp.GradScaler()                  # device "cuda" by default
        x = L.ones(2)
        assert not s.is_enabled() and s.scale(x) is x and s.get_scale() == 1.0
        assert s.state_dict() == {}
        p = L.nn.Parameter(L.ones(2))
        p.grad = L.ones(2)
        opt = L.optim.SGD([p], lr=0.5)
        s.unscale_(opt)
        s.step(opt)
        s.update()
        assert p.detach().tolist() == [0.5, 0.5]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert not L.amp.GradScaler("cpu", enabled=False).is_enabled()


# ----------------------------------------------------------------- autocast
def _autocast_ops(L):
    """One call per op of torch's CPU autocast lists (and a few on neither), fresh inputs."""
    F = L.nn.functional
    r = np.random.RandomState(0)
    f = lambda *s: L.tensor(r.randn(*s), dtype=L.float32)     # noqa: E731
    bf = lambda *s: f(*s).to(L.bfloat16)                       # noqa: E731
    a, b, x4, idx = f(3, 4), f(4, 5), f(2, 3, 5, 5), L.tensor([0, 2, 1])
    return {
        # lower precision
        "matmul": lambda: a @ b, "matmul bf16 x f32": lambda: a.to(L.bfloat16) @ b,
        "matmul f64": lambda: a.double() @ b.double(),
        "mm": lambda: L.mm(a, b), "bmm": lambda: L.bmm(f(2, 3, 4), f(2, 4, 5)),
        "addmm": lambda: L.addmm(f(3, 5), a, b),
        "baddbmm": lambda: L.baddbmm(f(2, 3, 5), f(2, 3, 4), f(2, 4, 5)),
        "addbmm": lambda: L.addbmm(f(3, 5), f(2, 3, 4), f(2, 4, 5)),
        "linear": lambda: F.linear(a, f(6, 4), f(6)),
        "conv1d": lambda: F.conv1d(f(2, 3, 7), f(4, 3, 3), f(4)),
        "conv2d": lambda: F.conv2d(x4, f(4, 3, 3, 3)),
        "conv3d": lambda: F.conv3d(f(1, 2, 4, 4, 4), f(3, 2, 2, 2, 2)),
        "conv_transpose1d": lambda: F.conv_transpose1d(f(2, 3, 7), f(3, 4, 3)),
        "conv_transpose2d": lambda: F.conv_transpose2d(x4, f(3, 4, 3, 3)),
        "conv_transpose3d": lambda: F.conv_transpose3d(f(1, 2, 4, 4, 4), f(2, 3, 2, 2, 2)),
        "prelu": lambda: F.prelu(a, f(1)),
        "scaled_dot_product_attention":
            lambda: F.scaled_dot_product_attention(f(2, 3, 4), f(2, 5, 4), f(2, 5, 4)),
        # fp32, given bfloat16 inputs
        "prod": lambda: bf(3, 4).prod(), "cdist": lambda: L.cdist(bf(3, 4), bf(5, 4)),
        "trace": lambda: bf(3, 3).trace(),
        "avg_pool3d": lambda: F.avg_pool3d(bf(1, 2, 4, 4, 4), 2),
        "max_pool3d": lambda: F.max_pool3d(bf(1, 2, 4, 4, 4), 2),
        "adaptive_avg_pool3d": lambda: F.adaptive_avg_pool3d(bf(1, 2, 4, 4, 4), 2),
        "adaptive_max_pool3d": lambda: F.adaptive_max_pool3d(bf(1, 2, 4, 4, 4), 2),
        "mse_loss": lambda: F.mse_loss(bf(3, 4), bf(3, 4)),
        "l1_loss": lambda: F.l1_loss(bf(3, 4), bf(3, 4)),
        "smooth_l1_loss": lambda: F.smooth_l1_loss(bf(3, 4), bf(3, 4)),
        "huber_loss": lambda: F.huber_loss(bf(3, 4), bf(3, 4)),
        "nll_loss": lambda: F.nll_loss(bf(3, 4), idx),
        "cross_entropy": lambda: F.cross_entropy(bf(3, 4), idx),
        "kl_div": lambda: F.kl_div(bf(3, 4), bf(3, 4), reduction="batchmean"),
        "binary_cross_entropy":
            lambda: F.binary_cross_entropy(bf(3, 4).sigmoid(), bf(3, 4).sigmoid()),
        "binary_cross_entropy_with_logits":
            lambda: F.binary_cross_entropy_with_logits(bf(3, 4), bf(3, 4).sigmoid()),
        "poisson_nll_loss": lambda: F.poisson_nll_loss(bf(3, 4), bf(3, 4).abs()),
        "margin_ranking_loss": lambda: F.margin_ranking_loss(bf(4), bf(4), bf(4).sign()),
        "hinge_embedding_loss": lambda: F.hinge_embedding_loss(bf(4), bf(4).sign()),
        "soft_margin_loss": lambda: F.soft_margin_loss(bf(4), bf(4).sign()),
        "cosine_embedding_loss":
            lambda: F.cosine_embedding_loss(bf(3, 4), bf(3, 4), bf(3).sign()),
        "triplet_margin_loss": lambda: F.triplet_margin_loss(bf(3, 4), bf(3, 4), bf(3, 4)),
        "multi_margin_loss": lambda: F.multi_margin_loss(bf(3, 4), idx),
        "multilabel_margin_loss":
            lambda: F.multilabel_margin_loss(bf(3, 4), L.tensor([[1, -1, 0, 0]] * 3)),
        # on neither list: the input's dtype, or ordinary promotion
        "relu": lambda: F.relu(bf(3, 4)), "softmax": lambda: bf(3, 4).softmax(-1),
        "sum": lambda: bf(3, 4).sum(), "add mixed": lambda: bf(3, 4) + f(3, 4),
        "layer_norm": lambda: F.layer_norm(bf(3, 4), (4,)),
        "max_pool2d": lambda: F.max_pool2d(bf(1, 2, 4, 4), 2),
    }


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_autocast_result_dtypes_as_torch(torch, dtype):
    pytest.importorskip("ml_dtypes")
    results = {}
    for L in (ag, torch):
        with L.autocast("cpu", dtype=getattr(L, dtype)):
            results[L] = {k: str(fn().dtype).split(".")[1] for k, fn in _autocast_ops(L).items()}
    assert results[ag] == results[torch]


def _mlp_step(L, **autocast_kw):
    L.manual_seed(0)
    rng = np.random.default_rng(1)
    lin1, lin2 = L.nn.Linear(4, 8), L.nn.Linear(8, 3)
    with L.no_grad():
        for p in (*lin1.parameters(), *lin2.parameters()):
            p.copy_(L.tensor(rng.standard_normal(tuple(p.shape)) * 0.5, dtype=L.float32))
    x = L.tensor(rng.standard_normal((5, 4)), dtype=L.float32)
    with L.autocast("cpu", **autocast_kw):
        h = lin1(x).relu()
        out = lin2(h)
        loss = L.nn.functional.cross_entropy(out, L.tensor([0, 1, 2, 1, 0]))
    loss.backward()
    return (h.dtype, out.dtype, loss.dtype, lin1.weight.grad.dtype,
            loss.item(), lin1.weight.grad.numpy().copy())


def test_autocast_training_step_as_torch(torch):
    pytest.importorskip("ml_dtypes")
    got, want = _mlp_step(ag), _mlp_step(torch)
    assert [str(d).split(".")[1] for d in got[:4]] == [str(d).split(".")[1] for d in want[:4]]
    assert [str(d).split(".")[1] for d in got[:4]] == ["bfloat16", "bfloat16", "float32",
                                                       "float32"]
    assert got[4] == pytest.approx(want[4], rel=2e-2)
    np.testing.assert_allclose(got[5], want[5], rtol=5e-2, atol=2e-2)


def test_autocast_nesting_disable_and_decorator():
    pytest.importorskip("ml_dtypes")
    a = ag.ones(2, 2)
    assert not ag.is_autocast_enabled("cpu") and (a @ a).dtype is ag.float32
    with ag.autocast("cpu"):
        assert ag.is_autocast_enabled("cpu") and ag.get_autocast_dtype("cpu") is ag.bfloat16
        assert not ag.is_autocast_enabled()                 # no argument: CUDA's, as torch
        with ag.autocast("cpu", enabled=False):
            assert (a @ a).dtype is ag.float32
        with ag.autocast("cpu", dtype=ag.float16):
            assert (a @ a).dtype is ag.float16
        assert (a @ a).dtype is ag.bfloat16
        with pytest.raises(ValueError):
            with ag.autocast("cpu", dtype=ag.float16):
                raise ValueError("the outer state comes back after an exception")
        assert (a @ a).dtype is ag.bfloat16
    assert not ag.is_autocast_enabled("cpu")

    @ag.autocast("cpu", dtype=ag.float16)
    def f(x):
        return x @ x
    assert f(a).dtype is ag.float16 and (a @ a).dtype is ag.float32
    with ag.amp.autocast("cpu"):
        assert (a @ a).dtype is ag.bfloat16


def test_autocast_warnings_and_errors_as_torch(torch):
    pytest.importorskip("ml_dtypes")
    for L in (ag, torch):
        a = L.ones(2, 2)
        with pytest.warns(UserWarning, match="target dtype is not supported"):
            with L.autocast("cpu", dtype=L.float64):
                assert (a @ a).dtype is L.float32
        with pytest.warns(UserWarning, match="CUDA is not available"):
            with L.autocast("cuda"):
                assert (a @ a).dtype is L.float32
        with pytest.warns(FutureWarning, match="torch.cpu.amp.autocast"):
            with L.cpu.amp.autocast():
                assert (a @ a).dtype is L.bfloat16
        with pytest.warns(UserWarning, match="CUDA is not available"):
            with pytest.warns(FutureWarning, match="torch.cuda.amp.autocast"):
                with L.cuda.amp.autocast():
                    assert (a @ a).dtype is L.float32
        with pytest.warns(UserWarning, match="CUDA is not available"):
            with pytest.warns(FutureWarning, match="torch.cuda.amp.GradScaler"):
                assert not L.cuda.amp.GradScaler().is_enabled()
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
            L.autocast("foo")
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            L.autocast(L.device("cpu"))


def test_custom_fwd_casts_inputs_and_bwd_follows(torch):
    pytest.importorskip("ml_dtypes")
    seen = {}
    for L in (ag, torch):
        class Square(L.autograd.Function):
            @staticmethod
            @L.amp.custom_fwd(device_type="cpu", cast_inputs=L.float32)
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x @ x

            @staticmethod
            @L.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g @ x.T + x.T @ g

        x = L.ones(2, 2, dtype=L.bfloat16, requires_grad=True)
        with L.autocast("cpu"):
            y = Square.apply(x)
        y.sum().backward()
        seen[L] = (str(y.dtype), str(x.grad.dtype))
    assert seen[ag][0].split(".")[1] == seen[torch][0].split(".")[1] == "float32"
    assert seen[ag][1].split(".")[1] == seen[torch][1].split(".")[1]
