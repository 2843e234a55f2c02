"""optim: SGD, Adam and AdamW follow torch.optim's trajectories step for step."""
import tracemalloc

import numpy as np
import pytest

import arraygrad as ag
from arraygrad import nn, optim
from conftest import assert_close, reference_torch

torch = reference_torch()


def make_pair(seed=0):
    """A small float64 regression problem, identical in both libraries."""
    rng = np.random.default_rng(seed)
    w1, b1 = rng.standard_normal((5, 3)), rng.standard_normal(5)
    w2 = rng.standard_normal((2, 5))
    x, y = rng.standard_normal((8, 3)), rng.standard_normal((8, 2))
    ours = [ag.tensor(a, requires_grad=True) for a in (w1, b1, w2)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (w1, b1, w2)]
    return ours, theirs, (ag.tensor(x), ag.tensor(y)), (torch.tensor(x), torch.tensor(y))


def loss_fn(lib, params, x, y):
    w1, b1, w2 = params
    return ((lib.tanh(x @ w1.T + b1) @ w2.T - y) ** 2).mean()


def run_both(opt_ours, opt_theirs, ours, theirs, data, tdata, steps=20):
    for _ in range(steps):
        for lib, opt, params, (x, y) in ((ag, opt_ours, ours, data),
                                         (torch, opt_theirs, theirs, tdata)):
            opt.zero_grad()
            loss_fn(lib, params, x, y).backward()
            opt.step()
        for a, t in zip(ours, theirs):
            assert_close(a, t, rtol=1e-9, atol=1e-11)


CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True)),
    ("Adam", dict(lr=0.05, weight_decay=0.2, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, weight_decay=0.3, amsgrad=True)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, weight_decay=0.1, momentum=0.5)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9, maximize=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.05, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.05, momentum_decay=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.05, betas=(0.5, 0.6), weight_decay=0.1)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=1e-2, alpha=0.5, t0=2, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=0, maximize=True)),
]


@pytest.mark.parametrize("name,kw", CONFIGS, ids=[f"{n}-{kw}" for n, kw in CONFIGS])
def test_trajectories_match_torch(name, kw):
    ours, theirs, data, tdata = make_pair()
    run_both(getattr(optim, name)(ours, **kw), getattr(torch.optim, name)(theirs, **kw),
             ours, theirs, data, tdata)


@pytest.mark.parametrize("kw", [dict(lr=1, max_iter=5),
                                dict(lr=0.5, max_iter=8, history_size=3),
                                dict(max_iter=10, line_search_fn="strong_wolfe")])
def test_lbfgs_matches_torch(kw):
    ours, theirs, data, tdata = make_pair(4)
    opt, topt = optim.LBFGS(ours, **kw), torch.optim.LBFGS(theirs, **kw)
    for _ in range(4):
        for lib, o, params, (x, y) in ((ag, opt, ours, data), (torch, topt, theirs, tdata)):
            def closure():
                o.zero_grad()
                loss = loss_fn(lib, params, x, y)
                loss.backward()
                return loss
            o.step(closure)
        for a, t in zip(ours, theirs):
            assert_close(a, t, rtol=1e-8, atol=1e-10)
    state, tstate = opt.state[ours[0]], topt.state[theirs[0]]
    assert state["func_evals"] == tstate["func_evals"] and state["n_iter"] == tstate["n_iter"]


def test_lbfgs_strong_wolfe_minimises_rosenbrock():
    x = ag.tensor([-1.5, 2.0], dtype=ag.float64, requires_grad=True)
    opt = optim.LBFGS([x], max_iter=100, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        loss.backward()
        return loss
    opt.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 1.0], atol=1e-5)
    with pytest.raises(ValueError, match="parameter groups"):
        optim.LBFGS([{"params": [x]}, {"params": [ag.ones(1, requires_grad=True)]}])
    with pytest.raises(RuntimeError, match="strong_wolfe"):
        optim.LBFGS([x], line_search_fn="armijo")


@pytest.mark.parametrize("name,kw", [("RMSprop", dict(lr=0.02, momentum=0.3)),
                                     ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.2))])
def test_add_param_group_takes_defaults(name, kw):
    ours, theirs, data, tdata = make_pair(5)
    opt = getattr(optim, name)(ours[:2], **kw)
    topt = getattr(torch.optim, name)(theirs[:2], **kw)
    opt.add_param_group({"params": ours[2:], "lr": 0.005})
    topt.add_param_group({"params": theirs[2:], "lr": 0.005})
    assert opt.param_groups[1] == {**topt.param_groups[1], "params": ours[2:]}
    run_both(opt, topt, ours, theirs, data, tdata, steps=5)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": ours[:1]})


def test_param_groups_with_their_own_options():
    ours, theirs, data, tdata = make_pair(1)
    groups = lambda p: [{"params": p[:2]}, {"params": p[2:], "lr": 0.01, "momentum": 0.5}]
    opt = optim.SGD(groups(ours), lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(groups(theirs), lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [g["lr"] for g in topt.param_groups]
    run_both(opt, topt, ours, theirs, data, tdata)


def test_state_dict_round_trip_continues_the_same_trajectory():
    ours, theirs, data, tdata = make_pair(2)
    opt, topt = optim.Adam(ours, lr=0.05), torch.optim.Adam(theirs, lr=0.05)
    run_both(opt, topt, ours, theirs, data, tdata, steps=3)
    sd = opt.state_dict()
    tsd = topt.state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    assert sorted(sd["state"]) == sorted(tsd["state"]) == [0, 1, 2]
    assert sd["state"][0].keys() == tsd["state"][0].keys()
    assert_close(sd["state"][0]["exp_avg"], tsd["state"][0]["exp_avg"], rtol=1e-9)
    assert float(sd["state"][0]["step"]) == float(tsd["state"][0]["step"]) == 3
    fresh = optim.Adam(ours, lr=1.0)
    fresh.load_state_dict(sd)
    assert fresh.param_groups[0]["lr"] == 0.05
    assert fresh.state[ours[0]]["exp_avg"] is not sd["state"][0]["exp_avg"]
    run_both(fresh, topt, ours, theirs, data, tdata, steps=3)


def test_with_modules_and_closure():
    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(),
                                 torch.nn.Linear(8, 3)).double()
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).double()
    model.load_state_dict({k: ag.tensor(v.numpy()) for k, v in tmodel.state_dict().items()})
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((16, 4)), rng.integers(0, 3, 16)
    opt = optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    topt = torch.optim.SGD(tmodel.parameters(), lr=0.2, momentum=0.9)
    for _ in range(5):
        def closure():
            opt.zero_grad()
            loss = nn.CrossEntropyLoss()(model(ag.tensor(x)), ag.tensor(y))
            loss.backward()
            return loss

        def tclosure():
            topt.zero_grad()
            loss = torch.nn.CrossEntropyLoss()(tmodel(torch.tensor(x)), torch.tensor(y))
            loss.backward()
            return loss

        assert_close(opt.step(closure), topt.step(tclosure), rtol=1e-9)
    for (n, p), (_, tp) in zip(model.named_parameters(), tmodel.named_parameters()):
        assert_close(p, tp, rtol=1e-9, what=n)


def test_zero_grad_and_skipped_params():
    p, q = ag.ones(2, requires_grad=True), ag.ones(2, requires_grad=True)
    opt = optim.SGD([p, q], lr=1.0)
    (p * 3).sum().backward()
    opt.step()                                   # q has no grad: left alone
    assert p.tolist() == [-2.0, -2.0] and q.tolist() == [1.0, 1.0]
    opt.zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0, 0.0] and q.grad is None
    opt.zero_grad()
    assert p.grad is None


def test_errors_match_torch():
    p = ag.ones(2, requires_grad=True)
    tp = torch.ones(2, requires_grad=True)
    cases = [
        (lambda lib, p: lib.optim.SGD(p, lr=0.1), TypeError,
         "params argument given to the optimizer should be an iterable of Tensors or dicts, "
         "but got torch.FloatTensor"),
        (lambda lib, p: lib.optim.SGD([], lr=0.1), ValueError,
         "optimizer got an empty parameter list"),
        (lambda lib, p: lib.optim.SGD([p], lr=-1), ValueError, "Invalid learning rate: -1"),
        (lambda lib, p: lib.optim.SGD([p], momentum=-1), ValueError, "Invalid momentum value: -1"),
        (lambda lib, p: lib.optim.SGD([p], nesterov=True), ValueError,
         "Nesterov momentum requires a momentum and zero dampening"),
        (lambda lib, p: lib.optim.Adam([p], betas=(1.0, 0.9)), ValueError,
         r"Invalid beta parameter at index 0: 1.0"),
        (lambda lib, p: lib.optim.SGD([{"params": [p]}, {"params": [p]}]), ValueError,
         "some parameters appear in more than one parameter group"),
        (lambda lib, p: lib.optim.SGD([p * 2]), ValueError, "can't optimize a non-leaf Tensor"),
    ]
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        optim.Adam([p], differentiable=True)
    optim.SGD([p], foreach=True, fused=False)      # performance switches are accepted
    for fn, exc, msg in cases:
        for lib, param in ((ag, p), (torch, tp)):
            with pytest.raises(exc, match=msg):
                fn(lib, param)


@pytest.mark.parametrize("name,kw", [
    ("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.1, maximize=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.1)), ("Adam", dict(lr=0.1, weight_decay=0.1, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, maximize=True)),
    ("Adadelta", dict(lr=0.5, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, maximize=True))])
def test_step_updates_in_place_without_temporaries(name, kw):
    """A step writes the parameter's own array (views see it, its version moves) and, once the
    first steps have made the state and the scratch buffers, allocates nothing parameter-sized:
    temporaries made and freed every step are megabytes per step that the allocator hands back
    to the OS and faults in again (NOTE [in-place steps])."""
    w = ag.zeros(256, 256, dtype=ag.float64, requires_grad=True)
    view = w.detach()[0]
    opt = getattr(optim, name)([w], **kw)
    opt.zero_grad()
    (w * 2.0).sum().backward()
    opt.step()                  # makes the state and the scratch buffers (momentum's on the
    opt.step()                  # second step, when there is a buffer to dampen into)
    version = w._version
    tracemalloc.start()
    opt.step()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert w._version > version and view[0].item() == w[0, 0].item() != 0
    assert peak < 0.1 * w.numel() * 8


@pytest.mark.parametrize("name,kw", [
    ("SGD", dict(momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(momentum=0.9, dampening=0.3, weight_decay=0.1, maximize=True)),
    ("Adam", dict(weight_decay=0.1, maximize=True)), ("Adam", dict(amsgrad=True)),
    ("RMSprop", dict(momentum=0.9, centered=True, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(weight_decay=0.1, maximize=True)),
    ("Adadelta", dict(weight_decay=0.1, maximize=True)),
    ("Adamax", dict(weight_decay=0.1, maximize=True)),
    ("NAdam", dict(weight_decay=0.1, maximize=True)), ("NAdam", dict(decoupled_weight_decay=True,
                                                                      weight_decay=0.1)),
    ("RAdam", dict(weight_decay=0.1, maximize=True))])
def test_array_steps_equal_tensor_steps_bit_for_bit(name, kw):
    """NOTE [in-place steps]: the step on the arrays (scratch temporaries) and the same code on
    tensors (taken for a tensor lr) give the same parameters, bit for bit."""
    w0 = np.random.default_rng(0).standard_normal((4, 3))
    results = []
    for lr in (0.05, ag.tensor(0.05, dtype=ag.float64)):
        w = ag.tensor(w0, requires_grad=True)
        opt = getattr(optim, name)([w], lr=lr, **kw)
        for _ in range(8):     # RAdam rectifies from its 6th step
            opt.zero_grad()
            ((w ** 3).sum() + (w * 2.0).sum()).backward()
            opt.step()
        results.append(w.detach().numpy())
    np.testing.assert_array_equal(results[0], results[1])


def test_optimizer_fuzz_cases(torch):
    """tests/optim_fuzz.py: random optimizers, options, groups, schedules, None grads and a
    state_dict reload midway; every step's parameters and learning rates equal torch's."""
    import optim_fuzz as of
    bad = [r for r in (of.check(of.generate(i), ag, torch) for i in range(60)) if r]
    assert not bad, bad[0]
