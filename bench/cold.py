"""How much of a microsecond row's figure is cache refill: one row's calls timed hot, alone, and
after a call that fills the caches with other work (the other library's call, as run.py's
interleaved rounds do, or a large array sum)."""
import argparse
import os
import statistics
import time

import numpy as np

import run


def per_call(fn, before, n):
    """Median µs of `fn()`, each call timed alone, `before()` (when given) run ahead of each."""
    ts = []
    for _ in range(n):
        if before is not None:
            before()
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e6


def hot(fn, n):
    """Mean µs of `fn()` in a loop of `n` calls."""
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


def main(argv=None):
    rows = {r.key: r for r in run.ROWS}
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("row", nargs="?", default="function_grad", choices=sorted(rows))
    p.add_argument("--vs", default="torch", choices=("torch", "hips"), help="the other library")
    p.add_argument("--calls", type=int, default=2000, help="calls per figure")
    p.add_argument("--pin", action="store_true", help="pin the process to one CPU")
    args = p.parse_args(argv)
    run.load(["arraygrad", args.vs, "numpy"])
    if args.pin and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    n, big = args.calls, np.ones(4_000_000)
    with run.one_thread():
        fns = rows[args.row].build(False)
        ag, other = fns["arraygrad"], fns.get(args.vs)
        cases = [("a loop of calls (hot)", lambda f, g: hot(f, n)),
                 ("one call per timing, nothing between", lambda f, g: per_call(f, None, n)),
                 ("one call after summing a 32 MB array", lambda f, g: per_call(f, big.sum, n))]
        if other is not None:
            cases.insert(2, ("one call after one of the other library's",
                             lambda f, g: per_call(f, g, n)))
        print(f"| {args.row}: how it was called | arraygrad µs | {args.vs} µs |\n|---|---|---|")
        for title, time_it in cases:
            theirs = "n/a" if other is None else f"{time_it(other, ag):.3g}"
            print(f"| {title} | {time_it(ag, other):.3g} | {theirs} |")


if __name__ == "__main__":
    main()
