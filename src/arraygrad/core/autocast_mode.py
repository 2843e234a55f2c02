"""Autocast state, and the decorator that gives an op torch's autocast policy.

# NOTE [autocast]
Under `autocast("cpu", dtype=...)` an op on torch's lower-precision list (matmul, linear,
conv, ...) casts its floating inputs to the autocast dtype, and an op on its fp32 list (losses,
prod, cdist, ...) to float32; float64 inputs are never cast. The op runs with autocast off, as
torch excludes its autocast key below the op, so an op built from other ops casts once. With
autocast off an op pays one attribute read. Thread-local, like torch's.
"""
import functools
import threading

from .. import dtypes as _dt
from .. import _tensor as _t


class _State(threading.local):
    def __init__(self):
        self.enabled = False            # CPU autocast (the only device type with tensors here)
        self.dtype = _dt.bfloat16


state = _State()

LOWER_PRECISION, FP32 = "lower_precision_fp", "fp32"


def autocast_op(policy):
    """Decorator: `fn` follows torch's autocast `policy` (LOWER_PRECISION or FP32)."""
    def decorate(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            if not state.enabled:
                return fn(*args, **kwargs)
            target = state.dtype if policy == LOWER_PRECISION else _dt.float32
            args = [_cast(a, target) for a in args]
            kwargs = {k: _cast(v, target) for k, v in kwargs.items()}
            state.enabled = False
            try:
                return fn(*args, **kwargs)
            finally:
                state.enabled = True
        return op
    return decorate


def _cast(v, target):
    if isinstance(v, _t.Tensor):
        d = v.dtype
        if d.is_floating_point and d is not _dt.float64 and d is not target:
            return v.to(target)
    return v
