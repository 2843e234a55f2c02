"""How much of a microsecond row's figure is cache refill: one row's calls timed hot, alone, and
after a call that fills the caches with other work (the other library's call, as run.py's
interleaved rounds do, or a large array sum). `python bench/cold.py [row] [--pin] [--calls N]`."""
import os
import statistics
import sys
import time

import numpy as np

import run


def per_call(fn, before, n):
    """Median µs of `fn()`, each timed alone, with `before()` run ahead of each timing."""
    ts = []
    for _ in range(n):
        if before is not None:
            before()
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e6


def hot(fn, n):
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


def main(argv):
    n = int(argv[argv.index("--calls") + 1]) if "--calls" in argv else 2000
    rest = [a for i, a in enumerate(argv) if not a.startswith("-") and argv[i - 1] != "--calls"]
    row = rest[0] if rest else "function_grad"
    if "--pin" in argv:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    run.load(["arraygrad", "torch", "numpy"])
    with run.one_thread():
        fns = {k: v for k, v in getattr(run, "row_" + row)(False).items()
               if k in ("arraygrad", "torch")}
        big = np.ones(4_000_000)
        ag, other = fns["arraygrad"], fns.get("torch")
        cases = [("a loop of calls (hot)", lambda f, g: hot(f, n)),
                 ("one call per timing, nothing between", lambda f, g: per_call(f, None, n)),
                 ("one call after one of the other library's", lambda f, g: per_call(f, g, n)),
                 ("one call after summing a 32 MB array", lambda f, g: per_call(f, big.sum, n))]
        print(f"| {row}: how it was called | arraygrad µs | torch µs |\n|---|---|---|")
        for title, time_it in cases:
            a = time_it(ag, other)
            t = time_it(other, ag) if other is not None else float("nan")
            print(f"| {title} | {a:.3g} | {t:.3g} |")


if __name__ == "__main__":
    main(sys.argv[1:])
