"""torch.optim.lr_scheduler: learning-rate schedules that rewrite `group["lr"]` on `step()`.

    sched = lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
    for epoch in range(100):
        train(...); opt.step(); sched.step()

Each schedule computes the next lr from the current one exactly as torch does
(the "chainable" form), so that sequences agree step for step, and chained
schedules compose; `step(epoch)` uses the closed form, as torch.
"""
import math
import types
import warnings
from bisect import bisect_right
from collections import Counter

from .optimizer import Optimizer

_EPOCH_DEPRECATION = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
    "where possible. Please use `scheduler.step()` to step the scheduler. During the "
    "deprecation, if epoch is different from None, the closed form is used instead of the new "
    "chainable form, where available.")


def _per_group(name, optimizer, value):
    """`value` for each param group (a list must have one entry per group)."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
        return list(value)
    return [value] * len(optimizer.param_groups)


def _check_optimizer(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


class LRScheduler:
    """Base class: subclasses give `get_lr()` (from `last_epoch` and the current lrs)."""

    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                                   "when resuming scheduler with last_epoch >= 0.")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        """The construction-time step that sets the epoch-0 learning rates."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        raise NotImplementedError(f"{type(self).__name__} does not define get_lr()")

    def get_last_lr(self):
        return self._last_lr

    def _lrs(self):
        return [group["lr"] for group in self.optimizer.param_groups]

    def step(self, epoch=None):
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            # the first user call comes before any optimizer step: the first lr is skipped
            warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                          "In PyTorch 1.1.0 and later, you should call them in the opposite "
                          "order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to "
                          "do this will result in PyTorch skipping the first value of the "
                          "learning rate schedule.", UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = self._lrs()

    def state_dict(self):
        """Every attribute but the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


class _LambdaSchedule(LRScheduler):
    """Shared by LambdaLR and MultiplicativeLR: one function of the epoch per group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                                 f"{len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        lambdas = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaSchedule):
    """lr = initial_lr * lr_lambda(epoch)."""

    def get_lr(self):
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaSchedule):
    """lr <- lr * lr_lambda(epoch) at every step after the first."""

    def get_lr(self):
        if self._is_initial:
            return self._lrs()
        return [g["lr"] * fn(self.last_epoch)
                for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """lr <- lr * gamma every `step_size` epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _get_closed_form_lr(self):
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr <- lr * gamma at each milestone epoch (repeated milestones multiply)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones, self.gamma = Counter(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return self._lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._lrs()]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [b * self.gamma ** bisect_right(milestones, self.last_epoch)
                for b in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr = initial_lr * factor for the first `total_iters` epochs, then initial_lr."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._lrs()]
        if self.last_epoch != self.total_iters:
            return self._lrs()
        return [lr * (1.0 / self.factor) for lr in self._lrs()]

    def _get_closed_form_lr(self):
        return [b * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for b in self.base_lrs]


class LinearLR(LRScheduler):
    """The factor on initial_lr goes linearly from start_factor to end_factor in total_iters."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._lrs()]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._lrs()
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (self.total_iters * self.start_factor
                              + (self.last_epoch - 1) * span)
        return [lr * ratio for lr in self._lrs()]

    def _get_closed_form_lr(self):
        return [b * (self.start_factor + (self.end_factor - self.start_factor)
                     * min(self.total_iters, self.last_epoch) / self.total_iters)
                for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr <- lr * gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _get_closed_form_lr(self):
        return [b * self.gamma ** self.last_epoch for b in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = initial_lr * (1 - epoch / total_iters) ** power, then constant."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._lrs()
        factor = ((1.0 - self.last_epoch / self.total_iters)
                  / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [lr * factor for lr in self._lrs()]

    def _get_closed_form_lr(self):
        return [b * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr follows half a cosine from initial_lr down to eta_min over T_max epochs (and back up
    after, as torch's recursive form)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e, T, lo = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._lrs()
        if self._step_count == 1 and e > 0:
            return [lo + (b - lo) * (1 + math.cos(e * math.pi / T)) / 2 for b in self.base_lrs]
        if (e - 1 - T) % (2 * T) == 0:
            return [lr + (b - lo) * (1 - math.cos(math.pi / T)) / 2
                    for b, lr in zip(self.base_lrs, self._lrs())]
        return [(1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T))
                * (lr - lo) + lo for lr in self._lrs()]

    def _get_closed_form_lr(self):
        return [self.eta_min + (b - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for b in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every T_i epochs, T_i growing by T_mult after each restart."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i))
                / 2 for b in self.base_lrs]

    def step(self, epoch=None):
        """`step()` per epoch, or `step(epoch)` with a fractional epoch per batch."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i, self.T_cur = self.T_0, epoch
        self._step_count += 1
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = self._lrs()


def _set_momentum(scheduler, group, momentum):
    if scheduler.use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _init_momentum(scheduler, optimizer, base_momentum, max_momentum, last_epoch):
    """Cycle `momentum` (or Adam's beta1) opposite to the lr, as CyclicLR and OneCycleLR do."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                         "option enabled")
    scheduler.use_beta1 = "betas" in optimizer.defaults
    bases = _per_group("base_momentum", optimizer, base_momentum)
    maxes = _per_group("max_momentum", optimizer, max_momentum)
    if last_epoch == -1:
        for hi, lo, group in zip(maxes, bases, optimizer.param_groups):
            _set_momentum(scheduler, group, hi)
            group["max_momentum"], group["base_momentum"] = hi, lo
    return bases, maxes


class CyclicLR(LRScheduler):
    """lr cycles between base_lr and max_lr (triangular, triangular2, exp_range or a custom
    scale_fn); stepped per batch."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        if scale_fn is not None:
            self.scale_mode = scale_mode
        else:
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = _init_momentum(
                self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x):
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [b + (m - b) * scale_factor * scale
               for b, m in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, lo, hi in zip(self.optimizer.param_groups, self.base_momentums,
                                     self.max_momentums):
                _set_momentum(self, group, hi - (hi - lo) * scale_factor * scale)
        return lrs

    def state_dict(self):
        state = super().state_dict()
        fn = self._scale_fn_custom
        state["_scale_fn_custom"] = (None if fn is None or isinstance(fn, types.FunctionType)
                                     else dict(fn.__dict__))
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        fn = state.pop("_scale_fn_custom", None)
        super().load_state_dict(state)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)


class OneCycleLR(LRScheduler):
    """The 1cycle policy: lr warms up from max_lr/div_factor to max_lr, then anneals to
    initial_lr/final_div_factor over total_steps (momentum cycles the other way)."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError("Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        n = self.total_steps
        if three_phase:
            self._schedule_phases = [
                (float(pct_start * n) - 1, "initial_lr", "max_lr", "max_momentum",
                 "base_momentum"),
                (float(2 * pct_start * n) - 2, "max_lr", "initial_lr", "base_momentum",
                 "max_momentum"),
                (n - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self._schedule_phases = [
                (float(pct_start * n) - 1, "initial_lr", "max_lr", "max_momentum",
                 "base_momentum"),
                (n - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _init_momentum(self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps "
                             f"is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, (end_step, lr0, lr1, m0, m1) in enumerate(self._schedule_phases):
                if step <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[lr0], group[lr1], pct))
                    if self.cycle_momentum:
                        _set_momentum(self, group, self._anneal(group[m0], group[m1], pct))
                    break
                start_step = end_step
        return lrs


def _check_children(owner, optimizer, schedulers):
    if len(schedulers) < 1:
        raise ValueError(f"{owner} expects at least one scheduler, but got no scheduler.")
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(s, ReduceLROnPlateau):
            raise ValueError(f"{owner} does not support `ReduceLROnPlateau` scheduler as it "
                             "requires additional kwargs to be specified when calling `step`, "
                             f"but got one at index {i} in the given schedulers sequence.")
        if optimizer is not s.optimizer:
            raise ValueError(f"{owner} expects all schedulers to belong to the same optimizer, "
                             f"but got scheduler {type(s).__name__} at index {i} has "
                             f"{s.optimizer}, which is different from "
                             f"{type(optimizer).__name__}.")


class _Composite(LRScheduler):
    """State-dict handling shared by SequentialLR and ChainedScheduler."""

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        children = state.pop("_schedulers")
        self.__dict__.update(state)
        for s, saved in zip(self._schedulers, children):
            s.load_state_dict(saved)


class SequentialLR(_Composite):
    """Run `schedulers[i]` between milestones[i-1] and milestones[i]."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        _check_children("SequentialLR", optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be "
                             "one more than the number of milestone points, but got number of "
                             f"schedulers {len(schedulers)} and the number of milestones to be "
                             f"equal to {len(milestones)}")
        self._schedulers, self._milestones = schedulers, milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # undo the children's construction steps, then take the first one's again
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for s in _leaves(self):
            s.last_epoch -= 1
        idx = bisect_right(milestones, 0)
        schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def step(self):
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


def _leaves(scheduler):
    """Every non-composite scheduler under `scheduler`'s children (SequentialLR's undo)."""
    for s in scheduler._schedulers:
        if hasattr(s, "_schedulers"):
            yield from _leaves(s)
        elif hasattr(s, "last_epoch"):
            yield s


class ChainedScheduler(_Composite):
    """Step every scheduler in turn each step: their factors multiply."""

    def __init__(self, schedulers, optimizer=None):
        optimizer = optimizer or (schedulers[0].optimizer if schedulers else None)
        _check_children("ChainedScheduler", optimizer, schedulers)
        self._schedulers, self.optimizer = list(schedulers), optimizer
        self._last_lr = self._lrs()

    def step(self):
        for s in self._schedulers:
            s.step()
        self._last_lr = self._lrs()


class ReduceLROnPlateau(LRScheduler):
    """lr <- max(lr * factor, min_lr) after `patience` epochs without improvement of the
    metric passed to `step(metric)`."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        _check_optimizer(optimizer)
        self.factor, self.optimizer = factor, optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got "
                                 f"{len(min_lr)}")
            self.default_min_lr, self.min_lrs = None, list(min_lr)
        else:
            self.default_min_lr, self.min_lrs = min_lr, [min_lr] * len(optimizer.param_groups)
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.last_epoch = 0
        self._last_lr = self._lrs()
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown!")
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.best, self.cooldown_counter, self.num_bad_epochs = self.mode_worse, 0, 0

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def is_better(self, a, best):
        if self.mode == "min":
            return a < (best * (1.0 - self.threshold) if self.threshold_mode == "rel"
                        else best - self.threshold)
        return a > (best * (self.threshold + 1.0) if self.threshold_mode == "rel"
                    else best + self.threshold)

    def step(self, metrics, epoch=None):
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = self._lrs()

    def _reduce_lr(self):
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` "
                    f"({len(self.optimizer.param_groups)}) differs from when `ReduceLROnPlateau` "
                    f"was initialized ({len(self.min_lrs)}), usually due to a new param group "
                    "being added to the optimizer. Please modify the `min_lrs` field to match "
                    "the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, group in enumerate(self.optimizer.param_groups):
            old = float(group["lr"])
            new = max(old * self.factor, self.min_lrs[i])
            if old - new > self.eps:
                group["lr"] = new


_LRScheduler = LRScheduler      # the pre-2.0 name scripts still subclass
