"""torch.utils.benchmark: `Timer` and the `Measurement` it returns, for timing snippets.

    >>> t = Timer("x * y", globals={"x": arraygrad.ones(3), "y": arraygrad.ones(3)})
    >>> t.blocked_autorange(min_run_time=0.1).median      # seconds per run
"""
import statistics
import textwrap
import timeit

__all__ = ["Timer", "Measurement"]


class Measurement:
    """Times of `number_per_run` executions each, with torch's summary statistics."""

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata

    @property
    def times(self):
        """Seconds per single execution, one entry per measured block."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def mean(self):
        return statistics.fmean(self.times)

    @property
    def median(self):
        return statistics.median(self.times)

    @property
    def iqr(self):
        if len(self.times) < 2:
            return 0.0
        q = statistics.quantiles(self.times, n=4, method="inclusive")
        return q[2] - q[0]

    @property
    def stmt(self):
        return self.task_spec["stmt"]

    @property
    def label(self):
        return self.task_spec["label"]

    @property
    def description(self):
        return self.task_spec["description"]

    def __repr__(self):
        unit, scale = _unit(self.median)
        label = self.task_spec["label"] or ""
        head = f"<arraygrad.utils.benchmark.Measurement object at {hex(id(self))}>"
        lines = [head, label, textwrap.indent(self.task_spec["stmt"], "  ")] if label else \
            [head, self.task_spec["stmt"]]
        stats = f"  {self.median * scale:.2f} {unit}"
        if len(self.times) > 1:
            stats = (f"  Median: {self.median * scale:.2f} {unit}\n"
                     f"  IQR:    {self.iqr * scale:.2f} {unit} ({len(self.times)} measurements, "
                     f"{self.number_per_run} runs per measurement, "
                     f"{self.task_spec['num_threads']} thread)")
        return "\n".join(lines + [stats])


def _unit(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e3), ("us", 1e6), ("ns", 1e9)):
        if seconds * scale >= 1:
            return unit, scale
    return "ns", 1e9


class Timer:
    """Time `stmt` after `setup`, with `globals` as its namespace (torch.utils.benchmark.Timer)."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timeit.default_timer,
                 globals=None, label=None, sub_label=None, description=None, env=None,
                 num_threads=1, language="python"):
        if language != "python":
            raise ValueError(f"Timer: only language='python' is supported, got {language!r}")
        if not isinstance(stmt, str) or not isinstance(setup, str):
            raise ValueError("Timer: `stmt` and `setup` must be strings of Python code")
        self._timer = timeit.Timer(stmt=stmt, setup=(global_setup + "\n" + setup).strip() or
                                   "pass", timer=timer, globals=dict(globals or {}))
        self._task_spec = {"stmt": stmt, "setup": setup, "global_setup": global_setup,
                           "label": label, "sub_label": sub_label, "description": description,
                           "env": env, "num_threads": num_threads}

    def _measurement(self, number, times):
        return Measurement(number, times, dict(self._task_spec))

    def timeit(self, number=1000000):
        """One block of `number` runs (after one warm-up run)."""
        self._timer.timeit(1)
        return self._measurement(number, [self._timer.timeit(number)])

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")     # as torch

    def _block_size(self, min_block):
        number = 1
        while True:
            t = self._timer.timeit(number)
            if t >= min_block:
                return number
            number *= 10

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs sized to about 10 ms each, repeated for at least `min_run_time`."""
        number = self._block_size(0.01)
        times, total = [], 0.0
        while total < min_run_time or len(times) < 3:
            t = self._timer.timeit(number)
            times.append(t)
            total += t
            if callback is not None:
                callback(number, t)
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """Blocks until the interquartile range is within `threshold` of the median."""
        number = self._block_size(0.01)
        times, total = [], 0.0
        while total < max_run_time:
            t = self._timer.timeit(number)
            times.append(t)
            total += t
            if callback is not None:
                callback(number, t)
            m = self._measurement(number, times)
            if total >= min_run_time and len(times) >= 4 and m.iqr / m.median < threshold:
                break
        return self._measurement(number, times)
