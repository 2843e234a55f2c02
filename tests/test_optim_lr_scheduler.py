"""optim.lr_scheduler: every schedule's lr sequence (and cycled momentum) equals torch's, step
for step."""
import pytest

import arraygrad as ag
from arraygrad.optim import lr_scheduler as sched


def _opt(lib, kind="SGD"):
    p, q = lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)
    groups = [{"params": [p]}, {"params": [q], "lr": 0.05}]
    if kind == "Adam":
        return lib.optim.Adam(groups, lr=0.1)
    return lib.optim.SGD(groups, lr=0.1, momentum=0.9)


def _lambda(e):
    return 0.95 ** e


SINGLE = [
    ("StepLR", dict(step_size=4, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[3, 7, 7, 20], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=10, eta_min=0.001)),
    ("CosineAnnealingWarmRestarts", dict(T_0=5, T_mult=2, eta_min=0.01)),
    ("CosineAnnealingWarmRestarts", dict(T_0=4)),
    ("LambdaLR", dict(lr_lambda=_lambda)),
    ("LambdaLR", dict(lr_lambda=[_lambda, lambda e: 1.0 / (e + 1)])),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.9)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=31)),
    ("OneCycleLR", dict(max_lr=[1.0, 0.5], epochs=3, steps_per_epoch=11, anneal_strategy="linear",
                        three_phase=True)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4)),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=3, step_size_down=5,
                      mode="triangular2")),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, mode="exp_range", gamma=0.9)),
    ("LinearLR", dict()),
    ("LinearLR", dict(start_factor=0.5, end_factor=0.1, total_iters=8)),
    ("ConstantLR", dict(factor=0.25, total_iters=6)),
    ("PolynomialLR", dict(total_iters=12, power=2.0)),
]


def _assert_same(opt, topt, what):
    for g, tg in zip(opt.param_groups, topt.param_groups):
        assert g["lr"] == pytest.approx(tg["lr"], rel=1e-13, abs=1e-16), what
        assert g["momentum"] == pytest.approx(tg["momentum"], rel=1e-13), what


@pytest.mark.parametrize("name,kw", SINGLE, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SINGLE)])
def test_lr_sequence_matches_torch(torch, name, kw):
    opt, topt = _opt(ag), _opt(torch)
    s = getattr(sched, name)(opt, **kw)
    ts = getattr(torch.optim.lr_scheduler, name)(topt, **kw)
    _assert_same(opt, topt, "after construction")
    for i in range(30):
        opt.step()
        topt.step()
        s.step()
        ts.step()
        _assert_same(opt, topt, f"step {i}")
        assert s.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-13)


def test_cycled_beta1_for_adam(torch):
    opt, topt = _opt(ag, "Adam"), _opt(torch, "Adam")
    s = sched.OneCycleLR(opt, max_lr=0.5, total_steps=20)
    ts = torch.optim.lr_scheduler.OneCycleLR(topt, max_lr=0.5, total_steps=20)
    for _ in range(19):
        opt.step(), topt.step(), s.step(), ts.step()
        assert opt.param_groups[0]["betas"] == pytest.approx(topt.param_groups[0]["betas"])
        assert opt.param_groups[1]["lr"] == pytest.approx(topt.param_groups[1]["lr"], rel=1e-13)


def _composites(lib):
    opt = _opt(lib)
    S = lib.optim.lr_scheduler
    seq = S.SequentialLR(opt, [S.LinearLR(opt, start_factor=0.2, total_iters=4),
                               S.ExponentialLR(opt, gamma=0.9),
                               S.CosineAnnealingLR(opt, T_max=6)], milestones=[5, 12])
    opt2 = _opt(lib)
    chain = S.ChainedScheduler([S.ConstantLR(opt2, factor=0.5, total_iters=3),
                                S.ExponentialLR(opt2, gamma=0.8),
                                S.StepLR(opt2, step_size=5, gamma=0.5)])
    return (opt, seq), (opt2, chain)


def test_sequential_and_chained_match_torch(torch):
    for (opt, s), (topt, ts) in zip(_composites(ag), _composites(torch)):
        _assert_same(opt, topt, "after construction")
        for i in range(25):
            opt.step(), topt.step()
            s.step()
            ts.step()
            _assert_same(opt, topt, f"{type(s).__name__} step {i}")
            assert s.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-13)


def test_reduce_lr_on_plateau_matches_torch(torch):
    metrics = [1.0, 0.9, 0.9, 0.9, 0.9, 0.95, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.7, 0.7, 0.7, 0.7]
    for kw in (dict(patience=2), dict(mode="max", patience=1, cooldown=2, factor=0.5,
                                      min_lr=[0.02, 0.001]),
               dict(threshold_mode="abs", threshold=0.05, patience=1)):
        opt, topt = _opt(ag), _opt(torch)
        s = sched.ReduceLROnPlateau(opt, **kw)
        ts = torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **kw)
        for m in metrics:
            opt.step(), topt.step()
            s.step(m)
            ts.step(m)
            _assert_same(opt, topt, f"{kw} at {m}")
            assert s.num_bad_epochs == ts.num_bad_epochs and s.best == ts.best


def test_state_dict_resumes_the_schedule():
    opt = _opt(ag)
    s = sched.CosineAnnealingLR(opt, T_max=10)
    opt.step()
    for _ in range(4):
        s.step()
    saved, lrs = s.state_dict(), [g["lr"] for g in opt.param_groups]
    assert "optimizer" not in saved and saved["last_epoch"] == 4
    rest = []
    for _ in range(3):
        s.step()
        rest.append(s.get_last_lr())
    opt2 = _opt(ag)
    s2 = sched.CosineAnnealingLR(opt2, T_max=10)
    s2.load_state_dict(saved)
    for g, lr in zip(opt2.param_groups, lrs):
        g["lr"] = lr
    assert [(s2.step(), s2.get_last_lr())[1] for _ in range(3)] == rest


def test_epoch_argument_uses_the_closed_form(torch):
    opt, topt = _opt(ag), _opt(torch)
    s = sched.StepLR(opt, step_size=3, gamma=0.5)
    ts = torch.optim.lr_scheduler.StepLR(topt, step_size=3, gamma=0.5)
    opt.step(), topt.step()
    with pytest.warns(UserWarning, match="epoch parameter"):
        s.step(7)
    with pytest.warns(UserWarning):
        ts.step(7)
    assert s.get_last_lr() == ts.get_last_lr() == [0.1 * 0.25, 0.05 * 0.25]


def test_errors_match_torch(torch):
    cases = [
        (lambda S, o: S.StepLR(object(), 3), TypeError, "object is not an Optimizer"),
        (lambda S, o: S.LambdaLR(o, [_lambda]), ValueError, "Expected 2 lr_lambdas, but got 1"),
        (lambda S, o: S.ConstantLR(o, factor=2.0), ValueError, "between 0 and 1"),
        (lambda S, o: S.LinearLR(o, start_factor=0), ValueError, "greater than 0"),
        (lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=0), ValueError,
         "Expected positive integer T_0, but got 0"),
        (lambda S, o: S.OneCycleLR(o, max_lr=1.0), ValueError, "You must define either"),
        (lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=5, pct_start=1), ValueError,
         "Expected float between 0 and 1 pct_start"),
        (lambda S, o: S.CyclicLR(o, 0.1, 1.0, mode="zigzag"), ValueError,
         "mode is invalid and scale_fn is None"),
        (lambda S, o: S.CyclicLR(o, [0.1], 1.0), ValueError,
         "base_lr must have the same length as optimizer.param_groups"),
        (lambda S, o: S.ReduceLROnPlateau(o, factor=1.0), ValueError, "Factor should be < 1.0."),
        (lambda S, o: S.ReduceLROnPlateau(o, mode="mid"), ValueError, "mode mid is unknown!"),
        (lambda S, o: S.SequentialLR(o, [S.StepLR(o, 2)], milestones=[3]), ValueError,
         "one more than the number of milestone points"),
        (lambda S, o: S.ChainedScheduler([S.ReduceLROnPlateau(o)]), ValueError,
         "does not support `ReduceLROnPlateau`"),
        (lambda S, o: S.StepLR(o, 2, last_epoch=3), KeyError, "initial_lr"),
    ]
    for fn, exc, msg in cases:
        for lib in (ag, torch):
            with pytest.raises(exc, match=msg):
                fn(lib.optim.lr_scheduler, _opt(lib))
    opt = _opt(ag)
    one = sched.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    opt.step()
    one.step()
    one.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        one.step()


def test_stepping_the_schedule_first_warns_as_torch(torch):
    for lib in (ag, torch):
        opt = _opt(lib)
        s = lib.optim.lr_scheduler.StepLR(opt, 2)
        with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
            s.step()
    opt = _opt(ag)
    s = sched.StepLR(opt, 2)
    opt.step()
    s.step()                                    # the right order: no warning (errors here)
