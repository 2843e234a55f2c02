"""Forward AD through views, in-place writes and in-place view ops, against torch: random
programs on dual tensors (views of views, `t_`/`squeeze_`/`unsqueeze_` on tensors that have
views, writes of numbers, constants and other duals through any of them), comparing every
tensor's primal and tangent. Operands are clones, so no write reads memory it overwrites
(torch refuses some of those and races on others)."""
import random

import numpy as np
import pytest

import arraygrad


def _program(seed):
    r = random.Random(seed)
    steps, pool = [], 2
    for _ in range(r.randint(2, 8)):
        k, i = r.random(), r.randrange(pool)
        if k < 0.3:
            steps.append(("view", i, r.choice(["t", "sl", "unsq", "flat", "diag"]), 0))
            pool += 1
        elif k < 0.45:
            steps.append(("iview", i, r.choice(["t_", "unsqueeze_", "squeeze_"]), 0))
        elif k < 0.85:
            steps.append(("write", i, r.choice(["mul_", "add_", "copy_", "div_", "sin_", "mul_dual",
                                                "add_dual", "setitem"]), r.randrange(pool)))
        else:
            steps.append(("op", i, r.choice(["exp", "matmul", "sum"]), 0))
            pool += 1
    return steps


def _view(t, op):
    if op == "t":
        return t.transpose(0, -1)
    if op == "sl":
        return t[1:] if t.shape[0] > 1 else t[:]
    if op == "unsq":
        return t.unsqueeze(0)
    if op == "diag":
        return t.diagonal(0, 0, -1) if t.dim() >= 2 else t[:]
    return t.reshape(-1) if t.is_contiguous() else t[:]


def _write(lib, t, op, o):
    c = lib.linspace(0.5, 1.5, t.numel(), dtype=lib.float64).reshape(t.shape)
    if op in ("mul_", "add_", "div_"):
        getattr(t, op)(c)
    elif op == "sin_":
        t.sin_()
    elif op == "copy_":
        t.copy_(o.reshape(-1)[:t.numel()].reshape(t.shape) if o.numel() >= t.numel() else c)
    elif op == "mul_dual":
        t.mul_(o.reshape(-1)[0])
    elif op == "add_dual":
        t.add_(o.sum())
    else:
        t[..., 0] = o.reshape(-1)[0]


def _run(lib, steps):
    fa = lib.autograd.forward_ad
    with fa.dual_level():
        x = fa.make_dual(lib.tensor(np.arange(1., 13.).reshape(3, 4) / 7),
                         lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4)))
        y = fa.make_dual(lib.tensor(np.arange(2., 14.).reshape(3, 4) / 9),
                         lib.tensor(np.cos(np.arange(12.)).reshape(3, 4)))
        pool = [x * 1, y.clone()]
        for what, i, op, j in steps:
            t = pool[i]
            if what == "view":
                pool.append(_view(t, op))
            elif what == "iview":
                {"t_": lambda: t.transpose_(0, -1), "unsqueeze_": lambda: t.unsqueeze_(0),
                 "squeeze_": lambda: t.squeeze_()}[op]()
            elif what == "op":
                pool.append(t.exp() if op == "exp" else t @ t.transpose(0, -1)
                            if op == "matmul" else t.sum(0, keepdim=True))
            else:
                _write(lib, t, op, pool[j].clone())
        out = []
        for p in pool:
            primal, tangent = fa.unpack_dual(p)
            out.append((primal.numpy().copy(), None if tangent is None else tangent.numpy().copy()))
        return out


def _outcome(lib, steps):
    try:
        return "ok", _run(lib, steps)
    except (RuntimeError, IndexError) as e:
        return "raises", type(e).__name__


@pytest.mark.parametrize("start", range(0, 400, 100))
def test_random_programs_match_torch(torch, start):
    for seed in range(start, start + 100):
        steps = _program(seed)
        (tk, tv), (ak, av) = _outcome(torch, steps), _outcome(arraygrad, steps)
        where = f"seed {seed}: {steps}"
        assert ak == tk, f"{where}: torch {tk} {tv}, arraygrad {ak} {av}"
        if tk == "raises":
            assert av == tv, where
            continue
        for (tp, tt), (ap, at) in zip(tv, av):
            np.testing.assert_allclose(ap, tp, rtol=1e-12, atol=1e-12, err_msg=where)
            assert (at is None) == (tt is None), where
            if tt is not None:
                np.testing.assert_allclose(at, tt, rtol=1e-12, atol=1e-12, err_msg=where)
