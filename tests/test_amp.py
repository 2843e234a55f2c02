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
