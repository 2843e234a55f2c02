"""Logistic regression on a Dask cluster: arraygrad builds each step's loss and gradient as one
lazy graph over a chunked data set larger than any worker's memory, and the cluster runs it.

    pip install 'arraygrad[dask]'
    python examples/dask_logistic.py                      # 2 workers x 400 MiB, 2 GiB of data
    python examples/dask_logistic.py --rows 200000 --steps 5

The features are drawn chunk by chunk on the workers (never whole in one place) and the labels
come from a hidden weight vector. Each L-BFGS closure computes the loss and its gradient with
`arraygrad.compute(loss, grad)`: one pass over the data for both. Before fitting, the gradient
on a subsample is checked against the same formula in NumPy; at the end the time per step is
printed next to NumPy's on a slice that fits in memory.
"""
import argparse
import time

import numpy as np
import dask.array as da
from dask.utils import parse_bytes
from dask.distributed import Client, LocalCluster

import arraygrad as torch
import arraygrad.nn.functional as F


def make_data(rows, features, chunk_rows, seed=0):
    """Features X (rows x features, chunked by rows) and 0/1 labels y, both lazy."""
    rng = da.random.default_rng(seed)
    X = rng.standard_normal((rows, features), chunks=(chunk_rows, features))
    w_true = np.random.default_rng(seed + 1).standard_normal(features)
    noise = rng.standard_normal(rows, chunks=chunk_rows)
    y = ((X @ w_true + noise) > 0).astype(np.float64)
    return X, y


def loss_fn(w, X, y, l2):
    """Mean logistic loss plus an L2 penalty; X and y may be NumPy or Dask arrays."""
    logits = torch.tensor(X) @ w
    return F.binary_cross_entropy_with_logits(logits, torch.tensor(y)) + l2 * (w * w).sum()


def numpy_grad(w, X, y, l2):
    """The same gradient written out in NumPy: X^T (sigmoid(Xw) - y) / n + 2 l2 w."""
    p = 1 / (1 + np.exp(-(X @ w)))
    return X.T @ (p - y) / len(y) + 2 * l2 * w


def worker_peak_memory(client):
    """The largest resident memory any worker process has had so far, in bytes."""
    def peak_rss():     # nested: sent to the workers by value
        try:            # Linux: this process's high-water mark (getrusage's survives exec)
            with open("/proc/self/status") as f:
                return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM:"))
        except OSError:
            import psutil
            return psutil.Process().memory_info().rss
    return max(client.run(peak_rss).values())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=8_000_000)
    p.add_argument("--features", type=int, default=32)
    p.add_argument("--chunk-rows", type=int, default=250_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--memory-limit", default="400MiB", help="per worker")
    p.add_argument("--steps", type=int, default=8, help="L-BFGS iterations")
    p.add_argument("--l2", type=float, default=1e-3)
    p.add_argument("--check-rows", type=int, default=20_000)
    args = p.parse_args(argv)

    X, y = make_data(args.rows, args.features, args.chunk_rows)
    data_bytes = X.nbytes + y.nbytes
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      memory_limit=args.memory_limit, host="127.0.0.1",
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        print(f"data: {args.rows} x {args.features} float64 = {data_bytes / 2**20:.0f} MiB in "
              f"{X.numblocks[0]} chunks; {args.workers} workers, memory limit "
              f"{args.memory_limit} each")

        # the gradient on a subsample against NumPy's formula
        m = min(args.check_rows, args.rows)
        Xs, ys = (np.asarray(a) for a in client.compute([X[:m], y[:m]], sync=True))
        w0 = np.random.default_rng(2).standard_normal(args.features) * 0.1
        w = torch.tensor(w0, requires_grad=True)
        g, = torch.autograd.grad(loss_fn(w, X[:m], y[:m], args.l2), w)
        err = np.abs(g.compute().numpy() - numpy_grad(w0, Xs, ys, args.l2)).max()
        print(f"gradient on {m} rows vs NumPy: max abs difference {err:.2e}")
        assert err < 1e-10, "the gradient computed on the cluster differs from NumPy's"

        # full-batch L-BFGS: each closure is one lazy graph for loss and gradient
        w = torch.zeros(args.features, dtype=torch.float64, requires_grad=True)
        opt = torch.optim.LBFGS([w], lr=1, max_iter=args.steps, line_search_fn="strong_wolfe")
        passes, times = [], []

        def closure():
            opt.zero_grad()
            t0 = time.perf_counter()
            loss = loss_fn(w, X, y, args.l2)
            grad, = torch.autograd.grad(loss, w)
            value, w.grad = torch.compute(loss, grad)
            times.append(time.perf_counter() - t0)
            passes.append(value.item())
            print(f"  pass {len(passes):2d}: loss {passes[-1]:.6f}  {times[-1]:.2f} s")
            return value

        opt.step(closure)
        peak = worker_peak_memory(client)
        per_step = float(np.median(times))
        print(f"loss {passes[0]:.6f} -> {passes[-1]:.6f} in {len(passes)} passes over the data")
        print(f"cluster: {per_step:.2f} s per loss+gradient pass (the workers draw the data again "
              f"each pass), {args.rows / per_step / 1e6:.2f} M rows/s, "
              f"{data_bytes / per_step / 2**20:.0f} MiB/s; peak worker memory "
              f"{peak / 2**20:.0f} MiB (limit {args.memory_limit}, data {data_bytes / 2**20:.0f} MiB)")

        # the same step in NumPy on a slice that fits in memory
        t0 = time.perf_counter()
        wn = torch.tensor(w.detach().numpy(), requires_grad=True)
        torch.autograd.grad(loss_fn(wn, Xs, ys, args.l2), wn)
        t_np = time.perf_counter() - t0
        print(f"NumPy on {m} rows in memory: {m / t_np / 1e6:.2f} M rows/s")
    return {"losses": passes, "grad_error": err, "peak_worker_bytes": peak,
            "data_bytes": data_bytes, "memory_limit": parse_bytes(args.memory_limit),
            "seconds_per_pass": per_step, "rows": args.rows,
            "numpy_seconds_per_pass": t_np * args.rows / m}


if __name__ == "__main__":
    main()
