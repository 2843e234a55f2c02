"""torch.amp: autocast (mixed precision on CPU) and GradScaler, the loss scaling that keeps
low-precision gradients from underflowing.

    with torch.autocast("cpu", dtype=torch.bfloat16):   # also a decorator
        loss = loss_fn(model(x), y)         # linear/conv/matmul in bfloat16, losses in float32

    scaler = torch.amp.GradScaler("cpu")
    for x, y in loader:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()       # gradients of loss * scale
        scaler.step(opt)                    # unscale; skip the step if any grad is inf/nan
        scaler.update()                     # grow the scale after growth_interval clean steps,
                                            # back off at once after an overflow
GradScaler's arithmetic is torch's (float32 scale, the same growth/backoff rule), so a training
loop takes the same steps and skips the same ones. Which ops autocast casts, and how: NOTE
[autocast] in core/autocast_mode.py.
"""
import functools
import warnings
from collections import defaultdict

from . import _device
from ._tensor import Tensor
from . import dtypes as _dt
from .core import autocast_mode as _ac
from .core.grad_mode import no_grad
from .ops import creation, elementwise, reduce

__all__ = ["autocast", "GradScaler", "is_autocast_available", "custom_fwd", "custom_bwd"]

_CPU_DTYPES = (_dt.bfloat16, _dt.float16)
_gpu_dtype = [_dt.float16]          # what autocast("cuda") would use (torch.get_autocast_dtype)


def is_autocast_available(device_type):
    return device_type == "cpu"


def is_autocast_enabled(device_type="cuda"):
    return device_type == "cpu" and _ac.state.enabled


def get_autocast_dtype(device_type):
    return _ac.state.dtype if device_type == "cpu" else _gpu_dtype[0]


def set_autocast_dtype(device_type, dtype):
    if device_type == "cpu":
        _ac.state.dtype = dtype
    else:
        _gpu_dtype[0] = dtype


class autocast:
    """Context manager and decorator: ops on torch's autocast lists run in `dtype` (default
    bfloat16 on CPU) or in float32. `device_type="cuda"` is disabled with torch's warning where
    CUDA is absent; nesting restores the outer state on exit."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not isinstance(enabled, bool):
            raise TypeError(f"autocast: enabled must be a bool, got {type(enabled).__name__}")
        _device.device(device_type)            # an unknown device type raises torch's error
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = cache_enabled
        if enabled and device_type != "cpu":
            warnings.warn(f"{'CUDA' if device_type == 'cuda' else device_type} is not available"
                          " or torch_xla is imported. Disabling autocast.", UserWarning,
                          stacklevel=2)
            enabled = False
        elif enabled and self.fast_dtype not in _CPU_DTYPES:
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                          "autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                          "torch.float16 currently.", UserWarning, stacklevel=2)
            enabled = False
        self._enabled = enabled

    def __enter__(self):
        if self.device != "cpu":
            return self
        self._prev = (_ac.state.enabled, _ac.state.dtype)
        _ac.state.enabled = self._enabled
        if self._enabled:
            _ac.state.dtype = self.fast_dtype
        return self

    def __exit__(self, *exc):
        if self.device == "cpu":
            _ac.state.enabled, _ac.state.dtype = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return fn(*args, **kwargs)
        return run


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator of a custom Function's forward: it runs under the caller's autocast state, or,
    with `cast_inputs`, with autocast off and floating inputs cast to `cast_inputs`."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(*args, **kwargs):
        ctx = args[0]
        ctx._fwd_used_autocast = is_autocast_enabled(device_type)
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None or not ctx._fwd_used_autocast:
            return fwd(*args, **kwargs)
        args = [args[0]] + [_ac._cast(a, cast_inputs) for a in args[1:]]
        kwargs = {k: _ac._cast(v, cast_inputs) for k, v in kwargs.items()}
        with autocast(device_type, enabled=False):
            return fwd(*args, **kwargs)
    return forward


def custom_bwd(bwd=None, *, device_type):
    """Decorator of a custom Function's backward: it runs under the autocast state its forward
    ran under."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return backward

_READY, _UNSCALED, _STEPPED = 0, 1, 2
_FIX = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier in the "
        "iteration.")


def _fresh_state():
    return {"stage": _READY, "found_inf": None}


class GradScaler:
    """Dynamic loss scaling: `scale`, `unscale_`, `step`, `update`, `get_scale`,
    `state_dict`/`load_state_dict`. With `enabled=False` (or device "cuda" here, which torch
    disables with a warning when CUDA is missing) every method passes through."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        device = str(device)
        from . import cuda  # cycle: torch.cuda.amp (cuda/amp.py) re-exports this module
        if enabled and device == "cuda" and not cuda.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", UserWarning, stacklevel=2)
            enabled = False
        elif enabled:
            _device.check(device)
        if growth_factor <= 1.0:
            raise AssertionError("The growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise AssertionError("The backoff factor must be < 1.0.")
        self._device = device
        self._enabled = enabled
        self._init_scale = init_scale
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._scale = None                  # a float32 0-d tensor, made at the first scale()
        self._growth_tracker = 0
        self._per_optimizer_states = defaultdict(_fresh_state)

    def is_enabled(self):
        return self._enabled

    def _check_scale(self, what):
        if self._scale is None:
            raise AssertionError(f"Attempted {what} but _scale is None.  {_FIX}")

    def scale(self, outputs):
        """outputs * scale: a tensor, or (recursively) a list/tuple/iterable of tensors."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = creation.full((), self._init_scale, dtype=_dt.float32)

        def apply(v):
            if isinstance(v, Tensor):
                return v * self._scale
            if isinstance(v, (list, tuple)):
                return type(v)(apply(x) for x in v)
            if hasattr(v, "__iter__") and not isinstance(v, (str, bytes)):
                return map(apply, v)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply(outputs)

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by the scale, in place, noting any inf/nan."""
        if not self._enabled:
            return
        self._check_scale("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # torch: the reciprocal in float64, rounded to float32
        inv_scale = float(_dt.float32.np.type(1.0 / float(self._scale.item())))
        found = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g.dtype is _dt.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                with no_grad():
                    if not bool(reduce.all(elementwise.isfinite(g))):
                        found = True
                    g.mul_(inv_scale)
        state["found_inf"] = found
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless unscale_ was called) and run `optimizer.step`, unless a gradient
        was inf/nan; returns the step's return value (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale=None):
        """Set the next scale: `new_scale` if given, else backoff after an inf/nan, growth
        after `growth_interval` clean updates in a row."""
        if not self._enabled:
            return
        self._check_scale("update")
        if new_scale is not None:
            reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                      "torch.FloatTensor with requires_grad=False.")
            if isinstance(new_scale, float):
                value = new_scale
            elif isinstance(new_scale, Tensor) and new_scale.numel() == 1 and \
                    not new_scale.requires_grad:
                value = new_scale.item()
            else:
                raise AssertionError(reason)
            self._scale = creation.full((), value, dtype=_dt.float32)
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values()
                     if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            scale = self._scale.item()
            if any(found):
                scale *= self._backoff_factor
                self._growth_tracker = 0
            elif self._growth_tracker + 1 == self._growth_interval:
                grown = float(_dt.float32.np.type(scale * self._growth_factor))
                if grown != float("inf"):
                    scale = grown
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
            self._scale = creation.full((), scale, dtype=_dt.float32)
        self._per_optimizer_states = defaultdict(_fresh_state)

    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = creation.full((), state_dict["scale"], dtype=_dt.float32)
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._growth_tracker = state_dict["_growth_tracker"]



def device_aliases(device_type, dtype):
    """`autocast` and `GradScaler` of `torch.<device_type>.amp`: torch.amp's for that device,
    with the FutureWarning torch gives for these deprecated spellings."""
    def warn(name):
        warnings.warn(f"`torch.{device_type}.amp.{name}(args...)` is deprecated. Please use "
                      f"`torch.amp.{name}('{device_type}', args...)` instead.", FutureWarning,
                      stacklevel=3)

    class _autocast(autocast):
        def __init__(self, enabled=True, dtype=dtype, cache_enabled=True):
            warn("autocast")
            super().__init__(device_type, dtype=dtype, enabled=enabled,
                             cache_enabled=cache_enabled)

    class _GradScaler(GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):
            warn("GradScaler")
            super().__init__(device_type, init_scale, growth_factor, backoff_factor,
                             growth_interval, enabled)

    _autocast.__name__ = _autocast.__qualname__ = "autocast"
    _GradScaler.__name__ = _GradScaler.__qualname__ = "GradScaler"
    return _autocast, _GradScaler
