"""Side-by-side benchmarks: arraygrad vs torch vs a hand-written NumPy floor.

    python bench/run.py            # about a minute; torch is optional (n/a if absent)

1. a chain of 100 small elementwise ops, forward + backward: µs per op
   (the per-op overhead of recording and running the graph);
2. the same chain on 10^6-element arrays: µs per op (memory-bound work);
3. one MLP training step, batch 256, 784-512-512-10, ReLU, cross-entropy,
   SGD: ms per step.
4. per-op overhead: the chain's forward alone, a custom Function (fwd + bwd, and under
   func.grad), a 10^5-op scalar chain (deep graphs), a loop of autograd.grad per sample;
5. conv2d forward + backward, batch 64, 16 -> 32 channels, 3x3, 32x32 images, and one
   training step of a small CNN on 3x32x32 images: one thread (torch and the BLAS).

The NumPy floor does the same arithmetic with no autograd at all: the forward
pass keeps what the hand-derived backward needs, then the backward runs.
"""
import os
import platform
import sys
import time

import numpy as np

try:
    import arraygrad as ag
except ImportError:     # running from a checkout without `pip install -e .`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
    import arraygrad as ag
import arraygrad.nn.functional as agF

try:
    import torch
    import torch.nn.functional as tF
    import torch.func  # noqa: F401
except ImportError:
    torch = None

CHAIN = 100
SMALL, LARGE = 16, 10 ** 6
BATCH, SIZES, LR = 256, (784, 512, 512, 10), 0.01


def compare(fns, budget, min_rounds=5, max_rounds=2000):
    """Best seconds per call of each of `fns`, run in interleaved rounds within ~`budget` s.

    Interleaving spreads background load evenly over the contenders, and the best
    round is the one least disturbed by it (as `timeit` advises).
    """
    for fn in fns.values():
        fn()
    times = {k: [] for k in fns}
    start = time.perf_counter()
    rounds = 0
    while rounds < min_rounds or (time.perf_counter() - start < budget and rounds < max_rounds):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
        rounds += 1
    return {k: min(v) for k, v in times.items()}


# ----------------------------------------------------------------- 1, 2: elementwise chain
# The chain cycles through mul by a constant array, add a constant array, tanh, sin:
# bounded values, and every op has a non-trivial derivative.
def chain_lib(lib, x0, a, b):
    def step():
        x = x0.detach().requires_grad_(True)
        y = x
        for i in range(CHAIN):
            k = i % 4
            y = y * a if k == 0 else y + b if k == 1 else lib.tanh(y) if k == 2 else lib.sin(y)
        y.backward(ones)
        return x.grad
    ones = lib.ones_like(x0)
    return step


def chain_numpy(x0, a, b):
    def step():
        saved = []
        y = x0
        for i in range(CHAIN):
            k = i % 4
            if k == 0:
                y = y * a
            elif k == 1:
                y = y + b
            elif k == 2:
                y = np.tanh(y)
                saved.append(y)
            else:
                saved.append(y)
                y = np.sin(y)
        g = np.ones_like(x0)
        for i in reversed(range(CHAIN)):
            k = i % 4
            if k == 0:
                g = g * a
            elif k == 2:
                t = saved.pop()
                g = g * (1 - t * t)
            elif k == 3:
                g = g * np.cos(saved.pop())
        return g
    return step


def bench_chain(n, budget):
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal(n).astype(np.float32)
    a = rng.uniform(0.9, 1.1, n).astype(np.float32)
    b = rng.uniform(-0.1, 0.1, n).astype(np.float32)
    ref = chain_numpy(x0, a, b)()
    steps = {"numpy": chain_numpy(x0, a, b),
             "arraygrad": chain_lib(ag, ag.tensor(x0), ag.tensor(a), ag.tensor(b))}
    if torch is not None:
        steps["torch"] = chain_lib(torch, torch.tensor(x0), torch.tensor(a), torch.tensor(b))
    for k, step in steps.items():     # all compute the same gradient
        np.testing.assert_allclose(np.asarray(step()), ref, rtol=1e-3, atol=1e-5, err_msg=k)
    return {k: t / CHAIN for k, t in compare(steps, budget).items()}


# ----------------------------------------------------------------- 3: MLP step
def init_weights():
    rng = np.random.default_rng(1)
    ws = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        bound = 1 / np.sqrt(fan_in)
        ws.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        ws.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], BATCH)
    return ws, x, y


def mlp_lib(lib, F, ws, x, y):
    """The same model in arraygrad or torch: Linear layers, optimizer SGD."""
    model = lib.nn.Sequential(lib.nn.Linear(SIZES[0], SIZES[1]), lib.nn.ReLU(),
                              lib.nn.Linear(SIZES[1], SIZES[2]), lib.nn.ReLU(),
                              lib.nn.Linear(SIZES[2], SIZES[3]))
    with lib.no_grad():
        for p, w in zip(model.parameters(), ws):
            p.copy_(lib.tensor(w))
    opt = lib.optim.SGD(model.parameters(), lr=LR)
    x, y = lib.tensor(x), lib.tensor(y)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def mlp_numpy(ws, x, y):
    ws = [w.copy() for w in ws]
    onehot = np.eye(SIZES[-1], dtype=np.float32)[y]

    def step():
        w1, b1, w2, b2, w3, b3 = ws
        h1 = np.maximum(x @ w1.T + b1, 0)
        h2 = np.maximum(h1 @ w2.T + b2, 0)
        z = h2 @ w3.T + b3
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = float(np.mean(np.log(s)[:, 0] - (z * onehot).sum(1)))
        dz = (e / s - onehot) / BATCH
        dh2 = (dz @ w3) * (h2 > 0)
        dh1 = (dh2 @ w2) * (h1 > 0)
        grads = (dh1.T @ x, dh1.sum(0), dh2.T @ h1, dh2.sum(0), dz.T @ h2, dz.sum(0))
        for w, g in zip(ws, grads):
            w -= LR * g
        return loss
    return step


def bench_mlp(budget):
    ws, x, y = init_weights()
    steps = {"numpy": mlp_numpy(ws, x, y), "arraygrad": mlp_lib(ag, agF, ws, x, y)}
    if torch is not None:
        steps["torch"] = mlp_lib(torch, tF, ws, x, y)
    losses = {k: [s() for _ in range(3)] for k, s in steps.items()}
    for k, v in losses.items():    # all three train the same model the same way
        np.testing.assert_allclose(v, losses["numpy"], rtol=1e-3, err_msg=k)
    return compare(steps, budget)


# ----------------------------------------------------------------- 4, 5: transforms
# Side by side with torch.func; the third column is a Python loop over the batch
# (per-sample grads) or over the inputs (Hessian rows) in arraygrad.
PS_BATCH, PS_IN, PS_OUT, HESS_N = 512, 100, 10, 100


def bench_per_sample(budget):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((PS_OUT, PS_IN))
    x0 = rng.standard_normal((PS_BATCH, PS_IN))
    t0 = rng.integers(0, PS_OUT, PS_BATCH)

    def make(lib, F):
        w, x, t = lib.tensor(w0), lib.tensor(x0), lib.tensor(t0)

        def loss(w, xi, ti):
            return F.cross_entropy((xi @ w.T).unsqueeze(0), ti.unsqueeze(0))
        per_sample = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
        return lambda: per_sample(w, x, t)
    fns = {"arraygrad": make(ag, agF)}
    w, x, t = ag.tensor(w0), ag.tensor(x0), ag.tensor(t0)
    g1 = ag.func.grad(lambda w, xi, ti: agF.cross_entropy((xi @ w.T).unsqueeze(0), ti.unsqueeze(0)))
    fns["numpy"] = lambda: ag.stack([g1(w, x[i], t[i]) for i in range(PS_BATCH)])
    if torch is not None:
        fns["torch"] = make(torch, tF)
    return compare(fns, budget, min_rounds=2)


def bench_hessian(budget):
    rng = np.random.default_rng(1)
    a0, x0 = rng.standard_normal((HESS_N, HESS_N)), rng.standard_normal(HESS_N)

    def make(lib):
        a, x = lib.tensor(a0), lib.tensor(x0)
        f = lambda x: (lib.tanh(a @ x) ** 2).sum()  # noqa: E731
        h = lib.func.hessian(f)
        return lambda: h(x)
    fns = {"arraygrad": make(ag)}
    a, x = ag.tensor(a0), ag.tensor(x0)
    g = ag.func.grad(lambda x: (ag.tanh(a @ x) ** 2).sum())
    eye = ag.eye(HESS_N, dtype=ag.float64)
    fns["numpy"] = lambda: ag.stack([ag.func.jvp(g, (x,), (eye[i],))[1] for i in range(HESS_N)])
    if torch is not None:
        fns["torch"] = make(torch)
    return compare(fns, budget, min_rounds=2)


# ----------------------------------------------------------------- conv rows (one thread)
CONV_BATCH, CONV_IN, CONV_OUT, CONV_HW = 64, 16, 32, 32


class one_thread:
    """torch and NumPy's BLAS limited to one thread (threadpoolctl when installed)."""

    def __enter__(self):
        self.torch_threads = torch.get_num_threads() if torch is not None else None
        if torch is not None:
            torch.set_num_threads(1)
        try:
            from threadpoolctl import threadpool_limits
            self.limits = threadpool_limits(1)
        except ImportError:
            self.limits = None
        return self

    def __exit__(self, *exc):
        if self.torch_threads is not None:
            torch.set_num_threads(self.torch_threads)
        if self.limits is not None:
            self.limits.unregister()


def conv_numpy(x, w, g):
    """im2col + GEMM by hand: the output and the gradients of input and weight."""
    n, c, h, wd = x.shape
    o = w.shape[0]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.empty((n, c, 3, 3, h, wd), x.dtype)
    for i in range(3):
        for j in range(3):
            cols[:, :, i, j] = xp[:, :, i:i + h, j:j + wd]
    cols = cols.reshape(n, c * 9, h * wd)
    wm = w.reshape(o, c * 9)
    out = (wm @ cols).reshape(n, o, h, wd)
    gm = g.reshape(n, o, h * wd)
    dw = (gm @ cols.transpose(0, 2, 1)).sum(0).reshape(w.shape)
    dcols = (wm.T @ gm).reshape(n, c, 3, 3, h, wd)
    dx = np.zeros_like(xp)
    for i in range(3):
        for j in range(3):
            dx[:, :, i:i + h, j:j + wd] += dcols[:, :, i, j]
    return out, dx[:, :, 1:-1, 1:-1], dw


def bench_conv(budget):
    rng = np.random.default_rng(2)
    x0 = rng.standard_normal((CONV_BATCH, CONV_IN, CONV_HW, CONV_HW)).astype(np.float32)
    w0 = (rng.standard_normal((CONV_OUT, CONV_IN, 3, 3)) * 0.1).astype(np.float32)
    g0 = rng.standard_normal((CONV_BATCH, CONV_OUT, CONV_HW, CONV_HW)).astype(np.float32)

    def make(lib, F):
        x = lib.tensor(x0, requires_grad=True)
        w = lib.tensor(w0, requires_grad=True)
        g = lib.tensor(g0)

        def step():
            y = F.conv2d(x, w, padding=1)
            return (y, *lib.autograd.grad(y, (x, w), g))
        return step
    fns = {"numpy": lambda: conv_numpy(x0, w0, g0), "arraygrad": make(ag, agF)}
    if torch is not None:
        fns["torch"] = make(torch, tF)
    with one_thread():
        want = fns["numpy"]()
        for k, fn in fns.items():     # all compute the same output and gradients
            for got, ref in zip(fn(), want):
                np.testing.assert_allclose(np.asarray(got.detach() if k != "numpy" else got),
                                           ref, rtol=1e-3, atol=1e-3, err_msg=k)
        return compare(fns, budget)


def cnn_lib(lib, F, ws, x0, y0):
    """conv 3->16, relu, maxpool, conv 16->32, relu, maxpool, linear, cross-entropy, SGD."""
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(32 * 8 * 8, 10))
    with lib.no_grad():
        for p, w in zip(model.parameters(), ws):
            p.copy_(lib.tensor(w))
    opt = lib.optim.SGD(model.parameters(), lr=LR)
    x, y = lib.tensor(x0), lib.tensor(y0)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def bench_cnn(budget):
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal((CONV_BATCH, 3, 32, 32)).astype(np.float32)
    y0 = rng.integers(0, 10, CONV_BATCH)
    shapes = [(16, 3, 3, 3), (16,), (32, 16, 3, 3), (32,), (10, 32 * 8 * 8), (10,)]
    ws = [rng.uniform(-0.1, 0.1, s).astype(np.float32) for s in shapes]
    fns = {"arraygrad": cnn_lib(ag, agF, ws, x0, y0)}
    if torch is not None:
        fns["torch"] = cnn_lib(torch, tF, ws, x0, y0)
    with one_thread():
        losses = {k: [s() for _ in range(3)] for k, s in fns.items()}
        for k, v in losses.items():    # both train the same model the same way
            np.testing.assert_allclose(v, losses["arraygrad"], rtol=1e-3, err_msg=k)
        return compare(fns, budget)


# ----------------------------------------------------------------- overhead rows
def forward_lib(lib, x0, a, b):
    """The chain's forward alone, with tracking (recording cost without the backward)."""
    def step():
        y = x0.detach().requires_grad_(True)
        for i in range(CHAIN):
            k = i % 4
            y = y * a if k == 0 else y + b if k == 1 else lib.tanh(y) if k == 2 else lib.sin(y)
        return y
    return step


def forward_numpy(x0, a, b):
    def step():
        y = x0
        for i in range(CHAIN):
            k = i % 4
            y = y * a if k == 0 else y + b if k == 1 else np.tanh(y) if k == 2 else np.sin(y)
        return y
    return step


def bench_forward(budget):
    rng = np.random.default_rng(0)
    x0, a, b = (rng.standard_normal(SMALL).astype(np.float32) for _ in range(3))
    steps = {"numpy": forward_numpy(x0, a, b),
             "arraygrad": forward_lib(ag, ag.tensor(x0), ag.tensor(a), ag.tensor(b))}
    if torch is not None:
        steps["torch"] = forward_lib(torch, torch.tensor(x0), torch.tensor(a), torch.tensor(b))
    return {k: t / CHAIN for k, t in compare(steps, budget).items()}


def exp_function(lib):
    """exp as a custom Function, ctx style (forward takes ctx, saves its output)."""
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y
    return Exp


def exp_function_transformable(lib):
    """The same with setup_context, as func transforms require."""
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y
    return Exp


def bench_function(budget):
    x0 = np.linspace(-1, 1, SMALL)

    def make(lib):
        exp = exp_function(lib)
        x = lib.tensor(x0, requires_grad=True)
        return lambda: lib.autograd.grad(exp.apply(x), x, lib.ones_like(x))
    x = np.linspace(-1, 1, SMALL)
    fns = {"numpy": lambda: np.exp(x) * np.ones_like(x), "arraygrad": make(ag)}
    if torch is not None:
        fns["torch"] = make(torch)
    return compare(fns, budget)


def bench_function_grad(budget):
    x0 = np.linspace(-1, 1, SMALL)

    def make(lib):
        exp = exp_function_transformable(lib)
        g = lib.func.grad(lambda x: exp.apply(x).sum())
        x = lib.tensor(x0)
        return lambda: g(x)
    fns = {"arraygrad": make(ag)}
    if torch is not None:
        fns["torch"] = make(torch)
    return compare(fns, budget)


DEEP = 10 ** 5


def bench_deep(budget):
    """A 10^5-op chain of scalar ops, fwd + bwd, with the garbage collector on: deep graphs
    must not make collections scan every node again and again."""
    def make(lib):
        def step():
            x = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
            y = x
            for _ in range(DEEP // 2):
                y = y * 0.999
                y = y + 0.001
            y.backward()
            return x.grad
        return step

    def floor():
        y, g = 0.5, 1.0
        for _ in range(DEEP // 2):
            y = y * 0.999 + 0.001
            g = g * 0.999
        return g
    fns = {"numpy": floor, "arraygrad": make(ag)}
    if torch is not None:
        fns["torch"] = make(torch)
    return compare(fns, budget, min_rounds=1, max_rounds=3)


LOOP_SAMPLES = 64


def bench_grad_loop(budget):
    """autograd.grad once per sample of a small linear model: the per-call fixed cost."""
    rng = np.random.default_rng(0)
    w0, x0 = rng.standard_normal((PS_OUT, PS_IN)), rng.standard_normal((LOOP_SAMPLES, PS_IN))

    def make(lib):
        w, x = lib.tensor(w0, requires_grad=True), lib.tensor(x0)

        def step():
            return [lib.autograd.grad(lib.tanh(w @ x[i]).sum(), w)[0]
                    for i in range(LOOP_SAMPLES)]
        return step
    fns = {"arraygrad": make(ag)}
    if torch is not None:
        fns["torch"] = make(torch)
    return {k: t / LOOP_SAMPLES for k, t in compare(fns, budget, min_rounds=2).items()}


def overhead_rows(budget):
    return [
        (f"chain of {CHAIN} ops fwd only, {SMALL}", "us/op", 1e6, bench_forward(budget)),
        (f"custom Function fwd+bwd, {SMALL}", "us", 1e6, bench_function(budget)),
        (f"Function under func.grad, {SMALL}", "us", 1e6, bench_function_grad(budget)),
        ("10^5-op scalar chain fwd+bwd", "s", 1, bench_deep(budget)),
        (f"autograd.grad per sample, {PS_IN}->{PS_OUT}", "us", 1e6, bench_grad_loop(budget)),
    ]


# ----------------------------------------------------------------- report
def row(name, unit, scale, r):
    def cell(k):
        return f"{r[k] * scale:12.2f}" if k in r else f"{'n/a':>12}"

    def ratio(k):
        return f"{r['arraygrad'] / r[k]:10.2f}x" if k in r else f"{'n/a':>11}"
    return f"{name:<34}{unit:>7}{cell('arraygrad')}{cell('torch')}{cell('numpy')}" \
           f"{ratio('torch')}{ratio('numpy')}"


def print_rows(title, col2, col3, rows):
    print(f"\n{title:<34}{'unit':>7}{'arraygrad':>12}{col2:>12}{col3:>12}"
          f"{'ag/' + col2[:5]:>11}{'ag/' + col3[:5]:>11}")
    for r in rows:
        print(row(*r))


def main():
    budget = float(os.environ.get("BENCH_BUDGET", "3"))
    if os.environ.get("BENCH_ONLY") == "overhead":     # the per-op rows alone (quick)
        print_rows("overhead", "torch", "numpy floor", [
            (f"chain of {CHAIN} ops, {SMALL} elems", "us/op", 1e6, bench_chain(SMALL, budget))]
            + overhead_rows(budget))
        return
    print(f"arraygrad {ag.__version__}, numpy {np.__version__}, "
          f"torch {torch.__version__ if torch else 'n/a (not installed)'}, "
          f"python {platform.python_version()}, {os.cpu_count()} cpus"
          + (f", torch threads {torch.get_num_threads()}" if torch else ""))
    results = [
        (f"chain of {CHAIN} ops, {SMALL} elems", "us/op", 1e6, bench_chain(SMALL, budget)),
        (f"chain of {CHAIN} ops, 1e6 elems", "us/op", 1e6, bench_chain(LARGE, 4 * budget)),
        (f"MLP step {'-'.join(map(str, SIZES))}, b{BATCH}", "ms", 1e3, bench_mlp(4 * budget)),
    ]
    print()
    print(f"{'benchmark':<34}{'unit':>7}{'arraygrad':>12}{'torch':>12}{'numpy floor':>12}"
          f"{'ag/torch':>11}{'ag/numpy':>11}")
    for r in results:
        print(row(*r))
    print("\nforward + backward (and the SGD update for the MLP); best of interleaved rounds.")
    conv = [
        (f"conv2d b{CONV_BATCH} {CONV_IN}->{CONV_OUT} 3x3 {CONV_HW}x{CONV_HW}", "ms", 1e3,
         bench_conv(budget)),
        (f"small CNN step, b{CONV_BATCH} 3x32x32", "ms", 1e3, bench_cnn(budget)),
    ]
    print(f"\n{'one thread':<34}{'unit':>7}{'arraygrad':>12}{'torch':>12}{'numpy floor':>12}"
          f"{'ag/torch':>11}{'ag/numpy':>11}")
    for r in conv:
        print(row(*r))
    print("conv2d: forward + input and weight gradients (floor: im2col + GEMM by hand); CNN: "
          "conv 3->16, pool, conv 16->32, pool, linear, cross-entropy, SGD.")
    print_rows("overhead", "torch", "numpy floor", overhead_rows(budget))
    print("custom Function: exp with ctx.save_for_backward (under func.grad: setup_context); "
          "the floor of the deep chain is plain Python floats.")
    transforms = [
        (f"per-sample grads, linear b{PS_BATCH}", "ms", 1e3, bench_per_sample(budget)),
        (f"hessian, {HESS_N} inputs", "ms", 1e3, bench_hessian(budget)),
    ]
    print(f"\n{'transform':<34}{'unit':>7}{'arraygrad':>12}{'torch.func':>12}{'python loop':>12}"
          f"{'ag/torch':>11}{'ag/loop':>11}")
    for r in transforms:
        print(row(*r))


if __name__ == "__main__":
    main()
