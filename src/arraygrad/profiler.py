"""torch.profiler: the newer profiler API over `autograd.profiler`, with step schedules.

    from arraygrad.profiler import profile, record_function, ProfilerActivity, schedule
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2),
                 on_trace_ready=lambda p: print(p.key_averages().table(row_limit=5))) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()

Only CPU activity exists here: asking for CUDA warns and profiles the CPU, as torch does
without a GPU. Each recording window is one `autograd.profiler.profile` run.
"""
import enum
import os
import socket
import time
import warnings

from .autograd.profiler import profile as _collector, record_function  # noqa: F401


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 2


def supported_activities():
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """step -> ProfilerAction: skip `skip_first` steps, then cycles of `wait` idle, `warmup`
    and `active` recorded steps (the last one saves), `repeat` times (0: forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      UserWarning, stacklevel=2)

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step should be non-negative, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:             # the first cycle starts at its warmup
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step // num_steps >= repeat:
            return ProfilerAction.NONE
        mod = step % num_steps
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def _always_record(step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An `on_trace_ready` writing each window as a Chrome trace file into `dir_name`."""
    if use_gzip:
        raise ValueError("tensorboard_trace_handler: use_gzip is not supported by arraygrad")

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        prof.export_chrome_trace(os.path.join(
            dir_name, f"{name}.{time.time_ns()}.pt.trace.json"))
    return handler


class profile:
    """Profile the block, or the steps `schedule` selects (advance with `step()`); results of
    the last recorded window through `key_averages()`, `events()`, `export_chrome_trace`."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, acc_events=False, use_cuda=None):
        activities = set(activities) if activities else supported_activities()
        if ProfilerActivity.CUDA in activities or use_cuda:
            warnings.warn("CUDA is not available, disabling CUDA profiling", UserWarning,
                          stacklevel=2)
        self.activities = activities
        self.schedule = schedule or _always_record
        self.on_trace_ready = on_trace_ready
        self._options = dict(record_shapes=record_shapes, profile_memory=profile_memory,
                             with_stack=with_stack, with_flops=with_flops,
                             with_modules=with_modules)
        self.step_num = 0
        self.current_action = self.schedule(0)
        self.profiler = None        # the window recorded last (or now)
        self._live = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self._begin(self.current_action)

    def stop(self):
        if self._live is not None:
            self._finish(save=self.current_action in (ProfilerAction.RECORD,
                                                      ProfilerAction.RECORD_AND_SAVE))

    def step(self):
        """Mark the end of a training step: save a finished window, start the next one."""
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        now = self.current_action
        if self._live is not None:
            recording = prev in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
            if prev == ProfilerAction.RECORD_AND_SAVE or (
                    recording and now in (ProfilerAction.NONE, ProfilerAction.WARMUP)):
                self._finish(save=True)
            elif prev == ProfilerAction.WARMUP and now != ProfilerAction.WARMUP:
                self._finish(save=False)            # warmup steps are not kept
        self._begin(self.current_action)

    def _begin(self, action):
        if action != ProfilerAction.NONE and self._live is None:
            self._live = _collector(**self._options)
            self._live.__enter__()

    def _finish(self, save):
        live, self._live = self._live, None
        live.__exit__(None, None, None)
        if save:
            self.profiler = live
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    def _results(self):
        if self.profiler is None:
            raise RuntimeError("profile: no recorded window yet (results come after a "
                               "recording step ends or the block exits)")
        return self.profiler

    def events(self):
        return self._results().function_events

    def key_averages(self, group_by_input_shape=False):
        return self._results().key_averages(group_by_input_shape)

    def export_chrome_trace(self, path):
        self._results().export_chrome_trace(path)
