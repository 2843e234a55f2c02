"""Differential fuzzer of optimizers and learning-rate schedules against torch.

A case draws an optimizer with random valid options (momentum, nesterov, weight decay, amsgrad,
maximize, ...), two parameter groups with their own options, a schedule (or none), and a run
of steps with random gradients: some steps leave a parameter's gradient None, some call
`zero_grad(set_to_none=False)`, and halfway the optimizer's `state_dict()` is loaded into a
fresh optimizer over copies of the parameters that carries on. Every step's parameters, the
learning rates the schedule sets and the final state must equal torch's (float64, 1e-10).

    PYTHONPATH=src python tests/optim_fuzz.py --cases 500 [--start 0] [--show 3]
"""
import random
import sys

import numpy as np

OPTIMIZERS = {
    "SGD": lambda r: dict(lr=r.choice([0.1, 0.01]), momentum=r.choice([0, 0.9]),
                          dampening=r.choice([0, 0.1]), weight_decay=r.choice([0, 0.01]),
                          maximize=r.random() < 0.2),
    "Adam": lambda r: dict(lr=r.choice([0.1, 0.01]), betas=r.choice([(0.9, 0.999), (0.8, 0.9)]),
                           eps=r.choice([1e-8, 1e-3]), weight_decay=r.choice([0, 0.01]),
                           amsgrad=r.random() < 0.3, maximize=r.random() < 0.2),
    "AdamW": lambda r: dict(lr=r.choice([0.1, 0.01]), weight_decay=r.choice([0, 0.01, 0.1]),
                            amsgrad=r.random() < 0.3, maximize=r.random() < 0.2),
    "RMSprop": lambda r: dict(lr=r.choice([0.01, 0.001]), alpha=r.choice([0.99, 0.9]),
                              momentum=r.choice([0, 0.5]), centered=r.random() < 0.4,
                              weight_decay=r.choice([0, 0.01]), maximize=r.random() < 0.2),
    "Adagrad": lambda r: dict(lr=r.choice([0.1, 0.01]), lr_decay=r.choice([0, 0.01]),
                              weight_decay=r.choice([0, 0.01]),
                              initial_accumulator_value=r.choice([0, 0.1]),
                              maximize=r.random() < 0.2),
    "Adadelta": lambda r: dict(lr=r.choice([1.0, 0.5]), rho=r.choice([0.9, 0.5]),
                               weight_decay=r.choice([0, 0.01]), maximize=r.random() < 0.2),
    "Adamax": lambda r: dict(lr=r.choice([0.01, 0.002]), weight_decay=r.choice([0, 0.01]),
                             maximize=r.random() < 0.2),
    "NAdam": lambda r: dict(lr=r.choice([0.01, 0.002]), weight_decay=r.choice([0, 0.01]),
                            momentum_decay=r.choice([4e-3, 1e-2]),
                            decoupled_weight_decay=r.random() < 0.3, maximize=r.random() < 0.2),
    "RAdam": lambda r: dict(lr=r.choice([0.01, 0.001]), weight_decay=r.choice([0, 0.01]),
                            decoupled_weight_decay=r.random() < 0.3, maximize=r.random() < 0.2),
    "Rprop": lambda r: dict(lr=r.choice([0.01, 0.05]), etas=r.choice([(0.5, 1.2), (0.3, 1.5)]),
                            step_sizes=r.choice([(1e-6, 50), (1e-3, 0.1)]),
                            maximize=r.random() < 0.2),
    "ASGD": lambda r: dict(lr=r.choice([0.01, 0.05]), lambd=r.choice([1e-4, 1e-2]),
                           alpha=r.choice([0.75, 0.5]), t0=r.choice([1e6, 0, 2]),
                           weight_decay=r.choice([0, 0.01]), maximize=r.random() < 0.2),
}

SCHEDULES = [
    None,
    "StepLR(opt, step_size=2, gamma=0.5)",
    "MultiStepLR(opt, milestones=[1, 3], gamma=0.3)",
    "ExponentialLR(opt, gamma=0.9)",
    "CosineAnnealingLR(opt, T_max=4, eta_min=0.001)",
    "LinearLR(opt, start_factor=0.5, total_iters=3)",
    "ConstantLR(opt, factor=0.5, total_iters=2)",
    "PolynomialLR(opt, total_iters=4, power=2.0)",
    "CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.0001)",
    "OneCycleLR(opt, max_lr=0.05, total_steps=8)",
    "CyclicLR(opt, base_lr=0.001, max_lr=0.01, step_size_up=2, cycle_momentum=False)",
    "LambdaLR(opt, lr_lambda=lambda e: 1.0 / (1 + e))",
]


def generate(index):
    """A case: (optimizer name, its options, the second group's overrides, schedule, steps)."""
    r = random.Random(index)
    name = r.choice(sorted(OPTIMIZERS))
    opts = OPTIMIZERS[name](r)
    if name == "SGD" and opts["momentum"] and not opts["dampening"] and r.random() < 0.5:
        opts["nesterov"] = True
    group2 = {k: v for k, v in OPTIMIZERS[name](r).items() if r.random() < 0.5}
    if name == "SGD" and opts.get("nesterov") and ("momentum" in group2 or "dampening" in group2):
        group2.pop("momentum", None)
        group2.pop("dampening", None)
    schedule = r.choice(SCHEDULES)
    if schedule and name == "RMSprop" and "OneCycle" in schedule:
        schedule = schedule.replace(")", ", cycle_momentum=False)")
    rng = np.random.default_rng(index)
    shapes = [(3,), (2, 2), (4,)]
    init = [np.round(rng.standard_normal(s), 3) for s in shapes]
    steps = []
    for _ in range(r.randint(3, 7)):
        grads = [None if r.random() < 0.15 else np.round(rng.standard_normal(s), 3)
                 for s in shapes]
        steps.append((grads, r.choice(["none", "zero", "keep"])))
    return dict(index=index, name=name, opts=opts, group2=group2, schedule=schedule,
                init=init, steps=steps, reload=r.randint(1, len(steps) - 1))


def _make(lib, case, params):
    groups = [{"params": params[:2]}, dict({"params": params[2:]}, **case["group2"])]
    opt = getattr(lib.optim, case["name"])(groups, **case["opts"])
    sched = None
    if case["schedule"]:
        ns = {"opt": opt, **{k: getattr(lib.optim.lr_scheduler, k)
                             for k in dir(lib.optim.lr_scheduler) if k[0].isupper()}}
        sched = eval(case["schedule"], ns)
    return opt, sched


def run(lib, case):
    """The trajectory: parameters and learning rates after each step, then the final state."""
    params = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in case["init"]]
    opt, sched = _make(lib, case, params)
    log = []
    for i, (grads, zero) in enumerate(case["steps"]):
        if i == case["reload"]:
            state = opt.state_dict()
            params = [p.detach().clone().requires_grad_() for p in params]
            opt2, sched2 = _make(lib, case, params)
            opt2.load_state_dict(state)
            if sched is not None:
                sched2.load_state_dict(sched.state_dict())
            opt, sched = opt2, sched2
        if zero == "none":
            opt.zero_grad()
        elif zero == "zero":
            opt.zero_grad(set_to_none=False)
        for p, g in zip(params, grads):
            if g is not None:
                gt = lib.tensor(g, dtype=lib.float64)
                p.grad = gt if p.grad is None else p.grad + gt
        opt.step()
        if sched is not None:
            sched.step()
        log.append([p.detach().numpy().copy() for p in params])
        log.append([g["lr"] for g in opt.param_groups])
    final = opt.state_dict()["state"]
    for k in sorted(final):
        for key in sorted(final[k]):
            v = final[k][key]
            log.append((k, key, np.asarray(v.detach().numpy() if hasattr(v, "detach") else v,
                                           dtype=float)))
    return log


def _close(a, b):
    if isinstance(a, tuple):
        return a[:2] == b[:2] and _close(a[2], b[2])
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return np.allclose(a, b, rtol=1e-10, atol=1e-12, equal_nan=True)


def check(case, ag, torch):
    """None when both libraries agree (or both refuse alike), else a report."""
    def attempt(lib):
        try:
            return run(lib, case)
        except Exception as e:      # the same refusal in both is agreement
            return f"{type(e).__name__}: {e}"
    theirs, ours = attempt(torch), attempt(ag)
    if isinstance(theirs, str) or isinstance(ours, str):
        if isinstance(theirs, str) and isinstance(ours, str) and \
                theirs.split(":")[0] == ours.split(":")[0]:
            return None
        return f"case {case['index']} {case}\n torch: {str(theirs)[:300]}\n ours: {str(ours)[:300]}"
    if len(theirs) == len(ours) and all(_close(a, b) for a, b in zip(ours, theirs)):
        return None
    first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if not _close(a, b)),
                 min(len(ours), len(theirs)))
    return (f"case {case['index']} {case['name']} {case['opts']} group2={case['group2']} "
            f"schedule={case['schedule']} reload={case['reload']}\n first difference at log "
            f"entry {first}:\n torch: {theirs[first] if first < len(theirs) else None}\n"
            f" ours:  {ours[first] if first < len(ours) else None}")


def sweep(n, start=0, show=3):
    import arraygrad as ag
    import torch
    bad = [r for r in (check(generate(i), ag, torch) for i in range(start, start + n)) if r]
    print(f"cases {n} (from {start}): {len(bad)} differ")
    for report in bad[:show]:
        print(report)
    return bad


if __name__ == "__main__":
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--cases", type=int, default=300)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--show", type=int, default=3)
    a = p.parse_args()
    sys.exit(1 if sweep(a.cases, a.start, a.show) else 0)
