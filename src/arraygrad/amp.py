"""torch.amp: GradScaler, the loss scaling that keeps low-precision gradients from underflowing.

    scaler = torch.amp.GradScaler("cpu")
    for x, y in loader:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()       # gradients of loss * scale
        scaler.step(opt)                    # unscale; skip the step if any grad is inf/nan
        scaler.update()                     # grow the scale after growth_interval clean steps,
                                            # back off at once after an overflow
Its arithmetic is torch's (float32 scale, the same growth/backoff rule), so a training loop
takes the same steps and skips the same ones. `autocast` is not provided yet.
"""
import warnings
from collections import defaultdict

from . import _device, cuda
from ._tensor import Tensor
from . import dtypes as _dt
from .core.grad_mode import no_grad
from .ops import creation, elementwise, reduce

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

